/*
 * test_tdigest.c: unit tests of the percentiles sketch (src/query/aggs/tdigest.c):
 * exact answers while values are kept (Elasticsearch's Dist.quantile and
 * Dist.cdf rules), rank error on 1e6 values at compression 100, merges of
 * partial digests, cdf monotonicity, weights and argument errors.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "fds_error.h"
#include "fds_test.h"
#include "sketch_util.h"
#include "aggs/tdigest.h"

#define N_LARGE 1000000
/* Rank error bounds at compression 100 on 1e6 values: |F(est) - q| where F
 * is the exact fraction of values <= est.  K_2 makes centroids small near
 * the tails, so tails get the tighter bound. */
#define MAX_RANK_ERR_MID 0.003
#define MAX_RANK_ERR_TAIL 0.0005

static const double qs[] = {0.0001, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5,
                            0.75, 0.9, 0.95, 0.99, 0.999, 0.9999};

static double near(double a, double b) { return fabs(a - b) < 1e-9; }

/*
 * [1..100], any insertion order.  Elasticsearch's rule while values are
 * kept (Dist.quantile): index = q (n - 1), the answer interpolates between
 * the sorted values at floor(index) and floor(index) + 1.  For v_i = i + 1:
 * quantile(q) = 1 + 99 q, so 0.01 -> 1.99, 0.05 -> 5.95, 0.25 -> 25.75,
 * 0.5 -> 50.5, 0.75 -> 75.25, 0.95 -> 95.05, 0.99 -> 99.01.
 */
static void test_exact_small(void)
{
    fds_tdigest *t = fds_tdigest_create(FDS_TDIGEST_DEFAULT_COMPRESSION);
    REQUIRE(t);
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(fds_tdigest_add(t, (double)((i * 37) % 100 + 1), 1), 0);
    ASSERT_EQ_U(fds_tdigest_count(t), 100);
    ASSERT(fds_tdigest_is_exact(t));
    const double q[] = {0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99};
    const double want[] = {1.99, 5.95, 25.75, 50.5, 75.25, 95.05, 99.01};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        ASSERTF(near(fds_tdigest_quantile(t, q[i]), want[i]), "q=%g got %.17g want %g", q[i],
                fds_tdigest_quantile(t, q[i]), want[i]);
    ASSERT(near(fds_tdigest_quantile(t, 0), 1));
    ASSERT(near(fds_tdigest_quantile(t, 1), 100));
    ASSERT(near(fds_tdigest_min(t), 1) && near(fds_tdigest_max(t), 100));

    /*
     * Dist.cdf (percentile_ranks): 0 below the first value; else
     * (0.5 + #{i >= 1: v_i < x} + f) / n, f = half the count of later
     * values equal to x, or the linear fraction to the next value.
     */
    ASSERT(near(fds_tdigest_cdf(t, 0.5), 0));
    ASSERT(near(fds_tdigest_cdf(t, 1), 0.005));
    ASSERT(near(fds_tdigest_cdf(t, 50), 0.49));   /* (0.5 + 48 + 0.5) / 100 */
    ASSERT(near(fds_tdigest_cdf(t, 50.5), 0.50)); /* (0.5 + 49 + 0.5) / 100 */
    ASSERT(near(fds_tdigest_cdf(t, 100), 0.995));
    ASSERT(near(fds_tdigest_cdf(t, 1000), 1));

    /* One value: every quantile is it. */
    fds_tdigest *one = fds_tdigest_create(100);
    REQUIRE(one);
    fds_tdigest_add(one, 7.5, 1);
    ASSERT(near(fds_tdigest_quantile(one, 0.3), 7.5));
    ASSERT(near(fds_tdigest_quantile(one, 1), 7.5));
    fds_tdigest_free(one);
    fds_tdigest_free(t);
}

/* While values are kept, each quantile at i / (n - 1) is the i-th value in
 * order, for sizes around the sort's runs of 16 and its merge widths, with
 * repeats. */
static void test_sorted_values(void)
{
    static const size_t sizes[] = {1, 2, 15, 16, 17, 31, 33, 100, 257, 1000};
    uint64_t st = 3;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        fds_tdigest *t = fds_tdigest_create(FDS_TDIGEST_DEFAULT_COMPRESSION);
        REQUIRE(t);
        double *v = malloc(n * sizeof *v);
        REQUIRE(v);
        for (size_t i = 0; i < n; i++) {
            st = st * 6364136223846793005u + 1442695040888963407u;
            v[i] = (double)((int64_t)(st >> 33) % 200 - 100) / 8;
            ASSERT_EQ(fds_tdigest_add(t, v[i], 1), 0);
        }
        ASSERT(fds_tdigest_is_exact(t));
        qsort(v, n, sizeof *v, sk_cmp_double);
        for (size_t i = 0; i < n; i++) {
            double q = n > 1 ? (double)i / (double)(n - 1) : 0.5;
            ASSERTF(near(fds_tdigest_quantile(t, q), v[i]), "n=%zu i=%zu", n, i);
        }
        free(v);
        fds_tdigest_free(t);
    }
}

static void test_errors(void)
{
    ASSERT(fds_tdigest_create(0) == NULL);
    ASSERT(fds_tdigest_create(-1) == NULL);
    ASSERT(fds_tdigest_create(NAN) == NULL);
    ASSERT(fds_tdigest_create(FDS_TDIGEST_MAX_COMPRESSION * 1.01) == NULL);
    fds_tdigest *big = fds_tdigest_create(FDS_TDIGEST_MAX_COMPRESSION);
    ASSERT(big != NULL);
    fds_tdigest_free(big);

    fds_tdigest *t = fds_tdigest_create(100);
    REQUIRE(t);
    ASSERT(isnan(fds_tdigest_quantile(t, 0.5)));
    ASSERT(isnan(fds_tdigest_cdf(t, 1)));
    ASSERT(isnan(fds_tdigest_min(t)) && isnan(fds_tdigest_max(t)));
    ASSERT_EQ(fds_tdigest_add(t, NAN, 1), FDS_EINVAL);
    ASSERT_EQ(fds_tdigest_add(t, INFINITY, 1), FDS_EINVAL);
    ASSERT_EQ(fds_tdigest_add(t, -INFINITY, 1), FDS_EINVAL);
    ASSERT_EQ(fds_tdigest_add(t, 1, 0), FDS_EINVAL);
    ASSERT_EQ_U(fds_tdigest_count(t), 0);
    fds_tdigest_add(t, 1, 1);
    ASSERT(isnan(fds_tdigest_quantile(t, -0.1)));
    ASSERT(isnan(fds_tdigest_quantile(t, 1.1)));
    ASSERT(isnan(fds_tdigest_cdf(t, NAN)));
    ASSERT_EQ(fds_tdigest_merge(t, NULL), FDS_EINVAL);
    fds_tdigest_free(t);
    fds_tdigest_free(NULL);
}

/* Max rank error of `t` against the sorted values, split mid / tails. */
static void rank_errors(fds_tdigest *t, const double *sorted, size_t n, double *mid,
                        double *tail)
{
    *mid = *tail = 0;
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        double est = fds_tdigest_quantile(t, qs[i]);
        double err = fabs(sk_frac_le(sorted, n, est) - qs[i]);
        int is_tail = qs[i] <= 0.01 || qs[i] >= 0.99;
        double *slot = is_tail ? tail : mid;
        if (err > *slot)
            *slot = err;
    }
}

static void check_distribution(const char *name, double (*gen)(void))
{
    double *v = malloc(N_LARGE * sizeof *v);
    fds_tdigest *t = fds_tdigest_create(FDS_TDIGEST_DEFAULT_COMPRESSION);
    fds_tdigest *merged = fds_tdigest_create(FDS_TDIGEST_DEFAULT_COMPRESSION);
    fds_tdigest *part[10];
    REQUIRE(v && t && merged);
    for (int p = 0; p < 10; p++)
        REQUIRE((part[p] = fds_tdigest_create(FDS_TDIGEST_DEFAULT_COMPRESSION)));
    for (size_t i = 0; i < N_LARGE; i++) {
        v[i] = gen();
        ASSERT_EQ(fds_tdigest_add(t, v[i], 1), 0);
        /* Per-segment digests: contiguous runs, as segments hold them. */
        fds_tdigest_add(part[i * 10 / N_LARGE], v[i], 1);
    }
    for (int p = 0; p < 10; p++)
        ASSERT_EQ(fds_tdigest_merge(merged, part[p]), 0);
    qsort(v, N_LARGE, sizeof *v, sk_cmp_double);
    ASSERT(!fds_tdigest_is_exact(t));
    ASSERT_EQ_U(fds_tdigest_count(merged), N_LARGE);
    ASSERT(fds_tdigest_min(t) == v[0] && fds_tdigest_max(t) == v[N_LARGE - 1]);
    ASSERT(fds_tdigest_min(merged) == v[0] && fds_tdigest_max(merged) == v[N_LARGE - 1]);
    ASSERT(fds_tdigest_quantile(t, 0) == v[0] && fds_tdigest_quantile(t, 1) == v[N_LARGE - 1]);

    double mid, tail, mmid, mtail;
    rank_errors(t, v, N_LARGE, &mid, &tail);
    rank_errors(merged, v, N_LARGE, &mmid, &mtail);
    printf("tdigest %s: one digest max rank error mid %.5f tails %.5f (%llu centroids); "
           "10 merged mid %.5f tails %.5f\n",
           name, mid, tail, (unsigned long long)fds_tdigest_centroids(t), mmid, mtail);
    ASSERTF(mid < MAX_RANK_ERR_MID && tail < MAX_RANK_ERR_TAIL, "%s: %g %g", name, mid, tail);
    ASSERTF(mmid < MAX_RANK_ERR_MID && mtail < MAX_RANK_ERR_TAIL, "%s merged: %g %g", name,
            mmid, mtail);

    /* cdf: monotone, in [0, 1], and close to the exact rank. */
    double prev = 0, worst = 0;
    for (int i = 0; i <= 1000; i++) {
        double x = v[0] + (v[N_LARGE - 1] - v[0]) * i / 1000.0;
        double c = fds_tdigest_cdf(t, x);
        ASSERTF(c >= prev && c >= 0 && c <= 1, "%s cdf(%g) = %g after %g", name, x, c, prev);
        prev = c;
        double e = fabs(c - sk_frac_le(v, N_LARGE, x));
        if (e > worst)
            worst = e;
    }
    ASSERTF(worst < MAX_RANK_ERR_MID, "%s cdf error %g", name, worst);
    for (int p = 0; p < 10; p++)
        fds_tdigest_free(part[p]);
    fds_tdigest_free(t);
    fds_tdigest_free(merged);
    free(v);
}

static double gen_uniform(void) { return sk_uniform01() * 1000.0; }
static double gen_exponential(void) { return -log(1.0 - sk_uniform01()) * 250.0; }

static void test_large(void)
{
    sk_rng_state = 0x5eed;
    check_distribution("uniform", gen_uniform);
    check_distribution("exponential", gen_exponential);
}

/* Small per-segment digests merge into an exact digest of the union. */
static void test_merge_small(void)
{
    fds_tdigest *all = fds_tdigest_create(100), *merged = fds_tdigest_create(100);
    REQUIRE(all && merged);
    for (int p = 0; p < 10; p++) {
        fds_tdigest *part = fds_tdigest_create(100);
        REQUIRE(part);
        for (int i = 0; i < 50; i++) {
            double x = (double)((p * 50 + i) * 7919 % 500);
            fds_tdigest_add(part, x, 1);
            fds_tdigest_add(all, x, 1);
        }
        ASSERT_EQ(fds_tdigest_merge(merged, part), 0);
        fds_tdigest_free(part);
    }
    ASSERT(fds_tdigest_is_exact(merged));
    ASSERT_EQ_U(fds_tdigest_count(merged), 500);
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        ASSERT(near(fds_tdigest_quantile(merged, qs[i]), fds_tdigest_quantile(all, qs[i])));
    for (double x = -1; x < 501; x += 3.7)
        ASSERT(near(fds_tdigest_cdf(merged, x), fds_tdigest_cdf(all, x)));
    /* An empty source changes nothing; an empty destination takes src. */
    fds_tdigest *empty = fds_tdigest_create(100);
    REQUIRE(empty);
    ASSERT_EQ(fds_tdigest_merge(merged, empty), 0);
    ASSERT_EQ_U(fds_tdigest_count(merged), 500);
    ASSERT_EQ(fds_tdigest_merge(empty, merged), 0);
    ASSERT(near(fds_tdigest_quantile(empty, 0.5), fds_tdigest_quantile(all, 0.5)));
    fds_tdigest_free(empty);
    fds_tdigest_free(all);
    fds_tdigest_free(merged);
}

/* A weight w counts as w copies: exactly while values are kept, closely
 * after the switch to centroids. */
static void test_weights(void)
{
    fds_tdigest *w = fds_tdigest_create(100), *copies = fds_tdigest_create(100);
    REQUIRE(w && copies);
    for (int i = 1; i <= 100; i++) {
        fds_tdigest_add(w, i, (uint64_t)(i % 5 + 1));
        for (int k = 0; k <= i % 5; k++)
            fds_tdigest_add(copies, i, 1);
    }
    ASSERT_EQ_U(fds_tdigest_count(w), fds_tdigest_count(copies));
    ASSERT(fds_tdigest_is_exact(w));
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        ASSERT(near(fds_tdigest_quantile(w, qs[i]), fds_tdigest_quantile(copies, qs[i])));
    fds_tdigest_free(w);
    fds_tdigest_free(copies);

    /* Large weights: 1000 values of weight 1000 (1e6 in all). */
    fds_tdigest *t = fds_tdigest_create(100);
    REQUIRE(t);
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(fds_tdigest_add(t, i, 1000), 0);
    ASSERT_EQ_U(fds_tdigest_count(t), 1000000);
    ASSERT(!fds_tdigest_is_exact(t));
    ASSERTF(fabs(fds_tdigest_quantile(t, 0.5) - 499.5) < 5, "%g", fds_tdigest_quantile(t, 0.5));
    ASSERTF(fabs(fds_tdigest_cdf(t, 250) - 0.25) < 0.01, "%g", fds_tdigest_cdf(t, 250));
    fds_tdigest_free(t);
}

/* Kept values do not depend on insertion order; the switch replays them
 * sorted, so the same multiset of the first values gives the same digest. */
static void test_order(void)
{
    fds_tdigest *a = fds_tdigest_create(100), *b = fds_tdigest_create(100);
    REQUIRE(a && b);
    for (int i = 0; i < 1999; i++) {
        fds_tdigest_add(a, i, 1);
        fds_tdigest_add(b, (i * 1103) % 1999, 1);
    }
    ASSERT(fds_tdigest_is_exact(a) && fds_tdigest_is_exact(b));
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        ASSERT(fds_tdigest_quantile(a, qs[i]) == fds_tdigest_quantile(b, qs[i]));
    /* The 2000th value switches to centroids (round(100) * 20). */
    fds_tdigest_add(a, 5000, 1);
    fds_tdigest_add(b, 5000, 1);
    ASSERT(!fds_tdigest_is_exact(a));
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        ASSERT(fds_tdigest_quantile(a, qs[i]) == fds_tdigest_quantile(b, qs[i]));
    ASSERT(fds_tdigest_max(a) == 5000 && fds_tdigest_quantile(a, 1) == 5000);
    fds_tdigest_free(a);
    fds_tdigest_free(b);
}

int main(void)
{
    RUN(test_exact_small);
    RUN(test_sorted_values);
    RUN(test_errors);
    RUN(test_merge_small);
    RUN(test_weights);
    RUN(test_order);
    RUN(test_large);
    TEST_DONE();
}
