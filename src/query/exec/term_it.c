/*
 * term_it.c: the steps of a term's cursor (term_it.h) that are not inline
 * -- advancing to a doc through the skip list, decoding a block, filling
 * the tf = 1 score table, and the block and term score bounds.  Called
 * once per block or per term, not per posting, so a call costs nothing
 * next to the work; the per-posting steps are the header's.
 */
#include <math.h>

#include "exec/term_it.h"

int fds__term_decode_block(fds__term_it *t, uint32_t b)
{
    const uint8_t *s = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    uint32_t base = b ? fds__term_blk_last(t, b - 1) + 1 : 0;
    unsigned n = s[13] + 1u;
    long r = fds_postings_decode_block(fds__skip_block(&t->t, s),
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

/* Fill tf1 for every norm byte a doc of the field has (norm_seen; 1 for
 * a field without norms), so that a term-at-a-time loop reads it without
 * testing have1 per posting (fds__term_score_tf1); and, for a term of
 * FDS__TFK_MIN_DF postings or more, tfk (tf 1 .. FDS__TFK_N, up to the
 * term's largest frequency when known).  Out of memory, tfk stays NULL:
 * the scores are then computed, the same floats. */
void fds__term_tf1_fill(fds__term_it *t)
{
    uint32_t rows = 0;
    if (t->t.df >= FDS__TFK_MIN_DF) {
        rows = FDS__TFK_N;
        if (t->tfmax && t->tfmax < rows)
            rows = t->tfmax; /* fds__term_ub ran: no tf above it */
        if (!(t->tfk = malloc((size_t)rows * 256 * sizeof *t->tfk)))
            rows = 0;
    }
    if (!t->norms) { /* a keyword field: one entry */
        (void)fds__term_score_fast(t, 1, 1);
        for (uint32_t r = 0; r < rows; r++)
            t->tfk[r * 256 + 1] = fds__term_score_tf(t->b.c, r + 1, 1);
    } else { /* the set bits only: a short field has a few norm bytes */
        for (unsigned wd = 0; wd < 4; wd++)
            for (uint64_t m = t->norm_seen[wd]; m; m &= m - 1) {
                uint8_t nb = (uint8_t)(wd * 64 + (unsigned)__builtin_ctzll(m));
                (void)fds__term_score_fast(t, 1, nb);
                for (uint32_t r = 0; r < rows; r++)
                    t->tfk[r * 256 + nb] = fds__term_score_tf(t->b.c, r + 1, nb);
            }
    }
    t->tfk_n = rows;
    t->tf1_all = true;
}

/* Bound of block b from its competitive impacts (sidx_format.h): the best
 * score over its (norm, tf) pairs, never above fds__term_blk_bound;
 * fds__term_blk_bound itself when the block has none.  The last block
 * asked is cached (window bounds and lead pruning ask for the same or the
 * next block). */
float fds__term_blk_bound_exact(fds__term_it *t, uint32_t b)
{
    if (t->xb_blk == b + 1)
        return t->xb;
    const uint8_t *s = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    float ub = fds__term_blk_bound(t, b);
    uint32_t ilen = fds__skip_ilen(s);
    if (ilen) {
        const uint8_t *p = fds__skip_impacts(&t->t, s), *end = p + ilen;
        float best = 0;
        uint8_t norm;
        uint32_t tf;
        int r;
        while ((r = fds__impact_next(&p, end, &norm, &tf)) > 0) {
            float sc = fds__term_score_tf(t->b.c, tf, norm);
            if (sc > best)
                best = sc;
        }
        if (r < 0) /* damaged: keep the coarse bound */
            best = ub;
        if (best < ub)
            ub = best;
    }
    t->xb_blk = b + 1;
    t->xb = ub;
    return ub;
}

/* Max over all blocks of the block bound (cached): over the term's
 * frontier when the segment has it (every block's (max tf, min norm) is
 * dominated by a frontier pair, and the score is monotone in both, so the
 * max is the same float). */
float fds__term_ub(fds__term_it *t)
{
    if (isnan(t->ub) && t->t.front) {
        float ub = 0;
        for (uint32_t k = 0; k < t->t.nfront; k++) {
            const fds_spair *p = &t->t.front[k];
            float bb = fds__term_score_tf(t->b.c, p->tf, p->norm);
            if (bb > ub)
                ub = bb;
            if (p->tf > t->tfmax)
                t->tfmax = p->tf;
        }
        t->ub = ub;
    }
    if (isnan(t->ub)) {
        float ub = 0;
        uint32_t ptf = 0;
        int pnorm = -1;
        for (uint32_t b = 0; b < t->t.nblocks; b++) {
            /* neighbouring blocks mostly share their (max tf, min norm) */
            const uint8_t *sk = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
            uint32_t tf = fds__get_u32(sk + 8);
            if (tf > t->tfmax)
                t->tfmax = tf;
            if (tf == ptf && sk[12] == pnorm)
                continue;
            ptf = tf;
            pnorm = sk[12];
            float bb = fds__term_blk_bound(t, b);
            if (bb > ub)
                ub = bb;
        }
        t->ub = ub;
    }
    return t->ub;
}

uint32_t fds__term_adv(fds__it *i, uint32_t target)
{
    fds__term_it *t = (fds__term_it *)i;
    if (target == FDS__NO_MORE)
        return i->doc = FDS__NO_MORE;
    if (t->blk == FDS__NO_MORE || target > fds__term_blk_last(t, t->blk)) {
        uint32_t lo = t->blk == FDS__NO_MORE ? 0 : t->blk + 1, hi = t->t.nblocks;
        /* gallop then binary search for the first block ending >= target */
        uint32_t step = 1;
        while (lo + step < hi && fds__term_blk_last(t, lo + step) < target) {
            lo += step;
            step *= 2;
        }
        if (lo + step < hi)
            hi = lo + step + 1;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (fds__term_blk_last(t, mid) < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo >= t->t.nblocks || fds__term_decode_block(t, lo))
            return i->doc = FDS__NO_MORE;
    }
    t->i = fds__term_blk_find(t, target);
    return i->doc = t->docs[t->i];
}
