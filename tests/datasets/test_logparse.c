/*
 * test_logparse.c: unit tests of the fds_logparse library (datasets/).
 *
 * Covers the line grammar (every field, Apache variants, each failure reason),
 * the timestamp conversion, the service_name and error_code tables, the
 * deterministic synthesized values, and the JSON formatter byte for byte
 * (escaping of quotes, backslashes, control bytes, valid and invalid UTF-8,
 * the caller-buffer contract).  Lines here are made up (documentation
 * addresses 192.0.2.0/24 etc.), not quoted from the real sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_test.h"
#include "json_check.h"
#include "logparse.h"

/* fds_slice `sl` holds exactly the bytes of the literal `lit`. */
#define ASSERT_SLICE(sl, lit)                                                \
    do {                                                                     \
        if ((sl).len != strlen(lit) || memcmp((sl).ptr, (lit), (sl).len))    \
            FDS_TEST_FAIL("slice '%.*s' != '%s'", (int)(sl).len,             \
                          (sl).ptr ? (sl).ptr : "", (lit));                  \
    } while (0)

static int parse(const char *line, fds_logrec *rec)
{
    return fds_logparse_line(line, strlen(line), rec, NULL, NULL);
}

static void test_full_line(void)
{
    const char *l = "192.0.2.1 - alice [01/Mar/2020:23:59:59 -0500] "
                    "\"POST /basket/add?x=1 HTTP/2.0\" 201 1234 "
                    "\"https://example.com/\" \"curl/8.0\" "
                    "\"198.51.100.7, 10.0.0.1\"\r";
    fds_logrec r;
    ASSERT(parse(l, &r) == 0);
    ASSERT_SLICE(r.remote_addr, "192.0.2.1");
    ASSERT_SLICE(r.remote_user, "alice");
    ASSERT_SLICE(r.method, "POST");
    ASSERT_SLICE(r.url, "/basket/add?x=1");
    ASSERT_SLICE(r.http_version, "HTTP/2.0");
    ASSERT(r.status == 201);
    ASSERT(r.body_bytes_sent == 1234);
    ASSERT_SLICE(r.referrer, "https://example.com/");
    ASSERT_SLICE(r.user_agent, "curl/8.0");
    ASSERT_SLICE(r.x_forwarded_for, "198.51.100.7, 10.0.0.1");
    ASSERT(r.tz_offset_min == -300);
    ASSERT(r.epoch == 1583125199); /* 2020-03-02T04:59:59Z */
    char ts[FDS_LOGPARSE_TS_LEN + 1];
    fds_logparse_iso8601(r.epoch, r.tz_offset_min, ts);
    ASSERT_STR(ts, "2020-03-01T23:59:59-05:00");
}

static void test_variants(void)
{
    fds_logrec r;
    /* Apache: %b "-" and no trailing field -> 16 fields. */
    ASSERT(parse("192.0.2.2 - - [29/Feb/2020:00:00:00 +0000] \"GET / HTTP/1.0\" "
                "304 - \"-\" \"-\"",
                &r) == 0);
    ASSERT(r.body_bytes_sent == 0);
    ASSERT(r.x_forwarded_for.ptr == NULL);
    /* Trailing "-" -> no x_forwarded_for. */
    ASSERT(parse("192.0.2.2 - - [22/Jan/2019:03:56:14 +0330] \"GET / HTTP/1.1\" "
                "200 5 \"-\" \"ua\" \"-\"",
                &r) == 0);
    ASSERT(r.x_forwarded_for.ptr == NULL);
    ASSERT(r.tz_offset_min == 210);
    /* Request "-" (connection closed before a request line). */
    ASSERT(parse("192.0.2.3 - - [22/Jan/2019:03:56:14 +0330] \"-\" 400 0 \"-\" "
                "\"-\"",
                &r) == 0);
    ASSERT_SLICE(r.method, "-");
    ASSERT_SLICE(r.url, "-");
    ASSERT_SLICE(r.http_version, "-");
    /* Target with a space; HTTP/0.9 style request without protocol. */
    ASSERT(parse("192.0.2.3 - - [22/Jan/2019:03:56:14 +0330] \"GET /a b HTTP/1.1\" "
                "400 0 \"-\" \"-\"",
                &r) == 0);
    ASSERT_SLICE(r.url, "/a b");
    ASSERT(parse("192.0.2.3 - - [22/Jan/2019:03:56:14 +0330] \"GET /x\" 200 1 "
                "\"-\" \"-\"",
                &r) == 0);
    ASSERT_SLICE(r.url, "/x");
    ASSERT_SLICE(r.http_version, "-");
    /* Escaped quote inside a quoted field is kept verbatim. */
    ASSERT(parse("192.0.2.3 - - [22/Jan/2019:03:56:14 +0330] \"GET /q HTTP/1.1\" "
                "200 1 \"-\" \"say \\\"hi\\\" \\\\\"",
                &r) == 0);
    ASSERT_SLICE(r.user_agent, "say \\\"hi\\\" \\\\");
    /* Not NUL-terminated: parse a prefix of a longer buffer. */
    const char *two = "192.0.2.4 - - [22/Jan/2019:03:56:14 +0330] \"GET / HTTP/1.1\" "
                      "200 1 \"-\" \"-\"GARBAGE";
    ASSERT(fds_logparse_line(two, strlen(two) - 7, &r, NULL, NULL) == 0);
}

static void expect_fail(const char *line, const char *reason)
{
    fds_logrec r;
    const char *why = NULL;
    size_t col = 99999;
    int rc = fds_logparse_line(line, strlen(line), &r, &why, &col);
    ASSERT(rc == FDS_EPARSE);
    if (rc == FDS_EPARSE) {
        ASSERT(why != NULL);
        ASSERT(col <= strlen(line));
        if (why && strcmp(why, reason)) {
            fprintf(stderr, "line '%s': reason '%s', expected '%s'\n", line,
                    why, reason);
            fds_test_failures++;
        }
    }
}

static void test_failures(void)
{
#define HEAD "192.0.2.1 - - "
#define TS "[22/Jan/2019:03:56:14 +0330] "
    expect_fail("", "empty line");
    expect_fail("   \r", "empty line");
    expect_fail("192.0.2.1", "missing remote address");
    expect_fail(HEAD "22/Jan/2019:03:56:14 +0330] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"",
                "missing '[' before timestamp");
    expect_fail(HEAD "[22/Jxn/2019:03:56:14 +0330] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"",
                "bad month in timestamp");
    expect_fail(HEAD "[29/Feb/2019:03:56:14 +0330] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"",
                "day out of range in timestamp");
    expect_fail(HEAD "[22/Jan/2019:24:56:14 +0330] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"",
                "time of day out of range in timestamp");
    expect_fail(HEAD "[22/Jan/2019:03:56:14 0330] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"",
                "bad UTC offset in timestamp");
    expect_fail(HEAD TS "GET / HTTP/1.1 200 1 \"-\" \"-\"", "missing quoted request");
    expect_fail(HEAD TS "\"GET / HTTP/1.1 200 1", "unterminated request");
    expect_fail(HEAD TS "\"GET\" 200 1 \"-\" \"-\"", "request line has no target");
    expect_fail(HEAD TS "\"G(T / HTTP/1.1\" 200 1 \"-\" \"-\"", "bad request method");
    expect_fail(HEAD TS "\"GET  HTTP/1.1\" 200 1 \"-\" \"-\"", "empty request target");
    expect_fail(HEAD TS "\"GET / HTTP/1.1\" 20 1 \"-\" \"-\"", "bad status (expected 3 digits)");
    expect_fail(HEAD TS "\"GET / HTTP/1.1\" 2000 1 \"-\" \"-\"", "bad status (expected 3 digits)");
    expect_fail(HEAD TS "\"GET / HTTP/1.1\" 200 x \"-\" \"-\"", "bad body_bytes_sent");
    expect_fail(HEAD TS "\"GET / HTTP/1.1\" 200 12345678901234567890 \"-\" \"-\"",
                "body_bytes_sent too large");
    expect_fail(HEAD TS "\"GET / HTTP/1.1\" 200 1 \"-\"", "missing user agent");
    expect_fail(HEAD TS "\"GET / HTTP/1.1\" 200 1 \"-\" \"ua", "unterminated user agent");
    expect_fail(HEAD TS "\"GET / HTTP/1.1\" 200 1 \"-\" \"ua\" extra",
                "unexpected text after user agent");
    expect_fail(HEAD TS "\"GET / HTTP/1.1\" 200 1 \"-\" \"ua\" \"-\" \"x\"",
                "unexpected text after x_forwarded_for");
#undef HEAD
#undef TS
}

static void test_tables(void)
{
#define SVC(u, s) ASSERT_STR(fds_logparse_service((u), strlen(u)), (s))
    SVC("/", "home");
    SVC("/?utm=1", "home");
    SVC("/m", "mobile");
    SVC("/m/filter/b1", "mobile");
    SVC("/image/1/productModel/200x200", "image");
    SVC("/IMAGES/x.png", "image");
    SVC("/static/css/a.css", "static");
    SVC("/favicon.ico", "static");
    SVC("/filter/p1,b2", "search");
    SVC("/ajaxFilter/p1", "search");
    SVC("/browse/tv", "search");
    SVC("/product/1/2/x", "catalog");
    SVC("/basket/add", "account");
    SVC("/blog/x", "content");
    SVC("/settings/logo", "site");
    SVC("/site/ping?x", "site");
    SVC("/unknown/x", "other");
    SVC("-", "other");
    SVC("*", "other");
    SVC("", "other");
    SVC("http://www.zanbil.ir/product/1", "catalog");
    SVC("https://example.com", "home");
#undef SVC
    ASSERT_STR(fds_logparse_error_code(200), "-");
    ASSERT_STR(fds_logparse_error_code(399), "-");
    ASSERT_STR(fds_logparse_error_code(400), "bad_request");
    ASSERT_STR(fds_logparse_error_code(403), "forbidden");
    ASSERT_STR(fds_logparse_error_code(404), "not_found");
    ASSERT_STR(fds_logparse_error_code(418), "http_418");
    ASSERT_STR(fds_logparse_error_code(499), "client_closed_request");
    ASSERT_STR(fds_logparse_error_code(500), "internal_server_error");
    ASSERT_STR(fds_logparse_error_code(599), "http_599");
    ASSERT_STR(fds_logparse_error_code(999), "http_999");
}

static void test_time(void)
{
    char ts[FDS_LOGPARSE_TS_LEN + 1];
    fds_logparse_iso8601(0, 210, ts);
    ASSERT_STR(ts, "1970-01-01T03:30:00+03:30");
    fds_logparse_iso8601(-1, 0, ts);
    ASSERT_STR(ts, "1969-12-31T23:59:59+00:00");
    fds_logparse_iso8601(951782400, -90, ts); /* 2000-02-29T00:00:00Z */
    ASSERT_STR(ts, "2000-02-28T22:30:00-01:30");
    /* Round trip through the parser for every day of a leap year. */
    static const char *mon[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t prev = 0;
    for (int m = 0; m < 12; m++)
        for (int d = 1; d <= mdays[m]; d++) {
            char line[160], want[48];
            snprintf(line, sizeof line,
                     "h - - [%02d/%s/2024:12:00:00 +0100] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"",
                     d, mon[m]);
            snprintf(want, sizeof want, "2024-%02d-%02dT12:00:00+01:00", m + 1, d);
            fds_logrec r;
            ASSERT(parse(line, &r) == 0);
            fds_logparse_iso8601(r.epoch, r.tz_offset_min, ts);
            ASSERT_STR(ts, want);
            ASSERT(prev == 0 || r.epoch == prev + 86400);
            prev = r.epoch;
        }
}

static void test_derive(void)
{
    fds_logrec a, b;
    const char *l = "192.0.2.1 - - [22/Jan/2019:03:56:14 +0330] \"GET /filter/x "
                    "HTTP/1.1\" 200 30000 \"-\" \"ua\"";
    ASSERT(parse(l, &a) == 0);
    b = a;
    fds_logparse_derive(&a, "example.org", 7, 1);
    fds_logparse_derive(&b, "example.org", 7, 1);
    ASSERT_STR(a.request_id, b.request_id);
    ASSERT(a.request_time_ms == b.request_time_ms);
    ASSERT(strlen(a.request_id) == 32);
    ASSERT(strspn(a.request_id, "0123456789abcdef") == 32);
    ASSERT_STR(a.service_name, "search");
    ASSERT_STR(a.error_code, "-");
    fds_logparse_derive(&b, "example.org", 7, 2);
    ASSERT(strcmp(a.request_id, b.request_id) != 0);
    fds_logparse_derive(&b, "example.org", 8, 1);
    ASSERT(strcmp(a.request_id, b.request_id) != 0);

    /* Distribution: medians near the documented values, upstream <= total. */
    enum { N = 20001 };
    static uint32_t up[N];
    int bad = 0;
    for (int i = 0; i < N; i++) {
        uint32_t rq, u;
        fds_logparse_timing("search", 200, 0, 1, (uint64_t)i + 1, &rq, &u);
        if (u > rq || rq > FDS_LOGPARSE_TIME_MAX_MS) bad++;
        up[i] = u;
    }
    ASSERT(bad == 0);
    /* Counting median. */
    int below = 0;
    for (int i = 0; i < N; i++) below += up[i] < 120;
    ASSERT(below > N * 40 / 100 && below < N * 60 / 100);
    uint32_t rq, u;
    fds_logparse_timing("static", 200, 100000000, 3, 9, &rq, &u);
    ASSERT(rq >= u && rq <= FDS_LOGPARSE_TIME_MAX_MS);
}

static void test_json(void)
{
    const char *l = "192.0.2.1 - - [22/Jan/2019:03:56:14 +0330] \"GET /product/1 "
                    "HTTP/1.1\" 404 7 \"-\" \"a\\\"b\x01\x7f\xc3\xa9\xff\xe2\x82"
                    "\xc0\xaf\xed\xa0\x80\xf0\x9f\x98\x80\xf4\x90\x80\x80\" \"203.0.113.9\"";
    fds_logrec r;
    ASSERT(parse(l, &r) == 0);
    fds_logparse_derive(&r, "h\"x", 1, 1);
    r.request_time_ms = 1234;
    r.upstream_response_time_ms = 5;
    memcpy(r.request_id, "0123456789abcdef0123456789abcdef", 33);
    const char *want =
        "{\"@timestamp\":\"2019-01-22T03:56:14+03:30\",\"remote_addr\":\"192.0.2.1\","
        "\"remote_user\":\"-\",\"method\":\"GET\",\"url\":\"/product/1\","
        "\"http_version\":\"HTTP/1.1\",\"status\":404,\"body_bytes_sent\":7,"
        "\"referrer\":\"-\",\"user_agent\":\"a\\\\\\\"b\\u0001\x7f\xc3\xa9\\u00ff"
        "\\u00e2\\u0082\\u00c0\\u00af\\u00ed\\u00a0\\u0080\xf0\x9f\x98\x80"
        "\\u00f4\\u0090\\u0080\\u0080\",\"x_forwarded_for\":\"203.0.113.9\","
        "\"host\":\"h\\\"x\",\"service_name\":\"catalog\",\"error_code\":\"not_found\","
        "\"request_time\":1.234,\"upstream_response_time\":0.005,"
        "\"request_id\":\"0123456789abcdef0123456789abcdef\"}";
    size_t bound = fds_logparse_json_bound(&r), len = 0;
    char *buf = malloc(bound);
    ASSERT(buf && fds_logparse_json(&r, buf, bound, &len) == 0);
    ASSERT(len <= bound);
    if (len != strlen(want) || memcmp(buf, want, len)) {
        fprintf(stderr, "json mismatch:\n got %.*s\nwant %s\n", (int)len, buf, want);
        fds_test_failures++;
    }
    jc_state st;
    ASSERT(jc_check_object(&st, buf, len));
    ASSERT(st.nkeys == 17);
    /* Every capacity below the length fails with FDS_ERANGE. */
    for (size_t cap = 0; cap < len; cap++) {
        size_t l2 = 12345;
        if (fds_logparse_json(&r, buf, cap, &l2) != FDS_ERANGE) {
            fprintf(stderr, "cap %zu did not give FDS_ERANGE\n", cap);
            fds_test_failures++;
            break;
        }
    }
    ASSERT(fds_logparse_json(&r, buf, len, &len) == 0);
    free(buf);

    /* 16 fields without x_forwarded_for; numbers >= 1 s and large bytes. */
    ASSERT(parse("192.0.2.1 - - [22/Jan/2019:03:56:14 +0330] \"GET / HTTP/1.1\" 200 "
                "9223372036854775807 \"-\" \"-\"",
                &r) == 0);
    fds_logparse_derive(&r, "h", 1, 1);
    r.request_time_ms = 600000;
    r.upstream_response_time_ms = 0;
    char small[1024];
    ASSERT(fds_logparse_json(&r, small, sizeof small, &len) == 0);
    ASSERT(jc_check_object(&st, small, len));
    ASSERT(st.nkeys == 16);
    ASSERT(strstr(small, "\"body_bytes_sent\":9223372036854775807,") != NULL);
    ASSERT(strstr(small, "\"request_time\":600.000,\"upstream_response_time\":0.000,") != NULL);
}

int main(void)
{
    test_full_line();
    test_variants();
    test_failures();
    test_tables();
    test_time();
    test_derive();
    test_json();
    if (fds_test_failures) {
        fprintf(stderr, "test_logparse: %d failure(s)\n", fds_test_failures);
        return 1;
    }
    printf("test_logparse: ok\n");
    return 0;
}
