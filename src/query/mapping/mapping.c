/*
 * mapping.c: a mapping's field table -- Elasticsearch-style field mappings
 * created, looked up, grown and sealed; the other mapping_*.c files parse
 * it (explicit mappings), grow it (dynamic mapping), check documents
 * against it and print it.
 *
 * A mapping is a flat list of fields keyed by full dotted path ("url",
 * "url.keyword", "geo.lat"); objects are fields of type object and
 * multi-fields ("fields": {"keyword": ...}) are flagged sub-fields.  The list
 * only grows (Elasticsearch never changes a field's type), so field pointers
 * stay valid for the mapping's life and readers may cache them.  A rwlock
 * guards the list: writers extend it while searches and validation read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fds_hash.h"
#include "query_int.h"
#include "mapping/mapping_int.h"

static void mfield_free(fds_mfield *f)
{
    free(f->path);
    free(f->dfmt);
    free(f->null_text);
    for (unsigned i = 0; i < f->ncopy; i++)
        free(f->copy_to[i]);
    free(f->copy_to);
    free(f);
}

fds_mapping *fds_mapping_create(void)
{
    fds_mapping *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    pthread_rwlock_init(&m->lock, NULL);
    return m;
}

void fds_mapping_free(fds_mapping *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nfields; i++)
        mfield_free(m->fields[i]);
    free(m->fields);
    free(m->hash);
    free(m->ddf);
    pthread_rwlock_destroy(&m->lock);
    free(m);
}

fds_mfield *fds__mapping_find(const fds_mapping *m, const char *path,
                              size_t len)
{
    if (!m->hash_cap)
        return NULL;
    size_t mask = m->hash_cap - 1;
    for (size_t i = fds_fnv1a64(path, len) & mask;; i = (i + 1) & mask) {
        uint32_t e = m->hash[i];
        if (!e)
            return NULL;
        fds_mfield *f = m->fields[e - 1];
        if (f->path_len == len && memcmp(f->path, path, len) == 0)
            return f;
    }
}

fds_mfield *fds__mapping_find_locked(const fds_mapping *m, const char *path,
                                     size_t len)
{
    fds_mapping *mm = (fds_mapping *)m;
    pthread_rwlock_rdlock(&mm->lock);
    fds_mfield *f = fds__mapping_find(m, path, len);
    pthread_rwlock_unlock(&mm->lock);
    return f;
}

const fds_mfield *fds__mapping_keyword_sub(const fds_mapping *m,
                                           const char *path, size_t len)
{
    fds_mapping *mm = (fds_mapping *)m;
    const fds_mfield *k = NULL;
    pthread_rwlock_rdlock(&mm->lock);
    const fds_mfield *t = fds__mapping_find(m, path, len);
    for (size_t i = 0; t && t->type == FDS_FT_TEXT && t->has_subs &&
                       i < m->nfields && !k; i++) {
        const fds_mfield *f = m->fields[i];
        if (f->is_subfield && f->parent == t && f->type == FDS_FT_KEYWORD)
            k = f;
    }
    pthread_rwlock_unlock(&mm->lock);
    return k;
}

int fds_mapping_field(const fds_mapping *m, const char *path, size_t len,
                      fds_field_info *out)
{
    const fds_mfield *f = fds__mapping_find_locked(m, path, len);
    if (!f)
        return FDS_ENOTFOUND;
    out->path = f->path;
    out->path_len = f->path_len;
    out->type = f->type;
    out->index = f->index;
    out->index_options = f->index_options;
    out->float32 = fds__round_ftype(f, 0.1) != 0.1; /* float, half_float */
    out->date_format = f->dfmt;
    return 0;
}

int fds_mapping_fields_of_type(const fds_mapping *m, int type, char ***out,
                               size_t *n)
{
    fds_mapping *mm = (fds_mapping *)m;
    *out = NULL;
    *n = 0;
    pthread_rwlock_rdlock(&mm->lock);
    size_t nf = m->nfields, k = 0;
    char **names = calloc(nf ? nf : 1, sizeof *names);
    for (size_t i = 0; names && i < nf; i++) {
        if (m->fields[i]->type != type)
            continue;
        if (!(names[k] = strdup(m->fields[i]->path))) {
            while (k)
                free(names[--k]);
            free(names);
            names = NULL;
        } else {
            k++;
        }
    }
    pthread_rwlock_unlock(&mm->lock);
    if (!names)
        return FDS_ENOMEM;
    *out = names;
    *n = k;
    return 0;
}

static int rehash(fds_mapping *m, size_t cap)
{
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return FDS_ENOMEM;
    for (size_t k = 0; k < m->nfields; k++) {
        fds_mfield *f = m->fields[k];
        size_t i = fds_fnv1a64(f->path, f->path_len) & (cap - 1);
        while (h[i])
            i = (i + 1) & (cap - 1);
        h[i] = (uint32_t)k + 1;
    }
    free(m->hash);
    m->hash = h;
    m->hash_cap = cap;
    return 0;
}

static fds_mfield *parent_of(fds_mapping *m, const char *path, size_t len)
{
    size_t k = len;
    while (k > 0 && path[k - 1] != '.')
        k--;
    if (k == 0)
        return NULL;
    return fds__mapping_find(m, path, k - 1);
}

fds_mfield *fds__mapping_add(fds_mapping *m, const char *path, size_t len,
                             int type, const char *type_name)
{
    /* make sure object parents exist ("a.b" given first creates "a") */
    for (size_t k = 0; k < len; k++) {
        if (path[k] == '.' && !fds__mapping_find(m, path, k))
            if (!fds__mapping_add(m, path, k, FDS_FT_OBJECT, "object"))
                return NULL;
    }
    if (m->nfields == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 32;
        fds_mfield **nf = realloc(m->fields, nc * sizeof *nf);
        if (!nf)
            return NULL;
        m->fields = nf;
        m->cap = nc;
    }
    fds_mfield *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->path = malloc(len + 1);
    if (!f->path) {
        free(f);
        return NULL;
    }
    memcpy(f->path, path, len);
    f->path[len] = 0;
    f->path_len = len;
    f->type = type;
    snprintf(f->type_name, sizeof f->type_name, "%s", type_name);
    f->index = true;
    f->pos_gap = FDS_POSITION_INCREMENT_GAP;
    f->parent = parent_of(m, path, len);
    if (f->parent && f->parent->type != FDS_FT_OBJECT)
        f->is_subfield = f->parent->has_subs = true;
    m->fields[m->nfields++] = f;
    m->gen++;
    if (m->nfields * 2 > m->hash_cap &&
        rehash(m, m->hash_cap ? m->hash_cap * 2 : 64)) {
        m->nfields--;
        free(f->path);
        free(f);
        return NULL;
    }
    if (m->hash_cap && m->nfields * 2 <= m->hash_cap) {
        size_t i = fds_fnv1a64(path, len) & (m->hash_cap - 1);
        while (m->hash[i] && m->hash[i] != m->nfields)
            i = (i + 1) & (m->hash_cap - 1);
        m->hash[i] = (uint32_t)m->nfields;
    }
    return f;
}

/* Names of fds_index_options values (query.h), as Elasticsearch writes
 * them. */
const char *const fds__index_options[3] = {"positions", "docs", "freqs"};

void fds_mapping_seal(fds_mapping *m)
{
    pthread_rwlock_wrlock(&m->lock);
    m->sealed = true;
    pthread_rwlock_unlock(&m->lock);
}

bool fds_mapping_source_enabled(const fds_mapping *m)
{
    return !m->source_disabled;
}

/* Drop the fields added after the first `keep` (caller holds the write lock
 * and no reader has seen them) and re-index the hash in place. */
void fds__mapping_truncate(fds_mapping *m, size_t keep)
{
    if (m->nfields <= keep)
        return;
    for (size_t k = keep; k < m->nfields; k++)
        mfield_free(m->fields[k]);
    m->nfields = keep;
    m->gen++;
    memset(m->hash, 0, m->hash_cap * sizeof *m->hash);
    for (size_t k = 0; k < m->nfields; k++) {
        fds_mfield *f = m->fields[k];
        size_t i = fds_fnv1a64(f->path, f->path_len) & (m->hash_cap - 1);
        while (m->hash[i])
            i = (i + 1) & (m->hash_cap - 1);
        m->hash[i] = (uint32_t)k + 1;
    }
}

uint64_t fds_mapping_generation(const fds_mapping *m)
{
    fds_mapping *mm = (fds_mapping *)m;
    pthread_rwlock_rdlock(&mm->lock);
    uint64_t g = m->gen;
    pthread_rwlock_unlock(&mm->lock);
    return g;
}

/* The limits Elasticsearch applies to field f of a mapping holding
 * `total` fields (MappingLookup.checkFieldLimit, checkObjectDepthLimit,
 * checkFieldNameLengthLimit, with their texts).  0 or FDS_EINVAL. */
int fds__field_limit_error(const fds_mfield *f, size_t total,
                           const fds_mapping_limits *lim, fds_err *err)
{
    if (total > lim->total_fields)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Limit of total fields [%llu] has been exceeded",
                            (unsigned long long)lim->total_fields);
    size_t k = f->path_len, dots = 0;
    while (k > 0 && f->path[k - 1] != '.')
        k--;
    if (lim->field_name_length && f->path_len - k > lim->field_name_length)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Field name [%s] is longer than the limit of "
                            "[%llu] characters", f->path + k,
                            (unsigned long long)lim->field_name_length);
    if (f->type != FDS_FT_OBJECT)
        return 0;
    for (size_t i = 0; i < f->path_len; i++)
        dots += f->path[i] == '.';
    if (dots + 1 > lim->depth)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Limit of mapping depth [%llu] has been exceeded "
                            "due to object field [%s]",
                            (unsigned long long)lim->depth, f->path);
    return 0;
}

int fds_mapping_check_limits(const fds_mapping *m,
                             const fds_mapping_limits *lim, fds_err *err)
{
    fds_mapping *mm = (fds_mapping *)m;
    int rc = 0;
    pthread_rwlock_rdlock(&mm->lock);
    for (size_t i = 0; i < m->nfields && !rc; i++)
        rc = fds__field_limit_error(m->fields[i], m->nfields, lim, err);
    pthread_rwlock_unlock(&mm->lock);
    return rc;
}
