/*
 * test_units: unit tests of src/query and the DSL -- the analyzer (ASCII,
 * Persian, CJK, URLs, user agents, emoji), the postings block codec, dates
 * and norms, mapping inference and explicit mappings, document validation
 * errors, exact integers beyond 2^53, DSL errors, _source filtering,
 * explain, and a damaged segment index file.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "mapping/analysis.h"
#include "time/datemath.h"
#include "search_render.h"
#include "index/postings.h"
#include "qtest.h"
#include "fds_numfmt.h"
#include "query.h"
#include "query_int.h"
#include "index/sidx_format.h"
#include "index/sidx_int.h"
#include "index/term_pat.h"
#include "fds_text.h"

/* ---- analyzer ------------------------------------------------------------ */

static char toks[4096];

static int join_tok(void *arg, const char *t, size_t n)
{
    (void)arg;
    size_t l = strlen(toks);
    if (l)
        toks[l++] = '|';
    memcpy(toks + l, t, n);
    toks[l + n] = 0;
    return 0;
}

static const char *an(const char *s)
{
    toks[0] = 0;
    fds_analyze(s, strlen(s), join_tok, NULL);
    return toks;
}

static void test_analyzer(void)
{
    ASSERT_STR(an("/image/60844/productModel/200x200"),
               "image|60844|productmodel|200x200");
    ASSERT_STR(an("Mozilla/5.0 (compatible; AhrefsBot/6.1; +http://ahrefs.com/robot/)"),
               "mozilla|5.0|compatible|ahrefsbot|6.1|http|ahrefs.com|robot");
    ASSERT_STR(an("Hello, World! It's 3.14 and 1,000,000."),
               "hello|world|it's|3.14|and|1,000,000");
    ASSERT_STR(an("foo_bar U.S.A. a.b."), "foo_bar|u.s.a|a.b");
    ASSERT_STR(an("ÉCOLE Straße"), "école|straße");
    ASSERT_STR(an("中文字"), "中|文|字");
    /* Persian: words, a zero-width non-joiner inside a word, Persian digits */
    ASSERT_STR(an("گوشی موبایل سامسونگ"), "گوشی|موبایل|سامسونگ");
    ASSERT_STR(an("می\xe2\x80\x8cخواهم"), "می\xe2\x80\x8cخواهم");
    ASSERT_STR(an("قیمت ۱۲۳۴ تومان"), "قیمت|۱۲۳۴|تومان");
    /* percent-encoded URLs are analysed as stored (not decoded) */
    ASSERT_STR(an("/filter/27|13%20%D9%85%DA%AF"), "filter|27|13|20|d9|85|da|af");
    ASSERT_STR(an("   ...---   "), "");
    ASSERT_STR(an(""), "");
    /* invalid UTF-8 separates tokens */
    ASSERT_STR(an("ab\xff" "cd"), "ab|cd");
    /* Word_Break classes (UAX #29 table 3), the tokens of Lucene's
     * StandardTokenizer: U+200B ZERO WIDTH SPACE is Cf but not Format, so
     * it separates; the soft hyphen and word joiner (Format), ZWNJ (Extend)
     * and ZWJ stay inside a word (WB4) */
    ASSERT_STR(an("x\u200By"), "x|y");
    ASSERT_STR(an("soft\u00ADhyphen word\u2060joiner zw\u200Cnj zw\u200Dj"),
               "soft\u00ADhyphen|word\u2060joiner|zw\u200Cnj|zw\u200Dj");
    /* Hebrew quotes (WB7a-c; not after a Mid*, as the jflex rule), Thai runs
     * apart from digits (Line_Break=Complex_Context), the katakana middle
     * dot (Other), Kangxi radicals and U+3007 (Han, one a token), a
     * combining voiced mark (Extend) */
    ASSERT_STR(an("א'ב צה' א\"ב a.ב\"ג"), "א'ב|צה'|א\"ב|a.ב|ג");
    ASSERT_STR(an("ไทย123 ภาษาไทย"), "ไทย|123|ภาษาไทย");
    ASSERT_STR(an("カタ・カナ"), "カタ|カナ");
    ASSERT_STR(an("⺀〇々一"), "⺀|〇|々|一");
    ASSERT_STR(an("\u3099あ\u3099"), "あ\u3099");
    /* emoji: StandardTokenizer's <EMOJI> tokens (presentation, modifier,
     * flag, keycap, ZWJ and tag sequences), lower case leaves them be */
    ASSERT_STR(an("I \u2764\uFE0F logs \U0001F44D\U0001F3FD"),
               "i|\u2764\uFE0F|logs|\U0001F44D\U0001F3FD");
    ASSERT_STR(an("\U0001F1EE\U0001F1F7 flag"), "\U0001F1EE\U0001F1F7|flag");
    ASSERT_STR(an("1\uFE0F\u20E3 keycap #\uFE0F\u20E3"),
               "1\uFE0F\u20E3|keycap|#\uFE0F\u20E3");
    ASSERT_STR(an("\U0001F468\u200D\U0001F469\u200D\U0001F467 family"),
               "\U0001F468\u200D\U0001F469\u200D\U0001F467|family");
    ASSERT_STR(an("中文😀テスト ひらがな👍日本"),
               "中|文|😀|テスト|ひ|ら|が|な|👍|日|本");
    ASSERT_STR(an("poo💩poo 💩💩 Copyright © 2019"),
               "poo|💩|poo|💩|💩|copyright|©|2019");
    ASSERT_STR(an("\U0001F1FA\U0001F1F8\U0001F1FA\U0001F1F8\U0001F1FA"),
               "\U0001F1FA\U0001F1F8|\U0001F1FA\U0001F1F8"); /* a lone RI is none */
    ASSERT_STR(an("\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"),
               "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F");
    ASSERT_STR(an("\U0001F468\U0001F3FC\u200D\u2695\uFE0F"),
               "\U0001F468\U0001F3FC\u200D\u2695\uFE0F");
    /* the text presentation selector ends an emoji; a ZWJ may start one */
    ASSERT_STR(an("#\uFE0E 3\uFE0E \u2B55\uFE0E\u200D\u2B55\uFE0E"),
               "3\uFE0E|\u2B55|\u200D\u2B55");
    /* a lone skin tone is an emoji; after a letter it extends the word
     * (Emoji_Modifier is Extend since Unicode 11: Lucene 9's tables) */
    ASSERT_STR(an("\U0001F3FD a\U0001F3FD"), "\U0001F3FD|a\U0001F3FD");
    /* a letter that is also an emoji: the longer match */
    ASSERT_STR(an("\u24C2\uFE0F \u2139x"), "\u24DC\uFE0F|\u2139x");
    /* long runs of joiners stay linear and make no token */
    char zwj[3 * 4000 + 1];
    for (int i = 0; i < 4000; i++)
        memcpy(zwj + 3 * i, "\u200D", 3);
    zwj[3 * 4000] = 0;
    ASSERT_STR(an(zwj), "");
    /* long tokens are split at 255 characters */
    char longw[600];
    memset(longw, 'a', 600);
    longw[599] = 0;
    an(longw);
    ASSERT(strlen(toks) == 599 + 2);
}

/* ---- postings, dates, norms ---------------------------------------------- */

static void test_postings(void)
{
    uint32_t docs[128], tfs[128], d2[128], t2[128];
    uint8_t buf[FDS_POSTINGS_BLOCK_BOUND(128) + 64]; /* + room past a block */
    uint64_t r = 12345;
    for (int round = 0; round < 200; round++) {
        unsigned n = 1 + (unsigned)(r % 128);
        uint32_t base = (uint32_t)(r % 1000), d = base;
        for (unsigned i = 0; i < n; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            d += (uint32_t)(r >> 60) + (round % 7 == 0 ? (uint32_t)(r >> 40) % 100000 : 0);
            docs[i] = d++;
            tfs[i] = 1 + (uint32_t)(r >> 58);
        }
        size_t len = fds_postings_encode_block(docs, tfs, n, base, buf);
        long got = fds_postings_decode_block(buf, buf + len, n, base,
                                             UINT32_MAX, d2, t2);
        ASSERT(got == (long)len);
        ASSERT(memcmp(docs, d2, n * 4) == 0 && memcmp(tfs, t2, n * 4) == 0);
        /* truncated input and doc ids past max_doc are errors */
        ASSERT(fds_postings_decode_block(buf, buf + len - 1, n, base,
                                         UINT32_MAX, d2, t2) < 0);
        ASSERT(fds_postings_decode_block(buf, buf + len, n, base,
                                         docs[n - 1], d2, t2) < 0);
    }
    /* full blocks (the constant-width unpacking) of every gap width 0..32,
     * the widest gap 2^w - 1 at a varying place */
    for (unsigned w = 0; w <= 32; w++) {
        uint32_t base = w == 32 ? 0 : 7, d = base;
        uint64_t maxg = w == 32 ? 0xF0000000ull : (1ull << w) - 1;
        uint64_t small = maxg < 1000 ? maxg : 1000; /* the other gaps */
        for (unsigned i = 0; i < 128; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t g = i == (w * 5) % 128 ? maxg : (r >> 20) % (small + 1);
            docs[i] = d + (uint32_t)g;
            d = docs[i] + 1;
            tfs[i] = w % 3 ? 1 : 1 + (uint32_t)(r >> 61);
        }
        size_t len = fds_postings_encode_block(docs, tfs, 128, base, buf);
        ASSERT_EQ_U(buf[0] & 0x3Fu, w);
        long got = fds_postings_decode_block(buf, buf + len, 128, base,
                                             UINT32_MAX, d2, t2);
        ASSERT(got == (long)len);
        ASSERT(memcmp(docs, d2, sizeof docs) == 0 &&
               memcmp(tfs, t2, sizeof tfs) == 0);
        ASSERT(fds_postings_decode_block(buf, buf + len, 128, base,
                                         docs[127], d2, t2) < 0);
        /* with room past the block (a term's next blocks): the unpacking
         * by 8-byte loads, the same docs (above, an all-tf-1 block ends
         * with its gaps and takes the byte-at-a-time path) */
        memset(buf + len, 0xA5, 64);
        memset(d2, 0, sizeof d2);
        got = fds_postings_decode_block(buf, buf + len + 64, 128, base,
                                        UINT32_MAX, d2, t2);
        ASSERT(got == (long)len);
        ASSERT(memcmp(docs, d2, sizeof docs) == 0 &&
               memcmp(tfs, t2, sizeof tfs) == 0);
        ASSERT(fds_postings_decode_block(buf, buf + len + 64, 128, base,
                                         docs[127], d2, t2) < 0);
    }
    /* bit-packed frequencies (format 8): every width 1..32 of tf - 1, full
     * and partial blocks, with and without room past the block; the
     * varints kept where smaller (one large tf among 1s); a header with
     * both "all tf 1" and "packed" and a width byte of 0 or 33 refused */
    for (unsigned tw = 1; tw <= 32; tw++) {
        for (unsigned n = 1; n <= 128; n += n < 8 ? 1 : 40) {
            unsigned nn = tw % 2 ? n : 128;
            uint32_t base = tw, d = base;
            uint64_t maxt = tw == 32 ? 0xFFFFFFFEull : (1ull << tw) - 1;
            for (unsigned i = 0; i < nn; i++) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                docs[i] = d + (uint32_t)(r >> 62);
                d = docs[i] + 1;
                /* the largest tf - 1 of the width on most values */
                tfs[i] = 1 + (uint32_t)(i % 3 == 2 ? (r >> 20) % (maxt + 1)
                                                   : maxt);
            }
            size_t vb = 0; /* the varints' bytes: packed when no smaller */
            for (unsigned i = 0; i < nn; i++)
                for (uint32_t t = tfs[i]; ; t >>= 7) {
                    vb++;
                    if (t < 128)
                        break;
                }
            size_t len = fds_postings_encode_block(docs, tfs, nn, base, buf);
            size_t at = 1 + ((size_t)nn * (buf[0] & 0x3Fu) + 7) / 8;
            /* the writer packs widths 1, 2 and 4 (3 as 4) */
            unsigned ew = tw == 3 ? 4 : tw;
            bool pk = ew <= 4 && 1 + ((size_t)nn * ew + 7) / 8 <= vb;
            ASSERT(!(buf[0] & 0x80u) == !pk);
            if (pk)
                ASSERT_EQ_U(buf[at], ew);
            ASSERT_EQ_U(len, at + (pk ? 1 + ((size_t)nn * ew + 7) / 8 : vb));
            if (!pk) { /* the decoder takes any width: this one packed by hand */
                buf[0] |= 0x80u;
                buf[at] = (uint8_t)tw;
                memset(buf + at + 1, 0, ((size_t)nn * tw + 7) / 8 + 64);
                for (unsigned i = 0; i < nn; i++)
                    for (unsigned k = 0; k < tw; k++)
                        if (((tfs[i] - 1) >> k) & 1) {
                            size_t bit = (size_t)i * tw + k;
                            buf[at + 1 + bit / 8] |= (uint8_t)(1u << (bit % 8));
                        }
                len = at + 1 + ((size_t)nn * tw + 7) / 8;
            }
            ASSERT(len <= FDS_POSTINGS_BLOCK_BOUND(nn));
            for (unsigned room = 0; room <= 64; room += 64) {
                memset(buf + len, 0x5A, room);
                memset(t2, 0, sizeof t2);
                long got = fds_postings_decode_block(buf, buf + len + room, nn,
                                                     base, UINT32_MAX, d2, t2);
                ASSERT(got == (long)len);
                ASSERT(memcmp(docs, d2, nn * 4) == 0 &&
                       memcmp(tfs, t2, nn * 4) == 0);
            }
            ASSERT(fds_postings_decode_block(buf, buf + len - 1, nn, base,
                                             UINT32_MAX, d2, t2) < 0);
        }
    }
    {
        uint32_t base = 0;
        for (unsigned i = 0; i < 128; i++) {
            docs[i] = i * 3;
            tfs[i] = i == 77 ? 100000 : 1 + (i % 2);
        }
        size_t len = fds_postings_encode_block(docs, tfs, 128, base, buf);
        ASSERT(!(buf[0] & 0xC0u)); /* varints: 130 bytes against 1 + 272 */
        ASSERT(fds_postings_decode_block(buf, buf + len, 128, base, UINT32_MAX,
                                         d2, t2) == (long)len);
        ASSERT(memcmp(tfs, t2, sizeof tfs) == 0);
        tfs[77] = 3;
        len = fds_postings_encode_block(docs, tfs, 128, base, buf);
        ASSERT(buf[0] & 0x80u);
        size_t at = 1 + (128 * (buf[0] & 0x3Fu) + 7) / 8;
        ASSERT_EQ_U(buf[at], 2u); /* tfs 1 to 3 */
        ASSERT_EQ_U(len, at + 1 + 32);
        buf[0] |= 0x40u; /* both bits */
        ASSERT(fds_postings_decode_block(buf, buf + len, 128, base, UINT32_MAX,
                                         d2, t2) < 0);
        buf[0] &= (uint8_t)~0x40u;
        buf[at] = 0;
        ASSERT(fds_postings_decode_block(buf, buf + len, 128, base, UINT32_MAX,
                                         d2, t2) < 0);
        buf[at] = 33;
        ASSERT(fds_postings_decode_block(buf, buf + len, 128, base, UINT32_MAX,
                                         d2, t2) < 0);
    }
    int64_t ms;
    ASSERT(fds__parse_date("2019-01-22T03:56:14+03:30", 25, false, &ms) == 0);
    ASSERT(ms == 1548116774000LL);
    ASSERT(fds__parse_date("2019-01-22T00:26:14.5Z", 22, false, &ms) == 0);
    ASSERT(ms == 1548116774500LL);
    ASSERT(fds__parse_date("2019-01-22", 10, false, &ms) == 0);
    ASSERT(ms == 1548115200000LL);
    ASSERT(fds__parse_date("2019-02-30", 10, false, &ms) != 0);
    ASSERT(fds__parse_date("22/Jan/2019", 11, false, &ms) != 0);
    ASSERT(fds__parse_date("1548116774000", 13, true, &ms) == 0 && ms == 1548116774000LL);
    /* Lucene SmallFloat.intToByte4: exact below 24, 4 significant bits above */
    for (uint32_t l = 0; l < 24; l++)
        ASSERT(fds__norm_decode(fds__norm_encode(l)) == l);
    ASSERT(fds__norm_encode(100) == 57 && fds__norm_decode(57) == 96);
    for (uint32_t l = 1; l < 100000; l = l * 3 / 2 + 1)
        ASSERT(fds__norm_decode(fds__norm_encode(l)) <= l);
    int64_t v;
    ASSERT(fds__parse_long("9007199254740993", 16, false, &v) == 0 &&
           v == 9007199254740993LL);
    ASSERT(fds__parse_long("9223372036854775808", 19, false, &v) == FDS_ERANGE);
    ASSERT(fds__parse_long("-9223372036854775808", 20, false, &v) == 0 &&
           v == INT64_MIN);
}

/* ---- mappings and validation --------------------------------------------- */

static int add_doc(fds_sidx_writer *w, uint32_t d, const char *json,
                   fds_err *err)
{
    char id[16];
    snprintf(id, sizeof id, "%u", d);
    fds_err_clear(err);
    return fds_sidx_writer_add(w, d, id, strlen(id), (const uint8_t *)json,
                               strlen(json), err);
}

static int validate(fds_mapping *m, const char *json, fds_err *err)
{
    fds_err_clear(err);
    return fds_doc_validate(m, (const uint8_t *)json, strlen(json), err);
}

static void test_mapping(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    ASSERT(fds_mapping_merge_json(m, "{\"properties\":{\"status\":{\"type\":\"integer\"},"
                                     "\"tags\":{\"type\":\"keyword\"}}}", 75, &err) == 0);
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    ASSERT(add_doc(w, 0, "{\"msg\":\"Hello\",\"n\":5,\"f\":1.5,"
                         "\"t\":\"2019-01-22T03:56:14+03:30\",\"b\":true,"
                         "\"o\":{\"x\":\"y\"},\"status\":200,\"tags\":[\"a\",\"b\"]}",
                   &err) == 0);
    char *j = fds_mapping_to_json(m);
    ASSERT_STR(j, "{\"properties\":{\"b\":{\"type\":\"boolean\"},"
                  "\"f\":{\"type\":\"float\"},"
                  "\"msg\":{\"type\":\"text\",\"fields\":{\"keyword\":{\"type\":"
                  "\"keyword\",\"ignore_above\":256}}},"
                  "\"n\":{\"type\":\"long\"},"
                  "\"o\":{\"properties\":{\"x\":{\"type\":\"text\",\"fields\":"
                  "{\"keyword\":{\"type\":\"keyword\",\"ignore_above\":256}}}}},"
                  "\"status\":{\"type\":\"integer\"},"
                  "\"t\":{\"type\":\"date\"},\"tags\":{\"type\":\"keyword\"}}}");
    /* the JSON round-trips through merge into an equal mapping */
    fds_mapping *m2 = fds_mapping_create();
    ASSERT(fds_mapping_merge_json(m2, j, strlen(j), &err) == 0);
    char *j2 = fds_mapping_to_json(m2);
    ASSERT_STR(j2, j);
    free(j2);
    fds_mapping_free(m2);
    free(j);

    /* conflicts and bad definitions */
    fds_err_clear(&err);
    ASSERT(fds_mapping_merge_json(m, "{\"properties\":{\"n\":{\"type\":\"keyword\"}}}",
                                  43, &err) == FDS_EINVAL);
    ASSERT(err.kind == FDS_KIND_INVALID_ARGUMENT);
    fds_err_clear(&err);
    ASSERT(fds_mapping_merge_json(m, "{\"properties\":{\"z\":{\"type\":\"nope\"}}}",
                                  40, &err) == FDS_EINVAL);
    ASSERT(strstr(err.reason, "No handler for type [nope]") != NULL);

    /* validation */
    ASSERT(validate(m, "{\"status\":\"abc\"}", &err) == FDS_EINVAL);
    ASSERT(err.kind == FDS_KIND_DOCUMENT_PARSE);
    ASSERT(strstr(err.reason, "failed to parse field [status] of type [integer]") != NULL);
    ASSERT(strstr(err.reason, "'abc'") != NULL);
    ASSERT(validate(m, "{\"status\":\"201\"}", &err) == 0); /* coerced */
    ASSERT(validate(m, "{\"status\":3000000000}", &err) == FDS_ERANGE ||
           err.code != 0);
    ASSERT(validate(m, "{\"t\":\"yesterday\"}", &err) != 0);
    ASSERT(strstr(err.reason, "of type [date]") != NULL);
    ASSERT(validate(m, "{\"o\":\"flat\"}", &err) != 0);
    ASSERT(strstr(err.reason, "object mapping for [o]") != NULL);
    ASSERT(validate(m, "{\"msg\":{\"a\":1}}", &err) != 0);
    ASSERT(validate(m, "[1,2]", &err) == FDS_EPARSE);
    ASSERT(validate(m, "", &err) == FDS_EPARSE);
    ASSERT(validate(m, "{\"a\":1,\"a\":2}", &err) == FDS_EPARSE);
    ASSERT(strstr(err.reason, "Duplicate field 'a'") != NULL);
    ASSERT(validate(m, "{\"o\":{\"x\":1,\"y\":{},\"x\":2}}", &err) == FDS_EPARSE);
    ASSERT(validate(m, "{\"a\":\"\\u0061\",\"\\u0061\":2}", &err) == FDS_EPARSE);
    ASSERT(validate(m, "{\"a\":\"\xff\"}", &err) == FDS_EPARSE);
    ASSERT(strstr(err.reason, "UTF-8") != NULL);
    ASSERT(validate(m, "{\"a\":\"\xc0\xaf\"}", &err) == FDS_EPARSE); /* overlong */
    ASSERT(validate(m, "{\"a\":\"\xed\xa0\x80\"}", &err) == FDS_EPARSE); /* surrogate */
    ASSERT(validate(m, "{\"a\":\"\\ud800\"}", &err) == FDS_EPARSE);
    ASSERT(validate(m, "{\"a\":1} x", &err) == FDS_EPARSE);
    ASSERT(validate(m, "{\"a\":01}", &err) == FDS_EPARSE);
    ASSERT(validate(m, "{\"a\":\"\\u0000x\"}", &err) == 0);
    ASSERT(validate(m, "{\"deep\":[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]}", &err) != 0);
    ASSERT(validate(m, "{\"ok\":\"\xd9\x85\xdb\x8c\"}", &err) == 0);
    /* a rejected document leaves no postings behind */
    ASSERT(add_doc(w, 1, "{\"msg\":\"ghost\",\"status\":\"abc\"}", &err) != 0);
    ASSERT(add_doc(w, 1, "{\"msg\":\"world\",\"n\":9007199254740993}", &err) == 0);
    ASSERT(add_doc(w, 2, "{\"msg\":\"x\",\"n\":9007199254740992}", &err) == 0);
    ASSERT(add_doc(w, 4, "{}", &err) == FDS_EINVAL); /* out of order */

    char path[] = "/tmp/fds-qunit-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    fds_err_clear(&err);
    ASSERT(fds_sidx_writer_write(w, path, &err) == 0);
    fds_sidx_writer_free(w);
    fds_sidx *s = NULL;
    ASSERT(fds_sidx_open(path, &s, &err) == 0);
    ASSERT(fds_sidx_max_doc(s) == 3);
    uint32_t doc;
    ASSERT(fds_sidx_find_id(s, "2", 1, &doc) == 0 && doc == 2);
    ASSERT(fds_sidx_find_id(s, "7", 1, &doc) == FDS_ENOTFOUND);
    size_t il;
    const char *id = fds_sidx_doc_id(s, 1, &il);
    ASSERT(id && il == 1 && id[0] == '1');
    fds_search_segment seg = {.sidx = s};

    struct { const char *body; uint64_t total; } cases[] = {
        {"{\"query\":{\"match\":{\"msg\":\"ghost\"}}}", 0},
        {"{\"query\":{\"match\":{\"msg\":\"HELLO world\"}}}", 2},
        {"{\"query\":{\"match\":{\"msg\":{\"query\":\"hello world\",\"operator\":\"and\"}}}}", 0},
        {"{\"query\":{\"term\":{\"n\":\"9007199254740993\"}}}", 1},
        {"{\"query\":{\"term\":{\"n\":9007199254740992}}}", 1},
        {"{\"query\":{\"range\":{\"n\":{\"gt\":9007199254740992}}}}", 1},
        {"{\"query\":{\"range\":{\"t\":{\"gte\":\"2019-01-22T00:26:14Z\",\"lt\":\"2019-01-23\"}}}}", 1},
        {"{\"query\":{\"range\":{\"t\":{\"gt\":\"2019-01-22T03:56:14+03:30\"}}}}", 0},
        {"{\"query\":{\"terms\":{\"tags\":[\"b\",\"zz\"]}}}", 1},
        {"{\"query\":{\"exists\":{\"field\":\"f\"}}}", 1},
        {"{\"query\":{\"ids\":{\"values\":[\"0\",\"2\",\"9\"]}}}", 2},
        {"{\"query\":{\"match\":{\"nosuchfield\":\"x\"}}}", 0},
        {"{\"query\":{\"bool\":{\"must_not\":[{\"ids\":{\"values\":[\"1\"]}}]}}}", 2},
        {"", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fds_search_request *r;
        fds_err_clear(&err);
        if (fds_search_parse(cases[i].body, strlen(cases[i].body), m, 0, &r, &err)) {
            fprintf(stderr, "parse %s: %s\n", cases[i].body, err.reason);
            fds_test_failures++;
            continue;
        }
        fds_search_result res;
        ASSERT(fds_search_execute(r, &seg, 1, &res, &err) == 0);
        if (res.total != cases[i].total) {
            fprintf(stderr, "%s: total %llu, expected %llu\n", cases[i].body,
                    (unsigned long long)res.total,
                    (unsigned long long)cases[i].total);
            fds_test_failures++;
        }
        fds_search_result_free(&res);
        fds_search_request_free(r);
    }
    fds_sidx_close(s);

    /* a damaged file is refused with its path */
    FILE *f = fopen(path, "r+b");
    fseek(f, 100, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 100, SEEK_SET);
    fputc(c ^ 0x20, f);
    fclose(f);
    fds_err_clear(&err);
    ASSERT(fds_sidx_open(path, &s, &err) == FDS_ECORRUPT);
    ASSERT(strstr(err.reason, path) != NULL);
    ASSERT(truncate(path, 50) == 0);
    fds_err_clear(&err);
    ASSERT(fds_sidx_open(path, &s, &err) == FDS_ECORRUPT);
    fds_err_clear(&err);
    ASSERT(fds_sidx_open("/nonexistent/x.sidx", &s, &err) == FDS_EIO);
    unlink(path);
    fds_mapping_free(m);
}

/* ---- DSL and rendering ----------------------------------------------------- */

static int parse_err(fds_mapping *m, const char *body, fds_err *err)
{
    fds_search_request *r = NULL;
    fds_err_clear(err);
    int rc = fds_search_parse(body, strlen(body), m, 0, &r, err);
    fds_search_request_free(r);
    return rc;
}

static const uint8_t *g_src;
static int fetch1(void *arg, const fds_hit *h, size_t n, const uint8_t **src,
                  size_t *len, fds_err *err)
{
    (void)arg; (void)h; (void)err;
    for (size_t i = 0; i < n; i++) {
        src[i] = g_src;
        len[i] = strlen((const char *)g_src);
    }
    return 0;
}

static void test_dsl(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    ASSERT(fds_mapping_merge_json(m, "{\"properties\":{\"msg\":{\"type\":\"text\"},"
                                     "\"n\":{\"type\":\"long\"}}}", 64, &err) == 0);
    ASSERT(parse_err(m, "{\"query\":{\"foo\":{}}}", &err) == FDS_EPARSE);
    ASSERT(err.kind == FDS_KIND_QUERY_PARSE);
    ASSERT_STR(err.reason, "unknown query [foo]");
    ASSERT(parse_err(m, "{\"query\":{\"match\":{\"msg\":\"x\"}", &err) == FDS_EPARSE);
    ASSERT(strstr(err.reason, "Failed to parse") != NULL);
    ASSERT(parse_err(m, "{\"qeury\":{}}", &err) == FDS_EPARSE);
    ASSERT(strstr(err.reason, "[qeury]") != NULL);
    ASSERT(parse_err(m, "{\"query\":{\"bool\":{\"must\":[{\"nope\":{}}]}}}", &err) == FDS_EPARSE);
    ASSERT_STR(err.reason, "unknown query [nope]");
    ASSERT(parse_err(m, "{\"query\":{\"match\":{\"msg\":\"a\"},\"term\":{}}}", &err) == FDS_EPARSE);
    ASSERT(parse_err(m, "{\"query\":{\"bool\":{\"must\":[],\"bogus\":1}}}", &err) == FDS_EPARSE);
    ASSERT(strstr(err.reason, "[bogus]") != NULL);
    ASSERT(parse_err(m, "{\"size\":10001}", &err) == FDS_EINVAL);
    ASSERT(err.kind == FDS_KIND_INVALID_ARGUMENT);
    ASSERT(strstr(err.reason, "Result window is too large, from + size must be "
                              "less than or equal to: [10000] but was [10001]") != NULL);
    ASSERT(parse_err(m, "{\"from\":9995,\"size\":10}", &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "{\"size\":-1}", &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "{\"sort\":[\"msg\"]}", &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "{\"sort\":[{\"n\":\"desc\"}],\"search_after\":[1,2]}", &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "[]", &err) == FDS_EPARSE);
    ASSERT(parse_err(m, "  ", &err) == 0);
    ASSERT(parse_err(m, "{\"query\":{\"range\":{\"n\":{\"gte\":\"abc\"}}}}", &err) != 0);

    fds_search_request *r;
    ASSERT(fds_search_parse("{}", 2, m, 0, &r, &err) == 0);
    fds_err_clear(&err);
    ASSERT(fds_search_apply_param(r, "size", "9000", &err) == 0);
    ASSERT(fds_search_apply_param(r, "from", "1001", &err) == FDS_EINVAL);
    fds_err_clear(&err);
    ASSERT(fds_search_apply_param(r, "size", "-3", &err) != 0);
    fds_err_clear(&err);
    ASSERT(fds_search_apply_param(r, "track_total_hits", "false", &err) == 0);
    ASSERT(fds_search_apply_param(r, "q", "msg:hello", &err) == 0);

    /* render: _source spliced verbatim, total omitted when not tracked */
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    const char *doc = "{ \"msg\" : \"hello there\", \"n\": 9007199254740993,"
                      " \"o\": {\"a\": 1, \"b\": [1.50, 2]} }";
    g_src = (const uint8_t *)doc;
    ASSERT(add_doc(w, 0, doc, &err) == 0);
    char path[] = "/tmp/fds-qdsl-XXXXXX";
    close(mkstemp(path));
    ASSERT(fds_sidx_writer_write(w, path, &err) == 0);
    fds_sidx_writer_free(w);
    fds_sidx *s;
    ASSERT(fds_sidx_open(path, &s, &err) == 0);
    unlink(path);
    fds_search_segment seg = {.sidx = s};
    fds_search_result res;
    ASSERT(fds_search_execute(r, &seg, 1, &res, &err) == 0);
    size_t len;
    char *out = fds_search_render(r, &res, &seg, "idx", 3, &(fds_hit_source){.fetch = fetch1}, &len, &err);
    ASSERT(out && strstr(out, "\"_source\":{ \"msg\" : \"hello there\", \"n\": "
                              "9007199254740993, \"o\": {\"a\": 1, \"b\": [1.50, 2]} }"));
    ASSERT(out && !strstr(out, "\"total\":{"));
    if (fds_test_failures && out)
        fprintf(stderr, "%s\n", out);
    ASSERT(out && strstr(out, "{\"took\":3,\"timed_out\":false,\"_shards\":{\"total\":1,"
                              "\"successful\":1,\"skipped\":0,\"failed\":0},\"hits\":{"));
    free(out);
    fds_search_result_free(&res);
    fds_search_request_free(r);

    /* _source filtering keeps bytes; explain; count form */
    const char *b2 = "{\"query\":{\"match\":{\"msg\":\"hello\"}},\"explain\":true,"
                     "\"_source\":{\"includes\":[\"o.*\",\"n\"],\"excludes\":[\"o.a\"]}}";
    ASSERT(fds_search_parse(b2, strlen(b2), m, 0, &r, &err) == 0);
    ASSERT(fds_search_execute(r, &seg, 1, &res, &err) == 0);
    ASSERT(res.nhits == 1 && res.explain != NULL);
    out = fds_search_render(r, &res, &seg, "idx", 3, &(fds_hit_source){.fetch = fetch1}, &len, &err);
    ASSERT(out && strstr(out, "\"_source\":{\"n\":9007199254740993,\"o\":{\"b\":[1.50, 2]}}"));
    ASSERT(out && strstr(out, "\"_explanation\":{\"value\":"));
    ASSERT(out && strstr(out, "idf, computed as log(1 + (N - n + 0.5) / (n + 0.5)) from:"));
    ASSERT(out && strstr(out, "\"total\":{\"value\":1,\"relation\":\"eq\"}"));
    if (fds_test_failures && out)
        fprintf(stderr, "%s\n", out);
    free(out);
    fds_search_result_free(&res);
    fds_search_request_free(r);

    ASSERT(fds_search_parse("{\"query\":{\"match_all\":{}}}", 26, m, 1, &r, &err) == 0);
    ASSERT(fds_search_execute(r, &seg, 1, &res, &err) == 0);
    out = fds_search_render(r, &res, &seg, "idx", 0, NULL, &len, &err);
    ASSERT_STR(out, "{\"count\":1,\"_shards\":{\"total\":1,\"successful\":1,"
                    "\"skipped\":0,\"failed\":0}}");
    free(out);
    fds_search_result_free(&res);
    fds_search_request_free(r);
    ASSERT(parse_err(m, "{\"query\":{\"match_all\":{}},\"size\":3}", &err) == 0);
    fds_err_clear(&err);
    ASSERT(fds_search_parse("{\"size\":3}", 10, m, 1, &r, &err) == FDS_EPARSE);
    fds_sidx_close(s);
    fds_mapping_free(m);
}

/* an empty segment and an empty segment list are valid */
static void test_empty(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    char path[] = "/tmp/fds-qempty-XXXXXX";
    close(mkstemp(path));
    fds_err err;
    fds_err_clear(&err);
    ASSERT(fds_sidx_writer_write(w, path, &err) == 0);
    fds_sidx_writer_free(w);
    fds_sidx *s = NULL;
    ASSERT(fds_sidx_open(path, &s, &err) == 0);
    unlink(path);
    if (!s) {
        fds_mapping_free(m);
        return;
    }
    ASSERT(fds_sidx_max_doc(s) == 0);
    uint32_t d;
    ASSERT(fds_sidx_find_id(s, "x", 1, &d) == FDS_ENOTFOUND);
    fds_search_request *r;
    ASSERT(fds_search_parse("", 0, m, 0, &r, &err) == 0);
    fds_search_segment seg = {.sidx = s};
    fds_search_result res;
    for (unsigned n = 0; n <= 1; n++) {
        ASSERT(fds_search_execute(r, &seg, n, &res, &err) == 0);
        ASSERT(res.total == 0 && res.nhits == 0);
        size_t len;
        char *out = fds_search_render(r, &res, &seg, "e", 0, NULL, &len, &err);
        ASSERT(out && strstr(out, "\"total\":{\"value\":0,\"relation\":\"eq\"},"
                                  "\"max_score\":null,\"hits\":[]"));
        free(out);
        fds_search_result_free(&res);
    }
    fds_search_request_free(r);
    fds_sidx_close(s);
    fds_mapping_free(m);
}

/* Write w's segment to a temporary file, free w, and open the segment
 * (NULL on failure, which is reported); the file is unlinked. */
static fds_sidx *write_open(fds_sidx_writer *w)
{
    fds_err err;
    char path[] = "/tmp/fds-qseg-XXXXXX";
    close(mkstemp(path));
    ASSERT(fds_sidx_writer_write(w, path, &err) == 0);
    fds_sidx_writer_free(w);
    fds_sidx *s = NULL;
    ASSERT(fds_sidx_open(path, &s, &err) == 0);
    unlink(path);
    return s;
}

/* Hits of query q over segment s under mapping m (UINT64_MAX on error). */
static uint64_t count_in(fds_mapping *m, fds_sidx *s, const char *q)
{
    fds_err err;
    fds_search_request *r = NULL;
    uint64_t total = UINT64_MAX;
    fds_search_result res;
    fds_search_segment seg = {.sidx = s};
    if (s && fds_search_parse(q, strlen(q), m, 0, &r, &err) == 0 &&
        fds_search_execute(r, &seg, 1, &res, &err) == 0) {
        total = res.total;
        fds_search_result_free(&res);
    }
    fds_search_request_free(r);
    return total;
}

/* Hits of query `q` over one segment of docs `docs` under mapping m. */
static uint64_t count_of(fds_mapping *m, const char *const *docs, size_t n,
                         const char *q)
{
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    fds_err err;
    for (size_t i = 0; i < n; i++)
        ASSERT(add_doc(w, (uint32_t)i, docs[i], &err) == 0);
    fds_sidx *s = write_open(w);
    uint64_t total = count_in(m, s, q);
    fds_sidx_close(s);
    return total;
}

/* null_value, copy_to and objects with "enabled": false, as Elasticsearch
 * 8's DocumentParser applies them: a null indexes as the null_value (a
 * multi-field takes its own), a copied value is indexed at the target (a
 * null there takes the target's null_value; the target's copy_to is not
 * followed), and nothing under a disabled object is mapped or indexed. */
static int merge_lit(fds_mapping *m, const char *json, fds_err *err)
{
    fds_err_clear(err);
    return fds_mapping_merge_json(m, json, strlen(json), err);
}

static void test_doc_params(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    const char *def =
        "{\"properties\":{\"k\":{\"type\":\"keyword\",\"null_value\":\"NULL\","
        "\"copy_to\":[\"all\"],\"fields\":{\"r\":{\"type\":\"keyword\"}}},"
        "\"n\":{\"type\":\"integer\",\"null_value\":\"7\"},"
        "\"all\":{\"type\":\"keyword\",\"null_value\":\"ALLNULL\",\"copy_to\":\"more\"},"
        "\"more\":{\"type\":\"keyword\"},"
        "\"o\":{\"type\":\"object\",\"enabled\":false,"
        "\"properties\":{\"x\":{\"type\":\"keyword\"}}}}}";
    ASSERT(fds_mapping_merge_json(m, def, strlen(def), &err) == 0);
    const char *docs[] = {
        "{\"k\":null,\"n\":null,\"o\":{\"x\":\"v\",\"y\":{\"z\":[1,\"a\",{}]}}}",
        "{\"k\":\"a\",\"o\":\"a concrete value\"}",
        "{\"k\":[\"b\",null],\"o.x\":\"v\",\"o\":[{\"x\":\"v\"}]}"};
    ASSERT(count_of(m, docs, 3, "{\"query\":{\"term\":{\"k\":\"NULL\"}}}") == 2);
    ASSERT(count_of(m, docs, 3, "{\"query\":{\"term\":{\"k.r\":\"NULL\"}}}") == 0);
    ASSERT(count_of(m, docs, 3, "{\"query\":{\"term\":{\"n\":7}}}") == 1);
    ASSERT(count_of(m, docs, 3, "{\"query\":{\"exists\":{\"field\":\"n\"}}}") == 1);
    /* the copy of a null is the target's null: ALLNULL, never NULL */
    ASSERT(count_of(m, docs, 3, "{\"query\":{\"term\":{\"all\":\"ALLNULL\"}}}") == 2);
    ASSERT(count_of(m, docs, 3, "{\"query\":{\"term\":{\"all\":\"NULL\"}}}") == 0);
    ASSERT(count_of(m, docs, 3, "{\"query\":{\"terms\":{\"all\":[\"a\",\"b\"]}}}") == 2);
    ASSERT(count_of(m, docs, 3, "{\"query\":{\"exists\":{\"field\":\"more\"}}}") == 0);
    ASSERT(count_of(m, docs, 3, "{\"query\":{\"exists\":{\"field\":\"o.x\"}}}") == 0);
    /* validation and dynamic mapping never look under the disabled object */
    for (size_t i = 0; i < 3; i++) {
        ASSERT(validate(m, docs[i], &err) == 0);
        fds_err_clear(&err);
        ASSERT(fds_doc_map(m, (const uint8_t *)docs[i], strlen(docs[i]), &err) == 0);
    }
    fds_field_info fi;
    ASSERT(fds_mapping_field(m, "o.y", 3, &fi) == FDS_ENOTFOUND);
    ASSERT(fds_mapping_field(m, "o.y.z", 5, &fi) == FDS_ENOTFOUND);
    /* a copied value is checked against its target */
    ASSERT(merge_lit(m, "{\"properties\":{\"s\":{\"type\":\"keyword\","
                                     "\"copy_to\":\"n\"}}}", &err) == 0);
    ASSERT(validate(m, "{\"s\":\"abc\"}", &err) == FDS_EINVAL);
    ASSERT(err.kind == FDS_KIND_DOCUMENT_PARSE && strstr(err.reason, "[n]"));
    /* the parameters survive the JSON round trip */
    char *j = fds_mapping_to_json(m);
    ASSERT(j && strstr(j, "\"o\":{\"enabled\":false,\"properties\":{\"x\""));
    ASSERT(j && strstr(j, "\"null_value\":\"7\""));
    ASSERT(j && strstr(j, "\"copy_to\":[\"all\"]"));
    fds_mapping *m2 = fds_mapping_create();
    ASSERT(j && fds_mapping_merge_json(m2, j, strlen(j), &err) == 0);
    char *j2 = fds_mapping_to_json(m2);
    ASSERT(j && j2 && !strcmp(j, j2));
    free(j);
    free(j2);
    fds_mapping_free(m2);
    /* parameters that cannot change */
    ASSERT(merge_lit(m, "{\"properties\":{\"k\":{\"type\":\"keyword\","
                                     "\"null_value\":\"X\"}}}", &err) == FDS_EINVAL);
    ASSERT(strstr(err.reason, "Cannot update parameter [null_value]"));
    ASSERT(merge_lit(m, "{\"properties\":{\"o\":{\"enabled\":true}}}", &err) == FDS_EINVAL);
    ASSERT(merge_lit(m, "{\"_source\":{\"enabled\":false}}", &err) == 0);
    fds_mapping_seal(m); /* an existing index's: it no longer changes */
    ASSERT(merge_lit(m, "{\"_source\":{\"enabled\":true}}", &err) == FDS_EINVAL);
    ASSERT(strstr(err.reason, "Cannot update parameter [enabled]"));
    fds_mapping_free(m);
    /* the root's enabled: false indexes nothing */
    m = fds_mapping_create();
    ASSERT(merge_lit(m, "{\"enabled\":false}", &err) == 0);
    const char *d1[] = {"{\"a\":\"x\",\"b\":{\"c\":1}}"};
    ASSERT(count_of(m, d1, 1, "{\"query\":{\"exists\":{\"field\":\"a\"}}}") == 0);
    ASSERT(fds_mapping_field(m, "a", 1, &fi) == FDS_ENOTFOUND);
    fds_mapping_free(m);
}

/* The stored record of a document without _source: the doc-value fields by
 * full path, values in document order (nulls as null_value, multi-fields
 * and copy_to targets included, keywords past ignore_above, text, unmapped
 * paths and disabled objects left out), and nothing at all for a document
 * of text only. */
static void test_dv_record(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    ASSERT(merge_lit(m, "{\"_source\":{\"enabled\":false},\"properties\":{"
                        "\"t\":{\"type\":\"text\",\"fields\":{\"k\":{\"type\":\"keyword\","
                        "\"ignore_above\":5}}},"
                        "\"k\":{\"type\":\"keyword\",\"null_value\":\"N\",\"copy_to\":\"c\"},"
                        "\"c\":{\"type\":\"keyword\"},\"n\":{\"type\":\"long\"},"
                        "\"b\":{\"type\":\"boolean\"},\"o\":{\"enabled\":false},"
                        "\"u\":{\"type\":\"text\"}}}", &err) == 0);
    ASSERT(!fds_mapping_source_enabled(m));
    const char *doc = "{\"t\":[\"short\",\"too long\"],\"k\":[\"b\\\"q\",null],\"n\":2,"
                      "\"b\":\"true\",\"o\":{\"n\":1},\"u\":\"text only\",\"x\":1}";
    uint8_t *rec = NULL;
    size_t len = 0;
    ASSERT(fds_doc_dv_record(m, (const uint8_t *)doc, strlen(doc), &rec, &len) == 0);
    const char *want = "{\"b\":[\"true\"],\"c\":[\"b\\\"q\"],\"k\":[\"b\\\"q\",\"N\"],"
                       "\"n\":[2],\"t.k\":[\"short\"]}";
    ASSERT(rec && len == strlen(want) && !memcmp(rec, want, len));
    if (rec && len != strlen(want))
        fprintf(stderr, "record: %.*s\n", (int)len, rec);
    free(rec);
    ASSERT(fds_doc_dv_record(m, (const uint8_t *)"{\"u\":\"x\"}", 9, &rec, &len) == 0);
    ASSERT(rec == NULL && len == 0);
    fds_mapping_free(m);
}

/* A block's competitive impacts (format 4): "a" once in short docs and
 * three times in long ones gives two pairs, (short norm, 1) then (long
 * norm, 3); "x1", always once in the long docs, gives none ((max tf, min
 * norm) is exact). */
static void test_impacts(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    fds_err err;
    for (uint32_t i = 0; i < 200; i++)
        ASSERT(add_doc(w, i, i % 2 ? "{\"msg\":\"a\"}"
                                   : "{\"msg\":\"a a a x1 x2 x3 x4 x5 x6 x7 x8\"}",
                       &err) == 0);
    fds_sidx *s = write_open(w);
    const fds_sfield *f = s ? fds__sidx_field(s, "msg", 3) : NULL;
    fds_sterm t;
    ASSERT(f && fds__sidx_term(s, f, "a", 1, &t) == 0);
    if (f && t.skip) {
        const uint8_t *sk = t.skip, *imp = fds__skip_impacts(&t, sk);
        uint8_t short_nb = f->norms[1], long_nb = f->norms[0];
        ASSERT(short_nb < long_nb);
        /* the field's norm bytes that docs have: these two alone */
        unsigned seen = 0;
        for (int w = 0; w < 4; w++)
            seen += (unsigned)__builtin_popcountll(f->norm_seen[w]);
        ASSERT_EQ_U(seen, 2u);
        ASSERT((f->norm_seen[short_nb >> 6] >> (short_nb & 63)) & 1);
        ASSERT((f->norm_seen[long_nb >> 6] >> (long_nb & 63)) & 1);
        ASSERT_EQ_U(fds__skip_ilen(sk), 4u);
        ASSERT(imp[0] == short_nb && imp[1] == 1 && imp[2] == long_nb && imp[3] == 3);
        ASSERT(fds__get_u32(sk + 8) == 3 && sk[12] == short_nb);
        ASSERT(fds__sidx_term(s, f, "x1", 2, &t) == 0);
        ASSERT_EQ_U(fds__skip_ilen(t.skip), 0u);
    }
    fds_sidx_close(s);
    fds_mapping_free(m);
    /* 40 pairs that none dominates, doc i at norm byte 2i with tf i + 1:
     * every one is kept (version 5 merged them into 16 coarser pairs) */
    uint32_t tfs[40];
    uint8_t nbs[40], out[FDS_SIDX_IMPACTS_BYTES_MAX];
    for (unsigned i = 0; i < 40; i++) {
        tfs[i] = i + 1;
        nbs[i] = (uint8_t)(2 * i);
    }
    ASSERT_EQ_U(fds__sidx_impacts(tfs, nbs, 40, out), 80u);
    for (unsigned i = 0; i < 40; i++)
        ASSERT(out[2 * i] == 2 * i && out[2 * i + 1] == i + 1);
}

/* Call f(tf, norm, arg) for every impact pair of block b of term t, or
 * its (max tf, min norm) when it has none. */
static void each_impact(const fds_sterm *t, uint32_t b,
                        void (*f)(uint32_t, uint8_t, void *), void *arg)
{
    const uint8_t *sk = t->skip + (size_t)b * FDS_SIDX_SKIP_LEN;
    uint32_t ilen = fds__skip_ilen(sk), tf;
    const uint8_t *p = fds__skip_impacts(t, sk), *end = p + ilen;
    uint8_t nb;
    int r;
    while ((r = fds__impact_next(&p, end, &nb, &tf)) > 0)
        f(tf, nb, arg);
    ASSERT(r == 0);
    if (!ilen)
        f(fds__get_u32(sk + 8), sk[12], arg);
}

/* Pairs of all blocks' impacts, for test_fronts. */
typedef struct pair_list {
    fds_spair p[1 << 14];
    size_t n;
} pair_list;

static void pair_add(uint32_t tf, uint8_t nb, void *arg)
{
    pair_list *l = arg;
    if (l->n < sizeof l->p / sizeof *l->p)
        l->p[l->n++] = (fds_spair){tf, nb};
}

/* The frontier fds_sidx_open computes for a term of many blocks: exactly
 * the pairs of its blocks' impacts that no other pair dominates, in
 * increasing norm and frequency, its largest frequency the largest of any
 * block; and top-k pages over such terms are the exhaustive ones to the
 * bit (term bounds and the per-norm frequency caps come from it). */
static void test_fronts(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    fds_err err;
    uint64_t r = 99;
    uint32_t ndocs = (FDS_SFRONT_MIN_BLOCKS + 6) * FDS_POSTINGS_BLOCK;
    for (uint32_t i = 0; i < ndocs; i++) {
        char doc[256] = "{\"msg\":\"a";
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        unsigned tf = (unsigned)(r >> 61), len = (unsigned)(r >> 40) % 20;
        for (unsigned k = 0; k < tf; k++)
            strcat(doc, " a");
        for (unsigned k = 0; k < len; k++)
            strcat(doc, k % 3 ? " b" : " c");
        strcat(doc, "\"}");
        ASSERT(add_doc(w, i, doc, &err) == 0);
    }
    fds_sidx *s = write_open(w);
    const fds_sfield *f = s ? fds__sidx_field(s, "msg", 3) : NULL;
    fds_sterm t;
    ASSERT(f && fds__sidx_term(s, f, "a", 1, &t) == 0);
    ASSERT(f && t.front && t.nfront > 0);
    static pair_list all;
    all.n = 0;
    uint32_t tfmax = 0;
    for (uint32_t b = 0; f && t.front && b < t.nblocks; b++) {
        each_impact(&t, b, pair_add, &all);
        uint32_t tf = fds__get_u32(t.skip + (size_t)b * FDS_SIDX_SKIP_LEN + 8);
        tfmax = tf > tfmax ? tf : tfmax;
    }
    ASSERT(all.n < sizeof all.p / sizeof *all.p);
    for (uint32_t k = 0; f && t.front && k < t.nfront; k++)
        if (k)
            ASSERT(t.front[k].norm > t.front[k - 1].norm &&
                   t.front[k].tf > t.front[k - 1].tf);
    ASSERT(!t.front || t.front[t.nfront - 1].tf == tfmax);
    for (size_t i = 0; f && t.front && i < all.n; i++) {
        const fds_spair *a = &all.p[i];
        bool covered = false, dominated = false, listed = false;
        for (uint32_t k = 0; k < t.nfront; k++) {
            covered |= t.front[k].tf >= a->tf && t.front[k].norm <= a->norm;
            listed |= t.front[k].tf == a->tf && t.front[k].norm == a->norm;
        }
        for (size_t j = 0; j < all.n; j++) /* a frontier pair? */
            dominated |= (all.p[j].tf > a->tf && all.p[j].norm <= a->norm) ||
                         (all.p[j].tf >= a->tf && all.p[j].norm < a->norm);
        ASSERT(covered);
        ASSERT(listed == !dominated);
    }
    static const char *const q[] = {
        "{\"query\":{\"match\":{\"msg\":\"a c\"}},\"size\":10%s}",
        "{\"query\":{\"match\":{\"msg\":\"a\"}},\"size\":5%s}",
        "{\"query\":{\"match\":{\"msg\":\"b a\"}},\"size\":3%s}"};
    fds_search_segment seg = {.sidx = s};
    for (size_t i = 0; s && i < sizeof q / sizeof *q; i++) {
        fds_search_result res[2];
        for (int ex = 0; ex < 2; ex++) {
            char body[160];
            snprintf(body, sizeof body, q[i],
                     ex ? ",\"track_total_hits\":true"
                        : ",\"track_total_hits\":false");
            fds_search_request *rq = NULL;
            ASSERT(fds_search_parse(body, strlen(body), m, 0, &rq, &err) == 0);
            ASSERT(rq && fds_search_execute(rq, &seg, 1, &res[ex], &err) == 0);
            fds_search_request_free(rq);
        }
        ASSERT(res[0].nhits == res[1].nhits && res[0].nhits > 0);
        for (size_t h = 0; h < res[0].nhits && h < res[1].nhits; h++)
            ASSERT(res[0].hits[h].doc == res[1].hits[h].doc &&
                   memcmp(&res[0].hits[h].score, &res[1].hits[h].score,
                          sizeof(float)) == 0);
        ASSERT(i == 1 ? res[0].postings_scored <= res[1].postings_scored
                      : res[0].postings_scored < res[1].postings_scored);
        fds_search_result_free(&res[0]);
        fds_search_result_free(&res[1]);
    }
    fds_sidx_close(s);
    fds_mapping_free(m);
}

/* Run body `q` (a query object's text, "{\"query\":...}" without the
 * closing brace) with size `size` over segment s, counting none
 * (track_total_hits false: the MaxScore pass from the first doc) into
 * res[0] and every hit (true: every posting scored term at a time) into
 * res[1], and check that the two pages are the same docs with the same
 * score bits, and the docs of the doc-at-a-time pass (which has no bound,
 * nor any k-th score but the page's), scores within 1e-6.  The caller
 * frees both results (when s is not NULL). */
static void pages_agree(fds_mapping *m, fds_sidx *s, const char *q,
                        unsigned size, fds_search_result res[2])
{
    fds_err err;
    fds_search_segment seg = {.sidx = s};
    fds_search_result ref = {0};
    /* 0: pruned, 1: counted, 2: "min_score" 0, which takes the
     * doc-at-a-time path (no counting pass, no MaxScore, no seeded k-th
     * score) and rules out no match */
    for (int ex = 0; s && ex < 3; ex++) {
        char body[600];
        snprintf(body, sizeof body, "%s,\"size\":%u,\"track_total_hits\":%s%s}",
                 q, size, ex == 1 ? "true" : "false",
                 ex == 2 ? ",\"min_score\":0" : "");
        fds_search_request *rq = NULL;
        ASSERT(fds_search_parse(body, strlen(body), m, 0, &rq, &err) == 0);
        ASSERT(rq && fds_search_execute(rq, &seg, 1, ex < 2 ? &res[ex] : &ref,
                                        &err) == 0);
        fds_search_request_free(rq);
    }
    if (!s)
        return;
    ASSERT(res[0].nhits == res[1].nhits && res[0].nhits > 0);
    for (size_t h = 0; h < res[0].nhits && h < res[1].nhits; h++)
        ASSERT(res[0].hits[h].doc == res[1].hits[h].doc &&
               memcmp(&res[0].hits[h].score, &res[1].hits[h].score,
                      sizeof(float)) == 0);
    /* the doc-at-a-time pass sums a doc's terms in query order: its
     * scores may differ in the last bits */
    ASSERT(res[0].nhits == ref.nhits);
    for (size_t h = 0; h < res[0].nhits && h < ref.nhits; h++)
        ASSERT(res[0].hits[h].doc == ref.hits[h].doc &&
               fabsf(res[0].hits[h].score - ref.hits[h].score) <=
                   1e-6f * ref.hits[h].score);
    fds_search_result_free(&ref);
}

/* A document's terms are interned together once it is scanned
 * (sidx_writer.c, pend_resolve): a doc of 600 new terms grows the term
 * table in the middle of its own lookups, a term repeats within the doc
 * and in a keyword field, a rejected doc's terms get no postings, and
 * positions are those of the tokens in order (phrases). */
static void test_doc_terms_batched(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    ASSERT(merge_lit(m, "{\"properties\":{\"msg\":{\"type\":\"text\","
                        "\"fields\":{\"raw\":{\"type\":\"keyword\"}}},"
                        "\"k\":{\"type\":\"keyword\"},"
                        "\"n\":{\"type\":\"integer\"}}}", &err) == 0);
    static char big[8192];
    size_t o = (size_t)snprintf(big, sizeof big, "{\"msg\":\"");
    for (int i = 0; i < 600; i++)
        o += (size_t)snprintf(big + o, sizeof big - o, "w%d ", i);
    snprintf(big + o, sizeof big - o, "w7\",\"k\":\"w7\"}");
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    ASSERT(add_doc(w, 0, big, &err) == 0);
    ASSERT(add_doc(w, 1, "{\"msg\":\"ghost w1 spook\",\"k\":\"boo\","
                         "\"n\":\"x\"}", &err) != 0);
    ASSERT(add_doc(w, 1, "{\"msg\":\"w7 w599 zz\",\"k\":\"zz\"}", &err) == 0);
    fds_sidx *s = write_open(w);
    struct { const char *q; uint64_t total; } cases[] = {
        {"{\"query\":{\"match\":{\"msg\":\"w599\"}}}", 2},
        {"{\"query\":{\"match\":{\"msg\":\"w300\"}}}", 1},
        {"{\"query\":{\"match\":{\"msg\":\"ghost spook\"}}}", 0},
        {"{\"query\":{\"term\":{\"k\":\"boo\"}}}", 0},
        {"{\"query\":{\"term\":{\"k\":\"w7\"}}}", 1},
        {"{\"query\":{\"term\":{\"k\":\"zz\"}}}", 1},
        {"{\"query\":{\"term\":{\"msg.raw\":\"w7 w599 zz\"}}}", 1},
        {"{\"query\":{\"match_phrase\":{\"msg\":\"w598 w599 w7\"}}}", 1},
        {"{\"query\":{\"match_phrase\":{\"msg\":\"w7 w599\"}}}", 1},
        {"{\"query\":{\"match_phrase\":{\"msg\":\"w6 w7 w8\"}}}", 1},
        {"{\"query\":{\"match_phrase\":{\"msg\":\"w7 w8 w10\"}}}", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t got = count_in(m, s, cases[i].q);
        if (got != cases[i].total)
            fprintf(stderr, "batched terms: %s: %llu hits, want %llu\n",
                    cases[i].q, (unsigned long long)got,
                    (unsigned long long)cases[i].total);
        ASSERT(got == cases[i].total);
    }
    fds_sidx_close(s);
    fds_mapping_free(m);
}

/* A segment of n docs, doc i's source doc_of(i), under mapping m (NULL
 * after a failed ASSERT). */
static fds_sidx *segment_of(fds_mapping *m, uint32_t n,
                            const char *(*doc_of)(uint32_t))
{
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    fds_err err;
    for (uint32_t i = 0; i < n; i++)
        ASSERT(add_doc(w, i, doc_of(i), &err) == 0);
    return write_open(w);
}

/* 3-token docs of a and b, "r a b" every 256th from doc 100. */
static const char *budget_doc(uint32_t i)
{
    static const char *const other[] = {
        "{\"msg\":\"a a b\"}", "{\"msg\":\"a b b\"}", "{\"msg\":\"a a a\"}",
        "{\"msg\":\"b b b\"}", "{\"msg\":\"a b c\"}"};
    return i % 256 == 100 ? "{\"msg\":\"r a b\"}" : other[i % 5];
}

/* A whole-url query's frequent terms, repeated in the query, leave the
 * essential set by the token budget of the docs' length (norm_essential):
 * every doc has 3 tokens, "a" and "b" come 40 times each in the query, so
 * their bounds at their largest frequency (3) sum past the top score
 * (12.5 against 10.4), but the 3 best of their 6 per-token gains do not
 * (9.4): no 3-token doc holds a 3 times and b 3 times.  With the budget only
 * the rare "r" makes candidates: its 32 docs and their probes, not the
 * thousands of postings of "a"; the page is the exhaustive one to the bit. */
static void test_budget_split(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_sidx *s = segment_of(m, 8192, budget_doc);
    char q[512];
    int o = snprintf(q, sizeof q, "{\"query\":{\"match\":{\"msg\":\"r");
    for (int k = 0; k < 40; k++)
        o += snprintf(q + o, sizeof q - (size_t)o, " a b");
    snprintf(q + o, sizeof q - (size_t)o, "\"}}");
    fds_search_result res[2];
    pages_agree(m, s, q, 1, res);
    if (s) {
        ASSERT(res[0].nhits == 1 && res[0].hits[0].doc == 100);
        /* exhaustive: every posting of r, a and b (13,152) */
        ASSERT(res[1].postings_scored > 13000);
        ASSERT(res[0].postings_scored < 1000);
        fds_search_result_free(&res[0]);
        fds_search_result_free(&res[1]);
    }
    fds_sidx_close(s);
    fds_mapping_free(m);
}

/* 2,048 docs "r a b c" among "a b c z": they score alike. */
static const char *memo_equal(uint32_t i)
{
    return i % 4 ? "{\"msg\":\"a b c z\"}" : "{\"msg\":\"r a b c\"}";
}

/* Words that pad a value past ignore_above (256 bytes) and the
 * FDS_SIDX_VALUE_MIN_BYTES of value ids: 10 of 27 letters and a space. */
#define PAD_W "zzzzzzzzzzzzzzzzzzzzzzzzzzz "
#define PAD10 PAD_W PAD_W PAD_W PAD_W PAD_W PAD_W PAD_W PAD_W PAD_W PAD_W

/* memo_equal with long values, which have no keyword ordinal: 1,024 docs
 * of "r a b c" and 11 pad words, 1,024 of it and 10 (shorter: the
 * page), the others "a a a b c z" (whose a, 3 times, keeps the norm
 * bounds of the long docs above their scores: the bounds alone do not
 * rule out their copies).  Two value ids; 2,464 postings scored, 4,480
 * without them. */
static const char *memo_long(uint32_t i)
{
    return i % 4 == 0   ? "{\"msg\":\"r a b c " PAD10 PAD_W "\"}"
           : i % 4 == 2 ? "{\"msg\":\"r a b c " PAD10 "\"}"
                        : "{\"msg\":\"a a a b c z\"}";
}

/* Doc 301 gives msg two values; its keyword ordinal is its smallest value,
 * "q q q q q q", which every fourth doc before it holds alone. */
static const char *memo_two_values(uint32_t i)
{
    return i == 301 ? "{\"msg\":[\"r q\",\"q q q q q q\"]}"
           : i % 4  ? "{\"msg\":\"a b c z\"}"
                    : "{\"msg\":\"q q q q q q\"}";
}

/* Doc 129 gives the keyword multi-field a value of its own (as a copy_to
 * into it would): its keyword holds "b c" and "a", so its ordinal is doc
 * 0's, and its text is not. */
static const char *memo_direct(uint32_t i)
{
    return i == 0 ? "{\"msg\":\"a\"}"
           : i < 129 ? "{\"msg\":\"z\"}"
                     : "{\"msg\":\"b c\",\"msg.keyword\":\"a\"}";
}

/* The MaxScore pass decides a doc by another of the same value (its
 * keyword multi-field's ordinal) when the text field is single-valued in
 * the segment: of 2,048 docs "r a b c", once the page holds 10 the rest
 * are dropped by one lookup each instead of probing a, b and c (2,432
 * postings scored; 8,480 without the memo).  Long values, which have no
 * ordinal, are decided by their value ids the same way (memo_long).  The
 * two other segments must go without it, or their odd doc is decided by
 * another's score and missing from the page. */
static void test_value_memo(void)
{
    static const struct {
        const char *(*doc_of)(uint32_t);
        uint32_t n;
        const char *q;
        unsigned size, hit;  /* page size; hits[hit] must be doc `doc` */
        uint32_t doc;
        bool single;         /* FDS_SIDX_F_SINGLE expected on msg */
        uint64_t max_scored; /* postings scored without counting, at most */
    } c[] = {
        {memo_equal, 8192, "{\"query\":{\"match\":{\"msg\":\"r a b c\"}}", 10,
         9, 36, true, 3000},
        {memo_two_values, 400, "{\"query\":{\"match\":{\"msg\":\"r q\"}}", 20,
         0, 301, false, UINT64_MAX},
        {memo_direct, 130, "{\"query\":{\"match\":{\"msg\":\"a b c\"}}", 1, 0,
         129, false, UINT64_MAX},
        {memo_long, 8192, "{\"query\":{\"match\":{\"msg\":\"r a b c\"}}", 10,
         9, 38, true, 3000},
    };
    fds_mapping *m = fds_mapping_create();
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        fds_sidx *s = segment_of(m, c[k].n, c[k].doc_of);
        const fds_sfield *f = s ? fds__sidx_field(s, "msg", 3) : NULL;
        ASSERT(f && ((f->flags & FDS_SIDX_F_SINGLE) != 0) == c[k].single);
        /* the long values have value ids, the short ones none */
        ASSERT(f && f->nvals == (c[k].doc_of == memo_long ? 2u : 0u));
        fds_search_result res[2];
        pages_agree(m, s, c[k].q, c[k].size, res);
        if (s) {
            ASSERT(res[0].nhits > c[k].hit &&
                   res[0].hits[c[k].hit].doc == c[k].doc);
            ASSERT(res[0].postings_scored <= c[k].max_scored);
            fds_search_result_free(&res[0]);
            fds_search_result_free(&res[1]);
        }
        fds_sidx_close(s);
    }
    fds_mapping_free(m);
}

/* Ten 28-letter words: past ignore_above (256) together, so the keyword
 * multi-field has no ordinal for the whole value. */
#define TIE_W(c) #c "aaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define TIE_ALL TIE_W(a) " " TIE_W(b) " " TIE_W(c) " " TIE_W(d) " " \
    TIE_W(e) " " TIE_W(f) " " TIE_W(g) " " TIE_W(h) " " TIE_W(i) " " TIE_W(j)

/* Every third doc the whole ten words, the others two or three of them.
 * The whole-value docs differ in case (the letters of doc i's bits upper
 * case): the same terms and norm, but no two hold one string, so none has
 * a value id and the memo is off. */
static const char *tie_doc(uint32_t i)
{
    static char buf[sizeof "{\"msg\":\"" TIE_ALL "\"}"];
    if (i % 3)
        return i % 3 == 1 ? "{\"msg\":\"" TIE_W(a) " " TIE_W(b) "\"}"
                          : "{\"msg\":\"" TIE_W(c) " " TIE_W(d) " " TIE_W(e) "\"}";
    memcpy(buf, "{\"msg\":\"" TIE_ALL "\"}", sizeof buf);
    for (unsigned b = 0; b < 27; b++) /* the first word's 27 a's */
        if ((i >> b) & 1)
            buf[8 + 1 + b] = (char)(buf[8 + 1 + b] - 'a' + 'A');
    return buf;
}

/* Docs 0-9 "a a a"; then "a" and a long doc holding a 3 times, in turn. */
static const char *lone_doc(uint32_t i)
{
    return i < 10 ? "{\"msg\":\"a a a\"}"
           : i % 2 ? "{\"msg\":\"a\"}"
                   : "{\"msg\":\"a a a b c d e f g h i j k l m n o p\"}";
}

/* The group frontiers open computes for a term of 157 blocks (lone_doc's
 * "a"): group 0 (docs 0-4,095) has (1 token, tf 1) and (3 tokens, tf 3),
 * which dominates (18 tokens, tf 3); group 1 has no 3-token doc, so
 * (18 tokens, tf 3) is on its frontier.  From the blocks' (max tf, min
 * norm) alone both would be the one pair (1 token, tf 3). */
static void test_group_fronts(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_sidx *s = segment_of(m, 20000, lone_doc);
    const fds_sfield *f = s ? fds__sidx_field(s, "msg", 3) : NULL;
    fds_sterm t;
    ASSERT(f && fds__sidx_term(s, f, "a", 1, &t) == 0);
    if (f && t.grp) {
        uint8_t n1 = f->norms[11], n3 = f->norms[0], n18 = f->norms[10];
        ASSERT(n1 < n3 && n3 < n18);
        ASSERT_EQ_U(t.grp[1] - t.grp[0], 2u);
        ASSERT(t.gpairs[t.grp[0]].norm == n1 && t.gpairs[t.grp[0]].tf == 1);
        ASSERT(t.gpairs[t.grp[0] + 1].norm == n3 &&
               t.gpairs[t.grp[0] + 1].tf == 3);
        ASSERT_EQ_U(t.grp[2] - t.grp[1], 2u);
        ASSERT(t.gpairs[t.grp[1] + 1].norm == n18 &&
               t.gpairs[t.grp[1] + 1].tf == 3);
    }
    ASSERT(!f || t.grp); /* 157 blocks: it has them */
    fds_sidx_close(s);
    fds_mapping_free(m);
}

/* Docs 0-599 "r2 a", 1000-1599 "r1 a", the others "a b": r1 and r2 have
 * the same doc count, so "r1 a" and "r2 a" score the same float. */
static const char *seed_tie_doc(uint32_t i)
{
    return i < 600 ? "{\"msg\":\"r2 a\"}"
           : i >= 1000 && i < 1600 ? "{\"msg\":\"r1 a\"}"
                                   : "{\"msg\":\"a b\"}";
}

/* The seeded k-th score (seed_floor): the postings of r1 (600, within the
 * seed's 1,024; r2's 600 more are not) make one value group of 600 docs,
 * scored in full, so the page's 10th score is known before any pass --
 * but docs 0-9 tie it with lower doc ids and are the page: a doc that
 * ties the seeded score must still enter (the floor is the float below
 * it).  Then the count, with docs 0-1,099 deleted: "r1 r2" matches
 * 1,200 docs but only r1's last 500 are live, so with track_total_hits
 * 550 the count past the limit must not be declared from r2's doc count
 * (600) without the deleted docs -- nor with size 0, where no page is
 * seeded.  Every page is the doc-at-a-time pass's, with a count sure
 * from a doc count and no seed too (a warm-up of WARM_HITS hits, then
 * MaxScore). */
static void test_seeded_floor(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_sidx *s = segment_of(m, 4000, seed_tie_doc);
    fds_search_result res[2];
    pages_agree(m, s, "{\"query\":{\"match\":{\"msg\":\"r1 r2 a\"}}", 10, res);
    if (s) {
        ASSERT(res[0].nhits == 10 && res[0].hits[0].doc == 0 &&
               res[0].hits[9].doc == 9);
        fds_search_result_free(&res[0]);
        fds_search_result_free(&res[1]);
    }
    /* docs 0-1,099 deleted: "r1 b" matches r1's 500 live docs and the
     * 2,400 live "a b" */
    static uint8_t live[4000 / 8];
    memset(live, 0xff, sizeof live);
    for (uint32_t d = 0; d < 1100; d++)
        live[d / 8] &= (uint8_t)~(1u << (d % 8));
    fds_search_segment seg = {.sidx = s, .live = live, .deleted = 1100};
    static const struct seed_case {
        const char *q;
        unsigned size, tth;
        uint64_t total;
        bool gte;
    } c[] = {
        {"\"match\":{\"msg\":\"r1 b\"}", 10, 2800, 2800, true},
        {"\"match\":{\"msg\":\"r1 b\"}", 10, 3000, 2900, false},
        {"\"match\":{\"msg\":\"r1 b\"}", 0, 3000, 2900, false},
        {"\"match\":{\"msg\":\"r1 r2\"}", 10, 550, 500, false},
        {"\"match\":{\"msg\":\"r1 r2\"}", 0, 550, 500, false},
        {"\"match\":{\"msg\":\"r1 r2\"}", 10, 400, 400, true},
        /* no term within the seed's postings: a warm-up, then MaxScore */
        {"\"match\":{\"msg\":\"b a\"}", 10, 100, 100, true},
        {"\"match\":{\"msg\":\"r1 a b\"}", 10, 100, 100, true},
    };
    for (size_t k = 0; s && k < sizeof c / sizeof *c; k++) {
        const struct seed_case *ck = &c[k];
        fds_search_result r[2] = {{0}, {0}};
        for (int ex = 0; ex < 2; ex++) { /* 1: doc at a time, the reference */
            char body[300];
            snprintf(body, sizeof body,
                     "{\"query\":{%s},\"size\":%u,\"track_total_hits\":%u%s}",
                     ck->q, ck->size, ck->tth, ex ? ",\"min_score\":0" : "");
            fds_err err;
            fds_search_request *rq = NULL;
            ASSERT(fds_search_parse(body, strlen(body), m, 0, &rq, &err) == 0);
            ASSERT(rq && fds_search_execute(rq, &seg, 1, &r[ex], &err) == 0);
            fds_search_request_free(rq);
        }
        if (r[0].total != ck->total || r[0].total_is_lower_bound != ck->gte)
            fprintf(stderr, "case %zu: total %llu%s\n", k,
                    (unsigned long long)r[0].total,
                    r[0].total_is_lower_bound ? " gte" : "");
        ASSERT(r[0].total == ck->total && r[0].total_is_lower_bound == ck->gte);
        ASSERT(r[0].nhits == r[1].nhits);
        for (size_t h = 0; h < r[0].nhits && h < r[1].nhits; h++)
            ASSERT(r[0].hits[h].doc == r[1].hits[h].doc &&
                   fabsf(r[0].hits[h].score - r[1].hits[h].score) <=
                       1e-6f * r[1].hits[h].score);
        fds_search_result_free(&r[0]);
        fds_search_result_free(&r[1]);
    }
    fds_sidx_close(s);
    fds_mapping_free(m);
}

/* Pages whose bounds must rule out almost every doc, each the exhaustive
 * page to the bit (pages_agree), its last hit the doc given, and no more
 * postings scored than given:
 * - 2,000 copies of a long value tie the page's 10 (the first copies):
 *   the float bound of their norm, summed term by term in the order a
 *   score is (norm_chain), is their score, so the norm is ruled out and
 *   the copies past the page are not probed -- 642 postings scored,
 *   20,212 with the double bound and its slack alone, which cannot tell a
 *   tie from a win;
 * - a lone term's page is its first ten docs, and every later block is
 *   passed over undecoded: their (max tf, min norm) pair, tf 3 at one
 *   token, would beat the page, but their impacts (tf 1 at one token, tf
 *   3 at 18) do not (run_one_term, block_competitive) -- 128 postings
 *   scored of 20,000. */
static void test_pruned_pages(void)
{
    static const struct {
        const char *(*doc_of)(uint32_t);
        uint32_t n;
        const char *q;
        uint32_t last;       /* the page's 10th hit */
        uint64_t max_scored; /* postings scored without counting, at most */
    } c[] = {
        {tie_doc, 6000,
         "{\"query\":{\"match\":{\"msg\":\"" TIE_ALL "\"}}", 27, 2000},
        {lone_doc, 20000, "{\"query\":{\"match\":{\"msg\":\"a\"}}", 9, 128},
    };
    fds_mapping *m = fds_mapping_create();
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        fds_sidx *s = segment_of(m, c[k].n, c[k].doc_of);
        fds_search_result res[2];
        pages_agree(m, s, c[k].q, 10, res);
        if (s) {
            ASSERT(res[0].nhits == 10 && res[0].hits[9].doc == c[k].last);
            ASSERT(res[0].postings_scored <= c[k].max_scored);
            fds_search_result_free(&res[0]);
            fds_search_result_free(&res[1]);
        }
        fds_sidx_close(s);
    }
    fds_mapping_free(m);
}

/* Doc i's request_time-like value: 0.001 to 30.011, 3 decimals. */
static double dcol_value(uint32_t i)
{
    return (double)((i * 7919u) % 30011u + 1) / 1000.0;
}

/* Packed double columns (sidx_dcol.c, format 8): the plan of edge cases
 * (decimals, float32-rounded decimals, negatives, integers, nothing, -0.0,
 * too many digits, past 2^53) reads every value back to the bit; a
 * segment's float and double fields pack and read back, a -0.0 keeps its
 * column raw, and a merge keeps the values. */
static void test_dcol(void)
{
    struct {
        double v[4];
        size_t n;
        unsigned bits; /* FDS_SIDX_NUM_RAW: no plan */
        uint64_t scale;
    } c[] = {
        {{0.029, 1.5, 0, 12.345}, 4, 14, 3},
        {{(double)0.029f, (double)1.5f, (double)12.345f}, 3, 14, 3 | FDS_SIDX_DCOL_FLOAT},
        {{-5.25, 3.75}, 2, 10, 2},
        {{1, 2, 3e6}, 3, 22, 0},
        {{0}, 0, 0, 0},
        {{-0.0, 1}, 2, FDS_SIDX_NUM_RAW, 0},
        {{0.1234567891}, 1, FDS_SIDX_NUM_RAW, 0},
        {{9007199254740992.0}, 1, FDS_SIDX_NUM_RAW, 0},
        {{9007199254740991.0, 0}, 2, 53, 0},
        {{1e-9, 2e-9}, 2, 1, 9},
        {{DBL_MIN}, 1, FDS_SIDX_NUM_RAW, 0},
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        fds__dcol p;
        fds__dcol_plan(c[k].v, c[k].n, &p);
        ASSERTF(p.bits == c[k].bits, "case %zu: bits %u", k, p.bits);
        if (p.bits == FDS_SIDX_NUM_RAW)
            continue;
        ASSERTF(p.scale == c[k].scale, "case %zu: scale %llx", k,
                (unsigned long long)p.scale);
        for (size_t i = 0; i < c[k].n; i++) {
            int64_t m = 0;
            ASSERT(fds__dcol_int(c[k].v[i], p.scale, &m));
            ASSERT(m >= p.min && (uint64_t)m - (uint64_t)p.min < (1ull << p.bits) + (p.bits == 0));
            unsigned dg = (unsigned)(p.scale & FDS_SIDX_DCOL_DIGITS_MASK);
            double back = fds__dcol_decode(m, fds__dcol_div(dg), fds__dcol_mul(dg),
                                           (p.scale & FDS_SIDX_DCOL_FLOAT) != 0);
            ASSERT_MEM(&back, &c[k].v[i], 8);
        }
    }
    /* through the writer, the reader and a merge */
    const char *map = "{\"properties\":{\"rt\":{\"type\":\"float\"},"
                      "\"d\":{\"type\":\"double\"},\"z\":{\"type\":\"double\"}}}";
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    ASSERT(fds_mapping_merge_json(m, map, strlen(map), &err) == 0);
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    char doc[160];
    for (uint32_t i = 0; i < 300; i++) {
        double v = dcol_value(i);
        if (i % 10 == 3) /* docs without the fields */
            snprintf(doc, sizeof doc, "{\"x\":1}");
        else
            snprintf(doc, sizeof doc, "{\"rt\":%.3f,\"d\":%.3f,\"z\":%s}", v, -v,
                     i == 7 ? "-0.0" : "2.5");
        ASSERT(add_doc(w, i, doc, &err) == 0);
    }
    fds_sidx *s = write_open(w);
    char mpath[] = "/tmp/fds-dcol-XXXXXX";
    close(mkstemp(mpath));
    fds_sidx *mg = NULL;
    ASSERT(s && fds_sidx_merge((const fds_sidx *const *)&s, NULL, 1, mpath, &err) == 0);
    ASSERT(fds_sidx_open(mpath, &mg, &err) == 0);
    for (int pass = 0; pass < 2 && s && mg; pass++) {
        const fds_sidx *x = pass ? mg : s;
        const fds_sfield *rt = fds__sidx_field(x, "rt", 2), *d = fds__sidx_field(x, "d", 1),
                         *z = fds__sidx_field(x, "z", 1);
        ASSERT(rt && d && z);
        if (!rt || !d || !z)
            break;
        ASSERT(rt->num_bits == 15 && rt->num_float && rt->num_div == 1000.0);
        ASSERT(d->num_bits == 15 && !d->num_float);
        ASSERT(z->num_bits == FDS_SIDX_NUM_RAW); /* one -0.0 */
        for (uint32_t i = 0; i < 300; i++) {
            ASSERT(fds__bit(rt->present, i) == (i % 10 != 3));
            if (i % 10 == 3)
                continue;
            double want = (double)(float)dcol_value(i), got = fds__col_f64(rt, i);
            ASSERT_MEM(&got, &want, 8);
            want = -dcol_value(i);
            got = fds__col_f64(d, i);
            ASSERT_MEM(&got, &want, 8);
            want = i == 7 ? -0.0 : 2.5;
            got = fds__col_f64(z, i);
            ASSERT_MEM(&got, &want, 8);
        }
    }
    fds_sidx_close(s);
    fds_sidx_close(mg);
    unlink(mpath);
    fds_mapping_free(m);
}

/* Golden check of the .sidx format: the same documents must give the same
 * bytes.  A deliberate format change bumps FDS_SIDX_VERSION (or, for an
 * addition older readers ignore, such as FDS_SIDX_F_SINGLE, documents it
 * in sidx_format.h) and updates these constants (run with
 * FDS_GOLDEN_PRINT=1 to print them). */
#define GOLDEN_LEN 2832u
#define GOLDEN_CRC 0x93768313u
#define GOLDEN_BRANDS \
    "b571%2Cb288%2Cb70%2Cb57%2Cb6%2Cb265%2Cb332%2Cb173%2Cb469%2Cb351%2C" \
    "b525%2Cb474%2Cb586%2Cb212%2Cb213%2Cb648%2Cb186%2Cb481%2Cb226%2C" \
    "b570%2Cb80%2Cb270%2Cb903%2Cb883%2Cb152%2Cb249%2Cb20%2Cb701%2Cb5"
static void test_golden(void)
{
    static const char *docs[] = {
        "{\"@timestamp\":\"2019-01-22T03:56:14+03:30\",\"method\":\"GET\","
        "\"url\":\"/image/60844/productModel/200x200\",\"status\":200,"
        "\"request_time\":0.25,\"ok\":true}",
        "{\"@timestamp\":\"2019-01-22T03:57:01+03:30\",\"method\":\"POST\","
        "\"url\":\"/m/filter/b113\",\"status\":404}",
        /* twice: a long url's value id (version 7) */
        "{\"url\":\"/filter/" GOLDEN_BRANDS "%2C" GOLDEN_BRANDS "\"}",
        "{\"url\":\"/filter/" GOLDEN_BRANDS "%2C" GOLDEN_BRANDS "\"}",
    };
    fds_mapping *m = fds_mapping_create();
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    fds_err err;
    for (uint32_t i = 0; i < 4; i++)
        ASSERT(add_doc(w, i, docs[i], &err) == 0);
    char path[] = "/tmp/fds-qgold-XXXXXX";
    close(mkstemp(path));
    ASSERT(fds_sidx_writer_write(w, path, &err) == 0);
    fds_sidx_writer_free(w);
    FILE *f = fopen(path, "rb");
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    unlink(path);
    /* over the bytes before the footer: a CRC over a buffer that ends with
     * its own CRC is the same constant for every file */
    uint32_t crc = fds_crc32c(0, buf, n > FDS_SIDX_FOOTER_LEN ? n - FDS_SIDX_FOOTER_LEN : 0);
    if (getenv("FDS_GOLDEN_PRINT"))
        printf("golden: len %zu crc 0x%08x\n", n, crc);
    ASSERT_EQ_U(n, GOLDEN_LEN);
    ASSERT_EQ_U(crc, GOLDEN_CRC);
    fds_sidx *s = NULL;
    FILE *g = fopen(path, "wb"); /* the bytes read back: one value id */
    ASSERT(g && fwrite(buf, 1, n, g) == n);
    if (g)
        fclose(g);
    ASSERT(fds_sidx_open(path, &s, &err) == 0);
    const fds_sfield *u = s ? fds__sidx_field(s, "url", 3) : NULL;
    ASSERT(u && u->nvals == 1 && u->vcomplete && fds__val_id(u, 2) == 0 &&
           fds__val_id(u, 3) == 0 && fds__val_id(u, 0) == FDS_SIDX_NO_ORD);
    fds_sidx_close(s);
    unlink(path);
    fds_mapping_free(m);
}

/* fds_float_format gives the bytes of the snprintf/strtof loop: random bit
 * patterns over the whole range, every float in a few score-like ranges,
 * and edge values. */
static void test_float_format(void)
{
    char a[FDS_FLOAT_STR_MAX], b[FDS_FLOAT_STR_MAX];
    unsigned bad = 0;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (long i = 0; i < 400000 && bad < 5; i++) {
        uint32_t u;
        float f;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (i % 2) {
            u = (uint32_t)x;
        } else { /* scores: [1e-5, 1e9) */
            f = (float)((double)(x >> 11) / 9007199254740992.0);
            f = powf(10.0f, -5.0f + 14.0f * f);
            memcpy(&u, &f, 4);
        }
        memcpy(&f, &u, 4);
        size_t na = fds_float_format(f, a), nb = fds_float_format_ref(f, b);
        if (na != nb || strcmp(a, b)) {
            fprintf(stderr, "float %08x: got %s, expected %s\n", u, a, b);
            bad++;
        }
    }
    /* 2^20 consecutive floats from 0.25, and around the fast path's edges */
    float lo[] = {0.25f, 9.99e-6f, 9.9e8f};
    uint32_t cnt[] = {1u << 20, 100000, 100000};
    for (int r = 0; r < 3 && bad < 5; r++) {
        uint32_t u;
        memcpy(&u, &lo[r], 4);
        for (uint32_t i = 0; i < cnt[r] && bad < 5; i++, u++) {
            float f;
            memcpy(&f, &u, 4);
            fds_float_format(f, a);
            fds_float_format_ref(f, b);
            if (strcmp(a, b)) {
                fprintf(stderr, "float %08x: got %s, expected %s\n", u, a, b);
                bad++;
            }
        }
    }
    ASSERT_EQ_U(bad, 0);
    fds_float_format(1.0f, a);
    ASSERT_STR(a, "1.0");
    fds_float_format(0.2876821f, a);
    ASSERT_STR(a, "0.2876821");
    fds_float_format(-2.5f, a);
    ASSERT_STR(a, "-2.5");
    fds_float_format(1e10f, a);
    ASSERT_STR(a, "1e+10");
    fds_float_format(100000000.0f, a);
    ASSERT_STR(a, "1e+08");
}

/* index.mapping.total_fields.limit: a document of 100,000 new names is
 * refused at the 1001st field with Elasticsearch's text, adding none (the
 * CPU time it took is printed, not asserted); the mapping prints its
 * objects whole when a sibling's name sorts between the object and its
 * children ("a-b" between "a" and "a.c"). */
static void test_doc_map_field_limit(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    fds_err_clear(&err);
    size_t n = 100000, cap = n * 16 + 2, len = 0;
    char *doc = malloc(cap);
    ASSERT(doc != NULL);
    doc[len++] = '{';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(doc + len, cap - len, "%s\"f%zu\":%zu",
                                i ? "," : "", i, i);
    doc[len++] = '}';
    uint64_t gen = fds_mapping_generation(m);
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    int rc = fds_doc_map(m, (const uint8_t *)doc, len, &err);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    fprintf(stderr, "100000-field document refused in %.2f ms CPU\n",
            (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    ASSERT(rc == FDS_EINVAL);
    ASSERT(err.kind == FDS_KIND_INVALID_ARGUMENT);
    ASSERT_STR(err.reason, "Limit of total fields [1000] has been exceeded");
    ASSERT(m->nfields == 0);
    ASSERT(fds_mapping_generation(m) != gen); /* added, then dropped */
    free(doc);
    fds_err_clear(&err);
    const char *d2 = "{\"a\":{\"c\":1},\"a-b\":true,\"a0\":{\"x\":{\"y\":2}}}";
    ASSERT(fds_doc_map(m, (const uint8_t *)d2, strlen(d2), &err) == 0);
    char *j = fds_mapping_to_json(m);
    ASSERT_STR(j, "{\"properties\":{\"a\":{\"properties\":{\"c\":{\"type\":"
                  "\"long\"}}},\"a-b\":{\"type\":\"boolean\"},\"a0\":{\"properties"
                  "\":{\"x\":{\"properties\":{\"y\":{\"type\":\"long\"}}}}}}}");
    free(j);
    fds_mapping_free(m);
}

/* A refused document maps nothing; an overflowing double says why. */
static void test_doc_map_refused(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    fds_err_clear(&err);
    const char *def = "{\"properties\":{\"d\":{\"type\":\"double\"},"
                      "\"f\":{\"type\":\"float\"}}}";
    ASSERT(fds_mapping_merge_json(m, def, strlen(def), &err) == 0);
    const char *bad = "{\"a\":{\"b\":\"x\"},\"n\":1,\"d\":1e400}";
    ASSERT(fds_doc_map(m, (const uint8_t *)bad, strlen(bad), &err) == FDS_EINVAL);
    ASSERT(err.kind == FDS_KIND_DOCUMENT_PARSE);
    ASSERT(err.cause_kind == FDS_KIND_INVALID_ARGUMENT);
    ASSERT_STR(err.cause, "[double] supports only finite values, but got [Infinity]");
    fds_field_info fi;
    ASSERT(fds_mapping_field(m, "a", 1, &fi) == FDS_ENOTFOUND);
    ASSERT(fds_mapping_field(m, "a.b.keyword", 11, &fi) == FDS_ENOTFOUND);
    ASSERT(fds_mapping_field(m, "n", 1, &fi) == FDS_ENOTFOUND);
    ASSERT(fds_mapping_field(m, "d", 1, &fi) == 0);
    /* beyond a float, though finite as a double */
    fds_err_clear(&err);
    const char *neg = "{\"f\":-1e39}";
    ASSERT(fds_doc_map(m, (const uint8_t *)neg, strlen(neg), &err) == FDS_EINVAL);
    ASSERT_STR(err.cause, "[float] supports only finite values, but got [-Infinity]");
    /* a good document still maps, and lookups find it after the rollback */
    fds_err_clear(&err);
    const char *good = "{\"a\":{\"b\":\"x\"},\"n\":1,\"d\":1.5}";
    ASSERT(fds_doc_map(m, (const uint8_t *)good, strlen(good), &err) == 0);
    ASSERT(fds_mapping_field(m, "a.b.keyword", 11, &fi) == 0);
    ASSERT(fds_mapping_field(m, "n", 1, &fi) == 0 && fi.type == FDS_FT_LONG);
    ASSERT(fds_mapping_field(m, "d", 1, &fi) == 0);
    fds_mapping_free(m);
}

/* Date math, formats and time zones of range bounds, against values
 * computed independently (Python's datetime) */
/* fds__date_print and date math index names (datemath.c). */
static void test_date_print(void)
{
    char b[128];
    int64_t ms = 1571646604828; /* 2019-10-21T08:30:04.828Z */
    fds__date_print(ms, NULL, b, sizeof b);
    ASSERT_STR(b, "2019-10-21T08:30:04.828Z");
    fds__date_print(ms, "epoch_millis||strict_date", b, sizeof b);
    ASSERT_STR(b, "1571646604828");
    fds__date_print(ms, "yyyy/MM/dd HH:mm:ss.SSS 'at' X", b, sizeof b);
    ASSERT_STR(b, "2019/10/21 08:30:04.828 at Z");
    fds__date_print(-1, "strict_date_optional_time", b, sizeof b);
    ASSERT_STR(b, "1969-12-31T23:59:59.999Z");
    fds__date_print(-62167219200000, NULL, b, sizeof b); /* year 0 */
    ASSERT_STR(b, "0000-01-01T00:00:00.000Z");
    fds__date_print(253402300799999, "date_time", b, sizeof b);
    ASSERT_STR(b, "9999-12-31T23:59:59.999Z");
    fds__date_print(253402300800000, NULL, b, sizeof b); /* five digits */
    ASSERT_STR(b, "10000-01-01T00:00:00.000Z");
    ASSERT_EQ(fds__date_print(ms, NULL, b, 24), 24); /* no room: cut, counted */
    ASSERT_STR(b, "2019-10-21T08:30:04.828");
    /* the named ISO format against the same pattern spelt out, years 0..9999 */
    uint64_t st = 7;
    for (int i = 0; i < 20000; i++) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        int64_t t = -62167219200000 + (int64_t)((st >> 11) % 315537897600000u);
        char want[128];
        fds__date_print(t, "yyyy-MM-dd'T'HH:mm:ss.SSSX", want, sizeof want);
        fds__date_print(t, "strict_date_optional_time", b, sizeof b);
        ASSERT_STR(b, want);
    }
    ASSERT(fds_date_math_index_name("logstash-{now/M}", 16, ms, b, sizeof b) == 0);
    ASSERT_STR(b, "logstash-2019.10.01");
    const char *e = "l-{now-1d/d{yyyy-MM-dd|+12:00}}\\{x\\}";
    ASSERT(fds_date_math_index_name(e, strlen(e), ms, b, sizeof b) == 0);
    ASSERT_STR(b, "l-2019-10-20{x}");
    ASSERT(fds_date_math_index_name("x-{now/M", 8, ms, b, sizeof b) == -1);
    ASSERT(fds_date_math_index_name("x-{now/M{EEE}}", 14, ms, b, sizeof b) == -1);
}

static void test_datemath(void)
{
    static const struct {
        const char *s;
        unsigned formats;
        long long tz;
        bool up;
        long long now, want;
    } cases[] = {
        {"2026-12-01||+1d/d", FDS_DF_ISO, 0LL, false, 0LL, 1796169600000LL},
        {"2026-12-01||/M", FDS_DF_ISO, 0LL, true, 0LL, 1798761599999LL},
        {"now-15m/m", FDS_DF_ISO, 0LL, false, 1796119650500LL, 1796118720000LL},
        {"now-15m/m", FDS_DF_ISO, 0LL, true, 1796119650500LL, 1796118779999LL},
        {"2019-01-22T04:00:00", FDS_DF_ISO, 12600000LL, false, 0LL, 1548117000000LL},
        {"2019-01-22T04:00:00Z", FDS_DF_ISO, 12600000LL, false, 0LL, 1548129600000LL},
        {"now/d", FDS_DF_ISO, 3600000LL, false, 1796167800000LL, 1796166000000LL},
        {"2026-01-31||+1M", FDS_DF_ISO, 0LL, false, 0LL, 1772236800000LL},
        {"2026-12-03T15:00:00Z||/w", FDS_DF_ISO, 0LL, false, 0LL, 1795996800000LL},
        {"2024-02-29||+1y", FDS_DF_ISO, 0LL, false, 0LL, 1740700800000LL},
        {"2026-12-01T10:00:00Z||-1h+30m/H", FDS_DF_ISO, 0LL, true, 0LL, 1796119199999LL},
        {"1700000000", FDS_DF_EPOCH_SECOND, 0LL, false, 0LL, 1700000000000LL},
        {"1700000000123", FDS_DF_DEFAULT, 0LL, false, 0LL, 1700000000123LL},
        {"1969-12-31||/y", FDS_DF_ISO, 0LL, false, 0LL, -31536000000LL},
        /* round up without math: the text's last millisecond */
        {"2026-12-01", FDS_DF_ISO, 0LL, true, 0LL, 1796169599999LL},
        {"2026-12-01T10:20", FDS_DF_ISO, 0LL, true, 0LL, 1796120459999LL},
        {"2026-12-01T10:20:30Z", FDS_DF_ISO, 0LL, true, 0LL, 1796120430999LL},
        {"2026-12-01T10:20:30.5Z", FDS_DF_ISO, 0LL, true, 0LL, 1796120430500LL},
        {"2026-12-01||+0d", FDS_DF_ISO, 0LL, true, 0LL, 1796083200000LL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t got = 0;
        fds_date_format f = {.bits = cases[i].formats};
        int rc = fds__date_math(cases[i].s, strlen(cases[i].s), &f,
                                &(fds_tz){.fixed_ms = cases[i].tz}, cases[i].up, cases[i].now, &got);
        if (rc || got != cases[i].want) {
            fprintf(stderr, "date math %s: rc %d, %lld, want %lld\n", cases[i].s,
                    rc, (long long)got, cases[i].want);
            fds_test_failures++;
        }
    }
    static const char *bad[] = {"now+999999999y", "now-999999999M", "now+999999999w",
                                "2026-12-01||+300000y", "now-15x", "2026-13-01", "now+", "now/q",
                                "2026-12-01|+1d", "tomorrow", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t got;
        if (fds__date_math(bad[i], strlen(bad[i]), NULL, 0, false, 0, &got) == 0) {
            fprintf(stderr, "date math %s: accepted\n", bad[i]);
            fds_test_failures++;
        }
    }
    /* strict_date takes a date, not a time */
    int64_t v;
    fds_date_format fd = {.bits = FDS_DF_DATE}, fi = {.bits = FDS_DF_ISO};
    ASSERT(fds__date_math("2026-12-01", 10, &fd, 0, false, 0, &v) == 0);
    ASSERT(fds__date_math("2026-12-01T01:00:00Z", 20, &fd, 0, false, 0, &v) != 0);
    ASSERT(fds__date_math("1700000000", 10, &fi, 0, false, 0, &v) != 0);
    fds_date_format fs = {.bits = FDS_DF_EPOCH_SECOND};
    ASSERT(fds__date_math("999999999999999999", 18, &fs, 0, false, 0, &v) != 0);
    ASSERT(fds__date_math("now-999999999s", 14, NULL, 0, false, 0, &v) == 0 &&
           v == -999999999000LL);
    /* patterns, against values computed independently (Python's datetime) */
    static const struct { const char *fmt, *s; long long want; } pats[] = {
        {"yyyy-MM-dd HH:mm:ss", "2026-12-01 10:20:30", 1796120430000LL},
        {"dd/MMM/yyyy:HH:mm:ss Z", "01/Dec/2026:10:20:30 +0100", 1796116830000LL},
        {"yyyyMMdd", "20261201", 1796083200000LL},
        {"yyyy/MM/dd||epoch_millis", "2026/12/01", 1796083200000LL},
        {"yyyy/MM/dd||epoch_millis", "1796083200000", 1796083200000LL},
        {"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2026-12-01T10:20:30.125-02:00",
         1796127630125LL},
        {"EEE, dd MMMM yyyy", "Tue, 01 December 2026", 1796083200000LL},
    };
    for (size_t i = 0; i < sizeof pats / sizeof *pats; i++) {
        fds_date_format f;
        int64_t got = 0;
        int rc = fds__date_format_parse(pats[i].fmt, strlen(pats[i].fmt), &f);
        if (!rc)
            rc = fds__date_parse(pats[i].s, strlen(pats[i].s), &f, 0, &got);
        if (rc || got != pats[i].want) {
            fprintf(stderr, "format %s on %s: rc %d, %lld, want %lld\n", pats[i].fmt,
                    pats[i].s, rc, (long long)got, pats[i].want);
            fds_test_failures++;
        }
    }
    fds_date_format f;
    ASSERT(fds__date_format_parse("yyyy-MM-dd hh:mm a", 18, &f) != 0); /* h, a */
    ASSERT(fds__date_format_parse("yyyy-MM-dd", 10, &f) == 0);
    ASSERT(fds__date_parse("2026-02-30", 10, &f, 0, &v) != 0);
    ASSERT(fds__date_format_parse("'unclosed", 9, &f) != 0);
    static const struct { const char *tz; bool ok; long long ms; } zones[] = {
        {"+05:30", true, 19800000}, {"-0800", true, -28800000}, {"Z", true, 0},
        {"UTC", true, 0}, {"GMT+01:00", true, 3600000}, {"+5", true, 18000000},
        {"Europe/Paris", false, 0}, {"+19:00", false, 0}, {"+05:60", false, 0},
        {"", false, 0}, {"+05:3", false, 0},
    };
    for (size_t i = 0; i < sizeof zones / sizeof *zones; i++) {
        int64_t off = -1;
        bool ok = fds__time_zone(zones[i].tz, strlen(zones[i].tz), &off);
        if (ok != zones[i].ok || (ok && off != zones[i].ms)) {
            fprintf(stderr, "time_zone %s: %d %lld\n", zones[i].tz, ok,
                    (long long)off);
            fds_test_failures++;
        }
    }
    ASSERT(fds__date_formats("epoch_millis||strict_date_optional_time", 39) ==
           (FDS_DF_EPOCH_MILLIS | FDS_DF_ISO));
    ASSERT(fds__date_formats("yyyy/MM/dd", 10) == 0);
    ASSERT(fds__date_formats("epoch_second||", 14) == 0);
}

static bool pat(int kind, const char *p, bool ci, const char *s)
{
    fds_term_pat *tp = NULL;
    fds_err e;
    fds_err_clear(&e);
    if (fds__term_pat_new(kind, p, strlen(p), ci, FDS_RE_ALL, 0, &tp, &e))
        return false;
    bool m = fds__term_pat_match(tp, s, strlen(s));
    fds__term_pat_free(tp);
    return m;
}

static int pat_err(const char *p, unsigned flags)
{
    fds_term_pat *tp = NULL;
    fds_err e;
    fds_err_clear(&e);
    int rc = fds__term_pat_new(FDS_PAT_REGEXP, p, strlen(p), false, flags, 0,
                               &tp, &e);
    fds__term_pat_free(tp);
    return rc;
}

/* term_pat.c: prefix, wildcard and Lucene regexps; a wildcard of stars
 * agrees with fds_glob_match on random strings. */
static void test_term_pat(void)
{
    ASSERT(pat(FDS_PAT_PREFIX, "ba", false, "bar"));
    ASSERT(!pat(FDS_PAT_PREFIX, "BA", false, "bar"));
    ASSERT(pat(FDS_PAT_PREFIX, "BA", true, "bar"));
    ASSERT(pat(FDS_PAT_WILDCARD, "b?r", false, "bär"));   /* ? is a code point */
    ASSERT(!pat(FDS_PAT_WILDCARD, "b?r", false, "bäär"));
    ASSERT(pat(FDS_PAT_WILDCARD, "a\\*", false, "a*"));  /* escaped star */
    ASSERT(!pat(FDS_PAT_WILDCARD, "a\\*", false, "ab"));
    ASSERT(pat(FDS_PAT_REGEXP, "f.x", false, "fox"));
    ASSERT(!pat(FDS_PAT_REGEXP, "f.x", false, "foxy"));     /* anchored */
    ASSERT(pat(FDS_PAT_REGEXP, "(ab|cd)+e?", false, "abcdab"));
    ASSERT(pat(FDS_PAT_REGEXP, "[a-c]{2,3}", false, "cab"));
    ASSERT(!pat(FDS_PAT_REGEXP, "[a-c]{2,3}", false, "cabc"));
    ASSERT(pat(FDS_PAT_REGEXP, "[^0-9]+", false, "abc"));
    ASSERT(!pat(FDS_PAT_REGEXP, "[^0-9]+", false, "a1"));
    ASSERT(pat(FDS_PAT_REGEXP, "\\d{3}", false, "404"));
    ASSERT(pat(FDS_PAT_REGEXP, "a@", false, "abc"));        /* ANYSTRING */
    ASSERT(!pat(FDS_PAT_REGEXP, "#", false, ""));            /* EMPTY */
    ASSERT(pat(FDS_PAT_REGEXP, "\"a.b\"", false, "a.b"));
    ASSERT(!pat(FDS_PAT_REGEXP, "\"a.b\"", false, "axb"));
    ASSERT(pat(FDS_PAT_REGEXP, "GET|POST", true, "post"));
    ASSERT(pat(FDS_PAT_REGEXP, "^x$", false, "^x$"));       /* literals in Lucene */
    ASSERT(pat_err("(a", FDS_RE_ALL) == FDS_EPARSE);
    ASSERT(pat_err("*a", FDS_RE_ALL) == FDS_EPARSE);
    ASSERT(pat_err("a~b", FDS_RE_ALL) == FDS_EPARSE);        /* COMPLEMENT: refused */
    ASSERT(pat_err("a~b", 0) == 0);                          /* NONE: a literal */
    ASSERT(pat_err("(a{1,100}){1,100}", FDS_RE_ALL) == FDS_ETOOBIG);
    {   /* a wildcard is bounded the same way; a prefix is linear */
        static char stars[8001];
        memset(stars, '*', 8000);
        fds_term_pat *tp = NULL;
        fds_err e;
        fds_err_clear(&e);
        ASSERT(fds__term_pat_new(FDS_PAT_WILDCARD, stars, 8000, false, 0, 0,
                                 &tp, &e) == FDS_ETOOBIG);
        ASSERT(fds__term_pat_new(FDS_PAT_PREFIX, stars, 8000, false, 0, 0,
                                 &tp, &e) == 0);
        fds__term_pat_free(tp);
    }
    uint64_t seed = 7;
    for (int it = 0; it < 20000; it++) {
        char p[8], s[10];
        size_t pn = 1 + (seed = seed * 6364136223846793005ull + 1) % 6;
        size_t sn = (seed = seed * 6364136223846793005ull + 1) % 9;
        for (size_t i = 0; i < pn; i++)
            p[i] = "ab*"[((seed = seed * 6364136223846793005ull + 1) >> 61) % 3];
        for (size_t i = 0; i < sn; i++)
            s[i] = "ab"[(seed = seed * 6364136223846793005ull + 1) >> 63];
        p[pn] = s[sn] = 0;
        ASSERT(pat(FDS_PAT_WILDCARD, p, false, s) == fds_glob_match(p, s, sn));
    }
}

/* What Kibana's bodies add: runtime_mappings {}, a sort key's format,
 * top_metrics and sampler, each accepted as sent and refused where its
 * effect cannot be had. */
static void test_dsl_kibana(void)
{
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    const char *mj = "{\"properties\":{\"msg\":{\"type\":\"text\"},"
                     "\"n\":{\"type\":\"long\"},\"k\":{\"type\":\"keyword\"},"
                     "\"t\":{\"type\":\"date\"}}}";
    ASSERT(fds_mapping_merge_json(m, mj, strlen(mj), &err) == 0);
    ASSERT(parse_err(m, "{\"runtime_mappings\":{},\"script_fields\":{}}", &err) == 0);
    ASSERT(parse_err(m, "{\"runtime_mappings\":{\"h\":{\"type\":\"long\"}}}", &err) ==
           FDS_EINVAL);
    ASSERT(strstr(err.reason, "runtime field [h]") != NULL);
    ASSERT(parse_err(m, "{\"runtime_mappings\":[]}", &err) == FDS_EPARSE);
    fds_search_request *r = NULL;
    const char *b = "{\"sort\":[{\"t\":{\"order\":\"desc\",\"format\":"
                    "\"strict_date_optional_time\",\"unmapped_type\":\"boolean\"}},"
                    "{\"_doc\":{\"order\":\"desc\",\"unmapped_type\":\"boolean\"}},"
                    "{\"gone\":{\"format\":\"epoch_millis\",\"unmapped_type\":\"long\"}}]}";
    fds_err_clear(&err);
    ASSERT(fds_search_parse(b, strlen(b), m, 0, &r, &err) == 0);
    ASSERT(r && r->nsort == 3 && r->sort[0].format &&
           !strcmp(r->sort[0].format, "strict_date_optional_time") &&
           !r->sort[1].format && !r->sort[2].format);
    fds_search_request_free(r);
    ASSERT(parse_err(m, "{\"sort\":[{\"k\":{\"format\":\"yyyy\"}}]}", &err) == FDS_EINVAL);
    ASSERT_STR(err.reason, "Field [k] doesn't support formats.");
    ASSERT(parse_err(m, "{\"sort\":[{\"n\":{\"format\":\"#.0\"}}]}", &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "{\"sort\":[{\"t\":{\"format\":\"QQQ\"}}]}", &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "{\"sort\":[{\"t\":{\"format\":7}}]}", &err) == FDS_EPARSE);
    /* top_metrics */
    ASSERT(parse_err(m, "{\"aggs\":{\"l\":{\"top_metrics\":{\"metrics\":{\"field\":\"n\"},"
                        "\"sort\":{\"t\":\"desc\"}}}}}", &err) == 0);
    ASSERT(parse_err(m, "{\"aggs\":{\"l\":{\"top_metrics\":{\"metrics\":[{\"field\":\"n\"},"
                        "{\"field\":\"k\"}],\"size\":10,\"sort\":[{\"n\":\"asc\"}]}}}}", &err) == 0);
    ASSERT(parse_err(m, "{\"aggs\":{\"l\":{\"top_metrics\":{\"metrics\":{\"field\":\"n\"},"
                        "\"size\":11,\"sort\":{\"t\":\"desc\"}}}}}", &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "{\"aggs\":{\"l\":{\"top_metrics\":{\"metrics\":{\"field\":\"msg\"},"
                        "\"sort\":{\"t\":\"desc\"}}}}}", &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "{\"aggs\":{\"l\":{\"top_metrics\":{\"metrics\":{\"field\":\"n\"},"
                        "\"sort\":[{\"t\":\"desc\"},{\"n\":\"asc\"}]}}}}", &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "{\"aggs\":{\"l\":{\"top_metrics\":{\"metrics\":{\"field\":\"n\"}}}}}",
                     &err) == FDS_EINVAL);
    ASSERT(parse_err(m, "{\"aggs\":{\"l\":{\"top_metrics\":{\"metrics\":{\"field\":\"n\"},"
                        "\"sort\":{\"t\":\"desc\"},\"x\":1}}}}", &err) == FDS_EPARSE);
    ASSERT(parse_err(m, "{\"aggs\":{\"l\":{\"top_metrics\":{\"metrics\":{\"field\":\"n\"},"
                        "\"sort\":{\"t\":\"desc\"}},\"aggs\":{\"s\":{\"sum\":{\"field\":"
                        "\"n\"}}}}}}", &err) != 0); /* no sub-aggregations */
    /* sampler: under no query or filters only; not under a scoring one */
    ASSERT(parse_err(m, "{\"aggs\":{\"s\":{\"sampler\":{\"shard_size\":5000},\"aggs\":{"
                        "\"m\":{\"min\":{\"field\":\"n\"}}}}}}", &err) == 0);
    ASSERT(parse_err(m, "{\"query\":{\"bool\":{\"must\":[],\"filter\":[{\"match\":{"
                        "\"msg\":\"a\"}}],\"should\":[],\"must_not\":[]}},\"aggs\":{\"s\":"
                        "{\"sampler\":{}}}}", &err) == 0);
    ASSERT(parse_err(m, "{\"query\":{\"match\":{\"msg\":\"a\"}},\"aggs\":{\"s\":"
                        "{\"sampler\":{}}}}", &err) == FDS_EINVAL);
    ASSERT(strstr(err.reason, "[sampler] [s]") != NULL);
    ASSERT(parse_err(m, "{\"aggs\":{\"s\":{\"sampler\":{\"field\":\"n\"}}}}", &err) ==
           FDS_EPARSE);
    fds_mapping_free(m);
}

int main(void)
{
    test_dsl_kibana();
    test_term_pat();
    test_date_print();
    test_float_format();
    test_doc_map_refused();
    test_doc_map_field_limit();
    test_doc_params();
    test_dv_record();
    test_golden();
    test_dcol();
    test_impacts();
    test_fronts();
    test_budget_split();
    test_doc_terms_batched();
    test_value_memo();
    test_group_fronts();
    test_pruned_pages();
    test_seeded_floor();
    test_empty();
    test_analyzer();
    test_postings();
    test_mapping();
    test_dsl();
    test_datemath();
    if (fds_test_failures)
        fprintf(stderr, "%d failure(s)\n", fds_test_failures);
    return fds_test_failures ? 1 : 0;
}
