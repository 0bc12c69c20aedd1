/*
 * fds_strbuf.h: a growable byte buffer for building text (JSON answers,
 * reports, SVG), with put / printf / JSON-string appends.
 *
 * Usage: `fds_strbuf b = FDS_STRBUF_INIT;` append, then read b.p[0..b.len)
 * (always NUL-terminated once anything was appended), then
 * fds_strbuf_free(&b) or take the bytes with fds_strbuf_take().
 *
 * Out of memory is sticky: the first failed growth sets `oom`, later appends
 * do nothing, and the caller checks `oom` (or the return codes) once at the
 * end, the way sds and Redis's reply buffers are used.
 *
 * Threading: a buffer belongs to one thread at a time.
 */
#ifndef FDS_STRBUF_H
#define FDS_STRBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct fds_strbuf {
    char *p;    /* heap bytes, owned by the buffer; NULL while empty */
    size_t len; /* bytes used, not counting the NUL */
    size_t cap; /* bytes allocated */
    int oom;    /* non-zero once an allocation failed */
} fds_strbuf;

#define FDS_STRBUF_INIT {NULL, 0, 0, 0}

/* First allocation of a buffer, bytes; growth doubles from there. */
#define FDS_STRBUF_MIN_CAP 256

/* Make room for `n` more bytes (plus the NUL).  Returns 0, or FDS_ENOMEM
 * (and sets b->oom) when allocation fails or the size would overflow. */
int fds_strbuf_reserve(fds_strbuf *b, size_t n);

/* fds_strbuf_put when the bytes may not fit (grows the buffer). */
int fds__strbuf_put_grow(fds_strbuf *b, const void *p, size_t n);

/* Append p[0..n) (any bytes).  Returns 0 or FDS_ENOMEM.  Inline: a
 * response is written a few bytes at a time, nearly always into room
 * already there. */
static inline int fds_strbuf_put(fds_strbuf *b, const void *p, size_t n)
{
    if (b->oom || n >= b->cap - b->len) /* no room for n + the NUL */
        return fds__strbuf_put_grow(b, p, n);
    if (n) /* p may be NULL when n is 0 */
        memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

/* Append a NUL-terminated string.  Returns 0 or FDS_ENOMEM. */
static inline int fds_strbuf_puts(fds_strbuf *b, const char *s)
{
    return fds_strbuf_put(b, s, strlen(s));
}

/* Append one byte.  Returns 0 or FDS_ENOMEM. */
static inline int fds_strbuf_putc(fds_strbuf *b, char c)
{
    return fds_strbuf_put(b, &c, 1);
}

/* Append printf-formatted text.  Returns 0, FDS_ENOMEM, or FDS_EINVAL when
 * the format fails (vsnprintf < 0; nothing appended). */
int fds_strbuf_printf(fds_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append v in decimal, as "%lld" writes it, without printf (a _bulk
 * answer writes three numbers per item).  Returns 0 or FDS_ENOMEM. */
int fds_strbuf_put_i64(fds_strbuf *b, int64_t v);

/* Append s[0..n) as a JSON string literal, quotes included, escaped by the
 * rules of fds_json_escape() (fds_text.h).  Returns 0 or FDS_ENOMEM. */
int fds_strbuf_put_json_string(fds_strbuf *b, const char *s, size_t n);

/* Hand over the bytes: returns b->p (the caller frees it; NUL-terminated,
 * never NULL unless out of memory), stores the length in *len if len is not
 * NULL, and leaves `b` empty.  Returns NULL (and frees) when b->oom is set. */
char *fds_strbuf_take(fds_strbuf *b, size_t *len);

/* Free the bytes and reset to empty; NULL is a no-op. */
void fds_strbuf_free(fds_strbuf *b);

#endif
