/*
 * search_render.h: a search result (src/query/query.h) as the body of
 * Elasticsearch's `_search` / `_count` response.
 *
 * src/http parses the body with fds_search_parse() (search_request.h), asks
 * the store for its segments, runs fds_search_execute() and turns the result
 * into the response body with fds_search_render(), which splices each hit's
 * stored `_source` bytes into the output verbatim.
 */
#ifndef FDS_SEARCH_RENDER_H
#define FDS_SEARCH_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "fds_error.h"
#include "fds_strbuf.h"
#include "query.h"
#include "ast/search_request.h"

/*
 * Callback that fills src[i] / src_len[i] with the stored `_source` bytes of
 * hits[i] for i < n.  The pointers must stay valid until fds_search_render
 * returns (the store keeps the decoded blocks; hits sharing a block should
 * decode it once).  Returns 0 or a negative FDS_E* code with err filled.
 */
typedef int (*fds_fetch_fn)(void *arg, const fds_hit *hits, size_t n,
                            const uint8_t **src, size_t *src_len,
                            fds_err *err);

/* hits[i]'s `_version` and `_seq_no` (for a request with version or
 * seq_no_primary_term). */
typedef void (*fds_meta_fn)(void *arg, const fds_hit *hit, int64_t *version,
                            int64_t *seq_no);

/* hit's `_routing`: the routing its document was written with (*len
 * bytes, valid until the render returns), or NULL for none. */
typedef const char *(*fds_routing_fn)(void *arg, const fds_hit *hit,
                                      size_t *len);

/* The name of the index segment `seg` (an index into the segments given
 * to fds_search_execute) belongs to; valid until the render returns. */
typedef const char *(*fds_index_of_fn)(void *arg, uint32_t seg);

/* The parsed request of the index segment `seg` belongs to (each index
 * resolves docvalue_fields against its own mapping); NULL: the page's. */
typedef const fds_search_request *(*fds__req_of_fn)(void *arg, uint32_t seg);

/* `_shards` of the answer: `total` shards searched, `failed` of them
 * failed, `failures` their JSON array text (NULL when none). */
typedef struct fds_shards_info {
    unsigned total, failed;
    const char *failures;
    /* terminate_after (`_search`, `_count`): -1 not asked, else whether a
     * shard stopped collecting at it (printed as "terminated_early") */
    int terminated_early;
} fds_shards_info;

/* Where the render reads what the hits carry besides `_id` and the score.
 * Any callback may be NULL: no `_source` (fetch), `_version`/`_seq_no`
 * printed as -1 (meta), `index_name` for every hit (index_of), no
 * `_routing` (routing); shards may be NULL: one shard, successful. */
typedef struct fds_hit_source {
    fds_fetch_fn fetch;
    fds_meta_fn meta;
    fds_index_of_fn index_of;
    fds__req_of_fn req_of;
    fds_routing_fn routing;
    const fds_shards_info *shards;
    void *arg;
} fds_hit_source;

/*
 * Render the response of `res` (from fds_search_execute over `segs`, the
 * same array, which gives each hit's `_id`) as a
 * malloc'd, NUL-terminated JSON body; *out_len gets its length.
 * took_ms: milliseconds to report.  `src` (may be NULL: none of it) gives
 * `_source`, `_version`/`_seq_no` and per-segment index names.  For a `_count`
 * request the body is {"count":N,"_shards":{...}}.  Returns NULL with err
 * filled on a fetch error (the fetch's code) or ENOMEM.
 */
char *fds_search_render(const fds_search_request *req,
                        const fds_search_result *res,
                        const fds_search_segment *segs, const char *index_name,
                        long took_ms, const fds_hit_source *src,
                        size_t *out_len, fds_err *err);

/*
 * Append top_hits result `r` (aggs.h; its hits' segments index `segs`,
 * the response's array: fds_aggs_rebase) to `b` as Elasticsearch's
 * InternalTopHits prints it: {"hits":{"total":{"value":N,"relation":"eq"},
 * "max_score":S,"hits":[...]}}, each hit as a search hit of its top_hits
 * request (`_index`, `_id`, `_score` -- null when sorted by a field without
 * track_scores --, `_source`, `fields`, `highlight` of the search's query,
 * `sort`) with `_source` and the rest from `hs` as fds_search_render takes
 * them (NULL: none).  Returns 0, FDS_ENOMEM or the fetch's error (err
 * filled); out of memory in b shows as b->oom.
 */
struct fds_agg_result;
int fds__agg_hits_put(fds_strbuf *b, const struct fds_agg_result *r,
                      const fds_search_segment *segs, const fds_hit_source *hs,
                      fds_err *err);
/* A top_metrics result as Elasticsearch's InternalTopMetrics: {"top":
 * [{"sort": [value], "metrics": {field: value or null}}]}, best first,
 * the metrics read from each doc's `_source` as docvalue_fields read
 * them.  0, FDS_ENOMEM or the fetch's error (err filled). */
int fds__agg_top_metrics_put(fds_strbuf *b, const struct fds_agg_result *r,
                             const fds_hit_source *hs, fds_err *err);

/*
 * Append the stored `_source` bytes s[0..n) to `b` filtered as a search's
 * `_source` filtering does (wildcard include and exclude patterns over
 * dotted paths; none of either = the whole source), the selected members
 * copied byte for byte; for get, mget and update answers.  The patterns
 * are only read.  Out of memory shows as b->oom.
 */
void fds__source_put(fds_strbuf *b, char **includes, size_t nincludes,
                     char **excludes, size_t nexcludes, const uint8_t *s, size_t n);

#endif
