/*
 * docvalues.c: `docvalue_fields` and `fields` -- each hit's values of a
 * field the request resolved (dsl/dsl_docvalues.c) as Elasticsearch gives
 * them: doc values for docvalue_fields, the `_source` values parsed by the
 * mapping (in their order) for `fields`.
 *
 * The segment columns (sidx_format.h) keep one value per doc -- for a
 * keyword the smallest term only -- so the values are read from the hit's
 * `_source` instead and put in doc-value order: keywords sorted by bytes
 * and deduplicated (SortedSetDocValues), numbers and dates sorted with
 * duplicates kept (SortedNumericDocValues), booleans as false < true.  A
 * keyword longer than ignore_above has no doc value; a value the field
 * cannot take (it was ignored at index time) has none either.  Numbers of
 * a float field come at float precision, widened to double, as Lucene
 * stores them.
 *
 * Formats: a date prints with the `format` asked for, else the first
 * format of the mapping's (strict_date_optional_time by default, UTC); a
 * number with a DecimalFormat pattern of `#`, `0`, `.` and `,` (HALF_EVEN,
 * as java.text.DecimalFormat rounds).  Anything else is refused at parse
 * time.  A `fields` entry with include_unmapped also gives the `_source`
 * paths the mapping lacks (dynamic: false), values as written.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time/datemath.h"
#include "query_int.h"
#include "exec/search_int.h"
#include "fds_hash.h"
#include "fds_strbuf.h"
#include "fds_text.h"
#include "fds_numfmt.h"

/* Bytes of one rendered value (a date, a number). */
#define DV_TEXT_MAX 64


/* One value taken from `_source`: its text at arena[off..off+n) and the
 * number it reads as (long, date, boolean: l; double: d). */
typedef struct dv_raw {
    int kind;       /* FDS_JV_* */
    size_t off, n;
    int64_t l;
    double d;
} dv_raw;

typedef struct dv_collect {
    const fds_dv_field *f;
    bool record;    /* reading an fds_doc_dv_record: keys are full paths */
    bool took;      /* the last value scanned was taken (by path) */
    const char *at; /* the path it takes (dv_collect_init) */
    size_t at_len;
    size_t next;    /* 1 + the next collector of the same path; 0: none */
    dv_raw *v;      /* the values of the current doc; capacity kept */
    size_t n, cap;
    fds_strbuf *arena; /* the values' text */
    bool oom;
} dv_collect;

/* Code points of s[0..n) (ignore_above counts characters). */
static size_t chars(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

/* Keep v when it is a value of c's field.  *copied: 1 + where v's text
 * already is in the arena (the fields of one path share it), 0 before the
 * first copy. */
static void dv_take(dv_collect *c, const fds_jval *v, size_t *copied)
{
    const fds_dv_field *f = c->f;
    if (c->record && f->fetch)
        return; /* the stored record holds doc values, not `fields` */
    if (v->kind == FDS_JV_OBJECT || v->kind == FDS_JV_ARRAY ||
        v->kind == FDS_JV_NULL || v->path_len != c->at_len ||
        memcmp(v->path, c->at, v->path_len))
        return;
    c->took = true;
    if (v->from_null && strcmp(f->name, f->src))
        return; /* a parent's null_value: a multi-field takes its own only */
    dv_raw r = {.kind = v->kind};
    const char *s = v->kind == FDS_JV_TRUE ? "true"
                  : v->kind == FDS_JV_FALSE ? "false" : v->str;
    size_t n = v->kind == FDS_JV_TRUE ? 4 : v->kind == FDS_JV_FALSE ? 5 : v->str_len;
    bool ok = true;
    switch (f->type) {
    case FDS_FT_TEXT:
        break;
    case FDS_FT_KEYWORD:
        /* (bytes bound the characters: most values need no count) */
        ok = !f->ignore_above || n <= (size_t)f->ignore_above ||
             chars(s, n) <= (size_t)f->ignore_above;
        break;
    case FDS_FT_LONG:
        ok = fds__parse_long(s, n, true, &r.l) == 0;
        break;
    case FDS_FT_DOUBLE:
        ok = fds__parse_double(s, n, &r.d) == 0;
        if (ok && f->float32)
            r.d = (double)(float)r.d;
        break;
    case FDS_FT_DATE:
        ok = v->kind == FDS_JV_NUMBER
                 ? fds__parse_long(s, n, false, &r.l) == 0
                 : fds__date_parse(s, n, f->dfmt, 0, &r.l) == 0;
        break;
    case FDS_FT_BOOLEAN:
        ok = fds__parse_bool(s, n, &r.l) == 0;
        break;
    default:
        ok = false;
    }
    if (!ok)
        return;
    if (fds__grow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v)) {
        c->oom = true;
        return;
    }
    r.n = n;
    if (*copied) {
        r.off = *copied - 1;
    } else {
        r.off = c->arena->len;
        if (fds_strbuf_put(c->arena, s, n)) {
            c->oom = true;
            return;
        }
        *copied = r.off + 1;
    }
    c->v[c->n++] = r;
}

/* What an include_unmapped entry collects: the `_source` paths its
 * pattern matches that the mapping lacks, each with its values. */
typedef struct um_collect {
    const fds_search_request *req;
    const char *pat;
    fds_dv_group *g;
    size_t n, cap;
    bool oom;
} um_collect;

static void um_take(um_collect *c, const fds_jval *v);

/* The collectors of one scan of a doc: every field asked for at once, and
 * the include_unmapped entries u[0..nu) (NULL when they scan apart).  With
 * `tab` (mask + 1 slots, a power of two), the collectors by path: slot
 * fnv1a(path) & mask, or the next one along, holds 1 + the first collector
 * of that path (0: an empty slot), the others follow its `next`. */
typedef struct dv_scan {
    dv_collect *c;
    size_t n;
    um_collect *u;
    size_t nu;
    const uint32_t *tab;
    size_t mask;
    /* the docs of an index list their fields alike: pred[j] remembers the
     * table entry of the j-th value of the last doc, tried before the
     * hash (npred slots; j counts this doc's values) */
    uint32_t *pred;
    size_t npred, j;
} dv_scan;

/* The first collector of sc reading path v->path, or NULL. */
static dv_collect *dv_first(const dv_scan *sc, const fds_jval *v)
{
    for (size_t i = fds_fnv1a64(v->path, v->path_len) & sc->mask;; i = (i + 1) & sc->mask) {
        uint32_t e = sc->tab[i];
        if (!e)
            return NULL;
        dv_collect *c = &sc->c[e - 1];
        if (c->at_len == v->path_len && !memcmp(c->at, v->path, v->path_len))
            return c;
    }
}

static int dv_cb(void *arg, const fds_jval *v, fds_err *err)
{
    (void)err;
    dv_scan *sc = arg;
    if (v->kind == FDS_JV_OBJECT || v->kind == FDS_JV_ARRAY ||
        v->kind == FDS_JV_NULL)
        return 0;
    bool mapped = false;
    if (sc->tab) {
        size_t j = sc->j++;
        uint32_t e = j < sc->npred ? sc->pred[j] : 0;
        dv_collect *first = e ? &sc->c[e - 1] : NULL;
        if (!first || first->at_len != v->path_len ||
            memcmp(first->at, v->path, v->path_len)) {
            first = dv_first(sc, v);
            if (j < sc->npred)
                sc->pred[j] = first ? (uint32_t)(first - sc->c) + 1 : 0;
        }
        size_t copied = 0;
        for (dv_collect *c = first; c; c = c->next ? &sc->c[c->next - 1] : NULL) {
            dv_take(c, v, &copied);
            mapped |= !c->record;
        }
    } else {
        size_t copied = 0;
        for (size_t i = 0; i < sc->n; i++) {
            sc->c[i].took = false;
            dv_take(&sc->c[i], v, &copied);
            mapped |= sc->c[i].took && !sc->c[i].record;
        }
    }
    /* the raw document's values only (no null_value, no copy_to), and
     * none at a path a mapped field reads: that path is mapped */
    for (size_t i = 0; i < sc->nu && !mapped && !v->from_null && !v->copied; i++)
        um_take(&sc->u[i], v);
    return 0;
}

/* Set up c (its f set) for the docs of req. */
static void dv_collect_init(const fds_search_request *req, dv_collect *c)
{
    c->record = req->mapping && req->mapping->source_disabled;
    c->at = c->record ? c->f->name : c->f->src;
    c->at_len = strlen(c->at);
    c->next = 0;
}

typedef struct raw_order {
    int type;
    const char *arena;
} raw_order;

static int raw_cmp(const void *a, const void *b, void *arg)
{
    const dv_raw *x = a, *y = b;
    const raw_order *o = arg;
    if (o->type == FDS_FT_KEYWORD) {
        int c = memcmp(o->arena + x->off, o->arena + y->off, x->n < y->n ? x->n : y->n);
        return c ? c : (x->n > y->n) - (x->n < y->n);
    }
    if (o->type == FDS_FT_DOUBLE)
        return (x->d > y->d) - (x->d < y->d);
    return (x->l > y->l) - (x->l < y->l);
}
/* The shortest text strtod reads back as d, with ".0" when integral (Java's
 * Double.toString as Elasticsearch prints a double). */
static size_t double_text(double d, char *out, size_t cap)
{
    int n = 0;
    for (int p = 1; p <= 17; p++) {
        n = snprintf(out, cap, "%.*g", p, d);
        if (strtod(out, NULL) == d)
            break;
    }
    if (isfinite(d) && !strpbrk(out, ".eEn"))
        n += snprintf(out + n, cap - (size_t)n, ".0");
    return (size_t)n;
}

/* d by DecimalFormat pattern `pat` (checked by numeric_pattern_ok). */
static size_t decimal_text(double d, const char *pat, char *out, size_t cap)
{
    const char *dot = strchr(pat, '.');
    size_t min_int = 0, min_frac = 0, max_frac = 0, group = 0;
    const char *ie = dot ? dot : pat + strlen(pat);
    const char *comma = NULL;
    for (const char *p = pat; p < ie; p++) {
        min_int += *p == '0';
        if (*p == ',')
            comma = p;
    }
    if (comma)
        for (const char *p = comma + 1; p < ie; p++)
            group++;
    for (const char *p = dot ? dot + 1 : ie; *p; p++) {
        min_frac += *p == '0';
        max_frac++;
    }
    char num[DV_TEXT_MAX * 2];
    snprintf(num, sizeof num, "%.*f", (int)max_frac, fabs(d));
    char *fp = strchr(num, '.');
    size_t ilen = fp ? (size_t)(fp - num) : strlen(num);
    size_t flen = fp ? strlen(fp + 1) : 0;
    while (flen > min_frac && fp[flen] == '0')
        flen--;
    bool zero_int = ilen == 1 && num[0] == '0';
    size_t k = 0;
    if (d < 0 && (!zero_int || flen) && k + 1 < cap)
        out[k++] = '-';
    if (zero_int && min_int == 0 && flen)
        ilen = 0; /* "#.0" prints 0.5 as ".5" */
    for (size_t pad = ilen; pad < min_int && k + 1 < cap; pad++)
        out[k++] = '0';
    for (size_t i = 0; i < ilen && k + 2 < cap; i++) {
        if (group && i && (ilen - i) % group == 0)
            out[k++] = ',';
        out[k++] = num[i];
    }
    if (flen && k + 1 < cap) {
        out[k++] = '.';
        for (size_t i = 1; i <= flen && k + 1 < cap; i++)
            out[k++] = fp[i];
    }
    out[k] = 0;
    return k;
}

/* Scan the doc src[0..len) once for the fields of c[0..n) (each c[i].f and
 * arena set, dv_collect_init), with the path table `tab` and its guesses
 * pred[0..npred) (dv_scan; NULL: none) and the include_unmapped entries
 * u[0..nu).  A stored doc
 * parses; the mapping's view of it gives null_value and copy_to values and
 * leaves disabled objects out (the unmapped values, which include what a
 * disabled object holds, then come from a second, raw scan).  Without
 * `_source` the stored record holds the doc values; `fields`, read from
 * `_source`, has none (Elasticsearch 8.3+ skips them). */
static void dv_scan_doc(const fds_search_request *req, const uint8_t *src,
                        size_t len, dv_collect *c, size_t n, um_collect *u,
                        size_t nu, const uint32_t *tab, size_t mask,
                        uint32_t *pred, size_t npred)
{
    fds_err e;
    fds_err_clear(&e);
    bool record = req->mapping && req->mapping->source_disabled;
    for (size_t i = 0; i < n; i++) {
        c[i].n = 0;
        c[i].oom = false;
    }
    if (!req->mapping || record)
        nu = 0; /* unmapped paths: none without a mapping or `_source` */
    bool apart = nu && (req->mapping->root_disabled || req->mapping->ndisabled);
    dv_scan sc = {c, n, apart ? NULL : u, apart ? 0 : nu, tab, mask, pred, npred, 0};
    if (record) { /* `fields`, read from `_source`, has none (dv_take) */
        if (len)
            (void)fds__json_scan(src, len, dv_cb, &sc, &e);
    } else if (req->mapping) {
        (void)fds__doc_scan(req->mapping, false, src, len, dv_cb, &sc, &e);
    } else {
        (void)fds__json_scan(src, len, dv_cb, &sc, &e);
    }
    if (apart) {
        dv_scan raw = {NULL, 0, u, nu, NULL, 0, NULL, 0, 0};
        fds_err_clear(&e);
        (void)fds__json_scan(src, len, dv_cb, &raw, &e);
    }
}

/* Value r of field f as JSON text: *t[0..*n), a string to quote when
 * *quoted (keyword and text values point into `arena`, the rest into
 * buf). */
static void dv_text(const fds_dv_field *f, const dv_raw *r, const char *arena,
                    char buf[DV_TEXT_MAX], const char **t, size_t *n,
                    bool *quoted)
{
    int type = f->type;
    *t = buf;
    *quoted = false;
    if (type == FDS_FT_KEYWORD || type == FDS_FT_TEXT) {
        *t = arena + r->off;
        *n = r->n;
        *quoted = true;
    } else if (type == FDS_FT_DATE) {
        *n = fds__date_print(r->l, f->format, buf, DV_TEXT_MAX);
        *quoted = true;
    } else if (type == FDS_FT_BOOLEAN) {
        *n = (size_t)snprintf(buf, DV_TEXT_MAX, "%s", r->l ? "true" : "false");
    } else if (f->format) {
        *n = decimal_text(type == FDS_FT_DOUBLE ? r->d : (double)r->l,
                          f->format, buf, DV_TEXT_MAX);
        *quoted = true;
    } else if (type == FDS_FT_DOUBLE && f->fetch && f->float32) {
        *n = fds_float_format((float)r->d, buf); /* the float, as parsed */
    } else if (type == FDS_FT_DOUBLE) {
        *n = double_text(r->d, buf, DV_TEXT_MAX);
    } else {
        char tmp[24], *p = tmp + sizeof tmp;
        uint64_t u = r->l < 0 ? 0 - (uint64_t)r->l : (uint64_t)r->l;
        do
            *--p = (char)('0' + u % 10);
        while (u /= 10);
        if (r->l < 0)
            *--p = '-';
        *n = (size_t)(tmp + sizeof tmp - p);
        memcpy(buf, p, *n);
    }
}

/* c's values in doc-value order (`fields` keeps _source's). */
static void dv_order(dv_collect *c)
{
    raw_order o = {c->f->type, c->arena->p};
    if (c->n > 1 && !c->f->fetch)
        qsort_r(c->v, c->n, sizeof *c->v, raw_cmp, &o);
}

/* Is value i of c (ordered) a repeat of the one before it?  Keywords'
 * doc values are a set: each term once. */
static bool dv_repeat(const dv_collect *c, size_t i)
{
    const dv_raw *r = &c->v[i], *q = &c->v[i - (i > 0)];
    return i && c->f->type == FDS_FT_KEYWORD && !c->f->fetch && q->n == r->n &&
           !memcmp(c->arena->p + q->off, c->arena->p + r->off, r->n);
}

/* Call fn on each of c's values in doc-value order and format: its JSON
 * text t[0..n), a string to quote when `quoted` (t lives until the next
 * call); stops at fn's nonzero code and returns it. */
typedef int (*dv_value_fn)(void *arg, const char *t, size_t n, bool quoted);

static int dv_each(dv_collect *c, dv_value_fn fn, void *arg)
{
    dv_order(c);
    int rc = 0;
    for (size_t i = 0; !rc && i < c->n; i++) {
        if (dv_repeat(c, i))
            continue;
        char buf[DV_TEXT_MAX];
        const char *t;
        size_t n;
        bool quoted;
        dv_text(c->f, &c->v[i], c->arena->p, buf, &t, &n, &quoted);
        rc = fn(arg, t, n, quoted);
    }
    return rc;
}

typedef struct dv_list {
    fds_dv_value *o;
    size_t m;
} dv_list;

static int list_add(void *arg, const char *t, size_t n, bool quoted)
{
    dv_list *l = arg;
    if (!(l->o[l->m].text = malloc(n + 1)))
        return FDS_ENOMEM;
    memcpy(l->o[l->m].text, t, n);
    l->o[l->m].text[n] = 0;
    l->o[l->m].len = n;
    l->o[l->m++].quoted = quoted;
    return 0;
}

/* The values c collected, in doc-value order and format, into *out (*nout
 * of them, malloc'd).  0 or FDS_ENOMEM. */
static int dv_values(dv_collect *c, fds_dv_value **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (c->oom || c->arena->oom)
        return FDS_ENOMEM;
    dv_list l = {c->n ? calloc(c->n, sizeof *l.o) : NULL, 0};
    if (c->n && !l.o)
        return FDS_ENOMEM;
    if (dv_each(c, list_add, &l)) {
        fds_dv_values_free(l.o, l.m);
        return FDS_ENOMEM;
    }
    *out = l.o;
    *nout = l.m;
    return 0;
}

int fds_docvalues_of(const fds_search_request *req, size_t k,
                     const uint8_t *src, size_t len, fds_dv_value **out,
                     size_t *nout)
{
    fds_strbuf arena = {0};
    dv_collect c = {.f = &req->dv[k], .arena = &arena};
    dv_collect_init(req, &c);
    dv_scan_doc(req, src, len, &c, 1, NULL, 0, NULL, 0, NULL, 0);
    int rc = dv_values(&c, out, nout);
    free(c.v);
    fds_strbuf_free(&arena);
    return rc;
}

void fds_dv_values_free(fds_dv_value *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].text);
    free(v);
}

/* ---- include_unmapped ---------------------------------------------------- */

static void um_take(um_collect *c, const fds_jval *v)
{
    if (v->kind == FDS_JV_OBJECT || v->kind == FDS_JV_ARRAY ||
        v->kind == FDS_JV_NULL || !fds_glob_match(c->pat, v->path, v->path_len))
        return;
    const fds_mfield *mf = fds__mapping_find_locked(c->req->mapping, v->path,
                                                    v->path_len);
    if (mf && mf->type != FDS_FT_NONE && mf->type != FDS_FT_OBJECT &&
        !fds__path_disabled(c->req->mapping, v->path, v->path_len))
        return; /* mapped: the mapped entries answer it (not under a
                   disabled object, whose contents are unmapped) */
    fds_dv_group *g = NULL;
    for (size_t i = 0; i < c->n && !g; i++)
        if (strlen(c->g[i].name) == v->path_len &&
            !memcmp(c->g[i].name, v->path, v->path_len))
            g = &c->g[i];
    if (!g) {
        if (fds__grow((void **)&c->g, &c->cap, c->n + 1, sizeof *c->g)) {
            c->oom = true;
            return;
        }
        g = &c->g[c->n];
        memset(g, 0, sizeof *g);
        if (!(g->name = strndup(v->path, v->path_len))) {
            c->oom = true;
            return;
        }
        c->n++;
    }
    const char *s = v->kind == FDS_JV_TRUE ? "true"
                  : v->kind == FDS_JV_FALSE ? "false" : v->str;
    size_t n = v->kind == FDS_JV_TRUE ? 4 : v->kind == FDS_JV_FALSE ? 5 : v->str_len;
    fds_dv_value *nv = realloc(g->v, (g->n + 1) * sizeof *nv);
    char *t = nv ? malloc(n + 1) : NULL;
    if (nv)
        g->v = nv;
    if (!t) {
        c->oom = true;
        return;
    }
    memcpy(t, s, n);
    t[n] = 0;
    g->v[g->n++] = (fds_dv_value){t, n, v->kind == FDS_JV_STRING};
}

static void dv_groups_free(fds_dv_group *g, size_t n)
{
    for (size_t i = 0; g && i < n; i++) {
        free(g[i].name);
        fds_dv_values_free(g[i].v, g[i].n);
    }
    free(g);
}

/* ---- a hit's `fields`, written into the response ------------------------- */

struct fds_dv_scratch {
    const fds_search_request *req; /* what the arrays below are set for */
    fds_strbuf arena;     /* the current doc's values */
    dv_collect *c;        /* the mapped entries, capacity kept */
    size_t *at;           /* entry k's collector */
    um_collect *u;        /* the include_unmapped entries */
    bool *twice;          /* entry k is also asked for as a `fields` entry */
    size_t *name_off;     /* entry k's `"name":[` at names.p + name_off[k] */
    fds_strbuf names;
    uint32_t *tab;        /* the collectors by path (dv_scan) */
    size_t mask;
    size_t nk, nu;        /* collectors, include_unmapped entries */
    uint32_t pred[256];   /* dv_scan's guesses (0: none) */
    size_t cap;           /* entries the arrays hold */
    size_t ccap;          /* collectors set up (their `v` owned) */
};

void fds_dv_scratch_free(fds_dv_scratch *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ccap; i++)
        free(s->c[i].v);
    free(s->c);
    free(s->at);
    free(s->u);
    free(s->twice);
    free(s->name_off);
    free(s->tab);
    fds_strbuf_free(&s->names);
    fds_strbuf_free(&s->arena);
    free(s);
}

/* *p (an array) resized to n elements of `size` bytes; false when out of
 * memory (*p unchanged). */
static bool resize(void *p, size_t n, size_t size)
{
    void *q = realloc(*(void **)p, n * size);
    if (q)
        *(void **)p = q;
    return q != NULL;
}

/* *sp with room for n entries; NULL when out of memory. */
static fds_dv_scratch *scratch_for(fds_dv_scratch **sp, size_t n)
{
    fds_dv_scratch *s = *sp;
    if (!s && !(s = *sp = calloc(1, sizeof *s)))
        return NULL;
    if (n <= s->cap)
        return s;
    s->req = NULL;
    if (n > s->ccap) {
        if (!resize(&s->c, n, sizeof *s->c))
            return NULL;
        memset(s->c + s->ccap, 0, (n - s->ccap) * sizeof *s->c);
        s->ccap = n;
    }
    if (!resize(&s->at, n, sizeof *s->at) || !resize(&s->u, n, sizeof *s->u) ||
        !resize(&s->twice, n, sizeof *s->twice) ||
        !resize(&s->name_off, n, sizeof *s->name_off) ||
        !resize(&s->tab, 4 * n, sizeof *s->tab))
        return NULL;
    s->cap = n;
    return s;
}

/* Set s up for the hits of r (room for r->ndv entries): the collectors,
 * their path table, the entries' names as JSON and which ones a `fields`
 * entry overrides.  0 or FDS_ENOMEM. */
static int scratch_prepare(fds_dv_scratch *s, const fds_search_request *r)
{
    if (s->req == r)
        return 0;
    size_t slots = 4;
    while (slots < 2 * r->ndv)
        slots *= 2; /* at most 4 * ndv: scratch_for's room */
    s->mask = slots - 1;
    memset(s->tab, 0, slots * sizeof *s->tab);
    memset(s->pred, 0, sizeof s->pred);
    s->names.len = 0;
    s->nk = s->nu = 0;
    /* without `_source`, `fields` has no values to show instead */
    bool nosrc = r->mapping && !fds_mapping_source_enabled(r->mapping);
    for (size_t k = 0; k < r->ndv; k++) {
        s->name_off[k] = s->names.len;
        fds_strbuf_puts(&s->names, ",");
        fds_strbuf_put_json_string(&s->names, r->dv[k].name, strlen(r->dv[k].name));
        fds_strbuf_puts(&s->names, ":[");
        if (r->dv[k].unmapped) {
            s->u[s->nu++] = (um_collect){.req = r, .pat = r->dv[k].name};
            continue;
        }
        /* a field asked for both ways shows its `fields` values */
        bool twice = false;
        for (size_t j = 0; j < r->ndv && !r->dv[k].fetch && !twice && !nosrc; j++)
            twice = r->dv[j].fetch && !r->dv[j].unmapped &&
                    !strcmp(r->dv[j].name, r->dv[k].name);
        s->twice[k] = twice;
        s->at[k] = s->nk;
        dv_collect *c = &s->c[s->nk++];
        c->f = &r->dv[k];
        c->arena = &s->arena;
        dv_collect_init(r, c);
        /* into the table, or behind the last collector of its path */
        size_t i = fds_fnv1a64(c->at, c->at_len) & s->mask;
        dv_collect *q = NULL;
        for (; s->tab[i]; i = (i + 1) & s->mask) {
            q = &s->c[s->tab[i] - 1];
            if (q->at_len == c->at_len && !memcmp(q->at, c->at, c->at_len))
                break;
            q = NULL;
        }
        if (!q) {
            s->tab[i] = (uint32_t)s->nk;
            continue;
        }
        while (q->next)
            q = &s->c[q->next - 1];
        q->next = s->nk;
    }
    if (s->names.oom)
        return FDS_ENOMEM;
    s->req = r;
    return 0;
}

/* `"name":[` (the JSON text t[0..n), its leading comma included) as a
 * member of the hit's `fields`, opened by the first. */
static void put_name(fds_strbuf *b, bool *open, const char *t, size_t n)
{
    if (!*open)
        fds_strbuf_put(b, ",\"fields\":{", 11);
    fds_strbuf_put(b, t + !*open, n - !*open);
    *open = true;
}

/* Has an earlier include_unmapped entry than k given path `name`? */
static bool unmapped_before(const fds_search_request *r, size_t k,
                            const char *name)
{
    for (size_t j = 0; j < k; j++)
        if (r->dv[j].unmapped && fds_glob_match(r->dv[j].name, name, strlen(name)))
            return true;
    return false;
}

/* One value into the response (dv_each; arg: the fds_strbuf), a comma
 * before all but the first. */
static int put_value(void *arg, const char *t, size_t n, bool quoted)
{
    fds_strbuf *b = arg;
    if (b->len && b->p[b->len - 1] != '[')
        fds_strbuf_put(b, ",", 1);
    if (quoted)
        fds_strbuf_put_json_string(b, t, n);
    else
        fds_strbuf_put(b, t, n);
    return 0;
}

int fds_docvalues_put(const fds_search_request *r, const uint8_t *src,
                      size_t len, fds_dv_scratch **sp, fds_strbuf *b)
{
    if (!r->ndv)
        return 0;
    fds_dv_scratch *s = scratch_for(sp, r->ndv);
    if (!s || scratch_prepare(s, r))
        return FDS_ENOMEM;
    s->arena.len = 0;
    for (size_t i = 0; i < s->nu; i++)
        s->u[i].n = 0;
    dv_scan_doc(r, src, len, s->c, s->nk, s->u, s->nu, s->tab, s->mask, s->pred,
                sizeof s->pred / sizeof *s->pred);
    int rc = s->arena.oom ? FDS_ENOMEM : 0;
    for (size_t i = 0; i < s->nk; i++)
        if (s->c[i].oom)
            rc = FDS_ENOMEM;
    for (size_t i = 0; i < s->nu; i++)
        if (s->u[i].oom)
            rc = FDS_ENOMEM;
    bool open = false;
    fds_strbuf name = {0};
    for (size_t k = 0, ui = 0; !rc && k < r->ndv; k++) {
        if (r->dv[k].unmapped) {
            const um_collect *u = &s->u[ui++];
            for (size_t i = 0; i < u->n; i++) {
                const fds_dv_group *g = &u->g[i];
                if (unmapped_before(r, k, g->name))
                    continue;
                name.len = 0;
                fds_strbuf_putc(&name, ',');
                fds_strbuf_put_json_string(&name, g->name, strlen(g->name));
                fds_strbuf_put(&name, ":[", 2);
                if (name.oom) {
                    rc = FDS_ENOMEM;
                    break;
                }
                put_name(b, &open, name.p, name.len);
                for (size_t j = 0; j < g->n; j++) {
                    if (j)
                        fds_strbuf_put(b, ",", 1);
                    if (g->v[j].quoted)
                        fds_strbuf_put_json_string(b, g->v[j].text, g->v[j].len);
                    else
                        fds_strbuf_put(b, g->v[j].text, g->v[j].len);
                }
                fds_strbuf_put(b, "]", 1);
            }
            continue;
        }
        dv_collect *c = &s->c[s->at[k]];
        if (s->twice[k] || !c->n)
            continue;
        size_t end = k + 1 < r->ndv ? s->name_off[k + 1] : s->names.len;
        put_name(b, &open, s->names.p + s->name_off[k], end - s->name_off[k]);
        (void)dv_each(c, put_value, b);
        fds_strbuf_put(b, "]", 1);
    }
    fds_strbuf_free(&name);
    for (size_t i = 0; i < s->nu; i++) {
        dv_groups_free(s->u[i].g, s->u[i].n);
        s->u[i].g = NULL;
        s->u[i].n = s->u[i].cap = 0;
    }
    if (open)
        fds_strbuf_put(b, "}", 1);
    return rc;
}

/* ---- the stored record of a document without _source ---------------------- */

/* One value of the record: the field's path (the mapping's, stable) and the
 * value's JSON text in `text`, in document order (seq). */
typedef struct rec_val {
    const char *path;
    size_t off, len;
    size_t seq;
} rec_val;

typedef struct rec_ctx {
    const fds_mapping *m;
    fds_strbuf text;
    rec_val *v;
    size_t n, cap;
    bool oom;
} rec_ctx;

/* Does field f keep value v in its doc values? */
static bool rec_takes(const fds_mfield *f, const fds_jval *v)
{
    if (f->type == FDS_FT_TEXT || f->type == FDS_FT_OBJECT ||
        f->type == FDS_FT_NONE || fds__value_check(f, v, NULL))
        return false;
    return f->type != FDS_FT_KEYWORD || !f->ignore_above ||
           chars(v->str, v->str_len) <= (size_t)f->ignore_above;
}

static void rec_add(rec_ctx *c, const fds_mfield *f, const fds_jval *v)
{
    if (!rec_takes(f, v))
        return;
    if (fds__grow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v)) {
        c->oom = true;
        return;
    }
    size_t off = c->text.len;
    if (v->kind == FDS_JV_STRING)
        fds_strbuf_put_json_string(&c->text, v->str, v->str_len);
    else
        fds_strbuf_put(&c->text, v->str, v->str_len);
    c->oom |= c->text.oom;
    c->v[c->n] = (rec_val){f->path, off, c->text.len - off, c->n};
    c->n++;
}

static int rec_cb(void *arg, const fds_jval *v, fds_err *err)
{
    (void)err;
    rec_ctx *c = arg;
    if (v->kind == FDS_JV_OBJECT || v->kind == FDS_JV_ARRAY ||
        v->kind == FDS_JV_NULL)
        return 0;
    fds_mapping *m = (fds_mapping *)c->m;
    pthread_rwlock_rdlock(&m->lock);
    const fds_mfield *f = fds__mapping_find(m, v->path, v->path_len);
    if (f)
        rec_add(c, f, v);
    for (size_t i = 0; f && f->has_subs && i < m->nfields; i++) {
        const fds_mfield *s = m->fields[i];
        fds_jval tmp;
        const fds_jval *sv;
        if (s->parent == f && s->is_subfield && (sv = fds__null_as(s, v, &tmp)))
            rec_add(c, s, sv);
    }
    pthread_rwlock_unlock(&m->lock);
    return 0;
}

static int rec_cmp(const void *a, const void *b)
{
    const rec_val *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

int fds_doc_dv_record(const fds_mapping *m, const uint8_t *src, size_t len,
                      uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    rec_ctx c = {.m = m};
    fds_err e;
    fds_err_clear(&e);
    int rc = fds__doc_scan(m, false, src, len, rec_cb, &c, &e);
    if (rc == FDS_ENOMEM)
        c.oom = true;
    if (c.n)
        qsort(c.v, c.n, sizeof *c.v, rec_cmp);
    fds_strbuf b = {0};
    for (size_t i = 0; i < c.n && !c.oom; i++) {
        bool first = !i || strcmp(c.v[i].path, c.v[i - 1].path);
        if (first) {
            fds_strbuf_puts(&b, i ? "]," : "{");
            fds_strbuf_put_json_string(&b, c.v[i].path, strlen(c.v[i].path));
            fds_strbuf_puts(&b, ":[");
        } else {
            fds_strbuf_putc(&b, ',');
        }
        fds_strbuf_put(&b, c.text.p + c.v[i].off, c.v[i].len);
    }
    if (c.n)
        fds_strbuf_puts(&b, "]}");
    bool oom = c.oom || b.oom;
    free(c.v);
    fds_strbuf_free(&c.text);
    if (oom) {
        fds_strbuf_free(&b);
        return FDS_ENOMEM;
    }
    if (!b.len) {
        fds_strbuf_free(&b);
        return 0;
    }
    *out = (uint8_t *)fds_strbuf_take(&b, out_len);
    return 0;
}
