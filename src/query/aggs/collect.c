/*
 * collect.c: the aggregations as a collector of the search's matches
 * (aggs_collector.h, exec/collector.h): the run's tree of nodes, one per
 * aggregation, pointed at each segment in turn (columns, dense tables,
 * filters), each batch handed to the top-level aggregations through
 * their registry entries, and the shard's result built at the end.
 */
#include "aggs/aggs_collector.h"
#include "aggs/aggs_int.h"

static void anode_free(fds__anode *n)
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
    if (n->ordhash_owned)
        free((void *)n->ordhash);
    free(n->ordmap);
    fds__aggs_macc_release(n);
    free(n->mmm);
    free(n->touched);
    if (n->gm_owned)
        fds__ordmap_free(n->gm);
    for (uint32_t i = 0; i < n->nobits; i++)
        free(n->obits[i]);
    free(n->obits);
    for (size_t i = 0; n->flt && i < n->a->nfilters; i++)
        fds__filter_free(n->flt[i]);
    free(n->flt);
    free(n->grp_start);
    free(n->grp_ord);
    free(n->dense);
    free(n->lanes);
    free(n->bdoc);
    free(n->bown);
    free(n->zkeys);
    free(n);
}

static fds__anode *anode_new(fds__exec *x, const fds_agg *a)
{
    fds__anode *n = calloc(1, sizeof *n);
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
        } else {
            n->srcn[i]->is_src = true;
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

static bool need_score_tree(const fds_agg *a)
{
    if (fds_agg_keeps_hits(a->type))
        return fds__aggs_th_needs_score(a->th);
    for (size_t k = 0; k < a->nsubs; k++)
        if (need_score_tree(a->subs[k]))
            return true;
    return false;
}

/* The root's batch to each top-level aggregation (owner 0). */
static void collect_root(fds__aggs_run *r, const uint32_t *docs, size_t cnt)
{
    for (size_t k = 0; k < r->top->a->nsubs; k++)
        fds__aggs_collect_node(r, r->top->kids[k], docs, NULL, cnt);
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
    collect_root(r, docs, cnt);
    r->bn = 0;
}

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

/* Is n, in this segment, a top-level terms over slots whose one sub is a
 * sum-like metric of an exact integer column every doc has (its slot
 * states then hold the metric too: fds__macc)?  Then its states are made
 * (or kept: same size).  0 or FDS_ENOMEM. */
static int fused_begin(fds__anode *n)
{
    const fds_agg *a = n->a;
    const fds__anode *k = a->nsubs == 1 ? n->kids[0] : NULL;
    n->fused = n->top && a->type == FDS_AGG_TERMS && n->nslots && n->f && n->f->col &&
               !a->has_missing && a->min_doc_count && k &&
               k->a->type != FDS_AGG_EXTENDED_STATS &&
               fds__aggs_run_metric(k) && k->int_exact;
    uint32_t lanes = n->nslots <= FLAT_LANES_MAX_SLOTS ? FLAT_LANES : 1;
    bool mm = k && k->a->type != FDS_AGG_SUM && k->a->type != FDS_AGG_AVG;
    size_t per = sizeof(fds__macc) + (mm ? sizeof(fds__mmm) : 0);
    if (n->fused && (uint64_t)n->nslots * lanes * per > FDS__AGG_MACC_MAX)
        n->fused = false;
    if (n->macc_held && !n->fused) { /* earlier segments' states first */
        int rc = fds__aggs_fused_fold(n, false);
        if (rc)
            return rc;
    }
    if (!n->fused || (n->macc && n->macc_slots == n->nslots))
        return 0;
    fds__aggs_macc_release(n);
    free(n->mmm);
    n->mmm = NULL;
    n->macc_slots = n->nslots;
    n->macc_lanes = lanes;
    /* zero states from an earlier search over the same field if one left
     * them (zpool.c): clearing a wide field's states cost more than a
     * small window's whole aggregation */
    n->macc = fds__zpool_take((size_t)n->nslots * lanes * sizeof *n->macc);
    n->macc_clean = true;
    if (mm && n->macc && !(n->mmm = malloc((size_t)n->nslots * lanes * sizeof *n->mmm)))
        fds__aggs_macc_release(n);
    return n->macc ? 0 : FDS_ENOMEM;
}

/* Point n's subtree at segment si.  0, FDS_ENOMEM, FDS_EINVAL (a field with
 * several values per doc in this segment). */
static int seg_begin(fds__aggs_run *r, fds__anode *n, const fds__leaf *leaf)
{
    const fds_agg *a = n->a;
    const fds_sidx *sx = leaf->seg->sidx;
    /* keyword terms by global ordinals: the map made at the first
     * segment, the dense table kept for the whole search */
    /* min_doc_count 0 lists the segment's keys by their string ids
     * (fds__aggs_zero_keys): the per-segment path */
    bool gord = a->type == FDS_AGG_TERMS && a->ftype == FDS_FT_KEYWORD &&
                a->field && !a->unmapped && !a->has_missing && !a->nincl &&
                !a->nexcl && a->min_doc_count && !n->is_src && !n->no_gord;
    if (gord && !n->gm) { /* at the first segment, for the whole search */
        int rc = fds__ordmap_get(r->x, a->field, &n->gm, &n->gm_owned);
        if (rc)
            return rc;
        gord = !(n->no_gord = !n->gm);
        if (gord) {
            n->lane_owner = UINT32_MAX;
            n->nslots = n->gm->nglobal;
            n->dense_max = n->nslots > FDS__AGG_DENSE_MAX &&
                                   n->nslots <= FDS__AGG_GORD_DENSE_MAX
                               ? n->nslots : FDS__AGG_DENSE_MAX;
        }
    }
    free(n->ordmap);
    n->ordmap = NULL;
    if (!gord) {
        free(n->dense);
        n->dense = NULL;
        free(n->lanes);
        n->lanes = NULL;
        n->lane_owner = UINT32_MAX;
        n->nslots = n->dense_owners = 0;
        n->dense_max = FDS__AGG_DENSE_MAX;
    }
    n->seg2g = gord && n->gm->seg2g ? n->gm->seg2g[leaf->ord] : NULL;
    n->sx = sx;
    n->si = leaf->ord;
    n->docbase = leaf->docbase;
    for (unsigned k = 0; a->th && k < a->th->nsort; k++)
        n->th_sf[k] = a->th->sort[k].kind == FDS_SORT_FIELD
                          ? fds__sidx_field(sx, a->th->sort[k].field,
                                            a->th->sort[k].field_len)
                          : NULL;
    n->f = a->field && !a->unmapped && !a->index_field
               ? fds__sidx_field(sx, a->field, strlen(a->field)) : NULL;
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
    if (f && f->kind == FDS_FT_KEYWORD && f->nterms && !gord &&
        !(n->ordmap = calloc(f->nterms, sizeof *n->ordmap)))
        return FDS_ENOMEM;
    if (n->ordhash_owned)
        free((void *)n->ordhash);
    n->ordhash = NULL;
    n->ordhash_owned = false;
    if (a->type == FDS_AGG_CARDINALITY && f && f->kind == FDS_FT_KEYWORD &&
        f->nterms) {
        int rc = fds__aggs_term_hashes(leaf->seg, a->field, f, &n->ordhash,
                                       &n->ordhash_owned);
        if (rc)
            return rc;
    }
    /* terms keys as slots of this segment: its ordinals, or the packed
     * offsets of a narrow integer column of the aggregation's key type */
    if (a->type == FDS_AGG_TERMS && f && f->col && !gord) {
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
        n->dk_len = fds__aggs_date_len(a);
        n->dk_min = fds__aggs_date_key(a, f->num_min);
        int64_t top = (int64_t)((uint64_t)f->num_min + ((1ull << f->num_bits) - 1));
        uint64_t span = top < f->num_min ? UINT64_MAX /* overflow */
                      : (uint64_t)(fds__aggs_date_key(a, top) - n->dk_min) / (uint64_t)n->dk_len + 1;
        if (n->dk_len > 0 && span <= FDS__AGG_DENSE_MAX)
            n->nslots = (uint32_t)span;
    }
    n->flat = a->type == FDS_AGG_TERMS && n->nslots && !a->nsubs && !a->has_missing &&
              f && f->col;
    if (n->flat && !n->lanes && n->nslots <= FLAT_LANES_MAX_SLOTS &&
        !(n->lanes = calloc((size_t)FLAT_LANES * n->nslots, sizeof *n->lanes)))
        return FDS_ENOMEM;
    n->allp = f && f->col && all_present(f->present, fds_sidx_max_doc(sx));
    n->int_exact = false;
    if (fds_agg_is_metric(a->type) && f && f->col && f->kind != FDS_FT_KEYWORD &&
        f->kind != FDS_FT_DOUBLE && f->num_bits < 53) {
        double lo = fabs((double)f->num_min);
        double hi = fabs((double)f->num_min + ldexp(1.0, (int)f->num_bits));
        uint64_t docs = 0;
        for (unsigned s = 0; s < r->x->nseg; s++)
            docs += fds_sidx_max_doc(r->x->segs[s].sidx);
        n->int_exact = (lo > hi ? lo : hi) * (double)docs < 0x1p53;
    }
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
    n->sparse = n->top && a->type == FDS_AGG_TERMS && n->nslots > FLAT_LANES_MAX_SLOTS;
    return fused_begin(n);
}

/* The end of the current segment for n's subtree (`last`: of the
 * search): flat counts folded into buckets (by global ordinals: at the
 * last only).  0 or FDS_ENOMEM. */
static int seg_end(fds__anode *n, bool last)
{
    if (fds_agg_keeps_hits(n->a->type) && fds__aggs_th_flush(n))
        return FDS_ENOMEM;
    if (n->a->type == FDS_AGG_TERMS && !n->a->min_doc_count && n->sx &&
        fds__aggs_zero_keys(n))
        return FDS_ENOMEM;
    if (n->obits_live && fds__aggs_card_flush(n))
        return FDS_ENOMEM;
    if (n->fused && n->gm && !last) /* global slots: kept for the next */
        n->macc_held = true;
    else if (n->fused && fds__aggs_fused_fold(n, last))
        return FDS_ENOMEM;
    if (n->dense && (n->gm ? last && !n->a->nsubs : n->flat)) {
        int rc = fds__aggs_flat_fold(n, last);
        if (rc)
            return rc;
    }
    for (size_t k = 0; k < n->a->nsubs; k++) {
        int rc = seg_end(n->kids[k], last);
        if (rc)
            return rc;
    }
    return 0;
}

/* n's subtree explains top_hits with `query`. */
static void set_query(fds__anode *n, const fds__cnode *query)
{
    if (!n)
        return;
    n->query = query;
    for (size_t k = 0; k < n->a->nsubs; k++)
        set_query(n->kids[k], query);
}

/* The current segment's state closed (seg_end).  0 or the run's first
 * error (err filled for FDS_ENOMEM). */
static int close_segment(fds__aggs_run *r, bool last)
{
    if (!r->rc)
        r->rc = seg_end(r->top, last);
    if (r->rc == FDS_ENOMEM)
        fds_err_setk(r->err, r->rc, FDS_KIND_INTERNAL, "out of memory");
    return r->rc;
}

/* Segment `leaf` starts: the previous one's state closed (ops.set_segment). */
static int set_segment(fds__collector *c, const fds__leaf *leaf)
{
    fds__aggs_run *r = (fds__aggs_run *)c;
    if (close_segment(r, false))
        return r->rc;
    int rc = seg_begin(r, r->top, leaf);
    if (rc == FDS_ENOMEM)
        fds_err_setk(r->err, rc, FDS_KIND_INTERNAL, "out of memory");
    return r->rc = rc;
}

/* The shard's result tree into out->aggs (ops.finish). */
static int finish(fds__collector *c, fds_search_result *out)
{
    fds__aggs_run *r = (fds__aggs_run *)c;
    out->aggs = NULL;
    if (close_segment(r, true))
        return r->rc;
    if (fds__aggs_zero_fill(r->top, 1))
        return fds_err_setk(r->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    out->aggs = fds__aggs_build(r->top, 0, 1);
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
        for (size_t k = 0; r->top && k < root->nsubs; k++)
            r->top->kids[k]->top = true;
    }
    if (!r || !r->top) {
        free(r);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    *out = &r->c;
    return 0;
}
