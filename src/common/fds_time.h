/*
 * fds_time.h: proleptic Gregorian calendar <-> day numbers, for date parsing
 * (query date fields) and formatting (the log converter's @timestamp).
 *
 * Algorithms: Howard Hinnant's days_from_civil and civil_from_days,
 * "chrono-Compatible Low-Level Date Algorithms",
 * http://howardhinnant.github.io/date_algorithms.html (exact for every
 * int64 year range used here; no tables, no libc time zone state).
 */
#ifndef FDS_TIME_H
#define FDS_TIME_H

#include <stdbool.h>
#include <stdint.h>

#define FDS_SECONDS_PER_DAY 86400

/* Days since 1970-01-01 of year y, month m (1..12), day d (1..31); negative
 * before 1970.  Inputs are not range-checked (the caller validates). */
int64_t fds_days_from_civil(int64_t y, unsigned m, unsigned d);

/* Inverse of fds_days_from_civil(): the date of day number z (days since
 * 1970-01-01) into *y, *m (1..12), *d (1..31). */
void fds_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

/* Milliseconds of a day (UTC days: no leap seconds, as Java's time). */
#define FDS_MS_PER_DAY 86400000LL

/* a / b rounded toward negative infinity (b > 0 or b < 0, not 0). */
static inline int64_t fds_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* The day number (days since 1970-01-01) of epoch milliseconds ms, and
 * in *in_day (when not NULL) the milliseconds since that day's start
 * (0..FDS_MS_PER_DAY). */
static inline int64_t fds_days_from_ms(int64_t ms, int64_t *in_day)
{
    int64_t days = fds_floor_div(ms, FDS_MS_PER_DAY);
    if (in_day)
        *in_day = ms - days * FDS_MS_PER_DAY;
    return days;
}

/* The first millisecond of the unit of `months` months (1, 3, 12: month,
 * quarter, year; units start in January) that holds epoch milliseconds
 * ms. */
int64_t fds_months_floor_ms(int64_t ms, unsigned months);

/* The first millisecond of the month `months` months after the month
 * that holds epoch milliseconds ms. */
int64_t fds_months_add_ms(int64_t ms, unsigned months);

/* English name of month m (1..12), "January".."December". */
const char *fds_month_name(unsigned m);

/* Whether `y` is a leap year of the proleptic Gregorian calendar (every
 * 4th year, except centuries not divisible by 4 centuries). */
static inline int fds_is_leap_year(long long y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % (4 * 100) == 0;
}

/* Days in month m (1..12) of year y: 28 to 31. */
static inline unsigned fds_days_in_month(long long y, unsigned m)
{
    static const unsigned char DAYS[12] = {31, 28, 31, 30, 31, 30,
                                           31, 31, 30, 31, 30, 31};
    return DAYS[m - 1] + (m == 2 && fds_is_leap_year(y));
}

/* A duration as Elasticsearch's TimeValue.parseTimeValue reads it: a
 * non-negative number and a unit (nanos, micros, ms, s, m, h, d), e.g.
 * "30s", "1.5m", "0ms"; "-1" when `allow_minus_one` (Elasticsearch's
 * "no limit", *ns = -1).  *ns is the value in nanoseconds, capped at a
 * year.  Returns false for anything else (no unit, another unit, "1e400s"). */
bool fds_time_value_ns(const char *s, bool allow_minus_one, int64_t *ns);

#endif
