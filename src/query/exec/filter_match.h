/*
 * filter_match.h: does a doc match a query?  The executor's answer for
 * code that asks it doc by doc (src/query only): the filter and filters
 * aggregations.
 *
 * A filter is a query compiled once for a search (with that search's
 * statistics), then pointed at each segment in turn; fds__filter_match
 * answers for docs of the current segment.  Docs are asked in increasing
 * order, except that a doc below the last one asked restarts the
 * segment's iterator (a range or filters parent asks the same batch once
 * per bucket).  The match is inline: it runs per doc.
 */
#ifndef FDS_FILTER_MATCH_H
#define FDS_FILTER_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "exec/search_int.h"

typedef struct fds__filter {
    fds__exec *x;        /* the search (statistics, segments) */
    fds__cnode *c;       /* the compiled query (owned) */
    const fds_sidx *sx;  /* the current segment (NULL: none yet) */
    fds__it *it;         /* its iterator over sx (owned; NULL: none) */
    uint32_t doc;        /* the iterator's current doc */
    uint32_t last;       /* the last doc asked for */
    bool started;        /* the iterator has advanced in this pass */
} fds__filter;

/* A filter of query q for search x, into *out (free with
 * fds__filter_free).  0 or FDS_ENOMEM. */
int fds__filter_new(fds__exec *x, const fds_query *q, fds__filter **out);
/* Docs of segment sx come next.  0 or FDS_ENOMEM. */
int fds__filter_segment(fds__filter *f, const fds_sidx *sx);
/* The iterator over the current segment, made anew (a doc below the last
 * one was asked); false when it cannot be made (no match then). */
bool fds__filter_restart(fds__filter *f);
void fds__filter_free(fds__filter *f); /* NULL is a no-op */

/* Does doc d of the current segment match f? */
static inline bool fds__filter_match(fds__filter *f, uint32_t d)
{
    if (f->it && f->started && d < f->last && !fds__filter_restart(f))
        return false;
    if (!f->it)
        return false;
    f->last = d;
    if (!f->started || f->doc < d) {
        f->doc = f->it->advance(f->it, d);
        f->started = true;
    }
    return f->doc == d;
}

#endif
