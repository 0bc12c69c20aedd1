/*
 * search_collect.c: collecting hits -- the top-k heap (worst hit on top),
 * the order of hits (score, sort keys, then segment and doc as Lucene
 * breaks ties), sort values read from the columns, search_after, and the
 * visit of a segment sorted on a numeric field block by block, best block
 * first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/postings.h"
#include "exec/search_int.h"

/* fds__key_cmp, inlined into the hits' order (the top-k heap's hot path) */
static inline int key_cmp(const fds_search_request *req, unsigned k, const fds_hit *a,
                          const fds_hit *b)
{
    const fds_sort_spec *s = &req->sort[k];
    int c = 0;
    if (s->kind == FDS_SORT_SCORE) {
        c = a->sort_num[k] > b->sort_num[k] ? -1
          : a->sort_num[k] < b->sort_num[k] ? 1 : 0;
        return s->desc ? c : -c;
    }
    if (s->kind == FDS_SORT_DOC) {
        c = a->sort_num[k] < b->sort_num[k] ? -1
          : a->sort_num[k] > b->sort_num[k] ? 1 : 0;
        return s->desc ? -c : c;
    }
    if (s->kind == FDS_SORT_SHARD_DOC) {
        c = a->sort_long[k] < b->sort_long[k] ? -1
          : a->sort_long[k] > b->sort_long[k];
        return s->desc ? -c : c;
    }
    bool am, bm;
    if (s->ftype == FDS_FT_KEYWORD) {
        am = a->sort_str[k] == NULL;
        bm = b->sort_str[k] == NULL;
    } else {
        am = isnan(a->sort_num[k]);
        bm = isnan(b->sort_num[k]);
    }
    if (am || bm) /* missing values go last (or first), whatever the order */
        return am && bm ? 0 : (am ? 1 : -1) * (s->missing_first ? -1 : 1);
    if (s->ftype == FDS_FT_KEYWORD) {
        uint32_t la = a->sort_str_len[k], lb = b->sort_str_len[k];
        c = memcmp(a->sort_str[k], b->sort_str[k], la < lb ? la : lb);
        if (!c)
            c = la < lb ? -1 : la > lb;
        c = c < 0 ? -1 : c > 0;
    } else {
        c = a->sort_num[k] < b->sort_num[k] ? -1
          : a->sort_num[k] > b->sort_num[k] ? 1 : 0;
        /* equal doubles, integer keys: the exact values decide (rounding
         * to a double is monotonic, so this is the order of the longs) */
        if (!c && s->ftype != FDS_FT_DOUBLE)
            c = a->sort_long[k] < b->sort_long[k] ? -1
              : a->sort_long[k] > b->sort_long[k];
    }
    return s->desc ? -c : c;
}

int fds__key_cmp(const fds_search_request *req, unsigned k, const fds_hit *a,
                   const fds_hit *b)
{
    return key_cmp(req, k, a, b);
}

int fds_hit_cmp(const fds_search_request *req, const fds_hit *a,
                const fds_hit *b)
{
    return fds__hit_cmp(req, a, b);
}

/* <0 if a sorts before b (better), >0 if after. */
int fds__hit_cmp(const fds_search_request *req, const fds_hit *a,
                   const fds_hit *b)
{
    if (req->nsort == 0) {
        if (a->score != b->score)
            return a->score > b->score ? -1 : 1;
    } else {
        for (unsigned k = 0; k < req->nsort; k++) {
            int c = key_cmp(req, k, a, b);
            if (c)
                return c;
        }
    }
    if (a->seg != b->seg)
        return a->seg < b->seg ? -1 : 1;
    return a->doc < b->doc ? -1 : a->doc > b->doc;
}

/* Put `hit` at the top of the full heap hp (max-heap on "worse": the top
 * is the worst hit) and sift it down: the worse child moves up into the
 * hole, one copy of a hit per level instead of a swap's three. */
static void replace_top(fds__heap *hp, const fds_hit *hit)
{
    size_t i = 0, n = hp->n;
    fds_hit *h = hp->h;
    bool total = hp->req && hp->req->nsort;
    for (unsigned k = 0; total && k < hp->req->nsort; k++)
        total = hp->req->sort[k].kind != FDS_SORT_SCORE; /* NaN scores tie */
    if (total) {
        /* sort keys, then segment and doc: a total order, so the heap's
         * hits are the same however it is laid out.  Floyd's variant: the
         * hole goes down to a leaf along the worse children (one
         * comparison a level), and the hit, usually among the best (a
         * sort that follows the doc order), climbs back at most a level
         * or two. */
        for (size_t c; (c = 2 * i + 1) < n; i = c) {
            if (c + 1 < n && fds__hit_cmp(hp->req, &h[c + 1], &h[c]) > 0)
                c++;
            h[i] = h[c];
        }
        while (i > 0 && fds__hit_cmp(hp->req, hit, &h[(i - 1) / 2]) > 0) {
            h[i] = h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h[i] = *hit;
        return;
    }
    for (;;) {
        /* the worst of the hit and its two children, compared as a swap
         * would compare them */
        size_t l = 2 * i + 1, r = l + 1, w = SIZE_MAX;
        if (l < n && fds__hit_cmp(hp->req, &h[l], hit) > 0)
            w = l;
        if (r < n && fds__hit_cmp(hp->req, &h[r], w == l ? &h[l] : hit) > 0)
            w = r;
        if (w == SIZE_MAX)
            break;
        h[i] = h[w];
        i = w;
    }
    h[i] = *hit;
}

void fds__heap_offer(fds__heap *hp, const fds_hit *hit)
{
    if (hp->cap == 0)
        return;
    if (hp->n < hp->cap) {
        size_t i = hp->n++;
        while (i > 0) { /* the hole moves up past better parents */
            size_t p = (i - 1) / 2;
            if (fds__hit_cmp(hp->req, hit, &hp->h[p]) <= 0)
                break;
            hp->h[i] = hp->h[p];
            i = p;
        }
        hp->h[i] = *hit;
        return;
    }
    if (fds__hit_cmp(hp->req, hit, &hp->h[0]) >= 0)
        return;
    replace_top(hp, hit);
}


/* Does hit (seg, doc, s) come after hit h in a page by score alone? */
static inline bool after_score(uint32_t seg, uint32_t doc, float s,
                               const fds_hit *h)
{
    if (s != h->score)
        return s < h->score;
    return seg != h->seg ? seg > h->seg : doc > h->doc;
}

/* Does hit a come after hit b in a page by score alone? */
static inline bool after_hit(const fds_hit *a, const fds_hit *b)
{
    return after_score(a->seg, a->doc, a->score, b);
}

/* Set the three fields of h that order a page by score. */
static inline void set_score_hit(fds_hit *h, uint32_t seg, uint32_t doc,
                                 float s)
{
    h->seg = seg;
    h->doc = doc;
    h->score = s;
}

/* Put hit (seg, doc, s) in the place of the top of the score heap
 * h[0..n) and sift it down to where it belongs. */
static inline void score_replace_top(fds_hit *h, size_t n, uint32_t seg,
                                     uint32_t doc, float s)
{
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && after_hit(&h[c + 1], &h[c]))
            c++; /* the worse child */
        if (after_score(seg, doc, s, &h[c]))
            break; /* the new hit is worse than both children */
        set_score_hit(&h[i], h[c].seg, h[c].doc, h[c].score);
        i = c;
    }
    set_score_hit(&h[i], seg, doc, s);
}

void fds__heap_offer_score(fds__heap *hp, uint32_t seg, uint32_t doc, float s)
{
    fds_hit *h = hp->h;
    size_t i, n = hp->n;
    if (hp->cap == 0)
        return;
    if (hp->req->nsort) { /* not a page by score: the general order */
        fds__heap_offer(hp, &(fds_hit){.seg = seg, .doc = doc, .score = s});
        return;
    }
    if (n < hp->cap) { /* a new slot: every field set once */
        h[n] = (fds_hit){.seg = seg, .doc = doc, .score = s};
        for (i = n; i > 0;) { /* sift up: the worst hit on top */
            size_t p = (i - 1) / 2;
            if (!after_score(seg, doc, s, &h[p]))
                break;
            set_score_hit(&h[i], h[p].seg, h[p].doc, h[p].score);
            i = p;
        }
        set_score_hit(&h[i], seg, doc, s);
        hp->n = n + 1;
        return;
    }
    if (after_score(seg, doc, s, &h[0]))
        return; /* it comes after the worst hit: not kept */
    score_replace_top(h, n, seg, doc, s);
}

void fds__heap_sort_score(fds__heap *hp)
{
    fds_hit *h = hp->h;
    for (size_t n = hp->n; n > 1; n--) {
        /* the worst hit (the top) to slot n - 1; the last one sifts down
         * from the top over the n - 1 slots left */
        uint32_t seg = h[n - 1].seg, doc = h[n - 1].doc;
        float s = h[n - 1].score;
        set_score_hit(&h[n - 1], h[0].seg, h[0].doc, h[0].score);
        score_replace_top(h, n - 1, seg, doc, s);
    }
}

void fds__sort_value(const fds_search_request *req, unsigned k,
                       const fds_sfield *f, uint64_t docbase, fds_hit *h)
{
    const fds_sort_spec *s = &req->sort[k];
    h->sort_str[k] = NULL;
    h->sort_str_len[k] = 0;
    if (s->kind == FDS_SORT_SCORE) {
        h->sort_num[k] = h->score;
        return;
    }
    if (s->kind == FDS_SORT_DOC) {
        h->sort_long[k] = (int64_t)(docbase + h->doc);
        h->sort_num[k] = (double)h->sort_long[k];
        return;
    }
    if (s->kind == FDS_SORT_SHARD_DOC) {
        h->sort_long[k] = (int64_t)(((uint64_t)req->shard_index << 32) +
                                    docbase + h->doc);
        h->sort_num[k] = (double)h->sort_long[k];
        return;
    }
    h->sort_num[k] = NAN;
    h->sort_long[k] = 0;
    if (!f || !fds__bit(f->present, h->doc))
        return;
    if (f->kind == FDS_FT_KEYWORD) {
        uint32_t o = fds__col_ord(f, h->doc), l;
        if (o != FDS_SIDX_NO_ORD) {
            h->sort_str[k] = fds__sidx_term_str(f, o, &l);
            h->sort_str_len[k] = l;
        }
    } else if (f->kind == FDS_FT_DOUBLE) {
        double v = fds__col_f64(f, h->doc);
        h->sort_num[k] = v;
        /* under a sort typed long (another segment's mapping): saturated */
        h->sort_long[k] = v >= 0x1p63 ? INT64_MAX
                        : v < -0x1p63 ? INT64_MIN : (int64_t)v;
    } else if (f->col) {
        h->sort_long[k] = fds__col_i64(f, h->doc);
        h->sort_num[k] = (double)h->sort_long[k];
    }
}

typedef struct blk_ord {
    uint32_t b;
    double best;
} blk_ord;

static int blk_desc(const void *a, const void *b)
{
    const blk_ord *x = a, *y = b;
    if (isnan(x->best) || isnan(y->best))
        return isnan(x->best) - isnan(y->best);
    if (x->best != y->best)
        return x->best > y->best ? -1 : 1;
    return x->b < y->b ? -1 : 1;
}

static int blk_asc(const void *a, const void *b)
{
    const blk_ord *x = a, *y = b;
    if (isnan(x->best) || isnan(y->best))
        return isnan(x->best) - isnan(y->best);
    if (x->best != y->best)
        return x->best < y->best ? -1 : 1;
    return x->b < y->b ? -1 : 1;
}

/*
 * The rest of segment `si` from doc `from` on, for a search sorted on a
 * numeric field whose page is full and whose hits are counted: blocks of
 * FDS_DV_BLOCK docs in the order of their best value (max for desc, min for
 * asc), stopping at the first block whose best value is worse than the
 * page's last hit.  Each visited block gets a fresh iterator.
 */
int fds__sorted_blocks(fds__exec *x, const fds__cnode *root, unsigned si,
                         const fds_sfield *const *sf, uint64_t docbase,
                         uint32_t from, fds__heap *hp)
{
    const fds_search_request *req = x->req;
    const fds_sfield *f = sf[0];
    const fds_sidx *sx = x->segs[si].sidx;
    uint32_t max_doc = fds_sidx_max_doc(sx);
    if (from >= max_doc)
        return 0;
    uint32_t b0 = from / FDS_DV_BLOCK;
    uint32_t nb = (max_doc + FDS_DV_BLOCK - 1) / FDS_DV_BLOCK - b0;
    blk_ord *o = malloc(nb * sizeof *o);
    if (!o)
        return FDS_ENOMEM;
    bool desc = req->sort[0].desc;
    for (uint32_t i = 0; i < nb; i++) {
        o[i].b = b0 + i;
        o[i].best = desc ? f->blk_max[b0 + i] : f->blk_min[b0 + i];
    }
    qsort(o, nb, sizeof *o, desc ? blk_desc : blk_asc);
    x->no_stats = 1;
    int rc = 0;
    for (uint32_t i = 0; i < nb; i++) {
        uint32_t start = o[i].b * FDS_DV_BLOCK;
        uint32_t end = start + FDS_DV_BLOCK;
        if (start < from)
            start = from;
        if (end > max_doc)
            end = max_doc;
        /* a block of missing values still matters if missing sorts first */
        fds_hit best = {.seg = si, .doc = start, .nsort = 1};
        best.sort_num[0] = o[i].best;
        /* the bound is a double: on a tie the block may still hold a
         * better long, so the tie goes to the block */
        best.sort_long[0] = desc ? INT64_MAX : INT64_MIN;
        if (hp->n == hp->cap && fds__key_cmp(req, 0, &best, &hp->h[0]) > 0)
            break;
        fds__it *r = fds__build(x, root, sx);
        if (!r) {
            rc = FDS_ENOMEM;
            break;
        }
        const fds_search_segment *sg = &x->segs[si];
        for (uint32_t d = r->advance(r, start); d < end;
             d = r->advance(r, d + 1)) {
            if (!fds__is_live(sg, d))
                continue;
            fds_hit h = {.seg = si, .doc = d, .score = NAN};
            if (hp->n == hp->cap) {
                fds__sort_value(req, 0, f, docbase, &h);
                if (fds__key_cmp(req, 0, &h, &hp->h[0]) > 0)
                    continue;
            }
            if (req->track_scores)
                h.score = r->score(r);
            if (!fds__sort_values(x, sf, docbase, &h))
                continue;
            fds__heap_offer(hp, &h);
        }
        fds__it_free(r);
    }
    x->no_stats = 0;
    free(o);
    return rc;
}

/* Fill sort values of a hit; returns false if it is not after search_after.
 * `sf` holds the segment's field for each sort key (NULL if absent). */
bool fds__sort_values(fds__exec *x, const fds_sfield *const *sf, uint64_t docbase,
                        fds_hit *h)
{
    const fds_search_request *req = x->req;
    if (req->nsort == 0) /* search_after on the default _score order */
        return !req->nafter || isnan(h->score) ||
               (double)h->score < req->after[0].num ||
               ((double)h->score == req->after[0].num && req->after_tie &&
                (h->seg > req->after_seg ||
                 (h->seg == req->after_seg && h->doc > req->after_doc)));
    h->nsort = req->nsort;
    for (unsigned k = 0; k < req->nsort; k++)
        fds__sort_value(req, k, sf[k], docbase, h);
    if (!req->nafter)
        return true;
    fds_hit a;
    memset(&a, 0, sizeof a);
    a.nsort = req->nsort;
    for (unsigned k = 0; k < req->nafter && k < req->nsort; k++) {
        if (req->after[k].is_null) {
            a.sort_num[k] = NAN;
        } else {
            a.sort_num[k] = req->after[k].num;
            a.sort_long[k] = req->after[k].lnum;
            a.sort_str[k] = req->after[k].str;
            a.sort_str_len[k] = (uint32_t)req->after[k].str_len;
        }
    }
    /* equal keys: after only past the cursor's (seg, doc), if it has one */
    a.seg = req->after_tie ? req->after_seg : h->seg;
    a.doc = req->after_tie ? req->after_doc : h->doc;
    return fds__hit_cmp(req, h, &a) > 0;
}
