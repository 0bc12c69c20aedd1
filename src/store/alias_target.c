/*
 * alias_target.c: the one index a single-document operation names, by an
 * index's name or an alias's -- for a read, the alias's only index; for a
 * write, its write index (Elasticsearch's
 * IndexAbstraction.getWriteIndex) -- refused in Elasticsearch's words when
 * an alias cannot name one index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_rules.h"

int fds_store_alias_target(fds_store *st, const char *name, bool write,
                      fds_index **ix, fds_err *err)
{
    fds_alias *al = NULL;
    size_t n = 0;
    if (fds_store_aliases_list(st, &al, &n))
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    size_t first = n, count = 0, writer = n, writers = 0;
    char list[512] = "";
    for (size_t i = 0; i < n; i++) {
        if (strcmp(al[i].alias, name))
            continue;
        if (first == n)
            first = i;
        count++;
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", al[i].index);
        if (al[i].is_write_index == 1) {
            writer = i;
            writers++;
        }
    }
    int rc = 0;
    const fds_alias *pick = NULL;
    if (!count)
        rc = FDS_ENOTFOUND; /* not an alias: err untouched */
    else if (write && writers == 1)
        pick = &al[writer];
    else if (write && count == 1 && al[first].is_write_index != 0)
        pick = &al[first];
    else if (write)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "no write index is defined for alias [%s]. The write "
                          "index may be explicitly disabled using "
                          "is_write_index=false or the alias points to multiple "
                          "indices without one being designated as a write "
                          "index", name);
    else if (count == 1)
        pick = &al[first];
    else
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "alias [%s] has more than one index associated with "
                          "it [%s], can't execute a single index op", name, list);
    if (pick && write && pick->index_routing)
        rc = fds_err_setk(err, FDS_EUNSUPPORTED, FDS_KIND_INVALID_ARGUMENT,
                          "alias [%s] has [index_routing] [%s]: writes through "
                          "it are not supported, fieldstore does not keep a "
                          "document's [_routing]", name, pick->index_routing);
    if (pick && !rc)
        rc = fds_store_get_index(st, pick->index, ix, err);
    fds_aliases_free(al, n);
    return rc;
}

int fds_store_index_or_alias(fds_store *st, const char *name, bool write,
                        fds_index **ix, fds_err *err)
{
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_store_get_index(st, name, ix, &e);
    if (rc == FDS_ENOTFOUND) {
        fds_err ae;
        fds_err_clear(&ae);
        int arc = fds_store_alias_target(st, name, write, ix, &ae);
        if (arc != FDS_ENOTFOUND || ae.code) { /* an alias: its answer */
            rc = arc;
            e = ae;
        }
    }
    if (rc && err)
        *err = e;
    return rc;
}
