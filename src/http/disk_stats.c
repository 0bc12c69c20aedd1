/*
 * disk_stats.c: the node's disk use as Elasticsearch reports it:
 * `GET /_cat/allocation[/{node_id}]` (RestAllocationAction: shards,
 * disk.indices, disk.used, disk.avail, disk.total, disk.percent, host, ip,
 * node, and an UNASSIGNED row counting the shard copies no node holds)
 * and the "fs" section of `GET /_nodes/stats` (FsInfo: total and one data
 * path with its mount and file-system type).  The sizes are a fresh
 * statvfs(2) of the data directory (fds_store_disk_usage): disk.used is
 * total minus available, as Elasticsearch's DiskUsage counts it, so
 * disk.percent is the figure the disk watermarks compare.
 */
#include <cJSON.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin_int.h"
#include "cat.h"
#include "disk.h"
#include "handlers.h"
#include "node.h"

/* The mount holding `path`: the longest mount point that is a prefix of
 * it, as "dir (device)" (Java's FileStore.toString) and its type. */
static void mount_of(const char *path, char *mount, size_t mcap, char *type,
                     size_t tcap)
{
    snprintf(mount, mcap, "%s", "");
    snprintf(type, tcap, "%s", "");
    FILE *f = setmntent("/proc/self/mounts", "r");
    if (!f)
        return;
    size_t best = 0;
    struct mntent *m;
    while ((m = getmntent(f))) {
        size_t n = strlen(m->mnt_dir);
        bool prefix = !strncmp(path, m->mnt_dir, n) &&
                      (path[n] == '/' || path[n] == 0 || n == 1);
        if (prefix && n >= best) {
            best = n;
            snprintf(mount, mcap, "%s (%s)", m->mnt_dir, m->mnt_fsname);
            snprintf(type, tcap, "%s", m->mnt_type);
        }
    }
    endmntent(f);
}

static void sizes(cJSON *o, const fds_disk_usage *u)
{
    cJSON_AddNumberToObject(o, "total_in_bytes", (double)u->total);
    cJSON_AddNumberToObject(o, "free_in_bytes", (double)u->free);
    cJSON_AddNumberToObject(o, "available_in_bytes", (double)u->available);
}

cJSON *fds__node_fs_json(fds_store *store)
{
    fds_disk_usage u;
    fds_store_disk_usage(store, &u);
    char mount[1024], type[64];
    mount_of(u.path, mount, sizeof mount, type, sizeof type);
    cJSON *fs = cJSON_CreateObject();
    cJSON_AddNumberToObject(fs, "timestamp", (double)time(NULL) * 1000);
    sizes(cJSON_AddObjectToObject(fs, "total"), &u);
    cJSON *data = cJSON_AddArrayToObject(fs, "data");
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "path", u.path);
    cJSON_AddStringToObject(d, "mount", mount);
    cJSON_AddStringToObject(d, "type", type);
    sizes(d, &u);
    cJSON_AddItemToArray(data, d);
    cJSON_AddObjectToObject(fs, "io_stats");
    return fs;
}

/* Shard copies held by the node and unassigned, and the bytes of every
 * index's files. */
static void shard_counts(fds_store *store, uint64_t *held, uint64_t *unassigned,
                         uint64_t *bytes)
{
    *held = *unassigned = *bytes = 0;
    char **names = NULL;
    size_t n = 0;
    fds_store_list_indices(store, &names, &n);
    for (size_t i = 0; i < n; i++) {
        fds_index *ix;
        if (fds_store_get_index(store, names[i], &ix, NULL) == 0) {
            unsigned un = 0;
            fds__index_health(ix, &un);
            fds_index_settings set;
            fds_index_get_settings(ix, &set);
            uint64_t copies = (uint64_t)fds_index_nshards(ix) * (1 + set.number_of_replicas);
            *unassigned += un;
            *held += copies > un ? copies - un : 0;
            fds_index_stats st;
            fds_index_stats_get(ix, &st);
            *bytes += st.store_bytes;
            fds_index_release(ix);
        }
        free(names[i]);
    }
    free(names);
}

void fds__h_cat_allocation(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {
        "shards|s", "disk.indices|di|diskIndices", "disk.used|du|diskUsed",
        "disk.avail|da|diskAvail", "disk.total|dt|diskTotal",
        "disk.percent|dp|diskPercent", "host|h", "ip", "node|n"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    /* /_cat/allocation/{node_id}: this node by id, name, _local, _all,
     * _master or a wildcard; another id lists no node */
    const char *want = r->nseg > 2 ? r->seg[2] : "_all";
    bool mine = false;
    char *ids = strdup(want), *save = NULL;
    for (char *t = ids ? strtok_r(ids, ",", &save) : NULL; t && !mine;
         t = strtok_r(NULL, ",", &save))
        mine = !strcmp(t, "_all") || !strcmp(t, "_local") || !strcmp(t, "_master") ||
               !strcmp(t, "*") || !strcmp(t, FDS__NODE_ID) || !strcmp(t, FDS__NODE_NAME);
    free(ids);
    uint64_t held, unassigned, bytes;
    shard_counts(r->store, &held, &unassigned, &bytes);
    fds_disk_usage u;
    bool known = fds_store_disk_usage(r->store, &u) == 0;
    char **row = calloc(ncol, sizeof *row), **un = calloc(ncol, sizeof *un);
    char ***rows = calloc(2, sizeof *rows);
    size_t nr = 0;
    if (row && rows && mine) {
        uint64_t used = u.total - u.available;
        row[0] = fds__fmt_u64(held);
        row[1] = fds__human_bytes(r, bytes);
        row[2] = known ? fds__human_bytes(r, used) : NULL;
        row[3] = known ? fds__human_bytes(r, u.available) : NULL;
        row[4] = known ? fds__human_bytes(r, u.total) : NULL;
        row[5] = known && u.total ? fds__fmt_u64(used * 100 / u.total) : NULL;
        row[6] = strdup("127.0.0.1");
        row[7] = strdup("127.0.0.1");
        row[8] = strdup(FDS__NODE_NAME);
        rows[nr++] = row;
        row = NULL;
    }
    if (un && rows && unassigned) {
        un[0] = fds__fmt_u64(unassigned);
        un[8] = strdup("UNASSIGNED");
        rows[nr++] = un;
        un = NULL;
    }
    free(row);
    free(un);
    fds__cat_render(r, o, cols, ncol, rows, nr);
    fds__cat_rows_free(rows, nr, ncol);
}
