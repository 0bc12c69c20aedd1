/*
 * codec.h: stored-fields block codecs of fieldstore (public interface).
 *
 * A block holds the `_source` bytes of consecutive documents of a segment
 * (doc ids doc_base .. doc_base+ndocs-1), compressed as one unit, with a
 * header that names its codec and dictionary and a checksum verified on
 * every read.  The exact byte layout is written at the top of codec.c.
 *
 * Codecs (index.codec names, DESIGN.md §5):
 *   FDS_CODEC_LZ4             "default"            LZ4 (liblz4), no dictionary
 *   FDS_CODEC_ZSTD            "ZSTD" / "zstd"      zstd, trained dictionary
 *   FDS_CODEC_ZSTD_NO_DICT    "zstd_no_dict"       zstd, no dictionary
 *   FDS_CODEC_DEFLATE         "best_compression"   zlib level 6 + preset dict
 *   FDS_CODEC_LUCENE_DEFLATE  "lucene_best_compression"  Lucene's
 *       DeflateWithPresetDictCompressionMode layout: 480 KiB chunks of at
 *       most 4096 docs, dictionary = first len/60 bytes, 10 sub-blocks.
 *
 * Block format versions (the stored-fields format; FDS_BLOCK_FORMAT_VERSION
 * is written, every version is read): 1, a fixed 40-byte header, LEB128 doc
 * lengths and standard zstd frames; 2, a 20-byte fixed header and varints,
 * bit-packed doc lengths and zstd frames without magic number or
 * dictionary id (docs/codec.md gives both layouts and the measurements).
 *
 * Threading (STYLE.md §6): an fds_dict is immutable once created and shared
 * by all threads; an fds_codec_ctx holds scratch buffers and zstd/zlib/LZ4
 * contexts and must be used by one thread at a time (fds_codec_ctx_thread()
 * gives each thread its own, created on first use).
 */
#ifndef FDS_CODEC_H
#define FDS_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fds_error.h"
#include "fds_hash.h" /* fds_crc32c, the block checksum */

typedef enum fds_codec_id {
    FDS_CODEC_LZ4 = 1,
    FDS_CODEC_ZSTD = 2,
    FDS_CODEC_ZSTD_NO_DICT = 3,
    FDS_CODEC_DEFLATE = 4,
    FDS_CODEC_LUCENE_DEFLATE = 5,
} fds_codec_id;

/* Named limits. */
#define FDS_BLOCK_SIZE_DEFAULT (16u * 1024u)       /* bytes of raw docs */
#define FDS_BLOCK_MAX_DOCS_DEFAULT 128u
#define FDS_LUCENE_CHUNK_SIZE (480u * 1024u)       /* Lucene 8.7+ BEST_COMPRESSION */
#define FDS_LUCENE_CHUNK_MAX_DOCS 4096u
#define FDS_ZSTD_LEVEL_DEFAULT 3
#define FDS_ZSTD_LEVEL_MIN 1
#define FDS_ZSTD_LEVEL_MAX 19
#define FDS_DEFLATE_LEVEL 6
#define FDS_DEFLATE_DICT_MAX (32u * 1024u)         /* zlib window */
/* Trained zstd dictionary: 256 KiB, the smallest of the sizes `fieldstore
 * advise` measures (16-256 KiB) that keeps ZSTD stored fields at most 0.95x
 * of best_compression's on both the bundled sample and a log whose
 * vocabularies grow (docs/codec.md, "Tuning"). */
#define FDS_DICT_SIZE_DEFAULT (256u * 1024u)
#define FDS_DICT_SAMPLE_DEFAULT (4u * 1024u * 1024u) /* bytes of docs sampled */
#define FDS_BLOCK_SIZE_MIN 1024u
#define FDS_BLOCK_SIZE_MAX (4u * 1024u * 1024u)

/*
 * The codec uses zstd's static-only API, valid only with the very libzstd
 * version of the zstd.h it was compiled with (zstd.h, "never use these with
 * a dynamic library"); libzstd is linked statically.  Returns 0 when
 * ZSTD_versionNumber() equals ZSTD_VERSION_NUMBER, else FDS_EUNSUPPORTED
 * with both versions in `err` (may be NULL).  fds_codec_ctx_create() and
 * fds_dict_create() refuse to work on a mismatch; a program calls this at
 * start-up to say why.
 */
int fds_codec_zstd_check(fds_err *err);

/* index.codec name -> id.  Accepts the names above (ZSTD and zstd both).
 * Returns 0 or FDS_EINVAL. */
int fds_codec_from_name(const char *name, fds_codec_id *out);
/* id -> canonical index.codec name ("default", "ZSTD", ...); "unknown". */
const char *fds_codec_name(fds_codec_id id);
/* True when blocks of this codec need an fds_dict (ZSTD, DEFLATE). */
bool fds_codec_uses_dict(fds_codec_id id);

/* How a segment's blocks are cut and compressed. */
typedef struct fds_codec_params {
    fds_codec_id codec;
    int level;                   /* zstd level (ZSTD, ZSTD_NO_DICT); ignored otherwise */
    uint32_t block_size;         /* close a block when raw bytes reach this */
    uint32_t max_docs_per_block; /* ... or when it holds this many docs */
    /* Number of independently decodable
     * zstd blocks a ZSTD / ZSTD_NO_DICT block is cut into at doc boundaries
     * (ZSTD_e_flush), so a one-doc fetch can stop early.  0 = default
     * (FDS_ZSTD_SUB_BLOCKS_DEFAULT); 1 = one zstd block, like the zstd CLI.
     * Ignored by the other codecs. */
    uint32_t sub_blocks;
    /* Block format version written: 0 = FDS_BLOCK_FORMAT_VERSION (the
     * current one); FDS_BLOCK_FORMAT_V1 writes the version 1 layout, for
     * tests that need blocks of an older segment.  Other values make
     * fds_block_encode() fail with FDS_EINVAL. */
    uint32_t format_version;
} fds_codec_params;

/* Block format versions (layouts at the top of codec.c). */
#define FDS_BLOCK_FORMAT_V1 1u
#define FDS_BLOCK_FORMAT_V2 2u
#define FDS_BLOCK_FORMAT_VERSION FDS_BLOCK_FORMAT_V2 /* written today */

/* Default zstd sub-blocks per block (measured in docs/codec.md: each extra
 * sub-block costs a zstd block header and its entropy tables, and lets a
 * one-doc fetch stop earlier; 2 keeps the full decode within 0.95x of
 * plain libzstd and a one-doc fetch 1.2x faster than it). */
#define FDS_ZSTD_SUB_BLOCKS_DEFAULT 2u
#define FDS_ZSTD_SUB_BLOCKS_MAX 64u
/* Lucene DeflateWithPresetDictCompressionMode constants. */
#define FDS_LUCENE_NUM_SUB_BLOCKS 10u
#define FDS_LUCENE_DICT_SIZE_FACTOR 6u   /* dict = len / (10 * 6) */
/* Hard limits a block header must respect to be decoded at all. */
#define FDS_BLOCK_RAW_LIMIT (256u * 1024u * 1024u) /* bytes, uncompressed */
#define FDS_BLOCK_DOCS_LIMIT (1u << 20)

/* Fill the defaults for a codec: 16 KiB / 128 docs (480 KiB / 4096 docs for
 * LUCENE_DEFLATE), level 3. */
void fds_codec_params_default(fds_codec_id id, fds_codec_params *out);

/* ---- dictionaries ---------------------------------------------------- */

/*
 * Train a dictionary for `codec` from `nsamples` documents laid end to end in
 * `samples` (lengths in `sample_lens`).  For ZSTD: ZDICT_trainFromBuffer
 * (zstd manual, "Dictionary builder").  For DEFLATE: at most 32 KiB of preset
 * bytes.  Writes at most `dict_capacity` bytes to `dict_out`, the size to
 * *dict_len.  Returns 0, FDS_EINVAL (too few samples / codec without dict).
 */
int fds_dict_train(fds_codec_id codec, const uint8_t *samples,
                   const size_t *sample_lens, unsigned nsamples,
                   size_t dict_capacity, uint8_t *dict_out, size_t *dict_len);

typedef struct fds_dict fds_dict;

/*
 * Digest a dictionary once (ZSTD_CDict at `level` + ZSTD_DDict, or zlib
 * preset bytes).  `dict_id` is the catalogue's id, recorded in each block.
 * The bytes are copied.  Returns 0, FDS_ENOMEM, FDS_EINVAL, FDS_EUNSUPPORTED
 * (ZSTD when fds_codec_zstd_check() fails).
 */
int fds_dict_create(uint32_t dict_id, fds_codec_id codec, int level,
                    const uint8_t *bytes, size_t len, fds_dict **out);
void fds_dict_free(fds_dict *d); /* NULL is a no-op */
uint32_t fds_dict_id(const fds_dict *d);

/* ---- per-thread context ---------------------------------------------- */

typedef struct fds_codec_ctx fds_codec_ctx;
/* NULL on ENOMEM, or when fds_codec_zstd_check() fails. */
fds_codec_ctx *fds_codec_ctx_create(void);
void fds_codec_ctx_free(fds_codec_ctx *ctx);   /* NULL is a no-op */
/* This thread's context, created on first use and freed at thread exit. */
fds_codec_ctx *fds_codec_ctx_thread(void);

/* ---- encode ----------------------------------------------------------- */

/* Upper bound of an encoded block's size for `raw_len` bytes in `ndocs`
 * docs (header + lengths + worst-case payload + checksum). */
size_t fds_block_bound(const fds_codec_params *p, size_t raw_len,
                       uint32_t ndocs);

/*
 * Note (added): ZSTD blocks are compressed at the level their fds_dict was
 * digested at (fds_dict_create's `level`; p->level is used by ZSTD_NO_DICT),
 * so create one fds_dict per (dictionary, level).
 *
 * Encode one block: the docs laid end to end in `raw` (sum of doc_lens
 * bytes), `ndocs` >= 1 of them, first doc id `doc_base`.  `dict` must be
 * non-NULL for codecs that use one.  Writes *out_len bytes to `dst` (at least
 * fds_block_bound() bytes) in format p->format_version.  Returns 0,
 * FDS_EINVAL (also: doc_base above UINT32_MAX in format 2), FDS_ERANGE (dst
 * too small), FDS_EDICT (dict missing or for another codec), FDS_ENOMEM.
 */
int fds_block_encode(fds_codec_ctx *ctx, const fds_codec_params *p,
                     const fds_dict *dict, uint64_t doc_base,
                     const uint8_t *raw, const uint32_t *doc_lens,
                     uint32_t ndocs, uint8_t *dst, size_t dst_cap,
                     size_t *out_len);

/* ---- decode ----------------------------------------------------------- */

typedef struct fds_block_info {
    fds_codec_id codec;
    uint32_t dict_id;      /* 0 when the codec uses none */
    uint64_t doc_base;
    uint32_t ndocs;
    uint32_t raw_len;      /* bytes of all docs, uncompressed */
    uint32_t encoded_len;  /* bytes of the whole block, header to checksum */
    uint32_t format_version; /* FDS_BLOCK_FORMAT_V1 or _V2 */
} fds_block_info;

/* Read and check a block header (magic, version, sizes within `len`).
 * Does not verify the checksum.  Returns 0 or FDS_ECORRUPT. */
int fds_block_info_read(const uint8_t *blk, size_t len, fds_block_info *out);

/*
 * Rewrite the doc base of an encoded block in place (merges that copy blocks
 * unchanged); keeps the block valid.  Returns 0, FDS_ECORRUPT, or
 * FDS_EINVAL when new_doc_base does not fit the block's format (version 2
 * holds 32-bit doc bases, as segments do).
 */
int fds_block_rebase(uint8_t *blk, size_t len, uint64_t new_doc_base);

/*
 * Rewrite the dictionary id an encoded block names, in place: a copy of
 * the block into an index that holds the same dictionary under another
 * catalogue id (a resize) stays valid, as the payload and the header's
 * dictionary content hash are unchanged.  Returns 0, FDS_ECORRUPT (the
 * block fails its checks), FDS_EINVAL (dict_id 0 for a codec that uses a
 * dictionary, or not 0 for one that does not).
 */
int fds_block_set_dict(uint8_t *blk, size_t len, uint32_t dict_id);

/* A decoded (prefix of a) block, pointing into the context's scratch buffer:
 * valid until the next decode on the same context. */
typedef struct fds_block_view {
    const uint8_t *raw;       /* docs laid end to end */
    const uint32_t *offsets;  /* ndocs+1 offsets into raw (from the header) */
    uint32_t ndocs;
    uint32_t decoded_docs;    /* docs [0, decoded_docs) are available */
    size_t decoded_bytes;     /* bytes actually decompressed */
    size_t raw_len;           /* bytes of the whole block, uncompressed */
    /* Docs [first_doc, decoded_docs) are
     * available.  Always 0 after fds_block_decode(); fds_block_decode_doc()
     * may leave a window (LUCENE_DEFLATE decodes only the sub-blocks of the
     * doc, as Lucene does). */
    uint32_t first_doc;
} fds_block_view;

/*
 * Verify a block's checksum and decode it as far as the end of doc
 * `upto_doc` (0-based within the block; UINT32_MAX = all docs).  `dict` is
 * the dictionary the header names (NULL for codecs without one).  Decoding
 * stops early where the codec allows it (zstd streaming, inflate, LZ4 block
 * prefix, Lucene sub-blocks).
 * Returns 0, FDS_ECORRUPT (checksum, truncated frame, bad header),
 * FDS_EDICT (dict NULL / id or content not the block's), FDS_ENOMEM.
 */
int fds_block_decode(fds_codec_ctx *ctx, const uint8_t *blk, size_t len,
                     const fds_dict *dict, uint32_t upto_doc,
                     fds_block_view *out);

/*
 * Make doc `doc` available decoding as
 * little as the codec allows: like fds_block_decode(upto_doc = doc) except
 * that LUCENE_DEFLATE decodes only its dictionary and the sub-blocks the doc
 * overlaps (Lucene's DeflateWithPresetDictCompressionMode.decompress), so
 * out->first_doc may be > 0.  Same checks and return codes as
 * fds_block_decode(); FDS_EINVAL if doc >= ndocs.
 */
int fds_block_decode_doc(fds_codec_ctx *ctx, const uint8_t *blk, size_t len,
                         const fds_dict *dict, uint32_t doc,
                         fds_block_view *out);

/* The dictionary's codec, and its bytes (owned by the dictionary; *len set). */
fds_codec_id fds_dict_codec(const fds_dict *d);
const uint8_t *fds_dict_bytes(const fds_dict *d, size_t *len);

/* The header check of fds_block_info_read() and the block's checksum,
 * without decoding.  Returns 0 or FDS_ECORRUPT. */
int fds_block_verify(const uint8_t *blk, size_t len);

#endif
