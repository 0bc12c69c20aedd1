/*
 * test_http.c: unit tests of src/http's request, response and _cat
 * helpers, and of the route table's choice of the write threads.  Requests are built in memory as inner requests (no
 * connection: their URL parameters are name/value pairs), so nothing here
 * needs a server, a socket or a store.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggs_render.h"
#include "cat.h"
#include "fds_test.h"
#include "request.h"
#include "response.h"
#include "router.h"

/* An inner request with URL parameters kv (2 * n strings) and a body. */
static fds_req req_kv(const char *const *kv, unsigned n, const char *body)
{
    fds_req r = {.method = "GET", .kv = kv, .nkv = n};
    r.body = body ? body : "";
    r.body_len = strlen(r.body);
    return r;
}

/* The answer's body parsed (the caller deletes it); NULL if it is not
 * JSON. */
static cJSON *resp_parse(const fds_resp *o)
{
    return o->body ? cJSON_ParseWithLength(o->body, o->len) : NULL;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- request.c ----------------------------------------------------------- */

static void test_param_decode(void)
{
    char *s = fds__param_decode("a+b%2Fc%20d", 11);
    REQUIRE(s);
    ASSERT_STR(s, "a b/c d");
    free(s);
    s = fds__param_decode("x%41yz", 4); /* only the first vlen bytes */
    REQUIRE(s);
    ASSERT_STR(s, "xA");
    free(s);
}

static void test_path_split(void)
{
    char p1[] = "/logs%2F2024/_doc/a%20b";
    char *seg[FDS_PATH_SEGMENTS_MAX];
    unsigned n = 99;
    ASSERT_EQ(fds__path_split(p1, seg, &n), 0);
    REQUIRE_EQ(n, 3);
    ASSERT_STR(seg[0], "logs/2024"); /* an escaped '/' stays in its segment */
    ASSERT_STR(seg[1], "_doc");
    ASSERT_STR(seg[2], "a b");

    char p2[] = "/";
    ASSERT_EQ(fds__path_split(p2, seg, &n), 0);
    ASSERT_EQ(n, 0);

    char p3[] = "/a/b/c/d/e/f/g/h/i";
    ASSERT_EQ(fds__path_split(p3, seg, &n), FDS_PATH_TOO_MANY);
    ASSERT_EQ(n, FDS_PATH_SEGMENTS_MAX);

    char p4[] = "/idx/_doc/a%00b";
    ASSERT_EQ(fds__path_split(p4, seg, &n), FDS_PATH_BAD_TEXT);
    char p5[] = "/idx/%FF";
    ASSERT_EQ(fds__path_split(p5, seg, &n), FDS_PATH_BAD_TEXT);
    ASSERT_EQ(n, 1); /* filled up to the failure */
}

static void test_params(void)
{
    static const char *const kv[] = {"v", "", "pretty", "false", "size", "10",
                                     "only", "true"};
    fds_req r = req_kv(kv, 4, NULL);
    ASSERT_STR(fds__req_param(&r, "size"), "10");
    ASSERT(fds__req_param(&r, "missing") == NULL);
    ASSERT(fds__req_param_bool(&r, "v", false));      /* a bare flag */
    ASSERT(!fds__req_param_bool(&r, "pretty", true)); /* "false" */
    ASSERT(fds__req_param_bool(&r, "missing", true)); /* the default */
    ASSERT(!fds__req_param_bool(&r, "size", true));   /* not "true" */

    fds_resp o = {0};
    ASSERT(fds__req_param_only(&r, &o, "only", 1));
    ASSERT(fds__req_param_only(&r, &o, "missing", 0));
    ASSERT(o.body == NULL);
    ASSERT(!fds__req_param_only(&r, &o, "only", 0)); /* true, only false is */
    ASSERT_EQ(o.status, 400);
    cJSON *j = resp_parse(&o);
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    ASSERT_STR(jstr(err, "reason"), "[only=true] is not supported: only [false] is");
    cJSON_Delete(j);
    free(o.body);

    o = (fds_resp){0};
    ASSERT(!fds__req_param_only(&r, &o, "size", -1)); /* not a boolean */
    ASSERT_EQ(o.status, 400);
    ASSERT(o.body && strstr(o.body, "Failed to parse value [10]"));
    free(o.body);
}

static void test_check_params(void)
{
    static const char *const kv[] = {"pretty", "", "size", "1", "bogus", "x"};
    static const char *const allowed[] = {"size", NULL};
    static char s0[] = "idx", s1[] = "_search";
    fds_req r = req_kv(kv, 2, NULL);
    r.seg[0] = s0;
    r.seg[1] = s1;
    r.nseg = 2;
    fds_resp o = {0};
    ASSERT(fds__req_check_params(&r, &o, allowed)); /* pretty is common */
    ASSERT(o.body == NULL);
    r.nkv = 3;
    ASSERT(!fds__req_check_params(&r, &o, allowed));
    ASSERT_EQ(o.status, 400);
    cJSON *j = resp_parse(&o);
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    ASSERT_STR(jstr(err, "type"), "illegal_argument_exception");
    ASSERT_STR(jstr(err, "reason"),
               "request [/idx/_search] contains unrecognized parameter: [bogus]");
    cJSON_Delete(j);
    free(o.body);

    char path[FDS_REQ_PATH_MAX];
    fds__req_path(&r, path, sizeof path);
    ASSERT_STR(path, "/idx/_search");
    fds__req_path(&r, path, 6); /* cut to the buffer */
    ASSERT_STR(path, "/idx/");
}

static void test_body_json(void)
{
    fds_err e;
    fds_err_clear(&e);
    cJSON *j = (cJSON *)1;
    fds_req r = req_kv(NULL, 0, " \r\n\t ");
    ASSERT_EQ(fds__body_json(&r, &j, &e), 0); /* blank: no body */
    ASSERT(j == NULL);

    r = req_kv(NULL, 0, " {\"a\":1} \n");
    ASSERT_EQ(fds__body_json(&r, &j, &e), 0);
    REQUIRE(j);
    ASSERT_EQ(cJSON_GetObjectItemCaseSensitive(j, "a")->valueint, 1);
    cJSON_Delete(j);

    r = req_kv(NULL, 0, "{\"a\":1} x");
    ASSERT_EQ(fds__body_json(&r, &j, &e), FDS_EPARSE);
    ASSERT(j == NULL);
    ASSERT_EQ(e.kind, FDS_KIND_PARSE);
    ASSERT_STR(e.reason, "request body has trailing content at byte 8");

    fds_err_clear(&e);
    r = req_kv(NULL, 0, "{\"a\":}");
    ASSERT_EQ(fds__body_json(&r, &j, &e), FDS_EPARSE);
    ASSERT(strstr(e.reason, "request body is not valid JSON"));

    /* duplicate keys parse, and the check refuses them */
    fds_err_clear(&e);
    r = req_kv(NULL, 0, "{\"a\":1,\"a\":2}");
    ASSERT_EQ(fds__body_json(&r, &j, &e), 0);
    cJSON_Delete(j);
    j = (cJSON *)1;
    ASSERT(fds__body_checked(&r, &j, &e) != 0);
    ASSERT(j == NULL);
    ASSERT(e.reason[0] != 0);
}

/* ---- response.c ---------------------------------------------------------- */

static void test_error_shape(void)
{
    fds_err e;
    fds_err_clear(&e);
    fds_err_setk(&e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND, "no such index [%s]",
                 "logs");
    snprintf(e.index, sizeof e.index, "logs");
    fds_resp o = {0};
    fds__resp_error(&o, &e);
    ASSERT_EQ(o.status, 404);
    ASSERT_STR(o.content_type, "application/json");
    /* root_cause comes first, as Elasticsearch prints it */
    REQUIRE(o.body);
    ASSERT(!strncmp(o.body, "{\"error\":{\"root_cause\":[", 24));
    cJSON *j = resp_parse(&o);
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    ASSERT_STR(jstr(err, "type"), "index_not_found_exception");
    ASSERT_STR(jstr(err, "reason"), "no such index [logs]");
    ASSERT_STR(jstr(err, "resource.type"), "index_or_alias");
    ASSERT_STR(jstr(err, "resource.id"), "logs");
    ASSERT_STR(jstr(err, "index"), "logs");
    const cJSON *rc = cJSON_GetObjectItemCaseSensitive(err, "root_cause");
    REQUIRE(cJSON_IsArray(rc) && cJSON_GetArraySize(rc) == 1);
    ASSERT_STR(jstr(rc->child, "type"), "index_not_found_exception");
    ASSERT_EQ(cJSON_GetObjectItemCaseSensitive(j, "status")->valueint, 404);
    cJSON_Delete(j);
    free(o.body);

    /* a cause: in the error, not in its root cause */
    fds_err_clear(&e);
    fds_err_setk(&e, FDS_EPARSE, FDS_KIND_QUERY_PARSE, "bad query");
    e.cause_kind = FDS_KIND_NUMBER_FORMAT;
    snprintf(e.cause, sizeof e.cause, "For input string: \"x\"");
    o = (fds_resp){0};
    fds__resp_error(&o, &e);
    ASSERT_EQ(o.status, 400);
    j = resp_parse(&o);
    err = cJSON_GetObjectItemCaseSensitive(j, "error");
    ASSERT_STR(jstr(err, "type"), "parsing_exception");
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(err, "caused_by");
    ASSERT_STR(jstr(by, "type"), "number_format_exception");
    ASSERT_STR(jstr(by, "reason"), "For input string: \"x\"");
    rc = cJSON_GetObjectItemCaseSensitive(err, "root_cause");
    ASSERT(!cJSON_GetObjectItemCaseSensitive(rc ? rc->child : NULL, "caused_by"));
    cJSON_Delete(j);
    free(o.body);

    /* the per-item error object (mget docs) */
    cJSON *item = fds__error_json(&e);
    ASSERT_STR(jstr(item, "type"), "parsing_exception");
    ASSERT(cJSON_GetObjectItemCaseSensitive(item, "root_cause") == item->child);
    cJSON_Delete(item);
}

static void test_errorf_and_header(void)
{
    fds_resp o = {0};
    fds__resp_errorf(&o, 409, "version_conflict_engine_exception",
                     "[%s]: version conflict, current version [%d]", "7", 3);
    ASSERT_EQ(o.status, 409);
    cJSON *j = resp_parse(&o);
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    ASSERT_STR(jstr(err, "reason"), "[7]: version conflict, current version [3]");
    ASSERT_EQ(cJSON_GetObjectItemCaseSensitive(j, "status")->valueint, 409);
    cJSON_Delete(j);

    /* the header a 401 lists (replaces the answer before it) */
    fds_err e;
    fds_err_clear(&e);
    snprintf(e.reason, sizeof e.reason, "missing authentication credentials");
    fds__resp_error_as(&o, &e, 401, "security_exception", "WWW-Authenticate",
                       "Basic realm=\"security\"");
    ASSERT_EQ(o.status, 401);
    j = resp_parse(&o);
    err = cJSON_GetObjectItemCaseSensitive(j, "error");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(err, "header");
    ASSERT_STR(jstr(h, "WWW-Authenticate"), "Basic realm=\"security\"");
    cJSON_Delete(j);

    fds__resp_simple_error(&o, 406, "Content-Type header is missing");
    ASSERT_EQ(o.status, 406);
    ASSERT_STR(o.body, "{\"error\":\"Content-Type header is missing\",\"status\":406}");
    free(o.body);
}

static void test_warnings_and_bodies(void)
{
    fds_resp o = {0};
    fds__resp_warn(&o, "a");
    fds__resp_warn(&o, "b");
    fds__resp_warn(&o, "a"); /* the same text once */
    ASSERT_EQ(o.nwarnings, 2);
    for (int i = 0; i < 10; i++)
        fds__resp_warn(&o, i % 2 ? "c" : i % 3 ? "d" : "e");
    ASSERT_EQ(o.nwarnings, FDS_RESP_WARNINGS_MAX);

    fds_strbuf b = {0};
    fds_strbuf_puts(&b, "{\"ok\":true}");
    fds__resp_strbuf(&o, 201, &b);
    ASSERT_EQ(o.status, 201);
    ASSERT_STR(o.body, "{\"ok\":true}");
    ASSERT_EQ(o.len, 11);

    fds_strbuf bad = {0};
    fds_strbuf_puts(&bad, "partial");
    bad.oom = 1;
    fds__resp_strbuf(&o, 200, &bad); /* out of memory while building: 500 */
    ASSERT_EQ(o.status, 500);

    fds__resp_json(&o, 200, NULL);
    ASSERT_EQ(o.status, 500);
    ASSERT_STR(o.body, "{\"error\":\"out of memory\",\"status\":500}");

    fds__resp_raw(&o, 200, strdup("x"), 1, "text/plain");
    ASSERT_STR(o.content_type, "text/plain");
    free(o.body);
}

/* ---- cat.c ------------------------------------------------------------------ */

static const char *const COLS[] = {"index|i|idx", "docs.count|dc", "*size|s",
                                   "health|h"};

/* Rows (index, docs.count, size, health) as _cat handlers build them. */
static char ***cat_rows(void)
{
    static const char *const cells[][4] = {{"b", "10", "1kb", "green"},
                                           {"a", "9", "2kb", NULL},
                                           {"c", "100", "3kb", "yellow"}};
    char ***rows = calloc(3, sizeof *rows);
    for (int i = 0; i < 3; i++) {
        rows[i] = calloc(4, sizeof **rows);
        for (int c = 0; c < 4; c++)
            rows[i][c] = cells[i][c] ? strdup(cells[i][c]) : NULL;
    }
    return rows;
}

static void cat_free(char ***rows)
{
    for (int i = 0; i < 3; i++) {
        for (int c = 0; c < 4; c++)
            free(rows[i][c]);
        free(rows[i]);
    }
    free(rows);
}

/* Render the table of cat_rows() with URL parameters kv into o. */
static void cat_run(const char *const *kv, unsigned n, fds_resp *o)
{
    fds_req r = req_kv(kv, n, NULL);
    char ***rows = cat_rows();
    *o = (fds_resp){0};
    fds__cat_render(&r, o, COLS, 4, rows, 3);
    cat_free(rows);
}

static void test_cat_text(void)
{
    fds_resp o;
    cat_run(NULL, 0, &o); /* default columns, no header, padded */
    ASSERT_EQ(o.status, 200);
    ASSERT_STR(o.content_type, "text/plain; charset=UTF-8");
    ASSERT_STR(o.body, "b 10  green\n"
                       "a 9   \n"
                       "c 100 yellow\n");
    free(o.body);

    static const char *const v[] = {"v", "", "s", "dc:desc"};
    cat_run(v, 2, &o); /* ?v&s=dc:desc: numbers sort as numbers */
    ASSERT_STR(o.body, "index docs.count health\n"
                       "c     100        yellow\n"
                       "b     10         green\n"
                       "a     9          \n");
    free(o.body);

    static const char *const h[] = {"h", "s,i", "s", "index"};
    cat_run(h, 2, &o); /* ?h= by alias shows a hidden column, in its order */
    ASSERT_STR(o.body, "2kb a\n"
                       "1kb b\n"
                       "3kb c\n");
    free(o.body);

    static const char *const wild[] = {"h", "d*,h*", "v", ""};
    cat_run(wild, 2, &o);
    ASSERT_STR(o.body, "docs.count health\n"
                       "10         green\n"
                       "9          \n"
                       "100        yellow\n");
    free(o.body);
}

static void test_cat_json_and_errors(void)
{
    static const char *const js[] = {"format", "json", "s", "index", "h", "i,h"};
    fds_resp o;
    cat_run(js, 3, &o);
    ASSERT_EQ(o.status, 200);
    ASSERT_STR(o.body, "[{\"index\":\"a\",\"health\":null},"
                       "{\"index\":\"b\",\"health\":\"green\"},"
                       "{\"index\":\"c\",\"health\":\"yellow\"}]");
    free(o.body);

    static const char *const bad[] = {"s", "nope:desc"};
    cat_run(bad, 1, &o);
    ASSERT_EQ(o.status, 400);
    cJSON *j = resp_parse(&o);
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    ASSERT_STR(jstr(err, "type"), "unsupported_operation_exception");
    ASSERT_STR(jstr(err, "reason"), "Unable to sort by unknown sort key `nope`");
    cJSON_Delete(j);
    free(o.body);
}

/* ---- router.c ----------------------------------------------------------------- */

/* Does METHOD PATH go to a write thread?  -1: the path does not split. */
static int writes(const char *method, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    fds_req r = {.method = method};
    if (fds__path_split(buf, r.seg, &r.nseg))
        return -1;
    return fds__route_writes(&r);
}

static void test_route_writes(void)
{
    static const struct {
        const char *method, *path;
        int writes;
    } cases[] = {
        {"POST", "/_bulk", 1}, {"PUT", "/logs/_bulk", 1},
        {"PUT", "/logs/_doc/1", 1}, {"POST", "/logs/_doc", 1},
        {"DELETE", "/logs/_doc/1", 1}, {"POST", "/logs/_update/1", 1},
        {"POST", "/_reindex", 1}, {"POST", "/logs/_clone/copy", 1},
        /* reads, and index admin that builds no segment, stay on the HTTP
         * thread; HEAD takes GET's route */
        {"GET", "/logs/_doc/1", 0}, {"HEAD", "/logs/_doc/1", 0},
        {"POST", "/logs/_search", 0}, {"PUT", "/logs", 0},
        {"GET", "/_cat/indices", 0},
        /* no route: not a write */
        {"GET", "/_bulk", 0}, {"POST", "/logs/_doc/1/extra", 0},
        {"PATCH", "/logs/_doc/1", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ASSERTF(writes(cases[i].method, cases[i].path) == cases[i].writes,
                "%s %s", cases[i].method, cases[i].path);
}

/* The shortest "%.{p}e" (p = 0..16) that strtod reads back as d, one
 * precision at a time. */
static void shortest_e_ref(double d, char *e, size_t cap)
{
    for (int p = 0; p <= 16; p++) {
        snprintf(e, cap, "%.*e", p, d);
        if (strtod(e, NULL) == d)
            return;
    }
}

/* fds__shortest_e (by bisection) against the search one precision at a
 * time, on random bit patterns, powers of two, short decimals and their
 * neighbours; and fds__java_double's layouts of Java's Double.toString. */
static void test_java_double(void)
{
    char out[FDS_AGG_DOUBLE_STR], e[FDS_AGG_DOUBLE_STR], want[FDS_AGG_DOUBLE_STR];
    static const struct { double d; const char *s; } known[] = {
        {1.0, "1.0"}, {0.011, "0.011"}, {1e7, "1.0E7"}, {1234567.5, "1234567.5"},
        {1e-3, "0.001"}, {9.999e-4, "9.999E-4"}, {-2.5, "-2.5"}, {0.1 + 0.2, "0.30000000000000004"},
        {1.7976931348623157e308, "1.7976931348623157E308"},
        {-0.0, "-0.0"}, {NAN, "null"}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        fds__java_double(known[i].d, out);
        ASSERT_STR(out, known[i].s);
    }
    uint64_t st = 9;
    for (int i = 0; i < 100000; i++) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        double d;
        uint64_t bits = st;
        if (i % 4 == 1) /* a power of two */
            bits &= 0xfff0000000000000u;
        memcpy(&d, &bits, sizeof d);
        if (i % 4 == 2) /* a short decimal, or (i % 8 == 6) a neighbour */
            d = (double)(int64_t)(st >> 40) / 1000.0;
        if (i % 8 == 6)
            d = nextafter(d, INFINITY);
        if (!isfinite(d))
            continue;
        fds__shortest_e(d, e, sizeof e);
        shortest_e_ref(d, want, sizeof want);
        ASSERTF(!strcmp(e, want), "%s for %.17g, want %s", e, d, want);
    }
}

int main(void)
{
    RUN(test_param_decode);
    RUN(test_path_split);
    RUN(test_params);
    RUN(test_check_params);
    RUN(test_body_json);
    RUN(test_error_shape);
    RUN(test_errorf_and_header);
    RUN(test_warnings_and_bodies);
    RUN(test_cat_text);
    RUN(test_cat_json_and_errors);
    RUN(test_route_writes);
    RUN(test_java_double);
    TEST_DONE();
}
