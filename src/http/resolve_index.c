/*
 * resolve_index.c: `GET /_resolve/index/{name}` (Elasticsearch's
 * ResolveIndexAction, 7.9+), which Kibana's data view editor calls to list
 * the indices and aliases a pattern matches, and its has-data check to
 * learn whether any exist:
 *
 *   {"indices": [{"name", "aliases"?: [...], "attributes": [...]}],
 *    "aliases": [{"name", "indices": [...]}], "data_streams": []}
 *
 * Each list sorted by name.  `name` is a comma list of names and
 * wildcards, a `-` item excluding what the items before it took; a
 * wildcard takes open indices (expand_wildcards: open, closed, hidden,
 * all), never a dot name unless it starts with a dot or hidden is asked,
 * nor a hidden index or alias unless hidden is asked; a concrete name takes
 * its index or alias whatever its state, and one naming neither is 404
 * index_not_found_exception unless ignore_unavailable.  An index's
 * `attributes` are "open" or "closed" and "hidden" when it is, sorted; an
 * alias lists all its indices.  No data streams exist here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "handlers.h"
#include "index_expr.h"
#include "request.h"
#include "response.h"
#include "fds_text.h"

static const char *const RESOLVE_PARAMS[] = {FDS_INDEX_EXPR_PARAMS, NULL};

/* One index of the node as the expression sees it. */
typedef struct rx_index {
    const char *name;
    bool open, hidden, taken;
} rx_index;

/* One alias name (its pairs are contiguous in the sorted list). */
typedef struct rx_alias {
    const char *name;
    size_t first, n; /* its pairs al[first, first + n) */
    bool hidden, taken;
} rx_alias;

static int pair_cmp(const void *a, const void *b)
{
    const fds_alias *x = a, *y = b;
    int c = strcmp(x->alias, y->alias);
    return c ? c : strcmp(x->index, y->index);
}

static const char *param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}

/* Does wildcard `pat` take `name` (dot names, hidden ones: above)? */
static bool wild_takes(const char *pat, const char *name, bool hidden,
                       const fds_index_expr_opts *o)
{
    if (!fds_glob_match(pat, name, strlen(name)))
        return false;
    bool dot = pat[0] == '.';
    return o->expand_hidden || (!hidden && (name[0] != '.' || dot)) ||
           (dot && name[0] == '.');
}

/* Apply item `item` (its `-` already taken off when `excl`) to the sets;
 * returns whether it named anything. */
static bool apply(const char *item, bool excl, rx_index *ix, size_t ni,
                  rx_alias *as, size_t na, const fds_index_expr_opts *o)
{
    bool wild = strchr(item, '*') != NULL, any = false;
    for (size_t i = 0; i < ni; i++) {
        bool t = wild ? wild_takes(item, ix[i].name, ix[i].hidden, o) &&
                            (ix[i].open ? o->expand_open : o->expand_closed)
                      : !strcmp(item, ix[i].name);
        if (t) {
            ix[i].taken = !excl;
            any = true;
        }
    }
    for (size_t k = 0; k < na; k++) {
        bool t = wild ? wild_takes(item, as[k].name, as[k].hidden, o)
                      : !strcmp(item, as[k].name);
        if (t) {
            as[k].taken = !excl;
            any = true;
        }
    }
    return any;
}

static cJSON *answer(const rx_index *ix, size_t ni, const rx_alias *as,
                     size_t na, const fds_alias *al, size_t nal)
{
    cJSON *j = cJSON_CreateObject();
    cJSON *ji = cJSON_AddArrayToObject(j, "indices");
    cJSON *ja = cJSON_AddArrayToObject(j, "aliases");
    if (!ji || !ja || !cJSON_AddArrayToObject(j, "data_streams")) {
        cJSON_Delete(j);
        return NULL;
    }
    bool oom = false;
    for (size_t i = 0; i < ni; i++) {
        if (!ix[i].taken)
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(ji, e);
        oom |= !e || !cJSON_AddStringToObject(e, "name", ix[i].name);
        cJSON *names = cJSON_CreateArray();
        for (size_t p = 0; names && p < nal; p++) /* sorted by alias */
            if (!strcmp(al[p].index, ix[i].name))
                cJSON_AddItemToArray(names, cJSON_CreateString(al[p].alias));
        if (names && cJSON_GetArraySize(names))
            cJSON_AddItemToObject(e, "aliases", names);
        else
            cJSON_Delete(names);
        cJSON *at = cJSON_AddArrayToObject(e, "attributes");
        oom |= !names || !at;
        if (at && !ix[i].open)
            cJSON_AddItemToArray(at, cJSON_CreateString("closed"));
        if (at && ix[i].hidden)
            cJSON_AddItemToArray(at, cJSON_CreateString("hidden"));
        if (at && ix[i].open)
            cJSON_AddItemToArray(at, cJSON_CreateString("open"));
    }
    for (size_t k = 0; k < na; k++) {
        if (!as[k].taken)
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(ja, e);
        oom |= !e || !cJSON_AddStringToObject(e, "name", as[k].name);
        cJSON *in = e ? cJSON_AddArrayToObject(e, "indices") : NULL;
        oom |= !in;
        for (size_t p = as[k].first; in && p < as[k].first + as[k].n; p++)
            cJSON_AddItemToArray(in, cJSON_CreateString(al[p].index));
    }
    if (oom) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

void fds__h_resolve_index(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, RESOLVE_PARAMS))
        return;
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = FDS_INDEX_EXPR_SEARCH_DEFAULTS;
    if (fds_index_expr_opts_read(param_cb, r, &opts, &e)) {
        fds__resp_error(o, &e);
        return;
    }
    char **names = NULL, *expr = NULL;
    size_t ni = 0, nal = 0, na = 0;
    fds_alias *al = NULL;
    rx_index *ix = NULL;
    rx_alias *as = NULL;
    int rc = fds_store_list_indices(r->store, &names, &ni);
    if (!rc)
        rc = fds_store_aliases_list(r->store, &al, &nal);
    if (!rc && ((ni && !(ix = calloc(ni, sizeof *ix))) ||
                (nal && !(as = calloc(nal, sizeof *as))) ||
                !(expr = strdup(r->seg[2]))))
        rc = FDS_ENOMEM;
    for (size_t i = 0; !rc && i < ni; i++) {
        fds_index *x = NULL;
        ix[i].name = names[i];
        if (fds_store_get_index(r->store, names[i], &x, NULL))
            continue; /* went away meanwhile: closed, never taken by a wildcard */
        fds_index_settings set;
        fds_index_get_settings(x, &set);
        ix[i].open = fds_index_is_open(x);
        ix[i].hidden = set.hidden;
        fds_index_release(x);
    }
    if (!rc && nal)
        qsort(al, nal, sizeof *al, pair_cmp);
    for (size_t p = 0; !rc && p < nal; p++) {
        if (!na || strcmp(as[na - 1].name, al[p].alias))
            as[na++] = (rx_alias){al[p].alias, p, 0, false, false};
        as[na - 1].n++;
        as[na - 1].hidden |= al[p].is_hidden == 1;
    }
    /* the items, in order: a `-` item (not the first) takes away */
    size_t k = 0;
    for (char *item = rc ? NULL : strtok(expr, ","); item;
         item = strtok(NULL, ","), k++) {
        bool excl = item[0] == '-' && k > 0;
        const char *name = excl ? item + 1 : item;
        if (!apply(name, excl, ix, ni, as, na, &opts) && !excl &&
            !strchr(name, '*') && !opts.ignore_unavailable) {
            fds_err_setk(&e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                         "no such index [%s]", name);
            snprintf(e.index, sizeof e.index, "%s", name);
            break;
        }
    }
    if (rc)
        fds__resp_errorf(o, 500, "exception", "out of memory");
    else if (e.code)
        fds__resp_error(o, &e);
    else {
        cJSON *j = answer(ix, ni, as, na, al, nal);
        if (j)
            fds__resp_json(o, 200, j);
        else
            fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    free(expr);
    free(ix);
    free(as);
    fds_aliases_free(al, nal);
    for (size_t i = 0; i < ni; i++)
        free(names[i]);
    free(names);
}
