/*
 * index_settings.c: GET and PUT /{index}/_settings -- settings as JSON
 * (nested, dotted, flat) to and from the store's setting texts.  Which
 * setting may change when is the store's rule (src/store/settings_rules.c);
 * this file parses, resolves the index expression and answers.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_int.h"
#include "handlers.h"
#include "index_expr.h"
#include "index_rules.h"
#include "req_index.h"
#include "request.h"
#include "response.h"

/* ---- settings: JSON <-> flat keys --------------------------------------- */

/* Add "a.b.c" = value into nested objects under `root`; when a name along
 * the path already holds a value (index.codec vs index.codec.block_size),
 * the rest of the path stays one dotted key. */
static void nest(cJSON *root, const char *key, const char *value)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s", key);
    cJSON *at = root;
    char *p = tmp;
    for (;;) {
        char *dot = strchr(p, '.');
        if (!dot)
            break;
        *dot = 0;
        cJSON *next = cJSON_GetObjectItemCaseSensitive(at, p);
        if (!next) {
            /* a leaf with a longer dotted name may exist: check prefix use */
            next = cJSON_AddObjectToObject(at, p);
        } else if (!cJSON_IsObject(next)) {
            *dot = '.';
            break;
        }
        at = next;
        p = dot + 1;
    }
    cJSON *existing = cJSON_GetObjectItemCaseSensitive(at, p);
    if (existing && cJSON_IsObject(existing)) {
        /* "codec" is already an object: keep the value under a dotted key
         * one level up is not possible; store it as "codec" sibling text */
        char alt[170];
        snprintf(alt, sizeof alt, "%s", p);
        cJSON_AddStringToObject(at, alt, value);
        return;
    }
    cJSON_AddStringToObject(at, p, value);
}

cJSON *fds__settings_json(fds_index *ix, bool defaults_part, bool flat)
{
    fds_index_settings set, def;
    fds_index_get_settings(ix, &set);
    fds_index_settings_default(&def);
    fds_setting_kv kv[FDS_SETTINGS_MAX], dk[FDS_SETTINGS_MAX];
    size_t n = fds_settings_to_kv(&set, kv, FDS_SETTINGS_MAX);
    size_t dn = fds_settings_to_kv(&def, dk, FDS_SETTINGS_MAX);
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        bool is_default = i < dn && !strcmp(kv[i].value, dk[i].value) &&
                          strcmp(kv[i].key, "index.number_of_shards") &&
                          strcmp(kv[i].key, "index.number_of_replicas");
        if (is_default != defaults_part)
            continue;
        if (flat)
            cJSON_AddStringToObject(o, kv[i].key, kv[i].value);
        else
            nest(o, kv[i].key, kv[i].value);
    }
    if (defaults_part && !set.number_of_routing_shards) {
        /* not given: the one the index was created with */
        char rs[16];
        snprintf(rs, sizeof rs, "%u", fds_routing_shards_default(set.number_of_shards));
        if (flat)
            cJSON_AddStringToObject(o, "index.number_of_routing_shards", rs);
        else
            nest(o, "index.number_of_routing_shards", rs);
    }
    if (!defaults_part) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)fds_index_creation_ms(ix));
        const char *info[][2] = {{"index.uuid", fds_index_uuid(ix)},
                                 {"index.creation_date", buf},
                                 {"index.provided_name", fds_index_name(ix)}};
        for (size_t i = 0; i < 3; i++) {
            if (flat)
                cJSON_AddStringToObject(o, info[i][0], info[i][1]);
            else
                nest(o, info[i][0], info[i][1]);
        }
    }
    return o;
}

void fds__acknowledged(fds_resp *o, const char *index)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    if (index) {
        cJSON_AddBoolToObject(j, "shards_acknowledged", 1);
        cJSON_AddStringToObject(j, "index", index);
    }
    fds__resp_json(o, 200, j);
}

/* Does `name` (an index, a setting) match the comma-separated expression
 * `expr` (names, `*` wildcards, `_all`; Elasticsearch's Regex.simpleMatch
 * over a list)? */
static bool pattern_list_match(const char *expr, const char *name)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", expr);
    for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t;
         t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, "_all") || !fnmatch(t, name, 0))
            return true;
    return false;
}

/* The settings of `ix` named by `names` (NULL = all), nested or flat. */
static cJSON *settings_part(fds_index *ix, bool defaults_part, bool flat,
                            const char *names)
{
    if (!names)
        return fds__settings_json(ix, defaults_part, flat);
    cJSON *all = fds__settings_json(ix, defaults_part, true);
    cJSON *keep = cJSON_CreateObject();
    for (cJSON *c = all->child; c; c = c->next) {
        if (!pattern_list_match(names, c->string))
            continue;
        if (flat)
            cJSON_AddStringToObject(keep, c->string, c->valuestring);
        else
            nest(keep, c->string, c->valuestring);
    }
    cJSON_Delete(all);
    return keep;
}

/* Add index `ix` to a GET _settings answer, unless nothing of it is left
 * after filtering by `names` (Elasticsearch leaves such indices out). */
static void settings_add(fds_req *r, cJSON *j, fds_index *ix, const char *names)
{
    bool flat = fds__req_param_bool(r, "flat_settings", false);
    cJSON *set = settings_part(ix, false, flat, names);
    cJSON *def = fds__req_param_bool(r, "include_defaults", false)
                     ? settings_part(ix, true, flat, names) : NULL;
    if (!set->child && (!def || !def->child)) {
        cJSON_Delete(set);
        cJSON_Delete(def);
        return;
    }
    cJSON *x = cJSON_AddObjectToObject(j, fds_index_name(ix));
    cJSON_AddItemToObject(x, "settings", set);
    if (def)
        cJSON_AddItemToObject(x, "defaults", def);
}

/* GET /{index}/_settings[/{name}] and GET /_settings[/{name}]: {index}
 * may be a name, a comma list, wildcards or _all; {name} a comma list of
 * setting names or patterns. */
void fds__h_settings_get(fds_req *r, fds_resp *o)
{
    /* "local": one node, so its state is the master's */
    static const char *const params[] = {"flat_settings", "include_defaults",
                                         "local", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    bool top = !strcmp(r->seg[0], "_settings");
    const char *expr = top ? "_all" : r->seg[0];
    unsigned at = top ? 1 : 2;
    const char *names = r->nseg > at ? r->seg[at] : NULL;
    cJSON *j = cJSON_CreateObject();
    if (!strpbrk(expr, ",*") && strcmp(expr, "_all")) {
        fds_index *ix = fds__req_index(r, o, 0);
        if (!ix) {
            cJSON_Delete(j);
            return;
        }
        settings_add(r, j, ix, names);
        fds_index_release(ix);
        return fds__resp_json(o, 200, j);
    }
    char **list = NULL;
    size_t n = 0;
    fds_store_list_indices(r->store, &list, &n);
    for (size_t i = 0; i < n; i++) {
        fds_index *ix;
        if (pattern_list_match(expr, list[i]) &&
            fds_store_get_index(r->store, list[i], &ix, NULL) == 0) {
            settings_add(r, j, ix, names);
            fds_index_release(ix);
        }
        free(list[i]);
    }
    free(list);
    fds__resp_json(o, 200, j);
}

/* PUT /{index}/_settings and PUT /_settings: {index} is an expression
 * (default: open and closed indices, missing names and no match are
 * errors, as UpdateSettingsRequest's IndicesOptions).  Every index is
 * checked before any is changed.  ?preserve_existing=true leaves alone the
 * settings an index already has; ?reopen=true applies static settings to
 * an open index by closing it, updating and opening it again, as
 * Elasticsearch 8.12's reopen does.  A null value resets a setting. */
void fds__h_settings_put(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {FDS_INDEX_EXPR_PARAMS, "preserve_existing",
                                         "reopen", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    bool preserve = fds__req_param_bool(r, "preserve_existing", false);
    bool reopen = fds__req_param_bool(r, "reopen", false);
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.expand_open = true, .expand_closed = true};
    fds_index **ixs = NULL;
    size_t nix = 0;
    const char *expr = strcmp(r->seg[0], "_settings") ? r->seg[0] : NULL;
    cJSON *body = NULL;
    int rc = fds_index_expr_opts_read(fds__admin_param_cb, r, &opts, &e);
    if (!rc)
        rc = fds__body_json(r, &body, &e);
    if (!rc)
        rc = fds_json_check_body(r->body, r->body_len, &e);
    if (!rc && !cJSON_IsObject(body))
        rc = fds_err_setk(&e, FDS_EPARSE, FDS_KIND_VALIDATION,
                         "Validation Failed: 1: no settings to update;");
    if (!rc)
        rc = fds_index_expr_resolve(r->store, expr, &opts, &ixs, &nix, &e);
    fds_setting_text *kv = calloc(FDS_SETTINGS_GIVEN_MAX, sizeof *kv);
    fds_index_settings *sets = calloc(nix ? nix : 1, sizeof *sets);
    bool *bounce = calloc(nix ? nix : 1, sizeof *bounce);
    size_t n = 0;
    if (!rc && (!kv || !sets || !bounce))
        rc = FDS_ENOMEM;
    if (!rc) {
        cJSON *st = cJSON_GetObjectItemCaseSensitive(body, "settings");
        rc = fds_settings_json_flatten(st && cJSON_IsObject(st) ? st : body, kv,
                                       &n, &e);
    }
    fds_settings_update u = {.kv = kv, .n = n, .preserve_existing = preserve,
                             .reopen = reopen};
    /* every index first: nothing changes unless all of them can */
    for (size_t i = 0; !rc && i < nix; i++)
        rc = fds_index_settings_plan(ixs[i], &u, &sets[i], &bounce[i], &e);
    for (size_t i = 0; !rc && i < nix; i++)
        rc = fds_index_settings_commit(ixs[i], &sets[i], bounce[i], &e);
    free(kv);
    free(sets);
    free(bounce);
    cJSON_Delete(body);
    fds_index_expr_free(ixs, nix);
    if (rc)
        return fds__resp_error(o, &e);
    fds__acknowledged(o, NULL);
}
