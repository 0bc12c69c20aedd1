/*
 * aggs_params.c: each aggregation type's body into its fds_agg's
 * parameters, with Elasticsearch 8's parameter names, defaults and errors
 * (the registry, src/query/dsl/registry.c, names these parsers; the
 * aggregation tree around them is aggs_parse.c's).
 *
 * Every parameter read here has its effect in src/query/aggs; a parameter
 * Elasticsearch knows and we do not implement is refused by name
 * (illegal_argument_exception), an unknown one as Elasticsearch's object
 * parser refuses it (x_content_parse_exception "[terms] unknown field
 * [x]").  The keys every field aggregation shares (field, format,
 * time_zone, missing, script) and the readers of values are
 * aggs_values.c's; each type here reads its own keys.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggs/aggs.h"
#include "aggs/hll.h"
#include "aggs/tdigest.h"
#include "dsl/aggs_params.h"
#include "dsl/aggs_values.h"
#include "fds_time.h"

/* ---- composite ------------------------------------------------------------- */

/* One composite source {"name": {"terms" | "histogram" | "date_histogram":
 * {...}}} into a->srcs. */
static int parse_source(fds__dsl_ctx *c, fds_agg *a, const cJSON *o)
{
    if (!cJSON_IsObject(o) || !o->child || o->child->next ||
        !cJSON_IsObject(o->child->child ? o->child : NULL) ||
        !o->child->child || o->child->child->next)
        return fds__aggp_bad_value(c, a, "sources");
    fds_agg *s = calloc(1, sizeof *s);
    if (!s)
        return fds__aggp_oom(c);
    a->srcs[a->nsrcs++] = s;
    const cJSON *def = o->child->child;
    if (!(s->name = strdup(o->child->string)))
        return fds__aggp_oom(c);
    s->type = !strcmp(def->string, "terms") ? FDS_AGG_TERMS
            : !strcmp(def->string, "histogram") ? FDS_AGG_HISTOGRAM
            : !strcmp(def->string, "date_histogram") ? FDS_AGG_DATE_HISTOGRAM : -1;
    if (s->type < 0)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "composite source type [%s] of [%s] is not supported "
                            "by fieldstore (terms, histogram, date_histogram)",
                            def->string, a->name);
    if (!cJSON_IsObject(def))
        return fds__aggp_bad_value(c, a, "sources");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(def, "field");
    if (!f)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Required one of fields [field, script], but none "
                            "were specified. [%s]", s->name);
    const cJSON *tz = cJSON_GetObjectItemCaseSensitive(def, "time_zone");
    if (tz && (s->type != FDS_AGG_DATE_HISTOGRAM || !cJSON_IsString(tz)))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "time_zone of [%s] is not supported by fieldstore: "
                            "only on a date_histogram source", s->name);
    if (tz && fds__tz_parse(tz->valuestring, strlen(tz->valuestring), &s->tz))
        return fds__aggp_unknown_zone(c, tz->valuestring);
    if (fds__aggp_field(c, s, f))
        return c->err->code;
    if (s->type == FDS_AGG_DATE_HISTOGRAM && !s->unmapped && s->ftype != FDS_FT_DATE)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Field [%s] is not a date: [date_histogram] source "
                            "[%s]", s->field, s->name);
    if (s->type == FDS_AGG_HISTOGRAM && s->ftype == FDS_FT_KEYWORD)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Field [%s] of type [keyword] is not supported for "
                            "aggregation [histogram]", s->field);
    for (const cJSON *e = def->child; e; e = e->next) {
        const char *k = e->string;
        if (!strcmp(k, "field") || !strcmp(k, "time_zone"))
            continue;
        if (!strcmp(k, "order")) {
            if (!cJSON_IsString(e) || (strcmp(e->valuestring, "asc") &&
                                       strcmp(e->valuestring, "desc")))
                return fds__aggp_bad_value(c, a, "order");
            s->keyed = !strcmp(e->valuestring, "desc");
        } else if (!strcmp(k, "missing_bucket")) {
            if (!cJSON_IsBool(e))
                return fds__aggp_bad_value(c, a, k);
            if (cJSON_IsTrue(e))
                return fds__aggp_unsupported(c, a, "missing_bucket");
        } else if (s->type == FDS_AGG_HISTOGRAM && !strcmp(k, "interval")) {
            double v;
            if (!fds__aggp_double(e, &v))
                return fds__aggp_bad_value(c, a, k);
            if (!(v > 0) || !isfinite(v))
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "[interval] must be > 0 for the histogram "
                                    "source [%s]", s->name);
            s->interval = v;
        } else if (s->type == FDS_AGG_DATE_HISTOGRAM &&
                   !strcmp(k, "calendar_interval")) {
            int cal = cJSON_IsString(e) ? fds__aggp_calendar(e->valuestring) : 0;
            if (cal)
                s->cal = cal;
            if (!s->cal)
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "The supplied interval [%s] could not be parsed "
                                    "as a calendar interval.",
                                    cJSON_IsString(e) ? e->valuestring : "");
        } else if (s->type == FDS_AGG_DATE_HISTOGRAM && !strcmp(k, "fixed_interval")) {
            s->fixed_ms = cJSON_IsString(e) ? fds__aggp_time_value_ms(e->valuestring) : -1;
            if (s->fixed_ms <= 0)
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "failed to parse setting "
                                    "[date_histogram.fixedInterval] with value "
                                    "[%s] as a time value: unit is missing or "
                                    "unrecognized",
                                    cJSON_IsString(e) ? e->valuestring : "");
        } else if (s->type == FDS_AGG_DATE_HISTOGRAM && !strcmp(k, "offset")) {
            const char *v = cJSON_IsString(e) ? e->valuestring : "";
            int64_t ms = fds__aggp_time_value_ms(v + (*v == '-' || *v == '+'));
            if (ms < 0)
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "failed to parse setting "
                                    "[date_histogram.offset] with value [%s] as a "
                                    "time value", v);
            s->offset_ms = *v == '-' ? -ms : ms;
        } else if (!strcmp(k, "script") || !strcmp(k, "value_type") ||
                   !strcmp(k, "format") || !strcmp(k, "missing_order")) {
            return fds__aggp_unsupported(c, a, k);
        } else {
            return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                                "[%s] unknown field [%s]", def->string, k);
        }
    }
    if (s->type == FDS_AGG_HISTOGRAM && !(s->interval > 0))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[interval] must be > 0 for the histogram source [%s]",
                            s->name);
    if (s->type == FDS_AGG_DATE_HISTOGRAM && !s->cal && s->fixed_ms <= 0)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Invalid interval specified, must be non-null and "
                            "non-empty");
    return 0;
}

/* composite: sources, size, after. */
static int parse_composite(fds__dsl_ctx *c, fds_agg *a, const cJSON *b)
{
    if (!cJSON_IsObject(b))
        return fds__aggp_bad_value(c, a, "composite");
    a->size = 10;
    const cJSON *after = NULL;
    for (const cJSON *e = b->child; e; e = e->next) {
        const char *k = e->string;
        int rc = 0;
        if (!strcmp(k, "size")) {
            uint64_t u;
            rc = fds__aggp_count(c, a, e, k, FDS_AGG_MAX_BUCKETS, &u);
            a->size = (uint32_t)u;
            if (!rc && !u)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[size] must be greater than 0. Found [0] in [%s]",
                                  a->name);
        } else if (!strcmp(k, "sources")) {
            size_t n = cJSON_IsArray(e) ? (size_t)cJSON_GetArraySize(e) : 0;
            if (!n || n > FDS_AGG_ORDER_MAX * 4)
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "Composite [sources] cannot be null or empty "
                                    "(at most %d sources)", FDS_AGG_ORDER_MAX * 4);
            if (!(a->srcs = calloc(n, sizeof *a->srcs)) ||
                !(a->after = calloc(n, sizeof *a->after)))
                return fds__aggp_oom(c);
            for (const cJSON *o = e->child; o && !rc; o = o->next)
                rc = parse_source(c, a, o);
        } else if (!strcmp(k, "after")) {
            after = e;
        } else {
            rc = fds__aggp_unknown_field(c, a, k);
        }
        if (rc)
            return c->err->code ? c->err->code : rc;
    }
    if (!a->nsrcs)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Composite [sources] cannot be null or empty");
    if (!after)
        return 0;
    if (!cJSON_IsObject(after) || (size_t)cJSON_GetArraySize(after) != a->nsrcs)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[after] has %d value(s) but [sources] has %zu",
                            cJSON_IsObject(after) ? cJSON_GetArraySize(after) : 0,
                            a->nsrcs);
    for (size_t i = 0; i < a->nsrcs; i++) {
        const fds_agg *s = a->srcs[i];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(after, s->name);
        fds_agg_ckey *k = &a->after[i];
        if (!v)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[after] has no value for the source [%s]", s->name);
        if (s->type == FDS_AGG_TERMS && s->ftype == FDS_FT_KEYWORD) {
            if (!cJSON_IsString(v))
                return fds__aggp_bad_value(c, a, "after");
            k->len = strlen(v->valuestring);
            if (!(k->s = strdup(v->valuestring)))
                return fds__aggp_oom(c);
        } else {
            int rc = fds__aggp_number(c, s, v, "after", &k->d);
            if (rc)
                return rc;
            k->l = k->d >= 0x1p63 ? INT64_MAX : k->d < -0x1p63 ? INT64_MIN
                                                               : (int64_t)k->d;
        }
    }
    a->has_after = true;
    return 0;
}

/* `keyed` of a histogram, range or percentiles: a boolean. */
static int keyed_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e)
{
    a->keyed = cJSON_IsTrue(e);
    return cJSON_IsBool(e) ? 0 : fds__aggp_bad_value(c, a, e->string);
}

/* ---- bucket aggregations --------------------------------------------------- */

static int terms_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e,
                       char **paths, void *st)
{
    const char *k = e->string;
    bool *have_shard_size = st;
    uint64_t u;
    int rc = 0;
    if (!strcmp(k, "size")) {
        if (!(rc = fds__aggp_count(c, a, e, k, FDS_AGG_MAX_BUCKETS, &u)))
            a->size = (uint32_t)u;
        if (!rc && !u)
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "[size] must be greater than 0. Found [0] in [%s]",
                              a->name);
    } else if (!strcmp(k, "shard_size")) {
        if (!(rc = fds__aggp_count(c, a, e, k, UINT32_MAX, &u)))
            a->shard_size = (uint32_t)u;
        *have_shard_size = true;
    } else if (!strcmp(k, "min_doc_count")) {
        /* 0: also the terms of the docs that do not match, count 0 */
        rc = fds__aggp_count(c, a, e, k, UINT64_MAX >> 12, &a->min_doc_count);
    } else if (!strcmp(k, "order")) {
        rc = fds__aggp_order(c, a, e, paths);
    } else if (!strcmp(k, "include")) {
        rc = fds__aggp_values(c, a, e, k, &a->incl, &a->incl_len, &a->incl_d,
                        &a->nincl);
    } else if (!strcmp(k, "exclude")) {
        rc = fds__aggp_values(c, a, e, k, &a->excl, &a->excl_len, &a->excl_d,
                        &a->nexcl);
    } else if (!strcmp(k, "execution_hint")) {
        /* how to collect, not what: every hint gives the same answer, but
         * only the ones Elasticsearch knows (TermsAggregatorFactory's
         * ExecutionMode) are taken */
        if (!cJSON_IsString(e))
            rc = fds__aggp_bad_value(c, a, k);
        else if (strcmp(e->valuestring, "map") && strcmp(e->valuestring, "global_ordinals"))
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "Unknown `execution_hint`: [%s], expected any of "
                              "[map, global_ordinals]", e->valuestring);
    } else if (!strcmp(k, "collect_mode")) {
        /* Aggregator.SubAggCollectionMode: the same answer either way */
        if (!cJSON_IsString(e))
            rc = fds__aggp_bad_value(c, a, k);
        else if (strcmp(e->valuestring, "depth_first") &&
                 strcmp(e->valuestring, "breadth_first"))
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "no [collect_mode] found for value [%s]", e->valuestring);
    } else if (!strcmp(k, "shard_min_doc_count") ||
               !strcmp(k, "show_term_doc_count_error")) {
        rc = fds__aggp_unsupported(c, a, k);
    } else {
        rc = fds__aggp_unknown_field(c, a, k);
    }
    return rc;
}

int fds__agg_parse_terms(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                         char **paths)
{
    int rc = fds__aggp_values_source(c, a, b, FDS__VS_KEYWORD);
    if (rc)
        return rc;
    a->size = 10;
    a->min_doc_count = 1;
    bool have_shard_size = false;
    if ((rc = fds__aggp_each_param(c, a, b, FDS__VS_KEYWORD, terms_param, paths,
                         &have_shard_size)))
        return rc;
    if (!have_shard_size)
        /* Elasticsearch's BucketUtils.suggestShardSideQueueSize */
        a->shard_size = (uint32_t)fmin((double)a->size * 1.5 + 10, UINT32_MAX);
    if (a->shard_size < a->size)
        a->shard_size = a->size;
    return 0;
}

/* date_histogram's calendar_interval, fixed_interval, offset. */
static int date_interval_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e,
                               bool *have_interval)
{
    const char *k = e->string;
    int rc = 0;
    if (!strcmp(k, "calendar_interval")) {
        rc = -1;
        int cal = cJSON_IsString(e) ? fds__aggp_calendar(e->valuestring) : 0;
        if (cal) {
            a->cal = cal;
            rc = 0;
        }
        if (rc)
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "The supplied interval [%s] could not be parsed "
                              "as a calendar interval.",
                              cJSON_IsString(e) ? e->valuestring : "");
        if (!rc && *have_interval)
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "Cannot use [calendar_interval] with "
                              "[fixed_interval] configuration option.");
        *have_interval = true;
    } else if (!strcmp(k, "fixed_interval")) {
        a->fixed_ms = cJSON_IsString(e) ? fds__aggp_time_value_ms(e->valuestring) : -1;
        if (a->fixed_ms <= 0)
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "failed to parse setting "
                              "[date_histogram.fixedInterval] with value [%s] "
                              "as a time value: unit is missing or "
                              "unrecognized",
                              cJSON_IsString(e) ? e->valuestring : "");
        if (!rc && *have_interval)
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "Cannot use [fixed_interval] with "
                              "[calendar_interval] configuration option.");
        *have_interval = true;
    } else if (cJSON_IsNumber(e)) { /* offset */
        a->offset_ms = (int64_t)e->valuedouble;
    } else if (cJSON_IsString(e)) {
        const char *s = e->valuestring;
        bool neg = *s == '-';
        int64_t ms = fds__aggp_time_value_ms(s + (*s == '-' || *s == '+'));
        if (ms < 0)
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "failed to parse setting "
                              "[date_histogram.offset] with value [%s] "
                              "as a time value", s);
        a->offset_ms = neg ? -ms : ms;
    } else {
        rc = fds__aggp_bad_value(c, a, k);
    }
    return rc;
}

static int histogram_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e,
                           char **paths, void *st)
{
    const char *k = e->string;
    bool *have_interval = st;
    bool date = a->type == FDS_AGG_DATE_HISTOGRAM;
    int rc = 0;
    if (!strcmp(k, "min_doc_count")) {
        rc = fds__aggp_count(c, a, e, k, UINT64_MAX >> 12, &a->min_doc_count);
    } else if (!strcmp(k, "order")) {
        rc = fds__aggp_order(c, a, e, paths);
    } else if (date && (!strcmp(k, "calendar_interval") ||
                        !strcmp(k, "fixed_interval") || !strcmp(k, "offset"))) {
        rc = date_interval_param(c, a, e, have_interval);
    } else if (!date && !strcmp(k, "interval")) {
        double v;
        if (!fds__aggp_double(e, &v))
            rc = fds__aggp_bad_value(c, a, k);
        else if (!(v > 0) || !isfinite(v))
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "[interval] must be >0 for histogram "
                              "aggregation [%s]", a->name);
        else
            a->interval = v;
        *have_interval = true;
    } else if (!date && !strcmp(k, "offset")) {
        if (!fds__aggp_double(e, &a->offset) || !isfinite(a->offset))
            rc = fds__aggp_bad_value(c, a, k);
    } else if (!strcmp(k, "extended_bounds")) {
        rc = fds__aggp_bounds(c, a, e, k, &a->ext_min, &a->ext_max);
        a->has_ext = true;
    } else if (!strcmp(k, "hard_bounds")) {
        rc = fds__aggp_bounds(c, a, e, k, &a->hard_min, &a->hard_max);
        a->has_hard = true;
    } else if (!strcmp(k, "keyed")) {
        rc = keyed_param(c, a, e);
    } else {
        rc = fds__aggp_unknown_field(c, a, k);
    }
    return rc;
}

int fds__agg_parse_histogram(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                             char **paths)
{
    bool date = a->type == FDS_AGG_DATE_HISTOGRAM;
    unsigned vs = date ? FDS__VS_DATES : 0;
    int rc = fds__aggp_values_source(c, a, b, vs);
    if (rc)
        return rc;
    bool have_interval = false;
    if ((rc = fds__aggp_each_param(c, a, b, vs, histogram_param, paths, &have_interval)))
        return rc;
    if (date && !have_interval)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Invalid interval specified, must be non-null and "
                            "non-empty");
    if (!date && !have_interval)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[interval] must be >0 for histogram aggregation [%s]",
                            a->name);
    return 0;
}

/* One range {"key", "from", "to"} of a range / date_range into rg. */
static int one_range(fds__dsl_ctx *c, fds_agg *a, const cJSON *r,
                     fds_agg_range *rg)
{
    int rc = 0;
    rg->from = -INFINITY;
    rg->to = INFINITY;
    if (!cJSON_IsObject(r))
        rc = fds__aggp_bad_value(c, a, "ranges");
    for (const cJSON *p = rc ? NULL : r->child; p && !rc; p = p->next) {
        if (!strcmp(p->string, "key")) {
            if (!cJSON_IsString(p))
                rc = fds__aggp_bad_value(c, a, "key");
            else if (!(rg->key = strdup(p->valuestring)))
                rc = fds__aggp_oom(c);
        } else if (!strcmp(p->string, "from") || !strcmp(p->string, "to")) {
            double *d = p->string[0] == 'f' ? &rg->from : &rg->to;
            if (cJSON_IsNull(p))
                continue;
            rc = a->type == FDS_AGG_DATE_RANGE ? fds__aggp_date(c, a, p, false, d)
                                               : fds__aggp_number(c, a, p, p->string, d);
        } else {
            rc = fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                              "[range] unknown field [%s]", p->string);
        }
    }
    return rc;
}

static int range_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e,
                       char **paths, void *st)
{
    (void)paths;
    (void)st;
    const char *k = e->string;
    int rc = 0;
    if (!strcmp(k, "keyed")) {
        rc = keyed_param(c, a, e);
    } else if (!strcmp(k, "ranges")) {
        if (!cJSON_IsArray(e))
            rc = fds__aggp_bad_value(c, a, k);
        size_t cnt = (size_t)cJSON_GetArraySize(e);
        if (!rc && cnt > FDS_AGG_LIST_MAX)
            rc = fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                              "[ranges] takes at most %d ranges",
                              FDS_AGG_LIST_MAX);
        if (!rc && !(a->ranges = calloc(cnt + 1, sizeof *a->ranges)))
            rc = fds__aggp_oom(c);
        for (const cJSON *r = rc ? NULL : e->child; r && !rc; r = r->next)
            rc = one_range(c, a, r, &a->ranges[a->nranges++]);
    } else {
        rc = fds__aggp_unknown_field(c, a, k);
    }
    return rc;
}

int fds__agg_parse_range(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                         char **paths)
{
    unsigned vs = a->type == FDS_AGG_DATE_RANGE ? FDS__VS_DATES : 0;
    int rc = fds__aggp_values_source(c, a, b, vs);
    if (rc || (rc = fds__aggp_each_param(c, a, b, vs, range_param, paths, NULL)))
        return rc;
    /* buckets answer in (from, to) order, as Elasticsearch's RangeAggregator
     * sorts its ranges (stable: equal ranges keep the request's order) */
    for (size_t i = 1; i < a->nranges; i++) {
        fds_agg_range x = a->ranges[i];
        size_t j = i;
        while (j > 0 && (a->ranges[j - 1].from > x.from ||
                         (a->ranges[j - 1].from == x.from && a->ranges[j - 1].to > x.to))) {
            a->ranges[j] = a->ranges[j - 1];
            j--;
        }
        a->ranges[j] = x;
    }
    if (!a->nranges)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "No [ranges] specified for the [%s] aggregation",
                            a->name);
    return 0;
}

int fds__agg_parse_filter(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                          char **paths)
{
    (void)paths;
    a->filters = calloc(1, sizeof *a->filters);
    if (!a->filters)
        return fds__aggp_oom(c);
    a->filters[0] = fds__dsl_query(c, b);
    a->nfilters = 1;
    return a->filters[0] ? 0 : c->err->code ? c->err->code : fds__aggp_oom(c);
}

/* filters' `filters`: an object of named queries (answered sorted by key,
 * as Elasticsearch's FiltersAggregationBuilder sorts them) or a list. */
static int filters_list(fds__dsl_ctx *c, fds_agg *a, const cJSON *e)
{
    int rc = 0;
    bool named = cJSON_IsObject(e);
    if (!named && !cJSON_IsArray(e))
        rc = fds__aggp_bad_value(c, a, e->string);
    size_t cnt = (size_t)cJSON_GetArraySize(e);
    if (!rc && cnt > FDS_AGG_LIST_MAX)
        rc = fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                          "[filters] takes at most %d filters",
                          FDS_AGG_LIST_MAX);
    if (!rc && (!(a->filters = calloc(cnt + 1, sizeof *a->filters)) ||
                (named && !(a->filter_keys = calloc(cnt + 1,
                                                    sizeof *a->filter_keys)))))
        rc = fds__aggp_oom(c);
    for (const cJSON *q = rc ? NULL : e->child; q && !rc; q = q->next) {
        size_t at = a->nfilters;
        while (named && at > 0 && strcmp(a->filter_keys[at - 1], q->string) > 0)
            at--;
        fds_query *fq = fds__dsl_query(c, q);
        char *key = named ? strdup(q->string) : NULL;
        if (!fq || (named && !key)) {
            fds__query_free(fq);
            free(key);
            rc = c->err->code ? c->err->code : fds__aggp_oom(c);
            break;
        }
        memmove(a->filters + at + 1, a->filters + at,
                (a->nfilters - at) * sizeof *a->filters);
        a->filters[at] = fq;
        if (named) {
            memmove(a->filter_keys + at + 1, a->filter_keys + at,
                    (a->nfilters - at) * sizeof *a->filter_keys);
            a->filter_keys[at] = key;
        }
        a->nfilters++;
    }
    return rc;
}

static int filters_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e,
                         char **paths, void *st)
{
    (void)paths;
    (void)st;
    const char *k = e->string;
    int rc = 0;
    if (!strcmp(k, "filters")) {
        rc = filters_list(c, a, e);
    } else if (!strcmp(k, "other_bucket")) {
        if (!cJSON_IsBool(e))
            rc = fds__aggp_bad_value(c, a, k);
        a->other_bucket = cJSON_IsTrue(e);
    } else if (!strcmp(k, "other_bucket_key")) {
        if (!cJSON_IsString(e))
            rc = fds__aggp_bad_value(c, a, k);
        else if (!(a->other_key = strdup(e->valuestring)))
            rc = fds__aggp_oom(c);
        a->other_bucket = true;
    } else if (!strcmp(k, "keyed")) {
        rc = fds__aggp_unsupported(c, a, k);
    } else {
        rc = fds__aggp_unknown_field(c, a, k);
    }
    return rc;
}

int fds__agg_parse_filters(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                           char **paths)
{
    unsigned vs = FDS__VS_KEYWORD | FDS__VS_NO_FIELD | FDS__VS_NO_MISSING;
    int rc = fds__aggp_values_source(c, a, b, vs);
    if (rc || (rc = fds__aggp_each_param(c, a, b, vs, filters_param, paths, NULL)))
        return rc;
    if (!a->filters)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[filters] cannot be null in [%s]", a->name);
    if (a->other_bucket && !a->other_key && !(a->other_key = strdup("_other_")))
        return fds__aggp_oom(c);
    return 0;
}

int fds__agg_parse_missing(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                           char **paths)
{
    unsigned vs = FDS__VS_KEYWORD | FDS__VS_NO_MISSING;
    int rc = fds__aggp_values_source(c, a, b, vs);
    return rc ? rc : fds__aggp_each_param(c, a, b, vs, fds__aggp_no_param, paths, NULL);
}

int fds__agg_parse_composite(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                             char **paths)
{
    (void)paths;
    return parse_composite(c, a, b);
}

/* ---- metric aggregations --------------------------------------------------- */

static int stats_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e,
                       char **paths, void *st)
{
    (void)paths;
    (void)st;
    const char *k = e->string;
    if (a->type != FDS_AGG_EXTENDED_STATS || strcmp(k, "sigma"))
        return fds__aggp_unknown_field(c, a, k);
    double v;
    if (!fds__aggp_double(e, &v))
        return fds__aggp_bad_value(c, a, k);
    if (!(v >= 0))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[sigma] must be greater than or equal to 0. "
                            "Found [%g] in [%s]", v, a->name);
    a->sigma = v;
    return 0;
}

int fds__agg_parse_stats(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                         char **paths)
{
    unsigned vs = a->type == FDS_AGG_VALUE_COUNT ? FDS__VS_KEYWORD : 0;
    int rc = fds__aggp_values_source(c, a, b, vs);
    return rc ? rc : fds__aggp_each_param(c, a, b, vs, stats_param, paths, NULL);
}

static int cardinality_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e,
                             char **paths, void *st)
{
    (void)paths;
    (void)st;
    const char *k = e->string;
    int rc = 0;
    if (!strcmp(k, "precision_threshold")) {
        uint64_t u;
        if (!(rc = fds__aggp_count(c, a, e, k, UINT32_MAX, &u)))
            a->precision_threshold = (uint32_t)u;
    } else if (!strcmp(k, "execution_hint")) {
        /* how to collect, not what; CardinalityAggregatorFactory's
         * ExecutionMode names only */
        static const char *const HINTS[] = {"global_ordinals", "segment_ordinals",
                                            "direct", "save_memory_heuristic",
                                            "save_time_heuristic"};
        bool known = false;
        for (size_t i = 0; cJSON_IsString(e) && i < sizeof HINTS / sizeof *HINTS; i++)
            known |= !strcmp(e->valuestring, HINTS[i]);
        if (!cJSON_IsString(e))
            rc = fds__aggp_bad_value(c, a, k);
        else if (!known)
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "Invalid execution hint for cardinality aggregation. "
                              "Got [%s]", e->valuestring);
    } else {
        rc = fds__aggp_unknown_field(c, a, k);
    }
    return rc;
}

int fds__agg_parse_cardinality(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                               char **paths)
{
    int rc = fds__aggp_values_source(c, a, b, FDS__VS_KEYWORD);
    return rc ? rc : fds__aggp_each_param(c, a, b, FDS__VS_KEYWORD, cardinality_param, paths,
                                NULL);
}

/* percentiles' `percents`, percentile_ranks' `values`: sorted ascending,
 * as Elasticsearch answers them. */
static int percent_list(fds__dsl_ctx *c, fds_agg *a, const cJSON *e)
{
    const char *k = e->string;
    int rc = 0;
    size_t cnt = cJSON_IsArray(e) ? (size_t)cJSON_GetArraySize(e) : 0;
    if (!cnt || cnt > FDS_AGG_LIST_MAX)
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "[%s] must be a list of 1 to %d numbers in [%s]",
                          k, FDS_AGG_LIST_MAX, a->name);
    free(a->pcts);
    a->npcts = 0;
    if (!rc && !(a->pcts = calloc(cnt, sizeof *a->pcts)))
        rc = fds__aggp_oom(c);
    for (const cJSON *p = rc ? NULL : e->child; p && !rc; p = p->next) {
        double v;
        /* a percent is read as Elasticsearch's parser reads a double: a
         * number or a string holding one (Grafana sends "99") */
        if (a->type == FDS_AGG_PERCENTILE_RANKS) {
            rc = fds__aggp_number(c, a, p, k, &v);
        } else if (!fds__aggp_double(p, &v)) {
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_NUMBER_FORMAT,
                              "For input string: \"%s\" in [%s] of [%s]",
                              cJSON_IsString(p) ? p->valuestring : fds__dsl_jtype(p),
                              k, a->name);
        } else if (!(v >= 0) || v > 100) {
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "percent must be in [0,100], got [%g]: [%s]", v,
                              a->name);
        }
        a->pcts[a->npcts++] = v;
    }
    for (size_t i = 1; i < a->npcts; i++)
        for (size_t j = i; j > 0 && a->pcts[j - 1] > a->pcts[j]; j--) {
            double x = a->pcts[j];
            a->pcts[j] = a->pcts[j - 1];
            a->pcts[j - 1] = x;
        }
    return rc;
}

static int percentiles_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e,
                             char **paths, void *st)
{
    (void)paths;
    (void)st;
    const char *k = e->string;
    int rc = 0;
    if (!strcmp(k, "keyed")) {
        rc = keyed_param(c, a, e);
    } else if (!strcmp(k, "hdr")) {
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "[%s] method [hdr] is not supported by fieldstore: "
                          "use [tdigest]", fds_agg_type_name(a->type));
    } else if (!strcmp(k, "tdigest")) {
        for (const cJSON *p = cJSON_IsObject(e) ? e->child : NULL; p && !rc;
             p = p->next) {
            double v;
            if (!strcmp(p->string, "compression") && !fds__aggp_double(p, &v))
                rc = fds__aggp_bad_value(c, a, p->string);
            else if (!strcmp(p->string, "compression") && v > 0 &&
                     v <= FDS_TDIGEST_MAX_COMPRESSION)
                a->compression = v;
            else if (!strcmp(p->string, "compression"))
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[compression] must be in (0, %g] in [%s]",
                                  FDS_TDIGEST_MAX_COMPRESSION, a->name);
            else
                rc = fds__aggp_unsupported(c, a, p->string);
        }
        if (!rc && !cJSON_IsObject(e))
            rc = fds__aggp_bad_value(c, a, k);
    } else if ((a->type == FDS_AGG_PERCENTILES && !strcmp(k, "percents")) ||
               (a->type == FDS_AGG_PERCENTILE_RANKS && !strcmp(k, "values"))) {
        rc = percent_list(c, a, e);
    } else {
        rc = fds__aggp_unknown_field(c, a, k);
    }
    return rc;
}

int fds__agg_parse_percentiles(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                               char **paths)
{
    int rc = fds__aggp_values_source(c, a, b, 0);
    if (rc)
        return rc;
    a->keyed = true;
    if ((rc = fds__aggp_each_param(c, a, b, 0, percentiles_param, paths, NULL)))
        return rc;
    if (a->type == FDS_AGG_PERCENTILE_RANKS && !a->npcts)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[values] must not be null: [%s]", a->name);
    if (a->type == FDS_AGG_PERCENTILES && !a->npcts) {
        /* Elasticsearch's PercentilesConfig default */
        static const double DEF[] = {1, 5, 25, 50, 75, 95, 99};
        if (!(a->pcts = malloc(sizeof DEF)))
            return fds__aggp_oom(c);
        memcpy(a->pcts, DEF, sizeof DEF);
        a->npcts = sizeof DEF / sizeof *DEF;
    }
    return 0;
}

int fds__agg_parse_top_hits(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                            char **paths)
{
    (void)paths;
    return fds__dsl_top_hits(c, b, a->name, &a->th);
}

/* derivative's `unit`: a fixed length ("1s", "5m", "1d") or a calendar
 * unit up to a week ("second" .. "week", "1w"), in ms; 0 when neither. */
static int64_t pipeline_unit_ms(const char *s)
{
    static const struct { const char *name; int64_t ms; } UNITS[] = {
        {"second", 1000}, {"minute", 60000}, {"hour", 3600000},
        {"day", 86400000}, {"week", 604800000}, {"1w", 604800000}};
    for (size_t i = 0; i < sizeof UNITS / sizeof *UNITS; i++)
        if (!strcmp(s, UNITS[i].name))
            return UNITS[i].ms;
    int64_t ns;
    return fds_time_value_ns(s, false, &ns) && ns >= 1000000 ? ns / 1000000 : 0;
}

/* The scripts moving_fn runs: one MovingFunctions call over `values`
 * (spaces aside), as Elasticsearch's documentation writes them. */
static const char *const MFN_SCRIPTS[] = {
    [FDS_MFN_MAX] = "MovingFunctions.max(values)",
    [FDS_MFN_MIN] = "MovingFunctions.min(values)",
    [FDS_MFN_SUM] = "MovingFunctions.sum(values)",
    [FDS_MFN_UNWEIGHTED_AVG] = "MovingFunctions.unweightedAvg(values)",
    [FDS_MFN_LINEAR_WEIGHTED_AVG] = "MovingFunctions.linearWeightedAvg(values)",
    [FDS_MFN_STD_DEV] =
        "MovingFunctions.stdDev(values,MovingFunctions.unweightedAvg(values))"};

/* moving_fn's `script`: a string or {"source"|"inline": ..., "lang":
 * "painless"}, one of MFN_SCRIPTS; 0 or the error. */
static int mfn_script(fds__dsl_ctx *c, fds_agg *a, const cJSON *e)
{
    const cJSON *src = e;
    if (cJSON_IsObject(e)) {
        const cJSON *lang = cJSON_GetObjectItemCaseSensitive(e, "lang");
        src = cJSON_GetObjectItemCaseSensitive(e, "source");
        if (!src)
            src = cJSON_GetObjectItemCaseSensitive(e, "inline");
        if (lang && !(cJSON_IsString(lang) && !strcmp(lang->valuestring, "painless")))
            src = NULL;
    }
    if (!cJSON_IsString(src))
        return fds__aggp_bad_value(c, a, "script");
    char norm[128];
    size_t n = 0;
    for (const char *p = src->valuestring; *p && n < sizeof norm - 1; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            norm[n++] = *p;
    norm[n] = 0;
    if (n && norm[n - 1] == ';')
        norm[--n] = 0;
    for (size_t i = 0; i < sizeof MFN_SCRIPTS / sizeof *MFN_SCRIPTS; i++)
        if (!strcmp(norm, MFN_SCRIPTS[i])) {
            a->mfn = (int)i;
            return 0;
        }
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "[moving_fn] script [%s] of [%s] is not supported by "
                        "fieldstore: it runs scripts that are one call of "
                        "MovingFunctions max, min, sum, unweightedAvg, "
                        "linearWeightedAvg or stdDev(values, "
                        "MovingFunctions.unweightedAvg(values))",
                        src->valuestring, a->name);
}

int fds__agg_parse_pipeline(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                            char **paths)
{
    (void)paths;
    static const char *const GAPS[] = {"skip", "insert_zeros", "keep_values"};
    if (!cJSON_IsObject(b))
        return fds__aggp_bad_value(c, a, fds_agg_type_name(a->type));
    int rc = 0;
    bool have_script = false;
    a->lag = 1;
    for (const cJSON *e = b->child; e && !rc; e = e->next) {
        const char *k = e->string;
        double lag;
        bool mf = a->type == FDS_AGG_MOVING_FN;
        if (mf && !strcmp(k, "script")) {
            rc = mfn_script(c, a, e);
            have_script = true;
        } else if (mf && (!strcmp(k, "window") || !strcmp(k, "shift"))) {
            double v; /* ints as the parser reads them: 5, 5.0 or "5" */
            bool w = k[0] == 'w';
            if (!fds__aggp_double(e, &v) || v != floor(v) || (w && (v < 1 || v > UINT32_MAX)) ||
                (!w && fabs(v) > INT32_MAX))
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[%s] must be %s integer: [%s]", k,
                                  w ? "a positive" : "an", a->name);
            else if (w)
                a->window = (uint32_t)v;
            else
                a->shift = (int32_t)v;
        } else if (!strcmp(k, "lag") && a->type == FDS_AGG_SERIAL_DIFF) {
            /* an int as the parser reads one: 5, 5.0 (Grafana) or "5" */
            if (!fds__aggp_double(e, &lag) || lag != floor(lag) || lag < 1 ||
                lag > UINT32_MAX)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[lag] must be a positive integer: [%s]", a->name);
            else
                a->lag = (uint32_t)lag;
        } else if (!strcmp(k, "buckets_path")) {
            if (!cJSON_IsString(e) || !*e->valuestring)
                rc = fds__aggp_bad_value(c, a, k);
            else if (!(free(a->bp), a->bp = strdup(e->valuestring)))
                rc = fds__aggp_oom(c);
        } else if (!strcmp(k, "gap_policy") && a->type != FDS_AGG_CUMULATIVE_SUM) {
            size_t g = 0;
            while (g < 3 && !(cJSON_IsString(e) && !strcmp(e->valuestring, GAPS[g])))
                g++;
            if (g == 3)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "Unknown gap policy [%s] in [%s]",
                                  cJSON_IsString(e) ? e->valuestring : fds__dsl_jtype(e),
                                  a->name);
            a->gap = (int)g;
        } else if (!strcmp(k, "unit") && a->type == FDS_AGG_DERIVATIVE) {
            if (!cJSON_IsString(e) || !(a->unit_ms = pipeline_unit_ms(e->valuestring)))
                rc = fds__aggp_bad_value(c, a, k);
        } else if (!strcmp(k, "format")) {
            rc = fds__aggp_unsupported(c, a, k);
        } else {
            rc = fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                              "[%s] unknown field [%s]", fds_agg_type_name(a->type), k);
        }
    }
    if (!rc && !a->bp)
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "[buckets_path] must be set for aggregation [%s]", a->name);
    if (!rc && a->type == FDS_AGG_MOVING_FN && (!have_script || !a->window))
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "[moving_fn] of [%s] needs a [script] and a [window]",
                          a->name);
    return rc;
}

static int rate_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e,
                      char **paths, void *st)
{
    (void)paths;
    (void)st;
    const char *k = e->string;
    if (!strcmp(k, "unit")) {
        /* DateHistogramAggregationBuilder.DATE_FIELD_UNITS */
        static const struct { const char *name; int64_t ms; } UNITS[] = {
            {"second", 1000}, {"1s", 1000}, {"minute", 60000}, {"1m", 60000},
            {"hour", 3600000}, {"1h", 3600000}, {"day", 86400000},
            {"1d", 86400000}, {"week", 604800000}, {"1w", 604800000},
            {"month", 0}, {"1M", 0}, {"quarter", 0}, {"1q", 0}, {"year", 0},
            {"1y", 0}};
        for (size_t i = 0; cJSON_IsString(e) && i < sizeof UNITS / sizeof *UNITS; i++)
            if (!strcmp(e->valuestring, UNITS[i].name)) {
                if (!(a->unit_ms = UNITS[i].ms))
                    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                        "[rate] unit [%s] of [%s] is not "
                                        "supported by fieldstore: units up to "
                                        "a week", e->valuestring, a->name);
                return 0;
            }
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Unsupported unit [%s] in [%s]",
                            cJSON_IsString(e) ? e->valuestring : fds__dsl_jtype(e),
                            a->name);
    }
    if (!strcmp(k, "mode")) {
        bool sum = cJSON_IsString(e) && !strcmp(e->valuestring, "sum");
        a->rate_count = cJSON_IsString(e) && !strcmp(e->valuestring, "value_count");
        if (!sum && !a->rate_count)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Invalid rate mode [%s] in [%s]",
                                cJSON_IsString(e) ? e->valuestring : fds__dsl_jtype(e),
                                a->name);
        if (!a->field)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "The mode parameter is only supported with field "
                                "or script in [%s]", a->name);
        return 0;
    }
    return fds__aggp_unknown_field(c, a, k);
}

/* rate (Elasticsearch's RateAggregationBuilder): the sum of `field` (or
 * its count with mode value_count, or the bucket's docs without a field)
 * per `unit` of its date_histogram's bucket length; the parent is checked
 * with the siblings (aggs_parse.c) and the value computed at the final
 * reduce. */
int fds__agg_parse_rate(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                        char **paths)
{
    bool field = cJSON_IsObject(b) && cJSON_GetObjectItemCaseSensitive(b, "field");
    unsigned vs = field ? 0 : FDS__VS_NO_FIELD;
    int rc = fds__aggp_values_source(c, a, b, vs);
    return rc ? rc : fds__aggp_each_param(c, a, b, vs, rate_param, paths, NULL);
}

/* Elasticsearch's index.top_metrics_max_size default. */
#define FDS_TOP_METRICS_MAX_SIZE 10

/* One `metrics` entry {"field": name}: appended to docvalue list dv and
 * to a->metrics. */
static int top_metric_field(fds__dsl_ctx *c, fds_agg *a, const cJSON *m,
                            cJSON *dv)
{
    const cJSON *f = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "field")
                                       : NULL;
    if (!cJSON_IsString(f) || cJSON_GetArraySize(m) != 1 || strchr(f->valuestring, '*'))
        return fds__aggp_bad_value(c, a, "metrics");
    fds_field_info fb;
    const fds_field_info *fi = fds__dsl_field(c, f->valuestring, &fb);
    if (fi && (fi->type == FDS_FT_TEXT || fi->type == FDS_FT_OBJECT))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Field [%s] of type [%s] is not supported for "
                            "aggregation [top_metrics]", f->valuestring,
                            fi->type == FDS_FT_TEXT ? "text" : "object");
    if (a->nmetrics == FDS_AGG_LIST_MAX)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[metrics] takes at most %d fields in [%s]",
                            FDS_AGG_LIST_MAX, a->name);
    char **ms = realloc(a->metrics, (a->nmetrics + 1) * sizeof *ms);
    if (!ms)
        return fds__aggp_oom(c);
    a->metrics = ms;
    if (!(ms[a->nmetrics] = strdup(f->valuestring)))
        return fds__aggp_oom(c);
    a->nmetrics++;
    return cJSON_AddItemToArray(dv, cJSON_CreateString(f->valuestring))
               ? 0 : fds__aggp_oom(c);
}

/*
 * top_metrics (Elasticsearch's TopMetricsAggregationBuilder): `metrics`
 * (one {"field": f} or a list of them, required; a text or object field
 * refused), `sort` (required, one key), `size` (1, up to
 * FDS_TOP_METRICS_MAX_SIZE; a number or a numeric string: Kibana's Lens
 * "last value" sends 1, Grafana's Top Metrics "1").  Read as the top_hits
 * of that sort and size without `_source` whose docvalue_fields are the
 * metrics -- so it collects and reduces as top_hits does -- with a date
 * sort key printed in its field's format, as Elasticsearch's SortValue
 * prints it; rendered as {"top": [{"sort", "metrics"}]}.
 */
int fds__agg_parse_top_metrics(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                               char **paths)
{
    (void)paths;
    cJSON *th = cJSON_CreateObject(), *dv = cJSON_CreateArray();
    if (!th || !dv || !cJSON_AddFalseToObject(th, "_source")) {
        cJSON_Delete(th);
        cJSON_Delete(dv);
        return fds__aggp_oom(c);
    }
    cJSON_AddItemToObject(th, "docvalue_fields", dv);
    double size = 1;
    int rc = cJSON_IsObject(b) ? 0 : fds__aggp_bad_value(c, a, "top_metrics");
    const cJSON *e;
    for (e = rc ? NULL : b->child; e && !rc; e = e->next) {
        const char *k = e->string;
        if (!strcmp(k, "metrics")) {
            const cJSON *m;
            if (cJSON_IsArray(e))
                cJSON_ArrayForEach(m, e) {
                    if ((rc = top_metric_field(c, a, m, dv)))
                        break;
                }
            else
                rc = top_metric_field(c, a, e, dv);
        } else if (!strcmp(k, "sort")) {
            if ((cJSON_IsArray(e) || cJSON_IsObject(e)) && cJSON_GetArraySize(e) > 1)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[top_metrics] only supports sorting on a "
                                  "single field in [%s]", a->name);
            else if (!cJSON_AddItemToObject(th, "sort", cJSON_Duplicate(e, true)))
                rc = fds__aggp_oom(c);
        } else if (!strcmp(k, "size")) {
            if (!fds__aggp_double(e, &size) || size != floor(size))
                rc = fds__aggp_bad_value(c, a, k);
            else if (size < 1)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[size] must be more than 0 but was [%.0f]", size);
            else if (size > FDS_TOP_METRICS_MAX_SIZE)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[top_metrics.size] must not be more than "
                                  "[%d] but was [%.0f]. This limit can be set "
                                  "by changing the [index.top_metrics_max_size] "
                                  "index level setting.",
                                  FDS_TOP_METRICS_MAX_SIZE, size);
        } else {
            rc = fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                              "[top_metrics] unknown field [%s]", k);
        }
    }
    if (!rc && !a->nmetrics) /* ConstructingObjectParser's words */
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "Required [metrics]");
    if (!rc && !cJSON_GetObjectItemCaseSensitive(th, "sort"))
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "[top_metrics] [%s] needs a [sort]", a->name);
    if (!rc && !cJSON_AddNumberToObject(th, "size", size))
        rc = fds__aggp_oom(c);
    if (!rc)
        rc = fds__dsl_top_hits(c, th, a->name, &a->th);
    cJSON_Delete(th);
    /* a date key's value as its field's format prints it */
    for (unsigned k = 0; !rc && k < a->th->nsort; k++) {
        fds_sort_spec *s = &a->th->sort[k];
        fds_field_info fb;
        const fds_field_info *fi = s->kind == FDS_SORT_FIELD && !s->format &&
                                           s->ftype == FDS_FT_DATE
                                       ? fds__dsl_field(c, s->field, &fb)
                                       : NULL;
        if (!fi)
            continue;
        const char *fmt = fi->date_format ? fi->date_format->text : NULL;
        s->format = strdup(fmt && fds__dsl_date_format_ok(fmt)
                               ? fmt : "strict_date_optional_time");
        if (!s->format)
            rc = fds__aggp_oom(c);
    }
    return rc;
}

/* Elasticsearch's SamplerAggregationBuilder default shard_size. */
#define SAMPLER_SHARD_SIZE 100

/* sampler (Kibana's field statistics send {"shard_size": 5000} around
 * their min, max, value_count and terms): one bucket of the first
 * shard_size documents each shard matches. */
int fds__agg_parse_sampler(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                           char **paths)
{
    (void)paths;
    if (!cJSON_IsObject(b))
        return fds__dsl_err(c->err, "Expected [START_OBJECT] under [sampler], "
                                    "but got a [%s] in [%s]",
                            fds__dsl_jtype(b), a->name);
    a->shard_size = SAMPLER_SHARD_SIZE;
    const cJSON *it;
    cJSON_ArrayForEach(it, b) {
        if (strcmp(it->string, "shard_size"))
            return fds__dsl_err(c->err, "[sampler] unknown field [%s]", it->string);
        if (fds__dsl_nonneg(it, "shard_size", &a->shard_size, c->err))
            return c->err->code;
    }
    return 0;
}
