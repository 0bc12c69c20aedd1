/*
 * search_named.c: named queries -- the `_name`s of the query's nodes that a
 * hit matches, Elasticsearch's `matched_queries` (MatchedQueriesPhase).
 * Each named node is run again on the hit's one doc, as explanations are.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/search_int.h"

bool fds__query_named(const fds_query *q)
{
    if (!q)
        return false;
    if (q->name)
        return true;
    fds_query *const *lists[4] = {q->must, q->should, q->filter, q->must_not};
    size_t counts[4] = {q->nmust, q->nshould, q->nfilter, q->nmust_not};
    for (int l = 0; l < 4; l++)
        for (size_t i = 0; i < counts[l]; i++)
            if (fds__query_named(lists[l][i]))
                return true;
    return false;
}

/* Append `name` with its query's score to m, unless it is there already
 * (a name given twice is listed once, its first query's score: names are
 * keys in Elasticsearch).  0 or FDS_ENOMEM. */
static int add_name(fds_matched *m, const char *name, float score)
{
    for (size_t k = 0; k < m->n; k++)
        if (!strcmp(m->names[k], name))
            return 0;
    char **nn = realloc(m->names, (m->n + 1) * sizeof *nn);
    if (!nn)
        return FDS_ENOMEM;
    m->names = nn;
    float *ns = realloc(m->scores, (m->n + 1) * sizeof *ns);
    if (!ns)
        return FDS_ENOMEM;
    m->scores = ns;
    if (!(nn[m->n] = strdup(name)))
        return FDS_ENOMEM;
    ns[m->n++] = score;
    return 0;
}

/* The names under c (pre-order, c first) that doc d of segment si
 * matches, into m.  0 or FDS_ENOMEM. */
static int walk(fds__exec *x, const fds__cnode *c, unsigned si, uint32_t d,
                fds_matched *m)
{
    if (c->q->name) {
        fds__it *i = fds__build(x, c, x->segs[si].sidx);
        if (!i)
            return FDS_ENOMEM;
        bool hit = i->advance(i, d) == d;
        float score = hit ? i->score(i) : 0;
        fds__it_free(i);
        if (hit && add_name(m, c->q->name, score))
            return FDS_ENOMEM;
    }
    for (size_t k = 0; k < c->nkids; k++) {
        int rc = walk(x, c->kids[k], si, d, m);
        if (rc)
            return rc;
    }
    return 0;
}

int fds__named_hits(fds__exec *x, const fds__cnode *root, const fds_hit *h, size_t n,
                    fds_matched *out)
{
    uint64_t scored = x->scored, tp = x->total_postings;
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = walk(x, root, h[i].seg, h[i].doc, &out[i]);
    x->scored = scored;
    x->total_postings = tp;
    return rc;
}

void fds_matched_free(fds_matched *m, size_t n)
{
    for (size_t i = 0; m && i < n; i++) {
        for (size_t k = 0; k < m[i].n; k++)
            free(m[i].names[k]);
        free(m[i].names);
        free(m[i].scores);
    }
    free(m);
}
