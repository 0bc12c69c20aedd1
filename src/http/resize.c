/*
 * resize.c: POST|PUT /{index}/_clone/{target}, /_shrink/{target} and
 * /_split/{target} -- Elasticsearch 8's resize API (RestResizeHandler,
 * ResizeRequest, TransportResizeAction, MetadataCreateIndexService).
 *
 * The request's checks and their words are Elasticsearch's, in its order:
 * ResizeRequest.validate (a split names index.number_of_shards), the
 * source exists, the shard counts (IndexMetadata.selectShrinkShards,
 * selectSplitShard, selectCloneShard, getRoutingFactor), no
 * number_of_routing_shards but for a split of one shard, the target does
 * not exist, the source blocks writes (index.blocks.write, read_only or
 * read_only_allow_delete), a shrink's source has more than one shard.
 * IllegalStateException answers 500 in Elasticsearch (the write-block and
 * routing-shards checks), so it does here.
 *
 * The target's settings are all of the source's (copy_settings is true in
 * Elasticsearch 8 and may not be false) with the body's over them: the
 * write block is copied too, and `"index.blocks.write": null` in the body
 * clears it, as Elasticsearch's documentation shows.  The store builds the
 * target (src/store/resize.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"
#include "index_expr.h"

/* Body members of a resize (ResizeRequest.PARSER). */
static const char *const RESIZE_KEYS[] = {"settings", "aliases", "max_primary_shard_size"};

/* Is setting `name` ("number_of_shards") in `settings` as
 * {"index":{name:..}}, {"index.name":..} or {name:..}?  *value gets it. */
static bool setting_given(const cJSON *settings, const char *name, const cJSON **value)
{
    char dotted[96];
    snprintf(dotted, sizeof dotted, "index.%s", name);
    const cJSON *ix = cJSON_GetObjectItemCaseSensitive(settings, "index");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(settings, dotted);
    if (!v)
        v = cJSON_GetObjectItemCaseSensitive(settings, name);
    if (!v && cJSON_IsObject(ix))
        v = cJSON_GetObjectItemCaseSensitive(ix, name);
    if (value)
        *value = v;
    return v && !cJSON_IsNull(v);
}

/*
 * The target's shard count `m` for a resize of a source of `n` shards
 * and `routing` routing shards checked as Elasticsearch checks it: 0, or
 * a 400 (500 for its IllegalStateException) in `o`.
 */
static bool shards_ok(fds_resp *o, int type, uint32_t n, uint32_t m, uint32_t routing)
{
    if (type == FDS_RESIZE_CLONE) {
        if (n != m) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "the number of target shards (%u) must be the same as "
                            "the number of  source shards ( %u)", m, n);
            return false;
        }
        return true;
    }
    if (type == FDS_RESIZE_SHRINK && n < m) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "the number of target shards [%u] must be less that the "
                        "number of source shards [%u]", m, n);
        return false;
    }
    /* getRoutingFactor */
    if (n < m && (m % n || m / n <= 1)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "the number of source shards [%u] must be a factor of [%u]", n, m);
        return false;
    }
    if (n > m && (n % m || n / m <= 1)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "the number of source shards [%u] must be a multiple of [%u]",
                        n, m);
        return false;
    }
    if (type == FDS_RESIZE_SPLIT) { /* assertSplitMetadata */
        if (n > m) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "the number of source shards [%u] must be less that the "
                            "number of target shards [%u]", n, m);
            return false;
        }
        uint32_t r = n == 1 ? m : routing;
        if (r % m) {
            fds__resp_errorf(o, 500, "illegal_state_exception",
                            "the number of routing shards [%u] must be a multiple of "
                            "the target shards [%u]", r, m);
            return false;
        }
    }
    return true;
}

/* The shard count the body gives, or the type's default (clone: the
 * source's, shrink: 1); false with a 400 for a value that is not a count. */
static bool target_shards(fds_resp *o, const cJSON *settings, int type, uint32_t n,
                          uint32_t *m)
{
    const cJSON *v;
    if (!setting_given(settings, "number_of_shards", &v)) {
        *m = type == FDS_RESIZE_CLONE ? n : 1;
        return true;
    }
    double d = cJSON_IsNumber(v) ? v->valuedouble
             : cJSON_IsString(v) ? strtod(v->valuestring, NULL) : -1;
    if (d < 1 || d > FDS_SHARDS_MAX || d != (double)(uint32_t)d) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "Failed to parse value [%s] for setting "
                        "[index.number_of_shards] must be >= 1 and <= %d",
                        cJSON_IsString(v) ? v->valuestring : "?", FDS_SHARDS_MAX);
        return false;
    }
    *m = (uint32_t)d;
    return true;
}

void fds__h_resize(fds_req *r, fds_resp *o, int type)
{
    const char *cs = fds__req_param(r, "copy_settings");
    if (cs && strcmp(cs, "true") && strcmp(cs, ""))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "parameter [copy_settings] can not be explicitly set "
                               "to [%s]", cs);
    long copies;
    if (fds__active_shards_wanted(r, o, &copies))
        return;
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_checked(r, &body, &e))
        return fds__resp_error(o, &e);
    if (body && !cJSON_IsObject(body)) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "parse_exception",
                               "request body must be a JSON object");
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, body) {
        size_t k = 0;
        while (k < 3 && strcmp(RESIZE_KEYS[k], it->string))
            k++;
        if (k == 3 || (k < 2 && !cJSON_IsObject(it))) {
            fds__resp_errorf(o, 400, "x_content_parse_exception",
                            "[resize_request] unknown field [%s]", it->string);
            cJSON_Delete(body);
            return;
        }
        if (k == 2) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "[max_primary_shard_size] is not supported by fieldstore: "
                            "give index.number_of_shards");
            cJSON_Delete(body);
            return;
        }
    }
    const cJSON *settings = cJSON_GetObjectItemCaseSensitive(body, "settings");
    /* both names may be <date math> (TransportResizeAction resolves them) */
    char target[FDS_INDEX_NAME_MAX + 2], source[FDS_INDEX_NAME_MAX + 2];
    if (fds_index_name_resolve(r->seg[2], target, sizeof target, &e) ||
        fds_index_name_resolve(r->seg[0], source, sizeof source, &e)) {
        cJSON_Delete(body);
        return fds__resp_error(o, &e);
    }
    if (type == FDS_RESIZE_SPLIT && !setting_given(settings, "number_of_shards", NULL)) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: index.number_of_shards is "
                               "required for split operations;");
    }
    fds_index *src = NULL;
    int rc = fds_store_get_index(r->store, source, &src, &e);
    if (rc) {
        cJSON_Delete(body);
        return fds__resp_error(o, &e);
    }
    uint32_t n = fds_index_nshards(src), routing = fds_index_routing_shards(src), m = 0;
    fds_index_settings set;
    fds_index_get_settings(src, &set);
    fds_alias *aliases = NULL;
    size_t naliases = 0;
    bool ok = target_shards(o, settings, type, n, &m) && shards_ok(o, type, n, m, routing);
    if (ok && setting_given(settings, "number_of_routing_shards", NULL) &&
        !(type == FDS_RESIZE_SPLIT && n == 1)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "cannot provide index.number_of_routing_shards on resize");
        ok = false;
    }
    if (ok) {
        /* the source's settings with the body's over them */
        rc = fds__settings_from_json(settings, &set, target, &e);
        /* more than one source shard: its routing shards, so that each
         * document's target shard follows from its source shard */
        if (!rc && n > 1)
            set.number_of_routing_shards =
                routing == fds_routing_shards_default(m) ? 0 : routing;
        set.number_of_shards = m;
        if (!rc)
            rc = fds_settings_check_shards(&set, &e);
        if (!rc)
            rc = fds__aliases_from_json(cJSON_GetObjectItemCaseSensitive(body, "aliases"),
                                        &aliases, &naliases, &e);
        if (!rc)
            rc = fds__alias_names_resolve(aliases, naliases, &e);
        for (size_t i = 0; !rc && i < naliases; i++)
            rc = fds__alias_filter_check(&aliases[i], fds_index_mapping(src), &e);
        /* (checked again under the store's lock when it is made) */
        fds_index *t = NULL;
        if (!rc && !fds_store_get_index(r->store, target, &t, NULL)) {
            rc = fds_err_setk(&e, FDS_EEXIST, FDS_KIND_ALREADY_EXISTS,
                              "index [%s/%s] already exists", target, fds_index_uuid(t));
            snprintf(e.index, sizeof e.index, "%s", target);
        } else if (!rc && fds_store_alias_exists(r->store, target)) {
            rc = fds_err_setk(&e, FDS_EINVAL, FDS_KIND_INVALID_INDEX_NAME,
                              "Invalid index name [%s], already exists as alias", target);
        }
        fds_index_release(t);
        ok = !rc;
        if (rc)
            fds__resp_error(o, &e);
    }
    if (ok && fds_index_check_block(src, FDS_BLOCK_LEVEL_WRITE, NULL) == 0) {
        fds__resp_errorf(o, 500, "illegal_state_exception",
                        "index %s must be read-only to resize index. use "
                        "\"index.blocks.write=true\"", fds_index_name(src));
        ok = false;
    }
    if (ok && type == FDS_RESIZE_SHRINK && n == 1) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "can't shrink an index with only one shard");
        ok = false;
    }
    cJSON_Delete(body);
    if (ok) {
        rc = fds_store_resize_index(r->store, src, target, &set, aliases, naliases, &e);
        if (rc) {
            if (!e.index[0])
                snprintf(e.index, sizeof e.index, "%s", target);
            if (rc == FDS_ENOMEM && !e.code)
                fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
            fds__resp_error(o, &e);
        } else {
            fds__index_created(o, target, copies, set.number_of_replicas);
        }
    }
    fds_aliases_free(aliases, naliases);
    fds_index_release(src);
}
