/*
 * admin_int.h: what the index and cluster administration files of
 * src/http share (index_lifecycle.c, index_settings.c, index_stats.c,
 * cluster.c, disk_stats.c): answers, settings and stats as JSON, and the cells of the
 * _cat tables.
 * Each group names the file that defines it.
 */
#ifndef FDS_ADMIN_INT_H
#define FDS_ADMIN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "request.h"
#include "response.h"
#include "search_stats.h"

/* A request parameter by name, for the callbacks of index_expr.h. */
static inline const char *fds__admin_param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}

/* ---- index_settings.c ----------------------------------------------------- */

/* {"acknowledged":true}, and with `index` also "shards_acknowledged" and
 * "index". */
void fds__acknowledged(fds_resp *o, const char *index);
/* The settings of `ix`: those set (`defaults_part` false, with the
 * informational uuid, creation date and name) or those left at their
 * default (true); nested objects, or `flat` dotted keys.  Caller frees. */
cJSON *fds__settings_json(fds_index *ix, bool defaults_part, bool flat);

/* ---- index_stats.c -------------------------------------------------------- */

/* "_shards": n total, n successful, 0 failed, into `j`. */
void fds__shards_ok(cJSON *j, int n);
/* Index stats metrics Elasticsearch knows, NULL-terminated. */
extern const char *const FDS__INDEX_METRICS[];
/* True when the comma-separated metric list `list` (NULL = every metric)
 * names `m` or _all. */
bool fds__metric_on(const char *list, const char *m);
/* Elasticsearch's 400 for a metric of `list` not in `known`
 * (NULL-terminated): false when it answered. */
bool fds__metrics_check(fds_req *r, fds_resp *o, const char *list,
                        const char *const *known);
/* One `primaries`/`total` object: the sections `metrics` asks for. */
cJSON *fds__index_stats_json(const fds_index_stats *st, const fds__search_sum *ss,
                             const char *metrics);
/* Cell texts (malloc'd, NULL on no memory): a number; the epoch seconds
 * and HH:MM:SS of now. */
char *fds__fmt_u64(uint64_t v);
/* Elasticsearch's human sizes ("1.2mb"), or plain bytes with ?bytes=b
 * (kb with ?bytes=kb). */
char *fds__human_bytes(fds_req *r, uint64_t b);
void fds__cat_time(char **epoch, char **stamp);
/* An index's health on this one node ("green", "yellow", "red"), and its
 * unassigned shard copies into *unassigned. */
const char *fds__index_health(fds_index *ix, unsigned *unassigned);

/* ---- disk_stats.c --------------------------------------------------------- */

/* A node's "fs" stats (Elasticsearch's FsInfo): timestamp, total
 * {total,free,available}_in_bytes and data[] with the data directory's
 * path, mount, type and the same sizes.  Caller frees. */
cJSON *fds__node_fs_json(fds_store *store);

#endif
