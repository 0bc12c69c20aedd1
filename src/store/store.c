/*
 * store.c: the life of a data directory: open (load every index from the
 * catalogue, replay translogs, finish what a crash interrupted, remove
 * files no catalogue row names) and close.  The index object is index.c,
 * the node's set of indices indices.c, the background threads
 * background.c.  See store.h for the write and read paths and the
 * crash-safety argument, docs/store.md for the files.
 *
 * On disk: DATA/catalog.sqlite (catalog.c) and DATA/indices/<uuid>/, one
 * folder per index holding its seg_<gen>.fdt and seg_<gen>.tim files, and
 * DATA/disk.reserve*, the reserve files of the disk watermarks (disk.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "store_int.h"

/* Load an index's settings, mapping, dictionaries, segments and translog.
 * *fatal is set when the failure must stop start-up rather than only mark
 * this index failed: the catalogue could not be read (FDS_ESQL: a short
 * read must never pass for a complete one), memory ran out, or the translog
 * did not replay completely (acknowledged writes would be lost). */
static int index_load(fds_store *s, fds_index *ix, fds_err *err, bool *fatal)
{
    int rc = fds__settings_load(s, ix->id, &ix->settings, err);
    if (!rc)
        rc = fds_settings_check_shards(&ix->settings, err);
    fds__index_shards_set(ix);
    if (!rc)
        rc = fds__mapping_load(s, ix, err);
    if (!rc)
        rc = fds__dict_load(s, ix, err);
    /* failed at run time before: failed until check-index repairs it */
    char *marked = rc ? NULL : fds__corrupt_marker_read(ix);
    if (marked)
        rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "%s (marked corrupt; `fieldstore check-index` "
                          "verifies and repairs it)", marked);
    free(marked);
    if (!rc)
        rc = fds__segments_load(s, ix, err);
    *fatal = rc == FDS_ESQL || rc == FDS_ENOMEM;
    /* a translog row failing its checksum fails only this index */
    if (!rc && (rc = fds__translog_replay(s, ix, err)))
        *fatal = rc != FDS_ECORRUPT;
    if (rc)
        return rc;
    /* the counters of the indices row carry no checksum: never reuse a
     * generation or a seq_no that a segment or the translog holds */
    for (unsigned i = 0; i < ix->nsegs; i++) {
        if (ix->segs[i]->gen >= ix->next_gen)
            ix->next_gen = ix->segs[i]->gen + 1;
        if (ix->segs[i]->max_seq >= ix->next_seq)
            ix->next_seq = ix->segs[i]->max_seq + 1;
    }
    if (ix->buf.max_seq >= ix->next_seq)
        ix->next_seq = ix->buf.max_seq + 1;
    fds__buf_account(ix); /* the first write or tick over the limit flushes */
    return 0;
}

/* Remove files in the index folder that no catalogue segment names. */
static void index_remove_orphans(fds_index *ix)
{
    DIR *d = opendir(ix->dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        bool keep = false;
        for (unsigned i = 0; i < ix->nsegs && !keep; i++) {
            size_t l = strlen(ix->segs[i]->name);
            keep = !strncmp(e->d_name, ix->segs[i]->name, l) &&
                   (!strcmp(e->d_name + l, ".fdt") || !strcmp(e->d_name + l, ".tim"));
        }
        if (!keep) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", ix->dir, e->d_name);
            unlink(p);
        }
    }
    closedir(d);
}

/* What the start-up scan of the indices rows gathers. */
typedef struct open_scan {
    fds_store *s;
    bool names_damaged;      /* an index row whose uuid cannot be trusted */
    int64_t *unfinished;     /* rows of resizes a crash interrupted */
    size_t nunfinished;
} open_scan;

/* One indices row at start-up (fds__cat_index_each; ctx: the open_scan):
 * an interrupted resize's row is noted, any other index is loaded into
 * the node's list, failed (kept, with why) or, for a failure that must
 * stop start-up, the error returned. */
static int index_row_open(void *ctx, const fds__cat_index_row *r, fds_err *err)
{
    open_scan *o = ctx;
    fds_store *s = o->s;
    if (r->name && !strncmp(r->name, FDS__RESIZE_PREFIX,
                            strlen(FDS__RESIZE_PREFIX))) {
        int64_t *q = realloc(o->unfinished, (o->nunfinished + 1) * sizeof *q);
        if (!q)
            return FDS_ENOMEM;
        o->unfinished = q;
        o->unfinished[o->nunfinished++] = r->id;
        return 0;
    }
    fds_index *ix = fds__index_alloc(s, r->id, r->name, r->uuid);
    if (!ix)
        return FDS_ENOMEM;
    ix->created_ms = r->created_ms;
    ix->open = r->open;
    ix->next_seq = r->next_seq;
    ix->next_gen = r->next_gen;
    fds_err lerr;
    fds_err_clear(&lerr);
    bool fatal = false;
    int lrc, rc = 0;
    if (!r->row_ok) {
        o->names_damaged = true;
        lrc = fds_err_setk(&lerr, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                           "catalogue row indices (name, uuid, creation "
                           "date) fails its checksum (damaged catalogue)");
    } else {
        lrc = index_load(s, ix, &lerr, &fatal);
    }
    if (lrc && fatal) {
        rc = fds_err_setk(err, lrc, lerr.kind ? lerr.kind : FDS_KIND_INTERNAL,
                          "index [%s] cannot be loaded, start-up stopped "
                          "(no file was removed): %s", ix->name,
                          lerr.reason[0] ? lerr.reason : fds_strerror(lrc));
    } else if (lrc) {
        /* serve the other indices; this one reports why it failed and
         * keeps its files untouched for inspection or repair */
        fds__err_relative(s, &lerr);
        ix->failure = strdup(lerr.reason[0] ? lerr.reason
                                            : fds_strerror(lerr.code));
        fprintf(stderr, "fieldstore: index [%s] failed to load: %s\n",
                ix->name, ix->failure);
    }
    if (!rc) {
        fds_index **q = realloc(s->indices, (s->nindices + 1) * sizeof *q);
        if (!q)
            rc = FDS_ENOMEM;
        else {
            s->indices = q;
            s->indices[s->nindices++] = ix;
        }
    }
    if (rc)
        fds_index_release(ix);
    return rc;
}

/* Remove the folders of DATA/indices that no index of s names; none when
 * a damaged row may name one wrongly. */
static void remove_unknown_folders(fds_store *s, bool names_damaged)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/indices", s->dir);
    DIR *d = names_damaged ? NULL : opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        bool known = false;
        for (size_t i = 0; i < s->nindices && !known; i++)
            known = !strcmp(s->indices[i]->uuid, e->d_name);
        if (!known) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            fds__rm_rf(p);
        }
    }
    closedir(d);
}

/* A new fds_store for `dir` with its locks and counters, the catalogue not
 * yet open: 0 or FDS_ENOMEM (*out NULL). */
static int store_alloc(const char *dir, fds_store **out)
{
    fds_store *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s)
        return FDS_ENOMEM;
    s->dir = strdup(dir);
    pthread_mutex_init(&s->db_mu, NULL);
    pthread_mutex_init(&s->mu, NULL);
    atomic_init(&s->stop, false);
    atomic_init(&s->min_free, 0);
    fds__disk_init(s);
    atomic_init(&s->buf_mem, 0);
    atomic_init(&s->buf_limit, fds_index_buffer_default());
    atomic_init(&s->frozen_mem, 0);
    pthread_mutex_init(&s->flush_mu, NULL);
    pthread_cond_init(&s->flush_cv, NULL);
    pthread_cond_init(&s->flushed_cv, NULL);
    if (!s->dir) {
        fds_store_close(s);
        return FDS_ENOMEM;
    }
    *out = s;
    return 0;
}

int fds_store_open(const char *dir, fds_store **out, fds_err *err)
{
    if (fds__mkdir_p(dir))
        return fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                            "cannot create data directory [%s]: %s", dir,
                            strerror(errno));
    fds_store *s;
    int rc = store_alloc(dir, &s);
    if (rc)
        return rc;
    char path[4096];
    snprintf(path, sizeof path, "%s/indices", dir);
    rc = fds__mkdir_p(path) ? FDS_EIO : 0;
    snprintf(path, sizeof path, "%s/catalog.sqlite", dir);
    if (!rc)
        rc = fds__cat_open(path, &s->db, err);
    if (rc) {
        fds_store_close(s);
        return rc;
    }
    open_scan scan = {.s = s};
    rc = fds__cat_indices_read(s->db, index_row_open, &scan, err);
    if (!rc)
        rc = fds__metadata_load(s, err);
    /* a resize's target is named only by its last transaction: the rows of
     * one a crash interrupted go, and its folder with the unknown ones */
    for (size_t i = 0; !rc && i < scan.nunfinished; i++) {
        rc = fds__cat_begin(s->db, true, err);
        if (!rc)
            rc = fds__cat_index_delete(s->db, scan.unfinished[i], err);
        rc = fds__cat_end(s->db, rc, NULL, err);
    }
    free(scan.unfinished);
    if (rc) {
        fds_store_close(s);
        return rc;
    }
    /* only after a complete, error-free scan of the catalogue: files of
     * segments no row names, then index folders no row names */
    for (size_t i = 0; i < s->nindices; i++)
        if (!s->indices[i]->failure)
            index_remove_orphans(s->indices[i]);
    remove_unknown_folders(s, scan.names_damaged);
    fds__disk_load(s);
    *out = s;
    return 0;
}

void fds_store_close(fds_store *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, true);
    if (s->bg_started)
        pthread_join(s->bg, NULL);
    if (s->merger_started)
        pthread_join(s->merger, NULL);
    if (s->disk_monitor_started)
        pthread_join(s->disk_monitor, NULL);
    pthread_mutex_lock(&s->flush_mu);
    pthread_cond_broadcast(&s->flush_cv);
    pthread_cond_broadcast(&s->flushed_cv);
    pthread_mutex_unlock(&s->flush_mu);
    if (atomic_load(&s->flusher_started))
        pthread_join(s->flusher, NULL);
    for (size_t i = 0; i < s->nindices; i++)
        fds_index_release(s->indices[i]);
    free(s->indices);
    free(s->resizing);
    fds__metadata_free(s);
    fds__cat_close(s->db);
    pthread_mutex_destroy(&s->db_mu);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->flush_mu);
    pthread_cond_destroy(&s->flush_cv);
    pthread_cond_destroy(&s->flushed_cv);
    fds__disk_destroy(s);
    free(s->dir);
    free(s);
}
