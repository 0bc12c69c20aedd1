/*
 * highlight.h: the search body's `highlight` (Elasticsearch 8's
 * HighlightBuilder), parsed into the request and rendered per hit.
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
#include "ast/search_request.h"

/* Bounds of the work one hit's highlighting does. */
#define FDS_HL_MAX_FRAGMENTS 100         /* number_of_fragments at most */
#define FDS_HL_MAX_ANALYZED (1u << 20)   /* bytes of a field value analysed
                                          * (Elasticsearch's
                                          * index.highlight.max_analyzed_offset
                                          * is 1000000) */
#define FDS_HL_MAX_OUT (4u << 20)        /* bytes of highlight per hit */
#define FDS_HL_MAX_FIELDS 256            /* fields a request highlights */

typedef struct fds_highlight fds_highlight;

void fds_highlight_free(fds_highlight *h); /* NULL is a no-op */

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

/* Fragment options (Elasticsearch's defaults in brackets). */
typedef struct fds_hl_frag_opts {
    const char *pre, *post;   /* ["<em>"], ["</em>"] */
    size_t fragment_size;     /* [100] bytes */
    int number_of_fragments;  /* [5]; 0 = the whole text */
    size_t no_match_size;     /* [0] */
    bool order_score;         /* order: score */
    bool html;                /* encoder: html */
    int scanner;              /* FDS_HL_SENTENCE [unified], _WORD, _CHARS */
} fds_hl_frag_opts;

enum { FDS_HL_SENTENCE, FDS_HL_WORD, FDS_HL_CHARS };

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
