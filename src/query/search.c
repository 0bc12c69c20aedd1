/*
 * search.c: fds_search_execute() -- the driver of one search: the run
 * over the segments (exec/run.c) opened with the compiled query, the
 * aggregations' collector (src/query/aggs) handed to it, then the page's
 * explanations and named queries (src/query/fetch); and the lifetime of
 * a result.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggs/aggs_collector.h"
#include "exec/collector.h"
#include "exec/run.h"
#include "exec/search_int.h"

static int execute(const fds_search_request *req,
                   const fds_search_segment *segs, unsigned nseg,
                   fds_search_result *out, fds_err *err)
{
    memset(out, 0, sizeof *out);
    out->max_score = NAN;
    fds__run r;
    int rc = fds__run_open(&r, req, segs, nseg, err);
    if (rc)
        return rc;
    fds__collector *ag = NULL;
    rc = req->aggs ? fds__aggs_collector_new(&r.x, req->aggs, r.root, err, &ag)
                   : 0;
    if (!rc)
        rc = fds__run_segments(&r, ag, err);
    if (!rc && ag)
        rc = fds__collector_finish(ag, out);
    fds__collector_free(ag);
    fds__heap *hp = &r.hp;
    if (!rc) /* best first, for explain, named queries and the page */
        fds__run_sort_page(&r);
    if (!rc && req->explain && hp->n > req->from) {
        size_t ne = hp->n - req->from;
        out->explain = calloc(ne, sizeof *out->explain);
        rc = out->explain ? fds__explain_hits(&r.x, r.root, hp->h + req->from,
                                              ne, out->explain)
                          : FDS_ENOMEM;
    }
    if (!rc && fds__query_named(req->query) && hp->n > req->from) {
        size_t nm = hp->n - req->from;
        out->matched = calloc(nm, sizeof *out->matched);
        rc = out->matched ? fds__named_hits(&r.x, r.root, hp->h + req->from,
                                            nm, out->matched)
                          : FDS_ENOMEM;
    }
    fds__run_close(&r);
    if (rc) {
        fds_agg_result_free(out->aggs);
        out->aggs = NULL;
        fds__explain_free(out->explain,
                          hp->n > req->from ? hp->n - req->from : 0);
        out->explain = NULL;
        fds_matched_free(out->matched, hp->n > req->from ? hp->n - req->from : 0);
        out->matched = NULL;
        free(hp->h);
        if (rc == FDS_ENOMEM)
            fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
        return rc;
    }
    fds__run_finish(&r, out);
    return 0;
}

int fds_search_execute(const fds_search_request *req,
                       const fds_search_segment *segs, unsigned nseg,
                       fds_search_result *out, fds_err *err)
{
    fds__run_enter();
    int rc = execute(req, segs, nseg, out, err);
    fds__run_leave();
    return rc;
}

void fds_search_result_free(fds_search_result *r)
{
    if (!r)
        return;
    fds__explain_free(r->explain, r->nhits);
    fds_matched_free(r->matched, r->nhits);
    free(r->hits);
    fds_agg_result_free(r->aggs);
    r->aggs = NULL;
    r->hits = NULL;
    r->explain = NULL;
    r->matched = NULL;
    r->nhits = 0;
}
