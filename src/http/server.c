/*
 * server.c: libmicrohttpd glue, routing and the shared request/response
 * helpers of the REST layer.
 *
 * Two libmicrohttpd traps are handled here (DESIGN.md §10): the URL is not
 * unescaped before routing (MHD_OPTION_UNESCAPE_CALLBACK keeps it raw; the
 * path is split on '/' first and each segment unescaped, so an id "a%2Fb"
 * stays one segment), and request bodies arriving in many pieces are
 * accumulated up to a bound, past which the answer is 413: before the body
 * when its declared length is over it, the moment it crosses it for a
 * chunked body (body_over_limit), never after reading the rest.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fds_text.h"
#include "fds_thread.h"
#include "http_int.h"
#include "index_expr.h"
#include "search_ctx.h"
#include "tasks.h"

/* Seconds a connection may stay idle or trickle a request before it is
 * closed: short enough that half-sent requests cannot hold every slot for
 * long, long enough for keep-alive clients between requests. */
#define FDS_HTTP_IDLE_TIMEOUT_S 30

/* Connections libmicrohttpd itself accepts beyond the soft cap, so that a
 * client over the cap can still be told why (429) before it is closed. */
#define FDS_HTTP_REFUSAL_HEADROOM 256u
/* File descriptors kept back from connections for segments, the catalogue
 * and the translog when the connection cap is clipped to RLIMIT_NOFILE. */
#define FDS_HTTP_FD_RESERVE 1024u

/* Elasticsearch's challenge (DefaultAuthenticationFailureHandler, Basic). */
/* Bytes of the status line and headers body_over_limit writes itself. */
#define FDS_HTTP_RAW_HEAD_MAX 256

#define FDS_HTTP_BASIC_CHALLENGE "Basic realm=\"security\" charset=\"UTF-8\""

typedef struct write_job write_job;

struct fds_http_server {
    struct MHD_Daemon *d;
    fds_store *store;
    uint64_t max_body;
    uint16_t port;
    fds__guard *guard;
    fds__users *users;
    char *tls_cert, *tls_key; /* PEM text, kept while the daemon runs */
    /* the write threads and their queue (see "Write threads") */
    pthread_mutex_t wq_mu;
    pthread_cond_t wq_cv;
    write_job *wq_head, *wq_tail;
    bool wq_stop;               /* under wq_mu: run requests inline */
    bool wq_ready;              /* wq_mu and wq_cv initialized */
    pthread_t *writers;
    unsigned nwriters;
};

/* Per-connection-request state (MHD's con_cls). */
typedef struct req_state {
    char *body;
    size_t len, cap;
    bool too_big;
    int guard_refusal; /* over a connection cap: fds__guard_head's answer */
    /* a request run on a write thread: its answer, made there, queued
     * when the connection is resumed (see "Write threads") */
    bool answered;
    fds_resp out;
} req_state;

long long fds__now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- responses --------------------------------------------------------- */

void fds__resp_raw(fds_resp *o, int status, char *body, size_t len,
                  const char *content_type)
{
    free(o->body);
    o->status = status;
    o->body = body;
    o->len = len;
    o->content_type = content_type ? content_type : "application/json";
}

void fds__resp_warn(fds_resp *o, const char *text)
{
    for (unsigned i = 0; i < o->nwarnings; i++)
        if (!strcmp(o->warnings[i], text))
            return;
    if (o->nwarnings < FDS_RESP_WARNINGS_MAX)
        o->warnings[o->nwarnings++] = text;
}

void fds__resp_json(fds_resp *o, int status, cJSON *json)
{
    char *s = json ? cJSON_PrintUnformatted(json) : NULL;
    cJSON_Delete(json);
    if (!s) {
        fds__resp_raw(o, 500, strdup("{\"error\":\"out of memory\",\"status\":500}"),
                     38, NULL);
        return;
    }
    fds__resp_raw(o, status, s, strlen(s), NULL);
}

/* The error object of Elasticsearch (ElasticsearchException#toXContent). */
static cJSON *error_object(const fds_err *e, const char *type, const char *hname,
                           const char *hval)
{
    cJSON *cause = cJSON_CreateObject();
    cJSON_AddStringToObject(cause, "type", type);
    cJSON_AddStringToObject(cause, "reason", e->reason[0] ? e->reason
                                                          : fds_strerror(e->code));
    if (e->index[0]) {
        cJSON_AddStringToObject(cause, "index", e->index);
        if (!strcmp(type, "index_not_found_exception")) {
            cJSON_AddStringToObject(cause, "resource.type", "index_or_alias");
            cJSON_AddStringToObject(cause, "resource.id", e->index);
        }
    }
    if (hname) /* headers the answer carries, as Elasticsearch lists them */
        cJSON_AddStringToObject(cJSON_AddObjectToObject(cause, "header"), hname, hval);
    cJSON *err = cJSON_Duplicate(cause, 1);
    if (e->cause_kind) { /* in the error, not its root_cause (as in ES) */
        cJSON *by = cJSON_AddObjectToObject(err, "caused_by");
        cJSON_AddStringToObject(by, "type", fds__http_kind_type(e->cause_kind));
        cJSON_AddStringToObject(by, "reason", e->cause);
    }
    cJSON *rc = cJSON_AddArrayToObject(err, "root_cause");
    cJSON_AddItemToArray(rc, cause);
    /* root_cause first, as Elasticsearch prints it */
    cJSON *first = cJSON_DetachItemFromObject(err, "root_cause");
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(out, "root_cause", first);
    cJSON *it = err->child;
    while (it) {
        cJSON *next = it->next;
        cJSON_AddItemToObject(out, it->string, cJSON_DetachItemViaPointer(err, it));
        it = next;
    }
    cJSON_Delete(err);
    return out;
}

cJSON *fds__error_json(const fds_err *e)
{
    return error_object(e, fds__http_type(e), NULL, NULL);
}

/* Answer `e` with an explicit status and type (the edge's own errors). */
static void send_error(fds_resp *o, const fds_err *e, int status, const char *type,
                       const char *hname, const char *hval)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "error", error_object(e, type, hname, hval));
    cJSON_AddNumberToObject(j, "status", status);
    fds__resp_json(o, status, j);
}

void fds__resp_error(fds_resp *o, const fds_err *e)
{
    send_error(o, e, fds__http_status(e), fds__http_type(e), NULL, NULL);
}

void fds__resp_errorf(fds_resp *o, int status, const char *type,
                     const char *fmt, ...)
{
    fds_err e;
    fds_err_clear(&e);
    e.code = FDS_EINVAL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.reason, sizeof e.reason, fmt, ap);
    va_end(ap);
    send_error(o, &e, status, type, NULL, NULL);
}

/* ---- requests ----------------------------------------------------------- */

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

bool fds__req_check_params(fds_req *r, fds_resp *o, const char *const *allowed)
{
    param_check pc = {allowed, ""};
    if (r->conn)
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, check_param, &pc);
    for (unsigned i = 0; !r->conn && i < r->nkv && !pc.bad[0]; i++)
        check_param(&pc, MHD_GET_ARGUMENT_KIND, r->kv[2 * i], r->kv[2 * i + 1]);
    if (!pc.bad[0])
        return true;
    char uri[FDS_REQ_PATH_MAX];
    fds__req_path(r, uri, sizeof uri);
    fds__resp_errorf(o, 400, "illegal_argument_exception",
                    "request [%s] contains unrecognized parameter: [%s]",
                    uri[0] ? uri : "/", pc.bad);
    return false;
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

fds_index *fds__req_index(fds_req *r, fds_resp *o, unsigned i)
{
    fds_index *ix = NULL;
    fds_err e;
    fds_err_clear(&e);
    /* an alias's one index too */
    if (i >= r->nseg || fds__index_or_alias(r->store, r->seg[i], false, &ix, &e)) {
        if (!e.code)
            fds_err_setk(&e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                        "no such index");
        fds__resp_error(o, &e);
        return NULL;
    }
    return ix;
}

/* ---- _cat tables ---------------------------------------------------------- */

/* Column spec "name|alias|...", with a leading '*' when the column is
 * shown only when ?h= asks for it: does `want` (len bytes) name it? */
static bool col_named(const char *spec, const char *want, size_t len)
{
    const char *p = spec[0] == '*' ? spec + 1 : spec;
    while (*p) {
        const char *e = strchr(p, '|');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && !memcmp(p, want, len))
            return true;
        p += l + (e ? 1 : 0);
    }
    return false;
}

/* The columns ?h= selects (all default ones without it), into sel[];
 * their count. */
static int cat_cols(fds_req *r, const char *const *cols, size_t ncol,
                    size_t *sel, size_t cap)
{
    const char *h = fds__req_param(r, "h");
    int n = 0;
    if (!h || !*h) {
        for (size_t i = 0; i < ncol && (size_t)n < cap; i++)
            if (cols[i][0] != '*')
                sel[n++] = i;
        return n;
    }
    for (const char *p = h; *p && (size_t)n < cap;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char pat[64];
        bool wild = memchr(p, '*', l) && l < sizeof pat;
        if (wild) { /* h=d*: every column whose name matches, in order */
            memcpy(pat, p, l);
            pat[l] = 0;
        }
        for (size_t i = 0; i < ncol && (size_t)n < cap; i++) {
            char title[64];
            const char *t = cols[i][0] == '*' ? cols[i] + 1 : cols[i];
            size_t tl = strcspn(t, "|");
            snprintf(title, sizeof title, "%.*s", (int)tl, t);
            if (wild ? fds_glob_match(pat, title, strlen(title))
                     : col_named(cols[i], p, l)) {
                sel[n++] = i;
                if (!wild)
                    break;
            }
        }
        p += l + (e ? 1 : 0);
    }
    return n;
}

/* ?s=: sort keys, each a column and an optional ":asc"/":desc". */
typedef struct cat_sort {
    size_t col[8];
    bool desc[8];
    size_t n;
} cat_sort;

/* Numbers (and sizes such as "1.5kb") compare as numbers, as
 * Elasticsearch's table sorts typed cells; other cells as text. */
static int cell_cmp(const char *x, const char *y)
{
    char *ex, *ey;
    double a = x ? strtod(x, &ex) : 0, b = y ? strtod(y, &ey) : 0;
    if (x && y && ex != x && ey != y && !strcmp(ex, ey))
        return a < b ? -1 : a > b;
    return strcmp(x ? x : "", y ? y : "");
}

static int cat_row_cmp(const void *a, const void *b, void *arg)
{
    const cat_sort *s = arg;
    for (size_t k = 0; k < s->n; k++) {
        int c = cell_cmp((*(char ***)a)[s->col[k]], (*(char ***)b)[s->col[k]]);
        if (c)
            return s->desc[k] ? -c : c;
    }
    return 0;
}

/* The primary name of column spec `spec` into buf. */
static const char *col_title(const char *spec, char *buf, size_t cap)
{
    const char *p = spec[0] == '*' ? spec + 1 : spec;
    size_t l = strcspn(p, "|");
    snprintf(buf, cap, "%.*s", (int)l, p);
    return buf;
}

void fds__cat_render(fds_req *r, fds_resp *o, const char *const *cols,
                    size_t ncol, char ***rows, size_t nrows)
{
    size_t sel[32];
    int ns = cat_cols(r, cols, ncol, sel, 32);
    char title[32][64];
    const char *tt[32];
    for (int c = 0; c < ns; c++)
        tt[c] = col_title(cols[sel[c]], title[c], sizeof title[c]);
    const char *s = fds__req_param(r, "s");
    cat_sort cs = {.n = 0};
    for (const char *p = s ? s : ""; *p && cs.n < 8;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        const char *colon = memchr(p, ':', l);
        size_t nl = colon ? (size_t)(colon - p) : l;
        size_t i = 0;
        while (i < ncol && !col_named(cols[i], p, nl))
            i++;
        if (i == ncol)
            return fds__resp_errorf(o, 400, "unsupported_operation_exception",
                                   "Unable to sort by unknown sort key `%.*s`",
                                   (int)nl, p);
        cs.col[cs.n] = i;
        cs.desc[cs.n++] = colon && l - nl == 5 && !memcmp(colon, ":desc", 5);
        p += l + (e ? 1 : 0);
    }
    if (cs.n && nrows > 1)
        qsort_r(rows, nrows, sizeof *rows, cat_row_cmp, &cs);
    const char *fmt = fds__req_param(r, "format");
    if (fmt && !strcmp(fmt, "json")) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < nrows; i++) {
            cJSON *o1 = cJSON_CreateObject();
            for (int c = 0; c < ns; c++) {
                const char *v = rows[i][sel[c]];
                if (v)
                    cJSON_AddStringToObject(o1, tt[c], v);
                else
                    cJSON_AddNullToObject(o1, tt[c]);
            }
            cJSON_AddItemToArray(arr, o1);
        }
        fds__resp_json(o, 200, arr);
        return;
    }
    bool v = fds__req_param_bool(r, "v", false);
    size_t w[32] = {0};
    for (int c = 0; c < ns; c++) {
        if (v)
            w[c] = strlen(tt[c]);
        for (size_t i = 0; i < nrows; i++) {
            const char *x = rows[i][sel[c]];
            size_t l = x ? strlen(x) : 0;
            if (l > w[c])
                w[c] = l;
        }
    }
    size_t cap = 64, len = 0;
    for (int c = 0; c < ns; c++)
        cap += (w[c] + 1) * (nrows + 1);
    char *out = malloc(cap + nrows + 2);
    if (!out) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
        return;
    }
    for (size_t i = v ? 0 : 1; i <= nrows; i++) {
        for (int c = 0; c < ns; c++) {
            const char *x = i == 0 ? tt[c] : rows[i - 1][sel[c]];
            if (!x)
                x = "";
            if (c + 1 < ns)
                len += (size_t)sprintf(out + len, "%-*s ", (int)w[c], x);
            else
                len += (size_t)sprintf(out + len, "%s", x);
        }
        out[len++] = '\n';
    }
    out[len] = 0;
    fds__resp_raw(o, 200, out, len, "text/plain; charset=UTF-8");
}

/* ---- routing -------------------------------------------------------------- */

/* HTTP methods as bits of a route's method set. */
enum {
    M_GET = 1u << 0, M_HEAD = 1u << 1, M_POST = 1u << 2, M_PUT = 1u << 3,
    M_DELETE = 1u << 4,
    /* not a method: the route writes documents or builds segments, and
     * runs on a write thread, not on the HTTP thread (write_defer) */
    R_WRITES = 1u << 8,
};
static const char *const METHOD_NAMES[] = {"GET", "HEAD", "POST", "PUT", "DELETE"};
#define METHOD_COUNT (sizeof METHOD_NAMES / sizeof *METHOD_NAMES)

static unsigned method_bit(const char *m)
{
    for (unsigned i = 0; i < METHOD_COUNT; i++)
        if (!strcmp(m, METHOD_NAMES[i]))
            return 1u << i;
    return 0;
}

static void h_doc_create(fds_req *r, fds_resp *o) { fds__h_doc_put(r, o, true); }
static void h_doc_index(fds_req *r, fds_resp *o) { fds__h_doc_put(r, o, false); }
static void h_open(fds_req *r, fds_resp *o) { fds__h_open_close(r, o, true); }
static void h_close(fds_req *r, fds_resp *o) { fds__h_open_close(r, o, false); }
static void h_search(fds_req *r, fds_resp *o) { fds__h_search(r, o, false); }
static void h_count(fds_req *r, fds_resp *o) { fds__h_search(r, o, true); }
static void h_delete_by_query(fds_req *r, fds_resp *o) { fds__h_by_query(r, o, true); }
static void h_update_by_query(fds_req *r, fds_resp *o) { fds__h_by_query(r, o, false); }
static void h_clone(fds_req *r, fds_resp *o) { fds__h_resize(r, o, FDS_RESIZE_CLONE); }
static void h_shrink(fds_req *r, fds_resp *o) { fds__h_resize(r, o, FDS_RESIZE_SHRINK); }
static void h_split(fds_req *r, fds_resp *o) { fds__h_resize(r, o, FDS_RESIZE_SPLIT); }

/* One endpoint: a path pattern of '/'-separated segments, where "{}"
 * matches any one segment (an index name, an id, a metric list), the
 * methods it takes, and its handler.  A GET route also answers HEAD with
 * the GET answer's headers (see queue_answer); M_HEAD marks the routes
 * Elasticsearch itself lists with HEAD. */
typedef struct route_def {
    const char *pattern;
    unsigned methods;
    void (*fn)(fds_req *, fds_resp *);
    /* the URL parameters the handler reads, besides COMMON_PARAMS: any
     * other is a 400 before it runs; NULL: the handler checks its own */
    const char *const *params;
} route_def;

/* Parameter lists of the routes whose handlers do not check their own. */
#define EXPR_PARAMS FDS_INDEX_EXPR_PARAMS
#define CAT_PARAMS "format", "h", "v", "s"
static const char *const P_NONE[] = {NULL};
static const char *const P_EXPR[] = {EXPR_PARAMS, NULL};
/* "local": one node, so its own state is the master's */
static const char *const P_EXPR_LOCAL[] = {EXPR_PARAMS, "local", NULL};
static const char *const P_FORCEMERGE[] = {EXPR_PARAMS, "max_num_segments", NULL};
static const char *const P_CAT[] = {CAT_PARAMS, "local", NULL};
static const char *const P_RESIZE[] = {"copy_settings", NULL};
static const char *const P_CAT_SEGMENTS[] = {CAT_PARAMS, "bytes", NULL};
static const char *const P_CAT_SHARDS[] = {CAT_PARAMS, EXPR_PARAMS, "bytes", NULL};
static const char *const P_CAT_INDICES[] = {CAT_PARAMS, EXPR_PARAMS, "bytes",
                                            "health", "local", NULL};

/* Elasticsearch's PathTrie prefers a literal segment to a {param} one, so
 * the routes whose first segment is literal come first: the first route
 * that matches both path and method answers. */
static const route_def ROUTES[] = {
    {"", M_GET | M_HEAD, fds__h_root, P_NONE},
    {"_bulk", M_POST | M_PUT | R_WRITES, fds__h_bulk, NULL},
    {"_mget", M_GET | M_POST, fds__h_mget, NULL},
    {"_refresh", M_POST | M_GET | R_WRITES, fds__h_refresh, P_EXPR},
    {"_flush", M_POST | M_GET | R_WRITES, fds__h_flush, P_EXPR},
    {"_forcemerge", M_POST | R_WRITES, fds__h_forcemerge, P_FORCEMERGE},
    {"_stats", M_GET, fds__h_stats, P_EXPR},
    {"_stats/{}", M_GET, fds__h_stats, P_EXPR},
    {"_reindex", M_POST | R_WRITES, fds__h_reindex, NULL},
    {"_search", M_GET | M_POST, h_search, NULL},
    {"_count", M_GET | M_POST, h_count, NULL},
    {"_msearch", M_GET | M_POST, fds__h_msearch, NULL},
    {"_field_caps", M_GET | M_POST, fds__h_field_caps, NULL},
    {"_async_search", M_POST, fds__h_async_submit, NULL},
    {"_async_search/status/{}", M_GET, fds__h_async_status, P_NONE},
    {"_async_search/{}", M_GET, fds__h_async_get, NULL},
    {"_async_search/{}", M_DELETE, fds__h_async_delete, P_NONE},
    {"_settings", M_GET, fds__h_settings_get, NULL},
    {"_settings", M_PUT, fds__h_settings_put, NULL},
    {"_mapping", M_GET, fds__h_mapping_get, P_EXPR_LOCAL},
    {"_mappings", M_GET, fds__h_mapping_get, P_EXPR_LOCAL},
    {"_mapping/field/{}", M_GET, fds__h_field_mapping_get, NULL},
    {"_settings/{}", M_GET, fds__h_settings_get, NULL},
    {"_cluster/health", M_GET, fds__h_cluster_health, NULL},
    {"_cluster/health/{}", M_GET, fds__h_cluster_health, NULL},
    {"_cluster/settings", M_GET, fds__h_cluster_settings_get, NULL},
    {"_cluster/settings", M_PUT, fds__h_cluster_settings_put, NULL},
    {"_cat", M_GET, fds__h_cat_help, P_NONE},
    {"_cat/indices", M_GET, fds__h_cat_indices, P_CAT_INDICES},
    {"_cat/indices/{}", M_GET, fds__h_cat_indices, P_CAT_INDICES},
    {"_cat/segments", M_GET, fds__h_cat_segments, P_CAT_SEGMENTS},
    {"_cat/segments/{}", M_GET, fds__h_cat_segments, P_CAT_SEGMENTS},
    {"_cat/shards", M_GET, fds__h_cat_shards, P_CAT_SHARDS},
    {"_cat/shards/{}", M_GET, fds__h_cat_shards, P_CAT_SHARDS},
    {"_cat/nodes", M_GET, fds__h_cat_nodes, P_CAT},
    {"_cat/count", M_GET, fds__h_cat_count, NULL},
    {"_cat/count/{}", M_GET, fds__h_cat_count, NULL},
    {"_cat/health", M_GET, fds__h_cat_health, NULL},
    {"_nodes/stats", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/stats/{}", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/stats/{}/{}", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/{}/stats", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/{}/stats/{}", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/{}/stats/{}/{}", M_GET, fds__h_nodes_stats, P_NONE},
    {"_aliases", M_POST, fds__h_aliases_update, NULL},
    {"_aliases", M_GET, fds__h_alias_get, NULL},
    {"_alias", M_GET, fds__h_alias_get, NULL},
    {"_alias/{}", M_GET | M_HEAD, fds__h_alias_get, NULL},
    {"_cat/aliases", M_GET, fds__h_cat_aliases, NULL},
    {"_cat/aliases/{}", M_GET, fds__h_cat_aliases, NULL},
    {"_cat/templates", M_GET, fds__h_cat_templates, NULL},
    {"_cat/templates/{}", M_GET, fds__h_cat_templates, NULL},
    {"_index_template/_simulate_index/{}", M_POST, fds__h_simulate_index, NULL},
    {"_index_template", M_GET, fds__h_template_get, NULL},
    {"_component_template", M_GET, fds__h_template_get, NULL},
    {"_template", M_GET, fds__h_template_get, NULL},
    {"_index_template/{}", M_GET | M_HEAD, fds__h_template_get, NULL},
    {"_component_template/{}", M_GET | M_HEAD, fds__h_template_get, NULL},
    {"_template/{}", M_GET | M_HEAD, fds__h_template_get, NULL},
    {"_index_template/{}", M_PUT | M_POST, fds__h_template_put, NULL},
    {"_component_template/{}", M_PUT | M_POST, fds__h_template_put, NULL},
    {"_template/{}", M_PUT | M_POST, fds__h_template_put, NULL},
    {"_index_template/{}", M_DELETE, fds__h_template_delete, NULL},
    {"_component_template/{}", M_DELETE, fds__h_template_delete, NULL},
    {"_template/{}", M_DELETE, fds__h_template_delete, NULL},
    {"_search/scroll", M_GET | M_POST, fds__h_scroll, NULL},
    {"_search/scroll", M_DELETE, fds__h_scroll_clear, NULL},
    {"_search/scroll/{}", M_GET | M_POST, fds__h_scroll, NULL},
    {"_search/scroll/{}", M_DELETE, fds__h_scroll_clear, NULL},
    {"_pit", M_DELETE, fds__h_pit_close, NULL},
    {"_tasks", M_GET, fds__h_tasks_list, NULL},
    {"_tasks/{}", M_GET, fds__h_task_get, NULL},
    {"_tasks/{}/_cancel", M_POST, fds__h_task_cancel, NULL},
    {"{}", M_PUT, fds__h_index_create, P_NONE},
    {"{}", M_DELETE, fds__h_index_delete, P_EXPR},
    {"{}", M_GET | M_HEAD, fds__h_index_get, P_EXPR_LOCAL},
    {"{}/_settings", M_GET, fds__h_settings_get, NULL},
    {"{}/_settings", M_PUT, fds__h_settings_put, NULL},
    {"{}/_settings/{}", M_GET, fds__h_settings_get, NULL},
    {"{}/_mapping", M_GET, fds__h_mapping_get, P_EXPR_LOCAL},
    {"{}/_mappings", M_GET, fds__h_mapping_get, P_EXPR_LOCAL},
    {"{}/_mapping", M_PUT | M_POST, fds__h_mapping_put, NULL},
    {"{}/_mapping/field/{}", M_GET, fds__h_field_mapping_get, NULL},
    {"{}/_block/{}", M_PUT, fds__h_index_block_put, NULL},
    {"{}/_search", M_GET | M_POST, h_search, NULL},
    {"{}/_search_shards", M_GET | M_POST, fds__h_search_shards, NULL},
    {"{}/_count", M_GET | M_POST, h_count, NULL},
    {"{}/_msearch", M_GET | M_POST, fds__h_msearch, NULL},
    {"{}/_field_caps", M_GET | M_POST, fds__h_field_caps, NULL},
    {"{}/_async_search", M_POST, fds__h_async_submit, NULL},
    {"{}/_bulk", M_POST | M_PUT | R_WRITES, fds__h_bulk, NULL},
    {"{}/_mget", M_GET | M_POST, fds__h_mget, NULL},
    {"{}/_refresh", M_POST | M_GET | R_WRITES, fds__h_refresh, P_EXPR},
    {"{}/_flush", M_POST | M_GET | R_WRITES, fds__h_flush, P_EXPR},
    {"{}/_forcemerge", M_POST | R_WRITES, fds__h_forcemerge, P_FORCEMERGE},
    {"{}/_open", M_POST, h_open, P_NONE},
    {"{}/_close", M_POST, h_close, P_NONE},
    {"{}/_stats", M_GET, fds__h_stats, P_EXPR},
    {"{}/_stats/{}", M_GET, fds__h_stats, P_EXPR},
    {"{}/_doc", M_POST | R_WRITES, h_doc_index, NULL},
    {"{}/_doc/{}", M_GET | M_HEAD, fds__h_doc_get, NULL},
    {"{}/_doc/{}", M_PUT | M_POST | R_WRITES, h_doc_index, NULL},
    {"{}/_doc/{}", M_DELETE | R_WRITES, fds__h_doc_delete, NULL},
    {"{}/_create/{}", M_PUT | M_POST | R_WRITES, h_doc_create, NULL},
    {"{}/_source/{}", M_GET | M_HEAD, fds__h_doc_get, NULL},
    {"{}/_update/{}", M_POST | R_WRITES, fds__h_update, NULL},
    {"{}/_alias", M_GET, fds__h_alias_get, NULL},
    {"{}/_aliases", M_GET, fds__h_alias_get, NULL},
    {"{}/_alias/{}", M_GET | M_HEAD, fds__h_alias_get, NULL},
    {"{}/_alias/{}", M_PUT | M_POST, fds__h_alias_put, NULL},
    {"{}/_aliases/{}", M_PUT | M_POST, fds__h_alias_put, NULL},
    {"{}/_alias/{}", M_DELETE, fds__h_alias_delete, NULL},
    {"{}/_aliases/{}", M_DELETE, fds__h_alias_delete, NULL},
    {"{}/_pit", M_POST, fds__h_pit_open, NULL},
    {"{}/_delete_by_query", M_POST | R_WRITES, h_delete_by_query, NULL},
    {"{}/_update_by_query", M_POST | R_WRITES, h_update_by_query, NULL},
    {"{}/_clone/{}", M_POST | M_PUT | R_WRITES, h_clone, P_RESIZE},
    {"{}/_shrink/{}", M_POST | M_PUT | R_WRITES, h_shrink, P_RESIZE},
    {"{}/_split/{}", M_POST | M_PUT | R_WRITES, h_split, P_RESIZE},
};

/* Does `pattern` match the request's segments? */
static bool route_matches(const char *pattern, const fds_req *r)
{
    unsigned i = 0;
    const char *p = pattern;
    while (*p) {
        size_t l = strcspn(p, "/");
        if (i >= r->nseg)
            return false;
        if (!(l == 2 && !memcmp(p, "{}", 2)) &&
            (strlen(r->seg[i]) != l || memcmp(r->seg[i], p, l)))
            return false;
        i++;
        p += l;
        if (*p == '/')
            p++;
    }
    return i == r->nseg;
}

/* The request's URI as Elasticsearch quotes it in routing errors: the raw
 * path and query string (rebuilt from libmicrohttpd's raw arguments). */
typedef struct uri_buf {
    char *p;
    size_t len, cap;
} uri_buf;

static void uri_put(uri_buf *u, const char *s)
{
    size_t n = strlen(s);
    if (n > u->cap - 1 - u->len)
        n = u->cap - 1 - u->len;
    memcpy(u->p + u->len, s, n);
    u->len += n;
    u->p[u->len] = 0;
}

static enum MHD_Result uri_arg(void *cls, enum MHD_ValueKind kind,
                               const char *key, const char *value)
{
    (void)kind;
    uri_buf *u = cls;
    uri_put(u, strchr(u->p, '?') ? "&" : "?");
    uri_put(u, key);
    if (value) {
        uri_put(u, "=");
        uri_put(u, value);
    }
    return MHD_YES;
}

static void request_uri(fds_req *r, char *buf, size_t cap)
{
    uri_buf u = {buf, 0, cap};
    buf[0] = 0;
    uri_put(&u, r->url ? r->url : "/");
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, uri_arg, &u);
}

/* Elasticsearch's RestController, when a path matches no endpoint
 * (handleBadRequest): 400 and {"error":"no handler found for uri [...]
 * and method [...]"}, without "status". */
static void no_handler(fds_req *r, fds_resp *o)
{
    char uri[FDS_REQ_PATH_MAX], msg[FDS_REQ_PATH_MAX + 128];
    request_uri(r, uri, sizeof uri);
    snprintf(msg, sizeof msg, "no handler found for uri [%s] and method [%s]", uri,
             r->method);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", msg);
    fds__resp_json(o, 400, j);
}

/* The methods of `allowed` as "GET, HEAD" into list (cap bytes), and as
 * "GET,HEAD" into o->allow (the Allow header). */
static void allow_list(fds_resp *o, unsigned allowed, char *list, size_t cap)
{
    size_t l = 0;
    list[0] = 0;
    for (unsigned i = 0; i < METHOD_COUNT; i++)
        if (allowed & (1u << i))
            l += (size_t)snprintf(list + l, cap - l, "%s%s", l ? ", " : "",
                                  METHOD_NAMES[i]);
    for (size_t i = 0, k = 0; i <= l && k < sizeof o->allow; i++)
        if (list[i] != ' ')
            o->allow[k++] = list[i];
}

/* ... and when the path matches endpoints that take other methods
 * (handleUnsupportedHttpMethod): 405, the simple error shape with
 * "status", and an Allow header listing them. */
static void method_not_allowed(fds_req *r, fds_resp *o, unsigned allowed)
{
    char list[64];
    allow_list(o, allowed, list, sizeof list);
    char uri[FDS_REQ_PATH_MAX], msg[FDS_REQ_PATH_MAX + 160];
    request_uri(r, uri, sizeof uri);
    snprintf(msg, sizeof msg, "Incorrect HTTP method for uri [%s] and method [%s], "
             "allowed: [%s]", uri, r->method, list);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", msg);
    cJSON_AddNumberToObject(j, "status", 405);
    fds__resp_json(o, 405, j);
}

/* The route that answers r's path and method, or NULL; *allowed: the
 * methods of the routes that match its path (for a 405 or OPTIONS). */
static const route_def *route_find(const fds_req *r, unsigned *allowed)
{
    unsigned m = method_bit(r->method);
    if (m == M_HEAD)
        m |= M_GET;
    *allowed = 0;
    for (size_t i = 0; i < sizeof ROUTES / sizeof *ROUTES; i++) {
        if (!route_matches(ROUTES[i].pattern, r))
            continue;
        if (ROUTES[i].methods & m)
            return &ROUTES[i];
        *allowed |= ROUTES[i].methods;
    }
    return NULL;
}

static void route(fds_req *r, fds_resp *o)
{
    unsigned allowed;
    const route_def *rt = route_find(r, &allowed);
    if (rt) {
        if (rt->params && !fds__req_check_params(r, o, rt->params))
            return;
        return rt->fn(r, o);
    }
    if (allowed && fds__req_is(r, "OPTIONS")) {
        /* handleOptionsRequest: 200, no body, the methods in Allow */
        char list[64];
        allow_list(o, allowed, list, sizeof list);
        return fds__resp_raw(o, 200, strdup(""), 0, "text/plain; charset=UTF-8");
    }
    if (allowed)
        return method_not_allowed(r, o, allowed);
    no_handler(r, o);
}

/* ---- libmicrohttpd callbacks --------------------------------------------------- */

/* Keep the URL raw; segments are unescaped after splitting (see top). */
static size_t keep_raw(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    fds_http_server *srv = cls;
    req_state *st = *con_cls;
    if (st) {
        free(st->body);
        free(st->out.body); /* a write thread's answer never queued */
        free(st);
        fds__guard_done(srv->guard, c);
    }
    *con_cls = NULL;
}

/* What the request head says about framing and the body (RFC 9112 §6). */
typedef struct head_scan {
    unsigned ncl;        /* Content-Length fields */
    bool cl_differ;      /* ... with different values */
    char cl[32];
    unsigned nte;        /* Transfer-Encoding fields */
    bool te_chunked;     /* the only one, and exactly "chunked" */
} head_scan;

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind,
                                   const char *key, const char *value)
{
    (void)kind;
    head_scan *h = cls;
    if (!strcasecmp(key, "Content-Length")) {
        if (h->ncl && strcmp(h->cl, value))
            h->cl_differ = true;
        if (!h->ncl)
            snprintf(h->cl, sizeof h->cl, "%s", value);
        h->ncl++;
    } else if (!strcasecmp(key, "Transfer-Encoding")) {
        h->te_chunked = !h->nte && !strcasecmp(value, "chunked");
        h->nte++;
    }
    return MHD_YES;
}

/* The answer to a request head, before any body is read, or false to go
 * on.  An answer given here ends the connection: the unread body (or what
 * a smuggler put after it) must not be taken for the next request. */
static bool early_answer(fds_http_server *srv, struct MHD_Connection *conn,
                         req_state *st, fds_resp *o)
{
    head_scan h = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_header, &h);
    o->close = true;
    if (st->guard_refusal) {
        fds__resp_errorf(o, 429, "rejected_execution_exception",
                        "too many connections %s; try again later",
                        st->guard_refusal == 1 ? "from this client address"
                                               : "to this node");
        return true;
    }
    /* RFC 9112 §6.3: both framings, or disagreeing lengths, make the
     * message length unknowable: 400 and close. */
    if (h.nte && h.ncl) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "a request must not carry both Content-Length and "
                        "Transfer-Encoding");
        return true;
    }
    if (h.cl_differ) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "a request must not carry different Content-Length values");
        return true;
    }
    if (h.nte && !(h.nte == 1 && h.te_chunked)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "unsupported Transfer-Encoding (only chunked is accepted)");
        return true;
    }
    if (h.ncl) {
        char *end = NULL;
        unsigned long long n = strtoull(h.cl, &end, 10);
        if (end == h.cl || *end) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "bad Content-Length [%s]", h.cl);
            return true;
        }
        /* Declared too big: refuse now, before "100 Continue" and before
         * reading a byte of it. */
        if (n > srv->max_body) {
            fds__resp_errorf(o, 413, "content_too_long_exception",
                            "request body is too large: [%llu] bytes, more than "
                            "[%llu] (http.max_content_length)", n,
                            (unsigned long long)srv->max_body);
            return true;
        }
    }
    o->close = false;
    return false;
}

/* Elasticsearch's short error shape, {"error":"...","status":N}, which its
 * RestController uses for requests it refuses before any handler runs. */
static void simple_error(fds_resp *o, int status, const char *reason)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", reason);
    cJSON_AddNumberToObject(j, "status", status);
    fds__resp_json(o, status, j);
}

/* Body content types Elasticsearch 8 takes as JSON (XContentType): the
 * media type before any parameter such as "; charset=UTF-8" or
 * "; compatible-with=8". */
static bool json_content_type(const char *ct)
{
    static const char *const OK[] = {
        "application/json", "application/x-ndjson",
        "application/vnd.elasticsearch+json",
        "application/vnd.elasticsearch+x-ndjson", NULL};
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    for (const char *const *a = OK; *a; a++)
        if (strlen(*a) == n && !strncasecmp(ct, *a, n))
            return true;
    return false;
}

/* Basic auth (when a users file is loaded) and, for a request with a body,
 * its content type (Elasticsearch refuses non-JSON bodies with 406, which
 * also keeps browsers' form posts from reaching the API).  Returns true
 * when the request may go on. */
static bool admit(fds_http_server *srv, fds_req *r, const char *url, fds_resp *o)
{
    if (srv->users) {
        char who[128];
        int ok = fds__users_check(srv->users, r->conn, who, sizeof who);
        if (ok <= 0) {
            fds_err e;
            fds_err_clear(&e);
            e.code = FDS_EINVAL;
            if (ok == 0)
                snprintf(e.reason, sizeof e.reason,
                         "missing authentication credentials for REST request [%s]",
                         url);
            else
                snprintf(e.reason, sizeof e.reason,
                         "unable to authenticate user [%s] for REST request [%s]",
                         who, url);
            send_error(o, &e, 401, "security_exception", "WWW-Authenticate",
                       FDS_HTTP_BASIC_CHALLENGE);
            o->www_authenticate = FDS_HTTP_BASIC_CHALLENGE;
            return false;
        }
    }
    if (r->body_len) {
        const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                     "Content-Type");
        if (!ct) {
            simple_error(o, 406, "Content-Type header is missing");
            return false;
        }
        if (!json_content_type(ct)) {
            char msg[320];
            snprintf(msg, sizeof msg, "Content-Type header [%.256s] is not supported",
                     ct);
            simple_error(o, 406, msg);
            return false;
        }
    }
    return true;
}

/* ?filter_path and ?pretty, on any JSON answer. */
static void shape_output(fds_req *r, fds_resp *o)
{
    if (!o->body || strncmp(o->content_type, "application/json", 16))
        return;
    const char *fp = fds__req_param(r, "filter_path");
    char *t = NULL;
    size_t tn = 0;
    if (fp && *fp && !fds__json_filter(o->body, o->len, fp, &t, &tn)) {
        free(o->body);
        o->body = t;
        o->len = tn;
    }
    const char *pretty = fds__req_param(r, "pretty");
    if (pretty && strcmp(pretty, "false") &&
        !fds__json_pretty(o->body, o->len, &t, &tn)) {
        free(o->body);
        o->body = t;
        o->len = tn;
    }
}

static enum MHD_Result queue_answer(struct MHD_Connection *conn, fds_resp *o)
{
    if (!o->body)
        fds__resp_errorf(o, 500, "exception", "no response");
    /* for HEAD libmicrohttpd sends this Content-Length and no body */
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        o->len, o->body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(o->body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", o->content_type);
    MHD_add_response_header(resp, "X-elastic-product", "Elasticsearch");
    if (o->www_authenticate)
        MHD_add_response_header(resp, "WWW-Authenticate", o->www_authenticate);
    if (o->allow[0])
        MHD_add_response_header(resp, "Allow", o->allow);
    if (o->close)
        MHD_add_response_header(resp, "Connection", "close");
    for (unsigned i = 0; i < o->nwarnings; i++) {
        char w[512];
        snprintf(w, sizeof w, "299 Elasticsearch-" FDS__ES_VERSION " \"%s\"",
                 o->warnings[i]);
        MHD_add_response_header(resp, "Warning", w);
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)o->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/*
 * A body past --max-body while it is still arriving (a chunked upload; a
 * declared Content-Length over the limit is refused in early_answer).
 * libmicrohttpd 0.9.75 refuses MHD_queue_response while upload data is
 * being handed over (only before the body or after its last byte), so
 * waiting for it would mean reading, and discarding, the rest of an
 * arbitrarily long body.  Instead the 413 is written to the socket here,
 * the write side shut (FIN after the answer), and MHD_NO makes
 * libmicrohttpd close the connection without reading another byte.  Over
 * TLS the bytes would have to go through the TLS session libmicrohttpd
 * owns, so there the connection is only closed.
 */
static enum MHD_Result body_over_limit(fds_http_server *srv,
                                       struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (srv->tls_cert || !ci)
        return MHD_NO;
    fds_resp o = {0};
    fds__resp_errorf(&o, 413, "content_too_long_exception",
                    "request body is too large: more than [%llu] bytes "
                    "(http.max_content_length)",
                    (unsigned long long)srv->max_body);
    char head[FDS_HTTP_RAW_HEAD_MAX];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 413 Content Too Large\r\n"
                      "Content-Type: %s\r\n"
                      "X-elastic-product: Elasticsearch\r\n"
                      "Connection: close\r\n"
                      "Content-Length: %zu\r\n\r\n",
                      o.content_type, o.len);
    /* a fresh socket's send buffer takes these few hundred bytes at once;
     * whatever does not fit is lost with the connection, as a 413 would be
     * to a client that stops reading */
    int fd = ci->connect_fd;
    if (hl > 0 && (size_t)hl < sizeof head &&
        send(fd, head, (size_t)hl, MSG_NOSIGNAL | MSG_DONTWAIT) == hl && o.body)
        (void)send(fd, o.body, o.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(fd, SHUT_WR);
    free(o.body);
    return MHD_NO;
}

/* Answer the complete request of `st` on `conn` into *o: admission,
 * routing and the handler, then the output's filter_path and pretty.  On
 * the connection's HTTP thread, or on a write thread while the connection
 * is suspended (nothing else touches it then). */
static void serve(fds_http_server *srv, struct MHD_Connection *conn,
                  req_state *st, const char *url, const char *method,
                  fds_resp *o)
{
    fds_req r = {0};
    r.store = srv->store;
    r.method = method;
    r.conn = conn;
    r.url = url;
    r.start_us = fds__now_us();
    r.body = st->body ? st->body : "";
    if (st->body)
        st->body[st->len] = 0;
    r.body_len = st->len;

    /* split the raw path, then unescape each segment */
    char *path = strdup(url);
    int split = path ? fds__path_split(path, r.seg, &r.nseg) : FDS_PATH_TOO_MANY;
    bool bad = split == FDS_PATH_TOO_MANY, bad_text = split == FDS_PATH_BAD_TEXT;
    if (!admit(srv, &r, url, o)) {
        /* answered */
    } else if (st->too_big) {
        fds__resp_errorf(o, 413, "content_too_long_exception",
                        "request body is too large: more than [%llu] bytes "
                        "(http.max_content_length)",
                        (unsigned long long)srv->max_body);
    } else if (bad_text) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "the request path must be valid UTF-8 without NUL "
                        "characters (%%00)");
    } else if (bad) {
        no_handler(&r, o);
    } else {
        route(&r, o);
    }
    shape_output(&r, o);
    free(path);
    for (unsigned i = 0; i < r.nparams; i++)
        free(r.params[i]);
    free(r.params);
}

/*
 * Write threads: Elasticsearch's "write" thread pool.  libmicrohttpd's
 * thread pool gives each connection one HTTP thread for its life, and a
 * thread serves its connections one request at a time: a _bulk request
 * (parsing, the translog commit, waiting for write buffer room: 200-300
 * ms for 5,000 documents at 1M) held up every search on a connection that
 * shared its thread for as long (measured: searches stalled 140-300 ms
 * beside a _bulk loop, docs/benchmarks.md "Searches beside a _bulk
 * loop").  So a request whose route writes (R_WRITES) is handed to
 * a write thread (as many as HTTP threads, --threads): its connection is
 * suspended (MHD_suspend_connection), a write thread runs serve() and
 * resumes it, and libmicrohttpd calls answer() again, which queues the
 * answer.  The HTTP threads go on reading and answering other
 * connections meanwhile.  The queue holds at most one request per
 * connection (the connection waits for its answer), so the connection cap
 * bounds it.  Once fds_http_stop has begun, requests run inline.
 */
struct write_job {
    write_job *next;
    struct MHD_Connection *conn;
    req_state *st;
    char *url, *method;
};

/* The write threads' nice value (fds_thread_lower), the flusher's and
 * the merge thread's (FDS__BACKGROUND_NICE, store_int.h): a _bulk loop
 * keeps them busy, and at nice 0 they took the CPU from the searches
 * beside it (1M docs, the loop at 51k docs/s: search p99 beside it 2.8x
 * idle, 1.2-1.5x at nice 10; docs/benchmarks.md, "Write threads at nice
 * 10").  A lock one holds is not held long for it: nice 10 still gets
 * about a tenth of what nice 0 wants of a core. */
#define FDS_WRITE_NICE 10

static void *write_main(void *arg)
{
    fds_http_server *srv = arg;
    fds_thread_lower("fds-write", FDS_WRITE_NICE);
    pthread_mutex_lock(&srv->wq_mu);
    for (;;) {
        while (!srv->wq_head && !srv->wq_stop)
            pthread_cond_wait(&srv->wq_cv, &srv->wq_mu);
        write_job *j = srv->wq_head;
        if (!j)
            break; /* stopping, and every queued request answered */
        srv->wq_head = j->next;
        if (!srv->wq_head)
            srv->wq_tail = NULL;
        pthread_mutex_unlock(&srv->wq_mu);
        fds_resp o = {0};
        serve(srv, j->conn, j->st, j->url, j->method, &o);
        j->st->out = o;
        j->st->answered = true;
        MHD_resume_connection(j->conn);
        free(j->url);
        free(j->method);
        free(j);
        pthread_mutex_lock(&srv->wq_mu);
    }
    pthread_mutex_unlock(&srv->wq_mu);
    return NULL;
}

/* Does the request go to a write thread (its route writes)? */
static bool route_writes(fds_http_server *srv, struct MHD_Connection *conn,
                         const char *url, const char *method)
{
    char *path = strdup(url);
    fds_req r = {.store = srv->store, .method = method, .conn = conn, .url = url};
    bool w = false;
    unsigned allowed;
    if (path && fds__path_split(path, r.seg, &r.nseg) == 0) {
        const route_def *rt = route_find(&r, &allowed);
        w = rt && (rt->methods & R_WRITES);
    }
    free(path);
    return w;
}

/* Hand a write request to the write threads: true when queued (the
 * connection is suspended until its answer is made), false to serve it
 * here (not a write, no write threads, stopping, out of memory). */
static bool write_defer(fds_http_server *srv, struct MHD_Connection *conn,
                        req_state *st, const char *url, const char *method)
{
    if (!srv->nwriters || st->too_big || !route_writes(srv, conn, url, method))
        return false;
    write_job *j = calloc(1, sizeof *j);
    if (j) {
        j->conn = conn;
        j->st = st;
        j->url = strdup(url);
        j->method = strdup(method);
    }
    if (!j || !j->url || !j->method) {
        if (j) {
            free(j->url);
            free(j->method);
        }
        free(j);
        return false;
    }
    pthread_mutex_lock(&srv->wq_mu);
    if (srv->wq_stop) {
        pthread_mutex_unlock(&srv->wq_mu);
        free(j->url);
        free(j->method);
        free(j);
        return false;
    }
    MHD_suspend_connection(conn);
    if (srv->wq_tail)
        srv->wq_tail->next = j;
    else
        srv->wq_head = j;
    srv->wq_tail = j;
    pthread_cond_signal(&srv->wq_cv);
    pthread_mutex_unlock(&srv->wq_mu);
    return true;
}

/* Stop the write threads once every queued request is answered; later
 * requests run inline. */
static void writers_stop(fds_http_server *srv)
{
    if (!srv->writers)
        return;
    pthread_mutex_lock(&srv->wq_mu);
    srv->wq_stop = true;
    pthread_cond_broadcast(&srv->wq_cv);
    pthread_mutex_unlock(&srv->wq_mu);
    for (unsigned i = 0; i < srv->nwriters; i++)
        pthread_join(srv->writers[i], NULL);
    free(srv->writers);
    srv->writers = NULL; /* nwriters stays: wq_stop sends requests inline */
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    struct fds_http_server *srv = cls;
    req_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof *st);
        if (!st)
            return MHD_NO;
        *con_cls = st;
        st->guard_refusal = fds__guard_head(srv->guard, conn);
        fds_resp o = {0};
        if (early_answer(srv, conn, st, &o))
            return queue_answer(conn, &o);
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        fds__guard_body(srv->guard, conn, n);
        if (st->len + n > srv->max_body)
            return body_over_limit(srv, conn);
        if (st->len + n + 1 > st->cap) {
            size_t cap = st->cap ? st->cap : 16384;
            while (cap < st->len + n + 1)
                cap *= 2;
            char *q = realloc(st->body, cap);
            if (!q) {
                st->too_big = true;
                return MHD_YES;
            }
            st->body = q;
            st->cap = cap;
        }
        memcpy(st->body + st->len, upload, n);
        st->len += n;
        return MHD_YES;
    }
    if (st->answered) { /* resumed: a write thread made the answer */
        fds_resp o = st->out;
        st->out.body = NULL;
        return queue_answer(conn, &o);
    }
    fds__guard_busy(srv->guard, conn);
    if (write_defer(srv, conn, st, url, method))
        return MHD_YES;
    fds_resp o = {0};
    serve(srv, conn, st, url, method, &o);
    return queue_answer(conn, &o);
}

static char *read_pem(const char *path, fds_err *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n = -1;
    if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = 0;
        fclose(f);
        return buf;
    }
    if (f)
        fclose(f);
    free(buf);
    fds_err_setk(err, FDS_EIO, FDS_KIND_IO, "cannot read [%s]", path);
    return NULL;
}

/* libmicrohttpd's error log, at most FDS_HTTP_LOG_PER_S lines a second:
 * every connection the guard cuts is logged, and a flood of slow clients
 * must not become a flood of log lines. */
#define FDS_HTTP_LOG_PER_S 20

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static time_t second;
    static unsigned lines, dropped;
    time_t now = time(NULL);
    pthread_mutex_lock(&mu);
    if (now != second) {
        if (dropped)
            fprintf(stderr, "fieldstore: %u more libmicrohttpd messages dropped\n",
                    dropped);
        second = now;
        lines = dropped = 0;
    }
    if (lines < FDS_HTTP_LOG_PER_S) {
        lines++;
        vfprintf(stderr, fmt, ap);
    } else {
        dropped++;
    }
    pthread_mutex_unlock(&mu);
}

/* The soft connection cap: as asked, but within RLIMIT_NOFILE. */
static unsigned connection_cap(unsigned want)
{
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY) {
        rlim_t room = rl.rlim_cur > FDS_HTTP_FD_RESERVE + FDS_HTTP_REFUSAL_HEADROOM
                          ? rl.rlim_cur - FDS_HTTP_FD_RESERVE - FDS_HTTP_REFUSAL_HEADROOM
                          : 64;
        if (want > room) {
            fprintf(stderr, "fieldstore: connection limit %u lowered to %u "
                            "(RLIMIT_NOFILE %llu)\n", want, (unsigned)room,
                    (unsigned long long)rl.rlim_cur);
            want = (unsigned)room;
        }
    }
    return want;
}

int fds_http_start(fds_store *store, const fds_http_options *opt,
                   fds_http_server **out, fds_err *err)
{
    fds_http_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return FDS_ENOMEM;
    srv->store = store;
    srv->max_body = opt->max_body ? opt->max_body : FDS_HTTP_MAX_BODY;
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(opt->port);
    int rc = 0;
    if (inet_pton(AF_INET, opt->bind ? opt->bind : "127.0.0.1", &addr.sin_addr) != 1) {
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                         "bad bind address [%s]", opt->bind);
        goto fail;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                     MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    if (opt->tls_cert || opt->tls_key) {
        if (!opt->tls_cert || !opt->tls_key) {
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                             "HTTPS needs both --tls-cert and --tls-key");
            goto fail;
        }
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                             "this libmicrohttpd was built without TLS "
                             "(MHD_FEATURE_TLS); HTTPS is not available");
            goto fail;
        }
        if (!(srv->tls_cert = read_pem(opt->tls_cert, err)) ||
            !(srv->tls_key = read_pem(opt->tls_key, err))) {
            rc = FDS_EIO;
            goto fail;
        }
        flags |= MHD_USE_TLS;
    }
    if (opt->users && (rc = fds__users_load(opt->users, &srv->users, err)))
        goto fail;
    unsigned threads = opt->threads;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 2;
    }
    fds__guard_opts go = {
        .head_timeout_s = opt->head_timeout_s ? opt->head_timeout_s : FDS_HTTP_HEAD_TIMEOUT_S,
        .idle_timeout_s = FDS_HTTP_IDLE_TIMEOUT_S,
        .min_body_rate = opt->min_body_rate ? opt->min_body_rate : FDS_HTTP_MIN_BODY_RATE,
        .max_connections = connection_cap(opt->max_connections ? opt->max_connections
                                                               : FDS_HTTP_MAX_CONNECTIONS),
        .max_per_ip = opt->max_per_ip ? opt->max_per_ip : FDS_HTTP_MAX_PER_IP};
    if ((rc = fds__guard_create(&go, &srv->guard)) || (rc = fds__ctx_start()) ||
        (rc = fds__tasks_start(store)) || (rc = fds__async_start()))
        goto fail;
    pthread_mutex_init(&srv->wq_mu, NULL);
    pthread_cond_init(&srv->wq_cv, NULL);
    srv->wq_ready = true;
    if (!(srv->writers = calloc(threads, sizeof *srv->writers))) {
        rc = FDS_ENOMEM;
        goto fail;
    }
    /* fewer write threads than asked still work; none: requests inline */
    while (srv->nwriters < threads &&
           !pthread_create(&srv->writers[srv->nwriters], NULL, write_main, srv))
        srv->nwriters++;
    /* TLS options must come before the end marker; an empty pair is skipped */
    srv->d = MHD_start_daemon(
        flags, 0, NULL, NULL, answer, srv,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_UNESCAPE_CALLBACK, keep_raw, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, fds__guard_notify, srv->guard,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)FDS_HTTP_IDLE_TIMEOUT_S,
        MHD_OPTION_CONNECTION_LIMIT, go.max_connections + FDS_HTTP_REFUSAL_HEADROOM,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        srv->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, srv->tls_cert,
        MHD_OPTION_HTTPS_MEM_KEY, srv->tls_key,
        MHD_OPTION_END);
    if (!srv->d) {
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_BIND,
                         "cannot listen on %s:%u (port in use%s?)",
                         opt->bind ? opt->bind : "127.0.0.1", opt->port,
                         srv->tls_cert ? ", or a bad certificate or key" : "");
        goto fail;
    }
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : opt->port;
    *out = srv;
    return 0;
fail:
    fds_http_stop(srv);
    return rc;
}

void fds_http_stop(fds_http_server *srv)
{
    if (!srv)
        return;
    writers_stop(srv); /* no connection stays suspended */
    if (srv->d)
        MHD_stop_daemon(srv->d);
    if (srv->wq_ready) {
        pthread_mutex_destroy(&srv->wq_mu);
        pthread_cond_destroy(&srv->wq_cv);
    }
    fds__async_stop();
    fds__tasks_stop();
    fds__ctx_stop();
    fds__guard_free(srv->guard);
    fds__users_free(srv->users);
    free(srv->tls_cert);
    free(srv->tls_key);
    free(srv);
}

uint16_t fds_http_port(const fds_http_server *srv)
{
    return srv->port;
}
