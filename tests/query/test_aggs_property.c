/*
 * test_aggs_property: random aggregation trees over random documents,
 * compared against a brute-force evaluator written here independently of
 * src/query/aggs/aggs.c (its own grouping, ordering, histogram keys, calendar
 * rounding through timegm/gmtime, empty-bucket filling, ranges and
 * filters).
 *
 * Documents have a keyword field with a skewed distribution, a second
 * small keyword field, a long, a double (multiples of 0.25, so that every
 * sum is exact in either order) and a date, each missing from some docs;
 * or, in some rounds without deletions, as an access log: the keyword,
 * the long (mostly one value) and the date in every doc, dates in doc
 * order.
 * Each round splits the documents into 1-5 segments at random cut points,
 * deletes some docs through the live bitsets and runs random trees (terms
 * with sub-metrics and metric orders, histogram, date_histogram with time
 * zones and min_doc_count 0, range, filter, missing, metrics and top_hits
 * (from, size, one or two sort keys with missing first or last: the hits'
 * ids against a brute-force sort whose ties go by doc order) under buckets)
 * under random queries, first as one shard, then as two shards reduced
 * together (terms with a shard_size above the distinct count, so the
 * answer is exact).  The result must be identical to the brute-force one
 * whatever the segment split.
 */
#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "aggs/aggs.h"
#include "fds_strbuf.h"
#include "qtest.h"
#include "qtest_shard.h"
#include "query.h"
#include "ast/search_request.h"

#define NDOCS 3000
#define NROUNDS 40
#define NTREES 25
#define SEG_MAX QT_SEG_MAX
#define BASE_MS 1767225600000ll /* 2026-01-01T00:00:00Z */
#define SPAN_MS (70ll * 86400000ll)

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint32_t rnd(uint32_t n) { return qt_rnd(&rng, n); }

/* ---- documents ---------------------------------------------------------------- */

enum { F_KW, F_KW2, F_NUM, F_DBL, F_TS, NF };
static const char *fname[NF] = {"kw", "kw2", "num", "dbl", "ts"};

typedef struct doc {
    char kw[8], kw2[8];
    bool has[NF];
    long long num, ts;
    double dbl;
    bool live;
    char json[256];
} doc;

static doc D[NDOCS];

/* logs: as an access log -- every doc has kw, num and ts, ts in doc order
 * and num mostly one value (the runs of one bucket and one key that
 * aggs.c counts apart) */
static void make_docs(bool logs)
{
    for (int i = 0; i < NDOCS; i++) {
        doc *d = &D[i];
        for (int f = 0; f < NF; f++)
            d->has[f] = rnd(10) != 0;
        if (logs)
            d->has[F_KW] = d->has[F_NUM] = d->has[F_TS] = true;
        /* skewed: k0 most frequent */
        unsigned k = rnd(4) ? rnd(4) : rnd(14);
        snprintf(d->kw, sizeof d->kw, "k%u", k);
        snprintf(d->kw2, sizeof d->kw2, "%c", "abcd"[rnd(4)]);
        d->num = (long long)rnd(551) - 50;
        d->dbl = ((double)rnd(4000) - 1000) * 0.25;
        d->ts = BASE_MS + (long long)(rnd(1u << 31) % (uint64_t)SPAN_MS);
        if (logs) {
            d->num = rnd(10) ? 200 : d->num;
            d->ts = BASE_MS + (long long)i * (SPAN_MS / NDOCS) +
                    (long long)rnd(1000);
        }
        char *p = d->json;
        size_t cap = sizeof d->json;
        int w = snprintf(p, cap, "{");
        const char *sep = "";
        if (d->has[F_KW])
            w += snprintf(p + w, cap - w, "%s\"kw\":\"%s\"", sep, d->kw), sep = ",";
        if (d->has[F_KW2])
            w += snprintf(p + w, cap - w, "%s\"kw2\":\"%s\"", sep, d->kw2), sep = ",";
        if (d->has[F_NUM])
            w += snprintf(p + w, cap - w, "%s\"num\":%lld", sep, d->num), sep = ",";
        if (d->has[F_DBL])
            w += snprintf(p + w, cap - w, "%s\"dbl\":%.2f", sep, d->dbl), sep = ",";
        if (d->has[F_TS])
            w += snprintf(p + w, cap - w, "%s\"ts\":%lld", sep, d->ts);
        snprintf(p + w, cap - w, "}");
    }
}

/* ---- random trees ----------------------------------------------------------- */

enum { G_TERMS, G_HISTO, G_DHISTO, G_RANGE, G_FILTER, G_MISSING, G_AVG, G_SUM,
       G_MIN, G_MAX, G_COUNT, G_STATS, G_CARD, G_TOPHITS, NG };

typedef struct gagg {
    int type, field;
    char name[16];
    int size;                /* terms */
    int order;               /* terms: 0 _count desc, 1 _key asc, 2 _key desc,
                                3 sub 0 metric desc, 4 _count asc */
    double interval;         /* histogram */
    int cal;                 /* date_histogram: 0 day, 1 week, 2 month, 3 fixed 6h */
    long long tz_ms;
    int min_doc_count;
    double from[3], to[3];   /* range */
    int nranges;
    char fval[8];            /* filter: kw2 term */
    int hfrom, nsort;        /* top_hits: from, size (in size), sort keys: */
    int sfield[2];           /*   field (F_*), descending, missing first */
    bool sdesc[2], smfirst[2];
    struct gagg *subs[3];
    int nsubs;
} gagg;

static int name_seq;

static gagg *gen(int depth)
{
    gagg *g = calloc(1, sizeof *g);
    snprintf(g->name, sizeof g->name, "a%d", name_seq++);
    bool metric_only = depth >= 2;
    g->type = metric_only ? G_AVG + (int)rnd(NG - G_AVG)
            : rnd(5) ? (int)rnd(G_AVG) : (int)rnd(NG);
    switch (g->type) {
    case G_TERMS:
        g->field = (int[]){F_KW, F_KW2, F_NUM}[rnd(3)];
        g->size = 1 + (int)rnd(12);
        g->order = (int)rnd(5);
        break;
    case G_HISTO:
        g->field = rnd(2) ? F_NUM : F_DBL;
        g->interval = (double[]){10, 25, 100, 0.5 * 100}[rnd(4)];
        g->min_doc_count = (int)rnd(2);
        break;
    case G_DHISTO:
        g->field = F_TS;
        g->cal = (int)rnd(4);
        g->tz_ms = ((long long)rnd(25) - 12) * 3600000ll + (rnd(4) ? 0 : 1800000ll);
        g->min_doc_count = (int)rnd(2);
        break;
    case G_RANGE:
        g->field = rnd(2) ? F_NUM : F_DBL;
        g->nranges = 1 + (int)rnd(3);
        for (int i = 0; i < g->nranges; i++) {
            double a = (double)rnd(600) - 60, b = (double)rnd(600) - 60;
            g->from[i] = rnd(5) ? fmin(a, b) : -INFINITY;
            g->to[i] = rnd(5) ? fmax(a, b) + 1 : INFINITY;
        }
        break;
    case G_FILTER:
        snprintf(g->fval, sizeof g->fval, "%c", "abcd"[rnd(4)]);
        break;
    case G_MISSING:
        g->field = (int)rnd(NF);
        break;
    case G_TOPHITS: /* one or two field keys (ties: the doc order) */
        g->size = (int)rnd(5);
        g->hfrom = rnd(3) ? 0 : (int)rnd(4);
        g->nsort = 1 + (int)rnd(2);
        for (int k = 0; k < g->nsort; k++) {
            g->sfield[k] = (int[]){F_KW, F_KW2, F_NUM, F_DBL, F_TS}[rnd(5)];
            g->sdesc[k] = rnd(2);
            g->smfirst[k] = !rnd(3);
        }
        break;
    case G_CARD: /* exact below the sketch's switch (3072 hashes) */
        g->field = (int[]){F_KW, F_KW2, F_NUM, F_DBL, F_TS}[rnd(5)];
        break;
    default:
        g->field = rnd(2) ? F_NUM : F_DBL;
        break;
    }
    if (g->type == G_TERMS && g->order == 3) {
        /* ordered by a metric: sub 0 is one */
        gagg *m = calloc(1, sizeof *m);
        snprintf(m->name, sizeof m->name, "a%d", name_seq++);
        m->type = (int[]){G_AVG, G_SUM, G_MIN, G_MAX, G_COUNT}[rnd(5)];
        m->field = rnd(2) ? F_NUM : F_DBL;
        g->subs[g->nsubs++] = m;
    }
    if (g->type < G_AVG && depth < 2) {
        int n = (int)rnd(3);
        while (n-- > 0 && g->nsubs < 3)
            g->subs[g->nsubs++] = gen(depth + 1);
    }
    if (depth == 0 && g->type < G_AVG && !g->nsubs && rnd(3) == 0) {
        /* the dashboard's shape: one terms without subs under a bucket
         * aggregation (counted in the parent's loop when it can be) */
        gagg *t = calloc(1, sizeof *t);
        snprintf(t->name, sizeof t->name, "a%d", name_seq++);
        t->type = G_TERMS;
        t->field = (int[]){F_KW, F_KW2, F_NUM}[rnd(3)];
        t->size = 1 + (int)rnd(12);
        t->order = (int[]){0, 1, 2, 4}[rnd(4)];
        g->subs[g->nsubs++] = t;
    }
    return g;
}

static void gfree(gagg *g)
{
    for (int i = 0; i < g->nsubs; i++)
        gfree(g->subs[i]);
    free(g);
}

static const char *gtype_name[NG] = {"terms", "histogram", "date_histogram",
                                     "range", "filter", "missing", "avg", "sum",
                                     "min", "max", "value_count", "stats",
                                     "cardinality", "top_hits"};

static double num_of(const doc *d, int f)
{
    return f == F_DBL ? d->dbl : f == F_TS ? (double)d->ts : (double)d->num;
}

static void to_json(const gagg *g, fds_strbuf *b, int shard_size)
{
    fds_strbuf_printf(b, "\"%s\":{\"%s\":", g->name, gtype_name[g->type]);
    switch (g->type) {
    case G_TERMS: {
        static const char *ord[] = {"{\"_count\":\"desc\"}", "{\"_key\":\"asc\"}",
                                    "{\"_key\":\"desc\"}", NULL,
                                    "[{\"_count\":\"asc\"},{\"_key\":\"desc\"}]"};
        fds_strbuf_printf(b, "{\"field\":\"%s\",\"size\":%d", fname[g->field], g->size);
        if (shard_size)
            fds_strbuf_printf(b, ",\"shard_size\":%d", shard_size);
        if (g->order == 3)
            fds_strbuf_printf(b, ",\"order\":{\"%s\":\"desc\"}", g->subs[0]->name);
        else
            fds_strbuf_printf(b, ",\"order\":%s", ord[g->order]);
        fds_strbuf_puts(b, "}");
        break;
    }
    case G_HISTO:
        fds_strbuf_printf(b, "{\"field\":\"%s\",\"interval\":%g,\"min_doc_count\":%d}",
                          fname[g->field], g->interval, g->min_doc_count);
        break;
    case G_DHISTO: {
        static const char *cal[] = {"\"calendar_interval\":\"day\"",
                                    "\"calendar_interval\":\"week\"",
                                    "\"calendar_interval\":\"1M\"",
                                    "\"fixed_interval\":\"6h\""};
        long long m = g->tz_ms / 60000, am = m < 0 ? -m : m;
        fds_strbuf_printf(b, "{\"field\":\"ts\",%s,\"min_doc_count\":%d,"
                             "\"time_zone\":\"%c%02lld:%02lld\"}",
                          cal[g->cal], g->min_doc_count, m < 0 ? '-' : '+',
                          am / 60, am % 60);
        break;
    }
    case G_RANGE:
        fds_strbuf_printf(b, "{\"field\":\"%s\",\"ranges\":[", fname[g->field]);
        for (int i = 0; i < g->nranges; i++) {
            fds_strbuf_puts(b, i ? ",{" : "{");
            const char *sep = "";
            if (isfinite(g->from[i]))
                fds_strbuf_printf(b, "\"from\":%g", g->from[i]), sep = ",";
            if (isfinite(g->to[i]))
                fds_strbuf_printf(b, "%s\"to\":%g", sep, g->to[i]);
            fds_strbuf_puts(b, "}");
        }
        fds_strbuf_puts(b, "]}");
        break;
    case G_FILTER:
        fds_strbuf_printf(b, "{\"term\":{\"kw2\":\"%s\"}}", g->fval);
        break;
    case G_TOPHITS:
        fds_strbuf_printf(b, "{\"size\":%d,\"from\":%d,\"_source\":false,\"sort\":[",
                          g->size, g->hfrom);
        for (int k = 0; k < g->nsort; k++)
            fds_strbuf_printf(b, "%s{\"%s\":{\"order\":\"%s\",\"missing\":\"%s\"}}",
                              k ? "," : "", fname[g->sfield[k]],
                              g->sdesc[k] ? "desc" : "asc",
                              g->smfirst[k] ? "_first" : "_last");
        fds_strbuf_puts(b, "]}");
        break;
    default:
        fds_strbuf_printf(b, "{\"field\":\"%s\"}", fname[g->field]);
        break;
    }
    if (g->nsubs) {
        fds_strbuf_puts(b, ",\"aggs\":{");
        for (int i = 0; i < g->nsubs; i++) {
            if (i)
                fds_strbuf_putc(b, ',');
            to_json(g->subs[i], b, shard_size);
        }
        fds_strbuf_putc(b, '}');
    }
    fds_strbuf_putc(b, '}');
}

/* ---- brute force ---------------------------------------------------------------- */

/* metric values over docs ix[0..n) */
static void bf_metric(const gagg *g, const int *ix, int n, double out[5])
{
    double cnt = 0, sum = 0, mn = INFINITY, mx = -INFINITY;
    for (int i = 0; i < n; i++) {
        const doc *d = &D[ix[i]];
        if (!d->has[g->field])
            continue;
        double v = num_of(d, g->field);
        cnt++;
        sum += v;
        mn = fmin(mn, v);
        mx = fmax(mx, v);
    }
    out[0] = cnt;
    out[1] = sum;
    out[2] = cnt ? mn : NAN;
    out[3] = cnt ? mx : NAN;
    out[4] = cnt ? sum / cnt : NAN;
}

static double bf_metric_value(const gagg *g, const int *ix, int n)
{
    double m[5];
    bf_metric(g, ix, n, m);
    switch (g->type) {
    case G_AVG: return m[4];
    case G_SUM: return m[1];
    case G_MIN: return m[2];
    case G_MAX: return m[3];
    default: return m[0];
    }
}

static void put_num(fds_strbuf *b, double v)
{
    if (isnan(v))
        fds_strbuf_puts(b, "null");
    else
        fds_strbuf_printf(b, "%.17g", v);
}

static void bf_eval(const gagg *g, const int *ix, int n, fds_strbuf *b);

static void bf_bucket(const gagg *g, const char *key, const int *ix, int n,
                      fds_strbuf *b)
{
    fds_strbuf_printf(b, "[%s:%d", key, n);
    for (int i = 0; i < g->nsubs; i++) {
        fds_strbuf_putc(b, '|');
        bf_eval(g->subs[i], ix, n, b);
    }
    fds_strbuf_putc(b, ']');
}

typedef struct tb {
    char key[24];
    double num;
    int *ix, n;
    double metric;
} tb;

static const gagg *cmp_g;
static int tb_key(const tb *x, const tb *y)
{
    if (cmp_g->field == F_NUM)
        return x->num < y->num ? -1 : x->num > y->num;
    return strcmp(x->key, y->key);
}

static int tb_cmp(const void *pa, const void *pb)
{
    const tb *x = pa, *y = pb;
    int c = 0;
    switch (cmp_g->order) {
    case 0: c = y->n - x->n; break;
    case 1: c = 0; break;
    case 2: return -tb_key(x, y);
    case 3:
        if (isnan(x->metric) || isnan(y->metric))
            c = isnan(x->metric) - isnan(y->metric);
        else
            c = x->metric > y->metric ? -1 : x->metric < y->metric;
        break;
    case 4:
        c = x->n - y->n;
        if (!c)
            return -tb_key(x, y);
        break;
    }
    return c ? c : tb_key(x, y);
}

/* date_histogram key of t: local calendar through gmtime/timegm */
static long long bf_date_key(const gagg *g, long long t)
{
    if (g->cal == 3) {
        long long I = 6 * 3600000ll, l = t + g->tz_ms;
        long long q = l / I - (l % I < 0);
        return q * I - g->tz_ms;
    }
    long long l = t + g->tz_ms;
    time_t s = (time_t)(l / 1000 - (l % 1000 < 0));
    struct tm tm;
    gmtime_r(&s, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    if (g->cal == 1)
        tm.tm_mday -= (tm.tm_wday + 6) % 7;
    if (g->cal == 2)
        tm.tm_mday = 1;
    return (long long)timegm(&tm) * 1000 - g->tz_ms;
}

static long long bf_date_next(const gagg *g, long long k)
{
    if (g->cal == 3)
        return k + 6 * 3600000ll;
    long long l = k + g->tz_ms;
    time_t s = (time_t)(l / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    if (g->cal == 0)
        tm.tm_mday += 1;
    else if (g->cal == 1)
        tm.tm_mday += 7;
    else
        tm.tm_mon += 1;
    return (long long)timegm(&tm) * 1000 - g->tz_ms;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* top_hits' order of docs x, y (indices into D): the sort keys, missing
 * values first or last, then the doc order (shard, segment, doc). */
static const gagg *th_g;
static int th_cmp(const void *pa, const void *pb)
{
    int x = *(const int *)pa, y = *(const int *)pb;
    for (int k = 0; k < th_g->nsort; k++) {
        int f = th_g->sfield[k];
        bool hx = D[x].has[f], hy = D[y].has[f];
        int c;
        if (!hx || !hy) {
            c = hx == hy ? 0 : (!hx == th_g->smfirst[k]) ? -1 : 1;
            if (c)
                return c;
            continue;
        }
        if (f == F_KW || f == F_KW2) {
            c = strcmp(f == F_KW ? D[x].kw : D[x].kw2, f == F_KW ? D[y].kw : D[y].kw2);
            c = c < 0 ? -1 : c > 0;
        } else {
            double vx = num_of(&D[x], f), vy = num_of(&D[y], f);
            c = vx < vy ? -1 : vx > vy;
        }
        if (c)
            return th_g->sdesc[k] ? -c : c;
    }
    return x < y ? -1 : x > y;
}

static void bf_eval(const gagg *g, const int *ix, int n, fds_strbuf *b)
{
    fds_strbuf_printf(b, "%s{", g->name);
    int *sub = malloc((size_t)(n + 1) * sizeof *sub);
    switch (g->type) {
    case G_TERMS: {
        tb *t = calloc((size_t)n + 1, sizeof *t);
        int nt = 0, total = 0;
        for (int i = 0; i < n; i++) {
            const doc *d = &D[ix[i]];
            if (!d->has[g->field])
                continue;
            total++;
            char key[24];
            if (g->field == F_NUM)
                snprintf(key, sizeof key, "%lld", d->num);
            else
                snprintf(key, sizeof key, "%s", g->field == F_KW ? d->kw : d->kw2);
            int k = 0;
            while (k < nt && strcmp(t[k].key, key))
                k++;
            if (k == nt) {
                snprintf(t[nt].key, sizeof t[nt].key, "%s", key);
                t[nt].num = (double)d->num;
                t[nt].ix = malloc((size_t)n * sizeof(int));
                nt++;
            }
            t[k].ix[t[k].n++] = ix[i];
        }
        for (int k = 0; k < nt; k++)
            t[k].metric = g->order == 3 ? bf_metric_value(g->subs[0], t[k].ix, t[k].n)
                                        : 0;
        cmp_g = g;
        qsort(t, (size_t)nt, sizeof *t, tb_cmp);
        int shown = 0;
        for (int k = 0; k < nt && k < g->size; k++) {
            bf_bucket(g, t[k].key, t[k].ix, t[k].n, b);
            shown += t[k].n;
        }
        fds_strbuf_printf(b, "other=%d", total - shown);
        for (int k = 0; k < nt; k++)
            free(t[k].ix);
        free(t);
        break;
    }
    case G_HISTO:
    case G_DHISTO: {
        /* distinct keys, sorted */
        double *keys = malloc((size_t)(n + 1) * sizeof *keys);
        int nk = 0;
        for (int i = 0; i < n; i++) {
            const doc *d = &D[ix[i]];
            if (!d->has[g->field])
                continue;
            double v = num_of(d, g->field);
            keys[nk++] = g->type == G_HISTO ? floor(v / g->interval) * g->interval
                                            : (double)bf_date_key(g, (long long)v);
        }
        qsort(keys, (size_t)nk, sizeof *keys, dcmp);
        int u = 0;
        for (int i = 0; i < nk; i++)
            if (!u || keys[u - 1] != keys[i])
                keys[u++] = keys[i];
        double k = u ? keys[0] : 0;
        for (int ki = 0; u && (g->min_doc_count ? ki < u : k <= keys[u - 1]);) {
            double key = g->min_doc_count ? keys[ki] : k;
            int m = 0;
            for (int i = 0; i < n; i++) {
                const doc *d = &D[ix[i]];
                if (!d->has[g->field])
                    continue;
                double v = num_of(d, g->field);
                double kk = g->type == G_HISTO ? floor(v / g->interval) * g->interval
                                               : (double)bf_date_key(g, (long long)v);
                if (kk == key)
                    sub[m++] = ix[i];
            }
            char ks[32];
            snprintf(ks, sizeof ks, "%.17g", key);
            bf_bucket(g, ks, sub, m, b);
            if (g->min_doc_count)
                ki++;
            else
                k = g->type == G_HISTO ? k + g->interval
                                       : (double)bf_date_next(g, (long long)k);
        }
        free(keys);
        break;
    }
    case G_RANGE: {
        int order[3] = {0, 1, 2};
        for (int i = 1; i < g->nranges; i++) /* stable sort by (from, to) */
            for (int j = i; j > 0; j--) {
                int x = order[j - 1], y = order[j];
                if (g->from[x] > g->from[y] ||
                    (g->from[x] == g->from[y] && g->to[x] > g->to[y])) {
                    order[j - 1] = y;
                    order[j] = x;
                }
            }
        for (int r = 0; r < g->nranges; r++) {
            int ri = order[r], m = 0;
            for (int i = 0; i < n; i++) {
                const doc *d = &D[ix[i]];
                double v = num_of(d, g->field);
                if (d->has[g->field] && v >= g->from[ri] && v < g->to[ri])
                    sub[m++] = ix[i];
            }
            char ks[64];
            snprintf(ks, sizeof ks, "%g..%g", g->from[ri], g->to[ri]);
            bf_bucket(g, ks, sub, m, b);
        }
        break;
    }
    case G_FILTER:
    case G_MISSING: {
        int m = 0;
        for (int i = 0; i < n; i++) {
            const doc *d = &D[ix[i]];
            bool in = g->type == G_FILTER ? d->has[F_KW2] && !strcmp(d->kw2, g->fval)
                                          : !d->has[g->field];
            if (in)
                sub[m++] = ix[i];
        }
        bf_bucket(g, "", sub, m, b);
        break;
    }
    case G_CARD: {
        /* distinct values: keys as text, counted once each */
        char (*seen)[24] = calloc((size_t)n + 1, sizeof *seen);
        int ns = 0;
        for (int i = 0; i < n; i++) {
            const doc *d = &D[ix[i]];
            if (!d->has[g->field])
                continue;
            char key[24];
            if (g->field == F_KW || g->field == F_KW2)
                snprintf(key, sizeof key, "%s", g->field == F_KW ? d->kw : d->kw2);
            else
                snprintf(key, sizeof key, "%.17g", num_of(d, g->field));
            int k = 0;
            while (k < ns && strcmp(seen[k], key))
                k++;
            if (k == ns)
                snprintf(seen[ns++], sizeof *seen, "%s", key);
        }
        put_num(b, ns);
        free(seen);
        break;
    }
    case G_TOPHITS: {
        memcpy(sub, ix, (size_t)n * sizeof *sub);
        th_g = g;
        qsort(sub, (size_t)n, sizeof *sub, th_cmp);
        fds_strbuf_printf(b, "total=%d", n);
        for (int i = g->hfrom; i < n && i < g->hfrom + g->size; i++)
            fds_strbuf_printf(b, ",%d", sub[i]);
        break;
    }
    default: {
        double m[5];
        bf_metric(g, ix, n, m);
        if (g->type == G_COUNT) {
            put_num(b, m[0]);
        } else if (g->type == G_STATS) {
            for (int i = 0; i < 5; i++) {
                put_num(b, i == 1 || i == 0 ? m[i] : m[i]);
                fds_strbuf_putc(b, ',');
            }
        } else {
            put_num(b, bf_metric_value(g, ix, n));
        }
        break;
    }
    }
    free(sub);
    fds_strbuf_putc(b, '}');
}

/* ---- the engine's result, in the same canonical form --------------------------- */

static void rs_eval(const gagg *g, const fds_agg_result *r, fds_strbuf *b);

/* The segments top_hits' hits index (the shards' in order). */
static const fds_search_segment *rs_segs;

static void rs_bucket(const gagg *g, const char *key, const fds_agg_bucket *bk,
                      fds_strbuf *b)
{
    fds_strbuf_printf(b, "[%s:%llu", key, (unsigned long long)bk->doc_count);
    for (int i = 0; i < g->nsubs; i++) {
        fds_strbuf_putc(b, '|');
        rs_eval(g->subs[i], bk->subs[i], b);
    }
    fds_strbuf_putc(b, ']');
}

static void rs_eval(const gagg *g, const fds_agg_result *r, fds_strbuf *b)
{
    fds_strbuf_printf(b, "%s{", g->name);
    char ks[64];
    switch (g->type) {
    case G_TERMS:
        for (size_t i = 0; i < r->nb; i++) {
            if (g->field == F_NUM)
                snprintf(ks, sizeof ks, "%lld", (long long)r->b[i].key_l);
            else
                snprintf(ks, sizeof ks, "%.*s", (int)r->b[i].key_len, r->b[i].key_s);
            rs_bucket(g, ks, &r->b[i], b);
        }
        fds_strbuf_printf(b, "other=%llu", (unsigned long long)r->other_doc_count);
        if (r->err != 0)
            fds_strbuf_printf(b, " err=%lld", (long long)r->err);
        break;
    case G_HISTO:
    case G_DHISTO:
        for (size_t i = 0; i < r->nb; i++) {
            snprintf(ks, sizeof ks, "%.17g",
                     g->type == G_HISTO ? r->b[i].key_d : (double)r->b[i].key_l);
            rs_bucket(g, ks, &r->b[i], b);
        }
        break;
    case G_RANGE:
        for (size_t i = 0; i < r->nb; i++) {
            const fds_agg_range *rg = &r->agg->ranges[r->b[i].key_l];
            snprintf(ks, sizeof ks, "%g..%g", rg->from, rg->to);
            rs_bucket(g, ks, &r->b[i], b);
        }
        break;
    case G_FILTER:
    case G_MISSING:
        rs_bucket(g, "", &r->b[0], b);
        break;
    case G_TOPHITS:
        fds_strbuf_printf(b, "total=%llu", (unsigned long long)r->count);
        for (size_t i = 0; i < r->nhits; i++) {
            size_t idl = 0;
            const fds_hit *h = &r->hits[i].h;
            const char *id = fds_sidx_doc_id(rs_segs[h->seg].sidx, h->doc, &idl);
            fds_strbuf_printf(b, ",%.*s", (int)idl, id);
        }
        break;
    default:
        if (g->type == G_COUNT) {
            put_num(b, (double)r->count);
        } else if (g->type == G_STATS) {
            int st[5] = {FDS_AGG_STAT_COUNT, FDS_AGG_STAT_SUM, FDS_AGG_STAT_MIN,
                         FDS_AGG_STAT_MAX, FDS_AGG_STAT_AVG};
            for (int i = 0; i < 5; i++) {
                put_num(b, fds_agg_metric_value(r, st[i]));
                fds_strbuf_putc(b, ',');
            }
        } else {
            put_num(b, fds_agg_metric_value(r, FDS_AGG_STAT_VALUE));
        }
        break;
    }
    fds_strbuf_putc(b, '}');
}

/* ---- segments and rounds ----------------------------------------------------- */

static const char MAPPING[] =
    "{\"properties\":{\"kw\":{\"type\":\"keyword\"},\"kw2\":{\"type\":\"keyword\"},"
    "\"num\":{\"type\":\"long\"},\"dbl\":{\"type\":\"double\"},"
    "\"ts\":{\"type\":\"date\"}}}";

typedef qt_shard shard;

/* docs [lo, hi) as a shard of random segments (deleting per D[].live) */
static void build_shard(fds_mapping *m, int lo, int hi, shard *sh, const char *dir)
{
    unsigned nseg = 1 + rnd(SEG_MAX);
    int cuts[SEG_MAX + 1];
    cuts[0] = lo;
    cuts[nseg] = hi;
    for (unsigned s = 1; s < nseg; s++)
        cuts[s] = lo + (int)rnd((uint32_t)(hi - lo + 1));
    for (unsigned s = 1; s < nseg; s++) /* sorted cut points */
        for (unsigned t = s; t > 1 && cuts[t - 1] > cuts[t]; t--) {
            int x = cuts[t];
            cuts[t] = cuts[t - 1];
            cuts[t - 1] = x;
        }
    qt_shard_build(m, cuts, nseg, D[0].json, &D[0].live, sizeof D[0], sh, dir);
}

static const char *QUERIES[] = {
    "{\"match_all\":{}}",
    "{\"term\":{\"kw2\":\"a\"}}",
    "{\"range\":{\"num\":{\"gte\":0,\"lt\":300}}}",
    "{\"bool\":{\"must_not\":{\"term\":{\"kw\":\"k0\"}}}}",
};

static bool query_match(int q, const doc *d)
{
    switch (q) {
    case 1: return d->has[F_KW2] && !strcmp(d->kw2, "a");
    case 2: return d->has[F_NUM] && d->num >= 0 && d->num < 300;
    case 3: return !(d->has[F_KW] && !strcmp(d->kw, "k0"));
    default: return true;
    }
}

/* Parse and run body on each shard sh[0..nsh): their requests into rq[]
 * and partial results into parts[] (caller frees both).  False when a
 * parse failed (a failure is counted). */
static bool run_shards(const fds_strbuf *body, shard *sh, int nsh,
                       const fds_mapping *m, fds_search_request **rq,
                       fds_agg_result **parts)
{
    for (int s = 0; s < nsh; s++) {
        fds_err err;
        fds_err_clear(&err);
        ASSERTF(fds_search_parse(body->p, body->len, m, 0, &rq[s], &err) == 0,
                "%s: %s", body->p, err.reason);
        if (!rq[s])
            return false;
        fds_search_result res;
        ASSERTF(fds_search_execute(rq[s], sh[s].segs, sh[s].nseg, &res, &err) == 0,
                "%s: %s", body->p, err.reason);
        parts[s] = res.aggs;
        res.aggs = NULL;
        fds_search_result_free(&res);
    }
    return true;
}

/* One tree under query q over shards sh[0..nsh) (docs [0, split) and
 * [split, NDOCS)). */
static void check_tree(int round, int ti, const gagg *g, int q, shard *sh,
                       int nsh, const fds_mapping *m)
{
    fds_strbuf body = FDS_STRBUF_INIT;
    fds_strbuf_printf(&body, "{\"size\":%u,\"query\":%s,\"aggs\":{", rnd(3),
                      QUERIES[q]);
    to_json(g, &body, nsh > 1 ? 1000 : 0);
    fds_strbuf_puts(&body, "}}");
    fds_agg_result *parts[2] = {NULL, NULL};
    fds_search_request *rq[2] = {NULL, NULL};
    if (!run_shards(&body, sh, nsh, m, rq, parts))
        goto out;
    fds_agg_result *red = NULL;
    fds_err err;
    fds_err_clear(&err);
    /* top_hits' hits: segment numbers of the shards' segments in a row */
    fds_search_segment segs[2 * SEG_MAX];
    unsigned nseg = 0;
    for (int s = 0; s < nsh; s++) {
        fds_aggs_rebase(parts[s], nseg);
        for (unsigned k = 0; k < sh[s].nseg; k++)
            segs[nseg++] = sh[s].segs[k];
    }
    rs_segs = segs;
    int rc = fds_aggs_reduce(rq[0]->aggs, parts, (size_t)nsh, &red, &err);
    /* brute force over the live matching docs */
    int *ix = malloc(NDOCS * sizeof *ix), n = 0;
    for (int i = 0; i < NDOCS; i++)
        if (D[i].live && query_match(q, &D[i]))
            ix[n++] = i;
    fds_strbuf want = FDS_STRBUF_INIT, got = FDS_STRBUF_INIT;
    bf_eval(g, ix, n, &want);
    if (rc == FDS_ETOOBIG) {
        /* only when the brute force has that many buckets too */
        ASSERTF(want.len > 65536, "round %d tree %d: too many buckets", round, ti);
    } else {
        ASSERTF(rc == 0, "reduce: %s", err.reason);
        if (red)
            rs_eval(g, red->b[0].subs[0], &got);
        ASSERTF(got.len == want.len && !memcmp(got.p, want.p, got.len),
                "round %d tree %d (%d shards, %u+%u segments)\n%s\nwant %s\ngot  %s",
                round, ti, nsh, sh[0].nseg, nsh > 1 ? sh[1].nseg : 0, body.p,
                want.p, got.p);
    }
    if (getenv("FDS_AGGS_SHOW"))
        printf("%s\n  %.*s\n", body.p, (int)(want.len < 600 ? want.len : 600), want.p);
    free(ix);
    fds_strbuf_free(&want);
    fds_strbuf_free(&got);
    fds_agg_result_free(red);
out:
    for (int s = 0; s < nsh; s++) {
        fds_agg_result_free(parts[s]);
        fds_search_request_free(rq[s]);
    }
    fds_strbuf_free(&body);
}

/* composite over shards sh[0..nsh), paged with after until empty: every
 * (kw2, num histogram key) pair of the live matching docs once, in key
 * order (kw2 ascending or descending), with its count. */
typedef struct ctup {
    char k[8];
    double h;
    int n;
} ctup;

static int ctup_desc;
static int ctup_cmp(const void *pa, const void *pb)
{
    const ctup *x = pa, *y = pb;
    int c = strcmp(x->k, y->k);
    if (ctup_desc)
        c = -c;
    return c ? c : (x->h < y->h ? -1 : x->h > y->h);
}

static void check_composite(int round, shard *sh, int nsh, const fds_mapping *m)
{
    int size = 1 + (int)rnd(8), desc = (int)rnd(2), q = (int)rnd(4);
    double iv = (double[]){25, 50, 100}[rnd(3)];
    ctup *want = calloc(64 * 32, sizeof *want);
    int nw = 0;
    for (int i = 0; i < NDOCS; i++) {
        const doc *d = &D[i];
        if (!d->live || !query_match(q, d) || !d->has[F_KW2] || !d->has[F_NUM])
            continue;
        double h = floor((double)d->num / iv) * iv;
        int k = 0;
        while (k < nw && (strcmp(want[k].k, d->kw2) || want[k].h != h))
            k++;
        if (k == nw) {
            snprintf(want[nw].k, sizeof want[nw].k, "%s", d->kw2);
            want[nw++].h = h;
        }
        want[k].n++;
    }
    ctup_desc = desc;
    qsort(want, (size_t)nw, sizeof *want, ctup_cmp);
    int got = 0;
    char after[64] = "";
    for (int page = 0; page < 1000 && fds_test_failures < 10; page++) {
        fds_strbuf body = FDS_STRBUF_INIT;
        fds_strbuf_printf(&body, "{\"size\":0,\"query\":%s,\"aggs\":{\"c\":"
                          "{\"composite\":{\"size\":%d,\"sources\":[{\"k\":{\"terms\":"
                          "{\"field\":\"kw2\",\"order\":\"%s\"}}},{\"h\":{\"histogram\":"
                          "{\"field\":\"num\",\"interval\":%g}}}]%s}}}}",
                          QUERIES[q], size, desc ? "desc" : "asc", iv, after);
        fds_agg_result *parts[2] = {NULL, NULL};
        fds_search_request *rq[2] = {NULL, NULL};
        if (!run_shards(&body, sh, nsh, m, rq, parts)) {
            fds_strbuf_free(&body);
            break;
        }
        fds_agg_result *red = NULL;
        fds_err err;
        fds_err_clear(&err);
        ASSERT(fds_aggs_reduce(rq[0]->aggs, parts, (size_t)nsh, &red, &err) == 0);
        const fds_agg_result *c = red->b[0].subs[0];
        ASSERTF(c->nb <= (size_t)size, "round %d: page of %zu > %d", round, c->nb, size);
        for (size_t i = 0; i < c->nb; i++, got++) {
            const fds_agg_bucket *b = &c->b[i];
            ASSERTF(got < nw && !strcmp(b->ck[0].s, want[got].k) &&
                    b->ck[1].d == want[got].h && (int)b->doc_count == want[got].n,
                    "round %d composite bucket %d: got (%s, %g): %llu, want (%s, %g): %d\n%s",
                    round, got, b->ck[0].s, b->ck[1].d, (unsigned long long)b->doc_count,
                    got < nw ? want[got].k : "-", got < nw ? want[got].h : 0,
                    got < nw ? want[got].n : 0, body.p);
        }
        bool done = c->nb == 0;
        if (!done)
            snprintf(after, sizeof after, ",\"after\":{\"k\":\"%s\",\"h\":%.17g}",
                     c->b[c->nb - 1].ck[0].s, c->b[c->nb - 1].ck[1].d);
        fds_agg_result_free(red);
        for (int s = 0; s < nsh; s++) {
            fds_agg_result_free(parts[s]);
            fds_search_request_free(rq[s]);
        }
        fds_strbuf_free(&body);
        if (done)
            break;
    }
    ASSERTF(got == nw, "round %d composite: %d buckets of %d", round, got, nw);
    free(want);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : NROUNDS;
    if (argc > 2)
        rng = strtoull(argv[2], NULL, 0) | 1;
    fds_mapping *m = qt_mapping(MAPPING);
    char dir[] = "/tmp/fds-aggprop-XXXXXX";
    ASSERT(mkdtemp(dir) != NULL);
    int trees = 0;
    for (int r = 0; r < rounds && fds_test_failures < 10; r++) {
        if (r % 4 < 2) /* rounds 0, 4, ... have no deletions */
            make_docs(r % 4 == 0 && r % 8 != 0);
        for (int i = 0; i < NDOCS; i++)
            D[i].live = r % 4 == 0 || rnd(15) != 0;
        int split = (int)rnd(NDOCS);
        shard one, two[2];
        build_shard(m, 0, NDOCS, &one, dir);
        build_shard(m, 0, split, &two[0], dir);
        build_shard(m, split, NDOCS, &two[1], dir);
        for (int t = 0; t < NTREES && fds_test_failures < 10; t++) {
            name_seq = 0;
            gagg *g = gen(0);
            int q = (int)rnd(4);
            check_tree(r, t, g, q, &one, 1, m);
            check_tree(r, t, g, q, two, 2, m);
            gfree(g);
            trees++;
        }
        check_composite(r, &one, 1, m);
        check_composite(r, two, 2, m);
        qt_shard_free(&one);
        qt_shard_free(&two[0]);
        qt_shard_free(&two[1]);
    }
    rmdir(dir);
    fds_mapping_free(m);
    printf("%d rounds, %d trees, each as 1 and 2 shards\n", rounds, trees);
    return fds_test_failures ? 1 : 0;
}
