/*
 * registry.h: the aggregation types, looked up by name (the parser) or by
 * fds_agg_type (src/query only; registry.c holds the table, agg_kind.h
 * its entries' shape).
 */
#ifndef FDS_DSL_REGISTRY_H
#define FDS_DSL_REGISTRY_H

#include "aggs/agg_kind.h"

/* The entry of the type named `name` ("terms"); NULL when none is. */
const fds__agg_kind *fds__agg_kind_find(const char *name);
/* The entry of type `type` (fds_agg_type, FDS_AGG_ROOT included); NULL
 * when out of range. */
const fds__agg_kind *fds__agg_kind_of(int type);

#endif
