/*
 * buckets.c: collection of the bucket aggregations over a batch of docs.
 * terms find the bucket in a dense (owner, segment ordinal or packed
 * value) table -- or, with no subs to feed, only count in it (flat:
 * buckets opened at the segment's end); date_histogram reuses the last
 * key's interval in a loop of its own (and counts a flat terms right below
 * it there); histogram, missing, filter take one bucket per doc at most;
 * range, date_range and filters may put a doc in several; composite
 * interns each doc's tuple of source values.
 */
#include "aggs/aggs_int.h"

/* The keyword string id of doc d for n, UINT32_MAX when none (or ENOMEM:
 * *oom set). */
static inline uint32_t kw_value(fds__anode *n, uint32_t d, bool *oom)
{
    const fds_sfield *f = n->f;
    uint32_t o = f && f->col && fds__bit(f->present, d) ? fds__col_ord(f, d)
                                                        : FDS_SIDX_NO_ORD;
    if (o == FDS_SIDX_NO_ORD) {
        if (!n->a->has_missing)
            return UINT32_MAX;
        if (!n->missing_sid) {
            uint32_t id = fds__aggs_intern(n, n->a->missing_s, n->a->missing_len);
            if (id == UINT32_MAX) {
                *oom = true;
                return UINT32_MAX;
            }
            n->missing_sid = id + 1;
        }
        return n->missing_sid - 1;
    }
    uint32_t id = fds__aggs_ord_id(n, o);
    *oom |= id == UINT32_MAX;
    return id;
}

/* The bucket of (owner, key), through the node's last-bucket memo (docs
 * of one bucket often come in runs: time-ordered logs under a
 * date_histogram) and, for keys that are small slots of the segment
 * (keyword ordinals, narrow packed integers), a dense owner x slot table;
 * UINT32_MAX on ENOMEM. */
static inline uint32_t bucket_at(fds__anode *n, uint32_t owner, uint64_t key)
{
    if (n->last_ord != UINT32_MAX && n->last_owner == owner && n->last_key == key)
        return n->last_ord;
    uint32_t b = fds__aggs_bucket_open(n, owner, key);
    n->last_owner = owner;
    n->last_key = key;
    n->last_ord = b;
    return b;
}

/* Count doc d into the bucket (owner o, key) and gather it for the subs
 * at n->bdoc / n->bown[*m].  False on ENOMEM (r->rc set). */
static inline bool gather(fds__aggs_run *r, fds__anode *n, uint32_t o, uint64_t key,
                          uint32_t d, size_t *m)
{
    uint32_t b = bucket_at(n, o, key);
    if (b == UINT32_MAX) {
        r->rc = FDS_ENOMEM;
        return false;
    }
    n->b_count[b]++;
    n->bdoc[*m] = d;
    n->bown[(*m)++] = b;
    return true;
}

/* A flat terms' column as its loops read it (hoisted: the counts' stores
 * could alias the node's fields). */
typedef struct flatcol {
    const uint8_t *col, *present;
    const uint32_t *map; /* keyword: ordinal -> global ordinal (NULL: same) */
    unsigned w;       /* bits per packed ordinal or value */
    bool kw, allp;
} flatcol;

static inline flatcol flat_col(const fds__anode *n)
{
    bool kw = n->a->ftype == FDS_FT_KEYWORD;
    return (flatcol){n->f->col, n->f->present, n->seg2g,
                     kw ? n->f->ord_bits : n->f->num_bits, kw, n->allp};
}

/* The slot of doc d in c (its ordinal, or its packed value); false when
 * it has none. */
static inline bool flat_slot(const flatcol *c, uint32_t d, uint32_t *slot)
{
    uint32_t v = (uint32_t)fds__bits_get(c->col, (uint64_t)d * c->w, c->w);
    if (c->kw) { /* packed as ordinal + 1, 0 = none */
        *slot = c->map && v ? c->map[v - 1] : v - 1;
        return v != 0;
    }
    *slot = v;
    return c->allp || fds__bit(c->present, d);
}

/* Add n's lanes into its dense row of lane_owner (which dense_at made)
 * and clear them. */
static void lanes_flush(fds__anode *n)
{
    if (n->lane_owner == UINT32_MAX)
        return;
    const uint32_t ns = n->nslots;
    uint32_t *row = n->dense + (size_t)n->lane_owner * ns, *l = n->lanes;
    for (uint32_t s = 0; s < ns; s++) {
        uint32_t c = 0;
        for (uint32_t k = 0; k < FLAT_LANES; k++) {
            c += l[k * ns + s];
            l[k * ns + s] = 0;
        }
        row[s] += c;
    }
    n->lane_owner = UINT32_MAX;
}

/* The counts of flat terms n for owner o from now on: its lanes (NULL:
 * none, or no row for o), flushed first when they held another owner's. */
static uint32_t *lanes_for(fds__anode *n, uint32_t o)
{
    if (!n->lanes)
        return NULL;
    if (n->lane_owner != o) {
        lanes_flush(n);
        if (!dense_at(n, o, 0))
            return NULL;
        n->lane_owner = o;
    }
    return n->lanes;
}

/* Slot states a fused or flat terms' loop asks the memory for ahead of
 * the one it updates: a terms over millions of slots misses the cache on
 * almost every doc, and misses asked for together overlap. */
#define SLOT_PREFETCH 12u

/* terms with flat counts over a batch: one count per (owner, slot) in
 * the dense table; a doc whose owner is past it goes the bucket way.  The
 * column's reads are hoisted: the counts' stores could alias them. */
static void collect_terms_flat(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                               const uint32_t *own, size_t cnt)
{
    const fds_sfield *f = n->f;
    const flatcol c = flat_col(n);
    const bool kw = c.kw;
    const uint32_t ns = n->nslots;
    uint32_t *lanes = own ? NULL : lanes_for(n, 0);
    if (lanes) { /* one owner: the interleaved tables */
        for (size_t i = 0; i < cnt; i++) {
            uint32_t slot;
            if (flat_slot(&c, docs[i], &slot))
                lanes[(i % FLAT_LANES) * ns + slot]++;
        }
        return;
    }
    uint32_t *row = !own && n->sparse ? dense_at(n, 0, 0) : NULL;
    if (row) { /* top level over many slots: the batch's slots, then the
                * counts with the next ones prefetched */
        uint32_t sl[FDS__COLLECT_BATCH];
        for (size_t i0 = 0; i0 < cnt; i0 += FDS__COLLECT_BATCH) {
            size_t m = 0, end = cnt - i0 < FDS__COLLECT_BATCH ? cnt : i0 + FDS__COLLECT_BATCH;
            for (size_t i = i0; i < end; i++)
                m += flat_slot(&c, docs[i], &sl[m]);
            for (size_t j = 0; j < m; j++) {
                if (j + SLOT_PREFETCH < m)
                    __builtin_prefetch(&row[sl[j + SLOT_PREFETCH]], 1);
                uint32_t *k = &row[sl[j]];
                if (!*k && !touch(n, sl[j])) {
                    r->rc = FDS_ENOMEM;
                    return;
                }
                (*k)++;
            }
        }
        return;
    }
    uint32_t *dense = n->dense, owners = n->dense_owners;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t d = docs[i], o = own ? own[i] : 0, slot;
        if (!flat_slot(&c, d, &slot))
            continue;
        if (o < owners) {
            uint32_t *c = &dense[(size_t)o * ns + slot];
            if (!*c && n->sparse && !touch(n, slot)) { /* top level: o is 0 */
                r->rc = FDS_ENOMEM;
                return;
            }
            (*c)++;
            continue;
        }
        if (dense_at(n, o, 0)) {
            dense = n->dense;
            owners = n->dense_owners;
            uint32_t *c = &dense[(size_t)o * ns + slot];
            if (!*c && n->sparse && !touch(n, slot)) {
                r->rc = FDS_ENOMEM;
                return;
            }
            (*c)++;
            continue;
        }
        if (n->gm && dense_fits(n, o)) { /* the row is the bucket's only home */
            r->rc = FDS_ENOMEM;
            return;
        }
        uint64_t key;
        if (kw && n->gm) {
            key = slot;
        } else if (kw) {
            bool oom = false;
            uint32_t id = kw_value(n, d, &oom);
            if (oom || id == UINT32_MAX) {
                r->rc = oom ? FDS_ENOMEM : r->rc;
                continue;
            }
            key = id;
        } else {
            key = (uint64_t)(f->num_min + (int64_t)slot);
        }
        uint32_t b = bucket_at(n, o, key);
        if (b == UINT32_MAX) {
            r->rc = FDS_ENOMEM;
            return;
        }
        n->b_count[b]++;
    }
}

/* The key of slot `slot` of terms n in this segment into *key: 1, or 0
 * when include/exclude drop it, or FDS_ENOMEM. */
static int slot_key(fds__anode *n, uint32_t slot, uint64_t *key)
{
    const fds_agg *a = n->a;
    if (a->ftype == FDS_FT_KEYWORD && n->gm) {
        *key = slot; /* the global ordinal: no include, exclude */
        return 1;
    }
    if (a->ftype == FDS_FT_KEYWORD) {
        uint32_t id = fds__aggs_ord_id(n, slot);
        if (id == UINT32_MAX)
            return FDS_ENOMEM;
        const char *str = n->arena + n->soff[id];
        size_t sl = n->slen[id];
        *key = id;
        return !((a->nincl && !kw_in_list(a->incl, a->incl_len, a->nincl, str, sl)) ||
                 kw_in_list(a->excl, a->excl_len, a->nexcl, str, sl));
    }
    int64_t l = n->f->num_min + (int64_t)slot;
    double v = (double)l;
    *key = (uint64_t)l;
    return !((a->nincl && !in_list(a->incl_d, a->nincl, v)) ||
             in_list(a->excl_d, a->nexcl, v));
}

/* ---- a top-level terms by global ordinals: its best slots only ---------- */

/* A slot of a terms by global ordinals and its doc count. */
typedef struct slotc {
    uint64_t c;
    uint32_t s;
} slotc;

/* The best `cap` slots offered so far in a heap whose root sorts last,
 * and the docs of those left out. */
typedef struct slotsel {
    const fds_agg *a;
    slotc *h;
    size_t k, cap;
    uint64_t other;
} slotsel;

/* Does slot x sort after slot y in a's order?  The order reads counts
 * and keys only (fold_selects); a global ordinal's order is its term's
 * byte order, the key order of fds__aggs_key_cmp, which ends every
 * order as in fds__aggs_order_cmp. */
static bool slot_after(const fds_agg *a, slotc x, slotc y)
{
    for (unsigned i = 0; i < a->norder; i++) {
        const fds_agg_order *o = &a->order[i];
        int c = o->kind == FDS_AGG_ORD_COUNT ? (x.c < y.c ? -1 : x.c > y.c)
                                            : (x.s < y.s ? -1 : x.s > y.s);
        if (c)
            return (o->desc ? -c : c) > 0;
    }
    if (!a->norder && x.c != y.c) /* _count desc */
        return x.c < y.c;
    return x.s > y.s;
}

static void slotsel_down(slotsel *q, size_t j)
{
    for (;;) {
        size_t l = 2 * j + 1, w = j;
        if (l < q->k && slot_after(q->a, q->h[l], q->h[w]))
            w = l;
        if (l + 1 < q->k && slot_after(q->a, q->h[l + 1], q->h[w]))
            w = l + 1;
        if (w == j)
            return;
        slotc t = q->h[j];
        q->h[j] = q->h[w];
        q->h[w] = t;
        j = w;
    }
}

/* Slot s of c docs (c > 0) offered to q. */
static void slotsel_offer(slotsel *q, uint32_t s, uint64_t c)
{
    slotc x = {c, s};
    if (q->k < q->cap) { /* sift up */
        size_t j = q->k++;
        while (j && slot_after(q->a, x, q->h[(j - 1) / 2])) {
            q->h[j] = q->h[(j - 1) / 2];
            j = (j - 1) / 2;
        }
        q->h[j] = x;
        return;
    }
    if (!q->cap || !slot_after(q->a, q->h[0], x)) {
        q->other += c;
        return;
    }
    q->other += q->h[0].c;
    q->h[0] = x;
    slotsel_down(q, 0);
}

/* Does top-level terms n keep, at its last fold, the buckets of its best
 * shard_size slots only?  Yes when its keys are global ordinals, it has
 * no bucket yet (all its docs are in the fold's counts) and its order
 * reads counts and keys alone: its result keeps those and no others
 * (results.c select_best), so the rest need no bucket nor metric state;
 * their docs go to n->fold_other (sum_other_doc_count). */
static bool fold_selects(const fds__anode *n)
{
    const fds_agg *a = n->a;
    if (!n->gm || !n->top || n->nb || a->type != FDS_AGG_TERMS)
        return false;
    for (unsigned i = 0; i < a->norder; i++)
        if (a->order[i].kind == FDS_AGG_ORD_METRIC)
            return false;
    return true;
}

/* A selection of n's best shard_size slots of at most `slots`.  False on
 * ENOMEM. */
static bool slotsel_init(slotsel *q, const fds__anode *n, size_t slots)
{
    size_t cap = n->a->shard_size < slots ? n->a->shard_size : slots;
    *q = (slotsel){.a = n->a, .cap = cap};
    return !cap || (q->h = malloc(cap * sizeof *q->h));
}

/* A flat fold is over: every count it read is zero again, so the whole
 * table is, and goes to the pool of zeroed blocks for the next search
 * over the same field (zpool.c: a top-level terms over url.keyword
 * cleared 4 bytes per term of the field for each request). */
static void flat_done(fds__anode *n)
{
    fds__zpool_give(n->dense, (size_t)n->dense_owners * n->nslots * sizeof *n->dense);
    n->dense = NULL;
    n->dense_owners = 0;
}

/* The flat counts of the segment into buckets (include/exclude applied
 * here, as collect_terms applies them per doc), the table zeroed. */
int fds__aggs_flat_fold(fds__anode *n, bool last)
{
    lanes_flush(n);
    /* sparse: owner 0's listed slots only */
    bool list = n->sparse && !n->touched_over;
    size_t nt = list ? n->ntouched : 0;
    n->ntouched = 0;
    n->touched_over = false;
    if (last && fold_selects(n)) { /* one owner: the best slots only */
        size_t m = list ? nt : n->nslots;
        slotsel q;
        if (!slotsel_init(&q, n, m))
            return FDS_ENOMEM;
        for (size_t i = 0; i < m; i++) {
            uint32_t slot = list ? n->touched[i] : (uint32_t)i;
            if (n->dense[slot])
                slotsel_offer(&q, slot, n->dense[slot]);
            n->dense[slot] = 0;
        }
        for (size_t i = 0; i < q.k; i++) {
            uint32_t b = fds__aggs_bucket_append(n, 0, q.h[i].s);
            if (b == UINT32_MAX) {
                free(q.h);
                return FDS_ENOMEM;
            }
            n->b_count[b] += q.h[i].c;
        }
        n->fold_other += q.other;
        free(q.h);
        flat_done(n);
        return 0;
    }
    for (uint32_t o = 0; o < (list ? 1u : n->dense_owners); o++)
        for (size_t i = 0; i < (list ? nt : n->nslots); i++) {
            uint32_t slot = list ? n->touched[i] : (uint32_t)i;
            uint32_t *c = &n->dense[(size_t)o * n->nslots + slot];
            if (!*c)
                continue;
            uint64_t key;
            int k = slot_key(n, slot, &key);
            if (k < 0)
                return k;
            /* by global ordinals a row's (owner, key) has no other bucket */
            uint32_t b = !k ? UINT32_MAX - 1
                       : n->gm ? fds__aggs_bucket_append(n, o, key)
                               : fds__aggs_bucket_open(n, o, key);
            if (b == UINT32_MAX)
                return FDS_ENOMEM;
            if (k)
                n->b_count[b] += *c;
            *c = 0;
        }
    flat_done(n);
    return 0;
}

/* The bucket of owner 0 and slot `slot` of a fused terms: by global
 * ordinals through the dense table when it has the row (as the generic
 * path finds it), else by key.  UINT32_MAX - 1 when include/exclude drop
 * the slot; UINT32_MAX on ENOMEM. */
static uint32_t fused_bucket(fds__anode *n, uint32_t slot)
{
    uint64_t key;
    int k = slot_key(n, slot, &key);
    if (k <= 0)
        return k ? UINT32_MAX : UINT32_MAX - 1;
    if (!n->gm)
        return fds__aggs_bucket_open(n, 0, key);
    uint32_t *ds = dense_at(n, 0, slot);
    if (!ds)
        return dense_fits(n, 0) ? UINT32_MAX : fds__aggs_bucket_open(n, 0, key);
    if (!*ds) {
        uint32_t b = fds__aggs_bucket_append(n, 0, key);
        if (b == UINT32_MAX)
            return UINT32_MAX;
        *ds = b + 1;
    }
    return *ds - 1;
}

/* The state of slot `slot` of fused terms n over its lanes into *t, *tm
 * (t->n 0: no docs), the lanes cleared. */
static void fused_take(fds__anode *n, uint32_t slot, fds__macc *t, fds__mmm *tm)
{
    const uint32_t ns = n->macc_slots;
    *t = (fds__macc){0};
    *tm = (fds__mmm){0};
    for (uint32_t l = 0; l < n->macc_lanes; l++) {
        size_t at = (size_t)l * ns + slot;
        fds__macc *x = &n->macc[at];
        if (!x->n)
            continue;
        if (n->mmm) {
            const fds__mmm *y = &n->mmm[at];
            tm->min = !t->n || y->min < tm->min ? y->min : tm->min;
            tm->max = !t->n || y->max > tm->max ? y->max : tm->max;
        }
        t->n += x->n;
        t->sum += x->sum;
        *x = (fds__macc){0};
    }
}

/* Slot state t, tm into bucket b of fused terms n and its metric.  0 or
 * FDS_ENOMEM. */
static int fused_add(fds__anode *n, uint32_t b, fds__macc t, fds__mmm tm)
{
    fds__anode *k = n->kids[0];
    if (fds__aggs_metric_room(k, b))
        return FDS_ENOMEM;
    /* exact: the column's sums stay below 2^53 (int_exact) */
    n->b_count[b] += t.n;
    k->m_count[b] += t.n;
    k->m_sum[b] += (double)t.sum;
    if (n->mmm) {
        double mn = (double)tm.min, mx = (double)tm.max;
        k->m_min[b] = mn < k->m_min[b] ? mn : k->m_min[b];
        k->m_max[b] = mx > k->m_max[b] ? mx : k->m_max[b];
    }
    return 0;
}

/* The best slots of fused terms n chosen by q (fold_selects; lane 0
 * holds their totals) into buckets, the others' docs into
 * n->fold_other; the states freed (the last fold).  0 or FDS_ENOMEM. */
static int fused_keep_best(fds__anode *n, slotsel *q)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < q->k; i++) {
        uint32_t slot = q->h[i].s;
        uint32_t b = fds__aggs_bucket_append(n, 0, slot);
        rc = b == UINT32_MAX ? FDS_ENOMEM
                             : fused_add(n, b, n->macc[slot],
                                         n->mmm ? n->mmm[slot] : (fds__mmm){0});
    }
    free(q->h);
    n->fold_other += q->other;
    return rc;
}

void fds__aggs_macc_release(fds__anode *n)
{
    size_t bytes = (size_t)n->macc_slots * n->macc_lanes * sizeof *n->macc;
    if (n->macc_clean)
        fds__zpool_give(n->macc, bytes);
    else
        free(n->macc);
    n->macc = NULL;
    n->macc_clean = false;
}

int fds__aggs_fused_fold(fds__anode *n, bool last)
{
    const uint32_t ns = n->macc_slots;
    /* sparse (one lane): the listed slots only */
    bool list = n->sparse && !n->touched_over;
    size_t nt = list ? n->ntouched : ns;
    n->ntouched = 0;
    n->touched_over = false;
    n->macc_held = false;
    slotsel q = {0};
    bool best = last && fold_selects(n); /* buckets for the best only */
    if (best && !slotsel_init(&q, n, nt))
        return FDS_ENOMEM;
    for (size_t i = 0; i < nt; i++) {
        uint32_t slot = list ? n->touched[i] : (uint32_t)i;
        fds__macc t;
        fds__mmm tm;
        fused_take(n, slot, &t, &tm);
        if (!t.n)
            continue;
        if (best) { /* the slot's total into lane 0 */
            n->macc[slot] = t;
            if (n->mmm)
                n->mmm[slot] = tm;
            slotsel_offer(&q, slot, t.n);
            continue;
        }
        uint32_t b = fused_bucket(n, slot);
        if (b == UINT32_MAX - 1)
            continue;
        if (b == UINT32_MAX || fused_add(n, b, t, tm))
            return FDS_ENOMEM;
    }
    if (best) { /* the totals written back into lane 0 cleared too */
        int rc = fused_keep_best(n, &q);
        for (size_t i = 0; i < nt; i++)
            n->macc[list ? n->touched[i] : i] = (fds__macc){0};
        if (rc)
            return rc;
    }
    n->macc_clean = true;
    return 0;
}

/* The state of fused terms n's slot `at` (of its lanes' tables) updated
 * by value v of one more doc.  False on ENOMEM. */
static inline bool fused_one(fds__anode *n, fds__macc *acc, fds__mmm *mmm, size_t at,
                             int64_t v)
{
    fds__macc *x = &acc[at];
    /* sparse: one lane, the state's index is the slot */
    if (!x->n && n->sparse && !touch(n, (uint32_t)at))
        return false;
    if (mmm) {
        fds__mmm *y = &mmm[at];
        y->min = !x->n || v < y->min ? v : y->min;
        y->max = !x->n || v > y->max ? v : y->max;
    }
    x->n++;
    x->sum += v;
    return true;
}

/* A fused terms over a batch: each doc's slot state (its lane's when
 * the slots are few), no bucket.  Over many slots the batch's slots and
 * values are read first (the columns in order), then the states are
 * updated with the next ones prefetched. */
static void collect_terms_fused(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                                size_t cnt)
{
    const flatcol c = flat_col(n);
    const fds_sfield *vf = n->kids[0]->f;
    fds__macc *const acc = n->macc;
    n->macc_clean = false;
    fds__mmm *const mmm = n->mmm;
    const size_t ls = n->macc_lanes > 1 ? n->macc_slots : 0;
    if (!n->sparse) {
        for (size_t i = 0; i < cnt; i++) {
            uint32_t d = docs[i], slot;
            if (flat_slot(&c, d, &slot) &&
                !fused_one(n, acc, mmm, (i % FLAT_LANES) * ls + slot, fds__col_i64(vf, d))) {
                r->rc = FDS_ENOMEM;
                return;
            }
        }
        return;
    }
    uint32_t sl[FDS__COLLECT_BATCH];
    int64_t val[FDS__COLLECT_BATCH];
    for (size_t i0 = 0; i0 < cnt; i0 += FDS__COLLECT_BATCH) {
        size_t m = 0, end = cnt - i0 < FDS__COLLECT_BATCH ? cnt : i0 + FDS__COLLECT_BATCH;
        for (size_t i = i0; i < end; i++) {
            uint32_t d = docs[i];
            if (flat_slot(&c, d, &sl[m]))
                val[m++] = fds__col_i64(vf, d);
        }
        for (size_t j = 0; j < m; j++) {
            if (j + SLOT_PREFETCH < m) {
                __builtin_prefetch(&acc[sl[j + SLOT_PREFETCH]], 1);
                if (mmm)
                    __builtin_prefetch(&mmm[sl[j + SLOT_PREFETCH]], 1);
            }
            if (!fused_one(n, acc, mmm, sl[j], val[j])) {
                r->rc = FDS_ENOMEM;
                return;
            }
        }
    }
}

/* terms over a batch. */
void fds__aggs_collect_terms(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                             const uint32_t *own, size_t cnt)
{
    if (n->flat) {
        collect_terms_flat(r, n, docs, own, cnt);
        return;
    }
    if (n->fused && !own) {
        collect_terms_fused(r, n, docs, cnt);
        return;
    }
    const fds_agg *a = n->a;
    const fds_sfield *f = n->f;
    bool kw = a->ftype == FDS_FT_KEYWORD;
    bool filt = a->nincl || a->nexcl;
    size_t m = 0;
    /* the docs of a run of one bucket counted in a register: one key
     * holds most docs of a log (status 200), and an increment per doc in
     * memory waits on the one before it */
    uint32_t run_b = 0;
    uint64_t run_n = 0;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t d = docs[i], o = own ? own[i] : 0, b;
        /* a dense slot: the ordinal, or the packed integer */
        uint32_t slot = UINT32_MAX;
        if (n->nslots && f && f->col && fds__bit(f->present, d)) {
            slot = kw ? fds__col_ord(f, d)
                      : (uint32_t)fds__bits_get(f->col, (uint64_t)d * f->num_bits,
                                                f->num_bits);
            if (n->seg2g && slot != FDS_SIDX_NO_ORD)
                slot = n->seg2g[slot];
        }
        uint32_t *ds = slot < n->nslots ? dense_at(n, o, slot) : NULL;
        if (ds && *ds) {
            b = *ds - 1;
        } else if (kw && n->gm) { /* the global ordinal is the key */
            if (slot >= n->nslots)
                continue;
            /* a row of the dense table is the bucket's only home (no
             * hash); a row it should have but could not get: ENOMEM */
            b = ds ? fds__aggs_bucket_append(n, o, slot)
              : dense_fits(n, o) ? UINT32_MAX : bucket_at(n, o, slot);
            if (b == UINT32_MAX) {
                r->rc = FDS_ENOMEM;
                return;
            }
            if (ds)
                *ds = b + 1;
        } else {
            uint64_t key;
            if (kw) {
                bool oom = false;
                uint32_t id = kw_value(n, d, &oom);
                if (oom)
                    r->rc = FDS_ENOMEM;
                if (id == UINT32_MAX)
                    continue;
                if (filt) {
                    const char *s = n->arena + n->soff[id];
                    size_t sl = n->slen[id];
                    if ((a->nincl && !kw_in_list(a->incl, a->incl_len, a->nincl, s, sl)) ||
                        kw_in_list(a->excl, a->excl_len, a->nexcl, s, sl)) {
                        if (ds)
                            *ds = UINT32_MAX; /* filtered out: remembered */
                        continue;
                    }
                }
                key = id;
            } else {
                double v;
                int64_t l;
                if (!num_value(n, d, &v, &l))
                    continue;
                if ((a->nincl && !in_list(a->incl_d, a->nincl, v)) ||
                    in_list(a->excl_d, a->nexcl, v)) {
                    if (ds)
                        *ds = UINT32_MAX;
                    continue;
                }
                key = a->ftype == FDS_FT_DOUBLE ? dbits(v) : (uint64_t)l;
            }
            b = bucket_at(n, o, key);
            if (b == UINT32_MAX) {
                r->rc = FDS_ENOMEM;
                return;
            }
            if (ds)
                *ds = b + 1;
        }
        if (b == UINT32_MAX - 1) /* the filtered-out mark */
            continue;
        if (b != run_b) {
            if (run_n)
                n->b_count[run_b] += run_n;
            run_b = b;
            run_n = 0;
        }
        run_n++;
        n->bdoc[m] = d;
        n->bown[m++] = b;
    }
    if (run_n)
        n->b_count[run_b] += run_n;
    pass_down(r, n, m);
}

/* ---- min_doc_count 0 of a terms ------------------------------------------ */

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* v[0..n) sorted and its duplicates dropped; returns the new length. */
static size_t sort_unique(uint64_t *v, size_t n)
{
    if (n < 2)
        return n;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t m = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[m - 1])
            v[m++] = v[i];
    return m;
}

/* The terms key of doc d (any doc of the segment), include/exclude
 * applied; false when it has none or is left out.  *oom on ENOMEM. */
static bool zero_key(fds__anode *n, uint32_t d, uint64_t *key, bool *oom)
{
    const fds_agg *a = n->a;
    if (a->ftype == FDS_FT_KEYWORD) {
        uint32_t id = kw_value(n, d, oom);
        if (id == UINT32_MAX)
            return false;
        *key = id;
        return !(a->nincl && !kw_in_list(a->incl, a->incl_len, a->nincl,
                                        n->arena + n->soff[id], n->slen[id])) &&
               !kw_in_list(a->excl, a->excl_len, a->nexcl,
                           n->arena + n->soff[id], n->slen[id]);
    }
    double v;
    int64_t l;
    if (!num_value(n, d, &v, &l) || (a->nincl && !in_list(a->incl_d, a->nincl, v)) ||
        in_list(a->excl_d, a->nexcl, v))
        return false;
    *key = a->ftype == FDS_FT_DOUBLE ? dbits(v) : (uint64_t)l;
    return true;
}

/* Every doc of the segment is read once: one key per doc at most, held
 * sorted and unique with the keys of the segments before. */
int fds__aggs_zero_keys(fds__anode *n)
{
    uint32_t maxdoc = fds_sidx_max_doc(n->sx);
    size_t need = n->nzk + maxdoc;
    if (need > n->zkcap) {
        uint64_t *z = realloc(n->zkeys, need * sizeof *z);
        if (!z)
            return FDS_ENOMEM;
        n->zkeys = z;
        n->zkcap = need;
    }
    bool oom = false;
    size_t m = n->nzk;
    for (uint32_t d = 0; d < maxdoc && !oom; d++) {
        uint64_t key;
        if (zero_key(n, d, &key, &oom) && (m == n->nzk || n->zkeys[m - 1] != key))
            n->zkeys[m++] = key;
    }
    if (oom)
        return FDS_ENOMEM;
    n->nzk = sort_unique(n->zkeys, m);
    return 0;
}

int fds__aggs_zero_fill(fds__anode *n, uint32_t nowners)
{
    for (size_t k = 0; k < n->a->nsubs; k++) {
        fds__anode *kid = n->kids[k];
        for (uint32_t o = 0; kid->nzk && o < nowners; o++)
            for (size_t i = 0; i < kid->nzk; i++)
                if (fds__aggs_bucket_open(kid, o, kid->zkeys[i]) == UINT32_MAX)
                    return FDS_ENOMEM;
        int rc = fds__aggs_zero_fill(kid, kid->nb);
        if (rc)
            return rc;
    }
    return 0;
}

/* date_run of a flat terms over a packed integer column (tcol, tw bits)
 * that every doc has: its slot is the packed value.  One unsigned
 * comparison tests the interval, and when docs[i..cnt) are consecutive
 * (a match_all hands whole runs) the bit offsets grow by the widths
 * instead of being multiplied out. */
static size_t date_run_ints(const uint8_t *col, unsigned w, uint64_t base, int64_t lo,
                            int64_t hi, const uint32_t *docs, size_t i, size_t cnt,
                            const uint8_t *tcol, unsigned tw, uint32_t *row, size_t ls)
{
    if (hi <= lo) /* the empty interval */
        return i;
    /* value - lo, modulo 2^64, is packed + off: below span in [lo, hi) */
    const uint64_t span = (uint64_t)hi - (uint64_t)lo;
    const uint64_t off = base - (uint64_t)lo;
    if (i < cnt && docs[cnt - 1] - docs[i] == cnt - 1 - i) { /* consecutive */
        uint64_t b = (uint64_t)docs[i] * w, tb = (uint64_t)docs[i] * tw;
        for (; i < cnt; i++, b += w, tb += tw) {
            if (fds__bits_get(col, b, w) + off >= span)
                break;
            row[(i % FLAT_LANES) * ls + fds__bits_get(tcol, tb, tw)]++;
        }
        return i;
    }
    for (; i < cnt; i++) {
        uint32_t d = docs[i];
        if (fds__bits_get(col, (uint64_t)d * w, w) + off >= span)
            break;
        row[(i % FLAT_LANES) * ls + fds__bits_get(tcol, (uint64_t)d * tw, tw)]++;
    }
    return i;
}

/* The run of docs[i..cnt) whose values of the packed column (col, w
 * bits over base) lie in [lo, hi), each counted into row at its slot of
 * tc (lane (i % FLAT_LANES) * ls) when row is not NULL; returns the index
 * of the first doc outside.  Every doc has a value.  Kept apart from
 * collect_date so that the loop has its few values in registers. */
static __attribute__((noinline)) size_t
date_run(const uint8_t *col, unsigned w, uint64_t base, int64_t lo, int64_t hi,
         const uint32_t *docs, size_t i, size_t cnt, const flatcol *tc,
         uint32_t *row, size_t ls)
{
    if (!row) {
        for (; i < cnt; i++) {
            int64_t l = (int64_t)(base + fds__bits_get(col, (uint64_t)docs[i] * w, w));
            if (l < lo || l >= hi)
                break;
        }
        return i;
    }
    const flatcol c = *tc;
    if (!c.kw && c.allp && w && c.w) /* packed integers every doc has */
        return date_run_ints(col, w, base, lo, hi, docs, i, cnt, c.col, c.w, row, ls);
    for (; i < cnt; i++) {
        uint32_t d = docs[i], slot;
        int64_t l = (int64_t)(base + fds__bits_get(col, (uint64_t)d * w, w));
        if (l < lo || l >= hi)
            break;
        if (flat_slot(&c, d, &slot))
            row[(i % FLAT_LANES) * ls + slot]++;
    }
    return i;
}

/* date_histogram over a batch of a segment whose integer column has the
 * values (no `missing`, no hard_bounds): each value in the last key's
 * interval [dk_lo, dk_hi) of the same owner joins its bucket without a
 * lookup, and the counts of a run of them are added at once. */
static void collect_date(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                         const uint32_t *own, size_t cnt)
{
    const fds_agg *a = n->a;
    const fds_sfield *f = n->f;
    const uint8_t *const col = f->col, *const present = f->present;
    const unsigned w = f->num_bits;
    const bool raw = w == FDS_SIDX_NUM_RAW;
    const int64_t base = f->num_min;
    uint32_t *const bdoc = n->bdoc, *const bown = n->bown;
    /* one flat terms below: counted here, the bucket being its owner
     * (docs whose owner its table cannot hold go down as usual) */
    fds__anode *t = a->nsubs == 1 && n->kids[0]->flat ? n->kids[0] : NULL;
    const flatcol tc = t ? flat_col(t) : (flatcol){0};
    uint32_t *row = NULL; /* t's counts of owner b */
    /* at the top (one owner a batch, buckets changing seldom) row is t's
     * lanes, doc k into lane k % FLAT_LANES (lane stride ns; 0: row) */
    const bool lanes = t && !own && t->lanes;
    const size_t ls = lanes ? t->nslots : 0;
    /* the interval docs join without a lookup: [lo, hi) of owner `cur`
     * (empty when the key's interval is not known) */
    int64_t key = n->dk_lo, lo = n->dk_valid ? n->dk_lo : 1;
    int64_t hi = n->dk_valid ? n->dk_hi : 0;
    uint32_t cur = UINT32_MAX, b = 0;
    size_t m = 0;             /* docs for the subs */
    uint64_t k = 0, k0 = 0;   /* docs counted; since the bucket changed */
    const bool allp = n->allp;
    /* at the top with every doc valued: runs of one bucket by date_run */
    /* ... each run to one sum-like metric below as a whole */
    fds__anode *mk = a->nsubs == 1 && fds__aggs_run_metric(n->kids[0]) ? n->kids[0] : NULL;
    const bool sq = mk && mk->a->type == FDS_AGG_EXTENDED_STATS;
    const bool runs = !own && allp && !raw &&
                      (t ? lanes : mk || !a->nsubs);
    for (size_t i = 0; i < cnt; i++) {
        if (runs && cur != UINT32_MAX && (!t || row)) {
            size_t j = date_run(col, w, (uint64_t)base, lo, hi, docs, i, cnt,
                                &tc, row, ls);
            if (mk && j > i) {
                if (fds__aggs_metric_room(mk, b)) {
                    r->rc = FDS_ENOMEM;
                    return;
                }
                fds__aggs_metric_run(mk, docs + i, j - i, b, sq);
            }
            k += j - i;
            if ((i = j) == cnt)
                break;
        }
        uint32_t d = docs[i], o = own ? own[i] : 0;
        if (!allp && !fds__bit(present, d))
            continue;
        int64_t l = raw ? (int64_t)fds__get_u64(col + (size_t)d * 8)
                        : (int64_t)((uint64_t)base +
                                    fds__bits_get(col, (uint64_t)d * w, w));
        if (__builtin_expect(l < lo || l >= hi || o != cur, 0)) {
            if (l < lo || l >= hi) {
                key = fds__aggs_date_key(a, l);
                int64_t next = n->nslots ? key + n->dk_len : fds__aggs_date_next(a, key);
                lo = next > key ? key : 1;
                hi = next > key ? next : 0;
            }
            /* the key's slot: a new interval, or another owner's bucket */
            uint64_t slot = n->nslots ? (uint64_t)(key - n->dk_min) /
                                            (uint64_t)n->dk_len
                                      : UINT64_MAX;
            uint32_t *ds = slot < n->nslots ? dense_at(n, o, (uint32_t)slot) : NULL;
            if (cur != UINT32_MAX)
                n->b_count[b] += k - k0;
            k0 = k;
            if (ds && *ds) {
                b = *ds - 1;
            } else if ((b = bucket_at(n, o, (uint64_t)key)) == UINT32_MAX) {
                r->rc = FDS_ENOMEM;
                return;
            } else if (ds) {
                *ds = b + 1;
            }
            cur = o;
            row = !t ? NULL : lanes ? lanes_for(t, b) : dense_at(t, b, 0);
        }
        k++;
        if (row) {
            uint32_t slot;
            if (flat_slot(&tc, d, &slot))
                row[(k % FLAT_LANES) * ls + slot]++;
            continue;
        }
        if (!a->nsubs)
            continue;
        bdoc[m] = d;
        bown[m++] = b;
    }
    if (cur != UINT32_MAX)
        n->b_count[b] += k - k0;
    n->dk_valid = hi > lo;
    n->dk_lo = key;
    n->dk_hi = hi;
    pass_down(r, n, m);
}

/* histogram, date_histogram, missing, filter, sampler over a batch: one
 * bucket per doc at most. */
void fds__aggs_collect_single(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                              const uint32_t *own, size_t cnt)
{
    const fds_agg *a = n->a;
    const fds_sfield *f = n->f;
    if (a->type == FDS_AGG_DATE_HISTOGRAM && f && f->col &&
        f->kind != FDS_FT_DOUBLE && !a->has_missing && !a->has_hard) {
        collect_date(r, n, docs, own, cnt);
        return;
    }
    size_t m = 0;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t d = docs[i], o = own ? own[i] : 0;
        uint64_t key = 0;
        double v;
        int64_t l;
        switch (a->type) {
        case FDS_AGG_HISTOGRAM: {
            if (!num_value(n, d, &v, &l) || isnan(v))
                continue;
            /* Elasticsearch's NumericHistogramAggregator tests the key
             * before the offset is added back against the hard bounds */
            double kb = floor((v - a->offset) / a->interval) * a->interval;
            if (a->has_hard && (kb < a->hard_min || kb > a->hard_max))
                continue;
            key = dbits(kb + a->offset);
            break;
        }
        case FDS_AGG_DATE_HISTOGRAM: {
            if (!num_value(n, d, &v, &l))
                continue;
            /* a bucket is the interval [key, next key): a value inside the
             * last one has its key without the division */
            int64_t k;
            if (n->dk_valid && l >= n->dk_lo && l < n->dk_hi) {
                k = n->dk_lo;
            } else {
                k = fds__aggs_date_key(a, l);
                n->dk_lo = k;
                n->dk_hi = fds__aggs_date_next(a, k);
                n->dk_valid = n->dk_hi > k;
            }
            if (a->has_hard && ((double)k < a->hard_min || (double)k > a->hard_max))
                continue;
            key = (uint64_t)k;
            break;
        }
        case FDS_AGG_FILTER:
            if (!fds__filter_match(n->flt[0], d))
                continue;
            break;
        case FDS_AGG_SAMPLER: {
            /* Elasticsearch's SamplerAggregator keeps a shard's best
             * shard_size docs by score per owning bucket; the query
             * scoring none (dsl_parse.c checks), they tie and Lucene's
             * TopScoreDocCollector keeps the first in doc order: the
             * docs arrive in that order, segment after segment */
            uint32_t b = bucket_at(n, o, 0);
            if (b == UINT32_MAX) {
                r->rc = FDS_ENOMEM;
                return;
            }
            if (n->b_count[b] >= a->shard_size)
                continue;
            break;
        }
        default: /* missing (`_index`: every doc has its value) */
            if (a->index_field || has_value(n, d))
                continue;
            break;
        }
        if (!gather(r, n, o, key, d, &m))
            return;
    }
    pass_down(r, n, m);
}

/* range, date_range, filters over a batch: a doc may be in several
 * buckets, so the subs get the batch once per bucket key. */
void fds__aggs_collect_multi(fds__aggs_run *r, fds__anode *n, const uint32_t *docs,
                             const uint32_t *own, size_t cnt)
{
    const fds_agg *a = n->a;
    bool ranges = a->type != FDS_AGG_FILTERS;
    size_t nkeys = ranges ? a->nranges : a->nfilters + a->other_bucket;
    uint8_t hit[FDS__COLLECT_BATCH];
    memset(hit, 0, cnt);
    for (size_t k = 0; k < nkeys && !r->rc; k++) {
        bool other = !ranges && k == a->nfilters;
        size_t m = 0;
        for (size_t i = 0; i < cnt; i++) {
            uint32_t d = docs[i], o = own ? own[i] : 0;
            double v;
            int64_t l;
            if (ranges) {
                if (!num_value(n, d, &v, &l) || !(v >= a->ranges[k].from &&
                                                  v < a->ranges[k].to))
                    continue;
            } else if (other) {
                if (hit[i])
                    continue;
            } else {
                if (!fds__filter_match(n->flt[k], d))
                    continue;
                hit[i] = 1;
            }
            if (!gather(r, n, o, k, d, &m))
                return;
        }
        pass_down(r, n, m);
    }
}

/* composite over a batch (top level: owner 0): each doc's tuple of source
 * values (a keyword as its id in the source's string table, a number as
 * its key bits), interned; docs missing a source value are left out. */
void fds__aggs_collect_composite(fds__aggs_run *r, fds__anode *n,
                                 const uint32_t *docs, const uint32_t *own,
                                 size_t cnt)
{
    const fds_agg *a = n->a;
    uint8_t tup[FDS_AGG_ORDER_MAX * 4 * FDS__AGG_CK_BYTES];
    size_t m = 0;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t d = docs[i];
        size_t k;
        for (k = 0; k < a->nsrcs; k++) {
            fds__anode *sn = n->srcn[k];
            const fds_agg *s = sn->a;
            uint64_t key;
            double v;
            int64_t l;
            if (s->type == FDS_AGG_TERMS && s->ftype == FDS_FT_KEYWORD) {
                bool oom = false;
                uint32_t id = kw_value(sn, d, &oom);
                if (oom)
                    r->rc = FDS_ENOMEM;
                if (id == UINT32_MAX)
                    break;
                key = id;
            } else {
                if (!num_value(sn, d, &v, &l) || isnan(v))
                    break;
                key = s->type == FDS_AGG_HISTOGRAM ? dbits(fds__aggs_histo_key(s, v))
                    : s->type == FDS_AGG_DATE_HISTOGRAM ? (uint64_t)fds__aggs_date_key(s, l)
                    : s->ftype == FDS_FT_DOUBLE ? dbits(v) : (uint64_t)l;
            }
            memcpy(tup + k * FDS__AGG_CK_BYTES, &key, FDS__AGG_CK_BYTES);
        }
        if (k < a->nsrcs)
            continue;
        uint32_t id = fds__aggs_intern(n, (const char *)tup, a->nsrcs * FDS__AGG_CK_BYTES);
        if (id == UINT32_MAX) {
            r->rc = FDS_ENOMEM;
            return;
        }
        if (!gather(r, n, 0, id, d, &m))
            return;
    }
    pass_down(r, n, m);
}
