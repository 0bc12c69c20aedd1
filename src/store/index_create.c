/*
 * index_create.c: a new index from a create request, whoever asks (PUT
 * /{index}, the first write to a missing index) -- Elasticsearch's
 * MetadataCreateIndexService.  The templates that match the name give
 * their settings, mappings and aliases (templates.c); the request's own
 * are laid over them (a setting or an alias of the same name replaces the
 * template's, mappings merge field by field); the settings rules apply
 * (settings_rules.c), alias names given as date math are resolved, every
 * alias filter is checked against the mapping the index will have, and
 * the index and its aliases are created in one catalogue transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "index_expr.h"
#include "index_rules.h"
#include "ast/search_request.h"

/* What the new index is created with, once templates and request merged. */
typedef struct create_parts {
    fds_setting_text *kv; /* FDS_SETTINGS_GIVEN_MAX slots, n used */
    size_t n;
    char *mapping;        /* JSON text or NULL */
    fds_alias *aliases;
    size_t naliases;
} create_parts;

static void parts_free(create_parts *p)
{
    free(p->kv);
    free(p->mapping);
    fds_aliases_free(p->aliases, p->naliases);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* A copy of alias `a` into `d` (cleared first).  0 or FDS_ENOMEM. */
static int alias_copy(fds_alias *d, const fds_alias *a)
{
    fds_alias_def_clear(d);
    d->alias = dup_or_null(a->alias);
    d->filter = dup_or_null(a->filter);
    d->index_routing = dup_or_null(a->index_routing);
    d->search_routing = dup_or_null(a->search_routing);
    d->is_write_index = a->is_write_index;
    d->is_hidden = a->is_hidden;
    if ((a->alias && !d->alias) || (a->filter && !d->filter) ||
        (a->index_routing && !d->index_routing) ||
        (a->search_routing && !d->search_routing))
        return FDS_ENOMEM;
    return 0;
}

/* Setting kv over p's: one of the same name is taken out, kv goes last. */
static int setting_layer(create_parts *p, const fds_setting_text *kv,
                         fds_err *err)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->kv[i].key, kv->key)) {
            memmove(&p->kv[i], &p->kv[i + 1], (p->n - i - 1) * sizeof *p->kv);
            p->n--;
            break;
        }
    if (p->n == FDS_SETTINGS_GIVEN_MAX)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "too many settings");
    p->kv[p->n++] = *kv;
    return 0;
}

/* Alias `a` over p's: one of the same name is taken out, `a` goes last.
 * p->aliases has room for it. */
static int alias_layer(create_parts *p, const fds_alias *a)
{
    for (size_t i = 0; i < p->naliases; i++)
        if (!strcmp(p->aliases[i].alias, a->alias)) {
            fds_alias_clear(&p->aliases[i]);
            memmove(&p->aliases[i], &p->aliases[i + 1],
                    (p->naliases - i - 1) * sizeof *p->aliases);
            p->naliases--;
            break;
        }
    return alias_copy(&p->aliases[p->naliases++], a);
}

/* No template matched: the request's parts as they are. */
static int request_parts(const fds_index_create_req *req, create_parts *p)
{
    if (req->nsettings)
        memcpy(p->kv, req->settings, req->nsettings * sizeof *p->kv);
    p->n = req->nsettings;
    if (req->mappings && !(p->mapping = strdup(req->mappings)))
        return FDS_ENOMEM;
    p->aliases = calloc(req->naliases ? req->naliases : 1, sizeof *p->aliases);
    if (!p->aliases)
        return FDS_ENOMEM;
    for (size_t i = 0; i < req->naliases; i++) {
        p->naliases++;
        if (alias_copy(&p->aliases[i], &req->aliases[i]))
            return FDS_ENOMEM;
    }
    return 0;
}

/* The request's mappings (JSON text) over the templates' (in acc). */
static int mapping_layer(cJSON *acc, const char *mappings, fds_err *err)
{
    if (!mappings)
        return 0;
    cJSON *m = cJSON_Parse(mappings);
    if (!m)
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_MAPPING_PARSE,
                            "Failed to parse mapping: [mappings] must be "
                            "an object");
    fds_template_mapping_layer(acc, m);
    cJSON_Delete(m);
    return 0;
}

/* Templates matched (their parts in acc): the request's parts over them. */
static int layered_parts(cJSON *acc, const fds_index_create_req *req,
                         create_parts *p, fds_err *err)
{
    int rc = fds_settings_json_flatten(cJSON_GetObjectItemCaseSensitive(acc, "settings"),
                                       p->kv, &p->n, err);
    for (size_t i = 0; !rc && i < req->nsettings; i++)
        rc = setting_layer(p, &req->settings[i], err);
    if (!rc)
        rc = mapping_layer(acc, req->mappings, err);
    if (!rc && !(p->mapping = cJSON_PrintUnformatted(
                     cJSON_GetObjectItemCaseSensitive(acc, "mappings"))))
        rc = FDS_ENOMEM;
    fds_alias *tal = NULL;
    size_t ntal = 0;
    if (!rc)
        rc = fds_aliases_from_json(cJSON_GetObjectItemCaseSensitive(acc, "aliases"),
                                   &tal, &ntal, err);
    if (!rc && !(p->aliases = calloc(ntal + req->naliases + 1, sizeof *p->aliases)))
        rc = FDS_ENOMEM;
    for (size_t i = 0; !rc && i < ntal; i++)
        rc = alias_layer(p, &tal[i]);
    for (size_t i = 0; !rc && i < req->naliases; i++)
        rc = alias_layer(p, &req->aliases[i]);
    fds_aliases_free(tal, ntal);
    return rc;
}

/* Every alias filter checked against the mapping the new index will have. */
static int check_alias_filters(const char *mapping, const fds_alias *a,
                               size_t n, fds_err *e)
{
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any |= a[i].filter != NULL;
    if (!any)
        return 0;
    fds_mapping *m = fds_mapping_create();
    int rc = m ? 0 : FDS_ENOMEM;
    if (!rc && mapping)
        rc = fds_mapping_merge_json(m, mapping, strlen(mapping), e);
    for (size_t i = 0; i < n && !rc; i++)
        rc = fds_alias_filter_check(&a[i], m, e);
    fds_mapping_free(m);
    return rc;
}

int fds_store_create_index_from(fds_store *st, const char *name,
                                const fds_index_create_req *req, fds_err *err)
{
    static const fds_index_create_req none = {0};
    if (!req)
        req = &none;
    create_parts p = {0};
    cJSON *acc = fds_template_parts_new();
    bool matched = false;
    char which[256];
    int rc = acc ? fds_templates_layers(st, name, acc, &matched, which, sizeof which)
                 : FDS_ENOMEM;
    if (!rc && !(p.kv = calloc(FDS_SETTINGS_GIVEN_MAX, sizeof *p.kv)))
        rc = FDS_ENOMEM;
    if (!rc && req->nsettings > FDS_SETTINGS_GIVEN_MAX)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "too many settings");
    if (!rc)
        rc = matched ? layered_parts(acc, req, &p, err) : request_parts(req, &p);
    cJSON_Delete(acc);
    fds_index_settings set;
    fds_index_settings_default(&set);
    if (!rc && (matched || req->settings_given))
        rc = fds_settings_apply(&set, p.kv, p.n, true, false, name, "", err);
    if (!rc)
        rc = fds_alias_names_resolve(p.aliases, p.naliases, err);
    if (!rc)
        rc = check_alias_filters(p.mapping, p.aliases, p.naliases, err);
    if (!rc)
        rc = fds_store_create_index_aliased(st, name, &set, p.mapping, p.aliases,
                                            p.naliases, err);
    if (rc == FDS_ENOMEM && !err->code)
        fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    parts_free(&p);
    return rc;
}
