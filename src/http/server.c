/*
 * server.c: the daemon -- libmicrohttpd's setup and callbacks, admission
 * of a request (connection caps, framing, body size, basic auth, content
 * type), the write threads, TLS, and the output's ?filter_path and
 * ?pretty.  Which handler answers is the router's business (router.c).
 *
 * Two libmicrohttpd traps are handled here (DESIGN.md §10): the URL is not
 * unescaped before routing (MHD_OPTION_UNESCAPE_CALLBACK keeps it raw; the
 * path is split on '/' first and each segment unescaped, so an id "a%2Fb"
 * stays one segment), and request bodies arriving in many pieces are
 * accumulated up to a bound, past which the answer is 413: before the body
 * when its declared length is over it, the moment it crosses it for a
 * chunked body (body_over_limit), never after reading the rest.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fds_clock.h"
#include "async_search.h"
#include "auth.h"
#include "fds_thread.h"
#include "guard.h"
#include "http.h"
#include "json_out.h"
#include "node.h"
#include "request.h"
#include "response.h"
#include "router.h"
#include "search_ctx.h" /* fds__ctx_start, fds__ctx_stop */
#include "tasks.h"

/* Seconds a connection may stay idle or trickle a request before it is
 * closed: short enough that half-sent requests cannot hold every slot for
 * long, long enough for keep-alive clients between requests. */
#define FDS_HTTP_IDLE_TIMEOUT_S 30

/* Connections libmicrohttpd itself accepts beyond the soft cap, so that a
 * client over the cap can still be told why (429) before it is closed. */
#define FDS_HTTP_REFUSAL_HEADROOM 256u
/* File descriptors kept back from connections for segments, the catalogue
 * and the translog when the connection cap is clipped to RLIMIT_NOFILE. */
#define FDS_HTTP_FD_RESERVE 1024u

/* Elasticsearch's challenge (DefaultAuthenticationFailureHandler, Basic). */
/* Bytes of the status line and headers body_over_limit writes itself. */
#define FDS_HTTP_RAW_HEAD_MAX 256

#define FDS_HTTP_BASIC_CHALLENGE "Basic realm=\"security\" charset=\"UTF-8\""

typedef struct write_job write_job;

struct fds_http_server {
    struct MHD_Daemon *d;
    fds_store *store;
    uint64_t max_body;
    uint16_t port;
    fds__guard *guard;
    fds__users *users;
    char *tls_cert, *tls_key; /* PEM text, kept while the daemon runs */
    /* the write threads and their queue (see "Write threads") */
    pthread_mutex_t wq_mu;
    pthread_cond_t wq_cv;
    write_job *wq_head, *wq_tail;
    bool wq_stop;               /* under wq_mu: run requests inline */
    bool wq_ready;              /* wq_mu and wq_cv initialized */
    pthread_t *writers;
    unsigned nwriters;
};

/* Per-connection-request state (MHD's con_cls). */
typedef struct req_state {
    char *body;
    size_t len, cap;
    bool too_big;
    int guard_refusal; /* over a connection cap: fds__guard_head's answer */
    /* a request run on a write thread: its answer, made there, queued
     * when the connection is resumed (see "Write threads") */
    bool answered;
    fds_resp out;
} req_state;
/* ---- libmicrohttpd callbacks --------------------------------------------------- */

/* Keep the URL raw; segments are unescaped after splitting (see top). */
static size_t keep_raw(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    fds_http_server *srv = cls;
    req_state *st = *con_cls;
    if (st) {
        free(st->body);
        free(st->out.body); /* a write thread's answer never queued */
        free(st);
        fds__guard_done(srv->guard, c);
    }
    *con_cls = NULL;
}

/* What the request head says about framing and the body (RFC 9112 §6). */
typedef struct head_scan {
    unsigned ncl;        /* Content-Length fields */
    bool cl_differ;      /* ... with different values */
    char cl[32];
    unsigned nte;        /* Transfer-Encoding fields */
    bool te_chunked;     /* the only one, and exactly "chunked" */
} head_scan;

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind,
                                   const char *key, const char *value)
{
    (void)kind;
    head_scan *h = cls;
    if (!strcasecmp(key, "Content-Length")) {
        if (h->ncl && strcmp(h->cl, value))
            h->cl_differ = true;
        if (!h->ncl)
            snprintf(h->cl, sizeof h->cl, "%s", value);
        h->ncl++;
    } else if (!strcasecmp(key, "Transfer-Encoding")) {
        h->te_chunked = !h->nte && !strcasecmp(value, "chunked");
        h->nte++;
    }
    return MHD_YES;
}

/* The answer to a request head, before any body is read, or false to go
 * on.  An answer given here ends the connection: the unread body (or what
 * a smuggler put after it) must not be taken for the next request. */
static bool early_answer(fds_http_server *srv, struct MHD_Connection *conn,
                         req_state *st, fds_resp *o)
{
    head_scan h = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_header, &h);
    o->close = true;
    if (st->guard_refusal) {
        fds__resp_errorf(o, 429, "rejected_execution_exception",
                        "too many connections %s; try again later",
                        st->guard_refusal == 1 ? "from this client address"
                                               : "to this node");
        return true;
    }
    /* RFC 9112 §6.3: both framings, or disagreeing lengths, make the
     * message length unknowable: 400 and close. */
    if (h.nte && h.ncl) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "a request must not carry both Content-Length and "
                        "Transfer-Encoding");
        return true;
    }
    if (h.cl_differ) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "a request must not carry different Content-Length values");
        return true;
    }
    if (h.nte && !(h.nte == 1 && h.te_chunked)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "unsupported Transfer-Encoding (only chunked is accepted)");
        return true;
    }
    if (h.ncl) {
        char *end = NULL;
        unsigned long long n = strtoull(h.cl, &end, 10);
        if (end == h.cl || *end) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "bad Content-Length [%s]", h.cl);
            return true;
        }
        /* Declared too big: refuse now, before "100 Continue" and before
         * reading a byte of it. */
        if (n > srv->max_body) {
            fds__resp_errorf(o, 413, "content_too_long_exception",
                            "request body is too large: [%llu] bytes, more than "
                            "[%llu] (http.max_content_length)", n,
                            (unsigned long long)srv->max_body);
            return true;
        }
    }
    o->close = false;
    return false;
}

/* Body content types Elasticsearch 8 takes as JSON (XContentType): the
 * media type before any parameter such as "; charset=UTF-8" or
 * "; compatible-with=8". */
static bool json_content_type(const char *ct)
{
    static const char *const OK[] = {
        "application/json", "application/x-ndjson",
        "application/vnd.elasticsearch+json",
        "application/vnd.elasticsearch+x-ndjson", NULL};
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    for (const char *const *a = OK; *a; a++)
        if (strlen(*a) == n && !strncasecmp(ct, *a, n))
            return true;
    return false;
}

/* Basic auth (when a users file is loaded) and, for a request with a body,
 * its content type (Elasticsearch refuses non-JSON bodies with 406, which
 * also keeps browsers' form posts from reaching the API).  Returns true
 * when the request may go on. */
static bool admit(fds_http_server *srv, fds_req *r, const char *url, fds_resp *o)
{
    if (srv->users) {
        char who[128];
        int ok = fds__users_check(srv->users, r->conn, who, sizeof who);
        if (ok <= 0) {
            fds_err e;
            fds_err_clear(&e);
            e.code = FDS_EINVAL;
            if (ok == 0)
                snprintf(e.reason, sizeof e.reason,
                         "missing authentication credentials for REST request [%s]",
                         url);
            else
                snprintf(e.reason, sizeof e.reason,
                         "unable to authenticate user [%s] for REST request [%s]",
                         who, url);
            fds__resp_error_as(o, &e, 401, "security_exception",
                               "WWW-Authenticate", FDS_HTTP_BASIC_CHALLENGE);
            o->www_authenticate = FDS_HTTP_BASIC_CHALLENGE;
            return false;
        }
    }
    if (r->body_len) {
        const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                     "Content-Type");
        if (!ct) {
            fds__resp_simple_error(o, 406, "Content-Type header is missing");
            return false;
        }
        if (!json_content_type(ct)) {
            char msg[320];
            snprintf(msg, sizeof msg, "Content-Type header [%.256s] is not supported",
                     ct);
            fds__resp_simple_error(o, 406, msg);
            return false;
        }
    }
    return true;
}

/* ?filter_path and ?pretty, on any JSON answer. */
static void shape_output(fds_req *r, fds_resp *o)
{
    if (!o->body || strncmp(o->content_type, "application/json", 16))
        return;
    const char *fp = fds__req_param(r, "filter_path");
    char *t = NULL;
    size_t tn = 0;
    if (fp && *fp && !fds__json_filter(o->body, o->len, fp, &t, &tn)) {
        free(o->body);
        o->body = t;
        o->len = tn;
    }
    const char *pretty = fds__req_param(r, "pretty");
    if (pretty && strcmp(pretty, "false") &&
        !fds__json_pretty(o->body, o->len, &t, &tn)) {
        free(o->body);
        o->body = t;
        o->len = tn;
    }
}

static enum MHD_Result queue_answer(struct MHD_Connection *conn, fds_resp *o)
{
    if (!o->body)
        fds__resp_errorf(o, 500, "exception", "no response");
    /* for HEAD libmicrohttpd sends this Content-Length and no body */
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        o->len, o->body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(o->body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", o->content_type);
    MHD_add_response_header(resp, "X-elastic-product", "Elasticsearch");
    if (o->www_authenticate)
        MHD_add_response_header(resp, "WWW-Authenticate", o->www_authenticate);
    if (o->allow[0])
        MHD_add_response_header(resp, "Allow", o->allow);
    if (o->close)
        MHD_add_response_header(resp, "Connection", "close");
    for (unsigned i = 0; i < o->nwarnings; i++) {
        char w[512];
        snprintf(w, sizeof w, "299 Elasticsearch-" FDS__ES_VERSION " \"%s\"",
                 o->warnings[i]);
        MHD_add_response_header(resp, "Warning", w);
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)o->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/*
 * A body past --max-body while it is still arriving (a chunked upload; a
 * declared Content-Length over the limit is refused in early_answer).
 * libmicrohttpd 0.9.75 refuses MHD_queue_response while upload data is
 * being handed over (only before the body or after its last byte), so
 * waiting for it would mean reading, and discarding, the rest of an
 * arbitrarily long body.  Instead the 413 is written to the socket here,
 * the write side shut (FIN after the answer), and MHD_NO makes
 * libmicrohttpd close the connection without reading another byte.  Over
 * TLS the bytes would have to go through the TLS session libmicrohttpd
 * owns, so there the connection is only closed.
 */
static enum MHD_Result body_over_limit(fds_http_server *srv,
                                       struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (srv->tls_cert || !ci)
        return MHD_NO;
    fds_resp o = {0};
    fds__resp_errorf(&o, 413, "content_too_long_exception",
                    "request body is too large: more than [%llu] bytes "
                    "(http.max_content_length)",
                    (unsigned long long)srv->max_body);
    char head[FDS_HTTP_RAW_HEAD_MAX];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 413 Content Too Large\r\n"
                      "Content-Type: %s\r\n"
                      "X-elastic-product: Elasticsearch\r\n"
                      "Connection: close\r\n"
                      "Content-Length: %zu\r\n\r\n",
                      o.content_type, o.len);
    /* a fresh socket's send buffer takes these few hundred bytes at once;
     * whatever does not fit is lost with the connection, as a 413 would be
     * to a client that stops reading */
    int fd = ci->connect_fd;
    if (hl > 0 && (size_t)hl < sizeof head &&
        send(fd, head, (size_t)hl, MSG_NOSIGNAL | MSG_DONTWAIT) == hl && o.body)
        (void)send(fd, o.body, o.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(fd, SHUT_WR);
    free(o.body);
    return MHD_NO;
}

/* Answer the complete request of `st` on `conn` into *o: admission,
 * routing and the handler, then the output's filter_path and pretty.  On
 * the connection's HTTP thread, or on a write thread while the connection
 * is suspended (nothing else touches it then). */
static void serve(fds_http_server *srv, struct MHD_Connection *conn,
                  req_state *st, const char *url, const char *method,
                  fds_resp *o)
{
    fds_req r = {0};
    r.store = srv->store;
    r.method = method;
    r.conn = conn;
    r.url = url;
    r.start_us = (long long)fds_mono_us();
    r.body = st->body ? st->body : "";
    if (st->body)
        st->body[st->len] = 0;
    r.body_len = st->len;

    /* split the raw path, then unescape each segment */
    char *path = strdup(url);
    int split = path ? fds__path_split(path, r.seg, &r.nseg) : FDS_PATH_TOO_MANY;
    bool bad = split == FDS_PATH_TOO_MANY, bad_text = split == FDS_PATH_BAD_TEXT;
    if (!admit(srv, &r, url, o)) {
        /* answered */
    } else if (st->too_big) {
        fds__resp_errorf(o, 413, "content_too_long_exception",
                        "request body is too large: more than [%llu] bytes "
                        "(http.max_content_length)",
                        (unsigned long long)srv->max_body);
    } else if (bad_text) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "the request path must be valid UTF-8 without NUL "
                        "characters (%%00)");
    } else if (bad) {
        fds__route_no_handler(&r, o);
    } else {
        fds__route(&r, o);
    }
    shape_output(&r, o);
    free(path);
    for (unsigned i = 0; i < r.nparams; i++)
        free(r.params[i]);
    free(r.params);
}

/*
 * Write threads: Elasticsearch's "write" thread pool.  libmicrohttpd's
 * thread pool gives each connection one HTTP thread for its life, and a
 * thread serves its connections one request at a time: a _bulk request
 * (parsing, the translog commit, waiting for write buffer room: 200-300
 * ms for 5,000 documents at 1M) held up every search on a connection that
 * shared its thread for as long (measured: searches stalled 140-300 ms
 * beside a _bulk loop, docs/benchmarks.md "Searches beside a _bulk
 * loop").  So a request whose route writes (router.c's R_WRITES) is handed to
 * a write thread (as many as HTTP threads, --threads): its connection is
 * suspended (MHD_suspend_connection), a write thread runs serve() and
 * resumes it, and libmicrohttpd calls answer() again, which queues the
 * answer.  The HTTP threads go on reading and answering other
 * connections meanwhile.  The queue holds at most one request per
 * connection (the connection waits for its answer), so the connection cap
 * bounds it.  Once fds_http_stop has begun, requests run inline.
 */
struct write_job {
    write_job *next;
    struct MHD_Connection *conn;
    req_state *st;
    char *url, *method;
};

/* The write threads' nice value (fds_thread_lower), the flusher's and
 * the merge thread's (FDS__BACKGROUND_NICE, store_int.h): a _bulk loop
 * keeps them busy, and at nice 0 they took the CPU from the searches
 * beside it (1M docs, the loop at 51k docs/s: search p99 beside it 2.8x
 * idle, 1.2-1.5x at nice 10; docs/benchmarks.md, "Write threads at nice
 * 10").  A lock one holds is not held long for it: nice 10 still gets
 * about a tenth of what nice 0 wants of a core. */
#define FDS_WRITE_NICE 10

static void *write_main(void *arg)
{
    fds_http_server *srv = arg;
    fds_thread_lower("fds-write", FDS_WRITE_NICE);
    pthread_mutex_lock(&srv->wq_mu);
    for (;;) {
        while (!srv->wq_head && !srv->wq_stop)
            pthread_cond_wait(&srv->wq_cv, &srv->wq_mu);
        write_job *j = srv->wq_head;
        if (!j)
            break; /* stopping, and every queued request answered */
        srv->wq_head = j->next;
        if (!srv->wq_head)
            srv->wq_tail = NULL;
        pthread_mutex_unlock(&srv->wq_mu);
        fds_resp o = {0};
        serve(srv, j->conn, j->st, j->url, j->method, &o);
        j->st->out = o;
        j->st->answered = true;
        MHD_resume_connection(j->conn);
        free(j->url);
        free(j->method);
        free(j);
        pthread_mutex_lock(&srv->wq_mu);
    }
    pthread_mutex_unlock(&srv->wq_mu);
    return NULL;
}

/* Does the request go to a write thread (its route writes)? */
static bool route_writes(fds_http_server *srv, struct MHD_Connection *conn,
                         const char *url, const char *method)
{
    char *path = strdup(url);
    fds_req r = {.store = srv->store, .method = method, .conn = conn, .url = url};
    bool w = false;
    if (path && fds__path_split(path, r.seg, &r.nseg) == 0)
        w = fds__route_writes(&r);
    free(path);
    return w;
}

/* Hand a write request to the write threads: true when queued (the
 * connection is suspended until its answer is made), false to serve it
 * here (not a write, no write threads, stopping, out of memory). */
static bool write_defer(fds_http_server *srv, struct MHD_Connection *conn,
                        req_state *st, const char *url, const char *method)
{
    if (!srv->nwriters || st->too_big || !route_writes(srv, conn, url, method))
        return false;
    write_job *j = calloc(1, sizeof *j);
    if (j) {
        j->conn = conn;
        j->st = st;
        j->url = strdup(url);
        j->method = strdup(method);
    }
    if (!j || !j->url || !j->method) {
        if (j) {
            free(j->url);
            free(j->method);
        }
        free(j);
        return false;
    }
    pthread_mutex_lock(&srv->wq_mu);
    if (srv->wq_stop) {
        pthread_mutex_unlock(&srv->wq_mu);
        free(j->url);
        free(j->method);
        free(j);
        return false;
    }
    MHD_suspend_connection(conn);
    if (srv->wq_tail)
        srv->wq_tail->next = j;
    else
        srv->wq_head = j;
    srv->wq_tail = j;
    pthread_cond_signal(&srv->wq_cv);
    pthread_mutex_unlock(&srv->wq_mu);
    return true;
}

/* Stop the write threads once every queued request is answered; later
 * requests run inline. */
static void writers_stop(fds_http_server *srv)
{
    if (!srv->writers)
        return;
    pthread_mutex_lock(&srv->wq_mu);
    srv->wq_stop = true;
    pthread_cond_broadcast(&srv->wq_cv);
    pthread_mutex_unlock(&srv->wq_mu);
    for (unsigned i = 0; i < srv->nwriters; i++)
        pthread_join(srv->writers[i], NULL);
    free(srv->writers);
    srv->writers = NULL; /* nwriters stays: wq_stop sends requests inline */
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    struct fds_http_server *srv = cls;
    req_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof *st);
        if (!st)
            return MHD_NO;
        *con_cls = st;
        st->guard_refusal = fds__guard_head(srv->guard, conn);
        fds_resp o = {0};
        if (early_answer(srv, conn, st, &o))
            return queue_answer(conn, &o);
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        fds__guard_body(srv->guard, conn, n);
        if (st->len + n > srv->max_body)
            return body_over_limit(srv, conn);
        if (st->len + n + 1 > st->cap) {
            size_t cap = st->cap ? st->cap : 16384;
            while (cap < st->len + n + 1)
                cap *= 2;
            char *q = realloc(st->body, cap);
            if (!q) {
                st->too_big = true;
                return MHD_YES;
            }
            st->body = q;
            st->cap = cap;
        }
        memcpy(st->body + st->len, upload, n);
        st->len += n;
        return MHD_YES;
    }
    if (st->answered) { /* resumed: a write thread made the answer */
        fds_resp o = st->out;
        st->out.body = NULL;
        return queue_answer(conn, &o);
    }
    fds__guard_busy(srv->guard, conn);
    if (write_defer(srv, conn, st, url, method))
        return MHD_YES;
    fds_resp o = {0};
    serve(srv, conn, st, url, method, &o);
    return queue_answer(conn, &o);
}

static char *read_pem(const char *path, fds_err *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n = -1;
    if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = 0;
        fclose(f);
        return buf;
    }
    if (f)
        fclose(f);
    free(buf);
    fds_err_setk(err, FDS_EIO, FDS_KIND_IO, "cannot read [%s]", path);
    return NULL;
}

/* libmicrohttpd's error log, at most FDS_HTTP_LOG_PER_S lines a second:
 * every connection the guard cuts is logged, and a flood of slow clients
 * must not become a flood of log lines. */
#define FDS_HTTP_LOG_PER_S 20

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static time_t second;
    static unsigned lines, dropped;
    time_t now = time(NULL);
    pthread_mutex_lock(&mu);
    if (now != second) {
        if (dropped)
            fprintf(stderr, "fieldstore: %u more libmicrohttpd messages dropped\n",
                    dropped);
        second = now;
        lines = dropped = 0;
    }
    if (lines < FDS_HTTP_LOG_PER_S) {
        lines++;
        vfprintf(stderr, fmt, ap);
    } else {
        dropped++;
    }
    pthread_mutex_unlock(&mu);
}

/* The soft connection cap: as asked, but within RLIMIT_NOFILE. */
static unsigned connection_cap(unsigned want)
{
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY) {
        rlim_t room = rl.rlim_cur > FDS_HTTP_FD_RESERVE + FDS_HTTP_REFUSAL_HEADROOM
                          ? rl.rlim_cur - FDS_HTTP_FD_RESERVE - FDS_HTTP_REFUSAL_HEADROOM
                          : 64;
        if (want > room) {
            fprintf(stderr, "fieldstore: connection limit %u lowered to %u "
                            "(RLIMIT_NOFILE %llu)\n", want, (unsigned)room,
                    (unsigned long long)rl.rlim_cur);
            want = (unsigned)room;
        }
    }
    return want;
}

int fds_http_start(fds_store *store, const fds_http_options *opt,
                   fds_http_server **out, fds_err *err)
{
    fds_http_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return FDS_ENOMEM;
    srv->store = store;
    srv->max_body = opt->max_body ? opt->max_body : FDS_HTTP_MAX_BODY;
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(opt->port);
    int rc = 0;
    if (inet_pton(AF_INET, opt->bind ? opt->bind : "127.0.0.1", &addr.sin_addr) != 1) {
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                         "bad bind address [%s]", opt->bind);
        goto fail;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                     MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    if (opt->tls_cert || opt->tls_key) {
        if (!opt->tls_cert || !opt->tls_key) {
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                             "HTTPS needs both --tls-cert and --tls-key");
            goto fail;
        }
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                             "this libmicrohttpd was built without TLS "
                             "(MHD_FEATURE_TLS); HTTPS is not available");
            goto fail;
        }
        if (!(srv->tls_cert = read_pem(opt->tls_cert, err)) ||
            !(srv->tls_key = read_pem(opt->tls_key, err))) {
            rc = FDS_EIO;
            goto fail;
        }
        flags |= MHD_USE_TLS;
    }
    if (opt->users && (rc = fds__users_load(opt->users, &srv->users, err)))
        goto fail;
    unsigned threads = opt->threads;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 2;
    }
    fds__guard_opts go = {
        .head_timeout_s = opt->head_timeout_s ? opt->head_timeout_s : FDS_HTTP_HEAD_TIMEOUT_S,
        .idle_timeout_s = FDS_HTTP_IDLE_TIMEOUT_S,
        .min_body_rate = opt->min_body_rate ? opt->min_body_rate : FDS_HTTP_MIN_BODY_RATE,
        .max_connections = connection_cap(opt->max_connections ? opt->max_connections
                                                               : FDS_HTTP_MAX_CONNECTIONS),
        .max_per_ip = opt->max_per_ip ? opt->max_per_ip : FDS_HTTP_MAX_PER_IP};
    if ((rc = fds__guard_create(&go, &srv->guard)) || (rc = fds__ctx_start()) ||
        (rc = fds__tasks_start(store)) || (rc = fds__async_start()))
        goto fail;
    pthread_mutex_init(&srv->wq_mu, NULL);
    pthread_cond_init(&srv->wq_cv, NULL);
    srv->wq_ready = true;
    if (!(srv->writers = calloc(threads, sizeof *srv->writers))) {
        rc = FDS_ENOMEM;
        goto fail;
    }
    /* fewer write threads than asked still work; none: requests inline */
    while (srv->nwriters < threads &&
           !pthread_create(&srv->writers[srv->nwriters], NULL, write_main, srv))
        srv->nwriters++;
    /* TLS options must come before the end marker; an empty pair is skipped */
    srv->d = MHD_start_daemon(
        flags, 0, NULL, NULL, answer, srv,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_UNESCAPE_CALLBACK, keep_raw, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, fds__guard_notify, srv->guard,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)FDS_HTTP_IDLE_TIMEOUT_S,
        MHD_OPTION_CONNECTION_LIMIT, go.max_connections + FDS_HTTP_REFUSAL_HEADROOM,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        srv->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, srv->tls_cert,
        MHD_OPTION_HTTPS_MEM_KEY, srv->tls_key,
        MHD_OPTION_END);
    if (!srv->d) {
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_BIND,
                         "cannot listen on %s:%u (port in use%s?)",
                         opt->bind ? opt->bind : "127.0.0.1", opt->port,
                         srv->tls_cert ? ", or a bad certificate or key" : "");
        goto fail;
    }
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : opt->port;
    *out = srv;
    return 0;
fail:
    fds_http_stop(srv);
    return rc;
}

void fds_http_stop(fds_http_server *srv)
{
    if (!srv)
        return;
    writers_stop(srv); /* no connection stays suspended */
    if (srv->d)
        MHD_stop_daemon(srv->d);
    if (srv->wq_ready) {
        pthread_mutex_destroy(&srv->wq_mu);
        pthread_cond_destroy(&srv->wq_cv);
    }
    fds__async_stop();
    fds__tasks_stop();
    fds__ctx_stop();
    fds__guard_free(srv->guard);
    fds__users_free(srv->users);
    free(srv->tls_cert);
    free(srv->tls_key);
    free(srv);
}

uint16_t fds_http_port(const fds_http_server *srv)
{
    return srv->port;
}
