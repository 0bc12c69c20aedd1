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
 * Without -fsanitize=fuzzer (FDS_FUZZ_DRIVER defined) a small driver main
 * builds seed blocks of every codec from embedded log lines and runs random
 * mutations of them (flips, overwrites, inserts, deletes, truncations,
 * splices) for a number of seconds with a fixed seed:
 *   fuzz_block [--seconds S] [--seed N] [--write-seeds DIR] [FILE...]
 * FILE arguments are extra seeds (e.g. the golden .blk files).
 */
#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FUZZ_MAX_INPUT (1u << 20)

static fds_dict *fz_zdict, *fz_ddict;

static const char fz_text[] =
    "{\"@timestamp\":\"2019-01-22T03:56:16+03:30\",\"remote_addr\":\"31.56.96.51\","
    "\"method\":\"GET\",\"url\":\"/image/60844/productModel/200x200\",\"status\":200,"
    "\"body_bytes_sent\":5667,\"referrer\":\"https://www.zanbil.ir/m/filter/b113\","
    "\"user_agent\":\"Mozilla/5.0 (Linux; Android 6.0; ALE-L21 Build/HuaweiALE-L21) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Chrome/66.0.3359.158 Mobile Safari/537.36\"}";

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
    if (size > FUZZ_MAX_INPUT)
        return 0;
    fz_decode(data, size);
    /* Again with the checksum fixed up where the header says it is. */
    fds_block_info bi;
    if (fds_block_info_read(data, size, &bi) == 0) {
        uint8_t *copy = malloc(bi.encoded_len);
        if (!copy)
            return 0;
        memcpy(copy, data, bi.encoded_len);
        uint32_t c = fds_crc32c(0, copy, bi.encoded_len - 4);
        for (int i = 0; i < 4; i++)
            copy[bi.encoded_len - 4 + i] = (uint8_t)(c >> (8 * i));
        fz_decode(copy, bi.encoded_len);
        free(copy);
    }
    return 0;
}

#ifdef FDS_FUZZ_DRIVER
typedef struct { uint8_t *p; size_t n; } fz_buf;

static uint64_t fz_rng;
static uint64_t fz_next(void)
{
    fz_rng ^= fz_rng << 13; fz_rng ^= fz_rng >> 7; fz_rng ^= fz_rng << 17;
    return fz_rng;
}

static void fz_add_seed(fz_buf **seeds, size_t *n, const uint8_t *p, size_t len)
{
    *seeds = realloc(*seeds, (*n + 1) * sizeof **seeds);
    (*seeds)[*n].p = malloc(len ? len : 1);
    memcpy((*seeds)[*n].p, p, len);
    (*seeds)[*n].n = len;
    (*n)++;
}

static void fz_make_seeds(fz_buf **seeds, size_t *n)
{
    static const fds_codec_id codecs[] = {
        FDS_CODEC_LZ4, FDS_CODEC_ZSTD, FDS_CODEC_ZSTD_NO_DICT,
        FDS_CODEC_DEFLATE, FDS_CODEC_LUCENE_DEFLATE};
    uint8_t raw[8192];
    uint32_t lens[24];
    size_t len = 0;
    for (int i = 0; i < 24; i++) {
        size_t l = (i % 5 == 3) ? 0 : 120 + (size_t)(i * 37) % 200;
        for (size_t k = 0; k < l; k++)
            raw[len + k] = (uint8_t)fz_text[(k * (size_t)(i + 1)) % (sizeof fz_text - 1)];
        lens[i] = (uint32_t)l;
        len += l;
    }
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        for (uint32_t nd = 1; nd <= 24; nd += 23) {
            fds_codec_params p;
            fds_codec_params_default(codecs[c], &p);
            size_t cap = fds_block_bound(&p, len, nd), out;
            uint8_t *b = malloc(cap);
            const fds_dict *d = codecs[c] == FDS_CODEC_ZSTD ? fz_zdict
                              : codecs[c] == FDS_CODEC_DEFLATE ? fz_ddict : NULL;
            if (fds_block_encode(fds_codec_ctx_thread(), &p, d, 42, raw, lens,
                                 nd, b, cap, &out))
                abort();
            fz_add_seed(seeds, n, b, out);
            free(b);
        }
    }
}

static void fz_mutate(fz_buf *m, const fz_buf *seeds, size_t nseeds)
{
    int k = 1 + (int)(fz_next() % 4);
    for (int j = 0; j < k; j++) {
        size_t pos = m->n ? fz_next() % m->n : 0;
        switch (fz_next() % 7) {
        case 0: if (m->n) m->p[pos] ^= (uint8_t)(1u << (fz_next() % 8)); break;
        case 1: if (m->n) m->p[pos] = (uint8_t)fz_next(); break;
        case 2: if (m->n) m->n = pos; break; /* truncate */
        case 3: /* delete a run */
            if (m->n) {
                size_t l = 1 + fz_next() % 16;
                if (pos + l > m->n) l = m->n - pos;
                memmove(m->p + pos, m->p + pos + l, m->n - pos - l);
                m->n -= l;
            }
            break;
        case 4: /* insert random bytes */
            if (m->n + 16 <= FUZZ_MAX_INPUT) {
                size_t l = 1 + fz_next() % 16;
                memmove(m->p + pos + l, m->p + pos, m->n - pos);
                for (size_t i = 0; i < l; i++) m->p[pos + i] = (uint8_t)fz_next();
                m->n += l;
            }
            break;
        case 5: /* interesting header values */
            if (m->n >= 40) {
                static const uint32_t vals[] = {0, 1, 0x7fffffff, 0xffffffff, 0x80, 16384};
                uint32_t v = vals[fz_next() % 6];
                size_t at = (fz_next() % 10) * 4;
                memcpy(m->p + at, &v, 4);
            }
            break;
        default: { /* splice the tail of another seed */
            const fz_buf *o = &seeds[fz_next() % nseeds];
            size_t from = o->n ? fz_next() % o->n : 0;
            size_t l = o->n - from;
            if (pos + l <= FUZZ_MAX_INPUT) {
                memcpy(m->p + pos, o->p + from, l);
                m->n = pos + l;
            }
        }
        }
    }
}

int main(int argc, char **argv)
{
    double seconds = 3;
    fz_rng = 0x9E3779B97F4A7C15ull;
    const char *write_dir = NULL;
    fz_init();
    fz_buf *seeds = NULL;
    size_t nseeds = 0;
    fz_make_seeds(&seeds, &nseeds);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) fz_rng = strtoull(argv[++i], NULL, 0) | 1;
        else if (!strcmp(argv[i], "--write-seeds") && i + 1 < argc) write_dir = argv[++i];
        else if (!strcmp(argv[i], "--help")) {
            printf("usage: fuzz_block [--seconds S (default 3)] [--seed N] "
                   "[--write-seeds DIR] [SEED_FILE...]\n");
            return 0;
        } else {
            FILE *f = fopen(argv[i], "rb");
            if (!f) { fprintf(stderr, "cannot open %s\n", argv[i]); return 2; }
            uint8_t *b = malloc(FUZZ_MAX_INPUT);
            size_t n = fread(b, 1, FUZZ_MAX_INPUT, f);
            fclose(f);
            fz_add_seed(&seeds, &nseeds, b, n);
            free(b);
        }
    }
    if (write_dir) {
        for (size_t i = 0; i < nseeds; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/seed-%03zu.blk", write_dir, i);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(seeds[i].p, 1, seeds[i].n, f) != seeds[i].n) return 2;
            fclose(f);
        }
        return 0;
    }
    /* Every seed must decode as it is. */
    for (size_t i = 0; i < nseeds; i++)
        LLVMFuzzerTestOneInput(seeds[i].p, seeds[i].n);
    fz_buf m = {malloc(FUZZ_MAX_INPUT + 64), 0};
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long iters = 0;
    do {
        for (int b = 0; b < 256; b++, iters++) {
            const fz_buf *s = &seeds[fz_next() % nseeds];
            memcpy(m.p, s->p, s->n);
            m.n = s->n;
            fz_mutate(&m, seeds, nseeds);
            LLVMFuzzerTestOneInput(m.p, m.n);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    printf("fuzz_block: %lu inputs from %zu seeds, no crash\n", iters, nseeds);
    free(m.p);
    for (size_t i = 0; i < nseeds; i++) free(seeds[i].p);
    free(seeds);
    return 0;
}
#endif
