/*
 * store.c: the life of a data directory and its indices: open (load every
 * index from the catalogue, replay translogs, remove files no catalogue row
 * names), create, get, delete, open/close, settings, and the background
 * thread (refresh_interval, merges, async translog sync).  See store.h for
 * the write and read paths and the crash-safety argument, docs/store.md
 * for the files.
 *
 * On disk: DATA/catalog.sqlite (catalog.c) and DATA/indices/<uuid>/, one
 * folder per index holding its seg_<gen>.fdt and seg_<gen>.tim files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <wctype.h>

#include "catalog.h"
#include "fds_text.h"
#include "fds_thread.h"
#include "index_rules.h"
#include "store_int.h"

#define BG_TICK_MS 100

int64_t fds__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int fds__mkdir_p(const char *path)
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

void fds__rm_rf(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            fds__rm_rf(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

fds_index *fds__index_alloc(fds_store *s, int64_t id, const char *name,
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
    pthread_mutex_init(&ix->meta_mu, NULL);
    pthread_mutex_init(&ix->buf_mu, NULL);
    pthread_mutex_init(&ix->merge_mu, NULL);
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
    fds__buf_free(&ix->buf);
    fds__buf_free(&ix->frozen);
    fds__buf_account(ix);
    for (size_t i = 0; i < ix->ndicts; i++)
        fds_dict_free(ix->dicts[i].dict);
    free(ix->dicts);
    fds_mapping_free(ix->mapping);
    free(ix->failure);
    pthread_mutex_destroy(&ix->wmu);
    pthread_mutex_destroy(&ix->meta_mu);
    pthread_mutex_destroy(&ix->buf_mu);
    pthread_mutex_destroy(&ix->merge_mu);
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
    pthread_mutex_lock(&ix->meta_mu);
    *out = ix->settings;
    pthread_mutex_unlock(&ix->meta_mu);
}

bool fds_index_is_open(fds_index *ix)
{
    pthread_mutex_lock(&ix->meta_mu);
    bool o = ix->open && !ix->failure;
    pthread_mutex_unlock(&ix->meta_mu);
    return o;
}

/* Load an index's settings, mapping, dictionaries, segments and translog.
 * *fatal is set when the failure must stop start-up rather than only mark
 * this index failed: the catalogue could not be read (FDS_ESQL: a short
 * read must never pass for a complete one), memory ran out, or the translog
 * did not replay completely (acknowledged writes would be lost). */
/* ix->nshards and ix->routing_shards from ix->settings. */
void fds__index_shards_set(fds_index *ix)
{
    ix->nshards = ix->settings.number_of_shards ? ix->settings.number_of_shards : 1;
    ix->routing_shards = ix->settings.number_of_routing_shards
                             ? ix->settings.number_of_routing_shards
                             : fds_routing_shards_default(ix->nshards);
}

uint32_t fds_index_nshards(const fds_index *ix) { return ix->nshards; }

uint32_t fds__shard_of(const fds_index *ix, const char *id, size_t id_len,
                       const char *routing, size_t rlen)
{
    if (ix->nshards <= 1)
        return 0;
    return routing ? fds_routing_shard(routing, rlen, ix->nshards, ix->routing_shards)
                   : fds_routing_shard(id, id_len, ix->nshards, ix->routing_shards);
}

uint32_t fds_index_shard_of(const fds_index *ix, const char *routing, size_t len)
{
    return fds__shard_of(ix, routing, len, routing, len);
}

static int index_load(fds_store *s, fds_index *ix, fds_err *err, bool *fatal)
{
    int rc = fds__settings_load(s, ix->id, &ix->settings, err);
    if (!rc)
        rc = fds_settings_check_shards(&ix->settings, err);
    fds__index_shards_set(ix);
    if (!rc)
        rc = fds__mapping_load(s, ix, err);
    if (!rc)
        rc = fds__dict_load(s, ix, err);
    if (!rc)
        rc = fds__segments_load(s, ix, err);
    *fatal = rc == FDS_ESQL || rc == FDS_ENOMEM;
    /* a translog row failing its checksum fails only this index */
    if (!rc && (rc = fds__translog_replay(s, ix, err)))
        *fatal = rc != FDS_ECORRUPT;
    if (rc)
        return rc;
    /* the counters of the indices row carry no checksum: never reuse a
     * generation or a seq_no that a segment or the translog holds */
    for (unsigned i = 0; i < ix->nsegs; i++) {
        if (ix->segs[i]->gen >= ix->next_gen)
            ix->next_gen = ix->segs[i]->gen + 1;
        if (ix->segs[i]->max_seq >= ix->next_seq)
            ix->next_seq = ix->segs[i]->max_seq + 1;
    }
    if (ix->buf.max_seq >= ix->next_seq)
        ix->next_seq = ix->buf.max_seq + 1;
    fds__buf_account(ix); /* the first write or tick over the limit flushes */
    return 0;
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
    if (fds__mkdir_p(dir))
        return fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                            "cannot create data directory [%s]: %s", dir,
                            strerror(errno));
    fds_store *s = calloc(1, sizeof *s);
    if (!s)
        return FDS_ENOMEM;
    s->dir = strdup(dir);
    pthread_mutex_init(&s->db_mu, NULL);
    pthread_mutex_init(&s->mu, NULL);
    atomic_init(&s->stop, false);
    atomic_init(&s->min_free, 0);
    atomic_init(&s->buf_mem, 0);
    atomic_init(&s->buf_limit, fds_index_buffer_default());
    atomic_init(&s->frozen_mem, 0);
    pthread_mutex_init(&s->flush_mu, NULL);
    pthread_cond_init(&s->flush_cv, NULL);
    pthread_cond_init(&s->flushed_cv, NULL);
    if (!s->dir) {
        fds_store_close(s);
        return FDS_ENOMEM;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/indices", dir);
    int rc = fds__mkdir_p(path) ? FDS_EIO : 0;
    snprintf(path, sizeof path, "%s/catalog.sqlite", dir);
    if (!rc)
        rc = fds__cat_open(path, &s->db, err);
    if (rc) {
        fds_store_close(s);
        return rc;
    }
    sqlite3_stmt *st;
    rc = fds__cat_prepare(s->db, "SELECT id, name, uuid, created_ms, open, "
                                 "next_seq, next_gen, " FDS_CRC_COLS_INDICES
                                 ", crc FROM indices ORDER BY name", &st, err);
    bool names_damaged = false; /* an index row whose uuid cannot be trusted */
    int row = 0;
    int64_t *unfinished = NULL; /* rows of resizes a crash interrupted */
    size_t nunfinished = 0;
    while (!rc && (row = fds__cat_row(s->db, st, "indices", err)) == 1) {
        const char *row_name = (const char *)sqlite3_column_text(st, 1);
        if (row_name && !strncmp(row_name, FDS__RESIZE_PREFIX,
                                 strlen(FDS__RESIZE_PREFIX))) {
            int64_t *q = realloc(unfinished, (nunfinished + 1) * sizeof *q);
            if (!q) {
                rc = FDS_ENOMEM;
                break;
            }
            unfinished = q;
            unfinished[nunfinished++] = sqlite3_column_int64(st, 0);
            continue;
        }
        fds_index *ix = fds__index_alloc(s, sqlite3_column_int64(st, 0),
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
        bool fatal = false;
        int lrc;
        if (!fds__cat_row_ok(st, 7, FDS_CRC_NCOLS_INDICES)) {
            names_damaged = true;
            lrc = fds_err_setk(&lerr, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                               "catalogue row indices (name, uuid, creation "
                               "date) fails its checksum (damaged catalogue)");
        } else {
            lrc = index_load(s, ix, &lerr, &fatal);
        }
        if (lrc && fatal) {
            rc = fds_err_setk(err, lrc, lerr.kind ? lerr.kind : FDS_KIND_INTERNAL,
                              "index [%s] cannot be loaded, start-up stopped "
                              "(no file was removed): %s", ix->name,
                              lerr.reason[0] ? lerr.reason : fds_strerror(lrc));
        } else if (lrc) {
            /* serve the other indices; this one reports why it failed and
             * keeps its files untouched for inspection or repair */
            ix->failure = strdup(lerr.reason[0] ? lerr.reason
                                                : fds_strerror(lerr.code));
            fprintf(stderr, "fieldstore: index [%s] failed to load: %s\n",
                    ix->name, ix->failure);
        }
        if (!rc) {
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
    if (!rc && row < 0)
        rc = row;
    if (st)
        sqlite3_finalize(st);
    if (!rc)
        rc = fds__metadata_load(s, err);
    /* a resize's target is named only by its last transaction: the rows of
     * one a crash interrupted go, and its folder with the unknown ones */
    for (size_t i = 0; !rc && i < nunfinished; i++) {
        rc = fds__cat_begin(s->db, true, err);
        if (!rc)
            rc = fds__index_rows_delete(s, unfinished[i], err);
        if (!rc)
            rc = fds__cat_commit(s->db, err);
        if (rc)
            fds__cat_rollback(s->db);
    }
    free(unfinished);
    if (rc) {
        fds_store_close(s);
        return rc;
    }
    /* only after a complete, error-free scan of the catalogue: files of
     * segments no row names, then index folders no row names */
    for (size_t i = 0; i < s->nindices; i++)
        if (!s->indices[i]->failure)
            index_remove_orphans(s->indices[i]);
    /* (no folder is removed when a damaged row may name one wrongly) */
    snprintf(path, sizeof path, "%s/indices", dir);
    DIR *d = names_damaged ? NULL : opendir(path);
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
                fds__rm_rf(p);
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
    if (s->merger_started)
        pthread_join(s->merger, NULL);
    pthread_mutex_lock(&s->flush_mu);
    pthread_cond_broadcast(&s->flush_cv);
    pthread_cond_broadcast(&s->flushed_cv);
    pthread_mutex_unlock(&s->flush_mu);
    if (atomic_load(&s->flusher_started))
        pthread_join(s->flusher, NULL);
    for (size_t i = 0; i < s->nindices; i++)
        fds_index_release(s->indices[i]);
    free(s->indices);
    free(s->resizing);
    fds__metadata_free(s);
    if (s->db)
        sqlite3_close(s->db);
    pthread_mutex_destroy(&s->db_mu);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->flush_mu);
    pthread_cond_destroy(&s->flush_cv);
    pthread_cond_destroy(&s->flushed_cv);
    free(s->dir);
    free(s);
}

/* A new index uuid as Elasticsearch's UUIDs.randomBase64UUID makes it:
 * 16 random bytes with the RFC 4122 version-4 and variant bits set, in
 * base64url without padding -- 22 characters, safe as a directory name. */
void fds__make_uuid(char out[33])
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
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t w = 0;
    for (int i = 0; i < 16; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < 16 ? (uint32_t)b[i + 1] << 8 : 0) |
                     (i + 2 < 16 ? b[i + 2] : 0);
        int chars = i + 2 < 16 ? 4 : i + 1 < 16 ? 3 : 2;
        for (int k = 0; k < chars; k++)
            out[w++] = abc[(v >> (18 - 6 * k)) & 63];
    }
    out[w] = 0;
}

/* Whether the UTF-8 text s[0..n) has a character that lower-cases to another
 * (Elasticsearch's `!index.toLowerCase(Locale.ROOT).equals(index)`): 'É' and
 * 'Σ' as much as 'A'.  The case tables are glibc's C.UTF-8 (Unicode's simple
 * lower-case mappings); without that locale, ASCII and Latin-1 only. */
static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_locale_load(void)
{
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static bool has_upper(const char *s, size_t n)
{
    pthread_once(&utf8_once, utf8_locale_load);
    locale_t utf8 = utf8_locale;
    for (size_t i = 0; i < n;) {
        const uint8_t *u = (const uint8_t *)s + i;
        size_t k = fds_utf8_seq_len(u, n - i);
        if (!k)
            return false; /* not UTF-8: refused elsewhere */
        wint_t c = k == 1 ? u[0]
                 : k == 2 ? (wint_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f)
                 : k == 3 ? (wint_t)(u[0] & 0x0f) << 12 | (wint_t)(u[1] & 0x3f) << 6 |
                                (u[2] & 0x3f)
                          : (wint_t)(u[0] & 0x07) << 18 | (wint_t)(u[1] & 0x3f) << 12 |
                                (wint_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
        if (utf8 ? towlower_l(c, utf8) != c
                 : (c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7))
            return true;
        i += k;
    }
    return false;
}

int fds__check_name(const char *name, const char *what, int kind,
                    fds_err *err)
{
    size_t n = strlen(name);
    const char *why = NULL;
    char too_long[64];
    snprintf(too_long, sizeof too_long, "%s name is too long, (> %d)", what,
             FDS_INDEX_NAME_MAX);
    if (n == 0)
        why = "must not be empty";
    else if (n > FDS_INDEX_NAME_MAX)
        why = too_long;
    else if (name[0] == '_' || name[0] == '-' || name[0] == '+')
        why = "must not start with '_', '-', or '+'";
    else if (!strcmp(name, ".") || !strcmp(name, ".."))
        why = "must not be '.' or '..'";
    else
        for (const char *p = name; *p && !why; p++) {
            if (strchr("\\/*?\"<>| ,#:", *p))
                why = "must not contain the following characters [ , \", *, "
                      "\\, <, |, ,, >, /, ?, #, :]";
        }
    if (!why && has_upper(name, n))
        why = "must be lowercase";
    if (why)
        return fds_err_setk(err, FDS_EINVAL, kind, "Invalid %s name [%s], %s",
                            what, name, why);
    return 0;
}

uint32_t fds__index_row_crc(const char *name, const char *uuid, int64_t created_ms)
{
    uint32_t crc = fds__crc_bytes(0, name, strlen(name));
    crc = fds__crc_bytes(crc, uuid, strlen(uuid));
    return fds__crc_i64(crc, created_ms);
}

int fds__name_taken(fds_store *s, const char *name, fds_err *err)
{
    for (size_t i = 0; i < s->naliases; i++)
        if (!strcmp(s->aliases[i].alias, name))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_INDEX_NAME,
                                "Invalid index name [%s], already exists as "
                                "alias", name);
    for (size_t i = 0; i < s->nindices; i++)
        if (!strcmp(s->indices[i]->name, name))
            return fds_err_setk(err, FDS_EEXIST, FDS_KIND_ALREADY_EXISTS,
                                "index [%s/%s] already exists", name,
                                s->indices[i]->uuid);
    for (size_t i = 0; i < s->nresizing; i++)
        if (!strcmp(s->resizing[i].name, name))
            return fds_err_setk(err, FDS_EEXIST, FDS_KIND_ALREADY_EXISTS,
                                "index [%s/%s] already exists", name,
                                s->resizing[i].uuid);
    return 0;
}

int fds_store_create_index(fds_store *s, const char *name,
                           const fds_index_settings *settings,
                           const char *mapping_json, fds_err *err)
{
    return fds_store_create_index_aliased(s, name, settings, mapping_json,
                                          NULL, 0, err);
}

int fds_store_create_index_aliased(fds_store *s, const char *name,
                                   const fds_index_settings *settings,
                                   const char *mapping_json,
                                   const fds_alias *aliases, size_t naliases,
                                   fds_err *err)
{
    int rc = fds__check_name(name, "index", FDS_KIND_INVALID_INDEX_NAME, err);
    if (!rc)
        rc = fds_settings_check_shards(settings, err);
    if (rc)
        return rc;
    char uuid[33];
    fds__make_uuid(uuid);
    pthread_mutex_lock(&s->mu);
    if ((rc = fds__name_taken(s, name, err))) {
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    fds_index *ix = fds__index_alloc(s, 0, name, uuid);
    if (!ix) {
        pthread_mutex_unlock(&s->mu);
        return FDS_ENOMEM;
    }
    ix->settings = *settings;
    fds__index_shards_set(ix);
    ix->created_ms = fds__now_ms();
    ix->next_gen = 1;
    if (mapping_json &&
        (rc = fds_mapping_merge_json(ix->mapping, mapping_json,
                                     strlen(mapping_json), err)))
        goto fail;
    if (fds__mkdir_p(ix->dir)) {
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                          "cannot create [%s]: %s", ix->dir, strerror(errno));
        goto fail;
    }
    pthread_mutex_lock(&s->db_mu);
    rc = fds__cat_begin(s->db, true, err);
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = fds__cat_prepare(s->db, "INSERT INTO indices(name, uuid, created_ms, "
                                     "crc) VALUES(?,?,?,?)", &st, err);
    if (!rc) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, ix->created_ms);
        sqlite3_bind_int64(st, 4, fds__index_row_crc(name, uuid, ix->created_ms));
        rc = fds__cat_step_done(s->db, st, err);
        ix->id = sqlite3_last_insert_rowid(s->db);
    }
    if (!rc)
        rc = fds__settings_save(s, ix->id, settings, err);
    if (!rc)
        rc = fds__mapping_save(ix, err);
    if (!rc && naliases)
        rc = fds__aliases_insert(s, ix->id, name, aliases, naliases, err);
    if (!rc)
        rc = fds__cat_commit(s->db, err);
    if (rc)
        fds__cat_rollback(s->db);
    pthread_mutex_unlock(&s->db_mu);
    if (rc) {
        fds__rm_rf(ix->dir);
        goto fail;
    }
    fds_index **q = realloc(s->indices, (s->nindices + 1) * sizeof *q);
    if (!q) {
        rc = FDS_ENOMEM;
        goto fail;
    }
    s->indices = q;
    s->indices[s->nindices++] = ix;
    if (naliases)
        fds__aliases_adopt(s, name, aliases, naliases);
    pthread_mutex_unlock(&s->mu);
    return 0;
fail:
    pthread_mutex_unlock(&s->mu);
    fds_index_release(ix);
    return rc;
}

int fds__index_not_found(fds_err *err, const char *name)
{
    int rc = fds_err_setk(err, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
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
    return fds__index_not_found(err, name);
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

void fds__index_unlink(fds_store *s, fds_index *ix)
{
    size_t at = 0;
    while (at < s->nindices && s->indices[at] != ix)
        at++;
    if (at == s->nindices)
        return;
    fds__aliases_forget_index(s, ix->name);
    atomic_store(&ix->deleted, true);
    memmove(s->indices + at, s->indices + at + 1,
            (s->nindices - at - 1) * sizeof *s->indices);
    s->nindices--;
    /* mapped files stay readable for views still open */
    fds__rm_rf(ix->dir);
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
        return fds__index_not_found(err, name);
    }
    fds_index *ix = s->indices[at];
    /* not merge_mu: a running merge finds the index deleted when it
     * publishes, and drops what it built (merge.c, merge_range) */
    pthread_mutex_lock(&ix->refresh_mu);
    /* no write may pass its check between the rows' deletion and the
     * index's: its translog rows would outlive the index under an id a
     * new index can get (SQLite reuses the largest rowid) */
    pthread_mutex_lock(&ix->wmu);
    pthread_mutex_lock(&s->db_mu);
    int rc = fds__cat_begin(s->db, true, err);
    if (!rc)
        rc = fds__index_rows_delete(s, ix->id, err);
    if (!rc)
        rc = fds__cat_commit(s->db, err);
    if (rc)
        fds__cat_rollback(s->db);
    else /* under db_mu: a merge's dictionary sees it (dict.c) */
        atomic_store(&ix->deleted, true);
    pthread_mutex_unlock(&s->db_mu);
    pthread_mutex_unlock(&ix->wmu);
    if (!rc)
        fds__index_unlink(s, ix);
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

int fds__index_failed(fds_index *ix, fds_err *err)
{
    int rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "%s", ix->failure);
    if (err && !err->index[0])
        snprintf(err->index, sizeof err->index, "%s", ix->name);
    return rc;
}

int fds__index_usable(fds_index *ix, fds_err *err)
{
    if (atomic_load(&ix->deleted))
        return fds__index_not_found(err, ix->name);
    if (!fds_index_is_open(ix))
        return fds__index_closed(ix, err);
    return 0;
}

int fds__index_closed(fds_index *ix, fds_err *err)
{
    if (ix->failure)
        return fds__index_failed(ix, err);
    int rc = fds_err_setk(err, FDS_ECLOSED, FDS_KIND_INDEX_CLOSED,
                          "closed");
    if (err && !err->index[0])
        snprintf(err->index, sizeof err->index, "%s", ix->name);
    return rc;
}

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

void fds_store_set_min_free_disk(fds_store *s, uint64_t bytes)
{
    atomic_store(&s->min_free, bytes);
}

bool fds__disk_low(fds_store *s)
{
    uint64_t floor = atomic_load(&s->min_free);
    struct statvfs v;
    if (!floor || statvfs(s->dir, &v) != 0)
        return false;
    return (uint64_t)v.f_bavail * v.f_frsize < floor;
}

int fds__index_blocked(fds_index *ix, fds_err *err)
{
    if (err)
        fds_err_clear(err);
    int rc = fds_err_setk(err, FDS_EIO, FDS_KIND_CLUSTER_BLOCK,
                          "index [%s] blocked by: [TOO_MANY_REQUESTS/12/disk "
                          "usage exceeded flood-stage watermark, index has "
                          "read-only-allow-delete block];", ix->name);
    if (err)
        snprintf(err->index, sizeof err->index, "%s", ix->name);
    return rc;
}

/* Each index block: its id, status word and description
 * (Elasticsearch's IndexMetadata.INDEX_*_BLOCK), and the fds_block_level
 * bits it refuses; in FDS_BLOCK_* bit order. */
#define LV(l) (1u << FDS_BLOCK_LEVEL_##l)
static const struct {
    int id;
    const char *text;
    unsigned levels;
} BLOCKS[FDS_BLOCK_COUNT] = {
    {5, "FORBIDDEN/5/index read-only (api)",
     LV(WRITE) | LV(METADATA_WRITE) | LV(DELETE)},
    {7, "FORBIDDEN/7/index read (api)", LV(READ)},
    {8, "FORBIDDEN/8/index write (api)", LV(WRITE)},
    {9, "FORBIDDEN/9/index metadata (api)",
     LV(METADATA_READ) | LV(METADATA_WRITE) | LV(DELETE)},
    {12, "TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, "
         "index has read-only-allow-delete block",
     LV(WRITE) | LV(METADATA_WRITE)},
};
#undef LV

int fds_index_check_block(fds_index *ix, int level, fds_err *err)
{
    pthread_mutex_lock(&ix->meta_mu);
    unsigned on = ix->settings.blocks;
    pthread_mutex_unlock(&ix->meta_mu);
    char list[FDS_ERR_REASON_MAX] = "";
    size_t len = 0;
    bool many = false; /* a 429 block is among them */
    for (unsigned i = 0; i < FDS_BLOCK_COUNT; i++) {
        if (!(on & (1u << i)) || !(BLOCKS[i].levels & (1u << level)))
            continue;
        len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0,
                                "%s%s", len ? ", " : "", BLOCKS[i].text);
        if (len >= sizeof list)
            len = sizeof list - 1;
        many |= (1u << i) == FDS_BLOCK_READ_ONLY_ALLOW_DELETE;
    }
    if (!list[0])
        return 0;
    int rc = fds_err_setk(err, FDS_EUNSUPPORTED,
                          many ? FDS_KIND_CLUSTER_BLOCK : FDS_KIND_INDEX_BLOCK,
                          "index [%s] blocked by: [%s];", ix->name, list);
    if (err)
        snprintf(err->index, sizeof err->index, "%s", ix->name);
    return rc;
}

int fds_index_set_open(fds_index *ix, bool open, fds_err *err)
{
    if (ix->failure)
        return fds__index_failed(ix, err);
    pthread_mutex_lock(&ix->wmu);
    pthread_mutex_lock(&ix->st->db_mu);
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE indices SET open=%d WHERE id=%lld",
             open ? 1 : 0, (long long)ix->id);
    int rc = fds__cat_exec(ix->st->db, sql, err);
    pthread_mutex_unlock(&ix->st->db_mu);
    if (!rc) {
        pthread_mutex_lock(&ix->meta_mu);
        ix->open = open;
        pthread_mutex_unlock(&ix->meta_mu);
    }
    pthread_mutex_unlock(&ix->wmu);
    return rc;
}

int fds_index_put_settings(fds_index *ix, const fds_index_settings *set,
                           fds_err *err)
{
    if (ix->failure)
        return fds__index_failed(ix, err);
    pthread_mutex_lock(&ix->wmu);
    /* writers hold wmu: ix->settings is stable here */
    int rc = fds_settings_check_final(&ix->settings, set, ix->name, err);
    if (rc) {
        pthread_mutex_unlock(&ix->wmu);
        return rc;
    }
    pthread_mutex_lock(&ix->st->db_mu);
    rc = fds__cat_begin(ix->st->db, true, err);
    if (!rc)
        rc = fds__settings_save(ix->st, ix->id, set, err);
    if (!rc)
        rc = fds__cat_commit(ix->st->db, err);
    if (rc)
        fds__cat_rollback(ix->st->db);
    pthread_mutex_unlock(&ix->st->db_mu);
    if (!rc) {
        pthread_mutex_lock(&ix->meta_mu);
        ix->settings = *set;
        pthread_mutex_unlock(&ix->meta_mu);
    }
    pthread_mutex_unlock(&ix->wmu);
    return rc;
}

int fds_index_check_mapping(fds_index *ix, const char *json, size_t len,
                            fds_err *err)
{
    fds_mapping *copy = fds_mapping_create();
    char *cur = fds_mapping_to_json(ix->mapping);
    int rc = copy && cur ? 0 : FDS_ENOMEM;
    if (!rc)
        rc = fds_mapping_merge_json(copy, cur, strlen(cur), err);
    if (!rc) {
        fds_mapping_seal(copy); /* an update of an existing index */
        rc = fds_mapping_merge_json(copy, json, len, err);
    }
    free(cur);
    fds_mapping_free(copy);
    return rc;
}

int fds_index_put_mapping(fds_index *ix, const char *json, size_t len,
                          fds_err *err)
{
    if (ix->failure)
        return fds__index_failed(ix, err);
    pthread_mutex_lock(&ix->wmu);
    /* on a copy first: a refused change leaves no field behind */
    fds_mapping_seal(ix->mapping);
    int rc = fds_index_check_mapping(ix, json, len, err);
    if (!rc)
        rc = fds_mapping_merge_json(ix->mapping, json, len, err);
    if (!rc) {
        pthread_mutex_lock(&ix->st->db_mu);
        rc = fds__cat_begin(ix->st->db, true, err);
        if (!rc)
            rc = fds__mapping_save(ix, err);
        if (!rc)
            rc = fds__cat_commit(ix->st->db, err);
        if (rc)
            fds__cat_rollback(ix->st->db);
        pthread_mutex_unlock(&ix->st->db_mu);
    }
    pthread_mutex_unlock(&ix->wmu);
    return rc;
}

fds_index **fds__indices_pin(fds_store *s, size_t *n)
{
    pthread_mutex_lock(&s->mu);
    *n = s->nindices;
    fds_index **v = malloc((*n + 1) * sizeof *v);
    for (size_t i = 0; v && i < *n; i++) {
        v[i] = s->indices[i];
        atomic_fetch_add(&v[i]->refs, 1);
    }
    pthread_mutex_unlock(&s->mu);
    if (!v)
        *n = 0;
    return v;
}

void fds__thread_background(const char *name)
{
    fds_thread_lower(name, FDS__BACKGROUND_NICE);
}

static void *background(void *arg)
{
    fds_store *s = arg;
    fds__thread_background("fds-background");
    int64_t last_sync = fds__now_ms();
    uint64_t last_batches = 0;
    while (!atomic_load(&s->stop)) {
        struct timespec ts = {0, BG_TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
        int64_t now = fds__now_ms();
        size_t n;
        fds_index **v = fds__indices_pin(s, &n);
        /* below the free-space floor: no new segment files (the writes
         * wait in the translog, searches serve what is committed) */
        bool low = fds__disk_low(s);
        for (size_t i = 0; v && i < n; i++) {
            fds_index *ix = v[i];
            if (low) {
                fds_index_release(ix);
                continue;
            }
            fds_index_settings set;
            fds_index_get_settings(ix, &set);
            pthread_mutex_lock(&ix->wmu);
            bool pending = ix->buf.n > 0 && !fds__index_usable(ix, NULL);
            int64_t last_refresh = ix->last_refresh_ms;
            pthread_mutex_unlock(&ix->wmu);
            if (pending && ((set.refresh_interval_ms >= 0 &&
                             now - last_refresh >= set.refresh_interval_ms) ||
                            fds__buf_over(s))) {
                fds_err err;
                fds_err_clear(&err);
                if (fds_index_refresh(ix, &err))
                    fprintf(stderr, "fieldstore: [%s] refresh failed: %s\n",
                            ix->name, err.reason);
            }
            fds_index_release(ix);
        }
        free(v);
        if (now - last_sync >= 5000) { /* index.translog.sync_interval */
            pthread_mutex_lock(&s->db_mu);
            /* Pages a trim freed go back to the file system once writes
             * pause for a sync interval.  While they go on, the next
             * translog rows reuse those pages; vacuuming then would move
             * every live translog page from the end of the file into the
             * holes, ~5% of the CPU of a _bulk load (perf, 2 clients).  The
             * file stays at its high-water mark meanwhile: about the
             * translog of two write buffers. */
            if (s->tl_batches == last_batches)
                sqlite3_exec(s->db, "PRAGMA incremental_vacuum", NULL, NULL,
                             NULL);
            last_batches = s->tl_batches;
            sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
                                      NULL, NULL);
            pthread_mutex_unlock(&s->db_mu);
            last_sync = now;
        }
    }
    return NULL;
}

/* The merge thread: background merges (merge.c, fds__index_maybe_merge)
 * on a thread of their own, as Lucene's ConcurrentMergeScheduler runs
 * them beside indexing, so that a long merge holds up neither the
 * periodic refreshes of the background thread nor the translog syncs. */
static void *merger(void *arg)
{
    fds_store *s = arg;
    fds__thread_background("fds-merge");
    while (!atomic_load(&s->stop)) {
        struct timespec ts = {0, BG_TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
        size_t n;
        fds_index **v = fds__indices_pin(s, &n);
        /* below the free-space floor: no new segment files */
        bool low = fds__disk_low(s);
        for (size_t i = 0; v && i < n; i++) {
            if (!low && !atomic_load(&s->stop))
                fds__index_maybe_merge(v[i]);
            fds_index_release(v[i]);
        }
        free(v);
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
    if (pthread_create(&s->merger, NULL, merger, s) != 0)
        return FDS_ENOMEM;
    s->merger_started = true;
    if (pthread_create(&s->flusher, NULL, fds__flusher_main, s) != 0)
        return FDS_ENOMEM;
    atomic_store(&s->flusher_started, true);
    return 0;
}

int fds_store_meta_get(fds_store *s, const char *key, char *buf, size_t cap)
{
    pthread_mutex_lock(&s->db_mu);
    sqlite3_stmt *st;
    int rc = fds__cat_prepare(s->db, "SELECT value FROM meta WHERE key=?", &st, NULL);
    if (!rc) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        int row = fds__cat_row(s->db, st, "meta", NULL);
        if (row < 0)
            rc = row;
        else if (row == 0 || sqlite3_column_type(st, 0) == SQLITE_NULL)
            rc = FDS_ENOTFOUND;
        else
            snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&s->db_mu);
    return rc;
}

int fds_store_meta_put(fds_store *s, const char *key, const char *value,
                       fds_err *err)
{
    pthread_mutex_lock(&s->db_mu);
    sqlite3_stmt *st = NULL;
    int rc = fds__cat_begin(s->db, true, err);
    if (!rc)
        rc = fds__cat_prepare(s->db, value ? "INSERT OR REPLACE INTO meta "
                                             "VALUES(?,?)"
                                           : "DELETE FROM meta WHERE key=?",
                              &st, err);
    if (!rc) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        if (value)
            sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
        rc = fds__cat_step_done(s->db, st, err);
    }
    if (!rc)
        rc = fds__cat_commit(s->db, err);
    if (rc)
        fds__cat_rollback(s->db);
    pthread_mutex_unlock(&s->db_mu);
    return rc;
}
