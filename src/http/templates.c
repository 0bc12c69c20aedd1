/*
 * templates.c: Elasticsearch's index template endpoints.
 *
 *   PUT|POST|GET|HEAD|DELETE /_index_template/{name}     composable
 *   PUT|POST|GET|HEAD|DELETE /_component_template/{name} their building blocks
 *   PUT|POST|GET|HEAD|DELETE /_template/{name}           legacy
 *   GET /_cat/templates[/{name}], POST /_index_template/_simulate_index/{name}
 *
 * The checks made when a template is put, and how the templates that
 * match a new index merge, are the store's (src/store/templates.c); here
 * bodies are parsed and templates shown as Elasticsearch shows them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aliases.h"
#include "cat.h"
#include "handlers.h"
#include "index_rules.h"
#include "request.h"
#include "response.h"

/* URL parameters of the endpoints, as Elasticsearch 8 lists them (the
 * timeouts change nothing on one node; `cause` is only logged there). */
static const char *const PUT_PARAMS[] = {"create", "order", "cause",
                                         "master_timeout", NULL};
static const char *const GET_PARAMS[] = {"flat_settings", "local",
                                         "include_defaults", "master_timeout",
                                         NULL};
static const char *const DELETE_PARAMS[] = {"master_timeout", "timeout", NULL};
static const char *const CAT_PARAMS[] = {"format", "h", "v", "s", "help", "local",
                                         "master_timeout", NULL};
static const char *const SIMULATE_PARAMS[] = {"include_defaults", "cause",
                                              "create", "master_timeout", NULL};

static fds_template_kind path_kind(const fds_req *r)
{
    return !strcmp(r->seg[0], "_component_template") ? FDS_TEMPLATE_COMPONENT
         : !strcmp(r->seg[0], "_template")           ? FDS_TEMPLATE_LEGACY
                                                     : FDS_TEMPLATE_INDEX;
}

/* ---- handlers ------------------------------------------------------------------ */

static void ack(fds_resp *o)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    fds__resp_json(o, 200, j);
}

void fds__h_template_put(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, PUT_PARAMS))
        return;
    fds_template_kind kind = path_kind(r);
    const char *name = r->seg[1];
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_checked(r, &body, &e))
        return fds__resp_error(o, &e);
    if (!cJSON_IsObject(body)) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "parse_exception",
                               "request body is required");
    }
    bool create = fds__req_param_bool(r, "create", false);
    const char *ord = fds__req_param(r, "order");
    if (kind == FDS_TEMPLATE_LEGACY && ord &&
        !cJSON_GetObjectItemCaseSensitive(body, "order"))
        cJSON_AddNumberToObject(body, "order", atof(ord));
    int rc = fds_store_template_add(r->store, kind, name, body, create, &e);
    cJSON_Delete(body);
    if (rc)
        return fds__resp_error(o, &e);
    ack(o);
}

/* Settings as Elasticsearch shows a template's: nested, values as text. */
static cJSON *settings_nested(const cJSON *settings)
{
    cJSON *flat = cJSON_CreateObject(), *out = cJSON_CreateObject();
    fds_template_settings_flat(flat, settings, "");
    for (const cJSON *c = flat->child; c; c = c->next) {
        char key[256];
        snprintf(key, sizeof key, "%s", c->string);
        cJSON *at = out;
        char *p = key, *dot;
        while ((dot = strchr(p, '.'))) {
            *dot = 0;
            cJSON *next = cJSON_GetObjectItemCaseSensitive(at, p);
            if (!next)
                next = cJSON_AddObjectToObject(at, p);
            if (!cJSON_IsObject(next)) {
                *dot = '.';
                break;
            }
            at = next;
            p = dot + 1;
        }
        char *v = cJSON_IsString(c) ? strdup(c->valuestring) : cJSON_PrintUnformatted(c);
        cJSON_AddStringToObject(at, p, v ? v : "");
        free(v);
    }
    cJSON_Delete(flat);
    return out;
}

/* A stored template's `template` section as GET shows it. */
static cJSON *section_json(const cJSON *t)
{
    cJSON *j = cJSON_CreateObject();
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "settings");
    if (s)
        cJSON_AddItemToObject(j, "settings", settings_nested(s));
    const char *keys[] = {"mappings", "aliases"};
    for (size_t k = 0; k < 2; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, keys[k]);
        if (v)
            cJSON_AddItemToObject(j, keys[k], cJSON_Duplicate(v, 1));
    }
    return j;
}

static cJSON *shown(fds_template_kind kind, const cJSON *doc)
{
    cJSON *j = cJSON_CreateObject();
    if (kind == FDS_TEMPLATE_LEGACY) {
        cJSON_AddNumberToObject(j, "order", fds_template_num(doc, "order", 0));
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "version");
        if (v)
            cJSON_AddItemToObject(j, "version", cJSON_Duplicate(v, 1));
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(doc, "index_patterns");
        cJSON_AddItemToObject(j, "index_patterns", fds_template_patterns_array(p));
        cJSON *sec = section_json(doc);
        const char *keys[] = {"settings", "mappings", "aliases"};
        for (size_t k = 0; k < 3; k++) {
            cJSON *v2 = cJSON_DetachItemFromObjectCaseSensitive(sec, keys[k]);
            cJSON_AddItemToObject(j, keys[k], v2 ? v2 : cJSON_CreateObject());
        }
        cJSON_Delete(sec);
        return j;
    }
    for (const cJSON *c = doc->child; c; c = c->next) {
        if (!strcmp(c->string, "template"))
            cJSON_AddItemToObject(j, "template", section_json(c));
        else if (!strcmp(c->string, "index_patterns") && cJSON_IsString(c))
            cJSON_AddItemToObject(j, c->string, fds_template_patterns_array(c));
        else
            cJSON_AddItemToObject(j, c->string, cJSON_Duplicate(c, 1));
    }
    if (kind == FDS_TEMPLATE_INDEX &&
        !cJSON_GetObjectItemCaseSensitive(j, "composed_of"))
        cJSON_AddItemToObject(j, "composed_of", cJSON_CreateArray());
    return j;
}

void fds__h_template_get(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, GET_PARAMS))
        return;
    fds_template_kind kind = path_kind(r);
    const char *names = r->nseg > 1 ? r->seg[1] : NULL;
    fds_template_set t;
    if (fds_template_set_load(r->store, kind, &t))
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    cJSON *list = kind == FDS_TEMPLATE_LEGACY ? cJSON_CreateObject()
                                              : cJSON_CreateArray();
    size_t hits = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (!t.docs[i] || !fds__names_match(names, t.names[i]))
            continue;
        hits++;
        if (kind == FDS_TEMPLATE_LEGACY) {
            cJSON_AddItemToObject(list, t.names[i], shown(kind, t.docs[i]));
            continue;
        }
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", t.names[i]);
        cJSON_AddItemToObject(e, kind == FDS_TEMPLATE_INDEX ? "index_template"
                                                            : "component_template",
                              shown(kind, t.docs[i]));
        cJSON_AddItemToArray(list, e);
    }
    fds_template_set_free(&t);
    bool missing = names && !hits && !strchr(names, '*');
    if (fds__req_is(r, "HEAD")) {
        cJSON_Delete(list);
        return fds__resp_raw(o, missing || (names && !hits) ? 404 : 200,
                            strdup(""), 0, NULL);
    }
    if (missing && kind == FDS_TEMPLATE_LEGACY)
        return fds__resp_json(o, 404, list);
    if (missing) {
        cJSON_Delete(list);
        return fds__resp_errorf(o, 404, "resource_not_found_exception",
                               "%s matching [%s] not found",
                               kind == FDS_TEMPLATE_INDEX ? "index template"
                                                          : "component template",
                               names);
    }
    if (kind == FDS_TEMPLATE_LEGACY)
        return fds__resp_json(o, 200, list);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, kind == FDS_TEMPLATE_INDEX ? "index_templates"
                                                        : "component_templates",
                          list);
    fds__resp_json(o, 200, j);
}

void fds__h_template_delete(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, DELETE_PARAMS))
        return;
    fds_template_kind kind = path_kind(r);
    const char *names = r->seg[1];
    fds_template_set t;
    if (fds_template_set_load(r->store, kind, &t))
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    fds_err e;
    fds_err_clear(&e);
    int rc = 0;
    size_t hits = 0;
    for (size_t i = 0; i < t.n; i++)
        hits += fds__names_match(names, t.names[i]);
    if (!hits)
        rc = fds_err_setk(&e, FDS_ENOTFOUND,
                          kind == FDS_TEMPLATE_LEGACY ? FDS_KIND_TEMPLATE_MISSING
                                                      : FDS_KIND_NOT_FOUND,
                          "%s [%s] missing",
                          kind == FDS_TEMPLATE_COMPONENT ? "component_template"
                                                         : "index_template",
                          names);
    /* a component template in use stays */
    for (size_t i = 0; !rc && kind == FDS_TEMPLATE_COMPONENT && i < t.n; i++)
        if (fds__names_match(names, t.names[i]))
            rc = fds_template_component_check_unused(r->store, t.names[i], &e);
    for (size_t i = 0; i < t.n && !rc; i++)
        if (fds__names_match(names, t.names[i]))
            rc = fds_store_template_delete(r->store, kind, t.names[i], &e);
    fds_template_set_free(&t);
    if (rc)
        return fds__resp_error(o, &e);
    ack(o);
}

/* "[a, b]" of a string array member (legacy and composable alike). */
static char *list_text(const cJSON *doc, const char *key)
{
    char buf[1024];
    fds_template_patterns_text(cJSON_GetObjectItemCaseSensitive(doc, key), buf, sizeof buf);
    return strdup(buf);
}

void fds__h_cat_templates(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {"name|n", "index_patterns|t",
                                       "order|o|p", "version|v",
                                       "composed_of|c"};
    const size_t ncol = sizeof cols / sizeof *cols;
    if (!fds__req_check_params(r, o, CAT_PARAMS))
        return;
    const char *names = r->nseg > 2 ? r->seg[2] : NULL;
    fds_template_set sets[2];
    if (fds_template_set_load(r->store, FDS_TEMPLATE_INDEX, &sets[0]))
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    if (fds_template_set_load(r->store, FDS_TEMPLATE_LEGACY, &sets[1])) {
        fds_template_set_free(&sets[0]);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    char ***rows = calloc(sets[0].n + sets[1].n + 1, sizeof *rows);
    size_t nr = 0;
    for (int k = 0; k < 2 && rows; k++)
        for (size_t i = 0; i < sets[k].n; i++) {
            const cJSON *d = sets[k].docs[i];
            if (!d || !fds__names_match(names, sets[k].names[i]))
                continue;
            char **row = calloc(ncol, sizeof *row);
            if (!row)
                break;
            char num[32];
            row[0] = strdup(sets[k].names[i]);
            row[1] = list_text(d, "index_patterns");
            snprintf(num, sizeof num, "%lld",
                     (long long)fds_template_num(d, k ? "order" : "priority", 0));
            row[2] = strdup(num);
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, "version");
            if (cJSON_IsNumber(v)) {
                snprintf(num, sizeof num, "%lld", (long long)v->valuedouble);
                row[3] = strdup(num);
            }
            row[4] = k ? strdup("") : list_text(d, "composed_of");
            rows[nr++] = row;
        }
    fds_template_set_free(&sets[0]);
    fds_template_set_free(&sets[1]);
    fds__cat_render(r, o, cols, ncol, rows, nr);
    fds__cat_rows_free(rows, nr, ncol);
}

/* POST /_index_template/_simulate_index/{name}: the settings, mappings and
 * aliases index `name` would be created with. */
void fds__h_simulate_index(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, SIMULATE_PARAMS))
        return;
    const char *name = r->seg[2];
    cJSON *acc = fds_template_parts_new();
    bool matched = false;
    char which[256];
    if (!acc || fds_templates_layers(r->store, name, acc, &matched, which,
                                 sizeof which)) {
        cJSON_Delete(acc);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    cJSON *j = cJSON_CreateObject();
    cJSON *t = cJSON_AddObjectToObject(j, "template");
    cJSON_AddItemToObject(t, "settings",
                          settings_nested(cJSON_GetObjectItemCaseSensitive(acc,
                                                                           "settings")));
    cJSON_AddItemToObject(t, "mappings",
                          cJSON_DetachItemFromObjectCaseSensitive(acc, "mappings"));
    cJSON_AddItemToObject(t, "aliases",
                          cJSON_DetachItemFromObjectCaseSensitive(acc, "aliases"));
    cJSON_AddItemToObject(j, "overlapping", cJSON_CreateArray());
    cJSON_Delete(acc);
    fds__resp_json(o, 200, j);
}
