/*
 * index_json.c: the JSON forms of an index's creation parts that the store
 * reads itself -- templates are kept in the catalogue as the JSON they were
 * put with, so their `settings` and `aliases` are read here, and the REST
 * layer parses a request's parts with the same readers: settings (nested,
 * dotted, "index." optional) into setting texts, and an `aliases` object
 * into alias definitions, with a filter checked against a mapping
 * (Elasticsearch's AliasValidator.validateAliasFilter).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "index_rules.h"
#include "ast/search_request.h"

/* ---- settings ------------------------------------------------------------ */


/* Flatten {"index":{"codec":"ZSTD"}} / {"index.codec":"ZSTD"} / {"codec":..}
 * into "index.codec"="ZSTD".  Returns 0 or FDS_EINVAL (err filled). */
static int flatten(const cJSON *obj, const char *prefix, fds_setting_text *kv,
                   size_t *n, fds_err *err)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        char key[160];
        if (prefix[0])
            snprintf(key, sizeof key, "%.80s.%.78s", prefix, c->string);
        else
            snprintf(key, sizeof key, "%s", c->string);
        if (cJSON_IsObject(c)) {
            int rc = flatten(c, key, kv, n, err);
            if (rc)
                return rc;
            continue;
        }
        if (*n == FDS_SETTINGS_GIVEN_MAX)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                               "too many settings");
        fds_setting_text *o = &kv[(*n)++];
        if (strncmp(key, "index.", 6))
            snprintf(o->key, sizeof o->key, "index.%s", key);
        else
            snprintf(o->key, sizeof o->key, "%s", key);
        if (cJSON_IsString(c))
            snprintf(o->value, sizeof o->value, "%s", c->valuestring);
        else if (cJSON_IsBool(c))
            snprintf(o->value, sizeof o->value, "%s", cJSON_IsTrue(c) ? "true" : "false");
        else if (cJSON_IsNumber(c)) {
            double d = c->valuedouble;
            if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(long long)d)
                snprintf(o->value, sizeof o->value, "%lld", (long long)d);
            else
                snprintf(o->value, sizeof o->value, "%g", d);
        } else if (cJSON_IsNull(c)) {
            o->value[0] = 0; /* reset to default */
        } else {
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                               "setting [%s] must be a string, number or boolean",
                               o->key);
        }
    }
    return 0;
}

int fds_settings_json_flatten(const cJSON *settings, fds_setting_text *kv,
                              size_t *n, fds_err *err)
{
    *n = 0;
    if (!settings)
        return 0;
    if (!cJSON_IsObject(settings))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[settings] must be an object");
    return flatten(settings, "", kv, n, err);
}

int fds_settings_from_json(const cJSON *settings, fds_index_settings *set,
                           const char *index_name, fds_err *err)
{
    if (!settings)
        return 0;
    fds_setting_text *kv = calloc(FDS_SETTINGS_GIVEN_MAX, sizeof *kv);
    size_t n = 0;
    int rc = kv ? fds_settings_json_flatten(settings, kv, &n, err)
                : fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (!rc)
        rc = fds_settings_apply(set, kv, n, true, false, index_name, "", err);
    free(kv);
    return rc;
}

/* ---- aliases ------------------------------------------------------------- */

void fds_alias_def_clear(fds_alias *a)
{
    fds_alias_clear(a);
    a->is_write_index = a->is_hidden = -1;
}

/* A routing value: a string, or a number as Elasticsearch takes it. */
static char *routing_text(const cJSON *v)
{
    if (cJSON_IsString(v))
        return strdup(v->valuestring);
    if (cJSON_IsNumber(v)) {
        char b[32];
        snprintf(b, sizeof b, "%lld", (long long)v->valuedouble);
        return strdup(b);
    }
    return NULL;
}

/* One member of an alias body (filter, routing, index_routing,
 * search_routing, is_write_index, is_hidden) into `a`.  1 when the key is
 * none of these, 0 when taken, or an FDS_E code. */
int fds_alias_member_from_json(const cJSON *m, fds_alias *a, fds_err *err)
{
    const char *k = m->string;
    if (!strcmp(k, "filter")) {
        if (!cJSON_IsObject(m))
            return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                                "[filter] must be an object");
        free(a->filter);
        a->filter = cJSON_PrintUnformatted(m);
        return a->filter ? 0 : FDS_ENOMEM;
    }
    bool both = !strcmp(k, "routing");
    if (both || !strcmp(k, "index_routing") || !strcmp(k, "search_routing")) {
        char *v = routing_text(m);
        if (!v)
            return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                                "[%s] must be a string", k);
        if (both || k[0] == 'i') {
            free(a->index_routing);
            a->index_routing = strdup(v);
        }
        if (both || k[0] == 's') {
            free(a->search_routing);
            a->search_routing = strdup(v);
        }
        free(v);
        return 0;
    }
    int *flag = !strcmp(k, "is_write_index") ? &a->is_write_index
              : !strcmp(k, "is_hidden")      ? &a->is_hidden
                                             : NULL;
    if (!flag)
        return 1;
    if (cJSON_IsNull(m))
        *flag = -1;
    else if (cJSON_IsBool(m))
        *flag = cJSON_IsTrue(m);
    else if (cJSON_IsString(m) && (!strcmp(m->valuestring, "true") ||
                                   !strcmp(m->valuestring, "false")))
        *flag = m->valuestring[0] == 't'; /* Elasticsearch reads "true" too */
    else
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[%s] must be a boolean", k);
    return 0;
}

/* An alias body ({filter, routing, ...}) into `a` (cleared first; the name
 * is the caller's to set).  0, FDS_EPARSE (kind PARSE), FDS_ENOMEM. */
static int alias_body(const cJSON *b, const char *name, fds_alias *a,
                      fds_err *err)
{
    fds_alias_def_clear(a);
    if (b && !cJSON_IsObject(b))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "alias [%s] must be an object", name);
    for (const cJSON *m = b ? b->child : NULL; m; m = m->next) {
        int rc = fds_alias_member_from_json(m, a, err);
        if (rc == 1)
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                              "unknown field [%s] in alias [%s]", m->string,
                              name);
        if (rc)
            return rc;
    }
    return 0;
}

int fds_aliases_from_json(const cJSON *obj, fds_alias **out, size_t *n,
                           fds_err *err)
{
    *out = NULL;
    *n = 0;
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[aliases] must be an object");
    size_t cnt = (size_t)cJSON_GetArraySize(obj);
    fds_alias *v = calloc(cnt ? cnt : 1, sizeof *v);
    if (!v)
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    int rc = 0;
    size_t k = 0;
    for (const cJSON *c = obj->child; c && !rc; c = c->next, k++) {
        rc = alias_body(c, c->string, &v[k], err);
        if (!rc && !(v[k].alias = strdup(c->string)))
            rc = FDS_ENOMEM;
    }
    if (rc) {
        fds_aliases_free(v, k);
        return rc;
    }
    *out = v;
    *n = k;
    return 0;
}

int fds_alias_filter_check(const fds_alias *a, const fds_mapping *m,
                            fds_err *err)
{
    if (!a->filter)
        return 0;
    fds_err fe;
    fds_err_clear(&fe);
    if (!fds_query_check(a->filter, strlen(a->filter), m, &fe))
        return 0;
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "failed to parse filter for alias [%s]: %s", a->alias,
                        fe.reason);
}

