/*
 * test_aggs_ordinals: the keyword aggregations by ordinals against the
 * generic paths and a brute force, on random data.
 *
 * A keyword terms without `missing`, include or exclude counts by global
 * ordinals (aggs/ordmap.c, buckets.c); the same request with an exclude
 * that matches no term takes the generic path (terms interned per
 * segment, buckets by hash).  Each round makes documents whose `url`
 * vocabulary grows (a new url now and then, old ones drawn with a skew),
 * a small keyword `st`, a long `n` and a date `ts`, each missing from some
 * docs, splits them into 1-5 segments at random cut points and deletes
 * some through the live bitsets; then random requests (terms on url with
 * random size, order, min_doc_count, with avg / sum / cardinality subs,
 * under terms on st and under a date_histogram) must render the same bytes
 * by both paths.  cardinality (per-owner bitsets of ordinals, metrics.c)
 * is checked against a sketch fed with the hashes of the distinct urls of
 * each bucket, computed here.  In rounds where some docs hold several urls
 * both paths must refuse the request.  Every other round the segments
 * share a reader cache (query.h): the global ordinals and term hashes are
 * then made by the first request and read by the next ones, each request
 * runs twice and must render the same bytes both times, the cache counts
 * the bytes it holds, and freeing it gives them all back.
 */
#include <stdint.h>
#include <unistd.h>

#include "aggs/aggs.h"
#include "aggs/hll.h"
#include "aggs_render.h"
#include "fds_strbuf.h"
#include "qtest.h"
#include "qtest_shard.h"
#include "query.h"
#include "ast/search_request.h"

#define NDOCS 4000
#define NROUNDS 24
#define NREQS 30
#define NST 5
#define BASE_MS 1767225600000ll /* 2026-01-01T00:00:00Z */
#define DAY_MS 86400000ll

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n) { return qt_rnd(&rng, n); }

typedef struct doc {
    uint32_t url, url2; /* url2: a second value (multi rounds), 0 none */
    int st;             /* -1: missing */
    bool has_url, has_n;
    long long n, ts;
    bool live;
    char json[160];
} doc;

static doc D[NDOCS];

/* every doc has n this round: a top-level terms with a sum-like sub
 * fuses them (buckets.c); the generic side adds a `missing` to the sub,
 * which changes nothing then but takes the metric's own path */
static bool full_n;

static const char MAPPING[] =
    "{\"properties\":{\"url\":{\"type\":\"keyword\"},\"st\":{\"type\":\"keyword\"},"
    "\"n\":{\"type\":\"long\"},\"ts\":{\"type\":\"date\"}}}";

/* docs with a growing url vocabulary (ids 1..), several urls in a few
 * when `multi` */
static void make_docs(bool multi)
{
    uint32_t nurl = 0;
    for (int i = 0; i < NDOCS; i++) {
        doc *d = &D[i];
        /* a new url one time in three, else an old one, skewed to the first */
        uint32_t r = rnd(nurl ? nurl : 1);
        d->url = !nurl || !rnd(3) ? ++nurl : 1 + (rnd(2) ? r * (r % 7) / 7 : r);
        d->url2 = multi && !rnd(50) ? 1 + rnd(nurl) : 0;
        d->has_url = rnd(12) != 0;
        d->st = rnd(15) ? (int)(rnd(3) ? 0 : 1 + rnd(NST - 1)) : -1;
        d->has_n = full_n || rnd(20) != 0;
        d->n = (long long)rnd(100000) - 1000;
        d->ts = BASE_MS + (long long)i * (9 * DAY_MS / NDOCS) + rnd(1000);
        char *p = d->json;
        size_t cap = sizeof d->json;
        int w = snprintf(p, cap, "{\"ts\":%lld", d->ts);
        if (d->has_url && d->url2)
            w += snprintf(p + w, cap - w, ",\"url\":[\"/u/%u\",\"/u/%u\"]", d->url, d->url2);
        else if (d->has_url)
            w += snprintf(p + w, cap - w, ",\"url\":\"/u/%u\"", d->url);
        if (d->st >= 0)
            w += snprintf(p + w, cap - w, ",\"st\":\"s%d\"", d->st);
        if (d->has_n)
            w += snprintf(p + w, cap - w, ",\"n\":%lld", d->n);
        snprintf(p + w, cap - w, "}");
    }
}

/* all docs as 1..QT_SEG_MAX random segments (deleting per D[].live) */
static void build_shard(fds_mapping *m, qt_shard *sh, const char *dir)
{
    unsigned nseg = 1 + rnd(QT_SEG_MAX);
    int cuts[QT_SEG_MAX + 1] = {0};
    cuts[nseg] = NDOCS;
    for (unsigned s = 1; s < nseg; s++)
        cuts[s] = cuts[s - 1] + (int)rnd((uint32_t)(NDOCS - cuts[s - 1]) + 1);
    qt_shard_build(m, cuts, nseg, D[0].json, &D[0].live, sizeof D[0], sh, dir);
}

static const char *QUERIES[] = {
    "{\"match_all\":{}}",
    "{\"term\":{\"st\":\"s0\"}}",
    "{\"range\":{\"n\":{\"gte\":0,\"lt\":50000}}}",
    /* a short window: few slots of a top-level terms (its list) */
    "{\"range\":{\"ts\":{\"gte\":1767312000000,\"lt\":1767316320000}}}",
};

static bool query_match(int q, const doc *d)
{
    switch (q) {
    case 1: return d->st == 0;
    case 2: return d->has_n && d->n >= 0 && d->n < 50000;
    case 3: return d->ts >= BASE_MS + DAY_MS && d->ts < BASE_MS + DAY_MS + DAY_MS / 20;
    default: return true;
    }
}

/* Run body over sh; the rendered aggregations into out (reset), or false
 * when the search refused it.  keep (may be NULL): the reduced result and
 * the request it refers to, for the caller to free. */
static bool run(const char *body, qt_shard *sh, const fds_mapping *m, fds_strbuf *out,
                fds_agg_result **keep, fds_search_request **keep_rq)
{
    fds_err err;
    fds_err_clear(&err);
    fds_search_request *rq = NULL;
    ASSERTF(fds_search_parse(body, strlen(body), m, 0, &rq, &err) == 0, "%s: %s", body,
            err.reason);
    if (!rq)
        return false;
    fds_search_result res;
    int rc = fds_search_execute(rq, sh->segs, sh->nseg, &res, &err);
    out->len = 0;
    fds_agg_result *red = NULL;
    if (!rc) {
        ASSERTF(fds_aggs_reduce(rq->aggs, &res.aggs, 1, &red, &err) == 0, "%s",
                err.reason);
        ASSERT(fds__aggs_render(out, red, false, NULL, NULL, &err) == 0);
        fds_search_result_free(&res);
    }
    if (keep) {
        *keep = red;
        *keep_rq = rq;
        return rc == 0;
    }
    fds_agg_result_free(red);
    fds_search_request_free(rq);
    return rc == 0;
}

/* A random request over url; `opt` goes into every keyword terms (the
 * generic path: an exclude of no term). */
static void make_body(fds_strbuf *b, int shape, int q, const char *opt, bool generic)
{
    static const char *ORD[] = {"{\"_count\":\"desc\"}", "{\"_count\":\"asc\"}",
                                "{\"_key\":\"asc\"}", "{\"_key\":\"desc\"}",
                                "[{\"_count\":\"desc\"},{\"_key\":\"desc\"}]",
                                "{\"a\":\"desc\"}"};
    const char *mopt = generic && full_n ? ",\"missing\":0" : "";
    static const char *MET[] = {"avg", "sum", "max", "min"};
    char met[96];
    snprintf(met, sizeof met, ",\"aggs\":{\"a\":{\"%s\":{\"field\":\"n\"%s}}}",
             MET[rnd(4)], mopt);
    const char *SUB[] = {"", met, met,
                         ",\"aggs\":{\"a\":{\"cardinality\":{\"field\":\"url\"}}}"};
    unsigned size = 1 + rnd(40), mdc = 1 + rnd(3), sub = rnd(4);
    unsigned ord = rnd(sub ? 6 : 5);
    char ss[32] = "";
    if (!rnd(3))
        snprintf(ss, sizeof ss, ",\"shard_size\":%u", size + rnd(20));
    fds_strbuf t = FDS_STRBUF_INIT;
    fds_strbuf_printf(&t,
                      "{\"terms\":{\"field\":\"url\",\"size\":%u,\"order\":%s,"
                      "\"min_doc_count\":%u%s}%s}",
                      size, ORD[ord], mdc, ss, SUB[sub]);
    /* the option inside the terms object: after its field */
    fds_strbuf u = FDS_STRBUF_INIT;
    char *f = strstr(t.p, "\"field\":\"url\"");
    fds_strbuf_printf(&u, "%.*s%s%s", (int)(f - t.p), t.p, opt, f);
    fds_strbuf_printf(b, "{\"size\":0,\"query\":%s,\"aggs\":{\"o\":", QUERIES[q]);
    switch (shape) {
    case 0:
        fds_strbuf_puts(b, u.p);
        break;
    case 1:
        fds_strbuf_printf(b, "{\"terms\":{%s\"field\":\"st\"},\"aggs\":{\"u\":%s}}", opt,
                          u.p);
        break;
    default:
        fds_strbuf_printf(b, "{\"date_histogram\":{\"field\":\"ts\",\"fixed_interval\":"
                             "\"1d\"},\"aggs\":{\"u\":%s}}", u.p);
        break;
    }
    fds_strbuf_puts(b, "}}");
    fds_strbuf_free(&t);
    fds_strbuf_free(&u);
}

/* Both paths of one random request render the same bytes (or both
 * refuse it: a multi-valued field). */
static void check_terms(int round, qt_shard *sh, const fds_mapping *m, bool multi)
{
    int shape = (int)rnd(3), q = (int)rnd(4);
    uint64_t save = rng;
    fds_strbuf a = FDS_STRBUF_INIT, b = FDS_STRBUF_INIT;
    make_body(&a, shape, q, "", false);
    rng = save; /* the same draws */
    make_body(&b, shape, q, "\"exclude\":[\"\\u0001none\"],", true);
    fds_strbuf ra = FDS_STRBUF_INIT, rb = FDS_STRBUF_INIT;
    bool oka = run(a.p, sh, m, &ra, NULL, NULL), okb = run(b.p, sh, m, &rb, NULL, NULL);
    if (sh->segs[0].cache) { /* again, from what the first run cached */
        fds_strbuf rc = FDS_STRBUF_INIT;
        ASSERTF(run(a.p, sh, m, &rc, NULL, NULL) == oka, "round %d: cached run\n%s",
                round, a.p);
        ASSERTF(rc.len == ra.len && !memcmp(rc.p, ra.p, ra.len),
                "round %d: cached run differs\n%s\nfirst  %s\ncached %s", round, a.p,
                ra.p, rc.p);
        fds_strbuf_free(&rc);
    }
    ASSERTF(oka == okb, "round %d: ordinals %s, generic %s\n%s", round,
            oka ? "ran" : "refused", okb ? "ran" : "refused", a.p);
    ASSERTF(oka || multi, "round %d: refused without several values\n%s", round, a.p);
    ASSERTF(ra.len == rb.len && !memcmp(ra.p, rb.p, ra.len),
            "round %d (%u segments)\n%s\nordinals %s\ngeneric  %s", round, sh->nseg,
            a.p, ra.p, rb.p);
    fds_strbuf_free(&a);
    fds_strbuf_free(&b);
    fds_strbuf_free(&ra);
    fds_strbuf_free(&rb);
}

/* The sketch of the distinct urls of the live docs matching q and in
 * bucket st (-2: any). */
static uint64_t bf_card(int q, int st, uint32_t thr)
{
    fds_hll *h = fds_hll_create(thr);
    uint8_t *seen = calloc(NDOCS + 2, 1);
    for (int i = 0; i < NDOCS; i++) {
        const doc *d = &D[i];
        if (!d->live || !query_match(q, d) || !d->has_url || (st != -2 && d->st != st) ||
            seen[d->url])
            continue;
        seen[d->url] = 1;
        char s[32];
        int n = snprintf(s, sizeof s, "/u/%u", d->url);
        ASSERT(fds_hll_add(h, fds_hll_hash_bytes(s, (size_t)n)) == 0);
    }
    uint64_t c = fds_hll_cardinality(h);
    fds_hll_free(h);
    free(seen);
    return c;
}

/* cardinality of url, at the top and by st, against bf_card. */
static void check_card(int round, qt_shard *sh, const fds_mapping *m)
{
    int q = (int)rnd(4);
    uint32_t thr = (uint32_t[]){10, 100, 3000}[rnd(3)];
    fds_strbuf body = FDS_STRBUF_INIT, out = FDS_STRBUF_INIT;
    fds_strbuf_printf(&body, "{\"size\":0,\"query\":%s,\"aggs\":{\"c\":{\"cardinality\":"
                             "{\"field\":\"url\",\"precision_threshold\":%u}},"
                             "\"s\":{\"terms\":{\"field\":\"st\",\"size\":10},\"aggs\":"
                             "{\"c\":{\"cardinality\":{\"field\":\"url\","
                             "\"precision_threshold\":%u}}}}}}", QUERIES[q], thr, thr);
    fds_agg_result *red = NULL;
    fds_search_request *rq = NULL;
    ASSERTF(run(body.p, sh, m, &out, &red, &rq), "round %d: %s refused", round, body.p);
    const fds_agg_result *c = red->b[0].subs[0], *s = red->b[0].subs[1];
    uint64_t want = bf_card(q, -2, thr);
    ASSERTF((uint64_t)fds_agg_metric_value(c, FDS_AGG_STAT_VALUE) == want,
            "round %d: cardinality %g, want %llu\n%s", round,
            fds_agg_metric_value(c, FDS_AGG_STAT_VALUE), (unsigned long long)want, body.p);
    for (size_t i = 0; i < s->nb; i++) {
        int st = atoi(s->b[i].key_s + 1);
        want = bf_card(q, st, thr);
        double got = fds_agg_metric_value(s->b[i].subs[0], FDS_AGG_STAT_VALUE);
        ASSERTF((uint64_t)got == want, "round %d: st %s cardinality %g, want %llu\n%s",
                round, s->b[i].key_s, got, (unsigned long long)want, body.p);
    }
    fds_agg_result_free(red);
    fds_search_request_free(rq);
    fds_strbuf_free(&body);
    fds_strbuf_free(&out);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : NROUNDS;
    if (argc > 2)
        rng = strtoull(argv[2], NULL, 0) | 1;
    fds_mapping *m = qt_mapping(MAPPING);
    char dir[] = "/tmp/fds-aggord-XXXXXX";
    ASSERT(mkdtemp(dir) != NULL);
    int reqs = 0;
    for (int r = 0; r < rounds && fds_test_failures < 10; r++) {
        bool multi = r % 6 == 5;
        full_n = r % 2 == 0;
        make_docs(multi);
        for (int i = 0; i < NDOCS; i++)
            D[i].live = r % 3 == 0 || rnd(12) != 0;
        qt_shard sh;
        build_shard(m, &sh, dir);
        size_t held = fds_reader_cache_total_bytes();
        fds_reader_cache *rc = r % 2 ? fds_reader_cache_new() : NULL;
        for (unsigned s = 0; s < sh.nseg; s++)
            sh.segs[s].cache = rc;
        for (int t = 0; t < NREQS && fds_test_failures < 10; t++, reqs++)
            check_terms(r, &sh, m, multi);
        if (!multi) {
            check_card(r, &sh, m);
            if (rc)
                check_card(r, &sh, m);
        }
        ASSERTF(!rc || multi || fds_reader_cache_bytes(rc) > 0,
                "round %d: the cache holds no bytes", r);
        ASSERT(fds_reader_cache_total_bytes() == held + fds_reader_cache_bytes(rc));
        fds_reader_cache_unref(rc);
        ASSERTF(fds_reader_cache_total_bytes() == held, "round %d: %zu bytes left", r,
                fds_reader_cache_total_bytes() - held);
        qt_shard_free(&sh);
    }
    rmdir(dir);
    fds_mapping_free(m);
    printf("%d rounds, %d requests by both paths\n", rounds, reqs);
    return fds_test_failures ? 1 : 0;
}
