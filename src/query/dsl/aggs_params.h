/*
 * aggs_params.h: each aggregation type's parser of its body (src/query
 * only; aggs_params.c), as the registry (src/query/dsl/registry.c) names
 * them: the shape is fds__agg_kind.parse (aggs/agg_kind.h).
 */
#ifndef FDS_AGGS_PARAMS_H
#define FDS_AGGS_PARAMS_H

#include "aggs/aggs.h"
#include "dsl/dsl_parse_int.h"

int fds__agg_parse_terms(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                         char **paths);
/* histogram, date_histogram */
int fds__agg_parse_histogram(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                             char **paths);
/* range, date_range */
int fds__agg_parse_range(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                         char **paths);
int fds__agg_parse_filter(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                          char **paths);
int fds__agg_parse_filters(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                           char **paths);
int fds__agg_parse_missing(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                           char **paths);
int fds__agg_parse_composite(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                             char **paths);
/* avg, sum, min, max, value_count, stats, extended_stats */
int fds__agg_parse_stats(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                         char **paths);
int fds__agg_parse_cardinality(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                               char **paths);
/* percentiles, percentile_ranks */
int fds__agg_parse_percentiles(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                               char **paths);
int fds__agg_parse_top_hits(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                            char **paths);
/* sampler: shard_size */
int fds__agg_parse_sampler(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                           char **paths);
/* derivative, cumulative_sum, serial_diff, moving_fn: their own keys (buckets_path resolved with
 * the siblings, aggs_parse.c) */
int fds__agg_parse_pipeline(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                            char **paths);
/* rate: `field` (optional: the bucket's docs), `unit`, `mode` */
int fds__agg_parse_rate(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                        char **paths);
/* top_metrics, read as the top_hits it answers from */
int fds__agg_parse_top_metrics(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                               char **paths);

#endif
