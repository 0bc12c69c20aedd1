/*
 * dsl_parse_mm.c: the multi_match query, as Elasticsearch 8's
 * MultiMatchQueryBuilder builds it.
 *
 * The query is built, as Elasticsearch's MultiMatchQueryParser does, as
 * the compound query it stands for -- each per-field query written as its
 * DSL and parsed by the match / match_phrase parsers, counted against the
 * nesting and clause bounds as the dispatcher counts them -- so that its
 * scores are by construction those of the same query built by hand:
 *
 *   best_fields (default)  {"dis_max": {"queries": [match per field],
 *                                       "tie_breaker": t, "boost": b}}
 *   most_fields            {"bool": {"should": [match per field],
 *                                    "boost": b}}
 *
 *   phrase, phrase_prefix  {"dis_max": {"queries": [match_phrase(_prefix)
 *                                       per field], ...}}
 *
 * each per-field match carrying the query's operator,
 * minimum_should_match, fuzziness options and the field's `^boost`; each
 * match_phrase(_prefix) its slop, max_expansions (phrase_prefix) and
 * zero_terms_query (MultiMatchQueryParser builds them with the same
 * options; fuzziness is refused there, as Elasticsearch's "Fuzziness not
 * allowed for type [phrase]", and operator and minimum_should_match do not
 * apply to a phrase).
 * `fields` entries may be patterns (`*`, `user*^2`): a pattern resolves to
 * every mapped leaf field it matches, sorted by path (Elasticsearch's
 * QueryParserHelper.resolveMappingFields; a field matched twice multiplies
 * its boosts).  No `fields` means index.query.default_field, `*`, and `*`
 * makes the query lenient as Elasticsearch does: a field that cannot take
 * the text (a number field and "abc") matches nothing instead of failing.
 *
 * Refused with 400: cross_fields and bool_prefix (not implemented), an
 * analyzer other than standard, unknown keys.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mapping/analysis.h"
#include "dsl/dsl_parse_int.h"
#include "fds_text.h"

/* At most this many fields after patterns are resolved (Elasticsearch's
 * indices.query.bool.max_clause_count bounds the same thing). */
#define MM_MAX_FIELDS 1024

/* mm_add of a pattern's field with the entry's boost. */
typedef struct mm_pat {
    struct mm_fields *fs;
    float boost;
} mm_pat;

typedef struct mm_field {
    char *path;
    float boost;
} mm_field;

typedef struct mm_fields {
    mm_field *v;
    size_t n;
    bool all; /* a `*` was among them: lenient */
} mm_fields;

static void mm_fields_free(mm_fields *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        free(fs->v[i].path);
    free(fs->v);
}

/* Add path (boost multiplies an existing entry).  0 or FDS_ENOMEM /
 * FDS_ETOOBIG. */
static int mm_add(mm_fields *fs, const char *path, size_t n, float boost)
{
    for (size_t i = 0; i < fs->n; i++)
        if (strlen(fs->v[i].path) == n && !memcmp(fs->v[i].path, path, n)) {
            fs->v[i].boost *= boost;
            return 0;
        }
    if (fs->n >= MM_MAX_FIELDS)
        return FDS_ETOOBIG;
    mm_field *nv = realloc(fs->v, (fs->n + 1) * sizeof *nv);
    if (!nv)
        return FDS_ENOMEM;
    fs->v = nv;
    if (!(nv[fs->n].path = fds__dsl_dupn(path, n)))
        return FDS_ENOMEM;
    nv[fs->n++].boost = boost;
    return 0;
}

static int mm_pat_add(void *arg, const char *path)
{
    mm_pat *mp = arg;
    return mm_add(mp->fs, path, strlen(path), mp->boost);
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const mm_field *)a)->path, ((const mm_field *)b)->path);
}

/* One `fields` entry ("name", "name^2", "pat*^0.5") into fs. */
static int mm_entry(fds__dsl_ctx *c, const char *e, mm_fields *fs)
{
    const char *caret = strrchr(e, '^');
    size_t n = caret ? (size_t)(caret - e) : strlen(e);
    float boost = 1.0f;
    if (caret) {
        char *end;
        double b = strtod(caret + 1, &end);
        if (end == caret + 1 || *end || !isfinite(b) || b < 0)
            return fds__dsl_err(c->err, "[multi_match] invalid boost in "
                                        "field [%s]", e);
        boost = (float)b;
    }
    char *pat = fds__dsl_dupn(e, n);
    if (!pat)
        return FDS_ENOMEM;
    int rc = 0;
    if (!strchr(pat, '*')) {
        rc = mm_add(fs, pat, n, boost);
    } else {
        fs->all |= !strcmp(pat, "*");
        size_t first = fs->n;
        mm_pat mp = {fs, boost};
        rc = fds__dsl_fields_matching(c, pat, mm_pat_add, &mp);
        if (!rc)
            qsort(fs->v + first, fs->n - first, sizeof *fs->v, by_path);
    }
    free(pat);
    if (rc == FDS_ETOOBIG)
        fds_err_setk(c->err, rc, FDS_KIND_TOO_MANY_CLAUSES,
                     "field expansion matches too many fields, limit: %d",
                     MM_MAX_FIELDS);
    return rc;
}

/* The options every per-field match takes over from the multi_match. */
static bool match_opt(const char *k)
{
    static const char *const o[] = {
        "operator", "minimum_should_match", "fuzziness", "prefix_length",
        "max_expansions", "fuzzy_transpositions", "fuzzy_rewrite",
        "auto_generate_synonyms_phrase_query", NULL};
    for (size_t i = 0; o[i]; i++)
        if (!strcmp(k, o[i]))
            return true;
    return false;
}

/* The options of a per-field match_phrase (`prefix`: _prefix) taken from
 * the multi_match body: slop, zero_terms_query, max_expansions.  NULL on
 * ENOMEM. */
static cJSON *phrase_opts(const cJSON *body, bool prefix)
{
    static const char *const keys[] = {"slop", "zero_terms_query",
                                       "max_expansions"};
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < (prefix ? 3u : 2u); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, keys[i]);
        cJSON *d = v ? cJSON_Duplicate(v, true) : NULL;
        if (v && (!d || !cJSON_AddItemToObject(o, keys[i], d))) {
            cJSON_Delete(d);
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

/* fds_analyze callback: counts the tokens into *(size_t *)arg. */
static int count_tok(void *arg, const char *t, size_t n)
{
    (void)t;
    (void)n;
    ++*(size_t *)arg;
    return 0;
}

/* The members of a multi_match body, as read by mm_read. */
typedef struct mm_args {
    const cJSON *query, *fields, *type, *tb, *zt;
    bool lenient;
    float boost;
    cJSON *opts;       /* the per-field match options (owned) */
    const char *t;     /* the type, "best_fields" by default */
    bool phrase;       /* type phrase or phrase_prefix */
    bool zt_all;       /* zero_terms_query all */
} mm_args;

/* The body's members into a (a->opts created).  0 or an FDS_E* code
 * (err filled, but for FDS_ENOMEM). */
static int mm_read(fds__dsl_ctx *c, const cJSON *body, mm_args *a)
{
    a->boost = 1.0f;
    a->t = "best_fields";
    if (!(a->opts = cJSON_CreateObject()))
        return FDS_ENOMEM;
    int rc = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, body) {
        const char *k = it->string;
        if (!strcmp(k, "query")) {
            a->query = it;
        } else if (!strcmp(k, "fields")) {
            a->fields = it;
        } else if (!strcmp(k, "type")) {
            a->type = it;
        } else if (!strcmp(k, "tie_breaker")) {
            a->tb = it;
        } else if (!strcmp(k, "zero_terms_query")) {
            a->zt = it;
        } else if (!strcmp(k, "boost") && cJSON_IsNumber(it)) {
            a->boost = (float)it->valuedouble;
        } else if (!strcmp(k, "lenient") && cJSON_IsBool(it)) {
            a->lenient = cJSON_IsTrue(it);
        } else if (!strcmp(k, "analyzer")) {
            if (!cJSON_IsString(it) || strcmp(it->valuestring, "standard"))
                rc = fds_err_setk(c->err, FDS_EINVAL,
                                  FDS_KIND_INVALID_ARGUMENT,
                                  "[multi_match] analyzer [%s] is not "
                                  "supported: only [standard]",
                                  cJSON_IsString(it) ? it->valuestring : "?");
        } else if (match_opt(k)) {
            cJSON *d = cJSON_Duplicate(it, true);
            if (!d || !cJSON_AddItemToObject(a->opts, k, d))
                rc = FDS_ENOMEM;
        } else if (strcmp(k, "slop")) {
            /* slop goes to the phrase types (phrase_opts), checked with
             * the type below; cutoff_frequency, removed in 8.0, falls
             * here */
            rc = fds__dsl_err(c->err, "[multi_match] query does not support "
                                      "[%s]", k);
        }
        if (rc)
            break;
    }
    return rc;
}

/* The type, slop, query, tie_breaker and zero_terms_query of a checked
 * (a->t, a->phrase, a->zt_all set).  0 or an FDS_E* code, err filled. */
static int mm_check(fds__dsl_ctx *c, const cJSON *body, mm_args *a)
{
    int rc = 0;
    if (a->type) {
        const char *t = a->t = cJSON_IsString(a->type) ? a->type->valuestring
                                                        : "";
        a->phrase = !strcmp(t, "phrase") || !strcmp(t, "phrase_prefix");
        if (a->phrase && cJSON_GetObjectItemCaseSensitive(a->opts, "fuzziness"))
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "Fuzziness not allowed for type [%s]", t);
        else if (a->phrase)
            ;
        else if (!strcmp(t, "cross_fields") || !strcmp(t, "bool_prefix"))
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "[multi_match] type [%s] is not supported", t);
        else if (strcmp(t, "best_fields") && strcmp(t, "most_fields"))
            rc = fds__dsl_err(c->err, "[multi_match] query does not support "
                                      "type %s", t);
    }
    /* best_fields and most_fields take slop in Elasticsearch for the
     * phrases an analyzer with synonyms makes; the standard analyzer makes
     * none, so a slop other than the default 0 would change nothing */
    const cJSON *sl = cJSON_GetObjectItemCaseSensitive(body, "slop");
    if (!rc && !a->phrase && sl && !(cJSON_IsNumber(sl) && sl->valuedouble == 0))
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "[multi_match] [slop] changes nothing for type [%s]: "
                          "the standard analyzer makes no phrases to loosen "
                          "(use type phrase or phrase_prefix)", a->t);
    const cJSON *query = a->query, *tb = a->tb, *zt = a->zt;
    if (!rc && !query)
        rc = fds__dsl_err(c->err, "No text specified for multi_match query");
    if (!rc && !cJSON_IsString(query) && !cJSON_IsNumber(query) &&
        !cJSON_IsBool(query))
        rc = fds__dsl_err(c->err, "[multi_match] unknown token [%s] after "
                                  "[query]", fds__dsl_jtype(query));
    if (!rc && tb && (!cJSON_IsNumber(tb) || tb->valuedouble < 0 ||
                      tb->valuedouble > 1))
        rc = fds__dsl_err(c->err, "[multi_match] tie_breaker must be a number "
                                  "in [0, 1]");
    if (!rc && zt) {
        if (cJSON_IsString(zt) && (!strcasecmp(zt->valuestring, "all") ||
                                   !strcasecmp(zt->valuestring, "none")))
            a->zt_all = !strcasecmp(zt->valuestring, "all");
        else
            rc = fds__dsl_err(c->err, "Unsupported zero_terms_query value "
                                      "[%s]", cJSON_IsString(zt)
                                      ? zt->valuestring : "?");
    }
    return rc;
}

/* The `fields` of the body (none: `*`) resolved into fs.  0 or an FDS_E*
 * code. */
static int mm_fields_of(fds__dsl_ctx *c, const cJSON *fields, mm_fields *fs)
{
    if (!fields)
        return mm_entry(c, "*", fs);
    if (cJSON_IsString(fields))
        return mm_entry(c, fields->valuestring, fs);
    if (!cJSON_IsArray(fields))
        return fds__dsl_err(c->err, "[multi_match] unknown token [%s] "
                                    "after [fields]", fds__dsl_jtype(fields));
    const cJSON *it;
    cJSON_ArrayForEach(it, fields) {
        if (!cJSON_IsString(it))
            return fds__dsl_err(c->err, "[multi_match] fields must be "
                                        "strings");
        int rc = mm_entry(c, it->valuestring, fs);
        if (rc)
            return rc;
    }
    return 0;
}

/* The per-field query of field i ({"<leaf>": {"<path>": {options, query,
 * boost}}}, as Elasticsearch's MultiMatchQueryParser builds it) into *m.
 * 0 or FDS_ENOMEM. */
static int mm_field_json(const cJSON *body, const mm_args *a,
                         const mm_field *f, const char *leaf, cJSON **m)
{
    *m = cJSON_CreateObject();
    cJSON *mb = *m ? cJSON_AddObjectToObject(*m, leaf) : NULL;
    cJSON *fb = mb ? (a->phrase ? phrase_opts(body, a->t[6] != 0)
                                : cJSON_Duplicate(a->opts, true))
                   : NULL;
    if (!fb || !cJSON_AddItemToObject(mb, f->path, fb)) {
        cJSON_Delete(fb);
        cJSON_Delete(*m);
        *m = NULL;
        return FDS_ENOMEM;
    }
    cJSON_AddItemToObject(fb, "query", cJSON_Duplicate(a->query, true));
    cJSON_AddNumberToObject(fb, "boost", f->boost);
    return 0;
}

/* The per-field query m parsed one level below c->depth, counted as the
 * dispatcher (dsl_parse_query.c) counts a leaf.  NULL on error. */
static fds_query *mm_field_query(fds__dsl_ctx *c, const cJSON *m,
                                 bool phrase)
{
    const cJSON *b = m->child;
    /* the dispatcher takes a member named `_name` for the query's name, so
     * a field of that name is refused as its written DSL would be */
    if (!strcmp(b->child->string, "_name")) {
        fds__dsl_err(c->err, "[%s] query does not support [_name] of type "
                             "[%s]: a name is a string", b->string,
                     fds__dsl_jtype(b->child));
        return NULL;
    }
    if (fds__dsl_depth_enter(c))
        return NULL;
    fds_query *q = phrase ? fds__dsl_match_phrase(c, b, b->string[12] != 0)
                          : fds__dsl_match(c, b);
    c->depth--;
    if (q)
        return fds__dsl_count(c, q, fds__dsl_leaves(q));
    if (c->err && !c->err->code)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return NULL;
}

/* Whether the per-field query m fails to parse (a number field and text
 * it cannot take), tried on a copy of the context c0 as it was before the
 * first field: lenient drops it. */
static bool mm_fails(const fds__dsl_ctx *c0, const cJSON *m, bool phrase)
{
    fds_err scratch = {0};
    fds__dsl_ctx c2 = *c0;
    c2.err = &scratch;
    fds_query *q = mm_field_query(&c2, m, phrase);
    fds__query_free(q);
    return q == NULL;
}

/* A match_none or match_all (`type`) in place of the rewrite, counted as
 * the one leaf clause it is.  NULL on error. */
static fds_query *mm_whole(fds__dsl_ctx *c, int type)
{
    fds_query *q = fds__dsl_qnew(type, NULL);
    if (!q) {
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        return NULL;
    }
    return fds__dsl_count(c, q, 1);
}

/* The dis_max (best_fields, phrase types) or bool should (most_fields) of
 * one per-field query for each field of fs, built as the dispatcher would
 * build it from the rewritten DSL: a field a lenient query cannot take is
 * left out, none left is match_none, and no token with zero_terms_query
 * all is match_all.  NULL on error, c->err filled. */
static fds_query *mm_build(fds__dsl_ctx *c, const cJSON *body,
                           const mm_args *a, const mm_fields *fs,
                           bool lenient)
{
    if (a->zt_all && cJSON_IsString(a->query)) {
        size_t ntok = 0;
        fds_analyze(a->query->valuestring, strlen(a->query->valuestring),
                    count_tok, &ntok);
        if (ntok == 0)
            return mm_whole(c, FDS_Q_MATCH_ALL);
    }
    bool best = !strcmp(a->t, "best_fields") || a->phrase;
    const char *leaf = !a->phrase ? "match"
                       : a->t[6] ? "match_phrase_prefix" : "match_phrase";
    const fds__dsl_ctx c0 = *c;
    fds_query *top = fds__dsl_qnew(best ? FDS_Q_DISMAX : FDS_Q_BOOL, NULL);
    if (!top) {
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        return NULL;
    }
    top->boost = a->boost;
    if (best)
        top->tie = a->tb ? (float)a->tb->valuedouble : 0.0f;
    for (size_t i = 0; i < fs->n; i++) {
        cJSON *m;
        if (mm_field_json(body, a, &fs->v[i], leaf, &m)) {
            fds__query_free(top);
            fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                         "out of memory");
            return NULL;
        }
        if (lenient && mm_fails(&c0, m, a->phrase)) {
            cJSON_Delete(m);
            continue;
        }
        fds_query *k = mm_field_query(c, m, a->phrase);
        cJSON_Delete(m);
        if (!k || fds__dsl_push(&top->should, &top->nshould, k)) {
            fds__query_free(k);
            fds__query_free(top);
            if (c->err && !c->err->code)
                fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                             "out of memory");
            return NULL;
        }
    }
    if (!top->nshould) { /* no field can take the text */
        fds__query_free(top);
        return mm_whole(c, FDS_Q_MATCH_NONE);
    }
    return top;
}

fds_query *fds__dsl_multi_match(fds__dsl_ctx *c, const cJSON *body)
{
    if (!cJSON_IsObject(body)) {
        fds__dsl_err(c->err, "[multi_match] query malformed, no start_object "
                             "after query name");
        return NULL;
    }
    mm_args a = {0};
    int rc = mm_read(c, body, &a);
    if (!a.opts)
        return NULL;
    if (!rc)
        rc = mm_check(c, body, &a);
    mm_fields fs = {0};
    if (!rc)
        rc = mm_fields_of(c, a.fields, &fs);
    fds_query *q = rc ? NULL : mm_build(c, body, &a, &fs, a.lenient || fs.all);
    mm_fields_free(&fs);
    cJSON_Delete(a.opts);
    if (rc == FDS_ENOMEM)
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return q;
}
