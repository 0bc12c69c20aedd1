/*
 * search_run.c: a search over shards answered -- each shard's request
 * parsed (the body against its index's mapping, the URL parameters, its
 * alias filter and indices_boost), the shard coordinator run
 * (src/search/shard_search.h), the answer rendered with its shard
 * failures, aggregations, profile and scroll or point-in-time id.  The
 * handlers (search_api.c, search_ctx.c) resolve the indices and call it.
 */
#include <math.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fds_clock.h"
#include "aggs_render.h"
#include "fds_strbuf.h"
#include "http_error.h"
#include "index_expr.h"
#include "node.h"
#include "request.h"
#include "response.h"
#include "search_render.h"
#include "search_run.h"
#include "search_stats.h"
#include "shard_search.h"

/* URL parameters Elasticsearch's search accepts that we apply. */
static const char *const SEARCH_PARAMS[] = {
    "size", "from", "df", "default_operator", "analyzer", "analyze_wildcard",
    "lenient", "q", "track_total_hits", "_source", "_source_includes",
    "_source_excludes", "sort", "explain", "version", "seq_no_primary_term",
    "stored_fields", "rest_total_hits_as_int", "track_scores", "timeout",
    "docvalue_fields", "min_score", "include_named_queries_score"};


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
    .now_ns = fds_mono_ns, .query_begin = query_begin, .query_end = query_end};

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

/* Parse the body for index `sh->ix` (with the URL parameters), or for no
 * index at all (`m` an empty mapping) when ix is NULL. */
static int parse_for(fds_req *r, const fds_mapping *m,
                     const fds_index_settings *set, const char *index, bool count,
                     fds_search_request **req, fds_err *e)
{
    fds_search_limits lim;
    fds_search_limits_default(&lim);
    lim.index_name = index;
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
                          bool count, uint64_t tav, bool several,
                          const fds__search_hooks *hk, size_t k)
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
        sh->rc = parse_for(r, fds_index_mapping(sh->ix), &set, fds_index_name(sh->ix),
                           count, &sh->req,
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
        if (!sh->rc && tav) /* the URL's, over the body's */
            sh->req->terminate_after = tav;
        /* a scroll's later pages go on from a cursor the first page's
         * collection would not have reached */
        if (!sh->rc && hk && hk->scroll && sh->req->terminate_after)
            sh->rc = fds_err_setk(&sh->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[terminate_after] is not supported in a "
                                  "scroll context by fieldstore");
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
           e->kind == FDS_KIND_PARSE || e->kind == FDS_KIND_QUERY_PHASE;
}

/* The failed shards of `s` as the search's failure (Elasticsearch's
 * SearchPhaseExecutionException): search_phase_execution_exception with
 * `reason` ("all shards failed" when every shard failed with a
 * shard-level cause; "Partial shards failure" when some failed and
 * allow_partial_search_results is false), root causes one per distinct
 * cause, failed_shards each failed shard's (grouped); the status is the
 * first failed shard's. */
static void shards_failed(fds_resp *o, const fds_shard_search *s, const char *reason)
{
    fds_strbuf b = {0};
    fds_strbuf_puts(&b, "{\"error\":{\"root_cause\":[");
    const fds_shard_run *first = NULL;
    for (size_t i = 0; i < s->n; i++) {
        bool seen = !s->sh[i].rc;
        for (size_t k = 0; k < i && !seen; k++)
            seen = s->sh[k].rc && !strcmp(s->sh[k].err.reason, s->sh[i].err.reason);
        if (seen)
            continue;
        if (first)
            fds_strbuf_puts(&b, ",");
        first = first ? first : &s->sh[i];
        put_cause(&b, &s->sh[i]);
    }
    fds_strbuf_puts(&b, "],\"type\":\"search_phase_execution_exception\",\"reason\":");
    fds_strbuf_put_json_string(&b, reason, strlen(reason));
    fds_strbuf_puts(&b, ",\"phase\":\"query\",\"grouped\":true,\"failed_shards\":[");
    bool comma = false;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->sh[i].rc)
            continue;
        const char *name = fds_index_name(s->sh[i].ix);
        fds_strbuf_printf(&b, "%s{\"shard\":%u,\"index\":", comma ? "," : "",
                          s->sh[i].shard);
        comma = true;
        fds_strbuf_put_json_string(&b, name, strlen(name));
        fds_strbuf_puts(&b, ",\"node\":\"" FDS__NODE_ID "\",\"reason\":");
        put_cause(&b, &s->sh[i]);
        fds_strbuf_puts(&b, "}");
    }
    int status = first ? fds__http_status(&first->err) : 500;
    fds_strbuf_printf(&b, "]},\"status\":%d}", status);
    if (b.oom) {
        free(b.p);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    fds__resp_raw(o, status, b.p, b.len, NULL);
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
        if (!none || parse_for(r, none, NULL, NULL, count, &empty, e)) {
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
                                (long)(((long long)fds_mono_us() - t0) / 1000), &hs,
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

void fds__search_held(fds_req *r, fds_resp *o, fds_index **ixs, size_t n,
                      const fds__search_hooks *hk)
{
    fds__search_shards(r, o, ixs, NULL, n, false, 0, false, (long long)fds_mono_us(), NULL, NULL,
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
void fds__search_shards(fds_req *r, fds_resp *o, fds_index **ixs,
                        char **filters, size_t n, bool count, uint64_t tav,
                        bool profile, long long t0,
                        const fds_index_expr_opts *opts, const char *routing,
                        const fds__search_hooks *hk)
{
    fds_err e;
    fds_err_clear(&e);
    const char *st = fds__req_param(r, "search_type");
    fds_shard_search s = {.clock = &SEARCH_CLOCK};
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
                          count, tav, s.n > 1, hk, k);
    const char *mcs = fds__req_param(r, "max_concurrent_shard_requests");
    long mc = mcs ? strtol(mcs, NULL, 10) : 0; /* checked by the handler */
    s.max_concurrent = mc > 0 && mc < (long)UINT_MAX ? (unsigned)mc : 0;
    fds_shard_search_query(&s);
    bool partial = fds__req_param_bool(r, "allow_partial_search_results", true);
    if (!partial)
        fds_shard_search_no_partial(&s);
    free(ixs);
    fds_index_expr_filters_free(filters, n);
    free(boosts);
    fds_shard_search_terminated(&s);
    size_t out_len = 0;
    char *out = NULL;
    bool wrapped = false;
    if (n && !s.nok) {
        e = s.sh[0].err; /* all shards failed: the first one's cause */
        if (shard_level(&e)) {
            shards_failed(o, &s, "all shards failed");
            wrapped = true;
        }
    } else if (s.nok < s.n && !partial) {
        /* AbstractSearchAsyncAction: no partial answer asked for */
        shards_failed(o, &s, "Partial shards failure");
        wrapped = true;
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
