/*
 * doc_update.h: the partial-document update of _update (doc_update.c),
 * which _bulk's update items run too (internal to src/http).
 */
#ifndef FDS_HTTP_DOC_UPDATE_H
#define FDS_HTTP_DOC_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doc_source.h"
#include "doc_write.h"
#include "fds_error.h"
#include "store.h"

/* The most retry_on_conflict fieldstore takes: each retry re-reads and
 * re-merges the document, and a writer that keeps losing the race to more
 * than this many others should hear about it. */
#define FDS_UPDATE_RETRIES_MAX 100

/* An update request: the parts of its body (pointers into the body text)
 * and of its URL or bulk action line. */
typedef struct fds__upd_req {
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
} fds__upd_req;

/* Read an update body (`len` bytes; `u->body` points into it afterwards)
 * into u.  Returns 0 or an error with `err` filled (400s: parse errors,
 * scripts, a missing doc). */
int fds__update_parse(const char *body, size_t len, fds__upd_req *u, fds_err *err);
/* Run update `u` on `ix` (Elasticsearch's UpdateHelper): read the current
 * document, merge `doc` into it (or index the upsert when it is missing),
 * and write the result only if the document is still the one read
 * (if_seq_no on its seq_no), retrying a lost race u->retries times.  The
 * outcome is in *w (w->code and w->err on failure) and *a (a->get is the
 * caller's to free); *op is the op written (its type gives the answer's
 * result and status). */
void fds__update_run(fds_index *ix, const fds__upd_req *u, bool refresh,
                     fds_write_op *op, fds_write_result *w, fds__upd_answer *a);

#endif
