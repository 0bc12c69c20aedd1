/*
 * sidx_breakdown: where the bytes of a segment index file (.sidx, stored by
 * the server as seg_N.tim) go, per field and per part.
 *
 *   sidx_breakdown FILE [--fields]
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sidx_breakdown FILE [--fields]\n");
        return 2;
    }
    int per_field = argc > 2 && !strcmp(argv[2], "--fields");
    fds_sidx *s;
    fds_err err;
    if (fds_sidx_open(argv[1], &s, &err)) {
        fprintf(stderr, "sidx_breakdown: cannot open %s\n", argv[1]);
        return 1;
    }
    uint64_t tot[P_N] = {0};
    uint32_t md = s->max_doc;
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
    oset seen = {0};
    if (per_field)
        printf("%-28s %7s %7s %9s %9s %9s %9s %9s %7s %9s\n", "field", "terms",
               "single", "entries", "tbytes", "skip", "postings", "positions",
               "norms", "docvalues");
    for (uint32_t i = 0; i < s->nfields; i++) {
        const fds_sfield *f = &s->fields[i];
        uint64_t p[P_N] = {0}, single = 0;
        
        p[P_ENTRIES] = FDS_SIDX_DICT_BYTES(f->nterms, f->wentry);
        if (f->pos)
            p[P_POS] = FDS_SIDX_POS_TABLE_BYTES(f->nterms, f->wpos);
        for (uint32_t o = 0; o < f->nterms; o++) {
            uint32_t len;
            const char *str = fds__sidx_term_str(f, o, &len);
            if (first_use(&seen, (uint64_t)((const uint8_t *)str - s->map)))
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
                           : 8 + FDS_SIDX_ORD_BYTES(md, f->num_bits);
        for (int k = 0; k < P_N; k++)
            tot[k] += p[k];
        if (per_field)
            printf("%-28.*s %7u %7llu %9llu %9llu %9llu %9llu %9llu %7llu %9llu\n",
                   (int)f->name_len, f->name, f->nterms,
                   (unsigned long long)single,
                   (unsigned long long)p[P_ENTRIES],
                   (unsigned long long)p[P_TBYTES],
                   (unsigned long long)p[P_SKIP], (unsigned long long)p[P_POST],
                   (unsigned long long)p[P_POS], (unsigned long long)p[P_NORMS], (unsigned long long)p[P_DV]);
    }
    tot[P_IDS] = ((uint64_t)md + 1) * 4 + (uint64_t)md * 4 + s->idbytes_len;
    uint64_t file = fds_sidx_file_bytes(s), sum = 0;
    printf("%-16s %10s %6s\n", "part", "bytes", "%");
    for (int k = 0; k < P_N; k++) {
        sum += tot[k];
        printf("%-16s %10llu %6.1f\n", pname[k], (unsigned long long)tot[k],
               100.0 * (double)tot[k] / (double)file);
    }
    printf("%-16s %10llu %6.1f\n", "other", (unsigned long long)(file - sum),
           100.0 * (double)(file - sum) / (double)file);
    printf("%-16s %10llu (%u docs)\n", "file", (unsigned long long)file, md);
    fds_sidx_close(s);
    return 0;
}
