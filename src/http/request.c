/*
 * request.c: reading a request -- URL parameters (decoded on demand, since
 * libmicrohttpd hands them over raw), the path split into unescaped
 * segments, the check of parameters against an endpoint's list, and the
 * JSON body.
 */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fds_text.h"
#include "query.h" /* fds_json_check_body */
#include "request.h"

bool fds__req_is(fds_req *r, const char *method)
{
    return !strcmp(r->method, method);
}

const char *fds__req_param(fds_req *r, const char *key)
{
    const char *v = NULL;
    size_t vlen = 0;
    if (!r->conn) { /* an inner request: its own parameters */
        for (unsigned i = 0; i < r->nkv; i++)
            if (!strcmp(r->kv[2 * i], key))
                return r->kv[2 * i + 1];
        return NULL;
    }
    if (MHD_lookup_connection_value_n(r->conn, MHD_GET_ARGUMENT_KIND, key,
                                      strlen(key), &v, &vlen) != MHD_YES)
        return NULL;
    if (!v)
        return ""; /* a bare flag: "?v", "?pretty" */
    /* parameters arrive raw (see the unescape callback): decode a copy that
     * the request owns until its answer is queued */
    if (r->nparams == r->params_cap) {
        unsigned cap = r->params_cap ? 2 * r->params_cap : 8;
        char **q = realloc(r->params, cap * sizeof *q);
        if (!q)
            return NULL;
        r->params = q;
        r->params_cap = cap;
    }
    char *b = fds__param_decode(v, vlen);
    if (!b)
        return NULL;
    r->params[r->nparams++] = b;
    return b;
}

char *fds__param_decode(const char *v, size_t vlen)
{
    char *b = strndup(v, vlen);
    if (!b)
        return NULL;
    for (char *p = b; *p; p++)
        if (*p == '+')
            *p = ' ';
    MHD_http_unescape(b);
    return b;
}

int fds__path_split(char *path, char **seg, unsigned *nseg)
{
    *nseg = 0;
    for (char *save = NULL, *t = strtok_r(path, "/", &save); t;
         t = strtok_r(NULL, "/", &save)) {
        if (*nseg == FDS_PATH_SEGMENTS_MAX)
            return FDS_PATH_TOO_MANY;
        size_t tl = MHD_http_unescape(t);
        /* "%00" would cut the name short; ids and names are UTF-8 */
        if (tl != strlen(t) || !fds_utf8_valid((const uint8_t *)t, tl))
            return FDS_PATH_BAD_TEXT;
        seg[(*nseg)++] = t;
    }
    return 0;
}

/* Parameters every endpoint accepts, as in Elasticsearch's BaseRestHandler. */
static const char *const COMMON_PARAMS[] = {
    "pretty", "human", "error_trace", "filter_path", "timeout", "master_timeout",
    "wait_for_active_shards", "source", "source_content_type", NULL};

typedef struct param_check {
    const char *const *allowed;
    char bad[128];
} param_check;

static enum MHD_Result check_param(void *cls, enum MHD_ValueKind kind,
                                   const char *key, const char *value)
{
    param_check *pc = cls;
    for (const char *const *a = COMMON_PARAMS; *a; a++)
        if (!strcmp(*a, key))
            return MHD_YES;
    for (const char *const *a = pc->allowed; a && *a; a++)
        if (!strcmp(*a, key))
            return MHD_YES;
    snprintf(pc->bad, sizeof pc->bad, "%s", key);
    return MHD_NO;
}

void fds__req_path(fds_req *r, char *buf, size_t cap)
{
    buf[0] = 0;
    for (unsigned i = 0; i < r->nseg; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "/%s", r->seg[i]);
    }
}

/* The parameters handlers read as booleans (fds__req_param_bool): a value
 * other than true, false or none is refused before the handler runs, as
 * Elasticsearch's Booleans.parseBoolean refuses it, so that `?profile=yes`
 * is an error rather than a silent false. */
static const char *const BOOL_PARAMS[] = {
    "allow_partial_search_results", "create", "detailed", "flat_settings", "include_defaults",
    "include_empty_fields", "include_unmapped", "keep_on_completion",
    "preserve_existing", "profile", "reopen", "request_cache",
    "require_alias", "rest_total_hits_as_int", "ts", "typed_keys", "v",
    "wait_for_completion", "write_index_only", NULL};

bool fds__req_check_params(fds_req *r, fds_resp *o, const char *const *allowed)
{
    param_check pc = {allowed, ""};
    if (r->conn)
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, check_param, &pc);
    for (unsigned i = 0; !r->conn && i < r->nkv && !pc.bad[0]; i++)
        check_param(&pc, MHD_GET_ARGUMENT_KIND, r->kv[2 * i], r->kv[2 * i + 1]);
    if (!pc.bad[0]) {
        for (const char *const *b = BOOL_PARAMS; *b; b++)
            if (!fds__req_param_only(r, o, *b, -1))
                return false;
        return true;
    }
    char uri[FDS_REQ_PATH_MAX];
    fds__req_path(r, uri, sizeof uri);
    fds__resp_errorf(o, 400, "illegal_argument_exception",
                    "request [%s] contains unrecognized parameter: [%s]",
                    uri[0] ? uri : "/", pc.bad);
    return false;
}

void fds__req_sub_done(fds_req *sub)
{
    for (unsigned i = 0; i < sub->nparams; i++)
        free(sub->params[i]);
    free(sub->params);
    sub->params = NULL;
    sub->nparams = sub->params_cap = 0;
}

bool fds__req_param_bool(fds_req *r, const char *key, bool dflt)
{
    const char *v = fds__req_param(r, key);
    if (!v)
        return dflt;
    return *v == 0 || !strcmp(v, "true");
}

bool fds__req_param_only(fds_req *r, fds_resp *o, const char *key, int only)
{
    const char *v = fds__req_param(r, key);
    if (!v)
        return true;
    bool t = *v == 0 || !strcmp(v, "true");
    if (!t && strcmp(v, "false")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "Failed to parse value [%s] as only [true] or [false] "
                        "are allowed.", v);
        return false;
    }
    if (only < 0 || t == (only != 0))
        return true;
    fds__resp_errorf(o, 400, "illegal_argument_exception",
                    "[%s=%s] is not supported: only [%s] is", key, v,
                    only ? "true" : "false");
    return false;
}

int fds__body_json(fds_req *r, cJSON **out, fds_err *err)
{
    *out = NULL;
    size_t i = 0;
    while (i < r->body_len && strchr(" \t\r\n", r->body[i]))
        i++;
    if (i == r->body_len)
        return 0;
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(r->body, r->body_len, &end, 0);
    if (!j) {
        size_t at = end ? (size_t)(end - r->body) : 0;
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                           "request body is not valid JSON: unexpected input "
                           "at byte %zu", at);
    }
    while (end && (size_t)(end - r->body) < r->body_len && strchr(" \t\r\n", *end))
        end++;
    if (end && (size_t)(end - r->body) < r->body_len) {
        cJSON_Delete(j);
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                           "request body has trailing content at byte %zu",
                           (size_t)(end - r->body));
    }
    *out = j;
    return 0;
}

int fds__body_checked(fds_req *r, cJSON **out, fds_err *err)
{
    int rc = fds__body_json(r, out, err);
    if (!rc)
        rc = fds_json_check_body(r->body, r->body_len, err);
    if (rc) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return rc;
}
