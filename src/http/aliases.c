/*
 * aliases.c: Elasticsearch's index alias endpoints -- POST /_aliases
 * (add, remove, remove_index actions, applied together or not at all),
 * PUT|POST|DELETE /{index}/_alias(es)/{name}, GET|HEAD /_alias(es),
 * /_alias/{name}, /{index}/_alias[/{name}], GET /_cat/aliases -- and an
 * index's aliases as GET /{index} shows them.  The `aliases` object of
 * create index and templates is read by the store (src/store/index_json.c),
 * and so is the one index a single-document read or write through an
 * alias goes to (src/store/alias_target.c).
 *
 * The store (fds_store_aliases_update) keeps the pairs and checks the
 * rules that span actions; here names and wildcards are expanded, bodies
 * parsed, and a filter is parsed against the mapping of each index it is
 * added to (Elasticsearch's AliasValidator.validateAliasFilter).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aliases.h"
#include "cat.h"
#include "fds_strbuf.h"
#include "fds_text.h"
#include "handlers.h"
#include "index_expr.h"
#include "index_rules.h"
#include "request.h"
#include "response.h"

/* Alias actions of one request, at most (a wildcard expands to many). */
#define FDS_ALIAS_ACTIONS_MAX 4096

/* URL parameters of the endpoints, as Elasticsearch 8 lists them (the
 * timeouts change nothing on one node: every change commits at once). */
static const char *const CHANGE_PARAMS[] = {"master_timeout", "timeout", NULL};
static const char *const GET_PARAMS[] = {"allow_no_indices", "expand_wildcards",
                                         "ignore_unavailable", "local",
                                         "master_timeout", NULL};
static const char *const CAT_PARAMS[] = {"format", "h", "v", "s", "help", "local",
                                         "master_timeout", "expand_wildcards",
                                         NULL};

static const char *param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}

/* The JSON Elasticsearch shows for an alias of an index (GET _alias). */
static cJSON *alias_def_json(const fds_alias *a)
{
    cJSON *j = cJSON_CreateObject();
    if (a->filter) {
        cJSON *f = cJSON_Parse(a->filter);
        if (f)
            cJSON_AddItemToObject(j, "filter", f);
    }
    if (a->index_routing)
        cJSON_AddStringToObject(j, "index_routing", a->index_routing);
    if (a->search_routing)
        cJSON_AddStringToObject(j, "search_routing", a->search_routing);
    if (a->is_write_index >= 0)
        cJSON_AddBoolToObject(j, "is_write_index", a->is_write_index);
    if (a->is_hidden >= 0)
        cJSON_AddBoolToObject(j, "is_hidden", a->is_hidden);
    return j;
}

cJSON *fds__index_aliases_json(fds_store *st, const char *index)
{
    cJSON *j = cJSON_CreateObject();
    fds_alias *al = NULL;
    size_t n = 0;
    if (fds_store_aliases_list(st, &al, &n))
        return j;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(al[i].index, index))
            cJSON_AddItemToObject(j, al[i].alias, alias_def_json(&al[i]));
    fds_aliases_free(al, n);
    return j;
}

/* ---- POST /_aliases and PUT/DELETE /{index}/_alias/{name} ---------------- */

/* Actions being gathered for one request. */
typedef struct act_list {
    fds_alias_action *v;
    size_t n, cap;
} act_list;

static void acts_free(act_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].a.alias);
        free(l->v[i].a.index);
        /* filter and routing are borrowed from the request's definition */
    }
    free(l->v);
}

/* Append an action on (alias, index); `def` lends its filter, routing and
 * flags (kept by the caller until the actions are applied). */
static int acts_add(act_list *l, fds_alias_op op, const char *alias,
                    const char *index, const fds_alias *def, bool must_exist,
                    fds_err *err)
{
    if (l->n == FDS_ALIAS_ACTIONS_MAX)
        return fds_err_setk(err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                            "more than %d alias actions in one request",
                            FDS_ALIAS_ACTIONS_MAX);
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        fds_alias_action *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                "out of memory");
        l->v = v;
        l->cap = cap;
    }
    fds_alias_action *a = &l->v[l->n];
    memset(a, 0, sizeof *a);
    a->op = op;
    a->must_exist = must_exist;
    if (def) {
        a->a = *def;
    } else {
        a->a.is_write_index = a->a.is_hidden = -1;
    }
    a->a.alias = alias ? strdup(alias) : NULL;
    a->a.index = strdup(index);
    if ((alias && !a->a.alias) || !a->a.index) {
        free(a->a.alias);
        free(a->a.index);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    l->n++;
    return 0;
}

bool fds__names_match(const char *pats, const char *s)
{
    if (!pats)
        return true;
    char *copy = strdup(pats);
    bool hit = false;
    for (char *sv = NULL, *t = copy ? strtok_r(copy, ",", &sv) : NULL; t && !hit;
         t = strtok_r(NULL, ",", &sv))
        hit = !strcmp(t, "_all") || fds_glob_match(t, s, strlen(s));
    free(copy);
    return hit;
}

/* The indices an action's index expression names (open and closed). */
static int action_indices(fds_store *st, const char *expr, fds_index ***ixs,
                          size_t *n, fds_err *err)
{
    fds_index_expr_opts o = {.expand_open = true, .expand_closed = true,
                             .expand_hidden = false};
    return fds_index_expr_resolve(st, expr, &o, ixs, n, err);
}

/* Add the `remove` actions of alias patterns `pats` on the indices `ixs`;
 * nothing matching is aliases_not_found_exception unless must_exist is
 * false (-1 = not given). */
static int add_removes(fds_store *st, act_list *l, fds_index **ixs, size_t n,
                       const char *pats, int must_exist, fds_err *err)
{
    fds_alias *al = NULL;
    size_t nal = 0;
    if (fds_store_aliases_list(st, &al, &nal))
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    size_t before = l->n;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t k = 0; k < nal && !rc; k++)
            if (!strcmp(al[k].index, fds_index_name(ixs[i])) &&
                fds__names_match(pats, al[k].alias))
                rc = acts_add(l, FDS_ALIAS_REMOVE, al[k].alias, al[k].index,
                              NULL, false, err);
    fds_aliases_free(al, nal);
    if (!rc && l->n == before && must_exist != 0)
        rc = fds_err_setk(err, FDS_ENOTFOUND, FDS_KIND_ALIASES_NOT_FOUND,
                          "aliases [%s] missing", pats);
    return rc;
}

/* The `remove` actions of an _aliases request: a concrete alias name is
 * removed as named (an earlier action of the request may have added it;
 * missing, it fails only with must_exist true), wildcards expand over the
 * aliases the indices have now (add_removes). */
static int action_removes(fds_store *st, act_list *l, fds_index **ixs,
                          size_t n, const char *pats, int must_exist,
                          fds_err *err)
{
    char *copy = strdup(pats);
    int rc = copy ? 0 : fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                     "out of memory");
    for (char *sv = NULL, *t = rc ? NULL : strtok_r(copy, ",", &sv); t && !rc;
         t = strtok_r(NULL, ",", &sv)) {
        if (strchr(t, '*') || !strcmp(t, "_all")) {
            rc = add_removes(st, l, ixs, n, t, must_exist, err);
            continue;
        }
        for (size_t i = 0; i < n && !rc; i++)
            rc = acts_add(l, FDS_ALIAS_REMOVE, t, fds_index_name(ixs[i]), NULL,
                          must_exist == 1, err);
    }
    free(copy);
    return rc;
}

/* A string or an array of strings as one comma list (malloc'd) into *out;
 * NULL member: *out stays NULL.  0 or FDS_EPARSE. */
static int name_list(const cJSON *one, const cJSON *many, const char *what,
                     char **out, fds_err *err)
{
    *out = NULL;
    if (one && cJSON_IsString(one) && !many) {
        *out = strdup(one->valuestring);
        return *out ? 0 : FDS_ENOMEM;
    }
    const cJSON *arr = many ? many : one;
    if (!arr)
        return 0;
    if (cJSON_IsString(arr)) {
        *out = strdup(arr->valuestring);
        return *out ? 0 : FDS_ENOMEM;
    }
    if (!cJSON_IsArray(arr))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[%s] must be a string or an array of strings", what);
    fds_strbuf b = {0};
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        if (!cJSON_IsString(e)) {
            fds_strbuf_free(&b);
            return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                                "[%s] must be a string or an array of strings",
                                what);
        }
        if (b.len)
            fds_strbuf_putc(&b, ',');
        fds_strbuf_puts(&b, e->valuestring);
    }
    *out = b.len ? fds_strbuf_take(&b, NULL) : NULL;
    fds_strbuf_free(&b);
    return 0;
}

/* One element of an _aliases `actions` array into `l`; `defs` keeps the
 * definitions the actions borrow from. */
static int parse_action(fds_store *st, const cJSON *item, act_list *l,
                        fds_alias *def, fds_err *err)
{
    if (!cJSON_IsObject(item) || !item->child || item->child->next)
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[aliases] an action must be an object with one "
                            "of [add], [remove], [remove_index]");
    const cJSON *body = item->child;
    const char *type = body->string;
    fds_alias_op op = !strcmp(type, "add")            ? FDS_ALIAS_ADD
                    : !strcmp(type, "remove")         ? FDS_ALIAS_REMOVE
                    : !strcmp(type, "remove_index")   ? FDS_ALIAS_REMOVE_INDEX
                                                      : (fds_alias_op)-1;
    if ((int)op < 0)
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[aliases] unknown action [%s]", type);
    if (!cJSON_IsObject(body))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[%s] must be an object", type);
    char *indices = NULL, *aliases = NULL;
    int must_exist = -1;
    fds_alias_def_clear(def);
    int rc = name_list(cJSON_GetObjectItemCaseSensitive(body, "index"),
                       cJSON_GetObjectItemCaseSensitive(body, "indices"),
                       "indices", &indices, err);
    if (!rc)
        rc = name_list(cJSON_GetObjectItemCaseSensitive(body, "alias"),
                       cJSON_GetObjectItemCaseSensitive(body, "aliases"),
                       "aliases", &aliases, err);
    for (const cJSON *m = body->child; m && !rc; m = m->next) {
        const char *k = m->string;
        if (!strcmp(k, "index") || !strcmp(k, "indices") || !strcmp(k, "alias") ||
            !strcmp(k, "aliases"))
            continue;
        if (!strcmp(k, "must_exist") && cJSON_IsBool(m) && op == FDS_ALIAS_REMOVE) {
            must_exist = cJSON_IsTrue(m);
            continue;
        }
        if (op == FDS_ALIAS_ADD && (rc = fds_alias_member_from_json(m, def, err)) != 1)
            continue;
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                          "[%s] unknown field [%s]", type, k);
    }
    if (!rc && !indices)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                          "Validation Failed: 1: One of [index] or [indices] "
                          "is required;");
    if (!rc && !aliases && op != FDS_ALIAS_REMOVE_INDEX)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                          "Validation Failed: 1: One of [alias] or [aliases] "
                          "is required;");
    if (!rc && op == FDS_ALIAS_REMOVE_INDEX && strpbrk(indices, "*") == NULL &&
        fds_store_alias_exists(st, indices))
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "The provided expression [%s] matches an alias, "
                          "specify the corresponding concrete indices instead.",
                          indices);
    fds_index **ixs = NULL;
    size_t n = 0;
    if (!rc)
        rc = action_indices(st, indices, &ixs, &n, err);
    if (!rc && op == FDS_ALIAS_REMOVE)
        rc = action_removes(st, l, ixs, n, aliases, must_exist, err);
    for (size_t i = 0; !rc && op != FDS_ALIAS_REMOVE && i < n; i++) {
        const char *ixn = fds_index_name(ixs[i]);
        if (op == FDS_ALIAS_REMOVE_INDEX) {
            rc = acts_add(l, op, NULL, ixn, NULL, false, err);
            continue;
        }
        char *copy = strdup(aliases);
        for (char *sv = NULL, *t = copy ? strtok_r(copy, ",", &sv) : NULL;
             t && !rc; t = strtok_r(NULL, ",", &sv)) {
            fds_alias probe = *def;
            probe.alias = t;
            rc = fds_alias_filter_check(&probe, fds_index_mapping(ixs[i]), err);
            if (!rc)
                rc = acts_add(l, op, t, ixn, def, false, err);
        }
        free(copy);
    }
    fds_index_expr_free(ixs, n);
    free(indices);
    free(aliases);
    return rc;
}

static void acknowledged(fds_resp *o, bool errors_member)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    if (errors_member)
        cJSON_AddBoolToObject(j, "errors", 0);
    fds__resp_json(o, 200, j);
}

/* Apply the gathered actions and answer. */
static void apply_and_answer(fds_req *r, fds_resp *o, act_list *l,
                             bool errors_member)
{
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_store_aliases_update(r->store, l->v, l->n, &e);
    acts_free(l);
    if (rc)
        return fds__resp_error(o, &e);
    acknowledged(o, errors_member);
}

void fds__h_aliases_update(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, CHANGE_PARAMS))
        return;
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_checked(r, &body, &e))
        return fds__resp_error(o, &e);
    const cJSON *actions = body ? cJSON_GetObjectItemCaseSensitive(body, "actions")
                                : NULL;
    if (!cJSON_IsArray(actions)) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: no actions;");
    }
    size_t na = (size_t)cJSON_GetArraySize(actions);
    fds_alias *defs = calloc(na ? na : 1, sizeof *defs);
    act_list l = {0};
    int rc = defs ? 0 : fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                     "out of memory");
    size_t k = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, actions) {
        if (rc)
            break;
        rc = parse_action(r->store, it, &l, &defs[k++], &e);
    }
    if (!rc && !l.n)
        rc = fds_err_setk(&e, FDS_EINVAL, FDS_KIND_VALIDATION,
                          "Validation Failed: 1: no actions;");
    if (rc) {
        acts_free(&l);
        fds__resp_error(o, &e);
    } else {
        apply_and_answer(r, o, &l, true);
    }
    fds_aliases_free(defs, k);
    cJSON_Delete(body);
}

/* PUT|POST /{index}/_alias/{name} (and _aliases) with an optional body. */
void fds__h_alias_put(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, CHANGE_PARAMS))
        return;
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_checked(r, &body, &e))
        return fds__resp_error(o, &e);
    const char *name = r->seg[2];
    fds_alias def = {0};
    int rc = 0;
    fds_alias_def_clear(&def);
    for (const cJSON *m = body ? body->child : NULL; m && !rc; m = m->next) {
        if (!strcmp(m->string, "index") || !strcmp(m->string, "alias"))
            continue; /* the path says them */
        if ((rc = fds_alias_member_from_json(m, &def, &e)) == 1)
            rc = fds_err_setk(&e, FDS_EPARSE, FDS_KIND_PARSE,
                              "[aliases] unknown field [%s]", m->string);
    }
    fds_index **ixs = NULL;
    size_t n = 0;
    act_list l = {0};
    if (!rc)
        rc = action_indices(r->store, r->seg[0], &ixs, &n, &e);
    for (size_t i = 0; !rc && i < n; i++) {
        fds_alias probe = def;
        probe.alias = (char *)name;
        rc = fds_alias_filter_check(&probe, fds_index_mapping(ixs[i]), &e);
        if (!rc)
            rc = acts_add(&l, FDS_ALIAS_ADD, name, fds_index_name(ixs[i]), &def,
                          false, &e);
    }
    fds_index_expr_free(ixs, n);
    if (rc) {
        acts_free(&l);
        fds__resp_error(o, &e);
    } else {
        apply_and_answer(r, o, &l, false);
    }
    fds_alias_def_clear(&def);
    cJSON_Delete(body);
}

/* DELETE /{index}/_alias/{name} (and _aliases): wildcards and _all in both. */
void fds__h_alias_delete(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, CHANGE_PARAMS))
        return;
    fds_err e;
    fds_err_clear(&e);
    fds_index **ixs = NULL;
    size_t n = 0;
    act_list l = {0};
    int rc = action_indices(r->store, r->seg[0], &ixs, &n, &e);
    if (!rc)
        rc = add_removes(r->store, &l, ixs, n, r->seg[2], 1, &e);
    fds_index_expr_free(ixs, n);
    if (rc) {
        acts_free(&l);
        return fds__resp_error(o, &e);
    }
    apply_and_answer(r, o, &l, false);
}

/* ---- GET /_alias ------------------------------------------------------------ */

/* The request's index expression and alias names: /_alias[/{name}],
 * /_aliases, /{index}/_alias[es][/{name}].  The routes with a literal first
 * segment come first, so /_alias/x is a name and /_x/_alias an expression. */
static void get_parts(fds_req *r, const char **expr, const char **names)
{
    bool top = r->nseg == 1 || (r->nseg == 2 && !strcmp(r->seg[0], "_alias"));
    *expr = top ? NULL : r->seg[0];
    unsigned at = top ? 1 : 2;
    *names = r->nseg > at ? r->seg[at] : NULL;
}

/* Does some alias of the node match each item of `names`?  The first
 * that none matches into miss (cap bytes, comma-joined). */
static void missing_names(const fds_alias *al, size_t n, const char *names,
                          char *miss, size_t cap)
{
    miss[0] = 0;
    char *copy = strdup(names);
    for (char *sv = NULL, *t = copy ? strtok_r(copy, ",", &sv) : NULL; t;
         t = strtok_r(NULL, ",", &sv)) {
        if (strchr(t, '*') || !strcmp(t, "_all"))
            continue;
        bool hit = false;
        for (size_t i = 0; i < n && !hit; i++)
            hit = !strcmp(al[i].alias, t);
        if (!hit) {
            size_t l = strlen(miss);
            snprintf(miss + l, cap - l, "%s%s", l ? "," : "", t);
        }
    }
    free(copy);
}

void fds__h_alias_get(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, GET_PARAMS))
        return;
    bool head = fds__req_is(r, "HEAD");
    const char *expr, *names;
    get_parts(r, &expr, &names);
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true,
                                .expand_closed = true, .expand_hidden = true};
    fds_index **ixs = NULL;
    size_t n = 0;
    fds_alias *al = NULL;
    size_t nal = 0;
    if (fds_index_expr_opts_read(param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, expr, &opts, &ixs, &n, &e))
        return fds__resp_error(o, &e);
    if (fds_store_aliases_list(r->store, &al, &nal)) {
        fds_index_expr_free(ixs, n);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    cJSON *j = cJSON_CreateObject();
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        const char *ixn = fds_index_name(ixs[i]);
        cJSON *a = cJSON_CreateObject();
        for (size_t k = 0; k < nal; k++)
            if (!strcmp(al[k].index, ixn) && (!names || fds__names_match(names, al[k].alias))) {
                cJSON_AddItemToObject(a, al[k].alias, alias_def_json(&al[k]));
                shown++;
            }
        if (names && !a->child) {
            cJSON_Delete(a);
            continue;
        }
        cJSON *x = cJSON_AddObjectToObject(j, ixn);
        cJSON_AddItemToObject(x, "aliases", a);
    }
    char miss[512] = "";
    if (names)
        missing_names(al, nal, names, miss, sizeof miss);
    fds_aliases_free(al, nal);
    fds_index_expr_free(ixs, n);
    bool missing = names && (miss[0] || !shown);
    if (head) {
        cJSON_Delete(j);
        return fds__resp_raw(o, missing ? 404 : 200, strdup(""), 0, NULL);
    }
    if (missing && (miss[0] || !strpbrk(names, "*"))) {
        /* Elasticsearch answers 404 with what it found and the names it
         * did not */
        char msg[600];
        snprintf(msg, sizeof msg, "alias%s [%s] missing",
                 strchr(miss[0] ? miss : names, ',') ? "es" : "",
                 miss[0] ? miss : names);
        cJSON_AddStringToObject(j, "error", msg);
        cJSON_AddNumberToObject(j, "status", 404);
        return fds__resp_json(o, 404, j);
    }
    fds__resp_json(o, 200, j);
}

/* GET /_cat/aliases[/{name}] */
void fds__h_cat_aliases(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {
        "alias|a", "index|i|idx", "filter|f|fi", "routing.index|ri|routingIndex",
        "routing.search|rs|routingSearch", "is_write_index|w|isWriteIndex"};
    const size_t ncol = sizeof cols / sizeof *cols;
    if (!fds__req_check_params(r, o, CAT_PARAMS))
        return;
    const char *names = r->nseg > 2 ? r->seg[2] : NULL;
    fds_alias *al = NULL;
    size_t nal = 0;
    if (fds_store_aliases_list(r->store, &al, &nal))
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    char ***rows = calloc(nal ? nal : 1, sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; rows && i < nal; i++) {
        if (names && !fds__names_match(names, al[i].alias))
            continue;
        char **row = calloc(ncol, sizeof *row);
        if (!row)
            break;
        const fds_alias *a = &al[i];
        row[0] = strdup(a->alias);
        row[1] = strdup(a->index);
        row[2] = strdup(a->filter ? "*" : "-");
        row[3] = strdup(a->index_routing ? a->index_routing : "-");
        row[4] = strdup(a->search_routing ? a->search_routing : "-");
        row[5] = strdup(a->is_write_index < 0 ? "-"
                        : a->is_write_index ? "true" : "false");
        rows[nr++] = row;
    }
    fds_aliases_free(al, nal);
    fds__cat_render(r, o, cols, ncol, rows, nr);
    fds__cat_rows_free(rows, nr, ncol);
}
