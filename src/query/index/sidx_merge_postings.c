/*
 * sidx_merge_postings.c: one term's postings copied from the inputs into
 * the output: each input posting decoded block by block, deleted docs
 * dropped, doc ids remapped, re-encoded as the writer encodes them (128-doc
 * blocks, skip entries, impacts), and each live doc's positions copied as
 * they are (their bytes do not depend on where the doc sits, positions.h).
 */
#include <string.h>

#include "index/positions.h"
#include "index/sidx_merge_int.h"

int fds__merge_acc_flush(merger *g, tacc *a)
{
    if (!a->n)
        return 0;
    if (fds__grow((void **)&g->pbuf, &g->pcap,
                  g->plen + FDS_SIDX_IMPACTS_BYTES_MAX +
                      FDS_POSTINGS_BLOCK_BOUND(a->n), 1) ||
        fds__grow((void **)&g->skips, &g->skipcap,
                  (g->nskip + 1) * FDS_SIDX_SKIP_LEN, 1))
        return FDS_ENOMEM;
    /* as the writer lays a block out: its impacts, then the block */
    size_t at = g->plen;
    size_t ilen = fds__sidx_impacts(a->tfs, a->nbs, a->n, g->pbuf + at);
    g->plen += ilen;
    g->plen += fds_postings_encode_block(a->docs, a->tfs, a->n, a->base,
                                         g->pbuf + g->plen);
    uint8_t *s = g->skips + g->nskip++ * FDS_SIDX_SKIP_LEN;
    memset(s, 0, FDS_SIDX_SKIP_LEN);
    fds__put_u32(s, a->docs[a->n - 1]);
    fds__put_u32(s + 4, (uint32_t)at);
    fds__put_u32(s + 8, a->max_tf);
    s[12] = a->min_norm;
    s[13] = (uint8_t)(a->n - 1);
    s[14] = (uint8_t)ilen;
    s[15] = (uint8_t)(ilen >> 8);
    a->base = a->docs[a->n - 1] + 1;
    a->n = 0;
    a->max_tf = 0;
    a->min_norm = 255;
    return 0;
}

static int acc_add(merger *g, tacc *a, uint32_t doc, uint32_t tf, uint8_t norm)
{
    if (!a->df) {
        a->first_doc = doc;
        a->first_tf = tf;
    }
    a->docs[a->n] = doc;
    a->tfs[a->n] = tf;
    a->nbs[a->n] = norm;
    a->max_tf = tf > a->max_tf ? tf : a->max_tf;
    a->min_norm = norm < a->min_norm ? norm : a->min_norm;
    a->df++;
    a->ttf += tf;
    return ++a->n == FDS_POSTINGS_BLOCK ? fds__merge_acc_flush(g, a) : 0;
}

/* The positions of one posting with term frequency tf at *pp (bounded by
 * end; *pp moves past them) appended to the term's output positions when
 * `keep`, noting a new block's start when a is at one.  0, FDS_ECORRUPT,
 * FDS_ENOMEM. */
static int copy_doc_positions(merger *g, const tacc *a, const uint8_t **pp,
                              const uint8_t *end, uint32_t tf, bool keep)
{
    long k = fds_positions_decode(*pp, end, tf, NULL);
    if (k < 0)
        return FDS_ECORRUPT;
    if (keep) {
        if (!a->n && a->df) {
            if (fds__grow((void **)&g->posblk, &g->posblkcap, g->nposblk + 1,
                          sizeof *g->posblk))
                return FDS_ENOMEM;
            if (g->poslen > UINT32_MAX)
                return FDS_ETOOBIG;
            g->posblk[g->nposblk++] = (uint32_t)g->poslen;
        }
        if (fds__grow((void **)&g->posb, &g->poscap, g->poslen + (size_t)k, 1))
            return FDS_ENOMEM;
        memcpy(g->posb + g->poslen, *pp, (size_t)k);
        g->poslen += (size_t)k;
    }
    *pp += k;
    return 0;
}

/* The live postings of input term (f, ord) of input m, remapped, into a;
 * with their positions when `pos`. */
int fds__merge_copy_postings(merger *g, const min *m, const fds_sfield *f,
                             uint32_t ord, tacc *a, bool pos)
{
    fds_sterm t;
    fds__sidx_term_at(m->s, f, ord, &t);
    const uint8_t *pp = NULL, *pend = m->s->map + m->s->len - FDS_SIDX_FOOTER_LEN;
    const uint8_t *p0 = NULL;
    if (pos) {
        p0 = fds__sidx_term_pos(m->s, f, ord);
        pp = p0 += (size_t)(t.nblocks - 1) * 4;
    }
    if (!t.skip) {
        if (in_live(m, t.one_doc)) {
            int rc = pos ? copy_doc_positions(g, a, &pp, pend, 1, true) : 0;
            return rc ? rc
                      : acc_add(g, a, in_doc(m, t.one_doc), t.one_tf,
                                f->norms ? f->norms[t.one_doc] : 1);
        }
        return 0;
    }
    uint32_t docs[FDS_POSTINGS_BLOCK], tfs[FDS_POSTINGS_BLOCK];
    uint32_t base = 0;
    for (uint32_t b = 0; b < t.nblocks; b++) {
        const uint8_t *sk = t.skip + (size_t)b * FDS_SIDX_SKIP_LEN;
        unsigned n = (unsigned)sk[13] + 1;
        long k = fds_postings_decode_block(fds__skip_block(&t, sk), t.end,
                                           n, base, m->s->max_doc, docs, tfs);
        if (k < 0)
            return FDS_ECORRUPT;
        if (pos && b) {
            uint32_t bo = fds__get_u32(p0 - (size_t)(t.nblocks - 1) * 4 +
                                       (size_t)(b - 1) * 4);
            if (bo > (size_t)(pend - p0))
                return FDS_ECORRUPT;
            pp = p0 + bo;
        }
        for (unsigned i = 0; i < n; i++) {
            bool live = in_live(m, docs[i]);
            int rc = pos ? copy_doc_positions(g, a, &pp, pend, tfs[i], live) : 0;
            if (!rc && live)
                rc = acc_add(g, a, in_doc(m, docs[i]), tfs[i],
                             f->norms ? f->norms[docs[i]] : 1);
            if (rc)
                return rc;
        }
        base = fds__get_u32(sk) + 1;
    }
    return 0;
}
