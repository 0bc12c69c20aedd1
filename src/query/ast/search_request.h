/*
 * search_request.h: the parsed form of a search and the parser that builds
 * it (public interface of src/query's query DSL, src/query/dsl/dsl_parse.c).
 *
 * fds_search_parse() builds a request from the Elasticsearch query DSL with
 * the index mapping at hand, so field types are resolved and query text is
 * analyzed at parse time; fds_search_execute() (query.h) only walks it, and
 * src/http's response writer (src/http/search_render.h) reads its paging,
 * sort and `_source` members.
 */
#ifndef FDS_SEARCH_REQUEST_H
#define FDS_SEARCH_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fds_error.h"
#include "query.h"

typedef enum fds_qtype {
    FDS_Q_MATCH_ALL,
    FDS_Q_MATCH_NONE,
    FDS_Q_TERM,      /* one term of a text/keyword field, BM25-scored */
    FDS_Q_TERMS,     /* any of several exact terms, constant score */
    FDS_Q_RANGE,     /* numeric/date/keyword range over the column, constant */
    FDS_Q_BOOL,
    FDS_Q_EXISTS,
    FDS_Q_IDS,
    FDS_Q_PATTERN,   /* prefix/wildcard/regexp over the term dictionary, constant */
    FDS_Q_CONST,     /* constant_score: filter[0] matches, scores boost */
    FDS_Q_DISMAX,    /* dis_max of should[]: max + tie * (sum - max) */
    FDS_Q_BOOSTING,  /* must[0] scored, times `tie` where should[0] matches */
    FDS_Q_FUZZY,     /* `term` within fz_edits edits: the top fz_max_exp terms
                        of the dictionaries, BM25 with blended doc freqs */
    FDS_Q_PHRASE,    /* vals[] at consecutive positions of a text field,
                        within `slop`; with phrase_prefix the last is a
                        prefix expanded to fz_max_exp terms (search_phrase.c) */
} fds_qtype;

struct fds_term_pat; /* term_pat.h */

typedef struct fds_query {
    int type;         /* fds_qtype */
    float boost;      /* 1.0 by default */
    char *name;       /* `_name` (named queries: a hit lists the names of
                         the ones it matches in matched_queries), or NULL */
    char *field;      /* TERM, TERMS, RANGE, EXISTS */
    size_t field_len;
    int ftype;        /* fds_ftype of the field at parse time */
    /* TERM */
    char *term;
    size_t term_len;
    /* TERMS, IDS */
    char **vals;
    size_t *val_lens;
    size_t nvals;
    /* RANGE (inclusive bounds after conversion) */
    int64_t lo_l, hi_l;        /* LONG/DATE/BOOLEAN */
    double lo_d, hi_d;         /* DOUBLE */
    bool lo_d_incl, hi_d_incl;
    char *lo_s, *hi_s;         /* KEYWORD (NULL = open) */
    size_t lo_s_len, hi_s_len;
    bool lo_s_incl, hi_s_incl;
    /* BOOL */
    struct fds_query **must, **should, **filter, **must_not;
    size_t nmust, nshould, nfilter, nmust_not;
    int msm;          /* minimum_should_match; -1 = default */
    /* BOOL of a text `match`'s terms: the text they were analysed from
     * (owned; NULL otherwise), which docs holding it as their whole value
     * score alike (the exact-value seed of exec/seed.c) */
    char *text;
    size_t text_len;
    /* PATTERN: the compiled pattern (owned) and its kind (FDS_PAT_*) */
    struct fds_term_pat *pat;
    int pkind;
    /* DISMAX: tie_breaker; BOOSTING: negative_boost */
    float tie;
    /* FUZZY: edits (-1: AUTO, 0 below fz_lo code points, 1 below fz_hi,
     * else 2), prefix_length, max_expansions, transpositions */
    int fz_edits, fz_lo, fz_hi, fz_prefix, fz_max_exp;
    bool fz_transp;
    /* PHRASE: the phrase has npos positions; vals[i] is the term at
     * position i for i < npos - 1, and vals[npos - 1 .. nvals) are the
     * alternatives at the last one (one, unless a prefix was expanded);
     * slop (Lucene's PhraseQuery slop, >= 0); phrase_prefix: vals[npos -
     * 1] is a prefix still to expand (match_phrase_prefix) */
    size_t npos;
    int slop;
    bool phrase_prefix;
    /* for explanations: "match" text it came from, NULL otherwise */
} fds_query;

/* FDS_SORT_SHARD_DOC is Elasticsearch's `_shard_doc` (ShardDocSortField):
 * the request's shard_index in the high 32 bits and the doc's `_doc` value
 * (its position in the shard's view) in the low ones, unique within a point
 * in time. */
enum { FDS_SORT_SCORE, FDS_SORT_DOC, FDS_SORT_FIELD, FDS_SORT_SHARD_DOC };

typedef struct fds_sort_spec {
    int kind;          /* FDS_SORT_* */
    char *field;
    size_t field_len;
    int ftype;
    bool desc;
    bool missing_first;
    /* a date key's `format` (malloc'd, NULL: epoch milliseconds): the
     * hit's sort value is printed in it, as Elasticsearch's FieldSortBuilder
     * formats it with the field's DocValueFormat */
    char *format;
} fds_sort_spec;

/* search_after value for one sort key */
typedef struct fds_after_val {
    bool is_null;
    double num;
    int64_t lnum;      /* exact, for a long/date/boolean/_doc sort key */
    char *str;
    size_t str_len;
} fds_after_val;

#define FDS_TRACK_TOTAL_NONE (-1) /* track_total_hits: false */

enum {
    FDS_STORED_FIELDS_DEFAULT, /* not given: _id and _source */
    FDS_STORED_FIELDS_LIST,    /* a list: _id; _source only if asked */
    FDS_STORED_FIELDS_NONE,    /* "_none_": neither _id nor _source */
};

/* ---- limits of one request: past one, parsing fails naming it (invalid argument) */

/* Leaf clauses of a query (each term of an analysed match counts):
 * Elasticsearch's indices.query.bool.max_clause_count default. */
#define FDS_MAX_CLAUSE_COUNT 4096
/* Query objects nested in one another: Elasticsearch's
 * indices.query.bool.max_nested_depth default. */
#define FDS_MAX_NESTED_DEPTH 30
/* Values of one terms or ids query: Elasticsearch's index.max_terms_count
 * default. */
#define FDS_MAX_TERMS_COUNT 65536
/* `_source` includes plus excludes, and bytes of one pattern (ours: each
 * pattern is matched against every field of every hit). */
#define FDS_SOURCE_PATTERNS_MAX 64
#define FDS_SOURCE_PATTERN_LEN_MAX 256

/* The per-index limits a search is checked against (Elasticsearch's index
 * settings of the same names; fds_search_limits_default gives their
 * defaults).  Past one, parsing fails with Elasticsearch's message. */
typedef struct fds_search_limits {
    uint32_t max_result_window;   /* index.max_result_window: from + size */
    uint32_t max_docvalue_fields; /* index.max_docvalue_fields_search (100) */
    uint32_t max_script_fields;   /* index.max_script_fields (32) */
    uint32_t max_terms_count;     /* index.max_terms_count: terms query (65536) */
    uint32_t max_regex_length;    /* index.max_regex_length: regexp (1000) */
    uint32_t max_rescore_window;  /* index.max_rescore_window (10000) */
    /* A terms query's lookup form {"index", "id", "path", "routing"}
     * (NULL: refused, 400): *out a new cJSON array of the values at the
     * dotted `path` of document `id` of `index` (routing NULL: the id's
     * own shard) -- strings, numbers as strings of their digits (so that
     * no digit is lost), booleans; empty when there is no such document.
     * 0, or an error in err (the index missing: FDS_ENOTFOUND, kind
     * INDEX_NOT_FOUND).  The caller (src/http) supplies it. */
    int (*lookup)(void *arg, const char *index, const char *id,
                  const char *routing, const char *path, struct cJSON **out,
                  fds_err *err);
    void *lookup_arg;
    /* The name of the index the request is parsed for (NULL: none known),
     * which `term` and `terms` on the `_index` metadata field compare
     * their values with: all of its documents, or none. */
    const char *index_name;
} fds_search_limits;

/* Elasticsearch's index.max_result_window, index.max_docvalue_fields_search,
 * index.max_script_fields, index.max_regex_length and
 * index.max_rescore_window defaults (IndexSettings): the store's index
 * settings start from the same names. */
#define FDS_MAX_RESULT_WINDOW 10000
#define FDS_MAX_DOCVALUE_FIELDS 100
#define FDS_MAX_SCRIPT_FIELDS 32
#define FDS_MAX_REGEX_LENGTH 1000
#define FDS_MAX_RESCORE_WINDOW 10000

/* Elasticsearch's defaults of every limit. */
void fds_search_limits_default(fds_search_limits *l);

/* A docvalue_fields field, resolved against the mapping at parse time
 * (src/query/fetch/docvalues.c): a pattern gives one per matching field. */
typedef struct fds_dv_field {
    char *name;        /* as the hit's `fields` names it */
    char *src;         /* the `_source` path of its values (a multi-field's
                          parent) */
    int type;          /* fds_ftype: KEYWORD, LONG, DOUBLE, DATE, BOOLEAN */
    bool float32;      /* float / half_float: values at float precision */
    int ignore_above;  /* keyword: longer values have none; 0 = no bound */
    char *format;      /* date format or DecimalFormat pattern; NULL: the
                          mapping's (dates) or none (numbers) */
    const struct fds_date_format *dfmt; /* the mapping's, to read dates */
    bool fetch;        /* from `fields`: _source order, text fields too */
    bool unmapped;     /* `fields` with include_unmapped: `name` is a pattern
                          over the _source paths the mapping lacks */
} fds_dv_field;

/* One value of a hit's docvalue field, rendered: text[0..len) (malloc'd),
 * a JSON string when `quoted`, else a bare JSON number or boolean. */
typedef struct fds_dv_value {
    char *text;
    size_t len;
    bool quoted;
} fds_dv_value;

struct fds_search_request {
    fds_query *query;
    uint32_t from, size;
    int64_t track_total;     /* threshold; INT64_MAX = true; -1 = false */
    bool explain;
    bool count_only;         /* _count */
    bool track_scores;
    /* include_named_queries_score (URL): matched_queries maps each name to
     * the score of its query on the hit */
    bool named_scores;
    fds_sort_spec sort[FDS_SORT_VALUES_MAX];
    unsigned nsort;          /* 0 = by _score */
    fds_after_val after[FDS_SORT_VALUES_MAX];
    unsigned nafter;         /* 0 = no search_after */
    /* search_after's tie-break (a scroll's cursor, as Lucene's searchAfter
     * takes a FieldDoc with its doc): with after_tie, a hit whose sort keys
     * (or score) equal search_after's is after it when its (seg, doc) is
     * greater than (after_seg, after_doc); without, equal keys are not
     * after.  Segment numbers are those of the segments given to execute. */
    bool after_tie;
    uint32_t after_seg, after_doc;
    uint32_t shard_index;    /* the high half of `_shard_doc` values */
    bool pit;                /* the body has a `pit` (a point in time) */
    /* _source filtering */
    bool source;             /* false: "_source": false */
    char **includes, **excludes;
    size_t nincludes, nexcludes;
    bool source_url;         /* a URL parameter replaced the body's `_source` */
    bool source_asked;       /* `_source` given (body or URL), or "_source" among stored_fields */
    /* stored_fields (Elasticsearch's StoredFieldsContext): no mapping field
     * is stored apart from _source, so a list asks for the metadata and
     * drops `_source` unless it is asked for; "_none_" drops `_id` too */
    int stored_fields;       /* FDS_STORED_FIELDS_* */
    bool version;            /* hits carry `_version` */
    bool seq_no_primary_term;/* hits carry `_seq_no` and `_primary_term` */
    bool total_as_int;       /* rest_total_hits_as_int: hits.total is a number */
    /* `timeout` (Elasticsearch's search timeout): past it the query phase
     * stops and answers what it has, with timed_out; 0 = none */
    int64_t timeout_ns;
    /* `terminate_after` (Elasticsearch's SearchSourceBuilder): the docs a
     * run of the segments (one shard) collects at most, in doc order --
     * counted, aggregated and offered to the page -- before it stops; 0 =
     * all */
    uint64_t terminate_after;
    /* q= URL query: its default field (df; "" = every text field) and
     * operator (default_operator=AND: every word must match) */
    char q_df[FDS_FIELD_PATH_MAX];
    bool q_and;
    bool q_lenient;          /* lenient=true: a word a field cannot take matches nothing */
    const fds_mapping *mapping;
    uint32_t max_window;     /* index.max_result_window: from + size bound */
    fds_search_limits lim;   /* the index's limits (max_window among them) */
    /* docvalue_fields (body or URL): rendered into each hit's `fields` */
    fds_dv_field *dv;
    size_t ndv;
    size_t ndv_asked;        /* docvalue_fields entries asked for (the limit counts them) */
    size_t nfields_asked;    /* `fields` entries asked for */
    /* min_score: hits scoring below it are dropped (NAN: none) */
    float min_score;
    /* `aggs` / `aggregations` (aggs.h): a FDS_AGG_ROOT node, NULL = none */
    struct fds_agg *aggs;
    /* `highlight` (highlight.h), NULL = none */
    struct fds_highlight *hl;
};

/*
 * Parse a search body (`len` bytes, JSON; an empty body means match_all)
 * against mapping `m` (field types decide how `match` analyses its text).
 * Keys: query, from, size, _source, sort, track_total_hits, search_after,
 * explain, track_scores, aggs / aggregations (aggs.h; their errors are
 * those of aggs_parse.c: FDS_EPARSE kind FDS_KIND_QUERY_PARSE or
 * FDS_KIND_CONTENT_PARSE, FDS_EINVAL kind FDS_KIND_INVALID_ARGUMENT).  `for_count` != 0 parses a `_count` body (query
 * only).  On success *out is a new request (free with
 * fds_search_request_free) and 0 is returned; `m` must outlive it.  Errors
 * (err filled): FDS_EPARSE, kind FDS_KIND_QUERY_PARSE, naming the
 * offending part (malformed JSON, unknown key, unknown query type, bad
 * value); FDS_EPARSE, kind FDS_KIND_CONTENT_PARSE, for a duplicate key or
 * invalid UTF-8 anywhere in the body (fds_json_check_body); FDS_EINVAL
 * with kind FDS_KIND_INVALID_ARGUMENT (from + size > index.max_result_window,
 * 10000 here; sort on a text field; search_after length; a non-finite
 * numeric bound), FDS_KIND_PARSE (a date that does not parse),
 * FDS_KIND_NUMBER_FORMAT (a number that does not parse) or
 * FDS_KIND_QUERY_SHARD (sort on an unmapped field); FDS_ETOOBIG past a
 * limit above (kind FDS_KIND_TOO_MANY_CLAUSES for the clause count, else
 * FDS_KIND_INVALID_ARGUMENT); FDS_ENOMEM.
 */
int fds_search_parse(const char *body, size_t len, const fds_mapping *m,
                     int for_count, fds_search_request **out, fds_err *err);

/* fds_search_parse() for an index whose index.max_result_window is
 * `max_window` (from + size above it is the FDS_EINVAL "Result window is
 * too large" error, also for later size/from URL parameters);
 * fds_search_parse uses Elasticsearch's default, 10000. */
int fds_search_parse_window(const char *body, size_t len,
                            const fds_mapping *m, uint32_t max_window,
                            int for_count, fds_search_request **out,
                            fds_err *err);

/* fds_search_parse() against every limit of `lim` (NULL: the defaults);
 * errors as fds_search_parse, each limit's in Elasticsearch's words
 * (FDS_EINVAL / FDS_ETOOBIG, kind FDS_KIND_INVALID_ARGUMENT). */
int fds_search_parse_limits(const char *body, size_t len,
                            const fds_mapping *m, const fds_search_limits *lim,
                            int for_count, fds_search_request **out,
                            fds_err *err);

/*
 * Apply one URL parameter of `_search`: "size", "from", "q" (Lucene syntax
 * subset: space-separated `field:value` or bare words matched against every
 * text field), "track_total_hits" ("true", "false" or a number),
 * "explain", "df" and "default_operator" (for a later "q"), "version", "seq_no_primary_term", "rest_total_hits_as_int",
 * "track_scores" (booleans: "true", "false", empty = true), "timeout"
 * (a time value such as "30s", -1 for none), "_source"
 * ("true", "false" or includes), "_source_includes", "_source_excludes",
 * "stored_fields" (comma lists) and "sort" ("field:order,..." appended to
 * the body's sort keys).  Unknown keys are ignored (the HTTP layer decides which
 * parameters it rejects).  A refused size/from leaves the request as it
 * was.  Returns 0, FDS_EPARSE / FDS_EINVAL (err filled, kinds as for
 * fds_search_parse), FDS_ENOMEM.
 */
int fds_search_apply_param(fds_search_request *req, const char *key,
                           const char *value, fds_err *err);

/*
 * Filtered aliases (dsl_filter.c).  fds_query_check parses `filter` (a
 * query DSL object as JSON text, `len` bytes) against mapping `m` and
 * drops it: 0, or fds_search_parse's errors for it as a query.
 * fds_search_request_add_filter ANDs it into `req` as a non-scoring
 * clause (bool {must: req's query, filter: it}), parsed against
 * req->mapping; same errors, `req` unchanged on error.
 */
int fds_query_check(const char *filter, size_t len, const fds_mapping *m,
                    fds_err *err);
int fds_search_request_add_filter(fds_search_request *req, const char *filter,
                                  size_t len, fds_err *err);
/* Multiply every score of `req` by `factor` (its query's boost; no query
 * becomes a boosted match_all).  0 or FDS_ENOMEM. */
int fds_search_request_boost(fds_search_request *req, float factor,
                             fds_err *err);

/*
 * The values of docvalue field k (< req->ndv) of a hit whose `_source` is
 * src[0..len), in doc-value order and format (docvalues.c) into *out (n
 * of them, NULL when none; free with fds_dv_values_free).  0 or
 * FDS_ENOMEM.
 */
int fds_docvalues_of(const fds_search_request *req, size_t k,
                     const uint8_t *src, size_t len, fds_dv_value **out,
                     size_t *n);
void fds_dv_values_free(fds_dv_value *v, size_t n); /* NULL is a no-op */

/* The values of one unmapped `_source` path (an include_unmapped entry's). */
typedef struct fds_dv_group {
    char *name;
    fds_dv_value *v;
    size_t n;
} fds_dv_group;

/* Reusable memory of fds_docvalues_put (the values of one doc at a time):
 * NULL to start, kept across the hits of a response, freed with
 * fds_dv_scratch_free. */
typedef struct fds_dv_scratch fds_dv_scratch;
struct fds_strbuf;

/*
 * A hit's `fields` member, `,"fields":{...}`, from its docvalue_fields and
 * `fields` entries (req->dv) written into b, from one scan of its
 * `_source` src[0..len) (docvalues.c): each entry's values in doc-value
 * order and format (fds_docvalues_of), in request order; an
 * include_unmapped entry gives every scalar `_source` path its pattern
 * matches that the mapping does not map, values as written, in `_source`
 * order, unless an earlier such entry gave it; a field asked for both ways
 * shows its `fields` values; fields without values are left out, and so is
 * the member when none has one.  *scratch is allocated on first use.
 * 0 or FDS_ENOMEM (b may hold part of the member).
 */
int fds_docvalues_put(const fds_search_request *req, const uint8_t *src,
                      size_t len, fds_dv_scratch **scratch,
                      struct fds_strbuf *b);
void fds_dv_scratch_free(fds_dv_scratch *s); /* NULL is a no-op */

#endif
