/*
 * search_int.h: internal interface shared by the files of src/query that
 * build and run searches (dsl_parse.c, search*.c).  Nothing outside
 * src/query includes it.
 */
#ifndef FDS_SEARCH_INT_H
#define FDS_SEARCH_INT_H

#include "search_request.h"

/* A query node of `type` (fds_qtype) with the defaults of the DSL: boost 1,
 * minimum_should_match -1, open ranges.  NULL on ENOMEM. */
fds_query *fds__query_new(int type);
/* Free a query tree (NULL is a no-op). */
void fds__query_free(fds_query *q);

#endif
