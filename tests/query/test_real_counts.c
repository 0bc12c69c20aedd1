/*
 * test_real_counts: index the real nginx sample into three segments through
 * the public interface (writer -> file -> reader), then check the counts the
 * project promises for it: method GET/HEAD/POST = 9803/175/22 and status
 * 200/404 = 9018/306, through the query DSL and the response writer.
 */
#include <stdint.h>
#include <unistd.h>

#include "search_render.h"
#include "qtest.h"
#include "query.h"

static qt_docs docs;
static fds_sidx *seg[3];
static fds_search_segment segs[3];
static fds_mapping *mapping;

static int fetch(void *arg, const fds_hit *hits, size_t n, const uint8_t **src,
                 size_t *len, fds_err *err)
{
    (void)arg;
    (void)err;
    for (size_t i = 0; i < n; i++) {
        size_t base = 0;
        for (uint32_t s = 0; s < hits[i].seg; s++)
            base += fds_sidx_max_doc(seg[s]);
        src[i] = (const uint8_t *)docs.json[base + hits[i].doc];
        len[i] = docs.len[base + hits[i].doc];
    }
    return 0;
}

static uint64_t count(const char *body, char **rendered)
{
    fds_err err;
    fds_err_clear(&err);
    fds_search_request *r;
    int rc = fds_search_parse(body, strlen(body), mapping, 0, &r, &err);
    if (rc) {
        fprintf(stderr, "parse %s: %s\n", body, err.reason);
        fds_test_failures++;
        return UINT64_MAX;
    }
    fds_search_result res;
    rc = fds_search_execute(r, segs, 3, &res, &err);
    ASSERT(rc == 0);
    if (rendered) {
        size_t n;
        *rendered = fds_search_render(r, &res, segs, "logs", 1, &(fds_hit_source){.fetch = fetch},
                                      &n, &err);
        ASSERT(*rendered != NULL);
    }
    uint64_t t = res.total;
    fds_search_result_free(&res);
    fds_search_request_free(r);
    return t;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "datasets/nginx-zanbil-access-10k.log";
    if (qt_load(path, &docs, 100000) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    ASSERT_EQ_U(docs.n, 10000);
    mapping = fds_mapping_create();
    char dir[] = "/tmp/fds-qtest-XXXXXX";
    ASSERT(mkdtemp(dir) != NULL);
    size_t per = (docs.n + 2) / 3, next = 0;
    for (int s = 0; s < 3; s++) {
        fds_sidx_writer *w = fds_sidx_writer_create(mapping);
        uint32_t d = 0;
        for (; next < docs.n && d < per; next++, d++) {
            char id[32];
            int il = snprintf(id, sizeof id, "doc-%zu", next);
            fds_err err;
            fds_err_clear(&err);
            int rc = fds_sidx_writer_add(w, d, id, (size_t)il,
                                         (const uint8_t *)docs.json[next],
                                         docs.len[next], &err);
            if (rc) {
                fprintf(stderr, "add %zu: %s\n", next, err.reason);
                fds_test_failures++;
            }
        }
        char p[256];
        snprintf(p, sizeof p, "%s/seg%d.sidx", dir, s);
        fds_err err;
        fds_err_clear(&err);
        ASSERT(fds_sidx_writer_write(w, p, &err) == 0);
        fds_sidx_writer_free(w);
        ASSERT(fds_sidx_open(p, &seg[s], &err) == 0);
        segs[s].sidx = seg[s];
        segs[s].live = NULL;
        unlink(p);
    }
    rmdir(dir);
    const char *tt = "\"track_total_hits\":true";
    char q[512];
    snprintf(q, sizeof q, "{\"query\":{\"match\":{\"method\":\"GET\"}},%s}", tt);
    ASSERT_EQ_U(count(q, NULL), 9803);
    snprintf(q, sizeof q, "{\"query\":{\"match\":{\"method\":\"HEAD\"}},%s}", tt);
    ASSERT_EQ_U(count(q, NULL), 175);
    snprintf(q, sizeof q, "{\"query\":{\"match\":{\"method\":\"POST\"}},%s}", tt);
    ASSERT_EQ_U(count(q, NULL), 22);
    snprintf(q, sizeof q, "{\"query\":{\"term\":{\"method.keyword\":\"GET\"}},%s}", tt);
    ASSERT_EQ_U(count(q, NULL), 9803);
    snprintf(q, sizeof q, "{\"query\":{\"match\":{\"status\":200}},%s}", tt);
    ASSERT_EQ_U(count(q, NULL), 9018);
    snprintf(q, sizeof q, "{\"query\":{\"match\":{\"status\":\"404\"}},%s}", tt);
    ASSERT_EQ_U(count(q, NULL), 306);
    snprintf(q, sizeof q, "{\"query\":{\"term\":{\"status\":404}},%s}", tt);
    ASSERT_EQ_U(count(q, NULL), 306);
    /* default track_total_hits: 10000, relation gte beyond it */
    ASSERT_EQ_U(count("{\"query\":{\"match_all\":{}}}", NULL), 10000);
    snprintf(q, sizeof q, "{\"query\":{\"bool\":{\"must\":[{\"match\":{\"method\":\"GET\"}}],"
             "\"filter\":[{\"term\":{\"status\":404}}]}},%s}", tt);
    uint64_t get404 = count(q, NULL);
    snprintf(q, sizeof q, "{\"query\":{\"bool\":{\"must\":[{\"term\":{\"status\":404}}],"
             "\"must_not\":[{\"match\":{\"method\":\"GET\"}}]}},%s}", tt);
    uint64_t not_get404 = count(q, NULL);
    ASSERT_EQ_U(get404 + not_get404, 306);
    char *out = NULL;
    count("{\"query\":{\"match\":{\"url\":\"/image/60844/productModel/200x200\"}},\"size\":3}",
          &out);
    ASSERT(out && strstr(out, "\"_source\":{\"@timestamp\""));
    ASSERT(out && strstr(out, "\"hits\":{\"total\":{\"value\":"));
    if (out)
        printf("%.600s\n", out);
    free(out);
    for (int s = 0; s < 3; s++)
        fds_sidx_close(seg[s]);
    fds_mapping_free(mapping);
    for (size_t i = 0; i < docs.n; i++)
        free(docs.json[i]);
    free(docs.json);
    free(docs.len);
    if (fds_test_failures)
        fprintf(stderr, "%d failure(s)\n", fds_test_failures);
    return fds_test_failures ? 1 : 0;
}
