/*
 * catalog.h: thin helpers over the SQLite catalogue (internal to src/store).
 * Every function returns 0 or FDS_ESQL with `err` naming the statement.
 */
#ifndef FDS_CATALOG_H
#define FDS_CATALOG_H

#include <sqlite3.h>
#include <stdbool.h>

#include "fds_error.h"

/* Open or create the catalogue at `path` (WAL, schema created). */
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

#endif
