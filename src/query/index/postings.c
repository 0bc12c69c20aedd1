/*
 * postings.c: encode/decode one postings block (see postings.h and the
 * layout in sidx_format.h).
 *
 * Block = 1 header byte (bits 0-5: gap width w in bits, 0..32; bit 6: every
 * frequency is 1; bit 7: frequencies bit-packed), then the n doc-id gaps
 * bit-packed with w bits each (least significant bit first, ceil(n * w / 8)
 * bytes), then -- unless bit 6 is set -- the n frequencies: with bit 7, a
 * byte tw (1..32) and n values tf - 1 of tw bits each (ceil(n * tw / 8)
 * bytes, LSB first as the gaps); without it, n LEB128 varints.  This is
 * frame-of-reference packing as in Lucene's ForUtil (without the
 * exceptions of PFOR) for both, as Lucene90PostingsWriter packs doc deltas
 * and freqs alike: a block of a frequent term, gaps 0-3, takes 2 bits per
 * doc, keyword fields and most text terms (every tf 1) store no
 * frequencies at all, and the frequencies of a text term's block, most 1
 * or 2, take 1 or 2 bits each where a varint took 8.  The writer packs
 * frequencies of widths 1, 2 and 4 (3 written as 4), which SSE2 unpacks
 * as fast as the varints' one-byte values were widened, unless their
 * varints are smaller (one large frequency among small ones); wider ones
 * keep varints.  The decoder takes any width 1..32.  Segment format 8 and
 * later (sidx_format.h); blocks of older files, bit 7 clear, decode as
 * before.
 */
#include "index/postings.h"

#include <string.h>

#include "query_int.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define HDR_WIDTH 0x3Fu
#define HDR_ALL_TF1 0x40u
#define HDR_TF_PACKED 0x80u

/* Append n values of v[i] - sub, w bits each (LSB first), at out; returns
 * the bytes written, ceil(n * w / 8). */
static size_t pack_bits(const uint32_t *v, unsigned n, uint32_t sub,
                        unsigned w, uint8_t *out)
{
    size_t o = 0;
    uint64_t acc = 0;
    unsigned nb = 0;
    for (unsigned i = 0; i < n && w; i++) {
        acc |= (uint64_t)(v[i] - sub) << nb;
        nb += w;
        while (nb >= 8) {
            out[o++] = (uint8_t)acc;
            acc >>= 8;
            nb -= 8;
        }
    }
    if (nb)
        out[o++] = (uint8_t)acc;
    return o;
}

size_t fds_postings_encode_block(const uint32_t *docs, const uint32_t *tfs,
                                 unsigned n, uint32_t base, uint8_t *out)
{
    uint32_t gaps[FDS_POSTINGS_BLOCK], next = base, maxg = 0, maxt = 0;
    size_t vbytes = 0; /* the frequencies as varints */
    for (unsigned i = 0; i < n; i++) {
        gaps[i] = docs[i] - next;
        maxg |= gaps[i];
        next = docs[i] + 1;
        maxt |= tfs[i] - 1;
        vbytes += 1 + (tfs[i] >= 1u << 7) + (tfs[i] >= 1u << 14) +
                  (tfs[i] >= 1u << 21) + (tfs[i] >= 1u << 28);
    }
    unsigned w = fds__bit_width(maxg), tw = fds__bit_width(maxt);
    bool all1 = tw == 0;
    /* widths 1, 2 and 4 only, which decode with SSE2 (unpack_tf_sse2); a
     * block of wider frequencies keeps varints, whose one-byte values the
     * decoder widens 16 at a time */
    tw = tw == 3 ? 4 : tw;
    bool packed = !all1 && tw <= 4 && 1 + ((size_t)n * tw + 7) / 8 <= vbytes;
    out[0] = (uint8_t)(w | (all1 ? HDR_ALL_TF1 : 0) | (packed ? HDR_TF_PACKED : 0));
    size_t o = 1 + pack_bits(gaps, n, 0, w, out + 1);
    if (packed) {
        out[o++] = (uint8_t)tw;
        o += pack_bits(tfs, n, 1, tw, out + o);
    } else if (!all1) {
        for (unsigned i = 0; i < n; i++)
            o += fds__varint_put(out + o, tfs[i]);
    }
    return o;
}

/* A full block's 128 values of width W (a constant in each caller below,
 * so that the shifts and offsets of the 8 values of every W-byte group fold
 * away): with `gaps`, doc-id gaps summed from `next`, the block's base,
 * into doc ids (returns the last doc + 1); without, frequencies tf - 1
 * (returns `next`).  Reads up to 8 bytes past the 16 * W bytes. */
static inline __attribute__((always_inline)) uint64_t
unpack_full(const uint8_t *p, unsigned W, uint64_t next, uint32_t *out,
            bool gaps)
{
    const uint64_t mask = W == 32 ? 0xFFFFFFFFull : (1ull << W) - 1;
    for (unsigned g = 0; g < FDS_POSTINGS_BLOCK / 8; g++) {
        const uint8_t *q = p + g * W;
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++) {
            uint64_t v;
            __builtin_memcpy(&v, q + ((j * W) >> 3), 8);
            v = (v >> ((j * W) & 7)) & mask;
            if (gaps) {
                uint64_t d = next + v;
                out[g * 8 + j] = (uint32_t)d;
                next = d + 1;
            } else {
                out[g * 8 + j] = (uint32_t)v + 1;
            }
        }
    }
    return next;
}

#define UNPACK_CASE(W) \
    case W: return unpack_full(p, W, next, docs, true);

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

#ifdef __SSE2__
/* The frequencies of the nbytes bytes at p packed in tw = 1, 2 or 4 bits
 * (for 4, nbytes a multiple of 8), into tfs (8 / tw values a byte, up to
 * 128): for 1 and 2, four at a time from one byte: the byte in every
 * 32-bit lane, each lane's field masked out, then moved down by a 16-bit
 * multiply-high (2^(16 - s) for a field at bit s: SSE2 has no per-lane
 * shift), plus 1; for 4, the nibbles of 8 bytes split into 16 bytes and
 * widened.  A scalar unpacking took ~5 instructions a value, 8 times the
 * varints' SSE2 widening. */
static void unpack_tf_sse2(const uint8_t *p, size_t nbytes, unsigned tw,
                           uint32_t *tfs)
{
    const __m128i one = _mm_set1_epi32(1);
    if (tw == 1) {
        const __m128i lo = _mm_set_epi32(8, 4, 2, 1);
        const __m128i hi = _mm_set_epi32(128, 64, 32, 16);
        for (size_t b = 0; b < nbytes; b++) {
            __m128i x = _mm_set1_epi32(p[b]);
            /* a set bit: the lane is all ones (-1), 1 - -1 = 2 */
            __m128i l = _mm_cmpeq_epi32(_mm_and_si128(x, lo), lo);
            __m128i h = _mm_cmpeq_epi32(_mm_and_si128(x, hi), hi);
            _mm_storeu_si128((__m128i *)(tfs + 8 * b), _mm_sub_epi32(one, l));
            _mm_storeu_si128((__m128i *)(tfs + 8 * b + 4), _mm_sub_epi32(one, h));
        }
        return;
    }
    if (tw == 4) { /* 16 values from 8 bytes: nibbles to bytes, widened */
        const __m128i lo4 = _mm_set1_epi8(0x0F), zero = _mm_setzero_si128();
        for (size_t b = 0; b < nbytes; b += 8) {
            __m128i x = _mm_loadl_epi64((const __m128i *)(p + b));
            __m128i v = _mm_unpacklo_epi8(_mm_and_si128(x, lo4),
                                          _mm_and_si128(_mm_srli_epi16(x, 4), lo4));
            __m128i l = _mm_unpacklo_epi8(v, zero), h = _mm_unpackhi_epi8(v, zero);
            uint32_t *t = tfs + 2 * b;
            _mm_storeu_si128((__m128i *)t, _mm_add_epi32(_mm_unpacklo_epi16(l, zero), one));
            _mm_storeu_si128((__m128i *)(t + 4), _mm_add_epi32(_mm_unpackhi_epi16(l, zero), one));
            _mm_storeu_si128((__m128i *)(t + 8), _mm_add_epi32(_mm_unpacklo_epi16(h, zero), one));
            _mm_storeu_si128((__m128i *)(t + 12), _mm_add_epi32(_mm_unpackhi_epi16(h, zero), one));
        }
        return;
    }
    /* tw == 2: lane k holds bits 2k..2k+1 of the byte, shifted up by 2
     * first so that every multiplier 2^(14 - 2k) fits 16 bits */
    const __m128i mask = _mm_set_epi32(3 << 8, 3 << 6, 3 << 4, 3 << 2);
    const __m128i mul = _mm_set_epi32(1 << 8, 1 << 10, 1 << 12, 1 << 14);
    for (size_t b = 0; b < nbytes; b++) {
        __m128i x = _mm_and_si128(_mm_set1_epi32((int)p[b] << 2), mask);
        /* the fields are in the low 16 bits of each lane, the high 16 zero */
        __m128i v = _mm_mulhi_epu16(x, mul);
        _mm_storeu_si128((__m128i *)(tfs + 4 * b), _mm_add_epi32(v, one));
    }
}
#endif

#define UNPACK_TF_CASE(W) \
    case W: unpack_full(p, W, 0, tfs, false); break;

/* Frequencies of a block with HDR_TF_PACKED at p (the width byte, then
 * the values): the bytes they take, or FDS_ECORRUPT.  Full blocks of the
 * usual widths (1-8 bits: frequencies up to 256) unpack with the width a
 * constant; the others one value at a time. */
static long unpack_tfs(const uint8_t *p, const uint8_t *end, unsigned n,
                       uint32_t *tfs)
{
    if (p >= end || *p == 0 || *p > 32)
        return FDS_ECORRUPT;
    unsigned tw = *p++;
    size_t nbytes = ((size_t)n * tw + 7) / 8;
    if ((size_t)(end - p) < nbytes)
        return FDS_ECORRUPT;
    const uint64_t mask = tw == 32 ? 0xFFFFFFFFull : (1ull << tw) - 1;
#ifdef __SSE2__
    if (tw == 1 || tw == 2 || tw == 4) { /* the widths writers write */
        if (n == FDS_POSTINGS_BLOCK) {
            unpack_tf_sse2(p, nbytes, tw, tfs);
        } else { /* whole groups of values from a copy, the first n kept */
            uint8_t in[FDS_POSTINGS_BLOCK / 2] = {0};
            uint32_t all[FDS_POSTINGS_BLOCK];
            memcpy(in, p, nbytes);
            unpack_tf_sse2(in, tw == 4 ? (nbytes + 7) / 8 * 8 : nbytes, tw, all);
            memcpy(tfs, all, (size_t)n * 4);
        }
        return (long)(1 + nbytes);
    }
#endif
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == FDS_POSTINGS_BLOCK && tw <= 8 && (size_t)(end - p) >= nbytes + 8) {
        switch (tw) {
        UNPACK_TF_CASE(1) UNPACK_TF_CASE(2) UNPACK_TF_CASE(3)
        UNPACK_TF_CASE(4) UNPACK_TF_CASE(5) UNPACK_TF_CASE(6)
        UNPACK_TF_CASE(7) UNPACK_TF_CASE(8)
        }
        return (long)(1 + nbytes);
    }
#endif
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if ((size_t)(end - p) >= nbytes + 8 && tw < 32) {
        /* one unaligned 8-byte load per value, as the gaps' fast path */
        for (unsigned i = 0; i < n; i++) {
            uint64_t bit = (uint64_t)i * tw, v;
            __builtin_memcpy(&v, p + (bit >> 3), 8);
            tfs[i] = (uint32_t)((v >> (bit & 7)) & mask) + 1;
        }
        return (long)(1 + nbytes);
    }
#endif
    uint64_t acc = 0;
    unsigned have = 0;
    const uint8_t *q = p;
    for (unsigned i = 0; i < n; i++) {
        while (have < tw) {
            acc |= (uint64_t)*q++ << have;
            have += 8;
        }
        uint64_t t = (acc & mask) + 1;
        acc >>= tw;
        have -= tw;
        if (t > UINT32_MAX)
            return FDS_ECORRUPT;
        tfs[i] = (uint32_t)t;
    }
    return (long)(1 + nbytes);
}

long fds_postings_decode_block(const uint8_t *p, const uint8_t *end,
                               unsigned n, uint32_t base, uint32_t max_doc,
                               uint32_t *docs, uint32_t *tfs)
{
    const uint8_t *s = p;
    if (p >= end || ((*p & HDR_ALL_TF1) && (*p & HDR_TF_PACKED)))
        return FDS_ECORRUPT;
    unsigned w = *p & HDR_WIDTH;
    int all1 = (*p & HDR_ALL_TF1) != 0, packed = (*p & HDR_TF_PACKED) != 0;
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
    if (packed) {
        long k = unpack_tfs(p, end, n, tfs);
        return k < 0 ? k : (long)(p + k - s);
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
