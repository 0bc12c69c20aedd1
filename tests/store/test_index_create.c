/*
 * test_index_create.c: index creation with templates holds for a caller of
 * the store itself, with no HTTP layer in front: a composable template put
 * through fds_store_template_add gives a new index its settings, mapping
 * and alias (fds_store_create_index_from), the request's own settings
 * win over the template's, and a second composable template of the same
 * priority with overlapping patterns is refused with Elasticsearch's
 * error type and words, as PUT _index_template answers them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fds_test.h"
#include "index_rules.h"
#include "query.h"
#include "store.h"

static char tmpl[] = "/tmp/fds-index-create-XXXXXX";
static fds_store *st;

static int put(const char *name, const char *json, fds_err *e)
{
    cJSON *body = cJSON_Parse(json);
    int rc = fds_store_template_add(st, FDS_TEMPLATE_INDEX, name, body, false, e);
    cJSON_Delete(body);
    return rc;
}

static void test_template_applies(void)
{
    fds_err e;
    fds_err_clear(&e);
    ASSERT_EQ(put("logs",
                  "{\"index_patterns\":[\"logs-*\"],\"template\":{"
                  "\"settings\":{\"number_of_shards\":2,\"codec\":\"ZSTD\"},"
                  "\"mappings\":{\"properties\":{\"status\":{\"type\":\"keyword\"}}},"
                  "\"aliases\":{\"all-logs\":{}}}}",
                  &e),
              0);
    /* the request's codec (default: LZ4) over the template's */
    fds_setting_text kv = {.key = "index.codec", .value = "default"};
    fds_index_create_req req = {.settings = &kv, .nsettings = 1,
                                .settings_given = true};
    fds_err_clear(&e);
    ASSERT_EQ(fds_store_create_index_from(st, "logs-1", &req, &e), 0);
    fds_index *ix = NULL;
    REQUIRE_EQ(fds_store_get_index(st, "logs-1", &ix, NULL), 0);
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    ASSERT_EQ(set.number_of_shards, 2u);
    ASSERT_EQ(set.codec.codec, FDS_CODEC_LZ4);
    char *m = fds_mapping_to_json(fds_index_mapping(ix));
    ASSERT(m && strstr(m, "\"status\":{\"type\":\"keyword\"}"));
    free(m);
    fds_index_release(ix);
    fds_alias *al = NULL;
    size_t n = 0;
    ASSERT_EQ(fds_store_aliases_list(st, &al, &n), 0);
    ASSERT_EQ(n, 1u);
    if (n == 1) {
        ASSERT_STR(al[0].alias, "all-logs");
        ASSERT_STR(al[0].index, "logs-1");
    }
    fds_aliases_free(al, n);
    /* a name no template matches: defaults */
    fds_err_clear(&e);
    ASSERT_EQ(fds_store_create_index_from(st, "other", NULL, &e), 0);
    REQUIRE_EQ(fds_store_get_index(st, "other", &ix, NULL), 0);
    fds_index_get_settings(ix, &set);
    ASSERT_EQ(set.number_of_shards, 1u);
    fds_index_release(ix);
}

static void test_overlap_refused(void)
{
    fds_err e;
    fds_err_clear(&e);
    ASSERT_EQ(put("logs2", "{\"index_patterns\":[\"logs-a*\"]}", &e), FDS_EINVAL);
    ASSERT_EQ(e.kind, FDS_KIND_INVALID_ARGUMENT);
    ASSERT_STR(e.reason,
               "index template [logs2] has index patterns [logs-a*] matching "
               "patterns from existing templates [logs] with patterns (logs => "
               "[logs-*]) that have the same priority [0], multiple index "
               "templates may not match during index creation, please use a "
               "different priority");
    /* another priority is fine */
    fds_err_clear(&e);
    ASSERT_EQ(put("logs2", "{\"index_patterns\":[\"logs-a*\"],\"priority\":5}", &e), 0);
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
    RUN(test_template_applies);
    RUN(test_overlap_refused);
    fds_store_close(st);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 2;
    TEST_DONE();
}
