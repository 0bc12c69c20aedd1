/*
 * search_api.c: the `_search`, `_count`, `_search_shards` and `_msearch`
 * handlers over an index expression (index_expr.h): `/{expr}/_search`,
 * `/_search`, `/_all/_count`, ...  Each checks its URL, resolves the
 * indices and their alias filters, begins a scroll or turns to a point in
 * time (search_ctx.c), and has search_run.c answer the search over the
 * shards.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_clock.h"
#include "fds_strbuf.h"
#include "handlers.h"
#include "index_expr.h"
#include "node.h"
#include "request.h"
#include "response.h"
#include "search_api.h"
#include "search_ctx.h"
#include "search_run.h"
#include "search_stats.h"
#include "shard_search.h"

/* "scroll", "profile" and "allow_partial_search_results" (false: a search
 * with a failed shard fails whole) first: `_count` takes the list without
 * them, `_async_search` without "scroll".
 * routing narrows the shards searched; preference (one copy of each
 * shard), request_cache, search_type, batched_reduce_size and
 * ccs_minimize_roundtrips change nothing an answer shows; typed_keys names
 * the aggregations "type#name"; ignore_throttled skips frozen indices, and
 * no index here is frozen (OpenSearch Dashboards and Grafana send it). */
static const char *const SEARCH_OK_PARAMS[] = {
    "scroll", "profile", "allow_partial_search_results", "size", "from", "df", "default_operator", "q", "track_total_hits", "_source",
    "_source_includes", "_source_excludes", "sort", "explain", "version",
    "seq_no_primary_term", "stored_fields", "track_scores", "routing",
    "preference", "request_cache", "allow_no_indices", "ignore_unavailable",
    "expand_wildcards", "search_type", "rest_total_hits_as_int", "typed_keys",
    "batched_reduce_size", "ccs_minimize_roundtrips", "terminate_after",
    "analyzer", "analyze_wildcard", "lenient", "docvalue_fields", "min_score",
    "include_named_queries_score", "ignore_throttled",
    "max_concurrent_shard_requests", NULL};
const char *const *const fds__search_url_params = SEARCH_OK_PARAMS;
static const char *req_param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}

/* The indices of a search's path expression (with the expression URL
 * parameters); /_search and /_count have none: every index.  Returns 0 or
 * the error in `e`; `opts` gets what the URL says. */
static int search_indices(fds_req *r, fds_index_expr_opts *opts,
                          fds_index ***ixs, size_t *n, fds_err *e)
{
    *opts = FDS_INDEX_EXPR_SEARCH_DEFAULTS;
    const char *expr = r->seg[0][0] == '_' && r->nseg == 1 ? NULL : r->seg[0];
    int rc = fds_index_expr_opts_read(req_param_cb, r, opts, e);
    return rc ? rc : fds_index_expr_resolve(r->store, expr, opts, ixs, n, e);
}

static const char *const SEARCH_SHARDS_PARAMS[] = {
    FDS_INDEX_EXPR_PARAMS, "routing", "preference", "local", "master_timeout",
    NULL};

/* GET|POST /{index}/_search_shards (SearchShardsAction): the shards a
 * search of the expression would ask (fds_shard_search_plan: `routing` narrows them
 * as it narrows a search), each group one shard's copies -- the primary,
 * on the one node. */
void fds__h_search_shards(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, SEARCH_SHARDS_PARAMS))
        return;
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts;
    fds_index **ixs = NULL;
    size_t n = 0;
    if (search_indices(r, &opts, &ixs, &n, &e))
        return fds__resp_error(o, &e);
    fds_shard_search s = {0};
    if (fds_shard_search_plan(fds__req_param(r, "routing"), false, ixs, n, &s)) {
        fds_index_expr_free(ixs, n);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    cJSON *j = cJSON_CreateObject();
    cJSON *node = cJSON_AddObjectToObject(cJSON_AddObjectToObject(j, "nodes"),
                                          FDS__NODE_ID);
    cJSON_AddStringToObject(node, "name", FDS__NODE_NAME);
    cJSON_AddStringToObject(node, "ephemeral_id", FDS__NODE_ID);
    cJSON_AddStringToObject(node, "transport_address", "127.0.0.1:9300");
    cJSON *indices = cJSON_AddObjectToObject(j, "indices");
    for (size_t i = 0; i < n; i++)
        cJSON_AddObjectToObject(indices, fds_index_name(ixs[i]));
    cJSON *groups = cJSON_AddArrayToObject(j, "shards");
    for (size_t k = 0; k < s.n; k++) {
        cJSON *copy = cJSON_CreateObject();
        cJSON_AddStringToObject(copy, "state", "STARTED");
        cJSON_AddBoolToObject(copy, "primary", 1);
        cJSON_AddStringToObject(copy, "node", FDS__NODE_ID);
        cJSON_AddNullToObject(copy, "relocating_node");
        cJSON_AddNumberToObject(copy, "shard", s.sh[k].shard);
        cJSON_AddStringToObject(copy, "index", fds_index_name(s.sh[k].ix));
        cJSON *g = cJSON_CreateArray();
        cJSON_AddItemToArray(g, copy);
        cJSON_AddItemToArray(groups, g);
    }
    free(s.sh);
    free(s.ok);
    fds_index_expr_free(ixs, n);
    fds__resp_json(o, 200, j);
}

void fds__h_search(fds_req *r, fds_resp *o, bool count)
{
    long long t0 = (long long)fds_mono_us();
    if (!fds__req_check_params(r, o, SEARCH_OK_PARAMS + (count ? 3 : 0)))
        return;
    /* the parameters that change nothing an answer shows still take only
     * the values Elasticsearch takes (RestSearchAction parses them) */
    static const char *const flags[] = {"request_cache", "ccs_minimize_roundtrips",
                                        "typed_keys"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (!fds__req_param_only(r, o, flags[i], -1))
            return;
    const char *brs = fds__req_param(r, "batched_reduce_size");
    if (brs) {
        char *end;
        long v = strtol(brs, &end, 10);
        if (end == brs || *end || v < 2)
            return fds__resp_errorf(o, 400, "action_request_validation_exception",
                                   "Validation Failed: 1: batchedReduceSize must "
                                   "be >= 2;");
    }
    /* max_concurrent_shard_requests bounds the shards queried at once (a
     * search queries up to one per online core: fds_shard_search); Kibana
     * sends it to _async_search.  The value must be one Elasticsearch takes
     * (SearchRequest.validate).  pre_filter_shard_size is not taken: no
     * search here has a pre-filter (can_match) phase for it to start. */
    static const struct { const char *name, *what; } bounds[] = {
        {"max_concurrent_shard_requests", "maxConcurrentShardRequests"}};
    for (size_t i = 0; i < sizeof bounds / sizeof *bounds; i++) {
        const char *bv = fds__req_param(r, bounds[i].name);
        char *end;
        long v = bv ? strtol(bv, &end, 10) : 1;
        if (bv && (end == bv || *end || v < 1))
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "%s must be >= 1", bounds[i].what);
    }
    /* checked before the indices are resolved, as Elasticsearch validates
     * the request first */
    const char *ta = fds__req_param(r, "terminate_after");
    long long tav = 0;
    if (ta) {
        char *end;
        tav = strtoll(ta, &end, 10);
        if (!*ta || *end || tav < 0)
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "terminateAfter must be > 0");
    }
    if (!count && fds__body_has_pit(r))
        return fds__pit_search(r, o);
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = FDS_INDEX_EXPR_SEARCH_DEFAULTS;
    fds_index **ixs = NULL;
    char **filters = NULL; /* per index, from filtered aliases */
    size_t n = 0;
    /* /_search and /_count have no expression: every index */
    const char *expr = r->seg[0][0] == '_' && r->nseg == 1 ? NULL : r->seg[0];
    if (fds_index_expr_opts_read(req_param_cb, r, &opts, &e))
        return fds__resp_error(o, &e);
    opts.take_failed = true; /* a red index's shards fail in _shards */
    if (fds_index_expr_resolve_filtered(r->store, expr, &opts, &ixs, &n,
                                        &filters, &e))
        return fds__resp_error(o, &e);
    const char *st = fds__req_param(r, "search_type");
    if (st && strcmp(st, "query_then_fetch") && strcmp(st, "dfs_query_then_fetch")) {
        fds_index_expr_free(ixs, n);
        fds_index_expr_filters_free(filters, n);
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "No search type for [%s]", st);
    }
    /* a closed index among them: Elasticsearch's index_closed_exception,
     * unless ignore_unavailable leaves it out; a failed (red) one stays,
     * its shards failed with corrupt_index_exception in _shards.failures
     * (the answer itself when every shard searched is one of them), unless
     * ignore_unavailable leaves it out; a read block refuses */
    for (size_t i = 0; i < n; i++) {
        if (fds_index_check_block(ixs[i], FDS_BLOCK_LEVEL_READ, &e)) {
            fds_index_expr_free(ixs, n);
            fds_index_expr_filters_free(filters, n);
            return fds__resp_error(o, &e);
        }
        if (fds_index_is_open(ixs[i]) ||
            (fds_index_failure(ixs[i]) && !opts.ignore_unavailable &&
             !strcmp(fds_index_state(ixs[i]), "open")))
            continue;
        if (!opts.ignore_unavailable) {
            fds_err_clear(&e);
            fds_index_unavailable(ixs[i], &e);
            fds_index_expr_free(ixs, n);
            fds_index_expr_filters_free(filters, n);
            return fds__resp_error(o, &e);
        }
        fds_index_release(ixs[i]);
        free(filters[i]);
        memmove(ixs + i, ixs + i + 1, (n - i - 1) * sizeof *ixs);
        memmove(filters + i, filters + i + 1, (n - i - 1) * sizeof *filters);
        n--;
        i--;
    }
    bool profile = !count && (fds__req_param_bool(r, "profile", false) ||
                              fds__body_wants_profile(r->body, r->body_len));
    const char *routing = fds__req_param(r, "routing");
    fds__search_hooks hk;
    const char *scroll = count ? NULL : fds__req_param(r, "scroll");
    for (size_t i = 0; scroll && routing && i < n; i++)
        if (fds_index_nshards(ixs[i]) > 1) {
            fds_index_expr_free(ixs, n);
            fds_index_expr_filters_free(filters, n);
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "[routing] with [scroll] over an index of "
                                   "several shards is not supported");
        }
    if (scroll && !fds__scroll_begin(r, o, scroll, n, &hk)) {
        fds_index_expr_free(ixs, n);
        fds_index_expr_filters_free(filters, n);
        return;
    }
    fds__search_shards(r, o, ixs, filters, n, count, (uint64_t)tav, profile, t0,
                  &opts, routing, scroll ? &hk : NULL);
    if (scroll)
        fds__scroll_end(&hk, o);
}

/* ---- _msearch ---------------------------------------------------------------- */

/* URL parameters of _msearch; the search ones reach every item, as
 * defaults a header line's keys override (RestMultiSearchAction: the URL's
 * indices options are each item's default).  max_concurrent_searches and
 * max_concurrent_shard_requests are bounds: the items run one after
 * another, within any bound.  ignore_throttled: no index is frozen here. */
static const char *const MSEARCH_PARAMS[] = {
    "rest_total_hits_as_int", "typed_keys", "search_type",
    "ccs_minimize_roundtrips", "max_concurrent_searches",
    "max_concurrent_shard_requests",
    FDS_INDEX_EXPR_PARAMS, "routing", "ignore_throttled", NULL};
static const char *const MSEARCH_PASSED[] = {"rest_total_hits_as_int",
                                             "typed_keys", "search_type",
                                             "ccs_minimize_roundtrips",
                                             FDS_INDEX_EXPR_PARAMS, "routing"};

/* Keys of a header line (Elasticsearch's MultiSearchRequest), each passed
 * to its search as the URL parameter of the same name. */
static const char *const MSEARCH_HEADER_KEYS[] = {
    "search_type", "preference", "routing", "request_cache",
    "ignore_unavailable", "allow_no_indices", "expand_wildcards",
    "ccs_minimize_roundtrips", "ignore_throttled", "allow_partial_search_results"};

#define MSEARCH_KV_MAX 16 /* parameters of one item */

/* One item's search, from header `h` (NULL: none) and body line b[0..bl).
 * Its answer (status and body) goes to *o. */
static void msearch_item(fds_req *r, const cJSON *h, const char *b, size_t bl,
                         fds_resp *o)
{
    const char *kv[2 * MSEARCH_KV_MAX];
    char vals[MSEARCH_KV_MAX][24]; /* a boolean's or a number's text */
    unsigned nkv = 0;
    char *index = NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, h) {
        const char *k = it->string;
        if (!strcmp(k, "index") || !strcmp(k, "indices")) {
            /* names as text (XContentMapValues.nodeStringArrayValue: a
             * number is its digits); anything else is refused, never read
             * as "every index" */
            fds_strbuf ib = {0};
            bool many = cJSON_IsArray(it), ok = true;
            for (const cJSON *x = many ? it->child : it; x && ok;
                 x = many ? x->next : NULL) {
                if (cJSON_IsString(x))
                    fds_strbuf_printf(&ib, "%s%s", ib.len ? "," : "", x->valuestring);
                else if (cJSON_IsNumber(x))
                    fds_strbuf_printf(&ib, "%s%.17g", ib.len ? "," : "", x->valuedouble);
                else
                    ok = false;
            }
            if (!ok || ib.oom) {
                fds_strbuf_free(&ib);
                free(index);
                if (ok)
                    return fds__resp_errorf(o, 500, "exception", "out of memory");
                return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                       "[%s] in an msearch header must be an index "
                                       "name or a list of them", k);
            }
            free(index);
            index = ib.p ? ib.p : strdup("");
            continue;
        }
        size_t j = 0;
        while (j < sizeof MSEARCH_HEADER_KEYS / sizeof *MSEARCH_HEADER_KEYS &&
               strcmp(k, MSEARCH_HEADER_KEYS[j]))
            j++;
        if (j == sizeof MSEARCH_HEADER_KEYS / sizeof *MSEARCH_HEADER_KEYS ||
            !strcmp(k, "ignore_throttled"))
            continue; /* checked before (msearch_header_ok); no index is
                         frozen here, so ignore_throttled has nothing to do */
        if (nkv == MSEARCH_KV_MAX)
            break;
        if (cJSON_IsBool(it)) {
            snprintf(vals[nkv], sizeof vals[nkv], "%s", cJSON_IsTrue(it) ? "true" : "false");
            kv[2 * nkv + 1] = vals[nkv];
        } else if (cJSON_IsNumber(it) &&
                   (!strcmp(k, "preference") || !strcmp(k, "routing"))) {
            /* read with nodeStringValue: OpenSearch Dashboards sends its
             * session id, a number, as the preference */
            snprintf(vals[nkv], sizeof vals[nkv], "%.17g", it->valuedouble);
            kv[2 * nkv + 1] = vals[nkv];
        } else if (cJSON_IsString(it)) {
            kv[2 * nkv + 1] = it->valuestring;
        } else if (cJSON_IsArray(it) && !strcmp(k, "expand_wildcards") &&
                   cJSON_IsString(it->child)) {
            kv[2 * nkv + 1] = it->child->valuestring; /* the first of a list */
        } else {
            free(index);
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "[%s] in the metadata section must be a "
                                   "string or a boolean", k);
        }
        kv[2 * nkv++] = k;
    }
    for (size_t i = 0; i < sizeof MSEARCH_PASSED / sizeof *MSEARCH_PASSED &&
                       nkv < MSEARCH_KV_MAX; i++) {
        const char *v = fds__req_param(r, MSEARCH_PASSED[i]);
        bool given = false;
        for (unsigned k = 0; k < nkv; k++)
            given |= !strcmp(kv[2 * k], MSEARCH_PASSED[i]);
        if (v && !given) {
            kv[2 * nkv] = MSEARCH_PASSED[i];
            kv[2 * nkv++ + 1] = v;
        }
    }
    if (!index && r->nseg == 2) /* /{index}/_msearch: the default */
        index = strdup(r->seg[0]);
    char search[] = "_search";
    fds_req sub = {.store = r->store, .method = "POST", .url = r->url,
                   .body = b, .body_len = bl, .start_us = (long long)fds_mono_us(),
                   .kv = kv, .nkv = nkv};
    if (index && *index) {
        sub.seg[0] = index;
        sub.seg[1] = search;
        sub.nseg = 2;
    } else {
        sub.seg[0] = search;
        sub.nseg = 1;
    }
    /* the body line is searched as a body: a NUL ends it for the parser */
    char *body = malloc(bl + 1);
    if (!body) {
        free(index);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    memcpy(body, b, bl);
    body[bl] = 0;
    sub.body = body;
    fds__h_search(&sub, o, false);
    fds__req_sub_done(&sub);
    free(body);
    free(index);
}

/* A header line's keys, checked before any search runs (as Elasticsearch
 * refuses the whole request when it reads one it does not know).  0, or
 * 400 written to `o`. */
static bool msearch_header_ok(const cJSON *h, fds_resp *o)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, h) {
        const char *k = it->string;
        bool known = !strcmp(k, "index") || !strcmp(k, "indices");
        for (size_t j = 0; !known && j < sizeof MSEARCH_HEADER_KEYS /
                                              sizeof *MSEARCH_HEADER_KEYS; j++)
            known = !strcmp(k, MSEARCH_HEADER_KEYS[j]);
        if (!known) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "key [%s] is not supported in the metadata section", k);
            return false;
        }
    }
    return true;
}

/* One header/body pair of the request. */
typedef struct msearch_pair {
    cJSON *h;
    const char *b;
    size_t bl;
} msearch_pair;

void fds__h_msearch(fds_req *r, fds_resp *o)
{
    long long t0 = (long long)fds_mono_us();
    if (!fds__req_check_params(r, o, MSEARCH_PARAMS))
        return;
    const char *mc = fds__req_param(r, "max_concurrent_searches");
    if (mc && (atoi(mc) < 1 || strspn(mc, "0123456789") != strlen(mc)))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "maxConcurrentSearches must be positive");
    if (r->body_len == 0)
        return fds__resp_errorf(o, 400, "parse_exception",
                               "request body or source parameter is required");
    if (r->body[r->body_len - 1] != '\n')
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "The msearch request must be terminated by a "
                               "newline [\n]");
    /* read and check every pair first: at most one per two lines */
    size_t cap = 1;
    for (size_t i = 0; i < r->body_len; i++)
        cap += r->body[i] == '\n';
    msearch_pair *pairs = calloc(cap / 2 + 1, sizeof *pairs);
    if (!pairs)
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    size_t np = 0;
    bool ok = true;
    const char *p = r->body, *end = r->body + r->body_len;
    while (ok && p < end) {
        const char *hl = memchr(p, '\n', (size_t)(end - p));
        size_t hlen = (size_t)(hl - p);
        if (hlen == 0 || (hlen == 1 && p[0] == '\r')) {
            p = hl + 1; /* a blank line between pairs */
            continue;
        }
        const char *b = hl + 1;
        if (b >= end) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "msearch header line %zu has no body line", np + 1);
            ok = false;
            break;
        }
        const char *bl = memchr(b, '\n', (size_t)(end - b));
        fds_err e;
        fds_err_clear(&e);
        cJSON *h = cJSON_ParseWithLength(p, hlen);
        if (!cJSON_IsObject(h) || fds_json_check_body(p, hlen, &e)) {
            cJSON_Delete(h);
            if (e.code)
                fds__resp_error(o, &e);
            else
                fds__resp_errorf(o, 400, "parse_exception",
                                "msearch header line %zu is not a JSON object",
                                np + 1);
            ok = false;
            break;
        }
        pairs[np++] = (msearch_pair){h, b, (size_t)(bl - b)};
        ok = msearch_header_ok(h, o);
        p = bl + 1;
    }
    fds_strbuf out = {0}; /* the answers, comma-separated */
    for (size_t i = 0; ok && i < np; i++) {
        fds_resp item = {0};
        msearch_item(r, pairs[i].h, pairs[i].b, pairs[i].bl, &item);
        if (i)
            fds_strbuf_puts(&out, ",");
        /* each answer with its status, as MultiSearchResponse writes it */
        if (item.status == 200 && item.len && item.body[item.len - 1] == '}') {
            fds_strbuf_put(&out, item.body, item.len - 1);
            fds_strbuf_puts(&out, ",\"status\":200}");
        } else if (item.body && item.len) {
            fds_strbuf_put(&out, item.body, item.len);
        } else {
            fds_strbuf_printf(&out, "{\"status\":%d}", item.status);
        }
        free(item.body);
    }
    for (size_t i = 0; i < np; i++)
        cJSON_Delete(pairs[i].h);
    free(pairs);
    if (!ok) {
        free(out.p);
        return;
    }
    fds_strbuf all = {0};
    fds_strbuf_printf(&all, "{\"took\":%lld,\"responses\":[",
                      ((long long)fds_mono_us() - t0) / 1000);
    if (out.len)
        fds_strbuf_put(&all, out.p, out.len);
    fds_strbuf_puts(&all, "]}");
    bool oom = out.oom || all.oom;
    free(out.p);
    if (oom) {
        free(all.p);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    fds__resp_raw(o, 200, all.p, all.len, NULL);
}
