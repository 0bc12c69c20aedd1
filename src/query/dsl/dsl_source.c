/*
 * dsl_source.c: what each hit returns, as a search body (and a top_hits
 * aggregation, and the URL parameters) asks for it -- `_source` with its
 * include and exclude patterns, stored_fields, docvalue_fields and the
 * fields API -- with the limits Elasticsearch checks on them.
 */
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_parse_int.h"

void fds__dsl_str_list_free(char **l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

/*
 * A string or an array of strings into a new list *out of *n strings.  A
 * list given before is replaced, as Elasticsearch's FetchSourceContext
 * keeps the last of "includes" and "include".  0, FDS_EPARSE (not strings;
 * the old list is kept), FDS_ENOMEM.
 */
int fds__dsl_str_list(const cJSON *v, char ***out, size_t *n)
{
    const cJSON *it;
    size_t k = 0;
    if (cJSON_IsString(v))
        k = 1;
    else if (!cJSON_IsArray(v))
        return FDS_EPARSE;
    else
        cJSON_ArrayForEach(it, v) {
            if (!cJSON_IsString(it))
                return FDS_EPARSE;
            k++;
        }
    char **l = calloc(k ? k : 1, sizeof *l);
    if (!l)
        return FDS_ENOMEM;
    size_t m = 0;
    for (it = cJSON_IsString(v) ? v : v->child; m < k; it = it->next) {
        if (!(l[m] = strdup(it->valuestring))) {
            fds__dsl_str_list_free(l, m);
            return FDS_ENOMEM;
        }
        m++;
    }
    fds__dsl_str_list_free(*out, *n);
    *out = l;
    *n = m;
    return 0;
}

/* The bounds of `_source` filtering (FDS_SOURCE_PATTERNS_MAX patterns of at
 * most FDS_SOURCE_PATTERN_LEN_MAX bytes).  0 or FDS_ETOOBIG. */
int fds__dsl_source_limits(const fds_search_request *r, fds_err *err)
{
    size_t n = r->nincludes + r->nexcludes;
    if (n > FDS_SOURCE_PATTERNS_MAX)
        return fds_err_setk(err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                            "[_source] has [%zu] include and exclude patterns, "
                            "more than the limit of [%d]", n,
                            FDS_SOURCE_PATTERNS_MAX);
    for (size_t i = 0; i < n; i++) {
        const char *p = i < r->nincludes ? r->includes[i]
                                         : r->excludes[i - r->nincludes];
        size_t l = strlen(p);
        if (l > FDS_SOURCE_PATTERN_LEN_MAX)
            return fds_err_setk(err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                                "[_source] pattern of [%zu] bytes is longer "
                                "than the limit of [%d]", l,
                                FDS_SOURCE_PATTERN_LEN_MAX);
    }
    return 0;
}

int fds__dsl_source(fds_search_request *r, const cJSON *v, fds_err *err)
{
    r->source_asked = true;
    if (cJSON_IsBool(v)) {
        r->source = cJSON_IsTrue(v);
        return 0;
    }
    if (cJSON_IsString(v) || cJSON_IsArray(v)) {
        if (fds__dsl_str_list(v, &r->includes, &r->nincludes))
            return fds__dsl_err(
                err, "[_source] must be a boolean, a string, an array "
                     "of strings or an object");
        return 0;
    }
    if (cJSON_IsObject(v)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            const char *k = it->string;
            int rc;
            if (!strcmp(k, "includes") || !strcmp(k, "include"))
                rc = fds__dsl_str_list(it, &r->includes, &r->nincludes);
            else if (!strcmp(k, "excludes") || !strcmp(k, "exclude"))
                rc = fds__dsl_str_list(it, &r->excludes, &r->nexcludes);
            else
                return fds__dsl_err(err, "Unknown key for a %s in [%s].",
                                    fds__dsl_jtype(it), k);
            if (rc)
                return fds__dsl_err(
                    err,
                    "[_source] [%s] must be a string or an array "
                    "of strings",
                    k);
        }
        return 0;
    }
    return fds__dsl_err(err,
                        "[_source] must be a boolean, a string, an array of "
                        "strings or an object");
}

/* stored_fields: a name or a list of names (Elasticsearch's
 * StoredFieldsContext.fromXContent).  "_none_" alone disables the stored
 * fields and the metadata; "_source" among them asks for `_source`; other
 * names select stored fields, and no mapping field is stored apart from
 * `_source`, so they add nothing (as Elasticsearch ignores names that are
 * not stored). */
int fds__dsl_stored_fields(fds_search_request *r, const cJSON *v,
                           fds_err *err)
{
    const cJSON *one = cJSON_IsString(v) ? v : NULL;
    if (!one && !cJSON_IsArray(v))
        return fds__dsl_err(err, "[stored_fields] must be a string or an "
                                 "array of strings");
    r->stored_fields = FDS_STORED_FIELDS_LIST;
    for (const cJSON *it = one ? one : v->child; it; it = one ? NULL : it->next) {
        if (!cJSON_IsString(it))
            return fds__dsl_err(err, "[stored_fields] must be a string or an "
                                     "array of strings");
        if (!strcmp(it->valuestring, "_none_")) {
            if (one == NULL && cJSON_GetArraySize(v) != 1)
                return fds__dsl_err(err, "[stored_fields] cannot have "
                                         "[_none_] with other fields");
            r->stored_fields = FDS_STORED_FIELDS_NONE;
        } else if (!strcmp(it->valuestring, "_source")) {
            r->source_asked = true;
            r->source = true;
        }
    }
    return 0;
}

/* What `_source` and stored_fields say together, once both are known.
 * FDS_EINVAL when _none_ meets an explicit `_source`, as Elasticsearch's
 * SearchService refuses it. */
int fds__dsl_stored_check(const fds_search_request *r, fds_err *err)
{
    if (r->stored_fields == FDS_STORED_FIELDS_NONE && r->source_asked &&
        r->source)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[stored_fields] cannot be disabled if [_source] "
                            "is requested");
    return 0;
}

/* One docvalue_fields entry (a name, or {"field", "format"}). */
static int docvalue_one(fds_search_request *r, const cJSON *v, bool fetch,
                        fds_err *err)
{
    const char *name = NULL, *fmt = NULL;
    bool unmapped = false;
    if (cJSON_IsString(v)) {
        name = v->valuestring;
    } else if (cJSON_IsObject(v)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            if (!strcmp(it->string, "field") && cJSON_IsString(it))
                name = it->valuestring;
            else if (!strcmp(it->string, "format") && cJSON_IsString(it))
                fmt = it->valuestring;
            else if (fetch && !strcmp(it->string, "include_unmapped") &&
                     (cJSON_IsBool(it) ||
                      (cJSON_IsString(it) && (!strcmp(it->valuestring, "true") ||
                                              !strcmp(it->valuestring, "false")))))
                /* Kibana sends it as a string */
                unmapped = cJSON_IsTrue(it) ||
                           (cJSON_IsString(it) && it->valuestring[0] == 't');
            else if (strcmp(it->string, "format") || !cJSON_IsNull(it))
                return fds__dsl_err(err, "[docvalue_fields] unknown field "
                                         "[%s]", it->string);
        }
    }
    if (!name || !*name)
        return fds__dsl_err(err, "[docvalue_fields] entries must be field "
                                 "names or objects with a [field]");
    if (strlen(name) >= FDS_FIELD_PATH_MAX || (fmt && strlen(fmt) > 64))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[docvalue_fields] entry is too long");
    if (fetch)
        r->nfields_asked++;
    else
        r->ndv_asked++;
    return fds__dv_resolve(r, name, fmt, fetch, unmapped, err);
}

/* "fields" (Elasticsearch 8's fields API): names, patterns or {"field",
 * "format"} objects; values from `_source` as the mapping parses them. */
static int each_entry(fds_search_request *r, const cJSON *v, bool fetch,
                      fds_err *err)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        int rc = docvalue_one(r, it, fetch, err);
        if (rc)
            return rc;
    }
    return 0;
}

int fds__dsl_fields(fds_search_request *r, const cJSON *v, fds_err *err)
{
    if (!cJSON_IsArray(v))
        return fds__dsl_err(err, "[fields] must be an array");
    return each_entry(r, v, true, err);
}

/* Elasticsearch's "Trying to retrieve too many ..." of index.<setting>. */
int fds__dsl_too_many(fds_err *err, const char *what, uint32_t max, size_t got,
                      const char *setting)
{
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "Trying to retrieve too many %s. Must be less than or "
                        "equal to: [%u] but was [%zu]. This limit can be set "
                        "by changing the [index.%s] index level setting.",
                        what, max, got, setting);
}

/* "docvalue_fields": a list of entries, appended to those given before
 * (body then URL), at most index.max_docvalue_fields_search of them. */
int fds__dsl_docvalue(fds_search_request *r, const cJSON *v, fds_err *err)
{
    if (r->count_only)
        return fds__dsl_err(err, "request does not support [docvalue_fields]");
    if (!cJSON_IsArray(v))
        return fds__dsl_err(err, "[docvalue_fields] must be an array");
    /* the count is checked first, as Elasticsearch does */
    size_t asked = r->ndv_asked + (size_t)cJSON_GetArraySize(v);
    if (asked > r->lim.max_docvalue_fields)
        return fds__dsl_too_many(err, "docvalue_fields", r->lim.max_docvalue_fields,
                        asked, "max_docvalue_fields_search");
    return each_entry(r, v, false, err);
}
