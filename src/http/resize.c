/*
 * resize.c: POST|PUT /{index}/_clone/{target}, /_shrink/{target} and
 * /_split/{target} -- Elasticsearch 8's resize API (RestResizeHandler,
 * ResizeRequest, TransportResizeAction, MetadataCreateIndexService).
 *
 * The request's checks and their words are Elasticsearch's, in its order:
 * ResizeRequest.validate (a split names index.number_of_shards), the
 * source exists, then the store's resize rules (src/store/resize_rules.c:
 * the shard counts, the routing shards, the target's name, the source's
 * write block, a shrink of one shard) between the parsing of the target's
 * settings and aliases.  IllegalStateException answers 500 in
 * Elasticsearch (the write-block and routing-shards checks), so it does
 * here.
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

#include "handlers.h"
#include "index_expr.h"
#include "index_lifecycle.h"
#include "index_rules.h"
#include "request.h"
#include "response.h"

_Static_assert(FDS_RESIZE_CLONE == (int)FDS_RESIZE_KIND_CLONE &&
                   FDS_RESIZE_SHRINK == (int)FDS_RESIZE_KIND_SHRINK &&
                   FDS_RESIZE_SPLIT == (int)FDS_RESIZE_KIND_SPLIT,
               "the resize types of handlers.h and index_rules.h");

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

/* The body's members checked (ResizeRequest.PARSER): false with the
 * answer in `o`. */
static bool body_keys_ok(const cJSON *body, fds_resp *o)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, body) {
        size_t k = 0;
        while (k < 3 && strcmp(RESIZE_KEYS[k], it->string))
            k++;
        if (k == 3 || (k < 2 && !cJSON_IsObject(it))) {
            fds__resp_errorf(o, 400, "x_content_parse_exception",
                            "[resize_request] unknown field [%s]", it->string);
            return false;
        }
        if (k == 2) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "[max_primary_shard_size] is not supported by fieldstore: "
                            "give index.number_of_shards");
            return false;
        }
    }
    return true;
}

/* The URL's copy_settings and wait_for_active_shards, and the body: false
 * with the answer in `o`; *body is the caller's to delete. */
static bool request_ok(fds_req *r, fds_resp *o, long *copies, cJSON **body)
{
    const char *cs = fds__req_param(r, "copy_settings");
    if (cs && strcmp(cs, "true") && strcmp(cs, "")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "parameter [copy_settings] can not be explicitly set "
                        "to [%s]", cs);
        return false;
    }
    if (fds__active_shards_wanted(r, o, copies))
        return false;
    fds_err e;
    fds_err_clear(&e);
    if (fds__body_checked(r, body, &e)) {
        fds__resp_error(o, &e);
        return false;
    }
    if (*body && !cJSON_IsObject(*body)) {
        fds__resp_errorf(o, 400, "parse_exception",
                        "request body must be a JSON object");
        return false;
    }
    return body_keys_ok(*body, o);
}

/* The target's settings and aliases from the body, checked by the store's
 * resize rules (src/store/resize_rules.c) between the parsing steps, in
 * Elasticsearch's order.  0 or the error in `e`. */
static int target_parts(fds_store *st, fds_index *src, const cJSON *body,
                        const char *target, int type, uint32_t m,
                        fds_index_settings *set, fds_alias **aliases,
                        size_t *naliases, fds_err *e)
{
    const cJSON *settings = cJSON_GetObjectItemCaseSensitive(body, "settings");
    uint32_t n = fds_index_nshards(src), routing = fds_index_routing_shards(src);
    int rc = fds_resize_check_shards(
        (fds_resize_kind)type, n, m, routing,
        setting_given(settings, "number_of_routing_shards", NULL), e);
    /* the source's settings with the body's over them */
    if (!rc)
        rc = fds_settings_from_json(settings, set, target, e);
    if (!rc)
        rc = fds_resize_target_settings(set, n, m, routing, e);
    if (!rc)
        rc = fds_aliases_from_json(cJSON_GetObjectItemCaseSensitive(body, "aliases"),
                                    aliases, naliases, e);
    if (!rc)
        rc = fds_alias_names_resolve(*aliases, *naliases, e);
    for (size_t i = 0; !rc && i < *naliases; i++)
        rc = fds_alias_filter_check(&(*aliases)[i], fds_index_mapping(src), e);
    if (!rc)
        rc = fds_resize_check_target(st, src, target, (fds_resize_kind)type, e);
    return rc;
}

void fds__h_resize(fds_req *r, fds_resp *o, int type)
{
    long copies;
    cJSON *body = NULL;
    if (!request_ok(r, o, &copies, &body)) {
        cJSON_Delete(body);
        return;
    }
    fds_err e;
    fds_err_clear(&e);
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
    if (fds_store_get_index(r->store, source, &src, &e)) {
        cJSON_Delete(body);
        return fds__resp_error(o, &e);
    }
    fds_index_settings set;
    fds_index_get_settings(src, &set);
    fds_alias *aliases = NULL;
    size_t naliases = 0;
    uint32_t m = 0;
    bool ok = target_shards(o, settings, type, fds_index_nshards(src), &m);
    int rc = ok ? target_parts(r->store, src, body, target, type, m, &set,
                               &aliases, &naliases, &e)
                : 0;
    cJSON_Delete(body);
    if (ok && rc) {
        fds__resp_error(o, &e);
    } else if (ok && (rc = fds_store_resize_index(r->store, src, target, &set,
                                                  aliases, naliases, &e))) {
        if (!e.index[0])
            snprintf(e.index, sizeof e.index, "%s", target);
        if (rc == FDS_ENOMEM && !e.code)
            fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        fds__resp_error(o, &e);
    } else if (ok) {
        fds__index_created(o, target, copies, set.number_of_replicas);
    }
    fds_aliases_free(aliases, naliases);
    fds_index_release(src);
}
