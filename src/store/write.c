/*
 * write.c: the write path (index, create, delete): each batch is decided
 * against the buffer and the published segments (ids, versions, seq_no
 * checks), appended to the translog in one catalogue transaction (fsync'd
 * before the reply with durability=request), and only after that commit
 * applied to the in-memory buffer (buffer.c).  A batch that leaves the
 * node's write buffers past --index-buffer-size asks the flusher thread to
 * turn this index's buffer into a segment and answers
 * (fds__buffer_flush_async); a batch that finds them past it waits until
 * the full buffer is frozen (fds__buffer_wait) before it is applied, so
 * writers fill one new buffer while a full one is written, no more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "fds_hash.h"
#include "fds_text.h"
#include "store_int.h"

#define AUTO_ID_LEN 20

/* The live doc with `id` in the published segments of `shard` (newest
 * first). */
static bool segs_find_live(fds_index *ix, const char *id, size_t len,
                           uint32_t shard, int64_t *version, int64_t *seq_no)
{
    bool found = false;
    pthread_rwlock_rdlock(&ix->segs_lock);
    for (unsigned i = ix->nsegs; i-- > 0 && !found;) {
        uint32_t doc;
        if (ix->segs[i]->shard == shard &&
            fds__seg_may_hold(ix->segs[i], id, len) &&
            fds_sidx_find_id(ix->segs[i]->sidx, id, len, &doc) == 0 &&
            fds__live_get(ix->lives[i], doc)) {
            found = true;
            *version = fds__seg_version(ix->segs[i], doc);
            *seq_no = fds__seg_seqno(ix->segs[i], doc);
        }
    }
    pthread_rwlock_unlock(&ix->segs_lock);
    return found;
}

/* Current state of an id: 1 = live (version and seq_no set), 0 =
 * absent/deleted (version of the delete, if known).  Caller holds wmu. */
static int current_state(fds_index *ix, const char *id, size_t len,
                         uint32_t shard, int64_t *version, int64_t *seq_no)
{
    fds__bufdoc *d = fds__buf_find(&ix->buf, id, len, shard);
    if (!d)
        d = fds__buf_find(&ix->frozen, id, len, shard);
    if (d) {
        *version = d->version;
        *seq_no = d->seq_no;
        return d->src ? 1 : 0;
    }
    return segs_find_live(ix, id, len, shard, version, seq_no) ? 1 : 0;
}

/* A 20-character base64url id, time-ordered like Elasticsearch's. */
static void auto_id(fds_index *ix, char out[AUTO_ID_LEN + 1])
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint64_t t = (uint64_t)fds__now_ms();
    uint64_t c = ++ix->id_counter ^ ((uint64_t)ix->id << 48);
    uint64_t r = (uint64_t)(uintptr_t)ix ^ 0x9E3779B97F4A7C15ull * (uint64_t)getpid();
    for (int i = 0; i < 8; i++)
        out[i] = b64[(t >> (6 * (7 - i))) & 63];
    for (int i = 0; i < 8; i++)
        out[8 + i] = b64[(c >> (6 * (7 - i))) & 63];
    for (int i = 0; i < 4; i++)
        out[16 + i] = b64[(r >> (6 * i)) & 63];
    out[AUTO_ID_LEN] = 0;
}

int fds_write_id_validate(const char *id, size_t len, bool required, char *msg,
                          size_t cap)
{
    if (cap)
        msg[0] = 0;
    if (required && (!id || !len)) {
        snprintf(msg, cap, "id is missing");
        return FDS_EINVAL;
    }
    if (!id || len <= FDS_DOC_ID_MAX)
        return 0;
    size_t shown = fds_utf8_cut((const uint8_t *)id, len, FDS_DOC_ID_ECHO_MAX);
    int n = snprintf(msg, cap, "id [%.*s%s] is too long, must be no longer than "
                               "%d bytes but was: %zu",
                     (int)shown, id, shown < len ? "..." : "", FDS_DOC_ID_MAX, len);
    if (n >= (int)cap && cap)
        msg[fds_utf8_cut((const uint8_t *)msg, cap - 1, cap - 1)] = 0;
    return FDS_EINVAL;
}

/* Validate op's id (or assign one) into r->id.  Returns 0, or FDS_EINVAL
 * with r->err saying why. */
static int op_id(fds_index *ix, const fds_write_op *op, fds_write_result *r)
{
    fds_err *e = &r->err;
    char msg[FDS_ERR_REASON_MAX];
    if (fds_write_id_validate(op->id, op->id_len, op->type == FDS_OP_DELETE, msg,
                              sizeof msg))
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_VALIDATION,
                            "Validation Failed: 1: %s;", msg);
    if (op->id && op->id_len == 0)
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "if _id is specified it must not be empty");
    if (op->id) {
        memcpy(r->id, op->id, op->id_len);
        r->id[op->id_len] = 0;
    } else {
        auto_id(ix, r->id);
    }
    return 0;
}

/* The accepted ops of one batch by id, so that deciding an op finds an
 * earlier write of its id in the batch in O(1) rather than by a scan of
 * the batch before it (quadratic: 2 * 10^8 string compares for one
 * 20,000-doc _bulk).  Open addressing on fds_fnv1a64 with linear probing,
 * at most half full; a slot holds the op's index + 1 (0 = empty) and the
 * key is (res[index].shard, res[index].id).  The newest accepted op of an id replaces older ones. */
#define BATCH_IDS_MIN_SLOTS 16

typedef struct batch_ids {
    size_t *slots;
    size_t mask;
} batch_ids;

static int batch_ids_init(batch_ids *b, size_t n)
{
    size_t cap = BATCH_IDS_MIN_SLOTS;
    while (cap < 2 * n)
        cap <<= 1;
    b->slots = calloc(cap, sizeof *b->slots);
    b->mask = cap - 1;
    return b->slots ? 0 : FDS_ENOMEM;
}

/* The slot of `id` (len bytes, NUL-terminated): the one holding it, or the
 * empty one where it goes. */
static size_t *batch_ids_slot(const batch_ids *b, const fds_write_result *res,
                              const char *id, size_t len, uint32_t shard)
{
    size_t s = fds_fnv1a64(id, len) & b->mask;
    while (b->slots[s] && (res[b->slots[s] - 1].shard != shard ||
                           strcmp(res[b->slots[s] - 1].id, id)))
        s = (s + 1) & b->mask;
    return &b->slots[s];
}

/* State of res[i].id before op i: an earlier accepted op of this batch on
 * the same id counts first (`seen`), then the buffer and segments
 * (current_state).  Returns 1 = live, 0 = absent or deleted. */
static int op_prior_state(fds_index *ix, const fds_write_op *ops,
                          const fds_write_result *res, const batch_ids *seen,
                          size_t i, size_t idl, int64_t *ver, int64_t *cur_seq)
{
    size_t k = *batch_ids_slot(seen, res, res[i].id, idl, res[i].shard);
    if (k--) {
        *ver = res[k].version;
        *cur_seq = res[k].seq_no;
        return ops[k].type == FDS_OP_DELETE ? 0 : 1;
    }
    return current_state(ix, res[i].id, idl, res[i].shard, ver, cur_seq);
}

/* The version checks of Elasticsearch (if_seq_no/if_primary_term, external
 * versions, create on an existing id).  Returns 0, or FDS_ECONFLICT with
 * r->err saying why. */
static int op_check_version(const fds_write_op *op, fds_write_result *r,
                            int state, int64_t ver, int64_t cur_seq)
{
    fds_err *e = &r->err;
    if (op->check_seq_no &&
        (state != 1 || cur_seq != op->if_seq_no || op->if_primary_term != 1)) {
        if (state == 1)
            return fds_err_setk(e, FDS_ECONFLICT, FDS_KIND_CONFLICT,
                                "[%s]: version conflict, required seqNo "
                                "[%lld], primary term [%lld]. current "
                                "document has seqNo [%lld] and primary "
                                "term [1]", r->id, (long long)op->if_seq_no,
                                (long long)op->if_primary_term,
                                (long long)cur_seq);
        return fds_err_setk(e, FDS_ECONFLICT, FDS_KIND_CONFLICT,
                            "[%s]: version conflict, required seqNo "
                            "[%lld], primary term [%lld] but no document "
                            "was found", r->id, (long long)op->if_seq_no,
                            (long long)op->if_primary_term);
    }
    bool gte = op->version_type == FDS_VERSION_EXTERNAL_GTE;
    if (op->version_type != FDS_VERSION_INTERNAL && state == 1 &&
        (gte ? ver > op->external_version : ver >= op->external_version))
        return fds_err_setk(e, FDS_ECONFLICT, FDS_KIND_CONFLICT,
                            "[%s]: version conflict, current version [%lld] "
                            "is higher %s the one provided [%lld]",
                            r->id, (long long)ver, gte ? "than" : "or equal to",
                            (long long)op->external_version);
    if (op->type == FDS_OP_CREATE && state == 1)
        return fds_err_setk(e, FDS_ECONFLICT, FDS_KIND_CONFLICT,
                            "[%s]: version conflict, document already "
                            "exists (current version [%lld])",
                            r->id, (long long)ver);
    return 0;
}

/* Would op_decide get as far as mapping op's document (its id and
 * routing valid, not a delete)?  The checks of op_id and op_decide before
 * fds_doc_map, without assigning an id. */
static bool op_maps(const fds_write_op *op)
{
    char msg[FDS_ERR_REASON_MAX];
    return op->type != FDS_OP_DELETE &&
           !fds_write_id_validate(op->id, op->id_len, false, msg, sizeof msg) &&
           !(op->id && op->id_len == 0) &&
           !(op->routing && op->routing_len > FDS_ROUTING_MAX);
}

/*
 * Map (parse, validate, add dynamic fields for) the documents of a batch
 * before the batch takes wmu: the most expensive step of a write, so two
 * writers parse on two cores and only the decisions, the translog commit
 * and the copy into the buffer are serialized.  mapped[i] is
 * fds_doc_map's answer for op i (res[i].err filled when not 0), 0 for an
 * op it does not map (op_maps).  Mapping changes of a document whose write
 * later fails stay, as with any later step (query.h, fds_doc_map).
 */
static void premap_batch(fds_index *ix, const fds_write_op *ops, size_t n,
                         fds_write_result *res, int *mapped)
{
    fds_index_settings set;
    fds_mapping_limits lim;
    fds_index_get_settings(ix, &set);
    fds_settings_mapping_limits(&set, &lim);
    for (size_t i = 0; i < n; i++) {
        mapped[i] = 0;
        if (!op_maps(&ops[i]))
            continue;
        fds_err_clear(&res[i].err);
        mapped[i] = fds_doc_map_limited(ix->mapping, ops[i].src, ops[i].src_len,
                                        &lim, &res[i].err);
    }
}

/* Decide op i of the batch with sequence number `seq`: fills res[i] (id,
 * version, seq_no, created/found, or code and err).  `mapped`: the
 * premap_batch answer of op i (with res[i].err), or NULL to map here.
 * Returns res[i].code: 0 when the op goes to the translog. */
static int op_decide(fds_index *ix, const fds_write_op *ops,
                     fds_write_result *res, batch_ids *seen, size_t i,
                     int64_t seq, const int *mapped)
{
    const fds_write_op *op = &ops[i];
    fds_write_result *r = &res[i];
    int mrc = mapped ? mapped[i] : 0;
    fds_err merr;
    if (mrc)
        merr = r->err;
    /* field by field: a whole-struct memset writes ~1.6 KiB per item */
    r->code = 0;
    fds_err_clear(&r->err);
    r->id[0] = 0;
    r->version = r->seq_no = 0;
    r->created = r->found = false;
    r->shard = 0;
    if ((r->code = op_id(ix, op, r)))
        return r->code;
    if (op->routing && op->routing_len > FDS_ROUTING_MAX)
        return r->code = fds_err_setk(&r->err, FDS_EINVAL, FDS_KIND_VALIDATION,
                                      "Validation Failed: 1: routing is too "
                                      "long, must be no longer than %d bytes "
                                      "but was: %zu;", FDS_ROUTING_MAX,
                                      op->routing_len);
    size_t idl = strlen(r->id);
    r->shard = fds__shard_of(ix, r->id, idl, op->routing, op->routing_len);
    if (mrc) {
        r->err = merr;
        return r->code = mrc;
    }
    if (!mapped && op->type != FDS_OP_DELETE) {
        fds_mapping_limits lim; /* writers hold wmu: settings are stable */
        fds_settings_mapping_limits(&ix->settings, &lim);
        if ((r->code = fds_doc_map_limited(ix->mapping, op->src, op->src_len,
                                           &lim, &r->err)))
            return r->code;
    }
    int64_t ver = 0, cur_seq = -1;
    int state = op_prior_state(ix, ops, res, seen, i, idl, &ver, &cur_seq);
    if ((r->code = op_check_version(op, r, state, ver, cur_seq)))
        return r->code;
    if (op->type == FDS_OP_DELETE && state == 0) {
        /* Elasticsearch answers not_found without an error */
        r->found = false;
        r->version = ver + 1;
        r->seq_no = seq;
    } else {
        r->found = op->type == FDS_OP_DELETE;
        r->created = state == 0;
        r->version = op->version_type != FDS_VERSION_INTERNAL ? op->external_version
                                                              : ver + 1;
        r->seq_no = seq;
    }
    *batch_ids_slot(seen, res, r->id, idl, r->shard) = i + 1;
    return 0;
}

/* After the translog commit: copy every accepted op into the buffer.  A
 * delete of an absent id leaves a tombstone too, as its translog row does
 * at replay: the next write of that id gets the delete's version + 1, as in
 * Elasticsearch, before and after a restart alike.  Caller holds wmu.
 * Returns 0 or FDS_ENOMEM. */
static int apply_to_buffer(fds_index *ix, const fds_write_op *ops,
                           const fds_write_result *res, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (res[i].code)
            continue;
        size_t idl = strlen(res[i].id);
        char *id = malloc(idl + 1);
        uint8_t *src = NULL;
        if (id)
            memcpy(id, res[i].id, idl + 1);
        if (ops[i].type != FDS_OP_DELETE) {
            src = malloc(ops[i].src_len + 1);
            if (src)
                memcpy(src, ops[i].src, ops[i].src_len);
        }
        char *routing = ops[i].routing ? malloc(ops[i].routing_len + 1) : NULL;
        if (routing) {
            memcpy(routing, ops[i].routing, ops[i].routing_len);
            routing[ops[i].routing_len] = 0;
        }
        if (!id || (ops[i].type != FDS_OP_DELETE && !src) ||
            (ops[i].routing && !routing)) {
            free(id);
            free(src);
            free(routing);
            rc = FDS_ENOMEM;
            break;
        }
        rc = fds__buf_put(&ix->buf, id, idl, src, src ? ops[i].src_len : 0,
                          res[i].version, res[i].seq_no, res[i].shard, routing,
                          routing ? ops[i].routing_len : 0);
        if (rc) {
            free(id);
            free(src);
            free(routing);
            pthread_mutex_lock(&ix->meta_mu); /* failure: see store_int.h */
            fds__buf_lost(ix);
            pthread_mutex_unlock(&ix->meta_mu);
        }
    }
    return rc;
}

/* A batch's translog rows hold at most this many bytes of records each
 * (one record alone may be larger): SQLite refuses a value over its
 * SQLITE_MAX_LENGTH, 1,000,000,000 bytes by default, and a row is read
 * whole at replay. */
#define TRANSLOG_ROW_BYTES (64u << 20)

/* One translog row of a batch: records [off, off + len) of its buffer,
 * seq_nos first..last. */
typedef struct tl_row {
    size_t off, len;
    int64_t first, last;
} tl_row;

int fds_index_write(fds_index *ix, const fds_write_op *ops, size_t n,
                    fds_write_result *res, bool refresh, fds_err *err)
{
    /* buffers already over the limit (a flush is running, or another
     * index's buffer is full): wait for it, or flush, before adding more */
    if (fds__buf_over(ix->st))
        fds__buffer_wait(ix);
    batch_ids seen;
    if (batch_ids_init(&seen, n))
        return FDS_ENOMEM;
    /* an index that is not open maps nothing: the batch fails below */
    pthread_mutex_lock(&ix->meta_mu);
    bool open = ix->open && !ix->failure && !atomic_load(&ix->deleted);
    pthread_mutex_unlock(&ix->meta_mu);
    int *mapped = open ? malloc((n + 1) * sizeof *mapped) : NULL;
    if (mapped)
        premap_batch(ix, ops, n, res, mapped);
    pthread_mutex_lock(&ix->wmu);
    int urc = fds__index_usable(ix, err);
    if (urc) {
        pthread_mutex_unlock(&ix->wmu);
        free(seen.slots);
        free(mapped);
        return urc;
    }
    fds_store *s = ix->st;
    /* the flood stage first: it samples the disk when due, also while the
     * index's read_only_allow_delete block waits to be released */
    if (fds__disk_flood(s)) {
        pthread_mutex_unlock(&ix->wmu);
        free(seen.slots);
        free(mapped);
        return fds__index_blocked(ix, err);
    }
    int brc = fds_index_check_block(ix, FDS_BLOCK_LEVEL_WRITE, err);
    if (brc) {
        pthread_mutex_unlock(&ix->wmu);
        free(seen.slots);
        free(mapped);
        return brc;
    }
    bool durable = ix->settings.durability == FDS_DURABILITY_REQUEST;
    /* decide every op first (wmu keeps the index's writes one at a time);
     * then one translog row of the accepted ops, and the buffer only after
     * the commit */
    int64_t seq0 = ix->next_seq, seq = seq0;
    size_t tl_len = 0;
    for (size_t i = 0; i < n; i++) {
        if (op_decide(ix, ops, res, &seen, i, seq, mapped))
            continue;
        tl_len += fds__tlop_size(&ops[i], &res[i]);
        seq++;
    }
    free(seen.slots);
    free(mapped);
    int rc = 0;
    uint8_t *tl = seq != seq0 ? malloc(tl_len) : NULL;
    tl_row *rows = seq != seq0 ? malloc((size_t)(seq - seq0) * sizeof *rows) : NULL;
    size_t nrows = 0;
    if (seq != seq0 && (!tl || !rows))
        rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory "
                          "writing the translog of a batch of %zu operations",
                          n);
    uint8_t *tp = tl;
    for (size_t i = 0; !rc && i < n; i++) {
        if (res[i].code)
            continue;
        size_t sz = fds__tlop_size(&ops[i], &res[i]);
        tl_row *r = nrows ? &rows[nrows - 1] : NULL;
        if (!r || (r->len && r->len + sz > TRANSLOG_ROW_BYTES)) {
            r = &rows[nrows++];
            *r = (tl_row){(size_t)(tp - tl), 0, res[i].seq_no, res[i].seq_no};
        }
        tp = fds__tlop_put(tp, &ops[i], &res[i]);
        r->len += sz;
        r->last = res[i].seq_no;
    }
    pthread_mutex_lock(&s->db_mu);
    if (!rc)
        rc = fds__cat_begin(s->db, durable, err);
    for (size_t k = 0; !rc && k < nrows; k++)
        rc = fds__cat_translog_append(s->db, ix->id, rows[k].first,
                                      rows[k].last, tl + rows[k].off,
                                      rows[k].len, err);
    free(tl);
    free(rows);
    if (!rc && seq != seq0)
        rc = fds__cat_index_set_next_seq(s->db, ix->id, seq, err);
    /* nothing of the batch is durable: with the disk full, say so as
     * Elasticsearch does (`full`, read before the rollback resets it) */
    bool full = false;
    rc = fds__cat_end(s->db, rc, &full, err);
    if (!rc && seq != seq0)
        s->tl_batches++;
    pthread_mutex_unlock(&s->db_mu);
    if (!rc)
        fds__disk_wrote(s, tl_len);
    if (full) {
        fds__disk_full(s);
        rc = fds__index_blocked(ix, err);
    }
    bool over = false;
    if (!rc) {
        ix->next_seq = seq;
        pthread_mutex_lock(&ix->buf_mu);
        rc = apply_to_buffer(ix, ops, res, n);
        fds__buf_account(ix);
        over = fds__buf_over(s);
        pthread_mutex_unlock(&ix->buf_mu);
    }
    pthread_mutex_unlock(&ix->wmu);
    if (!rc && over && !refresh)
        fds__buffer_flush_async(ix);
    if (!rc && refresh) {
        /* the writes are committed: a failed refresh (disk full) leaves them
         * in the translog for the next one, and must not read as a failed
         * write, or clients would retry and duplicate */
        fds_err rerr;
        fds_err_clear(&rerr);
        if (fds_index_refresh(ix, &rerr))
            fprintf(stderr, "fieldstore: [%s] refresh after write failed: %s\n",
                    ix->name, rerr.reason);
    }
    return rc;
}
