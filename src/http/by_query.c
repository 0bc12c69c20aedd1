/*
 * by_query.c: `_delete_by_query`, `_update_by_query` and the scan under
 * them and `_reindex` (Elasticsearch's BulkByScroll actions).
 *
 * A job pins one view of the source index (a snapshot, as Elasticsearch's
 * scroll is), reads its matching documents in `_doc` order batch after
 * batch (search_after on `_doc`, nothing counted, so each batch starts
 * where the last ended and the scan stays linear), and writes each batch
 * as one ordinary bulk write: deletes, re-indexes of the same source (which
 * picks up a mapping change), or copies into the destination.  Deletes and
 * updates carry the seq_no the view saw (if_seq_no), so a document changed
 * since the snapshot is a version conflict: counted and skipped with
 * conflicts=proceed, else the job stops there (409).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search_ctx.h"
#include "ast/search_request.h"
#include "tasks.h"

/* Documents read and written at a time (Elasticsearch's scroll_size
 * default) and at most (index.max_result_window). */
#define SCAN_BATCH 1000
#define SCAN_BATCH_MAX 10000

void fds__scan_job_free(void *job)
{
    fds__scan_job *j = job;
    if (!j)
        return;
    fds_index_release(j->from);
    fds_index_release(j->to);
    free(j->query);
    free(j->q);
    free(j->df);
    free(j->default_operator);
    free(j->routing);
    fds__source_spec_free(&j->filter);
    free(j);
}

/* The running counters of a job (BulkByScrollTask.Status). */
typedef struct scan_counts {
    uint64_t total, created, updated, deleted, batches, conflicts;
    uint64_t throttled_ms;
    double rps; /* requests_per_second; 0: unthrottled (shown as -1) */
} scan_counts;

static void put_counts(cJSON *j, const scan_counts *c)
{
    cJSON_AddNumberToObject(j, "total", (double)c->total);
    cJSON_AddNumberToObject(j, "updated", (double)c->updated);
    cJSON_AddNumberToObject(j, "created", (double)c->created);
    cJSON_AddNumberToObject(j, "deleted", (double)c->deleted);
    cJSON_AddNumberToObject(j, "batches", (double)c->batches);
    cJSON_AddNumberToObject(j, "version_conflicts", (double)c->conflicts);
    cJSON_AddNumberToObject(j, "noops", 0);
    cJSON *rt = cJSON_AddObjectToObject(j, "retries");
    cJSON_AddNumberToObject(rt, "bulk", 0);
    cJSON_AddNumberToObject(rt, "search", 0);
    cJSON_AddNumberToObject(j, "throttled_millis", (double)c->throttled_ms);
    cJSON_AddNumberToObject(j, "requests_per_second", c->rps > 0 ? c->rps : -1);
    cJSON_AddNumberToObject(j, "throttled_until_millis", 0);
}

/* One failure of a write, as BulkByScrollResponse lists it. */
static void add_failure(cJSON *failures, fds_index *ix, const fds_write_result *w)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "index", fds_index_name(ix));
    cJSON_AddStringToObject(f, "id", w->id);
    cJSON *cause = cJSON_AddObjectToObject(f, "cause");
    cJSON_AddStringToObject(cause, "type", fds__http_type(&w->err));
    cJSON_AddStringToObject(cause, "reason", w->err.reason);
    cJSON_AddStringToObject(cause, "index_uuid", fds_index_uuid(ix));
    cJSON_AddStringToObject(cause, "shard", "0"); /* one shard per index */
    cJSON_AddStringToObject(cause, "index", fds_index_name(ix));
    cJSON_AddNumberToObject(f, "status", w->err.kind ? fds__http_status(&w->err) : 400);
    cJSON_AddItemToArray(failures, f);
}

/* The buffers of one batch. */
typedef struct scan_bufs {
    fds_write_op *ops;
    fds_write_result *res;
    const uint8_t **srcs;
    size_t *lens;
    fds_strbuf *filtered; /* source._source applied, per document */
} scan_bufs;

/* Batch `sr` (n hits of view v) written as j's mode asks, counted into c;
 * failures appended.  0 or an error of the whole batch; *stop when a
 * failure ends the job. */
static int scan_batch(fds__scan_job *j, fds_index_view *v, const fds_search_result *sr,
                      size_t n, scan_bufs *b, scan_counts *c, cJSON *failures,
                      bool *stop, fds_err *e)
{
    unsigned nseg;
    const fds_search_segment *segs = fds_index_view_segments(v, &nseg);
    int rc = 0;
    if (n && j->mode != FDS__SCAN_DELETE &&
        !fds_mapping_source_enabled(fds_index_mapping(j->from))) {
        /* AbstractAsyncBulkByScrollAction: nothing to write back or copy */
        size_t il;
        const char *id = fds_sidx_doc_id(segs[sr->hits[0].seg].sidx,
                                         sr->hits[0].doc, &il);
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s][_doc][%.*s] didn't store _source",
                            fds_index_name(j->from), (int)il, id ? id : "");
    }
    if (n && j->mode != FDS__SCAN_DELETE)
        rc = fds_index_view_fetch(v, sr->hits, n, b->srcs, b->lens, e);
    for (size_t k = 0; !rc && k < n; k++) {
        const fds_hit *h = &sr->hits[k];
        size_t il;
        const char *id = fds_sidx_doc_id(segs[h->seg].sidx, h->doc, &il);
        fds_write_op *op = &b->ops[k];
        *op = (fds_write_op){.type = FDS_OP_INDEX, .id = id, .id_len = il};
        /* the routing is kept (Elasticsearch's dest.routing "keep"): a
         * routed document is rewritten, or deleted, in its own shard */
        op->routing = fds_index_view_doc_routing(v, h->seg, h->doc,
                                                 &op->routing_len);
        if (j->mode == FDS__SCAN_REINDEX) {
            op->type = j->create ? FDS_OP_CREATE : FDS_OP_INDEX;
            if (j->routing) { /* dest.routing: discard, or =value */
                bool discard = !strcmp(j->routing, "discard");
                op->routing = discard ? NULL : j->routing + 1;
                op->routing_len = discard ? 0 : strlen(j->routing + 1);
            }
            if (j->external) { /* the source's version, kept if higher */
                int64_t seq;
                fds_index_view_doc_meta(v, h->seg, h->doc, &op->external_version, &seq);
                op->version_type = j->external_gte ? FDS_VERSION_EXTERNAL_GTE
                                                   : FDS_VERSION_EXTERNAL;
            }
            if (j->filter.given) {
                b->filtered[k].len = 0;
                fds__source_spec_put(&b->filtered[k], &j->filter, b->srcs[k], b->lens[k]);
                if (b->filtered[k].oom || !b->filtered[k].p) {
                    rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
                    break;
                }
                b->srcs[k] = (const uint8_t *)b->filtered[k].p;
                b->lens[k] = b->filtered[k].len;
            }
        } else {
            int64_t ver, seq;
            fds_index_view_doc_meta(v, h->seg, h->doc, &ver, &seq);
            op->type = j->mode == FDS__SCAN_DELETE ? FDS_OP_DELETE : FDS_OP_INDEX;
            op->check_seq_no = true;
            op->if_seq_no = seq;
            op->if_primary_term = 1;
        }
        if (op->type != FDS_OP_DELETE) {
            op->src = b->srcs[k];
            op->src_len = b->lens[k];
        }
    }
    fds_index *to = j->mode == FDS__SCAN_REINDEX ? j->to : j->from;
    if (!rc && n)
        rc = fds_index_write(to, b->ops, n, b->res, false, e);
    for (size_t k = 0; !rc && k < n; k++) {
        const fds_write_result *w = &b->res[k];
        c->total++;
        if (!w->code) {
            if (j->mode == FDS__SCAN_DELETE)
                c->deleted++;
            else if (j->mode == FDS__SCAN_UPDATE || !w->created)
                c->updated++;
            else
                c->created++;
        } else if (w->err.kind == FDS_KIND_CONFLICT) {
            c->conflicts++;
            if (!j->proceed) {
                add_failure(failures, to, w);
                *stop = true;
            }
        } else {
            add_failure(failures, to, w);
            *stop = true;
        }
    }
    c->batches += n > 0;
    return rc;
}

/* requests_per_second: wait until `done` documents have taken at least
 * done / rps seconds since t0 (microseconds), as Elasticsearch's
 * WorkerBulkByScrollTaskState delays the next batch, in steps of at most
 * SCAN_THROTTLE_STEP_MS so that a cancel is seen; the wait is added to
 * *throttled_ms. */
#define SCAN_THROTTLE_STEP_MS 100
static void scan_throttle(fds__task *t, uint64_t t0, double rps, uint64_t done,
                          uint64_t *throttled_ms)
{
    uint64_t due = t0 + (uint64_t)((double)done / rps * 1e6);
    for (;;) {
        uint64_t now = (uint64_t)fds__now_us();
        if (now >= due || fds__task_cancelled(t))
            return;
        uint64_t step = due - now;
        if (step > SCAN_THROTTLE_STEP_MS * 1000)
            step = SCAN_THROTTLE_STEP_MS * 1000;
        struct timespec ts = {(time_t)(step / 1000000), (long)(step % 1000000) * 1000};
        nanosleep(&ts, NULL);
        *throttled_ms += step / 1000;
    }
}

/* The status of a job's slices as a task shows it while it runs, kept by
 * their threads under mu. */
typedef struct scan_shared {
    pthread_mutex_t mu;
    fds__task *t;
    struct scan_slice *sl;
    uint32_t n;
} scan_shared;

/* One slice of a job: the source shards s with s % nslices == id (with
 * one slice, every segment as one search, so _doc order spans shards). */
typedef struct scan_slice {
    fds__scan_job *j;
    scan_shared *sh;
    uint32_t id, nslices;
    uint64_t max_docs;  /* its part of the job's (Elasticsearch divides it) */
    double rps;         /* its part of requests_per_second; 0: none */
    uint64_t t0;        /* microseconds */
    scan_counts c;      /* its own thread's */
    scan_counts shown;  /* c as of its last batch, under sh->mu */
    cJSON *failures;
    bool cancelled;
    int rc;
    fds_err e;
} scan_slice;

/* A status object: the slices' counts summed, each slice's with more
 * than one (BulkByScrollTask.Status with its "slices"). */
static cJSON *slices_status(const scan_slice *sl, uint32_t n, bool shown)
{
    scan_counts sum = {0};
    for (uint32_t i = 0; i < n; i++) {
        const scan_counts *c = shown ? &sl[i].shown : &sl[i].c;
        sum.total += c->total;
        sum.created += c->created;
        sum.updated += c->updated;
        sum.deleted += c->deleted;
        sum.batches += c->batches;
        sum.conflicts += c->conflicts;
        sum.throttled_ms += c->throttled_ms;
        sum.rps += c->rps;
    }
    cJSON *st = cJSON_CreateObject();
    put_counts(st, &sum);
    if (n > 1) {
        cJSON *arr = cJSON_AddArrayToObject(st, "slices");
        for (uint32_t i = 0; i < n; i++) {
            cJSON *one = cJSON_CreateObject();
            cJSON_AddNumberToObject(one, "slice_id", i);
            put_counts(one, shown ? &sl[i].shown : &sl[i].c);
            cJSON_AddItemToArray(arr, one);
        }
    }
    return st;
}

static void slice_report(scan_slice *s)
{
    scan_shared *sh = s->sh;
    pthread_mutex_lock(&sh->mu);
    s->shown = s->c;
    if (sh->t)
        fds__task_status(sh->t, slices_status(sh->sl, sh->n, true));
    pthread_mutex_unlock(&sh->mu);
}

/* Scan segments segs[off, off+n) of view v (one shard's run, or all) in
 * batches as the slice's job asks.  Caller frees req's after values. */
static int scan_range(scan_slice *s, fds_search_request *req, fds_index_view *v,
                      const fds_search_segment *segs, unsigned off, unsigned n,
                      scan_bufs *b, bool *stop)
{
    fds__scan_job *j = s->j;
    scan_counts *c = &s->c;
    fds_err *e = &s->e;
    int rc = 0;
    for (unsigned k = 0; k < req->nafter; k++) {
        free(req->after[k].str);
        req->after[k].str = NULL;
    }
    req->nafter = 0;
    for (;;) {
        /* max_docs counts what was processed; with conflicts=proceed what
         * was written (a conflict does not use one up), as in Elasticsearch 8 */
        uint64_t done = j->proceed ? c->created + c->updated + c->deleted : c->total;
        if (rc || *stop || done >= s->max_docs)
            break;
        if ((s->cancelled = fds__task_cancelled(s->sh->t)))
            break;
        fds_search_result sr;
        if ((rc = fds_search_execute(req, segs + off, n, &sr, e)))
            break;
        size_t nh = sr.nhits;
        if (nh > s->max_docs - done)
            nh = (size_t)(s->max_docs - done);
        for (size_t k = 0; k < sr.nhits; k++)
            sr.hits[k].seg += off; /* the view's numbering */
        rc = scan_batch(j, v, &sr, nh, b, c, s->failures, stop, e);
        if (!rc && nh) { /* the next batch starts after this one's last hit */
            const fds_hit *last = &sr.hits[nh - 1];
            for (unsigned k = 0; k < req->nsort; k++) {
                free(req->after[k].str);
                req->after[k] = (fds_after_val){.lnum = last->sort_long[k],
                                                .num = last->sort_num[k]};
                if (last->sort_str[k] &&
                    !(req->after[k].str = strndup(last->sort_str[k],
                                                  last->sort_str_len[k])))
                    rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
                req->after[k].str_len = last->sort_str_len[k];
                req->after[k].is_null =
                    !last->sort_str[k] && last->sort_num[k] != last->sort_num[k];
            }
            req->nafter = req->nsort;
        }
        if (!rc && s->rps > 0)
            scan_throttle(s->sh->t, s->t0, s->rps, c->total, &c->throttled_ms);
        size_t got = sr.nhits;
        fds_search_result_free(&sr);
        slice_report(s);
        if (got < j->batch && nh == got) /* (a clipped batch goes on) */
            break;
    }
    return rc;
}

/* Run one slice (a thread's start routine with more than one). */
static void *slice_run(void *arg)
{
    scan_slice *s = arg;
    fds__scan_job *j = s->j;
    fds_err *e = &s->e;
    fds_search_request *req = NULL;
    fds_search_limits lim;
    fds_search_limits_default(&lim);
    lim.max_result_window = UINT32_MAX;
    lim.lookup = j->st ? fds__terms_lookup : NULL;
    lim.lookup_arg = j->st;
    int rc = fds_search_parse_limits(j->query ? j->query : "",
                                     j->query ? strlen(j->query) : 0,
                                     fds_index_mapping(j->from), &lim, 0, &req, e);
    /* df and default_operator first: they apply to a later q */
    const char *const keys[] = {"df", "default_operator", "q"};
    const char *const vals[] = {j->df, j->default_operator, j->q};
    for (size_t k = 0; !rc && k < 3; k++)
        if (vals[k])
            rc = fds_search_apply_param(req, keys[k], vals[k], e);
    /* each slice its own view: a fetch uses the view's buffer */
    fds_index_view *v = NULL;
    if (!rc)
        rc = fds_index_view_acquire(j->from, &v, e);
    if (!rc) { /* in _doc order (source.sort's, then _doc's), batch after
                * batch, nothing counted */
        req->from = 0;
        req->size = j->batch;
        req->track_total = FDS_TRACK_TOTAL_NONE;
        if (req->nsort >= FDS_SORT_VALUES_MAX)
            rc = fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "[sort] of a reindex takes at most %d keys",
                              FDS_SORT_VALUES_MAX - 1);
        else
            req->sort[req->nsort++] = (fds_sort_spec){.kind = FDS_SORT_DOC};
    }
    unsigned nseg = 0;
    const fds_search_segment *segs = rc ? NULL : fds_index_view_segments(v, &nseg);
    scan_bufs b = {calloc(j->batch, sizeof *b.ops), calloc(j->batch, sizeof *b.res),
                   calloc(j->batch, sizeof *b.srcs), calloc(j->batch, sizeof *b.lens),
                   calloc(j->batch, sizeof *b.filtered)};
    if (!rc && (!b.ops || !b.res || !b.srcs || !b.lens || !b.filtered || !s->failures))
        rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    bool stop = false;
    if (!rc && s->nslices == 1)
        rc = scan_range(s, req, v, segs, 0, nseg, &b, &stop);
    for (unsigned a = 0; !rc && s->nslices > 1 && a < nseg && !stop && !s->cancelled;) {
        uint32_t shard = fds_index_view_segment_shard(v, a);
        unsigned end = a;
        while (end < nseg && fds_index_view_segment_shard(v, end) == shard)
            end++;
        if (shard % s->nslices == s->id)
            rc = scan_range(s, req, v, segs, a, end - a, &b, &stop);
        a = end;
    }
    free(b.ops);
    free(b.res);
    free(b.srcs);
    free(b.lens);
    for (size_t k = 0; b.filtered && k < j->batch; k++)
        fds_strbuf_free(&b.filtered[k]);
    free(b.filtered);
    fds_search_request_free(req);
    fds_index_view_release(v);
    s->rc = rc;
    return NULL;
}

cJSON *fds__scan_run(fds__scan_job *j, fds__task *t, int *status, fds_err *e)
{
    uint64_t t0 = (uint64_t)fds__now_us();
    *status = 200;
    uint32_t n = j->slices ? j->slices : 1;
    scan_shared sh = {.t = t, .n = n};
    pthread_mutex_init(&sh.mu, NULL);
    scan_slice *sl = calloc(n, sizeof *sl);
    pthread_t *th = calloc(n, sizeof *th);
    bool *started = calloc(n, sizeof *started);
    int rc = sl && th && started ? 0 : fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                                    "out of memory");
    sh.sl = sl;
    for (uint32_t i = 0; !rc && i < n; i++) {
        /* Elasticsearch's division of max_docs and of the rate */
        uint64_t md = j->max_docs == UINT64_MAX ? UINT64_MAX
                      : j->max_docs / n + (i < j->max_docs % n);
        sl[i] = (scan_slice){.j = j, .sh = &sh, .id = i, .nslices = n, .max_docs = md,
                             .rps = j->rps / n, .t0 = t0, .failures = cJSON_CreateArray()};
        sl[i].c.rps = sl[i].rps;
        fds_err_clear(&sl[i].e);
    }
    if (!rc && n == 1)
        slice_run(&sl[0]);
    for (uint32_t i = 0; !rc && n > 1 && i < n; i++)
        started[i] = pthread_create(&th[i], NULL, slice_run, &sl[i]) == 0;
    for (uint32_t i = 0; !rc && n > 1 && i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            sl[i].rc = fds_err_setk(&sl[i].e, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                    "cannot start slice [%u]", i);
    }
    bool cancelled = false;
    for (uint32_t i = 0; !rc && i < n; i++) {
        cancelled |= sl[i].cancelled;
        if (sl[i].rc && !rc) { /* the first slice's error is the job's */
            rc = sl[i].rc;
            *e = sl[i].e;
        }
    }
    fds_index *to = j->mode == FDS__SCAN_REINDEX ? j->to : j->from;
    if (!rc && j->refresh)
        rc = fds_index_refresh(to, e);
    cJSON *out = NULL, *failures = rc ? NULL : cJSON_CreateArray();
    if (failures) {
        out = slices_status(sl, n, false);
        cJSON_AddNumberToObject(out, "took",
                                (double)(((uint64_t)fds__now_us() - t0) / 1000));
        cJSON_AddBoolToObject(out, "timed_out", 0);
        if (cancelled)
            cJSON_AddStringToObject(out, "canceled", "by user request");
        for (uint32_t i = 0; i < n; i++) {
            cJSON *f;
            while (sl[i].failures && (f = cJSON_DetachItemFromArray(sl[i].failures, 0)))
                cJSON_AddItemToArray(failures, f);
        }
        cJSON_AddItemToObject(out, "failures", failures);
        const cJSON *f;
        cJSON_ArrayForEach(f, failures) { /* the worst failure's status */
            int s = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(f, "status"));
            if (s > *status)
                *status = s;
        }
    }
    for (uint32_t i = 0; sl && i < n; i++)
        cJSON_Delete(sl[i].failures);
    free(sl);
    free(th);
    free(started);
    pthread_mutex_destroy(&sh.mu);
    return out;
}

/* A job run as a task: its answer, or its error in Elasticsearch's shape. */
static cJSON *scan_task(void *arg, fds__task *t, int *status)
{
    fds_err e;
    fds_err_clear(&e);
    cJSON *out = fds__scan_run(arg, t, status, &e);
    if (out)
        return out;
    *status = fds__http_status(&e);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "error", fds__error_json(&e));
    cJSON_AddNumberToObject(j, "status", *status);
    return j;
}

double fds__scan_rps(fds_req *r)
{
    const char *rps = fds__req_param(r, "requests_per_second");
    double v = rps ? strtod(rps, NULL) : -1;
    return v > 0 ? v : 0;
}

bool fds__scan_params_ok(fds_req *r, fds_resp *o)
{
    const char *sl = fds__req_param(r, "slices");
    char *end = NULL;
    long n = sl ? strtol(sl, &end, 10) : 1;
    if (sl && strcmp(sl, "auto") && (!*sl || *end || n < 1)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[slices] must be a positive integer or the string \"auto\"");
        return false;
    }
    const char *rps = fds__req_param(r, "requests_per_second");
    double v = rps ? strtod(rps, &end) : -1;
    if (rps && (!*rps || *end || (v <= 0 && v != -1))) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[requests_per_second] must be a float greater than 0. Use -1 "
                        "to disable throttling.");
        return false;
    }
    return true;
}

/* slices=auto: one slice a shard up to this many (Elasticsearch's
 * BulkByScrollParallelizationHelper.AUTO_SLICE_CEILING) */
#define SCAN_AUTO_SLICES_MAX 20
/* slices=N at most: each slice is a thread */
#define SCAN_SLICES_MAX 64

/* The URL's slices for job j (checked by fds__scan_params_ok): auto is
 * the source's shard count up to SCAN_AUTO_SLICES_MAX, as Elasticsearch
 * picks it; more slices than shards (a slice is a set of shards here) or
 * than SCAN_SLICES_MAX are refused. */
static bool scan_slices(fds_req *r, fds_resp *o, fds__scan_job *j)
{
    const char *sl = fds__req_param(r, "slices");
    uint32_t shards = fds_index_nshards(j->from);
    unsigned long n = !sl ? 1
                    : !strcmp(sl, "auto") ? (shards < SCAN_AUTO_SLICES_MAX ? shards
                                                                       : SCAN_AUTO_SLICES_MAX)
                                          : strtoul(sl, NULL, 10);
    if (n > SCAN_SLICES_MAX) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[slices] of [%lu] is more than fieldstore runs at once [%d]", n,
                        SCAN_SLICES_MAX);
        return false;
    }
    if (n > shards) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "[slices] of [%lu] is more than the [%u] shards of [%s]: a slice "
                        "is a set of shards in fieldstore (auto is one slice a shard)",
                        n, shards, fds_index_name(j->from));
        return false;
    }
    j->slices = (uint32_t)n;
    return true;
}

void fds__scan_answer(fds_req *r, fds_resp *o, fds__scan_job *j,
                      const char *action, const char *description)
{
    if (!scan_slices(r, o, j)) {
        fds__scan_job_free(j);
        return;
    }
    if (fds__req_param_bool(r, "wait_for_completion", true)) {
        fds_err e;
        fds_err_clear(&e);
        int status;
        cJSON *out = fds__scan_run(j, NULL, &status, &e);
        fds__scan_job_free(j);
        if (!out)
            return fds__resp_error(o, &e);
        return fds__resp_json(o, status, out);
    }
    char id[64];
    int rc = fds__task_spawn(action, description, scan_task, j, fds__scan_job_free,
                             id, sizeof id);
    if (rc == FDS_ETOOBIG)
        return fds__resp_errorf(o, 429, "rejected_execution_exception",
                               "[%d] tasks are running already; try again when "
                               "one is done", FDS_TASKS_RUNNING_MAX);
    if (rc)
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "task", id);
    fds__resp_json(o, 200, out);
}

/* ---- _delete_by_query and _update_by_query ------------------------------------------ */

static const char *const BY_QUERY_PARAMS[] = {
    "conflicts", "max_docs", "refresh", "scroll_size", "size", "slices",
    "wait_for_completion", "requests_per_second", "timeout", "scroll",
    "wait_for_active_shards", "q", "df", "default_operator", "analyzer",
    "lenient", "allow_no_indices", "ignore_unavailable", "expand_wildcards",
    "routing", "preference", "search_type", "search_timeout",
    "request_cache", "terminate_after", "version", "stats", "pipeline",
    NULL};

/* Body keys a by-query reads (Elasticsearch's own, less script and slice). */
static bool body_ok(const cJSON *body, bool del, fds_resp *o)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, body) {
        const char *k = it->string;
        if (!strcmp(k, "query") || !strcmp(k, "max_docs") || !strcmp(k, "conflicts"))
            continue;
        if (!strcmp(k, "script") && !del) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "[script] is not supported: fieldstore runs no "
                            "scripts; _update_by_query without one re-indexes "
                            "each document as it is");
            return false;
        }
        fds__resp_errorf(o, 400, "x_content_parse_exception",
                        "[%s] unknown field [%s]%s",
                        del ? "delete_by_query" : "update_by_query", k,
                        !strcmp(k, "slice") || !strcmp(k, "script")
                            ? ": not supported by fieldstore" : "");
        return false;
    }
    return true;
}

/* A non-negative integer: JSON number or URL text. */
static bool count_value(const cJSON *v, const char *s, uint64_t *out)
{
    if (v) {
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9e15 ||
            v->valuedouble != (double)(uint64_t)v->valuedouble)
            return false;
        *out = (uint64_t)v->valuedouble;
        return true;
    }
    if (!s)
        return true;
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-')
        return false;
    *out = x;
    return true;
}

void fds__h_by_query(fds_req *r, fds_resp *o, bool del)
{
    if (!fds__req_check_params(r, o, BY_QUERY_PARAMS))
        return;
    const char *name = del ? "delete_by_query" : "update_by_query";
    if (!fds__scan_params_ok(r, o))
        return;
    if (fds__req_param(r, "pipeline"))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "[pipeline] is not supported: fieldstore has no "
                               "ingest pipelines");
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_json(r, &body, &e) || fds_json_check_body(r->body, r->body_len, &e)) {
        cJSON_Delete(body);
        return fds__resp_error(o, &e);
    }
    if (body && !cJSON_IsObject(body)) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "parse_exception",
                               "request body must be a JSON object");
    }
    if (!body_ok(body, del, o)) {
        cJSON_Delete(body);
        return;
    }
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(body, "query");
    const char *uq = fds__req_param(r, "q");
    if (del && !q && !uq) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: query is missing;");
    }
    uint64_t max_docs = UINT64_MAX, batch = SCAN_BATCH;
    const char *ss = fds__req_param(r, "scroll_size");
    bool ok = count_value(cJSON_GetObjectItemCaseSensitive(body, "max_docs"), NULL,
                          &max_docs) &&
              count_value(NULL, fds__req_param(r, "max_docs"), &max_docs) &&
              count_value(NULL, fds__req_param(r, "size"), &max_docs) &&
              count_value(NULL, ss, &batch) && batch >= 1 && batch <= SCAN_BATCH_MAX;
    const cJSON *bc = cJSON_GetObjectItemCaseSensitive(body, "conflicts");
    const char *conf = fds__req_param(r, "conflicts");
    if (!conf && cJSON_IsString(bc))
        conf = bc->valuestring;
    if (!ok || (bc && !cJSON_IsString(bc)) ||
        (conf && strcmp(conf, "proceed") && strcmp(conf, "abort"))) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "_%s takes max_docs (a number), scroll_size (1 to "
                               "%d) and conflicts abort or proceed", name,
                               SCAN_BATCH_MAX);
    }
    fds__scan_job *j = calloc(1, sizeof *j);
    if (!j) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    *j = (fds__scan_job){.mode = del ? FDS__SCAN_DELETE : FDS__SCAN_UPDATE,
                         .max_docs = max_docs, .batch = (uint32_t)batch,
                         .proceed = conf && !strcmp(conf, "proceed")};
    const char *df = fds__req_param(r, "df"), *op = fds__req_param(r, "default_operator");
    if ((uq && !(j->q = strdup(uq))) || (df && !(j->df = strdup(df))) ||
        (op && !(j->default_operator = strdup(op)))) {
        cJSON_Delete(body);
        fds__scan_job_free(j);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    const char *rf = fds__req_param(r, "refresh");
    j->refresh = rf && (!*rf || !strcmp(rf, "true") || !strcmp(rf, "wait_for"));
    if (q) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddItemReferenceToObject(w, "query", (cJSON *)q);
        j->query = cJSON_PrintUnformatted(w);
        cJSON_Delete(w);
    }
    cJSON_Delete(body);
    fds_index *ix = fds__req_index(r, o, 0);
    if (!ix) {
        fds__scan_job_free(j);
        return;
    }
    j->from = ix;
    j->st = r->store;
    char desc[FDS_REQ_PATH_MAX + 32];
    snprintf(desc, sizeof desc, "%s [%s]", del ? "delete-by-query" : "update-by-query",
             fds_index_name(ix));
    fds__scan_answer(r, o, j,
                     del ? "indices:data/write/delete/byquery"
                         : "indices:data/write/update/byquery", desc);
}
