/*
 * test_lg.h: the small ASSERT helpers of the loadgen unit tests (libuv's
 * TEST_IMPL style: a failed check prints file:line and the expression, and
 * the test exits non-zero).
 */
#ifndef TEST_LG_H
#define TEST_LG_H

#include <stdio.h>
#include <stdlib.h>

static int test_failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
            test_failures++;                                                           \
        }                                                                              \
    } while (0)

#define CHECKF(cond, ...)                                                              \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                              \
            fputc('\n', stderr);                                                       \
            test_failures++;                                                           \
        }                                                                              \
    } while (0)

#define TEST_DONE()                                                                    \
    do {                                                                               \
        if (test_failures) {                                                           \
            fprintf(stderr, "%d check(s) failed\n", test_failures);                    \
            return 1;                                                                  \
        }                                                                              \
        printf("ok\n");                                                                \
        return 0;                                                                      \
    } while (0)

#endif
