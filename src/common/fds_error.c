#include "fds_error.h"
#include "fds_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *fds_strerror(int code)
{
    switch (code) {
    case FDS_OK: return "ok";
    case FDS_ENOMEM: return "out of memory";
    case FDS_EIO: return "I/O error";
    case FDS_ECORRUPT: return "corrupt data";
    case FDS_EDICT: return "dictionary missing or mismatched";
    case FDS_EINVAL: return "invalid argument";
    case FDS_ENOTFOUND: return "not found";
    case FDS_EEXIST: return "already exists";
    case FDS_ERANGE: return "out of range";
    case FDS_EPARSE: return "parse error";
    case FDS_ESQL: return "catalogue (SQLite) error";
    case FDS_ECONFLICT: return "version conflict";
    case FDS_ECLOSED: return "index closed";
    case FDS_EUNSUPPORTED: return "unsupported";
    case FDS_ETOOBIG: return "too large";
    default: return "unknown error";
    }
}

/* vsnprintf into buf[0..cap), cut at a UTF-8 boundary when it does not fit. */
static void format_text(char *buf, size_t cap, const char *fmt, va_list ap)
{
    int n = vsnprintf(buf, cap, fmt, ap);
    if (n >= (int)cap) {
        size_t k = fds_utf8_cut((const uint8_t *)buf, cap - 1, cap - 1);
        buf[k] = 0;
    }
}

void fds_err_clear(fds_err *e)
{
    if (!e)
        return;
    /* the strings are read up to their NUL: clearing their first bytes is
     * clearing them, without writing the struct's ~1 KiB (a _bulk clears
     * one per item) */
    e->code = 0;
    e->kind = 0;
    e->reason[0] = 0;
    e->index[0] = 0;
    e->cause_kind = 0;
    e->cause[0] = 0;
}

int fds_err_setk(fds_err *e, int code, int kind, const char *fmt, ...)
{
    if (!e || e->code != 0)
        return code;
    e->code = code;
    e->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    format_text(e->reason, sizeof e->reason, fmt, ap);
    va_end(ap);
    return code;
}

void fds_err_cause(fds_err *e, int kind, const char *fmt, ...)
{
    if (!e || e->cause_kind != 0)
        return;
    e->cause_kind = kind;
    va_list ap;
    va_start(ap, fmt);
    format_text(e->cause, sizeof e->cause, fmt, ap);
    va_end(ap);
}
