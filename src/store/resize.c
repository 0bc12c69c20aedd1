/*
 * resize.c: a new index made from an existing one -- Elasticsearch's
 * _clone, _shrink and _split (TransportResizeAction; the HTTP layer checks
 * the shard counts and the source's write block as its
 * MetadataCreateIndexService does, and computes the target's settings).
 *
 * Every live document of the source (refreshed first, so the buffer is in
 * segments) goes to the target's shard of its routing (its _id without
 * one), by the routing formula and the target's number_of_shards and
 * number_of_routing_shards: with the source's routing shards kept, a
 * shrink's shard t takes the whole source shards t*f .. t*f+f-1 and a
 * split's shard t the part of source shard t/f the formula gives it, so
 * `?routing=` finds every document where Elasticsearch would.
 *
 * The target first gets a copy of each source dictionary (its own
 * catalogue rows: a block names its dictionary by row id, which is per
 * index).  Then, how a target shard is made:
 *   - a source segment whose live documents all go to one target shard
 *     (every segment of a clone or a shrink) is copied with its live docs,
 *     routing values and sequence numbers: its .tim hard-linked, its .fdt
 *     too when it needs no dictionary, else written block for block with
 *     each block's dictionary id changed to the copy's
 *     (fds__seg_copy_redict; nothing decoded), as Elasticsearch hard-links
 *     Lucene segments;
 *   - the documents of the other segments (a split's) are re-encoded into
 *     one new segment per target shard (the merge path: sources decoded a
 *     block at a time, the .tim merged from the inputs' with the documents
 *     of other shards left out), with the target's codec settings and the
 *     copied dictionary (trained anew only when the target's codec has
 *     none).
 *
 * Crash safety: the target's catalogue row is written first under a name
 * no index can have (FDS__RESIZE_PREFIX + uuid), its segments are
 * registered under that row as they are built, and one last transaction
 * gives the row the target's name and adds the aliases.  A crash before
 * it leaves a row start-up deletes (store.c) and a folder it removes, so
 * the target is either absent or complete.  While the resize runs the
 * target's name is taken (fds__name_taken): a create of it is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "store_int.h"

uint32_t fds_index_routing_shards(const fds_index *ix) { return ix->routing_shards; }

/* fsync the target's folder: its hard links are names in it. */
static int rz_sync_dir(const fds_index *ix, fds_err *err)
{
    int fd = open(ix->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd >= 0 && fsync(fd) == 0 ? 0 : FDS_EIO;
    if (fd >= 0)
        close(fd);
    return rc ? fds_err_setk(err, FDS_EIO, FDS_KIND_IO, "cannot sync [%s]: %s",
                             ix->dir, strerror(errno)) : 0;
}

/* Register sg (built or linked into `to`) in the catalogue, with its live
 * docs `live` (NULL: all), in its own transaction. */
static int rz_register(fds_index *to, fds__seg *sg, int64_t max_seq,
                       fds__live *live, fds_err *err)
{
    sqlite3 *db = to->st->db;
    pthread_mutex_lock(&to->st->db_mu);
    int rc = fds__cat_begin(db, false, err);
    if (!rc)
        rc = fds__segment_insert(to, sg, max_seq, err);
    if (!rc && live) {
        /* fds__lives_save writes the entries of to->segs: this one alone */
        fds__seg **segs = to->segs;
        unsigned n = to->nsegs;
        to->segs = &sg;
        to->nsegs = 1;
        rc = fds__lives_save(to, &live, 1, err);
        to->segs = segs;
        to->nsegs = n;
    }
    rc = fds__cat_end(db, rc, NULL, err);
    pthread_mutex_unlock(&to->st->db_mu);
    return rc;
}

/* Append sg (and its live docs, taken) to the target's segment list. */
static int rz_add(fds_index *to, fds__seg *sg, fds__live *live)
{
    fds__seg **s = realloc(to->segs, (to->nsegs + 1) * sizeof *s);
    if (s)
        to->segs = s;
    fds__live **l = s ? realloc(to->lives, (to->nsegs + 1) * sizeof *l) : NULL;
    if (!l)
        return FDS_ENOMEM;
    to->lives = l;
    to->segs[to->nsegs] = sg;
    to->lives[to->nsegs++] = live;
    return 0;
}

/* Copy view segment `i` into `to` as its shard `t`: its .tim hard-linked,
 * its .fdt too when it needs no dictionary, else copied with its blocks
 * naming `dict_id`, to's copy of its dictionary. */
static int rz_link(fds_index *to, const fds_index_view *v, unsigned i,
                   uint32_t t, uint32_t dict_id, fds_err *err)
{
    const fds__seg *in = v->segs[i];
    uint64_t gen = to->next_gen++;
    char *fdt = fds__seg_path(to, gen, "fdt"), *tim = fds__seg_path(to, gen, "tim");
    int rc = fdt && tim ? 0 : FDS_ENOMEM;
    if (!rc && in->dict_id)
        rc = fds__seg_copy_redict(to, in, gen, dict_id, err);
    if (!rc && ((!in->dict_id && link(in->fdt_path, fdt)) || link(in->tim_path, tim)))
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO, "cannot link [%s] into [%s]: %s",
                          in->name, to->dir, strerror(errno));
    fds__seg *sg = NULL;
    if (!rc)
        rc = fds__seg_open(to, 0, gen, &sg, err);
    fds__live *live = NULL;
    if (!rc && v->lives[i] && !(live = fds__live_copy(v->lives[i], in->max_doc)))
        rc = FDS_ENOMEM;
    if (!rc) {
        sg->shard = t;
        if (in->routes.len)
            rc = fds__routes_parse(&sg->routes, in->routes.blob, in->routes.len,
                                   in->max_doc);
    }
    if (!rc)
        rc = rz_register(to, sg, in->max_seq, live, err);
    if (!rc)
        rc = rz_add(to, sg, live);
    if (rc) {
        fds__live_unref(live);
        if (sg) {
            atomic_store(&sg->dropped, true);
            fds__seg_unref(sg);
        } else {
            unlink(fdt);
            unlink(tim);
        }
    }
    free(fdt);
    free(tim);
    return rc;
}

/* Re-encode the documents of view segments segs[0, n) whose target shard
 * (shard_of[seg][doc]) is t into one segment of `to`. */
static int rz_build(fds_index *to, fds_index *from, const fds_index_view *v,
                    uint32_t *const *shard_of, const unsigned *segs, unsigned n,
                    uint32_t t, fds_err *err)
{
    size_t total = 0;
    for (unsigned k = 0; k < n; k++)
        total += v->segs[segs[k]]->max_doc;
    fds__bufdoc *docs = calloc(total + 1, sizeof *docs);
    fds__merge_where *where = malloc((total + 1) * sizeof *where);
    const fds_sidx **tin = calloc(n + 1, sizeof *tin);
    uint8_t **tlive = calloc(n + 1, sizeof *tlive);
    fds__merge_src ms = {.ix = from, .segs = v->segs, .where = where};
    ms.cur.cc = fds_codec_ctx_create();
    fds__doc_loader ld = {fds__merge_load, &ms};
    int rc = docs && where && tin && tlive && ms.cur.cc ? 0 : FDS_ENOMEM;
    size_t nd = 0;
    int64_t max_seq = 0;
    for (unsigned k = 0; k < n && !rc; k++) {
        unsigned i = segs[k];
        fds__seg *sg = v->segs[i];
        tin[k] = sg->sidx;
        if (!(tlive[k] = calloc((sg->max_doc + 7) / 8 + 1, 1))) {
            rc = FDS_ENOMEM;
            break;
        }
        for (uint32_t d = 0; d < sg->max_doc; d++) {
            if (!fds__live_get(v->lives[i], d) || shard_of[i][d] != t)
                continue;
            tlive[k][d >> 3] |= (uint8_t)(1u << (d & 7));
            fds__bufdoc *o = &docs[nd];
            fds__merge_doc(o, sg, d);
            o->shard = t;
            if (o->seq_no > max_seq)
                max_seq = o->seq_no;
            where[nd].seg = i;
            where[nd++].doc = d;
        }
    }
    /* a first dictionary is trained from the sources themselves */
    int level;
    bool train = fds_codec_uses_dict(to->settings.codec.codec) &&
                 !fds__dict_current_level(to, to->settings.codec.codec, &level);
    for (size_t i = 0; !rc && train && i < nd; i++) {
        const uint8_t *src;
        size_t len;
        if ((rc = fds__merge_load(&ms, i, &src, &len, err)))
            break;
        if (!(docs[i].src = malloc(len + 1))) {
            rc = FDS_ENOMEM;
            break;
        }
        if (len) /* an empty record (no _source) may come as NULL */
            memcpy(docs[i].src, src, len);
        docs[i].src_len = len;
    }
    fds__tim_inputs tim_from = {tin, (const uint8_t *const *)tlive, n};
    fds__seg *out = NULL;
    if (!rc && nd)
        rc = fds__build_segment(to, docs, nd, &ld, &to->settings, NULL, 0, false,
                                &tim_from, &out, err);
    if (!rc && out) {
        out->shard = t;
        rc = fds__routes_from_docs(&out->routes, docs, nd);
        if (!rc)
            rc = rz_register(to, out, max_seq, NULL, err);
        if (!rc)
            rc = rz_add(to, out, NULL);
        if (rc) {
            atomic_store(&out->dropped, true);
            fds__seg_unref(out);
        }
    }
    for (size_t i = 0; docs && i < nd; i++)
        free(docs[i].src);
    for (unsigned k = 0; tlive && k < n; k++)
        free(tlive[k]);
    free(docs);
    free(where);
    free(tin);
    free(tlive);
    fds_codec_ctx_free(ms.cur.cc);
    return rc;
}

/* Make every shard of `to` from the view v of `from`; to holds from's
 * dictionary from_ids[k] as to_ids[k] (k < ndict). */
static int rz_shards(fds_index *to, fds_index *from, const fds_index_view *v,
                     const uint32_t *from_ids, const uint32_t *to_ids, size_t ndict,
                     fds_err *err)
{
    uint32_t **shard_of = calloc(v->nsegs + 1, sizeof *shard_of);
    int32_t *only = calloc(v->nsegs + 1, sizeof *only); /* -1: several */
    unsigned *segs = calloc(v->nsegs + 1, sizeof *segs);
    int rc = shard_of && only && segs ? 0 : FDS_ENOMEM;
    for (unsigned i = 0; i < v->nsegs && !rc; i++) {
        fds__seg *sg = v->segs[i];
        if (!(shard_of[i] = malloc((sg->max_doc + 1) * sizeof **shard_of))) {
            rc = FDS_ENOMEM;
            break;
        }
        only[i] = -2; /* no live doc yet */
        for (uint32_t d = 0; d < sg->max_doc; d++) {
            size_t idl, rl;
            const char *id = fds_sidx_doc_id(sg->sidx, d, &idl);
            const char *rt = fds__routes_get(&sg->routes, d, &rl);
            shard_of[i][d] = fds__shard_of(to, id, idl, rt, rl);
            if (!fds__live_get(v->lives[i], d))
                continue;
            if (only[i] == -2)
                only[i] = (int32_t)shard_of[i][d];
            else if (only[i] != (int32_t)shard_of[i][d])
                only[i] = -1;
        }
    }
    for (uint32_t t = 0; t < to->nshards && !rc; t++) {
        unsigned n = 0;
        for (unsigned i = 0; i < v->nsegs && !rc; i++) {
            /* to's id of the segment's dictionary: 0 for none, or not
             * found (UINT32_MAX) */
            uint32_t d = v->segs[i]->dict_id ? UINT32_MAX : 0;
            for (size_t k = 0; d && k < ndict; k++)
                if (from_ids[k] == v->segs[i]->dict_id)
                    d = to_ids[k];
            if (only[i] == (int32_t)t && d != UINT32_MAX)
                rc = rz_link(to, v, i, t, d, err);
            else if (only[i] == (int32_t)t || only[i] == -1)
                segs[n++] = i;
        }
        if (!rc && n)
            rc = rz_build(to, from, v, shard_of, segs, n, t, err);
    }
    for (unsigned i = 0; shard_of && i < v->nsegs; i++)
        free(shard_of[i]);
    free(shard_of);
    free(only);
    free(segs);
    return rc;
}

/* The target's row and settings under the temporary name `tmp`,
 * committed. */
static int rz_row(fds_store *s, fds_index *ix, const char *tmp, fds_err *err)
{
    pthread_mutex_lock(&s->db_mu);
    int rc = fds__cat_begin(s->db, true, err);
    if (!rc)
        rc = fds__cat_index_insert(s->db, tmp, ix->uuid, ix->created_ms,
                                   ix->next_seq, &ix->id, err);
    if (!rc)
        rc = fds__settings_save(s, ix->id, &ix->settings, err);
    if (!rc)
        rc = fds__mapping_save(ix, err);
    rc = fds__cat_end(s->db, rc, NULL, err);
    pthread_mutex_unlock(&s->db_mu);
    return rc;
}

/* The last transaction: the row takes the target's name, the aliases are
 * added.  Caller holds mu. */
static int rz_name(fds_store *s, fds_index *ix, const char *target,
                   const fds_alias *aliases, size_t naliases, fds_err *err)
{
    pthread_mutex_lock(&s->db_mu);
    int rc = fds__cat_begin(s->db, true, err);
    if (!rc)
        rc = fds__cat_index_rename(s->db, ix->id, target, ix->uuid,
                                   ix->created_ms, ix->next_gen, err);
    if (!rc && naliases)
        rc = fds__aliases_insert(s, ix->id, target, aliases, naliases, err);
    rc = fds__cat_end(s->db, rc, NULL, err);
    pthread_mutex_unlock(&s->db_mu);
    return rc;
}

/* Drop target name `name` from the running resizes (caller holds mu). */
static void rz_unreserve(fds_store *s, const char *name)
{
    for (size_t i = 0; i < s->nresizing; i++)
        if (!strcmp(s->resizing[i].name, name)) {
            s->resizing[i] = s->resizing[--s->nresizing];
            return;
        }
}

int fds_store_resize_index(fds_store *s, fds_index *src, const char *target,
                           const fds_index_settings *settings,
                           const fds_alias *aliases, size_t naliases,
                           fds_err *err)
{
    int rc = fds__check_name(target, "index", FDS_KIND_INVALID_INDEX_NAME, err);
    if (!rc)
        rc = fds_settings_check_shards(settings, err);
    if (rc)
        return rc;
    char uuid[33], tmp[FDS_INDEX_NAME_MAX + 1];
    fds__make_uuid(uuid);
    snprintf(tmp, sizeof tmp, "%s%s", FDS__RESIZE_PREFIX, uuid);
    pthread_mutex_lock(&s->mu);
    struct fds__resizing *q = NULL;
    if (!(rc = fds__name_taken(s, target, err)) &&
        !(q = realloc(s->resizing, (s->nresizing + 1) * sizeof *q)))
        rc = FDS_ENOMEM;
    if (!rc) {
        s->resizing = q;
        snprintf(q[s->nresizing].name, sizeof q->name, "%s", target);
        snprintf(q[s->nresizing++].uuid, sizeof q->uuid, "%s", uuid);
    }
    pthread_mutex_unlock(&s->mu);
    if (rc)
        return rc;
    /* the buffer too: every acknowledged document is in a segment */
    rc = fds_index_refresh(src, err);
    fds_index *ix = rc ? NULL : fds__index_alloc(s, 0, target, uuid);
    if (!rc && !ix)
        rc = FDS_ENOMEM;
    char *mj = NULL;
    if (!rc) {
        ix->settings = *settings;
        fds__index_shards_set(ix);
        ix->created_ms = fds__now_ms();
        ix->next_gen = 1;
        pthread_mutex_lock(&src->wmu); /* (a mapping changes under it) */
        ix->next_seq = src->next_seq;
        if (!(mj = fds_mapping_to_json(src->mapping)))
            rc = FDS_ENOMEM;
        pthread_mutex_unlock(&src->wmu);
    }
    if (!rc)
        rc = fds_mapping_merge_json(ix->mapping, mj, strlen(mj), err);
    free(mj);
    if (!rc && fds__mkdir_p(ix->dir))
        rc = fds_err_setk(err, FDS_EIO, FDS_KIND_IO, "cannot create [%s]: %s",
                          ix->dir, strerror(errno));
    bool row = false;
    if (!rc)
        row = !(rc = rz_row(s, ix, tmp, err));
    /* the source's dictionaries, for the blocks copied and the target's
     * first segments (no training where the source has one) */
    uint32_t *from_ids = NULL, *to_ids = NULL;
    size_t ndict = 0;
    if (!rc)
        rc = fds__dict_copy_all(ix, src, &from_ids, &to_ids, &ndict, err);
    fds_index_view *v = NULL;
    if (!rc)
        rc = fds_index_view_acquire(src, &v, err);
    if (!rc)
        rc = rz_shards(ix, src, v, from_ids, to_ids, ndict, err);
    fds_index_view_release(v);
    free(from_ids);
    free(to_ids);
    if (!rc)
        rc = rz_sync_dir(ix, err);
    pthread_mutex_lock(&s->mu);
    if (!rc)
        rc = rz_name(s, ix, target, aliases, naliases, err);
    bool committed = !rc;
    fds_index **list = NULL;
    if (!rc) {
        if ((list = realloc(s->indices, (s->nindices + 1) * sizeof *list))) {
            s->indices = list;
            s->indices[s->nindices++] = ix;
            if (naliases)
                fds__aliases_adopt(s, target, aliases, naliases);
        } else {
            /* committed, files in place: the next start-up serves it */
            rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        }
    }
    rz_unreserve(s, target);
    pthread_mutex_unlock(&s->mu);
    if (rc && row && !committed) {
        fds_err ignore;
        pthread_mutex_lock(&s->db_mu);
        if (!fds__cat_begin(s->db, true, &ignore))
            fds__cat_end(s->db, fds__cat_index_delete(s->db, ix->id, &ignore),
                         NULL, &ignore);
        pthread_mutex_unlock(&s->db_mu);
    }
    if (rc && ix) {
        if (!committed)
            fds__rm_rf(ix->dir);
        fds_index_release(ix);
    }
    return rc;
}
