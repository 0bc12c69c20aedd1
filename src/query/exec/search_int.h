/*
 * search_int.h: internal interface shared by the files of src/query that
 * build and run searches.  Nothing outside src/query includes it.
 *
 *   dsl_parse.c       query DSL -> fds_search_request
 *   compile.c         compiled query (statistics, BM25 weights, fuzzy)
 *   exec_state.c      normInverse tables, the deadline
 *   iter.c, term_it.c iterators over postings and columns, score bounds
 *   taat.c, norms.c,  the passes of a disjunction ranked by score: term at
 *   maxscore.c,       a time, norm bounds, MaxScore, seeds and counts
 *   seed.c            (window.h, norms.h, term_it.h: what they share)
 *   search_collect.c  top-k heap, sort keys, search_after, sorted blocks
 *   search_explain.c  explanations (fds_explanation trees)
 *   run.c             the passes over the segments (run.h; the driver,
 *                     fds_search_execute(), is src/query/search.c)
 */
#ifndef FDS_SEARCH_INT_H
#define FDS_SEARCH_INT_H

#include <stdatomic.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "fds_clock.h"
#include "ast/search_request.h"
#include "ast/ast_int.h"
#include "index/sidx_int.h"


#define FDS__NO_MORE UINT32_MAX /* an iterator's doc once it is exhausted */

/* ---- compiled query (per search) ---------------------------------------- */

/* A term's field and dictionary entry in one segment (cnode.seg). */
typedef struct fds__cnode_seg {
    const fds_sidx *sx;
    const fds_sfield *f; /* NULL: the segment has no such field */
    bool found;          /* the term is in f's dictionary: t */
    fds_sterm t;
} fds__cnode_seg;

/* Lucene's BM25 normInverse, 1 / (k1 * (1 - b + b * dl / avgdl)), per
 * norm byte for one avgdl, filled on first use: shared by every term of a
 * search with that avgdl (the terms of one field), so that a whole url's
 * 70 terms divide once per norm byte, not 70 times (fds__norm_inv_get). */
typedef struct fds__norm_inv {
    float avgdl;
    float cache[256];
    uint64_t have[4]; /* bit n set: cache[n] computed */
    struct fds__norm_inv *next;
} fds__norm_inv;

typedef struct fds__cnode {
    const fds_query *q;
    /* TERM: collection statistics over all segments */
    float weight;        /* TERM, PHRASE: fds__bm25_weight(boost, idf) */
    /* the boost the query's ancestors pass down, as Lucene's createWeight
     * does (BoostQuery, BooleanWeight, DisjunctionMaxWeight): the product
     * of their boosts, 1 at the root and under a boosting query's clauses
     * (FunctionScoreQuery applies its boost to its result) */
    float acc;
    /* q->boost * acc (for a should term, the sum of its merged duplicates'
     * boosts * acc): a term's or phrase's scorer boost, a constant-score
     * query's score */
    float boost;
    float idf, avgdl;
    uint64_t N, n;
    fds__norm_inv *ni;   /* TERM, PHRASE: the normInverse table of avgdl */
    bool dup;            /* a should term merged into an earlier equal one */
    /* TERM: per segment of the search, what compiling looked up (the
     * field, the term), so that building its iterators does not look the
     * term up again; NULL when not kept */
    struct fds__cnode_seg *seg;
    struct fds__cnode **kids; /* BOOL: must, should, filter, must_not in order */
    size_t nkids;
    fds_query *owned;    /* FUZZY: the expansion q points to (freed with it) */
} fds__cnode;

typedef struct fds__exec {
    const fds_search_request *req;
    const fds_search_segment *segs;
    unsigned nseg;
    uint64_t scored, total_postings;
    int corrupt;  /* set when a postings block fails to decode */
    int no_stats; /* iterators built again for a block: do not recount */
    unsigned cur_seg;
    /* the request's `timeout` as a CLOCK_MONOTONIC deadline (0: none);
     * passing it stops the search with what it has (timed_out) */
    uint64_t deadline_ns;
    bool timed_out;
    /* a phrase on a field some segment holds without positions (its
     * segment predates them or the field is mapped without): the search
     * is refused (search_phrase.c) */
    const fds_query *nopos;
    fds__norm_inv *ninv; /* the search's normInverse tables, one per avgdl */
} fds__exec;

/* The normInverse table of avgdl in x (made, empty, on first ask); NULL
 * out of memory.  Owned by x: fds__exec_release frees them. */
fds__norm_inv *fds__norm_inv_get(fds__exec *x, float avgdl);

/* Free what x owns (its normInverse tables); x stays usable as empty. */
void fds__exec_release(fds__exec *x);

/* Has the search passed its deadline?  Sets x->timed_out.  Checked once per
 * window or per FDS__DEADLINE_EVERY docs, so a timeout is noticed within
 * a few milliseconds of work. */
#define FDS__DEADLINE_EVERY 4096u
bool fds__past_deadline(fds__exec *x);

/* ---- iterators (iter.c, term_it.c) ---------------------------------------- */

typedef struct fds__it fds__it;
struct fds__it {
    uint32_t doc;
    uint32_t (*advance)(fds__it *, uint32_t target);
    float (*score)(fds__it *);
    void (*destroy)(fds__it *);
    fds__exec *x;
    const fds__cnode *c;
};

/* Iterator over one term's postings (block by block, skip list bounds). */
typedef struct fds__term_it {
    fds__it b;
    fds_sterm t;
    const uint8_t *norms;
    const uint64_t *norm_seen; /* the field's norm bytes docs have */
    uint32_t max_doc;
    uint32_t blk, n, i;  /* decoded block, its size, position */
    uint32_t wblk;       /* MaxScore: no block before it overlaps a window
                            still to come (window starts only grow) */
    uint32_t xb_blk;     /* block_bound_exact's cache: block + 1 (0 none) */
    float xb;            /* and its bound */
    float ub;            /* max over all blocks of the block bound */
    uint32_t tfmax;      /* max term frequency over all blocks (with ub) */
    uint64_t have1[4];   /* bit n set: tf1[n] computed */
    bool tf1_all;        /* tf1 holds every norm byte the field's docs have */
    /* with tf1_all, for terms of FDS__TFK_MIN_DF postings or more (else
     * NULL; owned, freed by the iterator's destroy): the score at tf 1 ..
     * FDS__TFK_N, row tf - 1, for the norm bytes tf1 holds; tfk_n rows
     * (fewer when the term's largest frequency is lower; 0 without tfk) */
    float *tfk;
    uint32_t tfk_n;
    uint8_t skip1[FDS_SIDX_SKIP_LEN], blk1[FDS_STERM_INLINE_BLK]; /* df = 1 */
    /* from here on not zeroed when allocated (it_alloc_part): written
     * before read */
    float tf1[256];      /* score at tf = 1 per norm byte (lazy) */
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
} fds__term_it;

static inline void fds__it_free(fds__it *i)
{
    if (i)
        i->destroy(i);
}

/* BM25 score of a term at (tf, norm byte), Lucene's formula (compile.c
 * header); inline because every scored posting goes through it. */
static inline float fds__term_score_tf(const fds__cnode *c, uint32_t tf,
                                      uint8_t norm)
{
    float w = c->weight;
    fds__norm_inv *m = c->ni; /* this search's only */
    if (!((m->have[norm >> 6] >> (norm & 63)) & 1)) {
        /* filled lazily (a query touches few norm values) */
        m->cache[norm] = 1.0f / (FDS_BM25_K1 * ((1 - FDS_BM25_B) +
                                                FDS_BM25_B *
                                                    (float)fds__norm_decode(norm) /
                                                    m->avgdl));
        m->have[norm >> 6] |= 1ull << (norm & 63);
    }
    return w - w / (1.0f + (float)tf * m->cache[norm]);
}

/* One matching clause's score v into a dis_max's best and the sum of the
 * others, as Lucene's DisjunctionMaxScorer.score() keeps them (the sum in
 * double, a score equal to the best taking its place). */
static inline void fds__dismax_add(float *best, double *other, float v)
{
    if (v >= *best) {
        *other += *best;
        *best = v;
    } else {
        *other += v;
    }
}

/* A dis_max's score from fds__dismax_add's best and others: best + others
 * * tie_breaker in double, rounded once to float (Lucene). */
static inline float fds__dismax_value(float best, double other, float tie)
{
    return (float)(best + other * tie);
}

/* Queries compiled and iterated as a bool of their clauses (bool itself,
 * constant_score, dis_max, boosting). */
static inline bool fds__q_compound(const fds_query *q)
{
    return q->type == FDS_Q_BOOL || q->type == FDS_Q_CONST ||
           q->type == FDS_Q_DISMAX || q->type == FDS_Q_BOOSTING;
}

/* The compiled form of `q` for this search (collection statistics summed
 * over x's segments; each node's boost the product of its ancestors' and
 * its own, cnode.acc and cnode.boost).  Borrows q (and x's segments) for
 * its life; NULL on ENOMEM.  Free with fds__cnode_free. */
fds__cnode *fds__compile(fds__exec *x, const fds_query *q);
void fds__cnode_free(fds__cnode *c); /* NULL is a no-op */
/* An iterator of `c` over segment `sx`.  NULL on ENOMEM. */
fds__it *fds__build(fds__exec *x, const fds__cnode *c, const fds_sidx *sx);
/* The best score any doc can reach under `i` (INFINITY if unknown). */
float fds__it_max(fds__it *i);
/* First ordinal of f whose term is >= key[0..n) (the dictionary is sorted
 * by bytes); f->nterms when none is. */
uint32_t fds__ord_lower_bound(const fds_sfield *f, const char *key, size_t n);
/* advance() of a term iterator (identifies one). */
uint32_t fds__term_adv(fds__it *i, uint32_t target);
/* Is `root` a disjunction of scored terms (MaxScore-able)?  Then *out is a
 * malloc'd array of its *n term iterators (caller frees the array). */
bool fds__disjunction_terms(fds__it *root, fds__term_it ***out, size_t *n);
/* The docs of term t (inlined: fds__sterm_inline; a term iterator's t is)
 * set in bits, a bitset of max_doc docs.  0, or -1 when a postings block
 * does not decode (x->corrupt set). */
int fds__sterm_or_bits(const fds_sterm *t, uint64_t *bits, uint32_t max_doc,
                       fds__exec *x);

/* ---- phrases (search_phrase.c) --------------------------------------------- */

/* The expansion of a match_phrase_prefix `q` (phrase_prefix set) over x's
 * segments: a phrase with the prefix's terms as the last alternatives, the
 * should-bool of their term queries (one position) or match_none (none).
 * NULL on ENOMEM; the caller frees it. */
fds_query *fds__phrase_expand(fds__exec *x, const fds_query *q);
/* Collection statistics of phrase c->q into c (weight = boost * the sum
 * of the terms' idfs); sets x->nopos for a segment without positions. */
void fds__phrase_stats(fds__exec *x, fds__cnode *c);
/* The iterator of phrase c over segment sx into *out (NULL: no doc of sx
 * can match).  0 or FDS_ENOMEM. */
int fds__phrase_build(fds__exec *x, const fds__cnode *c, const fds_sidx *sx, fds__it **out);
/* advance() of a phrase iterator (identifies one). */
uint32_t fds__phrase_adv(fds__it *i, uint32_t target);
/* The phrase frequency of a phrase iterator's current doc. */
float fds__phrase_freq(const fds__it *i);
/* From now on phrase iterator i may pass over docs whose score cannot
 * beat s (Lucene's setMinCompetitiveScore, a score equal to s losing its
 * tie): a block of the lead term whose (max tf, min norm) bounds its
 * scores to s at most, and a doc whose term frequencies and norm do,
 * without reading their positions.  For a page by score alone, full, whose
 * hits are counted far enough; docs come in increasing order, so an equal
 * score later loses the tie by doc. */
void fds__phrase_set_min_score(fds__it *i, float s);

/* ---- collection (search_collect.c) --------------------------------------- */

typedef struct fds__heap {
    fds_hit *h;
    size_t n, cap;
    const fds_search_request *req;
    /* with `floored`, a score the page's k-th score is known to reach (k
     * live docs of the search score at least its next float up: the
     * seeded k-th score of fds__count_disjunction), so a hit must beat it
     * too; false: none */
    bool floored;
    float floor;
} fds__heap;


static inline bool fds__is_live(const fds_search_segment *s, uint32_t d)
{
    return !s->live || fds__bit(s->live, d);
}

/* The score a hit must beat to enter the page: -INFINITY while it has room
 * (or its floor, when it has one and that is higher), INFINITY when there
 * is no page at all (_count, size 0: nothing enters). */
static inline float fds__theta(const fds__heap *hp)
{
    if (!hp->cap)
        return INFINITY;
    float th = hp->n < hp->cap ? -INFINITY : hp->h[0].score;
    return hp->floored && hp->floor > th ? hp->floor : th;
}


/* Offer a hit to the page (kept if it beats the worst one). */
void fds__heap_offer(fds__heap *hp, const fds_hit *hit);
/* The same for a page by score alone (hp->req->nsort == 0): doc `doc` of
 * segment `seg` scoring s.  Its hits are ordered by score, then segment
 * and doc (as fds__hit_cmp orders them without sort keys), compared in
 * place and moved by those three fields only -- a hit is 128 bytes, of
 * which a page by score uses 12.  The MaxScore passes offer every hit
 * that beats the k-th score here. */
void fds__heap_offer_score(fds__heap *hp, uint32_t seg, uint32_t doc, float s);
/* Sort a page by score alone (hp->req->nsort == 0; filled by
 * fds__heap_offer_score, or fds__heap_offer, which keeps the same order
 * when no score is NaN) best first, in place: a heapsort on the heap it
 * already is, moving the three fields such a page uses, O(n log n)
 * compares, no allocation.  The heap is spent; hp->n is unchanged. */
void fds__heap_sort_score(fds__heap *hp);
/* Compare sort key k of two hits: <0 if a sorts first. */
int fds__key_cmp(const fds_search_request *req, unsigned k, const fds_hit *a,
                 const fds_hit *b);
/* <0 if a sorts before b (better), >0 if after; ties by (seg, doc). */
int fds__hit_cmp(const fds_search_request *req, const fds_hit *a,
                 const fds_hit *b);
/* Sort value k of a hit from its segment's field `f` (may be NULL). */
void fds__sort_value(const fds_search_request *req, unsigned k,
                     const fds_sfield *f, uint64_t docbase, fds_hit *h);
/* Fill sort values of a hit; false if it is not after search_after.
 * `sf` holds the segment's field for each sort key (NULL if absent). */
bool fds__sort_values(fds__exec *x, const fds_sfield *const *sf, uint64_t docbase,
                      fds_hit *h);
/* The rest of segment `si` from doc `from`, best numeric block first
 * (search_collect.c).  0 or FDS_ENOMEM. */
int fds__sorted_blocks(fds__exec *x, const fds__cnode *root, unsigned si,
                       const fds_sfield *const *sf, uint64_t docbase,
                       uint32_t from, fds__heap *hp);
/* The first pass over a disjunction of the terms ts[0..nt) in segment si
 * (reorders ts by weight per posting, rare terms first, the order every
 * doc's score is summed in).  Seeds hp's floor from the rarest terms'
 * docs; then, if `counting`, counts hits term at a time while *count <=
 * limit and offers them to hp -- unless one term's doc count less the
 * segment's deleted docs already passes limit: *count becomes limit + 1
 * and at most 1,000 hits are scored, to warm up a page the seed did not
 * settle.  Returns the first doc the MaxScore pass must start at, FDS__NO_MORE
 * when the segment is done (or there is no page). */
uint32_t fds__count_disjunction(fds__exec *x, unsigned si, fds__term_it **ts,
                                size_t nt, fds__heap *hp, uint64_t *count,
                                uint64_t limit, bool counting);
/* Order terms as fds__count_disjunction does: by weight over collection
 * doc count descending (MaxScoreBulkScorer.partitionScorers' maxWindowScore
 * / cost, Lucene 9.9), ties in query order.  Without boosts this is weight
 * descending; a frequent term boosted by its repeats in the query (a whole
 * url's hex pairs) sorts last, so MaxScore makes it non-essential first and
 * it only probes the rarer terms' candidates.  A stable insertion sort on
 * collection-wide figures: every segment and slice sums in one order. */
void fds__order_terms(fds__term_it **ts, size_t nt);

/* A clause's bound per posting: its weight (boost x idf, a BM25 score)
 * over its collection-wide doc count, so score per posting; 1 doc when it
 * has none (MaxScoreBulkScorer's maxWindowScore / cost).  The key of
 * fds__order_terms. */
double fds__sum_gain(const fds__cnode *c);

/* Largest element fds__sort_by_gain moves, bytes. */
#define FDS__GAIN_ELEM_MAX 32u

/* Sort v[0..n) (elements of `size` <= FDS__GAIN_ELEM_MAX bytes) by
 * fds__sum_gain(node(element)) descending, ties keeping their order: a
 * stable insertion sort, O(n) on sorted input (every segment's terms come
 * in that order already).  The one order a disjunction's term scores are
 * summed in, by the MaxScore passes (fds__order_terms), by bool_score and
 * by explain.  No errors, no allocation. */
void fds__sort_by_gain(void *v, size_t n, size_t size,
                       const fds__cnode *(*node)(const void *));

/* Does bool c sum its should clauses by fds__sum_gain descending (ties in
 * query order) rather than in query order?  When all of them are terms:
 * the shape the MaxScore passes take, so that a doc-at-a-time search
 * (min_score, explain) adds the same floats in the same order and gives
 * the same score to the bit. */
bool fds__should_by_gain(const fds__cnode *c);

/* The k-th scores two slices of one segment's MaxScore pass publish to
 * each other, float bits (slice 0 holds the lower doc ids). */
typedef struct fds__slice_th {
    _Atomic uint32_t th[2];
} fds__slice_th;

/* MaxScore over the docs [from, to) of segment si (maxscore.c), terms
 * ordered and positioned at or before `from`; with `sh` (NULL: alone),
 * this is slice `me` (0 or 1) and prunes by the other slice's k-th score
 * too.  Every cnode's norm cache must be filled (fds__cnode_fill) before
 * two slices run at once.  0 or FDS_ENOMEM. */
int fds__run_maxscore(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                      fds__heap *hp, uint32_t from, uint32_t to,
                      fds__slice_th *sh, int me);
/* Fill the BM25 norm cache of a term's cnode for every norm byte, so that
 * scoring only reads it (threads may then share it). */
void fds__cnode_fill(fds__cnode *c);

/* ---- explanations (search_explain.c) ------------------------------------- */

/* One explanation per hit h[0..n-1] into out[0..n-1] (each non-NULL unless
 * out of memory).  Returns 0 or FDS_ENOMEM. */
int fds__explain_hits(fds__exec *x, const fds__cnode *root, const fds_hit *h, size_t n,
                      fds_explanation **out);
/* Free n explanations and the array (NULL is a no-op). */
void fds__explain_free(fds_explanation **e, size_t n);

/* ---- named queries (search_named.c) -------------------------------------- */

/* Does q or a clause under it have a `_name`? */
bool fds__query_named(const fds_query *q);
/* out[i] (zeroed by the caller) = the names of root's nodes that hit h[i]
 * matches, each node run again on the hit's doc.  0 or FDS_ENOMEM. */
int fds__named_hits(fds__exec *x, const fds__cnode *root, const fds_hit *h, size_t n,
                    fds_matched *out);

#endif
