/*
 * dsl_util.c: the small helpers every parser of a search shares -- errors
 * of kind FDS_KIND_QUERY_PARSE, JSON values as text and their token names,
 * field lookup and the fields a pattern matches, query nodes and clause
 * lists, minimum_should_match, the common parts of a leaf query body
 * (its one field, its boost) and the analysed tokens of a text.  They
 * call no parser, so every parser of src/query/dsl (and the aggregation
 * parser) depends on this file and on nothing it calls back.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "mapping/analysis.h"
#include "dsl/dsl_parse_int.h"
#include "fds_text.h"

int fds__dsl_err(fds_err *err, const char *fmt, ...)
{
    char buf[FDS_ERR_REASON_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return fds_err_setk(err, FDS_EPARSE, FDS_KIND_QUERY_PARSE, "%s", buf);
}

char *fds__dsl_dupn(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

const char *fds__dsl_jtype(const cJSON *j)
{
    if (cJSON_IsObject(j)) return "START_OBJECT";
    if (cJSON_IsArray(j)) return "START_ARRAY";
    if (cJSON_IsString(j)) return "VALUE_STRING";
    if (cJSON_IsNumber(j)) return "VALUE_NUMBER";
    if (cJSON_IsBool(j)) return "VALUE_BOOLEAN";
    return "VALUE_NULL";
}

bool fds__dsl_scalar(const fds__dsl_ctx *c, const cJSON *v, char *buf,
                     size_t cap, const char **s, size_t *n)
{
    if (cJSON_IsString(v)) {
        *s = v->valuestring;
        *n = strlen(v->valuestring);
        for (size_t i = 0; i < c->nraw; i++)
            if (c->raw[i].node == v) {
                *s = c->raw[i].s;
                *n = c->raw[i].n;
            }
        return true;
    }
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d == floor(d) && fabs(d) < 9.007199254740992e15)
            snprintf(buf, cap, "%.0f", d);
        else
            snprintf(buf, cap, "%.17g", d);
        *s = buf;
        *n = strlen(buf);
        return true;
    }
    if (cJSON_IsBool(v)) {
        snprintf(buf, cap, "%s", cJSON_IsTrue(v) ? "true" : "false");
        *s = buf;
        *n = strlen(buf);
        return true;
    }
    return false;
}

/* The mapped field `name` (filled into *buf), or NULL when unmapped. */
const fds_field_info *fds__dsl_field(fds__dsl_ctx *c, const char *name,
                                      fds_field_info *buf)
{
    if (!c->m || fds_mapping_field(c->m, name, strlen(name), buf))
        return NULL;
    return buf;
}

fds_query *fds__dsl_qnew(int type, const char *field)
{
    fds_query *q = fds__query_new(type);
    if (q && field) {
        q->field = fds__dsl_dupn(field, strlen(field));
        q->field_len = strlen(field);
        if (!q->field) {
            fds__query_free(q);
            return NULL;
        }
    }
    return q;
}

int fds__dsl_push(fds_query ***list, size_t *n, fds_query *k)
{
    fds_query **nl = realloc(*list, (*n + 1) * sizeof **list);
    if (!nl)
        return FDS_ENOMEM;
    *list = nl;
    nl[(*n)++] = k;
    return 0;
}

/* Count `x` (a clause count, negative = "all but") resolved against `n`
 * optional clauses, clamped to [0, n + 1] before any conversion to int so
 * that huge or non-finite values (fuzzers find 3.3e23) have no undefined
 * behaviour.  n + 1 keeps "more than there are" unsatisfiable. */
static int msm_count(double x, int n)
{
    if (x != x)
        return 0;
    if (x < 0) {
        double k = -x > n ? n : -x;
        return n - (int)k;
    }
    return x > (double)n + 1 ? n + 1 : (int)x;
}

int fds__dsl_msm(fds__dsl_ctx *c, const cJSON *v, int n, int *out)
{
    if (cJSON_IsNumber(v)) {
        *out = msm_count(v->valuedouble, n);
    } else if (cJSON_IsString(v)) {
        const char *s = v->valuestring;
        char *end;
        double x = strtod(s, &end);
        if (end == s || (*end && strcmp(end, "%") != 0) || !isfinite(x))
            return fds__dsl_err(c->err,
                                "Failed to parse [minimum_should_match] "
                                "value [%s]",
                                s);
        if (*end == '%') {
            double pct = fabs(x) > 100.0 ? 100.0 : fabs(x);
            int k = (int)floor(n * pct / 100.0);
            *out = x < 0 ? n - k : k;
        } else {
            *out = msm_count(x, n);
        }
    } else {
        return fds__dsl_err(c->err,
                            "[minimum_should_match] must be a number or a "
                            "string");
    }
    if (*out < 0)
        *out = 0;
    return 0;
}

int fds__dsl_no_fielddata(fds__dsl_ctx *c, const char *name)
{
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "Text fields are not optimised for operations that "
                        "require per-document field data like aggregations and "
                        "sorting, so these operations are disabled by default. "
                        "Please use a keyword field instead. Alternatively, set "
                        "fielddata=true on [%s] in order to load field data by "
                        "uninverting the inverted index. Note that this can use "
                        "significant memory.", name);
}

/* A text field mapped with "index": false has no postings and no doc
 * values: a query on it is Elasticsearch's "Cannot search on field [f]
 * since it is not indexed" (other types still answer from their doc
 * values, as Elasticsearch 8 does).  True with the error filled. */
bool fds__dsl_not_searchable(fds__dsl_ctx *c, const fds_field_info *f)
{
    if (!f || f->index || f->type != FDS_FT_TEXT)
        return false;
    fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                 "failed to create query: Cannot search on field [%s] since it "
                 "is not indexed.", f->path);
    return true;
}

static int tok_cb(void *arg, const char *t, size_t n)
{
    fds__dsl_toks *v = arg;
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 8;
        char **nt = realloc(v->t, nc * sizeof *nt);
        if (!nt)
            return FDS_ENOMEM;
        v->t = nt;
        size_t *nl = realloc(v->l, nc * sizeof *nl);
        if (!nl)
            return FDS_ENOMEM;
        v->l = nl;
        v->cap = nc;
    }
    v->t[v->n] = fds__dsl_dupn(t, n);
    if (!v->t[v->n])
        return FDS_ENOMEM;
    v->l[v->n++] = n;
    return 0;
}

int fds__dsl_tokens(const char *s, size_t n, fds__dsl_toks *v)
{
    return fds_analyze(s, n, tok_cb, v);
}

void fds__dsl_toks_free(fds__dsl_toks *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->t[i]);
    free(v->t);
    free(v->l);
}

/* The single "field": value member of a leaf query body. */
int fds__dsl_leaf_field(fds__dsl_ctx *c, const cJSON *body, const char *qname,
                      const cJSON **fld)
{
    if (!cJSON_IsObject(body))
        return fds__dsl_err(c->err,
                            "[%s] query malformed, no start_object after "
                            "query name",
                            qname);
    const cJSON *it, *found = NULL;
    cJSON_ArrayForEach(it, body) {
        if (strcmp(it->string, "boost") == 0)
            continue;
        if (found)
            return fds__dsl_err(c->err,
                                "[%s] query doesn't support multiple fields, "
                                "found [%s] and [%s]",
                                qname, found->string, it->string);
        found = it;
    }
    if (!found)
        return fds__dsl_err(c->err, "[%s] query requires a field", qname);
    *fld = found;
    return 0;
}

float fds__dsl_boost(const cJSON *o)
{
    const cJSON *b =
        cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "boost") : NULL;
    return cJSON_IsNumber(b) ? (float)b->valuedouble : 1.0f;
}

char *fds__dsl_lower(const char *s, size_t n, size_t *out_len)
{
    char *o = malloc(n * 4 + 1);
    if (!o)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t ch;
        utf8proc_ssize_t w = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                              (utf8proc_ssize_t)(n - i), &ch);
        if (w <= 0) {
            o[k++] = s[i++];
            continue;
        }
        k += (size_t)utf8proc_encode_char(utf8proc_tolower(ch),
                                          (utf8proc_uint8_t *)o + k);
        i += (size_t)w;
    }
    o[k] = 0;
    *out_len = k;
    return o;
}

/* The leaf field types a pattern resolves to (multi_match, exists,
 * query_string fields). */
static const int LEAF_TYPES[] = {FDS_FT_TEXT, FDS_FT_KEYWORD, FDS_FT_LONG,
                               FDS_FT_DOUBLE, FDS_FT_DATE, FDS_FT_BOOLEAN};

int fds__dsl_fields_matching(fds__dsl_ctx *c, const char *pat,
                             int (*cb)(void *arg, const char *path), void *arg)
{
    int rc = 0;
    for (size_t t = 0; !rc && c->m && t < sizeof LEAF_TYPES / sizeof *LEAF_TYPES;
         t++) {
        char **paths = NULL;
        size_t np = 0;
        rc = fds_mapping_fields_of_type(c->m, LEAF_TYPES[t], &paths, &np);
        for (size_t i = 0; i < np; i++) {
            if (!rc && fds_glob_match(pat, paths[i], strlen(paths[i])))
                rc = cb(arg, paths[i]);
            free(paths[i]);
        }
        free(paths);
    }
    return rc;
}

int fds__dsl_depth_enter(fds__dsl_ctx *c)
{
    if (++c->depth > FDS_MAX_NESTED_DEPTH)
        return fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                            "The nested depth of the query exceeds the "
                            "maximum nested depth for queries set in "
                            "[indices.query.bool.max_nested_depth]");
    return 0;
}

/* Leaf clauses of a parsed query, as Lucene's clause-count visitor
 * (IndexSearcher's TooManyNestedClauses check) counts them: each term of an
 * analysed match, each range or exists; a bool only through its clauses. */
size_t fds__dsl_leaves(const fds_query *q)
{
    if (q->type != FDS_Q_BOOL)
        return 1;
    const fds_query *const *l[4] = {(const fds_query *const *)q->must,
                                    (const fds_query *const *)q->should,
                                    (const fds_query *const *)q->filter,
                                    (const fds_query *const *)q->must_not};
    size_t n[4] = {q->nmust, q->nshould, q->nfilter, q->nmust_not}, k = 0;
    for (int i = 0; i < 4; i++)
        for (size_t j = 0; j < n[i]; j++)
            k += fds__dsl_leaves(l[i][j]);
    return k;
}

fds_query *fds__dsl_count(fds__dsl_ctx *c, fds_query *q, size_t n)
{
    c->clauses += n;
    if (c->clauses > FDS_MAX_CLAUSE_COUNT) {
        fds__query_free(q);
        fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_TOO_MANY_CLAUSES,
                     "Query contains too many nested clauses; maxClauseCount "
                     "is set to %d", FDS_MAX_CLAUSE_COUNT);
        return NULL;
    }
    return q;
}
