/*
 * test_common.c: unit tests of src/common: CRC-32C check values, FNV-1a 64
 * test vectors, the UTF-8 validator on each row of the Unicode well-formed
 * table and its edges, the JSON string escaper (every rule, the cap
 * contract), the string buffer (growth, printf, JSON strings, take/free) and
 * the calendar conversions (known dates, a round trip over 800 years).
 */
#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>

#include "fds_error.h"
#include "fds_hash.h"
#include "fds_strbuf.h"
#include "fds_test.h"
#include "fds_text.h"
#include "fds_time.h"

static void test_crc32c(void)
{
    /* RFC 3720 B.4 check value, and the iSCSI vectors of 32 zero bytes and
     * 32 0xFF bytes. */
    ASSERT_EQ_U(fds_crc32c(0, "123456789", 9), 0xE3069283u);
    uint8_t z[32] = {0}, f[32];
    memset(f, 0xff, sizeof f);
    ASSERT_EQ_U(fds_crc32c(0, z, sizeof z), 0x8A9136AAu);
    ASSERT_EQ_U(fds_crc32c(0, f, sizeof f), 0x62A8AB43u);
    ASSERT_EQ_U(fds_crc32c(0, "", 0), 0);
    /* continuing a CRC equals one CRC over the concatenation, at every
     * split (covers the 8-byte and byte loops) */
    static const char s[] = "The quick brown fox jumps over the lazy dog";
    uint32_t whole = fds_crc32c(0, s, sizeof s - 1);
    for (size_t k = 0; k < sizeof s; k++)
        ASSERT_EQ_U(fds_crc32c(fds_crc32c(0, s, k), s + k, sizeof s - 1 - k),
                    whole);
}

static void test_fnv1a64(void)
{
    /* vectors from the FNV reference test suite */
    ASSERT_EQ_U(fds_fnv1a64("", 0), 0xcbf29ce484222325ull);
    ASSERT_EQ_U(fds_fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
    ASSERT_EQ_U(fds_fnv1a64("foobar", 6), 0x85944171f73967e8ull);
}

static void test_utf8(void)
{
    static const struct {
        const char *s;
        size_t len; /* of the first sequence, 0 = invalid */
    } cases[] = {
        {"A", 1},
        {"\xc2\x80", 2},          {"\xdf\xbf", 2},
        {"\xc0\x80", 0},          {"\xc1\xbf", 0}, /* overlong */
        {"\xe0\xa0\x80", 3},      {"\xe0\x9f\xbf", 0}, /* overlong */
        {"\xed\x9f\xbf", 3},      {"\xed\xa0\x80", 0}, /* surrogate */
        {"\xef\xbf\xbf", 3},
        {"\xf0\x90\x80\x80", 4},  {"\xf0\x8f\xbf\xbf", 0}, /* overlong */
        {"\xf4\x8f\xbf\xbf", 4},  {"\xf4\x90\x80\x80", 0}, /* > U+10FFFF */
        {"\xf5\x80\x80\x80", 0},  {"\x80", 0},  {"\xe2\x82", 0},
        {"\xe2\x82\x41", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint8_t *s = (const uint8_t *)cases[i].s;
        size_t n = strlen(cases[i].s);
        ASSERTF(fds_utf8_seq_len(s, n) == cases[i].len, "case %zu", i);
        ASSERTF(fds_utf8_valid(s, n) == (cases[i].len == n), "case %zu", i);
    }
    ASSERT_EQ(fds_utf8_seq_len((const uint8_t *)"", 0), 0);
    ASSERT(fds_utf8_valid((const uint8_t *)"", 0));
    ASSERT(fds_utf8_valid((const uint8_t *)"caf\xc3\xa9 \xf0\x9f\x98\x80", 10));
}

static void test_utf8_cut(void)
{
    const uint8_t *s = (const uint8_t *)"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    size_t n = 10; /* a, e-acute (2), euro sign (3), emoji (4) */
    static const size_t want[11] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10};
    for (size_t max = 0; max <= n; max++)
        ASSERTF(fds_utf8_cut(s, n, max) == want[max], "max %zu", max);
    ASSERT_EQ(fds_utf8_cut(s, n, 99), n);
}

/* A reason longer than its buffer is cut at a character boundary. */
static void test_err_cut(void)
{
    char big[FDS_ERR_REASON_MAX + 8];
    memset(big, 'x', sizeof big);
    big[sizeof big - 1] = 0;
    for (size_t pad = 0; pad < 4; pad++) {
        fds_err e;
        fds_err_clear(&e);
        /* the euro sign (3 bytes) straddles the end of the buffer */
        fds_err_setk(&e, FDS_EINVAL, FDS_KIND_VALIDATION, "%.*s\xe2\x82\xac%s",
                     (int)(FDS_ERR_REASON_MAX - 3 + pad), big, "tail");
        size_t n = strlen(e.reason);
        ASSERT(n < FDS_ERR_REASON_MAX);
        ASSERTF(fds_utf8_valid((const uint8_t *)e.reason, n), "pad %zu", pad);
        fds_err_cause(&e, FDS_KIND_INVALID_ARGUMENT, "because %d", 1);
        fds_err_cause(&e, FDS_KIND_INTERNAL, "not this");
        ASSERT_EQ(e.cause_kind, FDS_KIND_INVALID_ARGUMENT);
        ASSERT(!strcmp(e.cause, "because 1"));
    }
}

static void test_json_escape(void)
{
    char out[128];
    static const char in[] = "a\"b\\c\x01\n\t\x7f\xc3\xa9\xff\xed\xa0\x80";
    size_t n = fds_json_escape(in, sizeof in - 1, out, sizeof out);
    static const char want[] =
        "\"a\\\"b\\\\c\\u0001\\n\\t\x7f\xc3\xa9\\u00ff\\u00ed\\u00a0\\u0080\"";
    ASSERT_EQ(n, sizeof want - 1);
    ASSERT_MEM(out, want, sizeof want - 1);
    ASSERT_EQ(fds_json_escape("", 0, out, sizeof out), 2);
    ASSERT_MEM(out, "\"\"", 2);
    /* the cap contract: exactly the needed bytes work, one less gives 0 */
    for (size_t cap = 0; cap < sizeof want - 1; cap++)
        ASSERT_EQ(fds_json_escape(in, sizeof in - 1, out, cap), 0);
    ASSERT(FDS_JSON_ESCAPE_BOUND(sizeof in - 1) >= sizeof want - 1);
}

/* A random byte string of n bytes: plain ASCII, quotes, backslashes,
 * control bytes, well-formed UTF-8 of 2..4 bytes and (when `invalid`)
 * stray bytes >= 0x80, in runs so that the eight-byte steps meet every
 * alignment. */
static size_t random_text(uint64_t *st, char *out, size_t n, bool invalid)
{
    static const char *const utf8[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                       "\xed\x9f\xbf", "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf"};
    size_t k = 0;
    while (k < n) {
        *st = *st * 6364136223846793005u + 1442695040888963407u;
        unsigned r = (unsigned)(*st >> 33);
        size_t run = 1 + (r >> 8) % 12;
        for (size_t j = 0; j < run && k < n; j++) {
            switch (r % (invalid ? 6 : 5)) {
            case 0: case 1: out[k++] = (char)(0x20 + (r >> 12) % 0x60); break;
            case 2: out[k++] = "\"\\/\x7f"[(r >> 12) % 4]; break;
            case 3: out[k++] = (char)(1 + (r >> 12) % 0x1f); break; /* no NUL: cJSON ends there */
            case 4: {
                const char *u = utf8[(r >> 12) % 6];
                size_t ul = strlen(u);
                if (k + ul > n)
                    u = "x", ul = 1;
                memcpy(out + k, u, ul);
                k += ul;
                break;
            }
            default: out[k++] = (char)(0x80 + (r >> 12) % 0x80); break;
            }
            r = r * 2654435761u + 1;
        }
    }
    return k;
}

/* The escaper with room to spare (runs copied eight bytes at a time) gives
 * what it gives with exactly the room needed (every write checked), and on
 * well-formed UTF-8 what cJSON prints for the same string. */
static void test_json_escape_random(void)
{
    uint64_t st = 42;
    char in[300], a[FDS_JSON_ESCAPE_BOUND(300)], b[FDS_JSON_ESCAPE_BOUND(300)];
    for (int round = 0; round < 4000; round++) {
        bool invalid = round % 2;
        size_t n = random_text(&st, in, (size_t)(round % 300), invalid);
        size_t na = fds_json_escape(in, n, a, sizeof a);
        ASSERT(na >= 2);
        ASSERTF(fds_json_escape(in, n, b, na) == na && !memcmp(a, b, na), "round %d", round);
        ASSERT_EQ(fds_json_escape(in, n, b, na - 1), 0);
        if (invalid)
            continue;
        in[n] = 0;
        cJSON *j = cJSON_CreateString(in);
        char *c = j ? cJSON_PrintUnformatted(j) : NULL;
        ASSERT(c != NULL);
        ASSERTF(strlen(c) == na && !memcmp(c, a, na), "round %d: %s", round, c);
        free(c);
        cJSON_Delete(j);
    }
}

static void test_strbuf(void)
{
    fds_strbuf b = FDS_STRBUF_INIT;
    ASSERT_EQ(fds_strbuf_puts(&b, "x="), 0);
    ASSERT_EQ(fds_strbuf_printf(&b, "%d/%s", 42, "y"), 0);
    ASSERT_EQ(fds_strbuf_putc(&b, ' '), 0);
    ASSERT_EQ(fds_strbuf_put_json_string(&b, "q\"", 2), 0);
    ASSERT_STR(b.p, "x=42/y \"q\\\"\"");
    ASSERT_EQ(b.len, strlen(b.p));
    /* integers as printf's %lld writes them, at both ends of int64_t */
    fds_strbuf n = FDS_STRBUF_INIT;
    const int64_t iv[] = {0, 7, -1, 1234567890123, INT64_MAX, INT64_MIN};
    char want[200] = "";
    for (size_t i = 0; i < sizeof iv / sizeof *iv; i++) {
        ASSERT_EQ(fds_strbuf_put_i64(&n, iv[i]), 0);
        ASSERT_EQ(fds_strbuf_putc(&n, ','), 0);
        snprintf(want + strlen(want), sizeof want - strlen(want), "%lld,",
                 (long long)iv[i]);
    }
    ASSERT_STR(n.p, want);
    fds_strbuf_free(&n);
    /* growth past the first allocation keeps every byte */
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(fds_strbuf_put(&b, "0123456789", 10), 0);
    ASSERT_EQ(b.len, 12 + 10000);
    ASSERT(b.cap > b.len);
    ASSERT_EQ(b.p[b.len], 0);
    ASSERT_MEM(b.p + b.len - 10, "0123456789", 10);
    size_t len;
    char *p = fds_strbuf_take(&b, &len);
    ASSERT(p != NULL);
    ASSERT_EQ(len, 10012);
    ASSERT(b.p == NULL && b.len == 0);
    free(p);
    p = fds_strbuf_take(&b, &len); /* empty buffer: an empty string */
    ASSERT_STR(p, "");
    free(p);
    b.oom = 1; /* sticky failure */
    ASSERT_EQ(fds_strbuf_puts(&b, "z"), FDS_ENOMEM);
    ASSERT(fds_strbuf_take(&b, NULL) == NULL);
    fds_strbuf_free(&b);
    fds_strbuf_free(NULL);
}

static void test_calendar(void)
{
    ASSERT_EQ(fds_days_from_civil(1970, 1, 1), 0);
    ASSERT_EQ(fds_days_from_civil(2000, 3, 1), 11017);
    ASSERT_EQ(fds_days_from_civil(1969, 12, 31), -1);
    ASSERT_EQ(fds_days_from_civil(2019, 1, 22) * FDS_SECONDS_PER_DAY,
              1548115200);
    /* day numbers and dates round-trip, 1600..2400 (leap centuries too) */
    int64_t prev = fds_days_from_civil(1600, 1, 1) - 1;
    for (int64_t z = prev + 1; z < fds_days_from_civil(2400, 1, 1); z++) {
        int64_t y;
        unsigned m, d;
        fds_civil_from_days(z, &y, &m, &d);
        if (fds_days_from_civil(y, m, d) != z || m < 1 || m > 12 || d < 1 ||
            d > 31) {
            FDS_TEST_FAIL("day %lld does not round-trip", (long long)z);
            break;
        }
    }
}

int main(void)
{
    RUN(test_crc32c);
    RUN(test_fnv1a64);
    RUN(test_utf8);
    RUN(test_utf8_cut);
    RUN(test_err_cut);
    RUN(test_json_escape);
    RUN(test_json_escape_random);
    RUN(test_strbuf);
    RUN(test_calendar);
    TEST_DONE();
}
