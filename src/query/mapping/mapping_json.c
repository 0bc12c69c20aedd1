/*
 * mapping_json.c: a mapping printed back as Elasticsearch's GET _mapping
 * shows it: {"properties":{...}} with fields sorted by name, objects
 * nested, multi-fields under "fields", non-default parameters only.
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fds_hash.h"
#include "index/positions.h" /* FDS_POSITION_INCREMENT_GAP */
#include "time/datemath.h"
#include "query_int.h"
#include "mapping/mapping_int.h"

static int name_cmp(const void *a, const void *b)
{
    const fds_mfield *x = *(fds_mfield *const *)a, *y = *(fds_mfield *const *)b;
    return strcmp(x->path, y->path);
}

/* The mapping as a tree, built once per print so that printing is linear
 * in the field count (plus the sort): the children of field k (its index
 * in m->fields; m->nfields for the root) are kids[first[k] ..
 * first[k + 1]), by name. */
typedef struct ftree {
    const fds_mapping *m;
    size_t *first;
    size_t *kids;
} ftree;

/* Index of field f in m->fields, from the hash (which holds index + 1). */
static size_t field_index(const fds_mapping *m, const fds_mfield *f)
{
    size_t mask = m->hash_cap - 1;
    for (size_t i = fds_fnv1a64(f->path, f->path_len) & mask;; i = (i + 1) & mask)
        if (m->fields[m->hash[i] - 1] == f)
            return m->hash[i] - 1;
}

/* Fill t for m (n fields, at least one); 0 or FDS_ENOMEM. */
static int ftree_build(ftree *t, const fds_mapping *m, size_t n)
{
    t->m = m;
    t->first = calloc(n + 2, sizeof *t->first);
    t->kids = malloc(n * sizeof *t->kids);
    fds_mfield **sorted = malloc(n * sizeof *sorted);
    size_t *pidx = malloc(n * sizeof *pidx), *at = malloc((n + 1) * sizeof *at);
    int rc = t->first && t->kids && sorted && pidx && at ? 0 : FDS_ENOMEM;
    if (!rc) {
        memcpy(sorted, m->fields, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, name_cmp);
        for (size_t i = 0; i < n; i++) {
            const fds_mfield *f = m->fields[i];
            pidx[i] = f->parent ? field_index(m, f->parent) : n;
            t->first[pidx[i] + 1]++;
        }
        for (size_t k = 0; k <= n; k++) {
            t->first[k + 1] += t->first[k];
            at[k] = t->first[k];
        }
        for (size_t i = 0; i < n; i++) {
            size_t k = field_index(m, sorted[i]);
            t->kids[at[pidx[k]]++] = k;
        }
    }
    free(sorted);
    free(pidx);
    free(at);
    return rc;
}

static cJSON *field_json(const ftree *t, size_t k);

/* Does field k have children of kind `sub` (multi-fields, else
 * properties)? */
static bool has_children(const ftree *t, size_t k, bool sub)
{
    for (size_t i = t->first[k]; i < t->first[k + 1]; i++)
        if (t->m->fields[t->kids[i]]->is_subfield == sub)
            return true;
    return false;
}

static void add_children(const ftree *t, size_t k, bool sub, cJSON *into)
{
    const fds_mapping *m = t->m;
    const fds_mfield *parent = k < m->nfields ? m->fields[k] : NULL;
    for (size_t i = t->first[k]; i < t->first[k + 1]; i++) {
        fds_mfield *c = m->fields[t->kids[i]];
        if (c->is_subfield != sub)
            continue;
        const char *name = parent ? c->path + parent->path_len + 1 : c->path;
        cJSON *j = field_json(t, t->kids[i]);
        if (j)
            cJSON_AddItemToObject(into, name, j);
    }
}

static cJSON *field_json(const ftree *t, size_t k)
{
    const fds_mfield *f = t->m->fields[k];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    bool kids = has_children(t, k, false);
    if (f->type == FDS_FT_OBJECT) {
        /* Elasticsearch's ObjectMapper names the type of an object
         * without properties only */
        if (f->disabled && !kids)
            cJSON_AddStringToObject(o, "type", "object");
        if (f->disabled)
            cJSON_AddFalseToObject(o, "enabled");
        if (!f->disabled || kids) {
            cJSON *p = cJSON_AddObjectToObject(o, "properties");
            add_children(t, k, false, p);
        }
        return o;
    }
    cJSON_AddStringToObject(o, "type", f->type_name);
    if (f->ignore_above)
        cJSON_AddNumberToObject(o, "ignore_above", f->ignore_above);
    if (f->dfmt)
        cJSON_AddStringToObject(o, "format", f->dfmt->text);
    if (!f->index)
        cJSON_AddBoolToObject(o, "index", false);
    if (f->null_text) {
        cJSON *nv = f->null_kind == FDS_JV_NUMBER ? cJSON_CreateRaw(f->null_text)
                  : f->null_kind == FDS_JV_STRING ? cJSON_CreateString(f->null_text)
                  : cJSON_CreateBool(f->null_kind == FDS_JV_TRUE);
        cJSON_AddItemToObject(o, "null_value", nv);
    }
    if (f->ncopy) {
        cJSON *ct = cJSON_AddArrayToObject(o, "copy_to");
        for (unsigned i = 0; ct && i < f->ncopy; i++)
            cJSON_AddItemToArray(ct, cJSON_CreateString(f->copy_to[i]));
    }
    if (f->type == FDS_FT_TEXT && f->index_options != FDS_IO_POSITIONS)
        cJSON_AddStringToObject(o, "index_options",
                                fds__index_options[f->index_options]);
    if (f->type == FDS_FT_TEXT && f->pos_gap != FDS_POSITION_INCREMENT_GAP)
        cJSON_AddNumberToObject(o, "position_increment_gap", f->pos_gap);
    if (has_children(t, k, true)) {
        cJSON *fs = cJSON_AddObjectToObject(o, "fields");
        add_children(t, k, true, fs);
    }
    return o;
}

char *fds_mapping_to_json(const fds_mapping *m)
{
    fds_mapping *mm = (fds_mapping *)m;
    pthread_rwlock_rdlock(&mm->lock);
    size_t n = m->nfields;
    ftree t = {0};
    char *out = NULL;
    if (!n || !ftree_build(&t, m, n)) {
        cJSON *root = cJSON_CreateObject();
        if (root) {
            if (m->dynamic != FDS_DYNAMIC_TRUE)
                cJSON_AddStringToObject(root, "dynamic",
                                        m->dynamic == FDS_DYNAMIC_STRICT ? "strict"
                                                                         : "false");
            if (m->no_date_detection)
                cJSON_AddFalseToObject(root, "date_detection");
            if (m->root_disabled)
                cJSON_AddFalseToObject(root, "enabled");
            if (m->source_disabled) {
                cJSON *so = cJSON_AddObjectToObject(root, "_source");
                cJSON_AddFalseToObject(so, "enabled");
            }
            if (m->ddf_set) {
                cJSON *a = cJSON_AddArrayToObject(root, "dynamic_date_formats");
                for (unsigned i = 0; a && i < m->nddf; i++)
                    cJSON_AddItemToArray(a, cJSON_CreateString(m->ddf[i].text));
            }
            if (n) {
                cJSON *p = cJSON_AddObjectToObject(root, "properties");
                add_children(&t, n, false, p);
            }
            out = cJSON_PrintUnformatted(root);
            cJSON_Delete(root);
        }
    }
    free(t.first);
    free(t.kids);
    pthread_rwlock_unlock(&mm->lock);
    return out;
}
