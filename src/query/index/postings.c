/*
 * postings.c: encode/decode one postings block (see postings.h and the
 * layout in sidx_format.h).
 *
 * Block = 1 header byte (bits 0-5: gap width w in bits, 0..32; bit 6: every
 * frequency is 1), then the n doc-id gaps bit-packed with w bits each (least
 * significant bit first, ceil(n * w / 8) bytes), then -- unless bit 6 is
 * set -- n frequencies as LEB128 varints.  This is frame-of-reference
 * packing as in Lucene's ForUtil (without the exceptions of PFOR): a block
 * of a frequent term, gaps 0-3, takes 2 bits per doc, and keyword fields and
 * most text terms (every tf 1) store no frequencies at all.
 */
#include "index/postings.h"

#include "query_int.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define HDR_WIDTH 0x3Fu
#define HDR_ALL_TF1 0x40u

size_t fds_postings_encode_block(const uint32_t *docs, const uint32_t *tfs,
                                 unsigned n, uint32_t base, uint8_t *out)
{
    uint32_t next = base, maxg = 0;
    int all1 = 1;
    for (unsigned i = 0; i < n; i++) {
        uint32_t g = docs[i] - next;
        maxg |= g;
        next = docs[i] + 1;
        all1 &= tfs[i] == 1;
    }
    unsigned w = 0;
    while (w < 32 && (maxg >> w))
        w++;
    out[0] = (uint8_t)(w | (all1 ? HDR_ALL_TF1 : 0));
    size_t o = 1;
    uint64_t acc = 0;
    unsigned nb = 0;
    next = base;
    for (unsigned i = 0; i < n && w; i++) {
        acc |= (uint64_t)(docs[i] - next) << nb;
        next = docs[i] + 1;
        nb += w;
        while (nb >= 8) {
            out[o++] = (uint8_t)acc;
            acc >>= 8;
            nb -= 8;
        }
    }
    if (nb)
        out[o++] = (uint8_t)acc;
    if (!all1)
        for (unsigned i = 0; i < n; i++)
            o += fds__varint_put(out + o, tfs[i]);
    return o;
}

/* The doc ids of a full block of gaps of width W (a constant in each
 * caller below, so that the shifts and offsets of the 8 values of every
 * W-byte group fold away); `next` is the block's base.  Reads up to 8
 * bytes past the 16 * W bytes of gaps.  Returns the last doc + 1. */
static inline __attribute__((always_inline)) uint64_t
unpack_full(const uint8_t *p, unsigned W, uint64_t next, uint32_t *docs)
{
    const uint64_t mask = W == 32 ? 0xFFFFFFFFull : (1ull << W) - 1;
    for (unsigned g = 0; g < FDS_POSTINGS_BLOCK / 8; g++) {
        const uint8_t *q = p + g * W;
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++) {
            uint64_t v;
            __builtin_memcpy(&v, q + ((j * W) >> 3), 8);
            uint64_t d = next + ((v >> ((j * W) & 7)) & mask);
            docs[g * 8 + j] = (uint32_t)d;
            next = d + 1;
        }
    }
    return next;
}

#define UNPACK_CASE(W) \
    case W: return unpack_full(p, W, next, docs);

/* unpack_full for a width w of 1..32 known only at run time. */
static uint64_t unpack_full_w(const uint8_t *p, unsigned w, uint64_t next,
                              uint32_t *docs)
{
    switch (w) {
    UNPACK_CASE(1) UNPACK_CASE(2) UNPACK_CASE(3) UNPACK_CASE(4)
    UNPACK_CASE(5) UNPACK_CASE(6) UNPACK_CASE(7) UNPACK_CASE(8)
    UNPACK_CASE(9) UNPACK_CASE(10) UNPACK_CASE(11) UNPACK_CASE(12)
    UNPACK_CASE(13) UNPACK_CASE(14) UNPACK_CASE(15) UNPACK_CASE(16)
    UNPACK_CASE(17) UNPACK_CASE(18) UNPACK_CASE(19) UNPACK_CASE(20)
    UNPACK_CASE(21) UNPACK_CASE(22) UNPACK_CASE(23) UNPACK_CASE(24)
    UNPACK_CASE(25) UNPACK_CASE(26) UNPACK_CASE(27) UNPACK_CASE(28)
    UNPACK_CASE(29) UNPACK_CASE(30) UNPACK_CASE(31) UNPACK_CASE(32)
    default: /* w == 0: consecutive docs */
        for (unsigned i = 0; i < FDS_POSTINGS_BLOCK; i++)
            docs[i] = (uint32_t)(next + i);
        return next + FDS_POSTINGS_BLOCK;
    }
}

long fds_postings_decode_block(const uint8_t *p, const uint8_t *end,
                               unsigned n, uint32_t base, uint32_t max_doc,
                               uint32_t *docs, uint32_t *tfs)
{
    const uint8_t *s = p;
    if (p >= end || (*p & ~(HDR_WIDTH | HDR_ALL_TF1)))
        return FDS_ECORRUPT;
    unsigned w = *p & HDR_WIDTH;
    int all1 = (*p & HDR_ALL_TF1) != 0;
    p++;
    if (w > 32)
        return FDS_ECORRUPT;
    size_t nbytes = ((size_t)n * w + 7) / 8;
    if ((size_t)(end - p) < nbytes)
        return FDS_ECORRUPT;
    uint64_t next = base, acc = 0, mask = w == 32 ? 0xFFFFFFFFull
                                                   : (1ull << w) - 1;
    unsigned have = 0;
    const uint8_t *q = p;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == FDS_POSTINGS_BLOCK && (size_t)(end - p) >= nbytes + 8) {
        /* a full block (all but a term's last): widths as constants */
        next = unpack_full_w(p, w, next, docs);
        if (next > max_doc)
            return FDS_ECORRUPT;
        goto freqs;
    }
#endif
    if ((size_t)(end - p) >= nbytes + 8) {
        /* fast path: one unaligned 8-byte load per value (w <= 32 and a
         * shift <= 7 fit in 64 bits); the 8 bytes past the packed gaps are
         * inside [p, end).  The gaps are unpacked first (no dependency
         * between values), then summed; ids only grow, so the last one
         * bounds them all */
        for (unsigned i = 0; i < n; i++) {
            uint64_t bit = (uint64_t)i * w, v;
            __builtin_memcpy(&v, p + (bit >> 3), 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            v = __builtin_bswap64(v);
#endif
            docs[i] = (uint32_t)((v >> (bit & 7)) & mask);
        }
        for (unsigned i = 0; i < n; i++) {
            uint64_t d = next + docs[i];
            docs[i] = (uint32_t)d;
            next = d + 1;
        }
        if (n && next > max_doc)
            return FDS_ECORRUPT;
        goto freqs;
    }
    for (unsigned i = 0; i < n; i++) {
        while (have < w) {
            acc |= (uint64_t)*q++ << have;
            have += 8;
        }
        uint64_t d = next + (acc & mask);
        acc = w == 64 ? 0 : acc >> w;
        have -= w;
        if (d >= max_doc)
            return FDS_ECORRUPT;
        docs[i] = (uint32_t)d;
        next = d + 1;
    }
freqs:
    p += nbytes;
    if (all1) {
        if (n == FDS_POSTINGS_BLOCK) /* a constant count: vectorized */
            for (unsigned i = 0; i < FDS_POSTINGS_BLOCK; i++)
                tfs[i] = 1;
        else
            for (unsigned i = 0; i < n; i++)
                tfs[i] = 1;
        return (long)(p - s);
    }
    unsigned i = 0;
#ifdef __SSE2__
    /* 16 one-byte frequencies at a time (no continuation bit, no 0),
     * widened to 32 bits in the vector: the byte-by-byte copy below was a
     * third of a block's decoding on the whole-url bodies (perf, 1M) */
    const __m128i zero = _mm_setzero_si128();
    while (i + 16 <= n && end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        if (_mm_movemask_epi8(v) | _mm_movemask_epi8(_mm_cmpeq_epi8(v, zero)))
            break; /* a varint, or a 0 */
        __m128i l = _mm_unpacklo_epi8(v, zero), h = _mm_unpackhi_epi8(v, zero);
        _mm_storeu_si128((__m128i *)(tfs + i), _mm_unpacklo_epi16(l, zero));
        _mm_storeu_si128((__m128i *)(tfs + i + 4), _mm_unpackhi_epi16(l, zero));
        _mm_storeu_si128((__m128i *)(tfs + i + 8), _mm_unpacklo_epi16(h, zero));
        _mm_storeu_si128((__m128i *)(tfs + i + 12), _mm_unpackhi_epi16(h, zero));
        i += 16;
        p += 16;
    }
#endif
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* 8 one-byte frequencies at a time (no continuation bit, no 0) */
    while (i + 8 <= n && end - p >= 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        const uint64_t lo7 = 0x0101010101010101ull, hi = lo7 << 7;
        if ((v & hi) || ((v - lo7) & ~v & hi)) /* a varint, or a 0 */
            break;
        for (unsigned k = 0; k < 8; k++)
            tfs[i + k] = (uint32_t)(v >> (8 * k)) & 0xFF;
        i += 8;
        p += 8;
    }
#endif
    for (; i < n; i++) {
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
