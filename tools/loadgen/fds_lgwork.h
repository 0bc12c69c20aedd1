/*
 * fds_lgwork.h: what loadgen sends -- the request messages of a run.
 *
 * Why it exists: a benchmark of `_source` fetches is only fair if both sides
 * of an A/B test answer the same realistic queries.  The default workload is
 * random `match` queries, {"query":{"match":{FIELD:VALUE}},"size":10}, over
 * a few fields (service_name, method, error_code, url) whose values are
 * sampled *from the index itself* at start-up: loadgen fetches
 * `--sample-docs` documents with a match_all search and takes field values
 * from their `_source`, with repetition, so frequent values are queried as
 * often as they occur.  For `url`, half of the picks are the whole url and
 * half one alphanumeric token of it (what the standard analyzer indexes).
 * The pool of queries is a pure function of the sampled documents and
 * `--seed` (splitmix64), so two runs with the same seed send the same
 * queries in the same order per thread.  Each field is a request class of
 * its own ("match FIELD"; with at most FDS_LGWORK_MAX_CLASSES fields), so
 * the report has a latency row per field.
 *
 * The dashboard workload (fds_lgwork_dashboard) sends what Kibana's
 * Discover and Lens and Grafana's Elasticsearch data source send when a
 * user looks at logs, with time windows drawn over the index's time range;
 * see fds_lgdash.c for its classes and weights.
 *
 * Alternatives: a file with one JSON request body per line, or a fixed
 * method and path (trivial endpoints).
 */
#ifndef FDS_LGWORK_H
#define FDS_LGWORK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "fds_httpc.h"

#define FDS_LGWORK_MAX_FIELDS 32
#define FDS_LGWORK_MAX_BODIES 1000000 /* lines read from --bodies */
#define FDS_LGWORK_DEFAULT_FIELDS "service_name,method,error_code,url"
#define FDS_LGWORK_MAX_CLASSES 16 /* = FDS_LG_MAX_CLASSES */
#define FDS_LGWORK_CLASS_NAME 64  /* bytes of a class name, NUL included */

/* A set of complete HTTP request messages (owned; free with fds_lgwork_free).
 * With nclasses > 0, classes[i] (0..nclasses-1) is the class of msgs[i],
 * named class_names[k], with class_share[k] the share of
 * the messages in class k; with nclasses 0 there are no classes. */
typedef struct fds_lgwork {
    char **msgs;
    size_t *lens;
    unsigned char *classes;
    size_t n;
    int nclasses;
    char class_names[FDS_LGWORK_MAX_CLASSES][FDS_LGWORK_CLASS_NAME];
    double class_share[FDS_LGWORK_MAX_CLASSES];
    size_t nvalues;      /* sampled values, for the report */
    char **tmsgs;        /* fds_lgwork_for_targets: ntargets x n messages, or NULL */
    size_t *tlens;
    int ntargets;
    char description[512];
} fds_lgwork;

/*
 * Random match queries on `index`.  `fields` is comma-separated; `sample_docs`
 * documents are fetched from the server `t` (fds_httpc.h) to
 * sample values; `pool` query bodies are generated with `seed`; each asks for
 * `size` hits.  The server is `t` (its Host header goes in the messages). 0 or an FDS_E* code with a
 * sentence in `msg`.
 */
int fds_lgwork_match(fds_lgwork *w, const fds_httpc_target *t, const char *index, const char *fields,
                     int sample_docs, size_t pool, uint64_t seed, int size, char *msg,
                     size_t msglen);

/*
 * The dashboard workload on `index` (fds_lgdash.c): reads the index's
 * @timestamp range (min/max aggregations) and `sample_docs` documents
 * spread over it, then makes `pool` bodies of six classes by weight with
 * `seed`; Discover asks for `hits` documents.  0 or an FDS_E* code with a
 * sentence in `msg`.
 */
int fds_lgwork_dashboard(fds_lgwork *w, const fds_httpc_target *t, const char *index, int sample_docs,
                         size_t pool, uint64_t seed, int hits, char *msg, size_t msglen);

/* One POST `path` per non-empty line of `file` (each line a request body). */
int fds_lgwork_bodies(fds_lgwork *w, const char *host_header, const char *path, const char *file,
                      char *msg, size_t msglen);

/* A single fixed request without body (e.g. "GET /"). */
int fds_lgwork_fixed(fds_lgwork *w, const char *host_header, const char *method, const char *path);

/*
 * The messages of `w` as sent to each of the `nt` servers `t` of a cluster:
 * w->tmsgs[k * w->n + i] is message i with its Host header replaced by
 * t[k].host_header and t[k].auth (the Authorization line, if any) added
 * after it; w->tlens likewise.  Owned by w (fds_lgwork_free).  0,
 * FDS_ENOMEM, or FDS_EINVAL for a message without a Host header.
 */
int fds_lgwork_for_targets(fds_lgwork *w, const fds_httpc_target *t, int nt);

void fds_lgwork_free(fds_lgwork *w);

#endif
