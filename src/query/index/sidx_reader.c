/*
 * sidx_reader.c: opens a segment index file (layout: sidx_format.h) by
 * mmap, verifies its checksum and every offset once, then serves term
 * lookups by binary search with no further allocation.  Nothing of the file
 * is copied to the heap: its pages are the kernel's page cache, resident
 * in the server only while searches touch them (RssFile, not RssAnon).
 * The heap holds only what open derives: numeric blocks' min and max, and
 * for each term of FDS_SFRONT_MIN_BLOCKS blocks or more the frontier of
 * all its blocks' impacts (a few pairs a term) and the frontiers of its
 * blocks' impacts per
 * group of FDS_SGROUP_BLOCKS blocks (2 MB there: 110,978 groups of 2,012
 * terms, 192,521 pairs; reading the impacts adds about 100 ms to the
 * 1.1 s an open of that 2.1 GB file takes, most of it the checksum).  A file that fails any check gives
 * FDS_ECORRUPT naming the path, never an out-of-bounds read.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/sidx_int.h"

static int corrupt(fds_err *err, const char *path, const char *what)
{
    return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                       "segment index %s is corrupt: %s", path, what);
}

static bool in_file(size_t len, uint64_t off, uint64_t n)
{
    return off <= len && n <= len - off;
}

/* Bytes of the file checksummed at a time at open (a multiple of pages). */
#define FDS_SIDX_OPEN_CHUNK (8u << 20)

/* Header and footer: magic, length, checksum, version, the bounds of the
 * field and _id tables (offsets into *fields_off, *ids_off). */
static int validate_header(fds_sidx *s, uint64_t *fields_off,
                           uint64_t *ids_off, fds_err *err)
{
    const uint8_t *m = s->map;
    size_t len = s->len;
    const char *path = s->path;
    if (len < FDS_SIDX_HEADER_LEN + FDS_SIDX_FOOTER_LEN)
        return corrupt(err, path, "file too short");
    if (memcmp(m, FDS_SIDX_MAGIC, 8) != 0)
        return corrupt(err, path, "bad magic");
    if (memcmp(m + len - 4, FDS_SIDX_END_MAGIC, 4) != 0)
        return corrupt(err, path, "bad footer (truncated file?)");
    if (fds__get_u64(m + 40) != len)
        return corrupt(err, path, "file length does not match the header");
    /* in chunks, each dropped from the resident set once summed: a merged
     * segment's whole file would otherwise be resident at once */
    uint32_t crc = 0;
    for (size_t at = 0, k; at < len - FDS_SIDX_FOOTER_LEN; at += k) {
        k = len - FDS_SIDX_FOOTER_LEN - at;
        k = k < FDS_SIDX_OPEN_CHUNK ? k : FDS_SIDX_OPEN_CHUNK;
        crc = fds_crc32c(crc, m + at, k);
        if (k == FDS_SIDX_OPEN_CHUNK)
            madvise((void *)(m + at), k, MADV_DONTNEED);
    }
    if (crc != fds__get_u32(m + len - FDS_SIDX_FOOTER_LEN))
        return corrupt(err, path, "checksum mismatch");
    if (fds__get_u32(m + 8) < FDS_SIDX_VERSION_MIN ||
        fds__get_u32(m + 8) > FDS_SIDX_VERSION)
        return corrupt(err, path, "unsupported format version");
    s->version = fds__get_u32(m + 8);
    size_t body = len - FDS_SIDX_FOOTER_LEN;
    s->max_doc = fds__get_u32(m + 12);
    s->nfields = fds__get_u32(m + 16);
    *fields_off = fds__get_u64(m + 24);
    *ids_off = fds__get_u64(m + 32);
    uint64_t md = s->max_doc;
    if (!in_file(body, *fields_off, (uint64_t)s->nfields * FDS_SIDX_FIELD_LEN))
        return corrupt(err, path, "field table out of bounds");
    if (!in_file(body, *ids_off, (md + 1) * 4 + md * 4))
        return corrupt(err, path, "_id table out of bounds");
    return 0;
}

/* The skip list of one term with postings at po (df docs). */
static int validate_skips(const fds_sidx *s, size_t body, uint64_t po,
                          uint64_t df, fds_err *err)
{
    const uint8_t *m = s->map;
    uint64_t md = s->max_doc;
    uint64_t nb = (df + FDS_POSTINGS_BLOCK - 1) / FDS_POSTINGS_BLOCK;
    if (df > s->max_doc)
        return corrupt(err, s->path, "bad doc_freq");
    if (!in_file(body, po, (uint64_t)nb * FDS_SIDX_SKIP_LEN))
        return corrupt(err, s->path, "skip list out of bounds");
    uint64_t data = po + (uint64_t)nb * FDS_SIDX_SKIP_LEN;
    uint64_t last = 0, prev_off = 0;
    for (uint32_t b = 0; b < nb; b++) {
        const uint8_t *sk = m + po + (size_t)b * FDS_SIDX_SKIP_LEN;
        uint64_t ld = fds__get_u32(sk), off = fds__get_u32(sk + 4);
        unsigned n = sk[13] + 1u;
        uint32_t ilen = fds__skip_ilen(sk);
        if (ld >= md || (b && ld <= last) || data + off + ilen > body ||
            ilen > FDS_SIDX_IMPACTS_BYTES_MAX ||
            (b && off < prev_off) ||
            (b + 1 < nb && n != FDS_POSTINGS_BLOCK) ||
            (b + 1 == nb && n != df - b * FDS_POSTINGS_BLOCK))
            return corrupt(err, s->path, "bad skip entry");
        last = ld;
        prev_off = off;
    }
    return 0;
}

/* Capacities of a field's frontier arrays while open fills them. */
typedef struct front_caps {
    size_t fronts, pairs, gidx, gpairs;
    uint32_t ngidx, ngpairs;
} front_caps;

/* Append to *out (*n of *cap) the frontier of best[] (the largest
 * frequency per norm byte): the pairs no lower norm has a frequency as
 * high as.  0 or FDS_ENOMEM. */
static int put_frontier(const uint32_t *best, fds_spair **out, uint32_t *n,
                        size_t *cap)
{
    uint32_t top = 0;
    for (int nbyte = 0; nbyte < 256; nbyte++) {
        if (best[nbyte] <= top) /* dominated (or no block) */
            continue;
        top = best[nbyte];
        if (fds__grow((void **)out, cap, (size_t)*n + 1, sizeof **out))
            return FDS_ENOMEM;
        (*out)[(*n)++] = (fds_spair){top, (uint8_t)nbyte};
    }
    return 0;
}

/* Note in best[] the (norm, tf) pairs of the block of skip entry sk of a
 * term whose blocks start at data: its impacts, or (max tf, min norm) when
 * it has none -- or when they do not decode, which bounds it too. */
static void block_pairs(const uint8_t *sk, const uint8_t *data,
                        uint32_t *best)
{
    uint32_t ilen = fds__skip_ilen(sk), tf;
    const uint8_t *p = data + fds__get_u32(sk + 4), *end = p + ilen;
    uint8_t nb;
    int r;
    while ((r = fds__impact_next(&p, end, &nb, &tf)) > 0)
        if (tf > best[nb])
            best[nb] = tf;
    if (!ilen || r < 0) {
        tf = fds__get_u32(sk + 8);
        if (tf > best[sk[12]])
            best[sk[12]] = tf;
    }
}

/* Append to f the frontier of the skip list of ordinal ord (nb >=
 * FDS_SFRONT_MIN_BLOCKS entries at sk, blocks from data, already
 * checked): the largest frequency per min norm byte, kept where no lower
 * norm has a frequency as high; and the frontier of the impacts of each
 * group of FDS_SGROUP_BLOCKS blocks.  0 or FDS_ENOMEM. */
static int add_front(fds_sfield *f, uint32_t ord, const uint8_t *sk,
                     const uint8_t *data, uint64_t nb, front_caps *c)
{
    uint32_t best[256], all[256] = {0};
    uint32_t goff = c->ngidx;
    for (uint64_t g = 0; g < nb; g += FDS_SGROUP_BLOCKS) {
        if (fds__grow((void **)&f->gidx, &c->gidx, (size_t)c->ngidx + 1,
                      sizeof *f->gidx))
            return FDS_ENOMEM;
        f->gidx[c->ngidx++] = c->ngpairs;
        memset(best, 0, sizeof best);
        for (uint64_t b = g; b < nb && b < g + FDS_SGROUP_BLOCKS; b++)
            block_pairs(sk + b * FDS_SIDX_SKIP_LEN, data, best);
        if (put_frontier(best, &f->gpairs, &c->ngpairs, &c->gpairs))
            return FDS_ENOMEM;
        for (int k = 0; k < 256; k++)
            all[k] = best[k] > all[k] ? best[k] : all[k];
    }
    /* the term's frontier: of every block's impacts, so that it bounds the
     * frequency of a doc of each norm (fds__term_tf_at), not only the
     * term's best score */
    uint32_t off = 0, n = 0;
    if (f->nfronts)
        off = f->fronts[f->nfronts - 1].off + f->fronts[f->nfronts - 1].n;
    n = off;
    if (put_frontier(all, &f->pairs, &n, &c->pairs))
        return FDS_ENOMEM;
    n -= off;
    if (fds__grow((void **)&f->gidx, &c->gidx, (size_t)c->ngidx + 1,
                  sizeof *f->gidx))
        return FDS_ENOMEM;
    f->gidx[c->ngidx++] = c->ngpairs; /* the end of the last group */
    if (fds__grow((void **)&f->fronts, &c->fronts, (size_t)f->nfronts + 1,
                  sizeof *f->fronts))
        return FDS_ENOMEM;
    f->fronts[f->nfronts++] = (fds_sfront){ord, off, n, goff};
    return 0;
}

/* The term dictionary of field f (descriptor d): entry widths, bounds of
 * every term's bytes, singletons and skip lists. */
static int validate_terms(const fds_sidx *s, fds_sfield *f, const uint8_t *d,
                          size_t body, fds_err *err)
{
    const uint8_t *m = s->map;
    const char *path = s->path;
    uint64_t terms_off = fds__get_u64(d + 32), tb = fds__get_u64(d + 40);
    if (!in_file(body, terms_off, FDS_SIDX_DICT_HDR) || tb > body)
        return corrupt(err, path, "term dictionary out of bounds");
    for (int k = 0; k < 4; k++) {
        f->w[k] = m[terms_off + k];
        if (f->w[k] > FDS_SIDX_DICT_WMAX)
            return corrupt(err, path, "bad term entry width");
    }
    f->wentry = f->w[0] + f->w[1] + f->w[2] + f->w[3];
    if (!in_file(body, terms_off, FDS_SIDX_DICT_BYTES(f->nterms, f->wentry)))
        return corrupt(err, path, "term dictionary out of bounds");
    f->terms = m + terms_off + FDS_SIDX_DICT_HDR;
    f->tbytes = m + tb;
    front_caps caps = {0};
    for (uint32_t t = 0; t < f->nterms; t++) {
        uint64_t bit = (uint64_t)t * f->wentry;
        uint64_t so = fds__bits_get(f->terms, bit, f->w[0]);
        uint64_t sl = fds__bits_get(f->terms, bit + f->w[0], f->w[1]);
        uint64_t df = fds__bits_get(f->terms, bit + f->w[0] + f->w[1], f->w[2]) + 1;
        uint64_t ptr = fds__bits_get(f->terms, bit + f->w[0] + f->w[1] + f->w[2], f->w[3]);
        uint64_t po = ptr >> 1;
        if (!in_file(body, tb + so, sl))
            return corrupt(err, path, "term bytes out of bounds");
        if (ptr & 1) { /* inline singleton: the doc */
            if (df != 1 || po >= s->max_doc)
                return corrupt(err, path, "bad singleton term");
            continue;
        }
        int rc = validate_skips(s, body, po, df, err);
        if (rc)
            return rc;
        uint64_t nb = (df + FDS_POSTINGS_BLOCK - 1) / FDS_POSTINGS_BLOCK;
        if (nb >= FDS_SFRONT_MIN_BLOCKS &&
            (rc = add_front(f, t, m + po,
                            m + po + nb * FDS_SIDX_SKIP_LEN, nb, &caps)))
            return rc;
    }
    return 0;
}

/* The value table and id column (col: after the presence bitset) of text
 * field f (FDS_SIDX_F_VALUES): in bounds, known flags, values longer than
 * FDS_SIDX_VALUE_MIN_BYTES in strictly increasing byte order, ids in
 * range, each held by a doc with the field. */
static int validate_values(const fds_sidx *s, fds_sfield *f,
                           const uint8_t *col, size_t body, fds_err *err)
{
    const char *path = s->path;
    uint64_t off = fds__get_u64(col);
    if (!in_file(body, off, FDS_SIDX_VALS_HDR))
        return corrupt(err, path, "value table out of bounds");
    uint64_t n = fds__get_u32(s->map + off);
    uint32_t vflags = fds__get_u32(s->map + off + 4);
    if (!in_file(body, off + FDS_SIDX_VALS_HDR, (n + 1) * 8) ||
        (f->vbits < 32 && n >= (1ull << f->vbits)) ||
        (vflags & ~FDS_SIDX_VALS_COMPLETE))
        return corrupt(err, path, "value table out of bounds");
    f->vcomplete = (vflags & FDS_SIDX_VALS_COMPLETE) != 0;
    f->nvals = (uint32_t)n;
    f->voff = s->map + off + FDS_SIDX_VALS_HDR;
    f->vbytes = f->voff + (n + 1) * 8;
    if (fds__get_u64(f->voff) != 0 ||
        !in_file(body, (uint64_t)(f->vbytes - s->map),
                 fds__get_u64(f->voff + n * 8)))
        return corrupt(err, path, "value table out of bounds");
    const char *prev = NULL;
    uint64_t plen = 0;
    for (uint32_t v = 0; v < n; v++) {
        uint64_t a = fds__get_u64(f->voff + (size_t)v * 8);
        uint64_t b = fds__get_u64(f->voff + (size_t)v * 8 + 8);
        if (b < a || b - a <= FDS_SIDX_VALUE_MIN_BYTES ||
            b > fds__get_u64(f->voff + n * 8))
            return corrupt(err, path, "bad value table");
        uint64_t len;
        const char *p = fds__val_str(f, v, &len);
        if (prev) {
            int c = memcmp(prev, p, plen < len ? plen : len);
            if (c > 0 || (c == 0 && plen >= len))
                return corrupt(err, path, "values not sorted");
        }
        prev = p;
        plen = len;
    }
    f->vcol = col + 8;
    for (uint32_t dd = 0; dd < s->max_doc; dd++) {
        uint32_t v = fds__val_id(f, dd);
        if (v != FDS_SIDX_NO_ORD &&
            (v >= f->nvals || !fds__bit(f->present, dd)))
            return corrupt(err, path, "value id out of range");
    }
    return 0;
}

/* Norms, presence bitmap and column of field f (descriptor d): widths,
 * bounds, flags against the kind, keyword ordinals in range. */
static int validate_columns(const fds_sidx *s, fds_sfield *f, const uint8_t *d,
                            size_t body, fds_err *err)
{
    const uint8_t *m = s->map;
    const char *path = s->path;
    uint64_t md = s->max_doc, words = (md + 63) / 64;
    uint64_t norms_off = fds__get_u64(d + 48), col_off = fds__get_u64(d + 56);
    if (f->flags & FDS_SIDX_F_NORMS) {
        if (!in_file(body, norms_off, md))
            return corrupt(err, path, "norms out of bounds");
        f->norms = m + norms_off;
        for (uint64_t i = 0; i < md; i++) /* the norms docs have */
            f->norm_seen[f->norms[i] >> 6] |= 1ull << (f->norms[i] & 63);
    }
    f->ord_bits = d[14];
    bool vals = (f->flags & FDS_SIDX_F_VALUES) != 0;
    if (vals) { /* the width is the value column's */
        f->vbits = f->ord_bits;
        f->ord_bits = 0;
        if (f->vbits > 32 || f->kind != FDS_FT_TEXT ||
            !(f->flags & FDS_SIDX_F_SINGLE) ||
            s->version < FDS_SIDX_VERSION_VALUES)
            return corrupt(err, path, "bad value ids");
    }
    if (f->ord_bits > 32 || (f->ord_bits && !(f->flags & FDS_SIDX_F_ORDCOL)))
        return corrupt(err, path, "bad ordinal width");
    f->num_bits = d[15];
    /* a packed double column has a scale word after its min (version 8) */
    bool dcol = f->kind == FDS_FT_DOUBLE && f->num_bits != FDS_SIDX_NUM_RAW;
    if ((f->flags & FDS_SIDX_F_NUMCOL)
            ? (f->num_bits != FDS_SIDX_NUM_RAW &&
               (f->num_bits > FDS_SIDX_NUM_PACK_MAX ||
                (dcol && s->version < FDS_SIDX_VERSION_DCOL)))
            : f->num_bits != 0)
        return corrupt(err, path, "bad numeric column width");
    bool has_col = (f->flags & (FDS_SIDX_F_ORDCOL | FDS_SIDX_F_NUMCOL)) != 0;
    uint64_t col_len = (f->flags & FDS_SIDX_F_ORDCOL)
                           ? FDS_SIDX_ORD_BYTES(md, f->ord_bits)
                       : vals ? 8 + FDS_SIDX_ORD_BYTES(md, f->vbits)
                       : !(f->flags & FDS_SIDX_F_NUMCOL) ? 0
                       : f->num_bits == FDS_SIDX_NUM_RAW
                           ? md * 8
                           : (dcol ? 16 : 8) + FDS_SIDX_ORD_BYTES(md, f->num_bits);
    if (!in_file(body, col_off, words * 8 + col_len))
        return corrupt(err, path, "column out of bounds");
    f->present = m + col_off;
    f->col = has_col ? m + col_off + words * 8 : NULL;
    if (has_col && (f->flags & FDS_SIDX_F_NUMCOL) &&
        f->num_bits != FDS_SIDX_NUM_RAW) {
        f->num_min = (int64_t)fds__get_u64(f->col);
        f->col += 8;
        if (dcol) {
            uint64_t scale = fds__get_u64(f->col);
            if ((scale & ~(uint64_t)(FDS_SIDX_DCOL_DIGITS_MASK | FDS_SIDX_DCOL_FLOAT)) ||
                (scale & FDS_SIDX_DCOL_DIGITS_MASK) > FDS_SIDX_DCOL_DIGITS)
                return corrupt(err, path, "bad double column scale");
            unsigned digits = (unsigned)(scale & FDS_SIDX_DCOL_DIGITS_MASK);
            f->num_div = fds__dcol_div(digits);
            f->num_mul = fds__dcol_mul(digits);
            f->num_float = (scale & FDS_SIDX_DCOL_FLOAT) != 0;
            f->col += 8;
        }
    }
    if ((f->kind == FDS_FT_KEYWORD) != ((f->flags & FDS_SIDX_F_ORDCOL) != 0) ||
        (fds__ftype_numeric(f->kind) != ((f->flags & FDS_SIDX_F_NUMCOL) != 0)) ||
        ((f->kind == FDS_FT_TEXT) != ((f->flags & FDS_SIDX_F_NORMS) != 0)) ||
        ((f->flags & FDS_SIDX_F_SINGLE) && f->kind != FDS_FT_TEXT))
        return corrupt(err, path, "field flags do not match its kind");
    if (f->kind == FDS_FT_KEYWORD)
        for (uint32_t dd = 0; dd < s->max_doc; dd++) {
            uint32_t o = fds__col_ord(f, dd);
            if (o != FDS_SIDX_NO_ORD && o >= f->nterms)
                return corrupt(err, path, "ordinal out of range");
        }
    return vals ? validate_values(s, f, m + col_off + words * 8, body, err)
                : 0;
}

/* Field descriptor i: name, kind, counts, then its terms and columns, and
 * that names are sorted. */
static int validate_field(fds_sidx *s, uint32_t i, uint64_t fields_off,
                          size_t body, fds_err *err)
{
    const uint8_t *m = s->map;
    const char *path = s->path;
    const uint8_t *d = m + fields_off + (size_t)i * FDS_SIDX_FIELD_LEN;
    fds_sfield *f = &s->fields[i];
    uint64_t name_off = fds__get_u64(d);
    f->name_len = fds__get_u32(d + 8);
    if (!in_file(body, name_off, f->name_len))
        return corrupt(err, path, "field name out of bounds");
    f->name = (const char *)m + name_off;
    f->kind = d[12];
    f->flags = d[13];
    if (f->kind < FDS_FT_TEXT || f->kind > FDS_FT_BOOLEAN)
        return corrupt(err, path, "unknown field kind");
    f->doc_count = fds__get_u32(d + 16);
    f->nterms = fds__get_u32(d + 20);
    f->sum_ttf = fds__get_u64(d + 24);
    int rc = validate_terms(s, f, d, body, err);
    if (!rc)
        rc = validate_columns(s, f, d, body, err);
    if (rc)
        return rc;
    if (i > 0) {
        const fds_sfield *p = &s->fields[i - 1];
        size_t n = p->name_len < f->name_len ? p->name_len : f->name_len;
        int c = memcmp(p->name, f->name, n);
        if (c > 0 || (c == 0 && p->name_len >= f->name_len))
            return corrupt(err, path, "fields not sorted");
    }
    return 0;
}

/* The positions of field i (flag FDS_SIDX_F_POS) from the directory at
 * dir_off: its table in bounds, and every term's block offsets.  The
 * positions bytes themselves are bounds-checked as they are decoded. */
static int validate_positions(fds_sidx *s, uint32_t i, uint64_t dir_off,
                              size_t body, fds_err *err)
{
    fds_sfield *f = &s->fields[i];
    bool flag = (f->flags & FDS_SIDX_F_POS) != 0;
    uint64_t off = dir_off ? fds__get_u64(s->map + dir_off + (size_t)i * 8) : 0;
    if (flag != (off != 0) || (flag && f->kind != FDS_FT_TEXT))
        return corrupt(err, s->path, "bad positions directory");
    if (!flag)
        return 0;
    if (!in_file(body, off, FDS_SIDX_POS_HDR) ||
        s->map[off] > FDS_SIDX_DICT_WMAX ||
        !in_file(body, off, FDS_SIDX_POS_TABLE_BYTES(f->nterms, s->map[off])))
        return corrupt(err, s->path, "positions table out of bounds");
    f->wpos = s->map[off];
    f->pos = s->map + off + FDS_SIDX_POS_HDR;
    for (uint32_t t = 0; t < f->nterms; t++) {
        fds_sterm st;
        fds__sidx_term_at(s, f, t, &st);
        uint64_t po = fds__bits_get(f->pos, (uint64_t)t * f->wpos, f->wpos);
        if (!in_file(body, po, (uint64_t)(st.nblocks - 1) * 4))
            return corrupt(err, s->path, "term positions out of bounds");
    }
    return 0;
}

/* Per-block (FDS_DV_BLOCK docs) min and max of every numeric column, NaN
 * for a block without values; for range and sort skipping.  Returns 0 or
 * FDS_ENOMEM. */
static int build_block_minmax(fds_sidx *s)
{
    for (uint32_t i = 0; i < s->nfields; i++) {
        fds_sfield *f = &s->fields[i];
        if (!(f->flags & FDS_SIDX_F_NUMCOL))
            continue;
        size_t nb = ((size_t)s->max_doc + FDS_DV_BLOCK - 1) / FDS_DV_BLOCK;
        f->blk_min = malloc((nb ? nb : 1) * sizeof(double));
        f->blk_max = malloc((nb ? nb : 1) * sizeof(double));
        if (!f->blk_min || !f->blk_max)
            return FDS_ENOMEM;
        for (size_t b = 0; b < nb; b++) {
            double lo = NAN, hi = NAN;
            uint32_t end = (uint32_t)((b + 1) * FDS_DV_BLOCK);
            if (end > s->max_doc)
                end = s->max_doc;
            for (uint32_t d = (uint32_t)(b * FDS_DV_BLOCK); d < end; d++) {
                if (!fds__bit(f->present, d))
                    continue;
                double v = f->kind == FDS_FT_DOUBLE ? fds__col_f64(f, d)
                                                    : (double)fds__col_i64(f, d);
                if (isnan(lo) || v < lo)
                    lo = v;
                if (isnan(hi) || v > hi)
                    hi = v;
            }
            f->blk_min[b] = lo;
            f->blk_max[b] = hi;
        }
    }
    return 0;
}

/* The _id table at ids_off: offsets monotone and in bounds, by_id a doc id
 * each. */
static int validate_ids(fds_sidx *s, uint64_t ids_off, size_t body,
                        fds_err *err)
{
    const char *path = s->path;
    uint64_t md = s->max_doc;
    s->idoff = s->map + ids_off;
    s->byid = s->idoff + (md + 1) * 4;
    uint64_t blob = ids_off + (md + 1) * 4 + md * 4;
    blob = (blob + 7) & ~(uint64_t)7;
    uint64_t total = fds__get_u32(s->idoff + md * 4);
    if (!in_file(body, blob, total))
        return corrupt(err, path, "_id bytes out of bounds");
    s->idbytes = s->map + blob;
    s->idbytes_len = total;
    uint32_t prev = 0;
    for (uint32_t d = 0; d <= s->max_doc; d++) {
        uint32_t o = fds__get_u32(s->idoff + (size_t)d * 4);
        if (o < prev || o > total)
            return corrupt(err, path, "bad _id offsets");
        prev = o;
    }
    for (uint32_t d = 0; d < s->max_doc; d++)
        if (fds__get_u32(s->byid + (size_t)d * 4) >= s->max_doc)
            return corrupt(err, path, "bad _id order");
    return 0;
}

/* Check every offset, width and count of the mapped file once (so readers
 * need no bounds checks later) and fill s's field table. */
static int validate(fds_sidx *s, fds_err *err)
{
    uint64_t fields_off = 0, ids_off = 0;
    int rc = validate_header(s, &fields_off, &ids_off, err);
    if (rc)
        return rc;
    size_t body = s->len - FDS_SIDX_FOOTER_LEN;
    s->fields = calloc(s->nfields ? s->nfields : 1, sizeof *s->fields);
    if (!s->fields)
        return FDS_ENOMEM;
    uint64_t dir_off = 0;
    if (fds__get_u32(s->map + 8) >= FDS_SIDX_VERSION_POS)
        dir_off = fds__get_u64(s->map + 48);
    if (dir_off && !in_file(body, dir_off, (uint64_t)s->nfields * 8))
        return corrupt(err, s->path, "positions directory out of bounds");
    for (uint32_t i = 0; i < s->nfields; i++) {
        if ((rc = validate_field(s, i, fields_off, body, err)) ||
            (rc = validate_positions(s, i, dir_off, body, err)))
            return rc;
        madvise(s->map, s->len, MADV_DONTNEED); /* see validate_header */
    }
    if ((rc = build_block_minmax(s)))
        return rc;
    return validate_ids(s, ids_off, body, err);
}

int fds_sidx_open(const char *path, fds_sidx **out, fds_err *err)
{
    *out = NULL;
    fds_sidx *s = calloc(1, sizeof *s);
    if (!s)
        return FDS_ENOMEM;
    s->path = strdup(path);
    if (!s->path) {
        free(s);
        return FDS_ENOMEM;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = fds_err_setk(err, FDS_EIO, FDS_KIND_INTERNAL, "cannot open %s: %s",
                             path, strerror(errno));
        fds_sidx_close(s);
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = fds_err_setk(err, FDS_EIO, FDS_KIND_INTERNAL, "cannot stat %s: %s",
                             path, strerror(errno));
        close(fd);
        fds_sidx_close(s);
        return rc;
    }
    s->len = (size_t)st.st_size;
    if (s->len > 0) {
        void *p = mmap(NULL, s->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int rc = fds_err_setk(err, FDS_EIO, FDS_KIND_INTERNAL,
                                 "cannot map %s: %s", path, strerror(errno));
            close(fd);
            s->len = 0;
            fds_sidx_close(s);
            return rc;
        }
        s->map = p;
    }
    close(fd);
    int rc = validate(s, err);
    /* the checks read every page of the file; leave only what searches
     * touch resident (the pages stay in the page cache, a later read maps
     * them again without I/O) */
    if (s->map)
        madvise(s->map, s->len, MADV_DONTNEED);
    if (rc) {
        if (rc == FDS_ENOMEM)
            fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory opening %s",
                        path);
        fds_sidx_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void fds_sidx_close(fds_sidx *s)
{
    if (!s)
        return;
    if (s->map)
        munmap(s->map, s->len);
    for (uint32_t i = 0; s->fields && i < s->nfields; i++) {
        free(s->fields[i].blk_min);
        free(s->fields[i].blk_max);
        free(s->fields[i].fronts);
        free(s->fields[i].pairs);
        free(s->fields[i].gidx);
        free(s->fields[i].gpairs);
    }
    free(s->fields);
    free(s->path);
    free(s);
}

uint32_t fds_sidx_max_doc(const fds_sidx *s) { return s->max_doc; }
uint64_t fds_sidx_file_bytes(const fds_sidx *s) { return s->len; }

const char *fds_sidx_doc_id(const fds_sidx *s, uint32_t doc, size_t *len)
{
    if (doc >= s->max_doc)
        return NULL;
    uint32_t a = fds__get_u32(s->idoff + (size_t)doc * 4);
    uint32_t b = fds__get_u32(s->idoff + (size_t)doc * 4 + 4);
    *len = b - a;
    return (const char *)s->idbytes + a;
}

int fds_sidx_find_id(const fds_sidx *s, const char *id, size_t id_len,
                     uint32_t *doc)
{
    size_t lo = 0, hi = s->max_doc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t d = fds__get_u32(s->byid + mid * 4);
        size_t l;
        const char *x = fds_sidx_doc_id(s, d, &l);
        int c = fds__bytes_cmp(x, l, id, id_len);
        if (c == 0) {
            *doc = d;
            return 0;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return FDS_ENOTFOUND;
}

const fds_sfield *fds__sidx_field(const fds_sidx *s, const char *name,
                                  size_t len)
{
    size_t lo = 0, hi = s->nfields;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const fds_sfield *f = &s->fields[mid];
        int c = fds__bytes_cmp(f->name, f->name_len, name, len);
        if (c == 0)
            return f;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

uint32_t fds__sidx_val_find(const fds_sfield *f, const char *s, size_t n)
{
    uint32_t lo = 0, hi = f->nvals;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint64_t len;
        const char *v = fds__val_str(f, mid, &len);
        int c = fds__bytes_cmp(v, len, s, n);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return FDS_SIDX_NO_ORD;
}

const char *fds__sidx_term_str(const fds_sfield *f, uint32_t ord,
                               uint32_t *len)
{
    uint64_t bit = (uint64_t)ord * f->wentry;
    uint64_t so = fds__bits_get(f->terms, bit, f->w[0]);
    *len = (uint32_t)fds__bits_get(f->terms, bit + f->w[0], f->w[1]);
    return (const char *)f->tbytes + so;
}

void fds__sidx_term_at(const fds_sidx *s, const fds_sfield *f, uint32_t ord,
                       fds_sterm *t)
{
    uint64_t bit = (uint64_t)ord * f->wentry + f->w[0] + f->w[1];
    uint64_t ptr = fds__bits_get(f->terms, bit + f->w[2], f->w[3]);
    t->ord = ord;
    t->df = (uint32_t)fds__bits_get(f->terms, bit, f->w[2]) + 1;
    t->nblocks = (t->df + FDS_POSTINGS_BLOCK - 1) / FDS_POSTINGS_BLOCK;
    if (ptr & 1) { /* inline singleton: see fds__sterm_inline */
        t->front = NULL;
        t->nfront = 0;
        t->grp = NULL;
        t->gpairs = NULL;
        t->one_doc = (uint32_t)(ptr >> 1);
        t->one_tf = 1;
        t->skip = t->data = t->end = NULL;
        return;
    }
    t->one_doc = t->one_tf = 0;
    t->front = NULL;
    t->nfront = 0;
    t->grp = NULL;
    t->gpairs = NULL;
    if (t->nblocks >= FDS_SFRONT_MIN_BLOCKS) {
        uint32_t lo = 0, hi = f->nfronts; /* fronts are by ordinal */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (f->fronts[mid].ord < ord)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < f->nfronts && f->fronts[lo].ord == ord) {
            t->front = f->pairs + f->fronts[lo].off;
            t->nfront = f->fronts[lo].n;
            t->grp = f->gidx + f->fronts[lo].goff;
            t->gpairs = f->gpairs;
        }
    }
    t->skip = s->map + (ptr >> 1);
    t->data = t->skip + (size_t)t->nblocks * FDS_SIDX_SKIP_LEN;
    t->end = s->map + s->len - FDS_SIDX_FOOTER_LEN;
}

int fds__sidx_term(const fds_sidx *s, const fds_sfield *f, const char *term,
                   size_t len, fds_sterm *t)
{
    size_t lo = 0, hi = f->nterms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t l;
        const char *x = fds__sidx_term_str(f, (uint32_t)mid, &l);
        int c = fds__bytes_cmp(x, l, term, len);
        if (c == 0) {
            fds__sidx_term_at(s, f, (uint32_t)mid, t);
            return 0;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return FDS_ENOTFOUND;
}
