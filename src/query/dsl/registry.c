/*
 * registry.c: one entry per aggregation type -- its name, parser,
 * collector and reduce (agg_kind.h) -- as Elasticsearch's SearchModule
 * registers each aggregation.  Adding a type is adding its functions and
 * one line here (and its render entry in src/http/aggs_render.c).
 */
#include <string.h>

#include "aggs/aggs_int.h"
#include "dsl/registry.h"
#include "dsl/aggs_params.h"

/* Indexed by fds_agg_type. */
static const fds__agg_kind KINDS[FDS_AGG_TYPE_COUNT_] = {
    [FDS_AGG_ROOT] = {"", FDS_AGG_ROOT, false, NULL, NULL,
                      fds__aggs_reduce_fixed},
    [FDS_AGG_TERMS] = {"terms", FDS_AGG_TERMS, false, fds__agg_parse_terms,
                       fds__aggs_collect_terms, fds__aggs_reduce_keyed},
    [FDS_AGG_AVG] = {"avg", FDS_AGG_AVG, true, fds__agg_parse_stats,
                     fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_SUM] = {"sum", FDS_AGG_SUM, true, fds__agg_parse_stats,
                     fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_MIN] = {"min", FDS_AGG_MIN, true, fds__agg_parse_stats,
                     fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_MAX] = {"max", FDS_AGG_MAX, true, fds__agg_parse_stats,
                     fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_VALUE_COUNT] = {"value_count", FDS_AGG_VALUE_COUNT, true,
                             fds__agg_parse_stats, fds__aggs_collect_value_count,
                             fds__aggs_reduce_metric},
    [FDS_AGG_STATS] = {"stats", FDS_AGG_STATS, true, fds__agg_parse_stats,
                       fds__aggs_collect_stats, fds__aggs_reduce_metric},
    [FDS_AGG_EXTENDED_STATS] = {"extended_stats", FDS_AGG_EXTENDED_STATS, true,
                                fds__agg_parse_stats, fds__aggs_collect_stats,
                                fds__aggs_reduce_metric},
    [FDS_AGG_CARDINALITY] = {"cardinality", FDS_AGG_CARDINALITY, true,
                             fds__agg_parse_cardinality,
                             fds__aggs_collect_cardinality,
                             fds__aggs_reduce_metric},
    [FDS_AGG_PERCENTILES] = {"percentiles", FDS_AGG_PERCENTILES, true,
                             fds__agg_parse_percentiles,
                             fds__aggs_collect_percentiles,
                             fds__aggs_reduce_metric},
    [FDS_AGG_PERCENTILE_RANKS] = {"percentile_ranks", FDS_AGG_PERCENTILE_RANKS,
                                  true, fds__agg_parse_percentiles,
                                  fds__aggs_collect_percentiles,
                                  fds__aggs_reduce_metric},
    [FDS_AGG_DATE_HISTOGRAM] = {"date_histogram", FDS_AGG_DATE_HISTOGRAM, false,
                                fds__agg_parse_histogram,
                                fds__aggs_collect_single, fds__aggs_reduce_keyed},
    [FDS_AGG_HISTOGRAM] = {"histogram", FDS_AGG_HISTOGRAM, false,
                           fds__agg_parse_histogram, fds__aggs_collect_single,
                           fds__aggs_reduce_keyed},
    [FDS_AGG_RANGE] = {"range", FDS_AGG_RANGE, false, fds__agg_parse_range,
                       fds__aggs_collect_multi, fds__aggs_reduce_fixed},
    [FDS_AGG_DATE_RANGE] = {"date_range", FDS_AGG_DATE_RANGE, false,
                            fds__agg_parse_range, fds__aggs_collect_multi,
                            fds__aggs_reduce_fixed},
    [FDS_AGG_FILTER] = {"filter", FDS_AGG_FILTER, false, fds__agg_parse_filter,
                        fds__aggs_collect_single, fds__aggs_reduce_fixed},
    [FDS_AGG_FILTERS] = {"filters", FDS_AGG_FILTERS, false,
                         fds__agg_parse_filters, fds__aggs_collect_multi,
                         fds__aggs_reduce_fixed},
    [FDS_AGG_MISSING] = {"missing", FDS_AGG_MISSING, false,
                         fds__agg_parse_missing, fds__aggs_collect_single,
                         fds__aggs_reduce_fixed},
    [FDS_AGG_COMPOSITE] = {"composite", FDS_AGG_COMPOSITE, false,
                           fds__agg_parse_composite,
                           fds__aggs_collect_composite, fds__aggs_reduce_keyed},
    [FDS_AGG_TOP_HITS] = {"top_hits", FDS_AGG_TOP_HITS, false,
                          fds__agg_parse_top_hits, fds__aggs_collect_top_hits,
                          fds__aggs_reduce_top_hits},
};

const fds__agg_kind *fds__agg_kind_of(int type)
{
    return type >= 0 && type < FDS_AGG_TYPE_COUNT_ ? &KINDS[type] : NULL;
}

const fds__agg_kind *fds__agg_kind_find(const char *name)
{
    for (int t = FDS_AGG_ROOT + 1; t < FDS_AGG_TYPE_COUNT_; t++)
        if (!strcmp(KINDS[t].name, name))
            return &KINDS[t];
    return NULL;
}

const char *fds_agg_type_name(int type)
{
    const fds__agg_kind *k = fds__agg_kind_of(type);
    return k ? k->name : "";
}

bool fds_agg_is_metric(int type)
{
    const fds__agg_kind *k = fds__agg_kind_of(type);
    return k && k->metric;
}
