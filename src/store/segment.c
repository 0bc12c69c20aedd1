/*
 * segment.c: the stored-fields file of a segment (Lucene's .fdt + .fdx in
 * one file), written once at refresh or merge, then mapped read-only.
 *
 * Documents are appended in doc-id order to blocks; a block is closed when
 * its raw size reaches index.codec.block_size or it holds
 * max_docs_per_block docs (DESIGN.md §3); a document larger than a block
 * gets a block of its own.  Blocks are self-describing (codec.c gives their
 * layout and checksum).
 *
 * File layout (all integers little-endian):
 *
 *   offset 0            magic "FDSFDT02" (8 bytes; "FDSFDT01" files had a
 *                       CRC-32 (zlib) footer checksum and are not read)
 *   8                   block 0, block 1, ... (as fds_block_encode wrote them)
 *   index_off           block index, nblocks entries of 16 bytes:
 *                         +0 u64 file offset of the block
 *                         +8 u32 doc base (first doc id of the block)
 *                         +12 u32 encoded length of the block
 *   index_off+16*nb     versions: a packed column (_version of each doc)
 *   then                seq_nos:  a packed column (_seq_no of each doc)
 *                       packed column: +0 i64 minimum, +8 u32 width w
 *                       (0, 1, 2, 4 or 8), +12 max_doc values of w bytes,
 *                       each the doc's value minus the minimum (w = 0:
 *                       every doc has the minimum, the usual _version 1)
 *   end - 64            footer:
 *                         +0  u64 index_off
 *                         +8  u32 nblocks
 *                         +12 u32 max_doc
 *                         +16 u64 raw bytes of all sources
 *                         +24 u32 codec id
 *                         +28 u32 dictionary id (0: none)
 *                         +32 u32 zstd level the blocks were written with
 *                         +36 u32 block size (index.codec.block_size)
 *                         +40 u32 max docs per block
 *                         +44 u32 blocks copied unchanged from older
 *                             segments by a merge (informational)
 *                         +48 u32 CRC-32C (fds_crc32c, src/common/fds_hash.h:
 *                             the checksum of every fieldstore file) of
 *                             [index_off, end-64) and footer bytes +0..+47
 *                         +52 u32 reserved, 0
 *                         +56 magic "FDSEND01"
 *
 * Each block names its own format version (codec.c: version 2 is written,
 * version 1 blocks of older segments are read); the segment's is that of
 * its first block, and a merge copies only blocks of the version written
 * today, so a force-merge rewrites older segments in the current format.
 *
 * The block index is read into nothing: doc id -> block is a binary search
 * over the mapped entries, like Lucene's FieldsIndexReader.  A merge whose
 * inputs have no deleted docs and were written with the current codec,
 * level, block size and dictionary copies their blocks byte for byte (only
 * the doc base in each block header is rewritten, fds_block_rebase), as
 * Lucene's stored-fields merge copies "clean" chunks.
 *
 * Also the live-docs bitsets (fds__live) that go with a published segment
 * (which of its docs are not deleted).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "fds_hash.h"
#include "store_int.h"

static void id_bloom_build(fds__seg *sg);

#define FDT_MAGIC "FDSFDT02"
#define FDT_END_MAGIC "FDSEND01"
#define FDT_FOOTER 64
#define FDT_HEADER 8

/* ---- live-docs bitsets (fds__live) ---- */

void fds__live_unref(fds__live *l)
{
    if (l && atomic_fetch_sub(&l->refs, 1) == 1)
        free(l);
}

fds__live *fds__live_copy(const fds__live *old, uint32_t max_doc)
{
    size_t nb = (max_doc + 7) / 8;
    fds__live *l = malloc(sizeof *l + nb + 1);
    if (!l)
        return NULL;
    atomic_init(&l->refs, 1);
    l->max_doc = max_doc;
    if (old) {
        memcpy(l->bits, old->bits, nb);
        l->del_count = old->del_count;
    } else {
        memset(l->bits, 0xFF, nb);
        l->del_count = 0;
    }
    return l;
}

/* ---- the segment ---- */

char *fds__seg_path(const fds_index *ix, uint64_t gen, const char *ext)
{
    size_t n = strlen(ix->dir) + 64;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/seg_%llu.%s", ix->dir, (unsigned long long)gen, ext);
    return p;
}

/* A growable byte buffer for the tail sections. */
typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

static int bytes_reserve(bytes *b, size_t more)
{
    if (b->n + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more)
        cap *= 2;
    uint8_t *q = realloc(b->p, cap);
    if (!q)
        return FDS_ENOMEM;
    b->p = q;
    b->cap = cap;
    return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return FDS_EIO;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Append one encoded block to the file and the block index. */
static int put_block(int fd, bytes *tail, uint64_t *off, const uint8_t *blk,
                     size_t len, uint32_t doc_base)
{
    int rc = write_all(fd, blk, len);
    if (rc)
        return rc;
    if ((rc = bytes_reserve(tail, 16)))
        return rc;
    fds__put_u64(tail->p + tail->n, *off);
    fds__put_u32(tail->p + tail->n + 8, doc_base);
    fds__put_u32(tail->p + tail->n + 12, (uint32_t)len);
    tail->n += 16;
    *off += len;
    return 0;
}

/* Append the packed column of the docs' versions (or, with `seqnos`, their
 * seq_nos) to `tail`, which has room for 12 + 8 * n more bytes. */
static void put_column(bytes *tail, const fds__bufdoc *docs, size_t n,
                       bool seqnos)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t k = 0; k < n; k++) {
        int64_t v = seqnos ? docs[k].seq_no : docs[k].version;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (n == 0)
        lo = hi = 0;
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    uint32_t w = span == 0 ? 0 : span <= 0xFF ? 1 : span <= 0xFFFF ? 2
               : span <= 0xFFFFFFFFull ? 4 : 8;
    fds__put_u64(tail->p + tail->n, (uint64_t)lo);
    fds__put_u32(tail->p + tail->n + 8, w);
    tail->n += 12;
    for (size_t k = 0; k < n && w; k++, tail->n += w) {
        uint64_t d = (uint64_t)(seqnos ? docs[k].seq_no : docs[k].version) -
                     (uint64_t)lo;
        for (uint32_t b = 0; b < w; b++)
            tail->p[tail->n + b] = (uint8_t)(d >> (8 * b));
    }
}

/* Append the blocks of the ncopy segments of `copy` to the .fdt being
 * written on fd, each rebased to its doc base in the new segment
 * (fds_block_rebase), their pages dropped from the resident set as the
 * copy goes on (FDS__DROP_CHUNK); *nblocks, *copied and *raw_total grow.
 * 0, or an error: *io set for a failed write (errno tells why, err not
 * filled), else err filled or FDS_ENOMEM. */
static int copy_blocks(fds_index *ix, int fd, fds__seg *const *copy,
                       unsigned ncopy, bytes *tail, bytes *enc, uint64_t *off,
                       uint32_t *nblocks, uint32_t *copied,
                       uint64_t *raw_total, bool *io, fds_err *err)
{
    int rc;
    uint64_t dropped = 0; /* pages of the copied input left resident below */
    uint32_t base = 0;
    for (unsigned c = 0; c < ncopy; c++) {
        const fds__seg *sg = copy[c];
        for (uint32_t b = 0; b < sg->nblocks; b++) {
            const uint8_t *e = sg->blk_index + (size_t)b * FDT_BLKIDX_ENTRY;
            uint32_t len = fds__get_u32(e + 12);
            uint32_t sbase = fds__get_u32(e + 8);
            enc->n = 0;
            if ((rc = bytes_reserve(enc, len)))
                return rc;
            memcpy(enc->p, sg->map + fds__get_u64(e), len);
            if ((rc = fds_block_rebase(enc->p, len, base + sbase)))
                return fds_err_setk(err, rc, FDS_KIND_CORRUPT,
                                    "[%s] segment [%s] block [%u]: cannot "
                                    "copy: %s", ix->name, sg->name, b,
                                    fds_strerror(rc));
            if ((rc = put_block(fd, tail, off, enc->p, len, base + sbase))) {
                *io = true;
                return rc;
            }
            (*nblocks)++;
            (*copied)++;
            if (fds__get_u64(e) >= dropped + FDS__DROP_CHUNK) {
                fds__drop_pages(sg->map, dropped, fds__get_u64(e));
                dropped = fds__get_u64(e);
            }
        }
        fds__drop_pages(sg->map, 0, sg->map_len);
        dropped = 0;
        base += sg->max_doc;
        *raw_total += sg->raw_bytes;
    }
    return 0;
}

/* Append the 64-byte footer (layout at the top of this file) to `tail`,
 * which has room for it; its checksum covers tail's bytes so far. */
static void put_footer(bytes *tail, uint64_t index_off, uint32_t nblocks,
                       size_t n, uint64_t raw_total, const fds_codec_params *p,
                       const fds_dict *dict, uint32_t copied)
{
    uint8_t *f = tail->p + tail->n;
    fds__put_u64(f, index_off);
    fds__put_u32(f + 8, nblocks);
    fds__put_u32(f + 12, (uint32_t)n);
    fds__put_u64(f + 16, raw_total);
    fds__put_u32(f + 24, (uint32_t)p->codec);
    fds__put_u32(f + 28, dict ? fds_dict_id(dict) : 0);
    fds__put_u32(f + 32, (uint32_t)p->level);
    fds__put_u32(f + 36, p->block_size);
    fds__put_u32(f + 40, p->max_docs_per_block);
    fds__put_u32(f + 44, copied);
    fds__put_u32(f + 48, fds_crc32c(0, tail->p, tail->n + 48));
    fds__put_u32(f + 52, 0);
    memcpy(f + 56, FDT_END_MAGIC, 8);
    tail->n += FDT_FOOTER;
}

int fds__seg_write(fds_index *ix, uint64_t gen, const fds__bufdoc *docs,
                   size_t n, const fds__doc_loader *ld,
                   const fds_codec_params *p, const fds_dict *dict,
                   fds__seg *const *copy, unsigned ncopy, fds_err *err)
{
    char *path = fds__seg_path(ix, gen, "fdt");
    if (!path)
        return FDS_ENOMEM;
    int rc = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                          "cannot create [%s]: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    bytes tail = {0}, raw = {0}, enc = {0};
    uint32_t *lens = malloc(sizeof(uint32_t) * (p->max_docs_per_block + 1));
    uint64_t off = FDT_HEADER, raw_total = 0;
    uint32_t nblocks = 0;
    if (!ctx || !lens) {
        rc = FDS_ENOMEM;
        goto out;
    }
    if ((rc = write_all(fd, FDT_MAGIC, FDT_HEADER)))
        goto io;

    uint32_t copied = 0;
    size_t i = n; /* with copy sources, every block comes from them */
    bool io = false;
    if (copy &&
        (rc = copy_blocks(ix, fd, copy, ncopy, &tail, &enc, &off, &nblocks,
                          &copied, &raw_total, &io, err)))
        goto fail;
    if (!copy)
        i = 0;
    while (i < n) {
        /* cut one block */
        size_t first = i;
        raw.n = 0;
        uint32_t nd = 0;
        while (i < n && nd < p->max_docs_per_block &&
               (nd == 0 || raw.n < p->block_size)) {
            const uint8_t *src;
            size_t len;
            if ((rc = fds__doc_src(docs, i, ld, &src, &len, err)) ||
                (rc = bytes_reserve(&raw, len)))
                goto out;
            if (len) /* an empty record: raw.p may still be NULL */
                memcpy(raw.p + raw.n, src, len);
            raw.n += len;
            lens[nd++] = (uint32_t)len;
            i++;
        }
        size_t bound = fds_block_bound(p, raw.n, nd);
        enc.n = 0;
        if ((rc = bytes_reserve(&enc, bound)))
            goto out;
        size_t elen = 0;
        rc = fds_block_encode(ctx, p, dict, first, raw.p ? raw.p : (const uint8_t *)"",
                              lens, nd, enc.p, enc.cap, &elen);
        if (rc) {
            fds_err_setk(err, rc, FDS_KIND_CODEC,
                         "[%s] cannot encode block %u of segment seg_%llu: %s",
                         ix->name, nblocks, (unsigned long long)gen,
                         fds_strerror(rc));
            goto out;
        }
        if ((rc = put_block(fd, &tail, &off, enc.p, elen, (uint32_t)first)))
            goto io;
        raw_total += raw.n;
        nblocks++;
    }
    if ((rc = bytes_reserve(&tail, 2 * (12 + 8 * n) + FDT_FOOTER)))
        goto out;
    put_column(&tail, docs, n, false);
    put_column(&tail, docs, n, true);
    put_footer(&tail, off, nblocks, n, raw_total, p, dict, copied);
    if ((rc = write_all(fd, tail.p, tail.n)))
        goto io;
    if (fsync(fd) != 0)
        goto io;
    goto out;
fail:
    if (!io)
        goto out;
io:
    rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO, "cannot write [%s]: %s",
                      path, strerror(errno));
out:
    close(fd);
    if (rc)
        unlink(path);
    free(path);
    free(tail.p);
    free(raw.p);
    free(enc.p);
    free(lens);
    return rc;
}

int fds__seg_copy_redict(fds_index *to, const fds__seg *in, uint64_t gen,
                         uint32_t dict_id, fds_err *err)
{
    char *path = fds__seg_path(to, gen, "fdt");
    if (!path)
        return FDS_ENOMEM;
    int rc = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO, "cannot create [%s]: %s", path,
                          strerror(errno));
        free(path);
        return rc;
    }
    const uint8_t *f = in->map + in->map_len - FDT_FOOTER;
    uint64_t index_off = fds__get_u64(f), at = FDT_HEADER;
    bytes blk = {0};
    rc = write_all(fd, in->map, FDT_HEADER) ? FDS_EIO : 0;
    for (uint32_t b = 0; !rc && b < in->nblocks; b++) {
        const uint8_t *e = in->blk_index + (size_t)b * FDT_BLKIDX_ENTRY;
        uint64_t off = fds__get_u64(e);
        uint32_t len = fds__get_u32(e + 12);
        if (off != at || off + len > index_off) {
            rc = FDS_ECORRUPT;
            break;
        }
        if (!(rc = bytes_reserve(&blk, len))) {
            memcpy(blk.p, in->map + off, len);
            rc = fds_block_set_dict(blk.p, len, dict_id);
        }
        if (!rc && write_all(fd, blk.p, len))
            rc = FDS_EIO;
        at += len;
        if (off >= FDS__DROP_CHUNK && b % 64 == 0)
            fds__drop_pages(in->map, 0, off);
    }
    /* the tail as it is, but the footer's dictionary id and checksum */
    size_t tail = in->map_len - (size_t)index_off;
    if (!rc && at != index_off)
        rc = FDS_ECORRUPT;
    if (!rc && !(rc = bytes_reserve(&blk, tail))) {
        memcpy(blk.p, in->map + index_off, tail);
        uint8_t *nf = blk.p + tail - FDT_FOOTER;
        fds__put_u32(nf + 28, dict_id);
        fds__put_u32(nf + 48, fds_crc32c(0, blk.p, tail - FDT_FOOTER + 48));
        if (write_all(fd, blk.p, tail) || fsync(fd) != 0)
            rc = FDS_EIO;
    }
    fds__drop_pages(in->map, 0, in->map_len);
    if (rc == FDS_EIO)
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO, "cannot write [%s]: %s", path,
                          strerror(errno));
    else if (rc)
        rc = fds_err_setk(err, rc, rc == FDS_ENOMEM ? FDS_KIND_INTERNAL : FDS_KIND_CORRUPT,
                          "[%s] segment [%s]: %s", to->name, in->name,
                          rc == FDS_ENOMEM ? "out of memory"
                                           : "damaged block or block index (a "
                                             "block of deleted documents that "
                                             "check-index left: force-merge "
                                             "the source first)");
    close(fd);
    if (rc)
        unlink(path);
    free(path);
    free(blk.p);
    return rc;
}

int fds__seg_open(fds_index *ix, int64_t row_id, uint64_t gen, fds__seg **out,
                  fds_err *err)
{
    fds__seg *sg = calloc(1, sizeof *sg);
    if (!sg)
        return FDS_ENOMEM;
    atomic_init(&sg->refs, 1);
    atomic_init(&sg->dropped, false);
    sg->id = row_id;
    sg->gen = gen;
    snprintf(sg->name, sizeof sg->name, "seg_%llu", (unsigned long long)gen);
    sg->fdt_path = fds__seg_path(ix, gen, "fdt");
    sg->tim_path = fds__seg_path(ix, gen, "tim");
    int rc = 0;
    if (!sg->fdt_path || !sg->tim_path) {
        rc = FDS_ENOMEM;
        goto fail;
    }
    int fd = open(sg->fdt_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                          "[%s] cannot open segment file [%s]: %s", ix->name,
                          sg->fdt_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        goto fail;
    }
    sg->map_len = (size_t)st.st_size;
    if (sg->map_len < FDT_HEADER + FDT_FOOTER) {
        close(fd);
        goto corrupt;
    }
    void *m = mmap(NULL, sg->map_len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                          "[%s] cannot map [%s]: %s", ix->name, sg->fdt_path,
                          strerror(errno));
        goto fail;
    }
    sg->map = m;
    const uint8_t *f = sg->map + sg->map_len - FDT_FOOTER;
    if (memcmp(sg->map, FDT_MAGIC, 8) || memcmp(f + 56, FDT_END_MAGIC, 8))
        goto corrupt;
    uint64_t index_off = fds__get_u64(f);
    sg->nblocks = fds__get_u32(f + 8);
    sg->max_doc = fds__get_u32(f + 12);
    sg->raw_bytes = fds__get_u64(f + 16);
    sg->codec = fds__get_u32(f + 24);
    sg->dict_id = fds__get_u32(f + 28);
    sg->level = fds__get_u32(f + 32);
    sg->block_size = fds__get_u32(f + 36);
    sg->max_docs_per_block = fds__get_u32(f + 40);
    sg->copied_blocks = fds__get_u32(f + 44);
    if (index_off < FDT_HEADER || index_off > sg->map_len - FDT_FOOTER)
        goto corrupt;
    /* the two packed columns follow the block index */
    uint64_t need = (uint64_t)sg->nblocks * FDT_BLKIDX_ENTRY;
    for (int col = 0; col < 2; col++) {
        if (index_off + need + 12 + FDT_FOOTER > sg->map_len)
            goto corrupt;
        uint32_t w = fds__get_u32(sg->map + index_off + need + 8);
        if (w != 0 && w != 1 && w != 2 && w != 4 && w != 8)
            goto corrupt;
        need += 12 + (uint64_t)w * sg->max_doc;
    }
    if (index_off + need + FDT_FOOTER != sg->map_len)
        goto corrupt;
    if (fds_crc32c(0, sg->map + index_off, (size_t)need + 48) !=
        fds__get_u32(f + 48))
        goto corrupt;
    sg->blk_index = sg->map + index_off;
    sg->versions = sg->blk_index + (size_t)sg->nblocks * FDT_BLKIDX_ENTRY;
    sg->seqnos = sg->versions + 12 +
                 (size_t)fds__get_u32(sg->versions + 8) * sg->max_doc;
    for (uint32_t b = 0; b < sg->nblocks; b++) {
        const uint8_t *e = sg->blk_index + (size_t)b * FDT_BLKIDX_ENTRY;
        uint64_t boff = fds__get_u64(e); /* off + len could wrap */
        if (boff < FDT_HEADER || boff > index_off ||
            fds__get_u32(e + 12) > index_off - boff)
            goto corrupt;
    }
    /* The blocks' format version, from the first block's header; a damaged
     * first block leaves it 0 (never copied by a merge) and fails only the
     * reads that touch it. */
    sg->block_format = 0;
    if (sg->nblocks > 0) {
        fds_block_info bi;
        const uint8_t *e = sg->blk_index;
        if (fds_block_info_read(sg->map + fds__get_u64(e), fds__get_u32(e + 12),
                                &bi) == 0)
            sg->block_format = bi.format_version;
    } else {
        sg->block_format = FDS_BLOCK_FORMAT_VERSION;
    }
    rc = fds_sidx_open(sg->tim_path, &sg->sidx, err);
    if (rc)
        goto fail;
    if (fds_sidx_max_doc(sg->sidx) != sg->max_doc) {
        rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "[%s] segment [%s]: inverted index has %u docs, "
                          "stored fields %u", ix->name, sg->name,
                          fds_sidx_max_doc(sg->sidx), sg->max_doc);
        goto fail;
    }
    sg->tim_bytes = fds_sidx_file_bytes(sg->sidx);
    id_bloom_build(sg);
    *out = sg;
    return 0;
corrupt:
    rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                      "[%s] segment [%s]: stored-fields file [%s] is damaged "
                      "(bad magic, size or checksum)",
                      ix->name, sg->name, sg->fdt_path);
fail:
    fds__err_relative(ix->st, err);
    fds__seg_unref(sg);
    return rc;
}

/* The k probe positions of an id: double hashing of one FNV-1a (Kirsch
 * and Mitzenmacher 2006, "Less hashing, same performance"). */
static void id_bloom_probes(const char *id, size_t len, uint64_t *h1,
                            uint64_t *h2)
{
    uint64_t h = fds_fnv1a64(id, len);
    *h1 = h;
    *h2 = (h >> 32 | h << 32) | 1;
}

/* sg->id_bloom from the ids of sg's .tim; none when out of memory. */
static void id_bloom_build(fds__seg *sg)
{
    uint64_t bits = 64;
    while (bits < (uint64_t)sg->max_doc * FDS__ID_BLOOM_BITS_PER_DOC)
        bits <<= 1;
    sg->id_bloom = calloc(bits / 64, sizeof *sg->id_bloom);
    if (!sg->id_bloom)
        return;
    sg->id_bloom_mask = bits - 1;
    for (uint32_t d = 0; d < sg->max_doc; d++) {
        size_t len;
        const char *id = fds_sidx_doc_id(sg->sidx, d, &len);
        uint64_t h1, h2;
        id_bloom_probes(id, len, &h1, &h2);
        for (unsigned k = 0; k < FDS__ID_BLOOM_PROBES; k++) {
            uint64_t b = (h1 + k * h2) & sg->id_bloom_mask;
            sg->id_bloom[b >> 6] |= 1ull << (b & 63);
        }
    }
}

bool fds__seg_may_hold(const fds__seg *sg, const char *id, size_t len)
{
    if (!sg->id_bloom)
        return true;
    uint64_t h1, h2;
    id_bloom_probes(id, len, &h1, &h2);
    for (unsigned k = 0; k < FDS__ID_BLOOM_PROBES; k++) {
        uint64_t b = (h1 + k * h2) & sg->id_bloom_mask;
        if (!(sg->id_bloom[b >> 6] >> (b & 63) & 1))
            return false;
    }
    return true;
}

void fds__seg_unref(fds__seg *sg)
{
    if (!sg || atomic_fetch_sub(&sg->refs, 1) != 1)
        return;
    if (sg->map)
        munmap((void *)sg->map, sg->map_len);
    fds_sidx_close(sg->sidx);
    if (atomic_load(&sg->dropped)) {
        if (sg->fdt_path)
            unlink(sg->fdt_path);
        if (sg->tim_path)
            unlink(sg->tim_path);
    }
    free(sg->fdt_path);
    free(sg->tim_path);
    free(sg->id_bloom);
    fds__routes_free(&sg->routes);
    free(sg);
}

int fds__seg_locate(const fds__seg *sg, uint32_t doc, uint32_t *block,
                    uint64_t *offset, uint32_t *len, uint32_t *doc_base)
{
    if (doc >= sg->max_doc || sg->nblocks == 0)
        return FDS_ERANGE;
    uint32_t lo = 0, hi = sg->nblocks - 1;
    while (lo < hi) { /* last block whose base <= doc */
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (fds__get_u32(sg->blk_index + (size_t)mid * FDT_BLKIDX_ENTRY + 8) <= doc)
            lo = mid;
        else
            hi = mid - 1;
    }
    const uint8_t *e = sg->blk_index + (size_t)lo * FDT_BLKIDX_ENTRY;
    *block = lo;
    *offset = fds__get_u64(e);
    *doc_base = fds__get_u32(e + 8);
    *len = fds__get_u32(e + 12);
    return 0;
}

/* Value of `doc` in a packed column (layout at the top of this file). */
static int64_t packed_get(const uint8_t *col, uint32_t doc)
{
    uint64_t lo = fds__get_u64(col);
    uint32_t w = fds__get_u32(col + 8);
    const uint8_t *p = col + 12 + (size_t)w * doc;
    uint64_t d = 0;
    for (uint32_t b = 0; b < w; b++)
        d |= (uint64_t)p[b] << (8 * b);
    return (int64_t)(lo + d);
}

int64_t fds__seg_version(const fds__seg *sg, uint32_t doc)
{
    return packed_get(sg->versions, doc);
}

int64_t fds__seg_seqno(const fds__seg *sg, uint32_t doc)
{
    return packed_get(sg->seqnos, doc);
}

/* Decode one block of `sg` up to in-block doc `upto` with context ctx;
 * errors name index, segment, block and the file relative to the data
 * directory.  The index is left as it is (fds__seg_verify). */
static int seg_decode_raw(fds_index *ix, fds_codec_ctx *ctx,
                          const fds__seg *sg, uint32_t block, uint64_t off,
                          uint32_t len, uint32_t upto, fds_block_view *view,
                          fds_err *err)
{
    fds_block_info info;
    const uint8_t *blk = sg->map + off;
    int rc = fds_block_info_read(blk, len, &info);
    const fds_dict *dict = NULL;
    if (rc == 0 && fds_codec_uses_dict(info.codec)) {
        dict = fds__index_dict(ix, info.dict_id);
        if (!dict)
            return fds_err_setk(err, FDS_EDICT, FDS_KIND_CORRUPT,
                                "[%s] segment [%s] block [%u] of "
                                "[indices/%s/%s.fdt]: dictionary [%u] is "
                                "missing from the catalogue", ix->name,
                                sg->name, block, ix->uuid, sg->name,
                                info.dict_id);
    }
    if (rc == 0)
        rc = upto == UINT32_MAX
                 ? fds_block_decode(ctx, blk, len, dict, upto, view)
                 : fds_block_decode_doc(ctx, blk, len, dict, upto, view);
    if (rc == FDS_ENOMEM)
        return fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    if (rc)
        return fds_err_setk(err, rc, FDS_KIND_CORRUPT,
                            "[%s] segment [%s] block [%u] of "
                            "[indices/%s/%s.fdt] is corrupt: %s", ix->name,
                            sg->name, block, ix->uuid, sg->name,
                            rc == FDS_EDICT ? "block was written with another "
                                              "dictionary than the one found"
                                            : "checksum mismatch or bad "
                                              "block");
    return 0;
}

/* seg_decode_raw, and a damaged block fails the index (it stays failed
 * across restarts until repaired: fds__index_corrupted), as a
 * CorruptIndexException met by a search fails an Elasticsearch shard. */
static int seg_decode_ctx(fds_index *ix, fds_codec_ctx *ctx,
                          const fds__seg *sg, uint32_t block, uint64_t off,
                          uint32_t len, uint32_t upto, fds_block_view *view,
                          fds_err *err)
{
    int rc = seg_decode_raw(ix, ctx, sg, block, off, len, upto, view, err);
    if (rc && rc != FDS_ENOMEM && err)
        fds__index_corrupted(ix, err);
    return rc;
}

int fds__seg_verify(fds_index *ix, const fds__seg *sg, fds__bad_block_fn bad,
                    void *arg, fds_err *err)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    if (!ctx)
        return FDS_ENOMEM;
    uint64_t at = FDT_HEADER;
    const uint64_t index_off = (uint64_t)(sg->blk_index - sg->map);
    for (uint32_t b = 0; b < sg->nblocks; b++) {
        const uint8_t *e = sg->blk_index + (size_t)b * FDT_BLKIDX_ENTRY;
        uint64_t off = fds__get_u64(e);
        uint32_t base = fds__get_u32(e + 8), len = fds__get_u32(e + 12);
        uint32_t next = b + 1 < sg->nblocks
                            ? fds__get_u32(e + FDT_BLKIDX_ENTRY + 8)
                            : sg->max_doc;
        fds_block_view v;
        int rc = off == at && next > base
                     ? seg_decode_raw(ix, ctx, sg, b, off, len, UINT32_MAX, &v, err)
                     : fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                                    "[%s] segment [%s]: block index of "
                                    "[indices/%s/%s.fdt] is inconsistent at "
                                    "block [%u]", ix->name, sg->name,
                                    ix->uuid, sg->name, b);
        if (!rc && v.decoded_docs != next - base)
            rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                              "[%s] segment [%s] block [%u] of "
                              "[indices/%s/%s.fdt] holds %u docs, its index "
                              "says %u", ix->name, sg->name, b, ix->uuid,
                              sg->name, v.decoded_docs, next - base);
        /* a damaged block where the (checksummed) block index says it
         * is: its docs are known, the walk goes on */
        if (rc == FDS_ECORRUPT && bad && off == at && next > base) {
            bad(arg, base, next, err);
            rc = 0;
        }
        if (rc)
            return rc;
        at = off + len;
        if (off >= FDS__DROP_CHUNK && b % 64 == 0)
            fds__drop_pages(sg->map, 0, off);
    }
    fds__drop_pages(sg->map, 0, sg->map_len);
    if (at != index_off || (sg->nblocks == 0) != (sg->max_doc == 0))
        return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                            "[%s] segment [%s]: blocks of [indices/%s/%s.fdt] "
                            "do not cover the file", ix->name, sg->name,
                            ix->uuid, sg->name);
    return 0;
}

static int seg_decode_block(fds_index *ix, const fds__seg *sg, uint32_t block,
                            uint64_t off, uint32_t len, uint32_t upto,
                            fds_block_view *view, fds_err *err)
{
    return seg_decode_ctx(ix, fds_codec_ctx_thread(), sg, block, off, len,
                          upto, view, err);
}

void fds__drop_pages(const uint8_t *map, uint64_t from, uint64_t to)
{
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)(map + from) + pg - 1) / pg * pg;
    uintptr_t b = (uintptr_t)(map + to) / pg * pg;
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

int fds__seg_cursor_read(fds_index *ix, fds__seg_cursor *c, const fds__seg *sg,
                         uint32_t doc, const uint8_t **src, size_t *len,
                         fds_err *err)
{
    uint32_t block, blen, base;
    uint64_t off;
    int rc = fds__seg_locate(sg, doc, &block, &off, &blen, &base);
    if (rc)
        return rc;
    if (c->last != sg) {
        if (c->last)
            fds__drop_pages(c->last->map, 0, c->last->map_len);
        c->last = sg;
        c->dropped = 0;
    } else if (off >= c->dropped + FDS__DROP_CHUNK) {
        fds__drop_pages(sg->map, c->dropped, off);
        c->dropped = off;
    }
    if (c->sg != sg || c->block != block) {
        c->sg = NULL;
        if ((rc = seg_decode_ctx(ix, c->cc, sg, block, off, blen, UINT32_MAX,
                                 &c->v, err)))
            return rc;
        c->sg = sg;
        c->block = block;
        c->base = base;
    }
    uint32_t k = doc - c->base;
    if (k >= c->v.decoded_docs || k < c->v.first_doc)
        return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                            "[%s] segment [%s] block [%u]: doc %u missing",
                            ix->name, sg->name, block, doc);
    *src = c->v.raw + c->v.offsets[k];
    *len = c->v.offsets[k + 1] - c->v.offsets[k];
    return 0;
}

int fds__seg_read_doc(fds_index *ix, const fds__seg *sg, uint32_t doc,
                      const uint8_t **src, size_t *len, fds_err *err)
{
    uint32_t block, blen, base;
    uint64_t off;
    int rc = fds__seg_locate(sg, doc, &block, &off, &blen, &base);
    if (rc)
        return rc;
    fds_block_view v;
    rc = seg_decode_block(ix, sg, block, off, blen, doc - base, &v, err);
    if (rc)
        return rc;
    uint32_t k = doc - base;
    if (k >= v.decoded_docs || k < v.first_doc)
        return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                            "[%s] segment [%s] block [%u]: doc %u missing",
                            ix->name, sg->name, block, doc);
    *src = v.raw + v.offsets[k];
    *len = v.offsets[k + 1] - v.offsets[k];
    return 0;
}

/* ---- fetching many hits through a view ---------------------------------- */

typedef struct fetch_ref {
    size_t hit;      /* index in the caller's hits */
    uint32_t seg, doc;
} fetch_ref;

static int fetch_ref_cmp(const void *a, const void *b)
{
    const fetch_ref *x = a, *y = b;
    if (x->seg != y->seg)
        return x->seg < y->seg ? -1 : 1;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

int fds_index_view_fetch(fds_index_view *v, const fds_hit *hits, size_t n,
                         const uint8_t **src, size_t *src_len, fds_err *err)
{
    if (n == 0)
        return 0;
    fetch_ref *refs = malloc(n * sizeof *refs);
    size_t *offs = malloc(n * sizeof *offs);
    if (!refs || !offs) {
        free(refs);
        free(offs);
        return FDS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        refs[i] = (fetch_ref){i, hits[i].seg, hits[i].doc};
    qsort(refs, n, sizeof *refs, fetch_ref_cmp);
    v->arena_len = 0;
    int rc = 0;
    size_t i = 0;
    while (i < n && rc == 0) {
        if (refs[i].seg >= v->nsegs) {
            rc = FDS_EINVAL;
            break;
        }
        const fds__seg *sg = v->segs[refs[i].seg];
        uint32_t block, blen, base;
        uint64_t off;
        if ((rc = fds__seg_locate(sg, refs[i].doc, &block, &off, &blen, &base)))
            break;
        /* every hit in this block: decode once, as far as the last one */
        size_t j = i;
        while (j + 1 < n && refs[j + 1].seg == refs[i].seg &&
               (block + 1 >= sg->nblocks ||
                refs[j + 1].doc < fds__get_u32(sg->blk_index +
                                               (size_t)(block + 1) * FDT_BLKIDX_ENTRY + 8)))
            j++;
        fds_block_view bv;
        rc = seg_decode_block(v->ix, sg, block, off, blen, refs[j].doc - base,
                              &bv, err);
        if (rc)
            break;
        for (size_t k = i; k <= j; k++) {
            uint32_t d = refs[k].doc - base;
            if (d < bv.first_doc || d >= bv.decoded_docs) { /* Lucene: other sub-blocks */
                rc = seg_decode_block(v->ix, sg, block, off, blen, d, &bv, err);
                if (rc)
                    break;
            }
            size_t dl = bv.offsets[d + 1] - bv.offsets[d];
            if (v->arena_len + dl > v->arena_cap) {
                size_t cap = v->arena_cap ? v->arena_cap : 65536;
                while (cap < v->arena_len + dl)
                    cap *= 2;
                uint8_t *q = realloc(v->arena, cap);
                if (!q) {
                    rc = FDS_ENOMEM;
                    break;
                }
                v->arena = q;
                v->arena_cap = cap;
            }
            memcpy(v->arena + v->arena_len, bv.raw + bv.offsets[d], dl);
            offs[refs[k].hit] = v->arena_len;
            src_len[refs[k].hit] = dl;
            v->arena_len += dl;
        }
        i = j + 1;
    }
    if (rc == 0)
        for (size_t k = 0; k < n; k++)
            src[k] = v->arena + offs[k];
    free(refs);
    free(offs);
    return rc;
}

/* ---- loading the published set at start-up ---- */

/* Open the segment of one segments row of ix with its live docs and
 * append both to ix->segs / ix->lives (fds__cat_seg_each; ctx: ix). */
static int segment_load(void *ctx, const fds__cat_seg_row *r, fds_err *err)
{
    fds_index *ix = ctx;
    fds__seg *sg = NULL;
    if (!r->row_ok || r->shard < 0 || r->shard >= ix->nshards)
        return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                            "[%s] segment [seg_%lld]: catalogue row segments "
                            "(live docs, deleted count, max_doc, max_seq) "
                            "fails its checksum (damaged catalogue)", ix->name,
                            (long long)r->gen);
    int rc = fds__seg_open(ix, r->id, (uint64_t)r->gen, &sg, err);
    if (rc)
        return rc;
    sg->max_seq = r->max_seq;
    sg->shard = (uint32_t)r->shard;
    if (r->has_routing &&
        (rc = fds__routes_parse(&sg->routes, r->routing, r->routing_len,
                                sg->max_doc))) {
        if (rc == FDS_ECORRUPT)
            fds_err_setk(err, rc, FDS_KIND_CORRUPT, "[%s] segment [%s]: "
                         "damaged routing values", ix->name, sg->name);
        fds__seg_unref(sg);
        return rc;
    }
    if (r->max_doc != sg->max_doc) {
        rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "[%s] segment [%s]: the catalogue says %lld docs, "
                          "the stored-fields file %u", ix->name, sg->name,
                          (long long)r->max_doc, sg->max_doc);
        fds__seg_unref(sg);
        return rc;
    }
    fds__live *lv = NULL;
    if (r->has_live) {
        size_t nb = (sg->max_doc + 7) / 8;
        if (r->live_len != nb) {
            rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                              "[%s] segment [%s]: live docs of wrong size",
                              ix->name, sg->name);
            fds__seg_unref(sg);
            return rc;
        }
        /* (NULL would read as "all live": deleted docs back) */
        if (!(lv = fds__live_copy(NULL, sg->max_doc))) {
            fds__seg_unref(sg);
            return FDS_ENOMEM;
        }
        memcpy(lv->bits, r->live, nb);
        lv->del_count = r->del_count;
    }
    fds__seg **q = realloc(ix->segs, (ix->nsegs + 1) * sizeof *q);
    fds__live **l = realloc(ix->lives, (ix->nsegs + 1) * sizeof *l);
    if (q)
        ix->segs = q;
    if (l)
        ix->lives = l;
    if (!q || !l) {
        fds__seg_unref(sg);
        fds__live_unref(lv);
        return FDS_ENOMEM;
    }
    ix->segs[ix->nsegs] = sg;
    ix->lives[ix->nsegs++] = lv;
    return 0;
}

/* Open every segment the catalogue lists for ix, by shard, oldest first
 * within a shard, with its live docs, into ix->segs / ix->lives (at
 * start-up). */
int fds__segments_load(fds_store *s, fds_index *ix, fds_err *err)
{
    return fds__cat_segments_read(s->db, ix->id, segment_load, ix, err);
}
