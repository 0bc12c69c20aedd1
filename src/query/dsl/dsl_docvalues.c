/*
 * dsl_docvalues.c: a `docvalue_fields` or `fields` entry (a name or a
 * pattern, with its format) resolved against the mapping when the request
 * is parsed -- formats checked (dates: named formats and the pattern
 * letters we print; numbers: DecimalFormat patterns of #, 0, '.' and ','),
 * text fields refused for docvalue_fields as Elasticsearch refuses them,
 * a field asked for twice named once -- into the request's list, which
 * the fetch phase (fetch/docvalues.c) reads per hit.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "time/datemath.h"
#include "dsl/dsl_parse_int.h"
#include "fds_text.h"

/* A number format we can print: a DecimalFormat pattern of #, 0, one
 * '.' and ',' before it. */
static bool numeric_pattern_ok(const char *f)
{
    bool dot = false;
    for (const char *p = f; *p; p++) {
        if (*p == '.') {
            if (dot)
                return false;
            dot = true;
        } else if (*p != '#' && *p != '0' && (*p != ',' || dot)) {
            return false;
        }
    }
    return *f != 0;
}

/* A date format we can print: a named format or letters y u M d H m s S
 * X x Z with quoted text and punctuation. */
bool fds__dsl_date_format_ok(const char *f)
{
    size_t n = strcspn(f, "|");
    static const char *const named[] = {
        "strict_date_optional_time", "date_optional_time", "epoch_millis",
        "epoch_second", "strict_date", "date", "strict_date_time",
        "date_time", "strict_date_optional_time_nanos"};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        if (strlen(named[i]) == n && !strncmp(f, named[i], n))
            return true;
    bool quoted = false;
    for (size_t i = 0; i < n; i++) {
        char ch = f[i];
        if (ch == '\'')
            quoted = !quoted;
        else if (!quoted && isalpha((unsigned char)ch) && !strchr("yuMdHmsSXxZ", ch))
            return false;
    }
    return !quoted;
}

/* Elasticsearch's refusal of a text field in docvalue_fields (the one it
 * gives to sort or aggregate on one). */
static int text_field_error(fds_err *err, const char *name)
{
    fds__dsl_ctx c = {.err = err};
    return fds__dsl_no_fielddata(&c, name);
}

/* A zeroed slot after r's fields (r->ndv not yet counting it); NULL on
 * ENOMEM. */
static fds_dv_field *dv_slot(fds_search_request *r)
{
    fds_dv_field *nd = realloc(r->dv, (r->ndv + 1) * sizeof *nd);
    if (!nd)
        return NULL;
    r->dv = nd;
    memset(&nd[r->ndv], 0, sizeof *nd);
    return &nd[r->ndv];
}

/* Append the resolved field f (named `name`) to r.  0 or an FDS_E* code. */
static int dv_add(fds_search_request *r, const fds_mfield *f,
                  const char *fmt, bool fetch, fds_err *err)
{
    if (fmt && !strcmp(fmt, "use_field_mapping"))
        fmt = NULL;
    /* the fields API formats dates only: every other type's value
     * fetcher refuses a format (Elasticsearch's NumberFieldType,
     * KeywordFieldType ... valueFetcher); docvalue_fields format numbers
     * too (DocValueFormat.Decimal) */
    if (fmt && (f->type == FDS_FT_KEYWORD || f->type == FDS_FT_BOOLEAN ||
                f->type == FDS_FT_TEXT || (fetch && f->type != FDS_FT_DATE)))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Field [%s] of type [%s] doesn't support formats.",
                            f->path, f->type_name);
    if (fmt && f->type == FDS_FT_DATE && !fds__dsl_date_format_ok(fmt))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[docvalue_fields] date format [%s] is not "
                            "supported", fmt);
    if (fmt && f->type != FDS_FT_DATE && !numeric_pattern_ok(fmt))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[docvalue_fields] number format [%s] is not "
                            "supported: only DecimalFormat patterns of #, 0, "
                            "'.' and ','", fmt);
    const char *dfmt = fmt;
    if (!dfmt && f->type == FDS_FT_DATE && f->dfmt && fds__dsl_date_format_ok(f->dfmt->text))
        dfmt = f->dfmt->text;
    /* a field asked for again: the later entry (its format) wins, and the
     * hit names it once */
    for (size_t k = 0; k < r->ndv; k++)
        if (!r->dv[k].unmapped && r->dv[k].fetch == fetch &&
            !strcmp(r->dv[k].name, f->path)) {
            char *nf = dfmt ? strdup(dfmt) : NULL;
            if (dfmt && !nf)
                return FDS_ENOMEM;
            free(r->dv[k].format);
            r->dv[k].format = nf;
            return 0;
        }
    fds_dv_field *d = dv_slot(r);
    if (!d)
        return FDS_ENOMEM;
    const fds_mfield *src = f->is_subfield && f->parent ? f->parent : f;
    d->name = strdup(f->path);
    d->src = strdup(src->path);
    d->format = dfmt ? strdup(dfmt) : NULL;
    d->type = f->type;
    d->fetch = fetch;
    d->float32 = fds__round_ftype(f, 0.1) != 0.1;
    d->ignore_above = f->ignore_above;
    d->dfmt = f->dfmt;
    if (!d->name || !d->src || (dfmt && !d->format)) {
        free(d->name);
        free(d->src);
        free(d->format);
        return FDS_ENOMEM;
    }
    r->ndv++;
    return 0;
}

/* The include_unmapped entry of pattern `name`. */
static int unmapped_add(fds_search_request *r, const char *name)
{
    fds_dv_field *d = dv_slot(r);
    if (!d)
        return FDS_ENOMEM;
    d->fetch = d->unmapped = true;
    d->type = FDS_FT_NONE;
    if (!(d->name = strdup(name)))
        return FDS_ENOMEM;
    r->ndv++;
    return 0;
}

int fds__dv_resolve(fds_search_request *r, const char *name, const char *fmt,
                    bool fetch, bool unmapped, fds_err *err)
{
    const fds_mapping *m = r->mapping;
    if (!m)
        return 0;
    if (unmapped) {
        int rc = unmapped_add(r, name);
        if (rc)
            return rc;
    }
    fds_mapping *mm = (fds_mapping *)m;
    int rc = 0;
    pthread_rwlock_rdlock(&mm->lock);
    if (!strchr(name, '*')) {
        const fds_mfield *f = fds__mapping_find(m, name, strlen(name));
        if (f && f->type == FDS_FT_TEXT && !fetch)
            rc = text_field_error(err, name);
        else if (f && f->type != FDS_FT_OBJECT && f->type != FDS_FT_NONE)
            rc = dv_add(r, f, fmt, fetch, err);
        /* unmapped: no values, as in Elasticsearch */
    } else {
        /* a pattern: the fields with doc values it matches */
        for (size_t i = 0; !rc && i < m->nfields; i++) {
            const fds_mfield *f = m->fields[i];
            if ((f->type == FDS_FT_TEXT && !fetch) ||
                f->type == FDS_FT_OBJECT || f->type == FDS_FT_NONE ||
                !fds_glob_match(name, f->path, f->path_len))
                continue;
            rc = dv_add(r, f, fmt, fetch, err);
        }
    }
    pthread_rwlock_unlock(&mm->lock);
    return rc;
}
