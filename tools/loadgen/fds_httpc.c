/*
 * fds_httpc.c: incremental HTTP/1.1 response parser, loopback check and a
 * blocking one-shot client (see fds_httpc.h).
 */
#include "fds_httpc.h"

#include "fds_error.h"

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

static int addr_is_loopback(const struct sockaddr *sa)
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

int fds_httpc_resolve_loopback(const char *host, int port, struct sockaddr_storage *addr,
                               socklen_t *addrlen, char *msg, size_t msglen)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    /* Only literal addresses and "localhost" are looked up: a name that needs
     * DNS is not a loopback target by construction. */
    if (strcasecmp(host, "localhost") != 0)
        hints.ai_flags = AI_NUMERICHOST;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    if (port <= 0 || port > 65535) {
        snprintf(msg, msglen, "invalid port %d", port);
        return FDS_EINVAL;
    }
    int rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0 || !res) {
        snprintf(msg, msglen,
                 "refusing target '%s': loadgen only talks to loopback targets "
                 "(127.0.0.0/8, ::1 or localhost)",
                 host);
        return FDS_EINVAL;
    }
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        if (!addr_is_loopback(a->ai_addr)) {
            snprintf(msg, msglen,
                     "refusing target '%s': not a loopback address; loadgen only talks to "
                     "127.0.0.0/8, ::1 or localhost",
                     host);
            freeaddrinfo(res);
            return FDS_EINVAL;
        }
    }
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

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

int fds_httpc_request(const struct sockaddr_storage *addr, socklen_t addrlen, const char *host,
                      const char *method, const char *path, const char *body, int timeout_ms,
                      int *status, char **out)
{
    *out = NULL;
    *status = 0;
    int64_t deadline = now_ms() + timeout_ms;
    size_t blen = body ? strlen(body) : 0;
    size_t hcap = strlen(path) + strlen(host) + 256;
    char *req = malloc(hcap + blen);
    if (!req)
        return FDS_ENOMEM;
    int hl = snprintf(req, hcap,
                      "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: fieldstore-loadgen\r\n"
                      "Accept: application/json\r\nConnection: close\r\n%s"
                      "Content-Length: %zu\r\n\r\n",
                      method, path, host, body ? "Content-Type: application/json\r\n" : "", blen);
    if (body)
        memcpy(req + hl, body, blen);
    size_t total = (size_t)hl + blen;

    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        free(req);
        return FDS_EIO;
    }
    int rc = FDS_EIO;
    fds_httpc_resp r;
    memset(&r, 0, sizeof r);
    r.head_request = strcmp(method, "HEAD") == 0;
    fds_httpc_resp_reset(&r, 1);
    if (connect(fd, (const struct sockaddr *)addr, addrlen) != 0 && errno != EINPROGRESS)
        goto done;
    if (wait_fd(fd, POLLOUT, deadline) != 0)
        goto done;
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0)
        goto done;
    for (size_t off = 0; off < total;) {
        ssize_t w = send(fd, req + off, total - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (wait_fd(fd, POLLOUT, deadline) != 0)
                goto done;
        } else {
            goto done;
        }
    }
    char buf[65536];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
            fds_httpc_resp_feed(&r, buf, (size_t)n);
            if (r.state == FDS_HTTPC_ERROR) {
                rc = FDS_EPARSE;
                goto done;
            }
            if (r.state == FDS_HTTPC_DONE)
                break;
        } else if (n == 0) {
            if (!fds_httpc_resp_eof(&r))
                goto done;
            break;
        } else if (errno == EAGAIN || errno == EINTR) {
            if (wait_fd(fd, POLLIN, deadline) != 0)
                goto done;
        } else {
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
    close(fd);
    free(req);
    return rc;
}
