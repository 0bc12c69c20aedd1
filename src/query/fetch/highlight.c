/*
 * highlight.c: `highlight` of the search body per hit -- the fields'
 * `_source` values re-analysed, the tokens the query's terms match marked
 * and fragments cut around them (highlight.h says how, and where each
 * choice comes from).  The fields and their options were resolved when
 * the body was parsed (dsl/dsl_highlight.c, ast/highlight_tree.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mapping/analysis.h"
#include "query_int.h"
#include "exec/search_int.h"
#include "fds_text.h"
#include "fetch/highlight.h"
#include "index/term_pat.h"

/* Passages considered per value before the best are kept. */
#define HL_MAX_PASSAGES 4096
/* Bytes of a fuzzy term the highlighter compares (longer: no mark). */
#define HL_FUZZY_MAX 64

/* ---- fragments ------------------------------------------------------------ */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Start of the sentence holding position p (after ". ", "! ", "? ", a new
 * line), as Java's sentence BreakIterator finds it for plain text. */
static size_t sentence_start(const char *t, size_t p)
{
    while (p > 0) {
        char c = t[p - 1];
        if (c == '\n' ||
            (p >= 2 && is_space(c) &&
             (t[p - 2] == '.' || t[p - 2] == '!' || t[p - 2] == '?')))
            return p;
        p--;
    }
    return 0;
}

/* End of the sentence holding position p (exclusive). */
static size_t sentence_end(const char *t, size_t n, size_t p)
{
    for (; p < n; p++) {
        if (t[p] == '\n')
            return p;
        if ((t[p] == '.' || t[p] == '!' || t[p] == '?') &&
            (p + 1 == n || is_space(t[p + 1])))
            return p + 1;
    }
    return n;
}

/* The next word boundary at or after p (a space or the end), never inside
 * a UTF-8 sequence. */
static size_t word_end(const char *t, size_t n, size_t p)
{
    while (p < n && !is_space(t[p]))
        p++;
    return p;
}

static size_t word_start(const char *t, size_t p)
{
    while (p > 0 && !is_space(t[p - 1]))
        p--;
    return p;
}

/* Lucene's SimpleHTMLEncoder when html, else the bytes as they are. */
static void put_text(fds_strbuf *b, const char *s, size_t n, bool html)
{
    if (!html) {
        fds_strbuf_put(b, s, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '"': fds_strbuf_puts(b, "&quot;"); break;
        case '&': fds_strbuf_puts(b, "&amp;"); break;
        case '<': fds_strbuf_puts(b, "&lt;"); break;
        case '>': fds_strbuf_puts(b, "&gt;"); break;
        case '\'': fds_strbuf_puts(b, "&#x27;"); break;
        case '/': fds_strbuf_puts(b, "&#x2F;"); break;
        default: fds_strbuf_putc(b, s[i]);
        }
    }
}

typedef struct passage {
    size_t start, end;
    size_t m0, m1; /* marks [m0, m1) */
    double score;
} passage;

/* One passage formatted as DefaultPassageFormatter does, trimmed, as a
 * JSON string into b. */
static void put_passage(const char *t, const passage *p, const fds_hl_mark *m,
                        const fds_hl_frag_opts *o, fds_strbuf *b)
{
    size_t s = p->start, e = p->end;
    while (s < e && is_space(t[s]))
        s++;
    while (e > s && is_space(t[e - 1]))
        e--;
    fds_strbuf f = {0};
    size_t pos = s;
    for (size_t i = p->m0; i < p->m1; i++) {
        if (m[i].start < pos)
            continue;
        put_text(&f, t + pos, m[i].start - pos, o->html);
        fds_strbuf_puts(&f, o->pre);
        put_text(&f, t + m[i].start, m[i].end - m[i].start, o->html);
        fds_strbuf_puts(&f, o->post);
        pos = m[i].end;
    }
    if (pos < e)
        put_text(&f, t + pos, e - pos, o->html);
    fds_strbuf_put_json_string(b, f.p ? f.p : "", f.len);
    if (f.oom)
        b->oom = true;
    fds_strbuf_free(&f);
}

/* Distinct marked tokens (case-insensitively) of marks [m0, m1), plus a
 * little for each repetition: PassageScorer's reward of distinct terms
 * and, less, of frequency. */
static double passage_score(const char *t, const fds_hl_mark *m, size_t m0,
                            size_t m1)
{
    double s = 0;
    for (size_t i = m0; i < m1; i++) {
        bool seen = false;
        size_t li = m[i].end - m[i].start;
        for (size_t j = m0; j < i && !seen; j++)
            seen = m[j].end - m[j].start == li &&
                   !strncasecmp(t + m[j].start, t + m[i].start, li);
        s += seen ? 0.1 : 1.0;
    }
    return s;
}

static int by_score(const void *a, const void *b)
{
    const passage *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int by_start(const void *a, const void *b)
{
    const passage *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int fds_hl_fragments(const char *t, size_t n, const fds_hl_mark *m, size_t nm,
                     const fds_hl_frag_opts *o, fds_strbuf *b)
{
    if (nm == 0) {
        if (o->no_match_size == 0 || n == 0)
            return 0;
        size_t e = n;
        if (n > o->no_match_size) {
            e = word_start(t, o->no_match_size);
            if (e == 0)
                for (e = o->no_match_size; e > 0 && (t[e] & 0xC0) == 0x80; e--)
                    ;
        }
        passage p = {0, e, 0, 0, 0};
        put_passage(t, &p, m, o, b);
        return 1;
    }
    if (o->number_of_fragments == 0) {
        passage p = {0, n, 0, nm, 0};
        put_passage(t, &p, m, o, b);
        return 1;
    }
    passage *ps = malloc(HL_MAX_PASSAGES * sizeof *ps);
    if (!ps) {
        b->oom = true;
        return 0;
    }
    size_t np = 0, fs = o->fragment_size ? o->fragment_size : 1;
    for (size_t i = 0; i < nm && np < HL_MAX_PASSAGES;) {
        size_t start = m[i].start;
        if (o->scanner == FDS_HL_SENTENCE) {
            size_t ss = sentence_start(t, start);
            if (m[i].end - ss <= fs)
                start = ss;
        } else {
            start = word_start(t, start);
        }
        size_t limit = start + fs;
        size_t j = i + 1;
        while (j < nm && m[j].end <= limit)
            j++;
        size_t end = m[j - 1].end;
        if (o->scanner == FDS_HL_SENTENCE) {
            size_t se = sentence_end(t, n, end);
            end = se <= limit ? se : word_end(t, n, limit < n ? limit : n);
        } else if (o->scanner == FDS_HL_WORD) {
            end = word_end(t, n, limit < n ? limit : n);
        } else {
            end = limit < n ? limit : n;
            while (end < n && (t[end] & 0xC0) == 0x80)
                end++;
        }
        if (end < m[j - 1].end)
            end = m[j - 1].end;
        /* a later mark the cut end reaches into belongs to this passage */
        while (j < nm && m[j].start < end) {
            if (m[j].end > end)
                end = m[j].end;
            j++;
        }
        ps[np].start = start;
        ps[np].end = end;
        ps[np].m0 = i;
        ps[np].m1 = j;
        ps[np].score = passage_score(t, m, i, j);
        np++;
        i = j;
    }
    qsort(ps, np, sizeof *ps, by_score);
    size_t k = (size_t)o->number_of_fragments < np
                   ? (size_t)o->number_of_fragments : np;
    if (!o->order_score)
        qsort(ps, k, sizeof *ps, by_start);
    for (size_t i = 0; i < k; i++) {
        if (i)
            fds_strbuf_putc(b, ',');
        put_passage(t, &ps[i], m, o, b);
    }
    free(ps);
    return (int)k;
}

/* ---- the query's terms ----------------------------------------------------- */

/* Levenshtein (with transpositions when asked) distance of a and b, at
 * most max + 1. */
/* Does token s[0..n) match vals[i] of phrase q (a prefix of it for the
 * last position of a phrase_prefix not expanded)? */
static bool phrase_term(const fds_query *q, size_t i, const char *s, size_t n)
{
    return q->phrase_prefix && i + 1 == q->npos
               ? n >= q->val_lens[i] && !memcmp(q->vals[i], s, q->val_lens[i])
               : q->val_lens[i] == n && !memcmp(q->vals[i], s, n);
}

static int edit_distance(const char *a, size_t an, const char *b, size_t bn,
                         bool transp, int max)
{
    if (an > HL_FUZZY_MAX || bn > HL_FUZZY_MAX)
        return max + 1;
    int d[HL_FUZZY_MAX + 1][HL_FUZZY_MAX + 1];
    for (size_t i = 0; i <= an; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= bn; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= an; i++)
        for (size_t j = 1; j <= bn; j++) {
            int c = a[i - 1] != b[j - 1];
            int v = d[i - 1][j - 1] + c;
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (transp && i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[an][bn];
}

/* fn(leaf, arg) for each leaf of q that can mark, in order: the clauses
 * of a bool (not its must_not), dis_max, constant_score and a boosting's
 * positive, recursively.  Stops at fn's first non-zero return and
 * returns it; 0 when every call returned 0 (or q is NULL). */
static int each_leaf(const fds_query *q, int (*fn)(const fds_query *, void *),
                     void *arg)
{
    if (!q)
        return 0;
    if (q->type != FDS_Q_BOOL && q->type != FDS_Q_CONST &&
        q->type != FDS_Q_DISMAX && q->type != FDS_Q_BOOSTING)
        return fn(q, arg);
    fds_query *const *l[3] = {q->must, q->should, q->filter};
    size_t c[3] = {q->nmust, q->type == FDS_Q_BOOSTING ? 0 : q->nshould,
                   q->nfilter};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < c[k]; i++) {
            int rc = each_leaf(l[k][i], fn, arg);
            if (rc)
                return rc;
        }
    return 0;
}

/* A token of field `path` (any field when !require), for leaf_matches. */
typedef struct tok_q {
    const char *path;
    bool require;
    const char *s;
    size_t n;
} tok_q;

static bool leaf_matches(const fds_query *q, const char *path, bool require,
                         const char *s, size_t n);

static int leaf_matches_cb(const fds_query *q, void *arg)
{
    const tok_q *t = arg;
    return leaf_matches(q, t->path, t->require, t->s, t->n);
}

/* Does token s[0..n) of field `path` match a term of q?  A phrase of
 * slop 0 does not count here (its matches are whole sequences:
 * phrase_marks); one with slop marks each of its terms wherever it is. */
static bool q_matches(const fds_query *q, const char *path, bool require,
                      const char *s, size_t n)
{
    tok_q t = {path, require, s, n};
    return each_leaf(q, leaf_matches_cb, &t) != 0;
}

/* leaf_matches for one leaf q. */
static bool leaf_matches(const fds_query *q, const char *path, bool require,
                         const char *s, size_t n)
{
    if (!q->field || (require && strcmp(q->field, path)))
        return false;
    switch (q->type) {
    case FDS_Q_TERM:
        return q->term_len == n && !memcmp(q->term, s, n);
    case FDS_Q_TERMS:
        for (size_t i = 0; i < q->nvals; i++)
            if (q->val_lens[i] == n && !memcmp(q->vals[i], s, n))
                return true;
        return false;
    case FDS_Q_PATTERN:
        return q->pat && fds__term_pat_match(q->pat, s, n);
    case FDS_Q_PHRASE: /* sloppy: each term of the phrase, wherever it is */
        for (size_t i = 0; q->slop && i < q->nvals; i++)
            if (phrase_term(q, i, s, n))
                return true;
        return false;
    case FDS_Q_FUZZY: {
        if ((size_t)q->fz_prefix > n || q->term_len < (size_t)q->fz_prefix ||
            memcmp(q->term, s, (size_t)q->fz_prefix))
            return false;
        int e = q->fz_edits;
        if (e < 0) {
            size_t cps = 0;
            for (size_t i = 0; i < q->term_len; i++)
                cps += (q->term[i] & 0xC0) != 0x80;
            e = cps < (size_t)q->fz_lo ? 0 : cps < (size_t)q->fz_hi ? 1 : 2;
        }
        return edit_distance(q->term, q->term_len, s, n, q->fz_transp, e) <= e;
    }
    default:
        return false;
    }
}

/* ---- per hit ---------------------------------------------------------------- */

typedef struct hl_val {
    char *s;
    size_t n;
} hl_val;

typedef struct hl_scan {
    const fds_highlight *h;
    hl_val *v;     /* values, per field: vals[f * cap ...] flattened */
    size_t nv, cap;
    size_t *field; /* the field of each value */
    bool oom;
} hl_scan;

static int scan_cb(void *arg, const fds_jval *v, fds_err *err)
{
    (void)err;
    hl_scan *sc = arg;
    if (v->kind != FDS_JV_STRING)
        return 0;
    for (size_t i = 0; i < sc->h->nf; i++) {
        if (strcmp(sc->h->f[i].src_path, v->path))
            continue;
        if (sc->nv == sc->cap) {
            size_t nc = sc->cap ? sc->cap * 2 : 16;
            hl_val *nvv = realloc(sc->v, nc * sizeof *nvv);
            if (!nvv)
                return FDS_ENOMEM;
            sc->v = nvv;
            size_t *nf = realloc(sc->field, nc * sizeof *nf);
            if (!nf)
                return FDS_ENOMEM;
            sc->field = nf;
            sc->cap = nc;
        }
        size_t n = v->str_len < FDS_HL_MAX_ANALYZED ? v->str_len
                                                    : FDS_HL_MAX_ANALYZED;
        char *s = malloc(n + 1);
        if (!s)
            return FDS_ENOMEM;
        memcpy(s, v->str, n);
        s[n] = 0;
        sc->v[sc->nv].s = s;
        sc->v[sc->nv].n = n;
        sc->field[sc->nv++] = i;
    }
    return 0;
}

/* A token of the value: its bytes in the value and in mark_ctx.text. */
typedef struct hl_tok {
    size_t start, end, off, len;
} hl_tok;

typedef struct mark_ctx {
    const fds_query *q;
    const fds__hl_field *f;
    fds_hl_mark *m;
    size_t n, cap;
    /* every token, for phrases (tok NULL: none kept) */
    hl_tok *tok;
    size_t ntok, tokcap;
    fds_strbuf text;
} mark_ctx;

static int add_mark(mark_ctx *mc, size_t start, size_t end)
{
    if (mc->n == mc->cap) {
        size_t nc = mc->cap ? mc->cap * 2 : 16;
        fds_hl_mark *nm = realloc(mc->m, nc * sizeof *nm);
        if (!nm)
            return FDS_ENOMEM;
        mc->m = nm;
        mc->cap = nc;
    }
    mc->m[mc->n].start = start;
    mc->m[mc->n++].end = end;
    return 0;
}

static int mark_cb(void *arg, const char *tok, size_t len, size_t start,
                   size_t end)
{
    mark_ctx *mc = arg;
    if (mc->tokcap) {
        if (mc->ntok == mc->tokcap) {
            size_t nc = mc->tokcap * 2;
            hl_tok *nt = realloc(mc->tok, nc * sizeof *nt);
            if (!nt)
                return FDS_ENOMEM;
            mc->tok = nt;
            mc->tokcap = nc;
        }
        mc->tok[mc->ntok++] = (hl_tok){start, end, mc->text.len, len};
        fds_strbuf_put(&mc->text, tok, len);
        if (mc->text.oom)
            return FDS_ENOMEM;
    }
    if (!q_matches(mc->q, mc->f->path, mc->f->require, tok, len))
        return 0;
    return add_mark(mc, start, end);
}

/* Is leaf q a phrase of slop 0 on the field of `arg` (a fds__hl_field)? */
static int exact_phrase_cb(const fds_query *q, void *arg)
{
    const fds__hl_field *f = arg;
    return q->type == FDS_Q_PHRASE && !q->slop && q->npos && q->field &&
           (!f->require || !strcmp(q->field, f->path));
}

/* Is there a phrase of slop 0 on field f in q? */
static bool has_exact_phrase(const fds_query *q, const fds__hl_field *f)
{
    return each_leaf(q, exact_phrase_cb, (void *)f) != 0;
}

/* Marks for every match of q's phrases of slop 0 in the value's tokens:
 * each token of a sequence at consecutive positions that the phrase's
 * terms match (the last position: any of its alternatives), as the
 * unified highlighter marks the positions of a phrase's matches only.
 * For each_leaf over the query, arg a mark_ctx: 0 or FDS_ENOMEM. */
static int phrase_marks(const fds_query *q, void *arg)
{
    mark_ctx *mc = arg;
    if (!exact_phrase_cb(q, (void *)mc->f))
        return 0;
    size_t np = q->npos;
    for (size_t p = 0; p + np <= mc->ntok; p++) {
        bool ok = true;
        for (size_t i = 0; ok && i < np; i++) {
            const hl_tok *t = &mc->tok[p + i];
            const char *s = mc->text.p + t->off;
            ok = phrase_term(q, i, s, t->len);
            for (size_t a = np; !ok && i + 1 == np && a < q->nvals; a++)
                ok = q->val_lens[a] == t->len && !memcmp(q->vals[a], s, t->len);
        }
        for (size_t i = 0; ok && i < np; i++) {
            int rc = add_mark(mc, mc->tok[p + i].start, mc->tok[p + i].end);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int mark_cmp(const void *a, const void *b)
{
    const fds_hl_mark *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The marks sorted and each once (a token a term and a phrase mark). */
static void marks_sort(mark_ctx *mc)
{
    qsort(mc->m, mc->n, sizeof *mc->m, mark_cmp);
    size_t k = 0;
    for (size_t i = 0; i < mc->n; i++)
        if (!k || mc->m[i].start >= mc->m[k - 1].end)
            mc->m[k++] = mc->m[i];
    mc->n = k;
}

/* The fragments of one field (its values in v) as a JSON array member
 * into b; nothing when none. */
static int put_field(const fds__hl_field *f, const fds_query *q, const hl_val *v,
                     const size_t *vf, size_t nv, size_t fi, bool *open,
                     fds_strbuf *b)
{
    fds_strbuf frag = {0};
    int got = 0, rc = 0;
    int want = f->o.number_of_fragments;
    for (size_t i = 0; i < nv && !rc; i++) {
        if (vf[i] != fi)
            continue;
        if (want > 0 && got >= want)
            break;
        mark_ctx mc = {q, f, NULL, 0, 0, NULL, 0, 0, {0}};
        if (f->ftype == FDS_FT_KEYWORD) {
            rc = mark_cb(&mc, v[i].s, v[i].n, 0, v[i].n);
        } else {
            bool ph = has_exact_phrase(q, f);
            if (ph && !(mc.tok = malloc(16 * sizeof *mc.tok)))
                rc = FDS_ENOMEM;
            mc.tokcap = mc.tok ? 16 : 0;
            if (!rc)
                rc = fds_analyze_offsets(v[i].s, v[i].n, mark_cb, &mc);
            if (!rc && ph && !(rc = each_leaf(q, phrase_marks, &mc)))
                marks_sort(&mc);
            free(mc.tok);
            fds_strbuf_free(&mc.text);
        }
        fds_hl_frag_opts o = f->o;
        if (want > 0)
            o.number_of_fragments = want - got;
        if (f->ftype == FDS_FT_KEYWORD)
            o.number_of_fragments = 0; /* a keyword is marked whole */
        if (got > 0 && !mc.n)
            o.no_match_size = 0; /* no_match_size is for a field without any */
        if (!rc) {
            fds_strbuf one = {0};
            int k = fds_hl_fragments(v[i].s, v[i].n, mc.m, mc.n, &o, &one);
            if (k) {
                if (got)
                    fds_strbuf_putc(&frag, ',');
                fds_strbuf_put(&frag, one.p, one.len);
            }
            if (one.oom)
                frag.oom = true;
            fds_strbuf_free(&one);
            if (!mc.n && k)
                want = got + k; /* the no-match fragment is the only one */
            got += k;
        }
        free(mc.m);
        if (frag.len > FDS_HL_MAX_OUT)
            break;
    }
    if (!rc && got) {
        fds_strbuf_puts(b, *open ? "," : ",\"highlight\":{");
        *open = true;
        fds_strbuf_put_json_string(b, f->path, strlen(f->path));
        fds_strbuf_puts(b, ":[");
        fds_strbuf_put(b, frag.p, frag.len);
        fds_strbuf_puts(b, "]");
    }
    if (frag.oom)
        rc = FDS_ENOMEM;
    fds_strbuf_free(&frag);
    return rc;
}

int fds_highlight_put(const fds_highlight *h, const fds_query *q,
                      const uint8_t *src, size_t len, fds_strbuf *b)
{
    if (!h || !h->nf || !src)
        return 0;
    hl_scan sc = {h, NULL, 0, 0, NULL, false};
    fds_err err;
    fds_err_clear(&err);
    int rc = h->m ? fds__doc_scan(h->m, false, src, len, scan_cb, &sc, &err)
                  : fds__json_scan(src, len, scan_cb, &sc, &err);
    if (rc != FDS_ENOMEM)
        rc = 0; /* a source that does not scan highlights nothing */
    bool open = false;
    size_t start = b->len;
    for (size_t i = 0; !rc && i < h->nf; i++) {
        const fds_query *fq = h->f[i].hq ? h->f[i].hq : h->hq ? h->hq : q;
        rc = put_field(&h->f[i], fq, sc.v, sc.field, sc.nv, i, &open, b);
        if (b->len - start > FDS_HL_MAX_OUT)
            break;
    }
    if (open)
        fds_strbuf_puts(b, "}");
    for (size_t i = 0; i < sc.nv; i++)
        free(sc.v[i].s);
    free(sc.v);
    free(sc.field);
    return rc;
}
