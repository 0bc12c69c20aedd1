/*
 * mappings.c: the mapping endpoints that change or look into one field --
 * PUT /{index}/_mapping (add fields to live indices, Elasticsearch's put
 * mapping API) and GET [/{index}]/_mapping/field/{fields} (the get field
 * mapping API).  GET /{index}/_mapping, the whole mapping, is
 * index_lifecycle.c's.
 * Also PUT /{index}/_block/{block}, which sets an index.blocks.* setting.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_text.h"
#include "handlers.h"
#include "index_expr.h"
#include "mappings.h"
#include "request.h"
#include "response.h"

static const char *param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}

bool fds__unblocked_or_answer(fds_resp *o, fds_index **ixs, size_t n, int level)
{
    fds_err e;
    fds_err_clear(&e);
    for (size_t i = 0; i < n; i++)
        if (fds_index_check_block(ixs[i], level, &e)) {
            fds_index_expr_free(ixs, n);
            fds__resp_error(o, &e);
            return false;
        }
    return true;
}

/* With ?write_index_only=true, the expression's aliases stand for their
 * write index alone (an alias of one index: that index), as
 * PutMappingRequest.writeIndexOnly: drop from ixs the indices that are
 * reached only through an alias whose write index they are not.  Returns 0
 * or FDS_EINVAL (an alias without a write index, Elasticsearch's words). */
static int keep_write_indices(fds_req *r, fds_index **ixs, size_t *n, fds_err *e)
{
    fds_alias *al = NULL;
    size_t nal = 0;
    if (fds_store_aliases_list(r->store, &al, &nal))
        return fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    bool *keep = calloc(*n + 1, sizeof *keep);
    char *copy = strdup(r->seg[0]);
    int rc = keep && copy ? 0 : fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                             "out of memory");
    for (char *sv = NULL, *t = rc ? NULL : strtok_r(copy, ",", &sv); t && !rc;
         t = strtok_r(NULL, ",", &sv)) {
        const char *write = NULL, *only = NULL;
        size_t members = 0;
        for (size_t a = 0; a < nal; a++)
            if (!strcmp(al[a].alias, t)) {
                members++;
                if (al[a].is_write_index == 1)
                    write = al[a].index;
                else if (al[a].is_write_index == -1)
                    only = al[a].index;
            }
        bool is_alias = members > 0;
        if (!write && members == 1)
            write = only;
        if (is_alias && !write) {
            rc = fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "no write index is defined for alias [%s]. The "
                              "write index may be explicitly disabled using "
                              "is_write_index=false or the alias points to "
                              "multiple indices without one being designated "
                              "as a write index", t);
            break;
        }
        for (size_t i = 0; i < *n; i++) {
            const char *name = fds_index_name(ixs[i]);
            if (is_alias ? !strcmp(name, write)
                         : strchr(t, '*') ? fds_glob_match(t, name, strlen(name))
                                          : !strcmp(t, name))
                keep[i] = true;
        }
    }
    size_t w = 0;
    for (size_t i = 0; !rc && i < *n; i++) {
        if (keep[i])
            ixs[w++] = ixs[i];
        else
            fds_index_release(ixs[i]);
    }
    if (!rc)
        *n = w;
    free(keep);
    free(copy);
    fds_aliases_free(al, nal);
    return rc;
}

/* PUT|POST /{index}/_mapping: merge the body's fields and root parameters
 * into the mapping of every index the expression names (open and closed;
 * a missing name or no match is an error, as PutMappingRequest's
 * IndicesOptions).  Every index is checked before any changes, so a
 * conflict on one changes none; each is committed to the catalogue
 * before the answer.  timeout and master_timeout are accepted (one node:
 * nothing to wait for). */
void fds__h_mapping_put(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {FDS_INDEX_EXPR_PARAMS, "write_index_only",
                                         "timeout", "master_timeout", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.expand_open = true, .expand_closed = true};
    fds_index **ixs = NULL;
    size_t n = 0;
    cJSON *body = NULL;
    int rc = fds_index_expr_opts_read(param_cb, r, &opts, &e);
    if (!rc)
        rc = fds__body_checked(r, &body, &e);
    if (!rc && !cJSON_IsObject(body))
        rc = fds_err_setk(&e, FDS_EINVAL, FDS_KIND_VALIDATION,
                          "Validation Failed: 1: mapping source is missing;");
    if (!rc)
        rc = fds_index_expr_resolve_filtered(r->store, r->seg[0], &opts, &ixs,
                                             &n, NULL, &e);
    if (!rc && fds__req_param_bool(r, "write_index_only", false))
        rc = keep_write_indices(r, ixs, &n, &e);
    for (size_t i = 0; !rc && i < n; i++)
        rc = fds_index_check_block(ixs[i], FDS_BLOCK_LEVEL_METADATA_WRITE, &e);
    for (size_t i = 0; !rc && i < n; i++)
        if ((rc = fds_index_check_mapping(ixs[i], r->body, r->body_len, &e)) &&
            !e.index[0])
            snprintf(e.index, sizeof e.index, "%s", fds_index_name(ixs[i]));
    for (size_t i = 0; !rc && i < n; i++)
        rc = fds_index_put_mapping(ixs[i], r->body, r->body_len, &e);
    cJSON_Delete(body);
    fds_index_expr_free(ixs, n);
    if (rc)
        return fds__resp_error(o, &e);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    fds__resp_json(o, 200, j);
}

/* Does `name` match one item of the comma list `pats` ('*' wildcards)? */
static bool field_pattern_match(const char *pats, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = pats; *p;) {
        size_t l = strcspn(p, ",");
        char pat[FDS_REQ_PATH_MAX];
        if (l < sizeof pat) {
            memcpy(pat, p, l);
            pat[l] = 0;
            if (strchr(pat, '*') ? fds_glob_match(pat, name, nl) : !strcmp(pat, name))
                return true;
        }
        p += l;
        if (*p == ',')
            p++;
    }
    return false;
}

/* Add to `into` every leaf field under `props` (a mapping's "properties"
 * or a field's "fields", at dotted `prefix`) whose full name matches
 * `pats`: {full_name: {"full_name", "mapping": {leaf: definition}}}, as
 * Elasticsearch's FieldMappingMetadata.  Objects are no field mappers and
 * give no entry of their own. */
static void field_entries(const cJSON *props, const char *prefix,
                          const char *pats, cJSON *into)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, props) {
        char full[FDS_REQ_PATH_MAX];
        snprintf(full, sizeof full, "%s%s%s", prefix, prefix[0] ? "." : "",
                 c->string);
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(c, "properties");
        if (sub && !cJSON_GetObjectItemCaseSensitive(c, "type")) {
            field_entries(sub, full, pats, into);
            continue;
        }
        if (field_pattern_match(pats, full) &&
            !cJSON_GetObjectItemCaseSensitive(into, full)) {
            cJSON *x = cJSON_AddObjectToObject(into, full);
            cJSON_AddStringToObject(x, "full_name", full);
            cJSON *m = cJSON_AddObjectToObject(x, "mapping");
            cJSON_AddItemToObject(m, c->string, cJSON_Duplicate(c, 1));
        }
        const cJSON *multi = cJSON_GetObjectItemCaseSensitive(c, "fields");
        if (multi)
            field_entries(multi, full, pats, into);
    }
}

/* GET /{index}/_mapping/field/{fields} and GET /_mapping/field/{fields}:
 * {fields} a comma list of full field names and '*' patterns; every index
 * the expression names (open and closed, as get mapping) answers, with an
 * empty "mappings" when no field matches.  include_defaults only at its
 * default false: the mapping shown is the explicit one, and the defaults
 * of every parameter are not listed, so true is refused. */
void fds__h_field_mapping_get(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {FDS_INDEX_EXPR_PARAMS, "include_defaults",
                                         "local", NULL};
    if (!fds__req_check_params(r, o, params) ||
        !fds__req_param_only(r, o, "include_defaults", false))
        return;
    bool top = !strcmp(r->seg[0], "_mapping");
    const char *expr = top ? NULL : r->seg[0];
    const char *pats = r->seg[r->nseg - 1];
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true,
                                .expand_closed = true};
    fds_index **ixs = NULL;
    size_t n = 0;
    if (fds_index_expr_opts_read(param_cb, r, &opts, &e) ||
        fds_index_expr_resolve_filtered(r->store, expr, &opts, &ixs, &n, NULL, &e))
        return fds__resp_error(o, &e);
    if (!fds__unblocked_or_answer(o, ixs, n, FDS_BLOCK_LEVEL_METADATA_READ))
        return;
    cJSON *j = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        char *mj = fds_mapping_to_json(fds_index_mapping(ixs[i]));
        cJSON *m = mj ? cJSON_Parse(mj) : NULL;
        free(mj);
        cJSON *x = cJSON_AddObjectToObject(j, fds_index_name(ixs[i]));
        cJSON *into = cJSON_AddObjectToObject(x, "mappings");
        field_entries(cJSON_GetObjectItemCaseSensitive(m, "properties"), "", pats,
                      into);
        cJSON_Delete(m);
    }
    fds_index_expr_free(ixs, n);
    fds__resp_json(o, 200, j);
}

/* PUT /{index}/_block/{block}: Elasticsearch 7.9's add index block API,
 * {block} one of metadata, read, read_only, write; sets
 * index.blocks.{block} on every open index the expression names (missing
 * names are errors, as AddIndexBlockRequest's strictExpandOpen), each
 * committed before the answer. */
void fds__h_index_block_put(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {FDS_INDEX_EXPR_PARAMS, "timeout",
                                         "master_timeout", NULL};
    static const unsigned API_BLOCKS[] = {FDS_BLOCK_METADATA, FDS_BLOCK_READ,
                                          FDS_BLOCK_READ_ONLY, FDS_BLOCK_WRITE};
    if (!fds__req_check_params(r, o, params))
        return;
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof API_BLOCKS / sizeof *API_BLOCKS; i++)
        if (!strcmp(r->seg[2], fds_block_name(API_BLOCKS[i])))
            bit = API_BLOCKS[i];
    if (!bit)
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "No block found with name [%s]", r->seg[2]);
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.expand_open = true};
    fds_index **ixs = NULL;
    size_t n = 0;
    int rc = fds_index_expr_opts_read(param_cb, r, &opts, &e);
    if (!rc)
        rc = fds_index_expr_resolve(r->store, r->seg[0], &opts, &ixs, &n, &e);
    for (size_t i = 0; !rc && i < n; i++) {
        fds_index_settings set;
        fds_index_get_settings(ixs[i], &set);
        set.blocks |= bit;
        rc = fds_index_put_settings(ixs[i], &set, &e);
    }
    cJSON *j = rc ? NULL : cJSON_CreateObject();
    if (j) {
        cJSON_AddBoolToObject(j, "acknowledged", 1);
        cJSON_AddBoolToObject(j, "shards_acknowledged", 1);
        cJSON *list = cJSON_AddArrayToObject(j, "indices");
        for (size_t i = 0; i < n; i++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "name", fds_index_name(ixs[i]));
            cJSON_AddBoolToObject(x, "blocked", 1);
            cJSON_AddItemToArray(list, x);
        }
    }
    fds_index_expr_free(ixs, n);
    if (rc)
        return fds__resp_error(o, &e);
    fds__resp_json(o, 200, j);
}
