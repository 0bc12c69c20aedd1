/*
 * dsl_url.c: the URL parameters of `_search` (size, from, q, df,
 * default_operator, sort, _source, docvalue_fields, ...), applied to a
 * request parsed from the body as Elasticsearch's RestSearchAction applies
 * them: each read as the body key of the same name, a URL one winning.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dsl/dsl_parse_int.h"

/* q= URL parameter: a Lucene query string (dsl_parse_qs.c) with the df,
 * default_operator and lenient parameters given before it. */
static int apply_q(fds_search_request *req, const char *value, fds_err *err)
{
    fds__dsl_ctx c = {.m = req->mapping, .err = err, .lim = &req->lim};
    fds__qs_opts o = {.df = req->q_df, .and_op = req->q_and,
                      .lenient = req->q_lenient};
    fds_query *q = fds__dsl_qs_parse(&c, value, &o);
    if (!q)
        return err && err->code ? err->code : FDS_ENOMEM;
    fds__query_free(req->query);
    req->query = q;
    return 0;
}

/* A URL boolean as Elasticsearch's RestRequest.paramAsBoolean reads it:
 * "true", "false", or empty for true.  0 or FDS_EINVAL. */
static int url_flag(const char *key, const char *value, bool *out,
                    fds_err *err)
{
    if (!*value || !strcmp(value, "true")) {
        *out = true;
        return 0;
    }
    if (!strcmp(value, "false")) {
        *out = false;
        return 0;
    }
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "Failed to parse value [%s] as only [true] or [false] "
                        "are allowed.", value);
}

/* "a,b:desc" as a JSON array of strings, or (sort) of {"b":"desc"}
 * objects where a name has an order after its last ':' (RestSearchAction's
 * reading of ?sort=).  NULL when out of memory. */
static cJSON *comma_list(const char *value, bool sort)
{
    cJSON *l = cJSON_CreateArray();
    for (const char *p = value; l && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char *one = fds__dsl_dupn(p, n);
        if (!one) {
            cJSON_Delete(l);
            return NULL;
        }
        char *colon = sort ? strrchr(one, ':') : NULL;
        cJSON *it;
        if (colon) {
            *colon = 0;
            it = cJSON_CreateObject();
            if (it && !cJSON_AddStringToObject(it, one, colon + 1)) {
                cJSON_Delete(it);
                it = NULL;
            }
        } else {
            it = cJSON_CreateString(one);
        }
        free(one);
        if (!it || !cJSON_AddItemToArray(l, it)) {
            cJSON_Delete(it);
            cJSON_Delete(l);
            return NULL;
        }
        p += n + (e ? 1 : 0);
    }
    return l;
}

/* ?_source=, ?_source_includes=, ?_source_excludes= (Elasticsearch's
 * FetchSourceContext.parseFromRestRequest): they replace the body's
 * `_source`; "true"/"false" switch it, anything else lists includes. */
static int url_source(fds_search_request *req, const char *key,
                      const char *value, fds_err *err)
{
    req->source_asked = true;
    if (!req->source_url) { /* the first one drops the body's filter */
        req->source_url = true;
        req->source = true;
        fds__dsl_str_list_free(req->includes, req->nincludes);
        fds__dsl_str_list_free(req->excludes, req->nexcludes);
        req->includes = req->excludes = NULL;
        req->nincludes = req->nexcludes = 0;
    }
    if (!strcmp(key, "_source") &&
        (!strcmp(value, "true") || !strcmp(value, "false"))) {
        req->source = value[0] == 't';
        return fds__dsl_stored_check(req, err);
    }
    cJSON *l = comma_list(value, false);
    if (!l)
        return FDS_ENOMEM;
    int rc = !strcmp(key, "_source_excludes") ? fds__dsl_str_list(l, &req->excludes, &req->nexcludes)
                           : fds__dsl_str_list(l, &req->includes, &req->nincludes);
    cJSON_Delete(l);
    if (!rc)
        rc = fds__dsl_source_limits(req, err);
    return rc ? rc : fds__dsl_stored_check(req, err);
}

/* ?track_total_hits=: true (or empty), false, or a count (-1: all). */
static int url_track_total(fds_search_request *req, const char *value,
                           fds_err *err)
{
    if (!strcmp(value, "true") || !*value)
        req->track_total = INT64_MAX;
    else if (!strcmp(value, "false"))
        req->track_total = FDS_TRACK_TOTAL_NONE;
    else {
        char *e;
        long long n = strtoll(value, &e, 10);
        if (*e || !*value)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[track_total_hits] must be true, false or "
                                "a number, got [%s]", value);
        if (n < -1)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[track_total_hits] parameter must be "
                                "positive or equals to -1, got %lld", n);
        req->track_total = n == -1 ? INT64_MAX : n;
    }
    return 0;
}

/* ?version=, ?seq_no_primary_term=, ?rest_total_hits_as_int=,
 * ?track_scores=: URL booleans; rest_total_hits_as_int turns exact
 * counting on. */
static int url_flag_key(fds_search_request *req, const char *key,
                        const char *value, fds_err *err)
{
    bool on = false;
    int rc = url_flag(key, value, &on, err);
    if (rc)
        return rc;
    *(key[0] == 'v'   ? &req->version
      : key[0] == 's' ? &req->seq_no_primary_term
      : key[0] == 'r' ? &req->total_as_int
                      : &req->track_scores) = on;
    /* a number must be exact (RestSearchAction): counting is turned on
     * unless it was limited explicitly, which is refused */
    if (key[0] == 'r' && on && req->track_total == FDS_TRACK_TOTAL_DEFAULT)
        req->track_total = INT64_MAX;
    else if (key[0] == 'r' && on && req->track_total != INT64_MAX &&
             req->track_total != FDS_TRACK_TOTAL_NONE)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[rest_total_hits_as_int] cannot be used if the "
                            "tracking of total hits is not accurate, got %lld",
                            (long long)req->track_total);
    return 0;
}

int fds_search_apply_param(fds_search_request *req, const char *key,
                           const char *value, fds_err *err)
{
    if (!strcmp(key, "size") || !strcmp(key, "from")) {
        cJSON *v = cJSON_CreateString(value);
        if (!v)
            return FDS_ENOMEM;
        uint32_t *dst = key[0] == 's' ? &req->size : &req->from, old = *dst;
        int rc = fds__dsl_nonneg(v, key, dst, err);
        cJSON_Delete(v);
        if (!rc)
            rc = fds__dsl_window_check(req, err);
        if (rc)
            *dst = old; /* a refused parameter leaves the request unchanged */
        return rc;
    }
    if (!strcmp(key, "track_total_hits"))
        return url_track_total(req, value, err);
    if (!strcmp(key, "explain")) {
        req->explain = strcmp(value, "false") != 0;
        return 0;
    }
    if (!strcmp(key, "q"))
        return apply_q(req, value, err);
    if (!strcmp(key, "lenient"))
        return url_flag(key, value, &req->q_lenient, err);
    if (!strcmp(key, "analyze_wildcard")) {
        bool on; /* wildcard terms are always normalized by the field */
        return url_flag(key, value, &on, err);
    }
    if (!strcmp(key, "analyzer")) {
        if (strcmp(value, "standard") && strcmp(value, "default"))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[analyzer] [%s] is not supported: q= is "
                                "analyzed by each field's own analyzer "
                                "(standard)", value);
        return 0;
    }
    if (!strcmp(key, "min_score") || !strcmp(key, "docvalue_fields")) {
        cJSON *v = key[0] == 'm' ? cJSON_CreateString(value)
                                 : comma_list(value, false);
        if (!v)
            return FDS_ENOMEM;
        int rc = key[0] == 'm' ? fds__dsl_min_score(req, v, err)
                               : fds__dsl_docvalue(req, v, err);
        cJSON_Delete(v);
        return rc;
    }
    if (!strcmp(key, "timeout"))
        return fds__dsl_timeout(req, value, err);
    if (!strcmp(key, "df")) {
        if (strlen(value) >= sizeof req->q_df)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[df] is longer than a field path can be");
        snprintf(req->q_df, sizeof req->q_df, "%s", value);
        return 0;
    }
    if (!strcmp(key, "include_named_queries_score"))
        return url_flag(key, value, &req->named_scores, err);
    if (!strcmp(key, "default_operator")) {
        if (strcasecmp(value, "and") && strcasecmp(value, "or"))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Unsupported defaultOperator [%s], can either "
                                "be [OR] or [AND]", value);
        req->q_and = !strcasecmp(value, "and");
        return 0;
    }
    if (!strcmp(key, "version") || !strcmp(key, "seq_no_primary_term") ||
        !strcmp(key, "rest_total_hits_as_int") || !strcmp(key, "track_scores"))
        return url_flag_key(req, key, value, err);
    if (!strcmp(key, "_source") || !strcmp(key, "_source_includes") ||
        !strcmp(key, "_source_excludes"))
        return url_source(req, key, value, err);
    if (!strcmp(key, "stored_fields") || !strcmp(key, "sort")) {
        cJSON *l = comma_list(value, key[1] == 'o');
        if (!l)
            return FDS_ENOMEM;
        fds__dsl_ctx c = {.m = req->mapping, .err = err, .lim = &req->lim};
        int rc = key[1] == 'o' ? fds__dsl_sort(&c, req, l)
                               : fds__dsl_stored_fields(req, l, err);
        cJSON_Delete(l);
        return rc ? rc : fds__dsl_stored_check(req, err);
    }
    return 0;
}
