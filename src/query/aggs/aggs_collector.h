/*
 * aggs_collector.h: the aggregations as a collector of a search's matches
 * (src/query only; collect.c).  Execution makes one with
 * fds__aggs_collector_new when the request has aggregations and drives it
 * through exec/collector.h alone; its finish puts the shard's result tree
 * (aggs.h) in fds_search_result.aggs.
 */
#ifndef FDS_AGGS_COLLECTOR_H
#define FDS_AGGS_COLLECTOR_H

#include "aggs/aggs.h"
#include "exec/collector.h"
#include "exec/search_int.h"

/* A collector of the aggregation tree `root` for the search x (filter
 * aggregations compile their queries with x's statistics) whose compiled
 * query is `query` (what a top_hits with explain explains); its
 * needs_scores is set when a top_hits reads scores (by _score, or
 * track_scores).  err (kept by the collector) receives the detail of its
 * errors.  Free with fds__collector_free.  0 or FDS_ENOMEM (err filled). */
int fds__aggs_collector_new(fds__exec *x, const fds_agg *root,
                            const fds__cnode *query, fds_err *err,
                            fds__collector **out);

#endif
