/*
 * index.h: the index object's shared helpers (index.c) and the names and
 * uuids of indices (index_name.c), internal to src/store; included by
 * store_int.h after the struct layouts.  Each group names its file.
 */
#ifndef FDS_STORE_INDEX_H
#define FDS_STORE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* index.c: after the commit that deleted its catalogue rows
 * (fds__cat_index_delete, catalog_index.c), fds__index_unlink (mu and the
 * index's refresh_mu held) takes ix out of the node and removes its files,
 * leaving the caller's reference to release; the caller drops its aliases
 * from the node's list first (fds__aliases_forget_index). */
void fds__index_unlink(fds_store *s, fds_index *ix);
/* index_name.c: Elasticsearch's index-name rules (MetadataCreateIndexService.
 * validateIndexOrAliasName), worded for an index or an alias (`what`
 * "index" or "alias", with `kind`). */
int fds__check_name(const char *name, const char *what, int kind,
                    fds_err *err);

/* index_name.c and index.c: helpers of index creation shared with resize.c.
 * fds__name_taken (caller holds mu): 0 when no index, alias or running
 * resize has `name`, else FDS_EEXIST (kind ALREADY_EXISTS, "index [x/uuid]
 * already exists") or FDS_EINVAL (kind INVALID_INDEX_NAME, "already exists
 * as alias").  fds__index_alloc: a new in-memory index (refs 1, not in the
 * node's list) or NULL; fds__index_shards_set: nshards and routing_shards
 * from ix->settings; fds__make_uuid: a base64url random uuid (22 chars);
 * fds__mkdir_p: 0 or FDS_EIO; fds__rm_rf: remove a tree, errors ignored. */
int fds__name_taken(fds_store *s, const char *name, fds_err *err);
fds_index *fds__index_alloc(fds_store *s, int64_t id, const char *name,
                            const char *uuid);
void fds__index_shards_set(fds_index *ix);
void fds__make_uuid(char out[33]);
int fds__mkdir_p(const char *path);
void fds__rm_rf(const char *path);
/* The name prefix of a resize's target row until its last transaction
 * names it (no index name may start with '_'): a row found with it at
 * start-up is an interrupted resize, deleted with its folder. */
#define FDS__RESIZE_PREFIX "_resizing-"

/* index.c: wall-clock milliseconds; the errors every index operation gives
 * (each fills err->index with the index name and returns the code):
 * FDS_ENOTFOUND for a deleted or unknown index, FDS_ECLOSED for a closed
 * one, FDS_ECORRUPT with the load failure for a failed one. */
int64_t fds__now_ms(void);
/* index.c: the node's indices now, each with a reference taken (release
 * each with fds_index_release, free the array); *n of them, NULL and 0
 * when out of memory. */
fds_index **fds__indices_pin(fds_store *s, size_t *n);
int fds__index_not_found(fds_err *err, const char *name);
int fds__index_closed(fds_index *ix, fds_err *err);
int fds__index_failed(fds_index *ix, fds_err *err);
/* index.c: 0 when `ix` takes writes, refreshes and merges; else the not
 * found error for an index deleted since the caller found it (its folder
 * is gone: nothing may be written there) or the closed (failed) one.
 * Caller holds wmu or refresh_mu, which a delete takes before it marks
 * the index deleted, so the answer holds until the caller lets go. */
int fds__index_usable(fds_index *ix, fds_err *err);
/* index.c: fds__index_blocked fills err (replacing what it held) with the
 * flood-stage cluster-block error of ix and returns FDS_EIO. */
int fds__index_blocked(fds_index *ix, fds_err *err);

/* The shard of a routing value of ix (NULL: of the id); index.c. */
uint32_t fds__shard_of(const fds_index *ix, const char *id, size_t id_len,
                       const char *routing, size_t rlen);

/*
 * index.c: the calling thread becomes a background thread of the node:
 * named `name` and run at nice FDS__BACKGROUND_NICE, or its own if that
 * is higher already (fds_thread_lower; threads it starts, a refresh's
 * part threads, inherit it).  The flusher,
 * the background thread (periodic refreshes) and the merge thread call it
 * first.
 * Why: with their part threads they can keep both cores busy beside a
 * _bulk loop; at the HTTP threads' priority a search then waited behind
 * them for the CPU (30-85 ms for 5-10 ms of CPU, measured), and a new
 * connection went to the thread serving searches while the idle HTTP
 * thread waited to run, so a _bulk request held that search up for its
 * whole 200-300 ms (docs/benchmarks.md, "Searches beside a _bulk loop").
 * Nice 10 weighs 110 against nice 0's 1024 (the kernel's
 * sched_prio_to_weight): the background takes what the HTTP threads
 * leave, and still about a tenth of a core they want, so a lock it holds
 * (refresh_mu, segs_lock for a publish) is not held for long.  Errors are
 * ignored: the thread then runs at the normal priority, as before.
 */
#define FDS__BACKGROUND_NICE 10
void fds__thread_background(const char *name);

#endif
