/*
 * fds_lgreport.h: loadgen's reports -- a run's result as JSON (cJSON), the
 * A/B summary (means over rounds, ratio B/A), Markdown tables and the SVG
 * charts, and `loadgen compare`.
 *
 * JSON schema of one side (a single run's "result", or "a"/"b" of an A/B):
 *   index, codec (null if unknown), store_bytes (null if unknown),
 *   qps, ok, errors, error_rate,
 *   errors_by_kind {status, timeout, connect, short_read, protocol},
 *   throughput {min, median, mean, max} (per 1 s bucket, req/s),
 *   latency_ms {mean, p50, p90, p99, p99_9, p99_99, max},
 *   service_time_ms {same keys},
 *   cpu_percent (server process, 100 = one core; null if not measured),
 *   system_cpu_percent, background_cpu_percent (null if no background),
 *   qps_per_cpu_percent, qps_per_system_cpu_percent, elapsed_s, sent,
 *   max_backlog (open loop),
 *   query_share, fetch_share (ab: share of the server's search time in the
 *   query and fetch phase, from GET /{index}/_stats/search before and after
 *   each round: fetch_share = dfetch_time / (dquery_time + dfetch_time);
 *   null when the server has no such timers), cat_store_size (ab: the
 *   store.size _cat/indices shows).
 *   classes (with a classed workload: the dashboard's classes, or one
 *   "match FIELD" per field): {NAME: {share (of the pool of bodies), ok,
 *   errors, status_errors, error_rate, latency_ms {mean, p50, p90, p99,
 *   p99_9, max}}} in the workload's order, same window rules as the totals.
 * An A/B side also has "rounds": [one such object per round].  In an A/B
 * file, the side values are the arithmetic means over rounds (errors and
 * ok: sums), and "ratio" holds B/A for every numeric metric.
 */
#ifndef FDS_LGREPORT_H
#define FDS_LGREPORT_H

#include <cjson/cJSON.h>

#include "fds_lg.h"

/* A side object for one run's result (new cJSON object, caller deletes). */
cJSON *fds_lgreport_side(const fds_lg_result *r, const char *index);

/* Add the "classes" object of r's r->nclasses classes to `side`, class k
 * named names[k] with share[k] of the pool; nothing without classes. */
void fds_lgreport_add_classes(cJSON *side, const fds_lg_result *r, const char *const *names,
                              const double *share);

/* Mean of several side objects (rounds), keeping them under "rounds". */
cJSON *fds_lgreport_mean(cJSON *const *rounds, int n, const char *index);

/* {"definition":"b/a", metric: b/a ...} for every numeric metric of a side. */
cJSON *fds_lgreport_ratio(const cJSON *a, const cJSON *b);

/* Markdown comparison table of two sides, with a ratio column (second /
 * first); `title_a`/`title_b` head the columns.  Returns malloc'ed text. */
char *fds_lgreport_table(const cJSON *a, const cJSON *b, const char *title_a,
                         const char *title_b);

/* Shown instead of a verdict when the per-round ratios spread wider than
 * the effect: their min-max range reaches 1 (min <= 1 <= max), so at least
 * one round does not show the difference the means show. */
#define FDS_LGREPORT_UNCLEAR "spread wider than effect"

/* The side run k-th (0-based) in round `round` (0-based) of n sides: rounds
 * alternate direction, A B C, C B A, A B C ..., so a linear drift over time
 * weighs every side alike over an even number of rounds. */
int fds_lgreport_order(int round, int n, int k);

/* Ratios of `ref` against `side` (ref / side) for the per-round metrics
 * (qps, latency mean/p50/p99, CPU, QPS per CPU, shares), each as
 * {ratio, min, max, verdict}: ratio of the means, min/max of the per-round
 * ratios, verdict "clear" or FDS_LGREPORT_UNCLEAR; and {ratio} for
 * store_bytes and stored_fields_bytes.  New object, caller deletes. */
cJSON *fds_lgreport_spread(const cJSON *ref, const cJSON *side);

/* Markdown table of n sides (titles[i] heads column i) with one ratio
 * column per non-reference side: sides[ref] / sides[i] and its min-max over
 * rounds from spreads[i] (spreads[ref] unused).  malloc'ed text. */
char *fds_lgreport_table_n(const cJSON *const *sides, int n, int ref,
                           const cJSON *const *spreads, const char *const *titles);

/* Markdown table of every round of every side, in the order they ran,
 * with the _cat/nodes load_1m and ram.percent read before each.  malloc'ed. */
char *fds_lgreport_rounds_table(const cJSON *const *sides, int n);

/* One quotable sentence, ref against side, from their spread (see
 * fds_lgreport_spread): QPS per server CPU %, QPS and stored-fields disk;
 * a ratio without a clear verdict is said to be within the spread.
 * malloc'ed text. */
char *fds_lgreport_sentence(const cJSON *ref, const cJSON *side, const cJSON *spread);

/* Markdown summary of one side.  malloc'ed text. */
char *fds_lgreport_single(const cJSON *side);

/* Write the A/B charts of n sides (1..FDS_SVG_MAX_SERIES): per round
 * <prefix>_qps_rounds.svg (QPS), <prefix>_latency_rounds.svg (mean latency),
 * <prefix>_cpu_rounds.svg (QPS per server CPU %); over all rounds
 * <prefix>_latency.svg (percentiles) and <prefix>_qps_per_cpu.svg.
 * 0, FDS_EINVAL for n out of range, or FDS_EIO. */
int fds_lgreport_svgs_n(const char *prefix, const cJSON *const *sides, int n);

/* fds_lgreport_svgs_n() of the two sides a, b. */
int fds_lgreport_svgs(const char *prefix, const cJSON *a, const cJSON *b);

/* Write a cJSON document to `path` (pretty), creating its parent directory.
 * 0 or FDS_EIO. */
int fds_lgreport_write_json(const char *path, const cJSON *doc);

/* Write text to a file, creating the parent directory.  0 or FDS_EIO. */
int fds_lgreport_write_text(const char *path, const char *text);

/* `loadgen compare A.json B.json`: prints tables to stdout; 0 or an FDS_E*
 * code with a message on stderr. */
int fds_lgreport_compare(const char *path_a, const char *path_b);

#endif
