/*
 * fuzz_httpc.c: property and fuzz test of the loadgen HTTP response parser.
 *
 * 1. Round trip: random valid responses (status, random headers, body framed
 *    by Content-Length, by chunked coding with random chunk sizes, extensions
 *    and trailers, or by closing) fed in random splits must parse to exactly
 *    the body that was framed, consuming exactly the response's bytes.
 * 2. Garbage: mutated and random inputs must never crash, never consume more
 *    than given, and never report more body than input.
 * 3. --host elements: the same inputs as a target (fds_httpc_target_split,
 *    which looks nothing up) never crash, and an accepted one has a host
 *    that fits and a port in 1..65535.
 * Fixed seed, so a failure is reproducible; run under FDS_ASAN to catch
 * memory errors.  Built with -DFDS_LIBFUZZER it is a libFuzzer target
 * instead (LLVMFuzzerTestOneInput).
 */
#include "fds_httpc.h"
#include "fds_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ROUNDS 20000
#define FUZZ_MAX_MSG 65536

static uint64_t st = 12345;
static uint64_t rnd(void)
{
    uint64_t z = (st += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static fds_httpc_resp R;

/* feed data in random pieces; returns bytes consumed */
static size_t feed_random(const char *msg, size_t n)
{
    size_t used = 0;
    while (used < n && R.state != FDS_HTTPC_DONE && R.state != FDS_HTTPC_ERROR) {
        size_t k = 1 + rnd() % 64;
        if (rnd() % 4 == 0)
            k = n - used;
        if (k > n - used)
            k = n - used;
        size_t u = fds_httpc_resp_feed(&R, msg + used, k);
        if (u > k) {
            fds_test_failures++;
            fprintf(stderr, "consumed %zu of %zu\n", u, k);
            return used;
        }
        used += u;
        if (u < k)
            break;
    }
    return used;
}

static void target_garbage(const uint8_t *data, size_t n)
{
    char spec[512], msg[256];
    if (n >= sizeof spec)
        n = sizeof spec - 1;
    memcpy(spec, data, n);
    spec[n] = '\0';
    fds_httpc_target t;
    if (fds_httpc_target_split(&t, spec, 9200, msg, sizeof msg) == 0) {
        ASSERT(t.port >= 1 && t.port <= 65535);
        ASSERT(t.host[0] != '\0' && strlen(t.host) < sizeof t.host);
    } else {
        ASSERT(msg[0] != '\0');
    }
}

static void garbage(const uint8_t *data, size_t n)
{
    target_garbage(data, n);
    memset(&R, 0, sizeof R);
    fds_httpc_resp_reset(&R, 1);
    size_t u = fds_httpc_resp_feed(&R, (const char *)data, n);
    ASSERT(u <= n);
    ASSERT(R.body_bytes <= n);
    fds_httpc_resp_eof(&R);
    fds_httpc_resp_clear(&R);
}

#ifdef FDS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    garbage(data, size);
    if (fds_test_failures)
        abort(); /* an ASSERT failed: a finding */
    return 0;
}
#else
static char msg[FUZZ_MAX_MSG], body[FUZZ_MAX_MSG / 4];

int main(void)
{
    static const char *extra[] = {"Content-Type: application/json", "X-Elastic-Product: Elasticsearch",
                                  "Cache-Control: no-cache", "Date: Sun, 29 Nov 2026 18:00:00 GMT",
                                  "Connection: keep-alive", "connection: close"};
    for (int round = 0; round < FUZZ_ROUNDS && !fds_test_failures; round++) {
        size_t blen = rnd() % 3 == 0 ? 0 : rnd() % (sizeof body - 1);
        if (rnd() % 2)
            blen %= 200;
        for (size_t i = 0; i < blen; i++)
            body[i] = (char)(rnd() % 256 ? rnd() % 256 : 'x');
        int framing = (int)(rnd() % 3); /* 0 length, 1 chunked, 2 close */
        int status = (int)(100 + rnd() % 500);
        if (status < 200 || status == 204 || status == 304)
            status = 200;
        size_t n = (size_t)snprintf(msg, sizeof msg, "HTTP/1.%d %d Some Reason\r\n",
                                    framing == 2 ? (int)(rnd() % 2) : 1, status);
        int nx = (int)(rnd() % 4);
        for (int i = 0; i < nx; i++)
            n += (size_t)snprintf(msg + n, sizeof msg - n, "%s\r\n",
                                  extra[rnd() % (framing == 2 ? 4 : 5)]);
        if (framing == 0)
            n += (size_t)snprintf(msg + n, sizeof msg - n, "Content-Length: %zu\r\n\r\n", blen);
        else if (framing == 1)
            n += (size_t)snprintf(msg + n, sizeof msg - n, "Transfer-Encoding: chunked\r\n\r\n");
        else
            n += (size_t)snprintf(msg + n, sizeof msg - n, "Connection: close\r\n\r\n");
        if (framing == 1) {
            size_t off = 0;
            while (off < blen) {
                size_t c = 1 + rnd() % 300;
                if (c > blen - off)
                    c = blen - off;
                n += (size_t)snprintf(msg + n, sizeof msg - n, rnd() % 2 ? "%zx\r\n" : "%zX;e=1\r\n",
                                      c);
                memcpy(msg + n, body + off, c);
                n += c;
                memcpy(msg + n, "\r\n", 2);
                n += 2;
                off += c;
            }
            n += (size_t)snprintf(msg + n, sizeof msg - n, rnd() % 2 ? "0\r\n\r\n" : "0\r\nT: v\r\n\r\n");
        } else {
            memcpy(msg + n, body, blen);
            n += blen;
        }
        size_t resp_len = n;
        /* something after the response must not be consumed (not for close framing) */
        if (framing != 2)
            n += (size_t)snprintf(msg + n, sizeof msg - n, "HTTP/1.1 200 OK\r\n\r\n");

        memset(&R, 0, sizeof R);
        fds_httpc_resp_reset(&R, 1);
        size_t used = feed_random(msg, n);
        if (framing == 2) {
            ASSERTF(R.state == FDS_HTTPC_BODY_EOF, "round %d: state %d (%s)", round, R.state,
                   R.error ? R.error : "");
            ASSERT(fds_httpc_resp_eof(&R) == 1);
        }
        ASSERTF(R.state == FDS_HTTPC_DONE, "round %d framing %d: state %d (%s)", round, framing,
               R.state, R.error ? R.error : "");
        ASSERTF(used == resp_len, "round %d framing %d: used %zu of %zu", round, framing, used,
               resp_len);
        ASSERT(R.status == status);
        ASSERT(R.body_bytes == blen);
        ASSERT(blen == 0 || (R.body && memcmp(R.body, body, blen) == 0));
        fds_httpc_resp_clear(&R);

        /* the same bytes mutated, truncated, or pure noise */
        size_t m = resp_len;
        int flips = (int)(1 + rnd() % 8);
        for (int i = 0; i < flips; i++)
            msg[rnd() % m] = (char)rnd();
        garbage((const uint8_t *)msg, rnd() % (m + 1));
        for (size_t i = 0; i < 256; i++)
            msg[i] = (char)rnd();
        garbage((const uint8_t *)msg, 256);
    }
    TEST_DONE();
}
#endif
