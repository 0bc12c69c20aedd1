/*
 * lgcmd_cli.c: loadgen's command line -- the help text, the options with
 * their defaults and bounds, the targets they name (one server or the
 * nodes of a cluster, http:// or https://) and the credentials, which come
 * from a file or the environment and never from the command line, where
 * ps(1) would show them to every user of the machine.
 *
 * loadgen talks to whatever host it is given; its own tests and
 * benchmarks only ever give it loopback addresses (127.0.0.0/8).
 */
#include <getopt.h>
#include <gnutls/gnutls.h>
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
        "target:\n"
        "  --host H[,H2,...]     one server, or the nodes of a cluster, spread round robin\n"
        "                        over the keep-alive connections; each [http://|https://]\n"
        "                        HOST[:PORT] (default 127.0.0.1)\n"
        "  --port P              port of a host given without one (default 9200)\n"
        "  --cacert FILE         PEM CA certificate(s) that https:// servers are verified\n"
        "                        against (default: the system's trust store)\n"
        "  --insecure            do not verify https:// certificates (prints a warning)\n"
        "  --user NAME           basic auth; the password from --password-file or\n"
        "                        $" LG_PASSWORD_ENV " (else $" LG_PASSWORD_ENV2 ")\n"
        "  --password-file FILE  the password (first line), never on the command line\n"
        "  --api-key             send \"Authorization: ApiKey KEY\", KEY (base64 id:key, as\n"
        "                        Elasticsearch's create API key answers it) from\n"
        "                        --api-key-file FILE or $" LG_API_KEY_ENV "\n"
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
        "  --server-pid PID      server process for CPU% (local, from /proc); default: every\n"
        "                        node's GET /_nodes/_local/stats, sampled during the run\n"
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
    O_BG, O_JSON, O_MD, O_SVG, O_QUIET, O_A, O_B, O_ROUNDS, O_RDUR, O_HELP, O_DUMP, O_WORKLOAD,
    O_CACERT, O_INSECURE, O_USER, O_PWFILE, O_APIKEY, O_APIKEYFILE, O_PASSWORD
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
    case O_CACERT: o->cacert = arg; break;
    case O_INSECURE: o->insecure = 1; break;
    case O_USER: o->user = arg; break;
    case O_PWFILE: o->password_file = arg; break;
    case O_APIKEY: o->api_key = 1; break;
    case O_APIKEYFILE: o->api_key = 1; o->api_key_file = arg; break;
    case O_PASSWORD:
        fprintf(stderr, "loadgen: a password on the command line is visible to every user "
                        "in ps(1); use --password-file FILE or $" LG_PASSWORD_ENV "\n");
        return 2;
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

/* Every element of --host into o->targets; 0, or 2 after a message. */
static int set_targets(fds__lgcmd_opts *o)
{
    char msg[512];
    const char *p = o->host;
    o->ntargets = 0;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char one[FDS_HTTPC_MAX_HOST + 32];
        if (n == 0 || n >= sizeof one) {
            fprintf(stderr, "loadgen: --host '%s': an empty or overlong element\n", o->host);
            return 2;
        }
        if (o->ntargets == FDS_LG_MAX_TARGETS) {
            fprintf(stderr, "loadgen: --host names more than %d servers\n", FDS_LG_MAX_TARGETS);
            return 2;
        }
        memcpy(one, p, n);
        one[n] = '\0';
        fds_httpc_target *t = &o->targets[o->ntargets];
        if (fds_httpc_target_parse(t, one, o->port, msg, sizeof msg) != 0) {
            fprintf(stderr, "loadgen: %s\n", msg);
            return 2;
        }
        for (int k = 0; k < o->ntargets; k++)
            if (!strcmp(o->targets[k].url, t->url)) {
                fprintf(stderr, "loadgen: --host names %s twice\n", t->url);
                return 2;
            }
        o->ntargets++;
        p += n + (e != NULL);
    }
    if (o->ntargets == 0) {
        fprintf(stderr, "loadgen: --host is empty\n");
        return 2;
    }
    return 0;
}

/* The first line of `path` (without its newline) into buf; 0, or 2 after
 * a message. */
static int read_secret_file(const char *what, const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "loadgen: %s %s: cannot read it\n", what, path);
        return 2;
    }
    buf[0] = '\0';
    if (!fgets(buf, (int)cap, f) && ferror(f)) {
        fclose(f);
        fprintf(stderr, "loadgen: %s %s: read error\n", what, path);
        return 2;
    }
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
    return 0;
}

/* The Authorization line of --user or --api-key into o->auth; 0, or 2
 * after a message. */
static int set_credentials(fds__lgcmd_opts *o)
{
    char secret[LG_SECRET_MAX];
    o->auth[0] = '\0';
    if (o->user && o->api_key) {
        fprintf(stderr, "loadgen: give --user or --api-key, not both\n");
        return 2;
    }
    if ((o->password_file && !o->user)) {
        fprintf(stderr, "loadgen: --password-file needs --user\n");
        return 2;
    }
    if (o->user) {
        const char *env = NULL;
        if (o->password_file) {
            if (read_secret_file("--password-file", o->password_file, secret, sizeof secret))
                return 2;
        } else if ((env = getenv(LG_PASSWORD_ENV)) || (env = getenv(LG_PASSWORD_ENV2))) {
            snprintf(secret, sizeof secret, "%s", env);
        } else {
            fprintf(stderr, "loadgen: --user %s: no password: give --password-file FILE or set "
                            "$" LG_PASSWORD_ENV "\n", o->user);
            return 2;
        }
        if (strchr(o->user, ':')) {
            fprintf(stderr, "loadgen: --user: a user name cannot hold ':' (RFC 7617)\n");
            return 2;
        }
        char pair[LG_SECRET_MAX + 256];
        int n = snprintf(pair, sizeof pair, "%s:%s", o->user, secret);
        gnutls_datum_t in = {(unsigned char *)pair, (unsigned)n}, b64 = {0};
        if (n < 0 || (size_t)n >= sizeof pair || gnutls_base64_encode2(&in, &b64) < 0) {
            fprintf(stderr, "loadgen: --user: user name and password too long\n");
            return 2;
        }
        snprintf(o->auth, sizeof o->auth, "Authorization: Basic %.*s\r\n", (int)b64.size,
                 (const char *)b64.data);
        gnutls_free(b64.data);
        memset(pair, 0, sizeof pair);
    } else if (o->api_key) {
        const char *env = getenv(LG_API_KEY_ENV);
        if (o->api_key_file) {
            if (read_secret_file("--api-key-file", o->api_key_file, secret, sizeof secret))
                return 2;
        } else if (env) {
            snprintf(secret, sizeof secret, "%s", env);
        } else {
            fprintf(stderr, "loadgen: --api-key: give --api-key-file FILE or set "
                            "$" LG_API_KEY_ENV "\n");
            return 2;
        }
        if (!secret[0] || strpbrk(secret, " \t\r\n")) {
            fprintf(stderr, "loadgen: --api-key: the key is empty or holds white space\n");
            return 2;
        }
        snprintf(o->auth, sizeof o->auth, "Authorization: ApiKey %s\r\n", secret);
    }
    memset(secret, 0, sizeof secret);
    for (int k = 0; k < o->ntargets; k++)
        o->targets[k].auth = o->auth[0] ? o->auth : NULL;
    return 0;
}

/* TLS settings when a target is https://; 0, or 2 after a message. */
static int set_tls(fds__lgcmd_opts *o)
{
    int https = 0;
    for (int k = 0; k < o->ntargets; k++)
        https |= o->targets[k].https;
    if (!https) {
        if (o->cacert || o->insecure)
            fprintf(stderr, "loadgen: note: --cacert/--insecure have no effect without an "
                            "https:// host\n");
        return 0;
    }
    if (o->insecure)
        fprintf(stderr, "loadgen: WARNING: --insecure: https certificates are not verified; "
                        "anyone on the path can read the traffic and the credentials\n");
    char msg[512];
    if (fds_httpc_tls_new(o->cacert, o->insecure, &o->tls, msg, sizeof msg) != 0) {
        fprintf(stderr, "loadgen: %s\n", msg);
        return 2;
    }
    for (int k = 0; k < o->ntargets; k++)
        o->targets[k].tls = o->tls;
    return 0;
}

/* Every node needs a connection of its own; an uneven spread gets a note.
 * 0, or 2 after a message. */
static int check_spread(const fds__lgcmd_opts *o)
{
    if (o->ntargets == 1)
        return 0;
    if (o->clients < o->ntargets) {
        fprintf(stderr, "loadgen: --clients %d is fewer than the %d nodes: every node needs a "
                        "connection of its own\n", o->clients, o->ntargets);
        return 2;
    }
    if (o->clients % o->ntargets)
        fprintf(stderr, "loadgen: note: %d connections over %d nodes: the first %d nodes get "
                        "%d, the others %d (a multiple of %d spreads them evenly)\n",
                o->clients, o->ntargets, o->clients % o->ntargets,
                o->clients / o->ntargets + 1, o->clients / o->ntargets, o->ntargets);
    return 0;
}

void fds__lgcmd_opts_free(fds__lgcmd_opts *o)
{
    fds_httpc_tls_free(o->tls);
    o->tls = NULL;
    memset(o->auth, 0, sizeof o->auth);
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
        {"workload", 1, 0, O_WORKLOAD}, {"cacert", 1, 0, O_CACERT},
        {"insecure", 0, 0, O_INSECURE}, {"user", 1, 0, O_USER},
        {"password-file", 1, 0, O_PWFILE}, {"api-key", 0, 0, O_APIKEY},
        {"api-key-file", 1, 0, O_APIKEYFILE}, {"password", 1, 0, O_PASSWORD},
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
    if (set_targets(o) || set_credentials(o) || set_tls(o) || check_spread(o)) {
        fds__lgcmd_opts_free(o);
        return 2;
    }
    return LGCMD_GO;
}
