/*
 * test_highlight.c: the highlighter's pieces -- the analyzer's token
 * offsets, fragment cutting and formatting (highlight.h's
 * fds_hl_fragments), and a parsed request's highlight of a document
 * (fds_highlight_put) for the queries whose terms it marks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/analysis.h"
#include "fds_test.h"
#include "fetch/highlight.h"
#include "query.h"
#include "ast/search_request.h"

typedef struct offs {
    char out[512];
    size_t n;
} offs;

static int off_cb(void *arg, const char *tok, size_t len, size_t s, size_t e)
{
    offs *o = arg;
    o->n += (size_t)snprintf(o->out + o->n, sizeof o->out - o->n, "%s%.*s@%zu-%zu",
                             o->n ? "|" : "", (int)len, tok, s, e);
    return 0;
}

static void test_offsets(void)
{
    offs o = {{0}, 0};
    ASSERT_EQ(fds_analyze_offsets("Héllo, World! U.S.A.", 21, off_cb, &o), 0);
    ASSERT_STR(o.out, "héllo@0-6|world@8-13|u.s.a@15-20");
    /* emoji tokens: byte offsets of the whole sequence */
    const char *e = "I \u2764\uFE0F logs \U0001F44D\U0001F3FD";
    o.n = 0;
    ASSERT_EQ(fds_analyze_offsets(e, strlen(e), off_cb, &o), 0);
    ASSERT_STR(o.out, "i@0-1|\u2764\uFE0F@2-8|logs@9-13|"
                      "\U0001F44D\U0001F3FD@14-22");
}

static const char *frags(const char *t, const fds_hl_mark *m, size_t nm,
                         const fds_hl_frag_opts *o)
{
    static char out[1024];
    fds_strbuf b = {0};
    fds_hl_fragments(t, strlen(t), m, nm, o, &b);
    snprintf(out, sizeof out, "%.*s", (int)b.len, b.p ? b.p : "");
    fds_strbuf_free(&b);
    return out;
}

static void test_fragments(void)
{
    fds_hl_frag_opts o = {"<em>", "</em>", 100, 5, 0, false, false,
                          FDS_HL_SENTENCE};
    const char *t = "One fox here. Two dogs there. A fox and a dog.";
    fds_hl_mark m[] = {{4, 7}, {18, 22}, {32, 35}};
    /* sentences merge while they fit */
    ASSERT_STR(frags(t, m, 3, &o),
               "\"One <em>fox</em> here. Two <em>dogs</em> there. A "
               "<em>fox</em> and a dog.\"");
    o.fragment_size = 16;
    ASSERT_STR(frags(t, m, 3, &o),
               "\"One <em>fox</em> here.\",\"Two <em>dogs</em> there.\","
               "\"A <em>fox</em> and a dog.\"");
    o.number_of_fragments = 1;
    ASSERT_STR(frags(t, m, 3, &o), "\"One <em>fox</em> here.\"");
    /* a sentence longer than fragment_size: cut at words around the mark */
    o.fragment_size = 8;
    o.number_of_fragments = 5;
    ASSERT_STR(frags(t, m + 1, 1, &o), "\"Two <em>dogs</em>\"");
    o.scanner = FDS_HL_WORD;
    ASSERT_STR(frags(t, m, 1, &o), "\"<em>fox</em> here.\"");
    /* 0 fragments: the whole text */
    o.number_of_fragments = 0;
    ASSERT_STR(frags("a <b> fox", (fds_hl_mark[]){{6, 9}}, 1, &o),
               "\"a <b> <em>fox</em>\"");
    o.html = true;
    ASSERT_STR(frags("a <b> fox", (fds_hl_mark[]){{6, 9}}, 1, &o),
               "\"a &lt;b&gt; <em>fox</em>\"");
    /* no marks: nothing, or no_match_size bytes cut at a word */
    o.html = false;
    ASSERT_STR(frags(t, NULL, 0, &o), "");
    o.no_match_size = 10;
    ASSERT_STR(frags(t, NULL, 0, &o), "\"One fox\"");
}

static const char *hl(const char *body, const char *src)
{
    static char out[2048];
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    fds_err_clear(&err);
    const char *map = "{\"properties\":{\"t\":{\"type\":\"text\",\"fields\":"
                      "{\"keyword\":{\"type\":\"keyword\"}}},"
                      "\"k\":{\"type\":\"keyword\"},\"n\":{\"type\":\"long\"}}}";
    ASSERT_EQ(fds_mapping_merge_json(m, map, strlen(map), &err), 0);
    fds_search_request *r = NULL;
    out[0] = 0;
    if (fds_search_parse(body, strlen(body), m, 0, &r, &err)) {
        snprintf(out, sizeof out, "error: %s", err.reason);
    } else {
        fds_strbuf b = {0};
        ASSERT_EQ(fds_highlight_put(r->hl, r->query, (const uint8_t *)src,
                                    strlen(src), &b), 0);
        snprintf(out, sizeof out, "%.*s", (int)b.len, b.p ? b.p : "");
        fds_strbuf_free(&b);
    }
    fds_search_request_free(r);
    fds_mapping_free(m);
    return out;
}

static void test_put(void)
{
    const char *doc = "{\"t\":\"GET /image/fox.png\",\"k\":\"GET\",\"n\":7}";
    ASSERT_STR(hl("{\"query\":{\"match\":{\"t\":\"get\"}},"
                  "\"highlight\":{\"fields\":{\"*\":{}}}}", doc),
               ",\"highlight\":{\"t\":[\"<em>GET</em> /image/fox.png\"]}");
    /* a keyword field is marked whole; a multi-field reads its parent */
    ASSERT_STR(hl("{\"query\":{\"multi_match\":{\"query\":\"GET\"}},"
                  "\"highlight\":{\"fields\":{\"k\":{},\"t*\":{}}}}", doc),
               ",\"highlight\":{\"k\":[\"<em>GET</em>\"],"
               "\"t\":[\"<em>GET</em> /image/fox.png\"]}");
    ASSERT_STR(hl("{\"query\":{\"term\":{\"t.keyword\":\"GET /image/fox.png\"}},"
                  "\"highlight\":{\"fields\":{\"*\":{}}}}", doc),
               ",\"highlight\":{\"t.keyword\":[\"<em>GET /image/fox.png</em>\"]}");
    /* query_string terms, wildcard expansions (fox.png is one token);
     * must_not is not marked */
    ASSERT_STR(hl("{\"query\":{\"bool\":{\"must\":{\"query_string\":{\"query\":"
                  "\"t:fo*\"}},\"must_not\":{\"match\":{\"t\":\"image\"}}}},"
                  "\"highlight\":{\"fields\":{\"t\":{}}}}", doc),
               ",\"highlight\":{\"t\":[\"GET /image/<em>fox.png</em>\"]}");
    ASSERT_STR(hl("{\"query\":{\"match\":{\"t\":\"cat\"}},"
                  "\"highlight\":{\"fields\":{\"t\":{}}}}", doc), "");
    ASSERT_STR(hl("{\"highlight\":{\"type\":\"fvh\"}}", doc),
               "error: the field highlighter [fvh] needs term vectors with "
               "positions and offsets, which fieldstore does not index");
}

int main(void)
{
    test_offsets();
    test_fragments();
    test_put();
    if (fds_test_failures)
        fprintf(stderr, "%d failure(s)\n", fds_test_failures);
    return fds_test_failures ? 1 : 0;
}
