/*
 * agg_kind.h: the shape of an aggregation type's registry entry
 * (src/query only; the table is dsl/registry.c).
 *
 * As Elasticsearch's SearchModule registers each aggregation with its
 * parser, its aggregator and its reduce, every type has one entry:
 * how its body parses (src/query/dsl), how it collects a batch
 * of docs (collect.c drives it) and how the shards' results of it merge
 * (reduce.c drives it); src/http keeps the matching render table.  The
 * parser sets each fds_agg's `kind` to its entry, and the code that runs
 * a tree calls through it, so no ladder over types remains outside the
 * table.
 */
#ifndef FDS_AGG_KIND_H
#define FDS_AGG_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggs/aggs.h"

struct cJSON;
struct fds__dsl_ctx;
typedef struct fds__aggs_run fds__aggs_run;
typedef struct fds__anode fds__anode;
typedef struct fds__aggs_red fds__aggs_red;

typedef struct fds__agg_kind {
    int type;          /* fds_agg_type */
    /* The body b of aggregation a (a->name, a->type, a->kind set) into
     * a's parameters; paths[0..FDS_AGG_ORDER_MAX) receive the metric
     * paths of a terms or histogram `order` (malloc'd; the caller checks
     * them against the subs and frees them).  0 or an FDS_E* code with
     * c->err filled. */
    int (*parse)(struct fds__dsl_ctx *c, fds_agg *a, const struct cJSON *b,
                 char **paths);
    /* docs[0..cnt) of the current segment, increasing, owned by the
     * bucket ordinals own[0..cnt) of the parent (NULL: all 0), into node
     * n's state; an error is kept in r->rc.  NULL: the root (collect.c). */
    void (*collect)(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                    const uint32_t *own, size_t cnt);
    /* The shard results in[0..n) of one aggregation merged into r (made
     * by the caller, r->agg set; freed here on error, R->rc set). */
    fds_agg_result *(*reduce)(fds__aggs_red *R, fds_agg_result *r,
                              fds_agg_result *const *in, size_t n);
} fds__agg_kind;

#endif
