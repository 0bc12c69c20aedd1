/*
 * advise_cli.c: the command line of `fieldstore advise` (options, checks,
 * exit status) and the order of its steps: read the input, measure the
 * grid within --time, mark the Pareto front, recommend, write the table,
 * advice.json and advice.svg.
 *
 * Exit status: 0 done; 2 bad option or bad input (unreadable or empty
 * file, no parsable line, --url), with the reason on stderr; 1 when a
 * codec call fails or an output cannot be written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "advise.h"

#define ADV_MAX_PROJECTIONS 4
#define ADV_TIME_MAX 86400.0
#define ADV_SAMPLE_MB_MAX 1024u

static void usage(FILE *f)
{
    fputs(
        "usage: fieldstore advise [options] FILE\n"
        "Measure every stored-fields codec of fieldstore on a sample of FILE and\n"
        "recommend the index settings: ratio, projected stored-fields bytes,\n"
        "compress and decode speed, one-doc and ten-hit fetch latency per\n"
        "configuration, the Pareto front of bytes against fetch time, and the\n"
        "PUT /{index} body to use.\n"
        "\n"
        "FILE: an nginx/Apache combined access log (converted as nginx2json\n"
        "converts it) or NDJSON documents (plain or _bulk), told apart by content.\n"
        "\n"
        "  --time SECONDS   time for the whole measurement (default 60); rows not\n"
        "                   reached when it runs out are reported as not measured\n"
        "  --docs N         project stored bytes at N documents (up to 4 times;\n"
        "                   default: FILE's document count and 10000000)\n"
        "  --out DIR        where advice.json and advice.svg go (default .)\n"
        "  --sample-mb N    MB of documents measured (default 8), in 8 runs spread\n"
        "                   over FILE\n"
        "  --host H --port P  the server the printed loadgen line targets\n"
        "                   (default 127.0.0.1 9200)\n"
        "  --quiet          no progress lines on stderr\n"
        "  --url URL        not supported: export the index as NDJSON and pass it\n"
        "  -h, --help       this text\n"
        "\n"
        "Exit status: 0 done, 2 bad option or bad input, 1 internal failure.\n",
        f);
}

static int bad(const char *fmt, const char *arg)
{
    fputs("fieldstore advise: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return FDS_ADVISE_EXIT_USAGE;
}

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Unsigned decimal with nothing after it, within [lo, hi]. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int fds_advise_main(int argc, char **argv)
{
    enum { O_TIME = 256, O_DOCS, O_OUT, O_SAMPLE, O_HOST, O_PORT, O_QUIET, O_URL };
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"time", required_argument, NULL, O_TIME},
        {"docs", required_argument, NULL, O_DOCS},
        {"out", required_argument, NULL, O_OUT},
        {"sample-mb", required_argument, NULL, O_SAMPLE},
        {"host", required_argument, NULL, O_HOST},
        {"port", required_argument, NULL, O_PORT},
        {"quiet", no_argument, NULL, O_QUIET},
        {"url", required_argument, NULL, O_URL},
        {NULL, 0, NULL, 0}};
    double budget = FDS_ADVISE_TIME_DEFAULT;
    uint64_t proj[ADV_MAX_PROJECTIONS], sample_mb = FDS_ADVISE_SAMPLE_DEFAULT >> 20, port = 9200;
    size_t nproj = 0;
    const char *out = ".", *host = "127.0.0.1";
    bool quiet = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'h': usage(stdout); return 0;
        case O_TIME:
            budget = strtod(optarg, &end);
            if (end == optarg || *end || !(budget > 0 && budget <= ADV_TIME_MAX))
                return bad("--time needs seconds above 0 and at most 86400, not [%s]", optarg);
            break;
        case O_DOCS:
            if (nproj == ADV_MAX_PROJECTIONS) return bad("--docs is given more than %s times", "4");
            if (parse_u64(optarg, 1, UINT64_MAX / 1024, &proj[nproj++]))
                return bad("--docs needs a positive integer, not [%s]", optarg);
            break;
        case O_OUT: out = optarg; break;
        case O_SAMPLE:
            if (parse_u64(optarg, 1, ADV_SAMPLE_MB_MAX, &sample_mb))
                return bad("--sample-mb needs an integer from 1 to 1024, not [%s]", optarg);
            break;
        case O_HOST: host = optarg; break;
        case O_PORT:
            if (parse_u64(optarg, 1, 65535, &port))
                return bad("--port needs 1..65535, not [%s]", optarg);
            break;
        case O_QUIET: quiet = true; break;
        case O_URL:
            return bad("--url [%s] is not supported: export the index's documents as NDJSON "
                       "(one _source per line, e.g. with _search and search_after) and pass "
                       "that file", optarg);
        case ':':
            return bad("%s needs a value (see --help)", argv[optind - 1]);
        default:
            usage(stderr);
            return bad("unknown option [%s]", argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return bad("%s", "no input FILE");
    }
    if (argc - optind > 1) return bad("one input FILE, not also [%s]", argv[optind + 1]);
    const char *path = argv[optind];
    if (fds_codec_zstd_check(NULL))
        return bad("%s", "libzstd is not the version the codec was built with");
    struct stat st;
    if (mkdir(out, 0755) && errno != EEXIST) return bad("cannot create --out [%s]", out);
    if (stat(out, &st) || !S_ISDIR(st.st_mode)) return bad("--out [%s] is not a directory", out);

    double start = mono();
    fds__adv_input in;
    char why[1024];
    if (!quiet) fprintf(stderr, "advise: reading %s ...\n", path);
    int rc = fds__adv_read(path, (size_t)sample_mb << 20, &in, why, sizeof why);
    if (rc) {
        fprintf(stderr, "fieldstore advise: %s\n", why);
        return rc == FDS_ENOMEM ? FDS_ADVISE_EXIT_FAIL : FDS_ADVISE_EXIT_USAGE;
    }
    if (!quiet)
        fprintf(stderr, "advise: %zu documents sampled (%.1f MB), %llu unparsable lines; "
                        "measuring within %.0f s\n",
                in.docs.n, (double)in.docs.len / 1e6, (unsigned long long)in.unparsable, budget);
    if (!nproj) {
        proj[nproj++] = in.docs_total;
        if (in.docs_total != FDS_ADVISE_DOCS_BIG) proj[nproj++] = FDS_ADVISE_DOCS_BIG;
    }
    fds__adv_grid *g = malloc(sizeof *g);
    if (!g) {
        fds__adv_input_free(&in);
        return FDS_ADVISE_EXIT_FAIL;
    }
    fds__adv_grid_init(g);
    rc = fds__adv_measure(g, &in.docs, start + budget, quiet);
    int ex = 0;
    if (rc) {
        ex = FDS_ADVISE_EXIT_FAIL;
        goto done;
    }
    fds__adv_pareto(g);
    char sentence[1024];
    fds__adv_report rep = {.input_path = path, .in = &in, .g = g, .projections = proj,
                           .nproj = nproj, .why = sentence, .host = host, .port = (int)port,
                           .time_budget = budget};
    rep.rec = fds__adv_recommend(g, sentence, sizeof sentence);
    fds__adv_print(stdout, &rep);
    char p[4096];
    snprintf(p, sizeof p, "%s/advice.json", out);
    if (fds__adv_write_json(p, &rep)) {
        fprintf(stderr, "fieldstore advise: cannot write %s\n", p);
        ex = FDS_ADVISE_EXIT_FAIL;
    }
    snprintf(p, sizeof p, "%s/advice.svg", out);
    if (fds__adv_write_svg(p, &rep)) {
        fprintf(stderr, "fieldstore advise: cannot write %s\n", p);
        ex = FDS_ADVISE_EXIT_FAIL;
    }
    if (!ex && !quiet) fprintf(stderr, "advise: wrote %s/advice.json and %s/advice.svg\n", out, out);
done:
    free(g);
    fds__adv_input_free(&in);
    return ex;
}
