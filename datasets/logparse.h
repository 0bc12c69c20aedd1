/*
 * logparse.h: nginx/Apache access-log lines -> the 17-field JSON documents of
 * fieldstore's nginx data set (DESIGN.md §2).
 *
 * Why this exists: every part of fieldstore that needs realistic documents
 * (the converter `nginx2json`, the synthetic generator `synthlogs`, tests that
 * compare a stored document with "the JSON its line converts to") must produce
 * byte-identical JSON for the same line and options.  This module is that one
 * definition: a parser for one log line, the derivations (service_name,
 * error_code, synthesized timings, request_id), and one JSON formatter.
 *
 * Accepted line shape (nginx `combined`, Apache `%h %l %u %t "%r" %>s %b
 * "%{Referer}i" "%{User-agent}i"`), with an optional trailing quoted
 * `"$http_x_forwarded_for"` field:
 *
 *   ADDR SP IDENT SP USER SP [DD/Mon/YYYY:HH:MM:SS +HHMM] SP "REQUEST" SP
 *   STATUS SP BYTES SP "REFERER" SP "USER_AGENT" [SP "X_FORWARDED_FOR"]
 *
 *   - ADDR, IDENT, USER: runs of non-space bytes (IDENT is checked, not kept).
 *   - REQUEST: "METHOD SP TARGET [SP PROTOCOL]" where METHOD is 1..32 RFC 7230
 *     token characters and PROTOCOL (the text after the last space) starts
 *     with "HTTP/"; TARGET is everything in between (it may hold spaces).
 *     A request logged as "-" or "" (nginx: connection closed before a
 *     request line) gives method, url and http_version "-".
 *   - STATUS: exactly 3 digits.  BYTES: 1..19 digits, or "-" (Apache's %b for
 *     zero), which gives 0.
 *   - Quoted fields end at the first '"' not preceded by a backslash; their
 *     bytes are kept exactly as logged (nginx's \xHH and Apache's \" escapes
 *     are not decoded).
 *   - A trailing CR and trailing spaces/tabs are ignored; any other text
 *     after the last quoted field makes the line unparsable.
 *
 * Threading: no global state; every function is reentrant.
 */
#ifndef FDS_LOGPARSE_H
#define FDS_LOGPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "fds_error.h"

/* Named limits. */
#define FDS_LOGPARSE_METHOD_MAX 32        /* bytes in a request method */
#define FDS_LOGPARSE_BYTES_DIGITS_MAX 19  /* digits of body_bytes_sent (< 2^63) */
#define FDS_LOGPARSE_TIME_MAX_MS 600000u  /* cap of synthesized timings, ms */
#define FDS_LOGPARSE_REQUEST_ID_LEN 32    /* hex digits of request_id */
#define FDS_LOGPARSE_FIELDS_MAX 17        /* fields of a document */
#define FDS_LOGPARSE_HOST_DEFAULT "www.zanbil.ir"

/* A byte range inside a caller-owned buffer (not NUL-terminated). */
typedef struct fds_logslice {
    const char *ptr;
    size_t len;
} fds_logslice;

/*
 * One access-log record.  The fds_logslice members point into the line given
 * to fds_logparse_line() (or into any buffer the caller owns, as synthlogs
 * does): they stay valid only as long as that buffer.
 */
typedef struct fds_logrec {
    /* Parsed from the line by fds_logparse_line(). */
    fds_logslice remote_addr;
    fds_logslice remote_user;
    fds_logslice method;
    fds_logslice url;
    fds_logslice http_version;
    fds_logslice referrer;
    fds_logslice user_agent;
    /* ptr == NULL when the line has no trailing field or it is "-": the
     * document then has 16 fields (x_forwarded_for is left out). */
    fds_logslice x_forwarded_for;
    int64_t epoch;         /* $time_local as seconds since 1970-01-01 UTC */
    int tz_offset_min;     /* its UTC offset in minutes (+0330 -> 210) */
    int status;            /* 0..999 */
    uint64_t body_bytes_sent;

    /* Derived by fds_logparse_derive(). */
    fds_logslice host;
    const char *service_name;     /* static string, see fds_logparse_service() */
    const char *error_code;       /* static string, see fds_logparse_error_code() */
    uint32_t request_time_ms;     /* printed as seconds with 3 decimals */
    uint32_t upstream_response_time_ms; /* <= request_time_ms */
    char request_id[FDS_LOGPARSE_REQUEST_ID_LEN + 1]; /* lowercase hex + NUL */
} fds_logrec;

/*
 * Parse one log line (without its '\n'; a trailing '\r' is allowed) of `len`
 * bytes into `rec` (all parsed members are set; derived ones are zeroed).
 * The line need not be NUL-terminated and may hold any bytes.
 *
 * Returns 0, or FDS_EPARSE when the line does not have the shape above; then
 * `*why` (if `why` is not NULL) is set to a static English reason such as
 * "bad month in timestamp" and `*col` (if not NULL) to the 0-based byte
 * offset where parsing stopped.
 */
int fds_logparse_line(const char *line, size_t len, fds_logrec *rec,
                      const char **why, size_t *col);

/*
 * Fill the derived members of a parsed record.
 *   host:    copied as a slice (the caller keeps `host` alive; NUL-terminated).
 *   seed, line_no: inputs of the deterministic synthesized values
 *            (request_time, upstream_response_time, request_id); the same
 *            (seed, line_no, service, status, body_bytes_sent) always gives
 *            the same values, on every platform with IEEE-754 doubles.
 *
 * request_id is 128 bits (two splitmix64 finalizer outputs of seed and
 * line_no) as 32 lowercase hex digits.  Timings: see fds_logparse_timing().
 */
void fds_logparse_derive(fds_logrec *rec, const char *host, uint64_t seed,
                         uint64_t line_no);

/*
 * service_name of a request target: its first path segment (scheme and
 * authority of an absolute URL skipped; the segment ends at '/', '?', '#' or
 * ';'), compared ASCII case-insensitively with this table:
 *
 *   ""  (the path "/")                               -> "home"
 *   m                                                -> "mobile"
 *   image, images                                    -> "image"
 *   static, plugins, any other segment with a '.'    -> "static"
 *   filter, ajaxfilter, browse, search               -> "search"
 *   product, comparison, discountlabel, event        -> "catalog"
 *   basket, customer, login, logout, register, order -> "account"
 *   blog, article                                    -> "content"
 *   site, settings, province, index                  -> "site"
 *   anything else (also "-", "*", no leading '/')    -> "other"
 *
 * Returns a static string; never NULL.
 */
const char *fds_logparse_service(const char *url, size_t len);

/*
 * error_code of an HTTP status: "-" below 400; otherwise a stable snake_case
 * name: 400 bad_request, 401 unauthorized, 403 forbidden, 404 not_found,
 * 405 method_not_allowed, 408 request_timeout, 413 payload_too_large,
 * 414 uri_too_long, 429 too_many_requests, 499 client_closed_request,
 * 500 internal_server_error, 502 bad_gateway, 503 service_unavailable,
 * 504 gateway_timeout; any other status >= 400 gives "http_NNN" (static
 * storage per status).  Returns a static string; never NULL.
 */
const char *fds_logparse_error_code(int status);

/*
 * Synthesized timings in milliseconds (nginx's $request_time and
 * $upstream_response_time have millisecond resolution).  upstream is
 * log-normal around a median chosen by service_name and status class
 * (e.g. static 1 ms, image 6 ms, search 120 ms, 3xx 4 ms, 5xx 250 ms) with
 * sigma 0.6; request = upstream + transfer, transfer = body_bytes_sent /
 * (a log-normal client speed around 1 MB/s, sigma 0.8).  The normal deviates
 * are Irwin-Hall sums of 4 uniforms from a splitmix64 hash of (seed,
 * line_no), and exp() is computed here (no libm), so values are the same
 * everywhere.  Both are capped at FDS_LOGPARSE_TIME_MAX_MS.
 */
void fds_logparse_timing(const char *service_name, int status,
                         uint64_t body_bytes_sent, uint64_t seed,
                         uint64_t line_no, uint32_t *request_ms,
                         uint32_t *upstream_ms);

/*
 * Upper bound, in bytes, of the JSON that fds_logparse_json() writes for
 * `rec` (derived members set).  Every string byte may grow to 6 bytes
 * ("\u00XX"); the rest is a fixed overhead.  Never 0.
 */
size_t fds_logparse_json_bound(const fds_logrec *rec);

/*
 * Write `rec` as one compact JSON object (no spaces, no newline, no NUL) to
 * dst[0..cap), fields in DESIGN.md §2 order:
 *
 *   {"@timestamp":"2019-01-22T03:56:14+03:30","remote_addr":"..",
 *    "remote_user":"..","method":"..","url":"..","http_version":"..",
 *    "status":200,"body_bytes_sent":30577,"referrer":"..","user_agent":"..",
 *    ["x_forwarded_for":"..",]"host":"..","service_name":"..",
 *    "error_code":"-","request_time":0.047,"upstream_response_time":0.031,
 *    "request_id":"<32 hex>"}
 *
 * Strings are written by fds_json_escape() (src/common/fds_text.h):
 * '"' and '\' are backslash-escaped, bytes < 0x20 are written as
 * \u00XX, valid UTF-8 (RFC 3629: no overlongs, surrogates or > U+10FFFF) is
 * copied as is, and every byte that is not part of valid UTF-8 is written as
 * \u00XX, i.e. read as Latin-1, so the output is always valid UTF-8 and the
 * byte value stays visible.
 *
 * Returns 0 and sets *out_len (bytes written), or FDS_ERANGE when `cap` is
 * too small (nothing useful in dst then; a cap of fds_logparse_json_bound()
 * always suffices).
 */
int fds_logparse_json(const fds_logrec *rec, char *dst, size_t cap,
                      size_t *out_len);

/*
 * Format epoch + offset as "YYYY-MM-DDTHH:MM:SS+HH:MM" (25 bytes + NUL) into
 * dst (at least FDS_LOGPARSE_TS_LEN + 1 bytes).  Years outside 0..9999 are
 * clamped to that range.  Returns FDS_LOGPARSE_TS_LEN.
 */
#define FDS_LOGPARSE_TS_LEN 25
size_t fds_logparse_iso8601(int64_t epoch, int tz_offset_min, char *dst);

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): advances *state and returns the next value. */
uint64_t fds_logparse_splitmix64(uint64_t *state);

#endif
