/*
 * fuzz_sidx: fuzz target for fds_sidx_open and the readers behind a search.
 * The input is a segment index file; when its first byte is odd the target
 * first repairs the length field and the checksum, so mutations reach the
 * structure checks instead of stopping at the CRC.  Opening may fail with
 * FDS_ECORRUPT; whatever opens must survive term lookups, _id lookups and
 * searches without reading out of bounds -- phrase queries among them, so
 * that the positions decoder (positions.h) and the positions directory and
 * tables (format 5) are fuzzed too.
 * Run by the shared driver (tests/fuzz/fuzz_driver.h):
 *   fuzz_sidx [SECONDS] [DIR...]     the plain driver (ctest)
 *   fuzz_sidx --write-seeds DIR      its seed files, for tests/fuzz/corpus
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search_render.h"
#include "../../fuzz/fuzz_driver.h"
#include "query.h"
#include "query_int.h"
#include "index/sidx_format.h"

/* brand ids: with "/filter/", a url of 272 bytes, past
 * FDS_SIDX_VALUE_MIN_BYTES */
#define LONG_URL_TAIL \
    "b1%2Cb22%2Cb333%2Cb4444%2Cb5%2Cb66%2Cb777%2Cb8888%2Cb9%2Cb10%2Cb11%2C" \
    "b12%2Cb13%2Cb14%2Cb15%2Cb16%2Cb17%2Cb18%2Cb19%2Cb20%2Cb21%2Cb22%2C" \
    "b23%2Cb24%2Cb25%2Cb26%2Cb27%2Cb28%2Cb29%2Cb30%2Cb31%2Cb32%2Cb33%2C" \
    "b34%2Cb35%2Cb36%2Cb37%2Cb38%2Cb39%2Cb40%2Cb41%2Cb42%2Cb43%2Cb44"

static char g_path[64];
static fds_mapping *g_map;

static const char *g_queries[] = {
    "{\"query\":{\"match\":{\"url\":\"image filter m\"}},\"size\":5}",
    /* one term: the lone-term pass over block and group impacts */
    "{\"query\":{\"match\":{\"url\":\"filter\"}},\"size\":3,"
    "\"track_total_hits\":false}",
    "{\"query\":{\"term\":{\"method.keyword\":\"GET\"}},\"track_total_hits\":true}",
    "{\"query\":{\"bool\":{\"must\":[{\"match\":{\"method\":\"get\"}}],"
    "\"filter\":[{\"range\":{\"status\":{\"gte\":200}}}]}},\"sort\":[{\"@timestamp\":\"desc\"}]}",
    "{\"query\":{\"terms\":{\"url.keyword\":[\"/\",\"/m/filter/b113\"]}},"
    "\"sort\":[\"method.keyword\"],\"explain\":true}",
    "{\"query\":{\"exists\":{\"field\":\"request_time\"}},\"sort\":[{\"request_time\":\"asc\"}]}",
    "{\"query\":{\"ids\":{\"values\":[\"d0\",\"d1\"]}}}",
    "{\"query\":{\"match_phrase\":{\"url\":\"image 60844 productmodel\"}}}",
    "{\"query\":{\"match_phrase\":{\"url\":{\"query\":\"productmodel image\","
    "\"slop\":3}}},\"explain\":true}",
    "{\"query\":{\"match_phrase_prefix\":{\"url\":\"m filter b1\"}}}",
    /* a whole long url: the value memo over value ids */
    "{\"query\":{\"match\":{\"url\":\"/filter/" LONG_URL_TAIL " image\"}},"
    "\"size\":2,\"track_total_hits\":false}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    uint8_t *buf = malloc(size);
    memcpy(buf, data + 1, size - 1);
    size_t n = size - 1;
    if ((data[0] & 1) && n >= FDS_SIDX_HEADER_LEN + FDS_SIDX_FOOTER_LEN) {
        fds__put_u64(buf + 40, n);
        fds__put_u32(buf + n - FDS_SIDX_FOOTER_LEN,
                     fds_crc32c(0, buf, n - FDS_SIDX_FOOTER_LEN));
    }
    int fd = open(g_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, buf, n) != (ssize_t)n)
        abort();
    close(fd);
    free(buf);
    fds_sidx *s = NULL;
    fds_err err;
    fds_err_clear(&err);
    int rc = fds_sidx_open(g_path, &s, &err);
    if (rc) {
        if (rc == FDS_ECORRUPT && !strstr(err.reason, g_path))
            abort(); /* a damaged file must be named */
        return 0;
    }
    uint32_t md = fds_sidx_max_doc(s), d;
    for (uint32_t i = 0; i < md && i < 8; i++) {
        size_t l;
        const char *id = fds_sidx_doc_id(s, i, &l);
        if (id)
            fds_sidx_find_id(s, id, l, &d);
    }
    fds_sidx_find_id(s, "d1", 2, &d);
    fds_search_segment seg = {.sidx = s};
    for (size_t q = 0; q < sizeof g_queries / sizeof g_queries[0]; q++) {
        fds_search_request *r;
        fds_err_clear(&err);
        if (fds_search_parse(g_queries[q], strlen(g_queries[q]), g_map, 0, &r,
                             &err))
            continue;
        fds_search_result res;
        if (fds_search_execute(r, &seg, 1, &res, &err) == 0) {
            size_t len;
            char *out = fds_search_render(r, &res, &seg, "f", 0, NULL,
                                          &len, &err);
            free(out);
            fds_search_result_free(&res);
        }
        fds_search_request_free(r);
    }
    fds_sidx_close(s);
    return 0;
}

static void setup(void)
{
    snprintf(g_path, sizeof g_path, "/tmp/fds-fuzzsidx-%d.sidx", (int)getpid());
    g_map = fds_mapping_create();
    /* url a text field without the harness's writer too (libFuzzer), so the
     * phrase queries above reach the positions */
    static const char map[] = "{\"properties\":{\"url\":{\"type\":\"text\"}}}";
    fds_err err;
    if (fds_mapping_merge_json(g_map, map, sizeof map - 1, &err))
        abort();
}

static void remove_input_file(void)
{
    unlink(g_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    setup();
    atexit(remove_input_file);
    return 0;
}

#ifndef FDS_LIBFUZZER
/* Seeds: a real small segment file, with and without checksum repair. */
int fds_fuzz_builtin_seeds(fds_fuzz_seeds *s)
{
    static const char *docs[] = {
        "{\"@timestamp\":\"2019-01-22T03:56:14+03:30\",\"method\":\"GET\","
        "\"url\":\"/image/60844/productModel/200x200\",\"status\":200,"
        "\"request_time\":0.25}",
        "{\"@timestamp\":\"2019-01-22T03:57:01+03:30\",\"method\":\"POST\","
        "\"url\":\"/m/filter/b113\",\"status\":404,\"request_time\":1.5}",
        "{\"method\":\"GET\",\"url\":\"/\",\"status\":304}",
        /* a long url, repeated: a value table and value ids (format 7) */
        "{\"method\":\"GET\",\"url\":\"/filter/" LONG_URL_TAIL "\"}",
    };
    fds_sidx_writer *w = fds_sidx_writer_create(g_map);
    fds_err err;
    /* enough docs for several postings blocks */
    for (uint32_t i = 0; i < 300; i++) {
        char id[16];
        snprintf(id, sizeof id, "d%u", i);
        fds_err_clear(&err);
        fds_sidx_writer_add(w, i, id, strlen(id), (const uint8_t *)docs[i % 4],
                            strlen(docs[i % 4]), &err);
    }
    char seedpath[] = "/tmp/fds-fuzzseed-XXXXXX";
    close(mkstemp(seedpath));
    fds_sidx_writer_write(w, seedpath, &err);
    fds_sidx_writer_free(w);
    FILE *f = fopen(seedpath, "rb");
    static uint8_t file[FDS_FUZZ_MAX_INPUT];
    size_t n = f ? fread(file + 1, 1, sizeof file - 1, f) : 0;
    if (f)
        fclose(f);
    unlink(seedpath);
    if (!n)
        return -1;
    file[0] = 1; /* repair checksum after mutation */
    if (fds_fuzz_seed_add(s, file, n + 1))
        return -1;
    file[0] = 0; /* keep bytes as they are */
    return fds_fuzz_seed_add(s, file, n + 1);
}
#endif
