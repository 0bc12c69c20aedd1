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

#include "aggs/aggs.h"
#include "exec/search_int.h"

typedef struct fds__aggs_run fds__aggs_run;

/* Docs collected at a time: the query's matches are buffered and each
 * aggregation runs over the batch in a tight loop. */
#define FDS__AGG_BATCH 512u

/* The head of an fds__aggs_run: the docs not yet collected, and their
 * scores (NaN unless fds__aggs_need_score). */
typedef struct fds__aggs_buf {
    uint32_t doc[FDS__AGG_BATCH];
    float score[FDS__AGG_BATCH];
    size_t n;
} fds__aggs_buf;

/* Collect the buffered docs now (fds__aggs_collect calls it when the
 * buffer is full). */
void fds__aggs_flush(fds__aggs_run *r);

/* A collector of the tree `root` for the search x (its filters are
 * compiled with x's statistics) whose compiled query is `query` (what a
 * top_hits with explain explains).  0 or FDS_ENOMEM (err filled). */
int fds__aggs_begin(fds__exec *x, const fds_agg *root, const fds__cnode *query,
                    fds__aggs_run **out, fds_err *err);
/* Docs of segment si come next.  0, FDS_ENOMEM, FDS_EINVAL (a field of an
 * aggregation has several values in one doc of the segment); err filled. */
int fds__aggs_segment(fds__aggs_run *r, unsigned si);
/* Does an aggregation of r read the matches' scores (a top_hits by
 * _score, or with track_scores)?  Then fds__aggs_collect takes them. */
bool fds__aggs_need_score(const fds__aggs_run *r);
/* Count live matching doc `doc` of the current segment, whose score is
 * `score` (NaN when not needed); an error is kept for fds__aggs_finish;
 * inline, as it runs for every match. */
static inline void fds__aggs_collect(fds__aggs_run *r, uint32_t doc, float score)
{
    fds__aggs_buf *b = (fds__aggs_buf *)r;
    b->score[b->n] = score;
    b->doc[b->n++] = doc;
    if (b->n == FDS__AGG_BATCH)
        fds__aggs_flush(r);
}
/* fds__aggs_collect of every doc in [lo, hi) of the current segment (all
 * live and matching): a match_all over a segment without deletions, for
 * aggregations that do not read scores (the buffer's are left unset). */
static inline void fds__aggs_collect_range(fds__aggs_run *r, uint32_t lo,
                                           uint32_t hi)
{
    fds__aggs_buf *b = (fds__aggs_buf *)r;
    while (lo < hi) {
        size_t k = FDS__AGG_BATCH - b->n;
        if (k > hi - lo)
            k = hi - lo;
        for (size_t i = 0; i < k; i++)
            b->doc[b->n + i] = lo + (uint32_t)i;
        b->n += k;
        lo += (uint32_t)k;
        if (b->n == FDS__AGG_BATCH)
            fds__aggs_flush(r);
    }
}
/* The shard's partial result (free with fds_agg_result_free).  0 or the
 * first error of the collection (err filled). */
int fds__aggs_finish(fds__aggs_run *r, fds_agg_result **out);
void fds__aggs_end(fds__aggs_run *r); /* NULL is a no-op */

#endif
