/*
 * bench_query: query-phase cost of the search engine on >= 1M synthetic
 * nginx documents (resampled from the real sample), without the fetch phase.
 *
 * Usage: bench_query [-n DOCS] [-s SEGMENTS] [-r RUNS] [-o DIR] SAMPLE.log
 *   -n  documents to generate (default 1000000)
 *   -s  segments to split them into (default 4)
 *   -r  timed runs per query (default 200, after 5 warm-up runs)
 *   -o  output directory for query.json and query.md (default results)
 *
 * Documents: line i of the output is a random line of the sample (fixed
 * seed 42) converted to JSON, with @timestamp rewritten to increase by
 * 86.4 ms per document from 2019-01-22T00:00:00+03:30, so sorting on it is
 * meaningful.  Each case reports the median and p99 latency of
 * fds_search_execute in microseconds (parse and render excluded), hits
 * counted, and postings scored / postings of the query's terms -- the
 * fraction block-max WAND had to score.  A checksum of the returned doc ids
 * proves the work was done.
 */
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "search_render.h"
#include "qtest.h"
#include "query.h"

#include "fds_text.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct bcase {
    const char *name;
    const char *body;
    int deleted; /* run over the segments with 1% deleted docs */
} bcase;

static const bcase cases[] = {
    {"match method GET (default track_total_hits)",
     "{\"query\":{\"match\":{\"method\":\"GET\"}},\"size\":10}", 0},
    {"match method GET, track_total_hits true",
     "{\"query\":{\"match\":{\"method\":\"GET\"}},\"size\":10,\"track_total_hits\":true}", 0},
    {"match method GET, 1% deleted",
     "{\"query\":{\"match\":{\"method\":\"GET\"}},\"size\":10}", 1},
    {"match status 200 (numeric)",
     "{\"query\":{\"match\":{\"status\":200}},\"size\":10}", 0},
    {"match url \"image productModel 200x200\"",
     "{\"query\":{\"match\":{\"url\":\"image productModel 200x200\"}},\"size\":10}", 0},
    {"match user_agent \"Mozilla Chrome Safari\"",
     "{\"query\":{\"match\":{\"user_agent\":\"Mozilla Chrome Safari\"}},\"size\":10}", 0},
    {"match method POST (rare)",
     "{\"query\":{\"match\":{\"method\":\"POST\"}},\"size\":10}", 0},
    {"match_all sort @timestamp desc",
     "{\"query\":{\"match_all\":{}},\"size\":10,\"sort\":[{\"@timestamp\":\"desc\"}]}", 0},
    {"match method GET sort @timestamp desc",
     "{\"query\":{\"match\":{\"method\":\"GET\"}},\"size\":10,\"sort\":[{\"@timestamp\":\"desc\"}]}", 0},
    {"bool GET + range status 400..599",
     "{\"query\":{\"bool\":{\"must\":[{\"match\":{\"method\":\"GET\"}}],"
     "\"filter\":[{\"range\":{\"status\":{\"gte\":400,\"lte\":599}}}]}},\"size\":10}", 0},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* The benchmark's index: nseg segments of resampled sample docs, and the
 * same segments with 1%% of docs deleted. */
typedef struct bench_index {
    fds_mapping *m;
    fds_sidx **sidx;
    fds_search_segment *segs, *segs_del;
    uint8_t **live;
    uint64_t file_bytes;
    double index_s; /* indexing time, document generation excluded */
} bench_index;

/* Index ndocs docs resampled from the sample (fixed seed; timestamps
 * rewritten to spread over a day) into nseg segments.  Returns 0 or 1. */
static int build_index(const qt_docs *sample, size_t ndocs, int nseg,
                       bench_index *bx)
{
    fds_mapping *m = bx->m = fds_mapping_create();
    fds_sidx **sidx = bx->sidx = calloc((size_t)nseg, sizeof *sidx);
    fds_search_segment *segs = bx->segs = calloc((size_t)nseg, sizeof *segs);
    fds_search_segment *segs_del = bx->segs_del = calloc((size_t)nseg, sizeof *segs_del);
    uint8_t **live = bx->live = calloc((size_t)nseg, sizeof *live);
    uint64_t rng = 42, file_bytes = 0;
    char *buf = malloc(1 << 16);
    double t0 = now_us(), gen_us = 0;
    size_t per = (ndocs + (size_t)nseg - 1) / (size_t)nseg, next = 0;
    const time_t base = 1548102600; /* 2019-01-22T00:00:00+03:30 */
    char dir[] = "/tmp/fds-bench-query-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    for (int s = 0; s < nseg; s++) {
        fds_sidx_writer *w = fds_sidx_writer_create(m);
        uint32_t n = 0;
        for (; next < ndocs && n < per; next++, n++) {
            double g0 = now_us();
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t k = (size_t)(rng >> 33) % sample->n;
            const char *src = sample->json[k];
            size_t len = sample->len[k];
            /* {"@timestamp":"YYYY-MM-DDTHH:MM:SS+03:30" : rewrite 19 chars */
            memcpy(buf, src, len);
            time_t t = base + (time_t)((double)next * 0.0864) + 12600;
            struct tm tm;
            gmtime_r(&t, &tm);
            char ts[32];
            strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
            memcpy(buf + 15, ts, 19);
            char id[24];
            int il = snprintf(id, sizeof id, "%zu", next);
            gen_us += now_us() - g0;
            fds_err err;
            fds_err_clear(&err);
            if (fds_sidx_writer_add(w, n, id, (size_t)il, (const uint8_t *)buf,
                                    len, &err)) {
                fprintf(stderr, "doc %zu: %s\n", next, err.reason);
                return 1;
            }
        }
        char path[256];
        snprintf(path, sizeof path, "%s/seg%d.sidx", dir, s);
        fds_err err;
        fds_err_clear(&err);
        if (fds_sidx_writer_write(w, path, &err) ||
            fds_sidx_open(path, &sidx[s], &err)) {
            fprintf(stderr, "%s\n", err.reason);
            return 1;
        }
        fds_sidx_writer_free(w);
        unlink(path); /* stays mapped */
        file_bytes += fds_sidx_file_bytes(sidx[s]);
        segs[s].sidx = sidx[s];
        live[s] = malloc((n + 7) / 8);
        memset(live[s], 0xff, (n + 7) / 8);
        for (uint32_t d = 0; d < n; d++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            if ((rng >> 33) % 100 == 0)
                live[s][d / 8] &= (uint8_t)~(1u << (d % 8));
        }
        segs_del[s].sidx = sidx[s];
        segs_del[s].live = live[s];
    }
    rmdir(dir);
    bx->file_bytes = file_bytes;
    bx->index_s = (now_us() - t0 - gen_us) / 1e6;
    double index_s = bx->index_s;
    printf("indexed %zu docs into %d segments in %.1f s (%.0f docs/s), "
           "%.1f MiB of index\n", ndocs, nseg, index_s, (double)ndocs / index_s,
           (double)file_bytes / 1048576.0);
    free(buf);
    return 0;
}

/* Write s as a JSON string literal to f (escaped by fds_json_escape). */
static void put_json_string(FILE *f, const char *s)
{
    size_t n = strlen(s);
    char *esc = malloc(FDS_JSON_ESCAPE_BOUND(n));
    if (!esc)
        return;
    fwrite(esc, 1, fds_json_escape(s, n, esc, FDS_JSON_ESCAPE_BOUND(n)), f);
    free(esc);
}

/* Run case c `runs` times (after 5 warm-up runs), print its line and
 * append its JSON object and Markdown row.  Returns 0 or 1 (error said). */
static int run_case(size_t c, const bench_index *bx, int nseg, int runs,
                    double *lat, FILE *js, FILE *md)
{
    fds_search_request *r;
    fds_err err;
    fds_err_clear(&err);
    if (fds_search_parse(cases[c].body, strlen(cases[c].body), bx->m, 0, &r,
                         &err)) {
        fprintf(stderr, "%s: %s\n", cases[c].name, err.reason);
        return 1;
    }
    const fds_search_segment *sg = cases[c].deleted ? bx->segs_del : bx->segs;
    fds_search_result res;
    uint64_t idsum = 0;
    for (int i = -5; i < runs; i++) {
        double a = now_us();
        if (fds_search_execute(r, sg, (unsigned)nseg, &res, &err)) {
            fprintf(stderr, "%s: %s\n", cases[c].name, err.reason);
            return 1;
        }
        double b = now_us();
        if (i >= 0)
            lat[i] = b - a;
        for (size_t h = 0; h < res.nhits; h++)
            idsum += res.hits[h].doc * 31u + res.hits[h].seg;
        if (i < runs - 1)
            fds_search_result_free(&res);
    }
    qsort(lat, (size_t)runs, sizeof *lat, dcmp);
    double med = lat[runs / 2];
    double p99 = lat[(size_t)ceil(0.99 * runs) - 1];
    double frac = res.postings_total
                      ? 100.0 * (double)res.postings_scored /
                            (double)res.postings_total
                      : 0;
    printf("%-45s %8llu%s  median %8.1f us  p99 %8.1f us  scored %llu/%llu "
           "(%.3f%%)  ids %llx\n", cases[c].name,
           (unsigned long long)res.total, res.total_is_lower_bound ? "+" : " ",
           med, p99, (unsigned long long)res.postings_scored,
           (unsigned long long)res.postings_total, frac,
           (unsigned long long)idsum);
    fprintf(js, "%s{\"name\":", c ? "," : "");
    put_json_string(js, cases[c].name);
    fputs(",\"body\":", js);
    put_json_string(js, cases[c].body);
    fprintf(js, ",\"deleted_fraction\":%s,\"hits\":%llu,\"relation\":\"%s\","
                "\"latency_us\":{\"median\":%.1f,\"p99\":%.1f,\"min\":%.1f,"
                "\"max\":%.1f},\"postings_scored\":%llu,\"postings_total\":%llu,"
                "\"scored_fraction\":%.6f,\"id_checksum\":%llu}",
            cases[c].deleted ? "0.01" : "0", (unsigned long long)res.total,
            res.total_is_lower_bound ? "gte" : "eq", med, p99, lat[0],
            lat[runs - 1], (unsigned long long)res.postings_scored,
            (unsigned long long)res.postings_total, frac / 100.0,
            (unsigned long long)idsum);
    fprintf(md, "| %s | %llu (%s) | %.1f | %.1f | %llu | %llu | %.3f |\n",
            cases[c].name, (unsigned long long)res.total,
            res.total_is_lower_bound ? "gte" : "eq", med, p99,
            (unsigned long long)res.postings_scored,
            (unsigned long long)res.postings_total, frac);
    fds_search_result_free(&res);
    fds_search_request_free(r);
    return 0;
}

int main(int argc, char **argv)
{
    size_t ndocs = 1000000;
    int nseg = 4, runs = 200;
    const char *outdir = "results";
    int opt;
    while ((opt = getopt(argc, argv, "n:s:r:o:h")) != -1) {
        switch (opt) {
        case 'n': ndocs = (size_t)atol(optarg); break;
        case 's': nseg = atoi(optarg); break;
        case 'r': runs = atoi(optarg); break;
        case 'o': outdir = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-n DOCS] [-s SEGMENTS] [-r RUNS] "
                            "[-o DIR] SAMPLE.log\n", argv[0]);
            return 2;
        }
    }
    if (optind >= argc || nseg < 1 || nseg > 64 || runs < 1) {
        fprintf(stderr, "usage: %s [-n DOCS] [-s SEGMENTS] [-r RUNS] [-o DIR] "
                        "SAMPLE.log\n", argv[0]);
        return 2;
    }
    qt_docs sample;
    if (qt_load(argv[optind], &sample, 1000000) || sample.n == 0) {
        fprintf(stderr, "cannot read %s\n", argv[optind]);
        return 1;
    }
    bench_index bx;
    if (build_index(&sample, ndocs, nseg, &bx))
        return 1;
    double index_s = bx.index_s;
    uint64_t file_bytes = bx.file_bytes;

    /* ---- queries ---- */
    char path[512];
    mkdir(outdir, 0755);
    snprintf(path, sizeof path, "%s/query.json", outdir);
    FILE *js = fopen(path, "w");
    snprintf(path, sizeof path, "%s/query.md", outdir);
    FILE *md = fopen(path, "w");
    if (!js || !md) {
        fprintf(stderr, "cannot write under %s\n", outdir);
        return 1;
    }
    fprintf(js, "{\"bench\":\"query\",\"docs\":%zu,\"segments\":%d,\"runs\":%d,"
                "\"index_seconds\":%.2f,\"index_bytes\":%llu,\"cases\":[",
            ndocs, nseg, runs, index_s, (unsigned long long)file_bytes);
    fprintf(md, "# Query-phase benchmark\n\n%zu synthetic docs (resampled real "
                "nginx lines), %d segments, %d runs per case; latency of "
                "`fds_search_execute` only (no parse, no fetch, no render).\n\n"
                "| case | hits (relation) | median µs | p99 µs | postings scored "
                "| of postings | scored %% |\n|---|---|---|---|---|---|---|\n",
            ndocs, nseg, runs);
    double *lat = malloc((size_t)runs * sizeof *lat);
    for (size_t c = 0; c < NCASES; c++)
        if (run_case(c, &bx, nseg, runs, lat, js, md))
            return 1;
    fprintf(js, "]}\n");
    fclose(js);
    fclose(md);
    printf("wrote %s/query.json and %s/query.md\n", outdir, outdir);
    for (int s = 0; s < nseg; s++) {
        fds_sidx_close(bx.sidx[s]);
        free(bx.live[s]);
    }
    fds_mapping_free(bx.m);
    return 0;
}
