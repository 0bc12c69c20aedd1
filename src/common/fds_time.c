/*
 * fds_time.c: Howard Hinnant's days_from_civil / civil_from_days (see
 * fds_time.h for the source).  An "era" is 400 years = 146097 days; day 0 of
 * the shifted calendar (March 1st of year 0) is 719468 days before
 * 1970-01-01.
 */
#include "fds_time.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FDS_DAYS_PER_ERA 146097
#define FDS_EPOCH_SHIFT_DAYS 719468
#define FDS_TIME_VALUE_MAX_NS 3.15e16 /* a year: every wait and deadline fits */

int64_t fds_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * FDS_DAYS_PER_ERA + (int64_t)doe - FDS_EPOCH_SHIFT_DAYS;
}

void fds_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += FDS_EPOCH_SHIFT_DAYS;
    int64_t era = (z >= 0 ? z : z - (FDS_DAYS_PER_ERA - 1)) / FDS_DAYS_PER_ERA;
    unsigned doe = (unsigned)(z - era * FDS_DAYS_PER_ERA);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

int64_t fds_months_floor_ms(int64_t ms, unsigned months)
{
    int64_t y;
    unsigned m, d;
    fds_civil_from_days(fds_days_from_ms(ms, NULL), &y, &m, &d);
    m = (m - 1) / months * months + 1;
    return fds_days_from_civil(y, m, 1) * FDS_MS_PER_DAY;
}

int64_t fds_months_add_ms(int64_t ms, unsigned months)
{
    int64_t y;
    unsigned m, d;
    fds_civil_from_days(fds_days_from_ms(ms, NULL), &y, &m, &d);
    m += months;
    while (m > 12) {
        m -= 12;
        y++;
    }
    return fds_days_from_civil(y, m, 1) * FDS_MS_PER_DAY;
}

const char *fds_month_name(unsigned m)
{
    static const char *const names[] = {
        "January", "February", "March", "April", "May", "June", "July",
        "August", "September", "October", "November", "December"};
    return names[m - 1];
}

bool fds_time_value_ns(const char *s, bool allow_minus_one, int64_t *ns)
{
    static const struct { const char *unit; double ns; } units[] = {
        {"nanos", 1}, {"micros", 1e3}, {"ms", 1e6}, {"s", 1e9},
        {"m", 6e10}, {"h", 3.6e12}, {"d", 8.64e13}};
    if (allow_minus_one && !strcmp(s, "-1")) {
        *ns = -1;
        return true;
    }
    if (!(*s >= '0' && *s <= '9') && *s != '.')
        return false; /* no sign, no space, no "inf" */
    char *end;
    double x = strtod(s, &end);
    if (end == s || !(x >= 0) || !isfinite(x))
        return false;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit)) {
            double v = x * units[i].ns;
            *ns = v > FDS_TIME_VALUE_MAX_NS ? (int64_t)FDS_TIME_VALUE_MAX_NS : (int64_t)v;
            return true;
        }
    return false;
}
