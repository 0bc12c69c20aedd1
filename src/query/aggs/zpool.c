/*
 * zpool.c: blocks of zero bytes kept between searches for the per-slot
 * state arrays of a top-level terms over a wide field (aggs_int.h,
 * fds__zpool_take).  Why: a Lens "top values of url" panel fuses a terms
 * on url.keyword with an avg; its slot states are one array over every
 * term of the field (16 bytes a term: 7.8 MB at 1M log lines), while a
 * one-hour window touches a few hundred of them.  Clearing the array for
 * every request was more than half of the request's CPU.  A fold leaves
 * the array zero again (it clears the slots it reads), so the next search
 * over the same field takes it as it is.
 *
 * At most FDS__ZPOOL_BLOCKS blocks of FDS__ZPOOL_BYTES in all, under one
 * mutex; a block is taken by exact size (the same field of the same
 * segments), and one given back past the limits is freed.
 */
#include <pthread.h>

#include "aggs/aggs_int.h"

static pthread_mutex_t zp_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t bytes;
} zp[FDS__ZPOOL_BLOCKS];
static size_t zp_n, zp_bytes;

void *fds__zpool_take(size_t bytes)
{
    pthread_mutex_lock(&zp_mu);
    for (size_t i = 0; i < zp_n; i++)
        if (zp[i].bytes == bytes) {
            void *p = zp[i].p;
            zp[i] = zp[--zp_n];
            zp_bytes -= bytes;
            pthread_mutex_unlock(&zp_mu);
            return p;
        }
    pthread_mutex_unlock(&zp_mu);
    return calloc(1, bytes ? bytes : 1);
}

void fds__zpool_give(void *p, size_t bytes)
{
    if (!p)
        return;
    pthread_mutex_lock(&zp_mu);
    if (zp_n < FDS__ZPOOL_BLOCKS && zp_bytes + bytes <= FDS__ZPOOL_BYTES) {
        zp[zp_n].p = p;
        zp[zp_n++].bytes = bytes;
        zp_bytes += bytes;
        p = NULL;
    }
    pthread_mutex_unlock(&zp_mu);
    free(p);
}
