/*
 * compile.c: a query compiled for one search -- collection statistics and
 * BM25 weights summed over every segment, the boosts the ancestors pass
 * down, should clauses on one term merged, and the queries that expand
 * into others before they run (fuzzy here, match_phrase_prefix in
 * search_phrase.c).  It exists apart from the iterators because it runs
 * once per search, over all segments, and never touches a posting.
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
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/search_int.h"
#include "index/term_pat.h"

static float bm25_idf(uint64_t N, uint64_t n)
{
    return (float)log(1.0 + ((double)N - (double)n + 0.5) / ((double)n + 0.5));
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
        uint32_t ord = pbytes ? fds__ord_lower_bound(f, q->term, pbytes) : 0;
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

void fds__cnode_fill(fds__cnode *c)
{
    for (unsigned nb = 0; nb < 256; nb++)
        (void)fds__term_score_tf(c, 1, (uint8_t)nb);
}
