/*
 * by_query.h: a `_delete_by_query`, `_update_by_query` or `_reindex` job
 * as src/http holds it -- the request's parts, run now or as a task, and
 * answered as Elasticsearch's BulkByScrollResponse; the scan itself is the
 * engine's (src/search/by_query_scan.h) (internal to src/http;
 * by_query.c).
 */
#ifndef FDS_BY_QUERY_H
#define FDS_BY_QUERY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "by_query_scan.h"
#include "doc_source.h"
#include "request.h"
#include "response.h"
#include "store.h"
#include "tasks.h"

/* One reindex, delete-by-query or update-by-query as the request gave it
 * (the strings and references it owns); fds__scan_run hands it to the
 * engine's scan (by_query_scan.h) and renders what that did. */
typedef struct fds__scan_job {
    fds_scan_mode mode;
    fds_index *from;   /* the index read (a reference, released by free) */
    fds_index *to;     /* reindex: the index written (the same) */
    fds_store *st;     /* the store (terms lookups of the query) */
    char *query;       /* {"query":...} search body (malloc'd), NULL = all */
    uint64_t max_docs; /* documents processed at most; UINT64_MAX = all */
    uint32_t batch;    /* documents read and written at a time */
    bool create;       /* reindex: dest.op_type create */
    bool proceed;      /* conflicts=proceed: count version conflicts, go on */
    bool refresh;      /* refresh the written index at the end */
    /* by-query: the URL's q, df and default_operator (malloc'd; NULL) */
    char *q, *df, *default_operator;
    /* reindex: dest.version_type external (the source's _version, which
     * must be above the destination's; external_gte: or equal to it); dest.routing "discard" or
     * "=value" (malloc'd; NULL: keep each document's); source._source
     * (the parts of each source copied; owned) */
    bool external, external_gte;
    char *routing;
    fds__source_spec filter;
    /* requests_per_second: documents a second at most (0: unthrottled) */
    double rps;
    /* slices run at once, each on its own thread: slice i takes the
     * source shards s with s % slices == i (0 or 1: one scan of all) */
    uint32_t slices;
} fds__scan_job;

/* Free a job (NULL is a no-op); also an fds__task_spawn arg_free. */
void fds__scan_job_free(void *job);
/* Run `j` (t: its task, or NULL inline): Elasticsearch's
 * BulkByScrollResponse as JSON (caller owns) with the HTTP status it
 * answers with (409 after a version conflict with conflicts=abort, as
 * Elasticsearch takes the worst failure's), or NULL with `e` filled. */
cJSON *fds__scan_run(fds__scan_job *j, fds__task *t, int *status, fds_err *e);
/* Answer a job: run it now (wait_for_completion, the default), or as a
 * task ({"task":"node:id"}) with wait_for_completion=false, in the URL's
 * `slices` (the counts summed, each slice's under "slices").  Takes `j`. */
void fds__scan_answer(fds_req *r, fds_resp *o, fds__scan_job *j,
                      const char *action, const char *description);

/* The URL's `slices` (a positive integer or auto; fds__scan_answer
 * refuses more than the source has shards) and `requests_per_second` (a float above 0, or
 * -1 for none), Elasticsearch's words for bad values: false with a 400 in
 * `o`.  fds__scan_rps: its value as documents a second, 0 for none. */
bool fds__scan_params_ok(fds_req *r, fds_resp *o);
double fds__scan_rps(fds_req *r);

#endif
