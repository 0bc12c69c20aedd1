/*
 * sidx_int.h: internal view of an open segment index (src/query only).
 * Layout of the file: sidx_format.h.
 */
#ifndef FDS_SIDX_INT_H
#define FDS_SIDX_INT_H

#include <string.h>

#include "query_int.h"
#include "index/postings.h"
#include "index/sidx_format.h"

/* One (max term frequency, min norm byte) pair of a term's skip entries
 * (sidx_format.h): every block's pair is dominated by one of a term's
 * frontier pairs (a higher or equal frequency at a lower or equal norm). */
typedef struct fds_spair {
    uint32_t tf;
    uint8_t norm;
} fds_spair;

/* A term's frontier: its pairs pairs[off .. off + n) of its field, in
 * increasing norm (and frequency) order; and its groups of
 * FDS_SGROUP_BLOCKS blocks: group g's frontier is the field's
 * gpairs[gidx[goff + g] .. gidx[goff + g + 1]). */
typedef struct fds_sfront {
    uint32_t ord, off, n;
    uint32_t goff;
} fds_sfront;

/* Blocks per group of a term's group frontiers: the frontier of the
 * impacts of all its blocks (Lucene keeps such a second level of impacts
 * every 32 blocks too, Lucene90SkipWriter), so that a lone term's pass
 * passes over 32 blocks that cannot beat the k-th score at once. */
#define FDS_SGROUP_BLOCKS 32u

/* Terms of at least this many blocks have their frontier computed when
 * the file is opened (a BM25 bound of all their blocks then costs a few
 * pairs, not a pass over their skip list). */
#define FDS_SFRONT_MIN_BLOCKS 64u

typedef struct fds_sfield {
    const char *name;
    uint32_t name_len;
    int kind;            /* fds_ftype */
    unsigned flags;      /* FDS_SIDX_F_* */
    unsigned ord_bits;   /* KEYWORD: bits per packed ordinal (0..32) */
    unsigned num_bits;   /* numeric: bits per packed value, or NUM_RAW */
    int64_t num_min;     /* packed integer column: value of a 0 */
    /* packed DOUBLE column (version 8): 10^digits, its inverse and the
     * float32 flag of its scale word (sidx_dcol.c) */
    double num_div, num_mul;
    bool num_float;
    uint32_t doc_count, nterms;
    uint64_t sum_ttf;
    const uint8_t *terms;   /* nterms bit-packed entries of wentry bits */
    uint8_t w[4];           /* widths: str_off, str_len, df - 1, ptr */
    unsigned wentry;
    const uint8_t *tbytes;
    const uint8_t *norms;   /* NULL without norms */
    uint64_t norm_seen[4];  /* bit n set: some doc has norm byte n */
    const uint8_t *present; /* bitset */
    const uint8_t *col;     /* column after the bitset, NULL for text */
    /* numeric columns: min and max value per FDS_DV_BLOCK docs (NaN when no
     * doc of the block has a value), computed at open; lets a sorted search
     * visit the most promising blocks first and stop early */
    double *blk_min, *blk_max;
    /* FDS_SIDX_F_POS: the positions table, nterms entries of wpos bits
     * (sidx_format.h); NULL without positions */
    const uint8_t *pos;
    unsigned wpos;
    /* the frontiers of the terms of FDS_SFRONT_MIN_BLOCKS blocks or more,
     * by ordinal (computed at open from the skip entries), and their
     * pairs; NULL when none */
    fds_sfront *fronts;
    uint32_t nfronts;
    fds_spair *pairs;
    /* the group frontiers of those terms (fds_sfront), from the impacts of
     * their blocks, computed at open; NULL when none */
    uint32_t *gidx;
    fds_spair *gpairs;
    /* FDS_SIDX_F_VALUES (a text field, version 7): nvals value ids (maybe
     * 0), the offsets array of the value table (nvals + 1 u64, relative
     * to vbytes) and the values' bytes; vcol, the column of vbits-bit ids
     * + 1 after the presence bitset (fds__val_id).  NULL / 0 without
     * value ids. */
    uint32_t nvals;
    unsigned vbits;
    const uint8_t *voff, *vbytes, *vcol;
    bool vcomplete;         /* every long value has an id (VALS_COMPLETE) */
} fds_sfield;

#define FDS_DV_BLOCK 1024u

typedef struct fds_sterm {
    uint32_t ord, df, nblocks;
    /* the term's frontier (nfront pairs), NULL when not computed: a bound
     * over all its blocks is the best over these pairs */
    const fds_spair *front;
    uint32_t nfront;
    /* with the frontier: group g's frontier (FDS_SGROUP_BLOCKS blocks) is
     * gpairs[grp[g] .. grp[g + 1]); NULL when not computed */
    const uint32_t *grp;
    const fds_spair *gpairs;
    uint32_t one_doc, one_tf; /* df == 1: the posting (skip, data NULL) */
    const uint8_t *skip;  /* nblocks x 16 bytes */
    const uint8_t *data;  /* blocks */
    const uint8_t *end;   /* end of the mapped file (bound for decoding) */
} fds_sterm;

struct fds_sidx {
    char *path;
    uint8_t *map;
    size_t len;
    uint32_t max_doc, nfields;
    fds_sfield *fields;      /* sorted by name */
    const uint8_t *idoff;    /* (max_doc+1) u32 */
    const uint8_t *byid;     /* max_doc u32 */
    const uint8_t *idbytes;
    size_t idbytes_len;
    uint32_t version;        /* format version of the file */
};

const fds_sfield *fds__sidx_field(const fds_sidx *s, const char *name,
                                  size_t len);
/* 0 and *t filled, or FDS_ENOTFOUND. */
int fds__sidx_term(const fds_sidx *s, const fds_sfield *f, const char *term,
                   size_t len, fds_sterm *t);
/* The value id of the bytes s[0..n) in text field f's value table
 * (FDS_SIDX_F_VALUES: values sorted by bytes, a prefix before a longer
 * value; sidx_format.h), or FDS_SIDX_NO_ORD: none (also without value
 * ids).  Binary search, O(log nvals) comparisons. */
uint32_t fds__sidx_val_find(const fds_sfield *f, const char *s, size_t n);
/* Term string by ordinal (ord < nterms). */
const char *fds__sidx_term_str(const fds_sfield *f, uint32_t ord,
                               uint32_t *len);
void fds__sidx_term_at(const fds_sidx *s, const fds_sfield *f, uint32_t ord,
                       fds_sterm *t);

/* The positions of term ordinal `ord` of field f (which has positions):
 * nblocks - 1 u32 block offsets, then the positions bytes (sidx_format.h).
 * Bounds: the end of the mapped file. */
static inline const uint8_t *fds__sidx_term_pos(const fds_sidx *s,
                                                const fds_sfield *f,
                                                uint32_t ord)
{
    return s->map + fds__bits_get(f->pos, (uint64_t)ord * f->wpos, f->wpos);
}

/* Bytes of the impacts of the block of skip entry `sk` (sidx_format.h; 0
 * when it has none). */
static inline uint32_t fds__skip_ilen(const uint8_t *sk)
{
    return sk[14] | (uint32_t)sk[15] << 8;
}

/* The next (norm byte, tf) pair of a block's impacts, from *p (advanced)
 * up to end: 1 and the pair, 0 at the end, -1 when the pair does not
 * decode (a damaged file: the caller falls back to the block's (max tf,
 * min norm), which bounds it too). */
static inline int fds__impact_next(const uint8_t **p, const uint8_t *end,
                                   uint8_t *nb, uint32_t *tf)
{
    if (*p >= end)
        return 0;
    *nb = *(*p)++;
    size_t k = fds__varint_get(*p, end, tf);
    *p += k;
    return k ? 1 : -1;
}

/* The impacts (fds__skip_ilen(sk) bytes) of the block of skip entry `sk` of
 * term t. */
static inline const uint8_t *fds__skip_impacts(const fds_sterm *t,
                                               const uint8_t *sk)
{
    return t->data + fds__get_u32(sk + 4);
}

/* The competitive impacts of a block of n docs with term frequencies
 * tfs[] and norm bytes nbs[] into out (FDS_SIDX_IMPACTS_BYTES_MAX bytes;
 * layout in sidx_format.h).  Returns the bytes written: 0 when one pair
 * dominates the block.  (sidx_writer.c; the merge writes them too.) */
size_t fds__sidx_impacts(const uint32_t *tfs, const uint8_t *nbs, unsigned n,
                         uint8_t *out);

/* The postings block of skip entry `sk` of term t: after its impacts. */
static inline const uint8_t *fds__skip_block(const fds_sterm *t,
                                             const uint8_t *sk)
{
    return fds__skip_impacts(t, sk) + fds__skip_ilen(sk);
}

/* Bytes of the buffers fds__sterm_inline() fills. */
#define FDS_STERM_INLINE_BLK 16u

/*
 * A singleton term (df == 1) has its doc and frequency in the term entry and
 * no skip entry or block in the file.  Build both in caller-owned buffers
 * (FDS_SIDX_SKIP_LEN and FDS_STERM_INLINE_BLK bytes, which must outlive the
 * use of *t) so that postings code sees an ordinary one-block term.
 * `norms` is the field's norms (NULL without).  No-op when df != 1.
 */
static inline void fds__sterm_inline(fds_sterm *t, const uint8_t *norms,
                                     uint8_t *skip, uint8_t *blk)
{
    if (t->skip)
        return;
    uint32_t doc = t->one_doc, tf = t->one_tf;
    size_t n = fds_postings_encode_block(&doc, &tf, 1, 0, blk);
    __builtin_memset(skip, 0, FDS_SIDX_SKIP_LEN);
    fds__put_u32(skip, doc);
    fds__put_u32(skip + 8, tf);
    skip[12] = norms ? norms[doc] : 1;
    t->skip = skip;
    t->data = blk;
    t->end = blk + n;
}

/* Byte order of a[0..al) and b[0..bl): memcmp, then the shorter first
 * (the order of terms and _ids in a .sidx file). */
static inline int fds__bytes_cmp(const void *a, size_t al, const void *b,
                                 size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al < bl ? -1 : al > bl);
}

static inline bool fds__bit(const uint8_t *bits, uint32_t d)
{
    return (bits[d >> 3] >> (d & 7)) & 1;
}
static inline int64_t fds__col_i64(const fds_sfield *f, uint32_t d)
{
    if (f->num_bits != FDS_SIDX_NUM_RAW)
        return (int64_t)((uint64_t)f->num_min +
                         fds__bits_get(f->col, (uint64_t)d * f->num_bits,
                                       f->num_bits));
    return (int64_t)fds__get_u64(f->col + (size_t)d * 8);
}
/* The value of integer m of a packed double column (sidx_dcol.c): m / div
 * (div = 10^digits); for a float column m * mul (mul = 1 / div, a multiply
 * where a division took a sixth of an aggregation's time over the
 * column), rounded to float32. */
static inline double fds__dcol_decode(int64_t m, double div, double mul,
                                      bool flt)
{
    return flt ? (double)(float)((double)m * mul) : (double)m / div;
}
static inline double fds__col_f64(const fds_sfield *f, uint32_t d)
{
    if (f->num_bits != FDS_SIDX_NUM_RAW)
        return fds__dcol_decode(fds__col_i64(f, d), f->num_div, f->num_mul,
                                f->num_float);
    uint64_t u = fds__get_u64(f->col + (size_t)d * 8);
    double x;
    __builtin_memcpy(&x, &u, 8);
    return x;
}
/* Value d of a packed column of w-bit values + 1 (0 = none, read as
 * FDS_SIDX_NO_ORD), which ends with 8 bytes of padding
 * (FDS_SIDX_ORD_BYTES). */
static inline uint32_t fds__packed_id(const uint8_t *col, unsigned w,
                                      uint32_t d)
{
    if (!w)
        return FDS_SIDX_NO_ORD;
    uint64_t bit = (uint64_t)d * w;
    uint64_t v = fds__get_u64(col + (bit >> 3)) >> (bit & 7);
    return (uint32_t)(v & ((1ull << w) - 1)) - 1u;
}

/* Ordinal of doc d's smallest term, FDS_SIDX_NO_ORD for none (packed as
 * ordinal + 1, 0 = none; see sidx_format.h). */
static inline uint32_t fds__col_ord(const fds_sfield *f, uint32_t d)
{
    return fds__packed_id(f->col, f->ord_bits, d);
}

/* Ask for the cache line of doc d's packed id in col (w bits an id) ahead
 * of fds__packed_id (no fault whatever the address).  At the scale
 * benchmark's 10M docs the url's keyword ordinals take 13 bits a doc
 * (15.5 MiB) and its value ids 10 (11.9 MiB): a read per MaxScore
 * candidate otherwise waits on memory (bench/scale). */
static inline void fds__packed_prefetch(const uint8_t *col, unsigned w,
                                        uint32_t d)
{
    if (w)
        __builtin_prefetch(col + ((uint64_t)d * w >> 3));
}

/* The value id of doc d on text field f (FDS_SIDX_F_VALUES), or
 * FDS_SIDX_NO_ORD: none (no value, a short one, one without an id, or no
 * value ids in f).  Ids are < f->nvals (checked at open). */
static inline uint32_t fds__val_id(const fds_sfield *f, uint32_t d)
{
    return fds__packed_id(f->vcol, f->vbits, d);
}

/* The bytes of value id v (< f->nvals) of text field f, *len of them. */
static inline const char *fds__val_str(const fds_sfield *f, uint32_t v,
                                       uint64_t *len)
{
    uint64_t a = fds__get_u64(f->voff + (size_t)v * 8);
    *len = fds__get_u64(f->voff + (size_t)v * 8 + 8) - a;
    return (const char *)f->vbytes + a;
}

/* The packed layout of a double column (sidx_dcol.c): bits per value
 * (FDS_SIDX_NUM_RAW: none fits, raw 8-byte values), the smallest integer
 * and the scale word (sidx_format.h). */
typedef struct fds__dcol {
    unsigned bits;
    int64_t min;
    uint64_t scale;
} fds__dcol;
/* Choose it for the n values v (the docs' with a value). */
void fds__dcol_plan(const double *v, size_t n, fds__dcol *plan);
/* m of value v under scale word `scale`; false when v does not read back
 * (never for a value fds__dcol_plan was given). */
bool fds__dcol_int(double v, uint64_t scale, int64_t *m);
/* 10^digits and 1 / 10^digits (1 past FDS_SIDX_DCOL_DIGITS). */
double fds__dcol_div(unsigned digits);
double fds__dcol_mul(unsigned digits);

#endif
