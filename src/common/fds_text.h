/*
 * fds_text.h: UTF-8 validation and JSON string escaping, the one definition
 * of each for every part of fieldstore (the query JSON scanner, the log
 * converter, the HTTP layer and the load generator).
 *
 * UTF-8 is RFC 3629: no overlong forms, no surrogates (U+D800..U+DFFF), nothing
 * above U+10FFFF.  JSON strings follow RFC 8259 with one house rule for bytes
 * that are not UTF-8 (see fds_json_escape()).
 *
 * Threading: no state; every function is reentrant.
 */
#ifndef FDS_TEXT_H
#define FDS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes a JSON string literal of `len` input bytes can take at most: every
 * byte may become "\u00XX" (6 bytes), plus the two quotes. */
#define FDS_JSON_ESCAPE_BOUND(len) (6 * (size_t)(len) + 2)

/*
 * Length (1..4) of the well-formed UTF-8 sequence that starts at s[0], with
 * s[0..n) readable; 0 when n is 0 or the bytes there are not well-formed
 * UTF-8 (RFC 3629, table 3-7 of the Unicode Standard).  ASCII gives 1.
 */
size_t fds_utf8_seq_len(const uint8_t *s, size_t n);

/* Whether s[0..n) is entirely well-formed UTF-8 (n == 0 is valid). */
bool fds_utf8_valid(const uint8_t *s, size_t n);

/*
 * The length of the longest prefix of s[0..n) of at most `max` bytes that
 * does not end in an incomplete UTF-8 sequence (the cut moves back to the
 * start of a character the limit would split).  For cutting messages to a
 * buffer's size without leaving half a character.
 */
size_t fds_utf8_cut(const uint8_t *s, size_t n, size_t max);

/*
 * Write src[0..len) as a JSON string literal, quotes included, to dst[0..cap).
 * Rules: '"' and '\' are backslash-escaped; newline, carriage return, tab,
 * backspace and form feed take their two-character escapes (\n \r \t \b \f,
 * RFC 8259 section 7, as Jackson writes them); other bytes below 0x20 become
 * \u00XX;
 * well-formed UTF-8 is copied as is; every other byte (not part of valid
 * UTF-8) becomes \u00XX, i.e. is read as Latin-1, so the output is always
 * valid UTF-8 and the byte value stays visible.  `src` need not be
 * NUL-terminated; no NUL is written.
 *
 * Returns the bytes written (>= 2), or 0 when `cap` is too small (dst then
 * holds a partial literal).  A cap of FDS_JSON_ESCAPE_BOUND(len) always
 * suffices.
 */
size_t fds_json_escape(const char *src, size_t len, char *dst, size_t cap);

/*
 * Does wildcard pattern `pat` ('*' = any run of bytes, NUL-terminated)
 * match s[0..n)?  The greedy algorithm with one backtrack point: a '*'
 * remembers where it started, and a mismatch resumes just after the last
 * '*' one byte further on.  Earlier stars never need revisiting (the last
 * star can absorb whatever they would have), so the cost is
 * O(strlen(pat) * n) in the worst case, never exponential -- the classic
 * wildcard matcher (Kirk Krauss, "Matching Wildcards", Dr. Dobb's 2008).
 */
bool fds_glob_match(const char *pat, const char *s, size_t n);

#endif
