/*
 * guard.h: deadlines and soft caps for connections (guard.c holds the
 * rules), for the daemon (internal to src/http).
 */
#ifndef FDS_HTTP_GUARD_H
#define FDS_HTTP_GUARD_H

#include <stdint.h>
#include <microhttpd.h>

typedef struct fds__guard fds__guard;
typedef struct fds__guard_opts {
    unsigned head_timeout_s;  /* whole request head, from accept */
    unsigned idle_timeout_s;  /* next head on a keep-alive connection */
    uint64_t min_body_rate;   /* bytes/s after head_timeout_s; 0 = no bound */
    unsigned max_connections; /* soft total cap */
    unsigned max_per_ip;      /* soft cap per client address */
} fds__guard_opts;

/* Start the reaper thread.  Returns 0 or FDS_ENOMEM. */
int fds__guard_create(const fds__guard_opts *o, fds__guard **out);
/* After MHD_stop_daemon.  NULL is a no-op. */
void fds__guard_free(fds__guard *g);
/* MHD_OPTION_NOTIFY_CONNECTION callback (cls = the guard). */
void fds__guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe);
/* A request head is complete: returns 0, or 1 (over the per-address cap) or
 * 2 (over the total cap): then answer 429 and close. */
int fds__guard_head(fds__guard *g, struct MHD_Connection *conn);
/* `n` more body bytes arrived (extends the body deadline). */
void fds__guard_body(fds__guard *g, struct MHD_Connection *conn, size_t n);
/* The request is being handled: no deadline until it is answered. */
void fds__guard_busy(fds__guard *g, struct MHD_Connection *conn);
/* The answer is sent: the next head is due within idle_timeout_s. */
void fds__guard_done(fds__guard *g, struct MHD_Connection *conn);

#endif
