/*
 * req_index.h: the index a request's path names, an alias's one index
 * included (internal to src/http).  Apart from request.h because it asks
 * the alias resolution (aliases.c), which itself reads requests.
 */
#ifndef FDS_HTTP_REQ_INDEX_H
#define FDS_HTTP_REQ_INDEX_H

#include "request.h"

/* The index named by path segment `i` (or the one index of the alias of
 * that name), a reference the caller releases; or NULL with the
 * index_not_found error answered in `o`. */
fds_index *fds__req_index(fds_req *r, fds_resp *o, unsigned i);

#endif
