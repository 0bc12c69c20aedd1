/*
 * search.c: query execution over a list of segments -- iterators over
 * postings and columns, BM25 as Lucene computes it, and top-k collection
 * with block-max WAND so that a frequent term does not score every posting.
 *
 * Scoring follows Lucene's BM25Similarity (k1 = 1.2, b = 0.75):
 *   idf    = ln(1 + (N - n + 0.5) / (n + 0.5))        (float, like Lucene)
 *   weight = boost * idf
 *   score  = weight - weight / (1 + freq * normInverse[norm])
 *          = weight * freq / (freq + k1 * (1 - b + b * dl / avgdl))
 * with dl = SmallFloat.byte4ToInt(norm byte) (1 for fields without norms),
 * N = docs with the field, n = docs with the term and avgdl = sum of term
 * frequencies / N, all summed over every segment of the search (as a shard
 * does in Elasticsearch; deleted docs still count, as in Lucene, until
 * segments are merged).  A bool query sums the scores of its must and
 * matching should clauses; filter and must_not clauses do not score;
 * constant-score queries (terms, range, exists, ids, match_all) score their
 * boost.
 *
 * Top-k by score: a disjunction of terms (a `match` on a text field, a
 * single `term`, a bool of should-terms) runs block-max WAND (Ding & Suel,
 * SIGIR 2011) over the per-block (max tf, min norm) bounds stored in the skip
 * lists; everything else is evaluated document at a time.  Hits are counted
 * up to track_total_hits, then counting stops and WAND skips whole blocks.
 * Ties between equal scores go to the lower (segment, doc), like Lucene, so
 * a candidate must score strictly above the current k-th score.  Bounds need
 * no safety margin: a block bound is the same float formula as the score at
 * (max tf, min norm), float operations round monotonically, and bounds and
 * scores are summed over the same cursors in the same order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "postings.h"
#include "search_int.h"
#include "sidx_int.h"

#define NO_MORE UINT32_MAX

/* ---- compiled query (per search) ---------------------------------------- */

typedef struct cnode {
    const fds_query *q;
    /* TERM: collection statistics over all segments */
    float weight;        /* boost * idf */
    float idf, avgdl;
    uint64_t N, n;
    float cache[256];    /* Lucene's normInverse per norm byte, on first use */
    uint64_t have[4];    /* bit n set: cache[n] computed */
    struct cnode **kids; /* BOOL: must, should, filter, must_not in order */
    size_t nkids;
} cnode;

typedef struct exec {
    const fds_search_request *req;
    const fds_search_segment *segs;
    unsigned nseg;
    uint64_t scored, total_postings;
    int corrupt;  /* set when a postings block fails to decode */
    int no_stats; /* iterators built again for a block: do not recount */
    unsigned cur_seg;
} exec;

static float bm25_idf(uint64_t N, uint64_t n)
{
    return (float)log(1.0 + ((double)N - (double)n + 0.5) / ((double)n + 0.5));
}

static void cnode_free(cnode *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nkids; i++)
        cnode_free(c->kids[i]);
    free(c->kids);
    free(c);
}

static cnode *compile(exec *x, const fds_query *q)
{
    cnode *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->q = q;
    if (q->type == FDS_Q_BOOL) {
        size_t n = q->nmust + q->nshould + q->nfilter + q->nmust_not;
        c->kids = calloc(n ? n : 1, sizeof *c->kids);
        if (!c->kids) {
            free(c);
            return NULL;
        }
        fds_query **lists[4] = {q->must, q->should, q->filter, q->must_not};
        size_t counts[4] = {q->nmust, q->nshould, q->nfilter, q->nmust_not};
        for (int l = 0; l < 4; l++)
            for (size_t i = 0; i < counts[l]; i++) {
                cnode *k = compile(x, lists[l][i]);
                if (!k) {
                    cnode_free(c);
                    return NULL;
                }
                c->kids[c->nkids++] = k;
            }
    } else if (q->type == FDS_Q_TERM) {
        uint64_t N = 0, n = 0, sttf = 0;
        for (unsigned s = 0; s < x->nseg; s++) {
            const fds_sfield *f =
                fds__sidx_field(x->segs[s].sidx, q->field, q->field_len);
            if (!f)
                continue;
            N += f->doc_count;
            sttf += f->sum_ttf;
            fds_sterm t;
            if (fds__sidx_term(x->segs[s].sidx, f, q->term, q->term_len, &t) == 0)
                n += t.df;
        }
        c->N = N;
        c->n = n;
        c->idf = bm25_idf(N, n);
        c->weight = q->boost * c->idf;
        c->avgdl = N ? (float)((double)sttf / (double)N) : 1.0f;
    }
    return c;
}

/* ---- iterators ------------------------------------------------------------ */

typedef struct it it;
struct it {
    uint32_t doc;
    uint32_t (*advance)(it *, uint32_t target);
    float (*score)(it *);
    void (*destroy)(it *);
    exec *x;
    const cnode *c;
};

static void it_free(it *i)
{
    if (i)
        i->destroy(i);
}

static void plain_destroy(it *i) { free(i); }

/* --- none / all --- */
static uint32_t none_adv(it *i, uint32_t t) { (void)t; return i->doc = NO_MORE; }
static float const_score(it *i) { return i->c->q->boost; }

typedef struct all_it {
    it b;
    uint32_t max_doc;
} all_it;

static uint32_t all_adv(it *i, uint32_t t)
{
    all_it *a = (all_it *)i;
    return i->doc = t < a->max_doc ? t : NO_MORE;
}

/* --- term --- */
typedef struct term_it {
    it b;
    fds_sterm t;
    const uint8_t *norms;
    uint32_t max_doc;
    uint32_t blk, n, i;  /* decoded block, its size, position */
    float ub;            /* max over all blocks of the block bound */
    uint64_t have1[4];   /* bit n set: tf1[n] computed */
    uint32_t bb_blk;     /* block whose bound is bb_val (NO_MORE: none) */
    float bb_val;
    uint8_t skip1[FDS_SIDX_SKIP_LEN], blk1[FDS_STERM_INLINE_BLK]; /* df = 1 */
    float tf1[256];      /* score at tf = 1 per norm byte (lazy) */
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
} term_it;

static inline uint32_t skip_last(const term_it *t, uint32_t b)
{
    return fds__get_u32(t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN);
}

static inline float term_score_tf(const cnode *c, uint32_t tf, uint8_t norm)
{
    float w = c->weight;
    if (!((c->have[norm >> 6] >> (norm & 63)) & 1)) {
        /* filled lazily (a query touches few norm values); the cnode
         * belongs to this search only */
        cnode *m = (cnode *)c;
        m->cache[norm] = 1.0f / (FDS_BM25_K1 * ((1 - FDS_BM25_B) +
                                                FDS_BM25_B *
                                                    (float)fds__norm_decode(norm) /
                                                    c->avgdl));
        m->have[norm >> 6] |= 1ull << (norm & 63);
    }
    return w - w / (1.0f + (float)tf * c->cache[norm]);
}

/* Score at (tf, norm); tf = 1 (most postings) from a lazily filled table,
 * the same float as term_score_tf. */
static inline float term_score_fast(term_it *t, uint32_t tf, uint8_t norm)
{
    if (tf != 1)
        return term_score_tf(t->b.c, tf, norm);
    if (!((t->have1[norm >> 6] >> (norm & 63)) & 1)) {
        t->tf1[norm] = term_score_tf(t->b.c, 1, norm);
        t->have1[norm >> 6] |= 1ull << (norm & 63);
    }
    return t->tf1[norm];
}

static float block_bound(const term_it *t, uint32_t b)
{
    const uint8_t *s = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    return term_score_tf(t->b.c, fds__get_u32(s + 8), s[12]);
}

static int decode_block(term_it *t, uint32_t b)
{
    const uint8_t *s = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    uint32_t base = b ? skip_last(t, b - 1) + 1 : 0;
    unsigned n = s[13] + 1u;
    long r = fds_postings_decode_block(t->t.data + fds__get_u32(s + 4),
                                       t->t.end, n, base, t->max_doc,
                                       t->docs, t->tfs);
    if (r < 0 || t->docs[n - 1] != fds__get_u32(s)) {
        t->b.x->corrupt = 1;
        return -1;
    }
    t->blk = b;
    t->n = n;
    t->i = 0;
    return 0;
}

static uint32_t term_adv(it *i, uint32_t target)
{
    term_it *t = (term_it *)i;
    if (target == NO_MORE)
        return i->doc = NO_MORE;
    if (t->blk == NO_MORE || target > skip_last(t, t->blk)) {
        uint32_t lo = t->blk == NO_MORE ? 0 : t->blk + 1, hi = t->t.nblocks;
        /* gallop then binary search for the first block ending >= target */
        uint32_t step = 1;
        while (lo + step < hi && skip_last(t, lo + step) < target) {
            lo += step;
            step *= 2;
        }
        if (lo + step < hi)
            hi = lo + step + 1;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (skip_last(t, mid) < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo >= t->t.nblocks || decode_block(t, lo))
            return i->doc = NO_MORE;
    }
    while (t->i < t->n && t->docs[t->i] < target)
        t->i++;
    return i->doc = t->docs[t->i]; /* the block's last doc is >= target */
}

static float term_score(it *i)
{
    term_it *t = (term_it *)i;
    i->x->scored++;
    uint8_t norm = t->norms ? t->norms[i->doc] : 1;
    return term_score_tf(i->c, t->tfs[t->i], norm);
}

/* Max over all blocks of the block bound (cached). */
static float term_ub(term_it *t)
{
    if (isnan(t->ub)) {
        float ub = 0;
        uint32_t ptf = 0;
        int pnorm = -1;
        for (uint32_t b = 0; b < t->t.nblocks; b++) {
            /* neighbouring blocks mostly share their (max tf, min norm) */
            const uint8_t *sk = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
            uint32_t tf = fds__get_u32(sk + 8);
            if (tf == ptf && sk[12] == pnorm)
                continue;
            ptf = tf;
            pnorm = sk[12];
            float bb = block_bound(t, b);
            if (bb > ub)
                ub = bb;
        }
        t->ub = ub;
    }
    return t->ub;
}

/* Bound of the block holding `target` and its last doc (no decoding). */
static float term_shallow(term_it *t, uint32_t target, uint32_t *last)
{
    uint32_t b = t->blk == NO_MORE ? 0 : t->blk;
    while (b < t->t.nblocks && skip_last(t, b) < target)
        b++;
    if (b >= t->t.nblocks) {
        *last = NO_MORE - 1;
        return 0;
    }
    *last = skip_last(t, b);
    if (t->bb_blk != b) { /* WAND asks again for the same block */
        t->bb_blk = b;
        t->bb_val = block_bound(t, b);
    }
    return t->bb_val;
}

/* --- column scans: range, exists --- */
typedef struct col_it {
    it b;
    const fds_sfield *f;
    uint32_t max_doc;
    const fds_query *q;
} col_it;

static bool range_match(const col_it *r, uint32_t d)
{
    const fds_sfield *f = r->f;
    const fds_query *q = r->q;
    if (!fds__bit(f->present, d))
        return false;
    switch (f->kind) {
    case FDS_FT_LONG: case FDS_FT_DATE: case FDS_FT_BOOLEAN: {
        int64_t v = fds__col_i64(f, d);
        return v >= q->lo_l && v <= q->hi_l;
    }
    case FDS_FT_DOUBLE: {
        double v = fds__col_f64(f, d);
        return (q->lo_d_incl ? v >= q->lo_d : v > q->lo_d) &&
               (q->hi_d_incl ? v <= q->hi_d : v < q->hi_d);
    }
    case FDS_FT_KEYWORD: {
        uint32_t o = fds__col_ord(f, d), l;
        if (o == FDS_SIDX_NO_ORD)
            return false;
        const char *s = fds__sidx_term_str(f, o, &l);
        if (q->lo_s) {
            size_t n = l < q->lo_s_len ? l : q->lo_s_len;
            int c = memcmp(s, q->lo_s, n);
            if (!c)
                c = l < q->lo_s_len ? -1 : l > q->lo_s_len;
            if (c < 0 || (c == 0 && !q->lo_s_incl))
                return false;
        }
        if (q->hi_s) {
            size_t n = l < q->hi_s_len ? l : q->hi_s_len;
            int c = memcmp(s, q->hi_s, n);
            if (!c)
                c = l < q->hi_s_len ? -1 : l > q->hi_s_len;
            if (c > 0 || (c == 0 && !q->hi_s_incl))
                return false;
        }
        return true;
    }
    default:
        return false;
    }
}

static uint32_t range_adv(it *i, uint32_t t)
{
    col_it *r = (col_it *)i;
    for (uint32_t d = t; d < r->max_doc; d++)
        if (range_match(r, d))
            return i->doc = d;
    return i->doc = NO_MORE;
}

static uint32_t exists_adv(it *i, uint32_t t)
{
    col_it *r = (col_it *)i;
    for (uint32_t d = t; d < r->max_doc; d++)
        if (fds__bit(r->f->present, d))
            return i->doc = d;
    return i->doc = NO_MORE;
}

/* --- bitset (terms, ids) --- */
typedef struct bits_it {
    it b;
    uint64_t *bits;
    uint32_t max_doc;
} bits_it;

static uint32_t bits_adv(it *i, uint32_t t)
{
    bits_it *s = (bits_it *)i;
    if (t >= s->max_doc)
        return i->doc = NO_MORE;
    uint32_t w = t / 64;
    uint64_t cur = s->bits[w] & (~0ull << (t % 64));
    uint32_t nw = (s->max_doc + 63) / 64;
    for (;;) {
        if (cur) {
            uint32_t d = w * 64 + (uint32_t)__builtin_ctzll(cur);
            return i->doc = d < s->max_doc ? d : NO_MORE;
        }
        if (++w >= nw)
            return i->doc = NO_MORE;
        cur = s->bits[w];
    }
}

static void bits_destroy(it *i)
{
    free(((bits_it *)i)->bits);
    free(i);
}

/* --- bool --- */
typedef struct bool_it {
    it b;
    it **req;    /* must then filter */
    size_t nreq, nmust;
    it **should;
    size_t nshould;
    it **excl;
    size_t nexcl;
    int msm;
    bool empty_all; /* bool {} = match_all */
    uint32_t max_doc;
} bool_it;

static uint32_t bool_adv(it *i, uint32_t target)
{
    bool_it *b = (bool_it *)i;
    if (b->empty_all)
        return i->doc = target < b->max_doc ? target : NO_MORE;
    for (;;) {
        if (target == NO_MORE)
            return i->doc = NO_MORE;
        uint32_t d;
        if (b->nreq) {
            d = target;
            size_t agree = 0, k = 0;
            while (agree < b->nreq) {
                it *r = b->req[k];
                uint32_t rd = r->doc;
                if (rd == NO_MORE - 1 || rd < d)
                    rd = r->advance(r, d);
                if (rd == NO_MORE)
                    return i->doc = NO_MORE;
                if (rd == d) {
                    agree++;
                } else {
                    d = rd;
                    agree = 1;
                }
                k = (k + 1) % b->nreq;
            }
        } else {
            d = NO_MORE;
            for (size_t k = 0; k < b->nshould; k++) {
                it *s = b->should[k];
                uint32_t sd = s->doc;
                if (sd == NO_MORE - 1 || sd < target)
                    sd = s->advance(s, target);
                if (sd < d)
                    d = sd;
            }
            if (d == NO_MORE)
                return i->doc = NO_MORE;
        }
        bool ok = true;
        for (size_t k = 0; k < b->nexcl && ok; k++) {
            it *e = b->excl[k];
            uint32_t ed = e->doc;
            if (ed == NO_MORE - 1 || ed < d)
                ed = e->advance(e, d);
            if (ed == d)
                ok = false;
        }
        if (ok && b->msm > 0) {
            int cnt = 0;
            for (size_t k = 0; k < b->nshould; k++) {
                it *s = b->should[k];
                uint32_t sd = s->doc;
                if (sd == NO_MORE - 1 || sd < d)
                    sd = s->advance(s, d);
                cnt += sd == d;
            }
            ok = cnt >= b->msm;
        }
        if (ok)
            return i->doc = d;
        target = d + 1;
    }
}

static float bool_score(it *i)
{
    bool_it *b = (bool_it *)i;
    if (b->empty_all)
        return i->c->q->boost;
    float s = 0;
    for (size_t k = 0; k < b->nmust; k++)
        s += b->req[k]->score(b->req[k]);
    for (size_t k = 0; k < b->nshould; k++) {
        it *sh = b->should[k];
        if (sh->doc == NO_MORE - 1 || sh->doc < i->doc)
            sh->advance(sh, i->doc);
        if (sh->doc == i->doc)
            s += sh->score(sh);
    }
    return s * i->c->q->boost;
}

static void bool_destroy(it *i)
{
    bool_it *b = (bool_it *)i;
    for (size_t k = 0; k < b->nreq; k++)
        it_free(b->req[k]);
    for (size_t k = 0; k < b->nshould; k++)
        it_free(b->should[k]);
    for (size_t k = 0; k < b->nexcl; k++)
        it_free(b->excl[k]);
    free(b->req);
    free(b->should);
    free(b->excl);
    free(b);
}

static void *it_alloc(size_t sz, exec *x, const cnode *c)
{
    it *i = calloc(1, sz);
    if (!i)
        return NULL;
    i->doc = NO_MORE - 1; /* not started */
    i->x = x;
    i->c = c;
    i->destroy = plain_destroy;
    i->score = const_score;
    i->advance = none_adv;
    return i;
}

static int bits_add_term(bits_it *s, const fds_sidx *sx, const fds_sfield *f,
                         const char *v, size_t len, exec *x)
{
    fds_sterm t;
    if (fds__sidx_term(sx, f, v, len, &t))
        return 0;
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
    uint8_t skip1[FDS_SIDX_SKIP_LEN], blk1[FDS_STERM_INLINE_BLK];
    fds__sterm_inline(&t, f->norms, skip1, blk1);
    uint32_t base = 0;
    for (uint32_t b = 0; b < t.nblocks; b++) {
        const uint8_t *sk = t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        unsigned n = sk[13] + 1u;
        if (fds_postings_decode_block(t.data + fds__get_u32(sk + 4), t.end, n,
                                      base, s->max_doc, docs, tfs) < 0) {
            x->corrupt = 1;
            return -1;
        }
        for (unsigned k = 0; k < n; k++)
            s->bits[docs[k] / 64] |= 1ull << (docs[k] % 64);
        base = docs[n - 1] + 1;
    }
    return 0;
}

static it *build(exec *x, const cnode *c, const fds_sidx *sx)
{
    const fds_query *q = c->q;
    uint32_t max_doc = fds_sidx_max_doc(sx);
    switch (q->type) {
    case FDS_Q_MATCH_ALL: {
        all_it *a = it_alloc(sizeof *a, x, c);
        if (a) {
            a->max_doc = max_doc;
            a->b.advance = all_adv;
        }
        return (it *)a;
    }
    case FDS_Q_TERM: {
        const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
        fds_sterm st;
        if (!f || (f->kind != FDS_FT_TEXT && f->kind != FDS_FT_KEYWORD) ||
            fds__sidx_term(sx, f, q->term, q->term_len, &st))
            return it_alloc(sizeof(it), x, c);
        term_it *t = it_alloc(sizeof *t, x, c);
        if (!t)
            return NULL;
        t->t = st;
        fds__sterm_inline(&t->t, f->norms, t->skip1, t->blk1);
        t->norms = f->norms;
        t->max_doc = max_doc;
        t->blk = NO_MORE;
        t->bb_blk = NO_MORE;
        t->b.advance = term_adv;
        t->b.score = term_score;
        if (!x->no_stats)
            x->total_postings += st.df;
        t->ub = NAN; /* computed when first needed (term_ub) */
        return (it *)t;
    }
    case FDS_Q_RANGE:
    case FDS_Q_EXISTS: {
        const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
        if (!f || (q->type == FDS_Q_RANGE && f->kind == FDS_FT_TEXT))
            return it_alloc(sizeof(it), x, c);
        col_it *r = it_alloc(sizeof *r, x, c);
        if (!r)
            return NULL;
        r->f = f;
        r->q = q;
        r->max_doc = max_doc;
        r->b.advance = q->type == FDS_Q_RANGE ? range_adv : exists_adv;
        return (it *)r;
    }
    case FDS_Q_TERMS:
    case FDS_Q_IDS: {
        bits_it *s = it_alloc(sizeof *s, x, c);
        if (!s)
            return NULL;
        s->max_doc = max_doc;
        s->bits = calloc(((size_t)max_doc + 63) / 64 + 1, 8);
        if (!s->bits) {
            free(s);
            return NULL;
        }
        s->b.advance = bits_adv;
        s->b.destroy = bits_destroy;
        if (q->type == FDS_Q_IDS) {
            for (size_t k = 0; k < q->nvals; k++) {
                uint32_t d;
                if (fds_sidx_find_id(sx, q->vals[k], q->val_lens[k], &d) == 0)
                    s->bits[d / 64] |= 1ull << (d % 64);
            }
        } else {
            const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
            if (f && (f->kind == FDS_FT_TEXT || f->kind == FDS_FT_KEYWORD))
                for (size_t k = 0; k < q->nvals; k++)
                    bits_add_term(s, sx, f, q->vals[k], q->val_lens[k], x);
        }
        return (it *)s;
    }
    case FDS_Q_BOOL: {
        bool_it *b = it_alloc(sizeof *b, x, c);
        if (!b)
            return NULL;
        b->b.advance = bool_adv;
        b->b.score = bool_score;
        b->b.destroy = bool_destroy;
        b->max_doc = max_doc;
        size_t n = c->nkids ? c->nkids : 1;
        b->req = calloc(n, sizeof(it *));
        b->should = calloc(n, sizeof(it *));
        b->excl = calloc(n, sizeof(it *));
        if (!b->req || !b->should || !b->excl) {
            bool_destroy((it *)b);
            return NULL;
        }
        size_t k = 0;
        for (size_t i = 0; i < q->nmust; i++, k++)
            if (!(b->req[b->nreq++] = build(x, c->kids[k], sx)))
                goto oom;
        b->nmust = b->nreq;
        for (size_t i = 0; i < q->nshould; i++, k++)
            if (!(b->should[b->nshould++] = build(x, c->kids[k], sx)))
                goto oom;
        for (size_t i = 0; i < q->nfilter; i++, k++)
            if (!(b->req[b->nreq++] = build(x, c->kids[k], sx)))
                goto oom;
        for (size_t i = 0; i < q->nmust_not; i++, k++)
            if (!(b->excl[b->nexcl++] = build(x, c->kids[k], sx)))
                goto oom;
        if (q->msm >= 0)
            b->msm = q->msm;
        else
            b->msm = (q->nshould && !q->nmust && !q->nfilter) ? 1 : 0;
        if (b->msm > (int)q->nshould) {
            /* cannot be satisfied (children are still freed by destroy) */
            b->b.advance = none_adv;
        }
        if (!q->nmust && !q->nshould && !q->nfilter && !q->nmust_not)
            b->empty_all = true;
        if (!q->nmust && !q->nshould && !q->nfilter && q->nmust_not) {
            /* only must_not: everything else */
            all_it *a = it_alloc(sizeof *a, x, c);
            if (!a)
                goto oom;
            a->max_doc = max_doc;
            a->b.advance = all_adv;
            b->req[b->nreq++] = (it *)a;
        }
        return (it *)b;
    oom:
        bool_destroy((it *)b);
        return NULL;
    }
    default:
        return it_alloc(sizeof(it), x, c);
    }
}

/* Upper bound of the score of any doc the iterator returns. */
static float it_max(it *i)
{
    if (i->advance == none_adv)
        return 0;
    if (i->advance == term_adv)
        return term_ub((term_it *)i);
    if (i->advance == bool_adv) {
        bool_it *b = (bool_it *)i;
        if (b->empty_all)
            return i->c->q->boost;
        float s = 0;
        for (size_t k = 0; k < b->nmust; k++)
            s += it_max(b->req[k]);
        for (size_t k = 0; k < b->nshould; k++)
            s += it_max(b->should[k]);
        return s * i->c->q->boost;
    }
    return i->c->q->boost; /* constant-score iterators */
}

/* ---- collection ------------------------------------------------------------ */

typedef struct heap {
    fds_hit *h;
    size_t n, cap;
    const fds_search_request *req;
} heap;

/* Compare sort key k of two hits: <0 if a sorts first. */
static int key_cmp(const fds_search_request *req, unsigned k, const fds_hit *a,
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
    }
    return s->desc ? -c : c;
}

/* <0 if a sorts before b (better), >0 if after. */
static int hit_cmp(const fds_search_request *req, const fds_hit *a,
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

static void sift_down(heap *hp, size_t i)
{
    /* max-heap on "worse": the top is the worst hit */
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < hp->n && hit_cmp(hp->req, &hp->h[l], &hp->h[w]) > 0)
            w = l;
        if (r < hp->n && hit_cmp(hp->req, &hp->h[r], &hp->h[w]) > 0)
            w = r;
        if (w == i)
            return;
        fds_hit t = hp->h[i];
        hp->h[i] = hp->h[w];
        hp->h[w] = t;
        i = w;
    }
}

static void heap_offer(heap *hp, const fds_hit *hit)
{
    if (hp->cap == 0)
        return;
    if (hp->n < hp->cap) {
        size_t i = hp->n++;
        hp->h[i] = *hit;
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (hit_cmp(hp->req, &hp->h[i], &hp->h[p]) <= 0)
                break;
            fds_hit t = hp->h[i];
            hp->h[i] = hp->h[p];
            hp->h[p] = t;
            i = p;
        }
        return;
    }
    if (hit_cmp(hp->req, hit, &hp->h[0]) >= 0)
        return;
    hp->h[0] = *hit;
    sift_down(hp, 0);
}

static inline bool is_live(const fds_search_segment *s, uint32_t d)
{
    return !s->live || fds__bit(s->live, d);
}

static inline float theta(const heap *hp)
{
    return hp->n < hp->cap ? -INFINITY : hp->h[0].score;
}

/* Sort value k of a hit from its segment's field `f` (may be NULL). */
static void sort_value(const fds_search_request *req, unsigned k,
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
        h->sort_num[k] = (double)(docbase + h->doc);
        return;
    }
    h->sort_num[k] = NAN;
    if (!f || !fds__bit(f->present, h->doc))
        return;
    if (f->kind == FDS_FT_KEYWORD) {
        uint32_t o = fds__col_ord(f, h->doc), l;
        if (o != FDS_SIDX_NO_ORD) {
            h->sort_str[k] = fds__sidx_term_str(f, o, &l);
            h->sort_str_len[k] = l;
        }
    } else if (f->kind == FDS_FT_DOUBLE) {
        h->sort_num[k] = fds__col_f64(f, h->doc);
    } else if (f->col) {
        h->sort_num[k] = (double)fds__col_i64(f, h->doc);
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

static bool sort_values(exec *x, const fds_sfield *const *sf, uint64_t docbase,
                        fds_hit *h);

/*
 * The rest of segment `si` from doc `from` on, for a search sorted on a
 * numeric field whose page is full and whose hits are counted: blocks of
 * FDS_DV_BLOCK docs in the order of their best value (max for desc, min for
 * asc), stopping at the first block whose best value is worse than the
 * page's last hit.  Each visited block gets a fresh iterator.
 */
static int sorted_blocks(exec *x, const cnode *root, unsigned si,
                         const fds_sfield *const *sf, uint64_t docbase,
                         uint32_t from, heap *hp)
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
        if (hp->n == hp->cap && key_cmp(req, 0, &best, &hp->h[0]) > 0)
            break;
        it *r = build(x, root, sx);
        if (!r) {
            rc = FDS_ENOMEM;
            break;
        }
        const fds_search_segment *sg = &x->segs[si];
        for (uint32_t d = r->advance(r, start); d < end;
             d = r->advance(r, d + 1)) {
            if (!is_live(sg, d))
                continue;
            fds_hit h = {.seg = si, .doc = d, .score = NAN};
            if (hp->n == hp->cap) {
                sort_value(req, 0, f, docbase, &h);
                if (key_cmp(req, 0, &h, &hp->h[0]) > 0)
                    continue;
            }
            if (req->track_scores)
                h.score = r->score(r);
            if (!sort_values(x, sf, docbase, &h))
                continue;
            heap_offer(hp, &h);
        }
        it_free(r);
    }
    x->no_stats = 0;
    free(o);
    return rc;
}

/* Fill sort values of a hit; returns false if it is not after search_after.
 * `sf` holds the segment's field for each sort key (NULL if absent). */
static bool sort_values(exec *x, const fds_sfield *const *sf, uint64_t docbase,
                        fds_hit *h)
{
    const fds_search_request *req = x->req;
    if (req->nsort == 0) /* search_after on the default _score order */
        return !req->nafter || isnan(h->score) ||
               (double)h->score < req->after[0].num;
    h->nsort = req->nsort;
    for (unsigned k = 0; k < req->nsort; k++)
        sort_value(req, k, sf[k], docbase, h);
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
            a.sort_str[k] = req->after[k].str;
            a.sort_str_len[k] = (uint32_t)req->after[k].str_len;
        }
    }
    /* compare without the (seg, doc) tie-break: equal keys are not after */
    fds_hit hb = *h;
    a.seg = hb.seg;
    a.doc = hb.doc;
    return hit_cmp(req, h, &a) > 0;
}

typedef struct wand_term {
    term_it *t;
} wand_term;

/* Is the root a disjunction of scored terms (WAND-able)? Collect them. */
static bool wand_terms(it *root, term_it ***out, size_t *n)
{
    if (root->advance == term_adv) {
        *out = malloc(sizeof(term_it *));
        if (!*out)
            return false;
        (*out)[0] = (term_it *)root;
        *n = 1;
        return true;
    }
    if (root->advance != bool_adv)
        return false;
    bool_it *b = (bool_it *)root;
    const fds_query *q = root->c->q;
    if (b->nreq || b->nexcl || b->msm > 1 || !b->nshould || b->empty_all ||
        q->boost != 1.0f)
        return false;
    term_it **ts = malloc(b->nshould * sizeof *ts);
    if (!ts)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < b->nshould; i++) {
        it *s = b->should[i];
        if (s->advance == term_adv)
            ts[k++] = (term_it *)s;
        else if (s->advance != none_adv) {
            free(ts);
            return false;
        }
    }
    *out = ts;
    *n = k;
    return true;
}

/* Docs per window of the counting pass (Lucene's BooleanScorer uses 2048). */
#define TAAT_WINDOW 4096u

/*
 * Counting pass of a disjunction: term at a time over windows of
 * TAAT_WINDOW docs.  Each term's postings in the window add their score to a
 * per-doc accumulator (in the order of `ts`, the order the doc-at-a-time
 * loop sums them, so scores are the same floats) and mark the doc in a
 * bitset; then the window's docs are counted and offered to the page in doc
 * order.  No per-doc cursor juggling, no indirect calls: this is the cost of
 * counting hits up to track_total_hits (10,000 by default), which in a
 * small index is the whole match set.  Returns the first doc not yet
 * visited (NO_MORE when the segment is done), once *count > limit.
 */
static uint32_t run_taat(exec *x, unsigned si, term_it **ts, size_t nt,
                         heap *hp, uint64_t *count, uint64_t limit)
{
    const fds_search_segment *sg = &x->segs[si];
    uint32_t max_doc = ts[0]->max_doc;
    uint64_t seen[TAAT_WINDOW / 64];
    float acc[TAAT_WINDOW];
    for (size_t k = 0; k < nt; k++)
        ts[k]->b.advance(&ts[k]->b, 0);
    for (uint32_t lo = 0; lo < max_doc; lo += TAAT_WINDOW) {
        if (*count > limit)
            return lo;
        uint32_t hi = max_doc - lo > TAAT_WINDOW ? lo + TAAT_WINDOW : max_doc;
        memset(seen, 0, sizeof seen);
        bool any = false;
        for (size_t k = 0; k < nt; k++) {
            term_it *t = ts[k];
            while (t->b.doc < hi) {
                uint32_t j = t->i, n = t->n;
                for (; j < n && t->docs[j] < hi; j++) {
                    uint32_t d = t->docs[j], w = d - lo;
                    float sc = term_score_fast(t, t->tfs[j],
                                               t->norms ? t->norms[d] : 1);
                    uint64_t bit = 1ull << (w & 63);
                    if (seen[w >> 6] & bit) {
                        acc[w] += sc;
                    } else {
                        seen[w >> 6] |= bit;
                        acc[w] = sc;
                    }
                }
                x->scored += j - t->i;
                any = true;
                if (j < n) {
                    t->i = j;
                    t->b.doc = t->docs[j];
                    break;
                }
                if (t->blk + 1 >= t->t.nblocks || decode_block(t, t->blk + 1)) {
                    t->b.doc = NO_MORE;
                    break;
                }
                t->b.doc = t->docs[0];
            }
        }
        if (!any)
            continue;
        float th = theta(hp);
        for (uint32_t wi = 0; wi < TAAT_WINDOW / 64; wi++) {
            uint64_t m = seen[wi];
            while (m) {
                uint32_t w = wi * 64 + (uint32_t)__builtin_ctzll(m);
                m &= m - 1;
                uint32_t d = lo + w;
                if (!is_live(sg, d))
                    continue;
                (*count)++;
                if (hp->cap && acc[w] > th) {
                    fds_hit h = {.seg = si, .doc = d, .score = acc[w]};
                    heap_offer(hp, &h);
                    th = theta(hp);
                }
            }
        }
    }
    return NO_MORE;
}

/* Block-max WAND over `ts` in segment `si`; counts while *count <= limit. */
static void run_wand(exec *x, unsigned si, term_it **ts, size_t nt, heap *hp,
                     uint64_t *count, uint64_t limit, bool counting)
{
    const fds_search_segment *sg = &x->segs[si];
    if (counting) {
        uint32_t next = run_taat(x, si, ts, nt, hp, count, limit);
        if (next == NO_MORE)
            return;
        for (size_t i = 0; i < nt; i++)
            if (ts[i]->b.doc < next)
                ts[i]->b.advance(&ts[i]->b, next);
    } else {
        for (size_t i = 0; i < nt; i++)
            ts[i]->b.advance(&ts[i]->b, 0);
    }
    if (!hp->cap)
        return;
    /* phase 2: block-max WAND */
    for (;;) {
        for (size_t i = 1; i < nt; i++) { /* few cursors: insertion sort */
            term_it *t = ts[i];
            size_t j = i;
            while (j > 0 && ts[j - 1]->b.doc > t->b.doc) {
                ts[j] = ts[j - 1];
                j--;
            }
            ts[j] = t;
        }
        float th = theta(hp), acc = 0;
        size_t p = nt;
        for (size_t i = 0; i < nt; i++) {
            if (ts[i]->b.doc == NO_MORE)
                break;
            acc += term_ub(ts[i]);
            if (acc > th) {
                p = i;
                break;
            }
        }
        if (p == nt)
            return;
        uint32_t pd = ts[p]->b.doc;
        while (p + 1 < nt && ts[p + 1]->b.doc == pd)
            p++;
        float bm = 0;
        uint32_t next = NO_MORE;
        for (size_t i = 0; i <= p; i++) {
            uint32_t last;
            bm += term_shallow(ts[i], pd, &last);
            if (last + 1 < next)
                next = last + 1;
        }
        if (bm > th) {
            if (ts[0]->b.doc == pd) {
                if (is_live(sg, pd)) {
                    float s = 0;
                    for (size_t i = 0; i <= p; i++)
                        s += term_score(&ts[i]->b);
                    if (s > th) {
                        fds_hit h = {.seg = si, .doc = pd, .score = s};
                        heap_offer(hp, &h);
                    }
                }
                for (size_t i = 0; i <= p; i++)
                    ts[i]->b.advance(&ts[i]->b, pd + 1);
            } else {
                for (size_t i = 0; i < p; i++)
                    if (ts[i]->b.doc < pd)
                        ts[i]->b.advance(&ts[i]->b, pd);
            }
        } else {
            if (p + 1 < nt && ts[p + 1]->b.doc < next)
                next = ts[p + 1]->b.doc;
            if (next <= pd)
                next = pd + 1;
            for (size_t i = 0; i <= p; i++)
                if (ts[i]->b.doc < next)
                    ts[i]->b.advance(&ts[i]->b, next);
        }
    }
}

/* ---- explanations (Lucene/Elasticsearch "explain" shape) ----------------- */

static fds_explanation *ex_node(float v, const char *desc)
{
    fds_explanation *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->value = v;
    if (!(o->description = strdup(desc))) {
        free(o);
        return NULL;
    }
    return o;
}

/* Append `kid` to parent's details; frees `kid` when it cannot. */
static void ex_add(fds_explanation *parent, fds_explanation *kid)
{
    if (!parent || !kid) {
        fds_explanation_free(kid);
        return;
    }
    fds_explanation **nd = realloc(parent->details,
                                   (parent->ndetails + 1) * sizeof *nd);
    if (!nd) {
        fds_explanation_free(kid);
        return;
    }
    parent->details = nd;
    nd[parent->ndetails++] = kid;
}

void fds_explanation_free(fds_explanation *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->ndetails; i++)
        fds_explanation_free(e->details[i]);
    free(e->details);
    free(e->description);
    free(e);
}

static const char *qname(const fds_query *q, char *buf, size_t cap)
{
    switch (q->type) {
    case FDS_Q_MATCH_ALL: return "*:*";
    case FDS_Q_RANGE:
        snprintf(buf, cap, "%.*s:[range]", (int)q->field_len, q->field);
        return buf;
    case FDS_Q_EXISTS:
        snprintf(buf, cap, "FieldExistsQuery [field=%.*s]", (int)q->field_len,
                 q->field);
        return buf;
    case FDS_Q_TERMS:
        snprintf(buf, cap, "%.*s:(terms)", (int)q->field_len, q->field);
        return buf;
    case FDS_Q_IDS: return "_id:(ids)";
    default: return "query";
    }
}

/* Explanation of `c` for doc `d` of segment si; NULL if it does not match. */
static fds_explanation *explain_node(exec *x, const cnode *c, unsigned si,
                                     uint32_t d)
{
    const fds_sidx *sx = x->segs[si].sidx;
    const fds_query *q = c->q;
    char buf[512];
    if (q->type == FDS_Q_BOOL) {
        size_t counts[4] = {q->nmust, q->nshould, q->nfilter, q->nmust_not};
        fds_explanation *o = ex_node(0, "sum of:");
        float sum = 0;
        size_t k = 0;
        int nshould = 0;
        bool ok = true;
        for (int l = 0; l < 4; l++)
            for (size_t i = 0; i < counts[l]; i++, k++) {
                fds_explanation *e = explain_node(x, c->kids[k], si, d);
                if (l == 3) {
                    if (e)
                        ok = false;
                    fds_explanation_free(e);
                    continue;
                }
                if (!e) {
                    if (l != 1)
                        ok = false;
                    continue;
                }
                if (l == 1)
                    nshould++;
                if (l == 2) {
                    fds_explanation *f =
                        ex_node(0, "match on required clause, product of:");
                    ex_add(f, ex_node(0, "# clause"));
                    ex_add(f, e);
                    ex_add(o, f);
                    continue;
                }
                sum += e->value;
                ex_add(o, e);
            }
        int msm = q->msm >= 0 ? q->msm
                              : (q->nshould && !q->nmust && !q->nfilter) ? 1 : 0;
        if (!ok || nshould < msm || !o) {
            fds_explanation_free(o);
            return NULL;
        }
        o->value = sum * q->boost;
        return o;
    }
    it *i = build(x, c, sx);
    if (!i)
        return NULL;
    uint32_t got = i->advance(i, d);
    fds_explanation *o = NULL;
    if (got == d) {
        if (q->type == FDS_Q_TERM && i->advance == term_adv) {
            term_it *t = (term_it *)i;
            uint32_t tf = t->tfs[t->i];
            uint8_t nb = t->norms ? t->norms[d] : 1;
            float sc = term_score_tf(c, tf, nb);
            snprintf(buf, sizeof buf, "weight(%.*s:%.*s in %u) "
                     "[PerFieldSimilarity], result of:", (int)q->field_len,
                     q->field, (int)q->term_len, q->term, d);
            o = ex_node(sc, buf);
            snprintf(buf, sizeof buf, "score(freq=%u.0), computed as boost * "
                     "idf * tf from:", tf);
            fds_explanation *s2 = ex_node(sc, buf);
            ex_add(s2, ex_node(q->boost, "boost"));
            fds_explanation *idf = ex_node(c->idf, "idf, computed as log(1 + (N - n + "
                                         "0.5) / (n + 0.5)) from:");
            ex_add(idf, ex_node((float)c->n, "n, number of documents containing term"));
            ex_add(idf, ex_node((float)c->N, "N, total number of documents with field"));
            ex_add(s2, idf);
            float tfv = (float)tf / ((float)tf + FDS_BM25_K1 *
                                     (1 - FDS_BM25_B + FDS_BM25_B *
                                      (float)fds__norm_decode(nb) / c->avgdl));
            fds_explanation *tfn = ex_node(tfv, "tf, computed as freq / (freq + k1 * (1 - "
                                      "b + b * dl / avgdl)) from:");
            ex_add(tfn, ex_node((float)tf, "freq, occurrences of term within document"));
            ex_add(tfn, ex_node(FDS_BM25_K1, "k1, term saturation parameter"));
            ex_add(tfn, ex_node(FDS_BM25_B, "b, length normalization parameter"));
            ex_add(tfn, ex_node((float)fds__norm_decode(nb), "dl, length of field"));
            ex_add(tfn, ex_node(c->avgdl, "avgdl, average length of field"));
            ex_add(s2, tfn);
            ex_add(o, s2);
        } else {
            o = ex_node(q->boost, qname(q, buf, sizeof buf));
        }
    }
    it_free(i);
    return o;
}

/* One explanation per hit into out[0..n-1]; 0 or FDS_ENOMEM. */
static int explain_hits(exec *x, const cnode *root, const fds_hit *h,
                        size_t n, fds_explanation **out)
{
    uint64_t scored = x->scored, tp = x->total_postings;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = explain_node(x, root, h[i].seg, h[i].doc);
        if (!out[i])
            out[i] = ex_node(0, "no matching term");
        if (!out[i])
            rc = FDS_ENOMEM;
    }
    x->scored = scored;
    x->total_postings = tp;
    return rc;
}

static void explain_free(fds_explanation **e, size_t n)
{
    for (size_t i = 0; e && i < n; i++)
        fds_explanation_free(e[i]);
    free(e);
}

static int hit_qsort_cmp(const void *a, const void *b, void *req)
{
    return hit_cmp(req, a, b);
}

int fds_search_execute(const fds_search_request *req,
                       const fds_search_segment *segs, unsigned nseg,
                       fds_search_result *out, fds_err *err)
{
    memset(out, 0, sizeof *out);
    out->max_score = NAN;
    exec x = {.req = req, .segs = segs, .nseg = nseg};
    fds_query all = {.type = FDS_Q_MATCH_ALL, .boost = 1.0f, .msm = -1};
    const fds_query *root_q = req->query ? req->query : &all;
    cnode *root = compile(&x, root_q);
    if (!root)
        return fds_err_set(err, FDS_ENOMEM, 500, "exception", "out of memory");
    size_t k = req->count_only ? 0 : (size_t)req->from + req->size;
    heap hp = {.cap = k, .req = req};
    if (k) {
        hp.h = malloc(k * sizeof *hp.h);
        if (!hp.h) {
            cnode_free(root);
            return fds_err_set(err, FDS_ENOMEM, 500, "exception",
                               "out of memory");
        }
    }
    bool by_score = req->nsort == 0;
    bool need_score = by_score || req->track_scores;
    for (unsigned k2 = 0; k2 < req->nsort; k2++)
        if (req->sort[k2].kind == FDS_SORT_SCORE)
            need_score = true;
    int64_t tt = req->count_only ? INT64_MAX : req->track_total;
    bool counting = tt != FDS_TRACK_TOTAL_NONE;
    uint64_t limit = tt == INT64_MAX ? UINT64_MAX : (uint64_t)(tt < 0 ? 0 : tt);
    uint64_t count = 0;
    bool count_exact_all = true;
    uint64_t docbase = 0;
    int rc = 0;
    for (unsigned si = 0; si < nseg; si++) {
        x.cur_seg = si;
        const fds_sidx *sx = segs[si].sidx;
        it *r = build(&x, root, sx);
        if (!r) {
            rc = FDS_ENOMEM;
            break;
        }
        term_it **ts = NULL;
        size_t nt = 0;
        if (by_score && !req->nafter && wand_terms(r, &ts, &nt)) {
            /* exact counts without iterating: one term, no deletions */
            bool fast = nt == 1 && !segs[si].live;
            bool cnt = counting && count <= limit;
            if (fast && cnt) {
                count += ts[0]->t.df;
                cnt = false;
            } else if (nt == 0) {
                cnt = false;
            } else if (!cnt && counting) {
                count_exact_all = false;
            }
            if (nt)
                run_wand(&x, si, ts, nt, &hp, &count, limit, cnt);
            if (cnt && count > limit)
                count_exact_all = false;
            free(ts);
        } else {
            const fds_sfield *sf[FDS_SORT_VALUES_MAX] = {NULL};
            for (unsigned q = 0; q < req->nsort; q++)
                if (req->sort[q].kind == FDS_SORT_FIELD)
                    sf[q] = fds__sidx_field(sx, req->sort[q].field,
                                            req->sort[q].field_len);
            /* the best score any doc can reach: once the page is full, hits
             * are counted far enough and nothing can beat the k-th score,
             * the rest of the segment cannot change the result */
            float maxs = by_score && !req->nafter ? it_max(r) : INFINITY;
            bool quick = !by_score && req->sort[0].kind == FDS_SORT_FIELD;
            /* numeric first sort key: once counting is over, visit the rest
             * of the segment block by block, best block first */
            bool blocks = quick && sf[0] && sf[0]->blk_max;
            uint32_t resume = NO_MORE;
            uint32_t d = r->advance(r, 0);
            const fds_search_segment *sg = &segs[si];
            for (; d != NO_MORE; d = r->advance(r, d + 1)) {
                if (!is_live(sg, d))
                    continue;
                count++;
                if (!k) {
                    if (counting && count > limit)
                        break;
                    continue;
                }
                fds_hit h = {.seg = si, .doc = d, .score = NAN};
                if (quick && hp.n == hp.cap) {
                    /* reject on the first key before anything else */
                    sort_value(req, 0, sf[0], docbase, &h);
                    if (key_cmp(req, 0, &h, &hp.h[0]) > 0)
                        continue;
                }
                if (need_score)
                    h.score = r->score(r);
                if (quick && req->nsort == 1 && !req->nafter &&
                    !need_score && hp.n == hp.cap) {
                    h.nsort = 1; /* key 0 filled by the quick check */
                } else if (!by_score || req->nafter) {
                    if (!sort_values(&x, sf, docbase, &h))
                        continue;
                }
                heap_offer(&hp, &h);
                if (hp.n == hp.cap && (!counting || count > limit)) {
                    if (maxs <= hp.h[0].score)
                        break;
                    if (blocks) {
                        resume = d + 1;
                        break;
                    }
                }
            }
            if (resume != NO_MORE &&
                sorted_blocks(&x, root, si, sf, docbase, resume, &hp)) {
                it_free(r);
                rc = FDS_ENOMEM;
                break;
            }
        }
        it_free(r);
        docbase += fds_sidx_max_doc(sx);
        if (x.corrupt) {
            rc = fds_err_set(err, FDS_ECORRUPT, 500, "corrupt_index_exception",
                             "segment index %s has a bad postings block",
                             sx->path);
            break;
        }
    }
    if (!rc && req->explain && hp.n > req->from) {
        qsort_r(hp.h, hp.n, sizeof *hp.h, hit_qsort_cmp, (void *)req);
        size_t ne = hp.n - req->from;
        out->explain = calloc(ne, sizeof *out->explain);
        rc = out->explain ? explain_hits(&x, root, hp.h + req->from, ne,
                                         out->explain)
                          : FDS_ENOMEM;
    }
    cnode_free(root);
    if (rc) {
        free(hp.h);
        explain_free(out->explain, hp.n > req->from ? hp.n - req->from : 0);
        out->explain = NULL;
        if (rc == FDS_ENOMEM)
            fds_err_set(err, rc, 500, "exception", "out of memory");
        return rc;
    }
    (void)count_exact_all;
    /* best first */
    if (hp.n)
        qsort_r(hp.h, hp.n, sizeof *hp.h, hit_qsort_cmp, (void *)req);
    if (by_score && hp.n)
        out->max_score = hp.h[0].score;
    else if (need_score) {
        for (size_t i = 0; i < hp.n; i++)
            if (!isnan(hp.h[i].score) &&
                (isnan(out->max_score) || hp.h[i].score > out->max_score))
                out->max_score = hp.h[i].score;
    }
    if (!need_score)
        for (size_t i = 0; i < hp.n; i++)
            hp.h[i].score = NAN;
    /* sort values for by-score hits (explicit sort on _score only) */
    if (by_score)
        for (size_t i = 0; i < hp.n; i++)
            hp.h[i].nsort = 0;
    size_t from = req->from < hp.n ? req->from : hp.n;
    out->nhits = hp.n - from;
    if (out->nhits) {
        memmove(hp.h, hp.h + from, out->nhits * sizeof *hp.h);
        out->hits = hp.h;
    } else {
        free(hp.h);
    }
    if (counting) {
        if (count > limit) {
            out->total = limit;
            out->total_is_lower_bound = true;
        } else {
            out->total = count;
        }
    }
    out->postings_scored = x.scored;
    out->postings_total = x.total_postings;
    return 0;
}

void fds_search_result_free(fds_search_result *r)
{
    if (!r)
        return;
    explain_free(r->explain, r->nhits);
    free(r->hits);
    r->hits = NULL;
    r->explain = NULL;
    r->nhits = 0;
}

/* ---- request lifetime ----------------------------------------------------- */

fds_query *fds__query_new(int type)
{
    fds_query *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->type = type;
    q->boost = 1.0f;
    q->msm = -1;
    q->lo_l = INT64_MIN;
    q->hi_l = INT64_MAX;
    q->lo_d = -INFINITY;
    q->hi_d = INFINITY;
    q->lo_d_incl = q->hi_d_incl = true;
    return q;
}

void fds__query_free(fds_query *q)
{
    if (!q)
        return;
    free(q->field);
    free(q->term);
    for (size_t i = 0; i < q->nvals; i++)
        free(q->vals[i]);
    free(q->vals);
    free(q->val_lens);
    free(q->lo_s);
    free(q->hi_s);
    fds_query **lists[4] = {q->must, q->should, q->filter, q->must_not};
    size_t counts[4] = {q->nmust, q->nshould, q->nfilter, q->nmust_not};
    for (int l = 0; l < 4; l++) {
        for (size_t i = 0; i < counts[l]; i++)
            fds__query_free(lists[l][i]);
        free(lists[l]);
    }
    free(q);
}

void fds_search_request_free(fds_search_request *r)
{
    if (!r)
        return;
    fds__query_free(r->query);
    for (unsigned k = 0; k < r->nsort; k++)
        free(r->sort[k].field);
    for (unsigned k = 0; k < r->nafter; k++)
        free(r->after[k].str);
    for (size_t i = 0; i < r->nincludes; i++)
        free(r->includes[i]);
    for (size_t i = 0; i < r->nexcludes; i++)
        free(r->excludes[i]);
    free(r->includes);
    free(r->excludes);
    free(r);
}
