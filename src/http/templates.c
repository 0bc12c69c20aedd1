/*
 * templates.c: Elasticsearch's index templates.
 *
 *   PUT|POST|GET|HEAD|DELETE /_index_template/{name}     composable
 *   PUT|POST|GET|HEAD|DELETE /_component_template/{name} their building blocks
 *   PUT|POST|GET|HEAD|DELETE /_template/{name}           legacy
 *   GET /_cat/templates[/{name}], POST /_index_template/_simulate_index/{name}
 *
 * A template is kept in the catalogue as the JSON body it was put with
 * (fds_store_template_put), after the checks Elasticsearch makes when it
 * is put (MetadataIndexTemplateService): its settings apply to a new
 * index, its mappings parse, its aliases are valid and their filters parse
 * against its mappings; component templates named by composed_of exist;
 * two composable templates with the same priority may not have
 * overlapping patterns.
 *
 * When an index is created (PUT /{index}, or the first write to a missing
 * index), fds__template_body builds its create-index body the way
 * Elasticsearch's MetadataCreateIndexService does: the composable template
 * of highest priority whose index_patterns match the name -- its
 * component templates in composed_of order, then its own `template` --
 * or, when none matches, every matching legacy template in ascending
 * `order` (a higher order wins); then the request's own body.  Settings
 * merge key by key; mappings merge field by field (a later definition of a
 * field replaces the earlier one, objects merge their properties); aliases
 * merge by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_text.h"
#include "http_int.h"
#include "ast/search_request.h"

/* Component templates one composable template may name. */
#define FDS_COMPOSED_OF_MAX 64

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

/* ---- merging ---------------------------------------------------------------- */

/* Settings `src` (nested or dotted, "index." optional) into the flat object
 * `dst` ({"index.codec": "ZSTD"}), later keys replacing earlier ones. */
static void settings_flatten(cJSON *dst, const cJSON *src, const char *prefix)
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
            settings_flatten(dst, c, key);
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
    settings_flatten(cJSON_GetObjectItemCaseSensitive(acc, "settings"),
                     cJSON_GetObjectItemCaseSensitive(part, "settings"), "");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(part, "mappings");
    if (cJSON_IsObject(m))
        mapping_merge(cJSON_GetObjectItemCaseSensitive(acc, "mappings"), m);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(part, "aliases");
    if (cJSON_IsObject(a))
        aliases_merge(cJSON_GetObjectItemCaseSensitive(acc, "aliases"), a);
}

static cJSON *empty_body(void)
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
typedef struct tmpl_set {
    char **names, **jsons;
    cJSON **docs;
    size_t n;
} tmpl_set;

static void set_free(tmpl_set *t)
{
    for (size_t i = 0; t->docs && i < t->n; i++)
        cJSON_Delete(t->docs[i]);
    free(t->docs);
    fds_templates_free(t->names, t->jsons, t->n);
    memset(t, 0, sizeof *t);
}

static int set_load(fds_store *st, fds_template_kind kind, tmpl_set *t)
{
    memset(t, 0, sizeof *t);
    if (fds_store_templates_list(st, kind, &t->names, &t->jsons, &t->n))
        return FDS_ENOMEM;
    t->docs = calloc(t->n ? t->n : 1, sizeof *t->docs);
    if (!t->docs) {
        set_free(t);
        return FDS_ENOMEM;
    }
    for (size_t i = 0; i < t->n; i++)
        t->docs[i] = cJSON_Parse(t->jsons[i]);
    return 0;
}

static cJSON *set_find(const tmpl_set *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->names[i], name))
            return t->docs[i];
    return NULL;
}

static double num_or(const cJSON *j, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The composable template (position in `ix`) an index `name` takes: the
 * matching one of highest priority, or -1. */
static long composable_for(const tmpl_set *ix, const char *name)
{
    long best = -1;
    for (size_t i = 0; i < ix->n; i++) {
        if (!ix->docs[i] ||
            !patterns_match(cJSON_GetObjectItemCaseSensitive(ix->docs[i],
                                                             "index_patterns"),
                            name))
            continue;
        if (best < 0 || num_or(ix->docs[i], "priority", 0) >
                            num_or(ix->docs[best], "priority", 0))
            best = (long)i;
    }
    return best;
}

/* The layers of composable template `doc`: its components, then itself. */
static void compose(cJSON *acc, const cJSON *doc, const tmpl_set *comp)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "composed_of")) {
        const cJSON *ct = cJSON_IsString(c) ? set_find(comp, c->valuestring) : NULL;
        layer(acc, cJSON_GetObjectItemCaseSensitive(ct, "template"));
    }
    layer(acc, cJSON_GetObjectItemCaseSensitive(doc, "template"));
}

static int order_cmp(const void *a, const void *b)
{
    double x = num_or(*(cJSON *const *)a, "order", 0);
    double y = num_or(*(cJSON *const *)b, "order", 0);
    return x < y ? -1 : x > y;
}

/* The templates' body for `name` (no request part); *matched tells
 * whether any template matched, *which names the composable one (or ""). */
static int templates_layers(fds_store *st, const char *name, cJSON *acc,
                            bool *matched, char *which, size_t cap)
{
    tmpl_set ix, comp, leg;
    *matched = false;
    which[0] = 0;
    if (set_load(st, FDS_TEMPLATE_INDEX, &ix))
        return FDS_ENOMEM;
    long best = composable_for(&ix, name);
    if (best >= 0) {
        if (set_load(st, FDS_TEMPLATE_COMPONENT, &comp)) {
            set_free(&ix);
            return FDS_ENOMEM;
        }
        compose(acc, ix.docs[best], &comp);
        snprintf(which, cap, "%s", ix.names[best]);
        *matched = true;
        set_free(&comp);
        set_free(&ix);
        return 0;
    }
    set_free(&ix);
    if (set_load(st, FDS_TEMPLATE_LEGACY, &leg))
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
    set_free(&leg);
    return 0;
}

int fds__template_body(fds_store *st, const char *name, const cJSON *body,
                       cJSON **out, fds_err *err)
{
    *out = NULL;
    cJSON *acc = empty_body();
    bool matched = false;
    char which[256];
    int rc = acc ? templates_layers(st, name, acc, &matched, which, sizeof which)
                 : FDS_ENOMEM;
    if (rc) {
        cJSON_Delete(acc);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    if (!matched) { /* the request's body as it is */
        cJSON_Delete(acc);
        *out = body ? cJSON_Duplicate(body, 1) : NULL;
        return 0;
    }
    if (body && cJSON_IsObject(body)) {
        layer(acc, body);
        for (const cJSON *c = body->child; c; c = c->next) /* for its errors */
            if (strcmp(c->string, "settings") && strcmp(c->string, "mappings") &&
                strcmp(c->string, "aliases"))
                cJSON_AddItemToObject(acc, c->string, cJSON_Duplicate(c, 1));
    } else if (body) {
        cJSON_Delete(acc);
        *out = cJSON_Duplicate(body, 1);
        return 0;
    }
    *out = acc;
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
    int rc = fds__settings_from_json(cJSON_GetObjectItemCaseSensitive(acc, "settings"),
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
        rc = fds__aliases_from_json(cJSON_GetObjectItemCaseSensitive(acc, "aliases"),
                                    &al, &nal, err);
    for (size_t i = 0; !rc && i < nal; i++) {
        rc = fds_alias_name_check(al[i].alias, err);
        if (!rc)
            rc = fds__alias_filter_check(&al[i], m, err);
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

static void patterns_text(const cJSON *p, char *out, size_t cap)
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
static cJSON *as_array(const cJSON *p)
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
    cJSON *pa = as_array(p), *qa = as_array(q);
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
    tmpl_set ix = {0}, comp = {0};
    if (!rc && (set_load(st, FDS_TEMPLATE_INDEX, &ix) ||
                set_load(st, FDS_TEMPLATE_COMPONENT, &comp)))
        rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (!rc && create && set_find(&ix, name))
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
        if (!cJSON_IsString(c) || !set_find(&comp, c->valuestring))
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
        if (num_or(ix.docs[i], "priority", 0) != (pr ? pr->valuedouble : 0) ||
            !patterns_overlap(pats, op))
            continue;
        char mine[256], theirs[256];
        patterns_text(pats, mine, sizeof mine);
        patterns_text(op, theirs, sizeof theirs);
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
        cJSON *acc = empty_body();
        compose(acc, body, &comp);
        rc = check_layers(acc, name, err);
        cJSON_Delete(acc);
    }
    set_free(&ix);
    set_free(&comp);
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
        cJSON *acc = empty_body();
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
        cJSON *acc = empty_body();
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
    int rc = check_template_name(name, &e);
    if (!rc && kind == FDS_TEMPLATE_INDEX)
        rc = check_composable(r->store, name, body, create, &e);
    else if (!rc && kind == FDS_TEMPLATE_COMPONENT)
        rc = check_component(name, body, &e);
    else if (!rc) {
        const char *ord = fds__req_param(r, "order");
        if (ord && !cJSON_GetObjectItemCaseSensitive(body, "order"))
            cJSON_AddNumberToObject(body, "order", atof(ord));
        rc = check_legacy(name, body, &e);
    }
    if (!rc && create && kind != FDS_TEMPLATE_INDEX) {
        char **names, **jsons;
        size_t n;
        if (!fds_store_templates_list(r->store, kind, &names, &jsons, &n)) {
            for (size_t i = 0; i < n && !rc; i++)
                if (!strcmp(names[i], name))
                    rc = bad(&e, kind == FDS_TEMPLATE_LEGACY
                                     ? "index_template [%s] already exists%s"
                                     : "component template [%s] already exists%s",
                             name, "");
            fds_templates_free(names, jsons, n);
        }
    }
    char *json = rc ? NULL : cJSON_PrintUnformatted(body);
    if (!rc && !json)
        rc = fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (!rc)
        rc = fds_store_template_put(r->store, kind, name, json, &e);
    free(json);
    cJSON_Delete(body);
    if (rc)
        return fds__resp_error(o, &e);
    ack(o);
}

/* Settings as Elasticsearch shows a template's: nested, values as text. */
static cJSON *settings_nested(const cJSON *settings)
{
    cJSON *flat = cJSON_CreateObject(), *out = cJSON_CreateObject();
    settings_flatten(flat, settings, "");
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
        cJSON_AddNumberToObject(j, "order", num_or(doc, "order", 0));
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "version");
        if (v)
            cJSON_AddItemToObject(j, "version", cJSON_Duplicate(v, 1));
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(doc, "index_patterns");
        cJSON_AddItemToObject(j, "index_patterns", as_array(p));
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
            cJSON_AddItemToObject(j, c->string, as_array(c));
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
    tmpl_set t;
    if (set_load(r->store, kind, &t))
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
    set_free(&t);
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
    tmpl_set t, ix = {0};
    if (set_load(r->store, kind, &t))
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
    if (!rc && kind == FDS_TEMPLATE_COMPONENT &&
        !set_load(r->store, FDS_TEMPLATE_INDEX, &ix)) {
        for (size_t i = 0; i < t.n && !rc; i++) {
            if (!fds__names_match(names, t.names[i]))
                continue;
            for (size_t k = 0; k < ix.n && !rc; k++) {
                const cJSON *c;
                cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(ix.docs[k],
                                                                      "composed_of")) {
                    if (!rc && cJSON_IsString(c) &&
                        !strcmp(c->valuestring, t.names[i]))
                        rc = bad(&e, "component templates [%s] cannot be "
                                     "removed as they are still in use by index "
                                     "templates [%s]", t.names[i], ix.names[k]);
                }
            }
        }
        set_free(&ix);
    }
    for (size_t i = 0; i < t.n && !rc; i++)
        if (fds__names_match(names, t.names[i]))
            rc = fds_store_template_delete(r->store, kind, t.names[i], &e);
    set_free(&t);
    if (rc)
        return fds__resp_error(o, &e);
    ack(o);
}

/* "[a, b]" of a string array member (legacy and composable alike). */
static char *list_text(const cJSON *doc, const char *key)
{
    char buf[1024];
    patterns_text(cJSON_GetObjectItemCaseSensitive(doc, key), buf, sizeof buf);
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
    tmpl_set sets[2];
    if (set_load(r->store, FDS_TEMPLATE_INDEX, &sets[0]))
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    if (set_load(r->store, FDS_TEMPLATE_LEGACY, &sets[1])) {
        set_free(&sets[0]);
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
                     (long long)num_or(d, k ? "order" : "priority", 0));
            row[2] = strdup(num);
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, "version");
            if (cJSON_IsNumber(v)) {
                snprintf(num, sizeof num, "%lld", (long long)v->valuedouble);
                row[3] = strdup(num);
            }
            row[4] = k ? strdup("") : list_text(d, "composed_of");
            rows[nr++] = row;
        }
    set_free(&sets[0]);
    set_free(&sets[1]);
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
    cJSON *acc = empty_body();
    bool matched = false;
    char which[256];
    if (!acc || templates_layers(r->store, name, acc, &matched, which,
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
