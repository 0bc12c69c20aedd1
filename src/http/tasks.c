/*
 * tasks.c: background tasks and Elasticsearch's task management API
 * (`GET /_tasks`, `GET /_tasks/{id}`, `POST /_tasks/{id}/_cancel`).
 *
 * A request with wait_for_completion=false (`_reindex`, `_delete_by_query`,
 * `_update_by_query`) becomes a task: its work runs on a thread of its own
 * while the server goes on answering, and its id ("node:number") finds its
 * progress (the status object the work updates after each batch) and, once
 * done, its answer.  The work is a sequence of ordinary bulk writes, each
 * durable when it returns, so a crash mid-task loses nothing acknowledged;
 * only the task record itself is in memory (Elasticsearch persists results
 * in its .tasks index; here the last FDS_TASKS_DONE_MAX finished tasks are
 * kept until restart).
 */
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fds_clock.h"
#include "handlers.h"
#include "node.h"
#include "tasks.h"

struct fds__task {
    uint64_t no;
    char action[64];
    char *description;
    int64_t start_ms;      /* wall clock, for start_time_in_millis */
    uint64_t start_ns;     /* monotonic, for running_time_in_nanos */
    uint64_t run_ns;       /* when done: how long it ran */
    fds__task_fn fn;
    void *arg;
    void (*arg_free)(void *);
    cJSON *status;         /* under T.mu */
    cJSON *response;       /* when done */
    int resp_status;
    bool done;
    fds_scan_control ctl;  /* its cancel flag (atomic) and progress */
    struct fds__task *next; /* the table: newest first */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a task finished */
    fds__task *list;
    uint64_t next_no;
    unsigned running, done;
    bool stopping;
} T = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void task_free(fds__task *t)
{
    cJSON_Delete(t->status);
    cJSON_Delete(t->response);
    free(t->description);
    free(t);
}

int fds__tasks_start(fds_store *store)
{
    (void)store;
    pthread_mutex_lock(&T.mu);
    T.stopping = false;
    pthread_mutex_unlock(&T.mu);
    return 0;
}

void fds__tasks_stop(void)
{
    pthread_mutex_lock(&T.mu);
    T.stopping = true;
    for (fds__task *t = T.list; t; t = t->next)
        atomic_store(&t->ctl.cancelled, true);
    while (T.running)
        pthread_cond_wait(&T.cv, &T.mu);
    fds__task *all = T.list;
    T.list = NULL;
    T.done = 0;
    pthread_mutex_unlock(&T.mu);
    while (all) { /* every thread is past its last use of its task */
        fds__task *n = all->next;
        task_free(all);
        all = n;
    }
}

/* Keep at most FDS_TASKS_DONE_MAX finished tasks (T.mu held): the oldest
 * is unlinked and returned to be freed. */
static fds__task *trim_locked(void)
{
    if (T.done <= FDS_TASKS_DONE_MAX)
        return NULL;
    fds__task **last = NULL;
    for (fds__task **p = &T.list; *p; p = &(*p)->next)
        if ((*p)->done)
            last = p;
    fds__task *t = *last;
    *last = t->next;
    T.done--;
    return t;
}

static void *task_main(void *arg)
{
    fds__task *t = arg;
    int status = 200;
    cJSON *resp = t->fn(t->arg, t, &status);
    if (t->arg_free)
        t->arg_free(t->arg);
    pthread_mutex_lock(&T.mu);
    t->response = resp;
    t->resp_status = status;
    t->run_ns = fds_mono_ns() - t->start_ns;
    t->done = true;
    T.running--;
    T.done++;
    fds__task *old = trim_locked();
    pthread_cond_broadcast(&T.cv);
    pthread_mutex_unlock(&T.mu); /* t is not touched after this */
    if (old)
        task_free(old);
    return NULL;
}

int fds__task_spawn(const char *action, const char *description,
                    fds__task_fn fn, void *arg, void (*arg_free)(void *),
                    char *id, size_t cap)
{
    fds__task *t = calloc(1, sizeof *t);
    if (t)
        t->description = strdup(description);
    if (!t || !t->description) {
        if (t)
            free(t);
        arg_free(arg);
        return FDS_ENOMEM;
    }
    atomic_init(&t->ctl.cancelled, false);
    snprintf(t->action, sizeof t->action, "%s", action);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    t->start_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    t->start_ns = fds_mono_ns();
    t->fn = fn;
    t->arg = arg;
    t->arg_free = arg_free;
    pthread_mutex_lock(&T.mu);
    if (T.running >= FDS_TASKS_RUNNING_MAX || T.stopping) {
        pthread_mutex_unlock(&T.mu);
        task_free(t);
        arg_free(arg);
        return FDS_ETOOBIG;
    }
    t->no = ++T.next_no;
    snprintf(id, cap, "%s:%llu", FDS__NODE_ID, (unsigned long long)t->no);
    T.running++;
    t->next = T.list;
    T.list = t;
    /* detached: nothing joins it; its end, under the lock, is the last
     * use of its task (fds__tasks_stop waits for it) */
    pthread_t th;
    pthread_attr_t attr;
    int prc = pthread_attr_init(&attr);
    if (!prc) {
        prc = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (!prc)
            prc = pthread_create(&th, &attr, task_main, t);
        pthread_attr_destroy(&attr);
    }
    if (prc) {
        T.list = t->next;
        T.running--;
        pthread_mutex_unlock(&T.mu);
        task_free(t);
        arg_free(arg);
        return FDS_ENOMEM;
    }
    pthread_mutex_unlock(&T.mu);
    return 0;
}

void fds__task_status(fds__task *t, cJSON *status)
{
    if (!t) {
        cJSON_Delete(status);
        return;
    }
    pthread_mutex_lock(&T.mu);
    cJSON_Delete(t->status);
    t->status = status;
    pthread_mutex_unlock(&T.mu);
}

fds_scan_control *fds__task_control(fds__task *t)
{
    return t ? &t->ctl : NULL;
}

/* ---- the API ---------------------------------------------------------------------- */

/* A task as TaskInfo prints it (T.mu held); status and description only
 * when `detailed`. */
static cJSON *task_info(const fds__task *t, bool detailed)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "node", FDS__NODE_ID);
    cJSON_AddNumberToObject(j, "id", (double)t->no);
    cJSON_AddStringToObject(j, "type", "transport");
    cJSON_AddStringToObject(j, "action", t->action);
    if (detailed && t->status)
        cJSON_AddItemToObject(j, "status", cJSON_Duplicate(t->status, 1));
    if (detailed)
        cJSON_AddStringToObject(j, "description", t->description);
    cJSON_AddNumberToObject(j, "start_time_in_millis", (double)t->start_ms);
    cJSON_AddNumberToObject(j, "running_time_in_nanos",
                            (double)(t->done ? t->run_ns : fds_mono_ns() - t->start_ns));
    cJSON_AddBoolToObject(j, "cancellable", 1);
    cJSON_AddBoolToObject(j, "cancelled", atomic_load(&t->ctl.cancelled));
    cJSON_AddObjectToObject(j, "headers");
    return j;
}

/* The task numbered by `id` ("node:number"): 0 and *no, or an answer in
 * `o` and -1 (malformed: 400; another node: 404). */
static int task_no(const char *id, uint64_t *no, fds_resp *o)
{
    const char *colon = strrchr(id, ':');
    char *end;
    unsigned long long v = colon ? strtoull(colon + 1, &end, 10) : 0;
    if (!colon || colon == id || !colon[1] || *end) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "malformed task id %s", id);
        return -1;
    }
    if ((size_t)(colon - id) != strlen(FDS__NODE_ID) ||
        memcmp(id, FDS__NODE_ID, strlen(FDS__NODE_ID))) {
        fds__resp_errorf(o, 404, "resource_not_found_exception",
                        "task [%s] belongs to the node [%.*s] which isn't part "
                        "of the cluster and there is no record of the task",
                        id, (int)(colon - id), id);
        return -1;
    }
    *no = v;
    return 0;
}

static fds__task *find_locked(uint64_t no)
{
    for (fds__task *t = T.list; t; t = t->next)
        if (t->no == no)
            return t;
    return NULL;
}

static const char *const TASK_GET_PARAMS[] = {"wait_for_completion", "timeout", NULL};

/* A timeout parameter in milliseconds ("30s", "500ms", "1m"), `dflt` when
 * absent or unreadable. */
static int64_t timeout_ms(const char *v, int64_t dflt)
{
    if (!v)
        return dflt;
    char *end;
    double x = strtod(v, &end);
    if (end == v || x < 0)
        return dflt;
    double mul = !strcmp(end, "ms") ? 1 : !strcmp(end, "s") ? 1e3
               : !strcmp(end, "m") ? 6e4 : !strcmp(end, "h") ? 3.6e6 : -1;
    return mul < 0 ? dflt : (int64_t)(x * mul);
}

void fds__h_task_get(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, TASK_GET_PARAMS))
        return;
    uint64_t no;
    if (task_no(r->seg[1], &no, o))
        return;
    bool wait = fds__req_param_bool(r, "wait_for_completion", false);
    int64_t ms = timeout_ms(fds__req_param(r, "timeout"), FDS_TASKS_WAIT_DEFAULT_MS);
    struct timespec until;
    fds_abstime_in_ms(&until, ms);
    pthread_mutex_lock(&T.mu);
    fds__task *t = find_locked(no);
    int rc = 0;
    while (t && wait && !t->done && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&T.cv, &T.mu, &until);
        t = find_locked(no); /* still listed (trimmed only once done) */
    }
    if (!t) {
        pthread_mutex_unlock(&T.mu);
        return fds__resp_errorf(o, 404, "resource_not_found_exception",
                               "task [%s] isn't running and hasn't stored its "
                               "results", r->seg[1]);
    }
    if (wait && !t->done) {
        pthread_mutex_unlock(&T.mu);
        return fds__resp_errorf(o, 408, "timeout_exception",
                               "Timed out waiting for completion of task [%s]",
                               r->seg[1]);
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "completed", t->done);
    cJSON_AddItemToObject(j, "task", task_info(t, true));
    if (t->done && t->resp_status < 300)
        cJSON_AddItemToObject(j, "response", cJSON_Duplicate(t->response, 1));
    else if (t->done) { /* a failed task stores its error */
        const cJSON *err = cJSON_GetObjectItem(t->response, "error");
        cJSON_AddItemToObject(j, "error", cJSON_Duplicate(err ? err : t->response, 1));
    }
    pthread_mutex_unlock(&T.mu);
    fds__resp_json(o, 200, j);
}

static const char *const TASK_LIST_PARAMS[] = {
    "actions", "detailed", "nodes", "parent_task_id", "group_by",
    "wait_for_completion", "timeout", NULL};

/* Does `action` match one of the comma-separated patterns of `list`? */
static bool action_match(const char *list, const char *action)
{
    if (!list || !*list)
        return true;
    char *copy = strdup(list), *save = NULL;
    bool m = false;
    for (char *p = copy ? strtok_r(copy, ",", &save) : NULL; p && !m;
         p = strtok_r(NULL, ",", &save))
        m = fnmatch(p, action, 0) == 0;
    free(copy);
    return m;
}

void fds__h_tasks_list(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, TASK_LIST_PARAMS))
        return;
    const char *actions = fds__req_param(r, "actions");
    bool detailed = fds__req_param_bool(r, "detailed", false);
    const char *gb = fds__req_param(r, "group_by");
    bool flat = gb && (!strcmp(gb, "none") || !strcmp(gb, "parents"));
    cJSON *j = cJSON_CreateObject();
    cJSON *tasks;
    if (flat) {
        tasks = cJSON_AddObjectToObject(j, "tasks");
    } else {
        cJSON *node = cJSON_AddObjectToObject(cJSON_AddObjectToObject(j, "nodes"),
                                              FDS__NODE_ID);
        cJSON_AddStringToObject(node, "name", FDS__NODE_ID);
        cJSON_AddStringToObject(node, "transport_address", "127.0.0.1:9300");
        cJSON_AddStringToObject(node, "host", "127.0.0.1");
        cJSON_AddStringToObject(node, "ip", "127.0.0.1:9300");
        cJSON_AddItemToObject(node, "roles", cJSON_CreateArray());
        tasks = cJSON_AddObjectToObject(node, "tasks");
    }
    pthread_mutex_lock(&T.mu);
    for (fds__task *t = T.list; t; t = t->next) {
        if (t->done || !action_match(actions, t->action))
            continue;
        char id[64];
        snprintf(id, sizeof id, "%s:%llu", FDS__NODE_ID, (unsigned long long)t->no);
        cJSON_AddItemToObject(tasks, id, task_info(t, detailed));
    }
    pthread_mutex_unlock(&T.mu);
    fds__resp_json(o, 200, j);
}

void fds__h_task_cancel(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {"actions", "nodes", "parent_task_id",
                                         "wait_for_completion", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    uint64_t no;
    if (task_no(r->seg[1], &no, o))
        return;
    pthread_mutex_lock(&T.mu);
    fds__task *t = find_locked(no);
    if (!t || t->done) {
        pthread_mutex_unlock(&T.mu);
        return fds__resp_errorf(o, 404, "resource_not_found_exception",
                               "task [%s] is not running", r->seg[1]);
    }
    atomic_store(&t->ctl.cancelled, true);
    cJSON *j = cJSON_CreateObject();
    cJSON *node = cJSON_AddObjectToObject(cJSON_AddObjectToObject(j, "nodes"),
                                          FDS__NODE_ID);
    cJSON_AddStringToObject(node, "name", FDS__NODE_ID);
    cJSON_AddItemToObject(cJSON_AddObjectToObject(node, "tasks"), r->seg[1],
                          task_info(t, false));
    pthread_mutex_unlock(&T.mu);
    fds__resp_json(o, 200, j);
}
