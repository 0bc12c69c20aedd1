/*
 * terms_lookup.c: the terms query's lookup form, resolved before the body
 * is parsed (Elasticsearch's TermsLookup, TermsQueryBuilder#fetch).
 *
 *   {"terms": {"user": {"index": "users", "id": "u1", "path": "followers",
 *                       "routing": "r"}}}
 *
 * fetches document u1 of index users (realtime, in the shard of the
 * routing when one is given) and puts the values of its source at path
 * in place of the lookup object: {"terms": {"user": ["u2", "u3"]}}.  The
 * terms query then goes through the parser as any other, so
 * index.max_terms_count of the searched index applies to the fetched
 * terms.  A document that does not exist gives no terms (the query
 * matches nothing), as in Elasticsearch; a missing index is 404
 * index_not_found_exception.
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"
#include "search_ctx.h"

/* Lookups per request: each fetches a document. */
#define LOOKUP_MAX 64u

/* Append to `out` the values of `node` at `path` (plen bytes, dotted),
 * as XContentMapValues.extractRawValues does: arrays on the way are
 * walked, and a key may itself hold dots ({"a.b": 1} is at path a.b).
 * Scalars only (strings, numbers, booleans); nulls and objects add
 * nothing.  false on out of memory. */
static bool extract(const cJSON *node, const char *path, size_t plen,
                    cJSON *out)
{
    if (cJSON_IsArray(node)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, node)
            if (!extract(e, path, plen, out))
                return false;
        return true;
    }
    if (!plen) {
        if (!cJSON_IsString(node) && !cJSON_IsNumber(node) && !cJSON_IsBool(node))
            return true;
        cJSON *v = cJSON_Duplicate(node, false);
        return v && cJSON_AddItemToArray(out, v);
    }
    if (!cJSON_IsObject(node))
        return true;
    const cJSON *c;
    cJSON_ArrayForEach(c, node) { /* a key equal to a prefix of the path */
        size_t kl = strlen(c->string);
        if (kl <= plen && !memcmp(c->string, path, kl) &&
            (kl == plen || path[kl] == '.')) {
            size_t skip = kl == plen ? kl : kl + 1;
            if (!extract(c, path + skip, plen - skip, out))
                return false;
        }
    }
    return true;
}

/* The terms at the lookup object `lk` (fetched), as a new array in *out.
 * 0, or an error in e: FDS_EINVAL (a malformed lookup), the store's
 * (FDS_ENOTFOUND for the index, FDS_ECORRUPT, ...), FDS_ENOMEM. */
static int fetch_terms(fds_store *st, const cJSON *lk, cJSON **out, fds_err *e)
{
    const char *idx = NULL, *id = NULL, *path = NULL, *routing = NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, lk) {
        const char **slot = !strcmp(it->string, "index")   ? &idx
                          : !strcmp(it->string, "id")      ? &id
                          : !strcmp(it->string, "path")    ? &path
                          : !strcmp(it->string, "routing") ? &routing
                                                           : NULL;
        if (!slot)
            return fds_err_setk(e, FDS_EINVAL, FDS_KIND_QUERY_PARSE,
                                "[terms] query does not support [%s] within "
                                "lookup element", it->string);
        if (!cJSON_IsString(it))
            return fds_err_setk(e, FDS_EINVAL, FDS_KIND_QUERY_PARSE,
                                "[terms] query lookup element [%s] must be a "
                                "string", it->string);
        *slot = it->valuestring;
    }
    const char *miss = !idx ? "index" : !id ? "id" : !path ? "path" : NULL;
    if (miss)
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_QUERY_PARSE,
                            "[terms] query lookup element requires specifying "
                            "the %s.", miss);
    fds_index *ix = NULL;
    int rc = fds_store_get_index(st, idx, &ix, e);
    if (rc)
        return rc;
    fds_doc d = {0};
    rc = fds_index_get_routed(ix, id, strlen(id), routing,
                              routing ? strlen(routing) : 0, true, &d, e);
    fds_index_release(ix);
    cJSON *arr = cJSON_CreateArray();
    if (!arr) {
        free(d.src);
        return fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    if (rc == FDS_ENOTFOUND) { /* no document: no terms */
        fds_err_clear(e);
        *out = arr;
        return 0;
    }
    if (rc) {
        cJSON_Delete(arr);
        return rc;
    }
    cJSON *src = cJSON_ParseWithLength((const char *)d.src, d.src_len);
    free(d.src);
    if (src && !extract(src, path, strlen(path), arr)) {
        cJSON_Delete(src);
        cJSON_Delete(arr);
        return fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    cJSON_Delete(src); /* a source without JSON (none kept): no terms */
    *out = arr;
    return 0;
}

/* Is `v` (a field of a terms query) a lookup object? */
static bool is_lookup(const cJSON *v)
{
    return cJSON_IsObject(v) && (cJSON_GetObjectItemCaseSensitive(v, "id") ||
                                 cJSON_GetObjectItemCaseSensitive(v, "path") ||
                                 cJSON_GetObjectItemCaseSensitive(v, "index"));
}

/* Replace every lookup under `node` with its terms; *n counts them.
 * Depth is bounded by cJSON's nesting limit.  0 or an error in e. */
static int resolve(fds_store *st, cJSON *node, unsigned *n, fds_err *e)
{
    cJSON *c;
    cJSON_ArrayForEach(c, node) {
        if (c->string && !strcmp(c->string, "terms") && cJSON_IsObject(c)) {
            cJSON *f = c->child;
            while (f) {
                cJSON *next = f->next;
                if (is_lookup(f)) {
                    if (++*n > LOOKUP_MAX)
                        return fds_err_setk(e, FDS_EINVAL,
                                            FDS_KIND_INVALID_ARGUMENT,
                                            "a search may hold at most %u terms "
                                            "lookups", LOOKUP_MAX);
                    cJSON *terms;
                    int rc = fetch_terms(st, f, &terms, e);
                    if (rc)
                        return rc;
                    /* the replacement keeps its own key: the field's */
                    if (!(terms->string = strdup(f->string))) {
                        cJSON_Delete(terms);
                        return fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                            "out of memory");
                    }
                    cJSON_ReplaceItemViaPointer(c, f, terms);
                }
                f = next;
            }
        }
        if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
            int rc = resolve(st, c, n, e);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int fds__terms_lookup(fds_store *st, const char *body, size_t len, char **out,
                      size_t *out_len, fds_err *e)
{
    *out = NULL;
    *out_len = 0;
    /* no lookup without one of its keys: most bodies are never parsed here */
    if (!body || !len || (!memmem(body, len, "\"path\"", 6) &&
                          !memmem(body, len, "\"id\"", 4) &&
                          !memmem(body, len, "\"index\"", 7)))
        return 0;
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!root) /* the parser reports the body's syntax error */
        return 0;
    unsigned n = 0;
    int rc = resolve(st, root, &n, e);
    if (!rc && n) {
        *out = cJSON_PrintUnformatted(root);
        if (!*out)
            rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        else
            *out_len = strlen(*out);
    }
    cJSON_Delete(root);
    return rc;
}
