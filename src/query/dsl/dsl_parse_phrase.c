/*
 * dsl_parse_phrase.c: match_phrase and match_phrase_prefix, as
 * Elasticsearch 8's MatchPhraseQueryBuilder, MatchPhrasePrefixQueryBuilder
 * and MatchQueryParser build them; multi_match (type phrase and
 * phrase_prefix) and quoted phrases of query strings are rewritten into
 * them.
 *
 * The text is analyzed with the field's analyzer (standard: positions are
 * consecutive, no stop words); then, as MatchQueryParser does:
 *   no token              zero_terms_query: match_none (default) or
 *                         match_all
 *   one token             a term query (match_phrase_prefix: a prefix
 *                         phrase of one position, which rewrites into the
 *                         should-bool of its expansions, as Lucene's
 *                         MultiPhraseQuery of one position does)
 *   several               FDS_Q_PHRASE (PhraseQuery / MultiPhrasePrefixQuery
 *                         with `slop`), refused with Elasticsearch's
 *                         "was indexed without position data" on a field
 *                         mapped with index_options docs or freqs
 * A keyword, number, date or boolean field takes the whole value as one
 * term, as the match query does.  Options: query, slop, zero_terms_query,
 * boost, _name, analyzer (standard only: the one analyzer we have), and
 * max_expansions (prefix only, Elasticsearch's default 50).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mapping/analysis.h"
#include "dsl/dsl_parse_int.h"

/* Elasticsearch's default max_expansions of match_phrase_prefix
 * (FuzzyQuery.defaultMaxExpansions). */
#define PHRASE_PREFIX_MAX_EXPANSIONS 50

static fds_query *oom(fds__dsl_ctx *c)
{
    fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return NULL;
}

fds_query *fds__dsl_phrase_new(fds__dsl_ctx *c, const fds_field_info *f,
                               const char *s, size_t n,
                               const fds__phrase_opts *o)
{
    fds__dsl_toks v = {0};
    if (fds__dsl_tokens(s, n, &v)) {
        fds__dsl_toks_free(&v);
        return oom(c);
    }
    fds_query *q = NULL;
    if (v.n == 0) {
        q = fds__dsl_qnew(o->zero_all ? FDS_Q_MATCH_ALL : FDS_Q_MATCH_NONE,
                          NULL);
    } else if (v.n == 1 && !o->prefix) {
        if ((q = fds__dsl_qnew(FDS_Q_TERM, f->path))) {
            q->ftype = f->type;
            q->term = v.t[0];
            q->term_len = v.l[0];
            v.t[0] = NULL;
        }
    } else if (v.n > 1 && f->index_options != FDS_IO_POSITIONS) {
        fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                     "failed to create query: field:[%s] was indexed without "
                     "position data; cannot run PhraseQuery", f->path);
    } else if ((q = fds__dsl_qnew(FDS_Q_PHRASE, f->path))) {
        q->ftype = f->type;
        q->vals = v.t;
        q->val_lens = v.l;
        q->nvals = q->npos = v.n;
        q->slop = o->slop;
        q->phrase_prefix = o->prefix;
        q->fz_max_exp = o->max_expansions;
        v.t = NULL;
        v.l = NULL;
        v.n = 0;
    }
    fds__dsl_toks_free(&v);
    if (q)
        q->boost = o->boost;
    else if (!c->err->code)
        oom(c);
    return q;
}

/* A non-negative integer option `k` of query `qname` into *out.  0 or
 * FDS_EPARSE / FDS_EINVAL with Elasticsearch's message. */
static int int_opt(fds__dsl_ctx *c, const char *qname, const cJSON *it,
                   const char *neg, int *out)
{
    double d = cJSON_IsNumber(it) ? it->valuedouble
               : cJSON_IsString(it) ? strtod(it->valuestring, NULL) : NAN;
    if (isnan(d) || d != floor(d) || d > 2147483647.0)
        return fds__dsl_err(c->err, "[%s] [%s] must be an integer", qname,
                            it->string);
    if (d < 0)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "%s", neg);
    *out = (int)d;
    return 0;
}

fds_query *fds__dsl_match_phrase(fds__dsl_ctx *c, const cJSON *body,
                                 bool prefix)
{
    const char *qname = prefix ? "match_phrase_prefix" : "match_phrase";
    const cJSON *fld;
    if (fds__dsl_leaf_field(c, body, qname, &fld))
        return NULL;
    fds__phrase_opts o = {.prefix = prefix, .boost = 1.0f,
                          .max_expansions = PHRASE_PREFIX_MAX_EXPANSIONS};
    const cJSON *val = fld;
    if (cJSON_IsObject(fld)) {
        val = NULL;
        const cJSON *it;
        cJSON_ArrayForEach(it, fld) {
            const char *k = it->string;
            int rc = 0;
            if (!strcmp(k, "query")) {
                val = it;
            } else if (!strcmp(k, "slop")) {
                rc = int_opt(c, qname, it, "No negative slop allowed.", &o.slop);
            } else if (prefix && !strcmp(k, "max_expansions")) {
                rc = int_opt(c, qname, it, "No negative maxExpansions allowed.",
                             &o.max_expansions);
            } else if (!strcmp(k, "boost") && cJSON_IsNumber(it)) {
                o.boost = (float)it->valuedouble;
            } else if (!strcmp(k, "zero_terms_query")) {
                if (cJSON_IsString(it) && !strcasecmp(it->valuestring, "all"))
                    o.zero_all = true;
                else if (!cJSON_IsString(it) || strcasecmp(it->valuestring, "none"))
                    rc = fds__dsl_err(c->err, "Unsupported zero_terms_query "
                                      "value [%s]", cJSON_IsString(it)
                                      ? it->valuestring : "?");
            } else if (!strcmp(k, "analyzer")) {
                if (!cJSON_IsString(it) || strcmp(it->valuestring, "standard"))
                    rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                                      "[%s] analyzer [%s] not found", qname,
                                      cJSON_IsString(it) ? it->valuestring : "?");
            } else {
                rc = fds__dsl_err(c->err, "[%s] query does not support [%s]",
                                  qname, k);
            }
            if (rc)
                return NULL;
        }
        if (!val) {
            fds__dsl_err(c->err, "No text specified for text query");
            return NULL;
        }
    }
    char buf[64];
    const char *s;
    size_t n;
    if (!fds__dsl_scalar(c, val, buf, sizeof buf, &s, &n)) {
        fds__dsl_err(c->err, "[%s] unknown token [%s] after [%s]", qname,
                     fds__dsl_jtype(val), fld->string);
        return NULL;
    }
    fds_field_info fb;
    const fds_field_info *f = fds__dsl_field(c, fld->string, &fb);
    if (fds__dsl_not_searchable(c, f))
        return NULL;
    if (f && f->type == FDS_FT_TEXT)
        return fds__dsl_phrase_new(c, f, s, n, &o);
    /* the match query's answer for the other types: one term, or none */
    cJSON *m = cJSON_CreateObject();
    cJSON *mb = m ? cJSON_AddObjectToObject(m, fld->string) : NULL;
    cJSON *qv = mb ? cJSON_Duplicate(val, true) : NULL;
    if (!qv || !cJSON_AddItemToObject(mb, "query", qv)) {
        cJSON_Delete(qv);
        cJSON_Delete(m);
        return oom(c);
    }
    cJSON_AddNumberToObject(mb, "boost", o.boost);
    fds_query *q = fds__dsl_match(c, m);
    cJSON_Delete(m);
    return q;
}
