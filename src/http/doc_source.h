/*
 * doc_source.h: a document's `_source` as get, mget and update answers
 * show it (include/exclude patterns), and the partial-document merge of
 * _update (internal to src/http).
 */
#ifndef FDS_HTTP_DOC_SOURCE_H
#define FDS_HTTP_DOC_SOURCE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fds_error.h"
#include "fds_strbuf.h"
#include "request.h"

/* Which parts of `_source` a get, mget or update answer shows
 * (Elasticsearch's FetchSourceContext).  Patterns are malloc'd
 * (fds__source_spec_free); none of either kind = the whole source. */
typedef struct fds__source_spec {
    bool given;    /* some _source parameter or member was given */
    bool fetch;    /* false: no _source in the answer */
    char **inc, **exc;
    size_t ninc, nexc;
} fds__source_spec;

void fds__source_spec_free(fds__source_spec *s);
/* Add what the URL says (`_source`: true, false or a comma list of
 * includes; `_source_includes`, `_source_excludes`: comma lists) to `s`.
 * Returns 0, FDS_EINVAL (more than FDS_SOURCE_PATTERNS_MAX patterns, or
 * one longer than FDS_SOURCE_PATTERN_LEN_MAX), FDS_ENOMEM. */
int fds__source_spec_params(fds_req *r, fds__source_spec *s, fds_err *err);
/* Replace `s` by a JSON `_source` value: a boolean, a pattern, an array of
 * patterns, or {"includes"/"include", "excludes"/"exclude"}.  Returns 0,
 * FDS_EPARSE (kind PARSE) for another shape, or as above. */
int fds__source_spec_json(const cJSON *v, fds__source_spec *s, fds_err *err);
/* Append src[0..n) as `s` selects it, byte for byte (s->fetch not
 * consulted). */
void fds__source_spec_put(fds_strbuf *b, const fds__source_spec *s,
                          const uint8_t *src, size_t n);

/* Elasticsearch's partial-document update (XContentHelper#update) on JSON
 * text: the object chg[0..chg_len) merged into the object old[0..old_len)
 * -- a member both give as objects is merged recursively, any other member
 * of chg replaces or joins the old one -- appended to `out` with every
 * value copied byte for byte, old members first in their order.
 * *modified tells whether the result differs from `old` as Elasticsearch's
 * detect_noop compares (parsed values; members in any order).  Both inputs
 * must be valid JSON.  Returns 0, FDS_EINVAL (an input is not an object),
 * FDS_ETOOBIG (objects with too many members to match: doc_source.c's
 * FDS_MERGE_PAIRS_MAX), FDS_ENOMEM. */
int fds__json_merge(const char *old, size_t old_len, const char *chg,
                    size_t chg_len, fds_strbuf *out, bool *modified);
/* The value of top-level member `key` of the JSON object s[0..n) as the
 * byte range s[*vs..*ve).  Returns 0 or FDS_ENOTFOUND. */
int fds__json_member(const char *s, size_t n, const char *key, size_t *vs,
                     size_t *ve);

#endif
