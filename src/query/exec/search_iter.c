/*
 * search_iter.c: the scoring core of a search -- the compiled query,
 * iterators over postings and columns, BM25 as Lucene computes it, and
 * MaxScore so that a frequent term does not score every posting.
 *
 * Scoring follows Elasticsearch's LegacyBM25Similarity, Lucene's
 * BM25Similarity (k1 = 1.2, b = 0.75) given the boost times (1 + k1):
 *   idf    = ln(1 + (N - n + 0.5) / (n + 0.5))        (float, like Lucene)
 *   weight = (boost * (1 + k1)) * idf                 (fds__bm25_weight)
 *   score  = weight - weight / (1 + freq * normInverse[norm])
 *          = weight * freq / (freq + k1 * (1 - b + b * dl / avgdl))
 * with dl = SmallFloat.byte4ToInt(norm byte) (1 for fields without norms),
 * N = docs with the field, n = docs with the term and avgdl = sum of term
 * frequencies / N, all summed over every segment of the search (as a shard
 * does in Elasticsearch; deleted docs still count, as in Lucene, until
 * segments are merged).  A bool query sums the scores of its must and
 * matching should clauses; filter and must_not clauses do not score;
 * constant-score queries (terms, range, exists, ids, match_all) score their
 * boost.
 *
 * Top-k by score: a disjunction of terms (a `match` on a text field, a
 * single `term`, a bool of should-terms) first gets a k-th score from its
 * rarest terms' docs (seed_floor), is counted term at a time up to
 * track_total_hits (unless one term's doc count settles it), then
 * finished by MaxScore (Turtle & Flood 1995, as
 * Lucene 9's MaxScoreBulkScorer) over windows of docs with per-window term
 * bounds from the (max tf, min norm) block impacts in the skip lists:
 * frequent low-idf terms only probe the candidates of the rare ones, and
 * windows no doc of which can enter the page are skipped undecoded.
 * Candidates are also dropped by bounds at their own norm and by the
 * token budget of their length (norm_lims); a doc that these rule out
 * whatever its terms is not even scored by the essential terms, which are
 * the fewest that the norms still let through need (norm_gate,
 * norm_essential); and a large segment's pass may
 * run as two slices on two threads sharing their k-th scores (search.c).
 * Everything else is evaluated document at a time.  Ties between equal
 * scores go to the lower (segment, doc), like Lucene, so a candidate must
 * score strictly above the current k-th score.  A disjunction sums a doc's
 * term scores in one order (weight per posting descending) in both passes, so a page
 * does not depend on how far hits were counted; bounds compared with the
 * k-th score carry the float summation slack (BOUND_SLACK), but for the
 * per-norm bound summed as floats in that same order (norm_chain), which
 * is exact and rules out docs that tie the k-th score.
 */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index/postings.h"
#include "exec/search_int.h"
#include "exec/term_pat.h"

static float bm25_idf(uint64_t N, uint64_t n)
{
    return (float)log(1.0 + ((double)N - (double)n + 0.5) / ((double)n + 0.5));
}

fds__norm_inv *fds__norm_inv_get(fds__exec *x, float avgdl)
{
    for (fds__norm_inv *m = x->ninv; m; m = m->next)
        if (!memcmp(&m->avgdl, &avgdl, sizeof avgdl)) /* the same bits */
            return m;
    fds__norm_inv *m = malloc(sizeof *m);
    if (!m)
        return NULL;
    m->avgdl = avgdl;
    memset(m->have, 0, sizeof m->have);
    m->next = x->ninv;
    x->ninv = m;
    return m;
}

void fds__exec_release(fds__exec *x)
{
    while (x->ninv) {
        fds__norm_inv *m = x->ninv;
        x->ninv = m->next;
        free(m);
    }
}

void fds__cnode_free(fds__cnode *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nkids; i++)
        fds__cnode_free(c->kids[i]);
    free(c->kids);
    free(c->seg);
    fds__query_free(c->owned);
    free(c);
}

/* ---- fuzzy expansion ---------------------------------------------------------
 *
 * Lucene's FuzzyQuery with TopTermsBlendedFreqScoringRewrite: the terms of
 * the field within the edit distance (Damerau-Levenshtein in its restricted
 * form, optimal string alignment, when transpositions are allowed; code
 * points) that share the first prefix_length code points, each boosted by
 * 1 - edits / min(term length, query length) (FuzzyTermsEnum); the
 * max_expansions best by boost (ties: the smaller term, as TopTermsRewrite
 * keeps them) become should clauses of term queries whose document
 * frequency is the largest of theirs (BlendedTermQuery), so that a rare
 * misspelling does not outscore the right word.  No edits allowed, or a
 * prefix as long as the term: the term itself.
 */

/* Code points of s[0..n) into a malloc'd array (*m of them); NULL when
 * out of memory or not UTF-8 (such a term matches nothing). */
static int32_t *cps_of(const char *s, size_t n, size_t *m)
{
    int32_t *cp = NULL;
    return fds__code_points(s, n, &cp, m) ? NULL : cp;
}

/* Edit distance of a and b (optimal string alignment when `transp`), or
 * max + 1 once it must exceed max.  rows: 3 * (nb + 1) ints of scratch. */
static int osa(const int32_t *a, size_t na, const int32_t *b, size_t nb,
               int max, bool transp, int *rows)
{
    if ((na > nb ? na - nb : nb - na) > (size_t)max)
        return max + 1;
    int *pp = rows, *p = rows + nb + 1, *cur = rows + 2 * (nb + 1);
    for (size_t j = 0; j <= nb; j++)
        p[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = (int)i;
        int best = cur[0];
        for (size_t j = 1; j <= nb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = p[j - 1] + cost;
            if (p[j] + 1 < v)
                v = p[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (transp && i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
            if (v < best)
                best = v;
        }
        if (best > max)
            return max + 1;
        int *t = pp;
        pp = p;
        p = cur;
        cur = t;
    }
    return p[nb] <= max ? p[nb] : max + 1;
}

typedef struct fz_cand {
    const char *t; /* in a segment's map, valid for the search */
    uint32_t n;
    float boost;
    uint64_t df;
} fz_cand;

static int fz_by_term(const void *a, const void *b)
{
    const fz_cand *x = a, *y = b;
    int c = memcmp(x->t, y->t, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static int fz_by_boost(const void *a, const void *b)
{
    const fz_cand *x = a, *y = b;
    if (x->boost != y->boost)
        return x->boost > y->boost ? -1 : 1;
    return fz_by_term(a, b);
}

static uint32_t ord_lower_bound(const fds_sfield *f, const char *key, size_t n);

/* The terms of q's expansion in every segment (sorted by term, equal terms
 * merged with their doc freqs summed) into *out.  0 or FDS_ENOMEM. */
static int fz_collect(fds__exec *x, const fds_query *q, const int32_t *qc,
                      size_t qn, int edits, size_t pbytes, fz_cand **out,
                      size_t *nout)
{
    fz_cand *v = NULL;
    size_t n = 0, cap = 0;
    int *rows = malloc(3 * (qn + (size_t)edits + 2) * sizeof *rows);
    if (!rows)
        return FDS_ENOMEM;
    for (unsigned s = 0; s < x->nseg; s++) {
        const fds_sidx *sx = x->segs[s].sidx;
        const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
        if (!f || (f->kind != FDS_FT_TEXT && f->kind != FDS_FT_KEYWORD))
            continue;
        uint32_t ord = pbytes ? ord_lower_bound(f, q->term, pbytes) : 0;
        for (uint32_t seen = 0; ord < f->nterms; ord++) {
            if (++seen % FDS__DEADLINE_EVERY == 0 && fds__past_deadline(x))
                break; /* timed out: the terms found so far */
            uint32_t tl;
            const char *t = fds__sidx_term_str(f, ord, &tl);
            if (pbytes && (tl < pbytes || memcmp(t, q->term, pbytes)))
                break;
            size_t tn;
            if (tl > 4 * (qn + (size_t)edits))
                continue; /* more code points than can be within reach */
            int32_t *tc = cps_of(t, tl, &tn);
            if (!tc)
                continue; /* out of memory or not UTF-8: not within reach */
            int ed = osa(qc, qn, tc, tn, edits, q->fz_transp, rows);
            free(tc);
            if (ed > edits)
                continue;
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 16;
                fz_cand *nv = realloc(v, nc * sizeof *nv);
                if (!nv) {
                    free(rows);
                    free(v);
                    return FDS_ENOMEM;
                }
                v = nv;
                cap = nc;
            }
            fds_sterm st;
            fds__sidx_term_at(sx, f, ord, &st);
            size_t mn = tn < qn ? tn : qn;
            v[n++] = (fz_cand){t, tl, mn ? 1.0f - (float)ed / (float)mn : 0,
                               st.df};
        }
    }
    free(rows);
    if (n > 1)
        qsort(v, n, sizeof *v, fz_by_term);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && !fz_by_term(&v[m - 1], &v[i]))
            v[m - 1].df += v[i].df;
        else
            v[m++] = v[i];
    }
    *out = v;
    *nout = m;
    return 0;
}

/* The query a fuzzy query runs as (see above); NULL on ENOMEM.  *maxdf is
 * the blended doc freq (0: none, the plain term). */
static fds_query *fz_expand(fds__exec *x, const fds_query *q, uint64_t *maxdf)
{
    *maxdf = 0;
    size_t qn;
    int32_t *qc = cps_of(q->term, q->term_len, &qn);
    if (!qc)
        return NULL;
    int edits = q->fz_edits >= 0 ? q->fz_edits
              : (int)qn < q->fz_lo ? 0 : (int)qn < q->fz_hi ? 1 : 2;
    size_t pcp = (size_t)q->fz_prefix < qn ? (size_t)q->fz_prefix : qn, pb = 0;
    for (size_t i = 0; i < pcp; i++) /* bytes of the first pcp code points */
        pb += qc[i] < 0x80 ? 1 : qc[i] < 0x800 ? 2 : qc[i] < 0x10000 ? 3 : 4;
    fds_query *r = NULL;
    if (edits == 0 || pcp >= qn) {
        r = fds__query_new(FDS_Q_TERM);
        if (r && (r->field = malloc(q->field_len + 1)) &&
            (r->term = malloc(q->term_len + 1))) {
            memcpy(r->field, q->field, q->field_len + 1);
            memcpy(r->term, q->term, q->term_len + 1);
            r->field_len = q->field_len;
            r->term_len = q->term_len;
            r->ftype = q->ftype;
            r->boost = q->boost;
        } else {
            fds__query_free(r);
            r = NULL;
        }
        free(qc);
        return r;
    }
    fz_cand *v = NULL;
    size_t n = 0;
    int rc = fz_collect(x, q, qc, qn, edits, pb, &v, &n);
    free(qc);
    if (rc)
        return NULL;
    if (n > 1)
        qsort(v, n, sizeof *v, fz_by_boost);
    if (n > (size_t)q->fz_max_exp)
        n = (size_t)q->fz_max_exp;
    r = fds__query_new(n ? FDS_Q_BOOL : FDS_Q_MATCH_NONE);
    if (r)
        r->boost = q->boost;
    for (size_t i = 0; r && i < n; i++) {
        fds_query *t = fds__query_new(FDS_Q_TERM);
        fds_query **nl = t ? realloc(r->should, (r->nshould + 1) * sizeof *nl) : NULL;
        if (nl)
            r->should = nl;
        if (!nl || !(t->field = malloc(q->field_len + 1)) ||
            !(t->term = malloc(v[i].n + 1))) {
            fds__query_free(t);
            fds__query_free(r);
            r = NULL;
            break;
        }
        memcpy(t->field, q->field, q->field_len + 1);
        memcpy(t->term, v[i].t, v[i].n);
        t->term[v[i].n] = 0;
        t->field_len = q->field_len;
        t->term_len = v[i].n;
        t->ftype = q->ftype;
        t->boost = v[i].boost; /* q's boost is the bool's, passed down */
        r->should[r->nshould++] = t;
        if (v[i].df > *maxdf)
            *maxdf = v[i].df;
    }
    free(v);
    return r;
}

static bool same_term(const fds_query *a, const fds_query *b)
{
    return a->type == FDS_Q_TERM && b->type == FDS_Q_TERM &&
           a->field_len == b->field_len && a->term_len == b->term_len &&
           !memcmp(a->field, b->field, a->field_len) &&
           !memcmp(a->term, b->term, a->term_len);
}

/* Should clauses on one and the same term become one clause with the sum
 * of their boosts, as Lucene's BooleanQuery.rewrite does when at most one
 * should clause is required ("url": "/a/b/a" scores `a` once at boost 2,
 * and iterates its postings once).  The merged-away kids stay in place,
 * marked dup, so kids keep lining up with the query's lists. */
static void merge_should_terms(fds__cnode *c, const fds_query *q)
{
    fds__cnode **sh = c->kids + q->nmust;
    for (size_t i = 0; i < q->nshould; i++) {
        if (sh[i]->dup || sh[i]->q->type != FDS_Q_TERM)
            continue;
        double boost = sh[i]->q->boost;
        for (size_t j = i + 1; j < q->nshould; j++)
            if (!sh[j]->dup && same_term(sh[i]->q, sh[j]->q)) {
                boost += sh[j]->q->boost;
                sh[j]->dup = true;
            }
        sh[i]->boost = (float)boost * sh[i]->acc;
        sh[i]->weight = fds__bm25_weight(sh[i]->boost, sh[i]->idf);
    }
}

/* fds__compile under ancestors whose boosts multiply to acc. */
static fds__cnode *compile_acc(fds__exec *x, const fds_query *q, float acc)
{
    if (q->type == FDS_Q_FUZZY ||
        (q->type == FDS_Q_PHRASE && q->phrase_prefix)) {
        uint64_t maxdf = 0;
        fds_query *e = q->type == FDS_Q_FUZZY ? fz_expand(x, q, &maxdf)
                                              : fds__phrase_expand(x, q);
        if (e && q->name && !e->name && !(e->name = strdup(q->name))) {
            fds__query_free(e); /* the expansion answers to q's name */
            return NULL;
        }
        fds__cnode *c = e ? compile_acc(x, e, acc) : NULL;
        if (!c) {
            fds__query_free(e);
            return NULL;
        }
        c->owned = e;
        for (size_t i = 0; maxdf && i < c->nkids; i++) { /* blended */
            fds__cnode *k = c->kids[i];
            k->n = maxdf;
            k->idf = bm25_idf(k->N, maxdf);
            k->weight = fds__bm25_weight(k->boost, k->idf);
        }
        return c;
    }
    fds__cnode *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->q = q;
    c->acc = acc;
    c->boost = q->boost * acc;
    if (fds__q_compound(q)) {
        size_t n = q->nmust + q->nshould + q->nfilter + q->nmust_not;
        c->kids = calloc(n ? n : 1, sizeof *c->kids);
        if (!c->kids) {
            free(c);
            return NULL;
        }
        fds_query **lists[4] = {q->must, q->should, q->filter, q->must_not};
        size_t counts[4] = {q->nmust, q->nshould, q->nfilter, q->nmust_not};
        /* the boost passed down to the clauses; a boosting query's is
         * applied to its result (FunctionScoreQuery) */
        float down = q->type == FDS_Q_BOOSTING ? 1.0f : q->boost * acc;
        for (int l = 0; l < 4; l++)
            for (size_t i = 0; i < counts[l]; i++) {
                fds__cnode *k = compile_acc(x, lists[l][i], down);
                if (!k) {
                    fds__cnode_free(c);
                    return NULL;
                }
                c->kids[c->nkids++] = k;
            }
        if (q->type == FDS_Q_BOOL && q->msm <= 1)
            merge_should_terms(c, q);
    } else if (q->type == FDS_Q_TERM) {
        uint64_t N = 0, n = 0, sttf = 0;
        c->seg = x->nseg ? malloc(x->nseg * sizeof *c->seg) : NULL;
        for (unsigned s = 0; s < x->nseg; s++) {
            const fds_sfield *f =
                fds__sidx_field(x->segs[s].sidx, q->field, q->field_len);
            fds__cnode_seg *cs = c->seg ? &c->seg[s] : NULL;
            if (cs)
                *cs = (fds__cnode_seg){.sx = x->segs[s].sidx, .f = f};
            if (!f)
                continue;
            N += f->doc_count;
            sttf += f->sum_ttf;
            fds_sterm t;
            if (fds__sidx_term(x->segs[s].sidx, f, q->term, q->term_len, &t) == 0) {
                n += t.df;
                if (cs) {
                    cs->found = true;
                    cs->t = t;
                }
            }
        }
        c->N = N;
        c->n = n;
        c->idf = bm25_idf(N, n);
        c->weight = fds__bm25_weight(c->boost, c->idf);
        c->avgdl = N ? (float)((double)sttf / (double)N) : 1.0f;
    } else if (q->type == FDS_Q_PHRASE) {
        fds__phrase_stats(x, c);
    }
    if ((q->type == FDS_Q_TERM || q->type == FDS_Q_PHRASE) &&
        !(c->ni = fds__norm_inv_get(x, c->avgdl))) {
        fds__cnode_free(c);
        return NULL;
    }
    return c;
}



fds__cnode *fds__compile(fds__exec *x, const fds_query *q)
{
    return compile_acc(x, q, 1.0f);
}

static void plain_destroy(fds__it *i) { free(i); }

/* --- none / all --- */
static uint32_t none_adv(fds__it *i, uint32_t t) { (void)t; return i->doc = FDS__NO_MORE; }
static float const_score(fds__it *i) { return i->c->boost; }

typedef struct all_it {
    fds__it b;
    uint32_t max_doc;
} all_it;

static uint32_t all_adv(fds__it *i, uint32_t t)
{
    all_it *a = (all_it *)i;
    return i->doc = t < a->max_doc ? t : FDS__NO_MORE;
}

/* --- term (term_it: search_int.h) --- */
static inline uint32_t skip_last(const fds__term_it *t, uint32_t b)
{
    return fds__get_u32(t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN);
}

/* Score at (tf, norm); tf = 1 (most postings) from a lazily filled table,
 * the same float as fds__term_score_tf. */
static inline float term_score_fast(fds__term_it *t, uint32_t tf, uint8_t norm)
{
    if (tf != 1)
        return fds__term_score_tf(t->b.c, tf, norm);
    if (!((t->have1[norm >> 6] >> (norm & 63)) & 1)) {
        t->tf1[norm] = fds__term_score_tf(t->b.c, 1, norm);
        t->have1[norm >> 6] |= 1ull << (norm & 63);
    }
    return t->tf1[norm];
}

/* Fill tf1 for every norm byte a doc of the field has (norm_seen; 1 for
 * a field without norms), so that a term-at-a-time loop reads it without
 * testing have1 per posting (score_tf1). */
static void tf1_fill(fds__term_it *t)
{
    if (!t->norms) { /* a keyword field: one entry */
        (void)term_score_fast(t, 1, 1);
    } else { /* the set bits only: a short field has a few norm bytes */
        for (unsigned wd = 0; wd < 4; wd++)
            for (uint64_t m = t->norm_seen[wd]; m; m &= m - 1)
                (void)term_score_fast(
                    t, 1, (uint8_t)(wd * 64 + (unsigned)__builtin_ctzll(m)));
    }
    t->tf1_all = true;
}

/* term_score_fast after tf1_fill: nb is a norm byte of a doc's. */
static inline float score_tf1(const fds__term_it *t, uint32_t tf, uint8_t nb)
{
    return tf == 1 ? t->tf1[nb] : fds__term_score_tf(t->b.c, tf, nb);
}

/* Terms with fewer postings than this are scored through term_score_fast
 * (a have1 test per posting) rather than filling tf1 for every norm byte
 * of the field first: a whole url's rare terms, each in a few hundred
 * docs, cost a division per norm byte the field has (~150 on the 1M
 * bench) for a table they read a few times. */
#define TF1_FILL_MIN_DF 1024u

/* A posting's score in a term-at-a-time loop: from the tf1 table when
 * tf1_fill ran (`filled`), else term_score_fast.  The same float. */
static inline float score_taat(fds__term_it *t, uint32_t tf, uint8_t nb,
                               bool filled)
{
    return filled ? score_tf1(t, tf, nb) : term_score_fast(t, tf, nb);
}

static float block_bound(const fds__term_it *t, uint32_t b)
{
    const uint8_t *s = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    return fds__term_score_tf(t->b.c, fds__get_u32(s + 8), s[12]);
}

/* Bound of block b from its competitive impacts (sidx_format.h): the best
 * score over its (norm, tf) pairs, never above block_bound; block_bound
 * itself when the block has none.  The last block asked is cached (window
 * bounds and lead pruning ask for the same or the next block). */
static float block_bound_exact(fds__term_it *t, uint32_t b)
{
    if (t->xb_blk == b + 1)
        return t->xb;
    const uint8_t *s = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    float ub = block_bound(t, b);
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

static int decode_block(fds__term_it *t, uint32_t b)
{
    const uint8_t *s = t->t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    uint32_t base = b ? skip_last(t, b - 1) + 1 : 0;
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

/* The first position from t->i in t's decoded block whose doc is >=
 * target (its last doc is): a linear scan for a near target, else a
 * binary search over the rest of the block. */
static inline uint32_t block_find(const fds__term_it *t, uint32_t target)
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

uint32_t fds__term_adv(fds__it *i, uint32_t target)
{
    fds__term_it *t = (fds__term_it *)i;
    if (target == FDS__NO_MORE)
        return i->doc = FDS__NO_MORE;
    if (t->blk == FDS__NO_MORE || target > skip_last(t, t->blk)) {
        uint32_t lo = t->blk == FDS__NO_MORE ? 0 : t->blk + 1, hi = t->t.nblocks;
        /* gallop then binary search for the first block ending >= target */
        uint32_t step = 1;
        while (lo + step < hi && skip_last(t, lo + step) < target) {
            lo += step;
            step *= 2;
        }
        if (lo + step < hi)
            hi = lo + step + 1;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (skip_last(t, mid) < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo >= t->t.nblocks || decode_block(t, lo))
            return i->doc = FDS__NO_MORE;
    }
    t->i = block_find(t, target);
    return i->doc = t->docs[t->i];
}

/* fds__term_adv(t, d) for d > t's doc, the common case (d in the decoded
 * block) inline: a MaxScore probe. */
static inline void term_seek(fds__term_it *t, uint32_t d)
{
    if (t->blk != FDS__NO_MORE && d <= skip_last(t, t->blk)) {
        t->i = block_find(t, d);
        t->b.doc = t->docs[t->i];
    } else {
        fds__term_adv(&t->b, d);
    }
}

/* Undo a term's advances: its next advance, to any doc, searches the
 * skip list from block 0 (fds__term_adv). */
static inline void term_rewind(fds__term_it *t)
{
    t->blk = FDS__NO_MORE;
}

static float term_score(fds__it *i)
{
    fds__term_it *t = (fds__term_it *)i;
    i->x->scored++;
    uint8_t norm = t->norms ? t->norms[i->doc] : 1;
    return fds__term_score_tf(i->c, t->tfs[t->i], norm);
}

/* Max over all blocks of the block bound (cached): over the term's
 * frontier when the segment has it (every block's (max tf, min norm) is
 * dominated by a frontier pair, and the score is monotone in both, so the
 * max is the same float). */
static float term_ub(fds__term_it *t)
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
            float bb = block_bound(t, b);
            if (bb > ub)
                ub = bb;
        }
        t->ub = ub;
    }
    return t->ub;
}

/* --- column scans: range, exists --- */
typedef struct col_it {
    fds__it b;
    const fds_sfield *f;
    uint32_t max_doc;
    const fds_query *q;
} col_it;

static bool range_match(const col_it *r, uint32_t d)
{
    const fds_sfield *f = r->f;
    const fds_query *q = r->q;
    if (!fds__bit(f->present, d))
        return false;
    switch (f->kind) {
    case FDS_FT_LONG: case FDS_FT_DATE: case FDS_FT_BOOLEAN: {
        int64_t v = fds__col_i64(f, d);
        return v >= q->lo_l && v <= q->hi_l;
    }
    case FDS_FT_DOUBLE: {
        double v = fds__col_f64(f, d);
        return (q->lo_d_incl ? v >= q->lo_d : v > q->lo_d) &&
               (q->hi_d_incl ? v <= q->hi_d : v < q->hi_d);
    }
    case FDS_FT_KEYWORD: {
        uint32_t o = fds__col_ord(f, d), l;
        if (o == FDS_SIDX_NO_ORD)
            return false;
        const char *s = fds__sidx_term_str(f, o, &l);
        if (q->lo_s) {
            size_t n = l < q->lo_s_len ? l : q->lo_s_len;
            int c = memcmp(s, q->lo_s, n);
            if (!c)
                c = l < q->lo_s_len ? -1 : l > q->lo_s_len;
            if (c < 0 || (c == 0 && !q->lo_s_incl))
                return false;
        }
        if (q->hi_s) {
            size_t n = l < q->hi_s_len ? l : q->hi_s_len;
            int c = memcmp(s, q->hi_s, n);
            if (!c)
                c = l < q->hi_s_len ? -1 : l > q->hi_s_len;
            if (c > 0 || (c == 0 && !q->hi_s_incl))
                return false;
        }
        return true;
    }
    default:
        return false;
    }
}

static uint32_t range_adv(fds__it *i, uint32_t t)
{
    col_it *r = (col_it *)i;
    for (uint32_t d = t; d < r->max_doc; d++)
        if (range_match(r, d))
            return i->doc = d;
    return i->doc = FDS__NO_MORE;
}

static uint32_t exists_adv(fds__it *i, uint32_t t)
{
    col_it *r = (col_it *)i;
    for (uint32_t d = t; d < r->max_doc; d++)
        if (fds__bit(r->f->present, d))
            return i->doc = d;
    return i->doc = FDS__NO_MORE;
}

/* --- bitset (terms, ids) --- */
typedef struct bits_it {
    fds__it b;
    uint64_t *bits;
    uint32_t max_doc;
} bits_it;

static uint32_t bits_adv(fds__it *i, uint32_t t)
{
    bits_it *s = (bits_it *)i;
    if (t >= s->max_doc)
        return i->doc = FDS__NO_MORE;
    uint32_t w = t / 64;
    uint64_t cur = s->bits[w] & (~0ull << (t % 64));
    uint32_t nw = (s->max_doc + 63) / 64;
    for (;;) {
        if (cur) {
            uint32_t d = w * 64 + (uint32_t)__builtin_ctzll(cur);
            return i->doc = d < s->max_doc ? d : FDS__NO_MORE;
        }
        if (++w >= nw)
            return i->doc = FDS__NO_MORE;
        cur = s->bits[w];
    }
}

static void bits_destroy(fds__it *i)
{
    free(((bits_it *)i)->bits);
    free(i);
}

/* --- bool --- */
typedef struct bool_it {
    fds__it b;
    fds__it **req;    /* must then filter */
    size_t nreq, nmust;
    fds__it **should;
    size_t nshould;
    fds__it **excl;
    size_t nexcl;
    int msm;
    bool empty_all; /* bool {} = match_all */
    uint32_t max_doc;
} bool_it;

static uint32_t bool_adv(fds__it *i, uint32_t target)
{
    bool_it *b = (bool_it *)i;
    if (b->empty_all)
        return i->doc = target < b->max_doc ? target : FDS__NO_MORE;
    for (;;) {
        if (target == FDS__NO_MORE)
            return i->doc = FDS__NO_MORE;
        uint32_t d;
        if (b->nreq) {
            d = target;
            size_t agree = 0, k = 0;
            while (agree < b->nreq) {
                fds__it *r = b->req[k];
                uint32_t rd = r->doc;
                if (rd == FDS__NO_MORE - 1 || rd < d)
                    rd = r->advance(r, d);
                if (rd == FDS__NO_MORE)
                    return i->doc = FDS__NO_MORE;
                if (rd == d) {
                    agree++;
                } else {
                    d = rd;
                    agree = 1;
                }
                k = (k + 1) % b->nreq;
            }
        } else {
            d = FDS__NO_MORE;
            for (size_t k = 0; k < b->nshould; k++) {
                fds__it *s = b->should[k];
                uint32_t sd = s->doc;
                if (sd == FDS__NO_MORE - 1 || sd < target)
                    sd = s->advance(s, target);
                if (sd < d)
                    d = sd;
            }
            if (d == FDS__NO_MORE)
                return i->doc = FDS__NO_MORE;
        }
        bool ok = true;
        for (size_t k = 0; k < b->nexcl && ok; k++) {
            fds__it *e = b->excl[k];
            uint32_t ed = e->doc;
            if (ed == FDS__NO_MORE - 1 || ed < d)
                ed = e->advance(e, d);
            if (ed == d)
                ok = false;
        }
        if (ok && b->msm > 0) {
            int cnt = 0;
            for (size_t k = 0; k < b->nshould; k++) {
                fds__it *s = b->should[k];
                uint32_t sd = s->doc;
                if (sd == FDS__NO_MORE - 1 || sd < d)
                    sd = s->advance(s, d);
                cnt += sd == d;
            }
            ok = cnt >= b->msm;
        }
        if (ok)
            return i->doc = d;
        target = d + 1;
    }
}

static float bool_score(fds__it *i)
{
    bool_it *b = (bool_it *)i;
    if (b->empty_all)
        return i->c->boost;
    float s = 0;
    for (size_t k = 0; k < b->nmust; k++)
        s += b->req[k]->score(b->req[k]);
    for (size_t k = 0; k < b->nshould; k++) {
        fds__it *sh = b->should[k];
        if (sh->doc == FDS__NO_MORE - 1 || sh->doc < i->doc)
            sh->advance(sh, i->doc);
        if (sh->doc == i->doc)
            s += sh->score(sh);
    }
    return s; /* the clauses carry the bool's boost (cnode.acc) */
}

static void bool_destroy(fds__it *i)
{
    bool_it *b = (bool_it *)i;
    for (size_t k = 0; k < b->nreq; k++)
        fds__it_free(b->req[k]);
    for (size_t k = 0; k < b->nshould; k++)
        fds__it_free(b->should[k]);
    for (size_t k = 0; k < b->nexcl; k++)
        fds__it_free(b->excl[k]);
    free(b->req);
    free(b->should);
    free(b->excl);
    free(b);
}

/* An iterator of sz bytes, the first `zero` of them zeroed (the rest is
 * written before it is read: a term's decoded block and its tf1 table,
 * 2 KiB that a whole url's 70 terms would clear for nothing). */
static void *it_alloc_part(size_t sz, size_t zero, fds__exec *x, const fds__cnode *c)
{
    fds__it *i = malloc(sz);
    if (!i)
        return NULL;
    memset(i, 0, zero);
    i->doc = FDS__NO_MORE - 1; /* not started */
    i->x = x;
    i->c = c;
    i->destroy = plain_destroy;
    i->score = const_score;
    i->advance = none_adv;
    return i;
}

static void *it_alloc(size_t sz, fds__exec *x, const fds__cnode *c)
{
    return it_alloc_part(sz, sz, x, c);
}

/* The docs of term t (of field f) into s's bitset.  0, or -1 when a block
 * does not decode (x->corrupt set). */
static int bits_add_sterm(bits_it *s, const fds_sfield *f,
                          const fds_sterm *term, fds__exec *x)
{
    fds_sterm tt = *term, *t = &tt; /* inlined into this frame's buffers */
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
    uint8_t skip1[FDS_SIDX_SKIP_LEN], blk1[FDS_STERM_INLINE_BLK];
    fds__sterm_inline(t, f->norms, skip1, blk1);
    uint32_t base = 0;
    for (uint32_t b = 0; b < t->nblocks; b++) {
        const uint8_t *sk = t->skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        unsigned n = sk[13] + 1u;
        if (fds_postings_decode_block(fds__skip_block(t, sk), t->end, n,
                                      base, s->max_doc, docs, tfs) < 0) {
            x->corrupt = 1;
            return -1;
        }
        for (unsigned k = 0; k < n; k++)
            s->bits[docs[k] / 64] |= 1ull << (docs[k] % 64);
        base = docs[n - 1] + 1;
    }
    return 0;
}

static int bits_add_term(bits_it *s, const fds_sidx *sx, const fds_sfield *f,
                         const char *v, size_t len, fds__exec *x)
{
    fds_sterm t;
    if (fds__sidx_term(sx, f, v, len, &t))
        return 0;
    return bits_add_sterm(s, f, &t, x);
}

/* First ordinal of f whose term is >= key[0..n) (bytes, as the dictionary
 * is sorted). */
static uint32_t ord_lower_bound(const fds_sfield *f, const char *key, size_t n)
{
    uint32_t lo = 0, hi = f->nterms;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, tl;
        const char *t = fds__sidx_term_str(f, mid, &tl);
        int c = memcmp(t, key, tl < n ? tl : n);
        if (c < 0 || (c == 0 && tl < n))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint32_t fds__ord_lower_bound(const fds_sfield *f, const char *key, size_t n)
{
    return ord_lower_bound(f, key, n);
}

/* Every term of f matching the pattern of q into s: the ordinals that
 * start with the pattern's literal lead only (a prefix is a range of
 * ordinals), each term's docs once. */
static void bits_add_pattern(bits_it *s, const fds_sidx *sx,
                             const fds_sfield *f, const fds_query *q, fds__exec *x)
{
    size_t ln;
    const char *lead = fds__term_pat_lead(q->pat, &ln);
    uint32_t ord = ln ? ord_lower_bound(f, lead, ln) : 0;
    for (uint32_t seen = 0; ord < f->nterms; ord++) {
        if (++seen % FDS__DEADLINE_EVERY == 0 && fds__past_deadline(x))
            return; /* timed out: what it has */
        uint32_t tl;
        const char *t = fds__sidx_term_str(f, ord, &tl);
        if (ln && (tl < ln || memcmp(t, lead, ln)))
            break;
        if (!fds__term_pat_match(q->pat, t, tl))
            continue;
        fds_sterm st;
        fds__sidx_term_at(sx, f, ord, &st);
        if (bits_add_sterm(s, f, &st, x))
            return;
    }
}

/* dis_max: the best clause plus tie_breaker times the others, as Lucene's
 * DisjunctionMaxScorer adds them: the others' sum in double, one rounding
 * to float at the end (fds__dismax_add, fds__dismax_value).  The clauses
 * carry the query's boost (cnode.acc). */
static float dismax_score(fds__it *i)
{
    bool_it *b = (bool_it *)i;
    float best = 0;
    double other = 0;
    for (size_t k = 0; k < b->nshould; k++) {
        fds__it *sh = b->should[k];
        if (sh->doc == FDS__NO_MORE - 1 || sh->doc < i->doc)
            sh->advance(sh, i->doc);
        if (sh->doc == i->doc)
            fds__dismax_add(&best, &other, sh->score(sh));
    }
    return fds__dismax_value(best, other, i->c->q->tie);
}

/* boosting: the positive clause's score, times negative_boost where the
 * negative clause matches too. */
static float boosting_score(fds__it *i)
{
    bool_it *b = (bool_it *)i;
    float v = b->req[0]->score(b->req[0]);
    fds__it *neg = b->should[0];
    if (neg->doc == FDS__NO_MORE - 1 || neg->doc < i->doc)
        neg->advance(neg, i->doc);
    if (neg->doc == i->doc)
        v *= i->c->q->tie;
    return v * i->c->boost;
}

/* What compiling term cnode c looked up in segment sx (NULL: not kept). */
static const fds__cnode_seg *term_seg(const fds__exec *x, const fds__cnode *c,
                                 const fds_sidx *sx)
{
    if (!c->seg)
        return NULL;
    if (x->cur_seg < x->nseg && c->seg[x->cur_seg].sx == sx)
        return &c->seg[x->cur_seg];
    for (unsigned s = 0; s < x->nseg; s++)
        if (c->seg[s].sx == sx)
            return &c->seg[s];
    return NULL;
}

static void order_should(bool_it *b);

fds__it *fds__build(fds__exec *x, const fds__cnode *c, const fds_sidx *sx)
{
    const fds_query *q = c->q;
    uint32_t max_doc = fds_sidx_max_doc(sx);
    switch (q->type) {
    case FDS_Q_MATCH_ALL: {
        all_it *a = it_alloc(sizeof *a, x, c);
        if (a) {
            a->max_doc = max_doc;
            a->b.advance = all_adv;
        }
        return (fds__it *)a;
    }
    case FDS_Q_TERM: {
        const fds__cnode_seg *cs = term_seg(x, c, sx);
        const fds_sfield *f =
            cs ? cs->f : fds__sidx_field(sx, q->field, q->field_len);
        fds_sterm st;
        if (cs && cs->found)
            st = cs->t;
        if (!f || (f->kind != FDS_FT_TEXT && f->kind != FDS_FT_KEYWORD) ||
            (cs ? !cs->found : fds__sidx_term(sx, f, q->term, q->term_len, &st) != 0))
            return it_alloc(sizeof(fds__it), x, c);
        fds__term_it *t = it_alloc_part(sizeof *t, offsetof(fds__term_it, tf1), x, c);
        if (!t)
            return NULL;
        t->t = st;
        fds__sterm_inline(&t->t, f->norms, t->skip1, t->blk1);
        t->norms = f->norms;
        t->norm_seen = f->norm_seen;
        t->max_doc = max_doc;
        t->blk = FDS__NO_MORE;
        t->b.advance = fds__term_adv;
        t->b.score = term_score;
        if (!x->no_stats)
            x->total_postings += st.df;
        t->ub = NAN; /* computed when first needed (term_ub) */
        return (fds__it *)t;
    }
    case FDS_Q_RANGE:
    case FDS_Q_EXISTS: {
        const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
        if (!f || (q->type == FDS_Q_RANGE && f->kind == FDS_FT_TEXT))
            return it_alloc(sizeof(fds__it), x, c);
        col_it *r = it_alloc(sizeof *r, x, c);
        if (!r)
            return NULL;
        r->f = f;
        r->q = q;
        r->max_doc = max_doc;
        r->b.advance = q->type == FDS_Q_RANGE ? range_adv : exists_adv;
        return (fds__it *)r;
    }
    case FDS_Q_TERMS:
    case FDS_Q_PATTERN:
    case FDS_Q_IDS: {
        bits_it *s = it_alloc(sizeof *s, x, c);
        if (!s)
            return NULL;
        s->max_doc = max_doc;
        s->bits = calloc(((size_t)max_doc + 63) / 64 + 1, 8);
        if (!s->bits) {
            free(s);
            return NULL;
        }
        s->b.advance = bits_adv;
        s->b.destroy = bits_destroy;
        if (q->type == FDS_Q_IDS) {
            for (size_t k = 0; k < q->nvals; k++) {
                uint32_t d;
                if (fds_sidx_find_id(sx, q->vals[k], q->val_lens[k], &d) == 0)
                    s->bits[d / 64] |= 1ull << (d % 64);
            }
        } else {
            const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
            bool terms = f && (f->kind == FDS_FT_TEXT || f->kind == FDS_FT_KEYWORD);
            if (terms && q->type == FDS_Q_PATTERN)
                bits_add_pattern(s, sx, f, q, x);
            else if (terms)
                for (size_t k = 0; k < q->nvals; k++)
                    bits_add_term(s, sx, f, q->vals[k], q->val_lens[k], x);
        }
        return (fds__it *)s;
    }
    case FDS_Q_CONST:
    case FDS_Q_DISMAX:
    case FDS_Q_BOOSTING:
    case FDS_Q_BOOL: {
        bool_it *b = it_alloc(sizeof *b, x, c);
        if (!b)
            return NULL;
        b->b.advance = bool_adv;
        b->b.score = bool_score;
        b->b.destroy = bool_destroy;
        b->max_doc = max_doc;
        size_t n = c->nkids ? c->nkids : 1;
        b->req = calloc(n, sizeof(fds__it *));
        b->should = calloc(n, sizeof(fds__it *));
        b->excl = calloc(n, sizeof(fds__it *));
        if (!b->req || !b->should || !b->excl) {
            bool_destroy((fds__it *)b);
            return NULL;
        }
        size_t k = 0;
        for (size_t i = 0; i < q->nmust; i++, k++)
            if (!(b->req[b->nreq++] = fds__build(x, c->kids[k], sx)))
                goto oom;
        b->nmust = b->nreq;
        for (size_t i = 0; i < q->nshould; i++, k++)
            if (!c->kids[k]->dup &&
                !(b->should[b->nshould++] = fds__build(x, c->kids[k], sx)))
                goto oom;
        for (size_t i = 0; i < q->nfilter; i++, k++)
            if (!(b->req[b->nreq++] = fds__build(x, c->kids[k], sx)))
                goto oom;
        for (size_t i = 0; i < q->nmust_not; i++, k++)
            if (!(b->excl[b->nexcl++] = fds__build(x, c->kids[k], sx)))
                goto oom;
        if (fds__should_by_gain(c))
            order_should(b);
        if (q->msm >= 0)
            b->msm = q->msm;
        else
            b->msm = (q->nshould && !q->nmust && !q->nfilter) ? 1 : 0;
        if (b->msm > (int)q->nshould) {
            /* cannot be satisfied (children are still freed by destroy) */
            b->b.advance = none_adv;
        }
        if (!q->nmust && !q->nshould && !q->nfilter && !q->nmust_not)
            b->empty_all = true;
        if (!q->nmust && !q->nshould && !q->nfilter && q->nmust_not) {
            /* only must_not: everything else */
            all_it *a = it_alloc(sizeof *a, x, c);
            if (!a)
                goto oom;
            a->max_doc = max_doc;
            a->b.advance = all_adv;
            b->req[b->nreq++] = (fds__it *)a;
        }
        if (q->type == FDS_Q_CONST)
            b->b.score = const_score;
        else if (q->type == FDS_Q_DISMAX)
            b->b.score = dismax_score;
        else if (q->type == FDS_Q_BOOSTING)
            b->b.score = boosting_score;
        return (fds__it *)b;
    oom:
        bool_destroy((fds__it *)b);
        return NULL;
    }
    case FDS_Q_PHRASE: {
        fds__it *p;
        if (fds__phrase_build(x, c, sx, &p))
            return NULL;
        return p ? p : it_alloc(sizeof(fds__it), x, c);
    }
    default:
        return it_alloc(sizeof(fds__it), x, c);
    }
}

/* Upper bound of the score of any doc the iterator returns. */
float fds__it_max(fds__it *i)
{
    if (i->advance == none_adv)
        return 0;
    if (i->advance == fds__term_adv)
        return term_ub((fds__term_it *)i);
    if (i->advance == fds__phrase_adv) /* a BM25 score stays below it */
        return i->c->weight;
    if (i->advance == bool_adv) {
        bool_it *b = (bool_it *)i;
        const fds_query *q = i->c->q;
        if (b->empty_all || q->type == FDS_Q_CONST)
            return i->c->boost;
        if (q->type == FDS_Q_BOOSTING) /* negative_boost may exceed 1 */
            return fds__it_max(b->req[0]) * (q->tie > 1 ? q->tie : 1) *
                   i->c->boost;
        /* dis_max: best + tie * rest <= the sum of the clauses' bounds */
        float s = 0;
        for (size_t k = 0; k < b->nmust; k++)
            s += fds__it_max(b->req[k]);
        for (size_t k = 0; k < b->nshould; k++)
            s += fds__it_max(b->should[k]);
        return s;
    }
    return i->c->boost; /* constant-score iterators */
}

/* Is the root a disjunction of scored terms (MaxScore-able)? Collect them. */
bool fds__disjunction_terms(fds__it *root, fds__term_it ***out, size_t *n)
{
    if (root->advance == fds__term_adv) {
        *out = malloc(sizeof(fds__term_it *));
        if (!*out)
            return false;
        (*out)[0] = (fds__term_it *)root;
        *n = 1;
        return true;
    }
    if (root->advance != bool_adv || root->c->q->type != FDS_Q_BOOL)
        return false;
    bool_it *b = (bool_it *)root;
    if (b->nreq || b->nexcl || b->msm > 1 || !b->nshould || b->empty_all)
        return false; /* a boost is in the terms' weights (cnode.acc) */
    fds__term_it **ts = malloc(b->nshould * sizeof *ts);
    if (!ts)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < b->nshould; i++) {
        fds__it *s = b->should[i];
        if (s->advance == fds__term_adv)
            ts[k++] = (fds__term_it *)s;
        else if (s->advance != none_adv) {
            free(ts);
            return false;
        }
    }
    *out = ts;
    *n = k;
    return true;
}

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
typedef struct lead_prune {
    double rest, slack;
    float th;
} lead_prune;

static bool block_hopeless(fds__term_it *t, uint32_t b, const lead_prune *p)
{
    return ((double)block_bound(t, b) + p->rest) * p->slack <= (double)p->th ||
           ((double)block_bound_exact(t, b) + p->rest) * p->slack <= (double)p->th;
}

/* The columns that name the value of a doc on the text field of a
 * disjunction's terms: the keyword multi-field's ordinals (kf) and the
 * field's own value ids (vf, FDS_SIDX_F_VALUES), either NULL.  A value's
 * key is its keyword ordinal when it has one, else kn + its value id: a
 * function of the string alone (the keyword skips a value by its length,
 * and value ids are given by it), one key per string. */
typedef struct val_cols {
    const fds_sfield *kf, *vf;
    uint32_t kn; /* kf's terms: the first key of a value id */
} val_cols;

/* Docs a MaxScore window's essential terms need not score at all: the
 * bound of a doc's whole score from its norm byte alone (norm_lims: every
 * term at its largest frequency, and the token budget of the doc's
 * length), times BOUND_SLACK(nt) and rounded up to a float, per norm byte
 * on first use.  A doc whose bound is <= th (the window's k-th score)
 * cannot enter the page whatever its terms: on a url field, most docs are
 * far too short or too long for a whole url's terms. */
typedef struct norm_gate {
    float val[256];         /* NAN: not computed yet */
    float th;
    struct norm_lims *nl;
    fds__term_it **ts;
    float eth;              /* the k-th score e is for (NAN: none) */
    size_t e;               /* norm_essential at eth */
    size_t ek[256];         /* per norm byte: its own e at eth (nt: none
                               yet); it only falls as the k-th score rises */
    unsigned cut;           /* every norm byte >= cut is out (norm_cut);
                               256: none known */
    const val_cols *keys;   /* the memo's keys: their cache lines are asked
                               for as a doc passes (NULL: no memo) */
} norm_gate;

static float gate_fill(norm_gate *g, uint8_t nb, float th);

/* How many postings ahead the gate asks for a doc's norm byte: at 10M
 * docs a field's norms are 10 MB, and the gate's reads of them, one after
 * the other, otherwise wait on memory (bench/scale). */
#define NORM_PREFETCH 32u

/* A window's bitset: a bit per doc in SEEN_WORDS words, then SEEN_SUMW
 * summary words from seen[SEEN_SUM], bit i of the lot set when word i may
 * have bits, so that a walk over a window of few candidates (10M docs:
 * most of its words empty) reads only the words that have some. */
#define SEEN_WORDS (MAXSCORE_WINDOW_MAX / 64)
#define SEEN_SUM SEEN_WORDS
#define SEEN_SUMW ((SEEN_WORDS + 63) / 64)
#define SEEN_START UINT32_MAX /* a walk's cursor before word 0 */

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
typedef struct win_scratch {
    struct win_scratch *next; /* in the free list */
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
} win_scratch;

static pthread_mutex_t win_mu = PTHREAD_MUTEX_INITIALIZER;
static win_scratch *win_free;
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
 * memory).  Give it back with win_put once its bitset and accumulators
 * are 0 again. */
static win_scratch *win_get(void)
{
    pthread_mutex_lock(&win_mu);
    win_scratch *w = win_free;
    if (w) {
        win_free = w->next;
        win_nfree--;
    }
    pthread_mutex_unlock(&win_mu);
    return w ? w : calloc(1, sizeof *w);
}

static void win_put(win_scratch *w)
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

/* A window's candidates as a list in doc order: offsets, partial scores,
 * tokens so far (the window scratch's cw, cs, ct), n of them. */
typedef struct cand_list {
    uint16_t *cw;
    float *cs;
    uint32_t *ct;
    size_t n;
} cand_list;

/* Posting (offset w, score s, frequency tf) of a window's term: into the
 * accumulator and bitset, or onto `out` when the term is the window's
 * only essential one (its postings are then the candidates, in order). */
static inline void take_posting(uint64_t *seen, uint64_t *sw, bool narrow,
                                float *acc, uint32_t *tok, cand_list *out,
                                uint32_t w, float s, uint32_t tf)
{
    if (out) {
        out->cw[out->n] = (uint16_t)w;
        out->cs[out->n] = s;
        out->ct[out->n++] = tf;
        return;
    }
    acc[w] += s;
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
 * essential (gate->ek, when norm_essential ran at the gate's k-th score:
 * such a doc must hold one of the terms before its own split, which all
 * come before t, to enter the page).  Leaves the cursor on its first doc
 * >= hi (or FDS__NO_MORE); `t` must be on a doc >= lo.
 */
static inline __attribute__((always_inline)) void
taat_term_at(fds__exec *x, fds__term_it *t, size_t k, uint32_t lo, uint32_t hi,
             uint64_t *seen, float *acc, uint32_t *tok, bool score,
             const lead_prune *prune, norm_gate *gate, cand_list *out,
             bool narrow)
{
    if (score && !t->tf1_all && t->t.df >= TF1_FILL_MIN_DF)
        tf1_fill(t);
    bool filled = t->tf1_all;
    uint64_t sw = 0; /* seen's first summary word, for a narrow window */
    while (t->b.doc < hi) {
        if (prune && block_hopeless(t, t->blk, prune)) {
            uint32_t nb = t->blk + 1;
            while (nb < t->t.nblocks && skip_last(t, nb - 1) + 1 < hi &&
                   block_hopeless(t, nb, prune))
                nb++;
            if (nb >= t->t.nblocks || decode_block(t, nb)) {
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
        /* per norm byte, the split norm_essential found at gth */
        const size_t *ek = gate && k && gate->eth == gth ? gate->ek : NULL;
        /* the memo's key columns (val_key): a doc that passes the gate
         * is a candidate, whose key the memo reads after this pass */
        const val_cols *keys = gate ? gate->keys : NULL;
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
                v = gate_fill(gate, nb, gth);
            if (v <= gth || (ek && ek[nb] <= k &&
                             !((seen[w >> 6] >> (w & 63)) & 1))) {
                ruled++; /* the doc's length alone rules it out */
                continue;
            }
            fds__packed_prefetch(kcol, kbits, d);
            fds__packed_prefetch(vcol, vbits, d);
            take_posting(seen, &sw, narrow, acc, tok, out, w,
                         score_taat(t, t->tfs[j], nb, filled), t->tfs[j]);
        }
        for (; j < end; j++) { /* acc is 0 where seen is clear */
            uint32_t d = t->docs[j];
            take_posting(seen, &sw, narrow, acc, tok, out, d - lo,
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
        if (t->blk + 1 >= t->t.nblocks || decode_block(t, t->blk + 1)) {
            t->b.doc = FDS__NO_MORE;
            break;
        }
        t->b.doc = t->docs[0];
    }
    seen[SEEN_SUM] |= sw;
}

/* taat_term_at, its loops compiled apart for a lone essential term's
 * list, a narrow window (at most 4096 docs: the first summary word in a
 * register) and a wide one: a branch per posting on which, in one loop,
 * cost exact counts 5% more instructions. */
static void taat_term(fds__exec *x, fds__term_it *t, size_t k, uint32_t lo,
                      uint32_t hi, uint64_t *seen, float *acc, uint32_t *tok,
                      bool score, const lead_prune *prune, norm_gate *gate,
                      cand_list *out)
{
    if (out)
        taat_term_at(x, t, k, lo, hi, seen, acc, tok, score, prune, gate,
                     out, true);
    else if (hi - lo <= 64 * 64)
        taat_term_at(x, t, k, lo, hi, seen, acc, tok, score, prune, gate,
                     NULL, true);
    else
        taat_term_at(x, t, k, lo, hi, seen, acc, tok, score, prune, gate,
                     NULL, false);
}

/* The next doc of a window's bitset (SEEN_WORDS words and the summary)
 * after the cursor (*wi, *m: start at SEEN_START and 0) that is live in
 * `sg`, its score in *s (and its tokens in *tk, with tok); false when
 * there is none.  Resets the accumulators of every doc it passes to 0 (so
 * that taat_term adds to 0 in the next window), and the bitset's words
 * and summary as it reads them: a window's bitset must be walked to its
 * end, and is then all 0 for the next window. */
static inline bool next_live_tok(uint64_t *seen, uint32_t *wi, uint64_t *m,
                                 const fds_search_segment *sg, uint32_t lo,
                                 float *acc, uint32_t *tok, uint32_t *w,
                                 float *s, uint32_t *tk)
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


static inline bool next_live(uint64_t *seen, uint32_t *wi,
                             uint64_t *m, const fds_search_segment *sg,
                             uint32_t lo, float *acc, uint32_t *w, float *s)
{
    return next_live_tok(seen, wi, m, sg, lo, acc, NULL, w, s, NULL);
}

/* Offer doc d of segment si with score s if it beats *th; *th follows. */
static inline void offer(fds__heap *hp, unsigned si, uint32_t d, float s, float *th)
{
    if (s > *th) {
        fds__heap_offer_score(hp, si, d, s);
        *th = fds__theta(hp);
    }
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
static uint32_t run_taat(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                         fds__heap *hp, uint64_t *count, uint64_t limit)
{
    const fds_search_segment *sg = &x->segs[si];
    uint32_t max_doc = ts[0]->max_doc;
    /* a window scratch's bitset and accumulator (0 between windows: the
     * walk clears them); out of memory, these, zeroed once */
    win_scratch *ws = win_get();
    uint64_t seen_own[SEEN_WORDS + SEEN_SUMW];
    float acc_own[TAAT_WINDOW];
    uint64_t *seen = ws ? ws->seen : seen_own;
    float *acc = ws ? ws->acc : acc_own;
    if (!ws) {
        memset(seen_own, 0, sizeof seen_own);
        memset(acc_own, 0, sizeof acc_own);
    }
    uint32_t next = FDS__NO_MORE;
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
            taat_term(x, ts[k], k, lo, hi, seen, acc, NULL, hp->cap != 0,
                      NULL, NULL, NULL);
        }
        if (!any)
            continue;
        float th = fds__theta(hp);
        uint32_t wi = SEEN_START, w;
        uint64_t m = 0;
        float s;
        while (next_live(seen, &wi, &m, sg, lo, acc, &w, &s)) {
            (*count)++;
            if (hp->cap)
                offer(hp, si, lo + w, s, &th);
        }
    }
    win_put(ws);
    return next;
}

/* Bound of `t` over the docs [lo, hi): the largest block bound of its
 * blocks that overlap the window, from the skip data alone (0: none). */
static float term_window_bound(fds__term_it *t, uint32_t lo, uint32_t hi)
{
    if (t->b.doc >= hi)
        return 0;
    uint32_t b = t->blk == FDS__NO_MORE || t->blk < t->wblk ? t->wblk : t->blk;
    while (b < t->t.nblocks && skip_last(t, b) < lo)
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
            cb = block_bound(t, b);
        }
        /* the impacts only when the coarse bound could raise the max */
        if (cb > ub) {
            float bb = fds__skip_ilen(sk) ? block_bound_exact(t, b) : cb;
            if (bb > ub)
                ub = bb;
        }
        if (fds__get_u32(sk) >= hi - 1)
            break;
    }
    return ub;
}

/* The probe limit before term k of nt: a candidate whose partial score s
 * over ts[..k) has (double)s <= it cannot beat the k-th score th with the
 * terms left, whose window bounds sum to suf_k: the test
 * (s + suf_k) * BOUND_SLACK(nt - k) <= th solved for s once per window
 * and term rather than per candidate (double rounding is far inside the
 * slack).  Taken only for the terms a window's candidates reach: a whole
 * url's 70 terms cost 70 divisions a window where its few candidates
 * are gone after a handful. */
static inline double probe_limit(double suf_k, size_t k, size_t nt, float th)
{
    return (double)th / BOUND_SLACK(nt - k) - suf_k;
}

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

/* Per-doc probe limits of run_maxscore from the doc's norm: all the terms
 * are of one field, so a doc's score for ts[k] is at most
 * score(tfmax of ts[k] over the segment, the doc's norm byte) -- on a url
 * field far below the window bound, which is the score of the block's
 * shortest doc.  Filled for the norm bytes candidates have, once per k-th
 * score. */
typedef struct norm_lims {
    const uint8_t *norms; /* the terms' one norms column; NULL: not used */
    const uint64_t *seen; /* its norm bytes that docs have */
    size_t nt;
    double *suf;          /* [256][nt + 1]: sum of the bounds of ts[k..] */
    float *uf;            /* [256][nt]: ts[k]'s bound, the float a doc of
                             the norm adds at most (with suf's row) */
    double *lim;          /* [nt][256]: limits as probe_limit's, for th[] */
    float th[256];        /* the k-th score lim's column is for (NAN: none) */
    uint64_t have[4];     /* bit n set: suf's row n is filled */
    /* token budgets (budget_row), NULL when the terms are not distinct */
    double **bud;         /* [256]: NULL or [nt + 1][bw[nb]] */
    uint32_t bw[256];     /* columns of bud[nb]: min(maxlen, rcap) + 1 */
    uint32_t rcap;        /* budgets of fewer tokens only (the sum of the
                             terms' tfmax at most: more add nothing) */
    uint32_t maxlen[256]; /* norm_max_len per norm byte, with budgets */
    double *col;          /* [256][nt + 1]: budget_col's columns */
    uint64_t have_col[4]; /* bit n set: col's row n is filled */
    double *mg;           /* scratch of budget_row and budget_col */
    size_t bud_bytes;     /* allocated to bud[] so far */
    /* budget_top: the terms of tfmax >= 1 by weight, descending (n1),
     * and its merge heap's scratch */
    struct top_term *w1;
    size_t n1;
    double wmax;          /* the largest weight; 0: budget_top is off */
    struct top_head *hd;
} norm_lims;

/* Token budgets cover docs with fewer than this many tokens left (a table
 * of (terms + 1) x (this + 1) doubles per norm byte), and their tables
 * take at most BUDGET_MAX_BYTES per search: norms past it go without. */
#define BUDGET_MAX_TOKENS 256u
#define BUDGET_MAX_BYTES (4u << 20)

static void norm_lims_free(norm_lims *n)
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
static int norm_lims_init(norm_lims *n, fds__term_it **ts, size_t nt)
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
        norm_lims_free(n);
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
        term_ub(ts[k]); /* fills tfmax */
        rcap += ts[k]->tfmax;
    }
    n->rcap = rcap < BUDGET_MAX_TOKENS ? (uint32_t)rcap : BUDGET_MAX_TOKENS;
    for (int nb = 0; nb < 256; nb++)
        n->maxlen[nb] = norm_max_len((uint8_t)nb);
    n->bud = calloc(256, sizeof *n->bud);
    /* budget_row's scratch: 2 lists and a term's gains, of which it takes
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
        norm_lims_free(n);
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
 * score(tf) - score(tf - 1), tf <= tfmax, over ts[k..] -- a prefix of each
 * term's gains is what a doc can take, and the r largest gains in the
 * union sum to no less than any such choice, concave or not.  As sums of
 * the floats that a doc adds, they need the same BOUND_SLACK as suf.
 * NULL (no budget bound for the norm) past BUDGET_MAX_BYTES or out of
 * memory.  A row has bw[nb] = min(maxlen, rcap) + 1 columns: no doc of
 * the norm has more tokens to spend, nor a term more often than that.
 */
static const double *budget_row(norm_lims *n, fds__term_it **ts, uint8_t nb)
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
        uint32_t top = ts[k]->tfmax < cap ? ts[k]->tfmax : (uint32_t)cap;
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

static const double *norm_suf(norm_lims *n, fds__term_it **ts, uint8_t nb);

/* Make n->lim[k * 256 + nb] hold, for every k, the limit of a doc of norm
 * byte nb at k-th score th: (double)s <= it means s cannot beat th with
 * ts[k..], by the per-norm bounds. */
static inline void norm_fill(norm_lims *n, fds__term_it **ts, uint8_t nb,
                             float th)
{
    if (n->th[nb] == th)
        return;
    size_t nt = n->nt;
    const double *suf = norm_suf(n, ts, nb);
    for (size_t k = 0; k < nt; k++)
        n->lim[k * 256 + nb] = probe_limit(suf[k], k, nt, th);
    n->th[nb] = th;
}

/* The sum over every term of its score at its largest frequency, for a
 * doc of norm byte nb (suf's row nb of norm_lims, filled on first use). */
static const double *norm_suf(norm_lims *n, fds__term_it **ts, uint8_t nb)
{
    size_t nt = n->nt;
    double *suf = n->suf + (size_t)nb * (nt + 1);
    float *uf = n->uf + (size_t)nb * nt;
    if (!((n->have[nb >> 6] >> (nb & 63)) & 1)) {
        suf[nt] = 0;
        for (size_t k = nt; k-- > 0;) {
            term_ub(ts[k]); /* fills tfmax */
            float u = fds__term_score_tf(ts[k]->b.c, ts[k]->tfmax, nb);
            uf[k] = u > 0 ? u : 0; /* a term not matched adds nothing */
            suf[k] = suf[k + 1] + uf[k];
        }
        n->have[nb >> 6] |= 1ull << (nb & 63);
    }
    return suf;
}

/*
 * The most a doc of norm byte nb (norm_suf's row filled) can score when
 * its float sum over ts[..k) is s: s plus each term's bound uf, added as
 * floats in the order a doc's score is summed.  IEEE addition rounds
 * monotonically (a <= a', b <= b' gives fl(a + b) <= fl(a' + b')), so
 * this bounds the doc's own float sum exactly, with no BOUND_SLACK: a doc
 * that ties the k-th score at its norm -- a long url repeated thousands
 * of times, whose copies have no keyword ordinal for the value memo -- is
 * ruled out without probing the terms it has left.  O(nt - k): once per
 * norm byte for the gate, and in the norm split and the candidate filter
 * only where the slack leaves a bound in doubt (chain_doubt).
 */
static float norm_chain(const norm_lims *n, uint8_t nb, size_t k, float s)
{
    const float *uf = n->uf + (size_t)nb * n->nt;
    for (size_t j = k; j < n->nt; j++)
        s += uf[j];
    return s;
}

/* Is the double bound b of a sum of m floats within its slack of th, so
 * that norm_chain may rule out what BOUND_SLACK(m) keeps? */
static inline bool chain_doubt(double b, size_t m, float th)
{
    return b <= (double)th * BOUND_SLACK(m);
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
static double keep_largest(double *h, size_t *nh, size_t cap, double v)
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
 * Column maxlen[nb] of budget_row's table for norm byte nb (maxlen <
 * rcap; n->bud set): col[k] bounds what ts[k..] add to a doc of the norm
 * that matches none of ts[..k) -- the sum of the maxlen largest marginal
 * gains of ts[k..] -- which is all the norm split (norm_essential) and
 * the gate (row 0) read.  A min-heap of the len best gains so far, the
 * terms added from the last: O(gains * log len) per norm, where the
 * whole table costs O(nt * len) merges and writes.  The heap's sum is
 * kept by adding and subtracting doubles of floats (a relative error
 * near 2^-45 at most, far inside BOUND_SLACK's margin).  Filled on first
 * use.
 */
static const double *budget_col(norm_lims *n, fds__term_it **ts, uint8_t nb)
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
        uint32_t top = ts[k]->tfmax < len ? ts[k]->tfmax : len;
        double prev = 0, tail = gain_tail(c->weight);
        for (uint32_t tf = 1; tf <= top; tf++) {
            double v = (double)fds__term_score_tf(c, tf, nb), g = v - prev;
            prev = v;
            if (nh == len && g + tail <= h[0])
                break; /* no later gain of the term is kept either */
            sum += keep_largest(h, &nh, len, g);
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
 * rounding is inside its last factor.  The gate (gate_fill) needs the
 * column only for the norms this leaves in.
 */
static double budget_top(norm_lims *n, fds__term_it **ts, uint8_t nb)
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
            if (tf > t->tfmax) {
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
            if (ts[k]->tfmax > 1) { /* its second gain: sift up */
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

static float gate_fill(norm_gate *g, uint8_t nb, float th)
{
    norm_lims *n = g->nl;
    double b = norm_suf(n, g->ts, nb)[0];
    float c = norm_chain(n, nb, 0, 0.0f); /* exact, once per norm */
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

/* The chain bound of norm byte nb (norm_chain over every term). */
static float chain_at(norm_gate *g, unsigned nb)
{
    (void)norm_suf(g->nl, g->ts, (uint8_t)nb);
    return norm_chain(g->nl, (uint8_t)nb, 0, 0.0f);
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
 * norm_essential would otherwise have filled (norm_suf, norm_chain).
 */
static void norm_cut(norm_gate *g, float th)
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
static size_t norm_split(norm_gate *g, float th)
{
    norm_lims *n = g->nl;
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
            v = gate_fill(g, (uint8_t)nb, th);
        if (v <= th)
            continue;
        if (g->ek[nb] <= e)
            continue; /* its split is at or below e already */
        const double *suf = norm_suf(n, g->ts, (uint8_t)nb);
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
                !(chain_doubt(suf[k - 1], nt - k + 1, th) &&
                  norm_chain(n, (uint8_t)nb, k - 1, 0.0f) <= th))
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

/* norm_split at th, kept from the last call at the same k-th score (a
 * MaxScore pass asks twice per window, and th seldom moves). */
static inline size_t norm_essential(norm_gate *g, float th)
{
    return g->eth == th ? g->e : norm_split(g, th);
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
                term_seek(t, d);
            if (t->b.doc == d) {
                hits++;
                cs[i] += term_score_fast(t, t->tfs[t->i], norms ? norms[d] : 1);
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
            term_seek(t, d);
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
            cs[mi[q]] += term_score_fast(t, tfs[pj], norms ? norms[pd[pj]] : 1);
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
 * of one key (val_key) have the same terms, frequencies and norm, and
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

/* Doc d's key (val_cols), or FDS_SIDX_NO_ORD: none. */
static inline uint32_t val_key(const val_cols *c, uint32_t d)
{
    uint32_t o = c->kf ? fds__col_ord(c->kf, d) : FDS_SIDX_NO_ORD;
    if (o != FDS_SIDX_NO_ORD || !c->vf)
        return o;
    uint32_t v = fds__val_id(c->vf, d);
    return v == FDS_SIDX_NO_ORD ? v : c->kn + v;
}

typedef struct ord_memo {
    bool on;               /* false: no memo */
    val_cols vc;           /* the keys */
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

static void memo_free(ord_memo *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* The columns whose keys decide the score of a doc over the terms
 * ts[0..nt) of segment si (val_cols), into *c; false when there are none:
 * the terms must share one text field's norms, single-valued in the
 * segment. */
static bool value_cols(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                       val_cols *c)
{
    *c = (val_cols){0};
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
 * there (value_cols).  Off when not, or out of memory (the pass runs
 * without it). */
static void memo_init(ord_memo *m, fds__exec *x, unsigned si, fds__term_it **ts,
                      size_t nt, win_scratch *ws)
{
    memset(m, 0, sizeof *m);
    val_cols vc;
    if (!value_cols(x, si, ts, nt, &vc))
        return;
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
    float ub = term_ub(t); /* fills tfmax */
    if (!t->tf1_all)
        tf1_fill(t);
    tf_need nd = {.th = NAN};
    const uint8_t *norms = t->norms;
    uint32_t b = t->blk, j = t->i; /* the cursor's block is decoded */
    for (uint32_t seen = 0; b < t->t.nblocks; b++, j = 0, seen++) {
        if (b != t->blk && skip_last(t, b - 1) + 1 >= end)
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
        if (b != t->blk && decode_block(t, b))
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
            float s = score_tf1(t, t->tfs[j], norms ? norms[d] : 1);
            scored++;
            offer(hp, si, d, s, &th);
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

/*
 * MaxScore pass (Turtle & Flood, "Query evaluation: strategies and
 * optimizations", IP&M 1995; as Lucene 9's MaxScoreBulkScorer does it, with
 * window-local bounds from the block impacts).  Per window of docs from
 * `from` (MAXSCORE_FIRST_WINDOW, doubling up to TAAT_WINDOW, and on up to
 * MAXSCORE_WINDOW_MAX while the window bounds lower no split): each term's
 * bound over the window comes from its skip data (for the terms the norms
 * already make non-essential, its bound over the segment); the longest
 * tail ts[e..] of terms whose bounds sum to no more than the k-th score are
 * "non-essential" -- a doc matching only those cannot enter the page.  The
 * essential terms ts[0..e) are scored term at a time into the accumulator
 * (their union is the candidate set).  The live candidates then take the
 * non-essential terms one at a time, in order, as a list in doc order (as
 * MaxScoreBulkScorer.scoreNonEssentialClauses does since Lucene 9.10):
 * before term k the list drops every doc whose partial score plus the
 * bounds of ts[k..] cannot beat the k-th score -- the window bounds, the
 * per-norm bounds of norm_lims and the token budget of the doc's length
 * (budget_row) -- and the survivors are merged with term k's postings.  A window with no essential term is skipped without
 * decoding a block; its hits are offered at its end.  The terms
 * essential by the norms alone (norm_essential) do not depend on the
 * window: the next window starts at the first of their next postings, so
 * that the windows follow a url's rare terms, not the doc space.
 * Scores are summed in the order of `ts` whatever the split, the same
 * floats as run_taat's.  Docs [from, to) only; with `sh`, the k-th score
 * is the better of the page's and the other slice's (slice_theta).  0 or
 * FDS_ENOMEM.
 */
int fds__run_maxscore(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                      fds__heap *hp, uint32_t from, uint32_t to,
                      fds__slice_th *sh, int me)
{
    if (nt == 1)
        return run_one_term(x, si, ts[0], hp, from, to, sh, me);
    const fds_search_segment *sg = &x->segs[si];
    uint32_t max_doc = to < ts[0]->max_doc ? to : ts[0]->max_doc;
    /* the window's bitset and accumulators (0 between windows) and its
     * candidate lists */
    win_scratch *ws = win_get();
    float *wub = malloc(nt * sizeof *wub);
    /* suf[k]: sum wub[k..]; then gsuf[k]: the same sum of the segment
     * bounds, which is suf's tail past the norm split in every window */
    double *suf = malloc(2 * (nt + 1) * sizeof *suf), *gsuf = suf + nt + 1;
    norm_lims nl = {0};
    norm_gate gate = {.nl = &nl, .ts = ts, .eth = NAN, .cut = 256};
    for (int i = 0; i < 256; i++)
        gate.val[i] = NAN;
    int rc = norm_lims_init(&nl, ts, nt);
    ord_memo memo = {0};
    if (!rc && ws && nl.norms)
        memo_init(&memo, x, si, ts, nt, ws);
    if (!ws || !wub || !suf || rc) {
        memo_free(&memo);
        win_put(ws);
        free(wub);
        free(suf);
        norm_lims_free(&nl);
        return FDS_ENOMEM;
    }
    uint64_t *seen = ws->seen;
    float *acc = ws->acc, *cs = ws->cs;
    uint16_t *cw = ws->cw;
    uint8_t *cn = ws->cn;
    /* tokens of each doc's terms so far: window accumulator, candidates */
    uint32_t *tok = ws->tok, *ct = ws->ct;
    gsuf[nt] = 0;
    for (size_t k = nt; k-- > 0;)
        gsuf[k] = gsuf[k + 1] + term_ub(ts[k]);
    /* the window's bound of ts[k..]: its own terms' up to the norm split
     * en, the segment's past it */
#define WSUF(k) ((k) < en ? suf[k] : gsuf[k])
    double gsum = NAN; /* sum of the terms' bounds over the whole segment */
    uint32_t win = MAXSCORE_FIRST_WINDOW, win_cap = TAAT_WINDOW;
    for (uint32_t lo = from; lo < max_doc;) {
        if (fds__past_deadline(x))
            break;
        float th0 = slice_theta(hp, sh, me);
        if (th0 > -INFINITY) {
            if (isnan(gsum)) {
                gsum = 0;
                for (size_t k = 0; k < nt; k++)
                    gsum += term_ub(ts[k]);
            }
            if (gsum * BOUND_SLACK(nt - 1) <= (double)th0)
                break; /* the page is final: nothing left can beat it */
        }
        size_t en = nt; /* the terms essential by the norms alone */
        if (nl.norms && th0 > -INFINITY) {
            /* a doc before the next posting of every term essential by
             * the norms cannot enter the page, whatever the window */
            en = norm_essential(&gate, th0);
            uint32_t nx = FDS__NO_MORE;
            for (size_t k = 0; k < en; k++) {
                if (ts[k]->b.doc < lo)
                    ts[k]->b.advance(&ts[k]->b, lo);
                if (ts[k]->b.doc < nx)
                    nx = ts[k]->b.doc;
            }
            if (nx >= max_doc)
                break;
            if (nx > lo)
                lo = nx;
        }
        uint32_t hi = max_doc - lo > win ? lo + win : max_doc;
        if (win < win_cap)
            win *= 2;
        else if (win > win_cap)
            win = win_cap;
        /* only the terms essential by the norms make candidates: the
         * others' cursors (probed, not walked) neither bound the window
         * nor tell whether it has any */
        uint32_t first = FDS__NO_MORE;
        for (size_t k = 0; k < en; k++) {
            /* past the norm split, the segment's bound (gsuf): reading
             * every term's skip data per window cost more than its bounds
             * saved */
            wub[k] = term_window_bound(ts[k], lo, hi);
            if (ts[k]->b.doc < first)
                first = ts[k]->b.doc;
        }
        if (first >= hi) { /* nothing here: jump to the next posting */
            if (first >= max_doc)
                break;
            lo = first;
            continue;
        }
        /* suf[k] for k < en; gsuf[k] past it (WSUF) */
        suf[en] = gsuf[en];
        for (size_t k = en; k-- > 0;)
            suf[k] = suf[k + 1] + wub[k];
        float th = slice_theta(hp, sh, me);
        /* ts[e..] non-essential; ts[en..] are at the window's start k-th
         * score already, and so at th >= it */
        size_t e = en;
        /* a doc matching only ts[e-1..] sums nt - e + 1 terms */
        while (e > 0 && suf[e - 1] * BOUND_SLACK(nt - e) <= (double)th)
            e--;
        /* wide windows only while their bounds do not matter */
        win_cap = e < en ? TAAT_WINDOW : MAXSCORE_WINDOW_MAX;
        if (nl.norms && e > 0) {
            size_t en = norm_essential(&gate, th);
            if (en < e)
                e = en;
        }
        if (e == 0) { /* no doc of the window can enter the page */
            lo = hi;
            continue;
        }
        gate.th = th;
        gate.keys = memo.on ? &memo.vc : NULL;
        /* one essential term: its hopeless blocks make no candidates */
        lead_prune lp;
        /* one essential term: its postings are the candidates, listed in
         * doc order straight into cw, cs, ct (no bitset, no walk) */
        cand_list lead = {cw, cs, ct, 0};
        if (e == 1)
            lp = (lead_prune){WSUF(1), BOUND_SLACK(nt - 1), th};
        for (size_t k = 0; k < e; k++) {
            fds__term_it *t = ts[k];
            if (t->b.doc < lo)
                t->b.advance(&t->b, lo);
            taat_term(x, t, k, lo, hi, seen, acc, nl.bud ? tok : NULL, true,
                      e == 1 ? &lp : NULL, nl.norms ? &gate : NULL,
                      e == 1 ? &lead : NULL);
        }
        uint32_t wi = SEEN_START, w;
        uint64_t m = 0;
        size_t n = 0, li = 0;
        float sc;
        uint32_t tk = 0;
        memo.nr = 0;
        if (memo.on && memo.reads >= ORD_MEMO_TRIAL &&
            memo.hits < ORD_MEMO_MIN_HITS(memo.reads))
            memo.on = false; /* not worth its reads: off from this window */
        /* the live candidates in doc order, from the lead's list (read at
         * li >= n: kept ones are written back at n) or the bitset's walk */
        for (;;) {
            if (e == 1) {
                if (li == lead.n)
                    break;
                w = cw[li];
                sc = cs[li];
                tk = ct[li++];
                if (!fds__is_live(sg, lo + w))
                    continue;
            } else if (!next_live_tok(seen, &wi, &m, sg, lo, acc,
                                      nl.bud ? tok : NULL, &w, &sc, &tk)) {
                break;
            }
            if (memo.on) {
                uint32_t o = val_key(&memo.vc, lo + w);
                const float *v =
                    o == FDS_SIDX_NO_ORD ? NULL : memo_get(&memo, o);
                memo.reads++;
                if (v) { /* decided by a doc of the same value */
                    memo.hits++;
                    if (*v > th) {
                        memo.rw[memo.nr] = (uint16_t)w;
                        memo.rs[memo.nr++] = *v;
                    }
                    continue;
                }
                memo.co[n] = o;
            }
            cw[n] = (uint16_t)w;
            cs[n] = sc;
            ct[n] = tk;
            if (nl.norms)
                norm_fill(&nl, ts, cn[n] = nl.norms[lo + w], th);
            n++;
        }
        uint64_t scored = 0;
        for (size_t k = e; k < nt && n; k++) {
            size_t kept = 0;
            double lk = probe_limit(WSUF(k), k, nt, th);
            double slack = BOUND_SLACK(nt - k);
            const double *ln = nl.norms ? nl.lim + k * 256 : NULL;
            for (size_t i = 0; i < n; i++) {
                double sc = cs[i];
                bool out = sc <= lk || (ln && sc <= ln[cn[i]]);
                const double *br = out || !nl.bud ? NULL
                                 : nl.bud[cn[i]] ? nl.bud[cn[i]]
                                                 : budget_row(&nl, ts, cn[i]);
                if (br) { /* the tokens the doc has left for ts[k..] */
                    uint32_t len = nl.maxlen[cn[i]];
                    uint32_t r = len - ct[i]; /* ct <= the doc's length */
                    out = r < nl.rcap &&
                          (sc + br[k * nl.bw[cn[i]] + r]) * slack <= (double)th;
                }
                if (!out && ln &&
                    chain_doubt(sc + norm_suf(&nl, ts, cn[i])[k], nt - k, th))
                    out = norm_chain(&nl, cn[i], k, cs[i]) <= th;
                if (out) { /* and so is every doc of its value */
                    if (memo.on)
                        memo_put(&memo, memo.co[i], -INFINITY);
                    continue;
                }
                if (memo.on)
                    memo.co[kept] = memo.co[i];
                cw[kept] = cw[i];
                cn[kept] = cn[i];
                ct[kept] = ct[i];
                cs[kept++] = cs[i];
            }
            n = kept;
            scored += probe_term(ts[k], lo, hi, cw, cs, nl.bud ? ct : NULL, n);
        }
        x->scored += scored;
        if (memo.on) { /* survivors are scored in full */
            for (size_t i = 0; i < n; i++)
                memo_put(&memo, memo.co[i], cs[i]);
        }
        /* offered in doc order: the survivors and the docs the memo let in */
        for (size_t i = 0, r = 0; i < n || r < memo.nr;) {
            if (r < memo.nr && (i >= n || memo.rw[r] < cw[i])) {
                offer(hp, si, lo + memo.rw[r], memo.rs[r], &th);
                r++;
            } else {
                offer(hp, si, lo + cw[i], cs[i], &th);
                i++;
            }
        }
        slice_publish(hp, sh, me);
        lo = hi;
    }
#undef WSUF
    memo_free(&memo);
    win_put(ws);
    free(wub);
    free(suf);
    norm_lims_free(&nl);
    return 0;
}

double fds__sum_gain(const fds__cnode *c)
{
    return (double)c->weight / (double)(c->n ? c->n : 1);
}

void fds__sort_by_gain(void *v, size_t n, size_t size,
                       const fds__cnode *(*node)(const void *))
{
    char *a = v, tmp[FDS__GAIN_ELEM_MAX];
    for (size_t i = 1; i < n; i++) {
        memcpy(tmp, a + i * size, size);
        double g = fds__sum_gain(node(tmp));
        size_t j = i;
        while (j > 0 && fds__sum_gain(node(a + (j - 1) * size)) < g)
            j--;
        if (j < i) {
            memmove(a + (j + 1) * size, a + j * size, (i - j) * size);
            memcpy(a + j * size, tmp, size);
        }
    }
}

static const fds__cnode *term_node(const void *e)
{
    return (*(fds__term_it *const *)e)->b.c;
}

void fds__order_terms(fds__term_it **ts, size_t nt)
{
    fds__sort_by_gain(ts, nt, sizeof *ts, term_node);
}

bool fds__should_by_gain(const fds__cnode *c)
{
    const fds_query *q = c->q;
    if (q->type != FDS_Q_BOOL)
        return false;
    for (size_t i = 0; i < q->nshould; i++) {
        const fds__cnode *k = c->kids[q->nmust + i];
        if (!k->dup && k->q->type != FDS_Q_TERM)
            return false;
    }
    return true;
}

static const fds__cnode *it_node(const void *e) { return (*(fds__it *const *)e)->c; }

/* A bool's should iterators in its summation order (fds__should_by_gain):
 * the order of fds__order_terms, so that the doc-at-a-time path
 * (bool_score) adds a doc's term scores as the MaxScore passes do. */
static void order_should(bool_it *b)
{
    fds__sort_by_gain(b->should, b->nshould, sizeof *b->should, it_node);
}

uint64_t fds__now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

bool fds__past_deadline(fds__exec *x)
{
    if (!x->deadline_ns || x->timed_out)
        return x->timed_out;
    x->timed_out = fds__now_ns() > x->deadline_ns;
    return x->timed_out;
}

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
 *   2. live docs of one value are one group (value_cols: same terms, same
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
 * same floats in the same order as run_taat and run_maxscore); so k live
 * docs score at least the k-th best s, the page's k-th score is >= s, and
 * a doc scoring below s cannot enter the page (one that ties s still may,
 * by its doc id: hence the float below).  Only for pages of at most
 * SEED_MAX_K hits and terms of finite, non-negative weights.  Costs at most
 * SEED_MAX_POSTINGS postings and SEED_MAX_SEEKS seeks; leaves every term
 * rewound (term_rewind) for the caller to advance from doc 0.  True
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
 * terms' scores added as floats in the order of ts, the sum run_taat and
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
            s += term_score_fast(t, t->tfs[t->i], t->norms ? t->norms[d] : 1);
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
    val_cols vc;
    bool keyed = value_cols(x, si, ts, nt, &vc);
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
            s += term_score_fast(t, t->tfs[t->i], t->norms ? t->norms[d] : 1);
            scored++;
            fds__term_adv(&t->b, d + 1);
        }
        if (!fds__is_live(sg, d))
            continue;
        uint32_t o = keyed ? val_key(&vc, d) : FDS_SIDX_NO_ORD;
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
        term_rewind(ts[sel[j]]);
    for (size_t k = 0; k < nt && full; k++)
        ts[k]->b.advance(&ts[k]->b, 0);
    for (size_t i = 0; i < ng && full; i++)
        g[i].s = score_in_full(x, ts, nt, g[i].doc);
    /* 4 */
    double top[SEED_MAX_K]; /* floats, exactly */
    size_t nh = 0, cap = hp->cap;
    for (size_t i = 0; i < ng; i++)
        for (uint32_t c = 0; c < g[i].n && c < cap; c++)
            (void)keep_largest(top, &nh, cap, g[i].s);
    if (nh == cap) {
        raise_floor(hp, (float)top[0]);
        all = full;
    }
out:
    for (size_t k = 0; k < nt; k++)
        term_rewind(ts[k]); /* the caller advances it from doc 0 */
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
 *      (val_cols: a doc of a value scored before scores the same);
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
        term_rewind(c[j]);
    if (nd < hp->cap)
        return false;
    /* 2: a doc of a value scored before scores as it did (the value
     * memo's reasoning: the same tokens, the same norm), so each value is
     * scored once -- the docs are mostly copies of the url searched */
    double top[SEED_MAX_K], sc[SEED_MAX_K]; /* floats, exactly */
    uint32_t key[SEED_MAX_K];
    size_t nh = 0;
    val_cols vc;
    bool keyed = value_cols(x, si, ts, nt, &vc);
    for (size_t k = 0; k < nt; k++)
        ts[k]->b.advance(&ts[k]->b, 0);
    for (size_t i = 0; i < nd; i++) {
        key[i] = keyed ? val_key(&vc, docs[i]) : FDS_SIDX_NO_ORD;
        size_t j = 0;
        while (j < i && (key[i] == FDS_SIDX_NO_ORD || key[j] != key[i]))
            j++;
        sc[i] = j < i ? sc[j] : score_in_full(x, ts, nt, docs[i]);
        (void)keep_largest(top, &nh, hp->cap, sc[i]);
    }
    for (size_t k = 0; k < nt; k++)
        term_rewind(ts[k]); /* the caller advances it from doc 0 */
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

/* Up to cap docs of value id v of text field vf (val_cols.vf), from the
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
    term_rewind(r);
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
 * when the field has value ids (val_cols.vf), the text's id is looked up
 * in the value table and its docs read off the rarest term's postings
 * (long_value_docs); 6 of the pool's 7 urls past 256 bytes find k docs.
 * Leaves every term rewound.  True when the floor was set.
 */
static bool exact_seed(fds__exec *x, unsigned si, fds__term_it **ts, size_t nt,
                       fds__heap *hp)
{
    const fds_query *q = x->req->query;
    val_cols vc;
    if (!q || q->type != FDS_Q_BOOL || !q->text || !q->nshould ||
        q->nmust || !seed_fits(ts, nt, hp) || !ts[0]->norms)
        return false;
    const fds_query *t0 = ts[0]->b.c->q, *s0 = q->should[0];
    if (t0->field_len != s0->field_len ||
        memcmp(t0->field, s0->field, t0->field_len) ||
        !value_cols(x, si, ts, nt, &vc))
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
        term_rewind(ts[k]); /* the caller advances it from doc 0 */
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
    uint32_t next = counting ? run_taat(x, si, ts, nt, hp, count, limit)
                    : warm   ? run_taat(x, si, ts, nt, hp, &hits, warm)
                             : 0;
    return hp->cap ? next : FDS__NO_MORE;
}

void fds__cnode_fill(fds__cnode *c)
{
    for (unsigned nb = 0; nb < 256; nb++)
        (void)fds__term_score_tf(c, 1, (uint8_t)nb);
}
