/*
 * mapping.c: Elasticsearch-style field mappings (explicit and dynamic) and
 * document validation.
 *
 * A mapping is a flat list of fields keyed by full dotted path ("url",
 * "url.keyword", "geo.lat"); objects are fields of type object and
 * multi-fields ("fields": {"keyword": ...}) are flagged sub-fields.  The list
 * only grows (Elasticsearch never changes a field's type), so field pointers
 * stay valid for the mapping's life and readers may cache them.  A rwlock
 * guards the list: writers extend it while searches and validation read.
 *
 * Dynamic rules (Elasticsearch defaults): strings that parse as
 * strict_date_optional_time -> date, other strings -> text with a keyword
 * sub-field (ignore_above 256), integers -> long, other numbers -> float,
 * booleans -> boolean, objects -> object; null adds nothing.
 */
#include <arpa/inet.h>
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_hash.h"
#include "time/datemath.h"
#include "index/positions.h" /* FDS_POSITION_MAX */
#include "query_int.h"

static void mfield_free(fds_mfield *f)
{
    free(f->path);
    free(f->dfmt);
    free(f->null_text);
    for (unsigned i = 0; i < f->ncopy; i++)
        free(f->copy_to[i]);
    free(f->copy_to);
    free(f);
}

fds_mapping *fds_mapping_create(void)
{
    fds_mapping *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    pthread_rwlock_init(&m->lock, NULL);
    return m;
}

void fds_mapping_free(fds_mapping *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nfields; i++)
        mfield_free(m->fields[i]);
    free(m->fields);
    free(m->hash);
    free(m->ddf);
    pthread_rwlock_destroy(&m->lock);
    free(m);
}

fds_mfield *fds__mapping_find(const fds_mapping *m, const char *path,
                              size_t len)
{
    if (!m->hash_cap)
        return NULL;
    size_t mask = m->hash_cap - 1;
    for (size_t i = fds_fnv1a64(path, len) & mask;; i = (i + 1) & mask) {
        uint32_t e = m->hash[i];
        if (!e)
            return NULL;
        fds_mfield *f = m->fields[e - 1];
        if (f->path_len == len && memcmp(f->path, path, len) == 0)
            return f;
    }
}

fds_mfield *fds__mapping_find_locked(const fds_mapping *m, const char *path,
                                     size_t len)
{
    fds_mapping *mm = (fds_mapping *)m;
    pthread_rwlock_rdlock(&mm->lock);
    fds_mfield *f = fds__mapping_find(m, path, len);
    pthread_rwlock_unlock(&mm->lock);
    return f;
}

const fds_mfield *fds__mapping_keyword_sub(const fds_mapping *m,
                                           const char *path, size_t len)
{
    fds_mapping *mm = (fds_mapping *)m;
    const fds_mfield *k = NULL;
    pthread_rwlock_rdlock(&mm->lock);
    const fds_mfield *t = fds__mapping_find(m, path, len);
    for (size_t i = 0; t && t->type == FDS_FT_TEXT && t->has_subs &&
                       i < m->nfields && !k; i++) {
        const fds_mfield *f = m->fields[i];
        if (f->is_subfield && f->parent == t && f->type == FDS_FT_KEYWORD)
            k = f;
    }
    pthread_rwlock_unlock(&mm->lock);
    return k;
}

int fds_mapping_field(const fds_mapping *m, const char *path, size_t len,
                      fds_field_info *out)
{
    const fds_mfield *f = fds__mapping_find_locked(m, path, len);
    if (!f)
        return FDS_ENOTFOUND;
    out->path = f->path;
    out->path_len = f->path_len;
    out->type = f->type;
    out->index = f->index;
    out->index_options = f->index_options;
    out->float32 = fds__round_ftype(f, 0.1) != 0.1; /* float, half_float */
    out->date_format = f->dfmt;
    return 0;
}

int fds_mapping_fields_of_type(const fds_mapping *m, int type, char ***out,
                               size_t *n)
{
    fds_mapping *mm = (fds_mapping *)m;
    *out = NULL;
    *n = 0;
    pthread_rwlock_rdlock(&mm->lock);
    size_t nf = m->nfields, k = 0;
    char **names = calloc(nf ? nf : 1, sizeof *names);
    for (size_t i = 0; names && i < nf; i++) {
        if (m->fields[i]->type != type)
            continue;
        if (!(names[k] = strdup(m->fields[i]->path))) {
            while (k)
                free(names[--k]);
            free(names);
            names = NULL;
        } else {
            k++;
        }
    }
    pthread_rwlock_unlock(&mm->lock);
    if (!names)
        return FDS_ENOMEM;
    *out = names;
    *n = k;
    return 0;
}

static int rehash(fds_mapping *m, size_t cap)
{
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return FDS_ENOMEM;
    for (size_t k = 0; k < m->nfields; k++) {
        fds_mfield *f = m->fields[k];
        size_t i = fds_fnv1a64(f->path, f->path_len) & (cap - 1);
        while (h[i])
            i = (i + 1) & (cap - 1);
        h[i] = (uint32_t)k + 1;
    }
    free(m->hash);
    m->hash = h;
    m->hash_cap = cap;
    return 0;
}

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

static fds_mfield *parent_of(fds_mapping *m, const char *path, size_t len)
{
    size_t k = len;
    while (k > 0 && path[k - 1] != '.')
        k--;
    if (k == 0)
        return NULL;
    return fds__mapping_find(m, path, k - 1);
}

fds_mfield *fds__mapping_add(fds_mapping *m, const char *path, size_t len,
                             int type, const char *type_name)
{
    /* make sure object parents exist ("a.b" given first creates "a") */
    for (size_t k = 0; k < len; k++) {
        if (path[k] == '.' && !fds__mapping_find(m, path, k))
            if (!fds__mapping_add(m, path, k, FDS_FT_OBJECT, "object"))
                return NULL;
    }
    if (m->nfields == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 32;
        fds_mfield **nf = realloc(m->fields, nc * sizeof *nf);
        if (!nf)
            return NULL;
        m->fields = nf;
        m->cap = nc;
    }
    fds_mfield *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->path = malloc(len + 1);
    if (!f->path) {
        free(f);
        return NULL;
    }
    memcpy(f->path, path, len);
    f->path[len] = 0;
    f->path_len = len;
    f->type = type;
    snprintf(f->type_name, sizeof f->type_name, "%s", type_name);
    f->index = true;
    f->pos_gap = FDS_POSITION_INCREMENT_GAP;
    f->parent = parent_of(m, path, len);
    if (f->parent && f->parent->type != FDS_FT_OBJECT)
        f->is_subfield = f->parent->has_subs = true;
    m->fields[m->nfields++] = f;
    if (m->nfields * 2 > m->hash_cap &&
        rehash(m, m->hash_cap ? m->hash_cap * 2 : 64)) {
        m->nfields--;
        free(f->path);
        free(f);
        return NULL;
    }
    if (m->hash_cap && m->nfields * 2 <= m->hash_cap) {
        size_t i = fds_fnv1a64(path, len) & (m->hash_cap - 1);
        while (m->hash[i] && m->hash[i] != m->nfields)
            i = (i + 1) & (m->hash_cap - 1);
        m->hash[i] = (uint32_t)m->nfields;
    }
    return f;
}

/* ---- explicit mappings ------------------------------------------------- */

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

/* Names of fds_index_options values (query.h), as Elasticsearch writes
 * them. */
static const char *const INDEX_OPTIONS[] = {"positions", "docs", "freqs"};

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
    for (int i = 0; i < (int)(sizeof INDEX_OPTIONS / sizeof *INDEX_OPTIONS); i++)
        if (!strcmp(s, INDEX_OPTIONS[i])) {
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
    if (f && type == FDS_FT_TEXT && f->index_options != io)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Mapper for [%s] conflicts with existing mapper:\n"
                            "\tCannot update parameter [index_options] from "
                            "[%s] to [%s]", path,
                            INDEX_OPTIONS[f->index_options], INDEX_OPTIONS[io]);
    if (f && type == FDS_FT_TEXT && f->pos_gap != gap)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Mapper for [%s] conflicts with existing mapper:\n"
                            "\tCannot update parameter [position_increment_gap] "
                            "from [%u] to [%u]", path, f->pos_gap, gap);
    if (f && (f->type != type || strcmp(f->type_name, tname)))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "mapper [%s] cannot be changed from type [%s] to "
                            "[%s]", path, f->type_name, tname);
    if (f && type != FDS_FT_OBJECT) {
        int crc = check_unchanged(f, def, err);
        if (crc)
            return crc;
    }
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
        int on = bool_param(en);
        if (on < 0)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                "Failed to parse mapping: [enabled] on field [%s] "
                                "must be a boolean", path);
        if (existed && (bool)!on != f->disabled)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_MAPPING_PARSE,
                                "the [enabled] parameter can't be updated for "
                                "the object mapping [%s]", path);
        if (!on && !f->disabled) {
            f->disabled = true;
            m->ndisabled++;
        }
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

/* ---- to JSON ------------------------------------------------------------ */

static int name_cmp(const void *a, const void *b)
{
    const fds_mfield *x = *(fds_mfield *const *)a, *y = *(fds_mfield *const *)b;
    return strcmp(x->path, y->path);
}

static cJSON *field_json(const fds_mapping *m, fds_mfield **sorted, size_t n,
                         const fds_mfield *f);

static void add_children(const fds_mapping *m, fds_mfield **sorted, size_t n,
                         const fds_mfield *parent, bool sub, cJSON *into)
{
    for (size_t i = 0; i < n; i++) {
        fds_mfield *c = sorted[i];
        if (c->parent != parent || c->is_subfield != sub)
            continue;
        const char *name = parent ? c->path + parent->path_len + 1 : c->path;
        cJSON *j = field_json(m, sorted, n, c);
        if (j)
            cJSON_AddItemToObject(into, name, j);
    }
}

static cJSON *field_json(const fds_mapping *m, fds_mfield **sorted, size_t n,
                         const fds_mfield *f)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    bool kids = false;
    for (size_t i = 0; i < n && !kids; i++)
        kids = sorted[i]->parent == f && !sorted[i]->is_subfield;
    if (f->type == FDS_FT_OBJECT) {
        /* Elasticsearch's ObjectMapper names the type of an object
         * without properties only */
        if (f->disabled && !kids)
            cJSON_AddStringToObject(o, "type", "object");
        if (f->disabled)
            cJSON_AddFalseToObject(o, "enabled");
        if (!f->disabled || kids) {
            cJSON *p = cJSON_AddObjectToObject(o, "properties");
            add_children(m, sorted, n, f, false, p);
        }
        return o;
    }
    cJSON_AddStringToObject(o, "type", f->type_name);
    if (f->ignore_above)
        cJSON_AddNumberToObject(o, "ignore_above", f->ignore_above);
    if (f->dfmt)
        cJSON_AddStringToObject(o, "format", f->dfmt->text);
    if (!f->index)
        cJSON_AddBoolToObject(o, "index", false);
    if (f->null_text) {
        cJSON *nv = f->null_kind == FDS_JV_NUMBER ? cJSON_CreateRaw(f->null_text)
                  : f->null_kind == FDS_JV_STRING ? cJSON_CreateString(f->null_text)
                  : cJSON_CreateBool(f->null_kind == FDS_JV_TRUE);
        cJSON_AddItemToObject(o, "null_value", nv);
    }
    if (f->ncopy) {
        cJSON *ct = cJSON_AddArrayToObject(o, "copy_to");
        for (unsigned i = 0; ct && i < f->ncopy; i++)
            cJSON_AddItemToArray(ct, cJSON_CreateString(f->copy_to[i]));
    }
    if (f->type == FDS_FT_TEXT && f->index_options != FDS_IO_POSITIONS)
        cJSON_AddStringToObject(o, "index_options",
                                INDEX_OPTIONS[f->index_options]);
    if (f->type == FDS_FT_TEXT && f->pos_gap != FDS_POSITION_INCREMENT_GAP)
        cJSON_AddNumberToObject(o, "position_increment_gap", f->pos_gap);
    bool any = false;
    for (size_t i = 0; i < n; i++)
        if (sorted[i]->parent == f && sorted[i]->is_subfield)
            any = true;
    if (any) {
        cJSON *fs = cJSON_AddObjectToObject(o, "fields");
        add_children(m, sorted, n, f, true, fs);
    }
    return o;
}

char *fds_mapping_to_json(const fds_mapping *m)
{
    fds_mapping *mm = (fds_mapping *)m;
    pthread_rwlock_rdlock(&mm->lock);
    size_t n = m->nfields;
    fds_mfield **sorted = malloc((n ? n : 1) * sizeof *sorted);
    char *out = NULL;
    if (sorted) {
        if (n)
            memcpy(sorted, m->fields, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, name_cmp);
        cJSON *root = cJSON_CreateObject();
        if (root) {
            if (m->dynamic != FDS_DYNAMIC_TRUE)
                cJSON_AddStringToObject(root, "dynamic",
                                        m->dynamic == FDS_DYNAMIC_STRICT ? "strict"
                                                                         : "false");
            if (m->no_date_detection)
                cJSON_AddFalseToObject(root, "date_detection");
            if (m->root_disabled)
                cJSON_AddFalseToObject(root, "enabled");
            if (m->source_disabled) {
                cJSON *so = cJSON_AddObjectToObject(root, "_source");
                cJSON_AddFalseToObject(so, "enabled");
            }
            if (m->ddf_set) {
                cJSON *a = cJSON_AddArrayToObject(root, "dynamic_date_formats");
                for (unsigned i = 0; a && i < m->nddf; i++)
                    cJSON_AddItemToArray(a, cJSON_CreateString(m->ddf[i].text));
            }
            if (n) {
                cJSON *p = cJSON_AddObjectToObject(root, "properties");
                add_children(m, sorted, n, NULL, false, p);
            }
            out = cJSON_PrintUnformatted(root);
            cJSON_Delete(root);
        }
        free(sorted);
    }
    pthread_rwlock_unlock(&mm->lock);
    return out;
}

/* ---- values against a field ---------------------------------------------- */


int fds__value_check(const fds_mfield *f, const fds_jval *v, fds__conv *out)
{
    switch (f->type) {
    case FDS_FT_OBJECT:
        return v->kind == FDS_JV_OBJECT || v->kind == FDS_JV_ARRAY ||
                       v->kind == FDS_JV_NULL ? 0 : FDS_EINVAL;
    case FDS_FT_TEXT:
    case FDS_FT_KEYWORD:
        return v->kind == FDS_JV_OBJECT ? FDS_EINVAL : 0;
    case FDS_FT_LONG: {
        if (v->kind != FDS_JV_NUMBER && v->kind != FDS_JV_STRING)
            return v->kind == FDS_JV_NULL || v->kind == FDS_JV_ARRAY
                       ? 0 : FDS_EINVAL;
        int64_t x;
        int rc = fds__parse_long(v->str, v->str_len, true, &x);
        if (rc)
            return rc;
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        if (strcmp(f->type_name, "integer") == 0) { lo = INT32_MIN; hi = INT32_MAX; }
        else if (strcmp(f->type_name, "short") == 0) { lo = INT16_MIN; hi = INT16_MAX; }
        else if (strcmp(f->type_name, "byte") == 0) { lo = INT8_MIN; hi = INT8_MAX; }
        if (x < lo || x > hi)
            return FDS_ERANGE;
        if (out)
            out->l = x;
        return 0;
    }
    case FDS_FT_DOUBLE: {
        if (v->kind != FDS_JV_NUMBER && v->kind != FDS_JV_STRING)
            return v->kind == FDS_JV_NULL || v->kind == FDS_JV_ARRAY
                       ? 0 : FDS_EINVAL;
        double d;
        int rc = fds__parse_double(v->str, v->str_len, &d);
        if (rc)
            return rc;
        d = fds__round_ftype(f, d);
        if (!isfinite(d)) /* finite as a double, beyond a float */
            return FDS_ERANGE;
        if (out)
            out->d = d;
        return 0;
    }
    case FDS_FT_DATE: {
        int64_t ms;
        /* a number is epoch millis (or seconds) when the format has it */
        unsigned bits = f->dfmt ? f->dfmt->bits : FDS_DF_DEFAULT;
        if (v->kind == FDS_JV_NUMBER) {
            if (!(bits & (FDS_DF_EPOCH_MILLIS | FDS_DF_EPOCH_SECOND)) ||
                fds__parse_long(v->str, v->str_len, false, &ms))
                return FDS_EINVAL;
            if (!(bits & FDS_DF_EPOCH_MILLIS)) {
                if (ms > INT64_MAX / 1000 || ms < INT64_MIN / 1000)
                    return FDS_EINVAL;
                ms *= 1000;
            }
        } else if (v->kind == FDS_JV_STRING) {
            if (f->dfmt ? fds__date_parse(v->str, v->str_len, f->dfmt, 0, &ms)
                        : fds__parse_date(v->str, v->str_len, true, &ms))
                return FDS_EINVAL;
        } else {
            return v->kind == FDS_JV_NULL || v->kind == FDS_JV_ARRAY
                       ? 0 : FDS_EINVAL;
        }
        if (out)
            out->l = ms;
        return 0;
    }
    case FDS_FT_BOOLEAN: {
        int64_t b;
        if (v->kind == FDS_JV_TRUE || v->kind == FDS_JV_FALSE ||
            v->kind == FDS_JV_STRING) {
            if (fds__parse_bool(v->str, v->str_len, &b))
                return FDS_EINVAL;
            if (out)
                out->l = b;
            return 0;
        }
        return v->kind == FDS_JV_NULL || v->kind == FDS_JV_ARRAY ? 0
                                                                 : FDS_EINVAL;
    }
    default:
        return 0;
    }
}

int fds__value_error(const fds_mfield *f, const fds_jval *v, const uint8_t *src,
                     size_t len, fds_err *err)
{
    int l, c;
    fds__json_linecol(src, len, v->offset, &l, &c);
    if (f->type == FDS_FT_OBJECT)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_DOCUMENT_PARSE,
                            "[%d:%d] object mapping for [%s] tried to parse "
                            "field [%s] as object, but found a concrete value",
                            l, c, f->path, f->path);
    if (v->kind == FDS_JV_OBJECT)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_DOCUMENT_PARSE,
                            "[%d:%d] failed to parse field [%s] of type [%s] "
                            "in document. Preview of field's value: '{...}'",
                            l, c, f->path, f->type_name);
    int n = (int)(v->str_len > 40 ? 40 : v->str_len);
    if (err && !err->code && f->type == FDS_FT_DOUBLE &&
        fds__value_check(f, v, NULL) == FDS_ERANGE) {
        /* Elasticsearch's NumberFieldMapper: the cause under the parse error */
        double d = 0;
        fds__parse_double(v->str, v->str_len, &d);
        fds_err_cause(err, FDS_KIND_INVALID_ARGUMENT,
                      "[%s] supports only finite values, but got [%s]",
                      f->type_name, d < 0 ? "-Infinity" : "Infinity");
    }
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_DOCUMENT_PARSE,
                        "[%d:%d] failed to parse field [%s] of type [%s] in "
                        "document. Preview of field's value: '%.*s'",
                        l, c, f->path, f->type_name, n, v->str);
}

/* A document's value at a multi-field's path ("url.keyword" given as a key
 * of its own): Elasticsearch's DocumentParser refuses it, since the path
 * would need the parent field to be an object; indexed, it would give the
 * sub-field a value its parent does not have.  0 when f is not one, or v
 * is a copy_to copy (not a key of the document); else FDS_EINVAL, err
 * filled. */
static int subfield_error(const fds_mfield *f, const fds_jval *v,
                          const uint8_t *src, size_t len, fds_err *err)
{
    if (!f || !f->is_subfield || !f->parent || v->copied)
        return 0;
    int l, c;
    fds__json_linecol(src, len, v->offset, &l, &c);
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_DOCUMENT_PARSE,
                        "[%d:%d] Could not dynamically add mapping for field "
                        "[%s]. Existing mapping for [%s] must be of type "
                        "object but found [%s].",
                        l, c, f->path, f->parent->path, f->parent->type_name);
}

/* ---- a document as the mapping sees it ------------------------------------ */

typedef struct dscan {
    const fds_mapping *m;
    bool locked;
    fds_jval_fn cb;
    void *arg;
} dscan;

static const fds_mfield *dfind(const dscan *d, const char *p, size_t n)
{
    return d->locked ? fds__mapping_find(d->m, p, n)
                     : fds__mapping_find_locked(d->m, p, n);
}

/* Is p, or an object above it, an object with "enabled": false? */
static bool under_disabled(const dscan *d, const char *p, size_t n)
{
    for (size_t k = 1; k <= n; k++)
        if (k == n || p[k] == '.') {
            const fds_mfield *f = dfind(d, p, k);
            if (f && f->disabled)
                return true;
        }
    return false;
}

const fds_jval *fds__null_as(const fds_mfield *f, const fds_jval *v,
                             fds_jval *tmp)
{
    if (v->kind != FDS_JV_NULL && !v->from_null)
        return v;
    if (!f || !f->null_text)
        return v->kind == FDS_JV_NULL ? v : NULL;
    *tmp = *v;
    tmp->kind = f->null_kind;
    tmp->str = f->null_text;
    tmp->str_len = f->null_len;
    tmp->from_null = true;
    return tmp;
}

bool fds__path_disabled(const fds_mapping *m, const char *path, size_t len)
{
    if (m->root_disabled)
        return true;
    dscan d = {m, false, NULL, NULL};
    return m->ndisabled && under_disabled(&d, path, len);
}

/* Report v at field f (NULL: unmapped), a null as f's null_value. */
static int emit_field(const dscan *d, const fds_jval *v, const fds_mfield *f,
                      fds_err *err)
{
    fds_jval tmp;
    return d->cb(d->arg, fds__null_as(f, v, &tmp), err);
}

static int dscan_cb(void *arg, const fds_jval *v, fds_err *err)
{
    const dscan *d = arg;
    bool open = v->kind == FDS_JV_OBJECT || v->kind == FDS_JV_ARRAY;
    if (d->m->root_disabled ||
        (d->m->ndisabled && under_disabled(d, v->path, v->path_len)))
        return open ? FDS__JSCAN_SKIP : 0;
    const fds_mfield *f = dfind(d, v->path, v->path_len);
    int rc = emit_field(d, v, f, err);
    if (rc || open || !f || !f->ncopy)
        return rc;
    for (unsigned i = 0; i < f->ncopy && !rc; i++) {
        fds_jval cv = *v;
        cv.path = f->copy_to[i];
        cv.path_len = strlen(cv.path);
        cv.copied = true;
        rc = emit_field(d, &cv, dfind(d, cv.path, cv.path_len), err);
    }
    return rc;
}

int fds__doc_scan(const fds_mapping *m, bool locked, const uint8_t *src,
                  size_t len, fds_jval_fn cb, void *arg, fds_err *err)
{
    if (!m->root_disabled && !m->ndisabled && !m->nvalue_params)
        return fds__json_scan(src, len, cb, arg, err); /* nothing to apply */
    dscan d = {m, locked, cb, arg};
    return fds__json_scan(src, len, dscan_cb, &d, err);
}

typedef struct vctx {
    const fds_mapping *m;
    const uint8_t *src;
    size_t len;
} vctx;

static int validate_cb(void *arg, const fds_jval *v, fds_err *err)
{
    vctx *c = arg;
    fds_mfield *f = fds__mapping_find(c->m, v->path, v->path_len);
    if (!f)
        return 0; /* dynamic: the first value decides */
    if (subfield_error(f, v, c->src, c->len, err))
        return FDS_EINVAL;
    if (fds__value_check(f, v, NULL))
        return fds__value_error(f, v, c->src, c->len, err);
    return 0;
}

int fds_doc_validate(const fds_mapping *m, const uint8_t *src, size_t len,
                     fds_err *err)
{
    vctx c = {m, src, len};
    fds_mapping *mm = (fds_mapping *)m;
    pthread_rwlock_rdlock(&mm->lock);
    int rc = fds__doc_scan(m, true, src, len, validate_cb, &c, err);
    pthread_rwlock_unlock(&mm->lock);
    return rc;
}

/* Elasticsearch's second default dynamic date format, "yyyy/MM/dd
 * HH:mm:ss Z||yyyy/MM/dd Z" (the offset optional), and the format a field
 * it detects is mapped with (DynamicFieldsBuilder, RootObjectMapper's
 * Defaults.DYNAMIC_DATE_TIME_FORMATTERS). */
#define SLASH_DATE_DETECT "yyyy/MM/dd HH:mm:ss Z||yyyy/MM/dd HH:mm:ss||yyyy/MM/dd Z||yyyy/MM/dd"
#define SLASH_DATE_FORMAT "yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis"

static fds_date_format slash_detect, slash_format;
static bool slash_ok;
static pthread_once_t slash_once = PTHREAD_ONCE_INIT;

static void slash_formats_init(void)
{
    slash_ok = fds__date_format_parse(SLASH_DATE_DETECT, strlen(SLASH_DATE_DETECT),
                                      &slash_detect) == 0 &&
               fds__date_format_parse(SLASH_DATE_FORMAT, strlen(SLASH_DATE_FORMAT),
                                      &slash_format) == 0;
}

/* Is the new string field v a date under m's dynamic_date_formats (in
 * order; the default list when none was given)?  1 and *df = the format to
 * map it with (NULL: the date default), or 0. */
static int dynamic_date(const fds_mapping *m, const fds_jval *v,
                        const fds_date_format **df)
{
    int64_t ms;
    *df = NULL;
    if (m->ddf_set) {
        for (unsigned i = 0; i < m->nddf; i++)
            if (fds__date_parse(v->str, v->str_len, &m->ddf[i], 0, &ms) == 0) {
                bool dflt = m->ddf[i].npat == 0 && m->ddf[i].bits == FDS_DF_DEFAULT;
                *df = dflt ? NULL : &m->ddf[i];
                return 1;
            }
        return 0;
    }
    if (fds__parse_date(v->str, v->str_len, false, &ms) == 0)
        return 1;
    pthread_once(&slash_once, slash_formats_init);
    if (slash_ok && fds__date_parse(v->str, v->str_len, &slash_detect, 0, &ms) == 0) {
        *df = &slash_format;
        return 1;
    }
    return 0;
}

fds_mfield *fds__mapping_dynamic(fds_mapping *m, const fds_jval *v,
                                 bool *enomem)
{
    fds_mfield *f = fds__mapping_find(m, v->path, v->path_len);
    if (f || m->dynamic != FDS_DYNAMIC_TRUE)
        return f; /* dynamic false: unmapped, kept in _source only */
    switch (v->kind) {
    case FDS_JV_STRING: {
        const fds_date_format *df = NULL;
        int date = m->no_date_detection ? 0 : dynamic_date(m, v, &df);
        if (date) {
            f = fds__mapping_add(m, v->path, v->path_len, FDS_FT_DATE, "date");
            if (f && df && !(f->dfmt = malloc(sizeof *f->dfmt)))
                f = NULL; /* fds__mapping_add's field is freed with m */
            else if (f && df)
                *f->dfmt = *df;
        } else {
            f = fds__mapping_add(m, v->path, v->path_len, FDS_FT_TEXT, "text");
            if (f) {
                char sub[FDS_FIELD_PATH_MAX + 16];
                int n = snprintf(sub, sizeof sub, "%s.keyword", f->path);
                fds_mfield *k = fds__mapping_add(m, sub, (size_t)n,
                                                 FDS_FT_KEYWORD, "keyword");
                if (!k)
                    f = NULL;
                else
                    k->ignore_above = FDS_KEYWORD_IGNORE_ABOVE;
            }
        }
        break;
    }
    case FDS_JV_NUMBER: {
        bool frac = memchr(v->str, '.', v->str_len) ||
                    memchr(v->str, 'e', v->str_len) ||
                    memchr(v->str, 'E', v->str_len);
        f = frac ? fds__mapping_add(m, v->path, v->path_len, FDS_FT_DOUBLE,
                                    "float")
                 : fds__mapping_add(m, v->path, v->path_len, FDS_FT_LONG,
                                    "long");
        break;
    }
    case FDS_JV_TRUE:
    case FDS_JV_FALSE:
        f = fds__mapping_add(m, v->path, v->path_len, FDS_FT_BOOLEAN,
                             "boolean");
        break;
    case FDS_JV_OBJECT:
        f = fds__mapping_add(m, v->path, v->path_len, FDS_FT_OBJECT, "object");
        break;
    default:
        return NULL;
    }
    if (!f)
        *enomem = true;
    return f;
}

void fds_mapping_seal(fds_mapping *m)
{
    pthread_rwlock_wrlock(&m->lock);
    m->sealed = true;
    pthread_rwlock_unlock(&m->lock);
}

bool fds_mapping_source_enabled(const fds_mapping *m)
{
    return !m->source_disabled;
}

/* ---- index-time dynamic mapping ------------------------------------------- */

typedef struct mapctx {
    fds_mapping *m;
    const uint8_t *src;
    size_t len;
} mapctx;

/* "dynamic": "strict" refuses a document with an unmapped field (not a
 * null, which maps nothing), as Elasticsearch's DocumentParser does. */
static int strict_check(const fds_mapping *m, const fds_jval *v, fds_err *err)
{
    if (m->dynamic != FDS_DYNAMIC_STRICT || v->kind == FDS_JV_NULL ||
        fds__mapping_find(m, v->path, v->path_len))
        return 0;
    size_t k = v->path_len;
    while (k > 0 && v->path[k - 1] != '.')
        k--;
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_STRICT_DYNAMIC,
                        "mapping set to strict, dynamic introduction of [%.*s] "
                        "within [%.*s] is not allowed",
                        (int)(v->path_len - k), v->path + k,
                        k ? (int)(k - 1) : 4, k ? v->path : "_doc");
}

static int map_cb(void *arg, const fds_jval *v, fds_err *err)
{
    mapctx *c = arg;
    bool enomem = false;
    int src = strict_check(c->m, v, err);
    if (src)
        return src;
    fds_mfield *f = fds__mapping_dynamic(c->m, v, &enomem);
    if (enomem)
        return FDS_ENOMEM;
    if (subfield_error(f, v, c->src, c->len, err))
        return FDS_EINVAL;
    if (f && fds__value_check(f, v, NULL))
        return fds__value_error(f, v, c->src, c->len, err);
    return 0;
}

/* Drop the fields added after the first `keep` (caller holds the write lock
 * and no reader has seen them) and re-index the hash in place. */
static void mapping_truncate(fds_mapping *m, size_t keep)
{
    if (m->nfields <= keep)
        return;
    for (size_t k = keep; k < m->nfields; k++)
        mfield_free(m->fields[k]);
    m->nfields = keep;
    memset(m->hash, 0, m->hash_cap * sizeof *m->hash);
    for (size_t k = 0; k < m->nfields; k++) {
        fds_mfield *f = m->fields[k];
        size_t i = fds_fnv1a64(f->path, f->path_len) & (m->hash_cap - 1);
        while (m->hash[i])
            i = (i + 1) & (m->hash_cap - 1);
        m->hash[i] = (uint32_t)k + 1;
    }
}

/* What map_check_cb answers for a value that would add a field: the
 * document needs the write lock.  Never leaves fds_doc_map. */
#define MAP_NEEDS_FIELD (-1000)

/* map_cb for a mapping that must not change (read lock): the same checks,
 * MAP_NEEDS_FIELD where map_cb would add a field. */
static int map_check_cb(void *arg, const fds_jval *v, fds_err *err)
{
    mapctx *c = arg;
    int src = strict_check(c->m, v, err);
    if (src)
        return src;
    fds_mfield *f = fds__mapping_find(c->m, v->path, v->path_len);
    if (!f) {
        bool adds = c->m->dynamic == FDS_DYNAMIC_TRUE &&
                    (v->kind == FDS_JV_STRING || v->kind == FDS_JV_NUMBER ||
                     v->kind == FDS_JV_TRUE || v->kind == FDS_JV_FALSE ||
                     v->kind == FDS_JV_OBJECT);
        return adds ? MAP_NEEDS_FIELD : 0;
    }
    if (subfield_error(f, v, c->src, c->len, err))
        return FDS_EINVAL;
    if (fds__value_check(f, v, NULL))
        return fds__value_error(f, v, c->src, c->len, err);
    return 0;
}

int fds_doc_map(fds_mapping *m, const uint8_t *src, size_t len, fds_err *err)
{
    mapctx c = {m, src, len};
    /* most documents add no field: checked under the read lock, so that
     * concurrent writers and refreshes do not wait for each other; up to
     * the first value that would add one, both passes see the same
     * mapping and answer alike */
    fds_err cerr;
    fds_err_clear(&cerr);
    pthread_rwlock_rdlock(&m->lock);
    int crc = fds__doc_scan(m, true, src, len, map_check_cb, &c, &cerr);
    pthread_rwlock_unlock(&m->lock);
    if (crc != MAP_NEEDS_FIELD) {
        if (crc && err && !err->code)
            *err = cerr;
        return crc;
    }
    pthread_rwlock_wrlock(&m->lock);
    size_t before = m->nfields;
    int rc = fds__doc_scan(m, true, src, len, map_cb, &c, err);
    if (rc) /* a refused document leaves the mapping as it was (as in ES) */
        mapping_truncate(m, before);
    pthread_rwlock_unlock(&m->lock);
    return rc;
}
