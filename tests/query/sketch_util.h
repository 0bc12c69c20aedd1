/*
 * sketch_util.h: what the sketch tests (test_tdigest.c) and
 * bench/query/sketch_accuracy.c share: a seeded SplitMix64 generator (one
 * state per including file) and exact ranks over sorted doubles.
 * Header-only.
 */
#ifndef FDS_SKETCH_UTIL_H
#define FDS_SKETCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

static uint64_t sk_rng_state = 1;

/* SplitMix64 (Steele, Lea, Flood 2014); seed by setting sk_rng_state. */
__attribute__((unused)) static uint64_t sk_next64(void)
{
    uint64_t z = (sk_rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
__attribute__((unused)) static double sk_uniform01(void)
{
    return (double)(sk_next64() >> 11) / 9007199254740992.0;
}

/* qsort comparator of doubles (no NaN). */
__attribute__((unused)) static int sk_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Fraction of the n sorted values that are <= x. */
__attribute__((unused)) static double sk_frac_le(const double *sorted, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sorted[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (double)lo / (double)n;
}

#endif
