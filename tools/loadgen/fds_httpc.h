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
 * Also here: targets (`https://host:port` parsed and resolved), the
 * transport of a connection (plain, or TLS through GnuTLS: the library
 * libmicrohttpd serves fieldstore's HTTPS with) and a small blocking client
 * for the few start-up and report requests (_search sampling, _settings,
 * _stats, _nodes/stats, _cat/nodes).
 */
#ifndef FDS_HTTPC_H
#define FDS_HTTPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

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

/* 1 if `sa` is a loopback address (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104). */
int fds_httpc_addr_is_loopback(const struct sockaddr *sa);

#define FDS_HTTPC_MAX_HOST 256 /* bytes of a host name or address, NUL included */
#define FDS_HTTPC_MAX_AUTH 1024 /* bytes of the Authorization line, CRLF and NUL included */

/*
 * TLS settings shared by every connection of a run: the trust anchors
 * (`cacert`, a PEM file; NULL: the system's trust store) and whether the
 * peer's certificate is verified (`insecure` 1: not at all).  Built once,
 * used read-only by every thread (GnuTLS certificate credentials).
 * Returns 0 with *out (free with fds_httpc_tls_free, NULL-safe), or
 * FDS_EINVAL / FDS_ENOMEM with a sentence in `msg`.
 */
typedef struct fds_httpc_tls fds_httpc_tls;
int fds_httpc_tls_new(const char *cacert, int insecure, fds_httpc_tls **out, char *msg,
                      size_t msglen);
void fds_httpc_tls_free(fds_httpc_tls *t);

/*
 * One server to talk to: what `[http://|https://]HOST[:PORT]` names, its
 * resolved address, the Host header, and the credentials and TLS settings
 * every request to it carries.  `auth` and `tls` are not owned.
 */
typedef struct fds_httpc_target {
    char url[FDS_HTTPC_MAX_HOST + 24]; /* "http://127.0.0.2:9200", as reports name it */
    char host[FDS_HTTPC_MAX_HOST];     /* name or address, without brackets */
    int port;
    int https;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char host_header[FDS_HTTPC_MAX_HOST + 16];
    const char *auth;                  /* "Authorization: ...\r\n", or NULL */
    const fds_httpc_tls *tls;          /* required with https */
} fds_httpc_target;

/*
 * Parse `spec` ("h", "h:p", "[v6]:p", "http://h:p", "https://h:p"; a
 * trailing '/' is allowed) into `t`, `default_port` when none is given, and
 * resolve it (getaddrinfo; a name is looked up, the first address used).
 * Any host is accepted.  Returns 0, or FDS_EINVAL with a sentence in `msg`.
 */
int fds_httpc_target_parse(fds_httpc_target *t, const char *spec, int default_port, char *msg,
                           size_t msglen);

/* fds_httpc_target_parse() without the resolution: fills t->https, t->host
 * and t->port only (no look-up, no packet).  0, or FDS_EINVAL with `msg`. */
int fds_httpc_target_split(fds_httpc_target *t, const char *spec, int default_port, char *msg,
                           size_t msglen);

/*
 * The transport of one connection: the plain socket, or a GnuTLS session
 * over it.  For the engine's non-blocking sockets: fds_httpc_io_open()
 * after the TCP connect completed, then fds_httpc_io_handshake() until it
 * returns 0; fds_httpc_io_send/recv return bytes, 0 at the peer's close
 * (recv), or -1 with errno EAGAIN (wait: *want_write says for which
 * direction), EINTR, or ECONNRESET for any other failure.
 */
typedef struct fds_httpc_io {
    int fd;
    void *ses;  /* gnutls_session_t with https, else NULL */
} fds_httpc_io;

/* Start TLS on io->fd when t->https.  0, or FDS_ENOMEM / FDS_EIO with `msg`. */
int fds_httpc_io_open(fds_httpc_io *io, const fds_httpc_target *t, char *msg, size_t msglen);

/* Advance the TLS handshake: 0 done (or plain), 1 again (*want_write: 1 to
 * wait for POLLOUT, 0 for POLLIN), FDS_EIO failed with a sentence in `msg`
 * (a certificate that does not verify names its reason). */
int fds_httpc_io_handshake(fds_httpc_io *io, int *want_write, char *msg, size_t msglen);

ssize_t fds_httpc_io_send(fds_httpc_io *io, const void *buf, size_t n);
ssize_t fds_httpc_io_recv(fds_httpc_io *io, void *buf, size_t n);

/* Bytes already decrypted and waiting in the TLS layer (0 for plain). */
size_t fds_httpc_io_pending(const fds_httpc_io *io);

/* End the TLS session (no close_notify) and close the socket; io->fd = -1. */
void fds_httpc_io_close(fds_httpc_io *io);

/*
 * One blocking request to `t` on a fresh connection (Connection: close),
 * TLS and credentials as `t` says, with a timeout in milliseconds for the
 * whole exchange.  `body` may be NULL.  On return 0, *status is the HTTP
 * status and *out a malloc'ed NUL-terminated body (caller frees).  Errors:
 * FDS_EIO (connect, TLS handshake, send or recv failed or timed out, or the
 * response was cut short), FDS_EPARSE (malformed response), FDS_ENOMEM;
 * `why` (may be NULL) gets a sentence saying which.
 */
int fds_httpc_request_why(const fds_httpc_target *t, const char *method, const char *path,
                          const char *body, int timeout_ms, int *status, char **out, char *why,
                          size_t whylen);

/* fds_httpc_request_why() without the sentence. */
int fds_httpc_request(const fds_httpc_target *t, const char *method, const char *path,
                      const char *body, int timeout_ms, int *status, char **out);

#endif
