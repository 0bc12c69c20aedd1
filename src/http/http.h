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
#define FDS_HTTP_DEFAULT_PORT 9200

typedef struct fds_http_server fds_http_server;

typedef struct fds_http_options {
    const char *bind;        /* IPv4 address, default "127.0.0.1" */
    uint16_t port;           /* 0 = FDS_HTTP_DEFAULT_PORT */
    unsigned threads;        /* worker threads, 0 = number of CPUs */
    uint64_t max_body;       /* 0 = FDS_HTTP_MAX_BODY */
} fds_http_options;

/* Start serving `store` (not owned; must outlive the server).
 * Returns 0, FDS_EINVAL (bad bind address), FDS_EIO (port in use). */
int fds_http_start(fds_store *store, const fds_http_options *opt,
                   fds_http_server **out, fds_err *err);
/* Stop accepting, finish running requests, free.  NULL is a no-op. */
void fds_http_stop(fds_http_server *srv);
/* The port actually bound (useful with port 0 in tests: see main.c). */
uint16_t fds_http_port(const fds_http_server *srv);

#endif
