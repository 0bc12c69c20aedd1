/*
 * req_index.c: the index a request's path names -- an index, or an alias
 * with one index -- or the index_not_found answer.
 */
#include "index_rules.h"
#include "req_index.h"
#include "request.h"
#include "response.h"

fds_index *fds__req_index(fds_req *r, fds_resp *o, unsigned i)
{
    fds_index *ix = NULL;
    fds_err e;
    fds_err_clear(&e);
    /* an alias's one index too */
    if (i >= r->nseg || fds_store_index_or_alias(r->store, r->seg[i], false, &ix, &e)) {
        if (!e.code)
            fds_err_setk(&e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                        "no such index");
        fds__resp_error(o, &e);
        return NULL;
    }
    return ix;
}
