/*
 * search_stats.h: search phase timers (Elasticsearch's `search` stats) and
 * the `profile` section of a search answer (internal to src/http; see
 * search_stats.c for what each phase covers).
 */
#ifndef FDS_SEARCH_STATS_H
#define FDS_SEARCH_STATS_H

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ast/search_request.h"
#include "fds_clock.h"
#include "store.h"

/* Longest query description (and shard id) a profile prints, in bytes;
 * longer ones are cut. */
#define FDS__PROFILE_DESC_MAX 4096

typedef enum fds__phase { FDS__PHASE_QUERY, FDS__PHASE_FETCH } fds__phase;


/* Start a phase of `s`: its *_current goes up.  Returns the start time
 * (fds_mono_ns, fds_clock.h) to give to fds__phase_end. */
uint64_t fds__phase_begin(fds_search_stats *s, fds__phase ph);
/* End it: *_current goes down and, when `ok`, *_total counts it and its
 * time is added (a failed phase is not counted, as in Elasticsearch).
 * Returns the phase's nanoseconds. */
uint64_t fds__phase_end(fds_search_stats *s, fds__phase ph, uint64_t t0, bool ok);

/* A plain snapshot (or sum over indices) of the counters. */
typedef struct fds__search_sum {
    uint64_t query_total, query_time_ns, query_current;
    uint64_t fetch_total, fetch_time_ns, fetch_current;
    uint64_t open_contexts, scroll_current, scroll_total, scroll_time_ns;
} fds__search_sum;

/* acc += the counters of `s` now. */
void fds__search_sum_add(fds__search_sum *acc, fds_search_stats *s);
/* Elasticsearch's `search` stats object (query_*, fetch_*, scroll_*,
 * suggest_*, open_contexts) with `query_time_in_micros` and
 * `fetch_time_in_micros` beside the millisecond times.  Caller owns it;
 * NULL when out of memory. */
cJSON *fds__search_sum_json(const fds__search_sum *s);

/* True when the JSON body (`len` bytes) has a top-level "profile": true. */
bool fds__body_wants_profile(const char *body, size_t len);

/* What a profiled search measured. */
typedef struct fds__profile {
    const char *node_id, *index;
    const fds_query *query;    /* NULL = match_all */
    uint64_t query_ns;         /* the query phase */
    bool has_fetch;            /* a fetch phase ran (hits to render) */
    uint64_t fetch_ns;         /* the fetch phase */
    uint64_t load_ns;          /* its time in fds_index_view_fetch */
    uint64_t load_docs;        /* documents it loaded */
} fds__profile;

/* The value of Elasticsearch 8's `profile` key for one shard:
 * {"shards":[{"id":"[node][index][0]","node_id","shard_id","index",
 * "cluster","searches":[{"query":[{"type","description","time_in_nanos"}],
 * "rewrite_time","collector":[...]}],"aggregations":[],"fetch":{"type":
 * "fetch","description":"","time_in_nanos","breakdown":{...},"debug":{...}}}]}
 * with Lucene's class names and Query.toString() for the root query (its
 * clauses are not timed apart, so no "children").  malloc'd JSON text, or
 * NULL when out of memory. */
char *fds__profile_json(const fds__profile *p);

#endif
