/*
 * exec_state.c: what a search's passes share through fds__exec besides
 * the query -- the normInverse tables of its avgdls and its deadline.
 * Every other file of src/query/exec reads them; this one reads none of
 * those, so it sits under all of them.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/search_int.h"

fds__norm_inv *fds__norm_inv_get(fds__exec *x, float avgdl)
{
    for (fds__norm_inv *m = x->ninv; m; m = m->next)
        if (!memcmp(&m->avgdl, &avgdl, sizeof avgdl)) /* the same bits */
            return m;
    fds__norm_inv *m = malloc(sizeof *m);
    if (!m)
        return NULL;
    m->avgdl = avgdl;
    memset(m->have, 0, sizeof m->have);
    m->next = x->ninv;
    x->ninv = m;
    return m;
}

void fds__exec_release(fds__exec *x)
{
    while (x->ninv) {
        fds__norm_inv *m = x->ninv;
        x->ninv = m->next;
        free(m);
    }
}

bool fds__past_deadline(fds__exec *x)
{
    if (!x->deadline_ns || x->timed_out)
        return x->timed_out;
    x->timed_out = fds_mono_ns() > x->deadline_ns;
    return x->timed_out;
}
