/*
 * catalog.c: the SQLite catalogue (DESIGN.md §4), the commit point of
 * fieldstore.  WAL mode; one connection guarded by fds_store.db_mu.
 *
 * Schema (version 4, PRAGMA user_version):
 *   indices(id, name UNIQUE, uuid, created_ms, open, next_seq, next_gen, crc)
 *   settings(index_id, key, value, crc)      one row per index.* setting
 *   mappings(index_id, json, crc)            src/query's mapping JSON
 *   dictionaries(id, index_id, codec, raw_len, sample_bytes, bytes, crc)
 *                                            bytes: a zstd frame
 *   segments(id, index_id, gen, max_doc, live, del_count, max_seq, crc,
 *            shard, routing)         routing: fds__routes' blob or NULL
 *   translog_batches(index_id, first_seq, last_seq, ops, crc)
 *                                    one row per write batch, its
 *                                    operations' records (buffer.c)
 *   translog(index_id, seq, op, doc_id, version, source, crc, shard,
 *            routing)                schema 3's translog, a row per
 *                                    operation: replayed, never written
 *   aliases(alias, index_id, filter, index_routing, search_routing,
 *           is_write_index, is_hidden, crc)   one row per (alias, index);
 *                                            the flags NULL when not given
 *   templates(kind, name, json, crc)         index, component and legacy
 *                                            templates as their JSON bodies
 *
 * Row checksums: `crc` is the CRC-32C (fds_crc32c) of the row's columns
 * listed by the FDS_CRC_COLS_* macros of catalog.h, in that order, each
 * encoded as (fds__crc_i64 / fds__crc_bytes):
 *   INTEGER      'i' then 8 bytes little-endian
 *   TEXT, BLOB   'b' then the length as 8 bytes little-endian, then the bytes
 *   NULL         'n'
 * SQLite checks its own pages only in part (a flipped bit inside a record
 * reads back as a different value); this makes a damaged live-docs bitset,
 * dictionary, mapping, segment row, setting or translog entry an error
 * naming the row instead of wrong results.  The counters of `indices`
 * (open, next_seq, next_gen) are rewritten by every write batch and are not
 * covered; start-up raises next_seq and next_gen past what the segments and
 * translog hold.
 *
 * A version-1 catalogue (no crc columns, user_version 0) is migrated at
 * open in one transaction: the columns are added and each row's checksum is
 * computed from the values it holds then (say so on stderr).  A version-2
 * catalogue (no shard columns: every index had one shard) gains
 * segments.shard/routing and translog.shard/routing, 0 and NULL in every
 * row, in one transaction; each row whose checksum holds under the
 * version-2 columns gets the new one, a row that fails it keeps its old
 * checksum and so still fails; it also gains the (empty) aliases and templates
 * tables: the schema below creates what is missing.  A version-3
 * catalogue gains the empty translog_batches table the same way; its
 * `translog` rows are replayed and trimmed as before, and new writes go to
 * the new table.  A build of schema 3 refuses a version-4 catalogue
 * rather than miss the writes of its translog_batches.
 *
 * A refresh or merge changes segments, live docs and the translog in one
 * transaction (fds__cat_begin / fds__cat_end).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "codec.h"

#define SCHEMA_VERSION 4

static const char *SCHEMA =
    /* pages freed when translog rows are dropped return to the file system
     * (fds_store's background thread runs incremental_vacuum); takes effect
     * for a catalogue created with it, before any table exists */
    "PRAGMA auto_vacuum=INCREMENTAL;"
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE IF NOT EXISTS indices(id INTEGER PRIMARY KEY, name TEXT "
    "UNIQUE NOT NULL, uuid TEXT NOT NULL, created_ms INTEGER NOT NULL, open "
    "INTEGER NOT NULL DEFAULT 1, next_seq INTEGER NOT NULL DEFAULT 0, next_gen "
    "INTEGER NOT NULL DEFAULT 1, crc INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS settings(index_id INTEGER NOT NULL, key TEXT "
    "NOT NULL, value TEXT NOT NULL, crc INTEGER NOT NULL DEFAULT 0, "
    "PRIMARY KEY(index_id, key));"
    "CREATE TABLE IF NOT EXISTS mappings(index_id INTEGER PRIMARY KEY, json "
    "TEXT NOT NULL, crc INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS dictionaries(id INTEGER PRIMARY KEY, index_id "
    "INTEGER NOT NULL, codec INTEGER NOT NULL, raw_len INTEGER NOT NULL, "
    "sample_bytes INTEGER NOT NULL, bytes BLOB NOT NULL, crc INTEGER NOT NULL "
    "DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS segments(id INTEGER PRIMARY KEY, index_id "
    "INTEGER NOT NULL, gen INTEGER NOT NULL, max_doc INTEGER NOT NULL, live "
    "BLOB, del_count INTEGER NOT NULL DEFAULT 0, max_seq INTEGER NOT NULL, "
    "crc INTEGER NOT NULL DEFAULT 0, shard INTEGER NOT NULL DEFAULT 0, "
    "routing BLOB);"
    "CREATE TABLE IF NOT EXISTS translog(index_id INTEGER NOT NULL, seq "
    "INTEGER NOT NULL, op INTEGER NOT NULL, doc_id BLOB NOT NULL, version "
    "INTEGER NOT NULL, source BLOB, crc INTEGER NOT NULL DEFAULT 0, "
    "shard INTEGER NOT NULL DEFAULT 0, routing BLOB, "
    "PRIMARY KEY(index_id, seq));"
    "CREATE TABLE IF NOT EXISTS aliases(alias TEXT NOT NULL, index_id INTEGER "
    "NOT NULL, filter TEXT, index_routing TEXT, search_routing TEXT, "
    "is_write_index INTEGER, is_hidden INTEGER, crc INTEGER NOT NULL DEFAULT "
    "0, PRIMARY KEY(alias, index_id));"
    "CREATE TABLE IF NOT EXISTS templates(kind INTEGER NOT NULL, name TEXT NOT "
    "NULL, json TEXT NOT NULL, crc INTEGER NOT NULL DEFAULT 0, "
    "PRIMARY KEY(kind, name));"
    "CREATE TABLE IF NOT EXISTS translog_batches(index_id INTEGER NOT NULL, "
    "first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, ops BLOB NOT "
    "NULL, crc INTEGER NOT NULL, PRIMARY KEY(index_id, first_seq));"
    "INSERT OR REPLACE INTO meta VALUES('schema_version','4');"
    "PRAGMA user_version=4;";

/* The tables schema 3 gave shard and routing columns, with the columns
 * their checksum covered in schema 2. */
static const struct {
    const char *table, *v2_cols;
    int v2_ncols;
} SHARD_TABLES[] = {
    {"segments", "index_id, gen, max_doc, del_count, max_seq, live", 6},
    {"translog", "index_id, seq, op, doc_id, version, source", 6},
};

/* The checksummed tables, the columns their checksum covers and the
 * schema version that added them. */
static const struct {
    const char *table, *cols;
    int ncols, since;
} CRC_TABLES[] = {
    {"indices", FDS_CRC_COLS_INDICES, FDS_CRC_NCOLS_INDICES, 1},
    {"settings", FDS_CRC_COLS_SETTINGS, FDS_CRC_NCOLS_SETTINGS, 1},
    {"mappings", FDS_CRC_COLS_MAPPINGS, FDS_CRC_NCOLS_MAPPINGS, 1},
    {"dictionaries", FDS_CRC_COLS_DICTIONARIES, FDS_CRC_NCOLS_DICTIONARIES, 1},
    {"segments", FDS_CRC_COLS_SEGMENTS, FDS_CRC_NCOLS_SEGMENTS, 1},
    {"translog", FDS_CRC_COLS_TRANSLOG, FDS_CRC_NCOLS_TRANSLOG, 1},
    {"aliases", FDS_CRC_COLS_ALIASES, FDS_CRC_NCOLS_ALIASES, 3},
    {"templates", FDS_CRC_COLS_TEMPLATES, FDS_CRC_NCOLS_TEMPLATES, 3},
    {"translog_batches", FDS_CRC_COLS_TRANSLOG_BATCHES,
     FDS_CRC_NCOLS_TRANSLOG_BATCHES, 4},
};

uint32_t fds__crc_i64(uint32_t crc, int64_t v)
{
    uint8_t b[9] = {'i'};
    for (int i = 0; i < 8; i++)
        b[1 + i] = (uint8_t)((uint64_t)v >> (8 * i));
    return fds_crc32c(crc, b, sizeof b);
}

uint32_t fds__crc_bytes(uint32_t crc, const void *p, size_t n)
{
    if (!p)
        return fds_crc32c(crc, "n", 1);
    uint8_t b[9] = {'b'};
    for (int i = 0; i < 8; i++)
        b[1 + i] = (uint8_t)((uint64_t)n >> (8 * i));
    crc = fds_crc32c(crc, b, sizeof b);
    return n ? fds_crc32c(crc, p, n) : crc;
}

uint32_t fds__cat_row_crc(sqlite3_stmt *st, int first, int n)
{
    uint32_t crc = 0;
    for (int c = first; c < first + n; c++)
        switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
            crc = fds__crc_i64(crc, sqlite3_column_int64(st, c));
            break;
        case SQLITE_NULL:
            crc = fds__crc_bytes(crc, NULL, 0);
            break;
        default: { /* TEXT and BLOB alike: the bytes as stored */
            const void *p = sqlite3_column_blob(st, c);
            size_t len = (size_t)sqlite3_column_bytes(st, c);
            crc = fds__crc_bytes(crc, p ? p : "", len);
        }
        }
    return crc;
}

bool fds__cat_row_ok(sqlite3_stmt *st, int first, int n)
{
    return sqlite3_column_type(st, first + n) == SQLITE_INTEGER &&
           (uint64_t)sqlite3_column_int64(st, first + n) ==
               fds__cat_row_crc(st, first, n);
}

int fds__cat_rechecksum(sqlite3 *db, const char *table, size_t *rows,
                        fds_err *err)
{
    size_t t = 0, nt = sizeof CRC_TABLES / sizeof *CRC_TABLES;
    while (t < nt && strcmp(CRC_TABLES[t].table, table))
        t++;
    if (t == nt)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_ILLEGAL_STATE,
                            "catalogue: no checksummed table [%s]", table);
    char sql[512];
    sqlite3_stmt *sel = NULL, *upd = NULL;
    snprintf(sql, sizeof sql, "SELECT rowid, %s FROM %s", CRC_TABLES[t].cols,
             CRC_TABLES[t].table);
    int rc = fds__cat_prepare(db, sql, &sel, err);
    snprintf(sql, sizeof sql, "UPDATE %s SET crc=? WHERE rowid=?",
             CRC_TABLES[t].table);
    if (!rc)
        rc = fds__cat_prepare(db, sql, &upd, err);
    int row = 0;
    while (!rc && (row = fds__cat_row(db, sel, CRC_TABLES[t].table, err)) == 1) {
        sqlite3_reset(upd);
        sqlite3_bind_int64(upd, 1, fds__cat_row_crc(sel, 1, CRC_TABLES[t].ncols));
        sqlite3_bind_int64(upd, 2, sqlite3_column_int64(sel, 0));
        if (sqlite3_step(upd) != SQLITE_DONE)
            rc = fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL,
                              "catalogue: %s", sqlite3_errmsg(db));
        if (rows)
            ++*rows;
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    return rc;
}

static int add_shard_columns(sqlite3 *db, fds_err *err)
{
    int rc = 0;
    for (size_t t = 0; !rc && t < sizeof SHARD_TABLES / sizeof *SHARD_TABLES; t++) {
        char sql[256];
        snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN shard INTEGER NOT "
                                  "NULL DEFAULT 0; ALTER TABLE %s ADD COLUMN "
                                  "routing BLOB", SHARD_TABLES[t].table,
                 SHARD_TABLES[t].table);
        rc = fds__cat_exec(db, sql, err);
    }
    return rc;
}

/* The end of a migration's transaction: with `rc` 0 mark the catalogue
 * schema 3 and commit, else (or when that fails) roll back (SCHEMA then
 * takes it to SCHEMA_VERSION).  Returns the code of the migration. */
static int migration_commit(sqlite3 *db, int rc, fds_err *err)
{
    if (!rc)
        rc = fds__cat_exec(db, "INSERT OR REPLACE INTO meta VALUES"
                               "('schema_version','3'); PRAGMA user_version=3;",
                           err);
    return fds__cat_end(db, rc, NULL, err);
}

/* Schema 1 -> 3: add the crc and shard columns and checksum every row as
 * it is now. */
static int migrate_v1(sqlite3 *db, const char *path, fds_err *err)
{
    int rc = fds__cat_exec(db, "BEGIN IMMEDIATE", err);
    if (!rc)
        rc = add_shard_columns(db, err);
    size_t rows = 0;
    for (size_t t = 0; !rc && t < sizeof CRC_TABLES / sizeof *CRC_TABLES; t++) {
        if (CRC_TABLES[t].since > 1)
            continue; /* created with its crc column by SCHEMA */
        char sql[512];
        snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN crc INTEGER NOT "
                                  "NULL DEFAULT 0", CRC_TABLES[t].table);
        if (!(rc = fds__cat_exec(db, sql, err)))
            rc = fds__cat_rechecksum(db, CRC_TABLES[t].table, &rows, err);
    }
    if ((rc = migration_commit(db, rc, err)))
        return rc;
    fprintf(stderr, "fieldstore: catalogue [%s] migrated from schema 1 to %d: "
                    "row checksums added to %zu rows\n", path, SCHEMA_VERSION,
            rows);
    return 0;
}

/* Schema 2 -> 3: the shard columns (0: one shard per index then); rows
 * whose schema-2 checksum holds are checksummed anew with the shard. */
static int migrate_v2(sqlite3 *db, const char *path, fds_err *err)
{
    int rc = fds__cat_exec(db, "BEGIN IMMEDIATE", err);
    if (!rc)
        rc = add_shard_columns(db, err);
    size_t rows = 0, kept = 0;
    for (size_t t = 0; !rc && t < sizeof SHARD_TABLES / sizeof *SHARD_TABLES; t++) {
        char sql[512];
        sqlite3_stmt *sel = NULL, *upd = NULL;
        snprintf(sql, sizeof sql, "SELECT rowid, %s, crc, shard FROM %s",
                 SHARD_TABLES[t].v2_cols, SHARD_TABLES[t].table);
        rc = fds__cat_prepare(db, sql, &sel, err);
        snprintf(sql, sizeof sql, "UPDATE %s SET crc=? WHERE rowid=?",
                 SHARD_TABLES[t].table);
        if (!rc)
            rc = fds__cat_prepare(db, sql, &upd, err);
        int row = 0, n = SHARD_TABLES[t].v2_ncols;
        while (!rc && (row = fds__cat_row(db, sel, SHARD_TABLES[t].table, err)) == 1) {
            if (!fds__cat_row_ok(sel, 1, n)) {
                kept++;
                continue;
            }
            /* the new columns are the old ones plus shard and routing */
            uint32_t crc = fds__crc_i64(fds__cat_row_crc(sel, 1, n),
                                        sqlite3_column_int64(sel, n + 2));
            crc = fds__crc_bytes(crc, NULL, 0);
            sqlite3_reset(upd);
            sqlite3_bind_int64(upd, 1, crc);
            sqlite3_bind_int64(upd, 2, sqlite3_column_int64(sel, 0));
            if (sqlite3_step(upd) != SQLITE_DONE)
                rc = fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL,
                                  "catalogue: %s", sqlite3_errmsg(db));
            rows++;
        }
        if (!rc && row < 0)
            rc = row;
        sqlite3_finalize(sel);
        sqlite3_finalize(upd);
    }
    if ((rc = migration_commit(db, rc, err)))
        return rc;
    fprintf(stderr, "fieldstore: catalogue [%s] migrated from schema 2 to %d: "
                    "shard columns added (%zu rows re-checksummed, %zu failing "
                    "their checksum left as they were)\n", path,
            SCHEMA_VERSION, rows, kept);
    return 0;
}

/* The catalogue's schema version: PRAGMA user_version, or 1 for a
 * catalogue made before it was set (it has a meta table), 0 for a new
 * file.  -1 when it cannot be read. */
static int schema_version(sqlite3 *db)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(db, "SELECT (SELECT user_version FROM "
                               "pragma_user_version), EXISTS(SELECT 1 FROM "
                               "sqlite_master WHERE name='meta')",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0) ? sqlite3_column_int(st, 0)
                                      : sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    return v;
}

/* Bytes a checkpointed WAL keeps at most (PRAGMA journal_size_limit). */
#define WAL_LIMIT_TEXT "4194304"

/* A catalogue made before auto_vacuum=INCREMENTAL was in SCHEMA keeps its
 * free pages forever: switching it takes one VACUUM (a copy of the file),
 * done once here.  On failure (a full disk) it stays as it was, and the
 * next start tries again. */
static void auto_vacuum_on(sqlite3 *db, const char *path)
{
    sqlite3_stmt *st;
    int mode = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA auto_vacuum", -1, &st, NULL) != SQLITE_OK)
        return;
    if (sqlite3_step(st) == SQLITE_ROW)
        mode = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (mode != 0)
        return; /* 2: incremental already (1, full, is never set here) */
    char *msg = NULL;
    if (sqlite3_exec(db, "PRAGMA auto_vacuum=INCREMENTAL; VACUUM;", NULL,
                     NULL, &msg) == SQLITE_OK)
        fprintf(stderr, "fieldstore: catalogue [%s] now gives freed pages "
                        "back to the file system (auto_vacuum=INCREMENTAL, "
                        "one VACUUM)\n", path);
    else
        fprintf(stderr, "fieldstore: catalogue [%s]: cannot switch to "
                        "auto_vacuum=INCREMENTAL (%s); it keeps its free "
                        "pages until a start that can\n", path,
                msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
}

int fds__cat_open(const char *path, sqlite3 **out, fds_err *err)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                 SQLITE_OPEN_FULLMUTEX,
                             NULL);
    if (rc != SQLITE_OK)
        goto fail;
    sqlite3_busy_timeout(db, 5000);
    int ver = schema_version(db);
    if (ver < 0 || ver > SCHEMA_VERSION) {
        if (ver < 0)
            fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL, "cannot read the "
                         "schema version of catalogue [%s]: %s", path,
                         sqlite3_errmsg(db));
        else
            fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL, "catalogue [%s] has "
                         "schema version %d; this build reads versions up to "
                         "%d", path, ver, SCHEMA_VERSION);
        sqlite3_close(db);
        return FDS_ESQL;
    }
    if ((ver == 1 && (rc = migrate_v1(db, path, err))) ||
        (ver == 2 && (rc = migrate_v2(db, path, err)))) {
        sqlite3_close(db);
        return rc;
    }
    char *msg = NULL;
    rc = sqlite3_exec(db, SCHEMA, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL,
                     "cannot initialise catalogue [%s]: %s", path,
                     msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        sqlite3_close(db);
        return FDS_ESQL;
    }
    sqlite3_exec(db, "PRAGMA synchronous=FULL;", NULL, NULL, NULL);
    /* a checkpointed WAL is cut back to this size (else it keeps its
     * high-water mark, and a catalogue holds its translog twice on disk) */
    sqlite3_exec(db, "PRAGMA journal_size_limit=" WAL_LIMIT_TEXT ";", NULL,
                 NULL, NULL);
    auto_vacuum_on(db, path);
    *out = db;
    return 0;
fail:
    fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL, "cannot open catalogue [%s]: %s",
                 path, db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return FDS_ESQL;
}

void fds__cat_close(sqlite3 *db)
{
    if (db)
        sqlite3_close(db);
}

int fds__cat_exec(sqlite3 *db, const char *sql, fds_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL, "catalogue: %s (%s)",
                 msg ? msg : sqlite3_errmsg(db), sql);
    sqlite3_free(msg);
    return FDS_ESQL;
}

int fds__cat_begin(sqlite3 *db, bool durable, fds_err *err)
{
    int rc = fds__cat_exec(db, durable ? "PRAGMA synchronous=FULL"
                                       : "PRAGMA synchronous=NORMAL", err);
    return rc ? rc : fds__cat_exec(db, "BEGIN IMMEDIATE", err);
}

static void cat_rollback(sqlite3 *db)
{
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

int fds__cat_end(sqlite3 *db, int rc, bool *full, fds_err *err)
{
    if (!rc)
        rc = fds__cat_exec(db, "COMMIT", err);
    if (full)
        *full = rc == FDS_ESQL && sqlite3_errcode(db) == SQLITE_FULL;
    if (rc)
        cat_rollback(db);
    return rc;
}

void fds__cat_shrink(sqlite3 *db)
{
    sqlite3_exec(db, "PRAGMA incremental_vacuum", NULL, NULL, NULL);
    sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
}

void fds__cat_upkeep(sqlite3 *db, bool vacuum)
{
    if (vacuum)
        sqlite3_exec(db, "PRAGMA incremental_vacuum", NULL, NULL, NULL);
    sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

int fds__cat_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
                     fds_err *err)
{
    if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK)
        return 0;
    return fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL,
                        "catalogue: %s (%s)", sqlite3_errmsg(db), sql);
}

int fds__cat_row(sqlite3 *db, sqlite3_stmt *st, const char *what, fds_err *err)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL,
                        "catalogue: cannot read table [%s]: %s (%s)", what,
                        sqlite3_errmsg(db), sqlite3_errstr(rc));
}

int fds__cat_step_done(sqlite3 *db, sqlite3_stmt *st, fds_err *err)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE || rc == SQLITE_ROW)
        return 0;
    return fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL, "catalogue: %s",
                        sqlite3_errmsg(db));
}
