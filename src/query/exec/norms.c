/*
 * norms.c: the tables behind the norm bounds (norms.h) -- per norm byte,
 * each term's score at its largest frequency, and token budgets: a doc's
 * frequencies over distinct terms sum to at most its length, so its score
 * is bounded by the best marginal gains that many tokens can buy.  A
 * whole url's terms can only be reached by docs of about its length;
 * these bounds let MaxScore and the counting pass skip the rest without
 * scoring them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/norms.h"

/* A term's next marginal gain in budget_top's merge: its value, the
 * term (an index of ts) and the frequency it is the gain of. */
typedef struct top_head {
    double v;
    uint32_t k, tf;
} top_head;

/* A term (an index of ts) and its weight. */
typedef struct top_term {
    double w;
    uint32_t k;
} top_term;

/* Token budgets cover docs with fewer than this many tokens left (a table
 * of (terms + 1) x (this + 1) doubles per norm byte), and their tables
 * take at most BUDGET_MAX_BYTES per search: norms past it go without. */
#define BUDGET_MAX_TOKENS 256u
#define BUDGET_MAX_BYTES (4u << 20)

void fds__norm_lims_free(fds__norm_lims *n)
{
    for (int i = 0; n->bud && i < 256; i++)
        free(n->bud[i]);
    free(n->bud);
    free(n->mg);
    free(n->col);
    free(n->w1);
    free(n->hd);
    free(n->suf);
    free(n->uf);
    n->bud = NULL;
    n->mg = NULL;
    n->w1 = NULL;
    n->hd = NULL;
    n->col = NULL;
    n->suf = NULL;
    n->uf = NULL;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Are ts[0..nt), terms of one field of one segment (one norms column),
 * distinct terms?  By their ordinals in the field's term dictionary,
 * sorted: O(nt log nt) where comparing the queries pairwise was O(nt^2)
 * memcmp.  False out of memory (no budgets: a looser bound). */
static bool distinct_terms(fds__term_it **ts, size_t nt)
{
    uint32_t *o = malloc(nt * sizeof *o);
    if (!o)
        return false;
    for (size_t k = 0; k < nt; k++)
        o[k] = ts[k]->t.ord;
    qsort(o, nt, sizeof *o, u32_cmp);
    bool ok = true;
    for (size_t k = 1; k < nt && ok; k++)
        ok = o[k] != o[k - 1];
    free(o);
    return ok;
}

static int by_weight(const void *a, const void *b)
{
    double x = ((const top_term *)a)->w, y = ((const top_term *)b)->w;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The most tokens a doc of norm byte nb has: norm_encode rounds down
 * (Lucene's SmallFloat.intToByte4), so fewer than the next byte's. */
static uint32_t norm_max_len(uint8_t nb)
{
    return nb == UINT8_MAX ? UINT32_MAX : fds__norm_decode(nb + 1) - 1;
}

/* Set up n for ts[0..nt) (off when the terms do not share one norms
 * column; no token budgets when two clauses have one term).  0 or
 * FDS_ENOMEM. */
int fds__norm_lims_init(fds__norm_lims *n, fds__term_it **ts, size_t nt)
{
    memset(n, 0, sizeof *n);
    if (nt < 2) /* one term: never probed */
        return 0;
    for (size_t k = 0; k < nt; k++)
        if (!ts[k]->norms || ts[k]->norms != ts[0]->norms)
            return 0;
    n->suf = malloc(256 * (2 * nt + 1) * sizeof *n->suf);
    n->uf = malloc(256 * nt * sizeof *n->uf);
    if (!n->suf || !n->uf) {
        fds__norm_lims_free(n);
        return FDS_ENOMEM;
    }
    n->lim = n->suf + 256 * (nt + 1);
    n->norms = ts[0]->norms;
    n->seen = ts[0]->norm_seen;
    n->nt = nt;
    for (int i = 0; i < 256; i++)
        n->th[i] = NAN;
    if (!distinct_terms(ts, nt)) /* budgets: one clause per term */
        return 0;
    uint64_t rcap = 0;
    for (size_t k = 0; k < nt; k++) {
        fds__term_ub(ts[k]); /* fills tfmax */
        rcap += ts[k]->tfmax;
    }
    n->rcap = rcap < BUDGET_MAX_TOKENS ? (uint32_t)rcap : BUDGET_MAX_TOKENS;
    for (int nb = 0; nb < 256; nb++)
        n->maxlen[nb] = norm_max_len((uint8_t)nb);
    n->bud = calloc(256, sizeof *n->bud);
    /* fds__budget_row's scratch: 2 lists and a term's gains, of which it takes
     * at most rcap (a damaged file's tfmax may claim billions) */
    uint32_t tmax = 0;
    for (size_t k = 0; k < nt; k++)
        tmax = ts[k]->tfmax > tmax ? ts[k]->tfmax : tmax;
    tmax = tmax < n->rcap ? tmax : n->rcap;
    n->mg = malloc((2 * ((size_t)n->rcap + 1) + tmax) * sizeof *n->mg);
    n->col = malloc(256 * (nt + 1) * sizeof *n->col);
    n->w1 = malloc(nt * sizeof *n->w1);
    n->hd = malloc(nt * sizeof *n->hd);
    if (!n->bud || !n->mg || !n->col || !n->w1 || !n->hd) {
        fds__norm_lims_free(n);
        return FDS_ENOMEM;
    }
    bool one_shape = true; /* every gain w * m / ... with one m, w > 0 */
    for (size_t k = 0; k < nt; k++) {
        double w = ts[k]->b.c->weight;
        if (ts[k]->tfmax)
            n->w1[n->n1++] = (top_term){w, (uint32_t)k};
        n->wmax = w > n->wmax ? w : n->wmax;
        one_shape &= w > 0 && isfinite(w) && ts[k]->b.c->ni == ts[0]->b.c->ni;
    }
    if (!one_shape)
        n->wmax = 0;
    qsort(n->w1, n->n1, sizeof *n->w1, by_weight);
    return 0;
}

/*
 * Token budget bounds for docs of norm byte nb: row k, column r (r <
 * rcap) bounds what ts[k..] can add to a doc with r tokens not yet
 * accounted for.  A doc's term frequencies over distinct terms sum to at
 * most its length (every token is one posting of one term), so the
 * terms' scores are bounded by the r best marginal gains
 * score(tf) - score(tf - 1), tf <= its cap at the norm (fds__term_tf_at),
 * over ts[k..] -- a prefix of each
 * term's gains is what a doc can take, and the r largest gains in the
 * union sum to no less than any such choice, concave or not.  As sums of
 * the floats that a doc adds, they need the same BOUND_SLACK as suf.
 * NULL (no budget bound for the norm) past BUDGET_MAX_BYTES or out of
 * memory.  A row has bw[nb] = min(maxlen, rcap) + 1 columns: no doc of
 * the norm has more tokens to spend, nor a term more often than that.
 */
const double *fds__budget_row(fds__norm_lims *n, fds__term_it **ts, uint8_t nb)
{
    if (n->bud[nb])
        return n->bud[nb];
    size_t nt = n->nt;
    size_t cap = n->maxlen[nb] < n->rcap ? n->maxlen[nb] : n->rcap;
    size_t w = cap + 1, sz = (nt + 1) * w * sizeof(double);
    if (n->bud_bytes + sz > BUDGET_MAX_BYTES)
        return NULL; /* no budget bound for this norm */
    double *b = malloc(sz);
    if (!b)
        return NULL;
    n->bud_bytes += sz;
    /* mg: the rcap largest gains of ts[k..], descending; tg: ts[k]'s own,
     * sorted (they come nearly sorted: BM25 is concave in tf) */
    double *mg = n->mg, *m2 = mg + n->rcap + 1, *tg = m2 + n->rcap + 1;
    size_t nm = 0;
    for (size_t r = 0; r < w; r++)
        b[nt * w + r] = 0;
    for (size_t k = nt; k-- > 0;) {
        const fds__cnode *c = ts[k]->b.c;
        double prev = 0;
        size_t ng = 0;
        uint32_t tk = fds__term_tf_at(ts[k], nb);
        uint32_t top = tk < cap ? tk : (uint32_t)cap;
        for (uint32_t tf = 1; tf <= top; tf++) {
            double v = (double)fds__term_score_tf(c, tf, nb), g = v - prev;
            prev = v;
            size_t i = ng++;
            while (i > 0 && tg[i - 1] < g) {
                tg[i] = tg[i - 1];
                i--;
            }
            tg[i] = g;
        }
        /* merge, keeping only the cap largest (the only ones ever summed) */
        size_t a = 0, t = 0, o = 0;
        while (o < cap && (a < nm || t < ng))
            m2[o++] = t >= ng || (a < nm && mg[a] >= tg[t]) ? mg[a++]
                                                            : tg[t++];
        double *sw = mg;
        mg = m2;
        m2 = sw;
        nm = o;
        double *row = b + k * w, sum = 0;
        row[0] = 0;
        for (size_t r = 1; r < w; r++) {
            if (r <= nm)
                sum += mg[r - 1];
            row[r] = sum;
        }
    }
    n->bw[nb] = (uint32_t)w;
    n->bud[nb] = b;
    return b;
}

/* How far a later marginal gain score(tf') - score(tf' - 1), tf' > tf, of
 * a term of weight w can exceed the one at tf, as fds__term_score_tf
 * computes them: in real numbers w - w / (1 + tf * m) is concave in tf,
 * so the gains fall strictly; each float score is within 4.02 * 2^-24 * w
 * of its real value (four roundings, IEEE 754), a gain within 2^-20 * w,
 * and a later gain exceeds an earlier one by less than 2^-19 * w; twice
 * that here.  INFINITY (no bound) unless w > 0: a negative weight's gains
 * rise. */
static inline double gain_tail(float w)
{
    return w > 0 && isfinite(w) ? (double)w * 0x1p-18 : INFINITY;
}

/* Keep the cap (> 0) largest values offered to the min-heap h[0..*nh):
 * offer v.  Returns what the sum of the heap grew by (0: v not kept). */
double fds__keep_largest(double *h, size_t *nh, size_t cap, double v)
{
    size_t i;
    if (*nh < cap) { /* sift up */
        for (i = (*nh)++; i > 0 && h[(i - 1) / 2] > v; i = (i - 1) / 2)
            h[i] = h[(i - 1) / 2];
        h[i] = v;
        return v;
    }
    if (!(v > h[0]))
        return 0;
    double grew = v - h[0];
    size_t n = *nh;
    for (i = 0;;) { /* the root replaced: sift down */
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        /* the lesser child without a branch: which one is a coin toss */
        double r = c + 1 < n ? h[c + 1] : INFINITY;
        c += r < h[c];
        if (!(h[c] < v))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
    return grew;
}

/*
 * Column maxlen[nb] of fds__budget_row's table for norm byte nb (maxlen <
 * rcap; n->bud set): col[k] bounds what ts[k..] add to a doc of the norm
 * that matches none of ts[..k) -- the sum of the maxlen largest marginal
 * gains of ts[k..] -- which is all the norm split (fds__norm_essential) and
 * the gate (row 0) read.  A min-heap of the len best gains so far, the
 * terms added from the last: O(gains * log len) per norm, where the
 * whole table costs O(nt * len) merges and writes.  The heap's sum is
 * kept by adding and subtracting doubles of floats (a relative error
 * near 2^-45 at most, far inside BOUND_SLACK's margin).  Filled on first
 * use.
 */
static const double *budget_col(fds__norm_lims *n, fds__term_it **ts,
                                uint8_t nb)
{
    size_t nt = n->nt;
    double *col = n->col + (size_t)nb * (nt + 1);
    if ((n->have_col[nb >> 6] >> (nb & 63)) & 1)
        return col;
    uint32_t len = n->maxlen[nb];
    double *h = n->mg, sum = 0; /* rcap + 1 >= len entries */
    size_t nh = 0;
    col[nt] = 0;
    for (size_t k = nt; k-- > 0;) {
        const fds__cnode *c = ts[k]->b.c;
        uint32_t tk = fds__term_tf_at(ts[k], nb);
        uint32_t top = tk < len ? tk : len;
        double prev = 0, tail = gain_tail(c->weight);
        for (uint32_t tf = 1; tf <= top; tf++) {
            double v = (double)fds__term_score_tf(c, tf, nb), g = v - prev;
            prev = v;
            if (nh == len && g + tail <= h[0])
                break; /* no later gain of the term is kept either */
            sum += fds__keep_largest(h, &nh, len, g);
        }
        col[k] = sum;
    }
    n->have_col[nb >> 6] |= 1ull << (nb & 63);
    return col;
}

/* Sift the max-heap h[0..nh) of budget_top down from slot i. */
static void top_sift(top_head *h, size_t nh, size_t i)
{
    top_head e = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= nh)
            break;
        c += c + 1 < nh && h[c + 1].v > h[c].v;
        if (!(h[c].v > e.v))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

/*
 * An upper bound of budget_col's row 0 for norm byte nb (len =
 * maxlen[nb] < rcap) without its column: the len largest marginal gains
 * over every term, taken in real arithmetic, where a term of weight w
 * gains G(tf) = w * m / ((1 + tf * m) * (1 + (tf - 1) * m)) at its tf-th
 * occurrence (m the norm's float normInverse, fds__term_score_tf), which
 * falls strictly with tf.  So the largest gains are a merge of each
 * term's sequence -- one sequence for all the terms of tfmax 1, whose
 * only gains w * m / (1 + m) come in weight order -- that stops after
 * len: O(len log terms), where the column offers every gain to a heap.
 * The float gains a doc's score adds are within 2^-20 * w of these
 * (gain_tail), which the bound adds len times, and the doubles' own
 * rounding is inside its last factor.  The gate (fds__gate_fill) needs the
 * column only for the norms this leaves in.
 */
static double budget_top(fds__norm_lims *n, fds__term_it **ts, uint8_t nb)
{
    uint32_t len = n->maxlen[nb];
    if (!(n->wmax > 0))
        return INFINITY; /* a weight not > 0, or terms of two avgdl */
    (void)fds__term_score_tf(ts[0]->b.c, 1, nb); /* fills normInverse */
    double m = ts[0]->b.c->ni->cache[nb];
    if (!(m > 0) || !isfinite(m))
        return INFINITY;
    /* every term's first gain in weight order (w1); a term's later gains
     * join the heap once its first is taken */
    top_head *h = n->hd;
    size_t nh = 0, p = 0;
    double c1 = m / (1 + m), sum = 0;
    for (uint32_t took = 0; took < len; took++) {
        double v1 = p < n->n1 ? n->w1[p].w * c1 : -1;
        if (nh && h[0].v >= v1) {
            sum += h[0].v;
            uint32_t tf = h[0].tf + 1;
            const fds__term_it *t = ts[h[0].k];
            if (tf > fds__term_tf_at(t, nb)) {
                h[0] = h[--nh];
            } else {
                h[0].v = t->b.c->weight * m /
                         ((1 + tf * m) * (1 + (tf - 1) * m));
                h[0].tf = tf;
            }
            if (nh)
                top_sift(h, nh, 0);
        } else if (v1 >= 0) {
            sum += v1;
            uint32_t k = n->w1[p++].k;
            if (fds__term_tf_at(ts[k], nb) > 1) { /* its second gain */
                top_head e = {ts[k]->b.c->weight * m /
                                  ((1 + 2 * m) * (1 + m)), k, 2};
                size_t i = nh++;
                for (; i > 0 && h[(i - 1) / 2].v < e.v; i = (i - 1) / 2)
                    h[i] = h[(i - 1) / 2];
                h[i] = e;
            }
        } else {
            break; /* no gains left */
        }
    }
    return (sum + len * n->wmax * 0x1p-20) * (1 + 0x1p-40);
}

float fds__gate_fill(fds__norm_gate *g, uint8_t nb, float th)
{
    fds__norm_lims *n = g->nl;
    double b = fds__norm_suf(n, g->ts, nb)[0];
    float c = fds__norm_chain(n, nb, 0, 0.0f); /* exact, once per norm */
    if (c <= th) /* out at th, and so at every later (higher) k-th score */
        return g->val[nb] = c;
    uint32_t len = norm_max_len(nb);
    if (n->bud && len < n->rcap) { /* the token budget of every term */
        double bt = budget_top(n, g->ts, nb);
        if (bt < b)
            b = bt;
        if (b * BOUND_SLACK(n->nt) > (double)th) { /* the column's, exact */
            double bb = budget_col(n, g->ts, nb)[0];
            if (bb < b)
                b = bb;
        }
    }
    b *= BOUND_SLACK(n->nt);
    float f = (float)b;
    if ((double)f < b)
        f = nextafterf(f, INFINITY);
    return g->val[nb] = c < f ? c : f;
}

/* The chain bound of norm byte nb with every term at its largest
 * frequency over the segment (not its cap at the norm, fds__term_tf_at,
 * which may rise with the norm: a longer doc can hold a term more often),
 * added as floats in the order of ts. */
static float chain_at(fds__norm_gate *g, unsigned nb)
{
    float s = 0;
    for (size_t k = 0; k < g->nl->nt; k++) {
        fds__term_it *t = g->ts[k];
        fds__term_ub(t); /* fills tfmax */
        float u = t->tfmax ? fds__term_score_tf(t->b.c, t->tfmax, (uint8_t)nb)
                           : 0;
        s += u > 0 ? u : 0;
    }
    return s;
}

/*
 * Lower g->cut to the least norm byte whose chain bound is <= th, so that
 * every norm byte from it on is out without its own bound.  The chain
 * bound does not rise with the norm byte: a longer doc scores each term's
 * frequency no higher (BM25's length normalization, each step a rounded
 * IEEE operation, which is monotone), and the chain adds the terms' bounds
 * in one order.  The first call searches [0, 256) by halves; later ones,
 * at higher k-th scores, walk down from the cut (it only falls).  A url
 * of tens of terms rules out most norm bytes this way, each of which
 * fds__norm_essential would otherwise have filled (fds__norm_suf,
 * fds__norm_chain).
 */
static void norm_cut(fds__norm_gate *g, float th)
{
    if (g->cut == 256) {
        unsigned lo = 0, hi = 256; /* the answer is in [lo, hi] */
        while (lo < hi) {
            unsigned mid = lo + (hi - lo) / 2;
            if (chain_at(g, mid) <= th)
                hi = mid;
            else
                lo = mid + 1;
        }
        g->cut = lo;
        return;
    }
    while (g->cut > 0 && chain_at(g, g->cut - 1) <= th)
        g->cut--;
}

/*
 * The essential terms by the norms (MaxScore's split with per-norm
 * bounds): the fewest leading terms ts[0..e) such that, at every norm
 * byte the gate lets through at k-th score th, the terms ts[e..] at
 * their largest frequency -- or, tighter on a url of repeated hex pairs,
 * within the token budget of the norm's longest doc (budget_col: a doc
 * matching none of ts[..e) has every token for ts[e..]) -- sum to no more
 * than th (with their slack).  A
 * doc matching none of ts[0..e) cannot enter the page: its norm is ruled
 * out, or the rest cannot lift it above th.  0 when the gate rules out
 * every norm.  On a whole url of tens of rare terms, which only docs of
 * about its length can reach, this is a few terms where the window
 * bounds (the best doc of each term's blocks, of any length) need most.
 * Cached per th; each norm's own split only moves down as th rises (the
 * k-th score never falls), so the terms walked over a search are at most
 * 256 * nt.
 */
size_t fds__norm_split(fds__norm_gate *g, float th)
{
    fds__norm_lims *n = g->nl;
    size_t nt = n->nt, e = 0;
    if (!(g->eth < th)) { /* the first call (NAN), or a lower k-th score */
        for (int nb = 0; nb < 256; nb++)
            g->ek[nb] = nt;
        g->cut = 256;
    }
    norm_cut(g, th);
    for (int nb = 0; nb < (int)g->cut && e < nt; nb++) {
        if (n->seen && !((n->seen[nb >> 6] >> (nb & 63)) & 1))
            continue; /* no doc of the segment has it */
        float v = g->val[nb];
        if (isnan(v))
            v = fds__gate_fill(g, (uint8_t)nb, th);
        if (v <= th)
            continue;
        if (g->ek[nb] <= e)
            continue; /* its split is at or below e already */
        const double *suf = fds__norm_suf(n, g->ts, (uint8_t)nb);
        /* with the norm's token budget, when it has one: a doc matching
         * none of ts[..k) has all its tokens for ts[k..] */
        const double *bc = n->bud && n->maxlen[nb] < n->rcap
                               ? budget_col(n, g->ts, (uint8_t)nb)
                               : NULL;
        size_t k = g->ek[nb];
        while (k > 0) {
            double b = suf[k - 1];
            if (bc && bc[k - 1] < b)
                b = bc[k - 1];
            if (b * BOUND_SLACK(nt - k + 1) > (double)th &&
                !(fds__chain_doubt(suf[k - 1], nt - k + 1, th) &&
                  fds__norm_chain(n, (uint8_t)nb, k - 1, 0.0f) <= th))
                break;
            k--;
        }
        g->ek[nb] = k;
        if (k > e)
            e = k;
    }
    g->eth = th;
    g->e = e;
    return e;
}
