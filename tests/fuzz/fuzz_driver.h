/*
 * fuzz_driver.h: the one driver of every fuzz target.  A target is a .c
 * file that defines LLVMFuzzerTestOneInput() and includes this header once.
 *
 *   - Fuzzing build (-DFDS_FUZZ=ON, clang, FDS_LIBFUZZER defined): nothing
 *     but the declarations below; libFuzzer supplies main() and calls the
 *     target's LLVMFuzzerInitialize() if it has one.
 *   - Plain build (ctest): this header defines main(), a corpus-replay and
 *     mutation driver.  It feeds every seed once, then random mutations of
 *     them (bit flips, interesting bytes, random bytes, deleted, inserted and
 *     duplicated runs, splices from other seeds, truncations, interesting
 *     32-bit header values) for SECONDS, with a fixed seed, each input in a
 *     buffer of exactly its size so that an AddressSanitizer build catches
 *     any over-read.  A crash, an abort or a sanitizer report fails the test.
 *
 * Command line of the plain build (options and plain arguments in any
 * order):
 *   TARGET [--seconds S] [--seed N] [--write-seeds DIR] [S [N]] [PATH...]
 * The first argument that is a plain number is SECONDS (default 3), the
 * second the seed N of the mutation generator (default fixed).  A PATH
 * that is a folder gives every file in it as a seed (a libFuzzer corpus);
 * a file gives itself, or one seed per line when the target defines
 * FDS_FUZZ_SEED_LINES.  --write-seeds DIR writes the target's built-in
 * seeds as DIR/seed-NNN<FDS_FUZZ_SEED_EXT> and exits (tests/fuzz/
 * make_corpus.py makes the committed corpus with it).
 *
 * What a target may define before including this header:
 *   FDS_FUZZ_MAX_INPUT     largest input in bytes (default 65536)
 *   FDS_FUZZ_BYTES         the bytes worth setting, comma-separated
 *                          (default: JSON's punctuation and edge values)
 *   FDS_FUZZ_MUTATIONS_MAX edits per mutated input, at most (default 4)
 *   FDS_FUZZ_SEED_LINES    seed files are read one seed per line
 *   FDS_FUZZ_SEED_EXT      file name ending of --write-seeds (default "")
 * and which hooks it may define (all optional):
 *   LLVMFuzzerInitialize   one-time set-up, as under libFuzzer
 *   fds_fuzz_builtin_seeds seeds made in code (fds_fuzz_seed_add)
 *   fds_fuzz_seed_check    a property every seed must have as it is; a
 *                          non-zero return fails the run
 *   fds_fuzz_finish        a property of the whole run, checked at its end
 *                          (e.g. that both outcomes were seen); non-zero
 *                          fails it
 */
#ifndef FDS_FUZZ_DRIVER_H
#define FDS_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#ifndef FDS_LIBFUZZER

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef FDS_FUZZ_MAX_INPUT
#define FDS_FUZZ_MAX_INPUT 65536
#endif
#ifndef FDS_FUZZ_BYTES
#define FDS_FUZZ_BYTES 0, 1, 0x7f, 0x80, 0xff, '"', '{', '}', '[', ']', ',', \
                       ':', '\\', '0', '-'
#endif
#ifndef FDS_FUZZ_MUTATIONS_MAX
#define FDS_FUZZ_MUTATIONS_MAX 4
#endif
#ifndef FDS_FUZZ_SEED_EXT
#define FDS_FUZZ_SEED_EXT ""
#endif
#define FDS_FUZZ_SECONDS_DEFAULT 3.0
#define FDS_FUZZ_RNG_DEFAULT 88172645463325252ull /* Marsaglia's xorshift */
#define FDS_FUZZ_CLOCK_EVERY 64       /* inputs between looks at the clock */
#define FDS_FUZZ_HEADER_BYTES 40      /* where 32-bit header values go */

/* The seeds of a run: owned copies, grown as they are added. */
typedef struct fds_fuzz_seeds {
    uint8_t **p;
    size_t *n;
    size_t count, cap;
} fds_fuzz_seeds;

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int fds_fuzz_builtin_seeds(fds_fuzz_seeds *s) __attribute__((weak));
int fds_fuzz_seed_check(const uint8_t *p, size_t n) __attribute__((weak));
int fds_fuzz_finish(void) __attribute__((weak));

/* Add a copy of p[0..n) (cut at FDS_FUZZ_MAX_INPUT); 0, or -1 out of
 * memory. */
static int fds_fuzz_seed_add(fds_fuzz_seeds *s, const uint8_t *p, size_t n)
{
    if (n > FDS_FUZZ_MAX_INPUT)
        n = FDS_FUZZ_MAX_INPUT;
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        uint8_t **np = realloc(s->p, cap * sizeof *np);
        if (!np)
            return -1;
        s->p = np;
        size_t *nn = realloc(s->n, cap * sizeof *nn);
        if (!nn)
            return -1;
        s->n = nn;
        s->cap = cap;
    }
    uint8_t *c = malloc(n ? n : 1);
    if (!c)
        return -1;
    if (n)
        memcpy(c, p, n);
    s->p[s->count] = c;
    s->n[s->count++] = n;
    return 0;
}

static uint64_t fz_state = FDS_FUZZ_RNG_DEFAULT;

static uint64_t fz_rand(void)
{
    fz_state ^= fz_state << 13;
    fz_state ^= fz_state >> 7;
    fz_state ^= fz_state << 17;
    return fz_state;
}

static size_t fz_below(size_t n) { return n ? (size_t)(fz_rand() % n) : 0; }

/* Open a gap of l bytes at `at` in buf[0..n); false when it would not fit. */
static int fz_gap(uint8_t *buf, size_t *n, size_t at, size_t l)
{
    if (*n + l > FDS_FUZZ_MAX_INPUT)
        return 0;
    memmove(buf + at + l, buf + at, *n - at);
    *n += l;
    return 1;
}

/* One random edit of buf[0..*n) (capacity FDS_FUZZ_MAX_INPUT). */
static void fz_edit(uint8_t *buf, size_t *n, const fds_fuzz_seeds *s)
{
    static const uint8_t bytes[] = {FDS_FUZZ_BYTES};
    static const uint32_t words[] = {0, 1, 0x7fffffff, 0xffffffff, 0x80, 16384};
    size_t len = *n, at = fz_below(len);
    switch (fz_rand() % 11) {
    case 0: /* flip a bit */
        if (len)
            buf[at] ^= (uint8_t)(1u << (fz_rand() % 8));
        break;
    case 1: /* set an interesting byte */
        if (len)
            buf[at] = bytes[fz_below(sizeof bytes)];
        break;
    case 2: /* set a random byte */
        if (len)
            buf[at] = (uint8_t)fz_rand();
        break;
    case 3: { /* delete a run */
        size_t l = 1 + fz_below(16);
        if (!len)
            break;
        if (at + l > len)
            l = len - at;
        memmove(buf + at, buf + at + l, len - at - l);
        *n = len - l;
        break;
    }
    case 4: { /* insert random bytes */
        size_t l = 1 + fz_below(16), to = fz_below(len + 1);
        if (fz_gap(buf, n, to, l))
            for (size_t i = 0; i < l; i++)
                buf[to + i] = (uint8_t)fz_rand();
        break;
    }
    case 5: { /* insert an interesting byte */
        size_t to = fz_below(len + 1);
        if (fz_gap(buf, n, to, 1))
            buf[to] = bytes[fz_below(sizeof bytes)];
        break;
    }
    case 6: { /* duplicate a run */
        uint8_t tmp[32];
        size_t l = 1 + fz_below(sizeof tmp), to = fz_below(len + 1);
        if (!len)
            break;
        if (at + l > len)
            l = len - at;
        memcpy(tmp, buf + at, l);
        if (fz_gap(buf, n, to, l))
            memcpy(buf + to, tmp, l);
        break;
    }
    case 7: { /* overwrite with a run of another seed */
        size_t o = fz_below(s->count), l = 1 + fz_below(64);
        size_t from = fz_below(s->n[o]);
        if (!s->n[o] || !len)
            break;
        if (from + l > s->n[o])
            l = s->n[o] - from;
        if (at + l > FDS_FUZZ_MAX_INPUT)
            break;
        memcpy(buf + at, s->p[o] + from, l);
        if (at + l > len)
            *n = at + l;
        break;
    }
    case 8: { /* head of this input, tail of another seed */
        size_t o = fz_below(s->count), to = fz_below(len + 1);
        size_t from = fz_below(s->n[o] + 1), l = s->n[o] - from;
        if (to + l > FDS_FUZZ_MAX_INPUT)
            break;
        memcpy(buf + to, s->p[o] + from, l);
        *n = to + l;
        break;
    }
    case 9: /* truncate */
        *n = fz_below(len + 1);
        break;
    default: /* an interesting 32-bit value where a header would be */
        if (len >= FDS_FUZZ_HEADER_BYTES) {
            uint32_t v = words[fz_below(sizeof words / sizeof words[0])];
            memcpy(buf + 4 * fz_below(FDS_FUZZ_HEADER_BYTES / 4), &v, 4);
        }
        break;
    }
}

/* Feed a copy of exactly n bytes, so that over-reads are caught. */
static void fz_feed(const uint8_t *p, size_t n)
{
    uint8_t *in = malloc(n ? n : 1);
    if (!in)
        abort();
    if (n)
        memcpy(in, p, n);
    LLVMFuzzerTestOneInput(in, n);
    free(in);
}

/* Seeds of one file: the whole file, or one per line. */
static int fz_read_file(fds_fuzz_seeds *s, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    int rc = 0;
#ifdef FDS_FUZZ_SEED_LINES
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while (!rc && (got = getline(&line, &cap, f)) >= 0) {
        size_t len = (size_t)got;
        if (len && line[len - 1] == '\n')
            len--;
        if (len <= FDS_FUZZ_MAX_INPUT)
            rc = fds_fuzz_seed_add(s, (const uint8_t *)line, len);
    }
    free(line);
#else
    uint8_t *buf = malloc(FDS_FUZZ_MAX_INPUT);
    size_t len = buf ? fread(buf, 1, FDS_FUZZ_MAX_INPUT, f) : 0;
    rc = buf ? fds_fuzz_seed_add(s, buf, len) : -1;
    free(buf);
#endif
    fclose(f);
    return rc;
}

/* Seeds of a path: every file of a folder (names starting with '.'
 * skipped), or the file itself. */
static int fz_read_path(fds_fuzz_seeds *s, const char *path)
{
    struct stat st;
    if (stat(path, &st))
        return -1;
    if (!S_ISDIR(st.st_mode))
        return fz_read_file(s, path);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d))) {
        char p[4096];
        if (de->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", path, de->d_name);
        rc = fz_read_file(s, p);
    }
    closedir(d);
    return rc;
}

static int fz_write_seeds(const fds_fuzz_seeds *s, const char *dir)
{
    for (size_t i = 0; i < s->count; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/seed-%03zu%s", dir, i, FDS_FUZZ_SEED_EXT);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(s->p[i], 1, s->n[i], f) != s->n[i] || fclose(f))
            return -1;
    }
    return 0;
}

static double fz_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Every seed as it is, then mutations until `seconds` have passed;
 * returns the number of inputs run. */
static unsigned long fz_run(const fds_fuzz_seeds *s, double seconds)
{
    static uint8_t buf[FDS_FUZZ_MAX_INPUT];
    unsigned long runs = 0;
    for (size_t i = 0; i < s->count; i++, runs++)
        fz_feed(s->p[i], s->n[i]);
    double t0 = fz_now();
    while (fz_now() - t0 < seconds) {
        for (int k = 0; k < FDS_FUZZ_CLOCK_EVERY; k++, runs++) {
            size_t i = fz_below(s->count), n = s->n[i];
            memcpy(buf, s->p[i], n);
            int edits = 1 + (int)fz_below(FDS_FUZZ_MUTATIONS_MAX);
            for (int e = 0; e < edits; e++)
                fz_edit(buf, &n, s);
            fz_feed(buf, n);
        }
    }
    return runs;
}

static int fz_is_number(const char *a)
{
    char *end;
    if (!*a)
        return 0;
    (void)strtod(a, &end);
    return !*end;
}

int main(int argc, char **argv)
{
    double seconds = FDS_FUZZ_SECONDS_DEFAULT;
    const char *write_dir = NULL;
    int numbers = 0;
    fds_fuzz_seeds s = {0};
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    if (fds_fuzz_builtin_seeds && fds_fuzz_builtin_seeds(&s)) {
        fprintf(stderr, "%s: cannot make the built-in seeds\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(a, "--seed") && i + 1 < argc)
            fz_state = strtoull(argv[++i], NULL, 0) | 1;
        else if (!strcmp(a, "--write-seeds") && i + 1 < argc)
            write_dir = argv[++i];
        else if (!strcmp(a, "--help")) {
            printf("usage: %s [--seconds S] [--seed N] [--write-seeds DIR] "
                   "[S [N]] [SEED_FILE_OR_DIR...]\n", argv[0]);
            return 0;
        } else if (fz_is_number(a) && numbers < 2) {
            if (numbers++ == 0)
                seconds = atof(a);
            else
                fz_state = strtoull(a, NULL, 0) | 1;
        } else if (fz_read_path(&s, a)) {
            fprintf(stderr, "%s: cannot read %s\n", argv[0], a);
            return 2;
        }
    }
    if (write_dir)
        return fz_write_seeds(&s, write_dir) ? 2 : 0;
    if (!s.count) {
        fprintf(stderr, "%s: no seeds\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; fds_fuzz_seed_check && i < s.count; i++)
        if (fds_fuzz_seed_check(s.p[i], s.n[i])) {
            fprintf(stderr, "%s: seed %zu fails its check as it is\n", argv[0], i);
            return 1;
        }
    unsigned long runs = fz_run(&s, seconds);
    printf("%s: %lu inputs from %zu seeds\n", argv[0], runs, s.count);
    for (size_t i = 0; i < s.count; i++)
        free(s.p[i]);
    free(s.p);
    free(s.n);
    return fds_fuzz_finish && fds_fuzz_finish() ? 1 : 0;
}

#endif /* FDS_LIBFUZZER */
#endif /* FDS_FUZZ_DRIVER_H */
