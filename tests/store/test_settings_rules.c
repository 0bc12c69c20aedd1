/*
 * test_settings_rules.c: the settings rules hold for a caller of the store
 * itself, with no HTTP layer in front: a final setting (number_of_shards)
 * cannot change, through fds_index_update_settings nor through
 * fds_index_put_settings; a static one (index.codec) is refused while the
 * index is open, taken once it is closed, and taken with reopen; a dynamic
 * one changes at once; the error texts are Elasticsearch's.  The resize
 * rules too: shard counts, routing shards, the source's write block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fds_test.h"
#include "index_rules.h"
#include "store.h"

static char tmpl[] = "/tmp/fds-settings-rules-XXXXXX";
static fds_store *st;
static fds_index *ix; /* "logs", one shard, LZ4 */

static fds_settings_update one(fds_setting_text *kv, const char *key,
                               const char *value)
{
    snprintf(kv->key, sizeof kv->key, "%s", key);
    snprintf(kv->value, sizeof kv->value, "%s", value);
    return (fds_settings_update){.kv = kv, .n = 1};
}

static void test_final(void)
{
    fds_setting_text kv;
    fds_settings_update u = one(&kv, "index.number_of_shards", "2");
    fds_err e;
    fds_err_clear(&e);
    ASSERT_EQ(fds_index_update_settings(ix, &u, &e), FDS_EINVAL);
    ASSERT_EQ(e.kind, FDS_KIND_INVALID_ARGUMENT);
    ASSERT_STR(e.reason, "final logs setting [index.number_of_shards], not updateable");
    /* the raw put refuses it as well */
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    set.number_of_shards = 2;
    fds_err_clear(&e);
    ASSERT_EQ(fds_index_put_settings(ix, &set, &e), FDS_EINVAL);
    ASSERT_STR(e.reason, "final logs setting [index.number_of_shards], not updateable");
    fds_index_get_settings(ix, &set);
    ASSERT_EQ(set.number_of_shards, 1u);
    /* informational settings are never taken */
    u = one(&kv, "index.uuid", "x");
    fds_err_clear(&e);
    ASSERT_EQ(fds_index_update_settings(ix, &u, &e), FDS_EINVAL);
    ASSERT_STR(e.reason, "final logs setting [index.uuid], not updateable");
}

static void test_static(void)
{
    fds_setting_text kv;
    fds_settings_update u = one(&kv, "index.codec", "ZSTD");
    fds_err e;
    fds_err_clear(&e);
    ASSERT_EQ(fds_index_update_settings(ix, &u, &e), FDS_EINVAL);
    ASSERT_EQ(e.kind, FDS_KIND_INVALID_ARGUMENT);
    char want[256];
    snprintf(want, sizeof want, "Can't update non dynamic settings "
             "[[index.codec]] for open indices [[logs/%s]]", fds_index_uuid(ix));
    ASSERT_STR(e.reason, want);
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    ASSERT_EQ(set.codec.codec, FDS_CODEC_LZ4);
    /* reopen: closed, updated and opened again */
    u.reopen = true;
    fds_err_clear(&e);
    ASSERT_EQ(fds_index_update_settings(ix, &u, &e), 0);
    fds_index_get_settings(ix, &set);
    ASSERT_EQ(set.codec.codec, FDS_CODEC_ZSTD);
    ASSERT(fds_index_is_open(ix));
    /* a closed index takes it */
    u = one(&kv, "index.codec", "best_compression");
    ASSERT_EQ(fds_index_set_open(ix, false, &e), 0);
    ASSERT_EQ(fds_index_update_settings(ix, &u, &e), 0);
    ASSERT_EQ(fds_index_set_open(ix, true, &e), 0);
    fds_index_get_settings(ix, &set);
    ASSERT_EQ(set.codec.codec, FDS_CODEC_DEFLATE);
}

static void test_dynamic(void)
{
    fds_setting_text kv;
    fds_settings_update u = one(&kv, "index.refresh_interval", "5s");
    fds_err e;
    fds_err_clear(&e);
    ASSERT_EQ(fds_index_update_settings(ix, &u, &e), 0);
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    ASSERT_EQ(set.refresh_interval_ms, 5000);
    /* null (an empty value): back to the default */
    u = one(&kv, "index.refresh_interval", "");
    ASSERT_EQ(fds_index_update_settings(ix, &u, &e), 0);
    fds_index_get_settings(ix, &set);
    ASSERT_EQ(set.refresh_interval_ms, FDS_REFRESH_INTERVAL_DEFAULT_MS);
}


static void test_resize_rules(void)
{
    fds_err e;
    fds_err_clear(&e);
    ASSERT_EQ(fds_resize_check_shards(FDS_RESIZE_KIND_CLONE, 1, 2, 0, false, &e),
              FDS_EINVAL);
    ASSERT_STR(e.reason, "the number of target shards (2) must be the same as "
                         "the number of  source shards ( 1)");
    fds_err_clear(&e);
    ASSERT_EQ(fds_resize_check_shards(FDS_RESIZE_KIND_SPLIT, 1, 3, 0, true, &e), 0);
    ASSERT_EQ(fds_resize_check_shards(FDS_RESIZE_KIND_SPLIT, 2, 4, 1024, true, &e),
              FDS_EINVAL);
    ASSERT_STR(e.reason, "cannot provide index.number_of_routing_shards on resize");
    fds_err_clear(&e);
    ASSERT_EQ(fds_resize_check_shards(FDS_RESIZE_KIND_SPLIT, 2, 4, 6, false, &e),
              FDS_EINVAL);
    ASSERT_EQ(e.kind, FDS_KIND_ILLEGAL_STATE);
    /* the source must block writes first */
    fds_err_clear(&e);
    ASSERT_EQ(fds_resize_check_target(st, ix, "copy", FDS_RESIZE_KIND_CLONE, &e),
              FDS_EINVAL);
    ASSERT_STR(e.reason, "index logs must be read-only to resize index. use "
                         "\"index.blocks.write=true\"");
    fds_err_clear(&e);
    ASSERT_EQ(fds_resize_check_target(st, ix, "logs", FDS_RESIZE_KIND_CLONE, &e),
              FDS_EEXIST);
}

/* Store `dir` with index "logs" of the default settings. */
static void setup(const char *dir)
{
    fds_err e;
    fds_err_clear(&e);
    fds_index_settings set;
    fds_index_settings_default(&set);
    REQUIRE_EQ(fds_store_open(dir, &st, &e), 0);
    REQUIRE_EQ(fds_store_create_index(st, "logs", &set, NULL, &e), 0);
    REQUIRE_EQ(fds_store_get_index(st, "logs", &ix, NULL), 0);
}

int main(void)
{
    const char *dir = mkdtemp(tmpl);
    if (!dir)
        return 2;
    setup(dir);
    if (ix) {
        RUN(test_final);
        RUN(test_static);
        RUN(test_dynamic);
        RUN(test_resize_rules);
    }
    fds_index_release(ix);
    fds_store_close(st);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 2;
    TEST_DONE();
}
