/*
 * qtest_shard.h: what the aggregation tests share (test_aggs_property,
 * test_aggs_ordinals): a xorshift random source and a shard of segments
 * built from JSON documents, cut at given points, with deletions through
 * the segments' live bitsets.
 */
#ifndef FDS_QTEST_SHARD_H
#define FDS_QTEST_SHARD_H

#include <stdint.h>
#include <unistd.h>

#include "fds_test.h"
#include "query.h"

/* Most segments of a test shard. */
#define QT_SEG_MAX 5

/* A uniform draw in [0, n) (0 when n is 0) from the xorshift state *s. */
static inline uint32_t qt_rnd(uint64_t *s, uint32_t n)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return n ? (uint32_t)(*s % n) : 0;
}

/* A mapping made from the JSON `json` (a failure is counted). */
__attribute__((unused)) static fds_mapping *qt_mapping(const char *json)
{
    fds_mapping *m = fds_mapping_create();
    fds_err err;
    fds_err_clear(&err);
    ASSERTF(fds_mapping_merge_json(m, json, strlen(json), &err) == 0, "%s", err.reason);
    return m;
}

typedef struct qt_shard {
    fds_sidx *sx[QT_SEG_MAX];
    uint8_t *live[QT_SEG_MAX];
    fds_search_segment segs[QT_SEG_MAX];
    unsigned nseg;
} qt_shard;

/* Docs [cuts[0], cuts[nseg]) as segments [cuts[s], cuts[s + 1]) (empty
 * ones left out; nseg <= QT_SEG_MAX) written under dir: doc i's JSON the
 * string at json + i * stride, deleted unless the bool at live + i *
 * stride (an array of doc structs: the fields of its first); its _id is
 * i. */
__attribute__((unused)) static void
qt_shard_build(fds_mapping *m, const int *cuts, unsigned nseg, const char *json,
               const bool *live, size_t stride, qt_shard *sh, const char *dir)
{
    sh->nseg = 0;
    for (unsigned s = 0; s < nseg; s++) {
        int n = cuts[s + 1] - cuts[s];
        if (n <= 0)
            continue;
        fds_sidx_writer *w = fds_sidx_writer_create(m);
        uint8_t *lv = calloc((size_t)(n + 7) / 8, 1);
        bool dels = false;
        fds_err err;
        fds_err_clear(&err);
        for (int k = 0; k < n; k++) {
            size_t at = (size_t)(cuts[s] + k) * stride;
            const char *j = json + at;
            char id[16];
            snprintf(id, sizeof id, "%d", cuts[s] + k);
            ASSERTF(fds_sidx_writer_add(w, (uint32_t)k, id, strlen(id),
                                        (const uint8_t *)j, strlen(j), &err) == 0,
                    "%s", err.reason);
            if (*(const bool *)((const char *)live + at))
                lv[k / 8] |= (uint8_t)(1u << (k % 8));
            else
                dels = true;
        }
        char p[256];
        snprintf(p, sizeof p, "%s/s%u.sidx", dir, sh->nseg);
        ASSERT(fds_sidx_writer_write(w, p, &err) == 0);
        fds_sidx_writer_free(w);
        unsigned i = sh->nseg++;
        ASSERT(fds_sidx_open(p, &sh->sx[i], &err) == 0);
        unlink(p);
        sh->live[i] = lv;
        sh->segs[i] = (fds_search_segment){.sidx = sh->sx[i], .live = dels ? lv : NULL};
    }
}

__attribute__((unused)) static void qt_shard_free(qt_shard *sh)
{
    for (unsigned i = 0; i < sh->nseg; i++) {
        fds_sidx_close(sh->sx[i]);
        free(sh->live[i]);
    }
}

#endif
