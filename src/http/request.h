/*
 * request.h: a request as the handlers see it (fds_req) and the helpers
 * that read it -- URL parameters, the path's segments, the JSON body
 * (internal to src/http).  With response.h, the bottom of the folder: it
 * calls nothing above it.
 */
#ifndef FDS_HTTP_REQUEST_H
#define FDS_HTTP_REQUEST_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <microhttpd.h>

#include "fds_error.h"
#include "response.h"
#include "store.h"

#define FDS_PATH_SEGMENTS_MAX 8

typedef struct fds_req {
    fds_store *store;
    const char *method;            /* "GET", "PUT", ... */
    const char *url;               /* the raw path, not unescaped */
    char *seg[FDS_PATH_SEGMENTS_MAX]; /* unescaped path segments */
    unsigned nseg;
    struct MHD_Connection *conn;
    const char *body;              /* NUL-terminated */
    size_t body_len;
    long long start_us;
    char **params;                 /* decoded parameter copies (fds__req_param) */
    unsigned nparams, params_cap;
    /* a request made inside another (an _msearch item): no connection; its
     * parameters are these name/value pairs (2 * nkv strings) */
    const char *const *kv;
    unsigned nkv;
} fds_req;

/* A URL query parameter, percent-decoded; "" for a bare flag ("?v"); NULL
 * when absent (or out of memory).  The copy belongs to the request and stays
 * valid until its answer is queued. */
const char *fds__req_param(fds_req *r, const char *key);
/* A boolean parameter: dflt when absent, true for "" or "true", else
 * false.  A parameter read this way must be listed in request.c's
 * BOOL_PARAMS, so that fds__req_check_params refuses any other value with
 * Elasticsearch's 400 before the handler runs. */
bool fds__req_param_bool(fds_req *r, const char *key, bool dflt);
/* Free the parameter copies fds__req_param made for a request made inside
 * another (an _msearch item, a probe search); its strings stay the
 * caller's. */
void fds__req_sub_done(fds_req *sub);
/* A boolean URL parameter of which only the value `only` (0 false, 1
 * true; -1: both) is implemented: true when it is absent or has such a
 * value; otherwise false with a 400 in `o` (an unparsable value, or the
 * other one, refused by name). */
bool fds__req_param_only(fds_req *r, fds_resp *o, const char *key, int only);
/* The decoding behind fds__req_param, alone (the fuzz target
 * tests/fuzz/fuzz_url.c calls it): a malloc'd, NUL-terminated copy of the
 * raw value `v` (`vlen` bytes) with '+' as space and %XX percent-decoded;
 * NULL when out of memory. */
char *fds__param_decode(const char *v, size_t vlen);
/* Split the raw request path `path` (modified in place) on '/' and
 * percent-decode each segment into seg[0, *nseg) (pointers into `path`;
 * seg holds FDS_PATH_SEGMENTS_MAX).  Returns 0, FDS_PATH_TOO_MANY or
 * FDS_PATH_BAD_TEXT (a segment that decodes to invalid UTF-8 or holds a
 * NUL, "%00"); seg[0, *nseg) is filled up to the failure. */
#define FDS_PATH_TOO_MANY 1
#define FDS_PATH_BAD_TEXT 2
int fds__path_split(char *path, char **seg, unsigned *nseg);
/* True when every URL parameter is in `allowed` (NULL-terminated) or common
 * to all endpoints (pretty, human, filter_path, ...); else answers 400
 * "contains unrecognized parameter" as Elasticsearch does. */
bool fds__req_check_params(fds_req *r, fds_resp *o, const char *const *allowed);
/* The request's path from its unescaped segments ("/a/_stats/x"; "" for
 * "/"), cut to `cap` bytes, for error texts. */
#define FDS_REQ_PATH_MAX 512
void fds__req_path(fds_req *r, char *buf, size_t cap);
bool fds__req_is(fds_req *r, const char *method);

/* Parse a JSON body (empty body -> NULL with 0).  Rejects malformed JSON
 * with a parse_exception / 400 in `err`. */
int fds__body_json(fds_req *r, cJSON **out, fds_err *err);
/* fds__body_json, then fds_json_check_body (duplicate keys, bad UTF-8): on
 * an error *out is NULL and err filled. */
int fds__body_checked(fds_req *r, cJSON **out, fds_err *err);

#endif
