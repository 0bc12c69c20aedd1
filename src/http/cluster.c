/*
 * cluster.c: the node and the cluster it is alone in -- GET /, cluster
 * health (with its wait_for_* conditions) and _cat/health, node stats from
 * /proc and _cat/nodes, and the _cat help list.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "admin_int.h"
#include "cat.h"
#include "fds_clock.h"
#include "fds_time.h"
#include "handlers.h"
#include "index_expr.h"
#include "node.h"
#include "request.h"
#include "response.h"
#include "search_stats.h"

#define NODE_ID FDS__NODE_ID
#define NODE_NAME FDS__NODE_NAME
#define CLUSTER_NAME FDS__CLUSTER_NAME
#define FDS_VERSION "0.1.0"


void fds__h_root(fds_req *r, fds_resp *o)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", NODE_NAME);
    cJSON_AddStringToObject(j, "cluster_name", CLUSTER_NAME);
    cJSON_AddStringToObject(j, "cluster_uuid", NODE_ID);
    cJSON *v = cJSON_AddObjectToObject(j, "version");
    /* Elasticsearch 8's keys (clients read number, build_flavor and the
     * tagline); no "distribution", which OpenSearch clients take for
     * OpenSearch */
    cJSON_AddStringToObject(v, "number", FDS__ES_VERSION);
    cJSON_AddStringToObject(v, "build_flavor", "default");
    cJSON_AddStringToObject(v, "build_type", "tar");
    cJSON_AddStringToObject(v, "build_hash", "fieldstore-" FDS_VERSION);
    cJSON_AddStringToObject(v, "build_date", FDS_BUILD_DATE);
    cJSON_AddBoolToObject(v, "build_snapshot", false);
    cJSON_AddStringToObject(v, "fieldstore_version", FDS_VERSION);
    cJSON_AddStringToObject(v, "lucene_version", "compatible subset");
    cJSON_AddStringToObject(v, "minimum_wire_compatibility_version", "7.17.0");
    cJSON_AddStringToObject(v, "minimum_index_compatibility_version", "7.0.0");
    cJSON_AddStringToObject(j, "tagline", "You Know, for Search");
    fds__resp_json(o, 200, j);
}

/* Longest wait of GET /_cluster/health for its wait_for_* conditions: a
 * waiting request holds one of the few HTTP worker threads, and on one node
 * the health changes only through other requests (create, delete, close,
 * settings), so a longer `timeout` is cut to this.  The poll interval is
 * how often the conditions are evaluated again meanwhile. */
#define HEALTH_WAIT_MAX_NS 1000000000LL
#define HEALTH_POLL_NS 20000000LL

enum { H_GREEN, H_YELLOW, H_RED };
static const char *const HEALTH_NAMES[] = {"green", "yellow", "red"};

/* What a health request waits for (ClusterHealthRequest). */
typedef struct health_want {
    int status;          /* H_*, -1: none */
    int nodes_op;        /* 0 none, or '=', '>', '<', 'G' (>=), 'L' (<=) */
    long nodes;
    long active;         /* wait_for_active_shards; -1 none, -2 all */
    int level;           /* 0 cluster, 1 indices, 2 shards */
} health_want;

static bool health_status_name(const char *v, int *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(v, HEALTH_NAMES[i])) {
            *out = i;
            return true;
        }
    return false;
}

/* wait_for_nodes: N, >=N, <=N, >N, <N, ge(N), le(N), gt(N), lt(N). */
static bool health_nodes(const char *v, health_want *w)
{
    static const struct { const char *p; int op; } ops[] = {
        {">=", 'G'}, {"<=", 'L'}, {">", '>'}, {"<", '<'},
        {"ge(", 'G'}, {"le(", 'L'}, {"gt(", '>'}, {"lt(", '<'}};
    int op = '=';
    bool paren = false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strncmp(v, ops[i].p, strlen(ops[i].p))) {
            op = ops[i].op;
            paren = ops[i].p[2] == '(';
            v += strlen(ops[i].p);
            break;
        }
    if (!(*v >= '0' && *v <= '9'))
        return false;
    char *end;
    long n = strtol(v, &end, 10);
    if (paren ? strcmp(end, ")") : *end != 0)
        return false;
    w->nodes_op = op;
    w->nodes = n;
    return true;
}

static bool health_nodes_ok(const health_want *w)
{
    const long have = 1;
    switch (w->nodes_op) {
    case '=': return have == w->nodes;
    case '>': return have > w->nodes;
    case '<': return have < w->nodes;
    case 'G': return have >= w->nodes;
    case 'L': return have <= w->nodes;
    default: return true;
    }
}

/* The health of the indices `expr` names, as JSON, and whether the wanted
 * conditions hold.  A concrete name that does not exist makes it red (it
 * may be created while the request waits), as Elasticsearch's
 * TransportClusterHealthAction. */
static cJSON *health_json(fds_req *r, const char *expr,
                          const fds_index_expr_opts *opts,
                          const health_want *w, bool *met, fds_err *e,
                          int *rc)
{
    fds_index **ixs = NULL;
    size_t n = 0;
    bool missing = false;
    *rc = fds_index_expr_resolve(r->store, expr, opts, &ixs, &n, e);
    if (*rc == FDS_ENOTFOUND) {
        missing = true;
        *rc = 0;
        fds_err_clear(e);
    } else if (*rc) {
        return NULL;
    }
    size_t failed = 0, yellow = 0, unassigned = 0, primaries = 0;
    cJSON *idx = w->level ? cJSON_CreateObject() : NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned u;
        const char *h = fds__index_health(ixs[i], &u);
        bool red = h[0] == 'r';
        failed += red;
        yellow += h[0] == 'y';
        uint32_t nsh = fds_index_nshards(ixs[i]);
        unassigned += u;
        primaries += red ? 0 : nsh;
        if (!idx)
            continue;
        fds_index_settings set;
        fds_index_get_settings(ixs[i], &set);
        cJSON *x = cJSON_AddObjectToObject(idx, fds_index_name(ixs[i]));
        cJSON_AddStringToObject(x, "status", h);
        cJSON_AddNumberToObject(x, "number_of_shards", nsh);
        cJSON_AddNumberToObject(x, "number_of_replicas", set.number_of_replicas);
        cJSON_AddNumberToObject(x, "active_primary_shards", red ? 0 : nsh);
        cJSON_AddNumberToObject(x, "active_shards", red ? 0 : nsh);
        cJSON_AddNumberToObject(x, "relocating_shards", 0);
        cJSON_AddNumberToObject(x, "initializing_shards", 0);
        cJSON_AddNumberToObject(x, "unassigned_shards", u);
        cJSON *sh = w->level == 2 ? cJSON_AddObjectToObject(x, "shards") : NULL;
        for (uint32_t k = 0; sh && k < nsh; k++) {
            char num[16];
            snprintf(num, sizeof num, "%u", k);
            cJSON *s0 = cJSON_AddObjectToObject(sh, num);
            cJSON_AddStringToObject(s0, "status", h);
            cJSON_AddBoolToObject(s0, "primary_active", !red);
            cJSON_AddNumberToObject(s0, "active_shards", !red);
            cJSON_AddNumberToObject(s0, "relocating_shards", 0);
            cJSON_AddNumberToObject(s0, "initializing_shards", 0);
            cJSON_AddNumberToObject(s0, "unassigned_shards", u / nsh);
        }
    }
    fds_index_expr_free(ixs, n);
    int status = failed || missing ? H_RED : yellow ? H_YELLOW : H_GREEN;
    /* named indices are waited for until they exist (getWaitCount) */
    *met = !missing && (w->status < 0 || status <= w->status) && health_nodes_ok(w) &&
           (w->active == -1 || (w->active == -2 ? unassigned == 0 && !missing
                                                : (long)primaries >= w->active));
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "cluster_name", CLUSTER_NAME);
    cJSON_AddStringToObject(j, "status", HEALTH_NAMES[status]);
    cJSON_AddBoolToObject(j, "timed_out", 0);
    cJSON_AddNumberToObject(j, "number_of_nodes", 1);
    cJSON_AddNumberToObject(j, "number_of_data_nodes", 1);
    cJSON_AddNumberToObject(j, "active_primary_shards", (double)primaries);
    cJSON_AddNumberToObject(j, "active_shards", (double)primaries);
    cJSON_AddNumberToObject(j, "relocating_shards", 0);
    cJSON_AddNumberToObject(j, "initializing_shards", 0);
    cJSON_AddNumberToObject(j, "unassigned_shards", (double)unassigned);
    cJSON_AddNumberToObject(j, "delayed_unassigned_shards", 0);
    cJSON_AddNumberToObject(j, "number_of_pending_tasks", 0);
    cJSON_AddNumberToObject(j, "number_of_in_flight_fetch", 0);
    cJSON_AddNumberToObject(j, "task_max_waiting_in_queue_millis", 0);
    size_t copies = primaries + unassigned;
    cJSON_AddNumberToObject(j, "active_shards_percent_as_number",
                            copies ? 100.0 * (double)primaries / (double)copies
                                   : 100.0);
    if (idx)
        cJSON_AddItemToObject(j, "indices", idx);
    return j;
}

static const char *const HEALTH_PARAMS[] = {
    "level", "local", "wait_for_status", "wait_for_nodes", "wait_for_events",
    "wait_for_active_shards", "wait_for_no_relocating_shards",
    "wait_for_no_initializing_shards", "return_200_for_cluster_health_timeout",
    "expand_wildcards", "ignore_unavailable", "allow_no_indices", NULL};

/* GET /_cluster/health[/{index}]: level, wait_for_status, wait_for_nodes,
 * wait_for_active_shards (a number or all), timeout (cut to
 * HEALTH_WAIT_MAX_NS), index expressions (default: open, closed and hidden
 * indices, as ClusterHealthRequest's IndicesOptions.lenientExpandHidden).
 * wait_for_events, wait_for_no_relocating_shards and
 * wait_for_no_initializing_shards hold at once on one node (no pending
 * cluster tasks, no shard moves).  A wait that times out answers 200 with
 * timed_out true, as Elasticsearch 8 does. */
static void health_answer(fds_req *r, fds_resp *o)
{
    health_want w = {.status = -1, .active = -1};
    const char *v;
    if ((v = fds__req_param(r, "level"))) {
        static const char *const lv[] = {"cluster", "indices", "shards"};
        w.level = -1;
        for (int i = 0; i < 3; i++)
            if (!strcmp(v, lv[i]))
                w.level = i;
        if (w.level < 0)
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "No enum constant for [level]: [%s] (cluster, "
                                   "indices or shards)", v);
    }
    if ((v = fds__req_param(r, "wait_for_status")) && !health_status_name(v, &w.status))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "unknown cluster health status [%s]", v);
    if ((v = fds__req_param(r, "wait_for_nodes")) && *v && !health_nodes(v, &w))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "failed to parse [wait_for_nodes] with value [%s]", v);
    if ((v = fds__req_param(r, "wait_for_active_shards"))) {
        char *end;
        long a = strtol(v, &end, 10);
        if (!strcmp(v, "all"))
            w.active = -2;
        else if (end != v && !*end && a >= 0)
            w.active = a;
        else
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "failed to parse [wait_for_active_shards] with "
                                   "value [%s]: a number or all", v);
    }
    static const char *const events[] = {"immediate", "urgent", "high",
                                         "normal", "low", "languid"};
    if ((v = fds__req_param(r, "wait_for_events"))) {
        size_t i = 0;
        while (i < 6 && strcmp(v, events[i]))
            i++;
        if (i == 6)
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "No enum constant for [wait_for_events]: [%s]", v);
    }
    static const char *const flags[] = {"wait_for_no_relocating_shards",
                                        "wait_for_no_initializing_shards", "local"};
    for (size_t i = 0; i < 3; i++)
        if ((v = fds__req_param(r, flags[i])) && *v && strcmp(v, "true") &&
            strcmp(v, "false"))
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "Failed to parse value [%s] as only [true] or "
                                   "[false] are allowed.", v);
    if ((v = fds__req_param(r, "return_200_for_cluster_health_timeout")) &&
        strcmp(v, "true") && *v)
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "[return_200_for_cluster_health_timeout] can only be "
                               "true: a timed out health request answers 200, as "
                               "in Elasticsearch 8");
    int64_t wait_ns = 30000000000LL;
    if ((v = fds__req_param(r, "timeout")) && !fds_time_value_ns(v, false, &wait_ns))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "failed to parse setting [timeout] with value [%s] "
                               "as a time value: unit is missing or unrecognized", v);
    if (wait_ns > HEALTH_WAIT_MAX_NS)
        wait_ns = HEALTH_WAIT_MAX_NS;
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true,
                                .expand_closed = true, .expand_hidden = true};
    if (fds_index_expr_opts_read(fds__admin_param_cb, r, &opts, &e))
        return fds__resp_error(o, &e);
    const char *expr = r->nseg > 2 ? r->seg[2] : NULL;
    uint64_t t0 = fds_mono_ns();
    for (;;) {
        bool met;
        int rc;
        cJSON *j = health_json(r, expr, &opts, &w, &met, &e, &rc);
        if (!j)
            return rc == FDS_ENOMEM ? fds__resp_errorf(o, 500, "out_of_memory_error",
                                                      "out of memory")
                                    : fds__resp_error(o, &e);
        int64_t spent = (int64_t)(fds_mono_ns() - t0);
        if (met || spent >= wait_ns) {
            if (!met)
                cJSON_ReplaceItemInObject(j, "timed_out", cJSON_CreateTrue());
            return fds__resp_json(o, 200, j);
        }
        cJSON_Delete(j);
        int64_t nap = wait_ns - spent < HEALTH_POLL_NS ? wait_ns - spent : HEALTH_POLL_NS;
        struct timespec ts = {nap / 1000000000LL, nap % 1000000000LL};
        nanosleep(&ts, NULL);
    }
}

void fds__h_cluster_health(fds_req *r, fds_resp *o)
{
    if (fds__req_check_params(r, o, HEALTH_PARAMS))
        health_answer(r, o);
}

/* A number of the cluster health answer `j`, as cell text. */
static char *health_cell(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return fds__fmt_u64(cJSON_IsNumber(v) && v->valuedouble > 0 ? (uint64_t)v->valuedouble
                                                           : 0);
}

/* _cat/health is the cluster health answer as a table (Elasticsearch's
 * RestHealthAction renders its ClusterHealthResponse the same way), so
 * the two always agree. */
void fds__h_cat_health(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {
        "epoch", "timestamp", "cluster", "status", "node.total", "node.data",
        "shards", "pri", "relo", "init", "unassign", "unassign.pri",
        "pending_tasks", "max_task_wait_time", "active_shards_percent"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    static const char *const params[] = {"format", "h", "v", "s", "ts", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    fds_resp h = {0};
    health_answer(r, &h);
    cJSON *j = h.body ? cJSON_ParseWithLength(h.body, h.len) : NULL;
    free(h.body);
    if (!j)
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    char **names = NULL;
    size_t nindex = 0;
    fds_store_list_indices(r->store, &names, &nindex);
    for (size_t i = 0; i < nindex; i++)
        free(names[i]);
    free(names);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *pri = cJSON_GetObjectItemCaseSensitive(j, "active_primary_shards");
    const cJSON *pct = cJSON_GetObjectItemCaseSensitive(j, "active_shards_percent_as_number");
    size_t active_pri = cJSON_IsNumber(pri) ? (size_t)pri->valuedouble : 0;
    char pct_text[16];
    snprintf(pct_text, sizeof pct_text, "%.1f%%", cJSON_IsNumber(pct) ? pct->valuedouble
                                                                      : 100.0);
    char *row[sizeof cols / sizeof cols[0]];
    fds__cat_time(&row[0], &row[1]);
    row[2] = strdup(CLUSTER_NAME);
    row[3] = strdup(cJSON_IsString(st) ? st->valuestring : "red");
    row[4] = health_cell(j, "number_of_nodes");
    row[5] = health_cell(j, "number_of_data_nodes");
    row[6] = health_cell(j, "active_shards");
    row[7] = health_cell(j, "active_primary_shards");
    row[8] = health_cell(j, "relocating_shards");
    row[9] = health_cell(j, "initializing_shards");
    row[10] = health_cell(j, "unassigned_shards");
    row[11] = fds__fmt_u64(nindex > active_pri ? nindex - active_pri : 0);
    row[12] = fds__fmt_u64(0);
    row[13] = strdup("-");
    row[14] = strdup(pct_text);
    cJSON_Delete(j);
    /* RestHealthAction declares node.total .. active_shards_percent
     * "text-align:right": with ?v the one row's cells stand right under
     * their headers (the renderer aligns left, so they are padded here;
     * without ?v, or as JSON, a cell is as wide as its text) */
    const char *fmt = fds__req_param(r, "format");
    if (fds__req_param_bool(r, "v", false) && !(fmt && !strcmp(fmt, "json")))
        for (size_t c = 4; c < ncol; c++) {
            char *p = NULL;
            if (row[c] && asprintf(&p, "%*s", (int)strlen(cols[c]), row[c]) >= 0) {
                free(row[c]);
                row[c] = p;
            }
        }
    /* ts=false leaves the epoch and timestamp columns out */
    bool ts = fds__req_param_bool(r, "ts", true);
    char **rows[1] = {ts ? row : row + 2};
    fds__cat_render(r, o, ts ? cols : cols + 2, ts ? ncol : ncol - 2, rows, 1);
    for (size_t c = 0; c < ncol; c++)
        free(row[c]);
}

/* ---- node statistics from /proc -------------------------------------------- */

static void loadavg(double out[3])
{
    out[0] = out[1] = out[2] = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &out[0], &out[1], &out[2]) != 3)
            out[0] = out[1] = out[2] = 0;
        fclose(f);
    }
}

static void meminfo(uint64_t *total, uint64_t *avail)
{
    *total = *avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return;
    char line[256];
    unsigned long long v;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemTotal: %llu kB", &v) == 1)
            *total = v * 1024;
        else if (sscanf(line, "MemAvailable: %llu kB", &v) == 1)
            *avail = v * 1024;
    }
    fclose(f);
}

/* Process CPU time in ms and the server's CPU% since the previous call
 * (100% = one core, top(1)'s scale, as _cat/nodes shows it). */
static void process_cpu(uint64_t *total_ms, double *percent)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t last_cpu_ms, last_wall_ms;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t cpu = (uint64_t)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 +
                   (uint64_t)ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
    uint64_t wall = (uint64_t)((long long)fds_mono_us() / 1000);
    pthread_mutex_lock(&mu);
    *percent = 0;
    if (last_wall_ms && wall > last_wall_ms)
        *percent = 100.0 * (double)(cpu - last_cpu_ms) / (double)(wall - last_wall_ms);
    last_cpu_ms = cpu;
    last_wall_ms = wall;
    pthread_mutex_unlock(&mu);
    *total_ms = cpu;
}

/* The machine's busy share of all CPUs since the previous call, 0..100, as
 * Elasticsearch's os.cpu.percent (OsProbe.getSystemCpuPercent: the recent
 * system CPU load of the whole machine, 100 = every core busy).  From the
 * `cpu` line of /proc/stat: busy = user + nice + system + irq + softirq +
 * steal over those plus idle + iowait; 0 on the first call. */
static int os_cpu_percent(void)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static unsigned long long last_busy, last_all;
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 4)
        return 0;
    unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    unsigned long long all = busy + v[3] + v[4];
    int pct = 0;
    pthread_mutex_lock(&mu);
    if (last_all && all > last_all && busy >= last_busy)
        pct = (int)(100.0 * (double)(busy - last_busy) / (double)(all - last_all) + 0.5);
    last_busy = busy;
    last_all = all;
    pthread_mutex_unlock(&mu);
    return pct;
}

/* The CPUs this process may use (os.available_processors), at least 1. */
static long ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* Node stats metrics Elasticsearch knows; we fill os, process, fs and
 * indices. */
static const char *const NODE_METRICS[] = {
    "adaptive_selection", "allocations", "breaker", "discovery", "fs", "http",
    "indexing_pressure", "indices", "ingest", "jvm", "os", "process",
    "repositories", "script", "script_cache", "thread_pool", "transport", NULL};

/* nodes.{id}.indices: the sections `metrics` asks for, summed over every
 * index of the node (as Elasticsearch sums its shards). */
static cJSON *node_indices_json(fds_store *store, const char *metrics)
{
    fds_index_stats sum = {0};
    fds__search_sum ss = {0};
    char **names = NULL;
    size_t n = 0;
    fds_store_list_indices(store, &names, &n);
    for (size_t i = 0; i < n; i++) {
        fds_index *ix;
        if (fds_store_get_index(store, names[i], &ix, NULL) == 0) {
            fds_index_stats st;
            fds_index_stats_get(ix, &st);
            sum.docs_count += st.docs_count;
            sum.docs_deleted += st.docs_deleted;
            sum.segments += st.segments;
            sum.store_bytes += st.store_bytes;
            sum.stored_fields_bytes += st.stored_fields_bytes;
            sum.postings_bytes += st.postings_bytes;
            sum.other_bytes += st.other_bytes;
            sum.raw_source_bytes += st.raw_source_bytes;
            fds__search_sum_add(&ss, fds_index_search_stats(ix));
            fds_index_release(ix);
        }
        free(names[i]);
    }
    free(names);
    return fds__index_stats_json(&sum, &ss, metrics);
}

void fds__h_nodes_stats(fds_req *r, fds_resp *o)
{
    /* /_nodes/stats[/{metric}[/{index_metric}]] or
     * /_nodes/{node_id}/stats[/{metric}[/{index_metric}]] */
    unsigned at = !strcmp(r->seg[1], "stats") ? 2 : 3;
    const char *metrics = r->nseg > at ? r->seg[at] : NULL;
    const char *imetrics = r->nseg > at + 1 ? r->seg[at + 1] : NULL;
    if (!fds__metrics_check(r, o, metrics, NODE_METRICS) ||
        !fds__metrics_check(r, o, imetrics, FDS__INDEX_METRICS))
        return;
    double la[3];
    loadavg(la);
    uint64_t total, avail, cpu_ms;
    meminfo(&total, &avail);
    double pct;
    process_cpu(&cpu_ms, &pct);
    cJSON *j = cJSON_CreateObject();
    cJSON *nn = cJSON_AddObjectToObject(j, "_nodes");
    cJSON_AddNumberToObject(nn, "total", 1);
    cJSON_AddNumberToObject(nn, "successful", 1);
    cJSON_AddNumberToObject(nn, "failed", 0);
    cJSON_AddStringToObject(j, "cluster_name", CLUSTER_NAME);
    cJSON *nodes = cJSON_AddObjectToObject(j, "nodes");
    cJSON *n = cJSON_AddObjectToObject(nodes, NODE_ID);
    cJSON_AddNumberToObject(n, "timestamp", (double)time(NULL) * 1000);
    cJSON_AddStringToObject(n, "name", NODE_NAME);
    cJSON_AddStringToObject(n, "host", "127.0.0.1");
    cJSON_AddStringToObject(n, "ip", "127.0.0.1");
    if (fds__metric_on(metrics, "indices"))
        cJSON_AddItemToObject(n, "indices", node_indices_json(r->store, imetrics));
    if (fds__metric_on(metrics, "os")) {
        cJSON *os = cJSON_AddObjectToObject(n, "os");
        cJSON *oc = cJSON_AddObjectToObject(os, "cpu");
        cJSON_AddNumberToObject(oc, "percent", os_cpu_percent());
        cJSON *l = cJSON_AddObjectToObject(oc, "load_average");
        cJSON_AddNumberToObject(l, "1m", la[0]);
        cJSON_AddNumberToObject(l, "5m", la[1]);
        cJSON_AddNumberToObject(l, "15m", la[2]);
        cJSON *mem = cJSON_AddObjectToObject(os, "mem");
        cJSON_AddNumberToObject(mem, "total_in_bytes", (double)total);
        cJSON_AddNumberToObject(mem, "free_in_bytes", (double)avail);
        cJSON_AddNumberToObject(mem, "used_in_bytes", (double)(total - avail));
        cJSON_AddNumberToObject(mem, "used_percent",
                                total ? (int)(100.0 * (double)(total - avail) / (double)total) : 0);
    }
    if (fds__metric_on(metrics, "fs"))
        cJSON_AddItemToObject(n, "fs", fds__node_fs_json(r->store));
    if (fds__metric_on(metrics, "process")) {
        cJSON *p = cJSON_AddObjectToObject(n, "process");
        cJSON_AddNumberToObject(p, "timestamp", (double)time(NULL) * 1000);
        cJSON_AddNumberToObject(p, "id", (double)getpid());
        cJSON *pc = cJSON_AddObjectToObject(p, "cpu");
        /* Elasticsearch's scale (ProcessProbe.getProcessCpuPercent: the
         * process's recent share of every core, 100 = all busy) */
        cJSON_AddNumberToObject(pc, "percent", (int)(pct / (double)ncpu() + 0.5));
        cJSON_AddNumberToObject(pc, "total_in_millis", (double)cpu_ms);
    }
    fds__resp_json(o, 200, j);
}

void fds__h_cat_nodes(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {"ip", "heap.percent", "ram.percent", "cpu",
                                       "load_1m", "load_5m", "load_15m",
                                       "node.role", "master", "name", "pid"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    double la[3];
    loadavg(la);
    uint64_t total, avail, cpu_ms;
    meminfo(&total, &avail);
    double pct;
    process_cpu(&cpu_ms, &pct);
    char *row[11];
    char buf[11][32];
    snprintf(buf[0], 32, "127.0.0.1");
    snprintf(buf[1], 32, "0");
    snprintf(buf[2], 32, "%d", total ? (int)(100.0 * (double)(total - avail) / (double)total) : 0);
    snprintf(buf[3], 32, "%d", (int)(pct + 0.5));
    snprintf(buf[4], 32, "%.2f", la[0]);
    snprintf(buf[5], 32, "%.2f", la[1]);
    snprintf(buf[6], 32, "%.2f", la[2]);
    snprintf(buf[7], 32, "dim");
    snprintf(buf[8], 32, "*");
    snprintf(buf[9], 32, NODE_NAME);
    snprintf(buf[10], 32, "%d", (int)getpid());
    for (size_t i = 0; i < ncol; i++)
        row[i] = buf[i];
    char **rows[1] = {row};
    fds__cat_render(r, o, cols, ncol, rows, 1);
}

/* GET /_cat: the cat endpoints, one per line, as Elasticsearch lists them. */
void fds__h_cat_help(fds_req *r, fds_resp *o)
{
    (void)r;
    static const char text[] = "=^.^=\n/_cat/indices\n/_cat/indices/{index}\n"
                               "/_cat/segments\n/_cat/segments/{index}\n"
                               "/_cat/shards\n/_cat/shards/{index}\n"
                               "/_cat/count\n/_cat/count/{index}\n/_cat/health\n"
                               "/_cat/nodes\n/_cat/allocation\n";
    fds__resp_raw(o, 200, strdup(text), sizeof text - 1, "text/plain; charset=UTF-8");
}
