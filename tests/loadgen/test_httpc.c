/*
 * test_httpc.c: the incremental HTTP/1.1 response parser frames responses
 * exactly (Content-Length, chunked with extensions and trailers, interim
 * 100 Continue, close-delimited), whatever the split of the bytes, and
 * rejects malformed or truncated input.  Also the loopback-only check.
 */
#include "fds_httpc.h"
#include "fds_test.h"

#include <stdlib.h>
#include <string.h>

/* feed `s` in pieces of `step` bytes; return bytes consumed */
static size_t feed_split(fds_httpc_resp *r, const char *s, size_t n, size_t step)
{
    size_t used = 0;
    while (used < n && r->state != FDS_HTTPC_DONE && r->state != FDS_HTTPC_ERROR) {
        size_t k = n - used < step ? n - used : step;
        size_t u = fds_httpc_resp_feed(r, s + used, k);
        used += u;
        if (u < k)
            break;
    }
    return used;
}

static fds_httpc_resp R;

static void check_ok(const char *name, const char *msg, int status, const char *body,
                     size_t expect_used)
{
    size_t n = strlen(msg);
    for (size_t step = 1; step <= n; step++) {
        memset(&R, 0, sizeof R);
        fds_httpc_resp_reset(&R, 1);
        size_t used = feed_split(&R, msg, n, step);
        ASSERTF(R.state == FDS_HTTPC_DONE, "%s step %zu: state %d (%s)", name, step, R.state,
               R.error ? R.error : "");
        ASSERTF(used == expect_used, "%s step %zu: used %zu want %zu", name, step, used,
               expect_used);
        ASSERTF(R.status == status, "%s: status %d", name, R.status);
        ASSERTF(strcmp(R.body ? R.body : "", body) == 0, "%s: body '%s'", name,
               R.body ? R.body : "");
        fds_httpc_resp_clear(&R);
        if (fds_test_failures)
            return;
    }
}

static void check_bad(const char *name, const char *msg)
{
    memset(&R, 0, sizeof R);
    fds_httpc_resp_reset(&R, 0);
    fds_httpc_resp_feed(&R, msg, strlen(msg));
    ASSERTF(R.state == FDS_HTTPC_ERROR, "%s: state %d", name, R.state);
}

int main(void)
{
    const char *cl = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello";
    check_ok("content-length", cl, 200, "hello", strlen(cl));

    /* a second response right behind the first is not consumed */
    char two[256];
    snprintf(two, sizeof two, "%sHTTP/1.1 204 No Content\r\n\r\n", cl);
    check_ok("pipelined", two, 200, "hello", strlen(cl));

    const char *ch = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n";
    check_ok("chunked", ch, 200, "hello, world", strlen(ch));

    const char *hexch = "HTTP/1.1 500 Internal Server Error\r\ntransfer-encoding: chunked\r\n\r\n"
                        "A\r\n0123456789\r\n0\r\n\r\n";
    check_ok("chunked-hex-500", hexch, 500, "0123456789", strlen(hexch));

    const char *cont = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
    check_ok("100-continue", cont, 201, "ok", strlen(cont));

    const char *empty = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    check_ok("empty", empty, 200, "", strlen(empty));

    /* keep-alive flags */
    memset(&R, 0, sizeof R);
    fds_httpc_resp_reset(&R, 0);
    const char *close1 = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx";
    fds_httpc_resp_feed(&R, close1, strlen(close1));
    ASSERT(R.state == FDS_HTTPC_DONE && R.keep_alive == 0);
    fds_httpc_resp_reset(&R, 0);
    const char *http10 = "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx";
    fds_httpc_resp_feed(&R, http10, strlen(http10));
    ASSERT(R.state == FDS_HTTPC_DONE && R.keep_alive == 0);

    /* close-delimited body ends properly at EOF */
    fds_httpc_resp_reset(&R, 1);
    const char *eofb = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close";
    fds_httpc_resp_feed(&R, eofb, strlen(eofb));
    ASSERT(R.state == FDS_HTTPC_BODY_EOF);
    ASSERT(fds_httpc_resp_eof(&R) == 1);
    ASSERT(strcmp(R.body, "until close") == 0);
    fds_httpc_resp_clear(&R);

    /* short reads: EOF inside headers, body or chunk is not a success */
    const char *cuts[] = {"HTTP/1.1 200 OK\r\nContent-Len", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", ""};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        fds_httpc_resp_reset(&R, 0);
        fds_httpc_resp_feed(&R, cuts[i], strlen(cuts[i]));
        ASSERTF(fds_httpc_resp_eof(&R) == 0, "cut %zu counted as complete", i);
    }

    check_bad("garbage", "HELLO WORLD\r\n\r\n");
    check_bad("bad-status", "HTTP/1.1 2x0 OK\r\n\r\n");
    check_bad("bad-length", "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n");
    check_bad("two-lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n");
    check_bad("bad-chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    check_bad("chunk-no-crlf",
              "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX\r\n0\r\n\r\n");
    check_bad("header-no-colon", "HTTP/1.1 200 OK\r\nNoColonHere\r\n\r\n");

    /* HEAD responses have no body even with Content-Length */
    memset(&R, 0, sizeof R);
    R.head_request = 1;
    fds_httpc_resp_reset(&R, 0);
    const char *head = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
    ASSERT(fds_httpc_resp_feed(&R, head, strlen(head)) == strlen(head));
    ASSERT(R.state == FDS_HTTPC_DONE);

    /* targets: scheme, host, port, IPv6 brackets; literal addresses only
     * (these tests never look a name up) */
    fds_httpc_target t;
    char msg[256];
    ASSERT(fds_httpc_target_parse(&t, "127.0.0.1", 9200, msg, sizeof msg) == 0);
    ASSERT(t.port == 9200 && !t.https && !strcmp(t.host, "127.0.0.1"));
    ASSERT(!strcmp(t.url, "http://127.0.0.1:9200") && !strcmp(t.host_header, "127.0.0.1:9200"));
    ASSERT(fds_httpc_addr_is_loopback((const struct sockaddr *)&t.addr));
    ASSERT(fds_httpc_target_parse(&t, "https://127.0.0.3:9443/", 9200, msg, sizeof msg) == 0);
    ASSERT(t.https && t.port == 9443 && !strcmp(t.url, "https://127.0.0.3:9443"));
    ASSERT(fds_httpc_target_parse(&t, "http://[::1]:9201", 9200, msg, sizeof msg) == 0);
    ASSERT(t.port == 9201 && !strcmp(t.host, "::1") && !strcmp(t.host_header, "[::1]:9201"));
    ASSERT(fds_httpc_addr_is_loopback((const struct sockaddr *)&t.addr));
    ASSERT(fds_httpc_target_parse(&t, "127.1.2.3:1", 9200, msg, sizeof msg) == 0);
    ASSERT(fds_httpc_addr_is_loopback((const struct sockaddr *)&t.addr));
    /* any host is a valid target now; parsing a literal sends nothing */
    ASSERT(fds_httpc_target_parse(&t, "10.0.0.1:9200", 9200, msg, sizeof msg) == 0);
    ASSERT(!fds_httpc_addr_is_loopback((const struct sockaddr *)&t.addr));
    ASSERT(fds_httpc_target_parse(&t, "[::ffff:10.1.1.1]:80", 9200, msg, sizeof msg) == 0);
    ASSERT(!fds_httpc_addr_is_loopback((const struct sockaddr *)&t.addr));
    ASSERT(fds_httpc_target_parse(&t, "[::ffff:127.0.0.1]:80", 9200, msg, sizeof msg) == 0);
    ASSERT(fds_httpc_addr_is_loopback((const struct sockaddr *)&t.addr));
    /* malformed */
    ASSERT(fds_httpc_target_parse(&t, "ftp://127.0.0.1", 9200, msg, sizeof msg) != 0);
    ASSERT(strstr(msg, "http") != NULL);
    ASSERT(fds_httpc_target_parse(&t, "127.0.0.1:0", 9200, msg, sizeof msg) != 0);
    ASSERT(fds_httpc_target_parse(&t, "127.0.0.1:70000", 9200, msg, sizeof msg) != 0);
    ASSERT(fds_httpc_target_parse(&t, "127.0.0.1:12x", 9200, msg, sizeof msg) != 0);
    ASSERT(fds_httpc_target_parse(&t, "127.0.0.1:+80", 9200, msg, sizeof msg) != 0);
    ASSERT(fds_httpc_target_parse(&t, "127.0.0.1: 80", 9200, msg, sizeof msg) != 0);
    ASSERT(fds_httpc_target_parse(&t, "[::1]:", 9200, msg, sizeof msg) != 0);
    ASSERT(fds_httpc_target_parse(&t, "::1", 9200, msg, sizeof msg) != 0);
    ASSERT(strstr(msg, "[ADDR]") != NULL);
    ASSERT(fds_httpc_target_parse(&t, "[::1", 9200, msg, sizeof msg) != 0);
    ASSERT(fds_httpc_target_parse(&t, "https://", 9200, msg, sizeof msg) != 0);
    TEST_DONE();
}
