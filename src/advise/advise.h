/*
 * advise.h: `fieldstore advise`, the stored-fields codec question answered
 * on the user's own documents.
 *
 * Why it exists: which index.codec, zstd level, block size and dictionary
 * size suit a log is a measurement, not a guess.  `advise` reads a sample of
 * the user's log (nginx/Apache combined, converted exactly as nginx2json
 * converts it) or NDJSON documents, encodes it with every stored-fields
 * codec of src/codec (the same fds_block_encode / fds_block_decode_doc the
 * store calls, blocks cut as segment.c cuts them, dictionaries trained on
 * the first documents as dict_train.c trains them), and reports size,
 * compress and decode speed and fetch latency per configuration, the
 * Pareto front of stored bytes against one-doc fetch time, and the
 * `PUT /{index}` settings it recommends.
 *
 * Internal to src/advise: the CLI (advise_cli.c) is the only entry point
 * other code calls (fds_advise_main).
 */
#ifndef FDS_ADVISE_H
#define FDS_ADVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "codec.h"

/* Named limits and defaults. */
#define FDS_ADVISE_TIME_DEFAULT 60.0          /* seconds for the whole grid */
#define FDS_ADVISE_SAMPLE_DEFAULT (8u << 20)  /* bytes of documents measured */
#define FDS_ADVISE_SAMPLE_CHUNKS 8            /* runs of documents the sample is cut in */
#define FDS_ADVISE_DOCS_BIG 10000000ull       /* the second projection */
#define FDS_ADVISE_MAX_ROWS 32
#define FDS_ADVISE_FETCH_MIN 200              /* one-doc fetches per row, at least */
#define FDS_ADVISE_FETCH_MAX 20000            /* ... and at most */
#define FDS_ADVISE_HITS 10                    /* docs of a "ten-hit" fetch */
#define FDS_ADVISE_BLOCK_INDEX_ENTRY 16u      /* bytes per block in the .fdt index (segment.c) */
#define FDS_ADVISE_EXIT_USAGE 2               /* bad option or bad input */
#define FDS_ADVISE_EXIT_FAIL 1                /* a codec call failed (a bug) */

/* The sample: documents laid end to end (the `_source` bytes the store
 * would compress), with lengths and offsets. */
typedef struct fds__adv_docs {
    uint8_t *bytes;
    size_t len, cap;
    uint32_t *lens;
    size_t *offs;      /* offs[i] = start of doc i; offs[n] = len */
    size_t n, ncap;
} fds__adv_docs;

typedef enum fds__adv_kind { FDS_ADV_LOG = 1, FDS_ADV_NDJSON, FDS_ADV_BULK } fds__adv_kind;

/* What was read from the input file. */
typedef struct fds__adv_input {
    fds__adv_kind kind;
    fds__adv_docs docs;         /* the sample */
    uint64_t lines_read;        /* non-empty lines examined for the sample */
    uint64_t unparsable;        /* of those, lines that gave no document */
    uint64_t docs_total;        /* documents of the whole input (see estimated) */
    uint64_t last_sampled_line; /* 1-based line number of the sample's last line */
    bool estimated;             /* docs_total extrapolated past the sample */
    uint64_t file_bytes;
} fds__adv_input;

/*
 * Read `path`: the kind by content (first non-empty line starts with '{':
 * NDJSON, and _bulk NDJSON when that line is an action such as
 * {"index":{...}}; otherwise an access log, each line converted by
 * fds_logparse with nginx2json's defaults), documents up to `sample_bytes`
 * in FDS_ADVISE_SAMPLE_CHUNKS runs spread over the file, the other lines
 * only counted.  Returns 0, or FDS_EIO (cannot
 * open/read), FDS_EINVAL (empty, or no line gave a document) with the
 * reason in `why` (why_cap bytes), FDS_ENOMEM.
 */
int fds__adv_read(const char *path, size_t sample_bytes, fds__adv_input *in,
                  char *why, size_t why_cap);
void fds__adv_input_free(fds__adv_input *in);

/* One configuration of the grid and what was measured for it.  Times are
 * microseconds, rates 10^6 raw bytes per second of thread CPU time. */
typedef struct fds__adv_row {
    char name[48];          /* "ZSTD level 3", "best_compression", ... */
    char variant[96];       /* block size, dictionary, sub-blocks */
    fds_codec_params p;
    size_t dict_size;       /* requested dictionary capacity, bytes (0: none) */
    bool settable;          /* reachable with PUT /{index} settings */
    char settings[256];     /* that body ("" when not settable) */
    bool is_default;        /* index.codec ZSTD with every default */
    /* measured */
    bool measured;
    size_t raw_bytes, stored_bytes, nblocks, dict_bytes;
    double ratio;           /* raw_bytes / stored_bytes */
    double bytes_per_doc;   /* (stored_bytes + 16 * nblocks) / docs */
    double dict_train_ms;
    double compress_mb_s, compress_cpu_us_per_doc, decode_mb_s;
    double fetch1_p50, fetch1_p99, fetch10_p50, fetch10_p99;
    size_t fetches;
    bool pareto;
} fds__adv_row;

typedef struct fds__adv_grid {
    fds__adv_row rows[FDS_ADVISE_MAX_ROWS];
    size_t nrows, nmeasured;
    bool stopped_early;     /* --time ran out before the last row */
    unsigned rounds;        /* visits of every row (the first builds it) */
    double seconds;         /* wall time of the measurement */
    uint64_t seed;
} fds__adv_grid;

/* The grid of configurations, settable rows first (fills g->rows). */
void fds__adv_grid_init(fds__adv_grid *g);

/*
 * Measure every row of `g` on docs until `deadline` (CLOCK_MONOTONIC
 * seconds): a first round row by row (rows not reached stay measured =
 * false and g->stopped_early is set), then rounds over every row while
 * time is left; rates are the fastest pass of all rounds, fetch
 * percentiles are over the samples of all rounds.  Progress lines go to stderr unless quiet.  Each encoded block is
 * decoded and compared with its documents, and each fetched document with
 * its bytes.  Returns 0, or the codec's error code (message on stderr).
 */
int fds__adv_measure(fds__adv_grid *g, const fds__adv_docs *docs,
                     double deadline, bool quiet);

/* Mark the Pareto front (stored bytes per doc against one-doc fetch p50)
 * of the measured rows: a row is on it when no other measured row is at
 * least as good on both and better on one. */
void fds__adv_pareto(fds__adv_grid *g);

/* The recommended row (a settable measured row; see advise_report.c for the
 * rule) or -1 when no settable row was measured; the sentence that
 * justifies it in `why` (why_cap bytes). */
int fds__adv_recommend(const fds__adv_grid *g, char *why, size_t why_cap);

/* Outputs.  `projections` are the --docs values (n of them). */
typedef struct fds__adv_report {
    const char *input_path;
    const fds__adv_input *in;
    const fds__adv_grid *g;
    const uint64_t *projections;
    size_t nproj;
    int rec;                /* recommended row, -1 none */
    const char *why;
    const char *host;       /* for the loadgen line */
    int port;
    double time_budget;
} fds__adv_report;

/* Projected stored-fields bytes of row r at ndocs documents: blocks and
 * their index entries scaled per document, plus the dictionary once. */
double fds__adv_project(const fds__adv_row *r, uint64_t ndocs);
/* The table, recommendation and loadgen line, on f. */
void fds__adv_print(FILE *f, const fds__adv_report *rep);
/* advice.json at path.  0 or FDS_EIO / FDS_ENOMEM. */
int fds__adv_write_json(const char *path, const fds__adv_report *rep);
/* The Pareto SVG at path.  0 or FDS_EIO. */
int fds__adv_write_svg(const char *path, const fds__adv_report *rep);

/* `fieldstore advise ARGS`: argv[0] is "advise".  Returns the exit status. */
int fds_advise_main(int argc, char **argv);

#endif
