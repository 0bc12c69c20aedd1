/*
 * resize_rules.c: the checks of a resize (clone, shrink, split) before the
 * store builds the target (resize.c), with Elasticsearch's words and in
 * its order (TransportResizeAction, MetadataCreateIndexService,
 * IndexMetadata): the shard counts, the routing shards, the target's
 * name, the source's write block, a shrink of one shard.  src/http parses
 * the request between them and answers.
 */
#include <stdio.h>

#include "index_rules.h"

/* IndexMetadata's shard selection for `kind` from n to m shards. */
static int check_counts(fds_resize_kind kind, uint32_t n, uint32_t m,
                        uint32_t routing, fds_err *e)
{
    if (kind == FDS_RESIZE_KIND_CLONE) {
        if (n != m)
            return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "the number of target shards (%u) must be the "
                                "same as the number of  source shards ( %u)", m, n);
        return 0;
    }
    if (kind == FDS_RESIZE_KIND_SHRINK && n < m)
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "the number of target shards [%u] must be less that "
                            "the number of source shards [%u]", m, n);
    /* getRoutingFactor */
    if (n < m && (m % n || m / n <= 1))
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "the number of source shards [%u] must be a factor "
                            "of [%u]", n, m);
    if (n > m && (n % m || n / m <= 1))
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "the number of source shards [%u] must be a multiple "
                            "of [%u]", n, m);
    if (kind == FDS_RESIZE_KIND_SPLIT) { /* assertSplitMetadata */
        if (n > m)
            return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "the number of source shards [%u] must be less "
                                "that the number of target shards [%u]", n, m);
        uint32_t r = n == 1 ? m : routing;
        if (r % m)
            return fds_err_setk(e, FDS_EINVAL, FDS_KIND_ILLEGAL_STATE,
                                "the number of routing shards [%u] must be a "
                                "multiple of the target shards [%u]", r, m);
    }
    return 0;
}

int fds_resize_check_shards(fds_resize_kind kind, uint32_t n, uint32_t m,
                            uint32_t routing, bool routing_given, fds_err *e)
{
    int rc = check_counts(kind, n, m, routing, e);
    if (!rc && routing_given && !(kind == FDS_RESIZE_KIND_SPLIT && n == 1))
        rc = fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "cannot provide index.number_of_routing_shards on "
                          "resize");
    return rc;
}

int fds_resize_target_settings(fds_index_settings *set, uint32_t n, uint32_t m,
                               uint32_t routing, fds_err *e)
{
    if (n > 1)
        set->number_of_routing_shards =
            routing == fds_routing_shards_default(m) ? 0 : routing;
    set->number_of_shards = m;
    return fds_settings_check_shards(set, e);
}

int fds_resize_check_target(fds_store *st, fds_index *src, const char *target,
                            fds_resize_kind kind, fds_err *e)
{
    fds_index *t = NULL;
    int rc = 0;
    if (!fds_store_get_index(st, target, &t, NULL)) {
        rc = fds_err_setk(e, FDS_EEXIST, FDS_KIND_ALREADY_EXISTS,
                          "index [%s/%s] already exists", target, fds_index_uuid(t));
        if (e)
            snprintf(e->index, sizeof e->index, "%s", target);
    } else if (fds_store_alias_exists(st, target)) {
        rc = fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_INDEX_NAME,
                          "Invalid index name [%s], already exists as alias", target);
    }
    fds_index_release(t);
    if (!rc && fds_index_check_block(src, FDS_BLOCK_LEVEL_WRITE, NULL) == 0)
        rc = fds_err_setk(e, FDS_EINVAL, FDS_KIND_ILLEGAL_STATE,
                          "index %s must be read-only to resize index. use "
                          "\"index.blocks.write=true\"", fds_index_name(src));
    if (!rc && kind == FDS_RESIZE_KIND_SHRINK && fds_index_nshards(src) == 1)
        rc = fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "can't shrink an index with only one shard");
    return rc;
}
