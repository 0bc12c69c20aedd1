/*
 * dsl.h: Elasticsearch query DSL in, Elasticsearch search response out.
 *
 * src/http calls fds_search_parse() on a `_search` / `_count` body (and
 * fds_search_apply_param() for URL parameters), asks the store for its
 * segments, runs fds_search_execute() (src/query/query.h) and turns the
 * result into the response body with fds_search_render(), which splices each
 * hit's stored `_source` bytes into the output verbatim.
 *
 * Built into the `fds_query` library (src/query/CMakeLists.txt compiles
 * ../http/dsl.c), so it links wherever the query engine does.
 */
#ifndef FDS_DSL_H
#define FDS_DSL_H

#include <stddef.h>
#include <stdint.h>

#include "fds_error.h"
#include "query.h"

/*
 * Parse a search body (`len` bytes, JSON; an empty body means match_all)
 * against mapping `m` (field types decide how `match` analyses its text).
 * Keys: query, from, size, _source, sort, track_total_hits, search_after,
 * explain, track_scores.  `for_count` != 0 parses a `_count` body (query
 * only).  On success *out is a new request (free with
 * fds_search_request_free) and 0 is returned.  Errors (err filled, status
 * 400): FDS_EPARSE "parsing_exception" naming the offending part (malformed
 * JSON, unknown key, unknown query type, bad value), FDS_EINVAL
 * "illegal_argument_exception" (from + size > index.max_result_window
 * 10000, sort on a text field, search_after length); FDS_ENOMEM.
 */
int fds_search_parse(const char *body, size_t len, const fds_mapping *m,
                     int for_count, fds_search_request **out, fds_err *err);

/*
 * Apply one URL parameter of `_search`: "size", "from", "q" (Lucene syntax
 * subset: space-separated `field:value` or bare words matched against every
 * text field), "track_total_hits" ("true", "false" or a number),
 * "explain".  Unknown keys are ignored (the HTTP layer decides which
 * parameters it rejects).  Returns 0, FDS_EPARSE / FDS_EINVAL (err filled,
 * 400), FDS_ENOMEM.
 */
int fds_search_apply_param(fds_search_request *req, const char *key,
                           const char *value, fds_err *err);

/*
 * Callback that fills src[i] / src_len[i] with the stored `_source` bytes of
 * hits[i] for i < n.  The pointers must stay valid until fds_search_render
 * returns (the store keeps the decoded blocks; hits sharing a block should
 * decode it once).  Returns 0 or a negative FDS_E* code with err filled.
 */
typedef int (*fds_fetch_fn)(void *arg, const fds_hit *hits, size_t n,
                            const uint8_t **src, size_t *src_len,
                            fds_err *err);

/*
 * Render the response of `res` (from fds_search_execute over `segs`, the
 * same array, which gives each hit's `_id`) as a
 * malloc'd, NUL-terminated JSON body; *out_len gets its length.
 * took_ms: milliseconds to report.  `fetch` may be NULL when the request
 * does not need `_source` (then "_source" is omitted).  For a `_count`
 * request the body is {"count":N,"_shards":{...}}.  Returns NULL with err
 * filled on a fetch error (the fetch's code) or ENOMEM.
 */
char *fds_search_render(const fds_search_request *req,
                        const fds_search_result *res,
                        const fds_search_segment *segs, const char *index_name,
                        long took_ms, fds_fetch_fn fetch, void *fetch_arg,
                        size_t *out_len, fds_err *err);

#endif
