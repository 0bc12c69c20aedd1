/*
 * run.c: one search's passes over its segments -- each by MaxScore when
 * the query is a disjunction of terms ranked by score (maxscore.c), else
 * document at a time into the top-k heap (search_collect.c), every live
 * match also to the one collector it is given (the aggregations);
 * counting up to track_total_hits; the page sorted and finished.  The
 * driver that compiles, builds the collector and fetches explanations
 * and named queries is src/query/search.c (run.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "exec/collector.h"
#include "exec/run.h"
#include "exec/search_int.h"
#include "index/postings.h"
#include "index/term_pat.h"

static int hit_qsort_cmp(const void *a, const void *b, void *req)
{
    return fds__hit_cmp(req, a, b);
}

/* A segment's MaxScore pass runs as two slices of its docs on two threads
 * when the postings of its terms add up to at least this many and no
 * other search is running in the process (under load the cores are busy
 * with other requests: a second thread would only add its overhead).  As
 * Lucene's IndexSearcher slices with a MaxScoreAccumulator shared between
 * them: each slice keeps its own page and prunes by the better of its own
 * and the other's k-th score.  A slice pays a thread's wake-up and its
 * own iterators, norm bounds and token budgets, so slicing pays only for
 * passes of milliseconds; since MaxScore skips most postings, that takes
 * millions of them.  At 400,000 (the bound before the pruning of
 * docs/query.md), every url-n body of the 1M scale index that sliced took
 * longer (the slowest 1.10 -> 1.35 ms; the class 12.4 -> 18.0 ms of query
 * phase over its 109 bodies); at 4,000,000 none slices at 1M, and at 10M
 * the class takes 51-55 ms against 45-48 sliced at 400,000 and 62 never
 * sliced (bench/scale, docs/benchmarks.md). */
#define SLICE_MIN_POSTINGS 4000000u

static uint64_t slice_min_postings = SLICE_MIN_POSTINGS;
static atomic_uint searches_running;

void fds_search_set_slice_min(uint64_t postings)
{
    slice_min_postings = postings;
}

/* Slice 1 of a segment's MaxScore pass, on its own thread. */
typedef struct slice_run {
    fds__exec x;
    unsigned si;
    fds__term_it **ts;
    size_t nt;
    fds__heap hp;
    uint32_t from, to;
    fds__slice_th *sh;
    int rc;
} slice_run;

static void slice_run_upper(slice_run *s)
{
    s->rc = fds__run_maxscore(&s->x, s->si, s->ts, s->nt, &s->hp, s->from,
                              s->to, s->sh, 1);
}

/* The one thread that runs upper slices, started on first use and kept
 * (a thread per query would cost its start each time, and its CPU time
 * would leave the process's per-thread accounts with it).  One slice at
 * a time: slices only run when no other search does. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    slice_run *job;  /* handed to the thread, NULL once it is done */
    bool started, busy, failed;
} slicer = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
            PTHREAD_COND_INITIALIZER, NULL, false, false, false};

static void *slicer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&slicer.mu);
    for (;;) {
        while (!slicer.job)
            pthread_cond_wait(&slicer.go, &slicer.mu);
        slice_run *s = slicer.job;
        pthread_mutex_unlock(&slicer.mu);
        slice_run_upper(s);
        pthread_mutex_lock(&slicer.mu);
        slicer.job = NULL;
        pthread_cond_broadcast(&slicer.done);
    }
    return NULL;
}

/* Hand s to the slicer thread; false when it is busy or cannot start. */
static bool slicer_submit(slice_run *s)
{
    pthread_mutex_lock(&slicer.mu);
    if (!slicer.started && !slicer.failed) {
        pthread_t t;
        pthread_attr_t at;
        bool ok = pthread_attr_init(&at) == 0;
        ok = ok && pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0;
        ok = ok && pthread_create(&t, &at, slicer_main, NULL) == 0;
        pthread_attr_destroy(&at);
        slicer.started = ok;
        slicer.failed = !ok;
    }
    bool ok = slicer.started && !slicer.busy;
    if (ok) {
        slicer.busy = true;
        slicer.job = s;
        pthread_cond_signal(&slicer.go);
    }
    pthread_mutex_unlock(&slicer.mu);
    return ok;
}

/* Wait for the job slicer_submit handed over. */
static void slicer_wait(void)
{
    pthread_mutex_lock(&slicer.mu);
    while (slicer.job)
        pthread_cond_wait(&slicer.done, &slicer.mu);
    slicer.busy = false;
    pthread_mutex_unlock(&slicer.mu);
}

/* Slices are no smaller than this many docs. */
#define SLICE_MIN_DOCS 8192u

static bool slice_worth(fds__term_it **ts, size_t nt, uint32_t from)
{
    static long cpus = -1;
    if (cpus < 0)
        cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if ((cpus < 2 && slice_min_postings) || nt < 2 ||
        atomic_load(&searches_running) > 1)
        return false;
    uint64_t p = 0;
    for (size_t k = 0; k < nt; k++)
        p += ts[k]->t.df;
    uint32_t max_doc = ts[0]->max_doc;
    /* the postings left after the counting pass, by the docs left */
    p = max_doc ? p / max_doc * (max_doc - from) +
                      p % max_doc * (max_doc - from) / max_doc
                : 0;
    uint32_t min_docs = slice_min_postings ? SLICE_MIN_DOCS : 1;
    return p >= slice_min_postings && max_doc - from >= 2 * min_docs;
}

/* The MaxScore pass of segment si from `from` in two slices, the upper
 * half on the slicer thread over iterators of its own, the two pages
 * merged into r's.  Runs both halves here when the slicer is busy or
 * cannot start.  0 or FDS_ENOMEM. */
static int segment_sliced(fds__run *r, unsigned si, fds__term_it **ts, size_t nt,
                          uint32_t from)
{
    uint32_t max_doc = ts[0]->max_doc, mid = from + (max_doc - from) / 2;
    slice_run s = {.x = r->x, .si = si, .from = mid, .to = max_doc,
                   .hp = {.cap = r->hp.cap, .req = r->hp.req,
                          .floored = r->hp.floored,
                          .floor = r->hp.floor}};
    s.x.no_stats = 1;
    s.x.scored = 0;
    fds__it *iter = fds__build(&s.x, r->root, r->x.segs[si].sidx);
    int rc = FDS_ENOMEM;
    if (!iter || !(s.hp.h = malloc(s.hp.cap * sizeof *s.hp.h)) ||
        !fds__disjunction_terms(iter, &s.ts, &s.nt))
        goto out;
    if (s.nt != nt) { /* cannot happen: the same tree over the same segment */
        rc = fds__run_maxscore(&r->x, si, ts, nt, &r->hp, from, max_doc,
                               NULL, 0);
        goto out;
    }
    fds__order_terms(s.ts, nt);
    for (size_t k = 0; k < nt; k++) {
        fds__cnode_fill((fds__cnode *)ts[k]->b.c);
        s.ts[k]->b.advance(&s.ts[k]->b, mid);
    }
    fds__slice_th sh;
    float th = fds__theta(&r->hp), none = -INFINITY;
    uint32_t b0, b1;
    memcpy(&b0, &th, sizeof b0);
    memcpy(&b1, &none, sizeof b1);
    atomic_init(&sh.th[0], b0);
    atomic_init(&sh.th[1], b1);
    s.sh = &sh;
    bool threaded = slicer_submit(&s);
    rc = fds__run_maxscore(&r->x, si, ts, nt, &r->hp, from, mid, &sh, 0);
    if (threaded)
        slicer_wait();
    else
        slice_run_upper(&s);
    if (!rc)
        rc = s.rc;
    for (size_t i = 0; !rc && i < s.hp.n; i++)
        fds__heap_offer(&r->hp, &s.hp.h[i]);
    r->x.scored += s.x.scored;
    r->x.corrupt |= s.x.corrupt;
    r->x.timed_out |= s.x.timed_out;
out:
    free(s.ts);
    free(s.hp.h);
    fds__it_free(iter);
    return rc;
}

/* Segment si over the terms `ts` of a disjunction (counting, then
 * MaxScore, in two slices when worth it).  0 or FDS_ENOMEM. */
static int segment_terms(fds__run *r, unsigned si, fds__term_it **ts, size_t nt)
{
    /* exact counts without iterating: one term, no deletions */
    bool fast = nt == 1 && !r->x.segs[si].live;
    bool cnt = r->counting && r->count <= r->limit;
    if (fast && cnt) {
        r->count += ts[0]->t.df;
        cnt = false;
    } else if (nt == 0) {
        cnt = false;
    }
    if (!nt)
        return 0;
    uint32_t from = fds__count_disjunction(&r->x, si, ts, nt, &r->hp,
                                           &r->count, r->limit, cnt);
    if (from == FDS__NO_MORE)
        return 0;
    if (slice_worth(ts, nt, from))
        return segment_sliced(r, si, ts, nt, from);
    return fds__run_maxscore(&r->x, si, ts, nt, &r->hp, from, FDS__NO_MORE, NULL,
                             0);
}

/* A match_all over segment si with no page and no scores (size 0 with
 * aggregations, counting): its live docs in order without the iterator,
 * stopping where segment_daat would.  0. */
static int segment_all(fds__run *r, unsigned si)
{
    const fds_search_segment *sg = &r->x.segs[si];
    uint32_t max = fds_sidx_max_doc(sg->sidx);
    /* no deletions: every doc, a run at a time */
    for (uint32_t d = 0; !sg->live && d < max; d += FDS__DEADLINE_EVERY) {
        uint32_t e = max - d < FDS__DEADLINE_EVERY ? max : d + FDS__DEADLINE_EVERY;
        if (r->ag) {
            fds__collector_add_range(r->ag, d, e);
            r->count += e - d;
        } else if (r->counting && r->count + (e - d) > r->limit) {
            r->count = r->limit + 1; /* past the limit: counting stops */
            return 0;
        } else {
            r->count += e - d;
        }
        if (e < max && fds__past_deadline(&r->x))
            return 0;
    }
    for (uint32_t d = 0; sg->live && d < max; d++) {
        if ((d + 1) % FDS__DEADLINE_EVERY == 0 && fds__past_deadline(&r->x))
            break;
        if (!fds__is_live(sg, d))
            continue;
        r->count++;
        if (r->ag)
            fds__collector_add(r->ag, d, NAN);
        else if (r->counting && r->count > r->limit)
            break;
    }
    return 0;
}

/* A disjunction's postings a segment's bitset is worth for: one per
 * this many of its docs.  The bitset costs a word cleared and scanned
 * per 64 docs (~1 ns each), a doc-at-a-time disjunction tens of ns per
 * posting (a call per clause per doc), a posting set in the bitset ~1 ns:
 * from about one posting per 800 docs the bitset costs less. */
#define FDS__BITS_DOCS_PER_POSTING 512u

/* Segment si of a disjunction of terms `ts` whose matches only feed the
 * aggregations (no page, no scores, no min_score): the terms' postings
 * set in a bitset of the segment's docs, then its live docs to the
 * collector in order (Lucene's BooleanScorer scores a disjunction into
 * bitsets of windows the same way).  *done false when the postings are
 * too few for it (segment_daat then).  0 or FDS_ENOMEM. */
static int segment_bits(fds__run *r, unsigned si, fds__term_it **ts, size_t nt,
                        bool *done)
{
    const fds_search_segment *sg = &r->x.segs[si];
    uint32_t max = fds_sidx_max_doc(sg->sidx);
    uint64_t df = 0;
    for (size_t k = 0; k < nt; k++)
        df += ts[k]->t.df;
    *done = nt > 1 && df >= max / FDS__BITS_DOCS_PER_POSTING;
    if (!*done)
        return 0;
    size_t nw = ((size_t)max + 63) / 64;
    uint64_t *bits = calloc(nw + 1, 8);
    if (!bits)
        return FDS_ENOMEM;
    for (size_t k = 0; k < nt; k++)
        if (fds__sterm_or_bits(&ts[k]->t, bits, max, &r->x)) {
            free(bits);
            return 0; /* x->corrupt: the caller's error */
        }
    for (size_t w = 0; w < nw; w++) {
        if ((w + 1) % (FDS__DEADLINE_EVERY / 64) == 0 && fds__past_deadline(&r->x))
            break;
        if (!sg->live) { /* no deletions: a word's docs at once */
            r->count += (uint64_t)__builtin_popcountll(bits[w]);
            if (bits[w])
                fds__collector_add_word(r->ag, (uint32_t)(w * 64), bits[w]);
            continue;
        }
        for (uint64_t cur = bits[w]; cur; cur &= cur - 1) {
            uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cur));
            if (!fds__is_live(sg, d))
                continue;
            r->count++;
            fds__collector_add(r->ag, d, NAN);
        }
    }
    free(bits);
    return 0;
}

/* Can segment_all run segment si in place of the iterator? */
static bool all_docs(const fds__run *r)
{
    const fds_search_request *req = r->x.req;
    return !r->k && isnan(req->min_score) &&
           (!req->query || req->query->type == FDS_Q_MATCH_ALL) &&
           !(r->ag && r->ag->needs_scores);
}

/* Matches a sorted page that counts every one holds back at most before
 * offering them to the heap (segment_daat): 256 KiB of doc ids. */
#define DEFER_MAX (1u << 16)

/* Doc d of segment si to the page of a run sorted on one field key
 * (sf[0]), no search_after, no scores: turned away on its key when the
 * page is full and it cannot enter, else offered. */
static void offer_sorted(fds__run *r, unsigned si, const fds_sfield *const *sf,
                         uint32_t d)
{
    const fds_search_request *req = r->x.req;
    fds__heap *hp = &r->hp;
    fds_hit h = {.seg = si, .doc = d, .score = NAN};
    if (hp->n == hp->cap) {
        fds__sort_value(req, 0, sf[0], r->docbase, &h);
        if (fds__key_cmp(req, 0, &h, &hp->h[0]) > 0)
            return;
        h.nsort = 1;
    } else if (!fds__sort_values(&r->x, sf, r->docbase, &h)) {
        return;
    }
    fds__heap_offer(hp, &h);
}

/* The held-back matches docs[0, n) to the page: in reverse doc order when
 * the page sorts descending.  On docs in the sort's order (a log arrives
 * oldest first; Discover sorts by @timestamp desc) the best then come
 * first, and once the page is full the rest are turned away by one
 * comparison of their key with the page's worst, where offered in doc
 * order each would replace it and sift down the heap.  The heap's order
 * is total (sort key, segment, doc), so the page is the same whatever
 * the order of the offers. */
static void offer_held(fds__run *r, unsigned si, const fds_sfield *const *sf,
                       const uint32_t *docs, size_t n)
{
    bool desc = r->x.req->sort[0].desc;
    for (size_t i = 0; i < n; i++)
        offer_sorted(r, si, sf, docs[desc ? n - 1 - i : i]);
}

/* Segment si document at a time with iterator `iter`.  0 or FDS_ENOMEM. */
static int segment_daat(fds__run *r, unsigned si, fds__it *iter)
{
    const fds_search_request *req = r->x.req;
    const fds_sidx *sx = r->x.segs[si].sidx;
    fds__heap *hp = &r->hp;
    const fds_sfield *sf[FDS_SORT_VALUES_MAX] = {NULL};
    for (unsigned q = 0; q < req->nsort; q++)
        if (req->sort[q].kind == FDS_SORT_FIELD)
            sf[q] = fds__sidx_field(sx, req->sort[q].field,
                                    req->sort[q].field_len);
    /* the best score any doc can reach: once the page is full, hits are
     * counted far enough and nothing can beat the k-th score, the rest of
     * the segment cannot change the result */
    /* terminate_after collects the first matches in doc order, every one
     * of them: no shortcut below may pass over a match */
    uint64_t ta = req->terminate_after;
    float maxs = r->by_score && !req->nafter && !r->ag && !ta ? fds__it_max(iter)
                                                             : INFINITY;
    /* a phrase ranked by score: once the page is full and counted, it
     * passes over the docs that cannot beat the k-th score, positions
     * unread (fds__phrase_set_min_score) */
    bool prune_phrase = r->by_score && !req->nafter && !r->ag && !ta &&
                        isnan(req->min_score) && iter->advance == fds__phrase_adv;
    bool quick = !r->by_score && req->sort[0].kind == FDS_SORT_FIELD;
    /* numeric first sort key: once counting is over, visit the rest of the
     * segment block by block, best block first */
    bool min_score = !isnan(req->min_score);
    bool ag_score = r->ag && r->ag->needs_scores;
    bool blocks = quick && sf[0] && sf[0]->blk_max && !min_score && !r->ag && !ta;
    uint32_t resume = FDS__NO_MORE;
    const fds_search_segment *sg = &r->x.segs[si];
    uint32_t visited = 0;
    /* a page on one field key that counts every match (Discover's
     * track_total_hits: true) never stops a segment early: its matches
     * are held back, up to DEFER_MAX at a time, and offered best-first
     * (offer_held); without room to hold them, offered one by one */
    bool defer = quick && req->nsort == 1 && !req->nafter && !r->need_score &&
                 r->counting && r->limit == UINT64_MAX && !ta && r->k;
    uint32_t *held = NULL;
    size_t nheld = 0, held_cap = 0;
    /* sorted by _doc ascending and not counting: docs arrive in page order,
     * so the walk starts after search_after's doc and a full page is final
     * (a scan in batches -- _reindex -- stays linear) */
    bool by_doc = req->nsort >= 1 && req->sort[0].kind == FDS_SORT_DOC &&
                  !req->sort[0].desc && !r->counting && r->k && !r->ag && !ta;
    uint32_t start = 0;
    if (by_doc && req->nafter && !req->after[0].is_null) {
        /* a later key (_shard_doc of another shard) may put the doc with
         * search_after's _doc value after it: start at it then */
        int64_t local = req->after[0].lnum + (req->nsort == 1) -
                        (int64_t)r->docbase;
        if (local >= (int64_t)fds_sidx_max_doc(sx))
            return 0;
        start = local > 0 ? (uint32_t)local : 0;
    }
    if (prune_phrase && hp->cap && hp->n == hp->cap &&
        (!r->counting || r->count > r->limit))
        fds__phrase_set_min_score(iter, hp->h[0].score);
    for (uint32_t d = iter->advance(iter, start); d != FDS__NO_MORE;
         d = iter->advance(iter, d + 1)) {
        if (++visited % FDS__DEADLINE_EVERY == 0 && fds__past_deadline(&r->x))
            break;
        if (!fds__is_live(sg, d))
            continue;
        float sc = NAN;
        if (min_score && (sc = iter->score(iter)) < req->min_score)
            continue; /* neither a hit nor counted */
        if (ta && r->collected++ == ta) { /* a match past the limit */
            r->terminated = true;
            break;
        }
        r->count++;
        if (r->ag) {
            if (ag_score && isnan(sc))
                sc = iter->score(iter);
            fds__collector_add(r->ag, d, sc);
        }
        if (!r->k) {
            if (r->counting && r->count > r->limit && !r->ag && !ta)
                break;
            continue;
        }
        if (defer && nheld == held_cap) {
            size_t nc = held_cap ? 2 * held_cap : 4096;
            uint32_t *t = held_cap < DEFER_MAX ? realloc(held, nc * sizeof *t) : NULL;
            if (t) {
                held = t;
                held_cap = nc;
            } else { /* full: offer what is held, hold again */
                offer_held(r, si, sf, held, nheld);
                nheld = 0;
            }
        }
        if (defer && nheld < held_cap) {
            held[nheld++] = d;
            continue;
        }
        fds_hit h = {.seg = si, .doc = d, .score = NAN};
        if (quick && hp->n == hp->cap) {
            /* reject on the first key before anything else */
            fds__sort_value(req, 0, sf[0], r->docbase, &h);
            if (fds__key_cmp(req, 0, &h, &hp->h[0]) > 0)
                continue;
        }
        if (r->need_score)
            h.score = !isnan(sc) ? sc : iter->score(iter);
        if (quick && req->nsort == 1 && !req->nafter && !r->need_score &&
            hp->n == hp->cap) {
            h.nsort = 1; /* key 0 filled by the quick check */
        } else if (!r->by_score || req->nafter) {
            if (!fds__sort_values(&r->x, sf, r->docbase, &h))
                continue;
        }
        fds__heap_offer(hp, &h);
        if (by_doc && hp->n == hp->cap)
            break;
        if (hp->n == hp->cap && (!r->counting || r->count > r->limit)) {
            if (maxs <= hp->h[0].score)
                break;
            if (prune_phrase)
                fds__phrase_set_min_score(iter, hp->h[0].score);
            if (blocks) {
                resume = d + 1;
                break;
            }
        }
    }
    offer_held(r, si, sf, held, nheld);
    free(held);
    if (resume != FDS__NO_MORE)
        return fds__sorted_blocks(&r->x, r->root, si, sf, r->docbase, resume,
                                  hp);
    return 0;
}

int fds__run_segments(fds__run *r, fds__collector *ag, fds_err *err)
{
    r->ag = ag;
    const fds_search_request *req = r->x.req;
    for (unsigned si = 0; si < r->x.nseg && !fds__past_deadline(&r->x); si++) {
        r->x.cur_seg = si;
        const fds_sidx *sx = r->x.segs[si].sidx;
        /* Elasticsearch's QueryPhaseCollector stops at the next segment
         * once terminate_after docs are collected */
        if (req->terminate_after && r->collected >= req->terminate_after) {
            r->terminated = true;
            break;
        }
        fds__it *iter = fds__build(&r->x, r->root, sx);
        if (!iter)
            return FDS_ENOMEM;
        fds__term_it **ts = NULL;
        size_t nt = 0;
        int rc = 0;
        fds__leaf leaf = {.ord = si, .seg = &r->x.segs[si],
                          .docbase = r->docbase};
        if (r->ag && (rc = fds__collector_set_segment(r->ag, &leaf))) {
            fds__it_free(iter);
            return rc;
        }
        if (all_docs(r) && !req->terminate_after) {
            rc = segment_all(r, si);
        } else if (r->ag && !r->k && !r->ag->needs_scores && isnan(req->min_score) &&
                   fds__disjunction_terms(iter, &ts, &nt)) {
            bool done = false;
            rc = segment_bits(r, si, ts, nt, &done);
            free(ts);
            if (!rc && !done)
                rc = segment_daat(r, si, iter);
        } else if (r->by_score && !req->nafter && isnan(req->min_score) && !r->ag &&
                   !req->terminate_after && fds__disjunction_terms(iter, &ts, &nt)) {
            rc = segment_terms(r, si, ts, nt);
            free(ts);
        } else {
            rc = segment_daat(r, si, iter);
        }
        fds__it_free(iter);
        if (rc)
            return rc;
        r->docbase += fds_sidx_max_doc(sx);
        if (r->x.corrupt)
            return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                                "segment index %s has a bad postings block",
                                sx->path);
    }
    return 0;
}

void fds__run_sort_page(fds__run *r)
{
    fds__heap *hp = &r->hp;
    bool nan = false;
    for (size_t i = 0; i < hp->n; i++)
        nan |= isnan(hp->h[i].score);
    if (!r->x.req->nsort && !nan)
        fds__heap_sort_score(hp);
    else if (hp->n)
        qsort_r(hp->h, hp->n, sizeof *hp->h, hit_qsort_cmp,
                (void *)r->x.req);
}

void fds__run_finish(fds__run *r, fds_search_result *out)
{
    const fds_search_request *req = r->x.req;
    fds__heap *hp = &r->hp;
    if (r->by_score && hp->n)
        out->max_score = hp->h[0].score;
    else if (r->show_score) {
        for (size_t i = 0; i < hp->n; i++)
            if (!isnan(hp->h[i].score) &&
                (isnan(out->max_score) || hp->h[i].score > out->max_score))
                out->max_score = hp->h[i].score;
    }
    if (!r->show_score)
        for (size_t i = 0; i < hp->n; i++)
            hp->h[i].score = NAN;
    /* sort values for by-score hits (explicit sort on _score only) */
    if (r->by_score)
        for (size_t i = 0; i < hp->n; i++)
            hp->h[i].nsort = 0;
    size_t from = req->from < hp->n ? req->from : hp->n;
    out->nhits = hp->n - from;
    if (out->nhits) {
        memmove(hp->h, hp->h + from, out->nhits * sizeof *hp->h);
        out->hits = hp->h;
    } else {
        free(hp->h);
    }
    hp->h = NULL;
    if (r->counting) {
        if (r->count > r->limit) {
            out->total = r->limit;
            out->total_is_lower_bound = true;
        } else {
            out->total = r->count;
        }
    }
    out->timed_out = r->x.timed_out;
    out->terminated_early = r->terminated;
    if (r->x.timed_out) /* counted only as far as it got */
        out->total_is_lower_bound = true;
    out->postings_scored = r->x.scored;
    out->postings_total = r->x.total_postings;
}


int fds__run_open(fds__run *r, const fds_search_request *req,
                  const fds_search_segment *segs, unsigned nseg, fds_err *err)
{
    *r = (fds__run){.x = {.req = req, .segs = segs, .nseg = nseg}};
    if (req->timeout_ns > 0)
        r->x.deadline_ns = fds_mono_ns() + (uint64_t)req->timeout_ns;
    /* no query: match_all (static: the compiled query keeps pointing at
     * it after this returns) */
    static const fds_query all = {.type = FDS_Q_MATCH_ALL, .boost = 1.0f,
                                  .msm = -1};
    fds__cnode *root = fds__compile(&r->x, req->query ? req->query : &all);
    if (!root) {
        fds__exec_release(&r->x);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                            "out of memory");
    }
    r->root = root;
    if (r->x.nopos) {
        const fds_query *q = r->x.nopos;
        fds__cnode_free(root);
        fds__exec_release(&r->x);
        /* Lucene's PhraseWeight refuses such a field */
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                            "field:[%.*s] was indexed without position data; "
                            "cannot run PhraseQuery", (int)q->field_len,
                            q->field);
    }
    r->k = req->count_only ? 0 : (size_t)req->from + req->size;
    r->hp = (fds__heap){.cap = r->k, .req = req};
    if (r->k && !(r->hp.h = malloc(r->k * sizeof *r->hp.h))) {
        fds__cnode_free(root);
        fds__exec_release(&r->x);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                            "out of memory");
    }
    r->by_score = req->nsort == 0;
    r->show_score = r->by_score || req->track_scores;
    for (unsigned k = 0; k < req->nsort; k++)
        if (req->sort[k].kind == FDS_SORT_SCORE)
            r->show_score = true;
    r->need_score = r->show_score || !isnan(req->min_score);
    int64_t tt = req->count_only ? INT64_MAX : req->track_total;
    r->counting = tt != FDS_TRACK_TOTAL_NONE;
    r->limit = tt == INT64_MAX ? UINT64_MAX : (uint64_t)(tt < 0 ? 0 : tt);
    return 0;
}

void fds__run_close(fds__run *r)
{
    fds__cnode_free(r->root);
    r->root = NULL;
    fds__exec_release(&r->x);
}

void fds__run_enter(void)
{
    atomic_fetch_add(&searches_running, 1);
}

void fds__run_leave(void)
{
    atomic_fetch_sub(&searches_running, 1);
}
