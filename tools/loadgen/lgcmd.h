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

#define LG_PROBE_TIMEOUT_MS 5000        /* GET / of each node before the run */
#define LG_NODE_SAMPLE_S 1.0           /* _nodes/stats of each node once a second */
#define LG_PASSWORD_ENV "LOADGEN_PASSWORD" /* --user's password, else FIELDSTORE_PASSWORD */
#define LG_PASSWORD_ENV2 "FIELDSTORE_PASSWORD"
#define LG_API_KEY_ENV "LOADGEN_API_KEY"   /* --api-key without --api-key-file */
#define LG_SECRET_MAX 512              /* bytes of a password or API key */

/* Exit status of ab when the report was written but some rounds were
 * marked (a node failed during them) and left out of the means. */
#define LG_EXIT_MARKED 3

/* Everything the command line sets, and the targets derived from it. */
typedef struct fds__lgcmd_opts {
    const char *host;                  /* --host: one, or a list h1:p,h2:p,... */
    int port;                          /* for an element without its own port */
    const char *cacert;
    int insecure;
    const char *user, *password_file;
    int api_key;                       /* --api-key given */
    const char *api_key_file;
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
    fds_httpc_target targets[FDS_LG_MAX_TARGETS]; /* --host's, in order */
    int ntargets;
    fds_httpc_tls *tls;                /* with an https:// target, else NULL */
    char auth[FDS_HTTPC_MAX_AUTH];     /* "Authorization: ...\r\n" or "" */
} fds__lgcmd_opts;

/* What loadgen knows of one node of the cluster (lgcmd_nodes.c). */
typedef struct fds__lgcmd_node {
    char name[128];                    /* GET /: name */
    char cluster[128];                 /* GET /: cluster_name */
    char version[64];                  /* GET /: version.number */
    double processors;                 /* GET /_nodes/_local: os.available_processors; 0 unknown */
} fds__lgcmd_node;

/* A sampler of every node's _nodes/stats during one measurement. */
typedef struct fds__lgcmd_sampler fds__lgcmd_sampler;

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

/* Parse the options after the command word (`ab`: ab defaults) into `o`,
 * resolve the targets and read the credentials (file or environment);
 * `o` keeps pointers into argv.  Returns LGCMD_GO, or the process exit
 * status: 0 after --help, 2 after a message on stderr. */
int fds__lgcmd_parse(fds__lgcmd_opts *o, int ab, int argc, char **argv);

/* Free what fds__lgcmd_parse() made (the TLS settings). */
void fds__lgcmd_opts_free(fds__lgcmd_opts *o);

/* --- lgcmd_nodes.c: the nodes of a cluster --- */

/* GET / of every target: each answers 2xx, else a message naming the node
 * and what went wrong (refused, a 401, a certificate that does not
 * verify); fills nodes[] (name, cluster, version, processors; empty for a
 * node that failed).  0, or 1 after a message for each failed node. */
int fds__lgcmd_probe(const fds__lgcmd_opts *o, fds__lgcmd_node *nodes);

/* The "cluster" object of a result: its name (the first node's; a warning
 * if nodes disagree), the nodes (url, name, cluster, version, processors)
 * and, for each of the `n` indices, index.codec as each node reports it
 * (GET /{index}/_settings).  New; caller owns. */
cJSON *fds__lgcmd_cluster_json(const fds__lgcmd_opts *o, const fds__lgcmd_node *nodes,
                               const char *const *indices, int n);

/* Start sampling GET /_nodes/_local/stats/os,process of every node once a
 * LG_NODE_SAMPLE_S from `warmup` seconds on for `duration` seconds (the
 * measured window).  NULL when it cannot start (then no node CPU). */
fds__lgcmd_sampler *fds__lgcmd_sampler_start(const fds__lgcmd_opts *o,
                                             const fds__lgcmd_node *nodes, double warmup,
                                             double duration);

/* Stop the sampler and add to `side`: "nodes" (per node: url, name,
 * process_cpu_percent and os_cpu_percent as the node reports them, means
 * of the samples; cpu_percent from process.cpu.total_in_millis over the
 * window, 100 = one core; samples) and "nodes_cpu" (the sums).  Without
 * --server-pid, cpu_percent and qps_per_cpu_percent of the side become the
 * nodes' summed cpu_percent.  Frees s (NULL-safe: adds nothing). */
void fds__lgcmd_sampler_finish(fds__lgcmd_sampler *s, const fds__lgcmd_opts *o, cJSON *side);

/* Why a measurement must not be averaged in: a node with failed connects
 * (or TLS handshakes), connections closed mid-response, timeouts,
 * malformed answers, or not one success.  A new string naming each such
 * node and what happened, or NULL when every node answered. */
char *fds__lgcmd_mark_reason(const fds__lgcmd_opts *o, const fds_lg_result *r);

/* The means over the n rounds of each node's CPU ("nodes") and of their
 * sums ("nodes_cpu"), added to `side`. */
void fds__lgcmd_nodes_mean(cJSON *side, cJSON *const *rounds, int n);

/* The report's cluster section as Markdown from an ab document: the
 * cluster's name, its nodes with index.codec per index, the server CPU
 * per node and summed for each side, and the marked rounds.  New string
 * (caller frees), or NULL on no memory. */
char *fds__lgcmd_cluster_md(const cJSON *doc);

/* The per-target counts of r as a JSON array (new; caller owns). */
cJSON *fds__lgcmd_targets_json(const fds__lgcmd_opts *o, const fds_lg_result *r);

/* --- lgcmd_server.c: what loadgen reads from the server --- */

/* --server-pid, else 0: the server CPU then comes from every node's
 * _nodes/stats (fds__lgcmd_sampler_start). */
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

/* o.k = v, or null when v is NAN. */
void fds__lgcmd_num_or_null(cJSON *o, const char *k, double v);

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
