/*
 * main.c: the `fieldstore` server.
 *
 *   fieldstore [--data DIR] [--bind ADDR] [--port N] [--threads N]
 *              [--max-body BYTES] [--port-file FILE] [--min-free-disk BYTES]
 *
 * Opens (or creates) the data directory, replays every index's translog,
 * serves the REST API until SIGINT/SIGTERM, then stops cleanly.  With
 * --port 0 the kernel picks a free port; --port-file writes the port bound
 * (tests use it to start servers side by side).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "store.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fieldstore [options]\n"
            "  --data DIR         data directory (default ./data)\n"
            "  --bind ADDR        IPv4 address to listen on (default 127.0.0.1)\n"
            "  --port N           TCP port (default 9200; 0 = any free port)\n"
            "  --threads N        HTTP worker threads (default: CPUs)\n"
            "  --max-body BYTES   largest request body (default 104857600)\n"
            "  --port-file FILE   write the bound port to FILE once listening\n"
            "  --min-free-disk BYTES  refuse writes (429 cluster_block_exception)\n"
            "                     while the data directory's file system has\n"
            "                     less free (default 0: only when it is full)\n"
            "  --help             this text\n");
}

int main(int argc, char **argv)
{
    const char *data = "./data", *port_file = NULL;
    fds_http_options opt = {.bind = "127.0.0.1", .port = FDS_HTTP_DEFAULT_PORT};
    static const struct option longopts[] = {
        {"data", required_argument, NULL, 'd'},
        {"bind", required_argument, NULL, 'b'},
        {"port", required_argument, NULL, 'p'},
        {"threads", required_argument, NULL, 't'},
        {"max-body", required_argument, NULL, 'm'},
        {"port-file", required_argument, NULL, 'f'},
        {"min-free-disk", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    long long min_free = 0;
    int c;
    while ((c = getopt_long(argc, argv, "d:b:p:t:m:f:F:h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'd': data = optarg; break;
        case 'b': opt.bind = optarg; break;
        case 'p': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 65535) {
                fprintf(stderr, "fieldstore: bad --port [%s]\n", optarg);
                return 2;
            }
            opt.port = (uint16_t)v;
            break;
        }
        case 't': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1024) {
                fprintf(stderr, "fieldstore: bad --threads [%s]\n", optarg);
                return 2;
            }
            opt.threads = (unsigned)v;
            break;
        }
        case 'm': {
            long long v = strtoll(optarg, &end, 10);
            if (*end || v < 1024) {
                fprintf(stderr, "fieldstore: bad --max-body [%s]\n", optarg);
                return 2;
            }
            opt.max_body = (uint64_t)v;
            break;
        }
        case 'f': port_file = optarg; break;
        case 'F':
            min_free = strtoll(optarg, &end, 10);
            if (*end || min_free < 0) {
                fprintf(stderr, "fieldstore: bad --min-free-disk [%s]\n", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    fds_err err;
    fds_err_clear(&err);
    fds_store *store = NULL;
    if (fds_store_open(data, &store, &err)) {
        fprintf(stderr, "fieldstore: cannot open data directory [%s]: %s\n", data,
                err.reason[0] ? err.reason : "error");
        return 1;
    }
    fds_store_set_min_free_disk(store, (uint64_t)min_free);
    fds_http_server *srv = NULL;
    if (fds_http_start(store, &opt, &srv, &err)) {
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
    if (port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%u\n", fds_http_port(srv));
            fclose(f);
            rename(tmp, port_file);
        }
    }
    fprintf(stderr, "fieldstore: listening on http://%s:%u (data %s, pid %d)\n",
            opt.bind, fds_http_port(srv), data, (int)getpid());
    while (!stop_flag)
        pause();
    fprintf(stderr, "fieldstore: stopping\n");
    fds_http_stop(srv);
    fds_store_close(store);
    return 0;
}
