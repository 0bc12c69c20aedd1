/*
 * test_by_query_scan.c: the by-query scan run by a caller of the engine
 * itself, with no HTTP layer in front: deletes of the matching documents
 * in batches, max_docs divided among slices, a version conflict that stops
 * the scan (its failure kept) or is counted with conflicts=proceed, the
 * source rewrite of a reindex, the progress report after each batch, a
 * cancel seen before the first batch, and the slice count's rule.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "by_query_scan.h"
#include "fds_test.h"
#include "store.h"

#define NDOCS 50

static char tmpl[] = "/tmp/fds-by-query-scan-XXXXXX";
static fds_store *st;

/* Index `name` of `shards` shards with documents {"n":i} of ids "0".."ndocs-1". */
static fds_index *make_index(const char *name, uint32_t shards, int ndocs)
{
    fds_err e;
    fds_err_clear(&e);
    fds_index_settings set;
    fds_index_settings_default(&set);
    set.number_of_shards = shards;
    fds_index *ix = NULL;
    if (fds_store_create_index(st, name, &set, NULL, &e) ||
        fds_store_get_index(st, name, &ix, NULL))
        return NULL;
    char ids[NDOCS][8], srcs[NDOCS][32];
    fds_write_op ops[NDOCS];
    fds_write_result res[NDOCS];
    for (int i = 0; i < ndocs; i++) {
        snprintf(ids[i], sizeof ids[i], "%d", i);
        snprintf(srcs[i], sizeof srcs[i], "{\"n\":%d}", i);
        ops[i] = (fds_write_op){.type = FDS_OP_INDEX, .id = ids[i],
                                .id_len = strlen(ids[i]), .src = (uint8_t *)srcs[i],
                                .src_len = strlen(srcs[i])};
    }
    if ((ndocs && fds_index_write(ix, ops, (size_t)ndocs, res, false, &e)) ||
        fds_index_refresh(ix, &e)) {
        fds_index_release(ix);
        return NULL;
    }
    return ix;
}

/* Is document `id` of ix there? */
static bool has_doc(fds_index *ix, const char *id)
{
    fds_doc d;
    fds_err e;
    fds_err_clear(&e);
    if (fds_index_get(ix, id, strlen(id), &d, &e))
        return false;
    free(d.src);
    return true;
}

static unsigned reports;
static void count_reports(void *arg, const fds_scan_counts *slices, uint32_t n)
{
    (void)arg;
    (void)slices;
    ASSERT_EQ(n, 2);
    reports++;
}

static void test_delete_in_batches(void)
{
    fds_index *ix = make_index("del", 1, NDOCS);
    REQUIRE(ix);
    fds_scan_spec s = {.mode = FDS_SCAN_DELETE, .from = ix,
                       .query = "{\"query\":{\"range\":{\"n\":{\"lt\":20}}}}",
                       .max_docs = UINT64_MAX, .batch = 7, .refresh = true};
    fds_scan_result r;
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_scan_run(&s, NULL, &r, &e), 0);
    ASSERT_EQ(r.nslices, 1);
    ASSERT_EQ(r.slices[0].total, 20);
    ASSERT_EQ(r.slices[0].deleted, 20);
    ASSERT_EQ(r.slices[0].batches, 3); /* 7 + 7 + 6 */
    ASSERT_EQ(r.nfailures, 0);
    ASSERT(!r.cancelled);
    ASSERT(!has_doc(ix, "0"));
    ASSERT(!has_doc(ix, "19"));
    ASSERT(has_doc(ix, "20"));
    fds_scan_result_free(&r);
    fds_index_release(ix);
}

static void test_slices_divide_max_docs(void)
{
    fds_index *ix = make_index("upd", 2, NDOCS);
    REQUIRE(ix);
    fds_scan_control ctl = {.progress = count_reports};
    atomic_init(&ctl.cancelled, false);
    fds_scan_spec s = {.mode = FDS_SCAN_UPDATE, .from = ix, .q = "n:[0 TO 100]",
                       .max_docs = 9, .batch = 2, .slices = 2};
    fds_scan_result r;
    fds_err e;
    fds_err_clear(&e);
    reports = 0;
    REQUIRE_EQ(fds_scan_run(&s, &ctl, &r, &e), 0);
    REQUIRE_EQ(r.nslices, 2);
    ASSERT_EQ(r.slices[0].updated, 5); /* Elasticsearch's division: 5 + 4 */
    ASSERT_EQ(r.slices[1].updated, 4);
    fds_scan_counts sum;
    fds_scan_counts_sum(r.slices, r.nslices, &sum);
    ASSERT_EQ(sum.total, 9);
    ASSERT_EQ(reports, sum.batches);
    fds_scan_result_free(&r);
    /* a cancel before the first batch: nothing written */
    atomic_store(&ctl.cancelled, true);
    REQUIRE_EQ(fds_scan_run(&s, &ctl, &r, &e), 0);
    ASSERT(r.cancelled);
    fds_scan_counts_sum(r.slices, r.nslices, &sum);
    ASSERT_EQ(sum.total, 0);
    fds_scan_result_free(&r);
    /* the slice count: auto is the shard count; more than shards refused */
    uint32_t n = 0;
    ASSERT_EQ(fds_scan_slices(ix, true, 0, &n, &e), 0);
    ASSERT_EQ(n, 2);
    fds_err_clear(&e);
    ASSERT_EQ(fds_scan_slices(ix, false, 3, &n, &e), FDS_EINVAL);
    ASSERT_EQ(e.kind, FDS_KIND_INVALID_ARGUMENT);
    ASSERT_STR(e.reason, "[slices] of [3] is more than the [2] shards of [upd]: a slice "
                         "is a set of shards in fieldstore (auto is one slice a shard)");
    fds_index_release(ix);
}

/* A rewrite that keeps the whole source and counts its calls. */
static unsigned rewrites;
static void keep_source(void *arg, fds_strbuf *out, const uint8_t *src, size_t len)
{
    (void)arg;
    rewrites++;
    fds_strbuf_put(out, src, len);
}

static void test_reindex_conflicts(void)
{
    fds_index *from = make_index("src", 1, 10);
    fds_index *to = make_index("dst", 1, 0);
    REQUIRE(from && to);
    fds_write_op op = {.type = FDS_OP_INDEX, .id = "3", .id_len = 1,
                       .src = (const uint8_t *)"{}", .src_len = 2};
    fds_write_result w;
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_index_write(to, &op, 1, &w, false, &e), 0);
    fds_scan_spec s = {.mode = FDS_SCAN_REINDEX, .from = from, .to = to,
                       .max_docs = UINT64_MAX, .batch = 4, .create = true,
                       .rewrite = keep_source};
    fds_scan_result r;
    rewrites = 0;
    REQUIRE_EQ(fds_scan_run(&s, NULL, &r, &e), 0);
    /* conflicts=abort: the batch with id 3 is written, then the scan stops */
    ASSERT_EQ(r.slices[0].total, 4);
    ASSERT_EQ(r.slices[0].created, 3);
    ASSERT_EQ(r.slices[0].conflicts, 1);
    ASSERT_EQ(rewrites, 4);
    REQUIRE_EQ(r.nfailures, 1);
    ASSERT_STR(r.failures[0].id, "3");
    ASSERT_EQ(r.failures[0].err.kind, FDS_KIND_CONFLICT);
    fds_scan_result_free(&r);
    /* conflicts=proceed: every document but the ones now there */
    s.proceed = true;
    REQUIRE_EQ(fds_scan_run(&s, NULL, &r, &e), 0);
    ASSERT_EQ(r.slices[0].total, 10);
    ASSERT_EQ(r.slices[0].created, 6);
    ASSERT_EQ(r.slices[0].conflicts, 4);
    ASSERT_EQ(r.nfailures, 0);
    fds_scan_result_free(&r);
    fds_index_release(from);
    fds_index_release(to);
}

int main(void)
{
    const char *dir = mkdtemp(tmpl);
    if (!dir)
        return 2;
    fds_err e;
    fds_err_clear(&e);
    if (fds_store_open(dir, &st, &e))
        return 2;
    RUN(test_delete_in_batches);
    RUN(test_slices_divide_max_docs);
    RUN(test_reindex_conflicts);
    fds_store_close(st);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 2;
    TEST_DONE();
}
