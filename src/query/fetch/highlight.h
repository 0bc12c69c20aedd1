/*
 * highlight.h: the search body's `highlight` (Elasticsearch 8's
 * HighlightBuilder) rendered per hit; the parsed tree is
 * ast/highlight_tree.h, its parser dsl/dsl_highlight.c.
 *
 * No term positions or offsets are indexed, so a hit's fields are
 * highlighted as Lucene's UnifiedHighlighter does with its ANALYSIS offset
 * source: the field's text is taken from the hit's `_source`, analysed
 * again with the field's analyzer (the standard one, analysis.h) and every
 * token that one of the query's terms for that field matches is marked.
 * Fragments are then cut around the marks and formatted as
 * DefaultPassageFormatter does (pre tag, the token's original bytes, post
 * tag).  Keyword fields are marked whole when the value matches.
 */
#ifndef FDS_HIGHLIGHT_H
#define FDS_HIGHLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "fds_strbuf.h"
#include "ast/highlight_tree.h"

/* Bounds of the work one hit's highlighting does. */
#define FDS_HL_MAX_ANALYZED (1u << 20)   /* bytes of a field value analysed
                                          * (Elasticsearch's
                                          * index.highlight.max_analyzed_offset
                                          * is 1000000) */
#define FDS_HL_MAX_OUT (4u << 20)        /* bytes of highlight per hit */

/*
 * Append `,"highlight":{"<field>":["fragment", ...], ...}` for a hit whose
 * `_source` is src[0..len) to b, the fields in the order the request
 * resolved them, nothing when no field has a fragment.  `q` is the query
 * of the request (used when no highlight_query is given; may be NULL).
 * Returns 0 or FDS_ENOMEM (b's own oom flag is set by the buffer).
 */
int fds_highlight_put(const fds_highlight *h, const fds_query *q,
                      const uint8_t *src, size_t len, fds_strbuf *b);

/* ---- the pure parts, public for tests ---------------------------------- */

/* A marked byte range [start, end) of a text. */
typedef struct fds_hl_mark {
    size_t start, end;
} fds_hl_mark;

/* fds_hl_frag_opts: ast/highlight_tree.h. */

/*
 * The fragments of text t[0..n) with the sorted, disjoint marks m[0..nm):
 * each one a JSON string appended to b (comma-separated, no brackets).
 * Passages are cut as Lucene's UnifiedHighlighter cuts them with
 * Elasticsearch's BoundedBreakIteratorScanner: a passage starts at the
 * sentence (or word) boundary before its first mark and grows over later
 * marks while it stays within fragment_size bytes, then ends at the
 * following boundary.  Passages are scored by their marks (distinct marked
 * tokens count, as PassageScorer rewards distinct terms), the best
 * number_of_fragments kept and put in text order unless order_score.
 * Without marks, the first no_match_size bytes (cut at a word boundary)
 * make one fragment when no_match_size > 0.  Returns the number of
 * fragments appended.
 */
int fds_hl_fragments(const char *t, size_t n, const fds_hl_mark *m, size_t nm,
                     const fds_hl_frag_opts *o, fds_strbuf *b);

#endif
