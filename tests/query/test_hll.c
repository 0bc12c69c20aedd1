/*
 * test_hll.c: unit tests of the cardinality sketch (src/query/aggs/hll.c):
 * the precision rule, the exact phase and its end, the register phase's
 * error at the default threshold, merges equal to the sketch of the union,
 * and the hash functions against MurmurHash3 x64_128 vectors.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "fds_error.h"
#include "fds_test.h"
#include "aggs/hll.h"
#include "aggs/hll_int.h"

/* HLL's standard error at p = 14 is 1.04 / sqrt(2^14) = 0.81 %; allow three
 * of them (Elasticsearch documents accuracy, not a bound). */
#define HLL_P14_MAX_REL_ERROR 0.025

static uint64_t count_of(const uint64_t *hashes, size_t n, uint32_t threshold)
{
    fds_hll *h = fds_hll_create(threshold);
    if (!h)
        return UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (fds_hll_add(h, hashes[i]))
            return UINT64_MAX;
    uint64_t c = fds_hll_cardinality(h);
    fds_hll_free(h);
    return c;
}

static void test_precision(void)
{
    /* HyperLogLogPlusPlus.precisionFromThreshold. */
    ASSERT_EQ(fds_hll_precision_from_threshold(0), 4);
    ASSERT_EQ(fds_hll_precision_from_threshold(1), 4);
    ASSERT_EQ(fds_hll_precision_from_threshold(100), 10);  /* 134 * 4 = 536 */
    ASSERT_EQ(fds_hll_precision_from_threshold(3000), 14); /* 4000 * 4 */
    ASSERT_EQ(fds_hll_precision_from_threshold(40000), 18);
    ASSERT_EQ(fds_hll_precision_from_threshold(UINT32_MAX), 18);
}

static void test_exact_phase(void)
{
    fds_hll *h = fds_hll_create(FDS_HLL_DEFAULT_THRESHOLD);
    REQUIRE(h);
    ASSERT_EQ_U(fds_hll_cardinality(h), 0);
    ASSERT_EQ(fds_hll_add(h, fds_hll_hash_long(42)), 0);
    ASSERT_EQ_U(fds_hll_cardinality(h), 1);
    ASSERT_EQ(fds_hll_add(h, fds_hll_hash_long(42)), 0);
    ASSERT_EQ_U(fds_hll_cardinality(h), 1);
    ASSERT_EQ(fds_hll_add(h, fds_hll_hash_long(43)), 0);
    ASSERT_EQ_U(fds_hll_cardinality(h), 2);
    fds_hll_free(h);

    /* 2999 distinct, each added three times, as longs and as strings. */
    h = fds_hll_create(FDS_HLL_DEFAULT_THRESHOLD);
    fds_hll *s = fds_hll_create(FDS_HLL_DEFAULT_THRESHOLD);
    REQUIRE(h && s);
    for (int rep = 0; rep < 3; rep++) {
        for (int64_t i = 0; i < 2999; i++) {
            char buf[32];
            int n = snprintf(buf, sizeof buf, "client-%lld", (long long)i);
            ASSERT_EQ(fds_hll_add(h, fds_hll_hash_long(i * 7919)), 0);
            ASSERT_EQ(fds_hll_add(s, fds_hll_hash_bytes(buf, (size_t)n)), 0);
        }
    }
    ASSERT_EQ_U(fds_hll_cardinality(h), 2999);
    ASSERT_EQ_U(fds_hll_cardinality(s), 2999);
    ASSERT_EQ(fds_hll_is_registers(h), 0);
    fds_hll_free(h);
    fds_hll_free(s);

    /* The exact phase holds (2^14 / 4) * 0.75 = 3072 encoded hashes. */
    h = fds_hll_create(FDS_HLL_DEFAULT_THRESHOLD);
    REQUIRE(h);
    int64_t v = 0;
    while (fds_hll_cardinality(h) < 3072)
        fds_hll_add(h, fds_hll_hash_long(v++));
    ASSERT_EQ(fds_hll_is_registers(h), 0);
    ASSERT_EQ_U(fds_hll_cardinality(h), 3072);
    fds_hll_add(h, fds_hll_hash_long(v++));
    ASSERT_EQ(fds_hll_is_registers(h), 1);
    /* Right after the switch the registers' linear counting is close. */
    ASSERTF(fabs((double)fds_hll_cardinality(h) - 3073) < 3073 * 0.02, "%llu",
            (unsigned long long)fds_hll_cardinality(h));
    fds_hll_free(h);
}

static void check_error(size_t n)
{
    uint64_t *hs = malloc(n * sizeof *hs);
    REQUIRE(hs);
    for (size_t i = 0; i < n; i++)
        hs[i] = fds_hll_hash_long((int64_t)i);
    uint64_t c = count_of(hs, n, FDS_HLL_DEFAULT_THRESHOLD);
    double rel = fabs((double)c - (double)n) / (double)n;
    printf("hll: %zu distinct longs -> %llu (%.3f %%)\n", n, (unsigned long long)c, rel * 100);
    ASSERTF(rel < HLL_P14_MAX_REL_ERROR, "n=%zu estimate=%llu", n, (unsigned long long)c);
    /* Strings too. */
    for (size_t i = 0; i < n; i++) {
        char buf[32];
        int len = snprintf(buf, sizeof buf, "10.%zu.%zu.%zu", i >> 16, (i >> 8) & 255, i & 255);
        hs[i] = fds_hll_hash_bytes(buf, (size_t)len);
    }
    c = count_of(hs, n, FDS_HLL_DEFAULT_THRESHOLD);
    rel = fabs((double)c - (double)n) / (double)n;
    printf("hll: %zu distinct strings -> %llu (%.3f %%)\n", n, (unsigned long long)c, rel * 100);
    ASSERTF(rel < HLL_P14_MAX_REL_ERROR, "n=%zu estimate=%llu", n, (unsigned long long)c);
    free(hs);
}

static void test_register_phase(void)
{
    check_error(100000);
    check_error(1000000);
}

/* Sketches of parts merged (in every order of phases) equal the sketch of
 * everything: the registers are the same, so the counts are equal. */
static void check_union(size_t n, size_t parts, uint32_t threshold)
{
    fds_hll *all = fds_hll_create(threshold), *merged = fds_hll_create(threshold);
    fds_hll **part = calloc(parts, sizeof *part);
    REQUIRE(all && merged && part);
    for (size_t p = 0; p < parts; p++)
        REQUIRE((part[p] = fds_hll_create(threshold)));
    /* Parts of very different sizes: the first holds half of everything,
     * the others share the rest (some stay exact), with overlaps. */
    for (size_t i = 0; i < n; i++) {
        uint64_t hash = fds_hll_hash_long((int64_t)(i % (n - n / 10)));
        size_t p = i < n / 2 ? 0 : 1 + i % (parts - 1);
        fds_hll_add(all, hash);
        fds_hll_add(part[p], hash);
    }
    for (size_t p = parts; p-- > 0;)
        ASSERT_EQ(fds_hll_merge(merged, part[p]), 0);
    ASSERT_EQ_U(fds_hll_cardinality(merged), fds_hll_cardinality(all));
    /* Merging a sketch into itself or again changes nothing. */
    uint64_t before = fds_hll_cardinality(merged);
    ASSERT_EQ(fds_hll_merge(merged, part[0]), 0);
    ASSERT_EQ_U(fds_hll_cardinality(merged), before);
    for (size_t p = 0; p < parts; p++)
        fds_hll_free(part[p]);
    free(part);
    fds_hll_free(all);
    fds_hll_free(merged);
}

static void test_merge(void)
{
    check_union(2000, 10, FDS_HLL_DEFAULT_THRESHOLD);   /* all exact */
    check_union(20000, 10, FDS_HLL_DEFAULT_THRESHOLD);  /* exact + registers */
    check_union(500000, 10, FDS_HLL_DEFAULT_THRESHOLD); /* registers */
    check_union(50000, 7, 100);

    fds_hll *a = fds_hll_create(3000), *b = fds_hll_create(100);
    REQUIRE(a && b);
    ASSERT_EQ(fds_hll_merge(a, b), FDS_EINVAL);
    ASSERT_EQ(fds_hll_merge(a, NULL), FDS_EINVAL);
    fds_hll_free(a);
    fds_hll_free(b);
    fds_hll_free(NULL);
}

/* Every small precision runs through its bias tables without faults and
 * stays within a few standard errors (1.04 / sqrt(m)). */
static void test_all_precisions(void)
{
    for (int p = FDS_HLL_MIN_PRECISION; p <= FDS_HLL_MAX_PRECISION; p++) {
        /* The smallest threshold giving precision p. */
        uint32_t t = 0;
        while (fds_hll_precision_from_threshold(t) < p)
            t = t ? t + (t >> 4) + 1 : 1;
        fds_hll *h = fds_hll_create(t);
        REQUIRE(h);
        ASSERT_EQ(fds_hll_precision(h), p);
        size_t m = (size_t)1 << p, n = 3 * m;
        for (size_t i = 0; i < n; i++)
            fds_hll_add(h, fds_hll_hash_long((int64_t)(i + 1000003 * (size_t)p)));
        double rel = fabs((double)fds_hll_cardinality(h) - (double)n) / (double)n;
        ASSERTF(rel < 5 * 1.04 / sqrt((double)m), "p=%d n=%zu estimate=%llu", p, n,
                (unsigned long long)fds_hll_cardinality(h));
        fds_hll_free(h);
    }
}

/* The appendix tables: each bias is the raw estimate minus the true
 * cardinality it was measured at, and those start at 1 and increase --
 * a check of the transcription. */
static void test_bias_tables(void)
{
    for (int i = 0; i < FDS__HLL_PRECISIONS; i++) {
        const double *raw = fds__hll_raw_estimate[i], *bias = fds__hll_bias[i];
        double prev = 0;
        ASSERTF(fds__hll_bias_len[i] >= 79, "precision %d", i + 4);
        for (size_t j = 0; j < fds__hll_bias_len[i]; j++) {
            double truth = raw[j] - bias[j];
            ASSERTF(fabs(truth - round(truth)) < 1e-6 && truth > prev, "p=%d j=%zu truth=%.6f",
                    i + 4, j, truth);
            ASSERTF(j || round(truth) == 1, "p=%d first=%.6f", i + 4, truth);
            prev = truth;
        }
    }
}

static void test_hashes(void)
{
    /* MurmurHash3_x64_128, seed 0, first 64 bits (h1). */
    ASSERT_EQ_U(fds_hll_hash_bytes("", 0), 0);
    ASSERT_EQ_U(fds_hll_hash_bytes("hello", 5), 0xcbd8a7b341bd9b02ull);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    ASSERT_EQ_U(fds_hll_hash_bytes(fox, strlen(fox)), 0xe34bbc7bbc071b6cull);

    /* BitMixer.mix64: 0 maps to 0; doubles hash their IEEE bits, every
     * NaN as the canonical one; -0.0 is not 0.0. */
    ASSERT_EQ_U(fds_hll_hash_long(0), 0);
    ASSERT_EQ_U(fds_hll_hash_double(1.0), fds_hll_hash_long(0x3ff0000000000000ll));
    ASSERT_EQ_U(fds_hll_hash_double(NAN), fds_hll_hash_double(-NAN));
    ASSERT_EQ_U(fds_hll_hash_double(NAN), fds_hll_hash_long(0x7ff8000000000000ll));
    ASSERT(fds_hll_hash_double(0.0) != fds_hll_hash_double(-0.0));
    ASSERT(fds_hll_hash_long(1) != fds_hll_hash_long(2));
}

int main(void)
{
    RUN(test_precision);
    RUN(test_exact_phase);
    RUN(test_register_phase);
    RUN(test_merge);
    RUN(test_all_precisions);
    RUN(test_bias_tables);
    RUN(test_hashes);
    TEST_DONE();
}
