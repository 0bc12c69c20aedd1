/*
 * by_query_scan.c: the scan under `_delete_by_query`, `_update_by_query`
 * and `_reindex` (Elasticsearch's BulkByScroll workers).
 *
 * A scan pins one view of the source index (a snapshot, as Elasticsearch's
 * scroll is), reads its matching documents in `_doc` order batch after
 * batch (search_after on `_doc`, nothing counted, so each batch starts
 * where the last ended and the scan stays linear), and writes each batch
 * as one ordinary bulk write: deletes, re-indexes of the same source (which
 * picks up a mapping change), or copies into the destination.  Deletes and
 * updates carry the seq_no the view saw (if_seq_no), so a document changed
 * since the snapshot is a version conflict: counted and skipped with
 * conflicts=proceed, else the scan stops there.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ast/search_request.h"
#include "by_query_scan.h"
#include "fds_clock.h"

/* The buffers of one batch. */
typedef struct scan_bufs {
    fds_write_op *ops;
    fds_write_result *res;
    const uint8_t **srcs;
    size_t *lens;
    fds_strbuf *filtered; /* the rewrite applied, per document */
} scan_bufs;

/* The progress shared by a scan's slices, kept by their threads under mu. */
typedef struct scan_shared {
    pthread_mutex_t mu;
    fds_scan_control *ctl;
    struct scan_slice *sl;
    fds_scan_counts *shown; /* each slice's counts as of its last batch
                             * (zero, its rate too, before its first) */
    uint32_t n;
} scan_shared;

/* One slice of a scan: the source shards s with s % nslices == id (with
 * one slice, every segment as one search, so _doc order spans shards). */
typedef struct scan_slice {
    const fds_scan_spec *j;
    scan_shared *sh;
    uint32_t id, nslices;
    uint64_t max_docs;  /* its part of the scan's (Elasticsearch divides it) */
    double rps;         /* its part of requests_per_second; 0: none */
    uint64_t t0;        /* microseconds */
    fds_scan_counts c;  /* its own thread's */
    fds_scan_failure *failures;
    size_t nfailures, capfailures;
    bool cancelled;
    int rc;
    fds_err e;
} scan_slice;

static bool cancelled(const fds_scan_control *ctl)
{
    return ctl && atomic_load(&ctl->cancelled);
}

/* Keep the failure of write w in the slice's list: 0 or FDS_ENOMEM. */
static int add_failure(scan_slice *s, const fds_write_result *w)
{
    if (s->nfailures == s->capfailures) {
        size_t cap = s->capfailures ? s->capfailures * 2 : 8;
        fds_scan_failure *f = realloc(s->failures, cap * sizeof *f);
        if (!f)
            return FDS_ENOMEM;
        s->failures = f;
        s->capfailures = cap;
    }
    fds_scan_failure *f = &s->failures[s->nfailures++];
    memcpy(f->id, w->id, sizeof f->id);
    f->err = w->err;
    return 0;
}

/* Reindex's write of document h: op type, routing and version of the
 * destination. */
static void reindex_op(const fds_scan_spec *j, fds_index_view *v, const fds_hit *h,
                       fds_write_op *op)
{
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
}

/* The spec's rewrite of document k's source, in place of it.  0 or
 * FDS_ENOMEM. */
static int rewrite_source(const fds_scan_spec *j, scan_bufs *b, size_t k, fds_err *e)
{
    b->filtered[k].len = 0;
    j->rewrite(j->rewrite_arg, &b->filtered[k], b->srcs[k], b->lens[k]);
    if (b->filtered[k].oom || !b->filtered[k].p)
        return fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    b->srcs[k] = (const uint8_t *)b->filtered[k].p;
    b->lens[k] = b->filtered[k].len;
    return 0;
}

/* The writes of batch `sr` (n hits of view v) into b->ops, as the scan's
 * mode asks.  0 or an error of the whole batch. */
static int batch_ops(const fds_scan_spec *j, fds_index_view *v,
                     const fds_search_result *sr, size_t n, scan_bufs *b, fds_err *e)
{
    unsigned nseg;
    const fds_search_segment *segs = fds_index_view_segments(v, &nseg);
    int rc = 0;
    if (n && j->mode != FDS_SCAN_DELETE &&
        !fds_mapping_source_enabled(fds_index_mapping(j->from))) {
        /* AbstractAsyncBulkByScrollAction: nothing to write back or copy */
        size_t il;
        const char *id = fds_sidx_doc_id(segs[sr->hits[0].seg].sidx,
                                         sr->hits[0].doc, &il);
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s][_doc][%.*s] didn't store _source",
                            fds_index_name(j->from), (int)il, id ? id : "");
    }
    if (n && j->mode != FDS_SCAN_DELETE)
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
        if (j->mode == FDS_SCAN_REINDEX) {
            reindex_op(j, v, h, op);
        } else {
            int64_t ver, seq;
            fds_index_view_doc_meta(v, h->seg, h->doc, &ver, &seq);
            op->type = j->mode == FDS_SCAN_DELETE ? FDS_OP_DELETE : FDS_OP_INDEX;
            op->check_seq_no = true;
            op->if_seq_no = seq;
            op->if_primary_term = 1;
        }
        if (op->type != FDS_OP_DELETE && j->rewrite &&
            (rc = rewrite_source(j, b, k, e)))
            break;
        if (op->type != FDS_OP_DELETE) {
            op->src = b->srcs[k];
            op->src_len = b->lens[k];
        }
    }
    return rc;
}

/* Batch `sr` (n hits of view v) written as the scan's mode asks, counted
 * into the slice's counters; failures kept.  0 or an error of the whole
 * batch; *stop when a failure ends the scan. */
static int scan_batch(scan_slice *s, fds_index_view *v, const fds_search_result *sr,
                      size_t n, scan_bufs *b, bool *stop)
{
    const fds_scan_spec *j = s->j;
    fds_scan_counts *c = &s->c;
    fds_err *e = &s->e;
    int rc = batch_ops(j, v, sr, n, b, e);
    fds_index *to = j->mode == FDS_SCAN_REINDEX ? j->to : j->from;
    if (!rc && n)
        rc = fds_index_write(to, b->ops, n, b->res, false, e);
    for (size_t k = 0; !rc && k < n; k++) {
        const fds_write_result *w = &b->res[k];
        c->total++;
        bool failed = false;
        if (!w->code) {
            if (j->mode == FDS_SCAN_DELETE)
                c->deleted++;
            else if (j->mode == FDS_SCAN_UPDATE || !w->created)
                c->updated++;
            else
                c->created++;
        } else if (w->err.kind == FDS_KIND_CONFLICT) {
            c->conflicts++;
            failed = !j->proceed;
        } else {
            failed = true;
        }
        if (failed) {
            if (add_failure(s, w))
                rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
            *stop = true;
        }
    }
    c->batches += n > 0;
    return rc;
}

/* requests_per_second: wait until `done` documents have taken at least
 * done / rps seconds since t0 (microseconds), as Elasticsearch's
 * WorkerBulkByScrollTaskState delays the next batch, in steps of at most
 * FDS_SCAN_THROTTLE_STEP_MS so that a cancel is seen; the wait is added to
 * *throttled_ms. */
static void scan_throttle(const fds_scan_control *ctl, uint64_t t0, double rps,
                          uint64_t done, uint64_t *throttled_ms)
{
    uint64_t due = t0 + (uint64_t)((double)done / rps * 1e6);
    for (;;) {
        uint64_t now = fds_mono_us();
        if (now >= due || cancelled(ctl))
            return;
        uint64_t step = due - now;
        if (step > FDS_SCAN_THROTTLE_STEP_MS * 1000)
            step = FDS_SCAN_THROTTLE_STEP_MS * 1000;
        struct timespec ts = {(time_t)(step / 1000000), (long)(step % 1000000) * 1000};
        nanosleep(&ts, NULL);
        *throttled_ms += step / 1000;
    }
}

/* The slice's counts shown to the progress report. */
static void slice_report(scan_slice *s)
{
    scan_shared *sh = s->sh;
    pthread_mutex_lock(&sh->mu);
    sh->shown[s->id] = s->c;
    if (sh->ctl && sh->ctl->progress)
        sh->ctl->progress(sh->ctl->progress_arg, sh->shown, sh->n);
    pthread_mutex_unlock(&sh->mu);
}

/* The next batch of req starts after hit `last`: req's after values are
 * its sort values.  0 or FDS_ENOMEM. */
static int search_after(fds_search_request *req, const fds_hit *last, fds_err *e)
{
    int rc = 0;
    for (unsigned k = 0; k < req->nsort; k++) {
        free(req->after[k].str);
        req->after[k] = (fds_after_val){.lnum = last->sort_long[k],
                                        .num = last->sort_num[k]};
        if (last->sort_str[k] &&
            !(req->after[k].str = strndup(last->sort_str[k], last->sort_str_len[k])))
            rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        req->after[k].str_len = last->sort_str_len[k];
        req->after[k].is_null =
            !last->sort_str[k] && last->sort_num[k] != last->sort_num[k];
    }
    req->nafter = req->nsort;
    return rc;
}

/* Scan segments segs[off, off+n) of view v (one shard's run, or all) in
 * batches as the slice's scan asks.  Caller frees req's after values. */
static int scan_range(scan_slice *s, fds_search_request *req, fds_index_view *v,
                      const fds_search_segment *segs, unsigned off, unsigned n,
                      scan_bufs *b, bool *stop)
{
    const fds_scan_spec *j = s->j;
    fds_scan_counts *c = &s->c;
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
        if ((s->cancelled = cancelled(s->sh->ctl)))
            break;
        fds_search_result sr;
        if ((rc = fds_search_execute(req, segs + off, n, &sr, e)))
            break;
        size_t nh = sr.nhits;
        if (nh > s->max_docs - done)
            nh = (size_t)(s->max_docs - done);
        for (size_t k = 0; k < sr.nhits; k++)
            sr.hits[k].seg += off; /* the view's numbering */
        rc = scan_batch(s, v, &sr, nh, b, stop);
        if (!rc && nh)
            rc = search_after(req, &sr.hits[nh - 1], e);
        if (!rc && s->rps > 0)
            scan_throttle(s->sh->ctl, s->t0, s->rps, c->total, &c->throttled_ms);
        size_t got = sr.nhits;
        fds_search_result_free(&sr);
        slice_report(s);
        if (got < j->batch && nh == got) /* (a clipped batch goes on) */
            break;
    }
    return rc;
}

/* The slice's search: the scan's query and URL parameters, in _doc order
 * (the query's sort's, then _doc's), a batch at a time, nothing counted.
 * 0 and *out (caller frees), or an error. */
static int slice_request(const fds_scan_spec *j, fds_search_request **out, fds_err *e)
{
    fds_search_request *req = NULL;
    fds_search_limits lim;
    fds_search_limits_default(&lim);
    lim.max_result_window = UINT32_MAX;
    lim.lookup = j->lookup;
    lim.lookup_arg = j->lookup_arg;
    lim.index_name = fds_index_name(j->from);
    int rc = fds_search_parse_limits(j->query ? j->query : "",
                                     j->query ? strlen(j->query) : 0,
                                     fds_index_mapping(j->from), &lim, 0, &req, e);
    /* df and default_operator first: they apply to a later q */
    const char *const keys[] = {"df", "default_operator", "q"};
    const char *const vals[] = {j->df, j->default_operator, j->q};
    for (size_t k = 0; !rc && k < 3; k++)
        if (vals[k])
            rc = fds_search_apply_param(req, keys[k], vals[k], e);
    if (!rc) {
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
    *out = req;
    return rc;
}

/* Run one slice (a thread's start routine with more than one). */
static void *slice_run(void *arg)
{
    scan_slice *s = arg;
    const fds_scan_spec *j = s->j;
    fds_err *e = &s->e;
    fds_search_request *req = NULL;
    int rc = slice_request(j, &req, e);
    /* each slice its own view: a fetch uses the view's buffer */
    fds_index_view *v = NULL;
    if (!rc)
        rc = fds_index_view_acquire(j->from, &v, e);
    unsigned nseg = 0;
    const fds_search_segment *segs = rc ? NULL : fds_index_view_segments(v, &nseg);
    scan_bufs b = {calloc(j->batch, sizeof *b.ops), calloc(j->batch, sizeof *b.res),
                   calloc(j->batch, sizeof *b.srcs), calloc(j->batch, sizeof *b.lens),
                   calloc(j->batch, sizeof *b.filtered)};
    if (!rc && (!b.ops || !b.res || !b.srcs || !b.lens || !b.filtered))
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

/* Run slices sl[0..n): inline with one, else each on its own thread.
 * 0, or the first slice's error (then in e). */
static int run_slices(scan_slice *sl, uint32_t n, fds_err *e)
{
    if (n == 1) {
        slice_run(&sl[0]);
    } else {
        pthread_t *th = calloc(n, sizeof *th);
        bool *started = calloc(n, sizeof *started);
        if (!th || !started) {
            free(th);
            free(started);
            return fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        }
        for (uint32_t i = 0; i < n; i++)
            started[i] = pthread_create(&th[i], NULL, slice_run, &sl[i]) == 0;
        for (uint32_t i = 0; i < n; i++) {
            if (started[i])
                pthread_join(th[i], NULL);
            else
                sl[i].rc = fds_err_setk(&sl[i].e, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                        "cannot start slice [%u]", i);
        }
        free(th);
        free(started);
    }
    for (uint32_t i = 0; i < n; i++)
        if (sl[i].rc) { /* the first slice's error is the scan's */
            *e = sl[i].e;
            return sl[i].rc;
        }
    return 0;
}

/* The slices' counts, failures (in slice order) and cancel into *out.
 * 0 or FDS_ENOMEM. */
static int collect(scan_slice *sl, uint32_t n, fds_scan_result *out, fds_err *e)
{
    size_t nf = 0;
    for (uint32_t i = 0; i < n; i++)
        nf += sl[i].nfailures;
    out->slices = calloc(n, sizeof *out->slices);
    out->failures = nf ? calloc(nf, sizeof *out->failures) : NULL;
    if (!out->slices || (nf && !out->failures))
        return fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    out->nslices = n;
    for (uint32_t i = 0; i < n; i++) {
        out->slices[i] = sl[i].c;
        out->cancelled |= sl[i].cancelled;
        if (sl[i].nfailures)
            memcpy(out->failures + out->nfailures, sl[i].failures,
                   sl[i].nfailures * sizeof *out->failures);
        out->nfailures += sl[i].nfailures;
    }
    return 0;
}

int fds_scan_slices(fds_index *from, bool is_auto, unsigned long requested,
                    uint32_t *out, fds_err *e)
{
    uint32_t shards = fds_index_nshards(from);
    unsigned long n = !is_auto ? requested
                    : shards < FDS_SCAN_AUTO_SLICES_MAX ? shards
                                                        : FDS_SCAN_AUTO_SLICES_MAX;
    if (n > FDS_SCAN_SLICES_MAX)
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[slices] of [%lu] is more than fieldstore runs at once [%d]",
                            n, FDS_SCAN_SLICES_MAX);
    if (n > shards)
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[slices] of [%lu] is more than the [%u] shards of [%s]: a "
                            "slice is a set of shards in fieldstore (auto is one slice "
                            "a shard)", n, shards, fds_index_name(from));
    *out = (uint32_t)n;
    return 0;
}

int fds_scan_run(const fds_scan_spec *j, fds_scan_control *ctl, fds_scan_result *out,
                 fds_err *e)
{
    uint64_t t0 = fds_mono_us();
    *out = (fds_scan_result){0};
    uint32_t n = j->slices ? j->slices : 1;
    scan_shared sh = {.ctl = ctl, .n = n};
    pthread_mutex_init(&sh.mu, NULL);
    scan_slice *sl = calloc(n, sizeof *sl);
    sh.shown = calloc(n, sizeof *sh.shown);
    int rc = sl && sh.shown ? 0 : fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                               "out of memory");
    sh.sl = sl;
    for (uint32_t i = 0; !rc && i < n; i++) {
        /* Elasticsearch's division of max_docs and of the rate */
        uint64_t md = j->max_docs == UINT64_MAX ? UINT64_MAX
                      : j->max_docs / n + (i < j->max_docs % n);
        sl[i] = (scan_slice){.j = j, .sh = &sh, .id = i, .nslices = n, .max_docs = md,
                             .rps = j->rps / n, .t0 = t0};
        sl[i].c.rps = sl[i].rps;
        fds_err_clear(&sl[i].e);
    }
    if (!rc)
        rc = run_slices(sl, n, e);
    fds_index *to = j->mode == FDS_SCAN_REINDEX ? j->to : j->from;
    if (!rc && j->refresh)
        rc = fds_index_refresh(to, e);
    if (!rc)
        rc = collect(sl, n, out, e);
    if (!rc)
        out->took_ms = (fds_mono_us() - t0) / 1000;
    else
        fds_scan_result_free(out);
    for (uint32_t i = 0; sl && i < n; i++)
        free(sl[i].failures);
    free(sl);
    free(sh.shown);
    pthread_mutex_destroy(&sh.mu);
    return rc;
}

void fds_scan_result_free(fds_scan_result *r)
{
    if (!r)
        return;
    free(r->slices);
    free(r->failures);
    *r = (fds_scan_result){0};
}

void fds_scan_counts_sum(const fds_scan_counts *c, uint32_t n, fds_scan_counts *sum)
{
    *sum = (fds_scan_counts){0};
    for (uint32_t i = 0; i < n; i++) {
        sum->total += c[i].total;
        sum->created += c[i].created;
        sum->updated += c[i].updated;
        sum->deleted += c[i].deleted;
        sum->batches += c[i].batches;
        sum->conflicts += c[i].conflicts;
        sum->throttled_ms += c[i].throttled_ms;
        sum->rps += c[i].rps;
    }
}
