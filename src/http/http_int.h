/*
 * http_int.h: request/response plumbing shared by the handler files of
 * src/http (internal).
 */
#ifndef FDS_HTTP_INT_H
#define FDS_HTTP_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

#include "fds_strbuf.h"
#include "http.h"

#define FDS_PATH_SEGMENTS_MAX 8
#define FDS_RESP_WARNINGS_MAX 4
/* The Elasticsearch version the node answers as (GET /, Warning headers) */
#define FDS__ES_VERSION "8.11.0"
#define FDS__NODE_ID "fds-node-0" /* the one node's id in stats and profiles */
#define FDS__NODE_NAME "fieldstore-0" /* and its name */

typedef struct fds_req {
    fds_store *store;
    const char *method;            /* "GET", "PUT", ... */
    const char *url;               /* the raw path, not unescaped */
    char *seg[FDS_PATH_SEGMENTS_MAX]; /* unescaped path segments */
    unsigned nseg;
    struct MHD_Connection *conn;
    const char *body;              /* NUL-terminated */
    size_t body_len;
    long long start_us;
    char **params;                 /* decoded parameter copies (fds__req_param) */
    unsigned nparams, params_cap;
    /* a request made inside another (an _msearch item): no connection; its
     * parameters are these name/value pairs (2 * nkv strings) */
    const char *const *kv;
    unsigned nkv;
} fds_req;

typedef struct fds_resp {
    int status;
    char *body;                    /* malloc'd */
    size_t len;
    const char *content_type;
    bool close;                    /* answer with "Connection: close" and end */
    const char *www_authenticate;  /* static string, or NULL */
    char allow[64];                /* a 405's Allow header ("GET,HEAD"), or "" */
    /* deprecation warnings, each a Warning header (fds__resp_warn) */
    const char *warnings[FDS_RESP_WARNINGS_MAX];
    unsigned nwarnings;
} fds_resp;

/* Add deprecation warning `text` (a static string without '"' or '\\')
 * to the answer, as Elasticsearch's HeaderWarning sends one: a header
 * `Warning: 299 Elasticsearch-<version> "text"` (RFC 7234 §5.5, code 299
 * "miscellaneous persistent warning").  Past FDS_RESP_WARNINGS_MAX it is
 * dropped; the same text twice is sent once. */
void fds__resp_warn(fds_resp *o, const char *text);

/* A URL query parameter, percent-decoded; "" for a bare flag ("?v"); NULL
 * when absent (or out of memory).  The copy belongs to the request and stays
 * valid until its answer is queued. */
const char *fds__req_param(fds_req *r, const char *key);
bool fds__req_param_bool(fds_req *r, const char *key, bool dflt);
/* A boolean URL parameter of which only the value `only` (0 false, 1
 * true; -1: both) is implemented: true when it is absent or has such a
 * value; otherwise false with a 400 in `o` (an unparsable value, or the
 * other one, refused by name). */
bool fds__req_param_only(fds_req *r, fds_resp *o, const char *key, int only);
/* The decoding behind fds__req_param, alone (the fuzz target
 * tests/fuzz/fuzz_url.c calls it): a malloc'd, NUL-terminated copy of the
 * raw value `v` (`vlen` bytes) with '+' as space and %XX percent-decoded;
 * NULL when out of memory. */
char *fds__param_decode(const char *v, size_t vlen);
/* Split the raw request path `path` (modified in place) on '/' and
 * percent-decode each segment into seg[0, *nseg) (pointers into `path`;
 * seg holds FDS_PATH_SEGMENTS_MAX).  Returns 0, FDS_PATH_TOO_MANY or
 * FDS_PATH_BAD_TEXT (a segment that decodes to invalid UTF-8 or holds a
 * NUL, "%00"); seg[0, *nseg) is filled up to the failure. */
#define FDS_PATH_TOO_MANY 1
#define FDS_PATH_BAD_TEXT 2
int fds__path_split(char *path, char **seg, unsigned *nseg);
/* True when every URL parameter is in `allowed` (NULL-terminated) or common
 * to all endpoints (pretty, human, filter_path, ...); else answers 400
 * "contains unrecognized parameter" as Elasticsearch does. */
bool fds__req_check_params(fds_req *r, fds_resp *o, const char *const *allowed);
/* The request's path from its unescaped segments ("/a/_stats/x"; "" for
 * "/"), cut to `cap` bytes, for error texts. */
#define FDS_REQ_PATH_MAX 512
void fds__req_path(fds_req *r, char *buf, size_t cap);
bool fds__req_is(fds_req *r, const char *method);
long long fds__now_us(void);

/* Responses.  All take ownership of what they are given. */
void fds__resp_json(fds_resp *o, int status, cJSON *json);
void fds__resp_raw(fds_resp *o, int status, char *body, size_t len,
                  const char *content_type);
/* Elasticsearch's error shape from a detail (status from err->status, or
 * derived from err->code when 0). */
/* The HTTP status and Elasticsearch `error.type` of an error: the one table
 * in http_error.c, from its kind (else its code). */
int fds__http_status(const fds_err *e);
const char *fds__http_type(const fds_err *e);
/* The Elasticsearch `type` of an fds_err_kind (an error's cause_kind);
 * "exception" for none or an unknown kind. */
const char *fds__http_kind_type(int kind);

/* The "error" object of Elasticsearch's error shape for `e` (root_cause,
 * type, reason, ...), for answers that hold errors per item (mget docs).
 * The caller owns it. */
cJSON *fds__error_json(const fds_err *e);
/* Answer an error from below src/http: status and type from its kind. */
void fds__resp_error(fds_resp *o, const fds_err *err);
/* Answer an error of the edge itself with an explicit status and type. */
void fds__resp_errorf(fds_resp *o, int status, const char *type,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Parse a JSON body (empty body -> NULL with 0).  Rejects malformed JSON
 * with a parse_exception / 400 in `err`. */
int fds__body_json(fds_req *r, cJSON **out, fds_err *err);
/* fds__body_json, then fds_json_check_body (duplicate keys, bad UTF-8): on
 * an error *out is NULL and err filled. */
int fds__body_checked(fds_req *r, cJSON **out, fds_err *err);

/* A _cat table: `ncol` column specs ("name|alias|...", a leading '*' for a
 * column shown only when ?h= names it), rows of strings (NULL = empty
 * cell); honours ?v, ?h= (names or aliases), ?format=json and ?s= (columns
 * with optional :asc/:desc, numbers compared as numbers). */
void fds__cat_render(fds_req *r, fds_resp *o, const char *const *cols,
                    size_t ncol, char ***rows, size_t nrows);
/* Free `n` rows of `ncol` malloc'd cells, and the array (admin.c). */
void fds__cat_rows_free(char ***rows, size_t n, size_t ncol);


/* Handlers (return through `o`). */
void fds__h_root(fds_req *r, fds_resp *o);
void fds__h_cluster_health(fds_req *r, fds_resp *o);
void fds__h_index_create(fds_req *r, fds_resp *o);
void fds__h_index_delete(fds_req *r, fds_resp *o);
void fds__h_index_get(fds_req *r, fds_resp *o);
void fds__h_settings_get(fds_req *r, fds_resp *o);
void fds__h_settings_put(fds_req *r, fds_resp *o);
void fds__h_mapping_get(fds_req *r, fds_resp *o);
void fds__h_mapping_put(fds_req *r, fds_resp *o);       /* mappings.c */
void fds__h_field_mapping_get(fds_req *r, fds_resp *o); /* mappings.c */
void fds__h_index_block_put(fds_req *r, fds_resp *o);   /* mappings.c */
void fds__h_cluster_settings_get(fds_req *r, fds_resp *o); /* cluster_settings.c */
void fds__h_cluster_settings_put(fds_req *r, fds_resp *o);
/* True when no index of ixs[0..n) has a block of `level`
 * (fds_block_level); else the first one's cluster_block_exception is
 * answered, the indices are released (fds_index_expr_free) and false
 * returned (mappings.c). */
bool fds__unblocked_or_answer(fds_resp *o, fds_index **ixs, size_t n, int level);
/* action.destructive_requires_name as it stands (transient, else
 * persistent, else Elasticsearch 8's default true). */
bool fds__destructive_requires_name(fds_store *st);
/* May a write create missing index `index` (action.auto_create_index as it
 * stands)?  0, or FDS_ENOTFOUND (kind INDEX_NOT_FOUND) in
 * Elasticsearch's words: "no such index [x] and [action.auto_create_index]
 * is [false]", "... ([a,b]) doesn't match", "... contains [-x] which
 * forbids automatic creation of the index". */
int fds__auto_create_check(fds_store *st, const char *index, fds_err *err);
void fds__h_open_close(fds_req *r, fds_resp *o, bool open);
void fds__h_refresh(fds_req *r, fds_resp *o);
void fds__h_flush(fds_req *r, fds_resp *o);
void fds__h_forcemerge(fds_req *r, fds_resp *o);
void fds__h_stats(fds_req *r, fds_resp *o);
void fds__h_cat_indices(fds_req *r, fds_resp *o);
void fds__h_cat_segments(fds_req *r, fds_resp *o);
void fds__h_cat_shards(fds_req *r, fds_resp *o);
void fds__h_search_shards(fds_req *r, fds_resp *o);
void fds__h_cat_nodes(fds_req *r, fds_resp *o);
void fds__h_nodes_stats(fds_req *r, fds_resp *o);
void fds__h_doc_put(fds_req *r, fds_resp *o, bool create_only);
void fds__h_doc_get(fds_req *r, fds_resp *o);
void fds__h_doc_delete(fds_req *r, fds_resp *o);
void fds__h_update(fds_req *r, fds_resp *o);
void fds__h_mget(fds_req *r, fds_resp *o);
void fds__h_cat_count(fds_req *r, fds_resp *o);
void fds__h_cat_health(fds_req *r, fds_resp *o);
void fds__h_bulk(fds_req *r, fds_resp *o);
/* The NDJSON splitting of fds__h_bulk alone (the fuzz target
 * tests/fuzz/fuzz_bulk.c calls it): parse `body` (`len` bytes followed by a
 * NUL) into action/metadata + source items; when it all parses, call
 * `visit` (when not NULL) on each (`op->src` points into `body`); free
 * them.  Returns 0, FDS_EPARSE / FDS_EINVAL (err filled, as _bulk answers
 * 400), FDS_ENOMEM. */
typedef void (*fds__bulk_visit)(void *arg, const char *action,
                                const char *index, const fds_write_op *op);
int fds__bulk_parse(const char *body, size_t len, const char *default_index,
                    fds__bulk_visit visit, void *arg, fds_err *err);
void fds__h_search(fds_req *r, fds_resp *o, bool count);
/* The URL parameters a search takes besides the common ones, "scroll"
 * first, NULL-terminated (search_api.c). */
extern const char *const *const fds__search_url_params;
/* _msearch: NDJSON header and body lines, each pair a search (search_api.c). */
void fds__h_msearch(fds_req *r, fds_resp *o);
void fds__h_cat_help(fds_req *r, fds_resp *o);
/* _field_caps over an index expression (field_caps.c). */
void fds__h_field_caps(fds_req *r, fds_resp *o);

/* ---- async search (async_search.c) ---------------------------------------
 * Searches run on a thread of their own, their answers kept in memory
 * for keep_alive.  Start/stop with the server: 0 or FDS_ENOMEM; stopping
 * waits for the running searches and frees every stored answer. */
int fds__async_start(void);
void fds__async_stop(void);
void fds__h_async_submit(fds_req *r, fds_resp *o);
void fds__h_async_get(fds_req *r, fds_resp *o);
void fds__h_async_status(fds_req *r, fds_resp *o);
void fds__h_async_delete(fds_req *r, fds_resp *o);
void fds__h_reindex(fds_req *r, fds_resp *o);

/* ---- aliases (aliases.c) ------------------------------------------------------ */
void fds__h_aliases_update(fds_req *r, fds_resp *o);
void fds__h_alias_put(fds_req *r, fds_resp *o);
void fds__h_alias_delete(fds_req *r, fds_resp *o);
void fds__h_alias_get(fds_req *r, fds_resp *o); /* and HEAD */
void fds__h_cat_aliases(fds_req *r, fds_resp *o);
/* The `aliases` object of create index and templates ({name: {filter,
 * routing, index_routing, search_routing, is_write_index, is_hidden}})
 * into *out (malloc'd, *n entries, `index` NULL; fds_aliases_free).
 * NULL obj: none.  0, FDS_EPARSE (kind PARSE), FDS_ENOMEM. */
int fds__aliases_from_json(const cJSON *obj, fds_alias **out, size_t *n,
                           fds_err *err);
/* Does the comma list `pats` (wildcards, `_all`; NULL: everything) name
 * `s`? */
bool fds__names_match(const char *pats, const char *s);
/* Empty `a` (free its strings; flags -1). */
void fds__alias_def_clear(fds_alias *a);
/* `a`'s filter parsed against mapping `m`: 0, or FDS_EINVAL (kind
 * INVALID_ARGUMENT, "failed to parse filter for alias [a]: why"). */
int fds__alias_filter_check(const fds_alias *a, const fds_mapping *m,
                            fds_err *err);
/* {alias: {...}} of index `index`, as GET /{index} shows it (caller owns). */
cJSON *fds__index_aliases_json(fds_store *st, const char *index);
/* The one index a single-document operation through alias `name` goes
 * to: for a read, the alias's only index; for a write, its write index
 * (the only index unless that says is_write_index false, or the one of
 * several that says true).  Returns 0 with a reference in *ix;
 * FDS_ENOTFOUND with err untouched when no alias has the name; FDS_EINVAL
 * (kind INVALID_ARGUMENT) in Elasticsearch's words for no write index or
 * several indices; FDS_EUNSUPPORTED for a write to an alias with
 * index_routing (routing is not kept). */
int fds__alias_target(fds_store *st, const char *name, bool write,
                      fds_index **ix, fds_err *err);
/* Index `name`, or else fds__alias_target's answer for it; with neither,
 * FDS_ENOTFOUND with the index_not_found error in err (may be NULL). */
int fds__index_or_alias(fds_store *st, const char *name, bool write,
                        fds_index **ix, fds_err *err);

/* ---- templates (templates.c) -------------------------------------------------
 * /_index_template, /_component_template and /_template (the kind from the
 * path's first segment). */
void fds__h_template_put(fds_req *r, fds_resp *o);
void fds__h_template_get(fds_req *r, fds_resp *o); /* and HEAD */
void fds__h_template_delete(fds_req *r, fds_resp *o);
void fds__h_cat_templates(fds_req *r, fds_resp *o);
void fds__h_simulate_index(fds_req *r, fds_resp *o);
/* The create-index body for a new index `name`: the matching templates'
 * settings, mappings and aliases merged as Elasticsearch merges them, then
 * `body` (the request's, may be NULL) over them.  *out is a new object
 * (caller deletes).  0, FDS_ENOMEM. */
int fds__template_body(fds_store *st, const char *name, const cJSON *body,
                       cJSON **out, fds_err *err);
/* Create index `name` from a create-index body (NULL: defaults) with the
 * templates applied (admin.c): settings, mappings, aliases; their filters
 * are checked against the new mapping.  fds_store_create_index_aliased's
 * errors, and the body's (FDS_EPARSE / FDS_EINVAL). */
int fds__index_create(fds_store *st, const char *name, const cJSON *body,
                      fds_err *err);
/* The URL's wait_for_active_shards (admin.c; ActiveShardCount.parseString):
 * *copies the shard copies to wait for -- 1 when absent or
 * "index-setting" (index.write.wait_for_active_shards' default), a count,
 * or FDS__ACTIVE_ALL.  0, or -1 with Elasticsearch's 400 in `o` (not a
 * number: number_format_exception; negative).  fds__active_shards_acked:
 * whether that many copies of every shard of an index of `replicas`
 * replicas are active -- the answer's shards_acknowledged (on one node,
 * more than the primary never is, which Elasticsearch answers after its
 * timeout; fieldstore answers at once). */
#define FDS__ACTIVE_ALL (-2L)
int fds__active_shards_wanted(fds_req *r, fds_resp *o, long *copies);
bool fds__active_shards_acked(long copies, uint32_t replicas);
/* The answer to a new index (create, resize): {"acknowledged":true,
 * "shards_acknowledged":...,"index":name}, shards acknowledged as
 * fds__active_shards_acked says for `copies` of `replicas`. */
void fds__index_created(fds_resp *o, const char *name, long copies, uint32_t replicas);
/* Every alias name of a[0, n) given as `<...>` date math resolved now
 * (admin.c, fds_index_name_resolve), as Elasticsearch resolves the aliases
 * of a new index.  0, FDS_EINVAL, FDS_ENOMEM. */
int fds__alias_names_resolve(fds_alias *a, size_t n, fds_err *e);
/* Settings given as JSON (nested or dotted, with or without "index.") onto
 * `set` as for a new index (admin.c).  0 or FDS_EINVAL. */
int fds__settings_from_json(const cJSON *settings, fds_index_settings *set,
                            const char *index_name, fds_err *err);

/* ---- resize (resize.c) ------------------------------------------------------- */
enum { FDS_RESIZE_CLONE, FDS_RESIZE_SHRINK, FDS_RESIZE_SPLIT };
/* POST|PUT /{index}/_clone|_shrink|_split/{target}: `type` FDS_RESIZE_*. */
void fds__h_resize(fds_req *r, fds_resp *o, int type);

/* Shared by handlers: the index named by path segment `i`, or an error
 * response (and NULL). */
fds_index *fds__req_index(fds_req *r, fds_resp *o, unsigned i);

/* ---- document sources (doc_source.c) ----------------------------------------- */

/* Which parts of `_source` a get, mget or update answer shows
 * (Elasticsearch's FetchSourceContext).  Patterns are malloc'd
 * (fds__source_spec_free); none of either kind = the whole source. */
typedef struct fds__source_spec {
    bool given;    /* some _source parameter or member was given */
    bool fetch;    /* false: no _source in the answer */
    char **inc, **exc;
    size_t ninc, nexc;
} fds__source_spec;

void fds__source_spec_free(fds__source_spec *s);
/* Add what the URL says (`_source`: true, false or a comma list of
 * includes; `_source_includes`, `_source_excludes`: comma lists) to `s`.
 * Returns 0, FDS_EINVAL (more than FDS_SOURCE_PATTERNS_MAX patterns, or
 * one longer than FDS_SOURCE_PATTERN_LEN_MAX), FDS_ENOMEM. */
int fds__source_spec_params(fds_req *r, fds__source_spec *s, fds_err *err);
/* Replace `s` by a JSON `_source` value: a boolean, a pattern, an array of
 * patterns, or {"includes"/"include", "excludes"/"exclude"}.  Returns 0,
 * FDS_EPARSE (kind PARSE) for another shape, or as above. */
int fds__source_spec_json(const cJSON *v, fds__source_spec *s, fds_err *err);
/* Append src[0..n) as `s` selects it, byte for byte (s->fetch not
 * consulted). */
void fds__source_spec_put(fds_strbuf *b, const fds__source_spec *s,
                          const uint8_t *src, size_t n);

/* Elasticsearch's partial-document update (XContentHelper#update) on JSON
 * text: the object chg[0..chg_len) merged into the object old[0..old_len)
 * -- a member both give as objects is merged recursively, any other member
 * of chg replaces or joins the old one -- appended to `out` with every
 * value copied byte for byte, old members first in their order.
 * *modified tells whether the result differs from `old` as Elasticsearch's
 * detect_noop compares (parsed values; members in any order).  Both inputs
 * must be valid JSON.  Returns 0, FDS_EINVAL (an input is not an object),
 * FDS_ETOOBIG (objects with too many members to match: doc_source.c's
 * FDS_MERGE_PAIRS_MAX), FDS_ENOMEM. */
int fds__json_merge(const char *old, size_t old_len, const char *chg,
                    size_t chg_len, fds_strbuf *out, bool *modified);
/* The value of top-level member `key` of the JSON object s[0..n) as the
 * byte range s[*vs..*ve).  Returns 0 or FDS_ENOTFOUND. */
int fds__json_member(const char *s, size_t n, const char *key, size_t *vs,
                     size_t *ve);

/* ---- connection guard (guard.c) ---------------------------------------------
 * Deadlines and soft caps for connections; see guard.c for the rules. */
typedef struct fds__guard fds__guard;
typedef struct fds__guard_opts {
    unsigned head_timeout_s;  /* whole request head, from accept */
    unsigned idle_timeout_s;  /* next head on a keep-alive connection */
    uint64_t min_body_rate;   /* bytes/s after head_timeout_s; 0 = no bound */
    unsigned max_connections; /* soft total cap */
    unsigned max_per_ip;      /* soft cap per client address */
} fds__guard_opts;

/* Start the reaper thread.  Returns 0 or FDS_ENOMEM. */
int fds__guard_create(const fds__guard_opts *o, fds__guard **out);
/* After MHD_stop_daemon.  NULL is a no-op. */
void fds__guard_free(fds__guard *g);
/* MHD_OPTION_NOTIFY_CONNECTION callback (cls = the guard). */
void fds__guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe);
/* A request head is complete: returns 0, or 1 (over the per-address cap) or
 * 2 (over the total cap): then answer 429 and close. */
int fds__guard_head(fds__guard *g, struct MHD_Connection *conn);
/* `n` more body bytes arrived (extends the body deadline). */
void fds__guard_body(fds__guard *g, struct MHD_Connection *conn, size_t n);
/* The request is being handled: no deadline until it is answered. */
void fds__guard_busy(fds__guard *g, struct MHD_Connection *conn);
/* The answer is sent: the next head is due within idle_timeout_s. */
void fds__guard_done(fds__guard *g, struct MHD_Connection *conn);


/* ---- JSON output (json_out.c) ------------------------------------------------ */

/* Keep only the parts of the JSON text `in` (`n` bytes, valid JSON) named by
 * Elasticsearch's `filter_path` (comma-separated dotted paths; a segment
 * may hold `*` wildcards, and `**` matches any number of levels), then
 * drop the parts named by its exclusions (paths with a leading `-`; with
 * no inclusion, everything else is kept).  Values are copied byte for
 * byte; objects and arrays the filter leaves empty are dropped (an
 * exclusion keeps one that was empty already, as Elasticsearch does), and
 * nothing left gives `{}`.  At most FDS_FILTER_PATHS_MAX paths of each
 * kind count.  *out is malloc'd (caller frees).  Returns 0 or FDS_ENOMEM. */
int fds__json_filter(const char *in, size_t n, const char *filter_path,
                     char **out, size_t *outn);
/* Re-indent the JSON text `in` the way Elasticsearch's ?pretty does
 * (Jackson's default pretty printer: two spaces, `"key" : value`, `{ }` for
 * an empty object, a final newline).  Tokens are copied unchanged, so
 * numbers keep every digit.  *out is malloc'd.  Returns 0 or FDS_ENOMEM. */
int fds__json_pretty(const char *in, size_t n, char **out, size_t *outn);

/* ---- basic authentication (auth.c) ------------------------------------------- */
typedef struct fds__users fds__users;
/* Load a users file: one `name:hash` a line, `hash` a crypt(3) string such
 * as `mkpasswd -m sha-512` prints; blank lines and lines starting with `#`
 * are skipped.  Returns 0, FDS_EIO (cannot read), FDS_EINVAL (a bad line:
 * the reason names the file and line number). */
int fds__users_load(const char *path, fds__users **out, fds_err *err);
void fds__users_free(fds__users *u);
/* Check the request's basic-auth credentials (Authorization header).
 * Returns 1 (good), 0 (none or unusable: *who = ""), -1 (wrong name or
 * password: *who = the name given, truncated to who_cap). */
int fds__users_check(fds__users *u, struct MHD_Connection *conn, char *who,
                     size_t who_cap);

#endif
