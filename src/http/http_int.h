/*
 * http_int.h: request/response plumbing shared by the handler files of
 * src/http (internal).
 */
#ifndef FDS_HTTP_INT_H
#define FDS_HTTP_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "http.h"

#define FDS_PATH_SEGMENTS_MAX 8

typedef struct fds_req {
    fds_store *store;
    const char *method;            /* "GET", "PUT", ... */
    char *seg[FDS_PATH_SEGMENTS_MAX]; /* unescaped path segments */
    unsigned nseg;
    struct MHD_Connection *conn;
    const char *body;              /* NUL-terminated */
    size_t body_len;
    long long start_us;
    char **params;                 /* decoded parameter copies (fds_req_param) */
    unsigned nparams, params_cap;
} fds_req;

typedef struct fds_resp {
    int status;
    char *body;                    /* malloc'd */
    size_t len;
    const char *content_type;
} fds_resp;

/* A URL query parameter, percent-decoded; "" for a bare flag ("?v"); NULL
 * when absent (or out of memory).  The copy belongs to the request and stays
 * valid until its answer is queued. */
const char *fds_req_param(fds_req *r, const char *key);
bool fds_req_param_bool(fds_req *r, const char *key, bool dflt);
/* True when every URL parameter is in `allowed` (NULL-terminated) or common
 * to all endpoints (pretty, human, filter_path, ...); else answers 400
 * "contains unrecognized parameter" as Elasticsearch does. */
bool fds_req_check_params(fds_req *r, fds_resp *o, const char *const *allowed);
bool fds_req_is(fds_req *r, const char *method);
long long fds_now_us(void);

/* Responses.  All take ownership of what they are given. */
void fds_resp_json(fds_resp *o, int status, cJSON *json);
void fds_resp_raw(fds_resp *o, int status, char *body, size_t len,
                  const char *content_type);
/* Elasticsearch's error shape from a detail (status from err->status, or
 * derived from err->code when 0). */
/* The HTTP status and Elasticsearch `error.type` of an error: the one table
 * in http_error.c, from its kind (else its code). */
int fds_http_status(const fds_err *e);
const char *fds_http_type(const fds_err *e);

void fds_resp_error(fds_resp *o, const fds_err *err);
void fds_resp_errorf(fds_resp *o, int status, const char *type,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Parse a JSON body (empty body -> NULL with 0).  Rejects malformed JSON
 * with a parse_exception / 400 in `err`. */
int fds_body_json(fds_req *r, cJSON **out, fds_err *err);

/* A _cat table: `ncol` column names, rows of strings; honours ?v, ?h=,
 * ?format=json, ?s= (sort by one column). */
void fds_cat_render(fds_req *r, fds_resp *o, const char *const *cols,
                    size_t ncol, char ***rows, size_t nrows);

/* Handlers (return through `o`). */
void fds_h_root(fds_req *r, fds_resp *o);
void fds_h_cluster_health(fds_req *r, fds_resp *o);
void fds_h_index_create(fds_req *r, fds_resp *o);
void fds_h_index_delete(fds_req *r, fds_resp *o);
void fds_h_index_get(fds_req *r, fds_resp *o);
void fds_h_index_exists(fds_req *r, fds_resp *o);
void fds_h_settings_get(fds_req *r, fds_resp *o);
void fds_h_settings_put(fds_req *r, fds_resp *o);
void fds_h_mapping_get(fds_req *r, fds_resp *o);
void fds_h_open_close(fds_req *r, fds_resp *o, bool open);
void fds_h_refresh(fds_req *r, fds_resp *o);
void fds_h_flush(fds_req *r, fds_resp *o);
void fds_h_forcemerge(fds_req *r, fds_resp *o);
void fds_h_stats(fds_req *r, fds_resp *o);
void fds_h_cat_indices(fds_req *r, fds_resp *o);
void fds_h_cat_segments(fds_req *r, fds_resp *o);
void fds_h_cat_nodes(fds_req *r, fds_resp *o);
void fds_h_nodes_stats(fds_req *r, fds_resp *o);
void fds_h_doc_put(fds_req *r, fds_resp *o, bool create_only);
void fds_h_doc_get(fds_req *r, fds_resp *o);
void fds_h_doc_delete(fds_req *r, fds_resp *o);
void fds_h_bulk(fds_req *r, fds_resp *o);
void fds_h_search(fds_req *r, fds_resp *o, bool count);
void fds_h_reindex(fds_req *r, fds_resp *o);

/* Shared by handlers: the index named by path segment `i`, or an error
 * response (and NULL). */
fds_index *fds_req_index(fds_req *r, fds_resp *o, unsigned i);

#endif
