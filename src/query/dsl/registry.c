/*
 * registry.c: one entry per aggregation type -- its parser, collector
 * and reduce (agg_kind.h; its name is ast/agg_types.c's) -- as Elasticsearch's SearchModule
 * registers each aggregation.  Adding a type is adding its functions and
 * one line here (and its render entry in src/http/aggs_render.c).
 */
#include <string.h>

#include "aggs/aggs_int.h"
#include "dsl/registry.h"
#include "dsl/aggs_params.h"

/* Indexed by fds_agg_type. */
static const fds__agg_kind KINDS[FDS_AGG_TYPE_COUNT_] = {
    [FDS_AGG_ROOT] = {FDS_AGG_ROOT, NULL, NULL,
                      fds__aggs_reduce_fixed},
    [FDS_AGG_TERMS] = {FDS_AGG_TERMS, fds__agg_parse_terms,
                       fds__aggs_collect_terms, fds__aggs_reduce_keyed},
    [FDS_AGG_AVG] = {FDS_AGG_AVG, fds__agg_parse_stats,
                     fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_SUM] = {FDS_AGG_SUM, fds__agg_parse_stats,
                     fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_MIN] = {FDS_AGG_MIN, fds__agg_parse_stats,
                     fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_MAX] = {FDS_AGG_MAX, fds__agg_parse_stats,
                     fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_VALUE_COUNT] = {FDS_AGG_VALUE_COUNT, fds__agg_parse_stats, fds__aggs_collect_value_count,
                             fds__aggs_reduce_metric},
    [FDS_AGG_STATS] = {FDS_AGG_STATS, fds__agg_parse_stats,
                       fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_EXTENDED_STATS] = {FDS_AGG_EXTENDED_STATS, fds__agg_parse_stats, fds__aggs_collect_stats,
                                fds__aggs_reduce_metric},
    [FDS_AGG_CARDINALITY] = {FDS_AGG_CARDINALITY, fds__agg_parse_cardinality,
                             fds__aggs_collect_cardinality,
                             fds__aggs_reduce_metric},
    [FDS_AGG_PERCENTILES] = {FDS_AGG_PERCENTILES, fds__agg_parse_percentiles,
                             fds__aggs_collect_percentiles,
                             fds__aggs_reduce_metric},
    [FDS_AGG_PERCENTILE_RANKS] = {FDS_AGG_PERCENTILE_RANKS, fds__agg_parse_percentiles,
                                  fds__aggs_collect_percentiles,
                                  fds__aggs_reduce_metric},
    [FDS_AGG_DATE_HISTOGRAM] = {FDS_AGG_DATE_HISTOGRAM, fds__agg_parse_histogram,
                                fds__aggs_collect_single, fds__aggs_reduce_keyed},
    [FDS_AGG_HISTOGRAM] = {FDS_AGG_HISTOGRAM, fds__agg_parse_histogram, fds__aggs_collect_single,
                           fds__aggs_reduce_keyed},
    [FDS_AGG_RANGE] = {FDS_AGG_RANGE, fds__agg_parse_range,
                       fds__aggs_collect_multi, fds__aggs_reduce_fixed},
    [FDS_AGG_DATE_RANGE] = {FDS_AGG_DATE_RANGE, fds__agg_parse_range, fds__aggs_collect_multi,
                            fds__aggs_reduce_fixed},
    [FDS_AGG_FILTER] = {FDS_AGG_FILTER, fds__agg_parse_filter,
                        fds__aggs_collect_single, fds__aggs_reduce_fixed},
    [FDS_AGG_FILTERS] = {FDS_AGG_FILTERS, fds__agg_parse_filters, fds__aggs_collect_multi,
                         fds__aggs_reduce_fixed},
    [FDS_AGG_MISSING] = {FDS_AGG_MISSING, fds__agg_parse_missing, fds__aggs_collect_single,
                         fds__aggs_reduce_fixed},
    [FDS_AGG_COMPOSITE] = {FDS_AGG_COMPOSITE, fds__agg_parse_composite,
                           fds__aggs_collect_composite, fds__aggs_reduce_keyed},
    [FDS_AGG_TOP_HITS] = {FDS_AGG_TOP_HITS, fds__agg_parse_top_hits, fds__aggs_collect_top_hits,
                          fds__aggs_reduce_top_hits},
    [FDS_AGG_TOP_METRICS] = {FDS_AGG_TOP_METRICS, fds__agg_parse_top_metrics,
                             fds__aggs_collect_top_hits, fds__aggs_reduce_top_hits},
    [FDS_AGG_SAMPLER] = {FDS_AGG_SAMPLER, fds__agg_parse_sampler, fds__aggs_collect_single,
                         fds__aggs_reduce_fixed},
    [FDS_AGG_DERIVATIVE] = {FDS_AGG_DERIVATIVE, fds__agg_parse_pipeline,
                            fds__aggs_collect_none, fds__aggs_reduce_metric},
    [FDS_AGG_CUMULATIVE_SUM] = {FDS_AGG_CUMULATIVE_SUM, fds__agg_parse_pipeline,
                                fds__aggs_collect_none, fds__aggs_reduce_metric},
    [FDS_AGG_SERIAL_DIFF] = {FDS_AGG_SERIAL_DIFF, fds__agg_parse_pipeline,
                             fds__aggs_collect_none, fds__aggs_reduce_metric},
    [FDS_AGG_MOVING_FN] = {FDS_AGG_MOVING_FN, fds__agg_parse_pipeline,
                           fds__aggs_collect_none, fds__aggs_reduce_metric},
    [FDS_AGG_RATE] = {FDS_AGG_RATE, fds__agg_parse_rate, fds__aggs_collect_stats,
                      fds__aggs_reduce_metric},
};

const fds__agg_kind *fds__agg_kind_of(int type)
{
    return type >= 0 && type < FDS_AGG_TYPE_COUNT_ ? &KINDS[type] : NULL;
}

const fds__agg_kind *fds__agg_kind_find(const char *name)
{
    int t = fds_agg_type_of(name);
    return t > FDS_AGG_ROOT ? &KINDS[t] : NULL;
}
