/*
 * sidx_merge.c: the segment index of a merge, built from the inputs' index
 * files instead of from their documents (layout: sidx_format.h).
 *
 * Why: fds_sidx_writer holds the whole inverted index of a segment on the
 * heap (terms, postings, per-doc columns, ~500 bytes a synthlogs document)
 * and then the whole file in one buffer; for a force-merge of 2M documents
 * that alone passed 1 GB.  Like Lucene's merge of postings
 * (MultiTermsEnum over the inputs' term dictionaries, doc ids remapped
 * through a DocMap that skips deleted docs), this walks the inputs' sorted
 * term dictionaries in step and copies each term's postings with doc ids
 * shifted and deleted docs dropped.  The heap holds per-term scratch (one
 * term's postings), one field's term entries and columns, and one doc-id
 * map per input with deletes; the file is written as it is produced.
 * Input pages are dropped from the resident set after each field (they stay
 * in the page cache).
 *
 * The output is the file fds_sidx_writer would write for the same live
 * documents in the same order: same terms, ordinals, postings blocks, norms,
 * columns and _id table; term strings shared by fields are stored once (one
 * pass over the sorted terms of every field and input at once).  Positions
 * are copied doc by doc (a doc's positions bytes do not depend on where it
 * sits, positions.h); a text field keeps them only when every input that
 * has it does, as Lucene's FieldInfos keep the lowest IndexOptions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "index/positions.h"
#include "index/sidx_int.h"

/* Bytes buffered before a write(2) of the output. */
#define MERGE_OUT_BUF (1u << 20)
/* Bytes read back at a time for the footer checksum. */
#define MERGE_CRC_CHUNK (1u << 20)
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

static void mo_flush(mout *o)
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

static void mo_put(mout *o, const void *p, size_t n)
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

static void mo_zeros(mout *o, size_t n)
{
    static const uint8_t z[64];
    while (n && !o->rc) {
        size_t k = n < sizeof z ? n : sizeof z;
        mo_put(o, z, k);
        n -= k;
    }
}

static void mo_align(mout *o)
{
    mo_zeros(o, (size_t)((8 - o->pos % 8) % 8));
}

static void mo_u32(mout *o, uint32_t v)
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

static int bytes_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al < bl ? -1 : al > bl);
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

static bool tc_less(const tcur *a, const tcur *b)
{
    int c = bytes_cmp(a->str, a->len, b->str, b->len);
    if (c)
        return c < 0;
    return a->field != b->field ? a->field < b->field : a->input < b->input;
}

static void heap_down(tcur *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && tc_less(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && tc_less(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        tcur t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void heap_make(tcur *h, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        heap_down(h, n, i);
}

/* Advance the top cursor to its next term, or drop it.  Returns the new
 * heap size. */
static size_t heap_next(tcur *h, size_t n, const mfield *fs)
{
    tcur *t = &h[0];
    const fds_sfield *f = fs[t->field].in[t->input];
    if (++t->ord < f->nterms) {
        t->str = fds__sidx_term_str(f, t->ord, &t->len);
    } else {
        h[0] = h[--n];
    }
    heap_down(h, n, 0);
    return n;
}

/* Push the first term of (field, input) lists with terms into h. */
static size_t heap_fill(tcur *h, const mfield *fs, size_t f0, size_t f1,
                        unsigned nin)
{
    size_t n = 0;
    for (size_t f = f0; f < f1; f++)
        for (unsigned i = 0; i < nin; i++) {
            const fds_sfield *sf = fs[f].in[i];
            if (!sf || !sf->nterms)
                continue;
            h[n] = (tcur){(uint32_t)f, i, 0, NULL, 0};
            h[n].str = fds__sidx_term_str(sf, 0, &h[n].len);
            n++;
        }
    heap_make(h, n);
    return n;
}

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

#define grow fds__grow

/* The union of the inputs' fields, sorted by name (as the writer sorts). */
static int collect_fields(merger *g)
{
    size_t cap = 0;
    for (unsigned i = 0; i < g->nin; i++)
        cap += g->in[i].s->nfields;
    g->fs = calloc(cap ? cap : 1, sizeof *g->fs);
    if (!g->fs)
        return FDS_ENOMEM;
    /* each input's fields are sorted: merge them by name */
    uint32_t *at = calloc(g->nin, sizeof *at);
    if (!at)
        return FDS_ENOMEM;
    for (;;) {
        const fds_sfield *best = NULL;
        for (unsigned i = 0; i < g->nin; i++) {
            const fds_sidx *s = g->in[i].s;
            if (at[i] < s->nfields &&
                (!best || bytes_cmp(s->fields[at[i]].name, s->fields[at[i]].name_len,
                                    best->name, best->name_len) < 0))
                best = &s->fields[at[i]];
        }
        if (!best)
            break;
        mfield *mf = &g->fs[g->nf++];
        mf->name = best->name;
        mf->name_len = best->name_len;
        mf->kind = best->kind;
        mf->flags = best->flags & ~FDS_SIDX_F_VALUES; /* write_values */
        mf->vals_ok = true;
        mf->in = calloc(g->nin, sizeof *mf->in);
        mf->so = calloc(g->nin, sizeof *mf->so);
        if (!mf->in || !mf->so) {
            free(at);
            return FDS_ENOMEM;
        }
        for (unsigned i = 0; i < g->nin; i++) {
            const fds_sidx *s = g->in[i].s;
            if (at[i] < s->nfields &&
                !bytes_cmp(s->fields[at[i]].name, s->fields[at[i]].name_len,
                           best->name, best->name_len)) {
                const fds_sfield *sf = &s->fields[at[i]++];
                if (sf->kind != mf->kind) {
                    free(at);
                    return FDS_ECORRUPT;
                }
                mf->in[i] = sf;
                mf->flags |= sf->flags & FDS_SIDX_F_MULTI;
                if (!(sf->flags & FDS_SIDX_F_POS))
                    mf->flags &= ~FDS_SIDX_F_POS;
                if (!(sf->flags & FDS_SIDX_F_SINGLE))
                    mf->flags &= ~FDS_SIDX_F_SINGLE;
                if (s->version < FDS_SIDX_VERSION_VALUES)
                    mf->vals_ok = false;
                if (sf->nterms &&
                    !(mf->so[i] = malloc((size_t)sf->nterms * sizeof **mf->so))) {
                    free(at);
                    return FDS_ENOMEM;
                }
            }
        }
    }
    free(at);
    return 0;
}

/* Drop the inputs' pages from the resident set (they stay cached). */
static void drop_input_pages(const merger *g)
{
    for (unsigned i = 0; i < g->nin; i++)
        madvise(g->in[i].s->map, g->in[i].s->len, MADV_DONTNEED);
}

/* Does term (f, ord) of input m have a live doc?  (Decodes only until it
 * finds one; an input without deletes answers at once.) */
static bool term_live(const min *m, const fds_sfield *f, uint32_t ord)
{
    if (!m->live)
        return true;
    fds_sterm t;
    fds__sidx_term_at(m->s, f, ord, &t);
    if (!t.skip)
        return in_live(m, t.one_doc);
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK], base = 0;
    for (uint32_t b = 0; b < t.nblocks; b++) {
        const uint8_t *sk = t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        unsigned n = (unsigned)sk[13] + 1;
        if (fds_postings_decode_block(fds__skip_block(&t, sk), t.end, n,
                                      base, m->s->max_doc, docs, tfs) < 0)
            return true; /* the postings pass reports it */
        for (unsigned i = 0; i < n; i++)
            if (in_live(m, docs[i]))
                return true;
        base = fds__get_u32(sk) + 1;
    }
    return false;
}

/* The string pool: every distinct term string of every field once, in
 * byte order, with its offset noted for each (field, input, ordinal);
 * MERGE_NO_STR for a term whose docs are all deleted (it is dropped, and
 * its string is written only if another live term has it). */
#define MERGE_NO_STR UINT64_MAX
static void write_strings(merger *g)
{
    size_t n = heap_fill(g->heap, g->fs, 0, g->nf, g->nin);
    const char *last = NULL;
    uint32_t last_len = 0;
    uint64_t last_off = 0, seen = 0;
    while (n && !g->o.rc) {
        tcur *t = &g->heap[0];
        uint64_t so = MERGE_NO_STR;
        if (term_live(&g->in[t->input], g->fs[t->field].in[t->input], t->ord)) {
            if (!last || bytes_cmp(t->str, t->len, last, last_len)) {
                last = t->str;
                last_len = t->len;
                last_off = g->o.pos;
                mo_put(&g->o, t->str, t->len);
            }
            so = last_off;
        }
        g->fs[t->field].so[t->input][t->ord] = so;
        n = heap_next(g->heap, n, g->fs);
        if (++seen % MERGE_DROP_TERMS == 0)
            drop_input_pages(g);
    }
}

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

static int acc_flush(merger *g, tacc *a)
{
    if (!a->n)
        return 0;
    if (grow((void **)&g->pbuf, &g->pcap,
             g->plen + FDS_SIDX_IMPACTS_BYTES_MAX + FDS_POSTINGS_BLOCK_BOUND(a->n), 1) ||
        grow((void **)&g->skips, &g->skipcap, (g->nskip + 1) * FDS_SIDX_SKIP_LEN, 1))
        return FDS_ENOMEM;
    /* as the writer lays a block out: its impacts, then the block */
    size_t at = g->plen;
    size_t ilen = fds__sidx_impacts(a->tfs, a->nbs, a->n, g->pbuf + at);
    g->plen += ilen;
    g->plen += fds_postings_encode_block(a->docs, a->tfs, a->n, a->base,
                                         g->pbuf + g->plen);
    uint8_t *s = g->skips + g->nskip++ * FDS_SIDX_SKIP_LEN;
    memset(s, 0, FDS_SIDX_SKIP_LEN);
    fds__put_u32(s, a->docs[a->n - 1]);
    fds__put_u32(s + 4, (uint32_t)at);
    fds__put_u32(s + 8, a->max_tf);
    s[12] = a->min_norm;
    s[13] = (uint8_t)(a->n - 1);
    s[14] = (uint8_t)ilen;
    s[15] = (uint8_t)(ilen >> 8);
    a->base = a->docs[a->n - 1] + 1;
    a->n = 0;
    a->max_tf = 0;
    a->min_norm = 255;
    return 0;
}

static int acc_add(merger *g, tacc *a, uint32_t doc, uint32_t tf, uint8_t norm)
{
    if (!a->df) {
        a->first_doc = doc;
        a->first_tf = tf;
    }
    a->docs[a->n] = doc;
    a->tfs[a->n] = tf;
    a->nbs[a->n] = norm;
    a->max_tf = tf > a->max_tf ? tf : a->max_tf;
    a->min_norm = norm < a->min_norm ? norm : a->min_norm;
    a->df++;
    a->ttf += tf;
    return ++a->n == FDS_POSTINGS_BLOCK ? acc_flush(g, a) : 0;
}

/* The positions of one posting with term frequency tf at *pp (bounded by
 * end; *pp moves past them) appended to the term's output positions when
 * `keep`, noting a new block's start when a is at one.  0, FDS_ECORRUPT,
 * FDS_ENOMEM. */
static int copy_doc_positions(merger *g, const tacc *a, const uint8_t **pp,
                              const uint8_t *end, uint32_t tf, bool keep)
{
    long k = fds_positions_decode(*pp, end, tf, NULL);
    if (k < 0)
        return FDS_ECORRUPT;
    if (keep) {
        if (!a->n && a->df) {
            if (grow((void **)&g->posblk, &g->posblkcap, g->nposblk + 1,
                     sizeof *g->posblk))
                return FDS_ENOMEM;
            if (g->poslen > UINT32_MAX)
                return FDS_ETOOBIG;
            g->posblk[g->nposblk++] = (uint32_t)g->poslen;
        }
        if (grow((void **)&g->posb, &g->poscap, g->poslen + (size_t)k, 1))
            return FDS_ENOMEM;
        memcpy(g->posb + g->poslen, *pp, (size_t)k);
        g->poslen += (size_t)k;
    }
    *pp += k;
    return 0;
}

/* The live postings of input term (f, ord) of input m, remapped, into a;
 * with their positions when `pos`. */
static int copy_postings(merger *g, const min *m, const fds_sfield *f,
                         uint32_t ord, tacc *a, bool pos)
{
    fds_sterm t;
    fds__sidx_term_at(m->s, f, ord, &t);
    const uint8_t *pp = NULL, *pend = m->s->map + m->s->len - FDS_SIDX_FOOTER_LEN;
    const uint8_t *p0 = NULL;
    if (pos) {
        p0 = fds__sidx_term_pos(m->s, f, ord);
        pp = p0 += (size_t)(t.nblocks - 1) * 4;
    }
    if (!t.skip) {
        if (in_live(m, t.one_doc)) {
            int rc = pos ? copy_doc_positions(g, a, &pp, pend, 1, true) : 0;
            return rc ? rc
                      : acc_add(g, a, in_doc(m, t.one_doc), t.one_tf,
                                f->norms ? f->norms[t.one_doc] : 1);
        }
        return 0;
    }
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
    uint32_t base = 0;
    for (uint32_t b = 0; b < t.nblocks; b++) {
        const uint8_t *sk = t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        unsigned n = (unsigned)sk[13] + 1;
        long k = fds_postings_decode_block(fds__skip_block(&t, sk), t.end,
                                           n, base, m->s->max_doc, docs, tfs);
        if (k < 0)
            return FDS_ECORRUPT;
        if (pos && b) {
            uint32_t bo = fds__get_u32(p0 - (size_t)(t.nblocks - 1) * 4 +
                                       (size_t)(b - 1) * 4);
            if (bo > (size_t)(pend - p0))
                return FDS_ECORRUPT;
            pp = p0 + bo;
        }
        for (unsigned i = 0; i < n; i++) {
            bool live = in_live(m, docs[i]);
            int rc = pos ? copy_doc_positions(g, a, &pp, pend, tfs[i], live) : 0;
            if (!rc && live)
                rc = acc_add(g, a, in_doc(m, docs[i]), tfs[i],
                             f->norms ? f->norms[docs[i]] : 1);
            if (rc)
                return rc;
        }
        base = fds__get_u32(sk) + 1;
    }
    return 0;
}

/* Terms and postings of field k, then its bit-packed dictionary; keyword
 * fields get each input ordinal's output ordinal in ordmap[input]. */
static int write_terms(merger *g, size_t k, uint32_t **ordmap, uint32_t *nt,
                       uint64_t *sum_ttf, uint64_t *terms_off)
{
    mfield *mf = &g->fs[k];
    bool pos = (mf->flags & FDS_SIDX_F_POS) != 0;
    uint64_t max_pos = 0;
    size_t n = heap_fill(g->heap, g->fs, k, k + 1, g->nin);
    uint64_t max_so = 0, max_sl = 0, max_df = 0, max_ptr = 0, seen = 0;
    g->ne = 0;
    *sum_ttf = 0;
    int rc = 0;
    while (n && !rc && !g->o.rc) {
        /* every input holding this term (at most once each), in input
         * (= doc) order: the heap breaks ties by input */
        tcur *grp = g->grp;
        unsigned ng = 0;
        const char *str = g->heap[0].str;
        uint32_t len = g->heap[0].len;
        tacc a = {.min_norm = 255};
        g->plen = g->nskip = 0;
        g->poslen = g->nposblk = 0;
        while (n && !bytes_cmp(g->heap[0].str, g->heap[0].len, str, len)) {
            grp[ng++] = g->heap[0];
            n = heap_next(g->heap, n, g->fs);
        }
        for (unsigned i = 0; i < ng && !rc; i++)
            rc = copy_postings(g, &g->in[grp[i].input], mf->in[grp[i].input],
                               grp[i].ord, &a, pos);
        if (++seen % MERGE_DROP_TERMS == 0)
            drop_input_pages(g);
        if (!rc)
            rc = acc_flush(g, &a);
        if (rc || !a.df)
            continue; /* every doc of the term deleted: no entry */
        for (unsigned i = 0; ordmap && i < ng; i++)
            ordmap[grp[i].input][grp[i].ord] = (uint32_t)g->ne;
        uint64_t ptr, po = 0;
        if (pos) { /* where the writer puts them: before the postings */
            po = g->o.pos;
            for (size_t b = 0; b < g->nposblk; b++)
                mo_u32(&g->o, g->posblk[b]);
            mo_put(&g->o, g->posb, g->poslen);
            max_pos = po > max_pos ? po : max_pos;
        }
        if (a.df == 1 && a.first_tf == 1) {
            ptr = (uint64_t)a.first_doc << 1 | 1;
        } else {
            ptr = g->o.pos << 1;
            mo_put(&g->o, g->skips, g->nskip * FDS_SIDX_SKIP_LEN);
            mo_put(&g->o, g->pbuf, g->plen);
        }
        if (grow((void **)&g->ents, &g->ecap, g->ne + 1, sizeof *g->ents)) {
            rc = FDS_ENOMEM;
            break;
        }
        uint64_t so = MERGE_NO_STR;
        for (unsigned i = 0; i < ng && so == MERGE_NO_STR; i++)
            so = mf->so[grp[i].input][grp[i].ord];
        if (so == MERGE_NO_STR) { /* live postings, yet judged dead */
            rc = FDS_ECORRUPT;
            break;
        }
        g->ents[g->ne++] = (struct ment){so, ptr, po, len, a.df};
        max_so = so > max_so ? so : max_so;
        max_sl = len > max_sl ? len : max_sl;
        max_df = a.df - 1 > max_df ? a.df - 1 : max_df;
        max_ptr = ptr > max_ptr ? ptr : max_ptr;
        *sum_ttf += a.ttf;
    }
    if (rc)
        return rc;
    unsigned w[4] = {fds__bit_width(max_so), fds__bit_width(max_sl),
                     fds__bit_width(max_df), fds__bit_width(max_ptr)};
    unsigned W = w[0] + w[1] + w[2] + w[3];
    size_t dl = (size_t)FDS_SIDX_DICT_BYTES(g->ne, W);
    uint8_t *d = calloc(dl, 1);
    if (!d)
        return FDS_ENOMEM;
    for (int j = 0; j < 4; j++)
        d[j] = (uint8_t)w[j];
    uint64_t bit = 0;
    for (size_t i = 0; i < g->ne; i++) {
        const struct ment *e = &g->ents[i];
        uint64_t v[4] = {e->so, e->sl, e->df - 1u, e->ptr};
        for (int j = 0; j < 4; j++) {
            fds__bits_put(d + FDS_SIDX_DICT_HDR, bit, w[j], v[j]);
            bit += w[j];
        }
    }
    mo_align(&g->o);
    *terms_off = g->o.pos;
    mo_put(&g->o, d, dl);
    free(d);
    *nt = (uint32_t)g->ne;
    if (!pos)
        return 0;
    unsigned wp = fds__bit_width(max_pos);
    size_t pl = (size_t)FDS_SIDX_POS_TABLE_BYTES(g->ne, wp);
    uint8_t *pt = calloc(pl, 1);
    if (!pt)
        return FDS_ENOMEM;
    pt[0] = (uint8_t)wp;
    for (size_t i = 0; i < g->ne; i++)
        fds__bits_put(pt + FDS_SIDX_POS_HDR, (uint64_t)i * wp, wp, g->ents[i].pos);
    mo_align(&g->o);
    g->pos_dir[k] = g->o.pos;
    mo_put(&g->o, pt, pl);
    free(pt);
    return 0;
}

static bool mit_next(const merger *g, mit *it)
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

/* An input's value id, for sorting them by bytes across inputs. */
typedef struct vref {
    const fds_sfield *f;
    uint32_t in, v;
} vref;

static int vref_cmp(const void *a, const void *b)
{
    const vref *x = a, *y = b;
    uint64_t lx, ly;
    const char *px = fds__val_str(x->f, x->v, &lx);
    const char *py = fds__val_str(y->f, y->v, &ly);
    return bytes_cmp(px, (size_t)lx, py, (size_t)ly);
}

/*
 * The value ids of text field k (sidx_format.h), after its presence
 * bitset: the values of the inputs' tables that live docs hold, ranked by
 * bytes -- all of them when every input's table is complete (or the input
 * has no long value) and they repeat (FDS_SIDX_VALS_DENSE), else those two
 * live docs hold -- as a column of ids (the table's offset first) and the
 * table.  Sets FDS_SIDX_F_VALUES and *bits (the column's width) unless no
 * input has a long value.  With complete inputs this is what the writer
 * writes for the same live docs; a long value no input gave an id (held
 * once in each of two sparse tables) has none after the merge either.
 */
static int write_values(merger *g, size_t k, unsigned *bits)
{
    mfield *mf = &g->fs[k];
    uint32_t md = g->max_doc;
    uint32_t **cnt = calloc(g->nin, sizeof *cnt);
    size_t nr = 0;
    bool complete = true, any = false;
    int rc = cnt ? 0 : FDS_ENOMEM;
    for (unsigned i = 0; i < g->nin && !rc; i++) {
        const fds_sfield *f = mf->in[i];
        if (!f || !(f->flags & FDS_SIDX_F_VALUES))
            continue; /* no long value */
        any = true;
        complete &= f->vcomplete;
        if (!f->nvals)
            continue;
        if (!(cnt[i] = calloc(f->nvals, sizeof **cnt))) {
            rc = FDS_ENOMEM;
            break;
        }
        for (uint32_t d = 0; d < g->in[i].s->max_doc; d++) {
            uint32_t v = in_live(&g->in[i], d) ? fds__val_id(f, d)
                                               : FDS_SIDX_NO_ORD;
            if (v != FDS_SIDX_NO_ORD && !cnt[i][v]++)
                nr++;
        }
    }
    *bits = 0;
    vref *r = rc || !nr ? NULL : malloc(nr * sizeof *r);
    if (!rc && nr && !r)
        rc = FDS_ENOMEM;
    size_t n = 0;
    for (unsigned i = 0; i < g->nin && r; i++)
        for (uint32_t v = 0; cnt[i] && v < mf->in[i]->nvals; v++)
            if (cnt[i][v])
                r[n++] = (vref){mf->in[i], i, v};
    if (r)
        qsort(r, n, sizeof *r, vref_cmp);
    /* equal strings are neighbours: a group per string (its first
     * element's gd, the group's live docs; 0 elsewhere) */
    uint64_t docs = 0, *gd = r ? calloc(n, sizeof *gd) : NULL;
    uint32_t distinct = 0;
    if (r && !gd)
        rc = FDS_ENOMEM;
    for (size_t a = 0, b; gd && a < n; a = b, distinct++) {
        for (b = a; b < n && (b == a || !vref_cmp(&r[a], &r[b])); b++)
            gd[a] += cnt[r[b].in][r[b].v];
        docs += gd[a];
    }
    bool dense = complete && FDS_SIDX_VALS_DENSE(distinct, docs);
    uint64_t min = dense ? 1 : 2;
    if (rc || !any || (complete && !docs)) { /* no live doc has one */
        for (unsigned i = 0; cnt && i < g->nin; i++)
            free(cnt[i]);
        free(cnt);
        free(r);
        free(gd);
        return rc;
    }
    /* each group's rank + 1 in place of each input's count (0: no id) */
    uint32_t nv = 0;
    uint64_t total = 0;
    for (size_t a = 0, b; a < n; a = b) {
        uint32_t id = gd[a] >= min ? nv + 1 : 0;
        for (b = a; b < n && (b == a || !gd[b]); b++)
            cnt[r[b].in][r[b].v] = id;
        if (id) { /* one of the group stands for it in the table */
            uint64_t len;
            fds__val_str(r[a].f, r[a].v, &len);
            total += len;
            r[nv++] = r[a];
        }
    }
    free(gd);
    while (*bits < 32 && ((uint64_t)1 << *bits) <= nv)
        (*bits)++;
    size_t cl = 8 + (size_t)FDS_SIDX_ORD_BYTES(md, *bits);
    uint8_t *col = calloc(cl, 1);
    if (!col)
        rc = FDS_ENOMEM;
    for (mit it = {0}; !rc && *bits && mit_next(g, &it);) {
        const fds_sfield *f = mf->in[it.i];
        uint32_t v = f && cnt[it.i] ? fds__val_id(f, it.d) : FDS_SIDX_NO_ORD;
        if (v != FDS_SIDX_NO_ORD && cnt[it.i][v])
            fds__bits_put(col + 8, (uint64_t)in_doc(&g->in[it.i], it.d) * *bits,
                          *bits, cnt[it.i][v]);
    }
    if (!rc) {
        uint64_t at = (g->o.pos + cl + 7) & ~(uint64_t)7;
        fds__put_u64(col, at);
        mo_put(&g->o, col, cl);
        mo_align(&g->o);
        mo_u32(&g->o, nv);
        mo_u32(&g->o, dense ? FDS_SIDX_VALS_COMPLETE : 0);
        uint8_t b8[8];
        uint64_t off = 0;
        for (uint32_t x = 0; x <= nv; x++) {
            uint64_t len = 0;
            if (x < nv)
                fds__val_str(r[x].f, r[x].v, &len);
            fds__put_u64(b8, x < nv ? off : total);
            mo_put(&g->o, b8, 8);
            off += len;
        }
        for (uint32_t x = 0; x < nv; x++) {
            uint64_t len;
            const char *p = fds__val_str(r[x].f, r[x].v, &len);
            mo_put(&g->o, p, (size_t)len);
        }
        mf->flags |= FDS_SIDX_F_VALUES;
    }
    free(col);
    for (unsigned i = 0; cnt && i < g->nin; i++)
        free(cnt[i]);
    free(cnt);
    free(r);
    return rc;
}

/* Norms (text), presence bitset and column of field k, in output doc
 * order; counts the docs with terms into *doc_count. */
static int write_columns(merger *g, size_t k, uint32_t *const *ordmap,
                         uint32_t nt, uint64_t *norms_off, uint64_t *col_off,
                         unsigned *ord_bits, unsigned *num_bits,
                         uint32_t *doc_count)
{
    mfield *mf = &g->fs[k];
    uint32_t md = g->max_doc;
    *doc_count = 0;
    *norms_off = 0;
    *ord_bits = *num_bits = 0;
    if (mf->kind == FDS_FT_TEXT) {
        mo_align(&g->o);
        *norms_off = g->o.pos;
        for (mit it = {0}; mit_next(g, &it);) {
            const fds_sfield *f = mf->in[it.i];
            uint8_t nb = f && f->norms ? f->norms[it.d] : 0;
            *doc_count += nb != 0;
            mo_put(&g->o, &nb, 1);
        }
    }
    mo_align(&g->o);
    *col_off = g->o.pos;
    size_t words = ((size_t)md + 63) / 64;
    uint8_t *pres = calloc(words ? words : 1, 8);
    if (!pres)
        return FDS_ENOMEM;
    int64_t lo = 0, hi = 0;
    bool first = true;
    for (mit it = {0}; mit_next(g, &it);) {
        const fds_sfield *f = mf->in[it.i];
        if (!f || !fds__bit(f->present, it.d))
            continue;
        uint32_t o = in_doc(&g->in[it.i], it.d);
        pres[o >> 3] |= (uint8_t)(1u << (o & 7));
        if (f->flags & FDS_SIDX_F_NUMCOL && mf->kind != FDS_FT_DOUBLE) {
            int64_t v = fds__col_i64(f, it.d);
            lo = first || v < lo ? v : lo;
            hi = first || v > hi ? v : hi;
            first = false;
        }
    }
    mo_put(&g->o, pres, words * 8); /* u64 words LSB first = the byte order */
    uint8_t *col = NULL;
    size_t cl = 0;
    int rc = 0;
    if (mf->kind == FDS_FT_KEYWORD) {
        while (*ord_bits < 32 && ((uint64_t)1 << *ord_bits) <= nt)
            (*ord_bits)++;
        cl = (size_t)FDS_SIDX_ORD_BYTES(md, *ord_bits);
        if (!(col = calloc(cl, 1)))
            rc = FDS_ENOMEM;
        for (mit it = {0}; !rc && mit_next(g, &it);) {
            const fds_sfield *f = mf->in[it.i];
            uint32_t o = f ? fds__col_ord(f, it.d) : FDS_SIDX_NO_ORD;
            if (o == FDS_SIDX_NO_ORD)
                continue;
            (*doc_count)++;
            if (*ord_bits)
                fds__bits_put(col, (uint64_t)in_doc(&g->in[it.i], it.d) * *ord_bits,
                              *ord_bits, (uint64_t)ordmap[it.i][o] + 1);
        }
    } else if (mf->kind != FDS_FT_TEXT) {
        uint64_t span = (uint64_t)hi - (uint64_t)lo;
        *num_bits = mf->kind == FDS_FT_DOUBLE ? FDS_SIDX_NUM_RAW : fds__bit_width(span);
        if (*num_bits > FDS_SIDX_NUM_PACK_MAX)
            *num_bits = FDS_SIDX_NUM_RAW;
        bool raw = *num_bits == FDS_SIDX_NUM_RAW;
        cl = raw ? (size_t)md * 8 : 8 + (size_t)FDS_SIDX_ORD_BYTES(md, *num_bits);
        if (!(col = calloc(cl, 1)))
            rc = FDS_ENOMEM;
        if (!rc && !raw)
            fds__put_u64(col, (uint64_t)lo);
        for (mit it = {0}; !rc && mit_next(g, &it);) {
            const fds_sfield *f = mf->in[it.i];
            if (!f || !fds__bit(f->present, it.d))
                continue;
            uint32_t o = in_doc(&g->in[it.i], it.d);
            uint64_t v = mf->kind == FDS_FT_DOUBLE
                             ? fds__get_u64(f->col + (size_t)it.d * 8)
                             : (uint64_t)fds__col_i64(f, it.d);
            if (raw)
                fds__put_u64(col + (size_t)o * 8, v);
            else if (*num_bits)
                fds__bits_put(col + 8, (uint64_t)o * *num_bits, *num_bits,
                              v - (uint64_t)lo);
        }
    }
    if (!rc && col)
        mo_put(&g->o, col, cl);
    free(col);
    free(pres);
    if (!rc && mf->kind == FDS_FT_TEXT && (mf->flags & FDS_SIDX_F_SINGLE) &&
        mf->vals_ok)
        rc = write_values(g, k, ord_bits);
    return rc;
}

static int write_field(merger *g, size_t k)
{
    mfield *mf = &g->fs[k];
    mo_align(&g->o);
    uint64_t name_off = g->o.pos;
    mo_put(&g->o, mf->name, mf->name_len);
    uint32_t **ordmap = NULL;
    int rc = 0;
    if (mf->kind == FDS_FT_KEYWORD) {
        if (!(ordmap = calloc(g->nin, sizeof *ordmap)))
            return FDS_ENOMEM;
        for (unsigned i = 0; i < g->nin && !rc; i++)
            if (mf->in[i] && mf->in[i]->nterms &&
                !(ordmap[i] = malloc((size_t)mf->in[i]->nterms * sizeof **ordmap)))
                rc = FDS_ENOMEM;
    }
    uint32_t nt = 0, doc_count = 0;
    uint64_t sum_ttf = 0, terms_off = 0, norms_off = 0, col_off = 0;
    unsigned ord_bits = 0, num_bits = 0;
    if (!rc)
        rc = write_terms(g, k, ordmap, &nt, &sum_ttf, &terms_off);
    if (!rc)
        rc = write_columns(g, k, ordmap, nt, &norms_off, &col_off, &ord_bits,
                           &num_bits, &doc_count);
    for (unsigned i = 0; ordmap && i < g->nin; i++)
        free(ordmap[i]);
    free(ordmap);
    for (unsigned i = 0; i < g->nin; i++) {
        free(mf->so[i]);
        mf->so[i] = NULL;
    }
    drop_input_pages(g);
    if (rc)
        return rc;
    uint8_t *fd = g->hdr + FDS_SIDX_HEADER_LEN + k * FDS_SIDX_FIELD_LEN;
    fds__put_u64(fd, name_off);
    fds__put_u32(fd + 8, mf->name_len);
    fd[12] = (uint8_t)mf->kind;
    fd[13] = (uint8_t)mf->flags;
    fd[14] = (uint8_t)ord_bits;
    fd[15] = (uint8_t)num_bits;
    fds__put_u32(fd + 16, doc_count);
    fds__put_u32(fd + 20, nt);
    fds__put_u64(fd + 24, sum_ttf);
    fds__put_u64(fd + 32, terms_off);
    fds__put_u64(fd + 40, 0);
    fds__put_u64(fd + 48, norms_off);
    fds__put_u64(fd + 56, col_off);
    return 0;
}

/* The _id table: offsets and id bytes in output doc order, by_id from the
 * inputs' sorted lists merged. */
static int write_ids(merger *g, uint64_t *ids_off)
{
    mo_align(&g->o);
    *ids_off = g->o.pos;
    uint32_t off = 0;
    mo_u32(&g->o, 0);
    for (mit it = {0}; mit_next(g, &it);) {
        size_t l;
        fds_sidx_doc_id(g->in[it.i].s, it.d, &l);
        off += (uint32_t)l;
        mo_u32(&g->o, off);
    }
    uint32_t *at = calloc(g->nin, sizeof *at);
    if (!at)
        return FDS_ENOMEM;
    for (;;) { /* few inputs: a linear pick is enough */
        int best = -1;
        const char *bs = NULL;
        size_t bl = 0;
        for (unsigned i = 0; i < g->nin; i++) {
            const min *m = &g->in[i];
            while (at[i] < m->s->max_doc &&
                   !in_live(m, fds__get_u32(m->s->byid + (size_t)at[i] * 4)))
                at[i]++;
            if (at[i] == m->s->max_doc)
                continue;
            size_t l;
            const char *s = fds_sidx_doc_id(
                m->s, fds__get_u32(m->s->byid + (size_t)at[i] * 4), &l);
            if (best < 0 || bytes_cmp(s, l, bs, bl) < 0) {
                best = (int)i;
                bs = s;
                bl = l;
            }
        }
        if (best < 0)
            break;
        const min *m = &g->in[best];
        mo_u32(&g->o, in_doc(m, fds__get_u32(m->s->byid + (size_t)at[best]++ * 4)));
    }
    free(at);
    mo_align(&g->o);
    for (mit it = {0}; mit_next(g, &it);) {
        size_t l;
        const char *s = fds_sidx_doc_id(g->in[it.i].s, it.d, &l);
        mo_put(&g->o, s, l);
    }
    mo_align(&g->o);
    drop_input_pages(g);
    return 0;
}

/* Header at 0, then the checksum of [0, pos) read back, then the footer. */
static int finish_file(merger *g, uint64_t ids_off)
{
    mo_flush(&g->o);
    if (g->o.rc)
        return g->o.rc;
    uint8_t *h = g->hdr;
    memcpy(h, FDS_SIDX_MAGIC, 8);
    fds__put_u32(h + 8, FDS_SIDX_VERSION);
    fds__put_u32(h + 12, g->max_doc);
    fds__put_u32(h + 16, (uint32_t)g->nf);
    fds__put_u32(h + 20, FDS_SIDX_HEADER_LEN);
    fds__put_u64(h + 24, FDS_SIDX_HEADER_LEN);
    fds__put_u64(h + 32, ids_off);
    fds__put_u64(h + 40, g->o.pos + FDS_SIDX_FOOTER_LEN);
    fds__put_u64(h + 48, g->pos_dir_off);
    size_t hl = FDS_SIDX_HEADER_LEN + g->nf * FDS_SIDX_FIELD_LEN;
    if (pwrite(g->o.fd, h, hl, 0) != (ssize_t)hl) {
        g->o.eno = errno;
        return FDS_EIO;
    }
    uint8_t *chunk = malloc(MERGE_CRC_CHUNK);
    if (!chunk)
        return FDS_ENOMEM;
    uint32_t crc = 0;
    for (uint64_t at = 0; at < g->o.pos;) {
        size_t want = g->o.pos - at < MERGE_CRC_CHUNK ? (size_t)(g->o.pos - at)
                                                      : MERGE_CRC_CHUNK;
        ssize_t k = pread(g->o.fd, chunk, want, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            g->o.eno = k < 0 ? errno : EIO;
            free(chunk);
            return FDS_EIO;
        }
        crc = fds_crc32c(crc, chunk, (size_t)k);
        at += (uint64_t)k;
    }
    free(chunk);
    uint8_t foot[FDS_SIDX_FOOTER_LEN];
    fds__put_u32(foot, crc);
    memcpy(foot + 4, FDS_SIDX_END_MAGIC, 4);
    mo_put(&g->o, foot, sizeof foot);
    mo_flush(&g->o);
    if (!g->o.rc && fsync(g->o.fd) != 0) {
        g->o.rc = FDS_EIO;
        g->o.eno = errno;
    }
    return g->o.rc;
}

static void merger_free(merger *g)
{
    for (size_t k = 0; g->fs && k < g->nf; k++) {
        for (unsigned i = 0; g->fs[k].so && i < g->nin; i++)
            free(g->fs[k].so[i]);
        free(g->fs[k].so);
        free(g->fs[k].in);
    }
    free(g->fs);
    for (unsigned i = 0; g->in && i < g->nin; i++)
        free(g->in[i].map);
    free(g->in);
    free(g->o.buf);
    free(g->hdr);
    free(g->heap);
    free(g->grp);
    free(g->pbuf);
    free(g->skips);
    free(g->ents);
    free(g->posb);
    free(g->posblk);
    free(g->pos_dir);
}

/* Output doc ids: inputs in order, their live docs in order. */
static int map_docs(merger *g, const fds_sidx *const *in,
                    const uint8_t *const *live)
{
    uint64_t next = 0;
    for (unsigned i = 0; i < g->nin; i++) {
        min *m = &g->in[i];
        m->s = in[i];
        m->live = live ? live[i] : NULL;
        m->base = (uint32_t)next;
        if (m->live) {
            if (!(m->map = malloc(((size_t)m->s->max_doc + 1) * sizeof *m->map)))
                return FDS_ENOMEM;
            for (uint32_t d = 0; d < m->s->max_doc; d++)
                m->map[d] = fds__bit(m->live, d) ? (uint32_t)(next + m->nlive++)
                                                  : UINT32_MAX;
        } else {
            m->nlive = m->s->max_doc;
        }
        next += m->nlive;
        if (next > UINT32_MAX - 1)
            return FDS_ETOOBIG;
    }
    g->max_doc = (uint32_t)next;
    return 0;
}

int fds_sidx_merge(const fds_sidx *const *in, const uint8_t *const *live,
                   unsigned n, const char *path, fds_err *err)
{
    merger g = {.nin = n};
    g.o.fd = -1;
    int rc = 0;
    g.in = calloc(n ? n : 1, sizeof *g.in);
    if (!g.in)
        rc = FDS_ENOMEM;
    if (!rc)
        rc = map_docs(&g, in, live);
    if (!rc)
        rc = collect_fields(&g);
    size_t nheap = g.nf * n;
    if (!rc && (!(g.heap = malloc((nheap ? nheap : 1) * sizeof *g.heap)) ||
                !(g.grp = malloc((n ? n : 1) * sizeof *g.grp)) ||
                !(g.o.buf = malloc(MERGE_OUT_BUF)) ||
                !(g.pos_dir = calloc(g.nf ? g.nf : 1, sizeof *g.pos_dir)) ||
                !(g.hdr = calloc(1, FDS_SIDX_HEADER_LEN +
                                        g.nf * FDS_SIDX_FIELD_LEN))))
        rc = FDS_ENOMEM;
    if (!rc) {
        g.o.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (g.o.fd < 0) {
            rc = FDS_EIO;
            g.o.eno = errno;
        }
    }
    uint64_t ids_off = 0;
    if (!rc) {
        /* header and descriptors are written last, at offset 0 */
        size_t hl = FDS_SIDX_HEADER_LEN + g.nf * FDS_SIDX_FIELD_LEN;
        if (lseek(g.o.fd, (off_t)hl, SEEK_SET) != (off_t)hl) {
            rc = FDS_EIO;
            g.o.eno = errno;
        }
        g.o.pos = hl;
    }
    if (!rc) {
        write_strings(&g);
        drop_input_pages(&g);
    }
    for (size_t k = 0; !rc && !g.o.rc && k < g.nf; k++)
        rc = write_field(&g, k);
    bool any_pos = false;
    for (size_t k = 0; k < g.nf; k++)
        any_pos |= g.pos_dir && g.pos_dir[k];
    if (!rc && !g.o.rc && any_pos) { /* the directory, as the writer puts it */
        mo_align(&g.o);
        g.pos_dir_off = g.o.pos;
        for (size_t k = 0; k < g.nf; k++) {
            uint8_t b8[8];
            fds__put_u64(b8, g.pos_dir[k]);
            mo_put(&g.o, b8, 8);
        }
    }
    if (!rc && !g.o.rc)
        rc = write_ids(&g, &ids_off);
    if (!rc && !g.o.rc)
        rc = finish_file(&g, ids_off);
    if (!rc)
        rc = g.o.rc;
    int eno = g.o.eno;
    if (g.o.fd >= 0 && close(g.o.fd) != 0 && !rc) {
        rc = FDS_EIO;
        eno = errno;
    }
    merger_free(&g);
    if (!rc)
        return 0;
    unlink(path);
    if (rc == FDS_EIO)
        return fds_err_setk(err, rc, FDS_KIND_IO, "cannot write %s: %s", path,
                            strerror(eno));
    if (rc == FDS_ECORRUPT)
        return fds_err_setk(err, rc, FDS_KIND_CORRUPT,
                            "merging into %s: an input's postings do not decode, "
                            "or a field has different kinds in two inputs", path);
    if (rc == FDS_ETOOBIG)
        return fds_err_setk(err, rc, FDS_KIND_ILLEGAL_STATE,
                            "merging into %s: more than 2^32 - 1 documents", path);
    return fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory merging into %s",
                        path);
}
