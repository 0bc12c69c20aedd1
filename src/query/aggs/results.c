/*
 * results.c: a shard's partial result -- the run's state of an
 * aggregation turned into an fds_agg_result tree that no longer refers to
 * segments (buckets grouped by owner, keys, orders, top_hits' hits and
 * explanations) -- and the orders and key comparisons that the reduce
 * shares, the result's free and metric values.
 */
#include "aggs/aggs_int.h"

/* Free what bucket bk of aggregation a holds and zero it. */
void fds__aggs_bucket_clear(const fds_agg *a, fds_agg_bucket *bk)
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
        fds__aggs_bucket_clear(r->agg, &r->b[i]);
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
int fds__aggs_key_class(const fds_agg *a)
{
    return a->ftype == FDS_FT_KEYWORD ? 0 : a->ftype == FDS_FT_DOUBLE ? 1 : 2;
}

/* Composite keys in the sources' order (each asc or desc). */
int fds__aggs_ck_cmp(const fds_agg *a, const fds_agg_ckey *x, const fds_agg_ckey *y)
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
int fds__aggs_key_cmp(const fds_agg_result *r, const fds_agg_bucket *x,
                      const fds_agg_bucket *y)
{
    const fds_agg *a = r->agg;
    if (a->type == FDS_AGG_COMPOSITE)
        return fds__aggs_ck_cmp(a, x->ck, y->ck);
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
int fds__aggs_order_cmp(const void *pa, const void *pb, void *arg)
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
            c = fds__aggs_key_cmp(r, x, y);
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
    return fds__aggs_key_cmp(r, x, y);
}

fds_agg_result *fds__aggs_result_new(const fds_agg *a)
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
static int group(fds__anode *n, uint32_t nowners)
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

static int hit_cmp(const void *x, const void *y, void *req)
{
    return fds__hit_cmp(req, x, y);
}

int fds__aggs_hit_cmp(const void *x, const void *y, void *req)
{
    return fds__hit_cmp(req, &((const fds_agg_hit *)x)->h,
                        &((const fds_agg_hit *)y)->h);
}

/* A composite's page: its buckets in key order after `after`, at most
 * `size` of them (a shard's first `size` are enough: the merged first
 * `size` are among them). */
void fds__aggs_composite_page(fds_agg_result *r)
{
    const fds_agg *a = r->agg;
    qsort_r(r->b, r->nb, sizeof *r->b, fds__aggs_order_cmp, r);
    size_t skip = 0;
    while (a->has_after && skip < r->nb && fds__aggs_ck_cmp(a, r->b[skip].ck, a->after) <= 0)
        skip++;
    for (size_t i = 0; i < skip; i++)
        fds__aggs_bucket_clear(a, &r->b[i]);
    memmove(r->b, r->b + skip, (r->nb - skip) * sizeof *r->b);
    r->nb -= skip;
    while (r->nb > a->size)
        fds__aggs_bucket_clear(a, &r->b[--r->nb]);
}

/* The subs of bucket ordinal b (UINT32_MAX: an empty bucket) into bk. */
static int build_subs(fds__anode *n, uint32_t b, fds_agg_bucket *bk)
{
    const fds_agg *a = n->a;
    bk->subs = calloc(a->nsubs + 1, sizeof *bk->subs);
    if (!bk->subs)
        return FDS_ENOMEM;
    for (size_t k = 0; k < a->nsubs; k++)
        if (!(bk->subs[k] = fds__aggs_build(n->kids[k], b,
                                  a->type == FDS_AGG_ROOT ? 1 : n->nb)))
            return FDS_ENOMEM;
    return 0;
}

/* The key of bucket ordinal b into bk. */
static int set_key(fds__anode *n, uint32_t b, fds_agg_bucket *bk)
{
    const fds_agg *a = n->a;
    uint64_t key = n->b_key[b];
    if (a->type == FDS_AGG_COMPOSITE) {
        const uint8_t *tup = (const uint8_t *)n->arena + n->soff[key];
        if (!(bk->ck = calloc(a->nsrcs, sizeof *bk->ck)))
            return FDS_ENOMEM;
        for (size_t k = 0; k < a->nsrcs; k++) {
            const fds__anode *sn = n->srcn[k];
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
    fds_agg_bucket peek;
    fds__aggs_bucket_peek(n, b, &peek);
    bk->key_l = peek.key_l;
    bk->key_d = peek.key_d;
    if (peek.key_s) {
        bk->key_len = peek.key_len;
        bk->key_s = malloc(bk->key_len + 1);
        if (!bk->key_s)
            return FDS_ENOMEM;
        memcpy(bk->key_s, peek.key_s, bk->key_len);
        bk->key_s[bk->key_len] = 0;
    }
    return 0;
}

void fds__aggs_bucket_peek(const fds__anode *n, uint32_t b, fds_agg_bucket *bk)
{
    const fds_agg *a = n->a;
    uint64_t key = n->b_key[b];
    memset(bk, 0, sizeof *bk);
    bk->doc_count = n->b_count[b];
    if (a->type == FDS_AGG_TERMS && a->ftype == FDS_FT_KEYWORD) {
        uint32_t len = n->gm ? 0 : n->slen[key];
        const char *str = n->gm ? fds__ordmap_term(n->gm, (uint32_t)key, &len)
                                : n->arena + n->soff[key];
        bk->key_s = (char *)str; /* not owned: peek only */
        bk->key_len = len;
    } else if (a->type == FDS_AGG_HISTOGRAM ||
               (a->type == FDS_AGG_TERMS && a->ftype == FDS_FT_DOUBLE)) {
        bk->key_d = bitsd(key);
    } else {
        bk->key_l = (int64_t)key;
        bk->key_d = (double)bk->key_l;
    }
}

/* Does bucket ordinal x sort after y in r's order (keys and counts
 * only)? */
static bool sorts_after(const fds__anode *n, const fds_agg_result *r,
                        uint32_t x, uint32_t y)
{
    const fds_agg *a = n->a;
    if (!a->norder || (a->norder == 1 && a->order[0].kind == FDS_AGG_ORD_COUNT)) {
        uint64_t cx = n->b_count[x], cy = n->b_count[y];
        if (cx != cy) /* by count: the keys only for ties */
            return !a->norder || a->order[0].desc ? cx < cy : cx > cy;
    }
    fds_agg_bucket bx, by;
    fds__aggs_bucket_peek(n, x, &bx);
    fds__aggs_bucket_peek(n, y, &by);
    return fds__aggs_order_cmp(&bx, &by, (void *)r) > 0;
}

/* Sift ord[j] down the heap ord[0..k) whose root sorts last. */
static void worst_down(const fds__anode *n, const fds_agg_result *r, uint32_t *ord,
                       uint32_t k, uint32_t j)
{
    for (;;) {
        uint32_t l = 2 * j + 1, w = j;
        if (l < k && sorts_after(n, r, ord[l], ord[w]))
            w = l;
        if (l + 1 < k && sorts_after(n, r, ord[l + 1], ord[w]))
            w = l + 1;
        if (w == j)
            return;
        uint32_t t = ord[j];
        ord[j] = ord[w];
        ord[w] = t;
        j = w;
    }
}

/* The k best of the m bucket ordinals ord[0..m) in r's order (by count
 * and key: no metric) into ord[0..k), a heap selection that reads the
 * keys of the few it compares instead of copying every key (a keyword
 * terms over millions of terms keeps shard_size of them).  Returns the
 * doc count of those left out. */
static uint64_t select_best(const fds__anode *n, const fds_agg_result *r,
                            uint32_t *ord, uint32_t m, uint32_t k)
{
    for (uint32_t i = k / 2; i-- > 0;) /* ord[0..k): the root the worst kept */
        worst_down(n, r, ord, k, i);
    uint64_t other = 0;
    for (uint32_t i = k; i < m; i++) {
        uint32_t c = ord[i];
        if (!k || !sorts_after(n, r, ord[0], c)) {
            other += n->b_count[c];
            continue;
        }
        other += n->b_count[ord[0]];
        ord[0] = c;
        worst_down(n, r, ord, k, 0);
    }
    return other;
}

/* top_hits' result for `owner`: its heap's hits best first (with their
 * explanations when asked), the docs, the best score.  r, or NULL (r
 * freed) on ENOMEM. */
static fds_agg_result *build_top_hits(fds__anode *n, uint32_t owner,
                                      fds_agg_result *r)
{
    const fds_agg *a = n->a;
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

/* The result of n for owning bucket `owner` (UINT32_MAX: empty), of
 * `nowners` owners.  NULL on ENOMEM. */
fds_agg_result *fds__aggs_build(fds__anode *n, uint32_t owner, uint32_t nowners)
{
    const fds_agg *a = n->a;
    fds_agg_result *r = fds__aggs_result_new(a);
    if (!r)
        return NULL;
    r->nshards = 1;
    if (fds_agg_keeps_hits(a->type))
        return build_top_hits(n, owner, r);
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
                   : a->type == FDS_AGG_FILTER || a->type == FDS_AGG_MISSING ||
                           a->type == FDS_AGG_SAMPLER ? 1
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
            uint32_t b = fds__aggs_bucket_find(n, owner, i);
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
    bool by_metric = false;
    for (unsigned i = 0; i < a->norder; i++)
        by_metric |= a->order[i].kind == FDS_AGG_ORD_METRIC;
    /* a terms of more buckets than it keeps: the best shard_size chosen
     * first, by counts and keys, then only those built (and allocated:
     * a keyword terms may hold millions of buckets) */
    r->other_doc_count = owner == 0 ? n->fold_other : 0;
    if (a->type == FDS_AGG_TERMS && !by_metric && e - s > a->shard_size) {
        r->other_doc_count += select_best(n, r, n->grp_ord + s, e - s, a->shard_size);
        e = s + a->shard_size;
    }
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
    /* sub results are needed to order by a metric: build them all first */
    for (size_t i = 0; by_metric && i < r->nb; i++)
        if (build_subs(n, (uint32_t)r->b[i].err, &r->b[i])) {
            fds_agg_result_free(r);
            return NULL;
        }
    if (a->type == FDS_AGG_TERMS) {
        qsort_r(r->b, r->nb, sizeof *r->b, fds__aggs_order_cmp, r);
        while (r->nb > a->shard_size) {
            fds_agg_bucket *bk = &r->b[--r->nb];
            r->other_doc_count += bk->doc_count;
            fds__aggs_bucket_clear(a, bk);
        }
    }
    if (a->type == FDS_AGG_COMPOSITE)
        fds__aggs_composite_page(r);
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
