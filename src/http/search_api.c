/*
 * search_api.c: `_search`, `_count`, `_search_shards` and `_msearch` over
 * an index expression (index_expr.h): `/{expr}/_search`, `/_search`,
 * `/_all/_count`, ...  This file parses each shard's request (the body
 * against the shard's index's mapping, with the URL parameters, alias
 * filters and indices_boost) and answers; the shard coordinator
 * (src/search/shard_search.h) plans the shards, runs the query phases,
 * merges the hits and fetches the page.  A shard whose search fails is a
 * shard failure in `_shards.failures` while the others answer; when all
 * fail, the first failure is the answer (as Elasticsearch's "all shards
 * failed" carries its root cause).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_strbuf.h"
#include "fds_text.h"
#include "http_int.h"
#include "index_expr.h"
#include "search_ctx.h"
#include "aggs_render.h"
#include "search_render.h"
#include "search_stats.h"
#include "shard_search.h"

/* URL parameters Elasticsearch's search accepts that we apply. */
static const char *const SEARCH_PARAMS[] = {
    "size", "from", "df", "default_operator", "analyzer", "analyze_wildcard",
    "lenient", "q", "track_total_hits", "_source", "_source_includes",
    "_source_excludes", "sort", "explain", "version", "seq_no_primary_term",
    "stored_fields", "rest_total_hits_as_int", "track_scores", "timeout",
    "docvalue_fields", "min_score", "include_named_queries_score"};

/* "scroll" and "profile" first: `_count` takes the list without them.
 * routing narrows the shards searched; preference (one copy of each
 * shard), request_cache, search_type, batched_reduce_size and
 * ccs_minimize_roundtrips change nothing an answer shows; typed_keys names
 * the aggregations "type#name". */
static const char *const SEARCH_OK_PARAMS[] = {
    "scroll", "profile", "size", "from", "df", "default_operator", "q", "track_total_hits", "_source",
    "_source_includes", "_source_excludes", "sort", "explain", "version",
    "seq_no_primary_term", "stored_fields", "track_scores", "routing",
    "preference", "request_cache", "allow_no_indices", "ignore_unavailable",
    "expand_wildcards", "search_type", "rest_total_hits_as_int", "typed_keys",
    "batched_reduce_size", "ccs_minimize_roundtrips", "terminate_after",
    "analyzer", "analyze_wildcard", "lenient", "docvalue_fields", "min_score",
    "include_named_queries_score", NULL};
const char *const *const fds__search_url_params = SEARCH_OK_PARAMS;


/* The query phase counted in the index's search stats (search_stats.c). */
static uint64_t query_begin(fds_search_stats *ss)
{
    return fds__phase_begin(ss, FDS__PHASE_QUERY);
}

static uint64_t query_end(fds_search_stats *ss, uint64_t t0, bool ok)
{
    return fds__phase_end(ss, FDS__PHASE_QUERY, t0, ok);
}

static const fds_search_clock SEARCH_CLOCK = {
    .now_ns = fds__mono_ns, .query_begin = query_begin, .query_end = query_end};

/* Splice `,<member>` (plen bytes, e.g. `"profile":{...}`) before the
 * closing brace of the JSON object `*out` (*len bytes).  Returns 0 or
 * FDS_ENOMEM (then *out is unchanged). */
static int splice_member(char **out, size_t *len, const char *member, size_t plen)
{
    char *close = *out ? memrchr(*out, '}', *len) : NULL;
    char *n = member && close ? malloc(*len + plen + 2) : NULL;
    if (!n)
        return FDS_ENOMEM;
    /* memcpy, not printf: the hits' _source bytes are copied as they are */
    size_t head = (size_t)(close - *out), tail = *len - head, w = 0;
    memcpy(n, *out, head);
    n[head] = ',';
    memcpy(n + (w += head + 1), member, plen);
    memcpy(n + (w += plen), close, tail);
    n[w += tail] = 0;
    free(*out);
    *out = n;
    *len = w;
    return 0;
}

static int splice_profile(char **out, size_t *len, const fds__profile *p)
{
    char *prof = fds__profile_json(p);
    static const char key[] = "\"profile\":";
    fds_strbuf b = FDS_STRBUF_INIT;
    fds_strbuf_puts(&b, key);
    if (prof)
        fds_strbuf_puts(&b, prof);
    int rc = prof && !b.oom ? splice_member(out, len, b.p, b.len) : FDS_ENOMEM;
    fds_strbuf_free(&b);
    free(prof);
    return rc;
}

/* The shards' aggregations reduced (fds_aggs_reduce) and spliced into the
 * answer `*out` as `"aggregations":{...}`.  0 or an FDS_E* code (e
 * filled: too_many_buckets_exception, out of memory). */
static int splice_aggs(fds_req *r, const fds_shard_search *s, const fds_agg *root,
                       const fds_search_segment *segs, const fds_hit_source *hs,
                       char **out, size_t *len, fds_err *e)
{
    fds_agg_result *parts[s->nok ? s->nok : 1];
    size_t np = 0;
    for (size_t k = 0; k < s->nok; k++)
        if (s->sh[s->ok[k]].res.aggs) {
            /* top_hits' hits: the response's segment numbers */
            fds_aggs_rebase(s->sh[s->ok[k]].res.aggs, s->sh[s->ok[k]].seg0);
            parts[np++] = s->sh[s->ok[k]].res.aggs;
        }
    fds_agg_result *red = NULL;
    int rc = fds_aggs_reduce(root, parts, np, &red, e);
    if (rc)
        return rc;
    fds_strbuf b = FDS_STRBUF_INIT;
    rc = fds__aggs_render(&b, red, fds__req_param_bool(r, "typed_keys", false),
                          segs, hs, e);
    fds_agg_result_free(red);
    if (rc) {
        fds_strbuf_free(&b);
        return rc;
    }
    rc = b.oom ? FDS_ENOMEM : splice_member(out, len, b.p, b.len);
    fds_strbuf_free(&b);
    if (rc)
        fds_err_setk(e, rc, FDS_KIND_INTERNAL, "out of memory");
    return rc;
}

/* `"key":"id",` spliced after the opening brace of the JSON object `*out`
 * (*len bytes), as Elasticsearch puts `_scroll_id` and `pit_id` first.
 * Returns 0 or FDS_ENOMEM (then *out is unchanged). */
static int splice_id(char **out, size_t *len, const char *key, const char *id)
{
    fds_strbuf b = {0};
    fds_strbuf_puts(&b, "{");
    fds_strbuf_put_json_string(&b, key, strlen(key));
    fds_strbuf_puts(&b, ":");
    fds_strbuf_put_json_string(&b, id, strlen(id));
    if (*len > 2)
        fds_strbuf_puts(&b, ",");
    fds_strbuf_put(&b, *out + 1, *len - 1);
    if (b.oom) {
        free(b.p);
        return FDS_ENOMEM;
    }
    free(*out);
    *out = b.p;
    *len = b.len;
    return 0;
}

static void search_shards(fds_req *r, fds_resp *o, fds_index **ixs,
                          char **filters, size_t n, bool count, uint64_t tav,
                          bool profile, long long t0,
                          const fds_index_expr_opts *opts, const char *routing,
                          const fds__search_hooks *hk);

/* Parse the body for index `sh->ix` (with the URL parameters), or for no
 * index at all (`m` an empty mapping) when ix is NULL. */
static int parse_for(fds_req *r, const fds_mapping *m,
                     const fds_index_settings *set, bool count,
                     fds_search_request **req, fds_err *e)
{
    fds_search_limits lim;
    fds_search_limits_default(&lim);
    if (set) {
        lim.max_result_window = set->max_result_window;
        lim.max_docvalue_fields = set->max_docvalue_fields_search;
        lim.max_script_fields = set->max_script_fields;
        lim.max_terms_count = set->max_terms_count;
        lim.max_regex_length = set->max_regex_length;
        lim.max_rescore_window = set->max_rescore_window;
    }
    lim.lookup = fds__terms_lookup;
    lim.lookup_arg = r->store;
    int rc = fds_search_parse_limits(r->body, r->body_len, m, &lim,
                                     count ? 1 : 0, req, e);
    for (size_t i = 0; !rc && i < sizeof SEARCH_PARAMS / sizeof *SEARCH_PARAMS; i++) {
        const char *val = fds__req_param(r, SEARCH_PARAMS[i]);
        if (val)
            rc = fds_search_apply_param(*req, SEARCH_PARAMS[i], val, e);
    }
    return rc;
}

/* Before the query phase, on the request's thread: parse the body for the
 * shard's index and (the owner) acquire the index's view; take the
 * shard's run of segments.  `owner` is the index's first shard run, whose
 * view a later one shares.  With several shards each keeps its best
 * from + size hits (the page is cut after the merge). */
static void prepare_shard(fds_req *r, fds_shard_run *sh, const fds_shard_run *owner,
                          bool count, bool several, const fds__search_hooks *hk,
                          size_t k)
{
    fds_err_clear(&sh->err);
    fds_index_settings set;
    fds_index_get_settings(sh->ix, &set);
    if (hk && hk->req && (sh->req = hk->req(hk->arg, k))) {
        sh->rc = 0; /* held by a scroll: filtered and boosted already */
        sh->held_req = true;
    } else {
        if (hk && hk->scroll)
            set.max_result_window = UINT32_MAX; /* a scroll pages through all */
        sh->rc = parse_for(r, fds_index_mapping(sh->ix), &set, count, &sh->req,
                           &sh->err);
        /* FetchSourcePhase: a filter needs a source to filter */
        if (!sh->rc && (sh->req->nincludes || sh->req->nexcludes) &&
            !fds_mapping_source_enabled(fds_index_mapping(sh->ix)))
            sh->rc = fds_err_setk(&sh->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "unable to fetch fields from _source field: "
                                  "_source is disabled in the mappings for "
                                  "index [%s]", fds_index_name(sh->ix));
        if (!sh->rc && sh->alias_filter)
            sh->rc = fds_search_request_add_filter(sh->req, sh->alias_filter,
                                                   strlen(sh->alias_filter),
                                                   &sh->err);
        if (!sh->rc && sh->index_boost != 1.0f)
            sh->rc = fds_search_request_boost(sh->req, sh->index_boost, &sh->err);
    }
    if (!sh->rc && hk && hk->prepare)
        sh->rc = hk->prepare(hk->arg, k, sh->ix, sh->req, &sh->err);
    /* a scroll's or point in time's view, asked for once the shard is
     * ready */
    fds_index_view *held = NULL;
    bool use_held = !sh->rc && hk && hk->view;
    if (use_held)
        held = hk->view(hk->arg, k);
    fds_shard_run_ready(sh, owner, several, use_held ? &held : NULL);
}

/* A shard failure's cause as Elasticsearch prints it:
 * {"type","reason","index_uuid","index"}. */
static void put_cause(fds_strbuf *b, const fds_shard_run *sh)
{
    const char *type = fds__http_type(&sh->err);
    const char *name = fds_index_name(sh->ix), *uuid = fds_index_uuid(sh->ix);
    fds_strbuf_puts(b, "{\"type\":");
    fds_strbuf_put_json_string(b, type, strlen(type));
    fds_strbuf_puts(b, ",\"reason\":");
    fds_strbuf_put_json_string(b, sh->err.reason, strlen(sh->err.reason));
    fds_strbuf_puts(b, ",\"index_uuid\":");
    fds_strbuf_put_json_string(b, uuid, strlen(uuid));
    fds_strbuf_puts(b, ",\"index\":");
    fds_strbuf_put_json_string(b, name, strlen(name));
    fds_strbuf_puts(b, "}");
}

/* Failures a shard's query phase raises (Elasticsearch wraps them in
 * search_phase_execution_exception when every shard fails); the others are
 * the request's own and answer as they are. */
static bool shard_level(const fds_err *e)
{
    return e->kind == FDS_KIND_QUERY_SHARD || e->kind == FDS_KIND_NUMBER_FORMAT ||
           e->kind == FDS_KIND_PARSE;
}

/* Every shard failed with a shard-level cause: 400
 * search_phase_execution_exception "all shards failed", root causes one
 * per distinct cause, failed_shards each shard's (grouped). */
static void all_failed(fds_resp *o, const fds_shard_search *s)
{
    fds_strbuf b = {0};
    fds_strbuf_puts(&b, "{\"error\":{\"root_cause\":[");
    for (size_t i = 0; i < s->n; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = !strcmp(s->sh[k].err.reason, s->sh[i].err.reason);
        if (seen)
            continue;
        if (i)
            fds_strbuf_puts(&b, ",");
        put_cause(&b, &s->sh[i]);
    }
    fds_strbuf_puts(&b, "],\"type\":\"search_phase_execution_exception\","
                        "\"reason\":\"all shards failed\",\"phase\":\"query\","
                        "\"grouped\":true,\"failed_shards\":[");
    for (size_t i = 0; i < s->n; i++) {
        const char *name = fds_index_name(s->sh[i].ix);
        fds_strbuf_printf(&b, "%s{\"shard\":%u,\"index\":", i ? "," : "",
                          s->sh[i].shard);
        fds_strbuf_put_json_string(&b, name, strlen(name));
        fds_strbuf_puts(&b, ",\"node\":\"" FDS__NODE_ID "\",\"reason\":");
        put_cause(&b, &s->sh[i]);
        fds_strbuf_puts(&b, "}");
    }
    fds_strbuf_printf(&b, "]},\"status\":%d}", fds__http_status(&s->sh[0].err));
    if (b.oom) {
        free(b.p);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    fds__resp_raw(o, fds__http_status(&s->sh[0].err), b.p, b.len, NULL);
}

/* `_shards.failures` of the shards that failed, as a JSON array text
 * (malloc'd), or NULL when none failed. */
static char *failures_json(const fds_shard_search *s)
{
    if (s->nok == s->n)
        return NULL;
    fds_strbuf b = {0};
    fds_strbuf_puts(&b, "[");
    bool first = true;
    for (size_t i = 0; i < s->n; i++) {
        const fds_shard_run *sh = &s->sh[i];
        if (!sh->rc)
            continue;
        if (!first)
            fds_strbuf_puts(&b, ",");
        first = false;
        const char *name = fds_index_name(sh->ix);
        fds_strbuf_printf(&b, "{\"shard\":%u,\"index\":", sh->shard);
        fds_strbuf_put_json_string(&b, name, strlen(name));
        fds_strbuf_puts(&b, ",\"node\":\"" FDS__NODE_ID "\",\"reason\":");
        put_cause(&b, sh);
        fds_strbuf_puts(&b, "}");
    }
    fds_strbuf_puts(&b, "]");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static const char *req_param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}

/* The search of `s`'s shards rendered, or NULL with e filled. */
static char *render(fds_req *r, fds_shard_search *s,
                    const fds__search_hooks *hk, bool count, long long t0,
                    size_t *out_len, fds_err *e)
{
    fds_mapping *none = NULL;
    fds_search_request *empty = NULL;
    const fds_search_request *page = s->nok ? s->sh[s->ok[0]].req : NULL;
    if (!page) { /* no index: the body is still checked */
        none = fds_mapping_create();
        if (!none || parse_for(r, none, NULL, count, &empty, e)) {
            fds_mapping_free(none);
            if (!e->code)
                fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
            return NULL;
        }
        page = empty;
    }
    fds_search_request pg = *page; /* from/size as asked, not as run */
    if (s->nok) {
        pg.from = s->sh[s->ok[0]].from;
        pg.size = s->sh[s->ok[0]].size;
    }
    unsigned nseg = 0;
    for (size_t k = 0; k < s->nok; k++) {
        s->sh[s->ok[k]].seg0 = nseg;
        nseg += s->sh[s->ok[k]].nseg;
    }
    fds_search_segment *segs = calloc(nseg ? nseg : 1, sizeof *segs);
    fds_search_result merged, *res = s->nok == 1 ? &s->sh[s->ok[0]].res : &merged;
    memset(&merged, 0, sizeof merged);
    merged.max_score = NAN;
    int rc = segs ? 0 : FDS_ENOMEM;
    for (size_t k = 0; !rc && k < s->nok; k++) {
        fds_shard_run *sh = &s->sh[s->ok[k]];
        memcpy(segs + sh->seg0, sh->segs, sh->nseg * sizeof *segs);
    }
    char *fail = failures_json(s);
    fds_shards_info info = {.total = (unsigned)s->n,
                            .failed = (unsigned)(s->n - s->nok),
                            .failures = fail,
                            .terminated_early = s->terminate_after
                                                    ? s->terminated_early
                                                    : -1};
    if (!rc && s->nok > 1)
        rc = fds_shard_search_merge(s, &pg, &merged);
    if (!rc && hk && hk->page) { /* each hit's shard, for the cursors */
        size_t *shard = malloc((res->nhits ? res->nhits : 1) * sizeof *shard);
        unsigned *seg0 = malloc((s->n ? s->n : 1) * sizeof *seg0);
        rc = shard && seg0 ? 0 : FDS_ENOMEM;
        for (size_t k = 0; !rc && k < s->n; k++)
            seg0[k] = s->sh[k].seg0;
        for (size_t i = 0; !rc && i < res->nhits; i++)
            shard[i] = (size_t)(fds_shard_search_shard_of(s, res->hits[i].seg) - s->sh);
        if (!rc)
            hk->page(hk->arg, &pg, res, shard, seg0);
        free(shard);
        free(seg0);
    }
    char *out = NULL;
    if (!rc) {
        fds_hit_source hs = {.fetch = fds_shard_search_fetch, .meta = fds_shard_search_meta,
                             .index_of = fds_shard_search_index_of, .req_of = fds_shard_search_req_of,
                             .routing = fds_shard_search_routing, .shards = &info, .arg = s};
        fds_search_stats *ss[s->nok ? s->nok : 1];
        uint64_t f0[s->nok ? s->nok : 1];
        bool fetch = !count && res->nhits > 0;
        for (size_t k = 0; fetch && k < s->nok; k++) {
            ss[k] = fds_index_search_stats(s->sh[s->ok[k]].ix);
            f0[k] = fds__phase_begin(ss[k], FDS__PHASE_FETCH);
        }
        out = fds_search_render(&pg, res, segs, "",
                                (long)((fds__now_us() - t0) / 1000), &hs,
                                out_len, e);
        for (size_t k = 0; fetch && k < s->nok; k++)
            s->fetch_ns = fds__phase_end(ss[k], FDS__PHASE_FETCH, f0[k],
                                         out != NULL);
        if (!out)
            rc = e->code ? e->code : FDS_ENOMEM;
        if (out && !count && pg.aggs &&
            (rc = splice_aggs(r, s, pg.aggs, segs, &hs, &out, out_len, e))) {
            free(out);
            out = NULL;
        }
    }
    if (rc == FDS_ENOMEM && !e->code)
        fds_err_setk(e, rc, FDS_KIND_INTERNAL, "out of memory");
    free(merged.hits);
    free(merged.explain);
    free(merged.matched);
    free(fail);
    free(segs);
    fds_search_request_free(empty);
    fds_mapping_free(none);
    return out;
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
    long long t0 = fds__now_us();
    if (!fds__req_check_params(r, o, SEARCH_OK_PARAMS + (count ? 2 : 0)))
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
    /* checked before the indices are resolved, as Elasticsearch validates
     * the request first */
    const char *ta = fds__req_param(r, "terminate_after");
    long long tav = 0;
    if (ta && !count)
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "[terminate_after] is supported by _count only: "
                               "a search would have to collect its hits from the "
                               "first documents only");
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
    if (fds_index_expr_opts_read(req_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve_filtered(r->store, expr, &opts, &ixs, &n,
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
     * unless ignore_unavailable leaves it out; a read block refuses */
    for (size_t i = 0; i < n; i++) {
        if (fds_index_check_block(ixs[i], FDS_BLOCK_LEVEL_READ, &e)) {
            fds_index_expr_free(ixs, n);
            fds_index_expr_filters_free(filters, n);
            return fds__resp_error(o, &e);
        }
        if (fds_index_is_open(ixs[i]))
            continue;
        if (!opts.ignore_unavailable) {
            fds_err_clear(&e);
            fds_err_setk(&e, FDS_ECLOSED, FDS_KIND_INDEX_CLOSED, "closed");
            snprintf(e.index, sizeof e.index, "%s", fds_index_name(ixs[i]));
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
    search_shards(r, o, ixs, filters, n, count, (uint64_t)tav, profile, t0,
                  &opts, routing, scroll ? &hk : NULL);
    if (scroll)
        fds__scroll_end(&hk, o);
}

void fds__search_held(fds_req *r, fds_resp *o, fds_index **ixs, size_t n,
                      const fds__search_hooks *hk)
{
    search_shards(r, o, ixs, NULL, n, false, 0, false, fds__now_us(), NULL, NULL,
                  hk);
}

/* Drop ixs[0, n) and filters: the references too, unless `hk` holds them. */
static void drop_indices(fds_index **ixs, char **filters, size_t n,
                         const fds__search_hooks *hk)
{
    if (!hk || !hk->view)
        fds_index_expr_free(ixs, n);
    else
        free(ixs);
    fds_index_expr_filters_free(filters, n);
}

/* The search over indices ixs[0, n) (the array and, unless `hk` holds
 * them, its references are taken) answered into `o`: each index's shards
 * (those `routing` names, or all), or with `hk` one run per index.
 * filters[i]: the filtered aliases' filter of index i (NULL array or
 * entry: none); `opts` resolve the body's indices_boost (NULL: no boosts,
 * as for a held scroll whose requests carry them). */
static void search_shards(fds_req *r, fds_resp *o, fds_index **ixs,
                          char **filters, size_t n, bool count, uint64_t tav,
                          bool profile, long long t0,
                          const fds_index_expr_opts *opts, const char *routing,
                          const fds__search_hooks *hk)
{
    fds_err e;
    fds_err_clear(&e);
    const char *st = fds__req_param(r, "search_type");
    fds_shard_search s = {.terminate_after = tav, .clock = &SEARCH_CLOCK};
    float *boosts = calloc(n ? n : 1, sizeof *boosts);
    int prc = fds_shard_search_plan(routing, hk != NULL, ixs, n, &s);
    if (prc || !boosts) {
        free(s.sh);
        free(s.ok);
        free(boosts);
        drop_indices(ixs, filters, n, hk);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        boosts[i] = 1.0f;
    const char *bad = NULL;
    if (!count && opts &&
        fds_index_expr_boosts(r->store, r->body, r->body_len, opts, ixs, n,
                              boosts, &e))
        bad = "";
    else if ((profile && s.n != 1) ||
             (st && s.n > 1 && !strcmp(st, "dfs_query_then_fetch")))
        bad = profile ? "profile" : "search_type";
    if (bad) {
        free(s.sh);
        free(s.ok);
        free(boosts);
        drop_indices(ixs, filters, n, hk);
        if (!*bad)
            return fds__resp_error(o, &e);
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "[%s] is supported on one shard at a time; "
                               "[%zu] shards matched (each shard scores with "
                               "its own term statistics)", bad, s.n);
    }
    /* each run takes its index's alias filter and boost; the index
     * references move to their first shard runs */
    for (size_t k = 0, i = 0; k < s.n; k++) {
        if (k && s.sh[k].owner)
            i++;
        const char *f = filters ? filters[i] : NULL;
        s.sh[k].alias_filter = f ? strdup(f) : NULL;
        s.sh[k].index_boost = count ? 1.0f : boosts[i];
        if (f && !s.sh[k].alias_filter) {
            s.sh[k].rc = FDS_ENOMEM;
            fds_err_setk(&s.sh[k].err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        }
    }
    for (size_t k = 0; k < s.n; k++)
        if (!s.sh[k].rc)
            prepare_shard(r, &s.sh[k], &s.sh[s.sh[k].owner ? k : fds_shard_search_owner_of(&s, k)],
                          count, s.n > 1, hk, k);
    fds_shard_search_query(&s);
    free(ixs);
    fds_index_expr_filters_free(filters, n);
    free(boosts);
    fds_shard_search_terminate_count(&s);
    size_t out_len = 0;
    char *out = NULL;
    bool wrapped = false;
    if (n && !s.nok) {
        e = s.sh[0].err; /* all shards failed: the first one's cause */
        if (shard_level(&e)) {
            all_failed(o, &s);
            wrapped = true;
        }
    } else {
        out = render(r, &s, hk, count, t0, &out_len, &e);
    }
    if (out && profile) {
        fds_shard_run *sh = &s.sh[0];
        fds__profile prof = {.node_id = FDS__NODE_ID,
                             .index = fds_index_name(sh->ix),
                             .query = sh->req->query,
                             .query_ns = sh->query_ns,
                             .has_fetch = sh->res.nhits > 0,
                             .fetch_ns = s.fetch_ns,
                             .load_ns = s.load_ns,
                             .load_docs = s.load_docs};
        if (splice_profile(&out, &out_len, &prof)) {
            free(out);
            out = NULL;
            fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        }
    }
    if (out && hk && hk->id && splice_id(&out, &out_len, hk->id_key, hk->id)) {
        free(out);
        out = NULL;
        fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    if (out)
        fds__resp_raw(o, 200, out, out_len, NULL);
    else if (!wrapped)
        fds__resp_error(o, &e);
    for (size_t k = 0; out && hk && hk->keep && k < s.nok; k++) {
        fds_shard_run *sh = &s.sh[s.ok[k]];
        if (hk->keep(hk->arg, s.ok[k], sh->ix, sh->v, sh->req))
            sh->ix = NULL, sh->v = NULL, sh->req = NULL;
    }
    fds_shard_search_free(&s);
}

/* ---- _msearch ---------------------------------------------------------------- */

/* URL parameters of _msearch; the search ones reach every item.
 * max_concurrent_searches and max_concurrent_shard_requests are bounds:
 * the items run one after another, within any bound. */
static const char *const MSEARCH_PARAMS[] = {
    "rest_total_hits_as_int", "typed_keys", "search_type",
    "ccs_minimize_roundtrips", "max_concurrent_searches",
    "max_concurrent_shard_requests", "pre_filter_shard_size", NULL};
static const char *const MSEARCH_PASSED[] = {"rest_total_hits_as_int",
                                             "typed_keys", "search_type",
                                             "ccs_minimize_roundtrips"};

/* Keys of a header line (Elasticsearch's MultiSearchRequest), each passed
 * to its search as the URL parameter of the same name. */
static const char *const MSEARCH_HEADER_KEYS[] = {
    "search_type", "preference", "routing", "request_cache",
    "ignore_unavailable", "allow_no_indices", "expand_wildcards",
    "ccs_minimize_roundtrips", "ignore_throttled"};

#define MSEARCH_KV_MAX 16 /* parameters of one item */

/* One item's search, from header `h` (NULL: none) and body line b[0..bl).
 * Its answer (status and body) goes to *o. */
static void msearch_item(fds_req *r, const cJSON *h, const char *b, size_t bl,
                         fds_resp *o)
{
    const char *kv[2 * MSEARCH_KV_MAX];
    char vals[MSEARCH_KV_MAX][8];
    unsigned nkv = 0;
    char *index = NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, h) {
        const char *k = it->string;
        if (!strcmp(k, "index") || !strcmp(k, "indices")) {
            fds_strbuf ib = {0};
            const cJSON *x;
            if (cJSON_IsString(it))
                fds_strbuf_puts(&ib, it->valuestring);
            else if (cJSON_IsArray(it))
                cJSON_ArrayForEach(x, it) {
                    if (!cJSON_IsString(x))
                        break;
                    fds_strbuf_printf(&ib, "%s%s", ib.len ? "," : "", x->valuestring);
                }
            free(index);
            index = ib.p ? ib.p : strdup("");
            continue;
        }
        if (!strcmp(k, "allow_partial_search_results")) {
            if (cJSON_IsFalse(it) ||
                (cJSON_IsString(it) && !strcmp(it->valuestring, "false"))) {
                free(index);
                return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                       "[allow_partial_search_results] false is "
                                       "not supported: a failed index is reported "
                                       "in _shards.failures");
            }
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
                   .body = b, .body_len = bl, .start_us = fds__now_us(),
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
    for (unsigned i = 0; i < sub.nparams; i++)
        free(sub.params[i]);
    free(sub.params);
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
        bool known = !strcmp(k, "index") || !strcmp(k, "indices") ||
                     !strcmp(k, "allow_partial_search_results");
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
    long long t0 = fds__now_us();
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
                      (fds__now_us() - t0) / 1000);
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
