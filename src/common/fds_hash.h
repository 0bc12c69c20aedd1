/*
 * fds_hash.h: the hashes and checksums of fieldstore.
 *
 *   fds_fnv1a64   in-memory hash tables (field paths, terms, strings, ids).
 *                 FNV-1a, 64 bits (Fowler, Noll, Vo; offset basis and prime
 *                 from http://www.isthe.com/chongo/tech/comp/fnv/).  Not for
 *                 anything an adversary chooses the keys of at scale.
 *   fds_crc32c    the one checksum of every file fieldstore writes (codec
 *                 blocks, .sidx files): CRC-32C, the Castagnoli polynomial
 *                 0x1EDC6F41 (reflected 0x82F63B78) of RFC 3720 §12.1, the
 *                 one SSE4.2's crc32 instruction computes.
 */
#ifndef FDS_HASH_H
#define FDS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FDS_FNV1A64_OFFSET 14695981039346656037ull
#define FDS_FNV1A64_PRIME 1099511628211ull

/* FNV-1a 64 of p[0..n). */
static inline uint64_t fds_fnv1a64(const void *p, size_t n)
{
    const uint8_t *s = p;
    uint64_t h = FDS_FNV1A64_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * FDS_FNV1A64_PRIME;
    return h;
}

/*
 * CRC-32C of buf[0..len), continuing from `crc` (pass 0 to start; the usual
 * pre- and post-inversion are applied inside, so fds_crc32c(fds_crc32c(0, a),
 * b) is the CRC of a||b).  fds_crc32c(0, "123456789", 9) == 0xE3069283.
 * Uses the SSE4.2 instruction when the CPU has it (checked once), else a
 * slicing-by-8 table.  Thread-safe.
 */
uint32_t fds_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
