/*
 * analysis.h: the standard analyzer of text fields (public for tests and
 * tools).
 *
 * Elasticsearch's `standard` analyzer is Lucene's StandardTokenizer (word
 * boundaries of Unicode UAX #29, section 4.1, and emoji sequences of UTS
 * #51) followed by LowerCaseFilter.  We follow Lucene 9's
 * StandardTokenizerImpl.jflex: its word, emoji, Complex_Context (Thai ...)
 * and Han/Hiragana rules, with the Word_Break property taken from utf8proc
 * and a table made from the Unicode data (see analysis.c for what remains
 * different), then lower case every code point with utf8proc_tolower.
 * Tokens longer than FDS_TOKEN_MAX_CHARS (255) code points are split, as
 * Lucene does.
 */
#ifndef FDS_ANALYSIS_H
#define FDS_ANALYSIS_H

#include <stddef.h>

/* Receives each token (UTF-8, lower-cased, not NUL-terminated; valid only
 * during the call).  Return 0 to continue or a negative code to stop. */
typedef int (*fds_token_fn)(void *arg, const char *tok, size_t len);

/*
 * Tokenize `text` (`len` bytes of UTF-8; invalid sequences are treated as
 * U+FFFD separators) and call `cb` for each token in order.
 * Returns 0, FDS_ENOMEM, or the callback's negative code.
 */
int fds_analyze(const char *text, size_t len, fds_token_fn cb, void *arg);

/* Receives each token as fds_token_fn does, with the byte range
 * [start, end) of `text` it was cut from (its original, not lower-cased,
 * bytes), as Lucene's OffsetAttribute gives it to a highlighter. */
typedef int (*fds_token_off_fn)(void *arg, const char *tok, size_t len,
                                size_t start, size_t end);

/* fds_analyze() reporting each token's offsets.  `len` < 4 GiB.  Same
 * returns. */
int fds_analyze_offsets(const char *text, size_t len, fds_token_off_fn cb,
                        void *arg);

#endif
