/*
 * catalog_rows.c: an index's rows in the catalogue other than translog and
 * dictionaries: settings, mapping, segments with their live docs, saved
 * inside the caller's transaction (they take no lock; the caller holds
 * db_mu) and loaded at start-up.  The schema and the SQLite helpers are in
 * catalog.c.
 *
 * Rows: settings(index_id, key, value, crc), one per index.* setting as
 * text (fds_settings_to_kv); mappings(index_id, json, crc); segments(id,
 * index_id, gen, max_doc, live, del_count, max_seq, crc, shard, routing),
 * `routing` the routing values of its docs (fds__routes; NULL: none),
 * `live` being the
 * (max_doc+7)/8 byte live-docs bitset (bit set = live, NULL = all live); a
 * segment whose docs are all deleted loses its row.  `crc` is the row
 * checksum of catalog.c (CRC-32C over the FDS_CRC_COLS_* columns); a load
 * that finds a mismatch fails with FDS_ECORRUPT naming the row, and the
 * index stays failed ("red") rather than serving a flipped bit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "store_int.h"

int fds__settings_save(fds_store *s, int64_t index_id,
                         const fds_index_settings *set, fds_err *err)
{
    fds_setting_kv kv[FDS_SETTINGS_MAX];
    size_t n = fds_settings_to_kv(set, kv, FDS_SETTINGS_MAX);
    int rc = fds__cat_exec(s->db, "SAVEPOINT settings", err);
    if (rc)
        return rc;
    sqlite3_stmt *st;
    rc = fds__cat_prepare(s->db, "DELETE FROM settings WHERE index_id=?", &st, err);
    if (!rc) {
        sqlite3_bind_int64(st, 1, index_id);
        rc = fds__cat_step_done(s->db, st, err);
    }
    for (size_t i = 0; i < n && !rc; i++) {
        rc = fds__cat_prepare(s->db, "INSERT INTO settings VALUES(?,?,?,?)", &st,
                              err);
        if (rc)
            break;
        uint32_t crc = fds__crc_i64(0, index_id);
        crc = fds__crc_bytes(crc, kv[i].key, strlen(kv[i].key));
        crc = fds__crc_bytes(crc, kv[i].value, strlen(kv[i].value));
        sqlite3_bind_int64(st, 1, index_id);
        sqlite3_bind_text(st, 2, kv[i].key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, kv[i].value, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, crc);
        rc = fds__cat_step_done(s->db, st, err);
    }
    fds__cat_exec(s->db, rc ? "ROLLBACK TO settings" : "RELEASE settings", NULL);
    return rc;
}

int fds__settings_load(fds_store *s, int64_t index_id,
                         fds_index_settings *set, fds_err *err)
{
    fds_index_settings_default(set);
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(s->db, "SELECT key, value, " FDS_CRC_COLS_SETTINGS
                                     ", crc FROM settings WHERE index_id=?",
                              &st, err);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, index_id);
    int row = 0;
    while (!rc && (row = fds__cat_row(s->db, st, "settings", err)) == 1) {
        const char *key = (const char *)sqlite3_column_text(st, 0);
        if (!fds__cat_row_ok(st, 2, FDS_CRC_NCOLS_SETTINGS))
            rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                              "index id [%lld]: catalogue row settings [%s] "
                              "fails its checksum (damaged catalogue)",
                              (long long)index_id, key ? key : "");
        else
            rc = fds_settings_set(set, key,
                                  (const char *)sqlite3_column_text(st, 1), err);
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(st);
    return rc;
}

/* The row checksum of sg's segments row (FDS_CRC_COLS_SEGMENTS) with
 * `del_count` deletes and live docs `bits` (NULL: all live). */
static uint32_t segment_crc(const fds_index *ix, const fds__seg *sg,
                            uint32_t del_count, const uint8_t *bits, size_t nb)
{
    uint32_t crc = fds__crc_i64(0, ix->id);
    crc = fds__crc_i64(crc, (int64_t)sg->gen);
    crc = fds__crc_i64(crc, sg->max_doc);
    crc = fds__crc_i64(crc, del_count);
    crc = fds__crc_i64(crc, sg->max_seq);
    crc = fds__crc_bytes(crc, bits, nb);
    crc = fds__crc_i64(crc, sg->shard);
    return fds__crc_bytes(crc, sg->routes.len ? sg->routes.blob : NULL,
                          sg->routes.len);
}

/* Persist the live docs of segment sg (its row's live, del_count and crc,
 * or the row deleted when nothing is live); in the caller's
 * transaction. */
int fds__segment_live_save(fds_index *ix, const fds__seg *sg,
                           const fds__live *live, fds_err *err)
{
    sqlite3 *db = ix->st->db;
    sqlite3_stmt *st;
    int rc;
    bool empty = live->del_count == live->max_doc;
    if (empty)
        rc = fds__cat_prepare(db, "DELETE FROM segments WHERE id=?3", &st, err);
    else
        rc = fds__cat_prepare(db, "UPDATE segments SET live=?1, del_count=?2, "
                                  "crc=?4 WHERE id=?3", &st, err);
    if (rc)
        return rc;
    if (!empty) {
        size_t nb = (live->max_doc + 7) / 8;
        sqlite3_bind_blob(st, 1, live->bits, (int)nb, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, (int)live->del_count);
        sqlite3_bind_int64(st, 4, segment_crc(ix, sg, live->del_count,
                                              live->bits, nb));
    }
    sqlite3_bind_int64(st, 3, sg->id);
    return fds__cat_step_done(db, st, err);
}

/* Persist live-docs changes; in the caller's transaction. */
int fds__lives_save(fds_index *ix, fds__live **newlive, unsigned n,
                      fds_err *err)
{
    for (unsigned i = 0; i < n; i++) {
        int rc;
        if (newlive[i] &&
            (rc = fds__segment_live_save(ix, ix->segs[i], newlive[i], err)))
            return rc;
    }
    return 0;
}

int fds__segment_insert(fds_index *ix, fds__seg *sg, int64_t max_seq,
                          fds_err *err)
{
    sqlite3 *db = ix->st->db;
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(db, "INSERT INTO segments(index_id, gen, max_doc, "
                                  "max_seq, crc, shard, routing) "
                                  "VALUES(?,?,?,?,?,?,?)", &st, err);
    if (rc)
        return rc;
    sg->max_seq = max_seq;
    sqlite3_bind_int64(st, 1, ix->id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)sg->gen);
    sqlite3_bind_int64(st, 3, sg->max_doc);
    sqlite3_bind_int64(st, 4, max_seq);
    sqlite3_bind_int64(st, 5, segment_crc(ix, sg, 0, NULL, 0));
    sqlite3_bind_int64(st, 6, sg->shard);
    if (sg->routes.len)
        sqlite3_bind_blob(st, 7, sg->routes.blob, (int)sg->routes.len,
                          SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 7);
    rc = fds__cat_step_done(db, st, err);
    sg->id = sqlite3_last_insert_rowid(db);
    if (!rc) {
        char sql[160];
        snprintf(sql, sizeof sql, "UPDATE indices SET next_gen=%llu WHERE id=%lld",
                 (unsigned long long)ix->next_gen, (long long)ix->id);
        rc = fds__cat_exec(db, sql, err);
    }
    return rc;
}

int fds__mapping_save(fds_index *ix, fds_err *err)
{
    char *mj = fds_mapping_to_json(ix->mapping);
    if (!mj)
        return FDS_ENOMEM;
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(ix->st->db, "INSERT OR REPLACE INTO mappings "
                                          "VALUES(?,?,?)", &st, err);
    if (!rc) {
        sqlite3_bind_int64(st, 1, ix->id);
        sqlite3_bind_text(st, 2, mj, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, fds__crc_bytes(fds__crc_i64(0, ix->id), mj,
                                                 strlen(mj)));
        rc = fds__cat_step_done(ix->st->db, st, err);
    }
    free(mj);
    return rc;
}

/* Merge the stored mapping JSON into ix->mapping (at start-up). */
int fds__mapping_load(fds_store *s, fds_index *ix, fds_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = fds__cat_prepare(s->db, "SELECT json, " FDS_CRC_COLS_MAPPINGS
                                      ", crc FROM mappings WHERE index_id=?",
                               &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, ix->id);
    int row = fds__cat_row(s->db, st, "mappings", err);
    if (row < 0)
        rc = row;
    else if (row == 1 && !fds__cat_row_ok(st, 1, FDS_CRC_NCOLS_MAPPINGS))
        rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "[%s] catalogue row mappings (the mapping) fails its "
                          "checksum (damaged catalogue)", ix->name);
    else if (row == 1)
        rc = fds_mapping_merge_json(ix->mapping,
                                    (const char *)sqlite3_column_text(st, 0),
                                    (size_t)sqlite3_column_bytes(st, 0), err);
    sqlite3_finalize(st);
    return rc;
}

/* Open every segment the catalogue lists for ix, by shard, oldest first
 * within a shard, with its live docs, into ix->segs / ix->lives (at
 * start-up). */
int fds__segments_load(fds_store *s, fds_index *ix, fds_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = fds__cat_prepare(s->db, "SELECT id, gen, live, del_count, max_doc, "
                                      "max_seq, shard, routing, "
                                      FDS_CRC_COLS_SEGMENTS
                                      ", crc FROM segments WHERE index_id=? "
                                      "ORDER BY shard, gen",
                               &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, ix->id);
    int row = 0;
    while (!rc && (row = fds__cat_row(s->db, st, "segments", err)) == 1) {
        fds__seg *sg = NULL;
        int64_t shard = sqlite3_column_int64(st, 6);
        if (!fds__cat_row_ok(st, 8, FDS_CRC_NCOLS_SEGMENTS) || shard < 0 ||
            shard >= ix->nshards) {
            rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                              "[%s] segment [seg_%lld]: catalogue row segments "
                              "(live docs, deleted count, max_doc, max_seq) "
                              "fails its checksum (damaged catalogue)", ix->name,
                              (long long)sqlite3_column_int64(st, 1));
            break;
        }
        rc = fds__seg_open(ix, sqlite3_column_int64(st, 0),
                           (uint64_t)sqlite3_column_int64(st, 1), &sg, err);
        if (rc)
            break;
        sg->max_seq = sqlite3_column_int64(st, 5);
        sg->shard = (uint32_t)shard;
        if (sqlite3_column_type(st, 7) == SQLITE_BLOB &&
            (rc = fds__routes_parse(&sg->routes, sqlite3_column_blob(st, 7),
                                    (size_t)sqlite3_column_bytes(st, 7),
                                    sg->max_doc))) {
            if (rc == FDS_ECORRUPT)
                fds_err_setk(err, rc, FDS_KIND_CORRUPT, "[%s] segment [%s]: "
                             "damaged routing values", ix->name, sg->name);
            fds__seg_unref(sg);
            break;
        }
        if (sqlite3_column_int64(st, 4) != sg->max_doc) {
            rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                              "[%s] segment [%s]: the catalogue says %lld docs, "
                              "the stored-fields file %u", ix->name, sg->name,
                              (long long)sqlite3_column_int64(st, 4), sg->max_doc);
            fds__seg_unref(sg);
            break;
        }
        fds__live *lv = NULL;
        if (sqlite3_column_type(st, 2) == SQLITE_BLOB) {
            size_t nb = (sg->max_doc + 7) / 8;
            if ((size_t)sqlite3_column_bytes(st, 2) != nb) {
                rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                                  "[%s] segment [%s]: live docs of wrong size",
                                  ix->name, sg->name);
                fds__seg_unref(sg);
                break;
            }
            /* (NULL would read as "all live": deleted docs back) */
            if (!(lv = fds__live_copy(NULL, sg->max_doc))) {
                rc = FDS_ENOMEM;
                fds__seg_unref(sg);
                break;
            }
            memcpy(lv->bits, sqlite3_column_blob(st, 2), nb);
            lv->del_count = (uint32_t)sqlite3_column_int(st, 3);
        }
        fds__seg **q = realloc(ix->segs, (ix->nsegs + 1) * sizeof *q);
        fds__live **l = realloc(ix->lives, (ix->nsegs + 1) * sizeof *l);
        if (q)
            ix->segs = q;
        if (l)
            ix->lives = l;
        if (!q || !l) {
            rc = FDS_ENOMEM;
            fds__seg_unref(sg);
            fds__live_unref(lv);
            break;
        }
        ix->segs[ix->nsegs] = sg;
        ix->lives[ix->nsegs++] = lv;
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(st);
    return rc;
}

uint32_t fds__index_row_crc(const char *name, const char *uuid, int64_t created_ms)
{
    uint32_t crc = fds__crc_bytes(0, name, strlen(name));
    crc = fds__crc_bytes(crc, uuid, strlen(uuid));
    return fds__crc_i64(crc, created_ms);
}

int fds__index_rows_delete(fds_store *s, int64_t id, fds_err *err)
{
    const char *tables[] = {"settings", "mappings", "dictionaries", "segments",
                            "translog", "translog_batches", "aliases"};
    int rc = 0;
    for (size_t t = 0; t < sizeof tables / sizeof *tables && !rc; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE index_id=%lld", tables[t],
                 (long long)id);
        rc = fds__cat_exec(s->db, sql, err);
    }
    if (!rc) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM indices WHERE id=%lld",
                 (long long)id);
        rc = fds__cat_exec(s->db, sql, err);
    }
    return rc;
}
