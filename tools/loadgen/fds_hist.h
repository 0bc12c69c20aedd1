/*
 * fds_hist.h: a log-bucketed latency histogram in the style of HdrHistogram.
 *
 * Why it exists: the load generator must report p50 .. p99.99 and max of
 * millions of latencies without keeping every sample and without the
 * averaging that hides tail latency.  HdrHistogram (Gil Tene) does this with
 * buckets whose width grows with the value so that the relative error stays
 * below a fixed bound; this is a small fixed-precision version of that idea.
 *
 * Layout: values are unsigned 64-bit integers (the loadgen records
 * nanoseconds).  Values below FDS_HIST_SUB_BUCKETS (2048) have one bucket
 * each (exact).  A value v >= 2048 with e = floor(log2(v)) falls in "octave"
 * e and sub-bucket (v >> (e - 10)) - 1024, i.e. each octave [2^e, 2^(e+1)) is
 * split into 1024 equal buckets of width 2^(e-10).  The relative width of a
 * bucket is therefore at most 1/1024 < 0.1%, and a percentile reported as the
 * bucket midpoint is within 0.05% of the true sample value: 3 significant
 * decimal digits, as HdrHistogram's `significantFigures = 3`.
 *
 * Index of v:  v < 2048            -> v
 *              v >= 2048           -> 2048 + (e - 11) * 1024 + ((v >> (e-10)) - 1024)
 * Values above FDS_HIST_MAX_VALUE (2^40 - 1 ns, about 18 minutes) are clamped
 * into the last bucket; min, max, count and sum are kept exactly.
 */
#ifndef FDS_HIST_H
#define FDS_HIST_H

#include <stdint.h>

#define FDS_HIST_SUB_BITS 10                         /* 1024 buckets per octave */
#define FDS_HIST_SUB_BUCKETS (2u << FDS_HIST_SUB_BITS) /* 2048 exact low values */
#define FDS_HIST_MAX_EXP 39                          /* highest octave: [2^39, 2^40) */
#define FDS_HIST_MAX_VALUE ((UINT64_C(1) << (FDS_HIST_MAX_EXP + 1)) - 1)
#define FDS_HIST_NBUCKETS \
    (FDS_HIST_SUB_BUCKETS + (FDS_HIST_MAX_EXP - FDS_HIST_SUB_BITS) * (1u << FDS_HIST_SUB_BITS))

typedef struct fds_hist fds_hist;

/* A new empty histogram (about 240 KiB); NULL if out of memory.  Free with
 * fds_hist_free(). */
fds_hist *fds_hist_create(void);

/* Free; NULL is a no-op. */
void fds_hist_free(fds_hist *h);

/* Forget every recorded value. */
void fds_hist_reset(fds_hist *h);

/* Record one value (any unit; loadgen uses nanoseconds).  Never fails:
 * values above FDS_HIST_MAX_VALUE count in the last bucket, with the exact
 * value still kept as max. */
void fds_hist_record(fds_hist *h, uint64_t v);

/* Add every count of `src` into `dst` (per-thread histograms are merged
 * into one at the end of a run). */
void fds_hist_merge(fds_hist *dst, const fds_hist *src);

/* Number of recorded values. */
uint64_t fds_hist_count(const fds_hist *h);

/* Exact smallest / largest recorded value; 0 when empty. */
uint64_t fds_hist_min(const fds_hist *h);
uint64_t fds_hist_max(const fds_hist *h);

/* Exact arithmetic mean of the recorded values; 0 when empty. */
double fds_hist_mean(const fds_hist *h);

/*
 * The value at percentile `p` (0 < p <= 100): the smallest recorded value v
 * such that at least p% of the values are <= v (the "nearest rank" method),
 * reported as the midpoint of its bucket, clamped to [min, max].  p >= 100
 * returns the exact max.  0 when empty.
 */
double fds_hist_percentile(const fds_hist *h, double p);

/* Bucket index of a value and the inclusive range [lo, hi] of a bucket; for
 * tests and for anyone checking the layout above. */
uint32_t fds_hist_index(uint64_t v);
void fds_hist_bucket_range(uint32_t idx, uint64_t *lo, uint64_t *hi);

#endif
