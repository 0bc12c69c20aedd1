/*
 * lgcmd_nodes.c: the nodes of a cluster as loadgen sees them -- each node
 * checked before the run (GET /: refused, 401, a certificate that does not
 * verify each get a sentence naming the node), the report's "cluster"
 * object (the cluster's name, its nodes, each index's index.codec as every
 * node reports it), the server CPU of every node sampled from its
 * _nodes/stats during a measurement, and the rule that marks a measurement
 * in which a node failed, so that it is reported but not averaged in.
 *
 * Server CPU per node, from GET /_nodes/_local/stats/os,process (each node
 * answers for itself, as Elasticsearch's `_local` filter says):
 *  - process.cpu.percent and os.cpu.percent as the node reports them
 *    (Elasticsearch's scale: 100 = every core of that node busy), the mean
 *    of the samples taken once a second in the measured window;
 *  - cpu_percent: process.cpu.total_in_millis at the first and the last
 *    sample of the window, (delta ms / wall ms) x 100, on loadgen's scale
 *    (100 = one core).  Exact to the millisecond, where the percent fields
 *    are whole numbers over an interval the node chooses; when a node has
 *    no total_in_millis, process.cpu.percent x os.available_processors.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fds_httpc.h"
#include "fds_strbuf.h"
#include "lgcmd.h"

#define LG_SAMPLE_TIMEOUT_MS 2000 /* one _nodes/stats sample */
#define LG_SAMPLER_POLL_NS 50000000u /* the sampler checks for a stop every 50 ms */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GET path of t as JSON (2xx only), or NULL. */
static cJSON *node_get(const fds_httpc_target *t, const char *path, int timeout_ms)
{
    int status = 0;
    char *body = NULL;
    if (fds_httpc_request(t, "GET", path, NULL, timeout_ms, &status, &body) != 0)
        return NULL;
    cJSON *d = status >= 200 && status <= 299 ? cJSON_Parse(body) : NULL;
    free(body);
    return d;
}

static void copy_str(char *dst, size_t cap, const cJSON *v)
{
    snprintf(dst, cap, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* The first node object of a _nodes answer. */
static const cJSON *first_node(const cJSON *doc)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    return cJSON_IsObject(nodes) ? nodes->child : NULL;
}

int fds__lgcmd_probe(const fds__lgcmd_opts *o, fds__lgcmd_node *nodes)
{
    int bad = 0;
    for (int k = 0; k < o->ntargets; k++) {
        const fds_httpc_target *t = &o->targets[k];
        fds__lgcmd_node *n = &nodes[k];
        memset(n, 0, sizeof *n);
        int status = 0;
        char *body = NULL;
        char why[600];
        if (fds_httpc_request_why(t, "GET", "/", NULL, LG_PROBE_TIMEOUT_MS, &status, &body, why,
                                  sizeof why) != 0) {
            fprintf(stderr, "loadgen: node %d of %d does not answer: %s\n", k + 1, o->ntargets,
                    why);
            bad++;
            continue;
        }
        if (status == 401 || status == 403) {
            fprintf(stderr,
                    "loadgen: node %s answered GET / with HTTP %d %s: %s\n", t->url, status,
                    status == 401 ? "Unauthorized" : "Forbidden",
                    o->auth[0] ? "the credentials were refused (check --user and its password, "
                                 "or the API key)"
                               : "it requires credentials: give --user NAME with "
                                 "--password-file FILE or $" LG_PASSWORD_ENV ", or --api-key");
            free(body);
            bad++;
            continue;
        }
        if (status < 200 || status > 299) {
            fprintf(stderr, "loadgen: node %s answered GET / with HTTP %d: %.200s\n", t->url,
                    status, body);
            free(body);
            bad++;
            continue;
        }
        cJSON *root = cJSON_Parse(body);
        free(body);
        copy_str(n->name, sizeof n->name, cJSON_GetObjectItemCaseSensitive(root, "name"));
        copy_str(n->cluster, sizeof n->cluster,
                 cJSON_GetObjectItemCaseSensitive(root, "cluster_name"));
        copy_str(n->version, sizeof n->version,
                 cJSON_GetObjectItemCaseSensitive(
                     cJSON_GetObjectItemCaseSensitive(root, "version"), "number"));
        cJSON_Delete(root);
        cJSON *info = node_get(t, "/_nodes/_local/os", LG_INFO_TIMEOUT_MS);
        const cJSON *np = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(first_node(info), "os"), "available_processors");
        n->processors = cJSON_IsNumber(np) && np->valuedouble > 0 ? np->valuedouble : 0;
        cJSON_Delete(info);
    }
    return bad ? 1 : 0;
}

/* index.codec of `index` as node t reports it: the setting, "default"
 * without one, NULL (JSON null) when the node does not answer. */
static cJSON *node_codec(const fds_httpc_target *t, const char *index)
{
    char path[512];
    snprintf(path, sizeof path, "/%s/_settings", index);
    cJSON *st = node_get(t, path, LG_INFO_TIMEOUT_MS);
    cJSON *idx = cJSON_GetObjectItemCaseSensitive(st, index);
    if (!idx && st)
        idx = st->child;
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(idx, "settings"), "index");
    cJSON *out;
    if (!set)
        out = cJSON_CreateNull();
    else {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(set, "codec");
        out = cJSON_CreateString(cJSON_IsString(c) ? c->valuestring : "default");
    }
    cJSON_Delete(st);
    return out;
}

cJSON *fds__lgcmd_cluster_json(const fds__lgcmd_opts *o, const fds__lgcmd_node *nodes,
                               const char *const *indices, int n)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", nodes[0].cluster);
    int same = 1;
    for (int k = 1; k < o->ntargets; k++)
        same &= !strcmp(nodes[k].cluster, nodes[0].cluster);
    cJSON_AddBoolToObject(c, "nodes_agree_on_name", same);
    if (!same)
        fprintf(stderr, "loadgen: note: the nodes report different cluster names\n");
    cJSON *arr = cJSON_AddArrayToObject(c, "nodes");
    for (int k = 0; k < o->ntargets; k++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "url", o->targets[k].url);
        cJSON_AddStringToObject(e, "name", nodes[k].name);
        cJSON_AddStringToObject(e, "cluster_name", nodes[k].cluster);
        cJSON_AddStringToObject(e, "version", nodes[k].version);
        if (nodes[k].processors > 0)
            cJSON_AddNumberToObject(e, "available_processors", nodes[k].processors);
        else
            cJSON_AddNullToObject(e, "available_processors");
        cJSON_AddItemToArray(arr, e);
    }
    cJSON *codecs = cJSON_AddObjectToObject(c, "index_codec");
    for (int i = 0; i < n; i++) {
        if (!indices[i] || cJSON_GetObjectItemCaseSensitive(codecs, indices[i]))
            continue;
        cJSON *per = cJSON_AddObjectToObject(codecs, indices[i]);
        for (int k = 0; k < o->ntargets; k++)
            cJSON_AddItemToObject(per, o->targets[k].url, node_codec(&o->targets[k], indices[i]));
    }
    return c;
}

/* ---- the sampler ----------------------------------------------------------- */

typedef struct node_samples {
    int n;                       /* percent samples in the window */
    int os_n;
    double proc_sum, os_sum;     /* sums of process.cpu.percent, os.cpu.percent */
    int have0, have1;
    double ms0, t0, ms1, t1;     /* total_in_millis and when, first and last sample */
    int failed;                  /* samples not answered */
} node_samples;

struct fds__lgcmd_sampler {
    pthread_t th;
    const fds__lgcmd_opts *o;
    const fds__lgcmd_node *nodes;
    double start, end;           /* the window, mono_s() */
    atomic_int stop;
    node_samples ns[FDS_LG_MAX_TARGETS];
};

/* One sample of every node; `baseline` 1: only total_in_millis is kept
 * (its percents cover the time before the window). */
static void sample_all(fds__lgcmd_sampler *s, int baseline)
{
    for (int k = 0; k < s->o->ntargets; k++) {
        node_samples *ns = &s->ns[k];
        double t0 = mono_s();
        cJSON *d = node_get(&s->o->targets[k], "/_nodes/_local/stats/os,process",
                            LG_SAMPLE_TIMEOUT_MS);
        double t = (t0 + mono_s()) / 2;
        const cJSON *node = first_node(d);
        const cJSON *pc = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(node, "process"), "cpu");
        const cJSON *oc = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(node, "os"), "cpu");
        const cJSON *pp = cJSON_GetObjectItemCaseSensitive(pc, "percent");
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(oc, "percent");
        const cJSON *ms = cJSON_GetObjectItemCaseSensitive(pc, "total_in_millis");
        if (!node)
            ns->failed++;
        if (cJSON_IsNumber(ms)) {
            if (baseline || !ns->have0) {
                ns->ms0 = ms->valuedouble;
                ns->t0 = t;
                ns->have0 = 1;
            } else {
                ns->ms1 = ms->valuedouble;
                ns->t1 = t;
                ns->have1 = 1;
            }
        }
        if (!baseline && cJSON_IsNumber(pp)) {
            ns->proc_sum += pp->valuedouble;
            ns->n++;
        }
        if (!baseline && cJSON_IsNumber(op)) {
            ns->os_sum += op->valuedouble;
            ns->os_n++;
        }
        cJSON_Delete(d);
    }
}

/* Sleep until mono_s() >= t or a stop; 1 if stopped. */
static int wait_until(fds__lgcmd_sampler *s, double t)
{
    for (;;) {
        if (atomic_load(&s->stop))
            return 1;
        double left = t - mono_s();
        if (left <= 0)
            return 0;
        double step = left < LG_SAMPLER_POLL_NS / 1e9 ? left : LG_SAMPLER_POLL_NS / 1e9;
        struct timespec ts = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static void *sampler_main(void *arg)
{
    fds__lgcmd_sampler *s = arg;
    if (wait_until(s, s->start))
        return NULL;
    sample_all(s, 1);
    /* once a LG_NODE_SAMPLE_S, and at the window's end (a short window
     * still gets its two total_in_millis readings) */
    for (int k = 1;; k++) {
        double at = s->start + k * LG_NODE_SAMPLE_S;
        if (at > s->end - 0.05)
            at = s->end;
        if (wait_until(s, at))
            break;
        sample_all(s, 0);
        if (at >= s->end)
            break;
    }
    return NULL;
}

fds__lgcmd_sampler *fds__lgcmd_sampler_start(const fds__lgcmd_opts *o,
                                             const fds__lgcmd_node *nodes, double warmup,
                                             double duration)
{
    fds__lgcmd_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->o = o;
    s->nodes = nodes;
    s->start = mono_s() + warmup;
    s->end = s->start + duration;
    if (pthread_create(&s->th, NULL, sampler_main, s) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

void fds__lgcmd_sampler_finish(fds__lgcmd_sampler *s, const fds__lgcmd_opts *o, cJSON *side)
{
    if (!s)
        return;
    atomic_store(&s->stop, 1);
    pthread_join(s->th, NULL);
    cJSON *arr = cJSON_AddArrayToObject(side, "nodes");
    double sum_cpu = 0, sum_proc = 0, sum_os = 0;
    int all_cpu = 1, all_proc = 1, all_os = 1;
    for (int k = 0; k < o->ntargets; k++) {
        const node_samples *ns = &s->ns[k];
        double proc = ns->n ? ns->proc_sum / ns->n : NAN;
        double os = ns->os_n ? ns->os_sum / ns->os_n : NAN;
        double cpu = NAN;
        if (ns->have0 && ns->have1 && ns->t1 > ns->t0 && ns->ms1 >= ns->ms0)
            cpu = (ns->ms1 - ns->ms0) / ((ns->t1 - ns->t0) * 1000) * 100;
        else if (!isnan(proc) && s->nodes[k].processors > 0)
            cpu = proc * s->nodes[k].processors;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "url", o->targets[k].url);
        cJSON_AddStringToObject(e, "name", s->nodes[k].name);
        fds__lgcmd_num_or_null(e, "cpu_percent", cpu);
        fds__lgcmd_num_or_null(e, "process_cpu_percent", proc);
        fds__lgcmd_num_or_null(e, "os_cpu_percent", os);
        cJSON_AddNumberToObject(e, "samples", ns->n);
        cJSON_AddNumberToObject(e, "failed_samples", ns->failed);
        cJSON_AddItemToArray(arr, e);
        all_cpu &= !isnan(cpu);
        all_proc &= !isnan(proc);
        all_os &= !isnan(os);
        sum_cpu += isnan(cpu) ? 0 : cpu;
        sum_proc += isnan(proc) ? 0 : proc;
        sum_os += isnan(os) ? 0 : os;
    }
    cJSON *sum = cJSON_AddObjectToObject(side, "nodes_cpu");
    fds__lgcmd_num_or_null(sum, "cpu_percent", all_cpu ? sum_cpu : NAN);
    fds__lgcmd_num_or_null(sum, "process_cpu_percent", all_proc ? sum_proc : NAN);
    fds__lgcmd_num_or_null(sum, "os_cpu_percent", all_os ? sum_os : NAN);
    if (o->server_pid <= 0) {
        /* the server CPU of the side is the cluster's */
        const cJSON *qps = cJSON_GetObjectItemCaseSensitive(side, "qps");
        double q = cJSON_IsNumber(qps) ? qps->valuedouble : NAN;
        cJSON_DeleteItemFromObjectCaseSensitive(side, "cpu_percent");
        cJSON_DeleteItemFromObjectCaseSensitive(side, "qps_per_cpu_percent");
        fds__lgcmd_num_or_null(side, "cpu_percent", all_cpu ? sum_cpu : NAN);
        fds__lgcmd_num_or_null(side, "qps_per_cpu_percent",
                        all_cpu && sum_cpu > 0 && !isnan(q) ? q / sum_cpu : NAN);
    }
    free(s);
}

/* ---- failed nodes ---------------------------------------------------------- */

char *fds__lgcmd_mark_reason(const fds__lgcmd_opts *o, const fds_lg_result *r)
{
    size_t cap = 256 + (size_t)r->ntargets * (FDS_LG_ERROR_TEXT + 400);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t len = 0;
    out[0] = '\0';
    for (int k = 0; k < r->ntargets; k++) {
        const fds_lg_target_result *t = &r->targets[k];
        uint64_t broken = t->err_connect + t->err_short_read + t->err_timeout + t->err_protocol;
        if (broken == 0 && t->ok > 0)
            continue;
        int n;
        if (broken)
            n = snprintf(out + len, cap - len,
                         "%snode %s failed: %llu failed connects, %llu cut short, %llu timeouts, "
                         "%llu malformed answers (first: %s)",
                         len ? "; " : "", o->targets[k].url,
                         (unsigned long long)t->err_connect,
                         (unsigned long long)t->err_short_read,
                         (unsigned long long)t->err_timeout, (unsigned long long)t->err_protocol,
                         t->first_error[0] ? t->first_error : "no reason recorded");
        else if (t->err_status)
            n = snprintf(out + len, cap - len, "%snode %s: no request succeeded (HTTP %d)",
                         len ? "; " : "", o->targets[k].url, t->last_status);
        else
            n = snprintf(out + len, cap - len, "%snode %s: no request was answered",
                         len ? "; " : "", o->targets[k].url);
        if (n > 0 && (size_t)n < cap - len)
            len += (size_t)n;
    }
    if (!len) {
        free(out);
        return NULL;
    }
    return out;
}

cJSON *fds__lgcmd_targets_json(const fds__lgcmd_opts *o, const fds_lg_result *r)
{
    cJSON *arr = cJSON_CreateArray();
    for (int k = 0; k < r->ntargets; k++) {
        const fds_lg_target_result *t = &r->targets[k];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "url", o->targets[k].url);
        cJSON_AddNumberToObject(e, "ok", (double)t->ok);
        cJSON_AddNumberToObject(e, "status", (double)t->err_status);
        cJSON_AddNumberToObject(e, "connect", (double)t->err_connect);
        cJSON_AddNumberToObject(e, "short_read", (double)t->err_short_read);
        cJSON_AddNumberToObject(e, "timeout", (double)t->err_timeout);
        cJSON_AddNumberToObject(e, "protocol", (double)t->err_protocol);
        if (t->first_error[0])
            cJSON_AddStringToObject(e, "first_error", t->first_error);
        cJSON_AddItemToArray(arr, e);
    }
    return arr;
}

/* ---- means over rounds and the report ------------------------------------- */

/* The mean of rounds[r].path... over the rounds where it is a number; NAN if none. */
static double mean_of(cJSON *const *rounds, int n, const char *arr, int idx, const char *key)
{
    double sum = 0;
    int k = 0;
    for (int r = 0; r < n; r++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(rounds[r], arr);
        if (idx >= 0)
            o = cJSON_GetArrayItem(o, idx);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        if (cJSON_IsNumber(v)) {
            sum += v->valuedouble;
            k++;
        }
    }
    return k ? sum / k : NAN;
}

void fds__lgcmd_nodes_mean(cJSON *side, cJSON *const *rounds, int n)
{
    static const char *const keys[] = {"cpu_percent", "process_cpu_percent", "os_cpu_percent"};
    const cJSON *first = cJSON_GetObjectItemCaseSensitive(rounds[0], "nodes");
    if (!first)
        return;
    /* replace what a generic mean over rounds may have made of them */
    cJSON_DeleteItemFromObjectCaseSensitive(side, "nodes");
    cJSON_DeleteItemFromObjectCaseSensitive(side, "nodes_cpu");
    cJSON_DeleteItemFromObjectCaseSensitive(side, "targets");
    cJSON *arr = cJSON_AddArrayToObject(side, "nodes");
    for (int i = 0; i < cJSON_GetArraySize(first); i++) {
        const cJSON *f = cJSON_GetArrayItem(first, i);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "url",
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(f, "url"), 1));
        cJSON_AddItemToObject(e, "name",
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(f, "name"), 1));
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            fds__lgcmd_num_or_null(e, keys[k], mean_of(rounds, n, "nodes", i, keys[k]));
        cJSON_AddItemToArray(arr, e);
    }
    cJSON *sum = cJSON_AddObjectToObject(side, "nodes_cpu");
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        fds__lgcmd_num_or_null(sum, keys[k], mean_of(rounds, n, "nodes_cpu", -1, keys[k]));
}

/* "%.1f" of v, or "n/a" */
static const char *num_text(char *buf, size_t cap, const cJSON *v)
{
    if (cJSON_IsNumber(v))
        snprintf(buf, cap, "%.1f", v->valuedouble);
    else
        snprintf(buf, cap, "n/a");
    return buf;
}

/* "%g" of v, or "n/a" */
static const char *procs_text(char *buf, size_t cap, const cJSON *v)
{
    if (cJSON_IsNumber(v))
        snprintf(buf, cap, "%g", v->valuedouble);
    else
        snprintf(buf, cap, "n/a");
    return buf;
}

char *fds__lgcmd_cluster_md(const cJSON *doc)
{
    const cJSON *cl = cJSON_GetObjectItemCaseSensitive(doc, "cluster");
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(cl, "nodes");
    const cJSON *codecs = cJSON_GetObjectItemCaseSensitive(cl, "index_codec");
    const cJSON *sides = cJSON_GetObjectItemCaseSensitive(doc, "sides");
    fds_strbuf s = FDS_STRBUF_INIT;
    int nn = cJSON_GetArraySize(nodes);
    fds_strbuf_printf(&s, "## Cluster\n\nCluster `%s`, %d node%s; the connections go to the "
                          "nodes round robin and stay there (keep-alive).\n\n| node | name | "
                          "version | processors |",
                      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cl, "name")), nn,
                      nn == 1 ? "" : "s");
    const cJSON *ix;
    cJSON_ArrayForEach(ix, codecs) fds_strbuf_printf(&s, " %s index.codec |", ix->string);
    fds_strbuf_printf(&s, "\n|---|---|---|---:|");
    cJSON_ArrayForEach(ix, codecs) fds_strbuf_printf(&s, "---|");
    fds_strbuf_printf(&s, "\n");
    const cJSON *nd;
    char b[64];
    cJSON_ArrayForEach(nd, nodes)
    {
        const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nd, "url"));
        fds_strbuf_printf(&s, "| %s | %s | %s | %s |", url,
                          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nd, "name")),
                          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nd, "version")),
                          procs_text(b, sizeof b,
                                     cJSON_GetObjectItemCaseSensitive(nd, "available_processors")));
        cJSON_ArrayForEach(ix, codecs)
        {
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(ix, url);
            fds_strbuf_printf(&s, " %s |", cJSON_IsString(c) ? c->valuestring : "n/a");
        }
        fds_strbuf_printf(&s, "\n");
    }
    fds_strbuf_printf(&s, "\nServer CPU per node, means over rounds: cpu %% from "
                          "process.cpu.total_in_millis over the measured window (100 = one "
                          "core); process %% and os %% as the node reports them in "
                          "_nodes/stats (100 = all its cores).\n\n| node |");
    const cJSON *sd;
    cJSON_ArrayForEach(sd, sides)
        fds_strbuf_printf(&s, " %s cpu %% | process %% | os %% |",
                          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sd, "index")));
    fds_strbuf_printf(&s, "\n|---|");
    cJSON_ArrayForEach(sd, sides) fds_strbuf_printf(&s, "---:|---:|---:|");
    fds_strbuf_printf(&s, "\n");
    for (int i = 0; i <= nn; i++) {
        const cJSON *nd0 = cJSON_GetArrayItem(nodes, i);
        fds_strbuf_printf(&s, "| %s |",
                          i < nn ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nd0, "url"))
                                 : "**sum**");
        cJSON_ArrayForEach(sd, sides)
        {
            const cJSON *o = i < nn ? cJSON_GetArrayItem(
                                          cJSON_GetObjectItemCaseSensitive(sd, "nodes"), i)
                                    : cJSON_GetObjectItemCaseSensitive(sd, "nodes_cpu");
            char b1[32], b2[32], b3[32];
            fds_strbuf_printf(
                &s, " %s | %s | %s |",
                num_text(b1, sizeof b1, cJSON_GetObjectItemCaseSensitive(o, "cpu_percent")),
                num_text(b2, sizeof b2,
                         cJSON_GetObjectItemCaseSensitive(o, "process_cpu_percent")),
                num_text(b3, sizeof b3, cJSON_GetObjectItemCaseSensitive(o, "os_cpu_percent")));
        }
        fds_strbuf_printf(&s, "\n");
    }
    const cJSON *mk = cJSON_GetObjectItemCaseSensitive(doc, "marked_rounds");
    if (cJSON_GetArraySize(mk) > 0) {
        fds_strbuf_printf(&s, "\nMarked rounds (a node failed; not averaged in):\n\n");
        const cJSON *m;
        cJSON_ArrayForEach(m, mk)
        {
            const cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(m, "sides"))
                fds_strbuf_printf(
                    &s, "- round %d, %s (%s): %s\n",
                    (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "round")),
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "side")),
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "index")),
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "reason")));
        }
    }
    return s.p;
}
