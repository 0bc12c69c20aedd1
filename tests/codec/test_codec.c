/*
 * test_codec.c: unit tests of src/codec on real blocks cut from the nginx
 * sample (argv[1]): round trip of every codec, partial decodes return exactly
 * the right bytes, any flipped byte or truncation is FDS_ECORRUPT, a missing
 * / wrong-id / same-id-different-content dictionary is FDS_EDICT, edge cases
 * (empty docs, a doc bigger than the block size), rebase, names, threads.
 * The block tests run once per block format version (FDS_BLOCK_FORMAT_V2,
 * written today, and FDS_BLOCK_FORMAT_V1, which old segments hold).
 */
#include "codec.h"
#include "codec_testdata.h"
#include "fds_test.h"

#include <pthread.h>
#include <stdlib.h>

static td_docs docs;      /* JSON docs */
static td_docs lines;     /* raw log lines */
static fds_dict *zdict, *ddict, *zdict_other, *zdict_sameid, *ddict_sameid;
static const fds_codec_id all_codecs[] = {
    FDS_CODEC_LZ4, FDS_CODEC_ZSTD, FDS_CODEC_ZSTD_NO_DICT, FDS_CODEC_DEFLATE,
    FDS_CODEC_LUCENE_DEFLATE};
#define NCODECS (sizeof all_codecs / sizeof all_codecs[0])
/* The block format version the tests write (fds_codec_params). */
static uint32_t fmt_version = FDS_BLOCK_FORMAT_VERSION;

/* A doc base above most bases: 64 bits in version 1, 32 in version 2. */
static uint64_t big_base(void)
{
    return fmt_version == FDS_BLOCK_FORMAT_V1 ? 123456789012ull : 4000000000ull;
}

static const fds_dict *dict_for(fds_codec_id c)
{
    return c == FDS_CODEC_ZSTD ? zdict : c == FDS_CODEC_DEFLATE ? ddict : NULL;
}

static uint8_t *encode(fds_codec_id c, const fds_dict *d, const uint8_t *raw,
                       const uint32_t *lens, uint32_t n, uint64_t base,
                       size_t *len, uint32_t sub)
{
    fds_codec_params p;
    fds_codec_params_default(c, &p);
    p.format_version = fmt_version;
    if (sub)
        p.sub_blocks = sub;
    size_t raw_len = 0;
    for (uint32_t i = 0; i < n; i++)
        raw_len += lens[i];
    size_t cap = fds_block_bound(&p, raw_len, n);
    uint8_t *b = malloc(cap);
    int r = fds_block_encode(fds_codec_ctx_thread(), &p, d, base, raw, lens, n,
                             b, cap, len);
    ASSERT_EQ(r, 0);
    return b;
}

/* Decode blk fully and per doc; compare with raw. */
static void check_block(fds_codec_id c, const fds_dict *d, const uint8_t *b,
                        size_t len, const uint8_t *raw, const uint32_t *lens,
                        uint32_t n, uint64_t base)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    fds_block_info bi;
    ASSERT_EQ(fds_block_info_read(b, len, &bi), 0);
    ASSERT_EQ(bi.codec, c);
    ASSERT_EQ(bi.ndocs, n);
    ASSERT_EQ(bi.doc_base, base);
    ASSERT_EQ(bi.encoded_len, len);
    ASSERT_EQ(bi.dict_id, d ? fds_dict_id(d) : 0);
    ASSERT_EQ(bi.format_version, fmt_version);
    fds_block_view v;
    ASSERT_EQ(fds_block_decode(ctx, b, len, d, UINT32_MAX, &v), 0);
    size_t raw_len = 0;
    for (uint32_t i = 0; i < n; i++)
        raw_len += lens[i];
    ASSERT_EQ(bi.raw_len, raw_len);
    ASSERT_EQ(v.raw_len, raw_len);
    ASSERT_EQ(v.decoded_docs, n);
    ASSERT_EQ(v.first_doc, 0);
    ASSERT_EQ(v.decoded_bytes, raw_len);
    ASSERT_MEM(v.raw, raw, raw_len);
    /* Partial decodes: a prefix covering doc i, exact bytes. */
    /* Big (Lucene) chunks: every doc would cost O(n^2); take a stride. */
    uint32_t stride = n > 256 ? 37 : 1;
    for (uint32_t i = 0; i < n; i = (i + stride < n || i == n - 1) ? i + stride : n - 1) {
        size_t off = 0;
        for (uint32_t j = 0; j < i; j++)
            off += lens[j];
        ASSERT_EQ(fds_block_decode(ctx, b, len, d, i, &v), 0);
        ASSERT(v.decoded_docs > i);
        ASSERT_EQ(v.first_doc, 0);
        ASSERT(v.decoded_bytes >= off + lens[i]);
        ASSERT(v.decoded_bytes <= raw_len);
        ASSERT_EQ(v.offsets[i], off);
        ASSERT_EQ(v.offsets[i + 1], off + lens[i]);
        ASSERT_MEM(v.raw, raw, v.offsets[v.decoded_docs]);
        ASSERT_EQ(fds_block_decode_doc(ctx, b, len, d, i, &v), 0);
        ASSERT(v.first_doc <= i && v.decoded_docs > i);
        ASSERT_MEM(v.raw + v.offsets[v.first_doc], raw + v.offsets[v.first_doc],
                   v.offsets[v.decoded_docs] - v.offsets[v.first_doc]);
        if (i == n - 1)
            break;
    }
    ASSERT_EQ(fds_block_decode_doc(ctx, b, len, d, n, &v), FDS_EINVAL);
}

static void test_names(void)
{
    fds_codec_id id;
    /* libzstd is the one zstd.h was compiled with (static link). */
    ASSERT_EQ(fds_codec_zstd_check(NULL), 0);
    ASSERT_EQ(fds_codec_from_name("ZSTD", &id), 0); ASSERT_EQ(id, FDS_CODEC_ZSTD);
    ASSERT_EQ(fds_codec_from_name("zstd", &id), 0); ASSERT_EQ(id, FDS_CODEC_ZSTD);
    ASSERT_EQ(fds_codec_from_name("default", &id), 0); ASSERT_EQ(id, FDS_CODEC_LZ4);
    ASSERT_EQ(fds_codec_from_name("best_compression", &id), 0);
    ASSERT_EQ(id, FDS_CODEC_DEFLATE);
    ASSERT_EQ(fds_codec_from_name("zstd_no_dict", &id), 0);
    ASSERT_EQ(id, FDS_CODEC_ZSTD_NO_DICT);
    ASSERT_EQ(fds_codec_from_name("lucene_best_compression", &id), 0);
    ASSERT_EQ(id, FDS_CODEC_LUCENE_DEFLATE);
    ASSERT_EQ(fds_codec_from_name("snappy", &id), FDS_EINVAL);
    for (size_t i = 0; i < NCODECS; i++) {
        ASSERT_EQ(fds_codec_from_name(fds_codec_name(all_codecs[i]), &id), 0);
        ASSERT_EQ(id, all_codecs[i]);
    }
    ASSERT(fds_codec_uses_dict(FDS_CODEC_ZSTD));
    ASSERT(fds_codec_uses_dict(FDS_CODEC_DEFLATE));
    ASSERT(!fds_codec_uses_dict(FDS_CODEC_LZ4));
    fds_codec_params p;
    fds_codec_params_default(FDS_CODEC_LUCENE_DEFLATE, &p);
    ASSERT_EQ(p.block_size, 480 * 1024);
    ASSERT_EQ(p.max_docs_per_block, 4096);
    fds_codec_params_default(FDS_CODEC_ZSTD, &p);
    ASSERT_EQ(p.block_size, 16384);
    ASSERT_EQ(p.level, 3);
    /* CRC-32C check value of "123456789". */
    ASSERT_EQ(fds_crc32c(0, "123456789", 9), 0xE3069283u);
}

/* Every codec, every block of (a part of) the sample, JSON docs and lines. */
static void round_trip_set(const td_docs *set, size_t max_blocks)
{
    for (size_t k = 0; k < NCODECS; k++) {
        fds_codec_id c = all_codecs[k];
        fds_codec_params p;
        fds_codec_params_default(c, &p);
        size_t first = 0, nb = 0;
        while (first < set->n && nb < max_blocks) {
            size_t end = td_cut(set, first, p.block_size, p.max_docs_per_block);
            size_t len;
            uint32_t n = (uint32_t)(end - first);
            uint8_t *b = encode(c, dict_for(c), set->bytes + set->offs[first],
                                set->lens + first, n, first, &len, 0);
            check_block(c, dict_for(c), b, len, set->bytes + set->offs[first],
                        set->lens + first, n, first);
            free(b);
            first = end;
            nb++;
        }
    }
}

static void test_round_trip_json(void) { round_trip_set(&docs, 40); }
static void test_round_trip_lines(void) { round_trip_set(&lines, 10); }

static void test_sub_blocks(void)
{
    /* Every sub-block count gives the same bytes back. */
    size_t end = td_cut(&docs, 100, 16384, 128);
    uint32_t n = (uint32_t)(end - 100);
    uint32_t subs[] = {1, 2, 3, 8, 64, 1000};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        for (int z = 0; z < 2; z++) {
            fds_codec_id c = z ? FDS_CODEC_ZSTD : FDS_CODEC_ZSTD_NO_DICT;
            size_t len;
            uint8_t *b = encode(c, dict_for(c), docs.bytes + docs.offs[100],
                                docs.lens + 100, n, 7, &len, subs[i]);
            check_block(c, dict_for(c), b, len, docs.bytes + docs.offs[100],
                        docs.lens + 100, n, 7);
            free(b);
        }
    }
}

static void test_partial_then_other_codec(void)
{
    /* A partial ZSTD decode references the dictionary on the context's
     * decoder; a full zstd_no_dict decode on the same context right after
     * must not see it.  The partial decode counts whole zstd blocks: at
     * least the doc's end, less than the block for the first doc. */
    size_t end = td_cut(&docs, 300, 16384, 128);
    uint32_t n = (uint32_t)(end - 300);
    const uint8_t *raw = docs.bytes + docs.offs[300];
    size_t zl, nl;
    uint8_t *zb = encode(FDS_CODEC_ZSTD, zdict, raw, docs.lens + 300, n, 0, &zl, 0);
    uint8_t *nb = encode(FDS_CODEC_ZSTD_NO_DICT, NULL, raw, docs.lens + 300, n, 0, &nl, 0);
    fds_codec_ctx *ctx = fds_codec_ctx_create();
    fds_block_view v;
    for (int round = 0; round < 2; round++) {
        ASSERT_EQ(fds_block_decode(ctx, zb, zl, zdict, 0, &v), 0);
        ASSERT(v.decoded_bytes >= docs.lens[300]);
        ASSERT(v.decoded_bytes < v.raw_len);
        ASSERT(v.decoded_docs >= 1);
        ASSERT_EQ(memcmp(v.raw, raw, v.decoded_bytes), 0);
        ASSERT_EQ(fds_block_decode(ctx, nb, nl, NULL, UINT32_MAX, &v), 0);
        ASSERT_EQ(v.decoded_bytes, v.raw_len);
        ASSERT_EQ(memcmp(v.raw, raw, v.raw_len), 0);
        ASSERT_EQ(fds_block_decode(ctx, nb, nl, NULL, 0, &v), 0);
        ASSERT_EQ(memcmp(v.raw, raw, v.decoded_bytes), 0);
    }
    fds_codec_ctx_free(ctx);
    free(zb);
    free(nb);
}

static void test_edge_docs(void)
{
    /* Empty docs among others, a block of only empty docs, one doc bigger
     * than the block size (1 MiB: also bigger than a Lucene chunk). */
    size_t big = 1u << 20;
    uint8_t *raw = malloc(big);
    for (size_t i = 0; i < big; i++)
        raw[i] = docs.bytes[i % docs.len];
    uint32_t mixed[] = {0, 10, 0, 0, 500, 0};
    uint32_t empties[] = {0, 0, 0};
    uint32_t one_empty[] = {0};
    uint32_t huge[] = {(uint32_t)big};
    uint32_t huge2[] = {5, (uint32_t)big - 10, 5};
    struct { const uint32_t *l; uint32_t n; } cases[] = {
        {mixed, 6}, {empties, 3}, {one_empty, 1}, {huge, 1}, {huge2, 3}};
    for (size_t k = 0; k < NCODECS; k++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            size_t len;
            uint8_t *b = encode(all_codecs[k], dict_for(all_codecs[k]), raw,
                                cases[i].l, cases[i].n, big_base(), &len, 0);
            check_block(all_codecs[k], dict_for(all_codecs[k]), b, len, raw,
                        cases[i].l, cases[i].n, big_base());
            free(b);
        }
    free(raw);
}

/* Every single-byte change and every truncation is an error. */
static void test_corruption(void)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    size_t end = td_cut(&docs, 300, 4096, 128); /* small block: flip all */
    uint32_t n = (uint32_t)(end - 300);
    for (size_t k = 0; k < NCODECS; k++) {
        fds_codec_id c = all_codecs[k];
        const fds_dict *d = dict_for(c);
        size_t len;
        uint8_t *b = encode(c, d, docs.bytes + docs.offs[300], docs.lens + 300,
                            n, 300, &len, 0);
        int bad = 0;
        for (size_t pos = 0; pos < len; pos++) {
            for (int bit = 0; bit < 8; bit += 3) {
                b[pos] ^= (uint8_t)(1u << bit);
                fds_block_view v;
                int r1 = fds_block_decode(ctx, b, len, d, UINT32_MAX, &v);
                int r2 = fds_block_decode(ctx, b, len, d, 0, &v);
                if (r1 != FDS_ECORRUPT || r2 != FDS_ECORRUPT)
                    bad++;
                b[pos] ^= (uint8_t)(1u << bit);
            }
        }
        ASSERT_EQ(bad, 0);
        for (size_t l = 0; l < len; l++) {
            fds_block_view v;
            if (fds_block_decode(ctx, b, l, d, UINT32_MAX, &v) != FDS_ECORRUPT)
                bad++;
        }
        ASSERT_EQ(bad, 0);
        /* Rebase keeps the block valid, and the checksum covers doc_base. */
        ASSERT_EQ(fds_block_rebase(b, len, big_base()), 0);
        fds_block_info bi;
        ASSERT_EQ(fds_block_info_read(b, len, &bi), 0);
        ASSERT_EQ(bi.doc_base, big_base());
        check_block(c, d, b, len, docs.bytes + docs.offs[300], docs.lens + 300,
                    n, big_base());
        /* A new dictionary id keeps the block valid for a dictionary of
         * the same bytes under that id, and only for it. */
        if (d) {
            size_t dl;
            const uint8_t *db = fds_dict_bytes(d, &dl);
            fds_dict *same = NULL;
            ASSERT_EQ(fds_dict_create(fds_dict_id(d) + 1000, c, 3, db, dl, &same), 0);
            ASSERT_EQ(fds_block_set_dict(b, len, fds_dict_id(d) + 1000), 0);
            ASSERT_EQ(fds_block_info_read(b, len, &bi), 0);
            ASSERT_EQ(bi.dict_id, fds_dict_id(d) + 1000);
            check_block(c, same, b, len, docs.bytes + docs.offs[300], docs.lens + 300,
                        n, big_base());
            fds_block_view v;
            ASSERT_EQ(fds_block_decode(ctx, b, len, d, UINT32_MAX, &v), FDS_EDICT);
            ASSERT_EQ(fds_block_set_dict(b, len, 0), FDS_EINVAL);
            ASSERT_EQ(fds_block_set_dict(b, len, fds_dict_id(d)), 0);
            fds_dict_free(same);
        } else {
            ASSERT_EQ(fds_block_set_dict(b, len, 7), FDS_EINVAL);
            ASSERT_EQ(fds_block_set_dict(b, len, 0), 0);
        }
        check_block(c, d, b, len, docs.bytes + docs.offs[300], docs.lens + 300,
                    n, big_base());
        b[20] ^= 1;
        ASSERT_EQ(fds_block_rebase(b, len, 5), FDS_ECORRUPT);
        ASSERT_EQ(fds_block_set_dict(b, len, 0), FDS_ECORRUPT);
        free(b);
    }
}

static void test_wrong_dict(void)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    size_t end = td_cut(&docs, 500, 16384, 128);
    uint32_t n = (uint32_t)(end - 500);
    fds_block_view v;
    for (int z = 0; z < 2; z++) {
        fds_codec_id c = z ? FDS_CODEC_ZSTD : FDS_CODEC_DEFLATE;
        const fds_dict *d = dict_for(c);
        const fds_dict *same = z ? zdict_sameid : ddict_sameid;
        size_t len;
        uint8_t *b = encode(c, d, docs.bytes + docs.offs[500], docs.lens + 500,
                            n, 500, &len, 0);
        for (uint32_t upto = 0; upto < 2; upto++) {
            uint32_t u = upto ? UINT32_MAX : 0;
            ASSERT_EQ(fds_block_decode(ctx, b, len, NULL, u, &v), FDS_EDICT);
            ASSERT_EQ(fds_block_decode(ctx, b, len, zdict_other, u, &v), FDS_EDICT);
            ASSERT_EQ(fds_block_decode(ctx, b, len, same, u, &v), FDS_EDICT);
            ASSERT_EQ(fds_block_decode(ctx, b, len, z ? ddict : zdict, u, &v),
                      FDS_EDICT);
            ASSERT_EQ(fds_block_decode(ctx, b, len, d, u, &v), 0);
        }
        /* Encoding needs the codec's dictionary. */
        fds_codec_params p;
        fds_codec_params_default(c, &p);
        size_t l2;
        uint8_t tmp[64];
        uint32_t one = 1;
        ASSERT_EQ(fds_block_encode(ctx, &p, NULL, 0, (const uint8_t *)"x", &one,
                                   1, tmp, sizeof tmp, &l2), FDS_EDICT);
        ASSERT_EQ(fds_block_encode(ctx, &p, z ? ddict : zdict, 0,
                                   (const uint8_t *)"x", &one, 1, tmp,
                                   sizeof tmp, &l2), FDS_EDICT);
        free(b);
    }
}

static void test_encode_errors(void)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    size_t end = td_cut(&docs, 0, 16384, 128);
    uint32_t n = (uint32_t)end;
    for (size_t k = 0; k < NCODECS; k++) {
        fds_codec_params p;
        fds_codec_params_default(all_codecs[k], &p);
        uint8_t small[200];
        size_t len;
        ASSERT_EQ(fds_block_encode(ctx, &p, dict_for(all_codecs[k]), 0,
                                   docs.bytes, docs.lens, n, small,
                                   sizeof small, &len), FDS_ERANGE);
        ASSERT_EQ(fds_block_encode(ctx, &p, dict_for(all_codecs[k]), 0,
                                   docs.bytes, docs.lens, 0, small,
                                   sizeof small, &len), FDS_EINVAL);
    }
    fds_codec_params p;
    fds_codec_params_default(FDS_CODEC_ZSTD_NO_DICT, &p);
    p.level = 20;
    uint8_t buf[256];
    size_t len;
    uint32_t one = 1;
    ASSERT_EQ(fds_block_encode(ctx, &p, NULL, 0, (const uint8_t *)"x", &one, 1,
                               buf, sizeof buf, &len), FDS_EINVAL);
    for (int lv = 1; lv <= 19; lv += 6) {
        p.level = lv;
        ASSERT_EQ(fds_block_encode(ctx, &p, NULL, 0, docs.bytes, docs.lens, 1,
                                   buf, sizeof buf, &len), FDS_ERANGE);
    }
    fds_codec_ctx *own = fds_codec_ctx_create();
    ASSERT(own != NULL);
    fds_codec_ctx_free(own);
    fds_codec_ctx_free(NULL);
    fds_dict_free(NULL);
    fds_dict *dd;
    ASSERT_EQ(fds_dict_create(1, FDS_CODEC_LZ4, 3, docs.bytes, 100, &dd), FDS_EINVAL);
    ASSERT_EQ(fds_dict_create(0, FDS_CODEC_ZSTD, 3, docs.bytes, 100, &dd), FDS_EINVAL);
    ASSERT_EQ(fds_dict_create(1, FDS_CODEC_ZSTD, 0, docs.bytes, 100, &dd), FDS_EINVAL);
}

/* Version 2 against version 1: smaller blocks of the same docs, both
 * decoded by one context in turn (its zstd frame format switches), 32-bit
 * doc bases only, unknown versions refused. */
static void test_versions(void)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    size_t end = td_cut(&docs, 1000, 16384, 128);
    uint32_t n = (uint32_t)(end - 1000);
    const uint8_t *raw = docs.bytes + docs.offs[1000];
    const uint32_t *lens = docs.lens + 1000;
    uint32_t keep = fmt_version;
    for (size_t k = 0; k < NCODECS; k++) {
        fds_codec_id c = all_codecs[k];
        const fds_dict *d = dict_for(c);
        size_t l1, l2;
        fmt_version = FDS_BLOCK_FORMAT_V1;
        uint8_t *b1 = encode(c, d, raw, lens, n, 1000, &l1, 0);
        fmt_version = FDS_BLOCK_FORMAT_V2;
        uint8_t *b2 = encode(c, d, raw, lens, n, 1000, &l2, 0);
        ASSERT(l2 < l1);
        fds_block_info bi;
        for (int rep = 0; rep < 2; rep++) {
            fmt_version = FDS_BLOCK_FORMAT_V1;
            check_block(c, d, b1, l1, raw, lens, n, 1000);
            fmt_version = FDS_BLOCK_FORMAT_V2;
            check_block(c, d, b2, l2, raw, lens, n, 1000);
        }
        ASSERT_EQ(fds_block_rebase(b2, l2, 1ull << 32), FDS_EINVAL);
        ASSERT_EQ(fds_block_rebase(b2, l2, UINT32_MAX), 0);
        ASSERT_EQ(fds_block_info_read(b2, l2, &bi), 0);
        ASSERT_EQ(bi.doc_base, UINT32_MAX);
        ASSERT_EQ(fds_block_rebase(b1, l1, 1ull << 32), 0);
        fds_codec_params p;
        fds_codec_params_default(c, &p);
        size_t cap = fds_block_bound(&p, docs.offs[end] - docs.offs[1000], n), len;
        uint8_t *tmp = malloc(cap);
        ASSERT_EQ(fds_block_encode(ctx, &p, d, 1ull << 32, raw, lens, n, tmp,
                                   cap, &len), FDS_EINVAL);
        p.format_version = 3;
        ASSERT_EQ(fds_block_encode(ctx, &p, d, 0, raw, lens, n, tmp, cap, &len),
                  FDS_EINVAL);
        /* A version byte changed to an unknown one is a damaged block. */
        b2[4] = 3;
        fds_block_view v;
        ASSERT_EQ(fds_block_decode(ctx, b2, l2, d, UINT32_MAX, &v), FDS_ECORRUPT);
        free(tmp);
        free(b1);
        free(b2);
    }
    fmt_version = keep;
}

static void *thread_main(void *arg)
{
    (void)arg;
    int before = fds_test_failures;
    round_trip_set(&docs, 5);
    return (void *)(intptr_t)(fds_test_failures != before);
}

static void test_threads(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(pthread_create(&t[i], NULL, thread_main, NULL), 0);
    for (int i = 0; i < 2; i++) {
        void *rv;
        pthread_join(t[i], &rv);
        ASSERT(rv == NULL);
    }
}

static fds_dict *train(fds_codec_id c, uint32_t id, size_t first, size_t nd,
                       size_t cap)
{
    uint8_t *buf = malloc(cap);
    size_t *sl = malloc(nd * sizeof *sl), len = 0;
    for (size_t i = 0; i < nd; i++)
        sl[i] = docs.lens[first + i];
    ASSERT_EQ(fds_dict_train(c, docs.bytes + docs.offs[first], sl, (unsigned)nd,
                             cap, buf, &len), 0);
    ASSERT(len > 0 && len <= cap);
    if (c == FDS_CODEC_DEFLATE)
        ASSERT(len <= FDS_DEFLATE_DICT_MAX);
    fds_dict *d = NULL;
    ASSERT_EQ(fds_dict_create(id, c, 3, buf, len, &d), 0);
    ASSERT_EQ(fds_dict_id(d), id);
    free(buf);
    free(sl);
    return d;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_codec NGINX_LOG\n");
        return 2;
    }
    if (td_load(argv[1], 1, 10000, &docs) || td_load(argv[1], 0, 3000, &lines)) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    ASSERT_EQ(docs.n, 10000);
    zdict = train(FDS_CODEC_ZSTD, 7, 0, 2000, FDS_DICT_SIZE_DEFAULT);
    ddict = train(FDS_CODEC_DEFLATE, 8, 0, 2000, FDS_DICT_SIZE_DEFAULT);
    zdict_other = train(FDS_CODEC_ZSTD, 9, 5000, 2000, 16384);
    zdict_sameid = train(FDS_CODEC_ZSTD, 7, 5000, 2000, FDS_DICT_SIZE_DEFAULT);
    ddict_sameid = train(FDS_CODEC_DEFLATE, 8, 5000, 2000, FDS_DICT_SIZE_DEFAULT);
    RUN(test_names);
    RUN(test_versions);
    for (int k = 0; k < 2; k++) {
        fmt_version = k ? FDS_BLOCK_FORMAT_V1 : FDS_BLOCK_FORMAT_V2;
        fprintf(stderr, "-- block format version %u\n", fmt_version);
        RUN(test_round_trip_json);
        RUN(test_round_trip_lines);
        RUN(test_sub_blocks);
        RUN(test_partial_then_other_codec);
        RUN(test_edge_docs);
        RUN(test_corruption);
        RUN(test_wrong_dict);
        RUN(test_encode_errors);
        RUN(test_threads);
    }
    fds_dict_free(zdict);
    fds_dict_free(ddict);
    fds_dict_free(zdict_other);
    fds_dict_free(zdict_sameid);
    fds_dict_free(ddict_sameid);
    td_free(&docs);
    td_free(&lines);
    fprintf(stderr, "%d failure(s)\n", fds_test_failures);
    return fds_test_failures ? 1 : 0;
}
