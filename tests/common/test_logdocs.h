/*
 * test_logdocs.h: real documents for tests and benchmarks: lines of an
 * access log (the real nginx sample) converted by fds_logparse exactly as
 * `nginx2json` converts them with its defaults (host www.zanbil.ir, seed 1,
 * line numbers from 1), so tests measure and query the documents users
 * index.  Programs including this header link fds_logparse.
 *
 * Header-only (static functions): include it in one .c file per program.
 */
#ifndef FDS_TEST_LOGDOCS_H
#define FDS_TEST_LOGDOCS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "logparse.h"

/* nginx2json's default --seed (datasets/nginx2json.c). */
#define FDS_TEST_LOG_SEED 1u

/* A buffer size that holds the document of any line of `len` bytes: every
 * string byte may take 6 bytes ("\u00XX"), plus keys, numbers and the
 * derived fields (fds_logparse_json_bound() is checked too). */
#define FDS_TEST_LOG_JSON_BOUND(len) (6 * (size_t)(len) + 1024)

/*
 * Convert line[0..len) (without its '\n'), line number `line_no` (1-based),
 * into the JSON document at dst[0..cap).  Returns the JSON length, or 0 when
 * the line does not parse or cap is below fds_logparse_json_bound().
 */
static inline size_t fds_test_log_json_to(const char *line, size_t len,
                                          uint64_t line_no, char *dst,
                                          size_t cap)
{
    fds_logrec rec;
    if (fds_logparse_line(line, len, &rec, NULL, NULL))
        return 0;
    fds_logparse_derive(&rec, FDS_LOGPARSE_HOST_DEFAULT, FDS_TEST_LOG_SEED,
                        line_no);
    size_t n = 0;
    if (fds_logparse_json_bound(&rec) > cap ||
        fds_logparse_json(&rec, dst, cap, &n))
        return 0;
    return n;
}

/* fds_test_log_json_to() into *buf, grown with realloc to
 * FDS_TEST_LOG_JSON_BOUND(len) (aborts when out of memory; the caller frees
 * *buf). */
static inline size_t fds_test_log_json(const char *line, size_t len,
                                       uint64_t line_no, char **buf,
                                       size_t *cap)
{
    size_t need = FDS_TEST_LOG_JSON_BOUND(len);
    if (*cap < need) {
        char *nb = realloc(*buf, need);
        if (!nb)
            abort();
        *buf = nb;
        *cap = need;
    }
    return fds_test_log_json_to(line, len, line_no, *buf, *cap);
}

#endif
