/*
 * catalog.h: thin helpers over the SQLite catalogue (internal to src/store).
 * Every function returns 0 or FDS_ESQL with `err` naming the statement.
 */
#ifndef FDS_CATALOG_H
#define FDS_CATALOG_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fds_error.h"

/* Open or create the catalogue at `path` (WAL, schema created, a schema-1
 * catalogue migrated).  FDS_ESQL also for a schema newer than this build's. */
int fds__cat_open(const char *path, sqlite3 **out, fds_err *err);
int fds__cat_exec(sqlite3 *db, const char *sql, fds_err *err);
/* BEGIN IMMEDIATE; `durable` = fsync the WAL at commit (synchronous=FULL). */
int fds__cat_begin(sqlite3 *db, bool durable, fds_err *err);
int fds__cat_commit(sqlite3 *db, fds_err *err);
void fds__cat_rollback(sqlite3 *db);
int fds__cat_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
                     fds_err *err);
/* One step of a row loop over `st`: 1 when a row is ready, 0 when the loop
 * ended on SQLITE_DONE, FDS_ESQL for any other result (an I/O error,
 * corruption, SQLITE_BUSY: never read as the end of the table), with err
 * naming `what` (the table being read) and SQLite's message.  Every row
 * loop of src/store steps through this. */
int fds__cat_row(sqlite3 *db, sqlite3_stmt *st, const char *what, fds_err *err);
/* Step a prepared statement once and finalize it. */
int fds__cat_step_done(sqlite3 *db, sqlite3_stmt *st, fds_err *err);

/*
 * Row checksums (layout at the top of catalog.c).  FDS_CRC_COLS_<table>
 * lists the columns the `crc` column of <table> covers, in order, for
 * SELECTs that verify; writers feed the same values in the same order to
 * fds__crc_i64 (an INTEGER) and fds__crc_bytes (TEXT or BLOB; p NULL for
 * SQL NULL), starting from 0.
 */
#define FDS_CRC_COLS_INDICES "name, uuid, created_ms"
#define FDS_CRC_NCOLS_INDICES 3
#define FDS_CRC_COLS_SETTINGS "index_id, key, value"
#define FDS_CRC_NCOLS_SETTINGS 3
#define FDS_CRC_COLS_MAPPINGS "index_id, json"
#define FDS_CRC_NCOLS_MAPPINGS 2
#define FDS_CRC_COLS_DICTIONARIES "index_id, codec, raw_len, sample_bytes, bytes"
#define FDS_CRC_NCOLS_DICTIONARIES 5
#define FDS_CRC_COLS_SEGMENTS \
    "index_id, gen, max_doc, del_count, max_seq, live, shard, routing"
#define FDS_CRC_NCOLS_SEGMENTS 8
#define FDS_CRC_COLS_TRANSLOG \
    "index_id, seq, op, doc_id, version, source, shard, routing"
#define FDS_CRC_NCOLS_TRANSLOG 8
#define FDS_CRC_COLS_TRANSLOG_BATCHES "index_id, first_seq, last_seq, ops"
#define FDS_CRC_NCOLS_TRANSLOG_BATCHES 4
#define FDS_CRC_COLS_ALIASES "alias, index_id, filter, index_routing, " \
    "search_routing, is_write_index, is_hidden"
#define FDS_CRC_NCOLS_ALIASES 7
#define FDS_CRC_COLS_TEMPLATES "kind, name, json"
#define FDS_CRC_NCOLS_TEMPLATES 3

uint32_t fds__crc_i64(uint32_t crc, int64_t v);
uint32_t fds__crc_bytes(uint32_t crc, const void *p, size_t n);
/* The checksum of result columns [first, first + n) of the current row. */
uint32_t fds__cat_row_crc(sqlite3_stmt *st, int first, int n);
/* True when result column first + n holds fds__cat_row_crc(st, first, n). */
bool fds__cat_row_ok(sqlite3_stmt *st, int first, int n);

/* Recompute the `crc` column of every row of `table` (one of the tables of
 * the layout in catalog.c) from the values the row holds now, in the
 * caller's transaction (if any).  For the schema-1 migration and for tools
 * that rewrite rows on purpose (the catalogue fuzz target).  *rows (if not
 * NULL) is increased by the rows updated.  Returns 0, FDS_EINVAL (no such
 * checksummed table) or FDS_ESQL. */
int fds__cat_rechecksum(sqlite3 *db, const char *table, size_t *rows,
                        fds_err *err);

#endif
