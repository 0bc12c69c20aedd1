/*
 * test_store.c: unit tests of src/store: settings syntax and kinds, the
 * write buffer and translog replay across a reopen, refresh, deletes and
 * replacements, merges (block copy and re-encode), orphan removal and a
 * damaged segment file.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fds_test.h"
#include "store.h"


static char tmpl[] = "/tmp/fds-store-test-XXXXXX";
static const char *dir;

static void test_settings(void)
{
    fds_index_settings s;
    fds_index_settings_default(&s);
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(s.codec.codec, FDS_CODEC_LZ4);
    REQUIRE_EQ(fds_settings_set(&s, "index.codec", "ZSTD", &e), 0);
    REQUIRE_EQ(s.codec.codec, FDS_CODEC_ZSTD);
    REQUIRE_EQ(fds_settings_set(&s, "index.codec.block_size", "32kb", &e), 0);
    REQUIRE_EQ(s.codec.block_size, 32768u);
    REQUIRE_EQ(fds_settings_set(&s, "index.refresh_interval", "250ms", &e), 0);
    REQUIRE_EQ(s.refresh_interval_ms, 250);
    REQUIRE_EQ(fds_settings_set(&s, "index.refresh_interval", "-1", &e), 0);
    REQUIRE_EQ(s.refresh_interval_ms, -1);
    REQUIRE_EQ(fds_settings_set(&s, "index.codec.compression_level", "19", &e), 0);
    REQUIRE_EQ(s.codec.level, 19);
    REQUIRE_EQ(fds_settings_set(&s, "index.compression.zstd.level", "20", &e), FDS_EINVAL);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_settings_set(&s, "index.codec", "snappy", &e), FDS_EINVAL);
    REQUIRE(strstr(e.reason, "snappy") != NULL);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_settings_set(&s, "index.nope", "1", &e), FDS_EINVAL);
    REQUIRE(strstr(e.reason, "unknown setting [index.nope]") != NULL);
    REQUIRE_EQ(fds_setting_kind_of("index.codec"), FDS_SETTING_STATIC);
    REQUIRE_EQ(fds_setting_kind_of("index.number_of_shards"), FDS_SETTING_FINAL);
    REQUIRE_EQ(fds_setting_kind_of("index.refresh_interval"), FDS_SETTING_DYNAMIC);
    /* every setting written as text reads back the same */
    fds_setting_kv kv[FDS_SETTINGS_MAX];
    size_t n = fds_settings_to_kv(&s, kv, FDS_SETTINGS_MAX);
    fds_index_settings t;
    fds_index_settings_default(&t);
    for (size_t i = 0; i < n; i++)
        REQUIRE_EQ(fds_settings_set(&t, kv[i].key, kv[i].value, &e), 0);
    REQUIRE(memcmp(&s, &t, sizeof s) == 0);
}

static char *doc_json(int i)
{
    char *b = malloc(256);
    snprintf(b, 256, "{\"n\":%d,\"method\":\"%s\",\"url\":\"/p/%d\",\"status\":%d}",
             i, i % 10 ? "GET" : "POST", i % 97, i % 7 ? 200 : 404);
    return b;
}

static int put_docs(fds_index *ix, int from, int to, bool refresh)
{
    int n = to - from;
    fds_write_op *ops = calloc((size_t)n, sizeof *ops);
    fds_write_result *res = calloc((size_t)n, sizeof *res);
    char **ids = calloc((size_t)n, sizeof *ids), **srcs = calloc((size_t)n, sizeof *srcs);
    for (int i = 0; i < n; i++) {
        ids[i] = malloc(16);
        snprintf(ids[i], 16, "%d", from + i);
        srcs[i] = doc_json(from + i);
        ops[i] = (fds_write_op){.type = FDS_OP_INDEX, .id = ids[i], .id_len = strlen(ids[i]),
                                .src = (const uint8_t *)srcs[i], .src_len = strlen(srcs[i])};
    }
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_index_write(ix, ops, (size_t)n, res, refresh, &e);
    for (int i = 0; i < n; i++) {
        if (res[i].code)
            rc = res[i].code;
        free(ids[i]);
        free(srcs[i]);
    }
    free(ids);
    free(srcs);
    free(ops);
    free(res);
    return rc;
}

static bool doc_is(fds_index *ix, int i)
{
    char id[16];
    snprintf(id, sizeof id, "%d", i);
    fds_doc d;
    if (fds_index_get(ix, id, strlen(id), &d, NULL))
        return false;
    char *want = doc_json(i);
    bool ok = d.src_len == strlen(want) && !memcmp(d.src, want, d.src_len);
    free(want);
    free(d.src);
    return ok;
}

static void test_lifecycle(void)
{
    fds_store *s;
    fds_err e;
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(dir, &s, &e), 0);
    fds_index_settings set;
    fds_index_settings_default(&set);
    fds_settings_set(&set, "index.codec", "ZSTD", NULL);
    REQUIRE_EQ(fds_store_create_index(s, "t", &set, NULL, &e), 0);
    REQUIRE_EQ(fds_store_create_index(s, "t", &set, NULL, &e), FDS_EEXIST);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_create_index(s, "Bad", &set, NULL, &e), FDS_EINVAL);
    fds_index *ix;
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), 0);
    REQUIRE_EQ(put_docs(ix, 0, 3000, true), 0);   /* segment 1 */
    REQUIRE_EQ(put_docs(ix, 3000, 4000, true), 0); /* segment 2 */
    REQUIRE_EQ(put_docs(ix, 4000, 4500, false), 0); /* buffer + translog only */
    REQUIRE(doc_is(ix, 10) && doc_is(ix, 3500) && doc_is(ix, 4499));
    fds_index_stats st;
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.docs_count, 4000u);
    REQUIRE_EQ(st.buffered_docs, 500u);
    REQUIRE_EQ(st.segments, 2u);
    fds_index_release(ix);
    fds_store_close(s);

    /* a stray file is removed at open; the translog is replayed */
    char stray[4096];
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(dir, &s, &e), 0);
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), 0);
    snprintf(stray, sizeof stray, "%s/indices/%s/seg_999.fdt", dir, fds_index_uuid(ix));
    fds_index_release(ix);
    fds_store_close(s);
    FILE *f = fopen(stray, "w");
    REQUIRE(f != NULL);
    fputs("half-written", f);
    fclose(f);
    REQUIRE_EQ(fds_store_open(dir, &s, &e), 0);
    REQUIRE(access(stray, F_OK) != 0);
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), 0);
    REQUIRE(doc_is(ix, 4499));
    REQUIRE_EQ(fds_index_refresh(ix, &e), 0);
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.docs_count, 4500u);

    /* replace and delete: the old copies stop being visible */
    REQUIRE_EQ(put_docs(ix, 0, 100, true), 0);
    fds_write_op del = {.type = FDS_OP_DELETE, .id = "5", .id_len = 1};
    fds_write_result r;
    REQUIRE_EQ(fds_index_write(ix, &del, 1, &r, true, &e), 0);
    REQUIRE(r.found);
    fds_doc d;
    REQUIRE_EQ(fds_index_get(ix, "5", 1, &d, NULL), FDS_ENOTFOUND);
    REQUIRE(doc_is(ix, 6));
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.docs_count, 4499u);
    REQUIRE_EQ(st.docs_deleted, 101u); /* 100 old copies + the new copy of 5 */
    fds_write_op cr = {.type = FDS_OP_CREATE, .id = "6", .id_len = 1,
                       .src = (const uint8_t *)"{}", .src_len = 2};
    REQUIRE_EQ(fds_index_write(ix, &cr, 1, &r, false, &e), 0);
    REQUIRE_EQ(r.code, FDS_ECONFLICT);

    /* force-merge: deletes expunged, every doc still exact */
    REQUIRE_EQ(fds_index_forcemerge(ix, 1, &e), 0);
    fds_index_stats_get(ix, &st);
    REQUIRE_EQ(st.segments, 1u);
    REQUIRE_EQ(st.docs_count, 4499u);
    REQUIRE_EQ(st.docs_deleted, 0u);
    for (int i = 0; i < 4500; i += 7)
        REQUIRE(i == 5 || doc_is(ix, i));

    /* clean segments with today's settings: blocks copied unchanged */
    REQUIRE_EQ(put_docs(ix, 5000, 6000, true), 0);
    REQUIRE_EQ(fds_index_forcemerge(ix, 1, &e), 0);
    fds_segment_info *si;
    size_t ns;
    REQUIRE_EQ(fds_index_segments(ix, &si, &ns), 0);
    REQUIRE_EQ(ns, 1u);
    REQUIRE_EQ(si[0].docs_count, 5499u);
    free(si);
    REQUIRE(doc_is(ix, 5999) && doc_is(ix, 4000) && doc_is(ix, 1));

    /* a damaged byte in a block gives an error naming index, segment and
     * block, never wrong bytes */
    REQUIRE_EQ(fds_index_segments(ix, &si, &ns), 0);
    char fdt[4096];
    snprintf(fdt, sizeof fdt, "%s/indices/%s/%s.fdt", dir, fds_index_uuid(ix), si[0].name);
    free(si);
    fds_index_release(ix);
    fds_store_close(s);
    f = fopen(fdt, "r+b");
    REQUIRE(f != NULL);
    fseek(f, 100, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, 100, SEEK_SET);
    fputc(ch ^ 0x5A, f);
    fclose(f);
    fds_err_clear(&e);
    REQUIRE_EQ(fds_store_open(dir, &s, &e), 0);
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), 0);
    fds_err_clear(&e);
    int rc = fds_index_get(ix, "100", 3, &d, &e); /* first doc of the file */
    if (rc != FDS_ECORRUPT && rc != FDS_EDICT)
        fprintf(stderr, "get after damage: rc=%d (%s) %s\n", rc, fds_strerror(rc), e.reason);
    REQUIRE(rc == FDS_ECORRUPT || rc == FDS_EDICT);
    REQUIRE(strstr(e.reason, "[t]") && strstr(e.reason, "segment") &&
           strstr(e.reason, "block"));
    fds_index_release(ix);
    REQUIRE_EQ(fds_store_delete_index(s, "t", &e), 0);
    REQUIRE_EQ(fds_store_get_index(s, "t", &ix, NULL), FDS_ENOTFOUND);
    fds_store_close(s);
}

int main(void)
{
    dir = mkdtemp(tmpl);
    if (!dir)
        return 2;
    test_settings();
    test_lifecycle();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    printf("%s\n", fds_test_failures ? "store tests FAILED" : "store tests passed");
    return fds_test_failures ? 1 : 0;
}
