/*
 * tdigest.h: the quantile sketch behind the `percentiles` and
 * `percentile_ranks` aggregations, Elasticsearch 8's TDigestState with its
 * default implementation, HybridDigest (libs/tdigest: HybridDigest.java,
 * SortingDigest.java, MergingDigest.java, Dist.java, ScaleFunction.K_2).
 *
 * Algorithm: T. Dunning, O. Ertl, "Computing extremely accurate quantiles
 * using t-digests" (2019, arXiv:1902.04023), the merging variant.  As in
 * Elasticsearch 8.9+:
 *
 *   - While fewer than round(compression) * 20 values were added (2000 at
 *     the default 100), every value is kept (SortingDigest) and answers are
 *     exact: quantile(q) interpolates linearly between the sorted values at
 *     ranks floor(q (n-1)) and that + 1 (Dist.quantile), cdf(x) is
 *     Dist.cdf's mid-rank (values below x, plus half of those equal to x,
 *     plus a fraction interpolated towards the next value; see
 *     fds_tdigest_cdf).
 *   - At that size the values are replayed into a MergingDigest: incoming
 *     points are buffered (5 x (compression + 10) of them) and merged into
 *     sorted centroids under the K_2 scale function's size limit
 *     q (1 - q) n / normalizer, normalizer = c / (4 ln(n / c) + 24), with
 *     the working compression c = 2 x compression (Elasticsearch's
 *     "two-level compression") and alternating merge
 *     direction; the first and last centroids stay single points, so min
 *     and max are exact and tails are tighter than the middle.
 *
 * Memory: 8 bytes per value up to the switch (16 KiB at compression 100),
 * then fixed arrays for the centroids and the buffer of 5 x (compression +
 * 10) points (~ 23 KiB at 100).  At the switch the kept values are
 * replayed in sorted order (Elasticsearch replays them in insertion order
 * unless a query sorted them first), so the digest does not depend on the
 * order they came in; later points depend on it only as the merging
 * algorithm does.  Merging per-segment digests is how the framework
 * combines them: the result is the digest Elasticsearch's reduce builds
 * (exact while the total stays below the switch).
 * Not thread-safe.
 */
#ifndef FDS_TDIGEST_H
#define FDS_TDIGEST_H

#include <stdint.h>

typedef struct fds_tdigest fds_tdigest;

/* Elasticsearch's default and our accepted upper bound of `compression`. */
#define FDS_TDIGEST_DEFAULT_COMPRESSION 100.0
#define FDS_TDIGEST_MAX_COMPRESSION 1e5

/*
 * A new, empty digest.  `compression` in (0, FDS_TDIGEST_MAX_COMPRESSION]
 * (the aggregation's tdigest.compression; below 10 the merging phase uses
 * 10, as MergingDigest does).  Free with fds_tdigest_free().  NULL when out
 * of memory or compression is out of range or not a number.
 */
fds_tdigest *fds_tdigest_create(double compression);

/*
 * Add value `x` with `weight` occurrences (>= 1).  0, FDS_EINVAL for a
 * non-finite x or weight 0 (nothing added), FDS_ENOMEM (nothing added).
 */
int fds_tdigest_add(fds_tdigest *t, double x, uint64_t weight);

/*
 * Fold `src` into `dst` (src is not modified; compressions may differ, dst
 * keeps its own): src's kept values or centroids are added to dst as
 * weighted points, as Elasticsearch's reduce does.  0, FDS_EINVAL for NULL,
 * FDS_ENOMEM (dst may then hold part of src; counts and min/max are only
 * updated on success).
 */
int fds_tdigest_merge(fds_tdigest *dst, const fds_tdigest *src);

/* Total weight added. */
uint64_t fds_tdigest_count(const fds_tdigest *t);

/*
 * The value at quantile q in [0, 1] (percentile / 100); NaN when empty or q
 * is outside [0, 1] or NaN.  Not const: may sort the kept values or merge
 * buffered points first (the answer does not change by asking).
 */
double fds_tdigest_quantile(fds_tdigest *t, double q);

/*
 * The rank of x as a fraction in [0, 1] (percentile_ranks / 100), NaN when
 * empty or x is not finite.  Exact phase, n sorted values v: 0 below v[0];
 * otherwise (0.5 + #{i >= 1: v[i] < x} + f) / n where f = 0.5 x #{i >= 1:
 * v[i] == x} if any equal x, else the linear fraction of the way from the
 * last value below x to the next; 1 - 0.5 x #{v[i] == x} / n past the end
 * (Dist.cdf).  Merging phase: MergingDigest.cdf's interpolation between
 * centroids, singletons counted as points.  Not const, as quantile.
 */
double fds_tdigest_cdf(fds_tdigest *t, double x);

/* Smallest and largest value added; NaN when empty. */
double fds_tdigest_min(const fds_tdigest *t);
double fds_tdigest_max(const fds_tdigest *t);

/* Number of centroids (kept values in the exact phase), for tests. */
uint64_t fds_tdigest_centroids(fds_tdigest *t);

/* 1 while every value is kept (exact answers), 0 after the switch. */
int fds_tdigest_is_exact(const fds_tdigest *t);

/* Free a digest; NULL is a no-op. */
void fds_tdigest_free(fds_tdigest *t);

#endif
