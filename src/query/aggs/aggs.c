/*
 * aggs.c: running aggregations over a search's matching docs, the shard's
 * partial results, and their reduce (aggs.h).
 *
 * Collection follows Elasticsearch's bucket-ordinal design
 * (LeafBucketCollector.collect(doc, owningBucketOrd)): each bucket
 * aggregation gives every bucket it opens an ordinal; its sub-aggregations
 * keep their state in arrays indexed by that ordinal.  A bucket is found by
 * (owning ordinal, key) in an open-addressing table; keys are the value
 * itself (long, date, double bits, histogram key) or, for keyword terms, the
 * id of the term string interned by the aggregation, reached from a
 * segment's ordinal through a per-segment cache -- so buckets of all
 * segments of a shard meet by value.  The search hands the matching docs
 * over in batches of FDS__COLLECT_BATCH; each aggregation runs over a batch in
 * a tight loop and passes the docs that reached a bucket, with the bucket,
 * to its subs.  Work per matching doc is one column read and one bucket
 * lookup per aggregation it reaches: terms find the bucket in a dense
 * (owner, segment ordinal or packed value) table -- or, with no subs to
 * feed, only count in it (flat: buckets opened at the segment's end) --,
 * date_histogram reuses the last key's interval in a loop of its own (and
 * counts a flat terms right below it there), anything else probes the
 * table (memo of the last lookup first).  top_hits keeps a heap of the
 * best from + size hits per owner, ordered as the search orders its page
 * (fds__hit_cmp with the top_hits request).  State is bounded by
 * (matching docs x aggregations); the answer's buckets by
 * FDS_AGG_MAX_BUCKETS.
 *
 * The reduce (fds_aggs_reduce) is Elasticsearch's: InternalTerms (merge by
 * key, doc_count_error_upper_bound, sum_other_doc_count, order, size),
 * InternalHistogram / InternalDateHistogram (merge by key, min_doc_count,
 * empty buckets between the bounds: emptyBucketInfo), InternalRange,
 * InternalFilters, InternalStats / InternalExtendedStats, InternalTopHits
 * (TopDocs.merge of the shards' hits, then [from, from + size)).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggs/aggs_collector.h"
#include "exec/filter_match.h"
#include "aggs/hll.h"
#include "aggs/tdigest.h"
#include "fds_time.h"

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

/* ---- bucket table ------------------------------------------------------------ */

typedef struct bslot {
    uint64_t key;
    uint32_t owner;
    uint32_t ord; /* UINT32_MAX: empty */
} bslot;

typedef struct bmap {
    bslot *s;
    size_t cap, n; /* cap a power of two */
} bmap;

static inline uint64_t mix(uint64_t k, uint32_t o)
{
    uint64_t h = (k ^ ((uint64_t)o << 32 | o)) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static int bmap_grow(bmap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 64;
    bslot *ns = malloc(nc * sizeof *ns);
    if (!ns)
        return FDS_ENOMEM;
    for (size_t i = 0; i < nc; i++)
        ns[i].ord = UINT32_MAX;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->s[i].ord == UINT32_MAX)
            continue;
        size_t j = mix(m->s[i].key, m->s[i].owner) & (nc - 1);
        while (ns[j].ord != UINT32_MAX)
            j = (j + 1) & (nc - 1);
        ns[j] = m->s[i];
    }
    free(m->s);
    m->s = ns;
    m->cap = nc;
    return 0;
}

/* ---- per-aggregation run state ---------------------------------------------- */

typedef struct anode {
    const fds_agg *a;
    struct anode **kids;
    struct anode **srcn;    /* composite: one node per source */
    /* buckets: ordinal -> owner, key, count */
    bmap map;
    uint32_t nb, bcap;
    uint32_t *b_owner;
    uint64_t *b_key, *b_count;
    /* keyword terms: interned strings (key = id) */
    char *arena;
    size_t alen, acap;
    uint64_t *soff; /* offset << 24 | len would cap lengths; two arrays */
    uint32_t *slen;
    uint32_t ns, scap;
    bmap smap;      /* (hash, 0) -> string id */
    /* metrics, by owner */
    uint32_t mcap;
    uint64_t *m_count;
    double *m_sum, *m_sumc, *m_sq, *m_sqc, *m_min, *m_max;
    fds_hll **m_hll;       /* cardinality */
    fds_tdigest **m_td;    /* percentiles, percentile_ranks */
    uint64_t *ordhash;     /* cardinality of a keyword: hash per ordinal */
    uint8_t *ordhash_have;
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
     * the segment's end (flat_fold) */
    bool flat;
    /* a flat terms' counts of one owner (lane_owner; UINT32_MAX: none) in
     * FLAT_LANES interleaved tables of nslots (NULL: not used), added into
     * the dense table by lanes_flush */
    uint32_t *lanes, lane_owner;
    bool allp;      /* every doc of the segment has a value of f */
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
} anode;

typedef struct fds__aggs_run fds__aggs_run;

struct fds__aggs_run {
    fds__collector c;   /* first: execution appends docs to its batch */
    /* the batch being collected (batch_score looks scores up in it) */
    const uint32_t *bdoc;
    const float *bscore;
    size_t bn;
    const fds_agg *root;
    const fds__cnode *query; /* the search's, for top_hits' explanations */
    anode *top;
    fds__exec *x;
    int rc;
    fds_err *err;
};

static void anode_free(anode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->a->nsubs; i++)
        anode_free(n->kids[i]);
    free(n->kids);
    for (size_t i = 0; n->srcn && i < n->a->nsrcs; i++)
        anode_free(n->srcn[i]);
    free(n->srcn);
    free(n->map.s);
    free(n->b_owner);
    free(n->b_key);
    free(n->b_count);
    free(n->arena);
    free(n->soff);
    free(n->slen);
    free(n->smap.s);
    free(n->m_count);
    free(n->m_sum);
    free(n->m_sumc);
    free(n->m_sq);
    free(n->m_sqc);
    free(n->m_min);
    free(n->m_max);
    for (uint32_t i = 0; i < n->mcap; i++) {
        if (n->m_hll)
            fds_hll_free(n->m_hll[i]);
        if (n->m_td)
            fds_tdigest_free(n->m_td[i]);
    }
    free(n->m_hll);
    free(n->m_td);
    for (uint32_t i = 0; n->th_heap && i < n->thcap; i++)
        free(n->th_heap[i].h);
    free(n->th_heap);
    free(n->th_max);
    free(n->th_bv);
    free(n->th_bd);
    free(n->ordhash);
    free(n->ordhash_have);
    free(n->ordmap);
    for (size_t i = 0; n->flt && i < n->a->nfilters; i++)
        fds__filter_free(n->flt[i]);
    free(n->flt);
    free(n->grp_start);
    free(n->grp_ord);
    free(n->dense);
    free(n->lanes);
    free(n->bdoc);
    free(n->bown);
    free(n);
}

static anode *anode_new(fds__exec *x, const fds_agg *a)
{
    anode *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->a = a;
    n->x = x;
    n->last_ord = UINT32_MAX;
    n->kids = calloc(a->nsubs + 1, sizeof *n->kids);
    n->bdoc = malloc(FDS__COLLECT_BATCH * sizeof *n->bdoc);
    n->bown = malloc(FDS__COLLECT_BATCH * sizeof *n->bown);
    if (!n->kids || !n->bdoc || !n->bown) {
        free(n->kids);
        free(n->bdoc);
        free(n->bown);
        free(n);
        return NULL;
    }
    for (size_t i = 0; i < a->nsubs; i++)
        if (!(n->kids[i] = anode_new(x, a->subs[i]))) {
            anode_free(n);
            return NULL;
        }
    if (a->nsrcs && !(n->srcn = calloc(a->nsrcs, sizeof *n->srcn))) {
        anode_free(n);
        return NULL;
    }
    for (size_t i = 0; i < a->nsrcs; i++)
        if (!(n->srcn[i] = anode_new(x, a->srcs[i]))) {
            anode_free(n);
            return NULL;
        }
    if (a->nfilters) {
        if (!(n->flt = calloc(a->nfilters, sizeof *n->flt))) {
            anode_free(n);
            return NULL;
        }
        for (size_t i = 0; i < a->nfilters; i++)
            if (fds__filter_new(x, a->filters[i], &n->flt[i])) {
                anode_free(n);
                return NULL;
            }
    }
    return n;
}

/* The bucket of (owner, key), opened if new; UINT32_MAX on ENOMEM. */
static uint32_t bucket(anode *n, uint32_t owner, uint64_t key)
{
    bmap *m = &n->map;
    if ((m->n + 1) * 2 > m->cap && bmap_grow(m))
        return UINT32_MAX;
    size_t j = mix(key, owner) & (m->cap - 1);
    for (;;) {
        bslot *s = &m->s[j];
        if (s->ord == UINT32_MAX)
            break;
        if (s->key == key && s->owner == owner)
            return s->ord;
        j = (j + 1) & (m->cap - 1);
    }
    if (n->nb == n->bcap) {
        uint32_t nc = n->bcap ? n->bcap * 2 : 16;
        uint32_t *o = realloc(n->b_owner, nc * sizeof *o);
        if (o)
            n->b_owner = o;
        uint64_t *k = o ? realloc(n->b_key, nc * sizeof *k) : NULL;
        if (k)
            n->b_key = k;
        uint64_t *c = k ? realloc(n->b_count, nc * sizeof *c) : NULL;
        if (!c)
            return UINT32_MAX;
        n->b_count = c;
        n->bcap = nc;
    }
    uint32_t ord = n->nb++;
    n->b_owner[ord] = owner;
    n->b_key[ord] = key;
    n->b_count[ord] = 0;
    m->s[j] = (bslot){key, owner, ord};
    m->n++;
    return ord;
}

/* Look a bucket up without opening it; UINT32_MAX when absent. */
static uint32_t bucket_find(const anode *n, uint32_t owner, uint64_t key)
{
    const bmap *m = &n->map;
    if (!m->cap || owner == UINT32_MAX)
        return UINT32_MAX;
    for (size_t j = mix(key, owner) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        const bslot *s = &m->s[j];
        if (s->ord == UINT32_MAX)
            return UINT32_MAX;
        if (s->key == key && s->owner == owner)
            return s->ord;
    }
}

static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

/* The id of string s in n's table, interned if new; UINT32_MAX on ENOMEM. */
static uint32_t intern(anode *n, const char *s, size_t len)
{
    uint64_t h = str_hash(s, len);
    bmap *m = &n->smap;
    if ((m->n + 1) * 2 > m->cap && bmap_grow(m))
        return UINT32_MAX;
    size_t j = mix(h, 0) & (m->cap - 1);
    for (;; j = (j + 1) & (m->cap - 1)) {
        bslot *sl = &m->s[j];
        if (sl->ord == UINT32_MAX)
            break;
        if (sl->key == h && n->slen[sl->ord] == len &&
            !memcmp(n->arena + n->soff[sl->ord], s, len))
            return sl->ord;
    }
    if (n->ns == n->scap) {
        uint32_t nc = n->scap ? n->scap * 2 : 64;
        uint64_t *o = realloc(n->soff, nc * sizeof *o);
        if (o)
            n->soff = o;
        uint32_t *l = o ? realloc(n->slen, nc * sizeof *l) : NULL;
        if (!l)
            return UINT32_MAX;
        n->slen = l;
        n->scap = nc;
    }
    if (n->alen + len > n->acap) {
        size_t nc = n->acap ? n->acap : 1024;
        while (nc < n->alen + len)
            nc *= 2;
        char *na = realloc(n->arena, nc);
        if (!na)
            return UINT32_MAX;
        n->arena = na;
        n->acap = nc;
    }
    memcpy(n->arena + n->alen, s, len);
    uint32_t id = n->ns++;
    n->soff[id] = n->alen;
    n->slen[id] = (uint32_t)len;
    n->alen += len;
    m->s[j] = (bslot){h, 0, id};
    m->n++;
    return id;
}

/* Metric arrays hold `owner`. */
static int metric_room(anode *n, uint32_t owner)
{
    if (owner < n->mcap)
        return 0;
    uint32_t nc = n->mcap ? n->mcap : 16;
    while (nc <= owner)
        nc *= 2;
    uint64_t *c = realloc(n->m_count, nc * sizeof *c);
    if (!c)
        return FDS_ENOMEM;
    n->m_count = c;
    double **arrs[] = {&n->m_sum, &n->m_sumc, &n->m_sq, &n->m_sqc, &n->m_min,
                       &n->m_max};
    for (size_t k = 0; k < sizeof arrs / sizeof *arrs; k++) {
        double *d = realloc(*arrs[k], nc * sizeof *d);
        if (!d)
            return FDS_ENOMEM;
        *arrs[k] = d;
        for (uint32_t i = n->mcap; i < nc; i++)
            d[i] = k == 4 ? INFINITY : k == 5 ? -INFINITY : 0;
    }
    for (uint32_t i = n->mcap; i < nc; i++)
        c[i] = 0;
    int t = n->a->type;
    if (t == FDS_AGG_CARDINALITY) {
        fds_hll **h = realloc(n->m_hll, nc * sizeof *h);
        if (!h)
            return FDS_ENOMEM;
        memset(h + n->mcap, 0, (nc - n->mcap) * sizeof *h);
        n->m_hll = h;
    }
    if (t == FDS_AGG_PERCENTILES || t == FDS_AGG_PERCENTILE_RANKS) {
        fds_tdigest **d = realloc(n->m_td, nc * sizeof *d);
        if (!d)
            return FDS_ENOMEM;
        memset(d + n->mcap, 0, (nc - n->mcap) * sizeof *d);
        n->m_td = d;
    }
    if (t == FDS_AGG_TOP_HITS) {
        fds__heap *h = realloc(n->th_heap, nc * sizeof *h);
        if (h)
            n->th_heap = h;
        float *mx = h ? realloc(n->th_max, nc * sizeof *mx) : NULL;
        if (!mx)
            return FDS_ENOMEM;
        n->th_max = mx;
        int64_t *bv = realloc(n->th_bv, nc * sizeof *bv);
        if (bv)
            n->th_bv = bv;
        uint32_t *bd = bv ? realloc(n->th_bd, nc * sizeof *bd) : NULL;
        if (!bd)
            return FDS_ENOMEM;
        n->th_bd = bd;
        for (uint32_t i = n->thcap; i < nc; i++) {
            h[i] = (fds__heap){.req = n->a->th};
            mx[i] = NAN;
            bd[i] = UINT32_MAX;
        }
        n->thcap = nc;
    }
    n->mcap = nc;
    return 0;
}

/* ---- values of a doc ---------------------------------------------------------- */

/* The numeric value of doc d for n (its field or `missing`). */
static inline __attribute__((always_inline)) bool
num_value(const anode *n, uint32_t d, double *dv, int64_t *lv)
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

/* The string id of ordinal o of the segment's field, interned on first
 * sight; UINT32_MAX on ENOMEM. */
static uint32_t ord_id(anode *n, uint32_t o)
{
    if (!n->ordmap[o]) {
        uint32_t len;
        const char *s = fds__sidx_term_str(n->f, o, &len);
        uint32_t id = intern(n, s, len);
        if (id == UINT32_MAX)
            return UINT32_MAX;
        n->ordmap[o] = id + 1;
    }
    return n->ordmap[o] - 1;
}

/* The keyword string id of doc d for n, UINT32_MAX when none (or ENOMEM:
 * *oom set). */
static inline uint32_t kw_value(anode *n, uint32_t d, bool *oom)
{
    const fds_sfield *f = n->f;
    uint32_t o = f && f->col && fds__bit(f->present, d) ? fds__col_ord(f, d)
                                                        : FDS_SIDX_NO_ORD;
    if (o == FDS_SIDX_NO_ORD) {
        if (!n->a->has_missing)
            return UINT32_MAX;
        if (!n->missing_sid) {
            uint32_t id = intern(n, n->a->missing_s, n->a->missing_len);
            if (id == UINT32_MAX) {
                *oom = true;
                return UINT32_MAX;
            }
            n->missing_sid = id + 1;
        }
        return n->missing_sid - 1;
    }
    uint32_t id = ord_id(n, o);
    *oom |= id == UINT32_MAX;
    return id;
}

static bool has_value(const anode *n, uint32_t d)
{
    const fds_sfield *f = n->f;
    if (!f || !f->col || !fds__bit(f->present, d))
        return false;
    return f->kind != FDS_FT_KEYWORD || fds__col_ord(f, d) != FDS_SIDX_NO_ORD;
}

/* ---- date rounding (fixed offsets) ------------------------------------------- */

#define DAY_MS FDS_MS_PER_DAY

/* Transitions a named zone's rounding steps back over (zone_round). */
#define TZ_ROUND_DEPTH 4
static const int64_t CAL_MS[] = {0, 1000, 60000, 3600000, DAY_MS, 7 * DAY_MS};

/* Months of a calendar unit of a month or longer. */
static unsigned cal_months(int cal)
{
    return cal == FDS_CAL_MONTH ? 1 : cal == FDS_CAL_QUARTER ? 3 : 12;
}

/* Local milliseconds rounded down to the calendar unit. */
static int64_t cal_floor(int cal, int64_t local)
{
    if (cal <= FDS_CAL_DAY)
        return fds_floor_div(local, CAL_MS[cal]) * CAL_MS[cal];
    int64_t days = fds_days_from_ms(local, NULL);
    if (cal == FDS_CAL_WEEK) /* weeks start on Monday; 1970-01-01 was a Thursday */
        return (fds_floor_div(days + 3, 7) * 7 - 3) * DAY_MS;
    return fds_months_floor_ms(local, cal_months(cal));
}

/* The next calendar unit after local (a unit start). */
static int64_t cal_next(int cal, int64_t local)
{
    if (cal <= FDS_CAL_WEEK)
        return local + CAL_MS[cal];
    return fds_months_add_ms(local, cal_months(cal));
}

/* Local time `local` rounded down (r) as the instant of a key for value
 * u in a named zone, as Elasticsearch's Rounding does.  Days and longer
 * (JavaTimeToMidnightRounding): the first instant of the local time, or
 * the start of the gap it falls in.  Shorter units and fixed intervals
 * (JavaTimeNotToMidnightRounding, TimeIntervalRounding): the latest
 * instant of the local time that is not after u; when that is before the
 * last transition at or before u, the transition's last millisecond is
 * rounded instead, so a bucket never spans a transition. */
static int64_t zone_round(const fds_agg *a, int64_t u, int depth)
{
    int64_t local = u + fds__tz_offset(&a->tz, u);
    bool day = a->cal >= FDS_CAL_DAY;
    int64_t r = a->cal ? cal_floor(a->cal, local)
                       : fds_floor_div(local, a->fixed_ms) * a->fixed_ms;
    int64_t t;
    if (!fds__tz_local_exists(&a->tz, r)) {
        int64_t g = fds__tz_to_utc(&a->tz, r, false);
        return fds__tz_prev_transition(&a->tz, g, &t) ? t : g;
    }
    if (day)
        return fds__tz_to_utc(&a->tz, r, false);
    int64_t k = fds__tz_to_utc(&a->tz, r, true);
    if (k > u)
        k = fds__tz_to_utc(&a->tz, r, false);
    if (depth < TZ_ROUND_DEPTH && fds__tz_prev_transition(&a->tz, u, &t) && k < t)
        return zone_round(a, t - 1, depth + 1);
    return k;
}

/* A date_histogram's key of value v (Elasticsearch's Rounding with the
 * offset applied outside: round(v - offset) + offset). */
static int64_t date_key(const fds_agg *a, int64_t v)
{
    if (a->tz.id[0])
        return zone_round(a, v - a->offset_ms, 0) + a->offset_ms;
    int64_t tz = a->tz.fixed_ms, local = v - a->offset_ms + tz;
    int64_t r = a->cal ? cal_floor(a->cal, local)
                       : fds_floor_div(local, a->fixed_ms) * a->fixed_ms;
    return r - tz + a->offset_ms;
}

/* The key after `key`.  Named zones: read back through the rounding, so
 * that it is the next bucket's key itself. */
static int64_t date_next(const fds_agg *a, int64_t key)
{
    int64_t u = key - a->offset_ms;
    if (a->tz.id[0]) {
        /* days and longer: the next local unit start; shorter units: the
         * rounding of one unit on, which keeps an overlap's hours apart */
        int64_t n = a->cal >= FDS_CAL_DAY
                        ? fds__tz_to_utc(&a->tz,
                                         cal_next(a->cal, u + fds__tz_offset(&a->tz, u)),
                                         false)
                        : u + (a->cal ? CAL_MS[a->cal] : a->fixed_ms);
        if (n <= u)
            n = u + CAL_MS[FDS_CAL_HOUR];
        int64_t k = zone_round(a, n, 0);
        return (k > u ? k : n) + a->offset_ms;
    }
    int64_t tz = a->tz.fixed_ms, local = u + tz;
    int64_t r = a->cal ? cal_next(a->cal, local) : local + a->fixed_ms;
    return r - tz + a->offset_ms;
}

static double histo_key(const fds_agg *a, double v)
{
    return floor((v - a->offset) / a->interval) * a->interval + a->offset;
}

static uint64_t dbits(double d)
{
    uint64_t u;
    if (d == 0)
        d = 0; /* -0.0 and 0.0 are one key */
    memcpy(&u, &d, 8);
    return u;
}

static double bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* ---- collection --------------------------------------------------------------- */

static bool in_list(const double *v, size_t n, double x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static bool kw_in_list(char *const *v, const size_t *len, size_t n,
                       const char *s, size_t sl)
{
    for (size_t i = 0; i < n; i++)
        if (len[i] == sl && !memcmp(v[i], s, sl))
            return true;
    return false;
}

/* The bucket of (owner, key), through the node's last-bucket memo (docs
 * of one bucket often come in runs: time-ordered logs under a
 * date_histogram) and, for keys that are small slots of the segment
 * (keyword ordinals, narrow packed integers), a dense owner x slot table;
 * UINT32_MAX on ENOMEM. */
static inline uint32_t bucket_at(anode *n, uint32_t owner, uint64_t key)
{
    if (n->last_ord != UINT32_MAX && n->last_owner == owner && n->last_key == key)
        return n->last_ord;
    uint32_t b = bucket(n, owner, key);
    n->last_owner = owner;
    n->last_key = key;
    n->last_ord = b;
    return b;
}

/* Dense table entry of (owner, slot), NULL when outside the table (grown
 * on demand up to FDS__AGG_DENSE_MAX entries). */
static inline uint32_t *dense_at(anode *n, uint32_t owner, uint32_t slot)
{
    if (owner >= n->dense_owners) {
        if (!n->nslots || (uint64_t)(owner + 1) * n->nslots > FDS__AGG_DENSE_MAX)
            return NULL;
        uint32_t no = n->dense_owners ? n->dense_owners : 1;
        while (no <= owner)
            no *= 2;
        if ((uint64_t)no * n->nslots > FDS__AGG_DENSE_MAX)
            no = owner + 1;
        uint32_t *t = realloc(n->dense, (size_t)no * n->nslots * sizeof *t);
        if (!t)
            return NULL;
        memset(t + (size_t)n->dense_owners * n->nslots, 0,
               (size_t)(no - n->dense_owners) * n->nslots * sizeof *t);
        n->dense = t;
        n->dense_owners = no;
    }
    return &n->dense[(size_t)owner * n->nslots + slot];
}

static void collect_batch(fds__aggs_run *r, anode *n, const uint32_t *docs,
                          const uint32_t *own, size_t cnt);

/* Pass the n->bm docs gathered in n->bdoc / n->bown to the subs. */
static inline void pass_down(fds__aggs_run *r, anode *n, size_t m)
{
    for (size_t k = 0; m && k < n->a->nsubs; k++)
        collect_batch(r, n->kids[k], n->bdoc, n->bown, m);
}

/* cardinality over a batch: each value's hash into its owner's sketch
 * (Elasticsearch's hashes: MurmurHash3 of a keyword's bytes, mix64 of a
 * long, of a double's bits). */
static void collect_cardinality(fds__aggs_run *r, anode *n, const uint32_t *docs,
                                const uint32_t *own, size_t cnt)
{
    const fds_agg *a = n->a;
    const fds_sfield *f = n->f;
    for (size_t i = 0; i < cnt && !r->rc; i++) {
        uint32_t d = docs[i], o = own ? own[i] : 0;
        uint64_t h;
        if (a->ftype == FDS_FT_KEYWORD) {
            uint32_t ord = f && f->col && fds__bit(f->present, d) ? fds__col_ord(f, d)
                                                                  : FDS_SIDX_NO_ORD;
            if (ord != FDS_SIDX_NO_ORD) {
                if (!n->ordhash_have[ord]) {
                    uint32_t len;
                    const char *s = fds__sidx_term_str(f, ord, &len);
                    n->ordhash[ord] = fds_hll_hash_bytes(s, len);
                    n->ordhash_have[ord] = 1;
                }
                h = n->ordhash[ord];
            } else if (a->has_missing) {
                h = fds_hll_hash_bytes(a->missing_s, a->missing_len);
            } else {
                continue;
            }
        } else {
            double v;
            int64_t l;
            if (!num_value(n, d, &v, &l))
                continue;
            h = a->ftype == FDS_FT_DOUBLE ? fds_hll_hash_double(v) : fds_hll_hash_long(l);
        }
        if (!n->m_hll[o] && !(n->m_hll[o] = fds_hll_create(a->precision_threshold))) {
            r->rc = FDS_ENOMEM;
            return;
        }
        n->m_count[o]++;
        if (fds_hll_add(n->m_hll[o], h))
            r->rc = FDS_ENOMEM;
    }
}

/* percentiles, percentile_ranks over a batch: values into t-digests. */
static void collect_digest(fds__aggs_run *r, anode *n, const uint32_t *docs,
                           const uint32_t *own, size_t cnt)
{
    for (size_t i = 0; i < cnt && !r->rc; i++) {
        uint32_t o = own ? own[i] : 0;
        double v;
        int64_t l;
        if (!num_value(n, docs[i], &v, &l) || !isfinite(v))
            continue;
        if (!n->m_td[o] && !(n->m_td[o] = fds_tdigest_create(n->a->compression))) {
            r->rc = FDS_ENOMEM;
            return;
        }
        n->m_count[o]++;
        if (fds_tdigest_add(n->m_td[o], v, 1) == FDS_ENOMEM)
            r->rc = FDS_ENOMEM;
    }
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

/* Count doc d into the bucket (owner o, key) and gather it for the subs
 * at n->bdoc / n->bown[*m].  False on ENOMEM (r->rc set). */
static inline bool gather(fds__aggs_run *r, anode *n, uint32_t o, uint64_t key,
                          uint32_t d, size_t *m)
{
    uint32_t b = bucket_at(n, o, key);
    if (b == UINT32_MAX) {
        r->rc = FDS_ENOMEM;
        return false;
    }
    n->b_count[b]++;
    n->bdoc[*m] = d;
    n->bown[(*m)++] = b;
    return true;
}

/* Does top_hits request q read scores (by _score, or track_scores)? */
static bool th_needs_score(const fds_search_request *q)
{
    bool need = q->nsort == 0 || q->track_scores;
    for (unsigned k = 0; k < q->nsort; k++)
        need |= q->sort[k].kind == FDS_SORT_SCORE;
    return need;
}

static bool need_score_tree(const fds_agg *a)
{
    if (a->type == FDS_AGG_TOP_HITS)
        return th_needs_score(a->th);
    for (size_t k = 0; k < a->nsubs; k++)
        if (need_score_tree(a->subs[k]))
            return true;
    return false;
}

/* The score of doc d of the run's batch (docs in increasing order). */
static float batch_score(const fds__aggs_run *r, uint32_t d)
{
    size_t lo = 0, hi = r->bn;
    if (!r->bscore)
        return NAN;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->bdoc[mid] < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->bn && r->bdoc[lo] == d ? r->bscore[lo] : NAN;
}

/* top_hits over a batch: each doc, with its score and sort values, offered
 * to its owner's heap (Elasticsearch's TopHitsAggregator: a TopFieldCollector
 * of from + size per owning bucket). */
/* Offer doc h->doc (h->score set) of owner o to its top_hits heap, its
 * sort values filled.  0 or FDS_ENOMEM. */
static int th_offer(anode *n, uint32_t o, fds_hit *h)
{
    const fds_search_request *q = n->a->th;
    fds__heap *hp = &n->th_heap[o];
    if (!hp->h) {
        size_t k = (size_t)q->from + q->size;
        if (!(hp->h = malloc(k * sizeof *hp->h)))
            return FDS_ENOMEM;
        hp->cap = k;
    }
    unsigned s = 0;
    if (q->nsort && hp->n == hp->cap) {
        /* a full heap: worse than its worst on the first key is out */
        fds__sort_value(q, 0, n->th_sf[0], n->docbase, h);
        if (fds__key_cmp(q, 0, h, &hp->h[0]) > 0)
            return 0;
        s = 1;
    }
    for (; s < q->nsort; s++)
        fds__sort_value(q, s, n->th_sf[s], n->docbase, h);
    fds__heap_offer(hp, h);
    return 0;
}

/* Is n a top_hits of one doc, without scores, by one key that is an
 * integer column of the segment?  Then each owner's best doc of the
 * segment is found by comparing values alone (collect_top_hits) and
 * offered once (th_flush). */
static bool th_fast(const anode *n)
{
    const fds_search_request *q = n->a->th;
    const fds_sfield *f = n->th_sf[0];
    return !th_needs_score(q) && q->from == 0 && q->size == 1 && q->nsort == 1 &&
           q->sort[0].kind == FDS_SORT_FIELD && f && f->col &&
           f->kind != FDS_FT_KEYWORD && f->kind != FDS_FT_DOUBLE;
}

/* The segment's best doc of each owner (th_fast) to the heaps, and the
 * bests cleared.  0 or FDS_ENOMEM. */
static int th_flush(anode *n)
{
    for (uint32_t o = 0; n->th_bd && o < n->thcap; o++) {
        if (n->th_bd[o] == UINT32_MAX)
            continue;
        fds_hit h = {.seg = n->si, .nsort = n->a->th->nsort, .doc = n->th_bd[o],
                     .score = NAN};
        n->th_bd[o] = UINT32_MAX;
        if (th_offer(n, o, &h))
            return FDS_ENOMEM;
    }
    return 0;
}

static void collect_top_hits(fds__aggs_run *r, anode *n, const uint32_t *docs,
                             const uint32_t *own, size_t cnt)
{
    const fds_search_request *q = n->a->th;
    size_t k = (size_t)q->from + q->size;
    bool scored = th_needs_score(q);
    fds_hit h = {.seg = n->si, .nsort = q->nsort}; /* each doc's, in turn */
    if (th_fast(n)) { /* the best value per owner; ties: the first doc */
        const fds_sfield *f = n->th_sf[0];
        const bool desc = q->sort[0].desc;
        int64_t *bv = n->th_bv;
        uint32_t *bd = n->th_bd;
        for (size_t i = 0; i < cnt; i++) {
            uint32_t o = own ? own[i] : 0, d = docs[i];
            n->m_count[o]++;
            if (!fds__bit(f->present, d)) { /* missing: the heap places it */
                h.doc = d;
                h.score = NAN;
                if (th_offer(n, o, &h)) {
                    r->rc = FDS_ENOMEM;
                    return;
                }
                continue;
            }
            int64_t v = fds__col_i64(f, d);
            if (bd[o] == UINT32_MAX || (desc ? v > bv[o] : v < bv[o])) {
                bv[o] = v;
                bd[o] = d;
            }
        }
        return;
    }
    for (size_t i = 0; i < cnt; i++) {
        uint32_t o = own ? own[i] : 0;
        n->m_count[o]++;
        if (!k)
            continue;
        h.doc = docs[i];
        h.score = NAN;
        if (scored) {
            h.score = batch_score(r, docs[i]);
            if (!isnan(h.score) && !(h.score <= n->th_max[o]))
                n->th_max[o] = h.score;
        }
        if (th_offer(n, o, &h)) {
            r->rc = FDS_ENOMEM;
            return;
        }
    }
}

/* Metrics over a batch. */
/* Docs a metric run sums in each of its METRIC_LANES compensated sums:
 * doc i of the run into lane i % METRIC_LANES, so that a run of one owner
 * (a whole-index avg, or one date_histogram bucket's) is not one chain of
 * dependent additions; the lanes are then added into the owner's sum. */
#define METRIC_LANES 4u

/* sum/avg/min/max/stats/extended_stats of the k docs `docs` (all of one
 * owner o, every doc valued: n->allp, no `missing`) into o's state. */
static void metric_run(anode *n, const uint32_t *docs, size_t k, uint32_t o,
                       bool sq)
{
    const fds_sfield *f = n->f;
    const bool dbl = f->kind == FDS_FT_DOUBLE;
    double s[METRIC_LANES] = {0}, sc[METRIC_LANES] = {0};
    double q[METRIC_LANES] = {0}, qc[METRIC_LANES] = {0};
    double mn = n->m_min[o], mx = n->m_max[o];
    for (size_t i = 0; i < k; i++) {
        uint32_t d = docs[i];
        double v = dbl ? fds__col_f64(f, d) : (double)fds__col_i64(f, d);
        unsigned l = i % METRIC_LANES;
        kahan(&s[l], &sc[l], v);
        if (sq)
            kahan(&q[l], &qc[l], v * v);
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    for (unsigned l = 0; l < METRIC_LANES; l++) {
        kahan(&n->m_sum[o], &n->m_sumc[o], s[l]);
        kahan(&n->m_sum[o], &n->m_sumc[o], -sc[l]);
        if (sq) {
            kahan(&n->m_sq[o], &n->m_sqc[o], q[l]);
            kahan(&n->m_sq[o], &n->m_sqc[o], -qc[l]);
        }
    }
    n->m_count[o] += k;
    n->m_min[o] = mn;
    n->m_max[o] = mx;
}

/* Does metric n take runs of docs by metric_run (a sum-like metric over
 * a column every doc of the segment has, no `missing`)? */
static bool run_metric(const anode *n)
{
    int t = n->a->type;
    return (t == FDS_AGG_AVG || t == FDS_AGG_SUM || t == FDS_AGG_MIN ||
            t == FDS_AGG_MAX || t == FDS_AGG_STATS ||
            t == FDS_AGG_EXTENDED_STATS) &&
           n->f && n->f->col && n->allp && !n->a->has_missing;
}

static void collect_metric(fds__aggs_run *r, anode *n, const uint32_t *docs,
                           const uint32_t *own, size_t cnt)
{
    const fds_agg *a = n->a;
    uint32_t mo = 0;
    for (size_t i = 0; own && i < cnt; i++)
        mo = own[i] > mo ? own[i] : mo;
    if (metric_room(n, mo)) {
        r->rc = FDS_ENOMEM;
        return;
    }
    if (a->type == FDS_AGG_CARDINALITY) {
        collect_cardinality(r, n, docs, own, cnt);
        return;
    }
    if (a->type == FDS_AGG_PERCENTILES || a->type == FDS_AGG_PERCENTILE_RANKS) {
        collect_digest(r, n, docs, own, cnt);
        return;
    }
    if (a->type == FDS_AGG_TOP_HITS) {
        collect_top_hits(r, n, docs, own, cnt);
        return;
    }
    if (a->type == FDS_AGG_VALUE_COUNT) {
        for (size_t i = 0; i < cnt; i++)
            if (a->has_missing || has_value(n, docs[i]))
                n->m_count[own ? own[i] : 0]++;
        return;
    }
    bool sq = a->type == FDS_AGG_EXTENDED_STATS;
    if (run_metric(n)) { /* a run per owner */
        for (size_t i = 0, j; i < cnt; i = j) {
            uint32_t o = own ? own[i] : 0;
            for (j = i + 1; j < cnt && (!own || own[j] == o); j++)
                ;
            metric_run(n, docs + i, j - i, o, sq);
        }
        return;
    }
    for (size_t i = 0; i < cnt; i++) {
        double v;
        int64_t l;
        if (!num_value(n, docs[i], &v, &l))
            continue;
        uint32_t o = own ? own[i] : 0;
        n->m_count[o]++;
        kahan(&n->m_sum[o], &n->m_sumc[o], v);
        if (sq)
            kahan(&n->m_sq[o], &n->m_sqc[o], v * v);
        if (v < n->m_min[o])
            n->m_min[o] = v;
        if (v > n->m_max[o])
            n->m_max[o] = v;
    }
}

/* A flat terms' column as its loops read it (hoisted: the counts' stores
 * could alias the node's fields). */
typedef struct flatcol {
    const uint8_t *col, *present;
    unsigned w;       /* bits per packed ordinal or value */
    bool kw, allp;
} flatcol;

static inline flatcol flat_col(const anode *n)
{
    bool kw = n->a->ftype == FDS_FT_KEYWORD;
    return (flatcol){n->f->col, n->f->present, kw ? n->f->ord_bits : n->f->num_bits,
                     kw, n->allp};
}

/* The slot of doc d in c (its ordinal, or its packed value); false when
 * it has none. */
static inline bool flat_slot(const flatcol *c, uint32_t d, uint32_t *slot)
{
    uint32_t v = (uint32_t)fds__bits_get(c->col, (uint64_t)d * c->w, c->w);
    if (c->kw) { /* packed as ordinal + 1, 0 = none */
        *slot = v - 1;
        return v != 0;
    }
    *slot = v;
    return c->allp || fds__bit(c->present, d);
}

/* Add n's lanes into its dense row of lane_owner (which dense_at made)
 * and clear them. */
static void lanes_flush(anode *n)
{
    if (n->lane_owner == UINT32_MAX)
        return;
    const uint32_t ns = n->nslots;
    uint32_t *row = n->dense + (size_t)n->lane_owner * ns, *l = n->lanes;
    for (uint32_t s = 0; s < ns; s++) {
        uint32_t c = 0;
        for (uint32_t k = 0; k < FLAT_LANES; k++) {
            c += l[k * ns + s];
            l[k * ns + s] = 0;
        }
        row[s] += c;
    }
    n->lane_owner = UINT32_MAX;
}

/* The counts of flat terms n for owner o from now on: its lanes (NULL:
 * none, or no row for o), flushed first when they held another owner's. */
static uint32_t *lanes_for(anode *n, uint32_t o)
{
    if (!n->lanes)
        return NULL;
    if (n->lane_owner != o) {
        lanes_flush(n);
        if (!dense_at(n, o, 0))
            return NULL;
        n->lane_owner = o;
    }
    return n->lanes;
}

/* terms with flat counts over a batch: one count per (owner, slot) in
 * the dense table; a doc whose owner is past it goes the bucket way.  The
 * column's reads are hoisted: the counts' stores could alias them. */
static void collect_terms_flat(fds__aggs_run *r, anode *n, const uint32_t *docs,
                               const uint32_t *own, size_t cnt)
{
    const fds_sfield *f = n->f;
    const flatcol c = flat_col(n);
    const bool kw = c.kw;
    const uint32_t ns = n->nslots;
    uint32_t *lanes = own ? NULL : lanes_for(n, 0);
    if (lanes) { /* one owner: the interleaved tables */
        for (size_t i = 0; i < cnt; i++) {
            uint32_t slot;
            if (flat_slot(&c, docs[i], &slot))
                lanes[(i % FLAT_LANES) * ns + slot]++;
        }
        return;
    }
    uint32_t *dense = n->dense, owners = n->dense_owners;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t d = docs[i], o = own ? own[i] : 0, slot;
        if (!flat_slot(&c, d, &slot))
            continue;
        if (o < owners) {
            dense[(size_t)o * ns + slot]++;
            continue;
        }
        if (dense_at(n, o, 0)) {
            dense = n->dense;
            owners = n->dense_owners;
            dense[(size_t)o * ns + slot]++;
            continue;
        }
        uint64_t key;
        if (kw) {
            bool oom = false;
            uint32_t id = kw_value(n, d, &oom);
            if (oom || id == UINT32_MAX) {
                r->rc = oom ? FDS_ENOMEM : r->rc;
                continue;
            }
            key = id;
        } else {
            key = (uint64_t)(f->num_min + (int64_t)slot);
        }
        uint32_t b = bucket_at(n, o, key);
        if (b == UINT32_MAX) {
            r->rc = FDS_ENOMEM;
            return;
        }
        n->b_count[b]++;
    }
}

/* The flat counts of the segment into buckets (include/exclude applied
 * here, as collect_terms applies them per doc), the table zeroed. */
static int flat_fold(anode *n)
{
    const fds_agg *a = n->a;
    const fds_sfield *f = n->f;
    bool kw = a->ftype == FDS_FT_KEYWORD;
    lanes_flush(n);
    for (uint32_t o = 0; o < n->dense_owners; o++)
        for (uint32_t slot = 0; slot < n->nslots; slot++) {
            uint32_t *c = &n->dense[(size_t)o * n->nslots + slot];
            if (!*c)
                continue;
            uint64_t key;
            if (kw) {
                uint32_t id = ord_id(n, slot);
                if (id == UINT32_MAX)
                    return FDS_ENOMEM;
                const char *str = n->arena + n->soff[id];
                size_t sl = n->slen[id];
                key = id;
                if ((a->nincl && !kw_in_list(a->incl, a->incl_len, a->nincl, str, sl)) ||
                    kw_in_list(a->excl, a->excl_len, a->nexcl, str, sl)) {
                    *c = 0;
                    continue;
                }
            } else {
                int64_t l = f->num_min + (int64_t)slot;
                double v = (double)l;
                key = (uint64_t)l;
                if ((a->nincl && !in_list(a->incl_d, a->nincl, v)) ||
                    in_list(a->excl_d, a->nexcl, v)) {
                    *c = 0;
                    continue;
                }
            }
            uint32_t b = bucket(n, o, key);
            if (b == UINT32_MAX)
                return FDS_ENOMEM;
            n->b_count[b] += *c;
            *c = 0;
        }
    return 0;
}

/* terms over a batch. */
static void collect_terms(fds__aggs_run *r, anode *n, const uint32_t *docs,
                          const uint32_t *own, size_t cnt)
{
    if (n->flat) {
        collect_terms_flat(r, n, docs, own, cnt);
        return;
    }
    const fds_agg *a = n->a;
    const fds_sfield *f = n->f;
    bool kw = a->ftype == FDS_FT_KEYWORD;
    bool filt = a->nincl || a->nexcl;
    size_t m = 0;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t d = docs[i], o = own ? own[i] : 0, b;
        /* a dense slot: the ordinal, or the packed integer */
        uint32_t slot = UINT32_MAX;
        if (n->nslots && fds__bit(f->present, d))
            slot = kw ? fds__col_ord(f, d)
                      : (uint32_t)fds__bits_get(f->col, (uint64_t)d * f->num_bits,
                                                f->num_bits);
        uint32_t *ds = slot < n->nslots ? dense_at(n, o, slot) : NULL;
        if (ds && *ds) {
            b = *ds - 1;
        } else {
            uint64_t key;
            if (kw) {
                bool oom = false;
                uint32_t id = kw_value(n, d, &oom);
                if (oom)
                    r->rc = FDS_ENOMEM;
                if (id == UINT32_MAX)
                    continue;
                if (filt) {
                    const char *s = n->arena + n->soff[id];
                    size_t sl = n->slen[id];
                    if ((a->nincl && !kw_in_list(a->incl, a->incl_len, a->nincl, s, sl)) ||
                        kw_in_list(a->excl, a->excl_len, a->nexcl, s, sl)) {
                        if (ds)
                            *ds = UINT32_MAX; /* filtered out: remembered */
                        continue;
                    }
                }
                key = id;
            } else {
                double v;
                int64_t l;
                if (!num_value(n, d, &v, &l))
                    continue;
                if ((a->nincl && !in_list(a->incl_d, a->nincl, v)) ||
                    in_list(a->excl_d, a->nexcl, v)) {
                    if (ds)
                        *ds = UINT32_MAX;
                    continue;
                }
                key = a->ftype == FDS_FT_DOUBLE ? dbits(v) : (uint64_t)l;
            }
            b = bucket_at(n, o, key);
            if (b == UINT32_MAX) {
                r->rc = FDS_ENOMEM;
                return;
            }
            if (ds)
                *ds = b + 1;
        }
        if (b == UINT32_MAX - 1) /* the filtered-out mark */
            continue;
        n->b_count[b]++;
        n->bdoc[m] = d;
        n->bown[m++] = b;
    }
    pass_down(r, n, m);
}

/* The run of docs[i..cnt) whose values of the packed column (col, w
 * bits over base) lie in [lo, hi), each counted into row at its slot of
 * tc (lane (i % FLAT_LANES) * ls) when row is not NULL; returns the index
 * of the first doc outside.  Every doc has a value.  Kept apart from
 * collect_date so that the loop has its few values in registers. */
static __attribute__((noinline)) size_t
date_run(const uint8_t *col, unsigned w, uint64_t base, int64_t lo, int64_t hi,
         const uint32_t *docs, size_t i, size_t cnt, const flatcol *tc,
         uint32_t *row, size_t ls)
{
    if (!row) {
        for (; i < cnt; i++) {
            int64_t l = (int64_t)(base + fds__bits_get(col, (uint64_t)docs[i] * w, w));
            if (l < lo || l >= hi)
                break;
        }
        return i;
    }
    const flatcol c = *tc;
    for (; i < cnt; i++) {
        uint32_t d = docs[i], slot;
        int64_t l = (int64_t)(base + fds__bits_get(col, (uint64_t)d * w, w));
        if (l < lo || l >= hi)
            break;
        if (flat_slot(&c, d, &slot))
            row[(i % FLAT_LANES) * ls + slot]++;
    }
    return i;
}

/* date_histogram over a batch of a segment whose integer column has the
 * values (no `missing`, no hard_bounds): each value in the last key's
 * interval [dk_lo, dk_hi) of the same owner joins its bucket without a
 * lookup, and the counts of a run of them are added at once. */
static void collect_date(fds__aggs_run *r, anode *n, const uint32_t *docs,
                         const uint32_t *own, size_t cnt)
{
    const fds_agg *a = n->a;
    const fds_sfield *f = n->f;
    const uint8_t *const col = f->col, *const present = f->present;
    const unsigned w = f->num_bits;
    const bool raw = w == FDS_SIDX_NUM_RAW;
    const int64_t base = f->num_min;
    uint32_t *const bdoc = n->bdoc, *const bown = n->bown;
    /* one flat terms below: counted here, the bucket being its owner
     * (docs whose owner its table cannot hold go down as usual) */
    anode *t = a->nsubs == 1 && n->kids[0]->flat ? n->kids[0] : NULL;
    const flatcol tc = t ? flat_col(t) : (flatcol){0};
    uint32_t *row = NULL; /* t's counts of owner b */
    /* at the top (one owner a batch, buckets changing seldom) row is t's
     * lanes, doc k into lane k % FLAT_LANES (lane stride ns; 0: row) */
    const bool lanes = t && !own && t->lanes;
    const size_t ls = lanes ? t->nslots : 0;
    /* the interval docs join without a lookup: [lo, hi) of owner `cur`
     * (empty when the key's interval is not known) */
    int64_t key = n->dk_lo, lo = n->dk_valid ? n->dk_lo : 1;
    int64_t hi = n->dk_valid ? n->dk_hi : 0;
    uint32_t cur = UINT32_MAX, b = 0;
    size_t m = 0;             /* docs for the subs */
    uint64_t k = 0, k0 = 0;   /* docs counted; since the bucket changed */
    const bool allp = n->allp;
    /* at the top with every doc valued: runs of one bucket by date_run */
    /* ... each run to one sum-like metric below as a whole */
    anode *mk = a->nsubs == 1 && run_metric(n->kids[0]) ? n->kids[0] : NULL;
    const bool sq = mk && mk->a->type == FDS_AGG_EXTENDED_STATS;
    const bool runs = !own && allp && !raw &&
                      (t ? lanes : mk || !a->nsubs);
    for (size_t i = 0; i < cnt; i++) {
        if (runs && cur != UINT32_MAX && (!t || row)) {
            size_t j = date_run(col, w, (uint64_t)base, lo, hi, docs, i, cnt,
                                &tc, row, ls);
            if (mk && j > i) {
                if (metric_room(mk, b)) {
                    r->rc = FDS_ENOMEM;
                    return;
                }
                metric_run(mk, docs + i, j - i, b, sq);
            }
            k += j - i;
            if ((i = j) == cnt)
                break;
        }
        uint32_t d = docs[i], o = own ? own[i] : 0;
        if (!allp && !fds__bit(present, d))
            continue;
        int64_t l = raw ? (int64_t)fds__get_u64(col + (size_t)d * 8)
                        : (int64_t)((uint64_t)base +
                                    fds__bits_get(col, (uint64_t)d * w, w));
        if (__builtin_expect(l < lo || l >= hi || o != cur, 0)) {
            if (l < lo || l >= hi) {
                key = date_key(a, l);
                int64_t next = n->nslots ? key + n->dk_len : date_next(a, key);
                lo = next > key ? key : 1;
                hi = next > key ? next : 0;
            }
            /* the key's slot: a new interval, or another owner's bucket */
            uint64_t slot = n->nslots ? (uint64_t)(key - n->dk_min) /
                                            (uint64_t)n->dk_len
                                      : UINT64_MAX;
            uint32_t *ds = slot < n->nslots ? dense_at(n, o, (uint32_t)slot) : NULL;
            if (cur != UINT32_MAX)
                n->b_count[b] += k - k0;
            k0 = k;
            if (ds && *ds) {
                b = *ds - 1;
            } else if ((b = bucket_at(n, o, (uint64_t)key)) == UINT32_MAX) {
                r->rc = FDS_ENOMEM;
                return;
            } else if (ds) {
                *ds = b + 1;
            }
            cur = o;
            row = !t ? NULL : lanes ? lanes_for(t, b) : dense_at(t, b, 0);
        }
        k++;
        if (row) {
            uint32_t slot;
            if (flat_slot(&tc, d, &slot))
                row[(k % FLAT_LANES) * ls + slot]++;
            continue;
        }
        if (!a->nsubs)
            continue;
        bdoc[m] = d;
        bown[m++] = b;
    }
    if (cur != UINT32_MAX)
        n->b_count[b] += k - k0;
    n->dk_valid = hi > lo;
    n->dk_lo = key;
    n->dk_hi = hi;
    pass_down(r, n, m);
}

/* histogram, date_histogram, missing, filter over a batch: one bucket
 * per doc at most. */
static void collect_single(fds__aggs_run *r, anode *n, const uint32_t *docs,
                           const uint32_t *own, size_t cnt)
{
    const fds_agg *a = n->a;
    const fds_sfield *f = n->f;
    if (a->type == FDS_AGG_DATE_HISTOGRAM && f && f->col &&
        f->kind != FDS_FT_DOUBLE && !a->has_missing && !a->has_hard) {
        collect_date(r, n, docs, own, cnt);
        return;
    }
    size_t m = 0;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t d = docs[i], o = own ? own[i] : 0;
        uint64_t key = 0;
        double v;
        int64_t l;
        switch (a->type) {
        case FDS_AGG_HISTOGRAM: {
            if (!num_value(n, d, &v, &l) || isnan(v))
                continue;
            /* Elasticsearch's NumericHistogramAggregator tests the key
             * before the offset is added back against the hard bounds */
            double kb = floor((v - a->offset) / a->interval) * a->interval;
            if (a->has_hard && (kb < a->hard_min || kb > a->hard_max))
                continue;
            key = dbits(kb + a->offset);
            break;
        }
        case FDS_AGG_DATE_HISTOGRAM: {
            if (!num_value(n, d, &v, &l))
                continue;
            /* a bucket is the interval [key, next key): a value inside the
             * last one has its key without the division */
            int64_t k;
            if (n->dk_valid && l >= n->dk_lo && l < n->dk_hi) {
                k = n->dk_lo;
            } else {
                k = date_key(a, l);
                n->dk_lo = k;
                n->dk_hi = date_next(a, k);
                n->dk_valid = n->dk_hi > k;
            }
            if (a->has_hard && ((double)k < a->hard_min || (double)k > a->hard_max))
                continue;
            key = (uint64_t)k;
            break;
        }
        case FDS_AGG_FILTER:
            if (!fds__filter_match(n->flt[0], d))
                continue;
            break;
        default: /* missing */
            if (has_value(n, d))
                continue;
            break;
        }
        if (!gather(r, n, o, key, d, &m))
            return;
    }
    pass_down(r, n, m);
}

/* range, date_range, filters over a batch: a doc may be in several
 * buckets, so the subs get the batch once per bucket key. */
static void collect_multi(fds__aggs_run *r, anode *n, const uint32_t *docs,
                          const uint32_t *own, size_t cnt)
{
    const fds_agg *a = n->a;
    bool ranges = a->type != FDS_AGG_FILTERS;
    size_t nkeys = ranges ? a->nranges : a->nfilters + a->other_bucket;
    uint8_t hit[FDS__COLLECT_BATCH];
    memset(hit, 0, cnt);
    for (size_t k = 0; k < nkeys && !r->rc; k++) {
        bool other = !ranges && k == a->nfilters;
        size_t m = 0;
        for (size_t i = 0; i < cnt; i++) {
            uint32_t d = docs[i], o = own ? own[i] : 0;
            double v;
            int64_t l;
            if (ranges) {
                if (!num_value(n, d, &v, &l) || !(v >= a->ranges[k].from &&
                                                  v < a->ranges[k].to))
                    continue;
            } else if (other) {
                if (hit[i])
                    continue;
            } else {
                if (!fds__filter_match(n->flt[k], d))
                    continue;
                hit[i] = 1;
            }
            if (!gather(r, n, o, k, d, &m))
                return;
        }
        pass_down(r, n, m);
    }
}

/* Bytes of a composite key tuple: one 8-byte value per source. */
#define FDS__AGG_CK_BYTES 8u

/* composite over a batch (top level: owner 0): each doc's tuple of source
 * values (a keyword as its id in the source's string table, a number as
 * its key bits), interned; docs missing a source value are left out. */
static void collect_composite(fds__aggs_run *r, anode *n, const uint32_t *docs,
                              size_t cnt)
{
    const fds_agg *a = n->a;
    uint8_t tup[FDS_AGG_ORDER_MAX * 4 * FDS__AGG_CK_BYTES];
    size_t m = 0;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t d = docs[i];
        size_t k;
        for (k = 0; k < a->nsrcs; k++) {
            anode *sn = n->srcn[k];
            const fds_agg *s = sn->a;
            uint64_t key;
            double v;
            int64_t l;
            if (s->type == FDS_AGG_TERMS && s->ftype == FDS_FT_KEYWORD) {
                bool oom = false;
                uint32_t id = kw_value(sn, d, &oom);
                if (oom)
                    r->rc = FDS_ENOMEM;
                if (id == UINT32_MAX)
                    break;
                key = id;
            } else {
                if (!num_value(sn, d, &v, &l) || isnan(v))
                    break;
                key = s->type == FDS_AGG_HISTOGRAM ? dbits(histo_key(s, v))
                    : s->type == FDS_AGG_DATE_HISTOGRAM ? (uint64_t)date_key(s, l)
                    : s->ftype == FDS_FT_DOUBLE ? dbits(v) : (uint64_t)l;
            }
            memcpy(tup + k * FDS__AGG_CK_BYTES, &key, FDS__AGG_CK_BYTES);
        }
        if (k < a->nsrcs)
            continue;
        uint32_t id = intern(n, (const char *)tup, a->nsrcs * FDS__AGG_CK_BYTES);
        if (id == UINT32_MAX) {
            r->rc = FDS_ENOMEM;
            return;
        }
        if (!gather(r, n, 0, id, d, &m))
            return;
    }
    pass_down(r, n, m);
}

static void collect_batch(fds__aggs_run *r, anode *n, const uint32_t *docs,
                          const uint32_t *own, size_t cnt)
{
    if (r->rc)
        return;
    if (n->a->type == FDS_AGG_COMPOSITE) {
        collect_composite(r, n, docs, cnt);
        return;
    }
    switch (n->a->type) {
    case FDS_AGG_ROOT:
        for (size_t k = 0; k < n->a->nsubs; k++)
            collect_batch(r, n->kids[k], docs, NULL, cnt);
        return;
    case FDS_AGG_TERMS:
        collect_terms(r, n, docs, own, cnt);
        return;
    case FDS_AGG_HISTOGRAM: case FDS_AGG_DATE_HISTOGRAM:
    case FDS_AGG_FILTER: case FDS_AGG_MISSING:
        collect_single(r, n, docs, own, cnt);
        return;
    case FDS_AGG_RANGE: case FDS_AGG_DATE_RANGE: case FDS_AGG_FILTERS:
        collect_multi(r, n, docs, own, cnt);
        return;
    default:
        collect_metric(r, n, docs, own, cnt);
        return;
    }
}

/* A batch of the execution's docs to the tree (collector ops.collect). */
static void collect(fds__collector *c, const uint32_t *docs,
                    const float *scores, size_t cnt)
{
    fds__aggs_run *r = (fds__aggs_run *)c;
    if (!cnt || r->rc)
        return;
    r->bdoc = docs;
    r->bscore = scores;
    r->bn = cnt;
    collect_batch(r, r->top, docs, NULL, cnt);
    r->bn = 0;
}

/* ---- segments ------------------------------------------------------------------ */

/* Are bits [0, n) of `bits` all set? */
static bool all_present(const uint8_t *bits, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 8 <= n / 8; i += 8) { /* a word at a time */
        uint64_t w;
        memcpy(&w, bits + i, 8);
        if (w != ~0ull)
            return false;
    }
    for (; i < n / 8; i++)
        if (bits[i] != 0xff)
            return false;
    return n % 8 == 0 || (bits[n / 8] | (uint8_t)(0xffu << (n % 8))) == 0xff;
}

/* Point n's subtree at segment si.  0, FDS_ENOMEM, FDS_EINVAL (a field with
 * several values per doc in this segment). */
static int seg_begin(fds__aggs_run *r, anode *n, const fds__leaf *leaf)
{
    const fds_agg *a = n->a;
    const fds_sidx *sx = leaf->seg->sidx;
    free(n->ordmap);
    n->ordmap = NULL;
    free(n->dense);
    n->dense = NULL;
    free(n->lanes);
    n->lanes = NULL;
    n->lane_owner = UINT32_MAX;
    n->nslots = n->dense_owners = 0;
    n->sx = sx;
    n->si = leaf->ord;
    n->docbase = leaf->docbase;
    for (unsigned k = 0; a->th && k < a->th->nsort; k++)
        n->th_sf[k] = a->th->sort[k].kind == FDS_SORT_FIELD
                          ? fds__sidx_field(sx, a->th->sort[k].field,
                                            a->th->sort[k].field_len)
                          : NULL;
    n->f = a->field && !a->unmapped ? fds__sidx_field(sx, a->field, strlen(a->field))
                                    : NULL;
    const fds_sfield *f = n->f;
    if (f && f->kind == FDS_FT_TEXT)
        n->f = f = NULL; /* the mapping said otherwise: no doc values here */
    bool multi = f && ((f->kind == FDS_FT_KEYWORD && f->sum_ttf != f->doc_count) ||
                       (f->flags & FDS_SIDX_F_MULTI));
    if (multi && a->type != FDS_AGG_MISSING)
        return fds_err_setk(r->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "field [%s] has several values in one document: "
                            "aggregation [%s] of type [%s] reads one value per "
                            "document and does not support multi-valued fields",
                            a->field, a->name, fds_agg_type_name(a->type));
    if (f && f->kind == FDS_FT_KEYWORD && f->nterms &&
        !(n->ordmap = calloc(f->nterms, sizeof *n->ordmap)))
        return FDS_ENOMEM;
    free(n->ordhash);
    free(n->ordhash_have);
    n->ordhash = NULL;
    n->ordhash_have = NULL;
    if (a->type == FDS_AGG_CARDINALITY && f && f->kind == FDS_FT_KEYWORD &&
        f->nterms && (!(n->ordhash = malloc(f->nterms * sizeof *n->ordhash)) ||
                      !(n->ordhash_have = calloc(f->nterms, 1))))
        return FDS_ENOMEM;
    /* terms keys as slots of this segment: its ordinals, or the packed
     * offsets of a narrow integer column of the aggregation's key type */
    if (a->type == FDS_AGG_TERMS && f && f->col) {
        if (f->kind == FDS_FT_KEYWORD && a->ftype == FDS_FT_KEYWORD &&
            f->nterms <= FDS__AGG_DENSE_MAX)
            n->nslots = f->nterms;
        else if (f->kind != FDS_FT_KEYWORD && f->kind != FDS_FT_DOUBLE &&
                 a->ftype != FDS_FT_DOUBLE && a->ftype != FDS_FT_KEYWORD &&
                 f->num_bits <= FDS__AGG_SLOT_BITS)
            n->nslots = 1u << f->num_bits;
    }
    /* date_histogram keys as slots: fixed-length intervals (fixed_interval,
     * or a calendar unit up to a week) in UTC or a fixed offset, over the
     * packed column's range [num_min, num_min + 2^num_bits) */
    if (a->type == FDS_AGG_DATE_HISTOGRAM && f && f->col && !a->tz.id[0] &&
        f->kind != FDS_FT_DOUBLE && f->num_bits < 63 && a->cal <= FDS_CAL_WEEK) {
        n->dk_len = a->cal ? CAL_MS[a->cal] : a->fixed_ms;
        n->dk_min = date_key(a, f->num_min);
        int64_t top = (int64_t)((uint64_t)f->num_min + ((1ull << f->num_bits) - 1));
        uint64_t span = top < f->num_min ? UINT64_MAX /* overflow */
                      : (uint64_t)(date_key(a, top) - n->dk_min) / (uint64_t)n->dk_len + 1;
        if (n->dk_len > 0 && span <= FDS__AGG_DENSE_MAX)
            n->nslots = (uint32_t)span;
    }
    n->flat = a->type == FDS_AGG_TERMS && n->nslots && !a->nsubs && !a->has_missing;
    if (n->flat && n->nslots <= FLAT_LANES_MAX_SLOTS &&
        !(n->lanes = calloc((size_t)FLAT_LANES * n->nslots, sizeof *n->lanes)))
        return FDS_ENOMEM;
    n->allp = f && f->col && all_present(f->present, fds_sidx_max_doc(sx));
    for (size_t i = 0; i < a->nfilters; i++)
        if (fds__filter_segment(n->flt[i], sx))
            return FDS_ENOMEM;
    for (size_t k = 0; k < a->nsubs; k++) {
        int rc = seg_begin(r, n->kids[k], leaf);
        if (rc)
            return rc;
    }
    for (size_t k = 0; k < a->nsrcs; k++) {
        int rc = seg_begin(r, n->srcn[k], leaf);
        if (rc)
            return rc;
    }
    return 0;
}

/* The end of the current segment for n's subtree: flat counts folded
 * into buckets.  0 or FDS_ENOMEM. */
static int seg_end(anode *n)
{
    if (n->a->type == FDS_AGG_TOP_HITS && th_flush(n))
        return FDS_ENOMEM;
    if (n->flat && n->dense) {
        int rc = flat_fold(n);
        if (rc)
            return rc;
    }
    for (size_t k = 0; k < n->a->nsubs; k++) {
        int rc = seg_end(n->kids[k]);
        if (rc)
            return rc;
    }
    return 0;
}

/* n's subtree explains top_hits with `query`. */
static void set_query(anode *n, const fds__cnode *query)
{
    if (!n)
        return;
    n->query = query;
    for (size_t k = 0; k < n->a->nsubs; k++)
        set_query(n->kids[k], query);
}

/* The current segment's state closed (seg_end).  0 or the run's first
 * error (err filled for FDS_ENOMEM). */
static int close_segment(fds__aggs_run *r)
{
    if (!r->rc)
        r->rc = seg_end(r->top);
    if (r->rc == FDS_ENOMEM)
        fds_err_setk(r->err, r->rc, FDS_KIND_INTERNAL, "out of memory");
    return r->rc;
}

/* Segment `leaf` starts: the previous one's state closed (ops.set_segment). */
static int set_segment(fds__collector *c, const fds__leaf *leaf)
{
    fds__aggs_run *r = (fds__aggs_run *)c;
    if (close_segment(r))
        return r->rc;
    int rc = seg_begin(r, r->top, leaf);
    if (rc == FDS_ENOMEM)
        fds_err_setk(r->err, rc, FDS_KIND_INTERNAL, "out of memory");
    return r->rc = rc;
}

static fds_agg_result *build(anode *n, uint32_t owner, uint32_t nowners);

/* The shard's result tree into out->aggs (ops.finish). */
static int finish(fds__collector *c, fds_search_result *out)
{
    fds__aggs_run *r = (fds__aggs_run *)c;
    out->aggs = NULL;
    if (close_segment(r))
        return r->rc;
    out->aggs = build(r->top, 0, 1);
    if (!out->aggs)
        return fds_err_setk(r->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return 0;
}

static void run_free(fds__collector *c)
{
    fds__aggs_run *r = (fds__aggs_run *)c;
    anode_free(r->top);
    free(r);
}

static const fds__collector_ops aggs_ops = {
    .set_segment = set_segment,
    .collect = collect,
    .finish = finish,
    .free = run_free,
};

int fds__aggs_collector_new(fds__exec *x, const fds_agg *root,
                            const fds__cnode *query, fds_err *err,
                            fds__collector **out)
{
    fds__aggs_run *r = calloc(1, sizeof *r);
    if (r) {
        r->c.ops = &aggs_ops;
        r->c.needs_scores = need_score_tree(root);
        r->root = root;
        r->query = query;
        r->x = x;
        r->err = err;
        r->top = anode_new(x, root);
        set_query(r->top, query);
    }
    if (!r || !r->top) {
        free(r);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    *out = &r->c;
    return 0;
}

/* ---- shard results --------------------------------------------------------- */

/* Free what bucket bk of aggregation a holds and zero it. */
static void bucket_clear(const fds_agg *a, fds_agg_bucket *bk)
{
    free(bk->key_s);
    for (size_t k = 0; bk->ck && k < a->nsrcs; k++)
        free(bk->ck[k].s);
    free(bk->ck);
    for (size_t k = 0; bk->subs && k < a->nsubs; k++)
        fds_agg_result_free(bk->subs[k]);
    free(bk->subs);
    memset(bk, 0, sizeof *bk);
}

void fds_agg_result_free(fds_agg_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nb; i++)
        bucket_clear(r->agg, &r->b[i]);
    free(r->b);
    for (size_t i = 0; !r->reduced && i < r->nhits; i++)
        fds_explanation_free(r->hits[i].x);
    free(r->hits);
    fds_hll_free(r->hll);
    fds_tdigest_free(r->td);
    free(r);
}

double fds_agg_metric_value(const fds_agg_result *r, int stat)
{
    int t = r->agg->type;
    if (t == FDS_AGG_CARDINALITY)
        return r->hll ? (double)fds_hll_cardinality(r->hll) : 0;
    if (stat == FDS_AGG_STAT_VALUE)
        stat = t == FDS_AGG_AVG ? FDS_AGG_STAT_AVG
             : t == FDS_AGG_SUM ? FDS_AGG_STAT_SUM
             : t == FDS_AGG_MIN ? FDS_AGG_STAT_MIN
             : t == FDS_AGG_MAX ? FDS_AGG_STAT_MAX : FDS_AGG_STAT_COUNT;
    switch (stat) {
    case FDS_AGG_STAT_COUNT:
        return (double)r->count;
    case FDS_AGG_STAT_SUM:
        return r->sum;
    case FDS_AGG_STAT_AVG:
        return r->count ? r->sum / (double)r->count : NAN;
    case FDS_AGG_STAT_MIN:
        return r->count ? r->min : NAN;
    case FDS_AGG_STAT_MAX:
        return r->count ? r->max : NAN;
    default:
        return NAN;
    }
}

/* The kind of a terms aggregation's keys: 0 strings, 1 doubles, 2 longs. */
static int key_class(const fds_agg *a)
{
    return a->ftype == FDS_FT_KEYWORD ? 0 : a->ftype == FDS_FT_DOUBLE ? 1 : 2;
}

/* Composite keys in the sources' order (each asc or desc). */
static int ck_cmp(const fds_agg *a, const fds_agg_ckey *x, const fds_agg_ckey *y)
{
    for (size_t k = 0; k < a->nsrcs; k++) {
        const fds_agg *s = a->srcs[k];
        int c;
        if (s->type == FDS_AGG_TERMS && s->ftype == FDS_FT_KEYWORD) {
            size_t n = x[k].len < y[k].len ? x[k].len : y[k].len;
            c = memcmp(x[k].s, y[k].s, n);
            c = c ? (c < 0 ? -1 : 1) : (x[k].len < y[k].len ? -1 : x[k].len > y[k].len);
        } else if (s->type == FDS_AGG_HISTOGRAM || s->ftype == FDS_FT_DOUBLE) {
            c = x[k].d < y[k].d ? -1 : x[k].d > y[k].d;
        } else {
            c = x[k].l < y[k].l ? -1 : x[k].l > y[k].l;
        }
        if (c)
            return s->keyed ? -c : c;
    }
    return 0;
}

/* Bucket order: key order of the aggregation's keys. */
static int key_cmp(const fds_agg_result *r, const fds_agg_bucket *x,
                   const fds_agg_bucket *y)
{
    const fds_agg *a = r->agg;
    if (a->type == FDS_AGG_COMPOSITE)
        return ck_cmp(a, x->ck, y->ck);
    if (a->type == FDS_AGG_TERMS && a->ftype == FDS_FT_KEYWORD) {
        size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
        int c = memcmp(x->key_s, y->key_s, n);
        if (c)
            return c < 0 ? -1 : 1;
        return x->key_len < y->key_len ? -1 : x->key_len > y->key_len;
    }
    if (r->key_double || a->type == FDS_AGG_HISTOGRAM)
        return x->key_d < y->key_d ? -1 : x->key_d > y->key_d;
    return x->key_l < y->key_l ? -1 : x->key_l > y->key_l;
}

/* The aggregation's order, then _key ascending (Elasticsearch's compound
 * order ends with the key as tie-breaker). */
static int order_cmp(const void *pa, const void *pb, void *arg)
{
    const fds_agg_result *r = arg;
    const fds_agg *a = r->agg;
    const fds_agg_bucket *x = pa, *y = pb;
    for (unsigned i = 0; i < a->norder; i++) {
        const fds_agg_order *o = &a->order[i];
        int c = 0;
        if (o->kind == FDS_AGG_ORD_COUNT) {
            c = x->doc_count < y->doc_count ? -1 : x->doc_count > y->doc_count;
        } else if (o->kind == FDS_AGG_ORD_KEY) {
            c = key_cmp(r, x, y);
        } else {
            double vx = fds_agg_metric_value(x->subs[o->sub], o->stat);
            double vy = fds_agg_metric_value(y->subs[o->sub], o->stat);
            if (isnan(vx) || isnan(vy)) { /* no value sorts last */
                c = isnan(vx) - isnan(vy);
                if (c)
                    return c;
                continue;
            }
            c = vx < vy ? -1 : vx > vy;
        }
        if (c)
            return o->desc ? -c : c;
    }
    if (!a->norder && a->type == FDS_AGG_TERMS) { /* _count desc */
        if (x->doc_count != y->doc_count)
            return x->doc_count > y->doc_count ? -1 : 1;
    }
    return key_cmp(r, x, y);
}

static fds_agg_result *result_new(const fds_agg *a)
{
    fds_agg_result *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->agg = a;
    r->min = INFINITY;
    r->max = -INFINITY;
    r->max_score = NAN;
    r->key_double = a->type == FDS_AGG_TERMS && a->ftype == FDS_FT_DOUBLE;
    return r;
}

/* Group n's buckets by owner (counting sort), once. */
static int group(anode *n, uint32_t nowners)
{
    if (n->grp_start)
        return 0;
    n->ngrp = nowners;
    n->grp_start = calloc((size_t)nowners + 2, sizeof *n->grp_start);
    n->grp_ord = malloc(((size_t)n->nb + 1) * sizeof *n->grp_ord);
    if (!n->grp_start || !n->grp_ord)
        return FDS_ENOMEM;
    for (uint32_t b = 0; b < n->nb; b++)
        n->grp_start[n->b_owner[b] + 1]++;
    for (uint32_t o = 0; o < nowners; o++)
        n->grp_start[o + 1] += n->grp_start[o];
    uint32_t *at = malloc(((size_t)nowners + 1) * sizeof *at);
    if (!at)
        return FDS_ENOMEM;
    memcpy(at, n->grp_start, (size_t)nowners * sizeof *at);
    for (uint32_t b = 0; b < n->nb; b++)
        n->grp_ord[at[n->b_owner[b]]++] = b;
    free(at);
    return 0;
}

static fds_agg_result *build(anode *n, uint32_t owner, uint32_t nowners);

static int hit_cmp(const void *x, const void *y, void *req)
{
    return fds__hit_cmp(req, x, y);
}

static int agg_hit_cmp(const void *x, const void *y, void *req)
{
    return fds__hit_cmp(req, &((const fds_agg_hit *)x)->h,
                        &((const fds_agg_hit *)y)->h);
}

/* A composite's page: its buckets in key order after `after`, at most
 * `size` of them (a shard's first `size` are enough: the merged first
 * `size` are among them). */
static void composite_page(fds_agg_result *r)
{
    const fds_agg *a = r->agg;
    qsort_r(r->b, r->nb, sizeof *r->b, order_cmp, r);
    size_t skip = 0;
    while (a->has_after && skip < r->nb && ck_cmp(a, r->b[skip].ck, a->after) <= 0)
        skip++;
    for (size_t i = 0; i < skip; i++)
        bucket_clear(a, &r->b[i]);
    memmove(r->b, r->b + skip, (r->nb - skip) * sizeof *r->b);
    r->nb -= skip;
    while (r->nb > a->size)
        bucket_clear(a, &r->b[--r->nb]);
}

/* The subs of bucket ordinal b (UINT32_MAX: an empty bucket) into bk. */
static int build_subs(anode *n, uint32_t b, fds_agg_bucket *bk)
{
    const fds_agg *a = n->a;
    bk->subs = calloc(a->nsubs + 1, sizeof *bk->subs);
    if (!bk->subs)
        return FDS_ENOMEM;
    for (size_t k = 0; k < a->nsubs; k++)
        if (!(bk->subs[k] = build(n->kids[k], b,
                                  a->type == FDS_AGG_ROOT ? 1 : n->nb)))
            return FDS_ENOMEM;
    return 0;
}

/* The key of bucket ordinal b into bk. */
static int set_key(anode *n, uint32_t b, fds_agg_bucket *bk)
{
    const fds_agg *a = n->a;
    uint64_t key = n->b_key[b];
    if (a->type == FDS_AGG_COMPOSITE) {
        const uint8_t *tup = (const uint8_t *)n->arena + n->soff[key];
        if (!(bk->ck = calloc(a->nsrcs, sizeof *bk->ck)))
            return FDS_ENOMEM;
        for (size_t k = 0; k < a->nsrcs; k++) {
            const anode *sn = n->srcn[k];
            const fds_agg *s = sn->a;
            uint64_t v;
            memcpy(&v, tup + k * FDS__AGG_CK_BYTES, FDS__AGG_CK_BYTES);
            fds_agg_ckey *c = &bk->ck[k];
            if (s->type == FDS_AGG_TERMS && s->ftype == FDS_FT_KEYWORD) {
                c->len = sn->slen[v];
                if (!(c->s = malloc(c->len + 1)))
                    return FDS_ENOMEM;
                memcpy(c->s, sn->arena + sn->soff[v], c->len);
                c->s[c->len] = 0;
            } else if (s->type == FDS_AGG_HISTOGRAM || s->ftype == FDS_FT_DOUBLE) {
                c->d = bitsd(v);
            } else {
                c->l = (int64_t)v;
                c->d = (double)c->l;
            }
        }
        return 0;
    }
    if (a->type == FDS_AGG_TERMS && a->ftype == FDS_FT_KEYWORD) {
        bk->key_len = n->slen[key];
        bk->key_s = malloc(bk->key_len + 1);
        if (!bk->key_s)
            return FDS_ENOMEM;
        memcpy(bk->key_s, n->arena + n->soff[key], bk->key_len);
        bk->key_s[bk->key_len] = 0;
    } else if (a->type == FDS_AGG_HISTOGRAM ||
               (a->type == FDS_AGG_TERMS && a->ftype == FDS_FT_DOUBLE)) {
        bk->key_d = bitsd(key);
    } else {
        bk->key_l = (int64_t)key;
        bk->key_d = (double)bk->key_l;
    }
    return 0;
}

/* The result of n for owning bucket `owner` (UINT32_MAX: empty), of
 * `nowners` owners.  NULL on ENOMEM. */
static fds_agg_result *build(anode *n, uint32_t owner, uint32_t nowners)
{
    const fds_agg *a = n->a;
    fds_agg_result *r = result_new(a);
    if (!r)
        return NULL;
    r->nshards = 1;
    if (a->type == FDS_AGG_TOP_HITS) {
        if (owner >= n->mcap)
            return r;
        r->count = n->m_count[owner];
        r->max_score = n->th_max[owner];
        fds__heap *hp = &n->th_heap[owner];
        if (!hp->n)
            return r;
        qsort_r(hp->h, hp->n, sizeof *hp->h, hit_cmp, (void *)a->th);
        if (!(r->hits = malloc(hp->n * sizeof *r->hits))) {
            free(r);
            return NULL;
        }
        for (size_t i = 0; i < hp->n; i++)
            r->hits[i] = (fds_agg_hit){hp->h[i], a->th, NULL};
        r->nhits = hp->n;
        if (a->th->explain && n->query) {
            fds_explanation **ex = calloc(hp->n, sizeof *ex);
            int rc = ex ? fds__explain_hits(n->x, n->query, hp->h, hp->n, ex)
                        : FDS_ENOMEM;
            for (size_t i = 0; ex && i < hp->n; i++)
                r->hits[i].x = ex[i];
            free(ex);
            if (rc) {
                fds_agg_result_free(r);
                return NULL;
            }
        }
        return r;
    }
    if (fds_agg_is_metric(a->type)) {
        if (owner < n->mcap) {
            r->count = n->m_count[owner];
            r->sum = n->m_sum[owner];
            r->sumsq = n->m_sq[owner];
            r->min = n->m_min[owner];
            r->max = n->m_max[owner];
            /* each (aggregation, owner) is built once: the sketch moves */
            if (n->m_hll) {
                r->hll = n->m_hll[owner];
                n->m_hll[owner] = NULL;
            }
            if (n->m_td) {
                r->td = n->m_td[owner];
                n->m_td[owner] = NULL;
            }
        }
        return r;
    }
    size_t nstatic = a->type == FDS_AGG_RANGE || a->type == FDS_AGG_DATE_RANGE
                         ? a->nranges
                   : a->type == FDS_AGG_FILTERS ? a->nfilters + a->other_bucket
                   : a->type == FDS_AGG_FILTER || a->type == FDS_AGG_MISSING ? 1
                   : a->type == FDS_AGG_ROOT ? 1 : 0;
    if (a->type == FDS_AGG_ROOT) {
        /* the root's one bucket holds the top-level results */
        r->b = calloc(1, sizeof *r->b);
        r->nb = 1;
        if (!r->b || build_subs(n, 0, &r->b[0])) {
            fds_agg_result_free(r);
            return NULL;
        }
        return r;
    }
    if (nstatic) {
        r->b = calloc(nstatic, sizeof *r->b);
        if (!r->b) {
            free(r);
            return NULL;
        }
        r->nb = nstatic;
        for (size_t i = 0; i < nstatic; i++) {
            uint32_t b = bucket_find(n, owner, i);
            r->b[i].key_l = (int64_t)i;
            r->b[i].doc_count = b == UINT32_MAX ? 0 : n->b_count[b];
            if (build_subs(n, b, &r->b[i])) {
                fds_agg_result_free(r);
                return NULL;
            }
        }
        return r;
    }
    if (owner == UINT32_MAX || group(n, nowners))
        return owner == UINT32_MAX ? r : (fds_agg_result_free(r), NULL);
    uint32_t s = owner < n->ngrp ? n->grp_start[owner] : 0;
    uint32_t e = owner < n->ngrp ? n->grp_start[owner + 1] : 0;
    r->b = calloc((size_t)(e - s) + 1, sizeof *r->b);
    if (!r->b) {
        free(r);
        return NULL;
    }
    /* keys and counts first; terms keep their best shard_size only, so the
     * subs are built for those */
    for (uint32_t i = s; i < e; i++) {
        fds_agg_bucket *bk = &r->b[r->nb++];
        bk->key_l = n->grp_ord[i]; /* the ordinal until the key is set */
        bk->doc_count = n->b_count[n->grp_ord[i]];
        if (set_key(n, n->grp_ord[i], bk)) {
            fds_agg_result_free(r);
            return NULL;
        }
        bk->err = n->grp_ord[i]; /* kept: the ordinal, restored below */
    }
    bool by_metric = false;
    for (unsigned i = 0; i < a->norder; i++)
        by_metric |= a->order[i].kind == FDS_AGG_ORD_METRIC;
    /* sub results are needed to order by a metric: build them all first */
    for (size_t i = 0; by_metric && i < r->nb; i++)
        if (build_subs(n, (uint32_t)r->b[i].err, &r->b[i])) {
            fds_agg_result_free(r);
            return NULL;
        }
    if (a->type == FDS_AGG_TERMS) {
        qsort_r(r->b, r->nb, sizeof *r->b, order_cmp, r);
        while (r->nb > a->shard_size) {
            fds_agg_bucket *bk = &r->b[--r->nb];
            r->other_doc_count += bk->doc_count;
            bucket_clear(a, bk);
        }
    }
    if (a->type == FDS_AGG_COMPOSITE)
        composite_page(r);
    for (size_t i = 0; i < r->nb; i++) {
        uint32_t b = (uint32_t)r->b[i].err;
        r->b[i].err = 0;
        if (!by_metric && build_subs(n, b, &r->b[i])) {
            fds_agg_result_free(r);
            return NULL;
        }
    }
    return r;
}

/* ---- reduce --------------------------------------------------------------------- */

typedef struct red {
    fds_err *err;
    uint64_t buckets; /* in the answer so far */
    int rc;
} red;

static fds_agg_result *reduce(red *R, const fds_agg *a,
                              fds_agg_result *const *in, size_t n);

static int count_buckets(red *R, size_t nb)
{
    R->buckets += nb;
    if (R->buckets > FDS_AGG_MAX_BUCKETS)
        return R->rc = fds_err_setk(R->err, FDS_ETOOBIG, FDS_KIND_TOO_MANY_BUCKETS,
                                    "Trying to create too many buckets. Must be "
                                    "less than or equal to: [%u] but this number "
                                    "of buckets was exceeded. This limit can be "
                                    "set by changing the [search.max_buckets] "
                                    "cluster level setting.",
                                    FDS_AGG_MAX_BUCKETS);
    return 0;
}

/* A bucket's subs reduced from the ns buckets src[0..ns). */
static int reduce_subs(red *R, const fds_agg *a, fds_agg_bucket *dst,
                       fds_agg_bucket *const *src, size_t ns)
{
    dst->subs = calloc(a->nsubs + 1, sizeof *dst->subs);
    fds_agg_result **parts = malloc((ns + 1) * sizeof *parts);
    if (!dst->subs || !parts) {
        free(parts);
        return R->rc = FDS_ENOMEM;
    }
    for (size_t k = 0; k < a->nsubs && !R->rc; k++) {
        size_t np = 0;
        for (size_t i = 0; i < ns; i++)
            if (src[i]->subs)
                parts[np++] = src[i]->subs[k];
        dst->subs[k] = reduce(R, a->subs[k], parts, np);
        if (!dst->subs[k] && !R->rc)
            R->rc = FDS_ENOMEM;
    }
    free(parts);
    return R->rc;
}

/* A shard's doc_count error (Elasticsearch's AbstractInternalTerms
 * getDocCountError): 0 when it returned all its terms or the order is by
 * key, its smallest count for _count desc, else unknown (-1). */
static int64_t shard_error(const fds_agg_result *t)
{
    const fds_agg *a = t->agg;
    if (t->nb == 0 || t->nb < a->shard_size)
        return 0;
    if (a->norder && a->order[0].kind == FDS_AGG_ORD_KEY)
        return 0;
    bool count_desc = !a->norder ||
                      (a->order[0].kind == FDS_AGG_ORD_COUNT && a->order[0].desc);
    if (!count_desc)
        return -1;
    if (t->err > 0)
        return t->err;
    uint64_t m = UINT64_MAX;
    for (size_t i = 0; i < t->nb; i++)
        if (t->b[i].doc_count < m)
            m = t->b[i].doc_count;
    return (int64_t)m;
}

typedef struct sref {
    fds_agg_bucket *b;
    const fds_agg_result *r;
} sref;

static int sref_cmp(const void *x, const void *y, void *arg)
{
    return key_cmp(arg, ((const sref *)x)->b, ((const sref *)y)->b);
}

/* Empty bucket after key k of a histogram (for min_doc_count 0). */
static void next_key(const fds_agg *a, fds_agg_bucket *k)
{
    if (a->type == FDS_AGG_DATE_HISTOGRAM) {
        k->key_l = date_next(a, k->key_l);
        k->key_d = (double)k->key_l;
    } else {
        /* Elasticsearch's InternalHistogram.nextKey: rounding half an
         * interval past the next key, so that the key's rounding error
         * cannot give the same key again */
        k->key_d = histo_key(a, k->key_d + a->interval + a->interval / 2);
    }
}

static void round_key(const fds_agg *a, double v, fds_agg_bucket *k)
{
    if (a->type == FDS_AGG_DATE_HISTOGRAM) {
        double c = fmax(fmin(v, 0x1p62), -0x1p62);
        k->key_l = date_key(a, (int64_t)c);
        k->key_d = (double)k->key_l;
    } else {
        k->key_d = histo_key(a, v);
    }
}

static bool key_lt(const fds_agg *a, const fds_agg_bucket *x, const fds_agg_bucket *y)
{
    return a->type == FDS_AGG_DATE_HISTOGRAM ? x->key_l < y->key_l
                                             : x->key_d < y->key_d;
}

/* Room for one more bucket in r (capacity *cap); the answer's bucket
 * bound is checked as the buckets are made, so a tiny interval over a huge
 * range stops at search.max_buckets. */
static fds_agg_bucket *push_bucket(red *R, fds_agg_result *r, size_t *cap)
{
    if (r->nb >= FDS_AGG_MAX_BUCKETS && count_buckets(R, r->nb + 1))
        return NULL;
    if (r->nb == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        fds_agg_bucket *nb = realloc(r->b, nc * sizeof *nb);
        if (!nb) {
            R->rc = FDS_ENOMEM;
            return NULL;
        }
        r->b = nb;
        *cap = nc;
    }
    fds_agg_bucket *b = &r->b[r->nb++];
    memset(b, 0, sizeof *b);
    return b;
}

/* Histogram buckets have[0..nhave) (sorted by key, merged; moved out of
 * have) with empty ones for the keys between the first and last key, or
 * the extended bounds, within the hard bounds (min_doc_count 0):
 * Elasticsearch's InternalHistogram.addEmptyBuckets. */
static int fill_empty(red *R, fds_agg_result *r, fds_agg_bucket *have, size_t nhave)
{
    const fds_agg *a = r->agg;
    size_t cap = 0;
    r->b = NULL;
    r->nb = 0;
    fds_agg_bucket lo = {0}, hi = {0}, e;
    bool any = nhave > 0;
    if (any) {
        lo = have[0];
        hi = have[nhave - 1];
    }
    if (a->has_ext && isfinite(a->ext_min)) {
        round_key(a, a->ext_min, &e);
        if (!any || key_lt(a, &e, &lo))
            lo = e;
        if (!any)
            hi = e;
        any = true;
    }
    if (a->has_ext && isfinite(a->ext_max)) {
        round_key(a, a->ext_max, &e);
        if (!any || key_lt(a, &hi, &e))
            hi = e;
        if (!any)
            lo = e;
        any = true;
    }
    if (a->has_hard && isfinite(a->hard_min)) {
        round_key(a, a->hard_min, &e);
        if (key_lt(a, &lo, &e))
            lo = e;
    }
    if (a->has_hard && isfinite(a->hard_max)) {
        round_key(a, a->hard_max, &e);
        if (key_lt(a, &e, &hi))
            hi = e;
    }
    size_t i = 0;
    fds_agg_bucket k = lo;
    while (any && !key_lt(a, &hi, &k) && !R->rc) {
        while (i < nhave && key_lt(a, &have[i], &k)) {
            fds_agg_bucket *d = push_bucket(R, r, &cap);
            if (!d)
                return R->rc;
            *d = have[i];
            memset(&have[i++], 0, sizeof *have);
        }
        fds_agg_bucket *d = push_bucket(R, r, &cap);
        if (!d)
            return R->rc;
        if (i < nhave && !key_lt(a, &k, &have[i])) { /* this key has docs */
            *d = have[i];
            memset(&have[i++], 0, sizeof *have);
        } else {
            d->key_l = k.key_l;
            d->key_d = k.key_d;
            if (reduce_subs(R, a, d, NULL, 0))
                return R->rc;
        }
        fds_agg_bucket nk = k;
        next_key(a, &nk);
        if (!key_lt(a, &k, &nk))
            break; /* no progress (an interval below the double's precision) */
        k = nk;
    }
    for (; i < nhave; i++) { /* past the bounds: kept */
        fds_agg_bucket *d = push_bucket(R, r, &cap);
        if (!d)
            return R->rc;
        *d = have[i];
        memset(&have[i], 0, sizeof *have);
    }
    return R->rc;
}

/* top_hits (Elasticsearch's InternalTopHits.reduce): the shards' hits
 * merged in the request's order -- equal hits by segment, which is shard
 * order, then doc, as Lucene's TopDocs.merge breaks ties by shard index
 * -- and [from, from + size) of them kept; the docs summed, the best
 * score the best of the shards'.  Into r (freed on ENOMEM). */
static fds_agg_result *reduce_top_hits(red *R, fds_agg_result *r,
                                       fds_agg_result *const *in, size_t n)
{
    const fds_search_request *q = r->agg->th;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total += in[i]->nhits;
        r->count += in[i]->count;
        if (!isnan(in[i]->max_score) && !(in[i]->max_score <= r->max_score))
            r->max_score = in[i]->max_score;
    }
    fds_agg_hit *all = malloc((total ? total : 1) * sizeof *all);
    if (!all) {
        fds_agg_result_free(r);
        R->rc = FDS_ENOMEM;
        return NULL;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i]->nhits) /* no hits: hits may be NULL */
            memcpy(all + m, in[i]->hits, in[i]->nhits * sizeof *all);
        m += in[i]->nhits;
    }
    qsort_r(all, m, sizeof *all, agg_hit_cmp, (void *)q);
    size_t from = q->from < m ? q->from : m;
    size_t keep = m - from < q->size ? m - from : q->size;
    memmove(all, all + from, keep * sizeof *all);
    r->hits = all;
    r->nhits = keep;
    return r;
}

static fds_agg_result *reduce(red *R, const fds_agg *a,
                              fds_agg_result *const *in, size_t n)
{
    fds_agg_result *r = result_new(a);
    if (!r) {
        R->rc = FDS_ENOMEM;
        return NULL;
    }
    r->reduced = true;
    if (a->type == FDS_AGG_TOP_HITS)
        return reduce_top_hits(R, r, in, n);
    if (fds_agg_is_metric(a->type)) {
        double sc = 0, qc = 0;
        for (size_t i = 0; i < n; i++) {
            r->count += in[i]->count;
            kahan(&r->sum, &sc, in[i]->sum);
            kahan(&r->sumsq, &qc, in[i]->sumsq);
            r->min = fmin(r->min, in[i]->min);
            r->max = fmax(r->max, in[i]->max);
            int rc = 0;
            if (in[i]->hll) {
                if (!r->hll && !(r->hll = fds_hll_create(a->precision_threshold)))
                    rc = FDS_ENOMEM;
                rc = rc ? rc : fds_hll_merge(r->hll, in[i]->hll);
            }
            if (in[i]->td) {
                if (!r->td && !(r->td = fds_tdigest_create(a->compression)))
                    rc = FDS_ENOMEM;
                rc = rc ? rc : fds_tdigest_merge(r->td, in[i]->td);
            }
            if (rc) {
                fds_agg_result_free(r);
                R->rc = rc == FDS_ENOMEM ? rc : fds_err_setk(R->err, rc,
                                                             FDS_KIND_INTERNAL,
                                                             "sketches do not merge");
                return NULL;
            }
        }
        return r;
    }
    size_t nstatic = a->type == FDS_AGG_RANGE || a->type == FDS_AGG_DATE_RANGE
                         ? a->nranges
                   : a->type == FDS_AGG_FILTERS ? a->nfilters + a->other_bucket
                   : a->type == FDS_AGG_FILTER || a->type == FDS_AGG_MISSING ||
                           a->type == FDS_AGG_ROOT ? 1 : 0;
    if (nstatic) {
        r->b = calloc(nstatic, sizeof *r->b);
        fds_agg_bucket **src = malloc((n + 1) * sizeof *src);
        if (!r->b || !src) {
            free(src);
            fds_agg_result_free(r);
            R->rc = FDS_ENOMEM;
            return NULL;
        }
        r->nb = nstatic;
        if (a->type != FDS_AGG_ROOT && a->type != FDS_AGG_FILTER &&
            a->type != FDS_AGG_MISSING)
            count_buckets(R, nstatic);
        for (size_t b = 0; b < nstatic && !R->rc; b++) {
            r->b[b].key_l = (int64_t)b;
            for (size_t i = 0; i < n; i++) {
                src[i] = &in[i]->b[b];
                r->b[b].doc_count += in[i]->b[b].doc_count;
            }
            reduce_subs(R, a, &r->b[b], src, n);
        }
        free(src);
        if (R->rc) {
            fds_agg_result_free(r);
            return NULL;
        }
        return r;
    }
    /* terms keys have the type of the field in each index: the answer takes
     * it from an index where the field is mapped; two different key types
     * cannot merge (Elasticsearch refuses them too) */
    if (a->type == FDS_AGG_TERMS) {
        const fds_agg *ka = NULL;
        for (size_t i = 0; i < n; i++) {
            const fds_agg *ia = in[i]->agg;
            if (!in[i]->nb || ia->unmapped)
                continue;
            if (ka && key_class(ka) != key_class(ia)) {
                fds_agg_result_free(r);
                R->rc = fds_err_setk(R->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                     "Merging/Reducing the aggregations failed "
                                     "when computing the aggregation [%s] because "
                                     "the field you gave in the aggregation query "
                                     "existed as two different types in two "
                                     "different indices", a->name);
                return NULL;
            }
            ka = ka ? ka : ia;
        }
        if (ka) {
            r->agg = ka;
            r->key_double = ka->ftype == FDS_FT_DOUBLE;
        }
    }
    /* keyed buckets: every shard's, sorted by key, equal keys merged */
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += in[i]->nb;
    sref *all = malloc((total + 1) * sizeof *all);
    fds_agg_bucket *m = calloc(total + 1, sizeof *m);
    fds_agg_bucket **src = malloc((n + 1) * sizeof *src);
    if (!all || !m || !src) {
        free(all);
        free(m);
        free(src);
        fds_agg_result_free(r);
        R->rc = FDS_ENOMEM;
        return NULL;
    }
    size_t k = 0;
    int64_t err = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < in[i]->nb; j++)
            all[k++] = (sref){&in[i]->b[j], in[i]};
        if (a->type == FDS_AGG_TERMS) {
            int64_t e = shard_error(in[i]);
            err = err < 0 || e < 0 ? -1 : err + e;
            r->other_doc_count += in[i]->other_doc_count;
        }
    }
    r->nshards = (uint32_t)n;
    r->err = n == 1 ? 0 : err; /* InternalTerms: one shard, no error */
    qsort_r(all, k, sizeof *all, sref_cmp, r);
    size_t nm = 0;
    for (size_t i = 0; i < k && !R->rc;) {
        size_t j = i, ns = 0;
        fds_agg_bucket *d = &m[nm++];
        d->key_l = all[i].b->key_l;
        d->key_d = all[i].b->key_d;
        const fds_agg_ckey *sck = all[i].b->ck;
        if (sck && (d->ck = calloc(a->nsrcs, sizeof *d->ck))) {
            for (size_t k = 0; k < a->nsrcs; k++) {
                d->ck[k] = sck[k];
                if (sck[k].s && (d->ck[k].s = malloc(sck[k].len + 1)))
                    memcpy(d->ck[k].s, sck[k].s, sck[k].len + 1);
                else if (sck[k].s)
                    R->rc = FDS_ENOMEM;
            }
        } else if (sck) {
            R->rc = FDS_ENOMEM;
        }
        if (all[i].b->key_s) {
            d->key_len = all[i].b->key_len;
            if (!(d->key_s = malloc(d->key_len + 1))) {
                R->rc = FDS_ENOMEM;
                break;
            }
            memcpy(d->key_s, all[i].b->key_s, d->key_len + 1);
        }
        while (j < k && !key_cmp(r, all[i].b, all[j].b)) {
            d->doc_count += all[j].b->doc_count;
            src[ns++] = all[j++].b;
        }
        reduce_subs(R, a, d, src, ns);
        i = j;
    }
    free(all);
    free(src);
    r->b = m;
    r->nb = nm;
    if (R->rc) {
        fds_agg_result_free(r);
        return NULL;
    }
    /* min_doc_count (histograms: 0 fills the gaps) */
    if (a->min_doc_count > 0) {
        size_t w = 0;
        for (size_t i = 0; i < r->nb; i++) {
            if (r->b[i].doc_count >= a->min_doc_count) {
                r->b[w++] = r->b[i];
                continue;
            }
            bucket_clear(a, &r->b[i]);
        }
        r->nb = w;
    } else if (a->type != FDS_AGG_TERMS && a->type != FDS_AGG_COMPOSITE) {
        fds_agg_bucket *have = r->b;
        size_t nhave = r->nb;
        fill_empty(R, r, have, nhave);
        for (size_t i = 0; i < nhave; i++) { /* any not moved (on error) */
            bucket_clear(a, &have[i]);
        }
        free(have);
        if (R->rc) {
            fds_agg_result_free(r);
            return NULL;
        }
    }
    if (a->type == FDS_AGG_TERMS || a->norder)
        qsort_r(r->b, r->nb, sizeof *r->b, order_cmp, r);
    if (a->type == FDS_AGG_TERMS) {
        while (r->nb > a->size) {
            fds_agg_bucket *bk = &r->b[--r->nb];
            r->other_doc_count += bk->doc_count;
            bucket_clear(a, bk);
        }
    }
    if (a->type == FDS_AGG_COMPOSITE)
        composite_page(r);
    if (count_buckets(R, r->nb)) {
        fds_agg_result_free(r);
        return NULL;
    }
    return r;
}

void fds_aggs_rebase(fds_agg_result *r, uint32_t seg0)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nhits; i++)
        r->hits[i].h.seg += seg0;
    for (size_t i = 0; i < r->nb; i++)
        for (size_t k = 0; r->b[i].subs && k < r->agg->nsubs; k++)
            fds_aggs_rebase(r->b[i].subs[k], seg0);
}

int fds_aggs_reduce(const fds_agg *root, fds_agg_result *const *in, size_t n,
                    fds_agg_result **out, fds_err *err)
{
    red R = {.err = err};
    *out = reduce(&R, root, in, n);
    if (!*out && !R.rc)
        R.rc = FDS_ENOMEM;
    if (R.rc) {
        fds_agg_result_free(*out);
        *out = NULL;
        if (R.rc == FDS_ENOMEM)
            fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        return R.rc;
    }
    return 0;
}

/* ---- date formatting ------------------------------------------------------------ */

/* One pattern (fds__date_format_parse's letters) into out. */
static size_t format_pattern(const char *p, int64_t ms, const fds_tz *zone,
                             char *out, size_t cap)
{
    int64_t tz = fds__tz_offset(zone, ms);
    int64_t local = ms + tz;
    int64_t in_day, days = fds_days_from_ms(local, &in_day);
    int64_t y;
    unsigned mo, d;
    fds_civil_from_days(days, &y, &mo, &d);
    size_t o = 0;
    for (size_t i = 0; p[i];) {
        char ch = p[i];
        size_t run = 1;
        while (p[i + run] == ch)
            run++;
        char tmp[64];
        int w = 0;
        if (ch == '\'') {
            size_t j = i + 1;
            while (p[j] && p[j] != '\'')
                j++;
            w = snprintf(tmp, sizeof tmp, "%.*s", (int)(j - i - 1), p + i + 1);
            run = j - i + (p[j] == '\'');
        } else if (ch == 'y' || ch == 'u') {
            w = run == 2 ? snprintf(tmp, sizeof tmp, "%02lld", (long long)(y % 100))
                         : snprintf(tmp, sizeof tmp, "%0*lld", (int)run, (long long)y);
        } else if (ch == 'M') {
            w = run >= 4 ? snprintf(tmp, sizeof tmp, "%s", fds_month_name(mo))
              : run == 3 ? snprintf(tmp, sizeof tmp, "%.3s", fds_month_name(mo))
                         : snprintf(tmp, sizeof tmp, "%0*u", (int)run, mo);
        } else if (ch == 'd') {
            w = snprintf(tmp, sizeof tmp, "%0*u", (int)run, d);
        } else if (ch == 'H') {
            w = snprintf(tmp, sizeof tmp, "%0*lld", (int)run,
                         (long long)(in_day / 3600000));
        } else if (ch == 'm') {
            w = snprintf(tmp, sizeof tmp, "%0*lld", (int)run,
                         (long long)(in_day / 60000 % 60));
        } else if (ch == 's') {
            w = snprintf(tmp, sizeof tmp, "%0*lld", (int)run,
                         (long long)(in_day / 1000 % 60));
        } else if (ch == 'S') { /* fraction: the milliseconds, then zeros */
            char f[4];
            snprintf(f, sizeof f, "%03u", (unsigned)(in_day % 1000));
            for (w = 0; w < (int)run && w < (int)sizeof tmp - 1; w++)
                tmp[w] = w < 3 ? f[w] : '0';
            tmp[w] = 0;
        } else if (ch == 'Z' || ch == 'X' || ch == 'x') {
            int64_t m = tz / 60000, am = m < 0 ? -m : m;
            if (ch == 'X' && !tz)
                w = snprintf(tmp, sizeof tmp, "Z");
            else if (run >= 3 || ch == 'Z')
                w = snprintf(tmp, sizeof tmp, ch == 'Z' && run < 3 ? "%c%02lld%02lld"
                                                                  : "%c%02lld:%02lld",
                             m < 0 ? '-' : '+', (long long)(am / 60),
                             (long long)(am % 60));
            else
                w = snprintf(tmp, sizeof tmp, "%c%02lld%02lld", m < 0 ? '-' : '+',
                             (long long)(am / 60), (long long)(am % 60));
        } else if (ch == 'E') {
            static const char *const DAYS[] = {"Thu", "Fri", "Sat", "Sun",
                                               "Mon", "Tue", "Wed"};
            w = snprintf(tmp, sizeof tmp, "%s", DAYS[((days % 7) + 7) % 7]);
        } else {
            w = snprintf(tmp, sizeof tmp, "%.*s", (int)run, p + i);
        }
        if (w < 0 || o + (size_t)w + 1 > cap)
            return 0;
        memcpy(out + o, tmp, (size_t)w);
        o += (size_t)w;
        i += run;
    }
    out[o] = 0;
    return o;
}

size_t fds_agg_date_format(int64_t ms, const fds_date_format *f, const fds_tz *tz,
                           char *out, size_t cap)
{
    if (f && f->npat)
        return format_pattern(f->pat[0], ms, tz, out, cap);
    unsigned bits = f ? f->bits : FDS_DF_DEFAULT;
    int w;
    if (bits & FDS_DF_ISO)
        return format_pattern(tz->id[0] || tz->fixed_ms ? "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
                                                        : "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'",
                              ms, tz, out, cap);
    if (bits & FDS_DF_DATE)
        return format_pattern("yyyy-MM-dd", ms, tz, out, cap);
    if (bits & FDS_DF_EPOCH_SECOND && !(bits & FDS_DF_EPOCH_MILLIS))
        w = snprintf(out, cap, "%lld", (long long)fds_floor_div(ms, 1000));
    else
        w = snprintf(out, cap, "%lld", (long long)ms);
    return w > 0 && (size_t)w < cap ? (size_t)w : 0;
}
