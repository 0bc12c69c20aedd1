/*
 * ast.c: the lifetime of the parsed search (ast/search_request.h): a query
 * node with the DSL's defaults, and the destructors of the query tree, of
 * the highlight tree (ast/highlight_tree.h) and of a whole request with
 * its aggregation, highlight, sort and `_source` parts.  The parsers
 * (src/query/dsl) build these trees, the executor (src/query/exec) and the
 * fetch phase read them; neither owns this code.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ast/ast_int.h"
#include "ast/agg_tree.h"
#include "index/term_pat.h"
#include "ast/highlight_tree.h"

fds_query *fds__query_new(int type)
{
    fds_query *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->type = type;
    q->boost = 1.0f;
    q->msm = -1;
    q->lo_l = INT64_MIN;
    q->hi_l = INT64_MAX;
    q->lo_d = -INFINITY;
    q->hi_d = INFINITY;
    q->lo_d_incl = q->hi_d_incl = true;
    return q;
}

void fds__query_free(fds_query *q)
{
    if (!q)
        return;
    free(q->field);
    free(q->name);
    free(q->term);
    free(q->text);
    for (size_t i = 0; i < q->nvals; i++)
        free(q->vals[i]);
    free(q->vals);
    free(q->val_lens);
    free(q->lo_s);
    free(q->hi_s);
    fds__term_pat_free(q->pat);
    fds_query **lists[4] = {q->must, q->should, q->filter, q->must_not};
    size_t counts[4] = {q->nmust, q->nshould, q->nfilter, q->nmust_not};
    for (int l = 0; l < 4; l++) {
        for (size_t i = 0; i < counts[l]; i++)
            fds__query_free(lists[l][i]);
        free(lists[l]);
    }
    free(q);
}

void fds_highlight_free(fds_highlight *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->nf; i++) {
        free(h->f[i].path);
        free(h->f[i].src_path);
        free(h->f[i].pre);
        free(h->f[i].post);
        fds__query_free(h->f[i].hq);
    }
    free(h->f);
    fds__query_free(h->hq);
    free(h);
}

void fds_search_request_free(fds_search_request *r)
{
    if (!r)
        return;
    fds__query_free(r->query);
    fds_agg_free(r->aggs);
    fds_highlight_free(r->hl);
    for (unsigned k = 0; k < r->nsort; k++) {
        free(r->sort[k].field);
        free(r->sort[k].format);
    }
    for (unsigned k = 0; k < r->nafter; k++)
        free(r->after[k].str);
    for (size_t i = 0; i < r->nincludes; i++)
        free(r->includes[i]);
    for (size_t i = 0; i < r->nexcludes; i++)
        free(r->excludes[i]);
    free(r->includes);
    free(r->excludes);
    for (size_t i = 0; i < r->ndv; i++) {
        free(r->dv[i].name);
        free(r->dv[i].src);
        free(r->dv[i].format);
    }
    free(r->dv);
    free(r);
}

void fds_agg_free(fds_agg *a)
{
    if (!a)
        return;
    free(a->name);
    free(a->field);
    free(a->missing_s);
    for (size_t i = 0; i < a->nincl; i++)
        free(a->incl[i]);
    for (size_t i = 0; i < a->nexcl; i++)
        free(a->excl[i]);
    free(a->incl);
    free(a->excl);
    free(a->incl_len);
    free(a->excl_len);
    free(a->incl_d);
    free(a->excl_d);
    for (size_t i = 0; i < a->nranges; i++)
        free(a->ranges[i].key);
    free(a->ranges);
    for (size_t i = 0; i < a->nfilters; i++) {
        fds__query_free(a->filters[i]);
        if (a->filter_keys)
            free(a->filter_keys[i]);
    }
    free(a->filters);
    free(a->filter_keys);
    free(a->other_key);
    free(a->pcts);
    for (size_t i = 0; i < a->nsrcs; i++) {
        fds_agg_free(a->srcs[i]);
        if (a->after)
            free(a->after[i].s);
    }
    free(a->srcs);
    free(a->after);
    fds_search_request_free(a->th);
    free(a->bp);
    for (size_t i = 0; i < a->nmetrics; i++)
        free(a->metrics[i]);
    free(a->metrics);
    for (size_t i = 0; i < a->nsubs; i++)
        fds_agg_free(a->subs[i]);
    free(a->subs);
    free(a);
}
