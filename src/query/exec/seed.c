/*
 * seed.c: a k-th score before the first pass, and the count when it is
 * sure without counting -- the seeds (exact_seed, seed_floor, conj_seed)
 * raise the page's floor from docs scored in full, so that MaxScore prunes
 * from its first window; sure_count settles track_total_hits by one
 * term's doc count.  fds__count_disjunction runs them, then the counting
 * pass (taat.c), and hands MaxScore (maxscore.c) the doc to start at.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/norms.h"

/*
 * Threshold estimation before the first pass (Kane & Tompa, "Split-lists
 * and initial thresholds for WAND-based search", SIGIR 2018).  MaxScore
 * from an empty page scores the first docs of the frequent terms before
 * the k-th score means anything; on a whole url (tens of terms: a few rare
 * ones -- the product id, the words of its name -- and hex pairs in most
 * docs, repeated in the query) pruning only bites near the final k-th
 * score, which the url's own copies set.  So:
 *   1. the postings of the rarest terms, at most SEED_MAX_POSTINGS (terms
 *      taken in the order of ts, each while it fits), are merged in doc
 *      order into per-doc partial sums;
 *   2. live docs of one value are one group (fds__value_cols: same terms, same
 *      norm, the same score to the bit; the group's docs all hold the rare
 *      terms, so all are among these postings); a doc without an ordinal
 *      is a group of its own;
 *   3. when groups x terms is at most SEED_MAX_SEEKS, every group is
 *      scored in full, a doc of each, over every term (the copies of the
 *      url among them);
 *   4. hp's floor becomes the float below the k-th best of those scores
 *      (else of the partial sums), counting a group as its live docs.
 * Sound: a doc's sum over a subset of the terms, as floats in the order of
 * ts, is at most its score (the other terms add scores >= 0 and IEEE
 * addition rounds monotonically), and a full sum is the score itself (the
 * same floats in the same order as fds__run_taat and run_maxscore); so k live
 * docs score at least the k-th best s, the page's k-th score is >= s, and
 * a doc scoring below s cannot enter the page (one that ties s still may,
 * by its doc id: hence the float below).  Only for pages of at most
 * SEED_MAX_K hits and terms of finite, non-negative weights.  Costs at most
 * SEED_MAX_POSTINGS postings and SEED_MAX_SEEKS seeks; leaves every term
 * rewound (fds__term_rewind) for the caller to advance from doc 0.  True
 * when a floor was set from every group scored in full (a floor that
 * stands in for counting's warm-up).
 */
#define SEED_MAX_POSTINGS 1024u
#define SEED_MAX_K 128u
#define SEED_MAX_SEEKS 512u

typedef struct seed_group {
    uint32_t doc;  /* its first live doc */
    uint32_t ord;  /* its value's ordinal, FDS_SIDX_NO_ORD: none */
    uint32_t n;    /* its live docs */
    float s;       /* the partial sum, then the full score */
} seed_group;

/* May a seed bound ts's scores: a page of at most SEED_MAX_K hits, two
 * terms or more, every weight finite and not negative? */
static bool seed_fits(fds__term_it **ts, size_t nt, const fds__heap *hp)
{
    if (nt < 2 || !hp->cap || hp->cap > SEED_MAX_K)
        return false;
    for (size_t k = 0; k < nt; k++) {
        float w = ts[k]->b.c->weight;
        if (!(w >= 0) || isinf(w))
            return false;
    }
    return true;
}

/* Doc d's score over ts[0..nt), each term advanced to d (never back): its
 * terms' scores added as floats in the order of ts, the sum fds__run_taat and
 * run_maxscore make, so the score to the bit.  Counts the postings it
 * scores in x->scored. */
static float score_in_full(fds__exec *x, fds__term_it **ts, size_t nt, uint32_t d)
{
    float s = 0;
    for (size_t k = 0; k < nt; k++) {
        fds__term_it *t = ts[k];
        if (t->b.doc < d)
            t->b.advance(&t->b, d);
        if (t->b.doc == d) {
            s += fds__term_score_fast(t, t->tfs[t->i],
                                      t->norms ? t->norms[d] : 1);
            x->scored++;
        }
    }
    return s;
}

/* k live docs score at least s (k = hp->cap): the page's k-th score is
 * >= s, so hp's floor rises to the float below s (a doc tying s may still
 * enter by its doc id), unless it is higher already. */
static void raise_floor(fds__heap *hp, float s)
{
    float f = nextafterf(s, -INFINITY);
    if (!hp->floored || f > hp->floor) {
        hp->floored = true;
        hp->floor = f;
    }
}

static bool seed_floor(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                       fds__heap *hp)
{
    if (!seed_fits(ts, nt, hp))
        return false;
    /* the selected terms (1.), in the order of ts */
    uint32_t *sel = malloc(nt * sizeof *sel);
    if (!sel)
        return false;
    size_t ns = 0;
    uint64_t left = SEED_MAX_POSTINGS, total = 0;
    for (size_t k = 0; k < nt; k++) {
        if (ts[k]->t.df <= left) {
            left -= ts[k]->t.df;
            total += ts[k]->t.df;
            sel[ns++] = (uint32_t)k;
        }
    }
    if (total < hp->cap) { /* fewer docs than the page */
        free(sel);
        return false;
    }
    /* open addressing on ordinals: slot = group index + 1, 0 = empty; at
     * least twice as many slots as docs */
    uint32_t mask = 1;
    while (mask < 2 * total)
        mask *= 2;
    mask--;
    bool all = false;
    seed_group *g = malloc(total * sizeof *g);
    uint32_t *slot = calloc((size_t)mask + 1, sizeof *slot);
    if (!g || !slot)
        goto out;
    for (size_t j = 0; j < ns; j++)
        ts[sel[j]]->b.advance(&ts[sel[j]]->b, 0);
    const fds_search_segment *sg = &x->segs[si];
    fds__val_cols vc;
    bool keyed = fds__value_cols(x, si, ts, nt, &vc);
    size_t ng = 0;
    uint64_t scored = 0;
    for (;;) { /* 1, 2: at most `total` docs */
        uint32_t d = FDS__NO_MORE;
        for (size_t j = 0; j < ns; j++)
            if (ts[sel[j]]->b.doc < d)
                d = ts[sel[j]]->b.doc;
        if (d == FDS__NO_MORE)
            break;
        float s = 0;
        for (size_t j = 0; j < ns; j++) {
            fds__term_it *t = ts[sel[j]];
            if (t->b.doc != d)
                continue;
            s += fds__term_score_fast(t, t->tfs[t->i],
                                      t->norms ? t->norms[d] : 1);
            scored++;
            fds__term_adv(&t->b, d + 1);
        }
        if (!fds__is_live(sg, d))
            continue;
        uint32_t o = keyed ? fds__val_key(&vc, d) : FDS_SIDX_NO_ORD;
        if (o != FDS_SIDX_NO_ORD) {
            uint32_t h = (o * 2654435761u) & mask;
            while (slot[h] && g[slot[h] - 1].ord != o)
                h = (h + 1) & mask;
            if (slot[h]) {
                g[slot[h] - 1].n++;
                continue;
            }
            slot[h] = (uint32_t)ng + 1;
        }
        g[ng++] = (seed_group){.doc = d, .ord = o, .n = 1, .s = s};
    }
    x->scored += scored;
    /* 3: every group in full, when that is cheap (groups are in doc
     * order: their first docs) */
    bool full = ng * nt <= SEED_MAX_SEEKS;
    for (size_t j = 0; j < ns && full; j++)
        fds__term_rewind(ts[sel[j]]);
    for (size_t k = 0; k < nt && full; k++)
        ts[k]->b.advance(&ts[k]->b, 0);
    for (size_t i = 0; i < ng && full; i++)
        g[i].s = score_in_full(x, ts, nt, g[i].doc);
    /* 4 */
    double top[SEED_MAX_K]; /* floats, exactly */
    size_t nh = 0, cap = hp->cap;
    for (size_t i = 0; i < ng; i++)
        for (uint32_t c = 0; c < g[i].n && c < cap; c++)
            (void)fds__keep_largest(top, &nh, cap, g[i].s);
    if (nh == cap) {
        raise_floor(hp, (float)top[0]);
        all = full;
    }
out:
    for (size_t k = 0; k < nt; k++)
        fds__term_rewind(ts[k]); /* the caller advances it from doc 0 */
    free(sel);
    free(g);
    free(slot);
    return all;
}

/*
 * A k-th score from the docs that hold the rarest terms together, for a
 * disjunction whose rarest terms are all too frequent for seed_floor (a
 * whole /filter/ url: 50 brand ids of 4k-60k docs each, no term under
 * SEED_MAX_POSTINGS).  The copies of the url and its near copies hold
 * all of them, and they are the page:
 *   1. the CONJ_SEED_TERMS terms of fewest docs are intersected
 *      (leapfrog, the rarest leading, as Lucene's ConjunctionDISI), for at
 *      most CONJ_SEED_STEPS steps, until hp->cap live docs are found;
 *   2. each is scored in full over every term, the floats in the order of
 *      ts (the order run_maxscore sums in), once per value of the field
 *      (fds__val_cols: a doc of a value scored before scores the same);
 *   3. hp's floor becomes the float below the least of those scores.
 * Sound as seed_floor: k live docs score at least s, so the page's k-th
 * score is >= s, and a doc that ties s may still enter by its doc id.
 * Costs at most CONJ_SEED_STEPS advances of each of its terms and cap x nt
 * seeks.  Leaves every term rewound.  True when the floor was set: it then
 * stands in for the warm-up (WARM_HITS).  Over the 109 whole-url bodies of
 * the 1M scale index it replaced all 42 warm-ups and cut the class's
 * query-phase instructions by 12% (docs/benchmarks.md); more terms than 6
 * make the intersection dearer than it is selective.
 */
#define CONJ_SEED_TERMS 6u
#define CONJ_SEED_STEPS 2048u

static bool conj_seed(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                      fds__heap *hp)
{
    if (!seed_fits(ts, nt, hp))
        return false;
    fds__term_it *c[CONJ_SEED_TERMS]; /* the rarest terms, fewest docs first */
    size_t r = 0;
    for (size_t k = 0; k < nt; k++) {
        size_t j = r < CONJ_SEED_TERMS ? r++ : CONJ_SEED_TERMS;
        while (j > 0 && c[j - 1]->t.df > ts[k]->t.df) {
            if (j < CONJ_SEED_TERMS)
                c[j] = c[j - 1];
            j--;
        }
        if (j < CONJ_SEED_TERMS)
            c[j] = ts[k];
    }
    /* 1 */
    const fds_search_segment *sg = &x->segs[si];
    uint32_t docs[SEED_MAX_K];
    size_t nd = 0;
    for (size_t j = 0; j < r; j++)
        c[j]->b.advance(&c[j]->b, 0);
    uint32_t d = 0;
    for (unsigned step = 0; step < CONJ_SEED_STEPS && nd < hp->cap; step++) {
        if (c[0]->b.doc < d)
            fds__term_adv(&c[0]->b, d);
        d = c[0]->b.doc;
        bool all = true;
        for (size_t j = 1; j < r && all && d != FDS__NO_MORE; j++) {
            if (c[j]->b.doc < d)
                fds__term_adv(&c[j]->b, d);
            if (c[j]->b.doc != d) {
                all = false;
                d = c[j]->b.doc;
            }
        }
        if (d == FDS__NO_MORE)
            break;
        if (all) {
            if (fds__is_live(sg, d))
                docs[nd++] = d;
            d++;
        }
    }
    for (size_t j = 0; j < r; j++)
        fds__term_rewind(c[j]);
    if (nd < hp->cap)
        return false;
    /* 2: a doc of a value scored before scores as it did (the value
     * memo's reasoning: the same tokens, the same norm), so each value is
     * scored once -- the docs are mostly copies of the url searched */
    double top[SEED_MAX_K], sc[SEED_MAX_K]; /* floats, exactly */
    uint32_t key[SEED_MAX_K];
    size_t nh = 0;
    fds__val_cols vc;
    bool keyed = fds__value_cols(x, si, ts, nt, &vc);
    for (size_t k = 0; k < nt; k++)
        ts[k]->b.advance(&ts[k]->b, 0);
    for (size_t i = 0; i < nd; i++) {
        key[i] = keyed ? fds__val_key(&vc, docs[i]) : FDS_SIDX_NO_ORD;
        size_t j = 0;
        while (j < i && (key[i] == FDS_SIDX_NO_ORD || key[j] != key[i]))
            j++;
        sc[i] = j < i ? sc[j] : score_in_full(x, ts, nt, docs[i]);
        (void)fds__keep_largest(top, &nh, hp->cap, sc[i]);
    }
    for (size_t k = 0; k < nt; k++)
        fds__term_rewind(ts[k]); /* the caller advances it from doc 0 */
    raise_floor(hp, (float)top[0]); /* 3 */
    return true;
}

/* Postings of the rarest term exact_seed reads at most, looking for the
 * docs of a long value (a value id is a read of a cold column each). */
#define EXACT_SCAN_MAX 1024u

/* The first k live docs among docs[0..n) that hold the field at one norm
 * byte (see exact_seed): the first of them into *first, true when there
 * are k. */
static bool exact_docs(const fds_search_segment *sg, const uint8_t *norms,
                       const uint32_t *docs, size_t n, size_t k,
                       uint32_t *first)
{
    size_t live = 0;
    *first = FDS__NO_MORE;
    for (size_t i = 0; i < n && live < k; i++) {
        uint32_t d = docs[i];
        if (!fds__is_live(sg, d) || !norms[d] ||
            (*first != FDS__NO_MORE && norms[d] != norms[*first]))
            continue;
        if (live++ == 0)
            *first = d;
    }
    return live >= k;
}

/* Up to cap docs of value id v of text field vf (fds__val_cols.vf), from the
 * postings of the rarest of ts[0..nt) -- every doc of the value holds all
 * of its tokens -- reading at most EXACT_SCAN_MAX of them; into docs, the
 * count returned.  Leaves that term rewound. */
static size_t long_value_docs(const fds_sfield *vf, uint32_t v, fds__term_it **ts,
                              size_t nt, uint32_t *docs, size_t cap)
{
    fds__term_it *r = ts[0];
    for (size_t k = 1; k < nt; k++)
        if (ts[k]->t.df < r->t.df)
            r = ts[k];
    size_t n = 0;
    r->b.advance(&r->b, 0);
    for (unsigned i = 0; i < EXACT_SCAN_MAX && n < cap && r->b.doc != FDS__NO_MORE;
         i++) {
        uint32_t d = r->b.doc;
        if (fds__val_id(vf, d) == v)
            docs[n++] = d;
        r->b.advance(&r->b, d + 1);
    }
    fds__term_rewind(r);
    return n;
}

/*
 * A k-th score from the docs whose whole value of the field is the text
 * of the `match` searched (its keyword sub-field's term): one lookup in
 * the keyword's term dictionary, one doc scored in full.  Docs of one
 * value hold the same tokens and norm, so they score alike (the value
 * memo's reasoning); when k of them are live, the page's k-th score is at
 * least theirs, and hp's floor rises to the float below it (raise_floor).
 * Logs repeat their urls: on the 1M scale index 102 of the 109 whole-url
 * bodies find at least 71 docs of their url this way, and the floor is
 * then their page's k-th score from the start, where seed_floor and
 * conj_seed merged and intersected postings and scored groups to reach
 * it.  Sound for any text: the docs found are scored, not assumed.  Only
 * for a bool the match made at the top of the query (x->req->query) over
 * the terms ts of one single-valued field with norms, and pages that fit
 * SEED_MAX_K; a doc counts only if it holds the field, at the norm of the
 * doc scored.  A text past the keyword's ignore_above has no term there:
 * when the field has value ids (fds__val_cols.vf), the text's id is looked up
 * in the value table and its docs read off the rarest term's postings
 * (long_value_docs); 6 of the pool's 7 urls past 256 bytes find k docs.
 * Leaves every term rewound.  True when the floor was set.
 */
static bool exact_seed(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                       fds__heap *hp)
{
    const fds_query *q = x->req->query;
    fds__val_cols vc;
    if (!q || q->type != FDS_Q_BOOL || !q->text || !q->nshould ||
        q->nmust || !seed_fits(ts, nt, hp) || !ts[0]->norms)
        return false;
    const fds_query *t0 = ts[0]->b.c->q, *s0 = q->should[0];
    if (t0->field_len != s0->field_len ||
        memcmp(t0->field, s0->field, t0->field_len) ||
        !fds__value_cols(x, si, ts, nt, &vc))
        return false;
    const fds_search_segment *sg = &x->segs[si];
    /* Only docs that hold the field count: a doc that set the keyword
     * sub-field directly (refused since, as in Elasticsearch, but a
     * segment written before may hold one) keeps the term through a merge
     * into a segment whose field is single-valued, with norm byte 0 when
     * it had no value of the field. */
    const uint8_t *norms = ts[0]->norms;
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK], first;
    fds_sterm kt;
    if (vc.kf && !fds__sidx_term(sg->sidx, vc.kf, q->text, q->text_len, &kt)) {
        if (kt.df < hp->cap || !kt.nblocks)
            return false;
        /* its first block: k live docs there, or no floor */
        uint8_t skip1[FDS_SIDX_SKIP_LEN], blk1[FDS_STERM_INLINE_BLK];
        fds__sterm_inline(&kt, vc.kf->norms, skip1, blk1);
        unsigned n = kt.skip[13] + 1u;
        if (n > FDS_POSTINGS_BLOCK ||
            fds_postings_decode_block(fds__skip_block(&kt, kt.skip), kt.end, n,
                                      0, fds_sidx_max_doc(sg->sidx), docs,
                                      tfs) < 0)
            return false; /* damaged: the passes that follow will say so */
        if (!exact_docs(sg, norms, docs, n, hp->cap, &first))
            return false;
    } else if (vc.vf && q->text_len > FDS_SIDX_VALUE_MIN_BYTES) {
        /* past the keyword's ignore_above: the field's own value ids */
        uint32_t v = fds__sidx_val_find(vc.vf, q->text, q->text_len);
        size_t n = v == FDS_SIDX_NO_ORD
                       ? 0
                       : long_value_docs(vc.vf, v, ts, nt, docs, hp->cap);
        if (!exact_docs(sg, norms, docs, n, hp->cap, &first))
            return false;
    } else {
        return false;
    }
    for (size_t k = 0; k < nt; k++)
        ts[k]->b.advance(&ts[k]->b, 0);
    float s = score_in_full(x, ts, nt, first);
    for (size_t k = 0; k < nt; k++)
        fds__term_rewind(ts[k]); /* the caller advances it from doc 0 */
    raise_floor(hp, s);
    return true;
}

/* Hits scored term at a time before MaxScore when the count is sure
 * without counting but the seed is not: url-n bodies at 1M (topk_cpu, 2
 * runs each) took 17.4-18.5 ms CPU with no warm-up, 16.0-16.1 with 1,000
 * hits, 16.4-16.8 with 2,500, 15.8-16.2 with 5,000, and 17.4-19.7
 * counting to 10,000. */
#define WARM_HITS 1000u

/* Does segment si hold more than limit - count live matches of the
 * disjunction ts[0..nt), by the doc count of its most frequent term less
 * the segment's deleted docs (fds_search_segment.deleted)?  A disjunction
 * matches every doc of each of its terms. */
static bool sure_count(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                       uint64_t count, uint64_t limit)
{
    uint64_t df = 0;
    for (size_t k = 0; k < nt; k++)
        if (ts[k]->t.df > df)
            df = ts[k]->t.df;
    if (count > limit || df <= limit - count)
        return false;
    uint64_t dead = x->segs[si].live ? x->segs[si].deleted : 0;
    return df > dead && df - dead > limit - count;
}

uint32_t fds__count_disjunction(fds__exec *x, unsigned si, fds__term_it **ts,
                                size_t nt, fds__heap *hp, uint64_t *count,
                                uint64_t limit, bool counting)
{
    fds__order_terms(ts, nt);
    bool seeded = exact_seed(x, si, ts, nt, hp) ||
                  seed_floor(x, si, ts, nt, hp);
    /* the count already past the limit: no counting.  The seed's k-th
     * score stands in for the one counting would have warmed up when it
     * scored every group of its docs in full; else (a whole /filter/ url,
     * whose best docs hold many mid-frequency terms, not its rarest one)
     * the docs of its rarest terms together do (conj_seed); else the
     * first WARM_HITS hits are scored term at a time first */
    uint64_t warm = 0;
    if (counting && sure_count(x, si, ts, nt, *count, limit)) {
        *count = limit + 1;
        counting = false;
        warm = seeded || !hp->cap || conj_seed(x, si, ts, nt, hp)
                   ? 0 : WARM_HITS;
    }
    for (size_t i = 0; i < nt; i++)
        ts[i]->b.advance(&ts[i]->b, 0);
    uint64_t hits = 0;
    uint32_t next = counting ? fds__run_taat(x, si, ts, nt, hp, count, limit)
                    : warm   ? fds__run_taat(x, si, ts, nt, hp, &hits, warm)
                             : 0;
    return hp->cap ? next : FDS__NO_MORE;
}
