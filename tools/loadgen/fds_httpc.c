/*
 * fds_httpc.c: incremental HTTP/1.1 response parser, targets, the plain or
 * TLS (GnuTLS) transport of a connection and a blocking one-shot client
 * (see fds_httpc.h).
 */
#include "fds_httpc.h"

#include "fds_error.h"

#include <gnutls/gnutls.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

void fds_httpc_resp_reset(fds_httpc_resp *r, int keep_body)
{
    int head = r->head_request;
    char *body = r->body;
    size_t cap = r->body_cap;
    r->state = FDS_HTTPC_STATUS;
    r->status = 0;
    r->keep_alive = 1;
    r->chunked = 0;
    r->content_length = -1;
    r->remaining = 0;
    r->body_bytes = 0;
    r->line_len = 0;
    r->error = NULL;
    r->head_request = head;
    r->keep_body = keep_body;
    r->body = body;
    r->body_cap = cap;
    if (r->body)
        r->body[0] = '\0';
}

void fds_httpc_resp_clear(fds_httpc_resp *r)
{
    free(r->body);
    r->body = NULL;
    r->body_cap = 0;
}

static void fail(fds_httpc_resp *r, const char *why)
{
    r->state = FDS_HTTPC_ERROR;
    r->error = why;
}

static void body_add(fds_httpc_resp *r, const char *p, size_t n)
{
    r->body_bytes += n;
    if (!r->keep_body || n == 0)
        return;
    if (r->body_bytes + 1 > FDS_HTTPC_MAX_BODY) {
        fail(r, "response body larger than the client keeps");
        return;
    }
    size_t need = (size_t)r->body_bytes + 1;
    if (need > r->body_cap) {
        size_t cap = r->body_cap ? r->body_cap : 4096;
        while (cap < need)
            cap *= 2;
        char *nb = realloc(r->body, cap);
        if (!nb) {
            fail(r, "out of memory");
            return;
        }
        r->body = nb;
        r->body_cap = cap;
    }
    size_t at = (size_t)r->body_bytes - n;
    memcpy(r->body + at, p, n);
    r->body[at + n] = '\0';
}

/* Parse a decimal/hex number from the start of s; -1 on junk or overflow. */
static int64_t parse_num(const char *s, int base)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return -1;
    int64_t v = 0;
    int digits = 0;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            break;
        if (v > (INT64_MAX - d) / base)
            return -1;
        v = v * base + d;
        digits++;
    }
    if (!digits)
        return -1;
    while (*s == ' ' || *s == '\t')
        s++;
    if (base == 10 && *s)
        return -1;
    if (base == 16 && *s && *s != ';') /* chunk extensions follow ';' */
        return -1;
    return v;
}

static void on_status_line(fds_httpc_resp *r, char *line)
{
    /* HTTP/1.x SP 3DIGIT [SP reason] */
    if (strncmp(line, "HTTP/1.", 7) != 0 || (line[7] != '0' && line[7] != '1') || line[8] != ' ' ||
        !(line[9] >= '1' && line[9] <= '5') || !(line[10] >= '0' && line[10] <= '9') ||
        !(line[11] >= '0' && line[11] <= '9') || (line[12] != ' ' && line[12] != '\0')) {
        fail(r, "malformed status line");
        return;
    }
    r->keep_alive = line[7] == '1';
    r->status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
    r->state = FDS_HTTPC_HEADERS;
}

static int has_token(const char *v, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = v; *p; p++)
        if (strncasecmp(p, tok, n) == 0)
            return 1;
    return 0;
}

static void on_headers_end(fds_httpc_resp *r)
{
    if (r->status >= 100 && r->status < 200 && r->status != 101) {
        /* interim response (100 Continue): the real one follows */
        int ka = r->keep_alive;
        fds_httpc_resp_reset(r, r->keep_body);
        r->keep_alive = ka;
        return;
    }
    if (r->head_request || r->status == 204 || r->status == 304) {
        r->state = FDS_HTTPC_DONE;
        return;
    }
    if (r->chunked) {
        r->state = FDS_HTTPC_CHUNK_SIZE;
    } else if (r->content_length >= 0) {
        r->remaining = (uint64_t)r->content_length;
        r->state = r->remaining ? FDS_HTTPC_BODY_LEN : FDS_HTTPC_DONE;
    } else {
        r->keep_alive = 0;
        r->state = FDS_HTTPC_BODY_EOF;
    }
}

static void on_header_line(fds_httpc_resp *r, char *line)
{
    if (line[0] == '\0') {
        on_headers_end(r);
        return;
    }
    char *colon = strchr(line, ':');
    if (!colon || colon == line) {
        fail(r, "malformed header line");
        return;
    }
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    if (strcasecmp(line, "Content-Length") == 0) {
        int64_t n = parse_num(v, 10);
        if (n < 0 || (r->content_length >= 0 && r->content_length != n)) {
            fail(r, "bad Content-Length");
            return;
        }
        r->content_length = n;
    } else if (strcasecmp(line, "Transfer-Encoding") == 0) {
        if (has_token(v, "chunked"))
            r->chunked = 1;
        else {
            fail(r, "unsupported Transfer-Encoding");
            return;
        }
    } else if (strcasecmp(line, "Connection") == 0) {
        if (has_token(v, "close"))
            r->keep_alive = 0;
        else if (has_token(v, "keep-alive"))
            r->keep_alive = 1;
    }
}

static void on_chunk_size_line(fds_httpc_resp *r, char *line)
{
    int64_t n = parse_num(line, 16);
    if (n < 0) {
        fail(r, "bad chunk size");
        return;
    }
    if (n == 0) {
        r->state = FDS_HTTPC_TRAILERS;
        return;
    }
    r->remaining = (uint64_t)n;
    r->state = FDS_HTTPC_CHUNK_DATA;
}

size_t fds_httpc_resp_feed(fds_httpc_resp *r, const char *buf, size_t n)
{
    size_t i = 0;
    while (i < n && r->state != FDS_HTTPC_DONE && r->state != FDS_HTTPC_ERROR) {
        switch (r->state) {
        case FDS_HTTPC_STATUS:
        case FDS_HTTPC_HEADERS:
        case FDS_HTTPC_CHUNK_SIZE:
        case FDS_HTTPC_CHUNK_CRLF:
        case FDS_HTTPC_TRAILERS: {
            const char *nl = memchr(buf + i, '\n', n - i);
            size_t take = nl ? (size_t)(nl - (buf + i)) : n - i;
            if (r->line_len + take >= sizeof r->line) {
                fail(r, "header or chunk line too long");
                break;
            }
            memcpy(r->line + r->line_len, buf + i, take);
            r->line_len += take;
            i += take;
            if (!nl)
                break;
            i++; /* the '\n' */
            if (r->line_len && r->line[r->line_len - 1] == '\r')
                r->line_len--;
            r->line[r->line_len] = '\0';
            r->line_len = 0;
            char *line = r->line;
            switch (r->state) {
            case FDS_HTTPC_STATUS:
                on_status_line(r, line);
                break;
            case FDS_HTTPC_HEADERS:
                on_header_line(r, line);
                break;
            case FDS_HTTPC_CHUNK_SIZE:
                on_chunk_size_line(r, line);
                break;
            case FDS_HTTPC_CHUNK_CRLF:
                if (line[0] != '\0')
                    fail(r, "missing CRLF after chunk data");
                else
                    r->state = FDS_HTTPC_CHUNK_SIZE;
                break;
            case FDS_HTTPC_TRAILERS:
                if (line[0] == '\0')
                    r->state = FDS_HTTPC_DONE;
                break;
            }
            break;
        }
        case FDS_HTTPC_BODY_LEN:
        case FDS_HTTPC_CHUNK_DATA: {
            size_t take = n - i;
            if (take > r->remaining)
                take = (size_t)r->remaining;
            body_add(r, buf + i, take);
            r->remaining -= take;
            i += take;
            if (r->remaining == 0 && r->state != FDS_HTTPC_ERROR)
                r->state = r->state == FDS_HTTPC_BODY_LEN ? FDS_HTTPC_DONE : FDS_HTTPC_CHUNK_CRLF;
            break;
        }
        case FDS_HTTPC_BODY_EOF:
            body_add(r, buf + i, n - i);
            i = n;
            break;
        }
    }
    return i;
}

int fds_httpc_resp_eof(fds_httpc_resp *r)
{
    if (r->state == FDS_HTTPC_BODY_EOF) {
        r->state = FDS_HTTPC_DONE;
        return 1;
    }
    return r->state == FDS_HTTPC_DONE;
}

int fds_httpc_addr_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
            return 1;
        if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
            return s6->sin6_addr.s6_addr[12] == 127;
    }
    return 0;
}

/* ---- TLS (GnuTLS) ---------------------------------------------------------- */

struct fds_httpc_tls {
    gnutls_certificate_credentials_t cred;
    int insecure;
};

int fds_httpc_tls_new(const char *cacert, int insecure, fds_httpc_tls **out, char *msg,
                      size_t msglen)
{
    *out = NULL;
    fds_httpc_tls *t = calloc(1, sizeof *t);
    if (!t || gnutls_certificate_allocate_credentials(&t->cred) < 0) {
        free(t);
        snprintf(msg, msglen, "out of memory setting up TLS");
        return FDS_ENOMEM;
    }
    t->insecure = insecure;
    if (cacert) {
        int n = gnutls_certificate_set_x509_trust_file(t->cred, cacert, GNUTLS_X509_FMT_PEM);
        if (n <= 0) {
            snprintf(msg, msglen, "--cacert %s: no PEM certificate could be read (%s)", cacert,
                     n < 0 ? gnutls_strerror(n) : "the file holds none");
            fds_httpc_tls_free(t);
            return FDS_EINVAL;
        }
    } else if (!insecure) {
        /* no --cacert: the system's trust store, as curl does */
        gnutls_certificate_set_x509_system_trust(t->cred);
    }
    *out = t;
    return 0;
}

void fds_httpc_tls_free(fds_httpc_tls *t)
{
    if (!t)
        return;
    gnutls_certificate_free_credentials(t->cred);
    free(t);
}

int fds_httpc_io_open(fds_httpc_io *io, const fds_httpc_target *t, char *msg, size_t msglen)
{
    io->ses = NULL;
    if (!t->https)
        return 0;
    if (!t->tls) {
        snprintf(msg, msglen, "%s: https without TLS settings", t->url);
        return FDS_EIO;
    }
    gnutls_session_t ses;
    if (gnutls_init(&ses, GNUTLS_CLIENT | GNUTLS_NONBLOCK) < 0) {
        snprintf(msg, msglen, "out of memory starting TLS");
        return FDS_ENOMEM;
    }
    if (gnutls_set_default_priority(ses) < 0 ||
        gnutls_credentials_set(ses, GNUTLS_CRD_CERTIFICATE, t->tls->cred) < 0) {
        gnutls_deinit(ses);
        snprintf(msg, msglen, "%s: TLS set-up failed", t->url);
        return FDS_EIO;
    }
    struct in6_addr a6;
    struct in_addr a4;
    int is_ip = inet_pton(AF_INET, t->host, &a4) == 1 || inet_pton(AF_INET6, t->host, &a6) == 1;
    if (!is_ip) /* RFC 6066: server_name carries host names only */
        gnutls_server_name_set(ses, GNUTLS_NAME_DNS, t->host, strlen(t->host));
    if (!t->tls->insecure) /* the chain and the name (an IP literal: an IP SAN) */
        gnutls_session_set_verify_cert(ses, t->host, 0);
    gnutls_transport_set_int(ses, io->fd);
    gnutls_handshake_set_timeout(ses, 0);
    io->ses = ses;
    return 0;
}

int fds_httpc_io_handshake(fds_httpc_io *io, int *want_write, char *msg, size_t msglen)
{
    *want_write = 0;
    if (!io->ses)
        return 0;
    gnutls_session_t ses = io->ses;
    int rc = gnutls_handshake(ses);
    if (rc == GNUTLS_E_SUCCESS)
        return 0;
    if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
        *want_write = gnutls_record_get_direction(ses);
        return 1;
    }
    if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
        unsigned st = gnutls_session_get_verify_cert_status(ses);
        gnutls_datum_t d = {0};
        if (gnutls_certificate_verification_status_print(st, GNUTLS_CRT_X509, &d, 0) == 0) {
            snprintf(msg, msglen,
                     "TLS: the server's certificate does not verify: %s (give --cacert FILE "
                     "with the CA that signed it, or --insecure)",
                     (const char *)d.data);
            gnutls_free(d.data);
        } else {
            snprintf(msg, msglen, "TLS: the server's certificate does not verify");
        }
    } else {
        snprintf(msg, msglen, "TLS handshake failed: %s", gnutls_strerror(rc));
    }
    return FDS_EIO;
}

ssize_t fds_httpc_io_send(fds_httpc_io *io, const void *buf, size_t n)
{
    if (!io->ses)
        return send(io->fd, buf, n, MSG_NOSIGNAL);
    ssize_t r = gnutls_record_send(io->ses, buf, n);
    if (r >= 0)
        return r;
    errno = r == GNUTLS_E_AGAIN ? EAGAIN : r == GNUTLS_E_INTERRUPTED ? EINTR : ECONNRESET;
    return -1;
}

ssize_t fds_httpc_io_recv(fds_httpc_io *io, void *buf, size_t n)
{
    if (!io->ses)
        return recv(io->fd, buf, n, 0);
    ssize_t r = gnutls_record_recv(io->ses, buf, n);
    if (r >= 0)
        return r;
    if (r == GNUTLS_E_PREMATURE_TERMINATION)
        return 0; /* closed without close_notify: the parser decides if that was early */
    errno = r == GNUTLS_E_AGAIN ? EAGAIN : r == GNUTLS_E_INTERRUPTED ? EINTR : ECONNRESET;
    return -1;
}

size_t fds_httpc_io_pending(const fds_httpc_io *io)
{
    return io->ses ? gnutls_record_check_pending(io->ses) : 0;
}

void fds_httpc_io_close(fds_httpc_io *io)
{
    if (io->ses)
        gnutls_deinit(io->ses);
    io->ses = NULL;
    if (io->fd >= 0)
        close(io->fd);
    io->fd = -1;
}

/* ---- targets --------------------------------------------------------------- */

int fds_httpc_target_split(fds_httpc_target *t, const char *spec, int default_port, char *msg,
                           size_t msglen)
{
    memset(t, 0, sizeof *t);
    const char *p = spec;
    if (!strncasecmp(p, "https://", 8)) {
        t->https = 1;
        p += 8;
    } else if (!strncasecmp(p, "http://", 7)) {
        p += 7;
    } else if (strstr(p, "://")) {
        snprintf(msg, msglen, "host '%s': only http:// and https:// are spoken", spec);
        return FDS_EINVAL;
    }
    size_t len = strlen(p);
    if (len && p[len - 1] == '/')
        len--;
    const char *hs = p, *he, *port = NULL;
    if (*p == '[') {
        hs = p + 1;
        he = memchr(hs, ']', len - 1);
        if (!he) {
            snprintf(msg, msglen, "host '%s': unclosed '['", spec);
            return FDS_EINVAL;
        }
        if (he + 1 < p + len) {
            if (he[1] != ':') {
                snprintf(msg, msglen, "host '%s': junk after ']'", spec);
                return FDS_EINVAL;
            }
            port = he + 2;
        }
    } else {
        const char *colon = memchr(p, ':', len);
        he = colon ? colon : p + len;
        if (colon && memchr(colon + 1, ':', (size_t)(p + len - colon - 1))) {
            snprintf(msg, msglen, "host '%s': write an IPv6 address as [ADDR]:PORT", spec);
            return FDS_EINVAL;
        }
        port = colon ? colon + 1 : NULL;
    }
    size_t hl = (size_t)(he - hs);
    if (hl == 0 || hl >= sizeof t->host) {
        snprintf(msg, msglen, "host '%s': no host name", spec);
        return FDS_EINVAL;
    }
    memcpy(t->host, hs, hl);
    t->host[hl] = '\0';
    t->port = default_port;
    if (port) {
        char *end = NULL;
        long v = *port >= '0' && *port <= '9' ? strtol(port, &end, 10) : 0;
        if (v < 1 || v > 65535 || end != p + len) {
            snprintf(msg, msglen, "host '%s': bad port", spec);
            return FDS_EINVAL;
        }
        t->port = (int)v;
    }
    if (t->port < 1 || t->port > 65535) {
        snprintf(msg, msglen, "invalid port %d", t->port);
        return FDS_EINVAL;
    }
    return 0;
}

int fds_httpc_target_parse(fds_httpc_target *t, const char *spec, int default_port, char *msg,
                           size_t msglen)
{
    int rc = fds_httpc_target_split(t, spec, default_port, msg, msglen);
    if (rc)
        return rc;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", t->port);
    rc = getaddrinfo(t->host, portstr, &hints, &res);
    if (rc != 0 || !res) {
        snprintf(msg, msglen, "host '%s': cannot resolve '%s': %s", spec, t->host,
                 gai_strerror(rc));
        if (res)
            freeaddrinfo(res);
        return FDS_EINVAL;
    }
    memcpy(&t->addr, res->ai_addr, res->ai_addrlen);
    t->addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    int v6 = strchr(t->host, ':') != NULL;
    snprintf(t->host_header, sizeof t->host_header, v6 ? "[%s]:%d" : "%s:%d", t->host, t->port);
    snprintf(t->url, sizeof t->url, "%s://%s", t->https ? "https" : "http", t->host_header);
    return 0;
}

/* ---- the blocking client --------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_fd(int fd, short ev, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = ev};
        int rc = poll(&p, 1, (int)left);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -1;
    }
}

static void say(char *why, size_t whylen, const char *fmt, const char *a, const char *b)
{
    if (why && whylen)
        snprintf(why, whylen, fmt, a, b);
}

/* Connect `io` to t (TCP, then TLS) by `deadline`; 0, or FDS_E* with `why`. */
static int blocking_connect(fds_httpc_io *io, const fds_httpc_target *t, int64_t deadline,
                            char *why, size_t whylen)
{
    io->ses = NULL;
    io->fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (io->fd < 0) {
        say(why, whylen, "%s: socket: %s", t->url, strerror(errno));
        return FDS_EIO;
    }
    if (connect(io->fd, (const struct sockaddr *)&t->addr, t->addrlen) != 0 &&
        errno != EINPROGRESS) {
        say(why, whylen, "%s: connect: %s", t->url, strerror(errno));
        return FDS_EIO;
    }
    if (wait_fd(io->fd, POLLOUT, deadline) != 0) {
        say(why, whylen, "%s: connect: %s", t->url, "timed out");
        return FDS_EIO;
    }
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (getsockopt(io->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
        say(why, whylen, "%s: connect: %s", t->url, strerror(soerr ? soerr : errno));
        return FDS_EIO;
    }
    char msg[512] = "";
    int rc = fds_httpc_io_open(io, t, msg, sizeof msg);
    for (int ww = 0; rc == 0;) {
        rc = fds_httpc_io_handshake(io, &ww, msg, sizeof msg);
        if (rc == 1 && wait_fd(io->fd, ww ? POLLOUT : POLLIN, deadline) != 0) {
            snprintf(msg, sizeof msg, "TLS handshake timed out");
            rc = FDS_EIO;
        }
        if (rc != 1)
            break;
        rc = 0;
    }
    if (rc)
        say(why, whylen, "%s: %s", t->url, msg);
    return rc;
}

int fds_httpc_request_why(const fds_httpc_target *t, const char *method, const char *path,
                          const char *body, int timeout_ms, int *status, char **out, char *why,
                          size_t whylen)
{
    *out = NULL;
    *status = 0;
    if (why && whylen)
        why[0] = '\0';
    int64_t deadline = now_ms() + timeout_ms;
    size_t blen = body ? strlen(body) : 0;
    const char *auth = t->auth ? t->auth : "";
    size_t hcap = strlen(path) + strlen(t->host_header) + strlen(auth) + 256;
    char *req = malloc(hcap + blen);
    if (!req)
        return FDS_ENOMEM;
    int hl = snprintf(req, hcap,
                      "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: fieldstore-loadgen\r\n%s"
                      "Accept: application/json\r\nConnection: close\r\n%s"
                      "Content-Length: %zu\r\n\r\n",
                      method, path, t->host_header, auth,
                      body ? "Content-Type: application/json\r\n" : "", blen);
    if (body)
        memcpy(req + hl, body, blen);
    size_t total = (size_t)hl + blen;

    fds_httpc_io io = {.fd = -1};
    fds_httpc_resp r;
    memset(&r, 0, sizeof r);
    r.head_request = strcmp(method, "HEAD") == 0;
    fds_httpc_resp_reset(&r, 1);
    int rc = blocking_connect(&io, t, deadline, why, whylen);
    if (rc)
        goto done;
    rc = FDS_EIO;
    for (size_t off = 0; off < total;) {
        ssize_t w = fds_httpc_io_send(&io, req + off, total - off);
        if (w > 0) {
            off += (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (wait_fd(io.fd, POLLOUT, deadline) != 0) {
                say(why, whylen, "%s: %s", t->url, "sending the request timed out");
                goto done;
            }
        } else {
            say(why, whylen, "%s: %s", t->url, "the connection failed while sending");
            goto done;
        }
    }
    char buf[65536];
    for (;;) {
        ssize_t n = fds_httpc_io_recv(&io, buf, sizeof buf);
        if (n > 0) {
            fds_httpc_resp_feed(&r, buf, (size_t)n);
            if (r.state == FDS_HTTPC_ERROR) {
                say(why, whylen, "%s: malformed response: %s", t->url, r.error);
                rc = FDS_EPARSE;
                goto done;
            }
            if (r.state == FDS_HTTPC_DONE)
                break;
        } else if (n == 0) {
            if (!fds_httpc_resp_eof(&r)) {
                say(why, whylen, "%s: %s", t->url, "the connection closed before the response ended");
                goto done;
            }
            break;
        } else if (errno == EAGAIN || errno == EINTR) {
            if (fds_httpc_io_pending(&io))
                continue;
            if (wait_fd(io.fd, POLLIN, deadline) != 0) {
                say(why, whylen, "%s: %s", t->url, "no response in time");
                goto done;
            }
        } else {
            say(why, whylen, "%s: %s", t->url, "the connection failed while reading");
            goto done;
        }
    }
    *status = r.status;
    if (!r.body) {
        r.body = calloc(1, 1);
        if (!r.body) {
            rc = FDS_ENOMEM;
            goto done;
        }
    }
    *out = r.body;
    r.body = NULL;
    rc = 0;
done:
    fds_httpc_resp_clear(&r);
    fds_httpc_io_close(&io);
    free(req);
    return rc;
}

int fds_httpc_request(const fds_httpc_target *t, const char *method, const char *path,
                      const char *body, int timeout_ms, int *status, char **out)
{
    return fds_httpc_request_why(t, method, path, body, timeout_ms, status, out, NULL, 0);
}
