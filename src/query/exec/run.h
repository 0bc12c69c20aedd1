/*
 * run.h: one search's passes over its segments (run.c), for the driver
 * (src/query/search.c) that opens a run, hands it the collector of the
 * aggregations, and fetches explanations and named queries from the page
 * it leaves (src/query only).
 */
#ifndef FDS_EXEC_RUN_H
#define FDS_EXEC_RUN_H

#include "exec/collector.h"
#include "exec/search_int.h"

/* State of one search across its segments. */
typedef struct fds__run {
    fds__exec x;
    fds__cnode *root;    /* the compiled query (owned) */
    fds__heap hp;
    size_t k;            /* page end (from + size); 0 for _count */
    bool by_score;       /* ranked by _score (no sort) */
    bool need_score;     /* scores are computed (show_score, min_score) */
    bool show_score;     /* hits and max_score carry them (by score,
                            track_scores, a sort on _score); as in
                            Elasticsearch, min_score alone does not */
    bool counting;       /* track_total_hits is not false */
    uint64_t limit;      /* count hits up to limit + 1 */
    uint64_t count;
    uint64_t docbase;    /* doc ids of earlier segments (_doc sort) */
    /* the collector of the aggregations: every live match goes to it, so
     * nothing stops a segment early (NULL without aggregations) */
    fds__collector *ag;
    /* terminate_after: the docs collected so far (counted, aggregated,
     * offered to the page), and whether the limit stopped the run */
    uint64_t collected;
    bool terminated;
} fds__run;

/* Open `r` for `req` over `segs[0..nseg)` (borrowed until close): the
 * deadline, the compiled query, the page's heap (from + size hits) and
 * what is scored and counted.  0, or FDS_ENOMEM / FDS_EINVAL (a phrase on
 * a field without positions) with err filled and nothing left to close. */
int fds__run_open(fds__run *r, const fds_search_request *req,
                  const fds_search_segment *segs, unsigned nseg, fds_err *err);

/* Every segment in turn, each live match also to `ag` (borrowed; NULL
 * for none).  0, FDS_ENOMEM, FDS_ECORRUPT (err filled), or the
 * collector's error. */
int fds__run_segments(fds__run *r, fds__collector *ag, fds_err *err);

/* Sort the page of a finished run best first: a page by score (no NaN,
 * which the heap's order and fds__hit_cmp's tell apart) by the heapsort of
 * the heap it is, any other by qsort_r.  The heap is spent. */
void fds__run_sort_page(fds__run *r);

/* The page (sorted, fds__run_sort_page), max_score and total of a
 * finished run into `out`; takes r->hp.h. */
void fds__run_finish(fds__run *r, fds_search_result *out);

/* Free the compiled query and the run's shared state (not r->hp.h). */
void fds__run_close(fds__run *r);

/* Count a search in and out of the process's running searches: a
 * segment's MaxScore pass only slices when its own is the one running. */
void fds__run_enter(void);
void fds__run_leave(void);

#endif
