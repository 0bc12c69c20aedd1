/*
 * search_ctx.h: searches that keep their segment views between requests --
 * scrolls (`?scroll=`, `/_search/scroll`) and points in time (`/_pit`, a
 * search body's `pit`) -- and the hooks through which search_api.c runs a
 * search over such a held context (internal to src/http; search_ctx.c).
 */
#ifndef FDS_SEARCH_CTX_H
#define FDS_SEARCH_CTX_H

#include <stdbool.h>
#include <stddef.h>

#include "http_int.h"
#include "ast/search_request.h"
#include "search_contexts.h"

/*
 * How search_api.c's search runs over a held context.  Shards are numbered
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

/* Run a search over indices ixs[0, n) (the malloc'd array is freed; its
 * references are released unless hk->view holds them) with hooks `hk`;
 * the answer goes to `o` (search_api.c). */
void fds__search_held(fds_req *r, fds_resp *o, fds_index **ixs, size_t n,
                      const fds__search_hooks *hk);

/* Start/stop the context table and its reaper thread (fds_http_start and
 * fds_http_stop; search_contexts.h).  Stopping frees every context.  0 or
 * FDS_ENOMEM. */
int fds__ctx_start(void);
void fds__ctx_stop(void);

/* A `?scroll=` search over `n` shards is about to run: check the
 * parameters, reserve a context (Elasticsearch's limit) and fill `hk`.
 * False when refused (the answer is in `o`). */
bool fds__scroll_begin(fds_req *r, fds_resp *o, const char *keep_alive,
                       size_t n, fds__search_hooks *hk);
/* ... and has answered into `o`: publish the context when it answered
 * 200, else drop it. */
void fds__scroll_end(fds__search_hooks *hk, fds_resp *o);

/* fds_search_limits.lookup over the store `arg` (terms_lookup.c): the
 * values at `path` of document `id` of `index` for a terms lookup. */
int fds__terms_lookup(void *arg, const char *index, const char *id,
                      const char *routing, const char *path, struct cJSON **out,
                      fds_err *e);

/* True when the search body has a top-level `pit` member. */
bool fds__body_has_pit(fds_req *r);
/* A search with a `pit`: over the point in time's views. */
void fds__pit_search(fds_req *r, fds_resp *o);

/* Contexts open now: scrolls and points in time (for _nodes/_stats
 * open_contexts and scroll_current). */
void fds__ctx_counts(unsigned *scrolls, unsigned *pits);

/* Handlers: GET|POST /_search/scroll[/{id}], DELETE /_search/scroll[/{ids}],
 * POST /{index}/_pit, DELETE /_pit. */
void fds__h_scroll(fds_req *r, fds_resp *o);
void fds__h_scroll_clear(fds_req *r, fds_resp *o);
void fds__h_pit_open(fds_req *r, fds_resp *o);
void fds__h_pit_close(fds_req *r, fds_resp *o);

#endif
