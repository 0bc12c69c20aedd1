/*
 * search_ctx.c: the scroll and point-in-time endpoints -- `?scroll=` on a
 * search, GET|POST /_search/scroll, DELETE /_search/scroll, POST
 * /{index}/_pit, DELETE /_pit and a search body's `pit`.  This file parses
 * keep-alives and ids and answers; the contexts, their table and the
 * scroll's paging rules are src/search/search_contexts.c's, run through
 * search_api.c's search hooks.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_strbuf.h"
#include "handlers.h"
#include "index_expr.h"
#include "search_ctx.h"

int fds__ctx_start(void)
{
    return fds_search_ctx_start();
}

void fds__ctx_stop(void)
{
    fds_search_ctx_stop();
}

void fds__ctx_counts(unsigned *scrolls, unsigned *pits)
{
    fds_search_ctx_counts(scrolls, pits);
}

/* ---- time values -------------------------------------------------------------------- */

/* A keep-alive time value ("1m", "30s", "500ms", "1d") in milliseconds, or
 * an answer in `o` and false (unparsable, or past search.max_keep_alive,
 * in Elasticsearch's words). */
static bool keep_alive(const char *v, const char *name, int64_t *ms, fds_resp *o)
{
    static const struct { const char *unit; double ms; } units[] = {
        {"nanos", 1e-6}, {"micros", 1e-3}, {"ms", 1}, {"s", 1e3},
        {"m", 6e4}, {"h", 3.6e6}, {"d", 8.64e7}};
    char *end;
    double x = v && *v ? strtod(v, &end) : NAN;
    double got = NAN;
    for (size_t i = 0; !isnan(x) && x >= 0 && i < sizeof units / sizeof *units; i++)
        if (!strcmp(end, units[i].unit))
            got = x * units[i].ms;
    if (isnan(got)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "failed to parse setting [%s] with value [%s] as a time "
                        "value: unit is missing or unrecognized", name, v ? v : "");
        return false;
    }
    if (got > (double)FDS_MAX_KEEP_ALIVE_MS) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "Keep alive for request (%s) is too large. It must be "
                        "less than (1d). This limit can be set by changing the "
                        "[search.max_keep_alive] cluster level setting.", v);
        return false;
    }
    *ms = (int64_t)got;
    return true;
}

/* The listed context of `id` and `kind` with a reference for the caller,
 * or NULL with the answer in `o`: 400 `bad` when it is not an id, 404
 * search_context_missing_exception when unknown or expired. */
static fds_search_ctx *ctx_lookup(const char *id, int kind, const char *bad, fds_resp *o)
{
    bool malformed;
    fds_search_ctx *c = fds_search_ctx_find(id, kind, &malformed);
    if (!c && malformed)
        fds__resp_errorf(o, 400, "illegal_argument_exception", "%s", bad);
    else if (!c)
        fds__resp_errorf(o, 404, "search_context_missing_exception",
                        "No search context found for id [%s]", id);
    return c;
}

/* A search over context `c` (one request at a time) with hooks `hk`; its
 * keep-alive becomes `ms` when >= 0 and counts from the end of the
 * request.  Drops the caller's reference. */
static void ctx_search(fds_req *r, fds_resp *o, fds_search_ctx *c, int64_t ms,
                       const fds__search_hooks *hk)
{
    pthread_mutex_lock(&c->mu);
    if (ms >= 0)
        c->keep_alive_ms = ms;
    c->total_as_int = fds__req_param_bool(r, "rest_total_hits_as_int", false);
    fds_index **ixs = malloc((c->n ? c->n : 1) * sizeof *ixs);
    if (!ixs) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
    } else {
        for (size_t k = 0; k < c->n; k++)
            ixs[k] = c->sh[k].ix;
        fds__search_held(r, o, ixs, c->n, hk);
    }
    pthread_mutex_unlock(&c->mu);
    fds_search_ctx_touch(c);
    fds_search_ctx_unref(c);
}

bool fds__scroll_begin(fds_req *r, fds_resp *o, const char *keep, size_t n,
                       fds__search_hooks *hk)
{
    int64_t ms;
    if (!keep_alive(keep, "scroll", &ms, o))
        return false;
    bool full;
    fds_search_ctx *c = fds_search_ctx_new(FDS_CTX_SCROLL, n, ms, &full);
    if (full) {
        fds__resp_errorf(o, 429, "too_many_scroll_contexts_exception",
                        "Trying to create too many scroll contexts. Must be less "
                        "than or equal to: [%d]. This limit can be set by "
                        "changing the [search.max_open_scroll_context] setting.",
                        FDS_MAX_OPEN_SCROLL_CONTEXT);
        return false;
    }
    if (!c) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
        return false;
    }
    c->no_cache = fds__req_param_bool(r, "request_cache", false);
    *hk = (fds__search_hooks){.arg = c, .scroll = true, .prepare = fds_scroll_first,
                              .page = fds_scroll_page, .keep = fds_scroll_keep,
                              .id_key = "_scroll_id", .id = c->id};
    return true;
}

void fds__scroll_end(fds__search_hooks *hk, fds_resp *o)
{
    fds_search_ctx *c = hk->arg;
    if (o->status != 200) {
        fds_search_ctx_unref(c);
        return;
    }
    size_t m = 0; /* the shards that answered */
    for (size_t k = 0; k < c->n; k++)
        if (c->sh[k].ix)
            c->sh[m++] = c->sh[k];
    c->n = m;
    fds_search_ctx_list(c);
}

/* Body keys of a scroll request (RestSearchScrollAction). */
static const char *const SCROLL_PARAMS[] = {"scroll", "scroll_id",
                                            "rest_total_hits_as_int", NULL};

/* The body of a scroll or clear request, checked (*body: caller deletes),
 * and its scroll id: the body's when it has one (NULL when that is a list),
 * else the URL's (path segment 2 or ?scroll_id=) -- the body takes
 * precedence, as in RestSearchScrollAction.  False with a 400 in `o`. */
static bool scroll_args(fds_req *r, fds_resp *o, cJSON **body, const char **id)
{
    fds_err e;
    fds_err_clear(&e);
    *body = NULL;
    if (fds__body_json(r, body, &e)) {
        fds__resp_error(o, &e);
        return false;
    }
    if (*body && !cJSON_IsObject(*body)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "Malformed content, must start with an object");
        cJSON_Delete(*body);
        return false;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, *body) {
        bool known = !strcmp(it->string, "scroll_id") || !strcmp(it->string, "scroll");
        bool shape = cJSON_IsString(it) ||
                     (!strcmp(it->string, "scroll_id") && cJSON_IsArray(it));
        if (!known || !shape) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "Unknown parameter [%s] in request body or parameter "
                            "is of the wrong type[%s] ", it->string,
                            cJSON_IsString(it) ? "VALUE_STRING"
                            : cJSON_IsNumber(it) ? "VALUE_NUMBER"
                                                 : "START_OBJECT");
            cJSON_Delete(*body);
            return false;
        }
    }
    const cJSON *bid = cJSON_GetObjectItemCaseSensitive(*body, "scroll_id");
    *id = cJSON_IsString(bid) ? bid->valuestring
        : bid ? NULL
        : r->nseg == 3 ? r->seg[2] : fds__req_param(r, "scroll_id");
    return true;
}

void fds__h_scroll(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, SCROLL_PARAMS))
        return;
    cJSON *body;
    const char *id;
    if (!scroll_args(r, o, &body, &id))
        return;
    const cJSON *bk = cJSON_GetObjectItemCaseSensitive(body, "scroll");
    const char *keep = cJSON_IsString(bk) ? bk->valuestring : fds__req_param(r, "scroll");
    int64_t ms = -1;
    if (!id || !*id) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: scrollId is missing;");
    }
    if (keep && !keep_alive(keep, "scroll", &ms, o)) {
        cJSON_Delete(body);
        return;
    }
    fds_search_ctx *c = ctx_lookup(id, FDS_CTX_SCROLL, "Cannot parse scroll id", o);
    cJSON_Delete(body);
    if (c)
        ctx_search(r, o, c, ms, &(fds__search_hooks){
                       .arg = c, .req = fds_search_ctx_req, .view = fds_search_ctx_view,
                       .prepare = fds_scroll_next, .page = fds_scroll_page,
                       .id_key = "_scroll_id", .id = c->id});
}

/* {"succeeded":true,"num_freed":N}: 200, or 404 when nothing was freed
 * (ClearScrollResponse's status). */
static void freed_answer(fds_resp *o, unsigned freed)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "succeeded", 1);
    cJSON_AddNumberToObject(j, "num_freed", freed);
    fds__resp_json(o, freed ? 200 : 404, j);
}

/* Clear the ids of one comma-separated list `s` (modified); FDS_EPARSE
 * when one is not an id. */
static int clear_list(char *s, unsigned *freed)
{
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        int rc = fds_search_ctx_clear(tok, FDS_CTX_SCROLL);
        if (rc < 0)
            return FDS_EPARSE;
        *freed += (unsigned)rc;
    }
    return 0;
}

void fds__h_scroll_clear(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, SCROLL_PARAMS))
        return;
    cJSON *body;
    const char *ids; /* one id, a comma list or _all */
    if (!scroll_args(r, o, &body, &ids))
        return;
    unsigned freed = 0;
    int rc = 0;
    const cJSON *bid = cJSON_GetObjectItemCaseSensitive(body, "scroll_id");
    if (ids && !strcmp(ids, "_all")) {
        freed = fds_search_ctx_clear_all(FDS_CTX_SCROLL);
    } else if (ids) {
        char *copy = strdup(ids);
        rc = copy ? clear_list(copy, &freed) : FDS_ENOMEM;
        free(copy);
    } else if (cJSON_IsArray(bid)) {
        for (const cJSON *it = bid->child; it && !rc; it = it->next) {
            if (!cJSON_IsString(it)) {
                rc = FDS_EPARSE;
                break;
            }
            if (!strcmp(it->valuestring, "_all"))
                freed += fds_search_ctx_clear_all(FDS_CTX_SCROLL);
            else if ((rc = fds_search_ctx_clear(it->valuestring, FDS_CTX_SCROLL)) > 0)
                freed++, rc = 0;
            else if (rc < 0) /* not an id (fds_search_ctx_clear's -1) */
                rc = FDS_EPARSE;
        }
    } else {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: no scroll ids specified;");
    }
    cJSON_Delete(body);
    if (rc == FDS_EPARSE)
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "Cannot parse scroll id");
    if (rc < 0)
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    freed_answer(o, freed);
}

/* ---- point in time ------------------------------------------------------------------ */

static const char *const PIT_PARAMS[] = {"keep_alive", "ignore_unavailable",
                                         "expand_wildcards", "allow_no_indices",
                                         "preference", "routing",
                                         "allow_partial_search_results", NULL};

static const char *param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}

void fds__h_pit_open(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, PIT_PARAMS))
        return;
    const char *keep = fds__req_param(r, "keep_alive");
    if (!keep)
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: [keep_alive] is not specified;");
    int64_t ms;
    if (!keep_alive(keep, "keep_alive", &ms, o))
        return;
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = FDS_INDEX_EXPR_SEARCH_DEFAULTS;
    fds_index **ixs = NULL;
    size_t n = 0;
    if (fds_index_expr_opts_read(param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, r->seg[0], &opts, &ixs, &n, &e))
        return fds__resp_error(o, &e);
    bool full;
    fds_search_ctx *c = fds_search_ctx_new(FDS_CTX_PIT, n, ms, &full);
    int rc = c ? 0 : FDS_ENOMEM;
    if (rc)
        fds_err_setk(&e, rc, FDS_KIND_INTERNAL, "out of memory");
    size_t k = 0;
    for (; !rc && k < n; k++) {
        if ((rc = fds_index_unavailable(ixs[k], &e)))
            break;
        if ((rc = fds_index_view_acquire(ixs[k], &c->sh[k].v, &e)))
            break;
        c->sh[k].ix = ixs[k];
        ixs[k] = NULL;
    }
    fds_index_expr_free(ixs, n); /* what the context did not take */
    if (rc) {
        if (c)
            fds_search_ctx_unref(c);
        return fds__resp_error(o, &e);
    }
    fds_search_ctx_list(c);
    fds_strbuf b = {0};
    fds_strbuf_printf(&b, "{\"id\":\"%s\",\"_shards\":{\"total\":%zu,\"successful\":"
                          "%zu,\"skipped\":0,\"failed\":0}}", c->id, n, n);
    if (b.oom) {
        free(b.p);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    fds__resp_raw(o, 200, b.p, b.len, NULL);
}

void fds__h_pit_close(fds_req *r, fds_resp *o)
{
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_json(r, &body, &e))
        return fds__resp_error(o, &e);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(body, "id");
    if (!cJSON_IsString(id)) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: point in time id must be "
                               "specified;");
    }
    int rc = fds_search_ctx_clear(id->valuestring, FDS_CTX_PIT);
    cJSON_Delete(body);
    if (rc < 0)
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "invalid id: cannot parse point in time id");
    freed_answer(o, (unsigned)rc);
}

bool fds__body_has_pit(fds_req *r)
{
    if (!r->body_len || !memmem(r->body, r->body_len, "\"pit\"", 5))
        return false;
    cJSON *root = cJSON_ParseWithLength(r->body, r->body_len);
    bool has = cJSON_GetObjectItemCaseSensitive(root, "pit") != NULL;
    cJSON_Delete(root);
    return has;
}

void fds__pit_search(fds_req *r, fds_resp *o)
{
    if (r->nseg > 1)
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: [indices] cannot be used "
                               "with point in time. Do not specify any index with "
                               "point in time.;");
    if (fds__req_param(r, "scroll"))
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: using [point in time] is "
                               "not allowed in a scroll context;");
    cJSON *root = cJSON_ParseWithLength(r->body, r->body_len);
    const cJSON *pit = cJSON_GetObjectItemCaseSensitive(root, "pit");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(pit, "id");
    const cJSON *ka = cJSON_GetObjectItemCaseSensitive(pit, "keep_alive");
    const cJSON *it;
    bool shape = cJSON_IsObject(pit) && cJSON_IsString(id) &&
                 (!ka || cJSON_IsString(ka));
    if (shape)
        cJSON_ArrayForEach(it, pit)
            shape &= !strcmp(it->string, "id") || !strcmp(it->string, "keep_alive");
    if (!shape) {
        cJSON_Delete(root);
        return fds__resp_errorf(o, 400, "x_content_parse_exception",
                               "[pit] takes {\"id\": string, \"keep_alive\": "
                               "time value}");
    }
    int64_t ms = -1;
    if (ka && !keep_alive(ka->valuestring, "keep_alive", &ms, o)) {
        cJSON_Delete(root);
        return;
    }
    fds_search_ctx *c = ctx_lookup(id->valuestring, FDS_CTX_PIT,
                        "invalid id: cannot parse point in time id", o);
    cJSON_Delete(root);
    if (c)
        ctx_search(r, o, c, ms, &(fds__search_hooks){
                       .arg = c, .view = fds_search_ctx_view, .prepare = fds_pit_prepare,
                       .id_key = "pit_id", .id = c->id});
}
