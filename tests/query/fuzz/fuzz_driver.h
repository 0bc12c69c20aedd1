/*
 * fuzz_driver.h: a plain mutation driver for fuzz targets, so they run under
 * ctest without libFuzzer: it feeds the seeds, then random mutations of them
 * (bit flips, byte sets, deletions, insertions, duplicated chunks, splices)
 * to LLVMFuzzerTestOneInput for a given number of seconds.  A crash or a
 * sanitizer report fails the test.  Built with -DFDS_LIBFUZZER (clang
 * -fsanitize=fuzzer) the same target runs under libFuzzer instead.
 */
#ifndef FDS_FUZZ_DRIVER_H
#define FDS_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FDS_LIBFUZZER
typedef struct fz_seed {
    const uint8_t *p;
    size_t n;
} fz_seed;

static uint64_t fz_state = 88172645463325252ull;
static uint64_t fz_rand(void)
{
    fz_state ^= fz_state << 13;
    fz_state ^= fz_state >> 7;
    fz_state ^= fz_state << 17;
    return fz_state;
}

#define FZ_MAX 65536

static size_t fz_mutate(uint8_t *buf, size_t n, const fz_seed *seeds,
                        size_t nseeds)
{
    int rounds = 1 + (int)(fz_rand() % 4);
    for (int r = 0; r < rounds; r++) {
        switch (fz_rand() % 7) {
        case 0: /* bit flip */
            if (n)
                buf[fz_rand() % n] ^= (uint8_t)(1u << (fz_rand() % 8));
            break;
        case 1: { /* interesting byte */
            static const uint8_t v[] = {0, 1, 0x7f, 0x80, 0xff, '"', '{', '}',
                                        '[', ']', ',', ':', '\\', '0', '-'};
            if (n)
                buf[fz_rand() % n] = v[fz_rand() % sizeof v];
            break;
        }
        case 2: { /* delete a range */
            if (!n)
                break;
            size_t a = fz_rand() % n, l = 1 + fz_rand() % 16;
            if (a + l > n)
                l = n - a;
            memmove(buf + a, buf + a + l, n - a - l);
            n -= l;
            break;
        }
        case 3: { /* insert random bytes */
            size_t l = 1 + fz_rand() % 8, a = n ? fz_rand() % (n + 1) : 0;
            if (n + l > FZ_MAX)
                break;
            memmove(buf + a + l, buf + a, n - a);
            for (size_t i = 0; i < l; i++)
                buf[a + i] = (uint8_t)fz_rand();
            n += l;
            break;
        }
        case 4: { /* duplicate a chunk */
            if (!n)
                break;
            size_t a = fz_rand() % n, l = 1 + fz_rand() % 32;
            if (a + l > n)
                l = n - a;
            if (n + l > FZ_MAX)
                break;
            size_t at = fz_rand() % (n + 1);
            uint8_t tmp[32];
            memcpy(tmp, buf + a, l);
            memmove(buf + at + l, buf + at, n - at);
            memcpy(buf + at, tmp, l);
            n += l;
            break;
        }
        case 5: { /* splice from another seed */
            const fz_seed *s = &seeds[fz_rand() % nseeds];
            if (!s->n || !n)
                break;
            size_t a = fz_rand() % s->n, l = 1 + fz_rand() % 64;
            if (a + l > s->n)
                l = s->n - a;
            size_t at = fz_rand() % n;
            if (at + l > FZ_MAX)
                break;
            memcpy(buf + at, s->p + a, l);
            if (at + l > n)
                n = at + l;
            break;
        }
        default: /* truncate */
            if (n)
                n = fz_rand() % n;
            break;
        }
    }
    return n;
}

/* Run seeds then mutations for `seconds`; returns the number of runs. */
static unsigned long fz_run(const fz_seed *seeds, size_t nseeds, double seconds)
{
    static uint8_t buf[FZ_MAX];
    unsigned long runs = 0;
    for (size_t i = 0; i < nseeds; i++, runs++)
        LLVMFuzzerTestOneInput(seeds[i].p, seeds[i].n);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        const fz_seed *s = &seeds[fz_rand() % nseeds];
        size_t n = s->n > FZ_MAX ? FZ_MAX : s->n;
        memcpy(buf, s->p, n);
        n = fz_mutate(buf, n, seeds, nseeds);
        /* feed a copy of exactly n bytes so overreads are caught */
        uint8_t *in = malloc(n ? n : 1);
        memcpy(in, buf, n);
        LLVMFuzzerTestOneInput(in, n);
        free(in);
        runs++;
        if ((runs & 63) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) +
                    (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
                break;
        }
    }
    return runs;
}
#endif

#endif
