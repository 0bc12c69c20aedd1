/*
 * lgcmd_ab.c: `loadgen ab` -- the A/B rounds driver: two or more indices
 * measured in alternating rounds (A B, B A, ...; A B C, C B A, ...), the
 * phase timers read around each side, the means and spreads over complete
 * rounds handed to the report (lgcmd_abreport.c).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_error.h"
#include "fds_lgreport.h"
#include "lgcmd.h"

/* The plan from --a/--b or the --index list; 0, or 2 after a message. */
static int ab_plan_make(const fds__lgcmd_opts *o, fds__lgcmd_abplan *p)
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

/* The phase timers' deltas over one measured side and the shares they give:
 * query_share = dq / (dq + df), fetch_share = df / (dq + df). */
static void add_phase_shares(cJSON *side, const double before[2], const double after[2])
{
    double dq = after[0] - before[0], df = after[1] - before[1];
    int ok = !isnan(dq) && !isnan(df) && dq >= 0 && df >= 0 && dq + df > 0;
    fds__lgcmd_num_or_null(side, "query_time_us", ok ? dq : NAN);
    fds__lgcmd_num_or_null(side, "fetch_time_us", ok ? df : NAN);
    fds__lgcmd_num_or_null(side, "query_share", ok ? dq / (dq + df) : NAN);
    fds__lgcmd_num_or_null(side, "fetch_share", ok ? df / (dq + df) : NAN);
}

/* One measured side of one round: _cat/nodes and the phase timers read
 * before, the run, the timers after.  The side object, or NULL on failure. */
static cJSON *ab_one(fds__lgcmd_opts *o, const fds__lgcmd_node *nodes, fds_lgwork *w,
                     const char *name, pid_t pid, fds_sysstat_bg *bg, const char *label,
                     double *bg_cpu)
{
    cJSON *cat = fds__lgcmd_cat_nodes(o);
    double before[2], after[2];
    fds__lgcmd_search_timers(o, name, &before[0], &before[1]);
    fds_lg_config cfg;
    fds__lgcmd_fill_cfg(o, &cfg, w, o->round_duration, pid, bg, label);
    fds_lg_result res;
    fds__lgcmd_sampler *smp = fds__lgcmd_sampler_start(o, nodes, o->warmup, o->round_duration);
    int rc = fds_lg_run(&cfg, &res);
    if (rc) {
        cJSON *none = cJSON_CreateObject();
        fds__lgcmd_sampler_finish(smp, o, none);
        cJSON_Delete(none);
        fprintf(stderr, "loadgen ab: run failed: %s\n", fds_strerror(rc));
        cJSON_Delete(cat);
        return NULL;
    }
    fds__lgcmd_search_timers(o, name, &after[0], &after[1]);
    if (!o->quiet)
        fds__lgcmd_print_summary(&res, label);
    *bg_cpu = res.background_cpu_percent;
    cJSON *side = fds_lgreport_side(&res, name);
    fds__lgcmd_add_classes(side, &res, w);
    fds__lgcmd_sampler_finish(smp, o, side);
    cJSON_AddItemToObject(side, "targets", fds__lgcmd_targets_json(o, &res));
    char *why = fds__lgcmd_mark_reason(o, &res);
    if (why) {
        cJSON_AddStringToObject(side, "marked", why);
        free(why);
    }
    add_phase_shares(side, before, after);
    cJSON_AddItemToObject(side, "cat_nodes_before", cat);
    fds_lg_result_free(&res);
    return side;
}

/* The A/B rounds over n sides in the order fds_lgreport_order() gives
 * (A B C, C B A, ...), each complete round's sides as JSON in
 * rounds[side][0..done).  A round in which a node failed (any side
 * marked, fds__lgcmd_mark_reason) is not kept: its number and reasons go
 * to `marked` instead.  An interrupted or failed round is dropped, earlier
 * ones kept.  *bg_mean: mean background CPU %% (-1: none).  Returns the
 * count of complete, unmarked rounds. */
static int ab_rounds(fds__lgcmd_opts *o, const fds__lgcmd_node *nodes, int n, fds_lgwork *w,
                     const char *const *names, pid_t pid, fds_sysstat_bg *bg,
                     cJSON *rounds[][LG_MAX_ROUNDS], cJSON *marked, double *bg_mean)
{
    int done = 0, failed = 0;
    double bg_sum = 0;
    int bg_n = 0;
    for (int r = 0; r < o->rounds && !failed; r++) {
        int made = 0; /* sides of this round measured so far */
        for (int k = 0; k < n && !fds__lgcmd_interrupted; k++) {
            int s = fds_lgreport_order(r, n, k);
            char label[64];
            snprintf(label, sizeof label, "round %d/%d %c", r + 1, o->rounds, 'A' + s);
            double bgc;
            rounds[s][done] = ab_one(o, nodes, &w[s], names[s], pid, bg, label, &bgc);
            if (!rounds[s][done]) {
                failed = 1;
                break;
            }
            if (bgc >= 0) {
                bg_sum += bgc;
                bg_n++;
            }
            cJSON_AddNumberToObject(rounds[s][done], "round", r + 1);
            cJSON_AddNumberToObject(rounds[s][done], "position", k + 1);
            made++;
        }
        cJSON *why = NULL;
        for (int k = 0; k < made && !failed && !fds__lgcmd_interrupted; k++) {
            int s = fds_lgreport_order(r, n, k);
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(rounds[s][done], "marked");
            if (!cJSON_IsString(m))
                continue;
            if (!why) {
                why = cJSON_CreateObject();
                cJSON_AddNumberToObject(why, "round", r + 1);
                cJSON_AddArrayToObject(why, "sides");
            }
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "index", names[s]);
            cJSON_AddStringToObject(e, "side", (char[]){(char)('A' + s), 0});
            cJSON_AddStringToObject(e, "reason", m->valuestring);
            cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(why, "sides"), e);
            fprintf(stderr, "loadgen ab: round %d %c (%s) marked, not averaged in: %s\n", r + 1,
                    'A' + s, names[s], m->valuestring);
        }
        if (failed || fds__lgcmd_interrupted || why) {
            for (int k = 0; k < made; k++)
                cJSON_Delete(rounds[fds_lgreport_order(r, n, k)][done]);
            if (why)
                cJSON_AddItemToArray(marked, why);
            if (fds__lgcmd_interrupted)
                fprintf(stderr, "loadgen ab: interrupted; reporting %d complete round(s)\n", done);
            if (failed || fds__lgcmd_interrupted)
                break;
            continue;
        }
        done++;
    }
    *bg_mean = bg_n ? bg_sum / bg_n : -1;
    return done;
}

int fds__lgcmd_ab(fds__lgcmd_opts *o)
{
    fds__lgcmd_abplan p;
    if (ab_plan_make(o, &p))
        return 2;
    if (o->rounds < 1 || o->rounds > LG_MAX_ROUNDS) {
        fprintf(stderr, "loadgen ab: --rounds must be 1..%d\n", LG_MAX_ROUNDS);
        return 2;
    }
    fds__lgcmd_node nodes[FDS_LG_MAX_TARGETS];
    if (fds__lgcmd_probe(o, nodes) != 0) {
        fprintf(stderr, "loadgen ab: every node must answer before the rounds start\n");
        return 1;
    }
    fds_lgwork w[LG_MAX_SIDES];
    for (int s = 0; s < p.n; s++) {
        if (fds__lgcmd_build_workload(o, p.names[s], &w[s]) != 0) {
            while (s-- > 0)
                fds_lgwork_free(&w[s]);
            return 1;
        }
        if (!o->quiet)
            fprintf(stderr, "loadgen ab: %c=%s: %s\n", 'A' + s, p.names[s], w[s].description);
    }
    pid_t pid = fds__lgcmd_resolve_pid(o);
    cJSON *sys[LGCMD_SYS_ITEMS];
    sys[0] = fds__lgcmd_loadavg_json();
    sys[2] = fds__lgcmd_cat_nodes(o);
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
    cJSON *marked = cJSON_CreateArray();
    int done = ab_rounds(o, nodes, p.n, w, p.names, pid, bg, rounds, marked, &bg_mean);
    sys[1] = fds__lgcmd_loadavg_json();
    sys[3] = fds__lgcmd_cat_nodes(o);
    sys[4] = fds__lgcmd_background_json(bg, bg_mean);
    fds_sysstat_bg_stop(bg);
    for (int s = 0; s < p.n; s++)
        fds_lgwork_free(&w[s]);
    int nmarked = cJSON_GetArraySize(marked);
    if (done == 0) {
        fprintf(stderr, "loadgen ab: no complete round%s\n",
                nmarked ? " in which every node answered" : "");
        for (int k = 0; k < LGCMD_SYS_ITEMS; k++)
            cJSON_Delete(sys[k]);
        cJSON_Delete(marked);
        return 1;
    }
    cJSON *side[LG_MAX_SIDES], *spread[LG_MAX_SIDES] = {0};
    for (int s = 0; s < p.n; s++) {
        side[s] = fds_lgreport_mean(rounds[s], done, p.names[s]);
        fds__lgcmd_nodes_mean(side[s], rounds[s], done);
        fds__lgcmd_add_index_info(o, side[s], p.names[s]);
        for (int r = 0; r < done; r++)
            cJSON_Delete(rounds[s][r]);
    }
    for (int s = 0; s < p.n; s++)
        if (s != p.ref)
            spread[s] = fds_lgreport_spread(side[p.ref], side[s]);
    cJSON *doc = fds__lgcmd_ab_document(o, &p, side, spread, done, sys, pid);
    cJSON_AddItemToObject(doc, "cluster", fds__lgcmd_cluster_json(o, nodes, p.names, p.n));
    cJSON_AddItemToObject(doc, "marked_rounds", marked);
    int out = fds__lgcmd_ab_report(o, &p, doc, done);
    cJSON_Delete(doc);
    if (!out && nmarked)
        fprintf(stderr, "loadgen ab: %d round(s) marked and left out of the means (exit "
                        "status %d)\n", nmarked, LG_EXIT_MARKED);
    return out ? out : nmarked ? LG_EXIT_MARKED : 0;
}
