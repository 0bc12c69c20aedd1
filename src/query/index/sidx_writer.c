/*
 * sidx_writer.c: builds a segment's inverted index in memory, document by
 * document; sidx_writer_file.c writes it out as the ".sidx" file (layout:
 * sidx_format.h).
 *
 * Why in memory: a segment is written once, at refresh, from documents the
 * store already buffers; terms are interned per field into a hash table and
 * each term's postings grow as a varint byte string (doc gap, tf) -- about
 * 2-3 bytes a posting -- until the write turns them into 128-doc blocks with
 * skip data.  A document is indexed into per-field scratch lists first and
 * committed only when all its values were accepted, so a rejected document
 * leaves no postings behind.  A text field indexed with positions keeps
 * each term's positions (positions.h) in a second byte string, written
 * after the term's postings with an offset table of its own, so that the
 * postings blocks are the same with or without positions.
 */
#include <stdlib.h>
#include <string.h>

#include "index/positions.h"
#include "index/postings.h"
#include "index/sidx_format.h"
#include "index/sidx_writer_int.h"

#define grow fds__grow

fds_sidx_writer *fds_sidx_writer_create(fds_mapping *m)
{
    fds_sidx_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->m = m;
    return w;
}

static void wfield_free(wfield *f)
{
    for (uint32_t i = 0; i < f->nterms; i++) {
        free(f->terms[i].buf);
        free(f->terms[i].pos);
    }
    free(f->cpos);
    free(f->keys);
    free(f->terms);
    free(f->arena);
    free(f->th);
    free(f->norms);
    free(f->present);
    free(f->col);
    free(f->mintid);
    free(f->cur);
    free(f->varena);
    free(f->vals);
    free(f->vh);
    free(f->vid);
    free(f);
}

void fds_sidx_writer_free(fds_sidx_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->nfields; i++)
        wfield_free(w->fields[i]);
    free(w->fields);
    free(w->fh);
    free(w->touched);
    free(w->ids);
    free(w->idoff);
    free(w->pend);
    free(w->pbytes);
    free(w);
}

/* ---- fields ---------------------------------------------------------------- */

static wfield *wfield_lookup(fds_sidx_writer *w, const char *path, size_t len)
{
    if (!w->fhcap)
        return NULL;
    size_t mask = w->fhcap - 1;
    for (size_t i = fds_fnv1a64(path, len) & mask;; i = (i + 1) & mask) {
        uint32_t e = w->fh[i];
        if (!e)
            return NULL;
        wfield *f = w->fields[e - 1];
        if (f->mf->path_len == len && memcmp(f->mf->path, path, len) == 0)
            return f;
    }
}

static int wfield_rehash(fds_sidx_writer *w)
{
    size_t cap = w->fhcap ? w->fhcap * 2 : 64;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return FDS_ENOMEM;
    for (size_t k = 0; k < w->nfields; k++) {
        fds_mfield *mf = w->fields[k]->mf;
        size_t i = fds_fnv1a64(mf->path, mf->path_len) & (cap - 1);
        while (h[i])
            i = (i + 1) & (cap - 1);
        h[i] = (uint32_t)k + 1;
    }
    free(w->fh);
    w->fh = h;
    w->fhcap = cap;
    return 0;
}

static wfield *wfield_add(fds_sidx_writer *w, fds_mfield *mf)
{
    wfield *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->mf = mf;
    f->kind = mf->type;
    f->positions = mf->type == FDS_FT_TEXT && mf->index_options == FDS_IO_POSITIONS;
    f->cur_v = UINT32_MAX;
    if (grow((void **)&w->fields, &w->fcap, w->nfields + 1, sizeof *w->fields)) {
        free(f);
        return NULL;
    }
    w->fields[w->nfields++] = f;
    if ((w->nfields * 2 > w->fhcap) ? wfield_rehash(w) != 0 : 0)
        return NULL;
    size_t mask = w->fhcap - 1, i = fds_fnv1a64(mf->path, mf->path_len) & mask;
    while (w->fh[i] && w->fh[i] != w->nfields)
        i = (i + 1) & mask;
    w->fh[i] = (uint32_t)w->nfields;
    return f;
}

/* Refresh the list of multi-fields of `f` if the mapping grew. */
static int wfield_subs(fds_sidx_writer *w, wfield *f)
{
    fds_mapping *m = w->m;
    if (f->sub_gen == m->nfields)
        return 0;
    f->nsubs = 0;
    for (size_t i = 0; i < m->nfields && f->nsubs < 4; i++) {
        fds_mfield *s = m->fields[i];
        if (s->parent == f->mf && s->is_subfield) {
            wfield *sf = wfield_lookup(w, s->path, s->path_len);
            if (!sf && !(sf = wfield_add(w, s)))
                return FDS_ENOMEM;
            f->subs[f->nsubs++] = sf;
        }
    }
    f->sub_gen = m->nfields;
    return 0;
}

/* ---- terms ------------------------------------------------------------------ */


/* A slot of a field's term table: the term's hash (its top 32 bits) and
 * its id + 1.  The table is probed from the hash's low bits of those 32,
 * so a probe compares the hash before it reads the term (another cache
 * line) and growing the table rehashes without reading any term. */
#define TERM_SLOT(hash32, id) ((uint64_t)(hash32) << 32 | ((id) + 1))

/* Make the TERM_SLOT table *tab of *cap slots (a power of two, 0 before
 * the first call) room for a key more than its n, kept at most half
 * full (slots_reserve): doubled from `first` slots, its slots moved by
 * their stored hashes (slots_grow).  0 or FDS_ENOMEM (the table
 * unchanged). */
static int slots_grow(uint64_t **tab, uint32_t *cap, uint32_t first)
{
    uint32_t nc = *cap ? *cap * 2 : first;
    uint64_t *h = calloc(nc, sizeof *h);
    if (!h)
        return FDS_ENOMEM;
    for (uint32_t k = 0; k < *cap; k++) {
        uint64_t e = (*tab)[k];
        if (!e)
            continue;
        size_t i = (uint32_t)(e >> 32) & (nc - 1);
        while (h[i])
            i = (i + 1) & (nc - 1);
        h[i] = e;
    }
    free(*tab);
    *tab = h;
    *cap = nc;
    return 0;
}

static inline int slots_reserve(uint64_t **tab, uint32_t *cap, uint32_t n,
                                uint32_t first)
{
    return (uint64_t)(n + 1) * 2 <= *cap ? 0 : slots_grow(tab, cap, first);
}

/* The id of term t[0..len) of f, whose hash is `hash` (the top 32 bits
 * of term_hash), added when new: 0 and *id, or FDS_ENOMEM. */
static int term_intern(wfield *f, const char *t, size_t len, uint32_t hash,
                       uint32_t *id)
{
    if (slots_reserve(&f->th, &f->thcap, f->nterms, 256))
        return FDS_ENOMEM;
    size_t mask = f->thcap - 1, i = hash & mask;
    for (;; i = (i + 1) & mask) {
        uint64_t e = f->th[i];
        if (!e)
            break;
        if ((uint32_t)(e >> 32) != hash)
            continue;
        uint32_t k = (uint32_t)e - 1;
        wterm *x = &f->terms[k];
        if (x->len == len && memcmp(f->arena + x->off, t, len) == 0) {
            *id = k;
            return 0;
        }
    }
    size_t tcap = f->tcap;
    if (grow((void **)&f->arena, &f->acap, f->alen + len + 1, 1) ||
        grow((void **)&f->terms, &tcap, f->nterms + 1, sizeof *f->terms))
        return FDS_ENOMEM;
    f->tcap = (uint32_t)tcap;
    memcpy(f->arena + f->alen, t, len);
    wterm *x = &f->terms[f->nterms];
    memset(x, 0, sizeof *x);
    x->off = (uint32_t)f->alen;
    x->len = (uint32_t)len;
    x->last_doc = UINT32_MAX;
    f->alen += len;
    f->th[i] = TERM_SLOT(hash, f->nterms);
    *id = f->nterms++;
    return 0;
}

static int cur_push(wfield *f, uint32_t id)
{
    if (grow((void **)&f->cur, &f->ccap, f->ncur + 1, sizeof *f->cur))
        return FDS_ENOMEM;
    if (f->kind == FDS_FT_TEXT) {
        if (grow((void **)&f->cpos, &f->cpcap, f->ncur + 1, sizeof *f->cpos))
            return FDS_ENOMEM;
        f->cpos[f->ncur] = f->next_pos++;
    }
    f->cur[f->ncur++] = id;
    return 0;
}

/*
 * A document's terms are interned together, once it is scanned: a term's
 * lookup reads three cache lines that a big segment's tables rarely hold
 * (its slot, its wterm, its bytes in the arena), and one at a time each
 * waits for the one before (perf: three quarters of term_intern's time
 * on the loads of the slot and the wterm, on a log whose urls and agents
 * keep changing).  term_defer keeps the term and a slot for it in the
 * field's cur (its position is taken at once, so positions are those of
 * the tokens in order); pend_resolve prefetches every term's slot, then
 * every wterm the slots name, then their bytes, and interns the terms in
 * their order, so term ids are those of one-by-one interning.
 */
static int term_defer(fds_sidx_writer *w, wfield *f, const char *t,
                      size_t len)
{
    if (len > UINT32_MAX || w->pblen + len > UINT32_MAX)
        return FDS_ETOOBIG;
    if (grow((void **)&w->pend, &w->pendcap, w->npend + 1, sizeof *w->pend) ||
        grow((void **)&w->pbytes, &w->pbcap, w->pblen + len + 1, 1))
        return FDS_ENOMEM;
    int rc = cur_push(f, 0);
    if (rc)
        return rc;
    uint32_t hash = (uint32_t)(term_hash(t, len) >> 32);
    if (f->thcap)
        __builtin_prefetch(&f->th[hash & (f->thcap - 1)]);
    memcpy(w->pbytes + w->pblen, t, len);
    w->pend[w->npend++] = (struct wpend){f, (uint32_t)(f->ncur - 1),
                                         (uint32_t)w->pblen, (uint32_t)len,
                                         hash};
    w->pblen += len;
    return 0;
}

/* The first slot a term's probe reads, when it holds that term's hash: its
 * wterm (else NULL; the probe goes on past it, or the term is new). */
static const wterm *pend_first(const struct wpend *p)
{
    const wfield *f = p->f;
    if (!f->thcap)
        return NULL;
    uint64_t e = f->th[p->hash & (f->thcap - 1)];
    return e && (uint32_t)(e >> 32) == p->hash ? &f->terms[(uint32_t)e - 1]
                                               : NULL;
}

/* Intern the terms term_defer kept (see there) into their cur slots.
 * 0 or FDS_ENOMEM. */
static int pend_resolve(fds_sidx_writer *w)
{
    for (size_t i = 0; i < w->npend; i++) {
        const wterm *x = pend_first(&w->pend[i]);
        if (x)
            __builtin_prefetch(x);
    }
    for (size_t i = 0; i < w->npend; i++) {
        const wterm *x = pend_first(&w->pend[i]);
        if (x)
            __builtin_prefetch(w->pend[i].f->arena + x->off);
    }
    for (size_t i = 0; i < w->npend; i++) {
        struct wpend *p = &w->pend[i];
        uint32_t id;
        int rc = term_intern(p->f, w->pbytes + p->off, p->len, p->hash, &id);
        if (rc)
            return rc;
        p->f->cur[p->slot] = id;
    }
    return 0;
}

static int touch(fds_sidx_writer *w, wfield *f)
{
    if (f->touched)
        return 0;
    if (grow((void **)&w->touched, &w->tcap, w->ntouched + 1,
             sizeof *w->touched))
        return FDS_ENOMEM;
    w->touched[w->ntouched++] = f;
    f->touched = true;
    return 0;
}

/* The index in f->vals of the value s[0..n) (n > FDS_SIDX_VALUE_MIN_BYTES),
 * added with no docs when new (the bytes copied into f->varena): 0 and
 * *v; FDS_ETOOBIG past 2^32 - 2 values or bytes; FDS_ENOMEM.  The table
 * is a term table's (TERM_SLOT, slots_reserve). */
static int value_intern(wfield *f, const char *s, size_t n, uint32_t *v)
{
    if (n > UINT32_MAX || f->nv == UINT32_MAX - 1)
        return FDS_ETOOBIG;
    if (slots_reserve(&f->vh, &f->vhcap, f->nv, 64))
        return FDS_ENOMEM;
    uint32_t hash = (uint32_t)(term_hash(s, n) >> 32);
    size_t mask = f->vhcap - 1, i = hash & mask;
    for (;; i = (i + 1) & mask) {
        uint64_t e = f->vh[i];
        if (!e)
            break;
        if ((uint32_t)(e >> 32) != hash)
            continue;
        const struct wval *x = &f->vals[(uint32_t)e - 1];
        if (x->len == n && !memcmp(f->varena + x->off, s, n)) {
            *v = (uint32_t)e - 1;
            return 0;
        }
    }
    size_t vcap = f->vcap;
    if (grow((void **)&f->varena, &f->vacap, f->valen + n, 1) ||
        grow((void **)&f->vals, &vcap, (size_t)f->nv + 1, sizeof *f->vals))
        return FDS_ENOMEM;
    f->vcap = (uint32_t)vcap;
    memcpy(f->varena + f->valen, s, n);
    f->vals[f->nv] = (struct wval){f->valen, (uint32_t)n, 0};
    f->valen += n;
    f->vh[i] = TERM_SLOT(hash, f->nv);
    *v = f->nv++;
    return 0;
}

typedef struct tokctx {
    fds_sidx_writer *w;
    wfield *f;
} tokctx;

static int on_token(void *arg, const char *t, size_t n)
{
    tokctx *c = arg;
    int rc = term_defer(c->w, c->f, t, n);
    if (!rc)
        c->f->ntok++;
    return rc;
}

/* Index one scalar value into field f (already type-checked). */
static int index_value(fds_sidx_writer *w, wfield *f, const fds_jval *v,
                       const fds__conv *cv)
{
    int rc = touch(w, f);
    if (rc)
        return rc;
    /* "index": false: a text field keeps nothing; the other types keep
     * their values, searched and sorted as doc values (Elasticsearch 8) */
    if (!f->mf->index && f->kind == FDS_FT_TEXT)
        return 0;
    switch (f->kind) {
    case FDS_FT_TEXT: {
        tokctx c = {w, f};
        f->has_val = true;
        /* each value after the first starts position_increment_gap
         * positions after the last token of the one before */
        if (f->nvals++) {
            f->next_pos += f->mf->pos_gap;
            f->multi = true;
        }
        if (f->next_pos > FDS_POSITION_MAX)
            return FDS_ETOOBIG;
        if (!f->multi && v->str_len > FDS_SIDX_VALUE_MIN_BYTES &&
            (rc = value_intern(f, v->str, v->str_len, &f->cur_v)))
            return rc;
        return fds_analyze(v->str, v->str_len, on_token, &c);
    }
    case FDS_FT_KEYWORD: {
        if (f->mf->ignore_above) {
            size_t chars = 0;
            for (size_t i = 0; i < v->str_len; i++)
                chars += ((uint8_t)v->str[i] & 0xC0) != 0x80;
            if (chars > (size_t)f->mf->ignore_above)
                return 0;
        }
        rc = term_defer(w, f, v->str, v->str_len);
        f->ntok++;
        f->has_val = true;
        return rc;
    }
    default:
        if (!f->has_val) {
            f->val = *cv;
            f->has_val = true;
        } else {
            f->multi = true; /* the column keeps the first value */
        }
        return 0;
    }
}

static int doc_cb(void *arg, const fds_jval *v, fds_err *err)
{
    fds_sidx_writer *w = arg;
    if (v->kind == FDS_JV_NULL)
        return 0;
    wfield *f = wfield_lookup(w, v->path, v->path_len);
    if (!f) {
        if (v->kind == FDS_JV_ARRAY)
            return 0;
        bool enomem = false;
        pthread_rwlock_wrlock(&w->m->lock);
        fds_mfield *mf = fds__mapping_dynamic(w->m, v, &enomem);
        pthread_rwlock_unlock(&w->m->lock);
        if (!mf)
            return enomem ? FDS_ENOMEM : 0;
        f = wfield_add(w, mf);
        if (!f)
            return FDS_ENOMEM;
    }
    if (v->kind == FDS_JV_ARRAY)
        return 0;
    if (f->mf->is_subfield)
        w->sub_direct = true;
    fds__conv cv = {0, 0};
    if (fds__value_check(f->mf, v, &cv))
        return fds__value_error(f->mf, v, w->src, w->srclen, err);
    if (f->kind == FDS_FT_OBJECT)
        return 0;
    pthread_rwlock_rdlock(&w->m->lock);
    int rc = wfield_subs(w, f);
    pthread_rwlock_unlock(&w->m->lock);
    if (rc)
        return rc;
    rc = index_value(w, f, v, &cv);
    for (unsigned i = 0; i < f->nsubs && !rc; i++) {
        wfield *s = f->subs[i];
        fds__conv sv = {0, 0};
        fds_jval tmp;
        const fds_jval *sub = fds__null_as(s->mf, v, &tmp);
        if (!sub || fds__value_check(s->mf, sub, &sv))
            continue; /* a multi-field that cannot take the value skips it */
        rc = index_value(w, s, sub, &sv);
    }
    return rc;
}

static void rollback(fds_sidx_writer *w)
{
    for (size_t i = 0; i < w->ntouched; i++) {
        wfield *f = w->touched[i];
        f->touched = f->has_val = false;
        f->ncur = 0;
        f->ntok = 0;
        f->next_pos = f->nvals = 0;
        f->cur_v = UINT32_MAX;
    }
    w->ntouched = 0;
    w->npend = 0;
    w->pblen = 0;
}

static int u32cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int u64cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A field's terms in one document are few (a URL or a user agent: 5-30
 * tokens): below this many, an insertion sort in place beats qsort's
 * merge sort and its call per comparison. */
#define DOC_TERMS_INSERTION_MAX 48

/* sort_<T>(v, n): v[0..n) ascending, by insertion up to
 * DOC_TERMS_INSERTION_MAX entries, else qsort with `cmp`. */
#define DEFINE_SMALL_SORT(name, type, cmp)                                   \
    static void name(type *v, size_t n)                                     \
    {                                                                        \
        if (n > DOC_TERMS_INSERTION_MAX) {                                   \
            qsort(v, n, sizeof *v, cmp);                                     \
            return;                                                          \
        }                                                                    \
        for (size_t i = 1; i < n; i++) {                                     \
            type x = v[i];                                                   \
            size_t j = i;                                                    \
            for (; j > 0 && v[j - 1] > x; j--)                               \
                v[j] = v[j - 1];                                             \
            v[j] = x;                                                        \
        }                                                                    \
    }
DEFINE_SMALL_SORT(sort_u64, uint64_t, u64cmp)
DEFINE_SMALL_SORT(sort_u32, uint32_t, u32cmp)

int fds__sidx_writer_ensure_docs(wfield *f, uint32_t doc)
{
    if (doc < f->dcap)
        return 0;
    size_t nc = f->dcap ? f->dcap : 1024;
    while (nc <= doc)
        nc *= 2;
    size_t words = (nc + 63) / 64, oldw = (f->dcap + 63) / 64;
    uint64_t *p = realloc(f->present, words * 8);
    if (!p)
        return FDS_ENOMEM;
    memset(p + oldw, 0, (words - oldw) * 8);
    f->present = p;
    if (f->kind == FDS_FT_TEXT) {
        uint8_t *n = realloc(f->norms, nc);
        if (!n)
            return FDS_ENOMEM;
        memset(n + f->dcap, 0, nc - f->dcap);
        f->norms = n;
        uint32_t *v = realloc(f->vid, nc * 4);
        if (!v)
            return FDS_ENOMEM;
        memset(v + f->dcap, 0xff, (nc - f->dcap) * 4);
        f->vid = v;
    } else if (f->kind == FDS_FT_KEYWORD) {
        uint32_t *t = realloc(f->mintid, nc * 4);
        if (!t)
            return FDS_ENOMEM;
        memset(t + f->dcap, 0xff, (nc - f->dcap) * 4);
        f->mintid = t;
    } else {
        int64_t *c = realloc(f->col, nc * 8);
        if (!c)
            return FDS_ENOMEM;
        memset(c + f->dcap, 0, (nc - f->dcap) * 8);
        f->col = c;
    }
    f->dcap = nc;
    return 0;
}

static int commit_field(wfield *f, uint32_t doc)
{
    if (fds__sidx_writer_ensure_docs(f, doc))
        return FDS_ENOMEM;
    if (!f->has_val)
        return 0;
    f->present[doc / 64] |= 1ull << (doc % 64);
    if (f->kind != FDS_FT_TEXT && f->kind != FDS_FT_KEYWORD) {
        if (f->kind == FDS_FT_DOUBLE)
            memcpy(&f->col[doc], &f->val.d, 8);
        else
            f->col[doc] = f->val.l;
        return 0;
    }
    if (f->kind == FDS_FT_TEXT) {
        f->norms[doc] = fds__norm_encode(f->ntok);
        if (f->cur_v != UINT32_MAX && !f->multi) { /* one value, long */
            f->vid[doc] = f->cur_v;
            f->vals[f->cur_v].cnt++;
        }
    }
    if (f->ncur == 0)
        return 0;
    f->doc_count++;
    if (f->kind == FDS_FT_TEXT && f->mf->index_options != FDS_IO_DOCS)
        f->sum_ttf += f->ncur;
    if (f->kind == FDS_FT_KEYWORD) {
        uint32_t best = f->cur[0];
        for (size_t i = 1; i < f->ncur; i++)
            if (term_cmp_bytes(f, f->cur[i], best) < 0)
                best = f->cur[i];
        f->mintid[doc] = best;
    }
    if (f->kind == FDS_FT_TEXT) {
        /* (term id, position) pairs sorted: each term's positions ascend */
        if (grow((void **)&f->keys, &f->kcap, f->ncur, sizeof *f->keys))
            return FDS_ENOMEM;
        for (size_t i = 0; i < f->ncur; i++)
            f->keys[i] = (uint64_t)f->cur[i] << 32 | f->cpos[i];
        sort_u64(f->keys, f->ncur);
        for (size_t i = 0; i < f->ncur; i++) {
            f->cur[i] = (uint32_t)(f->keys[i] >> 32);
            f->cpos[i] = (uint32_t)f->keys[i];
        }
    } else if (f->ncur > 1) {
        sort_u32(f->cur, f->ncur);
    }
    for (size_t i = 0; i < f->ncur;) {
        size_t j = i + 1;
        while (j < f->ncur && f->cur[j] == f->cur[i])
            j++;
        wterm *t = &f->terms[f->cur[i]];
        /* keyword fields, and text fields with index_options docs, index
         * docs only (Lucene IndexOptions.DOCS): tf 1, and sumTotalTermFreq
         * = sumDocFreq */
        bool docs_only = f->kind == FDS_FT_KEYWORD ||
                         f->mf->index_options == FDS_IO_DOCS;
        uint32_t tf = docs_only ? 1 : (uint32_t)(j - i);
        if (docs_only)
            f->sum_ttf++;
        if (f->positions) {
            size_t pcap = t->pcap;
            if (grow((void **)&t->pos, &pcap,
                     t->plen + FDS_POSITIONS_BOUND(j - i), 1))
                return FDS_ENOMEM;
            t->pcap = (uint32_t)pcap;
            t->plen += (uint32_t)fds_positions_encode(f->cpos + i,
                                                      (uint32_t)(j - i),
                                                      t->pos + t->plen);
        }
        uint32_t gap = t->last_doc == UINT32_MAX ? doc : doc - t->last_doc - 1;
        size_t bcap = t->bcap;
        if (grow((void **)&t->buf, &bcap, t->blen + 10, 1))
            return FDS_ENOMEM;
        t->bcap = (uint32_t)bcap;
        t->blen += (uint32_t)fds__varint_put(t->buf + t->blen, gap);
        t->blen += (uint32_t)fds__varint_put(t->buf + t->blen, tf);
        t->last_doc = doc;
        t->df++;
        t->ttf += tf;
        i = j;
    }
    return 0;
}

int fds_sidx_writer_add(fds_sidx_writer *w, uint32_t doc, const char *id,
                        size_t id_len, const uint8_t *src, size_t len,
                        fds_err *err)
{
    if (doc != w->ndocs)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_ILLEGAL_STATE,
                           "doc %u added out of order (expected %u)", doc,
                           w->ndocs);
    if (w->idlen + id_len > UINT32_MAX)
        return fds_err_setk(err, FDS_ETOOBIG, FDS_KIND_ILLEGAL_STATE,
                           "segment _id bytes exceed 4 GiB");
    w->src = src;
    w->srclen = len;
    w->doc = doc;
    w->ntouched = 0;
    w->npend = w->pblen = 0;
    int rc = fds__doc_scan(w->m, false, src, len, doc_cb, w, err);
    if (rc) {
        rollback(w);
        return rc;
    }
    rc = pend_resolve(w);
    for (size_t i = 0; i < w->ntouched && !rc; i++)
        rc = commit_field(w->touched[i], doc);
    if (rc) {
        rollback(w);
        return fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    }
    rollback(w); /* clears the scratch state */
    if (grow((void **)&w->ids, &w->idcap, w->idlen + id_len + 1, 1) ||
        grow((void **)&w->idoff, &w->idoffcap, (size_t)doc + 2,
             sizeof *w->idoff))
        return FDS_ENOMEM;
    w->idoff[doc] = (uint32_t)w->idlen;
    memcpy(w->ids + w->idlen, id, id_len);
    w->idlen += id_len;
    w->idoff[doc + 1] = (uint32_t)w->idlen;
    w->ndocs++;
    return 0;
}
