/*
 * bulk.c: _bulk -- the NDJSON body split into action/metadata and source
 * items (fds__bulk_parse, which the fuzz target drives alone), their
 * checks, the writes in one batch per index, update items through
 * doc_update.c, and the answer's items in request order.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_clock.h"
#include "bulk.h"
#include "doc_source.h"
#include "doc_update.h"
#include "doc_write.h"
#include "fds_text.h"
#include "handlers.h"
#include "request.h"
#include "response.h"

typedef struct bulk_item {
    char action[8];          /* "index", "create", "delete", "update" */
    char *index;             /* malloc'd */
    fds_write_op op;
    fds_write_result *res;   /* the item's in bulk_parse's array of
                                results, contiguous in item order */
    char *pipeline;          /* malloc'd, or NULL: the request's */
    int require_alias;       /* -1: the request's; 0; 1 */
    char *routing;           /* malloc'd, or NULL: the request's */
    bool dynamic_templates;  /* a non-empty dynamic_templates (refused) */
    int retries;             /* retry_on_conflict; -1: none given */
    fds__source_spec src;    /* update: its own _source (src.given) */
    fds__upd_answer upd;          /* update: noop and "get" */
} bulk_item;

static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

static bool blank(const char *p, const char *e)
{
    for (; p < e; p++)
        if (!strchr(" \t\r", *p))
            return false;
    return true;
}

/* The text of the number an action line gives to `key` (`_id`, `routing`,
 * ...): Elasticsearch reads such a number as its text, so 9007199254740993
 * keeps every digit (a double would not) and 1.0 stays "1.0".  Scans
 * p[0..end) for `key` in the action's object (depth 2); NULL when not
 * there. */
static const char *member_number_text(const char *p, const char *end,
                                      const char *key, size_t *len)
{
    size_t kl = strlen(key);
    int depth = 0;
    while (p < end) {
        char ch = *p++;
        if (ch == '{' || ch == '[')
            depth++;
        else if (ch == '}' || ch == ']')
            depth--;
        if (ch != '"')
            continue;
        const char *s = p;
        while (p < end && *p != '"')
            p += *p == '\\' ? 2 : 1;
        if (p >= end)
            return NULL;
        bool is_key = depth == 2 && (size_t)(p - s) == kl && !memcmp(s, key, kl);
        const char *q = ++p;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (!is_key || q >= end || *q != ':')
            continue;
        for (q++; q < end && (*q == ' ' || *q == '\t' || *q == '\r');)
            q++;
        const char *n0 = q;
        while (q < end && ((*q >= '0' && *q <= '9') || *q == '-' || *q == '+' ||
                           *q == '.' || *q == 'e' || *q == 'E'))
            q++;
        if (q > n0) {
            *len = (size_t)(q - n0);
            return n0;
        }
    }
    return NULL;
}

/* Set it->op.id to a copy of id[0..len).  A failed copy fails the item
 * (it must never become a write under an assigned id). */
static void bulk_set_id(bulk_item *it, const char *id, size_t len)
{
    free((char *)it->op.id);
    it->op.id = strndup(id, len);
    it->op.id_len = it->op.id ? len : 0;
    if (!it->op.id)
        it->res->code = fds_err_setk(&it->res->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                    "out of memory copying the _id");
}

/* A number of an action line that must be a long (if_seq_no,
 * if_primary_term, version): whole and within int64_t, never a cast of an
 * out-of-range double (undefined behaviour).  Returns 0 or FDS_EPARSE. */
static int meta_long(const cJSON *m, size_t line, int64_t *out, fds_err *err)
{
    double v = m->valuedouble;
    /* [-2^63, 2^63): both bounds are exact doubles */
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0) ||
        v != floor(v))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                            "Action/metadata line [%zu]: [%s] must be a long, "
                            "got [%.17g]", line, m->string, v);
    *out = (int64_t)v;
    return 0;
}

/* Size of the buffer meta_text writes a number's text to when the line
 * does not show it: %.17g of any double fits. */
#define META_NUMBER_TEXT_MAX 32

/* The text Elasticsearch's parser.text() reads from the value of member m
 * of action line p[0..end) -- a string, number or boolean, the only values
 * the caller passes: the string itself, the number as written
 * (member_number_text; `buf` holds cJSON's value should the text not be
 * found), "true" or "false".  Its length in *len. */
static const char *meta_text(const cJSON *m, const char *p, const char *end,
                             char buf[META_NUMBER_TEXT_MAX], size_t *len)
{
    if (cJSON_IsString(m)) {
        *len = strlen(m->valuestring); /* a NUL inside was refused */
        return m->valuestring;
    }
    if (cJSON_IsBool(m)) {
        *len = cJSON_IsTrue(m) ? 4 : 5;
        return cJSON_IsTrue(m) ? "true" : "false";
    }
    const char *t = member_number_text(p, end, m->string, len);
    if (t)
        return t;
    *len = (size_t)snprintf(buf, META_NUMBER_TEXT_MAX, "%.17g", m->valuedouble);
    return buf;
}

/* A long given as a string ("version":"5"), as Elasticsearch's parser
 * coerces it (AbstractXContentParser.toLong with coerce): a whole number,
 * else a decimal one truncated toward zero, within int64_t.  Returns 0 or
 * FDS_EPARSE with Elasticsearch's reason. */
static int text_long(const char *t, size_t n, int64_t *out, fds_err *err)
{
    char *s = strndup(t, n);
    if (!s)
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    char *e = NULL;
    errno = 0;
    long long v = isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+'
                      ? strtoll(s, &e, 10) : 0;
    int rc = 0;
    if (e && !*e && errno != ERANGE) {
        *out = v;
        free(s);
        return 0;
    }
    /* BigDecimal's syntax: a sign, digits with at most one point (one
     * digit at least), an exponent */
    size_t i = s[0] == '-' || s[0] == '+', digits = 0;
    while (i < n && isdigit((unsigned char)s[i]))
        i++, digits++;
    if (i < n && s[i] == '.')
        for (i++; i < n && isdigit((unsigned char)s[i]);)
            i++, digits++;
    if (digits && i < n && (s[i] == 'e' || s[i] == 'E')) {
        if (++i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t d0 = i;
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
        if (i == d0)
            digits = 0;
    }
    long double d = digits && i == n ? strtold(s, NULL) : 0;
    if (!digits || i != n)
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                          "For input string: \"%s\"", s);
    else if (!(d < 9223372036854775808.0L && d > -9223372036854775809.0L))
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                          "Value [%s] is out of range for a long", s);
    else
        *out = (int64_t)truncl(d);
    free(s);
    return rc;
}

/* A long member of an action line (if_seq_no, if_primary_term, version,
 * retry_on_conflict): a number (meta_long) or a string that holds one
 * (text_long).  Returns 0 or FDS_EPARSE. */
static int meta_long_any(const cJSON *m, size_t line, int64_t *out,
                         fds_err *err)
{
    if (cJSON_IsNumber(m))
        return meta_long(m, line, out, err);
    if (cJSON_IsString(m))
        return text_long(m->valuestring, strlen(m->valuestring), out, err);
    return fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                        "Action/metadata line [%zu]: [%s] must be a long, "
                        "got [%s]", line, m->string,
                        cJSON_IsTrue(m) ? "true" : "false");
}

/* The keys a plain action line may give (see action_plain). */
enum { PLAIN_INDEX, PLAIN_ID, PLAIN_ROUTING, PLAIN_NKEYS };

static const char *const PLAIN_KEYS[PLAIN_NKEYS] = {"_index", "_id", "routing"};

/* An action line as bulk clients write nearly all of them:
 * {"index":{"_index":"logs","_id":"42"}}, compact. */
typedef struct plain_action {
    const char *action;          /* "index", "create", "delete" or "update" */
    const char *val[PLAIN_NKEYS]; /* into the line; NULL: not given */
    size_t len[PLAIN_NKEYS];
} plain_action;

/* A JSON string at p[0..end) of printable ASCII without escapes: its
 * length up to the closing quote, or -1. */
static ptrdiff_t plain_string(const char *p, const char *end)
{
    const char *q = p;
    while (q < end && *q != '"') {
        if (*q < 0x20 || *q > 0x7e || *q == '\\')
            return -1;
        q++;
    }
    return q < end ? q - p : -1;
}

/* Whether the action line p[0..end) is a plain one: with no whitespace,
 * one action holding only "_index", "_id" and "routing" (each at most
 * once) with string values of printable ASCII and no escapes.  Such a line
 * is valid UTF-8 and JSON with no duplicate key, and means to the general
 * parser of bulk_parse what `pa` says; any other line (spaces, numbers,
 * other keys, errors) goes to that parser, which words the errors. */
static bool action_plain(const char *p, const char *end, plain_action *pa)
{
    static const char *const ACTIONS[] = {"index", "create", "delete", "update"};
    memset(pa, 0, sizeof *pa);
    if (end - p < 2 || p[0] != '{' || p[1] != '"')
        return false;
    p += 2;
    ptrdiff_t l = plain_string(p, end);
    for (size_t a = 0; l > 0 && a < sizeof ACTIONS / sizeof *ACTIONS; a++)
        if ((size_t)l == strlen(ACTIONS[a]) && !memcmp(p, ACTIONS[a], (size_t)l))
            pa->action = ACTIONS[a];
    if (!pa->action)
        return false;
    p += l + 1;
    if (end - p < 2 || p[0] != ':' || p[1] != '{')
        return false;
    p += 2;
    if (p < end && *p == '}') {
        p++;
    } else {
        for (;;) {
            if (p >= end || *p != '"')
                return false;
            p++;
            if ((l = plain_string(p, end)) < 0)
                return false;
            int k = 0;
            while (k < PLAIN_NKEYS && !((size_t)l == strlen(PLAIN_KEYS[k]) &&
                                        !memcmp(p, PLAIN_KEYS[k], (size_t)l)))
                k++;
            if (k == PLAIN_NKEYS || pa->val[k])
                return false;
            p += l + 1;
            if (end - p < 2 || p[0] != ':' || p[1] != '"')
                return false;
            p += 2;
            if ((l = plain_string(p, end)) < 0)
                return false;
            pa->val[k] = p;
            pa->len[k] = (size_t)l;
            p += l + 1;
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            return false;
        }
    }
    return end - p == 1 && *p == '}';
}

/* What item `it` owns (its strings, its update's source spec). */
static void bulk_item_free(bulk_item *it)
{
    free(it->index);
    free((char *)it->op.id);
    free(it->pipeline);
    free(it->routing);
    free(it->upd.get.p);
    fds__source_spec_free(&it->src);
}

/* Duplicate t[0..n) into *dst (freeing what it held).  0 or FDS_ENOMEM. */
static int meta_dup(char **dst, const char *t, size_t n)
{
    free(*dst);
    *dst = strndup(t, n);
    return *dst ? 0 : FDS_ENOMEM;
}

/* Member m of action line p[0..end) (number `line`) into item `it`, as
 * Elasticsearch's BulkRequestParser reads it: any value of `_index`,
 * `_id`, `routing`, `pipeline`, `op_type` and `version_type` is taken as
 * its text ("_id": 1 is the id "1", "_id": true the id "true"); the longs
 * take a number or a string holding one; `require_alias` a boolean or
 * "true"/"false"; a null is ignored whatever the key; an array, or an
 * object other than `_source` and `dynamic_templates`, is refused.
 * Returns 0, FDS_EPARSE (err filled) or FDS_ENOMEM. */
/* Elasticsearch's Versions.MATCH_ANY: the version of a write that gives
 * none */
#define BULK_VERSION_MATCH_ANY (-3)

static int bulk_meta(bulk_item *it, const cJSON *m, const char *p,
                     const char *end, size_t line, bool *has_version,
                     int *vtype, fds_err *err)
{
    const char *k = m->string;
    if (cJSON_IsNull(m))
        return 0;
    if (cJSON_IsArray(m) || (cJSON_IsObject(m) && strcmp(k, "_source") &&
                             strcmp(k, "dynamic_templates")))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                            "Malformed action/metadata line [%zu], expected a "
                            "simple value for field [%s] but found [%s]", line,
                            k, cJSON_IsArray(m) ? "START_ARRAY" : "START_OBJECT");
    char nbuf[META_NUMBER_TEXT_MAX];
    size_t tl = 0;
    const char *t = cJSON_IsObject(m) ? NULL : meta_text(m, p, end, nbuf, &tl);
    int64_t v = 0;
    int rc = 0;
    if (!strcmp(k, "_index")) {
        rc = meta_dup(&it->index, t, tl);
    } else if (!strcmp(k, "_id")) {
        bulk_set_id(it, t, tl);
    } else if (!strcmp(k, "routing")) {
        rc = meta_dup(&it->routing, t, tl);
    } else if (!strcmp(k, "pipeline")) {
        rc = meta_dup(&it->pipeline, t, tl);
    } else if (!strcmp(k, "if_seq_no")) {
        it->op.check_seq_no = true;
        rc = meta_long_any(m, line, &it->op.if_seq_no, err);
    } else if (!strcmp(k, "if_primary_term")) {
        rc = meta_long_any(m, line, &it->op.if_primary_term, err);
    } else if (!strcmp(k, "version")) {
        rc = meta_long_any(m, line, &it->op.external_version, err);
        *has_version = true;
    } else if (!strcmp(k, "version_type")) {
        /* an fds_version_type, checked with "version" by the caller */
        if ((tl == 8 || tl == 12) && !memcmp(t, "external_gte", tl))
            *vtype = tl == 12 ? FDS_VERSION_EXTERNAL_GTE : FDS_VERSION_EXTERNAL;
        else if (tl == 8 && !memcmp(t, "internal", 8))
            *vtype = FDS_VERSION_INTERNAL;
        else
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "No version type match [%.*s]", (int)tl, t);
    } else if (!strcmp(k, "require_alias")) {
        if (cJSON_IsBool(m) || (tl == 4 && !memcmp(t, "true", 4)) ||
            (tl == 5 && !memcmp(t, "false", 5)))
            it->require_alias = t[0] == 't';
        else
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "Failed to parse value [%.*s] as only [true] or "
                              "[false] are allowed.", (int)tl, t);
    } else if (!strcmp(k, "retry_on_conflict")) {
        rc = meta_long_any(m, line, &v, err);
        if (!rc && (v < 0 || v > FDS_UPDATE_RETRIES_MAX))
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "Action/metadata line [%zu]: "
                              "[retry_on_conflict] must be from 0 to %d",
                              line, FDS_UPDATE_RETRIES_MAX);
        it->retries = (int)v;
    } else if (!strcmp(k, "_source")) {
        /* the "get" of an update's answer; an index or create item has
         * none (Elasticsearch reads it for every action) */
        rc = fds__source_spec_json(m, &it->src, err);
    } else if (!strcmp(k, "op_type") && !strcmp(it->action, "index")) {
        if (tl == 6 && !memcmp(t, "create", 6))
            snprintf(it->action, sizeof it->action, "create");
        else if (!(tl == 5 && !memcmp(t, "index", 5)))
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                              "Action/metadata line [%zu]: opType must be "
                              "'create' or 'index', found: [%.*s]", line,
                              (int)tl, t);
    } else if (!strcmp(k, "dynamic_templates") && cJSON_IsObject(m)) {
        it->dynamic_templates = m->child != NULL;
    } else {
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                          "Action/metadata line [%zu] contains an unknown "
                          "parameter [%s]", line, k);
    }
    if (rc == FDS_ENOMEM)
        fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return rc;
}

/* Action/metadata line p[0..le) (line number `line`): its action in
 * *act, and either its plain fields (*plain, pa) or its parsed JSON (*a,
 * the caller deletes it; *act points into it).  0, or FDS_EPARSE /
 * FDS_EINVAL with `err` filled (then *a is NULL): the whole request is
 * refused, as Elasticsearch's parser refuses it. */
static int bulk_action_line(const char *p, const char *le, size_t line,
                            plain_action *pa, bool *plain, cJSON **a,
                            const char **act, fds_err *err)
{
    *plain = action_plain(p, le, pa);
    *a = NULL;
    if (!*plain &&
        !fds_utf8_valid((const uint8_t *)p, (size_t)(le - p)))
        /* as Elasticsearch's JSON parser: the whole request is refused */
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                            "Invalid UTF-8 in action/metadata line [%zu]", line);
    cJSON *j = *plain ? NULL : cJSON_ParseWithLength(p, (size_t)(le - p));
    bool nul = false;
    int rc;
    if (j && (rc = fds_json_check_body_nul(p, (size_t)(le - p), &nul, err)))
        goto fail;
    if (j && cJSON_IsObject(j) && !j->child) {
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                          "Malformed action/metadata line [%zu], expected "
                          "FIELD_NAME but found [END_OBJECT]", line);
        goto fail;
    }
    if (!*plain && (!j || !cJSON_IsObject(j) || !j->child ||
                    j->child->next || !cJSON_IsObject(j->child))) {
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                         "Malformed action/metadata line [%zu], expected "
                         "START_OBJECT with one action", line);
        goto fail;
    }
    if (nul) {
        /* the parser's strings end at a NUL: an _id would be cut short
         * (as "%00" in a path is refused, request.c) */
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                          "Malformed action/metadata line [%zu]: a string "
                          "holds a NUL character (\\u0000), which "
                          "_index, _id, routing and pipeline cannot",
                          line);
        goto fail;
    }
    *act = *plain ? pa->action : j->child->string;
    if (strcmp(*act, "index") && strcmp(*act, "create") &&
        strcmp(*act, "delete") && strcmp(*act, "update")) {
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                         "Malformed action/metadata line [%zu], expected "
                         "field [create], [delete], [index] or [update] but "
                         "found [%s]", line, *act);
        goto fail;
    }
    *a = j;
    return 0;
fail:
    cJSON_Delete(j);
    return rc;
}

/* Item `it` from its action line: the plain fields `pa` or each member
 * of the metadata `a`, then the version checks of BulkRequest#validate.
 * 0, FDS_ENOMEM, or an error with `err` filled. */
static int bulk_item_meta(bulk_item *it, bool plain, const plain_action *pa,
                          const cJSON *a, const char *p, const char *le,
                          size_t line, fds_err *err)
{
    int rc = 0;
    bool has_version = false;
    int vtype = FDS_VERSION_INTERNAL;
    if (plain) {
        if (pa->val[PLAIN_INDEX] &&
            !(it->index = strndup(pa->val[PLAIN_INDEX], pa->len[PLAIN_INDEX])))
            rc = FDS_ENOMEM;
        if (pa->val[PLAIN_ID])
            bulk_set_id(it, pa->val[PLAIN_ID], pa->len[PLAIN_ID]);
        if (pa->val[PLAIN_ROUTING] &&
            !(it->routing = strndup(pa->val[PLAIN_ROUTING],
                                    pa->len[PLAIN_ROUTING])))
            rc = FDS_ENOMEM;
    }
    for (cJSON *m = a ? a->child->child : NULL; m && !rc; m = m->next)
        rc = bulk_meta(it, m, p, le, line, &has_version, &vtype, err);
    if (rc)
        return rc;
    /* DocWriteRequest.validateSeqNoBasedCASParams, checked by
     * BulkRequest#validate for the whole request: an external version
     * must be >= 0 (no version is Versions.MATCH_ANY, -3), and internal
     * versioning takes no version at all */
    if (vtype != FDS_VERSION_INTERNAL) {
        if (!has_version)
            it->op.external_version = BULK_VERSION_MATCH_ANY;
        it->op.version_type = vtype;
        if (it->op.external_version < 0)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                                "Validation Failed: 1: illegal version value "
                                "[%lld] for version type [%s];",
                                (long long)it->op.external_version,
                                vtype == FDS_VERSION_EXTERNAL_GTE
                                    ? "EXTERNAL_GTE" : "EXTERNAL");
    } else if (has_version &&
               it->op.external_version != BULK_VERSION_MATCH_ANY) {
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                            "Validation Failed: 1: internal versioning can "
                            "not be used for optimistic concurrency control. "
                            "Please use `if_seq_no` and `if_primary_term` "
                            "instead;");
    }
    return 0;
}

/* Parse the NDJSON body into items.  Returns 0 or fills err (400). */
static int bulk_parse(fds_req *r, const char *default_index, bulk_item **out,
                      size_t *nout, fds_err *err)
{
    const char *p = r->body, *end = r->body + r->body_len;
    /* an item per line at most: one allocation, never grown, with the
     * results of the items after them */
    size_t cap = 1, n = 0, line = 0;
    for (const char *q = p; q < end && (q = memchr(q, '\n', (size_t)(end - q)));
         q++)
        cap++;
    bulk_item *items = calloc(cap, sizeof *items + sizeof(fds_write_result));
    if (!items)
        return FDS_ENOMEM;
    fds_write_result *results = (fds_write_result *)(items + cap);
    int rc = 0;
    while (p < end && !rc) {
        const char *le = line_end(p, end);
        line++;
        if (blank(p, le)) {
            p = le + 1;
            continue;
        }
        plain_action pa;
        bool plain;
        cJSON *a;
        const char *act = NULL;
        if ((rc = bulk_action_line(p, le, line, &pa, &plain, &a, &act, err)))
            break;
        bulk_item *it = &items[n];
        it->res = &results[n++];
        /* written, not read, first: the array is a fresh mapping (~1.6 KiB
         * of result per item); a page read first maps the shared zero
         * page, and its first write then faults again and flushes the TLB
         * of every core running one of the process's threads (with the
         * read in bulk_validate first, 7% of a 1M-document load's CPU,
         * perf).  volatile: the store of a zero into calloc'd memory is
         * otherwise dropped. */
        *(volatile int *)&it->res->code = 0;
        it->require_alias = -1;
        it->retries = -1;
        snprintf(it->action, sizeof it->action, "%s", act);
        act = it->action; /* `a` is freed below */
        rc = bulk_item_meta(it, plain, &pa, a, p, le, line, err);
        cJSON_Delete(a);
        if (rc)
            break;
        if (!it->index)
            it->index = default_index ? strdup(default_index) : NULL;
        if (!it->index) {
            rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                             "Validation Failed: 1: index is missing;");
            break;
        }
        p = le + 1;
        if (!strcmp(act, "delete")) {
            it->op.type = FDS_OP_DELETE;
            continue;
        }
        it->op.type = !strcmp(act, "create") ? FDS_OP_CREATE : FDS_OP_INDEX;
        if (p >= end) {
            /* an action line last, with no source line: Elasticsearch's
             * parser stops there and drops it */
            bulk_item_free(it);
            memset(it, 0, sizeof *it);
            n--;
            break;
        }
        const char *de = line_end(p, end);
        line++;
        if (de == end && (end == r->body || end[-1] != '\n')) {
            rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_INVALID_ARGUMENT,
                             "The bulk request must be terminated by a newline "
                             "[\\n]");
            break;
        }
        size_t dl = (size_t)(de - p);
        while (dl && p[dl - 1] == '\r')
            dl--;
        it->op.src = (const uint8_t *)p;
        it->op.src_len = dl;
        p = de + 1;
    }
    *out = items;
    *nout = n;
    return rc;
}

static void bulk_items_free(bulk_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bulk_item_free(&items[i]);
    free(items);
}

int fds__bulk_parse(const char *body, size_t len, const char *default_index,
                    fds__bulk_visit visit, void *arg, fds_err *err)
{
    fds_req r = {.body = body, .body_len = len};
    bulk_item *items = NULL;
    size_t n = 0;
    int rc = bulk_parse(&r, default_index, &items, &n, err);
    for (size_t i = 0; i < n && visit && !rc; i++)
        visit(arg, items[i].action, items[i].index, &items[i].op);
    bulk_items_free(items, n);
    return rc;
}

/* Elasticsearch's BulkRequest#validate: the validation errors of every item,
 * numbered in one message ("Validation Failed: 1: id is missing;2: ...;"),
 * refuse the whole request before anything is written.  Returns 0, or
 * FDS_EINVAL (kind VALIDATION) / FDS_ENOMEM with `err` filled. */
static int bulk_validate(const bulk_item *items, size_t n, fds_err *err)
{
    fds_strbuf b = {0};
    unsigned nerr = 0;
    if (n == 0)
        fds_strbuf_printf(&b, "%u: no requests added;", ++nerr);
    for (size_t i = 0; i < n; i++) {
        const bulk_item *it = &items[i];
        char msg[FDS_ERR_REASON_MAX];
        bool required = it->op.type == FDS_OP_DELETE || !strcmp(it->action, "update");
        if (!it->res->code &&
            fds_write_id_validate(it->op.id, it->op.id_len, required, msg, sizeof msg))
            fds_strbuf_printf(&b, "%u: %s;", ++nerr, msg);
    }
    int rc = 0;
    if (b.oom)
        rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    else if (nerr)
        rc = fds_err_setk(err, FDS_EINVAL, FDS_KIND_VALIDATION,
                          "Validation Failed: %s", b.p);
    free(b.p);
    return rc;
}

/* Bytes of the answer reserved per item at once (it grows as needed). */
#define BULK_ITEM_ANSWER_BYTES 200

static const char *const BULK_PARAMS[] = {
    "refresh", "routing", "pipeline", "require_alias", "_source",
    "_source_includes", "_source_excludes", NULL};

/* Fail item `it` before it is written, with the error in `e`. */
static void bulk_item_fail(bulk_item *it, const fds_err *e)
{
    it->res->code = e->code ? e->code : FDS_EINVAL;
    it->res->err = *e;
    if (it->op.id)
        snprintf(it->res->id, sizeof it->res->id, "%.*s", (int)it->op.id_len,
                 it->op.id);
}

/* The options of each item, its own or the request's (URL parameters),
 * checked before anything is written: a refused item fails alone. */
static void bulk_check_opts(fds_req *r, bulk_item *items, size_t n)
{
    const char *pipeline = fds__req_param(r, "pipeline");
    const char *routing = fds__req_param(r, "routing");
    bool require_alias = fds__req_param_bool(r, "require_alias", false);
    for (size_t i = 0; i < n; i++) {
        bulk_item *it = &items[i];
        if (it->res->code)
            continue;
        fds_err e;
        fds_err_clear(&e);
        bool upd = !strcmp(it->action, "update");
        it->op.routing = it->routing ? it->routing : routing;
        it->op.routing_len = it->op.routing ? strlen(it->op.routing) : 0;
        if (fds__write_opts_check(r->store, it->index,
                             upd ? NULL : it->pipeline ? it->pipeline : pipeline,
                             it->require_alias >= 0 ? it->require_alias == 1
                                                    : require_alias, &e) ||
            (it->dynamic_templates &&
             fds_err_setk(&e, FDS_EUNSUPPORTED, FDS_KIND_INVALID_ARGUMENT,
                          "[dynamic_templates] are not supported: mappings "
                          "have no dynamic templates")))
            bulk_item_fail(it, &e);
    }
}

/* Bulk update item `it`, alone on `ix` (it reads the current document). */
static void bulk_update(fds_index *ix, bulk_item *it, const fds__source_spec *url_src,
                        bool refresh)
{
    fds__upd_req u = {.id = it->op.id, .id_len = it->op.id_len,
                 .routing = it->op.routing,
                 .check_seq_no = it->op.check_seq_no, .if_seq_no = it->op.if_seq_no,
                 .if_primary_term = it->op.if_primary_term,
                 .retries = it->retries > 0 ? (unsigned)it->retries : 0,
                 .dflt_src = it->src.given ? &it->src : url_src};
    fds_err e;
    fds_err_clear(&e);
    if (fds__update_parse((const char *)it->op.src, it->op.src_len, &u, &e)) {
        bulk_item_fail(it, &e);
    } else {
        fds_write_op op;
        fds__update_run(ix, &u, refresh, &op, it->res, &it->upd);
        it->op.type = op.type;
    }
    fds__source_spec_free(&u.src);
}

/* Write one batch: it[0..n), consecutive items on one index (or a
 * single update), `m` of them not refused already.  The index is found
 * or created (fds__index_for_write; an alias's items are answered with
 * the index), the items written in one fds_index_write (an update alone,
 * through doc_update.c) and each item's result set; refresh: refresh the
 * index after. */
static void bulk_batch(fds_req *r, bulk_item *it, size_t n, size_t m,
                       const fds__source_spec *url_src, bool refresh)
{
    fds_index *ix = NULL;
    fds_err ie;
    fds_err_clear(&ie);
    fds__index_for_write(r->store, it[0].index, &ix, &ie);
    for (size_t k = 0; ix && k < n; k++) { /* an alias: answer the index */
        char *concrete = strcmp(it[k].index, fds_index_name(ix))
                             ? strdup(fds_index_name(ix)) : NULL;
        if (concrete) {
            free(it[k].index);
            it[k].index = concrete;
        }
    }
    /* results go straight to the items' when none failed already */
    fds_write_op *ops = malloc(m * sizeof *ops);
    fds_write_result *res = m == n ? it[0].res : malloc(m * sizeof *res);
    if (ix && ops && res && !strcmp(it[0].action, "update")) {
        bulk_update(ix, &it[0], url_src, false);
        if (refresh)
            fds_index_refresh(ix, NULL);
    } else if (ix && ops && res) {
        /* items that failed already (a refused option, an id that could
         * not be copied) are answered as they are, never written */
        m = 0;
        for (size_t k = 0; k < n; k++)
            if (!it[k].res->code)
                ops[m++] = it[k].op;
        fds_err be;
        fds_err_clear(&be);
        int brc = fds_index_write(ix, ops, m, res, false, &be);
        bool direct = res == it[0].res;
        for (size_t k = 0, q = 0; k < n; k++) {
            if (direct) {
                if (brc) { /* not what the write left in it */
                    memset(it[k].res, 0, sizeof *it[k].res);
                    bulk_item_fail(&it[k], &be);
                }
                continue;
            }
            if (it[k].res->code)
                continue;
            if (brc)
                bulk_item_fail(&it[k], &be);
            else
                *it[k].res = res[q];
            q++;
        }
        if (refresh)
            fds_index_refresh(ix, NULL);
    } else {
        if (!ie.code)
            ie.code = FDS_ENOMEM;
        for (size_t k = 0; k < n; k++)
            if (!it[k].res->code)
                bulk_item_fail(&it[k], &ie);
    }
    free(ops);
    if (res != it[0].res)
        free(res);
    fds_index_release(ix);
}

/* The answer of a _bulk: took (since t0, microseconds), errors, and
 * each item's write result in request order. */
static void bulk_answer(fds_req *r, fds_resp *o, const bulk_item *items,
                        size_t n, long long t0)
{
    bool errors = false;
    for (size_t i = 0; i < n; i++)
        errors |= items[i].res->code != 0;
    fds_strbuf b = {0};
    /* a created item's answer is ~190 bytes with a short index and id */
    fds_strbuf_reserve(&b, n * BULK_ITEM_ANSWER_BYTES);
    fds_strbuf_printf(&b, "{\"took\":%lld,\"errors\":%s,\"items\":[",
              ((long long)fds_mono_us() - t0) / 1000, errors ? "true" : "false");
    for (size_t i = 0; i < n; i++) {
        fds_strbuf_puts(&b, i ? ",{\"" : "{\"");
        fds_strbuf_puts(&b, items[i].action);
        fds_strbuf_puts(&b, "\":");
        fds__write_item(&b, items[i].index, &items[i].op, items[i].res, true,
                   fds__forced_refresh(r), &items[i].upd);
        fds_strbuf_puts(&b, "}");
    }
    fds_strbuf_puts(&b, "]}");
    fds__resp_strbuf(o, 200, &b);
}

void fds__h_bulk(fds_req *r, fds_resp *o)
{
    if (!fds__refresh_ok(r, o))
        return;
    if (!fds__req_check_params(r, o, BULK_PARAMS))
        return;
    long long t0 = (long long)fds_mono_us();
    const char *dflt = r->nseg == 2 ? r->seg[0] : NULL;
    bulk_item *items = NULL;
    size_t n = 0;
    fds_err e;
    fds_err_clear(&e);
    fds__source_spec url_src = {0};
    int rc = bulk_parse(r, dflt, &items, &n, &e);
    if (!rc)
        rc = bulk_validate(items, n, &e);
    if (!rc)
        rc = fds__source_spec_params(r, &url_src, &e);
    if (rc)
        goto out_err;
    bulk_check_opts(r, items, n);
    bool refresh = fds__want_refresh(r);
    /* consecutive items on the same index go to the store as one batch */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(items[j].index, items[i].index) &&
               strcmp(items[j].action, "update"))
            j++;
        if (j == i)
            j = i + 1; /* an update goes alone: it reads the current doc */
        size_t m = 0;
        for (size_t k = i; k < j; k++)
            m += !items[k].res->code;
        if (!m) { /* all refused already: the index is not even created */
            i = j;
            continue;
        }
        bulk_batch(r, items + i, j - i, m, &url_src, refresh);
        i = j;
    }
    bulk_answer(r, o, items, n, t0);
    goto out;
out_err:
    fds__resp_error(o, &e);
out:
    fds__source_spec_free(&url_src);
    bulk_items_free(items, n);
}
