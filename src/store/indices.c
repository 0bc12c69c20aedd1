/*
 * indices.c: the node's indices as a set: creating one (its catalogue rows
 * and folder), finding, listing and deleting them, and changing one
 * index's open state, settings and mapping in the catalogue.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "index_rules.h"
#include "store_int.h"

int fds_store_create_index(fds_store *s, const char *name,
                           const fds_index_settings *settings,
                           const char *mapping_json, fds_err *err)
{
    return fds_store_create_index_aliased(s, name, settings, mapping_json,
                                          NULL, 0, err);
}

int fds_store_create_index_aliased(fds_store *s, const char *name,
                                   const fds_index_settings *settings,
                                   const char *mapping_json,
                                   const fds_alias *aliases, size_t naliases,
                                   fds_err *err)
{
    int rc = fds__check_name(name, "index", FDS_KIND_INVALID_INDEX_NAME, err);
    if (!rc)
        rc = fds_settings_check_shards(settings, err);
    if (rc)
        return rc;
    char uuid[33];
    fds__make_uuid(uuid);
    pthread_mutex_lock(&s->mu);
    if ((rc = fds__name_taken(s, name, err))) {
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    fds_index *ix = fds__index_alloc(s, 0, name, uuid);
    if (!ix) {
        pthread_mutex_unlock(&s->mu);
        return FDS_ENOMEM;
    }
    ix->settings = *settings;
    fds__index_shards_set(ix);
    ix->created_ms = fds__now_ms();
    ix->next_gen = 1;
    fds_mapping_limits lim;
    fds_settings_mapping_limits(settings, &lim);
    if (mapping_json &&
        ((rc = fds_mapping_merge_json(ix->mapping, mapping_json,
                                      strlen(mapping_json), err)) ||
         (rc = fds_mapping_check_limits(ix->mapping, &lim, err))))
        goto fail;
    if (fds__mkdir_p(ix->dir)) {
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                          "cannot create [%s]: %s", ix->dir, strerror(errno));
        goto fail;
    }
    pthread_mutex_lock(&s->db_mu);
    rc = fds__cat_begin(s->db, true, err);
    if (!rc)
        rc = fds__cat_index_insert(s->db, name, uuid, ix->created_ms, 0,
                                   &ix->id, err);
    if (!rc)
        rc = fds__settings_save(s, ix->id, settings, err);
    if (!rc)
        rc = fds__mapping_save(ix, err);
    if (!rc && naliases)
        rc = fds__aliases_insert(s, ix->id, name, aliases, naliases, err);
    rc = fds__cat_end(s->db, rc, NULL, err);
    pthread_mutex_unlock(&s->db_mu);
    if (rc) {
        fds__rm_rf(ix->dir);
        goto fail;
    }
    fds_index **q = realloc(s->indices, (s->nindices + 1) * sizeof *q);
    if (!q) {
        rc = FDS_ENOMEM;
        goto fail;
    }
    s->indices = q;
    s->indices[s->nindices++] = ix;
    if (naliases)
        fds__aliases_adopt(s, name, aliases, naliases);
    pthread_mutex_unlock(&s->mu);
    return 0;
fail:
    pthread_mutex_unlock(&s->mu);
    fds_index_release(ix);
    return rc;
}

int fds_store_get_index(fds_store *s, const char *name, fds_index **out,
                        fds_err *err)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nindices; i++)
        if (!strcmp(s->indices[i]->name, name)) {
            atomic_fetch_add(&s->indices[i]->refs, 1);
            *out = s->indices[i];
            pthread_mutex_unlock(&s->mu);
            return 0;
        }
    pthread_mutex_unlock(&s->mu);
    return fds__index_not_found(err, name);
}

int fds_store_delete_index(fds_store *s, const char *name, fds_err *err)
{
    pthread_mutex_lock(&s->mu);
    size_t at = s->nindices;
    for (size_t i = 0; i < s->nindices; i++)
        if (!strcmp(s->indices[i]->name, name))
            at = i;
    if (at == s->nindices) {
        pthread_mutex_unlock(&s->mu);
        return fds__index_not_found(err, name);
    }
    fds_index *ix = s->indices[at];
    /* not merge_mu: a running merge finds the index deleted when it
     * publishes, and drops what it built (merge.c, merge_range) */
    pthread_mutex_lock(&ix->refresh_mu);
    /* no write may pass its check between the rows' deletion and the
     * index's: its translog rows would outlive the index under an id a
     * new index can get (SQLite reuses the largest rowid) */
    pthread_mutex_lock(&ix->wmu);
    pthread_mutex_lock(&s->db_mu);
    bool full = false;
    int rc = fds__cat_begin(s->db, true, err);
    if (!rc)
        rc = fds__cat_index_delete(s->db, ix->id, err);
    rc = fds__cat_end(s->db, rc, &full, err);
    /* a full disk: the catalogue's WAL had no room for the freed pages;
     * the reserve files (disk.c), the deletions' own first, give it some,
     * so that deleting is always a way out */
    static const int slots[] = {FDS__RESERVE_DELETE, FDS__RESERVE_WORK};
    for (size_t k = 0; rc && full && k < sizeof slots / sizeof *slots; k++) {
        if (!fds__disk_give_reserve(s, slots[k], true))
            continue;
        if (err)
            fds_err_clear(err);
        rc = fds__cat_begin(s->db, true, err);
        if (!rc)
            rc = fds__cat_index_delete(s->db, ix->id, err);
        rc = fds__cat_end(s->db, rc, &full, err);
    }
    if (!rc) /* under db_mu: a merge's dictionary sees it (dict_train.c) */
        atomic_store(&ix->deleted, true);
    pthread_mutex_unlock(&s->db_mu);
    pthread_mutex_unlock(&ix->wmu);
    if (!rc) {
        fds__aliases_forget_index(s, ix->name);
        fds__index_unlink(s, ix);
        /* the index's pages go back to the file system now, not when
         * writes next pause */
        pthread_mutex_lock(&s->db_mu);
        fds__cat_shrink(s->db);
        pthread_mutex_unlock(&s->db_mu);
        fds__disk_full(s); /* sample again: space came back */
    }
    pthread_mutex_unlock(&ix->refresh_mu);
    pthread_mutex_unlock(&s->mu);
    if (!rc)
        fds_index_release(ix);
    return rc;
}

int fds_store_list_indices(fds_store *s, char ***names, size_t *n)
{
    pthread_mutex_lock(&s->mu);
    char **v = calloc(s->nindices + 1, sizeof *v);
    if (!v) {
        pthread_mutex_unlock(&s->mu);
        return FDS_ENOMEM;
    }
    for (size_t i = 0; i < s->nindices; i++)
        v[i] = strdup(s->indices[i]->name);
    *n = s->nindices;
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 1; i < *n; i++) /* insertion sort: few indices */
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *names = v;
    return 0;
}

int fds_index_set_open(fds_index *ix, bool open, fds_err *err)
{
    if (ix->failure)
        return fds__index_failed(ix, err);
    pthread_mutex_lock(&ix->wmu);
    pthread_mutex_lock(&ix->st->db_mu);
    int rc = fds__cat_index_set_open(ix->st->db, ix->id, open, err);
    pthread_mutex_unlock(&ix->st->db_mu);
    if (!rc) {
        pthread_mutex_lock(&ix->meta_mu);
        ix->open = open;
        pthread_mutex_unlock(&ix->meta_mu);
    }
    pthread_mutex_unlock(&ix->wmu);
    return rc;
}

int fds_index_put_settings(fds_index *ix, const fds_index_settings *set,
                           fds_err *err)
{
    if (ix->failure)
        return fds__index_failed(ix, err);
    pthread_mutex_lock(&ix->wmu);
    /* writers hold wmu: ix->settings is stable here */
    int rc = fds_settings_check_final(&ix->settings, set, ix->name, err);
    if (rc) {
        pthread_mutex_unlock(&ix->wmu);
        return rc;
    }
    pthread_mutex_lock(&ix->st->db_mu);
    rc = fds__cat_begin(ix->st->db, true, err);
    if (!rc)
        rc = fds__settings_save(ix->st, ix->id, set, err);
    rc = fds__cat_end(ix->st->db, rc, NULL, err);
    pthread_mutex_unlock(&ix->st->db_mu);
    if (!rc) {
        pthread_mutex_lock(&ix->meta_mu);
        ix->settings = *set;
        pthread_mutex_unlock(&ix->meta_mu);
    }
    pthread_mutex_unlock(&ix->wmu);
    return rc;
}

int fds_index_check_mapping(fds_index *ix, const char *json, size_t len,
                            fds_err *err)
{
    fds_mapping *copy = fds_mapping_create();
    char *cur = fds_mapping_to_json(ix->mapping);
    int rc = copy && cur ? 0 : FDS_ENOMEM;
    if (!rc)
        rc = fds_mapping_merge_json(copy, cur, strlen(cur), err);
    if (!rc) {
        fds_mapping_seal(copy); /* an update of an existing index */
        rc = fds_mapping_merge_json(copy, json, len, err);
    }
    if (!rc) {
        fds_index_settings set;
        fds_mapping_limits lim;
        fds_index_get_settings(ix, &set);
        fds_settings_mapping_limits(&set, &lim);
        rc = fds_mapping_check_limits(copy, &lim, err);
    }
    free(cur);
    fds_mapping_free(copy);
    return rc;
}

int fds_index_put_mapping(fds_index *ix, const char *json, size_t len,
                          fds_err *err)
{
    if (ix->failure)
        return fds__index_failed(ix, err);
    pthread_mutex_lock(&ix->wmu);
    /* on a copy first: a refused change leaves no field behind */
    fds_mapping_seal(ix->mapping);
    int rc = fds_index_check_mapping(ix, json, len, err);
    if (!rc)
        rc = fds_mapping_merge_json(ix->mapping, json, len, err);
    if (!rc) {
        pthread_mutex_lock(&ix->st->db_mu);
        rc = fds__cat_begin(ix->st->db, true, err);
        if (!rc)
            rc = fds__mapping_save(ix, err);
        rc = fds__cat_end(ix->st->db, rc, NULL, err);
        pthread_mutex_unlock(&ix->st->db_mu);
    }
    pthread_mutex_unlock(&ix->wmu);
    return rc;
}
