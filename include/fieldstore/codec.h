/*
 * fieldstore/codec.h: libfieldstore-codec, fieldstore's stored-fields block
 * codec as a shared library with a stable C ABI.
 *
 * A block holds the stored bytes of consecutive documents (doc ids
 * doc_base .. doc_base+ndocs-1), compressed as one unit, with a header that
 * names its codec and dictionary (id and content hash) and a CRC-32C
 * checksum that every read verifies.  A one-document read decodes only as
 * far as the end of that document (partial decode).  This is the format the
 * fieldstore server writes (its layout is documented at the top of
 * src/codec/codec.c; docs/codec-library.md describes this API).
 *
 * Typical use (a Lucene StoredFieldsWriter/Reader pair):
 *   write: fdsc_dict_train() on sample documents, fdsc_dict_create() once,
 *          fdsc_ctx_create() per thread, then per block of documents
 *          fdsc_block_bound() + fdsc_block_encode();
 *   read:  fdsc_dict_create() once from the stored dictionary bytes,
 *          fdsc_block_info_read() to learn the block's doc count, size
 *          and dict id, then fdsc_doc_decode() per document.
 *
 * Conventions of every function below:
 *   - Errors: functions return an int, FDSC_OK (0) or a negative FDSC_E*
 *     code; fdsc_strerror() names a code.  On error, out-parameters are
 *     not set and an output buffer may hold partial bytes, except where a
 *     function says otherwise.
 *   - Buffers are caller-owned: the library never keeps a pointer to an input
 *     after the call returns (fdsc_dict_create copies the dictionary bytes),
 *     and writes only to output buffers the caller passes with their
 *     capacity.  Sizes are in bytes unless named otherwise.
 *   - No global state: everything lives in the handles below, created and
 *     freed by the caller (the one process-wide datum is the CRC-32C lookup
 *     table, constant, built once on first use under pthread_once).  An fdsc_dict is immutable once created and may be
 *     shared by any number of threads; an fdsc_ctx (scratch buffers and
 *     zstd/zlib/LZ4 contexts) is used by one thread at a time.
 *   - Handles are opaque; *_free(NULL) is a no-op.
 *
 * ABI: the library's SONAME is libfieldstore-codec.so.1 and every function
 * carries the symbol version FDSC_1.0 (GNU ld version script).  Changes in
 * ABI major 1 are additive only (new functions get a new symbol version;
 * existing signatures, enum values and struct layouts never change).
 *
 * Sources: zstd manual (lib/zstd.h of zstd 1.5: "Dictionary builder"
 * (ZDICT_trainFromBuffer), "Bulk processing dictionary API" (ZSTD_CDict,
 * ZSTD_DDict), "Buffer-less streaming decompression"); RFC 1951 (DEFLATE)
 * and zlib's deflateSetDictionary; Lucene 8.7+
 * org.apache.lucene.codecs.lucene87.DeflateWithPresetDictCompressionMode and
 * CompressingStoredFieldsWriter/Reader (chunks, partial decompression).
 */
#ifndef FIELDSTORE_CODEC_H
#define FIELDSTORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(FDSC_BUILDING_LIBRARY)
#define FDSC_API __attribute__((visibility("default")))
#else
#define FDSC_API
#endif

/* Version of this header; fdsc_version() gives the library's. */
#define FDSC_VERSION_MAJOR 1
#define FDSC_VERSION_MINOR 0
#define FDSC_VERSION_PATCH 0
#define FDSC_VERSION_NUMBER \
    (FDSC_VERSION_MAJOR * 10000 + FDSC_VERSION_MINOR * 100 + FDSC_VERSION_PATCH)

/* The library's version as MAJOR*10000 + MINOR*100 + PATCH (10000 = 1.0.0). */
FDSC_API unsigned fdsc_version(void);

/* ---- error codes ------------------------------------------------------- */

/* Values are fixed for ABI major 1. */
enum {
    FDSC_OK = 0,
    FDSC_ENOMEM = -1,       /* an allocation failed */
    FDSC_ECORRUPT = -3,     /* checksum mismatch, truncated or malformed block */
    FDSC_EDICT = -4,        /* dictionary missing, or not the block's (id or
                               content), or for another codec */
    FDSC_EINVAL = -5,       /* bad argument (NULL, 0 docs, unknown codec,
                               level out of range, doc past the block...) */
    FDSC_ERANGE = -8,       /* output buffer too small (the size needed is
                               reported where the function says so) */
    FDSC_EUNSUPPORTED = -13,/* valid but not supported by this build */
    FDSC_ETOOBIG = -14,     /* input past a named limit (FDSC_BLOCK_*_LIMIT) */
};

/* Static English name of an error code; never NULL ("unknown error" for a
 * code not listed above).  Thread-safe. */
FDSC_API const char *fdsc_strerror(int code);

/* ---- codecs ------------------------------------------------------------ */

/*
 * Codec ids.  The value is the codec byte of every block header, so it is
 * fixed forever.  Names are the index.codec names of the fieldstore server.
 *   FDSC_CODEC_LZ4            "default"   one LZ4 block, no dictionary
 *                             (Lucene's LZ4 FAST mode without its 16 KiB
 *                             preset dictionary)
 *   FDSC_CODEC_ZSTD           "ZSTD"      one zstd frame compressed with a
 *                             trained dictionary, cut into independently
 *                             decodable zstd blocks at doc boundaries
 *                             (sub_blocks), so a one-doc read stops early
 *   FDSC_CODEC_ZSTD_NO_DICT   "zstd_no_dict"  the same without dictionary
 *   FDSC_CODEC_DEFLATE        "best_compression"  raw DEFLATE, zlib level 6,
 *                             with the last <= 32 KiB of a trained dictionary
 *                             as preset dictionary
 *   FDSC_CODEC_LUCENE_DEFLATE "lucene_best_compression"  Lucene 8.7+
 *                             DeflateWithPresetDictCompressionMode: the
 *                             first raw_len/60 bytes of the block as preset
 *                             dictionary, 10 sub-blocks (no trained dict)
 */
typedef enum fdsc_codec {
    FDSC_CODEC_LZ4 = 1,
    FDSC_CODEC_ZSTD = 2,
    FDSC_CODEC_ZSTD_NO_DICT = 3,
    FDSC_CODEC_DEFLATE = 4,
    FDSC_CODEC_LUCENE_DEFLATE = 5,
} fdsc_codec;

/* Levels accepted for FDSC_CODEC_ZSTD and FDSC_CODEC_ZSTD_NO_DICT (zstd's
 * compression levels; other codecs ignore the level). */
#define FDSC_ZSTD_LEVEL_MIN 1
#define FDSC_ZSTD_LEVEL_MAX 19
#define FDSC_ZSTD_LEVEL_DEFAULT 3
/* Most zstd sub-blocks per block (fdsc_params.sub_blocks). */
#define FDSC_SUB_BLOCKS_MAX 64u
/* Hard limits of one block: more raw bytes or docs are FDSC_ETOOBIG on
 * encode and FDSC_ECORRUPT on decode. */
#define FDSC_BLOCK_RAW_LIMIT (256u * 1024u * 1024u) /* bytes, uncompressed */
#define FDSC_BLOCK_DOCS_LIMIT (1u << 20)            /* docs */

/* index.codec name -> id: "default" or "lz4", "ZSTD" or "zstd",
 * "zstd_no_dict", "best_compression", "lucene_best_compression".
 * Returns FDSC_OK and sets *out, or FDSC_EINVAL (unknown name, NULL). */
FDSC_API int fdsc_codec_from_name(const char *name, fdsc_codec *out);

/* id -> canonical name ("default", "ZSTD", "zstd_no_dict",
 * "best_compression", "lucene_best_compression"); "unknown" for any other
 * value.  Static string, never NULL. */
FDSC_API const char *fdsc_codec_name(int codec);

/* 1 when blocks of this codec need a dictionary (ZSTD, DEFLATE), else 0
 * (also 0 for an unknown id). */
FDSC_API int fdsc_codec_uses_dict(int codec);

/*
 * The block size the fieldstore server cuts blocks at for this codec, as
 * advice for a caller that cuts its own blocks: *bytes of raw documents
 * (16384; 491520 for LUCENE_DEFLATE, Lucene 8.7+ BEST_COMPRESSION's chunk)
 * and at most *max_docs documents (128; 4096 for LUCENE_DEFLATE).  Either
 * pointer may be NULL.  Returns FDSC_OK or FDSC_EINVAL (unknown codec).
 */
FDSC_API int fdsc_block_size_default(int codec, uint32_t *bytes,
                                     uint32_t *max_docs);

/* ---- dictionaries ------------------------------------------------------ */

/*
 * Recommended dictionary capacity for fdsc_dict_train(), in bytes: 65536 for
 * ZSTD, 32768 for DEFLATE (the zlib window), 0 for codecs without a
 * dictionary (or an unknown id).
 */
FDSC_API size_t fdsc_dict_size_default(int codec);

/*
 * Train a dictionary for `codec` (ZSTD or DEFLATE) from `nsamples` sample
 * documents laid end to end in `samples`, sample i being sample_lens[i]
 * bytes (so `samples` holds the sum of sample_lens bytes).  zstd manual,
 * "Dictionary builder": ZDICT_trainFromBuffer(); a few hundred documents
 * and about 100x the dictionary size of samples train well.  For DEFLATE
 * the result is the last <= 32 KiB of the content of such a dictionary
 * (its most useful bytes, zlib's preset dictionary).
 * Writes at most `dict_capacity` bytes to the caller's `dict_out` and the
 * size to *dict_len.
 * Returns FDSC_OK; FDSC_EINVAL (codec without a dictionary, NULL pointer,
 * nsamples < 8, dict_capacity < 256, or samples zstd cannot train on: too
 * few or too small); FDSC_ENOMEM.
 */
FDSC_API int fdsc_dict_train(int codec, const uint8_t *samples,
                             const size_t *sample_lens, uint32_t nsamples,
                             size_t dict_capacity, uint8_t *dict_out,
                             size_t *dict_len);

/*
 * A digested dictionary: the bytes digested once for compression and for
 * decompression (zstd manual, "Bulk processing dictionary API": one
 * ZSTD_CDict at `level` and one ZSTD_DDict; for DEFLATE the preset bytes).
 * Immutable, shareable by threads; owns a copy of the bytes.
 */
typedef struct fdsc_dict fdsc_dict;

/*
 * Create a digested dictionary from `len` bytes at `bytes` (copied; the
 * caller's buffer may be freed after the call).  `codec` is ZSTD or
 * DEFLATE; `level` is the zstd level blocks are compressed at with this
 * dictionary (FDSC_ZSTD_LEVEL_MIN..MAX) for ZSTD, and 0 for DEFLATE (whose
 * blocks are always zlib level 6, the format's).  `dict_id`
 * (>= 1) is the caller's name for the dictionary (e.g. one per segment):
 * every block encoded with it records the id and a CRC-32C of the bytes,
 * and decoding with a dictionary of another id or other bytes is
 * FDSC_EDICT, never wrong output.
 * Returns FDSC_OK and sets *out (free with fdsc_dict_free); FDSC_EINVAL
 * (codec, level, dict_id 0, len 0, NULL); FDSC_ENOMEM; FDSC_EUNSUPPORTED
 * (the linked zstd is not the one the library was built with).
 */
FDSC_API int fdsc_dict_create(int codec, int level, uint32_t dict_id,
                              const uint8_t *bytes, size_t len,
                              fdsc_dict **out);
FDSC_API void fdsc_dict_free(fdsc_dict *dict);
/* The dictionary's id, codec and level as given to fdsc_dict_create (0 for
 * a NULL dict). */
FDSC_API uint32_t fdsc_dict_id(const fdsc_dict *dict);
FDSC_API int fdsc_dict_codec(const fdsc_dict *dict);
FDSC_API int fdsc_dict_level(const fdsc_dict *dict);

/* ---- context ------------------------------------------------------------ */

/* Scratch buffers and zstd/zlib/LZ4 contexts, reused across calls; one
 * thread at a time (create one per thread). */
typedef struct fdsc_ctx fdsc_ctx;

/* Returns FDSC_OK and sets *out (free with fdsc_ctx_free); FDSC_EINVAL
 * (out NULL); FDSC_ENOMEM; FDSC_EUNSUPPORTED (zstd version mismatch). */
FDSC_API int fdsc_ctx_create(fdsc_ctx **out);
FDSC_API void fdsc_ctx_free(fdsc_ctx *ctx);

/* Bytes the last successful decode on `ctx` actually decompressed (<= the
 * block's raw_len; less when a one-doc decode stopped early); 0 before any
 * decode or for NULL. */
FDSC_API size_t fdsc_ctx_last_decoded_bytes(const fdsc_ctx *ctx);

/* ---- encode ------------------------------------------------------------- */

/*
 * How a block is compressed.  Set with fdsc_params_init() first, then change
 * fields: the struct may grow at its end in a later minor version, with
 * `size` telling the library which fields the caller knows.
 */
typedef struct fdsc_params {
    uint32_t size;       /* sizeof(fdsc_params), set by fdsc_params_init */
    int32_t codec;       /* fdsc_codec */
    int32_t level;       /* zstd level FDSC_ZSTD_LEVEL_MIN..MAX, or 0 =
                            default: FDSC_ZSTD_LEVEL_DEFAULT for
                            ZSTD_NO_DICT, the dictionary's level for ZSTD
                            (any other level is FDSC_EINVAL there, as a
                            digested dictionary has one level); must be 0
                            for the other codecs */
    uint32_t sub_blocks; /* ZSTD / ZSTD_NO_DICT: zstd blocks a block is cut
                            into at doc boundaries, 1..FDSC_SUB_BLOCKS_MAX
                            (1 = one zstd block, like the zstd CLI); 0 = the
                            server's default (6); must be 0 for the other
                            codecs */
} fdsc_params;

/* Fill *p with the defaults for `codec` (level 0, sub_blocks 0: defaults).
 * Returns FDSC_OK or FDSC_EINVAL (unknown codec, p NULL). */
FDSC_API int fdsc_params_init(fdsc_params *p, int codec);

/*
 * Upper bound, in bytes, of an encoded block holding `ndocs` documents of
 * `raw_len` bytes in all, for these params (header, doc lengths, worst-case
 * payload, checksum).  0 for invalid params.
 */
FDSC_API size_t fdsc_block_bound(const fdsc_params *p, size_t raw_len,
                                 uint32_t ndocs);

/*
 * Encode one block: `ndocs` (>= 1) documents laid end to end in `docs`,
 * document i being doc_lens[i] bytes (a document may be empty), with first
 * doc id `doc_base` (recorded in the header; fdsc_block_info returns it).
 * `dict` is required for ZSTD and DEFLATE (its codec must be p->codec) and
 * must be NULL for the other codecs.  ZSTD blocks are compressed at the
 * dictionary's level (p->level must be 0 or that level).
 * Writes the block to the caller's `dst` (capacity dst_cap; at least
 * fdsc_block_bound() bytes always fits) and its size to *written.
 * Returns FDSC_OK; FDSC_EINVAL (NULL, ndocs 0, a p->size this library does
 * not know, a field of *p out of its range, dict given for a codec without
 * one); FDSC_EDICT (dict missing or of another codec);
 * FDSC_ETOOBIG (more than FDSC_BLOCK_RAW_LIMIT bytes or
 * FDSC_BLOCK_DOCS_LIMIT docs); FDSC_ERANGE (dst_cap too small);
 * FDSC_ENOMEM.
 */
FDSC_API int fdsc_block_encode(fdsc_ctx *ctx, const fdsc_params *p,
                               const fdsc_dict *dict, uint64_t doc_base,
                               const uint8_t *docs, const uint32_t *doc_lens,
                               uint32_t ndocs, uint8_t *dst, size_t dst_cap,
                               size_t *written);

/*
 * fdsc_block_encode() from a list of separate documents: document i is
 * doc_lens[i] bytes at docs[i] (docs[i] may be NULL when doc_lens[i] is 0).
 * The documents are gathered into the context's scratch buffer first.
 * Same arguments otherwise, same results.
 */
FDSC_API int fdsc_block_encode_docs(fdsc_ctx *ctx, const fdsc_params *p,
                                    const fdsc_dict *dict, uint64_t doc_base,
                                    const uint8_t *const *docs,
                                    const uint32_t *doc_lens, uint32_t ndocs,
                                    uint8_t *dst, size_t dst_cap,
                                    size_t *written);

/* ---- decode ------------------------------------------------------------- */

/* What a block header says.  The layout is fixed for ABI major 1. */
typedef struct fdsc_block_info {
    int32_t codec;        /* fdsc_codec */
    uint32_t dict_id;     /* the dictionary's id; 0 when the codec uses none */
    uint64_t doc_base;    /* first doc id */
    uint32_t ndocs;       /* documents in the block, >= 1 */
    uint32_t raw_len;     /* bytes of all documents, uncompressed: a buffer of
                             raw_len bytes holds any one of them, or all */
    uint32_t encoded_len; /* bytes of the whole block, header to checksum
                             (the block may be followed by other bytes) */
    uint32_t reserved;    /* 0 */
} fdsc_block_info;

/*
 * Read and check a block header at `blk` (`len` bytes available; the block
 * is the first encoded_len of them): magic, format version, codec, sizes
 * within `len`.  Does not verify the checksum (see fdsc_block_verify).
 * Returns FDSC_OK and fills *out, or FDSC_ECORRUPT; FDSC_EINVAL (NULL).
 */
FDSC_API int fdsc_block_info_read(const uint8_t *blk, size_t len,
                                  fdsc_block_info *out);

/*
 * The checksum check without decoding: the header as
 * fdsc_block_info_read() checks it, and the CRC-32C (Castagnoli) of the
 * block's bytes before its last 4 against those 4 bytes.  For copying blocks unchanged (merges) and
 * for integrity checks (Lucene's CheckIndex, CodecUtil.checksumEntireFile).
 * Returns FDSC_OK, FDSC_ECORRUPT, FDSC_EINVAL (blk NULL).
 */
FDSC_API int fdsc_block_verify(const uint8_t *blk, size_t len);

/*
 * Decode document `doc` (0-based within the block, < ndocs) of the block at
 * `blk` into the caller's `dst`, decompressing only as far as the codec
 * allows: up to the zstd sub-block / DEFLATE / LZ4 prefix ending at the
 * document, or, for LUCENE_DEFLATE, the preset dictionary and the
 * sub-blocks the document overlaps (Lucene's
 * DeflateWithPresetDictCompressionMode.decompress(offset, length)).  The
 * checksum of the whole block is verified first.  `dict` is the
 * dictionary the block names (fdsc_block_info_read's dict_id); it is not
 * used, and may be NULL, for blocks of codecs without one.
 * Sets *doc_len to the document's size; writes it to dst when dst_cap is
 * large enough (info.raw_len always is).
 * Returns FDSC_OK; FDSC_ERANGE (dst_cap < *doc_len: *doc_len is set,
 * nothing written); FDSC_ECORRUPT (checksum, bad header, truncated or
 * damaged payload); FDSC_EDICT (dict NULL for a codec that needs one, or
 * its id or bytes are not the block's); FDSC_EINVAL (NULL, doc >= ndocs);
 * FDSC_ENOMEM.
 */
FDSC_API int fdsc_doc_decode(fdsc_ctx *ctx, const fdsc_dict *dict,
                             const uint8_t *blk, size_t len, uint32_t doc,
                             uint8_t *dst, size_t dst_cap, size_t *doc_len);

/*
 * Decode every document of the block into the caller's `dst` (laid end to
 * end, info.raw_len bytes) and, when `offsets` is not NULL, the ndocs+1
 * offsets of the documents in dst (document i is dst[offsets[i] ..
 * offsets[i+1]); offsets_cap is its capacity in elements).  Sets
 * *raw_len (may be NULL) to the bytes written.
 * Returns as fdsc_doc_decode(), with FDSC_ERANGE when dst_cap < raw_len or
 * offsets_cap < ndocs+1 (nothing written then).
 */
FDSC_API int fdsc_block_decode(fdsc_ctx *ctx, const fdsc_dict *dict,
                               const uint8_t *blk, size_t len, uint8_t *dst,
                               size_t dst_cap, uint32_t *offsets,
                               uint32_t offsets_cap, size_t *raw_len);

/* ---- copying blocks ---------------------------------------------------- */

/*
 * Rewrite, in place, the first doc id an encoded block records, keeping the
 * block valid (a merge that copies compressed blocks unchanged, as Lucene's
 * CompressingStoredFieldsWriter bulk merge copies chunks).  The checksum is
 * verified before and recomputed after.  Returns FDSC_OK, FDSC_ECORRUPT,
 * FDSC_EINVAL (NULL).
 */
FDSC_API int fdsc_block_rebase(uint8_t *blk, size_t len, uint64_t doc_base);

/*
 * Rewrite, in place, the dictionary id an encoded block names: a block
 * copied into a segment that holds the same dictionary bytes under another
 * id stays readable (the header's dictionary hash is unchanged, so the
 * bytes must really be the same).  Returns FDSC_OK, FDSC_ECORRUPT,
 * FDSC_EINVAL (dict_id 0 for a codec that uses a dictionary, not 0 for one
 * that does not, NULL).
 */
FDSC_API int fdsc_block_set_dict_id(uint8_t *blk, size_t len,
                                    uint32_t dict_id);

#ifdef __cplusplus
}
#endif

#endif /* FIELDSTORE_CODEC_H */
