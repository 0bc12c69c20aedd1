/*
 * dsl_parse.c: the Elasticsearch query DSL parser -- a `_search` / `_count`
 * body (and the URL parameters of `_search`) into an fds_search_request
 * (search_request.h).
 *
 * This file holds the entry points, the reading of the body (big integers
 * quoted, strings holding a NUL) and the keys of a search alone (query,
 * min_score, track_total_hits, search_after, timeout, terminate_after, pit,
 * aggs); the keys
 * that shape the hits are dsl_hits.c, the query object dsl_parse_query.c,
 * the URL parameters dsl_url.c.
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

#include "ast/agg_tree.h"
#include "time/datemath.h"
#include "dsl/dsl_parse_int.h"
#include "fds_time.h"

/* A search `timeout` as Elasticsearch's TimeValue reads it
 * (fds_time_value_ns), or -1 for none; 0 stops at once.  0 or FDS_EINVAL. */
int fds__dsl_timeout(fds_search_request *r, const char *v, fds_err *err)
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

/* `terminate_after` (SearchSourceBuilder: an int, a numeric string
 * coerced, 0 = none, negative refused as terminateAfter(int) refuses it). */
static int parse_terminate_after(fds_search_request *r, const cJSON *v,
                                 fds_err *err)
{
    double d = NAN;
    if (cJSON_IsNumber(v)) {
        d = v->valuedouble;
    } else if (cJSON_IsString(v) && *v->valuestring) {
        char *end;
        d = strtod(v->valuestring, &end);
        if (*end)
            d = NAN;
    }
    if (!(d == floor(d)) || d > INT32_MAX)
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                            "[terminate_after] failed to parse field value [%s]",
                            cJSON_IsString(v) ? v->valuestring : fds__dsl_jtype(v));
    if (d < 0)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "terminateAfter must be > 0");
    r->terminate_after = (uint64_t)d;
    return 0;
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

/* "min_score": a finite number (or its text).  0 or FDS_EPARSE. */
int fds__dsl_min_score(fds_search_request *r, const cJSON *v,
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

/* "runtime_mappings": none defined (Kibana sends {} with every search of
 * a data view without runtime fields) costs nothing; a runtime field would
 * need a script, which this store does not run, so one is refused. */
static int runtime_mappings(const cJSON *it, fds_err *err)
{
    if (!cJSON_IsObject(it))
        return fds__dsl_err(err, "Expected map for runtime_mappings, got a %s",
                            fds__dsl_jtype(it));
    if (it->child)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[runtime_mappings] is not supported: runtime "
                            "field [%s] needs a script, and scripts are not "
                            "run here", it->child->string);
    return 0;
}

/* One top-level key `it` of a search body: query and min_score (the only
 * keys of a `_count` body), the keys that shape the hits (dsl_hits.c),
 * then those of a search alone.  0 or an FDS_E* code. */
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
        return fds__dsl_min_score(r, it, err);
    if (for_count)
        return fds__dsl_err(err, "request does not support [%s]", k);
    int rc = fds__dsl_hits_key(c, r, it);
    if (rc <= 0)
        return rc;
    if (!strcmp(k, "track_total_hits"))
        return parse_track(r, it, err);
    if (!strcmp(k, "search_after"))
        return fds__dsl_search_after(r, it, err);
    if (!strcmp(k, "timeout")) {
        if (!cJSON_IsString(it))
            return fds__dsl_err(err, "[timeout] must be a time value string "
                                     "such as \"30s\"");
        return fds__dsl_timeout(r, it->valuestring, err);
    }
    if (!strcmp(k, "terminate_after"))
        return parse_terminate_after(r, it, err);
    if (!strcmp(k, "pit")) { /* its id and keep_alive are read by src/http */
        r->pit = true;
        return 0;
    }
    if (!strcmp(k, "profile") || !strcmp(k, "indices_boost")) /* src/http */
        return 0;
    if (!strcmp(k, "aggs") || !strcmp(k, "aggregations"))
        return fds__dsl_aggs(c, it, &r->aggs);
    if (!strcmp(k, "runtime_mappings"))
        return runtime_mappings(it, err);
    return fds__dsl_err(err, "Unknown key for a %s in [%s].",
                        fds__dsl_jtype(it), k);
}

/* Does q give every doc it matches the same score (no query: match_all)?
 * Filters, and a bool whose scoring clauses are all such. */
static bool constant_score(const fds_query *q)
{
    if (!q)
        return true;
    switch (q->type) {
    case FDS_Q_MATCH_ALL: case FDS_Q_MATCH_NONE: case FDS_Q_TERMS:
    case FDS_Q_RANGE: case FDS_Q_EXISTS: case FDS_Q_IDS: case FDS_Q_PATTERN:
    case FDS_Q_CONST:
        return true;
    case FDS_Q_BOOL:
        if (q->nshould)
            return false; /* a doc scores more the more clauses it matches */
        for (size_t i = 0; i < q->nmust; i++)
            if (!constant_score(q->must[i]))
                return false;
        return q->nmust <= 1;
    default:
        return false;
    }
}

static const fds_agg *find_sampler(const fds_agg *a)
{
    if (!a)
        return NULL;
    if (a->type == FDS_AGG_SAMPLER)
        return a;
    for (size_t k = 0; k < a->nsubs; k++) {
        const fds_agg *s = find_sampler(a->subs[k]);
        if (s)
            return s;
    }
    return NULL;
}

/* A sampler takes a shard's best documents by score, and collects the
 * first ones it matches (buckets.c): under a query whose scores differ
 * those are not the same documents, so it is refused. */
static int sampler_check(const fds_search_request *r, fds_err *err)
{
    const fds_agg *s = find_sampler(r->aggs);
    if (!s || constant_score(r->query))
        return 0;
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "[sampler] [%s] under a scoring query is not "
                        "supported: its sample is taken in document order, "
                        "which is the order of the best scores only when "
                        "every document scores the same (put the query in a "
                        "bool filter)", s->name);
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
    l->index_name = NULL;
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
        rc = fds__dsl_pit_tiebreak(r, err);
    if (!rc)
        rc = fds__dsl_after_check(r, err);
    if (!rc && !for_count) /* _count fetches no page */
        rc = fds__dsl_window_check(r, err);
    if (!rc)
        rc = fds__dsl_stored_check(r, err);
    if (!rc)
        rc = sampler_check(r, err);
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
