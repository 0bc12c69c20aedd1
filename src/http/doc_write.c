/*
 * doc_write.c: what the single-document writes (index, create, delete,
 * update) and _bulk share -- the ?refresh policy, id validation, the
 * URL's concurrency parameters, the index a write goes to (an alias's
 * write index, or one created from templates), and Elasticsearch's
 * write-result body.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_settings.h"
#include "doc_write.h"
#include "fds_strbuf.h"
#include "http_error.h"
#include "index_rules.h" /* fds_store_create_index_from, fds_store_index_or_alias */
#include "request.h"
#include "response.h"

/* ?refresh=true|wait_for|false */
bool fds__want_refresh(fds_req *r)
{
    const char *v = fds__req_param(r, "refresh");
    return v && (!*v || !strcmp(v, "true") || !strcmp(v, "wait_for"));
}

/* ?refresh is true, false, wait_for or empty; anything else is a 400
 * (answered), as Elasticsearch's WriteRequest.RefreshPolicy.parse. */
bool fds__refresh_ok(fds_req *r, fds_resp *o)
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
bool fds__forced_refresh(fds_req *r)
{
    const char *v = fds__req_param(r, "refresh");
    return v && (!*v || !strcmp(v, "true"));
}

/* Elasticsearch validates a single write's id before anything else (no
 * index is created for it).  Returns false with the 400 in `o`. */
bool fds__id_valid(fds_resp *o, const fds_write_op *op)
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


/* The write-result body of Elasticsearch (index/delete/update responses and
 * bulk items share it); bulk items also carry "status" (`with_status`);
 * `u` is an update's extra (or NULL). */
void fds__write_item(fds_strbuf *b, const char *index, const fds_write_op *op,
                       const fds_write_result *w, bool with_status,
                       bool refreshed, const fds__upd_answer *u)
{
    fds_strbuf_puts(b, "{\"_index\":");
    fds__sb_json_str(b, index);
    fds_strbuf_puts(b, ",\"_id\":");
    fds__sb_json_str(b, w->id);
    if (w->code) {
        fds_err e = w->err;
        fds_strbuf_printf(b, ",\"status\":%d,\"error\":{\"type\":", item_status(op, w));
        fds__sb_json_str(b, e.kind ? fds__http_type(&e)
                                           : "illegal_argument_exception");
        fds_strbuf_puts(b, ",\"reason\":");
        fds__sb_json_str(b, e.reason[0] ? e.reason : fds_strerror(w->code));
        fds_strbuf_puts(b, ",\"index\":");
        fds__sb_json_str(b, index);
        if (e.cause_kind) {
            fds_strbuf_puts(b, ",\"caused_by\":{\"type\":");
            fds__sb_json_str(b, fds__http_kind_type(e.cause_kind));
            fds_strbuf_puts(b, ",\"reason\":");
            fds__sb_json_str(b, e.cause);
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
void fds__write_single(fds_resp *o, const char *index, const fds_write_op *op,
                         const fds_write_result *w, bool refreshed,
                         const fds__upd_answer *u)
{
    fds_strbuf b = {0};
    fds__write_item(&b, index, op, w, false, refreshed, u);
    fds__resp_strbuf(o, item_status(op, w), &b);
}

/* The index `name` a write goes to: the index, or the write index of the
 * alias of that name (fds_store_alias_target), or, when neither exists, a new
 * index created from the templates that match the name, as Elasticsearch
 * does on writes (action.auto_create_index).  Returns 0 or an error code
 * with `err` filled. */
int fds__index_for_write(fds_store *st, const char *name, fds_index **ix,
                           fds_err *err)
{
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_store_index_or_alias(st, name, true, ix, &e);
    if (rc != FDS_ENOTFOUND || e.kind != FDS_KIND_INDEX_NOT_FOUND ||
        strcmp(e.index, name)) { /* not a missing name: an answer */
        if (rc)
            *err = e;
        return rc;
    }
    fds_err_clear(&e);
    rc = fds__auto_create_check(st, name, &e);
    if (!rc)
        rc = fds_store_create_index_from(st, name, NULL, &e);
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
int fds__write_opts_check(fds_store *st, const char *index,
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
bool fds__concurrency_params(fds_req *r, fds_resp *o, fds_write_op *op)
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
