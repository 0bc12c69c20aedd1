/*
 * dsl_parse_int.h: what the files of the query DSL parser share.  Nothing
 * outside them includes it.
 *
 *   dsl_util.c         the shared helpers (errors, values as text, field
 *                      lookup, query nodes, tokens); they call no parser
 *   dsl_parse.c        the body: entry points, raw strings, the keys of a
 *                      search alone (query, track_total_hits, aggs, ...)
 *   dsl_hits.c         the keys that shape the hits (a search's and
 *                      top_hits'): from/size, explain, version, ...
 *   dsl_source.c       _source, stored_fields, docvalue_fields, fields
 *   dsl_sort.c         sort, search_after, the point-in-time tiebreaker
 *   dsl_url.c          the URL parameters of _search, q= among them
 *   dsl_highlight.c    highlight, into ast/highlight_tree.h
 *   dsl_parse_query.c  the query dispatch (`_name`, depth, clause count)
 *   dsl_parse_compound.c  bool, constant_score, dis_max, boosting
 *   dsl_parse_leaf.c   leaf queries: match, term, terms, range, exists, ids
 *   dsl_parse_multi.c  multi-term queries (prefix, wildcard, regexp, fuzzy)
 *   dsl_parse_phrase.c match_phrase and match_phrase_prefix
 *   dsl_parse_qs.c     query_string, simple_query_string and q=
 *   dsl_parse_mm.c     multi_match: the dis_max / bool of per-field match
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
#include "exec/search_int.h"

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
    const fds_search_limits *lim; /* the index's limits (never NULL) */
    unsigned lookups; /* terms lookups so far, at most FDS_TERMS_LOOKUP_MAX */
} fds__dsl_ctx;

/* Terms lookups per request: each fetches a document. */
#define FDS_TERMS_LOOKUP_MAX 64u

/* ---- helpers (dsl_util.c): they call no parser --------------------------- */

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
/* The single "field": value member of a leaf query body (boost and _name
 * skipped) into *fld.  0 or FDS_EPARSE. */
int fds__dsl_leaf_field(fds__dsl_ctx *c, const cJSON *body, const char *qname,
                        const cJSON **fld);
/* A text field mapped "index": false: true with the error filled. */
bool fds__dsl_not_searchable(fds__dsl_ctx *c, const fds_field_info *f);
/* The "boost" member of object o, 1 when absent. */
float fds__dsl_boost(const cJSON *o);
/* The tokens of text s[0..n) (the standard analyzer), each a malloc'd copy
 * t[i] of l[i] bytes; free with fds__dsl_toks_free (also after an error). */
typedef struct fds__dsl_toks {
    char **t;
    size_t *l;
    size_t n, cap;
} fds__dsl_toks;
/* 0 or FDS_ENOMEM. */
int fds__dsl_tokens(const char *s, size_t n, fds__dsl_toks *v);
void fds__dsl_toks_free(fds__dsl_toks *v);
/* s[0..n) lower-cased code point by code point, as the standard
 * analyzer normalizes a wildcard pattern for a text field
 * (Elasticsearch's StringFieldType.normalizeWildcardPattern); malloc'd,
 * *out_len bytes; NULL on ENOMEM. */
char *fds__dsl_lower(const char *s, size_t n, size_t *out_len);
/* cb(arg, path) for each mapped leaf field (text, keyword, numeric, date,
 * boolean) whose path matches glob `pat`, in type then mapping order (the
 * paths are the callee's only for the call); stops at cb's first non-zero
 * return, which it returns (or FDS_ENOMEM). */
int fds__dsl_fields_matching(fds__dsl_ctx *c, const char *pat,
                             int (*cb)(void *arg, const char *path), void *arg);

/* The bookkeeping of the dispatcher, for it and for the queries that build
 * their clauses themselves (multi_match, exists on a pattern): one more
 * query level, refused past FDS_MAX_NESTED_DEPTH (FDS_ETOOBIG, kind
 * FDS_KIND_INVALID_ARGUMENT; c->depth stays raised, as the parse fails);
 * the leaf clauses of q (Lucene's clause-count visitor: a bool counts
 * through its clauses); n more clauses counted for q, which is returned,
 * or freed and NULL past FDS_MAX_CLAUSE_COUNT (kind
 * FDS_KIND_TOO_MANY_CLAUSES). */
int fds__dsl_depth_enter(fds__dsl_ctx *c);
size_t fds__dsl_leaves(const fds_query *q);
fds_query *fds__dsl_count(fds__dsl_ctx *c, fds_query *q, size_t n);

/* ---- the dispatcher (dsl_parse_query.c) ---------------------------------- */

/* The query object `j` ({"<type>": body}); NULL on error.  Counts its leaf
 * clauses into c->clauses and refuses more than FDS_MAX_CLAUSE_COUNT (kind
 * FDS_KIND_TOO_MANY_CLAUSES) and deeper nesting than FDS_MAX_NESTED_DEPTH
 * (kind FDS_KIND_INVALID_ARGUMENT), in Elasticsearch's words. */
fds_query *fds__dsl_query(fds__dsl_ctx *c, const cJSON *j);

/* ---- compound queries (dsl_parse_compound.c); they parse their clauses
 * through fds__dsl_query ---------------------------------------------------- */

fds_query *fds__dsl_bool(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_constant_score(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_dis_max(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_boosting(fds__dsl_ctx *c, const cJSON *body);

/* ---- leaf queries (dsl_parse_leaf.c); `body` is the value under the query
 * name; NULL on error ------------------------------------------------------ */

fds_query *fds__dsl_match(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_term_q(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_terms(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_range(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_exists(fds__dsl_ctx *c, const cJSON *body);
fds_query *fds__dsl_ids(fds__dsl_ctx *c, const cJSON *body);

/* ---- dsl_parse_multi.c ---------------------------------------------------- */

/* A multi-term query of `kind` (FDS_PAT_*) with pattern v[0..n) on field
 * f (NULL or an object: match_none), for query `qname` (its messages):
 * refused on other than text and keyword fields, past
 * index.max_regex_length, or when the pattern does not compile.  A
 * wildcard on a text field is lower-cased first.  NULL on error. */
fds_query *fds__dsl_pattern_new(fds__dsl_ctx *c, const char *qname,
                                const fds_field_info *f, int kind,
                                const char *v, size_t n, bool ci,
                                unsigned flags, int max_states);
/* prefix, wildcard, regexp (`name` says which). */
fds_query *fds__dsl_pattern(fds__dsl_ctx *c, const char *name,
                            const cJSON *body);
fds_query *fds__dsl_fuzzy(fds__dsl_ctx *c, const cJSON *body);
/* Elasticsearch's fuzzy defaults into q (AUTO, prefix 0, 50 expansions,
 * transpositions). */
void fds__dsl_fuzzy_defaults(fds_query *q);
/* Fuzzy option `k` (fuzziness, prefix_length, max_expansions,
 * transpositions, rewrite; with a fuzzy_ prefix in match) = v into q:
 * 0, 1 when k is none of them, or an FDS_E* code (err filled). */
int fds__dsl_fuzzy_opt(fds__dsl_ctx *c, const char *k, const cJSON *v,
                       fds_query *q);
/* Every TERM of q (itself, or its must/should clauses) made a FUZZY with
 * the options of `opts`.  0 or FDS_EINVAL (a term too long). */
int fds__dsl_make_fuzzy(fds__dsl_ctx *c, fds_query *q, const fds_query *opts);
/* 0 for a text or keyword field, else Elasticsearch's refusal. */
int fds__dsl_fuzzy_field(fds__dsl_ctx *c, const fds_field_info *f);

/* ---- dsl_parse_phrase.c --------------------------------------------------- */

/* Options of a phrase (match_phrase, match_phrase_prefix and the queries
 * rewritten into them). */
typedef struct fds__phrase_opts {
    int slop;            /* Lucene's PhraseQuery slop, >= 0 */
    bool prefix;         /* match_phrase_prefix: the last term a prefix */
    int max_expansions;  /* prefix: terms the prefix expands to */
    bool zero_all;       /* zero_terms_query all (else none) */
    float boost;
} fds__phrase_opts;

/* The phrase query of text s[0..n) on text field f: match_none/match_all
 * (no token), a term (one), FDS_Q_PHRASE (several, or a prefix).  NULL
 * with c->err filled: out of memory, or a field indexed without positions
 * (query_shard_exception). */
fds_query *fds__dsl_phrase_new(fds__dsl_ctx *c, const fds_field_info *f,
                               const char *s, size_t n,
                               const fds__phrase_opts *o);
/* match_phrase (`prefix` false) and match_phrase_prefix. */
fds_query *fds__dsl_match_phrase(fds__dsl_ctx *c, const cJSON *body,
                                 bool prefix);

/* ---- dsl_parse_mm.c ------------------------------------------------------ */

/* multi_match: the dis_max (best_fields, phrase types) or bool should
 * (most_fields) of per-field match (match_phrase) queries. */
fds_query *fds__dsl_multi_match(fds__dsl_ctx *c, const cJSON *body);

/* ---- the search body (dsl_parse.c, dsl_hits.c, dsl_source.c, dsl_sort.c)
 * and its URL parameters (dsl_url.c); each fills err and returns 0 or an
 * FDS_E* code ---------------------------------------------------------------- */

/* "min_score": a finite number (or its text). */
int fds__dsl_min_score(fds_search_request *r, const cJSON *v, fds_err *err);
/* A search `timeout` as Elasticsearch's TimeValue reads it, -1 for none. */
int fds__dsl_timeout(fds_search_request *r, const char *v, fds_err *err);

/* One of the keys that shape the hits (from, size, sort, _source,
 * stored_fields, docvalue_fields, fields, highlight, explain,
 * track_scores, version, seq_no_primary_term, script_fields, rescore) into
 * r: 0, an FDS_E* code, or 1 when `it` is none of them. */
int fds__dsl_hits_key(fds__dsl_ctx *c, fds_search_request *r,
                      const cJSON *it);
/* from + size within r->max_window (index.max_result_window). */
int fds__dsl_window_check(const fds_search_request *r, fds_err *err);
/* A number (or its text) in [0, 2^31) for `name` into *out. */
int fds__dsl_nonneg(const cJSON *v, const char *name, uint32_t *out,
                    fds_err *err);

/* A string or an array of strings into a new list *out of *n (a list given
 * before replaced).  0, FDS_EPARSE (not strings, the old list kept),
 * FDS_ENOMEM.  fds__dsl_str_list_free frees one. */
int fds__dsl_str_list(const cJSON *v, char ***out, size_t *n);
void fds__dsl_str_list_free(char **l, size_t n);
/* `_source` (a boolean, patterns, or {includes, excludes}). */
int fds__dsl_source(fds_search_request *r, const cJSON *v, fds_err *err);
/* At most FDS_SOURCE_PATTERNS_MAX patterns of FDS_SOURCE_PATTERN_LEN_MAX
 * bytes (FDS_ETOOBIG). */
int fds__dsl_source_limits(const fds_search_request *r, fds_err *err);
/* stored_fields: a name or a list of names ("_none_", "_source"). */
int fds__dsl_stored_fields(fds_search_request *r, const cJSON *v,
                           fds_err *err);
/* stored_fields _none_ with an explicit `_source` is refused (FDS_EINVAL). */
int fds__dsl_stored_check(const fds_search_request *r, fds_err *err);
/* docvalue_fields (appended, at most index.max_docvalue_fields_search). */
int fds__dsl_docvalue(fds_search_request *r, const cJSON *v, fds_err *err);
/* fields (the fields API). */
int fds__dsl_fields(fds_search_request *r, const cJSON *v, fds_err *err);
/* Is `f` a date format fds__date_print can print (a named format, or a
 * pattern of y u M d H m s S X x Z with quoted text)? */
bool fds__dsl_date_format_ok(const char *f);
/* Elasticsearch's "Trying to retrieve too many <what>" of index.<setting>;
 * returns FDS_EINVAL. */
int fds__dsl_too_many(fds_err *err, const char *what, uint32_t max,
                      size_t got, const char *setting);

/* sort: a name, {name: order or options}, or an array of them. */
int fds__dsl_sort(fds__dsl_ctx *c, fds_search_request *r, const cJSON *v);
/* search_after: one scalar per sort key, kept as given. */
int fds__dsl_search_after(fds_search_request *r, const cJSON *it,
                          fds_err *err);
/* search_after read against the sort, once both are known. */
int fds__dsl_after_check(fds_search_request *r, fds_err *err);
/* The `_shard_doc` tiebreaker of a point in time (refused without one). */
int fds__dsl_pit_tiebreak(fds_search_request *r, fds_err *err);

/* ---- dsl_highlight.c ---------------------------------------------------------- */

struct fds_highlight;
/* The body's `highlight` object `j` into *out (replacing one there): its
 * fields resolved against the mapping, highlight_query parsed.  0 or an
 * FDS_E* code with c->err filled. */
int fds__dsl_highlight(fds__dsl_ctx *c, const cJSON *j,
                       struct fds_highlight **out);

/* ---- dsl_docvalues.c ---------------------------------------------------------- */

/* docvalue_fields entry (`fetch`: a `fields` entry) `name` (a field or a
 * pattern) with `fmt` (NULL: the mapping's) resolved into r->dv: a text
 * field is refused for docvalue_fields as Elasticsearch refuses it, an
 * unmapped one gives nothing, a pattern the matching fields with doc
 * values (any leaf field for `fields`); `unmapped` (include_unmapped)
 * adds an entry for the `_source` paths the mapping lacks.  0, FDS_EINVAL (err filled), FDS_ENOMEM. */
int fds__dv_resolve(fds_search_request *r, const char *name, const char *fmt,
                    bool fetch, bool unmapped, fds_err *err);

/* ---- dsl_parse_qs.c ------------------------------------------------------- */

/* Options of a Lucene query string (query_string / q=). */
typedef struct fds__qs_opts {
    const char *const *fields; /* default fields (NULL/0: `df` or every text field) */
    const float *boosts;       /* per field, NULL = 1 */
    size_t nfields;
    const char *df;            /* default_field; NULL or "" = every text field */
    bool and_op;               /* default_operator AND */
    bool lenient;              /* a value a field cannot take matches nothing */
    bool analyze_wildcard;     /* accepted; wildcard terms are normalized */
    bool simple;               /* simple_query_string syntax */
    const char *time_zone;     /* for ranges on date fields; NULL: UTC */
    int phrase_slop;           /* slop of a quoted phrase without ~N */
} fds__qs_opts;

/* Lucene query string `q` into a query (NULL on error, c->err filled). */
fds_query *fds__dsl_qs_parse(fds__dsl_ctx *c, const char *q,
                             const fds__qs_opts *o);
fds_query *fds__dsl_query_string(fds__dsl_ctx *c, const cJSON *body,
                                 bool simple);

/* ---- aggregations (aggs_parse.c) ------------------------------------------ */

struct fds_agg;
/* The body's `aggs` object `j` into *out (a FDS_AGG_ROOT tree, aggs.h);
 * *out must be NULL (both `aggs` and `aggregations`: an error).  0 or an
 * FDS_E* code with c->err filled. */
int fds__dsl_aggs(fds__dsl_ctx *c, const cJSON *j, struct fds_agg **out);

/* top_hits' defaults and bound: Elasticsearch's TopHitsAggregationBuilder
 * size 3 and index.max_inner_result_window 100 (from + size). */
#define FDS_TOP_HITS_SIZE 3
#define FDS_MAX_INNER_RESULT_WINDOW 100u
/* The top_hits body `j` of aggregation `name` as a request (dsl_hits.c:
 * from, size, sort, _source, docvalue_fields, fields, highlight, explain,
 * version, seq_no_primary_term, stored_fields, track_scores: as a search
 * body takes them; its query is the search's); *out freed with
 * fds_search_request_free.  0 or an FDS_E* code with c->err filled:
 * FDS_EPARSE for an unknown key, FDS_EINVAL for script_fields (not
 * supported) and from + size past FDS_MAX_INNER_RESULT_WINDOW. */
int fds__dsl_top_hits(fds__dsl_ctx *c, const cJSON *j, const char *name,
                      struct fds_search_request **out);

#endif
