/*
 * fds_json_skip.h: the end of one JSON value in text already validated (a
 * stored _source, a response body fieldstore wrote), found without parsing
 * it: strings by their closing quote (a backslash skips the next byte),
 * objects and arrays by bracket depth with the strings inside skipped,
 * numbers, true, false and null by the next delimiter.  Code that splices
 * or filters JSON text byte for byte (filter_path, _source includes and
 * excludes) uses it to step over the values it keeps or drops.
 *
 * It checks nothing: on text that is not JSON it returns some offset in
 * [i, n], never reads past s[n - 1], and loops at most n - i times.  Text
 * from users is checked first by the scanner (src/query/mapping/json_scan.c).
 */
#ifndef FDS_JSON_SKIP_H
#define FDS_JSON_SKIP_H

#include <stdbool.h>
#include <stddef.h>

/* Is c a byte that ends a bare JSON token (number, true, false, null)? */
static inline bool fds_json_token_end(char c)
{
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' ||
           c == '\n' || c == '\r';
}

/* One past the string whose opening quote is s[i]; n when it is not closed. */
static inline size_t fds_json_skip_string(const char *s, size_t n, size_t i)
{
    for (i++; i < n && s[i] != '"'; i++)
        if (s[i] == '\\')
            i++;
    return i < n ? i + 1 : n;
}

/* One past the JSON value that starts at s[i] (no whitespace before it:
 * callers skip theirs); n when i >= n or the value runs to the end. */
static inline size_t fds_json_skip(const char *s, size_t n, size_t i)
{
    if (i >= n)
        return n;
    if (s[i] == '"')
        return fds_json_skip_string(s, n, i);
    if (s[i] == '{' || s[i] == '[') {
        size_t depth = 0;
        while (i < n) {
            char c = s[i];
            if (c == '"') {
                i = fds_json_skip_string(s, n, i);
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                return i + 1;
            i++;
        }
        return n;
    }
    while (i < n && !fds_json_token_end(s[i]))
        i++;
    return i;
}

#endif
