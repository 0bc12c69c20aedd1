/*
 * bench_codec.c: the stored-fields codec measured on real data, against an
 * in-process libzstd baseline on the same blocks, and against the zstd
 * command-line tool run in the same invocation.  Never a test: it writes
 * results/codec.json and results/codec.md.
 *
 * Documents: the real nginx sample converted line by line to JSON by
 * datasets/logparse (fds_logparse, the nginx2json converter; fields of
 * DESIGN.md §2; deterministic), cut into blocks as the store does (16 KiB / 128 docs;
 * 480 KiB / 4096 docs for the Lucene layout).
 *
 * Units: MB/s = 10^6 bytes of *uncompressed* documents per second (the zstd
 * CLI's unit); ratio = raw bytes / encoded bytes (our encoded bytes include
 * the block header, doc lengths and checksum); fetch fraction = bytes
 * decompressed / raw bytes of the block, mean over random single-doc fetches;
 * ops/s = payloads per second.  One thread; contexts and dictionaries built
 * once and reused.  Fixed seed (--seed) for every random choice.
 *
 * Sections:
 *   1. modes       each index.codec mode: ratio, compress MB/s, decode MB/s,
 *                  fetch fraction; for ZSTD / zstd_no_dict, ours against an
 *                  in-process libzstd baseline on the same blocks (run_ab:
 *                  alternating repeats, median [min-max]; the DESIGN.md §9
 *                  targets are ratios to it), and as a second reference the
 *                  zstd CLI's ratio and rates: `zstd -b<L> -B16K [-D dict]
 *                  docs-file` on the same documents (concatenated) and
 *                  dictionary.
 *   2. dict sizes  ZSTD (and DEFLATE) with 16, 32, 64, 112 KiB dictionaries.
 *   3. sub-blocks  ZSTD sub-blocks per block: ratio, decode, fetch fraction.
 *   4. payloads    256..8192-byte payloads, zstd levels 1-6 with and without
 *                  dictionary vs zlib level 6 (with and without preset dict),
 *                  direct library calls: ratio, compress and decompress ops/s.
 *   5. synthetic   N docs (default 1,000,000) resampled from the real lines
 *                  (random line, new request id / times): modes + CLI.
 */
#include "codec.h"
#include "codec_testdata.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
/* The baseline variants include zstd's experimental ZSTD_c_forceAttachDict
 * and ZSTD_createCDict_advanced (libzstd is linked statically). */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#define MB 1e6
/* Timed measurements are split into ROUNDS rounds and the fastest round
 * is reported, as the zstd CLI reports its fastest iteration: the machine
 * may be shared, and the best round is the least disturbed one. */
#define ROUNDS 5

static double min_time = 1.0;  /* seconds per timed measurement */
static size_t dict_sample = FDS_DICT_SAMPLE_DEFAULT; /* bytes trained on */
static uint64_t rng_state = 42;
static int verbose = 1;

/* This thread's CPU time: the machine may be shared, and CPU time does not
 * count the time another process holds the core. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return td_mix(rng_state);
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* ---- encoded blocks of a doc set ---------------------------------------- */

typedef struct blockset {
    fds_codec_params p;
    const fds_dict *dict;
    size_t nblocks;
    size_t *first;     /* first doc of block i; first[nblocks] = ndocs */
    uint8_t **blk;
    size_t *blen;
    size_t raw, enc;
    double compress_mb_s, decode_mb_s, fetch_fraction, fetch_docs_s;
    uint32_t hash;     /* CRC-32C over decoded bytes: proves the work */
} blockset;

static void bs_free(blockset *b)
{
    for (size_t i = 0; i < b->nblocks; i++)
        free(b->blk[i]);
    free(b->blk); free(b->blen); free(b->first);
    memset(b, 0, sizeof *b);
}

/* Cut and encode once (kept), then time encoding passes. */
static void bs_build(blockset *b, const td_docs *d, const fds_codec_params *p,
                     const fds_dict *dict, int timed)
{
    memset(b, 0, sizeof *b);
    b->p = *p;
    b->dict = dict;
    size_t cap = d->n + 1;
    b->first = malloc(cap * sizeof *b->first);
    b->blk = malloc(cap * sizeof *b->blk);
    b->blen = malloc(cap * sizeof *b->blen);
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    size_t f = 0;
    while (f < d->n) {
        size_t e = td_cut(d, f, p->block_size, p->max_docs_per_block);
        size_t raw = d->offs[e] - d->offs[f];
        size_t bound = fds_block_bound(p, raw, (uint32_t)(e - f));
        uint8_t *out = malloc(bound);
        size_t len;
        int r = fds_block_encode(ctx, p, dict, f, d->bytes + d->offs[f],
                                 d->lens + f, (uint32_t)(e - f), out, bound, &len);
        if (r)
            die("encode: %s", fds_strerror(r));
        b->first[b->nblocks] = f;
        b->blk[b->nblocks] = out;
        b->blen[b->nblocks++] = len;
        b->raw += raw;
        b->enc += len;
        f = e;
    }
    b->first[b->nblocks] = d->n;
    if (!timed)
        return;
    size_t maxb = 0;
    for (size_t i = 0; i < b->nblocks; i++)
        if (b->blen[i] > maxb) maxb = b->blen[i];
    size_t maxraw = 0;
    for (size_t i = 0; i < b->nblocks; i++) {
        size_t raw = d->offs[b->first[i + 1]] - d->offs[b->first[i]];
        if (raw > maxraw) maxraw = raw;
    }
    size_t scap = fds_block_bound(p, maxraw, (uint32_t)p->max_docs_per_block + 1);
    uint8_t *scratch = malloc(scap);
    b->compress_mb_s = 0;
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = now(), t;
        size_t bytes = 0;
        do {
            for (size_t i = 0; i < b->nblocks; i++) {
                size_t f0 = b->first[i], e = b->first[i + 1], len;
                fds_block_encode(ctx, p, dict, f0, d->bytes + d->offs[f0],
                                 d->lens + f0, (uint32_t)(e - f0), scratch, scap, &len);
                bytes += d->offs[e] - d->offs[f0];
            }
            t = now();
        } while (t - t0 < min_time / ROUNDS);
        double rate = (double)bytes / (t - t0) / MB;
        if (rate > b->compress_mb_s)
            b->compress_mb_s = rate;
    }
    free(scratch);
}

static void bs_decode(blockset *b, const td_docs *d)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    fds_block_view v;
    uint32_t h = 0;
    /* Check once. */
    for (size_t i = 0; i < b->nblocks; i++) {
        int r = fds_block_decode(ctx, b->blk[i], b->blen[i], b->dict, UINT32_MAX, &v);
        if (r || memcmp(v.raw, d->bytes + d->offs[b->first[i]], v.raw_len))
            die("decode mismatch: %s", fds_strerror(r));
        h = fds_crc32c(h, v.raw, v.raw_len);
    }
    b->hash = h;
    double t0, t;
    b->decode_mb_s = 0;
    for (int round = 0; round < ROUNDS; round++) {
        size_t bytes = 0;
        t0 = now();
        do {
            for (size_t i = 0; i < b->nblocks; i++) {
                fds_block_decode(ctx, b->blk[i], b->blen[i], b->dict, UINT32_MAX, &v);
                bytes += v.raw_len;
            }
            t = now();
        } while (t - t0 < min_time / ROUNDS);
        double rate = (double)bytes / (t - t0) / MB;
        if (rate > b->decode_mb_s)
            b->decode_mb_s = rate;
    }
    /* Single-doc fetches of random docs (uniform over docs). */
    double frac = 0;
    size_t nf = 0;
    t0 = now();
    do {
        for (int k = 0; k < 1000; k++) {
            size_t doc = rnd() % d->n;
            size_t lo = 0, hi = b->nblocks; /* block holding doc */
            while (hi - lo > 1) {
                size_t m = (lo + hi) / 2;
                if (b->first[m] <= doc) lo = m; else hi = m;
            }
            uint32_t in = (uint32_t)(doc - b->first[lo]);
            int r = fds_block_decode_doc(ctx, b->blk[lo], b->blen[lo], b->dict, in, &v);
            if (r || v.decoded_docs <= in || v.first_doc > in ||
                memcmp(v.raw + v.offsets[in], d->bytes + d->offs[doc], d->lens[doc]))
                die("fetch mismatch");
            frac += v.raw_len ? (double)v.decoded_bytes / (double)v.raw_len : 1.0;
            nf++;
        }
        t = now();
    } while (t - t0 < min_time / 2);
    b->fetch_fraction = frac / (double)nf;
    b->fetch_docs_s = (double)nf / (t - t0);
}

/* ---- in-process libzstd baseline ------------------------------------------ */

/*
 * The fair reference for ZSTD / zstd_no_dict: plain libzstd calls in this
 * process on exactly our blocks (the same documents cut at the same places),
 * one zstd frame per block, the same dictionary bytes (ZSTD_createCDict /
 * ZSTD_createDDict at the same level), the same compress scratch buffer and
 * the same decode output buffer.  Ours and the baseline run alternately
 * (ours first on even repeats, baseline first on odd ones, so drift of a
 * shared machine hits both sides alike); each side's rate is the median of
 * AB_REPEATS samples, reported with min and max.
 */
#define AB_REPEATS 7
#define AB_FETCHES 4096 /* random single-doc fetches per pass (fixed seed) */

enum {
    BV_USING_CDICT,    /* ZSTD_compress_usingCDict, ZSTD_createCDict(level) */
    BV_REF_COMPRESS2,  /* ZSTD_CCtx_refCDict + ZSTD_compress2 */
    BV_FORCE_ATTACH,   /* the same + ZSTD_c_forceAttachDict */
    BV_SIZED_CDICT,    /* ZSTD_compress_usingCDict, CDict made for blocks */
    BV_SIZED_ATTACH,   /* that CDict, ZSTD_c_forceAttachDict + ZSTD_compress2 */
    BV_NDICT
};
enum { BV_CCTX, BV_COMPRESS2, BV_NNODICT }; /* without a dictionary */
#define BV_MAX BV_NDICT
static const char *const bv_names[BV_NDICT] = {
    "`ZSTD_compress_usingCDict`, `ZSTD_createCDict(dict, level)`",
    "`ZSTD_CCtx_refCDict` + `ZSTD_compress2`, same CDict",
    "`ZSTD_CCtx_refCDict` + `ZSTD_c_forceAttachDict` + `ZSTD_compress2`, same CDict",
    "`ZSTD_compress_usingCDict`, `ZSTD_createCDict_advanced` with `ZSTD_getCParams(level, block size, dict size)`",
    "`ZSTD_CCtx_refCDict` + `ZSTD_c_forceAttachDict` + `ZSTD_compress2`, that CDict"};
static const char *const bv_nodict_names[BV_NNODICT] = {
    "`ZSTD_compressCCtx(level)`",
    "`ZSTD_compress2`, level set once on the context"};
#define BV_SAMPLES 3

typedef struct ab_stat { double med, min, max; } ab_stat;

typedef struct ab_result {
    int ok;
    ab_stat ours_c, base_c, ours_d, base_d, ours_f, base_f;
    double ours_ratio, base_ratio;
    double ours_fetch_fraction;
    int nvariants, variant;          /* baseline variants measured, chosen */
    ab_stat var_c[BV_MAX];           /* their compress MB/s */
    double var_ratio[BV_MAX];
} ab_result;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static ab_stat ab_stats(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    ab_stat s = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
    return s;
}

typedef struct ab_job {
    const blockset *b;
    const td_docs *d;
    fds_codec_ctx *ctx;
    ZSTD_CCtx *vcc[BV_MAX]; /* one context per baseline variant */
    ZSTD_DCtx *dc;
    ZSTD_CDict *cdict, *cdict_sized;
    ZSTD_DDict *ddict;
    int level;
    int variant;        /* the baseline variant the A/B uses */
    uint8_t *scratch;   /* compress output, both sides */
    size_t scap;
    uint8_t *out;       /* decode output of the baseline (ours' scratch) */
    uint8_t **frame;    /* baseline frame of block i */
    size_t *flen;
    uint32_t *fblk, *fdoc; /* fetch sequence: block, doc within block */
} ab_job;

static size_t blk_raw(const ab_job *j, size_t i)
{
    const td_docs *d = j->d;
    return d->offs[j->b->first[i + 1]] - d->offs[j->b->first[i]];
}

static const uint8_t *blk_src(const ab_job *j, size_t i)
{
    return j->d->bytes + j->d->offs[j->b->first[i]];
}

/*
 * The plain ways libzstd offers to compress one block with a digested
 * dictionary (zstd manual, "Bulk processing dictionary API" and "Advanced
 * compression API"), or without one.  They differ in speed only because of
 * what zstd does with the dictionary's tables per frame: a pledged size
 * above zstd's attach cut-off (16 KiB at level 3, ZSTD_shouldAttachDict in
 * zstd_compress.c) copies them into the context for every block instead
 * of referencing them.  The A/B uses the variant that compresses fastest
 * here, so the baseline is the best plain use of the library.
 */

static size_t base_compress_v(ab_job *j, int v, size_t i, uint8_t *dst, size_t cap)
{
    size_t r;
    const uint8_t *src = blk_src(j, i);
    size_t n = blk_raw(j, i);
    if (!j->cdict)
        r = v == BV_CCTX ? ZSTD_compressCCtx(j->vcc[v], dst, cap, src, n, j->level)
                         : ZSTD_compress2(j->vcc[v], dst, cap, src, n);
    else if (v == BV_USING_CDICT)
        r = ZSTD_compress_usingCDict(j->vcc[v], dst, cap, src, n, j->cdict);
    else if (v == BV_SIZED_CDICT)
        r = ZSTD_compress_usingCDict(j->vcc[v], dst, cap, src, n, j->cdict_sized);
    else
        r = ZSTD_compress2(j->vcc[v], dst, cap, src, n);
    if (ZSTD_isError(r))
        die("baseline compress: %s", ZSTD_getErrorName(r));
    return r;
}

static size_t base_compress(ab_job *j, size_t i, uint8_t *dst, size_t cap)
{
    return base_compress_v(j, j->variant, i, dst, cap);
}

static void base_decode(ab_job *j, size_t i)
{
    size_t n = blk_raw(j, i);
    size_t r = j->ddict ? ZSTD_decompress_usingDDict(j->dc, j->out, n, j->frame[i],
                                                     j->flen[i], j->ddict)
                        : ZSTD_decompressDCtx(j->dc, j->out, n, j->frame[i], j->flen[i]);
    if (r != n)
        die("baseline decode failed");
}

/* One timed sample: `what` 0 compress, 1 decode, 2 fetch; side 0 ours,
 * 1 baseline.  Returns MB/s (compress, decode) or docs/s (fetch). */
static double ab_sample(ab_job *j, int what, int side, double secs)
{
    const blockset *b = j->b;
    fds_block_view v;
    double t0 = now(), t;
    double units = 0;
    do {
        if (what == 2) {
            for (size_t k = 0; k < AB_FETCHES; k++) {
                uint32_t i = j->fblk[k];
                if (side == 0)
                    fds_block_decode_doc(j->ctx, b->blk[i], b->blen[i], b->dict,
                                         j->fdoc[k], &v);
                else
                    base_decode(j, i);
            }
            units += AB_FETCHES;
        } else {
            for (size_t i = 0; i < b->nblocks; i++) {
                size_t f0 = b->first[i], e = b->first[i + 1], len;
                if (what == 0 && side == 0)
                    fds_block_encode(j->ctx, &b->p, b->dict, f0, blk_src(j, i),
                                     j->d->lens + f0, (uint32_t)(e - f0),
                                     j->scratch, j->scap, &len);
                else if (what == 0)
                    base_compress(j, i, j->scratch, j->scap);
                else if (side == 0)
                    fds_block_decode(j->ctx, b->blk[i], b->blen[i], b->dict,
                                     UINT32_MAX, &v);
                else
                    base_decode(j, i);
                units += (double)blk_raw(j, i);
            }
        }
        t = now();
    } while (t - t0 < secs);
    return units / (t - t0) / (what == 2 ? 1.0 : MB);
}

/* ZSTD (dict bytes given) or zstd_no_dict (dict NULL) blocks of `b`. */
static ab_result run_ab(const blockset *b, const td_docs *d,
                        const uint8_t *dict, size_t dict_len, int level)
{
    ab_result res = {0};
    ab_job j = {.b = b, .d = d, .level = level};
    j.ctx = fds_codec_ctx_thread();
    int nvar = dict ? BV_NDICT : BV_NNODICT;
    for (int v = 0; v < nvar; v++)
        j.vcc[v] = ZSTD_createCCtx();
    j.dc = ZSTD_createDCtx();
    if (dict) {
        j.cdict = ZSTD_createCDict(dict, dict_len, level);
        j.cdict_sized = ZSTD_createCDict_advanced(
            dict, dict_len, ZSTD_dlm_byCopy, ZSTD_dct_auto,
            ZSTD_getCParams(level, b->p.block_size, dict_len), ZSTD_defaultCMem);
        j.ddict = ZSTD_createDDict(dict, dict_len);
        ZSTD_CCtx_refCDict(j.vcc[BV_REF_COMPRESS2], j.cdict);
        ZSTD_CCtx_refCDict(j.vcc[BV_FORCE_ATTACH], j.cdict);
        ZSTD_CCtx_setParameter(j.vcc[BV_FORCE_ATTACH], ZSTD_c_forceAttachDict,
                               ZSTD_dictForceAttach);
        ZSTD_CCtx_refCDict(j.vcc[BV_SIZED_ATTACH], j.cdict_sized);
        ZSTD_CCtx_setParameter(j.vcc[BV_SIZED_ATTACH], ZSTD_c_forceAttachDict,
                               ZSTD_dictForceAttach);
    } else {
        ZSTD_CCtx_setParameter(j.vcc[BV_COMPRESS2], ZSTD_c_compressionLevel, level);
    }
    size_t maxraw = 0;
    for (size_t i = 0; i < b->nblocks; i++)
        if (blk_raw(&j, i) > maxraw) maxraw = blk_raw(&j, i);
    j.scap = fds_block_bound(&b->p, maxraw, b->p.max_docs_per_block + 1);
    if (j.scap < ZSTD_compressBound(maxraw))
        j.scap = ZSTD_compressBound(maxraw);
    j.scratch = malloc(j.scap);
    j.frame = malloc(b->nblocks * sizeof *j.frame);
    j.flen = malloc(b->nblocks * sizeof *j.flen);
    j.fblk = malloc(AB_FETCHES * sizeof *j.fblk);
    j.fdoc = malloc(AB_FETCHES * sizeof *j.fdoc);
    /* The baseline variants, each timed BV_SAMPLES times in turn; the
     * fastest median compresses the baseline's frames. */
    {
        double vs[BV_MAX][BV_SAMPLES];
        res.nvariants = nvar;
        for (int v = 0; v < nvar; v++) {
            size_t sum = 0;
            for (size_t i = 0; i < b->nblocks; i++)
                sum += base_compress_v(&j, v, i, j.scratch, j.scap);
            res.var_ratio[v] = (double)b->raw / (double)sum;
        }
        for (int k = 0; k < BV_SAMPLES; k++)
            for (int v = 0; v < nvar; v++) {
                double t0 = now(), t, units = 0;
                do {
                    for (size_t i = 0; i < b->nblocks; i++) {
                        base_compress_v(&j, v, i, j.scratch, j.scap);
                        units += (double)blk_raw(&j, i);
                    }
                    t = now();
                } while (t - t0 < min_time / 10);
                vs[v][k] = units / (t - t0) / MB;
            }
        for (int v = 0; v < nvar; v++) {
            res.var_c[v] = ab_stats(vs[v], BV_SAMPLES);
            if (res.var_c[v].med > res.var_c[j.variant].med)
                j.variant = v;
        }
        res.variant = j.variant;
    }
    /* Frames once; decode both sides once and check them.  The baseline
     * decodes into our context's scratch buffer: it has grown to the
     * largest block by then and stays put (same output buffer). */
    size_t fsum = 0;
    fds_block_view v;
    for (size_t i = 0; i < b->nblocks; i++) {
        j.flen[i] = base_compress(&j, i, j.scratch, j.scap);
        j.frame[i] = malloc(j.flen[i]);
        memcpy(j.frame[i], j.scratch, j.flen[i]);
        fsum += j.flen[i];
        if (fds_block_decode(j.ctx, b->blk[i], b->blen[i], b->dict, UINT32_MAX, &v))
            die("decode failed");
    }
    for (size_t i = 0; i < b->nblocks; i++) {
        if (fds_block_decode(j.ctx, b->blk[i], b->blen[i], b->dict, UINT32_MAX, &v))
            die("decode failed");
        j.out = (uint8_t *)(uintptr_t)v.raw;
        base_decode(&j, i);
        if (memcmp(j.out, blk_src(&j, i), blk_raw(&j, i)))
            die("baseline decode mismatch");
    }
    /* Random docs, uniform over docs; ours' decoded fraction for them. */
    double frac = 0;
    for (size_t k = 0; k < AB_FETCHES; k++) {
        size_t doc = rnd() % d->n, lo = 0, hi = b->nblocks;
        while (hi - lo > 1) {
            size_t m = (lo + hi) / 2;
            if (b->first[m] <= doc) lo = m; else hi = m;
        }
        j.fblk[k] = (uint32_t)lo;
        j.fdoc[k] = (uint32_t)(doc - b->first[lo]);
        if (fds_block_decode_doc(j.ctx, b->blk[lo], b->blen[lo], b->dict, j.fdoc[k], &v) ||
            v.decoded_docs <= j.fdoc[k] ||
            memcmp(v.raw + v.offsets[j.fdoc[k]], d->bytes + d->offs[doc], d->lens[doc]))
            die("fetch mismatch");
        frac += v.raw_len ? (double)v.decoded_bytes / (double)v.raw_len : 1.0;
    }
    res.ours_fetch_fraction = frac / AB_FETCHES;
    res.ours_ratio = (double)b->raw / (double)b->enc;
    res.base_ratio = (double)b->raw / (double)fsum;
    double secs = min_time / 5;
    double s[6][AB_REPEATS];
    for (int rep = 0; rep < AB_REPEATS; rep++)
        for (int what = 0; what < 3; what++)
            for (int k = 0; k < 2; k++) {
                int side = (rep + k) % 2; /* ours first on even repeats */
                s[what * 2 + side][rep] = ab_sample(&j, what, side, secs);
            }
    res.ours_c = ab_stats(s[0], AB_REPEATS);
    res.base_c = ab_stats(s[1], AB_REPEATS);
    res.ours_d = ab_stats(s[2], AB_REPEATS);
    res.base_d = ab_stats(s[3], AB_REPEATS);
    res.ours_f = ab_stats(s[4], AB_REPEATS);
    res.base_f = ab_stats(s[5], AB_REPEATS);
    res.ok = 1;
    for (size_t i = 0; i < b->nblocks; i++)
        free(j.frame[i]);
    free(j.frame); free(j.flen); free(j.fblk); free(j.fdoc); free(j.scratch);
    for (int v = 0; v < nvar; v++)
        ZSTD_freeCCtx(j.vcc[v]);
    ZSTD_freeDCtx(j.dc);
    ZSTD_freeCDict(j.cdict);
    ZSTD_freeCDict(j.cdict_sized);
    ZSTD_freeDDict(j.ddict);
    return res;
}

/* ---- the zstd CLI -------------------------------------------------------- */

typedef struct cli_result {
    int ok;
    double ratio, compress_mb_s, decode_mb_s;
    unsigned long long in, out;
} cli_result;

static cli_result run_cli(const char *zstd, int level, const char *dict,
                          const char *file)
{
    cli_result c = {0};
    char cmd[16384];
    int secs = min_time >= 1.0 ? 3 : 1;
    snprintf(cmd, sizeof cmd, "%s -b%d -i%d %s%s%s -r '%s' 2>&1", zstd, level,
             secs, dict ? "-D '" : "", dict ? dict : "", dict ? "'" : "", file);
    if (verbose)
        fprintf(stderr, "  running: %s\n", cmd);
    FILE *f = popen(cmd, "r");
    if (!f)
        return c;
    /* Keep the output's last bytes: with many files the CLI first prints a
     * "Loading" line for each. */
    static char out[1 << 16];
    size_t n = 0, got;
    while ((got = fread(out + n, 1, sizeof out - 1 - n, f)) > 0) {
        n += got;
        if (n == sizeof out - 1) {
            memmove(out, out + n / 2, n - n / 2);
            n -= n / 2;
        }
    }
    out[n] = 0;
    pclose(f);
    /* Last "IN -> OUT (xR), C MB/s, D MB/s" record (progress lines use \r). */
    for (char *p = out; (p = strstr(p, " -> ")) != NULL; p += 4) {
        char *s = p;
        while (s > out && s[-1] >= '0' && s[-1] <= '9') s--;
        while (s > out && s[-1] == ' ') s--;
        while (s > out && s[-1] >= '0' && s[-1] <= '9') s--;
        unsigned long long a, b;
        double r, cs, ds;
        if (sscanf(s, "%llu -> %llu (x%lf), %lf MB/s, %lf MB/s", &a, &b, &r,
                   &cs, &ds) == 5) {
            c.ok = 1; c.in = a; c.out = b; c.ratio = r;
            c.compress_mb_s = cs; c.decode_mb_s = ds;
        }
    }
    if (!c.ok)
        fprintf(stderr, "  could not parse zstd output:\n%s\n", out);
    return c;
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f))
        die("cannot write %s: %s", path, strerror(errno));
}

/* The documents of each block of `b` as a file of its own under `dir`
 * (created), for `zstd -b -r dir`: the CLI then compresses exactly our
 * blocks, one frame each. */
static void write_blocks(const blockset *b, const td_docs *d, const char *dir)
{
    if (mkdir(dir, 0755) && errno != EEXIST)
        die("mkdir %s: %s", dir, strerror(errno));
    char path[4200];
    for (size_t i = 0; i < b->nblocks; i++) {
        snprintf(path, sizeof path, "%s/%08zu", dir, i);
        size_t f = b->first[i], e = b->first[i + 1];
        write_file(path, d->bytes + d->offs[f], d->offs[e] - d->offs[f]);
    }
}

static void remove_blocks(const blockset *b, const char *dir)
{
    char path[4200];
    for (size_t i = 0; i < b->nblocks; i++) {
        snprintf(path, sizeof path, "%s/%08zu", dir, i);
        unlink(path);
    }
    rmdir(dir);
}

/* ---- dictionaries -------------------------------------------------------- */

static fds_dict *train(const td_docs *d, fds_codec_id c, size_t dict_size,
                       size_t sample_bytes, uint32_t id, int level,
                       uint8_t **bytes_out, size_t *len_out)
{
    size_t n = 0;
    while (n < d->n && d->offs[n + 1] <= sample_bytes)
        n++;
    size_t *sl = malloc(n * sizeof *sl);
    for (size_t i = 0; i < n; i++)
        sl[i] = d->lens[i];
    uint8_t *buf = malloc(dict_size);
    size_t len;
    int r = fds_dict_train(c, d->bytes, sl, (unsigned)n, dict_size, buf, &len);
    if (r)
        die("dict train: %s", fds_strerror(r));
    fds_dict *dict;
    if ((r = fds_dict_create(id, c, level, buf, len, &dict)))
        die("dict create: %s", fds_strerror(r));
    free(sl);
    if (bytes_out) {
        *bytes_out = buf;
        *len_out = len;
    } else {
        free(buf);
    }
    return dict;
}

/* ---- sections -------------------------------------------------------------- */

typedef struct mode_result {
    const char *name;
    fds_codec_id codec;
    blockset bs;
    cli_result cli;
    int has_cli;
    ab_result ab;
} mode_result;

static FILE *md, *js;

/* The ours-vs-baseline table of ZSTD (z) and zstd_no_dict (n). */
static void write_ab(const char *label, const mode_result *z, const mode_result *n)
{
    fprintf(md, "\n#### %s: ours vs in-process libzstd on the same blocks (median [min-max] of %d alternating repeats, thread CPU time)\n\n"
                "Baseline: plain libzstd, one frame per block, one reused `ZSTD_CCtx` and `ZSTD_DCtx`, the dictionary "
                "digested once (`ZSTD_CDict`, `ZSTD_DDict` by `ZSTD_createDDict`) on the same dictionary bytes at the same level, "
                "`ZSTD_decompress_usingDDict` (`ZSTD_decompressDCtx` for zstd_no_dict), the same documents cut at the same "
                "places, the same buffers; its compress call is the fastest of the variants below, measured in the same run. "
                "A baseline fetch decodes the whole block (a plain frame has no earlier stop); ours stops after the "
                "sub-block holding the doc.  Our ratio counts our header, doc lengths and checksum.\n\n",
            label, AB_REPEATS);
    const mode_result *vm[2] = {z, n};
    fprintf(md, "| mode | baseline compress call | compress MB/s, median [min-max] of %d | frame ratio | used |\n|---|---|---|---|---|\n",
            BV_SAMPLES);
    for (int k = 0; k < 2; k++) {
        const ab_result *a = &vm[k]->ab;
        for (int v = 0; v < a->nvariants; v++)
            fprintf(md, "| %s | %s | %.1f [%.1f-%.1f] | %.3f | %s |\n", vm[k]->name,
                    k == 0 ? bv_names[v] : bv_nodict_names[v], a->var_c[v].med,
                    a->var_c[v].min, a->var_c[v].max, a->var_ratio[v],
                    v == a->variant ? "yes" : "");
    }
    fprintf(md, "\n");
    fprintf(md, "| mode | metric | ours | baseline | ours / baseline |\n|---|---|---|---|---|\n");
    const mode_result *ms[2] = {z, n};
    for (int k = 0; k < 2; k++) {
        const ab_result *a = &ms[k]->ab;
        const struct { const char *m; const ab_stat *o, *b; } rows[] = {
            {"compress MB/s", &a->ours_c, &a->base_c},
            {"decode MB/s", &a->ours_d, &a->base_d},
            {"one-doc fetch, docs/s", &a->ours_f, &a->base_f}};
        for (int r = 0; r < 3; r++)
            fprintf(md, "| %s | %s | %.1f [%.1f-%.1f] | %.1f [%.1f-%.1f] | %.2f |\n", ms[k]->name,
                    rows[r].m, rows[r].o->med, rows[r].o->min, rows[r].o->max, rows[r].b->med,
                    rows[r].b->min, rows[r].b->max, rows[r].o->med / rows[r].b->med);
        fprintf(md, "| %s | ratio | %.3f | %.3f | %.3f |\n", ms[k]->name, a->ours_ratio,
                a->base_ratio, a->ours_ratio / a->base_ratio);
        fprintf(js, "      \"%s\": {\"repeats\": %d, \"ratio\": [%.4f, %.4f], "
                    "\"compress_mb_s\": {\"ours\": [%.2f, %.2f, %.2f], \"baseline\": [%.2f, %.2f, %.2f]}, "
                    "\"decode_mb_s\": {\"ours\": [%.2f, %.2f, %.2f], \"baseline\": [%.2f, %.2f, %.2f]}, "
                    "\"fetch_docs_s\": {\"ours\": [%.0f, %.0f, %.0f], \"baseline\": [%.0f, %.0f, %.0f]}, "
                    "\"ours_fetch_decoded_fraction\": %.4f, \"note\": \"[median, min, max]; ratio [ours, baseline]\"}%s\n",
                ms[k]->name, AB_REPEATS, a->ours_ratio, a->base_ratio,
                a->ours_c.med, a->ours_c.min, a->ours_c.max, a->base_c.med, a->base_c.min, a->base_c.max,
                a->ours_d.med, a->ours_d.min, a->ours_d.max, a->base_d.med, a->base_d.min, a->base_d.max,
                a->ours_f.med, a->ours_f.min, a->ours_f.max, a->base_f.med, a->base_f.min, a->base_f.max,
                a->ours_fetch_fraction, k == 0 ? "," : "");
        if (verbose)
            fprintf(stderr, "  %s vs baseline: compress %.2f decode %.2f fetch %.2f ratio %.3f\n",
                    ms[k]->name, a->ours_c.med / a->base_c.med, a->ours_d.med / a->base_d.med,
                    a->ours_f.med / a->base_f.med, a->ours_ratio / a->base_ratio);
    }
    fprintf(md, "\nSecond reference, the zstd CLI on the same blocks: each block's documents written to a file of its "
                "own and `zstd -b<level> -i<s> [-D dict] -r DIR` (one frame per file, all files together; another "
                "process, wall time): the CLI columns of the table above.\n");
}

static void run_modes(const td_docs *d, const char *label, const char *zstd,
                      const char *tmpdir, int level, size_t dict_size,
                      int json_key_modes)
{
    static const fds_codec_id codecs[] = {
        FDS_CODEC_ZSTD, FDS_CODEC_ZSTD_NO_DICT, FDS_CODEC_DEFLATE,
        FDS_CODEC_LZ4, FDS_CODEC_LUCENE_DEFLATE};
    mode_result res[5];
    uint8_t *zbytes;
    size_t zlen;
    fds_dict *zd = train(d, FDS_CODEC_ZSTD, dict_size, dict_sample,
                         1, level, &zbytes, &zlen);
    fds_dict *dd = train(d, FDS_CODEC_DEFLATE, FDS_DEFLATE_DICT_MAX,
                         dict_sample, 2, level, NULL, NULL);
    char docs_path[4096], dict_path[4096];
    snprintf(docs_path, sizeof docs_path, "%s/blocks-%s", tmpdir, label);
    snprintf(dict_path, sizeof dict_path, "%s/dict-%s.zstd", tmpdir, label);
    write_file(dict_path, zbytes, zlen);
    for (int k = 0; k < 5; k++) {
        mode_result *m = &res[k];
        memset(m, 0, sizeof *m);
        m->codec = codecs[k];
        m->name = fds_codec_name(codecs[k]);
        fds_codec_params p;
        fds_codec_params_default(codecs[k], &p);
        p.level = level;
        const fds_dict *dict = codecs[k] == FDS_CODEC_ZSTD ? zd
                             : codecs[k] == FDS_CODEC_DEFLATE ? dd : NULL;
        if (verbose)
            fprintf(stderr, "[%s] %s ...\n", label, m->name);
        bs_build(&m->bs, d, &p, dict, 1);
        bs_decode(&m->bs, d);
        if (k == 0)
            write_blocks(&m->bs, d, docs_path);
        if (codecs[k] == FDS_CODEC_ZSTD || codecs[k] == FDS_CODEC_ZSTD_NO_DICT) {
            m->ab = run_ab(&m->bs, d, codecs[k] == FDS_CODEC_ZSTD ? zbytes : NULL,
                           zlen, level);
            m->has_cli = 1;
            m->cli = run_cli(zstd, level, codecs[k] == FDS_CODEC_ZSTD ? dict_path : NULL,
                             docs_path);
        }
    }
    remove_blocks(&res[0].bs, docs_path);
    unlink(dict_path);
    fprintf(md, "\n### Modes: %s (%zu docs, %.1f MB raw; zstd level %d, dictionary %zu KiB trained from the first %u MiB)\n\n",
            label, d->n, (double)d->len / MB, level, zlen / 1024,
            (unsigned)(dict_sample >> 20));
    fprintf(md, "| mode | block | ratio | compress MB/s | decode MB/s | fetch: decoded fraction | fetch docs/s | CLI ratio | CLI compress MB/s | CLI decode MB/s | compress ours/CLI | decode ours/CLI |\n");
    fprintf(md, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    (void)json_key_modes;
    fprintf(js, ",\n  \"%s\": {\n", label);
    fprintf(js, "    \"docs\": %zu, \"raw_bytes\": %zu, \"level\": %d, \"dict_bytes\": %zu,\n",
            d->n, d->len, level, zlen);
    fprintf(js, "    \"modes\": {\n");
    for (int k = 0; k < 5; k++) {
        mode_result *m = &res[k];
        double ratio = (double)m->bs.raw / (double)m->bs.enc;
        char cr[32] = "-", cc[32] = "-", cd[32] = "-", rc[32] = "-", rd[32] = "-";
        if (m->has_cli && m->cli.ok) {
            snprintf(cr, sizeof cr, "%.3f", m->cli.ratio);
            snprintf(cc, sizeof cc, "%.1f", m->cli.compress_mb_s);
            snprintf(cd, sizeof cd, "%.1f", m->cli.decode_mb_s);
            snprintf(rc, sizeof rc, "%.2f", m->bs.compress_mb_s / m->cli.compress_mb_s);
            snprintf(rd, sizeof rd, "%.2f", m->bs.decode_mb_s / m->cli.decode_mb_s);
        }
        fprintf(md, "| %s | %u KiB | %.3f | %.1f | %.1f | %.3f | %.0f | %s | %s | %s | %s | %s |\n",
                m->name, m->bs.p.block_size / 1024, ratio, m->bs.compress_mb_s,
                m->bs.decode_mb_s, m->bs.fetch_fraction, m->bs.fetch_docs_s,
                cr, cc, cd, rc, rd);
        fprintf(js, "      \"%s\": {\"ratio\": %.4f, \"compress_mb_s\": %.2f, \"decode_mb_s\": %.2f, "
                    "\"fetch_decoded_fraction\": %.4f, \"fetch_docs_s\": %.0f, "
                    "\"block_size\": %u, \"blocks\": %zu, \"encoded_bytes\": %zu, \"result_crc32c\": \"%08x\", ",
                m->name, ratio, m->bs.compress_mb_s, m->bs.decode_mb_s,
                m->bs.fetch_fraction, m->bs.fetch_docs_s, m->bs.p.block_size,
                m->bs.nblocks, m->bs.enc, m->bs.hash);
        if (m->has_cli && m->cli.ok)
            fprintf(js, "\"cli_ratio\": %.4f, \"cli_compress_mb_s\": %.2f, \"cli_decode_mb_s\": %.2f, "
                        "\"compress_vs_cli\": %.4f, \"decode_vs_cli\": %.4f}%s\n",
                    m->cli.ratio, m->cli.compress_mb_s, m->cli.decode_mb_s,
                    m->bs.compress_mb_s / m->cli.compress_mb_s,
                    m->bs.decode_mb_s / m->cli.decode_mb_s, k < 4 ? "," : "");
        else
            fprintf(js, "\"cli_ratio\": null, \"cli_compress_mb_s\": null, \"cli_decode_mb_s\": null}%s\n",
                    k < 4 ? "," : "");
        if (verbose)
            fprintf(stderr, "  %-24s ratio %.3f  compress %.1f MB/s  decode %.1f MB/s  fetch %.3f  cli %s/%s/%s\n",
                    m->name, ratio, m->bs.compress_mb_s, m->bs.decode_mb_s,
                    m->bs.fetch_fraction, cr, cc, cd);
    }
    fprintf(js, "    },\n    \"in_process_baseline\": {\n");
    write_ab(label, &res[0], &res[1]);
    /* Targets (DESIGN.md §9) on this data, against the in-process baseline. */
    mode_result *z = &res[0], *dfl = &res[2];
    double zr = (double)z->bs.raw / (double)z->bs.enc;
    double dr = (double)dfl->bs.raw / (double)dfl->bs.enc;
    double tdec = z->ab.ours_d.med / z->ab.base_d.med;
    double tcom = z->ab.ours_c.med / z->ab.base_c.med;
    double tfetch = z->ab.ours_f.med / z->ab.base_f.med;
    double tbytes = dr / zr; /* ZSTD bytes / best_compression bytes */
    fprintf(js, "    },\n    \"targets\": {\"zstd_bytes_vs_best_compression\": %.4f, \"zstd_decode_vs_baseline\": %.4f, "
                "\"zstd_fetch_vs_baseline\": %.4f, \"zstd_compress_vs_baseline\": %.4f, "
                "\"zstd_fetch_decoded_fraction\": %.4f}\n  }",
            tbytes, tdec, tfetch, tcom, z->ab.ours_fetch_fraction);
    fprintf(md, "\nTargets: ZSTD stored bytes / best_compression = %.3f (<= 0.95: %s); "
                "decode / in-process baseline = %.2f (>= 0.95: %s); one-doc fetch / baseline = %.2f (>= 1.2: %s); "
                "compress / baseline = %.2f (>= 0.90: %s); a fetch decodes %.0f%% of a block (<= 60%%: %s).\n",
            tbytes, tbytes <= 0.95 ? "met" : "NOT met", tdec, tdec >= 0.95 ? "met" : "NOT met",
            tfetch, tfetch >= 1.2 ? "met" : "NOT met", tcom, tcom >= 0.90 ? "met" : "NOT met",
            100 * z->ab.ours_fetch_fraction, z->ab.ours_fetch_fraction <= 0.60 ? "met" : "NOT met");
    for (int k = 0; k < 5; k++)
        bs_free(&res[k].bs);
    fds_dict_free(zd);
    fds_dict_free(dd);
    free(zbytes);
}

static void run_dict_sizes(const td_docs *d, int level)
{
    static const size_t sizes[] = {16, 32, 64, 112, 256};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    fprintf(md, "\n### Dictionary size (16 KiB blocks, zstd level %d; DEFLATE presets are capped at 32 KiB)\n\n", level);
    fprintf(md, "| dict KiB | ZSTD ratio | ZSTD compress MB/s | ZSTD decode MB/s | best_compression ratio | best_compression decode MB/s |\n|---|---|---|---|---|---|\n");
    fprintf(js, ",\n  \"dict_sizes\": [\n");
    for (size_t i = 0; i < nsizes; i++) {
        fds_codec_params p;
        fds_codec_params_default(FDS_CODEC_ZSTD, &p);
        p.level = level;
        fds_dict *zd = train(d, FDS_CODEC_ZSTD, sizes[i] * 1024, dict_sample, 1, level, NULL, NULL);
        blockset z, df;
        bs_build(&z, d, &p, zd, 1);
        bs_decode(&z, d);
        double dr = 0, ddec = 0;
        if (sizes[i] <= 32) {
            fds_dict *dd = train(d, FDS_CODEC_DEFLATE, sizes[i] * 1024, dict_sample, 2, level, NULL, NULL);
            fds_codec_params_default(FDS_CODEC_DEFLATE, &p);
            bs_build(&df, d, &p, dd, 0);
            bs_decode(&df, d);
            dr = (double)df.raw / (double)df.enc;
            ddec = df.decode_mb_s;
            bs_free(&df);
            fds_dict_free(dd);
        }
        double zr = (double)z.raw / (double)z.enc;
        if (dr > 0)
            fprintf(md, "| %zu | %.3f | %.1f | %.1f | %.3f | %.1f |\n", sizes[i], zr,
                    z.compress_mb_s, z.decode_mb_s, dr, ddec);
        else
            fprintf(md, "| %zu | %.3f | %.1f | %.1f | - | - |\n", sizes[i], zr,
                    z.compress_mb_s, z.decode_mb_s);
        fprintf(js, "    {\"dict_kib\": %zu, \"zstd_ratio\": %.4f, \"zstd_compress_mb_s\": %.2f, "
                    "\"zstd_decode_mb_s\": %.2f, \"deflate_ratio\": %.4f}%s\n",
                sizes[i], zr, z.compress_mb_s, z.decode_mb_s, dr, i + 1 < nsizes ? "," : "");
        if (verbose)
            fprintf(stderr, "  dict %3zu KiB: zstd ratio %.3f c %.1f d %.1f; deflate ratio %.3f\n",
                    sizes[i], zr, z.compress_mb_s, z.decode_mb_s, dr);
        bs_free(&z);
        fds_dict_free(zd);
    }
    fprintf(js, "  ]");
}

/* Sizes only, every document encoded once and nothing timed (cheap on a
 * large corpus): ZSTD and best_compression as written today, and as the
 * previous defaults wrote them (block format version 1, 6 zstd sub-blocks,
 * a 64 KiB dictionary) and today's settings in format 1 (what the format
 * alone saves), with ZSTD's bytes over best_compression's. */
static void run_sizes(const td_docs *d, int level, size_t dict_size)
{
    static const struct { const char *what; uint32_t ver, sub; size_t dict; } cf[] = {
        {"today", FDS_BLOCK_FORMAT_VERSION, 0, 0},
        {"today's sub-blocks and dictionary in format 1", FDS_BLOCK_FORMAT_V1, 0, 0},
        {"previous defaults: format 1, 6 sub-blocks, 64 KiB dictionary",
         FDS_BLOCK_FORMAT_V1, 6, 64 * 1024}};
    fds_dict *dd = train(d, FDS_CODEC_DEFLATE, FDS_DEFLATE_DICT_MAX, dict_sample, 2, level, NULL, NULL);
    fprintf(md, "\n### Stored bytes (%zu docs, %.1f MB raw; zstd level %d; dictionaries trained on the first %u MiB)\n\n",
            d->n, (double)d->len / MB, level, (unsigned)(dict_sample >> 20));
    fprintf(md, "| layout | ZSTD ratio | ZSTD B/doc | best_compression ratio | best_compression B/doc | ZSTD / best_compression bytes |\n|---|---|---|---|---|---|\n");
    fprintf(js, ",\n  \"sizes\": [\n");
    for (size_t i = 0; i < sizeof cf / sizeof cf[0]; i++) {
        fds_dict *zd = train(d, FDS_CODEC_ZSTD, cf[i].dict ? cf[i].dict : dict_size,
                             dict_sample, 1, level, NULL, NULL);
        fds_codec_params pz, pd;
        fds_codec_params_default(FDS_CODEC_ZSTD, &pz);
        pz.level = level;
        pz.format_version = cf[i].ver;
        pz.sub_blocks = cf[i].sub;
        fds_codec_params_default(FDS_CODEC_DEFLATE, &pd);
        pd.format_version = cf[i].ver;
        blockset z, df;
        bs_build(&z, d, &pz, zd, 0);
        bs_build(&df, d, &pd, dd, 0);
        double zr = (double)z.raw / (double)z.enc, dr = (double)df.raw / (double)df.enc;
        fprintf(md, "| %s | %.3f | %.1f | %.3f | %.1f | %.3f |\n", cf[i].what, zr,
                (double)z.enc / (double)d->n, dr, (double)df.enc / (double)d->n, dr / zr);
        fprintf(js, "    {\"layout\": \"%s\", \"zstd_ratio\": %.4f, \"zstd_bytes\": %zu, "
                    "\"best_compression_ratio\": %.4f, \"best_compression_bytes\": %zu}%s\n",
                cf[i].what, zr, z.enc, dr, df.enc, i + 1 < sizeof cf / sizeof cf[0] ? "," : "");
        if (verbose)
            fprintf(stderr, "  sizes, %s: zstd %.3f deflate %.3f bytes %.3f\n", cf[i].what, zr, dr, dr / zr);
        bs_free(&z);
        bs_free(&df);
        fds_dict_free(zd);
    }
    fprintf(js, "  ]");
    fds_dict_free(dd);
}

static void run_sub_blocks(const td_docs *d, int level, size_t dict_size)
{
    static const uint32_t subs[] = {1, 2, 4, 6, 8};
    fds_dict *zd = train(d, FDS_CODEC_ZSTD, dict_size, dict_sample, 1, level, NULL, NULL);
    fprintf(md, "\n### ZSTD sub-blocks per 16 KiB block (level %d, %zu KiB dictionary)\n\n", level, dict_size / 1024);
    fprintf(md, "| sub-blocks | ratio | compress MB/s | decode MB/s | fetch: decoded fraction | fetch docs/s |\n|---|---|---|---|---|---|\n");
    fprintf(js, ",\n  \"zstd_sub_blocks\": [\n");
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        fds_codec_params p;
        fds_codec_params_default(FDS_CODEC_ZSTD, &p);
        p.level = level;
        p.sub_blocks = subs[i];
        blockset z;
        bs_build(&z, d, &p, zd, 1);
        bs_decode(&z, d);
        double zr = (double)z.raw / (double)z.enc;
        fprintf(md, "| %u | %.3f | %.1f | %.1f | %.3f | %.0f |\n", subs[i], zr,
                z.compress_mb_s, z.decode_mb_s, z.fetch_fraction, z.fetch_docs_s);
        fprintf(js, "    {\"sub_blocks\": %u, \"ratio\": %.4f, \"compress_mb_s\": %.2f, \"decode_mb_s\": %.2f, "
                    "\"fetch_decoded_fraction\": %.4f, \"fetch_docs_s\": %.0f}%s\n",
                subs[i], zr, z.compress_mb_s, z.decode_mb_s, z.fetch_fraction,
                z.fetch_docs_s, i + 1 < sizeof subs / sizeof subs[0] ? "," : "");
        if (verbose)
            fprintf(stderr, "  sub-blocks %u: ratio %.3f c %.1f d %.1f fetch %.3f\n", subs[i], zr,
                    z.compress_mb_s, z.decode_mb_s, z.fetch_fraction);
        bs_free(&z);
    }
    fprintf(js, "  ]");
    fds_dict_free(zd);
}

/* Payload sweep: direct library calls, contexts reused; each rate is the
 * fastest of PAYLOAD_ROUNDS rounds. */
#define PAYLOAD_ROUNDS 3
static void run_payloads(const td_docs *d, size_t dict_size, int quick)
{
    static const size_t sizes[] = {256, 512, 1024, 2048, 4096, 8192};
    size_t npay = quick ? 200 : 1000;
    uint8_t *zbytes;
    size_t zlen;
    fds_dict *tmp = train(d, FDS_CODEC_ZSTD, dict_size, dict_sample, 1, 3, &zbytes, &zlen);
    fds_dict_free(tmp);
    uint8_t *dbytes;
    size_t dlen;
    tmp = train(d, FDS_CODEC_DEFLATE, FDS_DEFLATE_DICT_MAX, dict_sample, 2, 3, &dbytes, &dlen);
    fds_dict_free(tmp);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    z_stream zs, is;
    memset(&zs, 0, sizeof zs);
    memset(&is, 0, sizeof is);
    deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    inflateInit2(&is, -15);
    size_t cap = ZSTD_compressBound(8192) + 1024;
    uint8_t *comp = malloc(npay * cap), *out = malloc(8192 + 64);
    size_t *clen = malloc(npay * sizeof *clen), *start = malloc(npay * sizeof *start);
    double pt = quick ? 0.01 : 0.2; /* seconds per round */
    fprintf(md, "\n### Payload sweep (payloads cut from the JSON docs at random doc starts; zstd %zu KiB dictionary, zlib preset %zu KiB; ops/s = payloads/s, one thread)\n\n", zlen / 1024, dlen / 1024);
    fprintf(md, "| bytes | codec | ratio | compress ops/s | decompress ops/s | compress MB/s | decompress MB/s |\n|---|---|---|---|---|---|---|\n");
    fprintf(js, ",\n  \"payload_sweep\": [\n");
    int first_row = 1;
    for (size_t si = 0; si < 6; si++) {
        size_t sz = sizes[si];
        for (size_t i = 0; i < npay; i++) {
            size_t doc = rnd() % d->n;
            start[i] = d->offs[doc];
            if (start[i] + sz > d->len) start[i] = d->len - sz;
        }
        /* variants: 0..5 zstd L1-6 dict, 6..11 no dict, 12 zlib dict, 13 zlib */
        for (int var = 0; var < 14; var++) {
            int lvl = var < 12 ? var % 6 + 1 : 6;
            int dict = var < 6 || var == 12;
            int is_zlib = var >= 12;
            ZSTD_CDict *cd = NULL;
            ZSTD_DDict *dd = NULL;
            if (!is_zlib && dict) {
                cd = ZSTD_createCDict(zbytes, zlen, lvl);
                dd = ZSTD_createDDict(zbytes, zlen);
            }
            size_t total = 0;
            /* compress: the fastest of PAYLOAD_ROUNDS timed rounds (the
             * machine is shared; one preempted round must not decide) */
            double t0, t, cops = 0, dops = 0;
            size_t ops;
            for (int round = 0; round < PAYLOAD_ROUNDS; round++) {
            t0 = now();
            ops = 0;
            do {
                for (size_t i = 0; i < npay; i++) {
                    const uint8_t *src = d->bytes + start[i];
                    uint8_t *dst = comp + i * cap;
                    size_t r;
                    if (!is_zlib) {
                        r = cd ? ZSTD_compress_usingCDict(cc, dst, cap, src, sz, cd)
                               : ZSTD_compressCCtx(cc, dst, cap, src, sz, lvl);
                        if (ZSTD_isError(r)) die("zstd: %s", ZSTD_getErrorName(r));
                    } else {
                        deflateReset(&zs);
                        if (dict) deflateSetDictionary(&zs, dbytes, (uInt)dlen);
                        zs.next_in = (Bytef *)(uintptr_t)src; zs.avail_in = (uInt)sz;
                        zs.next_out = dst; zs.avail_out = (uInt)cap;
                        if (deflate(&zs, Z_FINISH) != Z_STREAM_END) die("deflate");
                        r = zs.total_out;
                    }
                    clen[i] = r;
                }
                ops += npay;
                t = now();
            } while (t - t0 < pt);
            if ((double)ops / (t - t0) > cops)
                cops = (double)ops / (t - t0);
            }
            for (size_t i = 0; i < npay; i++) total += clen[i];
            /* decompress */
            for (int round = 0; round < PAYLOAD_ROUNDS; round++) {
            ops = 0;
            t0 = now();
            do {
                for (size_t i = 0; i < npay; i++) {
                    const uint8_t *src = comp + i * cap;
                    size_t r;
                    if (!is_zlib) {
                        r = dd ? ZSTD_decompress_usingDDict(dc, out, sz, src, clen[i], dd)
                               : ZSTD_decompressDCtx(dc, out, sz, src, clen[i]);
                        if (r != sz) die("zstd decode");
                    } else {
                        inflateReset(&is);
                        if (dict) inflateSetDictionary(&is, dbytes, (uInt)dlen);
                        is.next_in = (Bytef *)(uintptr_t)src; is.avail_in = (uInt)clen[i];
                        is.next_out = out; is.avail_out = (uInt)sz;
                        if (inflate(&is, Z_FINISH) != Z_STREAM_END) die("inflate");
                    }
                }
                ops += npay;
                t = now();
            } while (t - t0 < pt);
            if ((double)ops / (t - t0) > dops)
                dops = (double)ops / (t - t0);
            }
            char name[48];
            if (is_zlib)
                snprintf(name, sizeof name, "zlib-6%s", dict ? "+dict" : "");
            else
                snprintf(name, sizeof name, "zstd-%d%s", lvl, dict ? "+dict" : "");
            double ratio = (double)(sz * npay) / (double)total;
            fprintf(md, "| %zu | %s | %.3f | %.0f | %.0f | %.1f | %.1f |\n", sz, name, ratio,
                    cops, dops, cops * (double)sz / MB, dops * (double)sz / MB);
            fprintf(js, "%s    {\"bytes\": %zu, \"codec\": \"%s\", \"ratio\": %.4f, "
                        "\"compress_ops_s\": %.0f, \"decompress_ops_s\": %.0f}",
                    first_row ? "" : ",\n", sz, name, ratio, cops, dops);
            first_row = 0;
            ZSTD_freeCDict(cd);
            ZSTD_freeDDict(dd);
        }
        if (verbose)
            fprintf(stderr, "  payload %zu done\n", sz);
    }
    fprintf(js, "\n  ]");
    ZSTD_freeCCtx(cc);
    ZSTD_freeDCtx(dc);
    deflateEnd(&zs);
    inflateEnd(&is);
    free(comp); free(out); free(clen); free(start); free(zbytes); free(dbytes);
}

/* N docs resampled from the real lines: a random line each, converted with
 * a new sequence number (new request id and times). */
static void make_synthetic(const char *path, size_t n, td_docs *out)
{
    td_docs lines;
    if (td_load(path, 0, SIZE_MAX, &lines))
        die("cannot read %s", path);
    memset(out, 0, sizeof *out);
    char *buf = malloc(1 << 16);
    for (size_t i = 0; i < n; i++) {
        size_t j = rnd() % lines.n;
        if (lines.lens[j] * 6 + 1024 > (1 << 16)) continue;
        size_t o = td_line_to_json((const char *)lines.bytes + lines.offs[j],
                                   lines.lens[j], i, buf);
        if (o) td_push(out, buf, o);
    }
    free(buf);
    td_free(&lines);
}

static void usage(void)
{
    printf(
"usage: bench_codec [options]\n"
"  Measures every stored-fields codec mode on the real nginx sample (docs =\n"
"  log lines converted to JSON) and compares ZSTD / zstd_no_dict with plain\n"
"  libzstd calls in this process on the same blocks, dictionary and buffers\n"
"  (ours and the baseline alternate, %d repeats, median [min-max]), and with\n"
"  the zstd CLI (`zstd -b<L> -B16K [-D dict]`) on the same documents and\n"
"  dictionary, run in the same invocation.\n"
"options:\n"
"  --data PATH        nginx log (default: the bundled sample), or NDJSON\n"
"                     documents (one `_source` per line, as synthlogs writes\n"
"                     them; then no --synthetic set)\n"
"  --name BASE        output files BASE.json and BASE.md (default codec)\n"
"  --sections LIST    comma list of sizes,modes,dict,sub,payload (default\n"
"                     all; sizes: bytes only, today's layout and the\n"
"                     previous defaults', nothing timed)\n"
"  --out DIR          where codec.json and codec.md go (default: results)\n"
"  --zstd PATH        zstd CLI (default: zstd)\n"
"  --level L          zstd level (default 3)\n"
"  --dict-size BYTES  trained zstd dictionary size (default %u)\n"
"  --dict-sample BYTES  first bytes of documents the dictionaries are\n"
"                     trained on (default %u)\n"
"  --time SECONDS     minimum time per timed measurement (default 1.0)\n"
"  --synthetic N      also run the modes on N resampled docs (default\n"
"                     1000000; 0 = skip)\n"
"  --seed N           random seed (default 42)\n"
"  --quick            short runs, no synthetic set (smoke test)\n"
"units: MB/s = 10^6 uncompressed bytes per second; ratio = raw / encoded\n"
"  bytes (ours include header, doc lengths and checksum); fetch fraction =\n"
"  decompressed bytes / block bytes per random single-doc fetch; ops/s =\n"
"  payloads per second.  One thread, contexts reused; outside the baseline\n"
"  comparison, rates are the fastest of 5 rounds (the zstd CLI also reports\n"
"  its fastest).\n",
           AB_REPEATS, FDS_DICT_SIZE_DEFAULT, FDS_DICT_SAMPLE_DEFAULT);
}

int main(int argc, char **argv)
{
    const char *data = FDS_BENCH_DATASET, *outdir = "results", *zstd = "zstd";
    const char *name = "codec", *sections = "sizes,modes,dict,sub,payload";
    int level = FDS_ZSTD_LEVEL_DEFAULT, quick = 0;
    size_t dict_size = FDS_DICT_SIZE_DEFAULT, synthetic = 1000000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(); return 0; }
        else if (!strcmp(a, "--quick")) { quick = 1; min_time = 0.1; synthetic = 0; }
        else if (!v) die("missing value for %s (see --help)", a);
        else if (!strcmp(a, "--data")) { data = v; i++; }
        else if (!strcmp(a, "--out")) { outdir = v; i++; }
        else if (!strcmp(a, "--name")) { name = v; i++; }
        else if (!strcmp(a, "--sections")) { sections = v; i++; }
        else if (!strcmp(a, "--zstd")) { zstd = v; i++; }
        else if (!strcmp(a, "--level")) { level = atoi(v); i++; }
        else if (!strcmp(a, "--dict-size")) { dict_size = strtoul(v, NULL, 0); i++; }
        else if (!strcmp(a, "--dict-sample")) { dict_sample = strtoul(v, NULL, 0); i++; }
        else if (!strcmp(a, "--time")) { min_time = atof(v); i++; }
        else if (!strcmp(a, "--synthetic")) { synthetic = strtoul(v, NULL, 0); i++; }
        else if (!strcmp(a, "--seed")) { rng_state = strtoull(v, NULL, 0); i++; }
        else die("unknown option %s (see --help)", a);
    }
    if (level < FDS_ZSTD_LEVEL_MIN || level > FDS_ZSTD_LEVEL_MAX)
        die("level must be %d..%d", FDS_ZSTD_LEVEL_MIN, FDS_ZSTD_LEVEL_MAX);
    int ndjson = 0;
    {
        FILE *f = fopen(data, "rb");
        int c = f ? fgetc(f) : EOF;
        ndjson = c == '{';
        if (f)
            fclose(f);
    }
    if (ndjson)
        synthetic = 0;
    td_docs d;
    if (td_load(data, 1, SIZE_MAX, &d))
        die("cannot read %s", data);
    mkdir(outdir, 0755);
    char tmpdir[] = "/tmp/bench_codec.XXXXXX";
    if (!mkdtemp(tmpdir))
        die("mkdtemp: %s", strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json.tmp", outdir, name);
    js = fopen(path, "w");
    snprintf(path, sizeof path, "%s/%s.md.tmp", outdir, name);
    md = fopen(path, "w");
    if (!js || !md)
        die("cannot write under %s", outdir);
    fprintf(js, "{\n  \"unit_note\": \"MB/s = 1e6 uncompressed bytes/s; ratio = raw/encoded\",\n"
                "  \"seed\": %llu, \"min_time_s\": %.2f, \"level\": %d, \"zstd_version\": \"%s\"",
            (unsigned long long)rng_state, min_time, level, ZSTD_versionString());
    fprintf(md, "# Codec benchmark (`bench_codec%s`)\n\n"
                "%s: `%s`%s; one thread; MB/s = 10^6 raw bytes per second of thread CPU time; "
                "libzstd %s, zlib %s.\n",
            quick ? " --quick" : "", ndjson ? "Documents" : "Real data",
            /* the file's name, not the machine's path to it */
            strrchr(data, '/') ? strrchr(data, '/') + 1 : data,
            ndjson ? " (NDJSON, one document per line)" : " converted to JSON docs",
            ZSTD_versionString(), zlibVersion());
    if (strstr(sections, "sizes"))
        run_sizes(&d, level, dict_size);
    if (strstr(sections, "modes")) {
        run_modes(&d, "real", zstd, tmpdir, level, dict_size, 1);
    }
    if (strstr(sections, "dict")) {
        run_dict_sizes(&d, level);
    }
    if (strstr(sections, "sub")) {
        run_sub_blocks(&d, level, dict_size);
    }
    if (strstr(sections, "payload")) {
        run_payloads(&d, dict_size, quick);
    }
    if (synthetic) {
        td_docs s;
        if (verbose)
            fprintf(stderr, "[synthetic] generating %zu docs ...\n", synthetic);
        make_synthetic(data, synthetic, &s);
        char label[64];
        snprintf(label, sizeof label, "synthetic_%zu", synthetic);
        double keep = min_time;
        min_time = min_time > 1.0 ? min_time : 1.0; /* one pass is >= 1 s anyway */
        run_modes(&s, label, zstd, tmpdir, level, dict_size, 0);
        min_time = keep;
        td_free(&s);
    }
    fprintf(js, "\n}\n");
    fclose(js);
    fclose(md);
    rmdir(tmpdir);
    char from[4096], to[4096];
    snprintf(from, sizeof from, "%s/%s.json.tmp", outdir, name);
    snprintf(to, sizeof to, "%s/%s.json", outdir, name);
    rename(from, to);
    snprintf(from, sizeof from, "%s/%s.md.tmp", outdir, name);
    snprintf(to, sizeof to, "%s/%s.md", outdir, name);
    rename(from, to);
    fprintf(stderr, "wrote %s/%s.json and %s/%s.md\n", outdir, name, outdir, name);
    td_free(&d);
    return 0;
}
