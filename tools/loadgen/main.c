/*
 * main.c: the `loadgen` command -- measures an Elasticsearch-shaped search
 * server on this machine: QPS, latency and service-time percentiles, errors,
 * server and system CPU, QPS per CPU%, under optional background load; and
 * A/B tests of two or more indices (e.g. a ZSTD, a best_compression and a
 * lucene_best_compression index) in alternating rounds.
 *
 *   loadgen [run] --index I [options]        one measurement
 *   loadgen ab --a IA --b IB [options]       rounds A B, B A, A B ...
 *   loadgen ab --index I1 --index I2 ...     rounds A B C, C B A, ...
 *   loadgen compare A.json B.json            two earlier result files
 *
 * The target is one server or the nodes of a cluster (--host h1,h2,...),
 * over http or https, with basic auth or an API key.  loadgen talks to any
 * host it is given; the project's tests and benchmarks give it loopback
 * addresses only.
 *
 * This file picks the command; the options are in lgcmd_cli.c, the
 * commands in lgcmd_run.c and lgcmd_ab.c (lgcmd.h lists every part).
 */
#include <stdio.h>
#include <string.h>

#include "fds_lgreport.h"
#include "lgcmd.h"

int main(int argc, char **argv)
{
    const char *cmd = "run";
    if (argc > 1 && argv[1][0] != '-') {
        cmd = argv[1];
        argv++;
        argc--;
    }
    if (!strcmp(cmd, "help")) {
        fds__lgcmd_usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "compare")) {
        if (argc != 3) {
            fprintf(stderr, "usage: loadgen compare A.json B.json\n");
            return 2;
        }
        return fds_lgreport_compare(argv[1], argv[2]) ? 1 : 0;
    }
    if (strcmp(cmd, "run") && strcmp(cmd, "ab")) {
        fprintf(stderr, "loadgen: unknown command '%s'\n", cmd);
        fds__lgcmd_usage(stderr);
        return 2;
    }
    int ab = !strcmp(cmd, "ab");
    fds__lgcmd_opts o;
    int status = fds__lgcmd_parse(&o, ab, argc, argv);
    if (status != LGCMD_GO)
        return status;
    fds__lgcmd_catch_signals();
    int rc = ab ? fds__lgcmd_ab(&o) : fds__lgcmd_run(&o);
    fds__lgcmd_opts_free(&o);
    return rc;
}
