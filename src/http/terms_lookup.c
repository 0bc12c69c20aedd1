/*
 * terms_lookup.c: the document fetch behind the terms query's lookup form
 * (Elasticsearch's TermsLookup, TermsQueryBuilder#fetch), given to the
 * query parser as fds_search_limits.lookup.
 *
 *   {"terms": {"user": {"index": "users", "id": "u1", "path": "followers",
 *                       "routing": "r"}}}
 *
 * takes document u1 of index users (an alias of one index will do;
 * realtime, in the shard of the routing when one is given) and gives the
 * values of its source at the dotted path -- through arrays and objects,
 * a key holding dots too, as XContentMapValues.extractRawValues reads
 * them -- as the terms, which then count against the searched index's
 * index.max_terms_count.  No such document, or an index that keeps no
 * _source, gives no terms (the query matches nothing), as in
 * Elasticsearch; a missing index is 404 index_not_found_exception.
 * Numbers keep their digits (the source is walked by the strict scanner,
 * not parsed into doubles): 1234567890123456789 stays itself, 1.0 is the
 * keyword "1.0" as Jackson's Double would print it.
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "index_expr.h"
#include "search_run.h"

/* The one index `name` (or an alias of exactly one) names; 0 or an error
 * in e. */
static int lookup_index(fds_store *st, const char *name, fds_index **out,
                        fds_err *e)
{
    fds_index_expr_opts o = FDS_INDEX_EXPR_SEARCH_DEFAULTS;
    o.allow_no_indices = false;
    fds_index **ixs = NULL;
    size_t n = 0;
    int rc = strpbrk(name, "*,") ? fds_store_get_index(st, name, out, e)
                                 : fds_index_expr_resolve_filtered(st, name, &o, &ixs,
                                                                   &n, NULL, e);
    if (rc || !ixs)
        return rc;
    if (n != 1) {
        fds_index_expr_free(ixs, n);
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "alias [%s] has more than one index associated with "
                            "it, can't execute a single index op", name);
    }
    *out = ixs[0];
    free(ixs);
    return 0;
}

int fds__terms_lookup(void *arg, const char *index, const char *id,
                      const char *routing, const char *path, cJSON **out,
                      fds_err *e)
{
    fds_store *st = arg;
    fds_index *ix = NULL;
    int rc = lookup_index(st, index, &ix, e);
    if (rc)
        return rc;
    bool src_kept = fds_mapping_source_enabled(fds_index_mapping(ix));
    fds_doc d = {0};
    rc = fds_index_get_routed(ix, id, strlen(id), routing,
                              routing ? strlen(routing) : 0, true, &d, e);
    fds_index_release(ix);
    if (rc && rc != FDS_ENOTFOUND)
        return rc;
    fds_err_clear(e);
    cJSON *arr = cJSON_CreateArray();
    /* a source that does not scan gives the values it gave so far */
    int xrc = arr && !rc && src_kept ? fds_json_values_at(d.src, d.src_len, path, arr)
                                     : 0;
    free(d.src);
    if (!arr || xrc == FDS_ENOMEM) {
        cJSON_Delete(arr);
        return fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    *out = arr;
    return 0;
}
