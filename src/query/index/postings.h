/*
 * postings.h: the postings block codec of segment index files (public for
 * tests and the fuzz target; layout in sidx_format.h).
 *
 * A block holds up to FDS_POSTINGS_BLOCK (128) doc ids in increasing order
 * with their term frequencies: doc-id gaps then frequencies, each a LEB128
 * varint.  Lucene uses the same block size (with PFOR bit packing); varints
 * keep the decoder short and bounds-checkable, and a block of a frequent term
 * (gaps of 0-2) costs about 2 bytes per posting.
 */
#ifndef FDS_POSTINGS_H
#define FDS_POSTINGS_H

#include <stddef.h>
#include <stdint.h>

/* Worst-case encoded size of a block of n postings, in bytes. */
#define FDS_POSTINGS_BLOCK_BOUND(n) ((size_t)(n) * 10u)

/*
 * Encode n (1..128) postings.  `docs` strictly increasing, docs[0] >= base
 * where base = previous block's last doc + 1 (0 for the first block);
 * tfs[i] >= 1.  `out` holds FDS_POSTINGS_BLOCK_BOUND(n) bytes.
 * Returns the bytes written.
 */
size_t fds_postings_encode_block(const uint32_t *docs, const uint32_t *tfs,
                                 unsigned n, uint32_t base, uint8_t *out);

/*
 * Decode n postings from [p, end) written with `base`.  Checks that every
 * doc id is < max_doc and increasing and every tf >= 1.  Returns the bytes
 * consumed (> 0), or FDS_ECORRUPT (< 0) on truncated or bad input.
 */
long fds_postings_decode_block(const uint8_t *p, const uint8_t *end,
                               unsigned n, uint32_t base, uint32_t max_doc,
                               uint32_t *docs, uint32_t *tfs);

#endif
