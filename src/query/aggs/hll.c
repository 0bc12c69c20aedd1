/*
 * hll.c: HyperLogLog++ as Elasticsearch's HyperLogLogPlusPlus (see hll.h
 * for the algorithm, its sources and the two phases).
 *
 * Layout of one sketch: while counting exactly, `lc` is an open-addressing
 * table of the 64-bit hashes (0 = empty slot; the hash 0 is a flag), grown
 * by doubling up to 2^p / 4 slots; from the switch on, `lc` is freed and
 * `reg` holds the 2^p registers (one byte each: the longest run of leading
 * zeros seen, plus one).  Replaying the hashes gives the registers feeding
 * them directly would, so a merged sketch equals the sketch of the union
 * whatever phase each part was in.
 */
#include "aggs/hll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <murmurhash.h>

#include "fds_error.h"
#include "aggs/hll_int.h"

/* Load factor of Elasticsearch's linear-counting table
 * (HyperLogLogPlusPlus.MAX_LOAD_FACTOR); the exact phase holds at most
 * (2^p / 4) * 0.75 hashes. */
#define HLL_LC_LOAD_NUM 3
#define HLL_LC_LOAD_DEN 4
/* Slots a fresh table starts with (grown by doubling). */
#define HLL_LC_INITIAL_SLOTS 16u
/* Neighbours interpolated in the bias tables (AbstractHyperLogLog.BIAS_K). */
#define HLL_BIAS_K 6
/* The bias correction applies to raw estimates up to this many times m. */
#define HLL_BIAS_RANGE 5

struct fds_hll {
    int p;
    uint32_t m;             /* 2^p registers */
    uint32_t lc_max_slots;  /* 2^p / 4 */
    uint32_t lc_threshold;  /* most hashes the exact phase holds */
    uint64_t *lc;           /* exact phase: slots (0 = empty), NULL after */
    uint32_t lc_slots;
    uint32_t lc_size;       /* distinct hashes, the hash 0 included */
    int lc_zero;            /* the hash 0 was added (it cannot sit in a slot) */
    uint8_t *reg;           /* register phase, NULL before */
};

static int clz64(uint64_t x) { return x ? __builtin_clzll(x) : 64; }

/* Math.round of a non-negative double, as Java rounds (half up). */
static uint64_t java_round(double x)
{
    return x <= 0 ? 0 : (uint64_t)floor(x + 0.5);
}

/* AbstractCardinalityAlgorithm.linearCounting: m ln(m / v). */
static uint64_t linear_counting(uint64_t m, uint64_t v)
{
    return java_round((double)m * log((double)m / (double)v));
}

int fds_hll_precision_from_threshold(uint32_t t)
{
    /* ceil(count / MAX_LOAD_FACTOR) table entries of Integer.BYTES each;
     * PackedInts.bitsRequired of that byte count. */
    uint64_t entries = ((uint64_t)t * HLL_LC_LOAD_DEN + HLL_LC_LOAD_NUM - 1) / HLL_LC_LOAD_NUM;
    uint64_t bytes = entries * 4;
    int p = bytes ? 64 - clz64(bytes) : 1;
    if (p < FDS_HLL_MIN_PRECISION)
        p = FDS_HLL_MIN_PRECISION;
    if (p > FDS_HLL_MAX_PRECISION)
        p = FDS_HLL_MAX_PRECISION;
    return p;
}

fds_hll *fds_hll_create(uint32_t precision_threshold)
{
    fds_hll *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->p = fds_hll_precision_from_threshold(precision_threshold);
    h->m = 1u << h->p;
    h->lc_max_slots = h->m / 4;
    h->lc_threshold = h->lc_max_slots * HLL_LC_LOAD_NUM / HLL_LC_LOAD_DEN;
    h->lc_slots = h->lc_max_slots < HLL_LC_INITIAL_SLOTS ? h->lc_max_slots
                                                         : HLL_LC_INITIAL_SLOTS;
    h->lc = calloc(h->lc_slots, sizeof *h->lc);
    if (!h->lc) {
        free(h);
        return NULL;
    }
    return h;
}

void fds_hll_free(fds_hll *h)
{
    if (!h)
        return;
    free(h->lc);
    free(h->reg);
    free(h);
}

int fds_hll_precision(const fds_hll *h) { return h->p; }
int fds_hll_is_registers(const fds_hll *h) { return h->reg != NULL; }

static void reg_max(fds_hll *h, uint32_t index, int run)
{
    if (h->reg[index] < run)
        h->reg[index] = (uint8_t)run;
}

/* AbstractHyperLogLog.collect: index = top p bits, run = 1 + leading zeros
 * of the rest (at most 64 - p).  The same registers as Elasticsearch's
 * replay of its 32-bit encoded hashes (decodeIndex / decodeRunLen). */
static void reg_collect(fds_hll *h, uint64_t hash)
{
    int run = clz64(hash << h->p);
    if (run > 64 - h->p)
        run = 64 - h->p;
    reg_max(h, (uint32_t)(hash >> (64 - h->p)), 1 + run);
}

/* Home slot of a hash (its top bits are already uniform). */
static uint32_t lc_home(uint64_t hash, uint32_t slots)
{
    return (uint32_t)(hash >> 32) & (slots - 1);
}

/* Insert a non-zero hash into a table known to have a free slot; 1 if new. */
static int lc_insert(uint64_t *tab, uint32_t slots, uint64_t hash)
{
    uint32_t i = lc_home(hash, slots);
    while (tab[i]) {
        if (tab[i] == hash)
            return 0;
        i = (i + 1) & (slots - 1);
    }
    tab[i] = hash;
    return 1;
}

static int lc_grow(fds_hll *h)
{
    uint32_t slots = h->lc_slots * 2;
    uint64_t *tab = calloc(slots, sizeof *tab);
    if (!tab)
        return FDS_ENOMEM;
    for (uint32_t i = 0; i < h->lc_slots; i++)
        if (h->lc[i])
            lc_insert(tab, slots, h->lc[i]);
    free(h->lc);
    h->lc = tab;
    h->lc_slots = slots;
    return 0;
}

/* Replay the exact phase into fresh registers. */
static int to_registers(fds_hll *h)
{
    if (h->reg)
        return 0;
    h->reg = calloc(h->m, 1);
    if (!h->reg)
        return FDS_ENOMEM;
    for (uint32_t i = 0; i < h->lc_slots; i++)
        if (h->lc[i])
            reg_collect(h, h->lc[i]);
    if (h->lc_zero)
        reg_collect(h, 0);
    free(h->lc);
    h->lc = NULL;
    h->lc_slots = h->lc_size = 0;
    h->lc_zero = 0;
    return 0;
}

int fds_hll_add(fds_hll *h, uint64_t hash)
{
    if (h->reg) {
        reg_collect(h, hash);
        return 0;
    }
    if (hash == 0) {
        h->lc_size += !h->lc_zero;
        h->lc_zero = 1;
    } else {
        if (h->lc_size >= h->lc_slots * HLL_LC_LOAD_NUM / HLL_LC_LOAD_DEN &&
            h->lc_slots < h->lc_max_slots) {
            int rc = lc_grow(h);
            if (rc)
                return rc;
        }
        h->lc_size += lc_insert(h->lc, h->lc_slots, hash);
    }
    if (h->lc_size > h->lc_threshold)
        return to_registers(h);
    return 0;
}

int fds_hll_merge(fds_hll *dst, const fds_hll *src)
{
    if (!dst || !src || dst->p != src->p)
        return FDS_EINVAL;
    if (src->reg) {
        int rc = to_registers(dst);
        if (rc)
            return rc;
        for (uint32_t i = 0; i < dst->m; i++)
            reg_max(dst, i, src->reg[i]);
        return 0;
    }
    int rc = src->lc_zero ? fds_hll_add(dst, 0) : 0;
    for (uint32_t i = 0; !rc && i < src->lc_slots; i++)
        if (src->lc[i])
            rc = fds_hll_add(dst, src->lc[i]);
    return rc;
}

/*
 * AbstractHyperLogLog.estimateBias, kept as Elasticsearch computes it: walk
 * the raw estimates while they get closer to `e`, remembering the inverse
 * distances of the last BIAS_K in a ring, then average the bias of the
 * BIAS_K entries before the first one that got farther.  (The ring slot i
 * is paired with entry index + i, not with the entry it was computed for,
 * unless index is a multiple of BIAS_K; reproduced, so estimates match.)
 */
static double estimate_bias(int p, double e)
{
    const double *raw = fds__hll_raw_estimate[p - FDS_HLL_MIN_PRECISION];
    const double *bias = fds__hll_bias[p - FDS_HLL_MIN_PRECISION];
    size_t n = fds__hll_bias_len[p - FDS_HLL_MIN_PRECISION];
    double weights[HLL_BIAS_K] = {0};
    size_t index = n - HLL_BIAS_K;
    for (size_t i = 0; i < n; i++) {
        double w = 1.0 / fabs(raw[i] - e);
        size_t j = i % HLL_BIAS_K;
        if (isinf(w))
            return bias[i];
        if (weights[j] >= w) {
            /* i >= BIAS_K here: earlier slots still hold 0 < w. */
            index = i - HLL_BIAS_K;
            break;
        }
        weights[j] = w;
    }
    double wsum = 0, bsum = 0;
    for (size_t i = 0; i < HLL_BIAS_K; i++) {
        bsum += weights[i] * bias[index + i];
        wsum += weights[i];
    }
    return bsum / wsum;
}

uint64_t fds_hll_cardinality(const fds_hll *h)
{
    if (!h->reg)
        return h->lc_size; /* exact (see hll.h on Elasticsearch's 25 bits) */
    double inverse_sum = 0;
    uint64_t zeros = 0;
    for (uint32_t i = 0; i < h->m; i++) {
        inverse_sum += ldexp(1.0, -(int)h->reg[i]);
        zeros += h->reg[i] == 0;
    }
    /* AbstractHyperLogLog's alpha_m (Flajolet et al. 2007). */
    double m = h->m;
    double alpha = h->p == 4 ? 0.673 : h->p == 5 ? 0.697 : 0.7213 / (1 + 1.079 / m);
    double e1 = alpha * m * m / inverse_sum;
    double e2 = e1 <= HLL_BIAS_RANGE * m ? e1 - estimate_bias(h->p, e1) : e1;
    uint64_t est = zeros ? linear_counting(h->m, zeros) : java_round(e2);
    if (est <= fds__hll_lc_threshold[h->p - FDS_HLL_MIN_PRECISION])
        return est;
    return java_round(e2);
}

uint64_t fds_hll_hash_bytes(const void *p, size_t n)
{
    uint64_t out[2];
    lmmh_x64_128(n ? p : "", (unsigned int)n, 0, out);
    return out[0];
}

/* HPPC BitMixer.mix64 (Elasticsearch's hash of numeric doc values). */
uint64_t fds_hll_hash_long(int64_t v)
{
    uint64_t z = (uint64_t)v;
    z = (z ^ (z >> 32)) * 0x4cd6944c5cc20b6dull;
    z = (z ^ (z >> 29)) * 0xfc12c5b19d3259e9ull;
    return z ^ (z >> 32);
}

uint64_t fds_hll_hash_double(double v)
{
    uint64_t bits;
    if (isnan(v))
        bits = 0x7ff8000000000000ull; /* Double.doubleToLongBits */
    else
        memcpy(&bits, &v, sizeof bits);
    return fds_hll_hash_long((int64_t)bits);
}
