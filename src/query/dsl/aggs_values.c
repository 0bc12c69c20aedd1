/*
 * aggs_values.c: the values of aggregation parameters (aggs_values.h):
 * errors worded as Elasticsearch's, counts, dates and date math, numbers
 * of a field's type, fields and formats, orders, include/exclude lists,
 * bounds, intervals; and the values source every field aggregation reads
 * first (field, format, time_zone, missing, script) with each type's keys
 * after it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggs/hll.h"
#include "aggs/tdigest.h"
#include "dsl/aggs_values.h"

/* ---- errors ----------------------------------------------------------------- */

int fds__aggp_unknown_field(fds__dsl_ctx *c, const fds_agg *a, const char *k)
{
    return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                        "[%s] unknown field [%s]", fds_agg_type_name(a->type), k);
}

int fds__aggp_unsupported(fds__dsl_ctx *c, const fds_agg *a, const char *k)
{
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "[%s] parameter [%s] is not supported by fieldstore",
                        fds_agg_type_name(a->type), k);
}

int fds__aggp_bad_value(fds__dsl_ctx *c, const fds_agg *a, const char *k)
{
    return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                        "[%s] failed to parse field [%s]",
                        fds_agg_type_name(a->type), k);
}

int fds__aggp_oom(fds__dsl_ctx *c)
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

/* A number parameter as Elasticsearch's parser reads one (XContentParser
 * doubleValue, intValue, longValue with the default coercion): a JSON
 * number, or a string holding one whole ("10", as Grafana's editor sends
 * its settings).  False for anything else; *v is 0 then. */
bool fds__aggp_double(const cJSON *p, double *v)
{
    *v = 0;
    if (cJSON_IsNumber(p)) {
        *v = p->valuedouble;
        return true;
    }
    if (!cJSON_IsString(p) || !*p->valuestring)
        return false;
    char *end;
    double x = strtod(p->valuestring, &end);
    if (*end || isnan(x))
        return false;
    *v = x;
    return true;
}

/* A non-negative integer parameter (a number or a string holding one). */
int fds__aggp_count(fds__dsl_ctx *c, const fds_agg *a, const cJSON *v,
                     const char *k, uint64_t max, uint64_t *out)
{
    double d;
    if (!fds__aggp_double(v, &d) || d != floor(d))
        return fds__aggp_bad_value(c, a, k);
    if (d < 0 || d > (double)max)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] must be between 0 and %llu in [%s]", k,
                            (unsigned long long)max, a->name);
    *out = (uint64_t)d;
    return 0;
}

/* A time_zone that is neither an offset nor a zone id (java.time's
 * ZoneRulesException text, which Elasticsearch returns). */
int fds__aggp_unknown_zone(fds__dsl_ctx *c, const char *tz)
{
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "Unknown time-zone ID: %s", tz);
}

/* A date value (epoch ms number, or a date / date-math string in the
 * aggregation's format). */
int fds__aggp_date(fds__dsl_ctx *c, const fds_agg *a, const cJSON *v,
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
int fds__aggp_number(fds__dsl_ctx *c, const fds_agg *a, const cJSON *v,
                      const char *k, double *out)
{
    if (a->ftype == FDS_FT_DATE)
        return fds__aggp_date(c, a, v, false, out);
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

/* `missing`: the value of a doc without one.  On a field this index does
 * not map every doc is without one, so each has the missing value, read as
 * the aggregation's default values source type (Elasticsearch's
 * ValuesSourceConfig "unmapped field case": keyword for terms, cardinality
 * and value_count, date for date_histogram and date_range, numeric for
 * the rest). */
static int get_missing(fds__dsl_ctx *c, fds_agg *a, const cJSON *v, unsigned vs)
{
    if (a->index_field) /* every doc has a value: none is missing */
        return 0;
    if (a->unmapped)
        a->ftype = vs & FDS__VS_DATES ? FDS_FT_DATE
                 : vs & FDS__VS_KEYWORD ? FDS_FT_KEYWORD : FDS_FT_DOUBLE;
    a->has_missing = true;
    if (a->ftype == FDS_FT_KEYWORD) {
        char buf[64];
        const char *s;
        size_t n;
        if (!fds__dsl_scalar(c, v, buf, sizeof buf, &s, &n))
            return fds__aggp_bad_value(c, a, "missing");
        a->missing_s = fds__dsl_dupn(s, n);
        a->missing_len = n;
        return a->missing_s ? 0 : fds__aggp_oom(c);
    }
    int rc = fds__aggp_number(c, a, v, "missing", &a->missing_d);
    a->missing_l = a->missing_d >= 0x1p63 ? INT64_MAX
                 : a->missing_d < -0x1p63 ? INT64_MIN : (int64_t)a->missing_d;
    return rc;
}

/* The field of a values-source aggregation.  `_index` (Kibana and
 * Grafana split by index with terms on it) is a keyword whose one value in
 * every doc of the index searched is its name. */
int fds__aggp_field(fds__dsl_ctx *c, fds_agg *a, const cJSON *v)
{
    if (!cJSON_IsString(v))
        return fds__aggp_bad_value(c, a, "field");
    a->field = strdup(v->valuestring);
    if (!a->field)
        return fds__aggp_oom(c);
    if (!strcmp(a->field, "_index") && c->lim->index_name) {
        a->index_field = a->has_missing = true;
        a->ftype = FDS_FT_KEYWORD;
        a->missing_len = strlen(c->lim->index_name);
        a->missing_s = strdup(c->lim->index_name);
        return a->missing_s ? 0 : fds__aggp_oom(c);
    }
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

int fds__aggp_format(fds__dsl_ctx *c, fds_agg *a, const cJSON *v)
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
int fds__aggp_order(fds__dsl_ctx *c, fds_agg *a, const cJSON *v,
                     char **paths)
{
    const cJSON *list = cJSON_IsArray(v) ? v->child : v;
    for (const cJSON *o = list; o; o = cJSON_IsArray(v) ? o->next : NULL) {
        if (!cJSON_IsObject(o) || !o->child || o->child->next)
            return fds__aggp_bad_value(c, a, "order");
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
                return fds__aggp_oom(c);
        }
        a->norder++;
    }
    return 0;
}

/* include / exclude: a list of exact values. */
int fds__aggp_values(fds__dsl_ctx *c, fds_agg *a, const cJSON *v,
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
        return fds__aggp_bad_value(c, a, k);
    size_t cnt = (size_t)cJSON_GetArraySize(v);
    if (cnt > FDS_AGG_LIST_MAX)
        return fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] takes at most %d values", k, FDS_AGG_LIST_MAX);
    *vals = calloc(cnt + 1, sizeof **vals);
    *lens = calloc(cnt + 1, sizeof **lens);
    *nums = calloc(cnt + 1, sizeof **nums);
    if (!*vals || !*lens || !*nums)
        return fds__aggp_oom(c);
    for (const cJSON *e = v->child; e; e = e->next) {
        char buf[64];
        const char *s;
        size_t len;
        if (!fds__dsl_scalar(c, e, buf, sizeof buf, &s, &len))
            return fds__aggp_bad_value(c, a, k);
        if (a->ftype != FDS_FT_KEYWORD && !a->unmapped) {
            int rc = fds__aggp_number(c, a, e, k, &(*nums)[*n]);
            if (rc)
                return rc;
        }
        (*vals)[*n] = fds__dsl_dupn(s, len);
        (*lens)[*n] = len;
        if (!(*vals)[(*n)++])
            return fds__aggp_oom(c);
    }
    return 0;
}

/* extended_bounds / hard_bounds: {"min": x, "max": y} (dates may be date
 * math). */
int fds__aggp_bounds(fds__dsl_ctx *c, fds_agg *a, const cJSON *v,
                      const char *k, double *lo, double *hi)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    if (!cJSON_IsObject(v))
        return fds__aggp_bad_value(c, a, k);
    for (const cJSON *e = v->child; e; e = e->next) {
        double *dst = !strcmp(e->string, "min") ? lo
                    : !strcmp(e->string, "max") ? hi : NULL;
        if (!dst)
            return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                                "[%s] unknown field [%s]", k, e->string);
        int rc = a->type == FDS_AGG_DATE_HISTOGRAM
                     ? fds__aggp_date(c, a, e, false, dst)
                     : fds__aggp_number(c, a, e, k, dst);
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

int fds__aggp_calendar(const char *name)
{
    for (size_t i = 0; i < sizeof CALS / sizeof *CALS; i++)
        if (!strcmp(name, CALS[i].name))
            return CALS[i].cal;
    return 0;
}

/* A time value "90m" ("ms", "s", "m", "h", "d") in ms, > 0; -1 if not. */
int64_t fds__aggp_time_value_ms(const char *s)
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

/* ---- the values source every field aggregation shares ------------------- */

/* The body b of aggregation a checked and its field, format and
 * time_zone read (format and time_zone first: they decide how dates
 * read), the defaults of every type set; Elasticsearch's
 * ValuesSourceAggregationBuilder.  0 or an error code (c->err filled). */
int fds__aggp_values_source(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                         unsigned vs)
{
    if (!cJSON_IsObject(b))
        return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_PARSE,
                            "Expected [START_OBJECT] under [%s], but got a "
                            "[%s] in [%s]", fds_agg_type_name(a->type),
                            fds__dsl_jtype(b), a->name);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(b, "format");
    const cJSON *tz = cJSON_GetObjectItemCaseSensitive(b, "time_zone");
    if (fmt && !(vs & FDS__VS_DATES))
        return fds__aggp_unsupported(c, a, "format");
    if (tz && !(vs & FDS__VS_DATES))
        return fds__aggp_unknown_field(c, a, "time_zone");
    if (fmt && fds__aggp_format(c, a, fmt))
        return c->err->code;
    if (tz && (!cJSON_IsString(tz) ||
               fds__tz_parse(tz->valuestring, strlen(tz->valuestring), &a->tz)))
        return fds__aggp_unknown_zone(c, cJSON_IsString(tz) ? tz->valuestring : "");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(b, "field");
    if (!(vs & FDS__VS_NO_FIELD)) {
        if (!f)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Required one of fields [field, script], but "
                                "none were specified. [%s]", a->name);
        if (fds__aggp_field(c, a, f))
            return c->err->code;
    }
    if (vs & FDS__VS_DATES) {
        if (!a->unmapped && a->ftype != FDS_FT_DATE)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Field [%s] of type [%s] is not supported for "
                                "aggregation [%s]", a->field,
                                a->index_field ? "_index"
                                : a->ftype == FDS_FT_KEYWORD ? "keyword" : "numeric",
                                fds_agg_type_name(a->type));
    } else if (!(vs & FDS__VS_KEYWORD) && a->ftype == FDS_FT_KEYWORD) {
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Field [%s] of type [%s] is not supported for "
                            "aggregation [%s]", a->field,
                            a->index_field ? "_index" : "keyword",
                            fds_agg_type_name(a->type));
    }
    a->sigma = 2.0;
    a->precision_threshold = FDS_HLL_DEFAULT_THRESHOLD;
    a->compression = FDS_TDIGEST_DEFAULT_COMPRESSION;
    a->other_key = NULL;
    return 0;
}

/* Every key of body b: those all values sources share here (field, format
 * and time_zone read by fds__aggp_values_source; script and value_type refused;
 * missing), the rest by the type's fn.  0 or the first error's code. */
int fds__aggp_each_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                      unsigned vs, fds__aggp_param_fn fn, char **paths, void *st)
{
    for (const cJSON *e = b->child; e; e = e->next) {
        const char *k = e->string;
        int rc;
        if (!strcmp(k, "field") || !strcmp(k, "format") || !strcmp(k, "time_zone"))
            continue;
        if (!strcmp(k, "script") || !strcmp(k, "value_type") ||
            !strcmp(k, "script_values"))
            rc = fds__aggp_unsupported(c, a, k);
        else if (!strcmp(k, "missing") && !(vs & FDS__VS_NO_MISSING))
            rc = get_missing(c, a, e, vs);
        else
            rc = fn(c, a, e, paths, st);
        if (rc)
            return c->err->code ? c->err->code : rc;
    }
    return 0;
}

/* A body whose keys are all shared ones (missing). */
int fds__aggp_no_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e, char **paths,
                    void *st)
{
    (void)paths;
    (void)st;
    return fds__aggp_unknown_field(c, a, e->string);
}
