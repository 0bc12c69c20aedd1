/*
 * sidx_format.h: byte layout of a segment index file (".sidx").
 *
 * One file per segment, written once by fds_sidx_writer_write() and mapped
 * read-only by fds_sidx_open().  All integers little-endian.  The header,
 * field descriptors, term dictionaries, norms, columns and the _id table
 * start at multiples of 8 bytes; postings and term strings are packed
 * without padding.  Offsets are absolute file offsets unless said otherwise.
 * Bit streams are LSB first: value i of width w occupies bits [i*w, i*w+w)
 * of the stream, bit k being bit k%8 of byte k/8.
 *
 * Version 2 (this one) shrank the real 10k-line nginx sample from 5.27 MB
 * (version 1: 32-byte term entries, a skip entry and a block for every
 * term, varint postings, u32 ordinals and i64 columns, term strings stored
 * once per field) to 2.18 MB; bench/query/sidx_breakdown prints the bytes
 * per part and field.  Version 3 changed only the footer checksum, from
 * CRC-32 (IEEE) to CRC-32C, the checksum of the codec blocks.  Version 4
 * added the competitive impacts of a block (below); a version 3 file reads
 * as one whose blocks have none (its skip entries hold 0 there).  Version 5
 * added term positions for text fields (the positions directory, below);
 * the postings are unchanged, so a version 3 or 4 file reads as one whose
 * fields have no positions (header word 48 is 0 there), and a phrase query
 * on such a field is refused.  Version 6 keeps every impact pair of a
 * block: version 5 merged runs of neighbours past 16 pairs into one
 * coarser pair, which on a url term with frequencies from 1 to 30 put a
 * block's bound up to 5.8% above its best doc's score (the largest gap
 * among the first 40 blocks a search entered), and a one-term search at
 * 10M docs score 170,903 postings for 72 entries into its page.  A
 * version 3 to 5 file reads as before (its merged pairs still bound their
 * blocks).  Version 7 added value ids to single-valued text fields (flag
 * 64, below); a version 3 to 6 file reads as one whose fields have none.
 * Version 8 bit-packs the term frequencies of a postings block (header bit
 * 7, below) as its doc-id gaps are, where varints took a byte each: on 1M
 * synthlogs documents (growing vocabularies, the nginx mapping) the
 * postings (skip entries, impacts, blocks) shrink from 57.93 to 48.31
 * B/doc (bench/query/index_size.sh).  A block of a version 3 to 7 file has bit 7
 * clear and decodes as before; a merge rewrites it packed.  Version 8
 * also packs a double column whose values are decimals of a few digits
 * (m / 10^k, below) where it took 8 raw bytes a doc: request_time and
 * upstream_response_time (float, 3 decimals) take 1.75 and 1.50 B/doc
 * there instead of 8.12.  A version 3 to 7 double column is raw (num_bits
 * 64), as before.
 *
 * Header (64 bytes)
 *   0  u8[8] magic "FDSSIDX1"
 *   8  u32   format version (FDS_SIDX_VERSION = 8; 3 to 7 are read too)
 *  12  u32   max_doc
 *  16  u32   nfields
 *  20  u32   header length (64)
 *  24  u64   fields_off: nfields field descriptors, sorted by name
 *  32  u64   ids_off: the _id table
 *  40  u64   file_len (whole file, footer included)
 *  48  u64   pos_dir_off: the positions directory, 0 when no field has
 *            positions (always 0 before version 5)
 *  56  u64   0 (reserved)
 *
 * Field descriptor (64 bytes)
 *   0  u64   name_off (name_len bytes of UTF-8, the dotted path)
 *   8  u32   name_len
 *  12  u8    kind (fds_ftype: TEXT, KEYWORD, LONG, DOUBLE, DATE, BOOLEAN)
 *  13  u8    flags: 1 = has norms, 2 = numeric column, 4 = ordinal column,
 *            8 = numeric column of a field with several values in a doc,
 *            16 = positions (a text field indexed with index_options
 *            "positions", Elasticsearch's default; version 5),
 *            32 = a text field no doc gave several values (version 5
 *            files of later writers; FDS_SIDX_F_SINGLE),
 *            64 = a text field with value ids (version 7; FDS_SIDX_F_VALUES)
 *  14  u8    KEYWORD: ord_bits, bits per packed ordinal (0..32); TEXT with
 *            flag 64: bits per packed value id (0..32); else 0
 *  15  u8    numeric column: num_bits, bits per packed integer (0..56), or
 *            64 (FDS_SIDX_NUM_RAW) for raw 8-byte values (DOUBLE always);
 *            else 0
 *  16  u32   doc_count: docs with at least one term (BM25 docCount)
 *  20  u32   nterms
 *  24  u64   sum_ttf: total term frequency over the field (BM25 avgdl)
 *  32  u64   terms_off: the term dictionary (below), sorted by bytes
 *  40  u64   0: term strings are addressed by absolute offset
 *  48  u64   norms_off: max_doc bytes, Lucene SmallFloat.intToByte4 of the
 *            field length in tokens (0 when the field has no norms)
 *  56  u64   col_off: presence bitset (ceil(max_doc/64) u64 words, bit set =
 *            the doc has a value), then the column:
 *            KEYWORD: max_doc values of ord_bits bits, ordinal + 1 of the
 *              doc's smallest term (0 = none), then 8 zero bytes
 *              (FDS_SIDX_ORD_BYTES);
 *            LONG, DATE, BOOLEAN with num_bits <= 56: i64 min, then max_doc
 *              values of num_bits bits, value - min (0 for docs without a
 *              value), then 8 zero bytes;
 *            DOUBLE with num_bits <= 56 (version 8, sidx_dcol.c): i64 min,
 *              u64 scale (bits 0-3: digits k, 0..FDS_SIDX_DCOL_DIGITS;
 *              FDS_SIDX_DCOL_FLOAT: round to float32; no other bit), then
 *              max_doc values of num_bits bits, m - min, then 8 zero
 *              bytes; a doc's value is m / 10^k (a double division), or
 *              with FDS_SIDX_DCOL_FLOAT (double)(float)(m * (1 / 10^k))
 *              (1 / 10^k the double nearest): the writer packs a column
 *              only when that gives every value back to the bit;
 *            TEXT with flag 64: u64 vals_off, the offset of the value
 *              table (below), then max_doc values of ord_bits bits, the
 *              value id + 1 of the doc's value (0 = none), then 8 zero
 *              bytes;
 *            TEXT without it: nothing after the bitset;
 *            otherwise (num_bits 64, FDS_SIDX_NUM_RAW; every DOUBLE
 *              before version 8) max_doc i64 (or f64 bit patterns for
 *              DOUBLE).
 *
 * Value table of a text field (at the vals_off of its column; version 7,
 * flag 64, set only with flag 32, and only when a doc of the segment has a
 * value of more than FDS_SIDX_VALUE_MIN_BYTES bytes: a "long" value).  A
 * long value has a value id, its rank among the table's values sorted by
 * bytes, when the long values repeat (FDS_SIDX_VALS_DENSE: no more
 * distinct ones than half the docs holding one; the table is then
 * complete, flag FDS_SIDX_VALS_COMPLETE), else when another doc of the
 * segment holds it too.  Two docs of one id hold the same string, so they
 * have the same terms, frequencies and norm, and score alike on the field
 * to the bit; the MaxScore pass memoizes by it where the keyword
 * multi-field, past its ignore_above, has no ordinal (exec/maxscore.c).  A
 * field of mostly distinct long values (messages) stores only the
 * repeated ones: the others would cost their bytes and never be looked up
 * twice.
 *   0  u32   nvals (0 when no value has an id)
 *   4  u32   flags: FDS_SIDX_VALS_COMPLETE, every long value has an id
 *   8  u64   offsets[nvals + 1], relative to the end of this array, of
 *            each value's bytes (offsets[nvals]: their total)
 *      then the values' bytes, increasing in byte order.
 * A merge reads only the inputs' tables, so a doc of a long value keeps an
 * id only when its input gave it one; when every input's table is
 * complete (or the input has no long value) the merge writes the table
 * the writer would for the same live docs.
 *
 * Term dictionary at terms_off (FDS_SIDX_DICT_BYTES(nterms, W))
 *   0  u8[4] widths in bits: w_so, w_sl, w_df, w_ptr (each <= 40)
 *   4  u32   0
 *   8  nterms entries of W = w_so + w_sl + w_df + w_ptr bits, in that order:
 *        str_off  absolute offset of the term's bytes (one pool per file:
 *                 each distinct string is stored once, so a text field and
 *                 its keyword sub-field share their common terms)
 *        str_len  bytes of the term
 *        df - 1   doc_freq minus one
 *        ptr      bit 0 set: an inline singleton, doc_freq 1 with term
 *                 frequency 1, and ptr >> 1 is the doc (no skip entry, no
 *                 block); bit 0 clear: ptr >> 1 is postings_off
 *      then 8 zero bytes.  Entries are fixed width, so a term is found by
 *      binary search on its ordinal as with fixed-size records.
 *
 * Postings of a term at postings_off (nblocks = ceil(doc_freq / 128))
 *   nblocks skip entries (16 bytes each):
 *     0 u32 last doc id of the block
 *     4 u32 byte offset of the block, relative to the end of the skip list
 *     8 u32 max term frequency in the block
 *    12 u8  min norm byte in the block (1 for fields without norms)
 *    13 u8  docs in the block - 1 (127 for every block but the last)
 *    14 u16 ilen: bytes of the block's impacts (0: none, FDS_SIDX_IMPACTS_BYTES_MAX at most)
 *   at each block's offset, first its impacts (ilen bytes), then the block.
 *   Impacts (Lucene's competitive impacts, Lucene90ScoreSkipReader): the
 *   (norm byte, term frequency) pairs of the block's docs that no other
 *   doc's pair dominates (higher or equal tf at a lower or equal norm),
 *   each a u8 norm then the tf as a LEB128 varint, norms increasing (tfs
 *   increase too), at most one per doc (before version 6, beyond 16
 *   pairs, runs of neighbours were merged into (first norm, last tf),
 *   which still dominates them).  A
 *   BM25 score is increasing in tf and decreasing in the norm, so the
 *   largest score over the pairs bounds every score in the block, for any
 *   collection statistics; it is tighter than the (max tf, min norm) pair
 *   when the docs with many occurrences are the long ones.  Omitted (ilen
 *   0) when one pair dominates the block: it is (max tf, min norm).
 *   blocks (postings.c): a header byte (bits 0-5: gap width w; bit 6: every
 *   term frequency is 1; bit 7: frequencies bit-packed, version 8; bits 6
 *   and 7 never both set), the n doc-id gaps bit-packed with w bits each
 *   (gap = doc - (previous doc + 1); the previous doc of a block's first doc
 *   is the last doc of the block before, -1 for the first block), then,
 *   unless bit 6 is set, the n term frequencies: with bit 7, a u8 tw
 *   (1..32) then n values tf - 1 of tw bits each (ceil(n * tw / 8) bytes,
 *   LSB first); without it, n LEB128 varints (version 8 writers pack
 *   widths 1, 2 and 4 only, 3 as 4, and when that is no larger than the
 *   varints; readers take any width).
 *   The per-block (max tf, min norm) pair bounds every BM25 score in the
 *   block, which is what block-max WAND needs to skip a block.
 *
 * Positions (version 5), kept apart from the postings so that a query
 * without phrases never touches them, as Lucene keeps .pos apart from .doc:
 *   the directory at pos_dir_off: nfields u64, the offset of field i's
 *     positions table, 0 for a field without positions (flag 16 clear);
 *   a field's positions table (FDS_SIDX_POS_TABLE_BYTES(nterms, w)): u8 w,
 *     bits per entry (<= FDS_SIDX_DICT_WMAX), 7 zero bytes, then nterms
 *     entries of w bits (LSB first, as the term dictionary), the absolute
 *     offset of term ordinal i's positions, then 8 zero bytes;
 *   a term's positions: nblocks - 1 u32 offsets of the positions of the
 *     term's postings blocks 1.. (relative to the end of these offsets;
 *     block 0's start there), then, for every posting in doc order, its tf
 *     positions (positions.h: LEB128 varints, the first position then the
 *     gaps).  A singleton term (inline in the dictionary) has one block.
 *   Positions follow the analyzer: token i of a value is at the position of
 *   the one before plus 1, and each value of an array after the first
 *   starts the field's position_increment_gap (mapping; 100 by default,
 *   FDS_POSITION_INCREMENT_GAP) positions further, as Lucene's
 *   IndexingChain adds Analyzer.getPositionIncrementGap between values.
 *   The writer puts a term's positions right after its postings (or where
 *   they would be, for a singleton).
 *
 * _id table at ids_off
 *   u32 offsets[max_doc + 1] (relative to the id bytes), u32 by_id[max_doc]
 *   (doc ids ordered by id bytes, for binary search), padding to 8, id bytes.
 *
 * Footer (8 bytes, at file_len - 8)
 *   0  u32   CRC-32C (Castagnoli, fds_crc32c in src/common/fds_hash.h;
 *            the checksum of every fieldstore file) of bytes
 *            [0, file_len - 8)
 *   4  u8[4] "FDSE"
 */
#ifndef FDS_SIDX_FORMAT_H
#define FDS_SIDX_FORMAT_H

#include <stdint.h>

#include "fds_hash.h" /* fds_crc32c: the footer checksum */

#define FDS_SIDX_MAGIC "FDSSIDX1"
#define FDS_SIDX_END_MAGIC "FDSE"
#define FDS_SIDX_VERSION 8u
#define FDS_SIDX_VERSION_TF_PACKED 8u /* first version with packed tfs */
#define FDS_SIDX_VERSION_VALUES 7u /* first version with value ids */
#define FDS_SIDX_VERSION_POS 5u /* first version with positions */
#define FDS_SIDX_VERSION_MIN 3u  /* oldest version fds_sidx_open reads */
/* Most bytes of a block's impacts: a pair per doc at most, a u8 norm and a
 * varint tf of at most 5 bytes each. */
#define FDS_SIDX_IMPACTS_BYTES_MAX (128u * 6u) /* FDS_POSTINGS_BLOCK docs */
#define FDS_SIDX_HEADER_LEN 64u
#define FDS_SIDX_FIELD_LEN 64u
#define FDS_SIDX_DICT_HDR 8u
#define FDS_SIDX_DICT_WMAX 40u
/* Bytes of a term dictionary of n entries of W bits (header, entries,
 * 8 bytes of padding). */
#define FDS_SIDX_DICT_BYTES(n, W) \
    (FDS_SIDX_DICT_HDR + ((uint64_t)(n) * (W) + 7) / 8 + 8)
#define FDS_SIDX_SKIP_LEN 16u
#define FDS_SIDX_FOOTER_LEN 8u

#define FDS_SIDX_F_NORMS 1u
#define FDS_SIDX_F_NUMCOL 2u
#define FDS_SIDX_F_ORDCOL 4u
/* numeric column: some doc gave the field more than one value (the column
 * holds its first); set by the writer, kept by merges when any input has
 * it.  Aggregations refuse such a column rather than count one value. */
#define FDS_SIDX_F_MULTI 8u
#define FDS_SIDX_F_POS 16u /* text field with positions (version 5) */
/* text field: no doc gave it more than one value, and no multi-field of
 * any field took a value except through its parent (a dotted key naming a
 * multi-field, a copy_to into one), so a doc whose keyword
 * multi-field has an ordinal holds exactly that string here, and docs of
 * one ordinal score alike on this field (the MaxScore pass memoizes by
 * it, exec/maxscore.c).  Set by the writer, kept by merges only when every
 * input has it.  An addition to version 5: a file without it (older
 * writers) only goes without the memo, and older readers ignore it. */
#define FDS_SIDX_F_SINGLE 32u
/* text field (with FDS_SIDX_F_SINGLE): a value table at vals_off and a
 * value id column after the presence bitset (version 7) */
#define FDS_SIDX_F_VALUES 64u
/* Values of at most this many bytes have no value id: a keyword
 * multi-field of Elasticsearch's dynamic mapping (ignore_above 256
 * characters, so at most 256 bytes of ASCII) orders them already. */
#define FDS_SIDX_VALUE_MIN_BYTES 256u
#define FDS_SIDX_VALS_HDR 8u
#define FDS_SIDX_VALS_COMPLETE 1u
/* Do `distinct` long values over `docs` docs repeat enough for every one
 * to get a value id (the table then holds a string per two docs at
 * most)? */
#define FDS_SIDX_VALS_DENSE(distinct, docs) \
    ((uint64_t)(distinct) * 2 <= (uint64_t)(docs))
#define FDS_SIDX_POS_HDR 8u
/* Bytes of a positions table of n entries of w bits (header, entries, 8
 * bytes of padding). */
#define FDS_SIDX_POS_TABLE_BYTES(n, w) \
    (FDS_SIDX_POS_HDR + ((uint64_t)(n) * (w) + 7) / 8 + 8)
#define FDS_SIDX_NO_ORD 0xFFFFFFFFu
#define FDS_SIDX_NUM_RAW 64u      /* numeric column of raw 8-byte values */
#define FDS_SIDX_NUM_PACK_MAX 56u /* widest packed integer column */
/* A packed double column (version 8): most decimal digits k, the digits'
 * bits of the scale word and its float32 flag (sidx_dcol.c) */
#define FDS_SIDX_DCOL_DIGITS 9u
#define FDS_SIDX_DCOL_DIGITS_MASK 0xFu
#define FDS_SIDX_DCOL_FLOAT 0x100u
#define FDS_SIDX_VERSION_DCOL 8u /* first version with packed doubles */
/* Bytes of a packed ordinal column: max_doc values of `bits` bits, then 8
 * bytes of padding so that any value can be read with one 8-byte load. */
#define FDS_SIDX_ORD_BYTES(max_doc, bits) \
    (((uint64_t)(max_doc) * (bits) + 7) / 8 + 8)

#endif
