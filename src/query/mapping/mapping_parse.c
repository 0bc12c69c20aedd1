/*
 * mapping_parse.c: explicit mappings -- the body of PUT _mapping (and of an
 * index's "mappings") merged into a mapping: field types and parameters
 * checked as Elasticsearch checks them, null_value, copy_to, index_options,
 * dynamic_date_formats, _source; a field already mapped may only be
 * restated unchanged.
 */
#include <arpa/inet.h>
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time/datemath.h"
#include "index/positions.h" /* FDS_POSITION_MAX */
#include "query_int.h"
#include "mapping/mapping_int.h"

/* ---- explicit mappings ------------------------------------------------- */

static int type_from_name(const char *t)
{
    static const struct { const char *name; int type; } tab[] = {
        {"text", FDS_FT_TEXT}, {"match_only_text", FDS_FT_TEXT},
        {"keyword", FDS_FT_KEYWORD}, {"constant_keyword", FDS_FT_KEYWORD},
        {"wildcard", FDS_FT_KEYWORD}, {"ip", FDS_FT_KEYWORD},
        {"long", FDS_FT_LONG}, {"integer", FDS_FT_LONG},
        {"short", FDS_FT_LONG}, {"byte", FDS_FT_LONG},
        {"unsigned_long", FDS_FT_LONG},
        {"double", FDS_FT_DOUBLE}, {"float", FDS_FT_DOUBLE},
        {"half_float", FDS_FT_DOUBLE}, {"scaled_float", FDS_FT_DOUBLE},
        {"date", FDS_FT_DATE}, {"boolean", FDS_FT_BOOLEAN},
        {"object", FDS_FT_OBJECT},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(tab[i].name, t) == 0)
            return tab[i].type;
    return FDS_FT_NONE;
}

static int merge_props(fds_mapping *m, const char *prefix, size_t plen,
                       cJSON *props, bool sub, fds_err *err);

/*
 * Mapping parameters a field may carry.  A parameter we apply takes any
 * valid value; one whose only value we implement is what Elasticsearch
 * does by default (`fixed`, as JSON text) is accepted with exactly that
 * value, since anything else would be accepted and not applied; others are
 * refused.  `types` is a mask of (1 << fds_ftype) the parameter belongs to.
 */
#define T(t) (1u << (t))
#define T_LEAF (T(FDS_FT_TEXT) | T(FDS_FT_KEYWORD) | T(FDS_FT_LONG) | \
                T(FDS_FT_DOUBLE) | T(FDS_FT_DATE) | T(FDS_FT_BOOLEAN))
#define T_DV (T_LEAF & ~T(FDS_FT_TEXT))
static const struct mparam {
    const char *name;
    unsigned types;
    const char *fixed; /* NULL: applied, any value */
} MPARAMS[] = {
    {"type", T_LEAF | T(FDS_FT_OBJECT), NULL},
    {"properties", T(FDS_FT_OBJECT), NULL},
    {"fields", T_LEAF, NULL},
    {"index", T_LEAF, NULL},
    {"ignore_above", T(FDS_FT_KEYWORD), NULL},
    {"doc_values", T_DV, "true"},
    {"store", T_LEAF, "false"},
    {"norms", T(FDS_FT_TEXT), "true"},
    {"norms", T(FDS_FT_KEYWORD), "false"},
    {"analyzer", T(FDS_FT_TEXT), "\"standard\""},
    {"search_analyzer", T(FDS_FT_TEXT), "\"standard\""},
    {"similarity", T(FDS_FT_TEXT) | T(FDS_FT_KEYWORD), "\"BM25\""},
    {"index_options", T(FDS_FT_TEXT), NULL},
    {"position_increment_gap", T(FDS_FT_TEXT), NULL},
    {"fielddata", T(FDS_FT_TEXT), "false"},
    {"eager_global_ordinals", T(FDS_FT_TEXT) | T(FDS_FT_KEYWORD), "false"},
    {"ignore_malformed", T(FDS_FT_LONG) | T(FDS_FT_DOUBLE) | T(FDS_FT_DATE), "false"},
    {"format", T(FDS_FT_DATE), NULL},
    {"enabled", T(FDS_FT_OBJECT), NULL},
    {"dynamic", T(FDS_FT_OBJECT), "true"},
    {"null_value", T_DV, NULL},
    {"copy_to", T_LEAF, NULL},
};
#undef T

/* Is every parameter of field `path` (type `tname`, fds_ftype `type`)
 * one we apply or its one implemented value?  0 or FDS_EINVAL, kind
 * MAPPING_PARSE, as Elasticsearch's "unknown parameter" is. */
static int check_params(const char *path, const char *tname, int type,
                        const cJSON *def, fds_err *err)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, def) {
        const struct mparam *p = NULL;
        bool named = false;
        for (size_t i = 0; i < sizeof MPARAMS / sizeof *MPARAMS && !p; i++)
            if (!strcmp(MPARAMS[i].name, it->string)) {
                named = true;
                if (MPARAMS[i].types & (1u << type))
                    p = &MPARAMS[i];
            }
        if (!p)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                "unknown parameter [%s] on mapper [%s] of type "
                                "[%s]%s", it->string, path, tname,
                                named ? "" : " (or not supported)");
        if (!p->fixed)
            continue;
        char *v = cJSON_PrintUnformatted(it);
        /* a boolean may come as a string, as Elasticsearch reads it */
        bool same = v && (!strcmp(v, p->fixed) ||
                          (cJSON_IsString(it) && !strcmp(it->valuestring, p->fixed)));
        if (!same) {
            int rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                  "[%s] of [%s] on field [%s] is not supported: "
                                  "only %s is", it->string, v ? v : "?", path,
                                  p->fixed);
            free(v);
            return rc;
        }
        free(v);
    }
    return 0;
}

/* A date field's format when its mapping names none (Elasticsearch's
 * DateFieldMapper.DEFAULT_DATE_TIME_FORMATTER). */
#define FDS_DATE_FORMAT_DEFAULT_TEXT "strict_date_optional_time||epoch_millis"

/* A field mapped again (PUT /{index}/_mapping): the parameters
 * Elasticsearch cannot update, `index` and `format`, must keep their
 * values, an absent one meaning its default as in Elasticsearch's
 * FieldMapper.Parameter merge ("Cannot update parameter [x] from [a] to
 * [b]", an illegal_argument_exception).  ignore_above may change.  0 or
 * FDS_EINVAL. */
static int check_unchanged(const fds_mfield *f, const cJSON *def, fds_err *err)
{
    const cJSON *ix = cJSON_GetObjectItemCaseSensitive(def, "index");
    bool want = ix ? !cJSON_IsFalse(ix) && !(cJSON_IsString(ix) &&
                                             !strcmp(ix->valuestring, "false"))
                   : true;
    if (want != f->index)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Mapper for [%s] conflicts with existing mapper:\n"
                            "\tCannot update parameter [index] from [%s] to "
                            "[%s]", f->path, f->index ? "true" : "false",
                            want ? "true" : "false");
    if (f->type != FDS_FT_DATE)
        return 0;
    const cJSON *fm = cJSON_GetObjectItemCaseSensitive(def, "format");
    const char *now = f->dfmt ? f->dfmt->text : FDS_DATE_FORMAT_DEFAULT_TEXT;
    const char *to = cJSON_IsString(fm) ? fm->valuestring : FDS_DATE_FORMAT_DEFAULT_TEXT;
    fds_date_format df;
    bool same = !strcmp(now, to) ||
                (!fds__date_format_parse(to, strlen(to), &df) && !f->dfmt &&
                 df.npat == 0 && df.bits == FDS_DF_DEFAULT);
    if (!same)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Mapper for [%s] conflicts with existing mapper:\n"
                            "\tCannot update parameter [format] from [%s] to "
                            "[%s]", f->path, now, to);
    return 0;
}

/* ---- null_value, copy_to, enabled ------------------------------------------ */

/* The reason Elasticsearch 8's mapper gives for a null_value of field f
 * that does not parse as its type (after "Error parsing [null_value] on
 * field [f]: "). */
static int null_value_error(const fds_mfield *f, const char *text, fds_err *err)
{
    char why[FDS_FIELD_PATH_MAX + 160];
    if (!strcmp(f->type_name, "ip"))
        snprintf(why, sizeof why, "'%s' is not an IP string literal.", text);
    else if (f->type == FDS_FT_DATE)
        snprintf(why, sizeof why, "failed to parse date field [%s] with format [%s]",
                 text, f->dfmt ? f->dfmt->text : FDS_DATE_FORMAT_DEFAULT_TEXT);
    else if (f->type == FDS_FT_BOOLEAN)
        snprintf(why, sizeof why, "Failed to parse value [%s] as only [true] or "
                 "[false] are allowed.", text);
    else
        snprintf(why, sizeof why, "For input string: \"%s\"", text);
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                        "Failed to parse mapping: Error parsing [null_value] on "
                        "field [%s]: %s", f->path, why);
}

/* Is s an IPv4 or IPv6 literal (InetAddresses.forString's forms)? */
static bool ip_literal(const char *s)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* Field f's "null_value" (a JSON scalar; null means none), parsed as f's
 * type at mapping time as Elasticsearch 8 does.  A field mapped again must
 * give the same value ("Cannot update parameter [null_value]").  0,
 * FDS_EINVAL (err) or FDS_ENOMEM. */
static int parse_null_value(fds_mapping *m, fds_mfield *f, const cJSON *nv,
                            bool existed, fds_err *err)
{
    char *text = NULL;
    int kind = FDS_JV_STRING;
    if (cJSON_IsNull(nv)) {
        /* none */
    } else if (cJSON_IsString(nv)) {
        text = strdup(nv->valuestring);
    } else if (cJSON_IsBool(nv)) {
        kind = cJSON_IsTrue(nv) ? FDS_JV_TRUE : FDS_JV_FALSE;
        text = strdup(cJSON_IsTrue(nv) ? "true" : "false");
    } else if (cJSON_IsNumber(nv)) {
        kind = FDS_JV_NUMBER;
        text = cJSON_PrintUnformatted(nv);
    } else {
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "Failed to parse mapping: Error parsing [null_value] "
                            "on field [%s]: a null_value is a string, a number "
                            "or a boolean", f->path);
    }
    if (!cJSON_IsNull(nv) && !text)
        return FDS_ENOMEM;
    if (f->type == FDS_FT_KEYWORD && kind != FDS_JV_STRING)
        kind = FDS_JV_STRING; /* a keyword reads any scalar as its text */
    int rc = 0;
    if (text) {
        fds_jval v = {kind, f->path, f->path_len, text, strlen(text), 0, false, false};
        bool ok = !strcmp(f->type_name, "ip") ? ip_literal(text)
                                               : fds__value_check(f, &v, NULL) == 0;
        if (!ok)
            rc = null_value_error(f, text, err);
    }
    bool same = (!text && !f->null_text) ||
                (text && f->null_text && !strcmp(text, f->null_text));
    if (!rc && existed && !same)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                          "Mapper for [%s] conflicts with existing mapper:\n"
                          "\tCannot update parameter [null_value] from [%s] to "
                          "[%s]", f->path, f->null_text ? f->null_text : "null",
                          text ? text : "null");
    if (rc || existed) {
        free(text);
        return rc;
    }
    f->null_text = text;
    f->null_len = text ? strlen(text) : 0;
    f->null_kind = kind;
    if (text)
        m->nvalue_params++;
    return 0;
}

/* Field f's "copy_to": a field path or a list of them.  A field mapped
 * again must name the same list (the readers of fds__doc_scan take it
 * without the lock).  0, FDS_EINVAL (err) or FDS_ENOMEM. */
static int parse_copy_to(fds_mapping *m, fds_mfield *f, const cJSON *ct, bool sub,
                         bool existed, fds_err *err)
{
    if (sub)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "copy_to in multi fields is not allowed. Found the "
                            "copy_to in field [%s] which is within a multi "
                            "field.", f->path + (f->parent ? f->parent->path_len + 1 : 0));
    int n = cJSON_IsString(ct) ? 1 : cJSON_IsArray(ct) ? cJSON_GetArraySize(ct) : -1;
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_IsString(ct) ? ct : cJSON_GetArrayItem(ct, i);
        if (!cJSON_IsString(e) || !e->valuestring[0] ||
            strlen(e->valuestring) >= FDS_FIELD_PATH_MAX)
            n = -1;
    }
    if (n < 0 || n > (int)FDS_COPY_TO_MAX)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "Failed to parse mapping: [copy_to] on field [%s] "
                            "must be a field name or a list of at most %u",
                            f->path, FDS_COPY_TO_MAX);
    if (existed) {
        bool same = (unsigned)n == f->ncopy;
        for (int i = 0; same && i < n; i++) {
            const cJSON *e = cJSON_IsString(ct) ? ct : cJSON_GetArrayItem(ct, i);
            same = !strcmp(e->valuestring, f->copy_to[i]);
        }
        if (!same)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Mapper for [%s] conflicts with existing "
                                "mapper:\n\tCannot update parameter [copy_to]",
                                f->path);
        return 0;
    }
    char **list = n ? calloc((size_t)n, sizeof *list) : NULL;
    if (n && !list)
        return FDS_ENOMEM;
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_IsString(ct) ? ct : cJSON_GetArrayItem(ct, i);
        if (!(list[i] = strdup(e->valuestring))) {
            while (i)
                free(list[--i]);
            free(list);
            return FDS_ENOMEM;
        }
    }
    f->copy_to = list;
    f->ncopy = (unsigned)n;
    if (n)
        m->nvalue_params++;
    return 0;
}

/* After a merge: every copy_to target that is mapped is a field with
 * values, not an object or a multi-field (Elasticsearch's
 * FieldMapper.validate).  Caller holds the write lock. */
static int check_copy_targets(const fds_mapping *m, fds_err *err)
{
    for (size_t i = 0; i < m->nfields; i++) {
        const fds_mfield *f = m->fields[i];
        for (unsigned k = 0; k < f->ncopy; k++) {
            const fds_mfield *t = fds__mapping_find(m, f->copy_to[k],
                                                    strlen(f->copy_to[k]));
            if (t && t->is_subfield)
                return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "[copy_to] may not be used to copy to a "
                                    "multi-field: [%s]", t->path);
            if (t && t->type == FDS_FT_OBJECT)
                return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "Cannot copy to field [%s] since it is "
                                    "mapped as an object", t->path);
        }
    }
    return 0;
}

/* A boolean mapping parameter (true, false, or their strings): 1, 0, or
 * -1 when it is neither. */
static int bool_param(const cJSON *v)
{
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v);
    if (cJSON_IsString(v) && !strcmp(v->valuestring, "true"))
        return 1;
    if (cJSON_IsString(v) && !strcmp(v->valuestring, "false"))
        return 0;
    return -1;
}


/* A text field's "index_options" into *io (FDS_IO_POSITIONS when absent).
 * Elasticsearch's values are docs, freqs, positions and offsets; offsets
 * (which a highlighter reads instead of re-analysing) is refused, not kept
 * and ignored.  0 or FDS_EINVAL (kind MAPPING_PARSE, Elasticsearch's
 * words for an unknown value). */
static int parse_index_options(const char *path, const cJSON *def, int *io,
                               fds_err *err)
{
    *io = FDS_IO_POSITIONS;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(def, "index_options");
    if (!v)
        return 0;
    const char *s = cJSON_IsString(v) ? v->valuestring : "";
    for (int i = 0; i < (int)(sizeof fds__index_options / sizeof *fds__index_options); i++)
        if (!strcmp(s, fds__index_options[i])) {
            *io = i;
            return 0;
        }
    if (!strcmp(s, "offsets"))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "[index_options] of [\"offsets\"] on field [%s] is "
                            "not supported: only \"docs\", \"freqs\" and "
                            "\"positions\" are", path);
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                        "Unknown value [%s] for field [index_options] - "
                        "accepted values are [positions, docs, freqs, offsets]",
                        s);
}

/* A text field's "position_increment_gap" into *gap (the default when
 * absent): a non-negative integer, and only with positions, as
 * Elasticsearch's TextFieldMapper checks.  0 or FDS_EINVAL. */
static int parse_pos_gap(const char *path, const cJSON *def, int io,
                         uint32_t *gap, fds_err *err)
{
    *gap = FDS_POSITION_INCREMENT_GAP;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(def, "position_increment_gap");
    if (!v)
        return 0;
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    if (d < 0 || d > (double)FDS_POSITION_MAX || d != floor(d)) {
        char got[32] = "?";
        if (cJSON_IsNumber(v))
            snprintf(got, sizeof got, "%g", v->valuedouble);
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "[position_increment_gap] on field [%s] must be a "
                            "non-negative integer, got [%s]", path,
                            cJSON_IsString(v) ? v->valuestring : got);
    }
    if (io != FDS_IO_POSITIONS)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "Cannot set position_increment_gap on field [%s] "
                            "without positions enabled", path);
    *gap = (uint32_t)d;
    return 0;
}

/* May field f (NULL: not mapped yet) at `path` be restated with type
 * `type` / `tname`, index_options io, position_increment_gap gap and the
 * other parameters of def?  0, or FDS_EINVAL with Elasticsearch's
 * conflict message. */
static int check_update(const fds_mfield *f, const char *path, int type,
                        const char *tname, int io, uint32_t gap,
                        const cJSON *def, fds_err *err)
{
    if (!f)
        return 0;
    if (type == FDS_FT_TEXT && f->index_options != io)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Mapper for [%s] conflicts with existing mapper:\n"
                            "\tCannot update parameter [index_options] from "
                            "[%s] to [%s]", path,
                            fds__index_options[f->index_options], fds__index_options[io]);
    if (type == FDS_FT_TEXT && f->pos_gap != gap)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Mapper for [%s] conflicts with existing mapper:\n"
                            "\tCannot update parameter [position_increment_gap] "
                            "from [%u] to [%u]", path, f->pos_gap, gap);
    if (f->type != type || strcmp(f->type_name, tname))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "mapper [%s] cannot be changed from type [%s] to "
                            "[%s]", path, f->type_name, tname);
    if (type != FDS_FT_OBJECT)
        return check_unchanged(f, def, err);
    return 0;
}

/* An object's "enabled" (en) onto f (`existed`: mapped before this
 * request, when the value may not change).  0 or FDS_EINVAL. */
static int parse_enabled(fds_mapping *m, fds_mfield *f, const cJSON *en,
                         bool existed, fds_err *err)
{
    int on = bool_param(en);
    if (on < 0)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "Failed to parse mapping: [enabled] on field [%s] "
                            "must be a boolean", f->path);
    if (existed && (bool)!on != f->disabled)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "the [enabled] parameter can't be updated for "
                            "the object mapping [%s]", f->path);
    if (!on && !f->disabled) {
        f->disabled = true;
        m->ndisabled++;
    }
    return 0;
}

/* A date field's "format" (fm) onto f (NULL dfmt: the default).  0,
 * FDS_EINVAL, FDS_ENOMEM. */
static int parse_date_format(fds_mfield *f, const cJSON *fm, fds_err *err)
{
    fds_date_format df;
    if (!cJSON_IsString(fm) ||
        fds__date_format_parse(fm->valuestring, strlen(fm->valuestring), &df))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "Invalid format: [%s]: a date format is named "
                            "formats (strict_date_optional_time, "
                            "epoch_millis, ...) or patterns of y M d H m s "
                            "S Z letters joined by ||",
                            cJSON_IsString(fm) ? fm->valuestring : "?");
    bool is_default = df.npat == 0 && df.bits == FDS_DF_DEFAULT;
    if (!is_default && !f->dfmt && !(f->dfmt = malloc(sizeof *f->dfmt)))
        return FDS_ENOMEM;
    if (is_default) {
        free(f->dfmt);
        f->dfmt = NULL;
    } else {
        *f->dfmt = df;
    }
    return 0;
}

static int merge_field(fds_mapping *m, const char *path, size_t len,
                       cJSON *def, bool sub, fds_err *err)
{
    if (!cJSON_IsObject(def))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_MAPPING_PARSE,
                            "Expected map for property [fields] on field [%s] "
                            "but got a class java.lang.String", path);
    cJSON *jt = cJSON_GetObjectItemCaseSensitive(def, "type");
    cJSON *props = cJSON_GetObjectItemCaseSensitive(def, "properties");
    const char *tname = cJSON_IsString(jt) ? jt->valuestring
                                           : (props ? "object" : NULL);
    if (!tname)
        tname = "object";
    int type = type_from_name(tname);
    if (type == FDS_FT_NONE)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "No handler for type [%s] declared on field [%s]",
                            tname, path);
    int prc = check_params(path, tname, type, def, err);
    int io = FDS_IO_POSITIONS;
    uint32_t gap = FDS_POSITION_INCREMENT_GAP;
    if (!prc && type == FDS_FT_TEXT)
        prc = parse_index_options(path, def, &io, err);
    if (!prc && type == FDS_FT_TEXT)
        prc = parse_pos_gap(path, def, io, &gap, err);
    if (prc)
        return prc;
    fds_mfield *f = fds__mapping_find(m, path, len);
    int crc = check_update(f, path, type, tname, io, gap, def, err);
    if (crc)
        return crc;
    bool existed = f != NULL;
    if (!f) {
        f = fds__mapping_add(m, path, len, type, tname);
        if (!f)
            return FDS_ENOMEM;
        f->is_subfield = sub;
        f->index_options = (uint8_t)io;
        f->pos_gap = gap;
        if (sub && f->parent)
            f->parent->has_subs = true;
    }
    cJSON *en = cJSON_GetObjectItemCaseSensitive(def, "enabled");
    if (en) {
        int rc = parse_enabled(m, f, en, existed, err);
        if (rc)
            return rc;
    }
    cJSON *ia = cJSON_GetObjectItemCaseSensitive(def, "ignore_above");
    if (ia) {
        if (!cJSON_IsNumber(ia) || ia->valuedouble < 0 ||
            ia->valuedouble > 2147483647.0 || ia->valuedouble != floor(ia->valuedouble))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                "Failed to parse mapping: [ignore_above] on field "
                                "[%s] must be a non-negative integer", path);
        f->ignore_above = (int)ia->valuedouble;
    }
    cJSON *fm = cJSON_GetObjectItemCaseSensitive(def, "format");
    if (fm) {
        int rc = parse_date_format(f, fm, err);
        if (rc)
            return rc;
    }
    cJSON *ix = cJSON_GetObjectItemCaseSensitive(def, "index");
    if (cJSON_IsBool(ix))
        f->index = cJSON_IsTrue(ix);
    cJSON *nv = cJSON_GetObjectItemCaseSensitive(def, "null_value");
    if (nv) {
        int rc = parse_null_value(m, f, nv, existed, err);
        if (rc)
            return rc;
    }
    cJSON *ct = cJSON_GetObjectItemCaseSensitive(def, "copy_to");
    if (ct) {
        int rc = parse_copy_to(m, f, ct, sub, existed, err);
        if (rc)
            return rc;
    }
    if (props) {
        if (type != FDS_FT_OBJECT)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                "field [%s] of type [%s] cannot have properties",
                                path, tname);
        int rc = merge_props(m, path, len, props, false, err);
        if (rc)
            return rc;
    }
    cJSON *fields = cJSON_GetObjectItemCaseSensitive(def, "fields");
    if (fields) {
        int rc = merge_props(m, path, len, fields, true, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int merge_props(fds_mapping *m, const char *prefix, size_t plen,
                       cJSON *props, bool sub, fds_err *err)
{
    if (!cJSON_IsObject(props))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_MAPPING_PARSE,
                            "Expected map for property [%s] on field [%s]",
                            sub ? "fields" : "properties",
                            plen ? prefix : "_doc");
    cJSON *it;
    cJSON_ArrayForEach(it, props) {
        char path[FDS_FIELD_PATH_MAX];
        size_t kl = strlen(it->string);
        if (kl == 0 || plen + 1 + kl >= sizeof path)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                "field name cannot be empty or too long");
        size_t n = 0;
        if (plen) {
            memcpy(path, prefix, plen);
            path[plen] = '.';
            n = plen + 1;
        }
        memcpy(path + n, it->string, kl);
        n += kl;
        path[n] = 0;
        int rc = merge_field(m, path, n, it, sub, err);
        if (rc)
            return rc;
    }
    return 0;
}
/* Root "dynamic_date_formats": a list of date formats (or one string),
 * each read by fds__date_format_parse, at most
 * FDS_DYNAMIC_DATE_FORMATS_MAX.  *out is malloc'd (NULL for an empty list,
 * which turns detection of dates off as Elasticsearch's empty list does),
 * *n their number.  0 or FDS_EINVAL (err) / FDS_ENOMEM. */
static int parse_dynamic_date_formats(const cJSON *v, fds_date_format **out,
                                      int *n, fds_err *err)
{
    int cnt = cJSON_IsString(v) ? 1 : cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (cnt < 0 || cnt > (int)FDS_DYNAMIC_DATE_FORMATS_MAX)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "[dynamic_date_formats] must be a string or a list "
                            "of at most %u date formats",
                            FDS_DYNAMIC_DATE_FORMATS_MAX);
    *out = cnt ? calloc((size_t)cnt, sizeof **out) : NULL;
    if (cnt && !*out)
        return FDS_ENOMEM;
    for (int i = 0; i < cnt; i++) {
        const cJSON *e = cJSON_IsString(v) ? v : cJSON_GetArrayItem(v, i);
        if (!cJSON_IsString(e) ||
            fds__date_format_parse(e->valuestring, strlen(e->valuestring),
                                   &(*out)[i])) {
            free(*out);
            *out = NULL;
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                "Invalid format: [%s] in [dynamic_date_formats]",
                                cJSON_IsString(e) ? e->valuestring : "?");
        }
    }
    *n = cnt;
    return 0;
}


/* The root's "_source": {"enabled": bool} (*enabled = 1 or 0).  Its
 * includes, excludes and mode are refused: we keep a source whole or not
 * at all.  In a sealed mapping enabled cannot change (Elasticsearch's
 * SourceFieldMapper: "Cannot update parameter [enabled]").  0 or
 * FDS_EINVAL (err). */
static int parse_source(const fds_mapping *m, const cJSON *v, int *enabled,
                        fds_err *err)
{
    if (!cJSON_IsObject(v))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                            "Failed to parse mapping: [_source] must be an object");
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (strcmp(it->string, "enabled"))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                "[_source] parameter [%s] is not supported: a "
                                "source is kept whole (enabled: true) or not at "
                                "all (enabled: false)", it->string);
        int on = bool_param(it);
        if (on < 0)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                "Failed to parse mapping: [_source.enabled] must "
                                "be a boolean");
        if ((bool)!on != m->source_disabled && m->sealed)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Mapper for [_source] conflicts with existing "
                                "mapper:\n\tCannot update parameter [enabled] "
                                "from [%s] to [%s]",
                                m->source_disabled ? "false" : "true",
                                on ? "true" : "false");
        *enabled = on;
    }
    return 0;
}

int fds_mapping_merge_json(fds_mapping *m, const char *json, size_t len,
                           fds_err *err)
{
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_MAPPING_PARSE,
                            "Failed to parse mapping: malformed JSON");
    }
    cJSON *body = root;
    cJSON *mp = cJSON_GetObjectItemCaseSensitive(root, "mappings");
    if (cJSON_IsObject(mp))
        body = mp;
    cJSON *doc = cJSON_GetObjectItemCaseSensitive(body, "_doc");
    if (cJSON_IsObject(doc))
        body = doc;
    int rc = 0;
    cJSON *props = cJSON_GetObjectItemCaseSensitive(body, "properties");
    cJSON *it;
    /* the root's parameters: properties, dynamic and date_detection
     * (applied), and the others with the one value we implement */
    static const char *const root_fixed[][2] = {{"numeric_detection", "false"}};
    enum { NFIXED = sizeof root_fixed / sizeof *root_fixed };
    int dynamic = -1, dates = -1, source = -1, enabled = -1;
    fds_date_format *ddf = NULL;
    int nddf = -1;
    cJSON_ArrayForEach(it, body) {
        const char *k = it->string;
        if (!strcmp(k, "properties"))
            continue;
        if (!strcmp(k, "dynamic_date_formats")) {
            free(ddf);
            ddf = NULL;
            rc = parse_dynamic_date_formats(it, &ddf, &nddf, err);
            if (rc)
                break;
            continue;
        }
        if (!strcmp(k, "_source")) {
            rc = parse_source(m, it, &source, err);
        } else if (!strcmp(k, "enabled")) {
            enabled = bool_param(it);
            if (enabled < 0 || (m->sealed && (bool)!enabled != m->root_disabled))
                rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                  enabled < 0 ? "Failed to parse mapping: [enabled] "
                                                "must be a boolean"
                                              : "the [enabled] parameter can't be "
                                                "updated for the object mapping "
                                                "[_doc]");
        } else if (!strcmp(k, "dynamic")) {
            const char *v = cJSON_IsString(it) ? it->valuestring : NULL;
            if (cJSON_IsTrue(it) || (v && !strcmp(v, "true")))
                dynamic = FDS_DYNAMIC_TRUE;
            else if (cJSON_IsFalse(it) || (v && !strcmp(v, "false")))
                dynamic = FDS_DYNAMIC_FALSE;
            else if (v && !strcmp(v, "strict"))
                dynamic = FDS_DYNAMIC_STRICT;
            else
                rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                  "[dynamic] must be true, false or strict%s",
                                  v && !strcmp(v, "runtime")
                                      ? " (runtime fields are not supported)"
                                      : "");
        } else if (!strcmp(k, "date_detection")) {
            const char *v = cJSON_IsString(it) ? it->valuestring : NULL;
            if (cJSON_IsBool(it))
                dates = cJSON_IsTrue(it);
            else if (v && (!strcmp(v, "true") || !strcmp(v, "false")))
                dates = v[0] == 't';
            else
                rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                  "[date_detection] must be a boolean");
        } else {
            size_t j = 0;
            while (j < NFIXED && strcmp(k, root_fixed[j][0]))
                j++;
            char *v = j < NFIXED ? cJSON_PrintUnformatted(it) : NULL;
            bool same = v && !strcmp(v, root_fixed[j][1]);
            if (j == NFIXED)
                rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                  "Root mapping definition has unsupported "
                                  "parameters:  [%s]", k);
            else if (!same)
                rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                  "[%s] of [%s] in the root mapping is not "
                                  "supported: only %s is", k, v ? v : "?",
                                  root_fixed[j][1]);
            free(v);
        }
        if (rc)
            break;
    }
    pthread_rwlock_wrlock(&m->lock);
    if (!rc && props)
        rc = merge_props(m, "", 0, props, false, err);
    if (!rc && dynamic >= 0)
        m->dynamic = dynamic;
    if (!rc && dates >= 0)
        m->no_date_detection = !dates;
    if (!rc && source >= 0)
        m->source_disabled = !source;
    if (!rc && enabled >= 0)
        m->root_disabled = !enabled;
    if (!rc)
        rc = check_copy_targets(m, err);
    if (!rc && nddf >= 0) {
        free(m->ddf);
        m->ddf = ddf;
        m->nddf = (unsigned)nddf;
        m->ddf_set = true;
        ddf = NULL;
    }
    pthread_rwlock_unlock(&m->lock);
    free(ddf);
    cJSON_Delete(root);
    return rc;
}
