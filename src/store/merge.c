/*
 * merge.c: merging segments, always within one shard.  The background
 * policy merges the most balanced adjacent run when a shard has more than
 * FDS_MERGE_SEGMENTS_MAX segments (merge_pick); _forcemerge merges each shard down to
 * N, then rewrites segments with deletes, other
 * codec settings or an under-trained dictionary.  Inputs free of deletes
 * and written with today's codec, level, block size and dictionary have
 * their blocks copied byte for byte, unless too many of their blocks are
 * incomplete (merge_too_dirty); otherwise live documents are re-encoded.
 * The merged segment takes the place of the first input, so doc order
 * (newest last) holds for id lookups.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "store_int.h"

/* merge_too_dirty: more than 1 block in this many incomplete (Lucene's 1%) */
#define MERGE_DIRTY_PERCENT_DIVISOR 100

/* Incomplete ("dirty") blocks of sg: closed because the refresh or merge
 * ran out of documents, not because the block reached its size or doc
 * limit.  Every refresh ends with one, so copying blocks of many small
 * refreshes keeps many small, badly compressed blocks. */
static void seg_dirty(const fds__seg *sg, uint64_t *blocks, uint64_t *docs)
{
    uint64_t dropped = 0;
    for (uint32_t b = 0; b < sg->nblocks; b++) {
        const uint8_t *e = sg->blk_index + (size_t)b * FDT_BLKIDX_ENTRY;
        fds_block_info info;
        uint64_t off = fds__get_u64(e);
        /* a header in nearly every page: without this the whole file
         * would be resident (measured: +370 MiB at a 2M-doc merge) */
        if (off >= dropped + FDS__DROP_CHUNK) {
            fds__drop_pages(sg->map, dropped, off);
            dropped = off;
        }
        if (fds_block_info_read(sg->map + off, fds__get_u32(e + 12), &info) != 0)
            continue; /* a damaged block fails when it is read */
        if (info.raw_len < sg->block_size && info.ndocs < sg->max_docs_per_block) {
            (*blocks)++;
            *docs += info.ndocs;
        }
    }
    fds__drop_pages(sg->map, dropped, sg->map_len);
}

/*
 * Should a merge of segs[0, n) re-encode although it could copy blocks?
 * Lucene's tooDirty() (Lucene90CompressingStoredFieldsWriter): "enough
 * dirty docs to make a full block AND more than 1% blocks are dirty".
 * Lucene asks it per input and counts copied dirty chunks into the output;
 * a merge here copies all inputs or none, so it asks it of their sum, the
 * blocks the merged segment would hold.
 */
static bool merge_too_dirty(fds__seg *const *segs, unsigned n)
{
    uint64_t blocks = 0, dirty = 0, dirty_docs = 0;
    uint32_t max_docs = 0;
    for (unsigned i = 0; i < n; i++) {
        blocks += segs[i]->nblocks;
        seg_dirty(segs[i], &dirty, &dirty_docs);
        max_docs = segs[i]->max_docs_per_block;
    }
    return dirty_docs > max_docs &&
           dirty * MERGE_DIRTY_PERCENT_DIVISOR > blocks;
}

typedef fds__merge_src merge_src;
#define merge_load fds__merge_load

void fds__merge_doc(fds__bufdoc *o, const fds__seg *sg, uint32_t doc)
{
    size_t idl;
    o->id = (char *)fds_sidx_doc_id(sg->sidx, doc, &idl);
    o->id_len = idl;
    o->version = fds__seg_version(sg, doc);
    o->seq_no = fds__seg_seqno(sg, doc);
    o->routing = (char *)fds__routes_get(&sg->routes, doc, &o->routing_len);
}

int fds__merge_load(void *ctx, size_t i, const uint8_t **src, size_t *len,
                    fds_err *err)
{
    merge_src *m = ctx;
    return fds__seg_cursor_read(m->ix, &m->cur, m->segs[m->where[i].seg],
                                m->where[i].doc, src, len, err);
}

/* Bytes of the live sources of v->segs[from, from+count): the footer's
 * total for a segment without deletes, the decoded lengths otherwise. */
static int merge_raw_bytes(merge_src *m, const fds_index_view *v,
                           unsigned from, unsigned count, uint64_t *out,
                           fds_err *err)
{
    *out = 0;
    for (unsigned i = from; i < from + count; i++) {
        const fds__seg *sg = v->segs[i];
        if (!v->lives[i]) {
            *out += sg->raw_bytes;
            continue;
        }
        for (uint32_t d = 0; d < sg->max_doc; d++) {
            const uint8_t *src;
            size_t len;
            if (!fds__live_get(v->lives[i], d))
                continue;
            int rc = fds__seg_cursor_read(m->ix, &m->cur, sg, d, &src, &len, err);
            if (rc)
                return rc;
            *out += len;
        }
    }
    return 0;
}

/* Copy every source of docs[0, n) to the heap (a merge that trains a
 * dictionary samples them). */
static int merge_materialize(merge_src *m, fds__bufdoc *docs, size_t n,
                             fds_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const uint8_t *src;
        size_t len;
        int rc = merge_load(m, i, &src, &len, err);
        if (rc)
            return rc;
        if (!(docs[i].src = malloc(len + 1)))
            return FDS_ENOMEM;
        memcpy(docs[i].src, src, len);
        docs[i].src_len = len;
    }
    return 0;
}

/* The run [*a, *b) of published segments of the first shard >= shard
 * (the list is grouped by shard, ascending); false when there is none.
 * Positions move while a merge builds (a refresh drops segments it
 * emptied), so callers find a shard's run again after each merge.  Caller
 * holds refresh_mu. */
static bool shard_run(const fds_index *ix, uint32_t shard, unsigned *a,
                      unsigned *b)
{
    unsigned i = 0;
    while (i < ix->nsegs && ix->segs[i]->shard < shard)
        i++;
    if (i == ix->nsegs)
        return false;
    unsigned j = i;
    while (j < ix->nsegs && ix->segs[j]->shard == ix->segs[i]->shard)
        j++;
    *a = i;
    *b = j;
    return true;
}

/*
 * The live docs of a merged segment: its docs k = where[k] (input seg,
 * doc) were live when the merge took its view v; a refresh that ran while
 * it was being built may have replaced or deleted some (their bits
 * cleared in the input's published bitset, or the whole input dropped
 * once nothing in it was live).  Those deletes carry over to the merged
 * segment, as Lucene's IndexWriter.commitMergedDeletes carries the
 * deletes of a merge's inputs.  *out: NULL when every doc is still live,
 * else a new bitset of nd docs.  Caller holds refresh_mu.  0 or
 * FDS_ENOMEM.
 */
static int carry_deletes(const fds_index *ix, const fds_index_view *v,
                         const fds__merge_where *where, size_t nd,
                         fds__live **out)
{
    *out = NULL;
    for (size_t k = 0; k < nd;) { /* an input's docs are consecutive */
        uint32_t si = where[k].seg;
        unsigned p = 0;
        while (p < ix->nsegs && ix->segs[p] != v->segs[si])
            p++;
        for (; k < nd && where[k].seg == si; k++) {
            if (p < ix->nsegs && fds__live_get(ix->lives[p], where[k].doc))
                continue;
            if (!*out && !(*out = fds__live_copy(NULL, (uint32_t)nd)))
                return FDS_ENOMEM;
            (*out)->bits[k >> 3] &= (uint8_t)~(1u << (k & 7));
            (*out)->del_count++;
        }
    }
    return 0;
}

/* Whether a merge of v->segs[from, from + count) copies their blocks
 * unchanged: clean inputs written with today's settings (`set`) in today's
 * block format (FDS_BLOCK_FORMAT_VERSION), not too dirty, and no new
 * dictionary to train. */
static bool merge_can_copy(fds_index *ix, const fds_index_view *v,
                           unsigned from, unsigned count,
                           const fds_index_settings *set, bool retrain)
{
    bool copy = !retrain;
    const fds_dict *cur = fds_codec_uses_dict(set->codec.codec)
                              ? fds__dict_current(ix, set->codec.codec) : NULL;
    for (unsigned i = from; i < from + count && copy; i++) {
        const fds__seg *sg = v->segs[i];
        copy = !v->lives[i] && sg->codec == (uint32_t)set->codec.codec &&
               sg->block_format == FDS_BLOCK_FORMAT_VERSION &&
               sg->dict_id == (cur ? fds_dict_id(cur) : 0) &&
               sg->block_size == set->codec.block_size &&
               sg->max_docs_per_block == set->codec.max_docs_per_block &&
               (sg->level == (uint32_t)set->codec.level ||
                (set->codec.codec != FDS_CODEC_ZSTD &&
                 set->codec.codec != FDS_CODEC_ZSTD_NO_DICT));
    }
    if (copy && merge_too_dirty(v->segs + from, count))
        copy = false;
    return copy;
}

/* Build the merged segment of the nd live docs of v->segs[from, from +
 * count) (their blocks copied when `copy`), its .tim merged from the
 * inputs', with the shard and routing values of its docs: *merged, left
 * NULL when nd is 0.  0 or the build's error. */
static int merge_build(fds_index *ix, const fds_index_view *v, unsigned from,
                       unsigned count, const fds_index_settings *set,
                       const fds__bufdoc *docs, size_t nd,
                       const fds__doc_loader *ld, bool copy, bool retrain,
                       fds__seg **merged, fds_err *err)
{
    int rc = 0;
    const fds_sidx **tin = calloc(count, sizeof *tin);
    const uint8_t **tlive = calloc(count, sizeof *tlive);
    if (!tin || !tlive)
        rc = FDS_ENOMEM;
    for (unsigned i = 0; !rc && i < count; i++) {
        tin[i] = v->segs[from + i]->sidx;
        tlive[i] = v->lives[from + i] ? v->lives[from + i]->bits : NULL;
    }
    fds__tim_inputs tim_from = {tin, tlive, count};
    if (!rc && nd)
        rc = fds__build_segment(ix, docs, nd, ld, set,
                                copy ? v->segs + from : NULL, copy ? count : 0,
                                retrain, &tim_from, merged, err);
    if (!rc && *merged) {
        (*merged)->shard = v->segs[from]->shard;
        rc = fds__routes_from_docs(&(*merged)->routes, docs, nd);
    }
    free(tin);
    free(tlive);
    return rc;
}

/* The merge's one catalogue transaction: the merged segment's row (if
 * any) with its live docs `mlive` (NULL: all live), the inputs' rows
 * gone.  Caller holds refresh_mu; takes db_mu. */
static int merge_commit(fds_index *ix, const fds_index_view *v, unsigned from,
                        unsigned count, const fds__bufdoc *docs, size_t nd,
                        fds__seg *merged, const fds__live *mlive,
                        fds_err *err)
{
    sqlite3 *db = ix->st->db;
    pthread_mutex_lock(&ix->st->db_mu);
    int rc = fds__cat_begin(db, true, err);
    int64_t max_seq = 0;
    for (size_t i = 0; i < nd; i++)
        if (docs[i].seq_no > max_seq)
            max_seq = docs[i].seq_no;
    if (!rc && merged)
        rc = fds__segment_insert(ix, merged, max_seq, err);
    if (!rc && mlive)
        rc = fds__segment_live_save(ix, merged, mlive, err);
    for (unsigned i = from; i < from + count && !rc; i++)
        rc = fds__cat_segment_delete(db, v->segs[i]->id, err);
    rc = fds__cat_end(db, rc, NULL, err);
    pthread_mutex_unlock(&ix->st->db_mu);
    return rc;
}

/* Merge segments [from, from+count) of the published list (all of one
 * shard) into one,
 * re-encoding live docs with the current settings.  Sources are decoded
 * one input block at a time while the new .fdt is written, not held on the
 * heap, unless a dictionary is trained from them; the .tim is merged from
 * the inputs' .tim files (fds_sidx_merge), never from sources.  Ids point
 * into the inputs' mapped .tim files, which the view keeps open.
 * Caller holds merge_mu and refresh_mu; refresh_mu is let go while the
 * merged segment is built (the long part), so refreshes and flushes go on
 * meanwhile, and taken again to publish it with the deletes they made
 * (carry_deletes).  Only merges take segments out of the set, and
 * merge_mu keeps them one at a time: the inputs stay published,
 * adjacent, until this one publishes. */
static int merge_range(fds_index *ix, unsigned from, unsigned count,
                       fds_err *err)
{
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    fds_index_view *v;
    int rc = fds_index_view_acquire(ix, &v, err);
    if (rc)
        return rc;
    pthread_mutex_unlock(&ix->refresh_mu);
    size_t total = 0;
    for (unsigned i = from; i < from + count; i++)
        total += v->segs[i]->max_doc;
    fds__bufdoc *docs = calloc(total + 1, sizeof *docs);
    fds__merge_where *where = malloc((total + 1) * sizeof *where);
    merge_src ms = {.ix = ix, .segs = v->segs, .where = where};
    ms.cur.cc = fds_codec_ctx_create();
    fds__doc_loader ld = {merge_load, &ms};
    size_t nd = 0;
    if (!docs || !where || !ms.cur.cc)
        rc = FDS_ENOMEM;
    for (unsigned i = from; i < from + count && !rc; i++) {
        fds__seg *sg = v->segs[i];
        for (uint32_t d = 0; d < sg->max_doc; d++) {
            if (!fds__live_get(v->lives[i], d))
                continue;
            fds__merge_doc(&docs[nd], sg, d);
            where[nd].seg = i;
            where[nd++].doc = d;
        }
    }
    uint64_t merge_bytes = 0;
    if (!rc)
        rc = merge_raw_bytes(&ms, v, from, count, &merge_bytes, err);
    bool retrain = fds__dict_wants_retrain(ix, &set, merge_bytes);
    int cur_level;
    if (!rc && fds_codec_uses_dict(set.codec.codec) &&
        (retrain || !fds__dict_current_level(ix, set.codec.codec, &cur_level)))
        rc = merge_materialize(&ms, docs, nd, err);
    /* clean inputs written with today's settings: copy their blocks */
    bool copy = merge_can_copy(ix, v, from, count, &set, retrain);
    fds__seg *merged = NULL;
    if (!rc)
        rc = merge_build(ix, v, from, count, &set, docs, nd, &ld, copy,
                         retrain, &merged, err);
    pthread_mutex_lock(&ix->refresh_mu);
    /* deleted meanwhile (a delete does not wait for a merge): what was
     * built goes, with the folder the delete may have failed to remove
     * while this wrote into it */
    bool gone = atomic_load(&ix->deleted);
    if (gone) { /* the index is what failed, whatever the build said */
        fds_err_clear(err);
        rc = fds__index_not_found(err, ix->name);
        if (merged) {
            atomic_store(&merged->dropped, true);
            fds__seg_unref(merged);
            merged = NULL;
        }
    }
    fds__live *mlive = NULL;
    if (!rc && merged)
        rc = carry_deletes(ix, v, where, nd, &mlive);
    if (mlive && mlive->del_count == mlive->max_doc) {
        /* everything it holds was deleted meanwhile: the inputs just go */
        fds__live_unref(mlive);
        mlive = NULL;
        atomic_store(&merged->dropped, true);
        fds__seg_unref(merged);
        merged = NULL;
    }
    if (!rc)
        rc = merge_commit(ix, v, from, count, docs, nd, merged, mlive, err);
    if (!rc) {
        /* one step: the merged segment takes the place of the first merged
         * one (doc order, newest last, is kept for id lookups) as the
         * inputs leave */
        rc = fds__publish(ix, NULL, 0, merged ? &merged : NULL,
                          merged ? &mlive : NULL, merged ? 1 : 0,
                          v->segs + from, count);
        if (!rc)
            merged = NULL, mlive = NULL;
    }
    fds__live_unref(mlive);
    if (merged) {
        atomic_store(&merged->dropped, true);
        fds__seg_unref(merged);
    }
    for (size_t i = 0; i < nd; i++)
        free(docs[i].src);
    free(docs);
    free(where);
    fds_codec_ctx_free(ms.cur.cc);
    fds_index_view_release(v);
    if (gone)
        rmdir(ix->dir); /* fails, harmlessly, if anything is left in it */
    fds__heap_release();
    return rc;
}

/* Should _forcemerge rewrite published segment i on its own: it has
 * deletes to expunge, was written with other codec settings (a codec
 * change applies to old segments here), blocks of an older format version
 * (0: unknown, a damaged first block, is left to the reads that fail) or
 * an under-trained dictionary.
 * Caller holds refresh_mu. */
static bool wants_rewrite(fds_index *ix, const fds_index_settings *set,
                          unsigned i)
{
    const fds__seg *sg = ix->segs[i];
    bool stale = sg->codec != (uint32_t)set->codec.codec ||
                 (sg->block_format != 0 &&
                  sg->block_format != FDS_BLOCK_FORMAT_VERSION) ||
                 sg->block_size != set->codec.block_size ||
                 sg->max_docs_per_block != set->codec.max_docs_per_block ||
                 ((set->codec.codec == FDS_CODEC_ZSTD ||
                   set->codec.codec == FDS_CODEC_ZSTD_NO_DICT) &&
                  sg->level != (uint32_t)set->codec.level);
    return stale || ix->lives[i] ||
           fds__dict_wants_retrain(ix, set, sg->raw_bytes);
}

int fds_index_forcemerge(fds_index *ix, unsigned max_segments, fds_err *err)
{
    int rc = fds_index_refresh(ix, err);
    if (rc)
        return rc;
    if (max_segments == 0)
        max_segments = 1;
    pthread_mutex_lock(&ix->merge_mu);
    pthread_mutex_lock(&ix->refresh_mu);
    /* deleted (or closed) since the refresh let go of refresh_mu */
    rc = fds__index_usable(ix, err);
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    /* each shard's run of the (shard-grouped) list down to max_segments:
     * one merge per shard, of the segments published when it starts */
    unsigned a, b;
    for (uint32_t sh = 0; !rc && shard_run(ix, sh, &a, &b);) {
        sh = ix->segs[a]->shard + 1;
        if (b - a > max_segments)
            rc = merge_range(ix, a, b - a - max_segments + 1, err);
    }
    /* what is left: each segment that wants_rewrite now, by generation
     * (its position may move while another one is rewritten) */
    uint64_t *gens = malloc((ix->nsegs + 1) * sizeof *gens);
    size_t ng = 0;
    if (!gens && !rc)
        rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    for (unsigned i = 0; !rc && i < ix->nsegs; i++)
        if (wants_rewrite(ix, &set, i))
            gens[ng++] = ix->segs[i]->gen;
    for (size_t g = 0; !rc && g < ng; g++)
        for (unsigned i = 0; i < ix->nsegs; i++)
            if (ix->segs[i]->gen == gens[g]) {
                rc = merge_range(ix, i, 1, err);
                break;
            }
    free(gens);
    pthread_mutex_unlock(&ix->refresh_mu);
    pthread_mutex_unlock(&ix->merge_mu);
    return rc;
}

/* Sizes below this many docs count as this many when merges are scored,
 * so that tiny segments (a periodic refresh of a few docs) look alike
 * (TieredMergePolicy's floorSegmentMB, in docs). */
#define MERGE_FLOOR_DOCS 1024u

bool fds__merge_pick(const uint64_t *docs, unsigned n, unsigned *from,
                     unsigned *count)
{
    if (n <= FDS_MERGE_SEGMENTS_MAX)
        return false;
    double best_skew = INFINITY;
    uint64_t best_total = UINT64_MAX;
    for (unsigned w = 2; w <= FDS_MERGE_SEGMENTS_MAX / 2 + 1; w++)
        for (unsigned f = 0; f + w <= n; f++) {
            uint64_t total = 0, big = 0;
            for (unsigned i = f; i < f + w; i++) {
                uint64_t d = docs[i] < MERGE_FLOOR_DOCS ? MERGE_FLOOR_DOCS
                                                        : docs[i];
                total += d;
                if (d > big)
                    big = d;
            }
            double skew = (double)big / (double)total;
            if (skew < best_skew || (skew == best_skew && total < best_total)) {
                best_skew = skew;
                best_total = total;
                *from = f;
                *count = w;
            }
        }
    return true;
}

void fds__index_maybe_merge(fds_index *ix)
{
    pthread_mutex_lock(&ix->merge_mu);
    pthread_mutex_lock(&ix->refresh_mu);
    /* refreshes go on while a merge builds: at most as many merges per
     * call as segments at its start, so that one index under a steady
     * load does not keep the merge thread from the others */
    unsigned budget = ix->nsegs, a, b;
    for (uint32_t sh = 0; budget && shard_run(ix, sh, &a, &b) &&
                          !fds__index_usable(ix, NULL);) {
        unsigned from = 0, count = 0;
        uint64_t *docs = malloc((b - a) * sizeof *docs);
        for (unsigned i = a; docs && i < b; i++)
            docs[i - a] = ix->segs[i]->max_doc;
        bool pick = docs && fds__merge_pick(docs, b - a, &from, &count);
        free(docs);
        if (!pick || count < 2) {
            sh = ix->segs[a]->shard + 1;
            continue;
        }
        budget--;
        fds_err err;
        fds_err_clear(&err);
        if (merge_range(ix, a + from, count, &err)) {
            if (!atomic_load(&ix->deleted))
                fprintf(stderr, "fieldstore: [%s] merge failed: %s\n",
                        ix->name, err.reason);
            break;
        }
        /* the shard's run has shrunk: look at it again */
    }
    pthread_mutex_unlock(&ix->refresh_mu);
    pthread_mutex_unlock(&ix->merge_mu);
}
