/*
 * docs.c: document CRUD -- index and create (PUT/POST /{index}/_doc),
 * get and _source (GET /{index}/_doc/{id}), _mget and delete.  _update is
 * in doc_update.c, _bulk in bulk.c, _reindex in reindex.c; search and
 * _count in search_api.c.
 *
 * `_source` is kept as the bytes received (DESIGN.md §10: cJSON re-prints
 * numbers as doubles), so responses splice stored bytes into the JSON text
 * instead of re-printing them.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc_source.h"
#include "doc_write.h"
#include "fds_strbuf.h"
#include "handlers.h"
#include "index_rules.h"
#include "req_index.h"
#include "request.h"
#include "response.h"

/* Docs of one _mget: the request is held whole, so bound its answer
 * (Elasticsearch has no such limit; its default search window is 10,000). */
#define FDS_MGET_DOCS_MAX 10000

static const char *const WRITE_PARAMS[] = {
    "refresh", "op_type", "if_seq_no", "if_primary_term", "version",
    "version_type", "routing", "pipeline", "require_alias", NULL};

/* fds__write_opts_check on the URL's pipeline and require_alias; the URL's
 * routing into op.  Returns false with the error answered in `o`. */
static bool url_write_opts(fds_req *r, fds_resp *o, fds_write_op *op)
{
    fds_err e;
    fds_err_clear(&e);
    op->routing = fds__req_param(r, "routing");
    op->routing_len = op->routing ? strlen(op->routing) : 0;
    if (!fds__write_opts_check(r->store, r->seg[0], fds__req_param(r, "pipeline"),
                          fds__req_param_bool(r, "require_alias", false), &e))
        return true;
    fds__resp_error(o, &e);
    return false;
}

void fds__h_doc_put(fds_req *r, fds_resp *o, bool create_only)
{
    if (!fds__refresh_ok(r, o))
        return;
    fds_write_op op = {0};
    if (r->nseg == 3) {
        op.id = r->seg[2];
        op.id_len = strlen(r->seg[2]);
    }
    const char *vt = fds__req_param(r, "version_type");
    const char *opt = fds__req_param(r, "op_type");
    if ((create_only || (opt && !strcmp(opt, "create"))) && vt &&
        strcmp(vt, "internal")) /* IndexRequest#validate, before the version */
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: create operations only "
                               "support internal versioning. use index instead;");
    if (!fds__req_check_params(r, o, WRITE_PARAMS) ||
        !fds__concurrency_params(r, o, &op) || !fds__id_valid(o, &op) ||
        !url_write_opts(r, o, &op))
        return;
    fds_index *ix = NULL;
    fds_err ce;
    fds_err_clear(&ce);
    if (fds__index_for_write(r->store, r->seg[0], &ix, &ce)) {
        if (!ce.index[0])
            snprintf(ce.index, sizeof ce.index, "%s", r->seg[0]);
        return fds__resp_error(o, &ce);
    }
    const char *op_type = fds__req_param(r, "op_type");
    if (op_type && strcmp(op_type, "create") && strcmp(op_type, "index")) {
        fds_index_release(ix);
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "opType must be 'create' or 'index', found: [%s]",
                               op_type);
    }
    op.type = create_only || (op_type && !strcmp(op_type, "create"))
                  ? FDS_OP_CREATE : FDS_OP_INDEX;
    op.src = (const uint8_t *)r->body;
    op.src_len = r->body_len;
    fds_write_result w;
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_index_write(ix, &op, 1, &w, fds__want_refresh(r), &e);
    if (rc) {
        fds_index_release(ix);
        return fds__resp_error(o, &e);
    }
    if (w.code) {
        if (!w.err.index[0])
            snprintf(w.err.index, sizeof w.err.index, "%s", fds_index_name(ix));
        fds_index_release(ix);
        return fds__resp_error(o, &w.err);
    }
    fds__write_single(o, fds_index_name(ix), &op, &w, fds__forced_refresh(r), NULL);
    fds_index_release(ix);
}

/* How a get reads: realtime (the buffer too) or as of the last refresh,
 * after a refresh of its own when asked (Elasticsearch's realtime and
 * refresh parameters). */
typedef struct get_mode {
    bool realtime, refresh;
    const char *routing;     /* the URL's routing, or NULL: the id's shard */
} get_mode;

/* The doc `id` of ix in the shard of `routing` (NULL: m's routing, or
 * the id's shard). */
static int get_doc(fds_index *ix, const get_mode *m, const char *id, size_t id_len,
                   const char *routing, fds_doc *d, fds_err *e)
{
    int brc = fds_index_check_block(ix, FDS_BLOCK_LEVEL_READ, e);
    if (brc)
        return brc;
    if (m->refresh) {
        int rc = fds_index_refresh(ix, e);
        if (rc)
            return rc;
    }
    if (!routing)
        routing = m->routing;
    return fds_index_get_routed(ix, id, id_len, routing,
                                routing ? strlen(routing) : 0, m->realtime, d, e);
}

/* A GetResult of Elasticsearch (get answers and mget docs): found, with
 * `_source` as `sp` selects it (none when the index keeps no `_source`:
 * `nosrc`), or {"found":false}. */
static void put_get_result(fds_strbuf *b, const char *index, const char *id,
                           size_t id_len, const fds_doc *d,
                           const fds__source_spec *sp, bool nosrc)
{
    fds_strbuf_puts(b, "{\"_index\":");
    fds__sb_json_str(b, index);
    fds_strbuf_puts(b, ",\"_id\":");
    fds_strbuf_put_json_string(b, id, id_len);
    if (!d) {
        fds_strbuf_puts(b, ",\"found\":false}");
        return;
    }
    fds_strbuf_printf(b, ",\"_version\":%lld,\"_seq_no\":%lld,\"_primary_term\":1",
                      (long long)d->version, (long long)d->seq_no);
    if (d->has_routing) {
        fds_strbuf_puts(b, ",\"_routing\":");
        fds_strbuf_put_json_string(b, d->routing, d->routing_len);
    }
    fds_strbuf_puts(b, ",\"found\":true");
    if (sp->fetch && !nosrc) {
        fds_strbuf_puts(b, ",\"_source\":");
        fds__source_spec_put(b, sp, d->src, d->src_len);
    }
    fds_strbuf_puts(b, "}");
}

/* realtime, refresh, routing, stored_fields and the _source parameters of
 * get and mget.  No field is stored apart from `_source` (mapping `store`
 * is refused), so `stored_fields` names nothing to answer beyond the
 * metadata (`_routing` is always shown); as in Elasticsearch
 * (ShardGetService), asking for stored fields leaves `_source` out unless
 * a `_source` parameter asks for it.  Returns 0 or an error in `e` (a bad
 * value). */
/* A boolean URL parameter as Elasticsearch reads one (Booleans#parseBoolean:
 * "true", "false", or "" for true).  Returns 0 or FDS_EINVAL. */
static int param_bool(fds_req *r, const char *key, bool dflt, bool *out, fds_err *e)
{
    const char *v = fds__req_param(r, key);
    *out = dflt;
    if (!v)
        return 0;
    if (!*v || !strcmp(v, "true") || !strcmp(v, "false")) {
        *out = strcmp(v, "false") != 0;
        return 0;
    }
    return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "Failed to parse value [%s] as only [true] or [false] "
                        "are allowed.", v);
}

static int get_params(fds_req *r, get_mode *m, fds__source_spec *sp, fds_err *e)
{
    sp->fetch = true;
    if (param_bool(r, "realtime", true, &m->realtime, e) ||
        param_bool(r, "refresh", false, &m->refresh, e))
        return FDS_EINVAL;
    m->routing = fds__req_param(r, "routing");
    const char *sf = fds__req_param(r, "stored_fields");
    int rc = fds__source_spec_params(r, sp, e);
    if (!rc && sf && *sf && !sp->given)
        sp->fetch = false;
    return rc;
}

/* "preference" picks among shard copies: one copy here, so every value
 * gives the same answer. */
static const char *const GET_PARAMS[] = {
    "realtime", "refresh", "routing", "preference", "_source", "_source_includes",
    "_source_excludes", "version", "version_type", "stored_fields", NULL};

/* A get's `version` (with any version_type, reads compare for equality:
 * VersionType#isVersionConflictForReads): 0 when not given.  Returns 0 or
 * FDS_EINVAL for a bad value. */
static int get_version(fds_req *r, int64_t *out, fds_err *e)
{
    const char *v = fds__req_param(r, "version");
    const char *vt = fds__req_param(r, "version_type");
    *out = 0;
    if (vt && strcmp(vt, "internal") && strcmp(vt, "external") &&
        strcmp(vt, "external_gte"))
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "No version type match [%s]", vt);
    if (!v)
        return 0;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || n < 1)
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "failed to parse [version] with value [%s]", v);
    *out = n;
    return 0;
}

void fds__h_doc_get(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, GET_PARAMS))
        return;
    get_mode gm;
    fds__source_spec sp = {0};
    fds_err e;
    fds_err_clear(&e);
    if (get_params(r, &gm, &sp, &e)) {
        fds__source_spec_free(&sp);
        return fds__resp_error(o, &e);
    }
    int64_t want_version = 0;
    if (get_version(r, &want_version, &e)) {
        fds__source_spec_free(&sp);
        return fds__resp_error(o, &e);
    }
    fds_index *ix = fds__req_index(r, o, 0);
    if (!ix) {
        fds__source_spec_free(&sp);
        return;
    }
    fds_doc d = {0};
    const char *id = r->seg[2];
    int rc = get_doc(ix, &gm, id, strlen(id), NULL, &d, &e);
    if (!rc && want_version && d.version != want_version)
        rc = fds_err_setk(&e, FDS_ECONFLICT, FDS_KIND_CONFLICT,
                          "[%s]: version conflict, current version [%lld] is "
                          "different than the one provided [%lld]", id,
                          (long long)d.version, (long long)want_version);
    bool source_only = !strcmp(r->seg[1], "_source");
    bool nosrc = !fds_mapping_source_enabled(fds_index_mapping(ix));
    fds_strbuf b = {0};
    int status = 200;
    if (rc == FDS_ENOTFOUND && source_only) {
        fds_err_clear(&e);
        fds_err_setk(&e, FDS_ENOTFOUND, FDS_KIND_NOT_FOUND,
                     "Document not found [%s]/[%s]", fds_index_name(ix), id);
    } else if (rc == FDS_ENOTFOUND) {
        put_get_result(&b, fds_index_name(ix), id, strlen(id), NULL, &sp, nosrc);
        status = 404;
        rc = 0;
    } else if (!rc && source_only && nosrc) {
        /* RestGetSourceAction: a document without a source */
        rc = fds_err_setk(&e, FDS_ENOTFOUND, FDS_KIND_NOT_FOUND,
                          "Source not found [%s]/[%s]", fds_index_name(ix), id);
    } else if (!rc && source_only) {
        fds__source_spec_put(&b, &sp, d.src, d.src_len);
    } else if (!rc) {
        put_get_result(&b, fds_index_name(ix), id, strlen(id), &d, &sp, nosrc);
    }
    if (rc && !e.index[0])
        snprintf(e.index, sizeof e.index, "%s", fds_index_name(ix));
    free(d.src);
    fds_index_release(ix);
    fds__source_spec_free(&sp);
    if (rc) {
        free(b.p);
        return fds__resp_error(o, &e);
    }
    fds__resp_strbuf(o, status, &b);
}

/* ---- _mget ------------------------------------------------------------------ */

/* One doc of an mget: its own index, id and _source, or the request's. */
typedef struct mget_doc {
    const char *index;
    char id[FDS_DOC_ID_MAX + 1];
    size_t id_len;
    bool has_id;
    char routing[FDS_DOC_ID_MAX + 1]; /* its own routing, "" for none */
    bool has_routing;
    fds__source_spec src;    /* src.given: its own */
} mget_doc;

/* An `_id` or `ids` entry: a string, or a number read as its text. */
static bool mget_id(const cJSON *v, mget_doc *d)
{
    int n;
    if (cJSON_IsString(v))
        n = snprintf(d->id, sizeof d->id, "%s", v->valuestring);
    else if (cJSON_IsNumber(v))
        n = snprintf(d->id, sizeof d->id, "%.17g", v->valuedouble);
    else
        return false;
    d->id_len = n < 0 ? 0 : (size_t)n < sizeof d->id ? (size_t)n : sizeof d->id - 1;
    d->has_id = true;
    return true;
}

/* Read the body's docs (MultiGetRequest#add) into *docs (*n of them).
 * Returns 0 or an error in `e` (400s, as Elasticsearch words them). */
static int mget_parse(const cJSON *body, const char *dflt_index, mget_doc **docs,
                      size_t *n, fds_err *e)
{
    *docs = NULL;
    *n = 0;
    const cJSON *list = NULL;
    bool ids = false;
    if (body && !cJSON_IsObject(body))
        return fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                            "the mget body must be a JSON object");
    for (const cJSON *c = body ? body->child : NULL; c; c = c->next) {
        bool is_ids = !strcmp(c->string, "ids");
        if ((strcmp(c->string, "docs") && !is_ids) || !cJSON_IsArray(c))
            return fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                                "unknown key [%s] for a %s, expected [docs] or "
                                "[ids]", c->string,
                                cJSON_IsArray(c) ? "START_ARRAY" : "value");
        if (is_ids && !dflt_index)
            return fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                                "ids given, but no index: use /{index}/_mget");
        list = c;
        ids = is_ids;
    }
    size_t cnt = (size_t)cJSON_GetArraySize(list);
    if (cnt > FDS_MGET_DOCS_MAX)
        return fds_err_setk(e, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                            "an mget takes at most %d docs, got %zu",
                            FDS_MGET_DOCS_MAX, cnt);
    mget_doc *d = cnt ? calloc(cnt, sizeof *d) : NULL;
    if (cnt && !d)
        return FDS_ENOMEM;
    *docs = d;
    int rc = 0;
    size_t i = 0;
    for (const cJSON *it = list ? list->child : NULL; it && !rc; it = it->next, i++) {
        d[i].index = dflt_index;
        *n = i + 1;
        if (ids) {
            if (!mget_id(it, &d[i]))
                rc = fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                                  "[ids] must hold strings");
            continue;
        }
        if (!cJSON_IsObject(it)) {
            rc = fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                              "[docs] must hold objects");
            continue;
        }
        for (const cJSON *m = it->child; m && !rc; m = m->next) {
            if (!strcmp(m->string, "_index") && cJSON_IsString(m))
                d[i].index = m->valuestring;
            else if (!strcmp(m->string, "_id") && mget_id(m, &d[i]))
                ;
            else if (!strcmp(m->string, "_source"))
                rc = fds__source_spec_json(m, &d[i].src, e);
            else if (!strcmp(m->string, "routing") &&
                     (cJSON_IsString(m) || cJSON_IsNumber(m))) {
                if (cJSON_IsString(m))
                    snprintf(d[i].routing, sizeof d[i].routing, "%s", m->valuestring);
                else
                    snprintf(d[i].routing, sizeof d[i].routing, "%.17g", m->valuedouble);
                d[i].has_routing = true;
            }
            else
                rc = fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                                  "unknown key [%s] in a doc of [docs]", m->string);
        }
    }
    if (rc)
        return rc;
    /* MultiGetRequest#validate */
    fds_strbuf b = {0};
    unsigned nerr = 0;
    if (*n == 0)
        fds_strbuf_printf(&b, "%u: no documents to get;", ++nerr);
    for (i = 0; i < *n; i++) {
        if (!d[i].index)
            fds_strbuf_printf(&b, "%u: index is missing for doc %zu;", ++nerr, i);
        if (!d[i].has_id)
            fds_strbuf_printf(&b, "%u: id is missing for doc %zu;", ++nerr, i);
    }
    if (b.oom)
        rc = FDS_ENOMEM;
    else if (nerr)
        rc = fds_err_setk(e, FDS_EINVAL, FDS_KIND_VALIDATION, "Validation Failed: %s",
                          b.p);
    free(b.p);
    return rc;
}

/* A doc of the answer that failed: {"_index","_id","error":{...}}. */
static void put_get_failure(fds_strbuf *b, const mget_doc *d, const fds_err *e)
{
    fds_strbuf_puts(b, "{\"_index\":");
    fds__sb_json_str(b, d->index);
    fds_strbuf_puts(b, ",\"_id\":");
    fds_strbuf_put_json_string(b, d->id, d->id_len);
    fds_strbuf_puts(b, ",\"error\":");
    cJSON *ej = fds__error_json(e);
    char *err = ej ? cJSON_PrintUnformatted(ej) : NULL;
    cJSON_Delete(ej);
    if (err)
        fds_strbuf_puts(b, err);
    else
        b->oom = 1;
    free(err);
    fds_strbuf_puts(b, "}");
}

static const char *const MGET_PARAMS[] = {
    "realtime", "refresh", "routing", "preference", "_source", "_source_includes",
    "_source_excludes", "stored_fields", NULL};

void fds__h_mget(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, MGET_PARAMS))
        return;
    get_mode gm;
    fds__source_spec sp = {0};
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    mget_doc *docs = NULL;
    size_t n = 0;
    int rc = get_params(r, &gm, &sp, &e);
    if (!rc)
        rc = fds__body_json(r, &body, &e);
    bool nul = false;
    if (!rc && body)
        rc = fds_json_check_body_nul(r->body, r->body_len, &nul, &e);
    if (!rc && nul) /* an _id or _index cut short would be another doc's */
        rc = fds_err_setk(&e, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                          "a string of the body holds a NUL character "
                          "(\\u0000), which _index, _id and routing cannot");
    if (!rc)
        rc = mget_parse(body, r->nseg == 2 ? r->seg[0] : NULL, &docs, &n, &e);
    fds_strbuf b = {0};
    fds_strbuf_puts(&b, "{\"docs\":[");
    for (size_t i = 0; !rc && i < n; i++) {
        mget_doc *md = &docs[i];
        fds_err de;
        fds_err_clear(&de);
        fds_index *ix = NULL;
        fds_doc d = {0};
        int drc = fds_store_index_or_alias(r->store, md->index, false, &ix, &de);
        if (!drc)
            drc = get_doc(ix, &gm, md->id, md->id_len,
                          md->has_routing ? md->routing : NULL, &d, &de);
        if (i)
            fds_strbuf_putc(&b, ',');
        if (drc == FDS_ENOTFOUND && ix) {
            put_get_result(&b, md->index, md->id, md->id_len, NULL, &sp, false);
        } else if (drc) {
            if (!de.index[0])
                snprintf(de.index, sizeof de.index, "%s", md->index);
            put_get_failure(&b, md, &de);
        } else {
            put_get_result(&b, fds_index_name(ix), md->id, md->id_len, &d,
                           md->src.given ? &md->src : &sp,
                           !fds_mapping_source_enabled(fds_index_mapping(ix)));
        }
        free(d.src);
        fds_index_release(ix);
    }
    fds_strbuf_puts(&b, "]}");
    for (size_t i = 0; i < n; i++)
        fds__source_spec_free(&docs[i].src);
    free(docs);
    cJSON_Delete(body);
    fds__source_spec_free(&sp);
    if (rc) {
        free(b.p);
        return fds__resp_error(o, &e);
    }
    fds__resp_strbuf(o, 200, &b);
}

void fds__h_doc_delete(fds_req *r, fds_resp *o)
{
    if (!fds__refresh_ok(r, o))
        return;
    fds_write_op op = {.type = FDS_OP_DELETE, .id = r->seg[2],
                       .id_len = strlen(r->seg[2])};
    if (!fds__req_check_params(r, o, WRITE_PARAMS) ||
        !fds__concurrency_params(r, o, &op) || !fds__id_valid(o, &op) ||
        !url_write_opts(r, o, &op))
        return;
    fds_index *ix = NULL;
    fds_err e;
    fds_err_clear(&e);
    /* through an alias: its write index */
    int rc = fds_store_index_or_alias(r->store, r->seg[0], true, &ix, &e);
    if (rc)
        return fds__resp_error(o, &e);
    fds_write_result w;
    fds_err_clear(&e);
    rc = fds_index_write(ix, &op, 1, &w, fds__want_refresh(r), &e);
    if (rc || w.code) {
        fds_index_release(ix);
        return fds__resp_error(o, rc ? &e : &w.err);
    }
    fds__write_single(o, fds_index_name(ix), &op, &w, fds__forced_refresh(r), NULL);
    fds_index_release(ix);
}
