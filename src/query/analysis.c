/*
 * analysis.c: the standard analyzer (UAX #29 word boundaries + lower case).
 *
 * Why: every text field and every `match` query goes through here, so the
 * same bytes must produce the same terms at index and at query time, and the
 * terms should be the ones Elasticsearch's `standard` analyzer produces for
 * log data (URLs, user agents, Persian product names).
 *
 * utf8proc gives general categories, not the Word_Break property, so the
 * Word_Break classes are approximated:
 *   ALetter      = L* and Nl (Hebrew_Letter folded in; Thai/Lao/Khmer and
 *                  other scripts Lucene segments with dictionaries are
 *                  treated as ALetter runs -- a simplification)
 *   Numeric      = Nd (includes Arabic-Indic and Persian digits)
 *   Katakana     = the Katakana blocks
 *   Ideographic  = Han and Hiragana (one token per character, as Lucene)
 *   ExtendNumLet = Pc (the underscore and friends)
 *   Extend/Format/ZWJ = Mn, Mc, Me, Cf (so ZWNJ inside Persian words keeps
 *                  the word whole, rule WB4)
 *   MidLetter, MidNumLet, MidNum, Single_Quote = the code points listed in
 *                  UAX #29 table 3 (':' '.' ',' ';' '\'' and their kin).
 * Rules applied: WB4, WB5, WB6/7, WB8, WB9, WB10, WB11/12, WB13, WB13a/b;
 * emoji (WB3c, WB15/16) and Hebrew quote rules (WB7a-c) are not applied.
 * Segments without a letter, digit or ideograph are not tokens (as Lucene).
 */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "fds_error.h"
#include "query_int.h"

enum {
    WB_OTHER, WB_ALETTER, WB_NUMERIC, WB_KATAKANA, WB_EXTNUMLET, WB_IDEO,
    WB_MIDLETTER, WB_MIDNUMLET, WB_MIDNUM, WB_EXTEND
};

static int wb_class(int32_t c)
{
    if (c < 0x80) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            return WB_ALETTER;
        if (c >= '0' && c <= '9')
            return WB_NUMERIC;
        switch (c) {
        case ':': return WB_MIDLETTER;
        case '.': case '\'': return WB_MIDNUMLET;
        case ',': case ';': return WB_MIDNUM;
        case '_': return WB_EXTNUMLET;
        default: return WB_OTHER;
        }
    }
    switch (c) {
    case 0xB7: case 0x387: case 0x55F: case 0x5F4: case 0x2027: case 0xFE13:
    case 0xFE55: case 0xFF1A:
        return WB_MIDLETTER;
    case 0x2018: case 0x2019: case 0x2024: case 0xFE52: case 0xFF07:
    case 0xFF0E:
        return WB_MIDNUMLET;
    case 0x37E: case 0x589: case 0x60C: case 0x60D: case 0x66C: case 0x7F8:
    case 0x2044: case 0xFE10: case 0xFE14: case 0xFE50: case 0xFE54:
    case 0xFF0C: case 0xFF1B:
        return WB_MIDNUM;
    case 0x66B: /* Arabic decimal separator is Numeric in Word_Break */
        return WB_NUMERIC;
    default: break;
    }
    if ((c >= 0x30A0 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||
        (c >= 0xFF66 && c <= 0xFF9F) || (c >= 0x3031 && c <= 0x3035))
        return WB_KATAKANA;
    if ((c >= 0x3040 && c <= 0x309F) || (c >= 0x3400 && c <= 0x4DBF) ||
        (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
        (c >= 0x20000 && c <= 0x3FFFF))
        return WB_IDEO;
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_NL:
        return WB_ALETTER;
    case UTF8PROC_CATEGORY_ND:
        return WB_NUMERIC;
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_CF:
        return WB_EXTEND;
    case UTF8PROC_CATEGORY_PC:
        return WB_EXTNUMLET;
    default:
        return WB_OTHER;
    }
}

static bool wb_joins(int a, int b)
{
    switch (b) {
    case WB_ALETTER: case WB_NUMERIC:
        return a == WB_ALETTER || a == WB_NUMERIC || a == WB_EXTNUMLET;
    case WB_KATAKANA:
        return a == WB_KATAKANA || a == WB_EXTNUMLET;
    case WB_EXTNUMLET:
        return a == WB_ALETTER || a == WB_NUMERIC || a == WB_KATAKANA ||
               a == WB_EXTNUMLET;
    default:
        return false;
    }
}

typedef struct cpinfo {
    int32_t cp;
    uint8_t cls;
    uint32_t off; /* byte offset of the code point in the text */
} cpinfo;

/* Where emit() reports offsets (NULL: plain fds_analyze). */
typedef struct offs_cb {
    fds_token_off_fn fn;
    void *arg;
    const cpinfo *cps;
    size_t ncps;
    size_t len;
} offs_cb;

/* Lower-case cps[s..e) and emit, splitting long tokens.  Uses `sbuf`
 * (`scap` bytes) when the token fits, else the growable *heap. */
static int emit(const cpinfo *cps, size_t s, size_t e, uint8_t *sbuf,
                size_t scap, uint8_t **heap, size_t *hcap, fds_token_fn cb,
                void *arg, const offs_cb *oc)
{
    while (s < e) {
        size_t end = e - s > FDS_TOKEN_MAX_CHARS ? s + FDS_TOKEN_MAX_CHARS : e;
        size_t need = (end - s) * 4;
        uint8_t *out = sbuf;
        if (need > scap) {
            if (need > *hcap) {
                uint8_t *nb = realloc(*heap, need);
                if (!nb)
                    return FDS_ENOMEM;
                *heap = nb;
                *hcap = need;
            }
            out = *heap;
        }
        size_t n = 0;
        for (size_t i = s; i < end; i++) {
            int32_t c = cps[i].cp;
            if (c < 0x80) /* ASCII: utf8proc's answer, without its tables */
                out[n++] = (uint8_t)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
            else
                n += (size_t)utf8proc_encode_char(utf8proc_tolower(c), out + n);
        }
        int rc;
        if (oc)
            rc = oc->fn(oc->arg, (const char *)out, n, cps[s].off,
                        end < oc->ncps ? cps[end].off : oc->len);
        else
            rc = cb(arg, (const char *)out, n);
        if (rc)
            return rc;
        s = end;
    }
    return 0;
}

#define FDS__ANALYZE_STACK 256

static int analyze(const char *text, size_t len, fds_token_fn cb, void *arg,
                   offs_cb *oc)
{
    cpinfo stack_cps[FDS__ANALYZE_STACK];
    uint8_t stack_buf[FDS__ANALYZE_STACK * 4];
    cpinfo *cps = stack_cps;
    if (len > FDS__ANALYZE_STACK) {
        cps = malloc(len * sizeof *cps);
        if (!cps)
            return FDS_ENOMEM;
    }
    size_t n = 0;
    const uint8_t *p = (const uint8_t *)text, *end = p + len;
    while (p < end) {
        int32_t c = *p;
        ssize_t k = 1;
        if (c >= 0x80 && (k = utf8proc_iterate(p, end - p, &c)) <= 0) {
            c = 0xFFFD;
            k = 1;
        }
        p += k;
        cps[n].cp = c;
        cps[n].cls = (uint8_t)wb_class(c);
        cps[n].off = (uint32_t)(p - k - (const uint8_t *)text);
        n++;
    }
    if (oc) {
        oc->cps = cps;
        oc->ncps = n;
        oc->len = len;
    }

    uint8_t *heap = NULL;
    size_t hcap = 0;
    int rc = 0;
    size_t i = 0;
    while (i < n && rc == 0) {
        int c = cps[i].cls;
        if (c != WB_ALETTER && c != WB_NUMERIC && c != WB_KATAKANA &&
            c != WB_EXTNUMLET && c != WB_IDEO) {
            i++;
            continue;
        }
        size_t s = i, j = i + 1;
        bool word = c != WB_EXTNUMLET;
        while (j < n && cps[j].cls == WB_EXTEND)
            j++;
        if (c != WB_IDEO) {
            int last = c;
            for (;;) {
                if (j >= n)
                    break;
                int d = cps[j].cls;
                if (wb_joins(last, d)) {
                    last = d;
                    if (d != WB_EXTNUMLET)
                        word = true;
                    j++;
                } else if (d == WB_MIDLETTER || d == WB_MIDNUMLET ||
                           d == WB_MIDNUM) {
                    size_t k = j + 1;
                    while (k < n && cps[k].cls == WB_EXTEND)
                        k++;
                    if (k >= n)
                        break;
                    int e = cps[k].cls;
                    bool ok = (last == WB_ALETTER && e == WB_ALETTER &&
                               (d == WB_MIDLETTER || d == WB_MIDNUMLET)) ||
                              (last == WB_NUMERIC && e == WB_NUMERIC &&
                               (d == WB_MIDNUM || d == WB_MIDNUMLET));
                    if (!ok)
                        break;
                    last = e;
                    j = k + 1;
                } else {
                    break;
                }
                while (j < n && cps[j].cls == WB_EXTEND)
                    j++;
            }
        }
        if (word)
            rc = emit(cps, s, j, stack_buf, sizeof stack_buf, &heap, &hcap,
                      cb, arg, oc);
        i = j;
    }
    free(heap);
    if (cps != stack_cps)
        free(cps);
    return rc;
}

/* wb_class() of each ASCII byte, as a digit ("1" WB_ALETTER, "2"
 * WB_NUMERIC, "4" WB_EXTNUMLET, "6" WB_MIDLETTER, "7" WB_MIDNUMLET, "8"
 * WB_MIDNUM, "0" WB_OTHER). */
static const char WB_ASCII[129] =
    "00000000000000000000000000000000"
    "00000007000080702222222222680000"
    "01111111111111111111111111100004"
    "01111111111111111111111111100000";

/* Whether text[0..len) is all ASCII (eight bytes at a time). */
static bool all_ascii(const uint8_t *p, size_t len)
{
    size_t i = 0;
    for (; len - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & 0x8080808080808080u)
            return false;
    }
    for (; i < len; i++)
        if (p[i] & 0x80)
            return false;
    return true;
}

/* analyze() for ASCII text, without its code-point array: in ASCII no
 * class is Extend, Katakana or Ideographic, so a word is a run of
 * ALetter, Numeric and ExtendNumLet, through MidLetter or MidNumLet
 * between two ALetters and MidNum or MidNumLet between two Numerics
 * (the rules analyze() applies), with at least one letter or digit. */
static int analyze_ascii(const uint8_t *t, size_t n, fds_token_fn cb,
                         void *arg)
{
    uint8_t out[FDS_TOKEN_MAX_CHARS];
    size_t i = 0;
    while (i < n) {
        int c = WB_ASCII[t[i]] - '0';
        if (c != WB_ALETTER && c != WB_NUMERIC && c != WB_EXTNUMLET) {
            i++;
            continue;
        }
        size_t s = i, j = i + 1;
        bool word = c != WB_EXTNUMLET;
        int last = c;
        while (j < n) {
            int d = WB_ASCII[t[j]] - '0';
            if (d == WB_ALETTER || d == WB_NUMERIC || d == WB_EXTNUMLET) {
                last = d;
                word |= d != WB_EXTNUMLET;
                j++;
                continue;
            }
            if (j + 1 >= n)
                break;
            int e = WB_ASCII[t[j + 1]] - '0';
            if (!((last == WB_ALETTER && e == WB_ALETTER &&
                   (d == WB_MIDLETTER || d == WB_MIDNUMLET)) ||
                  (last == WB_NUMERIC && e == WB_NUMERIC &&
                   (d == WB_MIDNUM || d == WB_MIDNUMLET))))
                break;
            last = e;
            j += 2;
        }
        for (size_t a = s; word && a < j;) {
            size_t b = j - a > FDS_TOKEN_MAX_CHARS ? a + FDS_TOKEN_MAX_CHARS : j;
            for (size_t k = a; k < b; k++)
                out[k - a] = (uint8_t)(t[k] >= 'A' && t[k] <= 'Z'
                                           ? t[k] + ('a' - 'A') : t[k]);
            int rc = cb(arg, (const char *)out, b - a);
            if (rc)
                return rc;
            a = b;
        }
        i = j;
    }
    return 0;
}

int fds_analyze(const char *text, size_t len, fds_token_fn cb, void *arg)
{
    if (all_ascii((const uint8_t *)text, len))
        return analyze_ascii((const uint8_t *)text, len, cb, arg);
    return analyze(text, len, cb, arg, NULL);
}

int fds_analyze_offsets(const char *text, size_t len, fds_token_off_fn cb,
                        void *arg)
{
    offs_cb oc = {cb, arg, NULL, 0, len};
    return analyze(text, len, NULL, NULL, &oc);
}
