/*
 * http_int.h: the umbrella of src/http's internal headers, for the files
 * that have not yet narrowed their includes to the headers they use
 * (request.h, response.h, cat.h, handlers.h, ...), and the declarations
 * of the helpers that have no header of their own yet.
 */
#ifndef FDS_HTTP_INT_H
#define FDS_HTTP_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

#include "async_search.h"
#include "auth.h"
#include "bulk.h"
#include "cat.h"
#include "doc_source.h"
#include "fds_strbuf.h"
#include "guard.h"
#include "handlers.h"
#include "http.h"
#include "http_error.h"
#include "index_rules.h"
#include "json_out.h"
#include "node.h"
#include "req_index.h"
#include "request.h"
#include "response.h"

/* Free `n` rows of `ncol` malloc'd cells, and the array (admin.c). */
void fds__cat_rows_free(char ***rows, size_t n, size_t ncol);

/* ---- index blocks and cluster settings (mappings.c, cluster_settings.c) ---- */
/* True when no index of ixs[0..n) has a block of `level`
 * (fds_block_level); else the first one's cluster_block_exception is
 * answered, the indices are released (fds_index_expr_free) and false
 * returned (mappings.c). */
bool fds__unblocked_or_answer(fds_resp *o, fds_index **ixs, size_t n, int level);
/* action.destructive_requires_name as it stands (transient, else
 * persistent, else Elasticsearch 8's default true). */
bool fds__destructive_requires_name(fds_store *st);
/* May a write create missing index `index` (action.auto_create_index as it
 * stands)?  0, or FDS_ENOTFOUND (kind INDEX_NOT_FOUND) in
 * Elasticsearch's words: "no such index [x] and [action.auto_create_index]
 * is [false]", "... ([a,b]) doesn't match", "... contains [-x] which
 * forbids automatic creation of the index". */
int fds__auto_create_check(fds_store *st, const char *index, fds_err *err);

/* ---- search (search_api.c) --------------------------------------------------- */
/* The URL parameters a search takes besides the common ones, "scroll"
 * first, NULL-terminated (search_api.c). */
extern const char *const *const fds__search_url_params;

/* ---- aliases (aliases.c) ------------------------------------------------------ */
/* Does the comma list `pats` (wildcards, `_all`; NULL: everything) name
 * `s`? */
bool fds__names_match(const char *pats, const char *s);
/* {alias: {...}} of index `index`, as GET /{index} shows it (caller owns). */
cJSON *fds__index_aliases_json(fds_store *st, const char *index);

/* ---- templates and index creation (templates.c, admin.c) --------------------- */
/* Create index `name` from a create-index body (NULL: defaults): the
 * body parsed into an fds_index_create_req and given to
 * fds_store_create_index_from, which applies the templates
 * (index_lifecycle.c).  Its errors, and the body's (FDS_EPARSE /
 * FDS_EINVAL). */
int fds__index_create(fds_store *st, const char *name, const cJSON *body,
                      fds_err *err);
/* The URL's wait_for_active_shards (admin.c; ActiveShardCount.parseString):
 * *copies the shard copies to wait for -- 1 when absent or
 * "index-setting" (index.write.wait_for_active_shards' default), a count,
 * or FDS__ACTIVE_ALL.  0, or -1 with Elasticsearch's 400 in `o` (not a
 * number: number_format_exception; negative).  fds__active_shards_acked:
 * whether that many copies of every shard of an index of `replicas`
 * replicas are active -- the answer's shards_acknowledged (on one node,
 * more than the primary never is, which Elasticsearch answers after its
 * timeout; fieldstore answers at once). */
#define FDS__ACTIVE_ALL (-2L)
int fds__active_shards_wanted(fds_req *r, fds_resp *o, long *copies);
bool fds__active_shards_acked(long copies, uint32_t replicas);
/* The answer to a new index (create, resize): {"acknowledged":true,
 * "shards_acknowledged":...,"index":name}, shards acknowledged as
 * fds__active_shards_acked says for `copies` of `replicas`. */
void fds__index_created(fds_resp *o, const char *name, long copies, uint32_t replicas);

#endif
