/*
 * store.c: indices, the write buffer, refresh, merge, views (see store.h for
 * the write and read paths and the crash-safety argument).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "catalog.h"
#include "store_int.h"

#define BUF_MIN_SLOTS 1024
#define BG_TICK_MS 100
#define AUTO_ID_LEN 20

int64_t fds__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fds__live_unref(fds__live *l)
{
    if (l && atomic_fetch_sub(&l->refs, 1) == 1)
        free(l);
}

static fds__live *live_copy(const fds__live *old, uint32_t max_doc)
{
    size_t nb = (max_doc + 7) / 8;
    fds__live *l = malloc(sizeof *l + nb + 1);
    if (!l)
        return NULL;
    atomic_init(&l->refs, 1);
    l->max_doc = max_doc;
    if (old) {
        memcpy(l->bits, old->bits, nb);
        l->del_count = old->del_count;
    } else {
        memset(l->bits, 0xFF, nb);
        l->del_count = 0;
    }
    return l;
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return FDS_EIO;
    int rc = fsync(fd) == 0 ? 0 : FDS_EIO;
    close(fd);
    return rc;
}

static int mkdir_p(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return FDS_EIO;
            *p = '/';
        }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return FDS_EIO;
    return 0;
}

static void rm_rf(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_rf(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* ---- the buffer: docs in order + id hash (FNV-1a, open addressing) ----- */

static uint64_t id_hash(const char *id, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)id[i]) * 1099511628211ull;
    return h;
}

static void buf_free(fds__buffer *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->docs[i].id);
        free(b->docs[i].src);
    }
    free(b->docs);
    free(b->slots);
    memset(b, 0, sizeof *b);
    b->max_seq = -1;
}

static fds__bufdoc *buf_find(const fds__buffer *b, const char *id, size_t len)
{
    if (!b->nslots)
        return NULL;
    size_t mask = b->nslots - 1;
    for (size_t s = id_hash(id, len) & mask;; s = (s + 1) & mask) {
        uint32_t v = b->slots[s];
        if (!v)
            return NULL;
        fds__bufdoc *d = &b->docs[v - 1];
        if (d->id_len == len && memcmp(d->id, id, len) == 0)
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
        size_t s = id_hash(b->docs[i].id, b->docs[i].id_len) & (nslots - 1);
        while (slots[s])
            s = (s + 1) & (nslots - 1);
        slots[s] = (uint32_t)i + 1;
    }
    return 0;
}

/* Put a write into the buffer, replacing an earlier one with the same id.
 * Takes ownership of id and src. */
static int buf_put(fds__buffer *b, char *id, size_t id_len, uint8_t *src,
                   size_t src_len, int64_t version, int64_t seq)
{
    fds__bufdoc *d = buf_find(b, id, id_len);
    if (d) {
        b->bytes -= d->src_len;
        free(d->src);
        free(id);
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
        b->docs[b->n] = (fds__bufdoc){id, id_len, src, src_len, version, seq};
        size_t mask = b->nslots - 1;
        size_t s = id_hash(id, id_len) & mask;
        while (b->slots[s])
            s = (s + 1) & mask;
        b->slots[s] = (uint32_t)++b->n;
    }
    b->bytes += src_len;
    if (seq > b->max_seq)
        b->max_seq = seq;
    return 0;
}

/* ---- dictionaries --------------------------------------------------------- */

const fds_dict *fds__index_dict(fds_index *ix, uint32_t dict_id)
{
    const fds_dict *d = NULL;
    pthread_mutex_lock(&ix->dict_mu);
    for (size_t i = 0; i < ix->ndicts; i++)
        if (ix->dicts[i].id == dict_id)
            d = ix->dicts[i].dict;
    pthread_mutex_unlock(&ix->dict_mu);
    return d;
}

/* Dictionaries are kept in the catalogue as one zstd frame each (level
 * DICT_STORE_LEVEL): a trained dictionary is mostly log text and shrinks
 * 2-3x, and the catalogue is part of the index's size on disk. */
#define DICT_STORE_LEVEL 19

static int index_add_dict(fds_index *ix, uint32_t id, fds_codec_id codec,
                          int level, const uint8_t *bytes, size_t len,
                          size_t stored_len, uint64_t sample_bytes, fds_err *err)
{
    fds_dict *d = NULL;
    int rc = fds_dict_create(id, codec, level, bytes, len, &d);
    if (rc)
        return fds_err_set(err, rc, 500, "exception",
                           "[%s] cannot load dictionary [%u]: %s", ix->name, id,
                           fds_strerror(rc));
    pthread_mutex_lock(&ix->dict_mu);
    fds__dictent *q = realloc(ix->dicts, (ix->ndicts + 1) * sizeof *q);
    if (!q) {
        pthread_mutex_unlock(&ix->dict_mu);
        fds_dict_free(d);
        return FDS_ENOMEM;
    }
    ix->dicts = q;
    ix->dicts[ix->ndicts++] =
        (fds__dictent){id, level, sample_bytes, codec, d, stored_len};
    pthread_mutex_unlock(&ix->dict_mu);
    return 0;
}

/* The newest dictionary of `codec`, or NULL; *level gets the zstd level
 * its CDict was digested for. */
static const fds_dict *index_current_dict_level(fds_index *ix,
                                                fds_codec_id codec, int *level)
{
    const fds_dict *d = NULL;
    pthread_mutex_lock(&ix->dict_mu);
    for (size_t i = 0; i < ix->ndicts; i++)
        if (ix->dicts[i].codec == codec) {
            d = ix->dicts[i].dict;
            if (level)
                *level = ix->dicts[i].level;
        }
    pthread_mutex_unlock(&ix->dict_mu);
    return d;
}

static const fds_dict *index_current_dict(fds_index *ix, fds_codec_id codec)
{
    return index_current_dict_level(ix, codec, NULL);
}

/*
 * True when a merge of `merge_bytes` of documents should train a new
 * dictionary: the current one was trained on less than the sample the
 * settings ask for (the index's first refresh held few documents, as when
 * bulk loading with a 1 s refresh_interval) and the merge has at least twice
 * as much material.  Blocks written with the old dictionary are then
 * re-encoded, never copied.
 */
static bool dict_wants_retrain(fds_index *ix, const fds_index_settings *set,
                               uint64_t merge_bytes)
{
    if (!fds_codec_uses_dict(set->codec.codec))
        return false;
    bool want = false;
    pthread_mutex_lock(&ix->dict_mu);
    for (size_t i = ix->ndicts; i-- > 0;)
        if (ix->dicts[i].codec == set->codec.codec) {
            uint64_t have = ix->dicts[i].sample_bytes;
            want = have < set->dict_sample_bytes && merge_bytes >= 2 * have;
            break;
        }
    pthread_mutex_unlock(&ix->dict_mu);
    return want;
}

/*
 * Train a dictionary for `codec` from the sources of `docs` (the index's
 * first documents), store it in the catalogue and digest it.  When zstd's
 * trainer refuses (too few samples) the sampled bytes themselves serve as a
 * raw-content dictionary (zstd manual: "dictionary ... can be any content").
 */
static int index_train_dict(fds_index *ix, const fds__bufdoc *docs, size_t n,
                            const fds_index_settings *set, const fds_dict **out,
                            fds_err *err)
{
    fds_codec_id codec = set->codec.codec;
    size_t budget = set->dict_sample_bytes, total = 0, ns = 0;
    for (size_t i = 0; i < n && total < budget; i++)
        if (docs[i].src) {
            total += docs[i].src_len;
            ns++;
        }
    uint8_t *samples = malloc(total + 1);
    size_t *lens = malloc((ns + 1) * sizeof *lens);
    size_t cap = codec == FDS_CODEC_DEFLATE ? FDS_DEFLATE_DICT_MAX : set->dict_size;
    uint8_t *dict = malloc(cap + 1);
    if (!samples || !lens || !dict) {
        free(samples);
        free(lens);
        free(dict);
        return FDS_ENOMEM;
    }
    size_t off = 0, k = 0;
    for (size_t i = 0; i < n && k < ns; i++)
        if (docs[i].src) {
            memcpy(samples + off, docs[i].src, docs[i].src_len);
            lens[k++] = docs[i].src_len;
            off += docs[i].src_len;
        }
    size_t dlen = 0;
    int rc = fds_dict_train(codec, samples, lens, (unsigned)ns, cap, dict, &dlen);
    if (rc || dlen == 0) {
        dlen = total < cap ? total : cap;
        memcpy(dict, samples + total - dlen, dlen);
    }
    size_t zcap = ZSTD_compressBound(dlen);
    uint8_t *z = malloc(zcap);
    size_t zlen = z ? ZSTD_compress(z, zcap, dict, dlen, DICT_STORE_LEVEL) : 0;
    if (!z || ZSTD_isError(zlen)) {
        free(z);
        free(samples);
        free(lens);
        free(dict);
        return FDS_ENOMEM;
    }
    sqlite3 *db = ix->st->db;
    pthread_mutex_lock(&ix->st->db_mu);
    sqlite3_stmt *st = NULL;
    rc = fds__cat_prepare(db, "INSERT INTO dictionaries(index_id, codec, raw_len, "
                              "sample_bytes, bytes) VALUES(?,?,?,?,?)", &st, err);
    int64_t id = 0;
    if (!rc) {
        sqlite3_bind_int64(st, 1, ix->id);
        sqlite3_bind_int(st, 2, codec);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)dlen);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)total);
        sqlite3_bind_blob(st, 5, z, (int)zlen, SQLITE_STATIC);
        rc = fds__cat_step_done(db, st, err);
        id = sqlite3_last_insert_rowid(db);
    }
    pthread_mutex_unlock(&ix->st->db_mu);
    free(z);
    if (!rc)
        rc = index_add_dict(ix, (uint32_t)id, codec, set->codec.level, dict,
                            dlen, zlen, total, err);
    if (!rc)
        *out = fds__index_dict(ix, (uint32_t)id);
    free(samples);
    free(lens);
    free(dict);
    return rc;
}

/* ---- settings rows ------------------------------------------------------- */

static int settings_save(fds_store *s, int64_t index_id,
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
        rc = fds__cat_prepare(s->db, "INSERT INTO settings VALUES(?,?,?)", &st, err);
        if (rc)
            break;
        sqlite3_bind_int64(st, 1, index_id);
        sqlite3_bind_text(st, 2, kv[i].key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, kv[i].value, -1, SQLITE_STATIC);
        rc = fds__cat_step_done(s->db, st, err);
    }
    fds__cat_exec(s->db, rc ? "ROLLBACK TO settings" : "RELEASE settings", NULL);
    return rc;
}

static int settings_load(fds_store *s, int64_t index_id,
                         fds_index_settings *set, fds_err *err)
{
    fds_index_settings_default(set);
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(s->db, "SELECT key, value FROM settings WHERE "
                                     "index_id=?", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, index_id);
    while (sqlite3_step(st) == SQLITE_ROW && !rc)
        rc = fds_settings_set(set, (const char *)sqlite3_column_text(st, 0),
                              (const char *)sqlite3_column_text(st, 1), err);
    sqlite3_finalize(st);
    return rc;
}

/* ---- index objects -------------------------------------------------------- */

static fds_index *index_alloc(fds_store *s, int64_t id, const char *name,
                              const char *uuid)
{
    fds_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return NULL;
    atomic_init(&ix->refs, 1);
    atomic_init(&ix->deleted, false);
    ix->st = s;
    ix->id = id;
    snprintf(ix->name, sizeof ix->name, "%s", name);
    snprintf(ix->uuid, sizeof ix->uuid, "%s", uuid);
    size_t n = strlen(s->dir) + strlen(uuid) + 16;
    ix->dir = malloc(n);
    if (ix->dir)
        snprintf(ix->dir, n, "%s/indices/%s", s->dir, uuid);
    ix->mapping = fds_mapping_create();
    pthread_mutex_init(&ix->wmu, NULL);
    pthread_mutex_init(&ix->refresh_mu, NULL);
    pthread_mutex_init(&ix->dict_mu, NULL);
    pthread_rwlock_init(&ix->segs_lock, NULL);
    ix->buf.max_seq = -1;
    ix->frozen.max_seq = -1;
    ix->open = true;
    ix->last_refresh_ms = fds__now_ms();
    if (!ix->dir || !ix->mapping) {
        free(ix->dir);
        fds_mapping_free(ix->mapping);
        free(ix);
        return NULL;
    }
    return ix;
}

static void index_free(fds_index *ix)
{
    for (unsigned i = 0; i < ix->nsegs; i++) {
        fds__seg_unref(ix->segs[i]);
        fds__live_unref(ix->lives[i]);
    }
    free(ix->segs);
    free(ix->lives);
    buf_free(&ix->buf);
    buf_free(&ix->frozen);
    for (size_t i = 0; i < ix->ndicts; i++)
        fds_dict_free(ix->dicts[i].dict);
    free(ix->dicts);
    fds_mapping_free(ix->mapping);
    free(ix->failure);
    pthread_mutex_destroy(&ix->wmu);
    pthread_mutex_destroy(&ix->refresh_mu);
    pthread_mutex_destroy(&ix->dict_mu);
    pthread_rwlock_destroy(&ix->segs_lock);
    free(ix->dir);
    free(ix);
}

void fds_index_release(fds_index *ix)
{
    if (ix && atomic_fetch_sub(&ix->refs, 1) == 1)
        index_free(ix);
}

const char *fds_index_name(const fds_index *ix) { return ix->name; }
const char *fds_index_uuid(const fds_index *ix) { return ix->uuid; }
int64_t fds_index_creation_ms(const fds_index *ix) { return ix->created_ms; }
fds_mapping *fds_index_mapping(fds_index *ix) { return ix->mapping; }

void fds_index_get_settings(fds_index *ix, fds_index_settings *out)
{
    pthread_mutex_lock(&ix->wmu);
    *out = ix->settings;
    pthread_mutex_unlock(&ix->wmu);
}

bool fds_index_is_open(fds_index *ix)
{
    pthread_mutex_lock(&ix->wmu);
    bool o = ix->open && !ix->failure;
    pthread_mutex_unlock(&ix->wmu);
    return o;
}

/* Load an index's segments, dictionaries, mapping and translog. */
static int index_load(fds_store *s, fds_index *ix, fds_err *err)
{
    sqlite3_stmt *st;
    int rc = settings_load(s, ix->id, &ix->settings, err);
    if (rc)
        return rc;
    /* mapping */
    if ((rc = fds__cat_prepare(s->db, "SELECT json FROM mappings WHERE index_id=?",
                               &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, ix->id);
    if (sqlite3_step(st) == SQLITE_ROW)
        rc = fds_mapping_merge_json(ix->mapping,
                                    (const char *)sqlite3_column_text(st, 0),
                                    (size_t)sqlite3_column_bytes(st, 0), err);
    sqlite3_finalize(st);
    if (rc)
        return rc;
    /* dictionaries */
    if ((rc = fds__cat_prepare(s->db, "SELECT id, codec, raw_len, bytes, "
                                      "sample_bytes FROM dictionaries WHERE "
                                      "index_id=? ORDER BY id", &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, ix->id);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t id = (uint32_t)sqlite3_column_int64(st, 0);
        size_t raw_len = (size_t)sqlite3_column_int64(st, 2);
        size_t zlen = (size_t)sqlite3_column_bytes(st, 3);
        uint8_t *raw = raw_len <= FDS_BLOCK_SIZE_MAX ? malloc(raw_len + 1) : NULL;
        size_t got = raw ? ZSTD_decompress(raw, raw_len, sqlite3_column_blob(st, 3),
                                           zlen) : 0;
        if (!raw || ZSTD_isError(got) || got != raw_len)
            rc = fds_err_set(err, FDS_ECORRUPT, 500, "corrupt_index_exception",
                             "[%s] dictionary [%u] in the catalogue is damaged",
                             ix->name, id);
        else
            rc = index_add_dict(ix, id, (fds_codec_id)sqlite3_column_int(st, 1),
                                ix->settings.codec.level, raw, raw_len, zlen,
                                (uint64_t)sqlite3_column_int64(st, 4), err);
        free(raw);
    }
    sqlite3_finalize(st);
    if (rc)
        return rc;
    /* segments */
    if ((rc = fds__cat_prepare(s->db, "SELECT id, gen, live, del_count FROM "
                                      "segments WHERE index_id=? ORDER BY gen",
                               &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, ix->id);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        fds__seg *sg = NULL;
        rc = fds__seg_open(ix, sqlite3_column_int64(st, 0),
                           (uint64_t)sqlite3_column_int64(st, 1), &sg, err);
        if (rc)
            break;
        fds__live *lv = NULL;
        if (sqlite3_column_type(st, 2) == SQLITE_BLOB) {
            size_t nb = (sg->max_doc + 7) / 8;
            if ((size_t)sqlite3_column_bytes(st, 2) != nb) {
                rc = fds_err_set(err, FDS_ECORRUPT, 500, "corrupt_index_exception",
                                 "[%s] segment [%s]: live docs of wrong size",
                                 ix->name, sg->name);
                fds__seg_unref(sg);
                break;
            }
            lv = live_copy(NULL, sg->max_doc);
            if (lv) {
                memcpy(lv->bits, sqlite3_column_blob(st, 2), nb);
                lv->del_count = (uint32_t)sqlite3_column_int(st, 3);
            }
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
    sqlite3_finalize(st);
    if (rc)
        return rc;
    /* translog replay into the buffer */
    if ((rc = fds__cat_prepare(s->db, "SELECT seq, op, doc_id, version, source "
                                      "FROM translog WHERE index_id=? ORDER BY seq",
                               &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, ix->id);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        size_t il = (size_t)sqlite3_column_bytes(st, 2);
        size_t sl = (size_t)sqlite3_column_bytes(st, 4);
        char *id = malloc(il + 1);
        uint8_t *src = NULL;
        if (id)
            memcpy(id, sqlite3_column_blob(st, 2), il);
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
        rc = buf_put(&ix->buf, id, il, src, src ? sl : 0,
                     sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 0));
    }
    sqlite3_finalize(st);
    return rc;
}

/* Remove files in the index folder that no catalogue segment names. */
static void index_remove_orphans(fds_index *ix)
{
    DIR *d = opendir(ix->dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        bool keep = false;
        for (unsigned i = 0; i < ix->nsegs && !keep; i++) {
            size_t l = strlen(ix->segs[i]->name);
            keep = !strncmp(e->d_name, ix->segs[i]->name, l) &&
                   (!strcmp(e->d_name + l, ".fdt") || !strcmp(e->d_name + l, ".tim"));
        }
        if (!keep) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", ix->dir, e->d_name);
            unlink(p);
        }
    }
    closedir(d);
}

int fds_store_open(const char *dir, fds_store **out, fds_err *err)
{
    if (mkdir_p(dir))
        return fds_err_set(err, FDS_EIO, 500, "io_exception",
                           "cannot create data directory [%s]: %s", dir,
                           strerror(errno));
    fds_store *s = calloc(1, sizeof *s);
    if (!s)
        return FDS_ENOMEM;
    s->dir = strdup(dir);
    pthread_mutex_init(&s->db_mu, NULL);
    pthread_mutex_init(&s->mu, NULL);
    atomic_init(&s->stop, false);
    char path[4096];
    snprintf(path, sizeof path, "%s/indices", dir);
    int rc = mkdir_p(path) ? FDS_EIO : 0;
    snprintf(path, sizeof path, "%s/catalog.sqlite", dir);
    if (!rc)
        rc = fds__cat_open(path, &s->db, err);
    if (rc) {
        fds_store_close(s);
        return rc;
    }
    sqlite3_stmt *st;
    rc = fds__cat_prepare(s->db, "SELECT id, name, uuid, created_ms, open, "
                                 "next_seq, next_gen FROM indices ORDER BY name",
                          &st, err);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        fds_index *ix = index_alloc(s, sqlite3_column_int64(st, 0),
                                    (const char *)sqlite3_column_text(st, 1),
                                    (const char *)sqlite3_column_text(st, 2));
        if (!ix) {
            rc = FDS_ENOMEM;
            break;
        }
        ix->created_ms = sqlite3_column_int64(st, 3);
        ix->open = sqlite3_column_int(st, 4) != 0;
        ix->next_seq = sqlite3_column_int64(st, 5);
        ix->next_gen = (uint64_t)sqlite3_column_int64(st, 6);
        fds_err lerr;
        fds_err_clear(&lerr);
        if (index_load(s, ix, &lerr)) {
            /* serve the other indices; this one reports why it failed and
             * keeps its files untouched for inspection or repair */
            ix->failure = strdup(lerr.reason[0] ? lerr.reason
                                                : fds_strerror(lerr.code));
            fprintf(stderr, "fieldstore: index [%s] failed to load: %s\n",
                    ix->name, ix->failure);
        }
        if (!rc && ix->buf.max_seq >= ix->next_seq)
            ix->next_seq = ix->buf.max_seq + 1;
        if (!rc) {
            if (!ix->failure)
                index_remove_orphans(ix);
            fds_index **q = realloc(s->indices, (s->nindices + 1) * sizeof *q);
            if (!q)
                rc = FDS_ENOMEM;
            else {
                s->indices = q;
                s->indices[s->nindices++] = ix;
            }
        }
        if (rc)
            fds_index_release(ix);
    }
    if (st)
        sqlite3_finalize(st);
    if (rc) {
        fds_store_close(s);
        return rc;
    }
    /* index folders the catalogue does not name */
    snprintf(path, sizeof path, "%s/indices", dir);
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            bool known = false;
            for (size_t i = 0; i < s->nindices && !known; i++)
                known = !strcmp(s->indices[i]->uuid, e->d_name);
            if (!known) {
                char p[4096];
                snprintf(p, sizeof p, "%s/%s", path, e->d_name);
                rm_rf(p);
            }
        }
        closedir(d);
    }
    *out = s;
    return 0;
}

void fds_store_close(fds_store *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, true);
    if (s->bg_started)
        pthread_join(s->bg, NULL);
    for (size_t i = 0; i < s->nindices; i++)
        fds_index_release(s->indices[i]);
    free(s->indices);
    if (s->db)
        sqlite3_close(s->db);
    pthread_mutex_destroy(&s->db_mu);
    pthread_mutex_destroy(&s->mu);
    free(s->dir);
    free(s);
}

static void make_uuid(char out[33])
{
    uint8_t b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, b, sizeof b) != (ssize_t)sizeof b) {
        uint64_t t = (uint64_t)fds__now_ms() ^ (uint64_t)getpid() << 40;
        for (int i = 0; i < 16; i++)
            b[i] = (uint8_t)((t = t * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    }
    if (fd >= 0)
        close(fd);
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Elasticsearch's index name rules (MetadataCreateIndexService). */
static int check_index_name(const char *name, fds_err *err)
{
    size_t n = strlen(name);
    const char *why = NULL;
    if (n == 0)
        why = "must not be empty";
    else if (n > FDS_INDEX_NAME_MAX)
        why = "index name is too long, (> 255)";
    else if (name[0] == '_' || name[0] == '-' || name[0] == '+')
        why = "must not start with '_', '-', or '+'";
    else if (!strcmp(name, ".") || !strcmp(name, ".."))
        why = "must not be '.' or '..'";
    else
        for (const char *p = name; *p && !why; p++) {
            if (*p >= 'A' && *p <= 'Z')
                why = "must be lowercase";
            else if (strchr("\\/*?\"<>| ,#:", *p))
                why = "must not contain the following characters [ , \", *, "
                      "\\, <, |, ,, >, /, ?, #, :]";
        }
    if (why)
        return fds_err_set(err, FDS_EINVAL, 400, "invalid_index_name_exception",
                           "Invalid index name [%s], %s", name, why);
    return 0;
}

int fds_store_create_index(fds_store *s, const char *name,
                           const fds_index_settings *settings,
                           const char *mapping_json, fds_err *err)
{
    int rc = check_index_name(name, err);
    if (rc)
        return rc;
    char uuid[33];
    make_uuid(uuid);
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nindices; i++)
        if (!strcmp(s->indices[i]->name, name)) {
            pthread_mutex_unlock(&s->mu);
            return fds_err_set(err, FDS_EEXIST, 400,
                               "resource_already_exists_exception",
                               "index [%s/%s] already exists", name,
                               s->indices[i]->uuid);
        }
    fds_index *ix = index_alloc(s, 0, name, uuid);
    if (!ix) {
        pthread_mutex_unlock(&s->mu);
        return FDS_ENOMEM;
    }
    ix->settings = *settings;
    ix->created_ms = fds__now_ms();
    ix->next_gen = 1;
    if (mapping_json &&
        (rc = fds_mapping_merge_json(ix->mapping, mapping_json,
                                     strlen(mapping_json), err)))
        goto fail;
    if (mkdir_p(ix->dir)) {
        rc = fds_err_set(err, FDS_EIO, 500, "io_exception",
                         "cannot create [%s]: %s", ix->dir, strerror(errno));
        goto fail;
    }
    pthread_mutex_lock(&s->db_mu);
    rc = fds__cat_begin(s->db, true, err);
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = fds__cat_prepare(s->db, "INSERT INTO indices(name, uuid, created_ms) "
                                     "VALUES(?,?,?)", &st, err);
    if (!rc) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, ix->created_ms);
        rc = fds__cat_step_done(s->db, st, err);
        ix->id = sqlite3_last_insert_rowid(s->db);
    }
    if (!rc)
        rc = settings_save(s, ix->id, settings, err);
    char *mj = rc ? NULL : fds_mapping_to_json(ix->mapping);
    if (!rc && mj) {
        rc = fds__cat_prepare(s->db, "INSERT INTO mappings VALUES(?,?)", &st, err);
        if (!rc) {
            sqlite3_bind_int64(st, 1, ix->id);
            sqlite3_bind_text(st, 2, mj, -1, SQLITE_STATIC);
            rc = fds__cat_step_done(s->db, st, err);
        }
    }
    free(mj);
    if (!rc)
        rc = fds__cat_commit(s->db, err);
    if (rc)
        fds__cat_rollback(s->db);
    pthread_mutex_unlock(&s->db_mu);
    if (rc) {
        rm_rf(ix->dir);
        goto fail;
    }
    fds_index **q = realloc(s->indices, (s->nindices + 1) * sizeof *q);
    if (!q) {
        rc = FDS_ENOMEM;
        goto fail;
    }
    s->indices = q;
    s->indices[s->nindices++] = ix;
    pthread_mutex_unlock(&s->mu);
    return 0;
fail:
    pthread_mutex_unlock(&s->mu);
    fds_index_release(ix);
    return rc;
}

static int not_found(fds_err *err, const char *name)
{
    int rc = fds_err_set(err, FDS_ENOTFOUND, 404, "index_not_found_exception",
                         "no such index [%s]", name);
    if (err && err->index[0] == 0)
        snprintf(err->index, sizeof err->index, "%s", name);
    return rc;
}

int fds_store_get_index(fds_store *s, const char *name, fds_index **out,
                        fds_err *err)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nindices; i++)
        if (!strcmp(s->indices[i]->name, name)) {
            atomic_fetch_add(&s->indices[i]->refs, 1);
            *out = s->indices[i];
            pthread_mutex_unlock(&s->mu);
            return 0;
        }
    pthread_mutex_unlock(&s->mu);
    return not_found(err, name);
}

int fds_store_delete_index(fds_store *s, const char *name, fds_err *err)
{
    pthread_mutex_lock(&s->mu);
    size_t at = s->nindices;
    for (size_t i = 0; i < s->nindices; i++)
        if (!strcmp(s->indices[i]->name, name))
            at = i;
    if (at == s->nindices) {
        pthread_mutex_unlock(&s->mu);
        return not_found(err, name);
    }
    fds_index *ix = s->indices[at];
    pthread_mutex_lock(&ix->refresh_mu);
    pthread_mutex_lock(&s->db_mu);
    int rc = fds__cat_begin(s->db, true, err);
    const char *tables[] = {"settings", "mappings", "dictionaries", "segments",
                            "translog"};
    for (size_t t = 0; t < 5 && !rc; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE index_id=%lld", tables[t],
                 (long long)ix->id);
        rc = fds__cat_exec(s->db, sql, err);
    }
    if (!rc) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM indices WHERE id=%lld",
                 (long long)ix->id);
        rc = fds__cat_exec(s->db, sql, err);
    }
    if (!rc)
        rc = fds__cat_commit(s->db, err);
    if (rc)
        fds__cat_rollback(s->db);
    pthread_mutex_unlock(&s->db_mu);
    if (!rc) {
        atomic_store(&ix->deleted, true);
        memmove(s->indices + at, s->indices + at + 1,
                (s->nindices - at - 1) * sizeof *s->indices);
        s->nindices--;
        /* mapped files stay readable for views still open */
        rm_rf(ix->dir);
    }
    pthread_mutex_unlock(&ix->refresh_mu);
    pthread_mutex_unlock(&s->mu);
    if (!rc)
        fds_index_release(ix);
    return rc;
}

int fds_store_list_indices(fds_store *s, char ***names, size_t *n)
{
    pthread_mutex_lock(&s->mu);
    char **v = calloc(s->nindices + 1, sizeof *v);
    if (!v) {
        pthread_mutex_unlock(&s->mu);
        return FDS_ENOMEM;
    }
    for (size_t i = 0; i < s->nindices; i++)
        v[i] = strdup(s->indices[i]->name);
    *n = s->nindices;
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 1; i < *n; i++) /* insertion sort: few indices */
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *names = v;
    return 0;
}

const char *fds_index_failure(const fds_index *ix) { return ix->failure; }

static int index_failed(fds_index *ix, fds_err *err)
{
    int rc = fds_err_set(err, FDS_ECORRUPT, 500, "corrupt_index_exception",
                         "%s", ix->failure);
    if (err && !err->index[0])
        snprintf(err->index, sizeof err->index, "%s", ix->name);
    return rc;
}

static int index_closed(fds_index *ix, fds_err *err)
{
    if (ix->failure)
        return index_failed(ix, err);
    int rc = fds_err_set(err, FDS_ECLOSED, 400, "index_closed_exception",
                         "closed");
    if (err && !err->index[0])
        snprintf(err->index, sizeof err->index, "%s", ix->name);
    return rc;
}

int fds_index_set_open(fds_index *ix, bool open, fds_err *err)
{
    if (ix->failure)
        return index_failed(ix, err);
    pthread_mutex_lock(&ix->wmu);
    pthread_mutex_lock(&ix->st->db_mu);
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE indices SET open=%d WHERE id=%lld",
             open ? 1 : 0, (long long)ix->id);
    int rc = fds__cat_exec(ix->st->db, sql, err);
    pthread_mutex_unlock(&ix->st->db_mu);
    if (!rc)
        ix->open = open;
    pthread_mutex_unlock(&ix->wmu);
    return rc;
}

int fds_index_put_settings(fds_index *ix, const fds_index_settings *set,
                           fds_err *err)
{
    if (ix->failure)
        return index_failed(ix, err);
    pthread_mutex_lock(&ix->wmu);
    pthread_mutex_lock(&ix->st->db_mu);
    int rc = fds__cat_begin(ix->st->db, true, err);
    if (!rc)
        rc = settings_save(ix->st, ix->id, set, err);
    if (!rc)
        rc = fds__cat_commit(ix->st->db, err);
    if (rc)
        fds__cat_rollback(ix->st->db);
    pthread_mutex_unlock(&ix->st->db_mu);
    if (!rc)
        ix->settings = *set;
    pthread_mutex_unlock(&ix->wmu);
    return rc;
}

/* ---- writes ---------------------------------------------------------------- */

/* The live doc with `id` in the published segments (newest first). */
static bool segs_find_live(fds_index *ix, const char *id, size_t len,
                           int64_t *version, int64_t *seq_no)
{
    bool found = false;
    pthread_rwlock_rdlock(&ix->segs_lock);
    for (unsigned i = ix->nsegs; i-- > 0 && !found;) {
        uint32_t doc;
        if (fds_sidx_find_id(ix->segs[i]->sidx, id, len, &doc) == 0 &&
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
                         int64_t *version, int64_t *seq_no)
{
    fds__bufdoc *d = buf_find(&ix->buf, id, len);
    if (!d)
        d = buf_find(&ix->frozen, id, len);
    if (d) {
        *version = d->version;
        *seq_no = d->seq_no;
        return d->src ? 1 : 0;
    }
    return segs_find_live(ix, id, len, version, seq_no) ? 1 : 0;
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

int fds_index_write(fds_index *ix, const fds_write_op *ops, size_t n,
                    fds_write_result *res, bool refresh, fds_err *err)
{
    pthread_mutex_lock(&ix->wmu);
    if (!ix->open || ix->failure || atomic_load(&ix->deleted)) {
        pthread_mutex_unlock(&ix->wmu);
        return atomic_load(&ix->deleted) ? not_found(err, ix->name)
                                         : index_closed(ix, err);
    }
    fds_store *s = ix->st;
    bool durable = ix->settings.durability == FDS_DURABILITY_REQUEST;
    pthread_mutex_lock(&s->db_mu);
    int rc = fds__cat_begin(s->db, durable, err);
    sqlite3_stmt *ins = NULL;
    if (!rc)
        rc = fds__cat_prepare(s->db, "INSERT INTO translog VALUES(?,?,?,?,?,?)",
                              &ins, err);
    /* decide every op first; apply to the buffer only after the commit */
    int64_t seq0 = ix->next_seq, seq = seq0;
    for (size_t i = 0; i < n && !rc; i++) {
        const fds_write_op *op = &ops[i];
        fds_write_result *r = &res[i];
        memset(r, 0, sizeof *r);
        if (op->id) {
            if (op->id_len == 0 || op->id_len > FDS_DOC_ID_MAX) {
                r->code = fds_err_set(&r->err, FDS_EINVAL, 400,
                                      "illegal_argument_exception",
                                      op->id_len ? "id [%.32s...] is too long, "
                                                   "must be no longer than 512 "
                                                   "bytes but was: %zu"
                                                 : "if _id is specified it must "
                                                   "not be empty%.0s%zu",
                                      op->id, op->id_len);
                continue;
            }
            memcpy(r->id, op->id, op->id_len);
            r->id[op->id_len] = 0;
        } else if (op->type == FDS_OP_DELETE) {
            r->code = fds_err_set(&r->err, FDS_EINVAL, 400,
                                  "action_request_validation_exception",
                                  "Validation Failed: 1: id is missing;");
            continue;
        } else {
            auto_id(ix, r->id);
        }
        size_t idl = strlen(r->id);
        if (op->type != FDS_OP_DELETE &&
            (r->code = fds_doc_map(ix->mapping, op->src, op->src_len, &r->err)))
            continue;
        int64_t ver = 0, cur_seq = -1;
        /* earlier ops of this batch count: look at them first */
        int state = -1;
        for (size_t k = i; k-- > 0;)
            if (res[k].code == 0 && !strcmp(res[k].id, r->id)) {
                ver = res[k].version;
                cur_seq = res[k].seq_no;
                state = ops[k].type == FDS_OP_DELETE ? 0 : 1;
                break;
            }
        if (state < 0)
            state = current_state(ix, r->id, idl, &ver, &cur_seq);
        if (op->check_seq_no &&
            (state != 1 || cur_seq != op->if_seq_no || op->if_primary_term != 1)) {
            if (state == 1)
                r->code = fds_err_set(&r->err, FDS_ECONFLICT, 409,
                                      "version_conflict_engine_exception",
                                      "[%s]: version conflict, required seqNo "
                                      "[%lld], primary term [%lld]. current "
                                      "document has seqNo [%lld] and primary "
                                      "term [1]", r->id, (long long)op->if_seq_no,
                                      (long long)op->if_primary_term,
                                      (long long)cur_seq);
            else
                r->code = fds_err_set(&r->err, FDS_ECONFLICT, 409,
                                      "version_conflict_engine_exception",
                                      "[%s]: version conflict, required seqNo "
                                      "[%lld], primary term [%lld] but no document "
                                      "was found", r->id, (long long)op->if_seq_no,
                                      (long long)op->if_primary_term);
            continue;
        }
        if (op->external_version > 0 && state == 1 && ver >= op->external_version) {
            r->code = fds_err_set(&r->err, FDS_ECONFLICT, 409,
                                  "version_conflict_engine_exception",
                                  "[%s]: version conflict, current version [%lld] "
                                  "is higher or equal to the one provided [%lld]",
                                  r->id, (long long)ver,
                                  (long long)op->external_version);
            continue;
        }
        if (op->type == FDS_OP_CREATE && state == 1) {
            r->code = fds_err_set(&r->err, FDS_ECONFLICT, 409,
                                  "version_conflict_engine_exception",
                                  "[%s]: version conflict, document already "
                                  "exists (current version [%lld])",
                                  r->id, (long long)ver);
            continue;
        }
        if (op->type == FDS_OP_DELETE && state == 0) {
            /* Elasticsearch answers not_found without an error */
            r->found = false;
            r->version = ver + 1;
            r->seq_no = seq;
        } else {
            r->found = op->type == FDS_OP_DELETE;
            r->created = state == 0;
            r->version = op->external_version > 0 ? op->external_version : ver + 1;
            r->seq_no = seq;
        }
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, ix->id);
        sqlite3_bind_int64(ins, 2, seq);
        sqlite3_bind_int(ins, 3, op->type);
        sqlite3_bind_blob(ins, 4, r->id, (int)idl, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 5, r->version);
        if (op->type == FDS_OP_DELETE)
            sqlite3_bind_null(ins, 6);
        else
            sqlite3_bind_blob(ins, 6, op->src, (int)op->src_len, SQLITE_STATIC);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = fds_err_set(err, FDS_ESQL, 500, "exception", "translog: %s",
                             sqlite3_errmsg(s->db));
        seq++;
    }
    if (ins)
        sqlite3_finalize(ins);
    if (!rc && seq != seq0) {
        char sql[128];
        snprintf(sql, sizeof sql, "UPDATE indices SET next_seq=%lld WHERE id=%lld",
                 (long long)seq, (long long)ix->id);
        rc = fds__cat_exec(s->db, sql, err);
    }
    if (!rc)
        rc = fds__cat_commit(s->db, err);
    if (rc)
        fds__cat_rollback(s->db);
    pthread_mutex_unlock(&s->db_mu);
    if (!rc) {
        ix->next_seq = seq;
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
            if (!id || (ops[i].type != FDS_OP_DELETE && !src)) {
                free(id);
                free(src);
                rc = FDS_ENOMEM;
                break;
            }
            if (ops[i].type == FDS_OP_DELETE && !res[i].found)
                free(id), free(src); /* nothing to delete: no tombstone */
            else
                rc = buf_put(&ix->buf, id, idl, src, src ? ops[i].src_len : 0,
                             res[i].version, res[i].seq_no);
        }
    }
    pthread_mutex_unlock(&ix->wmu);
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

int fds_index_get(fds_index *ix, const char *id, size_t id_len, fds_doc *out,
                  fds_err *err)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&ix->wmu);
    if (!ix->open || ix->failure) {
        pthread_mutex_unlock(&ix->wmu);
        return index_closed(ix, err);
    }
    fds__bufdoc *d = buf_find(&ix->buf, id, id_len);
    if (!d)
        d = buf_find(&ix->frozen, id, id_len);
    if (d) {
        int rc = FDS_ENOTFOUND;
        if (d->src) {
            out->src = malloc(d->src_len + 1);
            rc = out->src ? 0 : FDS_ENOMEM;
            if (out->src) {
                memcpy(out->src, d->src, d->src_len);
                out->src_len = d->src_len;
                out->version = d->version;
                out->seq_no = d->seq_no;
            }
        }
        pthread_mutex_unlock(&ix->wmu);
        return rc;
    }
    pthread_mutex_unlock(&ix->wmu);
    fds_index_view *v;
    int rc = fds_index_view_acquire(ix, &v, err);
    if (rc)
        return rc;
    rc = FDS_ENOTFOUND;
    for (unsigned i = v->nsegs; i-- > 0;) {
        uint32_t doc;
        if (fds_sidx_find_id(v->segs[i]->sidx, id, id_len, &doc) != 0 ||
            !fds__live_get(v->lives[i], doc))
            continue;
        const uint8_t *src;
        size_t len;
        rc = fds__seg_read_doc(ix, v->segs[i], doc, &src, &len, err);
        if (rc == 0) {
            out->src = malloc(len + 1);
            if (!out->src)
                rc = FDS_ENOMEM;
            else {
                memcpy(out->src, src, len);
                out->src_len = len;
                out->version = fds__seg_version(v->segs[i], doc);
                out->seq_no = fds__seg_seqno(v->segs[i], doc);
            }
        }
        break;
    }
    fds_index_view_release(v);
    return rc;
}

/* ---- publishing a new segment set ----------------------------------------- */

typedef struct live_change {
    unsigned seg;           /* index in ix->segs at the time of the change */
    fds__live *live;        /* new bitset */
} live_change;

/* Clear the bit of every live doc in published segments [0, upto) whose id
 * is in `docs` (replaced or deleted).  Caller holds refresh_mu. */
static int collect_deletes(fds_index *ix, unsigned upto, const fds__bufdoc *docs,
                           size_t n, fds__live **newlive)
{
    for (unsigned i = 0; i < upto; i++)
        newlive[i] = NULL;
    for (size_t k = 0; k < n; k++)
        for (unsigned i = upto; i-- > 0;) {
            uint32_t doc;
            fds__live *cur = newlive[i] ? newlive[i] : ix->lives[i];
            if (fds_sidx_find_id(ix->segs[i]->sidx, docs[k].id, docs[k].id_len,
                                 &doc) != 0 ||
                !fds__live_get(cur, doc))
                continue;
            if (!newlive[i] &&
                !(newlive[i] = live_copy(ix->lives[i], ix->segs[i]->max_doc)))
                return FDS_ENOMEM;
            newlive[i]->bits[doc >> 3] &= (uint8_t)~(1u << (doc & 7));
            newlive[i]->del_count++;
            break;
        }
    return 0;
}

/* Persist live-docs changes; in the caller's transaction. */
static int save_lives(fds_index *ix, fds__live **newlive, unsigned n,
                      fds_err *err)
{
    sqlite3 *db = ix->st->db;
    for (unsigned i = 0; i < n; i++) {
        if (!newlive[i])
            continue;
        sqlite3_stmt *st;
        int rc;
        if (newlive[i]->del_count == newlive[i]->max_doc)
            rc = fds__cat_prepare(db, "DELETE FROM segments WHERE id=?3", &st, err);
        else
            rc = fds__cat_prepare(db, "UPDATE segments SET live=?1, del_count=?2 "
                                      "WHERE id=?3", &st, err);
        if (rc)
            return rc;
        if (newlive[i]->del_count != newlive[i]->max_doc) {
            sqlite3_bind_blob(st, 1, newlive[i]->bits,
                              (int)((newlive[i]->max_doc + 7) / 8), SQLITE_STATIC);
            sqlite3_bind_int(st, 2, (int)newlive[i]->del_count);
        }
        sqlite3_bind_int64(st, 3, ix->segs[i]->id);
        if ((rc = fds__cat_step_done(db, st, err)))
            return rc;
    }
    return 0;
}

static int insert_segment(fds_index *ix, fds__seg *sg, int64_t max_seq,
                          fds_err *err)
{
    sqlite3 *db = ix->st->db;
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(db, "INSERT INTO segments(index_id, gen, max_doc, "
                                  "max_seq) VALUES(?,?,?,?)", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, ix->id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)sg->gen);
    sqlite3_bind_int64(st, 3, sg->max_doc);
    sqlite3_bind_int64(st, 4, max_seq);
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

static int save_mapping(fds_index *ix, fds_err *err)
{
    char *mj = fds_mapping_to_json(ix->mapping);
    if (!mj)
        return FDS_ENOMEM;
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(ix->st->db, "INSERT OR REPLACE INTO mappings "
                                          "VALUES(?,?)", &st, err);
    if (!rc) {
        sqlite3_bind_int64(st, 1, ix->id);
        sqlite3_bind_text(st, 2, mj, -1, SQLITE_STATIC);
        rc = fds__cat_step_done(ix->st->db, st, err);
    }
    free(mj);
    return rc;
}

/*
 * Build segment files for `docs` (live sources only), open them.  On
 * success *out is the new segment (not yet published or registered).
 */
static int build_segment(fds_index *ix, const fds__bufdoc *docs, size_t n,
                         const fds_index_settings *set, fds__seg *const *copy,
                         unsigned ncopy, bool retrain, fds__seg **out,
                         fds_err *err)
{
    const fds_dict *dict = NULL;
    fds_dict *relevel = NULL;
    int rc = 0, level = 0;
    if (fds_codec_uses_dict(set->codec.codec)) {
        dict = retrain ? NULL : index_current_dict_level(ix, set->codec.codec, &level);
        if (!dict && (rc = index_train_dict(ix, docs, n, set, &dict, err)))
            return rc;
        /* the level changed (a static setting, while closed): digest the
         * same dictionary for the new level, for this segment only */
        if (level && level != set->codec.level && !copy) {
            size_t dl;
            const uint8_t *db = fds_dict_bytes(dict, &dl);
            rc = fds_dict_create(fds_dict_id(dict), set->codec.codec,
                                 set->codec.level, db, dl, &relevel);
            if (rc)
                return rc;
            dict = relevel;
        }
    }
    uint64_t gen = ix->next_gen++;
    rc = fds__seg_write(ix, gen, docs, n, &set->codec, dict, copy, ncopy, err);
    fds_dict_free(relevel);
    if (rc)
        return rc;
    fds_sidx_writer *w = fds_sidx_writer_create(ix->mapping);
    if (!w)
        rc = FDS_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        fds_err derr;
        fds_err_clear(&derr);
        rc = fds_sidx_writer_add(w, (uint32_t)i, docs[i].id, docs[i].id_len,
                                 docs[i].src, docs[i].src_len, &derr);
        if (rc == FDS_EINVAL || rc == FDS_EPARSE) {
            /* an acknowledged document must never block the index: keep it
             * stored (get works) with no indexed fields, and say so */
            fprintf(stderr, "fieldstore: [%s] document [%.*s] kept but not "
                            "searchable: %s\n", ix->name, (int)docs[i].id_len,
                    docs[i].id, derr.reason);
            rc = fds_sidx_writer_add(w, (uint32_t)i, docs[i].id, docs[i].id_len,
                                     (const uint8_t *)"{}", 2, err);
        } else if (rc) {
            *err = derr;
        }
    }
    char *tim = fds__seg_path(ix, gen, "tim");
    if (!rc)
        rc = tim ? fds_sidx_writer_write(w, tim, err) : FDS_ENOMEM;
    fds_sidx_writer_free(w);
    if (!rc)
        rc = fsync_dir(ix->dir) ? fds_err_set(err, FDS_EIO, 500, "io_exception",
                                              "cannot sync [%s]", ix->dir)
                                : 0;
    if (!rc)
        rc = fds__seg_open(ix, 0, gen, out, err);
    if (rc) {
        char *fdt = fds__seg_path(ix, gen, "fdt");
        if (fdt)
            unlink(fdt);
        if (tim)
            unlink(tim);
        free(fdt);
    }
    free(tim);
    return rc;
}

/* Replace the published set: drop segments whose new live set is empty,
 * swap changed bitsets, append `added` (may be NULL).  Caller holds
 * refresh_mu; takes segs_lock. */
static int publish(fds_index *ix, fds__live **newlive, unsigned upto,
                   fds__seg *added, fds__seg **removed, unsigned nremoved)
{
    pthread_rwlock_wrlock(&ix->segs_lock);
    unsigned cap = ix->nsegs + 1;
    fds__seg **segs = malloc(cap * sizeof *segs);
    fds__live **lives = malloc(cap * sizeof *lives);
    if (!segs || !lives) {
        pthread_rwlock_unlock(&ix->segs_lock);
        free(segs);
        free(lives);
        return FDS_ENOMEM;
    }
    unsigned k = 0;
    for (unsigned i = 0; i < ix->nsegs; i++) {
        fds__seg *sg = ix->segs[i];
        fds__live *lv = ix->lives[i];
        bool gone = false;
        for (unsigned r = 0; r < nremoved; r++)
            gone |= removed[r] == sg;
        if (i < upto && newlive && newlive[i]) {
            fds__live_unref(lv);
            lv = newlive[i];
            if (lv->del_count == lv->max_doc)
                gone = true;
        }
        if (gone) {
            atomic_store(&sg->dropped, true);
            fds__seg_unref(sg);
            fds__live_unref(lv);
            continue;
        }
        segs[k] = sg;
        lives[k++] = lv;
    }
    if (added) {
        segs[k] = added;
        lives[k++] = NULL;
    }
    free(ix->segs);
    free(ix->lives);
    ix->segs = segs;
    ix->lives = lives;
    ix->nsegs = k;
    pthread_rwlock_unlock(&ix->segs_lock);
    return 0;
}

int fds_index_refresh(fds_index *ix, fds_err *err)
{
    pthread_mutex_lock(&ix->refresh_mu);
    pthread_mutex_lock(&ix->wmu);
    if (!ix->open || ix->failure) {
        pthread_mutex_unlock(&ix->wmu);
        pthread_mutex_unlock(&ix->refresh_mu);
        return index_closed(ix, err);
    }
    ix->frozen = ix->buf;
    memset(&ix->buf, 0, sizeof ix->buf);
    ix->buf.max_seq = -1;
    fds_index_settings set = ix->settings;
    pthread_mutex_unlock(&ix->wmu);
    ix->last_refresh_ms = fds__now_ms();

    int rc = 0;
    fds__buffer *fz = &ix->frozen;
    if (fz->n == 0)
        goto done;
    /* live sources of the frozen buffer, in arrival order */
    fds__bufdoc *docs = malloc(fz->n * sizeof *docs);
    if (!docs) {
        rc = FDS_ENOMEM;
        goto done;
    }
    size_t nd = 0;
    for (size_t i = 0; i < fz->n; i++)
        if (fz->docs[i].src)
            docs[nd++] = fz->docs[i];
    unsigned upto = ix->nsegs; /* stable: only refresh/merge change it */
    fds__live **newlive = calloc(upto + 1, sizeof *newlive);
    fds__seg *sg = NULL;
    if (!newlive)
        rc = FDS_ENOMEM;
    if (!rc)
        rc = collect_deletes(ix, upto, fz->docs, fz->n, newlive);
    if (!rc && nd)
        rc = build_segment(ix, docs, nd, &set, NULL, 0, false, &sg, err);
    if (!rc) {
        sqlite3 *db = ix->st->db;
        pthread_mutex_lock(&ix->st->db_mu);
        rc = fds__cat_begin(db, true, err);
        if (!rc && sg)
            rc = insert_segment(ix, sg, fz->max_seq, err);
        if (!rc)
            rc = save_lives(ix, newlive, upto, err);
        if (!rc) {
            char sql[160];
            snprintf(sql, sizeof sql, "DELETE FROM translog WHERE index_id=%lld "
                                      "AND seq<=%lld",
                     (long long)ix->id, (long long)fz->max_seq);
            rc = fds__cat_exec(db, sql, err);
        }
        if (!rc && sg)
            rc = save_mapping(ix, err);
        if (!rc)
            rc = fds__cat_commit(db, err);
        if (rc)
            fds__cat_rollback(db);
        pthread_mutex_unlock(&ix->st->db_mu);
    }
    if (!rc)
        rc = publish(ix, newlive, upto, sg, NULL, 0);
    if (rc) {
        if (sg) {
            atomic_store(&sg->dropped, true);
            fds__seg_unref(sg);
        }
        for (unsigned i = 0; newlive && i < upto; i++)
            fds__live_unref(newlive[i]);
        /* keep the docs: put them back in front of newer writes */
        pthread_mutex_lock(&ix->wmu);
        fds__buffer newer = ix->buf;
        ix->buf = *fz;
        memset(fz, 0, sizeof *fz);
        fz->max_seq = -1;
        for (size_t i = 0; i < newer.n; i++)
            buf_put(&ix->buf, newer.docs[i].id, newer.docs[i].id_len,
                    newer.docs[i].src, newer.docs[i].src_len,
                    newer.docs[i].version, newer.docs[i].seq_no);
        free(newer.docs);
        free(newer.slots);
        pthread_mutex_unlock(&ix->wmu);
    }
    free(newlive);
    free(docs);
done:
    pthread_mutex_lock(&ix->wmu);
    buf_free(&ix->frozen);
    pthread_mutex_unlock(&ix->wmu);
    pthread_mutex_unlock(&ix->refresh_mu);
    return rc;
}

/* ---- merges ------------------------------------------------------------------- */

/* Merge segments [from, from+count) of the published list into one,
 * re-encoding live docs with the current settings.  Caller holds
 * refresh_mu. */
static int merge_range(fds_index *ix, unsigned from, unsigned count,
                       fds_err *err)
{
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    fds_index_view *v;
    int rc = fds_index_view_acquire(ix, &v, err);
    if (rc)
        return rc;
    size_t total = 0;
    for (unsigned i = from; i < from + count; i++)
        total += v->segs[i]->max_doc;
    fds__bufdoc *docs = calloc(total + 1, sizeof *docs);
    size_t nd = 0;
    if (!docs)
        rc = FDS_ENOMEM;
    for (unsigned i = from; i < from + count && !rc; i++) {
        fds__seg *sg = v->segs[i];
        for (uint32_t d = 0; d < sg->max_doc && !rc; d++) {
            if (!fds__live_get(v->lives[i], d))
                continue;
            const uint8_t *src;
            size_t len, idl;
            const char *id = fds_sidx_doc_id(sg->sidx, d, &idl);
            rc = fds__seg_read_doc(ix, sg, d, &src, &len, err);
            if (rc)
                break;
            fds__bufdoc *o = &docs[nd++];
            o->id = malloc(idl + 1);
            o->src = malloc(len + 1);
            if (!o->id || !o->src) {
                rc = FDS_ENOMEM;
                break;
            }
            memcpy(o->id, id, idl);
            o->id_len = idl;
            memcpy(o->src, src, len);
            o->src_len = len;
            o->version = fds__seg_version(sg, d);
            o->seq_no = fds__seg_seqno(sg, d);
        }
    }
    uint64_t merge_bytes = 0;
    for (size_t i = 0; i < nd; i++)
        merge_bytes += docs[i].src_len;
    bool retrain = dict_wants_retrain(ix, &set, merge_bytes);
    /* clean inputs written with today's settings: copy their blocks */
    bool copy = !retrain;
    const fds_dict *cur = fds_codec_uses_dict(set.codec.codec)
                              ? index_current_dict(ix, set.codec.codec) : NULL;
    for (unsigned i = from; i < from + count && copy; i++) {
        const fds__seg *sg = v->segs[i];
        copy = !v->lives[i] && sg->codec == (uint32_t)set.codec.codec &&
               sg->dict_id == (cur ? fds_dict_id(cur) : 0) &&
               sg->block_size == set.codec.block_size &&
               sg->max_docs_per_block == set.codec.max_docs_per_block &&
               (sg->level == (uint32_t)set.codec.level ||
                (set.codec.codec != FDS_CODEC_ZSTD &&
                 set.codec.codec != FDS_CODEC_ZSTD_NO_DICT));
    }
    fds__seg *merged = NULL;
    if (!rc && nd)
        rc = build_segment(ix, docs, nd, &set, copy ? v->segs + from : NULL,
                           copy ? count : 0, retrain, &merged, err);
    if (!rc) {
        sqlite3 *db = ix->st->db;
        pthread_mutex_lock(&ix->st->db_mu);
        rc = fds__cat_begin(db, true, err);
        int64_t max_seq = 0;
        for (size_t i = 0; i < nd; i++)
            if (docs[i].seq_no > max_seq)
                max_seq = docs[i].seq_no;
        if (!rc && merged)
            rc = insert_segment(ix, merged, max_seq, err);
        for (unsigned i = from; i < from + count && !rc; i++) {
            char sql[128];
            snprintf(sql, sizeof sql, "DELETE FROM segments WHERE id=%lld",
                     (long long)v->segs[i]->id);
            rc = fds__cat_exec(db, sql, err);
        }
        if (!rc)
            rc = fds__cat_commit(db, err);
        if (rc)
            fds__cat_rollback(db);
        pthread_mutex_unlock(&ix->st->db_mu);
    }
    if (!rc) {
        /* the merged segment takes the place of the first merged one, so
         * doc order (newest last) is kept for id lookups */
        fds__seg **removed = v->segs + from;
        rc = publish(ix, NULL, 0, NULL, removed, count);
        if (!rc && merged) {
            pthread_rwlock_wrlock(&ix->segs_lock);
            memmove(ix->segs + from + 1, ix->segs + from,
                    (ix->nsegs - from) * sizeof *ix->segs);
            memmove(ix->lives + from + 1, ix->lives + from,
                    (ix->nsegs - from) * sizeof *ix->lives);
            ix->segs[from] = merged;
            ix->lives[from] = NULL;
            ix->nsegs++;
            pthread_rwlock_unlock(&ix->segs_lock);
            merged = NULL;
        }
    }
    if (merged) {
        atomic_store(&merged->dropped, true);
        fds__seg_unref(merged);
    }
    for (size_t i = 0; i < nd; i++) {
        free(docs[i].id);
        free(docs[i].src);
    }
    free(docs);
    fds_index_view_release(v);
    return rc;
}

int fds_index_forcemerge(fds_index *ix, unsigned max_segments, fds_err *err)
{
    int rc = fds_index_refresh(ix, err);
    if (rc)
        return rc;
    if (max_segments == 0)
        max_segments = 1;
    pthread_mutex_lock(&ix->refresh_mu);
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    unsigned n = ix->nsegs;
    if (n > max_segments) {
        unsigned count = n - max_segments + 1;
        rc = merge_range(ix, 0, count, err);
    }
    /* what is left: expunge deletes, and rewrite segments written with other
     * codec settings (a codec change applies to old segments here) */
    for (unsigned i = 0; !rc && i < ix->nsegs; i++) {
        const fds__seg *sg = ix->segs[i];
        bool stale = sg->codec != (uint32_t)set.codec.codec ||
                     sg->block_size != set.codec.block_size ||
                     sg->max_docs_per_block != set.codec.max_docs_per_block ||
                     ((set.codec.codec == FDS_CODEC_ZSTD ||
                       set.codec.codec == FDS_CODEC_ZSTD_NO_DICT) &&
                      sg->level != (uint32_t)set.codec.level);
        if (stale || ix->lives[i] ||
            dict_wants_retrain(ix, &set, ix->segs[i]->raw_bytes))
            rc = merge_range(ix, i, 1, err);
    }
    pthread_mutex_unlock(&ix->refresh_mu);
    return rc;
}

/* Tiered-lite policy: when an index has more than FDS_MERGE_SEGMENTS_MAX
 * segments, merge the smallest adjacent run of them. */
static void maybe_merge(fds_index *ix)
{
    pthread_mutex_lock(&ix->refresh_mu);
    if (ix->nsegs > FDS_MERGE_SEGMENTS_MAX && ix->open && !ix->failure) {
        unsigned width = ix->nsegs - FDS_MERGE_SEGMENTS_MAX / 2;
        unsigned best = 0;
        uint64_t best_docs = UINT64_MAX;
        for (unsigned f = 0; f + width <= ix->nsegs; f++) {
            uint64_t d = 0;
            for (unsigned i = f; i < f + width; i++)
                d += ix->segs[i]->max_doc;
            if (d < best_docs) {
                best_docs = d;
                best = f;
            }
        }
        fds_err err;
        fds_err_clear(&err);
        if (merge_range(ix, best, width, &err))
            fprintf(stderr, "fieldstore: [%s] merge failed: %s\n", ix->name,
                    err.reason);
    }
    pthread_mutex_unlock(&ix->refresh_mu);
}

/* ---- views ----------------------------------------------------------------------- */

int fds_index_view_acquire(fds_index *ix, fds_index_view **out, fds_err *err)
{
    if (!fds_index_is_open(ix))
        return index_closed(ix, err);
    fds_index_view *v = calloc(1, sizeof *v);
    if (!v)
        return FDS_ENOMEM;
    pthread_rwlock_rdlock(&ix->segs_lock);
    unsigned n = ix->nsegs;
    v->segs = malloc((n + 1) * sizeof *v->segs);
    v->lives = malloc((n + 1) * sizeof *v->lives);
    v->ss = malloc((n + 1) * sizeof *v->ss);
    if (!v->segs || !v->lives || !v->ss) {
        pthread_rwlock_unlock(&ix->segs_lock);
        free(v->segs);
        free(v->lives);
        free(v->ss);
        free(v);
        return FDS_ENOMEM;
    }
    for (unsigned i = 0; i < n; i++) {
        v->segs[i] = ix->segs[i];
        atomic_fetch_add(&v->segs[i]->refs, 1);
        v->lives[i] = ix->lives[i];
        if (v->lives[i])
            atomic_fetch_add(&v->lives[i]->refs, 1);
        v->ss[i].sidx = v->segs[i]->sidx;
        v->ss[i].live = v->lives[i] ? v->lives[i]->bits : NULL;
    }
    pthread_rwlock_unlock(&ix->segs_lock);
    v->nsegs = n;
    atomic_fetch_add(&ix->refs, 1);
    v->ix = ix;
    *out = v;
    return 0;
}

void fds_index_view_release(fds_index_view *v)
{
    if (!v)
        return;
    for (unsigned i = 0; i < v->nsegs; i++) {
        fds__seg_unref(v->segs[i]);
        fds__live_unref(v->lives[i]);
    }
    free(v->segs);
    free(v->lives);
    free(v->ss);
    free(v->arena);
    fds_index_release(v->ix);
    free(v);
}

const fds_search_segment *fds_index_view_segments(const fds_index_view *v,
                                                  unsigned *nseg)
{
    *nseg = v->nsegs;
    return v->ss;
}

/* ---- statistics ------------------------------------------------------------------ */

int fds_index_stats_get(fds_index *ix, fds_index_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_rwlock_rdlock(&ix->segs_lock);
    out->segments = ix->nsegs;
    for (unsigned i = 0; i < ix->nsegs; i++) {
        const fds__seg *sg = ix->segs[i];
        uint32_t del = ix->lives[i] ? ix->lives[i]->del_count : 0;
        out->docs_count += sg->max_doc - del;
        out->docs_deleted += del;
        out->stored_fields_bytes += sg->map_len;
        out->postings_bytes += sg->tim_bytes;
        out->raw_source_bytes += sg->raw_bytes;
    }
    /* dictionaries some segment still uses (a retrained one replaces the
     * first; the old row is kept only while segments name it) */
    pthread_mutex_lock(&ix->dict_mu);
    for (size_t i = 0; i < ix->ndicts; i++) {
        bool used = false;
        for (unsigned k = 0; k < ix->nsegs && !used; k++)
            used = ix->segs[k]->dict_id == ix->dicts[i].id;
        if (used)
            out->other_bytes += ix->dicts[i].len;
    }
    pthread_mutex_unlock(&ix->dict_mu);
    pthread_rwlock_unlock(&ix->segs_lock);
    pthread_mutex_lock(&ix->wmu);
    out->buffered_docs = ix->buf.n + ix->frozen.n;
    pthread_mutex_unlock(&ix->wmu);
    out->store_bytes = out->stored_fields_bytes + out->postings_bytes +
                       out->other_bytes;
    return 0;
}

int fds_index_segments(fds_index *ix, fds_segment_info **out, size_t *n)
{
    pthread_rwlock_rdlock(&ix->segs_lock);
    fds_segment_info *v = calloc(ix->nsegs + 1, sizeof *v);
    if (!v) {
        pthread_rwlock_unlock(&ix->segs_lock);
        return FDS_ENOMEM;
    }
    for (unsigned i = 0; i < ix->nsegs; i++) {
        const fds__seg *sg = ix->segs[i];
        snprintf(v[i].name, sizeof v[i].name, "%s", sg->name);
        v[i].generation = sg->gen;
        v[i].docs_deleted = ix->lives[i] ? ix->lives[i]->del_count : 0;
        v[i].docs_count = sg->max_doc - v[i].docs_deleted;
        v[i].size_bytes = sg->map_len + sg->tim_bytes;
        v[i].codec = (fds_codec_id)sg->codec;
        v[i].dict_id = sg->dict_id;
    }
    *n = ix->nsegs;
    pthread_rwlock_unlock(&ix->segs_lock);
    *out = v;
    return 0;
}

/* ---- background: refresh_interval, merges, async translog sync ------------- */

static void *background(void *arg)
{
    fds_store *s = arg;
    int64_t last_sync = fds__now_ms();
    while (!atomic_load(&s->stop)) {
        struct timespec ts = {0, BG_TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
        int64_t now = fds__now_ms();
        pthread_mutex_lock(&s->mu);
        size_t n = s->nindices;
        fds_index **v = malloc((n + 1) * sizeof *v);
        for (size_t i = 0; v && i < n; i++) {
            v[i] = s->indices[i];
            atomic_fetch_add(&v[i]->refs, 1);
        }
        pthread_mutex_unlock(&s->mu);
        for (size_t i = 0; v && i < n; i++) {
            fds_index *ix = v[i];
            fds_index_settings set;
            fds_index_get_settings(ix, &set);
            pthread_mutex_lock(&ix->wmu);
            bool pending = ix->buf.n > 0 && ix->open && !ix->failure;
            pthread_mutex_unlock(&ix->wmu);
            if (pending && set.refresh_interval_ms >= 0 &&
                now - ix->last_refresh_ms >= set.refresh_interval_ms) {
                fds_err err;
                fds_err_clear(&err);
                if (fds_index_refresh(ix, &err))
                    fprintf(stderr, "fieldstore: [%s] refresh failed: %s\n",
                            ix->name, err.reason);
            }
            maybe_merge(ix);
            fds_index_release(ix);
        }
        free(v);
        if (now - last_sync >= 5000) { /* index.translog.sync_interval */
            pthread_mutex_lock(&s->db_mu);
            sqlite3_exec(s->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL);
            sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
                                      NULL, NULL);
            pthread_mutex_unlock(&s->db_mu);
            last_sync = now;
        }
    }
    return NULL;
}

int fds_store_start_background(fds_store *s)
{
    if (s->bg_started)
        return 0;
    if (pthread_create(&s->bg, NULL, background, s) != 0)
        return FDS_ENOMEM;
    s->bg_started = true;
    return 0;
}
