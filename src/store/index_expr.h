/*
 * index_expr.h: index expressions -- the `{index}` part of a URL such as
 * `logs-*,-logs-old,metrics`, `_all` or none -- resolved to the indices
 * they name, as Elasticsearch's IndexNameExpressionResolver does with its
 * IndicesOptions (ignore_unavailable, allow_no_indices, expand_wildcards):
 * wildcards expanded, aliases resolved to their indices (with their
 * filters), date math in names.  A rule of the store's, so that every
 * caller names indices the same way; src/http only reads the URL's
 * options through a parameter callback.
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
    bool take_failed;        /* a failed (red, fds_index_failure) index
                                that is open counts as open, so wildcards
                                take it (search: its shards are reported
                                failed, as Elasticsearch reports a
                                corrupted shard's) rather than as closed */
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
/*
 * Check the items of `expr` (NUL-terminated; NULL is fine) as
 * Elasticsearch's IndexNameExpressionResolver validates each resource
 * expression before it resolves any: an item as given (so "-_x", an
 * exclusion, passes) starting with '_' other than `_all`
 * names no index or alias but an API, reached here because the path
 * matched no endpoint of that name for the request's method (GET /_bulk
 * falls through to get index).  Returns 0, or FDS_EINVAL (kind
 * INVALID_INDEX_NAME, "Invalid index name [_bulk], must not start with
 * '_'.", err->index set).  fds_index_expr_resolve checks this itself.
 */
int fds_index_expr_check(const char *expr, fds_err *err);

/* One index or alias name as a create or resize takes it: `<...>` date
 * math resolved now (Elasticsearch's resolveDateMathExpression, e.g.
 * <logs-{now/d}> -> logs-2026.12.01), any other name copied.  Writes
 * out[0, cap); 0, or FDS_EINVAL (kind INVALID_ARGUMENT, "invalid date math
 * expression [...]") when it does not parse or fit. */
int fds_index_name_resolve(const char *name, char *out, size_t cap, fds_err *err);

/* Every alias name of a[0, n) given as `<...>` date math resolved now (as
 * fds_index_name_resolve), as Elasticsearch resolves the aliases of a new
 * index; a[i].alias is replaced (freed and malloc'd).  0, FDS_EINVAL,
 * FDS_ENOMEM (kind INTERNAL). */
int fds_alias_names_resolve(fds_alias *a, size_t n, fds_err *err);

int fds_index_expr_resolve(fds_store *st, const char *expr,
                           const fds_index_expr_opts *o, fds_index ***out,
                           size_t *n, fds_err *err);

/*
 * fds_index_expr_resolve, with aliases: a concrete item that is no index
 * but an alias takes the alias's indices (a closed one left out with
 * ignore_unavailable); a wildcard also matches alias names (a hidden alias
 * only with expand_wildcards=hidden; a dot-named one only for a dot
 * pattern) and takes their indices in the states expand_wildcards asks
 * for; '-' items remove an alias's indices like an index's.  `_all` means
 * every index, not every alias.  When `filters` is not NULL, *filters is a
 * malloc'd array parallel to *out: NULL for an index the expression
 * reaches by its name, an index wildcard or an alias without a filter,
 * else the JSON text of the query its filtered aliases give (several ORed
 * in a bool `should`), to be ANDed into a search on it (free with
 * fds_index_expr_filters_free).  Errors as fds_index_expr_resolve.
 */
int fds_index_expr_resolve_filtered(fds_store *st, const char *expr,
                                    const fds_index_expr_opts *o,
                                    fds_index ***out, size_t *n,
                                    char ***filters, fds_err *err);
void fds_index_expr_filters_free(char **filters, size_t n);

/*
 * A search body's `indices_boost` (body[0..len) is the request's JSON,
 * already checked; a list of {expression: boost} objects, or one object of
 * them) as one factor per index of ixs[0..n): the first entry whose
 * expression (an index, an alias, a wildcard: resolved with `o`) takes the
 * index gives its boost; 1 otherwise (Elasticsearch's
 * SearchSourceBuilder.indexBoosts).  Returns 0, FDS_ENOTFOUND for an entry
 * naming nothing unless o->ignore_unavailable, FDS_EPARSE (kind PARSE)
 * for another shape, FDS_ENOMEM.
 */
int fds_index_expr_boosts(fds_store *st, const char *body, size_t len,
                          const fds_index_expr_opts *o, fds_index *const *ixs,
                          size_t n, float *boosts, fds_err *err);

/* Release what fds_index_expr_resolve returned (NULL is a no-op). */
void fds_index_expr_free(fds_index **ixs, size_t n);

#endif
