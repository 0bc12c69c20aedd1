/*
 * sidx_breakdown: where the bytes of a segment index file (.sidx, stored by
 * the server as seg_N.tim) go, per field and per part.
 *
 *   sidx_breakdown FILE... [--fields] [--per-doc]
 *
 * Several files (a shard's segments) are summed, fields matched by name;
 * --per-doc divides every figure by the files' documents (max_doc).
 *
 * Parts (bytes): term dictionary (bit-packed entries), term bytes (strings
 * first written for the field; strings shared with an earlier field are
 * counted there), skip entries, postings blocks, positions (format 5: the
 * field's positions table, each term's block offsets and positions),
 * norms, doc values (presence bitset + column), the _id table, and the rest (header, field
 * descriptors and names, alignment, footer).  Layout: src/query/index/sidx_format.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_error.h"
#include "index/positions.h"
#include "index/postings.h"
#include "query.h"
#include "index/sidx_int.h"

enum { P_ENTRIES, P_TBYTES, P_SKIP, P_POST, P_POS, P_NORMS, P_DV, P_IDS, P_N };
static const char *pname[P_N] = {"term dict", "term bytes", "skip entries",
                                 "postings blocks", "positions", "norms",
                                 "doc values", "_id table"};

/* Bytes of the positions of term t (ordinal o) of f: block offsets and
 * every posting's positions (decoded block by block for the tfs). */
static uint64_t term_positions(const fds_sidx *s, const fds_sfield *f,
                               uint32_t o, fds_sterm *t)
{
    const uint8_t *p0 = fds__sidx_term_pos(s, f, o), *end = s->map + s->len;
    const uint8_t *q = p0 + (size_t)(t->nblocks - 1) * 4;
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK], base = 0;
    if (!t->skip)
        return (uint64_t)(q - p0) + (uint64_t)fds_positions_decode(q, end, 1, NULL);
    for (uint32_t b = 0; b < t->nblocks; b++) {
        const uint8_t *sk = t->skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        unsigned n = sk[13] + 1u;
        if (fds_postings_decode_block(fds__skip_block(t, sk), t->end, n, base,
                                      s->max_doc, docs, tfs) < 0)
            break;
        for (unsigned i = 0; i < n; i++) {
            long k = fds_positions_decode(q, end, tfs[i], NULL);
            q += k > 0 ? k : 0;
        }
        base = fds__get_u32(sk) + 1;
    }
    return (uint64_t)(q - p0);
}

/* Offsets of term strings already counted (open addressing). */
typedef struct { uint64_t *v; size_t cap, n; } oset;
static int first_use(oset *o, uint64_t off)
{
    if (2 * (o->n + 1) > o->cap) {
        oset g = {calloc(o->cap ? o->cap * 2 : 4096, 8), o->cap ? o->cap * 2 : 4096, 0};
        for (size_t i = 0; i < o->cap; i++)
            if (o->v[i])
                first_use(&g, o->v[i] - 1);
        free(o->v);
        *o = g;
    }
    size_t h = (size_t)(off * 0x9E3779B97F4A7C15ull >> 20) & (o->cap - 1);
    for (; o->v[h]; h = (h + 1) & (o->cap - 1))
        if (o->v[h] == off + 1)
            return 0;
    o->v[h] = off + 1;
    o->n++;
    return 1;
}

/* Totals of one field over the files (matched by name). */
typedef struct ftot {
    char name[128];
    uint64_t terms, single, p[P_N];
} ftot;

static ftot *field_tot(ftot *ft, size_t *n, const char *name, uint32_t len)
{
    for (size_t i = 0; i < *n; i++)
        if (strlen(ft[i].name) == len && !memcmp(ft[i].name, name, len))
            return &ft[i];
    ftot *t = &ft[(*n)++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%.*s", (int)len, name);
    return t;
}

/* Add the parts of file s to tot, and per field to ft. */
static void breakdown(const fds_sidx *s, oset *seen, uint64_t *tot, ftot *ft,
                      size_t *nft)
{
    uint32_t md = s->max_doc;
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
    for (uint32_t i = 0; i < s->nfields; i++) {
        const fds_sfield *f = &s->fields[i];
        uint64_t p[P_N] = {0}, single = 0;

        p[P_ENTRIES] = FDS_SIDX_DICT_BYTES(f->nterms, f->wentry);
        if (f->pos)
            p[P_POS] = FDS_SIDX_POS_TABLE_BYTES(f->nterms, f->wpos);
        for (uint32_t o = 0; o < f->nterms; o++) {
            uint32_t len;
            const char *str = fds__sidx_term_str(f, o, &len);
            if (first_use(seen, (uint64_t)((const uint8_t *)str - s->map)))
                p[P_TBYTES] += len;
            fds_sterm t;
            fds__sidx_term_at(s, f, o, &t);
            if (f->pos)
                p[P_POS] += term_positions(s, f, o, &t);
            if (!t.skip) {
                single++;
                continue;
            }
            p[P_SKIP] += (uint64_t)t.nblocks * FDS_SIDX_SKIP_LEN;
            const uint8_t *sk = t.skip + (size_t)(t.nblocks - 1) * FDS_SIDX_SKIP_LEN;
            uint32_t base = t.nblocks > 1 ? fds__get_u32(sk - FDS_SIDX_SKIP_LEN) + 1 : 0;
            long n = fds_postings_decode_block(fds__skip_block(&t, sk), t.end,
                                               sk[13] + 1u, base, md, docs, tfs);
            p[P_POST] += fds__get_u32(sk + 4) + fds__skip_ilen(sk) +
                         (n > 0 ? (uint64_t)n : 0);
        }
        if (f->norms)
            p[P_NORMS] = md;
        p[P_DV] = ((uint64_t)md + 63) / 64 * 8;
        if (f->flags & FDS_SIDX_F_ORDCOL)
            p[P_DV] += FDS_SIDX_ORD_BYTES(md, f->ord_bits);
        else if (f->flags & FDS_SIDX_F_NUMCOL)
            p[P_DV] += f->num_bits == FDS_SIDX_NUM_RAW
                           ? (uint64_t)md * 8
                           : (f->kind == FDS_FT_DOUBLE ? 16 : 8) + /* + scale */
                                 FDS_SIDX_ORD_BYTES(md, f->num_bits);
        ftot *t = field_tot(ft, nft, f->name, f->name_len);
        t->terms += f->nterms;
        t->single += single;
        for (int k = 0; k < P_N; k++) {
            tot[k] += p[k];
            t->p[k] += p[k];
        }
    }
    tot[P_IDS] += ((uint64_t)md + 1) * 4 + (uint64_t)md * 4 + s->idbytes_len;
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
        if (argv[a][0] == '-' && argv[a][1] == '-')
            continue;
        fds_sidx *s;
        fds_err err;
        if (fds_sidx_open(argv[a], &s, &err)) {
            fprintf(stderr, "sidx_breakdown: cannot open %s\n", argv[a]);
            return 1;
        }
        if (s->nfields > 1024 - nft) {
            fprintf(stderr, "sidx_breakdown: too many fields\n");
            return 1;
        }
        oset seen = {0}; /* term strings are shared within one file */
        breakdown(s, &seen, tot, ft, &nft);
        free(seen.v);
        file += fds_sidx_file_bytes(s);
        ndocs += s->max_doc;
        fds_sidx_close(s);
    }
    /* bytes, or bytes per doc with --per-doc */
    double div = per_doc && ndocs ? (double)ndocs : 1.0;
    const char *fmt = per_doc ? " %9.2f" : " %9.0f";
    if (per_field) {
        printf("%-28s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "field", "terms",
               "single", "entries", "tbytes", "skip", "postings", "positions",
               "norms", "docvalues");
        for (size_t i = 0; i < nft; i++) {
            printf("%-28s %9llu %9llu", ft[i].name,
                   (unsigned long long)ft[i].terms,
                   (unsigned long long)ft[i].single);
            for (int k = P_ENTRIES; k <= P_DV; k++)
                printf(fmt, (double)ft[i].p[k] / div);
            printf("\n");
        }
    }
    uint64_t sum = 0;
    printf("%-16s %10s %6s\n", "part", per_doc ? "B/doc" : "bytes", "%");
    for (int k = 0; k < P_N; k++) {
        sum += tot[k];
        printf("%-16s", pname[k]);
        printf(per_doc ? " %10.2f" : " %10.0f", (double)tot[k] / div);
        printf(" %6.1f\n", 100.0 * (double)tot[k] / (double)file);
    }
    printf("%-16s", "other");
    printf(per_doc ? " %10.2f" : " %10.0f", (double)(file - sum) / div);
    printf(" %6.1f\n", 100.0 * (double)(file - sum) / (double)file);
    printf("%-16s", "file");
    printf(per_doc ? " %10.2f" : " %10.0f", (double)file / div);
    printf(" (%llu docs, %d files)\n", (unsigned long long)ndocs, nfiles);
    return 0;
}
