/*
 * test_hist.c: the log-bucketed histogram reports percentiles of known
 * distributions within 0.1% of the exact nearest-rank value, keeps min, max
 * and mean exact, and its bucket layout is gap-free and monotonic.
 */
#include "fds_hist.h"
#include "fds_test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 42;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
static double unif(void)
{
    return ((double)(rnd() >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* exact nearest-rank percentile of sorted v[n] */
static double exact(const uint64_t *v, size_t n, double p)
{
    if (p >= 100)
        return (double)v[n - 1];
    double want = p / 100.0 * (double)n;
    size_t rank = (size_t)ceil(want - 1e-9);
    if (rank == 0)
        rank = 1;
    return (double)v[rank - 1];
}

static void check_dist(const char *name, uint64_t *v, size_t n)
{
    fds_hist *h = fds_hist_create();
    ASSERT(h != NULL);
    long double sum = 0;
    for (size_t i = 0; i < n; i++) {
        fds_hist_record(h, v[i]);
        sum += v[i];
    }
    qsort(v, n, sizeof *v, cmp);
    static const double ps[] = {1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        double want = exact(v, n, ps[i]);
        double got = fds_hist_percentile(h, ps[i]);
        double rel = want > 0 ? fabs(got - want) / want : fabs(got);
        ASSERTF(rel <= 0.001, "%s p%g: got %.1f want %.1f (rel err %.5f)", name, ps[i], got, want,
               rel);
    }
    ASSERT(fds_hist_count(h) == n);
    ASSERT(fds_hist_min(h) == v[0]);
    ASSERT(fds_hist_max(h) == v[n - 1]);
    double mean = (double)(sum / n);
    ASSERTF(fabs(fds_hist_mean(h) - mean) <= 1e-9 * mean, "%s mean", name);
    fds_hist_free(h);
}

int main(void)
{
    enum { N = 1000000 };
    uint64_t *v = malloc(N * sizeof *v);
    ASSERT(v != NULL);

    /* uniform 1 us .. 100 ms in ns */
    for (size_t i = 0; i < N; i++)
        v[i] = 1000 + (uint64_t)(unif() * 99999000.0);
    check_dist("uniform", v, N);

    /* exponential, mean 5 ms */
    for (size_t i = 0; i < N; i++)
        v[i] = (uint64_t)(-log(unif()) * 5e6) + 1;
    check_dist("exponential", v, N);

    /* log-normal around 2 ms, heavy tail */
    for (size_t i = 0; i < N; i++) {
        double z = sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
        v[i] = (uint64_t)(exp(log(2e6) + 1.0 * z)) + 1;
    }
    check_dist("lognormal", v, N);

    /* small exact integers (the exact low range) */
    for (size_t i = 0; i < N; i++)
        v[i] = rnd() % 3000;
    check_dist("small", v, N);

    /* a bimodal latency mix: 99.5% ~5 ms, 0.5% ~1 s (a stall) */
    for (size_t i = 0; i < N; i++)
        v[i] = (rnd() % 1000 < 5) ? 1000000000 + rnd() % 1000000 : 5000000 + rnd() % 100000;
    check_dist("bimodal", v, N);

    /* theoretical check against a known quantile: exponential median = ln 2 * mean */
    fds_hist *h = fds_hist_create();
    for (size_t i = 0; i < N; i++)
        fds_hist_record(h, (uint64_t)(-log(unif()) * 1e9));
    double med = fds_hist_percentile(h, 50);
    ASSERTF(fabs(med - log(2) * 1e9) / (log(2) * 1e9) < 0.005, "exp median %.0f", med);
    fds_hist_free(h);

    /* layout: buckets tile the range without gaps, relative width <= 1/1024 */
    uint64_t prev_hi = 0;
    for (uint32_t i = 1; i < FDS_HIST_NBUCKETS; i++) {
        uint64_t lo, hi;
        fds_hist_bucket_range(i, &lo, &hi);
        ASSERTF(lo == prev_hi + 1, "bucket %u starts at %llu after %llu", i,
               (unsigned long long)lo, (unsigned long long)prev_hi);
        ASSERT(hi >= lo);
        ASSERT(hi == lo || (double)(hi - lo + 1) / (double)lo <= 1.0 / 1024 + 1e-12);
        ASSERT(fds_hist_index(lo) == i && fds_hist_index(hi) == i);
        prev_hi = hi;
        if (fds_test_failures)
            break;
    }
    ASSERT(prev_hi == FDS_HIST_MAX_VALUE);

    /* clamping above the range keeps the exact max */
    h = fds_hist_create();
    fds_hist_record(h, UINT64_C(1) << 50);
    ASSERT(fds_hist_max(h) == UINT64_C(1) << 50);
    ASSERT(fds_hist_percentile(h, 100) == (double)(UINT64_C(1) << 50));
    /* empty and merge */
    fds_hist *g = fds_hist_create();
    ASSERT(fds_hist_percentile(g, 50) == 0 && fds_hist_mean(g) == 0 && fds_hist_min(g) == 0);
    fds_hist_record(g, 10);
    fds_hist_merge(h, g);
    ASSERT(fds_hist_count(h) == 2 && fds_hist_min(h) == 10);
    fds_hist_free(g);
    fds_hist_free(h);
    free(v);
    TEST_DONE();
}
