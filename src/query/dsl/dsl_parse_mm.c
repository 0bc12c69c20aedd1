/*
 * dsl_parse_mm.c: the multi_match query, as Elasticsearch 8's
 * MultiMatchQueryBuilder builds it.
 *
 * The query is rewritten, as Elasticsearch's MultiMatchQueryParser does,
 * into the compound query it stands for and parsed by the ordinary DSL
 * parser, so that its scores are by construction those of the same query
 * built by hand:
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

/* The leaf field types a pattern resolves to. */
static const int MM_TYPES[] = {FDS_FT_TEXT, FDS_FT_KEYWORD, FDS_FT_LONG,
                               FDS_FT_DOUBLE, FDS_FT_DATE, FDS_FT_BOOLEAN};

int fds__dsl_fields_matching(fds__dsl_ctx *c, const char *pat,
                             int (*cb)(void *arg, const char *path), void *arg)
{
    int rc = 0;
    for (size_t t = 0; !rc && c->m && t < sizeof MM_TYPES / sizeof *MM_TYPES;
         t++) {
        char **paths = NULL;
        size_t np = 0;
        rc = fds_mapping_fields_of_type(c->m, MM_TYPES[t], &paths, &np);
        for (size_t i = 0; i < np; i++) {
            if (!rc && fds_glob_match(pat, paths[i], strlen(paths[i])))
                rc = cb(arg, paths[i]);
            free(paths[i]);
        }
        free(paths);
    }
    return rc;
}

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

/* Whether a per-field match `m` fails to parse (a number field and text
 * it cannot take): lenient drops it. */
static int count_tok(void *arg, const char *t, size_t n)
{
    (void)t;
    (void)n;
    ++*(size_t *)arg;
    return 0;
}

static bool mm_fails(fds__dsl_ctx *c, const cJSON *m)
{
    fds_err scratch = {0};
    fds__dsl_ctx c2 = *c;
    c2.err = &scratch;
    fds_query *q = fds__dsl_query(&c2, m);
    fds__query_free(q);
    return q == NULL;
}

/* The rewritten query of the body (a cJSON tree, caller frees), or NULL
 * with c->err filled. */
static cJSON *mm_rewrite(fds__dsl_ctx *c, const cJSON *body)
{
    if (!cJSON_IsObject(body)) {
        fds__dsl_err(c->err, "[multi_match] query malformed, no start_object "
                             "after query name");
        return NULL;
    }
    const cJSON *query = NULL, *fields = NULL, *type = NULL, *tb = NULL,
                *zt = NULL, *it;
    bool lenient = false;
    float boost = 1.0f;
    cJSON *opts = cJSON_CreateObject();
    if (!opts)
        return NULL;
    int rc = 0;
    cJSON_ArrayForEach(it, body) {
        const char *k = it->string;
        if (!strcmp(k, "query")) {
            query = it;
        } else if (!strcmp(k, "fields")) {
            fields = it;
        } else if (!strcmp(k, "type")) {
            type = it;
        } else if (!strcmp(k, "tie_breaker")) {
            tb = it;
        } else if (!strcmp(k, "zero_terms_query")) {
            zt = it;
        } else if (!strcmp(k, "boost") && cJSON_IsNumber(it)) {
            boost = (float)it->valuedouble;
        } else if (!strcmp(k, "lenient") && cJSON_IsBool(it)) {
            lenient = cJSON_IsTrue(it);
        } else if (!strcmp(k, "analyzer")) {
            if (!cJSON_IsString(it) || strcmp(it->valuestring, "standard"))
                rc = fds_err_setk(c->err, FDS_EINVAL,
                                  FDS_KIND_INVALID_ARGUMENT,
                                  "[multi_match] analyzer [%s] is not "
                                  "supported: only [standard]",
                                  cJSON_IsString(it) ? it->valuestring : "?");
        } else if (match_opt(k)) {
            cJSON *d = cJSON_Duplicate(it, true);
            if (!d || !cJSON_AddItemToObject(opts, k, d))
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
    const char *t = "best_fields";
    bool phrase = false;
    if (!rc && type) {
        t = cJSON_IsString(type) ? type->valuestring : "";
        phrase = !strcmp(t, "phrase") || !strcmp(t, "phrase_prefix");
        if (phrase && cJSON_GetObjectItemCaseSensitive(opts, "fuzziness"))
            rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "Fuzziness not allowed for type [%s]", t);
        else if (phrase)
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
    if (!rc && !phrase && sl && !(cJSON_IsNumber(sl) && sl->valuedouble == 0))
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "[multi_match] [slop] changes nothing for type [%s]: "
                          "the standard analyzer makes no phrases to loosen "
                          "(use type phrase or phrase_prefix)", t);
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
    bool zt_all = false;
    if (!rc && zt) {
        if (cJSON_IsString(zt) && (!strcasecmp(zt->valuestring, "all") ||
                                   !strcasecmp(zt->valuestring, "none")))
            zt_all = !strcasecmp(zt->valuestring, "all");
        else
            rc = fds__dsl_err(c->err, "Unsupported zero_terms_query value "
                                      "[%s]", cJSON_IsString(zt)
                                      ? zt->valuestring : "?");
    }
    mm_fields fs = {0};
    if (!rc) {
        if (!fields) {
            rc = mm_entry(c, "*", &fs);
        } else if (cJSON_IsString(fields)) {
            rc = mm_entry(c, fields->valuestring, &fs);
        } else if (cJSON_IsArray(fields)) {
            cJSON_ArrayForEach(it, fields) {
                if (!cJSON_IsString(it)) {
                    rc = fds__dsl_err(c->err, "[multi_match] fields must be "
                                              "strings");
                    break;
                }
                if ((rc = mm_entry(c, it->valuestring, &fs)))
                    break;
            }
        } else {
            rc = fds__dsl_err(c->err, "[multi_match] unknown token [%s] "
                                      "after [fields]", fds__dsl_jtype(fields));
        }
    }
    lenient |= fs.all;
    cJSON *out = NULL;
    if (!rc) {
        bool best = !strcmp(t, "best_fields") || phrase;
        const char *leaf = !phrase ? "match"
                           : t[6] ? "match_phrase_prefix" : "match_phrase";
        out = cJSON_CreateObject();
        cJSON *top = out ? cJSON_AddObjectToObject(out, best ? "dis_max"
                                                             : "bool")
                         : NULL;
        cJSON *list = top ? cJSON_AddArrayToObject(top, best ? "queries"
                                                             : "should")
                          : NULL;
        if (top && best && tb)
            cJSON_AddNumberToObject(top, "tie_breaker", tb->valuedouble);
        if (top)
            cJSON_AddNumberToObject(top, "boost", boost);
        for (size_t i = 0; list && i < fs.n; i++) {
            cJSON *m = cJSON_CreateObject();
            cJSON *mb = m ? cJSON_AddObjectToObject(m, leaf) : NULL;
            cJSON *fb = mb ? (phrase ? phrase_opts(body, t[6] != 0)
                                     : cJSON_Duplicate(opts, true))
                           : NULL;
            if (!fb || !cJSON_AddItemToObject(mb, fs.v[i].path, fb)) {
                cJSON_Delete(fb);
                cJSON_Delete(m);
                rc = FDS_ENOMEM;
                break;
            }
            cJSON_AddItemToObject(fb, "query", cJSON_Duplicate(query, true));
            cJSON_AddNumberToObject(fb, "boost", fs.v[i].boost);
            if (lenient && mm_fails(c, m)) {
                cJSON_Delete(m);
                continue;
            }
            cJSON_AddItemToArray(list, m);
        }
        if (!rc && (!list || !cJSON_GetArraySize(list))) {
            /* no field can take the text */
            cJSON_Delete(out);
            out = cJSON_CreateObject();
            if (out)
                cJSON_AddObjectToObject(out, "match_none");
        }
        if (!rc && zt_all && cJSON_IsString(query)) {
            size_t ntok = 0;
            fds_analyze(query->valuestring, strlen(query->valuestring),
                        count_tok, &ntok);
            if (ntok == 0) {
                cJSON_Delete(out);
                out = cJSON_CreateObject();
                if (out)
                    cJSON_AddObjectToObject(out, "match_all");
            }
        }
    }
    mm_fields_free(&fs);
    cJSON_Delete(opts);
    if (rc == FDS_ENOMEM || (!rc && !out))
        fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (rc) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

fds_query *fds__dsl_multi_match(fds__dsl_ctx *c, const cJSON *body)
{
    cJSON *j = mm_rewrite(c, body);
    if (!j)
        return NULL;
    c->depth--; /* the rewritten object takes multi_match's own level */
    fds_query *q = fds__dsl_query(c, j);
    c->depth++;
    cJSON_Delete(j);
    return q;
}
