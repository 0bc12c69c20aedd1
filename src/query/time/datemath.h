/*
 * datemath.h: date values of range queries as Elasticsearch reads them --
 * a `format` list, a `time_zone` (a fixed offset or a named zone), and date math
 * (DateMathParser): `now-15m/m`, `2026-12-01||+1d/d`.
 */
#ifndef FDS_DATEMATH_H
#define FDS_DATEMATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time/tz.h"

/* The formats a range's `format` may list ('||'-separated), as bits. */
enum {
    FDS_DF_ISO = 1,          /* strict_date_optional_time, date_optional_time */
    FDS_DF_DATE = 2,         /* strict_date, date, yyyy-MM-dd */
    FDS_DF_EPOCH_MILLIS = 4, /* epoch_millis */
    FDS_DF_EPOCH_SECOND = 8, /* epoch_second */
};
/* A date field's default: strict_date_optional_time||epoch_millis. */
#define FDS_DF_DEFAULT (FDS_DF_ISO | FDS_DF_EPOCH_MILLIS)

/* `format` text (n bytes) as FDS_DF_* bits; 0 when a listed format is not
 * one of those names. */
unsigned fds__date_formats(const char *s, size_t n);

#define FDS_DATE_PATTERNS_MAX 4    /* '||'-separated patterns of one format */
#define FDS_DATE_PATTERN_LEN 64    /* bytes of one pattern */
#define FDS_DATE_FORMAT_TEXT 256   /* bytes of a format as given */

/*
 * A date format: named formats (FDS_DF_*) and java.time DateTimeFormatter
 * patterns, of which we read the letters y/u (year), M (month: MM, MMM
 * English abbreviation, MMMM name), d (day), H (hour), m, s, S (fraction),
 * E (day name, skipped), Z/X/x (offset), 'quoted' text and any other
 * non-letter character as itself.  Missing parts default to January, the
 * 1st, midnight.
 */
typedef struct fds_date_format {
    unsigned bits;
    unsigned npat;
    char pat[FDS_DATE_PATTERNS_MAX][FDS_DATE_PATTERN_LEN];
    char text[FDS_DATE_FORMAT_TEXT];
} fds_date_format;

/* Parse `format` text into *f.  0, or -1 for a name or pattern letter we
 * do not read, or a format past the limits above. */
int fds__date_format_parse(const char *s, size_t n, fds_date_format *f);

/* A date in format `f` (NULL: strict_date_optional_time||epoch_millis),
 * a date without an offset read in zone `tz` (NULL: UTC).  0 and *out
 * (epoch ms), or -1. */
int fds__date_parse(const char *s, size_t n, const fds_date_format *f,
                    const fds_tz *tz, int64_t *out);

/*
 * The epoch milliseconds of date expression s[0..n): "now" or a date in
 * format `f` (NULL: the default; a date without an offset is read in
 * zone `tz`, NULL: UTC), then
 * optional math after "||" (or straight after "now"): +N or -N with a unit
 * y M w d h H m s, and /unit rounding, on the local time in the zone (the
 * result read back with fds__tz_to_utc's java.time resolution).  `round_up`
 * rounds to the last millisecond of the unit (Elasticsearch rounds up for
 * gt and lte, down for gte and lt).  `now_ms` is the request's now.
 * Returns 0, or -1 when the text is not such an expression.
 */
int fds__date_math(const char *s, size_t n, const fds_date_format *f,
                   const fds_tz *tz, bool round_up, int64_t now_ms, int64_t *out);

/*
 * ms (epoch milliseconds, printed as UTC) in the first format of `fmt`
 * ('||'-separated; NULL: strict_date_optional_time, with milliseconds and
 * "Z"): the named formats above, or a pattern of y u M d H m s S, X x Z
 * (printed as UTC), 'quoted' text and other characters as themselves.
 * Writes at most cap bytes, NUL included; returns the length.
 */
size_t fds__date_print(int64_t ms, const char *fmt, char *out, size_t cap);

/*
 * An index name with date math (Elasticsearch's DateMathExpressionResolver):
 * s[0..n) is the text between '<' and '>', e.g. "logstash-{now/M}" or
 * "logs-{now/d{yyyy.MM.dd|+12:00}}"; static text is copied (`\` escapes),
 * each {math{format|time_zone}} is the date math at `now_ms` printed in the
 * format (default yyyy.MM.dd) in the time zone (an offset or a zone id).  0 and the
 * name in out (cap bytes), or -1 when it does not parse or does not fit.
 */
int fds_date_math_index_name(const char *s, size_t n, int64_t now_ms,
                             char *out, size_t cap);

#endif
