/*
 * ast_int.h: building and freeing query nodes (ast.c), for the DSL parsers
 * and the executor's rewrites (src/query only).
 */
#ifndef FDS_AST_INT_H
#define FDS_AST_INT_H

#include "ast/search_request.h"

/* A query node of `type` (fds_qtype) with the defaults of the DSL: boost 1,
 * minimum_should_match -1, open ranges.  NULL on ENOMEM. */
fds_query *fds__query_new(int type);
/* Free a query tree (NULL is a no-op). */
void fds__query_free(fds_query *q);

#endif
