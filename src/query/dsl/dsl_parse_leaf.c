/*
 * dsl_parse_leaf.c: the leaf queries of the query DSL -- match (analysed on
 * text fields, exact on keywords, an equality range on numbers, dates and
 * booleans), term, terms, range, exists and ids -- each resolved against
 * the mapping at parse time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>

#include "mapping/analysis.h"
#include "time/datemath.h"
#include "dsl/dsl_parse_int.h"

/* 2^63, the first double above INT64_MAX (which a double cannot hold). */
#define TWO_POW_63 9223372036854775808.0

/* A finite double as a long, saturating: *over is +1 above the range of a
 * long (INT64_MAX returned), -1 below it (INT64_MIN), else 0 (truncated).
 * A plain cast of an out-of-range double is undefined behaviour. */
static int64_t clamp_long(double d, int *over)
{
    *over = d >= TWO_POW_63 ? 1 : d < -TWO_POW_63 ? -1 : 0;
    return *over > 0 ? INT64_MAX : *over < 0 ? INT64_MIN : (int64_t)d;
}

/* The error for text that is not a finite number, in Elasticsearch's words
 * (NumberFieldMapper: "Value [..] is out of range for a long" for an
 * infinity on a long field, "[double] supports only finite values, but got
 * [..]" on a floating-point one, "For input string" for the rest). */
static int not_a_number(fds__dsl_ctx *c, const fds_field_info *f,
                        const char *s, size_t n)
{
    char buf[64];
    double x = NAN;
    if (n < sizeof buf) {
        memcpy(buf, s, n);
        buf[n] = 0;
        char *end;
        x = strtod(buf, &end);
        if (*end || end == buf || (isfinite(x) && !isnan(x)))
            x = 0; /* not a number at all */
    }
    if (isinf(x) && f->type == FDS_FT_LONG)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Value [%.*s] is out of range for a long", (int)n,
                            s);
    if ((isinf(x) || isnan(x)) && f->type == FDS_FT_DOUBLE)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] supports only finite values, but got [%s]",
                            f->float32 ? "float" : "double",
                            isnan(x) ? "NaN" : x > 0 ? "Infinity"
                                                     : "-Infinity");
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_NUMBER_FORMAT,
                        "For input string: \"%.*s\"", (int)n, s);
}

/*
 * A bound or value `v` of a numeric/date/boolean field: *d as a double, *l
 * as a long (exact from integer text, else the double saturated; *over says
 * on which side of the long range it fell, see clamp_long).  0, or an
 * FDS_E* code with the error filled (not a number, not finite, a bad date
 * or boolean).
 */
static int num_bound(fds__dsl_ctx *c, const fds_field_info *f, const cJSON *v,
                     const char *qname, int64_t *l, double *d, int *over)
{
    char buf[64];
    const char *s;
    size_t n;
    *over = 0;
    if (!fds__dsl_scalar(c, v, buf, sizeof buf, &s, &n))
        return fds__dsl_err(c->err,
                            "[%s] query does not support [%s] values for "
                            "field [%s]",
                            qname, fds__dsl_jtype(v), f->path);
    int rc = 0;
    switch (f->type) {
    case FDS_FT_DATE:
        if (cJSON_IsNumber(v))
            *l = clamp_long(v->valuedouble, over);
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
            return not_a_number(c, f, s, n);
        if (f->float32) /* as the index rounds it (fds__round_ftype) */
            *d = (double)(float)*d;
        rc = fds__parse_long(s, n, false, l);
        if (rc == FDS_ERANGE) { /* integer digits past a long: the double
                                   may have rounded back to the edge */
            *over = s[0] == '-' ? -1 : 1;
            *l = *over > 0 ? INT64_MAX : INT64_MIN;
        } else if (rc) {
            *l = clamp_long(*d, over);
        }
        return 0;
    }
}

/*
 * The inclusive long bounds of one side of a range from its value (see
 * num_bound): a bound past the range of a long clamps (lt 1e19 takes every
 * long, gt 1e19 none), a fractional one on a long field rounds inwards,
 * an exclusive one moves by one.  `hi`: the upper side.  False when the
 * side excludes every long.
 */
static bool long_side(const fds_field_info *f, double d, int64_t l,
                      int over, bool incl, bool hi, int64_t *out)
{
    if (over) /* past the range: open on the near side, empty on the far */
        *out = hi ? INT64_MAX : INT64_MIN;
    else if (f->type == FDS_FT_LONG && d != floor(d))
        *out = (int64_t)(hi ? floor(d) : ceil(d));
    else if (!incl && l == (hi ? INT64_MIN : INT64_MAX))
        return false;
    else
        *out = incl ? l : hi ? l - 1 : l + 1;
    return hi ? over >= 0 : over <= 0;
}

/* Equality on a non-text field as an inclusive range; NULL on error. */
static fds_query *eq_query(fds__dsl_ctx *c, const fds_field_info *f,
                           const cJSON *v, const char *qname)
{
    int64_t l;
    double d;
    int over;
    if (num_bound(c, f, v, qname, &l, &d, &over))
        return NULL;
    fds_query *q = fds__dsl_qnew(FDS_Q_RANGE, f->path);
    if (!q)
        return NULL;
    q->ftype = f->type;
    if ((f->type == FDS_FT_LONG && d != floor(d)) || over) {
        /* 1.5 never equals a long, nor does 1e19 */
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
    fds_query *q = fds__dsl_qnew(FDS_Q_TERM, field);
    if (!q)
        return NULL;
    q->ftype = ftype;
    q->term = fds__dsl_dupn(t, n);
    q->term_len = n;
    if (!q->term) {
        fds__query_free(q);
        return NULL;
    }
    return q;
}

/* The options of a match query's field object. */
typedef struct match_opts {
    const cJSON *val, *op, *msm;
    float boost;
    fds_query fz; /* fuzziness and its options, when given */
    bool fuzzy, zero_all, lenient;
} match_opts;

/* The members of the field object `fld` of a match into o (o->val the
 * text).  0, or an FDS_E* code with the error filled. */
static int match_read(fds__dsl_ctx *c, const cJSON *fld, match_opts *o)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, fld) {
        const char *k = it->string;
        int frc = !strcmp(k, "fuzzy_transpositions") || !strcmp(k, "fuzziness") ||
                          !strcmp(k, "prefix_length") || !strcmp(k, "max_expansions") ||
                          !strcmp(k, "fuzzy_rewrite")
                      ? fds__dsl_fuzzy_opt(c, k, it, &o->fz)
                      : 1;
        if (frc == 0) {
            o->fuzzy |= !strcmp(k, "fuzziness");
            continue;
        }
        if (frc < 0)
            return frc;
        if (!strcmp(k, "query")) o->val = it;
        else if (!strcmp(k, "operator")) o->op = it;
        else if (!strcmp(k, "minimum_should_match")) o->msm = it;
        else if (!strcmp(k, "boost")) o->boost = (float)it->valuedouble;
        else if (!strcmp(k, "analyzer")) {
            /* the one analyzer text fields have */
            if (!cJSON_IsString(it) || strcmp(it->valuestring, "standard"))
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                                    "[match] analyzer [%s] not found",
                                    cJSON_IsString(it) ? it->valuestring : "?");
        } else if (!strcmp(k, "zero_terms_query")) {
            if (cJSON_IsString(it) && !strcasecmp(it->valuestring, "all"))
                o->zero_all = true;
            else if (!cJSON_IsString(it) || strcasecmp(it->valuestring, "none"))
                return fds__dsl_err(c->err, "Unsupported zero_terms_query "
                                            "value [%s]", cJSON_IsString(it)
                                            ? it->valuestring : "?");
        } else if (!strcmp(k, "lenient")) {
            if (!cJSON_IsBool(it))
                return fds__dsl_err(c->err, "[match] query does not support "
                                            "[%s]", k);
            o->lenient = cJSON_IsTrue(it);
        }
        /* no synonyms are analysed, so both values of
         * auto_generate_synonyms_phrase_query give the same query */
        else if (!strcmp(k, "auto_generate_synonyms_phrase_query")) continue;
        else
            return fds__dsl_err(c->err, "[match] query does not support [%s]",
                                k);
    }
    if (!o->val)
        return fds__dsl_err(c->err, "No text specified for text query");
    return 0;
}

/* The match of text s[0..n) on text field f: match_none / match_all (no
 * token, zero_terms_query), a term (one token), else a bool of the terms
 * (must with operator and, should with minimum_should_match) keeping the
 * text.  NULL on error (the error filled but for ENOMEM). */
static fds_query *match_text(fds__dsl_ctx *c, const fds_field_info *f,
                             const char *s, size_t n, const match_opts *o,
                             bool and_op)
{
    fds_query *q = NULL;
    fds__dsl_toks v = {0};
    if (fds__dsl_tokens(s, n, &v)) {
        fds__dsl_toks_free(&v);
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        return NULL;
    }
    if (v.n == 0) {
        q = fds__dsl_qnew(o->zero_all ? FDS_Q_MATCH_ALL : FDS_Q_MATCH_NONE,
                          NULL);
    } else if (v.n == 1 && !o->msm) {
        q = term_query(f->path, f->type, v.t[0], v.l[0]);
    } else {
        q = fds__dsl_qnew(FDS_Q_BOOL, NULL);
        for (size_t i = 0; q && i < v.n; i++) {
            fds_query *t = term_query(f->path, f->type, v.t[i], v.l[i]);
            if (!t ||
                (and_op ? fds__dsl_push(&q->must, &q->nmust, t)
                        : fds__dsl_push(&q->should, &q->nshould, t))) {
                fds__query_free(t);
                fds__query_free(q);
                q = NULL;
            }
        }
        if (q && !(q->text = malloc(n + 1))) {
            fds__query_free(q);
            q = NULL;
        }
        if (q) { /* the bytes as given: JSON may hold a NUL */
            memcpy(q->text, s, n);
            q->text[n] = 0;
            q->text_len = n;
        }
        if (q && o->msm && !and_op) {
            int k;
            if (fds__dsl_msm(c, o->msm, (int)q->nshould, &k)) {
                fds__query_free(q);
                q = NULL;
            } else {
                q->msm = k > 0 ? k : 1;
            }
        }
    }
    fds__dsl_toks_free(&v);
    return q;
}

fds_query *fds__dsl_match(fds__dsl_ctx *c, const cJSON *body)
{
    const cJSON *fld;
    if (fds__dsl_leaf_field(c, body, "match", &fld))
        return NULL;
    match_opts o;
    memset(&o, 0, sizeof o);
    o.val = fld;
    o.boost = 1.0f;
    fds__dsl_fuzzy_defaults(&o.fz);
    if (cJSON_IsObject(fld)) {
        o.val = NULL;
        if (match_read(c, fld, &o))
            return NULL;
    }
    const cJSON *val = o.val, *op = o.op;
    char buf[64];
    const char *s;
    size_t n;
    if (!fds__dsl_scalar(c, val, buf, sizeof buf, &s, &n)) {
        fds__dsl_err(c->err, "[match] unknown token [%s] after [%s]",
                     fds__dsl_jtype(val), fld->string);
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
    const fds_field_info *f = fds__dsl_field(c, fld->string, &fb);
    fds_query *q = NULL;
    if (fds__dsl_not_searchable(c, f))
        return NULL;
    if (o.fuzzy && f && f->type != FDS_FT_OBJECT && fds__dsl_fuzzy_field(c, f))
        return NULL;
    if (!f || f->type == FDS_FT_OBJECT) {
        q = fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
    } else if (f->type == FDS_FT_KEYWORD) {
        q = term_query(f->path, f->type, s, n);
    } else if (f->type != FDS_FT_TEXT) {
        q = eq_query(c, f, val, "match");
        if (!q && o.lenient && c->err && c->err->code == FDS_EINVAL) {
            /* lenient: a value the field's type cannot read matches
             * nothing (Elasticsearch's MatchQuery with lenient) */
            fds_err_clear(c->err);
            q = fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
        }
    } else {
        q = match_text(c, f, s, n, &o, and_op);
    }
    if (q)
        q->boost = o.boost;
    else if (!c->err || !c->err->code)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (q && o.fuzzy && fds__dsl_make_fuzzy(c, q, &o.fz)) {
        fds__query_free(q);
        return NULL;
    }
    return q;
}

/* `term` on the `_index` metadata field (Elasticsearch's IndexFieldMapper:
 * a constant per index): every document of the index the request is
 * parsed for when s[0..n) names it, else none. */
static fds_query *index_query(fds__dsl_ctx *c, const char *s, size_t n)
{
    const char *ix = c->lim->index_name;
    bool same = strlen(ix) == n && !memcmp(ix, s, n);
    return fds__dsl_qnew(same ? FDS_Q_MATCH_ALL : FDS_Q_MATCH_NONE, NULL);
}

fds_query *fds__dsl_term_q(fds__dsl_ctx *c, const cJSON *body)
{
    const cJSON *fld;
    if (fds__dsl_leaf_field(c, body, "term", &fld))
        return NULL;
    const cJSON *val = fld;
    float boost = 1.0f;
    if (cJSON_IsObject(fld)) {
        val = cJSON_GetObjectItemCaseSensitive(fld, "value");
        boost = fds__dsl_boost(fld);
        const cJSON *it;
        cJSON_ArrayForEach(it, fld) /* every other key would be ignored */
            if (strcmp(it->string, "value") && strcmp(it->string, "boost") &&
                !(!strcmp(it->string, "case_insensitive") && cJSON_IsFalse(it))) {
                fds__dsl_err(c->err, "[term] query does not support [%s]",
                             it->string);
                return NULL;
            }
        if (!val) {
            fds__dsl_err(c->err, "[term] query does not support [%s]",
                 fld->child ? fld->child->string : "");
            return NULL;
        }
    }
    char buf[64];
    const char *s;
    size_t n;
    if (!fds__dsl_scalar(c, val, buf, sizeof buf, &s, &n)) {
        fds__dsl_err(c->err, "[term] query does not support array of values");
        return NULL;
    }
    fds_field_info fb;
    const fds_field_info *f = fds__dsl_field(c, fld->string, &fb);
    fds_query *q;
    if (!strcmp(fld->string, "_index") && c->lim->index_name) {
        q = index_query(c, s, n);
    } else if (!strcmp(fld->string, "_id")) {
        /* _id is not in the term dictionary: the _id table answers it, as
         * for an ids query (Elasticsearch accepts term on _id) */
        q = fds__dsl_qnew(FDS_Q_IDS, NULL);
        if (q) {
            q->vals = calloc(1, sizeof *q->vals);
            q->val_lens = calloc(1, sizeof *q->val_lens);
            if (!q->vals || !q->val_lens) {
                fds__query_free(q);
                return NULL;
            }
            q->vals[0] = fds__dsl_dupn(s, n);
            q->val_lens[0] = n;
            q->nvals = 1;
        }
    } else if (fds__dsl_not_searchable(c, f)) {
        return NULL;
    } else if (!f || f->type == FDS_FT_OBJECT)
        q = fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
    else if (f->type == FDS_FT_TEXT || f->type == FDS_FT_KEYWORD)
        q = term_query(f->path, f->type, s, n);
    else
        q = eq_query(c, f, val, "term");
    if (q)
        q->boost = boost;
    return q;
}

static fds_query *terms_of(fds__dsl_ctx *c, const cJSON *body, const cJSON *fld);

/* The terms of a lookup object `lk` ({"index", "id", "path", "routing"}:
 * Elasticsearch's TermsLookup) fetched by the request's lookup callback,
 * as a new array named like lk; NULL with c->err filled. */
static cJSON *lookup_terms(fds__dsl_ctx *c, const cJSON *lk)
{
    const char *v[4] = {NULL, NULL, NULL, NULL}; /* index, id, path, routing */
    static const char *const keys[4] = {"index", "id", "path", "routing"};
    const cJSON *it;
    cJSON_ArrayForEach(it, lk) {
        size_t k = 0;
        while (k < 4 && strcmp(it->string, keys[k]))
            k++;
        if (k == 4) {
            fds__dsl_err(c->err, "[terms] query does not support [%s] within "
                                 "lookup element", it->string);
            return NULL;
        }
        char buf[8];
        const char *s;
        size_t n;
        if (!cJSON_IsString(it)) {
            fds__dsl_err(c->err, "[terms] query lookup element [%s] must be a "
                                 "string", keys[k]);
            return NULL;
        }
        if (!fds__dsl_scalar(c, it, buf, sizeof buf, &s, &n) ||
            n != strlen(it->valuestring)) {
            fds__dsl_err(c->err, "[terms] query lookup element [%s] has a NUL "
                                 "character", keys[k]);
            return NULL;
        }
        v[k] = it->valuestring;
    }
    for (size_t k = 0; k < 3; k++)
        if (!v[k]) {
            fds__dsl_err(c->err, "[terms] query lookup element requires "
                                 "specifying the %s.", keys[k]);
            return NULL;
        }
    if (!c->lim->lookup) {
        fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                     "[terms] lookup (index, id, path) is not supported in "
                     "this request: give the terms as an array");
        return NULL;
    }
    if (++c->lookups > FDS_TERMS_LOOKUP_MAX) {
        fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                     "a search may hold at most %u terms lookups",
                     FDS_TERMS_LOOKUP_MAX);
        return NULL;
    }
    cJSON *arr = NULL;
    if (c->lim->lookup(c->lim->lookup_arg, v[0], v[1], v[3], v[2], &arr, c->err))
        return NULL;
    arr->string = lk->string; /* borrowed: the field's name */
    arr->type |= cJSON_StringIsConst;
    return arr;
}

fds_query *fds__dsl_terms(fds__dsl_ctx *c, const cJSON *body)
{
    const cJSON *fld;
    if (fds__dsl_leaf_field(c, body, "terms", &fld))
        return NULL;
    if (cJSON_IsObject(fld) && (cJSON_GetObjectItemCaseSensitive(fld, "index") ||
                                cJSON_GetObjectItemCaseSensitive(fld, "id") ||
                                cJSON_GetObjectItemCaseSensitive(fld, "path"))) {
        cJSON *looked = lookup_terms(c, fld);
        if (!looked)
            return NULL;
        fds_query *q = terms_of(c, body, looked);
        cJSON_Delete(looked);
        return q;
    }
    return terms_of(c, body, fld);
}

/* The terms query of field array fld (body: the query's object, for its
 * boost); NULL with c->err filled. */
static fds_query *terms_of(fds__dsl_ctx *c, const cJSON *body, const cJSON *fld)
{
    if (!cJSON_IsArray(fld)) {
        fds__dsl_err(c->err, "[terms] query does not support [%s]",
                     fld->string);
        return NULL;
    }
    size_t nv = (size_t)cJSON_GetArraySize(fld);
    if (nv > c->lim->max_terms_count) {
        fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                     "The number of terms [%zu] used in the Terms Query "
                     "request has exceeded the allowed maximum of [%u]. This "
                     "maximum can be set by changing the "
                     "[index.max_terms_count] index level setting.", nv,
                     c->lim->max_terms_count);
        return NULL;
    }
    fds_field_info fb;
    const fds_field_info *f = fds__dsl_field(c, fld->string, &fb);
    float boost = fds__dsl_boost(body);
    bool ids = !strcmp(fld->string, "_id"); /* answered by the _id table */
    if (!strcmp(fld->string, "_index") && c->lim->index_name) {
        bool any = false;
        const cJSON *v;
        cJSON_ArrayForEach(v, fld)
            any |= cJSON_IsString(v) && !strcmp(v->valuestring, c->lim->index_name);
        fds_query *q = index_query(c, any ? c->lim->index_name : "", any ? strlen(c->lim->index_name) : 0);
        if (q)
            q->boost = boost;
        return q;
    }
    if (!ids && fds__dsl_not_searchable(c, f))
        return NULL;
    if (!ids && (!f || f->type == FDS_FT_OBJECT))
        return fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
    fds_query *q;
    if (ids || f->type == FDS_FT_TEXT || f->type == FDS_FT_KEYWORD) {
        q = ids ? fds__dsl_qnew(FDS_Q_IDS, NULL)
                : fds__dsl_qnew(FDS_Q_TERMS, f->path);
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
            if (!fds__dsl_scalar(c, it, buf, sizeof buf, &s, &l)) {
                fds__dsl_err(c->err,
                             "[terms] query does not support [%s] values",
                             fds__dsl_jtype(it));
                fds__query_free(q);
                return NULL;
            }
            q->vals[q->nvals] = fds__dsl_dupn(s, l);
            q->val_lens[q->nvals++] = l;
        }
    } else {
        /* numeric terms: any of several equality ranges, constant score */
        fds_query *b = fds__dsl_qnew(FDS_Q_BOOL, NULL);
        if (!b)
            return NULL;
        const cJSON *it;
        cJSON_ArrayForEach(it, fld) {
            fds_query *e = eq_query(c, f, it, "terms");
            if (!e || fds__dsl_push(&b->should, &b->nshould, e)) {
                fds__query_free(e);
                fds__query_free(b);
                return NULL;
            }
        }
        /* wrap: filter(any) so the score is the boost, not a sum */
        q = fds__dsl_qnew(FDS_Q_BOOL, NULL);
        fds_query *all = fds__dsl_qnew(FDS_Q_MATCH_ALL, NULL);
        if (!q || !all || fds__dsl_push(&q->must, &q->nmust, all) ||
            fds__dsl_push(&q->filter, &q->nfilter, b)) {
            fds__query_free(q);
            fds__query_free(all);
            fds__query_free(b);
            return NULL;
        }
    }
    q->boost = boost;
    return q;
}

/* A range query's options (everything but its bounds). */
typedef struct range_opts {
    float boost;
    bool include_lower, include_upper; /* for "from" and "to" */
    fds_date_format fmt;               /* `format`, else the field's */
    const fds_date_format *formats;    /* NULL: the default */
    fds_tz tz;                         /* time_zone (zeroed: UTC) */
} range_opts;

/* Read and check the options of range body `fld` on field `f`, as
 * Elasticsearch's RangeQueryBuilder does: format and time_zone on date
 * fields only, relation intersects/within/contains (the same on single
 * values; disjoint refused), include_lower/include_upper for from/to.
 * 0 or an FDS_E* code with the error filled. */
static int range_options(fds__dsl_ctx *c, const fds_field_info *f,
                         const cJSON *fld, range_opts *ro)
{
    *ro = (range_opts){.boost = 1.0f, .include_lower = true,
                       .include_upper = true, .formats = f->date_format};
    const cJSON *it;
    cJSON_ArrayForEach(it, fld) {
        const char *k = it->string;
        bool date = f->type == FDS_FT_DATE;
        if (!strcmp(k, "gte") || !strcmp(k, "gt") || !strcmp(k, "lte") ||
            !strcmp(k, "lt") || !strcmp(k, "from") || !strcmp(k, "to"))
            continue;
        if (!strcmp(k, "boost")) {
            if (!cJSON_IsNumber(it))
                return fds__dsl_err(c->err, "[range] [boost] must be a number");
            ro->boost = (float)it->valuedouble;
        } else if (!strcmp(k, "include_lower") || !strcmp(k, "include_upper")) {
            if (!cJSON_IsBool(it))
                return fds__dsl_err(c->err, "[range] [%s] must be a boolean", k);
            *(k[8] == 'l' ? &ro->include_lower : &ro->include_upper) =
                cJSON_IsTrue(it);
        } else if (!strcmp(k, "relation")) {
            const char *v = cJSON_IsString(it) ? it->valuestring : "";
            if (strcasecmp(v, "intersects") && strcasecmp(v, "within") &&
                strcasecmp(v, "contains"))
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                                    "Field [%s] of type [%s] does not support "
                                    "[%s] ranges", f->path,
                                    f->type == FDS_FT_DATE      ? "date"
                                    : f->type == FDS_FT_KEYWORD ? "keyword"
                                                                : "number",
                                    v);
        } else if (!strcmp(k, "format") || !strcmp(k, "time_zone")) {
            if (!date)
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                                    "[range] %s can not be applied to non date "
                                    "field [%s]", k, f->path);
            if (!cJSON_IsString(it))
                return fds__dsl_err(c->err, "[range] [%s] must be a string", k);
            const char *v = it->valuestring;
            char vb[8];
            const char *raw;
            size_t rl;
            if (!fds__dsl_scalar(c, it, vb, sizeof vb, &raw, &rl) || rl != strlen(v))
                return fds__dsl_err(c->err, "[range] [%s] has a NUL character", k);
            if (k[0] == 'f') {
                if (fds__date_format_parse(v, strlen(v), &ro->fmt))
                    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                        "[range] format [%s] is not supported: use "
                                        "strict_date_optional_time, strict_date, "
                                        "epoch_millis, epoch_second or a pattern "
                                        "of y M d H m s S Z letters", v);
                ro->formats = &ro->fmt;
            } else if (fds__tz_parse(v, strlen(v), &ro->tz)) {
                /* java.time's ZoneRulesException, as Elasticsearch returns it */
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "Unknown time-zone ID: %s", v);
            }
        } else {
            return fds__dsl_err(c->err, "[range] query does not support [%s]", k);
        }
    }
    return 0;
}

/* One bound of a date range: a number (epoch, in seconds under
 * epoch_second alone) or a date math expression; `round_up` as
 * fds__date_math.  0 or an FDS_E* code with the error filled. */
static int date_bound(fds__dsl_ctx *c, const cJSON *v, const range_opts *ro,
                      bool round_up, int64_t *l, double *d, int *over)
{
    *over = 0;
    if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        unsigned bits = ro->formats ? ro->formats->bits : FDS_DF_DEFAULT;
        if (!(bits & FDS_DF_EPOCH_MILLIS) && (bits & FDS_DF_EPOCH_SECOND))
            x *= 1000.0;
        *l = clamp_long(x, over);
        *d = (double)*l;
        return 0;
    }
    if (!cJSON_IsString(v))
        return fds__dsl_err(c->err, "[range] query does not support [%s] values "
                                    "for a date field", fds__dsl_jtype(v));
    if (!c->now_ms) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c->now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    /* the whole string, a NUL in it too (which no date has) */
    char buf[64];
    const char *s;
    size_t n;
    if (!fds__dsl_scalar(c, v, buf, sizeof buf, &s, &n) ||
        fds__date_math(s, n, ro->formats, &ro->tz, round_up, c->now_ms, l))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_PARSE,
                            "failed to parse date field [%s] with format [%s]",
                            v->valuestring, ro->formats ? ro->formats->text
                                           : "strict_date_optional_time||"
                                             "epoch_millis");
    *d = (double)*l;
    return 0;
}

fds_query *fds__dsl_range(fds__dsl_ctx *c, const cJSON *body)
{
    const cJSON *fld;
    if (fds__dsl_leaf_field(c, body, "range", &fld))
        return NULL;
    if (!cJSON_IsObject(fld)) {
        fds__dsl_err(c->err,
                     "[range] query malformed, no start_object after query "
                     "name");
        return NULL;
    }
    fds_field_info fb;
    const fds_field_info *f = fds__dsl_field(c, fld->string, &fb);
    if (!f || f->type == FDS_FT_OBJECT || f->type == FDS_FT_TEXT)
        return fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
    range_opts ro;
    if (range_options(c, f, fld, &ro))
        return NULL;
    fds_query *q = fds__dsl_qnew(FDS_Q_RANGE, f->path);
    if (!q)
        return NULL;
    q->ftype = f->type;
    q->boost = ro.boost;
    const cJSON *it;
    bool empty = false; /* a bound excludes every long */
    cJSON_ArrayForEach(it, fld) {
        const char *k = it->string;
        bool lo = !strcmp(k, "gte") || !strcmp(k, "gt") || !strcmp(k, "from");
        bool hi = !strcmp(k, "lte") || !strcmp(k, "lt") || !strcmp(k, "to");
        if (!lo && !hi)
            continue; /* an option, read by range_options */
        bool incl = !strcmp(k, "from")  ? ro.include_lower
                    : !strcmp(k, "to") ? ro.include_upper
                                       : strcmp(k, "gt") && strcmp(k, "lt");
        if (cJSON_IsNull(it))
            continue;
        if (f->type == FDS_FT_KEYWORD) {
            char buf[64];
            const char *s;
            size_t n;
            if (!fds__dsl_scalar(c, it, buf, sizeof buf, &s, &n)) {
                fds__dsl_err(c->err, "[range] bad value for [%s]", k);
                fds__query_free(q);
                return NULL;
            }
            char **dst = lo ? &q->lo_s : &q->hi_s;
            free(*dst);
            *dst = fds__dsl_dupn(s, n);
            if (lo) { q->lo_s_len = n; q->lo_s_incl = incl; }
            else { q->hi_s_len = n; q->hi_s_incl = incl; }
            continue;
        }
        int64_t l;
        double d;
        int over;
        if (f->type == FDS_FT_DATE
                ? date_bound(c, it, &ro, lo ? !incl : incl, &l, &d, &over)
                : num_bound(c, f, it, "range", &l, &d, &over)) {
            fds__query_free(q);
            return NULL;
        }
        if (lo) {
            q->lo_d = d;
            q->lo_d_incl = incl;
            empty |= !long_side(f, d, l, over, incl, false, &q->lo_l);
        } else {
            q->hi_d = d;
            q->hi_d_incl = incl;
            empty |= !long_side(f, d, l, over, incl, true, &q->hi_l);
        }
    }
    if (empty) {
        q->lo_l = INT64_MAX;
        q->hi_l = INT64_MIN;
    }
    return q;
}

/* Leaf fields an exists pattern may resolve to (more: 400 too_many_clauses,
 * as indices.query.bool.max_clause_count bounds Elasticsearch's). */
#define EXISTS_MAX_FIELDS 1024

/* The fields of an exists pattern, collected before any is parsed. */
typedef struct exists_acc {
    char **paths;
    size_t n;
} exists_acc;

static int exists_add(void *arg, const char *path)
{
    exists_acc *a = arg;
    if (a->n >= EXISTS_MAX_FIELDS)
        return FDS_ETOOBIG;
    char **np = realloc(a->paths, (a->n + 1) * sizeof *np);
    if (!np)
        return FDS_ENOMEM;
    a->paths = np;
    if (!(np[a->n] = fds__dsl_dupn(path, strlen(path))))
        return FDS_ENOMEM;
    a->n++;
    return 0;
}

/* {"exists": {"field": path}} of one mapped leaf field, parsed one level
 * below c->depth and counted as the dispatcher counts it.  NULL on error. */
static fds_query *exists_one(fds__dsl_ctx *c, const char *path)
{
    if (fds__dsl_depth_enter(c))
        return NULL;
    cJSON *b = cJSON_CreateObject();
    fds_query *q = b && cJSON_AddStringToObject(b, "field", path)
                       ? fds__dsl_exists(c, b)
                       : NULL;
    cJSON_Delete(b);
    c->depth--;
    return q ? fds__dsl_count(c, q, fds__dsl_leaves(q)) : NULL;
}

/* The constant_score (boost) of a bool should of the exists of each path,
 * built as the dispatcher builds {"constant_score": {"filter": {"bool":
 * {"should": [{"exists": {"field": path}}, ...]}}, "boost": boost}}: two
 * levels deeper, each exists a third and one clause.  NULL on error. */
static fds_query *exists_any(fds__dsl_ctx *c, char *const *paths, size_t n,
                             float boost)
{
    if (fds__dsl_depth_enter(c) || fds__dsl_depth_enter(c))
        return NULL;
    fds_query *b = fds__dsl_qnew(FDS_Q_BOOL, NULL);
    for (size_t i = 0; b && i < n; i++) {
        fds_query *e = exists_one(c, paths[i]);
        if (!e || fds__dsl_push(&b->should, &b->nshould, e)) {
            fds__query_free(e);
            fds__query_free(b);
            return NULL;
        }
    }
    c->depth -= 2;
    fds_query *q = b ? fds__dsl_qnew(FDS_Q_CONST, NULL) : NULL;
    if (!q || fds__dsl_push(&q->filter, &q->nfilter, b)) {
        fds__query_free(b);
        fds__query_free(q);
        return NULL;
    }
    q->boost = boost;
    return q;
}

/* exists over the mapped leaf fields matching glob `pat` (Elasticsearch's
 * ExistsQueryBuilder: a pattern, or an object's "name.*"): none matches
 * nothing, any other number a constant_score of a bool should of their
 * exists. */
static fds_query *exists_pattern(fds__dsl_ctx *c, const char *pat, float boost)
{
    exists_acc acc = {0};
    int rc = fds__dsl_fields_matching(c, pat, exists_add, &acc);
    fds_query *q = NULL;
    if (!rc && acc.n == 0)
        q = fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
    else if (!rc)
        q = exists_any(c, acc.paths, acc.n, boost);
    for (size_t i = 0; i < acc.n; i++)
        free(acc.paths[i]);
    free(acc.paths);
    if (rc == FDS_ETOOBIG)
        fds_err_setk(c->err, rc, FDS_KIND_TOO_MANY_CLAUSES,
                     "[exists] field pattern [%s] matches more than %d fields", pat,
                     EXISTS_MAX_FIELDS);
    else if (rc)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    else if (!q && c->err && !c->err->code)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (q && acc.n == 0)
        q->boost = boost;
    return q;
}

fds_query *fds__dsl_exists(fds__dsl_ctx *c, const cJSON *b)
{
    fds_query *q = NULL;
    const cJSON *fl = cJSON_IsObject(b)
                          ? cJSON_GetObjectItemCaseSensitive(b, "field")
                          : NULL;
    if (!cJSON_IsString(fl)) {
        fds__dsl_err(c->err, "[exists] must be provided with a [field]");
        return NULL;
    }
    float boost = fds__dsl_boost(b);
    fds_field_info fb;
    const char *name = fl->valuestring;
    const fds_field_info *f = strchr(name, '*') ? NULL : fds__dsl_field(c, name, &fb);
    if (f && f->type != FDS_FT_OBJECT) {
        q = fds__dsl_qnew(FDS_Q_EXISTS, f->path);
    } else if (strchr(name, '*')) {
        return exists_pattern(c, name, boost);
    } else if (f) { /* an object: any field under it */
        size_t n = strlen(name);
        char *pat = malloc(n + 3);
        if (!pat) {
            fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
            return NULL;
        }
        memcpy(pat, name, n);
        memcpy(pat + n, ".*", 3);
        q = exists_pattern(c, pat, boost);
        free(pat);
        return q;
    } else {
        q = fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
    }
    if (q)
        q->boost = boost;
    return q;
}

fds_query *fds__dsl_ids(fds__dsl_ctx *c, const cJSON *b)
{
    fds_query *q = NULL;
    const cJSON *vals = cJSON_IsObject(b)
                            ? cJSON_GetObjectItemCaseSensitive(b, "values")
                            : NULL;
    if (!cJSON_IsArray(vals)) {
        fds__dsl_err(c->err,
                     "[ids] query malformed, [values] must be an array");
    } else if ((size_t)cJSON_GetArraySize(vals) >
               c->lim->max_result_window) {
        /* Elasticsearch's IdsQueryBuilder bounds the ids by the window */
        fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_QUERY_SHARD,
                     "failed to create query: Too many ids specified, allowed "
                     "max result window is [%u]", c->lim->max_result_window);
    } else if ((q = fds__dsl_qnew(FDS_Q_IDS, NULL))) {
        size_t n = (size_t)cJSON_GetArraySize(vals);
        q->vals = calloc(n ? n : 1, sizeof *q->vals);
        q->val_lens = calloc(n ? n : 1, sizeof *q->val_lens);
        q->boost = fds__dsl_boost(b);
        const cJSON *it;
        cJSON_ArrayForEach(it, vals) {
            if (!q->vals || !q->val_lens)
                break;
            char buf[64];
            const char *s;
            size_t l;
            if (!fds__dsl_scalar(c, it, buf, sizeof buf, &s, &l))
                continue;
            q->vals[q->nvals] = fds__dsl_dupn(s, l);
            q->val_lens[q->nvals++] = l;
        }
    }
    return q;
}
