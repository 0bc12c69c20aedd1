/*
 * test_synthgrow.c: unit tests of the growing-vocabulary model (datasets/
 * synthgrow.h) on the bundled sample (path in argv[1]).
 *
 * Covers the fixed-point fit of the sample's Heaps' law against the
 * floating-point least squares of datasets/heaps.py (beta to 0.01, K to 2%),
 * the fallback law of a sample too small to fit (beta 1: every document new),
 * argument errors (no sample, documents out of order), determinism (two
 * generators of one seed give the same documents, another seed others), and
 * new values' shapes on a crafted sample: a renewed product URL keeps its
 * path and image size, a new address is dotted public IPv4, and an agent
 * keeps "Mozilla/5.0" and the names glued to numbers (Win64).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_test.h"
#include "logparse.h"
#include "synthgrow.h"

#define SAMPLE_MAX_LINES 20000
#define DOCS 20000

typedef struct sample {
    char *text;
    fds_logrec *recs;
    size_t n;
} sample;

static int load_text(char *text, size_t len, sample *s)
{
    s->text = text;
    s->recs = calloc(SAMPLE_MAX_LINES, sizeof *s->recs);
    s->n = 0;
    for (size_t pos = 0; pos < len && s->n < SAMPLE_MAX_LINES;) {
        char *nl = memchr(text + pos, '\n', len - pos);
        size_t l = (nl ? (size_t)(nl - text) : len) - pos;
        if (fds_logparse_line(text + pos, l, &s->recs[s->n], NULL, NULL) == 0) s->n++;
        pos += l + 1;
    }
    return s->n ? 0 : -1;
}

static int load_file(const char *path, sample *s)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 8u << 20;
    char *buf = malloc(cap);
    size_t len = fread(buf, 1, cap, f);
    fclose(f);
    return load_text(buf, len, s);
}

static double q24(int64_t v) { return (double)v / (double)(1 << 24); }

static void test_fit(const sample *s)
{
    /* datasets/heaps.py on the bundled sample (docs/datasets.md) */
    static const double beta[4] = {0.9185, 0.7766, 0.7367, 0.7669};
    static const double k[4] = {1.515, 0.486, 0.309, 0.268};
    static const int field[4] = {FDS_SYNTHGROW_URL, FDS_SYNTHGROW_ADDR,
                                 FDS_SYNTHGROW_AGENT, FDS_SYNTHGROW_REFERRER};
    fds_synthgrow *g = NULL;
    ASSERT(fds_synthgrow_create(s->recs, s->n, 1, &g) == 0);
    for (int f = 0; f < 4; f++) {
        int64_t b, kk;
        fds_synthgrow_law(g, field[f], &b, &kk);
        if (q24(b) < beta[f] - 0.01 || q24(b) > beta[f] + 0.01 ||
            q24(kk) < k[f] * 0.98 || q24(kk) > k[f] * 1.02)
            FDS_TEST_FAIL("field %d: beta %.4f K %.4f, want %.4f %.3f", f,
                          q24(b), q24(kk), beta[f], k[f]);
    }
    fds_synthgrow_free(g);
}

static void test_errors(const sample *s)
{
    fds_synthgrow *g = NULL;
    ASSERT(fds_synthgrow_create(s->recs, 0, 1, &g) == FDS_EINVAL && !g);
    ASSERT(fds_synthgrow_create(s->recs, s->n, 1, &g) == 0);
    fds_logrec r;
    ASSERT(fds_synthgrow_doc(g, 2, &r) == FDS_EINVAL);
    ASSERT(fds_synthgrow_doc(g, 1, &r) == 0);
    ASSERT(fds_synthgrow_doc(g, 1, &r) == FDS_EINVAL);
    ASSERT(fds_synthgrow_doc(g, 2, &r) == 0);
    fds_synthgrow_free(g);
    fds_synthgrow_free(NULL);
}

/* The JSON of documents 1..n of generator g, concatenated (caller frees). */
static char *docs_json(fds_synthgrow *g, int n, size_t *len)
{
    size_t cap = 1 << 20, used = 0;
    char *out = malloc(cap);
    for (int i = 1; i <= n; i++) {
        fds_logrec r;
        if (fds_synthgrow_doc(g, (uint64_t)i, &r)) {
            FDS_TEST_FAIL("doc %d", i);
            break;
        }
        fds_logparse_derive(&r, "h", 1, (uint64_t)i);
        size_t need = fds_logparse_json_bound(&r), w = 0;
        while (used + need > cap) out = realloc(out, cap *= 2);
        ASSERT(fds_logparse_json(&r, out + used, cap - used, &w) == 0);
        used += w;
    }
    *len = used;
    return out;
}

static void test_determinism(const sample *s)
{
    fds_synthgrow *a = NULL, *b = NULL, *c = NULL;
    ASSERT(fds_synthgrow_create(s->recs, s->n, 5, &a) == 0);
    ASSERT(fds_synthgrow_create(s->recs, s->n, 5, &b) == 0);
    ASSERT(fds_synthgrow_create(s->recs, s->n, 6, &c) == 0);
    size_t la, lb, lc;
    char *ja = docs_json(a, DOCS, &la), *jb = docs_json(b, DOCS, &lb);
    char *jc = docs_json(c, DOCS, &lc);
    ASSERT(la == lb && memcmp(ja, jb, la) == 0);
    ASSERT(la != lc || memcmp(ja, jc, la) != 0);
    free(ja);
    free(jb);
    free(jc);
    fds_synthgrow_free(a);
    fds_synthgrow_free(b);
    fds_synthgrow_free(c);
}

static int has(fds_logslice s, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; i + n <= s.len; i++)
        if (!memcmp(s.ptr + i, lit, n)) return 1;
    return 0;
}

static int dotted_public_ipv4(fds_logslice s)
{
    unsigned o[4], k = 0;
    for (int i = 0; i < 4; i++) {
        unsigned v = 0, d = 0;
        while (k < s.len && s.ptr[k] >= '0' && s.ptr[k] <= '9') v = v * 10 + (unsigned)(s.ptr[k++] - '0'), d++;
        if (!d || d > 3 || v > 255) return 0;
        o[i] = v;
        if (i < 3 && (k >= s.len || s.ptr[k++] != '.')) return 0;
    }
    return k == s.len && o[0] != 0 && o[0] != 10 && o[0] != 127 && o[0] < 224 &&
           !(o[0] == 192 && o[1] == 168) && o[3] != 0 && o[3] != 255;
}

/* One line, repeated: too small to fit (beta 1), so every document is new. */
static void test_shapes(void)
{
    static const char line[] =
        "192.0.2.1 - - [22/Jan/2019:03:56:17 +0330] \"GET /product/31893/62100/"
        "%D8%B3%D8%B4%D9%88-%D8%AE%D8%A7%D9%86 HTTP/1.1\" 200 41483 \"-\" "
        "\"Mozilla/5.0 (Windows NT 6.1; Win64; x64) Chrome/71.0.3578.98\"\n"
        "192.0.2.1 - - [22/Jan/2019:03:56:18 +0330] \"GET /image/60844/"
        "productModel/200x200 HTTP/1.1\" 200 5667 \"-\" "
        "\"Mozilla/5.0 (Windows NT 6.1; Win64; x64) Chrome/71.0.3578.98\"\n";
    sample s;
    char *text = malloc(sizeof line);
    memcpy(text, line, sizeof line);
    ASSERT(load_text(text, sizeof line - 1, &s) == 0 && s.n == 2);
    fds_synthgrow *g = NULL;
    ASSERT(fds_synthgrow_create(s.recs, s.n, 1, &g) == 0);
    int64_t b, k;
    fds_synthgrow_law(g, FDS_SYNTHGROW_URL, &b, &k);
    ASSERT(b == 1 << 24);
    int products = 0, images = 0;
    for (int i = 1; i <= 200; i++) {
        fds_logrec r;
        ASSERT(fds_synthgrow_doc(g, (uint64_t)i, &r) == 0);
        if (has(r.url, "/product/")) {
            products++;
            ASSERT(has(r.url, "%D8") && r.url.len > 20);
        } else {
            images++;
            ASSERT(has(r.url, "/image/") && has(r.url, "/productModel/200x200"));
        }
        if (!dotted_public_ipv4(r.remote_addr))
            FDS_TEST_FAIL("address '%.*s'", (int)r.remote_addr.len, r.remote_addr.ptr);
        ASSERT(has(r.user_agent, "Mozilla/5.0 (Windows NT 6.") &&
               has(r.user_agent, "Win64; x64") && has(r.user_agent, "Chrome/"));
    }
    ASSERT(products > 50 && images > 50);
    fds_synthgrow_free(g);
    free(s.recs);
    free(text);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_synthgrow SAMPLE.log\n");
        return 2;
    }
    sample s;
    if (load_file(argv[1], &s)) {
        fprintf(stderr, "test_synthgrow: cannot read %s\n", argv[1]);
        return 1;
    }
    test_fit(&s);
    test_errors(&s);
    test_determinism(&s);
    test_shapes();
    free(s.recs);
    free(s.text);
    if (fds_test_failures) {
        fprintf(stderr, "test_synthgrow: %d failure(s)\n", fds_test_failures);
        return 1;
    }
    printf("test_synthgrow: ok\n");
    return 0;
}
