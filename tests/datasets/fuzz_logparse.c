/*
 * fuzz_logparse.c: fuzz target for fds_logparse_line() and the JSON formatter.
 *
 * Property checked for every input: the parser either fails with FDS_EPARSE,
 * a reason and a column inside the input, or succeeds with every slice inside
 * the input; a parsed record always formats, within fds_logparse_json_bound(),
 * to one valid compact JSON object (valid UTF-8, no raw control bytes, no
 * duplicate keys) with the 16 or 17 fields in DESIGN.md order; one byte less
 * of capacity gives FDS_ERANGE.
 *
 * Two ways to run it:
 *   - libFuzzer: build with clang -fsanitize=fuzzer
 *     -DFDS_LIBFUZZER (the fuzzing build, -DFDS_FUZZ=ON);
 *   - the plain driver below (default build, registered with ctest):
 *     fuzz_logparse SAMPLE SECONDS [SEED] mutates real sample lines (byte
 *     flips, grammar-significant bytes, deletions, duplications, splices,
 *     truncations) for SECONDS and feeds each to the target in a buffer of
 *     exactly its size, so an AddressSanitizer build catches any over-read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_check.h"
#include "logparse.h"

static const char *const fds_fuzz_fields[] = {
    "@timestamp", "remote_addr", "remote_user", "method", "url",
    "http_version", "status", "body_bytes_sent", "referrer", "user_agent",
    "x_forwarded_for", "host", "service_name", "error_code", "request_time",
    "upstream_response_time", "request_id"};

#define FUZZ_CHECK(cond)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz_logparse: %s:%d: %s failed on input of "   \
                    "%zu bytes\n", __FILE__, __LINE__, #cond, size);         \
            fwrite(data, 1, size, stderr);                                   \
            fputc('\n', stderr);                                             \
            abort();                                                         \
        }                                                                    \
    } while (0)

static int inside(const fds_logslice *s, const uint8_t *data, size_t size)
{
    const char *b = (const char *)data;
    return s->ptr >= b && s->ptr + s->len <= b + size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fds_logrec rec;
    const char *why = NULL;
    size_t col = (size_t)-1;
    int rc = fds_logparse_line((const char *)data, size, &rec, &why, &col);
    if (rc) {
        FUZZ_CHECK(rc == FDS_EPARSE && why != NULL && col <= size);
        return 0;
    }
    FUZZ_CHECK(inside(&rec.remote_addr, data, size));
    FUZZ_CHECK(inside(&rec.remote_user, data, size));
    FUZZ_CHECK(rec.status >= 0 && rec.status <= 999);
    /* method/url/http_version may be the static "-" of an empty request. */
    FUZZ_CHECK(inside(&rec.referrer, data, size));
    FUZZ_CHECK(inside(&rec.user_agent, data, size));
    FUZZ_CHECK(!rec.x_forwarded_for.ptr || inside(&rec.x_forwarded_for, data, size));

    fds_logparse_derive(&rec, FDS_LOGPARSE_HOST_DEFAULT, size, 1);
    size_t bound = fds_logparse_json_bound(&rec), len = 0;
    char *buf = malloc(bound);
    FUZZ_CHECK(buf != NULL);
    FUZZ_CHECK(fds_logparse_json(&rec, buf, bound, &len) == 0);
    FUZZ_CHECK(len <= bound);
    jc_state st;
    FUZZ_CHECK(jc_check_object(&st, buf, len));
    int want = rec.x_forwarded_for.ptr ? 17 : 16;
    FUZZ_CHECK(st.nkeys == want);
    for (int k = 0, f = 0; k < st.nkeys; k++, f++) {
        if (want == 16 && f == 10) f++; /* x_forwarded_for left out */
        FUZZ_CHECK(strcmp(st.keys[k], fds_fuzz_fields[f]) == 0);
    }
    /* Exact fit works, one byte less does not. */
    char *exact = malloc(len);
    size_t len2 = 0;
    FUZZ_CHECK(exact != NULL);
    FUZZ_CHECK(fds_logparse_json(&rec, exact, len, &len2) == 0 && len2 == len);
    FUZZ_CHECK(memcmp(exact, buf, len) == 0);
    FUZZ_CHECK(fds_logparse_json(&rec, exact, len - 1, &len2) == FDS_ERANGE);
    free(exact);
    free(buf);
    return 0;
}

#ifndef FDS_LIBFUZZER

#define FUZZ_MAX_LINE 65536
#define FUZZ_MUTATIONS_MAX 8

static uint64_t rng_state;

static uint64_t rnd(void) { return fds_logparse_splitmix64(&rng_state); }
static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One random edit of buf[0..*len) (capacity FUZZ_MAX_LINE). */
static void mutate(uint8_t *buf, size_t *len, const uint8_t *other,
                   size_t other_len)
{
    static const uint8_t special[] = {' ', '"', '\\', '[', ']', '/', ':', '-',
                                      '+', '\r', '\t', 0, 0x7f, 0x80, 0xc3,
                                      0xe2, 0xed, 0xf0, 0xf4, 0xff, '0', '9'};
    size_t n = *len;
    switch (rnd() % 8) {
    case 0: /* flip a bit */
        if (n) buf[rnd_below(n)] ^= (uint8_t)(1u << (rnd() % 8));
        break;
    case 1: /* set a grammar-significant byte */
        if (n) buf[rnd_below(n)] = special[rnd_below(sizeof special)];
        break;
    case 2: { /* delete a range */
        if (!n) break;
        size_t at = rnd_below(n), k = 1 + rnd_below(n - at < 16 ? n - at : 16);
        memmove(buf + at, buf + at + k, n - at - k);
        *len = n - k;
        break;
    }
    case 3: { /* duplicate a range */
        if (!n) break;
        size_t at = rnd_below(n), k = 1 + rnd_below(n - at < 32 ? n - at : 32);
        if (n + k > FUZZ_MAX_LINE) break;
        memmove(buf + at + k, buf + at, n - at);
        *len = n + k;
        break;
    }
    case 4: /* truncate */
        *len = rnd_below(n + 1);
        break;
    case 5: { /* insert a special byte */
        if (n + 1 > FUZZ_MAX_LINE) break;
        size_t at = rnd_below(n + 1);
        memmove(buf + at + 1, buf + at, n - at);
        buf[at] = special[rnd_below(sizeof special)];
        *len = n + 1;
        break;
    }
    case 6: { /* splice: head of this line, tail of another */
        size_t at = rnd_below(n + 1), from = rnd_below(other_len + 1);
        size_t k = other_len - from;
        if (at + k > FUZZ_MAX_LINE) break;
        memcpy(buf + at, other + from, k);
        *len = at + k;
        break;
    }
    default: /* random byte */
        if (n) buf[rnd_below(n)] = (uint8_t)rnd();
        break;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fuzz_logparse SAMPLE SECONDS [SEED]\n");
        return 2;
    }
    double seconds = atof(argv[2]);
    rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) : (uint64_t)time(NULL);
    fprintf(stderr, "fuzz_logparse: seed %llu\n", (unsigned long long)rng_state);

    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    size_t nlines = 0, cap = 0;
    uint8_t **lines = NULL;
    size_t *lens = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t got;
    while ((got = getline(&line, &line_cap, f)) >= 0) {
        size_t len = (size_t)got;
        if (len && line[len - 1] == '\n') len--;
        if (len > FUZZ_MAX_LINE) continue;
        if (nlines == cap) {
            cap = cap ? 2 * cap : 1024;
            lines = realloc(lines, cap * sizeof *lines);
            lens = realloc(lens, cap * sizeof *lens);
            if (!lines || !lens) return 2;
        }
        lines[nlines] = malloc(len ? len : 1);
        memcpy(lines[nlines], line, len);
        lens[nlines++] = len;
    }
    free(line);
    fclose(f);
    if (!nlines) {
        fprintf(stderr, "fuzz_logparse: no lines in %s\n", argv[1]);
        return 2;
    }
    /* Every unmutated line of the real sample must parse. */
    for (size_t i = 0; i < nlines; i++) {
        fds_logrec r;
        if (fds_logparse_line((const char *)lines[i], lens[i], &r, NULL, NULL)) {
            fprintf(stderr, "fuzz_logparse: sample line %zu does not parse\n", i + 1);
            return 1;
        }
        LLVMFuzzerTestOneInput(lines[i], lens[i]);
    }

    uint8_t *work = malloc(FUZZ_MAX_LINE);
    unsigned long long runs = 0, parsed = 0;
    double t0 = now_s();
    while (now_s() - t0 < seconds) {
        for (int batch = 0; batch < 256; batch++) {
            size_t i = rnd_below(nlines), j = rnd_below(nlines);
            size_t len = lens[i];
            memcpy(work, lines[i], len);
            int m = 1 + (int)rnd_below(FUZZ_MUTATIONS_MAX);
            for (int k = 0; k < m; k++) mutate(work, &len, lines[j], lens[j]);
            /* Exactly-sized copy so sanitizers see any over-read. */
            uint8_t *in = malloc(len ? len : 1);
            memcpy(in, work, len);
            fds_logrec r;
            parsed += fds_logparse_line((const char *)in, len, &r, NULL, NULL) == 0;
            LLVMFuzzerTestOneInput(in, len);
            free(in);
            runs++;
        }
    }
    printf("fuzz_logparse: %llu mutated inputs in %.1f s, %llu parsed, %llu rejected\n",
           runs, now_s() - t0, parsed, runs - parsed);
    for (size_t i = 0; i < nlines; i++) free(lines[i]);
    free(lines);
    free(lens);
    free(work);
    /* Both outcomes must have been exercised, else the mutator is broken. */
    return parsed > 0 && parsed < runs ? 0 : 1;
}
#endif
