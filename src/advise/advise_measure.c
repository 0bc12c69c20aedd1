/*
 * advise_measure.c: the grid of stored-fields configurations `fieldstore
 * advise` measures, and the measurement of one configuration.
 *
 * Every number comes from the codec the store runs (src/codec): blocks are
 * cut as segment.c cuts them (close a block when its raw bytes reach
 * block_size or it holds max_docs_per_block documents), encoded with
 * fds_block_encode, decoded with fds_block_decode (whole blocks) and
 * fds_block_decode_doc (one document, as a search's fetch phase does);
 * dictionaries are trained with fds_dict_train on the sample's first
 * documents up to FDS_DICT_SAMPLE_DEFAULT bytes, falling back to the
 * sampled bytes themselves when zstd's trainer refuses, as
 * store/dict_train.c does.
 *
 * Units: MB/s = 10^6 raw (uncompressed) bytes per second of this thread's
 * CPU time (CLOCK_THREAD_CPUTIME_ID, so other load on the machine does not
 * count); compress CPU per document = CPU time of encoding / documents
 * encoded; fetch latency = thread CPU time of fds_block_decode_doc (one
 * document) or of ten of them (ten random hits) per call, less the clock's
 * own cost (the median of ADV_CLOCK_CALIBRATE empty readings), p50 and
 * p99 over random documents (fixed seed): CPU time, so that a shared
 * machine's scheduler does not fill the p99 with preemptions.  Contexts and dictionaries are built once and
 * reused, as the server's are (warm dictionary).  How long each
 * measurement repeats is set by the wall clock (a share of the row's slice
 * of --time, at least one pass), so that --time holds on a busy machine;
 * the rates divide by CPU time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "advise.h"

/* Share of a row's time slice spent on each measurement. */
#define ADV_SHARE_COMPRESS 0.35
#define ADV_SHARE_DECODE 0.25
#define ADV_SHARE_FETCH1 0.2
#define ADV_SHARE_FETCH10 0.2
/* A row's slice of a round is the time left over the rows and the
 * rounds aimed at, within: */
#define ADV_SLICE_MIN 0.02
#define ADV_SLICE_MAX 3.0
/* Rounds the time left is planned for (each row is visited once a round) */
#define ADV_ROUNDS_AIM 3
/* Wall time of a pass, planned as this many times its CPU time (a busy
 * machine shares the core) */
#define ADV_PASS_WALL 2.0
#define ADV_SEED 42u
#define ADV_CLOCK_CALIBRATE 1001

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- the grid ---------------------------------------------------------- */

static fds__adv_row *add(fds__adv_grid *g, fds_codec_id c, int level)
{
    fds__adv_row *r = &g->rows[g->nrows++];
    memset(r, 0, sizeof *r);
    fds_codec_params_default(c, &r->p);
    if (c == FDS_CODEC_ZSTD || c == FDS_CODEC_ZSTD_NO_DICT) r->p.level = level;
    r->dict_size = c == FDS_CODEC_ZSTD      ? FDS_DICT_SIZE_DEFAULT
                   : c == FDS_CODEC_DEFLATE ? FDS_DEFLATE_DICT_MAX
                                            : 0;
    r->settable = true;
    if (c == FDS_CODEC_ZSTD || c == FDS_CODEC_ZSTD_NO_DICT) {
        snprintf(r->name, sizeof r->name, "%s level %d", fds_codec_name(c), level);
        snprintf(r->settings, sizeof r->settings,
                 "{\"settings\":{\"index.codec\":\"%s\",\"index.compression.zstd.level\":%d}}",
                 fds_codec_name(c), level);
    } else if (c == FDS_CODEC_LZ4) {
        snprintf(r->name, sizeof r->name, "default (LZ4)");
        snprintf(r->settings, sizeof r->settings, "{\"settings\":{\"index.codec\":\"default\"}}");
    } else {
        snprintf(r->name, sizeof r->name, "%s", fds_codec_name(c));
        snprintf(r->settings, sizeof r->settings, "{\"settings\":{\"index.codec\":\"%s\"}}",
                 fds_codec_name(c));
    }
    uint32_t sub = r->p.sub_blocks ? r->p.sub_blocks : FDS_ZSTD_SUB_BLOCKS_DEFAULT;
    switch (c) {
    case FDS_CODEC_ZSTD:
        snprintf(r->variant, sizeof r->variant, "%u KiB blocks, %zu KiB dictionary, %u sub-blocks",
                 r->p.block_size / 1024, r->dict_size / 1024, sub);
        break;
    case FDS_CODEC_ZSTD_NO_DICT:
        snprintf(r->variant, sizeof r->variant, "%u KiB blocks, no dictionary, %u sub-blocks",
                 r->p.block_size / 1024, sub);
        break;
    case FDS_CODEC_DEFLATE:
        snprintf(r->variant, sizeof r->variant, "%u KiB blocks, zlib %d, %zu KiB preset dictionary",
                 r->p.block_size / 1024, FDS_DEFLATE_LEVEL, r->dict_size / 1024);
        break;
    case FDS_CODEC_LUCENE_DEFLATE:
        snprintf(r->variant, sizeof r->variant, "%u KiB chunks, zlib %d, %u sub-blocks (Lucene 8.7 layout)",
                 r->p.block_size / 1024, FDS_DEFLATE_LEVEL, FDS_LUCENE_NUM_SUB_BLOCKS);
        break;
    default:
        snprintf(r->variant, sizeof r->variant, "%u KiB blocks, LZ4", r->p.block_size / 1024);
    }
    return r;
}

void fds__adv_grid_init(fds__adv_grid *g)
{
    memset(g, 0, sizeof *g);
    g->seed = ADV_SEED;
    /* the index.codec values, the default first */
    add(g, FDS_CODEC_ZSTD, FDS_ZSTD_LEVEL_DEFAULT)->is_default = true;
    add(g, FDS_CODEC_DEFLATE, 0);
    add(g, FDS_CODEC_LUCENE_DEFLATE, 0);
    add(g, FDS_CODEC_LZ4, 0);
    add(g, FDS_CODEC_ZSTD_NO_DICT, FDS_ZSTD_LEVEL_DEFAULT);
    static const int levels[] = {1, 6, 9, 19};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        add(g, FDS_CODEC_ZSTD, levels[i]);
    /* zstd sub-blocks per block: a codec parameter no setting reaches
     * (the default's row is the first one) */
    static const uint32_t subs[] = {1, 2, 4, 6};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (subs[i] == FDS_ZSTD_SUB_BLOCKS_DEFAULT)
            continue;
        fds__adv_row *r = add(g, FDS_CODEC_ZSTD, FDS_ZSTD_LEVEL_DEFAULT);
        r->p.sub_blocks = subs[i];
        r->settable = false;
        r->settings[0] = 0;
        snprintf(r->name, sizeof r->name, "ZSTD level 3, %u sub-block%s", subs[i],
                 subs[i] > 1 ? "s" : "");
        snprintf(r->variant, sizeof r->variant,
                 "16 KiB blocks, %u KiB dictionary, %u sub-block%s (not settable per index)",
                 FDS_DICT_SIZE_DEFAULT / 1024, subs[i], subs[i] > 1 ? "s" : "");
    }
    /* block sizes (index.codec.block_size, max docs scaled alike) */
    static const uint32_t blocks[] = {8, 32, 64};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        fds__adv_row *r = add(g, FDS_CODEC_ZSTD, FDS_ZSTD_LEVEL_DEFAULT);
        r->p.block_size = blocks[i] * 1024;
        r->p.max_docs_per_block = FDS_BLOCK_MAX_DOCS_DEFAULT * blocks[i] /
                                  (FDS_BLOCK_SIZE_DEFAULT / 1024);
        snprintf(r->name, sizeof r->name, "ZSTD level 3, %u KiB blocks", blocks[i]);
        snprintf(r->variant, sizeof r->variant,
                 "%u KiB blocks or %u docs, %u KiB dictionary, %u sub-blocks", blocks[i],
                 r->p.max_docs_per_block, FDS_DICT_SIZE_DEFAULT / 1024,
                 FDS_ZSTD_SUB_BLOCKS_DEFAULT);
        snprintf(r->settings, sizeof r->settings,
                 "{\"settings\":{\"index.codec\":\"ZSTD\",\"index.compression.zstd.level\":3,"
                 "\"index.codec.block_size\":\"%ukb\",\"index.codec.max_docs_per_block\":%u}}",
                 blocks[i], r->p.max_docs_per_block);
    }
    /* dictionary sizes (index.codec.dict_size; the default's row is the
     * first one) */
    static const uint32_t dicts[] = {16, 32, 64, 112, 256};
    for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
        if (dicts[i] * 1024 == FDS_DICT_SIZE_DEFAULT)
            continue;
        fds__adv_row *r = add(g, FDS_CODEC_ZSTD, FDS_ZSTD_LEVEL_DEFAULT);
        r->dict_size = dicts[i] * 1024;
        snprintf(r->name, sizeof r->name, "ZSTD level 3, %u KiB dictionary", dicts[i]);
        snprintf(r->variant, sizeof r->variant, "16 KiB blocks, %u KiB dictionary, %u sub-blocks",
                 dicts[i], FDS_ZSTD_SUB_BLOCKS_DEFAULT);
        snprintf(r->settings, sizeof r->settings,
                 "{\"settings\":{\"index.codec\":\"ZSTD\",\"index.compression.zstd.level\":3,"
                 "\"index.codec.dict_size\":\"%ukb\"}}", dicts[i]);
    }
}

/* ---- dictionaries ------------------------------------------------------ */

/* Trained dictionary bytes, kept per (codec, size): rows that differ only
 * in level or block size share them, as an index's blocks share one. */
typedef struct dict_cache {
    struct { fds_codec_id codec; size_t size; uint8_t *bytes; size_t len; double ms; } e[8];
    size_t n;
} dict_cache;

static int dict_get(dict_cache *dc, const fds__adv_docs *d, fds_codec_id codec,
                    size_t size, const uint8_t **bytes, size_t *len, double *ms)
{
    for (size_t i = 0; i < dc->n; i++)
        if (dc->e[i].codec == codec && dc->e[i].size == size) {
            *bytes = dc->e[i].bytes;
            *len = dc->e[i].len;
            *ms = dc->e[i].ms;
            return 0;
        }
    if (dc->n == sizeof dc->e / sizeof dc->e[0]) return FDS_ERANGE;
    size_t ns = 0, total = 0;
    while (ns < d->n && total < FDS_DICT_SAMPLE_DEFAULT) total += d->lens[ns++];
    size_t *sl = malloc((ns + 1) * sizeof *sl);
    uint8_t *buf = malloc(size + 1);
    if (!sl || !buf) {
        free(sl);
        free(buf);
        return FDS_ENOMEM;
    }
    for (size_t i = 0; i < ns; i++) sl[i] = d->lens[i];
    double t0 = cpu();
    size_t dlen = 0;
    int rc = fds_dict_train(codec, d->bytes, sl, (unsigned)ns, size, buf, &dlen);
    if (rc || !dlen) { /* the sampled bytes themselves, as dict_train.c */
        dlen = total < size ? total : size;
        memcpy(buf, d->bytes + total - dlen, dlen);
    }
    free(sl);
    dc->e[dc->n].codec = codec;
    dc->e[dc->n].size = size;
    dc->e[dc->n].bytes = buf;
    dc->e[dc->n].len = dlen;
    dc->e[dc->n].ms = (cpu() - t0) * 1e3;
    *bytes = buf;
    *len = dlen;
    *ms = dc->e[dc->n++].ms;
    return 0;
}

/* ---- one row ------------------------------------------------------------ */

typedef struct blocks {
    size_t n, cap;
    size_t *first;      /* first doc of block i; first[n] = docs */
    uint8_t **blk;
    size_t *len;
} blocks;

static void blocks_free(blocks *b)
{
    for (size_t i = 0; i < b->n; i++) free(b->blk[i]);
    free(b->blk);
    free(b->len);
    free(b->first);
    memset(b, 0, sizeof *b);
}

/* One block from doc `first`, as segment.c cuts it. */
static size_t cut(const fds__adv_docs *d, size_t first, const fds_codec_params *p)
{
    size_t i = first, raw = 0;
    while (i < d->n && i - first < p->max_docs_per_block && (i == first || raw < p->block_size))
        raw += d->lens[i++];
    return i;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile q (0..1) of v[0..n), sorted in place: nearest rank. */
static double pct(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

/* The block holding doc: binary search over b->first. */
static size_t block_of(const blocks *b, size_t doc)
{
    size_t lo = 0, hi = b->n;
    while (hi - lo > 1) {
        size_t m = (lo + hi) / 2;
        if (b->first[m] <= doc) lo = m; else hi = m;
    }
    return lo;
}

/* The cost of one cpu() reading pair, µs: the median of
 * ADV_CLOCK_CALIBRATE back-to-back pairs. */
static double clock_cost(void)
{
    double v[ADV_CLOCK_CALIBRATE];
    for (size_t i = 0; i < ADV_CLOCK_CALIBRATE; i++) {
        double t0 = cpu();
        v[i] = (cpu() - t0) * 1e6;
    }
    return pct(v, ADV_CLOCK_CALIBRATE, 0.5);
}

/* A row's state between rounds: its encoded blocks and dictionary, the
 * fastest compress and decode pass so far, and every fetch sample. */
typedef struct row_state {
    blocks b;
    fds_dict *dict;
    double best_c, best_d;  /* CPU seconds of the fastest whole pass */
    double *lat[2];         /* one-doc, ten-hit samples, µs */
    size_t nlat[2];
    uint8_t *scratch;       /* output of the timed encode passes */
    size_t scap;
} row_state;

static void state_free(row_state *st)
{
    blocks_free(&st->b);
    fds_dict_free(st->dict);
    free(st->lat[0]);
    free(st->lat[1]);
    free(st->scratch);
    memset(st, 0, sizeof *st);
}

/* Encode every block of d once into st->b (keep = true) or into
 * st->scratch; returns the CPU seconds taken in *secs. */
static int encode_pass(fds_codec_ctx *ctx, const fds__adv_row *r, row_state *st,
                       const fds__adv_docs *d, bool keep, double *secs)
{
    blocks *b = &st->b;
    const fds_dict *dict = st->dict;
    double t0 = cpu();
    size_t f = 0, nb = 0;
    while (f < d->n) {
        size_t e = cut(d, f, &r->p);
        size_t raw = d->offs[e] - d->offs[f];
        size_t bound = fds_block_bound(&r->p, raw, (uint32_t)(e - f));
        uint8_t *out;
        if (keep) {
            if (!(out = malloc(bound))) return FDS_ENOMEM;
            b->blk[nb] = out;
        } else {
            if (bound > st->scap) {
                uint8_t *ns = realloc(st->scratch, bound);
                if (!ns) return FDS_ENOMEM;
                st->scratch = ns;
                st->scap = bound;
            }
            out = st->scratch;
        }
        size_t len = 0;
        int rc = fds_block_encode(ctx, &r->p, dict, f, d->bytes + d->offs[f], d->lens + f,
                                  (uint32_t)(e - f), out, bound, &len);
        if (rc) return rc;
        if (keep) {
            b->first[nb] = f;
            b->len[nb] = len;
            b->n = nb + 1;
        }
        nb++;
        f = e;
    }
    if (keep) b->first[b->n] = d->n;
    *secs = cpu() - t0;
    return 0;
}

/* Decode every block whole; check them against the documents when
 * `check`.  The CPU seconds in *secs. */
static int decode_pass(fds_codec_ctx *ctx, const blocks *b, const fds_dict *dict,
                       const fds__adv_docs *d, bool check, double *secs)
{
    double t0 = cpu();
    for (size_t i = 0; i < b->n; i++) {
        fds_block_view v;
        int rc = fds_block_decode(ctx, b->blk[i], b->len[i], dict, UINT32_MAX, &v);
        if (rc) return rc;
        if (check && (v.raw_len != d->offs[b->first[i + 1]] - d->offs[b->first[i]] ||
                      memcmp(v.raw, d->bytes + d->offs[b->first[i]], v.raw_len)))
            return FDS_ECORRUPT;
    }
    *secs = cpu() - t0;
    return 0;
}

/* Fetch `hits` random docs per call, each checked against its bytes;
 * appends the per-call CPU time in µs to lat[*n..] (capacity
 * FDS_ADVISE_FETCH_MAX).  Calls: until `secs` of wall time and at least
 * `min_calls`, within the capacity. */
static int fetch_run(fds_codec_ctx *ctx, const blocks *b, const fds_dict *dict,
                     const fds__adv_docs *d, int hits, double secs, size_t min_calls,
                     uint64_t *seed, double *lat, size_t *n)
{
    double cost = clock_cost(), start = mono();
    size_t calls = 0;
    while (*n < FDS_ADVISE_FETCH_MAX && (calls < min_calls || mono() - start < secs)) {
        size_t doc[FDS_ADVISE_HITS];
        for (int h = 0; h < hits; h++) doc[h] = rnd(seed) % d->n;
        double t0 = cpu();
        for (int h = 0; h < hits; h++) {
            size_t bi = block_of(b, doc[h]);
            uint32_t in = (uint32_t)(doc[h] - b->first[bi]);
            fds_block_view v;
            int rc = fds_block_decode_doc(ctx, b->blk[bi], b->len[bi], dict, in, &v);
            if (rc) return rc;
            if (v.first_doc > in || v.decoded_docs <= in ||
                v.offsets[in + 1] - v.offsets[in] != d->lens[doc[h]] ||
                memcmp(v.raw + v.offsets[in], d->bytes + d->offs[doc[h]], d->lens[doc[h]]))
                return FDS_ECORRUPT;
        }
        lat[(*n)++] = fmax(0, (cpu() - t0) * 1e6 - cost);
        calls++;
    }
    return 0;
}

/* First visit of a row: train (or reuse) its dictionary, encode the
 * blocks it keeps, check every block decodes to its documents; sizes. */
static int row_build(fds__adv_row *r, row_state *st, dict_cache *dc, const fds__adv_docs *d)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    if (!ctx) return FDS_ENOMEM;
    int rc;
    if (fds_codec_uses_dict(r->p.codec)) {
        const uint8_t *db;
        size_t dl;
        if ((rc = dict_get(dc, d, r->p.codec, r->dict_size, &db, &dl, &r->dict_train_ms)) ||
            (rc = fds_dict_create(1, r->p.codec, r->p.level, db, dl, &st->dict)))
            return rc;
        r->dict_bytes = dl;
    }
    blocks *b = &st->b;
    b->cap = d->n + 1;
    b->first = malloc(b->cap * sizeof *b->first);
    b->blk = calloc(b->cap, sizeof *b->blk);
    b->len = malloc(b->cap * sizeof *b->len);
    st->lat[0] = malloc(FDS_ADVISE_FETCH_MAX * sizeof *st->lat[0]);
    st->lat[1] = malloc(FDS_ADVISE_FETCH_MAX * sizeof *st->lat[1]);
    if (!b->first || !b->blk || !b->len || !st->lat[0] || !st->lat[1]) return FDS_ENOMEM;
    double secs;
    if ((rc = encode_pass(ctx, r, st, d, true, &secs)) ||
        (rc = decode_pass(ctx, b, st->dict, d, true, &st->best_d)))
        return rc;
    st->best_c = secs;
    r->nblocks = b->n;
    r->raw_bytes = d->len;
    r->stored_bytes = 0;
    for (size_t i = 0; i < b->n; i++) r->stored_bytes += b->len[i];
    r->ratio = (double)r->raw_bytes / (double)r->stored_bytes;
    r->bytes_per_doc = (double)(r->stored_bytes + FDS_ADVISE_BLOCK_INDEX_ENTRY * r->nblocks) /
                       (double)d->n;
    return 0;
}

/* One round of a row: compress and decode passes for their share of
 * `slice` (at least one each; the fastest pass of all rounds counts),
 * then one-doc and ten-hit fetches for theirs. */
static int row_round(row_state *st, const fds__adv_row *r, const fds__adv_docs *d,
                     double slice, size_t min_fetches, uint64_t *seed)
{
    fds_codec_ctx *ctx = fds_codec_ctx_thread();
    double secs, w0 = mono();
    int rc;
    do {
        if ((rc = encode_pass(ctx, r, st, d, false, &secs))) return rc;
        st->best_c = fmin(st->best_c, secs);
    } while (mono() - w0 < slice * ADV_SHARE_COMPRESS);
    w0 = mono();
    do {
        if ((rc = decode_pass(ctx, &st->b, st->dict, d, false, &secs))) return rc;
        st->best_d = fmin(st->best_d, secs);
    } while (mono() - w0 < slice * ADV_SHARE_DECODE);
    if ((rc = fetch_run(ctx, &st->b, st->dict, d, 1, slice * ADV_SHARE_FETCH1, min_fetches,
                        seed, st->lat[0], &st->nlat[0])))
        return rc;
    return fetch_run(ctx, &st->b, st->dict, d, FDS_ADVISE_HITS, slice * ADV_SHARE_FETCH10,
                     min_fetches / FDS_ADVISE_HITS, seed, st->lat[1], &st->nlat[1]);
}

/* The row's figures from its state. */
static void row_figures(fds__adv_row *r, row_state *st, const fds__adv_docs *d)
{
    r->compress_mb_s = (double)d->len / st->best_c / 1e6;
    r->compress_cpu_us_per_doc = st->best_c * 1e6 / (double)d->n;
    r->decode_mb_s = (double)d->len / st->best_d / 1e6;
    r->fetch1_p50 = pct(st->lat[0], st->nlat[0], 0.5);
    r->fetch1_p99 = pct(st->lat[0], st->nlat[0], 0.99);
    r->fetch10_p50 = pct(st->lat[1], st->nlat[1], 0.5);
    r->fetch10_p99 = pct(st->lat[1], st->nlat[1], 0.99);
    r->fetches = st->nlat[0];
    r->measured = true;
}

static void progress(const fds__adv_grid *g, size_t i, double deadline)
{
    const fds__adv_row *r = &g->rows[i];
    fprintf(stderr, "advise: [%zu/%zu] %-34s ratio %6.2f  %7.1f B/doc  compress %6.1f MB/s"
                    "  decode %7.1f MB/s  fetch p50 %6.1f us  (%.0f s left)\n",
            i + 1, g->nrows, r->name, r->ratio, r->bytes_per_doc, r->compress_mb_s,
            r->decode_mb_s, r->fetch1_p50, fmax(0, deadline - mono()));
}

int fds__adv_measure(fds__adv_grid *g, const fds__adv_docs *docs, double deadline,
                     bool quiet)
{
    dict_cache dc = {0};
    row_state *st = calloc(g->nrows, sizeof *st);
    if (!st) return FDS_ENOMEM;
    double start = mono();
    uint64_t seed = g->seed;
    int rc = 0;
    size_t i = 0;
    /* round 1, row by row: build, check, a first short measurement */
    for (; i < g->nrows; i++) {
        fds__adv_row *r = &g->rows[i];
        if (mono() >= deadline) {
            g->stopped_early = true;
            if (!quiet)
                fprintf(stderr, "advise: time is up (--time): %zu of %zu configurations "
                                "not measured\n", g->nrows - i, g->nrows);
            break;
        }
        if ((rc = row_build(r, &st[i], &dc, docs)) ||
            (rc = row_round(&st[i], r, docs, ADV_SLICE_MIN, FDS_ADVISE_FETCH_MIN, &seed))) {
            fprintf(stderr, "advise: %s: the codec failed: %s\n", r->name, fds_strerror(rc));
            goto out;
        }
        row_figures(r, &st[i], docs);
        g->nmeasured++;
        g->rounds = 1;
        if (!quiet) progress(g, i, deadline);
    }
    /* more rounds over every row while time is left: a shared machine's
     * drift then weighs on every row alike */
    while (!g->stopped_early && mono() < deadline) {
        double slice = (deadline - mono()) / (double)(g->nrows * ADV_ROUNDS_AIM);
        slice = fmin(ADV_SLICE_MAX, fmax(ADV_SLICE_MIN, slice));
        bool full = true;
        for (size_t k = 0; k < g->nrows && full; k++) {
            /* a row whose passes would outlast --time ends the rounds */
            if (mono() + ADV_PASS_WALL * (st[k].best_c + st[k].best_d) + slice > deadline) {
                full = false;
                break;
            }
            if ((rc = row_round(&st[k], &g->rows[k], docs, slice, 0, &seed))) {
                fprintf(stderr, "advise: %s: the codec failed: %s\n", g->rows[k].name,
                        fds_strerror(rc));
                goto out;
            }
        }
        if (!full) break;
        g->rounds++;
        if (!quiet)
            fprintf(stderr, "advise: round %u over all %zu configurations done (%.0f s left)\n",
                    g->rounds, g->nrows, fmax(0, deadline - mono()));
    }
    for (size_t k = 0; k < g->nmeasured; k++) row_figures(&g->rows[k], &st[k], docs);
out:
    for (size_t k = 0; k < g->nrows; k++) state_free(&st[k]);
    free(st);
    for (size_t k = 0; k < dc.n; k++) free(dc.e[k].bytes);
    g->seconds = mono() - start;
    return rc;
}

void fds__adv_pareto(fds__adv_grid *g)
{
    for (size_t i = 0; i < g->nrows; i++) {
        fds__adv_row *a = &g->rows[i];
        a->pareto = a->measured;
        for (size_t j = 0; j < g->nrows && a->pareto; j++) {
            const fds__adv_row *o = &g->rows[j];
            if (j == i || !o->measured) continue;
            if (o->bytes_per_doc <= a->bytes_per_doc && o->fetch1_p50 <= a->fetch1_p50 &&
                (o->bytes_per_doc < a->bytes_per_doc || o->fetch1_p50 < a->fetch1_p50))
                a->pareto = false;
        }
    }
}
