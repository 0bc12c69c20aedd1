/*
 * qtest.h: helpers shared by the query tests and bench/query: the common
 * assertion helpers and loading the real sample as the JSON documents
 * nginx2json makes of it (tests/common/test_logdocs.h; link fds_logparse).
 */
#ifndef FDS_QTEST_H
#define FDS_QTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_test.h"
#include "test_logdocs.h"

typedef struct qt_docs {
    char **json;
    size_t *len;
    size_t n;
} qt_docs;

__attribute__((unused)) static int qt_load(const char *path, qt_docs *d, size_t max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL, *json = NULL;
    size_t lcap = 0, jcap = 0;
    ssize_t ll;
    size_t cap = 1024;
    uint64_t line_no = 0;
    d->json = malloc(cap * sizeof *d->json);
    d->len = malloc(cap * sizeof *d->len);
    d->n = 0;
    while (d->n < max && (ll = getline(&line, &lcap, f)) >= 0) {
        line_no++;
        if (ll && line[ll - 1] == '\n')
            ll--;
        size_t n;
        if (ll && line[0] == '{') { /* a document already (synthlogs) */
            if ((size_t)ll + 1 > jcap) {
                char *nj = realloc(json, (size_t)ll + 1);
                if (!nj)
                    break;
                json = nj;
                jcap = (size_t)ll + 1;
            }
            memcpy(json, line, (size_t)ll);
            n = (size_t)ll;
        } else {
            n = fds_test_log_json(line, (size_t)ll, line_no, &json, &jcap);
        }
        if (!n) {
            fprintf(stderr, "unparsed line %llu\n", (unsigned long long)line_no);
            continue;
        }
        if (d->n == cap) {
            cap *= 2;
            d->json = realloc(d->json, cap * sizeof *d->json);
            d->len = realloc(d->len, cap * sizeof *d->len);
        }
        char *doc = malloc(n + 1);
        memcpy(doc, json, n);
        doc[n] = 0;
        d->json[d->n] = doc;
        d->len[d->n++] = n;
    }
    free(line);
    free(json);
    fclose(f);
    return 0;
}

#endif
