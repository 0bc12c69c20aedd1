/*
 * catalog_meta.c: the catalogue rows of the node that belong to no
 * index's data (metadata.c keeps them in memory and applies the rules):
 *   aliases(alias, index_id, filter, index_routing, search_routing,
 *           is_write_index, is_hidden, crc)   the flags NULL when not given
 *   templates(kind, name, json, crc)
 *   meta(key, value)                         no checksum
 * `crc` is catalog.c's row checksum (FDS_CRC_COLS_ALIASES,
 * FDS_CRC_COLS_TEMPLATES), an absent text or flag fed as NULL.
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"

static uint32_t crc_opt_text(uint32_t crc, const char *t)
{
    return fds__crc_bytes(crc, t, t ? strlen(t) : 0);
}

static uint32_t crc_opt_flag(uint32_t crc, int v)
{
    return v < 0 ? fds__crc_bytes(crc, NULL, 0) : fds__crc_i64(crc, v);
}

static void bind_opt_text(sqlite3_stmt *st, int col, const char *t)
{
    if (t)
        sqlite3_bind_text(st, col, t, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, col);
}

static void bind_opt_flag(sqlite3_stmt *st, int col, int v)
{
    if (v >= 0)
        sqlite3_bind_int(st, col, v);
    else
        sqlite3_bind_null(st, col);
}

int fds__cat_alias_put(sqlite3 *db, int64_t index_id, const fds_alias *a,
                       fds_err *err)
{
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(db, "INSERT OR REPLACE INTO aliases(alias, "
                                     "index_id, filter, index_routing, "
                                     "search_routing, is_write_index, "
                                     "is_hidden, crc) VALUES(?,?,?,?,?,?,?,?)",
                              &st, err);
    if (rc)
        return rc;
    uint32_t crc = fds__crc_bytes(0, a->alias, strlen(a->alias));
    crc = fds__crc_i64(crc, index_id);
    crc = crc_opt_text(crc, a->filter);
    crc = crc_opt_text(crc, a->index_routing);
    crc = crc_opt_text(crc, a->search_routing);
    crc = crc_opt_flag(crc, a->is_write_index);
    crc = crc_opt_flag(crc, a->is_hidden);
    sqlite3_bind_text(st, 1, a->alias, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, index_id);
    bind_opt_text(st, 3, a->filter);
    bind_opt_text(st, 4, a->index_routing);
    bind_opt_text(st, 5, a->search_routing);
    bind_opt_flag(st, 6, a->is_write_index);
    bind_opt_flag(st, 7, a->is_hidden);
    sqlite3_bind_int64(st, 8, crc);
    return fds__cat_step_done(db, st, err);
}

int fds__cat_alias_delete(sqlite3 *db, int64_t index_id, const char *alias,
                          fds_err *err)
{
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(db, "DELETE FROM aliases WHERE alias=? AND "
                                     "index_id=?", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, alias, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, index_id);
    return fds__cat_step_done(db, st, err);
}

static const char *col_text(sqlite3_stmt *st, int c)
{
    return (const char *)sqlite3_column_text(st, c);
}

static int col_flag(sqlite3_stmt *st, int c)
{
    return sqlite3_column_type(st, c) == SQLITE_NULL ? -1
                                                     : sqlite3_column_int(st, c) != 0;
}

int fds__cat_aliases_read(sqlite3 *db, fds__cat_alias_each each, void *ctx,
                          fds_err *err)
{
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(db, "SELECT (SELECT name FROM indices WHERE "
                                  "id=index_id), " FDS_CRC_COLS_ALIASES
                                  ", crc FROM aliases", &st, err);
    int row = 0;
    while (!rc && (row = fds__cat_row(db, st, "aliases", err)) == 1) {
        fds__cat_alias_row r = {
            .index = col_text(st, 0),
            .row_ok = fds__cat_row_ok(st, 1, FDS_CRC_NCOLS_ALIASES),
            .index_id = sqlite3_column_int64(st, 2),
        };
        r.a = (fds_alias){.alias = (char *)col_text(st, 1),
                          .filter = (char *)col_text(st, 3),
                          .index_routing = (char *)col_text(st, 4),
                          .search_routing = (char *)col_text(st, 5),
                          .is_write_index = col_flag(st, 6),
                          .is_hidden = col_flag(st, 7)};
        rc = each(ctx, &r, err);
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(st);
    return rc;
}

int fds__cat_template_put(sqlite3 *db, int kind, const char *name,
                          const char *json, fds_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = fds__cat_prepare(db, "INSERT OR REPLACE INTO templates(kind, "
                                  "name, json, crc) VALUES(?,?,?,?)", &st,
                              err);
    if (rc)
        return rc;
    uint32_t crc = fds__crc_i64(0, kind);
    crc = fds__crc_bytes(crc, name, strlen(name));
    crc = fds__crc_bytes(crc, json, strlen(json));
    sqlite3_bind_int(st, 1, kind);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, json, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, crc);
    return fds__cat_step_done(db, st, err);
}

int fds__cat_template_delete(sqlite3 *db, int kind, const char *name,
                             fds_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = fds__cat_prepare(db, "DELETE FROM templates WHERE kind=? AND "
                                  "name=?", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_int(st, 1, kind);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    rc = fds__cat_exec(db, "PRAGMA synchronous=FULL", err);
    if (rc) {
        sqlite3_finalize(st);
        return rc;
    }
    return fds__cat_step_done(db, st, err);
}

int fds__cat_templates_read(sqlite3 *db, fds__cat_template_each each,
                            void *ctx, fds_err *err)
{
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(db, "SELECT " FDS_CRC_COLS_TEMPLATES
                                  ", crc FROM templates", &st, err);
    int row = 0;
    while (!rc && (row = fds__cat_row(db, st, "templates", err)) == 1) {
        fds__cat_template_row r = {
            .row_ok = fds__cat_row_ok(st, 0, FDS_CRC_NCOLS_TEMPLATES),
            .kind = sqlite3_column_int(st, 0),
            .name = col_text(st, 1),
            .json = col_text(st, 2),
        };
        rc = each(ctx, &r, err);
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(st);
    return rc;
}

int fds__cat_meta_get(sqlite3 *db, const char *key, char *buf, size_t cap,
                      fds_err *err)
{
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(db, "SELECT value FROM meta WHERE key=?", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int row = fds__cat_row(db, st, "meta", err);
    if (row < 0)
        rc = row;
    else if (row == 0 || sqlite3_column_type(st, 0) == SQLITE_NULL)
        rc = FDS_ENOTFOUND;
    else
        snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc;
}

int fds__cat_meta_put(sqlite3 *db, const char *key, const char *value,
                      fds_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = fds__cat_prepare(db, value ? "INSERT OR REPLACE INTO meta "
                                          "VALUES(?,?)"
                                        : "DELETE FROM meta WHERE key=?",
                              &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (value)
        sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    return fds__cat_step_done(db, st, err);
}
