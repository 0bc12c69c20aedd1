/*
 * router.c: the route table -- every endpoint's path pattern, methods and
 * handler, the only file that knows every handler -- and the answers of
 * Elasticsearch's RestController when no route fits (400 no handler,
 * 405 with Allow, OPTIONS).
 */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "index_expr.h" /* FDS_INDEX_EXPR_PARAMS */
#include "request.h"
#include "response.h"
#include "router.h"

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
 * the GET answer's headers (server.c's queue_answer); M_HEAD marks the routes
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
static const char *const P_DISK_USAGE[] = {EXPR_PARAMS, "run_expensive_tasks", "flush", NULL};
static const char *const P_CAT[] = {CAT_PARAMS, "local", NULL};
static const char *const P_RESIZE[] = {"copy_settings", NULL};
static const char *const P_CAT_ALLOCATION[] = {CAT_PARAMS, "bytes", "local", NULL};
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
    {"_cluster/allocation/explain", M_GET | M_POST, fds__h_allocation_explain, NULL},
    {"_cat", M_GET, fds__h_cat_help, P_NONE},
    {"_cat/indices", M_GET, fds__h_cat_indices, P_CAT_INDICES},
    {"_cat/indices/{}", M_GET, fds__h_cat_indices, P_CAT_INDICES},
    {"_cat/segments", M_GET, fds__h_cat_segments, P_CAT_SEGMENTS},
    {"_cat/segments/{}", M_GET, fds__h_cat_segments, P_CAT_SEGMENTS},
    {"_cat/shards", M_GET, fds__h_cat_shards, P_CAT_SHARDS},
    {"_cat/shards/{}", M_GET, fds__h_cat_shards, P_CAT_SHARDS},
    {"_cat/nodes", M_GET, fds__h_cat_nodes, P_CAT},
    {"_cat/allocation", M_GET, fds__h_cat_allocation, P_CAT_ALLOCATION},
    {"_cat/allocation/{}", M_GET, fds__h_cat_allocation, P_CAT_ALLOCATION},
    {"_cat/count", M_GET, fds__h_cat_count, NULL},
    {"_cat/count/{}", M_GET, fds__h_cat_count, NULL},
    {"_cat/health", M_GET, fds__h_cat_health, NULL},
    {"_nodes/stats", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/stats/{}", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/stats/{}/{}", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/{}/stats", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/{}/stats/{}", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes/{}/stats/{}/{}", M_GET, fds__h_nodes_stats, P_NONE},
    {"_nodes", M_GET, fds__h_nodes_info, NULL},
    {"_nodes/{}", M_GET, fds__h_nodes_info, NULL},
    {"_nodes/{}/{}", M_GET, fds__h_nodes_info, NULL},
    {"_resolve/index/{}", M_GET, fds__h_resolve_index, NULL},
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
    {"{}/_disk_usage", M_POST | R_WRITES, fds__h_disk_usage, P_DISK_USAGE},
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
void fds__route_no_handler(fds_req *r, fds_resp *o)
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

void fds__route(fds_req *r, fds_resp *o)
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
    fds__route_no_handler(r, o);
}

bool fds__route_writes(const fds_req *r)
{
    unsigned allowed;
    const route_def *rt = route_find(r, &allowed);
    return rt && (rt->methods & R_WRITES);
}
