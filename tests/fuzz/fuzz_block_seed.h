/*
 * fuzz_block_seed.h: what the two block fuzz targets share, fuzz_block
 * (src/codec's fds_block_* functions) and fuzz_libcodec (the same decoders
 * through libfieldstore-codec's exported fdsc_* functions): the log-line
 * text their seed documents and dictionaries are made of, the seed
 * documents, and the checksum repair that lets a mutated block reach the
 * decoders behind the checksum.
 *
 * Header-only (static functions): include it in one .c file per target.
 */
#ifndef FDS_FUZZ_BLOCK_SEED_H
#define FDS_FUZZ_BLOCK_SEED_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fds_hash.h" /* fds_crc32c: the block checksum */

#define FZ_SEED_DOCS 24        /* documents of the largest seed block */
#define FZ_SEED_RAW_MAX 8192u  /* bytes they take at most */
#define FZ_BLOCK_CRC_LEN 4u    /* a block ends with the CRC-32C of the rest */

/* One real document of the nginx sample: seed text and raw dictionary. */
static const char fz_text[] =
    "{\"@timestamp\":\"2019-01-22T03:56:16+03:30\",\"remote_addr\":\"31.56.96.51\","
    "\"method\":\"GET\",\"url\":\"/image/60844/productModel/200x200\",\"status\":200,"
    "\"body_bytes_sent\":5667,\"referrer\":\"https://www.zanbil.ir/m/filter/b113\","
    "\"user_agent\":\"Mozilla/5.0 (Linux; Android 6.0; ALE-L21 Build/HuaweiALE-L21) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Chrome/66.0.3359.158 Mobile Safari/537.36\"}";

/* FZ_SEED_DOCS documents of 120-319 bytes (every fifth one empty) drawn
 * from fz_text, end to end in raw, lengths in lens; returns their bytes. */
static inline size_t fz_seed_docs(uint8_t raw[FZ_SEED_RAW_MAX],
                                  uint32_t lens[FZ_SEED_DOCS])
{
    size_t len = 0;
    for (int i = 0; i < FZ_SEED_DOCS; i++) {
        size_t l = (i % 5 == 3) ? 0 : 120 + (size_t)(i * 37) % 200;
        for (size_t k = 0; k < l; k++)
            raw[len + k] =
                (uint8_t)fz_text[(k * (size_t)(i + 1)) % (sizeof fz_text - 1)];
        lens[i] = (uint32_t)l;
        len += l;
    }
    return len;
}

/* A malloc'ed copy of the block data[0, encoded_len) whose trailing
 * checksum is recomputed (encoded_len > FZ_BLOCK_CRC_LEN, from a header
 * that passed its check); NULL out of memory.  The caller frees it. */
static inline uint8_t *fz_crc_repaired(const uint8_t *data, size_t encoded_len)
{
    uint8_t *copy = malloc(encoded_len);
    if (!copy)
        return NULL;
    memcpy(copy, data, encoded_len);
    size_t body = encoded_len - FZ_BLOCK_CRC_LEN;
    uint32_t c = fds_crc32c(0, copy, body);
    for (unsigned i = 0; i < FZ_BLOCK_CRC_LEN; i++)
        copy[body + i] = (uint8_t)(c >> (8 * i));
    return copy;
}

/* Feed `decode` the input as it is, then, when its header gave the block's
 * encoded_len (0: the header did not pass), a copy with the checksum
 * repaired, so that the decoders behind the checksum see the mutation. */
static inline void fz_decode_twice(const uint8_t *data, size_t size,
                                   size_t encoded_len,
                                   void (*decode)(const uint8_t *, size_t))
{
    decode(data, size);
    if (encoded_len <= FZ_BLOCK_CRC_LEN || encoded_len > size)
        return;
    uint8_t *copy = fz_crc_repaired(data, encoded_len);
    if (!copy)
        return;
    decode(copy, encoded_len);
    free(copy);
}

#endif
