/*
 * buffer.c: the in-memory write buffer of an index (fds__buffer in
 * store_int.h).  Acknowledged writes wait here, visible to realtime gets,
 * until a refresh turns them into a segment; the same operations sit in the
 * catalogue's translog table until that refresh commits.  The buffer keeps
 * documents in arrival order (a segment's doc order) plus an id hash for
 * lookups: FNV-1a, open addressing with linear probing, at most half full.
 *
 * The translog is the durable twin of the buffer: one catalogue row per
 * write batch, translog_batches(index_id, first_seq, last_seq, ops, crc),
 * its accepted operations in seq order, as Elasticsearch's translog
 * appends a request's operations to its file in one write (a batch of
 * more than 64 MiB of records takes several rows: write.c,
 * TRANSLOG_ROW_BYTES).  `ops` holds
 * one record per operation, little-endian (fds__tlop_next reads them):
 *   u8 op (an fds_op_type), i64 seq, i64 version, u32 shard,
 *   u32 id length, the id bytes,
 *   u32 routing length + 1 (0: no routing), the routing bytes,
 *   u32 source length + 1 (0: no source, a delete), the document bytes
 * and crc is the row checksum of catalog.c over the other four columns; a
 * row failing it, or a record that does not parse, at replay fails the
 * index (FDS_ECORRUPT) instead of replaying a damaged document.  Rows are
 * appended by the write path in its transaction, replayed into the buffer
 * at start-up, and dropped once a segment holds every operation of theirs
 * (last_seq up to its highest seq_no), in the refresh transaction that
 * registers it: a batch goes into one buffer whole, under the index's
 * write lock, so no refresh splits one.  One row per batch, not per
 * operation: a row per document cost a quarter of a _bulk's server CPU
 * (SQLite's B-tree inserts and deletes of two trees per document,
 * measured with bench/scale/bulk.sh; docs/benchmarks.md).
 *
 * Catalogues of schema 3 and before kept one row per operation in
 * `translog` (index_id, seq, op, doc_id, version, source, crc, shard,
 * routing); rows left there are replayed first and trimmed the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fds_bytes.h"
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
    uint64_t lim = atomic_load(&s->buf_limit);
    uint64_t disk = atomic_load(&s->disk.buf_cap); /* disk.c */
    return mem > fz && mem - fz > (disk < lim ? disk : lim);
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

/* The fixed bytes of a record: op, seq, version, shard and three lengths. */
#define TLOP_FIXED (1 + 8 + 8 + 4 + 4 + 4 + 4)

size_t fds__tlop_size(const fds_write_op *op, const fds_write_result *r)
{
    return TLOP_FIXED + strlen(r->id) + (op->routing ? op->routing_len : 0) +
           (op->type == FDS_OP_DELETE ? 0 : op->src_len);
}

uint8_t *fds__tlop_put(uint8_t *p, const fds_write_op *op,
                       const fds_write_result *r)
{
    size_t idl = strlen(r->id);
    *p++ = (uint8_t)op->type;
    fds__put_u64(p, (uint64_t)r->seq_no);
    fds__put_u64(p + 8, (uint64_t)r->version);
    fds__put_u32(p + 16, r->shard);
    fds__put_u32(p + 20, (uint32_t)idl);
    p += 24;
    memcpy(p, r->id, idl);
    p += idl;
    fds__put_u32(p, op->routing ? (uint32_t)op->routing_len + 1 : 0);
    p += 4;
    if (op->routing && op->routing_len)
        memcpy(p, op->routing, op->routing_len);
    p += op->routing ? op->routing_len : 0;
    bool src = op->type != FDS_OP_DELETE;
    fds__put_u32(p, src ? (uint32_t)op->src_len + 1 : 0);
    p += 4;
    if (src && op->src_len)
        memcpy(p, op->src, op->src_len);
    return p + (src ? op->src_len : 0);
}

/* `n` bytes at *p (advanced), or NULL when fewer are left. */
static const uint8_t *take(const uint8_t **p, const uint8_t *end, size_t n)
{
    if ((size_t)(end - *p) < n)
        return NULL;
    const uint8_t *q = *p;
    *p += n;
    return q;
}

int fds__tlop_next(const uint8_t **p, const uint8_t *end, fds__tlop *o)
{
    if (*p == end)
        return 0;
    const uint8_t *h = take(p, end, 25);
    if (!h || h[0] > FDS_OP_DELETE)
        return -1;
    o->op = h[0];
    o->seq = (int64_t)fds__get_u64(h + 1);
    o->version = (int64_t)fds__get_u64(h + 9);
    o->shard = fds__get_u32(h + 17);
    o->id_len = fds__get_u32(h + 21);
    const uint8_t *id = take(p, end, o->id_len), *rl = id ? take(p, end, 4) : NULL;
    if (!rl)
        return -1;
    uint32_t r = fds__get_u32(rl);
    o->routing_len = r ? r - 1 : 0;
    const uint8_t *rt = take(p, end, o->routing_len), *sl = rt ? take(p, end, 4) : NULL;
    if (!sl)
        return -1;
    uint32_t sn = fds__get_u32(sl);
    o->src_len = sn ? sn - 1 : 0;
    const uint8_t *src = take(p, end, o->src_len);
    if (!src || (sn == 0) != (o->op == FDS_OP_DELETE))
        return -1;
    o->id = (const char *)id;
    o->routing = r ? (const char *)rt : NULL;
    o->src = sn ? src : NULL;
    return 1;
}

/* Put one replayed operation into ix->buf (copies its bytes): 0,
 * FDS_ENOMEM, or FDS_ECORRUPT for a shard the index does not have. */
static int replay_put(fds_index *ix, const fds__tlop *o, fds_err *err)
{
    if (o->shard >= ix->nshards)
        return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                            "[%s] translog entry seq_no [%lld] names shard "
                            "[%u] of %u", ix->name, (long long)o->seq,
                            o->shard, ix->nshards);
    char *id = malloc(o->id_len + 1);
    uint8_t *src = o->src ? malloc(o->src_len + 1) : NULL;
    char *routing = o->routing ? malloc(o->routing_len + 1) : NULL;
    if (!id || (o->src && !src) || (o->routing && !routing)) {
        free(id);
        free(src);
        free(routing);
        return FDS_ENOMEM;
    }
    memcpy(id, o->id, o->id_len);
    id[o->id_len] = 0;
    if (src && o->src_len)
        memcpy(src, o->src, o->src_len);
    if (routing) {
        if (o->routing_len)
            memcpy(routing, o->routing, o->routing_len);
        routing[o->routing_len] = 0;
    }
    int rc = fds__buf_put(&ix->buf, id, o->id_len, src, src ? o->src_len : 0,
                          o->version, o->seq, o->shard, routing,
                          routing ? o->routing_len : 0);
    if (rc) {
        free(id);
        free(src);
        free(routing);
    }
    return rc;
}

/* One row of ix's schema-3 `translog` table (one per operation) into
 * ix->buf (fds__cat_tlop_each; ctx: ix). */
static int replay_op(void *ctx, const fds__cat_tlop_row *r, fds_err *err)
{
    fds_index *ix = ctx;
    if (!r->row_ok)
        return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                            "[%s] translog entry seq_no [%lld] fails its "
                            "checksum (damaged catalogue); not replayed, "
                            "nothing removed", ix->name, (long long)r->seq);
    bool del = r->op == FDS_OP_DELETE;
    fds__tlop o = {
        .op = r->op,
        .seq = r->seq,
        .version = r->version,
        .shard = r->shard < 0 || r->shard > UINT32_MAX ? UINT32_MAX
                                                       : (uint32_t)r->shard,
        .id = r->doc_id ? r->doc_id : "",
        .id_len = r->doc_id_len,
        .src = del ? NULL : (const uint8_t *)"",
        .routing = !r->has_routing ? NULL : r->routing ? r->routing : "",
        .routing_len = r->routing_len,
    };
    if (!del && r->source) {
        o.src = r->source;
        o.src_len = r->source_len;
    }
    return replay_put(ix, &o, err);
}

/* One translog_batches row of ix into ix->buf, its records in seq order
 * (fds__cat_batch_each; ctx: ix). */
static int replay_batch(void *ctx, const fds__cat_batch_row *r, fds_err *err)
{
    fds_index *ix = ctx;
    int64_t first = r->first_seq, last = r->last_seq;
    if (!r->row_ok)
        return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                            "[%s] translog entries seq_no [%lld] to [%lld] "
                            "fail their checksum (damaged catalogue); not "
                            "replayed, nothing removed", ix->name,
                            (long long)first, (long long)last);
    const uint8_t *p = r->ops;
    const uint8_t *end = p ? p + r->len : p;
    fds__tlop o;
    int got, rc = 0;
    int64_t prev = first - 1;
    while (!rc && (got = fds__tlop_next(&p, end, &o)) == 1) {
        if (o.seq <= prev || o.seq > last)
            break;
        prev = o.seq;
        rc = replay_put(ix, &o, err);
    }
    if (!rc && (got != 0 || prev != last))
        rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "[%s] translog entries seq_no [%lld] to [%lld] "
                          "do not parse after seq_no [%lld] (damaged "
                          "catalogue); not replayed, nothing removed",
                          ix->name, (long long)first, (long long)last,
                          (long long)prev);
    return rc;
}

/* Replay ix's translog into ix->buf in seq order (at start-up): the rows
 * of the schema-3 table first (all older than any batch row). */
int fds__translog_replay(fds_store *s, fds_index *ix, fds_err *err)
{
    int rc = fds__cat_translog_ops_read(s->db, ix->id, replay_op, ix, err);
    if (!rc)
        rc = fds__cat_translog_batches_read(s->db, ix->id, replay_batch, ix, err);
    if (rc == FDS_ENOMEM)
        fds_err_setk(err, rc, FDS_KIND_INTERNAL, "translog of [%s]: out of "
                     "memory replaying it into the write buffer", ix->name);
    return rc;
}

int fds__translog_trim(fds_index *ix, int64_t max_seq, fds_err *err)
{
    return fds__cat_translog_trim(ix->st->db, ix->id, max_seq, err);
}

/* ---- the node's buffer limit (--index-buffer-size) ---- */

static uint64_t phys_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
}

uint64_t fds_index_buffer_default(void)
{
    uint64_t v = phys_ram() / 100 * FDS_INDEX_BUFFER_DEFAULT_PERCENT;
    if (v > FDS_INDEX_BUFFER_DEFAULT_MAX || v == 0)
        v = FDS_INDEX_BUFFER_DEFAULT_MAX;
    return v < FDS_INDEX_BUFFER_MIN ? FDS_INDEX_BUFFER_MIN : v;
}

int fds_index_buffer_parse(const char *value, uint64_t *out, fds_err *err)
{
    const char *pct = value ? strchr(value, '%') : NULL;
    uint64_t ram = phys_ram(), v = 0;
    bool ok = value && *value;
    if (ok && pct) {
        char *end;
        errno = 0;
        double p = strtod(value, &end);
        ok = !errno && end == pct && !pct[1] && p > 0 && p <= 100 && ram;
        v = ok ? (uint64_t)((double)ram * p / 100) : 0;
    } else if (ok) {
        long long x;
        ok = !fds__parse_bytes(value, &x) && x >= 0;
        v = ok ? (uint64_t)x : 0;
    }
    if (!ok)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "bad --index-buffer-size [%s]: a byte size (\"64mb\", "
                            "\"67108864\") or a percentage of physical memory "
                            "(\"10%%\", more than 0 and at most 100)",
                            value ? value : "");
    if (v < FDS_INDEX_BUFFER_MIN || (ram && v > ram))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "bad --index-buffer-size [%s]: %llu bytes, must be "
                            "at least %u bytes and at most the physical memory "
                            "(%llu bytes)", value, (unsigned long long)v,
                            FDS_INDEX_BUFFER_MIN, (unsigned long long)ram);
    *out = v;
    return 0;
}

void fds_store_set_index_buffer_size(fds_store *s, uint64_t bytes)
{
    atomic_store(&s->buf_limit, bytes);
}
