/*
 * aggs_render.c: the `aggregations` of a search response, in the shapes of
 * Elasticsearch 8's InternalAggregation.doXContentBody implementations
 * (InternalTerms, InternalDateHistogram, InternalHistogram, InternalRange,
 * InternalFilter(s), InternalMissing, InternalNumericMetricsAggregation,
 * InternalStats, InternalExtendedStats).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggs_render.h"
#include "query.h"
#include "aggs/tdigest.h"

/* fds__shortest_e: aggs_render.h.  %.16e always reads back.  Unless d is
 * a power of two (its neighbours not equally far), a precision that reads
 * back stays so with one more digit (that rounding is at least as near d),
 * so the least one is found by bisection; a power of two tries each in
 * turn. */
void fds__shortest_e(double d, char *e, size_t cap)
{
    int lo = 0, hi = 16;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    if (!(bits & 0xfffffffffffffu)) {
        while (lo < hi && (snprintf(e, cap, "%.*e", lo, d), strtod(e, NULL) != d))
            lo++;
        hi = lo;
    }
    while (lo < hi) { /* the answer is in [lo, hi] */
        int mid = lo + (hi - lo) / 2;
        snprintf(e, cap, "%.*e", mid, d);
        if (strtod(e, NULL) == d)
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(e, cap, "%.*e", lo, d);
}

size_t fds__java_double(double d, char *out)
{
    if (!isfinite(d))
        return (size_t)snprintf(out, FDS_AGG_DOUBLE_STR, "null");
    if (d == 0)
        return (size_t)snprintf(out, FDS_AGG_DOUBLE_STR, signbit(d) ? "-0.0" : "0.0");
    /* the shortest digits that read back as d (Java 19+ Double.toString) */
    char e[FDS_AGG_DOUBLE_STR];
    fds__shortest_e(d, e, sizeof e);
    /* e: [-]D[.DDD]e[+-]XX */
    const char *s = e;
    bool neg = *s == '-';
    s += neg;
    char digits[24];
    size_t nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.')
            digits[nd++] = *s;
    int exp = atoi(s + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    double a = fabs(d);
    if (a >= 1e-3 && a < 1e7) {
        if (exp >= 0) {
            for (int i = 0; i <= exp; i++)
                out[o++] = (size_t)i < nd ? digits[i] : '0';
            out[o++] = '.';
            if ((size_t)exp + 1 >= nd)
                out[o++] = '0';
            for (size_t i = (size_t)exp + 1; i < nd; i++)
                out[o++] = digits[i];
        } else {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = -1; i > exp; i--)
                out[o++] = '0';
            for (size_t i = 0; i < nd; i++)
                out[o++] = digits[i];
        }
    } else {
        out[o++] = digits[0];
        out[o++] = '.';
        if (nd == 1)
            out[o++] = '0';
        for (size_t i = 1; i < nd; i++)
            out[o++] = digits[i];
        o += (size_t)snprintf(out + o, FDS_AGG_DOUBLE_STR - o, "E%d", exp);
    }
    out[o] = 0;
    return o;
}

static void put_double(fds_strbuf *b, double d)
{
    char t[FDS_AGG_DOUBLE_STR];
    fds_strbuf_put(b, t, fds__java_double(d, t));
}

static void put_key(fds_strbuf *b, const char *k)
{
    fds_strbuf_put_json_string(b, k, strlen(k));
    fds_strbuf_putc(b, ':');
}

/* The date text of ms in a's format and time zone. */
static void put_date_string(fds_strbuf *b, const fds_agg *a, int64_t ms)
{
    char t[128];
    size_t n = fds_agg_date_format(ms, a->has_fmt ? &a->fmt : NULL, &a->tz, t,
                                   sizeof t);
    fds_strbuf_put_json_string(b, t, n);
}

static bool is_date(const fds_agg *a)
{
    return a->ftype == FDS_FT_DATE;
}

/* ,"<name>_as_string":"..." of a date metric value (when it has one). */
static void put_as_string(fds_strbuf *b, const fds_agg *a, const char *name,
                          double v)
{
    if (!is_date(a) || !isfinite(v))
        return;
    fds_strbuf_printf(b, ",\"%s_as_string\":", name);
    put_date_string(b, a, (int64_t)v);
}

/* What a render carries down the tree: typed_keys, and where top_hits
 * read their hits (the first error of a fetch kept). */
typedef struct rctx {
    bool typed;
    const fds_search_segment *segs;
    const fds_hit_source *hs;
    fds_err *err;
    int rc;
} rctx;

static void render_one(fds_strbuf *b, const fds_agg_result *r, rctx *rx);

/* The subs of bucket bk, each as ,"name":{...}. */
static void put_subs(fds_strbuf *b, const fds_agg *a, const fds_agg_bucket *bk,
                     rctx *rx)
{
    for (size_t k = 0; bk->subs && k < a->nsubs; k++) {
        /* a derivative has nothing in the first bucket: no key at all */
        if (a->subs[k]->bp && !bk->subs[k]->count)
            continue;
        fds_strbuf_putc(b, ',');
        render_one(b, bk->subs[k], rx);
    }
}

static const char *typed_name(const fds_agg_result *r)
{
    const fds_agg *a = r->agg;
    if (a->type == FDS_AGG_PERCENTILES)
        return "tdigest_percentiles";
    if (a->type == FDS_AGG_PERCENTILE_RANKS)
        return "tdigest_percentile_ranks";
    if (a->type == FDS_AGG_CUMULATIVE_SUM || a->type == FDS_AGG_SERIAL_DIFF ||
        a->type == FDS_AGG_MOVING_FN)
        return "simple_value"; /* InternalSimpleValue */
    if (a->type != FDS_AGG_TERMS)
        return fds_agg_type_name(a->type);
    if (a->unmapped)
        return "umterms";
    return a->ftype == FDS_FT_KEYWORD ? "sterms"
         : a->ftype == FDS_FT_DOUBLE ? "dterms" : "lterms";
}

static void render_metric(fds_strbuf *b, const fds_agg_result *r)
{
    const fds_agg *a = r->agg;
    int t = a->type;
    if (t == FDS_AGG_VALUE_COUNT) {
        fds_strbuf_printf(b, "{\"value\":%llu}", (unsigned long long)r->count);
        return;
    }
    if (t == FDS_AGG_CARDINALITY) {
        fds_strbuf_printf(b, "{\"value\":%.0f}", fds_agg_metric_value(r, 0));
        return;
    }
    if (t == FDS_AGG_PERCENTILES || t == FDS_AGG_PERCENTILE_RANKS) {
        /* InternalTDigestPercentiles / ...PercentileRanks: keyed by the
         * percent (the value) as Double.toString, or a list of key/value;
         * the digest's queries may sort its buffer, not change its answer */
        fds_tdigest *td = (fds_tdigest *)r->td;
        fds_strbuf_puts(b, a->keyed ? "{\"values\":{" : "{\"values\":[");
        for (size_t i = 0; i < a->npcts; i++) {
            double p = a->pcts[i], v = NAN;
            if (td)
                v = t == FDS_AGG_PERCENTILES ? fds_tdigest_quantile(td, p / 100)
                                             : fds_tdigest_cdf(td, p) * 100;
            char k[FDS_AGG_DOUBLE_STR];
            fds__java_double(p, k);
            if (i)
                fds_strbuf_putc(b, ',');
            if (a->keyed) {
                put_key(b, k);
                put_double(b, v);
                if (is_date(a) && t == FDS_AGG_PERCENTILES && isfinite(v)) {
                    fds_strbuf_printf(b, ",\"%s_as_string\":", k);
                    put_date_string(b, a, (int64_t)v);
                }
            } else {
                fds_strbuf_printf(b, "{\"key\":%s,\"value\":", k);
                put_double(b, v);
                if (is_date(a) && t == FDS_AGG_PERCENTILES && isfinite(v)) {
                    fds_strbuf_puts(b, ",\"value_as_string\":");
                    put_date_string(b, a, (int64_t)v);
                }
                fds_strbuf_putc(b, '}');
            }
        }
        fds_strbuf_puts(b, a->keyed ? "}}" : "]}");
        return;
    }
    if (t != FDS_AGG_STATS && t != FDS_AGG_EXTENDED_STATS) {
        double v = fds_agg_metric_value(r, FDS_AGG_STAT_VALUE);
        fds_strbuf_puts(b, "{\"value\":");
        put_double(b, v);
        put_as_string(b, a, "value", v);
        fds_strbuf_putc(b, '}');
        return;
    }
    bool any = r->count > 0;
    double avg = fds_agg_metric_value(r, FDS_AGG_STAT_AVG);
    fds_strbuf_printf(b, "{\"count\":%llu,\"min\":", (unsigned long long)r->count);
    put_double(b, any ? r->min : NAN);
    fds_strbuf_puts(b, ",\"max\":");
    put_double(b, any ? r->max : NAN);
    fds_strbuf_puts(b, ",\"avg\":");
    put_double(b, avg);
    fds_strbuf_puts(b, ",\"sum\":");
    put_double(b, r->sum);
    if (t == FDS_AGG_EXTENDED_STATS) {
        /* InternalExtendedStats: population variance from the sums,
         * clamped at 0; sampling divides by count - 1 */
        double n = (double)r->count;
        double var = any ? (r->sumsq - r->sum * r->sum / n) / n : NAN;
        if (var < 0)
            var = 0;
        double vs = r->count > 1 ? (r->sumsq - r->sum * r->sum / n) / (n - 1) : NAN;
        if (vs < 0)
            vs = 0;
        double sd = sqrt(var), sds = sqrt(vs), sg = a->sigma;
        fds_strbuf_puts(b, ",\"sum_of_squares\":");
        put_double(b, any ? r->sumsq : NAN);
        fds_strbuf_puts(b, ",\"variance\":");
        put_double(b, var);
        fds_strbuf_puts(b, ",\"variance_population\":");
        put_double(b, var);
        fds_strbuf_puts(b, ",\"variance_sampling\":");
        put_double(b, vs);
        fds_strbuf_puts(b, ",\"std_deviation\":");
        put_double(b, sd);
        fds_strbuf_puts(b, ",\"std_deviation_population\":");
        put_double(b, sd);
        fds_strbuf_puts(b, ",\"std_deviation_sampling\":");
        put_double(b, sds);
        fds_strbuf_puts(b, ",\"std_deviation_bounds\":{\"upper\":");
        put_double(b, avg + sg * sd);
        fds_strbuf_puts(b, ",\"lower\":");
        put_double(b, avg - sg * sd);
        fds_strbuf_puts(b, ",\"upper_population\":");
        put_double(b, avg + sg * sd);
        fds_strbuf_puts(b, ",\"lower_population\":");
        put_double(b, avg - sg * sd);
        fds_strbuf_puts(b, ",\"upper_sampling\":");
        put_double(b, avg + sg * sds);
        fds_strbuf_puts(b, ",\"lower_sampling\":");
        put_double(b, avg - sg * sds);
        fds_strbuf_putc(b, '}');
    }
    if (any) {
        put_as_string(b, a, "min", r->min);
        put_as_string(b, a, "max", r->max);
        put_as_string(b, a, "avg", avg);
        put_as_string(b, a, "sum", r->sum);
    }
    fds_strbuf_putc(b, '}');
}

/* A range bucket's key: its own, or "from-to" with "*" for an open end. */
static void range_key(const fds_agg *a, const fds_agg_range *rg, char *out,
                      size_t cap)
{
    if (rg->key) {
        snprintf(out, cap, "%s", rg->key);
        return;
    }
    char f[128], t[128];
    double v[2] = {rg->from, rg->to};
    char *dst[2] = {f, t};
    for (int i = 0; i < 2; i++) {
        if (isinf(v[i]))
            snprintf(dst[i], 128, "*");
        else if (a->type == FDS_AGG_DATE_RANGE)
            fds_agg_date_format((int64_t)v[i], a->has_fmt ? &a->fmt : NULL,
                                &a->tz, dst[i], 128);
        else
            fds__java_double(v[i], dst[i]);
    }
    snprintf(out, cap, "%s-%s", f, t);
}

/* One bucket's members after its key: doc_count, subs, closing brace. */
static void bucket_tail(fds_strbuf *b, const fds_agg *a, const fds_agg_bucket *bk,
                        rctx *rx)
{
    fds_strbuf_printf(b, "\"doc_count\":%llu", (unsigned long long)bk->doc_count);
    put_subs(b, a, bk, rx);
    fds_strbuf_putc(b, '}');
}

/* A composite key {"source": value, ...}. */
static void put_ckey(fds_strbuf *b, const fds_agg *a, const fds_agg_ckey *ck)
{
    fds_strbuf_putc(b, '{');
    for (size_t k = 0; k < a->nsrcs; k++) {
        const fds_agg *s = a->srcs[k];
        if (k)
            fds_strbuf_putc(b, ',');
        put_key(b, s->name);
        if (s->type == FDS_AGG_TERMS && s->ftype == FDS_FT_KEYWORD)
            fds_strbuf_put_json_string(b, ck[k].s, ck[k].len);
        else if (s->type == FDS_AGG_HISTOGRAM || s->ftype == FDS_FT_DOUBLE)
            put_double(b, ck[k].d);
        else
            fds_strbuf_printf(b, "%lld", (long long)ck[k].l);
    }
    fds_strbuf_putc(b, '}');
}

/* composite: after_key (the last bucket's key, when there is one) and the
 * buckets with their keys. */
static void render_composite(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    const fds_agg *a = r->agg;
    fds_strbuf_putc(b, '{');
    if (r->nb) {
        fds_strbuf_puts(b, "\"after_key\":");
        put_ckey(b, a, r->b[r->nb - 1].ck);
        fds_strbuf_putc(b, ',');
    }
    fds_strbuf_puts(b, "\"buckets\":[");
    for (size_t i = 0; i < r->nb; i++) {
        fds_strbuf_puts(b, i ? ",{\"key\":" : "{\"key\":");
        put_ckey(b, a, r->b[i].ck);
        fds_strbuf_putc(b, ',');
        bucket_tail(b, a, &r->b[i], rx);
    }
    fds_strbuf_puts(b, "]}");
}

/* A bucket's key members of each bucket type, and the bucket's opening
 * '{' (keyed: its name first). */
static void key_terms(fds_strbuf *b, const fds_agg *a, const fds_agg_bucket *bk,
                      bool keyed)
{
    (void)keyed;
    fds_strbuf_puts(b, "{\"key\":");
    if (a->ftype == FDS_FT_KEYWORD) {
        fds_strbuf_put_json_string(b, bk->key_s, bk->key_len);
    } else if (a->ftype == FDS_FT_DOUBLE) {
        put_double(b, bk->key_d);
    } else {
        fds_strbuf_printf(b, "%lld", (long long)bk->key_l);
        if (a->ftype == FDS_FT_DATE) {
            fds_strbuf_puts(b, ",\"key_as_string\":");
            put_date_string(b, a, bk->key_l);
        } else if (a->ftype == FDS_FT_BOOLEAN) {
            fds_strbuf_puts(b, bk->key_l ? ",\"key_as_string\":\"true\""
                                         : ",\"key_as_string\":\"false\"");
        }
    }
    fds_strbuf_putc(b, ',');
}

static void key_histogram(fds_strbuf *b, const fds_agg *a,
                          const fds_agg_bucket *bk, bool keyed)
{
    (void)a;
    if (keyed) {
        char k[300];
        fds__java_double(bk->key_d, k);
        put_key(b, k);
    }
    fds_strbuf_puts(b, "{\"key\":");
    put_double(b, bk->key_d);
    fds_strbuf_putc(b, ',');
}

static void key_date_histogram(fds_strbuf *b, const fds_agg *a,
                               const fds_agg_bucket *bk, bool keyed)
{
    if (keyed) {
        char k[300];
        fds_agg_date_format(bk->key_l, a->has_fmt ? &a->fmt : NULL, &a->tz, k,
                            sizeof k);
        put_key(b, k);
    }
    fds_strbuf_puts(b, "{\"key_as_string\":");
    put_date_string(b, a, bk->key_l);
    fds_strbuf_printf(b, ",\"key\":%lld,", (long long)bk->key_l);
}

/* One bound of a range ("from" / "to"), with its date string for a
 * date_range. */
static void range_bound(fds_strbuf *b, const fds_agg *a, const char *name,
                        double v)
{
    if (isinf(v))
        return;
    fds_strbuf_printf(b, "\"%s\":", name);
    put_double(b, v);
    if (a->type == FDS_AGG_DATE_RANGE) {
        fds_strbuf_printf(b, ",\"%s_as_string\":", name);
        put_date_string(b, a, (int64_t)v);
    }
    fds_strbuf_putc(b, ',');
}

static void key_range(fds_strbuf *b, const fds_agg *a, const fds_agg_bucket *bk,
                      bool keyed)
{
    const fds_agg_range *rg = &a->ranges[bk->key_l];
    char k[300];
    range_key(a, rg, k, sizeof k);
    if (keyed) {
        put_key(b, k);
        fds_strbuf_putc(b, '{');
    } else {
        fds_strbuf_puts(b, "{\"key\":");
        fds_strbuf_put_json_string(b, k, strlen(k));
        fds_strbuf_putc(b, ',');
    }
    range_bound(b, a, "from", rg->from);
    range_bound(b, a, "to", rg->to);
}

static void key_filters(fds_strbuf *b, const fds_agg *a,
                        const fds_agg_bucket *bk, bool keyed)
{
    if (keyed)
        put_key(b, (size_t)bk->key_l < a->nfilters ? a->filter_keys[bk->key_l]
                                                   : a->other_key);
    fds_strbuf_putc(b, '{');
}

typedef void (*key_fn)(fds_strbuf *b, const fds_agg *a,
                       const fds_agg_bucket *bk, bool keyed);

/* A multi-bucket aggregation: its buckets, each opened by `key`. */
static void render_buckets(fds_strbuf *b, const fds_agg_result *r, rctx *rx,
                           key_fn key)
{
    const fds_agg *a = r->agg;
    int t = a->type;
    bool keyed = a->keyed || (t == FDS_AGG_FILTERS && a->filter_keys);
    fds_strbuf_putc(b, '{');
    if (t == FDS_AGG_TERMS)
        fds_strbuf_printf(b, "\"doc_count_error_upper_bound\":%lld,"
                             "\"sum_other_doc_count\":%llu,",
                          (long long)r->err,
                          (unsigned long long)r->other_doc_count);
    fds_strbuf_puts(b, keyed ? "\"buckets\":{" : "\"buckets\":[");
    for (size_t i = 0; i < r->nb; i++) {
        if (i)
            fds_strbuf_putc(b, ',');
        key(b, a, &r->b[i], keyed);
        bucket_tail(b, a, &r->b[i], rx);
    }
    fds_strbuf_puts(b, keyed ? "}}" : "]}");
}

static void render_terms(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    render_buckets(b, r, rx, key_terms);
}

static void render_histogram(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    render_buckets(b, r, rx, key_histogram);
}

static void render_date_histogram(fds_strbuf *b, const fds_agg_result *r,
                                  rctx *rx)
{
    render_buckets(b, r, rx, key_date_histogram);
}

static void render_range(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    render_buckets(b, r, rx, key_range);
}

static void render_filters(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    render_buckets(b, r, rx, key_filters);
}

/* filter, missing, sampler: one bucket, its members in the aggregation's object. */
static void render_single(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    fds_strbuf_putc(b, '{');
    bucket_tail(b, r->agg, &r->b[0], rx);
}

static void render_metric_entry(fds_strbuf *b, const fds_agg_result *r,
                                rctx *rx)
{
    (void)rx;
    render_metric(b, r);
}

static void render_top_hits(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    if (!rx->rc)
        rx->rc = fds__agg_hits_put(b, r, rx->segs, rx->hs, rx->err);
}

/* derivative, cumulative_sum (InternalSimpleValue, Derivative): value
 * (null when not finite), derivative's normalized_value with a `unit`. */
static void render_pipeline(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    (void)rx;
    fds_strbuf_puts(b, "{\"value\":");
    put_double(b, r->sum);
    if (r->agg->type == FDS_AGG_DERIVATIVE && r->agg->unit_ms) {
        fds_strbuf_puts(b, ",\"normalized_value\":");
        put_double(b, r->max);
    }
    fds_strbuf_putc(b, '}');
}

static void render_top_metrics(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    if (!rx->rc)
        rx->rc = fds__agg_top_metrics_put(b, r, rx->hs, rx->err);
}

/* The render entry of each aggregation type (the registry's render
 * column, src/query/aggs/registry.c, kept here: only src/http writes
 * JSON). */
static void (*const RENDER[FDS_AGG_TYPE_COUNT_])(fds_strbuf *b,
                                                 const fds_agg_result *r,
                                                 rctx *rx) = {
    [FDS_AGG_TERMS] = render_terms,
    [FDS_AGG_AVG] = render_metric_entry,
    [FDS_AGG_SUM] = render_metric_entry,
    [FDS_AGG_MIN] = render_metric_entry,
    [FDS_AGG_MAX] = render_metric_entry,
    [FDS_AGG_VALUE_COUNT] = render_metric_entry,
    [FDS_AGG_STATS] = render_metric_entry,
    [FDS_AGG_EXTENDED_STATS] = render_metric_entry,
    [FDS_AGG_CARDINALITY] = render_metric_entry,
    [FDS_AGG_PERCENTILES] = render_metric_entry,
    [FDS_AGG_PERCENTILE_RANKS] = render_metric_entry,
    [FDS_AGG_DATE_HISTOGRAM] = render_date_histogram,
    [FDS_AGG_HISTOGRAM] = render_histogram,
    [FDS_AGG_RANGE] = render_range,
    [FDS_AGG_DATE_RANGE] = render_range,
    [FDS_AGG_FILTER] = render_single,
    [FDS_AGG_FILTERS] = render_filters,
    [FDS_AGG_MISSING] = render_single,
    [FDS_AGG_SAMPLER] = render_single,
    [FDS_AGG_COMPOSITE] = render_composite,
    [FDS_AGG_TOP_HITS] = render_top_hits,
    [FDS_AGG_TOP_METRICS] = render_top_metrics,
    [FDS_AGG_DERIVATIVE] = render_pipeline,
    [FDS_AGG_CUMULATIVE_SUM] = render_pipeline,
    [FDS_AGG_SERIAL_DIFF] = render_pipeline,
    [FDS_AGG_MOVING_FN] = render_pipeline,
    [FDS_AGG_RATE] = render_pipeline,
};

static void render_one(fds_strbuf *b, const fds_agg_result *r, rctx *rx)
{
    const fds_agg *a = r->agg;
    if (rx->typed) {
        fds_strbuf_putc(b, '"');
        fds_strbuf_puts(b, typed_name(r));
        fds_strbuf_putc(b, '#');
        size_t n0 = b->len;
        fds_strbuf_put_json_string(b, a->name, strlen(a->name));
        /* the name's quotes: drop the opening one, keep the closing */
        if (!b->oom) {
            memmove(b->p + n0, b->p + n0 + 1, b->len - n0 - 1);
            b->len--;
            b->p[b->len] = 0;
        }
        fds_strbuf_putc(b, ':');
    } else {
        put_key(b, a->name);
    }
    RENDER[a->type](b, r, rx);
}

int fds__aggs_render(fds_strbuf *b, const fds_agg_result *root, bool typed_keys,
                     const fds_search_segment *segs, const fds_hit_source *hs,
                     fds_err *err)
{
    rctx rx = {.typed = typed_keys, .segs = segs, .hs = hs, .err = err};
    fds_strbuf_puts(b, "\"aggregations\":{");
    const fds_agg *a = root->agg;
    for (size_t k = 0; root->nb && k < a->nsubs; k++) {
        if (k)
            fds_strbuf_putc(b, ',');
        render_one(b, root->b[0].subs[k], &rx);
    }
    fds_strbuf_putc(b, '}');
    return rx.rc;
}
