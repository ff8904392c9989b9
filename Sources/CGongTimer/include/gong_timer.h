// The timerfd calls gong bells waits on between bells: Glibc's Swift module does not bring in
// <sys/timerfd.h>, and TFD_TIMER_CANCEL_ON_SET is a macro Swift cannot see.
#ifndef GONG_TIMER_H
#define GONG_TIMER_H

#include <sys/timerfd.h>

// A timer on CLOCK_REALTIME, closed on exec; -1 and errno when refused.
static inline int gong_timer_create(void) {
    return timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC);
}

// Arms it to fire when the wall clock reaches the absolute moment given, and to wake a reader
// with ECANCELED when the wall clock is set meanwhile. 0, or -1 and errno.
static inline int gong_timer_arm(int timer, long long seconds, long nanoseconds) {
    struct itimerspec setting = {0};
    setting.it_value.tv_sec = (time_t)seconds;
    setting.it_value.tv_nsec = nanoseconds;
    return timerfd_settime(timer, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &setting, 0);
}

#endif
