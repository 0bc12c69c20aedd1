/*
 * aggs_parse.c: a search body's `aggs` / `aggregations` into an fds_agg tree
 * (aggs.h), with Elasticsearch 8's parameter names, defaults and errors.
 *
 * The tree is read here: names, nesting, sub-aggregations, `order` paths
 * checked against the subs; each type's body is read by its parser, found
 * by name in the registry (src/query/dsl/registry.c; the parsers are
 * aggs_params.c's).  An unknown aggregation type is refused as
 * Elasticsearch's named-object registry does (parsing_exception "Unknown
 * aggregation type [x]"), a type it has and we do not by name.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggs/aggs.h"
#include "dsl/registry.h"
#include "dsl/dsl_parse_int.h"

/* Aggregation types Elasticsearch has that we do not (yet). */
static const char *const UNSUPPORTED[] = {
    "significant_terms", "significant_text", "rare_terms",
    "multi_terms", "auto_date_histogram", "variable_width_histogram",
    "geo_bounds", "geo_centroid", "geohash_grid", "geotile_grid", "nested",
    "reverse_nested", "global", "sampler", "diversified_sampler",
    "adjacency_matrix", "ip_range", "median_absolute_deviation",
    "weighted_avg", "string_stats", "boxplot", "t_test",
    "scripted_metric", "matrix_stats", "bucket_script",
    "bucket_selector", "bucket_sort", "avg_bucket", "sum_bucket",
    "max_bucket", "min_bucket", "stats_bucket", "extended_stats_bucket",
    "percentiles_bucket", "cumulative_cardinality", "moving_percentiles",
    "normalize", "inference", "categorize_text", "frequent_item_sets",
    "random_sampler", "time_series", "children", "parent", NULL};

static int oom(fds__dsl_ctx *c)
{
    return fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
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
        if (s && fds_agg_is_metric(s->type) && s->type != FDS_AGG_RATE &&
            s->type != FDS_AGG_PERCENTILES &&
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

static int parse_level(fds__dsl_ctx *c, fds_agg *parent, const cJSON *obj,
                       int depth);

/* The buckets_path of pipeline s, a sub of `parent`, resolved against its
 * siblings (Elasticsearch's AggregationPath and the parent checks of
 * validateParentAggSequentiallyOrdered): "_count", a single-value metric's
 * name, or "<stats>.<stat>"; the parent a histogram or date_histogram with
 * min_doc_count 0. */
static int resolve_pipeline(fds__dsl_ctx *c, const fds_agg *parent, fds_agg *s)
{
    const char *type = fds_agg_type_name(s->type);
    if (parent->type != FDS_AGG_HISTOGRAM && parent->type != FDS_AGG_DATE_HISTOGRAM)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_VALIDATION,
                            "Validation Failed: 1: %s aggregation [%s] must "
                            "have a histogram, date_histogram or "
                            "auto_date_histogram as parent;", type, s->name);
    if (parent->min_doc_count)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_VALIDATION,
                            "Validation Failed: 1: parent histogram of %s "
                            "aggregation [%s] must have min_doc_count of 0;",
                            type, s->name);
    if (!strcmp(s->bp, "_count")) {
        s->bp_count = true;
        return 0;
    }
    const char *dot = strchr(s->bp, '.');
    size_t nl = dot ? (size_t)(dot - s->bp) : strlen(s->bp);
    const fds_agg *m = NULL;
    for (size_t k = 0; k < parent->nsubs && !m; k++)
        if (strlen(parent->subs[k]->name) == nl &&
            !memcmp(parent->subs[k]->name, s->bp, nl)) {
            m = parent->subs[k];
            s->bp_sub = (unsigned)k;
        }
    if (!m)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "No aggregation found for path [%s]", s->bp);
    bool multi = m->type == FDS_AGG_STATS || m->type == FDS_AGG_EXTENDED_STATS;
    s->bp_stat = -1;
    /* a rate's value comes at the final reduce too: not a path here */
    if (fds_agg_is_metric(m->type) && m->type != FDS_AGG_RATE &&
        m->type != FDS_AGG_PERCENTILES &&
        m->type != FDS_AGG_PERCENTILE_RANKS) {
        if (!dot && !multi)
            s->bp_stat = FDS_AGG_STAT_VALUE;
        for (int k = 1; dot && multi && k < 6; k++)
            if (!strcmp(dot + 1, STAT_NAMES[k]))
                s->bp_stat = k;
    }
    if (s->bp_stat < 0)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "buckets_path must reference either a number value "
                            "or a single value numeric metric aggregation, got: "
                            "[%s] at aggregation [%s]", s->bp, s->name);
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
        const fds__agg_kind *kind = fds__agg_kind_find(k);
        if (!kind) {
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
        a->type = kind->type;
        a->kind = kind;
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
    int rc = a->kind->parse(c, a, body, paths);
    for (size_t i = 0; i < a->nsrcs; i++) /* composite's sources */
        a->srcs[i]->kind = fds__agg_kind_of(a->srcs[i]->type);
    if (!rc && subs) {
        if (fds_agg_is_metric(a->type) || fds_agg_keeps_hits(a->type) || a->bp)
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
    for (size_t k = 0; k < parent->nsubs; k++) { /* the siblings all known */
        const fds_agg *s = parent->subs[k];
        if (s->type == FDS_AGG_RATE && parent->type != FDS_AGG_DATE_HISTOGRAM)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "The rate aggregation can only be used inside a "
                                "date histogram [%s]", s->name);
        if (s->type == FDS_AGG_RATE && parent->cal >= FDS_CAL_MONTH)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[rate] of [%s] under a calendar_interval of a "
                                "month or more is not supported by fieldstore",
                                s->name);
        int rc = s->bp ? resolve_pipeline(c, parent, parent->subs[k]) : 0;
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
    root->kind = fds__agg_kind_of(FDS_AGG_ROOT);
    int rc = parse_level(c, root, j, 1);
    if (rc) {
        fds_agg_free(root);
        return c->err->code ? c->err->code : rc;
    }
    *out = root;
    return 0;
}
