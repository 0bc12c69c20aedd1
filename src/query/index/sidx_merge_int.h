/*
 * sidx_merge_int.h: what the files of the segment merge share -- the
 * merger's state, its buffered output file, the inputs with their doc-id
 * maps, the output fields and the term cursors -- and the steps each file
 * gives the driver (sidx_merge.c): the term dictionaries and string pool
 * (sidx_merge_terms.c), one term's postings and positions
 * (sidx_merge_postings.c), doc values and value ids
 * (sidx_merge_columns.c).
 */
#ifndef FDS_SIDX_MERGE_INT_H
#define FDS_SIDX_MERGE_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "index/sidx_int.h"

/* Bytes buffered before a write(2) of the output. */
#define MERGE_OUT_BUF (1u << 20)
/* Terms visited between two drops of the inputs' pages from the resident
 * set (drop_input_pages): the string pass reads every input's dictionary
 * and string pool, a field's pass its postings. */
#define MERGE_DROP_TERMS (1u << 16)

/* ---- output file ------------------------------------------------------------ */

typedef struct mout {
    int fd;
    uint64_t pos;          /* file offset of buf[0] + len */
    uint8_t *buf;
    size_t len;
    int rc;                /* first error: FDS_EIO or FDS_ENOMEM */
    int eno;
} mout;

/* Write the buffered bytes of o out; the first error stays in o->rc. */
static inline void mo_flush(mout *o)
{
    size_t off = 0;
    while (!o->rc && off < o->len) {
        ssize_t k = write(o->fd, o->buf + off, o->len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            o->rc = FDS_EIO;
            o->eno = errno;
        } else {
            off += (size_t)k;
        }
    }
    o->len = 0;
}

static inline void mo_put(mout *o, const void *p, size_t n)
{
    const uint8_t *s = p;
    while (n && !o->rc) {
        if (o->len == MERGE_OUT_BUF)
            mo_flush(o);
        size_t k = MERGE_OUT_BUF - o->len < n ? MERGE_OUT_BUF - o->len : n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        o->pos += k;
        s += k;
        n -= k;
    }
}

static inline void mo_zeros(mout *o, size_t n)
{
    static const uint8_t z[64];
    while (n && !o->rc) {
        size_t k = n < sizeof z ? n : sizeof z;
        mo_put(o, z, k);
        n -= k;
    }
}

static inline void mo_align(mout *o)
{
    mo_zeros(o, (size_t)((8 - o->pos % 8) % 8));
}

static inline void mo_u32(mout *o, uint32_t v)
{
    uint8_t b[4];
    fds__put_u32(b, v);
    mo_put(o, b, 4);
}

/* ---- inputs ----------------------------------------------------------------- */

typedef struct min {
    const fds_sidx *s;
    const uint8_t *live;   /* bitset, NULL = all live */
    uint32_t base;         /* output doc id of its first live doc */
    uint32_t *map;         /* doc -> output doc (UINT32_MAX: deleted), or
                              NULL: base + doc */
    uint32_t nlive;
} min;

static inline uint32_t in_doc(const min *m, uint32_t d)
{
    return m->map ? m->map[d] : m->base + d;
}

static inline bool in_live(const min *m, uint32_t d)
{
    return !m->live || fds__bit(m->live, d);
}

/* A field of the output and, per input, that input's field (or NULL). */
typedef struct mfield {
    const char *name;
    uint32_t name_len;
    int kind;
    unsigned flags;
    const fds_sfield **in; /* ninputs entries */
    uint64_t **so;         /* per input, the output offset of each term's
                              string (string pass) */
    bool vals_ok;          /* text: every input that has the field was
                              written with value ids (version 7) */
} mfield;

/* The live docs of all inputs in output order:
 *   for (mit it = {0}; mit_next(g, &it);)  -- input it.i, its doc it.d */
typedef struct mit {
    unsigned i;
    uint32_t d;
    bool started;
} mit;

/* ---- a min-heap of term cursors ---------------------------------------------- */

typedef struct tcur {
    uint32_t field, input, ord;
    const char *str;
    uint32_t len;
} tcur;

/* ---- the merge ---------------------------------------------------------------- */

typedef struct merger {
    min *in;
    unsigned nin;
    mfield *fs;
    size_t nf;
    uint32_t max_doc;
    mout o;
    uint8_t *hdr;          /* header + field descriptors, written last */
    tcur *heap;
    tcur *grp;             /* nin entries: the inputs holding one term */
    /* one term's output postings */
    uint8_t *pbuf;
    size_t plen, pcap;
    uint8_t *skips;
    size_t nskip, skipcap;
    /* one term's output positions, and where its blocks 1.. start */
    uint8_t *posb;
    size_t poslen, poscap;
    uint32_t *posblk;
    size_t nposblk, posblkcap;
    uint64_t *pos_dir;     /* per output field: its positions table, 0 none */
    uint64_t pos_dir_off;  /* the positions directory, 0 none */
    /* one field's term entries */
    struct ment { uint64_t so, ptr, pos; uint32_t sl, df; } *ents;
    size_t ne, ecap;
} merger;

static inline bool mit_next(const merger *g, mit *it)
{
    if (it->started)
        it->d++;
    it->started = true;
    for (; it->i < g->nin; it->i++, it->d = 0)
        for (; it->d < g->in[it->i].s->max_doc; it->d++)
            if (in_live(&g->in[it->i], it->d))
                return true;
    return false;
}

/* The string pool: every distinct term string of every field once, in
 * byte order, with its offset noted for each (field, input, ordinal);
 * MERGE_NO_STR for a term whose docs are all deleted (it is dropped, and
 * its string is written only if another live term has it). */
#define MERGE_NO_STR UINT64_MAX

/* Add one posting to the current term's output; a full block is encoded. */
typedef struct tacc {
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
    uint8_t nbs[FDS_POSTINGS_BLOCK]; /* norm bytes, for the impacts */
    unsigned n;
    uint32_t base, df, max_tf;
    uint8_t min_norm;
    uint64_t ttf;
    uint32_t first_doc, first_tf;
} tacc;

/* Drop the inputs' pages from the resident set (they stay cached). */
static inline void drop_input_pages(const merger *g)
{
    for (unsigned i = 0; i < g->nin; i++)
        madvise(g->in[i].s->map, g->in[i].s->len, MADV_DONTNEED);
}

/* The string pool of every field's live terms (sidx_merge_terms.c). */
void fds__merge_write_strings(merger *g);

/* Terms and postings of field k, then its dictionary (and positions
 * table); keyword fields get each input ordinal's output ordinal in
 * ordmap[input] (sidx_merge_terms.c).  0 or a negative FDS_E*. */
int fds__merge_write_terms(merger *g, size_t k, uint32_t **ordmap, uint32_t *nt,
                           uint64_t *sum_ttf, uint64_t *terms_off);

/* Encode a's pending postings as a block (sidx_merge_postings.c).  0 or
 * FDS_ENOMEM. */
int fds__merge_acc_flush(merger *g, tacc *a);

/* The live postings of input term (f, ord) of input m, remapped, into a;
 * with their positions when `pos` (sidx_merge_postings.c).  0,
 * FDS_ECORRUPT, FDS_ENOMEM, FDS_ETOOBIG. */
int fds__merge_copy_postings(merger *g, const min *m, const fds_sfield *f,
                             uint32_t ord, tacc *a, bool pos);

/* Norms (text), presence bitset, column and value ids of field k, in
 * output doc order; the column widths into *ord_bits / *num_bits, the docs
 * with terms into *doc_count (sidx_merge_columns.c).  0 or a negative
 * FDS_E*. */
int fds__merge_write_columns(merger *g, size_t k, uint32_t *const *ordmap,
                             uint32_t nt, uint64_t *norms_off,
                             uint64_t *col_off, unsigned *ord_bits,
                             unsigned *num_bits, uint32_t *doc_count);

#endif
