/*
 * dsl_parse_query.c: the query object of the DSL -- `{"<type>": body}`
 * dispatched to its parser through the registry of query types, with its
 * `_name`, the nesting bound, the clause count and the boost check of the
 * whole tree.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_parse_int.h"

/* ---- the registry of query types ---------------------------------------- */

/* How the dispatcher counts a parsed query's clauses: its leaves, none (a
 * compound's clauses counted themselves), or one (a terms set). */
enum { DSL_COUNT_LEAVES, DSL_COUNT_NONE, DSL_COUNT_ONE };

/* The parser of query type `t`; `body` is the value under the type. */
typedef fds_query *(*dsl_parse_fn)(fds__dsl_ctx *c, const char *t,
                                   const cJSON *body);

static fds_query *p_match(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_match(c, b);
}

static fds_query *p_match_phrase(fds__dsl_ctx *c, const char *t,
                                 const cJSON *b)
{
    return fds__dsl_match_phrase(c, b, t[12] != 0);
}

/* match_all and match_none. */
static fds_query *p_match_all(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    if (!cJSON_IsObject(b)) {
        fds__dsl_err(c->err,
                     "[%s] query malformed, no start_object after query name",
                     t);
        return NULL;
    }
    fds_query *q =
        fds__dsl_qnew(t[6] == 'a' ? FDS_Q_MATCH_ALL : FDS_Q_MATCH_NONE, NULL);
    if (q)
        q->boost = fds__dsl_boost(b);
    return q;
}

static fds_query *p_term(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_term_q(c, b);
}

static fds_query *p_terms(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_terms(c, b);
}

static fds_query *p_range(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_range(c, b);
}

static fds_query *p_bool(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_bool(c, b);
}

static fds_query *p_exists(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_exists(c, b);
}

static fds_query *p_ids(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_ids(c, b);
}

static fds_query *p_fuzzy(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_fuzzy(c, b);
}

static fds_query *p_constant_score(fds__dsl_ctx *c, const char *t,
                                   const cJSON *b)
{
    (void)t;
    return fds__dsl_constant_score(c, b);
}

static fds_query *p_dis_max(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_dis_max(c, b);
}

static fds_query *p_boosting(fds__dsl_ctx *c, const char *t, const cJSON *b)
{
    (void)t;
    return fds__dsl_boosting(c, b);
}

static fds_query *p_multi_match(fds__dsl_ctx *c, const char *t,
                                const cJSON *b)
{
    (void)t;
    return fds__dsl_multi_match(c, b);
}

static fds_query *p_query_string(fds__dsl_ctx *c, const char *t,
                                 const cJSON *b)
{
    return fds__dsl_query_string(c, b, t[0] == 's');
}

/* One query type: its name, parser and clause count. */
typedef struct dsl_entry {
    const char *name;
    dsl_parse_fn parse;
    int count; /* DSL_COUNT_* */
} dsl_entry;

/* Every query type of the DSL (Elasticsearch's SearchModule registers
 * its queries the same way). */
static const dsl_entry QUERIES[] = {
    {"match", p_match, DSL_COUNT_LEAVES},
    {"match_phrase", p_match_phrase, DSL_COUNT_LEAVES},
    {"match_phrase_prefix", p_match_phrase, DSL_COUNT_LEAVES},
    {"match_all", p_match_all, DSL_COUNT_LEAVES},
    {"match_none", p_match_all, DSL_COUNT_LEAVES},
    {"term", p_term, DSL_COUNT_LEAVES},
    {"terms", p_terms, DSL_COUNT_ONE},
    {"range", p_range, DSL_COUNT_LEAVES},
    {"bool", p_bool, DSL_COUNT_NONE},
    {"exists", p_exists, DSL_COUNT_LEAVES},
    {"ids", p_ids, DSL_COUNT_LEAVES},
    {"prefix", fds__dsl_pattern, DSL_COUNT_LEAVES},
    {"wildcard", fds__dsl_pattern, DSL_COUNT_LEAVES},
    {"regexp", fds__dsl_pattern, DSL_COUNT_LEAVES},
    {"fuzzy", p_fuzzy, DSL_COUNT_LEAVES},
    {"constant_score", p_constant_score, DSL_COUNT_NONE},
    {"dis_max", p_dis_max, DSL_COUNT_NONE},
    {"boosting", p_boosting, DSL_COUNT_NONE},
    {"multi_match", p_multi_match, DSL_COUNT_NONE},
    {"query_string", p_query_string, DSL_COUNT_NONE},
    {"simple_query_string", p_query_string, DSL_COUNT_NONE},
};

/* The entry of query type `t`, NULL when there is none. */
static const dsl_entry *dsl_lookup(const char *t)
{
    for (size_t i = 0; i < sizeof QUERIES / sizeof *QUERIES; i++)
        if (!strcmp(QUERIES[i].name, t))
            return &QUERIES[i];
    return NULL;
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
    if (fds__dsl_depth_enter(c))
        return NULL;
    const cJSON *b = j->child;
    const char *t = b->string;
    const dsl_entry *e = dsl_lookup(t);
    fds_query *q = NULL;
    if (e)
        q = e->parse(c, t, b);
    else
        fds__dsl_err(c->err, "unknown query [%s]", t);
    c->depth--;
    const char *why = q && !c->depth ? bad_boost(q) : NULL;
    if (why) {
        fds__query_free(q);
        fds__dsl_err(c->err, "%s", why);
        return NULL;
    }
    /* a compound's clauses counted themselves; terms is one set query */
    bool compound = q && (q->type == FDS_Q_CONST || q->type == FDS_Q_DISMAX ||
                          q->type == FDS_Q_BOOSTING ||
                          e->count == DSL_COUNT_NONE);
    if (q)
        return fds__dsl_count(c, q, compound ? 0
                                    : e->count == DSL_COUNT_ONE ? 1
                                    : fds__dsl_leaves(q));
    if (!q && c->err && !c->err->code)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return q;
}
