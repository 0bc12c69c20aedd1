/*
 * fds_numfmt.c: shortest round-trip float formatting without printf (see
 * fds_numfmt.h for why).
 *
 * For p = 1..9 significant digits: D = |f| * 10^s rounded half-even, with
 * s = p - 1 - X and X the decimal exponent, computed exactly on the float's
 * integer mantissa m and binary exponent e (|f| = m * 2^e) in 128-bit
 * integers -- the same rounding glibc's printf applies to the exact binary
 * value.  D * 10^-s reads back as f (strtof rounds to nearest, ties to even)
 * iff it lies inside f's rounding interval, bounded by the midpoints to the
 * neighbouring floats; again an exact integer comparison.  The first p that
 * passes is printed with %g's rules (fixed notation when -4 <= X < p,
 * trailing zeros removed).  The fast path is limited to [1e-5, 1e9) so that
 * every product fits in 128 bits; other values use the snprintf loop.
 */
#include "fds_numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

static const uint64_t POW10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
    10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
    100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull,
    10000000000000000000ull};

static size_t add_point(char *out, size_t n)
{
    if (!strpbrk(out, ".eEn")) {
        memcpy(out + n, ".0", 3);
        n += 2;
    }
    return n;
}

size_t fds_float_format_ref(float f, char *out)
{
    if (isnan(f)) {
        memcpy(out, "nan", 4);
        return 3;
    }
    for (int p = 1; p <= 9; p++) {
        snprintf(out, FDS_FLOAT_STR_MAX, "%.*g", p, (double)f);
        if (strtof(out, NULL) == f)
            break;
    }
    return add_point(out, strlen(out));
}

/* round_half_even(m * 2^e * 10^s) for the fast-path ranges. */
static uint64_t scaled(uint32_t m, int e, int s)
{
    u128 v = m;
    if (s >= 0) {
        v *= POW10[s];
        if (e >= 0)
            return (uint64_t)(v << e);
        int k = -e;
        u128 q = v >> k, r = v & (((u128)1 << k) - 1), half = (u128)1 << (k - 1);
        if (r > half || (r == half && (q & 1)))
            q++;
        return (uint64_t)q;
    }
    /* s < 0: |f| >= 10^p; e >= 0 in the fast-path range or small */
    u128 num = e >= 0 ? v << e : v;
    u128 den = POW10[-s];
    if (e < 0)
        den <<= -e;
    u128 q = num / den, r = num % den;
    if (2 * r > den || (2 * r == den && (q & 1)))
        q++;
    return (uint64_t)q;
}

/* Is D * 10^-s within f's rounding interval [lo, hi] (ends included iff m
 * is even)?  f = m * 2^e with m in [2^23, 2^24). */
static int reads_back(uint64_t D, int s, uint32_t m, int e)
{
    /* interval ends in units of 2^(e-2): f = 4m, hi = 4m + 2,
     * lo = 4m - 2 (4m - 1 when m = 2^23: the float below is closer) */
    int g = e - 2;
    u128 X = (u128)m * 4;
    u128 hi = X + 2, lo = m == (1u << 23) ? X - 1 : X - 2;
    /* compare D * 10^-s with Y * 2^g: scale both to integers */
    u128 lhs = D;
    u128 mul = 1;
    if (s >= 0)
        mul = POW10[s];
    else
        lhs *= POW10[-s];
    /* lhs vs Y * mul * 2^g */
    u128 rhs_hi = hi * mul, rhs_lo = lo * mul;
    if (g >= 0) {
        rhs_hi <<= g;
        rhs_lo <<= g;
    } else {
        lhs <<= -g;
    }
    int even = !(m & 1);
    if (lhs < rhs_lo || lhs > rhs_hi)
        return 0;
    if (!even && (lhs == rhs_lo || lhs == rhs_hi))
        return 0;
    return 1;
}

size_t fds_float_format(float f, char *out)
{
    float a = fabsf(f);
    if (!(a >= 1e-5f && a < 1e9f))
        return fds_float_format_ref(f, out);
    uint32_t bits;
    memcpy(&bits, &a, 4);
    uint32_t m = (bits & 0x7FFFFFu) | 0x800000u;
    int e = (int)(bits >> 23) - 127 - 23;
    int E = (int)floor(log10((double)a));
    uint64_t D = 0;
    int p, X = E;
    for (p = 1; p <= 9; p++) {
        X = E;
        D = scaled(m, e, p - 1 - X);
        if (D >= POW10[p]) { /* rounding carried into a new digit */
            X++;
            D = scaled(m, e, p - 1 - X);
        } else if (D < POW10[p - 1]) { /* log10 overestimated */
            X--;
            D = scaled(m, e, p - 1 - X);
        }
        if (reads_back(D, p - 1 - X, m, e))
            break;
    }
    if (p > 9)
        return fds_float_format_ref(f, out);
    /* digits of D, trailing zeros removed */
    char dig[12];
    int nd = p;
    for (int i = p - 1; i >= 0; i--) {
        dig[i] = (char)('0' + D % 10);
        D /= 10;
    }
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    size_t n = 0;
    if (f < 0)
        out[n++] = '-';
    if (X >= -4 && X < p) {
        if (X < 0) {
            out[n++] = '0';
            out[n++] = '.';
            for (int i = 0; i < -X - 1; i++)
                out[n++] = '0';
            memcpy(out + n, dig, (size_t)nd);
            n += (size_t)nd;
        } else {
            for (int i = 0; i <= X; i++)
                out[n++] = i < nd ? dig[i] : '0';
            if (nd > X + 1) {
                out[n++] = '.';
                memcpy(out + n, dig + X + 1, (size_t)(nd - X - 1));
                n += (size_t)(nd - X - 1);
            }
        }
    } else {
        out[n++] = dig[0];
        if (nd > 1) {
            out[n++] = '.';
            memcpy(out + n, dig + 1, (size_t)(nd - 1));
            n += (size_t)(nd - 1);
        }
        out[n++] = 'e';
        out[n++] = X < 0 ? '-' : '+';
        int ax = X < 0 ? -X : X;
        if (ax >= 10)
            out[n++] = (char)('0' + ax / 10);
        else
            out[n++] = '0';
        out[n++] = (char)('0' + ax % 10);
    }
    out[n] = 0;
    return add_point(out, n);
}
