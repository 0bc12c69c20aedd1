/*
 * index.c: the index object (struct fds_index in store_int.h) and the
 * helpers every file of src/store shares about one: its allocation,
 * references and teardown, its accessors and shard arithmetic, the errors
 * an index operation gives (not found, closed, failed, blocked), the
 * node's pinned list of indices and the priority of the node's background
 * threads.  Everything here reads or changes one index
 * or the node's list; nothing calls up into refresh, merge or metadata.
 * Declarations: index.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fds_thread.h"
#include "store_int.h"

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
    ix->rcache = fds_reader_cache_new();
    if (!ix->dir || !ix->mapping || !ix->rcache) {
        fds_reader_cache_unref(ix->rcache);
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
    fds_reader_cache_unref(ix->rcache);
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

const char *fds_index_state(fds_index *ix)
{
    pthread_mutex_lock(&ix->meta_mu);
    bool o = ix->open;
    pthread_mutex_unlock(&ix->meta_mu);
    return o ? "open" : "close";
}

int fds_index_unavailable(fds_index *ix, fds_err *err)
{
    return fds_index_is_open(ix) ? 0 : fds__index_closed(ix, err);
}

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

int fds__index_not_found(fds_err *err, const char *name)
{
    int rc = fds_err_setk(err, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                          "no such index [%s]", name);
    if (err && err->index[0] == 0)
        snprintf(err->index, sizeof err->index, "%s", name);
    return rc;
}

void fds__index_unlink(fds_store *s, fds_index *ix)
{
    size_t at = 0;
    while (at < s->nindices && s->indices[at] != ix)
        at++;
    if (at == s->nindices)
        return;
    atomic_store(&ix->deleted, true);
    memmove(s->indices + at, s->indices + at + 1,
            (s->nindices - at - 1) * sizeof *s->indices);
    s->nindices--;
    /* mapped files stay readable for views still open */
    fds__rm_rf(ix->dir);
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
