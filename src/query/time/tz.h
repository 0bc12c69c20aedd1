/*
 * tz.h: time zones as Elasticsearch's `time_zone` names them -- a fixed
 * offset ("+01:00", "UTC") or a tz database zone whose offset varies with
 * the date (through ICU, tz.c) -- and the conversions between instants and
 * local wall times in one.  Date formats and date math (datemath.h) read
 * dates in these zones.
 */
#ifndef FDS_TZ_H
#define FDS_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A time zone: a fixed offset from UTC, or a tz database zone (through
 * ICU, see tz.c) whose offset varies with the date.  A zeroed fds_tz is UTC.
 * Fixed offsets never reach ICU.
 */
#define FDS_TZ_ID_MAX 64 /* bytes of a zone id, NUL included ("America/Argentina/...") */
typedef struct fds_tz {
    int64_t fixed_ms;        /* the offset, when id[0] == 0 */
    char id[FDS_TZ_ID_MAX];  /* "Europe/Paris"; "" for a fixed offset */
} fds_tz;

/* `time_zone` text s[0..n) as a zone: a fixed offset (fds__time_zone's
 * forms) or a tz database id ICU knows ("Asia/Tehran").  0, or -1 for
 * anything else (Elasticsearch: "Unknown time-zone ID: X"). */
int fds__tz_parse(const char *s, size_t n, fds_tz *tz);

/* The zone's offset from UTC (ms, DST included) at instant utc_ms. */
int64_t fds__tz_offset(const fds_tz *tz, int64_t utc_ms);

/* Local wall time local_ms (epoch ms as if local were UTC) as an instant,
 * resolved as java.time's ZonedDateTime.ofLocal does: a time in a gap
 * moves forward by the gap's length, a time in an overlap takes the earlier
 * offset (the one before the transition).  `later`: in an overlap take the
 * later instant instead (Elasticsearch's rounding below a day). */
int64_t fds__tz_to_utc(const fds_tz *tz, int64_t local_ms, bool later);

/* Is local_ms a wall time that exists in the zone (not in a gap)? */
bool fds__tz_local_exists(const fds_tz *tz, int64_t local_ms);

/* The latest offset transition at or before utc_ms: true and *out, or false
 * when the zone has none (fixed offsets never do). */
bool fds__tz_prev_transition(const fds_tz *tz, int64_t utc_ms, int64_t *out);

/* `time_zone` text as an offset from UTC in milliseconds: "Z", "UTC",
 * "GMT", "+01:00", "-0530", "+5", "UTC+01:00".  -1 (as a bool false) for
 * anything else (named zones: fds__tz_parse). */
bool fds__time_zone(const char *s, size_t n, int64_t *offset_ms);

#endif
