/*
 * sidx_breakdown: where the bytes of segment index files (.sidx, stored by
 * the server as seg_N.tim) go, per field and per part.
 *
 *   sidx_breakdown FILE... [--fields] [--per-doc]
 *
 * Parts (fds_sidx_disk_usage, src/query/index/sidx_usage.c, the figures of
 * the _disk_usage API): term dictionary (bit-packed entries and the term
 * bytes first written for the field; strings shared with an earlier field
 * are counted there), postings (skip entries, impacts, blocks), positions
 * (the field's positions table, each term's block offsets and positions),
 * norms, doc values (presence bitset, column, value table), the _id
 * table, and the rest (header, field descriptors and names, alignment,
 * footer).  Several files (a shard's segments) are summed, fields matched
 * by name; --per-doc divides every figure by the files' documents
 * (max_doc).  Layout: src/query/index/sidx_format.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_error.h"
#include "query.h"
#include "index/sidx_int.h"

enum { P_TERMS, P_POST, P_POS, P_NORMS, P_DV, P_IDS, P_N };
static const char *pname[P_N] = {"term dict", "postings", "positions",
                                 "norms", "doc values", "_id table"};

/* Totals of one field over the files (matched by name). */
typedef struct ftot {
    char name[128];
    uint64_t terms, p[P_N];
} ftot;

static ftot *field_tot(ftot *ft, size_t *n, const char *name, size_t len)
{
    for (size_t i = 0; i < *n; i++)
        if (strlen(ft[i].name) == len && !memcmp(ft[i].name, name, len))
            return &ft[i];
    ftot *t = &ft[(*n)++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%.*s", (int)len, name);
    return t;
}

int main(int argc, char **argv)
{
    int per_field = 0, per_doc = 0, nfiles = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--fields"))
            per_field = 1;
        else if (!strcmp(argv[a], "--per-doc"))
            per_doc = 1;
        else
            nfiles++;
    }
    if (!nfiles) {
        fprintf(stderr, "usage: sidx_breakdown FILE... [--fields] [--per-doc]\n");
        return 2;
    }
    uint64_t tot[P_N] = {0}, file = 0, ndocs = 0;
    static ftot ft[1024];
    size_t nft = 0;
    for (int a = 1; a < argc; a++) {
        if (!strncmp(argv[a], "--", 2))
            continue;
        fds_sidx *s;
        fds_err err;
        if (fds_sidx_open(argv[a], &s, &err)) {
            fprintf(stderr, "sidx_breakdown: cannot open %s\n", argv[a]);
            return 1;
        }
        uint32_t nf = fds_sidx_nfields(s);
        fds_sidx_usage *u = calloc(nf + 1, sizeof *u), id;
        if (!u || nf > 1024 - nft || fds_sidx_disk_usage(s, u, &id)) {
            fprintf(stderr, "sidx_breakdown: out of memory or too many fields\n");
            return 1;
        }
        for (uint32_t i = 0; i < nf; i++) {
            size_t len;
            const char *name = fds_sidx_field_name(s, i, &len);
            ftot *t = field_tot(ft, &nft, name, len);
            uint64_t p[P_N] = {u[i].terms, u[i].postings, u[i].positions,
                               u[i].norms, u[i].doc_values, 0};
            t->terms += s->fields[i].nterms;
            for (int k = 0; k < P_N; k++) {
                t->p[k] += p[k];
                tot[k] += p[k];
            }
        }
        tot[P_IDS] += id.terms;
        free(u);
        file += fds_sidx_file_bytes(s);
        ndocs += fds_sidx_max_doc(s);
        fds_sidx_close(s);
    }
    /* bytes, or bytes per doc with --per-doc */
    double div = per_doc && ndocs ? (double)ndocs : 1.0;
    const char *fmt = per_doc ? " %10.2f" : " %10.0f";
    if (per_field) {
        printf("%-28s %10s %10s %10s %10s %10s %10s\n", "field", "terms",
               "term dict", "postings", "positions", "norms", "doc values");
        for (size_t i = 0; i < nft; i++) {
            printf("%-28s %10llu", ft[i].name, (unsigned long long)ft[i].terms);
            for (int k = P_TERMS; k <= P_DV; k++)
                printf(fmt, (double)ft[i].p[k] / div);
            printf("\n");
        }
    }
    uint64_t sum = 0;
    printf("%-16s %10s %6s\n", "part", per_doc ? "B/doc" : "bytes", "%");
    for (int k = 0; k < P_N; k++) {
        sum += tot[k];
        printf("%-16s", pname[k]);
        printf(fmt, (double)tot[k] / div);
        printf(" %6.1f\n", 100.0 * (double)tot[k] / (double)file);
    }
    printf("%-16s", "other");
    printf(fmt, (double)(file - sum) / div);
    printf(" %6.1f\n", 100.0 * (double)(file - sum) / (double)file);
    printf("%-16s", "file");
    printf(fmt, (double)file / div);
    printf(" (%llu docs, %d files)\n", (unsigned long long)ndocs, nfiles);
    return 0;
}
