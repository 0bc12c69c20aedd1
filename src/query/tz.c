/*
 * tz.c: named time zones (datemath.h's fds_tz) through ICU's copy of the tz
 * database.  Elasticsearch reads `time_zone` with java.time's ZoneId, whose
 * offsets change with the date (daylight saving time, rule changes);
 * keeping that database is outside what fieldstore is for, so the rules
 * come from ICU (Debian's libicu).
 *
 * A UCalendar is not thread-safe and costs microseconds to open, so each
 * thread keeps one, for the zone it used last (reopened when the zone
 * changes, closed when the thread ends).  Callers bound the calls: one per
 * range bound, per date math expression, per date_histogram bucket
 * boundary and per printed key, never per document.  If ICU fails (out of
 * memory) the offset used is 0.
 */
#include "datemath.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/ucal.h>
#include <unicode/ustring.h>

typedef struct tz_cache {
    char id[FDS_TZ_ID_MAX];
    UCalendar *cal;
} tz_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_free(void *p)
{
    tz_cache *c = p;
    if (c)
        ucal_close(c->cal);
    free(c);
}

static void cache_init(void)
{
    (void)pthread_key_create(&cache_key, cache_free);
}

/* This thread's calendar for zone `id`, or NULL. */
static UCalendar *calendar(const char *id)
{
    pthread_once(&cache_once, cache_init);
    tz_cache *c = pthread_getspecific(cache_key);
    if (c && c->cal && !strcmp(c->id, id))
        return c->cal;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || pthread_setspecific(cache_key, c)) {
            free(c);
            return NULL;
        }
    }
    ucal_close(c->cal);
    c->cal = NULL;
    UChar uid[FDS_TZ_ID_MAX];
    u_uastrncpy(uid, id, FDS_TZ_ID_MAX);
    UErrorCode st = U_ZERO_ERROR;
    c->cal = ucal_open(uid, -1, "en_US_POSIX", UCAL_GREGORIAN, &st);
    if (U_FAILURE(st)) {
        ucal_close(c->cal);
        c->cal = NULL;
        return NULL;
    }
    strcpy(c->id, id);
    return c->cal;
}

int fds__tz_parse(const char *s, size_t n, fds_tz *tz)
{
    memset(tz, 0, sizeof *tz);
    if (fds__time_zone(s, n, &tz->fixed_ms))
        return 0;
    if (n == 0 || n >= FDS_TZ_ID_MAX || memchr(s, 0, n))
        return -1;
    /* java.time's region ids: letters, digits, / . _ + - */
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789/._+-", s[i]))
            return -1;
    UChar uid[FDS_TZ_ID_MAX], canon[FDS_TZ_ID_MAX * 2];
    u_uastrncpy(uid, s, (int32_t)n);
    UBool sys = 0;
    UErrorCode st = U_ZERO_ERROR;
    ucal_getCanonicalTimeZoneID(uid, (int32_t)n, canon, FDS_TZ_ID_MAX * 2, &sys, &st);
    if (U_FAILURE(st) || !sys)
        return -1;
    memcpy(tz->id, s, n);
    return 0;
}

int64_t fds__tz_offset(const fds_tz *tz, int64_t utc_ms)
{
    if (!tz->id[0])
        return tz->fixed_ms;
    UCalendar *cal = calendar(tz->id);
    if (!cal)
        return 0;
    UErrorCode st = U_ZERO_ERROR;
    ucal_setMillis(cal, (UDate)utc_ms, &st);
    int64_t off = (int64_t)ucal_get(cal, UCAL_ZONE_OFFSET, &st) +
                  ucal_get(cal, UCAL_DST_OFFSET, &st);
    return U_FAILURE(st) ? 0 : off;
}

/* The offset ICU gives local_ms, a gap or overlap read with `opt`. */
static int64_t local_offset(UCalendar *cal, int64_t local_ms, UTimeZoneLocalOption opt)
{
    UErrorCode st = U_ZERO_ERROR;
    int32_t raw = 0, dst = 0;
    ucal_setMillis(cal, (UDate)local_ms, &st);
    ucal_getTimeZoneOffsetFromLocal(cal, opt, opt, &raw, &dst, &st);
    return U_FAILURE(st) ? 0 : (int64_t)raw + dst;
}

int64_t fds__tz_to_utc(const fds_tz *tz, int64_t local_ms, bool later)
{
    if (!tz->id[0])
        return local_ms - tz->fixed_ms;
    UCalendar *cal = calendar(tz->id);
    if (!cal)
        return local_ms;
    /* UCAL_TZ_LOCAL_FORMER reads a skipped or repeated wall time with the
     * offset before the transition: java.time's choice for both (a gap's
     * 02:30 at +01:00 is 03:30 at +02:00). */
    if (!later)
        return local_ms - local_offset(cal, local_ms, UCAL_TZ_LOCAL_FORMER);
    int64_t a = local_ms - local_offset(cal, local_ms, UCAL_TZ_LOCAL_FORMER);
    int64_t b = local_ms - local_offset(cal, local_ms, UCAL_TZ_LOCAL_LATTER);
    if (!fds__tz_local_exists(tz, local_ms))
        return a;
    return a > b ? a : b;
}

bool fds__tz_local_exists(const fds_tz *tz, int64_t local_ms)
{
    if (!tz->id[0])
        return true;
    int64_t u = fds__tz_to_utc(tz, local_ms, false);
    return u + fds__tz_offset(tz, u) == local_ms;
}

bool fds__tz_prev_transition(const fds_tz *tz, int64_t utc_ms, int64_t *out)
{
    if (!tz->id[0])
        return false;
    UCalendar *cal = calendar(tz->id);
    if (!cal)
        return false;
    UErrorCode st = U_ZERO_ERROR;
    UDate t = 0;
    ucal_setMillis(cal, (UDate)utc_ms, &st);
    if (U_FAILURE(st) ||
        !ucal_getTimeZoneTransitionDate(cal, UCAL_TZ_TRANSITION_PREVIOUS_INCLUSIVE,
                                        &t, &st) ||
        U_FAILURE(st))
        return false;
    *out = (int64_t)t;
    return true;
}
