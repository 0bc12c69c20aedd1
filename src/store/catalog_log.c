/*
 * catalog_log.c: the translog's rows in the catalogue (their record layout
 * and the replay are buffer.c's).  translog_batches(index_id, first_seq,
 * last_seq, ops, crc): one row per write batch, appended by the write path
 * in its transaction; translog(index_id, seq, op, doc_id, version, source,
 * crc, shard, routing): schema 3's row per operation, only read and
 * trimmed.  `crc` is catalog.c's row checksum (FDS_CRC_COLS_TRANSLOG_BATCHES,
 * FDS_CRC_COLS_TRANSLOG).
 */
#include <stdio.h>

#include "catalog.h"

int fds__cat_translog_append(sqlite3 *db, int64_t index_id, int64_t first_seq,
                             int64_t last_seq, const uint8_t *ops, size_t len,
                             fds_err *err)
{
    if (len > INT32_MAX) /* sqlite3_bind_blob's length is an int */
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "a write of %zu bytes is larger than the "
                            "translog takes (%d bytes)", len,
                            sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1));
    sqlite3_stmt *ins;
    int rc = fds__cat_prepare(db, "INSERT INTO translog_batches(index_id, "
                                  "first_seq, last_seq, ops, crc) "
                                  "VALUES(?,?,?,?,?)", &ins, err);
    if (rc)
        return rc;
    uint32_t crc = fds__crc_i64(0, index_id);
    crc = fds__crc_i64(crc, first_seq);
    crc = fds__crc_i64(crc, last_seq);
    crc = fds__crc_bytes(crc, ops, len);
    sqlite3_bind_int64(ins, 1, index_id);
    sqlite3_bind_int64(ins, 2, first_seq);
    sqlite3_bind_int64(ins, 3, last_seq);
    sqlite3_bind_int64(ins, 5, crc);
    if (sqlite3_bind_blob(ins, 4, ops, (int)len, SQLITE_STATIC) != SQLITE_OK) {
        /* SQLITE_TOOBIG: a document over SQLite's value limit */
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "a write of %zu bytes is larger than the translog "
                          "takes (%d bytes)", len,
                          sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1));
        sqlite3_finalize(ins);
        return rc;
    }
    return fds__cat_step_done(db, ins, err);
}

int fds__cat_translog_ops_read(sqlite3 *db, int64_t index_id,
                               fds__cat_tlop_each each, void *ctx,
                               fds_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = fds__cat_prepare(db, "SELECT seq, op, doc_id, version, source, "
                                   "shard, routing, " FDS_CRC_COLS_TRANSLOG
                                   ", crc "
                                   "FROM translog "
                                   "WHERE index_id=? ORDER BY seq", &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, index_id);
    int row = 0;
    while (!rc && (row = fds__cat_row(db, st, "translog", err)) == 1) {
        fds__cat_tlop_row r = {.row_ok = fds__cat_row_ok(st, 7, FDS_CRC_NCOLS_TRANSLOG),
                               .seq = sqlite3_column_int64(st, 0)};
        if (r.row_ok) {
            r.op = sqlite3_column_int(st, 1);
            r.version = sqlite3_column_int64(st, 3);
            r.shard = sqlite3_column_int64(st, 5);
            r.doc_id = sqlite3_column_blob(st, 2);
            r.doc_id_len = (size_t)sqlite3_column_bytes(st, 2);
            r.source = sqlite3_column_blob(st, 4);
            r.source_len = r.source ? (size_t)sqlite3_column_bytes(st, 4) : 0;
            r.has_routing = sqlite3_column_type(st, 6) != SQLITE_NULL;
            r.routing_len = (size_t)sqlite3_column_bytes(st, 6);
            r.routing = r.has_routing && r.routing_len ? sqlite3_column_blob(st, 6)
                                                       : NULL;
        }
        rc = each(ctx, &r, err);
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(st);
    return rc;
}

int fds__cat_translog_batches_read(sqlite3 *db, int64_t index_id,
                                   fds__cat_batch_each each, void *ctx,
                                   fds_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = fds__cat_prepare(db, "SELECT " FDS_CRC_COLS_TRANSLOG_BATCHES
                                   ", crc FROM translog_batches "
                                   "WHERE index_id=? ORDER BY first_seq",
                               &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, index_id);
    int row = 0;
    while (!rc && (row = fds__cat_row(db, st, "translog_batches", err)) == 1) {
        fds__cat_batch_row r = {
            .first_seq = sqlite3_column_int64(st, 1),
            .last_seq = sqlite3_column_int64(st, 2),
            .row_ok = fds__cat_row_ok(st, 0, FDS_CRC_NCOLS_TRANSLOG_BATCHES),
        };
        if (r.row_ok) {
            r.ops = sqlite3_column_blob(st, 3);
            r.len = r.ops ? (size_t)sqlite3_column_bytes(st, 3) : 0;
        }
        rc = each(ctx, &r, err);
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(st);
    return rc;
}

int fds__cat_translog_trim(sqlite3 *db, int64_t index_id, int64_t max_seq,
                           fds_err *err)
{
    char sql[256];
    snprintf(sql, sizeof sql, "DELETE FROM translog WHERE index_id=%lld "
                              "AND seq<=%lld; DELETE FROM translog_batches "
                              "WHERE index_id=%lld AND last_seq<=%lld",
             (long long)index_id, (long long)max_seq, (long long)index_id,
             (long long)max_seq);
    return fds__cat_exec(db, sql, err);
}
