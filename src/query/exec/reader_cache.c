/*
 * reader_cache.c: the state searches of one published segment set share
 * (query.h, fds_reader_cache; reader_cache.h) -- Lucene's per-reader
 * caches, Elasticsearch's global ordinals kept per field until the next
 * refresh.  Why: a keyword terms or cardinality over several segments
 * needs the merge of their term dictionaries (global ordinals), and
 * building it per search made every dashboard panel pay for it; built
 * once per refresh or merge, a search only looks it up.
 *
 * Layout: a list of entries under one mutex.  An entry being built has
 * `building` set; its builder runs without the lock, and a second search
 * that wants the same entry waits on the condition variable until it is
 * done (or dropped after an error), so no value is built twice.  Bytes
 * are counted per cache and for the process (fds_reader_cache_bytes,
 * fds_reader_cache_total_bytes); a value that would take the cache past
 * FDS_READER_CACHE_MAX_BYTES, or the process past
 * FDS_READER_CACHE_TOTAL_MAX_BYTES, is handed to its search alone.  Freed by the
 * last unref: the store's published set and every view of it hold one.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "exec/reader_cache.h"

typedef struct rc_entry {
    struct rc_entry *next;
    const char *kind; /* static */
    char *field;
    const fds_sidx **sidx;
    unsigned nseg;
    void *val;
    void (*free_fn)(void *);
    size_t bytes;
    bool building;
} rc_entry;

struct fds_reader_cache {
    atomic_uint refs;
    pthread_mutex_t mu;
    pthread_cond_t done;
    rc_entry *head;
    size_t bytes;
};

static atomic_size_t total_bytes;

fds_reader_cache *fds_reader_cache_new(void)
{
    fds_reader_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->done, NULL);
    return c;
}

void fds_reader_cache_ref(fds_reader_cache *c)
{
    if (c)
        atomic_fetch_add(&c->refs, 1);
}

static void entry_free(rc_entry *e)
{
    if (e->val && e->free_fn)
        e->free_fn(e->val);
    free(e->field);
    free(e->sidx);
    free(e);
}

void fds_reader_cache_unref(fds_reader_cache *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    while (c->head) { /* no builder runs: it would hold a reference */
        rc_entry *e = c->head;
        c->head = e->next;
        entry_free(e);
    }
    atomic_fetch_sub(&total_bytes, c->bytes);
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

size_t fds_reader_cache_bytes(const fds_reader_cache *c)
{
    if (!c)
        return 0;
    pthread_mutex_lock((pthread_mutex_t *)&c->mu);
    size_t n = c->bytes;
    pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
    return n;
}

size_t fds_reader_cache_total_bytes(void)
{
    return atomic_load(&total_bytes);
}

static bool entry_is(const rc_entry *e, const char *kind, const char *field,
                     const fds_search_segment *segs, unsigned nseg)
{
    if (e->nseg != nseg || strcmp(e->kind, kind) || strcmp(e->field, field))
        return false;
    for (unsigned s = 0; s < nseg; s++)
        if (e->sidx[s] != segs[s].sidx)
            return false;
    return true;
}

/* A new entry being built, at the list's head (caller holds mu); NULL
 * out of memory. */
static rc_entry *entry_add(fds_reader_cache *c, const char *kind,
                           const char *field, const fds_search_segment *segs,
                           unsigned nseg)
{
    rc_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->kind = kind;
    e->nseg = nseg;
    e->field = strdup(field);
    e->sidx = malloc((nseg ? nseg : 1) * sizeof *e->sidx);
    if (!e->field || !e->sidx) {
        entry_free(e);
        return NULL;
    }
    for (unsigned s = 0; s < nseg; s++)
        e->sidx[s] = segs[s].sidx;
    e->building = true;
    e->next = c->head;
    c->head = e;
    return e;
}

static void entry_unlink(fds_reader_cache *c, rc_entry *e)
{
    for (rc_entry **p = &c->head; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            return;
        }
}

int fds__rcache_get(fds_reader_cache *c, const char *kind, const char *field,
                    const fds_search_segment *segs, unsigned nseg,
                    fds__rcache_build_fn build, void (*free_fn)(void *),
                    void *arg, void **out, bool *owned)
{
    *out = NULL;
    *owned = true;
    if (!c) {
        size_t bytes;
        return build(arg, out, &bytes);
    }
    pthread_mutex_lock(&c->mu);
    rc_entry *e;
    for (;;) { /* bounded: each wait ends one build */
        for (e = c->head; e && !entry_is(e, kind, field, segs, nseg); e = e->next)
            ;
        if (!e || !e->building)
            break;
        pthread_cond_wait(&c->done, &c->mu);
    }
    if (e) {
        *out = e->val;
        *owned = false;
        pthread_mutex_unlock(&c->mu);
        return 0;
    }
    e = entry_add(c, kind, field, segs, nseg);
    pthread_mutex_unlock(&c->mu);
    void *val = NULL;
    size_t bytes = 0;
    int rc = build(arg, &val, &bytes);
    if (!e) { /* no room for the entry itself: this search's value */
        *out = val;
        return rc;
    }
    pthread_mutex_lock(&c->mu);
    e->building = false;
    if (rc || c->bytes + bytes > FDS_READER_CACHE_MAX_BYTES ||
        atomic_load(&total_bytes) + bytes > FDS_READER_CACHE_TOTAL_MAX_BYTES) {
        entry_unlink(c, e); /* the value, if any, stays this search's */
        entry_free(e);
        *out = val;
    } else {
        e->val = val;
        e->free_fn = free_fn;
        e->bytes = bytes;
        c->bytes += bytes;
        atomic_fetch_add(&total_bytes, bytes);
        *out = val;
        *owned = false;
    }
    pthread_cond_broadcast(&c->done);
    pthread_mutex_unlock(&c->mu);
    return rc;
}
