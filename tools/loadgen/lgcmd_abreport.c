/*
 * lgcmd_abreport.c: the A/B report glue -- the A/B JSON document (sides,
 * ratios to the reference, the a/b pair, the system around the run), the
 * tables on stdout, the SVG charts and the Markdown report.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_lgreport.h"
#include "fds_strbuf.h"
#include "lgcmd.h"

static const char *ab_order_text(int n)
{
    return n == 2 ? "A B, B A, A B, ... (direction alternates every round)"
                  : "A B C ..., ... C B A, A B C ... (direction alternates every round)";
}

cJSON *fds__lgcmd_ab_document(const fds__lgcmd_opts *o, const fds__lgcmd_abplan *p,
                              cJSON **side, cJSON **spread, int done,
                              cJSON *sys_items[LGCMD_SYS_ITEMS], pid_t pid)
{
    cJSON *doc = fds__lgcmd_document("ab", 2);
    cJSON *cfgj = fds__lgcmd_config_json(o, "ab");
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
    fds__lgcmd_add_system(doc, sys_items, pid);
    return doc;
}

/* the sentence of the a/b pair in doc's "ratios", or "" */
static const char *pair_sentence(const cJSON *doc, const fds__lgcmd_abplan *p)
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
static int ab_write_md(const fds__lgcmd_opts *o, const fds__lgcmd_abplan *p, const cJSON *doc,
                       const char *table, const char *per_round, const char *cluster,
                       const char *prefix, int done)
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
    fds_strbuf_printf(&s, "\n%s\n", cluster ? cluster : "");
    fds_strbuf_printf(&s, "\n## Rounds\n\n%s\n", per_round ? per_round : "");
    fds_strbuf_printf(&s,
                      "![QPS per round](%s_qps_rounds.svg)\n"
                      "![Latency per round](%s_latency_rounds.svg)\n"
                      "![QPS per CPU%% per round](%s_cpu_rounds.svg)\n"
                      "![Latency percentiles](%s_latency.svg)\n"
                      "![QPS per CPU%%](%s_qps_per_cpu.svg)\n",
                      base, base, base, base, base);
    int out = s.p ? fds__lgcmd_write_text(o->md, s.p) : 1;
    free(s.p);
    return out;
}

/* Print the A/B tables and write the JSON, the SVG charts and (with --md)
 * the Markdown report.  Returns 0, or 1 when a file could not be written. */
int fds__lgcmd_ab_report(const fds__lgcmd_opts *o, const fds__lgcmd_abplan *p, cJSON *doc,
                         int done)
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
    char *cluster = fds__lgcmd_cluster_md(doc);
    printf("A/B: %d rounds of %.1f s per side (after %.1f s warm-up each), order %s, %s loop, "
           "%d clients, %d threads; values are means over rounds, ratio = %c / side "
           "(min-max over rounds)\n\n%s\n%s\n\n%s",
           done, o->round_duration, o->warmup, ab_order_text(p->n),
           o->rate > 0 ? "open" : "closed", o->clients, o->threads, 'A' + p->ref,
           table ? table : "", pair_sentence(doc, p), per_round ? per_round : "");
    printf("\n%s", cluster ? cluster : "");
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
    if (o->md && ab_write_md(o, p, doc, table, per_round, cluster, prefix, done))
        out = 1;
    free(cluster);
    free(table);
    free(per_round);
    return out;
}
