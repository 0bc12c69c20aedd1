/*
 * fuzz_dsl: fuzz target for fds_search_parse (and, for bodies that parse,
 * fds_search_execute and fds_search_render over a small real segment; an
 * aggregation tree is also reduced from two copies of the segment's
 * partial, as two shards, and rendered).
 * Must never crash, leak or read out of bounds; errors are fine.
 * Run by the shared driver (tests/fuzz/fuzz_driver.h); its plain build
 * starts from the search bodies below:  fuzz_dsl [SECONDS] [DIR...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggs_render.h"
#include "search_render.h"
#include "../../fuzz/fuzz_driver.h"
#include "query.h"

static fds_mapping *g_map;
static fds_sidx *g_sidx;

static const char *g_docs[] = {
    "{\"@timestamp\":\"2019-01-22T03:56:14+03:30\",\"method\":\"GET\","
    "\"url\":\"/image/60844/productModel/200x200\",\"status\":200,"
    "\"body_bytes_sent\":5667,\"request_time\":0.123,\"tags\":[\"a\",\"b\"]}",
    "{\"@timestamp\":\"2019-01-22T03:57:01+03:30\",\"method\":\"POST\","
    "\"url\":\"/m/filter/b113\",\"status\":404,\"body_bytes_sent\":0,"
    "\"request_time\":1.5,\"ok\":true,\"geo\":{\"city\":\"تهران\"}}",
    "{\"method\":\"HEAD\",\"url\":\"/\",\"status\":304}",
};

static void setup(void)
{
    if (g_map)
        return;
    g_map = fds_mapping_create();
    fds_sidx_writer *w = fds_sidx_writer_create(g_map);
    fds_err err;
    for (uint32_t i = 0; i < 3; i++) {
        char id[8];
        snprintf(id, sizeof id, "d%u", i);
        fds_err_clear(&err);
        fds_sidx_writer_add(w, i, id, strlen(id), (const uint8_t *)g_docs[i],
                            strlen(g_docs[i]), &err);
    }
    char path[] = "/tmp/fds-fuzzdsl-XXXXXX";
    close(mkstemp(path));
    fds_sidx_writer_write(w, path, &err);
    fds_sidx_writer_free(w);
    fds_sidx_open(path, &g_sidx, &err);
    unlink(path);
}

static int fetch(void *arg, const fds_hit *h, size_t n, const uint8_t **src,
                 size_t *len, fds_err *err)
{
    (void)arg; (void)err;
    for (size_t i = 0; i < n; i++) {
        src[i] = (const uint8_t *)g_docs[h[i].doc];
        len[i] = strlen(g_docs[h[i].doc]);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    fds_search_request *r = NULL;
    fds_err err;
    fds_err_clear(&err);
    int for_count = size && (data[0] & 0x80) && (data[0] & 1);
    if (fds_search_parse((const char *)data, size, g_map, for_count, &r, &err)) {
        if (err.code == 0 || err.kind == FDS_KIND_NONE) {
            fprintf(stderr, "error without detail\n");
            abort();
        }
        return 0;
    }
    fds_search_segment seg = {.sidx = g_sidx};
    fds_search_result res;
    fds_err_clear(&err);
    if (fds_search_execute(r, &seg, 1, &res, &err) == 0) {
        size_t len;
        char *out = fds_search_render(r, &res, &seg, "fuzz", 0, &(fds_hit_source){.fetch = fetch},
                                      &len, &err);
        if (out && strlen(out) != len)
            abort();
        free(out);
        if (res.aggs) {
            fds_agg_result *parts[2] = {res.aggs, res.aggs}, *red = NULL;
            fds_err_clear(&err);
            if (fds_aggs_reduce(r->aggs, parts, 2, &red, &err) == 0) {
                fds_strbuf b = FDS_STRBUF_INIT;
                fds__aggs_render(&b, red, size & 1, NULL, NULL, &err);
                fds_strbuf_free(&b);
                fds_agg_result_free(red);
            } else if (err.code == 0) {
                fprintf(stderr, "reduce error without detail\n");
                abort();
            }
        }
        fds_search_result_free(&res);
    }
    fds_search_request_free(r);
    return 0;
}

#ifndef FDS_LIBFUZZER
/* Seeds: bodies that reach every query type, sorts, paging, aggregations. */
int fds_fuzz_builtin_seeds(fds_fuzz_seeds *s)
{
    static const char *seeds[] = {
        "",
        "{\"size\":0,\"aggs\":{\"h\":{\"date_histogram\":{\"field\":\"@timestamp\","
        "\"fixed_interval\":\"1m\",\"min_doc_count\":0},\"aggs\":{\"t\":{\"terms\":"
        "{\"field\":\"status\",\"size\":2}},\"p\":{\"percentiles\":{\"field\":"
        "\"body_bytes_sent\"}}}},\"c\":{\"cardinality\":{\"field\":\"method\"}}}}",
        "{\"aggs\":{\"r\":{\"range\":{\"field\":\"status\",\"ranges\":[{\"to\":300},"
        "{\"from\":300}]},\"aggs\":{\"s\":{\"extended_stats\":{\"field\":"
        "\"request_time\"}}}},\"f\":{\"filters\":{\"filters\":{\"a\":{\"term\":"
        "{\"method\":\"GET\"}}},\"other_bucket\":true}},\"x\":{\"composite\":"
        "{\"sources\":[{\"m\":{\"terms\":{\"field\":\"method\"}}}],\"size\":1}}}}",
        "{\"query\":{\"match\":{\"url\":\"image productModel\"}}}",
        "{\"query\":{\"match\":{\"url\":{\"query\":\"a b c\",\"operator\":\"and\","
        "\"minimum_should_match\":\"-25%\"}}},\"size\":3,\"from\":1}",
        "{\"query\":{\"bool\":{\"must\":[{\"term\":{\"method.keyword\":\"GET\"}}],"
        "\"should\":{\"range\":{\"status\":{\"gte\":200,\"lt\":300}}},"
        "\"filter\":[{\"exists\":{\"field\":\"url\"}}],"
        "\"must_not\":[{\"ids\":{\"values\":[\"d2\"]}}],\"minimum_should_match\":1}}}",
        "{\"query\":{\"terms\":{\"tags\":[\"a\",\"z\"]}},\"sort\":[{\"@timestamp\":"
        "{\"order\":\"desc\",\"missing\":\"_first\"}},\"_score\",\"_doc\"],"
        "\"search_after\":[\"2019-01-22T03:56:14Z\",1.5,0],\"track_total_hits\":2}",
        "{\"query\":{\"range\":{\"@timestamp\":{\"gt\":\"2019-01-22T00:00:00+03:30\","
        "\"lte\":1548116774000}}},\"_source\":{\"includes\":[\"geo.*\",\"url\"],"
        "\"excludes\":\"method\"},\"explain\":true,\"track_scores\":true}",
        "{\"query\":{\"match\":{\"status\":\"404\"}},\"_source\":false,"
        "\"sort\":\"method.keyword\",\"track_total_hits\":false}",
        "{\"query\":{\"match_all\":{\"boost\":2}},\"size\":0}",
        "{\"query\":{\"match\":{\"request_time\":1.5}},\"sort\":[{\"request_time\":\"asc\"}]}",
        "{\"query\":{\"query_string\":{\"query\":\"url:ima* AND (method:GET O"
        "R -status:[300 TO *]) _exists_:geo.city url:/pro.*l/ image~1^2\",\"d"
        "efault_operator\":\"and\"}},\"docvalue_fields\":[\"status\",\"method"
        ".keyword\",{\"field\":\"@timestamp\",\"format\":\"yyyy-MM-dd\"}],\"f"
        "ields\":[\"url\",\"geo.*\"]}",
        "{\"query\":{\"simple_query_string\":{\"query\":\"+image -filter | pr"
        "od* (a | b)~\",\"fields\":[\"url^2\",\"method\"]}},\"min_score\":0.1"
        "}",
        "{\"query\":{\"dis_max\":{\"queries\":[{\"wildcard\":{\"url.keyword\""
        ":{\"value\":\"/m/*/b?13\",\"case_insensitive\":true}}},{\"regexp\":{"
        "\"method.keyword\":{\"value\":\"(GET|HE.D)[A-Z]{0,2}@\",\"flags\":\""
        "ALL\"}}},{\"prefix\":{\"url\":\"ima\"}}],\"tie_breaker\":0.3}}}",
        "{\"query\":{\"boosting\":{\"positive\":{\"constant_score\":{\"filter"
        "\":{\"fuzzy\":{\"url\":{\"value\":\"imagx\",\"fuzziness\":\"AUTO:2,4"
        "\",\"prefix_length\":1,\"max_expansions\":3}}},\"boost\":2}},\"negat"
        "ive\":{\"match\":{\"url\":{\"query\":\"filtr\",\"fuzziness\":2}}},\""
        "negative_boost\":0.5}},\"docvalue_fields\":[{\"field\":\"request_tim"
        "e\",\"format\":\"#,##0.00\"},\"tags*\"]}",
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        if (fds_fuzz_seed_add(s, (const uint8_t *)seeds[i], strlen(seeds[i])))
            return -1;
    return 0;
}
#endif
