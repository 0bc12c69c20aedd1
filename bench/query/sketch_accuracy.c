/*
 * sketch_accuracy.c: accuracy of the cardinality and percentiles sketches
 * (src/query/aggs/hll.c, src/query/aggs/tdigest.c) against exact answers.  Not a
 * timing benchmark: it measures error, prints Markdown tables (the
 * "Sketch accuracy" section of docs/query.md is its output) and a checksum
 * of every estimate, so two runs can be compared byte for byte.
 *
 *   sketch_accuracy [-s SEEDS] [-o FILE]
 *
 * HLL: for precision_threshold 100, 3000 (default) and 40000 (maximum),
 * 1e3 .. 1e6 distinct values (longs through BitMixer.mix64, and IPv4-like
 * strings through MurmurHash3), SEEDS data sets each (default 10, fixed
 * seeds 1..SEEDS): mean and max of |estimate - n| / n.
 *
 * t-digest: compression 100, uniform [0, 1000), exponential (mean 250) and
 * log-normal (mu 4, sigma 1: latency-like) values, n = 1e3 (exact phase),
 * 1e5 and 1e6, fed to one digest and to 10 per-segment digests merged:
 * for q in the default percents of `percentiles` (1 5 25 50 75 95 99) plus
 * 0.1 and 99.9, the rank error |F(estimate) - q| (F = exact fraction of
 * values <= the estimate), max over q and mean over q, and the largest
 * relative value error |estimate - exact| / |exact| (exact = Dist.quantile
 * over all values).  One data set per row (seed 1).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggs/hll.h"
#include "sketch_util.h"
#include "aggs/tdigest.h"

#define DEFAULT_SEEDS 10
#define TD_COMPRESSION 100.0
#define TD_PARTS 10

static const uint32_t thresholds[] = {100, 3000, 40000};
static const size_t hll_sizes[] = {1000, 3000, 10000, 30000, 100000, 1000000};
static const size_t td_sizes[] = {1000, 100000, 1000000};
static const double td_q[] = {0.001, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 0.999};

static uint64_t checksum = 1469598103934665603ull; /* FNV-1a over estimates */
static void sum_in(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        checksum = (checksum ^ b[i]) * 1099511628211ull;
}

static double gen_uniform(void) { return sk_uniform01() * 1000.0; }
static double gen_exponential(void) { return -log(1.0 - sk_uniform01()) * 250.0; }
static double gen_lognormal(void)
{
    double u1 = 1.0 - sk_uniform01(), u2 = sk_uniform01();
    return exp(4.0 + sqrt(-2.0 * log(u1)) * cos(2 * M_PI * u2));
}

static double exact_quantile(const double *v, size_t n, double q)
{
    double index = q * (double)(n - 1);
    size_t lo = (size_t)floor(index);
    if (lo >= n - 1)
        return v[n - 1];
    return v[lo] + (index - (double)lo) * (v[lo + 1] - v[lo]);
}

static int hll_row(FILE *out, uint32_t threshold, size_t n, int strings, int seeds)
{
    double sum = 0, worst = 0;
    for (int s = 1; s <= seeds; s++) {
        fds_hll *h = fds_hll_create(threshold);
        if (!h)
            return -1;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = ((uint64_t)s << 40) | i;
            uint64_t hash;
            if (strings) {
                char buf[48];
                int len = snprintf(buf, sizeof buf, "%u.%u.%u.%u/%d", (unsigned)(v >> 24) & 255,
                                   (unsigned)(v >> 16) & 255, (unsigned)(v >> 8) & 255,
                                   (unsigned)v & 255, s);
                hash = fds_hll_hash_bytes(buf, (size_t)len);
            } else {
                hash = fds_hll_hash_long((int64_t)v);
            }
            if (fds_hll_add(h, hash))
                return -1;
        }
        uint64_t est = fds_hll_cardinality(h);
        sum_in(&est, sizeof est);
        double rel = fabs((double)est - (double)n) / (double)n;
        sum += rel;
        if (rel > worst)
            worst = rel;
        fds_hll_free(h);
    }
    fprintf(out, "| %u (p=%d) | %s | %zu | %.3f %% | %.3f %% |\n", threshold,
            fds_hll_precision_from_threshold(threshold), strings ? "strings" : "longs", n,
            100 * sum / seeds, 100 * worst);
    return 0;
}

/* Rank errors of one digest against the sorted values. */
static void td_errors(fds_tdigest *t, const double *v, size_t n, double *max_rank,
                      double *mean_rank, double *max_rel)
{
    double sum = 0;
    *max_rank = *max_rel = 0;
    for (size_t i = 0; i < sizeof td_q / sizeof td_q[0]; i++) {
        double est = fds_tdigest_quantile(t, td_q[i]);
        sum_in(&est, sizeof est);
        double rank = fabs(sk_frac_le(v, n, est) - td_q[i]);
        double exact = exact_quantile(v, n, td_q[i]);
        double rel = exact != 0 ? fabs(est - exact) / fabs(exact) : fabs(est);
        sum += rank;
        if (rank > *max_rank)
            *max_rank = rank;
        if (rel > *max_rel)
            *max_rel = rel;
    }
    *mean_rank = sum / (double)(sizeof td_q / sizeof td_q[0]);
}

static int td_row(FILE *out, const char *name, double (*gen)(void), size_t n)
{
    double *v = malloc(n * sizeof *v);
    fds_tdigest *one = fds_tdigest_create(TD_COMPRESSION);
    fds_tdigest *merged = fds_tdigest_create(TD_COMPRESSION);
    fds_tdigest *part[TD_PARTS];
    if (!v || !one || !merged)
        return -1;
    for (int p = 0; p < TD_PARTS; p++)
        if (!(part[p] = fds_tdigest_create(TD_COMPRESSION)))
            return -1;
    sk_rng_state = 1;
    for (size_t i = 0; i < n; i++) {
        v[i] = gen();
        if (fds_tdigest_add(one, v[i], 1) || fds_tdigest_add(part[i * TD_PARTS / n], v[i], 1))
            return -1;
    }
    for (int p = 0; p < TD_PARTS; p++)
        if (fds_tdigest_merge(merged, part[p]))
            return -1;
    qsort(v, n, sizeof *v, sk_cmp_double);
    double a_max, a_mean, a_rel, b_max, b_mean, b_rel;
    td_errors(one, v, n, &a_max, &a_mean, &a_rel);
    td_errors(merged, v, n, &b_max, &b_mean, &b_rel);
    fprintf(out, "| %s | %zu | %s | %.5f | %.5f | %.3f %% | %.5f | %.5f | %.3f %% |\n", name, n,
            fds_tdigest_is_exact(one) ? "exact" : "centroids", a_max, a_mean, 100 * a_rel,
            b_max, b_mean, 100 * b_rel);
    for (int p = 0; p < TD_PARTS; p++)
        fds_tdigest_free(part[p]);
    fds_tdigest_free(one);
    fds_tdigest_free(merged);
    free(v);
    return 0;
}

static void usage(void)
{
    fputs("usage: sketch_accuracy [-s SEEDS] [-o FILE]\n"
          "  Error of the cardinality (HLL++) and percentiles (t-digest) sketches\n"
          "  against exact answers, as Markdown tables; SEEDS data sets per HLL row\n"
          "  (default 10); -o writes the tables to FILE instead of stdout.\n",
          stderr);
}

int main(int argc, char **argv)
{
    int seeds = DEFAULT_SEEDS;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            seeds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            path = argv[++i];
        } else {
            usage();
            return 2;
        }
    }
    if (seeds < 1) {
        usage();
        return 2;
    }
    FILE *out = path ? fopen(path, "w") : stdout;
    if (!out) {
        perror(path);
        return 1;
    }
    fprintf(out, "cardinality (HLL++), relative error |estimate - n| / n over %d data sets:\n\n"
                 "| precision_threshold | values | distinct n | mean error | max error |\n"
                 "|---|---|---|---|---|\n", seeds);
    for (size_t t = 0; t < sizeof thresholds / sizeof thresholds[0]; t++)
        for (size_t i = 0; i < sizeof hll_sizes / sizeof hll_sizes[0]; i++)
            for (int strings = 0; strings <= (thresholds[t] == 3000); strings++)
                if (hll_row(out, thresholds[t], hll_sizes[i], strings, seeds))
                    return 1;
    fprintf(out, "\npercentiles (t-digest, compression %.0f), rank error |F(estimate) - q| over "
                 "q = 0.1 1 5 25 50 75 95 99 99.9 %%; one digest, and %d per-segment digests "
                 "merged:\n\n"
                 "| data | n | phase | max rank err | mean rank err | max value err "
                 "| merged: max rank err | mean rank err | max value err |\n"
                 "|---|---|---|---|---|---|---|---|---|\n", TD_COMPRESSION, TD_PARTS);
    struct { const char *name; double (*gen)(void); } dists[] = {
        {"uniform", gen_uniform}, {"exponential", gen_exponential}, {"log-normal", gen_lognormal}};
    for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++)
        for (size_t i = 0; i < sizeof td_sizes / sizeof td_sizes[0]; i++)
            if (td_row(out, dists[d].name, dists[d].gen, td_sizes[i]))
                return 1;
    fprintf(out, "\nchecksum of all estimates: %016llx\n", (unsigned long long)checksum);
    if (path)
        fclose(out);
    return 0;
}
