/*
 * metadata.c: the node's aliases and templates -- catalogue rows that
 * belong to no single index's data -- kept in memory under fds_store.mu
 * and written through to the catalogue (catalog.c) before a change is
 * visible.
 *
 * Rows (schema 3):
 *   aliases(alias, index_id, filter, index_routing, search_routing,
 *           is_write_index, is_hidden, crc)
 *       one per (alias, index); filter is the query DSL object's JSON text;
 *       the flags are NULL when the request did not give them, 0 or 1
 *       otherwise (Elasticsearch tells "not given" from false for both)
 *   templates(kind, name, json, crc)
 *       kind an fds_template_kind; json the template as the HTTP layer
 *       validated it
 * `crc` is catalog.c's row checksum over FDS_CRC_COLS_ALIASES /
 * FDS_CRC_COLS_TEMPLATES.  A row that fails it is left out at start-up and
 * said so on stderr: an alias missing answers 404 where it is used, which is
 * safer than an alias whose filter may have changed.
 *
 * Elasticsearch's rules checked here (MetadataIndexAliasesService,
 * AliasValidator): an alias is named like an index and no index has its
 * name; at most one is_write_index true per alias; is_hidden the same on
 * every index of an alias.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "store_int.h"

/* ---- the in-memory list ---------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

void fds_alias_clear(fds_alias *a)
{
    free(a->alias);
    free(a->index);
    free(a->filter);
    free(a->index_routing);
    free(a->search_routing);
    memset(a, 0, sizeof *a);
}

void fds_aliases_free(fds_alias *a, size_t n)
{
    for (size_t i = 0; a && i < n; i++)
        fds_alias_clear(&a[i]);
    free(a);
}

/* A malloc'd copy of `a` with index `index` into *out.  0 or FDS_ENOMEM. */
static int alias_copy(const fds_alias *a, const char *index, fds_alias *out)
{
    memset(out, 0, sizeof *out);
    out->alias = strdup(a->alias);
    out->index = strdup(index);
    out->filter = dup_or_null(a->filter);
    out->index_routing = dup_or_null(a->index_routing);
    out->search_routing = dup_or_null(a->search_routing);
    out->is_write_index = a->is_write_index;
    out->is_hidden = a->is_hidden;
    if (!out->alias || !out->index || (a->filter && !out->filter) ||
        (a->index_routing && !out->index_routing) ||
        (a->search_routing && !out->search_routing)) {
        fds_alias_clear(out);
        return FDS_ENOMEM;
    }
    return 0;
}

static int alias_cmp(const void *x, const void *y)
{
    const fds_alias *a = x, *b = y;
    int c = strcmp(a->alias, b->alias);
    return c ? c : strcmp(a->index, b->index);
}

/* A growable list of aliases. */
typedef struct alias_vec {
    fds_alias *v;
    size_t n, cap;
} alias_vec;

static int vec_add(alias_vec *w, const fds_alias *a, const char *index)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 8;
        fds_alias *v = realloc(w->v, cap * sizeof *v);
        if (!v)
            return FDS_ENOMEM;
        w->v = v;
        w->cap = cap;
    }
    int rc = alias_copy(a, index, &w->v[w->n]);
    if (!rc)
        w->n++;
    return rc;
}

static void vec_del(alias_vec *w, size_t i)
{
    fds_alias_clear(&w->v[i]);
    memmove(w->v + i, w->v + i + 1, (w->n - i - 1) * sizeof *w->v);
    w->n--;
}

static size_t vec_find(const alias_vec *w, const char *alias, const char *index)
{
    for (size_t i = 0; i < w->n; i++)
        if (!strcmp(w->v[i].alias, alias) && !strcmp(w->v[i].index, index))
            return i;
    return w->n;
}

static fds_index *find_index(fds_store *s, const char *name)
{
    for (size_t i = 0; i < s->nindices; i++)
        if (!strcmp(s->indices[i]->name, name))
            return s->indices[i];
    return NULL;
}

int fds_store_aliases_list(fds_store *s, fds_alias **out, size_t *n)
{
    pthread_mutex_lock(&s->mu);
    alias_vec w = {0};
    int rc = 0;
    for (size_t i = 0; i < s->naliases && !rc; i++)
        rc = vec_add(&w, &s->aliases[i], s->aliases[i].index);
    pthread_mutex_unlock(&s->mu);
    if (rc) {
        fds_aliases_free(w.v, w.n);
        return rc;
    }
    *out = w.v;
    *n = w.n;
    return 0;
}

bool fds_store_alias_exists(fds_store *s, const char *name)
{
    pthread_mutex_lock(&s->mu);
    bool found = false;
    for (size_t i = 0; i < s->naliases && !found; i++)
        found = !strcmp(s->aliases[i].alias, name);
    pthread_mutex_unlock(&s->mu);
    return found;
}

void fds__aliases_forget_index(fds_store *s, const char *index)
{
    alias_vec w = {s->aliases, s->naliases, s->naliases};
    for (size_t i = 0; i < w.n;)
        if (!strcmp(w.v[i].index, index))
            vec_del(&w, i);
        else
            i++;
    s->naliases = w.n;
}

/* ---- rows ------------------------------------------------------------------- */

int fds_alias_name_check(const char *name, fds_err *err)
{
    return fds__check_name(name, "alias", FDS_KIND_INVALID_ALIAS_NAME, err);
}

/* The name checks of an alias added to index `index` (mu held). */
static int alias_name_check(fds_store *s, const char *alias, fds_err *err)
{
    int rc = fds__check_name(alias, "alias", FDS_KIND_INVALID_ALIAS_NAME, err);
    if (!rc && find_index(s, alias))
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ALIAS_NAME,
                          "Invalid alias name [%s]: an index or data stream "
                          "exists with the same name as the alias", alias);
    return rc;
}

int fds__aliases_insert(fds_store *s, int64_t index_id, const char *index,
                        const fds_alias *a, size_t n, fds_err *err)
{
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        rc = alias_name_check(s, a[i].alias, err);
        if (!rc && !strcmp(a[i].alias, index))
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ALIAS_NAME,
                              "Invalid alias name [%s]: an index or data "
                              "stream exists with the same name as the alias",
                              a[i].alias);
        if (!rc)
            rc = fds__cat_alias_put(s->db, index_id, &a[i], err);
    }
    return rc;
}

/* Elasticsearch's checks of an alias's indices together (alias list sorted
 * by alias): one write index at most, one is_hidden value. */
static int aliases_check(const alias_vec *w, fds_err *err)
{
    for (size_t i = 0; i < w->n;) {
        size_t j = i, writes = 0, hidden = 0;
        while (j < w->n && !strcmp(w->v[j].alias, w->v[i].alias)) {
            writes += w->v[j].is_write_index == 1;
            hidden += w->v[j].is_hidden == 1;
            j++;
        }
        char list[512] = "", other[512] = "";
        if (writes > 1) {
            for (size_t k = i; k < j; k++)
                if (w->v[k].is_write_index == 1)
                    snprintf(list + strlen(list), sizeof list - strlen(list),
                             "%s%s", list[0] ? ", " : "", w->v[k].index);
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "alias [%s] has more than one write index "
                                "[%s]", w->v[i].alias, list);
        }
        if (hidden && hidden != j - i) {
            for (size_t k = i; k < j; k++) {
                char *to = w->v[k].is_hidden == 1 ? list : other;
                size_t cap = sizeof list, at = strlen(to);
                snprintf(to + at, cap - at, "%s%s", at ? ", " : "",
                         w->v[k].index);
            }
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "alias [%s] has is_hidden set to true on "
                                "indices [%s] but does not have is_hidden set "
                                "to true on indices [%s]; alias must have the "
                                "same is_hidden setting on all indices",
                                w->v[i].alias, list, other);
        }
        i = j;
    }
    return 0;
}

/* One action on the working list `w` and the catalogue (mu, db_mu held, in
 * a transaction).  A removed index goes to gone[*ngone]. */
static int action_apply(fds_store *s, alias_vec *w, const fds_alias_action *act,
                        fds_index **gone, size_t *ngone, fds_err *err)
{
    const fds_alias *a = &act->a;
    fds_index *ix = a->index ? find_index(s, a->index) : NULL;
    for (size_t g = 0; ix && g < *ngone; g++)
        if (gone[g] == ix)
            ix = NULL;
    if (!ix)
        return fds__index_not_found(err, a->index ? a->index : "");
    int rc = 0;
    size_t at;
    switch (act->op) {
    case FDS_ALIAS_ADD:
        rc = alias_name_check(s, a->alias, err);
        if (!rc)
            rc = fds__cat_alias_put(s->db, ix->id, a, err);
        if (!rc && (at = vec_find(w, a->alias, ix->name)) < w->n)
            vec_del(w, at);
        if (!rc)
            rc = vec_add(w, a, ix->name);
        return rc;
    case FDS_ALIAS_REMOVE:
        if ((at = vec_find(w, a->alias, ix->name)) == w->n)
            return act->must_exist
                       ? fds_err_setk(err, FDS_ENOTFOUND,
                                      FDS_KIND_ALIASES_NOT_FOUND,
                                      "aliases [%s] missing", a->alias)
                       : 0;
        rc = fds__cat_alias_delete(s->db, ix->id, a->alias, err);
        if (!rc)
            vec_del(w, at);
        return rc;
    case FDS_ALIAS_REMOVE_INDEX:
        rc = fds__cat_index_delete(s->db, ix->id, err);
        for (size_t i = 0; !rc && i < w->n;)
            if (!strcmp(w->v[i].index, ix->name))
                vec_del(w, i);
            else
                i++;
        if (!rc)
            gone[(*ngone)++] = ix;
        return rc;
    }
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "unknown alias action");
}

int fds_store_aliases_update(fds_store *s, const fds_alias_action *acts,
                             size_t n, fds_err *err)
{
    pthread_mutex_lock(&s->mu);
    alias_vec w = {0};
    int rc = 0;
    for (size_t i = 0; i < s->naliases && !rc; i++)
        rc = vec_add(&w, &s->aliases[i], s->aliases[i].index);
    /* indices an action deletes: their refresh locks before db_mu, the
     * order fds_store_delete_index takes them in */
    fds_index **locked = calloc(n ? n : 1, sizeof *locked);
    fds_index **gone = calloc(n ? n : 1, sizeof *gone);
    size_t nlocked = 0, ngone = 0;
    if (!rc && (!locked || !gone))
        rc = FDS_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        fds_index *ix = acts[i].op == FDS_ALIAS_REMOVE_INDEX && acts[i].a.index
                            ? find_index(s, acts[i].a.index) : NULL;
        for (size_t k = 0; ix && k < nlocked; k++)
            if (locked[k] == ix)
                ix = NULL;
        if (ix) {
            pthread_mutex_lock(&ix->refresh_mu);
            locked[nlocked++] = ix;
        }
    }
    if (rc == FDS_ENOMEM)
        fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    /* and their write locks, as a delete takes it: no write may commit
     * translog rows between the rows' deletion and the index's (they would
     * outlive it under an id a new index can get) */
    for (size_t k = 0; k < nlocked; k++)
        pthread_mutex_lock(&locked[k]->wmu);
    pthread_mutex_lock(&s->db_mu);
    if (!rc)
        rc = fds__cat_begin(s->db, true, err);
    for (size_t i = 0; i < n && !rc; i++)
        rc = action_apply(s, &w, &acts[i], gone, &ngone, err);
    if (!rc) {
        if (w.n)
            qsort(w.v, w.n, sizeof *w.v, alias_cmp);
        rc = aliases_check(&w, err);
    }
    rc = fds__cat_end(s->db, rc, NULL, err);
    for (size_t g = 0; !rc && g < ngone; g++) /* under db_mu, as a delete */
        atomic_store(&gone[g]->deleted, true);
    pthread_mutex_unlock(&s->db_mu);
    if (!rc) {
        fds_aliases_free(s->aliases, s->naliases);
        s->aliases = w.v;
        s->naliases = w.n;
        w.v = NULL;
        w.n = 0;
        for (size_t g = 0; g < ngone; g++)
            fds__index_unlink(s, gone[g]);
    }
    for (size_t k = 0; k < nlocked; k++) {
        pthread_mutex_unlock(&locked[k]->wmu);
        pthread_mutex_unlock(&locked[k]->refresh_mu);
    }
    pthread_mutex_unlock(&s->mu);
    for (size_t g = 0; !rc && g < ngone; g++)
        fds_index_release(gone[g]);
    fds_aliases_free(w.v, w.n);
    free(locked);
    free(gone);
    return rc;
}

/* Aliases given at index creation, into the list after their commit. */
void fds__aliases_adopt(fds_store *s, const char *index, const fds_alias *a,
                        size_t n)
{
    alias_vec w = {s->aliases, s->naliases, s->naliases};
    for (size_t i = 0; i < n; i++)
        if (vec_add(&w, &a[i], index))
            fprintf(stderr, "fieldstore: out of memory adding alias [%s] of "
                            "[%s]; it shows after a restart\n", a[i].alias,
                    index);
    if (w.n)
        qsort(w.v, w.n, sizeof *w.v, alias_cmp);
    s->aliases = w.v;
    s->naliases = w.n;
}

/* ---- templates ---------------------------------------------------------------- */

static int tmpl_cmp(const void *x, const void *y)
{
    const fds__tmpl *a = x, *b = y;
    return a->kind != b->kind ? a->kind - b->kind : strcmp(a->name, b->name);
}

int fds_store_template_put(fds_store *s, fds_template_kind kind,
                           const char *name, const char *json, fds_err *err)
{
    char *n = strdup(name), *j = strdup(json);
    fds__tmpl *grown = NULL;
    pthread_mutex_lock(&s->mu);
    int rc = n && j ? 0 : FDS_ENOMEM;
    size_t at = 0;
    while (at < s->ntmpls && (s->tmpls[at].kind != (int)kind ||
                              strcmp(s->tmpls[at].name, name)))
        at++;
    if (!rc && at == s->ntmpls) {
        grown = realloc(s->tmpls, (s->ntmpls + 1) * sizeof *grown);
        if (!grown)
            rc = FDS_ENOMEM;
        else
            s->tmpls = grown;
    }
    if (rc == FDS_ENOMEM)
        fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    pthread_mutex_lock(&s->db_mu);
    if (!rc)
        rc = fds__cat_begin(s->db, true, err);
    if (!rc)
        rc = fds__cat_template_put(s->db, kind, name, json, err);
    rc = fds__cat_end(s->db, rc, NULL, err);
    pthread_mutex_unlock(&s->db_mu);
    if (!rc && at < s->ntmpls) {
        free(s->tmpls[at].json);
        s->tmpls[at].json = j;
        free(n);
    } else if (!rc) {
        s->tmpls[s->ntmpls++] = (fds__tmpl){.kind = kind, .name = n, .json = j};
        qsort(s->tmpls, s->ntmpls, sizeof *s->tmpls, tmpl_cmp);
    } else {
        free(n);
        free(j);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int fds_store_template_delete(fds_store *s, fds_template_kind kind,
                              const char *name, fds_err *err)
{
    pthread_mutex_lock(&s->mu);
    size_t at = 0;
    while (at < s->ntmpls && (s->tmpls[at].kind != (int)kind ||
                              strcmp(s->tmpls[at].name, name)))
        at++;
    int rc = 0;
    if (at == s->ntmpls)
        rc = fds_err_setk(err, FDS_ENOTFOUND, FDS_KIND_NOT_FOUND,
                          "template [%s] not found", name);
    pthread_mutex_lock(&s->db_mu);
    if (!rc)
        rc = fds__cat_template_delete(s->db, kind, name, err);
    pthread_mutex_unlock(&s->db_mu);
    if (!rc) {
        free(s->tmpls[at].name);
        free(s->tmpls[at].json);
        memmove(s->tmpls + at, s->tmpls + at + 1,
                (s->ntmpls - at - 1) * sizeof *s->tmpls);
        s->ntmpls--;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void fds_templates_free(char **names, char **jsons, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(names ? names[i] : NULL);
        free(jsons ? jsons[i] : NULL);
    }
    free(names);
    free(jsons);
}

int fds_store_templates_list(fds_store *s, fds_template_kind kind,
                             char ***names, char ***jsons, size_t *n)
{
    pthread_mutex_lock(&s->mu);
    size_t k = 0;
    for (size_t i = 0; i < s->ntmpls; i++)
        k += s->tmpls[i].kind == (int)kind;
    char **nv = calloc(k + 1, sizeof *nv), **jv = calloc(k + 1, sizeof *jv);
    int rc = nv && jv ? 0 : FDS_ENOMEM;
    size_t w = 0;
    for (size_t i = 0; !rc && i < s->ntmpls; i++) {
        if (s->tmpls[i].kind != (int)kind)
            continue;
        nv[w] = strdup(s->tmpls[i].name);
        jv[w] = strdup(s->tmpls[i].json);
        if (!nv[w++] || !jv[w - 1])
            rc = FDS_ENOMEM;
    }
    pthread_mutex_unlock(&s->mu);
    if (rc) {
        fds_templates_free(nv, jv, w);
        return rc;
    }
    *names = nv;
    *jsons = jv;
    *n = k;
    return 0;
}

/* ---- start-up ------------------------------------------------------------------ */

/* One aliases row into the working list (fds__cat_alias_each; ctx: an
 * alias_vec): a damaged row, or one naming no index, is left out and said
 * so on stderr. */
static int alias_load(void *ctx, const fds__cat_alias_row *r, fds_err *err)
{
    alias_vec *w = ctx;
    if (!r->row_ok || !r->index) {
        fprintf(stderr, "fieldstore: catalogue row aliases [%s] of index "
                        "id [%lld] fails its checksum or names no index "
                        "(damaged catalogue): the alias is left out\n",
                r->a.alias ? r->a.alias : "", (long long)r->index_id);
        return 0;
    }
    if (vec_add(w, &r->a, r->index))
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                            "out of memory");
    return 0;
}

static int aliases_load(fds_store *s, fds_err *err)
{
    alias_vec w = {0};
    int rc = fds__cat_aliases_read(s->db, alias_load, &w, err);
    if (rc) {
        fds_aliases_free(w.v, w.n);
        return rc;
    }
    if (w.n)
        qsort(w.v, w.n, sizeof *w.v, alias_cmp);
    s->aliases = w.v;
    s->naliases = w.n;
    return 0;
}

/* One templates row into s->tmpls (fds__cat_template_each; ctx: the
 * store): a damaged row is left out and said so on stderr. */
static int template_load(void *ctx, const fds__cat_template_row *r,
                         fds_err *err)
{
    fds_store *s = ctx;
    if (!r->row_ok) {
        fprintf(stderr, "fieldstore: catalogue row templates [%s] fails "
                        "its checksum (damaged catalogue): the template "
                        "is left out\n", r->name ? r->name : "");
        return 0;
    }
    fds__tmpl *g = realloc(s->tmpls, (s->ntmpls + 1) * sizeof *g);
    char *n = strdup(r->name), *j = strdup(r->json);
    if (!g || !n || !j) {
        free(n);
        free(j);
        if (g)
            s->tmpls = g;
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                            "out of memory");
    }
    s->tmpls = g;
    s->tmpls[s->ntmpls++] = (fds__tmpl){r->kind, n, j};
    return 0;
}

static int templates_load(fds_store *s, fds_err *err)
{
    int rc = fds__cat_templates_read(s->db, template_load, s, err);
    if (!rc && s->ntmpls)
        qsort(s->tmpls, s->ntmpls, sizeof *s->tmpls, tmpl_cmp);
    return rc;
}

int fds__metadata_load(fds_store *s, fds_err *err)
{
    int rc = aliases_load(s, err);
    return rc ? rc : templates_load(s, err);
}

void fds__metadata_free(fds_store *s)
{
    fds_aliases_free(s->aliases, s->naliases);
    s->aliases = NULL;
    s->naliases = 0;
    for (size_t i = 0; i < s->ntmpls; i++) {
        free(s->tmpls[i].name);
        free(s->tmpls[i].json);
    }
    free(s->tmpls);
    s->tmpls = NULL;
    s->ntmpls = 0;
}

/* ---- the node's key-value rows (meta) ---- */

int fds_store_meta_get(fds_store *s, const char *key, char *buf, size_t cap)
{
    pthread_mutex_lock(&s->db_mu);
    int rc = fds__cat_meta_get(s->db, key, buf, cap, NULL);
    pthread_mutex_unlock(&s->db_mu);
    return rc;
}

int fds_store_meta_put(fds_store *s, const char *key, const char *value,
                       fds_err *err)
{
    pthread_mutex_lock(&s->db_mu);
    int rc = fds__cat_begin(s->db, true, err);
    if (!rc)
        rc = fds__cat_meta_put(s->db, key, value, err);
    rc = fds__cat_end(s->db, rc, NULL, err);
    pthread_mutex_unlock(&s->db_mu);
    return rc;
}
