/*
 * index_expr.c: index expressions resolved to indices (see index_expr.h).
 * The work is bounded by (items of the expression) x (indices of the
 * node), each match linear in pattern x name (fds_glob_match).
 */
#include "index_expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "fds_strbuf.h"
#include "time/datemath.h"
#include "fds_text.h"

static int bad_value(fds_err *err, const char *name, const char *v)
{
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "Failed to parse value [%s] for parameter [%s]", v,
                        name);
}

/* Elasticsearch's index_not_found_exception for `name`. */
static int not_found(fds_err *err, const char *name)
{
    fds_err_clear(err);
    int rc = fds_err_setk(err, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                          "no such index [%s]", name);
    snprintf(err->index, sizeof err->index, "%s", name);
    return rc;
}

int fds_index_expr_check(const char *expr, fds_err *err)
{
    for (const char *p = expr; p && *p;) {
        size_t l = strcspn(p, ",");
        /* the item as given: "-_x" excludes, it does not start with '_'
         * (validateAliasOrIndex runs before the '-' is taken off) */
        if (l && p[0] == '_' && !(l == 4 && !memcmp(p, "_all", 4))) {
            fds_err_clear(err);
            int rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_INDEX_NAME,
                                  "Invalid index name [%.*s], must not start "
                                  "with '_'.", (int)l, p);
            snprintf(err->index, sizeof err->index, "%.*s", (int)l, p);
            return rc;
        }
        p += l + (p[l] == ',');
    }
    return 0;
}

static int read_flag(const char *v, const char *name, bool *out, fds_err *err)
{
    if (!v)
        return 0;
    if (!*v || !strcmp(v, "true"))
        *out = true;
    else if (!strcmp(v, "false"))
        *out = false;
    else
        return bad_value(err, name, v);
    return 0;
}

int fds_index_expr_opts_read(const char *(*param)(void *arg, const char *name),
                             void *arg, fds_index_expr_opts *o, fds_err *err)
{
    int rc = read_flag(param(arg, "ignore_unavailable"), "ignore_unavailable",
                       &o->ignore_unavailable, err);
    if (!rc)
        rc = read_flag(param(arg, "allow_no_indices"), "allow_no_indices",
                       &o->allow_no_indices, err);
    const char *ew = param(arg, "expand_wildcards");
    if (rc || !ew)
        return rc;
    o->expand_open = o->expand_closed = o->expand_hidden = false;
    for (const char *p = ew; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == 4 && !memcmp(p, "open", 4))
            o->expand_open = true;
        else if (l == 6 && !memcmp(p, "closed", 6))
            o->expand_closed = true;
        else if (l == 6 && !memcmp(p, "hidden", 6))
            o->expand_hidden = true;
        else if (l == 3 && !memcmp(p, "all", 3))
            o->expand_open = o->expand_closed = o->expand_hidden = true;
        else if (!(l == 4 && !memcmp(p, "none", 4)))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "No enum constant for [expand_wildcards]: "
                                "[%.*s]", (int)l, p);
        p += l + (e ? 1 : 0);
    }
    return 0;
}

/* Is ix open as expand_wildcards sees it (o->take_failed: a failed index
 * an operator did not close is open)? */
static bool taken_open(fds_index *ix, const fds_index_expr_opts *o)
{
    if (fds_index_is_open(ix))
        return true;
    return o->take_failed && fds_index_failure(ix) &&
           !strcmp(fds_index_state(ix), "open");
}

/* Does wildcard item `pat` (NUL-terminated) take index `name`? */
static bool wild_takes(const char *pat, fds_index *ix, const char *name,
                       const fds_index_expr_opts *o)
{
    if (!fds_glob_match(pat, name, strlen(name)))
        return false;
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    /* a dot name only for a dot pattern; a hidden index only with
     * expand_wildcards=hidden, or a dot pattern on a hidden dot name
     * (Elasticsearch's implicitHiddenMatch) */
    bool dot = name[0] == '.' && pat[0] == '.';
    if (!o->expand_hidden && ((name[0] == '.' && !dot) || (set.hidden && !dot)))
        return false;
    return taken_open(ix, o) ? o->expand_open : o->expand_closed;
}

void fds_index_expr_free(fds_index **ixs, size_t n)
{
    for (size_t i = 0; ixs && i < n; i++)
        fds_index_release(ixs[i]);
    free(ixs);
}

/* Every index of the node: references in `all`, names in `names`; every
 * alias; and, per index, how the expression reached it: `direct` (by its
 * name, an index wildcard or an alias without a filter) or through the
 * filtered aliases listed in `filters` (indices into `al`). */
typedef struct node_set {
    char **names;
    fds_index **all; /* NULL where the index went away meanwhile */
    size_t n;
    fds_alias *al;
    size_t nal;
    bool *direct;
    size_t **filters; /* per index: alias entries whose filter applies */
    size_t *nfilters;
} node_set;

static void node_set_free(node_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->names[i]);
        fds_index_release(s->all[i]);
        if (s->filters)
            free(s->filters[i]);
    }
    free(s->names);
    free(s->all);
    fds_aliases_free(s->al, s->nal);
    free(s->direct);
    free(s->filters);
    free(s->nfilters);
}

/* The position of index `name` in the node set, or s->n. */
static size_t node_find(const node_set *s, const char *name)
{
    size_t i = 0;
    while (i < s->n && strcmp(s->names[i], name))
        i++;
    return i;
}

/* Take index i through alias entry a (or directly: a NULL). */
static int take_index(node_set *s, bool *take, size_t i, const fds_alias *a)
{
    take[i] = true;
    if (!a || !a->filter) {
        s->direct[i] = true;
        return 0;
    }
    size_t *f = realloc(s->filters[i], (s->nfilters[i] + 1) * sizeof *f);
    if (!f)
        return FDS_ENOMEM;
    s->filters[i] = f;
    f[s->nfilters[i]++] = (size_t)(a - s->al);
    return 0;
}

static void drop_index(node_set *s, bool *take, size_t i)
{
    take[i] = false;
    s->direct[i] = false;
    s->nfilters[i] = 0;
}

/* Is alias `name` hidden (is_hidden true on its entries)? */
static bool alias_hidden(const node_set *s, const char *name)
{
    for (size_t k = 0; k < s->nal; k++)
        if (!strcmp(s->al[k].alias, name) && s->al[k].is_hidden == 1)
            return true;
    return false;
}

static int node_set_load(fds_store *st, node_set *s)
{
    memset(s, 0, sizeof *s);
    if (fds_store_list_indices(st, &s->names, &s->n))
        return FDS_ENOMEM;
    s->all = calloc(s->n ? s->n : 1, sizeof *s->all);
    s->direct = calloc(s->n ? s->n : 1, sizeof *s->direct);
    s->filters = calloc(s->n ? s->n : 1, sizeof *s->filters);
    s->nfilters = calloc(s->n ? s->n : 1, sizeof *s->nfilters);
    if (!s->all || !s->direct || !s->filters || !s->nfilters ||
        fds_store_aliases_list(st, &s->al, &s->nal)) {
        node_set_free(s);
        return FDS_ENOMEM;
    }
    for (size_t i = 0; i < s->n; i++)
        if (fds_store_get_index(st, s->names[i], &s->all[i], NULL))
            s->all[i] = NULL;
    return 0;
}

/* Does wildcard item `pat` take alias `name`?  As for an index: a dot
 * name for a dot pattern, a hidden alias with expand_wildcards=hidden. */
static bool wild_takes_alias(const node_set *s, const char *pat,
                             const char *name, const fds_index_expr_opts *o)
{
    if (!fds_glob_match(pat, name, strlen(name)))
        return false;
    bool dot = name[0] == '.' && pat[0] == '.';
    return o->expand_hidden || dot ||
           (name[0] != '.' && !alias_hidden(s, name));
}

/* The indices of alias `name` into `take` (or out of it, `minus`): for a
 * wildcard only those in the states expand_wildcards asks for, for a name
 * every open one and the closed ones unless ignore_unavailable.  Sets
 * *found when the alias exists. */
static int apply_alias(node_set *s, const char *name, bool *take, bool minus,
                       bool wild, const fds_index_expr_opts *o, bool *found)
{
    for (size_t k = 0; k < s->nal; k++) {
        if (strcmp(s->al[k].alias, name))
            continue;
        *found = true;
        size_t i = node_find(s, s->al[k].index);
        if (i == s->n || !s->all[i])
            continue;
        bool open = taken_open(s->all[i], o);
        if (wild ? !(open ? o->expand_open : o->expand_closed)
                 : !open && o->ignore_unavailable)
            continue;
        if (minus)
            drop_index(s, take, i);
        else if (take_index(s, take, i, &s->al[k]))
            return FDS_ENOMEM;
    }
    return 0;
}

/* Apply one item of the expression to `take` (one flag per index of the
 * node).  0 or FDS_ENOTFOUND (err filled) for a missing concrete name. */
static int apply_item(node_set *s, char *item, bool *take,
                      const fds_index_expr_opts *o, bool wild_seen, fds_err *err)
{
    /* '-' excludes only after a wildcard (Elasticsearch 8); before one it is
     * part of a name (which then does not exist) */
    bool minus = item[0] == '-' && item[1] && wild_seen;
    const char *pat = minus ? item + 1 : item;
    bool wild = strchr(pat, '*') != NULL;
    bool all = !strcmp(pat, "_all");
    if (all) {
        pat = "*";
        wild = true;
    }
    bool found = false;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->all[i])
            continue;
        bool hit = wild ? wild_takes(pat, s->all[i], s->names[i], o)
                        : !strcmp(pat, s->names[i]);
        if (!hit)
            continue;
        found = true;
        if (!wild && !minus && !fds_index_is_open(s->all[i]) &&
            o->ignore_unavailable)
            continue; /* a closed name is unavailable */
        if (minus)
            drop_index(s, take, i);
        else if (take_index(s, take, i, NULL))
            return FDS_ENOMEM;
    }
    /* aliases: a concrete name that is no index, or those a wildcard
     * matches (not for _all, which means every index) */
    for (size_t k = 0; !all && k < s->nal; k++) {
        const char *an = s->al[k].alias;
        if (k && !strcmp(an, s->al[k - 1].alias))
            continue; /* sorted by alias: each name once */
        if (wild ? !wild_takes_alias(s, pat, an, o) : (found || strcmp(pat, an)))
            continue;
        if (apply_alias(s, an, take, minus, wild, o, &found))
            return FDS_ENOMEM;
    }
    if (!found && !wild && !minus && !o->ignore_unavailable)
        return not_found(err, pat);
    return 0;
}

/* fds_index_expr_resolve for a single concrete name (no ',' or '*'). */
static int resolve_one(fds_store *st, const char *name,
                       const fds_index_expr_opts *o, fds_index ***out,
                       size_t *n, fds_err *err)
{
    fds_index *ix = NULL;
    if (fds_store_get_index(st, name, &ix, NULL) == 0 && !fds_index_is_open(ix) &&
        o->ignore_unavailable) {
        fds_index_release(ix); /* a closed name is unavailable */
        ix = NULL;
    }
    if (!ix && !o->ignore_unavailable)
        return not_found(err, name);
    if (!ix && !o->allow_no_indices)
        return not_found(err, name);
    if (!ix)
        return 0;
    if (!(*out = malloc(sizeof **out))) {
        fds_index_release(ix);
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    }
    (*out)[0] = ix;
    *n = 1;
    return 0;
}

/* The filter index i of the set is searched with: NULL (reached directly
 * or through an alias without one), the one filter, or a bool `should` of
 * all of them (Elasticsearch ORs the filters of the aliases that reach an
 * index).  *out malloc'd or NULL; 0 or FDS_ENOMEM. */
static int index_filter(const node_set *s, size_t i, char **out)
{
    *out = NULL;
    if (s->direct[i] || !s->nfilters[i])
        return 0;
    if (s->nfilters[i] == 1)
        return (*out = strdup(s->al[s->filters[i][0]].filter)) ? 0 : FDS_ENOMEM;
    fds_strbuf b = {0};
    fds_strbuf_puts(&b, "{\"bool\":{\"should\":[");
    for (size_t k = 0; k < s->nfilters[i]; k++) {
        if (k)
            fds_strbuf_putc(&b, ',');
        fds_strbuf_puts(&b, s->al[s->filters[i][k]].filter);
    }
    fds_strbuf_puts(&b, "]}}");
    *out = fds_strbuf_take(&b, NULL);
    return *out ? 0 : FDS_ENOMEM;
}

/* Longest expression after date math in its names is resolved. */
#define EXPR_DATE_MATH_MAX 4096

/* expr with each <name-{date math}> item resolved into buf (cap bytes);
 * 0, or an FDS_EINVAL detail naming the item that does not parse. */
static int date_math_names(const char *expr, char *buf, size_t cap,
                           fds_err *err)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    size_t k = 0;
    for (const char *p = expr; *p;) {
        size_t l = strcspn(p, ",");
        if (k + l + 2 > cap)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "index expression is too long");
        if (l >= 2 && p[0] == '<' && p[l - 1] == '>') {
            if (fds_date_math_index_name(p + 1, l - 2, now, buf + k, cap - k))
                return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                    "invalid date math expression [%.*s]",
                                    (int)l, p);
            k += strlen(buf + k);
        } else {
            memcpy(buf + k, p, l);
            k += l;
        }
        p += l;
        if (*p == ',')
            buf[k++] = *p++;
    }
    buf[k] = 0;
    return 0;
}

int fds_index_name_resolve(const char *name, char *out, size_t cap, fds_err *err)
{
    size_t l = strlen(name);
    if (l < 2 || name[0] != '<' || name[l - 1] != '>') {
        snprintf(out, cap, "%s", name);
        return 0;
    }
    return date_math_names(name, out, cap, err);
}

int fds_alias_names_resolve(fds_alias *a, size_t n, fds_err *e)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].alias[0] != '<')
            continue;
        char name[FDS_INDEX_NAME_MAX + 2];
        int rc = fds_index_name_resolve(a[i].alias, name, sizeof name, e);
        char *dup = rc ? NULL : strdup(name);
        if (!rc && !dup)
            rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        if (rc)
            return rc;
        free(a[i].alias);
        a[i].alias = dup;
    }
    return 0;
}

int fds_index_expr_resolve(fds_store *st, const char *expr,
                           const fds_index_expr_opts *o, fds_index ***out,
                           size_t *n, fds_err *err)
{
    return fds_index_expr_resolve_filtered(st, expr, o, out, n, NULL, err);
}

void fds_index_expr_filters_free(char **filters, size_t n)
{
    for (size_t i = 0; filters && i < n; i++)
        free(filters[i]);
    free(filters);
}

int fds_index_expr_resolve_filtered(fds_store *st, const char *expr,
                                    const fds_index_expr_opts *o,
                                    fds_index ***out, size_t *n,
                                    char ***filters, fds_err *err)
{
    *out = NULL;
    *n = 0;
    if (expr && strchr(expr, '<')) { /* <static-{now/d}>: date math names */
        char *dm = malloc(EXPR_DATE_MATH_MAX);
        int rc = dm ? date_math_names(expr, dm, EXPR_DATE_MATH_MAX, err)
                    : fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                   "out of memory");
        if (!rc)
            rc = fds_index_expr_resolve_filtered(st, dm, o, out, n, filters, err);
        free(dm);
        return rc;
    }
    if (filters)
        *filters = NULL;
    int vrc = fds_index_expr_check(expr, err);
    if (vrc)
        return vrc;
    /* one concrete index name, the common case: no listing of the node */
    if (expr && *expr && !strpbrk(expr, ",*") && strcmp(expr, "_all") &&
        !fds_store_alias_exists(st, expr)) {
        int rc = resolve_one(st, expr, o, out, n, err);
        if (!rc && filters && !(*filters = calloc(1, sizeof **filters))) {
            fds_index_expr_free(*out, *n);
            *out = NULL;
            *n = 0;
            return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                "out of memory");
        }
        return rc;
    }
    node_set s;
    if (node_set_load(st, &s))
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    bool *take = calloc(s.n ? s.n : 1, sizeof *take);
    char *copy = strdup(expr && *expr ? expr : "_all");
    int rc = take && copy ? 0 : FDS_ENOMEM;
    bool wild_seen = false;
    for (char *save = NULL, *t = rc ? NULL : strtok_r(copy, ",", &save);
         t && !rc; t = strtok_r(NULL, ",", &save)) {
        rc = apply_item(&s, t, take, o, wild_seen, err);
        wild_seen |= strchr(t, '*') != NULL || !strcmp(t, "_all");
    }
    size_t k = 0;
    for (size_t i = 0; !rc && i < s.n; i++)
        k += take[i];
    if (!rc && k == 0 && !o->allow_no_indices)
        rc = not_found(err, expr && *expr ? expr : "_all");
    fds_index **ixs = rc ? NULL : calloc(k ? k : 1, sizeof *ixs);
    char **fl = rc || !filters ? NULL : calloc(k ? k : 1, sizeof *fl);
    if (!rc && (!ixs || (filters && !fl)))
        rc = FDS_ENOMEM;
    for (size_t i = 0, j = 0; !rc && i < s.n; i++)
        if (take[i]) {
            if (fl && index_filter(&s, i, &fl[j]))
                rc = FDS_ENOMEM;
            ixs[j++] = s.all[i];
            s.all[i] = NULL; /* the reference moves to the answer */
        }
    if (rc == FDS_ENOMEM)
        fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    free(take);
    free(copy);
    node_set_free(&s);
    if (rc) {
        fds_index_expr_free(ixs, k);
        fds_index_expr_filters_free(fl, k);
        return rc;
    }
    *out = ixs;
    *n = k;
    if (filters)
        *filters = fl;
    return 0;
}

/* One {expression: boost} entry over the indices not boosted yet. */
static int boost_entry(fds_store *st, const cJSON *e, const fds_index_expr_opts *o,
                       fds_index *const *ixs, size_t n, float *boosts,
                       bool *set, fds_err *err)
{
    if (!cJSON_IsNumber(e))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[indices_boost] the boost of [%s] must be a number",
                            e->string);
    fds_index_expr_opts eo = *o;
    eo.allow_no_indices = true;
    fds_index **hit = NULL;
    size_t nh = 0;
    int rc = fds_index_expr_resolve(st, e->string, &eo, &hit, &nh, err);
    for (size_t i = 0; !rc && i < n; i++)
        for (size_t k = 0; k < nh && !set[i]; k++)
            if (hit[k] == ixs[i]) {
                boosts[i] = (float)e->valuedouble;
                set[i] = true;
            }
    fds_index_expr_free(hit, nh);
    return rc;
}

int fds_index_expr_boosts(fds_store *st, const char *body, size_t len,
                          const fds_index_expr_opts *o, fds_index *const *ixs,
                          size_t n, float *boosts, fds_err *err)
{
    for (size_t i = 0; i < n; i++)
        boosts[i] = 1.0f;
    /* most bodies have none: no second parse for them */
    static const char key[] = "indices_boost";
    if (!body || !memmem(body, len, key, sizeof key - 1))
        return 0;
    cJSON *root = cJSON_ParseWithLength(body, len);
    const cJSON *ib = cJSON_GetObjectItemCaseSensitive(root, "indices_boost");
    if (!ib) {
        cJSON_Delete(root);
        return 0;
    }
    bool *set = calloc(n ? n : 1, sizeof *set);
    int rc = set ? 0 : fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                    "out of memory");
    if (!rc && !cJSON_IsArray(ib) && !cJSON_IsObject(ib))
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                          "[indices_boost] must be an array of objects or an "
                          "object");
    const cJSON *it;
    cJSON_ArrayForEach(it, ib) {
        if (rc)
            break;
        if (cJSON_IsObject(ib)) {
            rc = boost_entry(st, it, o, ixs, n, boosts, set, err);
            continue;
        }
        if (!cJSON_IsObject(it) || !it->child || it->child->next)
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                              "[indices_boost] each element must be an object "
                              "with one index and its boost");
        else
            rc = boost_entry(st, it->child, o, ixs, n, boosts, set, err);
    }
    free(set);
    cJSON_Delete(root);
    return rc;
}
