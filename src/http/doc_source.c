/*
 * doc_source.c: `_source` work of the document endpoints on the bytes of
 * JSON text -- which parts of a source an answer shows (get, mget, update:
 * Elasticsearch's FetchSourceContext) and the partial-document merge of
 * `_update` (Elasticsearch's XContentHelper#update).
 *
 * Both work on the text, never on a cJSON re-print: cJSON keeps numbers as
 * doubles (DESIGN.md §10), so a merge through it would change
 * 9007199254740993 in fields the update never named.  The inputs are JSON
 * that has been parsed once already (a stored source, a request body), so
 * the scanner here only finds token ends and does not validate.
 */
#include <stdlib.h>
#include <string.h>

#include "doc_source.h"
#include "fds_json_skip.h"
#include "search_render.h"

/* Member pairs one object level of a merge may compare (see merge_object):
 * 2^24, a few tens of milliseconds; two objects of 4,096 fields each. */
#define FDS_MERGE_PAIRS_MAX (16.0 * 1024 * 1024)

/* ---- scanning valid JSON text ------------------------------------------- */

static size_t ws(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}


/* A member of an object: key with its quotes, and value. */
typedef struct member {
    size_t ks, ke, vs, ve;
} member;

/* The member at s[*i] (just inside '{' or after a ','); false at the '}'.
 * *i moves past the member and its ','. */
static bool next_member(const char *s, size_t n, size_t *i, member *m)
{
    size_t p = ws(s, n, *i);
    if (p >= n || s[p] != '"')
        return false;
    m->ks = p;
    m->ke = fds_json_skip(s, n, p);
    p = ws(s, n, m->ke);
    p = ws(s, n, p + 1); /* the ':' */
    m->vs = p;
    m->ve = fds_json_skip(s, n, p);
    p = ws(s, n, m->ve);
    if (p < n && s[p] == ',')
        p++;
    *i = p;
    return true;
}

/* The member of the object at s[obj] whose key (quoted, as in the text)
 * equals key[0..kl); false when there is none.  Keys are compared as
 * written: "\u0061" and "a" are different keys here. */
static bool find_member(const char *s, size_t n, size_t obj, const char *key,
                        size_t kl, member *out)
{
    size_t i = obj + 1;
    member m;
    while (next_member(s, n, &i, &m))
        if (m.ke - m.ks == kl && !memcmp(s + m.ks, key, kl)) {
            *out = m;
            return true;
        }
    return false;
}

int fds__json_member(const char *s, size_t n, const char *key, size_t *vs,
                     size_t *ve)
{
    size_t obj = ws(s, n, 0);
    if (obj >= n || s[obj] != '{')
        return FDS_ENOTFOUND;
    size_t kl = strlen(key), i = obj + 1;
    member m;
    while (next_member(s, n, &i, &m))
        if (m.ke - m.ks == kl + 2 && !memcmp(s + m.ks + 1, key, kl)) {
            *vs = m.vs;
            *ve = m.ve;
            return 0;
        }
    return FDS_ENOTFOUND;
}

/* Are the values a[ai..) and b[bi..) equal as Elasticsearch compares the
 * parsed maps (Objects.equals: members in any order, arrays in order)?
 * Scalars compare by their text, so 1 and 1.0 differ as Integer and
 * Double do. */
static bool value_equal(const char *a, size_t an, size_t ai, const char *b,
                        size_t bn, size_t bi)
{
    ai = ws(a, an, ai);
    bi = ws(b, bn, bi);
    if (ai >= an || bi >= bn || a[ai] != b[bi])
        return ai >= an && bi >= bn;
    if (a[ai] == '{') {
        size_t i = ai + 1, count = 0;
        member m, o;
        while (next_member(a, an, &i, &m)) {
            count++;
            if (!find_member(b, bn, bi, a + m.ks, m.ke - m.ks, &o) ||
                !value_equal(a, an, m.vs, b, bn, o.vs))
                return false;
        }
        for (i = bi + 1; next_member(b, bn, &i, &o);)
            count--;
        return count == 0;
    }
    if (a[ai] == '[') {
        size_t i = ws(a, an, ai + 1), j = ws(b, bn, bi + 1);
        while (i < an && j < bn && a[i] != ']' && b[j] != ']') {
            if (!value_equal(a, an, i, b, bn, j))
                return false;
            i = ws(a, an, fds_json_skip(a, an, i));
            j = ws(b, bn, fds_json_skip(b, bn, j));
            if (i < an && a[i] == ',')
                i = ws(a, an, i + 1);
            if (j < bn && b[j] == ',')
                j = ws(b, bn, j + 1);
        }
        return i < an && j < bn && a[i] == ']' && b[j] == ']';
    }
    size_t ae = fds_json_skip(a, an, ai), be = fds_json_skip(b, bn, bi);
    return ae - ai == be - bi && !memcmp(a + ai, b + bi, ae - ai);
}

static void put_member(fds_strbuf *out, bool *first, const char *s, size_t ks,
                       size_t ke, const char *v, size_t vs, size_t ve)
{
    if (!*first)
        fds_strbuf_putc(out, ',');
    *first = false;
    fds_strbuf_put(out, s + ks, ke - ks);
    fds_strbuf_putc(out, ':');
    fds_strbuf_put(out, v + vs, ve - vs);
}

/* Members of the object at s[obj]. */
static size_t member_count(const char *s, size_t n, size_t obj)
{
    size_t i = obj + 1, c = 0;
    member m;
    while (next_member(s, n, &i, &m))
        c++;
    return c;
}

/* Merge the object chg[ci..) into old[oi..), appending the result.
 * Members are matched by a scan of the other object, so the work of one
 * object pair is the product of their member counts: past
 * FDS_MERGE_PAIRS_MAX the merge is refused (FDS_ETOOBIG) rather than let
 * one request take minutes. */
static int merge_object(fds_strbuf *out, const char *old, size_t on, size_t oi,
                        const char *chg, size_t cn, size_t ci, bool *modified)
{
    if ((double)member_count(old, on, oi) * (double)member_count(chg, cn, ci) >
        FDS_MERGE_PAIRS_MAX)
        return FDS_ETOOBIG;
    bool first = true;
    size_t i = oi + 1;
    member m, c;
    int rc = 0;
    fds_strbuf_putc(out, '{');
    while (!rc && next_member(old, on, &i, &m)) {
        if (!find_member(chg, cn, ci, old + m.ks, m.ke - m.ks, &c)) {
            put_member(out, &first, old, m.ks, m.ke, old, m.vs, m.ve);
        } else if (old[m.vs] == '{' && chg[c.vs] == '{') {
            put_member(out, &first, old, m.ks, m.ke, old, 0, 0);
            rc = merge_object(out, old, on, m.vs, chg, cn, c.vs, modified);
        } else {
            put_member(out, &first, old, m.ks, m.ke, chg, c.vs, c.ve);
            if (!value_equal(old, on, m.vs, chg, cn, c.vs))
                *modified = true;
        }
    }
    for (i = ci + 1; !rc && next_member(chg, cn, &i, &c);)
        if (!find_member(old, on, oi, chg + c.ks, c.ke - c.ks, &m)) {
            put_member(out, &first, chg, c.ks, c.ke, chg, c.vs, c.ve);
            *modified = true;
        }
    fds_strbuf_putc(out, '}');
    return rc;
}

int fds__json_merge(const char *old, size_t old_len, const char *chg,
                    size_t chg_len, fds_strbuf *out, bool *modified)
{
    size_t oi = ws(old, old_len, 0), ci = ws(chg, chg_len, 0);
    *modified = false;
    if (oi >= old_len || old[oi] != '{' || ci >= chg_len || chg[ci] != '{')
        return FDS_EINVAL;
    int rc = merge_object(out, old, old_len, oi, chg, chg_len, ci, modified);
    return rc ? rc : out->oom ? FDS_ENOMEM : 0;
}

/* ---- which parts of _source an answer shows --------------------------------- */

void fds__source_spec_free(fds__source_spec *s)
{
    for (size_t i = 0; i < s->ninc; i++)
        free(s->inc[i]);
    for (size_t i = 0; i < s->nexc; i++)
        free(s->exc[i]);
    free(s->inc);
    free(s->exc);
    s->inc = s->exc = NULL;
    s->ninc = s->nexc = 0;
}

static int add_pattern(char ***list, size_t *n, const char *p, size_t len,
                       fds_err *err)
{
    if (!len)
        return 0;
    if (len > FDS_SOURCE_PATTERN_LEN_MAX || *n >= FDS_SOURCE_PATTERNS_MAX)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "_source filtering takes at most %d patterns of at "
                            "most %d bytes each", FDS_SOURCE_PATTERNS_MAX,
                            FDS_SOURCE_PATTERN_LEN_MAX);
    char **q = realloc(*list, (*n + 1) * sizeof *q);
    if (!q)
        return FDS_ENOMEM;
    *list = q;
    if (!(q[*n] = strndup(p, len)))
        return FDS_ENOMEM;
    (*n)++;
    return 0;
}

/* Every comma-separated pattern of `v` into the list. */
static int add_patterns_csv(char ***list, size_t *n, const char *v, fds_err *err)
{
    int rc = 0;
    while (!rc && *v) {
        size_t l = strcspn(v, ",");
        rc = add_pattern(list, n, v, l, err);
        v += l + (v[l] == ',');
    }
    return rc;
}

static int add_patterns_json(char ***list, size_t *n, const cJSON *v,
                             const char *what, fds_err *err)
{
    if (cJSON_IsString(v))
        return add_pattern(list, n, v->valuestring, strlen(v->valuestring), err);
    if (!cJSON_IsArray(v))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[_source] %s must be a string or an array of "
                            "strings", what);
    int rc = 0;
    for (const cJSON *c = v->child; c && !rc; c = c->next) {
        if (!cJSON_IsString(c))
            return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                                "[_source] %s must be a string or an array of "
                                "strings", what);
        rc = add_pattern(list, n, c->valuestring, strlen(c->valuestring), err);
    }
    return rc;
}

int fds__source_spec_params(fds_req *r, fds__source_spec *s, fds_err *err)
{
    const char *src = fds__req_param(r, "_source");
    const char *inc = fds__req_param(r, "_source_includes");
    const char *exc = fds__req_param(r, "_source_excludes");
    int rc = 0;
    if (src) {
        s->given = true;
        if (!strcmp(src, "false"))
            s->fetch = false;
        else if (!*src || !strcmp(src, "true"))
            s->fetch = true;
        else {
            s->fetch = true;
            rc = add_patterns_csv(&s->inc, &s->ninc, src, err);
        }
    }
    if (!rc && inc) {
        s->given = s->fetch = true;
        rc = add_patterns_csv(&s->inc, &s->ninc, inc, err);
    }
    if (!rc && exc) {
        s->given = s->fetch = true;
        rc = add_patterns_csv(&s->exc, &s->nexc, exc, err);
    }
    return rc;
}

int fds__source_spec_json(const cJSON *v, fds__source_spec *s, fds_err *err)
{
    fds__source_spec_free(s);
    s->given = true;
    s->fetch = true;
    if (cJSON_IsBool(v)) {
        s->fetch = cJSON_IsTrue(v);
        return 0;
    }
    if (cJSON_IsString(v) || cJSON_IsArray(v))
        return add_patterns_json(&s->inc, &s->ninc, v, "includes", err);
    if (!cJSON_IsObject(v))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[_source] must be a boolean, a string, an array or "
                            "an object");
    int rc = 0;
    for (const cJSON *c = v->child; c && !rc; c = c->next) {
        if (!strcmp(c->string, "includes") || !strcmp(c->string, "include"))
            rc = add_patterns_json(&s->inc, &s->ninc, c, "includes", err);
        else if (!strcmp(c->string, "excludes") || !strcmp(c->string, "exclude"))
            rc = add_patterns_json(&s->exc, &s->nexc, c, "excludes", err);
        else
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                              "unknown key [%s] for [_source]: expected "
                              "[includes] or [excludes]", c->string);
    }
    return rc;
}

void fds__source_spec_put(fds_strbuf *b, const fds__source_spec *s,
                          const uint8_t *src, size_t n)
{
    fds__source_put(b, s->inc, s->ninc, s->exc, s->nexc, src, n);
}
