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
 *
 * This file drives the merge: the inputs' doc-id maps, the union of their
 * fields, field after field (terms: sidx_merge_terms.c, postings:
 * sidx_merge_postings.c, columns: sidx_merge_columns.c), the _id table,
 * the header, the checksum and the footer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "index/sidx_merge_int.h"

/* Bytes read back at a time for the footer checksum. */
#define MERGE_CRC_CHUNK (1u << 20)


/* ---- the merge ---------------------------------------------------------------- */

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
                (!best || fds__bytes_cmp(s->fields[at[i]].name, s->fields[at[i]].name_len,
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
                !fds__bytes_cmp(s->fields[at[i]].name, s->fields[at[i]].name_len,
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
        rc = fds__merge_write_terms(g, k, ordmap, &nt, &sum_ttf, &terms_off);
    if (!rc)
        rc = fds__merge_write_columns(g, k, ordmap, nt, &norms_off, &col_off, &ord_bits,
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
            if (best < 0 || fds__bytes_cmp(s, l, bs, bl) < 0) {
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
        fds__merge_write_strings(&g);
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
