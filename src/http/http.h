/*
 * http.h: the Elasticsearch-compatible REST server (public interface of
 * src/http).  libmicrohttpd serves HTTP/1.1 on a thread pool; this layer
 * alone speaks JSON and HTTP, turning fds_err details into Elasticsearch's
 * error shape ({"error":{"root_cause":[...],"type","reason"},"status"}).
 */
#ifndef FDS_HTTP_H
#define FDS_HTTP_H

#include <stdint.h>

#include "fds_error.h"
#include "store.h"

/* Largest request body accepted, bytes (Elasticsearch's
 * http.max_content_length default, 100mb); larger bodies get 413. */
#define FDS_HTTP_MAX_BODY (100u * 1024u * 1024u)
/* The largest --max-body accepted: bodies are held whole in memory and
 * their lengths pass through int-sized APIs (cJSON, snprintf's %.*s), so
 * stay well below INT_MAX.  1 GiB, ten times Elasticsearch's
 * http.max_content_length default of 100 MB. */
#define FDS_HTTP_MAX_BODY_CAP (1024ull * 1024u * 1024u)
#define FDS_HTTP_DEFAULT_PORT 9200
/* Slow-client bounds (see guard.c): seconds for a whole request head, the
 * least average body rate (bytes/s) after that grace, and soft caps on
 * connections (total, per client address) past which a client is answered
 * 429 and disconnected.  The total cap is clipped to what RLIMIT_NOFILE
 * allows (main.c raises the soft limit to the hard one). */
#define FDS_HTTP_HEAD_TIMEOUT_S 10
#define FDS_HTTP_MIN_BODY_RATE (64u * 1024u)
#define FDS_HTTP_MAX_CONNECTIONS 16384
#define FDS_HTTP_MAX_PER_IP 1024

typedef struct fds_http_server fds_http_server;

typedef struct fds_http_options {
    const char *bind;        /* IPv4 address, default "127.0.0.1" */
    uint16_t port;           /* 0 = FDS_HTTP_DEFAULT_PORT */
    unsigned threads;        /* HTTP threads and as many write threads
                                (server.c), 0 = number of CPUs */
    uint64_t max_body;       /* 0 = FDS_HTTP_MAX_BODY */
    unsigned head_timeout_s; /* whole request head, 0 = FDS_HTTP_HEAD_TIMEOUT_S */
    uint64_t min_body_rate;  /* bytes/s, 0 = FDS_HTTP_MIN_BODY_RATE */
    unsigned max_connections;/* 0 = FDS_HTTP_MAX_CONNECTIONS */
    unsigned max_per_ip;     /* 0 = FDS_HTTP_MAX_PER_IP */
    const char *tls_cert;    /* PEM file; with tls_key serves HTTPS */
    const char *tls_key;     /* PEM file (unencrypted) */
    const char *users;       /* users file (see fds__users_load); NULL = no auth */
} fds_http_options;

/* Start serving `store` (not owned; must outlive the server).
 * Returns 0, FDS_EINVAL (bad bind address, bad users file: the reason names
 * the line, TLS asked of a libmicrohttpd built without it), FDS_EIO (port in
 * use, unreadable certificate, key or users file). */
int fds_http_start(fds_store *store, const fds_http_options *opt,
                   fds_http_server **out, fds_err *err);
/* Stop accepting, finish running requests, free.  NULL is a no-op. */
void fds_http_stop(fds_http_server *srv);
/* The port actually bound (useful with port 0 in tests: see main.c). */
uint16_t fds_http_port(const fds_http_server *srv);

#endif
