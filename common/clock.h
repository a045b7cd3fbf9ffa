/* clock.h - monotonic and wall time in nanoseconds, shared by every module. */
#ifndef PANOCAP_CLOCK_H
#define PANOCAP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t pc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t pc_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
