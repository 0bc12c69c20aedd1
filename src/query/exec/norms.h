/*
 * norms.h: bounds of a doc's score from its norm byte alone (fds__norm_lims:
 * each term at its largest frequency, and the token budget of the doc's
 * length) and the gate built on them (fds__norm_gate), which rules docs out
 * before their terms are scored and picks the terms essential at every
 * norm.  The per-candidate parts are inline here; the tables are filled
 * in norms.c.
 */
#ifndef FDS_EXEC_NORMS_H
#define FDS_EXEC_NORMS_H

#include <math.h>

#include "exec/term_it.h"
#include "exec/window.h"

/* The probe limit before term k of nt: a candidate whose partial score s
 * over ts[..k) has (double)s <= it cannot beat the k-th score th with the
 * terms left, whose window bounds sum to suf_k: the test
 * (s + suf_k) * BOUND_SLACK(nt - k) <= th solved for s once per window
 * and term rather than per candidate (double rounding is far inside the
 * slack).  Taken only for the terms a window's candidates reach: a whole
 * url's 70 terms cost 70 divisions a window where its few candidates
 * are gone after a handful. */
static inline double fds__probe_limit(double suf_k, size_t k, size_t nt,
                                      float th)
{
    return (double)th / BOUND_SLACK(nt - k) - suf_k;
}

/* Per-doc probe limits of run_maxscore from the doc's norm: all the terms
 * are of one field, so a doc's score for ts[k] is at most
 * score(tfmax of ts[k] over the segment, the doc's norm byte) -- on a url
 * field far below the window bound, which is the score of the block's
 * shortest doc.  Filled for the norm bytes candidates have, once per k-th
 * score. */
typedef struct fds__norm_lims {
    const uint8_t *norms; /* the terms' one norms column; NULL: not used */
    const uint64_t *seen; /* its norm bytes that docs have */
    size_t nt;
    double *suf;          /* [256][nt + 1]: sum of the bounds of ts[k..] */
    float *uf;            /* [256][nt]: ts[k]'s bound, the float a doc of
                             the norm adds at most (with suf's row) */
    double *lim;          /* [nt][256]: limits as fds__probe_limit's, for
                             th[] */
    float th[256];        /* the k-th score lim's column is for (NAN: none) */
    uint64_t have[4];     /* bit n set: suf's row n is filled */
    /* token budgets (fds__budget_row), NULL when the terms are not distinct */
    double **bud;         /* [256]: NULL or [nt + 1][bw[nb]] */
    uint32_t bw[256];     /* columns of bud[nb]: min(maxlen, rcap) + 1 */
    uint32_t rcap;        /* budgets of fewer tokens only (the sum of the
                             terms' tfmax at most: more add nothing) */
    uint32_t maxlen[256]; /* norm_max_len per norm byte, with budgets */
    double *col;          /* [256][nt + 1]: budget_col's columns */
    uint64_t have_col[4]; /* bit n set: col's row n is filled */
    double *mg;           /* scratch of fds__budget_row and budget_col */
    size_t bud_bytes;     /* allocated to bud[] so far */
    /* budget_top: the terms of tfmax >= 1 by weight, descending (n1),
     * and its merge heap's scratch */
    struct top_term *w1;
    size_t n1;
    double wmax;          /* the largest weight; 0: budget_top is off */
    struct top_head *hd;
} fds__norm_lims;

/* The sum over every term of its score at its largest frequency in a doc
 * of norm byte nb (fds__term_tf_at), for a doc of that norm (suf's row nb
 * of fds__norm_lims, filled on first use). */
static inline const double *fds__norm_suf(fds__norm_lims *n,
                                          fds__term_it **ts, uint8_t nb)
{
    size_t nt = n->nt;
    double *suf = n->suf + (size_t)nb * (nt + 1);
    float *uf = n->uf + (size_t)nb * nt;
    if (!((n->have[nb >> 6] >> (nb & 63)) & 1)) {
        suf[nt] = 0;
        for (size_t k = nt; k-- > 0;) {
            fds__term_ub(ts[k]); /* fills tfmax */
            uint32_t tf = fds__term_tf_at(ts[k], nb);
            float u = tf ? fds__term_score_tf(ts[k]->b.c, tf, nb) : 0;
            uf[k] = u > 0 ? u : 0; /* a term not matched adds nothing */
            suf[k] = suf[k + 1] + uf[k];
        }
        n->have[nb >> 6] |= 1ull << (nb & 63);
    }
    return suf;
}

/* Make n->lim[k * 256 + nb] hold, for every k, the limit of a doc of norm
 * byte nb at k-th score th: (double)s <= it means s cannot beat th with
 * ts[k..], by the per-norm bounds. */
static inline void fds__norm_fill(fds__norm_lims *n, fds__term_it **ts,
                                  uint8_t nb, float th)
{
    if (n->th[nb] == th)
        return;
    size_t nt = n->nt;
    const double *suf = fds__norm_suf(n, ts, nb);
    for (size_t k = 0; k < nt; k++)
        n->lim[k * 256 + nb] = fds__probe_limit(suf[k], k, nt, th);
    n->th[nb] = th;
}

/*
 * The most a doc of norm byte nb (fds__norm_suf's row filled) can score when
 * its float sum over ts[..k) is s: s plus each term's bound uf, added as
 * floats in the order a doc's score is summed.  IEEE addition rounds
 * monotonically (a <= a', b <= b' gives fl(a + b) <= fl(a' + b')), so
 * this bounds the doc's own float sum exactly, with no BOUND_SLACK: a doc
 * that ties the k-th score at its norm -- a long url repeated thousands
 * of times, whose copies have no keyword ordinal for the value memo -- is
 * ruled out without probing the terms it has left.  O(nt - k): once per
 * norm byte for the gate, and in the norm split and the candidate filter
 * only where the slack leaves a bound in doubt (fds__chain_doubt).
 */
static inline float fds__norm_chain(const fds__norm_lims *n, uint8_t nb,
                                    size_t k, float s)
{
    const float *uf = n->uf + (size_t)nb * n->nt;
    for (size_t j = k; j < n->nt; j++)
        s += uf[j];
    return s;
}

/* Is the double bound b of a sum of m floats within its slack of th, so
 * that fds__norm_chain may rule out what BOUND_SLACK(m) keeps? */
static inline bool fds__chain_doubt(double b, size_t m, float th)
{
    return b <= (double)th * BOUND_SLACK(m);
}

/* Docs a MaxScore window's essential terms need not score at all: the
 * bound of a doc's whole score from its norm byte alone (fds__norm_lims: every
 * term at its largest frequency, and the token budget of the doc's
 * length), times BOUND_SLACK(nt) and rounded up to a float, per norm byte
 * on first use.  A doc whose bound is <= th (the window's k-th score)
 * cannot enter the page whatever its terms: on a url field, most docs are
 * far too short or too long for a whole url's terms. */
typedef struct fds__norm_gate {
    float val[256];         /* NAN: not computed yet */
    float th;
    struct fds__norm_lims *nl;
    fds__term_it **ts;
    float eth;              /* the k-th score e is for (NAN: none) */
    size_t e;               /* fds__norm_essential at eth */
    size_t ek[256];         /* per norm byte: its own e at eth (nt: none
                               yet); it only falls as the k-th score rises */
    unsigned cut;           /* every norm byte >= cut is out (norm_cut);
                               256: none known */
    const fds__val_cols *keys;   /* the memo's keys: their cache lines are asked
                               for as a doc passes (NULL: no memo) */
} fds__norm_gate;

/* Set up n for ts[0..nt) (off when the terms do not share one norms
 * column; no token budgets when two clauses have one term).  0 or
 * FDS_ENOMEM.  Free with fds__norm_lims_free. */
int fds__norm_lims_init(fds__norm_lims *n, fds__term_it **ts, size_t nt);
void fds__norm_lims_free(fds__norm_lims *n);
/* Token budget bounds for docs of norm byte nb (norms.c); NULL: none. */
const double *fds__budget_row(fds__norm_lims *n, fds__term_it **ts, uint8_t nb);
/* The gate's bound of norm byte nb at k-th score th (g->val[nb]). */
float fds__gate_fill(fds__norm_gate *g, uint8_t nb, float th);
/* The essential terms by the norms at k-th score th (norms.c). */
size_t fds__norm_split(fds__norm_gate *g, float th);
/* Keep the cap (> 0) largest values offered to the min-heap h[0..*nh):
 * offer v.  Returns what the sum of the heap grew by (0: v not kept). */
double fds__keep_largest(double *h, size_t *nh, size_t cap, double v);

/* fds__norm_split at th, kept from the last call at the same k-th score (a
 * MaxScore pass asks twice per window, and th seldom moves). */
static inline size_t fds__norm_essential(fds__norm_gate *g, float th)
{
    return g->eth == th ? g->e : fds__norm_split(g, th);
}

#endif
