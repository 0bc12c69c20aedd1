/*
 * json_out.h: reshaping a JSON answer for ?filter_path and ?pretty
 * (internal to src/http).
 */
#ifndef FDS_HTTP_JSON_OUT_H
#define FDS_HTTP_JSON_OUT_H

#include <stddef.h>

/* Keep only the parts of the JSON text `in` (`n` bytes, valid JSON) named by
 * Elasticsearch's `filter_path` (comma-separated dotted paths; a segment
 * may hold `*` wildcards, and `**` matches any number of levels), then
 * drop the parts named by its exclusions (paths with a leading `-`; with
 * no inclusion, everything else is kept).  Values are copied byte for
 * byte; objects and arrays the filter leaves empty are dropped (an
 * exclusion keeps one that was empty already, as Elasticsearch does), and
 * nothing left gives `{}`.  At most FDS_FILTER_PATHS_MAX paths of each
 * kind count.  *out is malloc'd (caller frees).  Returns 0 or FDS_ENOMEM. */
int fds__json_filter(const char *in, size_t n, const char *filter_path,
                     char **out, size_t *outn);
/* Re-indent the JSON text `in` the way Elasticsearch's ?pretty does
 * (Jackson's default pretty printer: two spaces, `"key" : value`, `{ }` for
 * an empty object, a final newline).  Tokens are copied unchanged, so
 * numbers keep every digit.  *out is malloc'd.  Returns 0 or FDS_ENOMEM. */
int fds__json_pretty(const char *in, size_t n, char **out, size_t *outn);

#endif
