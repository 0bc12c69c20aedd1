/*
 * dsl_sort.c: the order of the hits -- `sort` (fields, _score, _doc,
 * _shard_doc, unmapped_type, order, missing, a date key's format),
 * `search_after` read against
 * that sort, and the `_shard_doc` tiebreaker a point in time adds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "time/datemath.h"
#include "dsl/dsl_parse_int.h"

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

/* A sort key's `format` (Kibana's Discover sends strict_date_optional_time
 * on its time field): a date key prints its sort value in it; a field of
 * no value (unmapped, with unmapped_type) has nothing to print; other
 * types are refused as Elasticsearch refuses a format on them, numbers
 * (a DecimalFormat there) with a 400 saying so. */
static int sort_format(fds__dsl_ctx *c, fds_sort_spec *s, const char *name,
                       const cJSON *format)
{
    if (!cJSON_IsString(format))
        return fds__dsl_err(c->err, "[field_sort] format doesn't support "
                                    "values of type: %s", fds__dsl_jtype(format));
    fds_field_info fb;
    if (s->kind == FDS_SORT_FIELD && !fds__dsl_field(c, name, &fb))
        return 0; /* unmapped: every value is missing */
    if (s->kind != FDS_SORT_FIELD || s->ftype == FDS_FT_KEYWORD ||
        s->ftype == FDS_FT_BOOLEAN)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Field [%s] doesn't support formats.", name);
    if (s->ftype != FDS_FT_DATE)
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[format] in a sort is supported on date fields "
                            "only, not on [%s]", name);
    if (!fds__dsl_date_format_ok(format->valuestring))
        return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[format] in a sort: date format [%s] is not "
                            "supported", format->valuestring);
    s->format = strdup(format->valuestring);
    return s->format ? 0 : FDS_ENOMEM;
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
    const cJSON *order = NULL, *missing = NULL, *format = NULL;
    if (cJSON_IsString(opts))
        order = opts;
    else if (cJSON_IsObject(opts)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, opts) {
            if (!strcmp(it->string, "order")) order = it;
            else if (!strcmp(it->string, "missing")) missing = it;
            else if (!strcmp(it->string, "unmapped_type")) continue;
            else if (!strcmp(it->string, "format")) format = it;
            else if (!strcmp(it->string, "mode") ||
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
    return format ? sort_format(c, s, name, format) : 0;
}

int fds__dsl_sort(fds__dsl_ctx *c, fds_search_request *r, const cJSON *v)
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
            int rc = fds__dsl_sort(c, r, it);
            if (rc)
                return rc;
        }
        return 0;
    }
    return fds__dsl_err(c->err,
                        "[sort] must be a string, an object or an array");
}

/* "search_after": one value per sort key, kept as given (numbers as
 * doubles, strings as text); dates are read once the sort is known. */
int fds__dsl_search_after(fds_search_request *r, const cJSON *it, fds_err *err)
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
int fds__dsl_after_check(fds_search_request *r, fds_err *err)
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

/* Elasticsearch's implicit tiebreaker of a search with a point in time
 * (SearchRequest, since 7.12): `_shard_doc` ascending after the sort keys
 * (after `_score` when there are none), unless the sort names it; without
 * a point in time `_shard_doc` is refused as ShardDocSortField does. */
int fds__dsl_pit_tiebreak(fds_search_request *r, fds_err *err)
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
