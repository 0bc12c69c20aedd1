/*
 * dsl_parse.c: the Elasticsearch query DSL parser -- a `_search` / `_count`
 * body (and the URL parameters of `_search`) into an fds_search_request
 * (search_request.h).
 *
 * The parser resolves every field against the mapping at parse time: a
 * `match` on a text field becomes a bool of analyzed terms, on a keyword
 * field an exact term, on a numeric/date/boolean field an equality range.
 * Errors follow Elasticsearch's wording where we know it
 * ("unknown query [x]", "Result window is too large, ...").  The body is
 * parsed with cJSON (handed over as bytes); the mapping is read through its
 * public interface only (fds_mapping_field()).
 */
#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "query_int.h"
#include "search_int.h"

#define FDS_DSL_DEPTH_MAX 32 /* nested bool depth */

static int perr(fds_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int perr(fds_err *err, const char *fmt, ...)
{
    char buf[FDS_ERR_REASON_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return fds_err_setk(err, FDS_EPARSE, FDS_KIND_QUERY_PARSE, "%s", buf);
}

static char *dupn(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

static const char *jtype(const cJSON *j)
{
    if (cJSON_IsObject(j)) return "START_OBJECT";
    if (cJSON_IsArray(j)) return "START_ARRAY";
    if (cJSON_IsString(j)) return "VALUE_STRING";
    if (cJSON_IsNumber(j)) return "VALUE_NUMBER";
    if (cJSON_IsBool(j)) return "VALUE_BOOLEAN";
    return "VALUE_NULL";
}

/* Scalar JSON value as text ("200", "abc", "true"); false if not scalar. */
static bool scalar_text(const cJSON *v, char *buf, size_t cap,
                        const char **s, size_t *n)
{
    if (cJSON_IsString(v)) {
        *s = v->valuestring;
        *n = strlen(v->valuestring);
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

typedef struct pctx {
    const fds_mapping *m;
    fds_err *err;
    int depth;
} pctx;

/* The mapped field `name` (filled into *buf), or NULL when unmapped. */
static const fds_field_info *field_of(pctx *c, const char *name,
                                      fds_field_info *buf)
{
    if (!c->m || fds_mapping_field(c->m, name, strlen(name), buf))
        return NULL;
    return buf;
}

static fds_query *qnew(int type, const char *field)
{
    fds_query *q = fds__query_new(type);
    if (q && field) {
        q->field = dupn(field, strlen(field));
        q->field_len = strlen(field);
        if (!q->field) {
            fds__query_free(q);
            return NULL;
        }
    }
    return q;
}

static int bool_push(fds_query ***list, size_t *n, fds_query *k)
{
    fds_query **nl = realloc(*list, (*n + 1) * sizeof **list);
    if (!nl)
        return FDS_ENOMEM;
    *list = nl;
    nl[(*n)++] = k;
    return 0;
}

/* Equality/range on a numeric/date/boolean field from a JSON value. */
static int num_bound(pctx *c, const fds_field_info *f, const cJSON *v,
                     const char *qname, int64_t *l, double *d)
{
    char buf[64];
    const char *s;
    size_t n;
    if (!scalar_text(v, buf, sizeof buf, &s, &n))
        return perr(c->err, "[%s] query does not support [%s] values for "
                            "field [%s]", qname, jtype(v), f->path);
    int rc = 0;
    switch (f->type) {
    case FDS_FT_DATE:
        if (cJSON_IsNumber(v))
            *l = (int64_t)v->valuedouble;
        else
            rc = fds__parse_date(s, n, true, l);
        if (rc)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_PARSE,
                                "failed to parse date field [%.*s] with format "
                                "[strict_date_optional_time||epoch_millis]",
                                (int)n, s);
        *d = (double)*l;
        return 0;
    case FDS_FT_BOOLEAN:
        if (fds__parse_bool(s, n, l))
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Can't parse boolean value [%.*s], expected "
                                "[true] or [false]", (int)n, s);
        *d = (double)*l;
        return 0;
    default:
        if (fds__parse_double(s, n, d))
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_NUMBER_FORMAT,
                                "For input string: \"%.*s\"", (int)n, s);
        if (f->float32) /* as the index rounds it (fds__round_ftype) */
            *d = (double)(float)*d;
        if (fds__parse_long(s, n, false, l) != 0)
            *l = (int64_t)*d;
        return 0;
    }
}

/* Equality on a non-text field as an inclusive range; NULL on error. */
static fds_query *eq_query(pctx *c, const fds_field_info *f, const cJSON *v,
                           const char *qname)
{
    int64_t l;
    double d;
    if (num_bound(c, f, v, qname, &l, &d))
        return NULL;
    fds_query *q = qnew(FDS_Q_RANGE, f->path);
    if (!q)
        return NULL;
    q->ftype = f->type;
    if (f->type == FDS_FT_LONG && d != floor(d)) {
        /* 1.5 never equals a long */
        q->lo_l = 1;
        q->hi_l = 0;
    } else {
        q->lo_l = q->hi_l = l;
    }
    q->lo_d = q->hi_d = d;
    return q;
}

static fds_query *term_query(const char *field, int ftype, const char *t,
                             size_t n)
{
    fds_query *q = qnew(FDS_Q_TERM, field);
    if (!q)
        return NULL;
    q->ftype = ftype;
    q->term = dupn(t, n);
    q->term_len = n;
    if (!q->term) {
        fds__query_free(q);
        return NULL;
    }
    return q;
}

/* minimum_should_match against n optional clauses (ES semantics). */
static int parse_msm(pctx *c, const cJSON *v, int n, int *out)
{
    if (cJSON_IsNumber(v)) {
        int k = (int)v->valuedouble;
        *out = k < 0 ? n + k : k;
    } else if (cJSON_IsString(v)) {
        const char *s = v->valuestring;
        char *end;
        double x = strtod(s, &end);
        if (end == s || (*end && strcmp(end, "%") != 0))
            return perr(c->err, "Failed to parse [minimum_should_match] "
                                "value [%s]", s);
        if (*end == '%') {
            int k = (int)floor(n * fabs(x) / 100.0);
            *out = x < 0 ? n - k : k;
        } else {
            int k = (int)x;
            *out = k < 0 ? n + k : k;
        }
    } else {
        return perr(c->err, "[minimum_should_match] must be a number or a "
                            "string");
    }
    if (*out < 0)
        *out = 0;
    return 0;
}

static fds_query *parse_query(pctx *c, const cJSON *j);

typedef struct tokv {
    char **t;
    size_t *l;
    size_t n, cap;
} tokv;

static int tok_cb(void *arg, const char *t, size_t n)
{
    tokv *v = arg;
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
    v->t[v->n] = dupn(t, n);
    if (!v->t[v->n])
        return FDS_ENOMEM;
    v->l[v->n++] = n;
    return 0;
}

static void tokv_free(tokv *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->t[i]);
    free(v->t);
    free(v->l);
}

/* The single "field": value member of a leaf query body. */
static int leaf_field(pctx *c, const cJSON *body, const char *qname,
                      const cJSON **fld)
{
    if (!cJSON_IsObject(body))
        return perr(c->err, "[%s] query malformed, no start_object after "
                            "query name", qname);
    const cJSON *it, *found = NULL;
    cJSON_ArrayForEach(it, body) {
        if (strcmp(it->string, "boost") == 0 ||
            strcmp(it->string, "_name") == 0)
            continue;
        if (found)
            return perr(c->err, "[%s] query doesn't support multiple fields, "
                                "found [%s] and [%s]", qname, found->string,
                        it->string);
        found = it;
    }
    if (!found)
        return perr(c->err, "[%s] query requires a field", qname);
    *fld = found;
    return 0;
}

static float get_boost(const cJSON *o)
{
    const cJSON *b = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "boost") : NULL;
    return cJSON_IsNumber(b) ? (float)b->valuedouble : 1.0f;
}

static fds_query *parse_match(pctx *c, const cJSON *body)
{
    const cJSON *fld;
    if (leaf_field(c, body, "match", &fld))
        return NULL;
    const cJSON *val = fld, *op = NULL, *msm = NULL;
    float boost = 1.0f;
    if (cJSON_IsObject(fld)) {
        const cJSON *it;
        val = NULL;
        cJSON_ArrayForEach(it, fld) {
            const char *k = it->string;
            if (!strcmp(k, "query")) val = it;
            else if (!strcmp(k, "operator")) op = it;
            else if (!strcmp(k, "minimum_should_match")) msm = it;
            else if (!strcmp(k, "boost")) boost = (float)it->valuedouble;
            else if (!strcmp(k, "analyzer") || !strcmp(k, "lenient") ||
                     !strcmp(k, "zero_terms_query") || !strcmp(k, "_name") ||
                     !strcmp(k, "auto_generate_synonyms_phrase_query") ||
                     !strcmp(k, "fuzzy_transpositions")) continue;
            else {
                perr(c->err, "[match] query does not support [%s]", k);
                return NULL;
            }
        }
        if (!val) {
            perr(c->err, "No text specified for text query");
            return NULL;
        }
    }
    char buf[64];
    const char *s;
    size_t n;
    if (!scalar_text(val, buf, sizeof buf, &s, &n)) {
        perr(c->err, "[match] unknown token [%s] after [%s]", jtype(val),
             fld->string);
        return NULL;
    }
    bool and_op = false;
    if (op) {
        if (!cJSON_IsString(op) || (strcasecmp(op->valuestring, "and") &&
                                    strcasecmp(op->valuestring, "or"))) {
            fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                         "No enum constant for [operator]");
            return NULL;
        }
        and_op = strcasecmp(op->valuestring, "and") == 0;
    }
    fds_field_info fb;
    const fds_field_info *f = field_of(c, fld->string, &fb);
    fds_query *q = NULL;
    if (!f || f->type == FDS_FT_OBJECT || !f->index) {
        q = qnew(FDS_Q_MATCH_NONE, NULL);
    } else if (f->type == FDS_FT_KEYWORD) {
        q = term_query(f->path, f->type, s, n);
    } else if (f->type != FDS_FT_TEXT) {
        q = eq_query(c, f, val, "match");
    } else {
        tokv v = {0};
        if (fds_analyze(s, n, tok_cb, &v)) {
            tokv_free(&v);
            fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                         "out of memory");
            return NULL;
        }
        if (v.n == 0) {
            q = qnew(FDS_Q_MATCH_NONE, NULL);
        } else if (v.n == 1 && !msm) {
            q = term_query(f->path, f->type, v.t[0], v.l[0]);
        } else {
            q = qnew(FDS_Q_BOOL, NULL);
            for (size_t i = 0; q && i < v.n; i++) {
                fds_query *t = term_query(f->path, f->type, v.t[i], v.l[i]);
                if (!t || (and_op ? bool_push(&q->must, &q->nmust, t)
                                  : bool_push(&q->should, &q->nshould, t))) {
                    fds__query_free(t);
                    fds__query_free(q);
                    q = NULL;
                }
            }
            if (q && msm && !and_op) {
                int k;
                if (parse_msm(c, msm, (int)q->nshould, &k)) {
                    fds__query_free(q);
                    tokv_free(&v);
                    return NULL;
                }
                q->msm = k > 0 ? k : 1;
            }
        }
        tokv_free(&v);
    }
    if (q)
        q->boost = boost;
    else if (!c->err || !c->err->code)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return q;
}

static fds_query *parse_term(pctx *c, const cJSON *body)
{
    const cJSON *fld;
    if (leaf_field(c, body, "term", &fld))
        return NULL;
    const cJSON *val = fld;
    float boost = 1.0f;
    if (cJSON_IsObject(fld)) {
        val = cJSON_GetObjectItemCaseSensitive(fld, "value");
        boost = get_boost(fld);
        if (!val) {
            perr(c->err, "[term] query does not support [%s]",
                 fld->child ? fld->child->string : "");
            return NULL;
        }
    }
    char buf[64];
    const char *s;
    size_t n;
    if (!scalar_text(val, buf, sizeof buf, &s, &n)) {
        perr(c->err, "[term] query does not support array of values");
        return NULL;
    }
    fds_field_info fb;
    const fds_field_info *f = field_of(c, fld->string, &fb);
    fds_query *q;
    if (!strcmp(fld->string, "_id")) {
        /* _id is not in the term dictionary: the _id table answers it, as
         * for an ids query (Elasticsearch accepts term on _id) */
        q = qnew(FDS_Q_IDS, NULL);
        if (q) {
            q->vals = calloc(1, sizeof *q->vals);
            q->val_lens = calloc(1, sizeof *q->val_lens);
            if (!q->vals || !q->val_lens) {
                fds__query_free(q);
                return NULL;
            }
            q->vals[0] = dupn(s, n);
            q->val_lens[0] = n;
            q->nvals = 1;
        }
    } else if (!f || f->type == FDS_FT_OBJECT || !f->index)
        q = qnew(FDS_Q_MATCH_NONE, NULL);
    else if (f->type == FDS_FT_TEXT || f->type == FDS_FT_KEYWORD)
        q = term_query(f->path, f->type, s, n);
    else
        q = eq_query(c, f, val, "term");
    if (q)
        q->boost = boost;
    return q;
}

static fds_query *parse_terms(pctx *c, const cJSON *body)
{
    const cJSON *fld;
    if (leaf_field(c, body, "terms", &fld))
        return NULL;
    if (!cJSON_IsArray(fld)) {
        perr(c->err, "[terms] query does not support [%s]", fld->string);
        return NULL;
    }
    fds_field_info fb;
    const fds_field_info *f = field_of(c, fld->string, &fb);
    float boost = get_boost(body);
    bool ids = !strcmp(fld->string, "_id"); /* answered by the _id table */
    if (!ids && (!f || f->type == FDS_FT_OBJECT || !f->index))
        return qnew(FDS_Q_MATCH_NONE, NULL);
    fds_query *q;
    if (ids || f->type == FDS_FT_TEXT || f->type == FDS_FT_KEYWORD) {
        q = ids ? qnew(FDS_Q_IDS, NULL) : qnew(FDS_Q_TERMS, f->path);
        if (!q)
            return NULL;
        if (!ids)
            q->ftype = f->type;
        size_t n = (size_t)cJSON_GetArraySize(fld);
        q->vals = calloc(n ? n : 1, sizeof *q->vals);
        q->val_lens = calloc(n ? n : 1, sizeof *q->val_lens);
        if (!q->vals || !q->val_lens) {
            fds__query_free(q);
            return NULL;
        }
        const cJSON *it;
        cJSON_ArrayForEach(it, fld) {
            char buf[64];
            const char *s;
            size_t l;
            if (!scalar_text(it, buf, sizeof buf, &s, &l)) {
                perr(c->err, "[terms] query does not support [%s] values",
                     jtype(it));
                fds__query_free(q);
                return NULL;
            }
            q->vals[q->nvals] = dupn(s, l);
            q->val_lens[q->nvals++] = l;
        }
    } else {
        /* numeric terms: any of several equality ranges, constant score */
        fds_query *b = qnew(FDS_Q_BOOL, NULL);
        if (!b)
            return NULL;
        const cJSON *it;
        cJSON_ArrayForEach(it, fld) {
            fds_query *e = eq_query(c, f, it, "terms");
            if (!e || bool_push(&b->should, &b->nshould, e)) {
                fds__query_free(e);
                fds__query_free(b);
                return NULL;
            }
        }
        /* wrap: filter(any) so the score is the boost, not a sum */
        q = qnew(FDS_Q_BOOL, NULL);
        fds_query *all = qnew(FDS_Q_MATCH_ALL, NULL);
        if (!q || !all || bool_push(&q->must, &q->nmust, all) ||
            bool_push(&q->filter, &q->nfilter, b)) {
            fds__query_free(q);
            fds__query_free(all);
            fds__query_free(b);
            return NULL;
        }
    }
    q->boost = boost;
    return q;
}

static fds_query *parse_range(pctx *c, const cJSON *body)
{
    const cJSON *fld;
    if (leaf_field(c, body, "range", &fld))
        return NULL;
    if (!cJSON_IsObject(fld)) {
        perr(c->err, "[range] query malformed, no start_object after query "
                     "name");
        return NULL;
    }
    fds_field_info fb;
    const fds_field_info *f = field_of(c, fld->string, &fb);
    if (!f || f->type == FDS_FT_OBJECT || f->type == FDS_FT_TEXT)
        return qnew(FDS_Q_MATCH_NONE, NULL);
    fds_query *q = qnew(FDS_Q_RANGE, f->path);
    if (!q)
        return NULL;
    q->ftype = f->type;
    const cJSON *it;
    cJSON_ArrayForEach(it, fld) {
        const char *k = it->string;
        bool lo = !strcmp(k, "gte") || !strcmp(k, "gt") || !strcmp(k, "from");
        bool hi = !strcmp(k, "lte") || !strcmp(k, "lt") || !strcmp(k, "to");
        bool incl = strcmp(k, "gt") && strcmp(k, "lt");
        if (!strcmp(k, "boost")) {
            q->boost = (float)it->valuedouble;
            continue;
        }
        if (!strcmp(k, "format") || !strcmp(k, "time_zone") ||
            !strcmp(k, "relation") || !strcmp(k, "_name") ||
            !strcmp(k, "include_lower") || !strcmp(k, "include_upper"))
            continue;
        if (!lo && !hi) {
            perr(c->err, "[range] query does not support [%s]", k);
            fds__query_free(q);
            return NULL;
        }
        if (cJSON_IsNull(it))
            continue;
        if (f->type == FDS_FT_KEYWORD) {
            char buf[64];
            const char *s;
            size_t n;
            if (!scalar_text(it, buf, sizeof buf, &s, &n)) {
                perr(c->err, "[range] bad value for [%s]", k);
                fds__query_free(q);
                return NULL;
            }
            char **dst = lo ? &q->lo_s : &q->hi_s;
            free(*dst);
            *dst = dupn(s, n);
            if (lo) { q->lo_s_len = n; q->lo_s_incl = incl; }
            else { q->hi_s_len = n; q->hi_s_incl = incl; }
            continue;
        }
        int64_t l;
        double d;
        if (num_bound(c, f, it, "range", &l, &d)) {
            fds__query_free(q);
            return NULL;
        }
        if (lo) {
            q->lo_d = d;
            q->lo_d_incl = incl;
            if (f->type == FDS_FT_LONG && d != floor(d))
                q->lo_l = (int64_t)ceil(d);
            else
                q->lo_l = incl ? l : (l == INT64_MAX ? l : l + 1);
            if (!incl && l == INT64_MAX)
                q->hi_l = INT64_MIN; /* empty */
        } else {
            q->hi_d = d;
            q->hi_d_incl = incl;
            if (f->type == FDS_FT_LONG && d != floor(d))
                q->hi_l = (int64_t)floor(d);
            else
                q->hi_l = incl ? l : (l == INT64_MIN ? l : l - 1);
            if (!incl && l == INT64_MIN)
                q->lo_l = INT64_MAX;
        }
    }
    return q;
}

static int parse_clauses(pctx *c, const cJSON *v, const char *name,
                         fds_query ***list, size_t *n)
{
    if (cJSON_IsObject(v)) {
        fds_query *k = parse_query(c, v);
        if (!k)
            return FDS_EPARSE;
        if (bool_push(list, n, k)) {
            fds__query_free(k);
            return FDS_ENOMEM;
        }
        return 0;
    }
    if (!cJSON_IsArray(v))
        return perr(c->err, "[bool] query does not support [%s] for [%s]",
                    jtype(v), name);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        fds_query *k = parse_query(c, it);
        if (!k)
            return FDS_EPARSE;
        if (bool_push(list, n, k)) {
            fds__query_free(k);
            return FDS_ENOMEM;
        }
    }
    return 0;
}

static fds_query *parse_bool(pctx *c, const cJSON *body)
{
    if (!cJSON_IsObject(body)) {
        perr(c->err, "[bool] query malformed, no start_object after query "
                     "name");
        return NULL;
    }
    fds_query *q = qnew(FDS_Q_BOOL, NULL);
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
        else if (!strcmp(k, "_name") || !strcmp(k, "adjust_pure_negative"))
            continue;
        else
            rc = perr(c->err, "[bool] query does not support [%s]", k);
        if (rc)
            break;
    }
    if (!rc && msm) {
        int k;
        rc = parse_msm(c, msm, (int)q->nshould, &k);
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

static fds_query *parse_query(pctx *c, const cJSON *j)
{
    if (!cJSON_IsObject(j)) {
        perr(c->err, "[_na] query malformed, must start with start_object");
        return NULL;
    }
    if (!j->child) {
        perr(c->err, "query malformed, empty clause found");
        return NULL;
    }
    if (j->child->next) {
        perr(c->err, "[%s] malformed query, expected [END_OBJECT] but found "
                     "[FIELD_NAME]", j->child->string);
        return NULL;
    }
    if (++c->depth > FDS_DSL_DEPTH_MAX) {
        perr(c->err, "query is nested too deeply (limit %d)",
             FDS_DSL_DEPTH_MAX);
        return NULL;
    }
    const cJSON *b = j->child;
    const char *t = b->string;
    fds_query *q = NULL;
    if (!strcmp(t, "match")) {
        q = parse_match(c, b);
    } else if (!strcmp(t, "match_all") || !strcmp(t, "match_none")) {
        if (!cJSON_IsObject(b)) {
            perr(c->err, "[%s] query malformed, no start_object after query "
                         "name", t);
        } else {
            q = qnew(t[6] == 'a' ? FDS_Q_MATCH_ALL : FDS_Q_MATCH_NONE, NULL);
            if (q)
                q->boost = get_boost(b);
        }
    } else if (!strcmp(t, "term")) {
        q = parse_term(c, b);
    } else if (!strcmp(t, "terms")) {
        q = parse_terms(c, b);
    } else if (!strcmp(t, "range")) {
        q = parse_range(c, b);
    } else if (!strcmp(t, "bool")) {
        q = parse_bool(c, b);
    } else if (!strcmp(t, "exists")) {
        const cJSON *fl = cJSON_IsObject(b)
                              ? cJSON_GetObjectItemCaseSensitive(b, "field")
                              : NULL;
        if (!cJSON_IsString(fl)) {
            perr(c->err, "[exists] must be provided with a [field]");
        } else {
            fds_field_info fb;
            const fds_field_info *f = field_of(c, fl->valuestring, &fb);
            q = (!f || f->type == FDS_FT_OBJECT)
                    ? qnew(FDS_Q_MATCH_NONE, NULL)
                    : qnew(FDS_Q_EXISTS, f->path);
            if (q)
                q->boost = get_boost(b);
        }
    } else if (!strcmp(t, "ids")) {
        const cJSON *vals = cJSON_IsObject(b)
                                ? cJSON_GetObjectItemCaseSensitive(b, "values")
                                : NULL;
        if (!cJSON_IsArray(vals)) {
            perr(c->err, "[ids] query malformed, [values] must be an array");
        } else if ((q = qnew(FDS_Q_IDS, NULL))) {
            size_t n = (size_t)cJSON_GetArraySize(vals);
            q->vals = calloc(n ? n : 1, sizeof *q->vals);
            q->val_lens = calloc(n ? n : 1, sizeof *q->val_lens);
            q->boost = get_boost(b);
            const cJSON *it;
            cJSON_ArrayForEach(it, vals) {
                if (!q->vals || !q->val_lens)
                    break;
                char buf[64];
                const char *s;
                size_t l;
                if (!scalar_text(it, buf, sizeof buf, &s, &l))
                    continue;
                q->vals[q->nvals] = dupn(s, l);
                q->val_lens[q->nvals++] = l;
            }
        }
    } else {
        perr(c->err, "unknown query [%s]", t);
    }
    c->depth--;
    if (!q && c->err && !c->err->code)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return q;
}

static int window_check(const fds_search_request *r, fds_err *err)
{
    if ((uint64_t)r->from + r->size > FDS_MAX_RESULT_WINDOW)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Result window is too large, from + size must be "
                            "less than or equal to: [%d] but was [%llu]. See "
                            "the scroll api for a more efficient way to "
                            "request large data sets. This limit can be set by "
                            "changing the [index.max_result_window] index "
                            "level setting.", FDS_MAX_RESULT_WINDOW,
                            (unsigned long long)r->from + r->size);
    return 0;
}

static int parse_nonneg(const cJSON *v, const char *name, uint32_t *out,
                        fds_err *err)
{
    double d;
    if (cJSON_IsNumber(v))
        d = v->valuedouble;
    else if (cJSON_IsString(v) && *v->valuestring) {
        char *end;
        d = strtod(v->valuestring, &end);
        if (*end)
            return perr(err, "[%s] failed to parse field value [%s]", name,
                        v->valuestring);
    } else
        return perr(err, "[%s] expected a number but found [%s]", name,
                    jtype(v));
    if (d < 0)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] parameter cannot be negative, found [%.0f]",
                            name, d);
    if (d > 2147483647.0)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] is too large: [%.0f]", name, d);
    *out = (uint32_t)d;
    return 0;
}

static int str_list(const cJSON *v, char ***out, size_t *n)
{
    if (cJSON_IsString(v)) {
        *out = malloc(sizeof **out);
        if (!*out)
            return FDS_ENOMEM;
        (*out)[0] = strdup(v->valuestring);
        *n = 1;
        return 0;
    }
    if (!cJSON_IsArray(v))
        return FDS_EPARSE;
    size_t k = (size_t)cJSON_GetArraySize(v);
    *out = calloc(k ? k : 1, sizeof **out);
    if (!*out)
        return FDS_ENOMEM;
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(it))
            return FDS_EPARSE;
        (*out)[(*n)++] = strdup(it->valuestring);
    }
    return 0;
}

static int parse_source(fds_search_request *r, const cJSON *v, fds_err *err)
{
    if (cJSON_IsBool(v)) {
        r->source = cJSON_IsTrue(v);
        return 0;
    }
    if (cJSON_IsString(v) || cJSON_IsArray(v)) {
        if (str_list(v, &r->includes, &r->nincludes))
            return perr(err, "[_source] must be a boolean, a string, an array "
                             "of strings or an object");
        return 0;
    }
    if (cJSON_IsObject(v)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            const char *k = it->string;
            int rc;
            if (!strcmp(k, "includes") || !strcmp(k, "include"))
                rc = str_list(it, &r->includes, &r->nincludes);
            else if (!strcmp(k, "excludes") || !strcmp(k, "exclude"))
                rc = str_list(it, &r->excludes, &r->nexcludes);
            else
                return perr(err, "Unknown key for a %s in [%s].", jtype(it), k);
            if (rc)
                return perr(err, "[_source] [%s] must be a string or an array "
                                 "of strings", k);
        }
        return 0;
    }
    return perr(err, "[_source] must be a boolean, a string, an array of "
                     "strings or an object");
}

static int sort_one(pctx *c, fds_search_request *r, const char *name,
                    const cJSON *opts)
{
    if (r->nsort >= FDS_SORT_VALUES_MAX)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "at most %d sort keys are supported",
                            FDS_SORT_VALUES_MAX);
    fds_sort_spec *s = &r->sort[r->nsort];
    memset(s, 0, sizeof *s);
    if (!strcmp(name, "_score")) {
        s->kind = FDS_SORT_SCORE;
        s->desc = true;
        r->nsort++;
    } else if (!strcmp(name, "_doc")) {
        s->kind = FDS_SORT_DOC;
        r->nsort++;
    } else {
        fds_field_info fb;
        const fds_field_info *f = field_of(c, name, &fb);
        if (!f)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                                "No mapping found for [%s] in order to sort on",
                                name);
        if (f->type == FDS_FT_TEXT || f->type == FDS_FT_OBJECT)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Text fields are not optimised for operations "
                                "that require per-document field data like "
                                "aggregations and sorting, so these operations "
                                "are disabled by default. Please use a keyword "
                                "field instead. Alternatively, set "
                                "fielddata=true on [%s] in order to load field "
                                "data by uninverting the inverted index. Note "
                                "that this can use significant memory.", name);
        s->kind = FDS_SORT_FIELD;
        r->nsort++; /* counted now so the request frees the name on error */
        s->field = strdup(f->path);
        s->field_len = f->path_len;
        s->ftype = f->type;
    }
    const cJSON *order = NULL, *missing = NULL;
    if (cJSON_IsString(opts))
        order = opts;
    else if (cJSON_IsObject(opts)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, opts) {
            if (!strcmp(it->string, "order")) order = it;
            else if (!strcmp(it->string, "missing")) missing = it;
            else if (!strcmp(it->string, "unmapped_type") ||
                     !strcmp(it->string, "mode") ||
                     !strcmp(it->string, "format") ||
                     !strcmp(it->string, "numeric_type")) continue;
            else
                return perr(c->err, "[field_sort] unknown field [%s]",
                            it->string);
        }
    } else if (opts) {
        return perr(c->err, "[sort] malformed value for [%s]", name);
    }
    if (order) {
        if (!cJSON_IsString(order) || (strcmp(order->valuestring, "asc") &&
                                       strcmp(order->valuestring, "desc")))
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Unknown SortOrder [%s]",
                                cJSON_IsString(order) ? order->valuestring : "?");
        s->desc = !strcmp(order->valuestring, "desc");
    }
    if (cJSON_IsString(missing))
        s->missing_first = !strcmp(missing->valuestring, "_first");
    return 0;
}

static int parse_sort(pctx *c, fds_search_request *r, const cJSON *v)
{
    if (cJSON_IsString(v))
        return sort_one(c, r, v->valuestring, NULL);
    if (cJSON_IsObject(v)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            int rc = sort_one(c, r, it->string, it);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (cJSON_IsArray(v)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            int rc = parse_sort(c, r, it);
            if (rc)
                return rc;
        }
        return 0;
    }
    return perr(c->err, "[sort] must be a string, an object or an array");
}

static int parse_track(fds_search_request *r, const cJSON *v, fds_err *err)
{
    if (cJSON_IsBool(v)) {
        r->track_total = cJSON_IsTrue(v) ? INT64_MAX : FDS_TRACK_TOTAL_NONE;
        return 0;
    }
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d < -1 || d != floor(d))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[track_total_hits] parameter must be positive "
                                "or equals to -1, got %.0f", d);
        r->track_total = d == -1 ? INT64_MAX : (int64_t)d;
        return 0;
    }
    return perr(err, "[track_total_hits] must be a boolean or a number");
}

/* Digits beyond which a JSON integer may not survive a double. */
#define BIG_INT_DIGITS 15

/*
 * cJSON keeps numbers as doubles (DESIGN.md §10), so an integer literal of
 * more than BIG_INT_DIGITS digits would lose its last ones before a term or
 * range query on a long field sees it.  Such literals are quoted before
 * parsing (numeric queries accept strings and read them digit by digit).
 * Returns a malloc'd copy (*out_len set), or NULL when nothing needs it.
 */
static char *quote_big_ints(const char *s, size_t n, size_t *out_len)
{
    size_t extra = 0;
    for (int pass = 0; pass < 2; pass++) {
        char *o = NULL;
        size_t k = 0;
        if (pass == 1) {
            if (!extra)
                return NULL;
            if (!(o = malloc(n + extra + 1)))
                return NULL;
        }
        bool in_str = false;
        for (size_t i = 0; i < n;) {
            char c = s[i];
            if (in_str) {
                if (c == '\\' && i + 1 < n) {
                    if (o) { o[k++] = c; o[k++] = s[i + 1]; }
                    i += 2;
                    continue;
                }
                in_str = c != '"';
            } else if (c == '"') {
                in_str = true;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                size_t j = i + (c == '-');
                while (j < n && s[j] >= '0' && s[j] <= '9')
                    j++;
                bool integral = j == n || (s[j] != '.' && s[j] != 'e' && s[j] != 'E');
                size_t digits = j - i - (c == '-');
                if (integral && digits > BIG_INT_DIGITS) {
                    if (o) {
                        o[k++] = '"';
                        memcpy(o + k, s + i, j - i);
                        k += j - i;
                        o[k++] = '"';
                    } else {
                        extra += 2;
                    }
                } else if (o) {
                    memcpy(o + k, s + i, j - i);
                    k += j - i;
                }
                i = j;
                continue;
            }
            if (o)
                o[k++] = c;
            i++;
        }
        if (o) {
            o[k] = 0;
            *out_len = k;
            return o;
        }
    }
    return NULL;
}

int fds_search_parse(const char *body, size_t len, const fds_mapping *m,
                     int for_count, fds_search_request **out, fds_err *err)
{
    *out = NULL;
    fds_search_request *r = calloc(1, sizeof *r);
    if (!r)
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                            "out of memory");
    r->size = 10;
    r->track_total = FDS_TRACK_TOTAL_DEFAULT;
    r->source = true;
    r->count_only = for_count != 0;
    r->mapping = m;
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' ||
                       body[i] == '\t'))
        i++;
    if (i == len) {
        *out = r;
        return 0;
    }
    size_t qlen = 0;
    char *quoted = quote_big_ints(body, len, &qlen);
    if (quoted) {
        body = quoted;
        len = qlen;
    }
    const char *endp = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &endp, 0);
    int rc = 0;
    if (!root) {
        const char *ep = cJSON_GetErrorPtr();
        size_t off = (ep && ep >= body && ep <= body + len) ? (size_t)(ep - body)
                                                            : 0;
        rc = perr(err, "Failed to parse the request body: malformed JSON near "
                       "byte %zu", off);
    } else if (!cJSON_IsObject(root)) {
        rc = perr(err, "Unknown key for a %s in [_na].", jtype(root));
    }
    pctx c = {m, err, 0};
    if (!rc) {
        const cJSON *it;
        cJSON_ArrayForEach(it, root) {
            const char *k = it->string;
            if (!strcmp(k, "query")) {
                fds__query_free(r->query);
                r->query = parse_query(&c, it);
                if (!r->query)
                    rc = err && err->code ? err->code : FDS_ENOMEM;
            } else if (for_count) {
                rc = perr(err, "request does not support [%s]", k);
            } else if (!strcmp(k, "from")) {
                rc = parse_nonneg(it, "from", &r->from, err);
            } else if (!strcmp(k, "size")) {
                rc = parse_nonneg(it, "size", &r->size, err);
            } else if (!strcmp(k, "_source")) {
                rc = parse_source(r, it, err);
            } else if (!strcmp(k, "sort")) {
                rc = parse_sort(&c, r, it);
            } else if (!strcmp(k, "track_total_hits")) {
                rc = parse_track(r, it, err);
            } else if (!strcmp(k, "explain")) {
                r->explain = cJSON_IsTrue(it);
            } else if (!strcmp(k, "track_scores")) {
                r->track_scores = cJSON_IsTrue(it);
            } else if (!strcmp(k, "search_after")) {
                if (!cJSON_IsArray(it)) {
                    rc = perr(err, "[search_after] must be an array");
                } else {
                    const cJSON *v;
                    cJSON_ArrayForEach(v, it) {
                        if (r->nafter >= FDS_SORT_VALUES_MAX) {
                            rc = perr(err, "[search_after] has too many "
                                           "values");
                            break;
                        }
                        fds_after_val *a = &r->after[r->nafter++];
                        if (cJSON_IsNull(v))
                            a->is_null = true;
                        else if (cJSON_IsNumber(v))
                            a->num = v->valuedouble;
                        else if (cJSON_IsString(v)) {
                            a->str = strdup(v->valuestring);
                            a->str_len = strlen(v->valuestring);
                            char *e;
                            a->num = strtod(v->valuestring, &e);
                        } else if (cJSON_IsBool(v))
                            a->num = cJSON_IsTrue(v);
                        else
                            rc = perr(err, "[search_after] values must be "
                                           "scalars");
                    }
                }
            } else if (!strcmp(k, "timeout") || !strcmp(k, "stored_fields") ||
                       !strcmp(k, "version") || !strcmp(k, "seq_no_primary_term") ||
                       !strcmp(k, "profile")) { /* profile: src/http */
                continue;
            } else {
                rc = perr(err, "Unknown key for a %s in [%s].", jtype(it), k);
            }
            if (rc)
                break;
        }
    }
    if (!rc && r->nafter) {
        unsigned want = r->nsort ? r->nsort : 1;
        if (r->nafter != want)
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "search_after has %u value(s) but sort has %u.",
                              r->nafter, want);
        for (unsigned k = 0; !rc && k < r->nsort; k++) {
            fds_after_val *a = &r->after[k];
            if (r->sort[k].kind == FDS_SORT_FIELD &&
                r->sort[k].ftype == FDS_FT_DATE && a->str) {
                int64_t ms;
                if (fds__parse_date(a->str, a->str_len, true, &ms) == 0)
                    a->num = (double)ms;
            }
        }
    }
    if (!rc)
        rc = window_check(r, err);
    cJSON_Delete(root);
    free(quoted);
    if (rc) {
        fds_search_request_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* q= URL parameter: `field:value` or bare words (every text field). */
static int apply_q(fds_search_request *req, const char *value, fds_err *err)
{
    pctx c = {req->mapping, err, 0};
    fds_query *b = qnew(FDS_Q_BOOL, NULL);
    if (!b)
        return FDS_ENOMEM;
    const char *p = value;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        const char *colon = memchr(p, ':', (size_t)(e - p));
        cJSON *q = cJSON_CreateObject();
        cJSON *mt = cJSON_AddObjectToObject(q, "match");
        char *word = colon ? dupn(colon + 1, (size_t)(e - colon - 1))
                           : dupn(p, (size_t)(e - p));
        if (colon) {
            char *fname = dupn(p, (size_t)(colon - p));
            cJSON_AddStringToObject(mt, fname, word);
            fds_query *k = parse_query(&c, q);
            free(fname);
            if (!k || bool_push(&b->should, &b->nshould, k)) {
                fds__query_free(k);
                free(word);
                cJSON_Delete(q);
                fds__query_free(b);
                return err && err->code ? err->code : FDS_ENOMEM;
            }
        } else if (req->mapping) {
            char **names = NULL;
            size_t nn = 0;
            /* out of memory: no text field (the words match nothing) */
            (void)fds_mapping_fields_of_type(req->mapping, FDS_FT_TEXT,
                                             &names, &nn);
            for (size_t i = 0; i < nn; i++) {
                cJSON_DeleteItemFromObject(mt, "x");
                cJSON *q2 = cJSON_CreateObject();
                cJSON *m2 = cJSON_AddObjectToObject(q2, "match");
                cJSON_AddStringToObject(m2, names[i], word);
                fds_query *k = parse_query(&c, q2);
                if (k && bool_push(&b->should, &b->nshould, k))
                    fds__query_free(k);
                cJSON_Delete(q2);
                free(names[i]);
            }
            free(names);
        }
        free(word);
        cJSON_Delete(q);
        p = e;
    }
    fds__query_free(req->query);
    req->query = b;
    return 0;
}

int fds_search_apply_param(fds_search_request *req, const char *key,
                           const char *value, fds_err *err)
{
    if (!strcmp(key, "size") || !strcmp(key, "from")) {
        cJSON *v = cJSON_CreateString(value);
        if (!v)
            return FDS_ENOMEM;
        uint32_t *dst = key[0] == 's' ? &req->size : &req->from, old = *dst;
        int rc = parse_nonneg(v, key, dst, err);
        cJSON_Delete(v);
        if (!rc)
            rc = window_check(req, err);
        if (rc)
            *dst = old; /* a refused parameter leaves the request unchanged */
        return rc;
    }
    if (!strcmp(key, "track_total_hits")) {
        if (!strcmp(value, "true") || !*value)
            req->track_total = INT64_MAX;
        else if (!strcmp(value, "false"))
            req->track_total = FDS_TRACK_TOTAL_NONE;
        else {
            char *e;
            long long n = strtoll(value, &e, 10);
            if (*e || n < -1)
                return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "[track_total_hits] must be true, false or "
                                    "a number, got [%s]", value);
            req->track_total = n == -1 ? INT64_MAX : n;
        }
        return 0;
    }
    if (!strcmp(key, "explain")) {
        req->explain = strcmp(value, "false") != 0;
        return 0;
    }
    if (!strcmp(key, "q"))
        return apply_q(req, value, err);
    return 0;
}

