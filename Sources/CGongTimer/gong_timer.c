// Empty: the target is its header (gong_timer.h), whose functions are static inline.
