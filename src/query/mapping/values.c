/*
 * values.c: field value conversions shared by indexing, validation and the
 * query DSL -- integers read from their digits (never through a double, so
 * 9007199254740993 stays exact), ISO-8601 dates to epoch milliseconds,
 * booleans, Lucene's SmallFloat norm encoding, CRC-32 and UTF-8 checks.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fds_text.h"
#include "fds_time.h"
#include "query_int.h"

int fds__parse_long(const char *s, size_t n, bool coerce, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i >= n || s[i] < '0' || s[i] > '9')
        return FDS_EINVAL;
    uint64_t v = 0;
    const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10)
            return FDS_ERANGE;
        v = v * 10 + d;
    }
    if (i < n) {
        /* a fraction or exponent: only with coercion, then truncate */
        if (!coerce)
            return FDS_EINVAL;
        double d;
        if (fds__parse_double(s, n, &d))
            return FDS_EINVAL;
        if (!(d > -9.3e18 && d < 9.3e18))
            return FDS_ERANGE;
        if (s[i] == '.') {
            size_t k = i + 1;
            while (k < n && s[k] >= '0' && s[k] <= '9')
                k++;
            if (k == n) { /* plain decimal: keep the exact integer part */
                *out = neg ? (int64_t)(0 - v) : (int64_t)v;
                return 0;
            }
        }
        *out = (int64_t)d;
        return 0;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

int fds__parse_double(const char *s, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return FDS_EINVAL;
    memcpy(buf, s, n);
    buf[n] = 0;
    /* JSON-ish numbers only: no hex, inf, nan */
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' ||
              c == 'e' || c == 'E'))
            return FDS_EINVAL;
    }
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (end != buf + n)
        return FDS_EINVAL;
    *out = d;
    if (!isfinite(d)) /* 1e400: a number, but beyond double */
        return FDS_ERANGE;
    return 0;
}

double fds__round_ftype(const fds_mfield *f, double v)
{
    if (f && (strcmp(f->type_name, "float") == 0 ||
              strcmp(f->type_name, "half_float") == 0))
        return (double)(float)v;
    return v;
}

int fds__parse_bool(const char *s, size_t n, int64_t *out)
{
    if (n == 4 && memcmp(s, "true", 4) == 0) { *out = 1; return 0; }
    if (n == 5 && memcmp(s, "false", 5) == 0) { *out = 0; return 0; }
    if (n == 0) { *out = 0; return 0; }
    return FDS_EINVAL;
}

static int digits(const char *s, size_t n, size_t *i, int count, int *v)
{
    int r = 0;
    for (int k = 0; k < count; k++) {
        if (*i >= n || s[*i] < '0' || s[*i] > '9')
            return -1;
        r = r * 10 + (s[(*i)++] - '0');
    }
    *v = r;
    return 0;
}

int fds__parse_date(const char *s, size_t n, bool allow_epoch, int64_t *ms)
{
    size_t i = 0;
    int y, mo, d, h = 0, mi = 0, se = 0;
    int64_t frac_ms = 0;
    if (allow_epoch) {
        bool all = n > 0;
        for (size_t k = 0; k < n; k++)
            if (!((s[k] >= '0' && s[k] <= '9') || (k == 0 && s[k] == '-')))
                all = false;
        if (all && n != 4 && n != 8) /* 4/8 digits could be yyyy / yyyyMMdd */
            return fds__parse_long(s, n, false, ms) ? FDS_EINVAL : 0;
    }
    if (digits(s, n, &i, 4, &y) || i >= n || s[i++] != '-' ||
        digits(s, n, &i, 2, &mo) || i >= n || s[i++] != '-' ||
        digits(s, n, &i, 2, &d))
        return FDS_EINVAL;
    if (mo < 1 || mo > 12 || d < 1 || d > 31)
        return FDS_EINVAL;
    if ((unsigned)d > fds_days_in_month(y, (unsigned)mo))
        return FDS_EINVAL;
    int64_t off_min = 0;
    if (i < n && s[i] == 'T') {
        i++;
        if (digits(s, n, &i, 2, &h) || h > 23)
            return FDS_EINVAL;
        if (i < n && s[i] == ':') {
            i++;
            if (digits(s, n, &i, 2, &mi) || mi > 59)
                return FDS_EINVAL;
            if (i < n && s[i] == ':') {
                i++;
                if (digits(s, n, &i, 2, &se) || se > 59)
                    return FDS_EINVAL;
                if (i < n && (s[i] == '.' || s[i] == ',')) {
                    i++;
                    int nd = 0;
                    int64_t scale = 100;
                    while (i < n && s[i] >= '0' && s[i] <= '9') {
                        if (nd < 3) {
                            frac_ms += (s[i] - '0') * scale;
                            scale /= 10;
                        }
                        nd++;
                        i++;
                    }
                    if (nd == 0 || nd > 9)
                        return FDS_EINVAL;
                }
            }
        }
        if (i < n) {
            if (s[i] == 'Z') {
                i++;
            } else if (s[i] == '+' || s[i] == '-') {
                int sign = s[i++] == '-' ? -1 : 1, oh, om = 0;
                if (digits(s, n, &i, 2, &oh) || oh > 18)
                    return FDS_EINVAL;
                if (i < n && s[i] == ':')
                    i++;
                if (i < n && digits(s, n, &i, 2, &om))
                    return FDS_EINVAL;
                if (om > 59)
                    return FDS_EINVAL;
                off_min = sign * (oh * 60 + om);
            }
        }
    } else if (i < n && (s[i] == 'Z')) {
        i++;
    }
    if (i != n)
        return FDS_EINVAL;
    int64_t days = fds_days_from_civil(y, (unsigned)mo, (unsigned)d);
    *ms = ((days * 86400 + h * 3600 + mi * 60 + se) - off_min * 60) * 1000 +
          frac_ms;
    return 0;
}

/* ---- Lucene SmallFloat.intToByte4 / byte4ToInt ------------------------- */

#define FDS__NORM_FREE_VALUES 24 /* 255 - longToInt4(Integer.MAX_VALUE) */

static unsigned long_to_int4(uint64_t i)
{
    unsigned bits = i ? 64u - (unsigned)__builtin_clzll(i) : 0;
    if (bits < 4)
        return (unsigned)i;
    unsigned shift = bits - 4;
    unsigned enc = (unsigned)(i >> shift) & 0x07;
    return enc | (shift + 1) << 3;
}

static uint64_t int4_to_long(unsigned i)
{
    uint64_t b = i & 0x07;
    int shift = (int)(i >> 3) - 1;
    return shift == -1 ? b : (b | 0x08) << shift;
}

uint8_t fds__norm_encode(uint32_t length)
{
    if (length > INT32_MAX)
        length = INT32_MAX;
    if (length < FDS__NORM_FREE_VALUES)
        return (uint8_t)length;
    return (uint8_t)(FDS__NORM_FREE_VALUES +
                     long_to_int4(length - FDS__NORM_FREE_VALUES));
}

uint32_t fds__norm_decode(uint8_t b)
{
    if (b < FDS__NORM_FREE_VALUES)
        return b;
    uint64_t d = FDS__NORM_FREE_VALUES + int4_to_long(b - FDS__NORM_FREE_VALUES);
    return d > INT32_MAX ? INT32_MAX : (uint32_t)d;
}

/* The query layer's name for the one strict UTF-8 check (fds_text.h). */
bool fds__utf8_valid(const uint8_t *s, size_t n)
{
    return fds_utf8_valid(s, n);
}
