/*
 * tasks.h: background tasks (Elasticsearch's task management API) and the
 * by-query jobs they run -- `_delete_by_query`, `_update_by_query` and
 * `_reindex`, whose scan is the engine's (src/search/by_query_scan.h) --
 * (internal to src/http; tasks.c, by_query.c).
 */
#ifndef FDS_TASKS_H
#define FDS_TASKS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "by_query_scan.h"
#include "doc_source.h"
#include "request.h"
#include "response.h"
#include "store.h"

/* Tasks running at once; one more is refused with 429 (each is a thread). */
#define FDS_TASKS_RUNNING_MAX 64
/* Finished tasks whose results GET /_tasks/{id} still answers; the oldest
 * goes first (Elasticsearch keeps them in its .tasks index). */
#define FDS_TASKS_DONE_MAX 1024
/* GET /_tasks/{id}?wait_for_completion=true waits this long by default
 * (Elasticsearch's default timeout, 30s), milliseconds. */
#define FDS_TASKS_WAIT_DEFAULT_MS 30000

typedef struct fds__task fds__task;

/* A task's work, run on its own thread: returns the answer's JSON (owned
 * by the task from then on; NULL when out of memory).  *status is the HTTP
 * status the answer would have had. */
typedef cJSON *(*fds__task_fn)(void *arg, fds__task *t, int *status);

/* Start/stop the task table (fds_http_start, fds_http_stop).  Stopping
 * cancels running tasks and waits for them.  0 or FDS_ENOMEM. */
int fds__tasks_start(fds_store *store);
void fds__tasks_stop(void);

/* Run fn(arg) as a task of `action` ("indices:data/write/reindex") with
 * `description`; `arg_free(arg)` runs when it is done.  The task's id
 * ("node:number") goes to id[0..cap).  Returns 0, FDS_ETOOBIG (past
 * FDS_TASKS_RUNNING_MAX: then arg_free has run), FDS_ENOMEM (the same). */
int fds__task_spawn(const char *action, const char *description,
                    fds__task_fn fn, void *arg, void (*arg_free)(void *),
                    char *id, size_t cap);
/* The task's status object (owned by the task from then on), as GET
 * /_tasks shows it while it runs.  t NULL (a job run inline) is a no-op
 * that frees it. */
void fds__task_status(fds__task *t, cJSON *status);
/* The task's scan control (its cancel flag, set by POST
 * /_tasks/{id}/_cancel, and its progress report), owned by the task; NULL
 * for NULL (a job run inline). */
fds_scan_control *fds__task_control(fds__task *t);

/* The task handlers (GET /_tasks, GET /_tasks/{id}, POST
 * /_tasks/{id}/_cancel) are in handlers.h. */

/* ---- the by-query scan (by_query.c) ----------------------------------------- */

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
