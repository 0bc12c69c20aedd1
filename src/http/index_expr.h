/*
 * index_expr.h: index expressions -- the `{index}` part of a URL such as
 * `logs-*,-logs-old,metrics`, `_all` or none -- resolved to the indices
 * they name, as Elasticsearch's IndexNameExpressionResolver does with its
 * IndicesOptions (ignore_unavailable, allow_no_indices, expand_wildcards).
 */
#ifndef FDS_INDEX_EXPR_H
#define FDS_INDEX_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "fds_error.h"
#include "store.h"

typedef struct fds_index_expr_opts {
    bool ignore_unavailable; /* a missing or closed name is left out */
    bool allow_no_indices;   /* resolving to nothing is not an error */
    bool expand_open;        /* expand_wildcards: open */
    bool expand_closed;      /* expand_wildcards: closed */
    bool expand_hidden;      /* expand_wildcards: hidden (dot names) */
} fds_index_expr_opts;

/* Elasticsearch's defaults for search (IndicesOptions.strictExpandOpen...
 * lenient on no indices): ignore_unavailable false, allow_no_indices true,
 * expand_wildcards open. */
#define FDS_INDEX_EXPR_SEARCH_DEFAULTS                                        \
    ((fds_index_expr_opts){.allow_no_indices = true, .expand_open = true})

/* The URL parameters fds_index_expr_opts_read reads, for a handler's list
 * of accepted parameters. */
#define FDS_INDEX_EXPR_PARAMS "ignore_unavailable", "allow_no_indices", "expand_wildcards"

/*
 * Read ignore_unavailable, allow_no_indices and expand_wildcards (a comma
 * list of open, closed, hidden, none, all) from the URL parameters given
 * by `param(arg, name)` (NULL = absent) over `o`'s defaults.  Returns 0 or
 * FDS_EINVAL (kind INVALID_ARGUMENT, naming the value).
 */
int fds_index_expr_opts_read(const char *(*param)(void *arg, const char *name),
                             void *arg, fds_index_expr_opts *o, fds_err *err);

/*
 * Resolve `expr` (NUL-terminated; NULL, "", "_all" and "*" mean every
 * index) against the indices of `st`.  Items are separated by ','; an item
 * with '*' is a wildcard matched against every name (a name starting with
 * '.' only when the pattern does; an index.hidden one only with
 * expand_hidden, which takes both), keeping the
 * states expand_wildcards asks for; after a wildcard, an item starting
 * with '-' removes the names it matches from those gathered before it; any
 * other item is a concrete name.  On success *out is a malloc'd array of *n references
 * sorted by name, without repeats (release each with fds_index_release,
 * then free the array).
 * Errors: FDS_ENOTFOUND (kind INDEX_NOT_FOUND, err->index set) for a
 * missing concrete name unless ignore_unavailable, or for an expression
 * that resolves to nothing unless allow_no_indices; FDS_ECLOSED for a
 * closed concrete name with ignore_unavailable false is *not* raised here
 * (the search on it reports it); FDS_ENOMEM.
 */
int fds_index_expr_resolve(fds_store *st, const char *expr,
                           const fds_index_expr_opts *o, fds_index ***out,
                           size_t *n, fds_err *err);

/* Release what fds_index_expr_resolve returned (NULL is a no-op). */
void fds_index_expr_free(fds_index **ixs, size_t n);

#endif
