/*
 * collector.h: what execution feeds its matches to (src/query only).
 *
 * Lucene's Collector / LeafCollector: fds_search_execute knows nothing of
 * what collects its matches beyond this interface.  Per segment it calls
 * fds__collector_set_segment (LeafCollector: getLeafCollector), then hands
 * every live matching doc of that segment in increasing doc order to
 * fds__collector_add (or a run of them to fds__collector_add_range), and at
 * the end fds__collector_finish, which gives the collector's result to the
 * search's; fds__collector_free releases it.  needs_scores is Lucene's
 * ScoreMode: when false, execution need not compute scores and the batch
 * carries none.
 *
 * The docs are batched in the collector's head (FDS__COLLECT_BATCH at a
 * time, static inline appends): the one indirect call, ops->collect, runs
 * once per batch, never per doc, so a collector can loop tightly over the
 * batch.  An implementation embeds fds__collector as the first member of
 * its own state and fills `ops` and `needs_scores` when it is made.
 */
#ifndef FDS_COLLECTOR_H
#define FDS_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query.h"

/* Docs handed to ops->collect at a time. */
#define FDS__COLLECT_BATCH 512u

typedef struct fds__collector fds__collector;

/* A segment of the search as a collector sees it (Lucene's
 * LeafReaderContext): its position among the search's segments, the
 * segment, and the docs of the segments before it (_doc values). */
typedef struct fds__leaf {
    unsigned ord;
    const fds_search_segment *seg;
    uint64_t docbase;
} fds__leaf;

typedef struct fds__collector_ops {
    /* Docs of segment `leaf` come next (the previous segment's are all
     * collected).  0 or a negative FDS_E* code (the collector fills its
     * error detail); execution stops on an error. */
    int (*set_segment)(fds__collector *c, const fds__leaf *leaf);
    /* docs[0..n) of the current segment, increasing, all live and
     * matching; scores[0..n) their scores, NULL unless needs_scores.  An
     * error is kept for finish. */
    void (*collect)(fds__collector *c, const uint32_t *docs,
                    const float *scores, size_t n);
    /* The end of the search: the collector's result into out (aggregations:
     * out->aggs).  0 or the first error of the collection. */
    int (*finish)(fds__collector *c, fds_search_result *out);
    /* Release c (what finish gave to out is out's). */
    void (*free)(fds__collector *c);
} fds__collector_ops;

/* The head of a collector: its operations and the docs not yet collected
 * (score[] set only when needs_scores). */
struct fds__collector {
    const fds__collector_ops *ops;
    bool needs_scores;
    size_t n;
    uint32_t doc[FDS__COLLECT_BATCH];
    float score[FDS__COLLECT_BATCH];
};

/* The buffered docs to c now. */
static inline void fds__collector_flush(fds__collector *c)
{
    if (c->n)
        c->ops->collect(c, c->doc, c->needs_scores ? c->score : NULL, c->n);
    c->n = 0;
}

/* Live matching doc `doc` of the current segment, whose score is `score`
 * (read only when c->needs_scores); inline, as it runs for every match. */
static inline void fds__collector_add(fds__collector *c, uint32_t doc,
                                      float score)
{
    c->score[c->n] = score;
    c->doc[c->n++] = doc;
    if (c->n == FDS__COLLECT_BATCH)
        fds__collector_flush(c);
}

/* fds__collector_add of every doc in [lo, hi) of the current segment (all
 * live and matching: a match_all over a segment without deletions), for a
 * collector that does not need scores. */
static inline void fds__collector_add_range(fds__collector *c, uint32_t lo,
                                            uint32_t hi)
{
    while (lo < hi) {
        size_t k = FDS__COLLECT_BATCH - c->n;
        if (k > hi - lo)
            k = hi - lo;
        uint32_t *p = c->doc + c->n;
        size_t i = 0;
        for (; i + 8 <= k; i += 8) /* blocks of 8: stored as vectors */
            for (unsigned j = 0; j < 8; j++)
                p[i + j] = lo + (uint32_t)(i + j);
        for (; i < k; i++)
            p[i] = lo + (uint32_t)i;
        c->n += k;
        lo += (uint32_t)k;
        if (c->n == FDS__COLLECT_BATCH)
            fds__collector_flush(c);
    }
}

/* fds__collector_add of the docs base + i of each bit i set in `word`
 * (all live and matching), for a collector that does not need scores:
 * the set bits are written four at a time whatever their number, so that
 * the loop's branches follow the popcount, not each bit (a bitset of a
 * query's matches; Lemire's decoding of bitmaps). */
static inline void fds__collector_add_word(fds__collector *c, uint32_t base,
                                           uint64_t word)
{
    if (c->n + 64 + 3 > FDS__COLLECT_BATCH) /* room for every bit + 3 */
        fds__collector_flush(c);
    uint32_t *p = c->doc + c->n;
    size_t n = (size_t)__builtin_popcountll(word);
    for (size_t i = 0; i < n; i += 4) /* bit 63 stands in past the last */
        for (unsigned j = 0; j < 4; j++) {
            p[i + j] = base + (uint32_t)__builtin_ctzll(word | 1ull << 63);
            word &= word - 1;
        }
    c->n += n;
}

/* Segment `leaf` starts: the previous one's buffered docs are collected
 * first.  0 or the collector's error. */
static inline int fds__collector_set_segment(fds__collector *c,
                                             const fds__leaf *leaf)
{
    fds__collector_flush(c);
    return c->ops->set_segment(c, leaf);
}

/* The search is over: the rest collected, the result into out.  0 or the
 * collector's first error. */
static inline int fds__collector_finish(fds__collector *c,
                                        fds_search_result *out)
{
    fds__collector_flush(c);
    return c->ops->finish(c, out);
}

/* Release c (NULL is a no-op). */
static inline void fds__collector_free(fds__collector *c)
{
    if (c)
        c->ops->free(c);
}

#endif
