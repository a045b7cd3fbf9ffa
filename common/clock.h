/* clock.h - monotonic and wall time in nanoseconds, and absolute deadlines
 * for the timed waits, shared by every module. */
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

/* clk's time now plus ms milliseconds, normalised: the absolute deadline
 * for pthread_cond_timedwait (clk = the condition's clock) or
 * pthread_timedjoin_np (CLOCK_REALTIME). */
static inline struct timespec pc_deadline_ms(clockid_t clk, int ms)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

#endif
