/*
 * aggs_parse.c: a search body's `aggs` / `aggregations` into an fds_agg tree
 * (aggs.h), with Elasticsearch 8's parameter names, defaults and errors.
 *
 * Every parameter read here has its effect in aggs.c; a parameter
 * Elasticsearch knows and we do not implement is refused by name
 * (illegal_argument_exception), an unknown one as Elasticsearch's object
 * parser refuses it (x_content_parse_exception "[terms] unknown field
 * [x]"), an unknown aggregation type as its named-object registry does
 * (parsing_exception "Unknown aggregation type [x]").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggs/aggs.h"
#include "dsl/dsl_parse_int.h"
#include "aggs/hll.h"
#include "aggs/tdigest.h"

static const struct {
    const char *name;
    int type;
} TYPES[] = {
    {"terms", FDS_AGG_TERMS},
    {"avg", FDS_AGG_AVG},
    {"sum", FDS_AGG_SUM},
    {"min", FDS_AGG_MIN},
    {"max", FDS_AGG_MAX},
    {"value_count", FDS_AGG_VALUE_COUNT},
    {"stats", FDS_AGG_STATS},
    {"extended_stats", FDS_AGG_EXTENDED_STATS},
    {"cardinality", FDS_AGG_CARDINALITY},
    {"percentiles", FDS_AGG_PERCENTILES},
    {"percentile_ranks", FDS_AGG_PERCENTILE_RANKS},
    {"date_histogram", FDS_AGG_DATE_HISTOGRAM},
    {"histogram", FDS_AGG_HISTOGRAM},
    {"range", FDS_AGG_RANGE},
    {"date_range", FDS_AGG_DATE_RANGE},
    {"filter", FDS_AGG_FILTER},
    {"filters", FDS_AGG_FILTERS},
    {"missing", FDS_AGG_MISSING},
    {"composite", FDS_AGG_COMPOSITE},
    {"top_hits", FDS_AGG_TOP_HITS},
};

/* Aggregation types Elasticsearch has that we do not (yet). */
static const char *const UNSUPPORTED[] = {
    "significant_terms", "significant_text", "rare_terms",
    "multi_terms", "auto_date_histogram", "variable_width_histogram",
    "geo_bounds", "geo_centroid", "geohash_grid", "geotile_grid", "nested",
    "reverse_nested", "global", "sampler", "diversified_sampler",
    "adjacency_matrix", "ip_range", "median_absolute_deviation",
    "weighted_avg", "string_stats", "boxplot", "t_test", "top_metrics",
    "scripted_metric", "matrix_stats", "rate", "bucket_script",
    "bucket_selector", "bucket_sort", "avg_bucket", "sum_bucket",
    "max_bucket", "min_bucket", "stats_bucket", "extended_stats_bucket",
    "percentiles_bucket", "derivative", "cumulative_sum", "moving_fn",
    "serial_diff", "cumulative_cardinality", "moving_percentiles",
    "normalize", "inference", "categorize_text", "frequent_item_sets",
    "random_sampler", "time_series", "children", "parent", NULL};

const char *fds_agg_type_name(int type)
{
    for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
        if (TYPES[i].type == type)
            return TYPES[i].name;
    return "";
}

bool fds_agg_is_metric(int type)
{
    return type >= FDS_AGG_AVG && type <= FDS_AGG_PERCENTILE_RANKS;
}

void fds_agg_free(fds_agg *a)
{
    if (!a)
        return;
    free(a->name);
    free(a->field);
    free(a->missing_s);
    for (size_t i = 0; i < a->nincl; i++)
        free(a->incl[i]);
    for (size_t i = 0; i < a->nexcl; i++)
        free(a->excl[i]);
    free(a->incl);
    free(a->excl);
    free(a->incl_len);
    free(a->excl_len);
    free(a->incl_d);
    free(a->excl_d);
    for (size_t i = 0; i < a->nranges; i++)
        free(a->ranges[i].key);
    free(a->ranges);
    for (size_t i = 0; i < a->nfilters; i++) {
        fds__query_free(a->filters[i]);
        if (a->filter_keys)
            free(a->filter_keys[i]);
    }
    free(a->filters);
    free(a->filter_keys);
    free(a->other_key);
    free(a->pcts);
    for (size_t i = 0; i < a->nsrcs; i++) {
        fds_agg_free(a->srcs[i]);
        if (a->after)
            free(a->after[i].s);
    }
    free(a->srcs);
    free(a->after);
    fds_search_request_free(a->th);
    for (size_t i = 0; i < a->nsubs; i++)
        fds_agg_free(a->subs[i]);
    free(a->subs);
    free(a);
}

/* ---- errors ----------------------------------------------------------------- */

static int unknown_field(fds__dsl_ctx *c, const fds_agg *a, const char *k)
{
    return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                        "[%s] unknown field [%s]", fds_agg_type_name(a->type), k);
}

static int unsupported(fds__dsl_ctx *c, const fds_agg *a, const char *k)
{
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "[%s] parameter [%s] is not supported by fieldstore",
                        fds_agg_type_name(a->type), k);
}

static int bad_value(fds__dsl_ctx *c, const fds_agg *a, const char *k)
{
    return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                        "[%s] failed to parse field [%s]",
                        fds_agg_type_name(a->type), k);
}

static int oom(fds__dsl_ctx *c)
{
    return fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
}

static int64_t now_ms(fds__dsl_ctx *c)
{
    if (!c->now_ms) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c->now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    return c->now_ms;
}

/* ---- values ----------------------------------------------------------------- */

/* A non-negative integer parameter. */
static int get_count(fds__dsl_ctx *c, const fds_agg *a, const cJSON *v,
                     const char *k, uint64_t max, uint64_t *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return bad_value(c, a, k);
    if (v->valuedouble < 0 || v->valuedouble > (double)max)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] must be between 0 and %llu in [%s]", k,
                            (unsigned long long)max, a->name);
    *out = (uint64_t)v->valuedouble;
    return 0;
}

/* A time_zone that is neither an offset nor a zone id (java.time's
 * ZoneRulesException text, which Elasticsearch returns). */
static int unknown_zone(fds__dsl_ctx *c, const char *tz)
{
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "Unknown time-zone ID: %s", tz);
}

/* A date value (epoch ms number, or a date / date-math string in the
 * aggregation's format). */
static int get_date(fds__dsl_ctx *c, const fds_agg *a, const cJSON *v,
                    bool round_up, double *out)
{
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return 0;
    }
    int64_t ms;
    if (!cJSON_IsString(v) ||
        fds__date_math(v->valuestring, strlen(v->valuestring),
                       a->has_fmt ? &a->fmt : NULL, &a->tz, round_up,
                       now_ms(c), &ms))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_PARSE,
                            "failed to parse date field [%s] with format [%s]",
                            cJSON_IsString(v) ? v->valuestring : "",
                            a->has_fmt ? a->fmt.text
                                       : "strict_date_optional_time||epoch_millis");
    *out = (double)ms;
    return 0;
}

/* A number for a field of the aggregation's type (dates may be strings). */
static int get_number(fds__dsl_ctx *c, const fds_agg *a, const cJSON *v,
                      const char *k, double *out)
{
    if (a->ftype == FDS_FT_DATE)
        return get_date(c, a, v, false, out);
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return 0;
    }
    if (cJSON_IsBool(v) && a->ftype == FDS_FT_BOOLEAN) {
        *out = cJSON_IsTrue(v);
        return 0;
    }
    if (cJSON_IsString(v)) {
        char *e;
        *out = strtod(v->valuestring, &e);
        if (e != v->valuestring && !*e)
            return 0;
        if (a->ftype == FDS_FT_BOOLEAN && (!strcmp(v->valuestring, "true") ||
                                           !strcmp(v->valuestring, "false"))) {
            *out = !strcmp(v->valuestring, "true");
            return 0;
        }
    }
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_NUMBER_FORMAT,
                        "For input string: \"%s\" in [%s] of [%s]",
                        cJSON_IsString(v) ? v->valuestring : fds__dsl_jtype(v),
                        k, a->name);
}

static int get_missing(fds__dsl_ctx *c, fds_agg *a, const cJSON *v)
{
    if (a->unmapped)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[missing] on the unmapped field [%s] is not "
                            "supported by fieldstore", a->field);
    a->has_missing = true;
    if (a->ftype == FDS_FT_KEYWORD) {
        char buf[64];
        const char *s;
        size_t n;
        if (!fds__dsl_scalar(c, v, buf, sizeof buf, &s, &n))
            return bad_value(c, a, "missing");
        a->missing_s = fds__dsl_dupn(s, n);
        a->missing_len = n;
        return a->missing_s ? 0 : oom(c);
    }
    int rc = get_number(c, a, v, "missing", &a->missing_d);
    a->missing_l = a->missing_d >= 0x1p63 ? INT64_MAX
                 : a->missing_d < -0x1p63 ? INT64_MIN : (int64_t)a->missing_d;
    return rc;
}

/* The field of a values-source aggregation. */
static int get_field(fds__dsl_ctx *c, fds_agg *a, const cJSON *v)
{
    if (!cJSON_IsString(v))
        return bad_value(c, a, "field");
    a->field = strdup(v->valuestring);
    if (!a->field)
        return oom(c);
    fds_field_info fb;
    const fds_field_info *f = fds__dsl_field(c, v->valuestring, &fb);
    if (!f) {
        a->unmapped = true;
        return 0;
    }
    if (f->type == FDS_FT_TEXT || f->type == FDS_FT_OBJECT)
        return fds__dsl_no_fielddata(c, v->valuestring);
    a->ftype = f->type;
    if (f->date_format && !a->has_fmt) {
        a->fmt = *f->date_format;
        a->has_fmt = true;
    }
    return 0;
}

static int get_format(fds__dsl_ctx *c, fds_agg *a, const cJSON *v)
{
    if (!cJSON_IsString(v) ||
        fds__date_format_parse(v->valuestring, strlen(v->valuestring), &a->fmt))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Invalid format: [%s]",
                            cJSON_IsString(v) ? v->valuestring : "");
    a->has_fmt = true;
    return 0;
}

/* `order`: {"_count": "desc"}, {"_key": "asc"}, {"metric": "asc"},
 * {"stats.max": "desc"} or a list of those.  Metric paths are checked
 * against the sub-aggregations once they are parsed (check_order). */
static int get_order(fds__dsl_ctx *c, fds_agg *a, const cJSON *v,
                     char **paths)
{
    const cJSON *list = cJSON_IsArray(v) ? v->child : v;
    for (const cJSON *o = list; o; o = cJSON_IsArray(v) ? o->next : NULL) {
        if (!cJSON_IsObject(o) || !o->child || o->child->next)
            return bad_value(c, a, "order");
        const cJSON *k = o->child;
        if (a->norder == FDS_AGG_ORDER_MAX)
            return fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                                "[order] of [%s] takes at most %d keys", a->name,
                                FDS_AGG_ORDER_MAX);
        if (!cJSON_IsString(k) || (strcmp(k->valuestring, "asc") &&
                                   strcmp(k->valuestring, "desc")))
            return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                                "Unknown order direction [%s]",
                                cJSON_IsString(k) ? k->valuestring : "");
        fds_agg_order *ord = &a->order[a->norder];
        ord->desc = !strcmp(k->valuestring, "desc");
        if (!strcmp(k->string, "_count")) {
            ord->kind = FDS_AGG_ORD_COUNT;
        } else if (!strcmp(k->string, "_key")) {
            ord->kind = FDS_AGG_ORD_KEY;
        } else {
            ord->kind = FDS_AGG_ORD_METRIC;
            if (!(paths[a->norder] = strdup(k->string)))
                return oom(c);
        }
        a->norder++;
    }
    return 0;
}

static const char *const STAT_NAMES[] = {"value", "count", "min", "max",
                                         "avg", "sum"};

/* Resolve the metric paths of a's order against its sub-aggregations. */
static int check_order(fds__dsl_ctx *c, fds_agg *a, char **paths)
{
    for (unsigned i = 0; i < a->norder; i++) {
        if (a->order[i].kind != FDS_AGG_ORD_METRIC)
            continue;
        char *p = paths[i];
        char *dot = strchr(p, '.');
        if (dot)
            *dot = 0;
        const fds_agg *s = NULL;
        for (size_t k = 0; k < a->nsubs; k++)
            if (!strcmp(a->subs[k]->name, p)) {
                s = a->subs[k];
                a->order[i].sub = (unsigned)k;
            }
        int stat = -1;
        bool multi = s && (s->type == FDS_AGG_STATS ||
                           s->type == FDS_AGG_EXTENDED_STATS);
        if (s && fds_agg_is_metric(s->type) && s->type != FDS_AGG_PERCENTILES &&
            s->type != FDS_AGG_PERCENTILE_RANKS) {
            if (!dot && !multi)
                stat = FDS_AGG_STAT_VALUE;
            for (int k = 1; dot && multi && k < 6; k++)
                if (!strcmp(dot + 1, STAT_NAMES[k]))
                    stat = k;
        }
        if (dot)
            *dot = '.';
        if (stat < 0)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Invalid aggregation order path [%s]. Buckets "
                                "can only be sorted on a sub-aggregator path "
                                "that is built out of zero or more single-bucket "
                                "aggregations within the path and a final "
                                "single-bucket or a metrics aggregation at the "
                                "path end; fieldstore sorts on a direct metric "
                                "sub-aggregation (or one value of a stats)", p);
        a->order[i].stat = stat;
    }
    return 0;
}

/* include / exclude: a list of exact values. */
static int get_values(fds__dsl_ctx *c, fds_agg *a, const cJSON *v,
                      const char *k, char ***vals, size_t **lens, double **nums,
                      size_t *n)
{
    if (cJSON_IsString(v) || cJSON_IsObject(v))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] of [terms] as a %s is not supported by "
                            "fieldstore: give a list of exact values", k,
                            cJSON_IsString(v) ? "regular expression"
                                              : "partition");
    if (!cJSON_IsArray(v))
        return bad_value(c, a, k);
    size_t cnt = (size_t)cJSON_GetArraySize(v);
    if (cnt > FDS_AGG_LIST_MAX)
        return fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] takes at most %d values", k, FDS_AGG_LIST_MAX);
    *vals = calloc(cnt + 1, sizeof **vals);
    *lens = calloc(cnt + 1, sizeof **lens);
    *nums = calloc(cnt + 1, sizeof **nums);
    if (!*vals || !*lens || !*nums)
        return oom(c);
    for (const cJSON *e = v->child; e; e = e->next) {
        char buf[64];
        const char *s;
        size_t len;
        if (!fds__dsl_scalar(c, e, buf, sizeof buf, &s, &len))
            return bad_value(c, a, k);
        if (a->ftype != FDS_FT_KEYWORD && !a->unmapped) {
            int rc = get_number(c, a, e, k, &(*nums)[*n]);
            if (rc)
                return rc;
        }
        (*vals)[*n] = fds__dsl_dupn(s, len);
        (*lens)[*n] = len;
        if (!(*vals)[(*n)++])
            return oom(c);
    }
    return 0;
}

/* extended_bounds / hard_bounds: {"min": x, "max": y} (dates may be date
 * math). */
static int get_bounds(fds__dsl_ctx *c, fds_agg *a, const cJSON *v,
                      const char *k, double *lo, double *hi)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    if (!cJSON_IsObject(v))
        return bad_value(c, a, k);
    for (const cJSON *e = v->child; e; e = e->next) {
        double *dst = !strcmp(e->string, "min") ? lo
                    : !strcmp(e->string, "max") ? hi : NULL;
        if (!dst)
            return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                                "[%s] unknown field [%s]", k, e->string);
        int rc = a->type == FDS_AGG_DATE_HISTOGRAM
                     ? get_date(c, a, e, false, dst)
                     : get_number(c, a, e, k, dst);
        if (rc)
            return rc;
    }
    if (*lo > *hi)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s.min][%g] cannot be greater than [%s.max][%g].",
                            k, *lo, k, *hi);
    return 0;
}

/* calendar_interval names and their single-unit forms. */
static const struct {
    const char *name;
    int cal;
} CALS[] = {
    {"second", FDS_CAL_SECOND}, {"1s", FDS_CAL_SECOND},
    {"minute", FDS_CAL_MINUTE}, {"1m", FDS_CAL_MINUTE},
    {"hour", FDS_CAL_HOUR},     {"1h", FDS_CAL_HOUR},
    {"day", FDS_CAL_DAY},       {"1d", FDS_CAL_DAY},
    {"week", FDS_CAL_WEEK},     {"1w", FDS_CAL_WEEK},
    {"month", FDS_CAL_MONTH},   {"1M", FDS_CAL_MONTH},
    {"quarter", FDS_CAL_QUARTER}, {"1q", FDS_CAL_QUARTER},
    {"year", FDS_CAL_YEAR},     {"1y", FDS_CAL_YEAR},
};

/* A time value "90m" ("ms", "s", "m", "h", "d") in ms, > 0; -1 if not. */
static int64_t time_value_ms(const char *s)
{
    char *e;
    double n = strtod(s, &e);
    if (e == s || n <= 0 || n != floor(n) || n > 1e15)
        return -1;
    static const struct { const char *u; int64_t ms; } U[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    for (size_t i = 0; i < sizeof U / sizeof *U; i++)
        if (!strcmp(e, U[i].u))
            return (int64_t)n * U[i].ms;
    return -1;
}

/* ---- one aggregation ----------------------------------------------------- */

/* One composite source {"name": {"terms" | "histogram" | "date_histogram":
 * {...}}} into a->srcs. */
static int parse_source(fds__dsl_ctx *c, fds_agg *a, const cJSON *o)
{
    if (!cJSON_IsObject(o) || !o->child || o->child->next ||
        !cJSON_IsObject(o->child->child ? o->child : NULL) ||
        !o->child->child || o->child->child->next)
        return bad_value(c, a, "sources");
    fds_agg *s = calloc(1, sizeof *s);
    if (!s)
        return oom(c);
    a->srcs[a->nsrcs++] = s;
    const cJSON *def = o->child->child;
    if (!(s->name = strdup(o->child->string)))
        return oom(c);
    s->type = !strcmp(def->string, "terms") ? FDS_AGG_TERMS
            : !strcmp(def->string, "histogram") ? FDS_AGG_HISTOGRAM
            : !strcmp(def->string, "date_histogram") ? FDS_AGG_DATE_HISTOGRAM : -1;
    if (s->type < 0)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "composite source type [%s] of [%s] is not supported "
                            "by fieldstore (terms, histogram, date_histogram)",
                            def->string, a->name);
    if (!cJSON_IsObject(def))
        return bad_value(c, a, "sources");
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
        return unknown_zone(c, tz->valuestring);
    if (get_field(c, s, f))
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
                return bad_value(c, a, "order");
            s->keyed = !strcmp(e->valuestring, "desc");
        } else if (!strcmp(k, "missing_bucket")) {
            if (!cJSON_IsBool(e))
                return bad_value(c, a, k);
            if (cJSON_IsTrue(e))
                return unsupported(c, a, "missing_bucket");
        } else if (s->type == FDS_AGG_HISTOGRAM && !strcmp(k, "interval")) {
            if (!cJSON_IsNumber(e) || !(e->valuedouble > 0) || !isfinite(e->valuedouble))
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "[interval] must be > 0 for the histogram "
                                    "source [%s]", s->name);
            s->interval = e->valuedouble;
        } else if (s->type == FDS_AGG_DATE_HISTOGRAM &&
                   !strcmp(k, "calendar_interval")) {
            for (size_t i = 0; cJSON_IsString(e) && i < sizeof CALS / sizeof *CALS; i++)
                if (!strcmp(e->valuestring, CALS[i].name))
                    s->cal = CALS[i].cal;
            if (!s->cal)
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "The supplied interval [%s] could not be parsed "
                                    "as a calendar interval.",
                                    cJSON_IsString(e) ? e->valuestring : "");
        } else if (s->type == FDS_AGG_DATE_HISTOGRAM && !strcmp(k, "fixed_interval")) {
            s->fixed_ms = cJSON_IsString(e) ? time_value_ms(e->valuestring) : -1;
            if (s->fixed_ms <= 0)
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "failed to parse setting "
                                    "[date_histogram.fixedInterval] with value "
                                    "[%s] as a time value: unit is missing or "
                                    "unrecognized",
                                    cJSON_IsString(e) ? e->valuestring : "");
        } else if (s->type == FDS_AGG_DATE_HISTOGRAM && !strcmp(k, "offset")) {
            const char *v = cJSON_IsString(e) ? e->valuestring : "";
            int64_t ms = time_value_ms(v + (*v == '-' || *v == '+'));
            if (ms < 0)
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "failed to parse setting "
                                    "[date_histogram.offset] with value [%s] as a "
                                    "time value", v);
            s->offset_ms = *v == '-' ? -ms : ms;
        } else if (!strcmp(k, "script") || !strcmp(k, "value_type") ||
                   !strcmp(k, "format") || !strcmp(k, "missing_order")) {
            return unsupported(c, a, k);
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
        return bad_value(c, a, "composite");
    a->size = 10;
    const cJSON *after = NULL;
    for (const cJSON *e = b->child; e; e = e->next) {
        const char *k = e->string;
        int rc = 0;
        if (!strcmp(k, "size")) {
            uint64_t u;
            rc = get_count(c, a, e, k, FDS_AGG_MAX_BUCKETS, &u);
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
                return oom(c);
            for (const cJSON *o = e->child; o && !rc; o = o->next)
                rc = parse_source(c, a, o);
        } else if (!strcmp(k, "after")) {
            after = e;
        } else {
            rc = unknown_field(c, a, k);
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
                return bad_value(c, a, "after");
            k->len = strlen(v->valuestring);
            if (!(k->s = strdup(v->valuestring)))
                return oom(c);
        } else {
            int rc = get_number(c, s, v, "after", &k->d);
            if (rc)
                return rc;
            k->l = k->d >= 0x1p63 ? INT64_MAX : k->d < -0x1p63 ? INT64_MIN
                                                               : (int64_t)k->d;
        }
    }
    a->has_after = true;
    return 0;
}

static int parse_level(fds__dsl_ctx *c, fds_agg *parent, const cJSON *obj,
                       int depth);

/* The parameters of aggregation `a` (body `b`, an object unless a filter). */
static int parse_params(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                        char **paths)
{
    int t = a->type;
    if (t == FDS_AGG_COMPOSITE)
        return parse_composite(c, a, b);
    if (t == FDS_AGG_TOP_HITS)
        return fds__dsl_top_hits(c, b, a->name, &a->th);
    if (t == FDS_AGG_FILTER) {
        a->filters = calloc(1, sizeof *a->filters);
        if (!a->filters)
            return oom(c);
        a->filters[0] = fds__dsl_query(c, b);
        a->nfilters = 1;
        return a->filters[0] ? 0 : c->err->code ? c->err->code : oom(c);
    }
    if (!cJSON_IsObject(b))
        return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                            "Expected [START_OBJECT] under [%s], but got a "
                            "[%s] in [%s]", fds_agg_type_name(t),
                            fds__dsl_jtype(b), a->name);
    bool histo = t == FDS_AGG_HISTOGRAM || t == FDS_AGG_DATE_HISTOGRAM;
    bool ranges = t == FDS_AGG_RANGE || t == FDS_AGG_DATE_RANGE;
    /* format and time_zone first: they decide how dates read */
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(b, "format");
    const cJSON *tz = cJSON_GetObjectItemCaseSensitive(b, "time_zone");
    if (fmt && t != FDS_AGG_DATE_HISTOGRAM && t != FDS_AGG_DATE_RANGE)
        return unsupported(c, a, "format");
    if (tz && t != FDS_AGG_DATE_HISTOGRAM && t != FDS_AGG_DATE_RANGE)
        return unknown_field(c, a, "time_zone");
    if (fmt && get_format(c, a, fmt))
        return c->err->code;
    if (tz && (!cJSON_IsString(tz) ||
               fds__tz_parse(tz->valuestring, strlen(tz->valuestring), &a->tz)))
        return unknown_zone(c, cJSON_IsString(tz) ? tz->valuestring : "");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(b, "field");
    if (t != FDS_AGG_FILTERS) {
        if (!f)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Required one of fields [field, script], but "
                                "none were specified. [%s]", a->name);
        if (get_field(c, a, f))
            return c->err->code;
    }
    bool dates = a->ftype == FDS_FT_DATE;
    if (t == FDS_AGG_DATE_HISTOGRAM || t == FDS_AGG_DATE_RANGE) {
        if (!a->unmapped && !dates)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Field [%s] of type [%s] is not supported for "
                                "aggregation [%s]", a->field,
                                a->ftype == FDS_FT_KEYWORD ? "keyword" : "numeric",
                                fds_agg_type_name(t));
    } else if (t != FDS_AGG_TERMS && t != FDS_AGG_VALUE_COUNT &&
               t != FDS_AGG_MISSING && t != FDS_AGG_FILTERS &&
               t != FDS_AGG_CARDINALITY &&
               a->ftype == FDS_FT_KEYWORD) {
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Field [%s] of type [keyword] is not supported for "
                            "aggregation [%s]", a->field, fds_agg_type_name(t));
    }
    if (t == FDS_AGG_TERMS) {
        a->size = 10;
        a->min_doc_count = 1;
    }
    a->sigma = 2.0;
    a->precision_threshold = FDS_HLL_DEFAULT_THRESHOLD;
    a->compression = FDS_TDIGEST_DEFAULT_COMPRESSION;
    bool pct = t == FDS_AGG_PERCENTILES || t == FDS_AGG_PERCENTILE_RANKS;
    if (pct)
        a->keyed = true;
    a->other_key = NULL;
    bool have_shard_size = false, have_interval = false;
    for (const cJSON *e = b->child; e; e = e->next) {
        const char *k = e->string;
        int rc = 0;
        uint64_t u;
        if (!strcmp(k, "field") || !strcmp(k, "format") || !strcmp(k, "time_zone"))
            continue;
        if (!strcmp(k, "script") || !strcmp(k, "value_type") ||
            !strcmp(k, "script_values")) {
            rc = unsupported(c, a, k);
        } else if (!strcmp(k, "missing") && t != FDS_AGG_FILTERS &&
                   t != FDS_AGG_MISSING) {
            rc = get_missing(c, a, e);
        } else if (t == FDS_AGG_TERMS && !strcmp(k, "size")) {
            if (!(rc = get_count(c, a, e, k, FDS_AGG_MAX_BUCKETS, &u)))
                a->size = (uint32_t)u;
            if (!rc && !u)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[size] must be greater than 0. Found [0] in [%s]",
                                  a->name);
        } else if (t == FDS_AGG_TERMS && !strcmp(k, "shard_size")) {
            if (!(rc = get_count(c, a, e, k, UINT32_MAX, &u)))
                a->shard_size = (uint32_t)u;
            have_shard_size = true;
        } else if ((t == FDS_AGG_TERMS || histo) && !strcmp(k, "min_doc_count")) {
            rc = get_count(c, a, e, k, UINT64_MAX >> 12, &a->min_doc_count);
            if (!rc && t == FDS_AGG_TERMS && !a->min_doc_count)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[min_doc_count] 0 of [terms] (terms no "
                                  "matching doc has) is not supported by "
                                  "fieldstore");
        } else if ((t == FDS_AGG_TERMS || histo) && !strcmp(k, "order")) {
            rc = get_order(c, a, e, paths);
        } else if (t == FDS_AGG_TERMS && !strcmp(k, "include")) {
            rc = get_values(c, a, e, k, &a->incl, &a->incl_len, &a->incl_d,
                            &a->nincl);
        } else if (t == FDS_AGG_TERMS && !strcmp(k, "exclude")) {
            rc = get_values(c, a, e, k, &a->excl, &a->excl_len, &a->excl_d,
                            &a->nexcl);
        } else if (t == FDS_AGG_TERMS &&
                   (!strcmp(k, "execution_hint") || !strcmp(k, "collect_mode"))) {
            /* how to collect, not what: every hint gives the same answer */
            if (!cJSON_IsString(e))
                rc = bad_value(c, a, k);
        } else if (t == FDS_AGG_TERMS && (!strcmp(k, "shard_min_doc_count") ||
                                          !strcmp(k, "show_term_doc_count_error"))) {
            rc = unsupported(c, a, k);
        } else if (t == FDS_AGG_EXTENDED_STATS && !strcmp(k, "sigma")) {
            if (!cJSON_IsNumber(e))
                rc = bad_value(c, a, k);
            else if (e->valuedouble < 0)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[sigma] must be greater than or equal to 0. "
                                  "Found [%g] in [%s]", e->valuedouble, a->name);
            else
                a->sigma = e->valuedouble;
        } else if (t == FDS_AGG_DATE_HISTOGRAM && !strcmp(k, "calendar_interval")) {
            rc = -1;
            for (size_t i = 0; cJSON_IsString(e) && i < sizeof CALS / sizeof *CALS; i++)
                if (!strcmp(e->valuestring, CALS[i].name)) {
                    a->cal = CALS[i].cal;
                    rc = 0;
                }
            if (rc)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "The supplied interval [%s] could not be parsed "
                                  "as a calendar interval.",
                                  cJSON_IsString(e) ? e->valuestring : "");
            if (!rc && have_interval)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "Cannot use [calendar_interval] with "
                                  "[fixed_interval] configuration option.");
            have_interval = true;
        } else if (t == FDS_AGG_DATE_HISTOGRAM && !strcmp(k, "fixed_interval")) {
            a->fixed_ms = cJSON_IsString(e) ? time_value_ms(e->valuestring) : -1;
            if (a->fixed_ms <= 0)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "failed to parse setting "
                                  "[date_histogram.fixedInterval] with value [%s] "
                                  "as a time value: unit is missing or "
                                  "unrecognized",
                                  cJSON_IsString(e) ? e->valuestring : "");
            if (!rc && have_interval)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "Cannot use [fixed_interval] with "
                                  "[calendar_interval] configuration option.");
            have_interval = true;
        } else if (t == FDS_AGG_DATE_HISTOGRAM && !strcmp(k, "offset")) {
            if (cJSON_IsNumber(e)) {
                a->offset_ms = (int64_t)e->valuedouble;
            } else if (cJSON_IsString(e)) {
                const char *s = e->valuestring;
                bool neg = *s == '-';
                int64_t ms = time_value_ms(s + (*s == '-' || *s == '+'));
                if (ms < 0)
                    rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                      "failed to parse setting "
                                      "[date_histogram.offset] with value [%s] "
                                      "as a time value", s);
                a->offset_ms = neg ? -ms : ms;
            } else {
                rc = bad_value(c, a, k);
            }
        } else if (t == FDS_AGG_HISTOGRAM && !strcmp(k, "interval")) {
            if (!cJSON_IsNumber(e) || !(e->valuedouble > 0) ||
                !isfinite(e->valuedouble))
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[interval] must be >0 for histogram "
                                  "aggregation [%s]", a->name);
            else
                a->interval = e->valuedouble;
            have_interval = true;
        } else if (t == FDS_AGG_HISTOGRAM && !strcmp(k, "offset")) {
            if (!cJSON_IsNumber(e))
                rc = bad_value(c, a, k);
            else
                a->offset = e->valuedouble;
        } else if (histo && !strcmp(k, "extended_bounds")) {
            rc = get_bounds(c, a, e, k, &a->ext_min, &a->ext_max);
            a->has_ext = true;
        } else if (histo && !strcmp(k, "hard_bounds")) {
            rc = get_bounds(c, a, e, k, &a->hard_min, &a->hard_max);
            a->has_hard = true;
        } else if ((histo || ranges) && !strcmp(k, "keyed")) {
            if (!cJSON_IsBool(e))
                rc = bad_value(c, a, k);
            a->keyed = cJSON_IsTrue(e);
        } else if (ranges && !strcmp(k, "ranges")) {
            if (!cJSON_IsArray(e))
                rc = bad_value(c, a, k);
            size_t cnt = (size_t)cJSON_GetArraySize(e);
            if (!rc && cnt > FDS_AGG_LIST_MAX)
                rc = fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                                  "[ranges] takes at most %d ranges",
                                  FDS_AGG_LIST_MAX);
            if (!rc && !(a->ranges = calloc(cnt + 1, sizeof *a->ranges)))
                rc = oom(c);
            for (const cJSON *r = rc ? NULL : e->child; r && !rc; r = r->next) {
                fds_agg_range *rg = &a->ranges[a->nranges++];
                rg->from = -INFINITY;
                rg->to = INFINITY;
                if (!cJSON_IsObject(r))
                    rc = bad_value(c, a, k);
                for (const cJSON *p = rc ? NULL : r->child; p && !rc; p = p->next) {
                    if (!strcmp(p->string, "key")) {
                        if (!cJSON_IsString(p))
                            rc = bad_value(c, a, "key");
                        else if (!(rg->key = strdup(p->valuestring)))
                            rc = oom(c);
                    } else if (!strcmp(p->string, "from") ||
                               !strcmp(p->string, "to")) {
                        double *d = p->string[0] == 'f' ? &rg->from : &rg->to;
                        if (cJSON_IsNull(p))
                            continue;
                        rc = t == FDS_AGG_DATE_RANGE
                                 ? get_date(c, a, p, false, d)
                                 : get_number(c, a, p, p->string, d);
                    } else {
                        rc = fds_err_setk(c->err, FDS_EPARSE,
                                          FDS_KIND_CONTENT_PARSE,
                                          "[range] unknown field [%s]", p->string);
                    }
                }
            }
        } else if (t == FDS_AGG_FILTERS && !strcmp(k, "filters")) {
            bool named = cJSON_IsObject(e);
            if (!named && !cJSON_IsArray(e))
                rc = bad_value(c, a, k);
            size_t cnt = (size_t)cJSON_GetArraySize(e);
            if (!rc && cnt > FDS_AGG_LIST_MAX)
                rc = fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                                  "[filters] takes at most %d filters",
                                  FDS_AGG_LIST_MAX);
            if (!rc && (!(a->filters = calloc(cnt + 1, sizeof *a->filters)) ||
                        (named && !(a->filter_keys = calloc(cnt + 1,
                                                            sizeof *a->filter_keys)))))
                rc = oom(c);
            for (const cJSON *q = rc ? NULL : e->child; q && !rc; q = q->next) {
                /* named filters answer sorted by key, as Elasticsearch's
                 * FiltersAggregationBuilder sorts them */
                size_t at = a->nfilters;
                while (named && at > 0 && strcmp(a->filter_keys[at - 1], q->string) > 0)
                    at--;
                fds_query *fq = fds__dsl_query(c, q);
                char *key = named ? strdup(q->string) : NULL;
                if (!fq || (named && !key)) {
                    fds__query_free(fq);
                    free(key);
                    rc = c->err->code ? c->err->code : oom(c);
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
        } else if (t == FDS_AGG_FILTERS && !strcmp(k, "other_bucket")) {
            if (!cJSON_IsBool(e))
                rc = bad_value(c, a, k);
            a->other_bucket = cJSON_IsTrue(e);
        } else if (t == FDS_AGG_FILTERS && !strcmp(k, "other_bucket_key")) {
            if (!cJSON_IsString(e))
                rc = bad_value(c, a, k);
            else if (!(a->other_key = strdup(e->valuestring)))
                rc = oom(c);
            a->other_bucket = true;
        } else if (t == FDS_AGG_FILTERS && !strcmp(k, "keyed")) {
            rc = unsupported(c, a, k);
        } else if (t == FDS_AGG_CARDINALITY && !strcmp(k, "precision_threshold")) {
            uint64_t u;
            if (!(rc = get_count(c, a, e, k, UINT32_MAX, &u)))
                a->precision_threshold = (uint32_t)u;
        } else if (t == FDS_AGG_CARDINALITY && !strcmp(k, "execution_hint")) {
            if (!cJSON_IsString(e)) /* how to collect, not what */
                rc = bad_value(c, a, k);
        } else if (pct && !strcmp(k, "keyed")) {
            if (!cJSON_IsBool(e))
                rc = bad_value(c, a, k);
            a->keyed = cJSON_IsTrue(e);
        } else if (pct && !strcmp(k, "hdr")) {
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "[%s] method [hdr] is not supported by fieldstore: "
                              "use [tdigest]", fds_agg_type_name(t));
        } else if (pct && !strcmp(k, "tdigest")) {
            for (const cJSON *p = cJSON_IsObject(e) ? e->child : NULL; p && !rc;
                 p = p->next) {
                if (!strcmp(p->string, "compression") && cJSON_IsNumber(p) &&
                    p->valuedouble > 0 &&
                    p->valuedouble <= FDS_TDIGEST_MAX_COMPRESSION)
                    a->compression = p->valuedouble;
                else if (!strcmp(p->string, "compression"))
                    rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                      "[compression] must be in (0, %g] in [%s]",
                                      FDS_TDIGEST_MAX_COMPRESSION, a->name);
                else
                    rc = unsupported(c, a, p->string);
            }
            if (!rc && !cJSON_IsObject(e))
                rc = bad_value(c, a, k);
        } else if ((t == FDS_AGG_PERCENTILES && !strcmp(k, "percents")) ||
                   (t == FDS_AGG_PERCENTILE_RANKS && !strcmp(k, "values"))) {
            size_t cnt = cJSON_IsArray(e) ? (size_t)cJSON_GetArraySize(e) : 0;
            if (!cnt || cnt > FDS_AGG_LIST_MAX)
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "[%s] must be a list of 1 to %d numbers in [%s]",
                                  k, FDS_AGG_LIST_MAX, a->name);
            free(a->pcts);
            a->npcts = 0;
            if (!rc && !(a->pcts = calloc(cnt, sizeof *a->pcts)))
                rc = oom(c);
            for (const cJSON *p = rc ? NULL : e->child; p && !rc; p = p->next) {
                double v;
                if (t == FDS_AGG_PERCENTILE_RANKS) {
                    rc = get_number(c, a, p, k, &v);
                } else if (!cJSON_IsNumber(p) || !(p->valuedouble >= 0) ||
                           p->valuedouble > 100) {
                    rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                      "percent must be in [0,100], got [%s]: [%s]",
                                      cJSON_IsNumber(p) ? "a number" : fds__dsl_jtype(p),
                                      a->name);
                    v = 0;
                } else {
                    v = p->valuedouble;
                }
                a->pcts[a->npcts++] = v;
            }
            /* answered in ascending order, as Elasticsearch sorts them */
            for (size_t i = 1; i < a->npcts; i++)
                for (size_t j = i; j > 0 && a->pcts[j - 1] > a->pcts[j]; j--) {
                    double x = a->pcts[j];
                    a->pcts[j] = a->pcts[j - 1];
                    a->pcts[j - 1] = x;
                }
        } else {
            rc = unknown_field(c, a, k);
        }
        if (rc)
            return c->err->code ? c->err->code : rc;
    }
    if (t == FDS_AGG_TERMS && !have_shard_size)
        /* Elasticsearch's BucketUtils.suggestShardSideQueueSize */
        a->shard_size = (uint32_t)fmin((double)a->size * 1.5 + 10, UINT32_MAX);
    if (t == FDS_AGG_TERMS && a->shard_size < a->size)
        a->shard_size = a->size;
    if (t == FDS_AGG_DATE_HISTOGRAM && !have_interval)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Invalid interval specified, must be non-null and "
                            "non-empty");
    if (t == FDS_AGG_HISTOGRAM && !have_interval)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[interval] must be >0 for histogram aggregation [%s]",
                            a->name);
    /* buckets answer in (from, to) order, as Elasticsearch's RangeAggregator
     * sorts its ranges (stable: equal ranges keep the request's order) */
    for (size_t i = 1; ranges && i < a->nranges; i++) {
        fds_agg_range x = a->ranges[i];
        size_t j = i;
        while (j > 0 && (a->ranges[j - 1].from > x.from ||
                         (a->ranges[j - 1].from == x.from && a->ranges[j - 1].to > x.to))) {
            a->ranges[j] = a->ranges[j - 1];
            j--;
        }
        a->ranges[j] = x;
    }
    if (ranges && !a->nranges)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "No [ranges] specified for the [%s] aggregation",
                            a->name);
    if (t == FDS_AGG_FILTERS && !a->filters)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[filters] cannot be null in [%s]", a->name);
    if (a->other_bucket && !a->other_key && !(a->other_key = strdup("_other_")))
        return oom(c);
    if (t == FDS_AGG_PERCENTILE_RANKS && !a->npcts)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[values] must not be null: [%s]", a->name);
    if (t == FDS_AGG_PERCENTILES && !a->npcts) {
        /* Elasticsearch's PercentilesConfig default */
        static const double DEF[] = {1, 5, 25, 50, 75, 95, 99};
        if (!(a->pcts = malloc(sizeof DEF)))
            return oom(c);
        memcpy(a->pcts, DEF, sizeof DEF);
        a->npcts = sizeof DEF / sizeof *DEF;
    }
    return 0;
}

/* One aggregation definition {"<type>": {...}, "aggs": {...}} named `name`
 * under `parent`. */
static int parse_one(fds__dsl_ctx *c, fds_agg *parent, const cJSON *def,
                     int depth)
{
    const char *name = def->string;
    if (strpbrk(name, "[]>"))
        return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                            "Invalid aggregation name [%s]. Aggregation names "
                            "can contain any character except '[', ']', and "
                            "'>'", name);
    if (!cJSON_IsObject(def))
        return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                            "Aggregation definition for [%s starts with a [%s], "
                            "expected a [START_OBJECT].", name,
                            fds__dsl_jtype(def));
    fds_agg *a = calloc(1, sizeof *a);
    fds_agg **ns = a ? realloc(parent->subs, (parent->nsubs + 1) * sizeof *ns) : NULL;
    if (!ns) {
        free(a);
        return oom(c);
    }
    parent->subs = ns;
    parent->subs[parent->nsubs++] = a; /* freed with the parent from now on */
    a->type = -1;
    if (!(a->name = strdup(name)))
        return oom(c);
    const cJSON *body = NULL, *subs = NULL;
    for (const cJSON *e = def->child; e; e = e->next) {
        const char *k = e->string;
        if (!strcmp(k, "aggs") || !strcmp(k, "aggregations")) {
            if (subs)
                return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                                    "Found two sub aggregation definitions "
                                    "under [%s]", name);
            subs = e;
            continue;
        }
        if (!strcmp(k, "meta"))
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[meta] of aggregation [%s] is not supported "
                                "by fieldstore", name);
        int type = -1;
        for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
            if (!strcmp(TYPES[i].name, k))
                type = TYPES[i].type;
        if (type < 0) {
            for (size_t i = 0; UNSUPPORTED[i]; i++)
                if (!strcmp(UNSUPPORTED[i], k))
                    return fds_err_setk(c->err, FDS_EINVAL,
                                        FDS_KIND_INVALID_ARGUMENT,
                                        "aggregation type [%s] of [%s] is not "
                                        "supported by fieldstore yet", k, name);
            return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                                "Unknown aggregation type [%s]", k);
        }
        if (body)
            return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                                "Found two aggregation type definitions in "
                                "[%s]: [%s] and [%s]", name,
                                fds_agg_type_name(a->type), k);
        a->type = type;
        body = e;
    }
    if (!body)
        return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                            "Missing definition for aggregation [%s]", name);
    if (a->type == FDS_AGG_COMPOSITE && parent->type != FDS_AGG_ROOT)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[composite] aggregation cannot be used with a parent "
                            "aggregation of type: [%s]",
                            fds_agg_type_name(parent->type));
    char *paths[FDS_AGG_ORDER_MAX] = {NULL};
    int rc = parse_params(c, a, body, paths);
    if (!rc && subs) {
        if (fds_agg_is_metric(a->type) || a->type == FDS_AGG_TOP_HITS)
            rc = fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                              "Aggregator [%s] of type [%s] cannot accept "
                              "sub-aggregations", name,
                              fds_agg_type_name(a->type));
        else
            rc = parse_level(c, a, subs, depth + 1);
    }
    if (!rc)
        rc = check_order(c, a, paths);
    for (unsigned i = 0; i < FDS_AGG_ORDER_MAX; i++)
        free(paths[i]);
    return rc;
}

static int parse_level(fds__dsl_ctx *c, fds_agg *parent, const cJSON *obj,
                       int depth)
{
    if (!cJSON_IsObject(obj))
        return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                            "Unexpected token %s in [%s].", fds__dsl_jtype(obj),
                            obj->string ? obj->string : "aggs");
    if (depth > FDS_AGG_DEPTH_MAX)
        return fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                            "aggregations nest deeper than %d levels",
                            FDS_AGG_DEPTH_MAX);
    for (const cJSON *e = obj->child; e; e = e->next) {
        int rc = parse_one(c, parent, e, depth);
        if (rc)
            return rc;
    }
    return 0;
}

int fds__dsl_aggs(fds__dsl_ctx *c, const cJSON *j, fds_agg **out)
{
    if (*out)
        return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                            "Found two aggregation definitions: [aggs] and "
                            "[aggregations]");
    fds_agg *root = calloc(1, sizeof *root);
    if (!root)
        return oom(c);
    root->type = FDS_AGG_ROOT;
    int rc = parse_level(c, root, j, 1);
    if (rc) {
        fds_agg_free(root);
        return c->err->code ? c->err->code : rc;
    }
    *out = root;
    return 0;
}
