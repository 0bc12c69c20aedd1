/*
 * dsl_parse_compound.c: the compound queries, whose clauses are query
 * objects parsed again by the dispatcher (dsl_parse_query.c) -- bool with
 * its clause lists and minimum_should_match, constant_score, dis_max and
 * boosting.  This and the dispatcher are the grammar's recursion: a query
 * holds queries.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_parse_int.h"

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

fds_query *fds__dsl_bool(fds__dsl_ctx *c, const cJSON *body)
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

/* The query object member `key` of body (required). */
static fds_query *sub_query(fds__dsl_ctx *c, const char *qname,
                            const cJSON *body, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, key);
    if (!v) {
        fds__dsl_err(c->err, "[%s] requires '%s' element", qname, key);
        return NULL;
    }
    return fds__dsl_query(c, v);
}

/* Members of a compound body other than `allowed` are refused. */
static int only_keys(fds__dsl_ctx *c, const char *qname, const cJSON *body,
                     const char *const *allowed)
{
    if (!cJSON_IsObject(body))
        return fds__dsl_err(c->err,
                            "[%s] query malformed, no start_object after "
                            "query name", qname);
    const cJSON *it;
    cJSON_ArrayForEach(it, body) {
        bool ok = !strcmp(it->string, "boost");
        for (size_t i = 0; !ok && allowed[i]; i++)
            ok = !strcmp(it->string, allowed[i]);
        if (!ok)
            return fds__dsl_err(c->err, "[%s] query does not support [%s]",
                                qname, it->string);
    }
    return 0;
}

/* A compound node holding k in list (filter/should/must). */
static fds_query *wrap(fds_query *k, fds_query ***list, size_t *n,
                       fds_query *q)
{
    if (!k || !q || fds__dsl_push(list, n, k)) {
        fds__query_free(k);
        fds__query_free(q);
        return NULL;
    }
    return q;
}

fds_query *fds__dsl_constant_score(fds__dsl_ctx *c, const cJSON *body)
{
    static const char *const keys[] = {"filter", NULL};
    if (only_keys(c, "constant_score", body, keys))
        return NULL;
    fds_query *k = sub_query(c, "constant_score", body, "filter");
    fds_query *q = k ? fds__dsl_qnew(FDS_Q_CONST, NULL) : NULL;
    if (q)
        q->boost = fds__dsl_boost(body);
    return q ? wrap(k, &q->filter, &q->nfilter, q)
             : (fds__query_free(k), NULL);
}

fds_query *fds__dsl_dis_max(fds__dsl_ctx *c, const cJSON *body)
{
    static const char *const keys[] = {"queries", "tie_breaker", NULL};
    if (only_keys(c, "dis_max", body, keys))
        return NULL;
    const cJSON *qs = cJSON_GetObjectItemCaseSensitive(body, "queries");
    const cJSON *tb = cJSON_GetObjectItemCaseSensitive(body, "tie_breaker");
    if (!cJSON_IsArray(qs) || !cJSON_GetArraySize(qs)) {
        fds__dsl_err(c->err, "[dis_max] requires 'queries' field with at "
                             "least one clause");
        return NULL;
    }
    if (tb && (!cJSON_IsNumber(tb) || tb->valuedouble < 0 ||
               tb->valuedouble > 1)) {
        fds__dsl_err(c->err, "[dis_max] tie_breaker must be a number in "
                             "[0, 1]");
        return NULL;
    }
    fds_query *q = fds__dsl_qnew(FDS_Q_DISMAX, NULL);
    if (!q)
        return NULL;
    q->boost = fds__dsl_boost(body);
    q->tie = tb ? (float)tb->valuedouble : 0.0f;
    const cJSON *it;
    cJSON_ArrayForEach(it, qs) {
        fds_query *k = fds__dsl_query(c, it);
        if (!wrap(k, &q->should, &q->nshould, q))
            return NULL; /* q freed */
    }
    return q;
}

fds_query *fds__dsl_boosting(fds__dsl_ctx *c, const cJSON *body)
{
    static const char *const keys[] = {"positive", "negative",
                                       "negative_boost", NULL};
    if (only_keys(c, "boosting", body, keys))
        return NULL;
    const cJSON *nb = cJSON_GetObjectItemCaseSensitive(body, "negative_boost");
    if (!cJSON_IsNumber(nb) || nb->valuedouble < 0 || !isfinite(nb->valuedouble)) {
        fds__dsl_err(c->err, "[boosting] query requires 'negative_boost' to "
                             "be set to be a positive value'");
        return NULL;
    }
    fds_query *q = fds__dsl_qnew(FDS_Q_BOOSTING, NULL);
    if (!q)
        return NULL;
    q->boost = fds__dsl_boost(body);
    q->tie = (float)nb->valuedouble;
    q->msm = 0;
    if (!wrap(sub_query(c, "boosting", body, "positive"),
              &q->must, &q->nmust, q))
        return NULL;
    if (!wrap(sub_query(c, "boosting", body, "negative"),
              &q->should, &q->nshould, q))
        return NULL;
    return q;
}
