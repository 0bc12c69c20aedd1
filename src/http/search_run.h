/*
 * search_run.h: a search over shards answered (search_run.c), for the
 * handlers that resolve its indices: _search and _count (search_api.c),
 * and scrolls and points in time over held contexts (search_ctx.c), with
 * the hooks through which a held context takes part.  Internal to
 * src/http.
 */
#ifndef FDS_SEARCH_RUN_H
#define FDS_SEARCH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index_expr.h"
#include "request.h"
#include "response.h"
#include "ast/search_request.h"

/*
 * How a search runs over a held context (a scroll's or point in time's).  Shards are numbered
 * as the indices handed to it.  Every member may be NULL.
 */
typedef struct fds__search_hooks {
    void *arg;
    /* the first page of a scroll: parse without the from + size window
     * (prepare checks the batch size against it as Elasticsearch words it) */
    bool scroll;
    /* shard k's held request, reused (not freed), or NULL: parse the body */
    fds_search_request *(*req)(void *arg, size_t k);
    /* shard k's held view (not released); NULL hook: acquire one */
    fds_index_view *(*view)(void *arg, size_t k);
    /* adjust shard k's request before it runs; 0 or an FDS_E* code with
     * `e` filled (that shard fails) */
    int (*prepare)(void *arg, size_t k, fds_index *ix, fds_search_request *req,
                   fds_err *e);
    /* the page about to be rendered with request `pg`: hits with the
     * merged segment numbers, shard[i] hits[i]'s shard, seg0[k] the first
     * merged segment of shard k (hits[i].seg - seg0[shard[i]] is local) */
    void (*page)(void *arg, fds_search_request *pg, fds_search_result *res,
                 const size_t *shard, const unsigned *seg0);
    /* the answer is 200: take shard k's index reference, view and request
     * (true) or leave them to be released */
    bool (*keep)(void *arg, size_t k, fds_index *ix, fds_index_view *v,
                 fds_search_request *req);
    /* "_scroll_id" or "pit_id" and its value, the answer's first member */
    const char *id_key, *id;
} fds__search_hooks;

/*
 * The search over indices ixs[0, n) (the array and, unless `hk` holds
 * them, its references are taken) answered into `o`: each index's shards
 * (those `routing` names, or all), or with `hk` one run per index.
 * filters[i]: the filtered aliases' filter of index i (NULL array or
 * entry: none); `opts` resolve the body's indices_boost (NULL: no boosts,
 * as for a held scroll whose requests carry them).  `count`: a _count
 * (terminate_after `tav` per shard, 0 none); `profile` adds the profile;
 * t0: the request's start (fds_mono_us) for `took`.
 */
void fds__search_shards(fds_req *r, fds_resp *o, fds_index **ixs,
                        char **filters, size_t n, bool count, uint64_t tav,
                        bool profile, long long t0,
                        const fds_index_expr_opts *opts, const char *routing,
                        const fds__search_hooks *hk);

/* Run a search over indices ixs[0, n) (the malloc'd array is freed; its
 * references are released unless hk->view holds them) with hooks `hk`;
 * the answer goes to `o`. */
void fds__search_held(fds_req *r, fds_resp *o, fds_index **ixs, size_t n,
                      const fds__search_hooks *hk);

/* fds_search_limits.lookup over the store `arg` (terms_lookup.c): the
 * values at `path` of document `id` of `index` for a terms lookup. */
int fds__terms_lookup(void *arg, const char *index, const char *id,
                      const char *routing, const char *path, struct cJSON **out,
                      fds_err *e);

#endif
