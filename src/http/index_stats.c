/*
 * index_stats.c: what the indices hold and do, as _stats and the _cat
 * tables over indices (_cat/indices, _cat/count, _cat/segments,
 * _cat/shards), and the cell formats those tables share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin_int.h"
#include "cat.h"
#include "fds_time.h"
#include "handlers.h"
#include "index_expr.h"
#include "node.h"
#include "request.h"
#include "response.h"
#include "search_stats.h"

#define NODE_NAME FDS__NODE_NAME

void fds__shards_ok(cJSON *j, int n)
{
    cJSON *s = cJSON_AddObjectToObject(j, "_shards");
    cJSON_AddNumberToObject(s, "total", n);
    cJSON_AddNumberToObject(s, "successful", n);
    cJSON_AddNumberToObject(s, "failed", 0);
}

/* An index's health on this one node: red when it failed to load, yellow
 * when it asks for replicas (no second node can hold them), else green
 * (closed or open).  Its unassigned shard copies go to *unassigned. */
const char *fds__index_health(fds_index *ix, unsigned *unassigned)
{
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    *unassigned = fds_index_nshards(ix) *
                  (fds_index_failure(ix) ? 1 + set.number_of_replicas
                                         : set.number_of_replicas);
    if (fds_index_failure(ix))
        return "red";
    /* a closed index keeps its shard (Elasticsearch 8 replicates closed
     * indices): its health is its copies' */
    return set.number_of_replicas ? "yellow" : "green";
}

static cJSON *store_stats_json(const fds_index_stats *st)
{
    cJSON *p = cJSON_CreateObject();
    cJSON *d = cJSON_AddObjectToObject(p, "docs");
    cJSON_AddNumberToObject(d, "count", (double)st->docs_count);
    cJSON_AddNumberToObject(d, "deleted", (double)st->docs_deleted);
    cJSON *s = cJSON_AddObjectToObject(p, "store");
    cJSON_AddNumberToObject(s, "size_in_bytes", (double)st->store_bytes);
    cJSON_AddNumberToObject(s, "total_data_set_size_in_bytes", (double)st->store_bytes);
    cJSON_AddNumberToObject(s, "reserved_in_bytes", 0);
    cJSON_AddNumberToObject(s, "stored_fields_in_bytes", (double)st->stored_fields_bytes);
    cJSON_AddNumberToObject(s, "postings_in_bytes", (double)st->postings_bytes);
    cJSON_AddNumberToObject(s, "other_in_bytes", (double)st->other_bytes);
    cJSON_AddNumberToObject(s, "source_uncompressed_in_bytes",
                            (double)st->raw_source_bytes);
    cJSON *sg = cJSON_AddObjectToObject(p, "segments");
    cJSON_AddNumberToObject(sg, "count", (double)st->segments);
    return p;
}

/* True when the comma-separated metric list `list` (NULL = every metric)
 * names `m` or `_all`. */
bool fds__metric_on(const char *list, const char *m)
{
    if (!list)
        return true;
    size_t ml = strlen(m);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if ((n == ml && !memcmp(p, m, n)) || (n == 4 && !memcmp(p, "_all", 4)))
            return true;
        p += n + (e ? 1 : 0);
    }
    return false;
}

/* The first name of `list` not in `known` (NULL-terminated), or NULL; its
 * length in *len. */
static const char *metric_unknown(const char *list, const char *const *known,
                                  size_t *len)
{
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        bool ok = n == 4 && !memcmp(p, "_all", 4);
        for (size_t i = 0; !ok && known[i]; i++)
            ok = strlen(known[i]) == n && !memcmp(p, known[i], n);
        if (!ok) {
            *len = n;
            return p;
        }
        p += n + (e ? 1 : 0);
    }
    return NULL;
}

/* Elasticsearch's 400 for a metric it does not know. */
bool fds__metrics_check(fds_req *r, fds_resp *o, const char *list,
                          const char *const *known)
{
    size_t n = 0;
    const char *bad = metric_unknown(list, known, &n);
    if (!bad)
        return true;
    char uri[FDS_REQ_PATH_MAX];
    fds__req_path(r, uri, sizeof uri);
    fds__resp_errorf(o, 400, "illegal_argument_exception",
                    "request [%s] contains unrecognized metric: [%.*s]", uri,
                    (int)n, bad);
    return false;
}

/* Index stats metrics Elasticsearch knows; those we keep no figures for
 * (indexing, get, merge, ...) give no section. */
const char *const FDS__INDEX_METRICS[] = {
    "completion", "docs", "fielddata", "flush", "get", "indexing", "merge",
    "query_cache", "refresh", "request_cache", "search", "segments", "store",
    "translog", "warmer", "bulk", "dense_vector", "sparse_vector", "mappings",
    "shard_stats", NULL};

/* One `primaries`/`total` object: the sections `metrics` asks for. */
cJSON *fds__index_stats_json(const fds_index_stats *st, const fds__search_sum *ss,
                               const char *metrics)
{
    cJSON *p = store_stats_json(st);
    static const char *const own[] = {"docs", "store", "segments"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (!fds__metric_on(metrics, own[i]))
            cJSON_DeleteItemFromObjectCaseSensitive(p, own[i]);
    if (fds__metric_on(metrics, "search"))
        cJSON_AddItemToObject(p, "search", fds__search_sum_json(ss));
    if (fds__metric_on(metrics, "fielddata")) { /* global ordinals' heap */
        cJSON *fd = cJSON_AddObjectToObject(p, "fielddata");
        cJSON_AddNumberToObject(fd, "memory_size_in_bytes", (double)st->fielddata_bytes);
        cJSON_AddNumberToObject(fd, "evictions", 0);
    }
    return p;
}

/* `acc` += `st`, field by field. */
static void index_stats_add(fds_index_stats *acc, const fds_index_stats *st)
{
    acc->docs_count += st->docs_count;
    acc->docs_deleted += st->docs_deleted;
    acc->buffered_docs += st->buffered_docs;
    acc->segments += st->segments;
    acc->store_bytes += st->store_bytes;
    acc->stored_fields_bytes += st->stored_fields_bytes;
    acc->postings_bytes += st->postings_bytes;
    acc->other_bytes += st->other_bytes;
    acc->raw_source_bytes += st->raw_source_bytes;
    acc->fielddata_bytes += st->fielddata_bytes;
}

/* GET /_stats[/{metric}] and /{index}/_stats[/{metric}]: the indices of
 * the expression (default every index; IndicesStatsRequest's options:
 * wildcards expand to open indices, none is no error), each with its
 * sections, and their sums under `_all`. */
void fds__h_stats(fds_req *r, fds_resp *o)
{
    bool every = !strcmp(r->seg[0], "_stats");
    const char *expr = every ? NULL : r->seg[0];
    const char *metrics = r->nseg == (every ? 2u : 3u) ? r->seg[r->nseg - 1] : NULL;
    if (!fds__metrics_check(r, o, metrics, FDS__INDEX_METRICS))
        return;
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = FDS_INDEX_EXPR_SEARCH_DEFAULTS;
    fds_index **ixs = NULL;
    size_t n = 0;
    if (fds_index_expr_opts_read(fds__admin_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, expr, &opts, &ixs, &n, &e))
        return fds__resp_error(o, &e);
    fds_index_stats sum = {0};
    fds__search_sum ssum = {0};
    unsigned shards = 0;
    for (size_t i = 0; i < n; i++)
        shards += fds_index_nshards(ixs[i]);
    cJSON *j = cJSON_CreateObject();
    fds__shards_ok(j, (int)shards);
    cJSON *all = cJSON_AddObjectToObject(j, "_all");
    cJSON *ind = cJSON_AddObjectToObject(j, "indices");
    for (size_t i = 0; i < n; i++) {
        fds_index *ix = ixs[i];
        fds_index_stats st;
        fds_index_stats_get(ix, &st);
        fds__search_sum ss = {0};
        fds__search_sum_add(&ss, fds_index_search_stats(ix));
        fds__search_sum_add(&ssum, fds_index_search_stats(ix));
        index_stats_add(&sum, &st);
        cJSON *x = cJSON_AddObjectToObject(ind, fds_index_name(ix));
        cJSON_AddStringToObject(x, "uuid", fds_index_uuid(ix));
        cJSON_AddStringToObject(x, "health", "green");
        cJSON_AddStringToObject(x, "status", fds_index_state(ix));
        cJSON_AddItemToObject(x, "primaries", fds__index_stats_json(&st, &ss, metrics));
        cJSON_AddItemToObject(x, "total", fds__index_stats_json(&st, &ss, metrics));
        fds_index_release(ix);
    }
    free(ixs);
    cJSON_AddItemToObject(all, "primaries", fds__index_stats_json(&sum, &ssum, metrics));
    cJSON_AddItemToObject(all, "total", fds__index_stats_json(&sum, &ssum, metrics));
    fds__resp_json(o, 200, j);
}

/* Elasticsearch's human sizes ("1.2mb"), or plain bytes with ?bytes=b. */
char *fds__human_bytes(fds_req *r, uint64_t b)
{
    char buf[32];
    const char *unit = fds__req_param(r, "bytes");
    if (unit && !strcmp(unit, "b"))
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)b);
    else if (unit && !strcmp(unit, "kb"))
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)(b / 1024));
    else if (b >= 1024ull * 1024 * 1024)
        snprintf(buf, sizeof buf, "%.1fgb", b / 1073741824.0);
    else if (b >= 1024ull * 1024)
        snprintf(buf, sizeof buf, "%.1fmb", b / 1048576.0);
    else if (b >= 1024)
        snprintf(buf, sizeof buf, "%.1fkb", b / 1024.0);
    else
        snprintf(buf, sizeof buf, "%llub", (unsigned long long)b);
    return strdup(buf);
}

char *fds__fmt_u64(uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return strdup(buf);
}

/* creation.date.string: ISO 8601 UTC with milliseconds. */
static char *iso_ms(int64_t ms)
{
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    int64_t rem = ms - days * 86400000, y;
    unsigned mo, d;
    fds_civil_from_days(days, &y, &mo, &d);
    char buf[40];
    snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y,
             mo, d, (int)(rem / 3600000), (int)(rem / 60000 % 60),
             (int)(rem / 1000 % 60), (int)(rem % 1000));
    return strdup(buf);
}

/* The indices of a _cat path's expression (/_cat/x/{expr}; default all),
 * open and closed, as cat's IndicesOptions expand them.  False with the
 * error answered in `o`. */
static bool cat_indices_of(fds_req *r, fds_resp *o, fds_index ***ixs, size_t *n)
{
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true,
                                .expand_closed = true};
    if (fds_index_expr_opts_read(fds__admin_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, r->nseg >= 3 ? r->seg[2] : NULL, &opts,
                               ixs, n, &e)) {
        fds__resp_error(o, &e);
        return false;
    }
    return true;
}

/* _cat/indices: Elasticsearch 8's default columns in its order and its
 * column aliases; creation dates, codec and segment count on ?h= only.
 * ?health= keeps the rows of one health; the index expression of the path
 * (default: all) expands to open and closed indices, as cat's does. */
void fds__h_cat_indices(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {
        "health|h", "status|s", "index|i|idx", "uuid|id",
        "pri|p|shards.primary|shardsPrimary", "rep|r|shards.replica|shardsReplica",
        "docs.count|dc|docsCount", "docs.deleted|dd|docsDeleted",
        "store.size|ss|storeSize", "pri.store.size", "dataset.size",
        "*creation.date|cd", "*creation.date.string|cds", "*codec",
        "*segments.count|sc|segmentsCount"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    const char *health = fds__req_param(r, "health");
    if (health && strcmp(health, "green") && strcmp(health, "yellow") &&
        strcmp(health, "red"))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "Invalid value [%s] for [health]: must be "
                               "green, yellow or red", health);
    fds_index **ixs = NULL;
    size_t n = 0;
    if (!cat_indices_of(r, o, &ixs, &n))
        return;
    char ***rows = calloc(n + 1, sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; rows && i < n; i++) {
        fds_index *ix = ixs[i];
        fds_index_stats st;
        fds_index_stats_get(ix, &st);
        fds_index_settings set;
        fds_index_get_settings(ix, &set);
        bool open = fds_index_is_open(ix);
        unsigned unassigned;
        const char *h = fds__index_health(ix, &unassigned);
        if (health && strcmp(health, h))
            continue;
        char **row = calloc(ncol, sizeof *row);
        if (!row)
            break;
        row[0] = strdup(h);
        row[1] = strdup(fds_index_state(ix));
        row[2] = strdup(fds_index_name(ix));
        row[3] = strdup(fds_index_uuid(ix));
        row[4] = fds__fmt_u64(fds_index_nshards(ix));
        row[5] = fds__fmt_u64(set.number_of_replicas);
        row[6] = open ? fds__fmt_u64(st.docs_count) : NULL;
        row[7] = open ? fds__fmt_u64(st.docs_deleted) : NULL;
        row[8] = open ? fds__human_bytes(r, st.store_bytes) : NULL;
        row[9] = open ? fds__human_bytes(r, st.store_bytes) : NULL;
        row[10] = open ? fds__human_bytes(r, st.store_bytes) : NULL;
        row[11] = fds__fmt_u64((uint64_t)fds_index_creation_ms(ix));
        row[12] = iso_ms(fds_index_creation_ms(ix));
        row[13] = strdup(fds_codec_name(set.codec.codec));
        row[14] = fds__fmt_u64(st.segments);
        rows[nr++] = row;
    }
    fds_index_expr_free(ixs, n);
    fds__cat_render(r, o, cols, ncol, rows, nr);
    fds__cat_rows_free(rows, nr, ncol);
}

/* The epoch and timestamp columns of _cat/count and _cat/health
 * (seconds; HH:MM:SS in UTC, as Elasticsearch prints them). */
void fds__cat_time(char **epoch, char **stamp)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char buf[16];
    strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    *epoch = fds__fmt_u64((uint64_t)now);
    *stamp = strdup(buf);
}

/* _cat/count: the count of a `_count` over the same index expression and
 * q= (RestCountAction under the cat table), so the two always agree --
 * hidden and closed indices included. */
void fds__h_cat_count(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {"epoch", "timestamp", "count"};
    static const char *const passed[] = {"q", "df", "default_operator",
                                         "ignore_unavailable", "allow_no_indices",
                                         "expand_wildcards"};
    const char *kv[2 * (sizeof passed / sizeof *passed)];
    unsigned nkv = 0;
    for (size_t i = 0; i < sizeof passed / sizeof *passed; i++) {
        const char *v = fds__req_param(r, passed[i]);
        if (v) {
            kv[2 * nkv] = passed[i];
            kv[2 * nkv++ + 1] = v;
        }
    }
    char count_seg[] = "_count";
    fds_req sub = {.store = r->store, .method = "GET", .url = r->url,
                   .body = "", .start_us = r->start_us, .kv = kv, .nkv = nkv};
    if (r->nseg == 3) {
        sub.seg[0] = r->seg[2];
        sub.seg[1] = count_seg;
        sub.nseg = 2;
    } else {
        sub.seg[0] = count_seg;
        sub.nseg = 1;
    }
    fds_resp c = {0};
    fds__h_search(&sub, &c, true);
    fds__req_sub_done(&sub);
    if (c.status != 200) /* its error, as _count answers it */
        return fds__resp_raw(o, c.status, c.body, c.len, c.content_type);
    cJSON *j = cJSON_ParseWithLength(c.body ? c.body : "", c.len);
    free(c.body);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "count");
    char *row[3];
    fds__cat_time(&row[0], &row[1]);
    row[2] = fds__fmt_u64(cJSON_IsNumber(n) ? (uint64_t)n->valuedouble : 0);
    cJSON_Delete(j);
    char **rows[1] = {row};
    fds__cat_render(r, o, cols, 3, rows, 1);
    for (int k = 0; k < 3; k++)
        free(row[k]);
}

void fds__h_cat_segments(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {"index", "shard", "prirep", "ip",
                                       "segment", "generation", "docs.count",
                                       "docs.deleted", "size", "committed",
                                       "searchable", "codec", "dict_id"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    char **names = NULL;
    size_t n = 0;
    fds_store_list_indices(r->store, &names, &n);
    char ***rows = NULL;
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        fds_index *ix;
        bool want = r->nseg < 3 || !strcmp(r->seg[2], names[i]);
        if (want && fds_store_get_index(r->store, names[i], &ix, NULL) == 0) {
            fds_segment_info *si = NULL;
            size_t ns = 0;
            if (fds_index_is_open(ix) && fds_index_segments(ix, &si, &ns) == 0) {
                char ***q = realloc(rows, (nr + ns + 1) * sizeof *rows);
                if (q) {
                    rows = q;
                    for (size_t k = 0; k < ns; k++) {
                        char **row = calloc(ncol, sizeof *row);
                        row[0] = strdup(names[i]);
                        row[1] = fds__fmt_u64(si[k].shard);
                        row[2] = strdup("p");
                        row[3] = strdup("127.0.0.1");
                        row[4] = strdup(si[k].name);
                        row[5] = fds__fmt_u64(si[k].generation);
                        row[6] = fds__fmt_u64(si[k].docs_count);
                        row[7] = fds__fmt_u64(si[k].docs_deleted);
                        row[8] = fds__human_bytes(r, si[k].size_bytes);
                        row[9] = strdup("true");
                        row[10] = strdup("true");
                        row[11] = strdup(fds_codec_name(si[k].codec));
                        row[12] = fds__fmt_u64(si[k].dict_id);
                        rows[nr++] = row;
                    }
                }
                free(si);
            }
            fds_index_release(ix);
        }
        free(names[i]);
    }
    free(names);
    fds__cat_render(r, o, cols, ncol, rows, nr);
    fds__cat_rows_free(rows, nr, ncol);
}

/* _cat/shards: one row per primary shard (index.number_of_shards of each
 * index of the path's expression, default all, open and closed), and for
 * each replica an UNASSIGNED row, as Elasticsearch lists a one-node
 * cluster's shards; docs and store of an open index's shard are its own
 * (fds_index_shard_stats_get). */
void fds__h_cat_shards(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {
        "index|i|idx", "shard|s|sh", "prirep|p|pr|primaryOrReplica",
        "state|st", "docs|d|dc", "store|sto", "dataset|ds", "ip", "id",
        "node|n", "*segments.count|sc|segmentsCount",
        "*unassigned.reason|ur", "*unassigned.details|ud"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    fds_index **ixs = NULL;
    size_t n = 0;
    if (!cat_indices_of(r, o, &ixs, &n))
        return;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        fds_index_settings set;
        fds_index_get_settings(ixs[i], &set);
        total += (size_t)fds_index_nshards(ixs[i]) * (1 + set.number_of_replicas);
    }
    char ***rows = calloc(total + 1, sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; rows && i < n; i++) {
        fds_index *ix = ixs[i];
        fds_index_settings set;
        fds_index_get_settings(ix, &set);
        bool open = fds_index_is_open(ix), failed = fds_index_failure(ix) != NULL;
        for (uint32_t sh = 0; sh < fds_index_nshards(ix); sh++) {
            fds_index_stats st;
            fds_index_shard_stats_get(ix, sh, &st);
            for (uint32_t c = 0; c <= set.number_of_replicas; c++) {
                char **row = calloc(ncol, sizeof *row);
                if (!row)
                    break;
                bool assigned = c == 0 && !failed;
                row[0] = strdup(fds_index_name(ix));
                row[1] = fds__fmt_u64(sh);
                row[2] = strdup(c ? "r" : "p");
                row[3] = strdup(assigned ? "STARTED" : "UNASSIGNED");
                row[4] = assigned && open ? fds__fmt_u64(st.docs_count) : NULL;
                row[5] = assigned && open ? fds__human_bytes(r, st.store_bytes) : NULL;
                row[6] = assigned && open ? fds__human_bytes(r, st.store_bytes) : NULL;
                row[7] = assigned ? strdup("127.0.0.1") : NULL;
                row[8] = assigned ? strdup(FDS__NODE_ID) : NULL;
                row[9] = assigned ? strdup(NODE_NAME) : NULL;
                row[10] = assigned && open ? fds__fmt_u64(st.segments) : NULL;
                row[11] = assigned ? NULL
                                   : strdup(failed ? "ALLOCATION_FAILED"
                                                   : "INDEX_CREATED");
                /* why the primary failed: the damaged file, relative */
                row[12] = failed && c == 0 ? strdup(fds_index_failure(ix)) : NULL;
                rows[nr++] = row;
            }
        }
    }
    fds_index_expr_free(ixs, n);
    fds__cat_render(r, o, cols, ncol, rows, nr);
    fds__cat_rows_free(rows, nr, ncol);
}
