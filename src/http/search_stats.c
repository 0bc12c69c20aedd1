/*
 * search_stats.c: the search phase timers of an index and the `profile`
 * section of a search answer.
 *
 * A codec A/B changes one thing a search does: the fetch phase, which loads
 * and decodes stored fields and builds the hits.  So the server reports the
 * two phases apart, with Elasticsearch's names:
 *
 *   query phase  fds_search_execute() on a parsed request (postings, scoring,
 *                top-k, counting); request parsing is not part of it;
 *   fetch phase  fds_search_render() of a page with hits: every
 *                fds_index_view_fetch() (block decode) plus the JSON of the
 *                hits.  A page without hits has no fetch phase, as in
 *                Elasticsearch, and `_count` has none either.
 *
 * The counters (fds_search_stats, store.h) live with the index and are
 * updated with relaxed atomics: no lock on the search path.  Times are kept
 * in nanoseconds and reported as Elasticsearch's `*_time_in_millis` plus the
 * `*_time_in_micros` extensions (both truncated from the same sum, so
 * micros / 1000 == millis).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search_stats.h"
#include "index/term_pat.h" /* FDS_PAT_*: the kinds of a multi-term query */

#define RELAXED memory_order_relaxed

uint64_t fds__phase_begin(fds_search_stats *s, fds__phase ph)
{
    atomic_fetch_add_explicit(ph == FDS__PHASE_QUERY ? &s->query_current
                                                     : &s->fetch_current,
                              1, RELAXED);
    return fds_mono_ns();
}

uint64_t fds__phase_end(fds_search_stats *s, fds__phase ph, uint64_t t0, bool ok)
{
    uint64_t ns = fds_mono_ns() - t0;
    bool q = ph == FDS__PHASE_QUERY;
    atomic_fetch_sub_explicit(q ? &s->query_current : &s->fetch_current, 1,
                              RELAXED);
    if (ok) {
        atomic_fetch_add_explicit(q ? &s->query_total : &s->fetch_total, 1,
                                  RELAXED);
        atomic_fetch_add_explicit(q ? &s->query_time_ns : &s->fetch_time_ns, ns,
                                  RELAXED);
    }
    return ns;
}

void fds__search_sum_add(fds__search_sum *acc, fds_search_stats *s)
{
    acc->query_total += atomic_load_explicit(&s->query_total, RELAXED);
    acc->query_time_ns += atomic_load_explicit(&s->query_time_ns, RELAXED);
    acc->query_current += atomic_load_explicit(&s->query_current, RELAXED);
    acc->fetch_total += atomic_load_explicit(&s->fetch_total, RELAXED);
    acc->fetch_time_ns += atomic_load_explicit(&s->fetch_time_ns, RELAXED);
    acc->fetch_current += atomic_load_explicit(&s->fetch_current, RELAXED);
    acc->open_contexts += atomic_load_explicit(&s->open_contexts, RELAXED);
    acc->scroll_current += atomic_load_explicit(&s->scroll_current, RELAXED);
    acc->scroll_total += atomic_load_explicit(&s->scroll_total, RELAXED);
    acc->scroll_time_ns += atomic_load_explicit(&s->scroll_time_ns, RELAXED);
}

cJSON *fds__search_sum_json(const fds__search_sum *s)
{
    cJSON *o = cJSON_CreateObject();
    const struct {
        const char *key;
        uint64_t v;
    } f[] = {
        {"open_contexts", s->open_contexts},
        {"query_total", s->query_total},
        {"query_time_in_millis", s->query_time_ns / 1000000},
        {"query_time_in_micros", s->query_time_ns / 1000},
        {"query_current", s->query_current},
        {"fetch_total", s->fetch_total},
        {"fetch_time_in_millis", s->fetch_time_ns / 1000000},
        {"fetch_time_in_micros", s->fetch_time_ns / 1000},
        {"fetch_current", s->fetch_current},
        {"scroll_total", s->scroll_total},
        {"scroll_time_in_millis", s->scroll_time_ns / 1000000},
        {"scroll_current", s->scroll_current},
        /* no suggesters here: Elasticsearch's keys, zero */
        {"suggest_total", 0},
        {"suggest_time_in_millis", 0},
        {"suggest_current", 0},
    };
    for (size_t i = 0; o && i < sizeof f / sizeof *f; i++)
        cJSON_AddNumberToObject(o, f[i].key, (double)f[i].v);
    return o;
}

/* ---- profile ------------------------------------------------------------- */

bool fds__body_wants_profile(const char *body, size_t len)
{
    /* The DSL parser skips "profile"; a second parse only for bodies that
     * name it keeps the common search at one parse. */
    if (!len || !memmem(body, len, "\"profile\"", 9))
        return false;
    cJSON *root = cJSON_ParseWithLength(body, len);
    bool on = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "profile"));
    cJSON_Delete(root);
    return on;
}

typedef struct desc_buf {
    char p[FDS__PROFILE_DESC_MAX];
    size_t len;
} desc_buf;

static void dput(desc_buf *d, const char *s, size_t n)
{
    size_t room = sizeof d->p - 1 - d->len;
    if (n > room)
        n = room;
    memcpy(d->p + d->len, s, n);
    d->len += n;
    d->p[d->len] = 0;
}

static void dstr(desc_buf *d, const char *s) { dput(d, s, strlen(s)); }

static void dfield(desc_buf *d, const fds_query *q)
{
    dput(d, q->field, q->field_len);
    dstr(d, ":");
}

/* A range bound as Java prints it: the shortest digits that read back to
 * the same value (as a float when the value is one: float fields keep
 * float bounds), "Infinity" for an open end. */
static void dnum(desc_buf *d, const fds_query *q, bool hi)
{
    char b[40];
    if (q->ftype != FDS_FT_DOUBLE) {
        snprintf(b, sizeof b, "%lld", (long long)(hi ? q->hi_l : q->lo_l));
    } else {
        double v = hi ? q->hi_d : q->lo_d;
        bool is_float = (double)(float)v == v;
        if (isinf(v))
            snprintf(b, sizeof b, "%sInfinity", v < 0 ? "-" : "");
        else
            for (int p = 1; p <= 17; p++) {
                snprintf(b, sizeof b, "%.*g", p, v);
                double r = strtod(b, NULL);
                if (is_float ? (float)r == (float)v : r == v)
                    break;
            }
    }
    dstr(d, b);
}

static const char *describe(const fds_query *q, desc_buf *d);

/* A range query as Lucene prints it: TermRangeQuery on keywords
 * (f:[a TO b}), IndexOrDocValuesQuery on numbers; its type. */
static const char *describe_range(const fds_query *q, desc_buf *d)
{
    const char *type;
    dfield(d, q);
    if (q->ftype == FDS_FT_KEYWORD) {
        type = "TermRangeQuery";
        dstr(d, q->lo_s && q->lo_s_incl ? "[" : "{");
        if (q->lo_s)
            dput(d, q->lo_s, q->lo_s_len);
        else
            dstr(d, "*");
        dstr(d, " TO ");
        if (q->hi_s)
            dput(d, q->hi_s, q->hi_s_len);
        else
            dstr(d, "*");
        dstr(d, q->hi_s && q->hi_s_incl ? "]" : "}");
    } else {
        type = "IndexOrDocValuesQuery";
        bool dbl = q->ftype == FDS_FT_DOUBLE;
        dstr(d, !dbl || q->lo_d_incl ? "[" : "{");
        dnum(d, q, false);
        dstr(d, " TO ");
        dnum(d, q, true);
        dstr(d, !dbl || q->hi_d_incl ? "]" : "}");
    }
    return type;
}

/* BooleanQuery.toString: its clauses marked +, (none), #, -, a nested
 * bool in parentheses. */
static void describe_bool(const fds_query *q, desc_buf *d)
{
    struct {
        const char *mark;
        fds_query **qs;
        size_t n;
    } cl[] = {{"+", q->must, q->nmust}, {"", q->should, q->nshould},
              {"#", q->filter, q->nfilter}, {"-", q->must_not, q->nmust_not}};
    bool first = true;
    for (size_t c = 0; c < 4; c++)
        for (size_t i = 0; i < cl[c].n; i++) {
            if (!first)
                dstr(d, " ");
            first = false;
            dstr(d, cl[c].mark);
            bool paren = cl[c].qs[i]->type == FDS_Q_BOOL;
            if (paren)
                dstr(d, "(");
            desc_buf sub = {.len = 0};
            sub.p[0] = 0;
            describe(cl[c].qs[i], &sub);
            dput(d, sub.p, sub.len);
            if (paren)
                dstr(d, ")");
        }
}

/* A query around others (constant_score, dis_max, boosting) as Lucene
 * prints it; its type. */
static const char *describe_wrapper(const fds_query *q, desc_buf *d)
{
    const char *type = q->type == FDS_Q_CONST ? "ConstantScoreQuery"
         : q->type == FDS_Q_DISMAX ? "DisjunctionMaxQuery" : "FunctionScoreQuery";
    dstr(d, q->type == FDS_Q_CONST ? "ConstantScore(" : "(");
    fds_query *const *k = q->type == FDS_Q_CONST ? q->filter
                        : q->type == FDS_Q_DISMAX ? q->should : q->must;
    size_t n = q->type == FDS_Q_CONST ? q->nfilter
             : q->type == FDS_Q_DISMAX ? q->nshould : q->nmust;
    for (size_t i = 0; i < n; i++) {
        if (i)
            dstr(d, " | ");
        desc_buf sub = {.len = 0};
        sub.p[0] = 0;
        describe(k[i], &sub);
        dput(d, sub.p, sub.len);
    }
    dstr(d, ")");
    return type;
}

/* Lucene's class name and Query.toString() of `q`, as Elasticsearch's
 * profile prints them ("TermQuery", "method:get"; "BooleanQuery",
 * "+a:x -b:y"). */
static const char *describe(const fds_query *q, desc_buf *d)
{
    const char *type = "Query";
    switch (q->type) {
    case FDS_Q_MATCH_ALL:
        type = "MatchAllDocsQuery";
        dstr(d, "*:*");
        break;
    case FDS_Q_MATCH_NONE:
        type = "MatchNoDocsQuery";
        dstr(d, "MatchNoDocsQuery(\"\")");
        break;
    case FDS_Q_TERM:
        type = "TermQuery";
        dfield(d, q);
        dput(d, q->term, q->term_len);
        break;
    case FDS_Q_TERMS:
    case FDS_Q_IDS:
        type = "TermInSetQuery";
        if (q->type == FDS_Q_IDS)
            dstr(d, "_id:");
        else
            dfield(d, q);
        dstr(d, "(");
        for (size_t i = 0; i < q->nvals; i++) {
            if (i)
                dstr(d, " ");
            dput(d, q->vals[i], q->val_lens[i]);
        }
        dstr(d, ")");
        break;
    case FDS_Q_RANGE:
        type = describe_range(q, d);
        break;
    case FDS_Q_EXISTS:
        type = "FieldExistsQuery";
        dstr(d, "FieldExistsQuery [field=");
        dput(d, q->field, q->field_len);
        dstr(d, "]");
        break;
    case FDS_Q_BOOL:
        type = "BooleanQuery";
        describe_bool(q, d);
        break;
    case FDS_Q_PATTERN:
        type = q->pkind == FDS_PAT_PREFIX     ? "PrefixQuery"
             : q->pkind == FDS_PAT_WILDCARD ? "WildcardQuery"
                                            : "RegexpQuery";
        dfield(d, q);
        if (q->pkind == FDS_PAT_REGEXP)
            dstr(d, "/");
        dput(d, q->term, q->term_len);
        dstr(d, q->pkind == FDS_PAT_PREFIX ? "*"
                : q->pkind == FDS_PAT_REGEXP ? "/" : "");
        break;
    case FDS_Q_FUZZY: {
        type = "FuzzyQuery";
        dfield(d, q);
        dput(d, q->term, q->term_len);
        char e[16];
        snprintf(e, sizeof e, "~%d", q->fz_edits < 0 ? 2 : q->fz_edits);
        dstr(d, q->fz_edits < 0 ? "~AUTO" : e);
        break;
    }
    case FDS_Q_PHRASE: { /* PhraseQuery.toString: f:"a b"~2 */
        type = q->phrase_prefix ? "MultiPhrasePrefixQuery" : "PhraseQuery";
        dfield(d, q);
        dstr(d, "\"");
        for (size_t i = 0; i < q->nvals; i++) {
            if (i)
                dstr(d, " ");
            dput(d, q->vals[i], q->val_lens[i]);
        }
        dstr(d, q->phrase_prefix ? "*\"" : "\"");
        char e[16];
        snprintf(e, sizeof e, "~%d", q->slop);
        if (q->slop)
            dstr(d, e);
        break;
    }
    case FDS_Q_CONST:
    case FDS_Q_DISMAX:
    case FDS_Q_BOOSTING:
        type = describe_wrapper(q, d);
        break;
    default:
        break;
    }
    if (q->boost != 1.0f) {
        char b[32];
        snprintf(b, sizeof b, "^%g", (double)q->boost);
        dstr(d, b);
    }
    return type;
}

char *fds__profile_json(const fds__profile *p)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *shards = cJSON_AddArrayToObject(root, "shards");
    cJSON *sh = cJSON_CreateObject();
    cJSON_AddItemToArray(shards, sh);
    char id[FDS__PROFILE_DESC_MAX];
    snprintf(id, sizeof id, "[%s][%s][0]", p->node_id, p->index);
    cJSON_AddStringToObject(sh, "id", id);
    cJSON_AddStringToObject(sh, "node_id", p->node_id);
    cJSON_AddNumberToObject(sh, "shard_id", 0);
    cJSON_AddStringToObject(sh, "index", p->index);
    cJSON_AddStringToObject(sh, "cluster", "(local)");
    cJSON *searches = cJSON_AddArrayToObject(sh, "searches");
    cJSON *s = cJSON_CreateObject();
    cJSON_AddItemToArray(searches, s);
    cJSON *qa = cJSON_AddArrayToObject(s, "query");
    cJSON *q = cJSON_CreateObject();
    cJSON_AddItemToArray(qa, q);
    desc_buf *d = calloc(1, sizeof *d);
    fds_query all = {.type = FDS_Q_MATCH_ALL, .boost = 1.0f};
    const char *type = d ? describe(p->query ? p->query : &all, d) : "Query";
    cJSON_AddStringToObject(q, "type", type);
    cJSON_AddStringToObject(q, "description", d ? d->p : "");
    free(d);
    /* the whole query phase: scoring and collection run interleaved */
    cJSON_AddNumberToObject(q, "time_in_nanos", (double)p->query_ns);
    cJSON_AddNumberToObject(s, "rewrite_time", 0); /* rewritten while parsing */
    cJSON *ca = cJSON_AddArrayToObject(s, "collector");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddItemToArray(ca, c);
    cJSON_AddStringToObject(c, "name", "QueryPhaseCollector");
    cJSON_AddStringToObject(c, "reason", "search_query_phase");
    cJSON_AddNumberToObject(c, "time_in_nanos", (double)p->query_ns);
    cJSON_AddArrayToObject(sh, "aggregations");
    if (p->has_fetch) {
        cJSON *f = cJSON_AddObjectToObject(sh, "fetch");
        cJSON_AddStringToObject(f, "type", "fetch");
        cJSON_AddStringToObject(f, "description", "");
        cJSON_AddNumberToObject(f, "time_in_nanos", (double)p->fetch_ns);
        cJSON *b = cJSON_AddObjectToObject(f, "breakdown");
        cJSON_AddNumberToObject(b, "load_stored_fields", (double)p->load_ns);
        cJSON_AddNumberToObject(b, "load_stored_fields_count", (double)p->load_docs);
        cJSON *dbg = cJSON_AddObjectToObject(f, "debug");
        cJSON *sf = cJSON_AddArrayToObject(dbg, "stored_fields");
        cJSON_AddItemToArray(sf, cJSON_CreateString("_id"));
        cJSON_AddItemToArray(sf, cJSON_CreateString("_source"));
    }
    char *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}
