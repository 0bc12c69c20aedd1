/*
 * taat.c: term at a time over a window of docs -- each term's postings in
 * the window add their scores into per-doc accumulators and mark a
 * bitset (fds__taat_term), which is then walked in doc order; the window
 * scratch those live in, kept in a small pool; and the counting pass
 * built on it (fds__run_taat), which counts hits up to track_total_hits and
 * offers them to the page.  MaxScore (maxscore.c) scores its essential
 * terms with the same fds__taat_term.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/norms.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Terms with fewer postings than this are scored through fds__term_score_fast
 * (a have1 test per posting) rather than filling tf1 for every norm byte
 * of the field first: a whole url's rare terms, each in a few hundred
 * docs, cost a division per norm byte the field has (~150 on the 1M
 * bench) for a table they read a few times. */
#define TF1_FILL_MIN_DF 1024u

/* A posting's score in a term-at-a-time loop: from the tf1 table when
 * fds__term_tf1_fill ran (`filled`), else fds__term_score_fast.  The
 * same float. */
static inline float score_taat(fds__term_it *t, uint32_t tf, uint8_t nb,
                               bool filled)
{
    return filled ? fds__term_score_tf1(t, tf, nb)
                  : fds__term_score_fast(t, tf, nb);
}

static bool block_hopeless(fds__term_it *t, uint32_t b,
                           const fds__lead_prune *p)
{
    return ((double)fds__term_blk_bound(t, b) + p->rest) * p->slack <=
               (double)p->th ||
           ((double)fds__term_blk_bound_exact(t, b) + p->rest) * p->slack <=
               (double)p->th;
}

/* How many postings ahead the gate asks for a doc's norm byte: at 10M
 * docs a field's norms are 10 MB, and the gate's reads of them, one after
 * the other, otherwise wait on memory (bench/scale). */
#define NORM_PREFETCH 32u

/* Mark doc w of a window (its offset) in seen and in the summary: in
 * *sw, the first summary word kept in a register, when the window is
 * `narrow` (at most 4096 docs: every counting window), else in seen's
 * summary words (a memory write per posting, which cost exact counts of
 * the url-n bodies at 1M 5.8% more instructions with size 0, 2.3% with a
 * page of 10). */
static inline void seen_mark(uint64_t *seen, uint64_t *sw, bool narrow,
                             uint32_t w)
{
    seen[w >> 6] |= 1ull << (w & 63);
    if (narrow)
        *sw |= 1ull << (w >> 6);
    else
        seen[SEEN_SUM + (w >> 12)] |= 1ull << ((w >> 6) & 63);
}

static pthread_mutex_t win_mu = PTHREAD_MUTEX_INITIALIZER;
static fds__win_scratch *win_free;
static unsigned win_nfree;
static long win_keep = -1; /* under win_mu */

/* Scratch kept for reuse (win_mu held): one per pass running at once, up
 * to one per online core (the HTTP threads, one a core by default) and
 * two more (the slice thread, a multi-shard search's worker); more are
 * freed. */
static unsigned win_keep_max(void)
{
    if (win_keep < 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        win_keep = (n > 0 ? n : 2) + 2;
    }
    return (unsigned)win_keep;
}

/* A window scratch with its bitset and accumulators 0, or NULL (out of
 * memory).  Give it back with fds__win_put once its bitset and accumulators
 * are 0 again. */
fds__win_scratch *fds__win_get(void)
{
    pthread_mutex_lock(&win_mu);
    fds__win_scratch *w = win_free;
    if (w) {
        win_free = w->next;
        win_nfree--;
    }
    pthread_mutex_unlock(&win_mu);
    return w ? w : calloc(1, sizeof *w);
}

void fds__win_put(fds__win_scratch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&win_mu);
    bool keep = win_nfree < win_keep_max();
    if (keep) {
        w->next = win_free;
        win_free = w;
        win_nfree++;
    }
    pthread_mutex_unlock(&win_mu);
    if (!keep)
        free(w);
}

/* Posting (offset w, score s, frequency tf) of a window's term: into the
 * accumulator and bitset, or onto `out` when the term is the window's
 * only essential one (its postings are then the candidates, in order). */
static inline void take_posting(uint64_t *seen, uint64_t *sw, bool narrow,
                                bool mark, float *acc, uint32_t *tok,
                                fds__cand_list *out, uint32_t w, float s,
                                uint32_t tf)
{
    if (out) {
        out->cw[out->n] = (uint16_t)w;
        out->cs[out->n] = s;
        out->ct[out->n++] = tf;
        return;
    }
    acc[w] += s;
    if (mark)
        seen_mark(seen, sw, narrow, w);
    if (tok)
        tok[w] += tf;
}

/*
 * Score the postings of `t` in [lo, hi) into the window's accumulator:
 * acc[d - lo] += score, seen bit set, and its word's summary bit (acc
 * starts at the first score, so a doc's sum runs over its terms in the
 * order the caller passes them).
 * tok (NULL: not kept): tok[d - lo] += tf, 0 outside seen like acc.
 * `out` (NULL: none), for the window's only essential term (k 0): its
 * postings go onto the list instead, as Lucene's MaxScoreBulkScorer
 * scores a lone essential clause without its bitset.
 * score false: only mark.  `prune` (NULL: none), for the only term that
 * makes candidates: its blocks that cannot beat the k-th score are passed
 * over undecoded.  `gate` (NULL: none; t must have norms): docs it rules
 * out are neither scored nor marked, and neither are docs no earlier term
 * marked whose norm does not need t, the k-th term of the order, to be
 * essential (gate->ek, when fds__norm_essential ran at the gate's k-th score:
 * such a doc must hold one of the terms before its own split, which all
 * come before t, to enter the page).  Leaves the cursor on its first doc
 * >= hi (or FDS__NO_MORE); `t` must be on a doc >= lo.
 */
static inline __attribute__((always_inline)) void
taat_term_at(fds__exec *x, fds__term_it *t, size_t k, uint32_t lo, uint32_t hi,
             uint64_t *seen, float *acc, uint32_t *tok, bool score,
             const fds__lead_prune *prune, fds__norm_gate *gate,
             fds__cand_list *out, bool narrow, bool mark)
{
    if (score && !t->tf1_all && t->t.df >= TF1_FILL_MIN_DF)
        fds__term_tf1_fill(t);
    bool filled = t->tf1_all;
    uint64_t sw = 0; /* seen's first summary word, for a narrow window */
    while (t->b.doc < hi) {
        if (prune && block_hopeless(t, t->blk, prune)) {
            uint32_t nb = t->blk + 1;
            while (nb < t->t.nblocks &&
                   fds__term_blk_last(t, nb - 1) + 1 < hi &&
                   block_hopeless(t, nb, prune))
                nb++;
            if (nb >= t->t.nblocks || fds__term_decode_block(t, nb)) {
                t->b.doc = FDS__NO_MORE;
                break;
            }
            t->b.doc = t->docs[0];
            continue;
        }
        uint32_t j = t->i, n = t->n, end = n;
        if (t->docs[n - 1] >= hi) /* the window ends in this block */
            for (end = j; t->docs[end] < hi; end++)
                ;
        if (!score) {
            for (; j < end; j++)
                seen_mark(seen, &sw, narrow, t->docs[j] - lo);
        }
        const uint8_t *norms = t->norms;
        uint32_t from = j, ruled = 0;
        const float *gv = gate ? gate->val : NULL;
        float gth = gate ? gate->th : 0;
        unsigned gcut = gate ? gate->cut : 256;
        /* per norm byte, the split fds__norm_essential found at gth */
        const size_t *ek = gate && k && gate->eth == gth ? gate->ek : NULL;
        /* the memo's key columns (fds__val_key): a doc that passes the gate
         * is a candidate, whose key the memo reads after this pass */
        const fds__val_cols *keys = gate ? gate->keys : NULL;
        const uint8_t *kcol = keys && keys->kf ? keys->kf->col : NULL;
        const uint8_t *vcol = keys && keys->vf ? keys->vf->vcol : NULL;
        unsigned kbits = kcol ? keys->kf->ord_bits : 0;
        unsigned vbits = vcol ? keys->vf->vbits : 0;
        for (; gate && j < end; j++) { /* gate implies norms */
            if (j + NORM_PREFETCH < n)
                __builtin_prefetch(norms + t->docs[j + NORM_PREFETCH]);
            uint32_t d = t->docs[j], w = d - lo;
            uint8_t nb = norms[d];
            if (nb >= gcut) {
                ruled++; /* too long for the page */
                continue;
            }
            float v = gv[nb];
            if (isnan(v)) /* not computed yet */
                v = fds__gate_fill(gate, nb, gth);
            if (v <= gth || (ek && ek[nb] <= k &&
                             !((seen[w >> 6] >> (w & 63)) & 1))) {
                ruled++; /* the doc's length alone rules it out */
                continue;
            }
            fds__packed_prefetch(kcol, kbits, d);
            fds__packed_prefetch(vcol, vbits, d);
            take_posting(seen, &sw, narrow, mark, acc, tok, out, w,
                         score_taat(t, t->tfs[j], nb, filled), t->tfs[j]);
        }
        if (score && !out && !tok && t->tfk_n && norms) {
            /* the common case of a long pass, without its branches: every
             * frequency up to tfk_n from the table */
            const float *tk = t->tfk;
            const uint32_t *docs = t->docs, *tfs = t->tfs;
            uint32_t tn = t->tfk_n;
            /* a block whose frequencies are all in the table (its skip
             * entry's largest, an upper bound: most blocks) goes without
             * the test */
            if (fds__get_u32(t->t.skip + (size_t)t->blk * FDS_SIDX_SKIP_LEN +
                             8) <= tn) {
                for (; j < end; j++) {
                    uint32_t d = docs[j], w = d - lo;
                    acc[w] += tk[(tfs[j] - 1) * 256 + norms[d]];
                    if (mark)
                        seen_mark(seen, &sw, narrow, w);
                }
            }
            for (; j < end; j++) {
                uint32_t d = docs[j], tf = tfs[j], w = d - lo;
                acc[w] += tf - 1 < tn ? tk[(tf - 1) * 256 + norms[d]]
                                      : fds__term_score_tf(t->b.c, tf, norms[d]);
                if (mark)
                    seen_mark(seen, &sw, narrow, w);
            }
        }
        for (; j < end; j++) { /* acc is 0 where seen is clear */
            uint32_t d = t->docs[j];
            take_posting(seen, &sw, narrow, mark, acc, tok, out, d - lo,
                         score_taat(t, t->tfs[j], norms ? norms[d] : 1, filled),
                         t->tfs[j]);
        }
        if (score)
            x->scored += j - from - ruled;
        if (j < n) {
            t->i = j;
            t->b.doc = t->docs[j];
            break;
        }
        if (t->blk + 1 >= t->t.nblocks ||
            fds__term_decode_block(t, t->blk + 1)) {
            t->b.doc = FDS__NO_MORE;
            break;
        }
        t->b.doc = t->docs[0];
    }
    if (mark)
        seen[SEEN_SUM] |= sw;
}

/* taat_term_at, its loops compiled apart for a lone essential term's
 * list, a narrow window (at most 4096 docs: the first summary word in a
 * register) and a wide one: a branch per posting on which, in one loop,
 * cost exact counts 5% more instructions. */
void fds__taat_term(fds__exec *x, fds__term_it *t, size_t k, uint32_t lo,
                    uint32_t hi, uint64_t *seen, float *acc, uint32_t *tok,
                    bool score, const fds__lead_prune *prune,
                    fds__norm_gate *gate, fds__cand_list *out)
{
    if (out)
        taat_term_at(x, t, k, lo, hi, seen, acc, tok, score, prune, gate,
                     out, true, true);
    else if (hi - lo <= 64 * 64)
        taat_term_at(x, t, k, lo, hi, seen, acc, tok, score, prune, gate,
                     NULL, true, true);
    else
        taat_term_at(x, t, k, lo, hi, seen, acc, tok, score, prune, gate,
                     NULL, false, true);
}

void fds__taat_term_dense(fds__exec *x, fds__term_it *t, uint32_t lo,
                          uint32_t hi, float *acc)
{
    taat_term_at(x, t, 0, lo, hi, NULL, acc, NULL, true, NULL, NULL, NULL,
                 true, false);
}

bool fds__taat_dense_worth(fds__term_it *const *ts, size_t nt, bool score)
{
    if (!score || !nt)
        return false;
    double df = 0;
    for (size_t k = 0; k < nt; k++) {
        fds__term_it *t = ts[k];
        /* every posting must score above 0 for a non-zero sum to mean a
         * match: the least score is at tf 1 and the longest norm the
         * field has (norm byte 255, ~2^31 tokens, scores 0 in float) */
        uint8_t nb = 1; /* a keyword field's one norm */
        if (t->norms && !t->norm_seen)
            nb = 255;
        else if (t->norms) {
            nb = 0;
            for (unsigned wd = 4; wd-- > 0;)
                if (t->norm_seen[wd]) {
                    nb = (uint8_t)(wd * 64 + 63 -
                                   (unsigned)__builtin_clzll(t->norm_seen[wd]));
                    break;
                }
        }
        if (!(t->b.c && fds__term_score_tf(t->b.c, 1, nb) > 0))
            return false;
        df += t->t.df;
    }
    uint32_t max_doc = ts[0]->max_doc ? ts[0]->max_doc : 1;
    return df * TAAT_WINDOW >= (double)TAAT_DENSE_MIN * max_doc;
}

uint64_t fds__taat_dense_walk(float *acc, uint32_t n,
                              const fds_search_segment *sg, uint32_t lo,
                              fds__heap *hp, unsigned si, float th)
{
    uint64_t count = 0;
#ifdef __SSE2__
    if (!sg->live) { /* no deletions: counted 4 lanes at a time */
        __m128i cnt = _mm_setzero_si128();
        __m128 z = _mm_setzero_ps();
        for (uint32_t w = 0; w < n; w += 4) {
            __m128 v = _mm_loadu_ps(acc + w), nz = _mm_cmpneq_ps(v, z);
            cnt = _mm_sub_epi32(cnt, _mm_castps_si128(nz));
            _mm_storeu_ps(acc + w, z);
            /* th is -INFINITY while the page has room: 0 is no hit */
            unsigned gt = (unsigned)_mm_movemask_ps(
                _mm_and_ps(nz, _mm_cmpgt_ps(v, _mm_set1_ps(th))));
            if (gt) {
                float vs[4];
                _mm_storeu_ps(vs, v);
                for (; gt; gt &= gt - 1) {
                    unsigned i = (unsigned)__builtin_ctz(gt);
                    fds__offer(hp, si, lo + w + i, vs[i], &th);
                }
            }
        }
        uint32_t c[4];
        _mm_storeu_si128((__m128i *)c, cnt);
        return (uint64_t)c[0] + c[1] + c[2] + c[3];
    }
#endif
    for (uint32_t w = 0; w < n; w += 4) {
        unsigned nz, gt;
#ifdef __SSE2__
        __m128 v = _mm_loadu_ps(acc + w);
        nz = (unsigned)_mm_movemask_ps(_mm_cmpneq_ps(v, _mm_setzero_ps()));
        if (!nz)
            continue;
        _mm_storeu_ps(acc + w, _mm_setzero_ps());
        gt = nz & (unsigned)_mm_movemask_ps(_mm_cmpgt_ps(v, _mm_set1_ps(th)));
#else
        float v[4];
        memcpy(v, acc + w, sizeof v);
        nz = gt = 0;
        for (unsigned i = 0; i < 4; i++) {
            nz |= (unsigned)(v[i] != 0) << i;
            gt |= (unsigned)(v[i] != 0 && v[i] > th) << i;
        }
        if (!nz)
            continue;
        memset(acc + w, 0, sizeof v);
#endif
        if (!sg->live && !gt) { /* popcount of the 4 bits, by nibble */
            count += (0x4332322132212110ull >> (nz * 4)) & 7;
            continue;
        }
        float vs[4];
#ifdef __SSE2__
        _mm_storeu_ps(vs, v);
#else
        memcpy(vs, v, sizeof vs);
#endif
        for (; nz; nz &= nz - 1) {
            unsigned i = (unsigned)__builtin_ctz(nz);
            if (!fds__is_live(sg, lo + w + i))
                continue;
            count++;
            if ((gt >> i) & 1)
                fds__offer(hp, si, lo + w + i, vs[i], &th);
        }
    }
    return count;
}

static inline bool next_live(uint64_t *seen, uint32_t *wi,
                             uint64_t *m, const fds_search_segment *sg,
                             uint32_t lo, float *acc, uint32_t *w, float *s)
{
    return fds__next_live_tok(seen, wi, m, sg, lo, acc, NULL, w, s, NULL);
}

/*
 * Counting pass of a disjunction: term at a time over windows of
 * TAAT_WINDOW docs.  Each term's postings in the window add their score to a
 * per-doc accumulator (in the order of `ts`, the order the MaxScore pass
 * sums them too, so a doc's score does not depend on the pass that found
 * it) and mark the doc in a bitset; then the window's docs are counted and
 * offered to the page in doc order.  No per-doc cursor juggling, no
 * indirect calls: this is the cost of counting hits up to track_total_hits
 * (10,000 by default).  Without a page (hp->cap 0: _count, size 0) docs are
 * only marked and counted, never scored.  Returns the first doc not yet
 * visited (FDS__NO_MORE when the segment is done), once *count > limit.
 */
uint32_t fds__run_taat(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                       fds__heap *hp, uint64_t *count, uint64_t limit)
{
    const fds_search_segment *sg = &x->segs[si];
    uint32_t max_doc = ts[0]->max_doc;
    /* a window scratch's bitset and accumulator (0 between windows: the
     * walk clears them); out of memory, these, zeroed once */
    fds__win_scratch *ws = fds__win_get();
    uint64_t seen_own[SEEN_WORDS + SEEN_SUMW];
    float acc_own[TAAT_WINDOW];
    uint64_t *seen = ws ? ws->seen : seen_own;
    float *acc = ws ? ws->acc : acc_own;
    if (!ws) {
        memset(seen_own, 0, sizeof seen_own);
        memset(acc_own, 0, sizeof acc_own);
    }
    uint32_t next = FDS__NO_MORE;
    bool dense = fds__taat_dense_worth(ts, nt, hp->cap != 0);
    for (uint32_t lo = 0; lo < max_doc; lo += TAAT_WINDOW) {
        if (*count > limit) {
            next = lo;
            break;
        }
        if (fds__past_deadline(x))
            break;
        uint32_t hi = max_doc - lo > TAAT_WINDOW ? lo + TAAT_WINDOW : max_doc;
        bool any = false;
        for (size_t k = 0; k < nt; k++) {
            any |= ts[k]->b.doc < hi;
            if (dense)
                fds__taat_term_dense(x, ts[k], lo, hi, acc);
            else
                fds__taat_term(x, ts[k], k, lo, hi, seen, acc, NULL,
                               hp->cap != 0, NULL, NULL, NULL);
        }
        if (!any)
            continue;
        if (dense) {
            *count += fds__taat_dense_walk(acc, hi - lo, sg, lo, hp, si,
                                           fds__theta(hp));
            continue;
        }
        float th = fds__theta(hp);
        uint32_t wi = SEEN_START, w;
        uint64_t m = 0;
        float s;
        while (next_live(seen, &wi, &m, sg, lo, acc, &w, &s)) {
            (*count)++;
            if (hp->cap)
                fds__offer(hp, si, lo + w, s, &th);
        }
    }
    fds__win_put(ws);
    return next;
}
