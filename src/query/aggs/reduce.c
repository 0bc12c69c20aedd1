/*
 * reduce.c: fds_aggs_reduce -- the shards' result trees merged into the
 * response's, as Elasticsearch's InternalAggregation.reduce does, each
 * type by its registry entry: InternalTerms (merge by key,
 * doc_count_error_upper_bound, sum_other_doc_count, order, size),
 * InternalHistogram / InternalDateHistogram (merge by key, min_doc_count,
 * empty buckets between the bounds: emptyBucketInfo), InternalRange,
 * InternalFilters, InternalStats / InternalExtendedStats, InternalTopHits
 * (TopDocs.merge of the shards' hits, then [from, from + size)); the
 * answer's buckets bounded by FDS_AGG_MAX_BUCKETS.
 */
#include "aggs/aggs_int.h"

struct fds__aggs_red {
    fds_err *err;
    uint64_t buckets; /* in the answer so far */
    int rc;
};

static fds_agg_result *reduce(fds__aggs_red *R, const fds_agg *a,
                              fds_agg_result *const *in, size_t n);

static int count_buckets(fds__aggs_red *R, size_t nb)
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
static int reduce_subs(fds__aggs_red *R, const fds_agg *a, fds_agg_bucket *dst,
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
    return fds__aggs_key_cmp(arg, ((const sref *)x)->b, ((const sref *)y)->b);
}

/* Empty bucket after key k of a histogram (for min_doc_count 0). */
static void next_key(const fds_agg *a, fds_agg_bucket *k)
{
    if (a->type == FDS_AGG_DATE_HISTOGRAM) {
        k->key_l = fds__aggs_date_next(a, k->key_l);
        k->key_d = (double)k->key_l;
    } else {
        /* Elasticsearch's InternalHistogram.nextKey: rounding half an
         * interval past the next key, so that the key's rounding error
         * cannot give the same key again */
        k->key_d = fds__aggs_histo_key(a, k->key_d + a->interval + a->interval / 2);
    }
}

static void round_key(const fds_agg *a, double v, fds_agg_bucket *k)
{
    if (a->type == FDS_AGG_DATE_HISTOGRAM) {
        double c = fmax(fmin(v, 0x1p62), -0x1p62);
        k->key_l = fds__aggs_date_key(a, (int64_t)c);
        k->key_d = (double)k->key_l;
    } else {
        k->key_d = fds__aggs_histo_key(a, v);
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
static fds_agg_bucket *push_bucket(fds__aggs_red *R, fds_agg_result *r, size_t *cap)
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
static int fill_empty(fds__aggs_red *R, fds_agg_result *r, fds_agg_bucket *have, size_t nhave)
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
fds_agg_result *fds__aggs_reduce_top_hits(fds__aggs_red *R, fds_agg_result *r,
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
    qsort_r(all, m, sizeof *all, fds__aggs_hit_cmp, (void *)q);
    size_t from = q->from < m ? q->from : m;
    size_t keep = m - from < q->size ? m - from : q->size;
    memmove(all, all + from, keep * sizeof *all);
    r->hits = all;
    r->nhits = keep;
    return r;
}

static fds_agg_result *reduce(fds__aggs_red *R, const fds_agg *a,
                              fds_agg_result *const *in, size_t n)
{
    fds_agg_result *r = fds__aggs_result_new(a);
    if (!r) {
        R->rc = FDS_ENOMEM;
        return NULL;
    }
    r->reduced = true;
    return a->kind->reduce(R, r, in, n);
}

/* Metrics (InternalStats, InternalExtendedStats, InternalCardinality,
 * InternalTDigestPercentiles): counts, compensated sums, min, max and the
 * sketches merged. */
fds_agg_result *fds__aggs_reduce_metric(fds__aggs_red *R, fds_agg_result *r,
                                        fds_agg_result *const *in, size_t n)
{
    const fds_agg *a = r->agg;
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

/* Buckets fixed by the request (InternalRange, InternalFilters,
 * InternalFilter, InternalMissing, the root): bucket i of every shard
 * into bucket i. */
fds_agg_result *fds__aggs_reduce_fixed(fds__aggs_red *R, fds_agg_result *r,
                                       fds_agg_result *const *in, size_t n)
{
    const fds_agg *a = r->agg;
    size_t nstatic = a->type == FDS_AGG_RANGE || a->type == FDS_AGG_DATE_RANGE
                         ? a->nranges
                   : a->type == FDS_AGG_FILTERS ? a->nfilters + a->other_bucket
                   : a->type == FDS_AGG_FILTER || a->type == FDS_AGG_MISSING ||
                           a->type == FDS_AGG_SAMPLER || a->type == FDS_AGG_ROOT ? 1 : 0;
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
            a->type != FDS_AGG_MISSING && a->type != FDS_AGG_SAMPLER)
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
    /* no buckets (filters of none): as a keyed aggregation with none */
    return fds__aggs_reduce_keyed(R, r, in, n);
}

/* The key type of a terms answer: that of an index where the field is
 * mapped or has a `missing` value (its default type, keyword), set on r.  0, or FDS_EINVAL when two indices' key types differ
 * (R->rc set). */
static int terms_key_type(fds__aggs_red *R, fds_agg_result *r,
                          fds_agg_result *const *in, size_t n)
{
    const fds_agg *a = r->agg;
    const fds_agg *ka = NULL;
    for (size_t i = 0; i < n; i++) {
        const fds_agg *ia = in[i]->agg;
        if (!in[i]->nb || (ia->unmapped && !ia->has_missing))
            continue;
        if (ka && fds__aggs_key_class(ka) != fds__aggs_key_class(ia))
            return R->rc = fds_err_setk(R->err, FDS_EINVAL,
                                        FDS_KIND_INVALID_ARGUMENT,
                                        "Merging/Reducing the aggregations "
                                        "failed when computing the aggregation "
                                        "[%s] because the field you gave in "
                                        "the aggregation query existed as two "
                                        "different types in two different "
                                        "indices", a->name);
        ka = ka ? ka : ia;
    }
    if (ka) {
        r->agg = ka;
        r->key_double = ka->ftype == FDS_FT_DOUBLE;
    }
    return 0;
}

/* The merged buckets of r finished: min_doc_count applied or the empty
 * buckets filled, ordered, terms cut to size (the rest counted in
 * sum_other_doc_count), a composite's page.  r, or NULL (r freed, R->rc
 * set). */
static fds_agg_result *keyed_finish(fds__aggs_red *R, const fds_agg *a,
                                    fds_agg_result *r)
{
    /* min_doc_count (histograms: 0 fills the gaps) */
    if (a->min_doc_count > 0) {
        size_t w = 0;
        for (size_t i = 0; i < r->nb; i++) {
            if (r->b[i].doc_count >= a->min_doc_count) {
                r->b[w++] = r->b[i];
                continue;
            }
            fds__aggs_bucket_clear(a, &r->b[i]);
        }
        r->nb = w;
    } else if (a->type != FDS_AGG_TERMS && a->type != FDS_AGG_COMPOSITE) {
        fds_agg_bucket *have = r->b;
        size_t nhave = r->nb;
        fill_empty(R, r, have, nhave);
        for (size_t i = 0; i < nhave; i++) { /* any not moved (on error) */
            fds__aggs_bucket_clear(a, &have[i]);
        }
        free(have);
        if (R->rc) {
            fds_agg_result_free(r);
            return NULL;
        }
    }
    if (a->type == FDS_AGG_TERMS || a->norder)
        qsort_r(r->b, r->nb, sizeof *r->b, fds__aggs_order_cmp, r);
    if (a->type == FDS_AGG_TERMS) {
        while (r->nb > a->size) {
            fds_agg_bucket *bk = &r->b[--r->nb];
            r->other_doc_count += bk->doc_count;
            fds__aggs_bucket_clear(a, bk);
        }
    }
    if (a->type == FDS_AGG_COMPOSITE)
        fds__aggs_composite_page(r);
    if (count_buckets(R, r->nb)) {
        fds_agg_result_free(r);
        return NULL;
    }
    return r;
}

/* Keyed buckets (InternalTerms, InternalHistogram, InternalDateHistogram,
 * InternalComposite): the shards' buckets merged by key, then
 * min_doc_count or the empty buckets filled, the order, terms cut to
 * size, a composite's page. */
fds_agg_result *fds__aggs_reduce_keyed(fds__aggs_red *R, fds_agg_result *r,
                                       fds_agg_result *const *in, size_t n)
{
    const fds_agg *a = r->agg;
    /* terms keys have the type of the field in each index: the answer takes
     * it from an index where the field is mapped; two different key types
     * cannot merge (Elasticsearch refuses them too) */
    if (a->type == FDS_AGG_TERMS && terms_key_type(R, r, in, n)) {
        fds_agg_result_free(r);
        return NULL;
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
        while (j < k && !fds__aggs_key_cmp(r, all[i].b, all[j].b)) {
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
    return keyed_finish(R, a, r);
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

/* ---- parent pipelines ------------------------------------------------------ */

/* The value a pipeline's buckets_path names in bucket bk, as
 * BucketHelpers.resolveBucketValue gives it under gap policy `gap`: the
 * doc count (`_count`) is always the bucket's, 0 included ("doc count
 * never has missing values so gap policy doesn't apply here"); a metric
 * of a bucket without docs or without a finite value is NaN (skip), 0
 * (insert_zeros) or keeps a finite value (keep_values). */
static double path_value(const fds_agg *p, const fds_agg_bucket *bk, int gap)
{
    if (p->bp_count)
        return (double)bk->doc_count;
    double v = fds_agg_metric_value(bk->subs[p->bp_sub], p->bp_stat);
    if (isfinite(v) && bk->doc_count)
        return v;
    if (gap == FDS_GAP_INSERT_ZEROS)
        return 0;
    return gap == FDS_GAP_KEEP_VALUES && isfinite(v) ? v : NAN;
}

/* MovingFunctions f over v[0..n) (all finite). */
static double moving_function(int f, const double *v, size_t n)
{
    double acc = 0, w = 0;
    switch (f) {
    case FDS_MFN_MAX:
    case FDS_MFN_MIN:
        if (!n)
            return NAN;
        acc = v[0];
        for (size_t i = 1; i < n; i++)
            acc = f == FDS_MFN_MAX ? fmax(acc, v[i]) : fmin(acc, v[i]);
        return acc;
    case FDS_MFN_SUM:
        for (size_t i = 0; i < n; i++)
            acc += v[i];
        return acc;
    case FDS_MFN_LINEAR_WEIGHTED_AVG: /* weights 1, 2, .. n, oldest first */
        for (size_t i = 0; i < n; i++) {
            acc += v[i] * (double)(i + 1);
            w += (double)(i + 1);
        }
        return n ? acc / w : NAN;
    case FDS_MFN_STD_DEV: { /* stdDev(values, unweightedAvg(values)) */
        double avg = moving_function(FDS_MFN_UNWEIGHTED_AVG, v, n);
        for (size_t i = 0; i < n; i++)
            acc += (v[i] - avg) * (v[i] - avg);
        return n ? sqrt(acc / (double)n) : NAN;
    }
    default: /* FDS_MFN_UNWEIGHTED_AVG */
        for (size_t i = 0; i < n; i++)
            acc += v[i];
        return n ? acc / (double)n : NAN;
    }
}

/* moving_fn (MovFnPipelineAggregator): the values of the buckets that
 * have one, in order; each such bucket gets f over the window
 * [index - window + shift, index + shift) of that list, clamped.  0 or
 * FDS_ENOMEM. */
static int moving_fn_run(fds_agg_result *r, size_t k)
{
    const fds_agg *p = r->agg->subs[k];
    double *vals = malloc((r->nb ? r->nb : 1) * sizeof *vals);
    if (!vals)
        return FDS_ENOMEM;
    size_t nv = 0;
    for (size_t i = 0; i < r->nb; i++) {
        double v = path_value(p, &r->b[i], p->gap);
        if (!isnan(v))
            vals[nv++] = v;
    }
    size_t index = 0;
    for (size_t i = 0; i < r->nb; i++) {
        fds_agg_result *out = r->b[i].subs ? r->b[i].subs[k] : NULL;
        if (!out)
            continue;
        out->count = 0;
        out->max = NAN;
        if (isnan(path_value(p, &r->b[i], p->gap)))
            continue;
        int64_t lo = (int64_t)index - p->window + p->shift, hi = (int64_t)index + p->shift;
        lo = lo < 0 ? 0 : lo > (int64_t)nv ? (int64_t)nv : lo;
        hi = hi < 0 ? 0 : hi > (int64_t)nv ? (int64_t)nv : hi;
        out->count = 1;
        out->sum = moving_function(p->mfn, vals + lo, hi > lo ? (size_t)(hi - lo) : 0);
        index++;
    }
    free(vals);
    return 0;
}

/* Pipeline sub k of histogram result r computed over its buckets in key
 * order (DerivativePipelineAggregator, CumulativeSumPipelineAggregator,
 * SerialDiffPipelineAggregator):
 * each bucket's result gets `count` 1 when it shows the value at all (not
 * a derivative's first bucket), the value in `sum` (NaN: null) and a
 * derivative's value per `unit` in `max`. */
static void pipeline_run(fds_agg_result *r, size_t k)
{
    const fds_agg *p = r->agg->subs[k];
    bool date = r->agg->type == FDS_AGG_DATE_HISTOGRAM;
    double acc = 0, last = NAN, last_key = 0;
    for (size_t i = 0; i < r->nb; i++) {
        fds_agg_bucket *bk = &r->b[i];
        fds_agg_result *out = bk->subs ? bk->subs[k] : NULL;
        double key = date ? (double)bk->key_l : bk->key_d;
        if (!out)
            continue;
        out->count = 0;
        out->max = NAN;
        if (p->type == FDS_AGG_CUMULATIVE_SUM) {
            double v = path_value(p, bk, FDS_GAP_INSERT_ZEROS);
            if (isfinite(v))
                acc += v;
            out->count = 1;
            out->sum = acc;
            continue;
        }
        double v = path_value(p, bk, p->gap);
        if (p->type == FDS_AGG_SERIAL_DIFF) {
            /* SerialDiffPipelineAggregator: a value when this bucket's and
             * the one `lag` before's are both there, else no entry */
            double before = i >= p->lag ? path_value(p, &r->b[i - p->lag], p->gap) : NAN;
            out->count = isfinite(v) && isfinite(before);
            out->sum = v - before;
            continue;
        }
        if (i) {
            out->count = 1;
            out->sum = v - last;
            if (p->unit_ms)
                out->max = out->sum / ((key - last_key) / (double)p->unit_ms);
        }
        last = v;
        last_key = key;
    }
}

/* rate sub k of date_histogram result r (RateAggregator): per bucket the
 * field's sum (count with value_count; the docs without a field) over
 * the bucket's length in units, into `sum`; `count` 1. */
static void rate_run(fds_agg_result *r, size_t k)
{
    const fds_agg *p = r->agg->subs[k];
    int64_t len = fds__aggs_date_len(r->agg);
    double per = p->unit_ms && len ? (double)len / (double)p->unit_ms : 1;
    for (size_t i = 0; i < r->nb; i++) {
        fds_agg_result *out = r->b[i].subs ? r->b[i].subs[k] : NULL;
        if (!out)
            continue;
        double v = !p->field ? (double)r->b[i].doc_count
                 : p->rate_count ? (double)out->count : out->sum;
        out->sum = v / per;
        out->count = 1;
    }
}

/* Every parent pipeline of the tree under r computed, deepest first.  0
 * or FDS_ENOMEM. */
static int pipelines(fds_agg_result *r)
{
    if (!r)
        return 0;
    for (size_t i = 0; i < r->nb; i++)
        for (size_t k = 0; r->b[i].subs && k < r->agg->nsubs; k++)
            if (pipelines(r->b[i].subs[k]))
                return FDS_ENOMEM;
    for (size_t k = 0; k < r->agg->nsubs; k++) {
        const fds_agg *p = r->agg->subs[k];
        if (p->type == FDS_AGG_MOVING_FN) {
            if (moving_fn_run(r, k))
                return FDS_ENOMEM;
        } else if (p->type == FDS_AGG_RATE) {
            rate_run(r, k);
        } else if (p->bp) {
            pipeline_run(r, k);
        }
    }
    return 0;
}

int fds_aggs_reduce(const fds_agg *root, fds_agg_result *const *in, size_t n,
                    fds_agg_result **out, fds_err *err)
{
    fds__aggs_red R = {.err = err};
    *out = reduce(&R, root, in, n);
    if ((!*out && !R.rc) || (!R.rc && pipelines(*out)))
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
