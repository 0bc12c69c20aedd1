/*
 * postings.c: encode/decode one postings block (see postings.h and the
 * layout in sidx_format.h).
 */
#include "postings.h"

#include "query_int.h"

size_t fds_postings_encode_block(const uint32_t *docs, const uint32_t *tfs,
                                 unsigned n, uint32_t base, uint8_t *out)
{
    size_t o = 0;
    uint32_t next = base;
    for (unsigned i = 0; i < n; i++) {
        o += fds__varint_put(out + o, docs[i] - next);
        next = docs[i] + 1;
    }
    for (unsigned i = 0; i < n; i++)
        o += fds__varint_put(out + o, tfs[i]);
    return o;
}

long fds_postings_decode_block(const uint8_t *p, const uint8_t *end,
                               unsigned n, uint32_t base, uint32_t max_doc,
                               uint32_t *docs, uint32_t *tfs)
{
    const uint8_t *s = p;
    uint64_t next = base;
    for (unsigned i = 0; i < n; i++) {
        uint32_t g;
        /* fast path: one-byte gap */
        if (p < end && *p < 0x80) {
            g = *p++;
        } else {
            size_t k = fds__varint_get(p, end, &g);
            if (!k)
                return FDS_ECORRUPT;
            p += k;
        }
        uint64_t d = next + g;
        if (d >= max_doc)
            return FDS_ECORRUPT;
        docs[i] = (uint32_t)d;
        next = d + 1;
    }
    for (unsigned i = 0; i < n; i++) {
        uint32_t t;
        if (p < end && *p < 0x80) {
            t = *p++;
        } else {
            size_t k = fds__varint_get(p, end, &t);
            if (!k)
                return FDS_ECORRUPT;
            p += k;
        }
        if (t == 0)
            return FDS_ECORRUPT;
        tfs[i] = t;
    }
    return (long)(p - s);
}
