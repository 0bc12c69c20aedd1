/*
 * dates.c: date_histogram and histogram keys -- calendar and fixed
 * intervals rounded in UTC, a fixed offset or a named zone as
 * Elasticsearch's Rounding does -- and the formatting of date keys
 * (fds_agg_date_format).  The calendar itself is src/common/fds_time.h.
 */
#include <stdio.h>

#include "aggs/aggs_int.h"
#include "fds_time.h"

#define DAY_MS FDS_MS_PER_DAY

/* Transitions a named zone's rounding steps back over (zone_round). */
#define TZ_ROUND_DEPTH 4

static const int64_t CAL_MS[] = {0, 1000, 60000, 3600000, DAY_MS, 7 * DAY_MS};

/* Months of a calendar unit of a month or longer. */
static unsigned cal_months(int cal)
{
    return cal == FDS_CAL_MONTH ? 1 : cal == FDS_CAL_QUARTER ? 3 : 12;
}

/* Local milliseconds rounded down to the calendar unit. */
static int64_t cal_floor(int cal, int64_t local)
{
    if (cal <= FDS_CAL_DAY)
        return fds_floor_div(local, CAL_MS[cal]) * CAL_MS[cal];
    int64_t days = fds_days_from_ms(local, NULL);
    if (cal == FDS_CAL_WEEK) /* weeks start on Monday; 1970-01-01 was a Thursday */
        return (fds_floor_div(days + 3, 7) * 7 - 3) * DAY_MS;
    return fds_months_floor_ms(local, cal_months(cal));
}

/* The next calendar unit after local (a unit start). */
static int64_t cal_next(int cal, int64_t local)
{
    if (cal <= FDS_CAL_WEEK)
        return local + CAL_MS[cal];
    return fds_months_add_ms(local, cal_months(cal));
}

/* Local time `local` rounded down (r) as the instant of a key for value
 * u in a named zone, as Elasticsearch's Rounding does.  Days and longer
 * (JavaTimeToMidnightRounding): the first instant of the local time, or
 * the start of the gap it falls in.  Shorter units and fixed intervals
 * (JavaTimeNotToMidnightRounding, TimeIntervalRounding): the latest
 * instant of the local time that is not after u; when that is before the
 * last transition at or before u, the transition's last millisecond is
 * rounded instead, so a bucket never spans a transition. */
static int64_t zone_round(const fds_agg *a, int64_t u, int depth)
{
    int64_t local = u + fds__tz_offset(&a->tz, u);
    bool day = a->cal >= FDS_CAL_DAY;
    int64_t r = a->cal ? cal_floor(a->cal, local)
                       : fds_floor_div(local, a->fixed_ms) * a->fixed_ms;
    int64_t t;
    if (!fds__tz_local_exists(&a->tz, r)) {
        int64_t g = fds__tz_to_utc(&a->tz, r, false);
        return fds__tz_prev_transition(&a->tz, g, &t) ? t : g;
    }
    if (day)
        return fds__tz_to_utc(&a->tz, r, false);
    int64_t k = fds__tz_to_utc(&a->tz, r, true);
    if (k > u)
        k = fds__tz_to_utc(&a->tz, r, false);
    if (depth < TZ_ROUND_DEPTH && fds__tz_prev_transition(&a->tz, u, &t) && k < t)
        return zone_round(a, t - 1, depth + 1);
    return k;
}

/* A date_histogram's key of value v (Elasticsearch's Rounding with the
 * offset applied outside: round(v - offset) + offset). */
int64_t fds__aggs_date_key(const fds_agg *a, int64_t v)
{
    if (a->tz.id[0])
        return zone_round(a, v - a->offset_ms, 0) + a->offset_ms;
    int64_t tz = a->tz.fixed_ms, local = v - a->offset_ms + tz;
    int64_t r = a->cal ? cal_floor(a->cal, local)
                       : fds_floor_div(local, a->fixed_ms) * a->fixed_ms;
    return r - tz + a->offset_ms;
}

/* The key after `key`.  Named zones: read back through the rounding, so
 * that it is the next bucket's key itself. */
int64_t fds__aggs_date_next(const fds_agg *a, int64_t key)
{
    int64_t u = key - a->offset_ms;
    if (a->tz.id[0]) {
        /* days and longer: the next local unit start; shorter units: the
         * rounding of one unit on, which keeps an overlap's hours apart */
        int64_t n = a->cal >= FDS_CAL_DAY
                        ? fds__tz_to_utc(&a->tz,
                                         cal_next(a->cal, u + fds__tz_offset(&a->tz, u)),
                                         false)
                        : u + (a->cal ? CAL_MS[a->cal] : a->fixed_ms);
        if (n <= u)
            n = u + CAL_MS[FDS_CAL_HOUR];
        int64_t k = zone_round(a, n, 0);
        return (k > u ? k : n) + a->offset_ms;
    }
    int64_t tz = a->tz.fixed_ms, local = u + tz;
    int64_t r = a->cal ? cal_next(a->cal, local) : local + a->fixed_ms;
    return r - tz + a->offset_ms;
}

int64_t fds__aggs_date_len(const fds_agg *a)
{
    return a->cal ? a->cal <= FDS_CAL_WEEK ? CAL_MS[a->cal] : 0 : a->fixed_ms;
}

double fds__aggs_histo_key(const fds_agg *a, double v)
{
    return floor((v - a->offset) / a->interval) * a->interval + a->offset;
}

/* One pattern (fds__date_format_parse's letters) into out. */
static size_t format_pattern(const char *p, int64_t ms, const fds_tz *zone,
                             char *out, size_t cap)
{
    int64_t tz = fds__tz_offset(zone, ms);
    int64_t local = ms + tz;
    int64_t in_day, days = fds_days_from_ms(local, &in_day);
    int64_t y;
    unsigned mo, d;
    fds_civil_from_days(days, &y, &mo, &d);
    size_t o = 0;
    for (size_t i = 0; p[i];) {
        char ch = p[i];
        size_t run = 1;
        while (p[i + run] == ch)
            run++;
        char tmp[64];
        int w = 0;
        if (ch == '\'') {
            size_t j = i + 1;
            while (p[j] && p[j] != '\'')
                j++;
            w = snprintf(tmp, sizeof tmp, "%.*s", (int)(j - i - 1), p + i + 1);
            run = j - i + (p[j] == '\'');
        } else if (ch == 'y' || ch == 'u') {
            w = run == 2 ? snprintf(tmp, sizeof tmp, "%02lld", (long long)(y % 100))
                         : snprintf(tmp, sizeof tmp, "%0*lld", (int)run, (long long)y);
        } else if (ch == 'M') {
            w = run >= 4 ? snprintf(tmp, sizeof tmp, "%s", fds_month_name(mo))
              : run == 3 ? snprintf(tmp, sizeof tmp, "%.3s", fds_month_name(mo))
                         : snprintf(tmp, sizeof tmp, "%0*u", (int)run, mo);
        } else if (ch == 'd') {
            w = snprintf(tmp, sizeof tmp, "%0*u", (int)run, d);
        } else if (ch == 'H') {
            w = snprintf(tmp, sizeof tmp, "%0*lld", (int)run,
                         (long long)(in_day / 3600000));
        } else if (ch == 'm') {
            w = snprintf(tmp, sizeof tmp, "%0*lld", (int)run,
                         (long long)(in_day / 60000 % 60));
        } else if (ch == 's') {
            w = snprintf(tmp, sizeof tmp, "%0*lld", (int)run,
                         (long long)(in_day / 1000 % 60));
        } else if (ch == 'S') { /* fraction: the milliseconds, then zeros */
            char f[4];
            snprintf(f, sizeof f, "%03u", (unsigned)(in_day % 1000));
            for (w = 0; w < (int)run && w < (int)sizeof tmp - 1; w++)
                tmp[w] = w < 3 ? f[w] : '0';
            tmp[w] = 0;
        } else if (ch == 'Z' || ch == 'X' || ch == 'x') {
            int64_t m = tz / 60000, am = m < 0 ? -m : m;
            if (ch == 'X' && !tz)
                w = snprintf(tmp, sizeof tmp, "Z");
            else if (run >= 3 || ch == 'Z')
                w = snprintf(tmp, sizeof tmp, ch == 'Z' && run < 3 ? "%c%02lld%02lld"
                                                                  : "%c%02lld:%02lld",
                             m < 0 ? '-' : '+', (long long)(am / 60),
                             (long long)(am % 60));
            else
                w = snprintf(tmp, sizeof tmp, "%c%02lld%02lld", m < 0 ? '-' : '+',
                             (long long)(am / 60), (long long)(am % 60));
        } else if (ch == 'E') {
            static const char *const DAYS[] = {"Thu", "Fri", "Sat", "Sun",
                                               "Mon", "Tue", "Wed"};
            w = snprintf(tmp, sizeof tmp, "%s", DAYS[((days % 7) + 7) % 7]);
        } else {
            w = snprintf(tmp, sizeof tmp, "%.*s", (int)run, p + i);
        }
        if (w < 0 || o + (size_t)w + 1 > cap)
            return 0;
        memcpy(out + o, tmp, (size_t)w);
        o += (size_t)w;
        i += run;
    }
    out[o] = 0;
    return o;
}

size_t fds_agg_date_format(int64_t ms, const fds_date_format *f, const fds_tz *tz,
                           char *out, size_t cap)
{
    if (f && f->npat)
        return format_pattern(f->pat[0], ms, tz, out, cap);
    unsigned bits = f ? f->bits : FDS_DF_DEFAULT;
    int w;
    if (bits & FDS_DF_ISO)
        return format_pattern(tz->id[0] || tz->fixed_ms ? "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
                                                        : "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'",
                              ms, tz, out, cap);
    if (bits & FDS_DF_DATE)
        return format_pattern("yyyy-MM-dd", ms, tz, out, cap);
    if (bits & FDS_DF_EPOCH_SECOND && !(bits & FDS_DF_EPOCH_MILLIS))
        w = snprintf(out, cap, "%lld", (long long)fds_floor_div(ms, 1000));
    else
        w = snprintf(out, cap, "%lld", (long long)ms);
    return w > 0 && (size_t)w < cap ? (size_t)w : 0;
}
