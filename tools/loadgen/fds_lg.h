/*
 * fds_lg.h: the load engine of `loadgen` -- keep-alive HTTP/1.1 connections
 * over non-blocking sockets and epoll, one event loop per thread, closed or
 * open loop, and the measurements of one run.
 *
 * Definitions (as Rally defines them, and as wrk2 measures them):
 *  - service time: from the moment the request's first byte is written to
 *    the moment its response's last byte is read.
 *  - latency: from the moment the request was *meant* to be sent to the last
 *    byte of its response.  In the closed loop (--clients N, each client sends
 *    its next request when the previous one completed) the intended time is
 *    the moment the client became ready, so latency = service time plus any
 *    connect.  In the open loop (--rate R) request k of a thread is due at
 *    t0 + k/R_thread whatever happened before; a request that has to wait
 *    for a free connection because the server stalled is late, and that
 *    wait is part of its latency.  This is what keeps "coordinated omission"
 *    (Gil Tene) from hiding a stall: the load generator does not slow its
 *    schedule down to the server's pace.
 *
 * Windows: the run starts at t0; requests due before t0 + warmup are sent
 * but not recorded; requests due in [t0+warmup, t0+warmup+duration) are
 * recorded (latency, service time, errors) even if they complete later;
 * throughput counts successful completions inside the window, in 1 s
 * buckets.  After the window, due requests are still sent and in-flight ones
 * awaited for up to `timeout_s`; whatever is still unanswered then is a
 * timeout error.
 *
 * Errors, never successes: a status outside 200..299, a timeout, a failed
 * connect (or TLS handshake), a connection closed or reset before the
 * response ended ("short read") and a malformed response.  Each is also
 * counted per target, so a node that fails is named.
 */
#ifndef FDS_LG_H
#define FDS_LG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "fds_hist.h"
#include "fds_httpc.h"
#include "fds_sysstat.h"

#define FDS_LG_MAX_THREADS 64
#define FDS_LG_MAX_CLIENTS 10000
#define FDS_LG_RECV_BUF (64 * 1024)       /* per-thread receive buffer, bytes */
#define FDS_LG_CONNECT_BACKOFF_NS 10000000 /* wait after a failed connect: 10 ms */
#define FDS_LG_MAX_CLASSES 16              /* request classes with their own counts */
#define FDS_LG_MAX_TARGETS 16              /* servers of one run (--host h1,h2,...) */
#define FDS_LG_ERROR_TEXT 256              /* bytes of a target's first failure reason */

typedef struct fds_lg_config {
    /* The servers: connection k (over all threads) goes to targets[k %
     * ntargets] and stays there (keep-alive); 1..FDS_LG_MAX_TARGETS.  The
     * caller owns them, and the TLS settings they point to, for the run. */
    const fds_httpc_target *targets;
    int ntargets;
    int threads;                  /* event-loop threads, 1..FDS_LG_MAX_THREADS */
    int clients;                  /* connections in total (closed loop: clients) */
    double rate;                  /* open loop: requests/s in total; 0 = closed loop */
    double duration_s;            /* measured window, seconds (> 0) */
    double warmup_s;              /* excluded lead-in, seconds (>= 0) */
    uint64_t max_requests;        /* cap on requests sent, warm-up included; 0 = none */
    double timeout_s;             /* per request, from the moment it is issued */
    /* Complete request messages (request line, headers, body), sent verbatim:
     * requests[t * nrequests + i] is message i as sent to target t (its Host
     * and Authorization headers); the caller owns them for the run. */
    const char *const *requests;
    const size_t *request_lens;
    size_t nrequests;             /* messages per target */
    /* The class (0..nclasses-1) of each request, counted apart in
     * fds_lg_result.classes; NULL with nclasses 0: no classes. */
    const unsigned char *request_classes;
    int nclasses;                 /* 0..FDS_LG_MAX_CLASSES */
    pid_t server_pid;             /* 0: no server CPU measurement */
    fds_sysstat_bg *background;   /* NULL: none */
    int progress;                 /* 1: a progress line on stderr once a second */
    const char *label;            /* shown in the progress line */
} fds_lg_config;

/* One request class of a run: the same window rules as the totals. */
typedef struct fds_lg_class_result {
    uint64_t ok;                  /* successes due in the window */
    uint64_t errors;              /* failures due in the window, every kind */
    uint64_t err_status;          /* of which non-2xx */
    fds_hist *latency;            /* ns, successes due in the window */
} fds_lg_class_result;

/* One target of a run: its requests due in the window by outcome, and the
 * first failure seen on a connection to it (any time in the run). */
typedef struct fds_lg_target_result {
    uint64_t ok, err_status, err_timeout, err_connect, err_short_read, err_protocol;
    int last_status;              /* the first non-2xx status seen, 0 if none */
    char first_error[FDS_LG_ERROR_TEXT]; /* "" if none */
} fds_lg_target_result;

typedef struct fds_lg_result {
    int open_loop;
    double rate;
    double elapsed_s;             /* length of the measured window actually used, s */
    int stopped_early;            /* 1: --max-requests or a signal ended the run */
    uint64_t sent;                /* requests sent, warm-up included */
    uint64_t ok;                  /* successes due in the window */
    uint64_t errors;              /* failures due in the window (sum of the next five) */
    uint64_t err_status;          /* non-2xx */
    uint64_t err_timeout;
    uint64_t err_connect;
    uint64_t err_short_read;      /* closed/reset before the end of the response */
    uint64_t err_protocol;        /* malformed response */
    uint64_t completed_in_window; /* successful completions inside the window */
    double qps;                   /* completed_in_window / elapsed_s */
    double qps_min, qps_median, qps_mean, qps_max; /* over whole 1 s buckets */
    int nbuckets;
    uint64_t *buckets;            /* successes per 1 s bucket (malloc'ed) */
    uint64_t max_backlog;         /* open loop: most requests waiting for a connection */
    fds_hist *latency;            /* ns, requests due in the window, successes only */
    fds_hist *service;            /* ns, idem */
    /* CPU over the window, "100% = one core"; negative when not measured */
    double server_cpu_percent;
    double system_cpu_percent;
    double background_cpu_percent;
    double qps_per_server_cpu;    /* qps / server_cpu_percent; 0 if not measured */
    double qps_per_system_cpu;
    int nclasses;                 /* cfg->nclasses */
    fds_lg_class_result classes[FDS_LG_MAX_CLASSES];
    int ntargets;                 /* cfg->ntargets */
    fds_lg_target_result targets[FDS_LG_MAX_TARGETS];
} fds_lg_result;

/* Run one measurement.  Fills `res` (free its parts with fds_lg_result_free).
 * Returns 0, FDS_EINVAL for a bad configuration, FDS_ENOMEM, or FDS_EIO when
 * epoll/thread set-up fails.  Request failures are results, not errors. */
int fds_lg_run(const fds_lg_config *cfg, fds_lg_result *res);

void fds_lg_result_free(fds_lg_result *res);

/* Ask a running fds_lg_run() to stop (async-signal-safe; used for SIGINT). */
void fds_lg_request_stop(void);

#endif
