/*
 * catalog.c: the SQLite catalogue (DESIGN.md §4), the commit point of
 * fieldstore.  WAL mode; one connection guarded by fds_store.db_mu.
 *
 * Schema (version 1):
 *   indices(id, name UNIQUE, uuid, created_ms, open, next_seq, next_gen)
 *   settings(index_id, key, value)           one row per index.* setting
 *   mappings(index_id, json)                 src/query's mapping JSON
 *   dictionaries(id, index_id, codec, raw_len, sample_bytes, bytes)
 *                                            bytes: a zstd frame
 *   segments(id, index_id, gen, max_doc, live, del_count, max_seq)
 *   translog(index_id, seq, op, doc_id, version, source)
 *
 * A refresh or merge changes segments, live docs and the translog in one
 * transaction (fds__cat_begin / fds__cat_commit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

static const char *SCHEMA =
    /* pages freed when translog rows are dropped return to the file system
     * (fds_store's background thread runs incremental_vacuum); takes effect
     * for a catalogue created with it, before any table exists */
    "PRAGMA auto_vacuum=INCREMENTAL;"
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
    "INSERT OR IGNORE INTO meta VALUES('schema_version','1');"
    "CREATE TABLE IF NOT EXISTS indices(id INTEGER PRIMARY KEY, name TEXT "
    "UNIQUE NOT NULL, uuid TEXT NOT NULL, created_ms INTEGER NOT NULL, open "
    "INTEGER NOT NULL DEFAULT 1, next_seq INTEGER NOT NULL DEFAULT 0, next_gen "
    "INTEGER NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS settings(index_id INTEGER NOT NULL, key TEXT "
    "NOT NULL, value TEXT NOT NULL, PRIMARY KEY(index_id, key));"
    "CREATE TABLE IF NOT EXISTS mappings(index_id INTEGER PRIMARY KEY, json "
    "TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS dictionaries(id INTEGER PRIMARY KEY, index_id "
    "INTEGER NOT NULL, codec INTEGER NOT NULL, raw_len INTEGER NOT NULL, "
    "sample_bytes INTEGER NOT NULL, bytes BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS segments(id INTEGER PRIMARY KEY, index_id "
    "INTEGER NOT NULL, gen INTEGER NOT NULL, max_doc INTEGER NOT NULL, live "
    "BLOB, del_count INTEGER NOT NULL DEFAULT 0, max_seq INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS translog(index_id INTEGER NOT NULL, seq "
    "INTEGER NOT NULL, op INTEGER NOT NULL, doc_id BLOB NOT NULL, version "
    "INTEGER NOT NULL, source BLOB, PRIMARY KEY(index_id, seq));";

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
    *out = db;
    return 0;
fail:
    fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL, "cannot open catalogue [%s]: %s",
                 path, db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return FDS_ESQL;
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

int fds__cat_commit(sqlite3 *db, fds_err *err)
{
    return fds__cat_exec(db, "COMMIT", err);
}

void fds__cat_rollback(sqlite3 *db)
{
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
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
