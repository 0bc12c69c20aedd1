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
#include "store.h"

/* Open or create the catalogue at `path` (WAL, schema created, a schema-1
 * catalogue migrated).  FDS_ESQL also for a schema newer than this build's. */
int fds__cat_open(const char *path, sqlite3 **out, fds_err *err);
/* Close what fds__cat_open opened (NULL: nothing). */
void fds__cat_close(sqlite3 *db);
int fds__cat_exec(sqlite3 *db, const char *sql, fds_err *err);
/*
 * The one transaction helper of src/store.  fds__cat_begin: BEGIN
 * IMMEDIATE; `durable` = fsync the WAL at commit (synchronous=FULL).
 * fds__cat_end closes what fds__cat_begin opened (or tried to): with `rc`
 * 0 it commits, and with any other rc, or a failed COMMIT, it rolls back;
 * it returns rc, or the FDS_ESQL of the failed commit.  *full (if not
 * NULL) tells whether the transaction failed because the disk is full
 * (SQLite's SQLITE_FULL, read before the rollback resets it).  Caller
 * holds db_mu across both.
 */
int fds__cat_begin(sqlite3 *db, bool durable, fds_err *err);
int fds__cat_end(sqlite3 *db, int rc, bool *full, fds_err *err);
/* The background thread's catalogue upkeep (caller holds db_mu): with
 * `vacuum`, return the pages freed by trimmed translog rows to the file
 * system (PRAGMA incremental_vacuum); then a passive WAL checkpoint.
 * Errors are ignored: the next tick tries again. */
void fds__cat_upkeep(sqlite3 *db, bool vacuum);
/* After an index deletion (caller holds db_mu): every free page back to
 * the file system (PRAGMA incremental_vacuum) and the WAL checkpointed and
 * truncated to 0 bytes, so the catalogue file shrinks at once.  Errors are
 * ignored (a full disk: the background upkeep tries again). */
void fds__cat_shrink(sqlite3 *db);
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

/*
 * Typed catalogue functions: every SQL statement of src/store is in the
 * catalog*.c files, behind one of these.  Unless said otherwise each runs
 * in the caller's transaction (fds__cat_begin / fds__cat_end) with db_mu
 * held and returns 0 or FDS_ESQL with err naming the statement.  A
 * *_read function steps over its rows in the order given, handing each
 * to `each` (pointers valid during the call only); a non-zero return of
 * `each` stops the scan and is returned; so is an FDS_ESQL of a step
 * (never read as the end of the table).  row_ok is false for a row that
 * fails its checksum (catalog.c): `each` decides what that means.
 */

/* catalog_index.c: indices(id, name, uuid, created_ms, open, next_seq,
 * next_gen, crc), by name. */
typedef struct fds__cat_index_row {
    int64_t id;
    const char *name, *uuid;
    int64_t created_ms;
    bool open;
    int64_t next_seq;
    uint64_t next_gen;
    bool row_ok;
} fds__cat_index_row;
typedef int (*fds__cat_index_each)(void *ctx, const fds__cat_index_row *row,
                                   fds_err *err);
int fds__cat_indices_read(sqlite3 *db, fds__cat_index_each each, void *ctx,
                          fds_err *err);
/* A new indices row (its checksum computed here); *id its row id. */
int fds__cat_index_insert(sqlite3 *db, const char *name, const char *uuid,
                          int64_t created_ms, int64_t next_seq, int64_t *id,
                          fds_err *err);
/* The row of `id` takes `name` (checksum recomputed) and next_gen. */
int fds__cat_index_rename(sqlite3 *db, int64_t id, const char *name,
                          const char *uuid, int64_t created_ms,
                          uint64_t next_gen, fds_err *err);
/* The counters of the row of `id` (no checksum covers them); set_open
 * runs on its own (autocommit). */
int fds__cat_index_set_open(sqlite3 *db, int64_t id, bool open, fds_err *err);
int fds__cat_index_set_next_seq(sqlite3 *db, int64_t id, int64_t next_seq,
                                fds_err *err);
int fds__cat_index_set_next_gen(sqlite3 *db, int64_t id, uint64_t next_gen,
                                fds_err *err);
/* Every row of index `id` in every table, then its indices row. */
int fds__cat_index_delete(sqlite3 *db, int64_t id, fds_err *err);

/* catalog_rows.c: segments rows by shard, then gen (the columns as
 * stored; has_live / has_routing: the column is a BLOB). */
typedef struct fds__cat_seg_row {
    int64_t id, gen, max_doc, max_seq, shard;
    bool has_live;
    const void *live;
    size_t live_len;
    uint32_t del_count;
    bool has_routing;
    const void *routing;
    size_t routing_len;
    bool row_ok;
} fds__cat_seg_row;
typedef int (*fds__cat_seg_each)(void *ctx, const fds__cat_seg_row *row,
                                 fds_err *err);
int fds__cat_segments_read(sqlite3 *db, int64_t index_id,
                           fds__cat_seg_each each, void *ctx, fds_err *err);
/* The segments row `id` goes (a merge's inputs). */
int fds__cat_segment_delete(sqlite3 *db, int64_t id, fds_err *err);

/* catalog_rows.c: dictionaries rows of an index, by id; `bytes` is the
 * stored zstd frame of raw_len dictionary bytes. */
typedef struct fds__cat_dict_row {
    int64_t id;
    int codec;
    int64_t raw_len, sample_bytes;
    const void *bytes;
    size_t len;
    bool row_ok;
} fds__cat_dict_row;
typedef int (*fds__cat_dict_each)(void *ctx, const fds__cat_dict_row *row,
                                  fds_err *err);
int fds__cat_dicts_read(sqlite3 *db, int64_t index_id, fds__cat_dict_each each,
                        void *ctx, fds_err *err);
/* A new dictionaries row (on its own when the caller opened no
 * transaction); *id its row id. */
int fds__cat_dict_insert(sqlite3 *db, int64_t index_id, int codec,
                         int64_t raw_len, int64_t sample_bytes,
                         const void *bytes, size_t len, int64_t *id,
                         fds_err *err);

/* catalog_log.c: the translog.  fds__cat_translog_append inserts one
 * translog_batches row of records ops[0, len) for seqs [first_seq,
 * last_seq]: 0, FDS_ESQL, or FDS_EINVAL for more bytes than SQLite takes
 * in a value (SQLITE_LIMIT_LENGTH).  The read functions give the rows of
 * schema 3's translog table (one per operation, by seq) and of
 * translog_batches (by first_seq); fds__cat_translog_trim drops the rows
 * of both whose operations all have seq <= max_seq. */
typedef struct fds__cat_tlop_row {
    int64_t seq, version, shard;
    int op;
    const void *doc_id;       /* NULL for an empty one */
    size_t doc_id_len;
    const void *source;       /* NULL: SQL NULL or empty */
    size_t source_len;
    bool has_routing;         /* the column is not NULL */
    const void *routing;      /* NULL when empty */
    size_t routing_len;
    bool row_ok;
} fds__cat_tlop_row;
typedef int (*fds__cat_tlop_each)(void *ctx, const fds__cat_tlop_row *row,
                                  fds_err *err);
typedef struct fds__cat_batch_row {
    int64_t first_seq, last_seq;
    const uint8_t *ops;       /* NULL when empty */
    size_t len;
    bool row_ok;
} fds__cat_batch_row;
typedef int (*fds__cat_batch_each)(void *ctx, const fds__cat_batch_row *row,
                                   fds_err *err);
int fds__cat_translog_append(sqlite3 *db, int64_t index_id, int64_t first_seq,
                             int64_t last_seq, const uint8_t *ops, size_t len,
                             fds_err *err);
int fds__cat_translog_ops_read(sqlite3 *db, int64_t index_id,
                               fds__cat_tlop_each each, void *ctx,
                               fds_err *err);
int fds__cat_translog_batches_read(sqlite3 *db, int64_t index_id,
                                   fds__cat_batch_each each, void *ctx,
                                   fds_err *err);
int fds__cat_translog_trim(sqlite3 *db, int64_t index_id, int64_t max_seq,
                           fds_err *err);

/* catalog_meta.c: the node's rows that belong to no index's data.
 * aliases: fds__cat_alias_put writes (INSERT OR REPLACE) the row of
 * (a->alias, index_id), fds__cat_alias_delete drops one; the read gives
 * every row with the name of its index (NULL: no such index) and the
 * alias's fields (flags -1 when NULL).  templates: put (INSERT OR
 * REPLACE), delete (on its own, synchronous=FULL), read.  meta: get
 * (on its own: 0, FDS_ENOTFOUND, FDS_ESQL; err may be NULL) and put
 * (value NULL: the key goes). */
typedef struct fds__cat_alias_row {
    const char *index;
    int64_t index_id;
    fds_alias a;              /* pointers into the row */
    bool row_ok;
} fds__cat_alias_row;
typedef int (*fds__cat_alias_each)(void *ctx, const fds__cat_alias_row *row,
                                   fds_err *err);
typedef struct fds__cat_template_row {
    int kind;                 /* fds_template_kind */
    const char *name, *json;
    bool row_ok;
} fds__cat_template_row;
typedef int (*fds__cat_template_each)(void *ctx,
                                      const fds__cat_template_row *row,
                                      fds_err *err);
int fds__cat_alias_put(sqlite3 *db, int64_t index_id, const fds_alias *a,
                       fds_err *err);
int fds__cat_alias_delete(sqlite3 *db, int64_t index_id, const char *alias,
                          fds_err *err);
int fds__cat_aliases_read(sqlite3 *db, fds__cat_alias_each each, void *ctx,
                          fds_err *err);
int fds__cat_template_put(sqlite3 *db, int kind, const char *name,
                          const char *json, fds_err *err);
int fds__cat_template_delete(sqlite3 *db, int kind, const char *name,
                             fds_err *err);
int fds__cat_templates_read(sqlite3 *db, fds__cat_template_each each,
                            void *ctx, fds_err *err);
int fds__cat_meta_get(sqlite3 *db, const char *key, char *buf, size_t cap,
                      fds_err *err);
int fds__cat_meta_put(sqlite3 *db, const char *key, const char *value,
                      fds_err *err);

#endif
