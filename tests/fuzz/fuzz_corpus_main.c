/*
 * fuzz_corpus_main.c: the plain driver of the tests/fuzz targets under
 * ctest (no libFuzzer): every file of the seed folders, then random
 * mutations of them (tests/query/fuzz/fuzz_driver.h), for a number of
 * seconds with a fixed seed.  A crash or sanitizer report fails the test.
 *   fuzz_<target> SECONDS DIR...
 */
#include <dirent.h>

#include "fuzz_driver.h"

/* Defined by the targets that need one-time state. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

#define SEEDS_MAX 256

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s SECONDS DIR...\n", argv[0]);
        return 2;
    }
    double secs = atof(argv[1]);
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    static fz_seed seeds[SEEDS_MAX];
    size_t n = 0;
    for (int a = 2; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) {
            fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[a]);
            return 2;
        }
        struct dirent *de;
        while ((de = readdir(d)) && n < SEEDS_MAX) {
            char path[4096];
            if (de->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s", argv[a], de->d_name);
            FILE *f = fopen(path, "rb");
            if (!f)
                continue;
            uint8_t *buf = malloc(FZ_MAX);
            size_t len = buf ? fread(buf, 1, FZ_MAX, f) : 0;
            fclose(f);
            seeds[n++] = (fz_seed){buf, len};
        }
        closedir(d);
    }
    if (!n) {
        fprintf(stderr, "%s: no seeds\n", argv[0]);
        return 2;
    }
    unsigned long runs = fz_run(seeds, n, secs);
    printf("%s: %lu inputs from %zu seeds\n", argv[0], runs, n);
    for (size_t i = 0; i < n; i++)
        free((void *)seeds[i].p);
    return 0;
}
