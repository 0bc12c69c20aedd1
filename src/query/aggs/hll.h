/*
 * hll.h: the distinct-value sketch behind the `cardinality` aggregation,
 * Elasticsearch's HyperLogLogPlusPlus (server/.../aggregations/metrics/
 * HyperLogLogPlusPlus.java, AbstractHyperLogLog.java,
 * AbstractLinearCounting.java), one sketch per handle.
 *
 * Algorithm: HyperLogLog++ -- S. Heule, M. Nunkesser, A. Hall, "HyperLogLog
 * in Practice: Algorithmic Engineering of a State of The Art Cardinality
 * Estimation Algorithm", EDBT 2013 (Google), on top of P. Flajolet, E. Fusy,
 * O. Gandouet, F. Meunier, "HyperLogLog: the analysis of a near-optimal
 * cardinality estimation algorithm", AofA 2007.  Two phases, as in
 * Elasticsearch:
 *
 *   1. exact: a hash set of the 64-bit hashes, whose size is the answer
 *      (Elasticsearch's "linear counting" phase: it keeps each hash encoded
 *      on 32 bits, AbstractLinearCounting.encodeHash, and reports
 *      m' ln(m' / (m' - k)) for k distinct encodings, m' = 2^25, which
 *      corrects on average for the 25-bit prefixes that collide -- n^2 /
 *      2^26 pairs expected, 0.13 at n = 3000 -- but can be off by one or
 *      two on a given set; keeping the whole hash we count exactly).
 *   2. once the set would hold more than 3/16 of 2^p hashes (Elasticsearch:
 *      a table of 2^p / 4 slots at load factor 0.75; 3072 at p = 14), they
 *      are replayed into 2^p one-byte registers, and the estimate is HLL's
 *      harmonic mean with the paper's empirical bias correction (appendix
 *      tables, `hll_bias.c`) below 5 m, and linear counting over the empty
 *      registers below the paper's per-precision thresholds -- exactly
 *      Elasticsearch's registers and estimate.
 *
 * The precision p (4..18) comes from precision_threshold exactly as
 * HyperLogLogPlusPlus.precisionFromThreshold: p = bits needed for
 * ceil(threshold / 0.75) * 4, clamped to [4, 18] (so 3000 -> 14, and any
 * threshold above 40000 behaves as 40000 -> 18, as Elasticsearch documents).
 * Memory: the exact phase's table grows to 2^p / 4 eight-byte slots, the
 * registers take 2^p bytes (16 KiB at p = 14, either phase).
 *
 * Sketches of the same precision merge losslessly (a merged sketch equals
 * the sketch of the union of the inputs), whatever phase each is in.
 * Not thread-safe; one sketch per thread, merged afterwards.
 */
#ifndef FDS_HLL_H
#define FDS_HLL_H

#include <stddef.h>
#include <stdint.h>

typedef struct fds_hll fds_hll;

/* Elasticsearch's precision_threshold default and documented maximum. */
#define FDS_HLL_DEFAULT_THRESHOLD 3000u
#define FDS_HLL_MAX_THRESHOLD 40000u
/* Register precision range (AbstractCardinalityAlgorithm.MIN/MAX_PRECISION). */
#define FDS_HLL_MIN_PRECISION 4
#define FDS_HLL_MAX_PRECISION 18

/*
 * A new, empty sketch for `precision_threshold` (the aggregation parameter;
 * any value is accepted, see the precision rule above).  The caller frees it
 * with fds_hll_free().  NULL when out of memory.
 */
fds_hll *fds_hll_create(uint32_t precision_threshold);

/*
 * Count one value given by its 64-bit hash (fds_hll_hash_*).  Adding the
 * same hash again changes nothing.  0, or FDS_ENOMEM (the sketch stays
 * valid: either the hash was not added, or it was and the sketch still
 * counts exactly; adding it again is harmless).
 */
int fds_hll_add(fds_hll *h, uint64_t hash);

/*
 * Fold `src` into `dst` (src is not modified).  Both must have the same
 * precision (sketches created with the same threshold always do).  0,
 * FDS_EINVAL for different precisions or NULL, FDS_ENOMEM (dst then holds
 * part of src: still a valid sketch of a subset of the union, and merging
 * src again completes it).
 */
int fds_hll_merge(fds_hll *dst, const fds_hll *src);

/* The estimated number of distinct hashes added (0 for an empty sketch). */
uint64_t fds_hll_cardinality(const fds_hll *h);

/* The register precision p chosen for the sketch's threshold. */
int fds_hll_precision(const fds_hll *h);

/* 1 once the sketch counts with registers, 0 while it is exact. */
int fds_hll_is_registers(const fds_hll *h);

/* The precision Elasticsearch derives from a threshold (see above). */
int fds_hll_precision_from_threshold(uint32_t precision_threshold);

/* Free a sketch; NULL is a no-op. */
void fds_hll_free(fds_hll *h);

/*
 * The hashes Elasticsearch feeds the sketch.  Strings and keywords: the low
 * 64 bits (h1) of MurmurHash3 x64_128, seed 0, of the value's bytes
 * (MurmurHash3.hash128 of the BytesRef); `n` must be below 4 GiB.
 * Integers and dates: BitMixer.mix64 of the long (HPPC's variant 9 of
 * Stafford's mixers).  Doubles: mix64 of Double.doubleToLongBits (every NaN
 * hashes as the canonical 0x7ff8000000000000; -0.0 and 0.0 differ).
 */
uint64_t fds_hll_hash_bytes(const void *p, size_t n);
uint64_t fds_hll_hash_long(int64_t v);
uint64_t fds_hll_hash_double(double v);

#endif
