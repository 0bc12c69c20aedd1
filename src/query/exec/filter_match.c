/*
 * filter_match.c: a query matched doc by doc (filter_match.h): its
 * compile once per search and its iterator per segment.
 */
#include <stdlib.h>

#include "exec/filter_match.h"

int fds__filter_new(fds__exec *x, const fds_query *q, fds__filter **out)
{
    fds__filter *f = calloc(1, sizeof *f);
    if (!f)
        return FDS_ENOMEM;
    f->x = x;
    if (!(f->c = fds__compile(x, q))) {
        free(f);
        return FDS_ENOMEM;
    }
    *out = f;
    return 0;
}

int fds__filter_segment(fds__filter *f, const fds_sidx *sx)
{
    fds__it_free(f->it);
    f->sx = sx;
    f->it = fds__build(f->x, f->c, sx);
    f->started = false;
    return f->it ? 0 : FDS_ENOMEM;
}

bool fds__filter_restart(fds__filter *f)
{
    fds__it_free(f->it);
    f->it = fds__build(f->x, f->c, f->sx);
    f->started = false;
    return f->it != NULL;
}

void fds__filter_free(fds__filter *f)
{
    if (!f)
        return;
    fds__it_free(f->it);
    fds__cnode_free(f->c);
    free(f);
}
