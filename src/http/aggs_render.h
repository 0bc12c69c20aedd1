/*
 * aggs_render.h: reduced aggregation results (src/query/aggs/aggs.h) as the
 * `aggregations` member of Elasticsearch 8's search response.
 */
#ifndef FDS_AGGS_RENDER_H
#define FDS_AGGS_RENDER_H

#include <stdbool.h>

#include "aggs/aggs.h"
#include "fds_strbuf.h"
#include "search_render.h"

/*
 * Append `"aggregations":{...}` for the reduced root result `root` (from
 * fds_aggs_reduce) to b: each aggregation under its name, or under
 * "type#name" when `typed_keys` (Elasticsearch's typed_keys URL parameter:
 * sterms/lterms/dterms for terms by key type, the type name otherwise).
 * Numbers print as Java's Double.toString does ("1.0", "1.5E7"), missing
 * metric values as null; top_hits' hits as fds__agg_hits_put renders them
 * from `segs` and `hs` (both may be NULL: no `_id`, no `_source`).  Returns
 * 0 or a top_hits fetch's error (err filled); out of memory shows as
 * b->oom.
 */
int fds__aggs_render(fds_strbuf *b, const fds_agg_result *root, bool typed_keys,
                     const fds_search_segment *segs, const fds_hit_source *hs,
                     fds_err *err);

/* Java's Double.toString(d) into out (FDS_AGG_DOUBLE_STR bytes), "null"
 * for NaN and infinities (not JSON numbers).  Returns the length. */
#define FDS_AGG_DOUBLE_STR 40
size_t fds__java_double(double d, char *out);
/* "%.{p}e" of finite d with the least p (0..16) that strtod reads back
 * as d, into e[0..cap) (cap >= 32): the digits fds__java_double lays out. */
void fds__shortest_e(double d, char *e, size_t cap);

#endif
