/*
 * test_bounds.c: requests that must neither crash, stall nor starve the
 * server, and the exact answers of edge values -- duplicate keys, `_source`
 * lists given twice, wildcard patterns, out-of-range bounds, request
 * limits, NUL bytes and invalid UTF-8 in search bodies.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "qtest.h"
#include "query.h"
#include "search_render.h"
#include "ast/search_request.h"

static fds_mapping *mapping;

static int parse(const char *body, fds_search_request **r, fds_err *err)
{
    *r = NULL;
    fds_err_clear(err);
    return fds_search_parse(body, strlen(body), mapping, 0, r, err);
}

static int parse_rc(const char *body, fds_err *err)
{
    fds_search_request *r;
    int rc = parse(body, &r, err);
    fds_search_request_free(r);
    return rc;
}

/* duplicate keys anywhere in a body: 400 x_content_parse_exception with
 * Jackson's position (just after the repeated name) */
static void test_duplicate_keys(void)
{
    fds_err err;
    const char *b = "{\"_source\":{\"includes\":[\"a\",\"b\"],\"includes\":[\"c\"]}}";
    ASSERT(parse_rc(b, &err) == FDS_EPARSE);
    ASSERT(err.kind == FDS_KIND_CONTENT_PARSE);
    ASSERT_STR(err.reason, "[1:44] Duplicate field 'includes'");
    ASSERT(parse_rc("{\"query\":{\"bool\":{\"must\":[],\n\"must\":[]}}}", &err) ==
           FDS_EPARSE);
    ASSERT_STR(err.reason, "[2:7] Duplicate field 'must'");
    ASSERT(parse_rc("{\"size\":1,\"size\":2}", &err) == FDS_EPARSE);
    ASSERT(err.kind == FDS_KIND_CONTENT_PARSE);
    /* the same name in different objects is fine */
    ASSERT(parse_rc("{\"query\":{\"bool\":{\"must\":[{\"term\":{\"k\":\"a\"}},"
                    "{\"term\":{\"k\":\"b\"}}]}}}", &err) == 0);
    /* "include" and "includes" name one list: the last one is kept (and the
     * first freed) as Elasticsearch keeps it */
    fds_search_request *r;
    ASSERT(parse("{\"_source\":{\"include\":[\"a\",\"b\"],\"includes\":[\"c\"],"
                 "\"exclude\":\"x\",\"excludes\":[\"y\",\"z\"]}}", &r, &err) == 0);
    ASSERT(r && r->nincludes == 1 && !strcmp(r->includes[0], "c"));
    ASSERT(r && r->nexcludes == 2 && !strcmp(r->excludes[1], "z"));
    fds_search_request_free(r);
    /* the shared check on its own */
    fds_err_clear(&err);
    ASSERT(fds_json_check_body("{\"index\":{\"_index\":\"a\",\"_index\":\"b\"}}",
                               38, &err) == FDS_EPARSE);
    ASSERT_STR(err.reason, "[1:32] Duplicate field '_index'");
    fds_err_clear(&err);
    ASSERT(fds_json_check_body("  ", 2, &err) == 0);
    ASSERT(fds_json_check_body("[1,{\"a\":1},{\"a\":2}]", 19, &err) == 0);
}

/* ---- a one-segment index ---------------------------------------------------- */

static fds_sidx *seg_sidx;
static fds_search_segment seg;
static const char **seg_docs;

/* Index docs[0..n) (ids "0", "1", ...) as the one segment of the tests. */
static void seg_build(const char **docs, size_t n)
{
    fds_err err;
    fds_sidx_writer *w = fds_sidx_writer_create(mapping);
    for (size_t d = 0; d < n; d++) {
        char id[24];
        snprintf(id, sizeof id, "%zu", d);
        fds_err_clear(&err);
        ASSERT(fds_sidx_writer_add(w, (uint32_t)d, id, strlen(id),
                                   (const uint8_t *)docs[d], strlen(docs[d]),
                                   &err) == 0);
    }
    char path[] = "/tmp/fds-qbounds-XXXXXX";
    close(mkstemp(path));
    ASSERT(fds_sidx_writer_write(w, path, &err) == 0);
    fds_sidx_writer_free(w);
    ASSERT(fds_sidx_open(path, &seg_sidx, &err) == 0);
    unlink(path);
    seg = (fds_search_segment){.sidx = seg_sidx};
    seg_docs = docs;
}

static void seg_free(void)
{
    fds_sidx_close(seg_sidx);
    seg_sidx = NULL;
}

static int fetch(void *arg, const fds_hit *h, size_t n, const uint8_t **src,
                 size_t *len, fds_err *err)
{
    (void)arg;
    (void)err;
    for (size_t i = 0; i < n; i++) {
        src[i] = (const uint8_t *)seg_docs[h[i].doc];
        len[i] = strlen(seg_docs[h[i].doc]);
    }
    return 0;
}

/* The rendered response of `body` over the segment (malloc'd), NULL if it
 * does not parse or run; *total gets hits.total. */
static char *search(const char *body, uint64_t *total)
{
    fds_err err;
    fds_search_request *r;
    if (parse(body, &r, &err)) {
        fprintf(stderr, "parse: %s\n  %s\n", err.reason, body);
        return NULL;
    }
    fds_search_result res;
    char *out = NULL;
    if (fds_search_execute(r, &seg, 1, &res, &err) == 0) {
        size_t len;
        if (total)
            *total = res.total;
        out = fds_search_render(r, &res, &seg, "i", 0, &(fds_hit_source){.fetch = fetch}, &len,
                                &err);
        fds_search_result_free(&res);
    }
    fds_search_request_free(r);
    return out;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* `_source` patterns with many stars take time linear in pattern x name
 * (the recursive matcher took 38 s for 12 stars against a 40-byte name) */
static void test_wildcards(void)
{
    static const char *docs[] = {
        "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":1,\"ab\":2,"
        "\"o\":{\"xay\":3,\"b\":4},\"aaaaaaaaaaaaaaaaaaaab\":5}"};
    seg_build(docs, 1);
    char pat[64] = {0};
    for (int i = 0; i < 16; i++)
        strcat(pat, "a*");
    char body[256];
    snprintf(body, sizeof body, "{\"_source\":[\"%sb\"]}", pat);
    double t0 = now_s();
    char *out = search(body, NULL);
    double dt = now_s() - t0;
    ASSERT(out && strstr(out, "\"_source\":{\"aaaaaaaaaaaaaaaaaaaab\":5}"));
    ASSERT(dt < 0.5);
    printf("16-star _source pattern: %.6f s\n", dt);
    free(out);
    /* what the patterns mean stays the same */
    out = search("{\"_source\":[\"*a*\"]}", NULL);
    ASSERT(out && strstr(out, "\"_source\":{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":1,"
                              "\"ab\":2,\"o\":{\"xay\":3},\"aaaaaaaaaaaaaaaaaaaab\":5}"));
    free(out);
    out = search("{\"_source\":[\"o.*\",\"a*b\"]}", NULL);
    ASSERT(out && strstr(out, "\"_source\":{\"ab\":2,\"o\":{\"xay\":3,\"b\":4},"
                              "\"aaaaaaaaaaaaaaaaaaaab\":5}"));
    free(out);
    out = search("{\"_source\":[\"*\"]}", NULL);
    ASSERT(out && strstr(out, "\"o\":{\"xay\":3,\"b\":4},"));
    free(out);
    out = search("{\"_source\":{\"excludes\":[\"**y\",\"a?\"]}}", NULL);
    ASSERT(out && strstr(out, "\"ab\":2,\"o\":{\"b\":4},"));
    if (fds_test_failures && out)
        fprintf(stderr, "%s\n", out);
    free(out);
    seg_free();
}

/* hits.total of `body`, UINT64_MAX when it does not run */
static uint64_t total_of(const char *body)
{
    uint64_t t = UINT64_MAX;
    char *out = search(body, &t);
    free(out);
    return out ? t : UINT64_MAX;
}

static uint64_t range_total(const char *field, const char *op, const char *v)
{
    char b[256];
    snprintf(b, sizeof b, "{\"query\":{\"range\":{\"%s\":{\"%s\":%s}}}}",
             field, op, v);
    uint64_t t = total_of(b);
    if (t == UINT64_MAX)
        fprintf(stderr, "  %s\n", b);
    return t;
}

/* bounds past the range of a long clamp (no undefined cast); non-finite
 * and unparsable ones are refused in Elasticsearch's words */
static void test_range_bounds(void)
{
    static const char *docs[] = {
        "{\"n\":9223372036854775807,\"d\":1.5}", "{\"n\":-9223372036854775808}",
        "{\"n\":0}", "{\"n\":9007199254740993}", "{\"n\":-5}"};
    seg_build(docs, 5);
    static const struct { const char *op, *v; uint64_t want; } cases[] = {
        {"lt", "1e19", 5}, {"lte", "1e19", 5}, {"gt", "1e19", 0},
        {"gte", "1e19", 0}, {"gt", "-1e19", 5}, {"gte", "-1e19", 5},
        {"lt", "-1e19", 0}, {"lte", "-1e19", 0},
        {"lt", "\"9223372036854775808\"", 5}, {"lt", "9223372036854775808", 5},
        {"gt", "9223372036854775807", 0}, {"gte", "9223372036854775807", 1},
        {"lt", "-9223372036854775808", 0}, {"lte", "-9223372036854775808", 1},
        {"gt", "-9223372036854775809", 5}, {"lt", "9223372036854775807", 4},
        {"gt", "9007199254740992", 2}, {"lte", "9007199254740993", 4},
        {"gt", "-5.5", 4}, {"lt", "-4.5", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t t = range_total("n", cases[i].op, cases[i].v);
        if (t != cases[i].want) {
            fprintf(stderr, "range n %s %s: %llu hits, want %llu\n",
                    cases[i].op, cases[i].v, (unsigned long long)t,
                    (unsigned long long)cases[i].want);
            fds_test_failures++;
        }
    }
    /* an equality never matches past the range */
    ASSERT(total_of("{\"query\":{\"term\":{\"n\":1e19}}}") == 0);
    ASSERT(total_of("{\"query\":{\"term\":{\"n\":-9223372036854775808}}}") == 1);
    fds_err err;
    ASSERT(parse_rc("{\"query\":{\"range\":{\"n\":{\"lt\":\"Infinity\"}}}}", &err) ==
           FDS_EINVAL);
    ASSERT(err.kind == FDS_KIND_INVALID_ARGUMENT);
    ASSERT_STR(err.reason, "Value [Infinity] is out of range for a long");
    ASSERT(parse_rc("{\"query\":{\"range\":{\"n\":{\"gte\":\"-1e999\"}}}}", &err) ==
           FDS_EINVAL);
    ASSERT_STR(err.reason, "Value [-1e999] is out of range for a long");
    ASSERT(parse_rc("{\"query\":{\"range\":{\"n\":{\"lt\":\"NaN\"}}}}", &err) ==
           FDS_EINVAL);
    ASSERT(err.kind == FDS_KIND_NUMBER_FORMAT);
    ASSERT_STR(err.reason, "For input string: \"NaN\"");
    ASSERT(parse_rc("{\"query\":{\"range\":{\"n\":{\"lt\":\"12abc\"}}}}", &err) ==
           FDS_EINVAL);
    ASSERT_STR(err.reason, "For input string: \"12abc\"");
    ASSERT(parse_rc("{\"query\":{\"range\":{\"d\":{\"lt\":\"Infinity\"}}}}", &err) ==
           FDS_EINVAL);
    ASSERT_STR(err.reason, "[double] supports only finite values, but got "
                           "[Infinity]");
    ASSERT(parse_rc("{\"query\":{\"range\":{\"d\":{\"gt\":\"nan\"}}}}", &err) ==
           FDS_EINVAL);
    ASSERT_STR(err.reason, "[double] supports only finite values, but got [NaN]");
    ASSERT(range_total("d", "lt", "1e308") == 1);
    seg_free();
}

/* a growing string buffer for generated bodies */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0,
                          fmt, ap);
        va_end(ap);
        if (b->p && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
}

/* {"query":{"bool":{"should":[n term clauses]}}} */
static char *many_should(int n)
{
    sbuf b = {0};
    sb_add(&b, "{\"query\":{\"bool\":{\"should\":[");
    for (int i = 0; i < n; i++)
        sb_add(&b, "%s{\"term\":{\"k\":\"v%d\"}}", i ? "," : "", i);
    sb_add(&b, "]}}}");
    return b.p;
}

/* n bool queries nested in one another around a term */
static char *nested(int n)
{
    sbuf b = {0};
    sb_add(&b, "{\"query\":");
    for (int i = 0; i < n; i++)
        sb_add(&b, "{\"bool\":{\"must\":[");
    sb_add(&b, "{\"term\":{\"k\":\"x\"}}");
    for (int i = 0; i < n; i++)
        sb_add(&b, "]}}");
    sb_add(&b, "}");
    return b.p;
}

/* every request's work is bounded; past a bound the error names it */
static void test_limits(void)
{
    fds_err err;
    char *b = many_should(FDS_MAX_CLAUSE_COUNT);
    ASSERT(parse_rc(b, &err) == 0);
    free(b);
    b = many_should(FDS_MAX_CLAUSE_COUNT + 1);
    ASSERT(parse_rc(b, &err) == FDS_ETOOBIG);
    ASSERT(err.kind == FDS_KIND_TOO_MANY_CLAUSES);
    ASSERT_STR(err.reason, "Query contains too many nested clauses; "
                           "maxClauseCount is set to 4096");
    free(b);
    /* the terms of an analysed match count, also through q= */
    sbuf m = {0};
    sb_add(&m, "{\"query\":{\"match\":{\"msg\":\"");
    for (int i = 0; i <= FDS_MAX_CLAUSE_COUNT; i++)
        sb_add(&m, "w%d ", i);
    sb_add(&m, "\"}}}");
    ASSERT(parse_rc(m.p, &err) == FDS_ETOOBIG);
    ASSERT(err.kind == FDS_KIND_TOO_MANY_CLAUSES);
    free(m.p);
    m = (sbuf){0};
    for (int i = 0; i <= FDS_MAX_CLAUSE_COUNT; i++)
        sb_add(&m, "msg:w%d ", i);
    fds_search_request *r;
    ASSERT(parse("{}", &r, &err) == 0);
    ASSERT(fds_search_apply_param(r, "q", m.p, &err) == FDS_ETOOBIG);
    ASSERT(err.kind == FDS_KIND_TOO_MANY_CLAUSES);
    fds_search_request_free(r);
    free(m.p);
    /* nesting: Elasticsearch's indices.query.bool.max_nested_depth */
    b = nested(FDS_MAX_NESTED_DEPTH - 1);
    ASSERT(parse_rc(b, &err) == 0);
    free(b);
    b = nested(FDS_MAX_NESTED_DEPTH);
    ASSERT(parse_rc(b, &err) == FDS_ETOOBIG);
    ASSERT(err.kind == FDS_KIND_INVALID_ARGUMENT);
    ASSERT_STR(err.reason, "The nested depth of the query exceeds the maximum "
                           "nested depth for queries set in "
                           "[indices.query.bool.max_nested_depth]");
    free(b);
    /* terms in a terms query: index.max_terms_count */
    m = (sbuf){0};
    sb_add(&m, "{\"query\":{\"terms\":{\"k\":[");
    for (int i = 0; i <= FDS_MAX_TERMS_COUNT; i++)
        sb_add(&m, "%s%d", i ? "," : "", i);
    sb_add(&m, "]}}}");
    ASSERT(parse_rc(m.p, &err) == FDS_ETOOBIG);
    ASSERT(strstr(err.reason, "The number of terms [65537] used in the Terms "
                              "Query request has exceeded the allowed maximum "
                              "of [65536]") != NULL);
    free(m.p);
    ASSERT(parse_rc("{\"query\":{\"terms\":{\"n\":[1,2,3,4,5,6,7]}}}", &err) == 0);
    /* _source patterns: count and length */
    m = (sbuf){0};
    sb_add(&m, "{\"_source\":{\"includes\":[");
    for (int i = 0; i < FDS_SOURCE_PATTERNS_MAX; i++)
        sb_add(&m, "%s\"f%d\"", i ? "," : "", i);
    sb_add(&m, "],\"excludes\":\"x\"}}");
    ASSERT(parse_rc(m.p, &err) == FDS_ETOOBIG);
    ASSERT_STR(err.reason, "[_source] has [65] include and exclude patterns, "
                           "more than the limit of [64]");
    free(m.p);
    char pat[FDS_SOURCE_PATTERN_LEN_MAX + 2];
    memset(pat, '*', sizeof pat - 1);
    pat[sizeof pat - 1] = 0;
    char body[FDS_SOURCE_PATTERN_LEN_MAX + 64];
    snprintf(body, sizeof body, "{\"_source\":\"%s\"}", pat);
    ASSERT(parse_rc(body, &err) == FDS_ETOOBIG);
    ASSERT_STR(err.reason, "[_source] pattern of [257] bytes is longer than "
                           "the limit of [256]");
    pat[sizeof pat - 2] = 0;
    snprintf(body, sizeof body, "{\"_source\":\"%s\"}", pat);
    ASSERT(parse_rc(body, &err) == 0);
}

/* strings are read whole: a NUL does not cut a term (cJSON's strings stop
 * there); invalid UTF-8 anywhere in a body is refused */
static void test_exact_strings(void)
{
    static const char *docs[] = {"{\"k\":\"a\\u0000b\"}", "{\"k\":\"a\"}",
                                 "{\"k\":\"a\\u0000c\",\"n\":12345678901234567}"};
    seg_build(docs, 3);
    ASSERT(total_of("{\"query\":{\"term\":{\"k\":\"a\\u0000b\"}}}") == 1);
    ASSERT(total_of("{\"query\":{\"term\":{\"k\":{\"value\":\"a\\u0000c\"}}}}") == 1);
    ASSERT(total_of("{\"query\":{\"match\":{\"k\":\"a\\u0000b\"}}}") == 1);
    ASSERT(total_of("{\"query\":{\"term\":{\"k\":\"a\"}}}") == 1);
    ASSERT(total_of("{\"query\":{\"terms\":{\"k\":[\"a\\u0000b\",\"a\\u0000c\"]}}}") == 2);
    /* a quoted big integer before the string keeps the pairing right */
    ASSERT(total_of("{\"query\":{\"bool\":{\"should\":[{\"term\":{\"n\":"
                    "12345678901234567}},{\"term\":{\"k\":\"a\\u0000b\"}}]}}}") == 2);
    /* a fraction or exponent of more than 15 digits is a number, not a big
     * integer to quote (Python's json writes 0.30000000000000004) */
    ASSERT(total_of("{\"query\":{\"term\":{\"k\":{\"value\":\"a\",\"boost\":"
                    "1.0000000000000000}}},\"min_score\":0.30000000000000004}") == 1);
    ASSERT(total_of("{\"query\":{\"range\":{\"n\":{\"gte\":"
                    "1.0000000000000000001e3,\"lt\":1.2345678901234567e17}}}}") == 1);
    ASSERT(total_of("{\"query\":{\"range\":{\"n\":{\"gt\":"
                    "12345678901234567.0000000000000001}}}}") == 0);
    char *out = search("{\"query\":{\"term\":{\"k\":\"a\\u0000b\"}}}", NULL);
    ASSERT(out && strstr(out, "\"_id\":\"0\""));
    free(out);
    fds_err err;
    ASSERT(parse_rc("{\"query\":{\"term\":{\"k\":\"\xff\"}}}", &err) == FDS_EPARSE);
    ASSERT(err.kind == FDS_KIND_CONTENT_PARSE);
    ASSERT(parse_rc("{\"query\":{\"term\":{\"k\xc3\":\"x\"}}}", &err) == FDS_EPARSE);
    ASSERT(err.kind == FDS_KIND_CONTENT_PARSE);
    ASSERT(parse_rc("{\"query\":{\"term\":{\"k\":\"\xed\xa0\x80\"}}}", &err) ==
           FDS_EPARSE); /* an encoded surrogate is not UTF-8 */
    ASSERT(parse_rc("{\"query\":{\"term\":{\"k\":\"\xc3\xa9\"}}}", &err) == 0);
    seg_free();
}

/* index.max_result_window is the index's, not a constant */
static void test_result_window(void)
{
    fds_err err;
    fds_search_request *r;
    const char *b = "{\"size\":51}";
    fds_err_clear(&err);
    ASSERT(fds_search_parse_window(b, strlen(b), mapping, 50, 0, &r, &err) ==
           FDS_EINVAL);
    ASSERT(strstr(err.reason, "less than or equal to: [50] but was [51]"));
    b = "{\"size\":15000}";
    fds_err_clear(&err);
    ASSERT(fds_search_parse_window(b, strlen(b), mapping, 20000, 0, &r, &err) ==
           0);
    ASSERT(fds_search_apply_param(r, "from", "5000", &err) == 0);
    ASSERT(fds_search_apply_param(r, "from", "5001", &err) == FDS_EINVAL);
    ASSERT(strstr(err.reason, "[20000] but was [20001]"));
    fds_search_request_free(r);
    ASSERT(parse_rc(b, &err) == FDS_EINVAL); /* the default, 10000 */
}

/* The first hit's "_id" and sort value (digits as rendered) of `body`. */
static int page1(const char *body, char *id, size_t idcap, char *sv,
                 size_t svcap)
{
    char *out = search(body, NULL);
    const char *i = out ? strstr(out, "\"_id\":\"") : NULL;
    const char *v = out ? strstr(out, "\"sort\":[") : NULL;
    if (!i || !v) {
        free(out);
        return -1;
    }
    snprintf(id, idcap, "%.*s", (int)strcspn(i + 7, "\""), i + 7);
    snprintf(sv, svcap, "%.*s", (int)strcspn(v + 8, "]"), v + 8);
    free(out);
    return 0;
}

/* sort values and search_after on a long past 2^53 stay exact: paging one
 * hit at a time visits every document once, in order */
static void test_exact_long_sort(void)
{
    static const char *docs[] = {
        "{\"n\":9007199254740993}", "{\"n\":9007199254740992}",
        "{\"n\":9007199254740995}", "{\"n\":9007199254740994}",
        "{\"n\":9223372036854775807}", "{\"n\":-9223372036854775807}"};
    seg_build(docs, 6);
    static const char *asc[] = {"5", "1", "0", "3", "2", "4"};
    static const char *asc_v[] = {"-9223372036854775807", "9007199254740992",
                                  "9007199254740993", "9007199254740994",
                                  "9007199254740995", "9223372036854775807"};
    for (int quoted = 0; quoted < 2; quoted++)
        for (int desc = 0; desc < 2; desc++) {
            char body[256], id[32], sv[64], after[80] = "";
            for (int k = 0; k < 6; k++) {
                int want = desc ? 5 - k : k;
                snprintf(body, sizeof body, "{\"size\":1,\"sort\":[{\"n\":\"%s\"}]%s}",
                         desc ? "desc" : "asc", after);
                if (page1(body, id, sizeof id, sv, sizeof sv)) {
                    fprintf(stderr, "no hit: %s\n", body);
                    fds_test_failures++;
                    break;
                }
                if (strcmp(id, asc[want]) || strcmp(sv, asc_v[want])) {
                    fprintf(stderr, "page %d (%s): _id %s sort %s, want %s %s\n",
                            k, desc ? "desc" : "asc", id, sv, asc[want],
                            asc_v[want]);
                    fds_test_failures++;
                    break;
                }
                snprintf(after, sizeof after,
                         quoted ? ",\"search_after\":[\"%s\"]"
                                : ",\"search_after\":[%s]", sv);
            }
            /* past the last value: nothing */
            snprintf(body, sizeof body, "{\"size\":1,\"sort\":[{\"n\":\"%s\"}]%s}",
                     desc ? "desc" : "asc", after);
            uint64_t t = 0;
            char *out = search(body, &t);
            ASSERT(out && strstr(out, "\"hits\":[]"));
            free(out);
        }
    seg_free();
}

/* minimum_should_match far outside the clause count (a fuzzer found
 * 3.3e23, converted to int with undefined behaviour): "more than there
 * are" matches nothing, "all but more than there are" matches as 0 */
static void test_msm_extremes(void)
{
    static const char *docs[] = {"{\"msg\":\"a b\"}", "{\"msg\":\"a\"}",
                                 "{\"msg\":\"b c\"}"};
    seg_build(docs, 3);
    static const struct { const char *msm; uint64_t want; } cases[] = {
        {"3.33333e+23", 0}, {"-3.33333e+23", 3}, {"\"3.3e23\"", 0},
        {"\"-3.3e23\"", 3}, {"\"1e300%\"", 1}, {"\"-1e300%\"", 3},
        {"1", 3}, {"2", 1}, {"-1", 3}, {"\"50%\"", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char b[256];
        snprintf(b, sizeof b,
                 "{\"query\":{\"bool\":{\"should\":[{\"term\":{\"msg\":"
                 "\"a\"}},{\"term\":{\"msg\":\"b\"}}],"
                 "\"minimum_should_match\":%s}}}",
                 cases[i].msm);
        uint64_t t = total_of(b);
        if (t != cases[i].want) {
            fprintf(stderr, "minimum_should_match %s: %llu hits, want %llu\n",
                    cases[i].msm, (unsigned long long)t,
                    (unsigned long long)cases[i].want);
            fds_test_failures++;
        }
    }
    fds_err err;
    ASSERT(parse_rc("{\"query\":{\"bool\":{\"should\":[{\"term\":{\"msg\":"
                    "\"a\"}}],\"minimum_should_match\":\"inf\"}}}",
                    &err) != 0);
    seg_free();
}

/* `timeout`: past its deadline a search stops and says so; a timeout it
 * meets changes nothing (1 ns is past before the first check) */
static void test_timeout(void)
{
    enum { N = 20000 };
    static const char *docs[N];
    for (size_t i = 0; i < N; i++)
        docs[i] = i % 2 ? "{\"msg\":\"a b\"}" : "{\"msg\":\"a\"}";
    seg_build(docs, N);
    uint64_t t = 0;
    char *out = search("{\"size\":0,\"track_total_hits\":true}", &t);
    ASSERT(out && strstr(out, "\"timed_out\":false") && t == N);
    free(out);
    out = search("{\"size\":0,\"track_total_hits\":true,\"timeout\":\"30s\"}", &t);
    ASSERT(out && strstr(out, "\"timed_out\":false") && t == N);
    free(out);
    static const char *bodies[] = {
        "{\"track_total_hits\":true,\"timeout\":\"1nanos\"}",
        "{\"query\":{\"match\":{\"msg\":\"a b\"}},\"timeout\":\"1nanos\"}",
        "{\"query\":{\"match\":{\"msg\":\"b\"}},\"track_total_hits\":true,"
        "\"timeout\":\"0ms\"}",
        "{\"query\":{\"match_all\":{}},\"sort\":[\"_doc\"],\"timeout\":\"1nanos\","
        "\"track_total_hits\":true}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        t = N;
        out = search(bodies[i], &t);
        if (!out || !strstr(out, "\"timed_out\":true") || t >= N ||
            !strstr(out, "\"relation\":\"gte\"")) {
            fprintf(stderr, "timeout not applied: %s\n  %.300s\n", bodies[i],
                    out ? out : "(null)");
            fds_test_failures++;
        }
        free(out);
    }
    fds_err err;
    ASSERT(parse_rc("{\"timeout\":\"10\"}", &err) != 0 &&
           strstr(err.reason, "unit is missing or unrecognized"));
    ASSERT(parse_rc("{\"timeout\":10}", &err) != 0);
    ASSERT(parse_rc("{\"timeout\":\"-1\"}", &err) == 0);
    seg_free();
}

/* A disjunction whose terms are in most docs is scored term at a time
 * without a bitset, a non-zero sum marking a match (taat.c,
 * fds__taat_dense_worth): a boost of 0 scores every match 0, and each must
 * still count and be a hit; hits are only the docs with a term, whatever
 * the page's room. */
static void test_dense_windows(void)
{
    static const char *docs[] = {
        "{\"msg\":\"a b\"}", "{\"msg\":\"a\"}", "{\"msg\":\"c\"}",
        "{\"msg\":\"b b b\"}", "{\"msg\":\"c d\"}", "{\"msg\":\"a c\"}",
        "{\"msg\":\"b\"}",
    };
    seg_build(docs, sizeof docs / sizeof *docs);
    static const struct {
        const char *body;
        uint64_t want;
    } cases[] = {
        {"{\"query\":{\"match\":{\"msg\":\"a b\"}},\"size\":10}", 5},
        {"{\"query\":{\"match\":{\"msg\":{\"query\":\"a b\",\"boost\":0}}},"
         "\"size\":10}", 5},
        {"{\"query\":{\"match\":{\"msg\":{\"query\":\"a b\",\"boost\":0}}},"
         "\"size\":10,\"track_total_hits\":true}", 5},
        {"{\"query\":{\"match\":{\"msg\":\"a b d\"}},\"size\":3}", 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fds_err err;
        fds_search_request *r;
        ASSERT(parse(cases[i].body, &r, &err) == 0);
        fds_search_result res;
        ASSERT(fds_search_execute(r, &seg, 1, &res, &err) == 0);
        size_t page = cases[i].want < 10 ? cases[i].want : 10;
        if (strstr(cases[i].body, "\"size\":3"))
            page = 3;
        if (res.total != cases[i].want || res.nhits != page) {
            fprintf(stderr, "%s: total %llu, %zu hits; want %llu, %zu\n",
                    cases[i].body, (unsigned long long)res.total, res.nhits,
                    (unsigned long long)cases[i].want, page);
            fds_test_failures++;
        }
        for (size_t h = 0; h < res.nhits; h++)
            if (res.hits[h].doc == 2) { /* "c" alone: no term of the query */
                fprintf(stderr, "%s: doc 2 is a hit\n", cases[i].body);
                fds_test_failures++;
            }
        fds_search_result_free(&res);
        fds_search_request_free(r);
    }
    seg_free();
}

int main(void)
{
    mapping = fds_mapping_create();
    fds_err err;
    const char *mj = "{\"properties\":{\"msg\":{\"type\":\"text\"},"
                     "\"n\":{\"type\":\"long\"},\"k\":{\"type\":\"keyword\"},"
                     "\"d\":{\"type\":\"double\"}}}";
    ASSERT(fds_mapping_merge_json(mapping, mj, strlen(mj), &err) == 0);
    test_duplicate_keys();
    test_wildcards();
    test_range_bounds();
    test_limits();
    test_exact_strings();
    test_result_window();
    test_exact_long_sort();
    test_msm_extremes();
    test_dense_windows();
    test_timeout();
    fds_mapping_free(mapping);
    if (fds_test_failures)
        fprintf(stderr, "%d failure(s)\n", fds_test_failures);
    return fds_test_failures ? 1 : 0;
}
