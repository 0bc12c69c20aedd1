/*
 * aggs_int.h: the aggregation collector the search engine drives
 * (src/query only; aggs.c).
 *
 * fds_search_execute with a request that has aggregations calls
 * fds__aggs_begin once, fds__aggs_segment before each segment's docs,
 * fds__aggs_collect for every live doc the query matches (in doc order),
 * then fds__aggs_finish for the shard's result and fds__aggs_end.
 */
#ifndef FDS_AGGS_INT_H
#define FDS_AGGS_INT_H

#include "aggs.h"
#include "search_int.h"

typedef struct fds__aggs_run fds__aggs_run;

/* A collector of the tree `root` for the search x (its filters are
 * compiled with x's statistics).  0 or FDS_ENOMEM (err filled). */
int fds__aggs_begin(exec *x, const fds_agg *root, fds__aggs_run **out,
                    fds_err *err);
/* Docs of segment si come next.  0, FDS_ENOMEM, FDS_EINVAL (a field of an
 * aggregation has several values in one doc of the segment); err filled. */
int fds__aggs_segment(fds__aggs_run *r, unsigned si);
/* Count live matching doc `doc` of the current segment (an error is kept
 * for fds__aggs_finish). */
void fds__aggs_collect(fds__aggs_run *r, uint32_t doc);
/* The shard's partial result (free with fds_agg_result_free).  0 or the
 * first error of the collection (err filled). */
int fds__aggs_finish(fds__aggs_run *r, fds_agg_result **out);
void fds__aggs_end(fds__aggs_run *r); /* NULL is a no-op */

#endif
