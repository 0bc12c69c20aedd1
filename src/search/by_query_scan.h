/*
 * by_query_scan.h: the scan under `_delete_by_query`, `_update_by_query`
 * and `_reindex` (Elasticsearch's BulkByScroll workers): read the matching
 * documents of one index view in `_doc` order, batch after batch, and
 * write each batch as one bulk write -- deletes or re-indexes of the same
 * source with the seq_no the view saw, or copies into a destination --
 * counting what happened, in slices on threads of their own, throttled to
 * a rate, stopped by a cancel.  It knows no HTTP and writes no JSON:
 * src/http parses the request into an fds_scan_spec and renders the
 * fds_scan_result (and each progress report) as Elasticsearch does.
 */
#ifndef FDS_BY_QUERY_SCAN_H
#define FDS_BY_QUERY_SCAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fds_strbuf.h"
#include "query.h"
#include "store.h"

/* What a scan writes for each document it reads. */
typedef enum fds_scan_mode {
    FDS_SCAN_REINDEX, /* a copy into spec.to (index or create) */
    FDS_SCAN_DELETE,  /* a delete, if the document is still as seen */
    FDS_SCAN_UPDATE,  /* a re-index of its source, if still as seen */
} fds_scan_mode;

/* The source written for a document read, in place of its own
 * `src[0..len)` (reindex's source._source: the part copied), appended to
 * `out` (emptied by the scan; out->oom or no bytes at all is an
 * out-of-memory error of the scan).  Deletes write no source. */
typedef void (*fds_scan_rewrite_fn)(void *arg, fds_strbuf *out, const uint8_t *src,
                                    size_t len);

/* One scan.  Every pointer is borrowed for the length of fds_scan_run. */
typedef struct fds_scan_spec {
    fds_scan_mode mode;
    fds_index *from;          /* the index read */
    fds_index *to;            /* FDS_SCAN_REINDEX: the index written */
    /* the search: a {"query":...} body (NULL: all documents) and the
     * URL's q, df and default_operator (NULL: none), parsed with each
     * slice's own request; lookup: a terms query's lookup form
     * (fds_search_limits.lookup; NULL refuses it) */
    const char *query, *q, *df, *default_operator;
    int (*lookup)(void *arg, const char *index, const char *id, const char *routing,
                  const char *path, struct cJSON **out, fds_err *err);
    void *lookup_arg;
    uint64_t max_docs;        /* documents processed at most; UINT64_MAX: all */
    uint32_t batch;           /* documents read and written at a time, >= 1 */
    bool proceed;             /* conflicts=proceed: count a conflict, go on */
    bool refresh;             /* refresh the written index at the end */
    /* reindex: op_type create; version_type external (the source's
     * _version, above the destination's; external_gte: or equal); routing
     * "discard" or "=value" (NULL: keep each document's) */
    bool create, external, external_gte;
    const char *routing;
    /* reindex and update: the source written (NULL: each one as read) */
    fds_scan_rewrite_fn rewrite;
    void *rewrite_arg;
    double rps;               /* documents a second at most; 0: unthrottled */
    /* slices run at once, each on its own thread: slice i takes the source
     * shards s with s % slices == i (0 or 1: one scan of all, in one
     * search, so that _doc order spans shards) */
    uint32_t slices;
} fds_scan_spec;

/* A slice's running counters (BulkByScrollTask.Status). */
typedef struct fds_scan_counts {
    uint64_t total, created, updated, deleted, batches, conflicts;
    uint64_t throttled_ms; /* milliseconds slept by the throttle */
    double rps;            /* its share of requests_per_second; 0: none */
} fds_scan_counts;

/* One document whose write failed (a conflict with conflicts=abort, or
 * any other error): the id written and the store's error. */
typedef struct fds_scan_failure {
    char id[FDS_DOC_ID_MAX + 1];
    fds_err err;
} fds_scan_failure;

/* The engine side of a task running a scan: its cancel flag (set by any
 * thread; a scan stops before its next batch, and a throttle wait within
 * FDS_SCAN_THROTTLE_STEP_MS) and its progress report, called after each
 * batch of any slice, one call at a time, with every slice's counts as of
 * its last batch (`slices[0..n)`, valid during the call). */
typedef struct fds_scan_control {
    atomic_bool cancelled;
    void (*progress)(void *arg, const fds_scan_counts *slices, uint32_t n);
    void *progress_arg;
} fds_scan_control;

/* A throttled scan sleeps in steps of at most this many milliseconds, so
 * that a cancel is seen. */
#define FDS_SCAN_THROTTLE_STEP_MS 100

/* What a scan did (BulkByScrollResponse): each slice's counts, the
 * failures of every slice in slice order, how long it took and whether a
 * cancel stopped it.  Freed by fds_scan_result_free. */
typedef struct fds_scan_result {
    fds_scan_counts *slices;
    uint32_t nslices;
    fds_scan_failure *failures;
    size_t nfailures;
    uint64_t took_ms;
    bool cancelled;
} fds_scan_result;

/* slices=auto: one slice a shard up to this many (Elasticsearch's
 * BulkByScrollParallelizationHelper.AUTO_SLICE_CEILING). */
#define FDS_SCAN_AUTO_SLICES_MAX 20
/* Slices of one scan at most: each slice is a thread. */
#define FDS_SCAN_SLICES_MAX 64

/* The slices of a scan of `from` into *out: `requested` (>= 1), or with
 * `is_auto` the source's shard count up to FDS_SCAN_AUTO_SLICES_MAX, as
 * Elasticsearch picks it.  0, or FDS_EINVAL (kind INVALID_ARGUMENT) for
 * more than FDS_SCAN_SLICES_MAX or more than the source has shards (a
 * slice is a set of shards here). */
int fds_scan_slices(fds_index *from, bool is_auto, unsigned long requested,
                    uint32_t *out, fds_err *e);

/* Run scan `s` (ctl: its task's control, or NULL for none) to its end, a
 * failure that stops it, max_docs or a cancel; then refresh the written
 * index if s->refresh.  0 with *out filled (caller frees), or an error of
 * the whole scan in `e` (the search's parse errors, the source has no
 * _source to write back, FDS_ENOMEM, a store error) with *out empty. */
int fds_scan_run(const fds_scan_spec *s, fds_scan_control *ctl, fds_scan_result *out,
                 fds_err *e);
void fds_scan_result_free(fds_scan_result *r);

/* The sum of counts c[0..n) into *sum (the rates summed too). */
void fds_scan_counts_sum(const fds_scan_counts *c, uint32_t n, fds_scan_counts *sum);

#endif
