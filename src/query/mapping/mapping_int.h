/*
 * mapping_int.h: what the mapping_*.c files share beyond query_int.h: the
 * names of index_options, the refusal of a value given at a multi-field's
 * path, and the undoing of fields a refused document added.
 */
#ifndef FDS_MAPPING_INT_H
#define FDS_MAPPING_INT_H

#include <stddef.h>
#include <stdint.h>

#include "query_int.h"

/* Names of fds_index_options values (query.h), as Elasticsearch writes
 * them (mapping.c). */
extern const char *const fds__index_options[3];

/* A document's value at a multi-field's path ("url.keyword" given as a key
 * of its own): Elasticsearch's DocumentParser refuses it, since the path
 * would need the parent field to be an object; indexed, it would give the
 * sub-field a value its parent does not have.  0 when f is not one, or v
 * is a copy_to copy (not a key of the document); else FDS_EINVAL, err
 * filled (mapping_doc.c). */
int fds__subfield_error(const fds_mfield *f, const fds_jval *v,
                        const uint8_t *src, size_t len, fds_err *err);

/* Drop the fields added after the first `keep` (caller holds the write lock
 * and no reader has seen them) and re-index the hash in place
 * (mapping.c). */
void fds__mapping_truncate(fds_mapping *m, size_t keep);

/* The limits of `lim` that field f breaks in a mapping of `total` fields
 * (Elasticsearch's texts): 0, or FDS_EINVAL with err filled (mapping.c). */
int fds__field_limit_error(const fds_mfield *f, size_t total,
                           const fds_mapping_limits *lim, fds_err *err);

#endif
