/*
 * test_bounds.c: requests that must neither crash, stall nor starve the
 * server, and the exact answers of edge values -- duplicate keys, `_source`
 * lists given twice, wildcard patterns, out-of-range bounds, request
 * limits, NUL bytes and invalid UTF-8 in search bodies.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "qtest.h"
#include "query.h"
#include "search_render.h"
#include "search_request.h"

static fds_mapping *mapping;

static int parse(const char *body, fds_search_request **r, fds_err *err)
{
    *r = NULL;
    fds_err_clear(err);
    return fds_search_parse(body, strlen(body), mapping, 0, r, err);
}

static int parse_rc(const char *body, fds_err *err)
{
    fds_search_request *r;
    int rc = parse(body, &r, err);
    fds_search_request_free(r);
    return rc;
}

/* duplicate keys anywhere in a body: 400 x_content_parse_exception with
 * Jackson's position (just after the repeated name) */
static void test_duplicate_keys(void)
{
    fds_err err;
    const char *b = "{\"_source\":{\"includes\":[\"a\",\"b\"],\"includes\":[\"c\"]}}";
    ASSERT(parse_rc(b, &err) == FDS_EPARSE);
    ASSERT(err.kind == FDS_KIND_CONTENT_PARSE);
    ASSERT_STR(err.reason, "[1:44] Duplicate field 'includes'");
    ASSERT(parse_rc("{\"query\":{\"bool\":{\"must\":[],\n\"must\":[]}}}", &err) ==
           FDS_EPARSE);
    ASSERT_STR(err.reason, "[2:7] Duplicate field 'must'");
    ASSERT(parse_rc("{\"size\":1,\"size\":2}", &err) == FDS_EPARSE);
    ASSERT(err.kind == FDS_KIND_CONTENT_PARSE);
    /* the same name in different objects is fine */
    ASSERT(parse_rc("{\"query\":{\"bool\":{\"must\":[{\"term\":{\"k\":\"a\"}},"
                    "{\"term\":{\"k\":\"b\"}}]}}}", &err) == 0);
    /* "include" and "includes" name one list: the last one is kept (and the
     * first freed) as Elasticsearch keeps it */
    fds_search_request *r;
    ASSERT(parse("{\"_source\":{\"include\":[\"a\",\"b\"],\"includes\":[\"c\"],"
                 "\"exclude\":\"x\",\"excludes\":[\"y\",\"z\"]}}", &r, &err) == 0);
    ASSERT(r && r->nincludes == 1 && !strcmp(r->includes[0], "c"));
    ASSERT(r && r->nexcludes == 2 && !strcmp(r->excludes[1], "z"));
    fds_search_request_free(r);
    /* the shared check on its own */
    fds_err_clear(&err);
    ASSERT(fds_json_check_body("{\"index\":{\"_index\":\"a\",\"_index\":\"b\"}}",
                               38, &err) == FDS_EPARSE);
    ASSERT_STR(err.reason, "[1:32] Duplicate field '_index'");
    fds_err_clear(&err);
    ASSERT(fds_json_check_body("  ", 2, &err) == 0);
    ASSERT(fds_json_check_body("[1,{\"a\":1},{\"a\":2}]", 19, &err) == 0);
}

int main(void)
{
    mapping = fds_mapping_create();
    fds_err err;
    const char *mj = "{\"properties\":{\"msg\":{\"type\":\"text\"},"
                     "\"n\":{\"type\":\"long\"},\"k\":{\"type\":\"keyword\"},"
                     "\"d\":{\"type\":\"double\"}}}";
    ASSERT(fds_mapping_merge_json(mapping, mj, strlen(mj), &err) == 0);
    test_duplicate_keys();
    fds_mapping_free(mapping);
    if (qt_failures)
        fprintf(stderr, "%d failure(s)\n", qt_failures);
    return qt_failures ? 1 : 0;
}
