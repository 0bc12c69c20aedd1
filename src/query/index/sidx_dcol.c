/*
 * sidx_dcol.c: the packed layout of a double column (segment format 8;
 * sidx_format.h, "DOUBLE with num_bits <= 56").
 *
 * A double field's doc values took 8 raw bytes a doc.  Log fields such as
 * nginx's $request_time hold decimals of a few digits (0.029), mapped as
 * `float` (each value rounded to float32, as Elasticsearch's float field
 * does, mapping/values.c fds__round_ftype).  Such a column is stored as
 * integers m = value * 10^k, packed as the integer columns are (the
 * smallest m subtracted, the fewest bits that hold the rest), and read as
 * m / 10^k, or for a float column as m * (1 / 10^k) rounded to float32
 * (fds__dcol_decode).  The writer keeps
 * this layout only when that read gives every value back to the bit
 * (otherwise, or past 2^53 or FDS_SIDX_DCOL_DIGITS digits, the column
 * stays raw), so a search, sort or aggregation sees the doubles it saw
 * before.  Lucene compresses numeric doc values by a GCD and a min
 * (Lucene90DocValuesConsumer); a float field's sortable int bits have no
 * common divisor, the decimal digits do.
 */
#include <math.h>

#include "index/sidx_int.h"

/* 10^k, exact in a double for k <= 22 */
static const double dcol_pow10[FDS_SIDX_DCOL_DIGITS + 1] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

/* 1 / 10^k, rounded as the division at run time is (IEEE 754) */
static const double dcol_inv10[FDS_SIDX_DCOL_DIGITS + 1] = {
    1 / 1e0, 1 / 1e1, 1 / 1e2, 1 / 1e3, 1 / 1e4,
    1 / 1e5, 1 / 1e6, 1 / 1e7, 1 / 1e8, 1 / 1e9};

double fds__dcol_div(unsigned digits)
{
    return dcol_pow10[digits <= FDS_SIDX_DCOL_DIGITS ? digits : 0];
}

double fds__dcol_mul(unsigned digits)
{
    return dcol_inv10[digits <= FDS_SIDX_DCOL_DIGITS ? digits : 0];
}

/* m for value v at `digits` decimal digits, when the column's read of m
 * (fds__dcol_decode) gives v back to the bit; false otherwise. */
static bool dcol_int(double v, unsigned digits, bool flt, int64_t *m)
{
    double x = v * dcol_pow10[digits];
    if (!(fabs(x) < 9007199254740992.0)) /* 2^53: m exact; NaN fails too */
        return false;
    *m = llround(x);
    double back = fds__dcol_decode(*m, dcol_pow10[digits], dcol_inv10[digits], flt);
    uint64_t a, b;
    __builtin_memcpy(&a, &v, 8);
    __builtin_memcpy(&b, &back, 8);
    return a == b;
}

bool fds__dcol_int(double v, uint64_t scale, int64_t *m)
{
    return dcol_int(v, (unsigned)(scale & FDS_SIDX_DCOL_DIGITS_MASK),
                    (scale & FDS_SIDX_DCOL_FLOAT) != 0, m);
}

/* The fewest digits at which every value of v[0..n) reads back under
 * `flt`, checked value by value; FDS_SIDX_DCOL_DIGITS + 1 when none. */
static unsigned dcol_digits(const double *v, size_t n, bool flt)
{
    unsigned k = 0;
    int64_t m;
    for (size_t i = 0; i < n; i++)
        while (!dcol_int(v[i], k, flt, &m))
            if (++k > FDS_SIDX_DCOL_DIGITS)
                return k;
    /* a value that read back at fewer digits may not at k: check again */
    for (size_t i = 0; i < n; i++)
        if (!dcol_int(v[i], k, flt, &m))
            return FDS_SIDX_DCOL_DIGITS + 1;
    return k;
}

void fds__dcol_plan(const double *v, size_t n, fds__dcol *plan)
{
    plan->bits = FDS_SIDX_NUM_RAW;
    plan->min = 0;
    plan->scale = 0;
    for (int flt = 0; flt <= 1; flt++) {
        unsigned k = dcol_digits(v, n, flt);
        if (k > FDS_SIDX_DCOL_DIGITS)
            continue;
        int64_t lo = 0, hi = 0, m = 0;
        for (size_t i = 0; i < n; i++) {
            dcol_int(v[i], k, flt, &m);
            lo = i == 0 || m < lo ? m : lo;
            hi = i == 0 || m > hi ? m : hi;
        }
        unsigned bits = fds__bit_width((uint64_t)hi - (uint64_t)lo);
        if (bits > FDS_SIDX_NUM_PACK_MAX)
            continue;
        plan->bits = bits;
        plan->min = lo;
        plan->scale = k | (flt ? FDS_SIDX_DCOL_FLOAT : 0);
        return;
    }
}
