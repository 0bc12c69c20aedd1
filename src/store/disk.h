/*
 * disk.h: the node's disk watermarks, Elasticsearch 8's disk-based
 * allocation settings (DiskThresholdSettings, the reference's "Disk-based
 * shard allocation settings") as a one-node store applies them, and the
 * disk usage the _cat/allocation and _nodes/stats/fs answers show.
 *
 * A watermark is a percentage of the disk used ("85%", or a ratio "0.85")
 * or an amount of free space ("500mb"); all three are of one kind.  A
 * percentage watermark whose own setting was not given is capped by its
 * max_headroom (200GB, 150GB, 100GB): on a large disk the free space it
 * asks for is at most that.  The node samples statvfs(2) of its data
 * directory every cluster.info.update.interval (30s), sooner once the
 * writes since the last sample could have used the headroom left before
 * the flood stage, and at once after a write or a refresh found the disk
 * full.  At the flood stage every index gets
 * index.blocks.read_only_allow_delete (writes answer 429
 * cluster_block_exception); below the high watermark the block is
 * released, as Elasticsearch 8 releases it.  The low and high watermarks
 * move no shard on one node: high is where the block is released.
 *
 * Two reserve files (DATA/disk.reserve and DATA/disk.reserve.delete, each
 * FDS_DISK_RESERVE_* bytes, counted as free space by the watermarks) are
 * given back when a refresh (the first) or an index deletion (the second,
 * then the first) finds the disk full, so that work already acknowledged
 * can complete and deleting is a way out even at 0 bytes free; they are
 * made again once the disk is below the high watermark.
 */
#ifndef FDS_DISK_H
#define FDS_DISK_H

#include <stdbool.h>
#include <stdint.h>

#include "fds_error.h"

typedef struct fds_store fds_store;

/* The settings, in this order (fds_disk_setting_name). */
enum {
    FDS_DISK_THRESHOLD_ENABLED = 0, /* cluster.routing.allocation.disk.threshold_enabled */
    FDS_DISK_LOW,                   /* ...disk.watermark.low */
    FDS_DISK_LOW_HEADROOM,          /* ...disk.watermark.low.max_headroom */
    FDS_DISK_HIGH,                  /* ...disk.watermark.high */
    FDS_DISK_HIGH_HEADROOM,         /* ...disk.watermark.high.max_headroom */
    FDS_DISK_FLOOD,                 /* ...disk.watermark.flood_stage */
    FDS_DISK_FLOOD_HEADROOM,        /* ...disk.watermark.flood_stage.max_headroom */
    FDS_DISK_UPDATE_INTERVAL,       /* cluster.info.update.interval */
    FDS_DISK_NSETTINGS
};

/* The shortest cluster.info.update.interval, as Elasticsearch's. */
#define FDS_DISK_UPDATE_INTERVAL_MIN_MS 10000
/* Each reserve file: total / FDS_DISK_RESERVE_DIV bytes, within these. */
#define FDS_DISK_RESERVE_DIV 100
#define FDS_DISK_RESERVE_MIN (1ull << 20)
#define FDS_DISK_RESERVE_MAX (16ull << 20)

/* One watermark: a percentage of the disk used, or free bytes. */
typedef struct fds_disk_watermark {
    bool absolute;    /* free bytes (else a percentage used) */
    double percent;   /* used, 0..100 */
    uint64_t bytes;   /* free space below which the watermark is passed */
    int64_t headroom; /* percentage only: free space asked at most; -1 none */
} fds_disk_watermark;

typedef struct fds_disk_settings {
    bool enabled;
    fds_disk_watermark low, high, flood;
    int64_t interval_ms;
} fds_disk_settings;

/* The setting's name (k < FDS_DISK_NSETTINGS) and Elasticsearch's default
 * as GET _cluster/settings?include_defaults shows it. */
const char *fds_disk_setting_name(int k);
const char *fds_disk_setting_default(int k);
/* k of `name`, or -1. */
int fds_disk_setting_of(const char *name);

/*
 * Parse and check the settings as one set: values[k] is the value in
 * effect of setting k, NULL for its default (a max_headroom's default
 * then depends on whether its watermark was given, as Elasticsearch's).
 * Returns 0 with *out filled, or FDS_EINVAL (kind INVALID_ARGUMENT) with
 * Elasticsearch's reason: "unable to parse [name=value] as either
 * percentage or bytes", "low disk watermark [90%] more than high disk
 * watermark [85%]", "unable to consistently parse [...] as percentage or
 * bytes", "failed to parse value [x] for setting [name]", "failed to
 * parse value [5s] for setting [cluster.info.update.interval], must be >=
 * [10s]".
 */
int fds_disk_settings_parse(const char *const values[FDS_DISK_NSETTINGS],
                            fds_disk_settings *out, fds_err *err);

/* The free space below which watermark `w` is passed on a disk of
 * `total` bytes. */
uint64_t fds_disk_free_threshold(const fds_disk_watermark *w, uint64_t total);

/* The free space below which low, high and flood stage are passed on a
 * disk of `total` bytes, into free[0..3): each at least the next, so that
 * headroom caps of different stages never put high below the flood stage
 * (a block released while the flood stage holds). */
void fds_disk_thresholds(const fds_disk_settings *d, uint64_t total,
                         uint64_t free[3]);

/* Apply settings to the node (takes effect at once: the disk is sampled
 * again and blocks put or released by the next monitor pass). */
void fds_store_set_disk_settings(fds_store *s, const fds_disk_settings *d);

/* The data directory's file system now (a fresh statvfs). */
typedef struct fds_disk_usage {
    char path[4096];     /* the data directory */
    uint64_t total;      /* bytes */
    uint64_t free;       /* bytes free (f_bfree) */
    uint64_t available;  /* bytes free for unprivileged use (f_bavail) */
    uint64_t reserve;    /* bytes of the reserve files held now */
    bool flood;          /* at the flood stage (per the last sample) */
} fds_disk_usage;

/* 0, or FDS_EIO when statvfs fails (u zeroed, path set). */
int fds_store_disk_usage(fds_store *s, fds_disk_usage *u);

#endif
