/*
 * golden_codec.c: golden files of the block format (zstd tests/golden-*
 * style), so every later version is held to read blocks written today.
 *
 *   golden_codec gen   NGINX_LOG DIR [VERSION]
 *                                      write DIR/{lz4,zstd,zstd_no_dict,
 *                                      best_compression,lucene_best_compression}.blk,
 *                                      DIR/zstd.dict, DIR/deflate.dict and
 *                                      DIR/docs.ndjson (the expected docs), in
 *                                      block format VERSION (default: the
 *                                      current one)
 *   golden_codec check DIR [VERSION]   decode every .blk with the stored
 *                                      dictionaries (fully and per doc) and
 *                                      compare with docs.ndjson; exit 1 on any
 *                                      difference; with VERSION, also when a
 *                                      block is not of that format
 *
 * The docs are the first GOLDEN_DOCS documents of the real sample converted
 * to JSON (the committed files were made by an earlier local converter;
 * `gen` now uses fds_logparse through codec_testdata.h, and `check` reads
 * only the committed files, so they stay valid); doc base GOLDEN_DOC_BASE; dictionary ids 1 (zstd,
 * trained from the first GOLDEN_TRAIN_DOCS docs, 16 KiB) and 2 (DEFLATE
 * preset, 16 KiB); zstd level 3; ZSTD sub-blocks: the default (4 when the
 * version 1 files were written).  tests/golden/codec holds
 * version 1, tests/golden/codec/v2 version 2.  Run `gen` only when the
 * format version changes (then keep the old files too).
 */
#include "codec.h"
#include "codec_testdata.h"
#include "fds_test.h"

#include <stdlib.h>

#define GOLDEN_DOCS 24
#define GOLDEN_TRAIN_DOCS 2000
#define GOLDEN_DICT_SIZE (16u * 1024u)
#define GOLDEN_DOC_BASE 1000u
#define GOLDEN_ZSTD_DICT_ID 1u
#define GOLDEN_DEFLATE_DICT_ID 2u

static const fds_codec_id golden_codecs[] = {
    FDS_CODEC_LZ4, FDS_CODEC_ZSTD, FDS_CODEC_ZSTD_NO_DICT, FDS_CODEC_DEFLATE,
    FDS_CODEC_LUCENE_DEFLATE};
#define NGOLDEN (sizeof golden_codecs / sizeof golden_codecs[0])

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) {
        fprintf(stderr, "cannot write %s\n", path);
        return -1;
    }
    return fclose(f);
}

static uint8_t *read_file(const char *dir, const char *name, size_t *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(l > 0 ? (size_t)l : 1);
    *n = fread(p, 1, (size_t)l, f);
    fclose(f);
    return p;
}

static int gen(const char *log, const char *dir, unsigned version)
{
    td_docs d;
    if (td_load(log, 1, GOLDEN_TRAIN_DOCS, &d))
        return 2;
    size_t *sl = malloc(d.n * sizeof *sl);
    for (size_t i = 0; i < d.n; i++)
        sl[i] = d.lens[i];
    uint8_t zd[GOLDEN_DICT_SIZE], dd[GOLDEN_DICT_SIZE];
    size_t zl, dl;
    if (fds_dict_train(FDS_CODEC_ZSTD, d.bytes, sl, (unsigned)d.n, sizeof zd, zd, &zl) ||
        fds_dict_train(FDS_CODEC_DEFLATE, d.bytes, sl, (unsigned)d.n, sizeof dd, dd, &dl))
        return 2;
    fds_dict *zdict, *ddict;
    if (fds_dict_create(GOLDEN_ZSTD_DICT_ID, FDS_CODEC_ZSTD, 3, zd, zl, &zdict) ||
        fds_dict_create(GOLDEN_DEFLATE_DICT_ID, FDS_CODEC_DEFLATE, 3, dd, dl, &ddict))
        return 2;
    if (write_file(dir, "zstd.dict", zd, zl) || write_file(dir, "deflate.dict", dd, dl))
        return 2;
    /* docs.ndjson: the GOLDEN_DOCS docs, one per line (no doc holds '\n'). */
    FILE *f;
    char path[4096];
    snprintf(path, sizeof path, "%s/docs.ndjson", dir);
    if (!(f = fopen(path, "wb")))
        return 2;
    for (size_t i = 0; i < GOLDEN_DOCS; i++) {
        fwrite(d.bytes + d.offs[i], 1, d.lens[i], f);
        fputc('\n', f);
    }
    fclose(f);
    for (size_t k = 0; k < NGOLDEN; k++) {
        fds_codec_params p;
        fds_codec_params_default(golden_codecs[k], &p);
        p.format_version = version;
        size_t cap = fds_block_bound(&p, d.offs[GOLDEN_DOCS], GOLDEN_DOCS), len;
        uint8_t *b = malloc(cap);
        const fds_dict *dic = golden_codecs[k] == FDS_CODEC_ZSTD ? zdict
                            : golden_codecs[k] == FDS_CODEC_DEFLATE ? ddict : NULL;
        if (fds_block_encode(fds_codec_ctx_thread(), &p, dic, GOLDEN_DOC_BASE,
                             d.bytes, d.lens, GOLDEN_DOCS, b, cap, &len))
            return 2;
        char name[128];
        snprintf(name, sizeof name, "%s.blk", fds_codec_name(golden_codecs[k]));
        if (write_file(dir, name, b, len))
            return 2;
        printf("%-28s %6zu bytes (raw %zu)\n", name, len, d.offs[GOLDEN_DOCS]);
        free(b);
    }
    fds_dict_free(zdict);
    fds_dict_free(ddict);
    free(sl);
    td_free(&d);
    return 0;
}

static int check(const char *dir, unsigned version)
{
    size_t zl, dl, nl;
    uint8_t *zd = read_file(dir, "zstd.dict", &zl);
    uint8_t *dd = read_file(dir, "deflate.dict", &dl);
    uint8_t *nd = read_file(dir, "docs.ndjson", &nl);
    if (!zd || !dd || !nd)
        return 2;
    /* Expected docs: lines of docs.ndjson. */
    uint32_t lens[GOLDEN_DOCS];
    uint8_t *raw = malloc(nl);
    size_t rl = 0, start = 0, n = 0;
    for (size_t i = 0; i < nl; i++)
        if (nd[i] == '\n') {
            ASSERT(n < GOLDEN_DOCS);
            if (n >= GOLDEN_DOCS)
                return 1;
            lens[n++] = (uint32_t)(i - start);
            memcpy(raw + rl, nd + start, i - start);
            rl += i - start;
            start = i + 1;
        }
    ASSERT_EQ(n, GOLDEN_DOCS);
    fds_dict *zdict, *ddict;
    ASSERT_EQ(fds_dict_create(GOLDEN_ZSTD_DICT_ID, FDS_CODEC_ZSTD, 3, zd, zl, &zdict), 0);
    ASSERT_EQ(fds_dict_create(GOLDEN_DEFLATE_DICT_ID, FDS_CODEC_DEFLATE, 3, dd, dl, &ddict), 0);
    fds_codec_ctx *ctx = fds_codec_ctx_create();
    for (size_t k = 0; k < NGOLDEN; k++) {
        char name[128];
        snprintf(name, sizeof name, "%s.blk", fds_codec_name(golden_codecs[k]));
        size_t bl;
        uint8_t *b = read_file(dir, name, &bl);
        ASSERT(b != NULL);
        if (!b)
            continue;
        const fds_dict *dic = golden_codecs[k] == FDS_CODEC_ZSTD ? zdict
                            : golden_codecs[k] == FDS_CODEC_DEFLATE ? ddict : NULL;
        fds_block_info bi;
        ASSERT_EQ(fds_block_info_read(b, bl, &bi), 0);
        ASSERT_EQ(bi.codec, golden_codecs[k]);
        ASSERT_EQ(bi.doc_base, GOLDEN_DOC_BASE);
        ASSERT_EQ(bi.ndocs, GOLDEN_DOCS);
        ASSERT_EQ(bi.raw_len, rl);
        ASSERT_EQ(bi.encoded_len, bl);
        if (version)
            ASSERT_EQ(bi.format_version, version);
        fds_block_view v;
        ASSERT_EQ(fds_block_decode(ctx, b, bl, dic, UINT32_MAX, &v), 0);
        ASSERT_EQ(v.decoded_docs, GOLDEN_DOCS);
        ASSERT_MEM(v.raw, raw, rl);
        size_t off = 0;
        for (uint32_t i = 0; i < GOLDEN_DOCS; i++) {
            ASSERT_EQ(fds_block_decode(ctx, b, bl, dic, i, &v), 0);
            ASSERT(v.decoded_docs > i);
            ASSERT_EQ(v.offsets[i + 1] - v.offsets[i], lens[i]);
            ASSERT_MEM(v.raw + off, raw + off, lens[i]);
            off += lens[i];
        }
        fprintf(stderr, "%-32s %s\n", name, fds_test_failures ? "FAILED" : "ok");
        free(b);
    }
    fds_codec_ctx_free(ctx);
    fds_dict_free(zdict);
    fds_dict_free(ddict);
    free(zd); free(dd); free(nd); free(raw);
    return fds_test_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "gen"))
        return gen(argv[2], argv[3],
                   argc == 5 ? (unsigned)atoi(argv[4]) : FDS_BLOCK_FORMAT_VERSION);
    if ((argc == 3 || argc == 4) && !strcmp(argv[1], "check"))
        return check(argv[2], argc == 4 ? (unsigned)atoi(argv[3]) : 0);
    fprintf(stderr, "usage: golden_codec gen NGINX_LOG DIR [VERSION] | "
                    "golden_codec check DIR [VERSION]\n");
    return 2;
}
