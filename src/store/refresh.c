/*
 * refresh.c: turning the buffer into a segment.  The buffer is frozen (gets
 * still see it), its live documents are written as seg_<gen>.fdt
 * (segment.c) and seg_<gen>.tim (src/query), both fsync'd and the folder
 * fsync'd; then one catalogue transaction registers the segment, stores the
 * new live docs of older segments whose documents it replaced or deleted,
 * saves the mapping and trims the translog; then the new set is published.
 * A crash before the commit leaves the old state plus the translog, after
 * it the new state.  Building a segment and publishing the new set are
 * segment_build.c, shared with merges and resizes.
 * A big refresh builds its documents as two segments on two threads
 * (refresh_parts); the flusher thread at the end of this file refreshes full
 * write buffers while writers go on (store_int.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "store_int.h"

typedef struct live_change {
    unsigned seg;           /* index in ix->segs at the time of the change */
    fds__live *live;        /* new bitset */
} live_change;

/* Clear the bit of every live doc in published segments [0, upto) whose
 * (shard, id) is in `docs` (replaced or deleted).  Caller holds
 * refresh_mu. */
static int collect_deletes(fds_index *ix, unsigned upto, const fds__bufdoc *docs,
                           size_t n, fds__live **newlive)
{
    for (unsigned i = 0; i < upto; i++)
        newlive[i] = NULL;
    for (size_t k = 0; k < n; k++)
        for (unsigned i = upto; i-- > 0;) {
            uint32_t doc;
            fds__live *cur = newlive[i] ? newlive[i] : ix->lives[i];
            if (ix->segs[i]->shard != docs[k].shard ||
                !fds__seg_may_hold(ix->segs[i], docs[k].id, docs[k].id_len) ||
                fds_sidx_find_id(ix->segs[i]->sidx, docs[k].id, docs[k].id_len,
                                 &doc) != 0 ||
                !fds__live_get(cur, doc))
                continue;
            if (!newlive[i] &&
                !(newlive[i] = fds__live_copy(ix->lives[i], ix->segs[i]->max_doc)))
                return FDS_ENOMEM;
            newlive[i]->bits[doc >> 3] &= (uint8_t)~(1u << (doc & 7));
            newlive[i]->del_count++;
            break;
        }
    return 0;
}

/*
 * A refresh of many documents builds its segment in parts, one segment
 * each, on threads of their own: building the inverted index is most of a
 * refresh's work and runs on one thread per segment, so two parts keep
 * two cores busy while writers fill the next buffer (measured with
 * bench/scale/bulk.sh, docs/benchmarks.md).  Parts are consecutive runs of
 * the shard's documents in arrival order, published in that order, so the
 * newest copy of an id stays in the newest segment (ids within one refresh
 * are distinct anyway).  Below REFRESH_PART_MIN_DOCS documents a part is
 * not worth its extra segment (merges fold them later), and the first
 * refresh of a dictionary codec trains the dictionary in one piece.
 */
#define REFRESH_PARTS 2
#define REFRESH_PART_MIN_DOCS 4096

typedef struct build_job {
    fds_index *ix;
    const fds__bufdoc *docs;
    size_t n;
    const fds_index_settings *set;
    fds__seg *sg;
    int rc;
    fds_err err;
} build_job;

static void *build_job_run(void *arg)
{
    build_job *j = arg;
    j->rc = fds__build_segment(j->ix, j->docs, j->n, NULL, j->set, NULL, 0,
                               false, NULL, &j->sg, &j->err);
    return NULL;
}

static unsigned refresh_parts(fds_index *ix, const fds_index_settings *set,
                              size_t nd)
{
    int level;
    if (nd < REFRESH_PARTS * REFRESH_PART_MIN_DOCS)
        return 1;
    if (fds_codec_uses_dict(set->codec.codec) &&
        !fds__dict_current_level(ix, set->codec.codec, &level))
        return 1;
    return REFRESH_PARTS;
}

/* The segments of docs[0, nd) (one shard's) into sgs[*nsg...]: in
 * refresh_parts parts, all but the last on threads of their own.  On error
 * the segments built are still added to sgs (the caller drops them).
 * Returns 0 or the first part's error (err filled). */
static int build_parts(fds_index *ix, const fds__bufdoc *docs, size_t nd,
                       const fds_index_settings *set, fds__seg **sgs,
                       unsigned *nsg, fds_err *err)
{
    unsigned parts = refresh_parts(ix, set, nd);
    build_job job[REFRESH_PARTS];
    pthread_t th[REFRESH_PARTS];
    bool started[REFRESH_PARTS] = {0};
    for (unsigned p = 0; p < parts; p++) {
        size_t a = nd * p / parts, b = nd * (p + 1) / parts;
        job[p] = (build_job){ix, docs + a, b - a, set, NULL, 0, {0}};
        fds_err_clear(&job[p].err);
        if (p + 1 < parts)
            started[p] = pthread_create(&th[p], NULL, build_job_run, &job[p]) == 0;
        if (!started[p])
            build_job_run(&job[p]);
    }
    int rc = 0;
    for (unsigned p = 0; p < parts; p++) {
        if (started[p])
            pthread_join(th[p], NULL);
        if (job[p].sg)
            sgs[(*nsg)++] = job[p].sg;
        if (job[p].rc && !rc) {
            rc = job[p].rc;
            if (err)
                *err = job[p].err;
        }
    }
    return rc;
}

/* A failed refresh keeps its documents: the frozen buffer goes back in
 * front of the writes buffered since (caller holds refresh_mu; takes wmu
 * and buf_mu).  Out of memory on the way fails the index (fds__buf_lost). */
static void refresh_restore(fds_index *ix)
{
    fds__buffer *fz = &ix->frozen;
    pthread_mutex_lock(&ix->wmu);
    pthread_mutex_lock(&ix->buf_mu);
    fds__buffer newer = ix->buf;
    ix->buf = *fz;
    memset(fz, 0, sizeof *fz);
    fz->max_seq = -1;
    size_t i = 0;
    for (; i < newer.n; i++)
        if (fds__buf_put(&ix->buf, newer.docs[i].id, newer.docs[i].id_len,
                         newer.docs[i].src, newer.docs[i].src_len,
                         newer.docs[i].version, newer.docs[i].seq_no,
                         newer.docs[i].shard, newer.docs[i].routing,
                         newer.docs[i].routing_len))
            break;
    if (i < newer.n) {
        /* out of memory: the buffer lacks acknowledged writes that the
         * translog holds.  Stop the index before a refresh could trim
         * them; a restart replays them. */
        for (; i < newer.n; i++) {
            free(newer.docs[i].id);
            free(newer.docs[i].src);
            free(newer.docs[i].routing);
        }
        pthread_mutex_lock(&ix->meta_mu); /* failure: see store_int.h */
        fds__buf_lost(ix);
        pthread_mutex_unlock(&ix->meta_mu);
    }
    free(newer.docs);
    free(newer.slots);
    fds__buf_account(ix);
    pthread_mutex_unlock(&ix->buf_mu);
    pthread_mutex_unlock(&ix->wmu);
}

/* Live sources of the frozen buffer fz by shard, in arrival order within
 * a shard, into docs (fz->n entries): those of shard sh are
 * docs[first[sh], first[sh + 1]) (first: nsh + 1 entries, zeroed).
 * 0 or FDS_ENOMEM. */
static int split_by_shard(const fds__buffer *fz, uint32_t nsh,
                          fds__bufdoc *docs, size_t *first)
{
    for (size_t i = 0; i < fz->n; i++)
        if (fz->docs[i].src)
            first[fz->docs[i].shard + 1]++;
    for (uint32_t sh = 0; sh < nsh; sh++)
        first[sh + 1] += first[sh];
    size_t *at = calloc((size_t)nsh + 1, sizeof *at);
    if (!at)
        return FDS_ENOMEM;
    memcpy(at, first, ((size_t)nsh + 1) * sizeof *at);
    for (size_t i = 0; i < fz->n; i++)
        if (fz->docs[i].src)
            docs[at[fz->docs[i].shard]++] = fz->docs[i];
    free(at);
    return 0;
}

/* The refresh's one catalogue transaction: the nsg new segments (their
 * documents up to seq max_seq), the changed live docs of the published
 * segments [0, upto), the translog trimmed to max_seq and, with a new
 * segment, the mapping.  Caller holds refresh_mu; takes db_mu. */
static int refresh_commit(fds_index *ix, fds__seg **sgs, unsigned nsg,
                          fds__live **newlive, unsigned upto, int64_t max_seq,
                          fds_err *err)
{
    sqlite3 *db = ix->st->db;
    /* the mapping's JSON is rebuilt only when a field came or went since
     * the last save: an index at its field limit would otherwise print
     * its whole mapping at every refresh */
    uint64_t gen = fds_mapping_generation(ix->mapping);
    bool save_mapping = nsg && gen != ix->mapping_saved_gen;
    pthread_mutex_lock(&ix->st->db_mu);
    int rc = fds__cat_begin(db, true, err);
    for (unsigned k = 0; k < nsg && !rc; k++)
        rc = fds__segment_insert(ix, sgs[k], max_seq, err);
    if (!rc)
        rc = fds__lives_save(ix, newlive, upto, err);
    if (!rc)
        rc = fds__translog_trim(ix, max_seq, err);
    if (!rc && save_mapping)
        rc = fds__mapping_save(ix, err);
    rc = fds__cat_end(db, rc, NULL, err);
    pthread_mutex_unlock(&ix->st->db_mu);
    if (!rc && save_mapping)
        ix->mapping_saved_gen = gen;
    return rc;
}

/* The refresh itself; caller holds refresh_mu. */
static int refresh_locked(fds_index *ix, fds_err *err)
{
    pthread_mutex_lock(&ix->wmu);
    int urc = fds__index_usable(ix, err);
    if (urc) {
        pthread_mutex_unlock(&ix->wmu);
        return urc;
    }
    pthread_mutex_lock(&ix->buf_mu);
    ix->frozen = ix->buf;
    memset(&ix->buf, 0, sizeof ix->buf);
    ix->buf.max_seq = -1;
    pthread_mutex_unlock(&ix->buf_mu);
    fds__buf_account(ix); /* frozen: no longer counts against the limit */
    fds_index_settings set = ix->settings;
    ix->last_refresh_ms = fds__now_ms();
    pthread_mutex_unlock(&ix->wmu);
    fds__flush_progress(ix->st);

    int rc = 0;
    fds__buffer *fz = &ix->frozen;
    bool built = fz->n > 0;
    if (!built)
        goto done;
    /* live sources of the frozen buffer, by shard, in arrival order
     * within a shard: one segment per shard that has any */
    fds__bufdoc *docs = malloc(fz->n * sizeof *docs);
    uint32_t nsh = ix->nshards;
    size_t *first = calloc((size_t)nsh + 1, sizeof *first);
    fds__seg **sgs = calloc((size_t)nsh * REFRESH_PARTS + 1, sizeof *sgs);
    unsigned nsg = 0;
    unsigned upto = ix->nsegs; /* stable: only refresh/merge change it */
    fds__live **newlive = NULL;
    if (!docs || !first || !sgs) {
        rc = FDS_ENOMEM;
        goto out;
    }
    if ((rc = split_by_shard(fz, nsh, docs, first)))
        goto out;
    newlive = calloc(upto + 1, sizeof *newlive);
    if (!newlive)
        rc = FDS_ENOMEM;
    if (!rc)
        rc = collect_deletes(ix, upto, fz->docs, fz->n, newlive);
    for (uint32_t sh = 0; sh < nsh && !rc; sh++) {
        size_t nd = first[sh + 1] - first[sh];
        if (!nd)
            continue;
        unsigned from = nsg;
        rc = build_parts(ix, docs + first[sh], nd, &set, sgs, &nsg, err);
        for (unsigned k = from, at = 0; k < nsg && !rc; k++) {
            sgs[k]->shard = sh;
            rc = fds__routes_from_docs(&sgs[k]->routes, docs + first[sh] + at,
                                       sgs[k]->max_doc);
            at += sgs[k]->max_doc;
        }
    }
    if (!rc)
        rc = refresh_commit(ix, sgs, nsg, newlive, upto, fz->max_seq, err);
    if (!rc)
        rc = fds__publish(ix, newlive, upto, sgs, NULL, nsg, NULL, 0);
out:
    if (rc) {
        for (unsigned k = 0; k < nsg; k++) {
            atomic_store(&sgs[k]->dropped, true);
            fds__seg_unref(sgs[k]);
        }
        for (unsigned i = 0; newlive && i < upto; i++)
            fds__live_unref(newlive[i]);
        refresh_restore(ix);
    }
    free(newlive);
    free(docs);
    free(first);
    free(sgs);
done:
    pthread_mutex_lock(&ix->wmu);
    pthread_mutex_lock(&ix->buf_mu);
    fds__buf_free(&ix->frozen);
    fds__buf_account(ix);
    pthread_mutex_unlock(&ix->buf_mu);
    pthread_mutex_unlock(&ix->wmu);
    fds__flush_progress(ix->st);
    if (built)
        fds__heap_release();
    return rc;
}

/* The refresh, tried once more when it failed for an I/O or catalogue
 * error on a (nearly) full disk and the reserve file could be given back
 * (disk.c): the documents it holds are acknowledged, and the reserve is
 * kept for them.  Caller holds refresh_mu. */
static int refresh_reserved(fds_index *ix, fds_err *err)
{
    int rc = refresh_locked(ix, err);
    if ((rc == FDS_EIO || rc == FDS_ESQL) &&
        fds__disk_give_reserve(ix->st, FDS__RESERVE_WORK, false)) {
        if (err)
            fds_err_clear(err);
        rc = refresh_locked(ix, err);
    }
    if (rc == FDS_EIO || rc == FDS_ESQL)
        fds__disk_full(ix->st);
    return rc;
}

int fds_index_refresh(fds_index *ix, fds_err *err)
{
    pthread_mutex_lock(&ix->refresh_mu);
    int rc = refresh_reserved(ix, err);
    pthread_mutex_unlock(&ix->refresh_mu);
    return rc;
}

/*
 * Merges falling behind: with more than MERGE_BEHIND_SEGMENTS published
 * segments, a full-buffer flush waits for the running merge to end first
 * (merge_mu taken and let go), so that writers, which wait for buffer room,
 * slow down to what merging keeps up with -- Elasticsearch's index
 * throttling, Lucene's ConcurrentMergeScheduler stalling indexing threads
 * past maxMergeCount.  Without it, flushes never paused for a merge (they
 * have not since merges left the refresh lock), and a 2M-doc load ended
 * with 42 segments instead of 17 and a force-merge twice as long
 * (docs/benchmarks.md).  Explicit refreshes (_refresh, ?refresh=true) and
 * periodic ones never wait.
 */
#define MERGE_BEHIND_SEGMENTS (2 * FDS_MERGE_SEGMENTS_MAX)

/*
 * Elasticsearch's IndexingMemoryController: once the indexing buffers of
 * the node pass indices.memory.index_buffer_size, Lucene's IndexWriter
 * flushes a segment regardless of refresh_interval; Elasticsearch makes
 * it searchable only at the next refresh.  Here the segment is published
 * at once: this is an ordinary refresh, so realtime gets, version checks
 * and deletes see one consistent set, and nothing (an unpublished segment
 * with deletes still to apply) waits between two states.  The difference
 * shows only with refresh_interval -1 or long intervals: documents become
 * searchable once the buffer fills, not only at the next refresh.
 */
void fds__index_buffer_flush(fds_index *ix)
{
    pthread_rwlock_rdlock(&ix->segs_lock);
    bool behind = ix->nsegs > MERGE_BEHIND_SEGMENTS * ix->nshards;
    pthread_rwlock_unlock(&ix->segs_lock);
    if (behind) {
        pthread_mutex_lock(&ix->merge_mu);
        pthread_mutex_unlock(&ix->merge_mu);
    }
    pthread_mutex_lock(&ix->refresh_mu);
    pthread_mutex_lock(&ix->wmu);
    bool go = ix->buf.n > 0 && !fds__index_usable(ix, NULL) &&
              fds__buf_over(ix->st);
    pthread_mutex_unlock(&ix->wmu);
    fds_err err;
    fds_err_clear(&err);
    if (go && refresh_reserved(ix, &err))
        fprintf(stderr, "fieldstore: [%s] writing the full write buffer as a "
                        "segment failed (the writes stay in the translog): "
                        "%s\n", ix->name, err.reason);
    pthread_mutex_unlock(&ix->refresh_mu);
}

/* ---- the flusher thread (store_int.h) ------------------------------------ */

/* How long a writer waiting for buffer room sleeps between checks, in
 * milliseconds, should a wake-up be missed (it is woken at every freeze
 * and at the end of every refresh and flusher pass). */
#define FLUSH_WAIT_TICK_MS 100
/* Flusher passes a writer waits for at most: one may have started before
 * its buffer was full; the next one flushes it or finds nothing it can
 * flush (the index closed or failed, the refresh failed). */
#define FLUSH_WAIT_PASSES 2

void fds__flush_progress(fds_store *s)
{
    pthread_mutex_lock(&s->flush_mu);
    pthread_cond_broadcast(&s->flushed_cv);
    pthread_mutex_unlock(&s->flush_mu);
}

/* Caller holds flush_mu. */
static void flush_request(fds_store *s)
{
    s->flush_wanted = true;
    pthread_cond_signal(&s->flush_cv);
}

void fds__buffer_flush_async(fds_index *ix)
{
    fds_store *s = ix->st;
    if (!atomic_load(&s->flusher_started)) {
        fds__index_buffer_flush(ix);
        return;
    }
    pthread_mutex_lock(&s->flush_mu);
    flush_request(s);
    pthread_mutex_unlock(&s->flush_mu);
}

void fds__buffer_wait(fds_index *ix)
{
    fds_store *s = ix->st;
    if (!atomic_load(&s->flusher_started)) {
        fds__index_buffer_flush(ix);
        return;
    }
    pthread_mutex_lock(&s->flush_mu);
    uint64_t until = s->flushes_done + FLUSH_WAIT_PASSES;
    while (fds__buf_over(s) && s->flushes_done < until &&
           !atomic_load(&s->stop)) {
        flush_request(s);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += FLUSH_WAIT_TICK_MS * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&s->flushed_cv, &s->flush_mu, &ts);
    }
    pthread_mutex_unlock(&s->flush_mu);
}

/* One pass: every index, while the buffers are over the limit. */
static void flush_pass(fds_store *s)
{
    size_t n;
    fds_index **v = fds__indices_pin(s, &n);
    for (size_t i = 0; i < n; i++) {
        if (fds__buf_over(s) && !atomic_load(&s->stop))
            fds__index_buffer_flush(v[i]);
        fds_index_release(v[i]);
    }
    free(v);
}

void *fds__flusher_main(void *arg)
{
    fds_store *s = arg;
    fds__thread_background("fds-flusher");
    pthread_mutex_lock(&s->flush_mu);
    while (!atomic_load(&s->stop)) {
        if (!s->flush_wanted) {
            pthread_cond_wait(&s->flush_cv, &s->flush_mu);
            continue;
        }
        s->flush_wanted = false;
        pthread_mutex_unlock(&s->flush_mu);
        flush_pass(s);
        pthread_mutex_lock(&s->flush_mu);
        s->flushes_done++;
        pthread_cond_broadcast(&s->flushed_cv);
    }
    pthread_mutex_unlock(&s->flush_mu);
    return NULL;
}
