/*
 * postings.h: the postings block codec of segment index files (public for
 * tests and the fuzz target; layout in sidx_format.h).
 *
 * A block holds up to FDS_POSTINGS_BLOCK (128) doc ids in increasing order
 * with their term frequencies: the doc-id gaps bit-packed in the fewest
 * bits that hold the block's largest, then the frequencies, none when all
 * are 1, else bit-packed the same way (format 8) or as LEB128 varints
 * (format 7 and older, and format 8 blocks where varints are smaller).
 * Lucene uses the same block size (Lucene90PostingsFormat, with PFOR
 * exceptions); the layout is in postings.c and sidx_format.h.
 */
#ifndef FDS_POSTINGS_H
#define FDS_POSTINGS_H

#include <stddef.h>
#include <stdint.h>

/* Worst-case encoded size of a block of n postings, in bytes (the writer
 * packs frequencies only when that is no larger than their varints). */
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
 * Decode n postings from [p, end) written with `base`, in any format from
 * 3 on (varint or bit-packed frequencies, told by the header byte).
 * Checks that every doc id is < max_doc and increasing and every tf >= 1.  Returns the bytes
 * consumed (> 0), or FDS_ECORRUPT (< 0) on truncated or bad input.
 */
long fds_postings_decode_block(const uint8_t *p, const uint8_t *end,
                               unsigned n, uint32_t base, uint32_t max_doc,
                               uint32_t *docs, uint32_t *tfs);

#endif
