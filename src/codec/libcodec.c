/*
 * libcodec.c: libfieldstore-codec, the public C ABI of the block codec
 * (include/fieldstore/codec.h) as a thin layer over codec.c.
 *
 * Why this file exists: codec.c is the server's internal interface (fds_*
 * names, fds_codec_params that also drive block cutting, a per-thread
 * context, views into scratch memory).  A program outside the server (a
 * Lucene StoredFieldsFormat through JNI) needs a small, frozen surface
 * instead: fdsc_* names with symbol version FDSC_1.0, caller-owned output
 * buffers, explicit contexts and no global state, and a checked parameter
 * struct whose every field has its effect.  This file checks arguments,
 * translates types and copies decoded documents out of the context's
 * scratch; codec.c does all the compression and the block format, so the
 * library writes and reads exactly the server's blocks.
 *
 * Only the functions marked FDSC_API are exported: the library is compiled
 * with -fvisibility=hidden and linked with fieldstore-codec.map.
 */
#include "codec.h"

#include <fieldstore/codec.h>
#include <stdlib.h>
#include <string.h>

/* The public codes are the internal ones; the ids are the header byte. */
#define FDSC__SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(FDSC__SAME(FDSC_ENOMEM, FDS_ENOMEM) &&
                   FDSC__SAME(FDSC_ECORRUPT, FDS_ECORRUPT) &&
                   FDSC__SAME(FDSC_EDICT, FDS_EDICT) &&
                   FDSC__SAME(FDSC_EINVAL, FDS_EINVAL) &&
                   FDSC__SAME(FDSC_ERANGE, FDS_ERANGE) &&
                   FDSC__SAME(FDSC_EUNSUPPORTED, FDS_EUNSUPPORTED) &&
                   FDSC__SAME(FDSC_ETOOBIG, FDS_ETOOBIG),
               "public error codes follow fds_error.h");
_Static_assert(FDSC_CODEC_LZ4 == (int)FDS_CODEC_LZ4 &&
                   FDSC_CODEC_ZSTD == (int)FDS_CODEC_ZSTD &&
                   FDSC_CODEC_ZSTD_NO_DICT == (int)FDS_CODEC_ZSTD_NO_DICT &&
                   FDSC_CODEC_DEFLATE == (int)FDS_CODEC_DEFLATE &&
                   FDSC_CODEC_LUCENE_DEFLATE == (int)FDS_CODEC_LUCENE_DEFLATE,
               "public codec ids are the block header's codec byte");
_Static_assert(FDSC_BLOCK_RAW_LIMIT == FDS_BLOCK_RAW_LIMIT &&
                   FDSC_BLOCK_DOCS_LIMIT == FDS_BLOCK_DOCS_LIMIT &&
                   FDSC_SUB_BLOCKS_MAX == FDS_ZSTD_SUB_BLOCKS_MAX &&
                   FDSC_ZSTD_LEVEL_MIN == FDS_ZSTD_LEVEL_MIN &&
                   FDSC_ZSTD_LEVEL_MAX == FDS_ZSTD_LEVEL_MAX &&
                   FDSC_ZSTD_LEVEL_DEFAULT == FDS_ZSTD_LEVEL_DEFAULT,
               "public limits are the codec's");
/* fdsc_params of ABI 1.0: size, codec, level, sub_blocks. */
#define FDSC__PARAMS_V1_SIZE 16u
_Static_assert(sizeof(fdsc_params) == FDSC__PARAMS_V1_SIZE,
               "fdsc_params 1.0 layout");
_Static_assert(sizeof(fdsc_block_info) == 32, "fdsc_block_info 1.0 layout");

struct fdsc_dict {
    fds_dict *d;
    int level; /* zstd level of the CDict; 0 for DEFLATE */
};

struct fdsc_ctx {
    fds_codec_ctx *c;
    uint8_t *gather; /* fdsc_block_encode_docs: documents end to end */
    size_t gather_cap;
    size_t last_decoded; /* bytes decompressed by the last decode */
};

/* The internal result as a public code: the values are shared, and a code
 * the public header does not list cannot come from codec.c's entry points
 * used here; should one appear it is reported as a damaged block. */
static int fdsc__code(int r)
{
    switch (r) {
    case FDS_OK:
    case FDS_ENOMEM:
    case FDS_ECORRUPT:
    case FDS_EDICT:
    case FDS_EINVAL:
    case FDS_ERANGE:
    case FDS_EUNSUPPORTED:
    case FDS_ETOOBIG: return r;
    }
    return FDSC_ECORRUPT;
}

static int fdsc__codec_valid(int codec)
{
    return codec >= FDSC_CODEC_LZ4 && codec <= FDSC_CODEC_LUCENE_DEFLATE;
}

FDSC_API unsigned fdsc_version(void) { return FDSC_VERSION_NUMBER; }

FDSC_API const char *fdsc_strerror(int code)
{
    switch (code) {
    case FDSC_OK: return "ok";
    case FDSC_ENOMEM: return "out of memory";
    case FDSC_ECORRUPT: return "corrupt block (checksum, header or payload)";
    case FDSC_EDICT: return "dictionary missing, or not the block's";
    case FDSC_EINVAL: return "invalid argument";
    case FDSC_ERANGE: return "output buffer too small";
    case FDSC_EUNSUPPORTED: return "not supported by this build";
    case FDSC_ETOOBIG: return "block past its size or document limit";
    }
    return "unknown error";
}

/* ---- codecs ------------------------------------------------------------ */

FDSC_API int fdsc_codec_from_name(const char *name, fdsc_codec *out)
{
    fds_codec_id id;
    if (!out || fds_codec_from_name(name, &id))
        return FDSC_EINVAL;
    *out = (fdsc_codec)id;
    return FDSC_OK;
}

FDSC_API const char *fdsc_codec_name(int codec)
{
    return fdsc__codec_valid(codec) ? fds_codec_name((fds_codec_id)codec)
                                    : "unknown";
}

FDSC_API int fdsc_codec_uses_dict(int codec)
{
    return fdsc__codec_valid(codec) && fds_codec_uses_dict((fds_codec_id)codec);
}

FDSC_API int fdsc_block_size_default(int codec, uint32_t *bytes,
                                     uint32_t *max_docs)
{
    if (!fdsc__codec_valid(codec))
        return FDSC_EINVAL;
    fds_codec_params p;
    fds_codec_params_default((fds_codec_id)codec, &p);
    if (bytes)
        *bytes = p.block_size;
    if (max_docs)
        *max_docs = p.max_docs_per_block;
    return FDSC_OK;
}

/* ---- dictionaries ------------------------------------------------------ */

FDSC_API size_t fdsc_dict_size_default(int codec)
{
    switch (codec) {
    case FDSC_CODEC_ZSTD: return FDS_DICT_SIZE_DEFAULT;
    case FDSC_CODEC_DEFLATE: return FDS_DEFLATE_DICT_MAX;
    }
    return 0;
}

FDSC_API int fdsc_dict_train(int codec, const uint8_t *samples,
                             const size_t *sample_lens, uint32_t nsamples,
                             size_t dict_capacity, uint8_t *dict_out,
                             size_t *dict_len)
{
    if (!fdsc_codec_uses_dict(codec))
        return FDSC_EINVAL;
    return fdsc__code(fds_dict_train((fds_codec_id)codec, samples, sample_lens,
                                     (unsigned)nsamples, dict_capacity,
                                     dict_out, dict_len));
}

FDSC_API int fdsc_dict_create(int codec, int level, uint32_t dict_id,
                              const uint8_t *bytes, size_t len, fdsc_dict **out)
{
    if (!out || !fdsc_codec_uses_dict(codec) ||
        (codec == FDSC_CODEC_DEFLATE && level != 0))
        return FDSC_EINVAL;
    fdsc_dict *d = calloc(1, sizeof *d);
    if (!d)
        return FDSC_ENOMEM;
    int r =
        fds_dict_create(dict_id, (fds_codec_id)codec, level, bytes, len, &d->d);
    if (r) {
        free(d);
        return fdsc__code(r);
    }
    d->level = level;
    *out = d;
    return FDSC_OK;
}

FDSC_API void fdsc_dict_free(fdsc_dict *dict)
{
    if (!dict)
        return;
    fds_dict_free(dict->d);
    free(dict);
}

FDSC_API uint32_t fdsc_dict_id(const fdsc_dict *dict)
{
    return dict ? fds_dict_id(dict->d) : 0;
}

FDSC_API int fdsc_dict_codec(const fdsc_dict *dict)
{
    return dict ? (int)fds_dict_codec(dict->d) : 0;
}

FDSC_API int fdsc_dict_level(const fdsc_dict *dict)
{
    return dict ? dict->level : 0;
}

/* ---- context ------------------------------------------------------------ */

FDSC_API int fdsc_ctx_create(fdsc_ctx **out)
{
    if (!out)
        return FDSC_EINVAL;
    if (fds_codec_zstd_check(NULL))
        return FDSC_EUNSUPPORTED;
    fdsc_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return FDSC_ENOMEM;
    x->c = fds_codec_ctx_create();
    if (!x->c) {
        free(x);
        return FDSC_ENOMEM;
    }
    *out = x;
    return FDSC_OK;
}

FDSC_API void fdsc_ctx_free(fdsc_ctx *ctx)
{
    if (!ctx)
        return;
    fds_codec_ctx_free(ctx->c);
    free(ctx->gather);
    free(ctx);
}

FDSC_API size_t fdsc_ctx_last_decoded_bytes(const fdsc_ctx *ctx)
{
    return ctx ? ctx->last_decoded : 0;
}

/* ---- encode ------------------------------------------------------------- */

FDSC_API int fdsc_params_init(fdsc_params *p, int codec)
{
    if (!p || !fdsc__codec_valid(codec))
        return FDSC_EINVAL;
    memset(p, 0, sizeof *p);
    p->size = sizeof *p;
    p->codec = codec;
    return FDSC_OK;
}

/*
 * The internal params of a checked public one: every field in range for its
 * codec (see fdsc_params in the public header), `dict` present exactly when
 * the codec uses one, a ZSTD level that is the dictionary's.  Returns 0,
 * FDSC_EINVAL or FDSC_EDICT.
 */
static int fdsc__params(const fdsc_params *p, const fdsc_dict *dict,
                        fds_codec_params *out)
{
    if (!p || p->size != FDSC__PARAMS_V1_SIZE || !fdsc__codec_valid(p->codec))
        return FDSC_EINVAL;
    fds_codec_id id = (fds_codec_id)p->codec;
    fds_codec_params_default(id, out);
    int zstd = id == FDS_CODEC_ZSTD || id == FDS_CODEC_ZSTD_NO_DICT;
    if (zstd ? p->sub_blocks > FDSC_SUB_BLOCKS_MAX : p->sub_blocks != 0)
        return FDSC_EINVAL;
    if (p->sub_blocks)
        out->sub_blocks = p->sub_blocks;
    if (p->level != 0 && (!zstd || p->level < FDSC_ZSTD_LEVEL_MIN ||
                          p->level > FDSC_ZSTD_LEVEL_MAX))
        return FDSC_EINVAL;
    if (fds_codec_uses_dict(id)) {
        if (!dict || fds_dict_codec(dict->d) != id)
            return FDSC_EDICT;
    } else if (dict) {
        return FDSC_EINVAL;
    }
    if (id == FDS_CODEC_ZSTD) {
        if (p->level != 0 && p->level != dict->level)
            return FDSC_EINVAL;
        out->level = dict->level;
    } else if (id == FDS_CODEC_ZSTD_NO_DICT && p->level != 0) {
        out->level = p->level;
    }
    return 0;
}

FDSC_API size_t fdsc_block_bound(const fdsc_params *p, size_t raw_len,
                                 uint32_t ndocs)
{
    if (!p || p->size != FDSC__PARAMS_V1_SIZE || !fdsc__codec_valid(p->codec))
        return 0;
    fds_codec_params ip;
    fds_codec_params_default((fds_codec_id)p->codec, &ip);
    if (p->sub_blocks)
        ip.sub_blocks = p->sub_blocks;
    return fds_block_bound(&ip, raw_len, ndocs);
}

FDSC_API int fdsc_block_encode(fdsc_ctx *ctx, const fdsc_params *p,
                               const fdsc_dict *dict, uint64_t doc_base,
                               const uint8_t *docs, const uint32_t *doc_lens,
                               uint32_t ndocs, uint8_t *dst, size_t dst_cap,
                               size_t *written)
{
    if (!ctx || !doc_lens || ndocs == 0 || !dst || !written)
        return FDSC_EINVAL;
    fds_codec_params ip;
    int r = fdsc__params(p, dict, &ip);
    if (r)
        return r;
    if (ndocs > FDSC_BLOCK_DOCS_LIMIT)
        return FDSC_ETOOBIG;
    uint64_t raw = 0;
    for (uint32_t i = 0; i < ndocs; i++)
        raw += doc_lens[i];
    if (raw > FDSC_BLOCK_RAW_LIMIT)
        return FDSC_ETOOBIG;
    if (raw && !docs)
        return FDSC_EINVAL;
    return fdsc__code(fds_block_encode(ctx->c, &ip, dict ? dict->d : NULL,
                                       doc_base, docs, doc_lens, ndocs, dst,
                                       dst_cap, written));
}

FDSC_API int fdsc_block_encode_docs(fdsc_ctx *ctx, const fdsc_params *p,
                                    const fdsc_dict *dict, uint64_t doc_base,
                                    const uint8_t *const *docs,
                                    const uint32_t *doc_lens, uint32_t ndocs,
                                    uint8_t *dst, size_t dst_cap,
                                    size_t *written)
{
    if (!ctx || !docs || !doc_lens || ndocs == 0)
        return FDSC_EINVAL;
    if (ndocs > FDSC_BLOCK_DOCS_LIMIT)
        return FDSC_ETOOBIG;
    uint64_t raw = 0;
    for (uint32_t i = 0; i < ndocs; i++) {
        if (doc_lens[i] && !docs[i])
            return FDSC_EINVAL;
        raw += doc_lens[i];
    }
    if (raw > FDSC_BLOCK_RAW_LIMIT)
        return FDSC_ETOOBIG;
    if (raw > ctx->gather_cap) {
        uint8_t *g = realloc(ctx->gather, (size_t)raw);
        if (!g)
            return FDSC_ENOMEM;
        ctx->gather = g;
        ctx->gather_cap = (size_t)raw;
    }
    size_t at = 0;
    for (uint32_t i = 0; i < ndocs; i++) {
        if (doc_lens[i])
            memcpy(ctx->gather + at, docs[i], doc_lens[i]);
        at += doc_lens[i];
    }
    return fdsc_block_encode(ctx, p, dict, doc_base, ctx->gather, doc_lens,
                             ndocs, dst, dst_cap, written);
}

/* ---- decode ------------------------------------------------------------- */

FDSC_API int fdsc_block_info_read(const uint8_t *blk, size_t len,
                                  fdsc_block_info *out)
{
    if (!blk || !out)
        return FDSC_EINVAL;
    fds_block_info bi;
    int r = fds_block_info_read(blk, len, &bi);
    if (r)
        return fdsc__code(r);
    memset(out, 0, sizeof *out);
    out->codec = (int32_t)bi.codec;
    out->dict_id = bi.dict_id;
    out->doc_base = bi.doc_base;
    out->ndocs = bi.ndocs;
    out->raw_len = bi.raw_len;
    out->encoded_len = bi.encoded_len;
    return FDSC_OK;
}

FDSC_API int fdsc_block_verify(const uint8_t *blk, size_t len)
{
    if (!blk)
        return FDSC_EINVAL;
    return fdsc__code(fds_block_verify(blk, len));
}

FDSC_API int fdsc_doc_decode(fdsc_ctx *ctx, const fdsc_dict *dict,
                             const uint8_t *blk, size_t len, uint32_t doc,
                             uint8_t *dst, size_t dst_cap, size_t *doc_len)
{
    if (!ctx || !blk || !doc_len || (dst_cap && !dst))
        return FDSC_EINVAL;
    fds_block_view v;
    int r =
        fds_block_decode_doc(ctx->c, blk, len, dict ? dict->d : NULL, doc, &v);
    if (r)
        return fdsc__code(r);
    /* codec.c promises docs [first_doc, decoded_docs); anything else would
     * be a damaged block that decoded short. */
    if (doc < v.first_doc || doc >= v.decoded_docs)
        return FDSC_ECORRUPT;
    ctx->last_decoded = v.decoded_bytes;
    size_t n = v.offsets[doc + 1] - v.offsets[doc];
    *doc_len = n;
    if (n > dst_cap)
        return FDSC_ERANGE;
    if (n)
        memcpy(dst, v.raw + v.offsets[doc], n);
    return FDSC_OK;
}

FDSC_API int fdsc_block_decode(fdsc_ctx *ctx, const fdsc_dict *dict,
                               const uint8_t *blk, size_t len, uint8_t *dst,
                               size_t dst_cap, uint32_t *offsets,
                               uint32_t offsets_cap, size_t *raw_len)
{
    if (!ctx || !blk || (dst_cap && !dst))
        return FDSC_EINVAL;
    fds_block_info bi;
    int r = fds_block_info_read(blk, len, &bi);
    if (r)
        return fdsc__code(r);
    if (bi.raw_len > dst_cap ||
        (offsets && (uint64_t)offsets_cap < (uint64_t)bi.ndocs + 1))
        return FDSC_ERANGE;
    fds_block_view v;
    r = fds_block_decode(ctx->c, blk, len, dict ? dict->d : NULL, UINT32_MAX,
                         &v);
    if (r)
        return fdsc__code(r);
    if (v.first_doc != 0 || v.decoded_docs != v.ndocs ||
        v.raw_len != bi.raw_len)
        return FDSC_ECORRUPT;
    ctx->last_decoded = v.decoded_bytes;
    if (v.raw_len)
        memcpy(dst, v.raw, v.raw_len);
    if (offsets)
        memcpy(offsets, v.offsets, ((size_t)v.ndocs + 1) * sizeof *offsets);
    if (raw_len)
        *raw_len = v.raw_len;
    return FDSC_OK;
}

/* ---- copying blocks ---------------------------------------------------- */

FDSC_API int fdsc_block_rebase(uint8_t *blk, size_t len, uint64_t doc_base)
{
    if (!blk)
        return FDSC_EINVAL;
    return fdsc__code(fds_block_rebase(blk, len, doc_base));
}

FDSC_API int fdsc_block_set_dict_id(uint8_t *blk, size_t len, uint32_t dict_id)
{
    if (!blk)
        return FDSC_EINVAL;
    return fdsc__code(fds_block_set_dict(blk, len, dict_id));
}
