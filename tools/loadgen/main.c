/*
 * main.c: the `loadgen` command -- measures an Elasticsearch-shaped search
 * server on this machine: QPS, latency and service-time percentiles, errors,
 * server and system CPU, QPS per CPU%, under optional background load; and
 * A/B tests of two or more indices (e.g. a ZSTD, a best_compression and a
 * lucene_best_compression index) in alternating rounds.
 *
 *   loadgen [run] --index I [options]        one measurement
 *   loadgen ab --a IA --b IB [options]       rounds A B, B A, A B ...
 *   loadgen ab --index I1 --index I2 ...     rounds A B C, C B A, ...
 *   loadgen compare A.json B.json            two earlier result files
 *
 * Only loopback targets are accepted: this is a tool for measuring a server
 * on the same machine, never a traffic generator for other hosts.
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fds_error.h"
#include "fds_httpc.h"
#include "fds_lg.h"
#include "fds_lgreport.h"
#include "fds_lgwork.h"
#include "fds_strbuf.h"
#include "fds_sysstat.h"

#define LG_INFO_TIMEOUT_MS 10000       /* _settings, _stats, _nodes/stats, _cat/nodes */
#define LG_DEFAULT_POOL 1000           /* distinct query bodies generated */
#define LG_DEFAULT_SAMPLE_DOCS 500     /* documents fetched to sample values */
#define LG_DEFAULT_AB_JSON "results/ab.json"
#define LG_MAX_SIDES 8                 /* ab --index sides (FDS_SVG_MAX_SERIES) */
#define LG_MAX_ROUNDS 32

typedef struct opts {
    const char *host;
    int port;
    const char *index;
    int threads, clients;
    double rate, duration, warmup, timeout;
    unsigned long long max_requests;
    const char *fields;
    unsigned long long seed;
    int sample_docs;
    long pool;
    int size;
    const char *bodies, *method, *path;
    long server_pid;
    const char *background;
    const char *json, *md, *svg_prefix;
    const char *dump_queries;
    int quiet;
    /* ab */
    const char *a, *b;
    const char *indices[LG_MAX_SIDES]; /* ab: every --index, in order */
    int nindices;
    int rounds;
    double round_duration;
    /* derived */
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char host_header[300];
} opts;

static void usage(FILE *f)
{
    fputs(
        "usage:\n"
        "  loadgen [run] --index INDEX [options]    measure one workload\n"
        "  loadgen ab --a INDEX_A --b INDEX_B [options]\n"
        "                                            A/B test: rounds A B, B A, ..., ratio B/A\n"
        "  loadgen ab --index I1 --index I2 [--index I3 ...] [options]\n"
        "                                            N-way: rounds A B C, C B A, ...; ratios\n"
        "                                            I1 / each other index\n"
        "  loadgen compare A.json B.json             compare two earlier result files\n"
        "\n"
        "target (loopback only: 127.0.0.0/8, ::1, localhost):\n"
        "  --host H              default 127.0.0.1\n"
        "  --port P              default 9200\n"
        "load:\n"
        "  --threads N           event-loop threads (default 2)\n"
        "  --clients N           keep-alive connections; closed loop: concurrent clients (default 8)\n"
        "  --rate R              open loop at R requests/s in total (latency from the intended\n"
        "                        send time); default: closed loop\n"
        "  --duration S          measured seconds (default 10)\n"
        "  --warmup S            seconds excluded before measuring (default 2; ab: per round, default 1)\n"
        "  --max-requests N      stop after N requests sent, warm-up included (default: no cap)\n"
        "  --timeout S           per-request timeout in seconds (default 10)\n"
        "workload (default: random match queries, values sampled from the index):\n"
        "  --index I             index to query (run mode)\n"
        "  --fields F1,F2        match fields (default " FDS_LGWORK_DEFAULT_FIELDS ")\n"
        "  --seed N              query generator seed (default 1)\n"
        "  --sample-docs N       documents fetched to sample values (default 500)\n"
        "  --pool N              distinct query bodies generated (default 1000)\n"
        "  --size N              hits per query (default 10)\n"
        "  --bodies FILE         one request body per line, POSTed to /INDEX/_search (or --path)\n"
        "  --method M --path P   a fixed request without body (e.g. GET /) instead\n"
        "  --dump-queries FILE   also write the generated bodies, one per line (ab: FILE.INDEX)\n"
        "measurement:\n"
        "  --server-pid PID      server process for CPU%; default: from GET /_nodes/stats\n"
        "  --background SPEC     cpu=N,load=P[,tool=builtin]: stress-ng (or built-in burners)\n"
        "                        running during the run; its actual CPU is reported\n"
        "output:\n"
        "  --json FILE           results as JSON (ab default: " LG_DEFAULT_AB_JSON ")\n"
        "  --md FILE             results as a Markdown table\n"
        "  --svg-prefix P        ab charts P_qps_rounds.svg, P_latency.svg, P_qps_per_cpu.svg\n"
        "                        (default: the --json path without .json)\n"
        "  --quiet               no progress line on stderr\n"
        "ab:\n"
        "  --a INDEX_A --b INDEX_B, or --index up to 8 times (the first is the reference)\n"
        "  --rounds N (default 3, at most 32) --round-duration S (default 10)\n"
        "\n"
        "CPU percentages use the top(1) scale: 100% = one core busy.\n",
        f);
}

static volatile sig_atomic_t g_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    g_interrupted = 1;
    fds_lg_request_stop();
}

static cJSON *get_json(const opts *o, const char *path)
{
    int status = 0;
    char *body = NULL;
    if (fds_httpc_request(&o->addr, o->addrlen, o->host_header, "GET", path, NULL,
                          LG_INFO_TIMEOUT_MS, &status, &body) != 0)
        return NULL;
    cJSON *doc = status >= 200 && status <= 299 ? cJSON_Parse(body) : NULL;
    free(body);
    return doc;
}

/* nodes.<any>.process.id of GET /_nodes/stats, or 0 */
static long pid_from_nodes(const opts *o)
{
    cJSON *doc = get_json(o, "/_nodes/stats");
    long pid = 0;
    cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    cJSON *node;
    cJSON_ArrayForEach(node, nodes)
    {
        cJSON *id = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(node, "process"), "id");
        if (cJSON_IsNumber(id) && id->valuedouble > 0 && id->valuedouble < 4194304.0 * 1024) {
            pid = (long)id->valuedouble;
            break;
        }
    }
    cJSON_Delete(doc);
    return pid;
}

/* Add codec, settings and store_bytes of `index` to `side`. */
static void add_index_info(const opts *o, cJSON *side, const char *index)
{
    char path[512];
    snprintf(path, sizeof path, "/%s/_settings", index);
    cJSON *st = get_json(o, path);
    cJSON *idx = cJSON_GetObjectItemCaseSensitive(st, index);
    if (!idx && st && st->child)
        idx = st->child;
    cJSON *settings = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(idx, "settings"), "index");
    if (settings) {
        cJSON *codec = cJSON_GetObjectItemCaseSensitive(settings, "codec");
        cJSON_ReplaceItemInObjectCaseSensitive(
            side, "codec",
            cJSON_CreateString(cJSON_IsString(codec) ? codec->valuestring : "default"));
        cJSON_AddItemToObject(side, "settings", cJSON_Duplicate(settings, 1));
    }
    cJSON_Delete(st);
    snprintf(path, sizeof path, "/%s/_stats/store", index);
    cJSON *ss = get_json(o, path);
    cJSON *n = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ss, "_all"),
                                             "primaries"),
            "store"),
        "size_in_bytes");
    if (!cJSON_IsNumber(n)) {
        cJSON *in = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(ss, "indices"), index);
        n = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(in, "primaries"),
                                             "store"),
            "size_in_bytes");
    }
    if (cJSON_IsNumber(n))
        cJSON_ReplaceItemInObjectCaseSensitive(side, "store_bytes",
                                               cJSON_CreateNumber(n->valuedouble));
    /* fieldstore also splits the size: stored fields are what the codec
     * decides, postings are the same for every codec */
    cJSON *sf = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ss, "_all"),
                                             "primaries"),
            "store"),
        "stored_fields_in_bytes");
    if (cJSON_IsNumber(sf))
        cJSON_ReplaceItemInObjectCaseSensitive(side, "stored_fields_bytes",
                                               cJSON_CreateNumber(sf->valuedouble));
    cJSON_Delete(ss);
    /* the size as _cat/indices shows it to a person */
    snprintf(path, sizeof path, "/_cat/indices/%s?h=store.size&format=json", index);
    cJSON *ci = get_json(o, path);
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ci, 0), "store.size");
    if (cJSON_IsString(cs))
        cJSON_AddStringToObject(side, "cat_store_size", cs->valuestring);
    else
        cJSON_AddNullToObject(side, "cat_store_size");
    cJSON_Delete(ci);
}

static cJSON *loadavg_json(void)
{
    double l[3];
    if (fds_sysstat_loadavg(l) != 0)
        return cJSON_CreateNull();
    return cJSON_CreateDoubleArray(l, 3);
}

/* GET /_cat/nodes as JSON; a server that answers in _cat's text table
 * instead is kept as that text; no answer (or not 2xx) gives null. */
static cJSON *cat_nodes(const opts *o)
{
    int status = 0;
    char *body = NULL;
    if (fds_httpc_request(&o->addr, o->addrlen, o->host_header, "GET",
                          "/_cat/nodes?h=load_1m,load_5m,load_15m,ram.percent&format=json", NULL,
                          LG_INFO_TIMEOUT_MS, &status, &body) != 0)
        return cJSON_CreateNull();
    cJSON *d = NULL;
    if (status >= 200 && status <= 299) {
        d = cJSON_Parse(body);
        if (!d)
            d = cJSON_CreateString(body);
    }
    free(body);
    return d ? d : cJSON_CreateNull();
}

static int build_workload(const opts *o, const char *index, fds_lgwork *w)
{
    char msg[600] = "";
    int rc;
    if (o->bodies) {
        char path[512];
        if (o->path)
            snprintf(path, sizeof path, "%s", o->path);
        else if (index)
            snprintf(path, sizeof path, "/%s/_search", index);
        else {
            fprintf(stderr, "loadgen: --bodies needs --index or --path\n");
            return FDS_EINVAL;
        }
        rc = fds_lgwork_bodies(w, o->host_header, path, o->bodies, msg, sizeof msg);
    } else if (o->path) {
        rc = fds_lgwork_fixed(w, o->host_header, o->method ? o->method : "GET", o->path);
    } else if (index) {
        rc = fds_lgwork_match(w, &o->addr, o->addrlen, o->host_header, index, o->fields,
                              o->sample_docs, (size_t)o->pool, o->seed, o->size, msg, sizeof msg);
    } else {
        fprintf(stderr, "loadgen: say what to send: --index, --bodies or --path\n");
        return FDS_EINVAL;
    }
    if (rc) {
        fprintf(stderr, "loadgen: %s\n", msg[0] ? msg : fds_strerror(rc));
        return rc;
    }
    if (o->dump_queries) {
        /* the bodies, one per line: reusable as --bodies */
        char path[1024];
        if (index && (o->a || o->nindices > 1))
            snprintf(path, sizeof path, "%s.%s", o->dump_queries, index);
        else
            snprintf(path, sizeof path, "%s", o->dump_queries);
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "loadgen: cannot write %s\n", path);
            fds_lgwork_free(w);
            return FDS_EIO;
        }
        for (size_t i = 0; i < w->n; i++) {
            const char *b = strstr(w->msgs[i], "\r\n\r\n");
            fprintf(f, "%s\n", b ? b + 4 : "");
        }
        fclose(f);
    }
    return 0;
}

static cJSON *config_json(const opts *o, const char *mode)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "mode", mode);
    cJSON_AddStringToObject(c, "host", o->host);
    cJSON_AddNumberToObject(c, "port", o->port);
    cJSON_AddNumberToObject(c, "threads", o->threads);
    cJSON_AddNumberToObject(c, "clients", o->clients);
    cJSON_AddStringToObject(c, "loop", o->rate > 0 ? "open" : "closed");
    cJSON_AddNumberToObject(c, "rate", o->rate);
    cJSON_AddNumberToObject(c, "duration_s", o->duration);
    cJSON_AddNumberToObject(c, "warmup_s", o->warmup);
    cJSON_AddNumberToObject(c, "max_requests", (double)o->max_requests);
    cJSON_AddNumberToObject(c, "timeout_s", o->timeout);
    cJSON_AddStringToObject(c, "fields", o->fields);
    cJSON_AddNumberToObject(c, "seed", (double)o->seed);
    cJSON_AddNumberToObject(c, "size", o->size);
    if (o->bodies)
        cJSON_AddStringToObject(c, "bodies", o->bodies);
    if (o->path)
        cJSON_AddStringToObject(c, "path", o->path);
    if (o->background)
        cJSON_AddStringToObject(c, "background", o->background);
    cJSON_AddNumberToObject(c, "ncpu", fds_sysstat_ncpu());
    cJSON_AddStringToObject(c, "cpu_percent_scale", "100 = one core");
    return c;
}

static cJSON *background_json(fds_sysstat_bg *bg, double cpu_percent)
{
    if (!bg)
        return cJSON_CreateNull();
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "tool", fds_sysstat_bg_tool(bg));
    cJSON_AddNumberToObject(b, "workers", fds_sysstat_bg_workers(bg));
    cJSON_AddNumberToObject(b, "load_percent", fds_sysstat_bg_load(bg));
    cJSON_AddNumberToObject(b, "cpu_percent", cpu_percent);
    return b;
}

static void print_run_summary(const fds_lg_result *r, const char *label)
{
    fprintf(stderr,
            "[loadgen%s%s] done: qps=%.1f ok=%llu errors=%llu latency p50=%.3fms p99=%.3fms "
            "p99.9=%.3fms max=%.3fms service p99=%.3fms server_cpu=%.1f%%\n",
            label ? " " : "", label ? label : "", r->qps, (unsigned long long)r->ok,
            (unsigned long long)r->errors, fds_hist_percentile(r->latency, 50) / 1e6,
            fds_hist_percentile(r->latency, 99) / 1e6,
            fds_hist_percentile(r->latency, 99.9) / 1e6, (double)fds_hist_max(r->latency) / 1e6,
            fds_hist_percentile(r->service, 99) / 1e6, r->server_cpu_percent);
}

static void fill_cfg(const opts *o, fds_lg_config *c, const fds_lgwork *w, double duration,
                     pid_t pid, fds_sysstat_bg *bg, const char *label)
{
    memset(c, 0, sizeof *c);
    c->addr = o->addr;
    c->addrlen = o->addrlen;
    c->threads = o->threads;
    c->clients = o->clients;
    c->rate = o->rate;
    c->duration_s = duration;
    c->warmup_s = o->warmup;
    c->max_requests = o->max_requests;
    c->timeout_s = o->timeout;
    c->requests = (const char *const *)w->msgs;
    c->request_lens = w->lens;
    c->nrequests = w->n;
    c->server_pid = pid;
    c->background = bg;
    c->progress = !o->quiet;
    c->label = label;
}

static pid_t resolve_pid(const opts *o)
{
    if (o->server_pid > 0)
        return (pid_t)o->server_pid;
    long pid = pid_from_nodes(o);
    if (pid <= 0) {
        fprintf(stderr, "loadgen: server CPU not measured (no --server-pid and no "
                        "nodes.*.process.id in GET /_nodes/stats)\n");
        return 0;
    }
    double s;
    if (fds_sysstat_proc_cpu((pid_t)pid, &s) != 0) {
        fprintf(stderr, "loadgen: server pid %ld from /_nodes/stats is not visible in /proc; "
                        "server CPU not measured\n",
                pid);
        return 0;
    }
    return (pid_t)pid;
}

/* Write text to path; 0, or 1 after saying why on stderr. */
static int write_text_or_say(const char *path, const char *text)
{
    if (fds_lgreport_write_text(path, text) != 0) {
        fprintf(stderr, "loadgen: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

static int cmd_run(opts *o)
{
    fds_lgwork w;
    if (build_workload(o, o->index, &w) != 0)
        return 1;
    if (!o->quiet)
        fprintf(stderr, "loadgen: %s\n", w.description);
    pid_t pid = resolve_pid(o);
    cJSON *la_before = loadavg_json();
    cJSON *cat_before = cat_nodes(o);
    char msg[300];
    fds_sysstat_bg *bg = NULL;
    if (o->background) {
        bg = fds_sysstat_bg_start(o->background, o->warmup + o->duration + o->timeout + 5, msg,
                                  sizeof msg);
        if (!bg) {
            fprintf(stderr, "loadgen: %s\n", msg);
            fds_lgwork_free(&w);
            return 2;
        }
    }
    fds_lg_config cfg;
    fill_cfg(o, &cfg, &w, o->duration, pid, bg, NULL);
    fds_lg_result r;
    int rc = fds_lg_run(&cfg, &r);
    cJSON *la_after = loadavg_json();
    cJSON *cat_after = cat_nodes(o);
    cJSON *bgj = background_json(bg, r.background_cpu_percent);
    fds_sysstat_bg_stop(bg);
    if (rc) {
        fprintf(stderr, "loadgen: run failed: %s\n", fds_strerror(rc));
        fds_lgwork_free(&w);
        return 1;
    }
    if (!o->quiet)
        print_run_summary(&r, NULL);
    cJSON *side = fds_lgreport_side(&r, o->index);
    if (o->index)
        add_index_info(o, side, o->index);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "tool", "fieldstore-loadgen");
    cJSON_AddNumberToObject(doc, "schema_version", 1);
    cJSON_AddStringToObject(doc, "mode", "run");
    cJSON_AddItemToObject(doc, "config", config_json(o, "run"));
    cJSON_AddStringToObject(doc, "workload", w.description);
    cJSON_AddItemToObject(doc, "result", side);
    cJSON *sys = cJSON_AddObjectToObject(doc, "system");
    cJSON_AddItemToObject(sys, "loadavg_before", la_before);
    cJSON_AddItemToObject(sys, "loadavg_after", la_after);
    cJSON_AddItemToObject(sys, "cat_nodes_before", cat_before);
    cJSON_AddItemToObject(sys, "cat_nodes_after", cat_after);
    cJSON_AddItemToObject(sys, "background", bgj);
    cJSON_AddNumberToObject(sys, "server_pid", pid);

    char *table = fds_lgreport_single(side);
    printf("%s", table ? table : "");
    int out = 0;
    if (o->json && fds_lgreport_write_json(o->json, doc) != 0) {
        fprintf(stderr, "loadgen: cannot write %s\n", o->json);
        out = 1;
    }
    if (o->md) {
        char head[512];
        snprintf(head, sizeof head, "# loadgen run\n\n%s; %s loop, %d clients, %d threads, %.1f s "
                                    "measured after %.1f s warm-up.\n\n",
                 w.description, o->rate > 0 ? "open" : "closed", o->clients, o->threads,
                 o->duration, o->warmup);
        size_t n = strlen(head) + (table ? strlen(table) : 0) + 1;
        char *all = malloc(n);
        if (all) {
            snprintf(all, n, "%s%s", head, table ? table : "");
            if (write_text_or_say(o->md, all))
                out = 1;
            free(all);
        }
    }
    free(table);
    cJSON_Delete(doc);
    fds_lg_result_free(&r);
    fds_lgwork_free(&w);
    return out;
}

/* obj.k1.k2... (NULL-terminated keys), or NULL */
static const cJSON *dig(const cJSON *obj, ...)
{
    va_list ap;
    va_start(ap, obj);
    for (const char *k = va_arg(ap, const char *); k && obj; k = va_arg(ap, const char *))
        obj = cJSON_GetObjectItemCaseSensitive(obj, k);
    va_end(ap);
    return obj;
}

/* search.<phase>_time_in_micros, else _millis x 1000; NAN if absent */
static double phase_us(const cJSON *search, const char *phase)
{
    char k[64];
    snprintf(k, sizeof k, "%s_time_in_micros", phase);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(search, k);
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    snprintf(k, sizeof k, "%s_time_in_millis", phase);
    v = cJSON_GetObjectItemCaseSensitive(search, k);
    return cJSON_IsNumber(v) ? v->valuedouble * 1000 : NAN;
}

/* The server's total query and fetch phase time of `index` in microseconds
 * from GET /{index}/_stats/search (Elasticsearch's indices.{name}.total.search,
 * else _all.total.search).  NAN in both when the server has no such timers. */
static void search_timers(const opts *o, const char *index, double *q_us, double *f_us)
{
    char path[512];
    snprintf(path, sizeof path, "/%s/_stats/search", index);
    cJSON *d = get_json(o, path);
    const cJSON *s = dig(d, "indices", index, "total", "search", (const char *)NULL);
    if (!s)
        s = dig(d, "_all", "total", "search", (const char *)NULL);
    *q_us = phase_us(s, "query");
    *f_us = phase_us(s, "fetch");
    if (isnan(*q_us) || isnan(*f_us))
        *q_us = *f_us = NAN;
    cJSON_Delete(d);
}

static void add_num_or_null(cJSON *o, const char *k, double v)
{
    if (isnan(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, v);
}

/* The phase timers' deltas over one measured side and the shares they give:
 * query_share = dq / (dq + df), fetch_share = df / (dq + df). */
static void add_phase_shares(cJSON *side, const double before[2], const double after[2])
{
    double dq = after[0] - before[0], df = after[1] - before[1];
    int ok = !isnan(dq) && !isnan(df) && dq >= 0 && df >= 0 && dq + df > 0;
    add_num_or_null(side, "query_time_us", ok ? dq : NAN);
    add_num_or_null(side, "fetch_time_us", ok ? df : NAN);
    add_num_or_null(side, "query_share", ok ? dq / (dq + df) : NAN);
    add_num_or_null(side, "fetch_share", ok ? df / (dq + df) : NAN);
}

/* One measured side of one round: _cat/nodes and the phase timers read
 * before, the run, the timers after.  The side object, or NULL on failure. */
static cJSON *ab_one(opts *o, fds_lgwork *w, const char *name, pid_t pid, fds_sysstat_bg *bg,
                     const char *label, double *bg_cpu)
{
    cJSON *cat = cat_nodes(o);
    double before[2], after[2];
    search_timers(o, name, &before[0], &before[1]);
    fds_lg_config cfg;
    fill_cfg(o, &cfg, w, o->round_duration, pid, bg, label);
    fds_lg_result res;
    int rc = fds_lg_run(&cfg, &res);
    if (rc) {
        fprintf(stderr, "loadgen ab: run failed: %s\n", fds_strerror(rc));
        cJSON_Delete(cat);
        return NULL;
    }
    search_timers(o, name, &after[0], &after[1]);
    if (!o->quiet)
        print_run_summary(&res, label);
    *bg_cpu = res.background_cpu_percent;
    cJSON *side = fds_lgreport_side(&res, name);
    add_phase_shares(side, before, after);
    cJSON_AddItemToObject(side, "cat_nodes_before", cat);
    fds_lg_result_free(&res);
    return side;
}

/* The A/B rounds over n sides in the order fds_lgreport_order() gives
 * (A B C, C B A, ...), each side's result as JSON in rounds[side][round].
 * An incomplete or cut-short round is dropped, earlier ones kept.
 * *bg_mean: mean background CPU %% (-1: none).  Returns the count of
 * complete rounds. */
static int ab_rounds(opts *o, int n, fds_lgwork *w, const char *const *names, pid_t pid,
                     fds_sysstat_bg *bg, cJSON *rounds[][LG_MAX_ROUNDS], double *bg_mean)
{
    int done = 0, failed = 0;
    double bg_sum = 0;
    int bg_n = 0;
    for (int r = 0; r < o->rounds && !failed; r++) {
        int made = 0; /* sides of this round measured so far */
        for (int k = 0; k < n && !g_interrupted; k++) {
            int s = fds_lgreport_order(r, n, k);
            char label[64];
            snprintf(label, sizeof label, "round %d/%d %c", r + 1, o->rounds, 'A' + s);
            double bgc;
            rounds[s][r] = ab_one(o, &w[s], names[s], pid, bg, label, &bgc);
            if (!rounds[s][r]) {
                failed = 1;
                break;
            }
            if (bgc >= 0) {
                bg_sum += bgc;
                bg_n++;
            }
            cJSON_AddNumberToObject(rounds[s][r], "round", r + 1);
            cJSON_AddNumberToObject(rounds[s][r], "position", k + 1);
            made++;
        }
        if (failed || g_interrupted) {
            for (int k = 0; k < made; k++)
                cJSON_Delete(rounds[fds_lgreport_order(r, n, k)][r]);
            if (g_interrupted)
                fprintf(stderr, "loadgen ab: interrupted; reporting %d complete round(s)\n", done);
            break;
        }
        done = r + 1;
    }
    *bg_mean = bg_n ? bg_sum / bg_n : -1;
    return done;
}

/* The sides of an ab run: names, the reference side (every ratio is
 * reference / side) and the pair kept as "a"/"b" (ratio b/a): --a/--b
 * give A, B with B the reference, as before; --index I1 I2 ... give the
 * first as reference, a = the last, b = the first. */
typedef struct ab_plan {
    int n, ref, a, b;
    const char *names[LG_MAX_SIDES];
} ab_plan;

static const char *ab_order_text(int n)
{
    return n == 2 ? "A B, B A, A B, ... (direction alternates every round)"
                  : "A B C ..., ... C B A, A B C ... (direction alternates every round)";
}

/* The A/B JSON document (takes ownership of side[] and sys_items[]:
 * loadavg before/after, _cat/nodes before/after, background). */
static cJSON *ab_document(opts *o, const ab_plan *p, cJSON **side, cJSON **spread, int done,
                          cJSON *sys_items[5], pid_t pid)
{
    static const char *sys_keys[5] = {"loadavg_before", "loadavg_after",
                                      "cat_nodes_before", "cat_nodes_after",
                                      "background"};
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "tool", "fieldstore-loadgen");
    cJSON_AddNumberToObject(doc, "schema_version", 2);
    cJSON_AddStringToObject(doc, "mode", "ab");
    cJSON *cfgj = config_json(o, "ab");
    cJSON_AddNumberToObject(cfgj, "rounds", done);
    cJSON_AddNumberToObject(cfgj, "round_duration_s", o->round_duration);
    cJSON_AddStringToObject(cfgj, "order", ab_order_text(p->n));
    cJSON_AddStringToObject(cfgj, "summary",
                            "sides (a, b) hold means over rounds (ok/errors: sums; query_share "
                            "and fetch_share from the summed timer deltas); ratio = b / a; "
                            "ratios[i] = reference / sides[i] with min-max over rounds");
    cJSON_AddStringToObject(cfgj, "fetch_share",
                            "fetch_share = dfetch_time / (dquery_time + dfetch_time), "
                            "query_share = dquery_time / (same), deltas of GET "
                            "/{index}/_stats/search search.*_time_in_micros over each "
                            "measured round (warm-up included); null without timers");
    cJSON_AddItemToObject(doc, "config", cfgj);
    cJSON_AddStringToObject(doc, "reference", p->names[p->ref]);
    cJSON *arr = cJSON_AddArrayToObject(doc, "sides");
    for (int i = 0; i < p->n; i++)
        cJSON_AddItemToArray(arr, side[i]);
    cJSON *rat = cJSON_AddArrayToObject(doc, "ratios");
    for (int i = 0; i < p->n; i++)
        if (i != p->ref) {
            cJSON *e = spread[i];
            spread[i] = NULL;
            cJSON_AddItemToObject(e, "index", cJSON_CreateString(p->names[i]));
            cJSON_AddItemToObject(e, "reference", cJSON_CreateString(p->names[p->ref]));
            char *sent = fds_lgreport_sentence(side[p->ref], side[i], e);
            cJSON_AddStringToObject(e, "sentence", sent ? sent : "");
            free(sent);
            cJSON_AddItemToArray(rat, e);
        }
    cJSON_AddItemToObject(doc, "a", cJSON_Duplicate(side[p->a], 1));
    cJSON_AddItemToObject(doc, "b", cJSON_Duplicate(side[p->b], 1));
    cJSON_AddItemToObject(doc, "ratio", fds_lgreport_ratio(side[p->a], side[p->b]));
    cJSON *sys = cJSON_AddObjectToObject(doc, "system");
    for (int k = 0; k < 5; k++)
        cJSON_AddItemToObject(sys, sys_keys[k], sys_items[k]);
    cJSON_AddNumberToObject(sys, "server_pid", pid);
    return doc;
}

/* the sentence of the a/b pair in doc's "ratios", or "" */
static const char *pair_sentence(const cJSON *doc, const ab_plan *p)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "ratios"))
    {
        const cJSON *ix = cJSON_GetObjectItemCaseSensitive(e, "index");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "sentence");
        int other = p->a == p->ref ? p->b : p->a;
        if (cJSON_IsString(ix) && !strcmp(ix->valuestring, p->names[other]) &&
            cJSON_IsString(st))
            return st->valuestring;
    }
    return "";
}

/* The A/B Markdown report at o->md: header, sentence, tables, charts. */
static int ab_write_md(opts *o, const ab_plan *p, const cJSON *doc, const char *table,
                       const char *per_round, const char *prefix, int done)
{
    fds_strbuf s = FDS_STRBUF_INIT;
    const char *base = strrchr(prefix, '/');
    base = base ? base + 1 : prefix;
    fds_strbuf_printf(&s, "# A/B:");
    for (int i = 0; i < p->n; i++)
        fds_strbuf_printf(&s, "%s %c = %s", i ? "," : "", 'A' + i, p->names[i]);
    fds_strbuf_printf(&s, "\n\n**%s**\n\n", pair_sentence(doc, p));
    fds_strbuf_printf(&s,
                      "%d rounds, order %s, of %.1f s per side after %.1f s warm-up each; "
                      "%s loop, %d clients, %d threads, fields %s, %d hits, seed %llu; "
                      "background load: %s. Values are means over rounds; the ratio columns "
                      "are %c / each other side, with the min-max of the per-round ratios; "
                      "where that range reaches 1 (some round does not show the difference) "
                      "the cell says \"spread > effect, no verdict\". CPU %%: 100 = one "
                      "core. Query and fetch share: the server's search time in each "
                      "phase, fetch share = dfetch_time / (dquery_time + dfetch_time) from "
                      "GET /{index}/_stats/search read before and after each round (n/a "
                      "when the server has no timers).\n\n",
                      done, ab_order_text(p->n), o->round_duration, o->warmup,
                      o->rate > 0 ? "open" : "closed", o->clients, o->threads, o->fields,
                      o->size, o->seed, o->background ? o->background : "none", 'A' + p->ref);
    fds_strbuf_printf(&s, "%s\n", table ? table : "");
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "ratios"))
        fds_strbuf_printf(&s, "- %s\n",
                          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "sentence")));
    fds_strbuf_printf(&s, "\n## Rounds\n\n%s\n", per_round ? per_round : "");
    fds_strbuf_printf(&s,
                      "![QPS per round](%s_qps_rounds.svg)\n"
                      "![Latency per round](%s_latency_rounds.svg)\n"
                      "![QPS per CPU%% per round](%s_cpu_rounds.svg)\n"
                      "![Latency percentiles](%s_latency.svg)\n"
                      "![QPS per CPU%%](%s_qps_per_cpu.svg)\n",
                      base, base, base, base, base);
    int out = s.p ? write_text_or_say(o->md, s.p) : 1;
    free(s.p);
    return out;
}

/* Print the A/B tables and write the JSON, the SVG charts and (with --md)
 * the Markdown report.  Returns 0, or 1 when a file could not be written. */
static int ab_report(opts *o, const ab_plan *p, cJSON *doc, int done)
{
    const cJSON *sides[LG_MAX_SIDES], *spreads[LG_MAX_SIDES] = {0};
    char titles[LG_MAX_SIDES][300];
    const char *tp[LG_MAX_SIDES];
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "sides");
    for (int i = 0; i < p->n; i++) {
        sides[i] = cJSON_GetArrayItem(arr, i);
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(sides[i], "codec");
        snprintf(titles[i], sizeof titles[i], "%c: %s (%s)", 'A' + i, p->names[i],
                 cJSON_IsString(c) ? c->valuestring : "codec ?");
        tp[i] = titles[i];
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "ratios"))
    {
        const char *ix = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "index"));
        for (int i = 0; i < p->n; i++)
            if (ix && !strcmp(ix, p->names[i]))
                spreads[i] = e;
    }
    char *table = fds_lgreport_table_n(sides, p->n, p->ref, spreads, tp);
    char *per_round = fds_lgreport_rounds_table(sides, p->n);
    printf("A/B: %d rounds of %.1f s per side (after %.1f s warm-up each), order %s, %s loop, "
           "%d clients, %d threads; values are means over rounds, ratio = %c / side "
           "(min-max over rounds)\n\n%s\n%s\n\n%s",
           done, o->round_duration, o->warmup, ab_order_text(p->n),
           o->rate > 0 ? "open" : "closed", o->clients, o->threads, 'A' + p->ref,
           table ? table : "", pair_sentence(doc, p), per_round ? per_round : "");
    int out = 0;
    const char *json = o->json ? o->json : LG_DEFAULT_AB_JSON;
    if (fds_lgreport_write_json(json, doc) != 0) {
        fprintf(stderr, "loadgen: cannot write %s\n", json);
        out = 1;
    }
    char prefix[1024];
    if (o->svg_prefix)
        snprintf(prefix, sizeof prefix, "%s", o->svg_prefix);
    else {
        snprintf(prefix, sizeof prefix, "%s", json);
        size_t n = strlen(prefix);
        if (n > 5 && strcmp(prefix + n - 5, ".json") == 0)
            prefix[n - 5] = '\0';
    }
    if (fds_lgreport_svgs_n(prefix, sides, p->n) != 0) {
        fprintf(stderr, "loadgen: cannot write the SVG charts %s_*.svg\n", prefix);
        out = 1;
    }
    if (o->md && ab_write_md(o, p, doc, table, per_round, prefix, done))
        out = 1;
    free(table);
    free(per_round);
    return out;
}

/* The plan from --a/--b or the --index list; 0, or 2 after a message. */
static int ab_plan_make(const opts *o, ab_plan *p)
{
    memset(p, 0, sizeof *p);
    if (o->a || o->b) {
        if (!o->a || !o->b || o->nindices) {
            fprintf(stderr, "loadgen ab: give --a INDEX_A and --b INDEX_B, or --index two or "
                            "more times\n");
            return 2;
        }
        p->n = 2;
        p->names[0] = o->a;
        p->names[1] = o->b;
        p->ref = 1;
        p->a = 0;
        p->b = 1;
        return 0;
    }
    if (o->nindices < 2) {
        fprintf(stderr, "loadgen ab: --a INDEX_A and --b INDEX_B, or --index at least twice, "
                        "are required\n");
        return 2;
    }
    p->n = o->nindices;
    for (int i = 0; i < p->n; i++)
        p->names[i] = o->indices[i];
    p->ref = 0;
    p->a = p->n - 1;
    p->b = 0;
    return 0;
}

static int cmd_ab(opts *o)
{
    ab_plan p;
    if (ab_plan_make(o, &p))
        return 2;
    if (o->rounds < 1 || o->rounds > LG_MAX_ROUNDS) {
        fprintf(stderr, "loadgen ab: --rounds must be 1..%d\n", LG_MAX_ROUNDS);
        return 2;
    }
    fds_lgwork w[LG_MAX_SIDES];
    for (int s = 0; s < p.n; s++) {
        if (build_workload(o, p.names[s], &w[s]) != 0) {
            while (s-- > 0)
                fds_lgwork_free(&w[s]);
            return 1;
        }
        if (!o->quiet)
            fprintf(stderr, "loadgen ab: %c=%s: %s\n", 'A' + s, p.names[s], w[s].description);
    }
    pid_t pid = resolve_pid(o);
    cJSON *sys[5]; /* loadavg before/after, _cat/nodes before/after, background */
    sys[0] = loadavg_json();
    sys[2] = cat_nodes(o);
    char msg[300];
    fds_sysstat_bg *bg = NULL;
    if (o->background) {
        double total = o->rounds * p.n * (o->warmup + o->round_duration + o->timeout) + 10;
        bg = fds_sysstat_bg_start(o->background, total, msg, sizeof msg);
        if (!bg) {
            fprintf(stderr, "loadgen: %s\n", msg);
            for (int s = 0; s < p.n; s++)
                fds_lgwork_free(&w[s]);
            cJSON_Delete(sys[0]);
            cJSON_Delete(sys[2]);
            return 2;
        }
    }
    cJSON *rounds[LG_MAX_SIDES][LG_MAX_ROUNDS];
    double bg_mean;
    int done = ab_rounds(o, p.n, w, p.names, pid, bg, rounds, &bg_mean);
    sys[1] = loadavg_json();
    sys[3] = cat_nodes(o);
    sys[4] = background_json(bg, bg_mean);
    fds_sysstat_bg_stop(bg);
    for (int s = 0; s < p.n; s++)
        fds_lgwork_free(&w[s]);
    if (done == 0) {
        fprintf(stderr, "loadgen ab: no complete round\n");
        for (int k = 0; k < 5; k++)
            cJSON_Delete(sys[k]);
        return 1;
    }
    cJSON *side[LG_MAX_SIDES], *spread[LG_MAX_SIDES] = {0};
    for (int s = 0; s < p.n; s++) {
        side[s] = fds_lgreport_mean(rounds[s], done, p.names[s]);
        add_index_info(o, side[s], p.names[s]);
        for (int r = 0; r < done; r++)
            cJSON_Delete(rounds[s][r]);
    }
    for (int s = 0; s < p.n; s++)
        if (s != p.ref)
            spread[s] = fds_lgreport_spread(side[p.ref], side[s]);
    cJSON *doc = ab_document(o, &p, side, spread, done, sys, pid);
    int out = ab_report(o, &p, doc, done);
    cJSON_Delete(doc);
    return out;
}

enum {
    O_HOST = 1000, O_PORT, O_INDEX, O_THREADS, O_CLIENTS, O_RATE, O_DURATION, O_WARMUP, O_MAXREQ,
    O_TIMEOUT, O_FIELDS, O_SEED, O_SAMPLE, O_POOL, O_SIZE, O_BODIES, O_METHOD, O_PATH, O_PID,
    O_BG, O_JSON, O_MD, O_SVG, O_QUIET, O_A, O_B, O_ROUNDS, O_RDUR, O_HELP, O_DUMP
};

static int num_arg(const char *name, const char *v, double lo, double hi, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= lo && d <= hi)) {
        fprintf(stderr, "loadgen: --%s wants a number in [%g, %g], got '%s'\n", name, lo, hi, v);
        return -1;
    }
    *out = d;
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = "run";
    if (argc > 1 && argv[1][0] != '-') {
        cmd = argv[1];
        argv++;
        argc--;
    }
    if (!strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "compare")) {
        if (argc != 3) {
            fprintf(stderr, "usage: loadgen compare A.json B.json\n");
            return 2;
        }
        return fds_lgreport_compare(argv[1], argv[2]) ? 1 : 0;
    }
    if (strcmp(cmd, "run") && strcmp(cmd, "ab")) {
        fprintf(stderr, "loadgen: unknown command '%s'\n", cmd);
        usage(stderr);
        return 2;
    }
    int ab = !strcmp(cmd, "ab");
    opts o = {.host = "127.0.0.1", .port = 9200, .threads = 2, .clients = 8, .duration = 10,
              .warmup = ab ? 1 : 2, .timeout = 10, .fields = FDS_LGWORK_DEFAULT_FIELDS,
              .seed = 1, .sample_docs = LG_DEFAULT_SAMPLE_DOCS, .pool = LG_DEFAULT_POOL,
              .size = 10, .rounds = 3, .round_duration = 10};
    static const struct option longopts[] = {
        {"host", 1, 0, O_HOST},        {"port", 1, 0, O_PORT},
        {"index", 1, 0, O_INDEX},      {"threads", 1, 0, O_THREADS},
        {"clients", 1, 0, O_CLIENTS},  {"rate", 1, 0, O_RATE},
        {"duration", 1, 0, O_DURATION}, {"warmup", 1, 0, O_WARMUP},
        {"max-requests", 1, 0, O_MAXREQ}, {"timeout", 1, 0, O_TIMEOUT},
        {"fields", 1, 0, O_FIELDS},    {"seed", 1, 0, O_SEED},
        {"sample-docs", 1, 0, O_SAMPLE}, {"pool", 1, 0, O_POOL},
        {"size", 1, 0, O_SIZE},        {"bodies", 1, 0, O_BODIES},
        {"method", 1, 0, O_METHOD},    {"path", 1, 0, O_PATH},
        {"server-pid", 1, 0, O_PID},   {"background", 1, 0, O_BG},
        {"json", 1, 0, O_JSON},        {"md", 1, 0, O_MD},
        {"svg-prefix", 1, 0, O_SVG},   {"quiet", 0, 0, O_QUIET},
        {"a", 1, 0, O_A},              {"b", 1, 0, O_B},
        {"rounds", 1, 0, O_ROUNDS},    {"round-duration", 1, 0, O_RDUR},
        {"help", 0, 0, O_HELP},        {"dump-queries", 1, 0, O_DUMP},
        {0, 0, 0, 0}};
    int c;
    double d;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case O_HOST: o.host = optarg; break;
        case O_PORT: bad = num_arg("port", optarg, 1, 65535, &d); o.port = (int)d; break;
        case O_INDEX:
            o.index = optarg;
            if (o.nindices == LG_MAX_SIDES) {
                fprintf(stderr, "loadgen: at most %d --index\n", LG_MAX_SIDES);
                return 2;
            }
            o.indices[o.nindices++] = optarg;
            break;
        case O_THREADS:
            bad = num_arg("threads", optarg, 1, FDS_LG_MAX_THREADS, &d);
            o.threads = (int)d;
            break;
        case O_CLIENTS:
            bad = num_arg("clients", optarg, 1, FDS_LG_MAX_CLIENTS, &d);
            o.clients = (int)d;
            break;
        case O_RATE: bad = num_arg("rate", optarg, 0.001, 1e7, &o.rate); break;
        case O_DURATION: bad = num_arg("duration", optarg, 0.1, 86400, &o.duration); break;
        case O_WARMUP: bad = num_arg("warmup", optarg, 0, 86400, &o.warmup); break;
        case O_MAXREQ:
            bad = num_arg("max-requests", optarg, 0, 1e15, &d);
            o.max_requests = (unsigned long long)d;
            break;
        case O_TIMEOUT: bad = num_arg("timeout", optarg, 0.001, 3600, &o.timeout); break;
        case O_FIELDS: o.fields = optarg; break;
        case O_SEED: bad = num_arg("seed", optarg, 0, 1e18, &d); o.seed = (unsigned long long)d; break;
        case O_SAMPLE:
            bad = num_arg("sample-docs", optarg, 1, 10000, &d);
            o.sample_docs = (int)d;
            break;
        case O_POOL: bad = num_arg("pool", optarg, 1, 1e6, &d); o.pool = (long)d; break;
        case O_SIZE: bad = num_arg("size", optarg, 0, 10000, &d); o.size = (int)d; break;
        case O_BODIES: o.bodies = optarg; break;
        case O_METHOD: o.method = optarg; break;
        case O_PATH: o.path = optarg; break;
        case O_PID: bad = num_arg("server-pid", optarg, 1, 1e9, &d); o.server_pid = (long)d; break;
        case O_BG: o.background = optarg; break;
        case O_JSON: o.json = optarg; break;
        case O_MD: o.md = optarg; break;
        case O_SVG: o.svg_prefix = optarg; break;
        case O_QUIET: o.quiet = 1; break;
        case O_DUMP: o.dump_queries = optarg; break;
        case O_A: o.a = optarg; break;
        case O_B: o.b = optarg; break;
        case O_ROUNDS: bad = num_arg("rounds", optarg, 1, LG_MAX_ROUNDS, &d); o.rounds = (int)d; break;
        case O_RDUR:
            bad = num_arg("round-duration", optarg, 0.1, 86400, &o.round_duration);
            break;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (bad)
            return 2;
    }
    if (optind != argc) {
        fprintf(stderr, "loadgen: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    char msg[300];
    if (fds_httpc_resolve_loopback(o.host, o.port, &o.addr, &o.addrlen, msg, sizeof msg) != 0) {
        fprintf(stderr, "loadgen: %s\n", msg);
        return 2;
    }
    if (strchr(o.host, ':'))
        snprintf(o.host_header, sizeof o.host_header, "[%s]:%d", o.host, o.port);
    else
        snprintf(o.host_header, sizeof o.host_header, "%s:%d", o.host, o.port);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return ab ? cmd_ab(&o) : cmd_run(&o);
}
