/*
 * cat.c: the _cat APIs' tables -- column selection (?h=, with aliases and
 * wildcards), sorting (?s=), aligned text with optional headers (?v) or a
 * JSON array (?format=json) -- rendered from rows of strings the handlers
 * build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat.h"
#include "fds_text.h"

/* Column spec "name|alias|...", with a leading '*' when the column is
 * shown only when ?h= asks for it: does `want` (len bytes) name it? */
static bool col_named(const char *spec, const char *want, size_t len)
{
    const char *p = spec[0] == '*' ? spec + 1 : spec;
    while (*p) {
        const char *e = strchr(p, '|');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && !memcmp(p, want, len))
            return true;
        p += l + (e ? 1 : 0);
    }
    return false;
}

/* The columns ?h= selects (all default ones without it), into sel[];
 * their count. */
static int cat_cols(fds_req *r, const char *const *cols, size_t ncol,
                    size_t *sel, size_t cap)
{
    const char *h = fds__req_param(r, "h");
    int n = 0;
    if (!h || !*h) {
        for (size_t i = 0; i < ncol && (size_t)n < cap; i++)
            if (cols[i][0] != '*')
                sel[n++] = i;
        return n;
    }
    for (const char *p = h; *p && (size_t)n < cap;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char pat[64];
        bool wild = memchr(p, '*', l) && l < sizeof pat;
        if (wild) { /* h=d*: every column whose name matches, in order */
            memcpy(pat, p, l);
            pat[l] = 0;
        }
        for (size_t i = 0; i < ncol && (size_t)n < cap; i++) {
            char title[64];
            const char *t = cols[i][0] == '*' ? cols[i] + 1 : cols[i];
            size_t tl = strcspn(t, "|");
            snprintf(title, sizeof title, "%.*s", (int)tl, t);
            if (wild ? fds_glob_match(pat, title, strlen(title))
                     : col_named(cols[i], p, l)) {
                sel[n++] = i;
                if (!wild)
                    break;
            }
        }
        p += l + (e ? 1 : 0);
    }
    return n;
}

/* ?s=: sort keys, each a column and an optional ":asc"/":desc". */
typedef struct cat_sort {
    size_t col[FDS_CAT_SORT_KEYS_MAX];
    bool desc[FDS_CAT_SORT_KEYS_MAX];
    size_t n;
} cat_sort;

/* Numbers (and sizes such as "1.5kb") compare as numbers, as
 * Elasticsearch's table sorts typed cells; other cells as text. */
static int cell_cmp(const char *x, const char *y)
{
    char *ex, *ey;
    double a = x ? strtod(x, &ex) : 0, b = y ? strtod(y, &ey) : 0;
    if (x && y && ex != x && ey != y && !strcmp(ex, ey))
        return a < b ? -1 : a > b;
    return strcmp(x ? x : "", y ? y : "");
}

static int cat_row_cmp(const void *a, const void *b, void *arg)
{
    const cat_sort *s = arg;
    for (size_t k = 0; k < s->n; k++) {
        int c = cell_cmp((*(char ***)a)[s->col[k]], (*(char ***)b)[s->col[k]]);
        if (c)
            return s->desc[k] ? -c : c;
    }
    return 0;
}

/* The primary name of column spec `spec` into buf. */
static const char *col_title(const char *spec, char *buf, size_t cap)
{
    const char *p = spec[0] == '*' ? spec + 1 : spec;
    size_t l = strcspn(p, "|");
    snprintf(buf, cap, "%.*s", (int)l, p);
    return buf;
}

void fds__cat_render(fds_req *r, fds_resp *o, const char *const *cols,
                    size_t ncol, char ***rows, size_t nrows)
{
    size_t sel[FDS_CAT_COLS_MAX];
    int ns = cat_cols(r, cols, ncol, sel, FDS_CAT_COLS_MAX);
    char title[FDS_CAT_COLS_MAX][64];
    const char *tt[FDS_CAT_COLS_MAX];
    for (int c = 0; c < ns; c++)
        tt[c] = col_title(cols[sel[c]], title[c], sizeof title[c]);
    const char *s = fds__req_param(r, "s");
    cat_sort cs = {.n = 0};
    for (const char *p = s ? s : ""; *p && cs.n < FDS_CAT_SORT_KEYS_MAX;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        const char *colon = memchr(p, ':', l);
        size_t nl = colon ? (size_t)(colon - p) : l;
        size_t i = 0;
        while (i < ncol && !col_named(cols[i], p, nl))
            i++;
        if (i == ncol)
            return fds__resp_errorf(o, 400, "unsupported_operation_exception",
                                   "Unable to sort by unknown sort key `%.*s`",
                                   (int)nl, p);
        cs.col[cs.n] = i;
        cs.desc[cs.n++] = colon && l - nl == 5 && !memcmp(colon, ":desc", 5);
        p += l + (e ? 1 : 0);
    }
    if (cs.n && nrows > 1)
        qsort_r(rows, nrows, sizeof *rows, cat_row_cmp, &cs);
    const char *fmt = fds__req_param(r, "format");
    if (fmt && !strcmp(fmt, "json")) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < nrows; i++) {
            cJSON *o1 = cJSON_CreateObject();
            for (int c = 0; c < ns; c++) {
                const char *v = rows[i][sel[c]];
                if (v)
                    cJSON_AddStringToObject(o1, tt[c], v);
                else
                    cJSON_AddNullToObject(o1, tt[c]);
            }
            cJSON_AddItemToArray(arr, o1);
        }
        fds__resp_json(o, 200, arr);
        return;
    }
    bool v = fds__req_param_bool(r, "v", false);
    size_t w[FDS_CAT_COLS_MAX] = {0};
    for (int c = 0; c < ns; c++) {
        if (v)
            w[c] = strlen(tt[c]);
        for (size_t i = 0; i < nrows; i++) {
            const char *x = rows[i][sel[c]];
            size_t l = x ? strlen(x) : 0;
            if (l > w[c])
                w[c] = l;
        }
    }
    size_t cap = 64, len = 0;
    for (int c = 0; c < ns; c++)
        cap += (w[c] + 1) * (nrows + 1);
    char *out = malloc(cap + nrows + 2);
    if (!out) {
        fds__resp_errorf(o, 500, "exception", "out of memory");
        return;
    }
    for (size_t i = v ? 0 : 1; i <= nrows; i++) {
        for (int c = 0; c < ns; c++) {
            const char *x = i == 0 ? tt[c] : rows[i - 1][sel[c]];
            if (!x)
                x = "";
            if (c + 1 < ns)
                len += (size_t)sprintf(out + len, "%-*s ", (int)w[c], x);
            else
                len += (size_t)sprintf(out + len, "%s", x);
        }
        out[len++] = '\n';
    }
    out[len] = 0;
    fds__resp_raw(o, 200, out, len, "text/plain; charset=UTF-8");
}

void fds__cat_rows_free(char ***rows, size_t n, size_t ncol)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < ncol; c++)
            free(rows[i][c]);
        free(rows[i]);
    }
    free(rows);
}
