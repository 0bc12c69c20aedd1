/*
 * mappings.h: the check of an index's blocks before a handler reads or
 * changes its metadata (internal to src/http; mappings.c, which also holds
 * PUT /{index}/_block/{block}).
 */
#ifndef FDS_HTTP_MAPPINGS_H
#define FDS_HTTP_MAPPINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "response.h"
#include "store.h"

/* True when no index of ixs[0..n) has a block of `level`
 * (fds_block_level); else the first one's cluster_block_exception is
 * answered, the indices are released (fds_index_expr_free) and false
 * returned. */
bool fds__unblocked_or_answer(fds_resp *o, fds_index **ixs, size_t n, int level);

#endif
