/*
 * search_contexts.h: searches that keep their segment views between
 * requests -- scrolls and points in time (Elasticsearch's ReaderContext,
 * ScrollContext and PIT) -- held in one table with a reaper thread, and
 * the scroll's paging rules: the first page's validation, each shard's
 * cursor (search_after of its last emitted hit) and the first page's count
 * repeated.  It knows no HTTP: src/http/search_ctx.c parses the requests,
 * runs the search over a held context and answers.
 *
 * Ids are opaque to clients: base64url (no padding) of 17 bytes -- a kind
 * byte, the context number and a random secret, both little-endian 64-bit
 * -- so a guessed or stale id never reaches another context.
 */
#ifndef FDS_SEARCH_CONTEXTS_H
#define FDS_SEARCH_CONTEXTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ast/search_request.h"
#include "query.h"
#include "store.h"

/* Elasticsearch's search.max_open_scroll_context default: scrolls open at
 * once on the node; one more is refused with 429. */
#define FDS_MAX_OPEN_SCROLL_CONTEXT 500
/* Elasticsearch's search.max_keep_alive default (24h), milliseconds: a
 * longer scroll or keep_alive is refused. */
#define FDS_MAX_KEEP_ALIVE_MS (24ll * 3600 * 1000)
/* How often the reaper thread frees expired contexts, milliseconds (so an
 * idle server frees one within this long of its expiry; every find and
 * new context also reaps). */
#define FDS_CTX_REAP_INTERVAL_MS 1000

/* A context's kind (the first byte of its id). */
enum { FDS_CTX_SCROLL = 1, FDS_CTX_PIT = 2 };

#define FDS_CTX_ID_BYTES 17
#define FDS_CTX_ID_TEXT 32 /* base64 of FDS_CTX_ID_BYTES, NUL included */

/* One index of a context: its reference, its view and, for a scroll, the
 * parsed request and the last hit it emitted. */
typedef struct fds_search_ctx_shard {
    fds_index *ix;
    fds_index_view *v;
    fds_search_request *req; /* scroll: the parsed request, page after page */
    bool has_cursor;
    fds_hit cursor; /* the last hit it emitted (its own segment numbers) */
} fds_search_ctx_shard;

/* A context: its id, its keep-alive, its indices; reference counted (the
 * table holds one while it is listed, each request one more). */
typedef struct fds_search_ctx {
    int kind;
    uint64_t no, secret;
    char id[FDS_CTX_ID_TEXT];
    pthread_mutex_t mu; /* one request at a time (a view's fetch state) */
    unsigned refs;      /* the table's (while listed) + requests' */
    bool listed;
    int64_t keep_alive_ms, expires_ms;
    uint64_t opened_ns; /* when it began holding views (0: not yet) */
    fds_search_ctx_shard *sh;
    size_t n;
    /* scroll: the first page's count and best score; the next page's
     * rest_total_hits_as_int */
    bool first_done;
    uint64_t total;
    bool total_lb;
    float max_score;
    bool total_as_int;
    bool no_cache; /* the first page asked for request_cache (refused) */
    struct fds_search_ctx *next;
} fds_search_ctx;

/* Start/stop the table and its reaper thread.  Stopping frees every
 * context.  0 or FDS_ENOMEM. */
int fds_search_ctx_start(void);
void fds_search_ctx_stop(void);
/* Contexts open now, listed or reserved: scrolls and points in time. */
void fds_search_ctx_counts(unsigned *scrolls, unsigned *pits);

/* A new unlisted context of `kind` over n shards (its shards zeroed),
 * counted against its limit, with one reference for the caller; NULL when
 * out of memory or (*full) past FDS_MAX_OPEN_SCROLL_CONTEXT scrolls. */
fds_search_ctx *fds_search_ctx_new(int kind, size_t n, int64_t keep_alive_ms,
                                   bool *full);
/* List `c` (the caller's reference becomes the table's), expiring
 * keep_alive from now; its indices' open_contexts (and a scroll's
 * scroll_current) count it. */
void fds_search_ctx_list(fds_search_ctx *c);
/* The listed context of id `s` and kind `kind`, with a reference for the
 * caller (fds_search_ctx_unref), or NULL (unknown or expired; *bad: `s`
 * is not an id). */
fds_search_ctx *fds_search_ctx_find(const char *s, int kind, bool *bad);
/* A request on `c` is over: its keep-alive counts from now. */
void fds_search_ctx_touch(fds_search_ctx *c);
/* Drop a reference; the last one frees the context (views and indices
 * released, its search stats counted). */
void fds_search_ctx_unref(fds_search_ctx *c);
/* Free the listed context of id `s` (kind `kind`): 1 freed, 0 unknown,
 * -1 not an id. */
int fds_search_ctx_clear(const char *s, int kind);
/* Free every listed context of `kind`; how many. */
unsigned fds_search_ctx_clear_all(int kind);

/* The hooks of a search over a context, each with `arg` the context and
 * k the shard (the index) -- the shapes of src/http's search hooks. */
/* A scroll's first page: Elasticsearch's scroll validation
 * (SearchRequest#validate, SearchService's batch size check; FDS_EINVAL,
 * kind VALIDATION or INVALID_ARGUMENT), counting exact, and the score
 * order run as later pages run it. */
int fds_scroll_first(void *arg, size_t k, fds_index *ix,
                     fds_search_request *req, fds_err *e);
/* Later pages: after shard k's cursor, nothing counted.  0 or FDS_ENOMEM. */
int fds_scroll_next(void *arg, size_t k, fds_index *ix,
                    fds_search_request *req, fds_err *e);
/* The page about to be answered: the first page's total and max_score
 * kept (and repeated on later pages), each shard's cursor moved to its
 * last hit on the page. */
void fds_scroll_page(void *arg, fds_search_request *pg, fds_search_result *res,
                     const size_t *shard, const unsigned *seg0);
/* The first page answered: the context takes shard k's index, view and
 * request (true). */
bool fds_scroll_keep(void *arg, size_t k, fds_index *ix, fds_index_view *v,
                     fds_search_request *req);
/* Shard k's held request and view. */
fds_search_request *fds_search_ctx_req(void *arg, size_t k);
fds_index_view *fds_search_ctx_view(void *arg, size_t k);
/* A point in time numbers its shards for `_shard_doc` (returns 0). */
int fds_pit_prepare(void *arg, size_t k, fds_index *ix, fds_search_request *req,
                    fds_err *e);

#endif
