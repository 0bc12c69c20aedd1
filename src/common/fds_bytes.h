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

#endif
