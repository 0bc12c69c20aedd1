/*
 * docs.c: document endpoints (index, create, get, delete, _bulk) and
 * _reindex.  Search and _count are in search_api.c.
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

#include "fds_text.h"
#include "search_render.h"
#include "http_int.h"
#include "search_stats.h"
#include "tasks.h"

/* The most retry_on_conflict fieldstore takes: each retry re-reads and
 * re-merges the document, and a writer that keeps losing the race to more
 * than this many others should hear about it. */
#define FDS_UPDATE_RETRIES_MAX 100
/* Docs of one _mget: the request is held whole, so bound its answer
 * (Elasticsearch has no such limit; its default search window is 10,000). */
#define FDS_MGET_DOCS_MAX 10000

/* A JSON string literal of a NUL-terminated string (fds_json_escape). */
static void sb_json_str(fds_strbuf *b, const char *s)
{
    fds_strbuf_put_json_string(b, s, strlen(s));
}

static void sb_resp(fds_resp *o, int status, fds_strbuf *b)
{
    if (b->oom) {
        free(b->p);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    fds__resp_raw(o, status, b->p, b->len, NULL);
}

/* ?refresh=true|wait_for|false */
static bool want_refresh(fds_req *r)
{
    const char *v = fds__req_param(r, "refresh");
    return v && (!*v || !strcmp(v, "true") || !strcmp(v, "wait_for"));
}

/* ?refresh is true, false, wait_for or empty; anything else is a 400
 * (answered), as Elasticsearch's WriteRequest.RefreshPolicy.parse. */
static bool refresh_ok(fds_req *r, fds_resp *o)
{
    const char *v = fds__req_param(r, "refresh");
    if (!v || !*v || !strcmp(v, "true") || !strcmp(v, "false") ||
        !strcmp(v, "wait_for"))
        return true;
    fds__resp_errorf(o, 400, "illegal_argument_exception",
                    "Unknown value for refresh: [%s].", v);
    return false;
}

/* refresh=true or refresh= (not wait_for): Elasticsearch's answer then says
 * "forced_refresh": true (DocWriteResponse#innerToXContent). */
static bool forced_refresh(fds_req *r)
{
    const char *v = fds__req_param(r, "refresh");
    return v && (!*v || !strcmp(v, "true"));
}

/* Elasticsearch validates a single write's id before anything else (no
 * index is created for it).  Returns false with the 400 in `o`. */
static bool id_valid(fds_resp *o, const fds_write_op *op)
{
    char msg[FDS_ERR_REASON_MAX];
    if (!fds_write_id_validate(op->id, op->id_len, op->type == FDS_OP_DELETE,
                               msg, sizeof msg))
        return true;
    fds_err e;
    fds_err_clear(&e);
    fds_err_setk(&e, FDS_EINVAL, FDS_KIND_VALIDATION, "Validation Failed: 1: %s;",
                 msg);
    fds__resp_error(o, &e);
    return false;
}

static const char *result_word(const fds_write_op *op, const fds_write_result *w)
{
    if (op->type == FDS_OP_DELETE)
        return w->found ? "deleted" : "not_found";
    return w->created ? "created" : "updated";
}

static int item_status(const fds_write_op *op, const fds_write_result *w)
{
    if (w->code) {
        if (w->err.kind)
            return fds__http_status(&w->err);
        return w->code == FDS_ECONFLICT ? 409 : w->code == FDS_ENOTFOUND ? 404 : 400;
    }
    if (op->type == FDS_OP_DELETE)
        return w->found ? 200 : 404;
    return w->created ? 201 : 200;
}

/* What an update answer adds to a write result: "noop" (nothing written:
 * `_shards` all 0) and the "get" object of the source it asked for. */
typedef struct upd_answer {
    bool noop;
    fds_strbuf get;          /* the "get" object's text, or empty */
} upd_answer;

/* The write-result body of Elasticsearch (index/delete/update responses and
 * bulk items share it); bulk items also carry "status" (`with_status`);
 * `u` is an update's extra (or NULL). */
static void write_item(fds_strbuf *b, const char *index, const fds_write_op *op,
                       const fds_write_result *w, bool with_status,
                       bool refreshed, const upd_answer *u)
{
    fds_strbuf_puts(b, "{\"_index\":");
    sb_json_str(b, index);
    fds_strbuf_puts(b, ",\"_id\":");
    sb_json_str(b, w->id);
    if (w->code) {
        fds_err e = w->err;
        fds_strbuf_printf(b, ",\"status\":%d,\"error\":{\"type\":", item_status(op, w));
        sb_json_str(b, e.kind ? fds__http_type(&e)
                                           : "illegal_argument_exception");
        fds_strbuf_puts(b, ",\"reason\":");
        sb_json_str(b, e.reason[0] ? e.reason : fds_strerror(w->code));
        fds_strbuf_puts(b, ",\"index\":");
        sb_json_str(b, index);
        if (e.cause_kind) {
            fds_strbuf_puts(b, ",\"caused_by\":{\"type\":");
            sb_json_str(b, fds__http_kind_type(e.cause_kind));
            fds_strbuf_puts(b, ",\"reason\":");
            sb_json_str(b, e.cause);
            fds_strbuf_puts(b, "}");
        }
        fds_strbuf_puts(b, "}}");
        return;
    }
    bool noop = u && u->noop;
    fds_strbuf_puts(b, ",\"_version\":");
    fds_strbuf_put_i64(b, w->version);
    fds_strbuf_puts(b, ",\"result\":\"");
    fds_strbuf_puts(b, noop ? "noop" : result_word(op, w));
    fds_strbuf_puts(b, refreshed && !noop ? "\",\"forced_refresh\":true," : "\",");
    fds_strbuf_puts(b, noop ? "\"_shards\":{\"total\":0,\"successful\":0,"
                              "\"failed\":0},\"_seq_no\":"
                            : "\"_shards\":{\"total\":1,\"successful\":1,"
                              "\"failed\":0},\"_seq_no\":");
    fds_strbuf_put_i64(b, w->seq_no);
    fds_strbuf_puts(b, ",\"_primary_term\":1");
    if (u && u->get.len) {
        fds_strbuf_puts(b, ",\"get\":");
        fds_strbuf_put(b, u->get.p, u->get.len);
    }
    if (with_status) {
        fds_strbuf_puts(b, ",\"status\":");
        fds_strbuf_put_i64(b, item_status(op, w));
    }
    fds_strbuf_puts(b, "}");
}

/* The answer to a single-document write (successful: errors go through
 * fds__resp_error). */
static void write_single(fds_resp *o, const char *index, const fds_write_op *op,
                         const fds_write_result *w, bool refreshed,
                         const upd_answer *u)
{
    fds_strbuf b = {0};
    write_item(&b, index, op, w, false, refreshed, u);
    sb_resp(o, item_status(op, w), &b);
}

/* The index `name` a write goes to: the index, or the write index of the
 * alias of that name (fds__alias_target), or, when neither exists, a new
 * index created from the templates that match the name, as Elasticsearch
 * does on writes (action.auto_create_index).  Returns 0 or an error code
 * with `err` filled. */
static int index_for_write(fds_store *st, const char *name, fds_index **ix,
                           fds_err *err)
{
    fds_err e;
    fds_err_clear(&e);
    int rc = fds__index_or_alias(st, name, true, ix, &e);
    if (rc != FDS_ENOTFOUND || e.kind != FDS_KIND_INDEX_NOT_FOUND ||
        strcmp(e.index, name)) { /* not a missing name: an answer */
        if (rc)
            *err = e;
        return rc;
    }
    fds_err_clear(&e);
    rc = fds__auto_create_check(st, name, &e);
    if (!rc)
        rc = fds__index_create(st, name, NULL, &e);
    if (rc && rc != FDS_EEXIST) {
        *err = e;
        return rc;
    }
    return fds_store_get_index(st, name, ix, err);
}

/* The write options of Elasticsearch that fieldstore answers as
 * Elasticsearch would on a cluster without them, for a write to `index`:
 * `require_alias` true fails unless `index` is an alias, and a `pipeline`
 * other than "_none" does not exist (no ingest pipelines).  NULL / false =
 * not given.  Returns 0 or the error in `err`. */
static int write_opts_check(fds_store *st, const char *index,
                            const char *pipeline,
                            bool require_alias, fds_err *err)
{
    int rc = 0;
    if (require_alias && !fds_store_alias_exists(st, index))
        rc = fds_err_setk(err, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                          "no such index [%s] and [require_alias] request flag "
                          "is [true] and [%s] is not an alias", index, index);
    else if (pipeline && *pipeline && strcmp(pipeline, "_none"))
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "pipeline with id [%s] does not exist", pipeline);
    if (rc && err && !err->index[0])
        snprintf(err->index, sizeof err->index, "%s", index);
    return rc;
}

/* if_seq_no / if_primary_term / version / version_type from the URL.
 * Returns false with a 400 in `o` for bad values. */
static bool concurrency_params(fds_req *r, fds_resp *o, fds_write_op *op)
{
    const char *sq = fds__req_param(r, "if_seq_no");
    const char *pt = fds__req_param(r, "if_primary_term");
    const char *ver = fds__req_param(r, "version");
    const char *vt = fds__req_param(r, "version_type");
    char *end;
    if (sq || pt) {
        if (!sq || !pt) {
            fds__resp_errorf(o, 400, "action_request_validation_exception",
                            "Validation Failed: 1: ifSeqNo is set, but primary "
                            "term is [0];");
            return false;
        }
        op->if_seq_no = strtoll(sq, &end, 10);
        bool bad = *end || op->if_seq_no < 0;
        op->if_primary_term = strtoll(pt, &end, 10);
        if (bad || *end || op->if_primary_term < 1) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "bad [if_seq_no] [%s] or [if_primary_term] [%s]", sq, pt);
            return false;
        }
        op->check_seq_no = true;
    }
    if (vt && strcmp(vt, "internal") && strcmp(vt, "external") &&
        strcmp(vt, "external_gte")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "No version type match [%s]", vt);
        return false;
    }
    if (ver || (vt && strcmp(vt, "internal"))) {
        if (!vt || !strcmp(vt, "internal") || !ver) {
            fds__resp_errorf(o, 400, "action_request_validation_exception",
                            "Validation Failed: 1: internal versioning can not be "
                            "used for optimistic concurrency control. Please use "
                            "`if_seq_no` and `if_primary_term` instead;");
            return false;
        }
        op->version_type = strcmp(vt, "external_gte") ? FDS_VERSION_EXTERNAL
                                                      : FDS_VERSION_EXTERNAL_GTE;
        op->external_version = strtoll(ver, &end, 10);
        if (!*ver || *end || op->external_version < 0) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "failed to parse [version] with value [%s]", ver);
            return false;
        }
    }
    return true;
}

static const char *const WRITE_PARAMS[] = {
    "refresh", "op_type", "if_seq_no", "if_primary_term", "version",
    "version_type", "routing", "pipeline", "require_alias", NULL};

/* write_opts_check on the URL's pipeline and require_alias; the URL's
 * routing into op.  Returns false with the error answered in `o`. */
static bool url_write_opts(fds_req *r, fds_resp *o, fds_write_op *op)
{
    fds_err e;
    fds_err_clear(&e);
    op->routing = fds__req_param(r, "routing");
    op->routing_len = op->routing ? strlen(op->routing) : 0;
    if (!write_opts_check(r->store, r->seg[0], fds__req_param(r, "pipeline"),
                          fds__req_param_bool(r, "require_alias", false), &e))
        return true;
    fds__resp_error(o, &e);
    return false;
}

void fds__h_doc_put(fds_req *r, fds_resp *o, bool create_only)
{
    if (!refresh_ok(r, o))
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
        !concurrency_params(r, o, &op) || !id_valid(o, &op) ||
        !url_write_opts(r, o, &op))
        return;
    fds_index *ix = NULL;
    fds_err ce;
    fds_err_clear(&ce);
    if (index_for_write(r->store, r->seg[0], &ix, &ce)) {
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
    int rc = fds_index_write(ix, &op, 1, &w, want_refresh(r), &e);
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
    write_single(o, fds_index_name(ix), &op, &w, forced_refresh(r), NULL);
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
    sb_json_str(b, index);
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
    sb_resp(o, status, &b);
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
    sb_json_str(b, d->index);
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
        int drc = fds__index_or_alias(r->store, md->index, false, &ix, &de);
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
    sb_resp(o, 200, &b);
}

void fds__h_doc_delete(fds_req *r, fds_resp *o)
{
    if (!refresh_ok(r, o))
        return;
    fds_write_op op = {.type = FDS_OP_DELETE, .id = r->seg[2],
                       .id_len = strlen(r->seg[2])};
    if (!fds__req_check_params(r, o, WRITE_PARAMS) ||
        !concurrency_params(r, o, &op) || !id_valid(o, &op) ||
        !url_write_opts(r, o, &op))
        return;
    fds_index *ix = NULL;
    fds_err e;
    fds_err_clear(&e);
    /* through an alias: its write index */
    int rc = fds__index_or_alias(r->store, r->seg[0], true, &ix, &e);
    if (rc)
        return fds__resp_error(o, &e);
    fds_write_result w;
    fds_err_clear(&e);
    rc = fds_index_write(ix, &op, 1, &w, want_refresh(r), &e);
    if (rc || w.code) {
        fds_index_release(ix);
        return fds__resp_error(o, rc ? &e : &w.err);
    }
    write_single(o, fds_index_name(ix), &op, &w, forced_refresh(r), NULL);
    fds_index_release(ix);
}

/* ---- _update --------------------------------------------------------------- */

/* An update request: the parts of its body (pointers into the body text)
 * and of its URL or bulk action line. */
typedef struct upd_req {
    const char *id;
    size_t id_len;
    const char *routing;     /* NULL: the id's shard */
    const char *body;        /* the whole body text */
    size_t doc_s, doc_e;     /* "doc" value: body[doc_s..doc_e), or doc_e 0 */
    size_t ups_s, ups_e;     /* "upsert" value, or ups_e 0 */
    bool doc_as_upsert, detect_noop;
    bool check_seq_no;       /* if_seq_no / if_primary_term given */
    int64_t if_seq_no, if_primary_term;
    unsigned retries;        /* retry_on_conflict */
    fds__source_spec src;    /* the body's _source (src.given), owned */
    const fds__source_spec *dflt_src; /* the URL's, or NULL */
} upd_req;

/* The members of Elasticsearch's UpdateRequest body (its PARSER). */
static const char *const UPDATE_FIELDS[] = {
    "doc", "upsert", "doc_as_upsert", "detect_noop", "script", "scripted_upsert",
    "_source", NULL};

/* Lucene's LevenshteinDistance similarity: 1 - distance / longer length. */
static float name_similarity(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (!la || !lb || la > 64 || lb > 64)
        return 0;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return 1.0f - (float)row[lb] / (float)(la > lb ? la : lb);
}

/* Elasticsearch's ObjectParser error for an unknown member, with its
 * suggestion (SuggestingErrorOnUnknown: names more than 0.5 similar). */
static int unknown_field(const char *parser, const char *name,
                         const char *const *known, fds_err *err)
{
    const char *best = NULL;
    float bs = 0.5f;
    for (const char *const *k = known; *k; k++) {
        float sim = name_similarity(name, *k);
        if (sim > bs) {
            bs = sim;
            best = *k;
        }
    }
    if (best)
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                            "[%s] unknown field [%s] did you mean [%s]?", parser,
                            name, best);
    return fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                        "[%s] unknown field [%s]", parser, name);
}

/* Read an update body (`len` bytes) into u.  Returns 0 or an error with
 * `err` filled (400s: parse errors, scripts, a missing doc). */
static int update_parse(const char *body, size_t len, upd_req *u, fds_err *err)
{
    u->body = body;
    u->detect_noop = true;
    cJSON *j = NULL;
    fds_req tmp = {.body = body, .body_len = len};
    int rc = fds__body_json(&tmp, &j, err);
    if (!rc && j)
        rc = fds_json_check_body(body, len, err);
    if (!rc && j && !cJSON_IsObject(j))
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                          "the update body must be a JSON object");
    for (cJSON *c = j ? j->child : NULL; c && !rc; c = c->next) {
        const char *k = c->string;
        if (!strcmp(k, "doc") || !strcmp(k, "upsert")) {
            if (!cJSON_IsObject(c))
                rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                                  "[UpdateRequest] [%s] must be an object", k);
            else if (!strcmp(k, "doc"))
                rc = fds__json_member(body, len, k, &u->doc_s, &u->doc_e);
            else
                rc = fds__json_member(body, len, k, &u->ups_s, &u->ups_e);
        } else if (!strcmp(k, "doc_as_upsert") || !strcmp(k, "detect_noop")) {
            if (!cJSON_IsBool(c))
                rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                                  "[UpdateRequest] [%s] must be a boolean", k);
            else if (!strcmp(k, "doc_as_upsert"))
                u->doc_as_upsert = cJSON_IsTrue(c);
            else
                u->detect_noop = cJSON_IsTrue(c);
        } else if (!strcmp(k, "script") || !strcmp(k, "scripted_upsert")) {
            rc = fds_err_setk(err, FDS_EUNSUPPORTED, FDS_KIND_INVALID_ARGUMENT,
                              "scripts are not supported: [%s] cannot be used; "
                              "update with a partial document ([doc])", k);
        } else if (!strcmp(k, "_source")) {
            rc = fds__source_spec_json(c, &u->src, err);
        } else {
            rc = unknown_field("UpdateRequest", k, UPDATE_FIELDS, err);
        }
    }
    cJSON_Delete(j);
    if (!rc && !u->doc_e)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                          "Validation Failed: 1: script or doc is missing;");
    if (!rc && u->check_seq_no && u->retries)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                          "Validation Failed: 1: compare and write operations "
                          "can not be retried;");
    return rc;
}

/* The "get" object of an update answer (GetResult#toXContentEmbedded). */
static void update_get(upd_answer *a, const upd_req *u, int64_t seq_no,
                       const uint8_t *src, size_t len)
{
    const fds__source_spec *sp = u->src.given ? &u->src : u->dflt_src;
    if (!sp || !sp->given || !sp->fetch)
        return;
    fds_strbuf_printf(&a->get, "{\"_seq_no\":%lld,\"_primary_term\":1,"
                      "\"found\":true,\"_source\":", (long long)seq_no);
    fds__source_spec_put(&a->get, sp, src, len);
    fds_strbuf_putc(&a->get, '}');
}

/* Run update `u` on `ix` (Elasticsearch's UpdateHelper): read the current
 * document, merge `doc` into it (or index the upsert when it is missing),
 * and write the result only if the document is still the one read
 * (if_seq_no on its seq_no), retrying a lost race u->retries times.  The
 * outcome is in *w (w->code and w->err on failure) and *a; *op is the op
 * written (its type gives the answer's result and status). */
static void update_run(fds_index *ix, const upd_req *u, bool refresh,
                       fds_write_op *op, fds_write_result *w, upd_answer *a)
{
    const char *doc = u->body + u->doc_s;
    size_t doc_len = u->doc_e - u->doc_s;
    for (unsigned attempt = 0;; attempt++) {
        memset(w, 0, sizeof *w);
        snprintf(w->id, sizeof w->id, "%.*s", (int)u->id_len, u->id);
        size_t rlen = u->routing ? strlen(u->routing) : 0;
        *op = (fds_write_op){.type = FDS_OP_INDEX, .id = u->id, .id_len = u->id_len,
                             .routing = u->routing, .routing_len = rlen,
                             .check_seq_no = u->check_seq_no,
                             .if_seq_no = u->if_seq_no,
                             .if_primary_term = u->if_primary_term};
        fds_doc cur;
        int rc = fds_index_get_routed(ix, u->id, u->id_len, u->routing, rlen,
                                      true, &cur, &w->err);
        fds_strbuf merged = {0};
        if (rc == FDS_ENOTFOUND) {
            /* doc_as_upsert: the doc is the upsert, whatever `upsert` says
             * (UpdateHelper.prepareUpsert) */
            if (u->doc_as_upsert && doc_len) {
                op->src = (const uint8_t *)doc;
                op->src_len = doc_len;
            } else if (u->ups_e) {
                op->src = (const uint8_t *)u->body + u->ups_s;
                op->src_len = u->ups_e - u->ups_s;
            } else {
                fds_err_clear(&w->err);
                w->code = fds_err_setk(&w->err, FDS_ENOTFOUND,
                                       FDS_KIND_DOCUMENT_MISSING,
                                       "[%s]: document missing", w->id);
                return;
            }
            op->type = FDS_OP_CREATE;
        } else if (rc) {
            w->code = rc;
            return;
        } else if (!fds_mapping_source_enabled(fds_index_mapping(ix))) {
            /* UpdateHelper: nothing to merge the change into */
            free(cur.src);
            fds_err_clear(&w->err);
            w->code = fds_err_setk(&w->err, FDS_EINVAL, FDS_KIND_SOURCE_MISSING,
                                   "[%s]: document source missing", w->id);
            return;
        } else {
            bool modified = false;
            rc = fds__json_merge((const char *)cur.src, cur.src_len, doc, doc_len,
                                 &merged, &modified);
            bool same = !u->check_seq_no ||
                        (u->if_seq_no == cur.seq_no && u->if_primary_term == 1);
            if (!rc && !modified && u->detect_noop && same) {
                a->noop = true;
                w->version = cur.version;
                w->seq_no = cur.seq_no;
                update_get(a, u, cur.seq_no, cur.src, cur.src_len);
                free(cur.src);
                free(merged.p);
                return;
            }
            free(cur.src);
            if (rc) {
                free(merged.p);
                w->code = rc == FDS_ETOOBIG
                    ? fds_err_setk(&w->err, rc, FDS_KIND_INVALID_ARGUMENT,
                                   "[%s]: the update and the document have too "
                                   "many fields in one object to merge", w->id)
                    : fds_err_setk(&w->err, rc, rc == FDS_ENOMEM ? FDS_KIND_INTERNAL
                                                                 : FDS_KIND_DOCUMENT_PARSE,
                                   "[%s]: cannot merge the update into the "
                                   "document", w->id);
                return;
            }
            op->src = (const uint8_t *)merged.p;
            op->src_len = merged.len;
            if (!u->check_seq_no) {
                op->check_seq_no = true;
                op->if_seq_no = cur.seq_no;
                op->if_primary_term = 1;
            }
        }
        fds_err e;
        fds_err_clear(&e);
        rc = fds_index_write(ix, op, 1, w, refresh, &e);
        if (rc) {
            w->code = rc;
            w->err = e;
        }
        if (!w->code)
            update_get(a, u, w->seq_no, op->src, op->src_len);
        free(merged.p);
        op->src = NULL;
        op->src_len = 0;
        if (w->code != FDS_ECONFLICT || u->check_seq_no || attempt >= u->retries)
            return;
    }
}

/* retry_on_conflict: a count of retries. */
static int parse_retries(const char *v, unsigned *out, fds_err *err)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < 0 || n > FDS_UPDATE_RETRIES_MAX)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[retry_on_conflict] must be a count from 0 to %d, "
                            "got [%s]", FDS_UPDATE_RETRIES_MAX, v);
    *out = (unsigned)n;
    return 0;
}

static const char *const UPDATE_PARAMS[] = {
    "refresh", "if_seq_no", "if_primary_term", "retry_on_conflict", "_source",
    "_source_includes", "_source_excludes", "require_alias", "routing", NULL};

void fds__h_update(fds_req *r, fds_resp *o)
{
    if (!refresh_ok(r, o))
        return;
    /* an update's id is required, as a delete's is (id_valid) */
    fds_write_op cop = {.type = FDS_OP_DELETE, .id = r->seg[2],
                        .id_len = strlen(r->seg[2])};
    if (!fds__req_check_params(r, o, UPDATE_PARAMS) ||
        !concurrency_params(r, o, &cop) || !id_valid(o, &cop))
        return;
    upd_req u = {.id = cop.id, .id_len = cop.id_len,
                 .routing = fds__req_param(r, "routing"),
                 .check_seq_no = cop.check_seq_no, .if_seq_no = cop.if_seq_no,
                 .if_primary_term = cop.if_primary_term};
    fds_err e;
    fds_err_clear(&e);
    fds__source_spec url_src = {0};
    u.dflt_src = &url_src;
    const char *retries = fds__req_param(r, "retry_on_conflict");
    int rc = retries ? parse_retries(retries, &u.retries, &e) : 0;
    if (!rc)
        rc = write_opts_check(r->store, r->seg[0], NULL,
                              fds__req_param_bool(r, "require_alias", false), &e);
    if (!rc)
        rc = fds__source_spec_params(r, &url_src, &e);
    if (!rc) /* a _source in the body wins over the URL's */
        rc = update_parse(r->body, r->body_len, &u, &e);
    fds_index *ix = NULL;
    if (!rc)
        rc = index_for_write(r->store, r->seg[0], &ix, &e);
    if (rc) {
        if (!e.index[0] && e.kind != FDS_KIND_VALIDATION &&
            e.kind != FDS_KIND_CONTENT_PARSE)
            snprintf(e.index, sizeof e.index, "%s", r->seg[0]);
        fds__source_spec_free(&u.src);
        fds__source_spec_free(&url_src);
        return fds__resp_error(o, &e);
    }
    fds_write_op op;
    fds_write_result w;
    upd_answer a = {0};
    update_run(ix, &u, want_refresh(r), &op, &w, &a);
    if (w.code) {
        if (!w.err.index[0])
            snprintf(w.err.index, sizeof w.err.index, "%s", fds_index_name(ix));
        fds__resp_error(o, &w.err);
    } else {
        write_single(o, fds_index_name(ix), &op, &w, forced_refresh(r), &a);
    }
    free(a.get.p);
    fds__source_spec_free(&u.src);
    fds__source_spec_free(&url_src);
    fds_index_release(ix);
}

/* ---- _bulk ------------------------------------------------------------------ */

typedef struct bulk_item {
    char action[8];          /* "index", "create", "delete", "update" */
    char *index;             /* malloc'd */
    fds_write_op op;
    fds_write_result *res;   /* the item's in bulk_parse's array of
                                results, contiguous in item order */
    char *pipeline;          /* malloc'd, or NULL: the request's */
    int require_alias;       /* -1: the request's; 0; 1 */
    char *routing;           /* malloc'd, or NULL: the request's */
    bool dynamic_templates;  /* a non-empty dynamic_templates (refused) */
    int retries;             /* retry_on_conflict; -1: none given */
    fds__source_spec src;    /* update: its own _source (src.given) */
    upd_answer upd;          /* update: noop and "get" */
} bulk_item;

static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

static bool blank(const char *p, const char *e)
{
    for (; p < e; p++)
        if (!strchr(" \t\r", *p))
            return false;
    return true;
}

/* The text of the number an action line gives to `key` (`_id`, `routing`,
 * ...): Elasticsearch reads such a number as its text, so 9007199254740993
 * keeps every digit (a double would not) and 1.0 stays "1.0".  Scans
 * p[0..end) for `key` in the action's object (depth 2); NULL when not
 * there. */
static const char *member_number_text(const char *p, const char *end,
                                      const char *key, size_t *len)
{
    size_t kl = strlen(key);
    int depth = 0;
    while (p < end) {
        char ch = *p++;
        if (ch == '{' || ch == '[')
            depth++;
        else if (ch == '}' || ch == ']')
            depth--;
        if (ch != '"')
            continue;
        const char *s = p;
        while (p < end && *p != '"')
            p += *p == '\\' ? 2 : 1;
        if (p >= end)
            return NULL;
        bool is_key = depth == 2 && (size_t)(p - s) == kl && !memcmp(s, key, kl);
        const char *q = ++p;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (!is_key || q >= end || *q != ':')
            continue;
        for (q++; q < end && (*q == ' ' || *q == '\t' || *q == '\r');)
            q++;
        const char *n0 = q;
        while (q < end && ((*q >= '0' && *q <= '9') || *q == '-' || *q == '+' ||
                           *q == '.' || *q == 'e' || *q == 'E'))
            q++;
        if (q > n0) {
            *len = (size_t)(q - n0);
            return n0;
        }
    }
    return NULL;
}

/* Set it->op.id to a copy of id[0..len).  A failed copy fails the item
 * (it must never become a write under an assigned id). */
static void bulk_set_id(bulk_item *it, const char *id, size_t len)
{
    free((char *)it->op.id);
    it->op.id = strndup(id, len);
    it->op.id_len = it->op.id ? len : 0;
    if (!it->op.id)
        it->res->code = fds_err_setk(&it->res->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                    "out of memory copying the _id");
}

/* A number of an action line that must be a long (if_seq_no,
 * if_primary_term, version): whole and within int64_t, never a cast of an
 * out-of-range double (undefined behaviour).  Returns 0 or FDS_EPARSE. */
static int meta_long(const cJSON *m, size_t line, int64_t *out, fds_err *err)
{
    double v = m->valuedouble;
    /* [-2^63, 2^63): both bounds are exact doubles */
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0) ||
        v != floor(v))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                            "Action/metadata line [%zu]: [%s] must be a long, "
                            "got [%.17g]", line, m->string, v);
    *out = (int64_t)v;
    return 0;
}

/* Size of the buffer meta_text writes a number's text to when the line
 * does not show it: %.17g of any double fits. */
#define META_NUMBER_TEXT_MAX 32

/* The text Elasticsearch's parser.text() reads from the value of member m
 * of action line p[0..end) -- a string, number or boolean, the only values
 * the caller passes: the string itself, the number as written
 * (member_number_text; `buf` holds cJSON's value should the text not be
 * found), "true" or "false".  Its length in *len. */
static const char *meta_text(const cJSON *m, const char *p, const char *end,
                             char buf[META_NUMBER_TEXT_MAX], size_t *len)
{
    if (cJSON_IsString(m)) {
        *len = strlen(m->valuestring); /* a NUL inside was refused */
        return m->valuestring;
    }
    if (cJSON_IsBool(m)) {
        *len = cJSON_IsTrue(m) ? 4 : 5;
        return cJSON_IsTrue(m) ? "true" : "false";
    }
    const char *t = member_number_text(p, end, m->string, len);
    if (t)
        return t;
    *len = (size_t)snprintf(buf, META_NUMBER_TEXT_MAX, "%.17g", m->valuedouble);
    return buf;
}

/* A long given as a string ("version":"5"), as Elasticsearch's parser
 * coerces it (AbstractXContentParser.toLong with coerce): a whole number,
 * else a decimal one truncated toward zero, within int64_t.  Returns 0 or
 * FDS_EPARSE with Elasticsearch's reason. */
static int text_long(const char *t, size_t n, int64_t *out, fds_err *err)
{
    char *s = strndup(t, n);
    if (!s)
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    char *e = NULL;
    errno = 0;
    long long v = isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+'
                      ? strtoll(s, &e, 10) : 0;
    int rc = 0;
    if (e && !*e && errno != ERANGE) {
        *out = v;
        free(s);
        return 0;
    }
    /* BigDecimal's syntax: a sign, digits with at most one point (one
     * digit at least), an exponent */
    size_t i = s[0] == '-' || s[0] == '+', digits = 0;
    while (i < n && isdigit((unsigned char)s[i]))
        i++, digits++;
    if (i < n && s[i] == '.')
        for (i++; i < n && isdigit((unsigned char)s[i]);)
            i++, digits++;
    if (digits && i < n && (s[i] == 'e' || s[i] == 'E')) {
        if (++i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t d0 = i;
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
        if (i == d0)
            digits = 0;
    }
    long double d = digits && i == n ? strtold(s, NULL) : 0;
    if (!digits || i != n)
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                          "For input string: \"%s\"", s);
    else if (!(d < 9223372036854775808.0L && d > -9223372036854775809.0L))
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                          "Value [%s] is out of range for a long", s);
    else
        *out = (int64_t)truncl(d);
    free(s);
    return rc;
}

/* A long member of an action line (if_seq_no, if_primary_term, version,
 * retry_on_conflict): a number (meta_long) or a string that holds one
 * (text_long).  Returns 0 or FDS_EPARSE. */
static int meta_long_any(const cJSON *m, size_t line, int64_t *out,
                         fds_err *err)
{
    if (cJSON_IsNumber(m))
        return meta_long(m, line, out, err);
    if (cJSON_IsString(m))
        return text_long(m->valuestring, strlen(m->valuestring), out, err);
    return fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                        "Action/metadata line [%zu]: [%s] must be a long, "
                        "got [%s]", line, m->string,
                        cJSON_IsTrue(m) ? "true" : "false");
}

/* The keys a plain action line may give (see action_plain). */
enum { PLAIN_INDEX, PLAIN_ID, PLAIN_ROUTING, PLAIN_NKEYS };

static const char *const PLAIN_KEYS[PLAIN_NKEYS] = {"_index", "_id", "routing"};

/* An action line as bulk clients write nearly all of them:
 * {"index":{"_index":"logs","_id":"42"}}, compact. */
typedef struct plain_action {
    const char *action;          /* "index", "create", "delete" or "update" */
    const char *val[PLAIN_NKEYS]; /* into the line; NULL: not given */
    size_t len[PLAIN_NKEYS];
} plain_action;

/* A JSON string at p[0..end) of printable ASCII without escapes: its
 * length up to the closing quote, or -1. */
static ptrdiff_t plain_string(const char *p, const char *end)
{
    const char *q = p;
    while (q < end && *q != '"') {
        if (*q < 0x20 || *q > 0x7e || *q == '\\')
            return -1;
        q++;
    }
    return q < end ? q - p : -1;
}

/* Whether the action line p[0..end) is a plain one: with no whitespace,
 * one action holding only "_index", "_id" and "routing" (each at most
 * once) with string values of printable ASCII and no escapes.  Such a line
 * is valid UTF-8 and JSON with no duplicate key, and means to the general
 * parser of bulk_parse what `pa` says; any other line (spaces, numbers,
 * other keys, errors) goes to that parser, which words the errors. */
static bool action_plain(const char *p, const char *end, plain_action *pa)
{
    static const char *const ACTIONS[] = {"index", "create", "delete", "update"};
    memset(pa, 0, sizeof *pa);
    if (end - p < 2 || p[0] != '{' || p[1] != '"')
        return false;
    p += 2;
    ptrdiff_t l = plain_string(p, end);
    for (size_t a = 0; l > 0 && a < sizeof ACTIONS / sizeof *ACTIONS; a++)
        if ((size_t)l == strlen(ACTIONS[a]) && !memcmp(p, ACTIONS[a], (size_t)l))
            pa->action = ACTIONS[a];
    if (!pa->action)
        return false;
    p += l + 1;
    if (end - p < 2 || p[0] != ':' || p[1] != '{')
        return false;
    p += 2;
    if (p < end && *p == '}') {
        p++;
    } else {
        for (;;) {
            if (p >= end || *p != '"')
                return false;
            p++;
            if ((l = plain_string(p, end)) < 0)
                return false;
            int k = 0;
            while (k < PLAIN_NKEYS && !((size_t)l == strlen(PLAIN_KEYS[k]) &&
                                        !memcmp(p, PLAIN_KEYS[k], (size_t)l)))
                k++;
            if (k == PLAIN_NKEYS || pa->val[k])
                return false;
            p += l + 1;
            if (end - p < 2 || p[0] != ':' || p[1] != '"')
                return false;
            p += 2;
            if ((l = plain_string(p, end)) < 0)
                return false;
            pa->val[k] = p;
            pa->len[k] = (size_t)l;
            p += l + 1;
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            return false;
        }
    }
    return end - p == 1 && *p == '}';
}

/* What item `it` owns (its strings, its update's source spec). */
static void bulk_item_free(bulk_item *it)
{
    free(it->index);
    free((char *)it->op.id);
    free(it->pipeline);
    free(it->routing);
    free(it->upd.get.p);
    fds__source_spec_free(&it->src);
}

/* Duplicate t[0..n) into *dst (freeing what it held).  0 or FDS_ENOMEM. */
static int meta_dup(char **dst, const char *t, size_t n)
{
    free(*dst);
    *dst = strndup(t, n);
    return *dst ? 0 : FDS_ENOMEM;
}

/* Member m of action line p[0..end) (number `line`) into item `it`, as
 * Elasticsearch's BulkRequestParser reads it: any value of `_index`,
 * `_id`, `routing`, `pipeline`, `op_type` and `version_type` is taken as
 * its text ("_id": 1 is the id "1", "_id": true the id "true"); the longs
 * take a number or a string holding one; `require_alias` a boolean or
 * "true"/"false"; a null is ignored whatever the key; an array, or an
 * object other than `_source` and `dynamic_templates`, is refused.
 * Returns 0, FDS_EPARSE (err filled) or FDS_ENOMEM. */
/* Elasticsearch's Versions.MATCH_ANY: the version of a write that gives
 * none */
#define BULK_VERSION_MATCH_ANY (-3)

static int bulk_meta(bulk_item *it, const cJSON *m, const char *p,
                     const char *end, size_t line, bool *has_version,
                     int *vtype, fds_err *err)
{
    const char *k = m->string;
    if (cJSON_IsNull(m))
        return 0;
    if (cJSON_IsArray(m) || (cJSON_IsObject(m) && strcmp(k, "_source") &&
                             strcmp(k, "dynamic_templates")))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                            "Malformed action/metadata line [%zu], expected a "
                            "simple value for field [%s] but found [%s]", line,
                            k, cJSON_IsArray(m) ? "START_ARRAY" : "START_OBJECT");
    char nbuf[META_NUMBER_TEXT_MAX];
    size_t tl = 0;
    const char *t = cJSON_IsObject(m) ? NULL : meta_text(m, p, end, nbuf, &tl);
    int64_t v = 0;
    int rc = 0;
    if (!strcmp(k, "_index")) {
        rc = meta_dup(&it->index, t, tl);
    } else if (!strcmp(k, "_id")) {
        bulk_set_id(it, t, tl);
    } else if (!strcmp(k, "routing")) {
        rc = meta_dup(&it->routing, t, tl);
    } else if (!strcmp(k, "pipeline")) {
        rc = meta_dup(&it->pipeline, t, tl);
    } else if (!strcmp(k, "if_seq_no")) {
        it->op.check_seq_no = true;
        rc = meta_long_any(m, line, &it->op.if_seq_no, err);
    } else if (!strcmp(k, "if_primary_term")) {
        rc = meta_long_any(m, line, &it->op.if_primary_term, err);
    } else if (!strcmp(k, "version")) {
        rc = meta_long_any(m, line, &it->op.external_version, err);
        *has_version = true;
    } else if (!strcmp(k, "version_type")) {
        /* an fds_version_type, checked with "version" by the caller */
        if ((tl == 8 || tl == 12) && !memcmp(t, "external_gte", tl))
            *vtype = tl == 12 ? FDS_VERSION_EXTERNAL_GTE : FDS_VERSION_EXTERNAL;
        else if (tl == 8 && !memcmp(t, "internal", 8))
            *vtype = FDS_VERSION_INTERNAL;
        else
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "No version type match [%.*s]", (int)tl, t);
    } else if (!strcmp(k, "require_alias")) {
        if (cJSON_IsBool(m) || (tl == 4 && !memcmp(t, "true", 4)) ||
            (tl == 5 && !memcmp(t, "false", 5)))
            it->require_alias = t[0] == 't';
        else
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "Failed to parse value [%.*s] as only [true] or "
                              "[false] are allowed.", (int)tl, t);
    } else if (!strcmp(k, "retry_on_conflict")) {
        rc = meta_long_any(m, line, &v, err);
        if (!rc && (v < 0 || v > FDS_UPDATE_RETRIES_MAX))
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "Action/metadata line [%zu]: "
                              "[retry_on_conflict] must be from 0 to %d",
                              line, FDS_UPDATE_RETRIES_MAX);
        it->retries = (int)v;
    } else if (!strcmp(k, "_source")) {
        /* the "get" of an update's answer; an index or create item has
         * none (Elasticsearch reads it for every action) */
        rc = fds__source_spec_json(m, &it->src, err);
    } else if (!strcmp(k, "op_type") && !strcmp(it->action, "index")) {
        if (tl == 6 && !memcmp(t, "create", 6))
            snprintf(it->action, sizeof it->action, "create");
        else if (!(tl == 5 && !memcmp(t, "index", 5)))
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "Action/metadata line [%zu]: opType must be "
                              "'create' or 'index', found: [%.*s]", line,
                              (int)tl, t);
    } else if (!strcmp(k, "dynamic_templates") && cJSON_IsObject(m)) {
        it->dynamic_templates = m->child != NULL;
    } else {
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                          "Action/metadata line [%zu] contains an unknown "
                          "parameter [%s]", line, k);
    }
    if (rc == FDS_ENOMEM)
        fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return rc;
}

/* Parse the NDJSON body into items.  Returns 0 or fills err (400). */
static int bulk_parse(fds_req *r, const char *default_index, bulk_item **out,
                      size_t *nout, fds_err *err)
{
    const char *p = r->body, *end = r->body + r->body_len;
    /* an item per line at most: one allocation, never grown, with the
     * results of the items after them */
    size_t cap = 1, n = 0, line = 0;
    for (const char *q = p; q < end && (q = memchr(q, '\n', (size_t)(end - q)));
         q++)
        cap++;
    bulk_item *items = calloc(cap, sizeof *items + sizeof(fds_write_result));
    if (!items)
        return FDS_ENOMEM;
    fds_write_result *results = (fds_write_result *)(items + cap);
    int rc = 0;
    while (p < end && !rc) {
        const char *le = line_end(p, end);
        line++;
        if (blank(p, le)) {
            p = le + 1;
            continue;
        }
        plain_action pa;
        bool plain = action_plain(p, le, &pa);
        cJSON *a = NULL;
        if (!plain &&
            !fds_utf8_valid((const uint8_t *)p, (size_t)(le - p))) {
            /* as Elasticsearch's JSON parser: the whole request is refused */
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                              "Invalid UTF-8 in action/metadata line [%zu]", line);
            break;
        }
        if (!plain)
            a = cJSON_ParseWithLength(p, (size_t)(le - p));
        bool nul = false;
        if (a && (rc = fds_json_check_body_nul(p, (size_t)(le - p), &nul,
                                               err))) {
            cJSON_Delete(a);
            break;
        }
        if (a && cJSON_IsObject(a) && !a->child) {
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "Malformed action/metadata line [%zu], expected "
                              "FIELD_NAME but found [END_OBJECT]", line);
            cJSON_Delete(a);
            break;
        }
        if (!plain && (!a || !cJSON_IsObject(a) || !a->child ||
                       a->child->next || !cJSON_IsObject(a->child))) {
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                             "Malformed action/metadata line [%zu], expected "
                             "START_OBJECT with one action", line);
            cJSON_Delete(a);
            break;
        }
        if (nul) {
            /* the parser's strings end at a NUL: an _id would be cut short
             * (as "%00" in a path is refused, server.c) */
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "Malformed action/metadata line [%zu]: a string "
                              "holds a NUL character (\\u0000), which "
                              "_index, _id, routing and pipeline cannot",
                              line);
            cJSON_Delete(a);
            break;
        }
        const char *act = plain ? pa.action : a->child->string;
        if (strcmp(act, "index") && strcmp(act, "create") &&
            strcmp(act, "delete") && strcmp(act, "update")) {
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                             "Malformed action/metadata line [%zu], expected "
                             "field [create], [delete], [index] or [update] but "
                             "found [%s]", line, act);
            cJSON_Delete(a);
            break;
        }
        bulk_item *it = &items[n];
        it->res = &results[n++];
        it->require_alias = -1;
        it->retries = -1;
        snprintf(it->action, sizeof it->action, "%s", act);
        act = it->action; /* `a` is freed below */
        bool has_version = false;
        int vtype = FDS_VERSION_INTERNAL;
        if (plain) {
            if (pa.val[PLAIN_INDEX] &&
                !(it->index = strndup(pa.val[PLAIN_INDEX], pa.len[PLAIN_INDEX])))
                rc = FDS_ENOMEM;
            if (pa.val[PLAIN_ID])
                bulk_set_id(it, pa.val[PLAIN_ID], pa.len[PLAIN_ID]);
            if (pa.val[PLAIN_ROUTING] &&
                !(it->routing = strndup(pa.val[PLAIN_ROUTING],
                                        pa.len[PLAIN_ROUTING])))
                rc = FDS_ENOMEM;
        }
        for (cJSON *m = a ? a->child->child : NULL; m && !rc; m = m->next)
            rc = bulk_meta(it, m, p, le, line, &has_version, &vtype, err);
        cJSON_Delete(a);
        if (rc)
            break;
        /* DocWriteRequest.validateSeqNoBasedCASParams, checked by
         * BulkRequest#validate for the whole request: an external version
         * must be >= 0 (no version is Versions.MATCH_ANY, -3), and internal
         * versioning takes no version at all */
        if (vtype != FDS_VERSION_INTERNAL) {
            if (!has_version)
                it->op.external_version = BULK_VERSION_MATCH_ANY;
            it->op.version_type = vtype;
            if (it->op.external_version < 0) {
                rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                                  "Validation Failed: 1: illegal version value "
                                  "[%lld] for version type [%s];",
                                  (long long)it->op.external_version,
                                  vtype == FDS_VERSION_EXTERNAL_GTE
                                      ? "EXTERNAL_GTE" : "EXTERNAL");
                break;
            }
        } else if (has_version &&
                   it->op.external_version != BULK_VERSION_MATCH_ANY) {
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                              "Validation Failed: 1: internal versioning can "
                              "not be used for optimistic concurrency control. "
                              "Please use `if_seq_no` and `if_primary_term` "
                              "instead;");
            break;
        }
        if (!it->index)
            it->index = default_index ? strdup(default_index) : NULL;
        if (!it->index) {
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                             "Validation Failed: 1: index is missing;");
            break;
        }
        p = le + 1;
        if (!strcmp(act, "delete")) {
            it->op.type = FDS_OP_DELETE;
            continue;
        }
        it->op.type = !strcmp(act, "create") ? FDS_OP_CREATE : FDS_OP_INDEX;
        if (p >= end) {
            /* an action line last, with no source line: Elasticsearch's
             * parser stops there and drops it */
            bulk_item_free(it);
            memset(it, 0, sizeof *it);
            n--;
            break;
        }
        const char *de = line_end(p, end);
        line++;
        if (de == end && (end == r->body || end[-1] != '\n')) {
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                             "The bulk request must be terminated by a newline "
                             "[\\n]");
            break;
        }
        size_t dl = (size_t)(de - p);
        while (dl && p[dl - 1] == '\r')
            dl--;
        it->op.src = (const uint8_t *)p;
        it->op.src_len = dl;
        p = de + 1;
    }
    *out = items;
    *nout = n;
    return rc;
}

static void bulk_items_free(bulk_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bulk_item_free(&items[i]);
    free(items);
}

int fds__bulk_parse(const char *body, size_t len, const char *default_index,
                    fds__bulk_visit visit, void *arg, fds_err *err)
{
    fds_req r = {.body = body, .body_len = len};
    bulk_item *items = NULL;
    size_t n = 0;
    int rc = bulk_parse(&r, default_index, &items, &n, err);
    for (size_t i = 0; i < n && visit && !rc; i++)
        visit(arg, items[i].action, items[i].index, &items[i].op);
    bulk_items_free(items, n);
    return rc;
}

/* Elasticsearch's BulkRequest#validate: the validation errors of every item,
 * numbered in one message ("Validation Failed: 1: id is missing;2: ...;"),
 * refuse the whole request before anything is written.  Returns 0, or
 * FDS_EINVAL (kind VALIDATION) / FDS_ENOMEM with `err` filled. */
static int bulk_validate(const bulk_item *items, size_t n, fds_err *err)
{
    fds_strbuf b = {0};
    unsigned nerr = 0;
    if (n == 0)
        fds_strbuf_printf(&b, "%u: no requests added;", ++nerr);
    for (size_t i = 0; i < n; i++) {
        const bulk_item *it = &items[i];
        char msg[FDS_ERR_REASON_MAX];
        bool required = it->op.type == FDS_OP_DELETE || !strcmp(it->action, "update");
        if (!it->res->code &&
            fds_write_id_validate(it->op.id, it->op.id_len, required, msg, sizeof msg))
            fds_strbuf_printf(&b, "%u: %s;", ++nerr, msg);
    }
    int rc = 0;
    if (b.oom)
        rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    else if (nerr)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                          "Validation Failed: %s", b.p);
    free(b.p);
    return rc;
}

/* Bytes of the answer reserved per item at once (it grows as needed). */
#define BULK_ITEM_ANSWER_BYTES 200

static const char *const BULK_PARAMS[] = {
    "refresh", "routing", "pipeline", "require_alias", "_source",
    "_source_includes", "_source_excludes", NULL};

/* Fail item `it` before it is written, with the error in `e`. */
static void bulk_item_fail(bulk_item *it, const fds_err *e)
{
    it->res->code = e->code ? e->code : FDS_EINVAL;
    it->res->err = *e;
    if (it->op.id)
        snprintf(it->res->id, sizeof it->res->id, "%.*s", (int)it->op.id_len,
                 it->op.id);
}

/* The options of each item, its own or the request's (URL parameters),
 * checked before anything is written: a refused item fails alone. */
static void bulk_check_opts(fds_req *r, bulk_item *items, size_t n)
{
    const char *pipeline = fds__req_param(r, "pipeline");
    const char *routing = fds__req_param(r, "routing");
    bool require_alias = fds__req_param_bool(r, "require_alias", false);
    for (size_t i = 0; i < n; i++) {
        bulk_item *it = &items[i];
        if (it->res->code)
            continue;
        fds_err e;
        fds_err_clear(&e);
        bool upd = !strcmp(it->action, "update");
        it->op.routing = it->routing ? it->routing : routing;
        it->op.routing_len = it->op.routing ? strlen(it->op.routing) : 0;
        if (write_opts_check(r->store, it->index,
                             upd ? NULL : it->pipeline ? it->pipeline : pipeline,
                             it->require_alias >= 0 ? it->require_alias == 1
                                                    : require_alias, &e) ||
            (it->dynamic_templates &&
             fds_err_setk(&e, FDS_EUNSUPPORTED, FDS_KIND_INVALID_ARGUMENT,
                          "[dynamic_templates] are not supported: mappings "
                          "have no dynamic templates")))
            bulk_item_fail(it, &e);
    }
}

/* Bulk update item `it`, alone on `ix` (it reads the current document). */
static void bulk_update(fds_index *ix, bulk_item *it, const fds__source_spec *url_src,
                        bool refresh)
{
    upd_req u = {.id = it->op.id, .id_len = it->op.id_len,
                 .routing = it->op.routing,
                 .check_seq_no = it->op.check_seq_no, .if_seq_no = it->op.if_seq_no,
                 .if_primary_term = it->op.if_primary_term,
                 .retries = it->retries > 0 ? (unsigned)it->retries : 0,
                 .dflt_src = it->src.given ? &it->src : url_src};
    fds_err e;
    fds_err_clear(&e);
    if (update_parse((const char *)it->op.src, it->op.src_len, &u, &e)) {
        bulk_item_fail(it, &e);
    } else {
        fds_write_op op;
        update_run(ix, &u, refresh, &op, it->res, &it->upd);
        it->op.type = op.type;
    }
    fds__source_spec_free(&u.src);
}

void fds__h_bulk(fds_req *r, fds_resp *o)
{
    if (!refresh_ok(r, o))
        return;
    if (!fds__req_check_params(r, o, BULK_PARAMS))
        return;
    long long t0 = fds__now_us();
    const char *dflt = r->nseg == 2 ? r->seg[0] : NULL;
    bulk_item *items = NULL;
    size_t n = 0;
    fds_err e;
    fds_err_clear(&e);
    fds__source_spec url_src = {0};
    int rc = bulk_parse(r, dflt, &items, &n, &e);
    if (!rc)
        rc = bulk_validate(items, n, &e);
    if (!rc)
        rc = fds__source_spec_params(r, &url_src, &e);
    if (rc)
        goto out_err;
    bulk_check_opts(r, items, n);
    bool refresh = want_refresh(r);
    /* consecutive items on the same index go to the store as one batch */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(items[j].index, items[i].index) &&
               strcmp(items[j].action, "update"))
            j++;
        if (j == i)
            j = i + 1; /* an update goes alone: it reads the current doc */
        size_t m = 0;
        for (size_t k = i; k < j; k++)
            m += !items[k].res->code;
        if (!m) { /* all refused already: the index is not even created */
            i = j;
            continue;
        }
        fds_index *ix = NULL;
        fds_err ie;
        fds_err_clear(&ie);
        index_for_write(r->store, items[i].index, &ix, &ie);
        for (size_t k = i; ix && k < j; k++) { /* an alias: answer the index */
            char *concrete = strcmp(items[k].index, fds_index_name(ix))
                                 ? strdup(fds_index_name(ix)) : NULL;
            if (concrete) {
                free(items[k].index);
                items[k].index = concrete;
            }
        }
        /* results go straight to the items' when none failed already */
        fds_write_op *ops = malloc(m * sizeof *ops);
        fds_write_result *res = m == j - i ? items[i].res
                                           : malloc(m * sizeof *res);
        if (ix && ops && res && !strcmp(items[i].action, "update")) {
            bulk_update(ix, &items[i], &url_src, false);
            if (refresh)
                fds_index_refresh(ix, NULL);
        } else if (ix && ops && res) {
            /* items that failed already (a refused option, an id that could
             * not be copied) are answered as they are, never written */
            m = 0;
            for (size_t k = i; k < j; k++)
                if (!items[k].res->code)
                    ops[m++] = items[k].op;
            fds_err be;
            fds_err_clear(&be);
            int brc = fds_index_write(ix, ops, m, res, false, &be);
            bool direct = res == items[i].res;
            for (size_t k = i, q = 0; k < j; k++) {
                if (direct) {
                    if (brc) { /* not what the write left in it */
                        memset(items[k].res, 0, sizeof *items[k].res);
                        bulk_item_fail(&items[k], &be);
                    }
                    continue;
                }
                if (items[k].res->code)
                    continue;
                if (brc)
                    bulk_item_fail(&items[k], &be);
                else
                    *items[k].res = res[q];
                q++;
            }
            if (refresh)
                fds_index_refresh(ix, NULL);
        } else {
            if (!ie.code)
                ie.code = FDS_ENOMEM;
            for (size_t k = i; k < j; k++)
                if (!items[k].res->code)
                    bulk_item_fail(&items[k], &ie);
        }
        free(ops);
        if (res != items[i].res)
            free(res);
        fds_index_release(ix);
        i = j;
    }
    bool errors = false;
    for (size_t i = 0; i < n; i++)
        errors |= items[i].res->code != 0;
    fds_strbuf b = {0};
    /* a created item's answer is ~190 bytes with a short index and id */
    fds_strbuf_reserve(&b, n * BULK_ITEM_ANSWER_BYTES);
    fds_strbuf_printf(&b, "{\"took\":%lld,\"errors\":%s,\"items\":[",
              (fds__now_us() - t0) / 1000, errors ? "true" : "false");
    for (size_t i = 0; i < n; i++) {
        fds_strbuf_puts(&b, i ? ",{\"" : "{\"");
        fds_strbuf_puts(&b, items[i].action);
        fds_strbuf_puts(&b, "\":");
        write_item(&b, items[i].index, &items[i].op, items[i].res, true,
                   forced_refresh(r), &items[i].upd);
        fds_strbuf_puts(&b, "}");
    }
    fds_strbuf_puts(&b, "]}");
    sb_resp(o, 200, &b);
    goto out;
out_err:
    fds__resp_error(o, &e);
out:
    fds__source_spec_free(&url_src);
    bulk_items_free(items, n);
}

/* ---- _reindex ------------------------------------------------------------------------ */

#define REINDEX_BATCH 1000      /* documents read and written at a time */
#define REINDEX_BATCH_MAX 10000 /* source.size at most (index.max_result_window) */
#define REINDEX_ERRS_MAX 8      /* validation errors listed at most */

/* Keys of the _reindex body (ReindexRequest's PARSER; `size` is the old
 * name of max_docs) and of its dest (IndexRequest's); source is a search
 * body: its keys are SOURCE_KEYS, a few refused by name. */
static const char *const REINDEX_KEYS[] = {"source", "dest", "max_docs", "size",
                                           "conflicts", "script"};
static const char *const REINDEX_SOURCE_KEYS[] = {"index", "query", "size", "_source",
                                                  "sort", "remote", "from",
                                                  "stored_fields", "slice"};
static const char *const REINDEX_DEST_KEYS[] = {"index", "op_type", "version_type",
                                                "routing", "pipeline"};
static const char *const REINDEX_PARAMS[] = {"refresh", "timeout", "wait_for_active_shards",
                                             "requests_per_second", "max_docs",
                                             "wait_for_completion", "slices", "scroll",
                                             "require_alias", NULL};

/* A key of `o` not in keys[0..n): its name, or NULL. */
static const char *unknown_key(const cJSON *o, const char *const *keys, size_t n)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        size_t k = 0;
        while (k < n && strcmp(keys[k], it->string))
            k++;
        if (k == n)
            return it->string;
    }
    return NULL;
}

/* max_docs (or its old name `size`) as a JSON number or URL text into
 * *out, Elasticsearch's words for a bad one in `o`. */
static bool reindex_max_docs(fds_resp *o, const cJSON *v, const char *text, uint64_t *out)
{
    double d;
    char buf[32];
    if (v) {
        if (!cJSON_IsNumber(v)) {
            fds__resp_errorf(o, 400, "x_content_parse_exception",
                            "[reindex] failed to parse field [max_docs]");
            return false;
        }
        d = v->valuedouble;
        snprintf(buf, sizeof buf, "%.0f", d);
    } else {
        char *end;
        d = strtod(text, &end);
        if (!*text || *end || d != (double)(long long)d) {
            fds__resp_errorf(o, 400, "number_format_exception",
                            "For input string: \"%s\"", text);
            return false;
        }
        snprintf(buf, sizeof buf, "%s", text);
    }
    if (d < 0) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[max_docs] parameter cannot be negative, found [%s]", buf);
        return false;
    }
    if (*out != UINT64_MAX && *out != (uint64_t)d) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[max_docs] set to two different values [%llu] and [%s]",
                        (unsigned long long)*out, buf);
        return false;
    }
    *out = (uint64_t)d;
    return true;
}

/* remote.<name>, a time value, read as Elasticsearch's
 * TimeValue.parseTimeValue reads one: a whole number and a unit (nanos,
 * micros, ms, s, m, h, d), or -1 / 0.  False with its error in `o`: a
 * missing unit is "unit is missing or unrecognized"; a number that is not
 * one, a parse_exception caused by Java's NumberFormatException ("borked"
 * ends in the unit d: "For input string: \"borke\""). */
static bool remote_timeout_ok(fds_resp *o, const cJSON *remote, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(remote, name);
    if (!cJSON_IsString(v) || !strcmp(v->valuestring, "-1") || !strcmp(v->valuestring, "0"))
        return true;
    static const char *const units[] = {"nanos", "micros", "ms", "s", "m", "h", "d"};
    const char *t = v->valuestring;
    size_t n = strlen(t), k = 0, ul = 0;
    while (k < 7 && !((ul = strlen(units[k])) <= n && !strcmp(t + n - ul, units[k])))
        k++;
    if (k == 7) {
        fds__resp_errorf(o, 400, "parse_exception", "failed to parse setting [%s] with "
                        "value [%s] as a time value: unit is missing or unrecognized",
                        name, t);
        return false;
    }
    char num[64];
    snprintf(num, sizeof num, "%.*s", (int)(n - ul), t);
    char *end;
    strtoll(num, &end, 10);
    if (num[0] && !*end)
        return true;
    cJSON *err = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(err, "error");
    char reason[160], cause[120];
    snprintf(reason, sizeof reason, "failed to parse [%s]", t);
    snprintf(cause, sizeof cause, "For input string: \"%s\"", num);
    cJSON *root = cJSON_AddArrayToObject(e, "root_cause"), *r0 = cJSON_CreateObject();
    cJSON_AddStringToObject(r0, "type", "parse_exception");
    cJSON_AddStringToObject(r0, "reason", reason);
    cJSON_AddItemToArray(root, r0);
    cJSON_AddStringToObject(e, "type", "parse_exception");
    cJSON_AddStringToObject(e, "reason", reason);
    cJSON *cb = cJSON_AddObjectToObject(e, "caused_by");
    cJSON_AddStringToObject(cb, "type", "number_format_exception");
    cJSON_AddStringToObject(cb, "reason", cause);
    cJSON_AddNumberToObject(err, "status", 400);
    fds__resp_json(o, 400, err);
    return false;
}

/* source.remote, refused in Elasticsearch's words where it has them: its
 * host must be scheme://host:port[/prefix], no other member than those
 * RemoteInfo reads, and the host in reindex.remote.whitelist -- which is
 * empty here, as Elasticsearch's default, so every remote is refused. */
static void reindex_remote(fds_resp *o, const cJSON *remote)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(remote, "host");
    const char *host = cJSON_IsString(h) ? h->valuestring : "";
    const char *sep = strstr(host, "://");
    const char *colon = sep ? strchr(sep + 3, ':') : NULL;
    const char *p = colon ? colon + 1 : NULL;
    while (p && *p >= '0' && *p <= '9')
        p++;
    if (!sep || sep == host || !colon || colon == sep + 3 || p == colon + 1 ||
        (*p && *p != '/'))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "[host] must be of the form [scheme]://[host]:[port]"
                               "(/[pathPrefix])? but was [%s]", host);
    if (!remote_timeout_ok(o, remote, "socket_timeout") ||
        !remote_timeout_ok(o, remote, "connect_timeout"))
        return;
    static const char *const known[] = {"host", "username", "password", "headers",
                                        "socket_timeout", "connect_timeout"};
    char extra[256] = "";
    const cJSON *it;
    cJSON_ArrayForEach(it, remote) {
        size_t k = 0;
        while (k < 6 && strcmp(known[k], it->string))
            k++;
        size_t l = strlen(extra);
        if (k == 6)
            snprintf(extra + l, sizeof extra - l, "%s%s", l ? "," : "", it->string);
    }
    if (extra[0])
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "Unsupported fields in [remote]: [%s]", extra);
    fds__resp_errorf(o, 400, "illegal_argument_exception",
                    "[%.*s] not whitelisted in reindex.remote.whitelist: fieldstore "
                    "reindexes from its own indices only",
                    (int)(p - (sep + 3)), sep + 3);
}

/* The URL's slices and requests_per_second (shared with the by-query
 * APIs: fds__scan_params_ok) and max_docs >= slices. */
static bool reindex_url_ok(fds_req *r, fds_resp *o, uint64_t max_docs)
{
    const char *sl = fds__req_param(r, "slices");
    char *end;
    unsigned long long n = sl ? strtoull(sl, &end, 10) : 1;
    if (sl && *sl && !*end && n >= 1 && max_docs != UINT64_MAX && max_docs < n) {
        fds__resp_errorf(o, 400, "action_request_validation_exception",
                        "Validation Failed: 1: [max_docs] should be >= [slices];");
        return false;
    }
    return fds__scan_params_ok(r, o);
}

/*
 * POST /_reindex: copy the documents of source.index that match
 * source.query (all without one) into dest.index, in _doc order (or
 * source.sort's) and in batches of source.size, with max_docs (with
 * conflicts=proceed: documents written, as Elasticsearch 8 counts),
 * source._source (the parts copied), dest.op_type (index or create),
 * dest.version_type (internal, external, external_gte), dest.routing (keep, discard,
 * =value) and conflicts (abort or proceed on a version conflict).  A scan
 * with search_after, so each batch starts where the last one ended.
 */
void fds__h_reindex(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, REINDEX_PARAMS))
        return;
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_json(r, &body, &e) ||
        fds_json_check_body(r->body, r->body_len, &e)) {
        cJSON_Delete(body);
        return fds__resp_error(o, &e);
    }
    cJSON *src = cJSON_GetObjectItemCaseSensitive(body, "source");
    cJSON *dst = cJSON_GetObjectItemCaseSensitive(body, "dest");
    const char *bad = NULL;
    fds__scan_job *j = NULL;
    fds__source_spec filter = {0};
    char *qbody = NULL;
    fds_index *from = NULL, *to = NULL;
    if (body && !cJSON_IsObject(body)) {
        fds__resp_errorf(o, 400, "parse_exception", "request body must be a JSON object");
        goto out;
    }
    const char *where = "reindex";
    if (!(bad = unknown_key(body, REINDEX_KEYS, 6)) &&
        (bad = unknown_key(dst, REINDEX_DEST_KEYS, 5)))
        where = "dest";
    if (bad) {
        fds__resp_errorf(o, 400, "x_content_parse_exception", "[%s] unknown field [%s]",
                        where, bad);
        goto out;
    }
    if ((bad = unknown_key(src, REINDEX_SOURCE_KEYS, 9))) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, bad);
        fds__resp_errorf(o, 400, "parsing_exception", "Unknown key for a %s in [%s].",
                        cJSON_IsObject(v) ? "START_OBJECT" : cJSON_IsArray(v) ? "START_ARRAY"
                        : cJSON_IsString(v) ? "VALUE_STRING" : cJSON_IsNumber(v)
                        ? "VALUE_NUMBER" : "VALUE_BOOLEAN", bad);
        goto out;
    }
    if (cJSON_GetObjectItemCaseSensitive(body, "script")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[script] is not supported: fieldstore runs no scripts");
        goto out;
    }
    const cJSON *remote = cJSON_GetObjectItemCaseSensitive(src, "remote");
    if (remote) {
        reindex_remote(o, remote);
        goto out;
    }
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(src, "size");
    if (ss && !cJSON_IsNumber(ss)) {
        fds__resp_errorf(o, 400, "number_format_exception", "For input string: \"%s\"",
                        cJSON_IsString(ss) ? ss->valuestring : "?");
        goto out;
    }
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(body, "conflicts");
    bool proceed = cJSON_IsString(cf) && !strcmp(cf->valuestring, "proceed");
    if (cf && !proceed && !(cJSON_IsString(cf) && !strcmp(cf->valuestring, "abort"))) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "conflicts may only be \"proceed\" or \"abort\" but was [%s]",
                        cJSON_IsString(cf) ? cf->valuestring : "?");
        goto out;
    }
    uint64_t max_docs = UINT64_MAX, batch = REINDEX_BATCH;
    const cJSON *mdb = cJSON_GetObjectItemCaseSensitive(body, "max_docs");
    const cJSON *szb = cJSON_GetObjectItemCaseSensitive(body, "size");
    const char *mdp = fds__req_param(r, "max_docs");
    if ((szb && !reindex_max_docs(o, szb, NULL, &max_docs)) ||
        (mdb && !reindex_max_docs(o, mdb, NULL, &max_docs)) ||
        (mdp && !reindex_max_docs(o, NULL, mdp, &max_docs)) ||
        !reindex_url_ok(r, o, max_docs))
        goto out;
    /* ReindexRequest.validate: every error, listed */
    char errs[REINDEX_ERRS_MAX][96];
    int nerr = 0;
    cJSON *si = cJSON_GetObjectItemCaseSensitive(src, "index");
    cJSON *di = cJSON_GetObjectItemCaseSensitive(dst, "index");
    if (cJSON_IsArray(si) && cJSON_GetArraySize(si) == 1)
        si = si->child; /* a list of one index */
    if (!cJSON_IsString(si))
        snprintf(errs[nerr++], sizeof errs[0],
                 "use _all if you really want to copy from all existing indexes");
    if (!cJSON_IsString(di))
        snprintf(errs[nerr++], sizeof errs[0], "index must be specified");
    if (cJSON_GetObjectItemCaseSensitive(src, "from"))
        snprintf(errs[nerr++], sizeof errs[0], "from is not supported in this context");
    if (cJSON_GetObjectItemCaseSensitive(src, "stored_fields"))
        snprintf(errs[nerr++], sizeof errs[0],
                 "stored_fields is not supported in this context");
    const cJSON *fsrc = cJSON_GetObjectItemCaseSensitive(src, "_source");
    if (cJSON_IsFalse(fsrc))
        snprintf(errs[nerr++], sizeof errs[0], "_source:false is not supported in this context");
    if (nerr) {
        char msg[REINDEX_ERRS_MAX * 100] = "Validation Failed: ";
        for (int i = 0; i < nerr; i++) {
            size_t l = strlen(msg);
            snprintf(msg + l, sizeof msg - l, "%d: %s;", i + 1, errs[i]);
        }
        fds__resp_errorf(o, 400, "action_request_validation_exception", "%s", msg);
        goto out;
    }
    if (!strcmp(si->valuestring, di->valuestring)) {
        fds__resp_errorf(o, 400, "action_request_validation_exception",
                        "Validation Failed: 1: reindex cannot write into an "
                        "index its reading from [%s];", di->valuestring);
        goto out;
    }
    if (cJSON_GetObjectItemCaseSensitive(src, "slice")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[source.slice] is not supported: use the slices parameter");
        goto out;
    }
    if (cJSON_GetObjectItemCaseSensitive(dst, "pipeline")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[dest.pipeline] is not supported: fieldstore has no ingest "
                        "pipelines");
        goto out;
    }
    if (ss && (ss->valuedouble < 1 || ss->valuedouble > REINDEX_BATCH_MAX ||
               ss->valuedouble != (double)(uint32_t)ss->valuedouble)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "source.size must be from 1 to %d, got [%g]", REINDEX_BATCH_MAX,
                        ss->valuedouble);
        goto out;
    }
    if (ss)
        batch = (uint64_t)ss->valuedouble;
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(dst, "op_type");
    bool create = cJSON_IsString(opt) && !strcmp(opt->valuestring, "create");
    if (opt && !create && !(cJSON_IsString(opt) && !strcmp(opt->valuestring, "index"))) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "opType must be 'create' or 'index', found: [%s]",
                        cJSON_IsString(opt) ? opt->valuestring : "?");
        goto out;
    }
    const cJSON *vt = cJSON_GetObjectItemCaseSensitive(dst, "version_type");
    const char *vts = cJSON_IsString(vt) ? vt->valuestring : "";
    bool gte = !strcmp(vts, "external_gte");
    bool external = gte || !strcmp(vts, "external");
    if (vt && !external && strcmp(vts, "internal")) {
        fds__resp_errorf(o, 400, "illegal_argument_exception", "No version type match [%s]",
                        vts);
        goto out;
    }
    if (external && create) {
        fds__resp_errorf(o, 400, "action_request_validation_exception",
                        "Validation Failed: 1: create operations only support internal "
                        "versioning. use index instead;");
        goto out;
    }
    /* dest.routing: keep (the default), discard, or =value */
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(dst, "routing");
    if (rt && (!cJSON_IsString(rt) ||
               (strcmp(rt->valuestring, "keep") && strcmp(rt->valuestring, "discard") &&
                rt->valuestring[0] != '='))) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[routing] must be [keep], [discard] or [=<some new value>] but "
                        "was [%s]", cJSON_IsString(rt) ? rt->valuestring : "?");
        goto out;
    }
    if (fsrc && (fds__source_spec_json(fsrc, &filter, &e))) {
        fds__resp_error(o, &e);
        goto out;
    }
    /* the query and sort as a search body */
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(src, "query");
    const cJSON *sort = cJSON_GetObjectItemCaseSensitive(src, "sort");
    if (szb) /* Elasticsearch's deprecations (ReindexRequest's PARSER) */
        fds__resp_warn(o, "Deprecated field [size] used, expected [max_docs] instead");
    if (sort)
        fds__resp_warn(o, "The sort option in reindex is deprecated. Instead consider "
                         "using query filtering to find the desired subset of data.");
    if (q || sort) {
        cJSON *w = cJSON_CreateObject();
        if (q)
            cJSON_AddItemReferenceToObject(w, "query", (cJSON *)q);
        if (sort)
            cJSON_AddItemReferenceToObject(w, "sort", (cJSON *)sort);
        qbody = cJSON_PrintUnformatted(w);
        cJSON_Delete(w);
    }
    int rc = fds_store_get_index(r->store, si->valuestring, &from, &e);
    if (!rc)
        rc = index_for_write(r->store, di->valuestring, &to, &e);
    j = rc ? NULL : calloc(1, sizeof *j);
    if (!rc && !j)
        rc = fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (!rc && rt && strcmp(rt->valuestring, "keep") &&
        !(j->routing = strdup(rt->valuestring)))
        rc = fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (rc) {
        fds__resp_error(o, &e);
        goto out;
    }
    *j = (fds__scan_job){.mode = FDS__SCAN_REINDEX, .from = from, .to = to,
                         .st = r->store, .query = qbody, .max_docs = max_docs,
                         .batch = (uint32_t)batch, .create = create,
                         .proceed = proceed, .refresh = want_refresh(r),
                         .external = external, .external_gte = gte,
                         .routing = j->routing,
                         .filter = filter, .rps = fds__scan_rps(r)};
    from = to = NULL;
    qbody = NULL;
    memset(&filter, 0, sizeof filter);
    char desc[2 * FDS_INDEX_NAME_MAX + 32];
    snprintf(desc, sizeof desc, "reindex from [%s] to [%s]", fds_index_name(j->from),
             fds_index_name(j->to));
    cJSON_Delete(body);
    return fds__scan_answer(r, o, j, "indices:data/write/reindex", desc);
out:
    fds__scan_job_free(j);
    fds__source_spec_free(&filter);
    free(qbody);
    fds_index_release(from);
    fds_index_release(to);
    cJSON_Delete(body);
}
