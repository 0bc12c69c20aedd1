/*
 * fds_lgdash.c: the dashboard workload of loadgen -- what Kibana 8 and
 * Grafana's Elasticsearch data source send while a user looks at an access
 * log, instead of the article's single-field match queries.
 *
 * Why it exists: a dashboard's requests are time-windowed filters, sorts on
 * @timestamp and aggregations, not scored matches; a codec A/B or a speed-up
 * measured on the match mix says little about them.  Time windows are drawn
 * uniformly over the index's own time range, read once with min/max
 * aggregations on @timestamp, so a window's cost is what a user looking at
 * any period pays.  Values are sampled from FDS_LGDASH_SLICES slices of that
 * range (FDS_LGDASH_SLICES range queries, together `sample_docs` documents),
 * with repetition, so frequent values are queried as often as they occur.
 *
 * The classes, their weights (share of the pool, out of 100) and the shape
 * of each body (the application that sends it in brackets):
 *
 *  discover (25)            [Kibana Discover, document table]
 *    size HITS (500), sort @timestamp desc (format
 *    strict_date_optional_time, unmapped_type boolean), runtime_mappings {},
 *    track_total_hits, _source false + fields [{"field":"*",
 *    "include_unmapped":"true"}], bool.filter: a match on a sampled value of
 *    service_name/method/status/error_code and a range on @timestamp
 *    (format strict_date_optional_time, gte/lte a 15-minute window).
 *  discover_histogram (25)  [Kibana Discover, hits over time]
 *    size 0, the same filter, date_histogram on @timestamp fixed_interval
 *    30s, time_zone one of FDS_LGDASH_ZONES, min_doc_count 1,
 *    extended_bounds = the window.
 *  lens_top_values (15)     [Kibana Lens, "top values of url"]
 *    size 0, a one-hour window and (every other body) status >= 400 or a
 *    match on a sampled service_name; terms on url.keyword, size 5, 10 or 20,
 *    order _count desc, shard_size 25, with an avg of body_bytes_sent.
 *  time_series (15)         [Grafana, time series panel]
 *    size 0, a one-hour window in epoch_millis, date_histogram fixed_interval
 *    1m, min_doc_count 0, extended_bounds, format epoch_millis, under it
 *    (every other body) terms on status (size 10, order _key desc) or
 *    percentiles 25/50/75/95/99 of request_time.
 *  phrase (10)              [Kibana Discover, a quoted search]
 *    size 10, match_phrase on user_agent with 2 or 3 consecutive words
 *    (letters only, 2+ of them) of a sampled user_agent.
 *  lens_metric (10)         [Kibana Lens, metric]
 *    size 0, track_total_hits, a one-hour window, cardinality of
 *    remote_addr or (every other body) avg of body_bytes_sent.
 *
 * Every choice is drawn with splitmix64 from --seed: the same seed against
 * the same index gives the same bodies.
 */
#include "fds_lgwork.h"

#include "fds_error.h"
#include "fds_lgworkint.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FDS_LGDASH_SLICES 10                 /* sampling queries over the time range */
#define FDS_LGDASH_DISCOVER_MS (15 * 60000)  /* Kibana's default "Last 15 minutes" */
#define FDS_LGDASH_PANEL_MS (60 * 60000)     /* the one-hour window of the panels */
#define FDS_LGDASH_PHRASE_HITS 10
#define FDS_LGDASH_PHRASE_MAX 3              /* words in a phrase: 2..3 */
#define FDS_LGDASH_BODY 4096                 /* bytes of one body */
#define FDS_LGDASH_ISO 96                    /* bytes of a date as text (any int fields) */
#define FDS_LGDASH_RANGE 400                 /* bytes of a window filter */
#define FDS_LGDASH_FILTER_FIELDS "service_name,method,status,error_code"
#define FDS_LGDASH_NFILTER 4

static const char *const FDS_LGDASH_ZONES[] = {"UTC", "Asia/Tehran", "Europe/Berlin"};

enum {
    DASH_DISCOVER,
    DASH_HISTOGRAM,
    DASH_TOP_VALUES,
    DASH_TIME_SERIES,
    DASH_PHRASE,
    DASH_METRIC,
    DASH_NCLASSES
};

/* A registry of the classes: name, weight out of 100 (see the top). */
static const struct dash_class {
    const char *name;
    int weight;
} dash_classes[DASH_NCLASSES] = {
    [DASH_DISCOVER] = {"discover", 25},       [DASH_HISTOGRAM] = {"discover_histogram", 25},
    [DASH_TOP_VALUES] = {"lens_top_values", 15}, [DASH_TIME_SERIES] = {"time_series", 15},
    [DASH_PHRASE] = {"phrase", 10},           [DASH_METRIC] = {"lens_metric", 10},
};

/* What the bodies are made from. */
typedef struct dash_material {
    double min_ms, max_ms;          /* @timestamp range of the index, epoch ms */
    char *filter_names[FDS_LGDASH_NFILTER];
    fds__vlist filter[FDS_LGDASH_NFILTER]; /* sampled values per filter field */
    fds__vlist phrases;             /* 2-3 word phrases of user_agent */
    fds__vlist services;            /* sampled service_name values */
    size_t ndocs;                   /* documents sampled */
} dash_material;

/* The @timestamp range of the index from min/max aggregations; 0, or an
 * FDS_E* code with a sentence in `msg` (no @timestamp values: FDS_ENOTFOUND). */
static int time_range(const fds_httpc_target *t,
                      const char *path, dash_material *m, char *msg, size_t msglen)
{
    static const char body[] = "{\"size\":0,\"track_total_hits\":false,\"aggs\":{"
                               "\"min_ts\":{\"min\":{\"field\":\"@timestamp\"}},"
                               "\"max_ts\":{\"max\":{\"field\":\"@timestamp\"}}}}";
    cJSON *root;
    int rc = fds__lgwork_search(t, path, body, "reading the time range",
                                &root, msg, msglen);
    if (rc)
        return rc;
    const cJSON *aggs = cJSON_GetObjectItemCaseSensitive(root, "aggregations");
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(aggs, "min_ts"), "value");
    const cJSON *hi = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(aggs, "max_ts"), "value");
    if (!cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) || hi->valuedouble < lo->valuedouble) {
        snprintf(msg, msglen, "the dashboard workload needs @timestamp values; %s has none",
                 path);
        cJSON_Delete(root);
        return FDS_ENOTFOUND;
    }
    m->min_ms = floor(lo->valuedouble);
    m->max_ms = floor(hi->valuedouble);
    cJSON_Delete(root);
    return 0;
}

/* The words of a user agent a phrase may use: maximal runs of letters,
 * digits, '.', '_' and '\'' (so "5.0" or "don't" stay one token, as the
 * standard tokenizer keeps them); a phrase is 2..FDS_LGDASH_PHRASE_MAX
 * consecutive tokens of 2+ letters only.  Adds one phrase per starting
 * token that begins one (the length drawn from *st).  0 or FDS_ENOMEM. */
static int add_phrases(fds__vlist *out, const char *ua, uint64_t *st)
{
    enum { MAXTOK = 64 };
    const char *tb[MAXTOK];
    size_t tl[MAXTOK];
    int alpha[MAXTOK], nt = 0;
    for (const char *p = ua; *p && nt < MAXTOK;) {
        while (*p && !(isalnum((unsigned char)*p) || *p == '_' || *p == '\''))
            p++;
        const char *b = p;
        int letters = 1;
        while (*p && (isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '\'')) {
            letters &= isalpha((unsigned char)*p) != 0;
            p++;
        }
        if (p > b) {
            tb[nt] = b;
            tl[nt] = (size_t)(p - b);
            alpha[nt++] = letters && p - b >= 2;
        }
    }
    for (int i = 0; i + 1 < nt; i++) {
        int run = 0;
        while (i + run < nt && run < FDS_LGDASH_PHRASE_MAX && alpha[i + run])
            run++;
        if (run < 2)
            continue;
        int len = 2 + (int)(fds__lgwork_rand(st) % (uint64_t)(run - 1));
        char buf[512];
        size_t n = 0;
        for (int k = 0; k < len && n + tl[i + k] + 2 < sizeof buf; k++) {
            if (k)
                buf[n++] = ' ';
            memcpy(buf + n, tb[i + k], tl[i + k]);
            n += tl[i + k];
        }
        int rc = fds__vl_add(out, buf, n);
        if (rc)
            return rc;
    }
    return 0;
}

/* One slice [a, b) of the time range: its documents' filter values,
 * service names and user-agent phrases into m.  0 or an FDS_E* code. */
static int sample_slice(const fds_httpc_target *t,
                        const char *path, double a, double b, int size, uint64_t *st,
                        dash_material *m, char *msg, size_t msglen)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"size\":%d,\"query\":{\"range\":{\"@timestamp\":{\"gte\":%.0f,\"lt\":%.0f,"
             "\"format\":\"epoch_millis\"}}}}",
             size, a, b);
    cJSON *root;
    int rc = fds__lgwork_search(t, path, body, "sampling values", &root, msg,
                                msglen);
    if (rc)
        return rc;
    const cJSON *hits = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "hits"), "hits");
    char *svc = "service_name", *ua = "user_agent";
    fds__vlist uas = {0};
    rc = fds__lgwork_collect(hits, m->filter_names, FDS_LGDASH_NFILTER, m->filter, NULL);
    if (rc == 0)
        rc = fds__lgwork_collect(hits, &svc, 1, &m->services, NULL);
    if (rc == 0)
        rc = fds__lgwork_collect(hits, &ua, 1, &uas, NULL);
    for (size_t i = 0; rc == 0 && i < uas.n; i++)
        rc = add_phrases(&m->phrases, uas.v[i], st);
    m->ndocs += (size_t)cJSON_GetArraySize(hits);
    fds__vl_free(&uas);
    cJSON_Delete(root);
    return rc;
}

static void material_free(dash_material *m)
{
    for (int f = 0; f < FDS_LGDASH_NFILTER; f++)
        fds__vl_free(&m->filter[f]);
    fds__vl_free(&m->phrases);
    fds__vl_free(&m->services);
}

/* The time range and the sampled values; 0 or an FDS_E* code with a
 * sentence in `msg`. */
static int material_read(const fds_httpc_target *t,
                         const char *path, int sample_docs, uint64_t *st, dash_material *m,
                         char *fbuf, size_t fbuflen, char *msg, size_t msglen)
{
    snprintf(fbuf, fbuflen, "%s", FDS_LGDASH_FILTER_FIELDS);
    int nf = 0;
    for (char *t = strtok(fbuf, ","); t && nf < FDS_LGDASH_NFILTER; t = strtok(NULL, ","))
        m->filter_names[nf++] = t;
    int rc = time_range(t, path, m, msg, msglen);
    double span = m->max_ms + 1 - m->min_ms;
    int per = (sample_docs + FDS_LGDASH_SLICES - 1) / FDS_LGDASH_SLICES;
    for (int s = 0; rc == 0 && s < FDS_LGDASH_SLICES; s++)
        rc = sample_slice(t, path, m->min_ms + floor(span * s / FDS_LGDASH_SLICES),
                          m->min_ms + floor(span * (s + 1) / FDS_LGDASH_SLICES), per, st, m, msg,
                          msglen);
    if (rc)
        return rc;
    size_t nfilter = 0;
    for (int f = 0; f < FDS_LGDASH_NFILTER; f++)
        nfilter += m->filter[f].n;
    if (nfilter == 0 || m->phrases.n == 0) {
        snprintf(msg, msglen,
                 "the dashboard workload found %s in %zu sampled documents of %s (it needs the "
                 "fields of datasets/nginx-mapping.json)",
                 nfilter ? "no user_agent with two words" : "no value of " FDS_LGDASH_FILTER_FIELDS,
                 m->ndocs, path);
        return FDS_ENOTFOUND;
    }
    return 0;
}

/* A window of `len` ms drawn uniformly over the range: [*gte, *lte]. */
static void draw_window(const dash_material *m, double len, uint64_t *st, double *gte,
                        double *lte)
{
    double room = m->max_ms - m->min_ms - len;
    *gte = m->min_ms + (room > 0 ? floor(fds__lgwork_unit(st) * (room + 1)) : 0);
    *lte = *gte + len - 1;
}

/* epoch ms as strict_date_optional_time in UTC: 2019-01-22T00:26:14.000Z */
static void iso_ms(double ms, char *out, size_t cap)
{
    time_t s = (time_t)floor(ms / 1000);
    int milli = (int)(ms - (double)s * 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, milli);
}

/* s as a JSON string literal (quotes and escapes) into out; 0 or FDS_ENOMEM. */
static int json_str(const char *s, char *out, size_t cap)
{
    cJSON *j = cJSON_CreateString(s);
    char *p = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!p)
        return FDS_ENOMEM;
    snprintf(out, cap, "%s", p);
    free(p);
    return 0;
}

/* Kibana's window filter: a range on @timestamp, strict_date_optional_time. */
static void kibana_range(double gte, double lte, char *out, size_t cap)
{
    char a[FDS_LGDASH_ISO], b[FDS_LGDASH_ISO];
    iso_ms(gte, a, sizeof a);
    iso_ms(lte, b, sizeof b);
    snprintf(out, cap,
             "{\"range\":{\"@timestamp\":{\"format\":\"strict_date_optional_time\","
             "\"gte\":\"%s\",\"lte\":\"%s\"}}}",
             a, b);
}

/* Kibana's query: a bool with the given filter clauses (comma-separated)
 * and its empty must, should and must_not. */
static void kibana_bool(const char *filters, char *out, size_t cap)
{
    snprintf(out, cap, "{\"bool\":{\"must\":[],\"filter\":[%s],\"should\":[],\"must_not\":[]}}",
             filters);
}

/* A match on a sampled value of a filter field with values. */
static int filter_match(const dash_material *m, uint64_t *st, char *out, size_t cap)
{
    int f;
    do
        f = (int)(fds__lgwork_rand(st) % FDS_LGDASH_NFILTER);
    while (m->filter[f].n == 0);
    char v[1024];
    int rc = json_str(m->filter[f].v[fds__lgwork_rand(st) % m->filter[f].n], v, sizeof v);
    snprintf(out, cap, "{\"match\":{\"%.100s\":%s}}", m->filter_names[f], v);
    return rc;
}

/* Discover's table or its histogram, on the same kind of filter. */
static int body_discover(const dash_material *m, uint64_t *st, int histogram, int hits,
                         char *out, size_t cap)
{
    double gte, lte;
    draw_window(m, FDS_LGDASH_DISCOVER_MS, st, &gte, &lte);
    char range[FDS_LGDASH_RANGE], match[1200], both[1600], q[1800];
    kibana_range(gte, lte, range, sizeof range);
    int rc = filter_match(m, st, match, sizeof match);
    if (rc)
        return rc;
    snprintf(both, sizeof both, "%s,%s", match, range);
    kibana_bool(both, q, sizeof q);
    if (!histogram) {
        snprintf(out, cap,
                 "{\"size\":%d,\"sort\":[{\"@timestamp\":{\"order\":\"desc\","
                 "\"format\":\"strict_date_optional_time\","
                 "\"unmapped_type\":\"boolean\"}}],\"track_total_hits\":true,"
                 "\"_source\":false,\"fields\":[{\"field\":\"*\",\"include_unmapped\":\"true\"}],"
                 "\"runtime_mappings\":{},\"query\":%s}",
                 hits, q);
        return 0;
    }
    const char *zone = FDS_LGDASH_ZONES[fds__lgwork_rand(st) % (sizeof FDS_LGDASH_ZONES /
                                                                sizeof *FDS_LGDASH_ZONES)];
    snprintf(out, cap,
             "{\"size\":0,\"track_total_hits\":true,\"query\":%s,\"aggs\":{\"2\":{"
             "\"date_histogram\":{\"field\":\"@timestamp\",\"fixed_interval\":\"30s\","
             "\"time_zone\":\"%s\",\"min_doc_count\":1,\"extended_bounds\":{\"min\":%.0f,"
             "\"max\":%.0f}}}}}",
             q, zone, gte, lte);
    return 0;
}

/* Lens "top values of url.keyword" with avg body_bytes_sent. */
static int body_top_values(const dash_material *m, uint64_t *st, char *out, size_t cap)
{
    static const int sizes[] = {5, 10, 20};
    double gte, lte;
    draw_window(m, FDS_LGDASH_PANEL_MS, st, &gte, &lte);
    char range[FDS_LGDASH_RANGE], cond[1200], both[1600], q[1800];
    kibana_range(gte, lte, range, sizeof range);
    if ((fds__lgwork_rand(st) & 1) || m->services.n == 0) {
        snprintf(cond, sizeof cond, "{\"range\":{\"status\":{\"gte\":400}}}");
    } else {
        char v[1024];
        if (json_str(m->services.v[fds__lgwork_rand(st) % m->services.n], v, sizeof v))
            return FDS_ENOMEM;
        snprintf(cond, sizeof cond, "{\"match\":{\"service_name\":%s}}", v);
    }
    snprintf(both, sizeof both, "%s,%s", range, cond);
    kibana_bool(both, q, sizeof q);
    snprintf(out, cap,
             "{\"size\":0,\"track_total_hits\":true,\"query\":%s,\"aggs\":{\"0\":{\"terms\":{"
             "\"field\":\"url.keyword\",\"order\":{\"_count\":\"desc\"},\"size\":%d,"
             "\"shard_size\":25},\"aggs\":{\"1\":{\"avg\":{\"field\":\"body_bytes_sent\"}}}}}}",
             q, sizes[fds__lgwork_rand(st) % 3]);
    return 0;
}

/* Grafana's time series panel: 1m buckets with status terms or percentiles. */
static int body_time_series(const dash_material *m, uint64_t *st, char *out, size_t cap)
{
    double gte, lte;
    draw_window(m, FDS_LGDASH_PANEL_MS, st, &gte, &lte);
    const char *sub =
        (fds__lgwork_rand(st) & 1)
            ? "{\"terms\":{\"field\":\"status\",\"size\":10,\"order\":{\"_key\":\"desc\"},"
              "\"min_doc_count\":1}}"
            : "{\"percentiles\":{\"field\":\"request_time\",\"percents\":[25,50,75,95,99]}}";
    snprintf(out, cap,
             "{\"size\":0,\"query\":{\"bool\":{\"filter\":[{\"range\":{\"@timestamp\":{"
             "\"gte\":%.0f,\"lte\":%.0f,\"format\":\"epoch_millis\"}}}]}},\"aggs\":{\"2\":{"
             "\"date_histogram\":{\"field\":\"@timestamp\",\"fixed_interval\":\"1m\","
             "\"min_doc_count\":0,\"extended_bounds\":{\"min\":%.0f,\"max\":%.0f},"
             "\"format\":\"epoch_millis\"},\"aggs\":{\"3\":%s}}}}",
             gte, lte, gte, lte, sub);
    return 0;
}

/* match_phrase on user_agent with a sampled phrase. */
static int body_phrase(const dash_material *m, uint64_t *st, char *out, size_t cap)
{
    char v[1024];
    if (json_str(m->phrases.v[fds__lgwork_rand(st) % m->phrases.n], v, sizeof v))
        return FDS_ENOMEM;
    snprintf(out, cap, "{\"size\":%d,\"query\":{\"match_phrase\":{\"user_agent\":%s}}}",
             FDS_LGDASH_PHRASE_HITS, v);
    return 0;
}

/* A Lens metric: distinct remote_addr or mean body_bytes_sent in a window. */
static int body_metric(const dash_material *m, uint64_t *st, char *out, size_t cap)
{
    double gte, lte;
    draw_window(m, FDS_LGDASH_PANEL_MS, st, &gte, &lte);
    char range[FDS_LGDASH_RANGE], q[FDS_LGDASH_RANGE + 100];
    kibana_range(gte, lte, range, sizeof range);
    kibana_bool(range, q, sizeof q);
    const char *agg = (fds__lgwork_rand(st) & 1) ? "{\"cardinality\":{\"field\":\"remote_addr\"}}"
                                                 : "{\"avg\":{\"field\":\"body_bytes_sent\"}}";
    snprintf(out, cap,
             "{\"size\":0,\"track_total_hits\":true,\"query\":%s,\"aggs\":{\"0\":%s}}", q,
             agg);
    return 0;
}

/* A class drawn by weight. */
static int draw_class(uint64_t *st)
{
    int r = (int)(fds__lgwork_rand(st) % 100), k = 0;
    while (k < DASH_NCLASSES - 1 && r >= dash_classes[k].weight)
        r -= dash_classes[k++].weight;
    return k;
}

/* The `pool` bodies; 0 or FDS_ENOMEM. */
static int make_bodies(fds_lgwork *w, const char *host, const char *path, const dash_material *m,
                       size_t pool, uint64_t *st, int hits)
{
    char *body = malloc(FDS_LGDASH_BODY);
    if (!body)
        return FDS_ENOMEM;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < pool && rc == 0; i++) {
        int k = draw_class(st);
        switch (k) {
        case DASH_DISCOVER: rc = body_discover(m, st, 0, hits, body, FDS_LGDASH_BODY); break;
        case DASH_HISTOGRAM: rc = body_discover(m, st, 1, hits, body, FDS_LGDASH_BODY); break;
        case DASH_TOP_VALUES: rc = body_top_values(m, st, body, FDS_LGDASH_BODY); break;
        case DASH_TIME_SERIES: rc = body_time_series(m, st, body, FDS_LGDASH_BODY); break;
        case DASH_PHRASE: rc = body_phrase(m, st, body, FDS_LGDASH_BODY); break;
        default: rc = body_metric(m, st, body, FDS_LGDASH_BODY); break;
        }
        if (rc == 0)
            rc = fds__lgwork_add(w, &cap, host, "POST", path, body, (unsigned char)k);
    }
    free(body);
    return rc;
}

int fds_lgwork_dashboard(fds_lgwork *w, const fds_httpc_target *t, const char *index, int sample_docs,
                         size_t pool, uint64_t seed, int hits, char *msg, size_t msglen)
{
    memset(w, 0, sizeof *w);
    char path[512], fbuf[128];
    snprintf(path, sizeof path, "/%s/_search", index);
    dash_material m;
    memset(&m, 0, sizeof m);
    uint64_t st = seed;
    int rc = material_read(t, path, sample_docs, &st, &m, fbuf,
                           sizeof fbuf, msg, msglen);
    if (rc == 0)
        rc = make_bodies(w, t->host_header, path, &m, pool, &st, hits);
    if (rc == 0) {
        w->nclasses = DASH_NCLASSES;
        for (int k = 0; k < DASH_NCLASSES; k++)
            snprintf(w->class_names[k], sizeof w->class_names[k], "%s", dash_classes[k].name);
        fds__lgwork_shares(w);
        for (int f = 0; f < FDS_LGDASH_NFILTER; f++)
            w->nvalues += m.filter[f].n;
        w->nvalues += m.phrases.n;
        char a[FDS_LGDASH_ISO], b[FDS_LGDASH_ISO], weights[256];
        iso_ms(m.min_ms, a, sizeof a);
        iso_ms(m.max_ms, b, sizeof b);
        size_t n = 0;
        for (int k = 0; k < DASH_NCLASSES && n < sizeof weights; k++)
            n += (size_t)snprintf(weights + n, sizeof weights - n, "%s%s %d", k ? ", " : "",
                                  dash_classes[k].name, dash_classes[k].weight);
        snprintf(w->description, sizeof w->description,
                 "%zu dashboard bodies (weights: %.200s) over @timestamp %.30s..%.30s (values from %zu "
                 "documents, seed %llu)",
                 w->n, weights, a, b, m.ndocs, (unsigned long long)seed);
    }
    material_free(&m);
    if (rc) {
        if (rc == FDS_ENOMEM)
            snprintf(msg, msglen, "out of memory");
        fds_lgwork_free(w);
    }
    return rc;
}
