/*
 * sidx_usage.c: where the bytes of a segment index file go, per field and
 * per part -- the figures of the _disk_usage API (Elasticsearch's
 * "Analyze index disk usage", IndexDiskUsageAnalyzer: the inverted index,
 * doc values and norms of each field) and of bench/query/sidx_breakdown.
 *
 * Each byte of the file is counted once: a term string the pool shares
 * between fields (a text field and its keyword sub-field) counts for the
 * first field (in name order) that uses it; the _id table is the _id
 * field's; the header, field descriptors, names, alignment and footer are
 * in none.  Postings and positions are walked block by block (a term's
 * positions have no stored length: the frequencies of its postings give
 * it), so the cost is a pass over every posting of the file.  Layout:
 * sidx_format.h.
 */
#include <stdlib.h>
#include <string.h>

#include "index/positions.h"
#include "index/sidx_int.h"

/* Bytes of the positions of term t (ordinal o) of f: block offsets and
 * every posting's positions (decoded block by block for the tfs). */
static uint64_t term_positions(const fds_sidx *s, const fds_sfield *f,
                               uint32_t o, const fds_sterm *t)
{
    const uint8_t *p0 = fds__sidx_term_pos(s, f, o), *end = s->map + s->len;
    const uint8_t *q = p0 + (size_t)(t->nblocks - 1) * 4;
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK], base = 0;
    if (!t->skip) {
        long k = fds_positions_decode(q, end, 1, NULL);
        return (uint64_t)(q - p0) + (uint64_t)(k > 0 ? k : 0);
    }
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

/* Offsets of term strings already counted (open addressing, 0 = empty). */
typedef struct oset {
    uint64_t *v;
    size_t cap, n;
} oset;

/* 1 when `off` is new (and now in), 0 when seen, -1 out of memory. */
static int first_use(oset *o, uint64_t off)
{
    if (2 * (o->n + 1) > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 4096;
        oset g = {calloc(cap, 8), cap, 0};
        if (!g.v)
            return -1;
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

/* Bytes of f's column after its presence bitset (sidx_format.h). */
static uint64_t column_bytes(const fds_sfield *f, uint32_t md)
{
    if (f->flags & FDS_SIDX_F_ORDCOL)
        return FDS_SIDX_ORD_BYTES(md, f->ord_bits);
    if (f->flags & FDS_SIDX_F_NUMCOL)
        return f->num_bits == FDS_SIDX_NUM_RAW
                   ? (uint64_t)md * 8
                   : (f->kind == FDS_FT_DOUBLE ? 16 : 8) + /* min, scale */
                         FDS_SIDX_ORD_BYTES(md, f->num_bits);
    if (f->flags & FDS_SIDX_F_VALUES) /* vals_off, value ids, the table */
        return 8 + FDS_SIDX_ORD_BYTES(md, f->vbits) + FDS_SIDX_VALS_HDR +
               ((uint64_t)f->nvals + 1) * 8 +
               fds__get_u64(f->voff + (size_t)f->nvals * 8);
    return 0;
}

int fds_sidx_disk_usage(const fds_sidx *s, fds_sidx_usage *u,
                        fds_sidx_usage *id)
{
    uint32_t md = s->max_doc;
    oset seen = {0};
    memset(id, 0, sizeof *id);
    for (uint32_t i = 0; i < s->nfields; i++) {
        const fds_sfield *f = &s->fields[i];
        fds_sidx_usage *p = &u[i];
        memset(p, 0, sizeof *p);
        p->terms = FDS_SIDX_DICT_BYTES(f->nterms, f->wentry);
        if (f->pos)
            p->positions = FDS_SIDX_POS_TABLE_BYTES(f->nterms, f->wpos);
        for (uint32_t o = 0; o < f->nterms; o++) {
            uint32_t len;
            const char *str = fds__sidx_term_str(f, o, &len);
            int fresh = first_use(&seen, (uint64_t)((const uint8_t *)str - s->map));
            if (fresh < 0) {
                free(seen.v);
                return FDS_ENOMEM;
            }
            p->terms += fresh ? len : 0;
            fds_sterm t;
            fds__sidx_term_at(s, f, o, &t);
            if (f->pos)
                p->positions += term_positions(s, f, o, &t);
            if (!t.skip)
                continue; /* a singleton, inline in its entry */
            /* skip entries, then the blocks up to the last one's end */
            const uint8_t *sk = t.skip + (size_t)(t.nblocks - 1) * FDS_SIDX_SKIP_LEN;
            uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
            uint32_t base = t.nblocks > 1 ? fds__get_u32(sk - FDS_SIDX_SKIP_LEN) + 1 : 0;
            long n = fds_postings_decode_block(fds__skip_block(&t, sk), t.end,
                                               sk[13] + 1u, base, md, docs, tfs);
            p->postings += (uint64_t)t.nblocks * FDS_SIDX_SKIP_LEN +
                           fds__get_u32(sk + 4) + fds__skip_ilen(sk) +
                           (n > 0 ? (uint64_t)n : 0);
        }
        if (f->norms)
            p->norms = md;
        p->doc_values = ((uint64_t)md + 63) / 64 * 8 + column_bytes(f, md);
    }
    free(seen.v);
    id->terms = ((uint64_t)md + 1) * 4 + (uint64_t)md * 4 + s->idbytes_len;
    return 0;
}

uint32_t fds_sidx_nfields(const fds_sidx *s)
{
    return s->nfields;
}

const char *fds_sidx_field_name(const fds_sidx *s, uint32_t i, size_t *len)
{
    if (i >= s->nfields)
        return NULL;
    *len = s->fields[i].name_len;
    return s->fields[i].name;
}
