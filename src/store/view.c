/*
 * view.c: reads of an index.  A view pins the published segment list and
 * its live-docs bitsets (reference counts, no copies), so a search or get
 * sees one consistent set while a refresh or merge publishes a new one; a
 * merged-away segment's files go when the last view releases it.  Also the
 * realtime get (buffer first, then segments) and the statistics of the
 * published set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* out's `_routing`: `rt` (len bytes, at most FDS_ROUTING_MAX) or none. */
static void doc_routing(fds_doc *out, const char *rt, size_t len)
{
    out->has_routing = rt != NULL;
    out->routing_len = rt && len <= FDS_ROUTING_MAX ? len : 0;
    if (rt)
        memcpy(out->routing, rt, out->routing_len);
    out->routing[out->routing_len] = 0;
}

/* The live doc `id` of the published segments of `shard` (newest first). */
static int segs_get(fds_index *ix, const char *id, size_t id_len,
                    uint32_t shard, fds_doc *out, fds_err *err)
{
    fds_index_view *v;
    int rc = fds_index_view_acquire(ix, &v, err);
    if (rc)
        return rc;
    rc = FDS_ENOTFOUND;
    for (unsigned i = v->nsegs; i-- > 0;) {
        uint32_t doc;
        if (v->segs[i]->shard != shard ||
            !fds__seg_may_hold(v->segs[i], id, id_len) ||
            fds_sidx_find_id(v->segs[i]->sidx, id, id_len, &doc) != 0 ||
            !fds__live_get(v->lives[i], doc))
            continue;
        const uint8_t *src;
        size_t len;
        rc = fds__seg_read_doc(ix, v->segs[i], doc, &src, &len, err);
        if (rc == 0) {
            out->src = malloc(len + 1);
            if (!out->src)
                rc = FDS_ENOMEM;
            else {
                memcpy(out->src, src, len);
                out->src_len = len;
                out->version = fds__seg_version(v->segs[i], doc);
                out->seq_no = fds__seg_seqno(v->segs[i], doc);
                size_t rl;
                const char *rt = fds__routes_get(&v->segs[i]->routes, doc, &rl);
                doc_routing(out, rt, rl);
            }
        }
        break;
    }
    fds_index_view_release(v);
    return rc;
}

int fds_index_get_routed(fds_index *ix, const char *id, size_t id_len,
                         const char *routing, size_t rlen, bool realtime,
                         fds_doc *out, fds_err *err)
{
    memset(out, 0, sizeof *out);
    uint32_t shard = fds__shard_of(ix, id, id_len, routing, rlen);
    if (!realtime)
        return segs_get(ix, id, id_len, shard, out, err);
    if (!fds_index_is_open(ix))
        return fds__index_closed(ix, err);
    /* the buffer's own lock: a write holding the index lock across its
     * commit does not hold up a realtime get */
    pthread_mutex_lock(&ix->buf_mu);
    fds__bufdoc *d = fds__buf_find(&ix->buf, id, id_len, shard);
    if (!d)
        d = fds__buf_find(&ix->frozen, id, id_len, shard);
    if (d) {
        int rc = FDS_ENOTFOUND;
        if (d->src) {
            out->src = malloc(d->src_len + 1);
            rc = out->src ? 0 : FDS_ENOMEM;
            if (out->src) {
                memcpy(out->src, d->src, d->src_len);
                out->src_len = d->src_len;
                out->version = d->version;
                out->seq_no = d->seq_no;
                doc_routing(out, d->routing, d->routing_len);
            }
        }
        pthread_mutex_unlock(&ix->buf_mu);
        return rc;
    }
    pthread_mutex_unlock(&ix->buf_mu);
    return segs_get(ix, id, id_len, shard, out, err);
}

int fds_index_get(fds_index *ix, const char *id, size_t id_len, fds_doc *out,
                  fds_err *err)
{
    return fds_index_get_routed(ix, id, id_len, NULL, 0, true, out, err);
}

int fds_index_get_searchable(fds_index *ix, const char *id, size_t id_len,
                             fds_doc *out, fds_err *err)
{
    return fds_index_get_routed(ix, id, id_len, NULL, 0, false, out, err);
}

int fds_index_view_acquire(fds_index *ix, fds_index_view **out, fds_err *err)
{
    if (!fds_index_is_open(ix))
        return fds__index_closed(ix, err);
    fds_index_view *v = calloc(1, sizeof *v);
    if (!v)
        return FDS_ENOMEM;
    pthread_rwlock_rdlock(&ix->segs_lock);
    unsigned n = ix->nsegs;
    v->segs = malloc((n + 1) * sizeof *v->segs);
    v->lives = malloc((n + 1) * sizeof *v->lives);
    v->ss = malloc((n + 1) * sizeof *v->ss);
    if (!v->segs || !v->lives || !v->ss) {
        pthread_rwlock_unlock(&ix->segs_lock);
        free(v->segs);
        free(v->lives);
        free(v->ss);
        free(v);
        return FDS_ENOMEM;
    }
    for (unsigned i = 0; i < n; i++) {
        v->segs[i] = ix->segs[i];
        atomic_fetch_add(&v->segs[i]->refs, 1);
        v->lives[i] = ix->lives[i];
        if (v->lives[i])
            atomic_fetch_add(&v->lives[i]->refs, 1);
        v->ss[i].sidx = v->segs[i]->sidx;
        v->ss[i].live = v->lives[i] ? v->lives[i]->bits : NULL;
        v->ss[i].deleted = v->lives[i] ? v->lives[i]->del_count : 0;
        v->ss[i].cache = ix->rcache;
    }
    v->rcache = ix->rcache;
    fds_reader_cache_ref(v->rcache);
    pthread_rwlock_unlock(&ix->segs_lock);
    v->nsegs = n;
    atomic_fetch_add(&ix->refs, 1);
    v->ix = ix;
    *out = v;
    return 0;
}

void fds_index_view_release(fds_index_view *v)
{
    if (!v)
        return;
    for (unsigned i = 0; i < v->nsegs; i++) {
        fds__seg_unref(v->segs[i]);
        fds__live_unref(v->lives[i]);
    }
    free(v->segs);
    free(v->lives);
    free(v->ss);
    free(v->arena);
    fds_reader_cache_unref(v->rcache);
    fds_index_release(v->ix);
    free(v);
}

const fds_search_segment *fds_index_view_segments(const fds_index_view *v,
                                                  unsigned *nseg)
{
    *nseg = v->nsegs;
    return v->ss;
}

uint32_t fds_index_view_segment_shard(const fds_index_view *v, uint32_t seg)
{
    return v->segs[seg]->shard;
}

const char *fds_index_view_doc_routing(const fds_index_view *v, uint32_t seg,
                                       uint32_t doc, size_t *len)
{
    return fds__routes_get(&v->segs[seg]->routes, doc, len);
}

void fds_index_view_doc_meta(const fds_index_view *v, uint32_t seg,
                             uint32_t doc, int64_t *version, int64_t *seq_no)
{
    *version = fds__seg_version(v->segs[seg], doc);
    *seq_no = fds__seg_seqno(v->segs[seg], doc);
}

fds_search_stats *fds_index_search_stats(fds_index *ix)
{
    return &ix->search;
}

/* The segment sums of `shard` (UINT32_MAX: every shard) into out; caller
 * holds segs_lock. */
static void segs_sum(fds_index *ix, uint32_t shard, fds_index_stats *out)
{
    for (unsigned i = 0; i < ix->nsegs; i++) {
        const fds__seg *sg = ix->segs[i];
        if (shard != UINT32_MAX && sg->shard != shard)
            continue;
        out->segments++;
        uint32_t del = ix->lives[i] ? ix->lives[i]->del_count : 0;
        out->docs_count += sg->max_doc - del;
        out->docs_deleted += del;
        out->stored_fields_bytes += sg->map_len;
        out->postings_bytes += sg->tim_bytes;
        out->raw_source_bytes += sg->raw_bytes;
    }
}

int fds_index_shard_stats_get(fds_index *ix, uint32_t shard,
                              fds_index_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_rwlock_rdlock(&ix->segs_lock);
    segs_sum(ix, shard, out);
    pthread_rwlock_unlock(&ix->segs_lock);
    pthread_mutex_lock(&ix->buf_mu);
    for (size_t i = 0; i < ix->buf.n; i++)
        out->buffered_docs += ix->buf.docs[i].shard == shard;
    for (size_t i = 0; i < ix->frozen.n; i++)
        out->buffered_docs += ix->frozen.docs[i].shard == shard;
    pthread_mutex_unlock(&ix->buf_mu);
    out->store_bytes = out->stored_fields_bytes + out->postings_bytes;
    return 0;
}

int fds_index_stats_get(fds_index *ix, fds_index_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_rwlock_rdlock(&ix->segs_lock);
    segs_sum(ix, UINT32_MAX, out);
    /* dictionaries some segment still uses (a retrained one replaces the
     * first; the old row is kept only while segments name it) */
    pthread_mutex_lock(&ix->dict_mu);
    for (size_t i = 0; i < ix->ndicts; i++) {
        bool used = false;
        for (unsigned k = 0; k < ix->nsegs && !used; k++)
            used = ix->segs[k]->dict_id == ix->dicts[i].id;
        if (used)
            out->other_bytes += ix->dicts[i].len;
    }
    pthread_mutex_unlock(&ix->dict_mu);
    out->fielddata_bytes = fds_reader_cache_bytes(ix->rcache);
    pthread_rwlock_unlock(&ix->segs_lock);
    pthread_mutex_lock(&ix->buf_mu);
    out->buffered_docs = ix->buf.n + ix->frozen.n;
    pthread_mutex_unlock(&ix->buf_mu);
    out->store_bytes = out->stored_fields_bytes + out->postings_bytes +
                       out->other_bytes;
    return 0;
}

int fds_index_segments(fds_index *ix, fds_segment_info **out, size_t *n)
{
    pthread_rwlock_rdlock(&ix->segs_lock);
    fds_segment_info *v = calloc(ix->nsegs + 1, sizeof *v);
    if (!v) {
        pthread_rwlock_unlock(&ix->segs_lock);
        return FDS_ENOMEM;
    }
    for (unsigned i = 0; i < ix->nsegs; i++) {
        const fds__seg *sg = ix->segs[i];
        snprintf(v[i].name, sizeof v[i].name, "%s", sg->name);
        v[i].generation = sg->gen;
        v[i].docs_deleted = ix->lives[i] ? ix->lives[i]->del_count : 0;
        v[i].docs_count = sg->max_doc - v[i].docs_deleted;
        v[i].size_bytes = sg->map_len + sg->tim_bytes;
        v[i].codec = (fds_codec_id)sg->codec;
        v[i].dict_id = sg->dict_id;
        v[i].shard = sg->shard;
    }
    *n = ix->nsegs;
    pthread_rwlock_unlock(&ix->segs_lock);
    *out = v;
    return 0;
}
