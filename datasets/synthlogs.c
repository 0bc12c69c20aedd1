/*
 * synthlogs: deterministic synthetic nginx documents, as many as wanted, that
 * look like the real sample and whose vocabularies grow as a real log's do.
 *
 * Why it exists: the real sample has 10,000 lines; codec, indexing and search
 * benchmarks need 1M-10M documents with the same statistics (status and
 * method mix, field shapes and lengths, and distinct values that keep coming
 * as in a real log), and the same seed must give the same bytes on every
 * machine so that results compare.
 *
 * How: the sample (--sample, default the bundled real log) is parsed once
 * with fds_logparse.  By default document i is made by synthgrow.c: url,
 * referrer, client address and agent each follow the sample's Heaps' law
 * (new values made from sample templates: renewed ids, recombined Persian
 * slugs, new addresses, renewed agent versions), and the other request
 * fields come from the url's template line.
 *
 * --resample gives the earlier output byte for byte: document i takes
 *   - its request part (method, url, http_version, status, body_bytes_sent,
 *     referrer) from sample line A,
 *   - its client part (remote_addr, remote_user, user_agent,
 *     x_forwarded_for) from sample line B,
 * with A and B drawn uniformly from a splitmix64 stream seeded by --seed, so
 * vocabularies stay the sample's.
 *
 * Both: @timestamp starts at the sample's first timestamp (same UTC offset)
 * and advances by a uniform gap in [0, 2g] milliseconds per document, g being
 * the sample's mean gap, so the rate matches the sample (~4 docs/s).  host,
 * service_name, error_code, timings and request_id come from
 * fds_logparse_derive(seed, FDS_SYNTHLOGS_DOC_DOMAIN + i): the same function
 * nginx2json uses for line i, in a separate number range so a synthetic
 * document never repeats the request_id of a converted line (same seed).
 * No libc randomness or libm is used, so output depends only on the sample
 * bytes and the options.
 *
 * --stats writes to stderr the distinct counts of url, remote_addr,
 * user_agent and referrer after 1k, 2k, 5k, 10k, 20k, ... documents and at
 * the end (counted on the written values, by 64-bit hash).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "distinct.h"
#include "logparse.h"
#include "synthgrow.h"

#ifndef FDS_SYNTHLOGS_SAMPLE_DEFAULT
#define FDS_SYNTHLOGS_SAMPLE_DEFAULT "datasets/nginx-zanbil-access-10k.log"
#endif
#define FDS_SYNTHLOGS_DOCS_DEFAULT 10000
#define FDS_SYNTHLOGS_SEED_DEFAULT 1
#define FDS_SYNTHLOGS_SAMPLE_MAX (1ull << 30) /* bytes of sample read */
#define FDS_SYNTHLOGS_DOC_DOMAIN (1ull << 63)  /* derive() number of doc 0 */
#define FDS_SYNTHLOGS_STATS_FIRST 1000        /* first --stats row */

static void usage(FILE *f)
{
    fputs(
        "usage: synthlogs [options]\n"
        "Write N synthetic fieldstore nginx documents made from a real log,\n"
        "whose url, address, agent and referrer vocabularies grow as the\n"
        "log's do (Heaps' law fitted on the sample).\n"
        "\n"
        "  --docs N            number of documents (default 10000)\n"
        "  --seed S            uint64 seed (default 1); same seed -> same bytes\n"
        "  --format json|bulk  json: one document per line (default);\n"
        "                      bulk: Elasticsearch _bulk NDJSON (action + doc)\n"
        "  --index NAME        index of the bulk action lines (required for bulk)\n"
        "  --no-ids            bulk: leave _id out (default: _id = doc number 1..N)\n"
        "  --host NAME         value of the host field (default www.zanbil.ir)\n"
        "  --sample PATH       real combined log to learn from (default: the\n"
        "                      bundled " FDS_SYNTHLOGS_SAMPLE_DEFAULT ")\n"
        "  --resample          only resample the sample's lines (vocabularies\n"
        "                      stay the sample's; the output of earlier versions)\n"
        "  --stats             write distinct counts of url, remote_addr,\n"
        "                      user_agent, referrer at 1k, 2k, 5k, 10k, ... docs\n"
        "                      and at the end to stderr\n"
        "  -o FILE             write to FILE instead of stdout\n"
        "  -h, --help          this text\n"
        "\n"
        "Exit status: 0 ok, 2 usage or I/O error (also: no parsable sample line).\n",
        f);
}

/* Uniform index in [0, n) for n <= 2^32 (Lemire's multiply-shift on the high
 * 32 bits; the bias is below n / 2^32). */
static size_t pick(uint64_t *state, size_t n)
{
    uint64_t r = fds_logparse_splitmix64(state) >> 32;
    return (size_t)((r * (uint64_t)n) >> 32);
}

/* Read a whole file.  Returns NULL (and prints why) on error. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            if (cap >= FDS_SYNTHLOGS_SAMPLE_MAX) {
                fprintf(stderr, "synthlogs: %s is larger than 1 GiB\n", path);
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (buf && ferror(f)) {
        perror(path);
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Distinct counts of the written url, remote_addr, user_agent, referrer. */
typedef struct fds__synth_stats {
    fds__distinct seen[4];
    uint64_t next; /* next row: 1k, 2k, 5k, 10k, 20k, ... */
    uint64_t last; /* documents of the last row printed */
    int oom;
} fds__synth_stats;

static void fds__stats_add(fds__synth_stats *st, const fds_logrec *r)
{
    const fds_logslice v[4] = {r->url, r->remote_addr, r->user_agent, r->referrer};
    for (int f = 0; f < 4; f++)
        if (fds__distinct_add(&st->seen[f], fds__distinct_hash(v[f].ptr, v[f].len)) < 0)
            st->oom = 1;
}

static void fds__stats_row(fds__synth_stats *st, uint64_t docs)
{
    st->last = docs;
    fprintf(stderr, "%llu\t%zu\t%zu\t%zu\t%zu\n", (unsigned long long)docs,
            st->seen[0].n, st->seen[1].n, st->seen[2].n, st->seen[3].n);
}

/* After document i: print a row at 1, 2, 5 times a power of ten >= 1000. */
static void fds__stats_step(fds__synth_stats *st, uint64_t i)
{
    if (i != st->next) return;
    fds__stats_row(st, i);
    uint64_t p = 1;
    while (i / p >= 10) p *= 10;
    uint64_t lead = i / p;
    st->next = lead == 1 ? 2 * p : lead == 2 ? 5 * p : 10 * p;
}

int main(int argc, char **argv)
{
    fds__cli_opts o = {.format = "json", .host = FDS_LOGPARSE_HOST_DEFAULT,
                       .sample = FDS_SYNTHLOGS_SAMPLE_DEFAULT,
                       .seed = FDS_SYNTHLOGS_SEED_DEFAULT,
                       .docs = FDS_SYNTHLOGS_DOCS_DEFAULT};
    int ex = fds__cli_parse(argc, argv, "synthlogs", 1, usage, &o);
    if (ex >= 0)
        return ex;
    const char *index = o.index, *host = o.host, *sample = o.sample;
    const char *out_path = o.out_path;
    uint64_t seed = o.seed, docs = o.docs;
    int no_ids = o.no_ids, bulk = o.bulk;

    /* Parse the sample once; records point into `text`. */
    size_t text_len = 0;
    char *text = slurp(sample, &text_len);
    if (!text) return FDS_CLI_EXIT_USAGE;
    size_t nrec = 0, cap = 0, skipped = 0;
    fds_logrec *recs = NULL;
    for (size_t pos = 0; pos < text_len;) {
        char *nl = memchr(text + pos, '\n', text_len - pos);
        size_t len = (nl ? (size_t)(nl - text) : text_len) - pos;
        if (nrec == cap) {
            cap = cap ? cap * 2 : 1024;
            fds_logrec *nr = realloc(recs, cap * sizeof *recs);
            if (!nr) {
                fprintf(stderr, "synthlogs: out of memory\n");
                return FDS_CLI_EXIT_USAGE;
            }
            recs = nr;
        }
        if (fds_logparse_line(text + pos, len, &recs[nrec], NULL, NULL) == 0)
            nrec++;
        else
            skipped++;
        pos += len + 1;
    }
    if (nrec == 0) {
        fprintf(stderr, "synthlogs: no parsable line in %s\n", sample);
        return FDS_CLI_EXIT_USAGE;
    }
    if (nrec > UINT32_MAX) nrec = UINT32_MAX;
    if (skipped)
        fprintf(stderr, "synthlogs: %zu unparsable sample lines ignored\n", skipped);
    int64_t base_epoch = recs[0].epoch;
    int tz = recs[0].tz_offset_min;
    int64_t span = recs[nrec - 1].epoch - base_epoch;
    uint64_t mean_gap_ms =
        nrec > 1 && span > 0 ? (uint64_t)span * 1000 / (nrec - 1) : 1000;

    FILE *out = fds__cli_open_out(out_path);
    if (!out)
        return FDS_CLI_EXIT_USAGE;

    fds_synthgrow *grow = NULL;
    int err = o.resample ? 0 : fds_synthgrow_create(recs, nrec, seed, &grow);
    if (err) {
        fprintf(stderr, "synthlogs: %s\n", fds_strerror(err));
        return FDS_CLI_EXIT_USAGE;
    }
    fds__synth_stats stats = {.next = FDS_SYNTHLOGS_STATS_FIRST};
    if (o.stats)
        fprintf(stderr, "docs\turl\tremote_addr\tuser_agent\treferrer\n");

    uint64_t state = seed, t_ms = 0;
    char *buf = NULL;
    size_t buf_cap = 0;
    int io_error = 0;
    for (uint64_t i = 1; i <= docs && !io_error && !err; i++) {
        fds_logrec rec;
        if (grow) {
            err = fds_synthgrow_doc(grow, i, &rec);
            if (err) break;
        } else {
            const fds_logrec *a = &recs[pick(&state, nrec)];
            const fds_logrec *b = &recs[pick(&state, nrec)];
            rec = *a;
            rec.remote_addr = b->remote_addr;
            rec.remote_user = b->remote_user;
            rec.user_agent = b->user_agent;
            rec.x_forwarded_for = b->x_forwarded_for;
        }
        t_ms += fds_logparse_splitmix64(&state) % (2 * mean_gap_ms + 1);
        rec.epoch = base_epoch + (int64_t)(t_ms / 1000);
        rec.tz_offset_min = tz;
        fds_logparse_derive(&rec, host, seed, FDS_SYNTHLOGS_DOC_DOMAIN + i);
        if (bulk && fds__cli_action(out, index, no_ids ? 0 : i)) io_error = 1;
        if (!io_error && fds__cli_emit(out, &rec, &buf, &buf_cap)) io_error = 1;
        if (o.stats) {
            fds__stats_add(&stats, &rec);
            fds__stats_step(&stats, i);
        }
    }
    if (o.stats && !err && docs && stats.last != docs) fds__stats_row(&stats, docs);
    if (stats.oom && !err) err = FDS_ENOMEM;
    for (int f = 0; f < 4; f++) fds__distinct_free(&stats.seen[f]);
    fds_synthgrow_free(grow);
    if (fflush(out) || ferror(out)) io_error = 1;
    if (out != stdout && fclose(out)) io_error = 1;
    free(buf);
    free(recs);
    free(text);
    if (io_error) {
        fprintf(stderr, "synthlogs: write error on %s\n",
                out_path ? out_path : "stdout");
        return FDS_CLI_EXIT_USAGE;
    }
    if (err) {
        fprintf(stderr, "synthlogs: %s\n", fds_strerror(err));
        return FDS_CLI_EXIT_USAGE;
    }
    return FDS_CLI_EXIT_OK;
}
