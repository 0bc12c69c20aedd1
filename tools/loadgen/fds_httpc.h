/*
 * fds_httpc.h: the HTTP/1.1 client pieces of the load generator.
 *
 * Why it exists: a load generator that trusts the socket ("some bytes came
 * back") counts truncated or failed answers as successes.  This parser reads
 * responses exactly as RFC 9112 frames them -- status line, headers, then a
 * body delimited by Content-Length, by chunked transfer coding (chunk sizes,
 * extensions, trailers), or by the connection closing -- so the engine knows
 * precisely where each response ends on a keep-alive connection, and a
 * response cut short is an error.
 *
 * It is incremental: feed it whatever recv() returned; it consumes bytes up
 * to the end of one response and says how many it used.  No allocation
 * unless a body buffer is requested (start-up sampling reads bodies; the load
 * loop does not).
 *
 * Also here: the loopback-only target check and a small blocking client for
 * the few start-up and report requests (_search sampling, _settings, _stats,
 * _nodes/stats, _cat/nodes).
 */
#ifndef FDS_HTTPC_H
#define FDS_HTTPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define FDS_HTTPC_MAX_HEADER_LINE 8192     /* longest status/header/chunk-size line, bytes */
#define FDS_HTTPC_MAX_BODY (256u << 20)    /* largest body the blocking client keeps, bytes */

enum fds_httpc_state {
    FDS_HTTPC_STATUS = 0, /* reading the status line */
    FDS_HTTPC_HEADERS,
    FDS_HTTPC_BODY_LEN,   /* Content-Length body */
    FDS_HTTPC_CHUNK_SIZE,
    FDS_HTTPC_CHUNK_DATA,
    FDS_HTTPC_CHUNK_CRLF, /* the CRLF after a chunk's data */
    FDS_HTTPC_TRAILERS,
    FDS_HTTPC_BODY_EOF,   /* body ends when the server closes */
    FDS_HTTPC_DONE,
    FDS_HTTPC_ERROR,
};

typedef struct fds_httpc_resp {
    int state;            /* enum fds_httpc_state */
    int status;           /* HTTP status code once the status line is read */
    int keep_alive;       /* 1 if the connection may be reused after this response */
    int chunked;
    int64_t content_length; /* -1 if none */
    uint64_t remaining;   /* body / chunk bytes still expected */
    uint64_t body_bytes;  /* body bytes seen (decoded) */
    int head_request;     /* set by the caller: response to HEAD has no body */
    char line[FDS_HTTPC_MAX_HEADER_LINE];
    size_t line_len;
    /* optional decoded body capture (malloc'ed, NUL-terminated; caller frees) */
    int keep_body;
    char *body;
    size_t body_cap;
    const char *error;    /* static text when state == FDS_HTTPC_ERROR */
} fds_httpc_resp;

/* Prepare `r` for the next response; `keep_body` 1 to collect the body into
 * r->body (freed by fds_httpc_resp_clear()). */
void fds_httpc_resp_reset(fds_httpc_resp *r, int keep_body);

/* Free a collected body. */
void fds_httpc_resp_clear(fds_httpc_resp *r);

/*
 * Feed `n` bytes.  Returns the number of bytes consumed (<= n); parsing stops
 * right after the response ends (state FDS_HTTPC_DONE), so any bytes left are
 * the start of something else.  On malformed input state becomes
 * FDS_HTTPC_ERROR and r->error names the problem.
 */
size_t fds_httpc_resp_feed(fds_httpc_resp *r, const char *buf, size_t n);

/*
 * Tell the parser the peer closed the connection.  Returns 1 if that ends the
 * response properly (a close-delimited body), 0 if the response was cut short
 * (a "short read": the caller counts it as an error).
 */
int fds_httpc_resp_eof(fds_httpc_resp *r);

/*
 * Resolve `host`:`port` and accept it only if every address is loopback
 * (127.0.0.0/8, ::1; "localhost" resolves to those).  On success fills
 * `addr`/`addrlen` with the first address and returns 0; otherwise returns
 * FDS_EINVAL with a user-facing sentence in `msg` (size `msglen`).
 */
int fds_httpc_resolve_loopback(const char *host, int port, struct sockaddr_storage *addr,
                               socklen_t *addrlen, char *msg, size_t msglen);

/*
 * One blocking request on a fresh connection (Connection: close) with a
 * timeout in milliseconds for the whole exchange.  `body` may be NULL.  On
 * return 0, *status is the HTTP status and *out a malloc'ed NUL-terminated
 * body (caller frees).  Errors: FDS_EIO (connect/send/recv failed or timed
 * out, or the response was cut short), FDS_EPARSE (malformed response),
 * FDS_ENOMEM.
 */
int fds_httpc_request(const struct sockaddr_storage *addr, socklen_t addrlen, const char *host,
                      const char *method, const char *path, const char *body, int timeout_ms,
                      int *status, char **out);

#endif
