/*
 * docs.c: document endpoints (index, create, get, delete, _bulk) and
 * _reindex.  Search and _count are in search_api.c.
 *
 * `_source` is kept as the bytes received (DESIGN.md §10: cJSON re-prints
 * numbers as doubles), so responses splice stored bytes into the JSON text
 * instead of re-printing them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_text.h"
#include "search_render.h"
#include "http_int.h"
#include "search_stats.h"

/* A JSON string literal of a NUL-terminated string (fds_json_escape). */
static void sb_json_str(fds_strbuf *b, const char *s)
{
    fds_strbuf_put_json_string(b, s, strlen(s));
}

static void sb_resp(fds_resp *o, int status, fds_strbuf *b)
{
    if (b->oom) {
        free(b->p);
        return fds_resp_errorf(o, 500, "exception", "out of memory");
    }
    fds_resp_raw(o, status, b->p, b->len, NULL);
}

/* ?refresh=true|wait_for|false */
static bool want_refresh(fds_req *r)
{
    const char *v = fds_req_param(r, "refresh");
    return v && (!*v || !strcmp(v, "true") || !strcmp(v, "wait_for"));
}

/* refresh=true or refresh= (not wait_for): Elasticsearch's answer then says
 * "forced_refresh": true (DocWriteResponse#innerToXContent). */
static bool forced_refresh(fds_req *r)
{
    const char *v = fds_req_param(r, "refresh");
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
    fds_resp_error(o, &e);
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
            return fds_http_status(&w->err);
        return w->code == FDS_ECONFLICT ? 409 : w->code == FDS_ENOTFOUND ? 404 : 400;
    }
    if (op->type == FDS_OP_DELETE)
        return w->found ? 200 : 404;
    return w->created ? 201 : 200;
}

/* The write-result body of Elasticsearch (index/delete responses and bulk
 * items share it); bulk items also carry "status" (`with_status`). */
static void write_item(fds_strbuf *b, const char *index, const fds_write_op *op,
                       const fds_write_result *w, bool with_status,
                       bool refreshed)
{
    fds_strbuf_puts(b, "{\"_index\":");
    sb_json_str(b, index);
    fds_strbuf_puts(b, ",\"_id\":");
    sb_json_str(b, w->id);
    if (w->code) {
        fds_err e = w->err;
        fds_strbuf_printf(b, ",\"status\":%d,\"error\":{\"type\":", item_status(op, w));
        sb_json_str(b, e.kind ? fds_http_type(&e)
                                           : "illegal_argument_exception");
        fds_strbuf_puts(b, ",\"reason\":");
        sb_json_str(b, e.reason[0] ? e.reason : fds_strerror(w->code));
        fds_strbuf_puts(b, ",\"index\":");
        sb_json_str(b, index);
        if (e.cause_kind) {
            fds_strbuf_puts(b, ",\"caused_by\":{\"type\":");
            sb_json_str(b, fds_http_kind_type(e.cause_kind));
            fds_strbuf_puts(b, ",\"reason\":");
            sb_json_str(b, e.cause);
            fds_strbuf_puts(b, "}");
        }
        fds_strbuf_puts(b, "}}");
        return;
    }
    fds_strbuf_printf(b, ",\"_version\":%lld,\"result\":\"%s\",%s\"_shards\":{\"total\":1,"
                 "\"successful\":1,\"failed\":0},\"_seq_no\":%lld,"
                 "\"_primary_term\":1",
              (long long)w->version, result_word(op, w),
              refreshed ? "\"forced_refresh\":true," : "", (long long)w->seq_no);
    if (with_status)
        fds_strbuf_printf(b, ",\"status\":%d", item_status(op, w));
    fds_strbuf_puts(b, "}");
}

/* The answer to a single-document write (successful: errors go through
 * fds_resp_error). */
static void write_single(fds_resp *o, const char *index, const fds_write_op *op,
                         const fds_write_result *w, bool refreshed)
{
    fds_strbuf b = {0};
    write_item(&b, index, op, w, false, refreshed);
    sb_resp(o, item_status(op, w), &b);
}

/* The index `name`, created with default settings when missing, as
 * Elasticsearch does on writes (action.auto_create_index).  Returns 0 or an
 * error code with `err` filled. */
static int index_for_write(fds_store *st, const char *name, fds_index **ix,
                           fds_err *err)
{
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_store_get_index(st, name, ix, &e);
    if (rc != FDS_ENOTFOUND) {
        if (rc)
            *err = e;
        return rc;
    }
    fds_index_settings set;
    fds_index_settings_default(&set);
    fds_err_clear(&e);
    rc = fds_store_create_index(st, name, &set, NULL, &e);
    if (rc && rc != FDS_EEXIST) {
        *err = e;
        return rc;
    }
    return fds_store_get_index(st, name, ix, err);
}

/* if_seq_no / if_primary_term / version / version_type from the URL.
 * Returns false with a 400 in `o` for bad values. */
static bool concurrency_params(fds_req *r, fds_resp *o, fds_write_op *op)
{
    const char *sq = fds_req_param(r, "if_seq_no");
    const char *pt = fds_req_param(r, "if_primary_term");
    const char *ver = fds_req_param(r, "version");
    const char *vt = fds_req_param(r, "version_type");
    char *end;
    if (sq || pt) {
        if (!sq || !pt) {
            fds_resp_errorf(o, 400, "action_request_validation_exception",
                            "Validation Failed: 1: ifSeqNo is set, but primary "
                            "term is [0];");
            return false;
        }
        op->if_seq_no = strtoll(sq, &end, 10);
        bool bad = *end || op->if_seq_no < 0;
        op->if_primary_term = strtoll(pt, &end, 10);
        if (bad || *end || op->if_primary_term < 1) {
            fds_resp_errorf(o, 400, "illegal_argument_exception",
                            "bad [if_seq_no] [%s] or [if_primary_term] [%s]", sq, pt);
            return false;
        }
        op->check_seq_no = true;
    }
    if (ver || vt) {
        if (!vt || strcmp(vt, "external") || !ver) {
            fds_resp_errorf(o, 400, "action_request_validation_exception",
                            "Validation Failed: 1: internal versioning can not be "
                            "used for optimistic concurrency control. Please use "
                            "`if_seq_no` and `if_primary_term` instead;");
            return false;
        }
        op->external_version = strtoll(ver, &end, 10);
        if (*end || op->external_version < 1) {
            fds_resp_errorf(o, 400, "illegal_argument_exception",
                            "failed to parse [version] with value [%s]", ver);
            return false;
        }
    }
    return true;
}

static const char *const WRITE_PARAMS[] = {
    "refresh", "op_type", "if_seq_no", "if_primary_term", "version",
    "version_type", "routing", "pipeline", "require_alias", NULL};

void fds_h_doc_put(fds_req *r, fds_resp *o, bool create_only)
{
    fds_write_op op = {0};
    if (r->nseg == 3) {
        op.id = r->seg[2];
        op.id_len = strlen(r->seg[2]);
    }
    if (!fds_req_check_params(r, o, WRITE_PARAMS) ||
        !concurrency_params(r, o, &op) || !id_valid(o, &op))
        return;
    fds_index *ix = NULL;
    fds_err ce;
    fds_err_clear(&ce);
    if (index_for_write(r->store, r->seg[0], &ix, &ce)) {
        if (!ce.index[0])
            snprintf(ce.index, sizeof ce.index, "%s", r->seg[0]);
        return fds_resp_error(o, &ce);
    }
    const char *op_type = fds_req_param(r, "op_type");
    if (op_type && strcmp(op_type, "create") && strcmp(op_type, "index")) {
        fds_index_release(ix);
        return fds_resp_errorf(o, 400, "illegal_argument_exception",
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
        return fds_resp_error(o, &e);
    }
    if (w.code) {
        if (!w.err.index[0])
            snprintf(w.err.index, sizeof w.err.index, "%s", fds_index_name(ix));
        fds_index_release(ix);
        return fds_resp_error(o, &w.err);
    }
    write_single(o, fds_index_name(ix), &op, &w, forced_refresh(r));
    fds_index_release(ix);
}

static const char *const GET_PARAMS[] = {"realtime", "refresh", "routing",
                                         "preference", NULL};

void fds_h_doc_get(fds_req *r, fds_resp *o)
{
    if (!fds_req_check_params(r, o, GET_PARAMS))
        return;
    fds_index *ix = fds_req_index(r, o, 0);
    if (!ix)
        return;
    fds_doc d;
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_index_get(ix, r->seg[2], strlen(r->seg[2]), &d, &e);
    bool source_only = !strcmp(r->seg[1], "_source");
    fds_strbuf b = {0};
    if (rc == FDS_ENOTFOUND) {
        if (source_only) {
            fds_err_setk(&e, FDS_ENOTFOUND, FDS_KIND_NOT_FOUND,
                        "Document not found [%s]/[%s]", fds_index_name(ix),
                        r->seg[2]);
            fds_index_release(ix);
            return fds_resp_error(o, &e);
        }
        fds_strbuf_puts(&b, "{\"_index\":");
        sb_json_str(&b, fds_index_name(ix));
        fds_strbuf_puts(&b, ",\"_id\":");
        sb_json_str(&b, r->seg[2]);
        fds_strbuf_puts(&b, ",\"found\":false}");
        fds_index_release(ix);
        return sb_resp(o, 404, &b);
    }
    if (rc) {
        if (!e.index[0])
            snprintf(e.index, sizeof e.index, "%s", fds_index_name(ix));
        fds_index_release(ix);
        return fds_resp_error(o, &e);
    }
    if (source_only) {
        fds_strbuf_put(&b, d.src, d.src_len);
    } else {
        fds_strbuf_puts(&b, "{\"_index\":");
        sb_json_str(&b, fds_index_name(ix));
        fds_strbuf_puts(&b, ",\"_id\":");
        sb_json_str(&b, r->seg[2]);
        fds_strbuf_printf(&b, ",\"_version\":%lld,\"_seq_no\":%lld,\"_primary_term\":1,"
                      "\"found\":true,\"_source\":",
                  (long long)d.version, (long long)d.seq_no);
        fds_strbuf_put(&b, d.src, d.src_len);
        fds_strbuf_puts(&b, "}");
    }
    free(d.src);
    fds_index_release(ix);
    sb_resp(o, 200, &b);
}

void fds_h_doc_delete(fds_req *r, fds_resp *o)
{
    fds_write_op op = {.type = FDS_OP_DELETE, .id = r->seg[2],
                       .id_len = strlen(r->seg[2])};
    if (!fds_req_check_params(r, o, WRITE_PARAMS) ||
        !concurrency_params(r, o, &op) || !id_valid(o, &op))
        return;
    fds_index *ix = fds_req_index(r, o, 0);
    if (!ix)
        return;
    fds_write_result w;
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_index_write(ix, &op, 1, &w, want_refresh(r), &e);
    if (rc || w.code) {
        fds_index_release(ix);
        return fds_resp_error(o, rc ? &e : &w.err);
    }
    write_single(o, fds_index_name(ix), &op, &w, forced_refresh(r));
    fds_index_release(ix);
}

/* ---- _bulk ------------------------------------------------------------------ */

typedef struct bulk_item {
    char action[8];          /* "index", "create", "delete", "update" */
    char *index;             /* malloc'd */
    fds_write_op op;
    fds_write_result res;
    bool done;
    char *owned_src;         /* update: merged source */
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

/* The text of the number an action line gives as its `_id`: Elasticsearch
 * reads a numeric _id as its text, so 9007199254740993 keeps every digit (a
 * double would not).  Scans p[0..end) for the key "_id" in the action's
 * object (depth 2); NULL when not there. */
static const char *number_id_text(const char *p, const char *end, size_t *len)
{
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
        bool is_id = depth == 2 && p - s == 3 && !memcmp(s, "_id", 3);
        const char *q = ++p;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (!is_id || q >= end || *q != ':')
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
        it->res.code = fds_err_setk(&it->res.err, FDS_ENOMEM, FDS_KIND_INTERNAL,
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

/* Parse the NDJSON body into items.  Returns 0 or fills err (400). */
static int bulk_parse(fds_req *r, const char *default_index, bulk_item **out,
                      size_t *nout, fds_err *err)
{
    const char *p = r->body, *end = r->body + r->body_len;
    size_t cap = 256, n = 0, line = 0;
    bulk_item *items = calloc(cap, sizeof *items);
    if (!items)
        return FDS_ENOMEM;
    int rc = 0;
    while (p < end && !rc) {
        const char *le = line_end(p, end);
        line++;
        if (blank(p, le)) {
            p = le + 1;
            continue;
        }
        if (!fds_utf8_valid((const uint8_t *)p, (size_t)(le - p))) {
            /* as Elasticsearch's JSON parser: the whole request is refused */
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                              "Invalid UTF-8 in action/metadata line [%zu]", line);
            break;
        }
        cJSON *a = cJSON_ParseWithLength(p, (size_t)(le - p));
        if (a && (rc = fds_json_check_body(p, (size_t)(le - p), err))) {
            cJSON_Delete(a);
            break;
        }
        if (!a || !cJSON_IsObject(a) || !a->child || a->child->next ||
            !cJSON_IsObject(a->child)) {
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                             "Malformed action/metadata line [%zu], expected "
                             "START_OBJECT with one action", line);
            cJSON_Delete(a);
            break;
        }
        const char *act = a->child->string;
        if (strcmp(act, "index") && strcmp(act, "create") &&
            strcmp(act, "delete") && strcmp(act, "update")) {
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                             "Malformed action/metadata line [%zu], expected "
                             "field [create], [delete], [index] or [update] but "
                             "found [%s]", line, act);
            cJSON_Delete(a);
            break;
        }
        if (n == cap) {
            bulk_item *q = realloc(items, cap * 2 * sizeof *q);
            if (!q) {
                rc = FDS_ENOMEM;
                cJSON_Delete(a);
                break;
            }
            memset(q + cap, 0, cap * sizeof *q);
            items = q;
            cap *= 2;
        }
        bulk_item *it = &items[n++];
        snprintf(it->action, sizeof it->action, "%s", act);
        act = it->action; /* `a` is freed below */
        for (cJSON *m = a->child->child; m && !rc; m = m->next) {
            if (!strcmp(m->string, "_index") && cJSON_IsString(m))
                it->index = strdup(m->valuestring);
            else if (!strcmp(m->string, "_id") && cJSON_IsString(m)) {
                bulk_set_id(it, m->valuestring, strlen(m->valuestring));
            } else if (!strcmp(m->string, "_id") && cJSON_IsNumber(m)) {
                size_t nl = 0;
                const char *num = number_id_text(p, le, &nl);
                char buf[32];
                if (!num) { /* not found in the text: cJSON's value */
                    nl = (size_t)snprintf(buf, sizeof buf, "%.17g", m->valuedouble);
                    num = buf;
                }
                bulk_set_id(it, num, nl);
            } else if (!strcmp(m->string, "if_seq_no") && cJSON_IsNumber(m)) {
                it->op.check_seq_no = true;
                rc = meta_long(m, line, &it->op.if_seq_no, err);
            } else if (!strcmp(m->string, "if_primary_term") && cJSON_IsNumber(m)) {
                rc = meta_long(m, line, &it->op.if_primary_term, err);
            } else if (!strcmp(m->string, "version") && cJSON_IsNumber(m)) {
                rc = meta_long(m, line, &it->op.external_version, err);
            } else if (!strcmp(m->string, "version_type") && cJSON_IsString(m) &&
                       !strcmp(m->valuestring, "external")) {
                /* the version given is external: applied with "version" */
            } else if (strcmp(m->string, "routing") && strcmp(m->string, "pipeline") &&
                       strcmp(m->string, "require_alias") &&
                       strcmp(m->string, "retry_on_conflict") &&
                       strcmp(m->string, "dynamic_templates"))
                rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                                 "Action/metadata line [%zu] contains an unknown "
                                 "parameter [%s]", line, m->string);
        }
        cJSON_Delete(a);
        if (rc)
            break;
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
            free(it->index);
            free((char *)it->op.id);
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
    for (size_t i = 0; i < n; i++) {
        free(items[i].index);
        free((char *)items[i].op.id);
        free(items[i].owned_src);
    }
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

/* Bulk update: {"doc": {...}} merged into the current source (top-level
 * fields replaced), or {"doc_as_upsert"/"upsert"} when missing. */
static void bulk_prepare_update(fds_index *ix, bulk_item *it)
{
    it->op.type = FDS_OP_INDEX;
    if (it->op.id)
        snprintf(it->res.id, sizeof it->res.id, "%.*s", (int)it->op.id_len,
                 it->op.id);
    cJSON *u = cJSON_ParseWithLength((const char *)it->op.src, it->op.src_len);
    cJSON *doc = u ? cJSON_GetObjectItemCaseSensitive(u, "doc") : NULL;
    cJSON *ups = u ? cJSON_GetObjectItemCaseSensitive(u, "upsert") : NULL;
    bool as_upsert = u && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(u, "doc_as_upsert"));
    if (!doc || !cJSON_IsObject(doc)) {
        it->res.code = fds_err_setk(&it->res.err, FDS_EPARSE, FDS_KIND_VALIDATION,
                                   "Validation Failed: 1: script or doc is missing;");
        goto out;
    }
    fds_doc cur;
    fds_err e;
    fds_err_clear(&e);
    int rc = it->op.id ? fds_index_get(ix, it->op.id, it->op.id_len, &cur, &e)
                       : FDS_ENOTFOUND;
    cJSON *base = NULL;
    if (rc == FDS_ENOTFOUND) {
        if (ups && cJSON_IsObject(ups))
            base = cJSON_Duplicate(ups, 1);
        else if (as_upsert)
            base = cJSON_Duplicate(doc, 1);
        else {
            it->res.code = fds_err_setk(&it->res.err, FDS_ENOTFOUND, FDS_KIND_DOCUMENT_MISSING,
                                       "[%.*s]: document missing",
                                       (int)it->op.id_len, it->op.id ? it->op.id : "");
            goto out;
        }
    } else if (rc) {
        it->res.code = rc;
        it->res.err = e;
        goto out;
    } else {
        base = cJSON_ParseWithLength((const char *)cur.src, cur.src_len);
        free(cur.src);
        for (cJSON *c = doc->child; c && base; c = c->next) {
            cJSON *dup = cJSON_Duplicate(c, 1);
            if (cJSON_GetObjectItemCaseSensitive(base, c->string))
                cJSON_ReplaceItemInObjectCaseSensitive(base, c->string, dup);
            else
                cJSON_AddItemToObject(base, c->string, dup);
        }
    }
    it->owned_src = base ? cJSON_PrintUnformatted(base) : NULL;
    cJSON_Delete(base);
    if (!it->owned_src) {
        it->res.code = fds_err_setk(&it->res.err, FDS_EPARSE, FDS_KIND_DOCUMENT_PARSE,
                                   "cannot merge the update into the document");
        goto out;
    }
    it->op.src = (const uint8_t *)it->owned_src;
    it->op.src_len = strlen(it->owned_src);
out:
    cJSON_Delete(u);
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
        if (!it->res.code &&
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

static const char *const BULK_PARAMS[] = {"refresh", "routing", "pipeline",
                                          "require_alias", "_source", NULL};

void fds_h_bulk(fds_req *r, fds_resp *o)
{
    if (!fds_req_check_params(r, o, BULK_PARAMS))
        return;
    long long t0 = fds_now_us();
    const char *dflt = r->nseg == 2 ? r->seg[0] : NULL;
    bulk_item *items = NULL;
    size_t n = 0;
    fds_err e;
    fds_err_clear(&e);
    int rc = bulk_parse(r, dflt, &items, &n, &e);
    if (!rc)
        rc = bulk_validate(items, n, &e);
    if (rc)
        goto out_err;
    bool refresh = want_refresh(r);
    /* consecutive items on the same index go to the store as one batch */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(items[j].index, items[i].index) &&
               strcmp(items[j].action, "update"))
            j++;
        if (j == i)
            j = i + 1; /* an update goes alone: it reads the current doc */
        fds_index *ix = NULL;
        fds_err ie;
        fds_err_clear(&ie);
        index_for_write(r->store, items[i].index, &ix, &ie);
        fds_write_op *ops = malloc((j - i) * sizeof *ops);
        fds_write_result *res = malloc((j - i) * sizeof *res);
        if (ix && ops && res) {
            if (!strcmp(items[i].action, "update"))
                bulk_prepare_update(ix, &items[i]);
            /* items that failed already (a bad update, an id that could
             * not be copied) are answered as they are, never written */
            size_t m = 0;
            for (size_t k = i; k < j; k++)
                if (!items[k].res.code)
                    ops[m++] = items[k].op;
            fds_err be;
            fds_err_clear(&be);
            int brc = m ? fds_index_write(ix, ops, m, res, false, &be) : 0;
            for (size_t k = i, q = 0; k < j; k++) {
                if (!items[k].res.code) {
                    if (brc) {
                        memset(&items[k].res, 0, sizeof items[k].res);
                        items[k].res.code = brc;
                        items[k].res.err = be;
                        if (items[k].op.id)
                            snprintf(items[k].res.id, sizeof items[k].res.id,
                                     "%.*s", (int)items[k].op.id_len, items[k].op.id);
                    } else {
                        items[k].res = res[q];
                    }
                    q++;
                }
                items[k].done = true;
            }
            if (refresh)
                fds_index_refresh(ix, NULL);
        } else {
            for (size_t k = i; k < j; k++) {
                items[k].res.code = ie.code ? ie.code : FDS_ENOMEM;
                items[k].res.err = ie;
                if (items[k].op.id)
                    snprintf(items[k].res.id, sizeof items[k].res.id, "%.*s",
                             (int)items[k].op.id_len, items[k].op.id);
            }
        }
        free(ops);
        free(res);
        fds_index_release(ix);
        i = j;
    }
    bool errors = false;
    for (size_t i = 0; i < n; i++)
        errors |= items[i].res.code != 0;
    fds_strbuf b = {0};
    fds_strbuf_printf(&b, "{\"took\":%lld,\"errors\":%s,\"items\":[",
              (fds_now_us() - t0) / 1000, errors ? "true" : "false");
    for (size_t i = 0; i < n; i++) {
        fds_strbuf_printf(&b, "%s{\"%s\":", i ? "," : "", items[i].action);
        write_item(&b, items[i].index, &items[i].op, &items[i].res, true,
                   forced_refresh(r));
        fds_strbuf_puts(&b, "}");
    }
    fds_strbuf_puts(&b, "]}");
    sb_resp(o, 200, &b);
    goto out;
out_err:
    fds_resp_error(o, &e);
out:
    bulk_items_free(items, n);
}

/* ---- _reindex ------------------------------------------------------------------------ */

#define REINDEX_BATCH 1000

void fds_h_reindex(fds_req *r, fds_resp *o)
{
    long long t0 = fds_now_us();
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds_body_json(r, &body, &e) ||
        fds_json_check_body(r->body, r->body_len, &e)) {
        cJSON_Delete(body);
        return fds_resp_error(o, &e);
    }
    cJSON *src = cJSON_GetObjectItemCaseSensitive(body, "source");
    cJSON *dst = cJSON_GetObjectItemCaseSensitive(body, "dest");
    cJSON *si = src ? cJSON_GetObjectItemCaseSensitive(src, "index") : NULL;
    cJSON *di = dst ? cJSON_GetObjectItemCaseSensitive(dst, "index") : NULL;
    if (!cJSON_IsString(si) || !cJSON_IsString(di)) {
        cJSON_Delete(body);
        return fds_resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: use _reindex with "
                               "source.index and dest.index;");
    }
    if (!strcmp(si->valuestring, di->valuestring)) {
        fds_resp_errorf(o, 400, "action_request_validation_exception",
                        "Validation Failed: 1: reindex cannot write into an "
                        "index its reading from [%s];", di->valuestring);
        cJSON_Delete(body);
        return;
    }
    if (cJSON_GetObjectItemCaseSensitive(src, "query") ||
        cJSON_GetObjectItemCaseSensitive(body, "script") ||
        cJSON_GetObjectItemCaseSensitive(src, "remote")) {
        cJSON_Delete(body);
        return fds_resp_errorf(o, 400, "illegal_argument_exception",
                               "_reindex copies whole indices: [source.query], "
                               "[script] and [source.remote] are not supported");
    }
    fds_index *from = NULL, *to = NULL;
    int rc = fds_store_get_index(r->store, si->valuestring, &from, &e);
    if (!rc)
        rc = index_for_write(r->store, di->valuestring, &to, &e);
    cJSON_Delete(body);
    fds_index_view *v = NULL;
    uint64_t total = 0, created = 0, updated = 0, failed = 0;
    cJSON *failures = cJSON_CreateArray();
    if (!rc)
        rc = fds_index_view_acquire(from, &v, &e);
    unsigned nseg = 0;
    const fds_search_segment *segs = rc ? NULL : fds_index_view_segments(v, &nseg);
    fds_hit *hits = calloc(REINDEX_BATCH, sizeof *hits);
    fds_write_op *ops = calloc(REINDEX_BATCH, sizeof *ops);
    fds_write_result *res = calloc(REINDEX_BATCH, sizeof *res);
    const uint8_t **srcs = calloc(REINDEX_BATCH, sizeof *srcs);
    size_t *lens = calloc(REINDEX_BATCH, sizeof *lens);
    if (!rc && (!hits || !ops || !res || !srcs || !lens))
        rc = FDS_ENOMEM;
    for (unsigned s = 0; !rc && s < nseg; s++) {
        uint32_t max = fds_sidx_max_doc(segs[s].sidx);
        for (uint32_t d0 = 0; !rc && d0 < max; d0 += REINDEX_BATCH) {
            size_t n = 0;
            for (uint32_t d = d0; d < max && d < d0 + REINDEX_BATCH; d++)
                if (!segs[s].live || (segs[s].live[d >> 3] >> (d & 7)) & 1)
                    hits[n++] = (fds_hit){.seg = s, .doc = d};
            if (!n)
                continue;
            rc = fds_index_view_fetch(v, hits, n, srcs, lens, &e);
            for (size_t k = 0; !rc && k < n; k++) {
                size_t il;
                const char *id = fds_sidx_doc_id(segs[s].sidx, hits[k].doc, &il);
                ops[k] = (fds_write_op){.type = FDS_OP_INDEX, .id = id, .id_len = il,
                                        .src = srcs[k], .src_len = lens[k]};
            }
            if (!rc)
                rc = fds_index_write(to, ops, n, res, false, &e);
            for (size_t k = 0; !rc && k < n; k++) {
                total++;
                if (res[k].code) {
                    failed++;
                    cJSON *f = cJSON_CreateObject();
                    cJSON_AddStringToObject(f, "index", fds_index_name(to));
                    cJSON_AddStringToObject(f, "id", res[k].id);
                    cJSON *cause = cJSON_AddObjectToObject(f, "cause");
                    cJSON_AddStringToObject(cause, "type", fds_http_type(&res[k].err));
                    cJSON_AddStringToObject(cause, "reason", res[k].err.reason);
                    cJSON_AddNumberToObject(f, "status",
                                            res[k].err.kind
                                                ? fds_http_status(&res[k].err) : 400);
                    cJSON_AddItemToArray(failures, f);
                } else if (res[k].created)
                    created++;
                else
                    updated++;
            }
        }
    }
    if (!rc && fds_req_param_bool(r, "refresh", false))
        rc = fds_index_refresh(to, &e);
    free(hits);
    free(ops);
    free(res);
    free(srcs);
    free(lens);
    fds_index_view_release(v);
    fds_index_release(from);
    fds_index_release(to);
    if (rc) {
        cJSON_Delete(failures);
        return fds_resp_error(o, &e);
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "took", (double)((fds_now_us() - t0) / 1000));
    cJSON_AddBoolToObject(j, "timed_out", 0);
    cJSON_AddNumberToObject(j, "total", (double)total);
    cJSON_AddNumberToObject(j, "updated", (double)updated);
    cJSON_AddNumberToObject(j, "created", (double)created);
    cJSON_AddNumberToObject(j, "deleted", 0);
    cJSON_AddNumberToObject(j, "batches", (double)((total + REINDEX_BATCH - 1) / REINDEX_BATCH));
    cJSON_AddNumberToObject(j, "version_conflicts", 0);
    cJSON_AddNumberToObject(j, "noops", 0);
    cJSON_AddItemToObject(j, "failures", failures);
    failures = NULL;
    fds_resp_json(o, 200, j);
}
