/*
 * fds_error.h: the one error vocabulary of fieldstore.
 *
 * Every function of every module returns an int: 0 (FDS_OK) or one of the
 * negative FDS_E* codes below; fds_strerror() names a code.  Where a user
 * must be told more (which index, segment, block; which part of a query), the
 * function also fills an fds_err detail: the first error set wins, later ones
 * are ignored, so the innermost cause is what the user reads.  Only src/http
 * turns an fds_err into an HTTP status and Elasticsearch's JSON error shape.
 */
#ifndef FDS_ERROR_H
#define FDS_ERROR_H

#include <stddef.h>

enum {
    FDS_OK = 0,
    FDS_ENOMEM = -1,       /* allocation failed */
    FDS_EIO = -2,          /* read/write/fsync/open failed */
    FDS_ECORRUPT = -3,     /* checksum mismatch, truncated or malformed data */
    FDS_EDICT = -4,        /* dictionary missing, or not the one a block used */
    FDS_EINVAL = -5,       /* bad argument or bad user input */
    FDS_ENOTFOUND = -6,    /* no such index / document / term */
    FDS_EEXIST = -7,       /* already exists */
    FDS_ERANGE = -8,       /* value out of the allowed range; buffer too small */
    FDS_EPARSE = -9,       /* malformed JSON or query */
    FDS_ESQL = -10,        /* SQLite error */
    FDS_ECONFLICT = -11,   /* version conflict */
    FDS_ECLOSED = -12,     /* index is closed */
    FDS_EUNSUPPORTED = -13,/* valid but not supported */
    FDS_ETOOBIG = -14,     /* input larger than a named limit */
};

/* Static English name of a code; never NULL ("unknown error" for others). */
const char *fds_strerror(int code);

/* Size limits of an fds_err's text fields, in bytes including the NUL. */
#define FDS_ERR_TYPE_MAX 64
#define FDS_ERR_REASON_MAX 512

/*
 * Error detail for users.  `type` is an Elasticsearch error type such as
 * "parsing_exception" or "index_not_found_exception"; `reason` is the
 * sentence shown to the user; `status` is the HTTP status the edge should
 * answer with (0: let the edge choose from `code`).
 */
typedef struct fds_err {
    int code;
    int status;
    char type[FDS_ERR_TYPE_MAX];
    char reason[FDS_ERR_REASON_MAX];
    char index[256]; /* the index concerned, "" if none */
} fds_err;

/* Clear a detail struct so the next fds_err_set() takes. */
void fds_err_clear(fds_err *e);

/*
 * Record an error unless one is already recorded (first error wins).
 * `e` may be NULL (then nothing is recorded).  Returns `code`, so callers can
 * write `return fds_err_set(e, FDS_EINVAL, 400, "illegal_argument_exception",
 * "...")`.
 */
int fds_err_set(fds_err *e, int code, int status, const char *type,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
