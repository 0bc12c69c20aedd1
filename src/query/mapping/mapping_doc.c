/*
 * mapping_doc.c: documents checked against a mapping -- a value against
 * its field's type (fds__value_check, and Elasticsearch's words when it
 * does not fit), a document walked as the mapping sees it (disabled
 * objects skipped, null_value and copy_to applied: fds__doc_scan) and
 * fds_doc_validate, which adds nothing to the mapping.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "time/datemath.h"
#include "query_int.h"
#include "mapping/mapping_int.h"

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
int fds__subfield_error(const fds_mfield *f, const fds_jval *v,
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
    if (fds__subfield_error(f, v, c->src, c->len, err))
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
