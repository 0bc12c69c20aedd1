/*
 * fds_lgreport.c: JSON, Markdown and SVG reports of loadgen (see
 * fds_lgreport.h for the schema).
 */
#include "fds_lgreport.h"

#include "fds_error.h"
#include "fds_strbuf.h"
#include "fds_svg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ratios closer than this count as equal (rounding of equal per-round values) */
#define LG_RATIO_EPS 1e-9
/* disk ratios closer to 1 than this are "the same disk" in the sentence */
#define LG_SAME_DISK 0.005

static double ms(double ns)
{
    return ns / 1e6;
}

static void add_pcts(cJSON *o, const fds_hist *h)
{
    cJSON_AddNumberToObject(o, "mean", ms(fds_hist_mean(h)));
    cJSON_AddNumberToObject(o, "p50", ms(fds_hist_percentile(h, 50)));
    cJSON_AddNumberToObject(o, "p90", ms(fds_hist_percentile(h, 90)));
    cJSON_AddNumberToObject(o, "p99", ms(fds_hist_percentile(h, 99)));
    cJSON_AddNumberToObject(o, "p99_9", ms(fds_hist_percentile(h, 99.9)));
    cJSON_AddNumberToObject(o, "p99_99", ms(fds_hist_percentile(h, 99.99)));
    cJSON_AddNumberToObject(o, "max", ms((double)fds_hist_max(h)));
}

static void add_opt(cJSON *o, const char *k, double v)
{
    if (v < 0 || isnan(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, v);
}

cJSON *fds_lgreport_side(const fds_lg_result *r, const char *index)
{
    cJSON *o = cJSON_CreateObject();
    if (index)
        cJSON_AddStringToObject(o, "index", index);
    else
        cJSON_AddNullToObject(o, "index");
    cJSON_AddNullToObject(o, "codec");
    cJSON_AddNullToObject(o, "store_bytes");
    cJSON_AddNullToObject(o, "stored_fields_bytes");
    cJSON_AddNumberToObject(o, "qps", r->qps);
    cJSON_AddNumberToObject(o, "ok", (double)r->ok);
    cJSON_AddNumberToObject(o, "errors", (double)r->errors);
    uint64_t all = r->ok + r->errors;
    cJSON_AddNumberToObject(o, "error_rate", all ? (double)r->errors / (double)all : 0.0);
    cJSON *ek = cJSON_AddObjectToObject(o, "errors_by_kind");
    cJSON_AddNumberToObject(ek, "status", (double)r->err_status);
    cJSON_AddNumberToObject(ek, "timeout", (double)r->err_timeout);
    cJSON_AddNumberToObject(ek, "connect", (double)r->err_connect);
    cJSON_AddNumberToObject(ek, "short_read", (double)r->err_short_read);
    cJSON_AddNumberToObject(ek, "protocol", (double)r->err_protocol);
    cJSON *tp = cJSON_AddObjectToObject(o, "throughput");
    /* null when the window holds no whole 1 s bucket */
    add_opt(tp, "min", r->nbuckets ? r->qps_min : -1);
    add_opt(tp, "median", r->nbuckets ? r->qps_median : -1);
    add_opt(tp, "mean", r->nbuckets ? r->qps_mean : -1);
    add_opt(tp, "max", r->nbuckets ? r->qps_max : -1);
    cJSON_AddNumberToObject(tp, "buckets", r->nbuckets);
    add_pcts(cJSON_AddObjectToObject(o, "latency_ms"), r->latency);
    add_pcts(cJSON_AddObjectToObject(o, "service_time_ms"), r->service);
    add_opt(o, "cpu_percent", r->server_cpu_percent);
    add_opt(o, "system_cpu_percent", r->system_cpu_percent);
    add_opt(o, "background_cpu_percent", r->background_cpu_percent);
    add_opt(o, "qps_per_cpu_percent", r->server_cpu_percent > 0 ? r->qps_per_server_cpu : -1);
    add_opt(o, "qps_per_system_cpu_percent",
            r->system_cpu_percent > 0 ? r->qps_per_system_cpu : -1);
    cJSON_AddNumberToObject(o, "elapsed_s", r->elapsed_s);
    cJSON_AddNumberToObject(o, "sent", (double)r->sent);
    cJSON_AddNumberToObject(o, "max_backlog", (double)r->max_backlog);
    cJSON_AddBoolToObject(o, "stopped_early", r->stopped_early);
    return o;
}

void fds_lgreport_add_classes(cJSON *side, const fds_lg_result *r, const char *const *names,
                              const double *share)
{
    if (r->nclasses <= 0)
        return;
    cJSON *cl = cJSON_AddObjectToObject(side, "classes");
    for (int k = 0; k < r->nclasses; k++) {
        const fds_lg_class_result *c = &r->classes[k];
        cJSON *o = cJSON_AddObjectToObject(cl, names[k]);
        cJSON_AddNumberToObject(o, "share", share[k]);
        cJSON_AddNumberToObject(o, "ok", (double)c->ok);
        cJSON_AddNumberToObject(o, "errors", (double)c->errors);
        cJSON_AddNumberToObject(o, "status_errors", (double)c->err_status);
        uint64_t all = c->ok + c->errors;
        cJSON_AddNumberToObject(o, "error_rate", all ? (double)c->errors / (double)all : 0.0);
        cJSON *l = cJSON_AddObjectToObject(o, "latency_ms");
        cJSON_AddNumberToObject(l, "mean", ms(fds_hist_mean(c->latency)));
        cJSON_AddNumberToObject(l, "p50", ms(fds_hist_percentile(c->latency, 50)));
        cJSON_AddNumberToObject(l, "p90", ms(fds_hist_percentile(c->latency, 90)));
        cJSON_AddNumberToObject(l, "p99", ms(fds_hist_percentile(c->latency, 99)));
        cJSON_AddNumberToObject(l, "p99_9", ms(fds_hist_percentile(c->latency, 99.9)));
        cJSON_AddNumberToObject(l, "max", ms((double)fds_hist_max(c->latency)));
    }
}

static int is_count(const char *k)
{
    return !strcmp(k, "ok") || !strcmp(k, "errors") || !strcmp(k, "sent") ||
           !strcmp(k, "status_errors") ||
           !strcmp(k, "status") || !strcmp(k, "timeout") || !strcmp(k, "connect") ||
           !strcmp(k, "short_read") || !strcmp(k, "protocol");
}

/* out[key] = mean (or sum for counts) of rounds[i][key], recursively */
static void mean_into(cJSON *out, const cJSON *const *objs, int n)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, objs[0])
    {
        const char *k = it->string;
        if (!k || !strcmp(k, "rounds") || !strcmp(k, "index") || !strcmp(k, "round") ||
            !strcmp(k, "position"))
            continue;
        if (cJSON_IsObject(it)) {
            const cJSON *sub[64];
            int m = 0;
            for (int i = 0; i < n && m < 64; i++) {
                const cJSON *s = cJSON_GetObjectItemCaseSensitive(objs[i], k);
                if (cJSON_IsObject(s))
                    sub[m++] = s;
            }
            mean_into(cJSON_AddObjectToObject(out, k), sub, m);
        } else if (cJSON_IsNumber(it) || cJSON_IsNull(it)) {
            double sum = 0;
            int m = 0;
            for (int i = 0; i < n; i++) {
                const cJSON *s = cJSON_GetObjectItemCaseSensitive(objs[i], k);
                if (cJSON_IsNumber(s)) {
                    sum += s->valuedouble;
                    m++;
                }
            }
            if (m == 0)
                cJSON_AddNullToObject(out, k);
            else
                cJSON_AddNumberToObject(out, k, is_count(k) ? sum : sum / m);
        } else if (cJSON_IsBool(it)) {
            int any = 0;
            for (int i = 0; i < n; i++)
                any |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(objs[i], k));
            cJSON_AddBoolToObject(out, k, any);
        }
    }
}

cJSON *fds_lgreport_mean(cJSON *const *rounds, int n, const char *index)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "index", index);
    if (n <= 0)
        return o;
    mean_into(o, (const cJSON *const *)rounds, n);
    double ok = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "ok"));
    double err = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "errors"));
    cJSON_ReplaceItemInObjectCaseSensitive(o, "error_rate",
                                           cJSON_CreateNumber(ok + err > 0 ? err / (ok + err) : 0));
    /* phase shares of the whole side: sum of the deltas, not a mean of shares */
    double q = 0, f = 0;
    int have = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *qv = cJSON_GetObjectItemCaseSensitive(rounds[i], "query_time_us");
        const cJSON *fv = cJSON_GetObjectItemCaseSensitive(rounds[i], "fetch_time_us");
        if (cJSON_IsNumber(qv) && cJSON_IsNumber(fv)) {
            q += qv->valuedouble;
            f += fv->valuedouble;
            have++;
        }
    }
    if (have && q + f > 0 && cJSON_HasObjectItem(o, "query_share")) {
        cJSON_ReplaceItemInObjectCaseSensitive(o, "query_share", cJSON_CreateNumber(q / (q + f)));
        cJSON_ReplaceItemInObjectCaseSensitive(o, "fetch_share", cJSON_CreateNumber(f / (q + f)));
    }
    cJSON *arr = cJSON_AddArrayToObject(o, "rounds");
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, cJSON_Duplicate(rounds[i], 1));
    return o;
}

static void ratio_into(cJSON *out, const cJSON *a, const cJSON *b)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, a)
    {
        const char *k = it->string;
        if (!k || !strcmp(k, "rounds"))
            continue;
        const cJSON *bv = cJSON_GetObjectItemCaseSensitive(b, k);
        if (cJSON_IsObject(it) && cJSON_IsObject(bv)) {
            ratio_into(cJSON_AddObjectToObject(out, k), it, bv);
        } else if (cJSON_IsNumber(it) && !cJSON_IsBool(it)) {
            if (cJSON_IsNumber(bv) && it->valuedouble != 0)
                cJSON_AddNumberToObject(out, k, bv->valuedouble / it->valuedouble);
            else
                cJSON_AddNullToObject(out, k);
        }
    }
}

cJSON *fds_lgreport_ratio(const cJSON *a, const cJSON *b)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "definition", "b/a");
    ratio_into(o, a, b);
    return o;
}

/* numeric value at a dotted path; NAN if absent or null */
static double num_at(const cJSON *o, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *cur = o;
    for (char *t = strtok(buf, "."); t && cur; t = strtok(NULL, "."))
        cur = cJSON_GetObjectItemCaseSensitive(cur, t);
    return cJSON_IsNumber(cur) ? cur->valuedouble : NAN;
}

static const char *str_at(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "?";
}

static const struct metric {
    const char *path;
    const char *label;
    int digits;
} metrics[] = {
    {"qps", "QPS (successful req/s)", 1},
    {"errors", "errors", 0},
    {"error_rate", "error rate", 4},
    {"latency_ms.mean", "latency mean (ms)", 3},
    {"latency_ms.p50", "latency p50 (ms)", 3},
    {"latency_ms.p90", "latency p90 (ms)", 3},
    {"latency_ms.p99", "latency p99 (ms)", 3},
    {"latency_ms.p99_9", "latency p99.9 (ms)", 3},
    {"latency_ms.p99_99", "latency p99.99 (ms)", 3},
    {"latency_ms.max", "latency max (ms)", 3},
    {"service_time_ms.p50", "service time p50 (ms)", 3},
    {"service_time_ms.p99", "service time p99 (ms)", 3},
    {"throughput.min", "throughput min over 1 s (req/s)", 0},
    {"throughput.median", "throughput median over 1 s (req/s)", 0},
    {"throughput.max", "throughput max over 1 s (req/s)", 0},
    {"cpu_percent", "server CPU % (100 = one core)", 1},
    {"qps_per_cpu_percent", "QPS per server CPU %", 2},
    {"system_cpu_percent", "system CPU % (100 = one core)", 1},
    {"qps_per_system_cpu_percent", "QPS per system CPU %", 2},
    {"background_cpu_percent", "background load CPU %", 1},
    {"query_share", "server time in query phase (share)", 3},
    {"fetch_share", "server time in fetch phase (share)", 3},
    {"store_bytes", "size on disk (bytes)", 0},
    {"stored_fields_bytes", "stored fields on disk (bytes)", 0},
};

static void cell(fds_strbuf *s, double v, int digits)
{
    if (isnan(v))
        fds_strbuf_printf(s, " n/a |");
    else
        fds_strbuf_printf(s, " %.*f |", digits, v);
}

/* numeric value `key` (dotted) of class `name` of a side; NAN if absent */
static double class_num(const cJSON *side, const char *name, const char *key)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(side, "classes"), name);
    return c ? num_at(c, key) : NAN;
}

/* the per-class rows of a comparison: one row per class and metric, a
 * value per side, then a ratio per side but the reference, value[ref] /
 * value[i] (or, with ref < 0, value[1] / value[0]) */
static const struct metric class_metrics[] = {
    {"latency_ms.p50", "latency p50 (ms)", 3},
    {"latency_ms.p99", "latency p99 (ms)", 3},
    {"errors", "errors", 0},
};

static void class_rows(fds_strbuf *s, const cJSON *const *sides, int n, int ref)
{
    const cJSON *cl = cJSON_GetObjectItemCaseSensitive(sides[ref < 0 ? 0 : ref], "classes");
    const cJSON *c;
    cJSON_ArrayForEach(c, cl)
    {
        for (size_t m = 0; m < sizeof class_metrics / sizeof *class_metrics; m++) {
            fds_strbuf_printf(s, "| %s: %s |", c->string, class_metrics[m].label);
            for (int i = 0; i < n; i++)
                cell(s, class_num(sides[i], c->string, class_metrics[m].path),
                     class_metrics[m].digits);
            for (int i = 0; i < n; i++) {
                if (i == ref || (ref < 0 && i == 0))
                    continue;
                double num = class_num(sides[ref < 0 ? i : ref], c->string, class_metrics[m].path);
                double den = class_num(sides[ref < 0 ? 0 : i], c->string, class_metrics[m].path);
                cell(s, !isnan(num) && !isnan(den) && den != 0 ? num / den : NAN, 3);
            }
            fds_strbuf_printf(s, "\n");
        }
    }
}

char *fds_lgreport_table(const cJSON *a, const cJSON *b, const char *title_a, const char *title_b)
{
    fds_strbuf s = FDS_STRBUF_INIT;
    fds_strbuf_printf(&s, "| metric | %s | %s | ratio B/A |\n|---|---:|---:|---:|\n", title_a, title_b);
    for (size_t i = 0; i < sizeof metrics / sizeof *metrics; i++) {
        double va = num_at(a, metrics[i].path), vb = num_at(b, metrics[i].path);
        if (isnan(va) && isnan(vb))
            continue;
        fds_strbuf_printf(&s, "| %s |", metrics[i].label);
        cell(&s, va, metrics[i].digits);
        cell(&s, vb, metrics[i].digits);
        cell(&s, (!isnan(va) && !isnan(vb) && va != 0) ? vb / va : NAN, 3);
        fds_strbuf_printf(&s, "\n");
    }
    const cJSON *sides[2] = {a, b};
    class_rows(&s, sides, 2, -1);
    return s.p;
}

char *fds_lgreport_single(const cJSON *side)
{
    fds_strbuf s = FDS_STRBUF_INIT;
    fds_strbuf_printf(&s, "| metric | value |\n|---|---:|\n");
    for (size_t i = 0; i < sizeof metrics / sizeof *metrics; i++) {
        double v = num_at(side, metrics[i].path);
        if (isnan(v))
            continue;
        fds_strbuf_printf(&s, "| %s |", metrics[i].label);
        cell(&s, v, metrics[i].digits);
        fds_strbuf_printf(&s, "\n");
    }
    static const struct metric cols[] = {
        {"share", "share of bodies", 3},      {"ok", "ok", 0},
        {"errors", "errors", 0},              {"latency_ms.p50", "latency p50 (ms)", 3},
        {"latency_ms.p90", "p90 (ms)", 3},    {"latency_ms.p99", "p99 (ms)", 3},
        {"latency_ms.max", "max (ms)", 3},
    };
    const size_t ncols = sizeof cols / sizeof *cols;
    const cJSON *cl = cJSON_GetObjectItemCaseSensitive(side, "classes");
    if (cl) {
        fds_strbuf_printf(&s, "\n| class |");
        for (size_t k = 0; k < ncols; k++)
            fds_strbuf_printf(&s, " %s |", cols[k].label);
        fds_strbuf_printf(&s, "\n|---|");
        for (size_t k = 0; k < ncols; k++)
            fds_strbuf_printf(&s, "---:|");
        fds_strbuf_printf(&s, "\n");
        const cJSON *c;
        cJSON_ArrayForEach(c, cl)
        {
            fds_strbuf_printf(&s, "| %s |", c->string);
            for (size_t k = 0; k < ncols; k++)
                cell(&s, num_at(c, cols[k].path), cols[k].digits);
            fds_strbuf_printf(&s, "\n");
        }
    }
    return s.p;
}

int fds_lgreport_order(int round, int n, int k)
{
    return round % 2 ? n - 1 - k : k;
}

/* the per-round metrics whose ratios get a spread over rounds */
static const char *const spread_metrics[] = {
    "qps", "latency_ms.mean", "latency_ms.p50", "latency_ms.p99", "cpu_percent",
    "system_cpu_percent", "qps_per_cpu_percent", "qps_per_system_cpu_percent",
    "background_cpu_percent", "query_share", "fetch_share"};
/* side-level metrics that have no rounds: a ratio only */
static const char *const disk_metrics[] = {"store_bytes", "stored_fields_bytes"};

static cJSON *ratio_entry(double ratio, double lo, double hi, int m)
{
    cJSON *e = cJSON_CreateObject();
    add_opt(e, "ratio", isnan(ratio) ? -1 : ratio);
    add_opt(e, "min", m ? lo : -1);
    add_opt(e, "max", m ? hi : -1);
    const char *v = isnan(ratio) ? "n/a"
                    : m < 2      ? "no spread (fewer than 2 rounds)"
                    : lo <= 1 + LG_RATIO_EPS && hi >= 1 - LG_RATIO_EPS ? FDS_LGREPORT_UNCLEAR
                                                : "clear";
    cJSON_AddStringToObject(e, "verdict", v);
    return e;
}

cJSON *fds_lgreport_spread(const cJSON *ref, const cJSON *side)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "definition",
                            "ratio = reference / side of the means over rounds; min and max: "
                            "of the per-round ratios (round r of both); verdict 'clear' when "
                            "every per-round ratio is on the same side of 1 (min > 1 or "
                            "max < 1), else the spread is wider than the effect");
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(ref, "rounds");
    const cJSON *rb = cJSON_GetObjectItemCaseSensitive(side, "rounds");
    int nr = cJSON_GetArraySize(ra) < cJSON_GetArraySize(rb) ? cJSON_GetArraySize(ra)
                                                              : cJSON_GetArraySize(rb);
    for (size_t i = 0; i < sizeof spread_metrics / sizeof *spread_metrics; i++) {
        const char *k = spread_metrics[i];
        double va = num_at(ref, k), vb = num_at(side, k);
        double lo = INFINITY, hi = -INFINITY;
        int m = 0;
        for (int r = 0; r < nr; r++) {
            double x = num_at(cJSON_GetArrayItem(ra, r), k);
            double y = num_at(cJSON_GetArrayItem(rb, r), k);
            if (isnan(x) || isnan(y) || y == 0)
                continue;
            lo = fmin(lo, x / y);
            hi = fmax(hi, x / y);
            m++;
        }
        cJSON_AddItemToObject(o, k, ratio_entry(vb != 0 ? va / vb : NAN, lo, hi, m));
    }
    for (size_t i = 0; i < sizeof disk_metrics / sizeof *disk_metrics; i++) {
        double va = num_at(ref, disk_metrics[i]), vb = num_at(side, disk_metrics[i]);
        cJSON *e = cJSON_AddObjectToObject(o, disk_metrics[i]);
        add_opt(e, "ratio", vb > 0 && !isnan(va) ? va / vb : -1);
    }
    return o;
}

/* the spread entry of `metric` in `spread`, or NULL */
static const cJSON *spread_entry(const cJSON *spread, const char *metric)
{
    return cJSON_GetObjectItemCaseSensitive(spread, metric);
}

static void ratio_cell(fds_strbuf *s, const cJSON *e, double va, double vb)
{
    double r = num_at(e, "ratio");
    if (!e)
        r = (!isnan(va) && !isnan(vb) && vb != 0) ? va / vb : NAN;
    if (isnan(r)) {
        fds_strbuf_printf(s, " n/a |");
        return;
    }
    fds_strbuf_printf(s, " %.3f", r);
    double lo = num_at(e, "min"), hi = num_at(e, "max");
    if (!isnan(lo) && !isnan(hi))
        fds_strbuf_printf(s, " (%.3f-%.3f)", lo, hi);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "verdict");
    if (cJSON_IsString(v) && !strcmp(v->valuestring, FDS_LGREPORT_UNCLEAR))
        fds_strbuf_printf(s, " spread > effect, no verdict");
    fds_strbuf_printf(s, " |");
}

char *fds_lgreport_table_n(const cJSON *const *sides, int n, int ref,
                           const cJSON *const *spreads, const char *const *titles)
{
    fds_strbuf s = FDS_STRBUF_INIT;
    fds_strbuf_printf(&s, "| metric |");
    for (int i = 0; i < n; i++)
        fds_strbuf_printf(&s, " %s |", titles[i]);
    for (int i = 0; i < n; i++)
        if (i != ref)
            fds_strbuf_printf(&s, " %c / %c (min-max over rounds) |", 'A' + ref, 'A' + i);
    fds_strbuf_printf(&s, "\n|---|");
    for (int i = 0; i < 2 * n - 1; i++)
        fds_strbuf_printf(&s, "---:|");
    fds_strbuf_printf(&s, "\n");
    for (size_t m = 0; m < sizeof metrics / sizeof *metrics; m++) {
        int any = 0;
        for (int i = 0; i < n; i++)
            any |= !isnan(num_at(sides[i], metrics[m].path));
        if (!any)
            continue;
        fds_strbuf_printf(&s, "| %s |", metrics[m].label);
        for (int i = 0; i < n; i++)
            cell(&s, num_at(sides[i], metrics[m].path), metrics[m].digits);
        for (int i = 0; i < n; i++)
            if (i != ref)
                ratio_cell(&s, spread_entry(spreads[i], metrics[m].path),
                           num_at(sides[ref], metrics[m].path),
                           num_at(sides[i], metrics[m].path));
        fds_strbuf_printf(&s, "\n");
    }
    class_rows(&s, sides, n, ref);
    fds_strbuf_printf(&s, "| size on disk (_cat/indices store.size) |");
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(sides[i], "cat_store_size");
        fds_strbuf_printf(&s, " %s |", cJSON_IsString(v) ? v->valuestring : "n/a");
    }
    for (int i = 0; i < n - 1; i++)
        fds_strbuf_printf(&s, " |");
    fds_strbuf_printf(&s, "\n");
    return s.p;
}

/* the first row's `key` of a _cat/nodes JSON answer, or "n/a" */
static const char *cat_value(const cJSON *cat, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cat, 0), key);
    return cJSON_IsString(v) ? v->valuestring : "n/a";
}

char *fds_lgreport_rounds_table(const cJSON *const *sides, int n)
{
    fds_strbuf s = FDS_STRBUF_INIT;
    fds_strbuf_printf(&s, "| round | side | QPS | latency mean (ms) | p99 (ms) | server CPU %% | "
                          "system CPU %% | QPS per server CPU %% | background CPU %% | "
                          "fetch share | load_1m / ram.percent before |\n"
                          "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    int nr = 0;
    for (int i = 0; i < n; i++) {
        int m = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sides[i], "rounds"));
        nr = m > nr ? m : nr;
    }
    for (int r = 0; r < nr; r++) {
        /* the round's own number and order: rounds left out (marked) leave gaps */
        const cJSON *rv = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sides[0], "rounds"), r), "round");
        int rn = cJSON_IsNumber(rv) && rv->valuedouble >= 1 ? (int)rv->valuedouble : r + 1;
        for (int k = 0; k < n; k++) {
            int i = fds_lgreport_order(rn - 1, n, k);
            const cJSON *o =
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sides[i], "rounds"), r);
            if (!o)
                continue;
            fds_strbuf_printf(&s, "| %d | %c |", rn, 'A' + i);
            cell(&s, num_at(o, "qps"), 1);
            cell(&s, num_at(o, "latency_ms.mean"), 3);
            cell(&s, num_at(o, "latency_ms.p99"), 3);
            cell(&s, num_at(o, "cpu_percent"), 1);
            cell(&s, num_at(o, "system_cpu_percent"), 1);
            cell(&s, num_at(o, "qps_per_cpu_percent"), 2);
            cell(&s, num_at(o, "background_cpu_percent"), 1);
            cell(&s, num_at(o, "fetch_share"), 3);
            const cJSON *cat = cJSON_GetObjectItemCaseSensitive(o, "cat_nodes_before");
            fds_strbuf_printf(&s, " %s / %s |\n", cat_value(cat, "load_1m"),
                              cat_value(cat, "ram.percent"));
        }
    }
    return s.p;
}

/* 1 with *r = the ratio of `metric` when it has a verdict, else 0 */
static int clear_ratio(const cJSON *spread, const char *metric, double *r)
{
    const cJSON *e = spread_entry(spread, metric);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "verdict");
    *r = num_at(e, "ratio");
    return !isnan(*r) && cJSON_IsString(v) && strcmp(v->valuestring, FDS_LGREPORT_UNCLEAR) &&
           strcmp(v->valuestring, "n/a");
}

static const char *codec_of(const cJSON *side)
{
    return str_at(side, "codec");
}

/* What fieldstore's codecs are, for the sentence (docs/codec.md); NULL for
 * a codec it does not know. */
static const char *codec_gloss(const char *codec)
{
    static const char *const g[][2] = {
        {"ZSTD", "16 KiB blocks, zstd level 3 with a trained dictionary"},
        {"best_compression", "16 KiB blocks, DEFLATE level 6 with a preset dictionary"},
        {"lucene_best_compression",
         "Elasticsearch 7.10's best_compression layout: Lucene 8.7 DEFLATE in 480 KiB chunks"},
        {"default", "LZ4"},
    };
    for (size_t i = 0; i < sizeof g / sizeof *g; i++)
        if (!strcmp(codec, g[i][0]))
            return g[i][1];
    return NULL;
}

char *fds_lgreport_sentence(const cJSON *ref, const cJSON *side, const cJSON *spread)
{
    fds_strbuf s = FDS_STRBUF_INIT;
    double cpu, qps;
    int cpu_ok = clear_ratio(spread, "qps_per_cpu_percent", &cpu);
    int qps_ok = clear_ratio(spread, "qps", &qps);
    fds_strbuf_printf(&s, "%s (%s)", codec_of(ref), str_at(ref, "index"));
    if (cpu_ok)
        fds_strbuf_printf(&s, " served %.2fx the queries per server CPU %% of", cpu);
    else
        fds_strbuf_printf(&s, " could not be told apart in queries per server CPU %% from");
    const char *gloss = codec_gloss(codec_of(side));
    fds_strbuf_printf(&s, " %s (%s%s%s)", codec_of(side), str_at(side, "index"),
                      gloss ? ", " : "", gloss ? gloss : "");
    if (qps_ok)
        fds_strbuf_printf(&s, ", at %.2fx its QPS", qps);
    else
        fds_strbuf_printf(&s, ", at a QPS within the spread of its rounds");
    const char *disk = !isnan(num_at(ref, "stored_fields_bytes")) &&
                               !isnan(num_at(side, "stored_fields_bytes"))
                           ? "stored_fields_bytes"
                           : "store_bytes";
    double d = num_at(spread_entry(spread, disk), "ratio");
    const char *what = strcmp(disk, "store_bytes") ? "stored-fields" : "index";
    if (!isnan(d) && fabs(1 - d) < LG_SAME_DISK)
        fds_strbuf_printf(&s, ", on the same %s disk (within %.1f%%)", what, LG_SAME_DISK * 100);
    else if (!isnan(d))
        fds_strbuf_printf(&s, ", on %.0f%% %s %s disk", fabs(1 - d) * 100,
                          d <= 1 ? "less" : "more", what);
    fds_strbuf_printf(&s, ".");
    return s.p;
}

static void mkparent(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    }
}

int fds_lgreport_write_text(const char *path, const char *text)
{
    mkparent(path);
    FILE *f = fopen(path, "w");
    if (!f)
        return FDS_EIO;
    fputs(text, f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return FDS_EIO;
    return 0;
}

int fds_lgreport_write_json(const char *path, const cJSON *doc)
{
    char *t = cJSON_Print(doc);
    if (!t)
        return FDS_ENOMEM;
    size_t n = strlen(t);
    char *t2 = realloc(t, n + 2);
    if (!t2) {
        free(t);
        return FDS_ENOMEM;
    }
    t2[n] = '\n';
    t2[n + 1] = '\0';
    int rc = fds_lgreport_write_text(path, t2);
    free(t2);
    return rc;
}

/* "A: index (codec)" for side i into buf */
static const char *side_title(const cJSON *o, int i, char *buf, size_t cap)
{
    const cJSON *codec = cJSON_GetObjectItemCaseSensitive(o, "codec");
    snprintf(buf, cap, "%c: %s (%s)", 'A' + i, str_at(o, "index"),
             cJSON_IsString(codec) ? codec->valuestring : "codec ?");
    return buf;
}

/* One bar per side and round of the per-round metric at `path`. */
static int svg_per_round(const char *file, const char *title, const char *y_label,
                         const char *path, const cJSON *const *sides, int n)
{
    fds_svg_bars c;
    char titles[FDS_SVG_MAX_SERIES][256];
    char labels[FDS_SVG_MAX_GROUPS][32];
    memset(&c, 0, sizeof c);
    c.title = title;
    c.y_label = y_label;
    c.nseries = n;
    for (int s = 0; s < n; s++) {
        c.series[s] = side_title(sides[s], s, titles[s], sizeof titles[s]);
        const cJSON *rounds = cJSON_GetObjectItemCaseSensitive(sides[s], "rounds");
        int m = cJSON_GetArraySize(rounds);
        if (m > FDS_SVG_MAX_GROUPS)
            m = FDS_SVG_MAX_GROUPS;
        if (m > c.ngroups)
            c.ngroups = m;
        for (int g = 0; g < FDS_SVG_MAX_GROUPS; g++) {
            double v = g < m ? num_at(cJSON_GetArrayItem(rounds, g), path) : NAN;
            c.values[s][g] = isnan(v) ? -1 : v;
        }
    }
    for (int g = 0; g < c.ngroups; g++) {
        snprintf(labels[g], sizeof labels[g], "round %d", g + 1);
        c.groups[g] = labels[g];
    }
    if (c.ngroups == 0) {
        c.ngroups = 1;
        c.groups[0] = "mean";
        for (int s = 0; s < n; s++) {
            double v = num_at(sides[s], path);
            c.values[s][0] = isnan(v) ? -1 : v;
        }
    }
    mkparent(file);
    return fds_svg_write_bars(file, &c);
}

/* One bar per side for each of the side-level metrics in paths[]. */
static int svg_means(const char *file, const char *title, const char *y_label,
                     const char *const *paths, const char *const *glabels, int ng,
                     const cJSON *const *sides, int n)
{
    fds_svg_bars c;
    char titles[FDS_SVG_MAX_SERIES][256];
    memset(&c, 0, sizeof c);
    c.title = title;
    c.y_label = y_label;
    c.nseries = n;
    c.ngroups = ng;
    for (int g = 0; g < ng; g++)
        c.groups[g] = glabels[g];
    for (int s = 0; s < n; s++) {
        c.series[s] = side_title(sides[s], s, titles[s], sizeof titles[s]);
        for (int g = 0; g < ng; g++) {
            double v = num_at(sides[s], paths[g]);
            c.values[s][g] = isnan(v) ? -1 : v;
        }
    }
    mkparent(file);
    return fds_svg_write_bars(file, &c);
}

int fds_lgreport_svgs_n(const char *prefix, const cJSON *const *sides, int n)
{
    if (n < 1 || n > FDS_SVG_MAX_SERIES)
        return FDS_EINVAL;
    char path[1024];
    int rc = 0;
    snprintf(path, sizeof path, "%s_qps_rounds.svg", prefix);
    rc |= svg_per_round(path, "QPS per round (successful requests/s)", "req/s", "qps", sides, n);
    snprintf(path, sizeof path, "%s_latency_rounds.svg", prefix);
    rc |= svg_per_round(path, "Mean latency per round", "ms", "latency_ms.mean", sides, n);
    snprintf(path, sizeof path, "%s_cpu_rounds.svg", prefix);
    rc |= svg_per_round(path, "QPS per server CPU % per round (100% = one core)",
                        "req/s per CPU %", "qps_per_cpu_percent", sides, n);
    static const char *const pk[] = {"latency_ms.p50", "latency_ms.p90", "latency_ms.p99",
                                     "latency_ms.p99_9"};
    static const char *const pl[] = {"p50", "p90", "p99", "p99.9"};
    snprintf(path, sizeof path, "%s_latency.svg", prefix);
    rc |= svg_means(path, "Latency percentiles (mean over rounds)", "ms", pk, pl, 4, sides, n);
    static const char *const ck[] = {"qps_per_cpu_percent", "qps_per_system_cpu_percent"};
    static const char *const cl[] = {"per server CPU %", "per system CPU %"};
    snprintf(path, sizeof path, "%s_qps_per_cpu.svg", prefix);
    rc |= svg_means(path, "QPS per CPU % (100% = one core)", "req/s per CPU %", ck, cl, 2,
                    sides, n);
    return rc ? FDS_EIO : 0;
}

int fds_lgreport_svgs(const char *prefix, const cJSON *a, const cJSON *b)
{
    const cJSON *sides[2] = {a, b};
    return fds_lgreport_svgs_n(prefix, sides, 2);
}

static cJSON *load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "loadgen compare: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    fds_strbuf s = FDS_STRBUF_INIT;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fds_strbuf_put(&s, buf, n);
    fclose(f);
    cJSON *doc = s.p ? cJSON_Parse(s.p) : NULL;
    free(s.p);
    if (!doc)
        fprintf(stderr, "loadgen compare: %s is not JSON\n", path);
    return doc;
}

int fds_lgreport_compare(const char *path_a, const char *path_b)
{
    cJSON *a = load(path_a), *b = load(path_b);
    int rc = 0;
    if (!a || !b) {
        rc = FDS_EPARSE;
        goto out;
    }
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(a, "result");
    const cJSON *rb = cJSON_GetObjectItemCaseSensitive(b, "result");
    char ta[600], tb[600];
    if (ra && rb) {
        snprintf(ta, sizeof ta, "A: %s", path_a);
        snprintf(tb, sizeof tb, "B: %s", path_b);
        char *t = fds_lgreport_table(ra, rb, ta, tb);
        printf("%s", t ? t : "");
        free(t);
        goto out;
    }
    if (cJSON_GetObjectItemCaseSensitive(a, "a") && cJSON_GetObjectItemCaseSensitive(b, "a")) {
        const char *sides[2] = {"a", "b"};
        for (int i = 0; i < 2; i++) {
            const cJSON *sa = cJSON_GetObjectItemCaseSensitive(a, sides[i]);
            const cJSON *sb = cJSON_GetObjectItemCaseSensitive(b, sides[i]);
            snprintf(ta, sizeof ta, "A: %s side %s (%s)", path_a, sides[i], str_at(sa, "index"));
            snprintf(tb, sizeof tb, "B: %s side %s (%s)", path_b, sides[i], str_at(sb, "index"));
            char *t = fds_lgreport_table(sa, sb, ta, tb);
            printf("%s%s", i ? "\n" : "", t ? t : "");
            free(t);
        }
        goto out;
    }
    fprintf(stderr, "loadgen compare: %s and %s are not two run files or two ab files written "
                    "by loadgen\n",
            path_a, path_b);
    rc = FDS_EINVAL;
out:
    cJSON_Delete(a);
    cJSON_Delete(b);
    return rc;
}
