/*
 * lgcmd_cli.c: loadgen's command line -- the help text, the options with
 * their defaults and bounds, and the loopback target they name (anything
 * but 127.0.0.0/8, ::1 and localhost is refused before a packet is sent).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_httpc.h"
#include "lgcmd.h"

void fds__lgcmd_usage(FILE *f)
{
    fputs(
        "usage:\n"
        "  loadgen [run] --index INDEX [options]    measure one workload\n"
        "  loadgen ab --a INDEX_A --b INDEX_B [options]\n"
        "                                            A/B test: rounds A B, B A, ..., ratio B/A\n"
        "  loadgen ab --index I1 --index I2 [--index I3 ...] [options]\n"
        "                                            N-way: rounds A B C, C B A, ...; ratios\n"
        "                                            I1 / each other index\n"
        "  loadgen compare A.json B.json             compare two earlier result files\n"
        "\n"
        "target (loopback only: 127.0.0.0/8, ::1, localhost):\n"
        "  --host H              default 127.0.0.1\n"
        "  --port P              default 9200\n"
        "load:\n"
        "  --threads N           event-loop threads (default 2)\n"
        "  --clients N           keep-alive connections; closed loop: concurrent clients (default 8)\n"
        "  --rate R              open loop at R requests/s in total (latency from the intended\n"
        "                        send time); default: closed loop\n"
        "  --duration S          measured seconds (default 10)\n"
        "  --warmup S            seconds excluded before measuring (default 2; ab: per round, default 1)\n"
        "  --max-requests N      stop after N requests sent, warm-up included (default: no cap)\n"
        "  --timeout S           per-request timeout in seconds (default 10)\n"
        "workload (default: random match queries, values sampled from the index):\n"
        "  --index I             index to query (run mode)\n"
        "  --workload W          match (default) or dashboard: Kibana Discover and Lens and\n"
        "                        Grafana bodies in time windows over the index's @timestamp\n"
        "                        range, one latency row per class (docs/loadgen.md)\n"
        "  --fields F1,F2        match fields, match workload only\n"
        "                        (default " FDS_LGWORK_DEFAULT_FIELDS ")\n"
        "  --seed N              query generator seed (default 1)\n"
        "  --sample-docs N       documents fetched to sample values (default 500)\n"
        "  --pool N              distinct query bodies generated (default 1000)\n"
        "  --size N              hits per query (default 10; dashboard: Discover's, default 500)\n"
        "  --bodies FILE         one request body per line, POSTed to /INDEX/_search (or --path)\n"
        "  --method M --path P   a fixed request without body (e.g. GET /) instead\n"
        "  --dump-queries FILE   also write the generated bodies, one per line (ab: FILE.INDEX)\n"
        "measurement:\n"
        "  --server-pid PID      server process for CPU%; default: from GET /_nodes/stats\n"
        "  --background SPEC     cpu=N,load=P[,tool=builtin]: stress-ng (or built-in burners)\n"
        "                        running during the run; its actual CPU is reported\n"
        "output:\n"
        "  --json FILE           results as JSON (ab default: " LG_DEFAULT_AB_JSON ")\n"
        "  --md FILE             results as a Markdown table\n"
        "  --svg-prefix P        ab charts P_qps_rounds.svg, P_latency.svg, P_qps_per_cpu.svg\n"
        "                        (default: the --json path without .json)\n"
        "  --quiet               no progress line on stderr\n"
        "ab:\n"
        "  --a INDEX_A --b INDEX_B, or --index up to 8 times (the first is the reference)\n"
        "  --rounds N (default 3, at most 32) --round-duration S (default 10)\n"
        "\n"
        "CPU percentages use the top(1) scale: 100% = one core busy.\n",
        f);
}

enum {
    O_HOST = 1000, O_PORT, O_INDEX, O_THREADS, O_CLIENTS, O_RATE, O_DURATION, O_WARMUP, O_MAXREQ,
    O_TIMEOUT, O_FIELDS, O_SEED, O_SAMPLE, O_POOL, O_SIZE, O_BODIES, O_METHOD, O_PATH, O_PID,
    O_BG, O_JSON, O_MD, O_SVG, O_QUIET, O_A, O_B, O_ROUNDS, O_RDUR, O_HELP, O_DUMP, O_WORKLOAD
};

static int num_arg(const char *name, const char *v, double lo, double hi, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= lo && d <= hi)) {
        fprintf(stderr, "loadgen: --%s wants a number in [%g, %g], got '%s'\n", name, lo, hi, v);
        return -1;
    }
    *out = d;
    return 0;
}

/* The defaults of every option (`ab`: 1 s of warm-up per round, not 2 s). */
static void set_defaults(fds__lgcmd_opts *o, int ab)
{
    *o = (fds__lgcmd_opts){.host = "127.0.0.1", .port = 9200, .threads = 2, .clients = 8,
                           .duration = 10, .warmup = ab ? 1 : 2, .timeout = 10,
                           .fields = FDS_LGWORK_DEFAULT_FIELDS, .seed = 1,
                           .sample_docs = LG_DEFAULT_SAMPLE_DOCS, .pool = LG_DEFAULT_POOL,
                           .size = 10, .workload = "match", .rounds = 3, .round_duration = 10};
}

/* Apply option `c` (an O_* code from getopt_long) with argument `arg`:
 * LGCMD_GO, 0 after --help, or 2 after a message. */
static int apply_option(fds__lgcmd_opts *o, int c, const char *arg)
{
    double d = 0;
    int bad = 0;
    switch (c) {
    case O_HOST: o->host = arg; break;
    case O_PORT: bad = num_arg("port", arg, 1, 65535, &d); o->port = (int)d; break;
    case O_INDEX:
        o->index = arg;
        if (o->nindices == LG_MAX_SIDES) {
            fprintf(stderr, "loadgen: at most %d --index\n", LG_MAX_SIDES);
            return 2;
        }
        o->indices[o->nindices++] = arg;
        break;
    case O_THREADS:
        bad = num_arg("threads", arg, 1, FDS_LG_MAX_THREADS, &d);
        o->threads = (int)d;
        break;
    case O_CLIENTS:
        bad = num_arg("clients", arg, 1, FDS_LG_MAX_CLIENTS, &d);
        o->clients = (int)d;
        break;
    case O_RATE: bad = num_arg("rate", arg, 0.001, 1e7, &o->rate); break;
    case O_DURATION: bad = num_arg("duration", arg, 0.1, 86400, &o->duration); break;
    case O_WARMUP: bad = num_arg("warmup", arg, 0, 86400, &o->warmup); break;
    case O_MAXREQ:
        bad = num_arg("max-requests", arg, 0, 1e15, &d);
        o->max_requests = (unsigned long long)d;
        break;
    case O_TIMEOUT: bad = num_arg("timeout", arg, 0.001, 3600, &o->timeout); break;
    case O_FIELDS: o->fields = arg; break;
    case O_SEED: bad = num_arg("seed", arg, 0, 1e18, &d); o->seed = (unsigned long long)d; break;
    case O_SAMPLE:
        bad = num_arg("sample-docs", arg, 1, 10000, &d);
        o->sample_docs = (int)d;
        break;
    case O_POOL: bad = num_arg("pool", arg, 1, 1e6, &d); o->pool = (long)d; break;
    case O_SIZE:
        bad = num_arg("size", arg, 0, 10000, &d);
        o->size = (int)d;
        o->size_set = 1;
        break;
    case O_WORKLOAD:
        if (strcmp(arg, "match") && strcmp(arg, "dashboard")) {
            fprintf(stderr, "loadgen: --workload is match or dashboard, got '%s'\n", arg);
            return 2;
        }
        o->workload = arg;
        break;
    case O_BODIES: o->bodies = arg; break;
    case O_METHOD: o->method = arg; break;
    case O_PATH: o->path = arg; break;
    case O_PID: bad = num_arg("server-pid", arg, 1, 1e9, &d); o->server_pid = (long)d; break;
    case O_BG: o->background = arg; break;
    case O_JSON: o->json = arg; break;
    case O_MD: o->md = arg; break;
    case O_SVG: o->svg_prefix = arg; break;
    case O_QUIET: o->quiet = 1; break;
    case O_DUMP: o->dump_queries = arg; break;
    case O_A: o->a = arg; break;
    case O_B: o->b = arg; break;
    case O_ROUNDS: bad = num_arg("rounds", arg, 1, LG_MAX_ROUNDS, &d); o->rounds = (int)d; break;
    case O_RDUR:
        bad = num_arg("round-duration", arg, 0.1, 86400, &o->round_duration);
        break;
    case O_HELP: fds__lgcmd_usage(stdout); return 0;
    default: fds__lgcmd_usage(stderr); return 2;
    }
    return bad ? 2 : LGCMD_GO;
}

/* The loopback address of --host/--port and the Host header naming it;
 * 0, or 2 after a message. */
static int set_target(fds__lgcmd_opts *o)
{
    char msg[300];
    if (fds_httpc_resolve_loopback(o->host, o->port, &o->addr, &o->addrlen, msg, sizeof msg) !=
        0) {
        fprintf(stderr, "loadgen: %s\n", msg);
        return 2;
    }
    if (strchr(o->host, ':'))
        snprintf(o->host_header, sizeof o->host_header, "[%s]:%d", o->host, o->port);
    else
        snprintf(o->host_header, sizeof o->host_header, "%s:%d", o->host, o->port);
    return 0;
}

int fds__lgcmd_parse(fds__lgcmd_opts *o, int ab, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"host", 1, 0, O_HOST},        {"port", 1, 0, O_PORT},
        {"index", 1, 0, O_INDEX},      {"threads", 1, 0, O_THREADS},
        {"clients", 1, 0, O_CLIENTS},  {"rate", 1, 0, O_RATE},
        {"duration", 1, 0, O_DURATION}, {"warmup", 1, 0, O_WARMUP},
        {"max-requests", 1, 0, O_MAXREQ}, {"timeout", 1, 0, O_TIMEOUT},
        {"fields", 1, 0, O_FIELDS},    {"seed", 1, 0, O_SEED},
        {"sample-docs", 1, 0, O_SAMPLE}, {"pool", 1, 0, O_POOL},
        {"size", 1, 0, O_SIZE},        {"bodies", 1, 0, O_BODIES},
        {"method", 1, 0, O_METHOD},    {"path", 1, 0, O_PATH},
        {"server-pid", 1, 0, O_PID},   {"background", 1, 0, O_BG},
        {"json", 1, 0, O_JSON},        {"md", 1, 0, O_MD},
        {"svg-prefix", 1, 0, O_SVG},   {"quiet", 0, 0, O_QUIET},
        {"a", 1, 0, O_A},              {"b", 1, 0, O_B},
        {"rounds", 1, 0, O_ROUNDS},    {"round-duration", 1, 0, O_RDUR},
        {"help", 0, 0, O_HELP},        {"dump-queries", 1, 0, O_DUMP},
        {"workload", 1, 0, O_WORKLOAD},
        {0, 0, 0, 0}};
    set_defaults(o, ab);
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int status = apply_option(o, c, optarg);
        if (status != LGCMD_GO)
            return status;
    }
    if (optind != argc) {
        fprintf(stderr, "loadgen: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    return set_target(o) ? 2 : LGCMD_GO;
}
