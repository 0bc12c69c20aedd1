/*
 * testserver.c: a TEST FIXTURE, not part of fieldstore -- a tiny libmicrohttpd
 * server with controllable misbehaviour, used to check that loadgen measures
 * what really happens.
 *
 * Modes (the delay / stall / error apply to "load" requests: every
 * _search except the match_all sampling request, and GET /):
 *   --mode delay --delay-ms D   answer D ms after the request arrived
 *   --mode stall --stall-at-ms T --stall-ms S
 *                               from T ms after the first load request, the
 *                               whole server stalls once for S ms: every load
 *                               request being handled or arriving in that
 *                               window is answered only when it ends (like a
 *                               stop-the-world pause)
 *   --mode error                answer every request with HTTP 500
 *   --mode short                load requests get a 200 whose Content-Length
 *                               promises 1000 bytes, then only 100 bytes and
 *                               a closed connection (a truncated response)
 * Options: --port P (0 = pick a free port; the chosen port is printed as
 * "port N" on stdout), --chunked (search answers use chunked transfer
 * coding), --close (every answer says "Connection: close" and the server
 * closes the connection after it), --timers (answer _stats/search), --pool N (N polling threads instead of a thread per connection).
 *
 * Plausible, fixed answers for the endpoints loadgen reads, for tests only:
 *   POST /{index}/_search with match_all -> 200 generated nginx-like docs
 *   POST /{index}/_search otherwise      -> 10 small hits
 *   GET /{index}/_settings   codec "ZSTD" if the index name contains "zstd",
 *                            "lucene_best_compression" if it contains
 *                            "lucene", else "best_compression"
 *   GET /{index}/_stats/store  _all.primaries.store.size_in_bytes: 800000
 *                            (zstd), 1200000 (lucene), else 1000000
 *   GET /{index}/_stats/search  only with --timers: indices.{index}.total.
 *                            search.query_time_in_micros = 700 and
 *                            fetch_time_in_micros = 300 per load search so
 *                            far (a fetch share of exactly 0.3)
 *   GET /_cat/indices/{index}  [{"store.size": the size above in kb}]
 *   GET /_nodes/stats, /_nodes/_local/stats/os,process
 *                            nodes.test-node.process.id = this process's pid,
 *                            process.cpu.total_in_millis its getrusage() time,
 *                            process.cpu.percent and os.cpu.percent 0
 *   GET /_nodes/_local/os    nodes.test-node.os.available_processors = 1
 *   GET /_cat/nodes          one row of load_1m, load_5m, load_15m, ram.percent
 *   GET /                    "ok"
 */
#include <microhttpd.h>

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TS_MAX_BODY (64 * 1024)
#define TS_SAMPLE_DOCS 200
#define TS_QUERY_US 700 /* query phase time per load search in _stats/search */
#define TS_FETCH_US 300 /* fetch phase time per load search */

enum { M_DELAY, M_STALL, M_ERROR, M_SHORT };

static int g_mode = M_DELAY;
static long g_delay_ms = 0;
static long g_stall_at_ms = 1000, g_stall_ms = 1000;
static int g_chunked = 0;
static int g_timers = 0;
static _Atomic long long g_searches; /* load searches answered, for _stats/search */
static int g_close = 0; /* --close: "Connection: close" on every answer */
static _Atomic long long g_first_load_ns = 0;
static _Atomic long long g_stall_until_ns = 0;
static _Atomic int g_stalled = 0;
static char *g_sample_json, *g_hits_json;
static _Atomic unsigned long long g_served; /* responses queued, reported on exit */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleep until TS_SPIN_NS before `t`, then spin: the kernel timer alone
 * overshoots by ~0.1 ms on virtual machines, and the fixture's job is to
 * answer at the stated moment, not to add its own jitter. */
#define TS_SPIN_NS 300000LL
static void sleep_until_ns(long long t)
{
    long long early = t - TS_SPIN_NS;
    struct timespec ts = {(time_t)(early / 1000000000LL), (long)(early % 1000000000LL)};
    if (early > now_ns())
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    while (now_ns() < t)
        ;
}

typedef struct req {
    char *body;
    size_t len;
    long long arrived;
} req;

static const char *services[] = {"product", "search", "cart", "static", "api", "image"};
static const char *methods[] = {"GET", "GET", "GET", "POST", "HEAD"};
static const char *codes[] = {"-", "-", "-", "-", "E404", "E500"};

static void build_fixtures(void)
{
    size_t cap = 256 * TS_SAMPLE_DOCS + 256;
    g_sample_json = malloc(cap);
    size_t n = (size_t)snprintf(g_sample_json, cap,
                                "{\"took\":1,\"timed_out\":false,\"hits\":{\"total\":{\"value\":%d,"
                                "\"relation\":\"eq\"},\"max_score\":1.0,\"hits\":[",
                                TS_SAMPLE_DOCS);
    for (int i = 0; i < TS_SAMPLE_DOCS; i++) {
        const char *svc = services[i % 6];
        n += (size_t)snprintf(g_sample_json + n, cap - n,
                              "%s{\"_index\":\"x\",\"_id\":\"%d\",\"_score\":1.0,\"_source\":{"
                              "\"service_name\":\"%s\",\"method\":\"%s\",\"error_code\":\"%s\","
                              "\"status\":%d,\"url\":\"/%s/item-%d?page=%d\"}}",
                              i ? "," : "", i, svc, methods[i % 5], codes[i % 6],
                              i % 6 == 5 ? 500 : 200, svc, i * 7 % 53, i % 4);
    }
    snprintf(g_sample_json + n, cap - n, "]}}");
    cap = 4096;
    g_hits_json = malloc(cap);
    n = (size_t)snprintf(g_hits_json, cap,
                         "{\"took\":1,\"timed_out\":false,\"hits\":{\"total\":{\"value\":10,"
                         "\"relation\":\"eq\"},\"max_score\":1.0,\"hits\":[");
    for (int i = 0; i < 10; i++)
        n += (size_t)snprintf(g_hits_json + n, cap - n,
                              "%s{\"_id\":\"%d\",\"_score\":1.0,\"_source\":{\"service_name\":"
                              "\"product\",\"method\":\"GET\",\"url\":\"/product/item-%d\"}}",
                              i ? "," : "", i, i);
    snprintf(g_hits_json + n, cap - n, "]}}");
}

typedef struct chunk_src {
    const char *data;
    size_t len;
} chunk_src;

/* hand out the body in pieces of at most 100 bytes, so it really is chunked */
static ssize_t chunk_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    chunk_src *s = cls;
    if (pos >= s->len)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = s->len - (size_t)pos;
    if (n > 100)
        n = 100;
    if (n > max)
        n = max;
    memcpy(buf, s->data + pos, n);
    return (ssize_t)n;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *text,
                             int chunked)
{
    struct MHD_Response *r;
    if (chunked) {
        chunk_src *s = malloc(sizeof *s);
        s->data = text;
        s->len = strlen(text);
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, chunk_cb, s, free);
    } else {
        r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (g_close)
        MHD_add_response_header(r, "Connection", "close");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    atomic_fetch_add(&g_served, 1);
    MHD_destroy_response(r);
    return ret;
}

#define TS_SHORT_PROMISED 1000 /* bytes the truncated response announces */
#define TS_SHORT_SENT 100      /* bytes it really sends before closing */

static ssize_t short_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    if (pos >= TS_SHORT_SENT)
        return MHD_CONTENT_READER_END_WITH_ERROR; /* MHD closes the connection */
    size_t n = TS_SHORT_SENT - (size_t)pos;
    if (n > max)
        n = max;
    memset(buf, 'x', n);
    return (ssize_t)n;
}

static enum MHD_Result reply_short(struct MHD_Connection *c)
{
    struct MHD_Response *r =
        MHD_create_response_from_callback(TS_SHORT_PROMISED, 1024, short_cb, NULL, NULL);
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    atomic_fetch_add(&g_served, 1);
    MHD_destroy_response(r);
    return ret;
}

/* the fixture's store size of the index named in url */
static long fixture_size(const char *url)
{
    return strstr(url, "zstd") ? 800000 : strstr(url, "lucene") ? 1200000 : 1000000;
}

static void load_behaviour(const req *q)
{
    long long now = now_ns();
    long long expected = 0;
    atomic_compare_exchange_strong(&g_first_load_ns, &expected, now);
    if (g_mode == M_DELAY && g_delay_ms > 0) {
        sleep_until_ns(q->arrived + g_delay_ms * 1000000LL);
    } else if (g_mode == M_STALL) {
        long long first = atomic_load(&g_first_load_ns);
        if (!atomic_load(&g_stalled) && now - first >= g_stall_at_ms * 1000000LL) {
            int e = 0;
            if (atomic_compare_exchange_strong(&g_stalled, &e, 1))
                atomic_store(&g_stall_until_ns, now + g_stall_ms * 1000000LL);
        }
        long long until = atomic_load(&g_stall_until_ns);
        if (until && now < until)
            sleep_until_ns(until);
    }
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    req *q = *con_cls;
    if (!q) {
        q = calloc(1, sizeof *q);
        q->arrived = now_ns();
        *con_cls = q;
        return MHD_YES;
    }
    if (*upload_size) {
        if (q->len + *upload_size <= TS_MAX_BODY) {
            q->body = realloc(q->body, q->len + *upload_size + 1);
            memcpy(q->body + q->len, upload, *upload_size);
            q->len += *upload_size;
            q->body[q->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    q->arrived = now_ns(); /* the whole request is here */
    if (g_mode == M_ERROR)
        return reply(c, 500,
                     "{\"error\":{\"type\":\"test_fixture_exception\",\"reason\":\"always 500\"},"
                     "\"status\":500}",
                     0);
    char buf[512];
    const char *us;
    if (!strcmp(url, "/_nodes/stats") || !strcmp(url, "/_nodes/_local/stats/os,process")) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        long long ms = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
        snprintf(buf, sizeof buf,
                 "{\"cluster_name\":\"test\",\"nodes\":{\"test-node\":{\"name\":\"test\","
                 "\"os\":{\"cpu\":{\"percent\":0}},"
                 "\"process\":{\"id\":%d,\"cpu\":{\"percent\":0,\"total_in_millis\":%lld}}}}}",
                 (int)getpid(), ms);
        return reply(c, 200, buf, 0);
    }
    if (!strcmp(url, "/_nodes/_local/os"))
        return reply(c, 200,
                     "{\"nodes\":{\"test-node\":{\"name\":\"test\","
                     "\"os\":{\"available_processors\":1}}}}",
                     0);
    if (!strcmp(url, "/_cat/nodes"))
        return reply(c, 200,
                     "[{\"load_1m\":\"0.10\",\"load_5m\":\"0.20\",\"load_15m\":\"0.30\","
                     "\"ram.percent\":\"42\"}]",
                     0);
    if ((us = strstr(url, "/_settings")) && us[10] == '\0' && us > url + 1) {
        int n = (int)(us - url - 1);
        snprintf(buf, sizeof buf,
                 "{\"%.*s\":{\"settings\":{\"index\":{\"codec\":\"%s\",\"number_of_shards\":\"1\","
                 "\"provided_name\":\"%.*s\"}}}}",
                 n, url + 1,
                 strstr(url, "zstd")     ? "ZSTD"
                 : strstr(url, "lucene") ? "lucene_best_compression"
                                         : "best_compression",
                 n, url + 1);
        return reply(c, 200, buf, 0);
    }
    if ((us = strstr(url, "/_stats/search")) && us > url + 1 && g_timers) {
        int n = (int)(us - url - 1);
        long long k = atomic_load(&g_searches);
        snprintf(buf, sizeof buf,
                 "{\"indices\":{\"%.*s\":{\"total\":{\"search\":{\"query_total\":%lld,"
                 "\"query_time_in_micros\":%lld,\"fetch_total\":%lld,"
                 "\"fetch_time_in_micros\":%lld}}}}}",
                 n, url + 1, k, k * TS_QUERY_US, k, k * TS_FETCH_US);
        return reply(c, 200, buf, 0);
    }
    if (!strncmp(url, "/_cat/indices/", 14) && url[14]) {
        snprintf(buf, sizeof buf, "[{\"store.size\":\"%.1fkb\"}]", fixture_size(url) / 1024.0);
        return reply(c, 200, buf, 0);
    }
    if ((us = strstr(url, "/_stats/store")) && us > url + 1) {
        long size = fixture_size(url);
        snprintf(buf, sizeof buf,
                 "{\"_all\":{\"primaries\":{\"store\":{\"size_in_bytes\":%ld}}}}", size);
        return reply(c, 200, buf, 0);
    }
    if ((us = strstr(url, "/_search")) && us[8] == '\0') {
        if (q->body && strstr(q->body, "match_all"))
            return reply(c, 200, g_sample_json, g_chunked);
        load_behaviour(q);
        atomic_fetch_add(&g_searches, 1);
        if (g_mode == M_SHORT)
            return reply_short(c);
        return reply(c, 200, g_hits_json, g_chunked);
    }
    if (!strcmp(url, "/")) {
        load_behaviour(q);
        return reply(c, 200, "ok", 0);
    }
    (void)method;
    (void)version;
    (void)cls;
    return reply(c, 404, "{\"error\":\"no such fixture endpoint\",\"status\":404}", 0);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    req *q = *con_cls;
    if (q) {
        free(q->body);
        free(q);
    }
    *con_cls = NULL;
}

static volatile sig_atomic_t g_quit;
static void on_term(int s)
{
    (void)s;
    g_quit = 1;
}

int main(int argc, char **argv)
{
    int port = 0, pool = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--mode") && v) {
            g_mode = !strcmp(v, "stall")   ? M_STALL
                     : !strcmp(v, "error") ? M_ERROR
                     : !strcmp(v, "short") ? M_SHORT
                                           : M_DELAY;
            i++;
        } else if (!strcmp(a, "--delay-ms") && v) {
            g_delay_ms = atol(v);
            i++;
        } else if (!strcmp(a, "--stall-at-ms") && v) {
            g_stall_at_ms = atol(v);
            i++;
        } else if (!strcmp(a, "--stall-ms") && v) {
            g_stall_ms = atol(v);
            i++;
        } else if (!strcmp(a, "--port") && v) {
            port = atoi(v);
            i++;
        } else if (!strcmp(a, "--pool") && v) {
            pool = atoi(v);
            i++;
        } else if (!strcmp(a, "--close")) {
            g_close = 1;
        } else if (!strcmp(a, "--chunked")) {
            g_chunked = 1;
        } else if (!strcmp(a, "--timers")) {
            g_timers = 1;
        } else {
            fprintf(stderr, "testserver: unknown argument %s\n", a);
            return 2;
        }
    }
    build_fixtures();
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, 10000, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, 120, NULL},
        {pool > 0 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, pool, NULL},
        {MHD_OPTION_END, 0, NULL}};
    if (pool > 0)
        flags |= MHD_USE_EPOLL;
    else
        flags |= MHD_USE_THREAD_PER_CONNECTION;
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)port);
    sin.sin_addr.s_addr = htonl(0x7f000001);
    struct MHD_Daemon *d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handler, NULL,
                                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
                                            MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "testserver: cannot start on port %d\n", port);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("port %u\n", info ? (unsigned)info->port : (unsigned)port);
    fflush(stdout);
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    while (!g_quit)
        pause();
    MHD_stop_daemon(d);
    fprintf(stderr, "testserver: served %llu responses\n", (unsigned long long)atomic_load(&g_served));
    return 0;
}
