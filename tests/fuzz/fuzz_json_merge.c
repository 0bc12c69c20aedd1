/*
 * fuzz_json_merge: fuzz target for the partial-document merge of _update
 * (fds__json_merge, src/http/doc_source.c), which works on JSON text.  The
 * input is two JSON texts split at the first newline: the stored source
 * and the update's "doc".  When both are objects the request path would
 * accept (cJSON parses them; fds_json_check_body finds no duplicate key),
 * the merge must give JSON that parses, and applying the same doc again
 * must change nothing (detect_noop: Elasticsearch's merge is idempotent).
 * Must never crash, leak or read out of bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc_source.h"
#include "fds_strbuf.h"
#include "query.h"
#include "fuzz_driver.h"

static bool accepted(const char *s, size_t n)
{
    cJSON *j = cJSON_ParseWithLength(s, n);
    bool ok = j && cJSON_IsObject(j) && fds_json_check_body(s, n, NULL) == 0;
    cJSON_Delete(j);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nl = memchr(s, '\n', size);
    if (!nl)
        return 0;
    size_t an = (size_t)(nl - s), bn = size - an - 1;
    const char *b = nl + 1;
    if (!accepted(s, an) || !accepted(b, bn))
        return 0;
    fds_strbuf out = {0};
    bool modified = false;
    if (fds__json_merge(s, an, b, bn, &out, &modified) == 0) {
        cJSON *j = cJSON_ParseWithLength(out.p, out.len);
        if (!j || !cJSON_IsObject(j)) {
            fprintf(stderr, "merge gave invalid JSON: %.*s\n", (int)out.len, out.p);
            abort();
        }
        cJSON_Delete(j);
        fds_strbuf again = {0};
        bool mod2 = true;
        if (fds__json_merge(out.p, out.len, b, bn, &again, &mod2) == 0 && mod2) {
            fprintf(stderr, "merging the doc twice changed the result: %.*s\n",
                    (int)again.len, again.p);
            abort();
        }
        free(again.p);
    }
    free(out.p);
    return 0;
}
