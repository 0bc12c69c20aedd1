/*
 * catalog_index.c: the `indices` rows of the catalogue, one per index:
 * indices(id, name UNIQUE, uuid, created_ms, open, next_seq, next_gen, crc),
 * `crc` the row checksum of catalog.c over name, uuid and created_ms
 * (FDS_CRC_COLS_INDICES); the counters open, next_seq and next_gen are
 * rewritten often and not covered.  Also deleting an index's rows of every
 * table at once.  Each function runs in the caller's transaction (or, for
 * the open flag, on its own) with db_mu held, and returns 0 or FDS_ESQL
 * with err naming the statement.
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"

/* The checksum of an indices row (FDS_CRC_COLS_INDICES: name, uuid,
 * created_ms). */
static uint32_t index_row_crc(const char *name, const char *uuid,
                              int64_t created_ms)
{
    uint32_t crc = fds__crc_bytes(0, name, strlen(name));
    crc = fds__crc_bytes(crc, uuid, strlen(uuid));
    return fds__crc_i64(crc, created_ms);
}

int fds__cat_indices_read(sqlite3 *db, fds__cat_index_each each, void *ctx,
                          fds_err *err)
{
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(db, "SELECT id, name, uuid, created_ms, open, "
                                  "next_seq, next_gen, " FDS_CRC_COLS_INDICES
                                  ", crc FROM indices ORDER BY name", &st, err);
    int row = 0;
    while (!rc && (row = fds__cat_row(db, st, "indices", err)) == 1) {
        fds__cat_index_row r = {
            .id = sqlite3_column_int64(st, 0),
            .name = (const char *)sqlite3_column_text(st, 1),
            .uuid = (const char *)sqlite3_column_text(st, 2),
            .created_ms = sqlite3_column_int64(st, 3),
            .open = sqlite3_column_int(st, 4) != 0,
            .next_seq = sqlite3_column_int64(st, 5),
            .next_gen = (uint64_t)sqlite3_column_int64(st, 6),
            .row_ok = fds__cat_row_ok(st, 7, FDS_CRC_NCOLS_INDICES),
        };
        rc = each(ctx, &r, err);
    }
    if (!rc && row < 0)
        rc = row;
    if (st)
        sqlite3_finalize(st);
    return rc;
}

int fds__cat_index_insert(sqlite3 *db, const char *name, const char *uuid,
                          int64_t created_ms, int64_t next_seq, int64_t *id,
                          fds_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = fds__cat_prepare(db, "INSERT INTO indices(name, uuid, created_ms, "
                                  "next_seq, crc) VALUES(?,?,?,?,?)", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, created_ms);
    sqlite3_bind_int64(st, 4, next_seq);
    sqlite3_bind_int64(st, 5, index_row_crc(name, uuid, created_ms));
    rc = fds__cat_step_done(db, st, err);
    *id = sqlite3_last_insert_rowid(db);
    return rc;
}

int fds__cat_index_rename(sqlite3 *db, int64_t id, const char *name,
                          const char *uuid, int64_t created_ms,
                          uint64_t next_gen, fds_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = fds__cat_prepare(db, "UPDATE indices SET name=?, next_gen=?, "
                                  "crc=? WHERE id=?", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)next_gen);
    sqlite3_bind_int64(st, 3, index_row_crc(name, uuid, created_ms));
    sqlite3_bind_int64(st, 4, id);
    return fds__cat_step_done(db, st, err);
}

int fds__cat_index_set_open(sqlite3 *db, int64_t id, bool open, fds_err *err)
{
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE indices SET open=%d WHERE id=%lld",
             open ? 1 : 0, (long long)id);
    return fds__cat_exec(db, sql, err);
}

int fds__cat_index_set_next_seq(sqlite3 *db, int64_t id, int64_t next_seq,
                                fds_err *err)
{
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE indices SET next_seq=%lld WHERE id=%lld",
             (long long)next_seq, (long long)id);
    return fds__cat_exec(db, sql, err);
}

int fds__cat_index_set_next_gen(sqlite3 *db, int64_t id, uint64_t next_gen,
                                fds_err *err)
{
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE indices SET next_gen=%llu WHERE id=%lld",
             (unsigned long long)next_gen, (long long)id);
    return fds__cat_exec(db, sql, err);
}

int fds__cat_index_delete(sqlite3 *db, int64_t id, fds_err *err)
{
    const char *tables[] = {"settings", "mappings", "dictionaries", "segments",
                            "translog", "translog_batches", "aliases"};
    int rc = 0;
    for (size_t t = 0; t < sizeof tables / sizeof *tables && !rc; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE index_id=%lld", tables[t],
                 (long long)id);
        rc = fds__cat_exec(db, sql, err);
    }
    if (!rc) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM indices WHERE id=%lld",
                 (long long)id);
        rc = fds__cat_exec(db, sql, err);
    }
    return rc;
}
