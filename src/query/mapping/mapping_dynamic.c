/*
 * mapping_dynamic.c: dynamic mapping -- the fields a document adds to a
 * mapping by Elasticsearch's default rules, and fds_doc_map, which checks a
 * document and adds its new fields under the write lock, or none when
 * any value is refused.
 *
 * Dynamic rules (Elasticsearch defaults): strings that parse as
 * strict_date_optional_time -> date, other strings -> text with a keyword
 * sub-field (ignore_above 256), integers -> long, other numbers -> float,
 * booleans -> boolean, objects -> object; null adds nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time/datemath.h"
#include "query_int.h"
#include "mapping/mapping_int.h"

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

/* ---- index-time dynamic mapping ------------------------------------------- */

typedef struct mapctx {
    fds_mapping *m;
    const uint8_t *src;
    size_t len;
    const fds_mapping_limits *lim;
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
    size_t before = c->m->nfields;
    fds_mfield *f = fds__mapping_dynamic(c->m, v, &enomem);
    if (enomem)
        return FDS_ENOMEM;
    /* the new fields (a text's keyword, an object's parents) checked as
     * they come: a document of 100,000 new names stops at the limit */
    for (size_t i = before; i < c->m->nfields; i++)
        if (fds__field_limit_error(c->m->fields[i], c->m->nfields, c->lim, err))
            return FDS_EINVAL;
    if (fds__subfield_error(f, v, c->src, c->len, err))
        return FDS_EINVAL;
    if (f && fds__value_check(f, v, NULL))
        return fds__value_error(f, v, c->src, c->len, err);
    return 0;
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
    if (fds__subfield_error(f, v, c->src, c->len, err))
        return FDS_EINVAL;
    if (fds__value_check(f, v, NULL))
        return fds__value_error(f, v, c->src, c->len, err);
    return 0;
}

int fds_doc_map(fds_mapping *m, const uint8_t *src, size_t len, fds_err *err)
{
    return fds_doc_map_limited(m, src, len, NULL, err);
}

int fds_doc_map_limited(fds_mapping *m, const uint8_t *src, size_t len,
                        const fds_mapping_limits *lim, fds_err *err)
{
    static const fds_mapping_limits dflt = {FDS_MAPPING_TOTAL_FIELDS_DEFAULT,
                                            FDS_MAPPING_DEPTH_DEFAULT, 0};
    mapctx c = {m, src, len, lim ? lim : &dflt};
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
        fds__mapping_truncate(m, before);
    pthread_rwlock_unlock(&m->lock);
    return rc;
}
