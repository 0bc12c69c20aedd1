/*
 * reader_cache.h: the entries of a reader cache (query.h,
 * fds_reader_cache) as the search code fills and reads them.  An entry is
 * named by a kind (a static string, e.g. "ordinals"), a field and the
 * segments it covers (their sidx handles, in the search's order), so the
 * shards of one view, which search different runs of its segments, keep
 * entries of their own.  Values are opaque to the cache: it keeps the
 * pointer, its byte count and how to free it.
 */
#ifndef FDS_READER_CACHE_H
#define FDS_READER_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "query.h"

/* Build one value of an entry: *val (owned by the cache once returned,
 * freed with free_fn) and its heap bytes in *bytes.  0, FDS_ENOMEM; NULL
 * in *val with 0: nothing to keep (a field no segment holds), remembered
 * as such. */
typedef int (*fds__rcache_build_fn)(void *arg, void **val, size_t *bytes);

/*
 * The value of entry (kind, field, segs[0, nseg)) of c into *out: the
 * cached one, or one `build` makes now (under no lock; a search asking
 * for the same entry meanwhile waits for it).  *owned false: the value
 * belongs to c, read-only, valid while the caller's view holds c.
 * *owned true: c had no room (FDS_READER_CACHE_MAX_BYTES, or the
 * process FDS_READER_CACHE_TOTAL_MAX_BYTES) or c is NULL,
 * so the caller frees the value (free_fn) after its search.  0 or the
 * builder's error (nothing cached: a later search tries again).
 */
int fds__rcache_get(fds_reader_cache *c, const char *kind, const char *field,
                    const fds_search_segment *segs, unsigned nseg,
                    fds__rcache_build_fn build, void (*free_fn)(void *),
                    void *arg, void **out, bool *owned);

#endif
