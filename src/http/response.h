/*
 * response.h: the answer a handler builds (fds_resp) and the helpers that
 * fill it -- JSON and raw bodies, deprecation warnings, and Elasticsearch's
 * error shapes (internal to src/http).  The bottom of the folder: it calls
 * nothing above it.
 */
#ifndef FDS_HTTP_RESPONSE_H
#define FDS_HTTP_RESPONSE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "fds_error.h"
#include "fds_strbuf.h"

#define FDS_RESP_WARNINGS_MAX 4

typedef struct fds_resp {
    int status;
    char *body;                    /* malloc'd */
    size_t len;
    const char *content_type;
    bool close;                    /* answer with "Connection: close" and end */
    const char *www_authenticate;  /* static string, or NULL */
    char allow[64];                /* a 405's Allow header ("GET,HEAD"), or "" */
    /* deprecation warnings, each a Warning header (fds__resp_warn) */
    const char *warnings[FDS_RESP_WARNINGS_MAX];
    unsigned nwarnings;
} fds_resp;

/* Add deprecation warning `text` (a static string without '"' or '\\')
 * to the answer, as Elasticsearch's HeaderWarning sends one: a header
 * `Warning: 299 Elasticsearch-<version> "text"` (RFC 7234 §5.5, code 299
 * "miscellaneous persistent warning").  Past FDS_RESP_WARNINGS_MAX it is
 * dropped; the same text twice is sent once. */
void fds__resp_warn(fds_resp *o, const char *text);

/* Responses.  All take ownership of what they are given. */
void fds__resp_json(fds_resp *o, int status, cJSON *json);
/* `body` (malloc'd, `len` bytes) as the answer; content_type NULL means
 * "application/json". */
void fds__resp_raw(fds_resp *o, int status, char *body, size_t len,
                  const char *content_type);

/* The text built in `b` as the answer (b->p is taken over), or a 500 when
 * building it ran out of memory (b->oom; b->p is freed). */
void fds__resp_strbuf(fds_resp *o, int status, fds_strbuf *b);

/* The "error" object of Elasticsearch's error shape for `e` (root_cause,
 * type, reason, ...), for answers that hold errors per item (mget docs).
 * The caller owns it. */
cJSON *fds__error_json(const fds_err *e);
/* Answer an error from below src/http: status and type from its kind
 * (http_error.c's table). */
void fds__resp_error(fds_resp *o, const fds_err *err);
/* Answer an error of the edge itself with an explicit status and type. */
void fds__resp_errorf(fds_resp *o, int status, const char *type,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Answer `e` with an explicit status and type; when `hname` is not NULL
 * the error's root cause lists the header `hname: hval` the answer
 * carries, as Elasticsearch lists WWW-Authenticate on a 401. */
void fds__resp_error_as(fds_resp *o, const fds_err *e, int status,
                        const char *type, const char *hname, const char *hval);
/* Elasticsearch's short error shape, {"error":"reason","status":N}, which
 * its RestController uses for requests it refuses before any handler
 * runs. */
void fds__resp_simple_error(fds_resp *o, int status, const char *reason);

#endif
