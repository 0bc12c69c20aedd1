/*
 * table.c: the state an aggregation keeps per shard (aggs_int.h): its
 * open-addressing table of buckets by (owning ordinal, key), its interned
 * keyword strings, and its per-owner metric arrays.
 */
#include "aggs/aggs_int.h"

static int bmap_grow(fds__bmap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 64;
    fds__bslot *ns = malloc(nc * sizeof *ns);
    if (!ns)
        return FDS_ENOMEM;
    for (size_t i = 0; i < nc; i++)
        ns[i].ord = UINT32_MAX;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->s[i].ord == UINT32_MAX)
            continue;
        size_t j = fds__bmap_mix(m->s[i].key, m->s[i].owner) & (nc - 1);
        while (ns[j].ord != UINT32_MAX)
            j = (j + 1) & (nc - 1);
        ns[j] = m->s[i];
    }
    free(m->s);
    m->s = ns;
    m->cap = nc;
    return 0;
}

/* The bucket of (owner, key), opened if new; UINT32_MAX on ENOMEM. */
uint32_t fds__aggs_bucket_open(fds__anode *n, uint32_t owner, uint64_t key)
{
    fds__bmap *m = &n->map;
    if ((m->n + 1) * 2 > m->cap && bmap_grow(m))
        return UINT32_MAX;
    size_t j = fds__bmap_mix(key, owner) & (m->cap - 1);
    for (;;) {
        fds__bslot *s = &m->s[j];
        if (s->ord == UINT32_MAX)
            break;
        if (s->key == key && s->owner == owner)
            return s->ord;
        j = (j + 1) & (m->cap - 1);
    }
    uint32_t ord = fds__aggs_bucket_append(n, owner, key);
    if (ord == UINT32_MAX)
        return UINT32_MAX;
    m->s[j] = (fds__bslot){key, owner, ord};
    m->n++;
    return ord;
}

/* A new bucket of (owner, key) past the table (its caller finds it
 * again by other means: a keyword terms' dense table of global
 * ordinals); UINT32_MAX on ENOMEM. */
uint32_t fds__aggs_bucket_append(fds__anode *n, uint32_t owner, uint64_t key)
{
    if (n->nb == n->bcap) {
        uint32_t nc = n->bcap ? n->bcap * 2 : 16;
        uint32_t *o = realloc(n->b_owner, nc * sizeof *o);
        if (o)
            n->b_owner = o;
        uint64_t *k = o ? realloc(n->b_key, nc * sizeof *k) : NULL;
        if (k)
            n->b_key = k;
        uint64_t *c = k ? realloc(n->b_count, nc * sizeof *c) : NULL;
        if (!c)
            return UINT32_MAX;
        n->b_count = c;
        n->bcap = nc;
    }
    uint32_t ord = n->nb++;
    n->b_owner[ord] = owner;
    n->b_key[ord] = key;
    n->b_count[ord] = 0;
    return ord;
}

/* Look a bucket up without opening it; UINT32_MAX when absent. */
uint32_t fds__aggs_bucket_find(const fds__anode *n, uint32_t owner, uint64_t key)
{
    const fds__bmap *m = &n->map;
    if (!m->cap || owner == UINT32_MAX)
        return UINT32_MAX;
    for (size_t j = fds__bmap_mix(key, owner) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        const fds__bslot *s = &m->s[j];
        if (s->ord == UINT32_MAX)
            return UINT32_MAX;
        if (s->key == key && s->owner == owner)
            return s->ord;
    }
}

static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

/* The id of string s in n's table, interned if new; UINT32_MAX on ENOMEM. */
uint32_t fds__aggs_intern(fds__anode *n, const char *s, size_t len)
{
    uint64_t h = str_hash(s, len);
    fds__bmap *m = &n->smap;
    if ((m->n + 1) * 2 > m->cap && bmap_grow(m))
        return UINT32_MAX;
    size_t j = fds__bmap_mix(h, 0) & (m->cap - 1);
    for (;; j = (j + 1) & (m->cap - 1)) {
        fds__bslot *sl = &m->s[j];
        if (sl->ord == UINT32_MAX)
            break;
        if (sl->key == h && n->slen[sl->ord] == len &&
            !memcmp(n->arena + n->soff[sl->ord], s, len))
            return sl->ord;
    }
    if (n->ns == n->scap) {
        uint32_t nc = n->scap ? n->scap * 2 : 64;
        uint64_t *o = realloc(n->soff, nc * sizeof *o);
        if (o)
            n->soff = o;
        uint32_t *l = o ? realloc(n->slen, nc * sizeof *l) : NULL;
        if (!l)
            return UINT32_MAX;
        n->slen = l;
        n->scap = nc;
    }
    if (n->alen + len > n->acap) {
        size_t nc = n->acap ? n->acap : 1024;
        while (nc < n->alen + len)
            nc *= 2;
        char *na = realloc(n->arena, nc);
        if (!na)
            return UINT32_MAX;
        n->arena = na;
        n->acap = nc;
    }
    memcpy(n->arena + n->alen, s, len);
    uint32_t id = n->ns++;
    n->soff[id] = n->alen;
    n->slen[id] = (uint32_t)len;
    n->alen += len;
    m->s[j] = (fds__bslot){h, 0, id};
    m->n++;
    return id;
}

/* The string id of ordinal o of the segment's field, interned on first
 * sight; UINT32_MAX on ENOMEM. */
uint32_t fds__aggs_ord_id(fds__anode *n, uint32_t o)
{
    if (!n->ordmap[o]) {
        uint32_t len;
        const char *s = fds__sidx_term_str(n->f, o, &len);
        uint32_t id = fds__aggs_intern(n, s, len);
        if (id == UINT32_MAX)
            return UINT32_MAX;
        n->ordmap[o] = id + 1;
    }
    return n->ordmap[o] - 1;
}

/* Metric arrays hold `owner`. */
int fds__aggs_metric_room(fds__anode *n, uint32_t owner)
{
    if (owner < n->mcap)
        return 0;
    uint32_t nc = n->mcap ? n->mcap : 16;
    while (nc <= owner)
        nc *= 2;
    uint64_t *c = realloc(n->m_count, nc * sizeof *c);
    if (!c)
        return FDS_ENOMEM;
    n->m_count = c;
    double **arrs[] = {&n->m_sum, &n->m_sumc, &n->m_sq, &n->m_sqc, &n->m_min,
                       &n->m_max};
    for (size_t k = 0; k < sizeof arrs / sizeof *arrs; k++) {
        double *d = realloc(*arrs[k], nc * sizeof *d);
        if (!d)
            return FDS_ENOMEM;
        *arrs[k] = d;
        for (uint32_t i = n->mcap; i < nc; i++)
            d[i] = k == 4 ? INFINITY : k == 5 ? -INFINITY : 0;
    }
    for (uint32_t i = n->mcap; i < nc; i++)
        c[i] = 0;
    int t = n->a->type;
    if (t == FDS_AGG_CARDINALITY) {
        fds_hll **h = realloc(n->m_hll, nc * sizeof *h);
        if (!h)
            return FDS_ENOMEM;
        memset(h + n->mcap, 0, (nc - n->mcap) * sizeof *h);
        n->m_hll = h;
    }
    if (t == FDS_AGG_PERCENTILES || t == FDS_AGG_PERCENTILE_RANKS) {
        fds_tdigest **d = realloc(n->m_td, nc * sizeof *d);
        if (!d)
            return FDS_ENOMEM;
        memset(d + n->mcap, 0, (nc - n->mcap) * sizeof *d);
        n->m_td = d;
    }
    if (fds_agg_keeps_hits(t)) {
        fds__heap *h = realloc(n->th_heap, nc * sizeof *h);
        if (h)
            n->th_heap = h;
        float *mx = h ? realloc(n->th_max, nc * sizeof *mx) : NULL;
        if (!mx)
            return FDS_ENOMEM;
        n->th_max = mx;
        int64_t *bv = realloc(n->th_bv, nc * sizeof *bv);
        if (bv)
            n->th_bv = bv;
        uint32_t *bd = bv ? realloc(n->th_bd, nc * sizeof *bd) : NULL;
        if (!bd)
            return FDS_ENOMEM;
        n->th_bd = bd;
        for (uint32_t i = n->thcap; i < nc; i++) {
            h[i] = (fds__heap){.req = n->a->th};
            mx[i] = NAN;
            bd[i] = UINT32_MAX;
        }
        n->thcap = nc;
    }
    n->mcap = nc;
    return 0;
}
