/*
 * test_store.c: unit tests of src/store: settings syntax and kinds, the
 * write buffer and translog replay across a reopen, refresh, deletes and
 * replacements, merges (block copy and re-encode), orphan removal, a
 * damaged segment file, a catalogue that cannot be read, row checksums and
 * the schema-1 migration, merges published in one step, _forcemerge after
 * an emptied segment, a wrapping block offset, deletes of missing ids,
 * re-encoding of incomplete blocks, the free-space floor, searches
 * that run while a write holds the write path, and the background
 * threads' lower priority.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <sqlite3.h>

#include "catalog.h"
#include "query.h"
#include "ast/search_request.h"
#include "fds_test.h"
#include "store.h"
#include "store_int.h" /* the catalogue connection, for SQLITE_FULL */


static char tmpl[] = "/tmp/fds-store-test-XXXXXX";
static const char *dir;

static void test_settings(void)
{
    fds_index_settings s;
    fds_index_settings_default(&s);
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(s.codec.codec, FDS_CODEC_LZ4);
    REQUIRE_EQ(fds_settings_set(&s, "index.codec", "ZSTD", &e), 0);
    REQUIRE_EQ(s.codec.codec, FDS_CODEC_ZSTD);
    REQUIRE_EQ(fds_settings_set(&s, "index.codec.block_size", "32kb", &e), 0);
    REQUIRE_EQ(s.codec.block_size, 32768u);
    REQUIRE_EQ(fds_settings_set(&s, "index.refresh_interval", "250ms", &e), 0);
    REQUIRE_EQ(s.refresh_interval_ms, 250);
    REQUIRE_EQ(fds_settings_set(&s, "index.refresh_interval", "-1", &e), 0);
    REQUIRE_EQ(s.refresh_interval_ms, -1);
    REQUIRE_EQ(fds_settings_set(&s, "index.codec.compression_level", "19", &e), 0);
    REQUIRE_EQ(s.codec.level, 19);
    REQUIRE_EQ(fds_settings_set(&s, "index.compression.zstd.level", "20", &e), FDS_EINVAL);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_settings_set(&s, "index.codec", "snappy", &e), FDS_EINVAL);
    REQUIRE(strstr(e.reason, "snappy") != NULL);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_settings_set(&s, "index.nope", "1", &e), FDS_EINVAL);
    REQUIRE(strstr(e.reason, "unknown setting [index.nope]") != NULL);
    REQUIRE_EQ(fds_setting_kind_of("index.codec"), FDS_SETTING_STATIC);
    REQUIRE_EQ(fds_setting_kind_of("index.number_of_shards"), FDS_SETTING_FINAL);
    REQUIRE_EQ(fds_setting_kind_of("index.refresh_interval"), FDS_SETTING_DYNAMIC);
    /* every setting written as text reads back the same */
    fds_setting_kv kv[FDS_SETTINGS_MAX];
    size_t n = fds_settings_to_kv(&s, kv, FDS_SETTINGS_MAX);
    fds_index_settings t;
    fds_index_settings_default(&t);
    for (size_t i = 0; i < n; i++)
        REQUIRE_EQ(fds_settings_set(&t, kv[i].key, kv[i].value, &e), 0);
    REQUIRE(memcmp(&s, &t, sizeof s) == 0);
}

static char *doc_json(int i)
{
    char *b = malloc(256);
    snprintf(b, 256, "{\"n\":%d,\"method\":\"%s\",\"url\":\"/p/%d\",\"status\":%d}",
             i, i % 10 ? "GET" : "POST", i % 97, i % 7 ? 200 : 404);
    return b;
}

static int put_docs(fds_index *ix, int from, int to, bool refresh)
{
    int n = to - from;
    fds_write_op *ops = calloc((size_t)n, sizeof *ops);
    fds_write_result *res = calloc((size_t)n, sizeof *res);
    char **ids = calloc((size_t)n, sizeof *ids), **srcs = calloc((size_t)n, sizeof *srcs);
    for (int i = 0; i < n; i++) {
        ids[i] = malloc(16);
        snprintf(ids[i], 16, "%d", from + i);
        srcs[i] = doc_json(from + i);
        ops[i] = (fds_write_op){.type = FDS_OP_INDEX, .id = ids[i], .id_len = strlen(ids[i]),
                                .src = (const uint8_t *)srcs[i], .src_len = strlen(srcs[i])};
    }
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_index_write(ix, ops, (size_t)n, res, refresh, &e);
    for (int i = 0; i < n; i++) {
        if (res[i].code)
            rc = res[i].code;
        free(ids[i]);
        free(srcs[i]);
    }
    free(ids);
    free(srcs);
    free(ops);
    free(res);
    return rc;
}

static bool doc_is(fds_index *ix, int i)
{
    char id[16];
    snprintf(id, sizeof id, "%d", i);
    fds_doc d;
    if (fds_index_get(ix, id, strlen(id), &d, NULL))
        return false;
    char *want = doc_json(i);
    bool ok = d.src_len == strlen(want) && !memcmp(d.src, want, d.src_len);
    free(want);
    free(d.src);
    return ok;
}

/* A fresh store in dir/`sub` (the path written to data, 1024 bytes) with
 * index `name` of default settings plus `key` = `value` (key may be NULL);
 * on success *s and *ix are open (release and close them).  Returns 0 or
 * the FDS_E* code of the step that failed. */
static int store_with_index(const char *sub, char *data, const char *name,
                            const char *key, const char *value,
                            fds_store **s, fds_index **ix)
{
    snprintf(data, 1024, "%.900s/%s", dir, sub);
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_store_open(data, s, &e);
    if (rc)
        return rc;
    fds_index_settings set;
    fds_index_settings_default(&set);
    if (key)
        rc = fds_settings_set(&set, key, value, &e);
    if (!rc)
        rc = fds_store_create_index(*s, name, &set, NULL, &e);
    if (!rc)
        rc = fds_store_get_index(*s, name, ix, NULL);
    if (rc) {
        fds_store_close(*s);
        *s = NULL;
    }
    return rc;
}

/* Open the store in `data` again and get index `name`.  Returns 0 or the
 * FDS_E* code (then *s is closed). */
static int reopen(const char *data, const char *name, fds_store **s,
                  fds_index **ix)
{
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_store_open(data, s, &e);
    if (!rc && (rc = fds_store_get_index(*s, name, ix, NULL))) {
        fds_store_close(*s);
        *s = NULL;
    }
    return rc;
}

/* Files in `path` (a folder), or -1 when it does not exist. */
static int count_files(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The catalogue of the (closed) store in `data`, its path written to
 * path[4096]; NULL when SQLite cannot open it. */
static sqlite3 *cat_open(const char *data, char *path)
{
    snprintf(path, 4096, "%s/catalog.sqlite", data);
    sqlite3 *db;
    if (sqlite3_open(path, &db) == SQLITE_OK)
        return db;
    sqlite3_close(db);
    return NULL;
}

/* XOR the b-tree page-type byte of `table`'s root page in the catalogue of
 * `data` with 0xFF (twice restores it): every read of that table then ends
 * in SQLITE_CORRUPT, as a bad sector would.  Returns 0 or -1. */
static int damage_table(const char *data, const char *table)
{
    char path[4096];
    sqlite3 *db = cat_open(data, path);
    if (!db)
        return -1;
    sqlite3_stmt *st;
    long root = -1, psize = -1;
    if (sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE "
                               "type='table' AND name=?", -1, &st, NULL) == 0) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            root = (long)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) == 0) {
        if (sqlite3_step(st) == SQLITE_ROW)
            psize = (long)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db); /* the last connection: the WAL is checkpointed */
    FILE *f = root > 1 && psize > 0 ? fopen(path, "r+b") : NULL;
    if (!f)
        return -1;
    fseek(f, (root - 1) * psize, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, (root - 1) * psize, SEEK_SET);
    fputc(ch ^ 0xFF, f);
    fclose(f);
    return 0;
}

/* A row loop that fails half-way reports the failure, not the end of the
 * table. */
static void test_row_loop_error(void)
{
    sqlite3 *db;
    REQUIRE_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
    sqlite3_stmt *st;
    fds_err e;
    fds_err_clear(&e);
    /* rows 1 and 2, then an integer overflow on row 3 */
    REQUIRE_EQ(fds__cat_prepare(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                                   "SELECT x+1 FROM c WHERE x<5) SELECT CASE WHEN "
                                   "x=3 THEN abs(-9223372036854775807-1) ELSE x "
                                   "END FROM c", &st, &e), 0);
    int row, rows = 0;
    while ((row = fds__cat_row(db, st, "c", &e)) == 1)
        rows++;
    sqlite3_finalize(st);
    REQUIRE_EQ(rows, 2);
    REQUIRE_EQ(row, FDS_ESQL);
    REQUIRE(strstr(e.reason, "[c]") != NULL);
    REQUIRE_EQ(fds__cat_prepare(db, "SELECT 1", &st, &e), 0);
    REQUIRE_EQ(fds__cat_row(db, st, "one", &e), 1);
    REQUIRE_EQ(fds__cat_row(db, st, "one", &e), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* Start-up with an unreadable catalogue table stops with an error naming the
 * table and removes nothing (it used to read as an empty table: every index
 * folder, every segment file, the buffered writes gone); once the table
 * reads again, every document is there. */
static void test_catalog_read_error(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("unreadable", data, "a", NULL, NULL, &s, &ix), 0);
    fds_err e;
    fds_err_clear(&e);
    fds_index_settings set;
    fds_index_settings_default(&set);
    REQUIRE_EQ(fds_store_create_index(s, "b", &set, NULL, &e), 0);
    REQUIRE_EQ(put_docs(ix, 0, 100, true), 0);
    REQUIRE_EQ(put_docs(ix, 100, 150, false), 0); /* translog only */
    char folder[4096];
    snprintf(folder, sizeof folder, "%s/indices/%s", data, fds_index_uuid(ix));
    fds_index_release(ix);
    fds_store_close(s);
    int files = count_files(folder);
    REQUIRE_EQ(files, 2);
    const char *tables[] = {"indices", "settings", "mappings", "dictionaries",
                            "segments", "translog_batches"};
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
        REQUIRE_EQ(damage_table(data, tables[t]), 0);
        fds_err_clear(&e);
        s = NULL;
        int rc = fds_store_open(data, &s, &e);
        if (rc == 0)
            fprintf(stderr, "open with [%s] unreadable succeeded\n", tables[t]);
        REQUIRE_EQ(rc, FDS_ESQL);
        REQUIRE(s == NULL);
        char want[64];
        snprintf(want, sizeof want, "[%s]", tables[t]);
        REQUIRE(strstr(e.reason, want) != NULL);
        REQUIRE_EQ(count_files(folder), files);
        REQUIRE_EQ(damage_table(data, tables[t]), 0);
        fds_err_clear(&e);
        REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
        REQUIRE_EQ(fds_store_get_index(s, "a", &ix, NULL), 0);
        REQUIRE(doc_is(ix, 0) && doc_is(ix, 99) && doc_is(ix, 100) &&
               doc_is(ix, 149));
        fds_index_release(ix);
        REQUIRE_EQ(fds_store_get_index(s, "b", &ix, NULL), 0);
        fds_index_release(ix);
        fds_store_close(s);
    }
}

/* Run `sql` on the catalogue of `data` (the store closed).  Returns 0 or -1. */
static int cat_sql(const char *data, const char *sql)
{
    char path[4096];
    sqlite3 *db = cat_open(data, path);
    if (!db)
        return -1;
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "cat_sql: %s: %s\n", sql, msg ? msg : "");
    sqlite3_free(msg);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* Flip bit 0 of byte `at` of column `col` (TEXT or BLOB, kept as its type)
 * of the first row of `table` matching `where`, leaving its crc alone: a
 * bit the disk flipped inside a record, which SQLite reads back as a
 * value.  Returns 0 or -1. */
static int flip_bit(const char *data, const char *table, const char *col,
                    const char *where, int at)
{
    char path[4096], sql[512];
    snprintf(path, sizeof path, "%s/catalog.sqlite", data);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    sqlite3_stmt *st;
    snprintf(sql, sizeof sql, "SELECT rowid, typeof(%s), %s FROM %s WHERE %s",
             col, col, table, where);
    int rc = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        int64_t rowid = sqlite3_column_int64(st, 0);
        bool text = !strcmp((const char *)sqlite3_column_text(st, 1), "text");
        int n = sqlite3_column_bytes(st, 2);
        unsigned char *v = malloc((size_t)n + 1);
        memcpy(v, sqlite3_column_blob(st, 2), (size_t)n);
        sqlite3_finalize(st);
        st = NULL;
        if (at < n) {
            v[at] ^= 1;
            snprintf(sql, sizeof sql, "UPDATE %s SET %s=? WHERE rowid=?", table, col);
            if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
                if (text)
                    sqlite3_bind_text(st, 1, (char *)v, n, SQLITE_STATIC);
                else
                    sqlite3_bind_blob(st, 1, v, n, SQLITE_STATIC);
                sqlite3_bind_int64(st, 2, rowid);
                rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
            }
        }
        free(v);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

/* One flipped bit in any blob the catalogue holds fails the index with a
 * corrupt_index_exception-kind error naming the row, never wrong results
 * (a flipped live-docs bit used to bring a deleted document back). */
static void test_catalog_checksums(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("checksums", data, "c", "index.codec", "ZSTD", &s,
                               &ix), 0);
    fds_err e;
    fds_err_clear(&e);
    fds_index_settings set;
    fds_index_settings_default(&set);
    REQUIRE_EQ(fds_store_create_index(s, "other", &set, NULL, &e), 0);
    REQUIRE_EQ(put_docs(ix, 0, 100, true), 0);
    fds_write_op del = {.type = FDS_OP_DELETE, .id = "0", .id_len = 1};
    fds_write_result r;
    REQUIRE_EQ(fds_index_write(ix, &del, 1, &r, true, &e), 0);
    REQUIRE_EQ(put_docs(ix, 100, 110, false), 0); /* translog only */
    fds_index_release(ix);
    fds_store_close(s);
    static const struct {
        const char *table, *col, *where, *names;
        int at;
    } blobs[] = {
        /* bit 0 of byte 0: doc 0, the deleted one, would be live again */
        {"segments", "live", "live IS NOT NULL", "live docs", 0},
        {"settings", "value", "key='index.codec'", "settings [index.codec]", 0},
        {"mappings", "json", "1", "mappings", 2},
        {"dictionaries", "bytes", "1", "dictionaries", 40},
        /* byte 40: in the first record's document (buffer.c's layout) */
        {"translog_batches", "ops", "1", "translog", 40},
        {"indices", "uuid", "name='c'", "indices", 0},
    };
    for (size_t b = 0; b < sizeof blobs / sizeof *blobs; b++) {
        REQUIRE_EQ(flip_bit(data, blobs[b].table, blobs[b].col, blobs[b].where,
                           blobs[b].at), 0);
        REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
        const char *why = fds_index_failure(ix);
        if (!why)
            fprintf(stderr, "flipped %s.%s: index not failed\n", blobs[b].table,
                    blobs[b].col);
        REQUIRE(why != NULL);
        REQUIRE(strstr(why, blobs[b].names) && strstr(why, "checksum"));
        fds_doc d;
        fds_err_clear(&e);
        REQUIRE_EQ(fds_index_get(ix, "0", 1, &d, &e), FDS_ECORRUPT);
        REQUIRE_EQ(e.kind, FDS_KIND_CORRUPT);
        fds_index_release(ix);
        REQUIRE_EQ(fds_store_get_index(s, "other", &ix, NULL), 0);
        REQUIRE(fds_index_failure(ix) == NULL);
        fds_index_release(ix);
        fds_store_close(s);
        REQUIRE_EQ(flip_bit(data, blobs[b].table, blobs[b].col, blobs[b].where,
                           blobs[b].at), 0);
        REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
        REQUIRE(fds_index_failure(ix) == NULL);
        REQUIRE_EQ(fds_index_get(ix, "0", 1, &d, NULL), FDS_ENOTFOUND);
        REQUIRE(doc_is(ix, 1) && doc_is(ix, 109));
        fds_index_release(ix);
        fds_store_close(s);
    }
}

/* A schema-1 catalogue (no crc columns) is migrated at open: every row
 * gets its checksum and every document is there. */
static void test_catalog_migration(void)
{
    char data[1024];
    snprintf(data, sizeof data, "%.900s/checksums", dir);
    REQUIRE_EQ(cat_sql(data, "ALTER TABLE indices DROP COLUMN crc;"
                            "ALTER TABLE settings DROP COLUMN crc;"
                            "ALTER TABLE mappings DROP COLUMN crc;"
                            "ALTER TABLE dictionaries DROP COLUMN crc;"
                            "ALTER TABLE segments DROP COLUMN crc;"
                            "ALTER TABLE translog DROP COLUMN crc;"
                            "ALTER TABLE segments DROP COLUMN shard;"
                            "ALTER TABLE translog DROP COLUMN shard;"
                            "ALTER TABLE segments DROP COLUMN routing;"
                            "ALTER TABLE translog DROP COLUMN routing;"
                            "UPDATE meta SET value='1';"
                            "PRAGMA user_version=0;"), 0);
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) == NULL);
    REQUIRE(doc_is(ix, 1) && doc_is(ix, 99) && doc_is(ix, 109));
    fds_index_release(ix);
    fds_store_close(s);
    /* checked from now on */
    REQUIRE_EQ(flip_bit(data, "segments", "live", "live IS NOT NULL", 0), 0);
    REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) != NULL);
    fds_index_release(ix);
    fds_store_close(s);
    /* a catalogue of a newer schema is refused, untouched */
    REQUIRE_EQ(cat_sql(data, "PRAGMA user_version=5;"), 0);
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(data, &s, &e), FDS_ESQL);
    REQUIRE(strstr(e.reason, "schema version 5") != NULL);
}

/* Rewrite the crc of every row of `table` in the catalogue of `data` as a
 * schema-2 catalogue had it: over `cols` (the columns before the shard). */
static int v2_checksums(const char *data, const char *table, const char *cols,
                        int ncols)
{
    char path[4096], sql[512];
    sqlite3 *db = cat_open(data, path);
    if (!db)
        return -1;
    sqlite3_stmt *sel = NULL, *upd = NULL;
    snprintf(sql, sizeof sql, "SELECT rowid, %s FROM %s", cols, table);
    int rc = sqlite3_prepare_v2(db, sql, -1, &sel, NULL);
    snprintf(sql, sizeof sql, "UPDATE %s SET crc=? WHERE rowid=?", table);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, sql, -1, &upd, NULL);
    while (rc == SQLITE_OK && sqlite3_step(sel) == SQLITE_ROW) {
        sqlite3_reset(upd);
        sqlite3_bind_int64(upd, 1, fds__cat_row_crc(sel, 1, ncols));
        sqlite3_bind_int64(upd, 2, sqlite3_column_int64(sel, 0));
        if (sqlite3_step(upd) != SQLITE_DONE)
            rc = SQLITE_ERROR;
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* A schema-2 catalogue (no shard columns) is migrated at open: every
 * document is there, in shard 0; a row that failed its checksum before
 * still fails. */
static void test_catalog_migration_v2(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("v2", data, "c", NULL, NULL, &s, &ix), 0);
    REQUIRE_EQ(put_docs(ix, 0, 100, true), 0);
    REQUIRE_EQ(put_docs(ix, 100, 110, false), 0); /* translog only */
    fds_index_release(ix);
    fds_store_close(s);
    REQUIRE_EQ(v2_checksums(data, "segments",
                            "index_id, gen, max_doc, del_count, max_seq, live", 6), 0);
    REQUIRE_EQ(v2_checksums(data, "translog",
                            "index_id, seq, op, doc_id, version, source", 6), 0);
    REQUIRE_EQ(cat_sql(data, "ALTER TABLE segments DROP COLUMN shard;"
                            "ALTER TABLE translog DROP COLUMN shard;"
                            "ALTER TABLE segments DROP COLUMN routing;"
                            "ALTER TABLE translog DROP COLUMN routing;"
                            "UPDATE meta SET value='2';"
                            "PRAGMA user_version=2;"), 0);
    REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) == NULL);
    REQUIRE(doc_is(ix, 1) && doc_is(ix, 99) && doc_is(ix, 109));
    fds_index_release(ix);
    fds_store_close(s);
    /* a damaged row is not made good by the migration */
    REQUIRE_EQ(cat_sql(data, "ALTER TABLE segments DROP COLUMN shard;"
                            "ALTER TABLE translog DROP COLUMN shard;"
                            "ALTER TABLE segments DROP COLUMN routing;"
                            "ALTER TABLE translog DROP COLUMN routing;"
                            "UPDATE segments SET max_seq=max_seq+1;"
                            "PRAGMA user_version=2;"), 0);
    REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) != NULL);
    fds_index_release(ix);
    fds_store_close(s);
}

/* The rows of the catalogue of `data` that `sql` (a SELECT count(*))
 * counts, while a store may have it open (-1: error). */
static long cat_query_count(const char *data, const char *sql)
{
    char path[4096];
    sqlite3 *db = cat_open(data, path);
    if (!db)
        return -1;
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt *st;
    long n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* The number of rows of `table` in the catalogue of `data` (-1: error). */
static long cat_count(const char *data, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    return cat_query_count(data, sql);
}

/* A schema-3 catalogue kept its translog as a row per operation in
 * `translog`: those rows are replayed at open (writes and a delete), the
 * catalogue becomes schema 4, new writes go to translog_batches, and a
 * refresh trims both. */
static void test_catalog_translog_v3(void)
{
    char data[1024], path[4096];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("v3", data, "c", NULL, NULL, &s, &ix), 0);
    REQUIRE_EQ(put_docs(ix, 0, 100, true), 0);
    fds_index_release(ix);
    fds_store_close(s);
    sqlite3 *db = cat_open(data, path);
    REQUIRE(db != NULL);
    sqlite3_stmt *st;
    REQUIRE_EQ(sqlite3_prepare_v2(db, "INSERT INTO translog(index_id, seq, op, "
                                      "doc_id, version, source, crc, shard, "
                                      "routing) VALUES((SELECT id FROM indices "
                                      "WHERE name='c'), ?, ?, ?, ?, ?, 0, 0, "
                                      "NULL)", -1, &st, NULL), SQLITE_OK);
    for (int k = 100; k <= 110; k++) { /* 100..109 written, then 5 deleted */
        char id[16], *src = doc_json(k);
        snprintf(id, sizeof id, "%d", k == 110 ? 5 : k);
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, 1000 + k);
        sqlite3_bind_int(st, 2, k == 110 ? FDS_OP_DELETE : FDS_OP_INDEX);
        sqlite3_bind_blob(st, 3, id, (int)strlen(id), SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 4, k == 110 ? 2 : 1);
        if (k == 110)
            sqlite3_bind_null(st, 5);
        else
            sqlite3_bind_blob(st, 5, src, (int)strlen(src), SQLITE_TRANSIENT);
        free(src);
        REQUIRE_EQ(sqlite3_step(st), SQLITE_DONE);
    }
    sqlite3_finalize(st);
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds__cat_rechecksum(db, "translog", NULL, &e), 0);
    REQUIRE_EQ(sqlite3_exec(db, "DROP TABLE translog_batches;"
                                "UPDATE meta SET value='3';"
                                "PRAGMA user_version=3;", NULL, NULL, NULL),
               SQLITE_OK);
    sqlite3_close(db);
    REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) == NULL);
    REQUIRE(doc_is(ix, 1) && doc_is(ix, 99) && doc_is(ix, 100) && doc_is(ix, 109));
    fds_doc d;
    REQUIRE_EQ(fds_index_get(ix, "5", 1, &d, NULL), FDS_ENOTFOUND);
    REQUIRE_EQ(put_docs(ix, 200, 210, false), 0); /* translog only */
    REQUIRE_EQ(cat_count(data, "translog_batches"), 1);
    REQUIRE_EQ(cat_count(data, "translog"), 11);
    fds_index_release(ix);
    fds_store_close(s);
    REQUIRE_EQ(reopen(data, "c", &s, &ix), 0); /* both kinds replayed */
    REQUIRE(doc_is(ix, 100) && doc_is(ix, 209));
    REQUIRE_EQ(fds_index_get(ix, "5", 1, &d, NULL), FDS_ENOTFOUND);
    REQUIRE_EQ(fds_index_refresh(ix, &e), 0);
    REQUIRE_EQ(cat_count(data, "translog"), 0);
    REQUIRE_EQ(cat_count(data, "translog_batches"), 0);
    REQUIRE(doc_is(ix, 100) && doc_is(ix, 209));
    fds_index_release(ix);
    fds_store_close(s);
}

/* A batch larger than a translog row takes (64 MiB of records) is
 * written as several rows, replayed whole (one row took it all and SQLite
 * refused a value over 1e9 bytes: every item failed). */
static void test_translog_rows_of_a_large_batch(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("bigbatch", data, "b", NULL, NULL, &s, &ix), 0);
    fds_store_set_index_buffer_size(s, 1ull << 30); /* no flush: rows stay */
    enum { NDOCS = 3, PAD = 25 << 20 };
    char *src[NDOCS], ids[NDOCS][8];
    fds_write_op ops[NDOCS];
    fds_write_result *res = calloc(NDOCS, sizeof *res);
    for (int i = 0; i < NDOCS; i++) {
        src[i] = malloc(PAD + 32);
        int h = snprintf(src[i], 32, "{\"n\":%d,\"pad\":\"", i);
        memset(src[i] + h, 'a' + i, PAD);
        memcpy(src[i] + h + PAD, "\"}", 3);
        snprintf(ids[i], sizeof ids[i], "big%d", i);
        ops[i] = (fds_write_op){.type = FDS_OP_INDEX, .id = ids[i],
                                .id_len = strlen(ids[i]),
                                .src = (const uint8_t *)src[i],
                                .src_len = strlen(src[i])};
    }
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_index_write(ix, ops, NDOCS, res, false, &e), 0);
    for (int i = 0; i < NDOCS; i++)
        REQUIRE_EQ(res[i].code, 0);
    REQUIRE_EQ(cat_count(data, "translog_batches"), 2); /* 50 MiB + 25 MiB */
    fds_index_release(ix);
    fds_store_close(s);
    REQUIRE_EQ(reopen(data, "b", &s, &ix), 0);
    fds_store_set_index_buffer_size(s, 1ull << 30);
    for (int i = 0; i < NDOCS; i++) {
        fds_doc d;
        REQUIRE_EQ(fds_index_get(ix, ids[i], strlen(ids[i]), &d, NULL), 0);
        REQUIRE(d.src_len == strlen(src[i]) && !memcmp(d.src, src[i], d.src_len));
        REQUIRE_EQ(d.seq_no, res[i].seq_no);
        free(d.src);
        free(src[i]);
    }
    free(res);
    REQUIRE_EQ(fds_index_refresh(ix, &e), 0);
    REQUIRE_EQ(cat_count(data, "translog_batches"), 0);
    fds_index_release(ix);
    fds_store_close(s);
}

typedef struct victim_writer {
    fds_index *ix;
    int batches;
} victim_writer;

/* Write batches of unrefreshed docs until the index is gone. */
static void *write_victim(void *arg)
{
    victim_writer *w = arg;
    for (int b = 0; b < 2000; b++, w->batches++)
        if (put_docs(w->ix, b * 50, b * 50 + 50, false))
            break;
    return NULL;
}

/* An alias action removing an index while a writer writes to it: no
 * translog row outlives the index (the remove took its refresh lock but
 * not its write lock, so a batch could commit between the rows' deletion
 * and the index's; a new index given the freed id replayed it). */
static void test_remove_index_beside_writes(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("rmidx", data, "victim", NULL, NULL, &s, &ix), 0);
    for (int round = 0; round < 20; round++) {
        if (round) {
            fds_err e;
            fds_err_clear(&e);
            fds_index_settings set;
            fds_index_settings_default(&set);
            REQUIRE_EQ(fds_store_create_index(s, "victim", &set, NULL, &e), 0);
            REQUIRE_EQ(fds_store_get_index(s, "victim", &ix, &e), 0);
        }
        victim_writer w = {ix, 0};
        pthread_t t;
        REQUIRE_EQ(pthread_create(&t, NULL, write_victim, &w), 0);
        struct timespec ts = {0, (long)(1 + round % 5) * 1000000L};
        nanosleep(&ts, NULL);
        fds_alias_action act = {.op = FDS_ALIAS_REMOVE_INDEX,
                                .a = {.index = "victim"}};
        fds_err e;
        fds_err_clear(&e);
        REQUIRE_EQ(fds_store_aliases_update(s, &act, 1, &e), 0);
        pthread_join(t, NULL);
        fds_index_release(ix);
        REQUIRE_EQ(cat_query_count(data, "SELECT count(*) FROM translog_batches "
                                         "WHERE index_id NOT IN "
                                         "(SELECT id FROM indices)"), 0);
    }
    fds_store_close(s);
}

typedef struct merge_watch {
    fds_index *ix;
    atomic_bool stop;
    atomic_long views, wrong;
} merge_watch;

/* Count the visible docs of the published set, as fast as it can. */
static void *watch_counts(void *arg)
{
    merge_watch *w = arg;
    while (!atomic_load(&w->stop)) {
        fds_index_stats st;
        fds_index_stats_get(w->ix, &st);
        if (st.docs_count != 2000)
            atomic_fetch_add(&w->wrong, 1);
        atomic_fetch_add(&w->views, 1);
    }
    return NULL;
}

/* A merge swaps its inputs for its output in one step: readers counting
 * the visible docs while merges and re-indexing run never see fewer. */
static void test_merge_is_one_step(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("onestep", data, "m", "index.translog.durability",
                               "async", &s, &ix), 0);
    fds_err e;
    fds_err_clear(&e);
    for (int i = 0; i < 2000; i += 100)
        REQUIRE_EQ(put_docs(ix, i, i + 100, true), 0);
    merge_watch w = {.ix = ix};
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, watch_counts, &w);
    int merges = 0;
    for (int round = 0; round < 100; round++) {
        /* a new segment replacing 50 docs of older ones, then a merge */
        int from = (round * 37) % 1950;
        if (put_docs(ix, from, from + 50, true) ||
            fds_index_forcemerge(ix, 1 + (unsigned)(round % 3), &e))
            break;
        merges++;
    }
    atomic_store(&w.stop, true);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    printf("one-step merge: %d merges, %ld counts, %ld short\n", merges,
           atomic_load(&w.views), atomic_load(&w.wrong));
    REQUIRE_EQ(merges, 100);
    REQUIRE_EQ(atomic_load(&w.wrong), 0);
    fds_index_release(ix);
    fds_store_close(s);
}

/* Generous bound for a step that must not wait on the held write: seconds
 * (a liveness check, not a speed measurement). */
#define NOWAIT_DEADLINE_S 30

typedef struct held_write {
    fds_index *ix;
    int rc;
} held_write;

static void *bulk_write(void *arg)
{
    held_write *h = arg;
    h->rc = put_docs(h->ix, 1000, 3000, false);
    return NULL;
}

typedef struct one_search {
    fds_index *ix;
    atomic_bool done;
    int rc;
    uint64_t total;
    bool got_seg, got_buf;
} one_search;

/* What the _search handler does (settings, parse, view, execute), then
 * realtime gets of a doc in a segment and of a buffered one. */
static void *search_once(void *arg)
{
    one_search *q = arg;
    static const char body[] = "{\"query\":{\"match\":{\"method\":\"GET\"}}}";
    fds_err e;
    fds_err_clear(&e);
    fds_index_settings set;
    fds_index_get_settings(q->ix, &set);
    fds_search_request *req = NULL;
    fds_index_view *v = NULL;
    fds_search_result res;
    memset(&res, 0, sizeof res);
    int rc = fds_search_parse_window(body, sizeof body - 1,
                                     fds_index_mapping(q->ix),
                                     set.max_result_window, 0, &req, &e);
    if (!rc)
        rc = fds_index_view_acquire(q->ix, &v, &e);
    if (!rc) {
        unsigned nseg;
        const fds_search_segment *segs = fds_index_view_segments(v, &nseg);
        rc = fds_search_execute(req, segs, nseg, &res, &e);
    }
    q->rc = rc;
    q->total = res.total;
    fds_search_result_free(&res);
    fds_index_view_release(v);
    fds_search_request_free(req);
    q->got_seg = doc_is(q->ix, 7);
    q->got_buf = doc_is(q->ix, 5003);
    atomic_store(&q->done, true);
    return NULL;
}

/* Wait until `flag` is set or NOWAIT_DEADLINE_S pass; true when set. */
static bool wait_flag(atomic_bool *flag)
{
    for (int i = 0; i < NOWAIT_DEADLINE_S * 1000 && !atomic_load(flag); i++)
        nanosleep(&(struct timespec){0, 1000000L}, NULL);
    return atomic_load(flag);
}

/* A search never waits behind a write: with a bulk write stopped inside
 * its translog commit (the catalogue lock held here, so the write holds the
 * index's write lock across validation and its fsync'd commit), a search
 * and realtime gets run to the end and see the committed docs, and the
 * write completes once the catalogue is free. */
static void test_search_not_behind_write(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("nowait", data, "w", "index.refresh_interval",
                               "-1", &s, &ix), 0);
    REQUIRE_EQ(put_docs(ix, 0, 1000, true), 0);
    REQUIRE_EQ(put_docs(ix, 5000, 5010, false), 0); /* buffered */
    pthread_mutex_lock(&s->db_mu);
    held_write h = {.ix = ix};
    pthread_t wt, qt;
    pthread_create(&wt, NULL, bulk_write, &h);
    /* the write holds wmu until it gets the catalogue, which it cannot */
    bool held = false;
    for (int i = 0; i < NOWAIT_DEADLINE_S * 1000 && !held; i++) {
        held = pthread_mutex_trylock(&ix->wmu) != 0;
        if (!held) {
            pthread_mutex_unlock(&ix->wmu);
            nanosleep(&(struct timespec){0, 1000000L}, NULL);
        }
    }
    one_search q = {.ix = ix};
    atomic_init(&q.done, false);
    if (held)
        pthread_create(&qt, NULL, search_once, &q);
    bool finished = held && wait_flag(&q.done);
    pthread_mutex_unlock(&s->db_mu);
    pthread_join(wt, NULL);
    if (held)
        pthread_join(qt, NULL);
    printf("search behind a held write: held %d, finished %d, %llu hits\n",
           held, finished, (unsigned long long)q.total);
    ASSERT(held);
    ASSERT(finished);
    ASSERT_EQ(q.rc, 0);
    ASSERT_EQ(q.total, 900u); /* GET: doc_json's i % 10 != 0 */
    ASSERT(q.got_seg);
    ASSERT(q.got_buf);
    ASSERT_EQ(h.rc, 0);
    ASSERT(doc_is(ix, 2999));
    fds_index_release(ix);
    fds_store_close(s);
}

/* Mark the oldest segment of index `name` in the catalogue of `data` fully
 * deleted (live all zero, del_count = max_doc) with a valid row checksum:
 * the state a segment is in after every doc of it is deleted, before a
 * merge drops it.  Returns 0 or -1. */
static int delete_all_of_oldest(const char *data)
{
    char path[4096];
    sqlite3 *db = cat_open(data, path);
    if (!db)
        return -1;
    sqlite3_stmt *st;
    int rc = -1;
    if (sqlite3_prepare_v2(db, "SELECT id, index_id, gen, max_doc, max_seq FROM "
                               "segments ORDER BY gen LIMIT 1", -1, &st, NULL) ||
        sqlite3_step(st) != SQLITE_ROW)
        goto out;
    int64_t id = sqlite3_column_int64(st, 0), max_doc = sqlite3_column_int64(st, 3);
    uint8_t zero[1024] = {0};
    size_t nb = (size_t)(max_doc + 7) / 8;
    uint32_t crc = fds__crc_i64(0, sqlite3_column_int64(st, 1));
    crc = fds__crc_i64(crc, sqlite3_column_int64(st, 2));
    crc = fds__crc_i64(crc, max_doc);
    crc = fds__crc_i64(crc, max_doc);
    crc = fds__crc_i64(crc, sqlite3_column_int64(st, 4));
    crc = fds__crc_bytes(crc, zero, nb);
    crc = fds__crc_i64(crc, 0);          /* shard */
    crc = fds__crc_bytes(crc, NULL, 0);  /* routing */
    sqlite3_finalize(st);
    st = NULL;
    if (nb > sizeof zero ||
        sqlite3_prepare_v2(db, "UPDATE segments SET live=?, del_count=?, crc=? "
                               "WHERE id=?", -1, &st, NULL))
        goto out;
    sqlite3_bind_blob(st, 1, zero, (int)nb, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, max_doc);
    sqlite3_bind_int64(st, 3, crc);
    sqlite3_bind_int64(st, 4, id);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

/* _forcemerge rewrites every segment with deletes, also the one after a
 * segment whose rewrite left no live docs (the list shifts under the
 * loop). */
static void test_forcemerge_after_empty_rewrite(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("fmskip", data, "fm", NULL, NULL, &s, &ix), 0);
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(put_docs(ix, 0, 100, true), 0);
    REQUIRE_EQ(put_docs(ix, 100, 200, true), 0);
    fds_write_op del = {.type = FDS_OP_DELETE, .id = "150", .id_len = 3};
    fds_write_result r;
    REQUIRE_EQ(fds_index_write(ix, &del, 1, &r, true, &e), 0);
    fds_index_release(ix);
    fds_store_close(s);
    REQUIRE_EQ(delete_all_of_oldest(data), 0);
    REQUIRE_EQ(reopen(data, "fm", &s, &ix), 0);
    fds_index_stats st;
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.segments, 2u);
    REQUIRE_EQ(st.docs_count, 99u);
    REQUIRE_EQ(fds_index_forcemerge(ix, 2, &e), 0);
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.segments, 1u);
    REQUIRE_EQ(st.docs_count, 99u);
    REQUIRE_EQ(st.docs_deleted, 0u); /* was 1: the second segment skipped */
    fds_index_release(ix);
    fds_store_close(s);
}

/* A block-index entry whose offset + length wraps past 2^64 is a damaged
 * file (the index fails), not a read far outside the mapping. */
static void test_block_offset_wrap(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("wrap", data, "w", NULL, NULL, &s, &ix), 0);
    REQUIRE_EQ(put_docs(ix, 0, 10, true), 0);
    char fdt[2048];
    snprintf(fdt, sizeof fdt, "%s/indices/%s/seg_1.fdt", data, fds_index_uuid(ix));
    fds_index_release(ix);
    fds_store_close(s);
    FILE *f = fopen(fdt, "r+b");
    REQUIRE(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    uint8_t *m = malloc((size_t)n);
    fseek(f, 0, SEEK_SET);
    REQUIRE(fread(m, 1, (size_t)n, f) == (size_t)n);
    uint8_t *foot = m + n - 64;
    uint64_t index_off = 0;
    for (int i = 0; i < 8; i++)
        index_off |= (uint64_t)foot[i] << (8 * i);
    /* block 0 at 2^64 - 8: offset + its length wraps to a small number */
    for (int i = 0; i < 8; i++)
        m[index_off + (size_t)i] = i ? 0xFF : 0xF8;
    uLong crc = crc32(crc32(0L, Z_NULL, 0), m + index_off,
                      (uInt)((uint64_t)(n - 64) - index_off + 48));
    for (int i = 0; i < 4; i++)
        foot[48 + i] = (uint8_t)(crc >> (8 * i));
    fseek(f, 0, SEEK_SET);
    fwrite(m, 1, (size_t)n, f);
    fclose(f);
    free(m);
    REQUIRE_EQ(reopen(data, "w", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) && strstr(fds_index_failure(ix), "damaged"));
    fds_doc d;
    REQUIRE_EQ(fds_index_get(ix, "0", 1, &d, NULL), FDS_ECORRUPT);
    fds_index_release(ix);
    fds_store_close(s);
}

/* A delete of a missing id bumps the version (Elasticsearch), the same
 * live and after a restart replays the translog; limits in messages are
 * the named ones. */
static void test_delete_missing_and_limits(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("delmissing", data, "dm", NULL, NULL, &s, &ix), 0);
    fds_err e;
    fds_err_clear(&e);
    fds_index_settings set;
    fds_index_settings_default(&set);
    fds_write_op ops[2] = {{.type = FDS_OP_DELETE, .id = "x", .id_len = 1},
                           {.type = FDS_OP_DELETE, .id = "y", .id_len = 1}};
    fds_write_result r[2];
    REQUIRE_EQ(fds_index_write(ix, ops, 2, r, false, &e), 0);
    REQUIRE(!r[0].found && r[0].version == 1 && r[1].version == 1);
    fds_write_op put = {.type = FDS_OP_INDEX, .id = "x", .id_len = 1,
                        .src = (const uint8_t *)"{}", .src_len = 2};
    REQUIRE_EQ(fds_index_write(ix, &put, 1, r, false, &e), 0);
    REQUIRE_EQ(r[0].version, 2); /* live: after the delete's version 1 */
    /* limits, as Elasticsearch words them, from the named constants */
    char big[FDS_DOC_ID_MAX + 2], want[128];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    put.id = big;
    put.id_len = strlen(big);
    REQUIRE_EQ(fds_index_write(ix, &put, 1, r, false, &e), 0);
    REQUIRE_EQ(r[0].code, FDS_EINVAL);
    snprintf(want, sizeof want, "must be no longer than %d bytes but was: %d",
             FDS_DOC_ID_MAX, FDS_DOC_ID_MAX + 1);
    REQUIRE(strstr(r[0].err.reason, want) != NULL);
    big[FDS_INDEX_NAME_MAX + 1] = 0;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_create_index(s, big, &set, NULL, &e), FDS_EINVAL);
    snprintf(want, sizeof want, "index name is too long, (> %d)", FDS_INDEX_NAME_MAX);
    REQUIRE(strstr(e.reason, want) != NULL);
    fds_index_release(ix);
    fds_store_close(s);
    /* restart: the translog's tombstone of y gives the same answer */
    REQUIRE_EQ(reopen(data, "dm", &s, &ix), 0);
    put.id = "y";
    put.id_len = 1;
    REQUIRE_EQ(fds_index_write(ix, &put, 1, r, false, &e), 0);
    REQUIRE_EQ(r[0].version, 2);
    fds_doc d;
    REQUIRE_EQ(fds_index_get(ix, "x", 1, &d, NULL), 0);
    REQUIRE_EQ(d.version, 2);
    free(d.src);
    fds_index_release(ix);
    fds_store_close(s);
}

/* Stored-fields bytes of index `name` after `batches` refreshes of
 * `per_batch` docs each (doc i = doc_json(i)), then a force-merge to one
 * segment.  Returns 0 on failure. */
static uint64_t stored_after(fds_store *s, const char *name, int batches,
                             int per_batch)
{
    fds_index_settings set;
    fds_index_settings_default(&set);
    fds_settings_set(&set, "index.translog.durability", "async", NULL);
    fds_err e;
    fds_err_clear(&e);
    fds_index *ix;
    if (fds_store_create_index(s, name, &set, NULL, &e) ||
        fds_store_get_index(s, name, &ix, NULL))
        return 0;
    uint64_t bytes = 0;
    int b = 0;
    for (; b < batches; b++)
        if (put_docs(ix, b * per_batch, (b + 1) * per_batch, true))
            break;
    fds_index_stats st;
    if (b == batches && fds_index_forcemerge(ix, 1, &e) == 0) {
        fds_index_stats_get(ix, &st);
        if (st.segments == 1 && st.docs_count == (uint64_t)batches * per_batch)
            bytes = st.stored_fields_bytes;
    }
    fds_index_release(ix);
    return bytes;
}

/* 1,000 refreshes of 10 docs then a force-merge store (±1%) what loading
 * the same 10,000 docs at once does: the merge re-encodes once too many of
 * the copied blocks would be incomplete (Lucene's tooDirty). */
static void test_dirty_blocks_reencoded(void)
{
    char data[1024];
    snprintf(data, sizeof data, "%.900s/dirty", dir);
    fds_store *s;
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t small = stored_after(s, "small", 1000, 10);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t once = stored_after(s, "once", 1, 10000);
    printf("stored fields after 1000 refreshes x 10 docs + force-merge: %llu "
           "bytes; 10000 docs at once: %llu bytes (%.1f s)\n",
           (unsigned long long)small, (unsigned long long)once,
           (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    REQUIRE(small > 0 && once > 0);
    REQUIRE(small * 100 <= once * 101 && small * 100 >= once * 99);
    fds_store_close(s);
}

/* The smallest and largest block format version of ix's segments. */
static void seg_formats(fds_index *ix, uint32_t *lo, uint32_t *hi, unsigned *nsegs)
{
    pthread_mutex_lock(&ix->refresh_mu);
    *lo = UINT32_MAX;
    *hi = 0;
    for (unsigned i = 0; i < ix->nsegs; i++) {
        uint32_t f = ix->segs[i]->block_format;
        *lo = f < *lo ? f : *lo;
        *hi = f > *hi ? f : *hi;
    }
    *nsegs = ix->nsegs;
    pthread_mutex_unlock(&ix->refresh_mu);
}

/* Segments of block format version 1 (written here by asking the codec for
 * that version, as older builds wrote them) stay readable, also after a
 * restart; a force-merge rewrites them in the current version, both when
 * it merges several and when one segment is left alone. */
static void test_old_block_format(void)
{
    char data[1024];
    snprintf(data, sizeof data, "%.900s/oldfmt", dir);
    static const char *const codecs[] = {"ZSTD", "best_compression", "default"};
    for (int k = 0; k < 3; k++) {
        fds_store *s;
        fds_err e;
        fds_err_clear(&e);
        REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
        char name[32];
        snprintf(name, sizeof name, "old-%d", k);
        fds_index_settings set;
        fds_index_settings_default(&set);
        REQUIRE_EQ(fds_settings_set(&set, "index.codec", codecs[k], NULL), 0);
        fds_index *ix;
        REQUIRE_EQ(fds_store_create_index(s, name, &set, NULL, &e), 0);
        REQUIRE_EQ(fds_store_get_index(s, name, &ix, NULL), 0);
        pthread_mutex_lock(&ix->meta_mu);
        ix->settings.codec.format_version = FDS_BLOCK_FORMAT_V1;
        pthread_mutex_unlock(&ix->meta_mu);
        int batches = k == 2 ? 1 : 3; /* "default": one segment alone */
        for (int b = 0; b < batches; b++)
            REQUIRE_EQ(put_docs(ix, b * 200, (b + 1) * 200, true), 0);
        uint32_t lo, hi;
        unsigned nsegs;
        seg_formats(ix, &lo, &hi, &nsegs);
        ASSERT_EQ(nsegs, (unsigned)batches);
        ASSERT_EQ(lo, FDS_BLOCK_FORMAT_V1);
        ASSERT_EQ(hi, FDS_BLOCK_FORMAT_V1);
        fds_index_stats st;
        fds_index_stats_get(ix, &st);
        uint64_t v1_bytes = st.stored_fields_bytes;
        fds_index_release(ix);
        fds_store_close(s);
        /* Reopened by today's code, which writes the current version. */
        REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
        REQUIRE_EQ(fds_store_get_index(s, name, &ix, NULL), 0);
        seg_formats(ix, &lo, &hi, &nsegs);
        ASSERT_EQ(lo, FDS_BLOCK_FORMAT_V1);
        for (int i = 0; i < batches * 200; i += 7)
            ASSERT(doc_is(ix, i));
        REQUIRE_EQ(fds_index_forcemerge(ix, 1, &e), 0);
        seg_formats(ix, &lo, &hi, &nsegs);
        ASSERT_EQ(nsegs, 1u);
        ASSERT_EQ(lo, FDS_BLOCK_FORMAT_VERSION);
        ASSERT_EQ(hi, FDS_BLOCK_FORMAT_VERSION);
        for (int i = 0; i < batches * 200; i++)
            ASSERT(doc_is(ix, i));
        fds_index_stats_get(ix, &st);
        ASSERT_EQ(st.docs_count, (uint64_t)batches * 200);
        /* version 2 blocks are smaller (one segment against several is
         * only fewer, fuller blocks on top) */
        ASSERT(st.stored_fields_bytes < v1_bytes);
        fds_index_release(ix);
        fds_store_close(s);
    }
}

/* Below the free-space floor writes are refused with Elasticsearch's
 * flood-stage block and nothing of them is kept; gets keep serving; once
 * the floor is met again writes go through by themselves. */
/* The nice value of this process's thread named `name` (its comm), or
 * INT_MIN while there is none. */
static int thread_nice(const char *name)
{
    int nice = INT_MIN;
    DIR *d = opendir("/proc/self/task");
    struct dirent *de;
    while (d && nice == INT_MIN && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        if (strcmp(buf, name))
            continue;
        /* stat: pid (comm) state, then nice is field 19 (proc(5)) */
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", de->d_name);
        f = fopen(path, "r");
        n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        char *p = strrchr(buf, ')');
        for (int field = 2; p && field < 19; field++)
            p = strchr(p + 1, ' ');
        if (p)
            nice = atoi(p + 1);
    }
    if (d)
        closedir(d);
    return nice;
}

/* The flusher and the background thread run below the priority of the
 * threads that answer requests (store_int.h, fds__thread_background);
 * the thread that starts them keeps its own. */
static void test_background_threads_niced(void)
{
    char data[1024];
    snprintf(data, sizeof data, "%.900s/bgnice", dir);
    fds_store *s;
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
    errno = 0;
    int mine = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    REQUIRE_EQ(errno, 0);
    int want = mine > FDS__BACKGROUND_NICE ? mine : FDS__BACKGROUND_NICE;
    REQUIRE_EQ(fds_store_start_background(s), 0);
    /* each thread names and renices itself as it starts: wait for both */
    int fl = INT_MIN, bg = INT_MIN;
    for (int i = 0; i < 5000 && (fl != want || bg != want); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        fl = thread_nice("fds-flusher");
        bg = thread_nice("fds-background");
    }
    ASSERT_EQ(fl, want);
    ASSERT_EQ(bg, want);
    ASSERT_EQ(getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)), mine);
    fds_store_close(s);
}

static void test_min_free_disk(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("diskfloor", data, "full", NULL, NULL, &s, &ix), 0);
    fds_err e;
    REQUIRE_EQ(put_docs(ix, 0, 10, true), 0);
    fds_store_set_min_free_disk(s, UINT64_MAX); /* more than any disk has */
    fds_write_op put = {.type = FDS_OP_INDEX, .id = "new", .id_len = 3,
                        .src = (const uint8_t *)"{}", .src_len = 2};
    fds_write_result r;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_index_write(ix, &put, 1, &r, false, &e), FDS_EIO);
    REQUIRE_EQ(e.kind, FDS_KIND_CLUSTER_BLOCK);
    REQUIRE(!strcmp(e.reason, "index [full] blocked by: [TOO_MANY_REQUESTS/12/"
                             "disk usage exceeded flood-stage watermark, index "
                             "has read-only-allow-delete block];"));
    fds_doc d;
    REQUIRE_EQ(fds_index_get(ix, "new", 3, &d, NULL), FDS_ENOTFOUND);
    REQUIRE(doc_is(ix, 9));
    fds_store_set_min_free_disk(s, 1);
    REQUIRE_EQ(fds_index_write(ix, &put, 1, &r, true, &e), 0);
    REQUIRE_EQ(r.code, 0);
    REQUIRE_EQ(fds_index_get(ix, "new", 3, &d, NULL), 0);
    free(d.src);
    /* no floor, and the catalogue cannot grow (SQLite's max_page_count
     * gives the SQLITE_FULL of a full disk): the same block, nothing kept */
    fds_store_set_min_free_disk(s, 0);
    sqlite3_int64 pages = 0;
    sqlite3_stmt *st;
    REQUIRE_EQ(sqlite3_prepare_v2(s->db, "PRAGMA page_count", -1, &st, NULL), 0);
    if (sqlite3_step(st) == SQLITE_ROW)
        pages = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA max_page_count=%lld", (long long)pages);
    REQUIRE_EQ(sqlite3_exec(s->db, sql, NULL, NULL, NULL), 0);
    static char big[1 << 20];
    memset(big, 'x', sizeof big);
    memcpy(big, "{\"b\":\"", 6);
    memcpy(big + sizeof big - 2, "\"}", 2);
    put = (fds_write_op){.type = FDS_OP_INDEX, .id = "big", .id_len = 3,
                         .src = (const uint8_t *)big, .src_len = sizeof big};
    fds_err_clear(&e);
    REQUIRE_EQ(fds_index_write(ix, &put, 1, &r, false, &e), FDS_EIO);
    REQUIRE_EQ(e.kind, FDS_KIND_CLUSTER_BLOCK);
    REQUIRE_EQ(fds_index_get(ix, "big", 3, &d, NULL), FDS_ENOTFOUND);
    REQUIRE_EQ(sqlite3_exec(s->db, "PRAGMA max_page_count=4294967294", NULL, NULL,
                           NULL), 0);
    REQUIRE_EQ(fds_index_write(ix, &put, 1, &r, false, &e), 0);
    REQUIRE_EQ(r.code, 0);
    REQUIRE_EQ(fds_index_get(ix, "big", 3, &d, NULL), 0);
    REQUIRE_EQ(d.src_len, sizeof big);
    free(d.src);
    fds_index_release(ix);
    fds_store_close(s);
}

static void test_lifecycle(void)
{
    fds_store *s;
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(dir, &s, &e), 0);
    fds_index_settings set;
    fds_index_settings_default(&set);
    fds_settings_set(&set, "index.codec", "ZSTD", NULL);
    REQUIRE_EQ(fds_store_create_index(s, "t", &set, NULL, &e), 0);
    REQUIRE_EQ(fds_store_create_index(s, "t", &set, NULL, &e), FDS_EEXIST);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_create_index(s, "Bad", &set, NULL, &e), FDS_EINVAL);
    fds_index *ix;
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), 0);
    REQUIRE_EQ(put_docs(ix, 0, 3000, true), 0);   /* segment 1 */
    REQUIRE_EQ(put_docs(ix, 3000, 4000, true), 0); /* segment 2 */
    REQUIRE_EQ(put_docs(ix, 4000, 4500, false), 0); /* buffer + translog only */
    REQUIRE(doc_is(ix, 10) && doc_is(ix, 3500) && doc_is(ix, 4499));
    fds_index_stats st;
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.docs_count, 4000u);
    REQUIRE_EQ(st.buffered_docs, 500u);
    REQUIRE_EQ(st.segments, 2u);
    fds_index_release(ix);
    fds_store_close(s);

    /* a stray file is removed at open; the translog is replayed */
    char stray[4096];
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(dir, &s, &e), 0);
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), 0);
    snprintf(stray, sizeof stray, "%s/indices/%s/seg_999.fdt", dir, fds_index_uuid(ix));
    fds_index_release(ix);
    fds_store_close(s);
    FILE *f = fopen(stray, "w");
    REQUIRE(f != NULL);
    fputs("half-written", f);
    fclose(f);
    REQUIRE_EQ(fds_store_open(dir, &s, &e), 0);
    REQUIRE(access(stray, F_OK) != 0);
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), 0);
    REQUIRE(doc_is(ix, 4499));
    REQUIRE_EQ(fds_index_refresh(ix, &e), 0);
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.docs_count, 4500u);

    /* replace and delete: the old copies stop being visible */
    REQUIRE_EQ(put_docs(ix, 0, 100, true), 0);
    fds_write_op del = {.type = FDS_OP_DELETE, .id = "5", .id_len = 1};
    fds_write_result r;
    REQUIRE_EQ(fds_index_write(ix, &del, 1, &r, true, &e), 0);
    REQUIRE(r.found);
    fds_doc d;
    REQUIRE_EQ(fds_index_get(ix, "5", 1, &d, NULL), FDS_ENOTFOUND);
    REQUIRE(doc_is(ix, 6));
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.docs_count, 4499u);
    REQUIRE_EQ(st.docs_deleted, 101u); /* 100 old copies + the new copy of 5 */
    fds_write_op cr = {.type = FDS_OP_CREATE, .id = "6", .id_len = 1,
                       .src = (const uint8_t *)"{}", .src_len = 2};
    REQUIRE_EQ(fds_index_write(ix, &cr, 1, &r, false, &e), 0);
    REQUIRE_EQ(r.code, FDS_ECONFLICT);

    /* force-merge: deletes expunged, every doc still exact */
    REQUIRE_EQ(fds_index_forcemerge(ix, 1, &e), 0);
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.segments, 1u);
    REQUIRE_EQ(st.docs_count, 4499u);
    REQUIRE_EQ(st.docs_deleted, 0u);
    for (int i = 0; i < 4500; i += 7)
        REQUIRE(i == 5 || doc_is(ix, i));

    /* clean segments with today's settings: blocks copied unchanged */
    REQUIRE_EQ(put_docs(ix, 5000, 6000, true), 0);
    REQUIRE_EQ(fds_index_forcemerge(ix, 1, &e), 0);
    fds_segment_info *si;
    size_t ns;
    REQUIRE_EQ(fds_index_segments(ix, &si, &ns), 0);
    REQUIRE_EQ(ns, 1u);
    REQUIRE_EQ(si[0].docs_count, 5499u);
    free(si);
    REQUIRE(doc_is(ix, 5999) && doc_is(ix, 4000) && doc_is(ix, 1));

    /* a damaged byte in a block gives an error naming index, segment and
     * block, never wrong bytes */
    REQUIRE_EQ(fds_index_segments(ix, &si, &ns), 0);
    char fdt[4096];
    snprintf(fdt, sizeof fdt, "%s/indices/%s/%s.fdt", dir, fds_index_uuid(ix), si[0].name);
    free(si);
    fds_index_release(ix);
    fds_store_close(s);
    f = fopen(fdt, "r+b");
    REQUIRE(f != NULL);
    fseek(f, 100, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, 100, SEEK_SET);
    fputc(ch ^ 0x5A, f);
    fclose(f);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(dir, &s, &e), 0);
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), 0);
    fds_err_clear(&e);
    int rc = fds_index_get(ix, "100", 3, &d, &e); /* first doc of the file */
    if (rc != FDS_ECORRUPT && rc != FDS_EDICT)
        fprintf(stderr, "get after damage: rc=%d (%s) %s\n", rc, fds_strerror(rc), e.reason);
    REQUIRE(rc == FDS_ECORRUPT || rc == FDS_EDICT);
    REQUIRE(strstr(e.reason, "[t]") && strstr(e.reason, "segment") &&
           strstr(e.reason, "block"));
    fds_index_release(ix);
    REQUIRE_EQ(fds_store_delete_index(s, "t", &e), 0);
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), FDS_ENOTFOUND);
    fds_store_close(s);
}

/* Elasticsearch's Murmur3HashFunctionTests.testKnownValues, and the shard
 * formula of OperationRouting on top of it. */
static void test_routing(void)
{
    static const struct {
        uint32_t hash;
        const char *s;
    } known[] = {
        {0x5a0cb7c3, "hell"},
        {0xd7c31989, "hello"},
        {0x22ab2984, "hello w"},
        {0xdf0ca123, "hello wo"},
        {0xe7744d61, "hello wor"},
        {0xe07db09c, "The quick brown fox jumps over the lazy dog"},
        {0x4e63d2ad, "The quick brown fox jumps over the lazy cog"},
    };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        REQUIRE_EQ((uint32_t)fds_routing_hash(known[i].s, strlen(known[i].s)),
                   known[i].hash);
    /* calculateNumRoutingShards */
    REQUIRE_EQ(fds_routing_shards_default(1), 1024u);
    REQUIRE_EQ(fds_routing_shards_default(5), 640u);
    REQUIRE_EQ(fds_routing_shards_default(2), 1024u);
    REQUIRE_EQ(fds_routing_shards_default(3), 768u);
    REQUIRE_EQ(fds_routing_shards_default(1024), 2048u);
    /* floorMod(hash, 640) / 128: "hello" is 0xd7c31989 = -675079799,
     * floorMod 640 = 521 -> shard 4; "hell" 0x5a0cb7c3 = 1510782915,
     * mod 640 = 195 -> shard 1 */
    REQUIRE_EQ(fds_routing_shard("hello", 5, 5, 640), 4u);
    REQUIRE_EQ(fds_routing_shard("hell", 4, 5, 640), 1u);
    REQUIRE_EQ(fds_routing_shard("hello", 5, 1, 1024), 0u);
    /* a routing shards value that is not a multiple counts as the default */
    REQUIRE_EQ(fds_routing_shard("hello", 5, 5, 7), 4u);
    /* non-ASCII: UTF-16 code units, a surrogate pair for U+1F335 */
    REQUIRE(fds_routing_hash("\xc3\xa9", 2) != fds_routing_hash("\xc3", 1));
    REQUIRE(fds_routing_hash("\xf0\x9f\x8c\xb5", 4) !=
            fds_routing_hash("\xef\xbf\xbd", 3));
    /* settings */
    fds_index_settings st;
    fds_index_settings_default(&st);
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_settings_set(&st, "index.number_of_shards", "5", &e), 0);
    REQUIRE_EQ(fds_settings_set(&st, "index.number_of_shards", "0", &e), FDS_EINVAL);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_settings_set(&st, "index.number_of_shards", "1025", &e), FDS_EINVAL);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_settings_set(&st, "index.number_of_routing_shards", "4", &e), 0);
    REQUIRE_EQ(fds_settings_check_shards(&st, &e), FDS_EINVAL);
    REQUIRE(strstr(e.reason, "must be >= index.number_of_shards [5]") != NULL);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_settings_set(&st, "index.number_of_routing_shards", "12", &e), 0);
    REQUIRE_EQ(fds_settings_check_shards(&st, &e), FDS_EINVAL);
    REQUIRE(strstr(e.reason, "the number of source shards [5] must be a factor of [12]"));
    fds_err_clear(&e);
    REQUIRE_EQ(fds_settings_set(&st, "index.number_of_routing_shards", "10", &e), 0);
    REQUIRE_EQ(fds_settings_check_shards(&st, &e), 0);
}

/* A 5-shard index: documents spread over shards, one segment per shard a
 * refresh, a document written with a routing found only with it, a
 * restart keeps shards, force-merge leaves one segment per shard. */
static void test_shards(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("shards", data, "sh", "index.number_of_shards",
                                "5", &s, &ix), 0);
    REQUIRE_EQ(fds_index_nshards(ix), 5u);
    REQUIRE_EQ(put_docs(ix, 0, 500, true), 0);
    uint64_t sum = 0;
    for (uint32_t sh = 0; sh < 5; sh++) {
        fds_index_stats st;
        fds_index_shard_stats_get(ix, sh, &st);
        REQUIRE(st.docs_count > 50);
        REQUIRE_EQ(st.segments, 1u);
        sum += st.docs_count;
    }
    REQUIRE_EQ(sum, 500u);
    REQUIRE(doc_is(ix, 0) && doc_is(ix, 499));
    /* routed write: found with the routing only (unless both agree) */
    const char *src = "{\"n\":1}";
    uint32_t rs = fds_index_shard_of(ix, "r1", 2), is = fds_index_shard_of(ix, "x", 1);
    const char *rt = "r1";
    for (int k = 2; rs == is; k++) { /* a routing whose shard differs */
        static char b[16];
        snprintf(b, sizeof b, "r%d", k);
        rt = b;
        rs = fds_index_shard_of(ix, rt, strlen(rt));
    }
    fds_write_op op = {.type = FDS_OP_INDEX, .id = "x", .id_len = 1,
                       .src = (const uint8_t *)src, .src_len = strlen(src),
                       .routing = rt, .routing_len = strlen(rt)};
    fds_write_result r;
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_index_write(ix, &op, 1, &r, false, &e), 0);
    REQUIRE_EQ(r.shard, rs);
    fds_doc d;
    REQUIRE_EQ(fds_index_get(ix, "x", 1, &d, NULL), FDS_ENOTFOUND);
    REQUIRE_EQ(fds_index_get_routed(ix, "x", 1, rt, strlen(rt), true, &d, NULL), 0);
    REQUIRE(d.has_routing && !strcmp(d.routing, rt));
    free(d.src);
    REQUIRE_EQ(fds_index_refresh(ix, &e), 0);
    REQUIRE_EQ(fds_index_get_routed(ix, "x", 1, rt, strlen(rt), false, &d, NULL), 0);
    REQUIRE(d.has_routing && !strcmp(d.routing, rt));
    free(d.src);
    REQUIRE_EQ(fds_index_get_searchable(ix, "x", 1, &d, NULL), FDS_ENOTFOUND);
    /* the same id without routing is another document */
    op.routing = NULL;
    REQUIRE_EQ(fds_index_write(ix, &op, 1, &r, false, &e), 0);
    REQUIRE(r.created);
    REQUIRE_EQ(put_docs(ix, 500, 600, false), 0); /* left in the translog */
    fds_index_release(ix);
    fds_store_close(s);
    REQUIRE_EQ(reopen(data, "sh", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) == NULL);
    REQUIRE_EQ(fds_index_nshards(ix), 5u);
    REQUIRE(doc_is(ix, 7) && doc_is(ix, 599));
    REQUIRE_EQ(fds_index_get_routed(ix, "x", 1, rt, strlen(rt), true, &d, NULL), 0);
    REQUIRE(d.has_routing && !strcmp(d.routing, rt));
    free(d.src);
    REQUIRE_EQ(fds_index_get(ix, "x", 1, &d, NULL), 0);
    REQUIRE(!d.has_routing);
    free(d.src);
    REQUIRE_EQ(put_docs(ix, 600, 700, true), 0);
    REQUIRE_EQ(fds_index_forcemerge(ix, 1, &e), 0);
    fds_index_view *v;
    REQUIRE_EQ(fds_index_view_acquire(ix, &v, &e), 0);
    unsigned nseg;
    fds_index_view_segments(v, &nseg);
    REQUIRE_EQ(nseg, 5u);
    for (unsigned i = 0; i < nseg; i++)
        REQUIRE_EQ(fds_index_view_segment_shard(v, i), i);
    fds_index_view_release(v);
    /* the routing survives the merge */
    REQUIRE_EQ(fds_index_get_routed(ix, "x", 1, rt, strlen(rt), false, &d, NULL), 0);
    REQUIRE(d.has_routing && !strcmp(d.routing, rt));
    free(d.src);
    fds_index_stats all;
    fds_index_stats_get(ix, &all);
    REQUIRE_EQ(all.docs_count, 702u);
    fds_index_release(ix);
    fds_store_close(s);
}

/* The shard count of each shard of ix, into out[0, nshards). */
static void shard_counts(fds_index *ix, uint64_t *out)
{
    for (uint32_t sh = 0; sh < fds_index_nshards(ix); sh++) {
        fds_index_stats st;
        fds_index_shard_stats_get(ix, sh, &st);
        out[sh] = st.docs_count;
    }
}

/* Resize (clone, shrink, split): every document in the target shard of
 * its id, with its source; segments copied for a clone and a shrink of a
 * ZSTD index (blocks naming the target's copy of the dictionary), a split
 * re-encoded; all kept across a reopen; a taken name refused; start-up
 * removes the row and folder of a resize a crash interrupted. */
static void test_resize(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("resize", data, "src", "index.number_of_shards", "4",
                                &s, &ix), 0);
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    REQUIRE_EQ(fds_settings_set(&set, "index.codec", "ZSTD", NULL), 0);
    REQUIRE_EQ(fds_index_put_settings(ix, &set, NULL), 0);
    REQUIRE_EQ(put_docs(ix, 0, 300, true), 0);
    REQUIRE_EQ(put_docs(ix, 300, 400, false), 0); /* buffered: refreshed first */
    fds_err e;
    fds_err_clear(&e);
    fds_index_settings t = set;
    REQUIRE_EQ(fds_store_resize_index(s, ix, "clone", &t, NULL, 0, &e), 0);
    t.number_of_shards = 2;
    REQUIRE_EQ(fds_store_resize_index(s, ix, "shrunk", &t, NULL, 0, &e), 0);
    t.number_of_shards = 8;
    REQUIRE_EQ(fds_store_resize_index(s, ix, "split", &t, NULL, 0, &e), 0);
    REQUIRE_EQ(fds_store_resize_index(s, ix, "split", &t, NULL, 0, &e), FDS_EEXIST);
    REQUIRE_EQ(e.kind, FDS_KIND_ALREADY_EXISTS);
    uint64_t src[4], cl[4], sh[2], sp[8];
    shard_counts(ix, src);
    fds_index_release(ix);
    fds_store_close(s);
    /* an interrupted resize: a row under the temporary name, a folder */
    REQUIRE_EQ(cat_sql(data, "INSERT INTO indices(name, uuid, created_ms) VALUES('"
                             FDS__RESIZE_PREFIX "x', 'halfmade', 0); INSERT INTO "
                             "settings(index_id, key, value) SELECT id, 'index.codec', "
                             "'ZSTD' FROM indices WHERE uuid='halfmade'"), 0);
    char path[1100];
    snprintf(path, sizeof path, "%s/indices/halfmade", data);
    REQUIRE_EQ(mkdir(path, 0755), 0);
    const char *names[] = {"clone", "shrunk", "split"};
    uint64_t *counts[] = {cl, sh, sp};
    uint32_t want[] = {4, 2, 8};
    for (int k = 0; k < 3; k++) {
        REQUIRE_EQ(reopen(data, names[k], &s, &ix), 0);
        REQUIRE(fds_index_failure(ix) == NULL);
        REQUIRE_EQ(fds_index_nshards(ix), want[k]);
        REQUIRE_EQ(fds_index_routing_shards(ix), 1024u);
        shard_counts(ix, counts[k]);
        for (int i = 0; i < 400; i++) {
            char id[16];
            snprintf(id, sizeof id, "%d", i);
            if (!doc_is(ix, i))
                REQUIRE(doc_is(ix, i));
            fds_doc d;
            REQUIRE_EQ(fds_index_get_routed(ix, id, strlen(id), NULL, 0, false, &d, NULL), 0);
            free(d.src);
        }
        fds_segment_info *segs;
        size_t n;
        REQUIRE_EQ(fds_index_segments(ix, &segs, &n), 0);
        for (size_t i = 0; i < n; i++) /* the copy of the source's dictionary */
            REQUIRE(segs[i].dict_id != 0 && segs[i].codec == FDS_CODEC_ZSTD);
        free(segs);
        if (k == 0)
            REQUIRE_EQ(put_docs(ix, 400, 410, true), 0); /* a writable clone */
        fds_index_release(ix);
        fds_store_close(s);
    }
    for (int i = 0; i < 4; i++)
        REQUIRE_EQ(cl[i], src[i]);
    REQUIRE_EQ(sh[0], src[0] + src[1]);
    REQUIRE_EQ(sh[1], src[2] + src[3]);
    for (int i = 0; i < 4; i++) /* source shard i splits into 2i and 2i+1 */
        REQUIRE_EQ(sp[2 * i] + sp[2 * i + 1], src[i]);
    REQUIRE_EQ(count_files(path), -1);
    char cat[4096];
    sqlite3 *db = cat_open(data, cat);
    sqlite3_stmt *st = NULL;
    REQUIRE(db != NULL);
    REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM indices WHERE substr(name, "
                                      "1, 1) = '_' OR uuid = 'halfmade'", -1, &st, NULL),
               SQLITE_OK);
    REQUIRE_EQ(sqlite3_step(st), SQLITE_ROW);
    REQUIRE_EQ(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* Aliases and templates: atomic alias actions with Elasticsearch's rules,
 * kept across a reopen, dropped with their index; a damaged alias row is
 * left out at start-up; a schema-2 catalogue gains both tables. */
static void test_aliases_templates(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("aliases", data, "a1", "index.codec", "ZSTD", &s,
                               &ix), 0);
    fds_index_release(ix);
    fds_err e;
    fds_err_clear(&e);
    fds_index_settings set;
    fds_index_settings_default(&set);
    fds_alias at_create = {.alias = "born", .is_write_index = -1,
                           .is_hidden = -1};
    REQUIRE_EQ(fds_store_create_index_aliased(s, "a2", &set, NULL, &at_create,
                                              1, &e), 0);
    fds_alias_action acts[] = {
        {.op = FDS_ALIAS_ADD, .a = {.alias = "both", .index = "a1",
                                    .filter = "{\"term\":{\"k\":\"x\"}}",
                                    .index_routing = "1", .is_write_index = 1,
                                    .is_hidden = -1}},
        {.op = FDS_ALIAS_ADD, .a = {.alias = "both", .index = "a2",
                                    .is_write_index = -1, .is_hidden = -1}},
    };
    REQUIRE_EQ(fds_store_aliases_update(s, acts, 2, &e), 0);
    /* all or nothing: the second action fails, the first is not kept */
    fds_alias_action bad[] = {
        {.op = FDS_ALIAS_ADD, .a = {.alias = "new", .index = "a1",
                                    .is_write_index = -1, .is_hidden = -1}},
        {.op = FDS_ALIAS_ADD, .a = {.alias = "both", .index = "a2",
                                    .is_write_index = 1, .is_hidden = -1}},
    };
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_aliases_update(s, bad, 2, &e), FDS_EINVAL);
    ASSERT(strstr(e.reason, "more than one write index") != NULL);
    ASSERT(!fds_store_alias_exists(s, "new"));
    fds_alias_action clash = {.op = FDS_ALIAS_ADD,
                              .a = {.alias = "a2", .index = "a1",
                                    .is_write_index = -1, .is_hidden = -1}};
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_aliases_update(s, &clash, 1, &e), FDS_EINVAL);
    ASSERT_EQ(e.kind, FDS_KIND_INVALID_ALIAS_NAME);
    fds_err_clear(&e);
    ASSERT_EQ(fds_store_create_index(s, "both", &set, NULL, &e), FDS_EINVAL);
    ASSERT_EQ(e.kind, FDS_KIND_INVALID_INDEX_NAME);
    fds_alias_action gone = {.op = FDS_ALIAS_REMOVE, .must_exist = true,
                             .a = {.alias = "nope", .index = "a1"}};
    fds_err_clear(&e);
    ASSERT_EQ(fds_store_aliases_update(s, &gone, 1, &e), FDS_ENOTFOUND);
    ASSERT_EQ(e.kind, FDS_KIND_ALIASES_NOT_FOUND);
    REQUIRE_EQ(fds_store_template_put(s, FDS_TEMPLATE_INDEX, "t1",
                                      "{\"index_patterns\":[\"a*\"]}", &e), 0);
    REQUIRE_EQ(fds_store_template_put(s, FDS_TEMPLATE_LEGACY, "t1", "{}", &e), 0);
    REQUIRE_EQ(fds_store_template_put(s, FDS_TEMPLATE_INDEX, "t0", "{}", &e), 0);
    fds_store_close(s);

    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
    fds_alias *al;
    size_t n;
    REQUIRE_EQ(fds_store_aliases_list(s, &al, &n), 0);
    REQUIRE_EQ(n, 3);
    ASSERT_STR(al[0].alias, "born");
    ASSERT_STR(al[1].alias, "both");
    ASSERT_STR(al[1].index, "a1");
    ASSERT_STR(al[1].filter, "{\"term\":{\"k\":\"x\"}}");
    ASSERT_STR(al[1].index_routing, "1");
    ASSERT(al[1].search_routing == NULL);
    ASSERT_EQ(al[1].is_write_index, 1);
    ASSERT_EQ(al[1].is_hidden, -1);
    ASSERT_STR(al[2].index, "a2");
    ASSERT_EQ(al[2].is_write_index, -1);
    fds_aliases_free(al, n);
    char **names, **jsons;
    REQUIRE_EQ(fds_store_templates_list(s, FDS_TEMPLATE_INDEX, &names, &jsons,
                                        &n), 0);
    REQUIRE_EQ(n, 2);
    ASSERT_STR(names[0], "t0");
    ASSERT_STR(jsons[1], "{\"index_patterns\":[\"a*\"]}");
    fds_templates_free(names, jsons, n);
    REQUIRE_EQ(fds_store_template_delete(s, FDS_TEMPLATE_INDEX, "t0", &e), 0);
    fds_err_clear(&e);
    ASSERT_EQ(fds_store_template_delete(s, FDS_TEMPLATE_INDEX, "t0", &e),
              FDS_ENOTFOUND);
    /* deleting an index takes its aliases with it, in the catalogue too */
    REQUIRE_EQ(fds_store_delete_index(s, "a2", &e), 0);
    ASSERT(!fds_store_alias_exists(s, "born"));
    fds_store_close(s);
    REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
    REQUIRE_EQ(fds_store_aliases_list(s, &al, &n), 0);
    ASSERT_EQ(n, 1);
    fds_aliases_free(al, n);
    REQUIRE_EQ(fds_store_templates_list(s, FDS_TEMPLATE_INDEX, &names, &jsons,
                                        &n), 0);
    ASSERT_EQ(n, 1);
    fds_templates_free(names, jsons, n);
    fds_store_close(s);

    /* a flipped bit in an alias row: the alias is left out, the node opens */
    REQUIRE_EQ(flip_bit(data, "aliases", "filter", "1", 2), 0);
    REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
    ASSERT(!fds_store_alias_exists(s, "both"));
    fds_store_close(s);
    /* schema 2 (no aliases or templates tables, no shard columns) opens as
     * schema 3 */
    REQUIRE_EQ(cat_sql(data, "DROP TABLE aliases; DROP TABLE templates;"
                            "ALTER TABLE segments DROP COLUMN shard;"
                            "ALTER TABLE segments DROP COLUMN routing;"
                            "ALTER TABLE translog DROP COLUMN shard;"
                            "ALTER TABLE translog DROP COLUMN routing;"
                            "UPDATE meta SET value='2'; PRAGMA user_version=2;"),
               0);
    REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
    fds_alias_action again = {.op = FDS_ALIAS_ADD,
                              .a = {.alias = "back", .index = "a1",
                                    .is_write_index = -1, .is_hidden = -1}};
    ASSERT_EQ(fds_store_aliases_update(s, &again, 1, &e), 0);
    ASSERT(fds_store_alias_exists(s, "back"));
    /* remove_index with an alias action: the index and its aliases go in
     * the same transaction; a later action on it fails and undoes both */
    REQUIRE_EQ(fds_store_create_index(s, "a3", &set, NULL, &e), 0);
    fds_alias_action drop[] = {
        {.op = FDS_ALIAS_ADD, .a = {.alias = "back3", .index = "a3",
                                    .is_write_index = -1, .is_hidden = -1}},
        {.op = FDS_ALIAS_REMOVE_INDEX, .a = {.index = "a3"}},
        {.op = FDS_ALIAS_ADD, .a = {.alias = "late", .index = "a3",
                                    .is_write_index = -1, .is_hidden = -1}},
    };
    fds_err_clear(&e);
    ASSERT_EQ(fds_store_aliases_update(s, drop, 3, &e), FDS_ENOTFOUND);
    REQUIRE_EQ(fds_store_get_index(s, "a3", &ix, NULL), 0);
    fds_index_release(ix);
    ASSERT(!fds_store_alias_exists(s, "back3"));
    REQUIRE_EQ(fds_store_aliases_update(s, drop, 2, &e), 0);
    ASSERT_EQ(fds_store_get_index(s, "a3", &ix, NULL), FDS_ENOTFOUND);
    ASSERT(!fds_store_alias_exists(s, "back3"));
    fds_store_close(s);
    REQUIRE_EQ(fds_store_open(data, &s, &e), 0);
    ASSERT_EQ(fds_store_get_index(s, "a3", &ix, NULL), FDS_ENOTFOUND);
    ASSERT(!fds_store_alias_exists(s, "back3"));
    ASSERT(fds_store_alias_exists(s, "back"));
    fds_store_close(s);
}

/* The merge policy over a simulated build: refreshes of two parts, then
 * the merges fds__merge_pick asks for until the shard is within bounds.
 * Returns the docs rewritten by merges over the docs written; -1 on a
 * pick outside the list or a shard left over bounds. */
static double merge_policy_run(unsigned refreshes, bool uneven)
{
    uint64_t segs[FDS_MERGE_SEGMENTS_MAX + 2];
    unsigned n = 0;
    uint64_t written = 0, rewritten = 0, lcg = 12345;
    for (unsigned r = 0; r < refreshes; r++) {
        for (int part = 0; part < 2; part++) {
            uint64_t d = 50000;
            if (uneven) { /* periodic refreshes of a few docs among full ones */
                lcg = lcg * 6364136223846793005u + 1442695040888963407u;
                d = (lcg >> 33) % 4 ? 1 + (lcg >> 40) % 500 : 50000;
            }
            segs[n++] = d;
            written += d;
            unsigned from, count;
            while (fds__merge_pick(segs, n, &from, &count)) {
                if (count < 2 || from + count > n)
                    return -1;
                uint64_t sum = 0;
                for (unsigned i = from; i < from + count; i++)
                    sum += segs[i];
                rewritten += sum;
                segs[from] = sum;
                memmove(segs + from + 1, segs + from + count,
                        (n - from - count) * sizeof *segs);
                n -= count - 1;
            }
            if (n > FDS_MERGE_SEGMENTS_MAX)
                return -1;
        }
    }
    return (double)rewritten / (double)written;
}

/* Merges stay balanced: each doc is rewritten a few times (about log N),
 * not once per merge of the shard as when the run of fewest docs was
 * merged (that policy: 14x over 100 refreshes, 94x over 500). */
static void test_merge_policy(void)
{
    uint64_t few[FDS_MERGE_SEGMENTS_MAX] = {0};
    unsigned from = 99, count = 99;
    ASSERT(!fds__merge_pick(few, FDS_MERGE_SEGMENTS_MAX, &from, &count));
    ASSERT(from == 99 && count == 99);
    /* one big segment and small ones: the small ones merge, not the big */
    uint64_t tail[FDS_MERGE_SEGMENTS_MAX + 1] = {1000000};
    for (unsigned i = 1; i <= FDS_MERGE_SEGMENTS_MAX; i++)
        tail[i] = 50000;
    ASSERT(fds__merge_pick(tail, FDS_MERGE_SEGMENTS_MAX + 1, &from, &count));
    ASSERT(from >= 1 && count >= 2);
    double a100 = merge_policy_run(100, false);
    double a500 = merge_policy_run(500, false);
    double u500 = merge_policy_run(500, true);
    printf("merge policy: docs rewritten per doc written: %.2f (100 "
           "refreshes), %.2f (500), %.2f (500, uneven)\n", a100, a500, u500);
    ASSERT(a100 >= 0 && a100 < 4);
    ASSERT(a500 >= 0 && a500 < 6);
    ASSERT(u500 >= 0 && u500 < 6);
}

/* check-index (check.c): a damaged stored-fields block met by a get
 * fails the index and leaves the marker, so a reopen is still failed;
 * fds_index_check finds the block without failing anything, counts the
 * live documents its repair loses, and with exorcise deletes exactly
 * those: the index opens healthy, the rest of its documents exact, and a
 * second check finds no damage (the block holds only deleted docs). */
static void test_check_index(void)
{
    char data[1024];
    fds_store *s;
    fds_index *ix;
    REQUIRE_EQ(store_with_index("chk", data, "c", NULL, NULL, &s, &ix), 0);
    REQUIRE_EQ(put_docs(ix, 0, 300, true), 0);
    REQUIRE_EQ(put_docs(ix, 300, 600, true), 0);
    fds_segment_info *si;
    size_t ns;
    REQUIRE_EQ(fds_index_segments(ix, &si, &ns), 0);
    REQUIRE_EQ(ns, 2u);
    char fdt[2048];
    snprintf(fdt, sizeof fdt, "%s/indices/%s/%s.fdt", data, fds_index_uuid(ix), si[0].name);
    free(si);
    fds_index_release(ix);
    fds_store_close(s);
    FILE *f = fopen(fdt, "r+b");
    REQUIRE(f != NULL);
    fseek(f, 8 + 50, SEEK_SET); /* inside block 0 */
    int ch = fgetc(f);
    fseek(f, 8 + 50, SEEK_SET);
    fputc(ch ^ 0x20, f);
    fclose(f);

    REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) == NULL); /* blocks are checked when read */
    fds_doc d;
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_index_get(ix, "0", 1, &d, &e), FDS_ECORRUPT);
    REQUIRE(fds_index_failure(ix) && strstr(fds_index_failure(ix), ".fdt"));
    REQUIRE(!strstr(fds_index_failure(ix), dir)); /* relative */
    fds_index_release(ix);
    fds_store_close(s);

    REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) && strstr(fds_index_failure(ix), "marked corrupt"));
    fds_index_release(ix);
    fds_check_report rep;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_index_check(s, "c", false, &rep, &e), 0);
    REQUIRE_EQ(rep.nsegs, 2u);
    REQUIRE_EQ(rep.ndamaged, 1u);
    REQUIRE(rep.marker != NULL && !rep.exorcised);
    REQUIRE_EQ(rep.segs[0].repair, FDS_CHECK_DELETE_DOCS);
    REQUIRE_EQ(rep.segs[0].bad_blocks, 1u);
    uint64_t lost = rep.docs_lost;
    REQUIRE(lost >= 1 && lost <= 128 && lost == (uint64_t)rep.segs[0].docs_lost);
    REQUIRE_EQ(rep.live_kept, 600 - lost);
    REQUIRE_EQ(rep.segs[1].repair, FDS_CHECK_KEEP);
    fds_check_report_free(&rep);
    REQUIRE_EQ(fds_index_check(s, "c", true, &rep, &e), 0);
    REQUIRE(rep.exorcised && rep.docs_lost == lost);
    fds_check_report_free(&rep);
    fds_store_close(s);

    REQUIRE_EQ(reopen(data, "c", &s, &ix), 0);
    REQUIRE(fds_index_failure(ix) == NULL);
    fds_index_stats st;
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.docs_count, 600 - lost);
    for (int i = 0; i < 600; i++)
        REQUIRE((uint64_t)i < lost ? !doc_is(ix, i) : doc_is(ix, i));
    fds_index_release(ix);
    REQUIRE_EQ(fds_index_check(s, "c", false, &rep, &e), 0);
    REQUIRE(rep.ndamaged == 0 && rep.marker == NULL);
    REQUIRE_EQ(rep.segs[0].dead_blocks, 1u);
    REQUIRE_EQ(rep.live_kept, 600 - lost);
    fds_check_report_free(&rep);
    fds_store_close(s);
}

int main(void)
{
    dir = mkdtemp(tmpl);
    if (!dir)
        return 2;
    test_settings();
    test_routing();
    test_shards();
    test_resize();
    test_lifecycle();
    test_row_loop_error();
    test_catalog_read_error();
    test_catalog_checksums();
    test_catalog_migration();
    test_catalog_migration_v2();
    test_catalog_translog_v3();
    test_remove_index_beside_writes();
    test_translog_rows_of_a_large_batch();
    test_merge_policy();
    test_merge_is_one_step();
    test_search_not_behind_write();
    test_forcemerge_after_empty_rewrite();
    test_block_offset_wrap();
    test_delete_missing_and_limits();
    test_dirty_blocks_reencoded();
    test_old_block_format();
    test_min_free_disk();
    test_background_threads_niced();
    test_aliases_templates();
    test_check_index();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    printf("%s\n", fds_test_failures ? "store tests FAILED" : "store tests passed");
    return fds_test_failures ? 1 : 0;
}
