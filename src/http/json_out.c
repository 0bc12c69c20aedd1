/*
 * json_out.c: the response-wide JSON options of Elasticsearch's REST layer,
 * `?filter_path=` and `?pretty`, applied to the text of an answer.
 *
 * Both work on the JSON text, never on a parsed tree: `_source` is kept as
 * received and integers past 2^53 keep their digits, which a round trip
 * through doubles (cJSON) would lose.  The input is always our own output,
 * so it is valid JSON; the scanner below relies on that.
 *
 * filter_path follows Elasticsearch's "Response filtering": paths are
 * comma-separated, dotted, with `*` inside a name and `**` for any number
 * of levels; a path with a leading `-` excludes what it names.  With
 * both kinds the includes are applied first and the excludes to what they
 * kept (as Elasticsearch chains two filtering generators).
 */
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_error.h"
#include "fds_json_skip.h"
#include "fds_strbuf.h"
#include "json_out.h"

#define FDS_FILTER_PATHS_MAX 32 /* comma-separated paths in one filter_path */
#define FDS_FILTER_DEPTH_MAX 16 /* dotted segments in one path */
#define FDS_PRETTY_INDENT 2

static const char *ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* End of the string starting at the quote `p`. */
static const char *str_end(const char *p, const char *e)
{
    return p + fds_json_skip_string(p, (size_t)(e - p), 0);
}

/* End of the value starting at `p` (after whitespace). */
static const char *skip_value(const char *p, const char *e)
{
    p = ws(p, e);
    return p + fds_json_skip(p, (size_t)(e - p), 0);
}

/* ---- filter_path ------------------------------------------------------------ */

typedef struct fpath {
    char *seg[FDS_FILTER_DEPTH_MAX];
    unsigned nseg;
} fpath;

typedef struct fstate {
    unsigned path, at; /* next segment to match */
} fstate;

typedef struct fctx {
    fpath paths[FDS_FILTER_PATHS_MAX];
    unsigned npaths;
    const char *e;
} fctx;

static const char *filt(fctx *c, const char *p, const fstate *st, unsigned ns,
                        fds_strbuf *out, bool *emitted);

/* After a member's value ending at `ve`: pass on sub's out-of-memory
 * flag, free it, and step over the ',' to the next member. */
static const char *member_done(fds_strbuf *out, fds_strbuf *sub,
                               const char *ve, const char *e)
{
    if (sub->oom)
        out->oom = true;
    free(sub->p);
    const char *p = ws(ve, e);
    return p < e && *p == ',' ? ws(p + 1, e) : p;
}

/* Append `sep` (a separator or an opening bracket, may be ""), then the
 * key [ks, ke) and ':' unless ks is NULL, then the value text `val`. */
static void put_member(fds_strbuf *out, const char *sep, const char *ks,
                       const char *ke, const fds_strbuf *val)
{
    fds_strbuf_put(out, sep, strlen(sep));
    if (ks) {
        fds_strbuf_put(out, ks, (size_t)(ke - ks));
        fds_strbuf_put(out, ":", 1);
    }
    fds_strbuf_put(out, val->p, val->len);
}

/* The states after matching object key `key` (`klen` raw bytes). */
static unsigned step(fctx *c, const fstate *st, unsigned ns, const char *key,
                     size_t klen, fstate *next, bool *whole)
{
    char k[256];
    snprintf(k, sizeof k, "%.*s", (int)klen, key);
    unsigned nn = 0;
    *whole = false;
    for (unsigned i = 0; i < ns; i++) {
        const fpath *fp = &c->paths[st[i].path];
        const char *seg = fp->seg[st[i].at];
        if (!strcmp(seg, "**")) {
            if (st[i].at + 1 == fp->nseg) {
                *whole = true;
                continue;
            }
            if (nn < FDS_FILTER_PATHS_MAX * 2)
                next[nn++] = st[i]; /* ** swallows this key */
            const char *s2 = fp->seg[st[i].at + 1];
            if (!fnmatch(s2, k, 0)) {
                if (st[i].at + 2 == fp->nseg)
                    *whole = true;
                else if (nn < FDS_FILTER_PATHS_MAX * 2)
                    next[nn++] = (fstate){st[i].path, st[i].at + 2};
            }
            continue;
        }
        if (fnmatch(seg, k, 0))
            continue;
        if (st[i].at + 1 == fp->nseg)
            *whole = true;
        else if (nn < FDS_FILTER_PATHS_MAX * 2)
            next[nn++] = (fstate){st[i].path, st[i].at + 1};
    }
    return nn;
}

static const char *filt_object(fctx *c, const char *p, const fstate *st,
                               unsigned ns, fds_strbuf *out, bool *emitted)
{
    const char *e = c->e;
    bool any = false;
    p = ws(p + 1, e);
    while (p < e && *p != '}') {
        const char *ks = p, *ke = str_end(p, e);
        p = ws(ke, e);
        p = ws(p + 1, e); /* ':' */
        fstate next[FDS_FILTER_PATHS_MAX * 2];
        bool whole;
        unsigned nn = step(c, st, ns, ks + 1, (size_t)(ke - ks - 2), next, &whole);
        const char *ve = skip_value(p, e);
        if (whole || nn) {
            fds_strbuf sub = {0};
            bool got = false;
            if (whole) {
                fds_strbuf_put(&sub, p, (size_t)(ve - p));
                got = true;
            } else {
                filt(c, p, next, nn, &sub, &got);
            }
            if (got) {
                put_member(out, any ? "," : "{", ks, ke, &sub);
                any = true;
            }
            p = member_done(out, &sub, ve, e);
            continue;
        }
        p = ws(ve, e);
        if (p < e && *p == ',')
            p = ws(p + 1, e);
    }
    if (any)
        fds_strbuf_put(out, "}", 1);
    *emitted = any;
    return p < e ? p + 1 : e;
}

static const char *filt_array(fctx *c, const char *p, const fstate *st,
                              unsigned ns, fds_strbuf *out, bool *emitted)
{
    const char *e = c->e;
    bool any = false;
    p = ws(p + 1, e);
    while (p < e && *p != ']') {
        fds_strbuf sub = {0};
        bool got = false;
        p = ws(filt(c, p, st, ns, &sub, &got), e);
        if (got) {
            put_member(out, any ? "," : "[", NULL, NULL, &sub);
            any = true;
        }
        if (sub.oom)
            out->oom = true;
        free(sub.p);
        if (p < e && *p == ',')
            p = ws(p + 1, e);
    }
    if (any)
        fds_strbuf_put(out, "]", 1);
    *emitted = any;
    return p < e ? p + 1 : e;
}

/* A value under paths not yet fully matched: objects and arrays are
 * searched, scalars dropped. */
static const char *filt(fctx *c, const char *p, const fstate *st, unsigned ns,
                        fds_strbuf *out, bool *emitted)
{
    p = ws(p, c->e);
    *emitted = false;
    if (p < c->e && *p == '{')
        return filt_object(c, p, st, ns, out, emitted);
    if (p < c->e && *p == '[')
        return filt_array(c, p, st, ns, out, emitted);
    return skip_value(p, c->e);
}

/* ---- exclusions (filter_path=-a.b) ------------------------------------------ */

static const char *excl(fctx *c, const char *p, const fstate *st, unsigned ns,
                        fds_strbuf *out, bool *emitted);

/* Members of the object (or elements of the array) at `p` with what the
 * exclusion states match left out.  Elasticsearch (FilterPathBasedFilter
 * with inclusive = false: includeEmptyObject/includeEmptyArray) keeps an
 * object or array that was empty in the answer, and drops one that lost
 * every member to the filter: *emitted is false then. */
static const char *excl_container(fctx *c, const char *p, const fstate *st,
                                  unsigned ns, fds_strbuf *out, bool *emitted)
{
    const char *e = c->e;
    bool obj = *p == '{', had = false;
    char close = obj ? '}' : ']';
    fds_strbuf body = {0};
    p = ws(p + 1, e);
    while (p < e && *p != close) {
        had = true;
        const char *ks = p, *ke = p;
        fstate next[FDS_FILTER_PATHS_MAX * 2];
        const fstate *vst = st;
        unsigned nn = ns;
        bool whole = false;
        if (obj) {
            ke = str_end(p, e);
            p = ws(ws(ke, e) + 1, e); /* past ':' */
            nn = step(c, st, ns, ks + 1, (size_t)(ke - ks - 2), next, &whole);
            vst = next;
        }
        fds_strbuf sub = {0};
        bool got = false;
        const char *ve;
        if (whole) {
            ve = skip_value(p, e);
        } else if (!nn) { /* no exclusion reaches below: copy it */
            ve = skip_value(p, e);
            fds_strbuf_put(&sub, p, (size_t)(ve - p));
            got = true;
        } else {
            ve = excl(c, p, vst, nn, &sub, &got);
        }
        if (got)
            put_member(&body, body.len ? "," : "", obj ? ks : NULL, ke, &sub);
        p = member_done(out, &sub, ve, e);
    }
    *emitted = body.len || !had;
    if (*emitted) {
        fds_strbuf_put(out, obj ? "{" : "[", 1);
        fds_strbuf_put(out, body.p, body.len);
        fds_strbuf_put(out, obj ? "}" : "]", 1);
    }
    if (body.oom)
        out->oom = true;
    free(body.p);
    return p < e ? p + 1 : e;
}

/* A value under exclusion paths not yet fully matched: objects and arrays
 * are filtered, scalars kept. */
static const char *excl(fctx *c, const char *p, const fstate *st, unsigned ns,
                        fds_strbuf *out, bool *emitted)
{
    p = ws(p, c->e);
    if (p < c->e && (*p == '{' || *p == '['))
        return excl_container(c, p, st, ns, out, emitted);
    const char *ve = skip_value(p, c->e);
    fds_strbuf_put(out, p, (size_t)(ve - p));
    *emitted = true;
    return ve;
}

/* Split the paths of `spec` (modified in place) into includes and, for
 * those with a leading '-', excludes (Elasticsearch's
 * AbstractRestChannel: the rest of the path after the '-'). */
static void parse_paths(char *spec, fctx *inc, fstate *inc_st, fctx *exc,
                        fstate *exc_st)
{
    for (char *s1 = NULL, *t = strtok_r(spec, ",", &s1); t;
         t = strtok_r(NULL, ",", &s1)) {
        bool minus = *t == '-';
        fctx *c = minus ? exc : inc;
        fstate *st = minus ? exc_st : inc_st;
        if (c->npaths == FDS_FILTER_PATHS_MAX)
            continue;
        fpath *fp = &c->paths[c->npaths];
        fp->nseg = 0;
        for (char *s2 = NULL, *g = strtok_r(t + minus, ".", &s2);
             g && fp->nseg < FDS_FILTER_DEPTH_MAX; g = strtok_r(NULL, ".", &s2))
            fp->seg[fp->nseg++] = g;
        if (fp->nseg) {
            st[c->npaths] = (fstate){c->npaths, 0};
            c->npaths++;
        }
    }
}

int fds__json_filter(const char *in, size_t n, const char *filter_path,
                     char **out, size_t *outn)
{
    char *spec = strdup(filter_path);
    if (!spec)
        return FDS_ENOMEM;
    fctx inc = {.e = in + n}, exc = {0};
    fstate inc_st[FDS_FILTER_PATHS_MAX], exc_st[FDS_FILTER_PATHS_MAX];
    parse_paths(spec, &inc, inc_st, &exc, exc_st);
    /* includes first, then excludes on what they kept: Elasticsearch
     * chains one filtering generator of each kind */
    fds_strbuf b = {0};
    bool got = false;
    if (inc.npaths)
        filt(&inc, in, inc_st, inc.npaths, &b, &got);
    if (!got && !b.oom) {
        b.len = 0;
        if (inc.npaths || !exc.npaths)
            fds_strbuf_put(&b, "{}", 2);
        else
            fds_strbuf_put(&b, in, n);
    }
    if (exc.npaths && !b.oom) {
        fds_strbuf x = {0};
        exc.e = b.p + b.len;
        excl(&exc, b.p, exc_st, exc.npaths, &x, &got);
        if (!got && !x.oom) {
            x.len = 0;
            fds_strbuf_put(&x, "{}", 2);
        }
        free(b.p);
        b = x;
    }
    free(spec);
    if (b.oom) {
        free(b.p);
        return FDS_ENOMEM;
    }
    *out = b.p;
    *outn = b.len;
    return 0;
}

/* ---- pretty ----------------------------------------------------------------- */

static void newline(fds_strbuf *b, int depth)
{
    static const char spaces[] = "                                ";
    fds_strbuf_put(b, "\n", 1);
    for (int n = depth * FDS_PRETTY_INDENT; n > 0;) {
        int k = n < (int)sizeof spaces - 1 ? n : (int)sizeof spaces - 1;
        fds_strbuf_put(b, spaces, (size_t)k);
        n -= k;
    }
}

int fds__json_pretty(const char *in, size_t n, char **out, size_t *outn)
{
    const char *p = in, *e = in + n;
    fds_strbuf b = {0};
    int depth = 0;
    while ((p = ws(p, e)) < e) {
        char ch = *p;
        if (ch == '{' || ch == '[') {
            const char *q = ws(p + 1, e);
            if (q < e && (*q == '}' || *q == ']')) {
                fds_strbuf_put(&b, ch == '{' ? "{ }" : "[ ]", 3);
                p = q + 1;
                continue;
            }
            fds_strbuf_put(&b, p, 1);
            newline(&b, ++depth);
            p++;
        } else if (ch == '}' || ch == ']') {
            newline(&b, --depth);
            fds_strbuf_put(&b, p, 1);
            p++;
        } else if (ch == ',') {
            fds_strbuf_put(&b, ",", 1);
            newline(&b, depth);
            p++;
        } else if (ch == ':') {
            fds_strbuf_put(&b, " : ", 3);
            p++;
        } else {
            const char *q = ch == '"' ? str_end(p, e) : skip_value(p, e);
            fds_strbuf_put(&b, p, (size_t)(q - p));
            p = q;
        }
    }
    fds_strbuf_put(&b, "\n", 1);
    if (b.oom) {
        free(b.p);
        return FDS_ENOMEM;
    }
    *out = b.p;
    *outn = b.len;
    return 0;
}
