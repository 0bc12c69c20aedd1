/*
 * search_explain.c: why a hit scored what it did, as an fds_explanation
 * tree in the shape of Lucene's Explanation (and Elasticsearch's
 * `_explanation`): a bool sums its scoring clauses, a term shows BM25's
 * boost, idf and tf with their inputs, constant-score queries their boost.
 * Each hit is explained by running its query again on its one doc.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_numfmt.h"
#include "index/postings.h"
#include "exec/search_int.h"
#include "index/term_pat.h"

/* ---- explanations (Lucene/Elasticsearch "explain" shape) ----------------- */

static fds_explanation *ex_node(float v, const char *desc)
{
    fds_explanation *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->value = v;
    if (!(o->description = strdup(desc))) {
        free(o);
        return NULL;
    }
    return o;
}

/* Append `kid` to parent's details; frees `kid` when it cannot. */
static void ex_add(fds_explanation *parent, fds_explanation *kid)
{
    if (!parent || !kid) {
        fds_explanation_free(kid);
        return;
    }
    fds_explanation **nd = realloc(parent->details,
                                   (parent->ndetails + 1) * sizeof *nd);
    if (!nd) {
        fds_explanation_free(kid);
        return;
    }
    parent->details = nd;
    nd[parent->ndetails++] = kid;
}

void fds_explanation_free(fds_explanation *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->ndetails; i++)
        fds_explanation_free(e->details[i]);
    free(e->details);
    free(e->description);
    free(e);
}

static const char *qname(const fds_query *q, char *buf, size_t cap)
{
    switch (q->type) {
    case FDS_Q_MATCH_ALL: return "*:*";
    case FDS_Q_RANGE:
        snprintf(buf, cap, "%.*s:[range]", (int)q->field_len, q->field);
        return buf;
    case FDS_Q_EXISTS:
        snprintf(buf, cap, "FieldExistsQuery [field=%.*s]", (int)q->field_len,
                 q->field);
        return buf;
    case FDS_Q_TERMS:
        snprintf(buf, cap, "%.*s:(terms)", (int)q->field_len, q->field);
        return buf;
    case FDS_Q_IDS: return "_id:(ids)";
    case FDS_Q_PATTERN:
        snprintf(buf, cap, "%.*s:%s(%.*s)", (int)q->field_len, q->field,
                 q->pkind == FDS_PAT_PREFIX ? "prefix"
                 : q->pkind == FDS_PAT_WILDCARD ? "wildcard" : "regexp",
                 (int)q->term_len, q->term);
        return buf;
    case FDS_Q_PHRASE: {
        size_t o = (size_t)snprintf(buf, cap, "%.*s:\"", (int)q->field_len,
                                    q->field);
        for (size_t i = 0; i < q->nvals && o < cap; i++)
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? " " : "",
                                  q->vals[i]);
        if (o < cap && q->slop)
            o += (size_t)snprintf(buf + o, cap - o, "\"~%d", q->slop);
        else if (o < cap)
            snprintf(buf + o, cap - o, "\"");
        return buf;
    }
    case FDS_Q_CONST: return "ConstantScore";
    case FDS_Q_BOOSTING: return "boosting";
    default: return "query";
    }
}

/* BM25's tf node for frequency `freq` ("freq, occurrences of term within
 * document", or a phrase's `what`) at norm byte nb. */
static fds_explanation *tf_node(const fds__cnode *c, float freq, uint8_t nb,
                                const char *what)
{
    float tfv = freq / (freq + FDS_BM25_K1 *
                                   (1 - FDS_BM25_B + FDS_BM25_B *
                                    (float)fds__norm_decode(nb) / c->avgdl));
    fds_explanation *tfn = ex_node(tfv, "tf, computed as freq / (freq + k1 * (1 - "
                                        "b + b * dl / avgdl)) from:");
    ex_add(tfn, ex_node(freq, what));
    ex_add(tfn, ex_node(FDS_BM25_K1, "k1, term saturation parameter"));
    ex_add(tfn, ex_node(FDS_BM25_B, "b, length normalization parameter"));
    ex_add(tfn, ex_node((float)fds__norm_decode(nb), "dl, length of field"));
    ex_add(tfn, ex_node(c->avgdl, "avgdl, average length of field"));
    return tfn;
}

/* A phrase's explanation at doc d (its iterator i is on d), as Lucene's
 * PhraseWeight explains: boost, "idf, sum of:" the terms' idfs, tf of the
 * phrase frequency. */
static fds_explanation *explain_phrase(fds__exec *x, const fds__cnode *c, fds__it *i,
                                       unsigned si, uint32_t d, const char *name)
{
    const fds_query *q = c->q;
    const fds_sidx *sx = x->segs[si].sidx;
    const fds_sfield *f = fds__sidx_field(sx, q->field, q->field_len);
    uint8_t nb = f && f->norms ? f->norms[d] : 1;
    float sc = i->score(i), freq = fds__phrase_freq(i);
    char buf[512];
    snprintf(buf, sizeof buf, "weight(%s in %u) [PerFieldSimilarity], result of:",
             name, d);
    fds_explanation *o = ex_node(sc, buf);
    snprintf(buf, sizeof buf, "score(freq=%g), computed as boost * idf * tf from:",
             (double)freq);
    fds_explanation *s2 = ex_node(sc, buf);
    ex_add(s2, ex_node(fds__bm25_boost(c->boost), "boost"));
    fds_explanation *idf = ex_node(c->idf, "idf, sum of:");
    for (size_t k = 0; k < q->nvals; k++) {
        uint64_t n = 0;
        for (unsigned s = 0; s < x->nseg; s++) {
            const fds_sfield *g = fds__sidx_field(x->segs[s].sidx, q->field, q->field_len);
            fds_sterm t;
            if (g && fds__sidx_term(x->segs[s].sidx, g, q->vals[k], q->val_lens[k], &t) == 0)
                n += t.df;
        }
        if (!n)
            continue;
        float v = (float)log(1.0 + ((double)c->N - (double)n + 0.5) / ((double)n + 0.5));
        snprintf(buf, sizeof buf, "idf(%s), computed as log(1 + (N - n + 0.5) / "
                 "(n + 0.5)) from:", q->vals[k]);
        fds_explanation *e = ex_node(v, buf);
        ex_add(e, ex_node((float)n, "n, number of documents containing term"));
        ex_add(e, ex_node((float)c->N, "N, total number of documents with field"));
        ex_add(idf, e);
    }
    ex_add(s2, idf);
    ex_add(s2, tf_node(c, freq, nb, "phraseFreq=sum of 1 / (1 + matchLength) over "
                                    "the matches"));
    ex_add(o, s2);
    return o;
}

/* A matching should clause's score and its clause. */
typedef struct should_val {
    float v;
    const fds__cnode *c;
} should_val;

static const fds__cnode *should_node(const void *e)
{
    return ((const should_val *)e)->c;
}

static fds_explanation *explain_node(fds__exec *x, const fds__cnode *c,
                                     unsigned si, uint32_t d);

/* Explanation of bool node c (Lucene's BooleanWeight: the sum of the
 * matching scoring clauses); NULL if it does not match. */
static fds_explanation *explain_bool(fds__exec *x, const fds__cnode *c,
                                     unsigned si, uint32_t d)
{
    const fds_query *q = c->q;
    size_t counts[4] = {q->nmust, q->nshould, q->nfilter, q->nmust_not};
    fds_explanation *o = ex_node(0, "sum of:");
    float sum = 0;
    /* should clauses summed by gain (fds__should_by_gain): their
     * values, added after the must clauses as bool_score does */
    bool gain = fds__should_by_gain(c);
    should_val *sv = gain && q->nshould ? malloc(q->nshould * sizeof *sv)
                                        : NULL;
    size_t nsv = 0;
    if (gain && q->nshould && !sv) {
        fds_explanation_free(o);
        return NULL;
    }
    size_t k = 0;
    int nshould = 0;
    bool ok = true;
    for (int l = 0; l < 4; l++)
        for (size_t i = 0; i < counts[l]; i++, k++) {
            if (c->kids[k]->dup) /* counted in the first equal term */
                continue;
            fds_explanation *e = explain_node(x, c->kids[k], si, d);
            if (l == 3) {
                if (e)
                    ok = false;
                fds_explanation_free(e);
                continue;
            }
            if (!e) {
                if (l != 1)
                    ok = false;
                continue;
            }
            if (l == 1) {
                nshould++;
                if (gain) { /* summed below, in bool_score's order */
                    sv[nsv++] = (should_val){e->value, c->kids[k]};
                    ex_add(o, e);
                    continue;
                }
            }
            if (l == 2) {
                fds_explanation *f =
                    ex_node(0, "match on required clause, product of:");
                ex_add(f, ex_node(0, "# clause"));
                ex_add(f, e);
                ex_add(o, f);
                continue;
            }
            sum += e->value;
            ex_add(o, e);
        }
    int msm = q->msm >= 0 ? q->msm
                          : (q->nshould && !q->nmust && !q->nfilter) ? 1 : 0;
    if (!ok || nshould < msm || !o) {
        free(sv);
        fds_explanation_free(o);
        return NULL;
    }
    fds__sort_by_gain(sv, nsv, sizeof *sv, should_node);
    for (size_t i = 0; i < nsv; i++)
        sum += sv[i].v;
    free(sv);
    o->value = sum; /* the clauses carry the bool's boost */
    return o;
}

/* Explanation of dis_max node c (Lucene's DisjunctionMaxWeight); NULL if
 * it does not match. */
static fds_explanation *explain_dismax(fds__exec *x, const fds__cnode *c,
                                       unsigned si, uint32_t d)
{
    const fds_query *q = c->q;
    char buf[512];
    char t[FDS_FLOAT_STR_MAX];
    fds_float_format(q->tie, t);
    snprintf(buf, sizeof buf, q->tie != 0.0f
                 ? "max plus %s times others of:" : "max of:", t);
    fds_explanation *o = ex_node(0, buf);
    float best = 0;
    double other = 0;
    bool any = false;
    for (size_t k = 0; o && k < q->nshould; k++) {
        fds_explanation *e = explain_node(x, c->kids[q->nmust + k], si, d);
        if (!e)
            continue;
        any = true;
        fds__dismax_add(&best, &other, e->value);
        ex_add(o, e);
    }
    if (!o || !any) {
        fds_explanation_free(o);
        return NULL;
    }
    o->value = fds__dismax_value(best, other, q->tie);
    return o;
}

/* Explanation of the BM25 score of term iterator i on doc d (Lucene's
 * BM25Similarity explain). */
static fds_explanation *explain_term(const fds__cnode *c, fds__it *i,
                                     uint32_t d)
{
    const fds_query *q = c->q;
    char buf[512];
    fds__term_it *t = (fds__term_it *)i;
    uint32_t tf = t->tfs[t->i];
    uint8_t nb = t->norms ? t->norms[d] : 1;
    float sc = fds__term_score_tf(c, tf, nb);
    snprintf(buf, sizeof buf, "weight(%.*s:%.*s in %u) "
             "[PerFieldSimilarity], result of:", (int)q->field_len,
             q->field, (int)q->term_len, q->term, d);
    fds_explanation *o = ex_node(sc, buf);
    snprintf(buf, sizeof buf, "score(freq=%u.0), computed as boost * "
             "idf * tf from:", tf);
    fds_explanation *s2 = ex_node(sc, buf);
    ex_add(s2, ex_node(fds__bm25_boost(c->boost), "boost"));
    fds_explanation *idf = ex_node(c->idf, "idf, computed as log(1 + (N - n + "
                                 "0.5) / (n + 0.5)) from:");
    ex_add(idf, ex_node((float)c->n, "n, number of documents containing term"));
    ex_add(idf, ex_node((float)c->N, "N, total number of documents with field"));
    ex_add(s2, idf);
    ex_add(s2, tf_node(c, (float)tf, nb,
                       "freq, occurrences of term within document"));
    ex_add(o, s2);
    return o;
}

/* Explanation of `c` for doc `d` of segment si; NULL if it does not match. */
static fds_explanation *explain_node(fds__exec *x, const fds__cnode *c, unsigned si,
                                     uint32_t d)
{
    const fds_sidx *sx = x->segs[si].sidx;
    const fds_query *q = c->q;
    char buf[512];
    if (q->type == FDS_Q_BOOL && !q->nmust && !q->nshould && !q->nfilter &&
        !q->nmust_not) /* bool {}: match_all, as Elasticsearch rewrites it */
        return ex_node(c->boost, "*:*");
    if (q->type == FDS_Q_BOOL)
        return explain_bool(x, c, si, d);
    if (q->type == FDS_Q_DISMAX)
        return explain_dismax(x, c, si, d);
    fds__it *i = fds__build(x, c, sx);
    if (!i)
        return NULL;
    uint32_t got = i->advance(i, d);
    fds_explanation *o = NULL;
    if (got == d) {
        if (q->type == FDS_Q_TERM && i->advance == fds__term_adv) {
            o = explain_term(c, i, d);
        } else if (q->type == FDS_Q_PHRASE && i->advance == fds__phrase_adv) {
            o = explain_phrase(x, c, i, si, d, qname(q, buf, sizeof buf));
        } else {
            o = ex_node(i->score(i), qname(q, buf, sizeof buf));
        }
    }
    fds__it_free(i);
    return o;
}

/* One explanation per hit into out[0..n-1]; 0 or FDS_ENOMEM. */
int fds__explain_hits(fds__exec *x, const fds__cnode *root, const fds_hit *h,
                        size_t n, fds_explanation **out)
{
    uint64_t scored = x->scored, tp = x->total_postings;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = explain_node(x, root, h[i].seg, h[i].doc);
        if (!out[i])
            out[i] = ex_node(0, "no matching term");
        if (!out[i])
            rc = FDS_ENOMEM;
    }
    x->scored = scored;
    x->total_postings = tp;
    return rc;
}

void fds__explain_free(fds_explanation **e, size_t n)
{
    for (size_t i = 0; e && i < n; i++)
        fds_explanation_free(e[i]);
    free(e);
}
