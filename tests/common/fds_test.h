/*
 * fds_test.h: the assertion helpers of every C unit test (libuv's TEST_IMPL
 * style).  A failed check prints file:line, the expression and the values,
 * counts the failure in fds_test_failures and goes on; the REQUIRE forms
 * also return from the (void) test function, for checks later lines depend
 * on.  RUN() names each test function's outcome; a test's main ends with
 * TEST_DONE() (or returns fds_test_failures != 0) so ctest sees the result.
 *
 * Header-only: include it in the one .c file of each test program.
 */
#ifndef FDS_TEST_H
#define FDS_TEST_H

#include <stdio.h>
#include <string.h>

static int fds_test_failures __attribute__((unused));

/* Count one failure and print "file:line: " plus a printf-style message. */
#define FDS_TEST_FAIL(...)                                                   \
    do {                                                                     \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                      \
        fprintf(stderr, __VA_ARGS__);                                        \
        fputc('\n', stderr);                                                 \
        fds_test_failures++;                                                 \
    } while (0)

#define ASSERT(c)                                                            \
    do {                                                                     \
        if (!(c))                                                            \
            FDS_TEST_FAIL("ASSERT(%s) failed", #c);                          \
    } while (0)

/* ASSERT with a printf-style explanation printed after the expression. */
#define ASSERTF(c, ...)                                                      \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "%s:%d: ASSERT(%s) failed: ", __FILE__,          \
                    __LINE__, #c);                                           \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            fds_test_failures++;                                             \
        }                                                                    \
    } while (0)

/* Signed integer equality (both sides converted to long long). */
#define ASSERT_EQ(a, b)                                                      \
    do {                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                  \
        if (a_ != b_)                                                        \
            FDS_TEST_FAIL("ASSERT_EQ(%s, %s) failed: %lld != %lld", #a, #b,  \
                          a_, b_);                                           \
    } while (0)

/* Unsigned integer equality (both sides converted to unsigned long long). */
#define ASSERT_EQ_U(a, b)                                                    \
    do {                                                                     \
        unsigned long long a_ = (a), b_ = (b);                               \
        if (a_ != b_)                                                        \
            FDS_TEST_FAIL("%s == %llu, expected %s == %llu", #a, a_, #b, b_); \
    } while (0)

/* NUL-terminated string equality; a NULL `a` fails. */
#define ASSERT_STR(a, b)                                                     \
    do {                                                                     \
        const char *a_ = (a), *b_ = (b);                                     \
        if (!a_ || strcmp(a_, b_))                                           \
            FDS_TEST_FAIL("got \"%s\", expected \"%s\"", a_ ? a_ : "(null)", \
                          b_);                                               \
    } while (0)

/* n bytes at a equal n bytes at b. */
#define ASSERT_MEM(a, b, n)                                                  \
    do {                                                                     \
        if (memcmp((a), (b), (n)) != 0)                                      \
            FDS_TEST_FAIL("ASSERT_MEM(%s, %s, %s) failed", #a, #b, #n);      \
    } while (0)

/* Like ASSERT / ASSERT_EQ, then return from the void test function. */
#define REQUIRE(c)                                                           \
    do {                                                                     \
        if (!(c)) {                                                          \
            FDS_TEST_FAIL("REQUIRE(%s) failed", #c);                         \
            return;                                                          \
        }                                                                    \
    } while (0)

#define REQUIRE_EQ(a, b)                                                     \
    do {                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                  \
        if (a_ != b_) {                                                      \
            FDS_TEST_FAIL("REQUIRE_EQ(%s, %s) failed: %lld != %lld", #a, #b, \
                          a_, b_);                                           \
            return;                                                          \
        }                                                                    \
    } while (0)

/* Run one test function and print whether it added failures. */
#define RUN(fn)                                                              \
    do {                                                                     \
        int before_ = fds_test_failures;                                     \
        fn();                                                                \
        fprintf(stderr, "%-40s %s\n", #fn,                                   \
                fds_test_failures == before_ ? "ok" : "FAILED");             \
    } while (0)

/* End main(): print the count and return 1 if anything failed, else print
 * "ok" and return 0. */
#define TEST_DONE()                                                          \
    do {                                                                     \
        if (fds_test_failures) {                                             \
            fprintf(stderr, "%d check(s) failed\n", fds_test_failures);      \
            return 1;                                                        \
        }                                                                    \
        printf("ok\n");                                                      \
        return 0;                                                            \
    } while (0)

#endif
