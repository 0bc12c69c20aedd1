/*
 * datemath.c: range dates with formats and date math (see datemath.h;
 * Elasticsearch's JavaDateMathParser); time zones, fixed and named, are
 * in tz.c.  Every loop is
 * bounded by the length of its text.
 */
#include "time/datemath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fds_time.h"
#include "query_int.h"

#define MS_PER_DAY 86400000LL
/* Dates are kept within +-8.64e15 ms (ECMAScript's range, years -271821 to
 * 275760) so that no arithmetic on them can overflow an int64. */
#define DATE_MS_MAX 8640000000000000LL

unsigned fds__date_formats(const char *s, size_t n)
{
    static const struct { const char *name; unsigned bit; } tab[] = {
        {"strict_date_optional_time", FDS_DF_ISO},
        {"date_optional_time", FDS_DF_ISO},
        {"strict_date", FDS_DF_DATE}, {"date", FDS_DF_DATE},
        {"yyyy-MM-dd", FDS_DF_DATE}, {"epoch_millis", FDS_DF_EPOCH_MILLIS},
        {"epoch_second", FDS_DF_EPOCH_SECOND},
    };
    unsigned bits = 0;
    for (size_t i = 0; i <= n;) {
        size_t e = i;
        while (e < n && !(e + 1 < n && s[e] == '|' && s[e + 1] == '|'))
            e++;
        unsigned one = 0;
        for (size_t k = 0; k < sizeof tab / sizeof *tab; k++)
            if (strlen(tab[k].name) == e - i && !memcmp(tab[k].name, s + i, e - i))
                one = tab[k].bit;
        if (!one)
            return 0;
        bits |= one;
        i = e + 2;
    }
    return bits;
}

/* Does the ISO text carry its own offset (Z or +hh:mm after the time)? */
static bool has_offset(const char *s, size_t n)
{
    const char *t = memchr(s, 'T', n);
    if (!t)
        return n > 0 && s[n - 1] == 'Z';
    for (const char *p = t; p < s + n; p++)
        if (*p == 'Z' || *p == '+' || *p == '-')
            return true;
    return false;
}

static bool all_digits(const char *s, size_t n)
{
    size_t i = n && s[0] == '-' ? 1 : 0;
    if (i == n)
        return false;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* ---- patterns -------------------------------------------------------------- */

static const char *const MONTHS[12] = {"january", "february", "march", "april",
                                       "may", "june", "july", "august",
                                       "september", "october", "november",
                                       "december"};

static bool pattern_ok(const char *p)
{
    for (; *p; p++) {
        if (*p == '\'') {
            const char *q = strchr(p + 1, '\'');
            if (!q)
                return false;
            p = q;
        } else if (((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) &&
                   !strchr("yuMdHmsSZXxE", *p)) {
            return false;
        }
    }
    return true;
}

static bool read_num(const char *s, size_t n, size_t *i, size_t min, size_t max,
                     int *v)
{
    size_t k = 0;
    *v = 0;
    while (*i < n && k < max && s[*i] >= '0' && s[*i] <= '9') {
        *v = *v * 10 + (s[(*i)++] - '0');
        k++;
    }
    return k >= min;
}

/* Offset text at s[*i]: Z, or +HH, +HHMM, +HH:MM. */
static bool read_offset(const char *s, size_t n, size_t *i, int64_t *off_ms)
{
    if (*i < n && s[*i] == 'Z') {
        (*i)++;
        *off_ms = 0;
        return true;
    }
    if (*i >= n || (s[*i] != '+' && s[*i] != '-'))
        return false;
    int sign = s[(*i)++] == '-' ? -1 : 1, h, m = 0;
    if (!read_num(s, n, i, 2, 2, &h))
        return false;
    if (*i < n && s[*i] == ':')
        (*i)++;
    if (*i < n && s[*i] >= '0' && s[*i] <= '9' && !read_num(s, n, i, 2, 2, &m))
        return false;
    if (h > 18 || m > 59)
        return false;
    *off_ms = sign * ((int64_t)h * 3600000 + (int64_t)m * 60000);
    return true;
}

/* s[0..n) read with pattern `p`. */
static int parse_pattern(const char *s, size_t n, const char *p, const fds_tz *tz,
                         int64_t *out)
{
    int y = -1, mo = 1, d = 1, h = 0, mi = 0, se = 0;
    int64_t frac_ms = 0, off = 0;
    bool has_off = false;
    size_t i = 0;
    while (*p) {
        char c = *p;
        size_t k = 1;
        if (c == '\'') {
            const char *q = strchr(p + 1, '\'');
            size_t l = (size_t)(q - p - 1);
            if (l == 0) { /* '' is a quote */
                if (i >= n || s[i] != '\'')
                    return -1;
                i++;
            } else if (i + l > n || memcmp(s + i, p + 1, l)) {
                return -1;
            } else {
                i += l;
            }
            p = q + 1;
            continue;
        }
        if (!strchr("yuMdHmsSZXxE", c)) {
            if (i >= n || s[i] != c)
                return -1;
            i++;
            p++;
            continue;
        }
        while (p[k] == c)
            k++;
        p += k;
        bool ok = true;
        switch (c) {
        case 'y': case 'u':
            /* yyyy: exactly four digits, as in yyyyMMdd; y: 1 to 6 */
            ok = k <= 6 && read_num(s, n, &i, k >= 2 ? k : 1, k >= 2 ? k : 6, &y);
            if (k == 2)
                y += 2000;
            break;
        case 'M':
            if (k <= 2) {
                ok = read_num(s, n, &i, k, 2, &mo);
            } else {
                ok = false;
                for (int m = 0; m < 12 && !ok; m++) {
                    size_t l = k == 3 ? 3 : strlen(MONTHS[m]);
                    if (i + l <= n && !strncasecmp(s + i, MONTHS[m], l)) {
                        mo = m + 1;
                        i += l;
                        ok = true;
                    }
                }
            }
            break;
        case 'd': ok = read_num(s, n, &i, k, 2, &d); break;
        case 'H': ok = read_num(s, n, &i, k, 2, &h); break;
        case 'm': ok = read_num(s, n, &i, k, 2, &mi); break;
        case 's': ok = read_num(s, n, &i, k, 2, &se); break;
        case 'S': {
            int64_t scale = 100;
            size_t nd = 0;
            while (i < n && nd < k && s[i] >= '0' && s[i] <= '9') {
                frac_ms += (s[i++] - '0') * scale;
                scale /= 10;
                nd++;
            }
            ok = nd == k;
            break;
        }
        case 'E':
            ok = i < n;
            while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
                i++;
            break;
        default: /* Z X x */
            ok = read_offset(s, n, &i, &off);
            has_off = true;
        }
        if (!ok)
            return -1;
    }
    if (i != n || y < 0 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 ||
        se > 59)
        return -1;
    if ((unsigned)d > fds_days_in_month(y, (unsigned)mo))
        return -1;
    int64_t days = fds_days_from_civil(y, (unsigned)mo, (unsigned)d);
    int64_t local = (days * 86400 + h * 3600 + mi * 60 + se) * 1000 + frac_ms;
    *out = has_off ? local - off : fds__tz_to_utc(tz, local, false);
    return 0;
}

int fds__date_format_parse(const char *s, size_t n, fds_date_format *f)
{
    memset(f, 0, sizeof *f);
    if (n == 0 || n >= sizeof f->text)
        return -1;
    memcpy(f->text, s, n);
    for (size_t i = 0; i <= n;) {
        size_t e = i;
        while (e < n && !(e + 1 < n && s[e] == '|' && s[e + 1] == '|'))
            e++;
        unsigned bit = fds__date_formats(s + i, e - i);
        if (bit) {
            f->bits |= bit;
        } else {
            if (f->npat == FDS_DATE_PATTERNS_MAX || e - i == 0 ||
                e - i >= FDS_DATE_PATTERN_LEN)
                return -1;
            memcpy(f->pat[f->npat], s + i, e - i);
            if (!pattern_ok(f->pat[f->npat]))
                return -1;
            f->npat++;
        }
        i = e + 2;
    }
    return 0;
}

/* A date (no math) in one of `formats`. */
static int parse_base(const char *s, size_t n, unsigned formats, const fds_tz *tz,
                      int64_t *out)
{
    if ((formats & (FDS_DF_EPOCH_MILLIS | FDS_DF_EPOCH_SECOND)) &&
        all_digits(s, n) && n <= 18) {
        int64_t v;
        if (fds__parse_long(s, n, false, &v) == 0) {
            if (!(formats & FDS_DF_EPOCH_MILLIS))
                v = v > DATE_MS_MAX / 1000 || v < -DATE_MS_MAX / 1000 ? DATE_MS_MAX + 1
                                                                    : v * 1000;
            if (v > DATE_MS_MAX || v < -DATE_MS_MAX)
                return -1;
            *out = v;
            return 0;
        }
    }
    bool iso = formats & FDS_DF_ISO;
    bool date_only = (formats & FDS_DF_DATE) && n == 10;
    if ((iso || date_only) && fds__parse_date(s, n, false, out) == 0) {
        if (!has_offset(s, n))
            *out = fds__tz_to_utc(tz, *out, false);
        return 0;
    }
    return -1;
}

/* Add `k` months to the epoch ms `t` (local time), clamping the day to the
 * month's length as java.time's plusMonths does. */
static int64_t add_months(int64_t t, int64_t k)
{
    int64_t days = t >= 0 ? t / MS_PER_DAY : -((-t + MS_PER_DAY - 1) / MS_PER_DAY);
    int64_t rem = t - days * MS_PER_DAY, y;
    unsigned m, d;
    fds_civil_from_days(days, &y, &m, &d);
    int64_t mi = y * 12 + (m - 1) + k;
    y = mi >= 0 ? mi / 12 : -((-mi + 11) / 12);
    m = (unsigned)(mi - y * 12) + 1;
    unsigned last = fds_days_in_month(y, m);
    if (d > last)
        d = last;
    return fds_days_from_civil(y, m, d) * MS_PER_DAY + rem;
}

/* Round the local epoch ms `t` down to the start of `unit`. */
static int64_t round_down(int64_t t, char unit)
{
    int64_t step = unit == 's' ? 1000 : unit == 'm' ? 60000
                 : (unit == 'h' || unit == 'H') ? 3600000 : MS_PER_DAY;
    int64_t days = t >= 0 ? t / MS_PER_DAY : -((-t + MS_PER_DAY - 1) / MS_PER_DAY);
    if (unit == 'w') { /* ISO weeks start on Monday; 1970-01-01 was a Thursday */
        int64_t dow = ((days % 7) + 7 + 3) % 7; /* 0 = Monday */
        return (days - dow) * MS_PER_DAY;
    }
    if (unit == 'M' || unit == 'y') {
        int64_t y;
        unsigned m, d;
        fds_civil_from_days(days, &y, &m, &d);
        return fds_days_from_civil(y, unit == 'y' ? 1 : m, 1) * MS_PER_DAY;
    }
    return t >= 0 ? t / step * step : -((-t + step - 1) / step) * step;
}

/* t plus k units, or false when the result leaves +-DATE_MS_MAX (t is
 * within it; |k| < 1e9). */
static bool add_unit(int64_t *t, int64_t k, char unit)
{
    int64_t step = unit == 'w' ? 7 * MS_PER_DAY : unit == 'd' ? MS_PER_DAY
                 : (unit == 'h' || unit == 'H') ? 3600000 : unit == 'm' ? 60000
                 : 1000;
    if (unit == 'y' || unit == 'M') {
        int64_t months = unit == 'y' ? 12 * k : k; /* |months| < 1.2e10 */
        if (months > 3400000 || months < -3400000) /* past the range anyway */
            return false;
        *t = add_months(*t, months);
    } else {
        if (k > DATE_MS_MAX / step || k < -DATE_MS_MAX / step)
            return false;
        *t += k * step;
    }
    return *t <= DATE_MS_MAX && *t >= -DATE_MS_MAX;
}


int fds__date_parse(const char *s, size_t n, const fds_date_format *f,
                    const fds_tz *tz, int64_t *out)
{
    static const fds_tz utc;
    if (!tz)
        tz = &utc;
    if (parse_base(s, n, f ? f->bits : FDS_DF_DEFAULT, tz, out) == 0)
        return 0;
    for (unsigned k = 0; f && k < f->npat; k++)
        if (parse_pattern(s, n, f->pat[k], tz, out) == 0)
            return 0;
    return -1;
}

/* The milliseconds an ISO date text leaves unsaid, minus one: what
 * Elasticsearch's round-up parser fills in for gt and lte ("2026-12-01" is
 * its last millisecond, "...T10:00" its minute's).  0 for a full time. */
static int64_t iso_unsaid_ms(const char *s, size_t n)
{
    const char *t = memchr(s, 'T', n);
    if (!t)
        return n == 10 ? MS_PER_DAY - 1 : 0;
    size_t colons = 0;
    bool frac = false;
    for (const char *p = t; p < s + n; p++) {
        if (*p == 'Z' || *p == '+' || (*p == '-' && p > t))
            break;
        colons += *p == ':';
        frac |= *p == '.' || *p == ',';
    }
    if (frac)
        return 0;
    return colons == 0 ? 3600000 - 1 : colons == 1 ? 60000 - 1 : 1000 - 1;
}

int fds__date_math(const char *s, size_t n, const fds_date_format *f,
                   const fds_tz *tz, bool round_up, int64_t now_ms, int64_t *out)
{
    static const fds_tz utc;
    if (!tz)
        tz = &utc;
    int64_t t;
    size_t i;
    if (n >= 3 && !memcmp(s, "now", 3)) {
        t = now_ms;
        i = 3;
    } else {
        size_t k = 0;
        while (k + 1 < n && !(s[k] == '|' && s[k + 1] == '|'))
            k++;
        size_t blen = k + 1 < n ? k : n;
        if (fds__date_parse(s, blen, f, tz, &t))
            return -1;
        /* no math: a rounded-up bound ends where its text stops saying */
        if (blen == n && round_up && !all_digits(s, n)) {
            /* filled in on the local time: a day of 25 hours ends later */
            if (has_offset(s, n))
                t += iso_unsaid_ms(s, n);
            else
                t = fds__tz_to_utc(tz, t + fds__tz_offset(tz, t) + iso_unsaid_ms(s, n),
                                   false);
        }
        i = blen < n ? blen + 2 : n;
    }
    if (t > DATE_MS_MAX || t < -DATE_MS_MAX)
        return -1;
    /* the math runs on local time: shift into the zone and back (a round
     * trip when there is no math) */
    if (i == n) {
        *out = t;
        return 0;
    }
    t += fds__tz_offset(tz, t);
    while (i < n) {
        char op = s[i++];
        if (op == '/') {
            if (i >= n || !strchr("yMwdhHms", s[i]))
                return -1;
            char unit = s[i++];
            t = round_down(t, unit);
            if (round_up) {
                if (!add_unit(&t, 1, unit))
                    return -1;
                t -= 1;
            }
        } else if (op == '+' || op == '-') {
            int64_t k = 0;
            size_t d0 = i;
            while (i < n && s[i] >= '0' && s[i] <= '9' && i - d0 < 9)
                k = k * 10 + (s[i++] - '0');
            if (i == d0)
                k = 1; /* "+d" is "+1d" */
            if (i >= n || !strchr("yMwdhHms", s[i]))
                return -1;
            if (!add_unit(&t, op == '-' ? -k : k, s[i++]))
                return -1;
        } else {
            return -1;
        }
    }
    /* a rounded-up bound is the unit's last millisecond: read the next
     * unit's start back and step before it, so that a gap or overlap at
     * the boundary cannot move the bound */
    *out = round_up && s[n - 2] == '/' ? fds__tz_to_utc(tz, t + 1, false) - 1
                                       : fds__tz_to_utc(tz, t, false);
    return 0;
}

/* ---- printing -------------------------------------------------------------- */

/* fds__date_print: datemath.h. */
size_t fds__date_print(int64_t ms, const char *fmt, char *out, size_t cap)
{
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    int64_t rem = ms - days * 86400000;
    int64_t y;
    unsigned mo, d;
    fds_civil_from_days(days, &y, &mo, &d);
    unsigned H = (unsigned)(rem / 3600000), M = (unsigned)(rem / 60000 % 60),
             S = (unsigned)(rem / 1000 % 60), ms3 = (unsigned)(rem % 1000);
    size_t n = fmt ? strcspn(fmt, "|") : 0;
#define NAMED(s) (n == strlen(s) && !strncmp(fmt, s, n))
    if (!fmt || NAMED("strict_date_optional_time") || NAMED("date_optional_time") ||
        NAMED("strict_date_time") || NAMED("date_time") ||
        NAMED("strict_date_optional_time_nanos")) {
        if (y >= 0 && y <= 9999 && cap > 24) { /* the common case, by hand */
            unsigned f[7] = {(unsigned)y, mo, d, H, M, S, ms3};
            static const unsigned char w[7] = {4, 2, 2, 2, 2, 2, 3};
            static const char sep[7] = "--T::.Z";
            char *p = out;
            for (int i = 0; i < 7; i++) {
                for (int j = w[i] - 1; j >= 0; j--, f[i] /= 10)
                    p[j] = (char)('0' + f[i] % 10);
                p += w[i];
                *p++ = sep[i];
            }
            *p = 0;
            return 24;
        }
        return (size_t)snprintf(out, cap, "%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ",
                                (long long)y, mo, d, H, M, S, ms3);
    }
    if (NAMED("epoch_millis"))
        return (size_t)snprintf(out, cap, "%lld", (long long)ms);
    if (NAMED("epoch_second"))
        return ms % 1000 ? (size_t)snprintf(out, cap, "%lld.%03u",
                                            (long long)(ms / 1000),
                                            (unsigned)llabs(ms % 1000))
                         : (size_t)snprintf(out, cap, "%lld", (long long)(ms / 1000));
    if (NAMED("strict_date") || NAMED("date"))
        return (size_t)snprintf(out, cap, "%04lld-%02u-%02u", (long long)y, mo, d);
#undef NAMED
    size_t k = 0;
    for (size_t i = 0; i < n && k + 12 < cap;) {
        char ch = fmt[i];
        size_t run = 1;
        while (i + run < n && fmt[i + run] == ch)
            run++;
        if (ch == '\'') {
            size_t j = i + 1;
            while (j < n && fmt[j] != '\'' && k + 1 < cap)
                out[k++] = fmt[j++];
            i = j + 1;
            continue;
        }
        unsigned long long v = 0;
        int w = (int)run;
        switch (ch) {
        case 'y': case 'u':
            v = (unsigned long long)(run == 2 ? y % 100 : y);
            w = run == 2 ? 2 : (int)(run < 4 ? 4 : run);
            break;
        case 'M': v = mo; break;
        case 'd': v = d; break;
        case 'H': v = H; break;
        case 'm': v = M; break;
        case 's': v = S; break;
        case 'S': {
            char frac[16];
            snprintf(frac, sizeof frac, "%03u000000", ms3);
            for (size_t j = 0; j < run && j < 9; j++)
                out[k++] = frac[j];
            i += run;
            continue;
        }
        case 'X': case 'x': case 'Z':
            k += (size_t)snprintf(out + k, cap - k, "%s",
                                  ch == 'X' ? "Z" : ch == 'Z' ? "+0000" : "+00");
            i += run;
            continue;
        default:
            for (size_t j = 0; j < run && k + 1 < cap; j++)
                out[k++] = ch;
            i += run;
            continue;
        }
        k += (size_t)snprintf(out + k, cap - k, "%0*llu", w, v);
        i += run;
    }
    out[k] = 0;
    return k;
}


int fds_date_math_index_name(const char *s, size_t n, int64_t now_ms,
                             char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (k + 1 >= cap)
            return -1;
        if (s[i] == '\\' && i + 1 < n) {
            out[k++] = s[i + 1];
            i += 2;
            continue;
        }
        if (s[i] != '{') {
            if (s[i] == '}')
                return -1;
            out[k++] = s[i++];
            continue;
        }
        /* {math} or {math{format|time_zone}} */
        size_t m0 = ++i;
        while (i < n && s[i] != '{' && s[i] != '}')
            i++;
        size_t m1 = i;
        char fmt[FDS_DATE_PATTERN_LEN] = "yyyy.MM.dd";
        fds_tz tz = {0};
        if (i < n && s[i] == '{') {
            size_t f0 = ++i;
            while (i < n && s[i] != '}')
                i++;
            if (i >= n)
                return -1;
            const char *bar = memchr(s + f0, '|', i - f0);
            size_t fl = bar ? (size_t)(bar - (s + f0)) : i - f0;
            if (fl >= sizeof fmt)
                return -1;
            if (fl) {
                memcpy(fmt, s + f0, fl);
                fmt[fl] = 0;
            }
            if (bar && fds__tz_parse(bar + 1, (size_t)(s + i - bar - 1), &tz))
                return -1;
            i++;
        }
        if (i >= n || s[i] != '}')
            return -1;
        i++;
        int64_t ms;
        if (fds__date_math(s + m0, m1 - m0, NULL, &tz, false, now_ms, &ms))
            return -1;
        for (const char *p = fmt; *p; p++)
            if (*p != '\'' && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) &&
                !strchr("yuMdHmsS", *p))
                return -1;
        char buf[FDS_DATE_PATTERN_LEN * 2];
        size_t bl = fds__date_print(ms + fds__tz_offset(&tz, ms), fmt, buf, sizeof buf);
        if (k + bl >= cap)
            return -1;
        memcpy(out + k, buf, bl);
        k += bl;
    }
    out[k] = 0;
    return 0;
}
