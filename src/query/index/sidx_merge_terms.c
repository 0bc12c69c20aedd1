/*
 * sidx_merge_terms.c: the term-dictionary merge -- the inputs' sorted term
 * dictionaries walked in step through a min-heap of cursors (Lucene's
 * MultiTermsEnum): once over every field for the shared string pool, then
 * field by field for each term's postings (sidx_merge_postings.c) and the
 * bit-packed dictionary and positions table of the output.
 */
#include <stdlib.h>
#include <string.h>

#include "index/sidx_merge_int.h"

/* ---- a min-heap of term cursors ---------------------------------------------- */

static bool tc_less(const tcur *a, const tcur *b)
{
    int c = fds__bytes_cmp(a->str, a->len, b->str, b->len);
    if (c)
        return c < 0;
    return a->field != b->field ? a->field < b->field : a->input < b->input;
}

static void heap_down(tcur *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && tc_less(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && tc_less(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        tcur t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void heap_make(tcur *h, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        heap_down(h, n, i);
}

/* Advance the top cursor to its next term, or drop it.  Returns the new
 * heap size. */
static size_t heap_next(tcur *h, size_t n, const mfield *fs)
{
    tcur *t = &h[0];
    const fds_sfield *f = fs[t->field].in[t->input];
    if (++t->ord < f->nterms) {
        t->str = fds__sidx_term_str(f, t->ord, &t->len);
    } else {
        h[0] = h[--n];
    }
    heap_down(h, n, 0);
    return n;
}

/* Push the first term of (field, input) lists with terms into h. */
static size_t heap_fill(tcur *h, const mfield *fs, size_t f0, size_t f1,
                        unsigned nin)
{
    size_t n = 0;
    for (size_t f = f0; f < f1; f++)
        for (unsigned i = 0; i < nin; i++) {
            const fds_sfield *sf = fs[f].in[i];
            if (!sf || !sf->nterms)
                continue;
            h[n] = (tcur){(uint32_t)f, i, 0, NULL, 0};
            h[n].str = fds__sidx_term_str(sf, 0, &h[n].len);
            n++;
        }
    heap_make(h, n);
    return n;
}

/* Does term (f, ord) of input m have a live doc?  (Decodes only until it
 * finds one; an input without deletes answers at once.) */
static bool term_live(const min *m, const fds_sfield *f, uint32_t ord)
{
    if (!m->live)
        return true;
    fds_sterm t;
    fds__sidx_term_at(m->s, f, ord, &t);
    if (!t.skip)
        return in_live(m, t.one_doc);
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK], base = 0;
    for (uint32_t b = 0; b < t.nblocks; b++) {
        const uint8_t *sk = t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        unsigned n = (unsigned)sk[13] + 1;
        if (fds_postings_decode_block(fds__skip_block(&t, sk), t.end, n,
                                      base, m->s->max_doc, docs, tfs) < 0)
            return true; /* the postings pass reports it */
        for (unsigned i = 0; i < n; i++)
            if (in_live(m, docs[i]))
                return true;
        base = fds__get_u32(sk) + 1;
    }
    return false;
}

void fds__merge_write_strings(merger *g)
{
    size_t n = heap_fill(g->heap, g->fs, 0, g->nf, g->nin);
    const char *last = NULL;
    uint32_t last_len = 0;
    uint64_t last_off = 0, seen = 0;
    while (n && !g->o.rc) {
        tcur *t = &g->heap[0];
        uint64_t so = MERGE_NO_STR;
        if (term_live(&g->in[t->input], g->fs[t->field].in[t->input], t->ord)) {
            if (!last || fds__bytes_cmp(t->str, t->len, last, last_len)) {
                last = t->str;
                last_len = t->len;
                last_off = g->o.pos;
                mo_put(&g->o, t->str, t->len);
            }
            so = last_off;
        }
        g->fs[t->field].so[t->input][t->ord] = so;
        n = heap_next(g->heap, n, g->fs);
        if (++seen % MERGE_DROP_TERMS == 0)
            drop_input_pages(g);
    }
}

/* Terms and postings of field k, then its bit-packed dictionary; keyword
 * fields get each input ordinal's output ordinal in ordmap[input]. */
int fds__merge_write_terms(merger *g, size_t k, uint32_t **ordmap, uint32_t *nt,
                           uint64_t *sum_ttf, uint64_t *terms_off)
{
    mfield *mf = &g->fs[k];
    bool pos = (mf->flags & FDS_SIDX_F_POS) != 0;
    uint64_t max_pos = 0;
    size_t n = heap_fill(g->heap, g->fs, k, k + 1, g->nin);
    uint64_t max_so = 0, max_sl = 0, max_df = 0, max_ptr = 0, seen = 0;
    g->ne = 0;
    *sum_ttf = 0;
    int rc = 0;
    while (n && !rc && !g->o.rc) {
        /* every input holding this term (at most once each), in input
         * (= doc) order: the heap breaks ties by input */
        tcur *grp = g->grp;
        unsigned ng = 0;
        const char *str = g->heap[0].str;
        uint32_t len = g->heap[0].len;
        tacc a = {.min_norm = 255};
        g->plen = g->nskip = 0;
        g->poslen = g->nposblk = 0;
        while (n && !fds__bytes_cmp(g->heap[0].str, g->heap[0].len, str, len)) {
            grp[ng++] = g->heap[0];
            n = heap_next(g->heap, n, g->fs);
        }
        for (unsigned i = 0; i < ng && !rc; i++)
            rc = fds__merge_copy_postings(g, &g->in[grp[i].input], mf->in[grp[i].input],
                               grp[i].ord, &a, pos);
        if (++seen % MERGE_DROP_TERMS == 0)
            drop_input_pages(g);
        if (!rc)
            rc = fds__merge_acc_flush(g, &a);
        if (rc || !a.df)
            continue; /* every doc of the term deleted: no entry */
        for (unsigned i = 0; ordmap && i < ng; i++)
            ordmap[grp[i].input][grp[i].ord] = (uint32_t)g->ne;
        uint64_t ptr, po = 0;
        if (pos) { /* where the writer puts them: before the postings */
            po = g->o.pos;
            for (size_t b = 0; b < g->nposblk; b++)
                mo_u32(&g->o, g->posblk[b]);
            mo_put(&g->o, g->posb, g->poslen);
            max_pos = po > max_pos ? po : max_pos;
        }
        if (a.df == 1 && a.first_tf == 1) {
            ptr = (uint64_t)a.first_doc << 1 | 1;
        } else {
            ptr = g->o.pos << 1;
            mo_put(&g->o, g->skips, g->nskip * FDS_SIDX_SKIP_LEN);
            mo_put(&g->o, g->pbuf, g->plen);
        }
        if (fds__grow((void **)&g->ents, &g->ecap, g->ne + 1, sizeof *g->ents)) {
            rc = FDS_ENOMEM;
            break;
        }
        uint64_t so = MERGE_NO_STR;
        for (unsigned i = 0; i < ng && so == MERGE_NO_STR; i++)
            so = mf->so[grp[i].input][grp[i].ord];
        if (so == MERGE_NO_STR) { /* live postings, yet judged dead */
            rc = FDS_ECORRUPT;
            break;
        }
        g->ents[g->ne++] = (struct ment){so, ptr, po, len, a.df};
        max_so = so > max_so ? so : max_so;
        max_sl = len > max_sl ? len : max_sl;
        max_df = a.df - 1 > max_df ? a.df - 1 : max_df;
        max_ptr = ptr > max_ptr ? ptr : max_ptr;
        *sum_ttf += a.ttf;
    }
    if (rc)
        return rc;
    unsigned w[4] = {fds__bit_width(max_so), fds__bit_width(max_sl),
                     fds__bit_width(max_df), fds__bit_width(max_ptr)};
    unsigned W = w[0] + w[1] + w[2] + w[3];
    size_t dl = (size_t)FDS_SIDX_DICT_BYTES(g->ne, W);
    uint8_t *d = calloc(dl, 1);
    if (!d)
        return FDS_ENOMEM;
    for (int j = 0; j < 4; j++)
        d[j] = (uint8_t)w[j];
    uint64_t bit = 0;
    for (size_t i = 0; i < g->ne; i++) {
        const struct ment *e = &g->ents[i];
        uint64_t v[4] = {e->so, e->sl, e->df - 1u, e->ptr};
        for (int j = 0; j < 4; j++) {
            fds__bits_put(d + FDS_SIDX_DICT_HDR, bit, w[j], v[j]);
            bit += w[j];
        }
    }
    mo_align(&g->o);
    *terms_off = g->o.pos;
    mo_put(&g->o, d, dl);
    free(d);
    *nt = (uint32_t)g->ne;
    if (!pos)
        return 0;
    unsigned wp = fds__bit_width(max_pos);
    size_t pl = (size_t)FDS_SIDX_POS_TABLE_BYTES(g->ne, wp);
    uint8_t *pt = calloc(pl, 1);
    if (!pt)
        return FDS_ENOMEM;
    pt[0] = (uint8_t)wp;
    for (size_t i = 0; i < g->ne; i++)
        fds__bits_put(pt + FDS_SIDX_POS_HDR, (uint64_t)i * wp, wp, g->ents[i].pos);
    mo_align(&g->o);
    g->pos_dir[k] = g->o.pos;
    mo_put(&g->o, pt, pl);
    free(pt);
    return 0;
}
