/*
 * dsl_parse.c: the Elasticsearch query DSL parser -- a `_search` / `_count`
 * body (and the URL parameters of `_search`) into an fds_search_request
 * (search_request.h).
 *
 * This file holds the body keys (query, from, size, _source, sort,
 * search_after, track_total_hits) and the URL parameters; the query object
 * itself is dsl_parse_query.c, leaf queries dsl_parse_leaf.c.
 *
 * The parser resolves every field against the mapping at parse time: a
 * `match` on a text field becomes a bool of analyzed terms, on a keyword
 * field an exact term, on a numeric/date/boolean field an equality range.
 * Errors follow Elasticsearch's wording where we know it
 * ("unknown query [x]", "Result window is too large, ...").  The body is
 * parsed with cJSON (handed over as bytes); the mapping is read through its
 * public interface only (fds_mapping_field()).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "time/datemath.h"
#include "dsl/dsl_parse_int.h"
#include "fds_time.h"

/* from + size within the index's index.max_result_window. */
static int window_check(const fds_search_request *r, fds_err *err)
{
    if ((uint64_t)r->from + r->size > r->max_window)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Result window is too large, from + size must be "
                            "less than or equal to: [%u] but was [%llu]. See "
                            "the scroll api for a more efficient way to "
                            "request large data sets. This limit can be set by "
                            "changing the [index.max_result_window] index "
                            "level setting.", r->max_window,
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
            return fds__dsl_err(err, "[%s] failed to parse field value [%s]",
                                name, v->valuestring);
    } else
        return fds__dsl_err(err, "[%s] expected a number but found [%s]", name,
                    fds__dsl_jtype(v));
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

static void str_list_free(char **l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

/*
 * A string or an array of strings into a new list *out of *n strings.  A
 * list given before is replaced, as Elasticsearch's FetchSourceContext
 * keeps the last of "includes" and "include".  0, FDS_EPARSE (not strings;
 * the old list is kept), FDS_ENOMEM.
 */
static int str_list(const cJSON *v, char ***out, size_t *n)
{
    const cJSON *it;
    size_t k = 0;
    if (cJSON_IsString(v))
        k = 1;
    else if (!cJSON_IsArray(v))
        return FDS_EPARSE;
    else
        cJSON_ArrayForEach(it, v) {
            if (!cJSON_IsString(it))
                return FDS_EPARSE;
            k++;
        }
    char **l = calloc(k ? k : 1, sizeof *l);
    if (!l)
        return FDS_ENOMEM;
    size_t m = 0;
    for (it = cJSON_IsString(v) ? v : v->child; m < k; it = it->next) {
        if (!(l[m] = strdup(it->valuestring))) {
            str_list_free(l, m);
            return FDS_ENOMEM;
        }
        m++;
    }
    str_list_free(*out, *n);
    *out = l;
    *n = m;
    return 0;
}

/* The bounds of `_source` filtering (FDS_SOURCE_PATTERNS_MAX patterns of at
 * most FDS_SOURCE_PATTERN_LEN_MAX bytes).  0 or FDS_ETOOBIG. */
static int source_limits(const fds_search_request *r, fds_err *err)
{
    size_t n = r->nincludes + r->nexcludes;
    if (n > FDS_SOURCE_PATTERNS_MAX)
        return fds_err_setk(err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                            "[_source] has [%zu] include and exclude patterns, "
                            "more than the limit of [%d]", n,
                            FDS_SOURCE_PATTERNS_MAX);
    for (size_t i = 0; i < n; i++) {
        const char *p = i < r->nincludes ? r->includes[i]
                                         : r->excludes[i - r->nincludes];
        size_t l = strlen(p);
        if (l > FDS_SOURCE_PATTERN_LEN_MAX)
            return fds_err_setk(err, FDS_ETOOBIG, FDS_KIND_INVALID_ARGUMENT,
                                "[_source] pattern of [%zu] bytes is longer "
                                "than the limit of [%d]", l,
                                FDS_SOURCE_PATTERN_LEN_MAX);
    }
    return 0;
}

static int parse_source(fds_search_request *r, const cJSON *v, fds_err *err)
{
    r->source_asked = true;
    if (cJSON_IsBool(v)) {
        r->source = cJSON_IsTrue(v);
        return 0;
    }
    if (cJSON_IsString(v) || cJSON_IsArray(v)) {
        if (str_list(v, &r->includes, &r->nincludes))
            return fds__dsl_err(
                err, "[_source] must be a boolean, a string, an array "
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
                return fds__dsl_err(err, "Unknown key for a %s in [%s].",
                                    fds__dsl_jtype(it), k);
            if (rc)
                return fds__dsl_err(
                    err,
                    "[_source] [%s] must be a string or an array "
                    "of strings",
                    k);
        }
        return 0;
    }
    return fds__dsl_err(err,
                        "[_source] must be a boolean, a string, an array of "
                        "strings or an object");
}

/* stored_fields: a name or a list of names (Elasticsearch's
 * StoredFieldsContext.fromXContent).  "_none_" alone disables the stored
 * fields and the metadata; "_source" among them asks for `_source`; other
 * names select stored fields, and no mapping field is stored apart from
 * `_source`, so they add nothing (as Elasticsearch ignores names that are
 * not stored). */
static int parse_stored_fields(fds_search_request *r, const cJSON *v,
                               fds_err *err)
{
    const cJSON *one = cJSON_IsString(v) ? v : NULL;
    if (!one && !cJSON_IsArray(v))
        return fds__dsl_err(err, "[stored_fields] must be a string or an "
                                 "array of strings");
    r->stored_fields = FDS_STORED_FIELDS_LIST;
    for (const cJSON *it = one ? one : v->child; it; it = one ? NULL : it->next) {
        if (!cJSON_IsString(it))
            return fds__dsl_err(err, "[stored_fields] must be a string or an "
                                     "array of strings");
        if (!strcmp(it->valuestring, "_none_")) {
            if (one == NULL && cJSON_GetArraySize(v) != 1)
                return fds__dsl_err(err, "[stored_fields] cannot have "
                                         "[_none_] with other fields");
            r->stored_fields = FDS_STORED_FIELDS_NONE;
        } else if (!strcmp(it->valuestring, "_source")) {
            r->source_asked = true;
            r->source = true;
        }
    }
    return 0;
}

/* What `_source` and stored_fields say together, once both are known.
 * FDS_EINVAL when _none_ meets an explicit `_source`, as Elasticsearch's
 * SearchService refuses it. */
static int stored_check(const fds_search_request *r, fds_err *err)
{
    if (r->stored_fields == FDS_STORED_FIELDS_NONE && r->source_asked &&
        r->source)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[stored_fields] cannot be disabled if [_source] "
                            "is requested");
    return 0;
}

/* A search `timeout` as Elasticsearch's TimeValue reads it
 * (fds_time_value_ns), or -1 for none; 0 stops at once.  0 or FDS_EINVAL. */
static int parse_timeout(fds_search_request *r, const char *v, fds_err *err)
{
    int64_t ns;
    if (fds_time_value_ns(v, true, &ns)) {
        r->timeout_ns = ns < 0 ? 0 : ns < 1 ? 1 : ns;
        return 0;
    }
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_PARSE,
                        "failed to parse setting [timeout] with value [%s] as a "
                        "time value: unit is missing or unrecognized", v);
}

/* A JSON boolean for `name`.  0 or FDS_EPARSE. */
static int parse_flag(const cJSON *v, const char *name, bool *out,
                      fds_err *err)
{
    if (!cJSON_IsBool(v))
        return fds__dsl_err(err, "[%s] must be a boolean, got a %s", name,
                            fds__dsl_jtype(v));
    *out = cJSON_IsTrue(v);
    return 0;
}

/* An unmapped_type name as the fds_ftype it sorts as; FDS_FT_NONE for a
 * type that cannot sort. */
static int unmapped_ftype(const char *t)
{
    static const struct { const char *name; int type; } tab[] = {
        {"keyword", FDS_FT_KEYWORD}, {"long", FDS_FT_LONG},
        {"integer", FDS_FT_LONG}, {"short", FDS_FT_LONG}, {"byte", FDS_FT_LONG},
        {"double", FDS_FT_DOUBLE}, {"float", FDS_FT_DOUBLE},
        {"half_float", FDS_FT_DOUBLE}, {"date", FDS_FT_DATE},
        {"boolean", FDS_FT_BOOLEAN},
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        if (!strcmp(tab[i].name, t))
            return tab[i].type;
    return FDS_FT_NONE;
}

static int sort_one(fds__dsl_ctx *c, fds_search_request *r, const char *name,
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
    } else if (!strcmp(name, "_shard_doc")) { /* with a pit: pit_tiebreak */
        s->kind = FDS_SORT_SHARD_DOC;
        r->nsort++;
    } else {
        fds_field_info fb;
        const fds_field_info *f = fds__dsl_field(c, name, &fb);
        const cJSON *um = cJSON_IsObject(opts)
                              ? cJSON_GetObjectItemCaseSensitive(opts, "unmapped_type")
                              : NULL;
        if (!f && cJSON_IsString(um)) {
            /* unmapped_type: an unmapped field sorts as one of that type
             * that no document has (every value missing) */
            int t = unmapped_ftype(um->valuestring);
            if (t == FDS_FT_NONE)
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "No mapper found for type [%s]",
                                    um->valuestring);
            memset(&fb, 0, sizeof fb);
            fb.path = name;
            fb.path_len = strlen(name);
            fb.type = t;
            f = &fb;
        }
        if (!f)
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_QUERY_SHARD,
                                "No mapping found for [%s] in order to sort on",
                                name);
        if (f->type == FDS_FT_TEXT || f->type == FDS_FT_OBJECT)
            return fds__dsl_no_fielddata(c, name);
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
            else if (!strcmp(it->string, "unmapped_type")) continue;
            else if (!strcmp(it->string, "mode") ||
                     !strcmp(it->string, "format") ||
                     !strcmp(it->string, "numeric_type") ||
                     !strcmp(it->string, "nested"))
                return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "[%s] in a sort is not supported", it->string);
            else
                return fds__dsl_err(c->err, "[field_sort] unknown field [%s]",
                            it->string);
        }
    } else if (opts) {
        return fds__dsl_err(c->err, "[sort] malformed value for [%s]", name);
    }
    if (order) {
        if (!cJSON_IsString(order) || (strcmp(order->valuestring, "asc") &&
                                       strcmp(order->valuestring, "desc")))
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Unknown SortOrder [%s]",
                                cJSON_IsString(order) ? order->valuestring
                                                      : "?");
        s->desc = !strcmp(order->valuestring, "desc");
    }
    if (missing && !(cJSON_IsString(missing) &&
                     (!strcmp(missing->valuestring, "_first") ||
                      !strcmp(missing->valuestring, "_last"))))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[missing] in a sort is supported as [_first] or "
                            "[_last] only");
    if (missing)
        s->missing_first = !strcmp(missing->valuestring, "_first");
    return 0;
}

static int parse_sort(fds__dsl_ctx *c, fds_search_request *r, const cJSON *v)
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
    return fds__dsl_err(c->err,
                        "[sort] must be a string, an object or an array");
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
    return fds__dsl_err(err,
                        "[track_total_hits] must be a boolean or a number");
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
                bool integral =
                    j == n || (s[j] != '.' && s[j] != 'e' && s[j] != 'E');
                size_t digits = j - i - (c == '-');
                if (!integral) { /* the fraction and exponent: kept as they
                                    are, not read as integers of their own */
                    if (j < n && s[j] == '.')
                        for (j++; j < n && s[j] >= '0' && s[j] <= '9';)
                            j++;
                    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
                        j++;
                        if (j < n && (s[j] == '+' || s[j] == '-'))
                            j++;
                        while (j < n && s[j] >= '0' && s[j] <= '9')
                            j++;
                    }
                }
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

/* "search_after": one value per sort key, kept as given (numbers as
 * doubles, strings as text); dates are read once the sort is known. */
static int parse_after(fds_search_request *r, const cJSON *it, fds_err *err)
{
    if (!cJSON_IsArray(it))
        return fds__dsl_err(err, "[search_after] must be an array");
    const cJSON *v;
    cJSON_ArrayForEach(v, it) {
        if (r->nafter >= FDS_SORT_VALUES_MAX)
            return fds__dsl_err(err, "[search_after] has too many values");
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
            return fds__dsl_err(err, "[search_after] values must be scalars");
    }
    return 0;
}

/* search_after against the sort: as many values as keys; date strings as
 * epoch milliseconds. */
static int check_after(fds_search_request *r, fds_err *err)
{
    if (!r->nafter)
        return 0;
    unsigned want = r->nsort ? r->nsort : 1;
    if (r->nafter != want)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "search_after has %u value(s) but sort has %u.",
                            r->nafter, want);
    /* a _score key is a float, as Elasticsearch reads it (SearchAfterBuilder
     * converts a SCORE value with floatValue()): a score printed as its
     * shortest decimal reads back as a double on either side of the float,
     * and the docs tying it were skipped or repeated */
    for (unsigned k = 0; k < want; k++) {
        fds_after_val *a = &r->after[k];
        if ((!r->nsort || r->sort[k].kind == FDS_SORT_SCORE) && !a->is_null &&
            !isnan(a->num))
            a->num = (double)(float)a->num;
    }
    for (unsigned k = 0; k < r->nsort; k++) {
        fds_after_val *a = &r->after[k];
        const fds_sort_spec *s = &r->sort[k];
        bool field = s->kind == FDS_SORT_FIELD;
        /* exact integer keys: a long from its digits (big integers arrive
         * quoted), never through the double */
        a->lnum = a->num >= 0x1p63 ? INT64_MAX
                : a->num < -0x1p63 ? INT64_MIN
                : isnan(a->num) ? 0 : (int64_t)a->num;
        bool bad = false; /* a value the key's type cannot take */
        if (field && s->ftype == FDS_FT_DATE && a->str) {
            /* a date as the field's format prints it, else as the default
             * format (or epoch millis) reads it */
            int64_t ms;
            fds_field_info fi;
            const struct fds_date_format *df =
                r->mapping && !fds_mapping_field(r->mapping, s->field,
                                                 s->field_len, &fi)
                    ? fi.date_format : NULL;
            bad = !(df && fds__date_parse(a->str, a->str_len, df, 0, &ms) == 0) &&
                  fds__parse_date(a->str, a->str_len, true, &ms) != 0;
            if (!bad) {
                a->num = (double)ms;
                a->lnum = ms;
            }
        } else if (field && s->ftype != FDS_FT_DOUBLE &&
                   s->ftype != FDS_FT_KEYWORD && a->str) {
            int64_t l;
            bad = fds__parse_long(a->str, a->str_len, false, &l) != 0;
            if (!bad) {
                a->lnum = l;
                a->num = (double)l;
            }
        } else if (field && s->ftype == FDS_FT_DOUBLE && a->str) {
            char *e;
            strtod(a->str, &e);
            bad = e == a->str || *e;
        } else if (field && s->ftype != FDS_FT_DOUBLE && s->ftype != FDS_FT_KEYWORD &&
                   !a->is_null) {
            /* an integer key takes a whole number within a long */
            bad = a->num != floor(a->num) || a->num >= 0x1p63 || a->num < -0x1p63;
        }
        if (bad)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Failed to parse search_after value for field "
                                "[%s].", s->field);
    }
    return 0;
}

/* "min_score": a finite number (or its text).  0 or FDS_EPARSE. */
static int parse_min_score(fds_search_request *r, const cJSON *v,
                           fds_err *err)
{
    double d = NAN;
    if (cJSON_IsNumber(v))
        d = v->valuedouble;
    else if (cJSON_IsString(v)) {
        char *e;
        d = strtod(v->valuestring, &e);
        if (e == v->valuestring || *e)
            d = NAN;
    }
    if (!isfinite(d))
        return fds__dsl_err(err, "[min_score] must be a number, got [%s]",
                            cJSON_IsString(v) ? v->valuestring
                                              : fds__dsl_jtype(v));
    r->min_score = (float)d;
    return 0;
}

/* One docvalue_fields entry (a name, or {"field", "format"}). */
static int docvalue_one(fds_search_request *r, const cJSON *v, bool fetch,
                        fds_err *err)
{
    const char *name = NULL, *fmt = NULL;
    bool unmapped = false;
    if (cJSON_IsString(v)) {
        name = v->valuestring;
    } else if (cJSON_IsObject(v)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            if (!strcmp(it->string, "field") && cJSON_IsString(it))
                name = it->valuestring;
            else if (!strcmp(it->string, "format") && cJSON_IsString(it))
                fmt = it->valuestring;
            else if (fetch && !strcmp(it->string, "include_unmapped") &&
                     (cJSON_IsBool(it) ||
                      (cJSON_IsString(it) && (!strcmp(it->valuestring, "true") ||
                                              !strcmp(it->valuestring, "false")))))
                /* Kibana sends it as a string */
                unmapped = cJSON_IsTrue(it) ||
                           (cJSON_IsString(it) && it->valuestring[0] == 't');
            else if (strcmp(it->string, "format") || !cJSON_IsNull(it))
                return fds__dsl_err(err, "[docvalue_fields] unknown field "
                                         "[%s]", it->string);
        }
    }
    if (!name || !*name)
        return fds__dsl_err(err, "[docvalue_fields] entries must be field "
                                 "names or objects with a [field]");
    if (strlen(name) >= FDS_FIELD_PATH_MAX || (fmt && strlen(fmt) > 64))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[docvalue_fields] entry is too long");
    if (fetch)
        r->nfields_asked++;
    else
        r->ndv_asked++;
    return fds__dv_resolve(r, name, fmt, fetch, unmapped, err);
}

/* "fields" (Elasticsearch 8's fields API): names, patterns or {"field",
 * "format"} objects; values from `_source` as the mapping parses them. */
static int each_entry(fds_search_request *r, const cJSON *v, bool fetch,
                      fds_err *err)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        int rc = docvalue_one(r, it, fetch, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int parse_fields(fds_search_request *r, const cJSON *v, fds_err *err)
{
    if (!cJSON_IsArray(v))
        return fds__dsl_err(err, "[fields] must be an array");
    return each_entry(r, v, true, err);
}

/* Elasticsearch's "Trying to retrieve too many ..." of index.<setting>. */
static int too_many(fds_err *err, const char *what, uint32_t max, size_t got,
                    const char *setting)
{
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "Trying to retrieve too many %s. Must be less than or "
                        "equal to: [%u] but was [%zu]. This limit can be set "
                        "by changing the [index.%s] index level setting.",
                        what, max, got, setting);
}

/* "docvalue_fields": a list of entries, appended to those given before
 * (body then URL), at most index.max_docvalue_fields_search of them. */
static int parse_docvalue(fds_search_request *r, const cJSON *v, fds_err *err)
{
    if (r->count_only)
        return fds__dsl_err(err, "request does not support [docvalue_fields]");
    if (!cJSON_IsArray(v))
        return fds__dsl_err(err, "[docvalue_fields] must be an array");
    /* the count is checked first, as Elasticsearch does */
    size_t asked = r->ndv_asked + (size_t)cJSON_GetArraySize(v);
    if (asked > r->lim.max_docvalue_fields)
        return too_many(err, "docvalue_fields", r->lim.max_docvalue_fields,
                        asked, "max_docvalue_fields_search");
    return each_entry(r, v, false, err);
}

/* "script_fields" and "rescore": not supported (no scripts, no second
 * scoring phase), but first the limits Elasticsearch checks on them
 * (index.max_script_fields, index.max_rescore_window) answer as there. */
static int refused_option(fds_search_request *r, const cJSON *v, fds_err *err)
{
    const char *k = v->string;
    if (!strcmp(k, "script_fields")) {
        size_t n = cJSON_IsObject(v) ? (size_t)cJSON_GetArraySize(v) : 0;
        if (cJSON_IsObject(v) && !n)
            return 0; /* none asked (Kibana sends {}) */
        if (n > r->lim.max_script_fields)
            return too_many(err, "script_fields", r->lim.max_script_fields, n,
                            "max_script_fields");
    } else {
        const cJSON *it;
        const cJSON *one = cJSON_IsObject(v) ? v : NULL;
        cJSON_ArrayForEach(it, v) {
            const cJSON *o = cJSON_IsArray(v) ? it : one;
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "window_size");
            double ws = cJSON_IsNumber(w) ? w->valuedouble : 10;
            if (ws > r->lim.max_rescore_window)
                return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "Rescore window [%.0f] is too large. It "
                                    "must be less than [%u]. This prevents "
                                    "allocating massive heaps for storing the "
                                    "results to be rescored. This limit can be "
                                    "set by changing the "
                                    "[index.max_rescore_window] index level "
                                    "setting.", ws, r->lim.max_rescore_window);
            if (one)
                break;
        }
    }
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "[%s] is not supported", k);
}

/* Elasticsearch's implicit tiebreaker of a search with a point in time
 * (SearchRequest, since 7.12): `_shard_doc` ascending after the sort keys
 * (after `_score` when there are none), unless the sort names it; without
 * a point in time `_shard_doc` is refused as ShardDocSortField does. */
static int pit_tiebreak(fds_search_request *r, fds_err *err)
{
    bool has = false;
    for (unsigned k = 0; k < r->nsort; k++)
        has |= r->sort[k].kind == FDS_SORT_SHARD_DOC;
    if (has && !r->pit)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[_shard_doc] sort field cannot be used without "
                            "[point in time]");
    if (has || !r->pit)
        return 0;
    if (r->nsort == 0)
        r->sort[r->nsort++] = (fds_sort_spec){.kind = FDS_SORT_SCORE, .desc = true};
    if (r->nsort >= FDS_SORT_VALUES_MAX)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "at most %d sort keys are supported with a point "
                            "in time (its [_shard_doc] tiebreaker is one)",
                            FDS_SORT_VALUES_MAX - 1);
    r->sort[r->nsort++] = (fds_sort_spec){.kind = FDS_SORT_SHARD_DOC};
    return 0;
}

/* One top-level key `it` of a search body.  0 or an FDS_E* code. */
static int body_key(fds__dsl_ctx *c, fds_search_request *r, const cJSON *it,
                    int for_count)
{
    fds_err *err = c->err;
    const char *k = it->string;
    if (!strcmp(k, "query")) {
        fds__query_free(r->query);
        r->query = fds__dsl_query(c, it);
        return r->query ? 0 : err && err->code ? err->code : FDS_ENOMEM;
    }
    if (!strcmp(k, "min_score"))
        return parse_min_score(r, it, err);
    if (for_count)
        return fds__dsl_err(err, "request does not support [%s]", k);
    if (!strcmp(k, "from"))
        return parse_nonneg(it, "from", &r->from, err);
    if (!strcmp(k, "size"))
        return parse_nonneg(it, "size", &r->size, err);
    if (!strcmp(k, "_source")) {
        int rc = parse_source(r, it, err);
        return rc ? rc : source_limits(r, err);
    }
    if (!strcmp(k, "sort"))
        return parse_sort(c, r, it);
    if (!strcmp(k, "track_total_hits"))
        return parse_track(r, it, err);
    if (!strcmp(k, "explain")) {
        r->explain = cJSON_IsTrue(it);
        return 0;
    }
    if (!strcmp(k, "track_scores")) {
        r->track_scores = cJSON_IsTrue(it);
        return 0;
    }
    if (!strcmp(k, "search_after"))
        return parse_after(r, it, err);
    if (!strcmp(k, "stored_fields"))
        return parse_stored_fields(r, it, err);
    if (!strcmp(k, "version"))
        return parse_flag(it, k, &r->version, err);
    if (!strcmp(k, "seq_no_primary_term"))
        return parse_flag(it, k, &r->seq_no_primary_term, err);
    if (!strcmp(k, "timeout")) {
        if (!cJSON_IsString(it))
            return fds__dsl_err(err, "[timeout] must be a time value string "
                                     "such as \"30s\"");
        return parse_timeout(r, it->valuestring, err);
    }
    if (!strcmp(k, "pit")) { /* its id and keep_alive are read by src/http */
        r->pit = true;
        return 0;
    }
    if (!strcmp(k, "profile") || !strcmp(k, "indices_boost")) /* src/http */
        return 0;
    if (!strcmp(k, "docvalue_fields"))
        return parse_docvalue(r, it, err);
    if (!strcmp(k, "fields"))
        return parse_fields(r, it, err);
    if (!strcmp(k, "min_score"))
        return parse_min_score(r, it, err);
    if (!strcmp(k, "script_fields") || !strcmp(k, "rescore"))
        return refused_option(r, it, err);
    if (!strcmp(k, "aggs") || !strcmp(k, "aggregations"))
        return fds__dsl_aggs(c, it, &r->aggs);
    if (!strcmp(k, "highlight"))
        return fds__dsl_highlight(c, it, &r->hl);
    return fds__dsl_err(err, "Unknown key for a %s in [%s].",
                        fds__dsl_jtype(it), k);
}

/* Keys of a top_hits body (Elasticsearch's TopHitsAggregationBuilder):
 * those read as a search body reads them; script_fields is refused as
 * the search refuses it. */
static const char *const TOP_HITS_KEYS[] = {
    "from", "size", "sort", "_source", "docvalue_fields", "fields",
    "highlight", "explain", "version", "seq_no_primary_term",
    "stored_fields", "track_scores", "script_fields", NULL};

int fds__dsl_top_hits(fds__dsl_ctx *c, const cJSON *j, const char *name,
                      fds_search_request **out)
{
    *out = NULL;
    if (!cJSON_IsObject(j))
        return fds__dsl_err(c->err, "Expected [START_OBJECT] under [top_hits], "
                                    "but got a [%s] in [%s]",
                            fds__dsl_jtype(j), name);
    fds_search_request *r = calloc(1, sizeof *r);
    if (!r)
        return fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                            "out of memory");
    r->size = FDS_TOP_HITS_SIZE;
    r->track_total = FDS_TRACK_TOTAL_NONE;
    r->source = true;
    r->mapping = c->m;
    r->lim = *c->lim;
    r->max_window = FDS_MAX_INNER_RESULT_WINDOW;
    r->min_score = NAN;
    int rc = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, j) {
        size_t i = 0;
        while (TOP_HITS_KEYS[i] && strcmp(TOP_HITS_KEYS[i], it->string))
            i++;
        if (!TOP_HITS_KEYS[i])
            rc = fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                              "[top_hits] unknown field [%s]", it->string);
        else
            rc = body_key(c, r, it, 0);
        if (rc)
            break;
    }
    if (!rc && (uint64_t)r->from + r->size > r->max_window)
        rc = fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "Top hits result window is too large, the top hits "
                          "aggregator [%s]'s from + size must be less than or "
                          "equal to: [%u] but was [%llu]. This limit can be set "
                          "by changing the [index.max_inner_result_window] "
                          "index level setting.", name, r->max_window,
                          (unsigned long long)r->from + r->size);
    if (!rc) /* no point in time here: refuses _shard_doc */
        rc = pit_tiebreak(r, c->err);
    if (!rc)
        rc = stored_check(r, c->err);
    if (rc) {
        fds_search_request_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* The parsed body (cJSON_Delete), or NULL with err filled. */
static cJSON *parse_json(const char *body, size_t len, fds_err *err)
{
    const char *endp = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &endp, 0);
    if (!root) {
        const char *ep = cJSON_GetErrorPtr();
        size_t off = (ep && ep >= body && ep <= body + len)
                         ? (size_t)(ep - body)
                         : 0;
        fds__dsl_err(err, "Failed to parse the request body: malformed JSON "
                          "near byte %zu", off);
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        fds__dsl_err(err, "Unknown key for a %s in [_na].",
                     fds__dsl_jtype(root));
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* Is raw JSON number text an integer quote_big_ints() quotes? */
static bool big_int_text(const char *s, size_t n)
{
    size_t i = n && s[0] == '-';
    size_t d = i;
    while (d < n && s[d] >= '0' && s[d] <= '9')
        d++;
    return d == n && d - i > BIG_INT_DIGITS;
}

/* String values holding a NUL, by their rank among the body's string
 * values in document order (cJSON's order too; quoted big integers count
 * as strings, as cJSON sees them). */
typedef struct raw_scan {
    size_t rank;
    struct { size_t rank; char *s; size_t n; } *v;
    size_t n;
} raw_scan;

static int raw_cb(void *arg, const fds_jval *v, fds_err *err)
{
    (void)err;
    raw_scan *r = arg;
    if (v->kind == FDS_JV_NUMBER && big_int_text(v->str, v->str_len))
        r->rank++;
    if (v->kind != FDS_JV_STRING)
        return 0;
    if (memchr(v->str, 0, v->str_len)) {
        void *nv = realloc(r->v, (r->n + 1) * sizeof *r->v);
        char *copy = nv ? malloc(v->str_len + 1) : NULL;
        if (nv)
            r->v = nv;
        if (!copy)
            return FDS_ENOMEM;
        memcpy(copy, v->str, v->str_len);
        copy[v->str_len] = 0;
        r->v[r->n].rank = r->rank;
        r->v[r->n].s = copy;
        r->v[r->n++].n = v->str_len;
    }
    r->rank++;
    return 0;
}

/* Pair the scanned strings with their cJSON nodes (pre-order walk). */
static void raw_pair(const cJSON *j, const raw_scan *r, size_t *rank,
                     size_t *next, fds__dsl_raw *out)
{
    for (; j && *next < r->n; j = j->next) {
        if (cJSON_IsString(j)) {
            if (r->v[*next].rank == (*rank)++) {
                out[*next] = (fds__dsl_raw){j, r->v[*next].s, r->v[*next].n};
                ++*next;
            }
        } else if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
            raw_pair(j->child, r, rank, next, out);
        }
    }
}

/*
 * The body's checks beyond cJSON's (duplicate keys, invalid UTF-8:
 * fds_json_check_body) and its strings with NULs, paired with root's
 * nodes into c->raw (free with raw_free).  0 or an FDS_E* code.
 */
static int raw_strings(const char *body, size_t len, const cJSON *root,
                       fds__dsl_ctx *c)
{
    raw_scan r = {0};
    int rc = fds__json_scan_body(body, len, raw_cb, &r, c->err);
    fds__dsl_raw *out = !rc && r.n ? calloc(r.n, sizeof *out) : NULL;
    if (!rc && r.n && !out)
        rc = fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                          "out of memory");
    size_t rank = 0, next = 0;
    if (out)
        raw_pair(root, &r, &rank, &next, out);
    for (size_t i = next; i < r.n; i++) /* unpaired (none when consistent) */
        free(r.v[i].s);
    free(r.v);
    c->raw = out;
    c->nraw = next;
    return rc;
}

static void raw_free(fds__dsl_ctx *c)
{
    for (size_t i = 0; i < c->nraw; i++)
        free(c->raw[i].s);
    free((void *)c->raw);
    c->raw = NULL;
    c->nraw = 0;
}

int fds_search_parse(const char *body, size_t len, const fds_mapping *m,
                     int for_count, fds_search_request **out, fds_err *err)
{
    return fds_search_parse_limits(body, len, m, NULL, for_count, out, err);
}

void fds_search_limits_default(fds_search_limits *l)
{
    l->max_result_window = FDS_MAX_RESULT_WINDOW;
    l->max_docvalue_fields = FDS_MAX_DOCVALUE_FIELDS;
    l->max_script_fields = FDS_MAX_SCRIPT_FIELDS;
    l->max_terms_count = FDS_MAX_TERMS_COUNT;
    l->max_regex_length = FDS_MAX_REGEX_LENGTH;
    l->max_rescore_window = FDS_MAX_RESCORE_WINDOW;
    l->lookup = NULL;
    l->lookup_arg = NULL;
}

int fds_search_parse_window(const char *body, size_t len,
                            const fds_mapping *m, uint32_t max_window,
                            int for_count, fds_search_request **out,
                            fds_err *err)
{
    fds_search_limits l;
    fds_search_limits_default(&l);
    l.max_result_window = max_window;
    return fds_search_parse_limits(body, len, m, &l, for_count, out, err);
}

int fds_search_parse_limits(const char *body, size_t len,
                            const fds_mapping *m, const fds_search_limits *lim,
                            int for_count, fds_search_request **out,
                            fds_err *err)
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
    if (lim)
        r->lim = *lim;
    else
        fds_search_limits_default(&r->lim);
    r->max_window = r->lim.max_result_window;
    r->min_score = NAN;
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
    cJSON *root = quoted ? parse_json(quoted, qlen, err)
                         : parse_json(body, len, err);
    int rc = root ? 0 : err && err->code ? err->code : FDS_EPARSE;
    fds__dsl_ctx c = {.m = m, .err = err, .lim = &r->lim};
    if (!rc) /* what cJSON lets through or cuts short */
        rc = raw_strings(body, len, root, &c);
    const cJSON *it;
    if (!rc)
        cJSON_ArrayForEach(it, root) {
            if ((rc = body_key(&c, r, it, for_count)))
                break;
        }
    if (!rc)
        rc = pit_tiebreak(r, err);
    if (!rc)
        rc = check_after(r, err);
    if (!rc && !for_count) /* _count fetches no page */
        rc = window_check(r, err);
    if (!rc)
        rc = stored_check(r, err);
    raw_free(&c);
    cJSON_Delete(root);
    free(quoted);
    if (rc) {
        fds_search_request_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* q= URL parameter: a Lucene query string (dsl_parse_qs.c) with the df,
 * default_operator and lenient parameters given before it. */
static int apply_q(fds_search_request *req, const char *value, fds_err *err)
{
    fds__dsl_ctx c = {.m = req->mapping, .err = err, .lim = &req->lim};
    fds__qs_opts o = {.df = req->q_df, .and_op = req->q_and,
                      .lenient = req->q_lenient};
    fds_query *q = fds__dsl_qs_parse(&c, value, &o);
    if (!q)
        return err && err->code ? err->code : FDS_ENOMEM;
    fds__query_free(req->query);
    req->query = q;
    return 0;
}

/* A URL boolean as Elasticsearch's RestRequest.paramAsBoolean reads it:
 * "true", "false", or empty for true.  0 or FDS_EINVAL. */
static int url_flag(const char *key, const char *value, bool *out,
                    fds_err *err)
{
    if (!*value || !strcmp(value, "true")) {
        *out = true;
        return 0;
    }
    if (!strcmp(value, "false")) {
        *out = false;
        return 0;
    }
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "Failed to parse value [%s] as only [true] or [false] "
                        "are allowed.", value);
}

/* "a,b:desc" as a JSON array of strings, or (sort) of {"b":"desc"}
 * objects where a name has an order after its last ':' (RestSearchAction's
 * reading of ?sort=).  NULL when out of memory. */
static cJSON *comma_list(const char *value, bool sort)
{
    cJSON *l = cJSON_CreateArray();
    for (const char *p = value; l && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char *one = fds__dsl_dupn(p, n);
        if (!one) {
            cJSON_Delete(l);
            return NULL;
        }
        char *colon = sort ? strrchr(one, ':') : NULL;
        cJSON *it;
        if (colon) {
            *colon = 0;
            it = cJSON_CreateObject();
            if (it && !cJSON_AddStringToObject(it, one, colon + 1)) {
                cJSON_Delete(it);
                it = NULL;
            }
        } else {
            it = cJSON_CreateString(one);
        }
        free(one);
        if (!it || !cJSON_AddItemToArray(l, it)) {
            cJSON_Delete(it);
            cJSON_Delete(l);
            return NULL;
        }
        p += n + (e ? 1 : 0);
    }
    return l;
}

/* ?_source=, ?_source_includes=, ?_source_excludes= (Elasticsearch's
 * FetchSourceContext.parseFromRestRequest): they replace the body's
 * `_source`; "true"/"false" switch it, anything else lists includes. */
static int url_source(fds_search_request *req, const char *key,
                      const char *value, fds_err *err)
{
    req->source_asked = true;
    if (!req->source_url) { /* the first one drops the body's filter */
        req->source_url = true;
        req->source = true;
        str_list_free(req->includes, req->nincludes);
        str_list_free(req->excludes, req->nexcludes);
        req->includes = req->excludes = NULL;
        req->nincludes = req->nexcludes = 0;
    }
    if (!strcmp(key, "_source") &&
        (!strcmp(value, "true") || !strcmp(value, "false"))) {
        req->source = value[0] == 't';
        return stored_check(req, err);
    }
    cJSON *l = comma_list(value, false);
    if (!l)
        return FDS_ENOMEM;
    int rc = !strcmp(key, "_source_excludes") ? str_list(l, &req->excludes, &req->nexcludes)
                           : str_list(l, &req->includes, &req->nincludes);
    cJSON_Delete(l);
    if (!rc)
        rc = source_limits(req, err);
    return rc ? rc : stored_check(req, err);
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
            if (*e || !*value)
                return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "[track_total_hits] must be true, false or "
                                    "a number, got [%s]", value);
            if (n < -1)
                return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "[track_total_hits] parameter must be "
                                    "positive or equals to -1, got %lld", n);
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
    if (!strcmp(key, "lenient"))
        return url_flag(key, value, &req->q_lenient, err);
    if (!strcmp(key, "analyze_wildcard")) {
        bool on; /* wildcard terms are always normalized by the field */
        return url_flag(key, value, &on, err);
    }
    if (!strcmp(key, "analyzer")) {
        if (strcmp(value, "standard") && strcmp(value, "default"))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[analyzer] [%s] is not supported: q= is "
                                "analyzed by each field's own analyzer "
                                "(standard)", value);
        return 0;
    }
    if (!strcmp(key, "min_score") || !strcmp(key, "docvalue_fields")) {
        cJSON *v = key[0] == 'm' ? cJSON_CreateString(value)
                                 : comma_list(value, false);
        if (!v)
            return FDS_ENOMEM;
        int rc = key[0] == 'm' ? parse_min_score(req, v, err)
                               : parse_docvalue(req, v, err);
        cJSON_Delete(v);
        return rc;
    }
    if (!strcmp(key, "timeout"))
        return parse_timeout(req, value, err);
    if (!strcmp(key, "df")) {
        if (strlen(value) >= sizeof req->q_df)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[df] is longer than a field path can be");
        snprintf(req->q_df, sizeof req->q_df, "%s", value);
        return 0;
    }
    if (!strcmp(key, "include_named_queries_score"))
        return url_flag(key, value, &req->named_scores, err);
    if (!strcmp(key, "default_operator")) {
        if (strcasecmp(value, "and") && strcasecmp(value, "or"))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Unsupported defaultOperator [%s], can either "
                                "be [OR] or [AND]", value);
        req->q_and = !strcasecmp(value, "and");
        return 0;
    }
    if (!strcmp(key, "version") || !strcmp(key, "seq_no_primary_term") ||
        !strcmp(key, "rest_total_hits_as_int") || !strcmp(key, "track_scores")) {
        bool on = false;
        int rc = url_flag(key, value, &on, err);
        if (rc)
            return rc;
        *(key[0] == 'v'   ? &req->version
          : key[0] == 's' ? &req->seq_no_primary_term
          : key[0] == 'r' ? &req->total_as_int
                          : &req->track_scores) = on;
        /* a number must be exact (RestSearchAction): counting is turned on
         * unless it was limited explicitly, which is refused */
        if (key[0] == 'r' && on && req->track_total == FDS_TRACK_TOTAL_DEFAULT)
            req->track_total = INT64_MAX;
        else if (key[0] == 'r' && on && req->track_total != INT64_MAX &&
                 req->track_total != FDS_TRACK_TOTAL_NONE)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[rest_total_hits_as_int] cannot be used if the "
                                "tracking of total hits is not accurate, got %lld",
                                (long long)req->track_total);
        return 0;
    }
    if (!strcmp(key, "_source") || !strcmp(key, "_source_includes") ||
        !strcmp(key, "_source_excludes"))
        return url_source(req, key, value, err);
    if (!strcmp(key, "stored_fields") || !strcmp(key, "sort")) {
        cJSON *l = comma_list(value, key[1] == 'o');
        if (!l)
            return FDS_ENOMEM;
        fds__dsl_ctx c = {.m = req->mapping, .err = err, .lim = &req->lim};
        int rc = key[1] == 'o' ? parse_sort(&c, req, l)
                               : parse_stored_fields(req, l, err);
        cJSON_Delete(l);
        return rc ? rc : stored_check(req, err);
    }
    return 0;
}
