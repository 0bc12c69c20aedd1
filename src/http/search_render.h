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
#include "search_request.h"

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
