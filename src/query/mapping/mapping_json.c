/*
 * mapping_json.c: a mapping printed back as Elasticsearch's GET _mapping
 * shows it: {"properties":{...}} with fields sorted by name, objects
 * nested, multi-fields under "fields", non-default parameters only.
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "index/positions.h" /* FDS_POSITION_INCREMENT_GAP */
#include "time/datemath.h"
#include "query_int.h"
#include "mapping/mapping_int.h"

static int name_cmp(const void *a, const void *b)
{
    const fds_mfield *x = *(fds_mfield *const *)a, *y = *(fds_mfield *const *)b;
    return strcmp(x->path, y->path);
}

static cJSON *field_json(const fds_mapping *m, fds_mfield **sorted, size_t n,
                         const fds_mfield *f);

static void add_children(const fds_mapping *m, fds_mfield **sorted, size_t n,
                         const fds_mfield *parent, bool sub, cJSON *into)
{
    for (size_t i = 0; i < n; i++) {
        fds_mfield *c = sorted[i];
        if (c->parent != parent || c->is_subfield != sub)
            continue;
        const char *name = parent ? c->path + parent->path_len + 1 : c->path;
        cJSON *j = field_json(m, sorted, n, c);
        if (j)
            cJSON_AddItemToObject(into, name, j);
    }
}

static cJSON *field_json(const fds_mapping *m, fds_mfield **sorted, size_t n,
                         const fds_mfield *f)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    bool kids = false;
    for (size_t i = 0; i < n && !kids; i++)
        kids = sorted[i]->parent == f && !sorted[i]->is_subfield;
    if (f->type == FDS_FT_OBJECT) {
        /* Elasticsearch's ObjectMapper names the type of an object
         * without properties only */
        if (f->disabled && !kids)
            cJSON_AddStringToObject(o, "type", "object");
        if (f->disabled)
            cJSON_AddFalseToObject(o, "enabled");
        if (!f->disabled || kids) {
            cJSON *p = cJSON_AddObjectToObject(o, "properties");
            add_children(m, sorted, n, f, false, p);
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
    bool any = false;
    for (size_t i = 0; i < n; i++)
        if (sorted[i]->parent == f && sorted[i]->is_subfield)
            any = true;
    if (any) {
        cJSON *fs = cJSON_AddObjectToObject(o, "fields");
        add_children(m, sorted, n, f, true, fs);
    }
    return o;
}

char *fds_mapping_to_json(const fds_mapping *m)
{
    fds_mapping *mm = (fds_mapping *)m;
    pthread_rwlock_rdlock(&mm->lock);
    size_t n = m->nfields;
    fds_mfield **sorted = malloc((n ? n : 1) * sizeof *sorted);
    char *out = NULL;
    if (sorted) {
        if (n)
            memcpy(sorted, m->fields, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, name_cmp);
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
                add_children(m, sorted, n, NULL, false, p);
            }
            out = cJSON_PrintUnformatted(root);
            cJSON_Delete(root);
        }
        free(sorted);
    }
    pthread_rwlock_unlock(&mm->lock);
    return out;
}
