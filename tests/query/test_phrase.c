/*
 * test_phrase: term positions and phrase queries.
 *   - the positions codec (positions.h): round trips, truncated and
 *     overflowing input refused;
 *   - a version 4 segment file (tests/golden/sidx/v4.sidx, written before
 *     positions existed) still opens and answers a match, and a phrase on
 *     it is refused with Elasticsearch's "indexed without position data";
 *   - index_options: docs keeps tf 1, freqs and docs keep no positions;
 *   - a brute-force property test: random documents of a small vocabulary
 *     (some with several values, so position_increment_gap matters) in
 *     NSEG segments with random deletes, then the first two merged; every
 *     random phrase (exact, with repeats; sloppy, distinct terms) must
 *     match exactly the live docs an exhaustive evaluator finds over the
 *     documents' own tokens, exact phrases with the BM25 score of their
 *     phrase frequency and summed idfs, in both views (unmerged, merged);
 *     so must exact match_phrase_prefix queries whose last word is cut to
 *     a prefix ("ab" expands to ab and abc); and a page of a few hits
 *     that counts none or two (pruned by the k-th score) is the head of
 *     the exhaustive page, bit for bit.
 * Run: test_phrase GOLDEN_V4_SIDX [ROUNDS] [SEED].
 */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "index/positions.h"
#include "qtest.h"
#include "query.h"
#include "ast/search_request.h"
#include "index/sidx_int.h"

#define NSEG 3
#define DOCS_PER_SEG 120
#define VOCAB 5
#define MAX_TOK 10
#define MAX_VALUES 3
#define DELETE_ONE_IN 6
#define QUERIES 150

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* "ab" and "abc" share a prefix, for match_phrase_prefix */
static const char *const WORDS[VOCAB] = {"ab", "abc", "ef", "gh", "ij"};

static void tmp_path(char *p, size_t cap)
{
    snprintf(p, cap, "/tmp/fds-phrase-XXXXXX");
    close(mkstemp(p));
}

/* ---- codec ----------------------------------------------------------------- */

static void test_codec(void)
{
    uint32_t pos[] = {0, 1, 5, 127, 128, 300, 16384, 2000000, FDS_POSITION_MAX};
    uint32_t n = sizeof pos / sizeof *pos, out[16];
    uint8_t buf[FDS_POSITIONS_BOUND(16)];
    size_t len = fds_positions_encode(pos, n, buf);
    ASSERT(len <= FDS_POSITIONS_BOUND(n));
    ASSERT(fds_positions_decode(buf, buf + len, n, out) == (long)len);
    for (uint32_t i = 0; i < n; i++)
        ASSERT_EQ_U(out[i], pos[i]);
    ASSERT(fds_positions_decode(buf, buf + len, n, NULL) == (long)len);
    ASSERT(fds_positions_decode(buf, buf + len - 1, n, out) < 0); /* cut */
    ASSERT(fds_positions_decode(buf, buf + len, n + 1, out) < 0); /* short */
    /* a gap that passes the largest position */
    uint32_t big[] = {FDS_POSITION_MAX};
    len = fds_positions_encode(big, 1, buf);
    len += fds_positions_encode(big, 1, buf + len);
    ASSERT(fds_positions_decode(buf, buf + len, 2, out) < 0);
    /* a varint longer than 32 bits */
    uint8_t bad[] = {0xff, 0xff, 0xff, 0xff, 0x7f};
    ASSERT(fds_positions_decode(bad, bad + 5, 1, out) < 0);
    ASSERT(fds_positions_decode(buf, buf, 0, out) == 0);
    /* skipping: random runs of one- to five-byte gaps, every prefix of
     * them passed over as decoding them would, a cut run refused */
    for (int round = 0; round < 200; round++) {
        uint32_t p[64], cur = 0, m = 1 + rnd(64);
        for (uint32_t i = 0; i < m; i++) {
            static const uint32_t span[] = {100, 1000, 100000, 10000000, 300000000};
            cur += rnd(span[rnd(5)]);
            p[i] = cur < FDS_POSITION_MAX ? cur : FDS_POSITION_MAX;
        }
        uint8_t b[FDS_POSITIONS_BOUND(64)];
        size_t bl = fds_positions_encode(p, m, b);
        for (uint32_t k = 0; k <= m; k++) {
            long want = fds_positions_decode(b, b + bl, k, NULL);
            ASSERT_EQ_U((uint64_t)fds_positions_skip(b, b + bl, k), (uint64_t)want);
        }
        ASSERT(fds_positions_skip(b, b + bl, m + 1) < 0);
        ASSERT(fds_positions_skip(b, b + bl - 1, m) < 0);
    }
}

/* ---- search helpers ------------------------------------------------------- */

static int run(const char *body, const fds_mapping *m, fds_search_segment *segs,
               unsigned nseg, fds_search_result *res, fds_err *err)
{
    fds_search_request *rq = NULL;
    fds_err_clear(err);
    memset(res, 0, sizeof *res);
    int rc = fds_search_parse(body, strlen(body), m, 0, &rq, err);
    if (!rc)
        rc = fds_search_execute(rq, segs, nseg, res, err);
    fds_search_request_free(rq);
    return rc;
}

static void test_v4(const char *path)
{
    fds_sidx *s = NULL;
    fds_err err;
    ASSERTF(fds_sidx_open(path, &s, &err) == 0, "%s", err.reason);
    fds_mapping *m = fds_mapping_create();
    const char *map = "{\"properties\":{\"msg\":{\"type\":\"text\"}}}";
    ASSERT(fds_mapping_merge_json(m, map, strlen(map), &err) == 0);
    fds_search_segment seg = {.sidx = s};
    fds_search_result r;
    /* docs: "the quick brown fox", "quick fox brown", ["brown", "fox jumps"] */
    ASSERT(run("{\"query\":{\"match\":{\"msg\":\"fox\"}}}", m, &seg, 1, &r,
               &err) == 0);
    ASSERT_EQ_U(r.total, 3u);
    fds_search_result_free(&r);
    ASSERT(run("{\"query\":{\"match_phrase\":{\"msg\":\"quick brown\"}}}", m,
               &seg, 1, &r, &err) == FDS_EINVAL);
    ASSERT(err.kind == FDS_KIND_QUERY_SHARD);
    ASSERTF(strstr(err.reason, "field:[msg] was indexed without position data"),
            "%s", err.reason);
    /* one term is no phrase: it still runs */
    ASSERT(run("{\"query\":{\"match_phrase\":{\"msg\":\"quick\"}}}", m, &seg, 1,
               &r, &err) == 0);
    ASSERT_EQ_U(r.total, 2u);
    fds_search_result_free(&r);
    fds_mapping_free(m);
    fds_sidx_close(s);
}

static void test_index_options(void)
{
    static const char *map =
        "{\"properties\":{\"d\":{\"type\":\"text\",\"index_options\":\"docs\"},"
        "\"f\":{\"type\":\"text\",\"index_options\":\"freqs\"},"
        "\"p\":{\"type\":\"text\"}}}";
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    ASSERT(fds_mapping_merge_json(m, map, strlen(map), &err) == 0);
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    const char *doc = "{\"d\":\"x x y\",\"f\":\"x x y\",\"p\":\"x x y\"}";
    ASSERT(fds_sidx_writer_add(w, 0, "a", 1, (const uint8_t *)doc, strlen(doc),
                               &err) == 0);
    char path[64];
    tmp_path(path, sizeof path);
    ASSERT(fds_sidx_writer_write(w, path, &err) == 0);
    fds_sidx_writer_free(w);
    fds_sidx *s;
    ASSERT(fds_sidx_open(path, &s, &err) == 0);
    const fds_sfield *d = fds__sidx_field(s, "d", 1), *f = fds__sidx_field(s, "f", 1),
                     *p = fds__sidx_field(s, "p", 1);
    ASSERT(d && f && p && !d->pos && !f->pos && p->pos);
    ASSERT(!(d->flags & FDS_SIDX_F_POS) && (p->flags & FDS_SIDX_F_POS));
    fds_sterm t;
    ASSERT(fds__sidx_term(s, d, "x", 1, &t) == 0 && t.one_tf == 1);
    ASSERT_EQ_U(d->sum_ttf, 2u);
    ASSERT_EQ_U(f->sum_ttf, 3u);
    fds_search_segment seg = {.sidx = s};
    fds_search_result r;
    ASSERT(run("{\"query\":{\"match_phrase\":{\"f\":\"x y\"}}}", m, &seg, 1, &r,
               &err) == FDS_EINVAL);
    ASSERT(strstr(err.reason, "field:[f] was indexed without position data"));
    ASSERT(run("{\"query\":{\"match_phrase\":{\"p\":\"x y\"}}}", m, &seg, 1, &r,
               &err) == 0);
    ASSERT_EQ_U(r.total, 1u);
    fds_search_result_free(&r);
    /* offsets and unknown values are refused */
    fds_mapping *m2 = fds_mapping_create();
    ASSERT(fds_mapping_merge_json(m2, "{\"properties\":{\"o\":{\"type\":\"text\","
                                  "\"index_options\":\"offsets\"}}}", 62, &err) != 0);
    ASSERT(fds_mapping_merge_json(m2, "{\"properties\":{\"o\":{\"type\":\"text\","
                                  "\"index_phrases\":true}}}", 58, &err) != 0);
    fds_mapping_free(m2);
    fds_sidx_close(s);
    unlink(path);
    fds_mapping_free(m);
}

/* ---- property test --------------------------------------------------------- */

typedef struct tdoc {
    char json[512];
    uint8_t tok[MAX_VALUES * MAX_TOK];
    uint32_t pos[MAX_VALUES * MAX_TOK];
    unsigned ntok;
} tdoc;

static tdoc docs[NSEG][DOCS_PER_SEG];
static uint8_t live[NSEG][(DOCS_PER_SEG + 7) / 8 + 8];

static void make_doc(tdoc *d, unsigned id)
{
    unsigned nv = 1 + (rnd(4) == 0 ? rnd(MAX_VALUES) : 0);
    size_t o = (size_t)snprintf(d->json, sizeof d->json, "{\"id\":%u,\"t\":%s", id,
                                nv > 1 ? "[" : "");
    uint32_t next = 0;
    d->ntok = 0;
    for (unsigned v = 0; v < nv; v++) {
        if (v)
            next += FDS_POSITION_INCREMENT_GAP;
        o += (size_t)snprintf(d->json + o, sizeof d->json - o, "%s\"", v ? "," : "");
        unsigned nt = rnd(MAX_TOK + 1);
        for (unsigned k = 0; k < nt; k++) {
            uint8_t w = (uint8_t)rnd(VOCAB);
            d->tok[d->ntok] = w;
            d->pos[d->ntok++] = next++;
            o += (size_t)snprintf(d->json + o, sizeof d->json - o, "%s%s",
                                  k ? " " : "", WORDS[w]);
        }
        o += (size_t)snprintf(d->json + o, sizeof d->json - o, "\"");
    }
    snprintf(d->json + o, sizeof d->json - o, "%s}", nv > 1 ? "]" : "");
}

/* Exact phrase frequency of q[0..n) in d: starting positions p with q[k]
 * at p + k. */
static const char *g_prefix; /* the last term of a prefix phrase, or NULL */

static bool tok_is(uint8_t tok, const uint8_t *q, unsigned k, unsigned n)
{
    if (g_prefix && k == n - 1)
        return !strncmp(WORDS[tok], g_prefix, strlen(g_prefix));
    return tok == q[k];
}

static unsigned ref_exact(const tdoc *d, const uint8_t *q, unsigned n)
{
    unsigned f = 0;
    for (unsigned i = 0; i < d->ntok; i++) {
        if (!tok_is(d->tok[i], q, 0, n))
            continue;
        bool ok = true;
        for (unsigned k = 1; k < n && ok; k++) {
            bool hit = false;
            for (unsigned j = 0; j < d->ntok && !hit; j++)
                hit = tok_is(d->tok[j], q, k, n) && d->pos[j] == d->pos[i] + k;
            ok = hit;
        }
        f += ok;
    }
    return f;
}

/* Is there a choice of one occurrence per term (distinct terms) whose
 * shifted positions pos - k span at most slop? */
static bool ref_sloppy(const tdoc *d, const uint8_t *q, unsigned n, unsigned slop,
                       unsigned k, int64_t lo, int64_t hi)
{
    if (k == n)
        return hi - lo <= (int64_t)slop;
    for (unsigned j = 0; j < d->ntok; j++) {
        if (d->tok[j] != q[k])
            continue;
        int64_t p = (int64_t)d->pos[j] - k;
        int64_t l = k ? (p < lo ? p : lo) : p, h = k ? (p > hi ? p : hi) : p;
        if (h - l <= (int64_t)slop && ref_sloppy(d, q, n, slop, k + 1, l, h))
            return true;
    }
    return false;
}

typedef struct view {
    fds_search_segment seg[NSEG];
    unsigned nseg;
    /* per view segment, the source docs of its doc ids */
    const tdoc *src[NSEG][NSEG * DOCS_PER_SEG];
    uint32_t max_doc[NSEG];
} view;

static float ref_score(const view *v, const uint8_t *q, unsigned n, unsigned freq,
                       const tdoc *d)
{
    uint64_t N = 0, ttf = 0, df[VOCAB] = {0};
    for (unsigned s = 0; s < v->nseg; s++)
        for (uint32_t i = 0; i < v->max_doc[s]; i++) {
            const tdoc *x = v->src[s][i];
            N += x->ntok > 0;
            ttf += x->ntok;
            bool seen[VOCAB] = {false};
            for (unsigned t = 0; t < x->ntok; t++)
                seen[x->tok[t]] = true;
            for (unsigned w = 0; w < VOCAB; w++)
                df[w] += seen[w];
        }
    float idf = 0;
    for (unsigned k = 0; k < n; k++)
        for (unsigned w = 0; w < VOCAB; w++) /* a prefix: every expansion */
            if ((g_prefix && k == n - 1) ? df[w] && tok_is((uint8_t)w, q, k, n)
                                         : w == q[k])
                idf += (float)log(1.0 + ((double)N - (double)df[w] + 0.5) /
                                            ((double)df[w] + 0.5));
    float avgdl = (float)((double)ttf / (double)N);
    float dl = (float)fds__norm_decode(fds__norm_encode(d->ntok));
    float ninv = 1.0f / (FDS_BM25_K1 * ((1 - FDS_BM25_B) + FDS_BM25_B * dl / avgdl));
    float w = (1.0f + FDS_BM25_K1) * idf; /* LegacyBM25Similarity's boost */
    return w - w / (1.0f + (float)freq * ninv);
}

/* The top k of a page that counted nothing or a few hits (the phrase then
 * passes over docs that cannot beat the k-th score, positions unread:
 * fds__phrase_set_min_score) equals the first k hits, bit-identical
 * scores included, of the exhaustive page `all` of the same query (`body`
 * asks for 1000 hits, every one counted). */
static void check_pruned(const view *v, const fds_mapping *m, const char *body,
                         const fds_search_result *all)
{
    static const char *const HEAD = "{\"size\":1000,\"track_total_hits\":true,";
    size_t hl = strlen(HEAD);
    ASSERTF(!strncmp(body, HEAD, hl), "%s", body);
    for (int t = 0; t < 2; t++) {
        unsigned k = 1 + rnd(6);
        char b2[600];
        snprintf(b2, sizeof b2, "{\"size\":%u,\"track_total_hits\":%s,%s", k,
                 t ? "2" : "false", body + hl);
        fds_search_result r;
        fds_err err;
        ASSERTF(run(b2, m, (fds_search_segment *)v->seg, v->nseg, &r, &err) == 0,
                "%s: %s", b2, err.reason);
        size_t want = all->nhits < k ? all->nhits : k;
        ASSERTF(r.nhits == want, "%s: %zu hits want %zu", b2, r.nhits, want);
        for (size_t h = 0; h < r.nhits; h++)
            ASSERTF(r.hits[h].seg == all->hits[h].seg &&
                        r.hits[h].doc == all->hits[h].doc &&
                        r.hits[h].score == all->hits[h].score,
                    "%s: hit %zu is seg %u doc %u score %.9g, want seg %u doc "
                    "%u score %.9g", b2, h, r.hits[h].seg, r.hits[h].doc,
                    (double)r.hits[h].score, all->hits[h].seg,
                    all->hits[h].doc, (double)all->hits[h].score);
        fds_search_result_free(&r);
    }
}

static void check_view(const view *v, const fds_mapping *m, const uint8_t *q,
                       unsigned n, unsigned slop)
{
    char body[512];
    size_t o = (size_t)snprintf(body, sizeof body,
                                "{\"size\":1000,\"track_total_hits\":true,"
                                "\"query\":{\"match_phrase%s\":{\"t\":{\"slop\":%u,"
                                "\"query\":\"", g_prefix ? "_prefix" : "", slop);
    for (unsigned k = 0; k < n; k++)
        o += (size_t)snprintf(body + o, sizeof body - o, "%s%s", k ? " " : "",
                              g_prefix && k == n - 1 ? g_prefix : WORDS[q[k]]);
    snprintf(body + o, sizeof body - o, "\"}}}}");
    fds_search_result r;
    fds_err err;
    ASSERTF(run(body, m, (fds_search_segment *)v->seg, v->nseg, &r, &err) == 0,
            "%s: %s", body, err.reason);
    uint64_t want = 0;
    for (unsigned s = 0; s < v->nseg; s++)
        for (uint32_t i = 0; i < v->max_doc[s]; i++) {
            if (v->seg[s].live && !fds__bit(v->seg[s].live, i))
                continue;
            const tdoc *d = v->src[s][i];
            bool match = slop ? ref_sloppy(d, q, n, slop, 0, 0, 0)
                              : ref_exact(d, q, n) > 0;
            want += match;
            bool got = false;
            float score = 0;
            for (size_t h = 0; h < r.nhits; h++)
                if (r.hits[h].seg == s && r.hits[h].doc == i) {
                    got = true;
                    score = r.hits[h].score;
                }
            ASSERTF(got == match, "%s: seg %u doc %u %s (%s)", body, s, i,
                    match ? "missing" : "extra", d->json);
            if (got && !slop) {
                float e = ref_score(v, q, n, ref_exact(d, q, n), d);
                ASSERTF(fabsf(score - e) <= 1e-5f * e, "%s: %s score %g want %g",
                        body, d->json, (double)score, (double)e);
            }
            if (got && slop) { /* a sloppy freq is at most the exact count
                                  of windows: score in (0, weight) */
                ASSERTF(score > 0 && score < ref_score(v, q, n, 1u << 30, d) * 1.0001f,
                        "%s: score %g", body, (double)score);
            }
        }
    ASSERTF(r.total == want, "%s: total %llu want %llu", body,
            (unsigned long long)r.total, (unsigned long long)want);
    check_pruned(v, m, body, &r);
    fds_search_result_free(&r);
}

static void queries(const view *v, const fds_mapping *m)
{
    for (unsigned i = 0; i < QUERIES; i++) {
        uint8_t q[4];
        unsigned n = 2 + rnd(3);
        unsigned slop = rnd(3) == 0 ? 0 : rnd(4) == 0 ? 100 + rnd(4) : 1 + rnd(4);
        for (unsigned k = 0; k < n; k++) {
            q[k] = (uint8_t)rnd(VOCAB);
            if (slop) /* sloppy phrases of distinct terms (see the header) */
                for (unsigned j = 0; j < k; j++)
                    if (q[j] == q[k]) {
                        q[k] = (uint8_t)((q[k] + 1) % VOCAB);
                        j = (unsigned)-1;
                    }
        }
        check_view(v, m, q, n, slop);
        if (!slop) { /* the same phrase with its last word cut to a prefix */
            static const char *const PREFIXES[] = {"ab", "a", "e"};
            g_prefix = PREFIXES[rnd(3)];
            check_view(v, m, q, n, 0);
            g_prefix = NULL;
        }
    }
}

static void test_property(unsigned rounds)
{
    for (unsigned round = 0; round < rounds; round++) {
        fds_mapping *m = fds_mapping_create();
        fds_err err;
        const char *map = "{\"properties\":{\"t\":{\"type\":\"text\"}}}";
        ASSERT(fds_mapping_merge_json(m, map, strlen(map), &err) == 0);
        char paths[NSEG + 1][64];
        fds_sidx *sx[NSEG + 1];
        view un = {.nseg = NSEG};
        for (unsigned s = 0; s < NSEG; s++) {
            fds_sidx_writer *w = fds_sidx_writer_create(m);
            memset(live[s], 0, sizeof live[s]);
            for (unsigned i = 0; i < DOCS_PER_SEG; i++) {
                make_doc(&docs[s][i], s * DOCS_PER_SEG + i);
                char id[16];
                snprintf(id, sizeof id, "%u", s * DOCS_PER_SEG + i);
                ASSERTF(fds_sidx_writer_add(w, i, id, strlen(id),
                                            (const uint8_t *)docs[s][i].json,
                                            strlen(docs[s][i].json), &err) == 0,
                        "%s", docs[s][i].json);
                if (rnd(DELETE_ONE_IN))
                    live[s][i / 8] |= (uint8_t)(1u << (i % 8));
                un.src[s][i] = &docs[s][i];
            }
            tmp_path(paths[s], sizeof paths[s]);
            ASSERT(fds_sidx_writer_write(w, paths[s], &err) == 0);
            fds_sidx_writer_free(w);
            ASSERT(fds_sidx_open(paths[s], &sx[s], &err) == 0);
            un.seg[s] = (fds_search_segment){.sidx = sx[s], .live = live[s]};
            for (unsigned i = 0; i < DOCS_PER_SEG; i++)
                un.seg[s].deleted += !((live[s][i / 8] >> (i % 8)) & 1);
            un.max_doc[s] = DOCS_PER_SEG;
        }
        queries(&un, m);
        /* merge the first two (their deletes applied), keep the third */
        const fds_sidx *in[2] = {sx[0], sx[1]};
        const uint8_t *lv[2] = {live[0], live[1]};
        tmp_path(paths[NSEG], sizeof paths[NSEG]);
        ASSERTF(fds_sidx_merge(in, lv, 2, paths[NSEG], &err) == 0, "%s", err.reason);
        ASSERT(fds_sidx_open(paths[NSEG], &sx[NSEG], &err) == 0);
        view mv = {.nseg = 2};
        uint32_t md = 0;
        for (unsigned s = 0; s < 2; s++)
            for (uint32_t i = 0; i < DOCS_PER_SEG; i++)
                if (fds__bit(live[s], i))
                    mv.src[0][md++] = &docs[s][i];
        ASSERT_EQ_U(md, fds_sidx_max_doc(sx[NSEG]));
        mv.max_doc[0] = md;
        mv.seg[0] = (fds_search_segment){.sidx = sx[NSEG]};
        for (uint32_t i = 0; i < DOCS_PER_SEG; i++)
            mv.src[1][i] = &docs[2][i];
        mv.max_doc[1] = DOCS_PER_SEG;
        mv.seg[1] = un.seg[2];
        queries(&mv, m);
        for (unsigned s = 0; s <= NSEG; s++) {
            fds_sidx_close(sx[s]);
            unlink(paths[s]);
        }
        fds_mapping_free(m);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_phrase GOLDEN_V4_SIDX [ROUNDS] [SEED]\n");
        return 2;
    }
    unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 4;
    if (argc > 3)
        rng = strtoull(argv[3], NULL, 0);
    test_codec();
    test_v4(argv[1]);
    test_index_options();
    test_property(rounds);
    if (fds_test_failures)
        fprintf(stderr, "%d failure(s)\n", fds_test_failures);
    return fds_test_failures ? 1 : 0;
}
