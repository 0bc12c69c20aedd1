/*
 * fds_numfmt.h: float rendering for search responses (scores, max_score).
 *
 * Elasticsearch prints scores as Java floats: the shortest decimal that
 * reads back as the same float, with a decimal point ("1.0", "0.2876821").
 * The obvious implementation -- snprintf("%.{p}g") for p = 1..9 until
 * strtof() gives the value back -- costs several microseconds per score
 * (glibc's printf_fp and strtof work in multi-precision arithmetic), which
 * made rendering as expensive as searching.  fds_float_format() produces the
 * same bytes with exact integer arithmetic (128-bit) for the range scores
 * live in, and falls back to the snprintf loop elsewhere.
 */
#ifndef FDS_NUMFMT_H
#define FDS_NUMFMT_H

#include <stddef.h>

/* Bytes fds_float_format() may write, terminating NUL included. */
#define FDS_FLOAT_STR_MAX 32u

/*
 * Write `f` as the shortest "%.{p}g" (p = 1..9) that strtof() reads back as
 * `f`, with ".0" appended when the result has no '.', 'e' or 'n' ("1.0",
 * "1e+10", "nan", "inf"), NUL-terminated, into `out` (FDS_FLOAT_STR_MAX
 * bytes).  Returns the length written (without the NUL).  Exact: same bytes
 * as the snprintf/strtof loop (tests/query/test_units.c compares them on
 * millions of values); fast path for normal floats of magnitude
 * [1e-5, 1e9).
 */
size_t fds_float_format(float f, char *out);

/* The reference implementation (snprintf/strtof loop), for tests. */
size_t fds_float_format_ref(float f, char *out);

#endif
