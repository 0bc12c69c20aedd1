/*
 * segment_build.c: the steps that make and publish segments, shared by a
 * refresh (refresh.c), a merge (merge.c) and a resize (resize.c):
 * fds__build_segment writes a segment's .fdt (segment.c) and .tim (src/query,
 * indexed from the sources or merged from the inputs' .tim files), fsyncs
 * the folder and opens the segment; fds__publish swaps the published set
 * in one step; fds__heap_release gives the heap a build freed back to the
 * kernel.  Registering a segment in the catalogue stays with the caller,
 * inside its own transaction.
 */
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return FDS_EIO;
    int rc = fsync(fd) == 0 ? 0 : FDS_EIO;
    close(fd);
    return rc;
}

/* The stored records of `docs` for an index whose `_source` is disabled
 * (fds_doc_dv_record): a copy of the list whose src are the records,
 * malloc'd like the list (stored_free).  0 or FDS_ENOMEM. */
static int stored_records(const fds_index *ix, const fds__bufdoc *docs,
                          size_t n, fds__bufdoc **out)
{
    fds__bufdoc *c = calloc(n ? n : 1, sizeof *c);
    if (!c)
        return FDS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        c[i] = docs[i];
        c[i].src = NULL;
        c[i].src_len = 0;
        if (docs[i].src &&
            fds_doc_dv_record(ix->mapping, docs[i].src, docs[i].src_len,
                              &c[i].src, &c[i].src_len)) {
            while (i)
                free(c[--i].src);
            free(c);
            return FDS_ENOMEM;
        }
        if (!c[i].src)
            c[i].src = (uint8_t *)""; /* a zero-byte record, not a tombstone */
    }
    *out = c;
    return 0;
}

static void stored_free(fds__bufdoc *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        if (c[i].src_len)
            free(c[i].src);
    free(c);
}

/*
 * Build segment files for `docs` (live sources only), open them.  A doc
 * with src NULL is read through `ld` (may be NULL when every src is set);
 * the .tim is indexed from the sources, or, for a merge (`tim_from` not
 * NULL; `docs` are then the live docs of its inputs in order), merged from
 * the inputs' .tim files without reading a source (fds_sidx_merge);
 * training a dictionary (retrain, or none yet) reads docs[].src only, so a
 * caller that may train sets every src.  On success *out is the new
 * segment (not yet published or registered).
 */
int fds__build_segment(fds_index *ix, const fds__bufdoc *docs, size_t n,
                         const fds__doc_loader *ld,
                         const fds_index_settings *set, fds__seg *const *copy,
                         unsigned ncopy, bool retrain,
                         const fds__tim_inputs *tim_from, fds__seg **out,
                         fds_err *err)
{
    const fds_dict *dict = NULL;
    fds_dict *relevel = NULL;
    int rc = 0, level = 0;
    /* without `_source` the stored fields keep the doc-value records (a
     * merge copies them as they are); the .tim is indexed from the sources */
    fds__bufdoc *stored = NULL;
    if (!tim_from && !fds_mapping_source_enabled(ix->mapping) &&
        (rc = stored_records(ix, docs, n, &stored)))
        return fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    const fds__bufdoc *kept = stored ? stored : docs;
    if (fds_codec_uses_dict(set->codec.codec)) {
        dict = retrain ? NULL : fds__dict_current_level(ix, set->codec.codec, &level);
        if (!dict && (rc = fds__dict_train(ix, kept, n, set, &dict, err))) {
            stored_free(stored, n);
            return rc;
        }
        /* the level changed (a static setting, while closed): digest the
         * same dictionary for the new level, for this segment only */
        if (level && level != set->codec.level && !copy) {
            size_t dl;
            const uint8_t *db = fds_dict_bytes(dict, &dl);
            rc = fds_dict_create(fds_dict_id(dict), set->codec.codec,
                                 set->codec.level, db, dl, &relevel);
            if (rc) {
                stored_free(stored, n);
                return rc;
            }
            dict = relevel;
        }
    }
    /* the parts of one refresh build concurrently (refresh_parts), and a
     * merge (merge_mu, not refresh_mu) beside a refresh: generations are
     * taken atomically */
    uint64_t gen = __atomic_fetch_add(&ix->next_gen, 1, __ATOMIC_RELAXED);
    rc = fds__seg_write(ix, gen, kept, n, ld, &set->codec, dict, copy, ncopy,
                        err);
    stored_free(stored, n);
    fds_dict_free(relevel);
    if (rc) {
        fds__err_relative(ix->st, err);
        return rc;
    }
    char *tim = fds__seg_path(ix, gen, "tim");
    fds_sidx_writer *w = tim_from ? NULL : fds_sidx_writer_create(ix->mapping);
    if (!tim || (!w && !tim_from))
        rc = FDS_ENOMEM;
    if (!rc && tim_from)
        rc = fds_sidx_merge(tim_from->in, tim_from->live, tim_from->n, tim, err);
    for (size_t i = 0; i < n && !rc && w; i++) {
        fds_err derr;
        fds_err_clear(&derr);
        const uint8_t *src;
        size_t len;
        if ((rc = fds__doc_src(docs, i, ld, &src, &len, err)))
            break;
        rc = fds_sidx_writer_add(w, (uint32_t)i, docs[i].id, docs[i].id_len,
                                 src, len, &derr);
        if (rc == FDS_EINVAL || rc == FDS_EPARSE) {
            /* an acknowledged document must never block the index: keep it
             * stored (get works) with no indexed fields, and say so */
            fprintf(stderr, "fieldstore: [%s] document [%.*s] kept but not "
                            "searchable: %s\n", ix->name, (int)docs[i].id_len,
                    docs[i].id, derr.reason);
            rc = fds_sidx_writer_add(w, (uint32_t)i, docs[i].id, docs[i].id_len,
                                     (const uint8_t *)"{}", 2, err);
        } else if (rc) {
            *err = derr;
        }
    }
    if (!rc && w)
        rc = fds_sidx_writer_write(w, tim, err);
    fds_sidx_writer_free(w);
    if (!rc)
        rc = fsync_dir(ix->dir) ? fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                                               "cannot sync [%s]", ix->dir)
                                : 0;
    if (!rc)
        rc = fds__seg_open(ix, 0, gen, out, err);
    if (rc) {
        fds__err_relative(ix->st, err); /* no absolute path in answers */
        char *fdt = fds__seg_path(ix, gen, "fdt");
        if (fdt)
            unlink(fdt);
        if (tim)
            unlink(tim);
        free(fdt);
    }
    free(tim);
    return rc;
}

/* Replace the published set in one step (one segs_lock write section, so
 * a view sees either the old set or the new one, never a merge's inputs
 * gone without its output): drop segments whose new live set is empty and
 * the `nremoved` segments of `removed` (all of one shard; one no longer
 * published is passed over), swap changed bitsets, and put the `nadded`
 * segments of `added` with their live docs added_lives[k] (NULL, or an
 * entry NULL: all live; the set takes the references of both): with
 * segments removed (a merge, nadded 1) where the first removed one was,
 * else each at the end of its shard's run, so that the set stays grouped
 * by shard, oldest first within a shard.  Caller holds refresh_mu; takes
 * segs_lock.  Returns 0 or FDS_ENOMEM (nothing changed). */
int fds__publish(fds_index *ix, fds__live **newlive, unsigned upto,
                 fds__seg **added, fds__live **added_lives, unsigned nadded,
                 fds__seg **removed, unsigned nremoved)
{
    pthread_rwlock_wrlock(&ix->segs_lock);
    unsigned cap = ix->nsegs + nadded + 1;
    fds__seg **segs = malloc(cap * sizeof *segs);
    fds__live **lives = malloc(cap * sizeof *lives);
    if (!segs || !lives) {
        pthread_rwlock_unlock(&ix->segs_lock);
        free(segs);
        free(lives);
        return FDS_ENOMEM;
    }
    unsigned k = 0, left = nadded; /* added[nadded - left ...] still to place */
    for (unsigned i = 0; i < ix->nsegs; i++) {
        fds__seg *sg = ix->segs[i];
        fds__live *lv = ix->lives[i];
        bool gone = false;
        for (unsigned r = 0; r < nremoved; r++)
            gone |= removed[r] == sg;
        if (i < upto && newlive && newlive[i]) {
            fds__live_unref(lv);
            lv = newlive[i];
            if (lv->del_count == lv->max_doc)
                gone = true;
        }
        if (gone) {
            bool merged_away = false;
            for (unsigned r = 0; r < nremoved; r++)
                merged_away |= removed[r] == sg;
            if (merged_away && left) { /* doc order: newest last */
                lives[k] = added_lives ? added_lives[nadded - left] : NULL;
                segs[k++] = added[nadded - left--];
            }
            atomic_store(&sg->dropped, true);
            fds__seg_unref(sg);
            fds__live_unref(lv);
            continue;
        }
        segs[k] = sg;
        lives[k++] = lv;
    }
    for (; left; left--) {
        fds__seg *a = added[nadded - left];
        unsigned at = k;
        while (at > 0 && segs[at - 1]->shard > a->shard)
            at--;
        memmove(segs + at + 1, segs + at, (k - at) * sizeof *segs);
        memmove(lives + at + 1, lives + at, (k - at) * sizeof *lives);
        segs[at] = a;
        lives[at] = added_lives ? added_lives[nadded - left] : NULL;
        k++;
    }
    free(ix->segs);
    free(ix->lives);
    ix->segs = segs;
    ix->lives = lives;
    ix->nsegs = k;
    /* a new reader generation: what its searches share starts empty (the
     * old set's cache goes with its last view) */
    fds_reader_cache_unref(ix->rcache);
    ix->rcache = fds_reader_cache_new();
    pthread_rwlock_unlock(&ix->segs_lock);
    return 0;
}

void fds__heap_release(void)
{
    malloc_trim(0);
}
