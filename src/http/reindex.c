/*
 * reindex.c: _reindex -- the body's source, dest and limits checked as
 * Elasticsearch checks them, then a by-query scan job (tasks.h) that
 * copies the matching documents from one index into another.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc_write.h"
#include "handlers.h"
#include "request.h"
#include "response.h"
#include "by_query.h"

#define REINDEX_BATCH 1000      /* documents read and written at a time */
#define REINDEX_BATCH_MAX 10000 /* source.size at most (index.max_result_window) */
#define REINDEX_ERRS_MAX 8      /* validation errors listed at most */

/* Keys of the _reindex body (ReindexRequest's PARSER; `size` is the old
 * name of max_docs) and of its dest (IndexRequest's); source is a search
 * body: its keys are SOURCE_KEYS, a few refused by name. */
static const char *const REINDEX_KEYS[] = {"source", "dest", "max_docs", "size",
                                           "conflicts", "script"};
static const char *const REINDEX_SOURCE_KEYS[] = {"index", "query", "size", "_source",
                                                  "sort", "remote", "from",
                                                  "stored_fields", "slice"};
static const char *const REINDEX_DEST_KEYS[] = {"index", "op_type", "version_type",
                                                "routing", "pipeline"};
static const char *const REINDEX_PARAMS[] = {"refresh", "timeout", "wait_for_active_shards",
                                             "requests_per_second", "max_docs",
                                             "wait_for_completion", "slices", "scroll",
                                             "require_alias", NULL};

/* A key of `o` not in keys[0..n): its name, or NULL. */
static const char *unknown_key(const cJSON *o, const char *const *keys, size_t n)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        size_t k = 0;
        while (k < n && strcmp(keys[k], it->string))
            k++;
        if (k == n)
            return it->string;
    }
    return NULL;
}

/* max_docs (or its old name `size`) as a JSON number or URL text into
 * *out, Elasticsearch's words for a bad one in `o`. */
static bool reindex_max_docs(fds_resp *o, const cJSON *v, const char *text, uint64_t *out)
{
    double d;
    char buf[32];
    if (v) {
        if (!cJSON_IsNumber(v)) {
            fds__resp_errorf(o, 400, "x_content_parse_exception",
                            "[reindex] failed to parse field [max_docs]");
            return false;
        }
        d = v->valuedouble;
        snprintf(buf, sizeof buf, "%.0f", d);
    } else {
        char *end;
        d = strtod(text, &end);
        if (!*text || *end || d != (double)(long long)d) {
            fds__resp_errorf(o, 400, "number_format_exception",
                            "For input string: \"%s\"", text);
            return false;
        }
        snprintf(buf, sizeof buf, "%s", text);
    }
    if (d < 0) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[max_docs] parameter cannot be negative, found [%s]", buf);
        return false;
    }
    if (*out != UINT64_MAX && *out != (uint64_t)d) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[max_docs] set to two different values [%llu] and [%s]",
                        (unsigned long long)*out, buf);
        return false;
    }
    *out = (uint64_t)d;
    return true;
}

/* remote.<name>, a time value, read as Elasticsearch's
 * TimeValue.parseTimeValue reads one: a whole number and a unit (nanos,
 * micros, ms, s, m, h, d), or -1 / 0.  False with its error in `o`: a
 * missing unit is "unit is missing or unrecognized"; a number that is not
 * one, a parse_exception caused by Java's NumberFormatException ("borked"
 * ends in the unit d: "For input string: \"borke\""). */
static bool remote_timeout_ok(fds_resp *o, const cJSON *remote, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(remote, name);
    if (!cJSON_IsString(v) || !strcmp(v->valuestring, "-1") || !strcmp(v->valuestring, "0"))
        return true;
    static const char *const units[] = {"nanos", "micros", "ms", "s", "m", "h", "d"};
    const char *t = v->valuestring;
    size_t n = strlen(t), k = 0, ul = 0;
    while (k < 7 && !((ul = strlen(units[k])) <= n && !strcmp(t + n - ul, units[k])))
        k++;
    if (k == 7) {
        fds__resp_errorf(o, 400, "parse_exception", "failed to parse setting [%s] with "
                        "value [%s] as a time value: unit is missing or unrecognized",
                        name, t);
        return false;
    }
    char num[64];
    snprintf(num, sizeof num, "%.*s", (int)(n - ul), t);
    char *end;
    strtoll(num, &end, 10);
    if (num[0] && !*end)
        return true;
    cJSON *err = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(err, "error");
    char reason[160], cause[120];
    snprintf(reason, sizeof reason, "failed to parse [%s]", t);
    snprintf(cause, sizeof cause, "For input string: \"%s\"", num);
    cJSON *root = cJSON_AddArrayToObject(e, "root_cause"), *r0 = cJSON_CreateObject();
    cJSON_AddStringToObject(r0, "type", "parse_exception");
    cJSON_AddStringToObject(r0, "reason", reason);
    cJSON_AddItemToArray(root, r0);
    cJSON_AddStringToObject(e, "type", "parse_exception");
    cJSON_AddStringToObject(e, "reason", reason);
    cJSON *cb = cJSON_AddObjectToObject(e, "caused_by");
    cJSON_AddStringToObject(cb, "type", "number_format_exception");
    cJSON_AddStringToObject(cb, "reason", cause);
    cJSON_AddNumberToObject(err, "status", 400);
    fds__resp_json(o, 400, err);
    return false;
}

/* source.remote, refused in Elasticsearch's words where it has them: its
 * host must be scheme://host:port[/prefix], no other member than those
 * RemoteInfo reads, and the host in reindex.remote.whitelist -- which is
 * empty here, as Elasticsearch's default, so every remote is refused. */
static void reindex_remote(fds_resp *o, const cJSON *remote)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(remote, "host");
    const char *host = cJSON_IsString(h) ? h->valuestring : "";
    const char *sep = strstr(host, "://");
    const char *colon = sep ? strchr(sep + 3, ':') : NULL;
    const char *p = colon ? colon + 1 : NULL;
    while (p && *p >= '0' && *p <= '9')
        p++;
    if (!sep || sep == host || !colon || colon == sep + 3 || p == colon + 1 ||
        (*p && *p != '/'))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "[host] must be of the form [scheme]://[host]:[port]"
                               "(/[pathPrefix])? but was [%s]", host);
    if (!remote_timeout_ok(o, remote, "socket_timeout") ||
        !remote_timeout_ok(o, remote, "connect_timeout"))
        return;
    static const char *const known[] = {"host", "username", "password", "headers",
                                        "socket_timeout", "connect_timeout"};
    char extra[256] = "";
    const cJSON *it;
    cJSON_ArrayForEach(it, remote) {
        size_t k = 0;
        while (k < 6 && strcmp(known[k], it->string))
            k++;
        size_t l = strlen(extra);
        if (k == 6)
            snprintf(extra + l, sizeof extra - l, "%s%s", l ? "," : "", it->string);
    }
    if (extra[0])
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "Unsupported fields in [remote]: [%s]", extra);
    fds__resp_errorf(o, 400, "illegal_argument_exception",
                    "[%.*s] not whitelisted in reindex.remote.whitelist: fieldstore "
                    "reindexes from its own indices only",
                    (int)(p - (sep + 3)), sep + 3);
}

/* The URL's slices and requests_per_second (shared with the by-query
 * APIs: fds__scan_params_ok) and max_docs >= slices. */
static bool reindex_url_ok(fds_req *r, fds_resp *o, uint64_t max_docs)
{
    const char *sl = fds__req_param(r, "slices");
    char *end;
    unsigned long long n = sl ? strtoull(sl, &end, 10) : 1;
    if (sl && *sl && !*end && n >= 1 && max_docs != UINT64_MAX && max_docs < n) {
        fds__resp_errorf(o, 400, "action_request_validation_exception",
                        "Validation Failed: 1: [max_docs] should be >= [slices];");
        return false;
    }
    return fds__scan_params_ok(r, o);
}

/*
 * POST /_reindex: copy the documents of source.index that match
 * source.query (all without one) into dest.index, in _doc order (or
 * source.sort's) and in batches of source.size, with max_docs (with
 * conflicts=proceed: documents written, as Elasticsearch 8 counts),
 * source._source (the parts copied), dest.op_type (index or create),
 * dest.version_type (internal, external, external_gte), dest.routing (keep, discard,
 * =value) and conflicts (abort or proceed on a version conflict).  A scan
 * with search_after, so each batch starts where the last one ended.
 */
/* What the body of a _reindex asks, as its steps read it. */
typedef struct reindex_plan {
    const cJSON *src, *dst;  /* body.source, body.dest (NULL: absent) */
    const cJSON *si, *di;    /* source.index and dest.index: strings */
    const cJSON *size;       /* source.size, or NULL */
    const cJSON *routing;    /* dest.routing, or NULL */
    uint64_t max_docs, batch;
    bool proceed, create, external, gte;
} reindex_plan;

/* The body's shape: an object of known keys, no script, no remote.
 * False with the answer in `o`. */
static bool reindex_keys_ok(fds_resp *o, const cJSON *body, const reindex_plan *p)
{
    const cJSON *src = p->src, *dst = p->dst;
    const char *bad = NULL;
    if (body && !cJSON_IsObject(body)) {
        fds__resp_errorf(o, 400, "parse_exception", "request body must be a JSON object");
        return false;
    }
    const char *where = "reindex";
    if (!(bad = unknown_key(body, REINDEX_KEYS, 6)) &&
        (bad = unknown_key(dst, REINDEX_DEST_KEYS, 5)))
        where = "dest";
    if (bad) {
        fds__resp_errorf(o, 400, "x_content_parse_exception", "[%s] unknown field [%s]",
                        where, bad);
        return false;
    }
    if ((bad = unknown_key(src, REINDEX_SOURCE_KEYS, 9))) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, bad);
        fds__resp_errorf(o, 400, "parsing_exception", "Unknown key for a %s in [%s].",
                        cJSON_IsObject(v) ? "START_OBJECT" : cJSON_IsArray(v) ? "START_ARRAY"
                        : cJSON_IsString(v) ? "VALUE_STRING" : cJSON_IsNumber(v)
                        ? "VALUE_NUMBER" : "VALUE_BOOLEAN", bad);
        return false;
    }
    if (cJSON_GetObjectItemCaseSensitive(body, "script")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[script] is not supported: fieldstore runs no scripts");
        return false;
    }
    const cJSON *remote = cJSON_GetObjectItemCaseSensitive(src, "remote");
    if (remote) {
        reindex_remote(o, remote);
        return false;
    }
    return true;
}

/* source.size's type, conflicts, and max_docs (the body's size, its
 * max_docs, the URL's) with the URL's other parameters into `p`.  False
 * with the answer in `o`. */
static bool reindex_limits(fds_req *r, fds_resp *o, const cJSON *body, reindex_plan *p)
{
    const cJSON *ss = p->size;
    if (ss && !cJSON_IsNumber(ss)) {
        fds__resp_errorf(o, 400, "number_format_exception", "For input string: \"%s\"",
                        cJSON_IsString(ss) ? ss->valuestring : "?");
        return false;
    }
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(body, "conflicts");
    p->proceed = cJSON_IsString(cf) && !strcmp(cf->valuestring, "proceed");
    if (cf && !p->proceed && !(cJSON_IsString(cf) && !strcmp(cf->valuestring, "abort"))) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "conflicts may only be \"proceed\" or \"abort\" but was [%s]",
                        cJSON_IsString(cf) ? cf->valuestring : "?");
        return false;
    }
    p->max_docs = UINT64_MAX;
    p->batch = REINDEX_BATCH;
    const cJSON *mdb = cJSON_GetObjectItemCaseSensitive(body, "max_docs");
    const cJSON *szb = cJSON_GetObjectItemCaseSensitive(body, "size");
    const char *mdp = fds__req_param(r, "max_docs");
    return !((szb && !reindex_max_docs(o, szb, NULL, &p->max_docs)) ||
             (mdb && !reindex_max_docs(o, mdb, NULL, &p->max_docs)) ||
             (mdp && !reindex_max_docs(o, NULL, mdp, &p->max_docs)) ||
             !reindex_url_ok(r, o, p->max_docs));
}

/* ReindexRequest.validate (every error, listed), then the source and
 * dest being one index, source.slice and dest.pipeline; the index names
 * into p->si, p->di.  False with the answer in `o`. */
static bool reindex_validate(fds_resp *o, reindex_plan *p)
{
    const cJSON *src = p->src, *dst = p->dst;
    char errs[REINDEX_ERRS_MAX][96];
    int nerr = 0;
    cJSON *si = cJSON_GetObjectItemCaseSensitive(src, "index");
    cJSON *di = cJSON_GetObjectItemCaseSensitive(dst, "index");
    if (cJSON_IsArray(si) && cJSON_GetArraySize(si) == 1)
        si = si->child; /* a list of one index */
    if (!cJSON_IsString(si))
        snprintf(errs[nerr++], sizeof errs[0],
                 "use _all if you really want to copy from all existing indexes");
    if (!cJSON_IsString(di))
        snprintf(errs[nerr++], sizeof errs[0], "index must be specified");
    if (cJSON_GetObjectItemCaseSensitive(src, "from"))
        snprintf(errs[nerr++], sizeof errs[0], "from is not supported in this context");
    if (cJSON_GetObjectItemCaseSensitive(src, "stored_fields"))
        snprintf(errs[nerr++], sizeof errs[0],
                 "stored_fields is not supported in this context");
    const cJSON *fsrc = cJSON_GetObjectItemCaseSensitive(src, "_source");
    if (cJSON_IsFalse(fsrc))
        snprintf(errs[nerr++], sizeof errs[0], "_source:false is not supported in this context");
    if (nerr) {
        char msg[REINDEX_ERRS_MAX * 100] = "Validation Failed: ";
        for (int i = 0; i < nerr; i++) {
            size_t l = strlen(msg);
            snprintf(msg + l, sizeof msg - l, "%d: %s;", i + 1, errs[i]);
        }
        fds__resp_errorf(o, 400, "action_request_validation_exception", "%s", msg);
        return false;
    }
    if (!strcmp(si->valuestring, di->valuestring)) {
        fds__resp_errorf(o, 400, "action_request_validation_exception",
                        "Validation Failed: 1: reindex cannot write into an "
                        "index its reading from [%s];", di->valuestring);
        return false;
    }
    if (cJSON_GetObjectItemCaseSensitive(src, "slice")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[source.slice] is not supported: use the slices parameter");
        return false;
    }
    if (cJSON_GetObjectItemCaseSensitive(dst, "pipeline")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[dest.pipeline] is not supported: fieldstore has no ingest "
                        "pipelines");
        return false;
    }
    p->si = si;
    p->di = di;
    return true;
}

/* source.size's range (the batch), dest.op_type, dest.version_type and
 * dest.routing into `p`.  False with the answer in `o`. */
static bool reindex_dest(fds_resp *o, reindex_plan *p)
{
    const cJSON *ss = p->size, *dst = p->dst;
    if (ss && (ss->valuedouble < 1 || ss->valuedouble > REINDEX_BATCH_MAX ||
               ss->valuedouble != (double)(uint32_t)ss->valuedouble)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "source.size must be from 1 to %d, got [%g]", REINDEX_BATCH_MAX,
                        ss->valuedouble);
        return false;
    }
    if (ss)
        p->batch = (uint64_t)ss->valuedouble;
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(dst, "op_type");
    p->create = cJSON_IsString(opt) && !strcmp(opt->valuestring, "create");
    if (opt && !p->create && !(cJSON_IsString(opt) && !strcmp(opt->valuestring, "index"))) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "opType must be 'create' or 'index', found: [%s]",
                        cJSON_IsString(opt) ? opt->valuestring : "?");
        return false;
    }
    const cJSON *vt = cJSON_GetObjectItemCaseSensitive(dst, "version_type");
    const char *vts = cJSON_IsString(vt) ? vt->valuestring : "";
    p->gte = !strcmp(vts, "external_gte");
    p->external = p->gte || !strcmp(vts, "external");
    if (vt && !p->external && strcmp(vts, "internal")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception", "No version type match [%s]",
                        vts);
        return false;
    }
    if (p->external && p->create) {
        fds__resp_errorf(o, 400, "action_request_validation_exception",
                        "Validation Failed: 1: create operations only support internal "
                        "versioning. use index instead;");
        return false;
    }
    /* dest.routing: keep (the default), discard, or =value */
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(dst, "routing");
    if (rt && (!cJSON_IsString(rt) ||
               (strcmp(rt->valuestring, "keep") && strcmp(rt->valuestring, "discard") &&
                rt->valuestring[0] != '='))) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[routing] must be [keep], [discard] or [=<some new value>] but "
                        "was [%s]", cJSON_IsString(rt) ? rt->valuestring : "?");
        return false;
    }
    p->routing = rt;
    return true;
}

/* source.query and source.sort as a search body (malloc'd), NULL when
 * neither is given (or out of memory); their deprecations warned in `o`. */
static char *reindex_query(fds_resp *o, const cJSON *body, const reindex_plan *p)
{
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(p->src, "query");
    const cJSON *sort = cJSON_GetObjectItemCaseSensitive(p->src, "sort");
    if (cJSON_GetObjectItemCaseSensitive(body, "size"))
        /* Elasticsearch's deprecations (ReindexRequest's PARSER) */
        fds__resp_warn(o, "Deprecated field [size] used, expected [max_docs] instead");
    if (sort)
        fds__resp_warn(o, "The sort option in reindex is deprecated. Instead consider "
                         "using query filtering to find the desired subset of data.");
    if (!q && !sort)
        return NULL;
    cJSON *w = cJSON_CreateObject();
    if (q)
        cJSON_AddItemReferenceToObject(w, "query", (cJSON *)q);
    if (sort)
        cJSON_AddItemReferenceToObject(w, "sort", (cJSON *)sort);
    char *qbody = cJSON_PrintUnformatted(w);
    cJSON_Delete(w);
    return qbody;
}

/* POST /_reindex: the body's checks in Elasticsearch's order
 * (reindex_keys_ok, reindex_limits, reindex_validate, reindex_dest, the
 * _source filter), then a scan job answered now or as a task. */
void fds__h_reindex(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, REINDEX_PARAMS))
        return;
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_json(r, &body, &e) ||
        fds_json_check_body(r->body, r->body_len, &e)) {
        cJSON_Delete(body);
        return fds__resp_error(o, &e);
    }
    reindex_plan p = {.src = cJSON_GetObjectItemCaseSensitive(body, "source"),
                      .dst = cJSON_GetObjectItemCaseSensitive(body, "dest")};
    p.size = cJSON_GetObjectItemCaseSensitive(p.src, "size");
    fds__scan_job *j = NULL;
    fds__source_spec filter = {0};
    char *qbody = NULL;
    fds_index *from = NULL, *to = NULL;
    if (!reindex_keys_ok(o, body, &p) || !reindex_limits(r, o, body, &p) ||
        !reindex_validate(o, &p) || !reindex_dest(o, &p))
        goto out;
    const cJSON *fsrc = cJSON_GetObjectItemCaseSensitive(p.src, "_source");
    if (fsrc && (fds__source_spec_json(fsrc, &filter, &e))) {
        fds__resp_error(o, &e);
        goto out;
    }
    qbody = reindex_query(o, body, &p);
    const cJSON *rt = p.routing;
    int rc = fds_store_get_index(r->store, p.si->valuestring, &from, &e);
    if (!rc)
        rc = fds__index_for_write(r->store, p.di->valuestring, &to, &e);
    j = rc ? NULL : calloc(1, sizeof *j);
    if (!rc && !j)
        rc = fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (!rc && rt && strcmp(rt->valuestring, "keep") &&
        !(j->routing = strdup(rt->valuestring)))
        rc = fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (rc) {
        fds__resp_error(o, &e);
        goto out;
    }
    *j = (fds__scan_job){.mode = FDS_SCAN_REINDEX, .from = from, .to = to,
                         .st = r->store, .query = qbody, .max_docs = p.max_docs,
                         .batch = (uint32_t)p.batch, .create = p.create,
                         .proceed = p.proceed, .refresh = fds__want_refresh(r),
                         .external = p.external, .external_gte = p.gte,
                         .routing = j->routing,
                         .filter = filter, .rps = fds__scan_rps(r)};
    from = to = NULL;
    qbody = NULL;
    memset(&filter, 0, sizeof filter);
    char desc[2 * FDS_INDEX_NAME_MAX + 32];
    snprintf(desc, sizeof desc, "reindex from [%s] to [%s]", fds_index_name(j->from),
             fds_index_name(j->to));
    cJSON_Delete(body);
    return fds__scan_answer(r, o, j, "indices:data/write/reindex", desc);
out:
    fds__scan_job_free(j);
    fds__source_spec_free(&filter);
    free(qbody);
    fds_index_release(from);
    fds_index_release(to);
    cJSON_Delete(body);
}
