/*
 * index_lifecycle.h: creating an index and answering a new one, shared by
 * create index and resize (internal to src/http; index_lifecycle.c).
 */
#ifndef FDS_HTTP_INDEX_LIFECYCLE_H
#define FDS_HTTP_INDEX_LIFECYCLE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "fds_error.h"
#include "request.h"
#include "response.h"
#include "store.h"

/* Create index `name` from a create-index body (NULL: defaults): the
 * body parsed into an fds_index_create_req and given to
 * fds_store_create_index_from, which applies the templates.  Its errors,
 * and the body's (FDS_EPARSE / FDS_EINVAL). */
int fds__index_create(fds_store *st, const char *name, const cJSON *body,
                      fds_err *err);
/* The URL's wait_for_active_shards (ActiveShardCount.parseString):
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
