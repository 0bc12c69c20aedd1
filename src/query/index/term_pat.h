/*
 * term_pat.h: term patterns of the multi-term queries -- prefix, wildcard
 * and regexp -- compiled once at parse time and matched against the terms
 * of a segment's dictionary (src/query only).
 *
 * Every kind compiles to one small program run by a Pike VM (Thompson's
 * construction simulated breadth first, Russ Cox, "Regular Expression
 * Matching: the Virtual Machine Approach", 2009) over the Unicode code
 * points of a term: the cost of one match is O(term length x program
 * size), never exponential, and the program size is bounded
 * (FDS_REGEX_MAX_STATES, Elasticsearch's max_determinized_states default,
 * for regexps and wildcards as Lucene bounds both) so a pattern such as
 * "(a{1,100}){1,100}" is refused instead of run.  Still, a query visits
 * every term of the dictionary it cannot narrow by a literal lead, at
 * O(length x states) each; the search's `timeout` stops the expansion.
 *
 * Syntax (Lucene's, as Elasticsearch documents it):
 *   wildcard  `*` any run of code points, `?` one code point, `\c` a
 *             literal c; everything else literal
 *   regexp    Lucene's RegExp: `.` `?` `+` `*` `{n}` `{n,}` `{n,m}` `|`
 *             `( )` `[...]` `[^...]` `"literal"` `\c`, always anchored at
 *             both ends; with the optional operators of `flags`: `#` (the
 *             empty language, EMPTY), `@` (any string, ANYSTRING).
 *             COMPLEMENT `~`, INTERSECTION `&` and INTERVAL `<n-m>` are
 *             refused when enabled and used (not supported); disabled,
 *             their characters are literals, as in Lucene.
 *   prefix    the bytes of the value, then anything
 * case_insensitive compares code points after Unicode lower-casing
 * (utf8proc_tolower, as Lucene's Character.toLowerCase).
 */
#ifndef FDS_TERM_PAT_H
#define FDS_TERM_PAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fds_error.h"

enum { FDS_PAT_PREFIX, FDS_PAT_WILDCARD, FDS_PAT_REGEXP };

/* Regexp flags (Elasticsearch's RegexpFlag). */
#define FDS_RE_INTERSECTION 0x01u
#define FDS_RE_COMPLEMENT 0x02u
#define FDS_RE_EMPTY 0x04u
#define FDS_RE_ANYSTRING 0x08u
#define FDS_RE_INTERVAL 0x20u
#define FDS_RE_ALL 0xffffu

/* Most program instructions a pattern compiles to: Elasticsearch's
 * `max_determinized_states` default (Operations.DEFAULT_DETERMINIZE_WORK_LIMIT
 * is 10000 in Lucene 9).  A regexp may ask for less. */
#define FDS_REGEX_MAX_STATES 10000

typedef struct fds_term_pat fds_term_pat;

/*
 * Compile pattern p[0..n) of `kind` (FDS_PAT_*).  `flags` (FDS_RE_*) and
 * `max_states` (<= 0: FDS_REGEX_MAX_STATES) apply to FDS_PAT_REGEXP.  On
 * success *out is a new pattern (free with fds__term_pat_free) and 0 is
 * returned.  Errors (err filled): FDS_EPARSE, kind FDS_KIND_QUERY_SHARD, for
 * a malformed regexp or invalid UTF-8 (Lucene's IllegalArgumentException
 * wording where known) or an operator that is not supported; FDS_ETOOBIG,
 * kind FDS_KIND_QUERY_SHARD, past max_states; FDS_ENOMEM.
 */
int fds__term_pat_new(int kind, const char *p, size_t n, bool ci,
                      unsigned flags, int max_states, fds_term_pat **out,
                      fds_err *err);
void fds__term_pat_free(fds_term_pat *p); /* NULL is a no-op */

/* Does term s[0..n) match? */
bool fds__term_pat_match(const fds_term_pat *p, const char *s, size_t n);

/* The bytes every matching term starts with (*len of them; 0 when the
 * pattern is case-insensitive or starts with an operator): a sorted term
 * dictionary needs to visit only the ordinals that start so. */
const char *fds__term_pat_lead(const fds_term_pat *p, size_t *len);

/* The code points of UTF-8 s[0..n) into *out (malloc'd, *m of them).
 * 0, FDS_EPARSE (not valid UTF-8), FDS_ENOMEM. */
int fds__code_points(const char *s, size_t n, int32_t **out, size_t *m);

#endif
