/*
 * shard_search.c: the shard coordinator of a search, as Elasticsearch's
 * query-then-fetch does it on one node: the shards a search asks (every
 * shard of each index, or those a routing names), each shard's run of its
 * index's view, the query phases in parallel (up to one thread per core),
 * the merge of the shards' hits in the request's order, and the fetch of
 * the page's `_source` from each hit's index.  The caller parses each
 * shard's request before and renders the answer after (shard_search.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ast/search_request.h"
#include "shard_search.h"

/* The answering shard that global segment `seg` belongs to. */
fds_shard_run *fds_shard_search_shard_of(const fds_shard_search *s, uint32_t seg)
{
    size_t lo = 0, hi = s->nok;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (s->sh[s->ok[mid]].seg0 <= seg)
            lo = mid;
        else
            hi = mid;
    }
    return &s->sh[s->ok[lo]];
}

const char *fds_shard_search_index_of(void *arg, uint32_t seg)
{
    return fds_index_name(fds_shard_search_shard_of(arg, seg)->ix);
}

const fds_search_request *fds_shard_search_req_of(void *arg, uint32_t seg)
{
    return fds_shard_search_shard_of(arg, seg)->req;
}

void fds_shard_search_meta(void *arg, const fds_hit *h, int64_t *version,
                    int64_t *seq_no)
{
    fds_shard_run *sh = fds_shard_search_shard_of(arg, h->seg);
    fds_index_view_doc_meta(sh->v, h->seg - sh->seg0 + sh->vseg0, h->doc,
                            version, seq_no);
}

const char *fds_shard_search_routing(void *arg, const fds_hit *h, size_t *len)
{
    fds_shard_run *sh = fds_shard_search_shard_of(arg, h->seg);
    return fds_index_view_doc_routing(sh->v, h->seg - sh->seg0 + sh->vseg0,
                                      h->doc, len);
}

/* `_source` of the page: each index's hits fetched from its view in one
 * call (hits of a block decode it once), with their segment numbers made
 * the view's again. */
int fds_shard_search_fetch(void *arg, const fds_hit *hits, size_t n,
                    const uint8_t **src, size_t *len, fds_err *err)
{
    fds_shard_search *s = arg;
    uint64_t t0 = s->clock->now_ns();
    if (s->nok == 1 && s->sh[s->ok[0]].vseg0 == 0) {
        int rc = fds_index_view_fetch(s->sh[s->ok[0]].v, hits, n, src, len, err);
        s->load_ns += s->clock->now_ns() - t0;
        s->load_docs += n;
        return rc;
    }
    fds_hit *local = malloc((n ? n : 1) * sizeof *local);
    size_t *at = malloc((n ? n : 1) * sizeof *at);
    const uint8_t **ls = malloc((n ? n : 1) * sizeof *ls);
    size_t *ll = malloc((n ? n : 1) * sizeof *ll);
    int rc = local && at && ls && ll ? 0 : FDS_ENOMEM;
    /* one fetch per view (an index's shards share one, and a fetch
     * invalidates what the last one on the view gave) */
    for (size_t k = 0; !rc && k < s->nok; k++) {
        fds_index_view *v = s->sh[s->ok[k]].v;
        bool done = false;
        for (size_t j = 0; j < k && !done; j++)
            done = s->sh[s->ok[j]].v == v;
        if (done)
            continue;
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const fds_shard_run *sh = fds_shard_search_shard_of(s, hits[i].seg);
            if (sh->v == v) {
                local[m] = hits[i];
                local[m].seg = local[m].seg - sh->seg0 + sh->vseg0;
                at[m++] = i;
            }
        }
        if (m && !(rc = fds_index_view_fetch(v, local, m, ls, ll, err)))
            for (size_t i = 0; i < m; i++) {
                src[at[i]] = ls[i];
                len[at[i]] = ll[i];
            }
    }
    if (rc == FDS_ENOMEM)
        fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    free(local);
    free(at);
    free(ls);
    free(ll);
    s->load_ns += s->clock->now_ns() - t0;
    s->load_docs += n;
    return rc;
}

/* The run of view segments of `shard`: [*first, *first + *n). */
static void shard_segments(const fds_index_view *v, uint32_t shard,
                           unsigned *first, unsigned *n)
{
    unsigned nseg, a = 0;
    fds_index_view_segments(v, &nseg);
    while (a < nseg && fds_index_view_segment_shard(v, a) < shard)
        a++;
    unsigned b = a;
    while (b < nseg && fds_index_view_segment_shard(v, b) == shard)
        b++;
    *first = a;
    *n = b - a;
}

void fds_shard_run_ready(fds_shard_run *sh, const fds_shard_run *owner,
                         bool several, fds_index_view **held)
{
    if (!sh->rc) {
        sh->from = sh->req->from;
        sh->size = sh->req->size;
    }
    if (!sh->rc && several) {
        sh->req->size += sh->req->from;
        sh->req->from = 0;
    }
    if (!sh->rc && held)
        sh->v = *held, sh->held = true;
    else if (!sh->rc && sh->owner)
        sh->rc = fds_index_view_acquire(sh->ix, &sh->v, &sh->err);
    else if (!sh->rc && !(sh->v = owner->v)) {
        sh->rc = owner->rc;
        sh->err = owner->err;
    }
    if (!sh->rc) {
        const fds_search_segment *all = fds_index_view_segments(sh->v, &sh->nseg);
        if (sh->shard != FDS_ALL_SHARDS)
            shard_segments(sh->v, sh->shard, &sh->vseg0, &sh->nseg);
        sh->segs = all + sh->vseg0;
    }
    if (sh->rc && !sh->err.index[0])
        snprintf(sh->err.index, sizeof sh->err.index, "%s",
                 fds_index_name(sh->ix));
}

/* The query phase of one prepared shard (any thread). */
static void query_shard(const fds_search_clock *c, fds_shard_run *sh)
{
    if (sh->rc)
        return;
    fds_search_stats *ss = fds_index_search_stats(sh->ix);
    uint64_t q0 = c->query_begin(ss);
    sh->rc = fds_search_execute(sh->req, sh->segs, sh->nseg, &sh->res, &sh->err);
    sh->query_ns = c->query_end(ss, q0, !sh->rc);
    /* a postings block that fails its check fails the index, not only
     * this search (its reason then names the file relative to the data
     * directory, as every answer does) */
    if (sh->rc && sh->err.kind == FDS_KIND_CORRUPT)
        fds_index_fail_corrupt(sh->ix, &sh->err);
    if (sh->rc && !sh->err.index[0])
        snprintf(sh->err.index, sizeof sh->err.index, "%s",
                 fds_index_name(sh->ix));
}

/* The shards of a query phase, taken one at a time by the threads. */
typedef struct query_pool {
    fds_shard_run *sh;
    size_t n;
    const fds_search_clock *clock;
    atomic_size_t next;
} query_pool;

static void *query_worker(void *arg)
{
    query_pool *p = arg;
    for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;)
        query_shard(p->clock, &p->sh[i]);
    return NULL;
}

/* The query phase of every shard of `s`: in parallel on up to one thread
 * per online core (the request's thread is one of them), each thread
 * taking the next shard not yet taken; a single shard runs here without a
 * thread.  A thread that cannot be started leaves its share to the
 * others. */
static void run_query_phase(fds_shard_search *s)
{
    if (s->n <= 1) {
        if (s->n)
            query_shard(s->clock, &s->sh[0]);
        return;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nthreads = cpus > 1 ? (size_t)cpus : 1;
    if (nthreads > s->n)
        nthreads = s->n;
    if (nthreads > FDS_SEARCH_THREADS_MAX)
        nthreads = FDS_SEARCH_THREADS_MAX;
    if (s->max_concurrent && nthreads > s->max_concurrent)
        nthreads = s->max_concurrent;
    query_pool p = {.sh = s->sh, .n = s->n, .clock = s->clock};
    atomic_init(&p.next, 0);
    pthread_t th[FDS_SEARCH_THREADS_MAX];
    size_t started = 0;
    for (size_t t = 1; t < nthreads; t++)
        if (pthread_create(&th[started], NULL, query_worker, &p) == 0)
            started++;
    query_worker(&p);
    for (size_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
}

void fds_shard_search_query(fds_shard_search *s)
{
    run_query_phase(s);
    for (size_t i = 0; i < s->n; i++)
        if (!s->sh[i].rc)
            s->ok[s->nok++] = (unsigned)i;
}

void fds_shard_search_no_partial(fds_shard_search *s)
{
    size_t w = 0;
    for (size_t k = 0; k < s->nok; k++) {
        fds_shard_run *sh = &s->sh[s->ok[k]];
        if (!sh->res.timed_out) {
            s->ok[w++] = s->ok[k];
            continue;
        }
        fds_search_result_free(&sh->res);
        sh->rc = fds_err_setk(&sh->err, FDS_ERANGE, FDS_KIND_QUERY_PHASE,
                              "Time exceeded");
        snprintf(sh->err.index, sizeof sh->err.index, "%s", fds_index_name(sh->ix));
    }
    s->nok = w;
}

void fds_shard_search_terminated(fds_shard_search *s)
{
    for (size_t k = 0; k < s->nok; k++) {
        const fds_shard_run *sh = &s->sh[s->ok[k]];
        if (sh->req && sh->req->terminate_after)
            s->terminate_after = sh->req->terminate_after;
        s->terminated_early |= sh->res.terminated_early;
    }
}

/* A hit and what explains it, for the merge. */
typedef struct merged_hit {
    fds_hit h;
    fds_explanation *x;
    fds_matched *mq; /* the shard's, or NULL */
} merged_hit;

static int merged_cmp(const void *a, const void *b, void *arg)
{
    return fds_hit_cmp(arg, &((const merged_hit *)a)->h,
                       &((const merged_hit *)b)->h);
}

/* The answering shards' hits merged into `out` (hits and explanations
 * malloc'd; explanation trees still owned by the shards), the page
 * [from, from + size) of the request `page`. */
int fds_shard_search_merge(fds_shard_search *s, const fds_search_request *page,
                      fds_search_result *out)
{
    memset(out, 0, sizeof *out);
    out->max_score = NAN;
    size_t total = 0;
    for (size_t k = 0; k < s->nok; k++) {
        const fds_search_result *res = &s->sh[s->ok[k]].res;
        total += res->nhits;
        out->total += res->total;
        out->total_is_lower_bound |= res->total_is_lower_bound;
        out->timed_out |= res->timed_out;
        if (!isnan(res->max_score) &&
            (isnan(out->max_score) || res->max_score > out->max_score))
            out->max_score = res->max_score;
    }
    /* a finite track_total_hits: counted up to it, as one shard would */
    if (!page->count_only && page->track_total >= 0 &&
        page->track_total != INT64_MAX &&
        out->total > (uint64_t)page->track_total) {
        out->total = (uint64_t)page->track_total;
        out->total_is_lower_bound = true;
    }
    merged_hit *all = malloc((total ? total : 1) * sizeof *all);
    if (!all)
        return FDS_ENOMEM;
    size_t m = 0;
    bool explain = false, named = false;
    for (size_t k = 0; k < s->nok; k++) {
        fds_shard_run *sh = &s->sh[s->ok[k]];
        for (size_t i = 0; i < sh->res.nhits; i++) {
            all[m].h = sh->res.hits[i];
            all[m].h.seg += sh->seg0;
            all[m].mq = sh->res.matched ? &sh->res.matched[i] : NULL;
            all[m++].x = sh->res.explain ? sh->res.explain[i] : NULL;
        }
        explain |= sh->res.explain != NULL;
        named |= sh->res.matched != NULL;
    }
    qsort_r(all, m, sizeof *all, merged_cmp, (void *)page);
    size_t from = page->from < m ? page->from : m;
    size_t n = m - from < page->size ? m - from : page->size;
    out->hits = malloc((n ? n : 1) * sizeof *out->hits);
    out->explain = explain ? calloc(n ? n : 1, sizeof *out->explain) : NULL;
    out->matched = named ? calloc(n ? n : 1, sizeof *out->matched) : NULL;
    if (!out->hits || (explain && !out->explain) || (named && !out->matched)) {
        free(all);
        free(out->hits);
        free(out->explain);
        free(out->matched);
        return FDS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        out->hits[i] = all[from + i].h;
        if (explain)
            out->explain[i] = all[from + i].x;
        if (named && all[from + i].mq) /* the names stay the shard's */
            out->matched[i] = *all[from + i].mq;
    }
    out->nhits = n;
    free(all);
    return 0;
}

void fds_shard_search_free(fds_shard_search *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->sh[i].held_req)
            s->sh[i].req = NULL;
        if (s->sh[i].held) {
            s->sh[i].v = NULL;
            s->sh[i].ix = NULL;
        }
        fds_search_result_free(&s->sh[i].res);
        fds_search_request_free(s->sh[i].req);
        if (s->sh[i].owner) {
            fds_index_view_release(s->sh[i].v);
            fds_index_release(s->sh[i].ix);
        }
        free(s->sh[i].alias_filter);
    }
    free(s->sh);
    free(s->ok);
}

/* The shard run of the index of s->sh[i] that owns its view. */
size_t fds_shard_search_owner_of(const fds_shard_search *s, size_t i)
{
    while (i > 0 && !s->sh[i].owner)
        i--;
    return i;
}

/* The shards to search: of each of the `n` indices, every shard, or with
 * `routing` (comma-separated values, OperationRouting#searchShards) the
 * shards those values route to, in shard order; with `whole` (a scroll or
 * point in time, whose held contexts keep a view and a cursor per index)
 * one run per index over all its shards (FDS_ALL_SHARDS), numbered as the
 * indices.  Fills s->sh and s->ok (calloc'd) and s->n; the first run of
 * each index is its owner.  Returns 0 or FDS_ENOMEM. */
int fds_shard_search_plan(const char *routing, bool whole, fds_index **ixs,
                       size_t n, fds_shard_search *s)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += whole ? 1 : fds_index_nshards(ixs[i]);
    s->sh = calloc(total ? total : 1, sizeof *s->sh);
    s->ok = calloc(total ? total : 1, sizeof *s->ok);
    if (!s->sh || !s->ok) {
        free(s->sh);
        free(s->ok);
        s->sh = NULL;
        s->ok = NULL;
        return FDS_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (whole) {
            s->sh[k++] = (fds_shard_run){.ix = ixs[i], .shard = FDS_ALL_SHARDS, .owner = true};
            continue;
        }
        uint32_t nsh = fds_index_nshards(ixs[i]);
        bool want[FDS_SHARDS_MAX] = {0};
        for (const char *p = routing; p && nsh > 1;) {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            want[fds_index_shard_of(ixs[i], p, len)] = true;
            p = c ? c + 1 : NULL;
        }
        size_t first = k;
        for (uint32_t sh = 0; sh < nsh; sh++) {
            if (routing && nsh > 1 && !want[sh])
                continue;
            s->sh[k].ix = ixs[i];
            s->sh[k].shard = sh;
            s->sh[k].owner = k == first;
            k++;
        }
    }
    s->n = k;
    return 0;
}
