/*
 * lgcmd_measure.c: one measurement as both commands make it -- the workload
 * from the options (written to --dump-queries too), the engine's
 * configuration, the stop on SIGINT/SIGTERM, and the pieces of the result
 * every mode records: the config object, the load averages, the background
 * load and the summary line on stderr.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fds_error.h"
#include "fds_lgreport.h"
#include "fds_sysstat.h"
#include "lgcmd.h"

volatile sig_atomic_t fds__lgcmd_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    fds__lgcmd_interrupted = 1;
    fds_lg_request_stop();
}

void fds__lgcmd_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int fds__lgcmd_build_workload(const fds__lgcmd_opts *o, const char *index, fds_lgwork *w)
{
    char msg[600] = "";
    int rc;
    if (!strcmp(o->workload, "dashboard") && (o->bodies || o->path)) {
        fprintf(stderr, "loadgen: --workload dashboard makes its own bodies; drop --bodies/--path\n");
        return FDS_EINVAL;
    }
    if (!strcmp(o->workload, "dashboard") && strcmp(o->fields, FDS_LGWORK_DEFAULT_FIELDS)) {
        fprintf(stderr, "loadgen: --fields is for the match workload; --workload dashboard "
                        "queries fields of its own\n");
        return FDS_EINVAL;
    }
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
        rc = fds_lgwork_bodies(w, o->targets[0].host_header, path, o->bodies, msg, sizeof msg);
    } else if (o->path) {
        rc = fds_lgwork_fixed(w, o->targets[0].host_header, o->method ? o->method : "GET",
                              o->path);
    } else if (index && !strcmp(o->workload, "dashboard")) {
        /* values come from the first node: every node serves the same index */
        rc = fds_lgwork_dashboard(w, &o->targets[0], index, o->sample_docs,
                                  (size_t)o->pool, o->seed,
                                  o->size_set ? o->size : LG_DASHBOARD_HITS, msg, sizeof msg);
    } else if (index) {
        rc = fds_lgwork_match(w, &o->targets[0], index, o->fields,
                              o->sample_docs, (size_t)o->pool, o->seed, o->size, msg, sizeof msg);
    } else {
        fprintf(stderr, "loadgen: say what to send: --index, --bodies or --path\n");
        return FDS_EINVAL;
    }
    if (!rc && (rc = fds_lgwork_for_targets(w, o->targets, o->ntargets)) != 0) {
        fds_lgwork_free(w);
        snprintf(msg, sizeof msg, "building the requests of each node: %s", fds_strerror(rc));
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

void fds__lgcmd_fill_cfg(const fds__lgcmd_opts *o, fds_lg_config *c, const fds_lgwork *w,
                         double duration, pid_t pid, fds_sysstat_bg *bg, const char *label)
{
    memset(c, 0, sizeof *c);
    c->targets = o->targets;
    c->ntargets = o->ntargets;
    c->threads = o->threads;
    c->clients = o->clients;
    c->rate = o->rate;
    c->duration_s = duration;
    c->warmup_s = o->warmup;
    c->max_requests = o->max_requests;
    c->timeout_s = o->timeout;
    c->requests = (const char *const *)w->tmsgs;
    c->request_lens = w->tlens;
    c->nrequests = w->n;
    c->request_classes = w->nclasses ? w->classes : NULL;
    c->nclasses = w->nclasses;
    c->server_pid = pid;
    c->background = bg;
    c->progress = !o->quiet;
    c->label = label;
}

void fds__lgcmd_add_classes(cJSON *side, const fds_lg_result *r, const fds_lgwork *w)
{
    const char *names[FDS_LGWORK_MAX_CLASSES];
    for (int k = 0; k < w->nclasses; k++)
        names[k] = w->class_names[k];
    fds_lgreport_add_classes(side, r, names, w->class_share);
}

cJSON *fds__lgcmd_config_json(const fds__lgcmd_opts *o, const char *mode)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "mode", mode);
    cJSON_AddStringToObject(c, "host", o->host);
    cJSON_AddNumberToObject(c, "port", o->port);
    cJSON *hosts = cJSON_AddArrayToObject(c, "hosts");
    for (int k = 0; k < o->ntargets; k++)
        cJSON_AddItemToArray(hosts, cJSON_CreateString(o->targets[k].url));
    cJSON_AddStringToObject(c, "auth", o->user ? "basic" : o->api_key ? "api_key" : "none");
    if (o->cacert)
        cJSON_AddStringToObject(c, "cacert", o->cacert);
    cJSON_AddBoolToObject(c, "insecure", o->insecure);
    cJSON_AddNumberToObject(c, "threads", o->threads);
    cJSON_AddNumberToObject(c, "clients", o->clients);
    cJSON_AddStringToObject(c, "loop", o->rate > 0 ? "open" : "closed");
    cJSON_AddNumberToObject(c, "rate", o->rate);
    cJSON_AddNumberToObject(c, "duration_s", o->duration);
    cJSON_AddNumberToObject(c, "warmup_s", o->warmup);
    cJSON_AddNumberToObject(c, "max_requests", (double)o->max_requests);
    cJSON_AddNumberToObject(c, "timeout_s", o->timeout);
    cJSON_AddStringToObject(c, "workload", o->workload);
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

void fds__lgcmd_num_or_null(cJSON *o, const char *k, double v)
{
    if (isnan(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, v);
}

cJSON *fds__lgcmd_loadavg_json(void)
{
    double l[3];
    if (fds_sysstat_loadavg(l) != 0)
        return cJSON_CreateNull();
    return cJSON_CreateDoubleArray(l, 3);
}

cJSON *fds__lgcmd_background_json(fds_sysstat_bg *bg, double cpu_percent)
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

cJSON *fds__lgcmd_document(const char *mode, int schema_version)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "tool", "fieldstore-loadgen");
    cJSON_AddNumberToObject(doc, "schema_version", schema_version);
    cJSON_AddStringToObject(doc, "mode", mode);
    return doc;
}

void fds__lgcmd_add_system(cJSON *doc, cJSON *sys_items[LGCMD_SYS_ITEMS], pid_t pid)
{
    static const char *sys_keys[LGCMD_SYS_ITEMS] = {"loadavg_before", "loadavg_after",
                                                    "cat_nodes_before", "cat_nodes_after",
                                                    "background"};
    cJSON *sys = cJSON_AddObjectToObject(doc, "system");
    for (int k = 0; k < LGCMD_SYS_ITEMS; k++)
        cJSON_AddItemToObject(sys, sys_keys[k], sys_items[k]);
    cJSON_AddNumberToObject(sys, "server_pid", pid);
}

void fds__lgcmd_print_summary(const fds_lg_result *r, const char *label)
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

/* Write text to path; 0, or 1 after saying why on stderr. */
int fds__lgcmd_write_text(const char *path, const char *text)
{
    if (fds_lgreport_write_text(path, text) != 0) {
        fprintf(stderr, "loadgen: cannot write %s\n", path);
        return 1;
    }
    return 0;
}
