/*
 * tasks.h: background tasks (Elasticsearch's task management API), which
 * run the by-query jobs of by_query.h (internal to src/http; tasks.c).
 */
#ifndef FDS_TASKS_H
#define FDS_TASKS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "by_query_scan.h"
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

#endif
