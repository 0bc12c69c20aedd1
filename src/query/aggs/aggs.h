/*
 * aggs.h: Elasticsearch aggregations over the doc-values columns of the
 * segments (public interface of src/query's aggregations).
 *
 * A search body's `aggs` / `aggregations` is parsed (aggs_parse.c, from
 * fds_search_parse) into a tree of fds_agg hung off the request
 * (fds_search_request.aggs: a root node of type FDS_AGG_ROOT whose subs are
 * the top-level aggregations).  fds_search_execute visits every live doc the
 * query matches -- whatever the page, track_total_hits or `size: 0` -- and
 * collects it into per-shard state keyed by the bucket's value (collect.c,
 * Elasticsearch's "owning bucket ordinal" design: every bucket of every
 * bucket aggregation has an ordinal, the sub-aggregations' state is indexed
 * by it).  At the end of the shard the state becomes an fds_agg_result tree
 * that no longer refers to segments; fds_aggs_reduce merges the trees of the
 * shards (indices) as Elasticsearch's InternalAggregation.reduce does and
 * finishes them (terms cut to `size`, empty histogram buckets filled,
 * min_doc_count applied, search.max_buckets checked); src/http renders the
 * reduced tree (src/http/aggs_render.c).
 *
 * top_hits is a metric whose state is hits: (segment, doc, score, sort
 * values) of the shard's search; src/http makes their segments the
 * response's (fds_aggs_rebase) before the reduce and fetches their
 * `_source` to render them as the search renders its page.
 *
 * Each value column holds one value per doc (a keyword column the smallest
 * term); a segment in which a field has several values in one document
 * makes an aggregation on it fail (FDS_EINVAL) rather than count wrong.
 */
#ifndef FDS_AGGS_H
#define FDS_AGGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time/datemath.h"
#include "fds_error.h"
#include "query.h"
#include "ast/agg_tree.h"

/* ---- results ------------------------------------------------------------- */

typedef struct fds_agg_result fds_agg_result;

/* One hit of a top_hits result: its segment (of the shard's search, made
 * the response's by fds_aggs_rebase), doc, score and sort values, and the
 * top_hits request of its index that made it (the hit's shape: _source
 * filtering, docvalue_fields resolved against that index's mapping). */
typedef struct fds_agg_hit {
    fds_hit h;
    const struct fds_search_request *req;
    /* explain: why it scored what it did (owned by the shard's result; a
     * reduced result points at its inputs') */
    fds_explanation *x;
} fds_agg_hit;

/* A bucket: its key (by the aggregation's type: key_s for keyword terms,
 * key_l for long/date/boolean terms and date_histogram, key_d for double
 * terms and histogram, the range/filter index in key_l otherwise), its
 * doc_count and its sub-aggregations (one per agg->subs, in order). */
typedef struct fds_agg_bucket {
    char *key_s;
    size_t key_len;
    int64_t key_l;
    double key_d;
    uint64_t doc_count;
    int64_t err;       /* terms: doc_count_error of the bucket (-1 unknown) */
    fds_agg_ckey *ck;  /* composite: one value per source (malloc'd) */
    fds_agg_result **subs;
} fds_agg_bucket;

struct fds_agg_result {
    const fds_agg *agg;
    /* cardinality, percentiles: the sketch (owned; NULL: nothing seen) */
    struct fds_hll *hll;
    struct fds_tdigest *td;
    /* metrics: values seen, Kahan-compensated sum, sum of squares */
    uint64_t count;
    double sum, sum_c, sumsq, sumsq_c, min, max;
    /* bucket aggregations */
    fds_agg_bucket *b;
    size_t nb;
    bool key_double;   /* terms: keys are doubles (key_d), else key_l/key_s */
    uint64_t other_doc_count; /* terms: sum_other_doc_count */
    int64_t err;       /* terms: doc_count_error_upper_bound (-1 unknown) */
    uint32_t nshards;  /* terms: shard results reduced into this one */
    /* top_hits: the best hits, best first (malloc'd; a shard's
     * from + size, the reduced answer's [from, from + size)), the docs of
     * the bucket (`count`) and the best score (NaN: not scored) */
    fds_agg_hit *hits;
    size_t nhits;
    float max_score;
    bool reduced;      /* fds_aggs_reduce made it (final form) */
};

/* Free a result tree (NULL is a no-op). */
void fds_agg_result_free(fds_agg_result *r);

/*
 * Reduce the shard results in[0..n) of the aggregation tree `root` (each
 * from fds_search_execute of a request whose aggs is `root`, or parsed from
 * the same body: nodes are matched by position) into *out, the response's
 * final form: terms buckets merged by key with Elasticsearch's error bounds
 * (doc_count_error_upper_bound: the sum over shards that returned shard_size
 * buckets ordered by count of their smallest count, 0 for one shard or a key
 * order, -1 for other orders; a bucket's error: the errors of the shards
 * that did not return it; sum_other_doc_count), sorted and cut to `size`;
 * histograms merged by key with empty buckets filled (min_doc_count 0)
 * between the first and last key or the extended bounds; metrics combined.
 * The inputs are only read.  n may be 0 (an empty answer).  Returns 0,
 * FDS_ETOOBIG (kind FDS_KIND_TOO_MANY_BUCKETS: more than
 * FDS_AGG_MAX_BUCKETS buckets in the answer), FDS_ENOMEM.
 */
int fds_aggs_reduce(const fds_agg *root, fds_agg_result *const *in, size_t n,
                    fds_agg_result **out, fds_err *err);

/* Add seg0 to the segment of every top_hits hit in the tree r: a shard's
 * result, whose segments are the shard's, made those of an array in which
 * the shard's segments start at seg0 (the response's, which gives the
 * hits' `_id`, `_index` and `_source`, and orders equal hits by shard). */
void fds_aggs_rebase(fds_agg_result *r, uint32_t seg0);

/* The value of metric result r for a stat (FDS_AGG_STAT_*): NaN when it
 * has none (no values; a sum of nothing is 0); cardinality's estimate. */
double fds_agg_metric_value(const fds_agg_result *r, int stat);

/* Write epoch milliseconds `ms` in format `f` (NULL:
 * strict_date_optional_time, "2026-12-01T10:00:00.000Z") in zone `tz` (the
 * offset at ms; not NULL)
 * into out (cap bytes, NUL-terminated).  Returns the length, or 0 when it
 * does not fit.  Patterns write the letters fds__date_format_parse reads. */
size_t fds_agg_date_format(int64_t ms, const fds_date_format *f, const fds_tz *tz,
                           char *out, size_t cap);

#endif
