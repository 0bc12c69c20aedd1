/*
 * by_query.c: the HTTP side of `_delete_by_query`, `_update_by_query` and
 * `_reindex` (Elasticsearch's BulkByScroll actions): the URL and body
 * parameters of a job, running it now or as a task, and its answer as
 * BulkByScrollResponse (and a task's status as BulkByScrollTask.Status).
 * The scan itself -- batches in _doc order, the writes with their version
 * checks, conflicts, throttling, slices and cancellation -- is the
 * engine's (src/search/by_query_scan.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "by_query.h"
#include "doc_source.h"
#include "handlers.h"
#include "http_error.h"
#include "req_index.h"
#include "search_ctx.h"

/* Documents read and written at a time (Elasticsearch's scroll_size
 * default) and at most (index.max_result_window). */
#define SCAN_BATCH 1000
#define SCAN_BATCH_MAX 10000

void fds__scan_job_free(void *job)
{
    fds__scan_job *j = job;
    if (!j)
        return;
    fds_index_release(j->from);
    fds_index_release(j->to);
    free(j->query);
    free(j->q);
    free(j->df);
    free(j->default_operator);
    free(j->routing);
    fds__source_spec_free(&j->filter);
    free(j);
}

static void put_counts(cJSON *j, const fds_scan_counts *c)
{
    cJSON_AddNumberToObject(j, "total", (double)c->total);
    cJSON_AddNumberToObject(j, "updated", (double)c->updated);
    cJSON_AddNumberToObject(j, "created", (double)c->created);
    cJSON_AddNumberToObject(j, "deleted", (double)c->deleted);
    cJSON_AddNumberToObject(j, "batches", (double)c->batches);
    cJSON_AddNumberToObject(j, "version_conflicts", (double)c->conflicts);
    cJSON_AddNumberToObject(j, "noops", 0);
    cJSON *rt = cJSON_AddObjectToObject(j, "retries");
    cJSON_AddNumberToObject(rt, "bulk", 0);
    cJSON_AddNumberToObject(rt, "search", 0);
    cJSON_AddNumberToObject(j, "throttled_millis", (double)c->throttled_ms);
    cJSON_AddNumberToObject(j, "requests_per_second", c->rps > 0 ? c->rps : -1);
    cJSON_AddNumberToObject(j, "throttled_until_millis", 0);
}

/* One failure of a write into ix, as BulkByScrollResponse lists it. */
static cJSON *failure_json(fds_index *ix, const fds_scan_failure *w)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "index", fds_index_name(ix));
    cJSON_AddStringToObject(f, "id", w->id);
    cJSON *cause = cJSON_AddObjectToObject(f, "cause");
    cJSON_AddStringToObject(cause, "type", fds__http_type(&w->err));
    cJSON_AddStringToObject(cause, "reason", w->err.reason);
    cJSON_AddStringToObject(cause, "index_uuid", fds_index_uuid(ix));
    cJSON_AddStringToObject(cause, "shard", "0"); /* one shard per index */
    cJSON_AddStringToObject(cause, "index", fds_index_name(ix));
    cJSON_AddNumberToObject(f, "status", w->err.kind ? fds__http_status(&w->err) : 400);
    return f;
}

/* A status object: the slices' counts sl[0..n) summed, each slice's with
 * more than one (BulkByScrollTask.Status with its "slices"). */
static cJSON *slices_status(const fds_scan_counts *sl, uint32_t n)
{
    fds_scan_counts sum;
    fds_scan_counts_sum(sl, n, &sum);
    cJSON *st = cJSON_CreateObject();
    put_counts(st, &sum);
    if (n > 1) {
        cJSON *arr = cJSON_AddArrayToObject(st, "slices");
        for (uint32_t i = 0; i < n; i++) {
            cJSON *one = cJSON_CreateObject();
            cJSON_AddNumberToObject(one, "slice_id", i);
            put_counts(one, &sl[i]);
            cJSON_AddItemToArray(arr, one);
        }
    }
    return st;
}

/* The scan's progress report: the task's status (arg: the task). */
static void task_progress(void *arg, const fds_scan_counts *slices, uint32_t n)
{
    fds__task_status(arg, slices_status(slices, n));
}

/* Reindex's source._source (arg: the job's filter). */
static void filter_source(void *arg, fds_strbuf *out, const uint8_t *src, size_t len)
{
    fds__source_spec_put(out, arg, src, len);
}

/* The engine's scan of job j. */
static fds_scan_spec scan_spec(fds__scan_job *j)
{
    return (fds_scan_spec){
        .mode = j->mode, .from = j->from, .to = j->to, .query = j->query, .q = j->q,
        .df = j->df, .default_operator = j->default_operator,
        .lookup = j->st ? fds__terms_lookup : NULL, .lookup_arg = j->st,
        .max_docs = j->max_docs, .batch = j->batch, .proceed = j->proceed,
        .refresh = j->refresh, .create = j->create, .external = j->external,
        .external_gte = j->external_gte, .routing = j->routing,
        .rewrite = j->filter.given ? filter_source : NULL, .rewrite_arg = &j->filter,
        .rps = j->rps, .slices = j->slices};
}

cJSON *fds__scan_run(fds__scan_job *j, fds__task *t, int *status, fds_err *e)
{
    *status = 200;
    fds_scan_control *ctl = fds__task_control(t);
    if (ctl) {
        ctl->progress = task_progress;
        ctl->progress_arg = t;
    }
    fds_scan_spec spec = scan_spec(j);
    fds_scan_result res;
    if (fds_scan_run(&spec, ctl, &res, e))
        return NULL;
    cJSON *out = slices_status(res.slices, res.nslices);
    cJSON_AddNumberToObject(out, "took", (double)res.took_ms);
    cJSON_AddBoolToObject(out, "timed_out", 0);
    if (res.cancelled)
        cJSON_AddStringToObject(out, "canceled", "by user request");
    cJSON *failures = cJSON_AddArrayToObject(out, "failures");
    fds_index *to = j->mode == FDS_SCAN_REINDEX ? j->to : j->from;
    for (size_t i = 0; i < res.nfailures; i++) {
        cJSON *f = failure_json(to, &res.failures[i]);
        cJSON_AddItemToArray(failures, f);
        int s = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(f, "status"));
        if (s > *status) /* the worst failure's status */
            *status = s;
    }
    fds_scan_result_free(&res);
    return out;
}

/* A job run as a task: its answer, or its error in Elasticsearch's shape. */
static cJSON *scan_task(void *arg, fds__task *t, int *status)
{
    fds_err e;
    fds_err_clear(&e);
    cJSON *out = fds__scan_run(arg, t, status, &e);
    if (out)
        return out;
    *status = fds__http_status(&e);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "error", fds__error_json(&e));
    cJSON_AddNumberToObject(j, "status", *status);
    return j;
}

double fds__scan_rps(fds_req *r)
{
    const char *rps = fds__req_param(r, "requests_per_second");
    double v = rps ? strtod(rps, NULL) : -1;
    return v > 0 ? v : 0;
}

bool fds__scan_params_ok(fds_req *r, fds_resp *o)
{
    const char *sl = fds__req_param(r, "slices");
    char *end = NULL;
    long n = sl ? strtol(sl, &end, 10) : 1;
    if (sl && strcmp(sl, "auto") && (!*sl || *end || n < 1)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[slices] must be a positive integer or the string \"auto\"");
        return false;
    }
    const char *rps = fds__req_param(r, "requests_per_second");
    double v = rps ? strtod(rps, &end) : -1;
    if (rps && (!*rps || *end || (v <= 0 && v != -1))) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[requests_per_second] must be a float greater than 0. Use -1 "
                        "to disable throttling.");
        return false;
    }
    return true;
}

/* The URL's slices for job j (checked by fds__scan_params_ok), as the
 * engine allows them (fds_scan_slices): false with a 400 in `o`. */
static bool scan_slices(fds_req *r, fds_resp *o, fds__scan_job *j)
{
    const char *sl = fds__req_param(r, "slices");
    fds_err e;
    fds_err_clear(&e);
    if (fds_scan_slices(j->from, sl && !strcmp(sl, "auto"), sl ? strtoul(sl, NULL, 10) : 1,
                        &j->slices, &e)) {
        fds__resp_error(o, &e);
        return false;
    }
    return true;
}

void fds__scan_answer(fds_req *r, fds_resp *o, fds__scan_job *j,
                      const char *action, const char *description)
{
    if (!scan_slices(r, o, j)) {
        fds__scan_job_free(j);
        return;
    }
    if (fds__req_param_bool(r, "wait_for_completion", true)) {
        fds_err e;
        fds_err_clear(&e);
        int status;
        cJSON *out = fds__scan_run(j, NULL, &status, &e);
        fds__scan_job_free(j);
        if (!out)
            return fds__resp_error(o, &e);
        return fds__resp_json(o, status, out);
    }
    char id[64];
    int rc = fds__task_spawn(action, description, scan_task, j, fds__scan_job_free,
                             id, sizeof id);
    if (rc == FDS_ETOOBIG)
        return fds__resp_errorf(o, 429, "rejected_execution_exception",
                               "[%d] tasks are running already; try again when "
                               "one is done", FDS_TASKS_RUNNING_MAX);
    if (rc)
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "task", id);
    fds__resp_json(o, 200, out);
}

/* ---- _delete_by_query and _update_by_query ------------------------------------------ */

static const char *const BY_QUERY_PARAMS[] = {
    "conflicts", "max_docs", "refresh", "scroll_size", "size", "slices",
    "wait_for_completion", "requests_per_second", "timeout", "scroll",
    "wait_for_active_shards", "q", "df", "default_operator", "analyzer",
    "lenient", "allow_no_indices", "ignore_unavailable", "expand_wildcards",
    "routing", "preference", "search_type", "search_timeout",
    "request_cache", "terminate_after", "version", "stats", "pipeline",
    NULL};

/* Body keys a by-query reads (Elasticsearch's own, less script and slice). */
static bool body_ok(const cJSON *body, bool del, fds_resp *o)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, body) {
        const char *k = it->string;
        if (!strcmp(k, "query") || !strcmp(k, "max_docs") || !strcmp(k, "conflicts"))
            continue;
        if (!strcmp(k, "script") && !del) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "[script] is not supported: fieldstore runs no "
                            "scripts; _update_by_query without one re-indexes "
                            "each document as it is");
            return false;
        }
        fds__resp_errorf(o, 400, "x_content_parse_exception",
                        "[%s] unknown field [%s]%s",
                        del ? "delete_by_query" : "update_by_query", k,
                        !strcmp(k, "slice") || !strcmp(k, "script")
                            ? ": not supported by fieldstore" : "");
        return false;
    }
    return true;
}

/* A non-negative integer: JSON number or URL text. */
static bool count_value(const cJSON *v, const char *s, uint64_t *out)
{
    if (v) {
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9e15 ||
            v->valuedouble != (double)(uint64_t)v->valuedouble)
            return false;
        *out = (uint64_t)v->valuedouble;
        return true;
    }
    if (!s)
        return true;
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-')
        return false;
    *out = x;
    return true;
}

void fds__h_by_query(fds_req *r, fds_resp *o, bool del)
{
    if (!fds__req_check_params(r, o, BY_QUERY_PARAMS))
        return;
    const char *name = del ? "delete_by_query" : "update_by_query";
    if (!fds__scan_params_ok(r, o))
        return;
    if (fds__req_param(r, "pipeline"))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "[pipeline] is not supported: fieldstore has no "
                               "ingest pipelines");
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_json(r, &body, &e) || fds_json_check_body(r->body, r->body_len, &e)) {
        cJSON_Delete(body);
        return fds__resp_error(o, &e);
    }
    if (body && !cJSON_IsObject(body)) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "parse_exception",
                               "request body must be a JSON object");
    }
    if (!body_ok(body, del, o)) {
        cJSON_Delete(body);
        return;
    }
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(body, "query");
    const char *uq = fds__req_param(r, "q");
    if (del && !q && !uq) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: query is missing;");
    }
    uint64_t max_docs = UINT64_MAX, batch = SCAN_BATCH;
    const char *ss = fds__req_param(r, "scroll_size");
    bool ok = count_value(cJSON_GetObjectItemCaseSensitive(body, "max_docs"), NULL,
                          &max_docs) &&
              count_value(NULL, fds__req_param(r, "max_docs"), &max_docs) &&
              count_value(NULL, fds__req_param(r, "size"), &max_docs) &&
              count_value(NULL, ss, &batch) && batch >= 1 && batch <= SCAN_BATCH_MAX;
    const cJSON *bc = cJSON_GetObjectItemCaseSensitive(body, "conflicts");
    const char *conf = fds__req_param(r, "conflicts");
    if (!conf && cJSON_IsString(bc))
        conf = bc->valuestring;
    if (!ok || (bc && !cJSON_IsString(bc)) ||
        (conf && strcmp(conf, "proceed") && strcmp(conf, "abort"))) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "_%s takes max_docs (a number), scroll_size (1 to "
                               "%d) and conflicts abort or proceed", name,
                               SCAN_BATCH_MAX);
    }
    fds__scan_job *j = calloc(1, sizeof *j);
    if (!j) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    *j = (fds__scan_job){.mode = del ? FDS_SCAN_DELETE : FDS_SCAN_UPDATE,
                         .max_docs = max_docs, .batch = (uint32_t)batch,
                         .proceed = conf && !strcmp(conf, "proceed"),
                         .rps = fds__scan_rps(r)};
    const char *df = fds__req_param(r, "df"), *op = fds__req_param(r, "default_operator");
    if ((uq && !(j->q = strdup(uq))) || (df && !(j->df = strdup(df))) ||
        (op && !(j->default_operator = strdup(op)))) {
        cJSON_Delete(body);
        fds__scan_job_free(j);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    const char *rf = fds__req_param(r, "refresh");
    j->refresh = rf && (!*rf || !strcmp(rf, "true") || !strcmp(rf, "wait_for"));
    if (q) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddItemReferenceToObject(w, "query", (cJSON *)q);
        j->query = cJSON_PrintUnformatted(w);
        cJSON_Delete(w);
    }
    cJSON_Delete(body);
    fds_index *ix = fds__req_index(r, o, 0);
    if (!ix) {
        fds__scan_job_free(j);
        return;
    }
    j->from = ix;
    j->st = r->store;
    char desc[FDS_REQ_PATH_MAX + 32];
    snprintf(desc, sizeof desc, "%s [%s]", del ? "delete-by-query" : "update-by-query",
             fds_index_name(ix));
    fds__scan_answer(r, o, j,
                     del ? "indices:data/write/delete/byquery"
                         : "indices:data/write/update/byquery", desc);
}
