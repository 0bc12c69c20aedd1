/*
 * fuzz_analyze: fuzz target for the standard analyzer (src/query/mapping/analysis.c):
 * fds_analyze and fds_analyze_offsets over any bytes, UTF-8 or not.  Must
 * never crash, leak or read out of bounds, and
 *   - both give the same tokens, in order;
 *   - each token is 1 to FDS_TOKEN_MAX_CHARS code points of valid UTF-8,
 *     its offsets a non-empty range of the text after the previous one's;
 *   - the input with its high bits cleared (all ASCII) gives the same
 *     tokens through fds_analyze's ASCII path as through the general path
 *     fds_analyze_offsets takes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "mapping/analysis.h"
#include "query_int.h"
#include "fuzz_driver.h"

typedef struct toks {
    const char *text;
    size_t len;
    char *buf; /* the tokens, each followed by a NUL */
    size_t n, cap, count;
    size_t last_end;
} toks;

static int add(toks *t, const char *tok, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        size_t cap = (t->n + n + 1) * 2;
        char *nb = realloc(t->buf, cap);
        if (!nb)
            abort();
        t->buf = nb;
        t->cap = cap;
    }
    memcpy(t->buf + t->n, tok, n);
    t->buf[t->n + n] = 0;
    t->n += n + 1;
    t->count++;
    return 0;
}

static int on_tok(void *arg, const char *tok, size_t n)
{
    toks *t = arg;
    utf8proc_ssize_t cps = 0;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate((const uint8_t *)tok + i,
                                              (utf8proc_ssize_t)(n - i), &c);
        if (k <= 0)
            abort(); /* a token is valid UTF-8 */
        i += (size_t)k;
        cps++;
    }
    if (cps < 1 || cps > FDS_TOKEN_MAX_CHARS)
        abort();
    return add(t, tok, n);
}

static int on_tok_off(void *arg, const char *tok, size_t n, size_t start,
                      size_t end)
{
    toks *t = arg;
    if (start < t->last_end || start >= end || end > t->len)
        abort();
    t->last_end = end;
    return on_tok(arg, tok, n);
}

static void same(const toks *a, const toks *b)
{
    if (a->count != b->count || a->n != b->n ||
        (a->n && memcmp(a->buf, b->buf, a->n)))
        abort();
}

static void check(const char *text, size_t len)
{
    toks a = {text, len, NULL, 0, 0, 0, 0}, b = a;
    if (fds_analyze(text, len, on_tok, &a) ||
        fds_analyze_offsets(text, len, on_tok_off, &b))
        abort();
    same(&a, &b);
    free(a.buf);
    free(b.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check((const char *)data, size);
    char *ascii = malloc(size ? size : 1);
    if (!ascii)
        return 0;
    for (size_t i = 0; i < size; i++)
        ascii[i] = (char)(data[i] & 0x7F);
    check(ascii, size);
    free(ascii);
    return 0;
}
