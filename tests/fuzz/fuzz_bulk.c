/*
 * fuzz_bulk: fuzz target for the _bulk body parser (src/http/docs.c,
 * fds__bulk_parse): NDJSON action/metadata lines and source lines.  The
 * input is the request body; an odd-length input is parsed as
 * POST /logs/_bulk (a default index), an even one as POST /_bulk.  Every
 * source line of a body that parses is then indexed with a fresh mapping
 * (fds_sidx_writer_add: the document path a bulk request drives).
 * Must never crash, leak or read out of bounds; a refused body must come
 * with an error detail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulk.h"
#include "query.h"
#include "fuzz_driver.h"

typedef struct bulk_sink {
    fds_sidx_writer *w;
    uint32_t next_doc;
    const char *body; /* the body parsed, `len` bytes */
    size_t len;
} bulk_sink;

static void visit(void *arg, const char *action, const char *index,
                  const fds_write_op *op)
{
    bulk_sink *s = arg;
    if (!index || !*action)
        abort(); /* every parsed item names its action and index */
    if (op->type == FDS_OP_DELETE)
        return;
    const char *src = (const char *)op->src;
    if (!src || src < s->body || src + op->src_len > s->body + s->len)
        abort(); /* the source is a slice of the body */
    fds_err err;
    fds_err_clear(&err);
    const char *id = op->id ? op->id : "auto";
    size_t idl = op->id ? op->id_len : 4;
    if (fds_sidx_writer_add(s->w, s->next_doc, id, idl, op->src, op->src_len,
                            &err) == 0)
        s->next_doc++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = malloc(size + 1); /* the server NUL-terminates bodies */
    if (!body)
        return 0;
    memcpy(body, data, size);
    body[size] = 0;
    fds_mapping *m = fds_mapping_create();
    bulk_sink s = {fds_sidx_writer_create(m), 0, body, size};
    fds_err err;
    fds_err_clear(&err);
    int rc = fds__bulk_parse(body, size, size % 2 ? "logs" : NULL, visit, &s,
                             &err);
    if (rc && rc != FDS_ENOMEM && (err.code == 0 || err.reason[0] == 0)) {
        fprintf(stderr, "fuzz_bulk: error %d without detail\n", rc);
        abort();
    }
    char *mj = fds_mapping_to_json(m);
    free(mj);
    fds_sidx_writer_free(s.w);
    fds_mapping_free(m);
    free(body);
    return 0;
}
