/*
 * cluster_settings.h: the cluster settings as they stand, for the handlers
 * they govern (internal to src/http; cluster_settings.c).
 */
#ifndef FDS_HTTP_CLUSTER_SETTINGS_H
#define FDS_HTTP_CLUSTER_SETTINGS_H

#include <stdbool.h>

#include "fds_error.h"
#include "store.h"

/* action.destructive_requires_name as it stands (transient, else
 * persistent, else Elasticsearch 8's default true). */
bool fds__destructive_requires_name(fds_store *st);
/* May a write create missing index `index` (action.auto_create_index as it
 * stands)?  0, or FDS_ENOTFOUND (kind INDEX_NOT_FOUND) in
 * Elasticsearch's words: "no such index [x] and [action.auto_create_index]
 * is [false]", "... ([a,b]) doesn't match", "... contains [-x] which
 * forbids automatic creation of the index". */
int fds__auto_create_check(fds_store *st, const char *index, fds_err *err);

#endif
