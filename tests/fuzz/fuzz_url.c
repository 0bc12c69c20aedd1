/*
 * fuzz_url: fuzz target for the request-URL decoding of src/http/request.c:
 * the path split on '/' with each segment percent-decoded
 * (fds__path_split) and the URL parameters ('+' and %XX decoding,
 * fds__param_decode), then what parameters drive: `filter_path` and
 * `pretty` applied to a search answer (fds__json_filter, fds__json_pretty)
 * and the _search parameters (size, from, q, sort, _source, ...) applied to
 * a request (fds_search_apply_param).  The input is a raw request target,
 * "PATH?k=v&k2=v2".  Must never crash, leak or read out of bounds; decoded
 * segments are valid UTF-8 without NUL and never longer than the raw text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_text.h"
#include "json_out.h"
#include "request.h"
#include "query.h"
#include "ast/search_request.h"
#include "fuzz_driver.h"

/* An answer of the shape GET /logs/_search gives, to filter and re-indent. */
static const char ANSWER[] =
    "{\"took\":3,\"timed_out\":false,\"_shards\":{\"total\":1,\"successful\":1,"
    "\"skipped\":0,\"failed\":0},\"hits\":{\"total\":{\"value\":2,\"relation\":"
    "\"eq\"},\"max_score\":1.0,\"hits\":[{\"_index\":\"logs\",\"_id\":\"a%2Fb\","
    "\"_score\":1.0,\"_source\":{\"method\":\"GET\",\"url\":\"/image/60844/"
    "productModel/200x200\",\"status\":200,\"geo\":{\"city\":\"\\u062a\"},"
    "\"tags\":[\"a\",{\"b\":[1,2.5e3,null,true]}],\"empty\":{}}},{\"_index\":"
    "\"logs\",\"_id\":\"2\",\"_score\":0.5,\"_source\":{\"status\":404}}]}}";

static const char *const SEARCH_KEYS[] = {"size", "from", "q",
                                          "track_total_hits", "_source",
                                          "sort", "explain"};

static fds_mapping *g_map;

static void setup(void)
{
    if (g_map)
        return;
    static const char mapping[] =
        "{\"properties\":{\"method\":{\"type\":\"text\",\"fields\":{\"keyword\":"
        "{\"type\":\"keyword\"}}},\"url\":{\"type\":\"text\"},\"status\":"
        "{\"type\":\"long\"},\"@timestamp\":{\"type\":\"date\"},"
        "\"request_time\":{\"type\":\"float\"}}}";
    fds_err err;
    g_map = fds_mapping_create();
    if (!g_map || fds_mapping_merge_json(g_map, mapping, sizeof mapping - 1, &err))
        abort();
}

static void check_segments(char *path)
{
    char *seg[FDS_PATH_SEGMENTS_MAX];
    unsigned n = 0;
    size_t raw = strlen(path);
    int rc = fds__path_split(path, seg, &n);
    if (rc != 0 && rc != FDS_PATH_TOO_MANY && rc != FDS_PATH_BAD_TEXT)
        abort();
    if (n > FDS_PATH_SEGMENTS_MAX)
        abort();
    for (unsigned i = 0; i < n; i++) {
        size_t l = strlen(seg[i]);
        if (!l || l > raw || !fds_utf8_valid((const uint8_t *)seg[i], l))
            abort();
    }
}

static void apply_param(fds_search_request *req, const char *key,
                        const char *val)
{
    char *t = NULL, *u = NULL;
    size_t tn = 0, un = 0;
    if (!strcmp(key, "filter_path") && *val &&
        fds__json_filter(ANSWER, sizeof ANSWER - 1, val, &t, &tn) == 0) {
        if (strlen(t) != tn)
            abort();
        if (fds__json_pretty(t, tn, &u, &un) == 0 && strlen(u) != un)
            abort();
    }
    free(t);
    free(u);
    fds_err err;
    for (size_t i = 0; req && i < sizeof SEARCH_KEYS / sizeof *SEARCH_KEYS; i++) {
        fds_err_clear(&err);
        if (!strcmp(key, SEARCH_KEYS[i]) &&
            fds_search_apply_param(req, key, val, &err) &&
            err.code == 0)
            abort(); /* a refusal carries its detail */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    /* the server sees a NUL-terminated target: stop at a NUL as it does */
    char *url = malloc(size + 1);
    if (!url)
        return 0;
    memcpy(url, data, size);
    url[size] = 0;
    char *q = strchr(url, '?');
    if (q)
        *q++ = 0;
    check_segments(url);

    fds_search_request *req = NULL;
    fds_err err;
    fds_err_clear(&err);
    if (fds_search_parse("", 0, g_map, 0, &req, &err))
        abort();
    for (char *save = NULL, *kv = q ? strtok_r(q, "&", &save) : NULL; kv;
         kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);
        char *key = fds__param_decode(kv, kl);
        char *val = eq ? fds__param_decode(eq + 1, strlen(eq + 1))
                       : strdup("");
        if (key && val) {
            if (strlen(val) > (eq ? strlen(eq + 1) : 0))
                abort(); /* decoding never grows a value */
            apply_param(req, key, val);
        }
        free(key);
        free(val);
    }
    fds_search_request_free(req);
    free(url);
    return 0;
}
