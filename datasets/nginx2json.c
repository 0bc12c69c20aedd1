/*
 * nginx2json: convert an nginx/Apache combined access log into fieldstore's
 * 17-field JSON documents (DESIGN.md §2), one per line, or into Elasticsearch
 * _bulk NDJSON (an action line, then the document).
 *
 * Why it exists: the bundled real sample (datasets/nginx-zanbil-access-10k.log)
 * is the input of the demo, the end-to-end tests and the codec benchmarks;
 * they all need the same documents, so conversion is one tool with stable
 * output (same input + options -> same bytes; see logparse.h for the rules).
 *
 * Contract with users: every input line is either converted or reported on
 * stderr as "nginx2json: line N: REASON (byte COL)" and counted; the run
 * ends with "converted N lines, M unparsable" on stderr.  Exit status 0 when
 * every line converted, 3 when some were unparsable (the others are still
 * written), 2 on a usage or I/O error.  Line numbers are 1-based and count
 * every line of the input, so in bulk mode _id N is the document of line N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "logparse.h"

#define FDS_NGINX2JSON_SEED_DEFAULT 1

static void usage(FILE *f)
{
    fputs(
        "usage: nginx2json [options] [FILE|-]\n"
        "Convert an nginx/Apache combined access log (optionally with a trailing\n"
        "\"$http_x_forwarded_for\" field) to fieldstore JSON documents.\n"
        "\n"
        "  --format json|bulk  json: one document per line (default);\n"
        "                      bulk: Elasticsearch _bulk NDJSON (action + doc)\n"
        "  --index NAME        index of the bulk action lines (required for bulk)\n"
        "  --no-ids            bulk: leave _id out (default: _id = line number)\n"
        "  --host NAME         value of the host field (default www.zanbil.ir)\n"
        "  --seed N            seed of request_time, upstream_response_time and\n"
        "                      request_id (uint64, default 1)\n"
        "  -o FILE             write to FILE instead of stdout\n"
        "  -h, --help          this text\n"
        "\n"
        "Reads FILE, or stdin when FILE is - or absent.  Unparsable lines are\n"
        "reported on stderr with their line number and skipped; the summary\n"
        "\"converted N lines, M unparsable\" ends stderr.\n"
        "Exit status: 0 all lines converted, 3 some unparsable, 2 usage/I/O error.\n",
        f);
}

int main(int argc, char **argv)
{
    fds__cli_opts o = {.format = "json", .host = FDS_LOGPARSE_HOST_DEFAULT,
                       .seed = FDS_NGINX2JSON_SEED_DEFAULT};
    int ex = fds__cli_parse(argc, argv, "nginx2json", 0, usage, &o);
    if (ex >= 0)
        return ex;
    const char *index = o.index, *host = o.host, *in_path = o.in_path;
    const char *out_path = o.out_path;
    uint64_t seed = o.seed;
    int no_ids = o.no_ids, bulk = o.bulk;

    FILE *in = stdin;
    if (in_path && strcmp(in_path, "-")) {
        in = fopen(in_path, "rb");
        if (!in) {
            perror(in_path);
            return FDS_CLI_EXIT_USAGE;
        }
    }
    setvbuf(in, NULL, _IOFBF, FDS_CLI_IO_BUF);
    FILE *out = fds__cli_open_out(out_path);
    if (!out)
        return FDS_CLI_EXIT_USAGE;

    char *line = NULL, *buf = NULL;
    size_t line_cap = 0, buf_cap = 0;
    ssize_t n;
    uint64_t line_no = 0, converted = 0, bad = 0;
    int io_error = 0;
    while ((n = getline(&line, &line_cap, in)) >= 0) {
        line_no++;
        size_t len = (size_t)n;
        if (len && line[len - 1] == '\n') len--;
        fds_logrec rec;
        const char *why = NULL;
        size_t col = 0;
        if (fds_logparse_line(line, len, &rec, &why, &col)) {
            fprintf(stderr, "nginx2json: line %llu: %s (byte %zu)\n",
                    (unsigned long long)line_no, why ? why : "unparsable",
                    col + 1);
            bad++;
            continue;
        }
        fds_logparse_derive(&rec, host, seed, line_no);
        if (bulk && fds__cli_action(out, index, no_ids ? 0 : line_no)) {
            io_error = 1;
            break;
        }
        if (fds__cli_emit(out, &rec, &buf, &buf_cap)) {
            io_error = 1;
            break;
        }
        converted++;
    }
    if (ferror(in)) {
        fprintf(stderr, "nginx2json: read error on %s\n",
                in_path ? in_path : "stdin");
        io_error = 1;
    }
    if (fflush(out) || ferror(out)) io_error = 1;
    if (out != stdout && fclose(out)) io_error = 1;
    if (in != stdin) fclose(in);
    free(line);
    free(buf);
    fprintf(stderr, "converted %llu lines, %llu unparsable\n",
            (unsigned long long)converted, (unsigned long long)bad);
    if (io_error) {
        fprintf(stderr, "nginx2json: write error on %s\n",
                out_path ? out_path : "stdout");
        return FDS_CLI_EXIT_USAGE;
    }
    return bad ? FDS_CLI_EXIT_UNPARSABLE : FDS_CLI_EXIT_OK;
}
