/*
 * tz.c: time zones (tz.h's fds_tz): fixed offsets as Elasticsearch writes
 * them, and named zones through ICU's copy of the tz database.  Elasticsearch reads `time_zone` with java.time's ZoneId, whose
 * offsets change with the date (daylight saving time, rule changes);
 * keeping that database is outside what fieldstore is for, so the rules
 * come from ICU (Debian's libicu).
 *
 * A UCalendar is not thread-safe and costs microseconds to open, so each
 * thread keeps one, for the zone it used last (reopened when the zone
 * changes, closed when the thread ends), and the span between two
 * transitions it last looked at: an offset inside the span, or a local
 * time well inside it, costs no ICU call (measured on one core: about 40 ns
 * a call then, against 2 us for ucal_setMillis + ucal_get).  Callers
 * still bound the calls: per range bound, per date math expression, per
 * date_histogram bucket boundary and per printed key, never per document
 * of a bucket.  If ICU fails (out of memory) the offset used is 0.
 */
#include "time/tz.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/ucal.h>
#include <unicode/ustring.h>

/* A zone's offset is constant between transitions (months apart), so a
 * thread remembers the last span [lo, hi) and its offset: a value inside
 * needs no ICU call.  A local time farther than SPAN_MARGIN_MS from both
 * ends is unambiguous (no zone has shifted by a day). */
#define SPAN_MARGIN_MS 86400000LL
typedef struct tz_cache {
    char id[FDS_TZ_ID_MAX];
    UCalendar *cal;
    bool span;           /* lo, hi, off hold */
    int64_t lo, hi, off; /* epoch ms; the offset in ms */
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

/* This thread's cache for zone `id` (its calendar open), or NULL. */
static tz_cache *cache(const char *id)
{
    pthread_once(&cache_once, cache_init);
    tz_cache *c = pthread_getspecific(cache_key);
    if (c && c->cal && !strcmp(c->id, id))
        return c;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || pthread_setspecific(cache_key, c)) {
            free(c);
            return NULL;
        }
    }
    ucal_close(c->cal);
    c->cal = NULL;
    c->span = false;
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
    return c;
}

static UCalendar *calendar(const char *id)
{
    tz_cache *c = cache(id);
    return c ? c->cal : NULL;
}

/* Two decimal digits at s[*i] into *v, *i moved past them. */
static bool two_digits(const char *s, size_t n, size_t *i, int *v)
{
    if (*i + 2 > n || s[*i] < '0' || s[*i] > '9' || s[*i + 1] < '0' ||
        s[*i + 1] > '9')
        return false;
    *v = (s[*i] - '0') * 10 + (s[*i + 1] - '0');
    *i += 2;
    return true;
}

bool fds__time_zone(const char *s, size_t n, int64_t *offset_ms)
{
    size_t i = 0;
    if (n >= 3 && (!memcmp(s, "UTC", 3) || !memcmp(s, "GMT", 3)))
        i = 3;
    if (i == n || (n == 1 && s[0] == 'Z')) {
        *offset_ms = 0;
        return n > 0;
    }
    if (s[i] != '+' && s[i] != '-')
        return false;
    int sign = s[i++] == '-' ? -1 : 1, h = 0, m = 0;
    if (i + 1 == n && s[i] >= '0' && s[i] <= '9') { /* "+5" */
        h = s[i++] - '0';
    } else {
        if (!two_digits(s, n, &i, &h))
            return false;
        if (i < n && s[i] == ':')
            i++;
        if (i < n && !two_digits(s, n, &i, &m))
            return false;
    }
    if (i != n || h > 18 || m > 59)
        return false;
    *offset_ms = sign * ((int64_t)h * 3600000 + (int64_t)m * 60000);
    return true;
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
    tz_cache *c = cache(tz->id);
    if (!c)
        return 0;
    if (c->span && utc_ms >= c->lo && utc_ms < c->hi)
        return c->off;
    UErrorCode st = U_ZERO_ERROR;
    ucal_setMillis(c->cal, (UDate)utc_ms, &st);
    int64_t off = (int64_t)ucal_get(c->cal, UCAL_ZONE_OFFSET, &st) +
                  ucal_get(c->cal, UCAL_DST_OFFSET, &st);
    if (U_FAILURE(st))
        return 0;
    /* the span around utc_ms: from the last transition at or before it to
     * the next one after it (none: the ends of time) */
    UDate t;
    c->lo = INT64_MIN;
    c->hi = INT64_MAX;
    ucal_setMillis(c->cal, (UDate)utc_ms, &st);
    if (ucal_getTimeZoneTransitionDate(c->cal, UCAL_TZ_TRANSITION_PREVIOUS_INCLUSIVE, &t,
                                       &st) && U_SUCCESS(st))
        c->lo = (int64_t)t;
    ucal_setMillis(c->cal, (UDate)utc_ms, &st);
    if (ucal_getTimeZoneTransitionDate(c->cal, UCAL_TZ_TRANSITION_NEXT, &t, &st) &&
        U_SUCCESS(st))
        c->hi = (int64_t)t;
    c->off = off;
    c->span = U_SUCCESS(st) && c->lo <= utc_ms && utc_ms < c->hi;
    return off;
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
    tz_cache *c = cache(tz->id);
    if (!c)
        return local_ms;
    /* inside a span, well clear of its ends: one offset, no ICU call;
     * else load the span near local_ms once and look again */
    for (int pass = 0; pass < 2; pass++) {
        if (c->span && local_ms - c->off - SPAN_MARGIN_MS >= c->lo &&
            c->hi - SPAN_MARGIN_MS > local_ms - c->off)
            return local_ms - c->off;
        if (pass == 0)
            (void)fds__tz_offset(tz, local_ms - (c->span ? c->off : 0));
    }
    UCalendar *cal = c->cal;
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
