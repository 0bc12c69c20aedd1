/*
 * shard_search.h: the shard coordinator of a search (Elasticsearch's
 * SearchPhaseController and query-then-fetch, on one node).  Every
 * (index, shard) pair is one shard of the search: the caller parses the
 * request for each shard's index, this module takes each shard's run of
 * segments from its index's view, runs the query phases in parallel,
 * merges the shards' hits in the request's order and fetches the page's
 * `_source` from each hit's index.  It knows no HTTP and writes no JSON:
 * src/http parses requests into it and renders what it leaves.
 *
 * The structs are open: the caller fills a shard's request (and errors)
 * between planning and the query phase, and reads results and failures
 * after it.
 */
#ifndef FDS_SHARD_SEARCH_H
#define FDS_SHARD_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query.h"
#include "store.h"

/* fds_shard_run.shard of a run over every shard of its index at once: the
 * runs of a scroll or point in time, whose held contexts keep one view and
 * one cursor per index. */
#define FDS_ALL_SHARDS UINT32_MAX

/* Threads of one search's query phase at most (fds_shard_search_query),
 * whatever the core count. */
#define FDS_SEARCH_THREADS_MAX 64

/* One shard of the search: its parsed request, its index's view, the run
 * of the view's segments that are this shard's, and its result.  The
 * first shard run of an index (`owner`) holds the index reference and the
 * view; the index's other shard runs share them. */
typedef struct fds_shard_run {
    fds_index *ix;
    uint32_t shard;
    bool owner;
    char *alias_filter; /* the filtered aliases' query ANDed in, or NULL */
    float index_boost;  /* indices_boost: its scores multiplied by this */
    fds_search_request *req;
    fds_index_view *v;
    const fds_search_segment *segs;
    unsigned nseg;
    unsigned vseg0; /* its first segment in the view */
    unsigned seg0; /* its first segment in the merged segment array */
    fds_search_result res;
    uint32_t from, size; /* the page asked for, before several shards widen it */
    uint64_t query_ns;
    int rc;
    fds_err err;
    bool held;     /* ix and v belong to a scroll or point in time */
    bool held_req; /* and req too */
} fds_shard_run;

/* How the caller times phases: now_ns a monotonic clock in nanoseconds;
 * query_begin / query_end count a shard's query phase in its index's
 * search stats (query_end returns the phase's nanoseconds; `ok` false: a
 * failed phase, not counted). */
typedef struct fds_search_clock {
    uint64_t (*now_ns)(void);
    uint64_t (*query_begin)(fds_search_stats *s);
    uint64_t (*query_end)(fds_search_stats *s, uint64_t t0, bool ok);
} fds_search_clock;

/* The search as a whole: the shards that answered, in index order. */
typedef struct fds_shard_search {
    fds_shard_run *sh;
    size_t n;
    size_t nok;
    unsigned *ok;  /* indices into sh of the shards that answered */
    uint64_t fetch_ns;           /* the fetch phase (the caller's render) */
    uint64_t terminate_after;    /* docs collected per shard at most; 0 = all */
    unsigned max_concurrent;     /* shards queried at once at most
                                    (max_concurrent_shard_requests); 0 = one
                                    per online core */
    bool terminated_early;       /* a shard reached terminate_after */
    uint64_t load_ns, load_docs; /* what fetching `_source` cost */
    const fds_search_clock *clock; /* required */
} fds_shard_search;

/*
 * The shards to search: of each of the `n` indices, every shard, or with
 * `routing` (comma-separated values, OperationRouting#searchShards) the
 * shards those values route to, in shard order; with `whole` (a scroll or
 * point in time, whose held contexts keep a view and a cursor per index)
 * one run per index over all its shards (FDS_ALL_SHARDS), numbered as the
 * indices.  Fills s->sh and s->ok (calloc'd) and s->n; the first run of
 * each index is its owner (the index references stay the caller's until
 * it hands them over).  Returns 0 or FDS_ENOMEM.
 */
int fds_shard_search_plan(const char *routing, bool whole, fds_index **ixs,
                          size_t n, fds_shard_search *s);

/* The shard run of the index of s->sh[i] that owns its view. */
size_t fds_shard_search_owner_of(const fds_shard_search *s, size_t i);

/*
 * After the caller parsed sh->req (sh->rc 0) or failed (sh->rc set):
 * keep the page asked for, widen it to from + size when `several` shards
 * run (the page is cut after the merge), take the view -- *held (a
 * scroll's or point in time's) when `held` is not NULL, else the owner
 * acquires it and the index's other runs share the owner's -- and the
 * shard's run of its segments.  A failure names the shard's index.
 */
void fds_shard_run_ready(fds_shard_run *sh, const fds_shard_run *owner,
                         bool several, fds_index_view **held);

/*
 * The query phase of every ready shard of `s` (sh->rc 0): in parallel on
 * up to one thread per online core (the caller's thread is one of them),
 * each thread taking the next shard not yet taken; a single shard runs on
 * the caller's thread.  A thread that cannot be started leaves its share
 * to the others.  Then s->ok lists the shards that answered.
 */
void fds_shard_search_query(fds_shard_search *s);

/* allow_partial_search_results false: a shard whose query phase its
 * timeout stopped fails instead ("Time exceeded", kind QUERY_PHASE, as
 * Elasticsearch's QueryPhase throws QueryPhaseExecutionException), and
 * leaves s->ok. */
void fds_shard_search_no_partial(fds_shard_search *s);

/* After the query phase: s->terminate_after set when an answering shard's
 * request has one (the URL's, or else the body's), s->terminated_early when
 * it stopped a shard (each shard's run collects at most that many docs:
 * fds_search_request.terminate_after). */
void fds_shard_search_terminated(fds_shard_search *s);

/*
 * The answering shards' hits merged into `out` (hits and explanations
 * malloc'd; explanation trees still owned by the shards), the page
 * [from, from + size) of the request `page`: in the request's order (score
 * or sort keys, then shard order -- index, then shard -- then doc, as
 * Lucene's TopDocs.merge breaks ties).  Each answering shard's seg0 must
 * be set (its first segment in the merged array).  Returns 0 or
 * FDS_ENOMEM.
 */
int fds_shard_search_merge(fds_shard_search *s, const fds_search_request *page,
                           fds_search_result *out);

/* The answering shard that merged segment `seg` belongs to. */
fds_shard_run *fds_shard_search_shard_of(const fds_shard_search *s, uint32_t seg);

/* What the page's hits need, with `arg` the fds_shard_search (the shapes
 * of search_render.h's fds_hit_source): a hit's index name and parsed
 * request by merged segment, its version and seq_no, its routing, and the
 * `_source` of n hits -- each index's hits fetched from its view in one
 * call, load_ns and load_docs counting the cost. */
const char *fds_shard_search_index_of(void *arg, uint32_t seg);
const fds_search_request *fds_shard_search_req_of(void *arg, uint32_t seg);
void fds_shard_search_meta(void *arg, const fds_hit *h, int64_t *version,
                           int64_t *seq_no);
const char *fds_shard_search_routing(void *arg, const fds_hit *h, size_t *len);
int fds_shard_search_fetch(void *arg, const fds_hit *hits, size_t n,
                           const uint8_t **src, size_t *len, fds_err *err);

/* Release every shard's result, request, view and index (those a scroll
 * or point in time holds excepted) and the arrays. */
void fds_shard_search_free(fds_shard_search *s);

#endif
