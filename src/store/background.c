/*
 * background.c: the node's background threads: the background thread
 * (periodic refreshes by index.refresh_interval, async translog syncs and
 * the catalogue's incremental vacuum), the
 * merge thread (background merges), and the disk monitor thread, started
 * by fds_store_start_background and stopped by fds_store_close (s->stop).
 * The flusher thread is refresh.c's.
 *
 * The disk watermarks (disk.h): after each new sample of the disk, at the
 * flood stage every open index gets index.blocks.read_only_allow_delete
 * (persisted, as Elasticsearch's DiskThresholdMonitor puts it), and below
 * the high watermark every index that has it loses it, whoever put it, as
 * Elasticsearch 8 releases it.  Refreshes go on at the flood stage (the
 * space left is there for them), and above the high watermark they run at
 * every tick, so that each stays small; merges wait there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "catalog.h"
#include "store_int.h"

#define BG_TICK_MS 100

/* Put (on) or release index.blocks.read_only_allow_delete on ix; a full
 * disk gives the reserve back for it and tries once more. */
static void disk_block(fds_index *ix, bool on)
{
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    bool has = set.blocks & FDS_BLOCK_READ_ONLY_ALLOW_DELETE;
    if (has == on || (on && (!fds_index_is_open(ix) || fds_index_failure(ix))))
        return;
    if (on)
        set.blocks |= FDS_BLOCK_READ_ONLY_ALLOW_DELETE;
    else
        set.blocks &= ~FDS_BLOCK_READ_ONLY_ALLOW_DELETE;
    fds_err err;
    fds_err_clear(&err);
    int rc = fds_index_put_settings(ix, &set, &err);
    if (rc == FDS_ESQL && fds__disk_give_reserve(ix->st, FDS__RESERVE_WORK, true)) {
        fds_err_clear(&err);
        rc = fds_index_put_settings(ix, &set, &err);
    }
    if (rc)
        fprintf(stderr, "fieldstore: [%s] cannot %s the flood-stage block: "
                        "%s\n", ix->name, on ? "put" : "release", err.reason);
    else
        fprintf(stderr, "fieldstore: [%s] %s index.blocks.read_only_allow_"
                        "delete: disk usage %s\n", ix->name,
                on ? "put" : "released",
                on ? "exceeded the flood-stage watermark"
                   : "is below the high watermark");
}

/* The blocks after a new sample of the disk. */
static void disk_blocks(fds_index **v, size_t n, bool flood, bool above_high)
{
    for (size_t i = 0; v && i < n; i++)
        if (flood)
            disk_block(v[i], true);
        else if (!above_high)
            disk_block(v[i], false);
}

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
        /* above the high watermark, buffered writes become segments at
         * once: a small refresh fits where a large one would not */
        bool tight = atomic_load(&s->disk.above_high);
        for (size_t i = 0; v && i < n; i++) {
            fds_index *ix = v[i];
            fds_index_settings set;
            fds_index_get_settings(ix, &set);
            pthread_mutex_lock(&ix->wmu);
            bool pending = ix->buf.n > 0 && !fds__index_usable(ix, NULL);
            int64_t last_refresh = ix->last_refresh_ms;
            pthread_mutex_unlock(&ix->wmu);
            if (pending && ((set.refresh_interval_ms >= 0 &&
                             now - last_refresh >= set.refresh_interval_ms) ||
                            tight || fds__buf_over(s))) {
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
        /* above the high watermark: no merge's new segment files (a merge
         * writes its inputs' size again before it frees them) */
        bool low = atomic_load(&s->disk.above_high);
        for (size_t i = 0; v && i < n; i++) {
            if (!low && !atomic_load(&s->stop))
                fds__index_maybe_merge(v[i]);
            fds_index_release(v[i]);
        }
        free(v);
    }
    return NULL;
}

/* The disk monitor thread: samples the disk when due and puts or releases
 * the blocks after each new sample (a thread of its own, so that a long
 * refresh on the background thread never holds a block up). */
static void *disk_monitor(void *arg)
{
    fds_store *s = arg;
    fds__thread_background("fds-disk");
    while (!atomic_load(&s->stop)) {
        struct timespec ts = {0, BG_TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
        bool flood, above_high;
        if (!fds__disk_tick(s, &flood, &above_high))
            continue;
        size_t n;
        fds_index **v = fds__indices_pin(s, &n);
        disk_blocks(v, n, flood, above_high);
        for (size_t i = 0; v && i < n; i++)
            fds_index_release(v[i]);
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
    if (pthread_create(&s->disk_monitor, NULL, disk_monitor, s) != 0)
        return FDS_ENOMEM;
    s->disk_monitor_started = true;
    if (pthread_create(&s->flusher, NULL, fds__flusher_main, s) != 0)
        return FDS_ENOMEM;
    atomic_store(&s->flusher_started, true);
    return 0;
}
