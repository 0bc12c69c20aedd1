/*
 * fuzz_block.c: fuzz target for fds_block_decode() (zstd tests/fuzz style).
 *
 * LLVMFuzzerTestOneInput() decodes the input as a block, fully, up to its
 * first doc, and with fds_block_decode_doc(); then again after recomputing
 * the checksum, so the codec decoders themselves (zstd, inflate, LZ4, the
 * Lucene layout, the varint lengths) see the mutated bytes instead of
 * stopping at the CRC.  A decode may fail with FDS_ECORRUPT / FDS_EDICT, but
 * must never crash, read out of bounds or claim more docs than the header.
 *
 * Run by the shared driver (tests/fuzz/fuzz_driver.h): under libFuzzer in
 * the fuzzing build, or as ctest's plain driver, which starts from seed
 * blocks of every codec and block format version (2, written today, and
 * 1, which old segments hold) built from embedded log lines and runs random
 * mutations of them (flips, overwrites, inserts, deletes, truncations,
 * splices, 32-bit header values) for a number of seconds with a fixed seed:
 *   fuzz_block [--seconds S] [--seed N] [--write-seeds DIR] [FILE...]
 * FILE arguments are extra seeds (e.g. the golden .blk files).
 */
#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver: inputs up to 1 MiB (a Lucene-layout chunk is 480 KiB), seeds
 * written as .blk files. */
#define FDS_FUZZ_MAX_INPUT (1u << 20)
#define FDS_FUZZ_SEED_EXT ".blk"
#include "../fuzz/fuzz_driver.h"
#include "../fuzz/fuzz_block_seed.h"

static fds_dict *fz_zdict, *fz_ddict;

static void fz_init(void)
{
    if (fz_zdict)
        return;
    /* Raw-content dictionaries (no training): deterministic and small. */
    if (fds_dict_create(1, FDS_CODEC_ZSTD, 3, (const uint8_t *)fz_text,
                        sizeof fz_text - 1, &fz_zdict) ||
        fds_dict_create(2, FDS_CODEC_DEFLATE, 3, (const uint8_t *)fz_text,
                        sizeof fz_text - 1, &fz_ddict))
        abort();
}

static void fz_decode(const uint8_t *data, size_t size)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    fds_block_info bi;
    const fds_dict *d = NULL;
    if (fds_block_info_read(data, size, &bi) == 0)
        d = bi.codec == FDS_CODEC_ZSTD ? fz_zdict
          : bi.codec == FDS_CODEC_DEFLATE ? fz_ddict : NULL;
    fds_block_view v;
    uint32_t uptos[3] = {UINT32_MAX, 0, size ? data[size - 1] : 1};
    for (int i = 0; i < 3; i++) {
        int r = fds_block_decode(ctx, data, size, d, uptos[i], &v);
        if (r == 0) {
            if (v.decoded_docs > v.ndocs || v.decoded_bytes > v.raw_len ||
                v.offsets[v.ndocs] != v.raw_len)
                abort();
            /* Touch every decoded byte (ASan checks the bounds). */
            volatile uint8_t sink = 0;
            for (size_t k = 0; k < v.offsets[v.decoded_docs]; k++)
                sink ^= v.raw[k];
            (void)sink;
        } else if (r != FDS_ECORRUPT && r != FDS_EDICT) {
            abort();
        }
        r = fds_block_decode_doc(ctx, data, size, d, uptos[i] % 7, &v);
        if (r == 0 && (v.first_doc > uptos[i] % 7 || v.decoded_docs <= uptos[i] % 7))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_init();
    if (size > FDS_FUZZ_MAX_INPUT)
        return 0;
    fds_block_info bi;
    size_t enc = fds_block_info_read(data, size, &bi) == 0 ? bi.encoded_len : 0;
    fz_decode_twice(data, size, enc, fz_decode);
    return 0;
}

#ifndef FDS_LIBFUZZER
/* Seeds: a block of 1 and one of 24 documents of every codec, in every
 * block format version. */
int fds_fuzz_builtin_seeds(fds_fuzz_seeds *s)
{
    static const fds_codec_id codecs[] = {
        FDS_CODEC_LZ4, FDS_CODEC_ZSTD, FDS_CODEC_ZSTD_NO_DICT,
        FDS_CODEC_DEFLATE, FDS_CODEC_LUCENE_DEFLATE};
    uint8_t raw[FZ_SEED_RAW_MAX];
    uint32_t lens[FZ_SEED_DOCS];
    fz_init();
    size_t len = fz_seed_docs(raw, lens);
    static const uint32_t versions[] = {FDS_BLOCK_FORMAT_V2, FDS_BLOCK_FORMAT_V1};
    for (size_t ver = 0; ver < sizeof versions / sizeof versions[0]; ver++)
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        for (uint32_t nd = 1; nd <= FZ_SEED_DOCS; nd += FZ_SEED_DOCS - 1) {
            fds_codec_params p;
            fds_codec_params_default(codecs[c], &p);
            p.format_version = versions[ver];
            size_t cap = fds_block_bound(&p, len, nd), out;
            uint8_t *b = malloc(cap);
            const fds_dict *d = codecs[c] == FDS_CODEC_ZSTD ? fz_zdict
                              : codecs[c] == FDS_CODEC_DEFLATE ? fz_ddict : NULL;
            if (!b || fds_block_encode(fds_codec_ctx_thread(), &p, d, 42, raw, lens,
                                       nd, b, cap, &out))
                abort();
            int rc = fds_fuzz_seed_add(s, b, out);
            free(b);
            if (rc)
                return rc;
        }
    }
    return 0;
}
#endif
