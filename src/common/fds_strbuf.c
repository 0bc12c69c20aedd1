/*
 * fds_strbuf.c: growable byte buffer (see fds_strbuf.h).
 */
#include "fds_strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_error.h"
#include "fds_text.h"

int fds_strbuf_reserve(fds_strbuf *b, size_t n)
{
    if (b->oom)
        return FDS_ENOMEM;
    if (n > SIZE_MAX / 2 - b->len - 1) {
        b->oom = 1;
        return FDS_ENOMEM;
    }
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return 0;
    size_t nc = b->cap ? b->cap : FDS_STRBUF_MIN_CAP;
    while (nc < need)
        nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np) {
        b->oom = 1;
        return FDS_ENOMEM;
    }
    b->p = np;
    b->cap = nc;
    return 0;
}

int fds__strbuf_put_grow(fds_strbuf *b, const void *p, size_t n)
{
    if (fds_strbuf_reserve(b, n))
        return FDS_ENOMEM;
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

int fds_strbuf_printf(fds_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return FDS_EINVAL;
    if (fds_strbuf_reserve(b, (size_t)need))
        return FDS_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)need;
    return 0;
}

int fds_strbuf_put_json_string(fds_strbuf *b, const char *s, size_t n)
{
    if (n > (SIZE_MAX - 2) / 6 || fds_strbuf_reserve(b, FDS_JSON_ESCAPE_BOUND(n))) {
        b->oom = 1;
        return FDS_ENOMEM;
    }
    size_t w = fds_json_escape(s, n, b->p + b->len, b->cap - b->len);
    b->len += w;
    b->p[b->len] = 0;
    return 0;
}

char *fds_strbuf_take(fds_strbuf *b, size_t *len)
{
    if (!b->oom && !b->p)
        fds_strbuf_reserve(b, 0);
    if (b->oom) {
        fds_strbuf_free(b);
        return NULL;
    }
    b->p[b->len] = 0;
    char *p = b->p;
    if (len)
        *len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

void fds_strbuf_free(fds_strbuf *b)
{
    if (!b)
        return;
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

int fds_strbuf_put_i64(fds_strbuf *b, int64_t v)
{
    char t[24], *p = t + sizeof t;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--p = '-';
    return fds_strbuf_put(b, p, (size_t)(t + sizeof t - p));
}
