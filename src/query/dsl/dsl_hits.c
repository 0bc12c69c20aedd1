/*
 * dsl_hits.c: the body keys that shape the hits -- the page (from, size,
 * index.max_result_window), their order and what each returns, highlight,
 * explain, version, seq_no_primary_term, the refused script_fields and
 * rescore -- which a search body and a top_hits aggregation read alike,
 * and the top_hits body itself (a request of those keys).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_parse_int.h"

/* from + size within the index's index.max_result_window. */
int fds__dsl_window_check(const fds_search_request *r, fds_err *err)
{
    if ((uint64_t)r->from + r->size > r->max_window)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Result window is too large, from + size must be "
                            "less than or equal to: [%u] but was [%llu]. See "
                            "the scroll api for a more efficient way to "
                            "request large data sets. This limit can be set by "
                            "changing the [index.max_result_window] index "
                            "level setting.", r->max_window,
                            (unsigned long long)r->from + r->size);
    return 0;
}

int fds__dsl_nonneg(const cJSON *v, const char *name, uint32_t *out,
                    fds_err *err)
{
    double d;
    if (cJSON_IsNumber(v))
        d = v->valuedouble;
    else if (cJSON_IsString(v) && *v->valuestring) {
        char *end;
        d = strtod(v->valuestring, &end);
        if (*end)
            return fds__dsl_err(err, "[%s] failed to parse field value [%s]",
                                name, v->valuestring);
    } else
        return fds__dsl_err(err, "[%s] expected a number but found [%s]", name,
                    fds__dsl_jtype(v));
    if (d < 0)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] parameter cannot be negative, found [%.0f]",
                            name, d);
    if (d > 2147483647.0)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] is too large: [%.0f]", name, d);
    *out = (uint32_t)d;
    return 0;
}

/* A JSON boolean for `name`.  0 or FDS_EPARSE. */
static int parse_flag(const cJSON *v, const char *name, bool *out,
                      fds_err *err)
{
    if (!cJSON_IsBool(v))
        return fds__dsl_err(err, "[%s] must be a boolean, got a %s", name,
                            fds__dsl_jtype(v));
    *out = cJSON_IsTrue(v);
    return 0;
}

/* "script_fields" and "rescore": not supported (no scripts, no second
 * scoring phase), but first the limits Elasticsearch checks on them
 * (index.max_script_fields, index.max_rescore_window) answer as there. */
static int refused_option(fds_search_request *r, const cJSON *v, fds_err *err)
{
    const char *k = v->string;
    if (!strcmp(k, "script_fields")) {
        size_t n = cJSON_IsObject(v) ? (size_t)cJSON_GetArraySize(v) : 0;
        if (cJSON_IsObject(v) && !n)
            return 0; /* none asked (Kibana sends {}) */
        if (n > r->lim.max_script_fields)
            return fds__dsl_too_many(err, "script_fields", r->lim.max_script_fields, n,
                            "max_script_fields");
    } else {
        const cJSON *it;
        const cJSON *one = cJSON_IsObject(v) ? v : NULL;
        cJSON_ArrayForEach(it, v) {
            const cJSON *o = cJSON_IsArray(v) ? it : one;
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "window_size");
            double ws = cJSON_IsNumber(w) ? w->valuedouble : 10;
            if (ws > r->lim.max_rescore_window)
                return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "Rescore window [%.0f] is too large. It "
                                    "must be less than [%u]. This prevents "
                                    "allocating massive heaps for storing the "
                                    "results to be rescored. This limit can be "
                                    "set by changing the "
                                    "[index.max_rescore_window] index level "
                                    "setting.", ws, r->lim.max_rescore_window);
            if (one)
                break;
        }
    }
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "[%s] is not supported", k);
}

int fds__dsl_hits_key(fds__dsl_ctx *c, fds_search_request *r,
                      const cJSON *it)
{
    fds_err *err = c->err;
    const char *k = it->string;
    if (!strcmp(k, "from"))
        return fds__dsl_nonneg(it, "from", &r->from, err);
    if (!strcmp(k, "size"))
        return fds__dsl_nonneg(it, "size", &r->size, err);
    if (!strcmp(k, "_source")) {
        int rc = fds__dsl_source(r, it, err);
        return rc ? rc : fds__dsl_source_limits(r, err);
    }
    if (!strcmp(k, "sort"))
        return fds__dsl_sort(c, r, it);
    if (!strcmp(k, "explain")) {
        r->explain = cJSON_IsTrue(it);
        return 0;
    }
    if (!strcmp(k, "track_scores")) {
        r->track_scores = cJSON_IsTrue(it);
        return 0;
    }
    if (!strcmp(k, "stored_fields"))
        return fds__dsl_stored_fields(r, it, err);
    if (!strcmp(k, "version"))
        return parse_flag(it, k, &r->version, err);
    if (!strcmp(k, "seq_no_primary_term"))
        return parse_flag(it, k, &r->seq_no_primary_term, err);
    if (!strcmp(k, "docvalue_fields"))
        return fds__dsl_docvalue(r, it, err);
    if (!strcmp(k, "fields"))
        return fds__dsl_fields(r, it, err);
    if (!strcmp(k, "script_fields") || !strcmp(k, "rescore"))
        return refused_option(r, it, err);
    if (!strcmp(k, "highlight"))
        return fds__dsl_highlight(c, it, &r->hl);
    return 1;
}

/* Keys of a top_hits body (Elasticsearch's TopHitsAggregationBuilder):
 * those read as a search body reads them; script_fields is refused as
 * the search refuses it. */
static const char *const TOP_HITS_KEYS[] = {
    "from", "size", "sort", "_source", "docvalue_fields", "fields",
    "highlight", "explain", "version", "seq_no_primary_term",
    "stored_fields", "track_scores", "script_fields", NULL};

int fds__dsl_top_hits(fds__dsl_ctx *c, const cJSON *j, const char *name,
                      fds_search_request **out)
{
    *out = NULL;
    if (!cJSON_IsObject(j))
        return fds__dsl_err(c->err, "Expected [START_OBJECT] under [top_hits], "
                                    "but got a [%s] in [%s]",
                            fds__dsl_jtype(j), name);
    fds_search_request *r = calloc(1, sizeof *r);
    if (!r)
        return fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                            "out of memory");
    r->size = FDS_TOP_HITS_SIZE;
    r->track_total = FDS_TRACK_TOTAL_NONE;
    r->source = true;
    r->mapping = c->m;
    r->lim = *c->lim;
    r->max_window = FDS_MAX_INNER_RESULT_WINDOW;
    r->min_score = NAN;
    int rc = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, j) {
        size_t i = 0;
        while (TOP_HITS_KEYS[i] && strcmp(TOP_HITS_KEYS[i], it->string))
            i++;
        if (!TOP_HITS_KEYS[i])
            rc = fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                              "[top_hits] unknown field [%s]", it->string);
        else
            rc = fds__dsl_hits_key(c, r, it);
        if (rc)
            break;
    }
    if (!rc && (uint64_t)r->from + r->size > r->max_window)
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "Top hits result window is too large, the top hits "
                          "aggregator [%s]'s from + size must be less than or "
                          "equal to: [%u] but was [%llu]. This limit can be set "
                          "by changing the [index.max_inner_result_window] "
                          "index level setting.", name, r->max_window,
                          (unsigned long long)r->from + r->size);
    if (!rc) /* no point in time here: refuses _shard_doc */
        rc = fds__dsl_pit_tiebreak(r, c->err);
    if (!rc)
        rc = fds__dsl_stored_check(r, c->err);
    if (rc) {
        fds_search_request_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
