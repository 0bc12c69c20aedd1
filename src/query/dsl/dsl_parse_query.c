/*
 * dsl_parse_query.c: the query object of the DSL -- `{"<type>": body}`
 * dispatched to its parser with a nesting bound, the bool query and its
 * minimum_should_match, and the small helpers every part of the parser
 * uses (errors of kind FDS_KIND_QUERY_PARSE, scalar values as text, field
 * lookup, query nodes).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_parse_int.h"

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

/* Clause object `v` parsed into a clause list.  0 or an FDS_E* code. */
static int clause_add(fds__dsl_ctx *c, const cJSON *v, fds_query ***list,
                      size_t *n)
{
    fds_query *k = fds__dsl_query(c, v);
    if (!k)
        return FDS_EPARSE;
    if (fds__dsl_push(list, n, k)) {
        fds__query_free(k);
        return FDS_ENOMEM;
    }
    return 0;
}

static int parse_clauses(fds__dsl_ctx *c, const cJSON *v, const char *name,
                         fds_query ***list, size_t *n)
{
    if (cJSON_IsObject(v))
        return clause_add(c, v, list, n);
    if (!cJSON_IsArray(v))
        return fds__dsl_err(c->err,
                            "[bool] query does not support [%s] for [%s]",
                            fds__dsl_jtype(v), name);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        int rc = clause_add(c, it, list, n);
        if (rc)
            return rc;
    }
    return 0;
}

static fds_query *parse_bool(fds__dsl_ctx *c, const cJSON *body)
{
    if (!cJSON_IsObject(body)) {
        fds__dsl_err(c->err,
                     "[bool] query malformed, no start_object after query "
                     "name");
        return NULL;
    }
    fds_query *q = fds__dsl_qnew(FDS_Q_BOOL, NULL);
    if (!q)
        return NULL;
    const cJSON *it, *msm = NULL;
    int rc = 0;
    cJSON_ArrayForEach(it, body) {
        const char *k = it->string;
        if (!strcmp(k, "must"))
            rc = parse_clauses(c, it, k, &q->must, &q->nmust);
        else if (!strcmp(k, "should"))
            rc = parse_clauses(c, it, k, &q->should, &q->nshould);
        else if (!strcmp(k, "filter"))
            rc = parse_clauses(c, it, k, &q->filter, &q->nfilter);
        else if (!strcmp(k, "must_not") || !strcmp(k, "mustNot"))
            rc = parse_clauses(c, it, k, &q->must_not, &q->nmust_not);
        else if (!strcmp(k, "minimum_should_match"))
            msm = it;
        else if (!strcmp(k, "boost"))
            q->boost = (float)it->valuedouble;
        else if (!strcmp(k, "adjust_pure_negative"))
            continue;
        else
            rc = fds__dsl_err(c->err, "[bool] query does not support [%s]", k);
        if (rc)
            break;
    }
    if (!rc && msm) {
        int k;
        rc = fds__dsl_msm(c, msm, (int)q->nshould, &k);
        q->msm = k;
    }
    if (rc) {
        if (rc == FDS_ENOMEM)
            fds_err_setk(c->err, rc, FDS_KIND_INTERNAL, "out of memory");
        fds__query_free(q);
        return NULL;
    }
    return q;
}

/* Leaf clauses of a parsed query, as Lucene's clause-count visitor
 * (IndexSearcher's TooManyNestedClauses check) counts them: each term of an
 * analysed match, each range or exists; a bool only through its clauses. */
static size_t leaves(const fds_query *q)
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
            k += leaves(l[i][j]);
    return k;
}

static fds_query *dsl_query(fds__dsl_ctx *c, const cJSON *j);

/* The `_name` member of query body b ({"TYPE": b}): b's own (compound
 * queries, match_all, multi_match, query_string, terms, ...) or that of
 * its one field's options object (match, term, range, prefix, ...).
 * NULL when there is none. */
static cJSON *name_member(const cJSON *b)
{
    if (!cJSON_IsObject(b))
        return NULL;
    cJSON *n = cJSON_GetObjectItemCaseSensitive(b, "_name");
    if (n)
        return n;
    const cJSON *f = b->child;
    return f && !f->next && cJSON_IsObject(f)
               ? cJSON_GetObjectItemCaseSensitive(f, "_name")
               : NULL;
}

/* Why q or a clause of it may not be scored, NULL when all is well: a
 * negative or a non-finite boost.  The top-k passes bound scores as sums
 * of non-negative finite terms, so such a boost would return wrong pages;
 * Elasticsearch refuses negative ones (AbstractQueryBuilder
 * .checkNegativeBoost), and a boost past the float range would make
 * scores infinite, which JSON cannot carry.  The clauses a query builds
 * itself (a match's terms, a multi_match's fields^boost) carry boosts of
 * their own, so the whole tree is walked, once, by the outermost query. */
static const char *bad_boost(const fds_query *q)
{
    if (q->boost < 0)
        return "negative [boost] are not allowed.";
    if (!(q->boost >= 0) || isinf(q->boost))
        return "[boost] must be a finite number";
    fds_query *const *lists[4] = {q->must, q->should, q->filter, q->must_not};
    size_t counts[4] = {q->nmust, q->nshould, q->nfilter, q->nmust_not};
    for (int l = 0; l < 4; l++)
        for (size_t i = 0; i < counts[l]; i++) {
            const char *why = lists[l][i] ? bad_boost(lists[l][i]) : NULL;
            if (why)
                return why;
        }
    return NULL;
}

fds_query *fds__dsl_query(fds__dsl_ctx *c, const cJSON *j)
{
    const cJSON *nm = cJSON_IsObject(j) && j->child && !j->child->next
                          ? name_member(j->child)
                          : NULL;
    if (!nm)
        return dsl_query(c, j);
    if (!cJSON_IsString(nm)) {
        fds__dsl_err(c->err, "[%s] query does not support [_name] of type [%s]: "
                             "a name is a string", j->child->string,
                     fds__dsl_jtype(nm));
        return NULL;
    }
    /* the query parsed without its name, which it then takes */
    cJSON *copy = cJSON_Duplicate(j, true);
    cJSON *cn = copy ? name_member(copy->child) : NULL;
    char *name = cn ? strdup(cn->valuestring) : NULL;
    if (!name) {
        cJSON_Delete(copy);
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        return NULL;
    }
    cJSON *parent = cJSON_GetObjectItemCaseSensitive(copy->child, "_name") == cn
                        ? copy->child
                        : copy->child->child;
    cJSON_Delete(cJSON_DetachItemViaPointer(parent, cn));
    fds_query *q = dsl_query(c, copy);
    cJSON_Delete(copy);
    if (!q) {
        free(name);
        return NULL;
    }
    free(q->name);
    q->name = name;
    return q;
}

static fds_query *dsl_query(fds__dsl_ctx *c, const cJSON *j)
{
    if (!cJSON_IsObject(j)) {
        fds__dsl_err(c->err,
                     "[_na] query malformed, must start with start_object");
        return NULL;
    }
    if (!j->child) {
        fds__dsl_err(c->err, "query malformed, empty clause found");
        return NULL;
    }
    if (j->child->next) {
        fds__dsl_err(c->err,
                     "[%s] malformed query, expected [END_OBJECT] but found "
                     "[FIELD_NAME]",
                     j->child->string);
        return NULL;
    }
    if (++c->depth > FDS_MAX_NESTED_DEPTH) {
        fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                     "The nested depth of the query exceeds the maximum "
                     "nested depth for queries set in "
                     "[indices.query.bool.max_nested_depth]");
        return NULL;
    }
    const cJSON *b = j->child;
    const char *t = b->string;
    fds_query *q = NULL;
    if (!strcmp(t, "match")) {
        q = fds__dsl_match(c, b);
    } else if (!strcmp(t, "match_phrase") || !strcmp(t, "match_phrase_prefix")) {
        q = fds__dsl_match_phrase(c, b, t[12] != 0);
    } else if (!strcmp(t, "match_all") || !strcmp(t, "match_none")) {
        if (!cJSON_IsObject(b)) {
            fds__dsl_err(c->err,
                         "[%s] query malformed, no start_object after query "
                         "name",
                         t);
        } else {
            q = fds__dsl_qnew(t[6] == 'a' ? FDS_Q_MATCH_ALL : FDS_Q_MATCH_NONE,
                              NULL);
            if (q)
                q->boost = fds__dsl_boost(b);
        }
    } else if (!strcmp(t, "term")) {
        q = fds__dsl_term_q(c, b);
    } else if (!strcmp(t, "terms")) {
        q = fds__dsl_terms(c, b);
    } else if (!strcmp(t, "range")) {
        q = fds__dsl_range(c, b);
    } else if (!strcmp(t, "bool")) {
        q = parse_bool(c, b);
    } else if (!strcmp(t, "exists")) {
        q = fds__dsl_exists(c, b);
    } else if (!strcmp(t, "ids")) {
        q = fds__dsl_ids(c, b);
    } else if (!strcmp(t, "prefix") || !strcmp(t, "wildcard") ||
               !strcmp(t, "regexp")) {
        q = fds__dsl_pattern(c, t, b);
    } else if (!strcmp(t, "fuzzy")) {
        q = fds__dsl_fuzzy(c, b);
    } else if (!strcmp(t, "constant_score")) {
        q = fds__dsl_constant_score(c, b);
    } else if (!strcmp(t, "dis_max")) {
        q = fds__dsl_dis_max(c, b);
    } else if (!strcmp(t, "boosting")) {
        q = fds__dsl_boosting(c, b);
    } else if (!strcmp(t, "multi_match")) {
        q = fds__dsl_multi_match(c, b);
    } else if (!strcmp(t, "query_string") ||
               !strcmp(t, "simple_query_string")) {
        q = fds__dsl_query_string(c, b, t[0] == 's');
    } else {
        fds__dsl_err(c->err, "unknown query [%s]", t);
    }
    c->depth--;
    const char *why = q && !c->depth ? bad_boost(q) : NULL;
    if (why) {
        fds__query_free(q);
        fds__dsl_err(c->err, "%s", why);
        return NULL;
    }
    /* a bool's (and any compound's) clauses counted themselves; terms is
     * one set query */
    bool compound = q && (q->type == FDS_Q_CONST || q->type == FDS_Q_DISMAX ||
                          q->type == FDS_Q_BOOSTING || !strcmp(t, "bool") ||
                          strstr(t, "query_string") ||
                          !strcmp(t, "multi_match"));
    if (q)
        c->clauses += compound ? 0 : !strcmp(t, "terms") ? 1 : leaves(q);
    if (q && c->clauses > FDS_MAX_CLAUSE_COUNT) {
        fds__query_free(q);
        fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_TOO_MANY_CLAUSES,
                     "Query contains too many nested clauses; maxClauseCount "
                     "is set to %d", FDS_MAX_CLAUSE_COUNT);
        return NULL;
    }
    if (!q && c->err && !c->err->code)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return q;
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
