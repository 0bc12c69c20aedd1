/*
 * term_it.h: a term iterator's cursor over its posting list (fds__term_it,
 * search_int.h) -- the skip list's block bounds, finding a doc in a
 * decoded block, BM25 at tf 1 from a per-iterator table.  Every pass that
 * walks postings (the iterators, the counting pass, MaxScore, the norm
 * bounds, the seeds) takes these steps per posting, so they are static
 * inline here; the steps taken once per block or per term (decoding,
 * advancing through the skip list, bounds) are calls into term_it.c.
 */
#ifndef FDS_EXEC_TERM_IT_H
#define FDS_EXEC_TERM_IT_H

#include <math.h>

#include "index/postings.h"
#include "exec/search_int.h"

/* Fill tf1 for every norm byte a doc of the field has (term_it.c). */
void fds__term_tf1_fill(fds__term_it *t);
/* Bound of block b from its competitive impacts (term_it.c). */
float fds__term_blk_bound_exact(fds__term_it *t, uint32_t b);
/* Decode block b into t's buffers: 0, or -1 when it does not decode
 * (x->corrupt set; term_it.c). */
int fds__term_decode_block(fds__term_it *t, uint32_t b);
/* Max over all blocks of the block bound, cached (term_it.c). */
float fds__term_ub(fds__term_it *t);

/* The most often t can occur in a doc of norm byte nb: from the term's
 * frontier of its blocks' impacts when the segment has it (a doc of norm
 * nb is covered by an impact of norm <= nb and frequency >= its own, so
 * by a frontier pair of norm <= nb; 0: no doc of norm nb or shorter holds
 * t), else its largest frequency over all blocks.  fds__term_ub first
 * (fills tfmax).  Lucene's impacts (Impacts, ImpactsSource) bound a
 * block's docs the same way. */
static inline uint32_t fds__term_tf_at(const fds__term_it *t, uint8_t nb)
{
    if (!t->t.front)
        return t->tfmax;
    uint32_t tf = 0;
    for (uint32_t k = 0; k < t->t.nfront && t->t.front[k].norm <= nb; k++)
        tf = t->t.front[k].tf;
    return tf < t->tfmax ? tf : t->tfmax;
}

/* The last doc of block b of t (its skip entry). */

static inline uint32_t fds__term_blk_last(const fds__term_it *t, uint32_t b)
{
    return fds__get_u32(t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN);
}

/* Score at (tf, norm); tf = 1 (most postings) from a lazily filled table,
 * the same float as fds__term_score_tf. */
static inline float fds__term_score_fast(fds__term_it *t, uint32_t tf,
                                         uint8_t norm)
{
    if (tf != 1)
        return fds__term_score_tf(t->b.c, tf, norm);
    if (!((t->have1[norm >> 6] >> (norm & 63)) & 1)) {
        t->tf1[norm] = fds__term_score_tf(t->b.c, 1, norm);
        t->have1[norm >> 6] |= 1ull << (norm & 63);
    }
    return t->tf1[norm];
}

/* The frequencies whose scores fds__term_tf1_fill tabulates (t->tfk, tf
 * 1 .. FDS__TFK_N), and the postings a term needs for it: a common term
 * of a whole url (`d8`, `d9`: tf 2-16 in the docs of a Persian slug)
 * otherwise divides once per posting and branches on tf, most of a
 * term-at-a-time pass over such a url (perf, 1M growing corpus); the rows
 * cost a division per row and norm byte the field has (~150), once per
 * search, and rows past the term's largest frequency are not filled. */
#define FDS__TFK_N 16u
#define FDS__TFK_MIN_DF 4096u

/* fds__term_score_fast after fds__term_tf1_fill: nb is a norm byte of a
 * doc's.  The same float as fds__term_score_tf (tf1 and tfk hold its
 * values). */
static inline float fds__term_score_tf1(const fds__term_it *t, uint32_t tf,
                                        uint8_t nb)
{
    if (tf - 1 < t->tfk_n)
        return t->tfk[(tf - 1) * 256 + nb];
    if (tf == 1)
        return t->tf1[nb];
    return fds__term_score_tf(t->b.c, tf, nb);
}

/* fds__term_score_fast, or fds__term_score_tf1 once t's tables are
 * filled: for loops that may run before or after fds__term_tf1_fill. */
static inline float fds__term_score_any(fds__term_it *t, uint32_t tf,
                                        uint8_t nb)
{
    return t->tf1_all ? fds__term_score_tf1(t, tf, nb)
                      : fds__term_score_fast(t, tf, nb);
}

static inline float fds__term_blk_bound(const fds__term_it *t, uint32_t b)
{
    const uint8_t *s = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    return fds__term_score_tf(t->b.c, fds__get_u32(s + 8), s[12]);
}

/* The first position from t->i in t's decoded block whose doc is >=
 * target (its last doc is): a linear scan for a near target, else a
 * binary search over the rest of the block. */
static inline uint32_t fds__term_blk_find(const fds__term_it *t,
                                          uint32_t target)
{
    uint32_t j = t->i, n = t->n;
    if (n - j > 16 && t->docs[j + 15] < target) {
        j += 16;
        for (uint32_t len = n - j; len > 1;) {
            uint32_t half = len / 2;
            j = t->docs[j + half - 1] < target ? j + half : j;
            len -= half;
        }
    }
    while (j < n && t->docs[j] < target)
        j++;
    return j;
}

/* fds__term_adv(t, d) for d > t's doc, the common case (d in the decoded
 * block) inline: a MaxScore probe. */
static inline void fds__term_seek(fds__term_it *t, uint32_t d)
{
    if (t->blk != FDS__NO_MORE && d <= fds__term_blk_last(t, t->blk)) {
        t->i = fds__term_blk_find(t, d);
        t->b.doc = t->docs[t->i];
    } else {
        fds__term_adv(&t->b, d);
    }
}

/* Undo a term's advances: its next advance, to any doc, searches the
 * skip list from block 0 (fds__term_adv). */
static inline void fds__term_rewind(fds__term_it *t)
{
    t->blk = FDS__NO_MORE;
}

#endif
