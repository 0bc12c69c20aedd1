/*
 * search_contexts.c: the table of scroll and point-in-time contexts --
 * searches that read one immutable set of segments across many requests.
 *
 * A context holds, per index of its expression, an index reference and a
 * segment view (fds_index_view_acquire: reference counted, so refreshes
 * and merges go on beside it and the view's files stay until it is
 * released).  It lives until its keep-alive passes without a request on
 * it, or until it is cleared.  A reaper thread frees expired contexts every
 * FDS_CTX_REAP_INTERVAL_MS, and every find and new context reaps too, so
 * an idle server frees a context within that long of its expiry.
 *
 * Scroll paging follows Elasticsearch's: each shard keeps the last hit it
 * emitted (ScrollContext.lastEmittedDoc); the next page asks each shard for
 * the hits after its own (search_after on the request's sort keys or score,
 * ties broken by segment and doc: fds_search_request.after_tie), merges
 * them and emits the best `size`.  Every live doc of the views comes once,
 * in the request's order, whatever is written beside it.  Like
 * Elasticsearch, the total and max_score are counted exactly on the first
 * page and repeated on the next ones (which count nothing).  A score-ordered
 * scroll runs every page by the same document-at-a-time scoring (a
 * search_after of +infinity on the first), so a doc scores the same on
 * every page.
 *
 * Points in time add Elasticsearch's `_shard_doc` tiebreaker (the parser
 * does: pit_tiebreak in dsl_parse.c) and number the shards for it.
 */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fds_clock.h"
#include "search_contexts.h"
/* The parser's track_total_hits when none is given (Elasticsearch's
 * default, 10000): a scroll counts exactly instead. */
#define SCROLL_TRACK_TOTAL_DEFAULT 10000

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t reaper;
    bool running, stop;
    fds_search_ctx *list;
    uint64_t next_no;
    unsigned scrolls, pits; /* listed or reserved */
} T = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* CLOCK_MONOTONIC in nanoseconds, and in milliseconds. */
static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int64_t now_ms(void)
{
    return (int64_t)(mono_ns() / 1000000);
}

/* The contexts' counters of the indices a context holds (search stats):
 * one more (`open`) or one less open. */
static void ctx_stats(fds_search_ctx *c, bool open)
{
    uint64_t ns = open ? 0 : mono_ns() - c->opened_ns;
    if (open)
        c->opened_ns = mono_ns();
    for (size_t k = 0; k < c->n; k++) {
        if (!c->sh[k].ix)
            continue;
        fds_search_stats *s = fds_index_search_stats(c->sh[k].ix);
        if (open)
            atomic_fetch_add(&s->open_contexts, 1);
        else
            atomic_fetch_sub(&s->open_contexts, 1);
        if (c->kind != FDS_CTX_SCROLL)
            continue;
        if (open) {
            atomic_fetch_add(&s->scroll_current, 1);
        } else {
            atomic_fetch_sub(&s->scroll_current, 1);
            atomic_fetch_add(&s->scroll_total, 1);
            atomic_fetch_add(&s->scroll_time_ns, ns);
        }
    }
}

static void ctx_free(fds_search_ctx *c)
{
    if (c->opened_ns)
        ctx_stats(c, false);
    for (size_t k = 0; k < c->n; k++) {
        fds_search_request_free(c->sh[k].req);
        fds_index_view_release(c->sh[k].v);
        fds_index_release(c->sh[k].ix);
    }
    free(c->sh);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* Drop a reference (T.mu held); the last one frees (returned to free
 * outside the lock), and the count of its kind goes down. */
static fds_search_ctx *ctx_unref_locked(fds_search_ctx *c)
{
    if (--c->refs)
        return NULL;
    if (c->kind == FDS_CTX_SCROLL)
        T.scrolls--;
    else
        T.pits--;
    return c;
}

void fds_search_ctx_unref(fds_search_ctx *c)
{
    pthread_mutex_lock(&T.mu);
    fds_search_ctx *f = ctx_unref_locked(c);
    pthread_mutex_unlock(&T.mu);
    if (f)
        ctx_free(f);
}

/* Unlist `c` (T.mu held); returns it when that dropped the last reference. */
static fds_search_ctx *ctx_unlist_locked(fds_search_ctx *c)
{
    for (fds_search_ctx **p = &T.list; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            c->listed = false;
            return ctx_unref_locked(c);
        }
    return NULL;
}

/* Unlist every expired context not in use; free them. */
static void reap(void)
{
    int64_t now = now_ms();
    fds_search_ctx *dead = NULL;
    pthread_mutex_lock(&T.mu);
    for (fds_search_ctx **p = &T.list; *p;) {
        fds_search_ctx *c = *p;
        if (c->expires_ms <= now && c->refs == 1) {
            *p = c->next;
            c->listed = false;
            if (ctx_unref_locked(c)) {
                c->next = dead;
                dead = c;
            }
        } else {
            p = &c->next;
        }
    }
    pthread_mutex_unlock(&T.mu);
    while (dead) {
        fds_search_ctx *n = dead->next;
        ctx_free(dead);
        dead = n;
    }
}

static void *reaper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&T.mu);
    while (!T.stop) {
        struct timespec t;
        fds_abstime_in_ms(&t, FDS_CTX_REAP_INTERVAL_MS);
        pthread_cond_timedwait(&T.cv, &T.mu, &t);
        if (T.stop)
            break;
        pthread_mutex_unlock(&T.mu);
        reap();
        pthread_mutex_lock(&T.mu);
    }
    pthread_mutex_unlock(&T.mu);
    return NULL;
}

int fds_search_ctx_start(void)
{
    pthread_mutex_lock(&T.mu);
    T.stop = false;
    bool start = !T.running;
    T.running = true;
    pthread_mutex_unlock(&T.mu);
    if (start && pthread_create(&T.reaper, NULL, reaper_main, NULL)) {
        T.running = false;
        return FDS_ENOMEM;
    }
    return 0;
}

void fds_search_ctx_stop(void)
{
    pthread_mutex_lock(&T.mu);
    bool join = T.running;
    T.stop = true;
    T.running = false;
    pthread_cond_broadcast(&T.cv);
    fds_search_ctx *all = T.list, *dead = NULL;
    T.list = NULL;
    while (all) {
        fds_search_ctx *n = all->next;
        all->listed = false;
        if (ctx_unref_locked(all)) {
            all->next = dead;
            dead = all;
        }
        all = n;
    }
    pthread_mutex_unlock(&T.mu);
    if (join)
        pthread_join(T.reaper, NULL);
    while (dead) {
        fds_search_ctx *n = dead->next;
        ctx_free(dead);
        dead = n;
    }
}

void fds_search_ctx_counts(unsigned *scrolls, unsigned *pits)
{
    pthread_mutex_lock(&T.mu);
    *scrolls = T.scrolls;
    *pits = T.pits;
    pthread_mutex_unlock(&T.mu);
}

/* ---- ids -------------------------------------------------------------------------- */

static const char B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void id_encode(const fds_search_ctx *c, char *out)
{
    uint8_t b[FDS_CTX_ID_BYTES + 1] = {(uint8_t)c->kind};
    for (int i = 0; i < 8; i++) {
        b[1 + i] = (uint8_t)(c->no >> (8 * i));
        b[9 + i] = (uint8_t)(c->secret >> (8 * i));
    }
    size_t o = 0;
    for (size_t i = 0; i < FDS_CTX_ID_BYTES; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 |
                     (i + 2 < FDS_CTX_ID_BYTES ? b[i + 2] : 0);
        size_t chars = i + 2 < FDS_CTX_ID_BYTES ? 4 : FDS_CTX_ID_BYTES - i + 1;
        for (size_t k = 0; k < chars; k++)
            out[o++] = B64[(v >> (18 - 6 * k)) & 63];
    }
    out[o] = 0;
}

/* An id's kind, number and secret; false when it is not one of ours
 * (standard base64 and padding read too). */
static bool id_decode(const char *s, int *kind, uint64_t *no, uint64_t *secret)
{
    uint8_t b[FDS_CTX_ID_BYTES + 3] = {0};
    size_t n = 0, bits = 0;
    uint32_t acc = 0;
    for (; *s && *s != '='; s++) {
        const char *p = *s == '+' ? B64 + 62 : *s == '/' ? B64 + 63 : strchr(B64, *s);
        if (!p || !*p || n >= sizeof b)
            return false;
        acc = acc << 6 | (uint32_t)(p - B64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            b[n++] = (uint8_t)(acc >> bits);
        }
    }
    if (n != FDS_CTX_ID_BYTES || (b[0] != FDS_CTX_SCROLL && b[0] != FDS_CTX_PIT))
        return false;
    *kind = b[0];
    *no = *secret = 0;
    for (int i = 0; i < 8; i++) {
        *no |= (uint64_t)b[1 + i] << (8 * i);
        *secret |= (uint64_t)b[9 + i] << (8 * i);
    }
    return true;
}

static uint64_t random_u64(void)
{
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        v = (uint64_t)t.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)t.tv_sec;
    }
    if (fd >= 0)
        close(fd);
    return v;
}

/* The listed context of id `s` and kind `kind`, with a reference for the
 * caller (fds_search_ctx_unref), or NULL (unknown or expired).  *bad: not an id. */
fds_search_ctx *fds_search_ctx_find(const char *s, int kind, bool *bad)
{
    int k;
    uint64_t no, secret;
    *bad = !id_decode(s, &k, &no, &secret);
    if (*bad)
        return NULL;
    reap();
    fds_search_ctx *found = NULL;
    pthread_mutex_lock(&T.mu);
    for (fds_search_ctx *c = T.list; c && !found; c = c->next)
        if (c->no == no && c->secret == secret && c->kind == k && k == kind) {
            found = c;
            c->refs++;
        }
    pthread_mutex_unlock(&T.mu);
    return found;
}

/* A new unlisted context of `kind` over n shards, counted against its
 * limit; NULL when out of memory (*full: past the scroll limit). */
fds_search_ctx *fds_search_ctx_new(int kind, size_t n, int64_t keep_alive_ms, bool *full)
{
    *full = false;
    reap();
    pthread_mutex_lock(&T.mu);
    if (kind == FDS_CTX_SCROLL && T.scrolls >= FDS_MAX_OPEN_SCROLL_CONTEXT) {
        pthread_mutex_unlock(&T.mu);
        *full = true;
        return NULL;
    }
    fds_search_ctx *c = calloc(1, sizeof *c);
    if (c && !(c->sh = calloc(n ? n : 1, sizeof *c->sh))) {
        free(c);
        c = NULL;
    }
    if (c) {
        c->kind = kind;
        c->no = ++T.next_no;
        c->refs = 1;
        c->n = n;
        c->keep_alive_ms = keep_alive_ms;
        if (kind == FDS_CTX_SCROLL)
            T.scrolls++;
        else
            T.pits++;
    }
    pthread_mutex_unlock(&T.mu);
    if (!c)
        return NULL;
    c->secret = random_u64();
    pthread_mutex_init(&c->mu, NULL);
    id_encode(c, c->id);
    return c;
}

/* List `c` (its reference becomes the table's), expiring keep_alive from now. */
void fds_search_ctx_list(fds_search_ctx *c)
{
    ctx_stats(c, true);
    pthread_mutex_lock(&T.mu);
    c->expires_ms = now_ms() + c->keep_alive_ms;
    c->listed = true;
    c->next = T.list;
    T.list = c;
    pthread_mutex_unlock(&T.mu);
}

/* A request on `c` is over: its keep-alive counts from now. */
void fds_search_ctx_touch(fds_search_ctx *c)
{
    pthread_mutex_lock(&T.mu);
    c->expires_ms = now_ms() + c->keep_alive_ms;
    pthread_mutex_unlock(&T.mu);
}

/* Free the listed context of id `s` (kind `kind`): 1 freed, 0 unknown,
 * -1 not an id. */
int fds_search_ctx_clear(const char *s, int kind)
{
    bool bad;
    fds_search_ctx *c = fds_search_ctx_find(s, kind, &bad);
    if (!c)
        return bad ? -1 : 0;
    pthread_mutex_lock(&T.mu);
    bool was = c->listed;
    fds_search_ctx *f = ctx_unlist_locked(c);
    fds_search_ctx *g = ctx_unref_locked(c);
    pthread_mutex_unlock(&T.mu);
    if (f)
        ctx_free(f);
    if (g && g != f)
        ctx_free(g);
    return was ? 1 : 0;
}

/* ---- scroll ------------------------------------------------------------------------- */


/* The first page: Elasticsearch's scroll validation (SearchRequest
 * validate, SearchService's batch size check), counting exact, and the
 * score order run as later pages run it. */
int fds_scroll_first(void *arg, size_t k, fds_index *ix,
                        fds_search_request *req, fds_err *e)
{
    (void)k;
    const fds_search_ctx *c = arg;
    /* every failed check, numbered, in SearchRequest#validate's order */
    const char *bad[5];
    unsigned nbad = 0;
    if (c->no_cache)
        bad[nbad++] = "[request_cache] cannot be used in a scroll context";
    if (req->track_total != INT64_MAX && req->track_total != SCROLL_TRACK_TOTAL_DEFAULT)
        bad[nbad++] = "disabling [track_total_hits] is not allowed in a scroll context";
    if (req->from > 0)
        bad[nbad++] = "using [from] is not allowed in a scroll context";
    if (req->size == 0)
        bad[nbad++] = "[size] cannot be [0] in a scroll context";
    if (req->nafter)
        bad[nbad++] = "[search_after] cannot be used in a scroll context";
    if (nbad) {
        char msg[FDS_ERR_REASON_MAX];
        size_t l = (size_t)snprintf(msg, sizeof msg, "Validation Failed:");
        for (unsigned i = 0; i < nbad && l < sizeof msg; i++)
            l += (size_t)snprintf(msg + l, sizeof msg - l, " %u: %s;", i + 1, bad[i]);
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_VALIDATION, "%s", msg);
    }
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    if (req->size > set.max_result_window)
        return fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Batch size is too large, size must be less than or "
                            "equal to: [%u] but was [%u]. Scroll batch sizes cost "
                            "as much memory as result windows so they are "
                            "controlled by the [index.max_result_window] index "
                            "level setting.", set.max_result_window, req->size);
    req->max_window = UINT32_MAX;
    req->track_total = INT64_MAX;
    if (req->nsort == 0) { /* every score is below +infinity */
        req->nafter = 1;
        req->after[0] = (fds_after_val){.num = INFINITY};
    }
    return 0;
}

/* Later pages: after the shard's cursor, nothing counted. */
int fds_scroll_next(void *arg, size_t k, fds_index *ix,
                       fds_search_request *req, fds_err *e)
{
    (void)ix;
    fds_search_ctx *c = arg;
    const fds_search_ctx_shard *s = &c->sh[k];
    req->track_total = FDS_TRACK_TOTAL_NONE;
    req->total_as_int = c->total_as_int;
    if (!s->has_cursor)
        return 0;
    const fds_hit *h = &s->cursor;
    unsigned nk = req->nsort ? req->nsort : 1;
    for (unsigned q = 0; q < req->nafter; q++)
        free(req->after[q].str);
    req->nafter = nk;
    for (unsigned q = 0; q < nk; q++) {
        fds_after_val *a = &req->after[q];
        memset(a, 0, sizeof *a);
        if (!req->nsort) {
            a->num = (double)h->score;
            continue;
        }
        bool kw = req->sort[q].kind == FDS_SORT_FIELD &&
                  req->sort[q].ftype == FDS_FT_KEYWORD;
        if (kw ? !h->sort_str[q] : isnan(h->sort_num[q])) {
            a->is_null = true;
            continue;
        }
        a->num = h->sort_num[q];
        a->lnum = h->sort_long[q];
        if (kw) {
            if (!(a->str = malloc(h->sort_str_len[q] + 1)))
                return fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
            memcpy(a->str, h->sort_str[q], h->sort_str_len[q]);
            a->str[h->sort_str_len[q]] = 0;
            a->str_len = h->sort_str_len[q];
        }
    }
    req->after_tie = true;
    req->after_seg = h->seg;
    req->after_doc = h->doc;
    return 0;
}

void fds_scroll_page(void *arg, fds_search_request *pg, fds_search_result *res,
                        const size_t *shard, const unsigned *seg0)
{
    fds_search_ctx *c = arg;
    if (!c->first_done) {
        c->first_done = true;
        c->total = res->total;
        c->total_lb = res->total_is_lower_bound;
        c->max_score = res->max_score;
    } else {
        pg->track_total = INT64_MAX;
        res->total = c->total;
        res->total_is_lower_bound = c->total_lb;
        res->max_score = c->max_score;
    }
    for (size_t i = 0; i < res->nhits; i++) {
        fds_search_ctx_shard *s = &c->sh[shard[i]];
        s->cursor = res->hits[i];
        s->cursor.seg -= seg0[shard[i]];
        s->has_cursor = true;
    }
}

bool fds_scroll_keep(void *arg, size_t k, fds_index *ix, fds_index_view *v,
                        fds_search_request *req)
{
    fds_search_ctx *c = arg;
    c->sh[k].ix = ix;
    c->sh[k].v = v;
    c->sh[k].req = req;
    return true;
}

fds_search_request *fds_search_ctx_req(void *arg, size_t k)
{
    return ((fds_search_ctx *)arg)->sh[k].req;
}

fds_index_view *fds_search_ctx_view(void *arg, size_t k)
{
    return ((fds_search_ctx *)arg)->sh[k].v;
}

/* Free every listed context of `kind`; how many. */
unsigned fds_search_ctx_clear_all(int kind)
{
    unsigned n = 0;
    fds_search_ctx *dead = NULL;
    pthread_mutex_lock(&T.mu);
    for (fds_search_ctx **p = &T.list; *p;) {
        fds_search_ctx *c = *p;
        if (c->kind != kind) {
            p = &c->next;
            continue;
        }
        *p = c->next;
        c->listed = false;
        n++;
        if (ctx_unref_locked(c)) {
            c->next = dead;
            dead = c;
        }
    }
    pthread_mutex_unlock(&T.mu);
    while (dead) {
        fds_search_ctx *x = dead->next;
        ctx_free(dead);
        dead = x;
    }
    return n;
}

/* Number the shards for `_shard_doc`. */
int fds_pit_prepare(void *arg, size_t k, fds_index *ix, fds_search_request *req,
                       fds_err *e)
{
    (void)arg;
    (void)ix;
    (void)e;
    req->shard_index = (uint32_t)k;
    return 0;
}
