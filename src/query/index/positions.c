/*
 * positions.c: encode/decode one term's positions in one document (see
 * positions.h and the layout in sidx_format.h).
 */
#include "index/positions.h"

#include <string.h>

#include "query_int.h"

size_t fds_positions_encode(const uint32_t *pos, uint32_t n, uint8_t *out)
{
    size_t o = 0;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        o += fds__varint_put(out + o, pos[i] - prev);
        prev = pos[i];
    }
    return o;
}

long fds_positions_decode(const uint8_t *p, const uint8_t *end, uint32_t n,
                          uint32_t *out)
{
    const uint8_t *s = p;
    uint64_t cur = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g;
        size_t k = fds__varint_get(p, end, &g);
        if (!k)
            return FDS_ECORRUPT;
        p += k;
        cur += g;
        if (cur > FDS_POSITION_MAX)
            return FDS_ECORRUPT;
        if (out)
            out[i] = (uint32_t)cur;
    }
    return (long)(p - s);
}

long fds_positions_skip(const uint8_t *p, const uint8_t *end, uint64_t n)
{
    const uint8_t *s = p;
    while (n) {
        if (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, sizeof w);
            /* the varint ends among them: a 0 or 1 per byte, summed
             * into the top byte by the multiply (at most 8, no carry) */
            uint64_t ends = (~w & 0x8080808080808080ull) >> 7;
            uint64_t c = (ends * 0x0101010101010101ull) >> 56;
            if (c < n || (c == n && !(p[7] & 0x80))) {
                /* the eight bytes end varints before the n-th's end */
                n -= c;
                p += 8;
                continue;
            }
        }
        for (; n && p < end; p++)
            n -= !(*p & 0x80);
        if (n)
            return FDS_ECORRUPT;
    }
    return (long)(p - s);
}
