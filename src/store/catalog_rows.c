/*
 * catalog_rows.c: an index's data rows in the catalogue other than the
 * translog: settings, mapping, segments with their live docs, and
 * dictionaries, saved inside the caller's transaction (they take no lock;
 * the caller holds db_mu) and read at start-up.  The schema and the SQLite
 * helpers are in catalog.c; the indices rows in catalog_index.c.
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
    if (!rc)
        rc = fds__cat_index_set_next_gen(db, ix->id, ix->next_gen, err);
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

int fds__cat_segment_delete(sqlite3 *db, int64_t id, fds_err *err)
{
    char sql[128];
    snprintf(sql, sizeof sql, "DELETE FROM segments WHERE id=%lld",
             (long long)id);
    return fds__cat_exec(db, sql, err);
}

int fds__cat_segments_read(sqlite3 *db, int64_t index_id,
                           fds__cat_seg_each each, void *ctx, fds_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = fds__cat_prepare(db, "SELECT id, gen, live, del_count, max_doc, "
                                   "max_seq, shard, routing, "
                                   FDS_CRC_COLS_SEGMENTS
                                   ", crc FROM segments WHERE index_id=? "
                                   "ORDER BY shard, gen",
                               &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, index_id);
    int row = 0;
    while (!rc && (row = fds__cat_row(db, st, "segments", err)) == 1) {
        fds__cat_seg_row r = {
            .id = sqlite3_column_int64(st, 0),
            .gen = sqlite3_column_int64(st, 1),
            .del_count = (uint32_t)sqlite3_column_int(st, 3),
            .max_doc = sqlite3_column_int64(st, 4),
            .max_seq = sqlite3_column_int64(st, 5),
            .shard = sqlite3_column_int64(st, 6),
            .row_ok = fds__cat_row_ok(st, 8, FDS_CRC_NCOLS_SEGMENTS),
        };
        if ((r.has_live = sqlite3_column_type(st, 2) == SQLITE_BLOB)) {
            r.live = sqlite3_column_blob(st, 2);
            r.live_len = (size_t)sqlite3_column_bytes(st, 2);
        }
        if ((r.has_routing = sqlite3_column_type(st, 7) == SQLITE_BLOB)) {
            r.routing = sqlite3_column_blob(st, 7);
            r.routing_len = (size_t)sqlite3_column_bytes(st, 7);
        }
        rc = each(ctx, &r, err);
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(st);
    return rc;
}

int fds__cat_dict_insert(sqlite3 *db, int64_t index_id, int codec,
                         int64_t raw_len, int64_t sample_bytes,
                         const void *bytes, size_t len, int64_t *id,
                         fds_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = fds__cat_prepare(db, "INSERT INTO dictionaries(index_id, codec, raw_len, "
                                  "sample_bytes, bytes, crc) VALUES(?,?,?,?,?,?)",
                              &st, err);
    if (rc)
        return rc;
    uint32_t crc = fds__crc_i64(0, index_id);
    crc = fds__crc_i64(crc, codec);
    crc = fds__crc_i64(crc, raw_len);
    crc = fds__crc_i64(crc, sample_bytes);
    sqlite3_bind_int64(st, 6, fds__crc_bytes(crc, bytes, len));
    sqlite3_bind_int64(st, 1, index_id);
    sqlite3_bind_int(st, 2, codec);
    sqlite3_bind_int64(st, 3, raw_len);
    sqlite3_bind_int64(st, 4, sample_bytes);
    sqlite3_bind_blob(st, 5, bytes, (int)len, SQLITE_STATIC);
    rc = fds__cat_step_done(db, st, err);
    *id = sqlite3_last_insert_rowid(db);
    return rc;
}

int fds__cat_dicts_read(sqlite3 *db, int64_t index_id, fds__cat_dict_each each,
                        void *ctx, fds_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = fds__cat_prepare(db, "SELECT id, codec, raw_len, bytes, "
                                   "sample_bytes, " FDS_CRC_COLS_DICTIONARIES
                                   ", crc FROM dictionaries WHERE "
                                   "index_id=? ORDER BY id", &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, index_id);
    int row = 0;
    while (!rc && (row = fds__cat_row(db, st, "dictionaries", err)) == 1) {
        fds__cat_dict_row r = {
            .id = sqlite3_column_int64(st, 0),
            .row_ok = fds__cat_row_ok(st, 5, FDS_CRC_NCOLS_DICTIONARIES),
        };
        if (r.row_ok) {
            r.raw_len = sqlite3_column_int64(st, 2);
            r.bytes = sqlite3_column_blob(st, 3);
            r.len = (size_t)sqlite3_column_bytes(st, 3);
            r.codec = sqlite3_column_int(st, 1);
            r.sample_bytes = sqlite3_column_int64(st, 4);
        }
        rc = each(ctx, &r, err);
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(st);
    return rc;
}
