/*
 * search_request.h: the parsed form of a search and the parser that builds
 * it (public interface of src/query's query DSL, src/query/dsl_parse.c).
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
} fds_qtype;

typedef struct fds_query {
    int type;         /* fds_qtype */
    float boost;      /* 1.0 by default */
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
    /* for explanations: "match" text it came from, NULL otherwise */
} fds_query;

enum { FDS_SORT_SCORE, FDS_SORT_DOC, FDS_SORT_FIELD };

typedef struct fds_sort_spec {
    int kind;          /* FDS_SORT_* */
    char *field;
    size_t field_len;
    int ftype;
    bool desc;
    bool missing_first;
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

struct fds_search_request {
    fds_query *query;
    uint32_t from, size;
    int64_t track_total;     /* threshold; INT64_MAX = true; -1 = false */
    bool explain;
    bool count_only;         /* _count */
    bool track_scores;
    fds_sort_spec sort[FDS_SORT_VALUES_MAX];
    unsigned nsort;          /* 0 = by _score */
    fds_after_val after[FDS_SORT_VALUES_MAX];
    unsigned nafter;         /* 0 = no search_after */
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
    /* q= URL query: its default field (df; "" = every text field) and
     * operator (default_operator=AND: every word must match) */
    char q_df[FDS_FIELD_PATH_MAX];
    bool q_and;
    const fds_mapping *mapping;
    uint32_t max_window;     /* index.max_result_window: from + size bound */
    /* `aggs` / `aggregations` (aggs.h): a FDS_AGG_ROOT node, NULL = none */
    struct fds_agg *aggs;
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

#endif
