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
 * Each damaged segment is reported with the live documents its repair
 * loses.  A segment whose only damage is in stored-fields blocks loses
 * only the documents of those blocks: the block index (checksummed with
 * the .fdt tail) says which docs each block holds, and with `exorcise`
 * they are marked deleted in the segment's live docs, so nothing reads
 * those blocks again and a force-merge rewrites them away.  A segment
 * damaged anywhere else (its .tim, its .fdt tail, its catalogue row) is
 * dropped whole, as CheckIndex -exorcise drops a segment.  The repairs go
 * in one catalogue transaction, then the dropped files and the marker:
 * the index loads green at the next start.
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

/* A segment to repair at exorcism: its row, and for FDS_CHECK_DELETE_DOCS
 * the opened segment (the row checksum covers its fields) and its new live
 * docs. */
typedef struct check_fix {
    int64_t row;
    size_t seg;          /* index in the report */
    fds__seg *sg;        /* FDS_CHECK_DELETE_DOCS: referenced */
    fds__live *live;     /* FDS_CHECK_DELETE_DOCS: the live docs after */
} check_fix;

/* What the walk over an index's segments rows gathers. */
typedef struct check_walk {
    fds_index *ix;
    fds_check_report *rep;
    check_fix *fix;
    size_t nfix;
    /* the segment being verified (bad_block) */
    fds_check_segment *cur;
    fds__live *cur_live;
} check_walk;

/* Live docs in [from, to) of l (NULL: all live). */
static uint64_t live_between(const fds__live *l, uint32_t from, uint32_t to)
{
    uint64_t n = 0;
    for (uint32_t d = from; d < to; d++)
        n += fds__live_get(l, d);
    return n;
}

/* A damaged block of the segment being verified (fds__bad_block_fn): its
 * live docs are the loss; they leave w->cur_live. */
static void bad_block(void *arg, uint32_t first, uint32_t end, const fds_err *why)
{
    check_walk *w = arg;
    fds_check_segment *c = w->cur;
    fds__live *l = w->cur_live;
    c->bad_blocks++;
    uint64_t lost = live_between(l, first, end);
    if (!lost) {
        c->dead_blocks++;
        return;
    }
    for (uint32_t d = first; d < end; d++)
        if (fds__live_get(l, d)) {
            l->bits[d >> 3] &= (uint8_t) ~(1u << (d & 7));
            l->del_count++;
        }
    if (!c->damaged)
        snprintf(c->reason, sizeof c->reason, "%s", why->reason);
    c->damaged = true;
    c->docs_lost += (int64_t)lost;
}

/* Open and verify the segment of row r into c; 0 with *out (a reference)
 * when its files and row are whole but for stored-fields blocks (those go
 * through bad_block), else the damage's code with e filled. */
static int check_open(check_walk *w, const fds__cat_seg_row *r,
                      fds_check_segment *c, fds__seg **out, fds_err *e)
{
    fds__seg *sg = NULL;
    *out = NULL;
    if (!r->row_ok || r->shard < 0 || r->shard >= w->ix->nshards)
        return fds_err_setk(e, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                            "catalogue row segments (live docs, deleted count, "
                            "max_doc, max_seq) fails its checksum");
    int rc = fds__seg_open(w->ix, r->id, (uint64_t)r->gen, &sg, e);
    if (rc)
        return rc;
    sg->max_seq = r->max_seq;
    sg->shard = (uint32_t)r->shard;
    if (r->max_doc != sg->max_doc)
        rc = fds_err_setk(e, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "the catalogue says %lld docs, the stored-fields "
                          "file %u", (long long)r->max_doc, sg->max_doc);
    else if (r->has_live && r->live_len != ((size_t)sg->max_doc + 7) / 8)
        rc = fds_err_setk(e, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "live docs of wrong size");
    else if (r->has_routing &&
             (rc = fds__routes_parse(&sg->routes, r->routing, r->routing_len,
                                     sg->max_doc)) == FDS_ECORRUPT)
        fds_err_setk(e, rc, FDS_KIND_CORRUPT, "damaged routing values");
    else if (!rc && !(w->cur_live = fds__live_copy(NULL, sg->max_doc)))
        rc = FDS_ENOMEM;
    if (!rc) {
        if (r->has_live) {
            memcpy(w->cur_live->bits, r->live, r->live_len);
            w->cur_live->del_count = r->del_count;
        }
        w->cur = c;
        rc = fds__seg_verify(w->ix, sg, bad_block, w, e);
    }
    if (rc) {
        fds__seg_unref(sg);
        return rc;
    }
    *out = sg;
    return 0;
}

/* One segments row (fds__cat_seg_each; ctx: check_walk): opened and
 * verified in full, its verdict appended to the report, its repair to
 * w->fix. */
static int check_row(void *ctx, const fds__cat_seg_row *r, fds_err *err)
{
    check_walk *w = ctx;
    fds_check_report *rep = w->rep;
    fds_check_segment *q = realloc(rep->segs, (rep->nsegs + 1) * sizeof *q);
    if (q)
        rep->segs = q;
    check_fix *f = realloc(w->fix, (w->nfix + 1) * sizeof *f);
    if (f)
        w->fix = f;
    if (!q || !f)
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    fds_check_segment *c = &rep->segs[rep->nsegs++];
    memset(c, 0, sizeof *c);
    c->gen = (uint64_t)r->gen;
    c->shard = r->shard;
    c->max_doc = r->max_doc;
    c->live_docs = r->row_ok ? r->max_doc : -1;
    if (r->row_ok && r->has_live) {
        c->live_docs = 0;
        for (int64_t d = 0; d < r->max_doc && (size_t)(d / 8) < r->live_len; d++)
            c->live_docs += ((const uint8_t *)r->live)[d / 8] >> (d % 8) & 1;
    }
    fds_err e;
    fds_err_clear(&e);
    fds__seg *sg = NULL;
    w->cur_live = NULL;
    int rc = check_open(w, r, c, &sg, &e);
    fds__live *live = w->cur_live;
    w->cur_live = NULL;
    if (rc == FDS_ENOMEM) {
        fds__live_unref(live);
        return fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    }
    check_fix *fx = &w->fix[w->nfix];
    *fx = (check_fix){.row = r->id, .seg = rep->nsegs - 1};
    if (!rc && !c->damaged) { /* whole (damaged blocks, if any, hold only
                                 deleted docs) */
        fds__seg_unref(sg);
        fds__live_unref(live);
        rep->live_kept += (uint64_t)c->live_docs;
        return 0;
    }
    if (!rc) { /* only blocks: their docs deleted, the rest kept */
        c->repair = FDS_CHECK_DELETE_DOCS;
        fx->sg = sg;
        fx->live = live;
        w->nfix++;
        rep->ndamaged++;
        rep->docs_lost += (uint64_t)c->docs_lost;
        rep->live_kept += (uint64_t)(c->live_docs - c->docs_lost);
        return 0;
    }
    fds__live_unref(live);
    fds__err_relative(w->ix->st, &e);
    c->damaged = true;
    snprintf(c->reason, sizeof c->reason, "%s",
             e.reason[0] ? e.reason : fds_strerror(rc));
    rep->ndamaged++;
    /* a dictionary the catalogue lacks is the catalogue's damage, and a
     * file that cannot be read (permissions, the disk) may be whole:
     * dropping the segment would lose good documents */
    if (rc == FDS_EDICT || rc == FDS_EIO)
        return 0;
    c->repair = FDS_CHECK_DROP;
    c->docs_lost = c->live_docs;
    w->nfix++;
    if (c->live_docs >= 0)
        rep->docs_lost += (uint64_t)c->live_docs;
    else
        rep->docs_lost_unknown += (uint64_t)c->max_doc;
    return 0;
}

/* The repairs of w in one durable transaction (rows dropped, live docs
 * saved), then the dropped segments' files and the marker of w->ix. */
static int exorcise(fds_store *s, check_walk *w, fds_err *err)
{
    pthread_mutex_lock(&s->db_mu);
    int rc = fds__cat_begin(s->db, true, err);
    for (size_t i = 0; !rc && i < w->nfix; i++)
        rc = w->fix[i].sg ? fds__segment_live_save(w->ix, w->fix[i].sg,
                                                   w->fix[i].live, err)
                          : fds__cat_segment_delete(s->db, w->fix[i].row, err);
    rc = fds__cat_end(s->db, rc, NULL, err);
    pthread_mutex_unlock(&s->db_mu);
    if (rc)
        return rc;
    for (size_t i = 0; i < w->nfix; i++) {
        const check_fix *f = &w->fix[i];
        if (f->sg && f->live->del_count != f->live->max_doc)
            continue; /* kept; a row left without live docs went */
        for (int k = 0; k < 2; k++) {
            char *p = fds__seg_path(w->ix, w->rep->segs[f->seg].gen, k ? "tim" : "fdt");
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
    bool repair = rep->marker || w.nfix;
    if (!rc && exorcise_damaged && repair) {
        rc = exorcise(s, &w, err);
        rep->exorcised = !rc;
    }
    for (size_t i = 0; i < w.nfix; i++) {
        fds__seg_unref(w.fix[i].sg);
        fds__live_unref(w.fix[i].live);
    }
    free(w.fix);
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
