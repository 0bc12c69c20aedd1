/*
 * fds_lg.c: the per-thread epoll event loops of the load generator (see
 * fds_lg.h for the definitions of latency, service time and the windows).
 *
 * Each thread owns a share of the connections and its own histograms and
 * counters, so the hot path takes no lock: per completion it reads the clock
 * once and bumps a few thread-local counters; totals for the progress line
 * are relaxed atomics.  The open-loop schedule needs no queue: request k of
 * a thread is due at t0 + (k + thread/threads) * interval, so "the backlog"
 * is just (requests due) - (requests issued).  The scheduler wakes on a
 * timerfd armed at the next due time (epoll_wait's millisecond timeout is too
 * coarse for thousands of requests per second).
 */
#include "fds_lg.h"

#include "fds_error.h"
#include "fds_httpc.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define FDS_LG_HOUSEKEEP_MS 10 /* longest sleep between timeout checks */
#define FDS_LG_MAX_EVENTS 256
#define FDS_LG_MAIN_POLL_NS 100000000u /* main thread checks for an early end every 100 ms */

enum conn_state { C_IDLE = 0, C_CONNECTING, C_HANDSHAKE, C_WRITING, C_READING };

enum outcome { O_OK = 0, O_STATUS, O_TIMEOUT, O_CONNECT, O_SHORT, O_PROTOCOL };

typedef struct conn {
    fds_httpc_io io;       /* io.fd -1 when not connected; io.ses with TLS */
    int target;            /* index into cfg->targets: connections go round robin */
    int state;
    int out_armed;         /* EPOLLOUT registered */
    uint64_t t_intended;   /* ns */
    uint64_t t_sent;       /* ns, first byte written */
    uint64_t t_deadline;   /* ns */
    uint64_t retry_at;     /* ns, closed loop back-off after a failed connect */
    size_t req;            /* index into cfg->requests */
    size_t woff;
    fds_httpc_resp resp;
} conn;

typedef struct worker {
    int id;
    const fds_lg_config *cfg;
    pthread_t thread;
    int epfd, tfd;
    conn *conns;
    int nconns;
    int *idle;             /* stack of idle connection indices */
    int nidle;
    int *scratch;          /* closed loop: the idle stack being dispatched */
    char *buf;
    size_t seq;            /* next request body of this thread's walk of the pool */
    /* open loop */
    double interval_ns;
    double offset_ns;
    uint64_t issued;       /* requests of the schedule issued so far */
    uint64_t window_count; /* requests of the schedule due before m1 */
    uint64_t max_backlog;
    /* results */
    fds_hist *lat, *svc;
    uint64_t ok, err[6], completed_in_window, completed_after_m0;
    uint64_t last_completion;
    uint64_t *buckets;
    int nbuckets;
    fds_lg_class_result cls[FDS_LG_MAX_CLASSES]; /* per request class */
    fds_lg_target_result tgt[FDS_LG_MAX_TARGETS]; /* per target */
    _Atomic uint64_t a_sent, a_ok, a_err, a_inflight;
} worker;

/* shared timeline, ns on CLOCK_MONOTONIC */
static uint64_t g_t0, g_m0, g_m1;
static _Atomic int g_stop;            /* set by a signal or --max-requests */
static _Atomic uint64_t g_stop_at;    /* when g_stop was first set */
static _Atomic uint64_t g_issued_total;
static _Atomic int g_workers_done;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fds_lg_request_stop(void)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&g_stop, &expected, 1))
        atomic_store(&g_stop_at, now_ns());
}

static void ep_set(worker *w, conn *c, int out)
{
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0),
                             .data.u32 = (uint32_t)(c - w->conns)};
    epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->io.fd, &ev);
    c->out_armed = out;
}

static void conn_close(worker *w, conn *c)
{
    if (c->io.fd >= 0)
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->io.fd, NULL);
    fds_httpc_io_close(&c->io);
    c->out_armed = 0;
}

static int in_window(uint64_t t)
{
    return t >= g_m0 && t < g_m1;
}

/* The class counts of the request on `c`, or NULL without classes. */
static inline fds_lg_class_result *class_of(worker *w, const conn *c)
{
    const fds_lg_config *cfg = w->cfg;
    if (!cfg->request_classes)
        return NULL;
    return &w->cls[cfg->request_classes[c->req]];
}

/* The first reason a connection to c's target failed, kept for the report. */
static void note_failure(worker *w, const conn *c, const char *why)
{
    char *m = w->tgt[c->target].first_error;
    if (!m[0])
        snprintf(m, FDS_LG_ERROR_TEXT, "%s", why);
}

/* The counts of c's target for outcome o of a request due in the window. */
static void count_target(worker *w, const conn *c, enum outcome o)
{
    fds_lg_target_result *t = &w->tgt[c->target];
    switch (o) {
    case O_OK: t->ok++; break;
    case O_STATUS: t->err_status++; break;
    case O_TIMEOUT: t->err_timeout++; break;
    case O_CONNECT: t->err_connect++; break;
    case O_SHORT: t->err_short_read++; break;
    case O_PROTOCOL: t->err_protocol++; break;
    }
    if (o == O_STATUS && !t->last_status)
        t->last_status = c->resp.status;
}

/* The request on `c` ended with `o`; `c` becomes idle. */
static void complete(worker *w, conn *c, enum outcome o, uint64_t now)
{
    atomic_fetch_sub_explicit(&w->a_inflight, 1, memory_order_relaxed);
    if (in_window(c->t_intended))
        count_target(w, c, o);
    if (o == O_SHORT)
        note_failure(w, c, "the connection closed or failed before the response ended");
    else if (o == O_TIMEOUT)
        note_failure(w, c, "no response within --timeout");
    if (o == O_OK) {
        atomic_fetch_add_explicit(&w->a_ok, 1, memory_order_relaxed);
        if (in_window(c->t_intended)) {
            w->ok++;
            fds_hist_record(w->lat, now - c->t_intended);
            fds_hist_record(w->svc, now - c->t_sent);
            fds_lg_class_result *k = class_of(w, c);
            if (k) {
                k->ok++;
                fds_hist_record(k->latency, now - c->t_intended);
            }
        }
        if (now >= g_m0) {
            w->completed_after_m0++;
            if (now < g_m1) {
                w->completed_in_window++;
                uint64_t b = (now - g_m0) / 1000000000u;
                if (b < (uint64_t)w->nbuckets)
                    w->buckets[b]++;
            }
            if (now > w->last_completion)
                w->last_completion = now;
        }
    } else {
        atomic_fetch_add_explicit(&w->a_err, 1, memory_order_relaxed);
        if (in_window(c->t_intended)) {
            w->err[o]++;
            fds_lg_class_result *k = class_of(w, c);
            if (k) {
                k->errors++;
                k->err_status += o == O_STATUS;
            }
        }
        if (o != O_STATUS)
            conn_close(w, c);
        if (o == O_CONNECT)
            c->retry_at = now + FDS_LG_CONNECT_BACKOFF_NS;
    }
    c->state = C_IDLE;
    w->idle[w->nidle++] = (int)(c - w->conns);
}

static void try_write(worker *w, conn *c)
{
    size_t at = (size_t)c->target * w->cfg->nrequests + c->req;
    const char *req = w->cfg->requests[at];
    size_t len = w->cfg->request_lens[at];
    while (c->woff < len) {
        ssize_t n = fds_httpc_io_send(&c->io, req + c->woff, len - c->woff);
        if (n > 0) {
            c->woff += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            if (!c->out_armed)
                ep_set(w, c, 1);
            return;
        } else {
            complete(w, c, O_SHORT, now_ns());
            return;
        }
    }
    c->state = C_READING;
    if (c->out_armed)
        ep_set(w, c, 0);
}

static int start_connect(worker *w, conn *c)
{
    const fds_httpc_target *tg = &w->cfg->targets[c->target];
    int fd = socket(tg->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)&tg->addr, tg->addrlen) != 0 &&
        errno != EINPROGRESS) {
        note_failure(w, c, strerror(errno));
        close(fd);
        return -1;
    }
    c->io.fd = fd;
    c->io.ses = NULL;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t)(c - w->conns)};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        c->io.fd = -1;
        return -1;
    }
    c->out_armed = 1;
    return 0;
}

/* Send the next request of this thread on idle connection `c`. */
static void issue(worker *w, conn *c, uint64_t intended, uint64_t now)
{
    c->t_intended = intended;
    c->t_deadline = now + (uint64_t)(w->cfg->timeout_s * 1e9);
    c->req = (w->seq++) % w->cfg->nrequests;
    c->woff = 0;
    fds_httpc_resp_reset(&c->resp, 0);
    atomic_fetch_add_explicit(&w->a_sent, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->a_inflight, 1, memory_order_relaxed);
    if (c->io.fd < 0) {
        c->state = C_CONNECTING;
        if (start_connect(w, c) != 0)
            complete(w, c, O_CONNECT, now);
        return;
    }
    c->state = C_WRITING;
    c->t_sent = now;
    try_write(w, c);
}

static void on_readable(worker *w, conn *c)
{
    for (;;) {
        ssize_t n = fds_httpc_io_recv(&c->io, w->buf, FDS_LG_RECV_BUF);
        if (n > 0) {
            if (c->state != C_READING && c->state != C_WRITING) {
                /* bytes nobody asked for */
                conn_close(w, c);
                return;
            }
            size_t used = fds_httpc_resp_feed(&c->resp, w->buf, (size_t)n);
            if (c->resp.state == FDS_HTTPC_ERROR) {
                complete(w, c, O_PROTOCOL, now_ns());
                return;
            }
            if (c->resp.state == FDS_HTTPC_DONE) {
                uint64_t t = now_ns();
                int ok = c->resp.status >= 200 && c->resp.status <= 299;
                if (used != (size_t)n) {
                    /* trailing bytes after a complete response: protocol error */
                    complete(w, c, O_PROTOCOL, t);
                    return;
                }
                int keep = c->resp.keep_alive;
                complete(w, c, ok ? O_OK : O_STATUS, t);
                if (!keep)
                    conn_close(w, c);
                return;
            }
            if ((size_t)n < FDS_LG_RECV_BUF && !c->io.ses)
                return; /* plain: the socket is drained (TLS reads a record a call) */
        } else if (n == 0) {
            if (c->state == C_READING || c->state == C_WRITING) {
                if (fds_httpc_resp_eof(&c->resp)) {
                    int ok = c->resp.status >= 200 && c->resp.status <= 299;
                    complete(w, c, ok ? O_OK : O_STATUS, now_ns());
                    conn_close(w, c);
                } else {
                    complete(w, c, O_SHORT, now_ns());
                }
            } else {
                conn_close(w, c); /* server closed an idle keep-alive connection */
            }
            return;
        } else {
            if (errno == EAGAIN || errno == EINTR)
                return;
            if (c->state == C_READING || c->state == C_WRITING)
                complete(w, c, O_SHORT, now_ns());
            else
                conn_close(w, c);
            return;
        }
    }
}

/* Advance the TLS handshake of `c`; once done, the request goes out (the
 * handshake is part of latency, not of service time).  A failed handshake
 * (a certificate that does not verify) counts as a failed connect. */
static void step_handshake(worker *w, conn *c)
{
    char msg[FDS_LG_ERROR_TEXT];
    int want_write = 0;
    int rc = fds_httpc_io_handshake(&c->io, &want_write, msg, sizeof msg);
    if (rc == 1) {
        if (want_write != c->out_armed)
            ep_set(w, c, want_write);
        return;
    }
    if (rc != 0) {
        note_failure(w, c, msg);
        complete(w, c, O_CONNECT, now_ns());
        return;
    }
    c->state = C_WRITING;
    c->t_sent = now_ns();
    try_write(w, c);
}

static void on_event(worker *w, conn *c, uint32_t ev)
{
    if (c->io.fd < 0)
        return;
    if (c->state == C_CONNECTING) {
        int err = 0;
        socklen_t sl = sizeof err;
        int gs = getsockopt(c->io.fd, SOL_SOCKET, SO_ERROR, &err, &sl);
        if ((ev & (EPOLLERR | EPOLLHUP)) || gs != 0 || err != 0) {
            note_failure(w, c, err ? strerror(err) : "connection failed");
            complete(w, c, O_CONNECT, now_ns());
            return;
        }
        if (!(ev & EPOLLOUT))
            return;
        char msg[FDS_LG_ERROR_TEXT];
        if (fds_httpc_io_open(&c->io, &w->cfg->targets[c->target], msg, sizeof msg) != 0) {
            note_failure(w, c, msg);
            complete(w, c, O_CONNECT, now_ns());
            return;
        }
        c->state = C_HANDSHAKE;
        step_handshake(w, c);
        return;
    }
    if (c->state == C_HANDSHAKE) {
        step_handshake(w, c);
        return;
    }
    if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
        on_readable(w, c);
    if (c->io.fd >= 0 && c->state == C_WRITING && (ev & EPOLLOUT))
        try_write(w, c);
}

/* May another request be issued (global cap, stop flag)? */
static int may_issue(const fds_lg_config *cfg)
{
    if (atomic_load_explicit(&g_stop, memory_order_relaxed))
        return 0;
    if (cfg->max_requests) {
        uint64_t n = atomic_fetch_add(&g_issued_total, 1);
        if (n >= cfg->max_requests) {
            fds_lg_request_stop();
            return 0;
        }
    }
    return 1;
}

static uint64_t due_time(const worker *w, uint64_t k)
{
    return g_t0 + (uint64_t)(((double)k + w->offset_ns / w->interval_ns) * w->interval_ns);
}

/* Number of k with due_time(k) <= t. */
static uint64_t count_due(const worker *w, uint64_t t)
{
    if (t < g_t0)
        return 0;
    double x = ((double)(t - g_t0) - w->offset_ns) / w->interval_ns;
    if (x < 0)
        return due_time(w, 0) <= t ? 1 : 0;
    uint64_t k = (uint64_t)x + 1;
    while (k > 0 && due_time(w, k - 1) > t)
        k--;
    while (due_time(w, k) <= t)
        k++;
    return k;
}

static void arm_timer(worker *w, uint64_t at)
{
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (at == 0)
        at = 1;
    its.it_value.tv_sec = (time_t)(at / 1000000000u);
    its.it_value.tv_nsec = (long)(at % 1000000000u);
    timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* A worker's phase: issuing until the window ends or a stop is requested,
 * then draining until every request has an answer or drain_deadline (ns)
 * passes. */
typedef struct phase {
    int issuing;
    uint64_t drain_deadline;
} phase;

/* Every thread starts its schedule at t0 together. */
static inline void wait_for_t0(void)
{
    struct timespec t0 = {(time_t)(g_t0 / 1000000000u), (long)(g_t0 % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t0, NULL) == EINTR)
        ;
}

/* End of the window, or an early stop: stop issuing, start draining. */
static inline void check_window_end(phase *ph, uint64_t now, uint64_t timeout_ns)
{
    if (!ph->issuing)
        return;
    int stop = atomic_load_explicit(&g_stop, memory_order_relaxed);
    if (now >= g_m1 || stop) {
        ph->issuing = 0;
        ph->drain_deadline = (stop ? atomic_load(&g_stop_at) : g_m1) + timeout_ns;
        if (now > ph->drain_deadline)
            ph->drain_deadline = now;
    }
}

/* Closed loop: a request on every idle connection not in connect back-off. */
static inline void dispatch_closed(worker *w, phase *ph, uint64_t now, uint64_t timeout_ns)
{
    int n = w->nidle;
    memcpy(w->scratch, w->idle, (size_t)n * sizeof(int));
    w->nidle = 0;
    for (int i = 0; i < n; i++) {
        conn *c = &w->conns[w->scratch[i]];
        if (!ph->issuing || c->retry_at > now) {
            w->idle[w->nidle++] = w->scratch[i];
            continue;
        }
        if (!may_issue(w->cfg)) {
            ph->issuing = 0;
            ph->drain_deadline = now + timeout_ns;
            w->idle[w->nidle++] = w->scratch[i];
            continue;
        }
        issue(w, c, now, now); /* may push c back at once on failure */
    }
}

/* Open loop, the schedule: every k with due_time(k) <= now, and due before
 * m1, while a connection is idle; the backlog's high-water mark. */
static inline void dispatch_open(worker *w, phase *ph, uint64_t now, uint64_t timeout_ns)
{
    uint64_t due = count_due(w, now);
    if (due > w->window_count)
        due = w->window_count;
    if (due > w->issued && due - w->issued > w->max_backlog)
        w->max_backlog = due - w->issued;
    while (w->issued < due && w->nidle > 0) {
        if (!may_issue(w->cfg)) {
            ph->issuing = 0;
            ph->drain_deadline = now + timeout_ns;
            break;
        }
        conn *c = &w->conns[w->idle[--w->nidle]];
        uint64_t t = due_time(w, w->issued++);
        issue(w, c, t, now);
    }
}

/* Draining: 1 when nothing is in flight or still due, or when the drain
 * deadline has passed -- then whatever is still in flight or waiting has
 * timed out. */
static inline int drained(worker *w, const phase *ph, uint64_t now, int open)
{
    uint64_t inflight = atomic_load_explicit(&w->a_inflight, memory_order_relaxed);
    int backlog_left = open && !atomic_load(&g_stop) && w->issued < w->window_count;
    if (inflight == 0 && !backlog_left)
        return 1;
    if (now < ph->drain_deadline)
        return 0;
    for (int i = 0; i < w->nconns; i++) {
        conn *c = &w->conns[i];
        if (c->state != C_IDLE)
            complete(w, c, O_TIMEOUT, now);
    }
    if (open && !atomic_load(&g_stop))
        for (; w->issued < w->window_count; w->issued++)
            if (in_window(due_time(w, w->issued)))
                w->err[O_TIMEOUT]++;
    return 1;
}

/* Per-request timeouts, checked every FDS_LG_HOUSEKEEP_MS. */
static inline void expire_requests(worker *w, uint64_t now, uint64_t *last_housekeep)
{
    if (now - *last_housekeep < FDS_LG_HOUSEKEEP_MS * 1000000u)
        return;
    *last_housekeep = now;
    for (int i = 0; i < w->nconns; i++) {
        conn *c = &w->conns[i];
        if (c->state != C_IDLE && now > c->t_deadline)
            complete(w, c, O_TIMEOUT, now);
    }
}

/* How long epoll_wait may sleep (ms): until the next due request of the
 * open loop (on the timerfd), 1 ms while a closed-loop connection is in
 * back-off, else FDS_LG_HOUSEKEEP_MS. */
static inline int wait_ms(worker *w, const phase *ph, uint64_t now, int open)
{
    int ms = FDS_LG_HOUSEKEEP_MS;
    if (open && w->nidle > 0 && !atomic_load_explicit(&g_stop, memory_order_relaxed)) {
        uint64_t t = due_time(w, w->issued);
        if (w->issued < w->window_count) {
            if (t <= now)
                ms = 0;
            else
                arm_timer(w, t);
        }
    }
    if (!open && ph->issuing && w->nidle > 0)
        ms = 1; /* a connection in back-off after a failed connect */
    return ms;
}

/* The n events epoll_wait returned: the timerfd (drained), or a connection. */
static inline void handle_events(worker *w, const struct epoll_event *evs, int n)
{
    for (int i = 0; i < n; i++) {
        if (evs[i].data.u32 == UINT32_MAX) {
            uint64_t exp;
            ssize_t r = read(w->tfd, &exp, sizeof exp);
            (void)r;
            continue;
        }
        on_event(w, &w->conns[evs[i].data.u32], evs[i].events);
    }
}

/* One measurement thread: the event loop over its share of the connections
 * until it has drained (the steps above are static inline, so the loop
 * costs what it did as one function). */
static void *worker_main(void *arg)
{
    worker *w = arg;
    const int open = w->cfg->rate > 0;
    const uint64_t timeout_ns = (uint64_t)(w->cfg->timeout_s * 1e9);
    struct epoll_event evs[FDS_LG_MAX_EVENTS];
    uint64_t last_housekeep = 0;
    phase ph = {.issuing = 1, .drain_deadline = 0};

    wait_for_t0();
    for (;;) {
        uint64_t now = now_ns();
        check_window_end(&ph, now, timeout_ns);
        if (!open) {
            if (ph.issuing)
                dispatch_closed(w, &ph, now, timeout_ns);
        } else if (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
            dispatch_open(w, &ph, now, timeout_ns);
        }
        if (!ph.issuing && drained(w, &ph, now, open))
            break;
        expire_requests(w, now, &last_housekeep);
        int n = epoll_wait(w->epfd, evs, FDS_LG_MAX_EVENTS, wait_ms(w, &ph, now, open));
        handle_events(w, evs, n);
    }
    for (int i = 0; i < w->nconns; i++) {
        conn_close(w, &w->conns[i]);
        fds_httpc_resp_clear(&w->conns[i].resp);
    }
    atomic_fetch_add(&g_workers_done, 1);
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        if (atomic_load(&g_stop))
            return;
}

typedef struct cpu_snap {
    double server, bg;
    fds_sysstat_cpu sys;
    uint64_t t;
    int server_ok;
} cpu_snap;

static void snap(const fds_lg_config *cfg, cpu_snap *s)
{
    s->t = now_ns();
    s->server_ok = cfg->server_pid > 0 && fds_sysstat_proc_cpu(cfg->server_pid, &s->server) == 0;
    s->bg = cfg->background ? fds_sysstat_bg_cpu(cfg->background) : 0;
    if (fds_sysstat_system_cpu(&s->sys) != 0)
        memset(&s->sys, 0, sizeof s->sys);
}

static void free_workers(worker *ws, int n)
{
    for (int i = 0; i < n; i++) {
        worker *w = &ws[i];
        if (w->epfd > 0)
            close(w->epfd);
        if (w->tfd > 0)
            close(w->tfd);
        free(w->conns);
        free(w->idle);
        free(w->scratch);
        free(w->buf);
        free(w->buckets);
        fds_hist_free(w->lat);
        fds_hist_free(w->svc);
        for (int k = 0; k < FDS_LG_MAX_CLASSES; k++)
            fds_hist_free(w->cls[k].latency);
    }
    free(ws);
}

/* Allocate worker i of nt (its share of the connections, buffers, nb
 * one-second buckets, histograms, epoll and timer fds; open-loop pacing).
 * Returns 0, FDS_ENOMEM or FDS_EIO (free_workers() frees a partial one). */
static int init_worker(worker *w, const fds_lg_config *cfg, int i, int nt, int nb)
{
    int first_conn = i * (cfg->clients / nt) + (i < cfg->clients % nt ? i : cfg->clients % nt);
    w->id = i;
    w->cfg = cfg;
    w->nconns = cfg->clients / nt + (i < cfg->clients % nt);
    w->conns = calloc((size_t)w->nconns, sizeof *w->conns);
    w->idle = calloc((size_t)w->nconns + 1, sizeof *w->idle);
    w->scratch = calloc((size_t)w->nconns + 1, sizeof *w->scratch);
    w->buf = malloc(FDS_LG_RECV_BUF);
    w->buckets = calloc((size_t)nb, sizeof *w->buckets);
    w->nbuckets = nb;
    w->lat = fds_hist_create();
    w->svc = fds_hist_create();
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    w->seq = (size_t)i * (cfg->nrequests / (size_t)nt + 1);
    if (!w->conns || !w->idle || !w->scratch || !w->buf || !w->buckets || !w->lat || !w->svc)
        return FDS_ENOMEM;
    for (int k = 0; k < cfg->nclasses; k++)
        if (!(w->cls[k].latency = fds_hist_create()))
            return FDS_ENOMEM;
    if (w->epfd < 0 || w->tfd < 0)
        return FDS_EIO;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->tfd, &ev);
    for (int k = 0; k < w->nconns; k++) {
        w->conns[k].io.fd = -1;
        w->conns[k].target = (first_conn + k) % cfg->ntargets; /* round robin */
        w->idle[w->nidle++] = w->nconns - 1 - k;
    }
    if (cfg->rate > 0) {
        w->interval_ns = 1e9 * nt / cfg->rate;
        w->offset_ns = w->interval_ns * i / nt;
    }
    return 0;
}

/* One progress line on stderr: totals of all workers so far. */
static void print_progress(const fds_lg_config *cfg, worker *ws, int nt,
                           uint64_t now, uint64_t *prev_ok)
{
    uint64_t sent = 0, ok = 0, err = 0, infl = 0;
    for (int i = 0; i < nt; i++) {
        sent += atomic_load_explicit(&ws[i].a_sent, memory_order_relaxed);
        ok += atomic_load_explicit(&ws[i].a_ok, memory_order_relaxed);
        err += atomic_load_explicit(&ws[i].a_err, memory_order_relaxed);
        infl += atomic_load_explicit(&ws[i].a_inflight, memory_order_relaxed);
    }
    double t = (double)(now - g_t0) / 1e9;
    fprintf(stderr, "[loadgen%s%s] %5.1fs %-7s sent=%llu ok=%llu err=%llu "
                    "inflight=%llu last1s=%llu/s\n",
            cfg->label ? " " : "", cfg->label ? cfg->label : "", t,
            now < g_m0 ? "warmup" : "measure", (unsigned long long)sent,
            (unsigned long long)ok, (unsigned long long)err,
            (unsigned long long)infl, (unsigned long long)(ok - *prev_ok));
    *prev_ok = ok;
}

/* The main thread while `started` workers run: CPU snapshots at the window
 * edges (*s0 at g_m0, *s1 at the end), progress once a second; returns when
 * the window ends, a stop is requested or every worker is done. */
static void monitor(const fds_lg_config *cfg, worker *ws, int nt, int started,
                    cpu_snap *s0, cpu_snap *s1)
{
    int have_s0 = 0;
    uint64_t next_tick = g_t0 + 1000000000u;
    uint64_t prev_ok = 0;
    for (;;) {
        /* wake at least every FDS_LG_MAIN_POLL_NS to notice an early end */
        uint64_t poll_at = now_ns() + FDS_LG_MAIN_POLL_NS;
        if (!have_s0) {
            uint64_t wake = next_tick < g_m0 ? next_tick : g_m0;
            sleep_until(wake < poll_at ? wake : poll_at);
            if (now_ns() >= g_m0) {
                snap(cfg, s0);
                have_s0 = 1;
            }
        } else {
            uint64_t wake = next_tick < g_m1 ? next_tick : g_m1;
            if (atomic_load(&g_stop) || now_ns() >= g_m1)
                break;
            sleep_until(wake < poll_at ? wake : poll_at);
            if (now_ns() >= g_m1 || atomic_load(&g_stop))
                break;
        }
        if (atomic_load(&g_workers_done) == started) {
            if (!have_s0) {
                snap(cfg, s0);
                have_s0 = 1;
            }
            break;
        }
        uint64_t now = now_ns();
        if (now >= next_tick) {
            next_tick += 1000000000u;
            if (cfg->progress)
                print_progress(cfg, ws, nt, now, &prev_ok);
        }
    }
    snap(cfg, s1);
    if (!have_s0)
        *s0 = *s1;
}

/* Throughput per whole second of the window: min, max, mean, median of the
 * first `full` buckets.  Returns 0 or FDS_ENOMEM. */
static int bucket_stats(fds_lg_result *res, int full)
{
    if (full <= 0)
        return 0;
    uint64_t *sorted = malloc((size_t)full * sizeof *sorted);
    if (!sorted)
        return FDS_ENOMEM;
    memcpy(sorted, res->buckets, (size_t)full * sizeof *sorted);
    qsort(sorted, (size_t)full, sizeof *sorted, cmp_u64);
    double sum = 0;
    for (int b = 0; b < full; b++)
        sum += (double)sorted[b];
    res->qps_min = (double)sorted[0];
    res->qps_max = (double)sorted[full - 1];
    res->qps_mean = sum / full;
    res->qps_median = full % 2 ? (double)sorted[full / 2]
                               : ((double)sorted[full / 2 - 1] + (double)sorted[full / 2]) / 2;
    free(sorted);
    return 0;
}

/* Merge the nt workers' counts, histograms and nb buckets into res, and
 * find the window (shorter when stopped early) and its throughput.
 * Returns 0 or FDS_ENOMEM. */
static int merge_results(const fds_lg_config *cfg, worker *ws, int nt, int nb,
                         fds_lg_result *res)
{
    res->open_loop = cfg->rate > 0;
    res->rate = cfg->rate;
    res->latency = fds_hist_create();
    res->service = fds_hist_create();
    res->buckets = calloc((size_t)nb, sizeof *res->buckets);
    if (!res->latency || !res->service || !res->buckets)
        return FDS_ENOMEM;
    res->nclasses = cfg->nclasses;
    res->ntargets = cfg->ntargets;
    for (int k = 0; k < cfg->nclasses; k++)
        if (!(res->classes[k].latency = fds_hist_create()))
            return FDS_ENOMEM;
    uint64_t last = 0, after_m0 = 0;
    for (int i = 0; i < nt; i++) {
        worker *w = &ws[i];
        fds_hist_merge(res->latency, w->lat);
        fds_hist_merge(res->service, w->svc);
        res->sent += atomic_load(&w->a_sent);
        res->ok += w->ok;
        res->err_status += w->err[O_STATUS];
        res->err_timeout += w->err[O_TIMEOUT];
        res->err_connect += w->err[O_CONNECT];
        res->err_short_read += w->err[O_SHORT];
        res->err_protocol += w->err[O_PROTOCOL];
        res->completed_in_window += w->completed_in_window;
        after_m0 += w->completed_after_m0;
        if (w->last_completion > last)
            last = w->last_completion;
        if (w->max_backlog > res->max_backlog)
            res->max_backlog = w->max_backlog;
        for (int b = 0; b < nb; b++)
            res->buckets[b] += w->buckets[b];
        for (int t = 0; t < cfg->ntargets; t++) {
            fds_lg_target_result *d = &res->targets[t], *src = &w->tgt[t];
            d->ok += src->ok;
            d->err_status += src->err_status;
            d->err_timeout += src->err_timeout;
            d->err_connect += src->err_connect;
            d->err_short_read += src->err_short_read;
            d->err_protocol += src->err_protocol;
            if (!d->last_status)
                d->last_status = src->last_status;
            if (!d->first_error[0])
                memcpy(d->first_error, src->first_error, sizeof d->first_error);
        }
        for (int k = 0; k < cfg->nclasses; k++) {
            res->classes[k].ok += w->cls[k].ok;
            res->classes[k].errors += w->cls[k].errors;
            res->classes[k].err_status += w->cls[k].err_status;
            fds_hist_merge(res->classes[k].latency, w->cls[k].latency);
        }
    }
    res->errors = res->err_status + res->err_timeout + res->err_connect + res->err_short_read +
                  res->err_protocol;
    uint64_t stop_at = atomic_load(&g_stop_at);
    res->stopped_early = atomic_load(&g_stop) && stop_at < g_m1;
    double window = cfg->duration_s;
    if (res->stopped_early) {
        /* the window ends with the last answer to the last request sent */
        uint64_t end = last > stop_at ? last : stop_at;
        window = end > g_m0 ? (double)(end - g_m0) / 1e9 : 0.0;
        res->completed_in_window = after_m0;
    }
    res->elapsed_s = window;
    res->qps = window > 0 ? (double)res->completed_in_window / window : 0.0;
    /* whole 1 s buckets only */
    int full = (int)floor(window + 1e-9);
    if (full > nb)
        full = nb;
    res->nbuckets = full;
    return bucket_stats(res, full);
}

/* CPU use over [s0, s1]: server, background, system, and qps per CPU. */
static void cpu_results(const fds_lg_config *cfg, const cpu_snap *s0,
                        const cpu_snap *s1, fds_lg_result *res)
{
    double dt = (double)(s1->t - s0->t) / 1e9;
    res->server_cpu_percent = -1;
    res->background_cpu_percent = -1;
    res->system_cpu_percent = fds_sysstat_system_percent(&s0->sys, &s1->sys);
    if (dt > 0 && s0->server_ok && s1->server_ok)
        res->server_cpu_percent = (s1->server - s0->server) / dt * 100.0;
    if (dt > 0 && cfg->background)
        res->background_cpu_percent = (s1->bg - s0->bg) / dt * 100.0;
    if (res->server_cpu_percent > 0)
        res->qps_per_server_cpu = res->qps / res->server_cpu_percent;
    if (res->system_cpu_percent > 0)
        res->qps_per_system_cpu = res->qps / res->system_cpu_percent;
}

int fds_lg_run(const fds_lg_config *cfg, fds_lg_result *res)
{
    memset(res, 0, sizeof *res);
    if (cfg->threads < 1 || cfg->threads > FDS_LG_MAX_THREADS || cfg->clients < 1 ||
        cfg->clients > FDS_LG_MAX_CLIENTS || cfg->duration_s <= 0 || cfg->warmup_s < 0 ||
        cfg->timeout_s <= 0 || cfg->nrequests == 0 || cfg->rate < 0 || cfg->nclasses < 0 ||
        cfg->nclasses > FDS_LG_MAX_CLASSES || (cfg->nclasses > 0) != !!cfg->request_classes ||
        cfg->ntargets < 1 || cfg->ntargets > FDS_LG_MAX_TARGETS || !cfg->targets)
        return FDS_EINVAL;
    for (size_t i = 0; cfg->request_classes && i < cfg->nrequests; i++)
        if (cfg->request_classes[i] >= cfg->nclasses)
            return FDS_EINVAL;
    int nt = cfg->threads < cfg->clients ? cfg->threads : cfg->clients;
    worker *ws = calloc((size_t)nt, sizeof *ws);
    if (!ws)
        return FDS_ENOMEM;
    int nb = (int)ceil(cfg->duration_s) + 1;
    int rc = 0;
    for (int i = 0; i < nt; i++)
        if ((rc = init_worker(&ws[i], cfg, i, nt, nb))) {
            nt = i + 1;
            goto fail;
        }
    atomic_store(&g_stop, 0);
    atomic_store(&g_stop_at, 0);
    atomic_store(&g_issued_total, 0);
    atomic_store(&g_workers_done, 0);
    g_t0 = now_ns() + 1000000; /* 1 ms to start the threads */
    g_m0 = g_t0 + (uint64_t)(cfg->warmup_s * 1e9);
    g_m1 = g_m0 + (uint64_t)(cfg->duration_s * 1e9);
    if (cfg->rate > 0)
        for (int i = 0; i < nt; i++)
            ws[i].window_count = count_due(&ws[i], g_m1 - 1);
    int started = 0;
    for (int i = 0; i < nt; i++) {
        if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0) {
            fds_lg_request_stop();
            rc = FDS_EIO;
            break;
        }
        started++;
    }
    cpu_snap s0, s1;
    monitor(cfg, ws, nt, started, &s0, &s1);
    for (int i = 0; i < started; i++)
        pthread_join(ws[i].thread, NULL);
    if (rc || (rc = merge_results(cfg, ws, nt, nb, res)))
        goto fail;
    cpu_results(cfg, &s0, &s1, res);
    free_workers(ws, nt);
    return 0;
fail:
    free_workers(ws, nt);
    fds_lg_result_free(res);
    return rc;
}

void fds_lg_result_free(fds_lg_result *res)
{
    fds_hist_free(res->latency);
    fds_hist_free(res->service);
    free(res->buckets);
    for (int k = 0; k < FDS_LG_MAX_CLASSES; k++) {
        fds_hist_free(res->classes[k].latency);
        res->classes[k].latency = NULL;
    }
    res->latency = res->service = NULL;
    res->buckets = NULL;
}
