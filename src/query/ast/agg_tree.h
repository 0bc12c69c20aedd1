/*
 * agg_tree.h: the parsed form of a search body's `aggs` (the aggregation
 * tree hung off fds_search_request.aggs): types, parameters, orders,
 * ranges, composite sources.  The DSL builds it (src/query/dsl/aggs_*.c),
 * the aggregations run it (src/query/aggs), ast.c frees it.
 */
#ifndef FDS_AGG_TREE_H
#define FDS_AGG_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time/datemath.h"
#include "fds_error.h"
#include "query.h"

/* Elasticsearch's search.max_buckets default: buckets of one response. */
#define FDS_AGG_MAX_BUCKETS 65536u
/* Aggregations nested in one another (ours; Elasticsearch bounds them only
 * by the body's nesting). */
#define FDS_AGG_DEPTH_MAX 16
/* Keys of a terms order list, ranges of a range, filters of filters,
 * include/exclude values (ours). */
#define FDS_AGG_ORDER_MAX 4
#define FDS_AGG_LIST_MAX 1024

typedef enum fds_agg_type {
    FDS_AGG_ROOT = 0, /* the request's aggregations; one bucket, ordinal 0 */
    FDS_AGG_TERMS,
    FDS_AGG_AVG,
    FDS_AGG_SUM,
    FDS_AGG_MIN,
    FDS_AGG_MAX,
    FDS_AGG_VALUE_COUNT,
    FDS_AGG_STATS,
    FDS_AGG_EXTENDED_STATS,
    FDS_AGG_CARDINALITY,      /* HyperLogLog++ (hll.h) */
    FDS_AGG_PERCENTILES,      /* t-digest (tdigest.h) */
    FDS_AGG_PERCENTILE_RANKS,
    FDS_AGG_DATE_HISTOGRAM,
    FDS_AGG_HISTOGRAM,
    FDS_AGG_RANGE,
    FDS_AGG_DATE_RANGE,
    FDS_AGG_FILTER,
    FDS_AGG_FILTERS,
    FDS_AGG_MISSING,
    FDS_AGG_COMPOSITE, /* top level only; srcs are its terms/histogram/
                          date_histogram sources */
    FDS_AGG_TOP_HITS,  /* the best hits of a bucket (th: their request) */
    FDS_AGG_TOP_METRICS, /* top_hits answered as metrics of the best docs
                            (th: their request, its docvalue_fields the
                            metrics; a date sort key in its field's
                            format) */
    FDS_AGG_SAMPLER,   /* one bucket: the first shard_size docs a shard
                          matches (its best by score, the query scoring
                          none) */
    FDS_AGG_DERIVATIVE,     /* parent pipelines: computed over a histogram's */
    FDS_AGG_CUMULATIVE_SUM, /* buckets at the final reduce (bp: their path) */
    FDS_AGG_SERIAL_DIFF,
    FDS_AGG_MOVING_FN, /* one of MovingFunctions over a window (mfn) */
    FDS_AGG_RATE,      /* a sum or count per unit of its date_histogram
                          bucket's length (unit_ms; 0: the bucket's) */
    FDS_AGG_TYPE_COUNT_
} fds_agg_type;

/* ast/agg_types.c: */
/* Elasticsearch's name of an aggregation type ("terms", "date_histogram";
 * "" for the root); for typed_keys and messages. */
const char *fds_agg_type_name(int type);
/* Is it a metric (no buckets)? */
bool fds_agg_is_metric(int type);
/* Does it keep whole hits (top_hits, top_metrics: `th`)? */
bool fds_agg_keeps_hits(int type);
/* The type named `name` ("terms"), or -1 when none is (the root has
 * no name). */
int fds_agg_type_of(const char *name);

/* What a terms order key sorts on. */
enum { FDS_AGG_ORD_COUNT, FDS_AGG_ORD_KEY, FDS_AGG_ORD_METRIC };
/* Which value of a (multi-value) metric: `value`, or a stats member. */
enum {
    FDS_AGG_STAT_VALUE, FDS_AGG_STAT_COUNT, FDS_AGG_STAT_MIN,
    FDS_AGG_STAT_MAX, FDS_AGG_STAT_AVG, FDS_AGG_STAT_SUM
};

typedef struct fds_agg_order {
    int kind;     /* FDS_AGG_ORD_* */
    bool desc;
    unsigned sub; /* METRIC: index of the sub-aggregation */
    int stat;     /* METRIC: FDS_AGG_STAT_* */
} fds_agg_order;

/* gap_policy of a pipeline aggregation (Elasticsearch's BucketHelpers
 * GapPolicy): a bucket without a value is skipped, counted as 0, or keeps
 * the value it has. */
enum { FDS_GAP_SKIP = 0, FDS_GAP_INSERT_ZEROS, FDS_GAP_KEEP_VALUES };

/* The MovingFunctions a moving_fn script may call (Elasticsearch's
 * MovingFunctions), over the window's values. */
enum { FDS_MFN_MAX = 0, FDS_MFN_MIN, FDS_MFN_SUM, FDS_MFN_UNWEIGHTED_AVG,
       FDS_MFN_LINEAR_WEIGHTED_AVG, FDS_MFN_STD_DEV };

/* Calendar units of a date_histogram's calendar_interval. */
enum {
    FDS_CAL_NONE = 0, FDS_CAL_SECOND, FDS_CAL_MINUTE, FDS_CAL_HOUR,
    FDS_CAL_DAY, FDS_CAL_WEEK, FDS_CAL_MONTH, FDS_CAL_QUARTER, FDS_CAL_YEAR
};

/* One value of a composite key: by the source's type, like a bucket key. */
typedef struct fds_agg_ckey {
    char *s;           /* keyword terms (malloc'd) */
    size_t len;
    int64_t l;         /* long/date/boolean terms, date_histogram */
    double d;          /* double terms, histogram */
} fds_agg_ckey;

/* One range of a range / date_range: [from, to). */
typedef struct fds_agg_range {
    double from, to;   /* -INFINITY / INFINITY when open */
    char *key;         /* NULL: made from the bounds */
} fds_agg_range;

typedef struct fds_agg {
    char *name;
    int type;          /* fds_agg_type */
    /* the type's registry entry (src/query/aggs/agg_kind.h), set by the
     * parser: how it parses, collects and reduces */
    const struct fds__agg_kind *kind;
    /* the field (NULL for filter(s) and the root) */
    char *field;
    int ftype;         /* fds_ftype of the field in the mapping */
    bool unmapped;     /* the field is not mapped: no doc has a value */
    /* the `_index` metadata field: every doc of the index has one value,
     * the index name, held as missing_s with has_missing set (no column is
     * read; Elasticsearch's ConstantIndexFieldData) */
    bool index_field;
    /* `format` of dates (the aggregation's, else the field's mapping) */
    fds_date_format fmt;
    bool has_fmt;
    /* `missing`: the value of docs without one */
    bool has_missing;
    double missing_d;  /* numeric fields (as a double) */
    int64_t missing_l; /* long/date/boolean fields */
    char *missing_s;   /* keyword fields */
    size_t missing_len;
    /* terms */
    uint32_t size, shard_size;
    uint64_t min_doc_count; /* terms, histograms */
    fds_agg_order order[FDS_AGG_ORDER_MAX];
    unsigned norder;
    char **incl, **excl;    /* exact keyword values, or numbers as text */
    size_t *incl_len, *excl_len;
    size_t nincl, nexcl;
    double *incl_d, *excl_d; /* numeric fields: the values */
    /* histogram (interval, offset) and date_histogram */
    double interval, offset;
    int cal;                 /* FDS_CAL_*: calendar_interval */
    int64_t fixed_ms;        /* fixed_interval */
    fds_tz tz;               /* time_zone (zeroed: UTC) */
    int64_t offset_ms;
    bool has_ext, has_hard;
    double ext_min, ext_max, hard_min, hard_max;
    bool keyed;
    /* range, date_range */
    fds_agg_range *ranges;
    size_t nranges;
    /* filter (filters[0]), filters */
    struct fds_query **filters;
    char **filter_keys;      /* NULL: anonymous filters */
    size_t nfilters;
    bool other_bucket;
    char *other_key;
    /* extended_stats */
    double sigma;
    /* cardinality: precision_threshold */
    uint32_t precision_threshold;
    /* percentiles (percents) and percentile_ranks (values): pcts[0..npcts),
     * keyed (default true); tdigest.compression */
    double *pcts;
    size_t npcts;
    double compression;
    /* composite: sources (each with its own name, type, field; `keyed`
     * false = asc, true = desc), size (in `size`), `after` (has_after) */
    struct fds_agg **srcs;
    size_t nsrcs;
    fds_agg_ckey *after;
    bool has_after;
    /* top_hits: from, size, sort, _source, docvalue_fields, ... as a
     * search request without a query (owned; dsl_parse.c) */
    struct fds_search_request *th;
    /* top_metrics: the metrics' field names, in the request's order (th's
     * docvalue_fields keep the mapped ones only) */
    char **metrics;
    size_t nmetrics;
    /* derivative, cumulative_sum, serial_diff: buckets_path (owned),
     * resolved against
     * the siblings to sub bp_sub's stat bp_stat (FDS_AGG_STAT_*) or, with
     * bp_count, the bucket's doc_count; the gap policy (FDS_GAP_*);
     * derivative's and rate's unit in ms (0: none); serial_diff's lag
     * (>= 1); rate_count: rate's mode value_count */
    char *bp;
    unsigned bp_sub;
    int bp_stat;
    bool bp_count;
    int gap;
    int64_t unit_ms;
    uint32_t lag;
    bool rate_count;
    /* moving_fn: the MovingFunctions call its script is (FDS_MFN_*), the
     * window (>= 1) and shift */
    int mfn;
    uint32_t window;
    int32_t shift;
    struct fds_agg **subs;
    size_t nsubs;
} fds_agg;

/* Free an aggregation tree (NULL is a no-op; ast/ast.c). */
void fds_agg_free(fds_agg *a);

#endif
