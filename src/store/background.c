/*
 * background.c: the node's background threads: the background thread
 * (periodic refreshes by index.refresh_interval, async translog syncs and
 * the catalogue's incremental vacuum) and the merge thread (background
 * merges), started by fds_store_start_background and stopped by
 * fds_store_close (s->stop).  The flusher thread is refresh.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "catalog.h"
#include "store_int.h"

#define BG_TICK_MS 100

static void *background(void *arg)
{
    fds_store *s = arg;
    fds__thread_background("fds-background");
    int64_t last_sync = fds__now_ms();
    uint64_t last_batches = 0;
    while (!atomic_load(&s->stop)) {
        struct timespec ts = {0, BG_TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
        int64_t now = fds__now_ms();
        size_t n;
        fds_index **v = fds__indices_pin(s, &n);
        /* below the free-space floor: no new segment files (the writes
         * wait in the translog, searches serve what is committed) */
        bool low = fds__disk_low(s);
        for (size_t i = 0; v && i < n; i++) {
            fds_index *ix = v[i];
            if (low) {
                fds_index_release(ix);
                continue;
            }
            fds_index_settings set;
            fds_index_get_settings(ix, &set);
            pthread_mutex_lock(&ix->wmu);
            bool pending = ix->buf.n > 0 && !fds__index_usable(ix, NULL);
            int64_t last_refresh = ix->last_refresh_ms;
            pthread_mutex_unlock(&ix->wmu);
            if (pending && ((set.refresh_interval_ms >= 0 &&
                             now - last_refresh >= set.refresh_interval_ms) ||
                            fds__buf_over(s))) {
                fds_err err;
                fds_err_clear(&err);
                if (fds_index_refresh(ix, &err))
                    fprintf(stderr, "fieldstore: [%s] refresh failed: %s\n",
                            ix->name, err.reason);
            }
            fds_index_release(ix);
        }
        free(v);
        if (now - last_sync >= 5000) { /* index.translog.sync_interval */
            pthread_mutex_lock(&s->db_mu);
            /* Pages a trim freed go back to the file system once writes
             * pause for a sync interval.  While they go on, the next
             * translog rows reuse those pages; vacuuming then would move
             * every live translog page from the end of the file into the
             * holes, ~5% of the CPU of a _bulk load (perf, 2 clients).  The
             * file stays at its high-water mark meanwhile: about the
             * translog of two write buffers. */
            bool vacuum = s->tl_batches == last_batches;
            last_batches = s->tl_batches;
            fds__cat_upkeep(s->db, vacuum);
            pthread_mutex_unlock(&s->db_mu);
            last_sync = now;
        }
    }
    return NULL;
}

/* The merge thread: background merges (merge.c, fds__index_maybe_merge)
 * on a thread of their own, as Lucene's ConcurrentMergeScheduler runs
 * them beside indexing, so that a long merge holds up neither the
 * periodic refreshes of the background thread nor the translog syncs. */
static void *merger(void *arg)
{
    fds_store *s = arg;
    fds__thread_background("fds-merge");
    while (!atomic_load(&s->stop)) {
        struct timespec ts = {0, BG_TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
        size_t n;
        fds_index **v = fds__indices_pin(s, &n);
        /* below the free-space floor: no new segment files */
        bool low = fds__disk_low(s);
        for (size_t i = 0; v && i < n; i++) {
            if (!low && !atomic_load(&s->stop))
                fds__index_maybe_merge(v[i]);
            fds_index_release(v[i]);
        }
        free(v);
    }
    return NULL;
}

int fds_store_start_background(fds_store *s)
{
    if (s->bg_started)
        return 0;
    if (pthread_create(&s->bg, NULL, background, s) != 0)
        return FDS_ENOMEM;
    s->bg_started = true;
    if (pthread_create(&s->merger, NULL, merger, s) != 0)
        return FDS_ENOMEM;
    s->merger_started = true;
    if (pthread_create(&s->flusher, NULL, fds__flusher_main, s) != 0)
        return FDS_ENOMEM;
    atomic_store(&s->flusher_started, true);
    return 0;
}
