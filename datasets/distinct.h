/*
 * distinct.h: a growing set of 64-bit value hashes, to count distinct values
 * (synthlogs --stats, the Heaps' law fit of synthgrow.c) and to tell whether
 * a newly made value was seen before.  Internal to datasets/; header-only.
 *
 * Values are identified by fds__distinct_hash(), a byte-order-independent
 * 64-bit hash (bytes are read as little-endian words whatever the machine),
 * so a run decides the same way everywhere.  Two different strings share a
 * hash with probability ~2^-64 per pair: about 1e-6 over 5M values, which a
 * count can ignore.
 *
 * Memory: 8 bytes per slot, at most half the slots used: <= 16 bytes/value.
 */
#ifndef FDS_DATASETS_DISTINCT_H
#define FDS_DATASETS_DISTINCT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define FDS__DISTINCT_CAP0 1024 /* first number of slots (a power of two) */

typedef struct fds__distinct {
    uint64_t *slot; /* 0 = empty */
    size_t cap, n;  /* slots (power of two), values held */
} fds__distinct;

/* The splitmix64 finalizer (Steele, Lea, Flood, OOPSLA 2014). */
static inline uint64_t fds__distinct_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 64-bit hash of p[0..len), never 0, the same on every byte order. */
static inline uint64_t fds__distinct_hash(const char *p, size_t len)
{
    const unsigned char *s = (const unsigned char *)p;
    uint64_t h = 0x9e3779b97f4a7c15ull * (len + 1);
    while (len >= 8) {
        uint64_t w = 0;
        for (int k = 7; k >= 0; k--) w = w << 8 | s[k];
        h = fds__distinct_mix(h ^ w);
        s += 8;
        len -= 8;
    }
    uint64_t w = 0;
    for (size_t k = len; k > 0; k--) w = w << 8 | s[k - 1];
    h = fds__distinct_mix(h ^ w ^ 0x5bd1e995u);
    return h ? h : 1;
}

static inline void fds__distinct_free(fds__distinct *d)
{
    free(d->slot);
    d->slot = NULL;
    d->cap = d->n = 0;
}

/* Place h (nonzero) in a table with room; returns 1 if added, 0 if there. */
static inline int fds__distinct_put(uint64_t *slot, size_t cap, uint64_t h)
{
    size_t mask = cap - 1, i = (size_t)(h ^ (h >> 32)) & mask;
    while (slot[i]) {
        if (slot[i] == h) return 0;
        i = (i + 1) & mask;
    }
    slot[i] = h;
    return 1;
}

/* Add hash h (nonzero).  Returns 1 if new, 0 if already held, -1 when out
 * of memory (the set is unchanged then). */
static inline int fds__distinct_add(fds__distinct *d, uint64_t h)
{
    if (2 * (d->n + 1) > d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : FDS__DISTINCT_CAP0;
        uint64_t *ns = calloc(ncap, sizeof *ns);
        if (!ns) return -1;
        for (size_t i = 0; i < d->cap; i++)
            if (d->slot[i]) fds__distinct_put(ns, ncap, d->slot[i]);
        free(d->slot);
        d->slot = ns;
        d->cap = ncap;
    }
    int added = fds__distinct_put(d->slot, d->cap, h);
    d->n += (size_t)added;
    return added;
}

#endif
