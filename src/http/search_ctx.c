/*
 * search_ctx.c: scroll and point-in-time contexts -- searches that read
 * one immutable set of segments across many requests.
 *
 * A context holds, per index of its expression, an index reference and a
 * segment view (fds_index_view_acquire: reference counted, so refreshes
 * and merges go on beside it and the view's files stay until it is
 * released).  It lives until its keep-alive passes without a request on
 * it, or until it is cleared.  A reaper thread frees expired contexts every
 * FDS_CTX_REAP_INTERVAL_MS, and every scroll or point-in-time request reaps
 * too, so an idle server frees a context within that long of its expiry.
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
 *
 * Ids are opaque to clients: base64url (no padding) of 17 bytes -- a kind
 * byte, the context number and a random secret, both little-endian 64-bit
 * -- so a guessed or stale id never reaches another context.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index_expr.h"
#include "search_ctx.h"
#include "search_stats.h"
#include "tasks.h"

enum { CTX_SCROLL = 1, CTX_PIT = 2 };

#define CTX_ID_BYTES 17
#define CTX_ID_TEXT 32 /* base64 of CTX_ID_BYTES, NUL included */
/* The parser's track_total_hits when none is given (Elasticsearch's
 * default, 10000): a scroll counts exactly instead. */
#define SCROLL_TRACK_TOTAL_DEFAULT 10000

typedef struct ctx_shard {
    fds_index *ix;
    fds_index_view *v;
    fds_search_request *req; /* scroll: the parsed request, page after page */
    bool has_cursor;
    fds_hit cursor; /* the last hit it emitted (its own segment numbers) */
} ctx_shard;

typedef struct ctx {
    int kind;
    uint64_t no, secret;
    char id[CTX_ID_TEXT];
    pthread_mutex_t mu; /* one request at a time (a view's fetch state) */
    unsigned refs;      /* the table's (while listed) + requests' */
    bool listed;
    int64_t keep_alive_ms, expires_ms;
    uint64_t opened_ns; /* when it began holding views (0: not yet) */
    ctx_shard *sh;
    size_t n;
    /* scroll: the first page's count and best score; the next page's
     * rest_total_hits_as_int */
    bool first_done;
    uint64_t total;
    bool total_lb;
    float max_score;
    bool total_as_int;
    bool no_cache; /* the first page asked for request_cache (refused) */
    struct ctx *next;
} ctx;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t reaper;
    bool running, stop;
    ctx *list;
    uint64_t next_no;
    unsigned scrolls, pits; /* listed or reserved */
} T = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The contexts' counters of the indices a context holds (search stats):
 * one more (`open`) or one less open. */
static void ctx_stats(ctx *c, bool open)
{
    uint64_t ns = open ? 0 : fds__mono_ns() - c->opened_ns;
    if (open)
        c->opened_ns = fds__mono_ns();
    for (size_t k = 0; k < c->n; k++) {
        if (!c->sh[k].ix)
            continue;
        fds_search_stats *s = fds_index_search_stats(c->sh[k].ix);
        if (open)
            atomic_fetch_add(&s->open_contexts, 1);
        else
            atomic_fetch_sub(&s->open_contexts, 1);
        if (c->kind != CTX_SCROLL)
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

static void ctx_free(ctx *c)
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
static ctx *ctx_unref_locked(ctx *c)
{
    if (--c->refs)
        return NULL;
    if (c->kind == CTX_SCROLL)
        T.scrolls--;
    else
        T.pits--;
    return c;
}

static void ctx_unref(ctx *c)
{
    pthread_mutex_lock(&T.mu);
    ctx *f = ctx_unref_locked(c);
    pthread_mutex_unlock(&T.mu);
    if (f)
        ctx_free(f);
}

/* Unlist `c` (T.mu held); returns it when that dropped the last reference. */
static ctx *ctx_unlist_locked(ctx *c)
{
    for (ctx **p = &T.list; *p; p = &(*p)->next)
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
    ctx *dead = NULL;
    pthread_mutex_lock(&T.mu);
    for (ctx **p = &T.list; *p;) {
        ctx *c = *p;
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
        ctx *n = dead->next;
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
        fds__abstime_in(&t, FDS_CTX_REAP_INTERVAL_MS);
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

int fds__ctx_start(void)
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

void fds__ctx_stop(void)
{
    pthread_mutex_lock(&T.mu);
    bool join = T.running;
    T.stop = true;
    T.running = false;
    pthread_cond_broadcast(&T.cv);
    ctx *all = T.list, *dead = NULL;
    T.list = NULL;
    while (all) {
        ctx *n = all->next;
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
        ctx *n = dead->next;
        ctx_free(dead);
        dead = n;
    }
}

void fds__ctx_counts(unsigned *scrolls, unsigned *pits)
{
    pthread_mutex_lock(&T.mu);
    *scrolls = T.scrolls;
    *pits = T.pits;
    pthread_mutex_unlock(&T.mu);
}

/* ---- ids -------------------------------------------------------------------------- */

static const char B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void id_encode(const ctx *c, char *out)
{
    uint8_t b[CTX_ID_BYTES + 1] = {(uint8_t)c->kind};
    for (int i = 0; i < 8; i++) {
        b[1 + i] = (uint8_t)(c->no >> (8 * i));
        b[9 + i] = (uint8_t)(c->secret >> (8 * i));
    }
    size_t o = 0;
    for (size_t i = 0; i < CTX_ID_BYTES; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 |
                     (i + 2 < CTX_ID_BYTES ? b[i + 2] : 0);
        size_t chars = i + 2 < CTX_ID_BYTES ? 4 : CTX_ID_BYTES - i + 1;
        for (size_t k = 0; k < chars; k++)
            out[o++] = B64[(v >> (18 - 6 * k)) & 63];
    }
    out[o] = 0;
}

/* An id's kind, number and secret; false when it is not one of ours
 * (standard base64 and padding read too). */
static bool id_decode(const char *s, int *kind, uint64_t *no, uint64_t *secret)
{
    uint8_t b[CTX_ID_BYTES + 3] = {0};
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
    if (n != CTX_ID_BYTES || (b[0] != CTX_SCROLL && b[0] != CTX_PIT))
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
 * caller (ctx_unref), or NULL (unknown or expired).  *bad: not an id. */
static ctx *ctx_find(const char *s, int kind, bool *bad)
{
    int k;
    uint64_t no, secret;
    *bad = !id_decode(s, &k, &no, &secret);
    if (*bad)
        return NULL;
    reap();
    ctx *found = NULL;
    pthread_mutex_lock(&T.mu);
    for (ctx *c = T.list; c && !found; c = c->next)
        if (c->no == no && c->secret == secret && c->kind == k && k == kind) {
            found = c;
            c->refs++;
        }
    pthread_mutex_unlock(&T.mu);
    return found;
}

/* A new unlisted context of `kind` over n shards, counted against its
 * limit; NULL when out of memory (*full: past the scroll limit). */
static ctx *ctx_new(int kind, size_t n, int64_t keep_alive_ms, bool *full)
{
    *full = false;
    reap();
    pthread_mutex_lock(&T.mu);
    if (kind == CTX_SCROLL && T.scrolls >= FDS_MAX_OPEN_SCROLL_CONTEXT) {
        pthread_mutex_unlock(&T.mu);
        *full = true;
        return NULL;
    }
    ctx *c = calloc(1, sizeof *c);
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
        if (kind == CTX_SCROLL)
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
static void ctx_list(ctx *c)
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
static void ctx_touch(ctx *c)
{
    pthread_mutex_lock(&T.mu);
    c->expires_ms = now_ms() + c->keep_alive_ms;
    pthread_mutex_unlock(&T.mu);
}

/* Free the listed context of id `s` (kind `kind`): 1 freed, 0 unknown,
 * -1 not an id. */
static int ctx_clear(const char *s, int kind)
{
    bool bad;
    ctx *c = ctx_find(s, kind, &bad);
    if (!c)
        return bad ? -1 : 0;
    pthread_mutex_lock(&T.mu);
    bool was = c->listed;
    ctx *f = ctx_unlist_locked(c);
    ctx *g = ctx_unref_locked(c);
    pthread_mutex_unlock(&T.mu);
    if (f)
        ctx_free(f);
    if (g && g != f)
        ctx_free(g);
    return was ? 1 : 0;
}

/* ---- time values -------------------------------------------------------------------- */

/* A keep-alive time value ("1m", "30s", "500ms", "1d") in milliseconds, or
 * an answer in `o` and false (unparsable, or past search.max_keep_alive,
 * in Elasticsearch's words). */
static bool keep_alive(const char *v, const char *name, int64_t *ms, fds_resp *o)
{
    static const struct { const char *unit; double ms; } units[] = {
        {"nanos", 1e-6}, {"micros", 1e-3}, {"ms", 1}, {"s", 1e3},
        {"m", 6e4}, {"h", 3.6e6}, {"d", 8.64e7}};
    char *end;
    double x = v && *v ? strtod(v, &end) : NAN;
    double got = NAN;
    for (size_t i = 0; !isnan(x) && x >= 0 && i < sizeof units / sizeof *units; i++)
        if (!strcmp(end, units[i].unit))
            got = x * units[i].ms;
    if (isnan(got)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "failed to parse setting [%s] with value [%s] as a time "
                        "value: unit is missing or unrecognized", name, v ? v : "");
        return false;
    }
    if (got > (double)FDS_MAX_KEEP_ALIVE_MS) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "Keep alive for request (%s) is too large. It must be "
                        "less than (1d). This limit can be set by changing the "
                        "[search.max_keep_alive] cluster level setting.", v);
        return false;
    }
    *ms = (int64_t)got;
    return true;
}

/* The listed context of `id` and `kind` with a reference for the caller,
 * or NULL with the answer in `o`: 400 `bad` when it is not an id, 404
 * search_context_missing_exception when unknown or expired. */
static ctx *ctx_lookup(const char *id, int kind, const char *bad, fds_resp *o)
{
    bool malformed;
    ctx *c = ctx_find(id, kind, &malformed);
    if (!c && malformed)
        fds__resp_errorf(o, 400, "illegal_argument_exception", "%s", bad);
    else if (!c)
        fds__resp_errorf(o, 404, "search_context_missing_exception",
                        "No search context found for id [%s]", id);
    return c;
}

/* A search over context `c` (one request at a time) with hooks `hk`; its
 * keep-alive becomes `ms` when >= 0 and counts from the end of the
 * request.  Drops the caller's reference. */
static void ctx_search(fds_req *r, fds_resp *o, ctx *c, int64_t ms,
                       const fds__search_hooks *hk)
{
    pthread_mutex_lock(&c->mu);
    if (ms >= 0)
        c->keep_alive_ms = ms;
    c->total_as_int = fds__req_param_bool(r, "rest_total_hits_as_int", false);
    fds_index **ixs = malloc((c->n ? c->n : 1) * sizeof *ixs);
    if (!ixs) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
    } else {
        for (size_t k = 0; k < c->n; k++)
            ixs[k] = c->sh[k].ix;
        fds__search_held(r, o, ixs, c->n, hk);
    }
    pthread_mutex_unlock(&c->mu);
    ctx_touch(c);
    ctx_unref(c);
}

/* ---- scroll ------------------------------------------------------------------------- */


/* The first page: Elasticsearch's scroll validation (SearchRequest
 * validate, SearchService's batch size check), counting exact, and the
 * score order run as later pages run it. */
static int scroll_first(void *arg, size_t k, fds_index *ix,
                        fds_search_request *req, fds_err *e)
{
    (void)k;
    const ctx *c = arg;
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
static int scroll_next(void *arg, size_t k, fds_index *ix,
                       fds_search_request *req, fds_err *e)
{
    (void)ix;
    ctx *c = arg;
    const ctx_shard *s = &c->sh[k];
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

static void scroll_page(void *arg, fds_search_request *pg, fds_search_result *res,
                        const size_t *shard, const unsigned *seg0)
{
    ctx *c = arg;
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
        ctx_shard *s = &c->sh[shard[i]];
        s->cursor = res->hits[i];
        s->cursor.seg -= seg0[shard[i]];
        s->has_cursor = true;
    }
}

static bool scroll_keep(void *arg, size_t k, fds_index *ix, fds_index_view *v,
                        fds_search_request *req)
{
    ctx *c = arg;
    c->sh[k].ix = ix;
    c->sh[k].v = v;
    c->sh[k].req = req;
    return true;
}

static fds_search_request *held_req(void *arg, size_t k)
{
    return ((ctx *)arg)->sh[k].req;
}

static fds_index_view *held_view(void *arg, size_t k)
{
    return ((ctx *)arg)->sh[k].v;
}

bool fds__scroll_begin(fds_req *r, fds_resp *o, const char *keep, size_t n,
                       fds__search_hooks *hk)
{
    int64_t ms;
    if (!keep_alive(keep, "scroll", &ms, o))
        return false;
    bool full;
    ctx *c = ctx_new(CTX_SCROLL, n, ms, &full);
    if (full) {
        fds__resp_errorf(o, 429, "too_many_scroll_contexts_exception",
                        "Trying to create too many scroll contexts. Must be less "
                        "than or equal to: [%d]. This limit can be set by "
                        "changing the [search.max_open_scroll_context] setting.",
                        FDS_MAX_OPEN_SCROLL_CONTEXT);
        return false;
    }
    if (!c) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
        return false;
    }
    c->no_cache = fds__req_param_bool(r, "request_cache", false);
    *hk = (fds__search_hooks){.arg = c, .scroll = true, .prepare = scroll_first,
                              .page = scroll_page, .keep = scroll_keep,
                              .id_key = "_scroll_id", .id = c->id};
    return true;
}

void fds__scroll_end(fds__search_hooks *hk, fds_resp *o)
{
    ctx *c = hk->arg;
    if (o->status != 200) {
        ctx_unref(c);
        return;
    }
    size_t m = 0; /* the shards that answered */
    for (size_t k = 0; k < c->n; k++)
        if (c->sh[k].ix)
            c->sh[m++] = c->sh[k];
    c->n = m;
    ctx_list(c);
}

/* Body keys of a scroll request (RestSearchScrollAction). */
static const char *const SCROLL_PARAMS[] = {"scroll", "scroll_id",
                                            "rest_total_hits_as_int", NULL};

/* The body of a scroll or clear request, checked (*body: caller deletes),
 * and its scroll id: the body's when it has one (NULL when that is a list),
 * else the URL's (path segment 2 or ?scroll_id=) -- the body takes
 * precedence, as in RestSearchScrollAction.  False with a 400 in `o`. */
static bool scroll_args(fds_req *r, fds_resp *o, cJSON **body, const char **id)
{
    fds_err e;
    fds_err_clear(&e);
    *body = NULL;
    if (fds__body_json(r, body, &e)) {
        fds__resp_error(o, &e);
        return false;
    }
    if (*body && !cJSON_IsObject(*body)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "Malformed content, must start with an object");
        cJSON_Delete(*body);
        return false;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, *body) {
        bool known = !strcmp(it->string, "scroll_id") || !strcmp(it->string, "scroll");
        bool shape = cJSON_IsString(it) ||
                     (!strcmp(it->string, "scroll_id") && cJSON_IsArray(it));
        if (!known || !shape) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "Unknown parameter [%s] in request body or parameter "
                            "is of the wrong type[%s] ", it->string,
                            cJSON_IsString(it) ? "VALUE_STRING"
                            : cJSON_IsNumber(it) ? "VALUE_NUMBER"
                                                 : "START_OBJECT");
            cJSON_Delete(*body);
            return false;
        }
    }
    const cJSON *bid = cJSON_GetObjectItemCaseSensitive(*body, "scroll_id");
    *id = cJSON_IsString(bid) ? bid->valuestring
        : bid ? NULL
        : r->nseg == 3 ? r->seg[2] : fds__req_param(r, "scroll_id");
    return true;
}

void fds__h_scroll(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, SCROLL_PARAMS))
        return;
    cJSON *body;
    const char *id;
    if (!scroll_args(r, o, &body, &id))
        return;
    const cJSON *bk = cJSON_GetObjectItemCaseSensitive(body, "scroll");
    const char *keep = cJSON_IsString(bk) ? bk->valuestring : fds__req_param(r, "scroll");
    int64_t ms = -1;
    if (!id || !*id) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: scrollId is missing;");
    }
    if (keep && !keep_alive(keep, "scroll", &ms, o)) {
        cJSON_Delete(body);
        return;
    }
    ctx *c = ctx_lookup(id, CTX_SCROLL, "Cannot parse scroll id", o);
    cJSON_Delete(body);
    if (c)
        ctx_search(r, o, c, ms, &(fds__search_hooks){
                       .arg = c, .req = held_req, .view = held_view,
                       .prepare = scroll_next, .page = scroll_page,
                       .id_key = "_scroll_id", .id = c->id});
}

/* {"succeeded":true,"num_freed":N}: 200, or 404 when nothing was freed
 * (ClearScrollResponse's status). */
static void freed_answer(fds_resp *o, unsigned freed)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "succeeded", 1);
    cJSON_AddNumberToObject(j, "num_freed", freed);
    fds__resp_json(o, freed ? 200 : 404, j);
}

/* Free every listed context of `kind`; how many. */
static unsigned clear_all(int kind)
{
    unsigned n = 0;
    ctx *dead = NULL;
    pthread_mutex_lock(&T.mu);
    for (ctx **p = &T.list; *p;) {
        ctx *c = *p;
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
        ctx *x = dead->next;
        ctx_free(dead);
        dead = x;
    }
    return n;
}

/* Clear the ids of one comma-separated list `s` (modified); -1 when one is
 * not an id. */
static int clear_list(char *s, unsigned *freed)
{
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        int rc = ctx_clear(tok, CTX_SCROLL);
        if (rc < 0)
            return -1;
        *freed += (unsigned)rc;
    }
    return 0;
}

void fds__h_scroll_clear(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, SCROLL_PARAMS))
        return;
    cJSON *body;
    const char *ids; /* one id, a comma list or _all */
    if (!scroll_args(r, o, &body, &ids))
        return;
    unsigned freed = 0;
    int rc = 0;
    const cJSON *bid = cJSON_GetObjectItemCaseSensitive(body, "scroll_id");
    if (ids && !strcmp(ids, "_all")) {
        freed = clear_all(CTX_SCROLL);
    } else if (ids) {
        char *copy = strdup(ids);
        rc = copy ? clear_list(copy, &freed) : FDS_ENOMEM;
        free(copy);
    } else if (cJSON_IsArray(bid)) {
        for (const cJSON *it = bid->child; it && !rc; it = it->next) {
            if (!cJSON_IsString(it)) {
                rc = -1;
                break;
            }
            if (!strcmp(it->valuestring, "_all"))
                freed += clear_all(CTX_SCROLL);
            else if ((rc = ctx_clear(it->valuestring, CTX_SCROLL)) > 0)
                freed++, rc = 0;
        }
    } else {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: no scroll ids specified;");
    }
    cJSON_Delete(body);
    if (rc == FDS_ENOMEM)
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    if (rc < 0)
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "Cannot parse scroll id");
    freed_answer(o, freed);
}

/* ---- point in time ------------------------------------------------------------------ */

static const char *const PIT_PARAMS[] = {"keep_alive", "ignore_unavailable",
                                         "expand_wildcards", "allow_no_indices",
                                         "preference", "routing",
                                         "allow_partial_search_results", NULL};

static const char *param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}

void fds__h_pit_open(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, PIT_PARAMS))
        return;
    const char *keep = fds__req_param(r, "keep_alive");
    if (!keep)
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: [keep_alive] is not specified;");
    int64_t ms;
    if (!keep_alive(keep, "keep_alive", &ms, o))
        return;
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = FDS_INDEX_EXPR_SEARCH_DEFAULTS;
    fds_index **ixs = NULL;
    size_t n = 0;
    if (fds_index_expr_opts_read(param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, r->seg[0], &opts, &ixs, &n, &e))
        return fds__resp_error(o, &e);
    bool full;
    ctx *c = ctx_new(CTX_PIT, n, ms, &full);
    int rc = c ? 0 : FDS_ENOMEM;
    if (rc)
        fds_err_setk(&e, rc, FDS_KIND_INTERNAL, "out of memory");
    size_t k = 0;
    for (; !rc && k < n; k++) {
        if (!fds_index_is_open(ixs[k])) {
            rc = fds_err_setk(&e, FDS_ECLOSED, FDS_KIND_INDEX_CLOSED, "closed");
            snprintf(e.index, sizeof e.index, "%s", fds_index_name(ixs[k]));
            break;
        }
        if ((rc = fds_index_view_acquire(ixs[k], &c->sh[k].v, &e)))
            break;
        c->sh[k].ix = ixs[k];
        ixs[k] = NULL;
    }
    fds_index_expr_free(ixs, n); /* what the context did not take */
    if (rc) {
        if (c)
            ctx_unref(c);
        return fds__resp_error(o, &e);
    }
    ctx_list(c);
    fds_strbuf b = {0};
    fds_strbuf_printf(&b, "{\"id\":\"%s\",\"_shards\":{\"total\":%zu,\"successful\":"
                          "%zu,\"skipped\":0,\"failed\":0}}", c->id, n, n);
    if (b.oom) {
        free(b.p);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    fds__resp_raw(o, 200, b.p, b.len, NULL);
}

void fds__h_pit_close(fds_req *r, fds_resp *o)
{
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_json(r, &body, &e))
        return fds__resp_error(o, &e);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(body, "id");
    if (!cJSON_IsString(id)) {
        cJSON_Delete(body);
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: point in time id must be "
                               "specified;");
    }
    int rc = ctx_clear(id->valuestring, CTX_PIT);
    cJSON_Delete(body);
    if (rc < 0)
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "invalid id: cannot parse point in time id");
    freed_answer(o, (unsigned)rc);
}

bool fds__body_has_pit(fds_req *r)
{
    if (!r->body_len || !memmem(r->body, r->body_len, "\"pit\"", 5))
        return false;
    cJSON *root = cJSON_ParseWithLength(r->body, r->body_len);
    bool has = cJSON_GetObjectItemCaseSensitive(root, "pit") != NULL;
    cJSON_Delete(root);
    return has;
}

/* Number the shards for `_shard_doc`. */
static int pit_prepare(void *arg, size_t k, fds_index *ix, fds_search_request *req,
                       fds_err *e)
{
    (void)arg;
    (void)ix;
    (void)e;
    req->shard_index = (uint32_t)k;
    return 0;
}

void fds__pit_search(fds_req *r, fds_resp *o)
{
    if (r->nseg > 1)
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: [indices] cannot be used "
                               "with point in time. Do not specify any index with "
                               "point in time.;");
    if (fds__req_param(r, "scroll"))
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: using [point in time] is "
                               "not allowed in a scroll context;");
    cJSON *root = cJSON_ParseWithLength(r->body, r->body_len);
    const cJSON *pit = cJSON_GetObjectItemCaseSensitive(root, "pit");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(pit, "id");
    const cJSON *ka = cJSON_GetObjectItemCaseSensitive(pit, "keep_alive");
    const cJSON *it;
    bool shape = cJSON_IsObject(pit) && cJSON_IsString(id) &&
                 (!ka || cJSON_IsString(ka));
    if (shape)
        cJSON_ArrayForEach(it, pit)
            shape &= !strcmp(it->string, "id") || !strcmp(it->string, "keep_alive");
    if (!shape) {
        cJSON_Delete(root);
        return fds__resp_errorf(o, 400, "x_content_parse_exception",
                               "[pit] takes {\"id\": string, \"keep_alive\": "
                               "time value}");
    }
    int64_t ms = -1;
    if (ka && !keep_alive(ka->valuestring, "keep_alive", &ms, o)) {
        cJSON_Delete(root);
        return;
    }
    ctx *c = ctx_lookup(id->valuestring, CTX_PIT,
                        "invalid id: cannot parse point in time id", o);
    cJSON_Delete(root);
    if (c)
        ctx_search(r, o, c, ms, &(fds__search_hooks){
                       .arg = c, .view = held_view, .prepare = pit_prepare,
                       .id_key = "pit_id", .id = c->id});
}
