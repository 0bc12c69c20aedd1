/*
 * sidx_breakdown: where the bytes of a segment index file (.sidx, stored by
 * the server as seg_N.tim) go, per field and per part.
 *
 *   sidx_breakdown FILE [--fields]
 *
 * Parts (bytes): term entries (FDS_SIDX_TERM_LEN each), term bytes (strings
 * first written for the field; strings shared with an earlier field are
 * counted there), skip entries, postings blocks, norms, doc values (presence
 * bitset + column), the _id table, and the rest (header, field
 * descriptors and names, alignment, footer).  Layout: src/query/sidx_format.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_error.h"
#include "postings.h"
#include "query.h"
#include "sidx_int.h"

enum { P_ENTRIES, P_TBYTES, P_SKIP, P_POST, P_NORMS, P_DV, P_IDS, P_N };
static const char *pname[P_N] = {"term entries", "term bytes", "skip entries",
                                 "postings blocks", "norms", "doc values",
                                 "_id table"};

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
    if (per_field)
        printf("%-28s %7s %7s %9s %9s %9s %9s %7s %9s\n", "field", "terms",
               "single", "entries", "tbytes", "skip", "postings", "norms",
               "docvalues");
    for (uint32_t i = 0; i < s->nfields; i++) {
        const fds_sfield *f = &s->fields[i];
        uint64_t p[P_N] = {0}, single = 0;
        uint64_t terms_off = (uint64_t)(f->terms - s->map);
        p[P_ENTRIES] = (uint64_t)f->nterms * FDS_SIDX_TERM_LEN;
        for (uint32_t o = 0; o < f->nterms; o++) {
            uint32_t len;
            const char *str = fds__sidx_term_str(f, o, &len);
            if ((uint64_t)((const uint8_t *)str - s->map) > terms_off)
                p[P_TBYTES] += len;
            fds_sterm t;
            fds__sidx_term_at(s, f, o, &t);
            if (t.df == 1) {
                single++;
                continue;
            }
            p[P_SKIP] += (uint64_t)t.nblocks * FDS_SIDX_SKIP_LEN;
            const uint8_t *sk = t.skip + (size_t)(t.nblocks - 1) * FDS_SIDX_SKIP_LEN;
            uint32_t base = t.nblocks > 1 ? fds__get_u32(sk - FDS_SIDX_SKIP_LEN) + 1 : 0;
            long n = fds_postings_decode_block(t.data + fds__get_u32(sk + 4), t.end,
                                               sk[13] + 1u, base, md, docs, tfs);
            p[P_POST] += fds__get_u32(sk + 4) + (n > 0 ? (uint64_t)n : 0);
        }
        if (f->norms)
            p[P_NORMS] = md;
        p[P_DV] = ((uint64_t)md + 63) / 64 * 8;
        if (f->flags & FDS_SIDX_F_ORDCOL)
            p[P_DV] += FDS_SIDX_ORD_BYTES(md, f->ord_bits);
        else if (f->flags & FDS_SIDX_F_NUMCOL)
            p[P_DV] += (uint64_t)md * 8;
        for (int k = 0; k < P_N; k++)
            tot[k] += p[k];
        if (per_field)
            printf("%-28.*s %7u %7llu %9llu %9llu %9llu %9llu %7llu %9llu\n",
                   (int)f->name_len, f->name, f->nterms,
                   (unsigned long long)single,
                   (unsigned long long)p[P_ENTRIES],
                   (unsigned long long)p[P_TBYTES],
                   (unsigned long long)p[P_SKIP], (unsigned long long)p[P_POST],
                   (unsigned long long)p[P_NORMS], (unsigned long long)p[P_DV]);
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
