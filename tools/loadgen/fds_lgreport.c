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

static int is_count(const char *k)
{
    return !strcmp(k, "ok") || !strcmp(k, "errors") || !strcmp(k, "sent") ||
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
        if (!k || !strcmp(k, "rounds") || !strcmp(k, "index") || !strcmp(k, "round"))
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

static char *side_title(const cJSON *o, const char *which)
{
    static char buf[2][256];
    int i = which[0] == 'B';
    const cJSON *codec = cJSON_GetObjectItemCaseSensitive(o, "codec");
    snprintf(buf[i], sizeof buf[i], "%s: %s (%s)", which, str_at(o, "index"),
             cJSON_IsString(codec) ? codec->valuestring : "codec ?");
    return buf[i];
}

int fds_lgreport_svgs(const char *prefix, const cJSON *a, const cJSON *b)
{
    char path[1024];
    int rc = 0;
    fds_svg_bars c;
    const cJSON *sides[2] = {a, b};
    char labels[FDS_SVG_MAX_GROUPS][32];

    /* QPS per round */
    memset(&c, 0, sizeof c);
    c.title = "QPS per round (successful requests/s)";
    c.y_label = "req/s";
    c.nseries = 2;
    for (int s = 0; s < 2; s++) {
        c.series[s] = side_title(sides[s], s ? "B" : "A");
        const cJSON *rounds = cJSON_GetObjectItemCaseSensitive(sides[s], "rounds");
        int n = cJSON_GetArraySize(rounds);
        if (n > FDS_SVG_MAX_GROUPS)
            n = FDS_SVG_MAX_GROUPS;
        if (n > c.ngroups)
            c.ngroups = n;
        for (int g = 0; g < FDS_SVG_MAX_GROUPS; g++)
            c.values[s][g] = g < n ? num_at(cJSON_GetArrayItem(rounds, g), "qps") : -1;
    }
    for (int g = 0; g < c.ngroups; g++) {
        snprintf(labels[g], sizeof labels[g], "round %d", g + 1);
        c.groups[g] = labels[g];
    }
    if (c.ngroups == 0) {
        c.ngroups = 1;
        c.groups[0] = "mean";
        for (int s = 0; s < 2; s++)
            c.values[s][0] = num_at(sides[s], "qps");
    }
    snprintf(path, sizeof path, "%s_qps_rounds.svg", prefix);
    mkparent(path);
    rc |= fds_svg_write_bars(path, &c);

    /* latency percentiles */
    memset(&c, 0, sizeof c);
    c.title = "Latency percentiles (mean over rounds)";
    c.y_label = "ms";
    c.nseries = 2;
    static const char *pk[] = {"latency_ms.p50", "latency_ms.p90", "latency_ms.p99",
                               "latency_ms.p99_9"};
    static const char *pl[] = {"p50", "p90", "p99", "p99.9"};
    c.ngroups = 4;
    for (int g = 0; g < 4; g++)
        c.groups[g] = pl[g];
    for (int s = 0; s < 2; s++) {
        c.series[s] = side_title(sides[s], s ? "B" : "A");
        for (int g = 0; g < 4; g++) {
            double v = num_at(sides[s], pk[g]);
            c.values[s][g] = isnan(v) ? -1 : v;
        }
    }
    snprintf(path, sizeof path, "%s_latency.svg", prefix);
    rc |= fds_svg_write_bars(path, &c);

    /* QPS per CPU% */
    memset(&c, 0, sizeof c);
    c.title = "QPS per CPU % (100% = one core)";
    c.y_label = "req/s per CPU %";
    c.nseries = 2;
    c.ngroups = 2;
    c.groups[0] = "per server CPU %";
    c.groups[1] = "per system CPU %";
    for (int s = 0; s < 2; s++) {
        c.series[s] = side_title(sides[s], s ? "B" : "A");
        double v0 = num_at(sides[s], "qps_per_cpu_percent");
        double v1 = num_at(sides[s], "qps_per_system_cpu_percent");
        c.values[s][0] = isnan(v0) ? -1 : v0;
        c.values[s][1] = isnan(v1) ? -1 : v1;
    }
    snprintf(path, sizeof path, "%s_qps_per_cpu.svg", prefix);
    rc |= fds_svg_write_bars(path, &c);
    return rc ? FDS_EIO : 0;
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
