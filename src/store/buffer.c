/*
 * buffer.c: the in-memory write buffer of an index (fds__buffer in
 * store_int.h).  Acknowledged writes wait here, visible to realtime gets,
 * until a refresh turns them into a segment; the same operations sit in the
 * catalogue's translog table until that refresh commits.  The buffer keeps
 * documents in arrival order (a segment's doc order) plus an id hash for
 * lookups: FNV-1a, open addressing with linear probing, at most half full.
 *
 * The translog is the durable twin of the buffer: one catalogue row per
 * accepted operation, translog(index_id, seq, op, doc_id, version, source,
 * crc, shard, routing) with op an fds_op_type, doc_id the id bytes, source
 * the document bytes verbatim (NULL for a delete), shard the document's
 * shard, routing the write's routing value (NULL for none) and crc the
 * row checksum of catalog.c over the other eight columns; a row failing it at replay fails the index
 * (FDS_ECORRUPT) instead of replaying a damaged document.  Rows are appended by the write path in its
 * transaction, replayed into the buffer at start-up, and dropped up to a
 * segment's highest seq_no in the refresh transaction that registers it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_hash.h"
#include "catalog.h"
#include "store_int.h"

#define BUF_MIN_SLOTS 1024

void fds__buf_free(fds__buffer *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->docs[i].id);
        free(b->docs[i].src);
        free(b->docs[i].routing);
    }
    free(b->docs);
    free(b->slots);
    memset(b, 0, sizeof *b);
    b->max_seq = -1;
}

/* The hash slot of (shard, id): FNV-1a of the id, the shard mixed in by
 * a multiply (a golden-ratio constant) so ids of different shards spread. */
static size_t buf_hash(const char *id, size_t len, uint32_t shard)
{
    return (size_t)(fds_fnv1a64(id, len) ^ (shard * 0x9E3779B97F4A7C15ull));
}

fds__bufdoc *fds__buf_find(const fds__buffer *b, const char *id, size_t len,
                           uint32_t shard)
{
    if (!b->nslots)
        return NULL;
    size_t mask = b->nslots - 1;
    for (size_t s = buf_hash(id, len, shard) & mask;; s = (s + 1) & mask) {
        uint32_t v = b->slots[s];
        if (!v)
            return NULL;
        fds__bufdoc *d = &b->docs[v - 1];
        if (d->id_len == len && d->shard == shard &&
            memcmp(d->id, id, len) == 0)
            return d;
    }
}

static int buf_rehash(fds__buffer *b, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return FDS_ENOMEM;
    free(b->slots);
    b->slots = slots;
    b->nslots = nslots;
    for (size_t i = 0; i < b->n; i++) {
        size_t s = buf_hash(b->docs[i].id, b->docs[i].id_len, b->docs[i].shard) &
                   (nslots - 1);
        while (slots[s])
            s = (s + 1) & (nslots - 1);
        slots[s] = (uint32_t)i + 1;
    }
    return 0;
}

/* Put a write into the buffer, replacing an earlier one with the same id.
 * Takes ownership of id and src. */
int fds__buf_put(fds__buffer *b, char *id, size_t id_len, uint8_t *src,
                   size_t src_len, int64_t version, int64_t seq, uint32_t shard,
                   char *routing, size_t routing_len)
{
    fds__bufdoc *d = fds__buf_find(b, id, id_len, shard);
    if (d) {
        b->bytes -= d->src_len;
        b->mem -= d->src_len + d->routing_len;
        free(d->src);
        free(d->routing);
        free(id);
        d->routing = routing;
        d->routing_len = routing_len;
        b->mem += routing_len;
        d->src = src;
        d->src_len = src_len;
        d->version = version;
        d->seq_no = seq;
    } else {
        if (b->n == b->cap) {
            size_t cap = b->cap ? b->cap * 2 : 256;
            fds__bufdoc *q = realloc(b->docs, cap * sizeof *q);
            if (!q)
                return FDS_ENOMEM;
            b->docs = q;
            b->cap = cap;
        }
        if ((b->n + 1) * 2 > b->nslots) {
            size_t ns = b->nslots ? b->nslots * 2 : BUF_MIN_SLOTS;
            b->docs[b->n] = (fds__bufdoc){0};
            if (buf_rehash(b, ns))
                return FDS_ENOMEM;
        }
        b->docs[b->n] = (fds__bufdoc){id, id_len, src, src_len, version, seq,
                                      shard, routing, routing_len};
        size_t mask = b->nslots - 1;
        size_t s = buf_hash(id, id_len, shard) & mask;
        while (b->slots[s])
            s = (s + 1) & mask;
        b->slots[s] = (uint32_t)++b->n;
        b->mem += id_len + routing_len + FDS__BUF_DOC_OVERHEAD;
    }
    b->bytes += src_len;
    b->mem += src_len;
    if (seq > b->max_seq)
        b->max_seq = seq;
    return 0;
}

void fds__buf_account(fds_index *ix)
{
    uint64_t cur = ix->buf.mem + ix->frozen.mem;
    if (cur >= ix->buf_accounted)
        atomic_fetch_add(&ix->st->buf_mem, cur - ix->buf_accounted);
    else
        atomic_fetch_sub(&ix->st->buf_mem, ix->buf_accounted - cur);
    ix->buf_accounted = cur;
    uint64_t fz = ix->frozen.mem;
    if (fz >= ix->frozen_accounted)
        atomic_fetch_add(&ix->st->frozen_mem, fz - ix->frozen_accounted);
    else
        atomic_fetch_sub(&ix->st->frozen_mem, ix->frozen_accounted - fz);
    ix->frozen_accounted = fz;
}

bool fds__buf_over(fds_store *s)
{
    /* the two counters change one after the other (fds__buf_account):
     * for a moment the difference is off by what one refresh froze or
     * freed, which the next check sees right */
    uint64_t fz = atomic_load(&s->frozen_mem);
    uint64_t mem = atomic_load(&s->buf_mem);
    return mem > fz && mem - fz > atomic_load(&s->buf_limit);
}

void fds__buf_lost(fds_index *ix)
{
    if (!ix->failure)
        ix->failure = strdup("out of memory putting acknowledged writes in the "
                             "write buffer; restart to replay them from the "
                             "translog");
    fprintf(stderr, "fieldstore: [%s] %s\n", ix->name,
            ix->failure ? ix->failure : "out of memory");
}

/* ---- the translog ------------------------------------------------------- */

int fds__translog_prepare(sqlite3 *db, sqlite3_stmt **ins, fds_err *err)
{
    return fds__cat_prepare(db, "INSERT INTO translog(index_id, seq, op, doc_id, "
                                "version, source, crc, shard, routing) "
                                "VALUES(?,?,?,?,?,?,?,?,?)", ins, err);
}

int fds__translog_append(sqlite3 *db, sqlite3_stmt *ins, int64_t index_id,
                         int64_t seq, const fds_write_op *op,
                         const fds_write_result *r, fds_err *err)
{
    sqlite3_reset(ins);
    size_t idl = strlen(r->id);
    const void *src = op->type == FDS_OP_DELETE ? NULL
                      : op->src ? (const void *)op->src : "";
    uint32_t crc = fds__crc_i64(0, index_id);
    crc = fds__crc_i64(crc, seq);
    crc = fds__crc_i64(crc, op->type);
    crc = fds__crc_bytes(crc, r->id, idl);
    crc = fds__crc_i64(crc, r->version);
    crc = fds__crc_bytes(crc, src, src ? op->src_len : 0);
    crc = fds__crc_i64(crc, r->shard);
    crc = fds__crc_bytes(crc, op->routing, op->routing ? op->routing_len : 0);
    sqlite3_bind_int64(ins, 1, index_id);
    sqlite3_bind_int64(ins, 2, seq);
    sqlite3_bind_int(ins, 3, op->type);
    sqlite3_bind_blob(ins, 4, r->id, (int)idl, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 5, r->version);
    if (!src)
        sqlite3_bind_null(ins, 6);
    else
        sqlite3_bind_blob(ins, 6, src, (int)op->src_len, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 7, crc);
    sqlite3_bind_int64(ins, 8, r->shard);
    if (op->routing)
        sqlite3_bind_blob(ins, 9, op->routing ? op->routing : "",
                          (int)op->routing_len, SQLITE_STATIC);
    else
        sqlite3_bind_null(ins, 9);
    if (sqlite3_step(ins) != SQLITE_DONE)
        return fds_err_setk(err, FDS_ESQL, FDS_KIND_INTERNAL, "translog: %s",
                            sqlite3_errmsg(db));
    return 0;
}

/* Replay ix's translog rows into ix->buf in seq order (at start-up). */
int fds__translog_replay(fds_store *s, fds_index *ix, fds_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = fds__cat_prepare(s->db, "SELECT seq, op, doc_id, version, source, "
                                      "shard, routing, " FDS_CRC_COLS_TRANSLOG
                                      ", crc "
                                      "FROM translog "
                                      "WHERE index_id=? ORDER BY seq", &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, ix->id);
    int row = 0;
    while (!rc && (row = fds__cat_row(s->db, st, "translog", err)) == 1) {
        if (!fds__cat_row_ok(st, 7, FDS_CRC_NCOLS_TRANSLOG)) {
            rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                              "[%s] translog entry seq_no [%lld] fails its "
                              "checksum (damaged catalogue); not replayed, "
                              "nothing removed", ix->name,
                              (long long)sqlite3_column_int64(st, 0));
            break;
        }
        size_t il = (size_t)sqlite3_column_bytes(st, 2);
        size_t sl = (size_t)sqlite3_column_bytes(st, 4);
        char *id = malloc(il + 1);
        uint8_t *src = NULL;
        if (id) {
            memcpy(id, sqlite3_column_blob(st, 2), il);
            id[il] = 0;
        }
        if (sqlite3_column_int(st, 1) != FDS_OP_DELETE) {
            src = malloc(sl + 1);
            if (src && sl)
                memcpy(src, sqlite3_column_blob(st, 4), sl);
        }
        if (!id || (!src && sqlite3_column_int(st, 1) != FDS_OP_DELETE)) {
            free(id);
            free(src);
            rc = FDS_ENOMEM;
            break;
        }
        int64_t shard = sqlite3_column_int64(st, 5);
        char *routing = NULL;
        size_t rl = (size_t)sqlite3_column_bytes(st, 6);
        if (sqlite3_column_type(st, 6) != SQLITE_NULL &&
            (routing = malloc(rl + 1)) != NULL) {
            memcpy(routing, rl ? sqlite3_column_blob(st, 6) : "", rl);
            routing[rl] = 0;
        } else if (sqlite3_column_type(st, 6) != SQLITE_NULL) {
            free(id);
            free(src);
            rc = FDS_ENOMEM;
            break;
        }
        if (shard < 0 || shard >= ix->nshards) {
            free(id);
            free(src);
            free(routing);
            rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                              "[%s] translog entry seq_no [%lld] names shard "
                              "[%lld] of %u", ix->name,
                              (long long)sqlite3_column_int64(st, 0),
                              (long long)shard, ix->nshards);
            break;
        }
        rc = fds__buf_put(&ix->buf, id, il, src, src ? sl : 0,
                     sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 0),
                     (uint32_t)shard, routing, routing ? rl : 0);
    }
    if (!rc && row < 0)
        rc = row;
    sqlite3_finalize(st);
    if (rc == FDS_ENOMEM)
        fds_err_setk(err, rc, FDS_KIND_INTERNAL, "translog of [%s]: out of "
                     "memory replaying it into the write buffer", ix->name);
    return rc;
}

int fds__translog_trim(fds_index *ix, int64_t max_seq, fds_err *err)
{
    char sql[160];
    snprintf(sql, sizeof sql, "DELETE FROM translog WHERE index_id=%lld "
                              "AND seq<=%lld",
             (long long)ix->id, (long long)max_seq);
    return fds__cat_exec(ix->st->db, sql, err);
}
