/*
 * maxscore.c: the top-k pass of a disjunction of terms ranked by score.
 *
 * A disjunction of terms (a `match` on a text field, a single `term`, a
 * bool of should-terms) first gets a k-th score from its rarest terms' docs
 * (seed.c), is counted term at a time up to track_total_hits (unless one
 * term's doc count settles it; taat.c), then finished here by MaxScore
 * (Turtle & Flood 1995, as Lucene 9's MaxScoreBulkScorer) over windows of
 * docs with per-window term bounds from the (max tf, min norm) block
 * impacts in the skip lists: frequent low-idf terms only probe the
 * candidates of the rare ones, and windows no doc of which can enter the
 * page are skipped undecoded.  Candidates are also dropped by bounds at
 * their own norm and by the token budget of their length (norms.c); a doc
 * that these rule out whatever its terms is not even scored by the
 * essential terms, which are the fewest that the norms still let through
 * need (fds__norm_gate, fds__norm_essential); docs of one field value are
 * decided once (the value memo); and a large segment's pass may run as two
 * slices on two threads sharing their k-th scores (run.c).  Ties between
 * equal scores go to the lower (segment, doc), like Lucene, so a candidate
 * must score strictly above the current k-th score.  A disjunction sums a
 * doc's term scores in one order (weight per posting descending) in every
 * pass, so a page does not depend on how far hits were counted; bounds
 * compared with the k-th score carry the float summation slack
 * (BOUND_SLACK), but for the per-norm bound summed as floats in that same
 * order (fds__norm_chain), which is exact and rules out docs that tie the
 * k-th score.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "exec/norms.h"

/* Bound of `t` over the docs [lo, hi): the largest block bound of its
 * blocks that overlap the window, from the skip data alone (0: none). */
static float term_window_bound(fds__term_it *t, uint32_t lo, uint32_t hi)
{
    if (t->b.doc >= hi)
        return 0;
    uint32_t b = t->blk == FDS__NO_MORE || t->blk < t->wblk ? t->wblk : t->blk;
    while (b < t->t.nblocks && fds__term_blk_last(t, b) < lo)
        b++;
    t->wblk = b; /* a term no candidate probes lags: do not rescan */
    float ub = 0, cb = 0;
    uint32_t ptf = 0;
    int pnorm = -1;
    for (; b < t->t.nblocks; b++) {
        const uint8_t *sk = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        uint32_t tf = fds__get_u32(sk + 8);
        if (tf != ptf || sk[12] != pnorm) { /* neighbours mostly agree */
            ptf = tf;
            pnorm = sk[12];
            cb = fds__term_blk_bound(t, b);
        }
        /* the impacts only when the coarse bound could raise the max */
        if (cb > ub) {
            float bb =
                fds__skip_ilen(sk) ? fds__term_blk_bound_exact(t, b) : cb;
            if (bb > ub)
                ub = bb;
        }
        if (fds__get_u32(sk) >= hi - 1)
            break;
    }
    return ub;
}

/* The k-th score slice `me` of a segment must beat: its page's, or the
 * other slice's when that is higher -- lowered by one ulp for slice 0,
 * whose docs win ties against slice 1's (lower doc ids), so that a doc
 * scoring exactly slice 1's k-th score is still offered. */
static inline float slice_theta(const fds__heap *hp, fds__slice_th *sh, int me)
{
    float th = fds__theta(hp);
    if (!sh)
        return th;
    uint32_t b = atomic_load_explicit(&sh->th[1 - me], memory_order_relaxed);
    float o;
    memcpy(&o, &b, sizeof o);
    if (me == 0)
        o = nextafterf(o, -INFINITY);
    return o > th ? o : th;
}

/* Publish slice me's page's k-th score to the other slice. */
static inline void slice_publish(const fds__heap *hp, fds__slice_th *sh, int me)
{
    if (!sh)
        return;
    float th = fds__theta(hp);
    uint32_t b;
    memcpy(&b, &th, sizeof b);
    atomic_store_explicit(&sh->th[me], b, memory_order_relaxed);
}

/* Candidates per posting of a term in the window below which probe_term
 * seeks each candidate instead of merging the two lists. */
#define PROBE_MERGE_MIN_DENSITY 8u

/* t's postings expected in [lo, hi), by its density. */
static inline double ms_expect(const fds__term_it *t, uint32_t lo, uint32_t hi)
{
    return (double)t->t.df * (hi - lo) / (t->max_doc ? t->max_doc : 1);
}

/* The work of a MaxScore window against a term-at-a-time one over every
 * term, in postings: a seek costs about a block's decoding, a candidate's
 * filter step and a merged posting one posting.  When a window's work
 * (ms_pass.work) is more than MS_TAAT_RATIO times the postings of all its
 * terms, the next MS_TAAT_RUN windows are scored term at a time, every
 * term, without bounds (ms_taat_window), and MaxScore is tried again
 * after them (twice as many after each try that again was not worth it).
 * A whole url whose common terms' docs score near the k-th score (a
 * Persian slug's hex pairs: ~120k candidates in 1M docs, each probed
 * through most of 19 terms) cost MaxScore 2.4 times a plain
 * term-at-a-time pass's CPU (bench/scale, 1M growing corpus); the
 * threshold can rise and make MaxScore worth it again later.  Only full
 * windows (TAAT_WINDOW docs or more) decide: the first, small ones run
 * while the k-th score is still rising, and judged by them, the
 * --resample corpus's whole urls (pruned to a few postings once the page
 * fills) scored 13 times the postings.  Both passes sum a doc's scores in
 * the order of ts: the page is the same. */
#define MS_SEEK_POSTINGS 32.0
#define MS_TAAT_RATIO 1.0
#define MS_TAAT_RUN 4u

/*
 * Add term t's score to the candidates of the window [lo, hi) that it
 * matches: cs[i] += its score at doc lo + cw[i] (cw ascending, n of them).
 * When the candidates are dense among t's postings (the common case on a
 * whole url: the candidates of `d9` mostly hold `d8`), the two lists are
 * merged with branch-free steps that list the matches, and only the
 * matches are scored (most candidates miss: scoring the whole block cost
 * more than the merge); otherwise each candidate seeks.  Returns the postings
 * scored.
 */
static uint64_t probe_term(fds__term_it *t, uint32_t lo, uint32_t hi,
                           const uint16_t *cw, float *cs, uint32_t *ct,
                           size_t n)
{
    uint64_t hits = 0;
    /* t's postings expected in the window, by its density */
    uint64_t exp = (uint64_t)t->t.df * (hi - lo) / (t->max_doc ? t->max_doc : 1);
    if (n * PROBE_MERGE_MIN_DENSITY < exp) {
        const uint8_t *norms = t->norms;
        for (size_t i = 0; i < n; i++) {
            uint32_t d = lo + cw[i];
            if (t->b.doc < d)
                fds__term_seek(t, d);
            if (t->b.doc == d) {
                hits++;
                cs[i] += fds__term_score_any(t, t->tfs[t->i],
                                              norms ? norms[d] : 1);
                if (ct)
                    ct[i] += t->tfs[t->i];
            }
        }
        return hits;
    }
    size_t i = 0;
    const uint8_t *norms = t->norms;
    while (i < n) {
        uint32_t d = lo + cw[i];
        if (t->b.doc < d)
            fds__term_seek(t, d);
        if (t->b.doc == FDS__NO_MORE)
            break;
        const uint32_t *pd = t->docs, *tfs = t->tfs;
        uint32_t j = t->i, m = t->n;
        /* the matches, (candidate, posting) pairs: j moves on every match,
         * so a block has at most m <= FDS_POSTINGS_BLOCK of them */
        uint16_t mi[FDS_POSTINGS_BLOCK], mj[FDS_POSTINGS_BLOCK];
        size_t h = 0;
        while (i < n && j < m) {
            uint32_t a = lo + cw[i], b = pd[j];
            mi[h & (FDS_POSTINGS_BLOCK - 1)] = (uint16_t)i;
            mj[h & (FDS_POSTINGS_BLOCK - 1)] = (uint16_t)j;
            h += a == b;
            i += a <= b;
            j += b <= a;
        }
        /* scores of the matches only: most candidates miss */
        for (size_t q = 0; q < h; q++) {
            uint32_t pj = mj[q];
            cs[mi[q]] += fds__term_score_any(t, tfs[pj],
                                              norms ? norms[pd[pj]] : 1);
            if (ct)
                ct[mi[q]] += tfs[pj];
        }
        hits += h;
        if (j < m) { /* the candidates ran out inside the block */
            t->i = j;
            t->b.doc = pd[j];
        } else { /* the block ran out: the next candidate seeks past it */
            t->i = m - 1;
            t->b.doc = pd[m - 1];
        }
    }
    return hits;
}

/*
 * Scores memoized by field value.  On a text field no doc of the segment
 * gave more than one value (FDS_SIDX_F_SINGLE), a doc with an ordinal in
 * the field's keyword multi-field holds exactly that ordinal's string, and
 * so does a doc with a value id there (FDS_SIDX_F_VALUES: a long value,
 * past the keyword's ignore_above, that other docs hold too), so two docs
 * of one key (fds__val_key) have the same terms, frequencies and norm, and
 * the same score to the bit (terms are summed in the order of ts whatever
 * the window).  Access logs repeat a url thousands of times: once a doc of
 * an ordinal has been scored in full (its exact score) or dropped by the
 * bounds (its score cannot beat a k-th score, which only rises), every
 * later doc of that ordinal is decided by one lookup, without probing a
 * term.  Open addressing on ordinal + 1 (0: empty), doubling from
 * ORD_MEMO_FIRST to ORD_MEMO_MAX slots, then full (further ordinals are
 * scored as before).
 */
#define ORD_MEMO_FIRST 1024u
#define ORD_MEMO_MAX (1u << 16)

typedef struct ord_memo {
    bool on;               /* false: no memo */
    fds__val_cols vc;           /* the keys */
    uint32_t *key;         /* key + 1, 0 = empty */
    float *val;            /* exact score, or -INFINITY: cannot enter */
    uint32_t cap, n;
    /* per window: the candidates' ordinals (FDS_SIDX_NO_ORD: none), and
     * the docs decided by the memo that enter the page (offsets, scores);
     * the pass's window scratch */
    uint32_t *co;
    uint16_t *rw;
    float *rs;
    size_t nr;
    /* candidates whose ordinal was read, and those the memo decided: a
     * pass whose values are long (past ignore_above, no ordinal) or all
     * distinct stops reading them (ORD_MEMO_TRIAL, ORD_MEMO_MIN_HITS) */
    uint64_t reads, hits;
} ord_memo;

/* Candidates read before the memo may give up, and the share of them it
 * must have decided (1/16) to be kept. */
#define ORD_MEMO_TRIAL 2048u
#define ORD_MEMO_MIN_HITS(reads) ((reads) / 16)

/* Docs per distinct key the segment must have on average for the memo to
 * be tried at all.  Each read is a random access into the key column; on
 * a log whose urls mostly differ (synthlogs' default corpus: 488,050
 * distinct urls in 1M docs, 2.0 docs per key) the reads cost more than
 * the probes the hits save (the url class of the default mix took 1.27 ms
 * of server CPU per query with the memo, 1.03 without), while on a log
 * that repeats its urls (synthlogs --resample: 7,047 urls in 1M docs) the
 * memo saves a third (0.26 -> 0.17 ms). */
#define ORD_MEMO_MIN_DOCS_PER_KEY 8u

static void memo_free(ord_memo *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* The columns whose keys decide the score of a doc over the terms
 * ts[0..nt) of segment si (fds__val_cols), into *c; false when there are none:
 * the terms must share one text field's norms, single-valued in the
 * segment. */
bool fds__value_cols(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                     fds__val_cols *c)
{
    *c = (fds__val_cols){0};
    for (size_t k = 0; k < nt; k++)
        if (!ts[k]->norms || ts[k]->norms != ts[0]->norms)
            return false;
    const fds_query *q = ts[0]->b.c->q;
    const fds_sidx *sx = x->segs[si].sidx;
    const fds_sfield *tf = fds__sidx_field(sx, q->field, q->field_len);
    if (!tf || !(tf->flags & FDS_SIDX_F_SINGLE) || !x->req->mapping)
        return false;
    const fds_mfield *k =
        fds__mapping_keyword_sub(x->req->mapping, q->field, q->field_len);
    const fds_sfield *kf = k ? fds__sidx_field(sx, k->path, k->path_len) : NULL;
    if (kf && (kf->flags & FDS_SIDX_F_ORDCOL) && kf->ord_bits) {
        c->kf = kf;
        c->kn = kf->nterms;
    }
    /* keys + 1 must fit 32 bits (ord_memo) */
    if ((tf->flags & FDS_SIDX_F_VALUES) &&
        (uint64_t)c->kn + tf->nvals < FDS_SIDX_NO_ORD - 1)
        c->vf = tf;
    return c->kf || c->vf;
}

/* Turn the memo on for segment si when ts (all of one text field, nl.norms
 * set) allow it: the field is single-valued in the segment and has keys
 * there (fds__value_cols).  Off when not, or out of memory (the pass runs
 * without it). */
static void memo_init(ord_memo *m, fds__exec *x, unsigned si, fds__term_it **ts,
                      size_t nt, fds__win_scratch *ws)
{
    memset(m, 0, sizeof *m);
    fds__val_cols vc;
    if (!fds__value_cols(x, si, ts, nt, &vc))
        return;
    uint64_t keys = (uint64_t)vc.kn + (vc.vf ? vc.vf->nvals : 0);
    if (keys * ORD_MEMO_MIN_DOCS_PER_KEY > ts[0]->max_doc)
        return; /* values mostly differ: the reads would not pay */
    m->key = calloc(ORD_MEMO_FIRST, sizeof *m->key);
    m->val = malloc(ORD_MEMO_FIRST * sizeof *m->val);
    if (!m->key || !m->val) {
        memo_free(m);
        return;
    }
    m->co = ws->co;
    m->rw = ws->rw;
    m->rs = ws->rs;
    m->cap = ORD_MEMO_FIRST;
    m->vc = vc;
    m->on = true;
}

static inline uint32_t memo_slot(const ord_memo *m, uint32_t o)
{
    return (uint32_t)(((uint64_t)(o + 1) * 0x9E3779B97F4A7C15ull) >> 32) &
           (m->cap - 1);
}

/* The memo's value for ordinal o, NULL when it has none. */
static inline const float *memo_get(const ord_memo *m, uint32_t o)
{
    for (uint32_t i = memo_slot(m, o);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == o + 1)
            return &m->val[i];
        if (!m->key[i])
            return NULL;
    }
}

static void memo_put(ord_memo *m, uint32_t o, float v);

/* Double the table (false at ORD_MEMO_MAX or out of memory). */
static bool memo_grow(ord_memo *m)
{
    if (m->cap >= ORD_MEMO_MAX)
        return false;
    ord_memo o = *m;
    uint32_t *key = calloc((size_t)m->cap * 2, sizeof *key);
    float *val = malloc((size_t)m->cap * 2 * sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return false;
    }
    m->key = key;
    m->val = val;
    m->cap *= 2;
    m->n = 0;
    for (uint32_t i = 0; i < o.cap; i++)
        if (o.key[i])
            memo_put(m, o.key[i] - 1, o.val[i]);
    free(o.key);
    free(o.val);
    return true;
}

/* Record ordinal o's exact score, or -INFINITY (cannot enter).  A full
 * table at ORD_MEMO_MAX takes no new ordinal. */
static void memo_put(ord_memo *m, uint32_t o, float v)
{
    if (o == FDS_SIDX_NO_ORD)
        return;
    if ((m->n + 1) * 4 > m->cap * 3 && !memo_grow(m))
        return;
    uint32_t i = memo_slot(m, o);
    while (m->key[i] && m->key[i] != o + 1)
        i = (i + 1) & (m->cap - 1);
    if (!m->key[i])
        m->n++;
    m->key[i] = o + 1;
    m->val[i] = v;
}

/*
 * The least frequencies at which a lone term beats a k-th score, per norm
 * byte: a block's (norm, tf) impact pair is competitive when its tf is at
 * least need[norm].  BM25 is nondecreasing in tf (each float operation
 * rounds monotonically), so a binary search over [1, tfmax] finds it with
 * the very floats a doc's score is; filled lazily, and anew when the k-th
 * score rises (a few dozen times on a frequent term).  Deciding a block
 * is then integer compares, no division per pair.
 */
typedef struct tf_need {
    float th;             /* the k-th score need is for */
    uint64_t have[4];     /* bit n set: need[n] filled */
    uint32_t need[256];   /* UINT32_MAX: no tf of the term is enough */
} tf_need;

static uint32_t need_fill(tf_need *nd, fds__term_it *t, uint8_t nb)
{
    uint32_t lo = 1, hi = t->tfmax ? t->tfmax : 1;
    if (!(fds__term_score_tf(t->b.c, hi, nb) > nd->th)) {
        lo = UINT32_MAX;
    } else {
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (fds__term_score_tf(t->b.c, mid, nb) > nd->th)
                hi = mid;
            else
                lo = mid + 1;
        }
    }
    nd->have[nb >> 6] |= 1ull << (nb & 63);
    return nd->need[nb] = lo;
}

static inline uint32_t need_at(tf_need *nd, fds__term_it *t, uint8_t nb)
{
    if (__builtin_expect((nd->have[nb >> 6] >> (nb & 63)) & 1, 1))
        return nd->need[nb];
    return need_fill(nd, t, nb);
}

/* Can a doc of block b of t beat nd->th?  By (max tf, min norm) first,
 * then by the block's impacts (sidx_format.h), which are exact. */
static bool block_competitive(fds__term_it *t, uint32_t b, tf_need *nd)
{
    const uint8_t *sk = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    if (fds__get_u32(sk + 8) < need_at(nd, t, sk[12]))
        return false;
    uint32_t ilen = fds__skip_ilen(sk), tf;
    const uint8_t *p = fds__skip_impacts(&t->t, sk), *end = p + ilen;
    uint8_t nb;
    int r;
    while ((r = fds__impact_next(&p, end, &nb, &tf)) > 0)
        if (tf >= need_at(nd, t, nb))
            return true;
    /* none: (max tf, min norm) is the block's pair; damaged: decode */
    return ilen == 0 || r < 0;
}

/* Can a doc of group g (FDS_SGROUP_BLOCKS blocks) of t beat nd->th?  By
 * the group's frontier of its blocks' impacts (t->t.grp set). */
static bool group_competitive(fds__term_it *t, uint32_t g, tf_need *nd)
{
    for (uint32_t i = t->t.grp[g]; i < t->t.grp[g + 1]; i++)
        if (t->t.gpairs[i].tf >= need_at(nd, t, t->t.gpairs[i].norm))
            return true;
    return false;
}

/*
 * Top-k of a lone term over docs [from, to): block by block, passing over
 * every group of blocks, then every block, whose impacts cannot beat the
 * k-th score (tf_need), without the MaxScore windows (one term has no
 * other to probe).  On `match url:D8` at 10M docs the pass reads 344
 * group frontiers and the blocks of the groups that can beat the page,
 * and decodes 24 blocks (3,072 postings scored).  The scores are the
 * same floats as every other pass's.  Stops once the k-th score reaches
 * the term's bound.  0.
 */
static int run_one_term(fds__exec *x, unsigned si, fds__term_it *t, fds__heap *hp,
                        uint32_t from, uint32_t to, fds__slice_th *sh,
                        int me)
{
    const fds_search_segment *sg = &x->segs[si];
    uint32_t end = to < t->max_doc ? to : t->max_doc;
    if (t->b.doc < from)
        t->b.advance(&t->b, from);
    if (t->b.doc >= end)
        return 0;
    float ub = fds__term_ub(t); /* fills tfmax */
    if (!t->tf1_all)
        fds__term_tf1_fill(t);
    tf_need nd = {.th = NAN};
    const uint8_t *norms = t->norms;
    uint32_t b = t->blk, j = t->i; /* the cursor's block is decoded */
    for (uint32_t seen = 0; b < t->t.nblocks; b++, j = 0, seen++) {
        if (b != t->blk && fds__term_blk_last(t, b - 1) + 1 >= end)
            break; /* the block starts past the range */
        if (seen % 64 == 63 && fds__past_deadline(x))
            break;
        float th = slice_theta(hp, sh, me);
        if (th >= ub)
            break; /* the page is final */
        if (th > -INFINITY) {
            if (!(nd.th == th)) {
                nd.th = th;
                memset(nd.have, 0, sizeof nd.have);
            }
            uint32_t g = b / FDS_SGROUP_BLOCKS;
            if (t->t.grp && (b % FDS_SGROUP_BLOCKS == 0 || b == t->blk) &&
                !group_competitive(t, g, &nd)) {
                b = (g + 1) * FDS_SGROUP_BLOCKS - 1; /* the loop's b++ */
                continue;
            }
            if (!block_competitive(t, b, &nd))
                continue;
        }
        if (b != t->blk && fds__term_decode_block(t, b))
            return 0; /* damaged: x->corrupt is set */
        uint32_t n = t->n, scored = 0;
        /* a doc of fewer occurrences than the block's least norm needs
         * at the block's first k-th score cannot enter (the k-th score
         * only rises): passed over without reading its norm */
        uint8_t bnorm = t->t.skip[(size_t)b * FDS_SIDX_SKIP_LEN + 12];
        uint32_t tmin = norms && th > -INFINITY ? need_at(&nd, t, bnorm) : 0;
        for (; j < n && t->docs[j] < end; j++) {
            if (t->tfs[j] < tmin)
                continue;
            uint32_t d = t->docs[j];
            if (!fds__is_live(sg, d))
                continue;
            float s = fds__term_score_tf1(t, t->tfs[j], norms ? norms[d] : 1);
            scored++;
            fds__offer(hp, si, d, s, &th);
            if (th >= ub)
                break; /* the page is final */
        }
        x->scored += scored;
        slice_publish(hp, sh, me);
        if (j < n)
            break; /* the range ends in this block, or the page is final */
    }
    return 0;
}

/* One MaxScore pass over a segment's docs: its terms and page, the window
 * scratch, the bounds of every term over the window (wub, suf) and the
 * segment (gsuf), the norm bounds and gate, and the value memo. */
typedef struct ms_pass {
    fds__exec *x;
    unsigned si;
    fds__term_it **ts;
    size_t nt;
    fds__heap *hp;
    fds__slice_th *sh;
    int me;
    const fds_search_segment *sg;
    uint32_t max_doc;   /* the pass's end: min(to, the segment's max doc) */
    fds__win_scratch *ws;
    float *wub;         /* [nt]: each term's bound over the window */
    /* suf[k]: sum wub[k..]; then gsuf[k]: the same sum of the segment
     * bounds, which is suf's tail past the norm split in every window */
    double *suf, *gsuf;
    fds__norm_lims nl;
    fds__norm_gate gate;
    ord_memo memo;
    double gsum;        /* sum of the terms' segment bounds (NAN: not yet) */
    uint32_t win, win_cap; /* the next window's size, and its cap */
    /* one essential term: its hopeless blocks make no candidates (lp),
     * and its postings are the candidates, listed in doc order straight
     * into cw, cs, ct (no bitset, no walk) */
    fds__lead_prune lp;
    fds__cand_list lead;
    /* the last MaxScore window's work, in postings (ms_score_rest), and
     * the term-at-a-time windows to run before MaxScore is tried again */
    double work;
    unsigned taat_left, taat_run;
} ms_pass;

/* Set up p for the terms ts[0..nt) (nt >= 2) of segment si: 0 or
 * FDS_ENOMEM (p then holds nothing).  Free with ms_close. */
static int ms_open(ms_pass *p, fds__exec *x, unsigned si, fds__term_it **ts,
                   size_t nt, fds__heap *hp, uint32_t to, fds__slice_th *sh,
                   int me)
{
    *p = (ms_pass){.x = x, .si = si, .ts = ts, .nt = nt, .hp = hp, .sh = sh,
                   .me = me, .sg = &x->segs[si],
                   .max_doc = to < ts[0]->max_doc ? to : ts[0]->max_doc,
                   .gsum = NAN, .win = MAXSCORE_FIRST_WINDOW,
                   .win_cap = TAAT_WINDOW};
    /* the window's bitset and accumulators (0 between windows) and its
     * candidate lists */
    p->ws = fds__win_get();
    p->wub = malloc(nt * sizeof *p->wub);
    p->suf = malloc(2 * (nt + 1) * sizeof *p->suf);
    p->gsuf = p->suf ? p->suf + nt + 1 : NULL;
    p->gate = (fds__norm_gate){.nl = &p->nl, .ts = ts, .eth = NAN, .cut = 256};
    for (int i = 0; i < 256; i++)
        p->gate.val[i] = NAN;
    int rc = fds__norm_lims_init(&p->nl, ts, nt);
    if (!rc && p->ws && p->nl.norms)
        memo_init(&p->memo, x, si, ts, nt, p->ws);
    if (!p->ws || !p->wub || !p->suf || rc) {
        memo_free(&p->memo);
        fds__win_put(p->ws);
        free(p->wub);
        free(p->suf);
        fds__norm_lims_free(&p->nl);
        return FDS_ENOMEM;
    }
    p->lead = (fds__cand_list){p->ws->cw, p->ws->cs, p->ws->ct, 0};
    p->gsuf[nt] = 0;
    for (size_t k = nt; k-- > 0;)
        p->gsuf[k] = p->gsuf[k + 1] + fds__term_ub(ts[k]);
    return 0;
}

static void ms_close(ms_pass *p)
{
    memo_free(&p->memo);
    fds__win_put(p->ws);
    free(p->wub);
    free(p->suf);
    fds__norm_lims_free(&p->nl);
}

/* The window's bound of ts[k..]: its own terms' up to the norm split en,
 * the segment's past it. */
static inline double ms_wsuf(const ms_pass *p, size_t en, size_t k)
{
    return k < en ? p->suf[k] : p->gsuf[k];
}

/* The outcomes of picking a window. */
enum { MS_WINDOW, MS_SKIP, MS_DONE };

/*
 * Pick the window from *lo: MS_DONE when the pass is over (deadline, a
 * final page, no posting left), MS_SKIP when the window has no posting of
 * a term that makes candidates (*lo moved to the next one), else
 * MS_WINDOW with the window [*lo, *hi), the terms essential by the norms
 * alone at its start in *en (nt: no norm split), and the window bounds of
 * those terms in p->wub and p->suf.
 */
static int ms_pick_window(ms_pass *p, uint32_t *lo, uint32_t *hi, size_t *en)
{
    fds__term_it **ts = p->ts;
    size_t nt = p->nt;
    if (fds__past_deadline(p->x))
        return MS_DONE;
    float th0 = slice_theta(p->hp, p->sh, p->me);
    if (th0 > -INFINITY) {
        if (isnan(p->gsum)) {
            p->gsum = 0;
            for (size_t k = 0; k < nt; k++)
                p->gsum += fds__term_ub(ts[k]);
        }
        if (p->gsum * BOUND_SLACK(nt - 1) <= (double)th0)
            return MS_DONE; /* the page is final: nothing left can beat it */
    }
    *en = nt; /* the terms essential by the norms alone */
    if (p->nl.norms && th0 > -INFINITY) {
        /* a doc before the next posting of every term essential by the
         * norms cannot enter the page, whatever the window */
        *en = fds__norm_essential(&p->gate, th0);
        uint32_t nx = FDS__NO_MORE;
        for (size_t k = 0; k < *en; k++) {
            if (ts[k]->b.doc < *lo)
                ts[k]->b.advance(&ts[k]->b, *lo);
            if (ts[k]->b.doc < nx)
                nx = ts[k]->b.doc;
        }
        if (nx >= p->max_doc)
            return MS_DONE;
        if (nx > *lo)
            *lo = nx;
    }
    *hi = p->max_doc - *lo > p->win ? *lo + p->win : p->max_doc;
    if (p->win < p->win_cap)
        p->win *= 2;
    else if (p->win > p->win_cap)
        p->win = p->win_cap;
    /* only the terms essential by the norms make candidates: the others'
     * cursors (probed, not walked) neither bound the window nor tell
     * whether it has any */
    uint32_t first = FDS__NO_MORE;
    for (size_t k = 0; k < *en; k++) {
        /* past the norm split, the segment's bound (gsuf): reading every
         * term's skip data per window cost more than its bounds saved */
        p->wub[k] = term_window_bound(ts[k], *lo, *hi);
        if (ts[k]->b.doc < first)
            first = ts[k]->b.doc;
    }
    if (first >= *hi) { /* nothing here: jump to the next posting */
        if (first >= p->max_doc)
            return MS_DONE;
        *lo = first;
        return MS_SKIP;
    }
    /* suf[k] for k < en; gsuf[k] past it (ms_wsuf) */
    p->suf[*en] = p->gsuf[*en];
    for (size_t k = *en; k-- > 0;)
        p->suf[k] = p->suf[k + 1] + p->wub[k];
    return MS_WINDOW;
}

/*
 * Partition the terms at k-th score th: the essential ones are ts[0..e),
 * the result; ts[e..] are non-essential, their bounds over the window
 * (ts[en..]: over the segment, at the window's start k-th score already,
 * and so at th >= it) summing to no more than th, and, with norms, past
 * the split of every norm the gate lets through.  Sets the cap of the
 * next window: wide windows only while their bounds do not matter.  0:
 * no doc of the window can enter the page.
 */
static size_t ms_partition(ms_pass *p, size_t en, float th)
{
    size_t nt = p->nt, e = en;
    /* a doc matching only ts[e-1..] sums nt - e + 1 terms */
    while (e > 0 && p->suf[e - 1] * BOUND_SLACK(nt - e) <= (double)th)
        e--;
    p->win_cap = e < en ? TAAT_WINDOW : MAXSCORE_WINDOW_MAX;
    if (p->nl.norms && e > 0) {
        size_t ne = fds__norm_essential(&p->gate, th);
        if (ne < e)
            e = ne;
    }
    return e;
}

/* Score the essential terms ts[0..e) over [lo, hi) into the window's
 * accumulator, or, one essential term, onto p->lead. */
static void ms_score_essential(ms_pass *p, uint32_t lo, uint32_t hi,
                               size_t e, size_t en, float th)
{
    fds__win_scratch *ws = p->ws;
    p->gate.th = th;
    p->gate.keys = p->memo.on ? &p->memo.vc : NULL;
    p->lead.n = 0;
    if (e == 1)
        p->lp = (fds__lead_prune){ms_wsuf(p, en, 1), BOUND_SLACK(p->nt - 1),
                                  th};
    for (size_t k = 0; k < e; k++) {
        fds__term_it *t = p->ts[k];
        if (t->b.doc < lo)
            t->b.advance(&t->b, lo);
        fds__taat_term(p->x, t, k, lo, hi, ws->seen, ws->acc,
                       p->nl.bud ? ws->tok : NULL, true,
                       e == 1 ? &p->lp : NULL, p->nl.norms ? &p->gate : NULL,
                       e == 1 ? &p->lead : NULL);
    }
}

/*
 * The window's live candidates in doc order, from the lead's list (e 1;
 * read at li >= n: kept ones are written back at n) or the bitset's
 * walk, into cw, cs, ct (and cn, their norm bytes, with norms); a doc the
 * value memo decides goes onto its list instead when it enters the page.
 * Returns how many were listed.
 */
static size_t ms_candidates(ms_pass *p, uint32_t lo, size_t e, float th)
{
    fds__win_scratch *ws = p->ws;
    ord_memo *memo = &p->memo;
    uint16_t *cw = ws->cw;
    float *cs = ws->cs;
    uint32_t *ct = ws->ct;
    uint32_t wi = SEEN_START, w;
    uint64_t m = 0;
    size_t n = 0, li = 0;
    float sc;
    uint32_t tk = 0;
    memo->nr = 0;
    if (memo->on && memo->reads >= ORD_MEMO_TRIAL &&
        memo->hits < ORD_MEMO_MIN_HITS(memo->reads))
        memo->on = false; /* not worth its reads: off from this window */
    for (;;) {
        if (e == 1) {
            if (li == p->lead.n)
                break;
            w = cw[li];
            sc = cs[li];
            tk = ct[li++];
            if (!fds__is_live(p->sg, lo + w))
                continue;
        } else if (!fds__next_live_tok(ws->seen, &wi, &m, p->sg, lo, ws->acc,
                                       p->nl.bud ? ws->tok : NULL, &w, &sc,
                                       &tk)) {
            break;
        }
        if (memo->on) {
            uint32_t o = fds__val_key(&memo->vc, lo + w);
            const float *v = o == FDS_SIDX_NO_ORD ? NULL : memo_get(memo, o);
            memo->reads++;
            if (v) { /* decided by a doc of the same value */
                memo->hits++;
                if (*v > th) {
                    memo->rw[memo->nr] = (uint16_t)w;
                    memo->rs[memo->nr++] = *v;
                }
                continue;
            }
            memo->co[n] = o;
        }
        cw[n] = (uint16_t)w;
        cs[n] = sc;
        ct[n] = tk;
        if (p->nl.norms)
            fds__norm_fill(&p->nl, p->ts, ws->cn[n] = p->nl.norms[lo + w], th);
        n++;
    }
    return n;
}

/*
 * The non-essential terms ts[e..] over the window's n candidates, one at
 * a time in order: before term k the list drops every doc whose partial
 * score plus the bounds of ts[k..] cannot beat th -- the window bounds,
 * the per-norm bounds and the token budget of the doc's length -- (and,
 * with the memo, every doc of its value), and the survivors are merged
 * with term k's postings.  Returns the survivors, scored in full; sets
 * p->work to the window's work in postings (MS_SEEK_POSTINGS).
 */
static size_t ms_score_rest(ms_pass *p, uint32_t lo, uint32_t hi, size_t e,
                            size_t en, float th, size_t n)
{
    fds__win_scratch *ws = p->ws;
    fds__norm_lims *nl = &p->nl;
    ord_memo *memo = &p->memo;
    fds__term_it **ts = p->ts;
    size_t nt = p->nt;
    uint16_t *cw = ws->cw;
    float *cs = ws->cs;
    uint8_t *cn = ws->cn;
    uint32_t *ct = ws->ct;
    uint64_t scored = 0;
    double work = 0;
    for (size_t k = 0; k < e; k++)
        work += ms_expect(ts[k], lo, hi);
    for (size_t k = e; k < nt && n; k++) {
        size_t kept = 0;
        work += (double)n; /* the filter's step per candidate */
        double lk = fds__probe_limit(ms_wsuf(p, en, k), k, nt, th);
        double slack = BOUND_SLACK(nt - k);
        const double *ln = nl->norms ? nl->lim + k * 256 : NULL;
        for (size_t i = 0; i < n; i++) {
            double sc = cs[i];
            bool out = sc <= lk || (ln && sc <= ln[cn[i]]);
            const double *br = out || !nl->bud ? NULL
                             : nl->bud[cn[i]] ? nl->bud[cn[i]]
                                              : fds__budget_row(nl, ts, cn[i]);
            if (br) { /* the tokens the doc has left for ts[k..] */
                uint32_t len = nl->maxlen[cn[i]];
                uint32_t r = len - ct[i]; /* ct <= the doc's length */
                out = r < nl->rcap &&
                      (sc + br[k * nl->bw[cn[i]] + r]) * slack <= (double)th;
            }
            if (!out && ln &&
                fds__chain_doubt(sc + fds__norm_suf(nl, ts, cn[i])[k], nt - k,
                                 th))
                out = fds__norm_chain(nl, cn[i], k, cs[i]) <= th;
            if (out) { /* and so is every doc of its value */
                if (memo->on)
                    memo_put(memo, memo->co[i], -INFINITY);
                continue;
            }
            if (memo->on)
                memo->co[kept] = memo->co[i];
            cw[kept] = cw[i];
            cn[kept] = cn[i];
            ct[kept] = ct[i];
            cs[kept++] = cs[i];
        }
        n = kept;
        /* probe_term merges (its postings walked) or seeks (a block
         * decoded per candidate, at worst) */
        double ex = ms_expect(ts[k], lo, hi);
        work += n * PROBE_MERGE_MIN_DENSITY >= ex
                    ? ex + (double)n
                    : (double)n * MS_SEEK_POSTINGS;
        scored += probe_term(ts[k], lo, hi, cw, cs, nl->bud ? ct : NULL, n);
    }
    p->x->scored += scored;
    p->work = work;
    return n;
}

/* Did the window [lo, hi) cost MaxScore more than a term-at-a-time pass
 * over all its terms would have (MS_TAAT_RATIO)? */
static bool ms_taat_worth(const ms_pass *p, uint32_t lo, uint32_t hi)
{
    double all = 0;
    for (size_t k = 0; k < p->nt; k++)
        all += ms_expect(p->ts[k], lo, hi);
    return p->work > all * MS_TAAT_RATIO;
}

/* Score [lo, hi) term at a time over every term, in windows of
 * TAAT_WINDOW docs, without bounds, gate or memo (fds__run_taat's loop),
 * and offer its live docs: the same scores, summed in the order of ts. */
static void ms_taat_window(ms_pass *p, uint32_t lo, uint32_t hi)
{
    fds__win_scratch *ws = p->ws;
    bool dense = fds__taat_dense_worth(p->ts, p->nt, true);
    for (uint32_t a = lo, b; a < hi; a = b) {
        b = hi - a > TAAT_WINDOW ? a + TAAT_WINDOW : hi;
        bool any = false;
        for (size_t k = 0; k < p->nt; k++) {
            fds__term_it *t = p->ts[k];
            if (t->b.doc < a)
                t->b.advance(&t->b, a);
            any |= t->b.doc < b;
            if (dense)
                fds__taat_term_dense(p->x, t, a, b, ws->acc);
            else
                fds__taat_term(p->x, t, k, a, b, ws->seen, ws->acc, NULL,
                               true, NULL, NULL, NULL);
        }
        if (!any)
            continue;
        if (dense) {
            fds__taat_dense_walk(ws->acc, b - a, p->sg, a, p->hp, p->si,
                                 slice_theta(p->hp, p->sh, p->me));
            slice_publish(p->hp, p->sh, p->me);
            continue;
        }
        float th = slice_theta(p->hp, p->sh, p->me), s;
        uint32_t wi = SEEN_START, w;
        uint64_t m = 0;
        while (fds__next_live_tok(ws->seen, &wi, &m, p->sg, a, ws->acc, NULL,
                                  &w, &s, NULL))
            fds__offer(p->hp, p->si, a + w, s, &th);
        slice_publish(p->hp, p->sh, p->me);
    }
}

/* Offer the window's n survivors and the docs the memo let in, in doc
 * order; the survivors' scores go into the memo. */
static void ms_offer(ms_pass *p, uint32_t lo, size_t n, float th)
{
    ord_memo *memo = &p->memo;
    const uint16_t *cw = p->ws->cw;
    const float *cs = p->ws->cs;
    if (memo->on) { /* survivors are scored in full */
        for (size_t i = 0; i < n; i++)
            memo_put(memo, memo->co[i], cs[i]);
    }
    for (size_t i = 0, r = 0; i < n || r < memo->nr;) {
        if (r < memo->nr && (i >= n || memo->rw[r] < cw[i])) {
            fds__offer(p->hp, p->si, lo + memo->rw[r], memo->rs[r], &th);
            r++;
        } else {
            fds__offer(p->hp, p->si, lo + cw[i], cs[i], &th);
            i++;
        }
    }
    slice_publish(p->hp, p->sh, p->me);
}

/*
 * MaxScore pass (Turtle & Flood, "Query evaluation: strategies and
 * optimizations", IP&M 1995; as Lucene 9's MaxScoreBulkScorer does it, with
 * window-local bounds from the block impacts), in its steps: pick the
 * window (ms_pick_window), partition the terms into essential and
 * non-essential ones (ms_partition), score the window (the essential
 * terms, the candidates they make, the non-essential terms over those,
 * the offers).  Per window of docs from `from` (MAXSCORE_FIRST_WINDOW,
 * doubling up to TAAT_WINDOW, and on up to MAXSCORE_WINDOW_MAX while the
 * window bounds lower no split): each term's bound over the window comes
 * from its skip data (for the terms the norms already make non-essential,
 * its bound over the segment); the longest tail ts[e..] of terms whose
 * bounds sum to no more than the k-th score are "non-essential" -- a doc
 * matching only those cannot enter the page.  The essential terms
 * ts[0..e) are scored term at a time into the accumulator (their union is
 * the candidate set).  The live candidates then take the non-essential
 * terms one at a time, in order, as a list in doc order (as
 * MaxScoreBulkScorer.scoreNonEssentialClauses does since Lucene 9.10):
 * before term k the list drops every doc whose partial score plus the
 * bounds of ts[k..] cannot beat the k-th score -- the window bounds, the
 * per-norm bounds of fds__norm_lims and the token budget of the doc's
 * length (fds__budget_row) -- and the survivors are merged with term k's
 * postings.  A window with no essential term is skipped without decoding
 * a block; its hits are offered at its end.  The terms essential by the
 * norms alone (fds__norm_essential) do not depend on the window: the next
 * window starts at the first of their next postings, so that the windows
 * follow a url's rare terms, not the doc space.  When a window's
 * MaxScore work exceeds what scoring all its terms would cost, the next
 * windows are scored term at a time (MS_TAAT_RATIO, ms_taat_window).
 * Scores are summed in the order of `ts` whatever the split, the same
 * floats as fds__run_taat's.
 * Docs [from, to) only; with `sh`, the k-th score is the better of the
 * page's and the other slice's (slice_theta).  0 or FDS_ENOMEM.
 */
/* fds__run_maxscore over two terms or more, its steps in turn.  Kept out
 * of line: compiled into one function with run_one_term, it cost the lone
 * term's loop two more instructions per posting than before the pass was
 * cut into steps (the url-1 bodies of bench/scale under callgrind, +2%);
 * apart, one. */
static __attribute__((noinline)) int
run_terms(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
          fds__heap *hp, uint32_t from, uint32_t to, fds__slice_th *sh, int me)
{
    ms_pass p;
    if (ms_open(&p, x, si, ts, nt, hp, to, sh, me))
        return FDS_ENOMEM;
    for (uint32_t lo = from, hi; lo < p.max_doc;) {
        size_t en;
        int r = ms_pick_window(&p, &lo, &hi, &en);
        if (r == MS_DONE)
            break;
        if (r == MS_SKIP)
            continue;
        float th = slice_theta(hp, sh, me);
        size_t e = ms_partition(&p, en, th);
        if (e > 0 && p.taat_left) { /* MaxScore was not worth it */
            p.taat_left--;
            ms_taat_window(&p, lo, hi);
        } else if (e > 0) { /* else no doc of the window can enter the page */
            ms_score_essential(&p, lo, hi, e, en, th);
            size_t n = ms_candidates(&p, lo, e, th);
            n = ms_score_rest(&p, lo, hi, e, en, th, n);
            ms_offer(&p, lo, n, th);
            if (e < nt && hi - lo >= TAAT_WINDOW &&
                ms_taat_worth(&p, lo, hi)) {
                /* again not worth it: twice as long before the next try */
                p.taat_run = p.taat_run ? 2 * p.taat_run : MS_TAAT_RUN;
                p.taat_left = p.taat_run;
            } else {
                p.taat_run = 0;
            }
        }
        lo = hi;
    }
    ms_close(&p);
    return 0;
}

int fds__run_maxscore(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                      fds__heap *hp, uint32_t from, uint32_t to,
                      fds__slice_th *sh, int me)
{
    if (nt == 1)
        return run_one_term(x, si, ts[0], hp, from, to, sh, me);
    return run_terms(x, si, ts, nt, hp, from, to, sh, me);
}
