/*
 * doc_update.c: _update with a partial document (Elasticsearch's
 * UpdateHelper): read the document, merge `doc` into it (or index the
 * upsert), write it only if it is still the one read, retry a lost race.
 * Scripts are refused by name.  _bulk's update items run the same steps.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc_source.h"
#include "doc_update.h"
#include "doc_write.h"
#include "handlers.h"
#include "query.h" /* fds_json_check_body */
#include "request.h"
#include "response.h"

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
int fds__update_parse(const char *body, size_t len, fds__upd_req *u, fds_err *err)
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
static void update_get(fds__upd_answer *a, const fds__upd_req *u, int64_t seq_no,
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
void fds__update_run(fds_index *ix, const fds__upd_req *u, bool refresh,
                       fds_write_op *op, fds_write_result *w, fds__upd_answer *a)
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
    if (!fds__refresh_ok(r, o))
        return;
    /* an update's id is required, as a delete's is (fds__id_valid) */
    fds_write_op cop = {.type = FDS_OP_DELETE, .id = r->seg[2],
                        .id_len = strlen(r->seg[2])};
    if (!fds__req_check_params(r, o, UPDATE_PARAMS) ||
        !fds__concurrency_params(r, o, &cop) || !fds__id_valid(o, &cop))
        return;
    fds__upd_req u = {.id = cop.id, .id_len = cop.id_len,
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
        rc = fds__write_opts_check(r->store, r->seg[0], NULL,
                              fds__req_param_bool(r, "require_alias", false), &e);
    if (!rc)
        rc = fds__source_spec_params(r, &url_src, &e);
    if (!rc) /* a _source in the body wins over the URL's */
        rc = fds__update_parse(r->body, r->body_len, &u, &e);
    fds_index *ix = NULL;
    if (!rc)
        rc = fds__index_for_write(r->store, r->seg[0], &ix, &e);
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
    fds__upd_answer a = {0};
    fds__update_run(ix, &u, fds__want_refresh(r), &op, &w, &a);
    if (w.code) {
        if (!w.err.index[0])
            snprintf(w.err.index, sizeof w.err.index, "%s", fds_index_name(ix));
        fds__resp_error(o, &w.err);
    } else {
        fds__write_single(o, fds_index_name(ix), &op, &w, fds__forced_refresh(r), &a);
    }
    free(a.get.p);
    fds__source_spec_free(&u.src);
    fds__source_spec_free(&url_src);
    fds_index_release(ix);
}
