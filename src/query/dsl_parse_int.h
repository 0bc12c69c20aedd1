/*
 * dsl_parse_int.h: what the files of the query DSL parser share.  Nothing
 * outside them includes it.
 *
 *   dsl_parse.c        the body keys (_source, sort, search_after,
 *                      track_total_hits, from/size), URL parameters and q=
 *   dsl_parse_query.c  shared helpers, bool and the query dispatch
 *   dsl_parse_leaf.c   leaf queries: match, term, terms, range, exists, ids
 *
 * Every function that fails fills the context's fds_err (first error wins)
 * and returns NULL or a negative FDS_E* code.
 */
#ifndef FDS_DSL_PARSE_INT_H
#define FDS_DSL_PARSE_INT_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "query_int.h"
#include "search_int.h"

/* A string value of the body holding a NUL byte, which cJSON cuts short:
 * its node and its whole unescaped bytes (malloc'd). */
typedef struct fds__dsl_raw {
    const cJSON *node;
    char *s;
    size_t n;
} fds__dsl_raw;

/* Parse state of one request: the mapping fields resolve against, the error
 * detail, and the current query nesting depth. */
typedef struct fds__dsl_ctx {
    const fds_mapping *m;
    fds_err *err;
    int depth;      /* query objects open, at most FDS_MAX_NESTED_DEPTH */
    size_t clauses; /* leaf clauses so far, at most FDS_MAX_CLAUSE_COUNT */
    const fds__dsl_raw *raw; /* strings cJSON cut at a NUL */
    size_t nraw;
    int64_t now_ms; /* the request's "now" in date math (0: not read yet) */
} fds__dsl_ctx;

/* ---- helpers (dsl_parse_query.c) ----------------------------------------- */

/* Fill err with kind FDS_KIND_QUERY_PARSE; returns FDS_EPARSE. */
int fds__dsl_err(fds_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* malloc'd NUL-terminated copy of s[0..n); NULL on ENOMEM. */
char *fds__dsl_dupn(const char *s, size_t n);
/* Elasticsearch's token name of a JSON value ("START_OBJECT", ...). */
const char *fds__dsl_jtype(const cJSON *j);
/* Scalar JSON value as text ("200", "abc", "true") into s and n (buf, of cap
 * bytes holds numbers and booleans; a string is its whole bytes, NULs
 * included, from c->raw); false if not scalar. */
bool fds__dsl_scalar(const fds__dsl_ctx *c, const cJSON *v, char *buf,
                     size_t cap, const char **s, size_t *n);
/* Elasticsearch's refusal to sort or aggregate on text field `name`
 * (illegal_argument_exception "Text fields are not optimised ...").
 * Returns FDS_EINVAL. */
int fds__dsl_no_fielddata(fds__dsl_ctx *c, const char *name);
/* The mapped field `name` (filled into *buf), or NULL when unmapped. */
const fds_field_info *fds__dsl_field(fds__dsl_ctx *c, const char *name,
                                     fds_field_info *buf);
/* A query node of `type` on `field` (may be NULL); NULL on ENOMEM. */
fds_query *fds__dsl_qnew(int type, const char *field);
/* Append k to a clause list.  0 or FDS_ENOMEM (k not taken). */
int fds__dsl_push(fds_query ***list, size_t *n, fds_query *k);
/* minimum_should_match `v` against n optional clauses (Elasticsearch's
 * integer / negative / percentage forms) into *out (>= 0).  0 or
 * FDS_EPARSE. */
int fds__dsl_msm(fds__dsl_ctx *c, const cJSON *v, int n, int *out);
/* The query object `j` ({"<type>": body}); NULL on error.  Counts its leaf
 * clauses into c->clauses and refuses more than FDS_MAX_CLAUSE_COUNT (kind
 * FDS_KIND_TOO_MANY_CLAUSES) and deeper nesting than FDS_MAX_NESTED_DEPTH
 * (kind FDS_KIND_INVALID_ARGUMENT), in Elasticsearch's words. */
fds_query *fds__dsl_query(fds__dsl_ctx *c, const cJSON *j);

/* ---- leaf queries (dsl_parse_leaf.c); `body` is the value under the query
 * name; NULL on error ------------------------------------------------------ */

/* The "boost" member of object o, 1 when absent. */
float fds__dsl_boost(const cJSON *o);
fds_query *fds__dsl_match(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_term_q(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_terms(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_range(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_exists(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_ids(fds__dsl_ctx *c, const cJSON *body);

/* ---- aggregations (aggs_parse.c) ------------------------------------------ */

struct fds_agg;
/* The body's `aggs` object `j` into *out (a FDS_AGG_ROOT tree, aggs.h);
 * *out must be NULL (both `aggs` and `aggregations`: an error).  0 or an
 * FDS_E* code with c->err filled. */
int fds__dsl_aggs(fds__dsl_ctx *c, const cJSON *j, struct fds_agg **out);

#endif
