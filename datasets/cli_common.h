/*
 * cli_common.h: small pieces shared by the two data-set tools (nginx2json,
 * synthlogs): number and index-name checks, the bulk action line, and a
 * growable output buffer.  Internal to datasets/; header-only so that the
 * fds_logparse library stays free of CLI concerns.
 */
#ifndef FDS_DATASETS_CLI_COMMON_H
#define FDS_DATASETS_CLI_COMMON_H

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logparse.h"

/* Named limits. */
#define FDS_CLI_INDEX_NAME_MAX 255       /* Elasticsearch's index name limit */
#define FDS_CLI_IO_BUF (1u << 20)        /* stdio buffer of input and output */

/* Exit codes of both tools. */
#define FDS_CLI_EXIT_OK 0
#define FDS_CLI_EXIT_USAGE 2     /* bad option, unreadable input, write error */
#define FDS_CLI_EXIT_UNPARSABLE 3 /* nginx2json: some lines were reported */

/* Decimal uint64 with nothing after it.  Returns 0 or -1. */
static inline int fds__cli_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = (uint64_t)v;
    return 0;
}

/* Elasticsearch index name rules: 1..255 bytes, lowercase, none of
 * \ / * ? " < > | space , # :, not starting with - _ +, not "." or "..".
 * Returns NULL when valid, else the reason. */
static inline const char *fds__cli_index_name_error(const char *s)
{
    size_t n = strlen(s);
    if (n == 0) return "empty index name";
    if (n > FDS_CLI_INDEX_NAME_MAX) return "index name longer than 255 bytes";
    if (!strcmp(s, ".") || !strcmp(s, "..")) return "index name is . or ..";
    if (s[0] == '-' || s[0] == '_' || s[0] == '+')
        return "index name starts with -, _ or +";
    for (const char *p = s; *p; p++) {
        if (*p >= 'A' && *p <= 'Z') return "index name must be lowercase";
        if (strchr("\\/*?\"<>| ,#:", *p) || (unsigned char)*p < 0x20)
            return "index name holds a forbidden character";
    }
    return NULL;
}

/* Options of both tools (synthlogs adds --sample and --docs; nginx2json
 * takes one input FILE or "-"). */
typedef struct fds__cli_opts {
    const char *format, *index, *host, *out_path;
    const char *in_path;  /* nginx2json */
    const char *sample;   /* synthlogs */
    uint64_t seed, docs;
    int no_ids, bulk;
    int resample, stats;  /* synthlogs */
} fds__cli_opts;

/*
 * Parse argv with getopt_long into `o` (which holds the defaults on entry),
 * then check --format / --index.  `synth` selects synthlogs' options.
 * Returns -1 to go on, or the exit code to return at once (FDS_CLI_EXIT_OK
 * after --help, FDS_CLI_EXIT_USAGE with a message on stderr).
 */
static inline int fds__cli_parse(int argc, char **argv, const char *tool,
                                 int synth, void (*usage)(FILE *),
                                 fds__cli_opts *o)
{
    enum { O_FORMAT = 256, O_INDEX, O_HOST, O_SEED, O_NOIDS, O_SAMPLE, O_DOCS,
           O_RESAMPLE, O_STATS };
    static const struct option common[] = {
        {"help", no_argument, NULL, 'h'},
        {"format", required_argument, NULL, O_FORMAT},
        {"index", required_argument, NULL, O_INDEX},
        {"host", required_argument, NULL, O_HOST},
        {"seed", required_argument, NULL, O_SEED},
        {"no-ids", no_argument, NULL, O_NOIDS},
        {"sample", required_argument, NULL, O_SAMPLE},
        {"docs", required_argument, NULL, O_DOCS},
        {"resample", no_argument, NULL, O_RESAMPLE},
        {"stats", no_argument, NULL, O_STATS},
        {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+ho:", common, NULL)) != -1) {
        uint64_t *num = NULL;
        const char *what = NULL;
        switch (c) {
        case 'h': usage(stdout); return FDS_CLI_EXIT_OK;
        case 'o': o->out_path = optarg; break;
        case O_FORMAT: o->format = optarg; break;
        case O_INDEX: o->index = optarg; break;
        case O_HOST: o->host = optarg; break;
        case O_NOIDS: o->no_ids = 1; break;
        case O_SEED: num = &o->seed; what = "--seed"; break;
        case O_SAMPLE:
            if (!synth)
                goto bad;
            o->sample = optarg;
            break;
        case O_RESAMPLE:
        case O_STATS:
            if (!synth)
                goto bad;
            *(c == O_STATS ? &o->stats : &o->resample) = 1;
            break;
        case O_DOCS:
            if (!synth)
                goto bad;
            num = &o->docs;
            what = "--docs";
            break;
        default:
            goto bad;
        }
        if (num && fds__cli_u64(optarg, num)) {
            fprintf(stderr, "%s: %s needs an unsigned integer\n", tool, what);
            return FDS_CLI_EXIT_USAGE;
        }
    }
    if (!synth && optind < argc)
        o->in_path = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "%s: bad argument '%s'\n", tool, argv[optind]);
        usage(stderr);
        return FDS_CLI_EXIT_USAGE;
    }
    if (!strcmp(o->format, "json") || !strcmp(o->format, "bulk")) {
        o->bulk = !strcmp(o->format, "bulk");
    } else {
        fprintf(stderr, "%s: --format must be json or bulk\n", tool);
        return FDS_CLI_EXIT_USAGE;
    }
    if (o->bulk) {
        const char *why = o->index ? fds__cli_index_name_error(o->index)
                                   : "--format bulk needs --index NAME";
        if (why) {
            fprintf(stderr, "%s: %s\n", tool, why);
            return FDS_CLI_EXIT_USAGE;
        }
    }
    return -1;
bad:
    fprintf(stderr, "%s: bad argument '%s'\n", tool, argv[optind - 1]);
    usage(stderr);
    return FDS_CLI_EXIT_USAGE;
}

/* The output stream: stdout when path is NULL, else the file at path
 * (created or truncated), fully buffered with FDS_CLI_IO_BUF; NULL after
 * perror() when it cannot be opened. */
static inline FILE *fds__cli_open_out(const char *path)
{
    FILE *out = path ? fopen(path, "wb") : stdout;
    if (!out) {
        perror(path);
        return NULL;
    }
    setvbuf(out, NULL, _IOFBF, FDS_CLI_IO_BUF);
    return out;
}

/* Write the _bulk action line (with '\n') for document `id` (0: no _id). */
static inline int fds__cli_action(FILE *out, const char *index, uint64_t id)
{
    if (id)
        return fprintf(out, "{\"index\":{\"_index\":\"%s\",\"_id\":\"%llu\"}}\n",
                       index, (unsigned long long)id) < 0 ? -1 : 0;
    return fprintf(out, "{\"index\":{\"_index\":\"%s\"}}\n", index) < 0 ? -1 : 0;
}

/* Format `rec` into *buf (grown as needed to the bound) and write it plus
 * '\n' to out.  Returns 0, or -1 on allocation/format/write failure. */
static inline int fds__cli_emit(FILE *out, const fds_logrec *rec, char **buf,
                                size_t *cap)
{
    size_t need = fds_logparse_json_bound(rec) + 1, len = 0;
    if (need > *cap) {
        char *nb = realloc(*buf, need);
        if (!nb) return -1;
        *buf = nb;
        *cap = need;
    }
    if (fds_logparse_json(rec, *buf, *cap - 1, &len)) return -1;
    (*buf)[len++] = '\n';
    return fwrite(*buf, 1, len, out) == len ? 0 : -1;
}

#endif
