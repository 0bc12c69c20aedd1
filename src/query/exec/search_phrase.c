/*
 * search_phrase.c: phrase queries (FDS_Q_PHRASE) over the term positions
 * of segment index files, as Lucene's PhraseQuery and MultiPhraseQuery run
 * them.
 *
 * Matching.  A phrase of n positions is the conjunction of its terms (an
 * alternative set at the last position for an expanded prefix: Lucene's
 * UnionPostingsEnum merges their positions); on a doc holding all of them
 * the phrase frequency is computed from the positions:
 *   slop 0   ExactPhraseMatcher: the count of positions p with term k at
 *            p + k for every k;
 *   slop > 0 SloppyPhraseMatcher: each term's positions shifted by its
 *            offset in the phrase (p - k), a priority queue of the n
 *            cursors ordered by (shifted position, offset), and the sweep
 *            of Lucene's nextMatch(): the window end - min is shrunk by
 *            advancing the min cursor while it stays below the next one;
 *            every window of matchLength <= slop adds
 *            sloppyWeight = 1 / (1 + matchLength).  Terms repeated in the
 *            phrase ("a b a") are kept off each other's positions as
 *            Lucene's advanceRpts() does (the lesser of two colliding
 *            cursors moves on; at each doc the j-th repeat starts j
 *            positions in).  A repeated alternative set (a prefix whose
 *            expansions include another term of the phrase) is not
 *            checked for collisions, a simplification of Lucene's
 *            multi-term repeat groups.
 * Scoring.  BM25 with the phrase frequency as tf and, as idf, the sum of
 * the idfs of every term of the phrase (BM25Similarity.idfExplain over the
 * terms' statistics): score = weight - weight / (1 + freq * normInverse),
 * weight = boost * sum(idf), the collection statistics of the field summed
 * over the segments as for a term.  A score never reaches `weight`, which
 * bounds it for MaxScore-style pruning.
 *
 * Expansion of match_phrase_prefix (Elasticsearch's MultiPhrasePrefixQuery
 * rewrite): the first max_expansions distinct terms of the field starting
 * with the prefix, segment by segment in term order (at least one); none
 * gives match_none, and a phrase of one position the should-bool of term
 * queries (MultiPhraseQuery's rewrite of a single position).
 *
 * Positions are read block by block beside the postings: a cursor decodes
 * a postings block, jumps to the block's positions by the offset table of
 * the term, and skips the positions of the docs it passes over.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/positions.h"
#include "index/postings.h"
#include "exec/search_int.h"

/* One term's postings and positions in one segment. */
typedef struct pcur {
    fds_sterm t;
    uint8_t skip1[FDS_SIDX_SKIP_LEN], blk1[FDS_STERM_INLINE_BLK];
    const uint8_t *ptab;  /* nblocks - 1 u32 block offsets */
    const uint8_t *pdata; /* positions of block 0 */
    const uint8_t *end;   /* end of the mapped file */
    uint32_t max_doc;
    uint32_t blk;         /* decoded block, FDS__NO_MORE: none */
    uint32_t n, i;        /* docs in it, current one */
    const uint8_t *pp;    /* positions of docs[pi] */
    uint32_t pi;
    uint32_t doc;
    uint32_t sblk;        /* shallow_bound: no block before it holds a doc
                             at or after a target still to come */
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
} pcur;

/* One position of the phrase: its alternatives, their positions at doc. */
typedef struct pslot {
    pcur **alt;
    size_t nalt;
    uint32_t doc;
    uint32_t *pos;
    size_t npos, cap;
    int rpt;              /* repeat group (same single term), -1: none */
} pslot;

typedef struct phrase_it {
    fds__it b;
    pslot *s;
    size_t ns;
    const uint8_t *norms;
    float freq;           /* of the current doc */
    /* with `pruning`, the score a doc must beat to be worth its positions
     * (fds__phrase_set_min_score) */
    bool pruning;
    float min_comp;
    uint32_t bb_blk;      /* lead_block_bound's cache: lead block + 1 (0:
                             none) and its bound */
    float bb;
    uint64_t have[4];     /* bit n set: ninv[n] and f1[n] computed */
    float ninv[256];      /* BM25's normInverse by norm byte (lazy) */
    float f1[256];        /* the score at frequency 1 by norm byte (lazy):
                             most bounds of a doc, without a division */
    int slop;
    bool has_rpts;
    /* sloppy matcher state, one per slot */
    size_t *idx;          /* current position index */
    bool *inq;            /* in the queue */
    size_t *lead;         /* slots by doc frequency, rarest first: the
                             conjunction leads with the rarest term, as
                             Lucene's ConjunctionDISI orders by cost */
} phrase_it;

static float phrase_idf(uint64_t N, uint64_t n)
{
    /* BM25Similarity.idf, as bm25_idf in compile.c */
    return (float)log(1.0 + ((double)N - (double)n + 0.5) / ((double)n + 0.5));
}

/* ---- compile ------------------------------------------------------------------ */

/* Append a copy of t[0..n) to e's values; *cap and *lcap are the
 * capacities of e->vals and e->val_lens.  0 or FDS_ENOMEM. */
static int push_val(fds_query *e, size_t *cap, size_t *lcap, const char *t,
                    size_t n)
{
    if (fds__grow((void **)&e->vals, cap, e->nvals + 1, sizeof *e->vals) ||
        fds__grow((void **)&e->val_lens, lcap, e->nvals + 1, sizeof *e->val_lens))
        return FDS_ENOMEM;
    char *d = malloc(n + 1);
    if (!d)
        return FDS_ENOMEM;
    memcpy(d, t, n);
    d[n] = 0;
    e->vals[e->nvals] = d;
    e->val_lens[e->nvals++] = n;
    return 0;
}

static bool has_val(const fds_query *e, size_t from, const char *t, size_t n)
{
    for (size_t i = from; i < e->nvals; i++)
        if (e->val_lens[i] == n && !memcmp(e->vals[i], t, n))
            return true;
    return false;
}

fds_query *fds__phrase_expand(fds__exec *x, const fds_query *q)
{
    fds_query *e = fds__query_new(FDS_Q_PHRASE);
    size_t cap = 0, lcap = 0;
    if (!e || !(e->field = malloc(q->field_len + 1)))
        goto oom;
    memcpy(e->field, q->field, q->field_len + 1);
    e->field_len = q->field_len;
    e->ftype = q->ftype;
    e->boost = q->boost;
    e->slop = q->slop;
    e->npos = q->npos;
    for (size_t i = 0; i + 1 < q->npos; i++)
        if (push_val(e, &cap, &lcap, q->vals[i], q->val_lens[i]))
            goto oom;
    const char *pre = q->vals[q->npos - 1];
    size_t pn = q->val_lens[q->npos - 1], first = e->nvals, got = 0;
    int max = q->fz_max_exp;
    for (unsigned s = 0; s < x->nseg && (got == 0 || (int)got < max); s++) {
        const fds_sfield *f =
            fds__sidx_field(x->segs[s].sidx, q->field, q->field_len);
        if (!f || f->kind != FDS_FT_TEXT)
            continue;
        for (uint32_t o = fds__ord_lower_bound(f, pre, pn); o < f->nterms; o++) {
            uint32_t l;
            const char *t = fds__sidx_term_str(f, o, &l);
            if (l < pn || memcmp(t, pre, pn))
                break;
            if (has_val(e, first, t, l))
                continue;
            if (push_val(e, &cap, &lcap, t, l))
                goto oom;
            if ((int)++got >= max)
                break;
        }
    }
    if (!got) { /* nothing starts with the prefix */
        fds__query_free(e);
        e = fds__query_new(FDS_Q_MATCH_NONE);
        return e;
    }
    if (e->npos > 1)
        return e;
    /* one position: the should-bool of the expansions' term queries */
    fds_query *b = fds__query_new(FDS_Q_BOOL);
    if (!b)
        goto oom;
    b->boost = q->boost;
    for (size_t i = 0; i < e->nvals; i++) {
        fds_query *t = fds__query_new(FDS_Q_TERM);
        fds_query **nl = realloc(b->should, (b->nshould + 1) * sizeof *nl);
        if (!t || !nl || !(t->field = malloc(q->field_len + 1))) {
            fds__query_free(t);
            if (nl)
                b->should = nl;
            fds__query_free(b);
            goto oom;
        }
        b->should = nl;
        memcpy(t->field, q->field, q->field_len + 1);
        t->field_len = q->field_len;
        t->ftype = q->ftype;
        t->term = e->vals[i];
        t->term_len = e->val_lens[i];
        e->vals[i] = NULL;
        b->should[b->nshould++] = t;
    }
    fds__query_free(e);
    return b;
oom:
    fds__query_free(e);
    return NULL;
}

void fds__phrase_stats(fds__exec *x, fds__cnode *c)
{
    const fds_query *q = c->q;
    uint64_t N = 0, sttf = 0;
    for (unsigned s = 0; s < x->nseg; s++) {
        const fds_sfield *f =
            fds__sidx_field(x->segs[s].sidx, q->field, q->field_len);
        if (!f)
            continue;
        N += f->doc_count;
        sttf += f->sum_ttf;
        if (f->kind == FDS_FT_TEXT && f->nterms && !f->pos && !x->nopos)
            x->nopos = q;
    }
    float idf = 0;
    uint64_t nsum = 0;
    for (size_t i = 0; i < q->nvals; i++) {
        uint64_t n = 0;
        for (unsigned s = 0; s < x->nseg; s++) {
            const fds_sidx *sx = x->segs[s].sidx;
            const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
            fds_sterm t;
            if (f && fds__sidx_term(sx, f, q->vals[i], q->val_lens[i], &t) == 0)
                n += t.df;
        }
        if (n) /* a term no segment holds has no statistics (PhraseWeight) */
            idf += phrase_idf(N, n);
        nsum += n;
    }
    c->N = N;
    c->n = nsum;
    c->idf = idf;
    c->weight = fds__bm25_weight(c->boost, c->idf); /* boost: compile_acc */
    c->avgdl = N ? (float)((double)sttf / (double)N) : 1.0f;
}

/* ---- cursors ------------------------------------------------------------------- */

static inline uint32_t pc_last(const pcur *p, uint32_t b)
{
    return fds__get_u32(p->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN);
}

/* Move p to its first doc >= target (FDS__NO_MORE past the end). */
static uint32_t pc_advance(pcur *p, fds__exec *x, uint32_t target)
{
    if (p->doc != FDS__NO_MORE - 1 && p->doc >= target)
        return p->doc;
    uint32_t b = p->blk == FDS__NO_MORE ? 0 : p->blk;
    while (b < p->t.nblocks && pc_last(p, b) < target)
        b++;
    if (b == p->t.nblocks)
        return p->doc = FDS__NO_MORE;
    if (b != p->blk) {
        const uint8_t *sk = p->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        p->n = (unsigned)sk[13] + 1;
        uint32_t base = b ? pc_last(p, b - 1) + 1 : 0;
        uint32_t po = b ? fds__get_u32(p->ptab + (size_t)(b - 1) * 4) : 0;
        if (fds_postings_decode_block(fds__skip_block(&p->t, sk), p->t.end,
                                      p->n, base, p->max_doc, p->docs,
                                      p->tfs) < 0 ||
            po > (size_t)(p->end - p->pdata)) {
            x->corrupt = 1;
            return p->doc = FDS__NO_MORE;
        }
        p->blk = b;
        p->i = p->pi = 0;
        p->pp = p->pdata + po;
    }
    while (p->i < p->n && p->docs[p->i] < target)
        p->i++;
    if (p->i == p->n) { /* the block ends before its skip entry says */
        x->corrupt = 1;
        return p->doc = FDS__NO_MORE;
    }
    return p->doc = p->docs[p->i];
}

/* Append the positions of p's current doc to s->pos.  0, FDS_ECORRUPT,
 * FDS_ENOMEM. */
static int pc_positions(pcur *p, pslot *s)
{
    if (p->pi < p->i) { /* the docs passed over: their positions unread */
        uint64_t n = 0;
        for (; p->pi < p->i; p->pi++)
            n += p->tfs[p->pi];
        long k = fds_positions_skip(p->pp, p->end, n);
        if (k < 0)
            return FDS_ECORRUPT;
        p->pp += k;
    }
    uint32_t tf = p->tfs[p->i];
    if (fds__grow((void **)&s->pos, &s->cap, s->npos + tf, sizeof *s->pos))
        return FDS_ENOMEM;
    long k = fds_positions_decode(p->pp, p->end, tf, s->pos + s->npos);
    if (k < 0)
        return FDS_ECORRUPT;
    s->npos += tf;
    p->pp += k;
    p->pi++;
    return 0;
}

static uint32_t slot_advance(pslot *s, fds__exec *x, uint32_t target)
{
    uint32_t d = FDS__NO_MORE;
    for (size_t a = 0; a < s->nalt; a++) {
        uint32_t k = pc_advance(s->alt[a], x, target);
        d = k < d ? k : d;
    }
    return s->doc = d;
}

static int u32cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The positions of slot s at its doc, ascending. */
static int slot_positions(pslot *s)
{
    s->npos = 0;
    for (size_t a = 0; a < s->nalt; a++)
        if (s->alt[a]->doc == s->doc) {
            int rc = pc_positions(s->alt[a], s);
            if (rc)
                return rc;
        }
    if (s->nalt > 1)
        qsort(s->pos, s->npos, sizeof *s->pos, u32cmp);
    return 0;
}

/* ---- phrase frequency ---------------------------------------------------------- */

/* ExactPhraseMatcher: positions p with slot k at p + k for every k. */
static float exact_freq(phrase_it *ph)
{
    size_t *idx = ph->idx;
    memset(idx, 0, ph->ns * sizeof *idx);
    uint32_t freq = 0;
    const pslot *s0 = &ph->s[0];
    for (size_t a = 0; a < s0->npos; a++) {
        uint64_t p = s0->pos[a];
        bool ok = true;
        for (size_t k = 1; k < ph->ns && ok; k++) {
            const pslot *s = &ph->s[k];
            while (idx[k] < s->npos && s->pos[idx[k]] < p + k)
                idx[k]++;
            if (idx[k] == s->npos)
                return (float)freq; /* no later match either */
            ok = s->pos[idx[k]] == p + k;
        }
        freq += ok;
    }
    return (float)freq;
}

/* The shifted position of slot k's cursor (Lucene's PhrasePositions.position). */
static inline int64_t pp_pos(const phrase_it *ph, size_t k)
{
    return (int64_t)ph->s[k].pos[ph->idx[k]] - (int64_t)k;
}

/* PhraseQueue order: shifted position, then offset (= slot). */
static inline bool pp_less(const phrase_it *ph, size_t a, size_t b)
{
    int64_t x = pp_pos(ph, a), y = pp_pos(ph, b);
    return x != y ? x < y : a < b;
}

/* The least cursor in the queue (SIZE_MAX when empty). */
static size_t pq_top(const phrase_it *ph)
{
    size_t best = SIZE_MAX;
    for (size_t k = 0; k < ph->ns; k++)
        if (ph->inq[k] && (best == SIZE_MAX || pp_less(ph, k, best)))
            best = k;
    return best;
}

static bool pp_next(phrase_it *ph, size_t k, int64_t *end)
{
    if (ph->idx[k] + 1 >= ph->s[k].npos)
        return false;
    ph->idx[k]++;
    int64_t p = pp_pos(ph, k);
    if (p > *end)
        *end = p;
    return true;
}

/* A cursor of the same repeat group as k on the same term position, or
 * SIZE_MAX. */
static size_t pp_collide(const phrase_it *ph, size_t k)
{
    int r = ph->s[k].rpt;
    uint32_t tp = ph->s[k].pos[ph->idx[k]];
    for (size_t j = 0; j < ph->ns; j++)
        if (j != k && ph->s[j].rpt == r && ph->s[j].pos[ph->idx[j]] == tp)
            return j;
    return SIZE_MAX;
}

/* Lucene's advanceRpts: k just moved; while it collides with a repeat,
 * move the lesser of the two.  False when a cursor runs out. */
static bool pp_rpts(phrase_it *ph, size_t k, int64_t *end)
{
    if (ph->s[k].rpt < 0)
        return true;
    size_t j;
    while ((j = pp_collide(ph, k)) != SIZE_MAX) {
        k = pp_less(ph, k, j) ? k : j;
        if (!pp_next(ph, k, end))
            return false;
    }
    return true;
}

/* SloppyPhraseMatcher: the sum of 1 / (1 + matchLength) over the matches. */
static float sloppy_freq(phrase_it *ph)
{
    size_t ns = ph->ns;
    int64_t end = INT64_MIN;
    memset(ph->idx, 0, ns * sizeof *ph->idx);
    if (ph->has_rpts) /* the j-th repeat of a group starts j positions in */
        for (size_t k = 0; k < ns; k++) {
            if (ph->s[k].rpt < 0)
                continue;
            size_t j = 0;
            for (size_t m = 0; m < k; m++)
                j += ph->s[m].rpt == ph->s[k].rpt;
            if (j >= ph->s[k].npos)
                return 0;
            ph->idx[k] = j;
        }
    for (size_t k = 0; k < ns; k++) {
        ph->inq[k] = true;
        int64_t p = pp_pos(ph, k);
        end = p > end ? p : end;
    }
    float freq = 0;
    for (;;) { /* nextMatch() */
        size_t pp = pq_top(ph);
        ph->inq[pp] = false;
        int64_t ml = end - pp_pos(ph, pp);
        int64_t next = pp_pos(ph, pq_top(ph));
        bool found = false;
        while (pp_next(ph, pp, &end)) {
            if (ph->has_rpts && !pp_rpts(ph, pp, &end))
                break;
            if (pp_pos(ph, pp) > next) { /* done minimizing this match */
                ph->inq[pp] = true;
                if (ml <= ph->slop) {
                    found = true;
                    break;
                }
                pp = pq_top(ph);
                ph->inq[pp] = false;
                next = pp_pos(ph, pq_top(ph));
                ml = end - pp_pos(ph, pp);
            } else if (end - pp_pos(ph, pp) < ml) {
                ml = end - pp_pos(ph, pp);
            }
        }
        if (found) {
            freq += 1.0f / (1.0f + (float)ml);
            continue;
        }
        if (ml <= ph->slop)
            freq += 1.0f / (1.0f + (float)ml);
        return freq;
    }
}

/* ---- the iterator --------------------------------------------------------------- */

/* BM25 of phrase c at phrase frequency freq and norm byte nb: BM25Scorer,
 * normInverse in float as Lucene's cache holds it.  Non-decreasing in freq
 * and non-increasing in nb (float rounding is monotonic), so a bound on
 * freq and one on nb bound the score, to the bit. */
static inline float phrase_bm25(phrase_it *ph, float freq, uint8_t nb)
{
    const fds__cnode *c = ph->b.c;
    if (!((ph->have[nb >> 6] >> (nb & 63)) & 1)) {
        ph->ninv[nb] = 1.0f / (FDS_BM25_K1 * ((1 - FDS_BM25_B) +
                                              FDS_BM25_B * (float)fds__norm_decode(nb) /
                                                  c->avgdl));
        ph->f1[nb] = c->weight - c->weight / (1.0f + 1.0f * ph->ninv[nb]);
        ph->have[nb >> 6] |= 1ull << (nb & 63);
    }
    if (freq == 1.0f)
        return ph->f1[nb];
    return c->weight - c->weight / (1.0f + freq * ph->ninv[nb]);
}

/* The best score a doc of the lead's current block can reach, or INFINITY
 * when there is no bound: a phrase's frequency is at most the lead term's
 * (exact phrases: every match takes one of its positions), whose block max
 * is in its skip entry with the block's min norm byte. */
static float lead_block_bound(phrase_it *ph, const pslot *s0)
{
    if (ph->slop || s0->nalt != 1 || s0->alt[0]->blk == FDS__NO_MORE)
        return INFINITY;
    const pcur *p = s0->alt[0];
    if (ph->bb_blk != p->blk + 1) {
        const uint8_t *sk = p->t.skip + (size_t)p->blk * FDS_SIDX_SKIP_LEN;
        ph->bb = phrase_bm25(ph, (float)fds__get_u32(sk + 8),
                             ph->norms ? sk[12] : 1);
        ph->bb_blk = p->blk + 1;
    }
    return ph->bb;
}

/* The best score doc d (every slot on it) can reach from its term
 * frequencies alone: an exact phrase matches at most as often as its
 * rarest slot's positions (ExactPhraseMatcher.maxFreq, the min), a sloppy
 * one at most once per position of any slot (SloppyPhraseMatcher.maxFreq,
 * the sum). */
static float doc_bound(phrase_it *ph, uint32_t d)
{
    uint64_t lo = UINT64_MAX, sum = 0;
    for (size_t k = 0; k < ph->ns; k++) {
        const pslot *s = &ph->s[k];
        uint64_t tf = 0;
        for (size_t a = 0; a < s->nalt; a++)
            if (s->alt[a]->doc == d)
                tf += s->alt[a]->tfs[s->alt[a]->i];
        lo = tf < lo ? tf : lo;
        sum += tf;
    }
    return phrase_bm25(ph, (float)(ph->slop && ph->ns > 1 ? sum : lo),
                       ph->norms ? ph->norms[d] : 1);
}

/* A bound on the score of the docs in [target, *upto], from the skip
 * entries alone (Lucene's advanceShallow over the phrase's impacts): in
 * each slot of one term the block that holds its first doc >= target;
 * an exact phrase occurs at most min(max tf) times in a doc of all of
 * them, whose norm is at least the largest of their min norms; *upto is
 * the first of their ends.  -INFINITY (and *upto FDS__NO_MORE) when a
 * slot has no doc left; INFINITY when there is no bound (a sloppy
 * phrase, no slot of one term).  Targets must not decrease. */
static float shallow_bound(phrase_it *ph, uint32_t target, uint32_t *upto)
{
    if (ph->slop)
        return INFINITY;
    uint32_t tf = UINT32_MAX, up = FDS__NO_MORE;
    int nb = 0;
    for (size_t k = 0; k < ph->ns; k++) {
        if (ph->s[k].nalt != 1)
            continue; /* a bound over the others still holds */
        pcur *p = ph->s[k].alt[0];
        uint32_t b = p->blk != FDS__NO_MORE && p->blk > p->sblk ? p->blk : p->sblk;
        while (b < p->t.nblocks && pc_last(p, b) < target)
            b++;
        p->sblk = b;
        if (b == p->t.nblocks) {
            *upto = FDS__NO_MORE;
            return -INFINITY;
        }
        const uint8_t *sk = p->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        uint32_t t = fds__get_u32(sk + 8), last = pc_last(p, b);
        tf = t < tf ? t : tf;
        nb = sk[12] > nb ? sk[12] : nb;
        up = last < up ? last : up;
    }
    if (tf == UINT32_MAX)
        return INFINITY;
    *upto = up;
    return phrase_bm25(ph, (float)tf, ph->norms ? (uint8_t)nb : 1);
}

/* The lead slot s0's first doc >= target that may beat the page's k-th
 * score (any doc without pruning).  A lead block whose bound cannot is
 * passed over whole; in an exact phrase of a single lead term, so is a
 * doc whose own term frequency and norm cannot (the phrase matches at
 * most as often as the lead term occurs), before the other slots move
 * to it. */
static uint32_t lead_advance(phrase_it *ph, pslot *s0, fds__exec *x,
                             uint32_t target)
{
    for (;;) {
        uint32_t up = FDS__NO_MORE;
        if (ph->pruning && shallow_bound(ph, target, &up) <= ph->min_comp) {
            /* no doc up to the first end of the slots' blocks can enter */
            if (up >= FDS__NO_MORE - 1)
                return s0->doc = FDS__NO_MORE;
            target = up + 1;
            continue;
        }
        uint32_t d = slot_advance(s0, x, target);
        if (!ph->pruning || d == FDS__NO_MORE)
            return d;
        pcur *p = s0->alt[0];
        if (lead_block_bound(ph, s0) > ph->min_comp) {
            if (ph->slop || s0->nalt != 1)
                return d;
            for (; p->i < p->n; p->i++) {
                uint32_t e = p->docs[p->i];
                if (phrase_bm25(ph, (float)p->tfs[p->i],
                                ph->norms ? ph->norms[e] : 1) > ph->min_comp)
                    return s0->doc = p->doc = e;
            }
        }
        /* no doc left in the lead's block can enter the page: past it */
        target = pc_last(p, p->blk) + 1;
        if (target == FDS__NO_MORE)
            return s0->doc = FDS__NO_MORE;
    }
}

void fds__phrase_set_min_score(fds__it *i, float s)
{
    phrase_it *ph = (phrase_it *)i;
    ph->pruning = true;
    ph->min_comp = s;
}

uint32_t fds__phrase_adv(fds__it *i, uint32_t target)
{
    phrase_it *ph = (phrase_it *)i;
    fds__exec *x = i->x;
    if (target == FDS__NO_MORE)
        return i->doc = FDS__NO_MORE;
    pslot *s0 = &ph->s[ph->lead[0]];
    for (;;) {
        uint32_t d = lead_advance(ph, s0, x, target);
        for (size_t k = 1; k < ph->ns && d != FDS__NO_MORE;) {
            uint32_t e = slot_advance(&ph->s[ph->lead[k]], x, d);
            if (e == d) {
                k++;
                continue;
            }
            d = e == FDS__NO_MORE ? FDS__NO_MORE : lead_advance(ph, s0, x, e);
            k = 1;
        }
        if (d == FDS__NO_MORE)
            return i->doc = FDS__NO_MORE;
        if (ph->pruning && doc_bound(ph, d) <= ph->min_comp) {
            target = d + 1; /* cannot enter the page: positions unread */
            if (target == FDS__NO_MORE)
                return i->doc = FDS__NO_MORE;
            continue;
        }
        int rc = 0;
        for (size_t k = 0; k < ph->ns && !rc; k++)
            rc = slot_positions(&ph->s[k]);
        if (rc) {
            x->corrupt = 1; /* out of memory too: the search cannot answer */
            return i->doc = FDS__NO_MORE;
        }
        ph->freq = ph->slop && ph->ns > 1 ? sloppy_freq(ph) : exact_freq(ph);
        if (ph->freq > 0)
            return i->doc = d;
        target = d + 1;
        if (target == FDS__NO_MORE)
            return i->doc = FDS__NO_MORE;
    }
}

float fds__phrase_freq(const fds__it *i)
{
    return ((const phrase_it *)i)->freq;
}

static float phrase_score(fds__it *i)
{
    phrase_it *ph = (phrase_it *)i;
    i->x->scored++;
    return phrase_bm25(ph, ph->freq, ph->norms ? ph->norms[i->doc] : 1);
}

static void phrase_destroy(fds__it *i)
{
    phrase_it *ph = (phrase_it *)i;
    for (size_t k = 0; k < ph->ns; k++) {
        for (size_t a = 0; a < ph->s[k].nalt; a++)
            free(ph->s[k].alt[a]);
        free(ph->s[k].alt);
        free(ph->s[k].pos);
    }
    free(ph->s);
    free(ph->idx);
    free(ph->inq);
    free(ph->lead);
    free(ph);
}

/* The cursor of term t of field f in segment sx, NULL (with *rc 0) when
 * the segment lacks it. */
static pcur *pc_open(const fds_sidx *sx, const fds_sfield *f, const char *t,
                     size_t n, int *rc)
{
    fds_sterm st;
    *rc = 0;
    if (fds__sidx_term(sx, f, t, n, &st))
        return NULL;
    pcur *p = calloc(1, sizeof *p);
    if (!p) {
        *rc = FDS_ENOMEM;
        return NULL;
    }
    p->t = st;
    fds__sterm_inline(&p->t, f->norms, p->skip1, p->blk1);
    p->ptab = fds__sidx_term_pos(sx, f, st.ord);
    p->pdata = p->ptab + (size_t)(st.nblocks - 1) * 4;
    p->end = sx->map + sx->len - FDS_SIDX_FOOTER_LEN;
    p->max_doc = fds_sidx_max_doc(sx);
    p->blk = FDS__NO_MORE;
    p->doc = FDS__NO_MORE - 1;
    return p;
}

int fds__phrase_build(fds__exec *x, const fds__cnode *c, const fds_sidx *sx, fds__it **out)
{
    const fds_query *q = c->q;
    *out = NULL;
    const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
    if (!f || f->kind != FDS_FT_TEXT || !f->pos || q->npos == 0 ||
        q->nvals < q->npos)
        return 0;
    phrase_it *ph = calloc(1, sizeof *ph);
    if (!ph)
        return FDS_ENOMEM;
    ph->b.doc = FDS__NO_MORE - 1;
    ph->b.x = x;
    ph->b.c = c;
    ph->b.advance = fds__phrase_adv;
    ph->b.score = phrase_score;
    ph->b.destroy = phrase_destroy;
    ph->norms = f->norms;
    ph->slop = q->slop;
    ph->ns = q->npos;
    ph->s = calloc(ph->ns, sizeof *ph->s);
    ph->idx = calloc(ph->ns, sizeof *ph->idx);
    ph->inq = calloc(ph->ns, sizeof *ph->inq);
    ph->lead = calloc(ph->ns, sizeof *ph->lead);
    uint64_t *sdf = calloc(ph->ns, sizeof *sdf);
    int rc = (!ph->s || !ph->idx || !ph->inq || !ph->lead || !sdf) ? FDS_ENOMEM : 0;
    bool empty = false;
    uint64_t df = 0;
    for (size_t k = 0; k < ph->ns && !rc && !empty; k++) {
        pslot *s = &ph->s[k];
        size_t a0 = k, a1 = k + 1 < ph->ns ? k + 1 : q->nvals;
        s->rpt = -1;
        if (!(s->alt = calloc(a1 - a0, sizeof *s->alt))) {
            rc = FDS_ENOMEM;
            break;
        }
        for (size_t a = a0; a < a1 && !rc; a++) {
            pcur *p = pc_open(sx, f, q->vals[a], q->val_lens[a], &rc);
            if (p) {
                s->alt[s->nalt++] = p;
                df += p->t.df;
                sdf[k] += p->t.df;
            }
        }
        empty = !s->nalt;
        /* repeat groups: slots of one single term, numbered by the first */
        for (size_t j = 0; j < k && a1 - a0 == 1; j++)
            if (ph->s[j].nalt == 1 && q->val_lens[j] == q->val_lens[k] &&
                !memcmp(q->vals[j], q->vals[k], q->val_lens[k])) {
                s->rpt = ph->s[j].rpt = (int)j;
                ph->has_rpts = true;
                break;
            }
    }
    if (rc || empty) {
        ph->ns = ph->s ? ph->ns : 0;
        phrase_destroy((fds__it *)ph);
        free(sdf);
        return rc;
    }
    for (size_t k = 0; k < ph->ns; k++) { /* insertion sort: a few slots */
        size_t j = k;
        for (; j > 0 && sdf[ph->lead[j - 1]] > sdf[k]; j--)
            ph->lead[j] = ph->lead[j - 1];
        ph->lead[j] = k;
    }
    free(sdf);
    if (!x->no_stats)
        x->total_postings += df;
    *out = (fds__it *)ph;
    return 0;
}
