/*
 * test_lgreport.c: the N-way A/B report -- the alternating round order,
 * per-round ratio spreads and their verdict, phase shares from summed timer
 * deltas, the table's no-verdict mark and n/a cells, and the sentence.
 */
#include "fds_lgreport.h"
#include "fds_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A side with one round per qps[i] (cpu 100 % each, stored fields `sf`),
 * and query/fetch time deltas when `timers` is set. */
static cJSON *side(const char *index, const char *codec, const double *qps, int n, double sf,
                   int timers)
{
    cJSON *rounds[8];
    for (int i = 0; i < n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "qps", qps[i]);
        cJSON_AddNumberToObject(r, "cpu_percent", 100);
        cJSON_AddNumberToObject(r, "qps_per_cpu_percent", qps[i] / 100);
        if (timers) {
            /* 900 + 100 us in round 0, 100 + 100 in round 1: summed 0.833/0.167 */
            cJSON_AddNumberToObject(r, "query_time_us", i ? 100 : 900);
            cJSON_AddNumberToObject(r, "fetch_time_us", 100);
            cJSON_AddNumberToObject(r, "query_share", i ? 0.5 : 0.9);
            cJSON_AddNumberToObject(r, "fetch_share", i ? 0.5 : 0.1);
        } else {
            cJSON_AddNullToObject(r, "query_share");
            cJSON_AddNullToObject(r, "fetch_share");
        }
        cJSON_AddNumberToObject(r, "round", i + 1);
        rounds[i] = r;
    }
    cJSON *s = fds_lgreport_mean(rounds, n, index);
    cJSON_AddStringToObject(s, "codec", codec);
    cJSON_AddNumberToObject(s, "stored_fields_bytes", sf);
    cJSON_AddStringToObject(s, "cat_store_size", "1.0mb");
    for (int i = 0; i < n; i++)
        cJSON_Delete(rounds[i]);
    return s;
}

static double at(const cJSON *o, const char *metric, const char *k)
{
    return cJSON_GetNumberValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, metric), k));
}

static const char *verdict(const cJSON *o, const char *metric)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(o, metric), "verdict"));
}

static void test_report(void)
{
    /* order: A B C, C B A, A B C */
    int want[3][3] = {{0, 1, 2}, {2, 1, 0}, {0, 1, 2}};
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            ASSERT_EQ(fds_lgreport_order(r, 3, k), want[r][k]);

    double zq[] = {1000, 1200}, bq[] = {900, 1300}, lq[] = {200, 150};
    cJSON *z = side("logs-zstd", "ZSTD", zq, 2, 910, 1);
    cJSON *b = side("logs-best_compression", "best_compression", bq, 2, 1000, 0);
    cJSON *l = side("logs-lucene_best_compression", "lucene_best_compression", lq, 2, 1000, 1);

    /* shares from the summed deltas: 1000 / 1200, not the mean 0.7 */
    double qs = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(z, "query_share"));
    ASSERTF(fabs(qs - 1000.0 / 1200) < 1e-12, "query share %g", qs);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(b, "fetch_share")));

    /* ZSTD / best_compression: rounds 1.111 and 0.923 straddle 1 */
    cJSON *sb = fds_lgreport_spread(z, b);
    ASSERT(fabs(at(sb, "qps", "ratio") - 1100.0 / 1100) < 1e-12);
    ASSERT(fabs(at(sb, "qps", "min") - 1200.0 / 1300) < 1e-12);
    ASSERT(fabs(at(sb, "qps", "max") - 1000.0 / 900) < 1e-12);
    ASSERT_STR(verdict(sb, "qps"), FDS_LGREPORT_UNCLEAR);
    ASSERT_STR(verdict(sb, "fetch_share"), "n/a");
    /* ZSTD / lucene: rounds 5 and 8, both above 1 although 8 - 5 > 6.29 - 1 */
    cJSON *sl = fds_lgreport_spread(z, l);
    ASSERT(fabs(at(sl, "qps", "ratio") - 1100.0 / 175) < 1e-12);
    ASSERT(at(sl, "qps", "min") == 5 && at(sl, "qps", "max") == 8);
    ASSERT_STR(verdict(sl, "qps"), "clear");
    ASSERT(fabs(at(sl, "stored_fields_bytes", "ratio") - 0.91) < 1e-12);

    const cJSON *sides[3] = {z, b, l}, *spreads[3] = {NULL, sb, sl};
    const char *titles[3] = {"A: z", "B: b", "C: l"};
    char *t = fds_lgreport_table_n(sides, 3, 0, spreads, titles);
    REQUIRE(t);
    ASSERT(strstr(t, "| A / B (min-max over rounds) | A / C (min-max over rounds) |"));
    ASSERT(strstr(t, "1.000 (0.923-1.111) spread > effect, no verdict"));
    ASSERT(strstr(t, "6.286 (5.000-8.000) |"));
    ASSERT(strstr(t, "| server time in fetch phase (share) | 0.167 | n/a | 0.167 |"));
    ASSERT(strstr(t, "| 1.0mb | 1.0mb | 1.0mb |"));
    free(t);

    char *s = fds_lgreport_sentence(z, l, sl);
    REQUIRE(s);
    ASSERT_STR(s, "ZSTD (logs-zstd) served 6.29x the queries per server CPU % of "
                  "lucene_best_compression (logs-lucene_best_compression, Elasticsearch "
                  "7.10's best_compression layout: Lucene 8.7 DEFLATE in 480 KiB chunks), at "
                  "6.29x its QPS, on 9% less stored-fields disk.");
    free(s);
    s = fds_lgreport_sentence(z, b, sb);
    REQUIRE(s);
    ASSERT(strstr(s, "could not be told apart in queries per server CPU % from best_compression"));
    ASSERT(strstr(s, "at a QPS within the spread of its rounds"));
    free(s);

    char *pr = fds_lgreport_rounds_table(sides, 3);
    REQUIRE(pr);
    /* round 2 runs C first */
    const char *r2 = strstr(pr, "| 2 |");
    ASSERT(r2 && !strncmp(r2, "| 2 | C |", 9));
    free(pr);

    cJSON_Delete(sb);
    cJSON_Delete(sl);
    cJSON_Delete(z);
    cJSON_Delete(b);
    cJSON_Delete(l);
}

/* A run result with two classes: class 0 with latencies 1..n0 ms, class 1
 * with 10 ms each and `err1` errors. */
static void classed_result(fds_lg_result *r, int n0, int n1, int err1)
{
    memset(r, 0, sizeof *r);
    r->latency = fds_hist_create();
    r->service = fds_hist_create();
    r->nclasses = 2;
    for (int k = 0; k < 2; k++)
        r->classes[k].latency = fds_hist_create();
    for (int i = 1; i <= n0; i++)
        fds_hist_record(r->classes[0].latency, (uint64_t)i * 1000000u);
    for (int i = 0; i < n1; i++)
        fds_hist_record(r->classes[1].latency, 10000000u);
    r->classes[0].ok = (uint64_t)n0;
    r->classes[1].ok = (uint64_t)n1;
    r->classes[1].errors = r->classes[1].err_status = (uint64_t)err1;
    r->ok = (uint64_t)(n0 + n1);
    r->errors = (uint64_t)err1;
}

/* Per-class rows: the JSON object, the run table, means over rounds (counts
 * summed) and the A/B rows with a ratio. */
static void test_classes(void)
{
    static const char *const names[] = {"discover", "match url.keyword"};
    static const double share[] = {0.75, 0.25};
    fds_lg_result r1, r2;
    classed_result(&r1, 100, 20, 0);
    classed_result(&r2, 50, 10, 2);
    cJSON *rounds[2] = {fds_lgreport_side(&r1, "x"), fds_lgreport_side(&r2, "x")};
    fds_lgreport_add_classes(rounds[0], &r1, names, share);
    fds_lgreport_add_classes(rounds[1], &r2, names, share);
    const cJSON *cl = cJSON_GetObjectItemCaseSensitive(rounds[0], "classes");
    ASSERT_EQ(cJSON_GetArraySize(cl), 2);
    ASSERT_STR(cl->child->string, "discover");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(cl, "discover");
    ASSERT(fabs(at(d, "latency_ms", "p50") - 50) < 0.1);
    ASSERT(fabs(at(d, "latency_ms", "max") - 100) < 0.1);
    char *t = fds_lgreport_single(rounds[0]);
    ASSERT(t && strstr(t, "| discover | 0.750 | 100 | 0 |"));
    ASSERT(strstr(t, "| match url.keyword | 0.250 | 20 | 0 | 10.0"));
    free(t);

    cJSON *m = fds_lgreport_mean(rounds, 2, "x");
    const cJSON *mu = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(m, "classes"), "match url.keyword");
    ASSERT(cJSON_GetObjectItemCaseSensitive(mu, "ok")->valuedouble == 30);
    ASSERT(cJSON_GetObjectItemCaseSensitive(mu, "errors")->valuedouble == 2);
    ASSERT(cJSON_GetObjectItemCaseSensitive(mu, "status_errors")->valuedouble == 2);
    ASSERT(fabs(cJSON_GetObjectItemCaseSensitive(mu, "share")->valuedouble - 0.25) < 1e-12);

    const cJSON *sides[2] = {rounds[0], rounds[1]};
    const cJSON *spreads[2] = {NULL, NULL};
    const char *titles[2] = {"A", "B"};
    char *tn = fds_lgreport_table_n(sides, 2, 0, spreads, titles);
    /* discover p50: 50 ms against 25 ms (histogram bucket midpoints), A / B 2 */
    ASSERTF(tn && strstr(tn, "| discover: latency p50 (ms) | 49.988 | 24.994 | 2.000 |"), "%s",
            tn);
    ASSERT(strstr(tn, "| match url.keyword: errors | 0 | 2 | 0.000 |"));
    free(tn);
    char *tc = fds_lgreport_table(rounds[0], rounds[1], "A", "B");
    ASSERT(tc && strstr(tc, "| match url.keyword: latency p99 (ms) |"));
    free(tc);

    cJSON_Delete(m);
    cJSON_Delete(rounds[0]);
    cJSON_Delete(rounds[1]);
    fds_lg_result_free(&r1);
    fds_lg_result_free(&r2);
}

int main(void)
{
    RUN(test_report);
    RUN(test_classes);
    TEST_DONE();
}
