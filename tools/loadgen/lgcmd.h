/*
 * lgcmd.h: the `loadgen` command's own internal header -- its options and
 * the steps its files share (the command line in lgcmd_cli.c, what it reads
 * from the server in lgcmd_server.c, a measurement's setup and common record
 * in lgcmd_measure.c, `run` in lgcmd_run.c, `ab` in lgcmd_ab.c and its report
 * in lgcmd_abreport.c).  Not part of fds_loadgen_core: the engine, the
 * workload and the reports there know nothing of the command line.
 */
#ifndef FDS_LGCMD_H
#define FDS_LGCMD_H

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "fds_lg.h"
#include "fds_lgwork.h"
#include "fds_sysstat.h"

#define LG_INFO_TIMEOUT_MS 10000       /* _settings, _stats, _nodes/stats, _cat/nodes */
#define LG_DEFAULT_POOL 1000           /* distinct query bodies generated */
#define LG_DEFAULT_SAMPLE_DOCS 500     /* documents fetched to sample values */
#define LG_DEFAULT_AB_JSON "results/ab.json"
#define LG_MAX_SIDES 8                 /* ab --index sides (FDS_SVG_MAX_SERIES) */
#define LG_MAX_ROUNDS 32
#define LG_DASHBOARD_HITS 500        /* Discover's default sample size */

/* Everything the command line sets, and the loopback target derived from it. */
typedef struct fds__lgcmd_opts {
    const char *host;
    int port;
    const char *index;
    int threads, clients;
    double rate, duration, warmup, timeout;
    unsigned long long max_requests;
    const char *fields;
    unsigned long long seed;
    int sample_docs;
    long pool;
    int size;
    int size_set;                      /* --size given (dashboard: else Discover's 500) */
    const char *workload;              /* "match" or "dashboard" */
    const char *bodies, *method, *path;
    long server_pid;
    const char *background;
    const char *json, *md, *svg_prefix;
    const char *dump_queries;
    int quiet;
    /* ab */
    const char *a, *b;
    const char *indices[LG_MAX_SIDES]; /* ab: every --index, in order */
    int nindices;
    int rounds;
    double round_duration;
    /* derived */
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char host_header[300];
} fds__lgcmd_opts;

/* The sides of an ab run: names, the reference side (every ratio is
 * reference / side) and the pair kept as "a"/"b" (ratio b/a): --a/--b
 * give A, B with B the reference, as before; --index I1 I2 ... give the
 * first as reference, a = the last, b = the first. */
typedef struct fds__lgcmd_abplan {
    int n, ref, a, b;
    const char *names[LG_MAX_SIDES];
} fds__lgcmd_abplan;

/* --- lgcmd_cli.c: the command line --- */

/* The help text on `f`. */
void fds__lgcmd_usage(FILE *f);

/* fds__lgcmd_parse() found nothing that ends the process */
#define LGCMD_GO (-1)

/* Parse the options after the command word (`ab`: ab defaults) into `o`
 * and resolve the loopback target; `o` keeps pointers into argv.  Returns
 * LGCMD_GO, or the process exit status: 0 after --help, 2 after a message
 * on stderr. */
int fds__lgcmd_parse(fds__lgcmd_opts *o, int ab, int argc, char **argv);

/* --- lgcmd_server.c: what loadgen reads from the server --- */

/* --server-pid, else nodes.*.process.id of GET /_nodes/stats when /proc
 * shows it; 0 (CPU not measured) after a message. */
pid_t fds__lgcmd_resolve_pid(const fds__lgcmd_opts *o);

/* Add codec, settings, store_bytes, stored_fields_bytes and cat_store_size
 * of `index` to `side`. */
void fds__lgcmd_add_index_info(const fds__lgcmd_opts *o, cJSON *side, const char *index);

/* GET /_cat/nodes as JSON; a server that answers in _cat's text table
 * instead is kept as that text; no answer (or not 2xx) gives null. */
cJSON *fds__lgcmd_cat_nodes(const fds__lgcmd_opts *o);

/* The server's total query and fetch phase time of `index` in microseconds
 * from GET /{index}/_stats/search; NAN in both without such timers. */
void fds__lgcmd_search_timers(const fds__lgcmd_opts *o, const char *index, double *q_us,
                              double *f_us);

/* --- lgcmd_measure.c: one measurement's setup and common record --- */

/* Set by SIGINT/SIGTERM once fds__lgcmd_catch_signals() ran: the engine
 * stops the running measurement, ab stops after it. */
extern volatile sig_atomic_t fds__lgcmd_interrupted;

/* Install the SIGINT and SIGTERM handlers. */
void fds__lgcmd_catch_signals(void);

/* The request messages for `index` (or --bodies / --path), written to
 * --dump-queries too.  0, or an FDS_E* code after a message. */
int fds__lgcmd_build_workload(const fds__lgcmd_opts *o, const char *index, fds_lgwork *w);

/* The engine configuration of one measurement of `duration` seconds. */
void fds__lgcmd_fill_cfg(const fds__lgcmd_opts *o, fds_lg_config *c, const fds_lgwork *w,
                         double duration, pid_t pid, fds_sysstat_bg *bg, const char *label);

/* The per-class results of r under `side`, named as w names them. */
void fds__lgcmd_add_classes(cJSON *side, const fds_lg_result *r, const fds_lgwork *w);

/* The "config" object of a result document (new; caller owns). */
cJSON *fds__lgcmd_config_json(const fds__lgcmd_opts *o, const char *mode);

/* The 1, 5 and 15 minute load averages, or null (new; caller owns). */
cJSON *fds__lgcmd_loadavg_json(void);

/* The background load's tool, workers, load and CPU, or null without one. */
cJSON *fds__lgcmd_background_json(fds_sysstat_bg *bg, double cpu_percent);

/* The items of a result document's "system" object, in this order */
#define LGCMD_SYS_ITEMS 5 /* loadavg before/after, _cat/nodes before/after, background */

/* A new result document with its "tool", "schema_version" and "mode". */
cJSON *fds__lgcmd_document(const char *mode, int schema_version);

/* Close `doc` with its "system" object: the LGCMD_SYS_ITEMS items (taken
 * over) and the server pid. */
void fds__lgcmd_add_system(cJSON *doc, cJSON *sys_items[LGCMD_SYS_ITEMS], pid_t pid);

/* The one-line summary of a measurement on stderr. */
void fds__lgcmd_print_summary(const fds_lg_result *r, const char *label);

/* Write text to path; 0, or 1 after saying why on stderr. */
int fds__lgcmd_write_text(const char *path, const char *text);

/* --- the commands: exit status 0, 1 (failed or a file not written), 2 --- */

int fds__lgcmd_run(fds__lgcmd_opts *o);  /* lgcmd_run.c */
int fds__lgcmd_ab(fds__lgcmd_opts *o);   /* lgcmd_ab.c */

/* --- lgcmd_abreport.c: the A/B document and report --- */

/* The A/B JSON document (takes ownership of side[], spread[] and sys_items[]:
 * loadavg before/after, _cat/nodes before/after, background). */
cJSON *fds__lgcmd_ab_document(const fds__lgcmd_opts *o, const fds__lgcmd_abplan *p,
                              cJSON **side, cJSON **spread, int done,
                              cJSON *sys_items[LGCMD_SYS_ITEMS], pid_t pid);

/* Print the A/B tables and write the JSON, the SVG charts and (with --md)
 * the Markdown report.  Returns 0, or 1 when a file could not be written. */
int fds__lgcmd_ab_report(const fds__lgcmd_opts *o, const fds__lgcmd_abplan *p, cJSON *doc,
                         int done);

#endif
