/*
 * routing.c: which shard of an index holds a document, as Elasticsearch
 * computes it (OperationRouting / IndexRouting.Unpartitioned, 7.0 on):
 *
 *   hash  = Murmur3HashFunction.hash(routing)       routing defaults to _id
 *   shard = floorMod(hash, routing_num_shards) / (routing_num_shards / shards)
 *
 * Murmur3HashFunction.hash is MurmurHash3 x86_32 with seed 0 over the
 * routing string's UTF-16 code units, each written as two bytes
 * little-endian (Java's String.charAt order).  The hash itself is Debian's
 * libmurmurhash (the reference algorithm); this file turns the UTF-8 bytes
 * we receive into those code units first.  Malformed UTF-8 bytes count as
 * U+FFFD, as Java's decoder replaces them.
 *
 * index.number_of_routing_shards defaults as in
 * MetadataCreateIndexService.calculateNumRoutingShards: the number of
 * shards times the largest power of two that keeps it at most
 * 2^FDS_ROUTING_SHARDS_LOG2 (1024), but at least two, so that a later split
 * by a power of two keeps every document's shard.
 *
 * Also the routing values a segment keeps for its documents written with
 * one (fds__routes: answered as `_routing` by gets), as a catalogue blob.
 */
#include <murmurhash.h>
#include <stdlib.h>
#include <string.h>

#include "fds_bytes.h"
#include "store_int.h"

/* Code units of the routing string on the stack; a longer one (ids are at
 * most FDS_DOC_ID_MAX bytes, routings may be longer) goes to the heap. */
#define ROUTING_STACK_UNITS 1024

/* One code point from s[*i, n), advancing *i; U+FFFD for a malformed one. */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *i)
{
    unsigned char c = s[(*i)++];
    if (c < 0x80)
        return c;
    int more = c >= 0xF0 && c < 0xF5 ? 3 : c >= 0xE0 ? 2 : c >= 0xC2 ? 1 : -1;
    if (more < 0 || c >= 0xF5)
        return 0xFFFD;
    uint32_t cp = c & (0x3F >> more);
    for (int k = 0; k < more; k++) {
        if (*i >= n || (s[*i] & 0xC0) != 0x80)
            return 0xFFFD;
        cp = cp << 6 | (s[(*i)++] & 0x3F);
    }
    static const uint32_t min[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0xFFFD;
    return cp;
}

int32_t fds_routing_hash(const char *routing, size_t len)
{
    uint8_t stack[2 * ROUTING_STACK_UNITS];
    /* at most two code units (4 bytes) per input byte */
    uint8_t *b = len <= ROUTING_STACK_UNITS / 2 ? stack : malloc(4 * len + 1);
    if (!b) /* out of memory: hash the empty string; still stable, but
               such a routing value cannot be told from "" */
        len = 0, b = stack;
    size_t w = 0, i = 0;
    const unsigned char *s = (const unsigned char *)routing;
    while (i < len) {
        uint32_t cp = utf8_next(s, len, &i);
        uint32_t units[2];
        int nu = 1;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            units[0] = 0xD800 | (cp >> 10);
            units[1] = 0xDC00 | (cp & 0x3FF);
            nu = 2;
        } else {
            units[0] = cp;
        }
        for (int k = 0; k < nu; k++) {
            b[w++] = (uint8_t)(units[k] & 0xFF);
            b[w++] = (uint8_t)(units[k] >> 8);
        }
    }
    uint32_t h[1] = {0};
    lmmh_x86_32(w ? (const void *)b : "", (unsigned int)w, 0, h);
    if (b != stack)
        free(b);
    return (int32_t)h[0];
}

uint32_t fds_routing_shard(const char *routing, size_t len, uint32_t shards,
                           uint32_t routing_shards)
{
    if (shards <= 1)
        return 0;
    if (routing_shards < shards || routing_shards % shards)
        routing_shards = fds_routing_shards_default(shards);
    int64_t h = fds_routing_hash(routing, len);
    int64_t m = h % (int64_t)routing_shards; /* Math.floorMod */
    if (m < 0)
        m += routing_shards;
    return (uint32_t)(m / (routing_shards / shards));
}

uint32_t fds_routing_shards_default(uint32_t shards)
{
    if (shards == 0)
        return 1;
    /* numSplits = log2(1024) - ceil(log2(shards)), at least 1 (so that
     * the index can be split once even past 512 shards) */
    int log2_shards = 0;
    while ((1u << log2_shards) < shards)
        log2_shards++;
    int splits = FDS_ROUTING_SHARDS_LOG2 - log2_shards;
    if (splits < 1)
        splits = 1;
    return shards << splits;
}

/* ---- a segment's routing values (fds__routes, store_int.h) ------------- */

#define ROUTE_ENTRY_HEAD 8 /* u32 doc, u32 length */

void fds__routes_free(fds__routes *r)
{
    free(r->blob);
    free(r->docs);
    free(r->offs);
    memset(r, 0, sizeof *r);
}

/* Index r->blob (r->len bytes) into docs/offs; FDS_ECORRUPT when an entry
 * runs past the end, docs do not ascend or a doc is >= max_doc. */
static int routes_index(fds__routes *r, uint32_t max_doc)
{
    uint32_t n = 0;
    for (size_t at = 0; at < r->len; n++) {
        if (r->len - at < ROUTE_ENTRY_HEAD ||
            fds__get_u32(r->blob + at + 4) > r->len - at - ROUTE_ENTRY_HEAD)
            return FDS_ECORRUPT;
        at += ROUTE_ENTRY_HEAD + fds__get_u32(r->blob + at + 4);
    }
    r->docs = malloc((n + 1) * sizeof *r->docs);
    r->offs = malloc((n + 1) * sizeof *r->offs);
    if (!r->docs || !r->offs)
        return FDS_ENOMEM;
    size_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        r->docs[i] = fds__get_u32(r->blob + at);
        if (r->docs[i] >= max_doc || (i && r->docs[i] <= r->docs[i - 1]))
            return FDS_ECORRUPT;
        r->offs[i] = (uint32_t)(at + ROUTE_ENTRY_HEAD);
        at += ROUTE_ENTRY_HEAD + fds__get_u32(r->blob + at + 4);
    }
    r->n = n;
    return 0;
}

int fds__routes_from_docs(fds__routes *r, const fds__bufdoc *docs, size_t n)
{
    fds__routes_free(r);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        if (docs[i].routing)
            len += ROUTE_ENTRY_HEAD + docs[i].routing_len;
    if (!len)
        return 0;
    if (!(r->blob = malloc(len)))
        return FDS_ENOMEM;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (!docs[i].routing)
            continue;
        fds__put_u32(r->blob + at, (uint32_t)i);
        fds__put_u32(r->blob + at + 4, (uint32_t)docs[i].routing_len);
        memcpy(r->blob + at + ROUTE_ENTRY_HEAD, docs[i].routing,
               docs[i].routing_len);
        at += ROUTE_ENTRY_HEAD + docs[i].routing_len;
    }
    r->len = len;
    int rc = routes_index(r, (uint32_t)n);
    if (rc)
        fds__routes_free(r);
    return rc;
}

int fds__routes_parse(fds__routes *r, const void *blob, size_t len,
                      uint32_t max_doc)
{
    fds__routes_free(r);
    if (!len)
        return 0;
    if (!(r->blob = malloc(len)))
        return FDS_ENOMEM;
    memcpy(r->blob, blob, len);
    r->len = len;
    int rc = routes_index(r, max_doc);
    if (rc)
        fds__routes_free(r);
    return rc;
}

const char *fds__routes_get(const fds__routes *r, uint32_t doc, size_t *len)
{
    uint32_t lo = 0, hi = r->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->docs[mid] < doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == r->n || r->docs[lo] != doc) {
        *len = 0;
        return NULL;
    }
    *len = fds__get_u32(r->blob + r->offs[lo] - 4);
    return (const char *)r->blob + r->offs[lo];
}
