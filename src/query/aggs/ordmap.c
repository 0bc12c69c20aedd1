/*
 * ordmap.c: global ordinals of a keyword field over the segments of a
 * search (aggs_int.h, fds__ordmap) -- Lucene's OrdinalMap.  Each
 * segment's term dictionary is sorted by bytes (fds__bytes_cmp), so a
 * k-way merge of the dictionaries numbers the distinct terms of all
 * segments in byte order: the global ordinal.  A keyword terms counts
 * into one array indexed by global ordinal across segments and reads the
 * term strings of its best buckets only at the end (Elasticsearch's
 * GlobalOrdinalsStringTermsAggregator), instead of interning every
 * distinct term of every segment.  With one segment holding the field
 * (a force-merged index) the map is the identity and costs nothing.
 * The map of several segments is kept in the view's reader cache
 * (exec/reader_cache.h), made by the first search after a refresh or
 * merge and shared by the later ones (Elasticsearch's global ordinals,
 * loaded per field and reader); without a cache it is made per search,
 * and then only for fields of few terms (FDS__AGG_GORD_MERGE_MAX).
 */
#include "aggs/aggs_int.h"
#include "exec/reader_cache.h"

/* A cursor of the merge: segment s at ordinal o. */
typedef struct cursor {
    uint32_t s, o;
} cursor;

static int cur_cmp(const fds__ordmap *m, cursor x, cursor y)
{
    uint32_t lx, ly;
    const char *a = fds__sidx_term_str(m->f[x.s], x.o, &lx);
    const char *b = fds__sidx_term_str(m->f[y.s], y.o, &ly);
    int c = fds__bytes_cmp(a, lx, b, ly);
    return c ? c : (x.s > y.s) - (x.s < y.s);
}

static void sift_down(const fds__ordmap *m, cursor *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, best = i;
        if (l < n && cur_cmp(m, h[l], h[best]) < 0)
            best = l;
        if (l + 1 < n && cur_cmp(m, h[l + 1], h[best]) < 0)
            best = l + 1;
        if (best == i)
            return;
        cursor t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
}

void fds__ordmap_free(fds__ordmap *m)
{
    if (!m)
        return;
    for (unsigned s = 0; m->seg2g && s < m->nseg; s++)
        free(m->seg2g[s]);
    free(m->seg2g);
    free(m->f);
    free(m->g_seg);
    free(m->g_ord);
    free(m);
}

/* The k-way merge of the dictionaries of the k segments that hold terms
 * (their f set): seg2g of each, the global ordinals' first holders. */
static int merge(fds__ordmap *m, size_t total, unsigned k)
{
    cursor *h = malloc(k * sizeof *h);
    m->seg2g = calloc(m->nseg, sizeof *m->seg2g);
    m->g_seg = malloc(total * sizeof *m->g_seg);
    m->g_ord = malloc(total * sizeof *m->g_ord);
    int rc = h && m->seg2g && m->g_seg && m->g_ord ? 0 : FDS_ENOMEM;
    size_t n = 0;
    for (unsigned s = 0; !rc && s < m->nseg; s++) {
        if (!m->f[s])
            continue;
        if (!(m->seg2g[s] = malloc(m->f[s]->nterms * sizeof **m->seg2g)))
            rc = FDS_ENOMEM;
        h[n++] = (cursor){s, 0};
    }
    for (size_t i = n / 2; !rc && i-- > 0;)
        sift_down(m, h, n, i);
    uint32_t g = 0;
    const char *last = NULL;
    uint32_t last_len = 0;
    while (!rc && n) { /* bounded: each step consumes one term */
        cursor c = h[0];
        uint32_t len;
        const char *t = fds__sidx_term_str(m->f[c.s], c.o, &len);
        if (!last || fds__bytes_cmp(last, last_len, t, len) != 0) {
            m->g_seg[g] = c.s;
            m->g_ord[g] = c.o;
            g++;
            last = t;
            last_len = len;
        }
        m->seg2g[c.s][c.o] = g - 1;
        if (++h[0].o == m->f[c.s]->nterms)
            h[0] = h[--n];
        sift_down(m, h, n, 0);
    }
    free(h);
    m->nglobal = g;
    return rc;
}

/* The map of `field` over segs[0, nseg) into *out (NULL when several
 * segments hold terms, more than max_merge in all) and its heap bytes. */
static int ordmap_make(const fds_search_segment *segs, unsigned nseg,
                       const char *field, size_t max_merge, fds__ordmap **out,
                       size_t *bytes)
{
    *out = NULL;
    *bytes = 0;
    fds__ordmap *m = calloc(1, sizeof *m);
    if (!m || !(m->f = calloc(nseg + 1, sizeof *m->f))) {
        free(m);
        return FDS_ENOMEM;
    }
    m->nseg = nseg;
    size_t total = 0;
    unsigned k = 0;
    for (unsigned s = 0; s < nseg; s++) {
        const fds_sfield *f = fds__sidx_field(segs[s].sidx, field, strlen(field));
        if (!f || f->kind != FDS_FT_KEYWORD || !f->nterms)
            continue;
        m->f[s] = f;
        m->only = s;
        total += f->nterms;
        k++;
    }
    if (k > 1 && total > max_merge) {
        fds__ordmap_free(m);
        return 0;
    }
    *bytes = sizeof *m + (nseg + 1) * sizeof *m->f;
    if (k == 1) { /* the identity */
        m->nglobal = m->f[m->only]->nterms;
    } else if (k > 1) {
        int rc = merge(m, total, k);
        if (rc) {
            fds__ordmap_free(m);
            return rc;
        }
        *bytes += nseg * sizeof *m->seg2g + total * sizeof **m->seg2g +
                  (size_t)m->nglobal * (sizeof *m->g_seg + sizeof *m->g_ord);
    }
    *out = m;
    return 0;
}

typedef struct build_arg {
    const fds_search_segment *segs;
    unsigned nseg;
    const char *field;
    size_t max_merge;
} build_arg;

static int build_cached(void *arg, void **val, size_t *bytes)
{
    build_arg *b = arg;
    fds__ordmap *m;
    int rc = ordmap_make(b->segs, b->nseg, b->field, b->max_merge, &m, bytes);
    *val = m;
    return rc;
}

static void free_cached(void *m)
{
    fds__ordmap_free(m);
}

int fds__ordmap_get(const fds__exec *x, const char *field, fds__ordmap **out,
                    bool *owned)
{
    fds_reader_cache *c = x->nseg ? x->segs[0].cache : NULL;
    build_arg b = {x->segs, x->nseg, field,
                   c ? FDS__AGG_GORD_CACHED_MAX : FDS__AGG_GORD_MERGE_MAX};
    void *v;
    int rc = fds__rcache_get(c, "ordinals", field, x->segs, x->nseg, build_cached,
                             free_cached, &b, &v, owned);
    *out = v;
    return rc;
}

const char *fds__ordmap_term(const fds__ordmap *m, uint32_t g, uint32_t *len)
{
    if (!m->seg2g)
        return fds__sidx_term_str(m->f[m->only], g, len);
    return fds__sidx_term_str(m->f[m->g_seg[g]], m->g_ord[g], len);
}
