/*
 * lgcmd_run.c: `loadgen run` -- one measurement of one workload: the table
 * on stdout, the result as JSON (--json) and Markdown (--md).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_error.h"
#include "fds_lgreport.h"
#include "lgcmd.h"

/* The Markdown report at o->md: a header naming the workload and the load,
 * then the table.  0, or 1 when it could not be written. */
static int run_write_md(const fds__lgcmd_opts *o, const char *workload, const char *table)
{
    char head[1024];
    snprintf(head, sizeof head, "# loadgen run\n\n%s; %s loop, %d clients, %d threads, %.1f s "
                                "measured after %.1f s warm-up.\n\n",
             workload, o->rate > 0 ? "open" : "closed", o->clients, o->threads, o->duration,
             o->warmup);
    size_t n = strlen(head) + (table ? strlen(table) : 0) + 1;
    char *all = malloc(n);
    if (!all)
        return 0;
    snprintf(all, n, "%s%s", head, table ? table : "");
    int out = fds__lgcmd_write_text(o->md, all);
    free(all);
    return out;
}

int fds__lgcmd_run(fds__lgcmd_opts *o)
{
    fds__lgcmd_node nodes[FDS_LG_MAX_TARGETS];
    /* a node that fails here still gets the run: its errors are the result */
    fds__lgcmd_probe(o, nodes);
    fds_lgwork w;
    if (fds__lgcmd_build_workload(o, o->index, &w) != 0)
        return 1;
    if (!o->quiet)
        fprintf(stderr, "loadgen: %s\n", w.description);
    pid_t pid = fds__lgcmd_resolve_pid(o);
    cJSON *la_before = fds__lgcmd_loadavg_json();
    cJSON *cat_before = fds__lgcmd_cat_nodes(o);
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
    fds__lgcmd_fill_cfg(o, &cfg, &w, o->duration, pid, bg, NULL);
    fds_lg_result r;
    fds__lgcmd_sampler *smp = fds__lgcmd_sampler_start(o, nodes, o->warmup, o->duration);
    int rc = fds_lg_run(&cfg, &r);
    cJSON *la_after = fds__lgcmd_loadavg_json();
    cJSON *cat_after = fds__lgcmd_cat_nodes(o);
    cJSON *bgj = fds__lgcmd_background_json(bg, r.background_cpu_percent);
    fds_sysstat_bg_stop(bg);
    if (rc) {
        cJSON *none = cJSON_CreateObject();
        fds__lgcmd_sampler_finish(smp, o, none);
        cJSON_Delete(none);
        fprintf(stderr, "loadgen: run failed: %s\n", fds_strerror(rc));
        fds_lgwork_free(&w);
        return 1;
    }
    if (!o->quiet)
        fds__lgcmd_print_summary(&r, NULL);
    cJSON *side = fds_lgreport_side(&r, o->index);
    fds__lgcmd_add_classes(side, &r, &w);
    fds__lgcmd_sampler_finish(smp, o, side);
    cJSON_AddItemToObject(side, "targets", fds__lgcmd_targets_json(o, &r));
    char *why = fds__lgcmd_mark_reason(o, &r);
    if (why) {
        fprintf(stderr, "loadgen: marked: %s\n", why);
        cJSON_AddStringToObject(side, "marked", why);
        free(why);
    }
    if (o->index)
        fds__lgcmd_add_index_info(o, side, o->index);
    cJSON *doc = fds__lgcmd_document("run", 1);
    cJSON_AddItemToObject(doc, "config", fds__lgcmd_config_json(o, "run"));
    const char *idx[1] = {o->index};
    cJSON_AddItemToObject(doc, "cluster", fds__lgcmd_cluster_json(o, nodes, idx, 1));
    cJSON_AddStringToObject(doc, "workload", w.description);
    cJSON_AddItemToObject(doc, "result", side);
    cJSON *sys[LGCMD_SYS_ITEMS] = {la_before, la_after, cat_before, cat_after, bgj};
    fds__lgcmd_add_system(doc, sys, pid);
    char *table = fds_lgreport_single(side);
    printf("%s", table ? table : "");
    int out = 0;
    if (o->json && fds_lgreport_write_json(o->json, doc) != 0) {
        fprintf(stderr, "loadgen: cannot write %s\n", o->json);
        out = 1;
    }
    if (o->md && run_write_md(o, w.description, table))
        out = 1;
    free(table);
    cJSON_Delete(doc);
    fds_lg_result_free(&r);
    fds_lgwork_free(&w);
    return out;
}
