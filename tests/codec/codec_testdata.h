/*
 * codec_testdata.h: real documents for the codec tests, fuzz seeds, golden
 * generator and benchmark.
 *
 * Why: the codec must be exercised on the data it is built for (the real
 * nginx sample, datasets/nginx-zanbil-access-10k.log), as the JSON documents
 * of DESIGN.md §2 that nginx2json makes of it (tests/common/test_logdocs.h;
 * programs including this header link fds_logparse).  This header adds the
 * end-to-end document store the codec tests cut blocks from.
 *
 * Header-only (static functions): include it in one .c file per program.
 */
#ifndef FDS_CODEC_TESTDATA_H
#define FDS_CODEC_TESTDATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_logdocs.h"

/* Documents laid end to end, with lengths. */
typedef struct td_docs {
    uint8_t *bytes;
    size_t len, cap;
    uint32_t *lens;
    size_t *offs; /* offs[i] = start of doc i; offs[n] = len */
    size_t n, ncap;
} td_docs;

static inline void td_push(td_docs *d, const void *p, size_t n)
{
    if (d->n + 2 > d->ncap) {
        d->ncap = d->ncap ? d->ncap * 2 : 1024;
        d->lens = realloc(d->lens, d->ncap * sizeof *d->lens);
        d->offs = realloc(d->offs, (d->ncap + 1) * sizeof *d->offs);
        if (!d->lens || !d->offs) abort();
    }
    if (d->len + n > d->cap) {
        d->cap = (d->len + n) * 2 + 4096;
        d->bytes = realloc(d->bytes, d->cap);
        if (!d->bytes) abort();
    }
    memcpy(d->bytes + d->len, p, n);
    d->offs[d->n] = d->len;
    d->lens[d->n++] = (uint32_t)n;
    d->len += n;
    d->offs[d->n] = d->len;
}

static inline void td_free(td_docs *d)
{
    free(d->bytes); free(d->lens); free(d->offs);
    memset(d, 0, sizeof *d);
}

/* The splitmix64 finalizer of x (one step of fds_logparse_splitmix64 from
 * state x): the tests' deterministic mixing of seeds. */
static inline uint64_t td_mix(uint64_t x)
{
    return fds_logparse_splitmix64(&x);
}

/* Line `seq` (0-based) as its document, into out (at least
 * FDS_TEST_LOG_JSON_BOUND(n) bytes).  Returns the length, or 0 when the line
 * does not parse. */
static inline size_t td_line_to_json(const char *line, size_t n, uint64_t seq,
                                     char *out)
{
    return fds_test_log_json_to(line, n, seq + 1, out,
                                FDS_TEST_LOG_JSON_BOUND(n));
}

/* Load up to max_docs lines of `path`; as_json converts them, else the raw
 * lines (without newline) are the docs.  With as_json, a line that starts
 * with '{' is taken as a document already (NDJSON, one `_source` per line,
 * as synthlogs writes them).  Returns 0 or -1. */
static inline int td_load(const char *path, int as_json, size_t max_docs, td_docs *d)
{
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char *line = NULL, *out = NULL;
    size_t lcap = 0, ocap = 0;
    ssize_t n;
    uint64_t line_no = 0;
    while (d->n < max_docs && (n = getline(&line, &lcap, f)) > 0) {
        line_no++;
        if (line[n - 1] == '\n') n--;
        if (!as_json || (n > 0 && line[0] == '{')) {
            td_push(d, line, (size_t)n);
            continue;
        }
        size_t o = fds_test_log_json(line, (size_t)n, line_no, &out, &ocap);
        if (o) td_push(d, out, o);
    }
    free(line); free(out);
    fclose(f);
    return d->n ? 0 : -1;
}

/* One block from doc `first`: docs are added until the raw bytes reach
 * block_size or the block holds max_docs (DESIGN.md §3).  Returns the
 * index one past the block's last doc. */
static inline size_t td_cut(const td_docs *d, size_t first, size_t block_size,
                            size_t max_docs)
{
    size_t i = first, raw = 0;
    while (i < d->n && i - first < max_docs && raw < block_size)
        raw += d->lens[i++];
    return i;
}

#endif
