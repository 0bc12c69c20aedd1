/*
 * sidx_merge_columns.c: a field's per-doc data in the merged segment --
 * norms, the presence bitset, the doc-values column (keyword ordinals
 * remapped through the merged dictionary) and a text field's value ids --
 * read from the inputs' live docs in output order.
 */
#include <stdlib.h>
#include <string.h>

#include "index/sidx_merge_int.h"

/* An input's value id, for sorting them by bytes across inputs. */
typedef struct vref {
    const fds_sfield *f;
    uint32_t in, v;
} vref;

static int vref_cmp(const void *a, const void *b)
{
    const vref *x = a, *y = b;
    uint64_t lx, ly;
    const char *px = fds__val_str(x->f, x->v, &lx);
    const char *py = fds__val_str(y->f, y->v, &ly);
    return fds__bytes_cmp(px, (size_t)lx, py, (size_t)ly);
}

/*
 * The value ids of text field k (sidx_format.h), after its presence
 * bitset: the values of the inputs' tables that live docs hold, ranked by
 * bytes -- all of them when every input's table is complete (or the input
 * has no long value) and they repeat (FDS_SIDX_VALS_DENSE), else those two
 * live docs hold -- as a column of ids (the table's offset first) and the
 * table.  Sets FDS_SIDX_F_VALUES and *bits (the column's width) unless no
 * input has a long value.  With complete inputs this is what the writer
 * writes for the same live docs; a long value no input gave an id (held
 * once in each of two sparse tables) has none after the merge either.
 */
static int write_values(merger *g, size_t k, unsigned *bits)
{
    mfield *mf = &g->fs[k];
    uint32_t md = g->max_doc;
    uint32_t **cnt = calloc(g->nin, sizeof *cnt);
    size_t nr = 0;
    bool complete = true, any = false;
    int rc = cnt ? 0 : FDS_ENOMEM;
    for (unsigned i = 0; i < g->nin && !rc; i++) {
        const fds_sfield *f = mf->in[i];
        if (!f || !(f->flags & FDS_SIDX_F_VALUES))
            continue; /* no long value */
        any = true;
        complete &= f->vcomplete;
        if (!f->nvals)
            continue;
        if (!(cnt[i] = calloc(f->nvals, sizeof **cnt))) {
            rc = FDS_ENOMEM;
            break;
        }
        for (uint32_t d = 0; d < g->in[i].s->max_doc; d++) {
            uint32_t v = in_live(&g->in[i], d) ? fds__val_id(f, d)
                                               : FDS_SIDX_NO_ORD;
            if (v != FDS_SIDX_NO_ORD && !cnt[i][v]++)
                nr++;
        }
    }
    *bits = 0;
    vref *r = rc || !nr ? NULL : malloc(nr * sizeof *r);
    if (!rc && nr && !r)
        rc = FDS_ENOMEM;
    size_t n = 0;
    for (unsigned i = 0; i < g->nin && r; i++)
        for (uint32_t v = 0; cnt[i] && v < mf->in[i]->nvals; v++)
            if (cnt[i][v])
                r[n++] = (vref){mf->in[i], i, v};
    if (r)
        qsort(r, n, sizeof *r, vref_cmp);
    /* equal strings are neighbours: a group per string (its first
     * element's gd, the group's live docs; 0 elsewhere) */
    uint64_t docs = 0, *gd = r ? calloc(n, sizeof *gd) : NULL;
    uint32_t distinct = 0;
    if (r && !gd)
        rc = FDS_ENOMEM;
    for (size_t a = 0, b; gd && a < n; a = b, distinct++) {
        for (b = a; b < n && (b == a || !vref_cmp(&r[a], &r[b])); b++)
            gd[a] += cnt[r[b].in][r[b].v];
        docs += gd[a];
    }
    bool dense = complete && FDS_SIDX_VALS_DENSE(distinct, docs);
    uint64_t min = dense ? 1 : 2;
    if (rc || !any || (complete && !docs)) { /* no live doc has one */
        for (unsigned i = 0; cnt && i < g->nin; i++)
            free(cnt[i]);
        free(cnt);
        free(r);
        free(gd);
        return rc;
    }
    /* each group's rank + 1 in place of each input's count (0: no id) */
    uint32_t nv = 0;
    uint64_t total = 0;
    for (size_t a = 0, b; a < n; a = b) {
        uint32_t id = gd[a] >= min ? nv + 1 : 0;
        for (b = a; b < n && (b == a || !gd[b]); b++)
            cnt[r[b].in][r[b].v] = id;
        if (id) { /* one of the group stands for it in the table */
            uint64_t len;
            fds__val_str(r[a].f, r[a].v, &len);
            total += len;
            r[nv++] = r[a];
        }
    }
    free(gd);
    while (*bits < 32 && ((uint64_t)1 << *bits) <= nv)
        (*bits)++;
    size_t cl = 8 + (size_t)FDS_SIDX_ORD_BYTES(md, *bits);
    uint8_t *col = calloc(cl, 1);
    if (!col)
        rc = FDS_ENOMEM;
    for (mit it = {0}; !rc && *bits && mit_next(g, &it);) {
        const fds_sfield *f = mf->in[it.i];
        uint32_t v = f && cnt[it.i] ? fds__val_id(f, it.d) : FDS_SIDX_NO_ORD;
        if (v != FDS_SIDX_NO_ORD && cnt[it.i][v])
            fds__bits_put(col + 8, (uint64_t)in_doc(&g->in[it.i], it.d) * *bits,
                          *bits, cnt[it.i][v]);
    }
    if (!rc) {
        uint64_t at = (g->o.pos + cl + 7) & ~(uint64_t)7;
        fds__put_u64(col, at);
        mo_put(&g->o, col, cl);
        mo_align(&g->o);
        mo_u32(&g->o, nv);
        mo_u32(&g->o, dense ? FDS_SIDX_VALS_COMPLETE : 0);
        uint8_t b8[8];
        uint64_t off = 0;
        for (uint32_t x = 0; x <= nv; x++) {
            uint64_t len = 0;
            if (x < nv)
                fds__val_str(r[x].f, r[x].v, &len);
            fds__put_u64(b8, x < nv ? off : total);
            mo_put(&g->o, b8, 8);
            off += len;
        }
        for (uint32_t x = 0; x < nv; x++) {
            uint64_t len;
            const char *p = fds__val_str(r[x].f, r[x].v, &len);
            mo_put(&g->o, p, (size_t)len);
        }
        mf->flags |= FDS_SIDX_F_VALUES;
    }
    free(col);
    for (unsigned i = 0; cnt && i < g->nin; i++)
        free(cnt[i]);
    free(cnt);
    free(r);
    return rc;
}

/* The packed layout of double field mf's merged column: the plan of its
 * live values, as the writer makes it for the same docs.  0 or
 * FDS_ENOMEM. */
static int dbl_plan(merger *g, const mfield *mf, fds__dcol *plan)
{
    double *v = malloc(((size_t)g->max_doc + 1) * sizeof *v);
    if (!v)
        return FDS_ENOMEM;
    size_t n = 0;
    for (mit it = {0}; mit_next(g, &it);) {
        const fds_sfield *f = mf->in[it.i];
        if (f && fds__bit(f->present, it.d))
            v[n++] = fds__col_f64(f, it.d);
    }
    fds__dcol_plan(v, n, plan);
    free(v);
    return 0;
}

/* Norms (text), presence bitset and column of field k, in output doc
 * order; counts the docs with terms into *doc_count. */
int fds__merge_write_columns(merger *g, size_t k, uint32_t *const *ordmap,
                             uint32_t nt, uint64_t *norms_off,
                             uint64_t *col_off,
                             unsigned *ord_bits, unsigned *num_bits,
                             uint32_t *doc_count)
{
    mfield *mf = &g->fs[k];
    uint32_t md = g->max_doc;
    *doc_count = 0;
    *norms_off = 0;
    *ord_bits = *num_bits = 0;
    if (mf->kind == FDS_FT_TEXT) {
        mo_align(&g->o);
        *norms_off = g->o.pos;
        for (mit it = {0}; mit_next(g, &it);) {
            const fds_sfield *f = mf->in[it.i];
            uint8_t nb = f && f->norms ? f->norms[it.d] : 0;
            *doc_count += nb != 0;
            mo_put(&g->o, &nb, 1);
        }
    }
    mo_align(&g->o);
    *col_off = g->o.pos;
    size_t words = ((size_t)md + 63) / 64;
    uint8_t *pres = calloc(words ? words : 1, 8);
    if (!pres)
        return FDS_ENOMEM;
    int64_t lo = 0, hi = 0;
    bool first = true;
    for (mit it = {0}; mit_next(g, &it);) {
        const fds_sfield *f = mf->in[it.i];
        if (!f || !fds__bit(f->present, it.d))
            continue;
        uint32_t o = in_doc(&g->in[it.i], it.d);
        pres[o >> 3] |= (uint8_t)(1u << (o & 7));
        if (f->flags & FDS_SIDX_F_NUMCOL && mf->kind != FDS_FT_DOUBLE) {
            int64_t v = fds__col_i64(f, it.d);
            lo = first || v < lo ? v : lo;
            hi = first || v > hi ? v : hi;
            first = false;
        }
    }
    mo_put(&g->o, pres, words * 8); /* u64 words LSB first = the byte order */
    uint8_t *col = NULL;
    size_t cl = 0;
    int rc = 0;
    if (mf->kind == FDS_FT_KEYWORD) {
        while (*ord_bits < 32 && ((uint64_t)1 << *ord_bits) <= nt)
            (*ord_bits)++;
        cl = (size_t)FDS_SIDX_ORD_BYTES(md, *ord_bits);
        if (!(col = calloc(cl, 1)))
            rc = FDS_ENOMEM;
        for (mit it = {0}; !rc && mit_next(g, &it);) {
            const fds_sfield *f = mf->in[it.i];
            uint32_t o = f ? fds__col_ord(f, it.d) : FDS_SIDX_NO_ORD;
            if (o == FDS_SIDX_NO_ORD)
                continue;
            (*doc_count)++;
            if (*ord_bits)
                fds__bits_put(col, (uint64_t)in_doc(&g->in[it.i], it.d) * *ord_bits,
                              *ord_bits, (uint64_t)ordmap[it.i][o] + 1);
        }
    } else if (mf->kind != FDS_FT_TEXT) {
        bool dbl = mf->kind == FDS_FT_DOUBLE;
        uint64_t span = (uint64_t)hi - (uint64_t)lo;
        fds__dcol plan = {.bits = FDS_SIDX_NUM_RAW};
        if (dbl) /* the writer's plan for the live values (sidx_dcol.c) */
            rc = dbl_plan(g, mf, &plan);
        *num_bits = dbl ? plan.bits : fds__bit_width(span);
        if (*num_bits > FDS_SIDX_NUM_PACK_MAX)
            *num_bits = FDS_SIDX_NUM_RAW;
        bool raw = *num_bits == FDS_SIDX_NUM_RAW;
        size_t hdr = raw ? 0 : dbl ? 16 : 8; /* min, and a double's scale */
        cl = raw ? (size_t)md * 8 : hdr + (size_t)FDS_SIDX_ORD_BYTES(md, *num_bits);
        if (!rc && !(col = calloc(cl, 1)))
            rc = FDS_ENOMEM;
        if (dbl)
            lo = plan.min;
        if (!rc && !raw)
            fds__put_u64(col, (uint64_t)lo);
        if (!rc && !raw && dbl)
            fds__put_u64(col + 8, plan.scale);
        for (mit it = {0}; !rc && mit_next(g, &it);) {
            const fds_sfield *f = mf->in[it.i];
            if (!f || !fds__bit(f->present, it.d))
                continue;
            uint32_t o = in_doc(&g->in[it.i], it.d);
            uint64_t v = (uint64_t)fds__col_i64(f, it.d);
            if (dbl) { /* the double, raw or as its m */
                double x = fds__col_f64(f, it.d);
                int64_t m = lo;
                if (raw) {
                    memcpy(&v, &x, 8);
                } else {
                    fds__dcol_int(x, plan.scale, &m);
                    v = (uint64_t)m;
                }
            }
            if (raw)
                fds__put_u64(col + (size_t)o * 8, v);
            else if (*num_bits)
                fds__bits_put(col + hdr, (uint64_t)o * *num_bits, *num_bits,
                              v - (uint64_t)lo);
        }
    }
    if (!rc && col)
        mo_put(&g->o, col, cl);
    free(col);
    free(pres);
    if (!rc && mf->kind == FDS_FT_TEXT && (mf->flags & FDS_SIDX_F_SINGLE) &&
        mf->vals_ok)
        rc = write_values(g, k, ord_bits);
    return rc;
}
