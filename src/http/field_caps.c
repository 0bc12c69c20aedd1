/*
 * field_caps.c: `GET|POST /_field_caps` and `/{index}/_field_caps`, the
 * field capabilities API that Kibana and other dashboards call before
 * they show anything, to learn which fields exist, their types, and
 * whether each can be searched and aggregated.
 *
 * Each index's mapping (as GET /{index}/_mapping shows it) is walked into
 * one record per field -- object parents as `object`, multi-fields as
 * their own dotted names -- plus the metadata fields every Elasticsearch
 * 8 index has (META_FIELDS).  The records are then merged as
 * Elasticsearch's FieldCapabilitiesResponse merges its per-index answers:
 * per field, one entry per type; an entry lists its `indices` only when
 * the field has more than one type (an `unmapped` one included), and
 * `non_searchable_indices` / `non_aggregatable_indices` only when its
 * indices disagree.
 *
 * `index_filter` leaves out an index none of whose documents match it, and
 * `include_empty_fields=false` a field no document of its index has a
 * value for (an object parent with none of its fields left); both ask the
 * index with a search of its own (fc_probe).  Not done: `meta` of a field
 * (not kept by mappings).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aliases.h"
#include "fds_text.h"
#include "handlers.h"
#include "index_expr.h"
#include "request.h"
#include "response.h"
#include "query.h"
#include "fds_clock.h"
#include "fds_strbuf.h"

/* The URL parameters _field_caps reads; ignore_throttled has no frozen
 * index to act on. */
static const char *const FIELD_CAPS_PARAMS[] = {
    FDS_INDEX_EXPR_PARAMS, "fields", "include_unmapped", "filters", "types",
    "include_empty_fields", "ignore_throttled", NULL};

/* Elasticsearch 8.11's metadata fields of a standard index and their
 * capabilities, as its field mappers declare them (IdFieldMapper with
 * indices.id_field_data.enabled false, IndexFieldMapper, ...). */
typedef struct meta_field {
    const char *name;
    bool searchable, aggregatable;
} meta_field;

static const meta_field META_FIELDS[] = {
    {"_id", true, false},
    {"_index", true, true},
    {"_source", false, false},
    {"_version", false, true},
    {"_seq_no", true, true},
    {"_routing", true, false},
    {"_ignored", true, false},
    {"_doc_count", false, false},
    {"_field_names", true, false},
    {"_data_stream_timestamp", false, false},
    {"_feature", false, false},
    {"_nested_path", true, false},
    {"_tier", true, true},
};

/* One field of one index. */
typedef struct fc_rec {
    char *name;   /* dotted path (malloc'd) */
    char *type;   /* Elasticsearch family type name (malloc'd) */
    size_t ix;    /* position of its index in the answer's `indices` */
    bool meta, searchable, aggregatable;
    bool sub;     /* a multi-field */
    bool parent;  /* an object or nested parent */
} fc_rec;

/* What the request asks for. */
typedef struct fc_query {
    char **pats; /* field patterns (malloc'd each) */
    size_t npats;
    const char *types; /* comma list, or NULL */
    bool no_meta, only_meta, no_parent, no_multi, no_nested;
} fc_query;

typedef struct fc_list {
    fc_rec *r;
    size_t n, cap;
    bool oom;
} fc_list;

static bool pats_match(const fc_query *q, const char *name)
{
    for (size_t i = 0; i < q->npats; i++)
        if (fds_glob_match(q->pats[i], name, strlen(name)))
            return true;
    return false;
}

static void rec_add(fc_list *l, const fc_query *q, const char *name,
                    const char *type, size_t ix, bool meta, bool searchable,
                    bool aggregatable, bool sub, bool parent)
{
    if (l->oom || !pats_match(q, name))
        return;
    if ((meta && q->no_meta) || (!meta && q->only_meta) ||
        (parent && q->no_parent) || (sub && q->no_multi) ||
        (q->types && !fds__names_match(q->types, type)))
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        fc_rec *p = realloc(l->r, cap * sizeof *p);
        if (!p) {
            l->oom = true;
            return;
        }
        l->r = p;
        l->cap = cap;
    }
    fc_rec *r = &l->r[l->n];
    *r = (fc_rec){strdup(name), strdup(type), ix, meta, searchable,
                  aggregatable, sub, parent};
    if (!r->name || !r->type) {
        free(r->name);
        free(r->type);
        l->oom = true;
        return;
    }
    l->n++;
}

/* The family name field caps reports for mapping type `t`. */
static const char *family_type(const char *t)
{
    if (!strcmp(t, "match_only_text"))
        return "text";
    if (!strcmp(t, "constant_keyword") || !strcmp(t, "wildcard"))
        return "keyword";
    return t;
}

/* Add the fields of a mapping's `properties` object under `prefix`
 * (NULL at the root); `nested`: under a nested object. */
static void walk_props(fc_list *l, const fc_query *q, const cJSON *props,
                       const char *prefix, size_t ix, bool nested)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, props) {
        if (!f->string)
            continue;
        char *name = NULL;
        if (prefix) {
            size_t n = strlen(prefix) + strlen(f->string) + 2;
            name = malloc(n);
            if (name)
                snprintf(name, n, "%s.%s", prefix, f->string);
        } else {
            name = strdup(f->string);
        }
        if (!name) {
            l->oom = true;
            return;
        }
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(f, "type");
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(f, "properties");
        const char *type = cJSON_IsString(t) ? t->valuestring : "object";
        bool is_nested = !strcmp(type, "nested");
        if (!strcmp(type, "object") || is_nested) {
            if (!(nested && q->no_nested) && !(is_nested && q->no_nested))
                rec_add(l, q, name, type, ix, false, false, false, false, true);
            walk_props(l, q, sub, name, ix, nested || is_nested);
            free(name);
            continue;
        }
        if (nested && q->no_nested) {
            free(name);
            continue;
        }
        const char *fam = family_type(type);
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(f, "index");
        bool searchable = !cJSON_IsFalse(idx);
        bool aggregatable = strcmp(fam, "text") != 0;
        rec_add(l, q, name, fam, ix, false, searchable, aggregatable, false, false);
        /* multi-fields: `fields` of a leaf, each its own dotted name */
        const cJSON *mf;
        cJSON_ArrayForEach(mf, cJSON_GetObjectItemCaseSensitive(f, "fields")) {
            const cJSON *mt = cJSON_GetObjectItemCaseSensitive(mf, "type");
            if (!mf->string || !cJSON_IsString(mt))
                continue;
            size_t n = strlen(name) + strlen(mf->string) + 2;
            char *full = malloc(n);
            if (!full) {
                l->oom = true;
                break;
            }
            snprintf(full, n, "%s.%s", name, mf->string);
            const char *mfam = family_type(mt->valuestring);
            rec_add(l, q, full, mfam, ix, false,
                    !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(mf, "index")),
                    strcmp(mfam, "text") != 0, true, false);
            free(full);
        }
        free(name);
    }
}

/* The body's runtime_mappings ({name: {"type": t}}): fields of every
 * index, searchable and aggregatable (Elasticsearch's runtime fields are
 * both).  False with a 400 written to `o`. */
static bool add_runtime(fc_list *l, const fc_query *q, const cJSON *rt,
                        size_t nix, fds_resp *o)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, rt) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(f, "type");
        if (!cJSON_IsString(t)) {
            fds__resp_errorf(o, 400, "mapper_parsing_exception",
                            "No type specified for field [%s]",
                            f->string ? f->string : "");
            return false;
        }
        for (size_t i = 0; i < nix; i++)
            rec_add(l, q, f->string, family_type(t->valuestring), i, false,
                    true, true, false, false);
    }
    return true;
}

static int rec_cmp(const void *a, const void *b)
{
    const fc_rec *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->type, y->type);
    if (!c)
        c = x->ix < y->ix ? -1 : x->ix > y->ix;
    return c;
}

/* Add to `arr` (when not NULL) the indices of records r[0, n) that
 * `which` picks (0: all, 1: not searchable, 2: not aggregatable); returns
 * how many it picks. */
static size_t add_indices(cJSON *arr, fds_index **ixs, const fc_rec *r,
                          size_t n, int which)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool yes = which == 0 ? true
                   : which == 1 ? !r[i].searchable
                                : !r[i].aggregatable;
        if (!yes)
            continue;
        k++;
        if (arr)
            cJSON_AddItemToArray(arr,
                                 cJSON_CreateString(fds_index_name(ixs[r[i].ix])));
    }
    return k;
}

/* One type entry of a field: records r[0, n) (one type, sorted by index);
 * `with_indices` when the field has several types. */
static cJSON *type_entry(fds_index **ixs, const fc_rec *r, size_t n,
                         bool with_indices)
{
    cJSON *e = cJSON_CreateObject();
    if (!e)
        return NULL;
    size_t nons = add_indices(NULL, ixs, r, n, 1);
    size_t nona = add_indices(NULL, ixs, r, n, 2);
    cJSON_AddStringToObject(e, "type", r[0].type);
    cJSON_AddBoolToObject(e, "metadata_field", r[0].meta);
    cJSON_AddBoolToObject(e, "searchable", nons == 0);
    cJSON_AddBoolToObject(e, "aggregatable", nona == 0);
    if (with_indices)
        add_indices(cJSON_AddArrayToObject(e, "indices"), ixs, r, n, 0);
    if (nons && nons < n)
        add_indices(cJSON_AddArrayToObject(e, "non_searchable_indices"), ixs, r, n, 1);
    if (nona && nona < n)
        add_indices(cJSON_AddArrayToObject(e, "non_aggregatable_indices"), ixs, r, n, 2);
    return e;
}

/* The `fields` object from the sorted records; with `unmapped`, a field
 * missing from some of the nix indices gets an `unmapped` entry naming
 * them. */
static cJSON *merge(fds_index **ixs, size_t nix, const fc_rec *r, size_t n,
                    bool unmapped)
{
    cJSON *fields = cJSON_CreateObject();
    bool *has = calloc(nix ? nix : 1, sizeof *has);
    if (!fields || !has) {
        cJSON_Delete(fields);
        free(has);
        return NULL;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i, ntypes = 0, nhave = 0;
        memset(has, 0, nix * sizeof *has);
        for (; j < n && !strcmp(r[j].name, r[i].name); j++) {
            if (j == i || strcmp(r[j].type, r[j - 1].type))
                ntypes++;
            if (!has[r[j].ix]) {
                has[r[j].ix] = true;
                nhave++;
            }
        }
        bool add_unmapped = unmapped && nhave < nix;
        bool several = ntypes + add_unmapped > 1;
        cJSON *f = cJSON_AddObjectToObject(fields, r[i].name);
        for (size_t k = i; f && k < j;) {
            size_t m = k;
            while (m < j && !strcmp(r[m].type, r[k].type))
                m++;
            cJSON_AddItemToObject(f, r[k].type, type_entry(ixs, r + k, m - k, several));
            k = m;
        }
        if (f && add_unmapped) {
            cJSON *u = cJSON_CreateObject();
            cJSON_AddStringToObject(u, "type", "unmapped");
            cJSON_AddFalseToObject(u, "metadata_field");
            cJSON_AddFalseToObject(u, "searchable");
            cJSON_AddFalseToObject(u, "aggregatable");
            cJSON *a = cJSON_AddArrayToObject(u, "indices");
            for (size_t x = 0; x < nix; x++)
                if (!has[x])
                    cJSON_AddItemToArray(a, cJSON_CreateString(fds_index_name(ixs[x])));
            cJSON_AddItemToObject(f, "unmapped", u);
        }
        i = j;
    }
    free(has);
    return fields;
}

/* Split the comma list `s` into q->pats (appended); false when out of
 * memory. */
static bool pats_add(fc_query *q, const char *s)
{
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += *p == ',';
    char **p = realloc(q->pats, (q->npats + n) * sizeof *p);
    if (!p)
        return false;
    q->pats = p;
    for (const char *a = s; *a || a == s;) {
        size_t l = strcspn(a, ",");
        char *t = strndup(a, l);
        if (!t)
            return false;
        /* a blank item names nothing */
        if (*t)
            q->pats[q->npats++] = t;
        else
            free(t);
        a += l;
        if (*a != ',')
            break;
        a++;
    }
    return true;
}

/* The `filters` parameter into q; false with a 400 in `o`. */
static bool filters_read(fc_query *q, const char *s, fds_resp *o)
{
    char *copy = strdup(s);
    bool ok = copy != NULL;
    for (char *sv = NULL, *t = copy ? strtok_r(copy, ",", &sv) : NULL; ok && t;
         t = strtok_r(NULL, ",", &sv)) {
        if (!strcmp(t, "+metadata"))
            q->only_meta = true;
        else if (!strcmp(t, "-metadata"))
            q->no_meta = true;
        else if (!strcmp(t, "-parent"))
            q->no_parent = true;
        else if (!strcmp(t, "-multifield"))
            q->no_multi = true;
        else if (!strcmp(t, "-nested"))
            q->no_nested = true;
        else {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "Unknown field caps filter [%s]", t);
            free(copy);
            return false;
        }
    }
    free(copy);
    if (!ok)
        fds__resp_errorf(o, 500, "exception", "out of memory");
    return ok;
}

/* The body (fields, index_filter, runtime_mappings) into q and *rt; false
 * with an error in `o`. */
static bool body_read(fds_req *r, fc_query *q, bool url_fields, cJSON **body,
                      const cJSON **rt, const cJSON **flt, fds_resp *o)
{
    fds_err e;
    fds_err_clear(&e);
    if (fds__body_checked(r, body, &e)) {
        fds__resp_error(o, &e);
        return false;
    }
    if (!*body)
        return true;
    if (!cJSON_IsObject(*body)) {
        fds__resp_errorf(o, 400, "parse_exception",
                        "request body must be a JSON object");
        return false;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, *body) {
        if (!strcmp(it->string, "fields")) {
            if (url_fields) {
                fds__resp_errorf(o, 400, "illegal_argument_exception",
                                "can't specify a request body and [fields] request "
                                "parameter, either specify a request body or the "
                                "[fields] parameter");
                return false;
            }
            const cJSON *x, *arr = cJSON_IsArray(it) ? it : NULL;
            if (cJSON_IsString(it) && !pats_add(q, it->valuestring))
                goto oom;
            cJSON_ArrayForEach(x, arr) {
                if (!cJSON_IsString(x)) {
                    fds__resp_errorf(o, 400, "x_content_parse_exception",
                                    "[field_caps_request] failed to parse field [fields]");
                    return false;
                }
                if (!pats_add(q, x->valuestring))
                    goto oom;
            }
        } else if (!strcmp(it->string, "index_filter")) {
            if (!cJSON_IsObject(it)) {
                fds__resp_errorf(o, 400, "x_content_parse_exception",
                                "[field_caps_request] failed to parse field "
                                "[index_filter]");
                return false;
            }
            *flt = it;
        } else if (!strcmp(it->string, "runtime_mappings") && cJSON_IsObject(it)) {
            *rt = it;
        } else {
            fds__resp_errorf(o, 400, "x_content_parse_exception",
                            "[field_caps_request] unknown field [%s]", it->string);
            return false;
        }
    }
    return true;
oom:
    fds__resp_errorf(o, 500, "exception", "out of memory");
    return false;
}

static const char *param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}

/* Add index ixs[i]'s records (its mapping and the metadata fields). */
static void index_records(fc_list *l, const fc_query *q, fds_index *ix, size_t i)
{
    for (size_t k = 0; k < sizeof META_FIELDS / sizeof *META_FIELDS; k++)
        rec_add(l, q, META_FIELDS[k].name, META_FIELDS[k].name, i, true,
                META_FIELDS[k].searchable, META_FIELDS[k].aggregatable, false,
                false);
    char *mj = fds_mapping_to_json(fds_index_mapping(ix));
    cJSON *m = mj ? cJSON_Parse(mj) : NULL;
    free(mj);
    if (!m) {
        l->oom = true;
        return;
    }
    walk_props(l, q, cJSON_GetObjectItemCaseSensitive(m, "properties"), NULL, i,
               false);
    cJSON_Delete(m);
}

/* A search of index `index` with `body` (NUL-terminated), run as an
 * _msearch item runs: its parsed answer, or NULL with its error (or out of
 * memory) in `o`. */
static cJSON *fc_probe(fds_req *r, const char *index, const char *body,
                       fds_resp *o)
{
    char search[] = "_search";
    char *name = strdup(index);
    if (!name) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
        return NULL;
    }
    fds_req sub = {.store = r->store, .method = "POST", .url = r->url,
                   .body = body, .body_len = strlen(body),
                   .start_us = (long long)fds_mono_us()};
    sub.seg[0] = name;
    sub.seg[1] = search;
    sub.nseg = 2;
    fds_resp so = {0};
    fds__h_search(&sub, &so, false);
    fds__req_sub_done(&sub);
    free(name);
    cJSON *j = so.status == 200 ? cJSON_ParseWithLength(so.body, so.len) : NULL;
    if (so.status == 200) {
        free(so.body);
        if (!j)
            fds__resp_errorf(o, 500, "exception", "out of memory");
    } else {
        free(o->body);
        *o = so; /* the search's error, as it answered it */
    }
    return j;
}

/* index_filter: keep the indices with a document it matches (Elasticsearch
 * keeps those its can-match phase cannot rule out, which is a best effort:
 * this is the exact answer).  false with the error in `o`. */
static bool filter_indices(fds_req *r, const cJSON *flt, fds_index **ixs,
                           size_t *n, fds_resp *o)
{
    cJSON *b = cJSON_CreateObject();
    cJSON *f = cJSON_Duplicate(flt, true);
    char *text = NULL;
    if (b && f && cJSON_AddNumberToObject(b, "size", 0) &&
        cJSON_AddNumberToObject(b, "track_total_hits", 1)) {
        cJSON_AddItemToObject(b, "query", f);
        f = NULL;
        text = cJSON_PrintUnformatted(b);
    }
    cJSON_Delete(f);
    cJSON_Delete(b);
    if (!text) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
        return false;
    }
    size_t kept = 0, i = 0;
    bool ok = true;
    for (; i < *n; i++) {
        cJSON *j = fc_probe(r, fds_index_name(ixs[i]), text, o);
        if (!j) {
            ok = false;
            break;
        }
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "hits"),
                                             "total"), "value");
        if (cJSON_IsNumber(v) && v->valuedouble > 0)
            ixs[kept++] = ixs[i];
        else
            fds_index_release(ixs[i]);
        cJSON_Delete(j);
    }
    /* after a failed probe the ones not looked at stay held, kept */
    for (size_t k = i; k < *n; k++)
        ixs[kept++] = ixs[k];
    *n = kept;
    free(text);
    return ok;
}

/* include_empty_fields=false: of index `index`'s records l->r[from, l->n),
 * drop each field no document has a value for (one `exists` filter
 * aggregation per field, in one search) and each object parent left
 * without fields; metadata fields stay.  false with the error in `o`. */
static bool drop_empty(fds_req *r, const char *index, fc_list *l, size_t from,
                       fds_resp *o)
{
    fds_strbuf b = FDS_STRBUF_INIT;
    fds_strbuf_puts(&b, "{\"size\":0,\"track_total_hits\":false,\"aggs\":{");
    size_t asked = 0;
    for (size_t i = from; i < l->n; i++) {
        const fc_rec *x = &l->r[i];
        if (x->meta || x->parent)
            continue;
        fds_strbuf_printf(&b, "%s\"%zu\":{\"filter\":{\"exists\":{\"field\":",
                          asked++ ? "," : "", i);
        fds_strbuf_put_json_string(&b, x->name, strlen(x->name));
        fds_strbuf_puts(&b, "}}}");
    }
    fds_strbuf_puts(&b, "}}");
    if (b.oom) {
        fds_strbuf_free(&b);
        fds__resp_errorf(o, 500, "exception", "out of memory");
        return false;
    }
    cJSON *j = asked ? fc_probe(r, index, b.p, o) : cJSON_CreateObject();
    fds_strbuf_free(&b);
    if (!j)
        return false;
    const cJSON *aggs = cJSON_GetObjectItemCaseSensitive(j, "aggregations");
    bool *keep = calloc(l->n - from + 1, sizeof *keep);
    if (!keep) {
        cJSON_Delete(j);
        fds__resp_errorf(o, 500, "exception", "out of memory");
        return false;
    }
    char key[24];
    for (size_t i = from; i < l->n; i++) {
        const fc_rec *x = &l->r[i];
        snprintf(key, sizeof key, "%zu", i);
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(aggs, key), "doc_count");
        keep[i - from] = x->meta || (!x->parent && cJSON_IsNumber(c) && c->valuedouble > 0);
    }
    /* a parent stays with a field under it */
    for (size_t i = from; i < l->n; i++) {
        const fc_rec *x = &l->r[i];
        size_t pl = strlen(x->name);
        for (size_t k = from; x->parent && !keep[i - from] && k < l->n; k++)
            keep[i - from] = keep[k - from] && !l->r[k].parent &&
                             !strncmp(l->r[k].name, x->name, pl) &&
                             l->r[k].name[pl] == '.';
    }
    size_t w = from;
    for (size_t i = from; i < l->n; i++) {
        if (keep[i - from]) {
            l->r[w++] = l->r[i];
        } else {
            free(l->r[i].name);
            free(l->r[i].type);
        }
    }
    l->n = w;
    free(keep);
    cJSON_Delete(j);
    return true;
}

void fds__h_field_caps(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, FIELD_CAPS_PARAMS))
        return;
    fc_query q = {0};
    fc_list l = {0};
    cJSON *body = NULL;
    const cJSON *rt = NULL, *flt = NULL;
    fds_index **ixs = NULL;
    size_t n = 0;
    const char *fields = fds__req_param(r, "fields");
    const char *filters = fds__req_param(r, "filters");
    q.types = fds__req_param(r, "types");
    if (q.types && !*q.types)
        q.types = NULL;
    bool unmapped = fds__req_param_bool(r, "include_unmapped", false);
    bool empty = fds__req_param_bool(r, "include_empty_fields", true);
    if (fields && !pats_add(&q, fields)) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
        goto done;
    }
    if ((filters && !filters_read(&q, filters, o)) ||
        !body_read(r, &q, fields != NULL, &body, &rt, &flt, o))
        goto done;
    if (!q.npats) {
        fds__resp_errorf(o, 400, "action_request_validation_exception",
                        "Validation Failed: 1: specified fields can't be null or "
                        "empty;");
        goto done;
    }
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = FDS_INDEX_EXPR_SEARCH_DEFAULTS;
    const char *expr = r->nseg == 2 ? r->seg[0] : NULL;
    if (fds_index_expr_opts_read(param_cb, r, &opts, &e) ||
        fds_index_expr_resolve_filtered(r->store, expr, &opts, &ixs, &n, NULL, &e)) {
        fds__resp_error(o, &e);
        goto done;
    }
    /* a closed index: as search, an error unless ignore_unavailable */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (fds_index_is_open(ixs[i])) {
            ixs[kept++] = ixs[i];
            continue;
        }
        if (!opts.ignore_unavailable && !e.code)
            fds_index_unavailable(ixs[i], &e);
        fds_index_release(ixs[i]);
    }
    n = kept;
    if (e.code) {
        fds__resp_error(o, &e);
        goto done;
    }
    if (flt && !filter_indices(r, flt, ixs, &n, o))
        goto done;
    for (size_t i = 0; i < n; i++) {
        size_t from = l.n;
        index_records(&l, &q, ixs[i], i);
        if (!empty && !l.oom && !drop_empty(r, fds_index_name(ixs[i]), &l, from, o))
            goto done;
    }
    if (rt && !add_runtime(&l, &q, rt, n, o))
        goto done;
    if (l.oom) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
        goto done;
    }
    if (l.n)
        qsort(l.r, l.n, sizeof *l.r, rec_cmp);
    /* a runtime field of the same name and type as a mapped one: once */
    size_t w = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (w && !rec_cmp(&l.r[w - 1], &l.r[i])) {
            free(l.r[i].name);
            free(l.r[i].type);
            continue;
        }
        l.r[w++] = l.r[i];
    }
    l.n = w;
    cJSON *j = cJSON_CreateObject();
    cJSON *ia = cJSON_AddArrayToObject(j, "indices");
    for (size_t i = 0; ia && i < n; i++)
        cJSON_AddItemToArray(ia, cJSON_CreateString(fds_index_name(ixs[i])));
    cJSON *f = merge(ixs, n, l.r, l.n, unmapped);
    if (!j || !ia || !f) {
        cJSON_Delete(j);
        cJSON_Delete(f);
        fds__resp_errorf(o, 500, "exception", "out of memory");
        goto done;
    }
    cJSON_AddItemToObject(j, "fields", f);
    fds__resp_json(o, 200, j);
done:
    for (size_t i = 0; i < l.n; i++) {
        free(l.r[i].name);
        free(l.r[i].type);
    }
    free(l.r);
    for (size_t i = 0; i < q.npats; i++)
        free(q.pats[i]);
    free(q.pats);
    cJSON_Delete(body);
    fds_index_expr_free(ixs, n);
}
