/*
 * iter.c: document-at-a-time iterators -- match_all and match_none, a
 * term's postings, column scans (range, exists), bitsets (terms, ids,
 * patterns), the bool family (bool, constant_score, dis_max, boosting)
 * -- built from a compiled query for one segment (fds__build), their
 * score bounds (fds__it_max), and the one order a disjunction sums its
 * terms in (fds__sort_by_gain), which the term-at-a-time passes share.
 * Everything that is not a disjunction of terms ranked by score runs
 * through these; the term cursor they share with the passes is term_it.h.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "exec/term_it.h"
#include "index/term_pat.h"

static void plain_destroy(fds__it *i) { free(i); }

static void term_destroy(fds__it *i)
{
    free(((fds__term_it *)i)->tfk);
    free(i);
}

/* --- none / all --- */
static uint32_t none_adv(fds__it *i, uint32_t t) { (void)t; return i->doc = FDS__NO_MORE; }
static float const_score(fds__it *i) { return i->c->boost; }

typedef struct all_it {
    fds__it b;
    uint32_t max_doc;
} all_it;

static uint32_t all_adv(fds__it *i, uint32_t t)
{
    all_it *a = (all_it *)i;
    return i->doc = t < a->max_doc ? t : FDS__NO_MORE;
}

/* --- term (term_it: search_int.h, term_it.h) --- */

static float term_score(fds__it *i)
{
    fds__term_it *t = (fds__term_it *)i;
    i->x->scored++;
    uint8_t norm = t->norms ? t->norms[i->doc] : 1;
    return fds__term_score_tf(i->c, t->tfs[t->i], norm);
}

/* --- column scans: range, exists --- */
typedef struct col_it {
    fds__it b;
    const fds_sfield *f;
    uint32_t max_doc;
    const fds_query *q;
    /* a numeric range over a column with block bounds (fds_sfield.blk_min,
     * blk_max): the bounds of the range as doubles, to pass over a block
     * of FDS_DV_BLOCK docs whose values all fall outside it */
    bool blocks;
    double lo, hi;
    bool lo_incl, hi_incl;
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

/* Can no doc of block b of r's column be in the range?  A block without
 * values (NaN bounds) cannot; else its max below the range or its min
 * above it.  For integer columns the bounds are the values rounded to
 * doubles, and so is the range: rounding is monotonic, so a value v of
 * the range has lo <= (double)v <= hi and its block's bounds reach the
 * range (a tie is not outside).  Lucene's DocValuesSkipper-based
 * DocValuesRangeIterator passes over such blocks the same way. */
static bool range_block_out(const col_it *r, uint32_t b)
{
    double mn = r->f->blk_min[b], mx = r->f->blk_max[b];
    if (isnan(mn) || isnan(mx))
        return true;
    return mx < r->lo || (mx == r->lo && !r->lo_incl) || mn > r->hi ||
           (mn == r->hi && !r->hi_incl);
}

/* The first doc >= t in the range: a block whose bounds fall outside it is
 * passed over whole, the others are checked doc by doc, so a narrow range
 * over a column that is nearly sorted (a log's @timestamp) costs its
 * blocks' bounds and the docs of the few blocks it touches. */
static uint32_t range_adv(fds__it *i, uint32_t t)
{
    col_it *r = (col_it *)i;
    for (uint32_t d = t; d < r->max_doc;) {
        uint32_t end = r->max_doc;
        if (r->blocks) {
            uint32_t b = d / FDS_DV_BLOCK;
            end = (b + 1) * FDS_DV_BLOCK;
            if (end > r->max_doc || end < d) /* (overflow: the last block) */
                end = r->max_doc;
            if (range_block_out(r, b)) {
                d = end;
                continue;
            }
        }
        for (; d < end; d++)
            if (range_match(r, d))
                return i->doc = d;
    }
    return i->doc = FDS__NO_MORE;
}

static uint32_t exists_adv(fds__it *i, uint32_t t)
{
    col_it *r = (col_it *)i;
    for (uint32_t d = t; d < r->max_doc; d++)
        if (fds__bit(r->f->present, d))
            return i->doc = d;
    return i->doc = FDS__NO_MORE;
}

/* --- bitset (terms, ids) --- */
typedef struct bits_it {
    fds__it b;
    uint64_t *bits;
    uint32_t max_doc;
} bits_it;

static uint32_t bits_adv(fds__it *i, uint32_t t)
{
    bits_it *s = (bits_it *)i;
    if (t >= s->max_doc)
        return i->doc = FDS__NO_MORE;
    uint32_t w = t / 64;
    uint64_t cur = s->bits[w] & (~0ull << (t % 64));
    uint32_t nw = (s->max_doc + 63) / 64;
    for (;;) {
        if (cur) {
            uint32_t d = w * 64 + (uint32_t)__builtin_ctzll(cur);
            return i->doc = d < s->max_doc ? d : FDS__NO_MORE;
        }
        if (++w >= nw)
            return i->doc = FDS__NO_MORE;
        cur = s->bits[w];
    }
}

static void bits_destroy(fds__it *i)
{
    free(((bits_it *)i)->bits);
    free(i);
}

/* --- bool --- */
typedef struct bool_it {
    fds__it b;
    fds__it **req;    /* must then filter */
    size_t nreq, nmust;
    fds__it **should;
    size_t nshould;
    fds__it **excl;
    size_t nexcl;
    int msm;
    bool empty_all; /* bool {} = match_all */
    uint32_t max_doc;
} bool_it;

static uint32_t bool_adv(fds__it *i, uint32_t target)
{
    bool_it *b = (bool_it *)i;
    if (b->empty_all)
        return i->doc = target < b->max_doc ? target : FDS__NO_MORE;
    for (;;) {
        if (target == FDS__NO_MORE)
            return i->doc = FDS__NO_MORE;
        uint32_t d;
        if (b->nreq) {
            d = target;
            size_t agree = 0, k = 0;
            while (agree < b->nreq) {
                fds__it *r = b->req[k];
                uint32_t rd = r->doc;
                if (rd == FDS__NO_MORE - 1 || rd < d)
                    rd = r->advance(r, d);
                if (rd == FDS__NO_MORE)
                    return i->doc = FDS__NO_MORE;
                if (rd == d) {
                    agree++;
                } else {
                    d = rd;
                    agree = 1;
                }
                k = (k + 1) % b->nreq;
            }
        } else {
            d = FDS__NO_MORE;
            for (size_t k = 0; k < b->nshould; k++) {
                fds__it *s = b->should[k];
                uint32_t sd = s->doc;
                if (sd == FDS__NO_MORE - 1 || sd < target)
                    sd = s->advance(s, target);
                if (sd < d)
                    d = sd;
            }
            if (d == FDS__NO_MORE)
                return i->doc = FDS__NO_MORE;
        }
        bool ok = true;
        for (size_t k = 0; k < b->nexcl && ok; k++) {
            fds__it *e = b->excl[k];
            uint32_t ed = e->doc;
            if (ed == FDS__NO_MORE - 1 || ed < d)
                ed = e->advance(e, d);
            if (ed == d)
                ok = false;
        }
        if (ok && b->msm > 0) {
            int cnt = 0;
            for (size_t k = 0; k < b->nshould; k++) {
                fds__it *s = b->should[k];
                uint32_t sd = s->doc;
                if (sd == FDS__NO_MORE - 1 || sd < d)
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

static float bool_score(fds__it *i)
{
    bool_it *b = (bool_it *)i;
    if (b->empty_all)
        return i->c->boost;
    float s = 0;
    for (size_t k = 0; k < b->nmust; k++)
        s += b->req[k]->score(b->req[k]);
    for (size_t k = 0; k < b->nshould; k++) {
        fds__it *sh = b->should[k];
        if (sh->doc == FDS__NO_MORE - 1 || sh->doc < i->doc)
            sh->advance(sh, i->doc);
        if (sh->doc == i->doc)
            s += sh->score(sh);
    }
    return s; /* the clauses carry the bool's boost (cnode.acc) */
}

static void bool_destroy(fds__it *i)
{
    bool_it *b = (bool_it *)i;
    for (size_t k = 0; k < b->nreq; k++)
        fds__it_free(b->req[k]);
    for (size_t k = 0; k < b->nshould; k++)
        fds__it_free(b->should[k]);
    for (size_t k = 0; k < b->nexcl; k++)
        fds__it_free(b->excl[k]);
    free(b->req);
    free(b->should);
    free(b->excl);
    free(b);
}

/* An iterator of sz bytes, the first `zero` of them zeroed (the rest is
 * written before it is read: a term's decoded block and its tf1 table,
 * 2 KiB that a whole url's 70 terms would clear for nothing). */
static void *it_alloc_part(size_t sz, size_t zero, fds__exec *x, const fds__cnode *c)
{
    fds__it *i = malloc(sz);
    if (!i)
        return NULL;
    memset(i, 0, zero);
    i->doc = FDS__NO_MORE - 1; /* not started */
    i->x = x;
    i->c = c;
    i->destroy = plain_destroy;
    i->score = const_score;
    i->advance = none_adv;
    return i;
}

static void *it_alloc(size_t sz, fds__exec *x, const fds__cnode *c)
{
    return it_alloc_part(sz, sz, x, c);
}

/* The docs of term t (of field f) into s's bitset.  0, or -1 when a block
 * does not decode (x->corrupt set). */
int fds__sterm_or_bits(const fds_sterm *t, uint64_t *bits, uint32_t max_doc,
                       fds__exec *x)
{
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
    uint32_t base = 0;
    for (uint32_t b = 0; b < t->nblocks; b++) {
        const uint8_t *sk = t->skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        unsigned n = sk[13] + 1u;
        if (fds_postings_decode_block(fds__skip_block(t, sk), t->end, n,
                                      base, max_doc, docs, tfs) < 0) {
            x->corrupt = 1;
            return -1;
        }
        for (unsigned k = 0; k < n; k++)
            bits[docs[k] / 64] |= 1ull << (docs[k] % 64);
        base = docs[n - 1] + 1;
    }
    return 0;
}

static int bits_add_sterm(bits_it *s, const fds_sfield *f,
                          const fds_sterm *term, fds__exec *x)
{
    fds_sterm tt = *term, *t = &tt; /* inlined into this frame's buffers */
    uint8_t skip1[FDS_SIDX_SKIP_LEN], blk1[FDS_STERM_INLINE_BLK];
    fds__sterm_inline(t, f->norms, skip1, blk1);
    return fds__sterm_or_bits(t, s->bits, s->max_doc, x);
}

static int bits_add_term(bits_it *s, const fds_sidx *sx, const fds_sfield *f,
                         const char *v, size_t len, fds__exec *x)
{
    fds_sterm t;
    if (fds__sidx_term(sx, f, v, len, &t))
        return 0;
    return bits_add_sterm(s, f, &t, x);
}

/* Every term of f matching the pattern of q into s: the ordinals that
 * start with the pattern's literal lead only (a prefix is a range of
 * ordinals), each term's docs once. */
static void bits_add_pattern(bits_it *s, const fds_sidx *sx,
                             const fds_sfield *f, const fds_query *q, fds__exec *x)
{
    size_t ln;
    const char *lead = fds__term_pat_lead(q->pat, &ln);
    uint32_t ord = ln ? fds__ord_lower_bound(f, lead, ln) : 0;
    for (uint32_t seen = 0; ord < f->nterms; ord++) {
        if (++seen % FDS__DEADLINE_EVERY == 0 && fds__past_deadline(x))
            return; /* timed out: what it has */
        uint32_t tl;
        const char *t = fds__sidx_term_str(f, ord, &tl);
        if (ln && (tl < ln || memcmp(t, lead, ln)))
            break;
        if (!fds__term_pat_match(q->pat, t, tl))
            continue;
        fds_sterm st;
        fds__sidx_term_at(sx, f, ord, &st);
        if (bits_add_sterm(s, f, &st, x))
            return;
    }
}

/* dis_max: the best clause plus tie_breaker times the others, as Lucene's
 * DisjunctionMaxScorer adds them: the others' sum in double, one rounding
 * to float at the end (fds__dismax_add, fds__dismax_value).  The clauses
 * carry the query's boost (cnode.acc). */
static float dismax_score(fds__it *i)
{
    bool_it *b = (bool_it *)i;
    float best = 0;
    double other = 0;
    for (size_t k = 0; k < b->nshould; k++) {
        fds__it *sh = b->should[k];
        if (sh->doc == FDS__NO_MORE - 1 || sh->doc < i->doc)
            sh->advance(sh, i->doc);
        if (sh->doc == i->doc)
            fds__dismax_add(&best, &other, sh->score(sh));
    }
    return fds__dismax_value(best, other, i->c->q->tie);
}

/* boosting: the positive clause's score, times negative_boost where the
 * negative clause matches too. */
static float boosting_score(fds__it *i)
{
    bool_it *b = (bool_it *)i;
    float v = b->req[0]->score(b->req[0]);
    fds__it *neg = b->should[0];
    if (neg->doc == FDS__NO_MORE - 1 || neg->doc < i->doc)
        neg->advance(neg, i->doc);
    if (neg->doc == i->doc)
        v *= i->c->q->tie;
    return v * i->c->boost;
}

/* What compiling term cnode c looked up in segment sx (NULL: not kept). */
static const fds__cnode_seg *term_seg(const fds__exec *x, const fds__cnode *c,
                                 const fds_sidx *sx)
{
    if (!c->seg)
        return NULL;
    if (x->cur_seg < x->nseg && c->seg[x->cur_seg].sx == sx)
        return &c->seg[x->cur_seg];
    for (unsigned s = 0; s < x->nseg; s++)
        if (c->seg[s].sx == sx)
            return &c->seg[s];
    return NULL;
}

static void order_should(bool_it *b);

/* A term's iterator over its postings in sx (match none when sx has no
 * such term).  NULL on ENOMEM. */
static fds__it *build_term(fds__exec *x, const fds__cnode *c,
                           const fds_sidx *sx, uint32_t max_doc)
{
    const fds_query *q = c->q;
    const fds__cnode_seg *cs = term_seg(x, c, sx);
    const fds_sfield *f =
        cs ? cs->f : fds__sidx_field(sx, q->field, q->field_len);
    fds_sterm st;
    if (cs && cs->found)
        st = cs->t;
    if (!f || (f->kind != FDS_FT_TEXT && f->kind != FDS_FT_KEYWORD) ||
        (cs ? !cs->found : fds__sidx_term(sx, f, q->term, q->term_len, &st) != 0))
        return it_alloc(sizeof(fds__it), x, c);
    fds__term_it *t = it_alloc_part(sizeof *t, offsetof(fds__term_it, tf1), x, c);
    if (!t)
        return NULL;
    t->t = st;
    fds__sterm_inline(&t->t, f->norms, t->skip1, t->blk1);
    t->norms = f->norms;
    t->norm_seen = f->norm_seen;
    t->max_doc = max_doc;
    t->blk = FDS__NO_MORE;
    t->b.advance = fds__term_adv;
    t->b.score = term_score;
    t->b.destroy = term_destroy;
    if (!x->no_stats)
        x->total_postings += st.df;
    t->ub = NAN; /* computed when first needed (fds__term_ub) */
    return (fds__it *)t;
}

/* A range or exists query's scan of its field's column in sx.  NULL on
 * ENOMEM. */
static fds__it *build_column(fds__exec *x, const fds__cnode *c,
                             const fds_sidx *sx, uint32_t max_doc)
{
    const fds_query *q = c->q;
    const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
    if (!f || (q->type == FDS_Q_RANGE && f->kind == FDS_FT_TEXT))
        return it_alloc(sizeof(fds__it), x, c);
    col_it *r = it_alloc(sizeof *r, x, c);
    if (!r)
        return NULL;
    r->f = f;
    r->q = q;
    r->max_doc = max_doc;
    r->b.advance = q->type == FDS_Q_RANGE ? range_adv : exists_adv;
    if (q->type == FDS_Q_RANGE && f->blk_min && f->blk_max) {
        bool dbl = f->kind == FDS_FT_DOUBLE;
        bool lng = f->kind == FDS_FT_LONG || f->kind == FDS_FT_DATE ||
                   f->kind == FDS_FT_BOOLEAN;
        r->blocks = dbl || lng;
        r->lo = dbl ? q->lo_d : (double)q->lo_l;
        r->hi = dbl ? q->hi_d : (double)q->hi_l;
        r->lo_incl = dbl ? q->lo_d_incl : true;
        r->hi_incl = dbl ? q->hi_d_incl : true;
    }
    return (fds__it *)r;
}

/* A terms, pattern or ids query's bitset of the docs of sx it matches.
 * NULL on ENOMEM. */
static fds__it *build_bits(fds__exec *x, const fds__cnode *c,
                           const fds_sidx *sx, uint32_t max_doc)
{
    const fds_query *q = c->q;
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
        bool terms = f && (f->kind == FDS_FT_TEXT || f->kind == FDS_FT_KEYWORD);
        if (terms && q->type == FDS_Q_PATTERN)
            bits_add_pattern(s, sx, f, q, x);
        else if (terms)
            for (size_t k = 0; k < q->nvals; k++)
                bits_add_term(s, sx, f, q->vals[k], q->val_lens[k], x);
    }
    return (fds__it *)s;
}

/* A bool, constant_score, dis_max or boosting query's iterator over its
 * clauses' iterators in sx.  NULL on ENOMEM. */
static fds__it *build_bool(fds__exec *x, const fds__cnode *c,
                           const fds_sidx *sx, uint32_t max_doc)
{
    const fds_query *q = c->q;
    bool_it *b = it_alloc(sizeof *b, x, c);
    if (!b)
        return NULL;
    b->b.advance = bool_adv;
    b->b.score = bool_score;
    b->b.destroy = bool_destroy;
    b->max_doc = max_doc;
    size_t n = c->nkids ? c->nkids : 1;
    b->req = calloc(n, sizeof(fds__it *));
    b->should = calloc(n, sizeof(fds__it *));
    b->excl = calloc(n, sizeof(fds__it *));
    if (!b->req || !b->should || !b->excl) {
        bool_destroy((fds__it *)b);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < q->nmust; i++, k++)
        if (!(b->req[b->nreq++] = fds__build(x, c->kids[k], sx)))
            goto oom;
    b->nmust = b->nreq;
    for (size_t i = 0; i < q->nshould; i++, k++)
        if (!c->kids[k]->dup &&
            !(b->should[b->nshould++] = fds__build(x, c->kids[k], sx)))
            goto oom;
    for (size_t i = 0; i < q->nfilter; i++, k++)
        if (!(b->req[b->nreq++] = fds__build(x, c->kids[k], sx)))
            goto oom;
    for (size_t i = 0; i < q->nmust_not; i++, k++)
        if (!(b->excl[b->nexcl++] = fds__build(x, c->kids[k], sx)))
            goto oom;
    if (fds__should_by_gain(c))
        order_should(b);
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
        b->req[b->nreq++] = (fds__it *)a;
    }
    if (q->type == FDS_Q_CONST)
        b->b.score = const_score;
    else if (q->type == FDS_Q_DISMAX)
        b->b.score = dismax_score;
    else if (q->type == FDS_Q_BOOSTING)
        b->b.score = boosting_score;
    return (fds__it *)b;
oom:
    bool_destroy((fds__it *)b);
    return NULL;
}

fds__it *fds__build(fds__exec *x, const fds__cnode *c, const fds_sidx *sx)
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
        return (fds__it *)a;
    }
    case FDS_Q_TERM:
        return build_term(x, c, sx, max_doc);
    case FDS_Q_RANGE:
    case FDS_Q_EXISTS:
        return build_column(x, c, sx, max_doc);
    case FDS_Q_TERMS:
    case FDS_Q_PATTERN:
    case FDS_Q_IDS:
        return build_bits(x, c, sx, max_doc);
    case FDS_Q_CONST:
    case FDS_Q_DISMAX:
    case FDS_Q_BOOSTING:
    case FDS_Q_BOOL:
        return build_bool(x, c, sx, max_doc);
    case FDS_Q_PHRASE: {
        fds__it *p;
        if (fds__phrase_build(x, c, sx, &p))
            return NULL;
        return p ? p : it_alloc(sizeof(fds__it), x, c);
    }
    default:
        return it_alloc(sizeof(fds__it), x, c);
    }
}

/* Upper bound of the score of any doc the iterator returns. */
float fds__it_max(fds__it *i)
{
    if (i->advance == none_adv)
        return 0;
    if (i->advance == fds__term_adv)
        return fds__term_ub((fds__term_it *)i);
    if (i->advance == fds__phrase_adv) /* a BM25 score stays below it */
        return i->c->weight;
    if (i->advance == bool_adv) {
        bool_it *b = (bool_it *)i;
        const fds_query *q = i->c->q;
        if (b->empty_all || q->type == FDS_Q_CONST)
            return i->c->boost;
        if (q->type == FDS_Q_BOOSTING) /* negative_boost may exceed 1 */
            return fds__it_max(b->req[0]) * (q->tie > 1 ? q->tie : 1) *
                   i->c->boost;
        /* dis_max: best + tie * rest <= the sum of the clauses' bounds */
        float s = 0;
        for (size_t k = 0; k < b->nmust; k++)
            s += fds__it_max(b->req[k]);
        for (size_t k = 0; k < b->nshould; k++)
            s += fds__it_max(b->should[k]);
        return s;
    }
    return i->c->boost; /* constant-score iterators */
}

/* Is the root a disjunction of scored terms (MaxScore-able)? Collect them. */
bool fds__disjunction_terms(fds__it *root, fds__term_it ***out, size_t *n)
{
    if (root->advance == fds__term_adv) {
        *out = malloc(sizeof(fds__term_it *));
        if (!*out)
            return false;
        (*out)[0] = (fds__term_it *)root;
        *n = 1;
        return true;
    }
    if (root->advance != bool_adv || root->c->q->type != FDS_Q_BOOL)
        return false;
    bool_it *b = (bool_it *)root;
    if (b->nreq || b->nexcl || b->msm > 1 || !b->nshould || b->empty_all)
        return false; /* a boost is in the terms' weights (cnode.acc) */
    fds__term_it **ts = malloc(b->nshould * sizeof *ts);
    if (!ts)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < b->nshould; i++) {
        fds__it *s = b->should[i];
        if (s->advance == fds__term_adv)
            ts[k++] = (fds__term_it *)s;
        else if (s->advance != none_adv) {
            free(ts);
            return false;
        }
    }
    *out = ts;
    *n = k;
    return true;
}

double fds__sum_gain(const fds__cnode *c)
{
    return (double)c->weight / (double)(c->n ? c->n : 1);
}

void fds__sort_by_gain(void *v, size_t n, size_t size,
                       const fds__cnode *(*node)(const void *))
{
    char *a = v, tmp[FDS__GAIN_ELEM_MAX];
    for (size_t i = 1; i < n; i++) {
        memcpy(tmp, a + i * size, size);
        double g = fds__sum_gain(node(tmp));
        size_t j = i;
        while (j > 0 && fds__sum_gain(node(a + (j - 1) * size)) < g)
            j--;
        if (j < i) {
            memmove(a + (j + 1) * size, a + j * size, (i - j) * size);
            memcpy(a + j * size, tmp, size);
        }
    }
}

static const fds__cnode *term_node(const void *e)
{
    return (*(fds__term_it *const *)e)->b.c;
}

void fds__order_terms(fds__term_it **ts, size_t nt)
{
    fds__sort_by_gain(ts, nt, sizeof *ts, term_node);
}

bool fds__should_by_gain(const fds__cnode *c)
{
    const fds_query *q = c->q;
    if (q->type != FDS_Q_BOOL)
        return false;
    for (size_t i = 0; i < q->nshould; i++) {
        const fds__cnode *k = c->kids[q->nmust + i];
        if (!k->dup && k->q->type != FDS_Q_TERM)
            return false;
    }
    return true;
}

static const fds__cnode *it_node(const void *e) { return (*(fds__it *const *)e)->c; }

/* A bool's should iterators in its summation order (fds__should_by_gain):
 * the order of fds__order_terms, so that the doc-at-a-time path
 * (bool_score) adds a doc's term scores as the MaxScore passes do. */
static void order_should(bool_it *b)
{
    fds__sort_by_gain(b->should, b->nshould, sizeof *b->should, it_node);
}
