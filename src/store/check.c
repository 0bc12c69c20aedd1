/*
 * check.c: damaged segments found, reported and dropped -- Lucene's
 * CheckIndex (with -exorcise) and Elasticsearch's `elasticsearch-shard
 * remove-corrupted-data`, for an index of this store.
 *
 * Why: a flipped bit in one segment file fails its whole index (red,
 * corrupt_index_exception; store.c at start-up, fds__index_corrupted when
 * a search or get meets a damaged block later).  The way back is to lose
 * the damaged segments and keep the rest.  fds_index_check verifies every
 * segment the catalogue lists for an index, as the server would open it
 * and then more: the catalogue row's checksum, the .fdt tail checksum and
 * layout, the .tim checksum (the whole file), the doc counts of the row,
 * .fdt and .tim agreeing, then every stored-fields block decoded in full
 * (its CRC-32C, its dictionary, its doc count against the block index).
 * Each damaged segment is reported with its live doc count, the documents
 * dropping it loses.  With `exorcise` the damaged segments' rows go in one
 * catalogue transaction, then their files and the marker: the index loads
 * at the next start with the segments that were whole.
 *
 * The translog holds only operations no segment holds yet: a refresh
 * deletes the translog rows it wrote into a segment in the same
 * transaction that registers the segment (docs/store.md, "Write path").
 * So no dropped segment's documents can be restored from it; what it holds
 * is kept and replayed at the next start, as always.  The corruption
 * marker a run-time failure left (corrupt.c) goes with the repair.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "index.h"
#include "store_int.h"

/* ---- the check ------------------------------------------------------------ */

/* What the walk over an index's segments rows gathers. */
typedef struct check_walk {
    fds_index *ix;
    fds_check_report *rep;
    int64_t *drop;   /* segments row ids of the damaged segments */
    size_t ndrop;
} check_walk;

/* Set bits of the first max_doc bits of live[0, len). */
static uint64_t live_count(const uint8_t *live, size_t len, int64_t max_doc)
{
    uint64_t n = 0;
    for (int64_t d = 0; d < max_doc && (size_t)(d / 8) < len; d++)
        n += live[d / 8] >> (d % 8) & 1;
    return n;
}

/* One segments row (fds__cat_seg_each; ctx: check_walk): opened and
 * verified in full, its verdict appended to the report. */
static int check_row(void *ctx, const fds__cat_seg_row *r, fds_err *err)
{
    check_walk *w = ctx;
    fds_check_report *rep = w->rep;
    fds_check_segment *q = realloc(rep->segs, (rep->nsegs + 1) * sizeof *q);
    int64_t *d = realloc(w->drop, (w->ndrop + 1) * sizeof *d);
    if (q)
        rep->segs = q;
    if (d)
        w->drop = d;
    if (!q || !d)
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    fds_check_segment *c = &rep->segs[rep->nsegs++];
    memset(c, 0, sizeof *c);
    c->gen = (uint64_t)r->gen;
    c->shard = r->shard;
    c->max_doc = r->max_doc;
    c->live_docs = r->has_live ? (int64_t)live_count(r->live, r->live_len, r->max_doc)
                               : r->max_doc;
    fds_err e;
    fds_err_clear(&e);
    fds__seg *sg = NULL;
    int rc = 0;
    if (!r->row_ok || r->shard < 0 || r->shard >= w->ix->nshards) {
        rc = fds_err_setk(&e, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "catalogue row segments (live docs, deleted count, "
                          "max_doc, max_seq) fails its checksum");
        c->live_docs = -1; /* which of its docs were live is not known */
    } else if (!(rc = fds__seg_open(w->ix, r->id, (uint64_t)r->gen, &sg, &e))) {
        if (r->max_doc != sg->max_doc)
            rc = fds_err_setk(&e, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                              "the catalogue says %lld docs, the stored-fields "
                              "file %u", (long long)r->max_doc, sg->max_doc);
        else if (r->has_live && r->live_len != ((size_t)sg->max_doc + 7) / 8)
            rc = fds_err_setk(&e, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                              "live docs of wrong size");
        else
            rc = fds__seg_verify(w->ix, sg, &e);
    }
    fds__seg_unref(sg);
    if (rc == FDS_ENOMEM)
        return fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    if (!rc) {
        rep->live_kept += (uint64_t)c->live_docs;
        return 0;
    }
    fds__err_relative(w->ix->st, &e);
    c->damaged = true;
    /* a dictionary the catalogue lacks is the catalogue's damage: the
     * segment is whole and dropping it would lose good documents */
    c->droppable = rc != FDS_EDICT;
    snprintf(c->reason, sizeof c->reason, "%s",
             e.reason[0] ? e.reason : fds_strerror(rc));
    rep->ndamaged++;
    if (c->droppable) {
        w->drop[w->ndrop++] = r->id;
        if (c->live_docs >= 0)
            rep->docs_lost += (uint64_t)c->live_docs;
        else
            rep->docs_lost_unknown += (uint64_t)c->max_doc;
    }
    return 0;
}

/* Drop the segments rows w->drop in one durable transaction, then their
 * files and the marker of w->ix. */
static int exorcise(fds_store *s, check_walk *w, fds_err *err)
{
    pthread_mutex_lock(&s->db_mu);
    int rc = fds__cat_begin(s->db, true, err);
    for (size_t i = 0; !rc && i < w->ndrop; i++)
        rc = fds__cat_segment_delete(s->db, w->drop[i], err);
    rc = fds__cat_end(s->db, rc, NULL, err);
    pthread_mutex_unlock(&s->db_mu);
    if (rc)
        return rc;
    for (size_t i = 0; i < w->rep->nsegs; i++) {
        const fds_check_segment *c = &w->rep->segs[i];
        if (!c->damaged || !c->droppable)
            continue;
        for (int k = 0; k < 2; k++) {
            char *p = fds__seg_path(w->ix, c->gen, k ? "tim" : "fdt");
            if (p && unlink(p) && errno != ENOENT)
                fprintf(stderr, "fieldstore: cannot remove [%s]: %s (it is "
                                "removed at the next start)\n", p, strerror(errno));
            free(p);
        }
    }
    if (fds__corrupt_marker_remove(w->ix))
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                          "cannot remove the corruption marker of [%s]: %s",
                          w->ix->name, strerror(errno));
    int dfd = open(w->ix->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return rc;
}

int fds_index_check(fds_store *s, const char *name, bool exorcise_damaged,
                    fds_check_report *rep, fds_err *err)
{
    memset(rep, 0, sizeof *rep);
    fds_index *ix = NULL;
    int rc = fds_store_get_index(s, name, &ix, err);
    if (rc)
        return rc;
    snprintf(rep->index, sizeof rep->index, "%s", ix->name);
    snprintf(rep->uuid, sizeof rep->uuid, "%s", ix->uuid);
    rep->marker = fds__corrupt_marker_read(ix);
    const char *why = ix->failure;
    if (why && (!rep->marker || !strstr(why, rep->marker)))
        rep->failure = strdup(why);
    check_walk w = {.ix = ix, .rep = rep};
    pthread_mutex_lock(&s->db_mu);
    rc = fds__cat_segments_read(s->db, ix->id, check_row, &w, err);
    pthread_mutex_unlock(&s->db_mu);
    bool repair = rep->marker || w.ndrop;
    if (!rc && exorcise_damaged && repair) {
        rc = exorcise(s, &w, err);
        rep->exorcised = !rc;
    }
    free(w.drop);
    fds_index_release(ix);
    return rc;
}

void fds_check_report_free(fds_check_report *rep)
{
    if (!rep)
        return;
    free(rep->segs);
    free(rep->marker);
    free(rep->failure);
    memset(rep, 0, sizeof *rep);
}
