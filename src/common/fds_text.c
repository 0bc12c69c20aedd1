/*
 * fds_text.c: UTF-8 validation, JSON string escaping and wildcard matching
 * (see fds_text.h).
 */
#include "fds_text.h"

#include <stdint.h>
#include <string.h>

size_t fds_utf8_seq_len(const uint8_t *s, size_t n)
{
    if (n == 0)
        return 0;
    uint8_t b = s[0];
    if (b < 0x80)
        return 1;
    /* Unicode Standard table 3-7: the second byte's range depends on the
     * first; later bytes are always 80..BF. */
    uint8_t lo = 0x80, hi = 0xbf;
    size_t need;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b == 0xe0) { need = 2; lo = 0xa0; }
    else if (b >= 0xe1 && b <= 0xec) need = 2;
    else if (b == 0xed) { need = 2; hi = 0x9f; }
    else if (b >= 0xee && b <= 0xef) need = 2;
    else if (b == 0xf0) { need = 3; lo = 0x90; }
    else if (b >= 0xf1 && b <= 0xf3) need = 3;
    else if (b == 0xf4) { need = 3; hi = 0x8f; }
    else return 0;
    if (n < need + 1 || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k <= need; k++)
        if (s[k] < 0x80 || s[k] > 0xbf)
            return 0;
    return need + 1;
}

bool fds_utf8_valid(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        /* runs of ASCII (most of a log document) eight bytes at a time */
        uint64_t w;
        while (n - i >= sizeof w &&
               (memcpy(&w, s + i, sizeof w), !(w & 0x8080808080808080u)))
            i += sizeof w;
        while (i < n && s[i] < 0x80)
            i++;
        if (i == n)
            break;
        size_t k = fds_utf8_seq_len(s + i, n - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

size_t fds_utf8_cut(const uint8_t *s, size_t n, size_t max)
{
    size_t k = max < n ? max : n, i = k;
    for (int back = 0; back < 3 && i > 0 && (s[i - 1] & 0xc0) == 0x80; back++)
        i--;
    if (i == 0 || s[i - 1] < 0xc0)
        return k; /* ends on ASCII, or stray bytes that cutting won't mend */
    uint8_t b = s[i - 1];
    size_t need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
    return k - (i - 1) < need ? i - 1 : k;
}

static int json_plain(uint8_t c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* The JSON text of byte c outside a run of plain bytes, when it is not the
 * start of a well-formed UTF-8 sequence: the two-character escapes of RFC
 * 8259 section 7 as Jackson (and so Elasticsearch) writes them, else
 * \u00XX (control bytes and bytes that are not UTF-8).  Writes to p (room
 * for 6), returns the bytes written. */
static size_t escape_byte(uint8_t c, char *p)
{
    static const char hex[] = "0123456789abcdef";
    static const char two[256] = {['"'] = '"', ['\\'] = '\\', ['\n'] = 'n',
                                  ['\r'] = 'r', ['\t'] = 't', ['\b'] = 'b',
                                  ['\f'] = 'f'};
    if (two[c]) {
        p[0] = '\\';
        p[1] = two[c];
        return 2;
    }
    memcpy(p, "\\u00", 4);
    p[4] = hex[c >> 4];
    p[5] = hex[c & 0xf];
    return 6;
}

/* Does any of the eight bytes of w need more than a copy: '"', '\\', a
 * control byte or a byte >= 0x80?  (The "has a zero byte" and "has a byte
 * less than n" tests of Anderson's Bit Twiddling Hacks; a borrow can flag
 * a plain byte above a flagged one, which only ends a run early.) */
static inline bool word_special(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    return (((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20) | w) & highs;
}

/* fds_json_escape when cap may be short: every write checked. */
static size_t escape_checked(const char *src, size_t len, char *dst, size_t cap)
{
    const uint8_t *s = (const uint8_t *)src;
    char *p = dst, *end = dst + cap;
    if (cap < 2)
        return 0;
    *p++ = '"';
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && json_plain(s[j]))
            j++;
        if (j > i) { /* a run of plain ASCII at once */
            if ((size_t)(end - p) < j - i)
                return 0;
            memcpy(p, s + i, j - i);
            p += j - i;
            i = j;
            continue;
        }
        size_t u = s[i] >= 0x80 ? fds_utf8_seq_len(s + i, len - i) : 0;
        if (u) {
            if ((size_t)(end - p) < u)
                return 0;
            memcpy(p, s + i, u);
            p += u;
            i += u;
            continue;
        }
        char e[6];
        size_t k = escape_byte(s[i++], e);
        if ((size_t)(end - p) < k)
            return 0;
        memcpy(p, e, k);
        p += k;
    }
    if (end - p < 1)
        return 0;
    *p++ = '"';
    return (size_t)(p - dst);
}

size_t fds_json_escape(const char *src, size_t len, char *dst, size_t cap)
{
    if (len > (SIZE_MAX - 2) / 6 || cap < FDS_JSON_ESCAPE_BOUND(len))
        return escape_checked(src, len, dst, cap);
    /* room for the worst case: runs of plain bytes copied eight at a time,
     * no check per write */
    const uint8_t *s = (const uint8_t *)src;
    char *p = dst;
    *p++ = '"';
    size_t i = 0;
    while (i < len) {
        uint64_t w;
        while (len - i >= 8 && (memcpy(&w, s + i, 8), !word_special(w))) {
            memcpy(p, &w, 8);
            p += 8;
            i += 8;
        }
        while (i < len && json_plain(s[i]))
            *p++ = (char)s[i++];
        if (i == len)
            break;
        size_t u = s[i] >= 0x80 ? fds_utf8_seq_len(s + i, len - i) : 0;
        if (u) {
            memcpy(p, s + i, u);
            p += u;
            i += u;
        } else {
            p += escape_byte(s[i++], p);
        }
    }
    *p++ = '"';
    return (size_t)(p - dst);
}

/*
 * Does wildcard pattern `pat` ('*' = any run of bytes, NUL-terminated)
 * match s[0..n)?  The greedy algorithm with one backtrack point: a '*'
 * remembers where it started, and a mismatch resumes just after the last
 * '*' one byte further on.  Earlier stars never need revisiting (the last
 * star can absorb whatever they would have), so the cost is
 * O(strlen(pat) * n) in the worst case, never exponential -- the classic
 * wildcard matcher (Kirk Krauss, "Matching Wildcards", Dr. Dobb's 2008).
 */
bool fds_glob_match(const char *pat, const char *s, size_t n)
{
    size_t p = 0, i = 0, star = SIZE_MAX, mark = 0;
    while (i < n) {
        if (pat[p] == '*') {
            star = p++;
            mark = i;
        } else if (pat[p] && pat[p] == s[i]) {
            p++;
            i++;
        } else if (star != SIZE_MAX) {
            p = star + 1;
            i = ++mark;
        } else {
            return false;
        }
    }
    while (pat[p] == '*')
        p++;
    return pat[p] == 0;
}
