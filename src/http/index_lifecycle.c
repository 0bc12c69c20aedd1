/*
 * index_lifecycle.c: an index's life through the API -- create (with the
 * templates and aliases that apply), delete, get, open and close, and the
 * refresh, flush and force-merge of the indices an expression names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_int.h"
#include "aliases.h"
#include "cluster_settings.h"
#include "fds_text.h"
#include "handlers.h"
#include "index_expr.h"
#include "index_lifecycle.h"
#include "index_rules.h"
#include "mappings.h"
#include "req_index.h"
#include "request.h"
#include "response.h"

/* The parts of a create-index body, parsed into `req`: the settings as
 * texts (kv has FDS_SETTINGS_GIVEN_MAX slots), the mappings as JSON text
 * (*mapping malloc'd or NULL), the aliases (*aliases, fds_aliases_free). */
static int create_body_parts(const cJSON *body, fds_index_create_req *req,
                             fds_setting_text *kv, char **mapping,
                             fds_alias **aliases, fds_err *e)
{
    if (body && !cJSON_IsObject(body))
        return fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                            "request body must be a JSON object");
    int rc = 0;
    for (const cJSON *c = body ? body->child : NULL; c && !rc; c = c->next) {
        if (!strcmp(c->string, "settings")) {
            rc = fds_settings_json_flatten(c, kv, &req->nsettings, e);
            req->settings = kv;
            req->settings_given = true;
        } else if (!strcmp(c->string, "mappings")) {
            if (!cJSON_IsObject(c))
                rc = fds_err_setk(e, FDS_EPARSE, FDS_KIND_MAPPING_PARSE,
                                  "Failed to parse mapping: [mappings] must be "
                                  "an object");
            else if (!(*mapping = cJSON_PrintUnformatted(c)))
                rc = FDS_ENOMEM;
            req->mappings = *mapping;
        } else if (!strcmp(c->string, "aliases")) {
            fds_aliases_free(*aliases, req->naliases);
            *aliases = NULL;
            req->naliases = 0;
            rc = fds_aliases_from_json(c, aliases, &req->naliases, e);
            req->aliases = *aliases;
        } else {
            rc = fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                              "unknown key [%s] for create index", c->string);
        }
    }
    return rc;
}

int fds__index_create(fds_store *st, const char *name, const cJSON *body,
                      fds_err *e)
{
    fds_index_create_req req = {0};
    fds_setting_text *kv = calloc(FDS_SETTINGS_GIVEN_MAX, sizeof *kv);
    char *mapping = NULL;
    fds_alias *aliases = NULL;
    int rc = kv ? create_body_parts(body, &req, kv, &mapping, &aliases, e)
                : FDS_ENOMEM;
    if (!rc)
        rc = fds_store_create_index_from(st, name, &req, e);
    if (rc == FDS_ENOMEM && !e->code)
        fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    fds_aliases_free(aliases, req.naliases);
    free(mapping);
    free(kv);
    return rc;
}

int fds__active_shards_wanted(fds_req *r, fds_resp *o, long *copies)
{
    const char *v = fds__req_param(r, "wait_for_active_shards");
    *copies = 1; /* index.write.wait_for_active_shards: the primary */
    if (!v || !strcmp(v, "index-setting"))
        return 0;
    if (!strcmp(v, "all")) {
        *copies = FDS__ACTIVE_ALL;
        return 0;
    }
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || errno || n > INT32_MAX || n < INT32_MIN) {
        fds__resp_errorf(o, 400, "number_format_exception", "For input string: \"%s\"", v);
        return -1;
    }
    if (n < 0) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "shard count cannot be a negative value");
        return -1;
    }
    *copies = n;
    return 0;
}

bool fds__active_shards_acked(long copies, uint32_t replicas)
{
    /* one node: the primary is the only copy that ever starts, so more
     * is what Elasticsearch answers after its timeout */
    return copies == FDS__ACTIVE_ALL ? replicas == 0 : copies <= 1;
}

void fds__h_index_create(fds_req *r, fds_resp *o)
{
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    long copies;
    if (fds__active_shards_wanted(r, o, &copies))
        return;
    /* <logs-{now/d}>: the name of today (Elasticsearch resolves it) */
    char name[FDS_INDEX_NAME_MAX + 2];
    if (fds_index_name_resolve(r->seg[0], name, sizeof name, &e))
        return fds__resp_error(o, &e);
    if (fds__body_checked(r, &body, &e))
        return fds__resp_error(o, &e);
    int rc = fds__index_create(r->store, name, body, &e);
    cJSON_Delete(body);
    if (rc) {
        if (!e.index[0])
            snprintf(e.index, sizeof e.index, "%s", name);
        return fds__resp_error(o, &e);
    }
    fds_index *ix = NULL;
    fds_index_settings set = {.number_of_replicas = 0};
    if (!fds_store_get_index(r->store, name, &ix, NULL))
        fds_index_get_settings(ix, &set);
    fds_index_release(ix);
    fds__index_created(o, name, copies, set.number_of_replicas);
}

void fds__index_created(fds_resp *o, const char *name, long copies, uint32_t replicas)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    cJSON_AddBoolToObject(j, "shards_acknowledged",
                          fds__active_shards_acked(copies, replicas));
    cJSON_AddStringToObject(j, "index", name);
    fds__resp_json(o, 200, j);
}

/* The indices DELETE /{expr} names, as Elasticsearch resolves it for a
 * delete (expand_wildcards open,closed; no aliases: a concrete alias name
 * is refused, a wildcard matches index names only).  *names malloc'd. */
static int delete_targets(fds_req *r, char ***names, size_t *n, fds_err *e)
{
    fds_index_expr_opts o = {.allow_no_indices = true, .expand_open = true,
                             .expand_closed = true};
    int rc = fds_index_expr_opts_read(fds__admin_param_cb, r, &o, e);
    if (!rc)
        rc = fds_index_expr_check(r->seg[0], e);
    char **all = NULL;
    size_t nall = 0;
    if (!rc && fds_store_list_indices(r->store, &all, &nall))
        rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    bool *take = rc ? NULL : calloc(nall + 1, sizeof *take);
    char *copy = rc ? NULL : strdup(r->seg[0]);
    if (!rc && (!take || !copy))
        rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    for (char *sv = NULL, *t = rc ? NULL : strtok_r(copy, ",", &sv); t && !rc;
         t = strtok_r(NULL, ",", &sv)) {
        bool wild = strchr(t, '*') || !strcmp(t, "_all"), hit = false;
        for (size_t i = 0; i < nall; i++)
            if (wild ? (!strcmp(t, "_all") || fds_glob_match(t, all[i], strlen(all[i])))
                       && (all[i][0] != '.' || t[0] == '.' || o.expand_hidden)
                     : !strcmp(t, all[i]))
                take[i] = hit = true;
        if (hit || (wild && o.allow_no_indices) || (!wild && o.ignore_unavailable))
            continue;
        if (wild) /* each wildcard must match with allow_no_indices=false */
            rc = fds_err_setk(e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                              "no such index [%s]", t);
        else if (fds_store_alias_exists(r->store, t))
            rc = fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "The provided expression [%s] matches an alias, "
                              "specify the corresponding concrete indices "
                              "instead.", t);
        else
            rc = fds_err_setk(e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                              "no such index [%s]", t);
        snprintf(e->index, sizeof e->index, "%s", t);
    }
    size_t k = 0;
    for (size_t i = 0; !rc && i < nall; i++)
        if (take[i]) {
            char *keep = all[i];
            all[i] = NULL;
            all[k++] = keep;
        } else {
            free(all[i]);
            all[i] = NULL;
        }
    if (!rc && !k && !o.allow_no_indices) {
        rc = fds_err_setk(e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                          "no such index [%s]", r->seg[0]);
        snprintf(e->index, sizeof e->index, "%s", r->seg[0]);
    }
    free(take);
    free(copy);
    if (rc) {
        for (size_t i = 0; i < nall; i++)
            free(all ? all[i] : NULL);
        free(all);
        return rc;
    }
    *names = all;
    *n = k;
    return 0;
}

void fds__h_index_delete(fds_req *r, fds_resp *o)
{
    fds_err e;
    fds_err_clear(&e);
    if (fds__destructive_requires_name(r->store)) {
        /* DestructiveOperations.hasWildcardUsage */
        if (strchr(r->seg[0], '*') || !strcmp(r->seg[0], "_all"))
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "Wildcard expressions or all indices are not "
                                   "allowed");
    }
    char **names = NULL;
    size_t n = 0;
    int rc = delete_targets(r, &names, &n, &e);
    for (size_t i = 0; !rc && i < n; i++) { /* all checked before any goes */
        fds_index *ix;
        if (fds_store_get_index(r->store, names[i], &ix, NULL) == 0) {
            rc = fds_index_check_block(ix, FDS_BLOCK_LEVEL_DELETE, &e);
            fds_index_release(ix);
        }
    }
    for (size_t i = 0; i < n; i++) {
        /* gone meanwhile: deleted all the same */
        if (!rc && fds_store_delete_index(r->store, names[i], &e) == FDS_ESQL)
            rc = FDS_ESQL;
        free(names[i]);
    }
    free(names);
    if (rc)
        return fds__resp_error(o, &e);
    fds__acknowledged(o, NULL);
}

static cJSON *mapping_json(fds_index *ix)
{
    char *m = fds_mapping_to_json(fds_index_mapping(ix));
    cJSON *j = m ? cJSON_Parse(m) : NULL;
    free(m);
    return j ? j : cJSON_CreateObject();
}

/* The indices index expression `expr` names (NULL: every index), open and
 * closed, as Elasticsearch's get index and get mapping expand them (an
 * expression that matches nothing answers {}).  False with the error
 * answered. */
static bool path_indices(fds_req *r, fds_resp *o, const char *expr,
                         fds_index ***ixs, size_t *n)
{
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true,
                                .expand_closed = true};
    if (fds_index_expr_opts_read(fds__admin_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, expr, &opts, ixs, n, &e)) {
        fds__resp_error(o, &e);
        return false;
    }
    return true;
}

/* GET /{index}: also what GET /_bulk and other API paths without a GET
 * endpoint reach, as in Elasticsearch, whose resolver then refuses the
 * '_' name (fds_index_expr_check). */
void fds__h_index_get(fds_req *r, fds_resp *o)
{
    fds_index **ixs;
    size_t n;
    if (!path_indices(r, o, r->seg[0], &ixs, &n))
        return;
    cJSON *j = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        cJSON *x = cJSON_AddObjectToObject(j, fds_index_name(ixs[i]));
        cJSON_AddItemToObject(x, "aliases",
                              fds__index_aliases_json(r->store,
                                                      fds_index_name(ixs[i])));
        cJSON_AddItemToObject(x, "mappings", mapping_json(ixs[i]));
        cJSON_AddItemToObject(x, "settings", fds__settings_json(ixs[i], false, false));
    }
    fds_index_expr_free(ixs, n);
    fds__resp_json(o, 200, j);
}

/* GET /_mapping[s] (every index) and GET /{index}/_mapping[s]. */
void fds__h_mapping_get(fds_req *r, fds_resp *o)
{
    fds_index **ixs;
    size_t n;
    if (!path_indices(r, o, r->nseg >= 2 ? r->seg[0] : NULL, &ixs, &n))
        return;
    if (!fds__unblocked_or_answer(o, ixs, n, FDS_BLOCK_LEVEL_METADATA_READ))
        return;
    cJSON *j = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        cJSON *x = cJSON_AddObjectToObject(j, fds_index_name(ixs[i]));
        cJSON_AddItemToObject(x, "mappings", mapping_json(ixs[i]));
    }
    fds_index_expr_free(ixs, n);
    fds__resp_json(o, 200, j);
}

void fds__h_open_close(fds_req *r, fds_resp *o, bool open)
{
    fds_index *ix = fds__req_index(r, o, 0);
    if (!ix)
        return;
    fds_err e;
    fds_err_clear(&e);
    int rc = 0;
    if (!open && fds_index_is_open(ix))
        rc = fds_index_refresh(ix, &e); /* a closed index keeps nothing buffered */
    if (!rc)
        rc = fds_index_set_open(ix, open, &e);
    if (rc) {
        fds_index_release(ix);
        return fds__resp_error(o, &e);
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    cJSON_AddBoolToObject(j, "shards_acknowledged", 1);
    if (!open) {
        cJSON *ind = cJSON_AddObjectToObject(j, "indices");
        cJSON *x = cJSON_AddObjectToObject(ind, fds_index_name(ix));
        cJSON_AddBoolToObject(x, "closed", 1);
    }
    fds_index_release(ix);
    fds__resp_json(o, 200, j);
}

/* Is `name` an item of index expression `expr` as it is (not through a
 * wildcard or an alias)? */
static bool expr_item_is(const char *expr, const char *name)
{
    size_t l = strlen(name);
    for (const char *p = expr; p && *p;) {
        size_t k = strcspn(p, ",");
        if (k == l && !memcmp(p, name, l))
            return true;
        p += k + (p[k] == ',');
    }
    return false;
}

/* Run `fn` on every open index the path's index expression names (every
 * index for "/_refresh"), as Elasticsearch's broadcast actions do:
 * wildcards expand to open indices, a missing name is a 404 unless
 * ignore_unavailable.  An index deleted after the expression was resolved
 * is a 404 when the expression names it, and otherwise left out, as
 * Elasticsearch's broadcast leaves out a shard whose index is gone
 * (TransportActions.isShardNotAvailableException). */
static void each_index(fds_req *r, fds_resp *o,
                       int (*fn)(fds_index *, void *, fds_err *), void *arg)
{
    fds_err e;
    fds_err_clear(&e);
    int count = 0, rc = 0;
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true};
    fds_index **ixs = NULL;
    size_t n = 0;
    /* /_refresh has no expression; /{index}/_refresh, _flush, ... do */
    const char *expr = r->nseg >= 2 ? r->seg[0] : NULL;
    if (fds_index_expr_opts_read(fds__admin_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, expr, &opts, &ixs, &n, &e))
        return fds__resp_error(o, &e);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!fds_index_is_open(ixs[i]) && !expr)
            continue;
        rc = fn(ixs[i], arg, &e);
        if (rc == FDS_ENOTFOUND &&
            (opts.ignore_unavailable ||
             !expr_item_is(expr, fds_index_name(ixs[i])))) {
            fds_err_clear(&e);
            rc = 0;
            continue;
        }
        count += (int)fds_index_nshards(ixs[i]);
    }
    fds_index_expr_free(ixs, n);
    if (rc)
        return fds__resp_error(o, &e);
    cJSON *j = cJSON_CreateObject();
    fds__shards_ok(j, count);
    fds__resp_json(o, 200, j);
}

static int do_refresh(fds_index *ix, void *arg, fds_err *e)
{
    return fds_index_refresh(ix, e);
}

static int do_merge(fds_index *ix, void *arg, fds_err *e)
{
    return fds_index_forcemerge(ix, *(unsigned *)arg, e);
}

void fds__h_refresh(fds_req *r, fds_resp *o)
{
    each_index(r, o, do_refresh, NULL);
}

void fds__h_flush(fds_req *r, fds_resp *o)
{
    /* a refresh already commits segments and trims the translog */
    each_index(r, o, do_refresh, NULL);
}

void fds__h_forcemerge(fds_req *r, fds_resp *o)
{
    const char *m = fds__req_param(r, "max_num_segments");
    unsigned max = 1;
    if (m) {
        char *end;
        long v = strtol(m, &end, 10);
        if (*end || v < 1)
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "failed to parse [max_num_segments] with value "
                                   "[%s]", m);
        max = (unsigned)v;
    }
    each_index(r, o, do_merge, &max);
}
