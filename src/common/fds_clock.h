/*
 * fds_clock.h: the one monotonic clock of fieldstore, for durations,
 * deadlines and "took" figures: POSIX CLOCK_MONOTONIC (never set back,
 * unaffected by changes of the wall clock), read with clock_gettime(2),
 * ~20 ns through the vDSO.  Wall-clock instants (epoch milliseconds, "now"
 * of date math) are CLOCK_REALTIME and are not here, except the one
 * deadline that pthread_cond_timedwait(3) demands in CLOCK_REALTIME
 * (fds_abstime_in_ms).
 *
 * Every function is static inline: callers read the clock on hot paths
 * (search deadlines checked every few thousand docs, per-phase timings).
 */
#ifndef FDS_CLOCK_H
#define FDS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in nanoseconds (since an unspecified start, the
 * same for every thread of the process). */
static inline uint64_t fds_mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* CLOCK_MONOTONIC now, in microseconds (truncated). */
static inline uint64_t fds_mono_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* CLOCK_MONOTONIC now, in milliseconds (truncated). */
static inline uint64_t fds_mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* The CLOCK_REALTIME instant `ms` milliseconds (>= 0) from now into *t,
 * the absolute deadline pthread_cond_timedwait(3) takes (a condition
 * variable's default clock). */
static inline void fds_abstime_in_ms(struct timespec *t, int64_t ms)
{
    clock_gettime(CLOCK_REALTIME, t);
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

#endif
