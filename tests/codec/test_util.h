/*
 * test_util.h: tiny ASSERT helpers for the codec tests (libuv TEST_IMPL
 * style): a failed check prints file:line and the expression, counts the
 * failure, and the test's main returns non-zero so ctest reports it.
 */
#ifndef FDS_TEST_UTIL_H
#define FDS_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

static int test_failures;

#define ASSERT(x)                                                        \
    do {                                                                 \
        if (!(x)) {                                                      \
            fprintf(stderr, "%s:%d: ASSERT(%s) failed\n", __FILE__,      \
                    __LINE__, #x);                                       \
            test_failures++;                                             \
        }                                                                \
    } while (0)

#define ASSERT_EQ(a, b)                                                  \
    do {                                                                 \
        long long a_ = (long long)(a), b_ = (long long)(b);              \
        if (a_ != b_) {                                                  \
            fprintf(stderr, "%s:%d: ASSERT_EQ(%s, %s) failed: %lld != %lld\n", \
                    __FILE__, __LINE__, #a, #b, a_, b_);                 \
            test_failures++;                                             \
        }                                                                \
    } while (0)

#define ASSERT_MEM(a, b, n)                                              \
    do {                                                                 \
        if (memcmp((a), (b), (n)) != 0) {                                \
            fprintf(stderr, "%s:%d: ASSERT_MEM(%s, %s, %s) failed\n",    \
                    __FILE__, __LINE__, #a, #b, #n);                     \
            test_failures++;                                             \
        }                                                                \
    } while (0)

#define RUN(fn)                                                          \
    do {                                                                 \
        int before_ = test_failures;                                     \
        fn();                                                            \
        fprintf(stderr, "%-40s %s\n", #fn,                               \
                test_failures == before_ ? "ok" : "FAILED");             \
    } while (0)

#endif
