// What a FIFO holds that its reader has not read yet, for the Snapcast route's audio thread.
//
// Why in C: ioctl is variadic, and Swift reaches a variadic C function through a va_list it
// builds on the heap; the audio thread must allocate nothing. Linux answers FIONREAD on either
// end of a pipe.
#ifndef GONG_FIFO_H
#define GONG_FIFO_H

#include <sys/ioctl.h>

/// Bytes in the pipe behind `fd` not yet read, or -1 with errno set.
static inline int gong_fifo_unread_bytes(int fd) {
    int bytes = 0;
    return ioctl(fd, FIONREAD, &bytes) == 0 ? bytes : -1;
}

#endif
