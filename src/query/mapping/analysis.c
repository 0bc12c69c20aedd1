/*
 * analysis.c: the standard analyzer (UAX #29 word boundaries + lower case).
 *
 * Why: every text field and every `match` query goes through here, so the
 * same bytes must produce the same terms at index and at query time, and the
 * terms should be the ones Elasticsearch's `standard` analyzer produces for
 * log data (URLs, user agents, Persian product names, emoji in messages).
 *
 * The tokenizer is Lucene 9's StandardTokenizerImpl.jflex written out by
 * hand.  At each position it takes the longest of its rules' matches (on a
 * tie the earlier rule, which gives the same text):
 *   <EMOJI>       emoji sequences (UTS #51 emoji_sequence, as the jflex's
 *                 rule in place of UAX #29 WB3c/WB15/WB16): an emoji
 *                 character (Extended_Pictographic) or a lone modifier, its
 *                 extenders and an optional U+FE0F, such elements joined by
 *                 ZWJ (leading ZWJs included), a tag sequence ending in
 *                 U+E007F, a keycap [0-9#*] U+FE0F? U+20E3, a pair of
 *                 regional indicators (a flag);
 *   <ALPHANUM>, <NUM>, <KATAKANA>, <HANGUL>
 *                 the UAX #29 word rules WB5-WB13b, WB4 extenders kept in the
 *                 token (Hangul is ALetter; Lucene's separate types change no
 *                 text);
 *   <SOUTHEAST_ASIAN>  a run of Line_Break=Complex_Context (Thai, Lao,
 *                 Myanmar, Khmer ...) with its extenders;
 *   <IDEOGRAPHIC>, <HIRAGANA>  one Han or Hiragana character and its
 *                 extenders.
 * Anything else is skipped, one code point at a time.  Lucene's token types
 * are not reported (nothing here needs them).
 *
 * Word_Break classes (UAX #29 section 4.1, table 3) come from utf8proc: the
 * grapheme boundclass Extend/ZWJ and the general categories Mc and Cf give
 * Extend (Format and ZWJ behave alike here, WB4), L* and Nl ALetter, Nd
 * Numeric, Pc ExtendNumLet; the rows of analysis_wb.h (made from the Unicode
 * data by tools/wb_ranges.pl) correct the rest: U+200B ZERO WIDTH SPACE is
 * Cf but not Format, so it separates; U+200C ZWNJ is Extend, so a Persian
 * word stays whole; Katakana, Hebrew_Letter, the Mid* punctuation, and the
 * Complex_Context, Han and Hiragana sets.  Extended_Pictographic is the
 * boundclass utf8proc stores for it.
 *
 * Differences from Lucene 9 that remain: the Unicode version (utf8proc
 * 2.8's 15.0 and the table's 14.0 where Lucene has 12.1: code points
 * assigned since are classified here, unassigned there), and tokens are
 * split at FDS_TOKEN_MAX_CHARS code points where Lucene counts UTF-16
 * units.
 */
#include "mapping/analysis.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "fds_error.h"
#include "query_int.h"

/* Word_Break classes, in the low bits of cpinfo.cls.  WB_EXTEND stands for
 * Extend, Format and ZWJ (WB4 treats them alike); WB_SQUOTE and WB_DQUOTE
 * differ from MidNumLet and Other only after a Hebrew letter (WB7a-c). */
enum {
    WB_OTHER, WB_ALETTER, WB_NUMERIC, WB_KATAKANA, WB_EXTNUMLET, WB_HEBREW,
    WB_MIDLETTER, WB_MIDNUMLET, WB_MIDNUM, WB_EXTEND, WB_SQUOTE, WB_DQUOTE,
    WB_RI
};
#define WB_CLASS 0x0F   /* the class bits of cpinfo.cls */
#define WB_F_EMOJI 0x10 /* Extended_Pictographic: an emoji character */
#define WB_F_SA 0x20    /* Line_Break=Complex_Context (not a word letter) */
#define WB_F_IDEO 0x40  /* Script=Han or Hiragana, not a word letter */

/* Code points of the emoji rules (UTS #51 section 1.4). */
#define CP_ZWJ 0x200D
#define CP_VS16 0xFE0F        /* emoji presentation selector */
#define CP_VS15 0xFE0E        /* text presentation selector */
#define CP_KEYCAP 0x20E3      /* COMBINING ENCLOSING KEYCAP */
#define CP_TAG_FIRST 0xE0020  /* tag_spec: U+E0020..U+E007E */
#define CP_TAG_LAST 0xE007E
#define CP_TAG_TERM 0xE007F   /* CANCEL TAG */
#define CP_MODIFIER_FIRST 0x1F3FB /* Emoji_Modifier: the skin tones */
#define CP_MODIFIER_LAST 0x1F3FF

#include "mapping/analysis_wb.h"

/* The row of WB_RANGES holding c, or NULL. */
static const wb_range *wb_range_find(uint32_t c)
{
    size_t lo = 0, hi = sizeof WB_RANGES / sizeof WB_RANGES[0];
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (c > WB_RANGES[m].hi)
            lo = m + 1;
        else if (c < WB_RANGES[m].lo)
            hi = m;
        else
            return &WB_RANGES[m];
    }
    return NULL;
}

/* Whether unassigned c is Extended_Pictographic: emoji-data.txt gives the
 * property to the unassigned code points of U+1F000..U+1FAFF and
 * U+1FC00..U+1FFFD, so emoji newer than our Unicode data still are emoji
 * (utf8proc knows only assigned ones). */
static bool emoji_reserved(int32_t c)
{
    return (c >= 0x1F000 && c <= 0x1FAFF) || (c >= 0x1FC00 && c <= 0x1FFFD);
}

/* The class byte (WB_* | WB_F_*) of code point c, from utf8proc and
 * WB_RANGES: the definition.  wb_class() reads the BMP from a table of it. */
static int wb_class_of(int32_t c)
{
    if (c < 0x80) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            return WB_ALETTER;
        if (c >= '0' && c <= '9')
            return WB_NUMERIC;
        switch (c) {
        case ':': return WB_MIDLETTER;
        case '.': return WB_MIDNUMLET;
        case '\'': return WB_SQUOTE;
        case '"': return WB_DQUOTE;
        case ',': case ';': return WB_MIDNUM;
        case '_': return WB_EXTNUMLET;
        default: return WB_OTHER;
        }
    }
    const utf8proc_property_t *p = utf8proc_get_property(c);
    int cls;
    if (p->boundclass == UTF8PROC_BOUNDCLASS_EXTEND ||
        p->boundclass == UTF8PROC_BOUNDCLASS_ZWJ) {
        cls = WB_EXTEND; /* Grapheme_Extend (with ZWNJ) and Emoji_Modifier */
    } else {
        switch (p->category) {
        case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL:
        case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
        case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_NL:
            cls = WB_ALETTER;
            break;
        case UTF8PROC_CATEGORY_ND:
            cls = WB_NUMERIC;
            break;
        case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC:
        case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_CF:
            cls = WB_EXTEND;
            break;
        case UTF8PROC_CATEGORY_PC:
            cls = WB_EXTNUMLET;
            break;
        default:
            cls = WB_OTHER;
        }
    }
    const wb_range *r;
    if (p->category != UTF8PROC_CATEGORY_CN &&
        (r = wb_range_find((uint32_t)c))) {
        if (r->cls & (WB_F_SA | WB_F_IDEO))
            cls = (cls == WB_EXTEND ? WB_EXTEND : WB_OTHER) | r->cls;
        else
            cls = r->cls;
    }
    if (p->boundclass == UTF8PROC_BOUNDCLASS_EXTENDED_PICTOGRAPHIC ||
        p->boundclass == UTF8PROC_BOUNDCLASS_E_ZWG ||
        (p->category == UTF8PROC_CATEGORY_CN && emoji_reserved(c)))
        cls |= WB_F_EMOJI;
    return cls;
}

/* wb_class_of() of each BMP code point, made once: a text's code points
 * are classified with one load instead of a utf8proc look-up and a search
 * of WB_RANGES (64 KiB, shared read-only by all threads). */
static uint8_t wb_bmp[0x10000];
static pthread_once_t wb_bmp_once = PTHREAD_ONCE_INIT;

static void wb_bmp_init(void)
{
    for (int32_t c = 0; c < 0x10000; c++)
        wb_bmp[c] = (uint8_t)wb_class_of(c);
}

/* wb_class_of(c); wb_bmp_init() has run. */
static int wb_class(int32_t c)
{
    return c < 0x10000 ? wb_bmp[c] : wb_class_of(c);
}

static bool wb_ahletter(int a)
{
    return a == WB_ALETTER || a == WB_HEBREW;
}

/* Whether b continues a word whose last class is a (WB5, WB8-WB10, WB13,
 * WB13a/b); a is WB_SQUOTE after a Hebrew letter's apostrophe (WB7a). */
static bool wb_joins(int a, int b)
{
    switch (b) {
    case WB_ALETTER: case WB_HEBREW: case WB_NUMERIC:
        return wb_ahletter(a) || a == WB_NUMERIC || a == WB_EXTNUMLET ||
               a == WB_SQUOTE;
    case WB_KATAKANA:
        return a == WB_KATAKANA || a == WB_EXTNUMLET;
    case WB_EXTNUMLET:
        return wb_ahletter(a) || a == WB_NUMERIC || a == WB_KATAKANA ||
               a == WB_EXTNUMLET || a == WB_SQUOTE;
    default:
        return false;
    }
}

typedef struct cpinfo {
    int32_t cp;
    uint8_t cls; /* WB_* class | WB_F_* flags */
    uint32_t off; /* byte offset of the code point in the text */
} cpinfo;

static bool cp_extend(const cpinfo *x)
{
    return (x->cls & WB_CLASS) == WB_EXTEND;
}

/* The first index from i that is not Extend/Format/ZWJ (WB4). */
static size_t skip_extend(const cpinfo *cps, size_t n, size_t i)
{
    while (i < n && cp_extend(&cps[i]))
        i++;
    return i;
}

/*
 * The end of the word (StandardTokenizerImpl's <ALPHANUM>/<NUM> rules:
 * UAX #29 WB5-WB13b with WB4) that starts at cps[s], a letter, digit,
 * katakana or ExtendNumLet.  *word tells whether it holds a letter or a
 * digit: a run of ExtendNumLet alone is no token.
 *
 * The jflex rule is a sequence of items: runs of letters through MidLetter
 * (WB6/7), runs of digits through MidNum (WB11/12), and the Hebrew items
 * Hebrew_Letter Single_Quote (WB7a) and Hebrew_Letter Double_Quote
 * Hebrew_Letter (WB7b/c), next to each other (WB9/10) or through
 * ExtendNumLet (WB13a/b).  A Hebrew item must start at its first letter, so
 * a Hebrew letter reached through a Mid* takes no quote ("item" below).
 * After a Hebrew item `last` is WB_SQUOTE: only a next item or an
 * ExtendNumLet may follow.
 */
static size_t word_end(const cpinfo *cps, size_t n, size_t s, bool *word)
{
    int last = cps[s].cls & WB_CLASS;
    bool item = true; /* the last letter may start an item */
    size_t j = skip_extend(cps, n, s + 1);
    *word = last != WB_EXTNUMLET;
    while (j < n) {
        int d = cps[j].cls & WB_CLASS;
        if (wb_joins(last, d)) {
            last = d;
            item = true;
            if (d != WB_EXTNUMLET)
                *word = true;
            j = skip_extend(cps, n, j + 1);
            continue;
        }
        if (d != WB_MIDLETTER && d != WB_MIDNUMLET && d != WB_MIDNUM &&
            d != WB_SQUOTE && d != WB_DQUOTE)
            break;
        size_t k = skip_extend(cps, n, j + 1);
        int e = k < n ? cps[k].cls & WB_CLASS : WB_OTHER;
        bool hebrew = last == WB_HEBREW && item;
        if (hebrew && d == WB_SQUOTE) { /* WB7a (a letter may follow) */
            last = WB_SQUOTE;
            j = k;
        } else if (hebrew && d == WB_DQUOTE && e == WB_HEBREW) { /* WB7b/c */
            last = WB_SQUOTE;
            j = skip_extend(cps, n, k + 1);
        } else if ((wb_ahletter(last) && wb_ahletter(e) &&
                    (d == WB_MIDLETTER || d == WB_MIDNUMLET ||
                     d == WB_SQUOTE)) || /* WB6/7 */
                   (last == WB_NUMERIC && e == WB_NUMERIC &&
                    (d == WB_MIDNUM || d == WB_MIDNUMLET ||
                     d == WB_SQUOTE))) { /* WB11/12 */
            last = e;
            item = false;
            j = skip_extend(cps, n, k + 1);
        } else {
            break;
        }
    }
    return j;
}

/* Extend, Format or ZWJ but not a presentation selector: what the emoji
 * rule's ExtFmtZwjSansPresSel lets follow an element. */
static bool emoji_extend(const cpinfo *x)
{
    return cp_extend(x) && x->cp != CP_VS16 && x->cp != CP_VS15;
}

static size_t skip_emoji_extend(const cpinfo *cps, size_t n, size_t i)
{
    while (i < n && emoji_extend(&cps[i]))
        i++;
    return i;
}

static bool emoji_modifier(int32_t c)
{
    return c >= CP_MODIFIER_FIRST && c <= CP_MODIFIER_LAST;
}

/* Whether cps[i] may start StandardTokenizerImpl's emoji rule (digits may,
 * as keycaps, but their <NUM> match is never shorter). */
static bool emoji_start(const cpinfo *x)
{
    return (x->cls & WB_F_EMOJI) || (x->cls & WB_CLASS) == WB_RI ||
           x->cp == '#' || x->cp == '*' || x->cp == CP_ZWJ ||
           emoji_modifier(x->cp);
}

/*
 * The end of the longest match of StandardTokenizerImpl's emoji rule at
 * cps[i] (Lucene 9; UTS #51 emoji_sequence), or i for none.  With X the
 * extenders of emoji_extend() and E an element, (ZWJ* (emoji X* VS16? |
 * modifier X*)):
 *   E (ZWJ E)*  |  E tag_spec+ tag_term  |  [#*0-9] X* VS16? KEYCAP X*  |
 *   RI (Extend|Format|ZWJ)* RI (Extend|Format|ZWJ)*
 * X includes ZWJ and the modifiers, so "emoji ZWJ modifier" is one element
 * or two; the scan keeps to what either reading allows.
 */
static size_t emoji_end(const cpinfo *cps, size_t n, size_t i)
{
    int32_t c = cps[i].cp;
    if ((cps[i].cls & WB_CLASS) == WB_RI) { /* a flag, VS16 or not */
        size_t j = skip_extend(cps, n, i + 1);
        return j < n && (cps[j].cls & WB_CLASS) == WB_RI
                   ? skip_extend(cps, n, j + 1) : i;
    }
    if (c == '#' || c == '*' || (c >= '0' && c <= '9')) { /* a keycap */
        size_t j = i + 1;
        bool keycap = false;
        for (; j < n && emoji_extend(&cps[j]); j++)
            keycap |= cps[j].cp == CP_KEYCAP;
        if (j + 1 < n && cps[j].cp == CP_VS16 && cps[j + 1].cp == CP_KEYCAP)
            return skip_emoji_extend(cps, n, j + 2);
        return keycap ? j : i;
    }
    size_t j = i;
    while (j < n && cps[j].cp == CP_ZWJ)
        j++;
    if (j >= n || !((cps[j].cls & WB_F_EMOJI) || emoji_modifier(cps[j].cp)))
        return i;
    bool vs = cps[j].cls & WB_F_EMOJI; /* a VS16 may end this element */
    bool joined = false;               /* a second element: no tags */
    bool zwj = false;                  /* the last code point is a ZWJ */
    size_t end = ++j;
    while (j < n) {
        const cpinfo *x = &cps[j];
        if (emoji_extend(x)) {
            zwj = x->cp == CP_ZWJ;
            end = ++j;
        } else if (zwj && (x->cls & WB_F_EMOJI)) { /* ZWJ E */
            vs = true;
            joined = true;
            zwj = false;
            end = ++j;
        } else if (vs && x->cp == CP_VS16) {
            end = ++j; /* the element ends here: ZWJ+ E, or tags */
            size_t k = j;
            while (k < n && cps[k].cp == CP_ZWJ)
                k++;
            if (k > j && k < n &&
                ((cps[k].cls & WB_F_EMOJI) || emoji_modifier(cps[k].cp))) {
                vs = cps[k].cls & WB_F_EMOJI;
                joined = true;
                end = j = k + 1;
                continue;
            }
            if (!joined) {
                for (k = j; k < n && cps[k].cp >= CP_TAG_FIRST &&
                            cps[k].cp <= CP_TAG_LAST; k++)
                    ;
                if (k > j && k < n && cps[k].cp == CP_TAG_TERM)
                    end = k + 1;
            }
            break;
        } else {
            break;
        }
    }
    return end;
}

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

/* The end of the token StandardTokenizerImpl matches at cps[i], or i. */
static size_t token_end(const cpinfo *cps, size_t n, size_t i, size_t *noword)
{
    const cpinfo *x = &cps[i];
    int c = x->cls & WB_CLASS;
    size_t end = i;
    if (i >= *noword && (wb_ahletter(c) || c == WB_NUMERIC ||
                         c == WB_KATAKANA || c == WB_EXTNUMLET)) {
        bool word;
        size_t j = word_end(cps, n, i, &word);
        if (word)
            end = j;
        else
            *noword = j; /* nor from the ExtendNumLets up to j */
    }
    if (emoji_start(x)) {
        size_t j = emoji_end(cps, n, i);
        if (j >= end)
            end = j;
    }
    if (end > i)
        return end;
    if (x->cls & WB_F_SA) {
        for (end = i + 1; end < n && ((cps[end].cls & WB_F_SA) ||
                                      cp_extend(&cps[end])); end++)
            ;
    } else if (x->cls & WB_F_IDEO) {
        end = skip_extend(cps, n, i + 1);
    }
    return end;
}

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
    pthread_once(&wb_bmp_once, wb_bmp_init);
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
    size_t i = 0, noword = 0;
    while (i < n && rc == 0) {
        size_t j = token_end(cps, n, i, &noword);
        if (j > i) {
            rc = emit(cps, i, j, stack_buf, sizeof stack_buf, &heap, &hcap,
                      cb, arg, oc);
            i = j;
        } else if (cps[i].cp == CP_ZWJ) {
            while (i < n && cps[i].cp == CP_ZWJ) /* none starts an emoji */
                i++;
        } else {
            i++;
        }
    }
    free(heap);
    if (cps != stack_cps)
        free(cps);
    return rc;
}

/* wb_class() of each ASCII byte, as a digit ("1" WB_ALETTER, "2"
 * WB_NUMERIC, "4" WB_EXTNUMLET, "6" WB_MIDLETTER, "7" WB_MIDNUMLET, "8"
 * WB_MIDNUM, "0" WB_OTHER), with the apostrophe as MidNumLet and the
 * quotation mark as Other: they differ only after a Hebrew letter. */
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
 * class is Extend, Katakana, Hebrew_Letter or Ideographic and no emoji
 * sequence can form (a keycap needs U+20E3), so a word is a run of
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
