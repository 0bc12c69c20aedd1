/*
 * bulk.h: the NDJSON body of _bulk as action/metadata and source items,
 * split apart from the handler so that the fuzz target can drive it
 * (internal to src/http).
 */
#ifndef FDS_HTTP_BULK_H
#define FDS_HTTP_BULK_H

#include <stddef.h>

#include "fds_error.h"
#include "store.h"

/* The NDJSON splitting of fds__h_bulk alone (the fuzz target
 * tests/fuzz/fuzz_bulk.c calls it): parse `body` (`len` bytes followed by a
 * NUL) into action/metadata + source items; when it all parses, call
 * `visit` (when not NULL) on each (`op->src` points into `body`); free
 * them.  Returns 0, FDS_EPARSE / FDS_EINVAL (err filled, as _bulk answers
 * 400), FDS_ENOMEM. */
typedef void (*fds__bulk_visit)(void *arg, const char *action,
                                const char *index, const fds_write_op *op);
int fds__bulk_parse(const char *body, size_t len, const char *default_index,
                    fds__bulk_visit visit, void *arg, fds_err *err);

#endif
