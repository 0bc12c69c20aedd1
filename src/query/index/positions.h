/*
 * positions.h: the term positions codec of segment index files (public for
 * tests and the fuzz target; the file layout is in sidx_format.h).
 *
 * The positions of one term in one document are its tf token positions in
 * increasing order, stored as LEB128 varints: the first position, then the
 * gap to the one before.  A document's positions restart from 0, so a
 * document's bytes can be copied unchanged by a merge.  Lucene90's .pos file
 * packs 128 positions at a time with PFOR; varints keep the decoder short
 * and bounds-checkable (most gaps of a log line fit one byte).
 */
#ifndef FDS_POSITIONS_H
#define FDS_POSITIONS_H

#include <stddef.h>
#include <stdint.h>

/* Worst-case encoded size of n positions, in bytes (5 per LEB128 u32). */
#define FDS_POSITIONS_BOUND(n) ((size_t)(n) * 5u)

/*
 * Encode the n positions pos[0..n) (non-decreasing) of one term in one
 * document into `out` (FDS_POSITIONS_BOUND(n) bytes).  Returns the bytes
 * written.
 */
size_t fds_positions_encode(const uint32_t *pos, uint32_t n, uint8_t *out);

/*
 * Decode n positions from [p, end) into out[0..n) (NULL: skip them).
 * Returns the bytes consumed (> 0 when n > 0), or FDS_ECORRUPT (< 0) when
 * the input is truncated, a varint is malformed or a position passes
 * FDS_POSITION_MAX.
 */
long fds_positions_decode(const uint8_t *p, const uint8_t *end, uint32_t n,
                          uint32_t *out);

/*
 * Skip n encoded positions (of one or several documents) from [p, end)
 * without decoding them: the bytes up to the n-th varint's last byte
 * (one whose high bit is clear), eight at a time where it can.  Returns
 * the bytes passed (0 for n = 0), or FDS_ECORRUPT (< 0) when [p, end)
 * holds fewer than n varints.  The skipped values are not checked
 * (fds_positions_decode checks the ones a query reads).
 */
long fds_positions_skip(const uint8_t *p, const uint8_t *end, uint64_t n);

/* Largest token position: Lucene's IndexWriter.MAX_POSITION
 * (Integer.MAX_VALUE - 128); a document past it is refused at indexing. */
#define FDS_POSITION_MAX 2147483519u

#endif
