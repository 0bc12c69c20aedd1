/*
 * cat.h: rendering of the _cat APIs' tables (internal to src/http): the
 * columns ?h= picks, ?s= sorting, ?v headers and ?format=json.
 */
#ifndef FDS_HTTP_CAT_H
#define FDS_HTTP_CAT_H

#include <stddef.h>

#include "request.h"
#include "response.h"

/* Columns a _cat table shows at most (?h= picks among them); more are
 * dropped. */
#define FDS_CAT_COLS_MAX 32
/* ?s= sort keys honoured at most; more are ignored. */
#define FDS_CAT_SORT_KEYS_MAX 8

/* A _cat table: `ncol` column specs ("name|alias|...", a leading '*' for a
 * column shown only when ?h= names it), rows of strings (NULL = empty
 * cell); honours ?v, ?h= (names or aliases), ?format=json and ?s= (columns
 * with optional :asc/:desc, numbers compared as numbers).  Sorting
 * reorders rows[] in place; the rows stay the caller's. */
void fds__cat_render(fds_req *r, fds_resp *o, const char *const *cols,
                    size_t ncol, char ***rows, size_t nrows);
/* Free `n` rows of `ncol` malloc'd cells (NULL cells allowed), and the
 * array. */
void fds__cat_rows_free(char ***rows, size_t n, size_t ncol);

#endif
