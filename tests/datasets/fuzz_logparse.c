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
 * Run by the shared driver (tests/fuzz/fuzz_driver.h): under libFuzzer in
 * the fuzzing build, or as ctest's plain driver,
 *     fuzz_logparse SAMPLE SECONDS [SEED]
 * which takes every line of the real SAMPLE as a seed (each must parse as it
 * is), mutates them (byte flips, grammar-significant bytes, deletions,
 * duplications, splices, truncations) for SECONDS and feeds each to the
 * target in a buffer of exactly its size, so an AddressSanitizer build
 * catches any over-read; the run fails unless some inputs parsed and some
 * were rejected (else the mutator is broken).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_check.h"
#include "logparse.h"

/* The driver: seeds are the sample's lines, mutated with the bytes that
 * matter to the log grammar and UTF-8, up to 8 edits an input. */
#define FDS_FUZZ_SEED_LINES 1
#define FDS_FUZZ_BYTES ' ', '"', '\\', '[', ']', '/', ':', '-', '+', '\r', '\t', \
                       0, 0x7f, 0x80, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff, '0', '9'
#define FDS_FUZZ_MUTATIONS_MAX 8
#include "../fuzz/fuzz_driver.h"

/* Inputs parsed and rejected, for fds_fuzz_finish. */
static unsigned long long fz_parsed, fz_rejected;

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fds_logrec rec;
    const char *why = NULL;
    size_t col = (size_t)-1;
    int rc = fds_logparse_line((const char *)data, size, &rec, &why, &col);
    if (rc) {
        fz_rejected++;
        FUZZ_CHECK(rc == FDS_EPARSE && why != NULL && col <= size);
        return 0;
    }
    fz_parsed++;
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
/* Every line of the real sample parses as it is. */
int fds_fuzz_seed_check(const uint8_t *p, size_t n)
{
    fds_logrec r;
    return fds_logparse_line((const char *)p, n, &r, NULL, NULL);
}

/* Both outcomes were exercised, else the mutator is broken. */
int fds_fuzz_finish(void)
{
    printf("fuzz_logparse: %llu parsed, %llu rejected\n", fz_parsed, fz_rejected);
    return fz_parsed > 0 && fz_rejected > 0 ? 0 : 1;
}
#endif
