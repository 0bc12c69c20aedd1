/*
 * fds_text.c: UTF-8 validation, JSON string escaping and wildcard matching
 * (see fds_text.h).
 */
#include "fds_text.h"

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

size_t fds_json_escape(const char *src, size_t len, char *dst, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *s = (const uint8_t *)src;
    char *p = dst, *end = dst + cap;
    if (cap < 2)
        return 0;
    *p++ = '"';
    for (size_t i = 0; i < len;) {
        uint8_t ch = s[i];
        if (json_plain(ch)) {
            /* Copy a run of plain ASCII at once. */
            size_t j = i + 1;
            while (j < len && json_plain(s[j]))
                j++;
            if ((size_t)(end - p) < j - i)
                return 0;
            memcpy(p, s + i, j - i);
            p += j - i;
            i = j;
            continue;
        }
        if (ch == '"' || ch == '\\') {
            if (end - p < 2)
                return 0;
            *p++ = '\\';
            *p++ = (char)ch;
            i++;
            continue;
        }
        size_t u = ch >= 0x80 ? fds_utf8_seq_len(s + i, len - i) : 0;
        if (u) {
            if ((size_t)(end - p) < u)
                return 0;
            memcpy(p, s + i, u);
            p += u;
            i += u;
            continue;
        }
        /* The two-character escapes of RFC 8259 section 7, as Jackson (and
         * so Elasticsearch) writes them. */
        const char *esc = ch == '\n' ? "\\n" : ch == '\r' ? "\\r" : ch == '\t' ? "\\t"
                        : ch == '\b' ? "\\b" : ch == '\f' ? "\\f" : NULL;
        if (esc) {
            if (end - p < 2)
                return 0;
            memcpy(p, esc, 2);
            p += 2;
            i++;
            continue;
        }
        /* Another control byte or a byte that is not valid UTF-8. */
        if (end - p < 6)
            return 0;
        memcpy(p, "\\u00", 4);
        p[4] = hex[ch >> 4];
        p[5] = hex[ch & 0xf];
        p += 6;
        i++;
    }
    if (end - p < 1)
        return 0;
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
