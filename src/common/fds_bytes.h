/*
 * fds_bytes.h: little-endian integer access and LEB128 varints for the
 * on-disk formats (every fieldstore file is little-endian).
 */
#ifndef FDS_BYTES_H
#define FDS_BYTES_H

#include <stddef.h>
#include <stdint.h>

static inline void fds__put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void fds__put_u64(uint8_t *p, uint64_t v)
{
    fds__put_u32(p, (uint32_t)v);
    fds__put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t fds__get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t fds__get_u64(const uint8_t *p)
{
    return (uint64_t)fds__get_u32(p) | (uint64_t)fds__get_u32(p + 4) << 32;
}

/* LEB128: 7 bits a byte, low first.  Writes at most 5 bytes to `p`;
 * returns the count. */
static inline size_t fds__varint_put(uint8_t *p, uint32_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Read one varint from [p, end) into *v; returns the bytes read, or 0 when
 * it is truncated or does not fit 32 bits (damaged data). */
static inline size_t fds__varint_get(const uint8_t *p, const uint8_t *end,
                                     uint32_t *v)
{
    uint32_t r = 0;
    const uint8_t *s = p;
    for (unsigned shift = 0; shift <= 28 && p < end; shift += 7) {
        uint8_t b = *p++;
        if (shift == 28 && b > 0x0f)
            return 0;
        r |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return (size_t)(p - s);
        }
    }
    return 0;
}

#endif
