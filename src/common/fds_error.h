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

/*
 * What kind of failure an error is, in the terms Elasticsearch distinguishes
 * (one kind per Elasticsearch error type our lower layers can produce).
 * Lower layers name a kind; src/http alone maps it to an HTTP status and an
 * `error.type` (src/http/http_error.c holds the one table).  FDS_KIND_NONE
 * lets the edge choose from the FDS_E* code.
 */
typedef enum fds_err_kind {
    FDS_KIND_NONE = 0,
    FDS_KIND_INVALID_ARGUMENT, /* bad argument or setting */
    FDS_KIND_PARSE,            /* a value that does not parse (time, size, date) */
    FDS_KIND_QUERY_PARSE,      /* malformed query DSL */
    FDS_KIND_CONTENT_PARSE,    /* malformed JSON content (duplicate keys, syntax) */
    FDS_KIND_NUMBER_FORMAT,    /* a number that does not parse */
    FDS_KIND_MAPPING_PARSE,    /* a mapping that does not parse or apply */
    FDS_KIND_DOCUMENT_PARSE,   /* a document that does not fit its mapping */
    FDS_KIND_VALIDATION,       /* a request that fails validation */
    FDS_KIND_QUERY_SHARD,      /* a query that cannot run on a field */
    FDS_KIND_INVALID_INDEX_NAME,
    FDS_KIND_INDEX_NOT_FOUND,
    FDS_KIND_NOT_FOUND,        /* some other resource is missing */
    FDS_KIND_DOCUMENT_MISSING,
    FDS_KIND_ALREADY_EXISTS,   /* an index of that name exists */
    FDS_KIND_CONFLICT,         /* version conflict */
    FDS_KIND_INDEX_CLOSED,
    FDS_KIND_CORRUPT,          /* damaged data on disk */
    FDS_KIND_CODEC,            /* a block that will not encode or decode */
    FDS_KIND_IO,               /* a failed read, write or fsync */
    FDS_KIND_ILLEGAL_STATE,    /* an internal invariant or a limit of ours */
    FDS_KIND_INTERNAL,         /* anything else (out of memory, SQLite) */
    FDS_KIND_BIND,             /* the listening socket could not be bound */
    FDS_KIND_CLUSTER_BLOCK,    /* writes refused: the disk is (nearly) full */
    FDS_KIND_TOO_MANY_CLAUSES, /* a query past indices.query.bool.max_clause_count */
    FDS_KIND_STRICT_DYNAMIC,   /* a new field under "dynamic": "strict" */
    FDS_KIND_INVALID_ALIAS_NAME,
    FDS_KIND_ALIASES_NOT_FOUND, /* an alias named by a remove or get is missing */
    FDS_KIND_TEMPLATE_MISSING, /* a legacy template named by get or delete */
    FDS_KIND_TOO_MANY_BUCKETS, /* aggregations past search.max_buckets */
    FDS_KIND_INDEX_BLOCK,      /* refused by an index.blocks.* setting (403) */
    FDS_KIND_QUERY_PHASE,      /* a shard's query phase could not finish (its
                                  timeout, partial results not allowed) */
    FDS_KIND_SOURCE_MISSING,   /* an update of a document kept without _source */
    FDS_KIND_COUNT_
} fds_err_kind;

/* Size limits of an fds_err's text fields, in bytes including the NUL. */
#define FDS_ERR_REASON_MAX 512
#define FDS_ERR_CAUSE_MAX 256

/*
 * Error detail for users.  `kind` (fds_err_kind) says what the failure is;
 * `reason` is the sentence shown to the user; `index` the index concerned.
 * `cause_kind` and `cause` are the underlying failure (Elasticsearch's
 * `caused_by`, e.g. the illegal_argument_exception under a
 * document_parsing_exception); cause_kind 0 = none.
 * A reason or cause cut to its buffer is cut at a UTF-8 character boundary.
 * No HTTP status or Elasticsearch type is stored: src/http derives both
 * from `kind` (else `code`).
 */
typedef struct fds_err {
    int code;
    int kind;
    char reason[FDS_ERR_REASON_MAX];
    char index[256]; /* the index concerned, "" if none */
    int cause_kind;
    char cause[FDS_ERR_CAUSE_MAX];
} fds_err;

/* Clear a detail struct so the next fds_err_setk() takes (its strings
 * become ""; the bytes after their NUL are left as they were). */
void fds_err_clear(fds_err *e);

/*
 * Record an error unless one is already recorded (first error wins).
 * `e` may be NULL (then nothing is recorded).  `kind` is an fds_err_kind.
 * Returns `code`, so callers can write
 * `return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT, "...")`.
 */
int fds_err_setk(fds_err *e, int code, int kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Record the cause under the error already recorded in `e` (or about to be:
 * call it before or after fds_err_setk), unless `e` is NULL or has a cause.
 * `kind` is an fds_err_kind naming the cause's own type.
 */
void fds_err_cause(fds_err *e, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));


#endif
