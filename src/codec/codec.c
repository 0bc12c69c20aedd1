/*
 * codec.c: the stored-fields block format of fieldstore and its five codecs.
 *
 * Why this file exists: a `_source` fetch of one log record must touch as few
 * bytes as possible, yet the records must compress well.  Records are packed
 * into small blocks (16 KiB by default) compressed as a unit with zstd and a
 * trained dictionary (or DEFLATE / LZ4 for comparison); a fetch decodes only
 * as far as the end of its document, and every read verifies a checksum and
 * the dictionary, so damage or a wrong dictionary is an error, never wrong
 * bytes.
 *
 * BLOCK LAYOUT, format version 2 (written today; all integers little-endian)
 *
 *   offset  size       field
 *   0       4          magic "FDSB" (46 44 53 42)
 *   4       1          format version = 2
 *   5       1          codec id (as in version 1 below)
 *   6       1          sub-blocks (as in version 1; info only)
 *   7       1          flags, 0 (reserved)
 *   8       4          dict id (0 when the codec has none)
 *   12      4          dict hash: CRC-32C of the dictionary bytes (0 if none)
 *   16      4          doc base (u32: segments number docs in 32 bits)
 *   20      ...        varints (unsigned LEB128): ndocs (>= 1), raw_len,
 *                      lens_len, payload_len; H = 20 + their bytes
 *   H       lens_len   doc lengths, bit-packed: varint min, 1 byte width w
 *                      (0..32), then ndocs values (length - min) of w bits
 *                      each, least significant bit first, in
 *                      ceil(ndocs * w / 8) bytes (sum of lengths = raw_len)
 *   H+L     payload_len codec payload (below; ZSTD* frames in version 2
 *                      have no magic number and no dictionary id)
 *   end-4   4          CRC-32C of bytes [0, end-4)
 *
 *   Version 2 saves per block: 20 - varint bytes of the header (about 14),
 *   about 6 of every 16 bits of the doc lengths, and 8 bytes of every zstd
 *   frame (ZSTD_f_zstd1_magicless, no dictionary id: the header names the
 *   dictionary and its hash).
 *
 * BLOCK LAYOUT, format version 1 (read, and written only on request:
 * fds_codec_params.format_version = FDS_BLOCK_FORMAT_V1)
 *
 *   offset  size       field
 *   0       4          magic "FDSB" (46 44 53 42)
 *   4       1          format version = 1
 *   5       1          codec id (fds_codec_id: 1 LZ4, 2 ZSTD, 3 ZSTD_NO_DICT,
 *                      4 DEFLATE, 5 LUCENE_DEFLATE)
 *   6       1          sub-blocks: number of zstd blocks (ZSTD*, cut at doc
 *                      boundaries), 10 for LUCENE_DEFLATE, else 0 (info only)
 *   7       1          flags, 0 (reserved)
 *   8       4          dict id (catalogue id; 0 when the codec has none)
 *   12      4          dict hash: CRC-32C of the dictionary bytes (0 if none)
 *                      so a different dictionary with the right id is caught
 *   16      8          doc base (first doc id of the block)
 *   24      4          ndocs (>= 1)
 *   28      4          raw_len: bytes of all docs, uncompressed
 *   32      4          payload_len
 *   36      4          lens_len: bytes of the doc-length array below
 *   40      lens_len   ndocs doc lengths, unsigned LEB128 varints (sum = raw_len)
 *   40+L    payload_len codec payload (below)
 *   end-4   4          CRC-32C of bytes [0, end-4): header, lengths, payload
 *
 *   encoded_len = 40 + lens_len + payload_len + 4.
 *
 * PAYLOADS
 *   LZ4            one LZ4 block (LZ4_compress_fast_extState, acceleration 1).
 *   ZSTD           one zstd frame without content size or zstd checksum
 *                  (the header above carries both), compressed with the
 *                  dictionary's ZSTD_CDict (buffer-less API, dictionary
 *                  attached); version 2: magicless (RFC 8878 frame less its
 *                  4 magic bytes, ZSTD_f_zstd1_magicless) and without
 *                  dictionary id; the frame is cut into up to `sub_blocks` (2)
 *                  zstd blocks ending at the doc boundaries at or after
 *                  raw_len*k/sub_blocks, so a one-doc fetch decodes
 *                  (buffer-less API) only the zstd blocks up to its doc.
 *   ZSTD_NO_DICT   the same without dictionary (ZSTD_compressStream2 with
 *                  ZSTD_e_flush at the cuts; no dict id in the frame).
 *   DEFLATE        raw DEFLATE (windowBits -15), zlib level 6, preset
 *                  dictionary = the last <= 32 KiB of the fds_dict bytes.
 *   LUCENE_DEFLATE Lucene's DeflateWithPresetDictCompressionMode (Lucene 8.7+):
 *                  vint dictLength (= raw_len / 60), vint blockLength
 *                  (= ceil((raw_len - dictLength) / 10)), then vint clen +
 *                  raw DEFLATE (level 6) of the dictionary bytes alone, then
 *                  for each sub-block: vint clen + raw DEFLATE of the
 *                  sub-block with the dictionary bytes as preset.  vint =
 *                  Lucene's DataOutput.writeVInt (LEB128).
 *
 * A raw DEFLATE stream inflated with a wrong preset dictionary of the same
 * length yields wrong bytes without an error; the dict id + dict hash check
 * before decoding and the checksum are what make that impossible here.
 */
#include "codec.h"
#include "fds_bytes.h"
#include "fds_hash.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The buffer-less and experimental zstd API (ZSTD_compressBegin_usingCDict,
 * ZSTD_decompressContinue, ZSTD_createCDict_advanced, ...) is only valid
 * against the libzstd whose zstd.h we compiled with, so libzstd is linked
 * statically (src/codec/CMakeLists.txt) and fds_codec_zstd_check() compares
 * the two versions.  docs/codec.md gives the measurements behind this. */
#define ZSTD_STATIC_LINKING_ONLY
/* ZSTD_compressBegin_usingCDict_advanced is marked deprecated from 1.5.5
 * on (the buffer-less API); the version check above pins the library. */
#define ZSTD_DISABLE_DEPRECATE_WARNINGS
#include <lz4.h>
#include <zdict.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define FDS__MAGIC 0x42534446u /* "FDSB" read little-endian */
#define FDS__HDR_FIXED 40u     /* version 1 header */
#define FDS__V2_FIXED 20u      /* version 2 fixed part; then 4 varints */
#define FDS__CRC_LEN 4u
#define FDS__VARINT_MAX 5u
#define FDS__V2_HDR_MAX (FDS__V2_FIXED + 4u * FDS__VARINT_MAX)
#define FDS__ZSTD_MAGIC_LEN 4u /* bytes of ZSTD_MAGICNUMBER a frame starts with */
/* Most bytes of version 2 doc lengths: varint min, width, 32 bits a doc. */
#define FDS__V2_LENS_MAX(nd) (FDS__VARINT_MAX + 1u + (size_t)(nd) * 4u)
#define FDS__ZLIB_WINDOW_BITS (-15) /* raw DEFLATE, 32 KiB window */
#define FDS__ZLIB_MEMLEVEL 8
#define FDS__SCRATCH_SLACK 64u /* extra bytes after decoded raw data */

/* ---- small helpers ---------------------------------------------------- */

/* Little-endian fields and varints of the block layout (fds_bytes.h). */
#define put_u32 fds__put_u32
#define get_u32 fds__get_u32
#define put_u64 fds__put_u64
#define get_u64 fds__get_u64
#define put_varint fds__varint_put
/* Reads one varint from [*pp, end); 0 or FDS_ECORRUPT. */
static inline int get_varint(const uint8_t **pp, const uint8_t *end,
                             uint32_t *out)
{
    size_t n = fds__varint_get(*pp, end, out);
    if (!n)
        return FDS_ECORRUPT;
    *pp += n;
    return 0;
}

/* ---- zstd version ----------------------------------------------------- */

int fds_codec_zstd_check(fds_err *err)
{
    unsigned lib = ZSTD_versionNumber();
    if (lib == ZSTD_VERSION_NUMBER)
        return 0;
    return fds_err_setk(err, FDS_EUNSUPPORTED, FDS_KIND_ILLEGAL_STATE,
                        "libzstd %u.%u.%u linked, but the codec was compiled "
                        "against zstd.h %u.%u.%u; its static-only API needs "
                        "the same version (link libzstd.a of that zstd)",
                        lib / 10000, lib / 100 % 100, lib % 100,
                        ZSTD_VERSION_MAJOR, ZSTD_VERSION_MINOR,
                        ZSTD_VERSION_RELEASE);
}

/* ---- names ------------------------------------------------------------ */

int fds_codec_from_name(const char *name, fds_codec_id *out)
{
    static const struct { const char *n; fds_codec_id id; } names[] = {
        {"default", FDS_CODEC_LZ4},          {"lz4", FDS_CODEC_LZ4},
        {"ZSTD", FDS_CODEC_ZSTD},            {"zstd", FDS_CODEC_ZSTD},
        {"zstd_no_dict", FDS_CODEC_ZSTD_NO_DICT},
        {"best_compression", FDS_CODEC_DEFLATE},
        {"lucene_best_compression", FDS_CODEC_LUCENE_DEFLATE},
    };
    if (!name || !out)
        return FDS_EINVAL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].n) == 0) {
            *out = names[i].id;
            return 0;
        }
    return FDS_EINVAL;
}

const char *fds_codec_name(fds_codec_id id)
{
    switch (id) {
    case FDS_CODEC_LZ4: return "default";
    case FDS_CODEC_ZSTD: return "ZSTD";
    case FDS_CODEC_ZSTD_NO_DICT: return "zstd_no_dict";
    case FDS_CODEC_DEFLATE: return "best_compression";
    case FDS_CODEC_LUCENE_DEFLATE: return "lucene_best_compression";
    }
    return "unknown";
}

bool fds_codec_uses_dict(fds_codec_id id)
{
    return id == FDS_CODEC_ZSTD || id == FDS_CODEC_DEFLATE;
}

static bool codec_valid(unsigned id)
{
    return id >= FDS_CODEC_LZ4 && id <= FDS_CODEC_LUCENE_DEFLATE;
}

void fds_codec_params_default(fds_codec_id id, fds_codec_params *out)
{
    memset(out, 0, sizeof *out);
    out->codec = id;
    out->level = FDS_ZSTD_LEVEL_DEFAULT;
    if (id == FDS_CODEC_LUCENE_DEFLATE) {
        out->block_size = FDS_LUCENE_CHUNK_SIZE;
        out->max_docs_per_block = FDS_LUCENE_CHUNK_MAX_DOCS;
    } else {
        out->block_size = FDS_BLOCK_SIZE_DEFAULT;
        out->max_docs_per_block = FDS_BLOCK_MAX_DOCS_DEFAULT;
    }
    out->sub_blocks = FDS_ZSTD_SUB_BLOCKS_DEFAULT;
}

/* ---- dictionaries ----------------------------------------------------- */

struct fds_dict {
    uint32_t id;
    uint32_t hash; /* CRC-32C of bytes[0, len) */
    fds_codec_id codec;
    int level;
    uint8_t *bytes;
    size_t len;
    const uint8_t *zbytes; /* DEFLATE preset: last <= 32 KiB of bytes */
    size_t zlen;
    ZSTD_CDict *cdict;
    ZSTD_DDict *ddict;
};

int fds_dict_train(fds_codec_id codec, const uint8_t *samples,
                   const size_t *sample_lens, unsigned nsamples,
                   size_t dict_capacity, uint8_t *dict_out, size_t *dict_len)
{
    if (!fds_codec_uses_dict(codec) || !samples || !sample_lens || !dict_out ||
        !dict_len || nsamples < 8 || dict_capacity < 256)
        return FDS_EINVAL;
    if (codec == FDS_CODEC_ZSTD) {
        size_t r = ZDICT_trainFromBuffer(dict_out, dict_capacity, samples,
                                         sample_lens, nsamples);
        if (ZDICT_isError(r))
            return FDS_EINVAL;
        *dict_len = r;
        return 0;
    }
    /* DEFLATE: a zstd dictionary's content section is a good preset (the
     * most useful bytes last, nearest to the data); keep its last 32 KiB. */
    size_t want = dict_capacity < FDS_DEFLATE_DICT_MAX ? dict_capacity
                                                       : FDS_DEFLATE_DICT_MAX;
    size_t cap = want + 8192; /* room for the zstd entropy header */
    uint8_t *tmp = malloc(cap);
    if (!tmp)
        return FDS_ENOMEM;
    size_t r = ZDICT_trainFromBuffer(tmp, cap, samples, sample_lens, nsamples);
    if (ZDICT_isError(r)) {
        free(tmp);
        return FDS_EINVAL;
    }
    size_t h = ZDICT_getDictHeaderSize(tmp, r);
    if (ZDICT_isError(h) || h >= r) {
        free(tmp);
        return FDS_EINVAL;
    }
    size_t clen = r - h;
    if (clen > want)
        clen = want;
    memcpy(dict_out, tmp + r - clen, clen);
    *dict_len = clen;
    free(tmp);
    return 0;
}

int fds_dict_create(uint32_t dict_id, fds_codec_id codec, int level,
                    const uint8_t *bytes, size_t len, fds_dict **out)
{
    if (!out || !fds_codec_uses_dict(codec) || !bytes || len == 0 ||
        dict_id == 0)
        return FDS_EINVAL;
    if (codec == FDS_CODEC_ZSTD &&
        (level < FDS_ZSTD_LEVEL_MIN || level > FDS_ZSTD_LEVEL_MAX))
        return FDS_EINVAL;
    if (codec == FDS_CODEC_ZSTD && fds_codec_zstd_check(NULL))
        return FDS_EUNSUPPORTED;
    fds_dict *d = calloc(1, sizeof *d);
    if (!d)
        return FDS_ENOMEM;
    d->bytes = malloc(len);
    if (!d->bytes) {
        free(d);
        return FDS_ENOMEM;
    }
    memcpy(d->bytes, bytes, len);
    d->len = len;
    d->id = dict_id;
    d->codec = codec;
    d->level = level;
    d->hash = fds_crc32c(0, bytes, len);
    if (codec == FDS_CODEC_ZSTD) {
        /* byRef: the fds_dict owns the bytes for the dicts' lifetime. */
        /* Parameters tuned for FDS_BLOCK_SIZE_DEFAULT inputs: small tables
         * that blocks attach to instead of copying (measured: 2.4x faster
         * than ZSTD_createCDict's size-unknown parameters on 16 KiB). */
        ZSTD_compressionParameters cp =
            ZSTD_getCParams(level, FDS_BLOCK_SIZE_DEFAULT, len);
        d->cdict = ZSTD_createCDict_advanced(d->bytes, len, ZSTD_dlm_byRef,
                                             ZSTD_dct_auto, cp, ZSTD_defaultCMem);
        d->ddict = ZSTD_createDDict_byReference(d->bytes, len);
        if (!d->cdict || !d->ddict) {
            fds_dict_free(d);
            return FDS_ENOMEM;
        }
    } else {
        d->zlen = len > FDS_DEFLATE_DICT_MAX ? FDS_DEFLATE_DICT_MAX : len;
        d->zbytes = d->bytes + (len - d->zlen);
    }
    *out = d;
    return 0;
}

void fds_dict_free(fds_dict *d)
{
    if (!d)
        return;
    ZSTD_freeCDict(d->cdict);
    ZSTD_freeDDict(d->ddict);
    free(d->bytes);
    free(d);
}

uint32_t fds_dict_id(const fds_dict *d) { return d ? d->id : 0; }
fds_codec_id fds_dict_codec(const fds_dict *d) { return d->codec; }
const uint8_t *fds_dict_bytes(const fds_dict *d, size_t *len)
{
    if (len)
        *len = d ? d->len : 0;
    return d ? d->bytes : NULL;
}

/* ---- contexts --------------------------------------------------------- */

struct fds_codec_ctx {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    ZSTD_format_e dfmt; /* the frame format dctx is set to */
    z_stream def;
    bool def_ready;
    z_stream inf;
    bool inf_ready;
    void *lz4_state;
    uint8_t *raw; /* decode scratch */
    size_t raw_cap;
    uint32_t *offsets;
    size_t offsets_cap; /* entries */
};

fds_codec_ctx *fds_codec_ctx_create(void)
{
    if (fds_codec_zstd_check(NULL))
        return NULL;
    fds_codec_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cctx = ZSTD_createCCtx();
    c->dctx = ZSTD_createDCtx();
    c->lz4_state = malloc((size_t)LZ4_sizeofState());
    if (!c->cctx || !c->dctx || !c->lz4_state) {
        fds_codec_ctx_free(c);
        return NULL;
    }
    return c;
}

void fds_codec_ctx_free(fds_codec_ctx *c)
{
    if (!c)
        return;
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    if (c->def_ready)
        deflateEnd(&c->def);
    if (c->inf_ready)
        inflateEnd(&c->inf);
    free(c->lz4_state);
    free(c->raw);
    free(c->offsets);
    free(c);
}

static pthread_key_t ctx_key;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;
static void ctx_destroy(void *p) { fds_codec_ctx_free(p); }
static void ctx_key_init(void) { (void)pthread_key_create(&ctx_key, ctx_destroy); }

fds_codec_ctx *fds_codec_ctx_thread(void)
{
    pthread_once(&ctx_once, ctx_key_init);
    fds_codec_ctx *c = pthread_getspecific(ctx_key);
    if (!c) {
        c = fds_codec_ctx_create();
        if (c && pthread_setspecific(ctx_key, c) != 0) {
            fds_codec_ctx_free(c);
            c = NULL;
        }
    }
    return c;
}

static int ctx_deflate(fds_codec_ctx *c)
{
    if (c->def_ready)
        return deflateReset(&c->def) == Z_OK ? 0 : FDS_ENOMEM;
    memset(&c->def, 0, sizeof c->def);
    if (deflateInit2(&c->def, FDS_DEFLATE_LEVEL, Z_DEFLATED,
                     FDS__ZLIB_WINDOW_BITS, FDS__ZLIB_MEMLEVEL,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return FDS_ENOMEM;
    c->def_ready = true;
    return 0;
}

static int ctx_inflate(fds_codec_ctx *c)
{
    if (c->inf_ready)
        return inflateReset(&c->inf) == Z_OK ? 0 : FDS_ENOMEM;
    memset(&c->inf, 0, sizeof c->inf);
    if (inflateInit2(&c->inf, FDS__ZLIB_WINDOW_BITS) != Z_OK)
        return FDS_ENOMEM;
    c->inf_ready = true;
    return 0;
}

static int ctx_reserve(fds_codec_ctx *c, size_t raw, size_t noff)
{
    if (c->raw_cap < raw + FDS__SCRATCH_SLACK) {
        size_t cap = raw + FDS__SCRATCH_SLACK;
        if (cap < 2 * c->raw_cap)
            cap = 2 * c->raw_cap;
        uint8_t *p = realloc(c->raw, cap);
        if (!p)
            return FDS_ENOMEM;
        c->raw = p;
        c->raw_cap = cap;
    }
    if (c->offsets_cap < noff) {
        size_t cap = noff < 2 * c->offsets_cap ? 2 * c->offsets_cap : noff;
        uint32_t *p = realloc(c->offsets, cap * sizeof *p);
        if (!p)
            return FDS_ENOMEM;
        c->offsets = p;
        c->offsets_cap = cap;
    }
    return 0;
}

/* ---- encode ----------------------------------------------------------- */

static size_t deflate_bound_raw(size_t n)
{
    /* zlib's compressBound() less the 6 zlib-wrapper bytes, plus slack. */
    return n + (n >> 12) + (n >> 14) + (n >> 25) + 16;
}

static size_t payload_bound(const fds_codec_params *p, size_t raw_len)
{
    switch (p->codec) {
    case FDS_CODEC_LZ4:
        return (size_t)LZ4_compressBound((int)raw_len);
    case FDS_CODEC_ZSTD:
    case FDS_CODEC_ZSTD_NO_DICT:
        return ZSTD_compressBound(raw_len) + 3u * FDS_ZSTD_SUB_BLOCKS_MAX + 32;
    case FDS_CODEC_DEFLATE:
        return deflate_bound_raw(raw_len);
    case FDS_CODEC_LUCENE_DEFLATE:
        return deflate_bound_raw(raw_len) +
               (FDS_LUCENE_NUM_SUB_BLOCKS + 1) * (16 + FDS__VARINT_MAX) + 10;
    }
    return 0;
}

size_t fds_block_bound(const fds_codec_params *p, size_t raw_len,
                       uint32_t ndocs)
{
    if (!p || !codec_valid(p->codec))
        return 0;
    /* The larger of the two versions' headers and doc lengths. */
    return FDS__HDR_FIXED + (size_t)ndocs * FDS__VARINT_MAX +
           FDS__VARINT_MAX + 1u + payload_bound(p, raw_len) + FDS__CRC_LEN;
}

static int enc_lz4(fds_codec_ctx *c, const uint8_t *raw, size_t n,
                   uint8_t *dst, size_t cap, size_t *out)
{
    if (n == 0) {
        *out = 0;
        return 0;
    }
    int icap = cap > INT_MAX ? INT_MAX : (int)cap;
    int r = LZ4_compress_fast_extState(c->lz4_state, (const char *)raw,
                                       (char *)dst, (int)n, icap, 1);
    if (r <= 0)
        return FDS_ERANGE;
    *out = (size_t)r;
    return 0;
}

/* Sub-block ends: doc boundaries at or after n*k/nsub, k = 1..nsub. */
static unsigned zstd_cuts(const fds_codec_params *p, const uint32_t *doc_lens,
                          uint32_t ndocs, size_t n,
                          size_t cuts[FDS_ZSTD_SUB_BLOCKS_MAX])
{
    unsigned nsub = p->sub_blocks ? p->sub_blocks : FDS_ZSTD_SUB_BLOCKS_DEFAULT;
    if (nsub > FDS_ZSTD_SUB_BLOCKS_MAX)
        nsub = FDS_ZSTD_SUB_BLOCKS_MAX;
    size_t end = 0;
    uint32_t d = 0;
    unsigned made = 0;
    for (unsigned k = 1; k <= nsub; k++) {
        size_t target = n * k / nsub;
        while (d < ndocs && (end < target || k == nsub))
            end += doc_lens[d++];
        if (k != nsub && made && cuts[made - 1] == end)
            continue;
        if (k != nsub && end == 0)
            continue;
        if (k == nsub && made && cuts[made - 1] == end)
            break; /* the last cut already ends the data */
        cuts[made++] = end;
    }
    if (made == 0)
        cuts[made++] = n;
    return made;
}

static int zstd_err(size_t r)
{
    return ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall ? FDS_ERANGE
                                                               : FDS_EINVAL;
}

/* Version 2 frames are magicless: the buffer-less API always writes the
 * magic number, so drop it (the rest is the ZSTD_f_zstd1_magicless frame). */
static int zstd_drop_magic(uint8_t *dst, size_t *len)
{
    if (*len < FDS__ZSTD_MAGIC_LEN || get_u32(dst) != ZSTD_MAGICNUMBER)
        return FDS_EINVAL;
    memmove(dst, dst + FDS__ZSTD_MAGIC_LEN, *len - FDS__ZSTD_MAGIC_LEN);
    *len -= FDS__ZSTD_MAGIC_LEN;
    return 0;
}

static int enc_zstd(fds_codec_ctx *c, const fds_codec_params *p,
                    const fds_dict *dict, const uint8_t *raw,
                    const uint32_t *doc_lens, uint32_t ndocs, size_t n,
                    unsigned ver, uint8_t *dst, size_t cap, size_t *out,
                    unsigned *nsub_out)
{
    ZSTD_CCtx *z = c->cctx;
    size_t cuts[FDS_ZSTD_SUB_BLOCKS_MAX];
    unsigned nsub = zstd_cuts(p, doc_lens, ndocs, n, cuts);
    bool v2 = ver >= FDS_BLOCK_FORMAT_V2;
    if (dict) {
        /* Buffer-less: each ZSTD_compressContinue() call ends in complete
         * zstd blocks, so every cut is a block boundary; the digested
         * dictionary is attached, never copied (no pledged size).  Frame
         * parameters: no content size, no checksum; version 2 also no
         * dictionary id. */
        ZSTD_frameParameters fp = {.contentSizeFlag = 0, .checksumFlag = 0,
                                   .noDictIDFlag = v2};
        size_t r = ZSTD_compressBegin_usingCDict_advanced(
            z, dict->cdict, fp, ZSTD_CONTENTSIZE_UNKNOWN);
        if (ZSTD_isError(r))
            return FDS_EINVAL;
        size_t pos = 0, prev = 0;
        for (unsigned k = 0; k < nsub; k++) {
            r = k + 1 < nsub
                    ? ZSTD_compressContinue(z, dst + pos, cap - pos, raw + prev,
                                            cuts[k] - prev)
                    : ZSTD_compressEnd(z, dst + pos, cap - pos, raw + prev,
                                       cuts[k] - prev);
            if (ZSTD_isError(r))
                return zstd_err(r);
            pos += r;
            prev = cuts[k];
        }
        if (v2 && zstd_drop_magic(dst, &pos))
            return FDS_EINVAL;
        *out = pos;
        *nsub_out = nsub;
        return 0;
    }
    ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
    size_t e = 0;
    e |= ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, p->level));
    e |= ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 0));
    e |= ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 0));
    e |= ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_dictIDFlag, 0));
    e |= ZSTD_isError(ZSTD_CCtx_setParameter(
        z, ZSTD_c_format, v2 ? ZSTD_f_zstd1_magicless : ZSTD_f_zstd1));
    e |= ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(z, n));
    if (e)
        return FDS_EINVAL;
    if (nsub == 1) {
        size_t r = ZSTD_compress2(z, dst, cap, raw, n);
        if (ZSTD_isError(r))
            return zstd_err(r);
        *out = r;
        *nsub_out = 1;
        return 0;
    }
    ZSTD_CCtx_setParameter(z, ZSTD_c_stableInBuffer, 1);
    ZSTD_CCtx_setParameter(z, ZSTD_c_stableOutBuffer, 1);
    ZSTD_inBuffer in = {raw, 0, 0};
    ZSTD_outBuffer ob = {dst, cap, 0};
    for (unsigned k = 0; k < nsub; k++) {
        in.size = cuts[k];
        ZSTD_EndDirective mode = k + 1 == nsub ? ZSTD_e_end : ZSTD_e_flush;
        size_t r;
        do {
            r = ZSTD_compressStream2(z, &ob, &in, mode);
            if (ZSTD_isError(r))
                return zstd_err(r);
            if (r != 0 && ob.pos == ob.size)
                return FDS_ERANGE;
        } while (r != 0);
    }
    *out = ob.pos;
    *nsub_out = nsub;
    return 0;
}

/* Raw DEFLATE of src with an optional preset dictionary into dst. */
static int enc_deflate_one(fds_codec_ctx *c, const uint8_t *dict, size_t dlen,
                           const uint8_t *src, size_t n, uint8_t *dst,
                           size_t cap, size_t *out)
{
    int r = ctx_deflate(c);
    if (r)
        return r;
    if (dlen && deflateSetDictionary(&c->def, dict, (uInt)dlen) != Z_OK)
        return FDS_EINVAL;
    c->def.next_in = (Bytef *)(uintptr_t)src;
    c->def.avail_in = (uInt)n;
    c->def.next_out = dst;
    c->def.avail_out = cap > UINT_MAX ? UINT_MAX : (uInt)cap;
    int z = deflate(&c->def, Z_FINISH);
    if (z != Z_STREAM_END)
        return FDS_ERANGE;
    *out = c->def.total_out;
    return 0;
}

static int enc_lucene(fds_codec_ctx *c, const uint8_t *raw, size_t n,
                      uint8_t *dst, size_t cap, size_t *out)
{
    size_t dict_len = n / (FDS_LUCENE_NUM_SUB_BLOCKS * FDS_LUCENE_DICT_SIZE_FACTOR);
    size_t blk_len = (n - dict_len + FDS_LUCENE_NUM_SUB_BLOCKS - 1) /
                     FDS_LUCENE_NUM_SUB_BLOCKS;
    size_t pos = 0;
    if (cap < 2 * FDS__VARINT_MAX)
        return FDS_ERANGE;
    pos += put_varint(dst + pos, (uint32_t)dict_len);
    pos += put_varint(dst + pos, (uint32_t)blk_len);
    /* The dictionary, compressed alone; then each sub-block with it. */
    for (size_t start = 0, first = 1; first || start < n; first = 0) {
        const uint8_t *src = raw + start;
        size_t len = first ? dict_len : (n - start < blk_len ? n - start : blk_len);
        if (cap - pos < FDS__VARINT_MAX + 1)
            return FDS_ERANGE;
        /* Compress after a maximal varint gap, then close the gap. */
        size_t clen;
        int r = enc_deflate_one(c, first ? NULL : raw, first ? 0 : dict_len,
                                src, len, dst + pos + FDS__VARINT_MAX,
                                cap - pos - FDS__VARINT_MAX, &clen);
        if (r)
            return r;
        uint8_t tmpv[FDS__VARINT_MAX];
        size_t vl = put_varint(tmpv, (uint32_t)clen);
        memmove(dst + pos + vl, dst + pos + FDS__VARINT_MAX, clen);
        memcpy(dst + pos, tmpv, vl);
        pos += vl + clen;
        start += len;
    }
    *out = pos;
    return 0;
}

/* Version 2 doc lengths (layout above); returns the bytes written, at
 * most FDS__V2_LENS_MAX(nd). */
static size_t lens_pack(uint8_t *dst, const uint32_t *lens, uint32_t nd)
{
    uint32_t mn = UINT32_MAX, mx = 0;
    for (uint32_t i = 0; i < nd; i++) {
        if (lens[i] < mn) mn = lens[i];
        if (lens[i] > mx) mx = lens[i];
    }
    unsigned w = 0;
    while (w < 32 && ((uint64_t)(mx - mn) >> w) != 0)
        w++;
    size_t pos = put_varint(dst, mn);
    dst[pos++] = (uint8_t)w;
    uint64_t acc = 0;
    unsigned bits = 0;
    for (uint32_t i = 0; i < nd; i++) {
        acc |= (uint64_t)(lens[i] - mn) << bits;
        bits += w;
        for (; bits >= 8; bits -= 8, acc >>= 8)
            dst[pos++] = (uint8_t)acc;
    }
    if (bits)
        dst[pos++] = (uint8_t)acc;
    return pos;
}

int fds_block_encode(fds_codec_ctx *ctx, const fds_codec_params *p,
                     const fds_dict *dict, uint64_t doc_base,
                     const uint8_t *raw, const uint32_t *doc_lens,
                     uint32_t ndocs, uint8_t *dst, size_t dst_cap,
                     size_t *out_len)
{
    if (!ctx || !p || !codec_valid(p->codec) || !doc_lens || ndocs == 0 ||
        ndocs > FDS_BLOCK_DOCS_LIMIT || !dst || !out_len)
        return FDS_EINVAL;
    uint64_t n64 = 0;
    for (uint32_t i = 0; i < ndocs; i++)
        n64 += doc_lens[i];
    if (n64 > FDS_BLOCK_RAW_LIMIT || (n64 && !raw))
        return FDS_EINVAL;
    size_t n = (size_t)n64;
    bool uses = fds_codec_uses_dict(p->codec);
    if (uses && (!dict || dict->codec != p->codec))
        return FDS_EDICT;
    if (!uses)
        dict = NULL;
    if (p->codec == FDS_CODEC_ZSTD_NO_DICT &&
        (p->level < FDS_ZSTD_LEVEL_MIN || p->level > FDS_ZSTD_LEVEL_MAX))
        return FDS_EINVAL;

    unsigned ver = p->format_version ? p->format_version : FDS_BLOCK_FORMAT_VERSION;
    if (ver != FDS_BLOCK_FORMAT_V1 && ver != FDS_BLOCK_FORMAT_V2)
        return FDS_EINVAL;
    if (ver == FDS_BLOCK_FORMAT_V2 && doc_base > UINT32_MAX)
        return FDS_EINVAL;
    /* Lengths and payload go after the largest header the version can
     * have; a version 2 header shorter than that moves them down after. */
    size_t hdr_max = ver == FDS_BLOCK_FORMAT_V1 ? FDS__HDR_FIXED : FDS__V2_HDR_MAX;
    size_t lens_max = ver == FDS_BLOCK_FORMAT_V1
                          ? (size_t)ndocs * FDS__VARINT_MAX
                          : FDS__V2_LENS_MAX(ndocs);
    if (dst_cap < hdr_max + FDS__CRC_LEN + lens_max)
        return FDS_ERANGE;
    uint8_t *lens_at = dst + hdr_max;
    size_t lens_len = 0;
    if (ver == FDS_BLOCK_FORMAT_V1)
        for (uint32_t i = 0; i < ndocs; i++)
            lens_len += put_varint(lens_at + lens_len, doc_lens[i]);
    else
        lens_len = lens_pack(lens_at, doc_lens, ndocs);
    uint8_t *pay = lens_at + lens_len;
    size_t pay_cap = dst_cap - hdr_max - lens_len - FDS__CRC_LEN;
    size_t pay_len = 0;
    unsigned nsub = 0;
    int r;
    switch (p->codec) {
    case FDS_CODEC_LZ4:
        r = enc_lz4(ctx, raw, n, pay, pay_cap, &pay_len);
        break;
    case FDS_CODEC_ZSTD:
    case FDS_CODEC_ZSTD_NO_DICT:
        r = enc_zstd(ctx, p, dict, raw, doc_lens, ndocs, n, ver, pay, pay_cap,
                     &pay_len, &nsub);
        break;
    case FDS_CODEC_DEFLATE:
        r = enc_deflate_one(ctx, dict->zbytes, dict->zlen, raw, n, pay,
                            pay_cap, &pay_len);
        break;
    default:
        r = enc_lucene(ctx, raw, n, pay, pay_cap, &pay_len);
        nsub = FDS_LUCENE_NUM_SUB_BLOCKS;
        break;
    }
    if (r)
        return r;
    put_u32(dst, FDS__MAGIC);
    dst[4] = (uint8_t)ver;
    dst[5] = (uint8_t)p->codec;
    dst[6] = (uint8_t)nsub;
    dst[7] = 0;
    put_u32(dst + 8, dict ? dict->id : 0);
    put_u32(dst + 12, dict ? dict->hash : 0);
    size_t h;
    if (ver == FDS_BLOCK_FORMAT_V1) {
        put_u64(dst + 16, doc_base);
        put_u32(dst + 24, ndocs);
        put_u32(dst + 28, (uint32_t)n);
        put_u32(dst + 32, (uint32_t)pay_len);
        put_u32(dst + 36, (uint32_t)lens_len);
        h = FDS__HDR_FIXED;
    } else {
        put_u32(dst + 16, (uint32_t)doc_base);
        h = FDS__V2_FIXED;
        h += put_varint(dst + h, ndocs);
        h += put_varint(dst + h, (uint32_t)n);
        h += put_varint(dst + h, (uint32_t)lens_len);
        h += put_varint(dst + h, (uint32_t)pay_len);
        memmove(dst + h, lens_at, lens_len + pay_len);
    }
    size_t body = h + lens_len + pay_len;
    put_u32(dst + body, fds_crc32c(0, dst, body));
    *out_len = body + FDS__CRC_LEN;
    return 0;
}

/* ---- decode ----------------------------------------------------------- */

/* A block header of either version, read and checked. */
typedef struct blk_hdr {
    fds_block_info bi;
    uint32_t dict_hash;
    uint32_t lens_len, pay_len;
    size_t lens_off; /* where the doc lengths start */
} blk_hdr;

static int hdr_read(const uint8_t *blk, size_t len, blk_hdr *h)
{
    if (!blk || !h || len < FDS__V2_FIXED + FDS__CRC_LEN)
        return FDS_ECORRUPT;
    if (get_u32(blk) != FDS__MAGIC || !codec_valid(blk[5]) || blk[7] != 0)
        return FDS_ECORRUPT;
    fds_block_info *bi = &h->bi;
    bi->format_version = blk[4];
    bi->codec = (fds_codec_id)blk[5];
    bi->dict_id = get_u32(blk + 8);
    h->dict_hash = get_u32(blk + 12);
    uint32_t lens_max;
    if (bi->format_version == FDS_BLOCK_FORMAT_V1) {
        if (len < FDS__HDR_FIXED + FDS__CRC_LEN)
            return FDS_ECORRUPT;
        bi->doc_base = get_u64(blk + 16);
        bi->ndocs = get_u32(blk + 24);
        bi->raw_len = get_u32(blk + 28);
        h->pay_len = get_u32(blk + 32);
        h->lens_len = get_u32(blk + 36);
        h->lens_off = FDS__HDR_FIXED;
        if (h->lens_len < bi->ndocs)
            return FDS_ECORRUPT;
        lens_max = FDS__VARINT_MAX;
    } else if (bi->format_version == FDS_BLOCK_FORMAT_V2) {
        bi->doc_base = get_u32(blk + 16);
        const uint8_t *q = blk + FDS__V2_FIXED, *end = blk + len;
        if (get_varint(&q, end, &bi->ndocs) || get_varint(&q, end, &bi->raw_len) ||
            get_varint(&q, end, &h->lens_len) || get_varint(&q, end, &h->pay_len))
            return FDS_ECORRUPT;
        h->lens_off = (size_t)(q - blk);
        if (h->lens_len < 2)
            return FDS_ECORRUPT;
        lens_max = 4;
    } else {
        return FDS_ECORRUPT;
    }
    if (bi->ndocs == 0 || bi->ndocs > FDS_BLOCK_DOCS_LIMIT ||
        bi->raw_len > FDS_BLOCK_RAW_LIMIT ||
        h->lens_len > (uint64_t)bi->ndocs * lens_max + FDS__VARINT_MAX + 1)
        return FDS_ECORRUPT;
    uint64_t total = (uint64_t)h->lens_off + h->lens_len + h->pay_len + FDS__CRC_LEN;
    if (total > len)
        return FDS_ECORRUPT;
    if (fds_codec_uses_dict(bi->codec) != (bi->dict_id != 0))
        return FDS_ECORRUPT;
    bi->encoded_len = (uint32_t)total;
    return 0;
}

int fds_block_info_read(const uint8_t *blk, size_t len, fds_block_info *out)
{
    blk_hdr h;
    if (!out)
        return FDS_ECORRUPT;
    int r = hdr_read(blk, len, &h);
    if (!r)
        *out = h.bi;
    return r;
}

static int block_check(const uint8_t *blk, size_t len, blk_hdr *h)
{
    int r = hdr_read(blk, len, h);
    if (r)
        return r;
    size_t body = h->bi.encoded_len - FDS__CRC_LEN;
    if (fds_crc32c(0, blk, body) != get_u32(blk + body))
        return FDS_ECORRUPT;
    return 0;
}

int fds_block_rebase(uint8_t *blk, size_t len, uint64_t new_doc_base)
{
    blk_hdr h;
    int r = block_check(blk, len, &h);
    if (r)
        return r;
    size_t body = h.bi.encoded_len - FDS__CRC_LEN;
    if (h.bi.format_version == FDS_BLOCK_FORMAT_V1) {
        put_u64(blk + 16, new_doc_base);
    } else {
        if (new_doc_base > UINT32_MAX)
            return FDS_EINVAL;
        put_u32(blk + 16, (uint32_t)new_doc_base);
    }
    put_u32(blk + body, fds_crc32c(0, blk, body));
    return 0;
}

int fds_block_set_dict(uint8_t *blk, size_t len, uint32_t dict_id)
{
    blk_hdr h;
    int r = block_check(blk, len, &h);
    if (r)
        return r;
    if (fds_codec_uses_dict(h.bi.codec) != (dict_id != 0))
        return FDS_EINVAL;
    size_t body = h.bi.encoded_len - FDS__CRC_LEN;
    put_u32(blk + 8, dict_id);
    put_u32(blk + body, fds_crc32c(0, blk, body));
    return 0;
}

/* Doc lengths of either version into off[0..nd] (prefix sums, ending at
 * n exactly); the bytes [p, end) must be exactly the lengths. */
static int lens_read(unsigned ver, const uint8_t *p, const uint8_t *end,
                     uint32_t nd, size_t n, uint32_t *off)
{
    uint64_t acc = 0;
    off[0] = 0;
    if (ver == FDS_BLOCK_FORMAT_V1) {
        for (uint32_t i = 0; i < nd; i++) {
            uint32_t l;
            if (get_varint(&p, end, &l))
                return FDS_ECORRUPT;
            acc += l;
            if (acc > n)
                return FDS_ECORRUPT;
            off[i + 1] = (uint32_t)acc;
        }
        return acc == n && p == end ? 0 : FDS_ECORRUPT;
    }
    uint32_t mn;
    if (get_varint(&p, end, &mn) || p >= end || *p > 32)
        return FDS_ECORRUPT;
    unsigned w = *p++;
    if ((uint64_t)(end - p) != ((uint64_t)nd * w + 7) / 8)
        return FDS_ECORRUPT;
    uint64_t mask = (1ull << w) - 1, bitbuf = 0;
    unsigned bits = 0;
    for (uint32_t i = 0; i < nd; i++) {
        while (bits < w) {
            bitbuf |= (uint64_t)*p++ << bits;
            bits += 8;
        }
        acc += mn + (bitbuf & mask);
        bitbuf = w < 64 ? bitbuf >> w : 0;
        bits -= w;
        if (acc > n)
            return FDS_ECORRUPT;
        off[i + 1] = (uint32_t)acc;
    }
    return acc == n ? 0 : FDS_ECORRUPT;
}

/* zstd: decode whole zstd blocks until at least `need` bytes are out.
 * Full decodes (need == n) use the one-shot API and must end the frame. */
static int dec_zstd(fds_codec_ctx *c, const fds_dict *dict, unsigned ver,
                    const uint8_t *src, size_t slen, uint8_t *dst, size_t n,
                    size_t need, size_t *done)
{
    ZSTD_DCtx *z = c->dctx;
    ZSTD_format_e fmt = ver >= FDS_BLOCK_FORMAT_V2 ? ZSTD_f_zstd1_magicless
                                                   : ZSTD_f_zstd1;
    if (fmt != c->dfmt) {
        if (ZSTD_isError(ZSTD_DCtx_setParameter(z, ZSTD_d_format, fmt)))
            return FDS_ENOMEM;
        c->dfmt = fmt;
    }
    if (need >= n) {
        size_t r = dict ? ZSTD_decompress_usingDDict(z, dst, n, src, slen,
                                                     dict->ddict)
                        : ZSTD_decompressDCtx(z, dst, n, src, slen);
        if (ZSTD_isError(r) || r != n)
            return FDS_ECORRUPT;
        *done = n;
        return 0;
    }
    size_t r = dict ? ZSTD_decompressBegin_usingDDict(z, dict->ddict)
                    : ZSTD_decompressBegin(z);
    if (ZSTD_isError(r))
        return FDS_ECORRUPT;
    size_t ipos = 0, opos = 0;
    while (opos < need) {
        size_t want = ZSTD_nextSrcSizeToDecompress(z);
        if (want == 0 || want > slen - ipos)
            return FDS_ECORRUPT; /* frame ended or truncated too early */
        r = ZSTD_decompressContinue(z, dst + opos, n - opos, src + ipos, want);
        if (ZSTD_isError(r))
            return FDS_ECORRUPT;
        ipos += want;
        opos += r;
    }
    *done = opos;
    return 0;
}

/* Raw inflate with optional preset dict into dst[0, need); when `full`, the
 * stream must end exactly at n bytes. */
static int dec_inflate_one(fds_codec_ctx *c, const uint8_t *dict, size_t dlen,
                           const uint8_t *src, size_t slen, uint8_t *dst,
                           size_t n, size_t need, bool full)
{
    int r = ctx_inflate(c);
    if (r)
        return r;
    if (dlen && inflateSetDictionary(&c->inf, dict, (uInt)dlen) != Z_OK)
        return FDS_ECORRUPT;
    c->inf.next_in = (Bytef *)(uintptr_t)src;
    c->inf.avail_in = (uInt)slen;
    c->inf.next_out = dst;
    if (full) {
        c->inf.avail_out = (uInt)n;
        int z = inflate(&c->inf, Z_FINISH);
        if (z != Z_STREAM_END || c->inf.total_out != n || c->inf.avail_in != 0)
            return FDS_ECORRUPT;
        return 0;
    }
    c->inf.avail_out = (uInt)need;
    int z = inflate(&c->inf, Z_SYNC_FLUSH);
    if ((z != Z_OK && z != Z_STREAM_END && z != Z_BUF_ERROR) ||
        c->inf.total_out != need)
        return FDS_ECORRUPT;
    return 0;
}

/* Lucene layout: decode the dict and the sub-blocks overlapping [lo, hi)
 * (an empty range selects the sub-block holding lo).  Every sub-block
 * length is parsed, so the payload must end exactly after the last one. */
static int dec_lucene(fds_codec_ctx *c, const uint8_t *src, size_t slen,
                      uint8_t *dst, size_t n, size_t lo, size_t hi,
                      size_t *win_lo, size_t *win_hi, size_t *decoded)
{
    const uint8_t *p = src, *end = src + slen;
    uint32_t dict_len, blk_len, clen;
    if (get_varint(&p, end, &dict_len) || get_varint(&p, end, &blk_len))
        return FDS_ECORRUPT;
    size_t exp_dict = n / (FDS_LUCENE_NUM_SUB_BLOCKS * FDS_LUCENE_DICT_SIZE_FACTOR);
    size_t exp_blk = (n - exp_dict + FDS_LUCENE_NUM_SUB_BLOCKS - 1) /
                     FDS_LUCENE_NUM_SUB_BLOCKS;
    if (dict_len != exp_dict || blk_len != exp_blk)
        return FDS_ECORRUPT;
    if (get_varint(&p, end, &clen) || clen > (size_t)(end - p))
        return FDS_ECORRUPT;
    int r = dec_inflate_one(c, NULL, 0, p, clen, dst, dict_len, dict_len, true);
    if (r)
        return r;
    p += clen;
    if (n > 0 && lo >= n)
        lo = n - 1;
    if (hi <= lo)
        hi = lo + 1;
    size_t dec = dict_len, wlo = SIZE_MAX, whi = dict_len;
    for (size_t start = dict_len; start < n; start += blk_len) {
        size_t len = n - start < blk_len ? n - start : blk_len;
        if (get_varint(&p, end, &clen) || clen > (size_t)(end - p))
            return FDS_ECORRUPT;
        if (start < hi && start + len > lo) {
            r = dec_inflate_one(c, dst, dict_len, p, clen, dst + start, len,
                                len, true);
            if (r)
                return r;
            if (wlo == SIZE_MAX)
                wlo = start;
            whi = start + len;
            dec += len;
        }
        p += clen;
    }
    if (p != end)
        return FDS_ECORRUPT;
    *win_lo = (wlo == SIZE_MAX || wlo == dict_len) ? 0 : wlo;
    *win_hi = whi;
    *decoded = dec;
    return 0;
}

static int block_decode(fds_codec_ctx *ctx, const uint8_t *blk, size_t len,
                        const fds_dict *dict, uint32_t upto_doc, bool window,
                        fds_block_view *out)
{
    if (!ctx || !blk || !out)
        return FDS_EINVAL;
    blk_hdr h;
    int r = block_check(blk, len, &h);
    if (r)
        return r;
    const fds_block_info bi = h.bi;
    if (fds_codec_uses_dict(bi.codec)) {
        if (!dict || dict->codec != bi.codec || dict->id != bi.dict_id ||
            dict->hash != h.dict_hash)
            return FDS_EDICT;
    } else {
        dict = NULL;
    }
    uint32_t nd = bi.ndocs;
    size_t n = bi.raw_len;
    if ((r = ctx_reserve(ctx, n, (size_t)nd + 1)) != 0)
        return r;
    const uint8_t *lp = blk + h.lens_off, *le = lp + h.lens_len;
    uint32_t *off = ctx->offsets;
    if ((r = lens_read(bi.format_version, lp, le, nd, n, off)) != 0)
        return r;

    if (upto_doc >= nd)
        upto_doc = nd - 1;
    size_t need = off[upto_doc + 1];
    /* zstd: a doc that starts at or after the last sub-block's nominal
     * start (raw_len * (nsub - 1) / nsub; the cut is the first doc
     * boundary there) needs the whole frame, which the one-shot call
     * decodes faster than block by block.  Only speed depends on it. */
    unsigned nsub = blk[6];
    if ((bi.codec == FDS_CODEC_ZSTD || bi.codec == FDS_CODEC_ZSTD_NO_DICT) &&
        nsub > 0 && off[upto_doc] >= (uint64_t)n * (nsub - 1) / nsub)
        need = n;
    const uint8_t *pay = le;
    size_t pay_len = h.pay_len;
    uint8_t *dst = ctx->raw;
    size_t done = 0, wlo = 0, whi = 0;
    switch (bi.codec) {
    case FDS_CODEC_LZ4:
        if (n == 0) {
            if (pay_len != 0)
                return FDS_ECORRUPT;
        } else if (need >= n) {
            int d = LZ4_decompress_safe((const char *)pay, (char *)dst,
                                        (int)pay_len, (int)n);
            if (d < 0 || (size_t)d != n)
                return FDS_ECORRUPT;
            done = n;
        } else if (need > 0) {
            int d = LZ4_decompress_safe_partial((const char *)pay, (char *)dst,
                                                (int)pay_len, (int)need, (int)n);
            if (d < 0 || (size_t)d < need)
                return FDS_ECORRUPT;
            done = (size_t)d;
        }
        whi = done;
        break;
    case FDS_CODEC_ZSTD:
    case FDS_CODEC_ZSTD_NO_DICT:
        r = dec_zstd(ctx, dict, bi.format_version, pay, pay_len, dst, n, need,
                     &done);
        whi = done;
        break;
    case FDS_CODEC_DEFLATE:
        r = dec_inflate_one(ctx, dict->zbytes, dict->zlen, pay, pay_len, dst,
                            n, need, need >= n);
        done = whi = need;
        break;
    default: {
        size_t lo = window ? off[upto_doc] : 0;
        r = dec_lucene(ctx, pay, pay_len, dst, n, lo, need, &wlo, &whi, &done);
        break;
    }
    }
    if (r)
        return r;
    /* Docs entirely inside [wlo, whi). */
    uint32_t first = 0;
    if (wlo > 0) {
        uint32_t a = 0, b = nd; /* first doc with off >= wlo */
        while (a < b) {
            uint32_t m = a + (b - a) / 2;
            if (off[m] < wlo) a = m + 1; else b = m;
        }
        first = a;
    }
    uint32_t a = 0, b = nd; /* count of docs with off[d+1] <= whi */
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (off[m + 1] <= whi) a = m + 1; else b = m;
    }
    out->raw = dst;
    out->offsets = off;
    out->ndocs = nd;
    out->decoded_docs = a;
    out->first_doc = first > a ? a : first;
    out->decoded_bytes = done;
    out->raw_len = n;
    return 0;
}

int fds_block_decode(fds_codec_ctx *ctx, const uint8_t *blk, size_t len,
                     const fds_dict *dict, uint32_t upto_doc,
                     fds_block_view *out)
{
    return block_decode(ctx, blk, len, dict, upto_doc, false, out);
}

int fds_block_decode_doc(fds_codec_ctx *ctx, const uint8_t *blk, size_t len,
                         const fds_dict *dict, uint32_t doc,
                         fds_block_view *out)
{
    fds_block_info bi;
    int r = fds_block_info_read(blk, len, &bi);
    if (r)
        return r;
    if (doc >= bi.ndocs)
        return FDS_EINVAL;
    return block_decode(ctx, blk, len, dict, doc, true, out);
}

int fds_block_verify(const uint8_t *blk, size_t len)
{
    blk_hdr h;
    return block_check(blk, len, &h);
}
