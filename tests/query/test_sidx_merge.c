/*
 * test_sidx_merge: fds_sidx_merge against fds_sidx_writer.  Documents of
 * the real sample are written as NSEG segment index files (with a few
 * extra documents carrying a field only one input has, and some with the
 * same id in two inputs), random docs of each input are deleted, the inputs
 * are merged, and the result is compared, field by field, term by term and
 * doc by doc, with one writer's file of the same live documents in the same
 * order: term strings and ordinals, doc freqs, every posting and skip entry
 * (but its offset), the positions of text terms (block offsets and bytes),
 * norms, presence, columns, doc_count, sum_ttf and the _id table.  Run:
 * test_sidx_merge NGINX_LOG [DOCS].  With --v7 V7_SIDX: the golden version
 * 7 file against the current writer and a merge (test_v7).
 */
#include <stdint.h>
#include <unistd.h>

#include "index/positions.h"
#include "qtest.h"
#include "query.h"
#include "index/sidx_int.h"

#define NSEG 4
#define DEFAULT_DOCS 3000
#define DELETE_ONE_IN 5

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static void tmp_path(char *p, size_t cap)
{
    snprintf(p, cap, "/tmp/fds-smerge-XXXXXX");
    int fd = mkstemp(p);
    close(fd);
}

/* The postings of term (f, ord) of s, decoded. */
static uint32_t postings(const fds_sidx *s, const fds_sfield *f, uint32_t ord,
                         uint32_t *docs, uint32_t *tfs, uint8_t *skips)
{
    fds_sterm t;
    uint8_t sk[FDS_SIDX_SKIP_LEN], blk[FDS_STERM_INLINE_BLK];
    fds__sidx_term_at(s, f, ord, &t);
    fds__sterm_inline(&t, f->norms, sk, blk);
    uint32_t n = 0, base = 0;
    for (uint32_t b = 0; b < t.nblocks; b++) {
        const uint8_t *e = t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        unsigned k = e[13] + 1u;
        long r = fds_postings_decode_block(fds__skip_block(&t, e), t.end, k,
                                           base, s->max_doc, docs + n, tfs + n);
        ASSERT(r > 0);
        memcpy(skips + (size_t)b * FDS_SIDX_SKIP_LEN, e, FDS_SIDX_SKIP_LEN);
        fds__put_u32(skips + (size_t)b * FDS_SIDX_SKIP_LEN + 4, 0);
        n += k;
        base = fds__get_u32(e) + 1;
    }
    return n;
}

/* Bytes of the positions of term (f, ord) of s, whose n postings have the
 * frequencies tfs (its block offsets and every posting's positions). */
static size_t positions_len(const fds_sidx *s, const fds_sfield *f,
                            uint32_t ord, const uint32_t *tfs, uint32_t n)
{
    const uint8_t *p = fds__sidx_term_pos(s, f, ord);
    const uint8_t *end = s->map + s->len, *q = p + (n + 127) / 128 * 4 - 4;
    for (uint32_t i = 0; i < n; i++) {
        long k = fds_positions_decode(q, end, tfs[i], NULL);
        ASSERT(k > 0);
        q += k > 0 ? k : 0;
    }
    return (size_t)(q - p);
}

/* Value ids of text field x of a (the writer's file) and y of b (the
 * merge's): every id of b names the string a's doc holds under its own
 * id; with `exact`, the same ids on the same docs.  Returns the docs b
 * gave an id. */
static uint32_t compare_values(const fds_sfield *x, const fds_sfield *y,
                               uint32_t md, bool exact)
{
    uint32_t n = 0;
    if (exact) {
        ASSERT_EQ(x->nvals, y->nvals);
        ASSERT_EQ(x->vbits, y->vbits);
    }
    for (uint32_t d = 0; d < md; d++) {
        uint32_t vx = fds__val_id(x, d), vy = fds__val_id(y, d);
        if (exact)
            ASSERT_EQ(vx, vy);
        if (vy == FDS_SIDX_NO_ORD)
            continue;
        n++;
        ASSERTF(vx != FDS_SIDX_NO_ORD,
                "%.*s doc %u: an id only after the merge", (int)x->name_len,
                x->name, d);
        if (vx == FDS_SIDX_NO_ORD)
            continue;
        uint64_t lx, ly;
        const char *px = fds__val_str(x, vx, &lx);
        const char *py = fds__val_str(y, vy, &ly);
        ASSERTF(lx == ly && !memcmp(px, py, (size_t)lx), "%.*s doc %u value",
                (int)x->name_len, x->name, d);
    }
    return n;
}

/* Docs with a value id in any field of s. */
static uint32_t docs_with_ids(const fds_sidx *s)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nfields; i++)
        for (uint32_t d = 0; d < s->max_doc; d++)
            n += fds__val_id(&s->fields[i], d) != FDS_SIDX_NO_ORD;
    return n;
}

static void compare(const fds_sidx *a, const fds_sidx *b, bool exact_vals)
{
    ASSERT_EQ(a->max_doc, b->max_doc);
    ASSERT_EQ(a->nfields, b->nfields);
    uint32_t md = a->max_doc;
    uint32_t *da = malloc(md * 4 + 4), *ta = malloc(md * 4 + 4);
    uint32_t *db = malloc(md * 4 + 4), *tb = malloc(md * 4 + 4);
    uint8_t *sa = malloc(md * 16 + 16), *sb = malloc(md * 16 + 16);
    for (uint32_t i = 0; i < a->nfields && i < b->nfields; i++) {
        const fds_sfield *x = &a->fields[i], *y = &b->fields[i];
        ASSERT_EQ(x->name_len, y->name_len);
        ASSERTF(!memcmp(x->name, y->name, x->name_len), "field %u", i);
        ASSERT_EQ(x->kind, y->kind);
        /* value ids: the merge may have fewer (compare_values) */
        ASSERT_EQ(x->flags & ~FDS_SIDX_F_VALUES, y->flags & ~FDS_SIDX_F_VALUES);
        /* a complete table after the merge is the writer's */
        bool exact = exact_vals ||
                     ((y->flags & FDS_SIDX_F_VALUES) && y->vcomplete);
        if (exact)
            ASSERT_EQ(x->flags, y->flags);
        if (x->kind == FDS_FT_TEXT && exact)
            ASSERT_EQ(x->vcomplete, y->vcomplete);
        if (x->kind == FDS_FT_TEXT)
            compare_values(x, y,
                           a->max_doc < b->max_doc ? a->max_doc : b->max_doc,
                           exact);
        ASSERTF(x->doc_count == y->doc_count, "%.*s doc_count %u vs %u",
                (int)x->name_len, x->name, x->doc_count, y->doc_count);
        ASSERTF(x->nterms == y->nterms, "%.*s nterms %u vs %u", (int)x->name_len,
                x->name, x->nterms, y->nterms);
        ASSERT_EQ(x->sum_ttf, y->sum_ttf);
        ASSERT_EQ(x->ord_bits, y->ord_bits);
        ASSERT_EQ(x->num_bits, y->num_bits);
        for (uint32_t t = 0; t < x->nterms && t < y->nterms; t++) {
            uint32_t lx, ly;
            const char *px = fds__sidx_term_str(x, t, &lx);
            const char *py = fds__sidx_term_str(y, t, &ly);
            ASSERTF(lx == ly && !memcmp(px, py, lx), "%.*s term %u", (int)x->name_len,
                    x->name, t);
            uint32_t na = postings(a, x, t, da, ta, sa);
            uint32_t nb = postings(b, y, t, db, tb, sb);
            ASSERT_EQ(na, nb);
            if (na == nb) {
                ASSERT_MEM(da, db, na * 4);
                ASSERT_MEM(ta, tb, na * 4);
                ASSERT_MEM(sa, sb, (na + 127) / 128 * FDS_SIDX_SKIP_LEN);
            }
            ASSERT_EQ(x->pos != NULL, y->pos != NULL);
            if (na == nb && x->pos && y->pos) {
                size_t la = positions_len(a, x, t, ta, na);
                ASSERT_EQ(la, positions_len(b, y, t, tb, nb));
                ASSERTF(!memcmp(fds__sidx_term_pos(a, x, t), fds__sidx_term_pos(b, y, t), la),
                        "%.*s term %u positions", (int)x->name_len, x->name, t);
            }
        }
        for (uint32_t d = 0; d < md; d++) {
            ASSERT_EQ(fds__bit(x->present, d), fds__bit(y->present, d));
            if (x->norms)
                ASSERT_EQ(x->norms[d], y->norms[d]);
            if (x->kind == FDS_FT_KEYWORD)
                ASSERT_EQ(fds__col_ord(x, d), fds__col_ord(y, d));
            else if (x->kind == FDS_FT_DOUBLE && fds__bit(x->present, d)) {
                double vx = fds__col_f64(x, d), vy = fds__col_f64(y, d);
                ASSERT_MEM(&vx, &vy, 8);
            }
            else if (x->col && fds__bit(x->present, d))
                ASSERT_EQ(fds__col_i64(x, d), fds__col_i64(y, d));
        }
    }
    for (uint32_t d = 0; d < md; d++) {
        size_t lx, ly;
        const char *ix = fds_sidx_doc_id(a, d, &lx), *iy = fds_sidx_doc_id(b, d, &ly);
        ASSERT(lx == ly && !memcmp(ix, iy, lx));
        ASSERT_EQ(fds__get_u32(a->byid + (size_t)d * 4),
                  fds__get_u32(b->byid + (size_t)d * 4));
    }
    free(da);
    free(ta);
    free(db);
    free(tb);
    free(sa);
    free(sb);
}

/* Doc i of the golden version 7 file tests/golden/sidx/v7.sidx (1000 docs,
 * ids "0".."999"; a text field whose tokens repeat within a doc, so that
 * its blocks hold frequencies above 1, a long and a keyword). */
static const char *compat_doc(uint32_t i, char *buf, size_t cap)
{
    size_t o = (size_t)snprintf(buf, cap, "{\"msg\":\"");
    unsigned k = 1 + (i * 7u) % 9u;
    for (unsigned j = 0; j < k; j++)
        o += (size_t)snprintf(buf + o, cap - o, "%st%u", j ? " " : "",
                              (i * 31u + (j * j * 17u) % 7u) % 23u);
    snprintf(buf + o, cap - o, "\",\"n\":%u,\"k\":\"v%u\"}", i % 1000u, i % 11u);
    return buf;
}

/* A version 7 file (varint frequencies, written by the writer before
 * format 8) reads as the same postings, positions, norms and columns as
 * the current writer's file of the same documents, and a merge of it alone
 * rewrites it in the current format, smaller (its frequencies packed). */
static void test_v7(const char *path)
{
    fds_err err;
    fds_sidx *old = NULL, *cur = NULL, *merged = NULL;
    ASSERTF(fds_sidx_open(path, &old, &err) == 0, "%s", err.reason);
    if (!old)
        return;
    ASSERT_EQ(old->version, 7u);
    fds_mapping *m = fds_mapping_create();
    const char *map = "{\"properties\":{\"msg\":{\"type\":\"text\"},"
                      "\"n\":{\"type\":\"long\"},\"k\":{\"type\":\"keyword\"}}}";
    ASSERT(fds_mapping_merge_json(m, map, strlen(map), &err) == 0);
    fds_sidx_writer *w = fds_sidx_writer_create(m);
    char buf[512], id[16], cpath[64], mpath[64];
    for (uint32_t i = 0; i < 1000; i++) {
        compat_doc(i, buf, sizeof buf);
        snprintf(id, sizeof id, "%u", i);
        fds_err_clear(&err);
        ASSERT(fds_sidx_writer_add(w, i, id, strlen(id), (const uint8_t *)buf,
                                   strlen(buf), &err) == 0);
    }
    tmp_path(cpath, sizeof cpath);
    ASSERT(fds_sidx_writer_write(w, cpath, &err) == 0);
    fds_sidx_writer_free(w);
    ASSERT(fds_sidx_open(cpath, &cur, &err) == 0);
    if (cur) {
        ASSERT_EQ(cur->version, FDS_SIDX_VERSION);
        compare(old, cur, true);
    }
    tmp_path(mpath, sizeof mpath);
    ASSERT(fds_sidx_merge((const fds_sidx *const *)&old, NULL, 1, mpath, &err) == 0);
    ASSERT(fds_sidx_open(mpath, &merged, &err) == 0);
    if (merged && cur) {
        ASSERT_EQ(merged->version, FDS_SIDX_VERSION);
        compare(old, merged, true);
        ASSERT(fds_sidx_file_bytes(cur) < fds_sidx_file_bytes(old));
        ASSERT(fds_sidx_file_bytes(merged) < fds_sidx_file_bytes(old));
        printf("version 7 file %llu bytes, rewritten %llu\n",
               (unsigned long long)fds_sidx_file_bytes(old),
               (unsigned long long)fds_sidx_file_bytes(merged));
    }
    fds_sidx_close(old);
    fds_sidx_close(cur);
    fds_sidx_close(merged);
    unlink(cpath);
    unlink(mpath);
    fds_mapping_free(m);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--v7")) {
        test_v7(argv[2]);
        return fds_test_failures ? 1 : 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: test_sidx_merge NGINX_LOG [DOCS] | --v7 V7_SIDX\n");
        return 2;
    }
    size_t ndocs = argc > 2 ? (size_t)atol(argv[2]) : DEFAULT_DOCS;
    qt_docs docs = {0};
    ASSERT(qt_load(argv[1], &docs, ndocs) == 0 && docs.n > NSEG);
    fds_mapping *m = fds_mapping_create();
    fds_sidx_writer *ref = fds_sidx_writer_create(m);
    fds_sidx *in[NSEG];
    uint8_t *live[NSEG];
    char paths[NSEG][64], refpath[64], outpath[64];
    fds_err err;
    uint32_t rdoc = 0;
    size_t per = docs.n / NSEG;
    for (unsigned s = 0; s < NSEG; s++) {
        fds_sidx_writer *w = fds_sidx_writer_create(m);
        size_t from = s * per, to = s + 1 == NSEG ? docs.n : from + per;
        uint32_t nd = (uint32_t)(to - from) + (s == 2);
        live[s] = calloc((nd + 7) / 8 + 1, 1);
        for (uint32_t d = 0; d < nd; d++) {
            char id[32];
            /* input 2 ends with a field no other input has, and gives url
             * two values (its url is not single-valued, so neither is the
             * merged one); input 3 reuses ids of input 0 (deleted there
             * below) */
            const char *json = d + from < to ? docs.json[from + d]
                                             : "{\"only_here\":\"solo term\",\"n2\":7,"
                                               "\"url\":[\"/a b\",\"/c\"]}";
            /* every 7th doc a long value past FDS_SIDX_VALUE_MIN_BYTES,
             * of field lv: one of 13 repeated in every input, one held
             * once in each input, or one held by a single doc (the long
             * values repeat: every one has an id, in complete tables); of
             * field uv, another 7th: a value of its own, or one of 2
             * (mostly distinct: only the repeated ones have ids, and the
             * one held once in each input none after the merge) */
            char lv[512];
            if (d + from < to && d % 7 == 3) {
                unsigned v = d % 91 == 3 ? 1000u : d % 91 == 10 ? 2000u + s
                                                   : (from + d) % 13;
                snprintf(lv, sizeof lv, "{\"lv\":\"%0300u %s\"}",
                         d == 3 ? 9999u : v, "tail");
                json = lv;
            } else if (d + from < to && d % 7 == 5) {
                unsigned v = d == 5 ? 9999u : d % 70 == 5 ? d % 140 : from + d;
                snprintf(lv, sizeof lv, "{\"uv\":\"%0300u %s\"}", v, "tail");
                json = lv;
            }
            snprintf(id, sizeof id, "%s%zu", s == 3 && d % 9 == 0 ? "" : "x",
                     s == 3 && d % 9 == 0 ? (size_t)d : from + d);
            fds_err_clear(&err);
            ASSERT(fds_sidx_writer_add(w, d, id, strlen(id), (const uint8_t *)json,
                                       strlen(json), &err) == 0);
            bool keep = s == 1 || /* one input without deletes */
                        (next_rand() % DELETE_ONE_IN != 0 && !(s == 0 && d % 9 == 0));
            if (s == 2 && d == nd - 1)
                keep = true;
            if (keep) {
                live[s][d / 8] |= (uint8_t)(1u << (d % 8));
                ASSERT(fds_sidx_writer_add(ref, rdoc++, id, strlen(id),
                                           (const uint8_t *)json, strlen(json),
                                           &err) == 0);
            }
        }
        if (s == 1) {
            free(live[s]);
            live[s] = NULL;
        }
        tmp_path(paths[s], sizeof paths[s]);
        ASSERT(fds_sidx_writer_write(w, paths[s], &err) == 0);
        fds_sidx_writer_free(w);
        ASSERT(fds_sidx_open(paths[s], &in[s], &err) == 0);
    }
    tmp_path(refpath, sizeof refpath);
    ASSERT(fds_sidx_writer_write(ref, refpath, &err) == 0);
    fds_sidx_writer_free(ref);
    tmp_path(outpath, sizeof outpath);
    fds_err_clear(&err);
    int rc = fds_sidx_merge((const fds_sidx *const *)in,
                            (const uint8_t *const *)live, NSEG, outpath, &err);
    ASSERTF(rc == 0, "%s", err.reason);
    fds_sidx *a = NULL, *b = NULL;
    ASSERT(fds_sidx_open(refpath, &a, &err) == 0);
    ASSERTF(fds_sidx_open(outpath, &b, &err) == 0, "%s", err.reason);
    if (a && b)
        compare(a, b, false);
    const fds_sfield *fu = b ? fds__sidx_field(b, "url", 3) : NULL;
    const fds_sfield *fa = b ? fds__sidx_field(b, "user_agent", 10) : NULL;
    ASSERT(fu && !(fu->flags & FDS_SIDX_F_SINGLE));
    ASSERT(fa && (fa->flags & FDS_SIDX_F_SINGLE));
    /* lv: complete tables, the same ids; uv: sparse, the value held once
     * per input has an id only in the writer's */
    const fds_sfield *la = a ? fds__sidx_field(a, "lv", 2) : NULL;
    const fds_sfield *lb = b ? fds__sidx_field(b, "lv", 2) : NULL;
    const fds_sfield *ua = a ? fds__sidx_field(a, "uv", 2) : NULL;
    const fds_sfield *ub = b ? fds__sidx_field(b, "uv", 2) : NULL;
    ASSERT(la && lb && la->vcomplete && lb->vcomplete && la->nvals > 13);
    ASSERT(ua && ub && !ua->vcomplete && !ub->vcomplete && ub->nvals >= 2 &&
           ub->nvals < ua->nvals);
    uint32_t ida = a ? docs_with_ids(a) : 0, idb = b ? docs_with_ids(b) : 0;
    ASSERT(ida > 0 && idb > 0 && idb < ida);
    printf("merged %u live docs of %zu; .sidx %llu bytes (writer: %llu); "
           "docs with a value id %u (writer: %u)\n",
           rdoc, docs.n + 1, (unsigned long long)(b ? fds_sidx_file_bytes(b) : 0),
           (unsigned long long)(a ? fds_sidx_file_bytes(a) : 0), idb, ida);
    /* one input, nothing deleted: the same file content */
    char onepath[64];
    tmp_path(onepath, sizeof onepath);
    ASSERT(fds_sidx_merge((const fds_sidx *const *)&in[1], NULL, 1, onepath,
                          &err) == 0);
    fds_sidx *c = NULL;
    ASSERT(fds_sidx_open(onepath, &c, &err) == 0);
    if (c)
        compare(in[1], c, true);
    fds_sidx_close(a);
    fds_sidx_close(b);
    fds_sidx_close(c);
    for (unsigned k = 0; k < NSEG; k++) {
        fds_sidx_close(in[k]);
        free(live[k]);
        unlink(paths[k]);
    }
    unlink(refpath);
    unlink(outpath);
    unlink(onepath);
    for (size_t i = 0; i < docs.n; i++)
        free(docs.json[i]);
    free(docs.json);
    free(docs.len);
    fds_mapping_free(m);
    if (fds_test_failures)
        fprintf(stderr, "%d failure(s)\n", fds_test_failures);
    return fds_test_failures ? 1 : 0;
}
