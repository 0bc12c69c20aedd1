/*
 * search_ctx.h: searches that keep their segment views between requests --
 * scrolls (`?scroll=`, `/_search/scroll`) and points in time (`/_pit`, a
 * search body's `pit`) -- answered over held contexts through search_run.h's
 * hooks (internal to src/http; search_ctx.c).
 */
#ifndef FDS_SEARCH_CTX_H
#define FDS_SEARCH_CTX_H

#include <stdbool.h>
#include <stddef.h>

#include "request.h"
#include "response.h"
#include "search_contexts.h"
#include "search_run.h"
#include "ast/search_request.h"
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

/* True when the search body has a top-level `pit` member. */
bool fds__body_has_pit(fds_req *r);
/* A search with a `pit`: over the point in time's views. */
void fds__pit_search(fds_req *r, fds_resp *o);

/* Contexts open now: scrolls and points in time (for _nodes/_stats
 * open_contexts and scroll_current). */
void fds__ctx_counts(unsigned *scrolls, unsigned *pits);

#endif
