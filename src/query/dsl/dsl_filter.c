/*
 * dsl_filter.c: a filter clause added to a parsed search -- the filter of
 * an Elasticsearch filtered alias, which a search through the alias ANDs
 * with its own query without scoring it (AliasFilter: the request's query
 * becomes bool {must: query, filter: alias filter}) -- and the boost
 * indices_boost gives a whole index (a BoostQuery around the query).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_parse_int.h"
#include "ast/search_request.h"

/* `filter` (a query DSL object, `len` bytes) parsed against `m` as the
 * query of a `_count` body.  0 or fds_search_parse's errors. */
static int filter_parse(const char *filter, size_t len, const fds_mapping *m,
                        fds_query **out, fds_err *err)
{
    static const char pre[] = "{\"query\":", post[] = "}";
    size_t n = sizeof pre - 1 + len + sizeof post - 1;
    char *body = malloc(n + 1);
    if (!body)
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    memcpy(body, pre, sizeof pre - 1);
    memcpy(body + sizeof pre - 1, filter, len);
    memcpy(body + sizeof pre - 1 + len, post, sizeof post);
    fds_search_request *r = NULL;
    int rc = fds_search_parse(body, n, m, 1, &r, err);
    free(body);
    if (rc)
        return rc;
    *out = r->query;
    r->query = NULL;
    fds_search_request_free(r);
    return 0;
}

int fds_query_check(const char *filter, size_t len, const fds_mapping *m,
                    fds_err *err)
{
    fds_query *q = NULL;
    int rc = filter_parse(filter, len, m, &q, err);
    fds__query_free(q);
    return rc;
}

int fds_search_request_add_filter(fds_search_request *req, const char *filter,
                                  size_t len, fds_err *err)
{
    fds_query *f = NULL;
    int rc = filter_parse(filter, len, req->mapping, &f, err);
    if (rc)
        return rc;
    fds_query *b = fds__dsl_qnew(FDS_Q_BOOL, NULL);
    if (!b || fds__dsl_push(&b->filter, &b->nfilter, f)) {
        fds__query_free(b);
        fds__query_free(f);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    if (req->query && fds__dsl_push(&b->must, &b->nmust, req->query)) {
        fds__query_free(b);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    req->query = b;
    return 0;
}

int fds_search_request_boost(fds_search_request *req, float factor,
                             fds_err *err)
{
    if (!req->query && !(req->query = fds__dsl_qnew(FDS_Q_MATCH_ALL, NULL)))
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    req->query->boost *= factor;
    return 0;
}
