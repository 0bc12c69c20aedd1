/*
 * topk_cpu: CPU time and counted work of the query phase for a file of
 * search bodies over one segment index file, without a server.
 *
 * Usage: topk_cpu [-r REPS] [-c KIB] [-t] [-v] [-x] MAPPING.json SEGMENT.tim BODIES
 *   MAPPING.json  the index mapping ({"properties": ...}, as the catalogue
 *                 keeps it: sqlite3 DIR/catalog.sqlite 'select json from
 *                 mappings')
 *   SEGMENT.tim   a segment's index file (DIR/indices/UUID/seg_N.tim),
 *                 searched alone, without deletions
 *   BODIES        one search body per line (bench/scale's class files)
 *   -r REPS       runs per body (default 5); the least CPU time is kept
 *   -c KIB        before each run, write KIB kibibytes of scratch memory,
 *                 as a server's fetch phase and HTTP work between two
 *                 searches do, so that the search starts with cold caches
 *                 (default 0: each run finds what the last left cached)
 *   -t            let a MaxScore pass run as two slices (default: never,
 *                 so CPU time is one thread's work, which is what QPS per
 *                 server core under many clients pays)
 *   -v            one line per body: CPU us, postings scored, hits, hash
 *   -x            also run every body with "track_total_hits": true (every
 *                 doc scored term at a time, no MaxScore) and check that
 *                 the page is the same docs with the same score bits
 *
 * Why it exists: the machine the scale benchmarks run on is shared, and
 * wall-clock service times move with other load; this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) and the postings the search scored
 * (fds_search_result.postings_scored) do not.  Prints per body class the
 * sum, p50, p99 and max of the per-body CPU time in microseconds, the
 * postings scored, and a hash of every page (doc ids and score bits), so
 * that two builds can be shown to return the same pages to the last bit.
 */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "query.h"
#include "ast/search_request.h"

static double cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The whole of file `path`, NUL-terminated, malloc'd; NULL on error. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t k;
    while (b && (k = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 2) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    if (b) {
        b[n] = 0;
        *len = n;
    }
    return b;
}

/* FNV-1a over n bytes into h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

/* Does body[0..len) (a JSON object) with "track_total_hits": true return
 * another page than `res` (docs or score bits)?  Errors count as a
 * difference. */
static bool exhaustive_differs(const char *body, size_t len,
                               const fds_mapping *m,
                               const fds_search_segment *seg,
                               const fds_search_result *res)
{
    static const char key[] = "{\"track_total_hits\":true,";
    char *b = malloc(len + sizeof key);
    if (!b)
        return true;
    memcpy(b, key, sizeof key - 1);
    memcpy(b + sizeof key - 1, body + 1, len - 1);
    size_t bl = len - 1 + sizeof key - 1;
    fds_err err;
    fds_err_clear(&err);
    fds_search_request *r = NULL;
    fds_search_result ex;
    bool differs = true;
    if (!fds_search_parse(b, bl, m, 0, &r, &err) &&
        !fds_search_execute(r, seg, 1, &ex, &err)) {
        differs = ex.nhits != res->nhits;
        for (size_t i = 0; !differs && i < ex.nhits; i++)
            differs = ex.hits[i].doc != res->hits[i].doc ||
                      memcmp(&ex.hits[i].score, &res->hits[i].score,
                             sizeof(float)) != 0;
        fds_search_result_free(&ex);
    }
    fds_search_request_free(r);
    free(b);
    return differs;
}

int main(int argc, char **argv)
{
    /* A search's large scratch (a whole url's norm bounds: hundreds of
     * KiB) is malloc'd and freed per search.  In this one-threaded process
     * glibc would hand it back to the kernel at each free (the top of the
     * main heap trimmed, or a chunk past the mmap threshold unmapped) and
     * fault it in again as zeroed pages at the next search (body 22 of
     * the 1M pool: 565 us, 167 us without), where the server's thread
     * arenas keep it (0.7 minor faults per url-n search over the scale
     * pool, /proc/PID/stat).  Keep it here too. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    int reps = 5, opt;
    size_t evict = 0; /* bytes written before each run */
    bool slices = false, verbose = false, check = false;
    while ((opt = getopt(argc, argv, "r:c:tvxh")) != -1) {
        switch (opt) {
        case 'r': reps = atoi(optarg); break;
        case 'c': evict = (size_t)strtoull(optarg, NULL, 10) << 10; break;
        case 't': slices = true; break;
        case 'v': verbose = true; break;
        case 'x': check = true; break;
        default:
            fprintf(stderr, "usage: %s [-r REPS] [-c KIB] [-t] [-v] [-x] MAPPING.json "
                            "SEGMENT.tim BODIES.ndjson\n", argv[0]);
            return 2;
        }
    }
    if (argc - optind != 3 || reps < 1) {
        fprintf(stderr, "usage: %s [-r REPS] [-c KIB] [-t] [-v] [-x] MAPPING.json "
                        "SEGMENT.tim BODIES.ndjson\n", argv[0]);
        return 2;
    }
    if (!slices)
        fds_search_set_slice_min(UINT64_MAX);
    size_t mlen, blen;
    char *mj = slurp(argv[optind], &mlen), *bodies = slurp(argv[optind + 2], &blen);
    fds_err err;
    fds_err_clear(&err);
    fds_mapping *m = fds_mapping_create();
    fds_sidx *sx = NULL;
    if (!mj || !bodies || !m || fds_mapping_merge_json(m, mj, mlen, &err) ||
        fds_sidx_open(argv[optind + 1], &sx, &err)) {
        fprintf(stderr, "cannot load inputs: %s\n", err.reason);
        return 1;
    }
    fds_search_segment seg = {.sidx = sx, .live = NULL};
    unsigned char *scratch = evict ? malloc(evict) : NULL;
    if (evict && !scratch) {
        fprintf(stderr, "cannot allocate %zu bytes of scratch\n", evict);
        return 1;
    }
    size_t cap = 1024, nb = 0;
    double *cpu = malloc(cap * sizeof *cpu);
    uint64_t scored = 0, hash = 1469598103934665603ull, mismatches = 0;
    double sum = 0;
    for (char *line = bodies, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (!len)
            continue;
        fds_search_request *r;
        if (fds_search_parse(line, len, m, 0, &r, &err)) {
            fprintf(stderr, "body %zu: %s\n", nb, err.reason);
            return 1;
        }
        double best = INFINITY;
        fds_search_result res;
        for (int k = 0; k < reps; k++) {
            if (scratch) /* a different byte each time: stores do happen */
                memset(scratch, (int)(nb + (size_t)k) & 0xff, evict);
            double a = cpu_us();
            if (fds_search_execute(r, &seg, 1, &res, &err)) {
                fprintf(stderr, "body %zu: %s\n", nb, err.reason);
                return 1;
            }
            double t = cpu_us() - a;
            if (t < best)
                best = t;
            if (k < reps - 1)
                fds_search_result_free(&res);
        }
        uint64_t h = fnv(1469598103934665603ull, &res.total, sizeof res.total);
        for (size_t i = 0; i < res.nhits; i++) {
            uint32_t bits;
            memcpy(&bits, &res.hits[i].score, sizeof bits);
            h = fnv(h, &res.hits[i].doc, sizeof res.hits[i].doc);
            h = fnv(h, &bits, sizeof bits);
        }
        hash = fnv(hash, &h, sizeof h);
        if (check && exhaustive_differs(line, len, m, &seg, &res)) {
            printf("body %zu: the page differs from the exhaustive one\n", nb);
            mismatches++;
        }
        scored += res.postings_scored;
        if (verbose)
            printf("%zu %.0f %llu %llu %016llx\n", nb, best,
                   (unsigned long long)res.postings_scored,
                   (unsigned long long)res.total, (unsigned long long)h);
        fds_search_result_free(&res);
        fds_search_request_free(r);
        if (nb == cap) {
            double *n2 = realloc(cpu, (cap *= 2) * sizeof *cpu);
            if (!n2)
                return 1;
            cpu = n2;
        }
        cpu[nb++] = best;
        sum += best;
    }
    if (!nb)
        return 1;
    qsort(cpu, nb, sizeof *cpu, dcmp);
    if (check)
        printf("exhaustive check: %llu of %zu pages differ\n",
               (unsigned long long)mismatches, nb);
    printf("bodies %zu  cpu_ms sum %.1f  p50 %.0f us  p99 %.0f us  max %.0f us"
           "  scored %llu  hash %016llx\n", nb, sum / 1e3, cpu[nb / 2],
           cpu[(size_t)ceil(0.99 * (double)nb) - 1], cpu[nb - 1],
           (unsigned long long)scored, (unsigned long long)hash);
    free(cpu);
    free(scratch);
    free(mj);
    free(bodies);
    fds_sidx_close(sx);
    fds_mapping_free(m);
    return 0;
}
