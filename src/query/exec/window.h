/*
 * window.h: the windows of docs the term-at-a-time passes work in -- their
 * sizes, the bitset and accumulators of a window (fds__win_scratch) and its
 * candidate lists, the slack a sum of bounds carries, the keys that name a
 * doc's value, and the walk that reads a window back in doc order.  Shared
 * by the counting pass (taat.c), the norm bounds (norms.c), MaxScore
 * (maxscore.c) and the seeds (seed.c).
 */
#ifndef FDS_EXEC_WINDOW_H
#define FDS_EXEC_WINDOW_H

#include <string.h>

#include "exec/search_int.h"

/* Docs per window of the counting pass, and of the MaxScore pass while
 * the terms' window bounds decide its split (Lucene's BooleanScorer uses
 * 2048, MaxScoreBulkScorer's inner windows 4096). */
#define TAAT_WINDOW 4096u
/* The MaxScore pass starts with windows this small and doubles them up to
 * TAAT_WINDOW: the page fills, and the k-th score starts pruning, after a
 * few docs of a frequent term rather than after a whole window. */
#define MAXSCORE_FIRST_WINDOW 128u
/* ... and on up to this many while the window bounds lower no window's
 * split below the norms' (a whole url: the norm split alone decides it),
 * where a window's fixed costs -- the bounds, the walk, the probes' set-up
 * -- are paid for a few candidates: at 10M docs a url-n body opened 923
 * windows of 4096 docs for ~4 candidates each.  Lucene's
 * MaxScoreBulkScorer.computeOuterWindowMax widens the windows its bounds
 * are taken over for the same reason, while they average fewer than 32
 * candidates per clause.  A power of 2, at most 65536 (candidates are u16
 * offsets). */
#define MAXSCORE_WINDOW_MAX 32768u

/* Relative slack on a sum of score bounds taken in double before it is
 * compared with a float threshold, when the score it bounds is a float sum
 * with `m` additions: each addition rounds by at most 2^-24 relative, so
 * the float sum is within m * 2^-24 / (1 - m * 2^-24) of the exact one
 * (Higham, "Accuracy and Stability of Numerical Algorithms", 4.2);
 * m * 2^-23 covers it and the double's own rounding.  No addition, no
 * slack: one term's bound compares exactly (a window of docs that all
 * score the k-th score is skipped).  Lucene's MathUtil.sumUpperBound plays
 * the same part. */
#define BOUND_SLACK(m) (1.0 + (double)(m) * 0x1p-23)

/* A lead term's blocks that cannot lift a doc above the k-th score: a doc
 * of a block with bound bb scores at most (bb + rest) * slack. */
typedef struct fds__lead_prune {
    double rest, slack;
    float th;
} fds__lead_prune;

/* The columns that name the value of a doc on the text field of a
 * disjunction's terms: the keyword multi-field's ordinals (kf) and the
 * field's own value ids (vf, FDS_SIDX_F_VALUES), either NULL.  A value's
 * key is its keyword ordinal when it has one, else kn + its value id: a
 * function of the string alone (the keyword skips a value by its length,
 * and value ids are given by it), one key per string. */
typedef struct fds__val_cols {
    const fds_sfield *kf, *vf;
    uint32_t kn; /* kf's terms: the first key of a value id */
} fds__val_cols;

/* Doc d's key (fds__val_cols), or FDS_SIDX_NO_ORD: none. */
static inline uint32_t fds__val_key(const fds__val_cols *c, uint32_t d)
{
    uint32_t o = c->kf ? fds__col_ord(c->kf, d) : FDS_SIDX_NO_ORD;
    if (o != FDS_SIDX_NO_ORD || !c->vf)
        return o;
    uint32_t v = fds__val_id(c->vf, d);
    return v == FDS_SIDX_NO_ORD ? v : c->kn + v;
}

/* A window's bitset: a bit per doc in SEEN_WORDS words, then SEEN_SUMW
 * summary words from seen[SEEN_SUM], bit i of the lot set when word i may
 * have bits, so that a walk over a window of few candidates (10M docs:
 * most of its words empty) reads only the words that have some. */
#define SEEN_WORDS (MAXSCORE_WINDOW_MAX / 64)
#define SEEN_SUM SEEN_WORDS
#define SEEN_SUMW ((SEEN_WORDS + 63) / 64)
#define SEEN_START UINT32_MAX /* a walk's cursor before word 0 */

/*
 * The arrays of a window, for the counting and MaxScore passes: the
 * bitset and the accumulators, which are all 0 between passes (a pass
 * walks every window it marks, and the walk clears what it reads), and
 * the candidate lists, written before they are read.  ~0.9 MiB; a pass
 * takes one from a small free list and gives it back, so that a search
 * neither zeroes nor faults in its accumulators: zeroed per pass, as the
 * 4096-doc windows' were on the stack, the accumulators of 16384-doc
 * windows took 19% of the url-n bodies' instructions at 1M docs (11.4 of
 * 60.9 M), more than the wide windows saved there.
 */
typedef struct fds__win_scratch {
    struct fds__win_scratch *next; /* in the free list */
    uint64_t seen[SEEN_WORDS + SEEN_SUMW]; /* 0 between passes */
    float acc[MAXSCORE_WINDOW_MAX];        /* 0 outside seen */
    uint32_t tok[MAXSCORE_WINDOW_MAX];     /* 0 outside seen */
    /* the candidates of a MaxScore window: offsets, partial scores, norm
     * bytes, tokens so far; the value memo's keys, and the offsets and
     * scores of the docs it lets in */
    uint16_t cw[MAXSCORE_WINDOW_MAX];
    float cs[MAXSCORE_WINDOW_MAX];
    uint8_t cn[MAXSCORE_WINDOW_MAX];
    uint32_t ct[MAXSCORE_WINDOW_MAX];
    uint32_t co[MAXSCORE_WINDOW_MAX];
    uint16_t rw[MAXSCORE_WINDOW_MAX];
    float rs[MAXSCORE_WINDOW_MAX];
} fds__win_scratch;

/* A window's candidates as a list in doc order: offsets, partial scores,
 * tokens so far (the window scratch's cw, cs, ct), n of them. */
typedef struct fds__cand_list {
    uint16_t *cw;
    float *cs;
    uint32_t *ct;
    size_t n;
} fds__cand_list;

/* A window scratch with its bitset and accumulators 0, or NULL (out of
 * memory).  Give it back with fds__win_put once its bitset and
 * accumulators are 0 again (taat.c). */
fds__win_scratch *fds__win_get(void);
void fds__win_put(fds__win_scratch *w); /* NULL is a no-op */

/* The next doc of a window's bitset (SEEN_WORDS words and the summary)
 * after the cursor (*wi, *m: start at SEEN_START and 0) that is live in
 * `sg`, its score in *s (and its tokens in *tk, with tok); false when
 * there is none.  Resets the accumulators of every doc it passes to 0 (so
 * that fds__taat_term adds to 0 in the next window), and the bitset's words
 * and summary as it reads them: a window's bitset must be walked to its
 * end, and is then all 0 for the next window. */
static inline bool fds__next_live_tok(uint64_t *seen, uint32_t *wi,
                                      uint64_t *m, const fds_search_segment *sg,
                                      uint32_t lo, float *acc, uint32_t *tok,
                                      uint32_t *w, float *s, uint32_t *tk)
{
    for (;;) {
        while (!*m) { /* the next word with a bit, by the summary */
            uint32_t nx = *wi + 1; /* 0 from SEEN_START */
            uint64_t rest = 0;
            while (nx < SEEN_WORDS &&
                   !(rest = seen[SEEN_SUM + (nx >> 6)] >> (nx & 63)))
                nx = (nx | 63) + 1; /* the next summary word */
            if (!rest) {
                memset(seen + SEEN_SUM, 0, SEEN_SUMW * sizeof *seen);
                return false;
            }
            *wi = nx + (uint32_t)__builtin_ctzll(rest);
            *m = seen[*wi];
            seen[*wi] = 0;
        }
        *w = *wi * 64 + (uint32_t)__builtin_ctzll(*m);
        *m &= *m - 1;
        *s = acc[*w];
        acc[*w] = 0;
        if (tok) {
            *tk = tok[*w];
            tok[*w] = 0;
        }
        if (fds__is_live(sg, lo + *w))
            return true;
    }
}

/* Offer doc d of segment si with score s if it beats *th; *th follows. */
static inline void fds__offer(fds__heap *hp, unsigned si, uint32_t d,
                              float s, float *th)
{
    if (s > *th) {
        fds__heap_offer_score(hp, si, d, s);
        *th = fds__theta(hp);
    }
}

/* The columns whose keys decide the score of a doc over the terms
 * ts[0..nt) of segment si (fds__val_cols), into *c; false when there are none:
 * the terms must share one text field's norms, single-valued in the
 * segment (maxscore.c, with the value memo). */
bool fds__value_cols(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                     fds__val_cols *c);

/* The norm gate of a MaxScore pass (norms.h). */
typedef struct fds__norm_gate fds__norm_gate;

/*
 * Score the postings of `t` in [lo, hi) into a window's accumulator, or
 * only mark them, or list them (taat.c, where its arguments are told).
 * Leaves the cursor on its first doc >= hi (or FDS__NO_MORE); `t` must be
 * on a doc >= lo.
 */
void fds__taat_term(fds__exec *x, fds__term_it *t, size_t k, uint32_t lo,
                    uint32_t hi, uint64_t *seen, float *acc, uint32_t *tok,
                    bool score, const fds__lead_prune *prune,
                    fds__norm_gate *gate, fds__cand_list *out);

/* Expected postings per TAAT_WINDOW docs, over all the terms of a pass,
 * from which a window is scored without its bitset (fds__taat_term_dense):
 * marking a doc's bit and its summary word cost 11 instructions a posting,
 * more than a third of a tabled term's, and walking the bits 10 a doc;
 * a scan of the window's 4096 accumulators, 4 at a time, costs ~5,000 in
 * all (callgrind, the 20 costliest url-n bodies of bench/scale, 1M growing
 * corpus). */
#define TAAT_DENSE_MIN 512u

/* Whether a term-at-a-time pass over ts[0..nt) scores its windows dense
 * (fds__taat_term_dense + fds__taat_dense_walk): when it scores (`score`),
 * every posting of every term scores above 0 (so that a non-zero
 * accumulator is a match: a boost of 0 scores 0), and the terms' postings
 * average TAAT_DENSE_MIN or more per window. */
bool fds__taat_dense_worth(fds__term_it *const *ts, size_t nt, bool score);

/* fds__taat_term's plain scoring, without marking the bitset: acc[d - lo]
 * += score for t's postings in [lo, hi), hi - lo <= TAAT_WINDOW.  For a
 * window that fds__taat_dense_walk reads back. */
void fds__taat_term_dense(fds__exec *x, fds__term_it *t, uint32_t lo,
                          uint32_t hi, float *acc);

/* Read back a dense window of n docs from lo: every non-zero accumulator
 * is a hit (fds__taat_dense_worth); counts the live ones, offers to hp
 * (segment si) those that beat th (which follows hp's k-th score after
 * each offer, as fds__offer's; INFINITY: offer none), and zeroes
 * acc[0..n).  Returns the live hits.  acc past n up to a multiple of 4
 * must be 0 (a window scratch's is). */
uint64_t fds__taat_dense_walk(float *acc, uint32_t n,
                              const fds_search_segment *sg, uint32_t lo,
                              fds__heap *hp, unsigned si, float th);

/* The counting pass of a disjunction (taat.c): counts hits into *count,
 * offering them to hp, until *count > limit; the first doc not yet
 * visited (FDS__NO_MORE when the segment is done). */
uint32_t fds__run_taat(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                       fds__heap *hp, uint64_t *count, uint64_t limit);

#endif
