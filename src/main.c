/*
 * main.c: the `fieldstore` server, and its `advise` and `check-index`
 * subcommands.
 *
 *   fieldstore advise [options] FILE   (src/advise: the stored-fields codec
 *                                       measured on FILE, a recommendation)
 *   fieldstore check-index [--data DIR] [--exorcise] [INDEX...]
 *                                      (check_index.c: verify segments of a
 *                                       stopped node, drop damaged ones)
 *   fieldstore [--data DIR] [--bind ADDR] [--port N] [--threads N]
 *              [--max-body BYTES] [--port-file FILE] [--tls-cert FILE
 *              --tls-key FILE] [--users FILE] [--head-timeout S]
 *              [--min-body-rate BYTES] [--max-connections N]
 *              [--max-connections-per-ip N] [--min-free-disk BYTES]
 *              [--index-buffer-size BYTES|PERCENT%]
 *
 * Takes DATA/node.lock (one server per data directory, node_lock.c),
 * raises the soft RLIMIT_NOFILE to the hard limit (every connection is a
 * descriptor),
 * opens (or creates) the data directory, replays every index's translog,
 * serves the REST API until SIGINT/SIGTERM, then stops cleanly.  With
 * --port 0 the kernel picks a free port; --port-file writes the port bound
 * (tests use it to start servers side by side).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advise.h"
#include "cli.h"
#include "http.h"
#include "store.h"


/*
 * glibc malloc's thresholds, fixed with mallopt before any thread starts
 * instead of adjusted at run time.  glibc raises the mmap threshold to the
 * size of each mmap'd block freed (up to 32 MiB on 64-bit, its
 * DEFAULT_MMAP_THRESHOLD_MAX) and the trim threshold to twice that, and a
 * thread arena other than the main one keeps the free memory at its top up
 * to the trim threshold: malloc_trim (the store's fds__heap_release after
 * a refresh or merge) trims the main arena's top only.  With the write
 * threads' arenas beside those of the HTTP threads, the flusher and the
 * background thread, that left 82-107 MiB anonymous memory resident after
 * force-merges where 22-70 MiB had been (e2e test_memory, 5 rounds of 40k
 * documents).  Blocks below FDS_MALLOC_MMAP_THRESHOLD come from the arenas
 * (where the adjusted threshold ended anyway, so transient search buffers
 * are reused, not mapped and faulted in again), and a free that leaves
 * more than FDS_MALLOC_TRIM_THRESHOLD at an arena's top gives it back:
 * 14-35 MiB measured (8 MiB: 10-19; 32 MiB: 52-72).
 */
#define FDS_MALLOC_MMAP_THRESHOLD (32 << 20)
#define FDS_MALLOC_TRIM_THRESHOLD (16 << 20)

/* Every connection is a descriptor: use all the hard limit allows. */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl))
            fprintf(stderr, "fieldstore: warning: cannot raise RLIMIT_NOFILE: %s\n",
                    strerror(errno));
    }
}

static bool loopback(const char *addr)
{
    return !strncmp(addr, "127.", 4) || !strcmp(addr, "localhost");
}

static int parse_uint(const char *flag, const char *v, long long lo, long long hi,
                      long long *out)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "fieldstore: bad %s [%s] (%lld..%lld)\n", flag, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fieldstore [options]\n"
            "       fieldstore advise [options] FILE   (codec advice; advise --help)\n"
            "       fieldstore check-index [--data DIR] [--exorcise] [INDEX...]\n"
            "                          (verify segments of a stopped node; --help)\n"
            "  --data DIR         data directory (default ./data)\n"
            "  --bind ADDR        IPv4 address to listen on (default 127.0.0.1)\n"
            "  --port N           TCP port (default 9200; 0 = any free port)\n"
            "  --threads N        HTTP worker threads, and as many write threads\n"
            "                     (default: CPUs)\n"
            "  --max-body BYTES   largest request body (default 104857600)\n"
            "  --port-file FILE   write the bound port to FILE once listening\n"
            "  --tls-cert FILE    PEM certificate (chain): serve HTTPS (with --tls-key)\n"
            "  --tls-key FILE     PEM private key, unencrypted\n"
            "  --users FILE       require basic auth; lines name:hash, hash from\n"
            "                     `mkpasswd -m sha-512` (default: no authentication)\n"
            "  --head-timeout S   seconds to receive a whole request head (default %u)\n"
            "  --min-body-rate B  least average body rate, bytes/s (default %u)\n"
            "  --max-connections N  connections before new ones get 429 (default %u)\n"
            "  --max-connections-per-ip N  the same per client address (default %u)\n"
            "  --min-free-disk BYTES  refuse writes (429 cluster_block_exception)\n"
            "                     while the data directory's file system has\n"
            "                     less free, whatever the disk watermarks\n"
            "                     (cluster.routing.allocation.disk.*) say\n"
            "                     (default 0: the watermarks alone)\n"
            "  --index-buffer-size SIZE  write buffers of all indices, bytes\n"
            "                     (\"64mb\") or %% of physical memory (\"10%%\");\n"
            "                     past it a write turns its index's buffer into\n"
            "                     a segment (default 10%%, at most 16mb)\n"
            "  --help             this text\n",
            FDS_HTTP_HEAD_TIMEOUT_S, FDS_HTTP_MIN_BODY_RATE, FDS_HTTP_MAX_CONNECTIONS,
            FDS_HTTP_MAX_PER_IP);
}

/* The command line's settings. */
typedef struct cli {
    const char *data, *port_file;
    fds_http_options opt;
    long long min_free;    /* --min-free-disk, bytes */
    uint64_t index_buffer; /* --index-buffer-size, bytes */
} cli;

/* Read the command line into *cl (its defaults set by the caller): -1 to
 * go on, else the exit status (0 after --help, 2 for a bad option, with
 * the reason on stderr). */
static int parse_args(int argc, char **argv, cli *cl)
{
    static const struct option longopts[] = {
        {"data", required_argument, NULL, 'd'},
        {"bind", required_argument, NULL, 'b'},
        {"port", required_argument, NULL, 'p'},
        {"threads", required_argument, NULL, 't'},
        {"max-body", required_argument, NULL, 'm'},
        {"port-file", required_argument, NULL, 'f'},
        {"tls-cert", required_argument, NULL, 'C'},
        {"tls-key", required_argument, NULL, 'K'},
        {"users", required_argument, NULL, 'u'},
        {"head-timeout", required_argument, NULL, 'T'},
        {"min-body-rate", required_argument, NULL, 'R'},
        {"max-connections", required_argument, NULL, 'N'},
        {"max-connections-per-ip", required_argument, NULL, 'I'},
        {"min-free-disk", required_argument, NULL, 'F'},
        {"index-buffer-size", required_argument, NULL, 'B'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "d:b:p:t:m:f:h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'd': cl->data = optarg; break;
        case 'b': cl->opt.bind = optarg; break;
        case 'p': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 65535) {
                fprintf(stderr, "fieldstore: bad --port [%s]\n", optarg);
                return 2;
            }
            cl->opt.port = (uint16_t)v;
            break;
        }
        case 't': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1024) {
                fprintf(stderr, "fieldstore: bad --threads [%s]\n", optarg);
                return 2;
            }
            cl->opt.threads = (unsigned)v;
            break;
        }
        case 'm': {
            long long v = strtoll(optarg, &end, 10);
            if (*end || v < 1024 || (unsigned long long)v > FDS_HTTP_MAX_BODY_CAP) {
                fprintf(stderr, "fieldstore: bad --max-body [%s] (1024 to %llu "
                                "bytes)\n", optarg, FDS_HTTP_MAX_BODY_CAP);
                return 2;
            }
            cl->opt.max_body = (uint64_t)v;
            break;
        }
        case 'f': cl->port_file = optarg; break;
        case 'C': cl->opt.tls_cert = optarg; break;
        case 'K': cl->opt.tls_key = optarg; break;
        case 'u': cl->opt.users = optarg; break;
        case 'T': case 'R': case 'N': case 'I': {
            long long v;
            const char *name = c == 'T' ? "--head-timeout" : c == 'R' ? "--min-body-rate"
                               : c == 'N' ? "--max-connections" : "--max-connections-per-ip";
            if (parse_uint(name, optarg, 1, c == 'R' ? (1LL << 40) : 1000000, &v))
                return 2;
            if (c == 'T')
                cl->opt.head_timeout_s = (unsigned)v;
            else if (c == 'R')
                cl->opt.min_body_rate = (uint64_t)v;
            else if (c == 'N')
                cl->opt.max_connections = (unsigned)v;
            else
                cl->opt.max_per_ip = (unsigned)v;
            break;
        }
        case 'F':
            cl->min_free = strtoll(optarg, &end, 10);
            if (*end || cl->min_free < 0) {
                fprintf(stderr, "fieldstore: bad --min-free-disk [%s]\n", optarg);
                return 2;
            }
            break;
        case 'B': {
            fds_err e;
            fds_err_clear(&e);
            if (fds_index_buffer_parse(optarg, &cl->index_buffer, &e)) {
                fprintf(stderr, "fieldstore: %s\n", e.reason);
                return 2;
            }
            break;
        }
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    /* `fieldstore advise ...`: the codec measured on a log (src/advise) */
    if (argc > 1 && !strcmp(argv[1], "advise"))
        return fds_advise_main(argc - 1, argv + 1);
    /* `fieldstore check-index ...`: damaged segments found and dropped */
    if (argc > 1 && !strcmp(argv[1], "check-index"))
        return fds_check_index_main(argc - 1, argv + 1);
    mallopt(M_MMAP_THRESHOLD, FDS_MALLOC_MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, FDS_MALLOC_TRIM_THRESHOLD);
    cli cl = {.data = "./data",
              .opt = {.bind = "127.0.0.1", .port = FDS_HTTP_DEFAULT_PORT},
              .index_buffer = fds_index_buffer_default()};
    int rc = parse_args(argc, argv, &cl);
    if (rc >= 0)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    /* SIGINT and SIGTERM blocked here, before any thread starts (threads
     * inherit the mask), and taken by sigwait below: a handler and pause()
     * would miss a signal that a worker thread takes, or one that comes
     * between the flag's test and pause() */
    sigset_t stop_sigs;
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGINT);
    sigaddset(&stop_sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);

    if (!loopback(cl.opt.bind) && !cl.opt.users)
        fprintf(stderr, "fieldstore: WARNING: listening on %s without --users: anyone "
                        "who can reach this address can read, change and delete every "
                        "index (no authentication)%s\n", cl.opt.bind,
                cl.opt.tls_cert ? "" : ", over plain HTTP");
    if (fds_cli_lock_data_dir(cl.data))
        return 1;
    raise_nofile();

    fds_err err;
    fds_err_clear(&err);
    fds_store *store = NULL;
    if (fds_store_open(cl.data, &store, &err)) {
        fprintf(stderr, "fieldstore: cannot open data directory [%s]: %s\n", cl.data,
                err.reason[0] ? err.reason : "error");
        return 1;
    }
    fds_store_set_min_free_disk(store, (uint64_t)cl.min_free);
    fds_store_set_index_buffer_size(store, cl.index_buffer);
    fds_http_server *srv = NULL;
    if (fds_http_start(store, &cl.opt, &srv, &err)) {
        fprintf(stderr, "fieldstore: %s\n", err.reason);
        fds_store_close(store);
        return 1;
    }
    if (fds_store_start_background(store)) {
        fprintf(stderr, "fieldstore: cannot start background thread\n");
        fds_http_stop(srv);
        fds_store_close(store);
        return 1;
    }
    if (cl.port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", cl.port_file);
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%u\n", fds_http_port(srv));
            fclose(f);
            rename(tmp, cl.port_file);
        }
    }
    fprintf(stderr, "fieldstore: listening on %s://%s:%u (data %s, pid %d%s)\n",
            cl.opt.tls_cert ? "https" : "http", cl.opt.bind, fds_http_port(srv), cl.data,
            (int)getpid(), cl.opt.users ? ", basic auth" : "");
    int sig = 0;
    while (sigwait(&stop_sigs, &sig) != 0)
        ;
    fprintf(stderr, "fieldstore: stopping\n");
    fds_http_stop(srv);
    fds_store_close(store);
    return 0;
}
