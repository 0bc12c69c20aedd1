/*
 * doc_write.h: what the single-document writes (docs.c, doc_update.c)
 * and _bulk (bulk.c) share: the refresh policy, id and concurrency checks,
 * the index a write goes to, and the write-result body (internal to
 * src/http).
 */
#ifndef FDS_HTTP_DOC_WRITE_H
#define FDS_HTTP_DOC_WRITE_H

#include <stdbool.h>
#include <string.h>

#include "fds_error.h"
#include "fds_strbuf.h"
#include "request.h"
#include "response.h"
#include "store.h"

/* A JSON string literal of a NUL-terminated string (fds_json_escape). */
static inline void fds__sb_json_str(fds_strbuf *b, const char *s)
{
    fds_strbuf_put_json_string(b, s, strlen(s));
}

/* What an update answer adds to a write result: "noop" (nothing written:
 * `_shards` all 0) and the "get" object of the source it asked for. */
typedef struct fds__upd_answer {
    bool noop;
    fds_strbuf get;          /* the "get" object's text, or empty */
} fds__upd_answer;

/* ?refresh=true|wait_for|false: should the write refresh? */
bool fds__want_refresh(fds_req *r);
/* ?refresh is true, false, wait_for or empty; anything else is a 400
 * (answered), as Elasticsearch's WriteRequest.RefreshPolicy.parse. */
bool fds__refresh_ok(fds_req *r, fds_resp *o);
/* refresh=true or refresh= (not wait_for): Elasticsearch's answer then says
 * "forced_refresh": true (DocWriteResponse#innerToXContent). */
bool fds__forced_refresh(fds_req *r);
/* Elasticsearch validates a single write's id before anything else (no
 * index is created for it).  Returns false with the 400 in `o`. */
bool fds__id_valid(fds_resp *o, const fds_write_op *op);
/* if_seq_no / if_primary_term / version / version_type from the URL into
 * `op`.  Returns false with a 400 in `o` for bad values. */
bool fds__concurrency_params(fds_req *r, fds_resp *o, fds_write_op *op);

/* The write-result body of Elasticsearch (index/delete/update responses and
 * bulk items share it), appended to `b`; bulk items also carry "status"
 * (`with_status`); `u` is an update's extra (or NULL). */
void fds__write_item(fds_strbuf *b, const char *index, const fds_write_op *op,
                     const fds_write_result *w, bool with_status,
                     bool refreshed, const fds__upd_answer *u);
/* The answer to a single-document write (successful: errors go through
 * fds__resp_error). */
void fds__write_single(fds_resp *o, const char *index, const fds_write_op *op,
                       const fds_write_result *w, bool refreshed,
                       const fds__upd_answer *u);

/* The index `name` a write goes to: the index, or the write index of the
 * alias of that name, or, when neither exists, a new index created from
 * the templates that match the name, as Elasticsearch does on writes
 * (action.auto_create_index).  Returns 0 with a reference in *ix the
 * caller releases, or an error code with `err` filled. */
int fds__index_for_write(fds_store *st, const char *name, fds_index **ix,
                         fds_err *err);
/* The write options of Elasticsearch that fieldstore answers as
 * Elasticsearch would on a cluster without them, for a write to `index`:
 * `require_alias` true fails unless `index` is an alias, and a `pipeline`
 * other than "_none" does not exist (no ingest pipelines).  NULL / false =
 * not given.  Returns 0 or the error in `err`. */
int fds__write_opts_check(fds_store *st, const char *index,
                          const char *pipeline, bool require_alias,
                          fds_err *err);

#endif
