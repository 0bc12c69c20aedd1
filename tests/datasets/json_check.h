/*
 * json_check.h: a small strict JSON validator for the data-set tests and the
 * logparse fuzz target.  It is written independently of logparse.c's
 * formatter (its own UTF-8 decoder) so that a formatter bug cannot hide
 * behind a shared helper.
 *
 * Accepts RFC 8259 JSON with no insignificant whitespace at all (the data-set
 * documents are compact), rejects duplicate keys in the top-level object,
 * unpaired surrogate escapes, raw control bytes in strings and invalid UTF-8.
 * Top-level keys are reported (decoded only as far as the tests need: keys
 * are plain ASCII) so callers can check field order.
 */
#ifndef FDS_TEST_JSON_CHECK_H
#define FDS_TEST_JSON_CHECK_H

#include <stddef.h>
#include <string.h>

#define JC_MAX_KEYS 32
#define JC_KEY_MAX 64
#define JC_MAX_DEPTH 16

typedef struct jc_state {
    const unsigned char *s;
    size_t n, i;
    int depth;
    int nkeys;
    char keys[JC_MAX_KEYS][JC_KEY_MAX];
} jc_state;

static int jc__value(jc_state *st);

static int jc__utf8(jc_state *st)
{
    const unsigned char *s = st->s + st->i;
    size_t left = st->n - st->i;
    unsigned c = s[0], cp, need;
    if (c < 0x80) return st->i++, 1;
    if (c >= 0xc0 && c < 0xe0) { need = 1; cp = c & 0x1f; }
    else if (c >= 0xe0 && c < 0xf0) { need = 2; cp = c & 0x0f; }
    else if (c >= 0xf0 && c < 0xf8) { need = 3; cp = c & 0x07; }
    else return 0;
    if (left < need + 1) return 0;
    for (unsigned k = 1; k <= need; k++) {
        if ((s[k] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3f);
    }
    static const unsigned min_cp[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[need] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    st->i += need + 1;
    return 1;
}

static int jc__hex4(jc_state *st, unsigned *v)
{
    if (st->n - st->i < 4) return 0;
    *v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char c = st->s[st->i++];
        unsigned d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        *v = *v * 16 + d;
    }
    return 1;
}

/* A string; copies it (ASCII only, truncated) into key when key != NULL. */
static int jc__string(jc_state *st, char *key)
{
    size_t kl = 0;
    if (st->i >= st->n || st->s[st->i] != '"') return 0;
    st->i++;
    for (;;) {
        if (st->i >= st->n) return 0;
        unsigned char c = st->s[st->i];
        if (c == '"') { st->i++; break; }
        if (c < 0x20) return 0;
        if (key && kl + 1 < JC_KEY_MAX) key[kl++] = (char)c;
        if (c == '\\') {
            st->i++;
            if (st->i >= st->n) return 0;
            c = st->s[st->i++];
            if (c == 'u') {
                unsigned v, w;
                if (!jc__hex4(st, &v)) return 0;
                if (v >= 0xdc00 && v <= 0xdfff) return 0;
                if (v >= 0xd800 && v <= 0xdbff) {
                    if (st->n - st->i < 2 || st->s[st->i] != '\\' ||
                        st->s[st->i + 1] != 'u')
                        return 0;
                    st->i += 2;
                    if (!jc__hex4(st, &w) || w < 0xdc00 || w > 0xdfff) return 0;
                }
            } else if (!strchr("\"\\/bfnrt", c) || c == 0) {
                return 0;
            }
            continue;
        }
        if (!jc__utf8(st)) return 0;
    }
    if (key) key[kl] = '\0';
    return 1;
}

static int jc__number(jc_state *st)
{
    size_t i = st->i;
    const unsigned char *s = st->s;
    if (i < st->n && s[i] == '-') i++;
    if (i >= st->n) return 0;
    if (s[i] == '0') i++;
    else if (s[i] >= '1' && s[i] <= '9') while (i < st->n && s[i] >= '0' && s[i] <= '9') i++;
    else return 0;
    if (i < st->n && s[i] == '.') {
        i++;
        size_t d = i;
        while (i < st->n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    }
    if (i < st->n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < st->n && (s[i] == '+' || s[i] == '-')) i++;
        size_t d = i;
        while (i < st->n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    }
    st->i = i;
    return 1;
}

static int jc__lit(jc_state *st, const char *w)
{
    size_t l = strlen(w);
    if (st->n - st->i < l || memcmp(st->s + st->i, w, l)) return 0;
    st->i += l;
    return 1;
}

static int jc__container(jc_state *st, int top)
{
    unsigned char open = st->s[st->i++];
    unsigned char close = open == '{' ? '}' : ']';
    if (++st->depth > JC_MAX_DEPTH) return 0;
    if (st->i < st->n && st->s[st->i] == close) { st->i++; st->depth--; return 1; }
    for (;;) {
        if (open == '{') {
            char key[JC_KEY_MAX];
            if (!jc__string(st, key)) return 0;
            if (top) {
                for (int k = 0; k < st->nkeys; k++)
                    if (!strcmp(st->keys[k], key)) return 0; /* duplicate */
                if (st->nkeys >= JC_MAX_KEYS) return 0;
                memcpy(st->keys[st->nkeys++], key, JC_KEY_MAX);
            }
            if (st->i >= st->n || st->s[st->i++] != ':') return 0;
        }
        if (!jc__value(st)) return 0;
        if (st->i >= st->n) return 0;
        unsigned char c = st->s[st->i++];
        if (c == close) break;
        if (c != ',') return 0;
    }
    st->depth--;
    return 1;
}

static int jc__value(jc_state *st)
{
    if (st->i >= st->n) return 0;
    unsigned char c = st->s[st->i];
    if (c == '{' || c == '[') return jc__container(st, 0);
    if (c == '"') return jc__string(st, NULL);
    if (c == 't') return jc__lit(st, "true");
    if (c == 'f') return jc__lit(st, "false");
    if (c == 'n') return jc__lit(st, "null");
    return jc__number(st);
}

/* 1 when s[0..n) is exactly one compact JSON object; its top-level keys are
 * left in st->keys[0..nkeys). */
static int jc_check_object(jc_state *st, const char *s, size_t n)
{
    memset(st, 0, sizeof *st);
    st->s = (const unsigned char *)s;
    st->n = n;
    if (n == 0 || s[0] != '{') return 0;
    if (!jc__container(st, 1)) return 0;
    return st->i == n;
}

#endif
