/*
 * dsl_parse_multi.c: the multi-term queries -- prefix, wildcard, regexp
 * and fuzzy (with the fuzzy options a `match` takes too).
 *
 * A multi-term query keeps its compiled pattern (term_pat.h) and is
 * expanded per segment over the term dictionary when it runs
 * (exec/iter.c): Elasticsearch's default rewrite, constant_score(_blended),
 * scores every match with the query's boost, so no term statistics are
 * needed and there is no bound on the terms it visits (a bitset of docs is
 * filled, as Lucene's MultiTermQueryConstantScoreBlendedWrapper does past
 * 16 terms).  Other `rewrite` methods are refused.
 *
 * A fuzzy query (and a `match` with `fuzziness`) keeps its term and edit
 * options; it is expanded when the search compiles (exec/compile.c) over
 * every segment, as Lucene's FuzzyQuery with its default rewrite
 * (TopTermsBlendedFreqScoringRewrite) does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dsl/dsl_parse_int.h"
#include "index/term_pat.h"

/* Regexp flags by name (Elasticsearch's RegexpFlag). */
static const struct {
    const char *name;
    unsigned bits;
} RE_FLAGS[] = {
    {"ALL", FDS_RE_ALL},           {"NONE", 0},
    {"INTERSECTION", FDS_RE_INTERSECTION},
    {"COMPLEMENT", FDS_RE_COMPLEMENT},
    {"EMPTY", FDS_RE_EMPTY},       {"ANYSTRING", FDS_RE_ANYSTRING},
    {"INTERVAL", FDS_RE_INTERVAL},
};

/* "ALL", "INTERSECTION|EMPTY", ... into *out.  0 or FDS_EPARSE. */
static int re_flags(fds__dsl_ctx *c, const char *s, unsigned *out)
{
    unsigned f = 0;
    if (!*s) {
        *out = FDS_RE_ALL;
        return 0;
    }
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "|");
        bool found = false;
        for (size_t i = 0; i < sizeof RE_FLAGS / sizeof *RE_FLAGS; i++)
            if (strlen(RE_FLAGS[i].name) == n &&
                !strncasecmp(p, RE_FLAGS[i].name, n)) {
                f |= RE_FLAGS[i].bits;
                found = true;
            }
        if (!found)
            return fds__dsl_err(c->err, "Unknown regexp flag [%.*s]", (int)n,
                                p);
        p += n + (p[n] == '|');
    }
    *out = f;
    return 0;
}

fds_query *fds__dsl_pattern_new(fds__dsl_ctx *c, const char *qname,
                                const fds_field_info *f, int kind,
                                const char *v, size_t n, bool ci,
                                unsigned flags, int max_states)
{
    if (!f || f->type == FDS_FT_OBJECT)
        return fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
    if (f->type != FDS_FT_TEXT && f->type != FDS_FT_KEYWORD) {
        fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                     "Can only use %s queries on keyword and text fields - "
                     "not on [%s] which is of type [%s]", qname, f->path,
                     f->type == FDS_FT_DATE ? "date"
                     : f->type == FDS_FT_BOOLEAN ? "boolean"
                     : f->type == FDS_FT_DOUBLE ? "double" : "long");
        return NULL;
    }
    if (fds__dsl_not_searchable(c, f))
        return NULL;
    if (kind == FDS_PAT_REGEXP && n > c->lim->max_regex_length) {
        fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                     "The length of regex [%zu] used in the Regexp Query "
                     "request has exceeded the allowed maximum of [%u]. This "
                     "maximum can be set by changing the "
                     "[index.max_regex_length] index level setting.", n,
                     c->lim->max_regex_length);
        return NULL;
    }
    char *low = NULL;
    size_t ln = n;
    if (kind == FDS_PAT_WILDCARD && f->type == FDS_FT_TEXT) {
        if (!(low = fds__dsl_lower(v, n, &ln)))
            return NULL;
        v = low;
    }
    fds_query *q = fds__dsl_qnew(FDS_Q_PATTERN, f->path);
    if (q) {
        q->ftype = f->type;
        q->pkind = kind;
        q->term = fds__dsl_dupn(v, ln);
        q->term_len = ln;
        if (!q->term ||
            fds__term_pat_new(kind, v, ln, ci, flags, max_states, &q->pat,
                              c->err)) {
            fds__query_free(q);
            q = NULL;
        }
    }
    free(low);
    return q;
}

/* "rewrite": the constant-score methods only. */
static int check_rewrite(fds__dsl_ctx *c, const char *qname, const cJSON *v)
{
    if (cJSON_IsString(v) && (!strcmp(v->valuestring, "constant_score") ||
                              !strcmp(v->valuestring, "constant_score_blended")))
        return 0;
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "[%s] rewrite [%s] is not supported: only "
                        "[constant_score] and [constant_score_blended]", qname,
                        cJSON_IsString(v) ? v->valuestring : "?");
}

fds_query *fds__dsl_pattern(fds__dsl_ctx *c, const char *name,
                            const cJSON *body)
{
    const cJSON *fld;
    if (fds__dsl_leaf_field(c, body, name, &fld))
        return NULL;
    int kind = name[0] == 'p' ? FDS_PAT_PREFIX
             : name[0] == 'w' ? FDS_PAT_WILDCARD : FDS_PAT_REGEXP;
    const cJSON *val = fld;
    float boost = 1.0f;
    bool ci = false;
    unsigned flags = FDS_RE_ALL;
    int max_states = FDS_REGEX_MAX_STATES;
    if (cJSON_IsObject(fld)) {
        val = NULL;
        const cJSON *it;
        cJSON_ArrayForEach(it, fld) {
            const char *k = it->string;
            int rc = 0;
            if (!strcmp(k, "value") ||
                (kind == FDS_PAT_WILDCARD && !strcmp(k, "wildcard")))
                val = it;
            else if (!strcmp(k, "boost") && cJSON_IsNumber(it))
                boost = (float)it->valuedouble;
            else if (!strcmp(k, "case_insensitive") && cJSON_IsBool(it))
                ci = cJSON_IsTrue(it);
            else if (!strcmp(k, "rewrite"))
                rc = check_rewrite(c, name, it);
            else if (kind == FDS_PAT_REGEXP && !strcmp(k, "flags") &&
                     cJSON_IsString(it))
                rc = re_flags(c, it->valuestring, &flags);
            else if (kind == FDS_PAT_REGEXP && !strcmp(k, "flags_value") &&
                     cJSON_IsNumber(it))
                flags = (unsigned)it->valuedouble;
            else if (kind == FDS_PAT_REGEXP &&
                     !strcmp(k, "max_determinized_states") &&
                     cJSON_IsNumber(it) && it->valuedouble >= 1 &&
                     it->valuedouble <= FDS_REGEX_MAX_STATES)
                max_states = (int)it->valuedouble;
            else if (kind == FDS_PAT_REGEXP &&
                     !strcmp(k, "max_determinized_states"))
                rc = fds_err_setk(c->err, FDS_EINVAL,
                                  FDS_KIND_INVALID_ARGUMENT,
                                  "[regexp] max_determinized_states must be "
                                  "a number from 1 to %d",
                                  FDS_REGEX_MAX_STATES);
            else
                rc = fds__dsl_err(c->err, "[%s] query does not support [%s]",
                                  name, k);
            if (rc)
                return NULL;
        }
        if (!val) {
            fds__dsl_err(c->err, "[%s] query requires a value", name);
            return NULL;
        }
    }
    char buf[64];
    const char *s;
    size_t n;
    if (!fds__dsl_scalar(c, val, buf, sizeof buf, &s, &n)) {
        fds__dsl_err(c->err, "[%s] query does not support [%s]", name,
                     fds__dsl_jtype(val));
        return NULL;
    }
    fds_field_info fb;
    const fds_field_info *f = fds__dsl_field(c, fld->string, &fb);
    fds_query *q = fds__dsl_pattern_new(c, name, f, kind, s, n, ci, flags,
                                        max_states);
    if (q)
        q->boost = boost;
    return q;
}

/* Bytes of a fuzzy term (Lucene builds an automaton per term; we run a
 * bounded dynamic program per dictionary term, so the term is bounded). */
#define FUZZY_TERM_MAX 1024
/* max_expansions at most: the clause count one query may have. */
#define FUZZY_MAX_EXPANSIONS FDS_MAX_CLAUSE_COUNT

/* "fuzziness": AUTO, AUTO:lo,hi, 0, 1, 2 (number or text) into q. */
static int fuzziness(fds__dsl_ctx *c, const cJSON *v, fds_query *q)
{
    char buf[64];
    const char *s;
    size_t n;
    if (!fds__dsl_scalar(c, v, buf, sizeof buf, &s, &n) || n >= sizeof buf)
        return fds__dsl_err(c->err, "[fuzziness] must be AUTO, 0, 1 or 2");
    char t[64];
    memcpy(t, s, n);
    t[n] = 0;
    int lo = 3, hi = 6;
    if (!strncasecmp(t, "AUTO", 4) &&
        (!t[4] || (sscanf(t + 4, ":%d,%d", &lo, &hi) == 2 && lo >= 0 && hi >= lo))) {
        q->fz_edits = -1;
        q->fz_lo = lo;
        q->fz_hi = hi;
        return 0;
    }
    if (n == 1 && t[0] >= '0' && t[0] <= '2') {
        q->fz_edits = t[0] - '0';
        return 0;
    }
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "[fuzziness] [%s] is not supported: AUTO, AUTO:low,high, "
                        "0, 1 or 2 edits", t);
}

/* One fuzzy option `k` = v into q: fuzziness, prefix_length,
 * max_expansions, transpositions (fuzzy_* in match), rewrite.  1 when k is
 * not one of them, 0 when applied, an FDS_E* code when refused. */
int fds__dsl_fuzzy_opt(fds__dsl_ctx *c, const char *k, const cJSON *v,
                       fds_query *q)
{
    if (!strncmp(k, "fuzzy_", 6) && strcmp(k, "fuzzy_rewrite"))
        k += 6;
    if (!strcmp(k, "fuzziness"))
        return fuzziness(c, v, q);
    if (!strcmp(k, "transpositions")) {
        if (!cJSON_IsBool(v))
            return fds__dsl_err(c->err, "[transpositions] must be a boolean");
        q->fz_transp = cJSON_IsTrue(v);
        return 0;
    }
    if (!strcmp(k, "prefix_length") || !strcmp(k, "max_expansions")) {
        bool pl = k[0] == 'p';
        if (!cJSON_IsNumber(v) || v->valuedouble < (pl ? 0 : 1) ||
            v->valuedouble > (pl ? FUZZY_TERM_MAX : FUZZY_MAX_EXPANSIONS))
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[%s] must be a number from %d to %d", k,
                                pl ? 0 : 1,
                                pl ? FUZZY_TERM_MAX : FUZZY_MAX_EXPANSIONS);
        *(pl ? &q->fz_prefix : &q->fz_max_exp) = (int)v->valuedouble;
        return 0;
    }
    if (!strcmp(k, "rewrite") || !strcmp(k, "fuzzy_rewrite")) {
        if (cJSON_IsString(v) && !strncmp(v->valuestring, "top_terms_blended_freqs_", 24))
            return 0;
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[%s] [%s] is not supported: only "
                            "top_terms_blended_freqs_N (the default)", k,
                            cJSON_IsString(v) ? v->valuestring : "?");
    }
    return 1;
}

void fds__dsl_fuzzy_defaults(fds_query *q)
{
    q->fz_edits = -1;
    q->fz_lo = 3;
    q->fz_hi = 6;
    q->fz_prefix = 0;
    q->fz_max_exp = 50;
    q->fz_transp = true;
}

int fds__dsl_make_fuzzy(fds__dsl_ctx *c, fds_query *q, const fds_query *opts)
{
    if (q->type == FDS_Q_TERM) {
        if (q->term_len > FUZZY_TERM_MAX)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "a fuzzy term is at most %d bytes",
                                FUZZY_TERM_MAX);
        float boost = q->boost;
        q->type = FDS_Q_FUZZY;
        q->fz_edits = opts->fz_edits;
        q->fz_lo = opts->fz_lo;
        q->fz_hi = opts->fz_hi;
        q->fz_prefix = opts->fz_prefix;
        q->fz_max_exp = opts->fz_max_exp;
        q->fz_transp = opts->fz_transp;
        q->boost = boost;
        return 0;
    }
    fds_query **lists[2] = {q->must, q->should};
    size_t counts[2] = {q->nmust, q->nshould};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < counts[l]; i++) {
            int rc = fds__dsl_make_fuzzy(c, lists[l][i], opts);
            if (rc)
                return rc;
        }
    return 0;
}

fds_query *fds__dsl_fuzzy(fds__dsl_ctx *c, const cJSON *body)
{
    const cJSON *fld;
    if (fds__dsl_leaf_field(c, body, "fuzzy", &fld))
        return NULL;
    fds_query opts;
    memset(&opts, 0, sizeof opts);
    fds__dsl_fuzzy_defaults(&opts);
    const cJSON *val = fld;
    float boost = 1.0f;
    if (cJSON_IsObject(fld)) {
        val = NULL;
        const cJSON *it;
        cJSON_ArrayForEach(it, fld) {
            const char *k = it->string;
            int rc = 0;
            if (!strcmp(k, "value"))
                val = it;
            else if (!strcmp(k, "boost") && cJSON_IsNumber(it))
                boost = (float)it->valuedouble;
            else if ((rc = fds__dsl_fuzzy_opt(c, k, it, &opts)) == 1)
                rc = fds__dsl_err(c->err, "[fuzzy] query does not support [%s]", k);
            if (rc)
                return NULL;
        }
        if (!val) {
            fds__dsl_err(c->err, "[fuzzy] query requires a value");
            return NULL;
        }
    }
    char buf[64];
    const char *s;
    size_t n;
    if (!fds__dsl_scalar(c, val, buf, sizeof buf, &s, &n)) {
        fds__dsl_err(c->err, "[fuzzy] query does not support [%s]",
                     fds__dsl_jtype(val));
        return NULL;
    }
    fds_field_info fb;
    const fds_field_info *f = fds__dsl_field(c, fld->string, &fb);
    if (!f || f->type == FDS_FT_OBJECT)
        return fds__dsl_qnew(FDS_Q_MATCH_NONE, NULL);
    if (fds__dsl_fuzzy_field(c, f) || fds__dsl_not_searchable(c, f))
        return NULL;
    fds_query *q = fds__dsl_qnew(FDS_Q_TERM, f->path);
    if (q && !(q->term = fds__dsl_dupn(s, n))) {
        fds__query_free(q);
        return NULL;
    }
    if (q) {
        q->term_len = n;
        q->ftype = f->type;
        q->boost = boost;
        if (fds__dsl_make_fuzzy(c, q, &opts)) {
            fds__query_free(q);
            return NULL;
        }
    }
    return q;
}

int fds__dsl_fuzzy_field(fds__dsl_ctx *c, const fds_field_info *f)
{
    if (f->type == FDS_FT_TEXT || f->type == FDS_FT_KEYWORD)
        return 0;
    return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                        "Can only use fuzzy queries on keyword and text fields "
                        "- not on [%s] which is of type [%s]", f->path,
                        f->type == FDS_FT_DATE ? "date"
                        : f->type == FDS_FT_BOOLEAN ? "boolean"
                        : f->type == FDS_FT_DOUBLE ? "double" : "long");
}
