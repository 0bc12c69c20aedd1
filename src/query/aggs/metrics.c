/*
 * metrics.c: collection of the metric aggregations over a batch of docs
 * -- value_count, sum, avg, min, max, stats and extended_stats in
 * compensated sums (runs of one owner in lanes), cardinality into
 * HyperLogLog++ sketches, percentiles into t-digests, and top_hits into a
 * heap of the best from + size hits per owner, ordered as the search
 * orders its page (Elasticsearch's TopHitsAggregator).
 */
#include "aggs/aggs_int.h"
#include "exec/reader_cache.h"

/* The hash of ordinal ord of the segment's keyword field, computed once
 * per segment set (or search): a term whose hash is 0 is hashed every
 * time, which changes nothing but its cost.  Searches on other threads
 * may fill the same entry, with the same value: relaxed atomics. */
static inline uint64_t ord_hash(fds__anode *n, uint32_t ord)
{
    uint64_t h = atomic_load_explicit(&n->ordhash[ord], memory_order_relaxed);
    if (!h) {
        uint32_t len;
        const char *s = fds__sidx_term_str(n->f, ord, &len);
        h = fds_hll_hash_bytes(s, len);
        atomic_store_explicit(&n->ordhash[ord], h, memory_order_relaxed);
    }
    return h;
}

typedef struct hashes_arg {
    uint32_t nterms;
} hashes_arg;

static int hashes_build(void *arg, void **val, size_t *bytes)
{
    const hashes_arg *b = arg;
    *bytes = (size_t)b->nterms * sizeof(uint64_t);
    *val = calloc(b->nterms, sizeof(uint64_t)); /* zero pages until used */
    return *val ? 0 : FDS_ENOMEM;
}

int fds__aggs_term_hashes(const fds_search_segment *seg, const char *field,
                          const fds_sfield *f, _Atomic uint64_t **out,
                          bool *owned)
{
    hashes_arg b = {f->nterms};
    void *v;
    int rc = fds__rcache_get(seg->cache, "term hashes", field, seg, 1, hashes_build,
                             free, &b, &v, owned);
    *out = v;
    return rc;
}

/* The bitset of owner o's ordinals in this segment (Elasticsearch's
 * CardinalityAggregator.OrdinalsCollector), made on first use while all
 * of the node's bitsets stay within FDS__AGG_ORDBITS_MAX bytes; NULL
 * past that (or on ENOMEM): hash each value. */
static uint64_t *ord_bits(fds__anode *n, uint32_t o)
{
    if (o < n->nobits && n->obits[o])
        return n->obits[o];
    size_t words = ((size_t)n->f->nterms + 63) / 64;
    if ((size_t)(n->obits_live + 1) * words * 8 > FDS__AGG_ORDBITS_MAX)
        return NULL;
    if (o >= n->nobits) {
        uint32_t nc = n->nobits ? n->nobits : 16;
        while (nc <= o)
            nc *= 2;
        uint64_t **t = realloc(n->obits, nc * sizeof *t);
        if (!t)
            return NULL;
        memset(t + n->nobits, 0, (nc - n->nobits) * sizeof *t);
        n->obits = t;
        n->nobits = nc;
    }
    if ((n->obits[o] = calloc(words, 8)))
        n->obits_live++;
    return n->obits[o];
}

int fds__aggs_card_flush(fds__anode *n)
{
    int rc = 0;
    for (uint32_t o = 0; o < n->nobits; o++) {
        uint64_t *bits = n->obits[o];
        if (!bits)
            continue;
        size_t words = ((size_t)n->f->nterms + 63) / 64;
        for (size_t w = 0; w < words && !rc; w++)
            for (uint64_t x = bits[w]; x && !rc; x &= x - 1) {
                uint32_t ord = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
                if (!n->m_hll[o] && !(n->m_hll[o] = fds_hll_create(n->a->precision_threshold)))
                    rc = FDS_ENOMEM;
                else
                    rc = fds_hll_add(n->m_hll[o], ord_hash(n, ord));
            }
        free(bits);
        n->obits[o] = NULL;
    }
    n->obits_live = 0;
    return rc;
}

/* The ordinal of keyword doc d of the segment into its owner's bitset, or
 * (no room for one) its term's hash into the owner's sketch. */
static inline void card_ord_slow(fds__aggs_run *r, fds__anode *n, uint32_t o,
                                 uint32_t ord)
{
    uint64_t *bits = ord_bits(n, o);
    if (bits) {
        bits[ord / 64] |= 1ull << (ord % 64);
    } else if (!n->m_hll[o] && !(n->m_hll[o] = fds_hll_create(n->a->precision_threshold))) {
        r->rc = FDS_ENOMEM;
        return;
    } else if (fds_hll_add(n->m_hll[o], ord_hash(n, ord))) {
        r->rc = FDS_ENOMEM;
        return;
    }
    n->m_count[o]++;
}

/* Docs ahead whose bitset word card_ords asks for. */
#define CARD_PREFETCH 8

/* cardinality of a keyword column without `missing` over a batch: the
 * batch's ordinals read first (the column in order), then each set in
 * its owner's bitset with the word of a later doc asked for ahead (an
 * owner's bitset of a wide field outgrows the caches: 500 KiB for the
 * urls of 10M docs); runs of docs of one owner (most of a log's docs
 * fall in one bucket of a terms on status) keep their count in a
 * register until the run ends. */
static void card_ords(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                      const uint32_t *own, size_t cnt)
{
    const fds_sfield *f = n->f;
    const bool allp = n->allp;
    uint32_t ords[FDS__COLLECT_BATCH], owner[FDS__COLLECT_BATCH];
    for (size_t i0 = 0; i0 < cnt && !r->rc; i0 += FDS__COLLECT_BATCH) {
        size_t m = 0, end = cnt - i0 < FDS__COLLECT_BATCH ? cnt : i0 + FDS__COLLECT_BATCH;
        for (size_t i = i0; i < end; i++) {
            uint32_t d = docs[i];
            uint32_t ord = allp || fds__bit(f->present, d) ? fds__col_ord(f, d)
                                                            : FDS_SIDX_NO_ORD;
            ords[m] = ord;
            owner[m] = own ? own[i] : 0;
            m += ord != FDS_SIDX_NO_ORD;
        }
        uint32_t cur = UINT32_MAX;
        uint64_t *bits = NULL, run = 0;
        for (size_t j = 0; j < m && !r->rc; j++) {
            uint32_t o = owner[j], ord = ords[j];
            if (j + CARD_PREFETCH < m) {
                uint32_t po = owner[j + CARD_PREFETCH];
                const uint64_t *pb = po == cur ? bits : po < n->nobits ? n->obits[po] : NULL;
                if (pb)
                    __builtin_prefetch(&pb[ords[j + CARD_PREFETCH] / 64], 1);
            }
            if (o != cur) {
                if (run)
                    n->m_count[cur] += run;
                run = 0;
                cur = o;
                bits = ord_bits(n, o);
            }
            if (!bits) {
                card_ord_slow(r, n, o, ord);
                continue;
            }
            bits[ord / 64] |= 1ull << (ord % 64);
            run++;
        }
        if (run)
            n->m_count[cur] += run;
    }
}

/* cardinality over a batch: each value's hash into its owner's sketch
 * (Elasticsearch's hashes: MurmurHash3 of a keyword's bytes, mix64 of a
 * long, of a double's bits); a keyword's ordinals into the owner's bitset
 * first when it has one (hashed at the segment's end, each term once). */
static void collect_cardinality(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                                const uint32_t *own, size_t cnt)
{
    const fds_agg *a = n->a;
    const fds_sfield *f = n->f;
    if (a->ftype == FDS_FT_KEYWORD && f && f->col && !a->has_missing) {
        card_ords(r, n, docs, own, cnt);
        return;
    }
    for (size_t i = 0; i < cnt && !r->rc; i++) {
        uint32_t d = docs[i], o = own ? own[i] : 0;
        uint64_t h;
        if (a->ftype == FDS_FT_KEYWORD) {
            uint32_t ord = f && f->col && fds__bit(f->present, d) ? fds__col_ord(f, d)
                                                                  : FDS_SIDX_NO_ORD;
            if (ord != FDS_SIDX_NO_ORD) {
                uint64_t *bits = ord_bits(n, o);
                if (bits) {
                    bits[ord / 64] |= 1ull << (ord % 64);
                    n->m_count[o]++;
                    continue;
                }
                h = ord_hash(n, ord);
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
static void collect_digest(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
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

/* Does top_hits request q read scores (by _score, or track_scores)? */
bool fds__aggs_th_needs_score(const fds_search_request *q)
{
    bool need = q->nsort == 0 || q->track_scores;
    for (unsigned k = 0; k < q->nsort; k++)
        need |= q->sort[k].kind == FDS_SORT_SCORE;
    return need;
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
static int th_offer(fds__anode *n, uint32_t o, fds_hit *h)
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
 * offered once (fds__aggs_th_flush). */
static bool th_fast(const fds__anode *n)
{
    const fds_search_request *q = n->a->th;
    const fds_sfield *f = n->th_sf[0];
    return !fds__aggs_th_needs_score(q) && q->from == 0 && q->size == 1 && q->nsort == 1 &&
           q->sort[0].kind == FDS_SORT_FIELD && f && f->col &&
           f->kind != FDS_FT_KEYWORD && f->kind != FDS_FT_DOUBLE;
}

/* The segment's best doc of each owner (th_fast) to the heaps, and the
 * bests cleared.  0 or FDS_ENOMEM. */
int fds__aggs_th_flush(fds__anode *n)
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

static void collect_top_hits(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                             const uint32_t *own, size_t cnt)
{
    const fds_search_request *q = n->a->th;
    size_t k = (size_t)q->from + q->size;
    bool scored = fds__aggs_th_needs_score(q);
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

/* Docs ahead of the one read whose value an exact integer run asks the
 * memory for (a query's docs lie far apart in the column). */
#define METRIC_PREFETCH 32u

/* sum/avg/min/max/stats/extended_stats of the k docs `docs` (all of one
 * owner o, every doc valued: n->allp, no `missing`) into o's state. */
void fds__aggs_metric_run(fds__anode *n, const uint32_t *docs, size_t k, uint32_t o,
                          bool sq)
{
    const fds_sfield *f = n->f;
    const bool dbl = f->kind == FDS_FT_DOUBLE;
    if (!dbl && !sq && n->int_exact && k) {
        /* every sum of the search's values is an exact double
         * (int_exact): summed as integers, the run's total is what the
         * compensated sum of its values would be */
        int64_t is = 0, imn = INT64_MAX, imx = INT64_MIN;
        const unsigned w = f->num_bits == FDS_SIDX_NUM_RAW ? 64 : f->num_bits;
        for (size_t i = 0; i < k; i++) {
            /* docs of a query lie apart: their values' reads overlap */
            if (i + METRIC_PREFETCH < k)
                __builtin_prefetch(f->col + ((uint64_t)docs[i + METRIC_PREFETCH] * w >> 3));
            int64_t v = fds__col_i64(f, docs[i]);
            is += v;
            imn = v < imn ? v : imn;
            imx = v > imx ? v : imx;
        }
        kahan(&n->m_sum[o], &n->m_sumc[o], (double)is);
        n->m_count[o] += k;
        n->m_min[o] = (double)imn < n->m_min[o] ? (double)imn : n->m_min[o];
        n->m_max[o] = (double)imx > n->m_max[o] ? (double)imx : n->m_max[o];
        return;
    }
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

/* Does metric n take runs of docs by fds__aggs_metric_run (a sum-like metric over
 * a column every doc of the segment has, no `missing`)? */
bool fds__aggs_run_metric(const fds__anode *n)
{
    int t = n->a->type;
    return (t == FDS_AGG_AVG || t == FDS_AGG_SUM || t == FDS_AGG_MIN ||
            t == FDS_AGG_MAX || t == FDS_AGG_STATS ||
            t == FDS_AGG_EXTENDED_STATS) &&
           n->f && n->f->col && n->allp && !n->a->has_missing;
}

/* The metric arrays of n hold every owner of the batch: false on ENOMEM
 * (r->rc set). */
static bool owners_room(fds__aggs_run *r, fds__anode *n, const uint32_t *own,
                        size_t cnt)
{
    uint32_t mo = 0;
    for (size_t i = 0; own && i < cnt; i++)
        mo = own[i] > mo ? own[i] : mo;
    if (fds__aggs_metric_room(n, mo)) {
        r->rc = FDS_ENOMEM;
        return false;
    }
    return true;
}

void fds__aggs_collect_cardinality(fds__aggs_run *r, fds__anode *n,
                                   const uint32_t *docs, const uint32_t *own,
                                   size_t cnt)
{
    if (owners_room(r, n, own, cnt))
        collect_cardinality(r, n, docs, own, cnt);
}

void fds__aggs_collect_percentiles(fds__aggs_run *r, fds__anode *n,
                                   const uint32_t *docs, const uint32_t *own,
                                   size_t cnt)
{
    if (owners_room(r, n, own, cnt))
        collect_digest(r, n, docs, own, cnt);
}

void fds__aggs_collect_none(fds__aggs_run *r, fds__anode *n,
                            const uint32_t *docs, const uint32_t *own,
                            size_t cnt)
{
    (void)r;
    (void)n;
    (void)docs;
    (void)own;
    (void)cnt;
}

void fds__aggs_collect_top_hits(fds__aggs_run *r, fds__anode *n,
                                const uint32_t *docs, const uint32_t *own,
                                size_t cnt)
{
    if (owners_room(r, n, own, cnt))
        collect_top_hits(r, n, docs, own, cnt);
}

void fds__aggs_collect_value_count(fds__aggs_run *r, fds__anode *n,
                                   const uint32_t *docs, const uint32_t *own,
                                   size_t cnt)
{
    if (!owners_room(r, n, own, cnt))
        return;
    for (size_t i = 0; i < cnt; i++)
        if (n->a->has_missing || has_value(n, docs[i]))
            n->m_count[own ? own[i] : 0]++;
}

/* sum, avg, min, max, stats, extended_stats: runs of one owner by
 * fds__aggs_metric_run when the column allows, else doc by doc. */
void fds__aggs_collect_stats(fds__aggs_run *r, fds__anode *n,
                             const uint32_t *docs, const uint32_t *own,
                             size_t cnt)
{
    if (!owners_room(r, n, own, cnt))
        return;
    bool sq = n->a->type == FDS_AGG_EXTENDED_STATS;
    if (own && !sq && n->int_exact && fds__aggs_run_metric(n)) {
        /* under a bucket aggregation owners change from doc to doc; exact
         * integer sums need no compensation nor runs */
        const fds_sfield *f = n->f;
        for (size_t i = 0; i < cnt; i++) {
            uint32_t o = own[i];
            double v = (double)fds__col_i64(f, docs[i]);
            n->m_count[o]++;
            n->m_sum[o] += v;
            n->m_min[o] = v < n->m_min[o] ? v : n->m_min[o];
            n->m_max[o] = v > n->m_max[o] ? v : n->m_max[o];
        }
        return;
    }
    if (fds__aggs_run_metric(n)) { /* a run per owner */
        for (size_t i = 0, j; i < cnt; i = j) {
            uint32_t o = own ? own[i] : 0;
            for (j = i + 1; j < cnt && (!own || own[j] == o); j++)
                ;
            fds__aggs_metric_run(n, docs + i, j - i, o, sq);
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
