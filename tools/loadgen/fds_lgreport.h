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
 *   max_backlog (open loop).
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

/* Mean of several side objects (rounds), keeping them under "rounds". */
cJSON *fds_lgreport_mean(cJSON *const *rounds, int n, const char *index);

/* {"definition":"b/a", metric: b/a ...} for every numeric metric of a side. */
cJSON *fds_lgreport_ratio(const cJSON *a, const cJSON *b);

/* Markdown comparison table of two sides, with a ratio column (second /
 * first); `title_a`/`title_b` head the columns.  Returns malloc'ed text. */
char *fds_lgreport_table(const cJSON *a, const cJSON *b, const char *title_a,
                         const char *title_b);

/* Markdown summary of one side.  malloc'ed text. */
char *fds_lgreport_single(const cJSON *side);

/* Write the three A/B charts: <prefix>_qps_rounds.svg, <prefix>_latency.svg,
 * <prefix>_qps_per_cpu.svg.  0 or FDS_EIO. */
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
