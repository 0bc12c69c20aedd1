/*
 * dsl_parse_qs.c: Lucene query strings -- the `query_string` and
 * `simple_query_string` queries and the q= URL parameter -- parsed into the
 * query tree through the DSL's own leaf parsers.
 *
 * Each leaf of the string becomes the DSL query Elasticsearch's
 * QueryStringQueryParser builds for it, parsed by fds__dsl_query (so field
 * types, analysis, clause counts and limits are those of the DSL):
 *   word            match on each default field (dis_max over several)
 *   f:word          match on f;  f:*  exists;  _exists_:f  exists;
 *                   `*` and `*:*` (every field)  match_all
 *   f:ab*           prefix (lower-cased on a text field, as the analyzer
 *                   normalizes it);  other `*` / `?`  wildcard
 *   f:/re/          regexp (index.max_regex_length applies)
 *   f:[a TO b] f:{a TO b} f:>=a f:<b ...   range (`*` leaves a side open)
 *   ( ... )         a group;  ^2  a boost;  \c  an escaped character
 * combined with AND / && / OR / || / NOT / ! / + / - by Lucene's
 * QueryParserBase.addClause rules under default_operator; `word~` and
 * `word~N` (N <= 2) are fuzzy queries (AUTO without N).  A quoted phrase
 * `"a b"` is a match_phrase on each default field, with the slop of a
 * following `~N` or else phrase_slop (Lucene's handleQuotedTerm; 0 by
 * default).  simple_query_string reads `+` (AND), `|` (OR), `-` (NOT),
 * `( )`, `"phrases"` with `~N`, a trailing `*` (prefix) and `\` escapes
 * only; everything else is text.
 *
 * Bounds: groups nest at most FDS_MAX_NESTED_DEPTH deep, and every leaf
 * counts against FDS_MAX_CLAUSE_COUNT (through fds__dsl_query).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "time/datemath.h"
#include "dsl/dsl_parse_int.h"

/* Bytes of one term of a query string (longer ones are refused). */
#define QS_TERM_MAX 4096

typedef struct qsp {
    fds__dsl_ctx *c;
    const fds__qs_opts *o;
    const char *s;
    size_t i, n;
    int depth;
} qsp;

enum { OCC_SHOULD, OCC_MUST, OCC_NOT };
enum { CONJ_NONE, CONJ_AND, CONJ_OR };

typedef struct clauses {
    fds_query **q;
    int *occ;
    size_t n;
} clauses;

static fds_query *qs_fail(qsp *p, const char *fmt, const char *what)
{
    fds_err_setk(p->c->err, FDS_EPARSE, FDS_KIND_QUERY_SHARD,
                 "Failed to parse query [%.200s]: %s%s", p->s, fmt,
                 what ? what : "");
    return NULL;
}

static void skip_ws(qsp *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
                           p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

/* Does the text at p->i start with word w followed by a separator? */
static bool at_word(const qsp *p, const char *w)
{
    size_t l = strlen(w);
    if (p->i + l > p->n || memcmp(p->s + p->i, w, l))
        return false;
    char nx = p->i + l < p->n ? p->s[p->i + l] : ' ';
    return nx == ' ' || nx == '\t' || nx == '(' || nx == '\n';
}

/* One term.  raw keeps escapes (for wildcard patterns), plain drops them;
 * *wild is set by an unescaped * or ?.  Stops at a separator. */
typedef struct term {
    char raw[QS_TERM_MAX], plain[QS_TERM_MAX];
    size_t rn, pn;
    bool wild, escaped, only_trailing_star;
} term;

static bool stop_char(const qsp *p, char ch)
{
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '(' ||
        ch == ')')
        return true;
    if (p->o->simple)
        return ch == '|' || ch == '+' || ch == '~';
    return ch == ':' || ch == '^' || ch == '~' || ch == '[' || ch == ']' ||
           ch == '{' || ch == '}' || ch == '"';
}

static int read_term(qsp *p, term *t)
{
    t->rn = t->pn = 0;
    t->wild = t->escaped = false;
    size_t nstar = 0;
    while (p->i < p->n && !stop_char(p, p->s[p->i])) {
        char ch = p->s[p->i++];
        if (t->rn + 2 >= QS_TERM_MAX)
            return -1;
        if (ch == '\\' && p->i < p->n) {
            t->escaped = true;
            t->raw[t->rn++] = ch;
            ch = p->s[p->i++];
            t->raw[t->rn++] = ch;
            t->plain[t->pn++] = ch;
            continue;
        }
        if (ch == '*' || (ch == '?' && !p->o->simple)) {
            t->wild = true;
            nstar += ch == '*';
        }
        t->raw[t->rn++] = ch;
        t->plain[t->pn++] = ch;
    }
    t->raw[t->rn] = t->plain[t->pn] = 0;
    t->only_trailing_star = t->wild && !t->escaped && nstar == 1 &&
                            t->pn > 1 && t->plain[t->pn - 1] == '*' &&
                            !memchr(t->plain, '?', t->pn);
    return 0;
}

/* A DSL query {type: {field: body}} (body taken) parsed; lenient turns a
 * value the field cannot take into match_none. */
static fds_query *leaf(qsp *p, const char *type, const char *field,
                       cJSON *body)
{
    cJSON *q = cJSON_CreateObject();
    cJSON *t = q ? cJSON_AddObjectToObject(q, type) : NULL;
    if (!t || !cJSON_AddItemToObject(t, field, body)) {
        if (!t)
            cJSON_Delete(body);
        cJSON_Delete(q);
        return NULL;
    }
    fds_query *r = fds__dsl_query(p->c, q);
    cJSON_Delete(q);
    fds_err *e = p->c->err;
    if (!r && p->o->lenient && e &&
        (e->kind == FDS_KIND_NUMBER_FORMAT || e->kind == FDS_KIND_PARSE ||
         (e->kind == FDS_KIND_QUERY_SHARD && e->code != FDS_ETOOBIG))) {
        fds_err_clear(e);
        r = fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
    }
    return r;
}

/* Is `field` a text field (its wildcard terms are lower-cased)? */
static bool is_text(qsp *p, const char *field)
{
    fds_field_info fb;
    const fds_field_info *f = fds__dsl_field(p->c, field, &fb);
    return f && f->type == FDS_FT_TEXT;
}

/* The query of term t on one field. */
static fds_query *term_on(qsp *p, const char *field, const term *t,
                          bool regex)
{
    if (regex)
        return leaf(p, "regexp", field, cJSON_CreateString(t->plain));
    if (!t->wild) /* _id is answered by the _id table (a term query) */
        return leaf(p, strcmp(field, "_id") ? "match" : "term", field,
                    cJSON_CreateString(t->plain));
    if (!strcmp(t->plain, "*") && !t->escaped) {
        cJSON *b = cJSON_CreateString(field);
        cJSON *q = cJSON_CreateObject();
        if (!b || !q || !cJSON_AddItemToObject(q, "field", b)) {
            cJSON_Delete(b);
            cJSON_Delete(q);
            return NULL;
        }
        cJSON *w = cJSON_CreateObject();
        if (!w || !cJSON_AddItemToObject(w, "exists", q)) {
            cJSON_Delete(w);
            cJSON_Delete(q);
            return NULL;
        }
        fds_query *r = fds__dsl_query(p->c, w);
        cJSON_Delete(w);
        return r;
    }
    if (t->only_trailing_star) {
        char buf[QS_TERM_MAX];
        size_t n = t->pn - 1, ln = n;
        char *low = is_text(p, field) ? fds__dsl_lower(t->plain, n, &ln) : NULL;
        if (low && ln < sizeof buf) {
            memcpy(buf, low, ln);
        } else {
            memcpy(buf, t->plain, n);
            ln = n;
        }
        free(low);
        buf[ln] = 0;
        return leaf(p, "prefix", field, cJSON_CreateString(buf));
    }
    return leaf(p, "wildcard", field, cJSON_CreateString(t->raw));
}

typedef struct phrase_arg {
    const char *text;
    int slop;
} phrase_arg;

/* A quoted phrase on one field: match_phrase with its slop. */
static fds_query *phrase_cb(qsp *p, const char *field, void *arg);

/* The default fields' queries for one term combined: dis_max (tie 0, as
 * Elasticsearch's best_fields) over several, the one itself, or
 * match_none for none. */
typedef fds_query *(*per_field_fn)(qsp *p, const char *field, void *arg);

static fds_query *on_fields(qsp *p, const char *field, per_field_fn fn,
                            void *arg)
{
    if (field)
        return fn(p, field, arg);
    const fds__qs_opts *o = p->o;
    if (o->nfields == 1 || (o->nfields == 0 && o->df && *o->df)) {
        fds_query *q = fn(p, o->nfields ? o->fields[0] : o->df, arg);
        if (q && o->nfields && o->boosts)
            q->boost *= o->boosts[0];
        return q;
    }
    char **names = NULL;
    size_t nn = 0;
    const char *const *fl = o->fields;
    size_t nf = o->nfields;
    if (!nf && p->c->m) { /* every text and keyword field (lenient) */
        char **k = NULL;
        size_t nk = 0;
        if (fds_mapping_fields_of_type(p->c->m, FDS_FT_TEXT, &names, &nn) ||
            fds_mapping_fields_of_type(p->c->m, FDS_FT_KEYWORD, &k, &nk)) {
            for (size_t i = 0; i < nn; i++)
                free(names[i]);
            free(names);
            free(k);
            return NULL;
        }
        char **all = realloc(names, (nn + nk + 1) * sizeof *all);
        if (!all) {
            for (size_t i = 0; i < nn; i++)
                free(names[i]);
            for (size_t i = 0; i < nk; i++)
                free(k[i]);
            free(names);
            free(k);
            return NULL;
        }
        memcpy(all + nn, k, nk * sizeof *k);
        free(k);
        names = all;
        nn += nk;
        fl = (const char *const *)names;
        nf = nn;
    }
    fds_query *d = fds__dsl_qnew(nf ? FDS_Q_DISMAX : FDS_Q_MATCH_NONE, NULL);
    for (size_t i = 0; d && i < nf; i++) {
        fds_query *q = fn(p, fl[i], arg);
        if (q && o->boosts && o->nfields)
            q->boost *= o->boosts[i];
        if (!q || fds__dsl_push(&d->should, &d->nshould, q)) {
            fds__query_free(q);
            fds__query_free(d);
            d = NULL;
        }
    }
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    return d;
}

typedef struct term_arg {
    const term *t;
    bool regex;
    int fuzzy; /* -2: not fuzzy, -1: AUTO, else the edits */
} term_arg;

/* term~ / term~N: a fuzzy query (lower-cased on a text field, as the
 * analyzer normalizes it). */
static fds_query *fuzzy_on(qsp *p, const char *field, const term *t, int edits)
{
    size_t ln = t->pn;
    char *low = is_text(p, field) ? fds__dsl_lower(t->plain, t->pn, &ln) : NULL;
    cJSON *b = cJSON_CreateObject();
    if (b) {
        cJSON_AddStringToObject(b, "value", low ? low : t->plain);
        if (edits < 0)
            cJSON_AddStringToObject(b, "fuzziness", "AUTO");
        else
            cJSON_AddNumberToObject(b, "fuzziness", edits);
    }
    free(low);
    return b ? leaf(p, "fuzzy", field, b) : NULL;
}

static fds_query *phrase_cb(qsp *p, const char *field, void *arg)
{
    const phrase_arg *a = arg;
    cJSON *b = cJSON_CreateObject();
    if (!b || !cJSON_AddStringToObject(b, "query", a->text) ||
        !cJSON_AddNumberToObject(b, "slop", a->slop)) {
        cJSON_Delete(b);
        return NULL;
    }
    return leaf(p, "match_phrase", field, b);
}

/* A quoted phrase at p->i (the opening quote) and its `~N`. */
static fds_query *parse_phrase(qsp *p, const char *field)
{
    char *buf = malloc(QS_TERM_MAX);
    if (!buf)
        return NULL;
    size_t bn = 0;
    for (p->i++; p->i < p->n && p->s[p->i] != '"'; p->i++) {
        if (p->s[p->i] == '\\' && p->i + 1 < p->n)
            p->i++;
        if (bn + 1 >= QS_TERM_MAX) {
            free(buf);
            return qs_fail(p, "a phrase is too long", NULL);
        }
        buf[bn++] = p->s[p->i];
    }
    buf[bn] = 0;
    if (p->i >= p->n) {
        free(buf);
        return qs_fail(p, "a phrase is not closed with '\"'", NULL);
    }
    p->i++;
    phrase_arg a = {buf, p->o->phrase_slop};
    if (p->i < p->n && p->s[p->i] == '~') { /* "a b"~N: N read as a float */
        size_t e = ++p->i;
        while (e < p->n && (isdigit((unsigned char)p->s[e]) || p->s[e] == '.'))
            e++;
        if (e > p->i) {
            char num[32];
            size_t l = e - p->i < sizeof num - 1 ? e - p->i : sizeof num - 1;
            memcpy(num, p->s + p->i, l);
            num[l] = 0;
            double v = strtod(num, NULL);
            a.slop = v > 2147483647.0 ? 2147483647 : (int)v;
        }
        p->i = e;
    }
    fds_query *q = on_fields(p, field, phrase_cb, &a);
    free(buf);
    return q;
}

static fds_query *term_cb(qsp *p, const char *field, void *arg)
{
    const term_arg *a = arg;
    if (a->fuzzy > -2)
        return fuzzy_on(p, field, a->t, a->fuzzy);
    return term_on(p, field, a->t, a->regex);
}

typedef struct range_arg {
    const char *lo, *hi;
    bool lo_incl, hi_incl;
} range_arg;

static fds_query *range_cb(qsp *p, const char *field, void *arg)
{
    const range_arg *a = arg;
    cJSON *b = cJSON_CreateObject();
    if (!b)
        return NULL;
    if (a->lo && strcmp(a->lo, "*"))
        cJSON_AddStringToObject(b, a->lo_incl ? "gte" : "gt", a->lo);
    if (a->hi && strcmp(a->hi, "*"))
        cJSON_AddStringToObject(b, a->hi_incl ? "lte" : "lt", a->hi);
    fds_field_info fb;
    const fds_field_info *f = fds__dsl_field(p->c, field, &fb);
    if (p->o->time_zone && f && f->type == FDS_FT_DATE)
        cJSON_AddStringToObject(b, "time_zone", p->o->time_zone);
    return leaf(p, "range", field, b);
}

/* A ^boost after a clause.  0 or -1 (error filled). */
static int boost_after(qsp *p, fds_query *q)
{
    if (p->o->simple || p->i >= p->n || p->s[p->i] != '^')
        return 0;
    p->i++;
    char *end;
    double b = strtod(p->s + p->i, &end);
    if (end == p->s + p->i || !isfinite(b) || b < 0) {
        qs_fail(p, "a boost must be a non-negative number", NULL);
        return -1;
    }
    p->i = (size_t)(end - p->s);
    q->boost *= (float)b;
    return 0;
}

static fds_query *parse_query(qsp *p, const char *field);
static fds_query *parse_clause(qsp *p, const char *field);

/* [a TO b] or {a TO b} after its bracket. */
static fds_query *parse_range(qsp *p, const char *field, bool lo_incl)
{
    term lo, hi;
    skip_ws(p);
    if (read_term(p, &lo))
        return qs_fail(p, "a term is too long", NULL);
    skip_ws(p);
    if (!at_word(p, "TO"))
        return qs_fail(p, "a range needs [TO]", NULL);
    p->i += 2;
    skip_ws(p);
    if (read_term(p, &hi))
        return qs_fail(p, "a term is too long", NULL);
    skip_ws(p);
    if (p->i >= p->n || (p->s[p->i] != ']' && p->s[p->i] != '}'))
        return qs_fail(p, "a range must end with ] or }", NULL);
    range_arg a = {lo.plain, hi.plain, lo_incl, p->s[p->i] == ']'};
    p->i++;
    return on_fields(p, field, range_cb, &a);
}

/* One clause: a group, a range, a regexp, a term (maybe field:...). */
/* A /regexp/ clause on `field` (NULL: the default fields). */
static fds_query *clause_regexp(qsp *p, const char *field)
{
    size_t e = p->i + 1;
    while (e < p->n && p->s[e] != '/')
        e += p->s[e] == '\\' && e + 1 < p->n ? 2 : 1;
    if (e >= p->n)
        return qs_fail(p, "a regular expression is not closed with '/'",
                       NULL);
    term *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    size_t len = e - p->i - 1;
    if (len >= QS_TERM_MAX) {
        free(t);
        return qs_fail(p, "a term is too long", NULL);
    }
    memcpy(t->plain, p->s + p->i + 1, len);
    t->plain[len] = 0;
    t->pn = len;
    p->i = e + 1;
    term_arg a = {t, true, -2};
    fds_query *q = on_fields(p, field, term_cb, &a);
    free(t);
    return q;
}

/* A >x, >=x, <x or <=x clause (`ch` its first character). */
static fds_query *clause_compare(qsp *p, const char *field, char ch)
{
    fds_query *q;
    bool gt = ch == '>';
    p->i++;
    bool incl = p->i < p->n && p->s[p->i] == '=';
    p->i += incl;
    term *t = malloc(sizeof *t);
    if (!t || read_term(p, t)) {
        free(t);
        return t ? qs_fail(p, "a term is too long", NULL) : NULL;
    }
    range_arg a = {gt ? t->plain : NULL, gt ? NULL : t->plain, incl, incl};
    q = on_fields(p, field, range_cb, &a);
    free(t);
    return q;
}

/* A term clause: `field:clause`, `_exists_:field`, a word, a wildcard
 * or a fuzzy term (~N), with its ^boost. */
static fds_query *clause_term(qsp *p, const char *field)
{
    fds_query *q;
    term *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    if (read_term(p, t)) {
        free(t);
        return qs_fail(p, "a term is too long", NULL);
    }
    if (!p->o->simple && !field && p->i < p->n && p->s[p->i] == ':' &&
        t->pn) {
        p->i++;
        if (!strcmp(t->plain, "_exists_")) {
            term *f = malloc(sizeof *f);
            if (!f || (skip_ws(p), read_term(p, f))) {
                free(f);
                free(t);
                return NULL;
            }
            cJSON *b = cJSON_CreateString(f->plain);
            q = leaf(p, "exists", "field", b);
            free(f);
        } else {
            /* `*:` is every field, as with no field */
            q = parse_clause(p, strcmp(t->plain, "*") ? t->plain : NULL);
        }
        free(t);
        return q && boost_after(p, q) ? (fds__query_free(q), NULL) : q;
    }
    if (!t->pn) {
        free(t);
        char bad[2] = {p->i < p->n ? p->s[p->i] : ' ', 0};
        return qs_fail(p, "unexpected character ", bad);
    }
    int fz = -2;
    if (p->i < p->n && p->s[p->i] == '~') { /* fuzzy: ~, ~0, ~1, ~2 */
        p->i++;
        fz = -1;
        if (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '2' &&
            (p->i + 1 >= p->n || !isdigit((unsigned char)p->s[p->i + 1]))) {
            fz = p->s[p->i++] - '0';
        } else if (p->i < p->n && isdigit((unsigned char)p->s[p->i])) {
            free(t);
            return qs_fail(p, "a fuzzy term takes at most 2 edits", NULL);
        }
        if (t->wild) {
            free(t);
            return qs_fail(p, "a wildcard term cannot be fuzzy", NULL);
        }
    }
    term_arg a = {t, false, fz};
    const fds__qs_opts *o = p->o;
    if (!field && !o->nfields && (!o->df || !*o->df) && fz == -2 &&
        !strcmp(t->plain, "*") && !t->escaped)
        q = fds__dsl_qnew(FDS_Q_MATCH_ALL, NULL); /* `*`, `*:*` */
    else
        q = on_fields(p, field, term_cb, &a);
    free(t);
    if (q && boost_after(p, q)) {
        fds__query_free(q);
        return NULL;
    }
    return q;
}

static fds_query *parse_clause(qsp *p, const char *field)
{
    skip_ws(p);
    if (p->i >= p->n)
        return qs_fail(p, "a clause is missing", NULL);
    char ch = p->s[p->i];
    fds_query *q = NULL;
    if (ch == '(') {
        p->i++;
        if (++p->depth > FDS_MAX_NESTED_DEPTH) {
            fds_err_setk(p->c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                         "The nested depth of the query exceeds the maximum "
                         "nested depth for queries set in "
                         "[indices.query.bool.max_nested_depth]");
            return NULL;
        }
        q = parse_query(p, field);
        p->depth--;
        if (!q)
            return NULL;
        if (p->i >= p->n || p->s[p->i] != ')') {
            fds__query_free(q);
            return qs_fail(p, "a group is not closed with ')'", NULL);
        }
        p->i++;
    } else if (ch == '"') {
        q = parse_phrase(p, field);
        if (!q)
            return NULL;
    } else if (!p->o->simple && (ch == '[' || ch == '{')) {
        p->i++;
        q = parse_range(p, field, ch == '[');
    } else if (!p->o->simple && ch == '/') {
        q = clause_regexp(p, field);
    } else if (!p->o->simple && (ch == '>' || ch == '<')) {
        q = clause_compare(p, field, ch);
    } else {
        return clause_term(p, field);
    }
    if (q && boost_after(p, q)) {
        fds__query_free(q);
        return NULL;
    }
    return q;
}

/* Lucene's QueryParserBase.addClause. */
static int add_clause(qsp *p, clauses *cl, int conj, int mod_not,
                      int mod_req, fds_query *q)
{
    if (cl->n && conj == CONJ_AND && cl->occ[cl->n - 1] != OCC_NOT)
        cl->occ[cl->n - 1] = OCC_MUST;
    if (cl->n && p->o->and_op && conj == CONJ_OR &&
        cl->occ[cl->n - 1] != OCC_NOT)
        cl->occ[cl->n - 1] = OCC_SHOULD;
    bool required, prohibited = mod_not;
    if (!p->o->and_op)
        required = mod_req || (conj == CONJ_AND && !prohibited);
    else
        required = !prohibited && conj != CONJ_OR;
    int occ = prohibited ? OCC_NOT : required ? OCC_MUST : OCC_SHOULD;
    fds_query **nq = realloc(cl->q, (cl->n + 1) * sizeof *nq);
    if (nq)
        cl->q = nq;
    int *no = nq ? realloc(cl->occ, (cl->n + 1) * sizeof *no) : NULL;
    if (!no) {
        fds__query_free(q);
        return FDS_ENOMEM;
    }
    cl->occ = no;
    cl->q[cl->n] = q;
    cl->occ[cl->n++] = occ;
    return 0;
}

static void clauses_free(clauses *cl)
{
    for (size_t i = 0; i < cl->n; i++)
        fds__query_free(cl->q[i]);
    free(cl->q);
    free(cl->occ);
}

/* Clauses up to ')' or the end, as one bool (or the only clause). */
static fds_query *parse_query(qsp *p, const char *field)
{
    clauses cl = {0};
    int conj = CONJ_NONE, mod_not = 0, mod_req = 0;
    for (;;) {
        skip_ws(p);
        if (p->i >= p->n || p->s[p->i] == ')')
            break;
        char ch = p->s[p->i];
        bool simple = p->o->simple;
        if ((!simple && (at_word(p, "AND") || at_word(p, "&&"))) ||
            (simple && ch == '+' && cl.n)) {
            p->i += simple ? 1 : p->s[p->i] == '&' ? 2 : 3;
            conj = CONJ_AND;
            continue;
        }
        if ((!simple && (at_word(p, "OR") || at_word(p, "||"))) ||
            (simple && ch == '|')) {
            p->i += simple ? 1 : 2;
            conj = CONJ_OR;
            continue;
        }
        if (!simple && (at_word(p, "NOT") || ch == '!')) {
            p->i += ch == '!' ? 1 : 3;
            mod_not = 1;
            continue;
        }
        if (ch == '-' || ch == '+') {
            p->i++;
            mod_not |= ch == '-';
            mod_req |= ch == '+';
            continue;
        }
        fds_query *q = parse_clause(p, field);
        if (!q || add_clause(p, &cl, conj, mod_not, mod_req, q)) {
            clauses_free(&cl);
            return NULL;
        }
        conj = CONJ_NONE;
        mod_not = mod_req = 0;
    }
    if (cl.n == 1 && cl.occ[0] != OCC_NOT) {
        fds_query *only = cl.q[0];
        free(cl.q);
        free(cl.occ);
        return only;
    }
    fds_query *b = fds__dsl_qnew(cl.n ? FDS_Q_BOOL : FDS_Q_MATCH_NONE, NULL);
    for (size_t i = 0; b && i < cl.n; i++) {
        fds_query ***l = cl.occ[i] == OCC_MUST ? &b->must
                       : cl.occ[i] == OCC_NOT ? &b->must_not : &b->should;
        size_t *ln = cl.occ[i] == OCC_MUST ? &b->nmust
                   : cl.occ[i] == OCC_NOT ? &b->nmust_not : &b->nshould;
        if (fds__dsl_push(l, ln, cl.q[i])) {
            fds__query_free(b);
            b = NULL;
            break;
        }
        cl.q[i] = NULL;
    }
    clauses_free(&cl);
    return b;
}

fds_query *fds__dsl_qs_parse(fds__dsl_ctx *c, const char *q,
                             const fds__qs_opts *o)
{
    qsp p = {.c = c, .o = o, .s = q, .n = strlen(q)};
    fds__qs_opts all = *o;
    /* every field (no df, no fields): lenient, as Elasticsearch is for "*" */
    if (!o->nfields && (!o->df || !*o->df))
        all.lenient = true;
    p.o = &all;
    fds_query *r = parse_query(&p, NULL);
    if (r && p.i < p.n) {
        fds__query_free(r);
        return qs_fail(&p, "unbalanced ')'", NULL);
    }
    if (!r && c->err && !c->err->code)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return r;
}

/* Most fields a query_string may name in `fields`. */
#define QS_FIELDS_MAX 64

fds_query *fds__dsl_query_string(fds__dsl_ctx *c, const cJSON *body,
                                 bool simple)
{
    const char *qn = simple ? "simple_query_string" : "query_string";
    if (!cJSON_IsObject(body)) {
        fds__dsl_err(c->err, "[%s] query malformed, no start_object after "
                             "query name", qn);
        return NULL;
    }
    const char *text = NULL;
    char *names[QS_FIELDS_MAX];
    float boosts[QS_FIELDS_MAX];
    size_t nf = 0;
    fds__qs_opts o = {0};
    float boost = 1.0f, tie = 0.0f;
    const cJSON *it;
    int rc = 0;
    cJSON_ArrayForEach(it, body) {
        const char *k = it->string;
        if (!strcmp(k, "query") && cJSON_IsString(it))
            text = it->valuestring;
        else if (!simple && !strcmp(k, "default_field") && cJSON_IsString(it))
            o.df = !strcmp(it->valuestring, "*") ? "" : it->valuestring;
        else if (!strcmp(k, "fields") && cJSON_IsArray(it)) {
            const cJSON *f;
            cJSON_ArrayForEach(f, it) {
                if (!cJSON_IsString(f) || nf >= QS_FIELDS_MAX) {
                    rc = fds__dsl_err(c->err, "[%s] [fields] must be at most "
                                      "%d field names", qn, QS_FIELDS_MAX);
                    break;
                }
                const char *s = f->valuestring, *caret = strchr(s, '^');
                size_t l = caret ? (size_t)(caret - s) : strlen(s);
                if (l == 1 && s[0] == '*')
                    continue; /* "*": every field, as with none */
                names[nf] = fds__dsl_dupn(s, l);
                boosts[nf] = caret ? strtof(caret + 1, NULL) : 1.0f;
                if (!names[nf]) {
                    rc = FDS_ENOMEM;
                    break;
                }
                nf++;
            }
        } else if (!strcmp(k, "default_operator") && cJSON_IsString(it) &&
                   (!strcasecmp(it->valuestring, "and") ||
                    !strcasecmp(it->valuestring, "or")))
            o.and_op = !strcasecmp(it->valuestring, "and");
        else if (!strcmp(k, "lenient") && cJSON_IsBool(it))
            o.lenient = cJSON_IsTrue(it);
        else if (!strcmp(k, "analyze_wildcard") && cJSON_IsBool(it))
            o.analyze_wildcard = cJSON_IsTrue(it);
        else if (!strcmp(k, "boost") && cJSON_IsNumber(it))
            boost = (float)it->valuedouble;
        else if (!simple && !strcmp(k, "tie_breaker") && cJSON_IsNumber(it))
            tie = (float)it->valuedouble;
        else if (!simple && !strcmp(k, "phrase_slop") && cJSON_IsNumber(it) &&
                 it->valuedouble >= 0 && it->valuedouble <= 2147483647.0 &&
                 it->valuedouble == floor(it->valuedouble))
            o.phrase_slop = (int)it->valuedouble;
        else if (!simple && !strcmp(k, "time_zone") && cJSON_IsString(it)) {
            /* date ranges only (Kibana sends it); checked here, as
             * Elasticsearch's builder reads it with ZoneId.of */
            fds_tz tz;
            o.time_zone = it->valuestring;
            if (fds__tz_parse(it->valuestring, strlen(it->valuestring), &tz))
                rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                  "Unknown time-zone ID: %s", it->valuestring);
        }
        else if ((!strcmp(k, "analyzer") && cJSON_IsString(it) &&
                  !strcmp(it->valuestring, "standard")) ||
                 (!strcmp(k, "type") && cJSON_IsString(it) &&
                  !strcmp(it->valuestring, "best_fields")) ||
                 (!strcmp(k, "allow_leading_wildcard") && cJSON_IsTrue(it)) ||
                 (simple && !strcmp(k, "flags") && cJSON_IsString(it) &&
                  !strcmp(it->valuestring, "ALL")))
            continue;
        else
            rc = fds__dsl_err(c->err, "[%s] query does not support [%s] "
                              "(or this value of it)", qn, k);
        if (rc)
            break;
    }
    if (!rc && !text)
        rc = fds__dsl_err(c->err, "[%s] requires a [query]", qn);
    fds_query *q = NULL;
    if (!rc) {
        o.fields = (const char *const *)names;
        o.boosts = boosts;
        o.nfields = nf;
        o.simple = simple;
        q = fds__dsl_qs_parse(c, text, &o);
    }
    for (size_t i = 0; i < nf; i++)
        free(names[i]);
    if (q) {
        q->boost *= boost;
        if (q->type == FDS_Q_DISMAX)
            q->tie = tie;
    }
    if (rc == FDS_ENOMEM)
        fds_err_setk(c->err, rc, FDS_KIND_INTERNAL, "out of memory");
    return q;
}
