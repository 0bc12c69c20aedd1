/*
 * fuzz_postings: fuzz target for the postings block decoder
 * (fds_postings_decode_block, index/postings.h): doc-id gaps bit-packed,
 * frequencies as varints (format 7 and older) or bit-packed (format 8).
 * Input: byte 0 the docs in the block - 1 (n = 1..128), bytes 1-4 the
 * block's base doc (little-endian), then the block and whatever follows it
 * (a term's next blocks, which the full-block unpacking may read into by
 * up to 8 bytes; the bound it is given is the input's end).  Whatever decodes must hold doc
 * ids increasing from the base and under max_doc, and frequencies >= 1,
 * and encoding what decoded then decoding that again gives the same
 * postings.
 * Run by the shared driver (tests/fuzz/fuzz_driver.h):
 *   fuzz_postings [SECONDS] [DIR...]     the plain driver (ctest)
 *   fuzz_postings --write-seeds DIR      its seed files, for tests/fuzz/corpus
 */
#include <stdlib.h>
#include <string.h>

#define FDS_FUZZ_MAX_INPUT 4096
#define FDS_FUZZ_SEED_EXT ".pst"
#include "../../fuzz/fuzz_driver.h"
#include "index/postings.h"

#define FZ_HDR 5u
#define FZ_MAX_DOC 0xFFFFFFF0u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < FZ_HDR)
        return 0;
    unsigned n = 1u + (data[0] & 127u);
    uint32_t base = (uint32_t)data[1] | (uint32_t)data[2] << 8 |
                    (uint32_t)data[3] << 16 | (uint32_t)data[4] << 24;
    size_t len = size - FZ_HDR;
    const uint8_t *p = data + FZ_HDR, *end = data + size;
    uint32_t docs[128], tfs[128], d2[128], t2[128];
    uint8_t buf[FDS_POSTINGS_BLOCK_BOUND(128) + 8];
    long k = fds_postings_decode_block(p, end, n, base, FZ_MAX_DOC, docs, tfs);
    if (k < 0)
        return 0;
    if ((size_t)k > len)
        abort();
    for (unsigned i = 0; i < n; i++)
        if (docs[i] < base || docs[i] >= FZ_MAX_DOC || tfs[i] == 0 ||
            (i && docs[i] <= docs[i - 1]))
            abort();
    size_t m = fds_postings_encode_block(docs, tfs, n, base, buf);
    if (m > FDS_POSTINGS_BLOCK_BOUND(n))
        abort();
    if (fds_postings_decode_block(buf, buf + m, n, base, FZ_MAX_DOC, d2, t2) !=
            (long)m ||
        memcmp(docs, d2, n * 4) || memcmp(tfs, t2, n * 4))
        abort();
    return 0;
}

#ifndef FDS_LIBFUZZER
/* Seeds: full and partial blocks of every frequency layout (all 1,
 * varints, packed at a few widths), gaps of a few widths, each after the
 * five header bytes and with 8 to 10 bytes after the block. */
int fds_fuzz_builtin_seeds(fds_fuzz_seeds *s)
{
    uint32_t docs[128], tfs[128];
    uint8_t in[FZ_HDR + FDS_POSTINGS_BLOCK_BOUND(128) + 16];
    static const unsigned ns[] = {1, 7, 128};
    static const uint32_t tmax[] = {1, 2, 9, 300, 100000};
    static const uint32_t gmax[] = {0, 3, 1000};
    uint64_t r = 0x9E3779B97F4A7C15ull;
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t c = 0; c < 3; c++) {
                unsigned n = ns[a];
                uint32_t base = (uint32_t)(c * 77), d = base;
                for (unsigned i = 0; i < n; i++) {
                    r = r * 6364136223846793005ull + 1442695040888963407ull;
                    docs[i] = d + (uint32_t)((r >> 33) % (gmax[c] + 1));
                    d = docs[i] + 1;
                    /* one large frequency in the last layout: varints */
                    tfs[i] = b == 4 ? (i == n / 2 ? tmax[b] : 1 + (i % 2))
                                    : 1 + (uint32_t)((r >> 20) % tmax[b]);
                }
                in[0] = (uint8_t)(n - 1);
                memcpy(in + 1, &base, 4);
                size_t m = fds_postings_encode_block(docs, tfs, n, base, in + FZ_HDR);
                memset(in + FZ_HDR + m, 0xA5, 8 + c);
                int rc = fds_fuzz_seed_add(s, in, FZ_HDR + m + 8 + c);
                if (rc)
                    return rc;
            }
    return 0;
}
#endif
