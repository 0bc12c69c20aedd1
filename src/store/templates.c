/*
 * templates.c: Elasticsearch's index templates below the edge.
 *
 * A template is kept in the catalogue as the JSON body it was put with
 * (fds_store_template_put), after the checks Elasticsearch makes when it
 * is put (MetadataIndexTemplateService), made here by
 * fds_store_template_add: its settings apply to a new index, its mappings
 * parse, its aliases are valid and their filters parse against its
 * mappings; component templates named by composed_of exist; two
 * composable templates with the same priority may not have overlapping
 * patterns.
 *
 * When an index is created, fds_templates_layers builds what the templates
 * give it the way Elasticsearch's MetadataCreateIndexService does: the
 * composable template of highest priority whose index_patterns match the
 * name -- its component templates in composed_of order, then its own
 * `template` -- or, when none matches, every matching legacy template in
 * ascending `order` (a higher order wins).  Settings merge key by key;
 * mappings merge field by field (a later definition of a field replaces
 * the earlier one, objects merge their properties); aliases merge by name.
 * index_create.c lays the request's own parts over them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fds_text.h"
#include "index_expr.h"
#include "index_rules.h"

/* Component templates one composable template may name. */
#define FDS_COMPOSED_OF_MAX 64

/* ---- merging ---------------------------------------------------------------- */

/* Settings `src` (nested or dotted, "index." optional) into the flat object
 * `dst` ({"index.codec": "ZSTD"}), later keys replacing earlier ones. */
void fds_template_settings_flat(cJSON *dst, const cJSON *src, const char *prefix)
{
    for (const cJSON *c = src ? src->child : NULL; c; c = c->next) {
        char key[256];
        if (prefix[0])
            snprintf(key, sizeof key, "%s.%s", prefix, c->string);
        else if (strncmp(c->string, "index.", 6) && strcmp(c->string, "index"))
            snprintf(key, sizeof key, "index.%s", c->string);
        else
            snprintf(key, sizeof key, "%s", c->string);
        if (cJSON_IsObject(c)) {
            fds_template_settings_flat(dst, c, key);
            continue;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(dst, key);
        cJSON_AddItemToObject(dst, key, cJSON_Duplicate(c, 1));
    }
}

static bool is_object_field(const cJSON *f)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(f, "type");
    return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(f, "properties")) &&
           (!t || (cJSON_IsString(t) && !strcmp(t->valuestring, "object")));
}

/* Mapping `src` over `dst` (both {"properties": ..., other keys}): a field
 * in both is replaced, unless both are objects (their properties merge);
 * other top-level keys (dynamic, _source, ...) are replaced. */
static void mapping_merge(cJSON *dst, const cJSON *src)
{
    for (const cJSON *c = src ? src->child : NULL; c; c = c->next) {
        cJSON *have = cJSON_GetObjectItemCaseSensitive(dst, c->string);
        if (!strcmp(c->string, "properties") && cJSON_IsObject(c) &&
            cJSON_IsObject(have)) {
            for (const cJSON *f = c->child; f; f = f->next) {
                cJSON *hf = cJSON_GetObjectItemCaseSensitive(have, f->string);
                if (hf && is_object_field(hf) && is_object_field(f)) {
                    mapping_merge(hf, f);
                    continue;
                }
                cJSON_DeleteItemFromObjectCaseSensitive(have, f->string);
                cJSON_AddItemToObject(have, f->string, cJSON_Duplicate(f, 1));
            }
            continue;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(dst, c->string);
        cJSON_AddItemToObject(dst, c->string, cJSON_Duplicate(c, 1));
    }
}

void fds_template_mapping_layer(cJSON *acc, const cJSON *mappings)
{
    if (cJSON_IsObject(mappings))
        mapping_merge(cJSON_GetObjectItemCaseSensitive(acc, "mappings"), mappings);
}

static void aliases_merge(cJSON *dst, const cJSON *src)
{
    for (const cJSON *c = src ? src->child : NULL; c; c = c->next) {
        cJSON_DeleteItemFromObjectCaseSensitive(dst, c->string);
        cJSON_AddItemToObject(dst, c->string, cJSON_Duplicate(c, 1));
    }
}

/* One {settings, mappings, aliases} layer over the body being built. */
static void layer(cJSON *acc, const cJSON *part)
{
    if (!part)
        return;
    fds_template_settings_flat(cJSON_GetObjectItemCaseSensitive(acc, "settings"),
                     cJSON_GetObjectItemCaseSensitive(part, "settings"), "");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(part, "mappings");
    if (cJSON_IsObject(m))
        mapping_merge(cJSON_GetObjectItemCaseSensitive(acc, "mappings"), m);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(part, "aliases");
    if (cJSON_IsObject(a))
        aliases_merge(cJSON_GetObjectItemCaseSensitive(acc, "aliases"), a);
}

cJSON *fds_template_parts_new(void)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddObjectToObject(b, "settings");
    cJSON_AddObjectToObject(b, "mappings");
    cJSON_AddObjectToObject(b, "aliases");
    return b;
}

/* Does index_patterns `pats` (a string or an array) match `name`? */
static bool patterns_match(const cJSON *pats, const char *name)
{
    if (cJSON_IsString(pats))
        return fds_glob_match(pats->valuestring, name, strlen(name));
    const cJSON *p;
    cJSON_ArrayForEach(p, pats) {
        if (cJSON_IsString(p) && fds_glob_match(p->valuestring, name, strlen(name)))
            return true;
    }
    return false;
}

/* The stored templates of `kind`, parsed: names[i] and docs[i]. */

void fds_template_set_free(fds_template_set *t)
{
    for (size_t i = 0; t->docs && i < t->n; i++)
        cJSON_Delete(t->docs[i]);
    free(t->docs);
    fds_templates_free(t->names, t->jsons, t->n);
    memset(t, 0, sizeof *t);
}

int fds_template_set_load(fds_store *st, fds_template_kind kind,
                          fds_template_set *t)
{
    memset(t, 0, sizeof *t);
    if (fds_store_templates_list(st, kind, &t->names, &t->jsons, &t->n))
        return FDS_ENOMEM;
    t->docs = calloc(t->n ? t->n : 1, sizeof *t->docs);
    if (!t->docs) {
        fds_template_set_free(t);
        return FDS_ENOMEM;
    }
    for (size_t i = 0; i < t->n; i++)
        t->docs[i] = cJSON_Parse(t->jsons[i]);
    return 0;
}

cJSON *fds_template_set_find(const fds_template_set *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->names[i], name))
            return t->docs[i];
    return NULL;
}

double fds_template_num(const cJSON *j, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The composable template (position in `ix`) an index `name` takes: the
 * matching one of highest priority, or -1. */
static long composable_for(const fds_template_set *ix, const char *name)
{
    long best = -1;
    for (size_t i = 0; i < ix->n; i++) {
        if (!ix->docs[i] ||
            !patterns_match(cJSON_GetObjectItemCaseSensitive(ix->docs[i],
                                                             "index_patterns"),
                            name))
            continue;
        if (best < 0 || fds_template_num(ix->docs[i], "priority", 0) >
                            fds_template_num(ix->docs[best], "priority", 0))
            best = (long)i;
    }
    return best;
}

/* The layers of composable template `doc`: its components, then itself. */
static void compose(cJSON *acc, const cJSON *doc, const fds_template_set *comp)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "composed_of")) {
        const cJSON *ct = cJSON_IsString(c) ? fds_template_set_find(comp, c->valuestring) : NULL;
        layer(acc, cJSON_GetObjectItemCaseSensitive(ct, "template"));
    }
    layer(acc, cJSON_GetObjectItemCaseSensitive(doc, "template"));
}

static int order_cmp(const void *a, const void *b)
{
    double x = fds_template_num(*(cJSON *const *)a, "order", 0);
    double y = fds_template_num(*(cJSON *const *)b, "order", 0);
    return x < y ? -1 : x > y;
}

/* The templates' body for `name` (no request part); *matched tells
 * whether any template matched, *which names the composable one (or ""). */
int fds_templates_layers(fds_store *st, const char *name, cJSON *acc,
                         bool *matched, char *which, size_t cap)
{
    fds_template_set ix, comp, leg;
    *matched = false;
    which[0] = 0;
    if (fds_template_set_load(st, FDS_TEMPLATE_INDEX, &ix))
        return FDS_ENOMEM;
    long best = composable_for(&ix, name);
    if (best >= 0) {
        if (fds_template_set_load(st, FDS_TEMPLATE_COMPONENT, &comp)) {
            fds_template_set_free(&ix);
            return FDS_ENOMEM;
        }
        compose(acc, ix.docs[best], &comp);
        snprintf(which, cap, "%s", ix.names[best]);
        *matched = true;
        fds_template_set_free(&comp);
        fds_template_set_free(&ix);
        return 0;
    }
    fds_template_set_free(&ix);
    if (fds_template_set_load(st, FDS_TEMPLATE_LEGACY, &leg))
        return FDS_ENOMEM;
    cJSON **hit = calloc(leg.n ? leg.n : 1, sizeof *hit);
    size_t nh = 0;
    for (size_t i = 0; hit && i < leg.n; i++)
        if (leg.docs[i] &&
            patterns_match(cJSON_GetObjectItemCaseSensitive(leg.docs[i],
                                                            "index_patterns"),
                           name))
            hit[nh++] = leg.docs[i];
    qsort(hit, nh, sizeof *hit, order_cmp);
    for (size_t i = 0; i < nh; i++)
        layer(acc, hit[i]);
    *matched = nh > 0;
    free(hit);
    fds_template_set_free(&leg);
    return 0;
}

/* ---- checks when a template is put ---------------------------------------- */

static int bad(fds_err *err, const char *fmt, const char *a, const char *b)
{
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT, fmt, a, b);
}

/* Its {settings, mappings, aliases} (composed, for a composable template)
 * as a new index would take them. */
static int check_layers(const cJSON *acc, const char *name, fds_err *err)
{
    fds_index_settings set;
    fds_index_settings_default(&set);
    int rc = fds_settings_from_json(cJSON_GetObjectItemCaseSensitive(acc, "settings"),
                                     &set, name, err);
    fds_mapping *m = rc ? NULL : fds_mapping_create();
    if (!rc && !m)
        rc = FDS_ENOMEM;
    const cJSON *mj = cJSON_GetObjectItemCaseSensitive(acc, "mappings");
    if (!rc && mj && mj->child) {
        char *t = cJSON_PrintUnformatted(mj);
        rc = t ? fds_mapping_merge_json(m, t, strlen(t), err) : FDS_ENOMEM;
        free(t);
    }
    fds_alias *al = NULL;
    size_t nal = 0;
    if (!rc)
        rc = fds_aliases_from_json(cJSON_GetObjectItemCaseSensitive(acc, "aliases"),
                                    &al, &nal, err);
    for (size_t i = 0; !rc && i < nal; i++) {
        rc = fds_alias_name_check(al[i].alias, err);
        if (!rc)
            rc = fds_alias_filter_check(&al[i], m, err);
    }
    fds_aliases_free(al, nal);
    fds_mapping_free(m);
    if (rc == FDS_ENOMEM && !err->code)
        fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    return rc;
}

/* `index_patterns` present and a string or an array of strings. */
static int check_patterns(const cJSON *p, const char *name, fds_err *err)
{
    if (!p)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                            "Validation Failed: 1: index patterns are missing;");
    if (cJSON_IsString(p))
        return 0;
    const cJSON *e;
    bool any = false;
    if (cJSON_IsArray(p))
        cJSON_ArrayForEach(e, p) {
            if (!cJSON_IsString(e))
                return bad(err, "template [%s]: [index_patterns] must be "
                                "strings%s", name, "");
            any = true;
        }
    if (!any)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                            "Validation Failed: 1: index patterns are missing;");
    return 0;
}

/* Can some name match both patterns?  Elasticsearch intersects automata;
 * for the `*` globs templates use: two patterns with wildcards overlap
 * when one's literal prefix starts the other's, and a pattern without one
 * overlaps what it matches. */
static bool pattern_overlap(const char *a, const char *b)
{
    if (!strchr(a, '*'))
        return fds_glob_match(b, a, strlen(a));
    if (!strchr(b, '*'))
        return fds_glob_match(a, b, strlen(b));
    size_t la = strcspn(a, "*"), lb = strcspn(b, "*");
    size_t l = la < lb ? la : lb;
    return !memcmp(a, b, l);
}

void fds_template_patterns_text(const cJSON *p, char *out, size_t cap)
{
    size_t l = 0;
    out[0] = 0;
    l += (size_t)snprintf(out, cap, "[");
    if (cJSON_IsString(p))
        l += (size_t)snprintf(out + l, cap > l ? cap - l : 0, "%s", p->valuestring);
    const cJSON *e;
    bool first = true;
    if (cJSON_IsArray(p))
        cJSON_ArrayForEach(e, p) {
            if (!cJSON_IsString(e) || l >= cap)
                continue;
            l += (size_t)snprintf(out + l, cap - l, "%s%s", first ? "" : ", ",
                                  e->valuestring);
            first = false;
        }
    if (l < cap)
        snprintf(out + l, cap - l, "]");
}

/* A pattern list as an array (a new one; a string becomes [string]). */
cJSON *fds_template_patterns_array(const cJSON *p)
{
    if (!cJSON_IsString(p))
        return p ? cJSON_Duplicate(p, 1) : cJSON_CreateArray();
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateString(p->valuestring));
    return a;
}

static bool patterns_overlap(const cJSON *p, const cJSON *q)
{
    const cJSON *x, *y;
    cJSON *pa = fds_template_patterns_array(p), *qa = fds_template_patterns_array(q);
    bool hit = false;
    cJSON_ArrayForEach(x, pa) {
        cJSON_ArrayForEach(y, qa) {
            if (cJSON_IsString(x) && cJSON_IsString(y) &&
                pattern_overlap(x->valuestring, y->valuestring))
                hit = true;
        }
    }
    cJSON_Delete(pa);
    cJSON_Delete(qa);
    return hit;
}

static int check_keys(const cJSON *body, const char *const *keys, const char *what,
                      fds_err *err)
{
    for (const cJSON *c = body->child; c; c = c->next) {
        size_t k = 0;
        while (keys[k] && strcmp(keys[k], c->string))
            k++;
        if (!keys[k])
            return fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                                "[%s] unknown field [%s]", what, c->string);
    }
    return 0;
}

static int check_section(const cJSON *t, fds_err *err)
{
    static const char *const keys[] = {"settings", "mappings", "aliases",
                                       "lifecycle", NULL};
    if (t && !cJSON_IsObject(t))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                            "[template] must be an object");
    return t ? check_keys(t, keys, "template", err) : 0;
}

static int check_composable(fds_store *st, const char *name, const cJSON *body,
                            bool create, fds_err *err)
{
    static const char *const keys[] = {
        "index_patterns", "template", "composed_of", "priority", "version",
        "_meta", "data_stream", "allow_auto_create",
        "ignore_missing_component_templates", "deprecated", NULL};
    int rc = check_keys(body, keys, "index_template", err);
    if (!rc && cJSON_GetObjectItemCaseSensitive(body, "data_stream"))
        rc = fds_err_setk(err, FDS_EUNSUPPORTED, FDS_KIND_INVALID_ARGUMENT,
                          "index template [%s]: [data_stream] is not supported: "
                          "fieldstore has no data streams", name);
    const cJSON *pats = cJSON_GetObjectItemCaseSensitive(body, "index_patterns");
    if (!rc)
        rc = check_patterns(pats, name, err);
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(body, "priority");
    if (!rc && pr && (!cJSON_IsNumber(pr) || pr->valuedouble < 0))
        rc = bad(err, "Validation Failed: 1: index template priority must be "
                      ">= 0%s%s;", "", "");
    if (!rc)
        rc = check_section(cJSON_GetObjectItemCaseSensitive(body, "template"), err);
    fds_template_set ix = {0}, comp = {0};
    if (!rc && (fds_template_set_load(st, FDS_TEMPLATE_INDEX, &ix) ||
                fds_template_set_load(st, FDS_TEMPLATE_COMPONENT, &comp)))
        rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (!rc && create && fds_template_set_find(&ix, name))
        rc = bad(err, "index template [%s] already exists%s", name, "");
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(body, "composed_of");
    if (!rc && co && (!cJSON_IsArray(co) ||
                      cJSON_GetArraySize(co) > FDS_COMPOSED_OF_MAX))
        rc = bad(err, "index template [%s]: [composed_of] must be an array of "
                      "at most 64 names%s", name, "");
    const cJSON *c;
    cJSON_ArrayForEach(c, co) {
        if (rc)
            break;
        if (!cJSON_IsString(c) || !fds_template_set_find(&comp, c->valuestring))
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "index template [%s] specifies component "
                              "templates [%s] that do not exist", name,
                              cJSON_IsString(c) ? c->valuestring : "?");
    }
    /* same priority, overlapping patterns: which would apply is undefined */
    for (size_t i = 0; !rc && i < ix.n; i++) {
        if (!strcmp(ix.names[i], name) || !ix.docs[i])
            continue;
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(ix.docs[i],
                                                           "index_patterns");
        if (fds_template_num(ix.docs[i], "priority", 0) != (pr ? pr->valuedouble : 0) ||
            !patterns_overlap(pats, op))
            continue;
        char mine[256], theirs[256];
        fds_template_patterns_text(pats, mine, sizeof mine);
        fds_template_patterns_text(op, theirs, sizeof theirs);
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "index template [%s] has index patterns %s matching "
                          "patterns from existing templates [%s] with patterns "
                          "(%s => %s) that have the same priority [%lld], "
                          "multiple index templates may not match during index "
                          "creation, please use a different priority", name,
                          mine, ix.names[i], ix.names[i], theirs,
                          (long long)(pr ? pr->valuedouble : 0));
    }
    if (!rc) {
        cJSON *acc = fds_template_parts_new();
        compose(acc, body, &comp);
        rc = check_layers(acc, name, err);
        cJSON_Delete(acc);
    }
    fds_template_set_free(&ix);
    fds_template_set_free(&comp);
    return rc;
}

static int check_component(const char *name, const cJSON *body, fds_err *err)
{
    static const char *const keys[] = {"template", "version", "_meta",
                                       "deprecated", NULL};
    int rc = check_keys(body, keys, "component_template", err);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(body, "template");
    if (!rc && !t)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                          "Validation Failed: 1: [template] is required;");
    if (!rc)
        rc = check_section(t, err);
    if (!rc) {
        cJSON *acc = fds_template_parts_new();
        layer(acc, t);
        rc = check_layers(acc, name, err);
        cJSON_Delete(acc);
    }
    return rc;
}

static int check_legacy(const char *name, const cJSON *body, fds_err *err)
{
    static const char *const keys[] = {"index_patterns", "order", "version",
                                       "settings", "mappings", "aliases", NULL};
    int rc = check_keys(body, keys, "template", err);
    if (!rc)
        rc = check_patterns(cJSON_GetObjectItemCaseSensitive(body, "index_patterns"),
                            name, err);
    if (!rc) {
        cJSON *acc = fds_template_parts_new();
        layer(acc, body);
        rc = check_layers(acc, name, err);
        cJSON_Delete(acc);
    }
    return rc;
}

/* Elasticsearch's template name rules (MetadataIndexTemplateService
 * validate): no space, comma, '"', '*', '\\', '<', '|', '>', '/', '?',
 * not starting with '_', lower case. */
static int check_template_name(const char *name, fds_err *err)
{
    const char *why = NULL;
    if (strchr(name, ' '))
        why = "must not contain a space";
    else if (strchr(name, ','))
        why = "must not contain a ','";
    else if (strchr(name, '#'))
        why = "must not contain a '#'";
    else if (name[0] == '_')
        why = "must not start with '_'";
    else if (strpbrk(name, "\"*\\<|>/?"))
        why = "must not contain the following characters [\", *, \\, <, |, >, /, ?]";
    for (const char *p = name; !why && *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            why = "must be lower case";
    if (why)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "index_template [%s] invalid, cause [%s]", name, why);
    return 0;
}

int fds_template_component_check_unused(fds_store *st, const char *name,
                                        fds_err *err)
{
    fds_template_set ix;
    if (fds_template_set_load(st, FDS_TEMPLATE_INDEX, &ix))
        return 0; /* as before: a failed load checks nothing */
    int rc = 0;
    for (size_t k = 0; k < ix.n && !rc; k++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(ix.docs[k],
                                                              "composed_of")) {
            if (!rc && cJSON_IsString(c) && !strcmp(c->valuestring, name))
                rc = bad(err, "component templates [%s] cannot be "
                              "removed as they are still in use by index "
                              "templates [%s]", name, ix.names[k]);
        }
    }
    fds_template_set_free(&ix);
    return rc;
}

int fds_store_template_add(fds_store *st, fds_template_kind kind,
                           const char *name, const cJSON *body, bool create,
                           fds_err *err)
{
    int rc = check_template_name(name, err);
    if (!rc && kind == FDS_TEMPLATE_INDEX)
        rc = check_composable(st, name, body, create, err);
    else if (!rc && kind == FDS_TEMPLATE_COMPONENT)
        rc = check_component(name, body, err);
    else if (!rc)
        rc = check_legacy(name, body, err);
    if (!rc && create && kind != FDS_TEMPLATE_INDEX) {
        char **names, **jsons;
        size_t n;
        if (!fds_store_templates_list(st, kind, &names, &jsons, &n)) {
            for (size_t i = 0; i < n && !rc; i++)
                if (!strcmp(names[i], name))
                    rc = bad(err, kind == FDS_TEMPLATE_LEGACY
                                      ? "index_template [%s] already exists%s"
                                      : "component template [%s] already exists%s",
                             name, "");
            fds_templates_free(names, jsons, n);
        }
    }
    char *json = rc ? NULL : cJSON_PrintUnformatted(body);
    if (!rc && !json)
        rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (!rc)
        rc = fds_store_template_put(st, kind, name, json, err);
    free(json);
    return rc;
}
