/*
 * lgcmd_ab.c: `loadgen ab` -- the A/B rounds driver: two or more indices
 * measured in alternating rounds (A B, B A, ...; A B C, C B A, ...), the
 * phase timers read around each side, the means and spreads over complete
 * rounds handed to the report (lgcmd_abreport.c).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
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
static cJSON *ab_one(fds__lgcmd_opts *o, fds_lgwork *w, const char *name, pid_t pid,
                     fds_sysstat_bg *bg, const char *label, double *bg_cpu)
{
    cJSON *cat = fds__lgcmd_cat_nodes(o);
    double before[2], after[2];
    fds__lgcmd_search_timers(o, name, &before[0], &before[1]);
    fds_lg_config cfg;
    fds__lgcmd_fill_cfg(o, &cfg, w, o->round_duration, pid, bg, label);
    fds_lg_result res;
    int rc = fds_lg_run(&cfg, &res);
    if (rc) {
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
static int ab_rounds(fds__lgcmd_opts *o, int n, fds_lgwork *w, const char *const *names,
                     pid_t pid, fds_sysstat_bg *bg, cJSON *rounds[][LG_MAX_ROUNDS],
                     double *bg_mean)
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
        if (failed || fds__lgcmd_interrupted) {
            for (int k = 0; k < made; k++)
                cJSON_Delete(rounds[fds_lgreport_order(r, n, k)][r]);
            if (fds__lgcmd_interrupted)
                fprintf(stderr, "loadgen ab: interrupted; reporting %d complete round(s)\n", done);
            break;
        }
        done = r + 1;
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
    int done = ab_rounds(o, p.n, w, p.names, pid, bg, rounds, &bg_mean);
    sys[1] = fds__lgcmd_loadavg_json();
    sys[3] = fds__lgcmd_cat_nodes(o);
    sys[4] = fds__lgcmd_background_json(bg, bg_mean);
    fds_sysstat_bg_stop(bg);
    for (int s = 0; s < p.n; s++)
        fds_lgwork_free(&w[s]);
    if (done == 0) {
        fprintf(stderr, "loadgen ab: no complete round\n");
        for (int k = 0; k < LGCMD_SYS_ITEMS; k++)
            cJSON_Delete(sys[k]);
        return 1;
    }
    cJSON *side[LG_MAX_SIDES], *spread[LG_MAX_SIDES] = {0};
    for (int s = 0; s < p.n; s++) {
        side[s] = fds_lgreport_mean(rounds[s], done, p.names[s]);
        fds__lgcmd_add_index_info(o, side[s], p.names[s]);
        for (int r = 0; r < done; r++)
            cJSON_Delete(rounds[s][r]);
    }
    for (int s = 0; s < p.n; s++)
        if (s != p.ref)
            spread[s] = fds_lgreport_spread(side[p.ref], side[s]);
    cJSON *doc = fds__lgcmd_ab_document(o, &p, side, spread, done, sys, pid);
    int out = fds__lgcmd_ab_report(o, &p, doc, done);
    cJSON_Delete(doc);
    return out;
}
