/*
 * agg_types.c: the aggregation types' Elasticsearch names and which are
 * metrics -- the vocabulary of the aggregation tree (agg_tree.h), which
 * the parser, the aggregations, their registry (dsl/registry.c) and the
 * renderer all speak.
 */
#include <stdbool.h>
#include <string.h>

#include "ast/agg_tree.h"

static const struct {
    const char *name; /* "" for the root */
    bool metric;      /* no buckets, no sub-aggregations */
} TYPES[FDS_AGG_TYPE_COUNT_] = {
    [FDS_AGG_ROOT] = {"", false},
    [FDS_AGG_TERMS] = {"terms", false},
    [FDS_AGG_AVG] = {"avg", true},
    [FDS_AGG_SUM] = {"sum", true},
    [FDS_AGG_MIN] = {"min", true},
    [FDS_AGG_MAX] = {"max", true},
    [FDS_AGG_VALUE_COUNT] = {"value_count", true},
    [FDS_AGG_STATS] = {"stats", true},
    [FDS_AGG_EXTENDED_STATS] = {"extended_stats", true},
    [FDS_AGG_CARDINALITY] = {"cardinality", true},
    [FDS_AGG_PERCENTILES] = {"percentiles", true},
    [FDS_AGG_PERCENTILE_RANKS] = {"percentile_ranks", true},
    [FDS_AGG_DATE_HISTOGRAM] = {"date_histogram", false},
    [FDS_AGG_HISTOGRAM] = {"histogram", false},
    [FDS_AGG_RANGE] = {"range", false},
    [FDS_AGG_DATE_RANGE] = {"date_range", false},
    [FDS_AGG_FILTER] = {"filter", false},
    [FDS_AGG_FILTERS] = {"filters", false},
    [FDS_AGG_MISSING] = {"missing", false},
    [FDS_AGG_COMPOSITE] = {"composite", false},
    [FDS_AGG_TOP_HITS] = {"top_hits", false},
    [FDS_AGG_TOP_METRICS] = {"top_metrics", false},
    [FDS_AGG_SAMPLER] = {"sampler", false},
    [FDS_AGG_DERIVATIVE] = {"derivative", false},
    [FDS_AGG_CUMULATIVE_SUM] = {"cumulative_sum", false},
    [FDS_AGG_SERIAL_DIFF] = {"serial_diff", false},
    [FDS_AGG_MOVING_FN] = {"moving_fn", false},
    [FDS_AGG_RATE] = {"rate", true},
};

const char *fds_agg_type_name(int type)
{
    return type >= 0 && type < FDS_AGG_TYPE_COUNT_ ? TYPES[type].name : "";
}

bool fds_agg_is_metric(int type)
{
    return type >= 0 && type < FDS_AGG_TYPE_COUNT_ && TYPES[type].metric;
}

bool fds_agg_keeps_hits(int type)
{
    return type == FDS_AGG_TOP_HITS || type == FDS_AGG_TOP_METRICS;
}

int fds_agg_type_of(const char *name)
{
    for (int t = FDS_AGG_ROOT + 1; t < FDS_AGG_TYPE_COUNT_; t++)
        if (!strcmp(TYPES[t].name, name))
            return t;
    return -1;
}
