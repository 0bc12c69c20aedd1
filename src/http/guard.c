/*
 * guard.c: bounds on how long and how many connections a client may hold.
 *
 * libmicrohttpd's MHD_OPTION_CONNECTION_TIMEOUT is an idle timeout: any byte
 * resets it, so a client sending one header byte every few seconds keeps its
 * connection for ever, and a few thousand such clients hold every slot
 * ("slowloris").  This module adds what the library lacks:
 *
 *  - a deadline for the whole request head: `head_timeout_s` from accept (or
 *    `idle_timeout_s` from the previous answer on a keep-alive connection);
 *  - a minimum body rate: the body of a request must arrive at an average
 *    of at least `min_body_rate` bytes/s after a grace of `head_timeout_s`;
 *  - soft caps on connections per client address and in total: a connection
 *    over a cap is answered 429 (see fds__guard_head) and closed, and one
 *    that does not even send a head is closed after FDS_GUARD_REFUSED_GRACE_US.
 *
 * Every connection is on a list (MHD_OPTION_NOTIFY_CONNECTION).  A reaper
 * thread wakes every FDS_GUARD_TICK_US and calls shutdown(2) on the socket
 * of each connection past its deadline; libmicrohttpd then sees the
 * connection end and cleans it up as usual.  The fd stays valid while the
 * entry is listed: libmicrohttpd notifies MHD_CONNECTION_NOTIFY_CLOSED
 * (which unlists it, under the same lock) before it closes the socket.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fds_clock.h"
#include "guard.h"
#include "request.h"

#define FDS_GUARD_TICK_US 200000LL          /* reaper period */
#define FDS_GUARD_REFUSED_GRACE_US 1000000LL /* an over-cap client's time to send a head */
#define FDS_GUARD_IP_BUCKETS 4096            /* per-address counters (hash buckets) */
#define FDS_GUARD_NO_DEADLINE INT64_MAX

enum { PH_HEAD, PH_BODY, PH_BUSY };

typedef struct guard_ip {
    uint32_t addr; /* IPv4, network order; 0 for other families */
    unsigned n;
    struct guard_ip *next;
} guard_ip;

typedef struct guard_conn {
    struct guard_conn *prev, *next;
    int fd;
    int phase;
    bool refused_ip, refused_total, shut;
    int64_t deadline_us;
    int64_t body_start_us;
    uint64_t body_got;
    guard_ip *ip;
} guard_conn;

struct fds__guard {
    fds__guard_opts o;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t reaper;
    bool stop, started;
    guard_conn head; /* list sentinel */
    unsigned total;
    guard_ip *ips[FDS_GUARD_IP_BUCKETS];
};

static int64_t sec_us(unsigned s) { return (int64_t)s * 1000000; }

static void *reap(void *arg)
{
    fds__guard *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(FDS_GUARD_TICK_US * 1000);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        int64_t now = (long long)fds_mono_us();
        for (guard_conn *c = g->head.next; c != &g->head; c = c->next)
            if (!c->shut && c->deadline_us <= now) {
                shutdown(c->fd, SHUT_RDWR);
                c->shut = true;
            }
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int fds__guard_create(const fds__guard_opts *o, fds__guard **out)
{
    fds__guard *g = calloc(1, sizeof *g);
    if (!g)
        return FDS_ENOMEM;
    g->o = *o;
    g->head.next = g->head.prev = &g->head;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    if (pthread_create(&g->reaper, NULL, reap, g)) {
        fds__guard_free(g);
        return FDS_ENOMEM;
    }
    g->started = true;
    *out = g;
    return 0;
}

void fds__guard_free(fds__guard *g)
{
    if (!g)
        return;
    if (g->started) {
        pthread_mutex_lock(&g->mu);
        g->stop = true;
        pthread_cond_signal(&g->cv);
        pthread_mutex_unlock(&g->mu);
        pthread_join(g->reaper, NULL);
    }
    /* libmicrohttpd has closed every connection (and unlisted it) by now */
    for (unsigned i = 0; i < FDS_GUARD_IP_BUCKETS; i++)
        while (g->ips[i]) {
            guard_ip *n = g->ips[i]->next;
            free(g->ips[i]);
            g->ips[i] = n;
        }
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

static guard_ip *ip_ref(fds__guard *g, uint32_t addr)
{
    guard_ip **b = &g->ips[(addr * 2654435761u) % FDS_GUARD_IP_BUCKETS];
    for (guard_ip *p = *b; p; p = p->next)
        if (p->addr == addr) {
            p->n++;
            return p;
        }
    guard_ip *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->addr = addr;
    p->n = 1;
    p->next = *b;
    *b = p;
    return p;
}

static void ip_unref(fds__guard *g, guard_ip *ip)
{
    if (!ip || --ip->n)
        return;
    guard_ip **b = &g->ips[(ip->addr * 2654435761u) % FDS_GUARD_IP_BUCKETS];
    while (*b != ip)
        b = &(*b)->next;
    *b = ip->next;
    free(ip);
}

void fds__guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe)
{
    fds__guard *g = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        guard_conn *c = calloc(1, sizeof *c);
        *socket_context = c;
        if (!c)
            return;
        const union MHD_ConnectionInfo *fi =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        uint32_t addr = 0;
        if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET)
            addr = ((const struct sockaddr_in *)(const void *)ai->client_addr)
                       ->sin_addr.s_addr;
        c->fd = fi ? fi->connect_fd : -1;
        c->phase = PH_HEAD;
        pthread_mutex_lock(&g->mu);
        c->ip = ip_ref(g, addr);
        g->total++;
        c->refused_total = g->total > g->o.max_connections;
        c->refused_ip = c->ip && c->ip->n > g->o.max_per_ip;
        c->deadline_us = (long long)fds_mono_us() + ((c->refused_ip || c->refused_total)
                                             ? FDS_GUARD_REFUSED_GRACE_US
                                             : sec_us(g->o.head_timeout_s));
        c->next = g->head.next;
        c->prev = &g->head;
        g->head.next->prev = c;
        g->head.next = c;
        pthread_mutex_unlock(&g->mu);
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        guard_conn *c = *socket_context;
        *socket_context = NULL;
        if (!c)
            return;
        pthread_mutex_lock(&g->mu);
        c->prev->next = c->next;
        c->next->prev = c->prev;
        ip_unref(g, c->ip);
        g->total--;
        pthread_mutex_unlock(&g->mu);
        free(c);
    }
}

static guard_conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i ? i->socket_context : NULL;
}

int fds__guard_head(fds__guard *g, struct MHD_Connection *conn)
{
    guard_conn *c = conn_of(conn);
    if (!c)
        return 0;
    pthread_mutex_lock(&g->mu);
    int refused = c->refused_ip ? 1 : c->refused_total ? 2 : 0;
    int64_t now = (long long)fds_mono_us();
    c->phase = PH_BODY;
    c->body_start_us = now;
    c->body_got = 0;
    if (!refused)
        c->deadline_us = now + sec_us(g->o.head_timeout_s);
    pthread_mutex_unlock(&g->mu);
    return refused;
}

void fds__guard_body(fds__guard *g, struct MHD_Connection *conn, size_t n)
{
    guard_conn *c = conn_of(conn);
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    c->body_got += n;
    if (g->o.min_body_rate)
        c->deadline_us = c->body_start_us + sec_us(g->o.head_timeout_s) +
                         (int64_t)(c->body_got * 1000000 / g->o.min_body_rate);
    else
        c->deadline_us = FDS_GUARD_NO_DEADLINE;
    pthread_mutex_unlock(&g->mu);
}

static void set_phase(fds__guard *g, struct MHD_Connection *conn, int phase,
                      int64_t deadline_us)
{
    guard_conn *c = conn_of(conn);
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    c->phase = phase;
    c->deadline_us = deadline_us;
    pthread_mutex_unlock(&g->mu);
}

void fds__guard_busy(fds__guard *g, struct MHD_Connection *conn)
{
    set_phase(g, conn, PH_BUSY, FDS_GUARD_NO_DEADLINE);
}

void fds__guard_done(fds__guard *g, struct MHD_Connection *conn)
{
    set_phase(g, conn, PH_HEAD, (long long)fds_mono_us() + sec_us(g->o.idle_timeout_s));
}
