/*
 * aggs_int.h: what the files of src/query/aggs share (nothing else
 * includes it): the per-aggregation run state (fds__anode, Elasticsearch's
 * bucket-ordinal design), the collector's state, and the hot helpers of
 * collection, static inline so that every collector loop keeps them in
 * line.
 *
 * Collection follows Elasticsearch's bucket-ordinal design
 * (LeafBucketCollector.collect(doc, owningBucketOrd)): each bucket
 * aggregation gives every bucket it opens an ordinal; its sub-aggregations
 * keep their state in arrays indexed by that ordinal.  A bucket is found by
 * (owning ordinal, key) in an open-addressing table (table.c); keys are the
 * value itself (long, date, double bits, histogram key) or, for keyword
 * terms, the id of the term string interned by the aggregation, reached
 * from a segment's ordinal through a per-segment cache -- so buckets of all
 * segments of a shard meet by value.  The search hands the matching docs
 * over in batches of FDS__COLLECT_BATCH (collect.c); each aggregation runs
 * over a batch in a tight loop (buckets.c, metrics.c) and passes the docs
 * that reached a bucket, with the bucket, to its subs.  State is bounded by
 * (matching docs x aggregations); the answer's buckets by
 * FDS_AGG_MAX_BUCKETS.
 */
#ifndef FDS_AGGS_INT_H
#define FDS_AGGS_INT_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggs/agg_kind.h"
#include "aggs/aggs.h"
#include "aggs/hll.h"
#include "aggs/tdigest.h"
#include "exec/collector.h"
#include "exec/filter_match.h"
#include "exec/search_int.h"

/* Entries of a terms aggregation's dense (owner, slot) table: 4 MiB. */
#define FDS__AGG_DENSE_MAX (1u << 20)

/* Widest packed integer column whose values are dense slots. */
#define FDS__AGG_SLOT_BITS 16u

/* A flat terms of one owner at a time counts into this many interleaved
 * tables, doc i into table i % FLAT_LANES: on log data one key holds most
 * docs (status 200 in 9 of 10 lines), and one table would chain every
 * increment on the store before it.  For tables of at most
 * FLAT_LANES_MAX_SLOTS slots (16 KiB of lanes). */
#define FLAT_LANES 4u
#define FLAT_LANES_MAX_SLOTS 1024u

/* Bytes of a composite key tuple: one 8-byte value per source. */
#define FDS__AGG_CK_BYTES 8u

typedef struct fds__bslot {
    uint64_t key;
    uint32_t owner;
    uint32_t ord; /* UINT32_MAX: empty */
} fds__bslot;

typedef struct fds__bmap {
    fds__bslot *s;
    size_t cap, n; /* cap a power of two */
} fds__bmap;

static inline uint64_t fds__bmap_mix(uint64_t k, uint32_t o)
{
    uint64_t h = (k ^ ((uint64_t)o << 32 | o)) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* Entries of a keyword terms' dense table over global ordinals for its
 * first owners (a top-level terms: one row of all the field's terms):
 * 128 MiB. */
#define FDS__AGG_GORD_DENSE_MAX (1u << 25)

/* A cardinality's bitsets of ordinals (one per owner, OrdinalsCollector):
 * most bytes for all owners of a segment, 32 MiB; owners past it hash
 * each value. */
#define FDS__AGG_ORDBITS_MAX (32u << 20)

/* Global ordinals of a keyword field over a search's segments (ordmap.c,
 * Lucene's OrdinalMap): the distinct terms of all segments numbered in
 * byte order.  seg2g NULL: the identity (one segment `only` holds the
 * field's terms). */
typedef struct fds__ordmap {
    unsigned nseg;
    const fds_sfield **f;  /* per segment: the field, NULL without terms */
    uint32_t **seg2g;      /* per segment: ordinal -> global ordinal */
    uint32_t *g_seg, *g_ord; /* per global ordinal: a holder of the term */
    uint32_t nglobal;
    unsigned only;
} fds__ordmap;

/* Terms of all segments a search merges into global ordinals at most
 * when it has no reader cache (the map is then made per search, so its
 * cost must stay below a small aggregation's; a wider field with terms in
 * several segments keeps the per-segment path), and with one (the map is
 * made once per refresh or merge and kept: at most 2^25 terms, ~400 MiB
 * of merge state less what the cache's byte budget refuses). */
#define FDS__AGG_GORD_MERGE_MAX (1u << 16)
#define FDS__AGG_GORD_CACHED_MAX (1u << 25)

/* The map of keyword field `field` over x's segments into *out: from the
 * segments' reader cache (made there on first use; *owned false, the
 * cache's, read-only) or made for this search (*owned true: the caller
 * frees it with fds__ordmap_free).  *out NULL when several segments hold
 * terms, more than the limit above in all.  0 or FDS_ENOMEM. */
int fds__ordmap_get(const fds__exec *x, const char *field, fds__ordmap **out,
                    bool *owned);
/* The term of global ordinal g (g < nglobal); its bytes stay the
 * segment's. */
const char *fds__ordmap_term(const fds__ordmap *m, uint32_t g, uint32_t *len);
void fds__ordmap_free(fds__ordmap *m);

/* The term hashes of keyword field f of segment seg (nterms entries, 0:
 * not computed yet) into *out, from seg's reader cache (*owned false:
 * shared, written only by fds__aggs_ord_hash) or for this search (*owned
 * true: free() it).  0 or FDS_ENOMEM. */
int fds__aggs_term_hashes(const fds_search_segment *seg, const char *field,
                          const fds_sfield *f, _Atomic uint64_t **out,
                          bool *owned);

/* Blocks of zeros kept between searches (zpool.c): at most
 * FDS__ZPOOL_BLOCKS of them, FDS__ZPOOL_BYTES in all. */
#define FDS__ZPOOL_BLOCKS 8u
#define FDS__ZPOOL_BYTES (64u << 20)
/* `bytes` zero bytes: a kept block of that size, or calloc'd; NULL out
 * of memory.  The caller gives it back (fds__zpool_give) only all zero,
 * else free()s it. */
void *fds__zpool_take(size_t bytes);
/* Block p of `bytes` bytes, all zero, kept for a later take (or freed
 * when the pool is full).  NULL is a no-op. */
void fds__zpool_give(void *p, size_t bytes);

/* A fused terms' state of one slot: its docs and the sum of its
 * metric's exact integer values; min and max apart (fds__mmm), kept only
 * for a metric that answers them. */
typedef struct fds__macc {
    uint64_t n;
    int64_t sum;
} fds__macc;

typedef struct fds__mmm {
    int64_t min, max; /* unset while the slot's n is 0 */
} fds__mmm;

/* Bytes a fused terms' slot states may take: 128 MiB. */
#define FDS__AGG_MACC_MAX (128u << 20)

typedef struct fds__anode {
    const fds_agg *a;
    struct fds__anode **kids;
    struct fds__anode **srcn;    /* composite: one node per source */
    /* buckets: ordinal -> owner, key, count */
    fds__bmap map;
    uint32_t nb, bcap;
    uint32_t *b_owner;
    uint64_t *b_key, *b_count;
    /* keyword terms: interned strings (key = id) */
    char *arena;
    size_t alen, acap;
    uint64_t *soff; /* offset << 24 | len would cap lengths; two arrays */
    uint32_t *slen;
    uint32_t ns, scap;
    fds__bmap smap;      /* (hash, 0) -> string id */
    /* metrics, by owner */
    uint32_t mcap;
    uint64_t *m_count;
    double *m_sum, *m_sumc, *m_sq, *m_sqc, *m_min, *m_max;
    fds_hll **m_hll;       /* cardinality */
    fds_tdigest **m_td;    /* percentiles, percentile_ranks */
    /* cardinality of a keyword: the hash of each ordinal of the segment's
     * field (0: not computed yet), filled as ordinals turn up; the reader
     * cache's, shared by the searches of the segment set (ordhash_owned
     * false), or this search's */
    _Atomic uint64_t *ordhash;
    bool ordhash_owned;
    /* keyword terms by global ordinals (no `missing`, include, exclude):
     * keys, slots and the dense table are global ordinals of gm for the
     * whole search; a flat one folds its counts once, at the end */
    fds__ordmap *gm;
    bool gm_owned;          /* gm is this search's, not the reader cache's */
    bool is_src;            /* a composite's source (read by the composite) */
    bool no_gord;           /* the field's map would be too wide to merge */
    bool top;               /* a top-level aggregation (owner 0 only) */
    /* a top-level terms of many slots (sparse) lists the slots it counts
     * in (flat counts or fused states) as they turn non-zero, so that its
     * fold visits those and not every term of the index: a small window's
     * cost follows the window */
    bool sparse, touched_over; /* over: too many listed, fold scans */
    uint32_t *touched;
    size_t ntouched, touched_cap;
    /* fused: a top-level terms over slots whose one sub is a sum, avg,
     * min, max or stats of an exact integer column every doc has: per
     * slot (FLAT_LANES interleaved tables of them when few) the docs and
     * the metric's state, folded into buckets and the metric's arrays at
     * the segment's end (fds__aggs_fused_fold) -- no bucket per doc */
    bool fused;
    fds__macc *macc;
    bool macc_clean; /* every state of macc is zero (a fold cleared them) */
    fds__mmm *mmm; /* NULL: sum and avg only */
    uint32_t macc_lanes, macc_slots;
    /* by global ordinals the slot states hold over segments: folded at
     * the last one (or when a segment cannot fuse) */
    bool macc_held;
    /* docs of the slots a top-level terms by global ordinals left without
     * a bucket at its last fold (sum_other_doc_count of owner 0) */
    uint64_t fold_other;
    const uint32_t *seg2g;  /* this segment's ordinal -> global (NULL: same) */
    uint32_t dense_max;     /* entries the dense table may hold */
    /* cardinality of a keyword: per owner a bitset of the segment's
     * ordinals (NULL: none yet), hashed into the sketch at its end */
    uint64_t **obits;
    uint32_t nobits, obits_live; /* owners with room; bitsets made */
    /* the current segment */
    const fds_sfield *f;
    uint32_t *ordmap;       /* segment ordinal -> string id + 1 (0: not yet) */
    uint32_t missing_sid;   /* id of the keyword `missing` value + 1 */
    fds__filter **flt;      /* filter(s): their queries (filter_match.h) */
    fds__exec *x;                /* the search (filters' iterators) */
    const fds__cnode *query;     /* top_hits: the search's query (explain) */
    const fds_sidx *sx;     /* the current segment */
    /* date_histogram: the last key's interval [dk_lo, dk_hi) */
    int64_t dk_lo, dk_hi;
    bool dk_valid;
    /* date_histogram of fixed-length intervals without a named zone: keys
     * of this segment as slots (key - dk_min) / dk_len of the dense
     * table (nslots of them; 0: none), for docs not in time order */
    int64_t dk_min, dk_len;
    /* the bucket of the last lookup (UINT32_MAX: none) */
    uint32_t last_owner, last_ord;
    uint64_t last_key;
    /* terms: dense owner x slot -> bucket + 1 table for this segment
     * (nslots 0: none); UINT32_MAX marks a slot include/exclude drops */
    uint32_t *dense;
    uint32_t nslots, dense_owners;
    /* the dense table holds doc counts, not buckets: a terms with no subs
     * and no `missing` counts (owner, slot) pairs and opens the buckets at
     * the segment's end (fds__aggs_flat_fold) */
    bool flat;
    /* a flat terms' counts of one owner (lane_owner; UINT32_MAX: none) in
     * FLAT_LANES interleaved tables of nslots (NULL: not used), added into
     * the dense table by lanes_flush */
    uint32_t *lanes, lane_owner;
    bool allp;      /* every doc of the segment has a value of f */
    /* f is an integer column whose sums over all docs of the search stay
     * below 2^53: every sum is exact, in any order */
    bool int_exact;
    /* a batch's docs that reached a bucket, and the bucket */
    uint32_t *bdoc, *bown;
    /* top_hits: a heap of the best from + size hits per owner (m_count
     * counts the docs, th_max the best score), the segment's field of each
     * sort key, the docs of earlier segments (_doc sort values) */
    fds__heap *th_heap;
    float *th_max;
    /* top_hits of one doc by one integer sort key (th_fast): per owner the
     * best value of the segment so far and its doc (UINT32_MAX: none),
     * offered to the heap at the segment's end */
    int64_t *th_bv;
    uint32_t *th_bd;
    uint32_t thcap;
    const fds_sfield *th_sf[FDS_SORT_VALUES_MAX];
    uint64_t docbase;
    unsigned si;
    /* the result being built: owners' first bucket (after grouping) */
    uint32_t *grp_start, *grp_ord;
    uint32_t ngrp;
    /* terms with min_doc_count 0: the keys of every doc of the segments
     * seen, matching or not, sorted and unique, opened with count 0 under
     * every owner when the result is built (fds__aggs_zero_fill) */
    uint64_t *zkeys;
    size_t nzk, zkcap;
} fds__anode;

struct fds__aggs_run {
    fds__collector c;   /* first: execution appends docs to its batch */
    /* the batch being collected (batch_score looks scores up in it) */
    const uint32_t *bdoc;
    const float *bscore;
    size_t bn;
    const fds_agg *root;
    const fds__cnode *query; /* the search's, for top_hits' explanations */
    fds__anode *top;
    fds__exec *x;
    int rc;
    fds_err *err;
};

/* ---- the bucket table and the node's state (table.c) ---------------------- */

/* The bucket of (owner, key), opened if new; UINT32_MAX on ENOMEM. */
uint32_t fds__aggs_bucket_open(fds__anode *n, uint32_t owner, uint64_t key);
/* A new bucket of (owner, key) that the table does not hold (found again
 * through a dense table only); UINT32_MAX on ENOMEM. */
uint32_t fds__aggs_bucket_append(fds__anode *n, uint32_t owner, uint64_t key);
/* Look a bucket up without opening it; UINT32_MAX when absent. */
uint32_t fds__aggs_bucket_find(const fds__anode *n, uint32_t owner,
                               uint64_t key);
/* The id of string s in n's table, interned if new; UINT32_MAX on ENOMEM. */
uint32_t fds__aggs_intern(fds__anode *n, const char *s, size_t len);
/* The string id of ordinal o of the segment's field, interned on first
 * sight; UINT32_MAX on ENOMEM. */
uint32_t fds__aggs_ord_id(fds__anode *n, uint32_t o);
/* The key and count of bucket ordinal b into *bk without copying (a
 * keyword's key_s points into n's strings or a segment's dictionary). */
void fds__aggs_bucket_peek(const fds__anode *n, uint32_t b, fds_agg_bucket *bk);
/* Metric arrays hold `owner`.  0 or FDS_ENOMEM. */
int fds__aggs_metric_room(fds__anode *n, uint32_t owner);

/* ---- date_histogram and histogram keys (dates.c) ------------------------- */

/* A date_histogram's key of value v (epoch ms). */
int64_t fds__aggs_date_key(const fds_agg *a, int64_t v);
/* The key after `key`. */
int64_t fds__aggs_date_next(const fds_agg *a, int64_t key);
/* The fixed length of a's intervals in ms (fixed_interval, or a calendar
 * unit up to a week); 0 for months and longer. */
int64_t fds__aggs_date_len(const fds_agg *a);
/* A histogram's key of value v. */
double fds__aggs_histo_key(const fds_agg *a, double v);

/* ---- collection by type (buckets.c, metrics.c: registry entries) ---------- */

/* min_doc_count 0 of a terms (Elasticsearch's
 * TermsAggregator collectZeroDocEntriesIfNeeded): the keys of every doc of
 * n's current segment added to n->zkeys, include/exclude applied (0 or
 * FDS_ENOMEM); then, before the result is built, every key opened with
 * count 0 under each of the owners of every such terms in the tree below
 * n (n's kids have `nowners` owners; 0 or FDS_ENOMEM). */
int fds__aggs_zero_keys(fds__anode *n);
int fds__aggs_zero_fill(fds__anode *n, uint32_t nowners);

void fds__aggs_collect_terms(fds__aggs_run *r, fds__anode *n,
                             const uint32_t *docs, const uint32_t *own,
                             size_t cnt);
void fds__aggs_collect_single(fds__aggs_run *r, fds__anode *n,
                              const uint32_t *docs, const uint32_t *own,
                              size_t cnt);
void fds__aggs_collect_multi(fds__aggs_run *r, fds__anode *n,
                             const uint32_t *docs, const uint32_t *own,
                             size_t cnt);
void fds__aggs_collect_composite(fds__aggs_run *r, fds__anode *n,
                                 const uint32_t *docs, const uint32_t *own,
                                 size_t cnt);
void fds__aggs_collect_cardinality(fds__aggs_run *r, fds__anode *n,
                                   const uint32_t *docs, const uint32_t *own,
                                   size_t cnt);
void fds__aggs_collect_percentiles(fds__aggs_run *r, fds__anode *n,
                                   const uint32_t *docs, const uint32_t *own,
                                   size_t cnt);
/* pipelines: nothing to collect (their values come at the final reduce) */
void fds__aggs_collect_none(fds__aggs_run *r, fds__anode *n,
                            const uint32_t *docs, const uint32_t *own,
                            size_t cnt);
void fds__aggs_collect_top_hits(fds__aggs_run *r, fds__anode *n,
                                const uint32_t *docs, const uint32_t *own,
                                size_t cnt);
void fds__aggs_collect_value_count(fds__aggs_run *r, fds__anode *n,
                                   const uint32_t *docs, const uint32_t *own,
                                   size_t cnt);
void fds__aggs_collect_stats(fds__aggs_run *r, fds__anode *n,
                             const uint32_t *docs, const uint32_t *own,
                             size_t cnt);
/* The flat counts of the segment into buckets (`last`: of the search; a
 * top-level terms by global ordinals then opens its best shard_size
 * slots' buckets only).  0 or FDS_ENOMEM. */
int fds__aggs_flat_fold(fds__anode *n, bool last);
/* A fused terms' slot states into buckets and its metric's state, the
 * states cleared (`last`: as fds__aggs_flat_fold).  0 or FDS_ENOMEM. */
int fds__aggs_fused_fold(fds__anode *n, bool last);
/* n's slot states freed, or kept for a later search when a fold left
 * them all zero (zpool.c); n->macc NULL after. */
void fds__aggs_macc_release(fds__anode *n);
/* A keyword cardinality's bitsets of the segment's ordinals hashed into
 * their owners' sketches (each term once) and freed.  0 or FDS_ENOMEM. */
int fds__aggs_card_flush(fds__anode *n);
/* Does top_hits request q read scores (by _score, or track_scores)? */
bool fds__aggs_th_needs_score(const fds_search_request *q);
/* The segment's best doc of each owner of a one-key top_hits to the heaps.
 * 0 or FDS_ENOMEM. */
int fds__aggs_th_flush(fds__anode *n);
/* sum/avg/min/max/stats/extended_stats of the k docs `docs` (all of owner
 * o, every doc valued) into o's state; sq: sums of squares too. */
void fds__aggs_metric_run(fds__anode *n, const uint32_t *docs, size_t k,
                          uint32_t o, bool sq);
/* Does metric n take runs of docs by fds__aggs_metric_run? */
bool fds__aggs_run_metric(const fds__anode *n);

/* ---- shard results (results.c) --------------------------------------------- */

/* The result of node n for owner `owner` of nowners.  NULL on ENOMEM. */
fds_agg_result *fds__aggs_build(fds__anode *n, uint32_t owner,
                                uint32_t nowners);
fds_agg_result *fds__aggs_result_new(const fds_agg *a);
/* Free what bucket bk of aggregation a holds and zero it. */
void fds__aggs_bucket_clear(const fds_agg *a, fds_agg_bucket *bk);
/* Which kind of key a's buckets have (keyword, integer, double). */
int fds__aggs_key_class(const fds_agg *a);
int fds__aggs_ck_cmp(const fds_agg *a, const fds_agg_ckey *x,
                     const fds_agg_ckey *y);
/* Key order of buckets x and y of result r. */
int fds__aggs_key_cmp(const fds_agg_result *r, const fds_agg_bucket *x,
                      const fds_agg_bucket *y);
/* qsort_r order of buckets by the aggregation's `order` (arg: result). */
int fds__aggs_order_cmp(const void *pa, const void *pb, void *arg);
/* qsort_r order of fds_agg_hit by a top_hits request (req). */
int fds__aggs_hit_cmp(const void *x, const void *y, void *req);
/* A composite's page of buckets after `after`, at most `size`. */
void fds__aggs_composite_page(fds_agg_result *r);

/* ---- reduce by type (reduce.c: registry entries) ------------------------- */

fds_agg_result *fds__aggs_reduce_top_hits(fds__aggs_red *R, fds_agg_result *r,
                                          fds_agg_result *const *in, size_t n);
fds_agg_result *fds__aggs_reduce_metric(fds__aggs_red *R, fds_agg_result *r,
                                        fds_agg_result *const *in, size_t n);
fds_agg_result *fds__aggs_reduce_fixed(fds__aggs_red *R, fds_agg_result *r,
                                       fds_agg_result *const *in, size_t n);
fds_agg_result *fds__aggs_reduce_keyed(fds__aggs_red *R, fds_agg_result *r,
                                       fds_agg_result *const *in, size_t n);

/* ---- values of a doc ------------------------------------------------------- */

/* The numeric value of doc d for n (its field or `missing`). */
static inline __attribute__((always_inline)) bool
num_value(const fds__anode *n, uint32_t d, double *dv, int64_t *lv)
{
    const fds_sfield *f = n->f;
    if (f && f->col && fds__bit(f->present, d)) {
        if (f->kind == FDS_FT_DOUBLE) {
            *dv = fds__col_f64(f, d);
            *lv = *dv >= 0x1p63 ? INT64_MAX : *dv < -0x1p63 ? INT64_MIN
                                                           : (int64_t)*dv;
        } else {
            *lv = fds__col_i64(f, d);
            *dv = (double)*lv;
        }
        return true;
    }
    if (n->a->has_missing) {
        *dv = n->a->missing_d;
        *lv = n->a->missing_l;
        return true;
    }
    return false;
}

static inline bool has_value(const fds__anode *n, uint32_t d)
{
    const fds_sfield *f = n->f;
    if (!f || !f->col || !fds__bit(f->present, d))
        return false;
    return f->kind != FDS_FT_KEYWORD || fds__col_ord(f, d) != FDS_SIDX_NO_ORD;
}

static inline uint64_t dbits(double d)
{
    uint64_t u;
    if (d == 0)
        d = 0; /* -0.0 and 0.0 are one key */
    memcpy(&u, &d, 8);
    return u;
}

static inline double bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static inline bool in_list(const double *v, size_t n, double x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static inline bool kw_in_list(char *const *v, const size_t *len, size_t n,
                       const char *s, size_t sl)
{
    for (size_t i = 0; i < n; i++)
        if (len[i] == sl && !memcmp(v[i], s, sl))
            return true;
    return false;
}

/* Dense table entry of (owner, slot), NULL when outside the table (grown
 * on demand up to FDS__AGG_DENSE_MAX entries). */
static inline uint32_t *dense_at(fds__anode *n, uint32_t owner, uint32_t slot)
{
    if (owner >= n->dense_owners) {
        if (!n->nslots || (uint64_t)(owner + 1) * n->nslots > n->dense_max)
            return NULL;
        uint32_t no = n->dense_owners ? n->dense_owners : 1;
        while (no <= owner)
            no *= 2;
        if ((uint64_t)no * n->nslots > n->dense_max)
            no = owner + 1;
        /* a first table: zeros an earlier fold left, if any (zpool.c) */
        uint32_t *t = n->dense ? realloc(n->dense, (size_t)no * n->nslots * sizeof *t)
                               : fds__zpool_take((size_t)no * n->nslots * sizeof *t);
        if (!t)
            return NULL;
        if (n->dense_owners)
            memset(t + (size_t)n->dense_owners * n->nslots, 0,
                   (size_t)(no - n->dense_owners) * n->nslots * sizeof *t);
        n->dense = t;
        n->dense_owners = no;
    }
    return &n->dense[(size_t)owner * n->nslots + slot];
}

/* A sparse terms lists at most nslots / FDS__AGG_TOUCHED_DIV slots; past
 * that its fold scans every slot in order (sequential: faster than
 * visiting a long list in random order). */
#define FDS__AGG_TOUCHED_DIV 16u

/* Slot `slot` of sparse node n turned non-zero: listed.  False on ENOMEM. */
static inline bool touch(fds__anode *n, uint32_t slot)
{
    if (n->touched_over)
        return true;
    if (n->ntouched >= n->nslots / FDS__AGG_TOUCHED_DIV) {
        n->touched_over = true;
        return true;
    }
    if (fds__grow((void **)&n->touched, &n->touched_cap, n->ntouched + 1,
                  sizeof *n->touched))
        return false;
    n->touched[n->ntouched++] = slot;
    return true;
}

/* Does owner o have a row in n's dense table by its size (a terms by
 * global ordinals finds such buckets through the table alone)? */
static inline bool dense_fits(const fds__anode *n, uint32_t o)
{
    return n->nslots && (uint64_t)(o + 1) * n->nslots <= n->dense_max;
}

/* Collect docs[0..cnt) (owners own[0..cnt), NULL: all 0) into node n by
 * its type's registry entry, unless the run has failed. */
static inline void fds__aggs_collect_node(fds__aggs_run *r, fds__anode *n,
                                          const uint32_t *docs,
                                          const uint32_t *own, size_t cnt)
{
    if (!r->rc)
        n->a->kind->collect(r, n, docs, own, cnt);
}

/* Pass the m docs gathered in n->bdoc / n->bown to the subs. */
static inline void pass_down(fds__aggs_run *r, fds__anode *n, size_t m)
{
    for (size_t k = 0; m && k < n->a->nsubs; k++)
        fds__aggs_collect_node(r, n->kids[k], n->bdoc, n->bown, m);
}

/* Kahan summation (Elasticsearch's CompensatedSum). */
static inline void kahan(double *sum, double *comp, double v)
{
    if (!isfinite(v))
        *sum += v;
    if (!isfinite(*sum)) /* Inf or NaN stays (CompensatedSum.add) */
        return;
    double y = v - *comp;
    double t = *sum + y;
    *comp = (t - *sum) - y;
    *sum = t;
}

#endif
