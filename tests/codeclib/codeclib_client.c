/*
 * codeclib_client.c: a program outside fieldstore that uses the INSTALLED
 * libfieldstore-codec, compiled by run_installed.sh with nothing but
 * `pkg-config --cflags --libs fieldstore-codec` of a fresh install (and the
 * test assertion macros of tests/common/fds_test.h).
 *
 * What it checks, on the bundled sample's JSON documents (one per line of
 * the file given, made by nginx2json): a dictionary trained per codec that
 * uses one; every document of every codec encoded into blocks cut as the
 * server cuts them and decoded back byte for byte, one document at a time
 * with a reader's own context and its own digested dictionary, and whole
 * blocks; a one-document decode that stops early; a flipped bit anywhere
 * in a block that the checksum check refuses; a wrong dictionary refused;
 * every fdsc_params rule; rebase and dictionary-id rewrites.  Prints one
 * line per codec (documents, blocks, raw and encoded bytes).
 *
 *   codeclib_client DOCS.ndjson
 */
#include <fieldstore/codec.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_test.h"

#define TRAIN_DOCS 2000u   /* documents the dictionaries are trained on */
#define DICT_ID 7u         /* the id the test's dictionaries carry */
#define REBASE_TO 1000000u /* doc base of a rebased block copy */

typedef struct docs {
    uint8_t *bytes;  /* documents end to end */
    size_t len;
    uint32_t *lens;
    size_t *offs;    /* offs[i]: start of document i */
    uint32_t n;
} docs;

typedef struct block {
    uint8_t *p;
    size_t len;
    uint32_t first, ndocs; /* documents [first, first+ndocs) of the docs */
} block;

/* One document per line of `path`, without the newline. */
static int read_docs(const char *path, docs *d)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    d->bytes = malloc((size_t)sz + 1);
    if (!d->bytes || fread(d->bytes, 1, (size_t)sz, f) != (size_t)sz) {
        fclose(f);
        return -1;
    }
    fclose(f);
    size_t lines = 0;
    for (long i = 0; i < sz; i++)
        lines += d->bytes[i] == '\n';
    d->lens = malloc((lines + 1) * sizeof *d->lens);
    d->offs = malloc((lines + 1) * sizeof *d->offs);
    if (!d->lens || !d->offs)
        return -1;
    /* Compact: drop the newlines so documents lie end to end. */
    size_t w = 0, start = 0;
    d->n = 0;
    for (size_t i = 0; i < (size_t)sz; i++) {
        if (d->bytes[i] != '\n')
            continue;
        size_t l = i - start;
        memmove(d->bytes + w, d->bytes + start, l);
        d->offs[d->n] = w;
        d->lens[d->n++] = (uint32_t)l;
        w += l;
        start = i + 1;
    }
    d->len = w;
    return d->n ? 0 : -1;
}

/* A dictionary for `codec` trained on the first TRAIN_DOCS documents,
 * digested at `level`; NULL for codecs without one. */
static fdsc_dict *train(int codec, int level, const docs *d, uint8_t **bytes,
                        size_t *len)
{
    *bytes = NULL;
    *len = 0;
    if (!fdsc_codec_uses_dict(codec))
        return NULL;
    uint32_t n = d->n < TRAIN_DOCS ? d->n : TRAIN_DOCS;
    size_t *lens = malloc(n * sizeof *lens);
    size_t cap = fdsc_dict_size_default(codec);
    *bytes = malloc(cap);
    if (!lens || !*bytes)
        abort();
    for (uint32_t i = 0; i < n; i++)
        lens[i] = d->lens[i];
    int r = fdsc_dict_train(codec, d->bytes, lens, n, cap, *bytes, len);
    free(lens);
    ASSERTF(r == FDSC_OK, "train %s: %s", fdsc_codec_name(codec),
            fdsc_strerror(r));
    ASSERT(*len > 0 && *len <= cap);
    fdsc_dict *dict = NULL;
    r = fdsc_dict_create(codec, level, DICT_ID, *bytes, *len, &dict);
    ASSERTF(r == FDSC_OK, "dict_create: %s", fdsc_strerror(r));
    ASSERT_EQ(fdsc_dict_id(dict), DICT_ID);
    ASSERT_EQ(fdsc_dict_codec(dict), codec);
    return dict;
}

/* Cut the documents into blocks as the server does and encode them,
 * alternating fdsc_block_encode and fdsc_block_encode_docs. */
static block *encode_all(fdsc_ctx *ctx, const fdsc_params *p,
                         const fdsc_dict *dict, const docs *d, uint32_t *nb)
{
    uint32_t bytes_max, docs_max;
    ASSERT_EQ(fdsc_block_size_default(p->codec, &bytes_max, &docs_max), 0);
    block *b = calloc(d->n, sizeof *b);
    const uint8_t **ptrs = malloc(d->n * sizeof *ptrs);
    if (!b || !ptrs)
        abort();
    *nb = 0;
    for (uint32_t i = 0; i < d->n;) {
        uint32_t k = 0;
        size_t raw = 0;
        while (i + k < d->n && k < docs_max && (k == 0 || raw < bytes_max))
            raw += d->lens[i + k++];
        size_t bound = fdsc_block_bound(p, raw, k), w = 0;
        block *x = &b[(*nb)++];
        x->p = malloc(bound);
        if (!x->p)
            abort();
        int r;
        if (*nb % 2) {
            r = fdsc_block_encode(ctx, p, dict, i, d->bytes + d->offs[i],
                                  d->lens + i, k, x->p, bound, &w);
        } else {
            for (uint32_t j = 0; j < k; j++)
                ptrs[j] = d->bytes + d->offs[i + j];
            r = fdsc_block_encode_docs(ctx, p, dict, i, ptrs, d->lens + i, k,
                                       x->p, bound, &w);
        }
        ASSERTF(r == FDSC_OK, "%s block at doc %u: %s",
                fdsc_codec_name(p->codec), i, fdsc_strerror(r));
        ASSERT(w > 0 && w <= bound);
        x->len = w;
        x->first = i;
        x->ndocs = k;
        i += k;
    }
    free(ptrs);
    return b;
}

/* Every document back, byte for byte, by a reader with its own context and
 * dictionary; then whole blocks. */
static void decode_all(const block *b, uint32_t nb, const fdsc_dict *rdict,
                       const docs *d)
{
    fdsc_ctx *ctx = NULL;
    REQUIRE(fdsc_ctx_create(&ctx) == FDSC_OK);
    uint32_t bad = 0;
    for (uint32_t k = 0; k < nb; k++) {
        fdsc_block_info bi;
        REQUIRE(fdsc_block_info_read(b[k].p, b[k].len, &bi) == FDSC_OK);
        ASSERT_EQ(bi.ndocs, b[k].ndocs);
        ASSERT_EQ(bi.doc_base, b[k].first);
        ASSERT_EQ(bi.encoded_len, b[k].len);
        ASSERT_EQ(bi.dict_id, rdict ? DICT_ID : 0);
        ASSERT_EQ(fdsc_block_verify(b[k].p, b[k].len), FDSC_OK);
        uint8_t *buf = malloc(bi.raw_len + 1);
        uint32_t *offs = malloc((bi.ndocs + 1) * sizeof *offs);
        if (!buf || !offs)
            abort();
        for (uint32_t j = 0; j < bi.ndocs; j++) {
            size_t n = 0;
            uint32_t doc = b[k].first + j;
            int r = fdsc_doc_decode(ctx, rdict, b[k].p, b[k].len, j, buf,
                                    bi.raw_len, &n);
            if (r || n != d->lens[doc] ||
                memcmp(buf, d->bytes + d->offs[doc], n))
                bad++;
        }
        size_t raw = 0;
        int r = fdsc_block_decode(ctx, rdict, b[k].p, b[k].len, buf,
                                  bi.raw_len, offs, bi.ndocs + 1, &raw);
        ASSERT_EQ(r, FDSC_OK);
        ASSERT_EQ(raw, bi.raw_len);
        ASSERT(memcmp(buf, d->bytes + d->offs[b[k].first], raw) == 0);
        ASSERT_EQ(offs[bi.ndocs], raw);
        ASSERT_EQ(fdsc_ctx_last_decoded_bytes(ctx), raw);
        free(buf);
        free(offs);
    }
    ASSERTF(bad == 0, "%u documents did not decode to their bytes", bad);
    fdsc_ctx_free(ctx);
}

/* A one-document read of the first document stops early (all codecs but
 * LZ4 on a block whose first document is small next to the block). */
static void partial(fdsc_ctx *ctx, const block *x, const fdsc_dict *dict)
{
    fdsc_block_info bi;
    REQUIRE(fdsc_block_info_read(x->p, x->len, &bi) == FDSC_OK);
    uint8_t *buf = malloc(bi.raw_len);
    size_t n = 0;
    if (!buf)
        abort();
    ASSERT_EQ(fdsc_doc_decode(ctx, dict, x->p, x->len, 0, buf, bi.raw_len, &n),
              FDSC_OK);
    size_t got = fdsc_ctx_last_decoded_bytes(ctx);
    ASSERTF(got < bi.raw_len, "%s: decoded %zu of %u bytes for doc 0",
            fdsc_codec_name(bi.codec), got, bi.raw_len);
    /* a buffer one byte short: FDSC_ERANGE and the size needed */
    size_t need = 0;
    ASSERT_EQ(fdsc_doc_decode(ctx, dict, x->p, x->len, 0, buf, n - 1, &need),
              FDSC_ERANGE);
    ASSERT_EQ(need, n);
    ASSERT_EQ(fdsc_doc_decode(ctx, dict, x->p, x->len, bi.ndocs, buf,
                              bi.raw_len, &need),
              FDSC_EINVAL);
    free(buf);
}

/* Flip one bit of every byte of a copy of the block: the checksum check
 * and the decode refuse each one. */
static void flipped(fdsc_ctx *ctx, const block *x, const fdsc_dict *dict)
{
    uint8_t *c = malloc(x->len), *buf = malloc(FDSC_BLOCK_RAW_LIMIT / 1024);
    if (!c || !buf)
        abort();
    uint32_t accepted = 0, decoded = 0;
    for (size_t i = 0; i < x->len; i++) {
        memcpy(c, x->p, x->len);
        c[i] ^= (uint8_t)(1u << (i % 8));
        if (fdsc_block_verify(c, x->len) != FDSC_ECORRUPT)
            accepted++;
        size_t n;
        int r = fdsc_doc_decode(ctx, dict, c, x->len, 0, buf,
                                FDSC_BLOCK_RAW_LIMIT / 1024, &n);
        if (r != FDSC_ECORRUPT)
            decoded++;
    }
    ASSERTF(accepted == 0, "%u of %zu one-bit flips passed the check",
            accepted, x->len);
    ASSERTF(decoded == 0, "%u of %zu one-bit flips decoded", decoded, x->len);
    /* cut short */
    ASSERT_EQ(fdsc_block_verify(x->p, x->len - 1), FDSC_ECORRUPT);
    free(c);
    free(buf);
}

/* Rebase and dictionary-id rewrite of a copy keep it valid. */
static void copy_block(fdsc_ctx *ctx, const block *x, fdsc_dict *dict,
                       int codec, const uint8_t *dbytes, size_t dlen,
                       const docs *d)
{
    uint8_t *c = malloc(x->len), buf[65536];
    if (!c)
        abort();
    memcpy(c, x->p, x->len);
    ASSERT_EQ(fdsc_block_rebase(c, x->len, REBASE_TO), FDSC_OK);
    fdsc_block_info bi;
    ASSERT_EQ(fdsc_block_info_read(c, x->len, &bi), FDSC_OK);
    ASSERT_EQ(bi.doc_base, REBASE_TO);
    ASSERT_EQ(fdsc_block_verify(c, x->len), FDSC_OK);
    size_t n = 0;
    ASSERT_EQ(fdsc_doc_decode(ctx, dict, c, x->len, 0, buf, sizeof buf, &n),
              FDSC_OK);
    ASSERT(n == d->lens[x->first] &&
           memcmp(buf, d->bytes + d->offs[x->first], n) == 0);
    if (!dict) {
        ASSERT_EQ(fdsc_block_set_dict_id(c, x->len, 9), FDSC_EINVAL);
        free(c);
        return;
    }
    /* same bytes under another id: refused until the block is renamed */
    fdsc_dict *other = NULL;
    REQUIRE(fdsc_dict_create(codec, fdsc_dict_level(dict), DICT_ID + 1,
                             dbytes, dlen, &other) == FDSC_OK);
    ASSERT_EQ(fdsc_doc_decode(ctx, other, c, x->len, 0, buf, sizeof buf, &n),
              FDSC_EDICT);
    ASSERT_EQ(fdsc_block_set_dict_id(c, x->len, DICT_ID + 1), FDSC_OK);
    ASSERT_EQ(fdsc_doc_decode(ctx, other, c, x->len, 0, buf, sizeof buf, &n),
              FDSC_OK);
    ASSERT_EQ(fdsc_block_set_dict_id(c, x->len, 0), FDSC_EINVAL);
    fdsc_dict_free(other);
    /* other bytes under the right id: refused, never wrong output */
    uint8_t *mod = malloc(dlen);
    if (!mod)
        abort();
    memcpy(mod, dbytes, dlen);
    mod[dlen / 2] ^= 1;
    REQUIRE(fdsc_dict_create(codec, fdsc_dict_level(dict), DICT_ID, mod, dlen,
                             &other) == FDSC_OK);
    ASSERT_EQ(fdsc_doc_decode(ctx, other, x->p, x->len, 0, buf, sizeof buf,
                              &n),
              FDSC_EDICT);
    ASSERT_EQ(fdsc_doc_decode(ctx, NULL, x->p, x->len, 0, buf, sizeof buf, &n),
              FDSC_EDICT);
    fdsc_dict_free(other);
    free(mod);
    free(c);
}

/* Every rule of fdsc_params and the encode arguments. */
static void params_rules(fdsc_ctx *ctx, const fdsc_dict *zdict)
{
    static const uint8_t doc[] = "{\"a\":1}";
    uint32_t len = sizeof doc - 1;
    uint8_t dst[1024];
    size_t w;
    fdsc_params p;
    ASSERT_EQ(fdsc_params_init(&p, 0), FDSC_EINVAL);
    ASSERT_EQ(fdsc_params_init(&p, FDSC_CODEC_LZ4), FDSC_OK);
    ASSERT_EQ(p.size, sizeof p);
    p.level = 3; /* LZ4 has no level */
    ASSERT_EQ(fdsc_block_encode(ctx, &p, NULL, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_EINVAL);
    fdsc_params_init(&p, FDSC_CODEC_DEFLATE);
    p.sub_blocks = 2; /* only zstd blocks have sub-blocks */
    ASSERT_EQ(fdsc_block_encode(ctx, &p, NULL, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_EINVAL);
    fdsc_params_init(&p, FDSC_CODEC_ZSTD_NO_DICT);
    p.sub_blocks = FDSC_SUB_BLOCKS_MAX + 1;
    ASSERT_EQ(fdsc_block_encode(ctx, &p, NULL, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_EINVAL);
    p.sub_blocks = 1;
    p.level = FDSC_ZSTD_LEVEL_MAX + 1;
    ASSERT_EQ(fdsc_block_encode(ctx, &p, NULL, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_EINVAL);
    p.level = FDSC_ZSTD_LEVEL_MAX;
    ASSERT_EQ(fdsc_block_encode(ctx, &p, NULL, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_OK);
    ASSERT_EQ(fdsc_block_encode(ctx, &p, zdict, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_EINVAL); /* a dictionary for a codec without one */
    p.size = sizeof p + 4;
    ASSERT_EQ(fdsc_block_encode(ctx, &p, NULL, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_EINVAL);
    ASSERT_EQ(fdsc_block_bound(&p, 100, 1), 0);
    fdsc_params_init(&p, FDSC_CODEC_ZSTD);
    ASSERT_EQ(fdsc_block_encode(ctx, &p, NULL, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_EDICT);
    p.level = fdsc_dict_level(zdict) + 1; /* not the dictionary's level */
    ASSERT_EQ(fdsc_block_encode(ctx, &p, zdict, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_EINVAL);
    p.level = fdsc_dict_level(zdict);
    ASSERT_EQ(fdsc_block_encode(ctx, &p, zdict, 0, doc, &len, 1, dst, 8, &w),
              FDSC_ERANGE);
    ASSERT_EQ(fdsc_block_encode(ctx, &p, zdict, 0, doc, &len, 0, dst,
                                sizeof dst, &w),
              FDSC_EINVAL);
    ASSERT_EQ(fdsc_block_encode(ctx, &p, zdict, 0, doc, &len, 1, dst,
                                sizeof dst, &w),
              FDSC_OK);
    /* a block of only empty documents */
    uint32_t zero[3] = {0, 0, 0};
    fdsc_params_init(&p, FDSC_CODEC_LZ4);
    ASSERT_EQ(fdsc_block_encode(ctx, &p, NULL, 5, NULL, zero, 3, dst,
                                sizeof dst, &w),
              FDSC_OK);
    size_t n = 1;
    ASSERT_EQ(fdsc_doc_decode(ctx, NULL, dst, w, 2, NULL, 0, &n), FDSC_OK);
    ASSERT_EQ(n, 0);
}

static void names_and_errors(void)
{
    ASSERT_EQ(fdsc_version(), FDSC_VERSION_NUMBER);
    fdsc_codec c;
    ASSERT_EQ(fdsc_codec_from_name("zstd", &c), FDSC_OK);
    ASSERT_EQ(c, FDSC_CODEC_ZSTD);
    ASSERT_EQ(fdsc_codec_from_name("lucene_best_compression", &c), FDSC_OK);
    ASSERT_EQ(c, FDSC_CODEC_LUCENE_DEFLATE);
    ASSERT_EQ(fdsc_codec_from_name("brotli", &c), FDSC_EINVAL);
    ASSERT(strcmp(fdsc_codec_name(FDSC_CODEC_DEFLATE), "best_compression") == 0);
    ASSERT(strcmp(fdsc_codec_name(99), "unknown") == 0);
    ASSERT(fdsc_codec_uses_dict(FDSC_CODEC_ZSTD));
    ASSERT(!fdsc_codec_uses_dict(FDSC_CODEC_LUCENE_DEFLATE));
    ASSERT(strcmp(fdsc_strerror(12345), "unknown error") == 0);
    int codes[] = {FDSC_OK,    FDSC_ENOMEM, FDSC_ECORRUPT,     FDSC_EDICT,
                   FDSC_EINVAL, FDSC_ERANGE, FDSC_EUNSUPPORTED, FDSC_ETOOBIG};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        ASSERT(strcmp(fdsc_strerror(codes[i]), "unknown error") != 0);
    ASSERT_EQ(fdsc_dict_size_default(FDSC_CODEC_LZ4), 0);
    static const uint8_t bytes[] = "{\"status\":200,\"method\":\"GET\"}";
    fdsc_dict *d = NULL;
    ASSERT_EQ(fdsc_dict_create(FDSC_CODEC_DEFLATE, 6, 1, bytes, sizeof bytes,
                               &d),
              FDSC_EINVAL); /* DEFLATE blocks have no level to choose */
    ASSERT_EQ(fdsc_dict_create(FDSC_CODEC_ZSTD, 0, 1, bytes, sizeof bytes, &d),
              FDSC_EINVAL);
    ASSERT_EQ(fdsc_dict_create(FDSC_CODEC_ZSTD, 3, 0, bytes, sizeof bytes, &d),
              FDSC_EINVAL);
    ASSERT_EQ(fdsc_dict_create(FDSC_CODEC_LZ4, 0, 1, bytes, sizeof bytes, &d),
              FDSC_EINVAL);
    ASSERT(d == NULL);
    uint32_t b = 0, m = 0;
    ASSERT_EQ(fdsc_block_size_default(FDSC_CODEC_LUCENE_DEFLATE, &b, &m), 0);
    ASSERT(b > 16384 && m > 128);
    ASSERT_EQ(fdsc_ctx_create(NULL), FDSC_EINVAL);
    fdsc_ctx_free(NULL);
    fdsc_dict_free(NULL);
}

int main(int argc, char **argv)
{
    docs d = {0};
    if (argc != 2 || read_docs(argv[1], &d)) {
        fprintf(stderr, "usage: codeclib_client DOCS.ndjson (one JSON "
                        "document per line)\n");
        return 2;
    }
    names_and_errors();
    fdsc_ctx *ctx = NULL;
    if (fdsc_ctx_create(&ctx) != FDSC_OK)
        return 1;
    for (int codec = FDSC_CODEC_LZ4; codec <= FDSC_CODEC_LUCENE_DEFLATE;
         codec++) {
        int level = codec == FDSC_CODEC_ZSTD ? FDSC_ZSTD_LEVEL_DEFAULT : 0;
        uint8_t *dbytes;
        size_t dlen;
        fdsc_dict *wdict = train(codec, level, &d, &dbytes, &dlen);
        fdsc_params p;
        ASSERT_EQ(fdsc_params_init(&p, codec), FDSC_OK);
        uint32_t nb = 0;
        block *b = encode_all(ctx, &p, wdict, &d, &nb);
        /* the reader digests the stored bytes itself */
        fdsc_dict *rdict = NULL;
        if (wdict)
            ASSERT_EQ(fdsc_dict_create(codec, level, DICT_ID, dbytes, dlen,
                                       &rdict),
                      FDSC_OK);
        decode_all(b, nb, rdict, &d);
        if (codec != FDSC_CODEC_LZ4)
            partial(ctx, &b[0], rdict);
        flipped(ctx, &b[0], rdict);
        ASSERT(nb >= 2);
        if (nb >= 2)
            copy_block(ctx, &b[1], rdict, codec, dbytes, dlen, &d);
        if (codec == FDSC_CODEC_ZSTD)
            params_rules(ctx, wdict);
        size_t enc = 0;
        for (uint32_t k = 0; k < nb; k++) {
            enc += b[k].len;
            free(b[k].p);
        }
        printf("%-24s %u docs, %u blocks, %zu raw bytes, %zu encoded "
               "(ratio %.2f), dictionary %zu bytes\n",
               fdsc_codec_name(codec), d.n, nb, d.len, enc,
               (double)d.len / (double)enc, dlen);
        free(b);
        free(dbytes);
        fdsc_dict_free(wdict);
        fdsc_dict_free(rdict);
    }
    fdsc_ctx_free(ctx);
    free(d.bytes);
    free(d.lens);
    free(d.offs);
    TEST_DONE();
}
