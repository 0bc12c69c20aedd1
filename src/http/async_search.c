/*
 * async_search.c: Elasticsearch's async search -- `POST /{index}/_async_search`
 * and `/_async_search`, `GET /_async_search/{id}`, `GET
 * /_async_search/status/{id}`, `DELETE /_async_search/{id}` -- which Kibana
 * runs its Discover and dashboard searches through.
 *
 * A submitted search runs on a thread of its own through the ordinary
 * search handler (fds__h_search, answering into an fds_resp as an _msearch
 * item does); the submitting request waits up to
 * wait_for_completion_timeout for it.  An answer that came in time and
 * was not asked to be kept (keep_on_completion) is returned without an id
 * and forgotten; otherwise the search is stored under an id until its
 * expiration (submit time + keep_alive, moved on by a GET's keep_alive) or
 * a DELETE.  A reaper thread frees expired searches every
 * FDS_ASYNC_REAP_INTERVAL_MS (every request reaps too), and a GET treats an
 * expired one as gone, as Elasticsearch does.
 *
 * Unlike Elasticsearch, which keeps the answers in its `.async-search`
 * index, they live in memory only: a restart forgets them.  A running
 * search is not cancelled by a DELETE or its expiry: it is forgotten at
 * once and its thread frees it when it ends.  While it runs, the answer's
 * `response` is an empty page (no partial results are reduced).
 *
 * Ids are base64url (no padding) of FDS_ASYNC_ID_BYTES: a sequence number
 * and random bytes, so an id is never reused and cannot be guessed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "async_search.h"
#include "doc_source.h"
#include "fds_clock.h"
#include "fds_strbuf.h"
#include "fds_time.h"
#include "handlers.h"
#include "request.h"
#include "response.h"
#include "search_api.h"
#include "tasks.h"

/* Async searches running at once (each is a thread); one more is refused
 * with 429. */
#define FDS_ASYNC_RUNNING_MAX 64
/* Searches stored at once (running or done); one more is refused with
 * 429. */
#define FDS_ASYNC_STORED_MAX 1024
/* Elasticsearch's defaults: a submit waits 1s, results are kept 5 days. */
#define FDS_ASYNC_WAIT_DEFAULT_MS 1000
#define FDS_ASYNC_KEEP_ALIVE_DEFAULT_MS (5ll * 24 * 3600 * 1000)
/* Elasticsearch refuses a keep_alive under a second. */
#define FDS_ASYNC_KEEP_ALIVE_MIN_MS 1000
/* How often the reaper frees expired searches, milliseconds. */
#define FDS_ASYNC_REAP_INTERVAL_MS 1000
/* URL parameters handed to one search at most. */
#define FDS_ASYNC_KV_MAX 64
/* An id's bytes: an 8-byte sequence number and 10 random ones; its text
 * (base64url, no padding) with the NUL. */
#define FDS_ASYNC_ID_BYTES 18
#define FDS_ASYNC_ID_TEXT 32

/* The parameters of the submit itself (not handed to the search). */
static const char *const SUBMIT_PARAMS[] = {"wait_for_completion_timeout",
                                            "keep_on_completion", "keep_alive"};
/* Common parameters that shape the outer answer, not the search's. */
static const char *const OUTER_PARAMS[] = {"pretty", "human", "error_trace",
                                           "filter_path"};
static const char *const GET_PARAMS[] = {"wait_for_completion_timeout",
                                         "keep_alive", "typed_keys",
                                         "rest_total_hits_as_int", NULL};

typedef struct asearch {
    struct asearch *next;
    char id[FDS_ASYNC_ID_TEXT];
    unsigned refs;      /* the table's, the thread's, each waiter's */
    bool listed;        /* in the table: GET finds it */
    bool running;
    int64_t start_ms, expire_ms, done_ms; /* epoch milliseconds */
    fds_resp resp;      /* the search's answer, once done */
    /* the search: the submit's path, body and parameters, copied */
    fds_req req;
    char *segs[FDS_PATH_SEGMENTS_MAX];
    char *body, *url;
    char *kv[2 * FDS_ASYNC_KV_MAX];
} asearch;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a search ended, or stop */
    asearch *list;
    unsigned running, stored;
    uint64_t next_no;
    pthread_t reaper;
    bool started, stop;
} A = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static int64_t epoch_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void as_free(asearch *a)
{
    for (unsigned i = 0; i < a->req.nseg; i++)
        free(a->segs[i]);
    for (unsigned i = 0; i < 2 * a->req.nkv; i++)
        free(a->kv[i]);
    for (unsigned i = 0; i < a->req.nparams; i++)
        free(a->req.params[i]);
    free(a->req.params);
    free(a->body);
    free(a->url);
    free(a->resp.body);
    free(a);
}

/* Drop one reference (A.mu held). */
static void unref_locked(asearch *a)
{
    if (--a->refs == 0)
        as_free(a);
}

/* Take `a` off the table (A.mu held). */
static void unlist_locked(asearch *a)
{
    for (asearch **p = &A.list; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            a->listed = false;
            A.stored--;
            unref_locked(a);
            return;
        }
}

/* Forget the expired searches (A.mu held). */
static void reap_locked(void)
{
    int64_t now = epoch_ms();
    for (asearch **p = &A.list; *p;) {
        asearch *a = *p;
        if (a->expire_ms > now) {
            p = &a->next;
            continue;
        }
        *p = a->next;
        a->listed = false;
        A.stored--;
        unref_locked(a);
    }
}

static void *reaper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&A.mu);
    while (!A.stop) {
        struct timespec t;
        fds_abstime_in_ms(&t, FDS_ASYNC_REAP_INTERVAL_MS);
        pthread_cond_timedwait(&A.cv, &A.mu, &t);
        reap_locked();
    }
    pthread_mutex_unlock(&A.mu);
    return NULL;
}

int fds__async_start(void)
{
    pthread_mutex_lock(&A.mu);
    A.stop = false;
    int rc = 0;
    if (!A.started) {
        if (pthread_create(&A.reaper, NULL, reaper_main, NULL))
            rc = FDS_ENOMEM;
        else
            A.started = true;
    }
    pthread_mutex_unlock(&A.mu);
    return rc;
}

void fds__async_stop(void)
{
    pthread_mutex_lock(&A.mu);
    if (!A.started) {
        pthread_mutex_unlock(&A.mu);
        return;
    }
    A.stop = true;
    pthread_cond_broadcast(&A.cv);
    while (A.running) /* their threads use the store */
        pthread_cond_wait(&A.cv, &A.mu);
    while (A.list)
        unlist_locked(A.list);
    pthread_mutex_unlock(&A.mu);
    pthread_join(A.reaper, NULL);
    pthread_mutex_lock(&A.mu);
    A.started = false;
    pthread_mutex_unlock(&A.mu);
}

/* The search's thread. */
static void *search_main(void *arg)
{
    asearch *a = arg;
    fds_resp o = {0};
    a->req.start_us = (long long)fds_mono_us();
    fds__h_search(&a->req, &o, false);
    pthread_mutex_lock(&A.mu);
    a->resp = o;
    a->running = false;
    a->done_ms = epoch_ms();
    A.running--;
    pthread_cond_broadcast(&A.cv);
    unref_locked(a);
    pthread_mutex_unlock(&A.mu);
    return NULL;
}

/* A time value parameter in milliseconds into *ms (left alone when the
 * parameter is absent); false with a 400 in `o`. */
static bool time_param(fds_req *r, fds_resp *o, const char *name, int64_t *ms)
{
    const char *v = fds__req_param(r, name);
    int64_t ns;
    if (!v)
        return true;
    if (!strcmp(v, "0")) { /* TimeValue takes a bare 0 */
        *ms = 0;
        return true;
    }
    if (!fds_time_value_ns(v, false, &ns)) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "failed to parse setting [%s] with value [%s] as a time "
                        "value: unit is missing or unrecognized", name, v);
        return false;
    }
    *ms = ns / 1000000;
    return true;
}

static bool keep_alive_param(fds_req *r, fds_resp *o, int64_t *ms)
{
    if (!time_param(r, o, "keep_alive", ms))
        return false;
    if (*ms < FDS_ASYNC_KEEP_ALIVE_MIN_MS) {
        fds__resp_errorf(o, 400, "action_request_validation_exception",
                        "Validation Failed: 1: [keep_alive] must be greater or "
                        "equals than 1 second;");
        return false;
    }
    return true;
}

static bool in_list(const char *const *l, size_t n, const char *k)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(l[i], k))
            return true;
    return false;
}

/* Gathers the submit's URL parameters into the search's. */
typedef struct kv_fill {
    asearch *a;
    bool full, oom;
} kv_fill;

static enum MHD_Result kv_add(void *cls, enum MHD_ValueKind kind,
                              const char *key, const char *value)
{
    (void)kind;
    kv_fill *f = cls;
    asearch *a = f->a;
    if (in_list(SUBMIT_PARAMS, sizeof SUBMIT_PARAMS / sizeof *SUBMIT_PARAMS, key) ||
        in_list(OUTER_PARAMS, sizeof OUTER_PARAMS / sizeof *OUTER_PARAMS, key))
        return MHD_YES;
    if (a->req.nkv == FDS_ASYNC_KV_MAX) {
        f->full = true;
        return MHD_NO;
    }
    char *k = fds__param_decode(key, strlen(key));
    char *v = fds__param_decode(value ? value : "", value ? strlen(value) : 0);
    if (!k || !v) {
        free(k);
        free(v);
        f->oom = true;
        return MHD_NO;
    }
    a->kv[2 * a->req.nkv] = k;
    a->kv[2 * a->req.nkv + 1] = v;
    a->req.nkv++;
    return MHD_YES;
}

/* A new search copied from the submit `r`: NULL with an error in `o`. */
static asearch *as_new(fds_req *r, fds_resp *o)
{
    asearch *a = calloc(1, sizeof *a);
    if (!a)
        goto oom;
    a->refs = 1;
    a->body = malloc(r->body_len + 1);
    a->url = strdup(r->url ? r->url : "");
    if (!a->body || !a->url)
        goto oom;
    if (r->body_len)
        memcpy(a->body, r->body, r->body_len);
    a->body[r->body_len] = 0;
    a->req = (fds_req){.store = r->store, .method = "POST", .url = a->url,
                       .body = a->body, .body_len = r->body_len,
                       .kv = (const char *const *)a->kv};
    for (unsigned i = 0; i < r->nseg; i++) {
        if (!(a->segs[i] = strdup(r->seg[i])))
            goto oom;
        a->req.seg[i] = a->segs[i];
        a->req.nseg = i + 1;
    }
    kv_fill f = {a, false, false};
    if (r->conn)
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, kv_add, &f);
    if (f.oom)
        goto oom;
    if (f.full) {
        as_free(a);
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "more than %d URL parameters", FDS_ASYNC_KV_MAX);
        return NULL;
    }
    return a;
oom:
    if (a)
        as_free(a);
    fds__resp_errorf(o, 500, "exception", "out of memory");
    return NULL;
}

static void make_id(char *out)
{
    static const char B64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t b[FDS_ASYNC_ID_BYTES];
    uint64_t no = A.next_no++;
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(no >> (8 * i));
    size_t got = 0;
    while (got < sizeof b - 8) {
        ssize_t k = getrandom(b + 8 + got, sizeof b - 8 - got, 0);
        if (k < 0 && errno != EINTR)
            break;
        if (k > 0)
            got += (size_t)k;
    }
    if (got < sizeof b - 8) /* no entropy source: still unique by number */
        for (size_t i = 8 + got; i < sizeof b; i++)
            b[i] = (uint8_t)(epoch_ms() >> (i % 8));
    size_t k = 0;
    for (size_t i = 0; i < sizeof b; i += 3) { /* 18 bytes: whole groups */
        uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
        out[k++] = B64[v >> 18 & 63];
        out[k++] = B64[v >> 12 & 63];
        out[k++] = B64[v >> 6 & 63];
        out[k++] = B64[v & 63];
    }
    out[k] = 0;
}

/* The top-level member `key` of the search's answer as JSON text appended
 * to `b` (`dflt` when the answer has none). */
static void put_member(fds_strbuf *b, const asearch *a, const char *key,
                       const char *dflt)
{
    size_t vs, ve;
    if (a->resp.body && !fds__json_member(a->resp.body, a->resp.len, key, &vs, &ve))
        fds_strbuf_put(b, a->resp.body + vs, ve - vs);
    else
        fds_strbuf_puts(b, dflt);
}

#define NO_SHARDS "{\"total\":0,\"successful\":0,\"skipped\":0,\"failed\":0}"

/* Answer `a` (A.mu held): the async search answer, or with `status_only`
 * the status one; `with_id`: the search is stored. */
static void answer_locked(fds_resp *o, const asearch *a, bool with_id,
                          bool status_only)
{
    fds_strbuf b = {0};
    bool failed = !a->running && a->resp.status != 200;
    fds_strbuf_puts(&b, "{");
    if (with_id)
        fds_strbuf_printf(&b, "\"id\":\"%s\",", a->id);
    fds_strbuf_printf(&b, "\"is_partial\":%s,\"is_running\":%s,"
                      "\"start_time_in_millis\":%lld,"
                      "\"expiration_time_in_millis\":%lld",
                      a->running || failed ? "true" : "false",
                      a->running ? "true" : "false", (long long)a->start_ms,
                      (long long)a->expire_ms);
    if (!a->running)
        fds_strbuf_printf(&b, ",\"completion_time_in_millis\":%lld",
                          (long long)a->done_ms);
    if (status_only) {
        fds_strbuf_puts(&b, ",\"_shards\":");
        put_member(&b, a, "_shards", NO_SHARDS);
        if (!a->running)
            fds_strbuf_printf(&b, ",\"completion_status\":%d", a->resp.status);
    } else if (a->running) {
        fds_strbuf_printf(&b, ",\"response\":{\"took\":%lld,\"timed_out\":false,"
                          "\"terminated_early\":false,\"num_reduce_phases\":0,"
                          "\"_shards\":" NO_SHARDS ",\"hits\":{\"total\":"
                          "{\"value\":0,\"relation\":\"gte\"},\"max_score\":null,"
                          "\"hits\":[]}}",
                          (long long)(epoch_ms() - a->start_ms));
    } else if (failed) {
        fds_strbuf_puts(&b, ",\"error\":");
        put_member(&b, a, "error", "{}");
    } else {
        fds_strbuf_puts(&b, ",\"response\":");
        fds_strbuf_put(&b, a->resp.body, a->resp.len);
    }
    fds_strbuf_puts(&b, "}");
    if (b.oom) {
        free(b.p);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    /* the status answer is 200 whatever the search's */
    fds__resp_raw(o, failed && !status_only ? a->resp.status : 200, b.p, b.len,
                 NULL);
}

/* Wait (A.mu held) up to `ms` for `a` to end. */
static void wait_locked(asearch *a, int64_t ms)
{
    struct timespec until;
    fds_abstime_in_ms(&until, ms);
    int rc = 0;
    while (a->running && !A.stop && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&A.cv, &A.mu, &until);
}

void fds__h_async_submit(fds_req *r, fds_resp *o)
{
    /* the search's parameters and the submit's, checked before it runs */
    const char *allowed[FDS_ASYNC_KV_MAX];
    size_t na = 0;
    for (const char *const *p = fds__search_url_params + 1;
         *p && na < FDS_ASYNC_KV_MAX - 4; p++)
        allowed[na++] = *p; /* all but "scroll" */
    for (size_t i = 0; i < sizeof SUBMIT_PARAMS / sizeof *SUBMIT_PARAMS; i++)
        allowed[na++] = SUBMIT_PARAMS[i];
    allowed[na] = NULL;
    if (!fds__req_check_params(r, o, allowed))
        return;
    int64_t wait_ms = FDS_ASYNC_WAIT_DEFAULT_MS;
    int64_t keep_ms = FDS_ASYNC_KEEP_ALIVE_DEFAULT_MS;
    bool keep = fds__req_param_bool(r, "keep_on_completion", false);
    if (!time_param(r, o, "wait_for_completion_timeout", &wait_ms) ||
        !keep_alive_param(r, o, &keep_ms))
        return;
    asearch *a = as_new(r, o);
    if (!a)
        return;
    pthread_mutex_lock(&A.mu);
    reap_locked();
    if (A.running >= FDS_ASYNC_RUNNING_MAX || A.stored >= FDS_ASYNC_STORED_MAX) {
        pthread_mutex_unlock(&A.mu);
        as_free(a);
        return fds__resp_errorf(o, 429, "es_rejected_execution_exception",
                               "rejected execution of async search: %d running "
                               "or %d stored at most", FDS_ASYNC_RUNNING_MAX,
                               FDS_ASYNC_STORED_MAX);
    }
    make_id(a->id);
    a->start_ms = epoch_ms();
    a->expire_ms = a->start_ms + keep_ms;
    a->running = true;
    a->refs = 3; /* the table's, the thread's, ours */
    a->listed = true;
    a->next = A.list;
    A.list = a;
    A.stored++;
    A.running++;
    pthread_attr_t at;
    pthread_t th;
    bool ok = !pthread_attr_init(&at);
    ok = ok && !pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    ok = ok && !pthread_create(&th, &at, search_main, a);
    pthread_attr_destroy(&at);
    if (!ok) {
        A.running--;
        a->refs--; /* no thread */
        unlist_locked(a);
        unref_locked(a);
        pthread_mutex_unlock(&A.mu);
        return fds__resp_errorf(o, 429, "es_rejected_execution_exception",
                               "rejected execution of async search: no thread");
    }
    wait_locked(a, wait_ms);
    bool stored = a->running || keep;
    answer_locked(o, a, stored, false);
    if (!stored && a->listed)
        unlist_locked(a);
    unref_locked(a);
    pthread_mutex_unlock(&A.mu);
}

/* The stored search of path segment `i`, with a reference (A.mu held);
 * NULL with a 404 in `o`. */
static asearch *find_locked(fds_req *r, unsigned i, fds_resp *o)
{
    reap_locked();
    for (asearch *a = A.list; a; a = a->next)
        if (!strcmp(a->id, r->seg[i])) {
            a->refs++;
            return a;
        }
    fds__resp_errorf(o, 404, "resource_not_found_exception", "%s", r->seg[i]);
    return NULL;
}

enum { BY_ID_GET, BY_ID_STATUS, BY_ID_DELETE };

/* GET, status or DELETE of the stored search named by path segment
 * `seg`; a GET waits up to wait_ms and sets the expiration to now +
 * keep_ms (when >= 0). */
static void by_id(fds_req *r, fds_resp *o, unsigned seg, int what,
                  int64_t wait_ms, int64_t keep_ms)
{
    pthread_mutex_lock(&A.mu);
    asearch *a = find_locked(r, seg, o);
    if (!a) {
        pthread_mutex_unlock(&A.mu);
        return;
    }
    if (keep_ms >= 0)
        a->expire_ms = epoch_ms() + keep_ms;
    if (wait_ms > 0)
        wait_locked(a, wait_ms);
    if (what == BY_ID_DELETE && a->listed)
        unlist_locked(a);
    else if (what != BY_ID_DELETE)
        answer_locked(o, a, true, what == BY_ID_STATUS);
    unref_locked(a);
    pthread_mutex_unlock(&A.mu);
    if (what == BY_ID_DELETE) {
        static const char ACK[] = "{\"acknowledged\":true}";
        char *b = strdup(ACK);
        if (!b)
            return fds__resp_errorf(o, 500, "exception", "out of memory");
        fds__resp_raw(o, 200, b, sizeof ACK - 1, NULL);
    }
}

void fds__h_async_get(fds_req *r, fds_resp *o)
{
    if (!fds__req_check_params(r, o, GET_PARAMS))
        return;
    int64_t wait_ms = 0, keep_ms = -1;
    if (!time_param(r, o, "wait_for_completion_timeout", &wait_ms) ||
        (fds__req_param(r, "keep_alive") && !keep_alive_param(r, o, &keep_ms)))
        return;
    by_id(r, o, 1, BY_ID_GET, wait_ms, keep_ms);
}

void fds__h_async_status(fds_req *r, fds_resp *o)
{
    by_id(r, o, 2, BY_ID_STATUS, 0, -1);
}

void fds__h_async_delete(fds_req *r, fds_resp *o)
{
    by_id(r, o, 1, BY_ID_DELETE, 0, -1);
}
