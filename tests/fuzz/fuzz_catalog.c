/*
 * fuzz_catalog: fuzz target for the catalogue rows the store decodes when
 * it opens (src/store/catalog_rows.c, dict.c, buffer.c): a segment's
 * live-docs bitset, the mapping JSON, the settings rows, a dictionary blob
 * and a translog batch's records.
 *
 * At start a template store is built once in a temporary folder: index
 * "logs" (ZSTD with a trained dictionary), 600 real documents from the
 * bundled sample in two segments, 37 of them deleted (so the first segment
 * has a live-docs row), then a batch of 20 more and a delete left in the
 * translog (one translog_batches row).  Each input replaces one kind of row in a copy of
 * the catalogue (the segment files are hard links), then the store is
 * opened and the index searched, its docs fetched and got by id, and
 * closed.  Input: byte 0 selects the row (value % 5), the rest is the row:
 *   0  live docs: 4 bytes little-endian del_count, then the bitset blob
 *   1  mapping JSON
 *   2  settings: "key=value" lines
 *   3  dictionary: 4 bytes little-endian raw_len, then the zstd blob
 *   4  translog batch: its records (buffer.c's layout)
 * The replaced rows' checksums are recomputed (fds__cat_rechecksum), so the
 * decoders behind the row checksums are reached; with bit 7 of byte 0 set
 * they are left stale, which must mark the index failed.
 * Opening may fail or mark the index failed; nothing may crash, leak or
 * read out of bounds.  With FDS_FUZZ_CATALOG_SEEDS=DIR set, the template's
 * own rows are written to DIR as seeds (tests/fuzz/corpus/fuzz_catalog).
 */
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "logparse.h"
#include "query.h"
#include "ast/search_request.h"
#include "store.h"
#include "fuzz_driver.h"

#define CAT_DOCS 600          /* docs of the template index */
#define CAT_SEGMENT_DOCS 300  /* docs per template segment */
#define CAT_DELETE_EVERY 8    /* every 8th doc of segment 1 is deleted */
#define CAT_TRANSLOG_DOCS 20  /* docs left in the translog, then a delete */
#define CAT_DICT_SIZE "4kb"   /* a small dictionary keeps its seed small */
#define CAT_PATH_MAX 4096
#define CAT_STALE_CRC 0x80   /* byte 0 bit: keep the rows' old checksums */

enum { ROW_LIVE, ROW_MAPPING, ROW_SETTINGS, ROW_DICT, ROW_TRANSLOG, ROW_KINDS };

#define CAT_TMP_MAX 256       /* the template folder name, bytes */
static char g_tmpl[CAT_TMP_MAX], g_work[CAT_TMP_MAX + 8], g_uuid[64];

static void die(const char *what, const fds_err *e)
{
    fprintf(stderr, "fuzz_catalog: %s: %s\n", what, e ? e->reason : "");
    abort();
}

/* The document of log line `line` (the `seq`-th): malloc'd JSON of *len
 * bytes, or NULL for a line that does not parse (fds_logparse). */
static char *line_doc(const char *line, uint32_t seq, size_t *len)
{
    fds_logrec rec;
    if (fds_logparse_line(line, strcspn(line, "\n"), &rec, NULL, NULL))
        return NULL;
    fds_logparse_derive(&rec, FDS_LOGPARSE_HOST_DEFAULT, 1, seq);
    size_t cap = fds_logparse_json_bound(&rec);
    char *src = malloc(cap);
    *len = 0;
    if (!src || fds_logparse_json(&rec, src, cap, len))
        die("format", NULL);
    return src;
}

/* The first CAT_DOCS lines of the sample as documents (fds_logparse). */
static void put_docs(fds_index *ix)
{
    FILE *f = fopen(FDS_FUZZ_DATASET, "r");
    if (!f)
        die("cannot read " FDS_FUZZ_DATASET, NULL);
    char line[8192];
    fds_write_op ops[CAT_SEGMENT_DOCS];
    static fds_write_result res[CAT_SEGMENT_DOCS];
    char ids[CAT_SEGMENT_DOCS][16];
    char *srcs[CAT_SEGMENT_DOCS];
    fds_err e;
    uint32_t n = 0, total = 0;
    while (total < CAT_DOCS && fgets(line, sizeof line, f)) {
        size_t sl;
        if (!(srcs[n] = line_doc(line, total, &sl)))
            continue;
        snprintf(ids[n], sizeof ids[n], "%u", total);
        ops[n] = (fds_write_op){.type = FDS_OP_INDEX, .id = ids[n],
                                .id_len = strlen(ids[n]),
                                .src = (const uint8_t *)srcs[n], .src_len = sl};
        n++, total++;
        if (n == CAT_SEGMENT_DOCS || total == CAT_DOCS) {
            fds_err_clear(&e);
            if (fds_index_write(ix, ops, n, res, true, &e))
                die("write", &e);
            for (uint32_t i = 0; i < n; i++)
                free(srcs[i]);
            n = 0;
        }
    }
    for (uint32_t d = 0; d < CAT_SEGMENT_DOCS; d += CAT_DELETE_EVERY) {
        char id[16];
        snprintf(id, sizeof id, "%u", d);
        fds_write_op del = {.type = FDS_OP_DELETE, .id = id, .id_len = strlen(id)};
        fds_err_clear(&e);
        if (fds_index_write(ix, &del, 1, res, false, &e))
            die("delete", &e);
    }
    fds_err_clear(&e);
    if (fds_index_refresh(ix, &e))
        die("refresh", &e);
    /* one batch left in the translog: copies of the first documents under
     * new ids, one with a routing, and a delete */
    if (fseek(f, 0, SEEK_SET))
        die("rewind " FDS_FUZZ_DATASET, NULL);
    static char tids[CAT_TRANSLOG_DOCS][16];
    for (n = 0; n < CAT_TRANSLOG_DOCS && fgets(line, sizeof line, f);) {
        size_t sl;
        if (!(srcs[n] = line_doc(line, n, &sl)))
            continue;
        snprintf(tids[n], sizeof tids[n], "t%u", n);
        ops[n] = (fds_write_op){.type = FDS_OP_INDEX, .id = tids[n],
                                .id_len = strlen(tids[n]),
                                .src = (const uint8_t *)srcs[n], .src_len = sl};
        if (n == 1)
            ops[n].routing = "r1", ops[n].routing_len = 2;
        n++;
    }
    uint32_t nw = n;
    ops[n++] = (fds_write_op){.type = FDS_OP_DELETE, .id = "9", .id_len = 1};
    fds_err_clear(&e);
    if (fds_index_write(ix, ops, n, res, false, &e))
        die("translog batch", &e);
    for (uint32_t i = 0; i < nw; i++)
        free(srcs[i]);
    fclose(f);
}

static void build_template(void)
{
    snprintf(g_tmpl, sizeof g_tmpl, "/tmp/fds-fuzzcat-%d-XXXXXX", (int)getpid());
    if (!mkdtemp(g_tmpl))
        die("mkdtemp", NULL);
    snprintf(g_work, sizeof g_work, "%s/work", g_tmpl);
    char dir[CAT_PATH_MAX];
    snprintf(dir, sizeof dir, "%s/tmpl", g_tmpl);
    fds_store *s;
    fds_err e;
    fds_err_clear(&e);
    if (fds_store_open(dir, &s, &e))
        die("open template", &e);
    fds_index_settings set;
    fds_index_settings_default(&set);
    fds_settings_set(&set, "index.codec", "ZSTD", NULL);
    fds_settings_set(&set, "index.refresh_interval", "-1", NULL);
    fds_settings_set(&set, "index.translog.durability", "async", NULL);
    fds_settings_set(&set, "index.codec.dict_size", CAT_DICT_SIZE, NULL);
    fds_index *ix = NULL;
    if (fds_store_create_index(s, "logs", &set, NULL, &e) ||
        fds_store_get_index(s, "logs", &ix, &e))
        die("create index", &e);
    put_docs(ix);
    snprintf(g_uuid, sizeof g_uuid, "%s", fds_index_uuid(ix));
    fds_index_release(ix);
    fds_store_close(s);
}

/* Remove the files of `dir` and its subfolders, then `dir` itself. */
static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    char path[CAT_PATH_MAX + 256];
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat sb;
        if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            rm_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        return; /* an absent -wal file */
    FILE *out = fopen(to, "wb");
    if (!out)
        die(to, NULL);
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)))
        fwrite(buf, 1, n, out);
    fclose(in);
    fclose(out);
}

/* A fresh work copy: the catalogue copied, segment files hard-linked. */
static void make_work(void)
{
    char from[CAT_PATH_MAX + 256], to[CAT_PATH_MAX + 256];
    rm_tree(g_work);
    snprintf(to, sizeof to, "%s/indices", g_work);
    if (mkdir(g_work, 0700) || mkdir(to, 0700))
        die("mkdir", NULL);
    snprintf(to, sizeof to, "%s/indices/%s", g_work, g_uuid);
    if (mkdir(to, 0700))
        die("mkdir", NULL);
    static const char *const cat[] = {"catalog.sqlite", "catalog.sqlite-wal"};
    for (int i = 0; i < 2; i++) {
        snprintf(from, sizeof from, "%s/tmpl/%s", g_tmpl, cat[i]);
        snprintf(to, sizeof to, "%s/%s", g_work, cat[i]);
        copy_file(from, to);
    }
    snprintf(from, sizeof from, "%s/tmpl/indices/%s", g_tmpl, g_uuid);
    DIR *d = opendir(from);
    if (!d)
        die(from, NULL);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(from, sizeof from, "%s/tmpl/indices/%s/%s", g_tmpl, g_uuid,
                 de->d_name);
        snprintf(to, sizeof to, "%s/indices/%s/%s", g_work, g_uuid, de->d_name);
        if (link(from, to))
            die(to, NULL);
    }
    closedir(d);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void exec_sql(sqlite3 *db, const char *sql, const void *blob, size_t n,
                     int is_text, int64_t num)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        die(sqlite3_errmsg(db), NULL);
    if (sqlite3_bind_parameter_count(st) >= 1) {
        if (is_text)
            sqlite3_bind_text(st, 1, blob, (int)n, SQLITE_TRANSIENT);
        else
            sqlite3_bind_blob(st, 1, n ? blob : "", (int)n, SQLITE_TRANSIENT);
    }
    if (sqlite3_bind_parameter_count(st) >= 2)
        sqlite3_bind_int64(st, 2, num);
    if (sqlite3_step(st) != SQLITE_DONE)
        die(sqlite3_errmsg(db), NULL);
    sqlite3_finalize(st);
}

/* Replace the rows the input names in the work catalogue. */
static void write_rows(const uint8_t *data, size_t size)
{
    char path[CAT_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/catalog.sqlite", g_work);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        die("sqlite3_open", NULL);
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] % ROW_KINDS) {
    case ROW_LIVE:
        if (n < 4)
            break;
        exec_sql(db, "UPDATE segments SET live=?1, del_count=?2 WHERE gen="
                     "(SELECT min(gen) FROM segments)", p + 4, n - 4, 0, le32(p));
        break;
    case ROW_MAPPING:
        exec_sql(db, "UPDATE mappings SET json=?1", p, n, 1, 0);
        break;
    case ROW_SETTINGS: {
        exec_sql(db, "DELETE FROM settings", NULL, 0, 0, 0);
        const uint8_t *end = p + n;
        while (p < end) {
            const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
            const uint8_t *le = nl ? nl : end;
            const uint8_t *eq = memchr(p, '=', (size_t)(le - p));
            if (eq) {
                sqlite3_stmt *st;
                sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO settings "
                                       "VALUES(1,?1,?2)", -1, &st, NULL);
                sqlite3_bind_text(st, 1, (const char *)p, (int)(eq - p),
                                  SQLITE_TRANSIENT);
                sqlite3_bind_text(st, 2, (const char *)eq + 1,
                                  (int)(le - eq - 1), SQLITE_TRANSIENT);
                sqlite3_step(st);
                sqlite3_finalize(st);
            }
            p = le + 1;
        }
        break;
    }
    case ROW_DICT:
        if (n < 4)
            break;
        exec_sql(db, "UPDATE dictionaries SET bytes=?1, raw_len=?2",
                 p + 4, n - 4, 0, le32(p));
        break;
    default:
        exec_sql(db, "UPDATE translog_batches SET ops=?1", p, n, 0, 0);
        break;
    }
    if (!(data[0] & CAT_STALE_CRC)) {
        static const char *const table[ROW_KINDS] = {
            "segments", "mappings", "settings", "dictionaries",
            "translog_batches"};
        fds_err e;
        fds_err_clear(&e);
        if (fds__cat_rechecksum(db, table[data[0] % ROW_KINDS], NULL, &e))
            die("fds__cat_rechecksum", &e);
    }
    sqlite3_close(db);
}

/* Open the work store and read everything the index holds. */
static void use_store(void)
{
    fds_store *s;
    fds_err e;
    fds_err_clear(&e);
    if (fds_store_open(g_work, &s, &e))
        return;
    fds_index *ix = NULL;
    if (fds_store_get_index(s, "logs", &ix, &e) == 0) {
        fds_index_stats st;
        fds_index_stats_get(ix, &st);
        fds_index_view *v = NULL;
        fds_search_request *req = NULL;
        static const char q[] = "{\"query\":{\"match\":{\"url\":\"image\"}},"
                                "\"size\":20,\"sort\":[{\"status\":\"desc\"}]}";
        fds_err_clear(&e);
        if (fds_index_view_acquire(ix, &v, &e) == 0 &&
            fds_search_parse(q, sizeof q - 1, fds_index_mapping(ix), 0, &req,
                             &e) == 0) {
            unsigned nseg = 0;
            const fds_search_segment *segs = fds_index_view_segments(v, &nseg);
            fds_search_result res;
            if (fds_search_execute(req, segs, nseg, &res, &e) == 0) {
                const uint8_t *src[20];
                size_t len[20];
                fds_index_view_fetch(v, res.hits, res.nhits, src, len, &e);
                fds_search_result_free(&res);
            }
        }
        fds_search_request_free(req);
        fds_index_view_release(v);
        for (unsigned d = 0; d < CAT_DOCS + 97; d += 97) {
            char id[16];
            fds_doc doc;
            if (d < CAT_DOCS)
                snprintf(id, sizeof id, "%u", d);
            else /* one the translog holds */
                snprintf(id, sizeof id, "t1");
            if (fds_index_get(ix, id, strlen(id), &doc, &e) == 0)
                free(doc.src);
        }
        fds_index_release(ix);
    }
    fds_store_close(s);
}

/* Write the template's rows as seeds into `dir`. */
static void write_seeds(const char *dir)
{
    char path[CAT_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/tmpl/catalog.sqlite", g_tmpl);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        die("sqlite3_open", NULL);
    static const char *const sql[ROW_KINDS] = {
        "SELECT del_count, live FROM segments WHERE live IS NOT NULL",
        "SELECT 0, json FROM mappings",
        "SELECT 0, group_concat(key || '=' || value, char(10)) FROM settings",
        "SELECT raw_len, bytes FROM dictionaries",
        "SELECT 0, ops FROM translog_batches"};
    static const char *const name[ROW_KINDS] = {"live", "mapping", "settings",
                                                "dict", "translog"};
    for (int k = 0; k < ROW_KINDS; k++) {
        sqlite3_stmt *st;
        sqlite3_prepare_v2(db, sql[k], -1, &st, NULL);
        for (int i = 0; sqlite3_step(st) == SQLITE_ROW; i++) {
            snprintf(path, sizeof path, "%s/%s-%d", dir, name[k], i);
            FILE *f = fopen(path, "wb");
            if (!f)
                die(path, NULL);
            uint32_t num = (uint32_t)sqlite3_column_int64(st, 0);
            uint8_t head[5] = {(uint8_t)k, (uint8_t)num, (uint8_t)(num >> 8),
                               (uint8_t)(num >> 16), (uint8_t)(num >> 24)};
            /* mapping, settings and translog rows have no number in front */
            fwrite(head, 1, k == ROW_LIVE || k == ROW_DICT ? 5 : 1, f);
            fwrite(sqlite3_column_blob(st, 1), 1,
                   (size_t)sqlite3_column_bytes(st, 1), f);
            fclose(f);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

static void cleanup(void)
{
    rm_tree(g_tmpl);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    build_template();
    atexit(cleanup);
    const char *seeds = getenv("FDS_FUZZ_CATALOG_SEEDS");
    if (seeds)
        write_seeds(seeds);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    make_work();
    write_rows(data, size);
    use_store();
    return 0;
}
