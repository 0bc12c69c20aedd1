/*
 * disk.c: the disk watermarks (disk.h): parsing and checking them as
 * Elasticsearch 8's DiskThresholdSettings and RelativeByteSizeValue do,
 * sampling the data directory's file system, the flood-stage state the
 * write path reads, and the reserve file.  Putting and releasing the
 * indices' blocks is the background thread's (background.c), which calls
 * in here; nothing here calls another file of src/store.
 *
 * Sampling frequency: a statvfs(2) every cluster.info.update.interval by
 * the monitor thread (every DISK_FLOOD_RECHECK_MS above the high
 * watermark, so that a block is released within about a second once space
 * is freed, where Elasticsearch waits for its next update interval); and
 * before a write batch at most every DISK_WRITE_RECHECK_MS (another
 * program may fill the disk), every DISK_HIGH_RECHECK_MS above the high
 * watermark (the flood stage is near), and at once when the translog bytes
 * written since the last sample, times DISK_WRITE_FACTOR (a translog byte
 * costs at most a WAL frame, a catalogue page after the checkpoint and a
 * segment byte), could have used the headroom left above the flood stage
 * then.
 * A write or refresh that found the disk full samples at once.
 *
 * The reserves: DATA/disk.reserve for a refresh or the putting of a block
 * and DATA/disk.reserve.delete for an index deletion (so that a refresh
 * that took the first still leaves a way out), each allocated with
 * posix_fallocate(3) (real blocks, no data written) and counted as free by
 * the watermarks, so that giving one back moves no watermark.  Given back
 * (unlinked) when that work finds the disk full; made again when a sample
 * finds the disk below the high watermark with twice its size free.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "disk.h"
#include "store_int.h"

#define DISK_WRITE_FACTOR 4
#define DISK_FLOOD_RECHECK_MS 1000
#define DISK_WRITE_RECHECK_MS 1000
#define DISK_HIGH_RECHECK_MS 20
/* The write buffers hold at most 1/DISK_BUF_SHARE of the headroom above
 * the flood stage: the translog holds them too, and their segments and
 * the catalogue's WAL need room of their own. */
#define DISK_BUF_SHARE 4
/* The reserve files, by fds__reserve slot. */
static const char *const RESERVE_NAMES[FDS__RESERVES] = {"disk.reserve",
                                                         "disk.reserve.delete"};
#define META_PREFIX "cluster." /* store.h: persistent cluster settings */

static const char *const NAMES[FDS_DISK_NSETTINGS] = {
    "cluster.routing.allocation.disk.threshold_enabled",
    "cluster.routing.allocation.disk.watermark.low",
    "cluster.routing.allocation.disk.watermark.low.max_headroom",
    "cluster.routing.allocation.disk.watermark.high",
    "cluster.routing.allocation.disk.watermark.high.max_headroom",
    "cluster.routing.allocation.disk.watermark.flood_stage",
    "cluster.routing.allocation.disk.watermark.flood_stage.max_headroom",
    "cluster.info.update.interval",
};
/* Elasticsearch's defaults; a max_headroom's is "-1" when its watermark
 * is given (headroom_default). */
static const char *const DEFAULTS[FDS_DISK_NSETTINGS] = {
    "true", "85%", "200GB", "90%", "150GB", "95%", "100GB", "30s"};

const char *fds_disk_setting_name(int k) { return NAMES[k]; }
const char *fds_disk_setting_default(int k) { return DEFAULTS[k]; }

int fds_disk_setting_of(const char *name)
{
    for (int k = 0; k < FDS_DISK_NSETTINGS; k++)
        if (!strcmp(NAMES[k], name))
            return k;
    return -1;
}

/* ---- parsing ----------------------------------------------------------- */

/* A unit and what it multiplies. */
typedef struct unit {
    const char *name;
    double mul;
} unit;

/* A non-negative number and one of the n units (case-insensitive with
 * `nocase`) into *out, below 9e15 after scaling: 0 or -1. */
static int parse_scaled(const char *v, const unit *u, size_t n, bool nocase,
                        double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || !(x >= 0) || *v == ' ')
        return -1;
    for (size_t i = 0; i < n; i++)
        if (nocase ? !strcasecmp(end, u[i].name) : !strcmp(end, u[i].name)) {
            *out = x * u[i].mul;
            return *out < 9e15 ? 0 : -1;
        }
    return -1;
}

/* Elasticsearch's ByteSizeValue: a number and a unit (b, k/kb, m/mb, g/gb,
 * t/tb, p/pb, any case), or "0" / "-1" alone.  0 or -1. */
static int parse_size(const char *v, int64_t *out)
{
    static const unit U[] = {
        {"b", 1}, {"k", 1024.0}, {"kb", 1024.0}, {"m", 1048576.0},
        {"mb", 1048576.0}, {"g", 1073741824.0}, {"gb", 1073741824.0},
        {"t", 1099511627776.0}, {"tb", 1099511627776.0},
        {"p", 1125899906842624.0}, {"pb", 1125899906842624.0}};
    double b;
    if (!strcmp(v, "0") || !strcmp(v, "-1")) {
        *out = atoll(v);
        return 0;
    }
    if (parse_scaled(v, U, sizeof U / sizeof *U, true, &b))
        return -1;
    *out = (int64_t)b;
    return 0;
}

/* Elasticsearch's RatioValue: "85%" (0..100) or "0.85" (0..1). */
static int parse_ratio(const char *v, double *percent)
{
    size_t n = strlen(v);
    if (!n || *v == ' ')
        return -1;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || !isfinite(x))
        return -1;
    if (v[n - 1] == '%' && end == v + n - 1) {
        if (x < 0 || x > 100)
            return -1;
        *percent = x;
        return 0;
    }
    if (*end || x < 0 || x > 1)
        return -1;
    *percent = x * 100;
    return 0;
}

/* RelativeByteSizeValue.parseRelativeByteSizeValue: a value ending in 'b'
 * is bytes; else a ratio or percentage, where a bare 0 is 0 bytes. */
static int parse_watermark(const char *name, const char *v,
                           fds_disk_watermark *w, fds_err *err)
{
    size_t n = strlen(v);
    double pct;
    int64_t b;
    memset(w, 0, sizeof *w);
    w->headroom = -1;
    if (n && v[n - 1] != 'b' && v[n - 1] != 'B' && !parse_ratio(v, &pct)) {
        if (pct != 0 || v[n - 1] == '%') {
            w->percent = pct;
            return 0;
        }
        w->absolute = true;
        return 0;
    }
    if (!parse_size(v, &b) && b >= 0) {
        w->absolute = true;
        w->bytes = (uint64_t)b;
        return 0;
    }
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "unable to parse [%s=%s] as either percentage or bytes",
                        name, v);
}

static int bad(fds_err *err, int k, const char *v)
{
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "failed to parse value [%s] for setting [%s]", v,
                        NAMES[k]);
}

/* Elasticsearch's TimeValue ("30s", "1m", "500ms", "1h") -> ms; -1 when
 * it does not parse. */
static int64_t parse_interval(const char *v)
{
    static const unit U[] = {{"nanos", 1e-6}, {"micros", 1e-3}, {"ms", 1},
                             {"s", 1000}, {"m", 60000}, {"h", 3600000},
                             {"d", 86400000}};
    double ms;
    return parse_scaled(v, U, sizeof U / sizeof *U, false, &ms) ? -1 : (int64_t)ms;
}

static const char *value_of(const char *const values[], int k)
{
    return values[k] ? values[k] : DEFAULTS[k];
}

/* low >= high >= flood in headroom: each -1 (none) or bytes. */
static int check_headrooms(const char *const values[], const fds_disk_settings *d,
                           fds_err *err)
{
    const fds_disk_watermark *w[3] = {&d->low, &d->high, &d->flood};
    static const char *const what[3] = {"low", "high", "flood stage"};
    static const int key[3] = {FDS_DISK_LOW_HEADROOM, FDS_DISK_HIGH_HEADROOM,
                               FDS_DISK_FLOOD_HEADROOM};
    for (int i = 0; i < 3; i++)
        if (values[key[i]] && w[i]->absolute && w[i]->headroom >= 0)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "setting a headroom value [%s=%s] is not "
                                "permitted when the %s disk watermark is an "
                                "absolute byte value",
                                NAMES[key[i]], values[key[i]], what[i]);
    for (int i = 0; i + 1 < 3; i++)
        if (w[i]->headroom >= 0 && w[i + 1]->headroom > w[i]->headroom)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "%s disk max headroom [%s] more than %s disk "
                                "max headroom [%s]", what[i + 1],
                                value_of(values, key[i + 1]), what[i],
                                value_of(values, key[i]));
    return 0;
}

/* DiskThresholdSettings.WatermarkValidator: one kind, and in order. */
static int check_order(const char *const values[], const fds_disk_settings *d,
                       fds_err *err)
{
    const char *lo = value_of(values, FDS_DISK_LOW);
    const char *hi = value_of(values, FDS_DISK_HIGH);
    const char *fl = value_of(values, FDS_DISK_FLOOD);
    bool a = d->low.absolute, b = d->high.absolute, c = d->flood.absolute;
    if (!a && !b && !c) {
        if (d->low.percent > d->high.percent)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "low disk watermark [%s] more than high disk "
                                "watermark [%s]", lo, hi);
        if (d->high.percent > d->flood.percent)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "high disk watermark [%s] more than flood "
                                "stage disk watermark [%s]", hi, fl);
        return 0;
    }
    if (a && b && c) {
        if (d->low.bytes < d->high.bytes)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "low disk watermark [%s] less than high disk "
                                "watermark [%s]", lo, hi);
        if (d->high.bytes < d->flood.bytes)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "high disk watermark [%s] less than flood "
                                "stage disk watermark [%s]", hi, fl);
        return 0;
    }
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "unable to consistently parse [%s=%s], [%s=%s], and "
                        "[%s=%s] as percentage or bytes", NAMES[FDS_DISK_LOW],
                        lo, NAMES[FDS_DISK_HIGH], hi, NAMES[FDS_DISK_FLOOD], fl);
}

int fds_disk_settings_parse(const char *const values[FDS_DISK_NSETTINGS],
                            fds_disk_settings *out, fds_err *err)
{
    fds_disk_settings d;
    memset(&d, 0, sizeof d);
    const char *en = value_of(values, FDS_DISK_THRESHOLD_ENABLED);
    if (strcmp(en, "true") && strcmp(en, "false"))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Failed to parse value [%s] as only [true] or "
                            "[false] are allowed.", en);
    d.enabled = !strcmp(en, "true");
    fds_disk_watermark *w[3] = {&d.low, &d.high, &d.flood};
    static const int wk[3] = {FDS_DISK_LOW, FDS_DISK_HIGH, FDS_DISK_FLOOD};
    for (int i = 0; i < 3; i++) {
        int rc = parse_watermark(NAMES[wk[i]], value_of(values, wk[i]), w[i], err);
        if (rc)
            return rc;
        int hk = wk[i] + 1;
        /* the default headroom applies to a default watermark only */
        const char *hv = values[hk] ? values[hk] : values[wk[i]] ? "-1" : DEFAULTS[hk];
        int64_t h;
        if (parse_size(hv, &h) || h < -1)
            return bad(err, hk, hv);
        w[i]->headroom = w[i]->absolute ? -1 : h;
        if (values[hk] && w[i]->absolute && h >= 0)
            w[i]->headroom = h; /* refused by check_headrooms */
    }
    int rc = check_order(values, &d, err);
    if (!rc)
        rc = check_headrooms(values, &d, err);
    if (rc)
        return rc;
    const char *iv = value_of(values, FDS_DISK_UPDATE_INTERVAL);
    d.interval_ms = parse_interval(iv);
    if (d.interval_ms < 0)
        return bad(err, FDS_DISK_UPDATE_INTERVAL, iv);
    if (d.interval_ms < FDS_DISK_UPDATE_INTERVAL_MIN_MS)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "failed to parse value [%s] for setting [%s], "
                            "must be >= [%ds]", iv, NAMES[FDS_DISK_UPDATE_INTERVAL],
                            FDS_DISK_UPDATE_INTERVAL_MIN_MS / 1000);
    *out = d;
    return 0;
}

uint64_t fds_disk_free_threshold(const fds_disk_watermark *w, uint64_t total)
{
    if (w->absolute)
        return w->bytes;
    double free = (double)total * (100.0 - w->percent) / 100.0;
    uint64_t f = free <= 0 ? 0 : (uint64_t)ceil(free);
    if (w->headroom >= 0 && (uint64_t)w->headroom < f)
        f = (uint64_t)w->headroom;
    return f;
}

void fds_disk_thresholds(const fds_disk_settings *d, uint64_t total,
                         uint64_t free[3])
{
    free[2] = fds_disk_free_threshold(&d->flood, total);
    free[1] = fds_disk_free_threshold(&d->high, total);
    free[0] = fds_disk_free_threshold(&d->low, total);
    if (free[1] < free[2])
        free[1] = free[2];
    if (free[0] < free[1])
        free[0] = free[1];
}

/* ---- the node's state -------------------------------------------------- */

static void reserve_path(const fds_store *s, int slot, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", s->dir, RESERVE_NAMES[slot]);
}

/* Bytes of the reserve files held now.  Caller holds d->mu. */
static uint64_t reserve_held(const fds__disk *d)
{
    uint64_t b = 0;
    for (int i = 0; i < FDS__RESERVES; i++)
        b += d->reserve_held[i] ? d->reserve_bytes[i] : 0;
    return b;
}

static uint64_t reserve_size(uint64_t total)
{
    uint64_t r = total / FDS_DISK_RESERVE_DIV;
    return r < FDS_DISK_RESERVE_MIN ? FDS_DISK_RESERVE_MIN
           : r > FDS_DISK_RESERVE_MAX ? FDS_DISK_RESERVE_MAX : r;
}

/* A statvfs of the data directory into d's sample.  Caller holds d->mu. */
static void sample_locked(fds_store *s)
{
    fds__disk *d = &s->disk;
    struct statvfs v;
    d->sampled_ms = fds__now_ms();
    atomic_store(&d->written, 0);
    atomic_store(&d->resample, false);
    if (statvfs(s->dir, &v) != 0) {
        d->headroom = UINT64_MAX;
        return; /* keep the state: a failed statvfs says nothing */
    }
    uint64_t total = (uint64_t)v.f_blocks * v.f_frsize;
    uint64_t real = (uint64_t)v.f_bavail * v.f_frsize;
    uint64_t avail = real + reserve_held(d);
    uint64_t thr[3];
    fds_disk_thresholds(&d->set, total, thr);
    uint64_t flood = thr[2], high = thr[1];
    uint64_t floor = atomic_load(&s->min_free);
    bool at_flood = (d->set.enabled && avail < flood) || real < floor;
    d->total = total;
    d->avail = avail;
    d->real_avail = real;
    d->headroom = !d->set.enabled ? UINT64_MAX : avail > flood ? avail - flood : 0;
    if (floor && real <= floor)
        d->headroom = 0;
    else if (floor && real - floor < d->headroom)
        d->headroom = real - floor;
    /* the write buffers must fit as segments in what is left above the
     * flood stage: past a share of it, they are written (fds__buf_over) */
    atomic_store(&d->buf_cap, d->headroom == UINT64_MAX ? UINT64_MAX
                                                         : d->headroom / DISK_BUF_SHARE);
    atomic_store(&d->flood, at_flood);
    atomic_store(&d->above_high, at_flood || (d->set.enabled && avail < high));
    d->gen++;
}

void fds__disk_init(fds_store *s)
{
    fds__disk *d = &s->disk;
    pthread_mutex_init(&d->mu, NULL);
    const char *none[FDS_DISK_NSETTINGS] = {0};
    fds_disk_settings_parse(none, &d->set, NULL);
    atomic_init(&d->written, 0);
    atomic_init(&d->flood, false);
    atomic_init(&d->above_high, false);
    atomic_init(&d->resample, true);
    atomic_init(&d->buf_cap, UINT64_MAX);
    d->headroom = UINT64_MAX;
}

void fds__disk_destroy(fds_store *s)
{
    pthread_mutex_destroy(&s->disk.mu);
}

void fds__disk_load(fds_store *s)
{
    char vals[FDS_DISK_NSETTINGS][128];
    const char *v[FDS_DISK_NSETTINGS];
    for (int k = 0; k < FDS_DISK_NSETTINGS; k++) {
        char key[160];
        snprintf(key, sizeof key, META_PREFIX "%s", NAMES[k]);
        v[k] = fds_store_meta_get(s, key, vals[k], sizeof vals[k]) ? NULL : vals[k];
    }
    fds_disk_settings set;
    fds_err e;
    fds_err_clear(&e);
    if (fds_disk_settings_parse(v, &set, &e)) {
        fprintf(stderr, "fieldstore: persistent disk watermark settings "
                        "ignored (defaults apply): %s\n", e.reason);
        return;
    }
    fds_store_set_disk_settings(s, &set);
}

void fds_store_set_disk_settings(fds_store *s, const fds_disk_settings *set)
{
    pthread_mutex_lock(&s->disk.mu);
    s->disk.set = *set;
    sample_locked(s);
    pthread_mutex_unlock(&s->disk.mu);
}

void fds_store_set_min_free_disk(fds_store *s, uint64_t bytes)
{
    atomic_store(&s->min_free, bytes);
    atomic_store(&s->disk.resample, true);
}

bool fds__disk_flood(fds_store *s)
{
    fds__disk *d = &s->disk;
    pthread_mutex_lock(&d->mu);
    int64_t now = fds__now_ms(), age = now - d->sampled_ms;
    bool due = atomic_load(&d->resample) || age >= d->set.interval_ms ||
               age >= DISK_WRITE_RECHECK_MS;
    if (atomic_load(&d->above_high) && !atomic_load(&d->flood))
        due |= age >= DISK_HIGH_RECHECK_MS; /* close to the flood stage */
    else if (d->headroom != UINT64_MAX)
        due |= atomic_load(&d->written) * DISK_WRITE_FACTOR >= d->headroom;
    if (due)
        sample_locked(s);
    bool flood = atomic_load(&d->flood);
    pthread_mutex_unlock(&d->mu);
    return flood;
}

void fds__disk_wrote(fds_store *s, uint64_t bytes)
{
    atomic_fetch_add(&s->disk.written, bytes);
}

void fds__disk_full(fds_store *s)
{
    atomic_store(&s->disk.resample, true);
}

bool fds__disk_give_reserve(fds_store *s, int slot, bool full)
{
    fds__disk *d = &s->disk;
    char path[4096];
    reserve_path(s, slot, path, sizeof path);
    pthread_mutex_lock(&d->mu);
    if (!full) { /* only a disk (nearly) full is a reason */
        sample_locked(s);
        full = atomic_load(&d->flood) || d->real_avail < d->reserve_bytes[slot];
    }
    bool had = d->reserve_held[slot] && full;
    if (had) {
        unlink(path);
        d->reserve_held[slot] = false;
        fprintf(stderr, "fieldstore: disk full: the reserve [%s] (%llu bytes) "
                        "is given back for the work in progress\n",
                RESERVE_NAMES[slot], (unsigned long long)d->reserve_bytes[slot]);
    }
    atomic_store(&d->resample, true);
    pthread_mutex_unlock(&d->mu);
    return had;
}

/* Make the reserve files the last sample allows.  Caller holds mu. */
static void reserve_keep(fds_store *s)
{
    fds__disk *d = &s->disk;
    for (int slot = 0; slot < FDS__RESERVES; slot++) {
        if (d->reserve_held[slot] || atomic_load(&d->above_high) || !d->total)
            continue;
        uint64_t want = reserve_size(d->total);
        if (d->real_avail < 2 * want)
            return;
        char path[4096];
        reserve_path(s, slot, path, sizeof path);
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            return;
        int rc = posix_fallocate(fd, 0, (off_t)want);
        if (!rc)
            rc = fsync(fd);
        close(fd);
        if (rc) {
            unlink(path);
            return;
        }
        d->reserve_held[slot] = true;
        d->reserve_bytes[slot] = want;
        d->real_avail -= want;
    }
}

bool fds__disk_tick(fds_store *s, bool *flood, bool *above_high)
{
    fds__disk *d = &s->disk;
    pthread_mutex_lock(&d->mu);
    int64_t age = fds__now_ms() - d->sampled_ms;
    if (atomic_load(&d->resample) || age >= d->set.interval_ms ||
        (atomic_load(&d->above_high) && age >= DISK_FLOOD_RECHECK_MS))
        sample_locked(s);
    reserve_keep(s);
    bool fresh = d->gen != d->acted_gen;
    d->acted_gen = d->gen;
    *flood = atomic_load(&d->flood);
    *above_high = atomic_load(&d->above_high);
    bool enabled = d->set.enabled || atomic_load(&s->min_free);
    pthread_mutex_unlock(&d->mu);
    return fresh && enabled;
}

int fds_store_disk_usage(fds_store *s, fds_disk_usage *u)
{
    memset(u, 0, sizeof *u);
    snprintf(u->path, sizeof u->path, "%s", s->dir);
    char *real = realpath(s->dir, NULL);
    if (real) {
        snprintf(u->path, sizeof u->path, "%s", real);
        free(real);
    }
    pthread_mutex_lock(&s->disk.mu);
    u->reserve = reserve_held(&s->disk);
    u->flood = atomic_load(&s->disk.flood);
    pthread_mutex_unlock(&s->disk.mu);
    struct statvfs v;
    if (statvfs(s->dir, &v) != 0)
        return FDS_EIO;
    u->total = (uint64_t)v.f_blocks * v.f_frsize;
    u->free = (uint64_t)v.f_bfree * v.f_frsize;
    u->available = (uint64_t)v.f_bavail * v.f_frsize;
    return 0;
}
