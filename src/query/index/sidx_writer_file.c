/*
 * sidx_writer_file.c: the segment writer's second half -- the terms,
 * postings, positions, norms and doc values that sidx_writer.c gathered in
 * memory, serialized into one ".sidx" file (layout: sidx_format.h): terms
 * sorted and their strings interned, postings cut into 128-doc blocks with
 * skip data and impacts, columns packed, the ids table and the footer, the
 * whole written to a new file and fsynced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/positions.h"
#include "index/postings.h"
#include "index/sidx_format.h"
#include "index/sidx_int.h" /* fds__dcol_plan */
#include "index/sidx_writer_int.h"

#define grow fds__grow

typedef struct obuf {
    uint8_t *p;
    size_t len, cap;
    int oom;
} obuf;

static size_t ob_reserve(obuf *b, size_t n)
{
    if (b->oom)
        return 0;
    if (grow((void **)&b->p, &b->cap, b->len + n, 1)) {
        b->oom = 1;
        return 0;
    }
    size_t at = b->len;
    memset(b->p + at, 0, n);
    b->len += n;
    return at;
}

static void ob_align(obuf *b)
{
    size_t pad = (8 - b->len % 8) % 8;
    if (pad)
        ob_reserve(b, pad);
}

static size_t ob_put(obuf *b, const void *p, size_t n)
{
    size_t at = ob_reserve(b, n);
    if (!b->oom && n)
        memcpy(b->p + at, p, n);
    return at;
}

/* A term id with the first 8 bytes of its term, big-endian, zero-padded:
 * keys order like the bytes, so only terms whose keys tie are compared
 * in full (sort_terms). */
typedef struct tkey {
    uint64_t key;
    uint32_t id;
} tkey;

static int tkey_cmp(const void *a, const void *b, void *f)
{
    const tkey *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return term_cmp_bytes(f, x->id, y->id);
}

static int wfield_name_cmp(const void *a, const void *b)
{
    const wfield *x = *(wfield *const *)a, *y = *(wfield *const *)b;
    return strcmp(x->mf->path, y->mf->path);
}

static int id_cmp(const void *a, const void *b, void *ctx)
{
    const fds_sidx_writer *w = ctx;
    const char *g_ids = w->ids;
    const uint32_t *g_idoff = w->idoff;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    size_t lx = g_idoff[x + 1] - g_idoff[x], ly = g_idoff[y + 1] - g_idoff[y];
    int c = memcmp(g_ids + g_idoff[x], g_ids + g_idoff[y], lx < ly ? lx : ly);
    return c ? c : (lx < ly ? -1 : lx > ly);
}


/* Interning table of term strings already written to the output buffer
 * (open addressing on FNV-1a; entries are offsets into the buffer). */
typedef struct strpool {
    uint64_t *slot; /* (offset << 16 | len) + 1, 0 = empty */
    size_t cap, n;
} strpool;

/* Offset of `s` in b (written now if new), SIZE_MAX when out of memory;
 * `hash` is term_hash(s, n).  Terms are at most FDS_TERM_MAX_BYTES long
 * (fits the 16-bit length). */
static size_t str_intern(strpool *sp, obuf *b, const char *s, size_t n,
                         uint64_t hash)
{
    if (n > 0xFFFF) { /* not interned */
        size_t at = ob_put(b, s, n);
        return b->oom ? SIZE_MAX : at;
    }
    if (2 * (sp->n + 1) > sp->cap) {
        size_t nc = sp->cap ? sp->cap * 2 : 1024;
        uint64_t *ns = calloc(nc, sizeof *ns);
        if (!ns)
            return SIZE_MAX;
        for (size_t i = 0; i < sp->cap; i++) {
            uint64_t v = sp->slot[i];
            if (!v)
                continue;
            size_t off = (size_t)((v - 1) >> 16), len = (size_t)((v - 1) & 0xFFFF);
            size_t h = (size_t)term_hash((const char *)b->p + off, len) & (nc - 1);
            while (ns[h])
                h = (h + 1) & (nc - 1);
            ns[h] = v;
        }
        free(sp->slot);
        sp->slot = ns;
        sp->cap = nc;
    }
    size_t h = (size_t)hash & (sp->cap - 1);
    for (; sp->slot[h]; h = (h + 1) & (sp->cap - 1)) {
        uint64_t v = sp->slot[h] - 1;
        size_t off = (size_t)(v >> 16), len = (size_t)(v & 0xFFFF);
        if (len == n && !memcmp(b->p + off, s, n))
            return off;
    }
    size_t at = ob_put(b, s, n);
    if (b->oom)
        return SIZE_MAX;
    sp->slot[h] = ((uint64_t)at << 16 | n) + 1;
    sp->n++;
    return at;
}

size_t fds__sidx_impacts(const uint32_t *tfs, const uint8_t *nbs, unsigned n,
                         uint8_t *out)
{
    /* the largest tf at each norm byte, then a sweep up the norms keeping
     * the pairs whose tf beats every lower norm's */
    uint32_t best[256] = {0};
    for (unsigned i = 0; i < n; i++)
        if (tfs[i] > best[nbs[i]])
            best[nbs[i]] = tfs[i];
    unsigned m = 0;
    uint32_t top = 0;
    size_t o = 0;
    for (unsigned nb = 0; nb < 256; nb++)
        if (best[nb] > top) {
            top = best[nb];
            out[o++] = (uint8_t)nb;
            o += fds__varint_put(out + o, top);
            m++;
        }
    return m > 1 ? o : 0; /* one pair: (max tf, min norm) says it all */
}

/* Write postings of term t (docs from its varint buffer) into b. */
static int write_postings(obuf *b, const wfield *f, const wterm *t,
                          uint32_t max_doc)
{
    uint32_t nblocks = (t->df + FDS_POSTINGS_BLOCK - 1) / FDS_POSTINGS_BLOCK;
    size_t skip = ob_reserve(b, (size_t)nblocks * FDS_SIDX_SKIP_LEN);
    size_t data0 = b->len;
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
    uint8_t enc[FDS_POSTINGS_BLOCK_BOUND(FDS_POSTINGS_BLOCK)];
    uint8_t nbs[FDS_POSTINGS_BLOCK], imp[FDS_SIDX_IMPACTS_BYTES_MAX];
    const uint8_t *p = t->buf, *end = t->buf + t->blen;
    uint32_t prev = UINT32_MAX, base = 0;
    for (uint32_t blk = 0; blk < nblocks; blk++) {
        unsigned n = 0;
        uint32_t max_tf = 0;
        uint8_t min_norm = 255;
        while (n < FDS_POSTINGS_BLOCK && p < end) {
            uint32_t gap = 0, tf = 1;
            p += fds__varint_get(p, end, &gap);
            p += fds__varint_get(p, end, &tf);
            uint32_t d = prev == UINT32_MAX ? gap : prev + 1 + gap;
            docs[n] = d;
            tfs[n] = tf;
            if (tf > max_tf)
                max_tf = tf;
            uint8_t nb = f->norms ? f->norms[d] : 1;
            if (nb < min_norm)
                min_norm = nb;
            nbs[n] = nb;
            prev = d;
            n++;
        }
        size_t ilen = fds__sidx_impacts(tfs, nbs, n, imp);
        size_t at = ob_put(b, imp, ilen);
        size_t len = fds_postings_encode_block(docs, tfs, n, base, enc);
        ob_put(b, enc, len);
        if (b->oom)
            return FDS_ENOMEM;
        uint8_t *s = b->p + skip + (size_t)blk * FDS_SIDX_SKIP_LEN;
        fds__put_u32(s, docs[n - 1]);
        fds__put_u32(s + 4, (uint32_t)(at - data0));
        fds__put_u32(s + 8, max_tf);
        s[12] = min_norm;
        s[13] = (uint8_t)(n - 1);
        s[14] = (uint8_t)ilen;
        s[15] = (uint8_t)(ilen >> 8);
        base = docs[n - 1] + 1;
    }
    (void)max_doc;
    return 0;
}

/* The positions of term t (layout: sidx_format.h): the offsets of blocks
 * 1.. in its positions, then its positions bytes.  Returns their offset in
 * b (b->oom set when out of memory). */
static size_t write_positions(obuf *b, const wterm *t)
{
    uint32_t nblocks = (t->df + FDS_POSTINGS_BLOCK - 1) / FDS_POSTINGS_BLOCK;
    size_t at = ob_reserve(b, (size_t)(nblocks - 1) * 4);
    const uint8_t *p = t->buf, *end = t->buf + t->blen;
    const uint8_t *q = t->pos, *qe = t->pos + t->plen;
    /* one block (most terms): no offsets, nothing to decode */
    for (uint32_t i = 0; nblocks > 1 && i < t->df && !b->oom; i++) {
        if (i && i % FDS_POSTINGS_BLOCK == 0)
            fds__put_u32(b->p + at + (i / FDS_POSTINGS_BLOCK - 1) * 4,
                         (uint32_t)(q - t->pos));
        uint32_t gap = 0, tf = 1;
        p += fds__varint_get(p, end, &gap);
        p += fds__varint_get(p, end, &tf);
        long k = fds_positions_decode(q, qe, tf, NULL);
        q += k > 0 ? k : 0;
    }
    ob_put(b, t->pos, t->plen);
    return at;
}

/* Sort the terms of f that have postings into *order (term ids by bytes) and
 * map each term id to its ordinal in *ordmap (FDS_SIDX_NO_ORD: none); both
 * are malloc'd, the caller frees them.  Returns the count, *order == NULL
 * when out of memory. */
static uint32_t sort_terms(wfield *f, uint32_t **order, uint32_t **ordmap)
{
    *order = malloc(((size_t)f->nterms + 1) * sizeof **order);
    *ordmap = malloc(((size_t)f->nterms + 1) * sizeof **ordmap);
    if (!*order || !*ordmap) {
        free(*order);
        free(*ordmap);
        *order = *ordmap = NULL;
        return 0;
    }
    tkey *keys = malloc(((size_t)f->nterms + 1) * sizeof *keys);
    if (!keys) {
        free(*order);
        free(*ordmap);
        *order = *ordmap = NULL;
        return 0;
    }
    uint32_t nt = 0;
    for (uint32_t i = 0; i < f->nterms; i++) {
        (*ordmap)[i] = FDS_SIDX_NO_ORD;
        if (!f->terms[i].df)
            continue;
        const uint8_t *t = (const uint8_t *)f->arena + f->terms[i].off;
        uint64_t k = 0;
        for (uint32_t b = 0; b < 8; b++)
            k = k << 8 | (b < f->terms[i].len ? t[b] : 0);
        keys[nt].key = k;
        keys[nt++].id = i;
    }
    qsort_r(keys, nt, sizeof *keys, tkey_cmp, f);
    for (uint32_t i = 0; i < nt; i++) {
        (*order)[i] = keys[i].id;
        (*ordmap)[keys[i].id] = i;
    }
    free(keys);
    return nt;
}

/* Terms hashed ahead in write_term_dict's interning of term bytes. */
#define STR_AHEAD 8

/* The term dictionary of f: term bytes go to one pool for the file
 * (term_bytes_off = 0), each distinct string stored once (a text field and
 * its keyword sub-field share most of their terms); then the postings; then
 * the bit-packed term entries (layout: sidx_format.h), whose offset is
 * stored in *terms_off.  Returns 0 or FDS_ENOMEM (or sets b->oom). */
static int write_term_dict(obuf *b, strpool *pool, const wfield *f,
                           const uint32_t *order, uint32_t nt,
                           uint32_t max_doc, size_t *terms_off,
                           size_t *pos_off)
{
    int rc = 0;
    *terms_off = *pos_off = 0;
    uint64_t *e_so = calloc(nt ? nt : 1, sizeof *e_so);
    uint64_t *e_ptr = calloc(nt ? nt : 1, sizeof *e_ptr);
    uint64_t *e_pos = calloc(nt ? nt : 1, sizeof *e_pos);
    if (!e_so || !e_ptr || !e_pos) {
        free(e_so);
        free(e_ptr);
        free(e_pos);
        return FDS_ENOMEM;
    }
    uint64_t max_pos = 0;
    uint64_t max_so = 0, max_sl = 0, max_df = 0, max_ptr = 0;
    /* the terms come in byte order, their records and bytes scattered:
     * the record of the term 3 * STR_AHEAD on is prefetched, the bytes of
     * the one 2 * STR_AHEAD on, and the one STR_AHEAD on is hashed and its
     * pool slot prefetched, so that the loads overlap (as pend_resolve's
     * in sidx_writer.c) */
    uint64_t ahead[STR_AHEAD];
    for (uint32_t i = 0; i < nt && i < 3 * STR_AHEAD; i++) {
        const wterm *u = &f->terms[order[i]];
        if (i < STR_AHEAD)
            ahead[i] = term_hash(f->arena + u->off, u->len);
        else if (i < 2 * STR_AHEAD)
            __builtin_prefetch(f->arena + u->off);
        else
            __builtin_prefetch(u);
    }
    for (uint32_t i = 0; i < nt && !b->oom; i++) {
        const wterm *t = &f->terms[order[i]];
        uint64_t hash = ahead[i % STR_AHEAD];
        if (i + 3 * STR_AHEAD < nt)
            __builtin_prefetch(&f->terms[order[i + 3 * STR_AHEAD]]);
        if (i + 2 * STR_AHEAD < nt)
            __builtin_prefetch(f->arena + f->terms[order[i + 2 * STR_AHEAD]].off);
        if (i + STR_AHEAD < nt) {
            const wterm *u = &f->terms[order[i + STR_AHEAD]];
            uint64_t hu = term_hash(f->arena + u->off, u->len);
            ahead[(i + STR_AHEAD) % STR_AHEAD] = hu;
            if (pool->cap)
                __builtin_prefetch(&pool->slot[hu & (pool->cap - 1)]);
        }
        size_t at = str_intern(pool, b, f->arena + t->off, t->len, hash);
        if (at == SIZE_MAX) {
            rc = FDS_ENOMEM;
            break;
        }
        e_so[i] = at;
        max_so = at > max_so ? at : max_so;
        max_sl = t->len > max_sl ? t->len : max_sl;
        max_df = t->df - 1 > max_df ? t->df - 1 : max_df;
    }
    for (uint32_t i = 0; i < nt && !b->oom && !rc; i++) {
        const wterm *t = &f->terms[order[i]];
        if (f->positions) {
            e_pos[i] = write_positions(b, t);
            max_pos = e_pos[i] > max_pos ? e_pos[i] : max_pos;
        }
        if (t->df == 1) {
            uint32_t gap = 0, tf = 1;
            const uint8_t *q = t->buf, *qe = t->buf + t->blen;
            q += fds__varint_get(q, qe, &gap);
            fds__varint_get(q, qe, &tf);
            if (tf == 1) { /* inline: no skip entry, no block */
                e_ptr[i] = (uint64_t)gap << 1 | 1;
                max_ptr = e_ptr[i] > max_ptr ? e_ptr[i] : max_ptr;
                continue;
            }
        }
        size_t pst = b->len;
        if (write_postings(b, f, t, max_doc)) {
            rc = FDS_ENOMEM;
            break;
        }
        e_ptr[i] = (uint64_t)pst << 1;
        max_ptr = e_ptr[i] > max_ptr ? e_ptr[i] : max_ptr;
    }
    if (!rc && !b->oom) {
        unsigned w[4] = {fds__bit_width(max_so), fds__bit_width(max_sl),
                         fds__bit_width(max_df), fds__bit_width(max_ptr)};
        unsigned W = w[0] + w[1] + w[2] + w[3];
        ob_align(b);
        *terms_off = ob_reserve(b, (size_t)FDS_SIDX_DICT_BYTES(nt, W));
        if (!b->oom) {
            uint8_t *d = b->p + *terms_off;
            for (int k = 0; k < 4; k++)
                d[k] = (uint8_t)w[k];
            uint64_t bit = 0;
            for (uint32_t i = 0; i < nt; i++) {
                const wterm *t = &f->terms[order[i]];
                uint64_t v[4] = {e_so[i], t->len, t->df - 1u, e_ptr[i]};
                for (int k = 0; k < 4; k++) {
                    fds__bits_put(d + FDS_SIDX_DICT_HDR, bit, w[k], v[k]);
                    bit += w[k];
                }
            }
        }
    }
    if (!rc && !b->oom && f->positions) {
        unsigned wp = fds__bit_width(max_pos);
        ob_align(b);
        *pos_off = ob_reserve(b, (size_t)FDS_SIDX_POS_TABLE_BYTES(nt, wp));
        if (!b->oom) {
            uint8_t *d = b->p + *pos_off;
            d[0] = (uint8_t)wp;
            for (uint32_t i = 0; i < nt; i++)
                fds__bits_put(d + FDS_SIDX_POS_HDR, (uint64_t)i * wp, wp,
                              e_pos[i]);
        }
    }
    free(e_so);
    free(e_ptr);
    free(e_pos);
    return rc;
}

/* Keyword ordinal column: ordinal + 1 (0 = none) in the fewest bits that
 * hold nt; returns the width. */
static unsigned write_ord_column(obuf *b, const wfield *f,
                                 const uint32_t *ordmap, uint32_t nt,
                                 uint32_t max_doc)
{
    unsigned ord_bits = 0;
    while (ord_bits < 32 && ((uint64_t)1 << ord_bits) <= nt)
        ord_bits++;
    size_t len = (size_t)FDS_SIDX_ORD_BYTES(max_doc, ord_bits);
    size_t at = ob_reserve(b, len);
    if (b->oom)
        return ord_bits;
    uint8_t *col = b->p + at;
    memset(col, 0, len);
    for (uint32_t d = 0; d < max_doc && ord_bits; d++) {
        uint32_t t = f->mintid[d];
        uint64_t v = t == FDS_SIDX_NO_ORD ? 0 : (uint64_t)ordmap[t] + 1;
        uint64_t bit = (uint64_t)d * ord_bits;
        for (unsigned k = 0; k < ord_bits; k++, bit++)
            if ((v >> k) & 1)
                col[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    }
    return ord_bits;
}

/* Raw column: max_doc 8-byte values (integers, or double bit patterns);
 * returns FDS_SIDX_NUM_RAW. */
static unsigned write_raw_column(obuf *b, const wfield *f, uint32_t max_doc)
{
    size_t at = ob_reserve(b, (size_t)max_doc * 8);
    for (uint32_t d = 0; d < max_doc && !b->oom; d++)
        fds__put_u64(b->p + at + (size_t)d * 8, (uint64_t)f->col[d]);
    return FDS_SIDX_NUM_RAW;
}

/* Packed double column (sidx_dcol.c): the plan's min and scale word, then
 * each value's m - min; FDS_SIDX_NUM_RAW when no plan fits (raw values,
 * as every double column before format 8).  Returns the width. */
static unsigned write_dbl_column(obuf *b, const wfield *f, uint32_t max_doc)
{
    double *v = malloc(((size_t)max_doc + 1) * sizeof *v);
    fds__dcol plan = {.bits = FDS_SIDX_NUM_RAW};
    size_t n = 0;
    for (uint32_t d = 0; v && d < max_doc; d++)
        if ((f->present[d / 64] >> (d % 64)) & 1)
            memcpy(&v[n++], &f->col[d], 8);
    if (v)
        fds__dcol_plan(v, n, &plan);
    free(v);
    if (plan.bits == FDS_SIDX_NUM_RAW)
        return write_raw_column(b, f, max_doc);
    size_t at = ob_reserve(b, 16 + (size_t)FDS_SIDX_ORD_BYTES(max_doc, plan.bits));
    if (b->oom)
        return plan.bits;
    fds__put_u64(b->p + at, (uint64_t)plan.min);
    fds__put_u64(b->p + at + 8, plan.scale);
    for (uint32_t d = 0; d < max_doc && plan.bits; d++)
        if ((f->present[d / 64] >> (d % 64)) & 1) {
            double x;
            int64_t m = plan.min;
            memcpy(&x, &f->col[d], 8);
            fds__dcol_int(x, plan.scale, &m);
            fds__bits_put(b->p + at + 16, (uint64_t)d * plan.bits, plan.bits,
                          (uint64_t)m - (uint64_t)plan.min);
        }
    return plan.bits;
}

/* Numeric column: integers as min + (value - min) in the fewest bits,
 * unless the range needs more than FDS_SIDX_NUM_PACK_MAX bits; doubles by
 * write_dbl_column.  Returns the width (FDS_SIDX_NUM_RAW: raw 8-byte
 * values). */
static unsigned write_num_column(obuf *b, const wfield *f, uint32_t max_doc)
{
    if (f->kind == FDS_FT_DOUBLE)
        return write_dbl_column(b, f, max_doc);
    int64_t lo = 0, hi = 0;
    bool first = true;
    for (uint32_t d = 0; d < max_doc; d++)
        if ((f->present[d / 64] >> (d % 64)) & 1) {
            if (first || f->col[d] < lo)
                lo = f->col[d];
            if (first || f->col[d] > hi)
                hi = f->col[d];
            first = false;
        }
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    unsigned num_bits = fds__bit_width(span);
    if (num_bits > FDS_SIDX_NUM_PACK_MAX)
        num_bits = FDS_SIDX_NUM_RAW;
    if (num_bits == FDS_SIDX_NUM_RAW)
        return write_raw_column(b, f, max_doc);
    size_t at = ob_reserve(b, 8 + (size_t)FDS_SIDX_ORD_BYTES(max_doc, num_bits));
    if (b->oom)
        return num_bits;
    fds__put_u64(b->p + at, (uint64_t)lo);
    for (uint32_t d = 0; d < max_doc && num_bits; d++)
        if ((f->present[d / 64] >> (d % 64)) & 1)
            fds__bits_put(b->p + at + 8, (uint64_t)d * num_bits, num_bits,
                          (uint64_t)f->col[d] - (uint64_t)lo);
    return num_bits;
}

static int wval_cmp(const void *a, const void *b, void *ctx)
{
    const wfield *f = ctx;
    const struct wval *x = &f->vals[*(const uint32_t *)a];
    const struct wval *y = &f->vals[*(const uint32_t *)b];
    int c = memcmp(f->varena + x->off, f->varena + y->off,
                   x->len < y->len ? x->len : y->len);
    return c ? c : (x->len < y->len ? -1 : x->len > y->len);
}

/* The value ids of text field f (sidx_format.h), written after its
 * presence bitset: the id column (the table's offset first) and the
 * value table.  Every long value has one when they repeat on average
 * (FDS_SIDX_VALS_DENSE: the table is complete), else those two docs or
 * more hold.  False, with nothing written, when no doc has a long value;
 * else sets *bits, the column's width (0 when no value has an id), or
 * b->oom. */
static bool write_values(obuf *b, const wfield *f, uint32_t max_doc,
                         unsigned *bits)
{
    uint64_t docs = 0;
    uint32_t distinct = 0, rep = 0;
    for (uint32_t i = 0; i < f->nv; i++) {
        docs += f->vals[i].cnt; /* 0: interned by a doc rolled back */
        distinct += f->vals[i].cnt >= 1;
        rep += f->vals[i].cnt >= 2;
    }
    if (!docs)
        return false;
    bool dense = FDS_SIDX_VALS_DENSE(distinct, docs);
    uint32_t n = dense ? distinct : rep, min = dense ? 1 : 2;
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    uint32_t *rank = malloc((size_t)f->nv * sizeof *rank);
    if (!order || !rank) {
        free(order);
        free(rank);
        b->oom = 1;
        return true;
    }
    n = 0;
    for (uint32_t i = 0; i < f->nv; i++) {
        rank[i] = UINT32_MAX;
        if (f->vals[i].cnt >= min)
            order[n++] = i;
    }
    qsort_r(order, n, sizeof *order, wval_cmp, (void *)f);
    *bits = 0;
    while (*bits < 32 && ((uint64_t)1 << *bits) <= n)
        (*bits)++;
    size_t col = ob_reserve(b, 8 + (size_t)FDS_SIDX_ORD_BYTES(max_doc, *bits));
    ob_align(b);
    size_t at = ob_reserve(b, FDS_SIDX_VALS_HDR + ((size_t)n + 1) * 8);
    uint64_t total = 0;
    for (uint32_t r = 0; r < n && !b->oom; r++) {
        const struct wval *v = &f->vals[order[r]];
        rank[order[r]] = r;
        fds__put_u64(b->p + at + FDS_SIDX_VALS_HDR + (size_t)r * 8, total);
        ob_put(b, f->varena + v->off, v->len);
        total += v->len;
    }
    if (!b->oom) {
        fds__put_u32(b->p + at, n);
        fds__put_u32(b->p + at + 4, dense ? FDS_SIDX_VALS_COMPLETE : 0);
        fds__put_u64(b->p + at + FDS_SIDX_VALS_HDR + (size_t)n * 8, total);
        for (uint32_t d = 0; d < max_doc && *bits; d++) {
            uint32_t v = f->vid[d];
            if (v != UINT32_MAX && rank[v] != UINT32_MAX)
                fds__bits_put(b->p + col + 8, (uint64_t)d * *bits, *bits,
                              (uint64_t)rank[v] + 1);
        }
        fds__put_u64(b->p + col, at);
    }
    free(order);
    free(rank);
    return true;
}

/* Field k: its name, term dictionary and postings, norms, presence bitmap
 * and column, then its descriptor at fields_off (layout: sidx_format.h).
 * Returns 0 or FDS_ENOMEM (or sets b->oom). */
static int write_field(obuf *b, strpool *pool, wfield *f, size_t k,
                       size_t fields_off, uint32_t max_doc, uint64_t *pos_dir)
{
    if (fds__sidx_writer_ensure_docs(f, max_doc ? max_doc - 1 : 0))
        return FDS_ENOMEM;
    ob_align(b);
    size_t name_off = ob_put(b, f->mf->path, f->mf->path_len);
    uint32_t *order, *ordmap;
    uint32_t nt = sort_terms(f, &order, &ordmap);
    if (!order)
        return FDS_ENOMEM;
    size_t terms_off, pos_off;
    int rc = write_term_dict(b, pool, f, order, nt, max_doc, &terms_off,
                             &pos_off);
    pos_dir[k] = pos_off;
    free(order);
    if (rc) {
        free(ordmap);
        return rc;
    }
    size_t norms_off = 0, col_off = 0;
    uint8_t flags = 0;
    if (f->kind == FDS_FT_TEXT) {
        ob_align(b);
        norms_off = ob_put(b, f->norms, max_doc);
        flags |= FDS_SIDX_F_NORMS;
        if (f->positions)
            flags |= FDS_SIDX_F_POS;
        if (!f->multi)
            flags |= FDS_SIDX_F_SINGLE;
    }
    ob_align(b);
    size_t words = ((size_t)max_doc + 63) / 64;
    col_off = b->len;
    for (size_t i = 0; i < words && !b->oom; i++) {
        size_t at = ob_reserve(b, 8);
        if (!b->oom)
            fds__put_u64(b->p + at, f->present[i]);
    }
    unsigned ord_bits = 0, num_bits = 0;
    if (f->kind == FDS_FT_KEYWORD) {
        flags |= FDS_SIDX_F_ORDCOL;
        ord_bits = write_ord_column(b, f, ordmap, nt, max_doc);
    } else if (f->kind == FDS_FT_TEXT) {
        if ((flags & FDS_SIDX_F_SINGLE) &&
            write_values(b, f, max_doc, &ord_bits))
            flags |= FDS_SIDX_F_VALUES; /* ord_bits: the id column's width */
    } else {
        flags |= FDS_SIDX_F_NUMCOL;
        if (f->multi)
            flags |= FDS_SIDX_F_MULTI;
        num_bits = write_num_column(b, f, max_doc);
    }
    free(ordmap);
    if (b->oom)
        return FDS_ENOMEM;
    uint8_t *fd = b->p + fields_off + k * FDS_SIDX_FIELD_LEN;
    fds__put_u64(fd, name_off);
    fds__put_u32(fd + 8, (uint32_t)f->mf->path_len);
    fd[12] = (uint8_t)f->kind;
    fd[13] = flags;
    fd[14] = (uint8_t)ord_bits;
    fd[15] = (uint8_t)num_bits;
    fds__put_u32(fd + 16, f->doc_count);
    fds__put_u32(fd + 20, nt);
    fds__put_u64(fd + 24, f->sum_ttf);
    fds__put_u64(fd + 32, terms_off);
    fds__put_u64(fd + 40, 0);
    fds__put_u64(fd + 48, norms_off);
    fds__put_u64(fd + 56, col_off);
    return 0;
}

/* The _id table, then the header (at offset 0) and the footer with the
 * checksum.  Returns 0 or FDS_ENOMEM (or sets b->oom). */
static int write_ids_and_footer(obuf *b, const fds_sidx_writer *w, size_t nf,
                                size_t fields_off, const uint64_t *pos_dir)
{
    uint32_t max_doc = w->ndocs;
    size_t pos_dir_off = 0;
    bool any_pos = false;
    for (size_t k = 0; k < nf; k++)
        any_pos |= pos_dir[k] != 0;
    if (any_pos) {
        ob_align(b);
        pos_dir_off = ob_reserve(b, nf * 8);
        for (size_t k = 0; k < nf && !b->oom; k++)
            fds__put_u64(b->p + pos_dir_off + k * 8, pos_dir[k]);
    }
    ob_align(b);
    size_t ids_off = b->len;
    size_t at = ob_reserve(b, ((size_t)max_doc + 1) * 4);
    for (uint32_t d = 0; d <= max_doc && !b->oom; d++)
        fds__put_u32(b->p + at + (size_t)d * 4, max_doc ? w->idoff[d] : 0);
    uint32_t *byid = malloc(((size_t)max_doc + 1) * 4);
    if (!byid)
        return FDS_ENOMEM;
    for (uint32_t d = 0; d < max_doc; d++)
        byid[d] = d;
    qsort_r(byid, max_doc, 4, id_cmp, (void *)w);
    at = ob_reserve(b, (size_t)max_doc * 4);
    for (uint32_t d = 0; d < max_doc && !b->oom; d++)
        fds__put_u32(b->p + at + (size_t)d * 4, byid[d]);
    free(byid);
    ob_align(b);
    ob_put(b, w->ids, w->idlen);
    ob_align(b);
    if (b->oom)
        return FDS_ENOMEM;
    size_t foot = ob_reserve(b, FDS_SIDX_FOOTER_LEN);
    if (b->oom)
        return FDS_ENOMEM;
    uint8_t *h = b->p;
    memcpy(h, FDS_SIDX_MAGIC, 8);
    fds__put_u32(h + 8, FDS_SIDX_VERSION);
    fds__put_u32(h + 12, max_doc);
    fds__put_u32(h + 16, (uint32_t)nf);
    fds__put_u32(h + 20, FDS_SIDX_HEADER_LEN);
    fds__put_u64(h + 24, fields_off);
    fds__put_u64(h + 32, ids_off);
    fds__put_u64(h + 40, b->len);
    fds__put_u64(h + 48, pos_dir_off);
    fds__put_u32(b->p + foot, fds_crc32c(0, b->p, foot));
    memcpy(b->p + foot + 4, FDS_SIDX_END_MAGIC, 4);
    return 0;
}

/* Write p[0..len) to a new file at path and fsync it. */
static int write_file(const char *path, const uint8_t *p, size_t len,
                      fds_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return fds_err_setk(err, FDS_EIO, FDS_KIND_INTERNAL,
                           "cannot create %s: %s", path, strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t k = write(fd, p + off, len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = errno;
            close(fd);
            return fds_err_setk(err, FDS_EIO, FDS_KIND_INTERNAL,
                               "cannot write %s: %s", path, strerror(e));
        }
        off += (size_t)k;
    }
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        return fds_err_setk(err, FDS_EIO, FDS_KIND_INTERNAL, "fsync %s: %s",
                           path, strerror(e));
    }
    if (close(fd) != 0)
        return fds_err_setk(err, FDS_EIO, FDS_KIND_INTERNAL, "close %s: %s",
                           path, strerror(errno));
    return 0;
}

int fds_sidx_writer_write(fds_sidx_writer *w, const char *path, fds_err *err)
{
    obuf b = {0};
    strpool pool = {0};
    uint32_t max_doc = w->ndocs;
    /* fields that hold data, sorted by name */
    wfield **fs = malloc((w->nfields ? w->nfields : 1) * sizeof *fs);
    if (!fs)
        return FDS_ENOMEM;
    size_t nf = 0;
    for (size_t i = 0; i < w->nfields; i++) {
        if (w->fields[i]->kind == FDS_FT_TEXT && w->sub_direct)
            w->fields[i]->multi = true; /* not FDS_SIDX_F_SINGLE */
        if (w->fields[i]->kind != FDS_FT_OBJECT)
            fs[nf++] = w->fields[i];
    }
    qsort(fs, nf, sizeof *fs, wfield_name_cmp);

    uint64_t *pos_dir = calloc(nf ? nf : 1, sizeof *pos_dir);
    if (!pos_dir) {
        free(fs);
        return FDS_ENOMEM;
    }
    ob_reserve(&b, FDS_SIDX_HEADER_LEN);
    size_t fields_off = ob_reserve(&b, nf * FDS_SIDX_FIELD_LEN);
    int rc = 0;
    for (size_t k = 0; k < nf && !b.oom && !rc; k++)
        rc = write_field(&b, &pool, fs[k], k, fields_off, max_doc, pos_dir);
    free(fs);
    free(pool.slot);
    if (!rc && !b.oom)
        rc = write_ids_and_footer(&b, w, nf, fields_off, pos_dir);
    free(pos_dir);
    if (b.oom || rc) {
        free(b.p);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                           "out of memory writing %s", path);
    }
    rc = write_file(path, b.p, b.len, err);
    free(b.p);
    return rc;
}
