/*
 * fuzz_libcodec.c: fuzz target for the decode entry points of
 * libfieldstore-codec (include/fieldstore/codec.h), called through the
 * shared library's exported functions: fdsc_block_info_read,
 * fdsc_block_verify, fdsc_doc_decode (the partial, one-document decode) and
 * fdsc_block_decode.
 *
 * Each input is read as a block twice: as it is, and with its checksum
 * recomputed where its header says the block ends, so that the decoders
 * behind the checksum (zstd, inflate, LZ4, the Lucene layout, the varint
 * lengths) see the mutated bytes.  fdsc_block_verify must agree with a
 * CRC-32C computed by the target.  Any call may refuse a block
 * (FDSC_ECORRUPT, FDSC_EDICT); none may crash, read out of bounds, return a
 * code its docs do not list, or give a document whose bytes differ from the
 * same document in the whole-block decode.
 *
 * Run by the shared driver (tests/fuzz/fuzz_driver.h): under libFuzzer in the
 * fuzzing build (scripts/fuzz.sh), or as ctest's plain driver from seed
 * blocks of every codec made through the public API:
 *   fuzz_libcodec [--seconds S] [--seed N] [--write-seeds DIR] [FILE...]
 */
#include <fieldstore/codec.h>

#include <stdlib.h>
#include <string.h>

/* Inputs up to 1 MiB (a Lucene-layout chunk is 480 KiB); seeds as .blk. */
#define FDS_FUZZ_MAX_INPUT (1u << 20)
#define FDS_FUZZ_SEED_EXT ".blk"
#include "fuzz_driver.h"
#include "fuzz_block_seed.h"

#define FZ_DST_MAX (16u << 20) /* largest output buffer a decode is given */

static fdsc_ctx *fz_ctx;
static fdsc_dict *fz_zdict, *fz_ddict;
static uint8_t *fz_whole, *fz_one; /* FZ_DST_MAX bytes each */

static void fz_init(void)
{
    if (fz_ctx)
        return;
    /* Raw-content dictionaries (no training): deterministic and small. */
    if (fdsc_ctx_create(&fz_ctx) ||
        fdsc_dict_create(FDSC_CODEC_ZSTD, FDSC_ZSTD_LEVEL_DEFAULT, 1,
                         (const uint8_t *)fz_text, sizeof fz_text - 1,
                         &fz_zdict) ||
        fdsc_dict_create(FDSC_CODEC_DEFLATE, 0, 2, (const uint8_t *)fz_text,
                         sizeof fz_text - 1, &fz_ddict))
        abort();
    fz_whole = malloc(FZ_DST_MAX);
    fz_one = malloc(FZ_DST_MAX);
    if (!fz_whole || !fz_one)
        abort();
}

static int fz_refusal(int r)
{
    return r == FDSC_ECORRUPT || r == FDSC_EDICT;
}

static void fz_decode(const uint8_t *data, size_t size)
{
    fdsc_block_info bi;
    const fdsc_dict *d = NULL;
    int ri = fdsc_block_info_read(data, size, &bi);
    if (ri == FDSC_OK)
        d = bi.codec == FDSC_CODEC_ZSTD      ? fz_zdict
            : bi.codec == FDSC_CODEC_DEFLATE ? fz_ddict
                                             : NULL;
    else if (ri != FDSC_ECORRUPT)
        abort();
    /* The checksum check against a CRC-32C computed here: it passes
     * exactly when the header does and the block's last 4 bytes match. */
    int rv = fdsc_block_verify(data, size);
    int crc_ok = 0;
    if (ri == FDSC_OK) {
        size_t body = bi.encoded_len - FZ_BLOCK_CRC_LEN;
        uint32_t c = fds_crc32c(0, data, body);
        crc_ok = memcmp(data + body, (uint8_t[4]){(uint8_t)c, (uint8_t)(c >> 8),
                                                  (uint8_t)(c >> 16),
                                                  (uint8_t)(c >> 24)},
                        FZ_BLOCK_CRC_LEN) == 0;
    }
    if (rv != (crc_ok ? FDSC_OK : FDSC_ECORRUPT))
        abort();

    uint32_t offs[64 + 1], *po = NULL, ocap = 0;
    if (ri == FDSC_OK && bi.ndocs <= 64) {
        po = offs;
        ocap = bi.ndocs + 1;
    }
    size_t raw = 0;
    int rb = fdsc_block_decode(fz_ctx, d, data, size, fz_whole, FZ_DST_MAX, po,
                               ocap, &raw);
    if (rb == FDSC_OK) {
        if (ri != FDSC_OK || rv != FDSC_OK || raw != bi.raw_len ||
            fdsc_ctx_last_decoded_bytes(fz_ctx) != raw ||
            (po && offs[bi.ndocs] != raw))
            abort();
    } else if (!fz_refusal(rb) && rb != FDSC_ERANGE && rb != FDSC_ENOMEM) {
        abort();
    }

    uint32_t docs[3] = {0, size ? data[size - 1] : 1, UINT32_MAX};
    if (ri == FDSC_OK)
        docs[2] = bi.ndocs - 1;
    for (int i = 0; i < 3; i++) {
        size_t n = 0;
        int r = fdsc_doc_decode(fz_ctx, d, data, size, docs[i], fz_one,
                                FZ_DST_MAX, &n);
        if (r == FDSC_OK) {
            if (rv != FDSC_OK || docs[i] >= bi.ndocs || n > bi.raw_len ||
                fdsc_ctx_last_decoded_bytes(fz_ctx) > bi.raw_len)
                abort();
            /* the same bytes as in the whole block */
            if (rb == FDSC_OK && po &&
                (n != offs[docs[i] + 1] - offs[docs[i]] ||
                 memcmp(fz_one, fz_whole + offs[docs[i]], n) != 0))
                abort();
        } else if (r == FDSC_EINVAL) {
            if (ri == FDSC_OK && docs[i] < bi.ndocs)
                abort(); /* only a doc past the block is an argument error */
        } else if (!fz_refusal(r) && r != FDSC_ERANGE && r != FDSC_ENOMEM) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_init();
    if (size > FDS_FUZZ_MAX_INPUT)
        return 0;
    fdsc_block_info bi;
    size_t enc = fdsc_block_info_read(data, size, &bi) == FDSC_OK
                     ? bi.encoded_len
                     : 0;
    fz_decode_twice(data, size, enc, fz_decode);
    return 0;
}

#ifndef FDS_LIBFUZZER
/* Seeds: a block of 1 and one of 24 documents of every codec, with one
 * zstd block per sub-block count 1 and 64. */
int fds_fuzz_builtin_seeds(fds_fuzz_seeds *s)
{
    uint8_t raw[FZ_SEED_RAW_MAX];
    uint32_t lens[FZ_SEED_DOCS];
    fz_init();
    size_t len = fz_seed_docs(raw, lens);
    for (int c = FDSC_CODEC_LZ4; c <= FDSC_CODEC_LUCENE_DEFLATE; c++) {
        for (uint32_t nd = 1; nd <= FZ_SEED_DOCS; nd += FZ_SEED_DOCS - 1) {
            for (uint32_t sub = 0; sub <= FDSC_SUB_BLOCKS_MAX; sub += 64) {
                int zstd = c == FDSC_CODEC_ZSTD || c == FDSC_CODEC_ZSTD_NO_DICT;
                if (sub && (!zstd || nd == 1))
                    continue;
                fdsc_params p;
                fdsc_params_init(&p, c);
                p.sub_blocks = sub;
                size_t cap = fdsc_block_bound(&p, len, nd), out;
                uint8_t *b = malloc(cap);
                const fdsc_dict *d = c == FDSC_CODEC_ZSTD      ? fz_zdict
                                     : c == FDSC_CODEC_DEFLATE ? fz_ddict
                                                               : NULL;
                if (!b || fdsc_block_encode(fz_ctx, &p, d, 42, raw, lens, nd, b,
                                            cap, &out))
                    abort();
                int rc = fds_fuzz_seed_add(s, b, out);
                free(b);
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}
#endif
