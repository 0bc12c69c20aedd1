/*
 * fds_lgwork.c: request messages for loadgen (see fds_lgwork.h).
 */
#include "fds_lgwork.h"

#include "fds_error.h"
#include "fds_lgworkint.h"
#include "fds_httpc.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t fds__lgwork_rand(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

double fds__lgwork_unit(uint64_t *s)
{
    return (double)(fds__lgwork_rand(s) >> 11) * 0x1.0p-53;
}

int fds__lgwork_add(fds_lgwork *w, size_t *cap, const char *host, const char *method,
                    const char *path, const char *body, unsigned char cls)
{
    if (w->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        char **m = realloc(w->msgs, nc * sizeof *m);
        if (!m)
            return FDS_ENOMEM;
        w->msgs = m;
        size_t *l = realloc(w->lens, nc * sizeof *l);
        if (!l)
            return FDS_ENOMEM;
        w->lens = l;
        unsigned char *c = realloc(w->classes, nc * sizeof *c);
        if (!c)
            return FDS_ENOMEM;
        w->classes = c;
        *cap = nc;
    }
    size_t blen = body ? strlen(body) : 0;
    size_t cap2 = strlen(path) + strlen(host) + blen + 200;
    char *m = malloc(cap2);
    if (!m)
        return FDS_ENOMEM;
    int n;
    if (body)
        n = snprintf(m, cap2,
                     "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     method, path, host, blen, body);
    else
        n = snprintf(m, cap2, "%s %s HTTP/1.1\r\nHost: %s\r\n\r\n", method, path, host);
    w->msgs[w->n] = m;
    w->lens[w->n] = (size_t)n;
    w->classes[w->n] = cls;
    w->n++;
    return 0;
}

void fds__lgwork_shares(fds_lgwork *w)
{
    size_t count[FDS_LGWORK_MAX_CLASSES] = {0};
    for (size_t i = 0; i < w->n && w->nclasses > 0; i++)
        count[w->classes[i]]++;
    for (int k = 0; k < w->nclasses; k++)
        w->class_share[k] = w->n ? (double)count[k] / (double)w->n : 0.0;
}

/* Message m (len bytes) with its Host header replaced by `host_header` and
 * the line `auth` added after it, malloc'ed into *out / *outlen.
 * 0, FDS_ENOMEM, or FDS_EINVAL without a Host header. */
static int retarget_one(const char *m, size_t len, const char *host_header, const char *auth,
                        char **out, size_t *outlen)
{
    const char *h = strstr(m, "\r\nHost: ");
    const char *he = h ? strstr(h + 2, "\r\n") : NULL;
    if (!h || !he)
        return FDS_EINVAL;
    size_t head = (size_t)(h - m) + 2, rest = len - (size_t)(he + 2 - m);
    size_t n = head + 6 + strlen(host_header) + 2 + strlen(auth) + rest;
    char *o = malloc(n + 1);
    if (!o)
        return FDS_ENOMEM;
    int k = snprintf(o, n + 1, "%.*sHost: %s\r\n%s", (int)head, m, host_header, auth);
    memcpy(o + k, he + 2, rest);
    o[n] = '\0';
    *out = o;
    *outlen = n;
    return 0;
}

int fds_lgwork_for_targets(fds_lgwork *w, const fds_httpc_target *t, int nt)
{
    size_t total = (size_t)nt * w->n;
    w->tmsgs = calloc(total ? total : 1, sizeof *w->tmsgs);
    w->tlens = calloc(total ? total : 1, sizeof *w->tlens);
    if (!w->tmsgs || !w->tlens)
        return FDS_ENOMEM;
    w->ntargets = nt;
    for (int k = 0; k < nt; k++)
        for (size_t i = 0; i < w->n; i++) {
            size_t at = (size_t)k * w->n + i;
            int rc = retarget_one(w->msgs[i], w->lens[i], t[k].host_header,
                                  t[k].auth ? t[k].auth : "", &w->tmsgs[at], &w->tlens[at]);
            if (rc)
                return rc; /* fds_lgwork_free frees what was made */
        }
    return 0;
}

void fds_lgwork_free(fds_lgwork *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->msgs[i]);
    free(w->msgs);
    free(w->lens);
    free(w->classes);
    for (size_t i = 0; w->tmsgs && i < (size_t)w->ntargets * w->n; i++)
        free(w->tmsgs[i]);
    free(w->tmsgs);
    free(w->tlens);
    memset(w, 0, sizeof *w);
}

int fds_lgwork_fixed(fds_lgwork *w, const char *host_header, const char *method, const char *path)
{
    memset(w, 0, sizeof *w);
    size_t cap = 0;
    snprintf(w->description, sizeof w->description, "%s %s", method, path);
    return fds__lgwork_add(w, &cap, host_header, method, path, NULL, 0);
}

int fds_lgwork_bodies(fds_lgwork *w, const char *host_header, const char *path, const char *file,
                      char *msg, size_t msglen)
{
    memset(w, 0, sizeof *w);
    FILE *f = fopen(file, "r");
    if (!f) {
        snprintf(msg, msglen, "cannot open --bodies file '%s'", file);
        return FDS_EIO;
    }
    size_t cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        if (w->n >= FDS_LGWORK_MAX_BODIES) {
            snprintf(msg, msglen, "--bodies file has more than %d lines", FDS_LGWORK_MAX_BODIES);
            rc = FDS_ETOOBIG;
            break;
        }
        if ((rc = fds__lgwork_add(w, &cap, host_header, "POST", path, line, 0)) != 0)
            break;
    }
    free(line);
    fclose(f);
    if (rc == 0 && w->n == 0) {
        snprintf(msg, msglen, "--bodies file '%s' has no request bodies", file);
        rc = FDS_EINVAL;
    }
    if (rc)
        fds_lgwork_free(w);
    else
        snprintf(w->description, sizeof w->description, "%zu bodies from %s, POST %s", w->n, file,
                 path);
    return rc;
}

int fds__vl_add(fds__vlist *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        char **v = realloc(l->v, nc * sizeof *v);
        if (!v)
            return FDS_ENOMEM;
        l->v = v;
        l->cap = nc;
    }
    char *c = malloc(len + 1);
    if (!c)
        return FDS_ENOMEM;
    memcpy(c, s, len);
    c[len] = '\0';
    l->v[l->n++] = c;
    return 0;
}

void fds__vl_free(fds__vlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* The alphanumeric runs of `s` of 2+ characters. */
static int add_tokens(fds__vlist *l, const char *s)
{
    const char *p = s;
    while (*p) {
        while (*p && !isalnum((unsigned char)*p))
            p++;
        const char *b = p;
        while (*p && isalnum((unsigned char)*p))
            p++;
        if (p - b >= 2) {
            int rc = fds__vl_add(l, b, (size_t)(p - b));
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* The non-empty names of comma-separated `fields` (at most
 * FDS_LGWORK_MAX_FIELDS), pointing into `fbuf`; their count, 0 if none. */
static int split_fields(const char *fields, char *fbuf, size_t fbuflen,
                        char *names[FDS_LGWORK_MAX_FIELDS])
{
    snprintf(fbuf, fbuflen, "%s", fields);
    int nf = 0;
    for (char *t = strtok(fbuf, ","); t && nf < FDS_LGWORK_MAX_FIELDS; t = strtok(NULL, ","))
        if (*t)
            names[nf++] = t;
    return nf;
}

int fds__lgwork_search(const fds_httpc_target *t, const char *path, const char *body,
                       const char *what, cJSON **root, char *msg, size_t msglen)
{
    int status = 0;
    char *resp = NULL;
    char why[512];
    int rc = fds_httpc_request_why(t, "POST", path, body, FDS_LGWORK_SAMPLE_TIMEOUT_MS, &status,
                                   &resp, why, sizeof why);
    if (rc) {
        snprintf(msg, msglen, "%s: POST %s failed: %s", what, path,
                 why[0] ? why : fds_strerror(rc));
        return rc;
    }
    if (status != 200) {
        snprintf(msg, msglen, "%s: POST %s answered HTTP %d: %.200s", what, path, status, resp);
        free(resp);
        return FDS_ENOTFOUND;
    }
    *root = cJSON_Parse(resp);
    free(resp);
    if (!*root) {
        snprintf(msg, msglen, "%s: POST %s answered with no JSON", what, path);
        return FDS_EPARSE;
    }
    return 0;
}

/* The first `sample_docs` documents of `path` (POST /{index}/_search with
 * match_all): the parsed answer in *root (caller deletes) and its hits.hits
 * array in *hits.  0, or an FDS_E* code with a sentence in `msg`. */
static int sample_docs_fetch(const fds_httpc_target *t, const char *path, int sample_docs,
                             cJSON **root, cJSON **hits, char *msg, size_t msglen)
{
    char body[256];
    snprintf(body, sizeof body, "{\"query\":{\"match_all\":{}},\"size\":%d,\"from\":0}",
             sample_docs);
    int rc = fds__lgwork_search(t, path, body, "sampling values", root,
                                msg, msglen);
    if (rc)
        return rc;
    *hits = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(*root, "hits"), "hits");
    if (!cJSON_IsArray(*hits)) {
        snprintf(msg, msglen, "sampling values: %s answer has no hits.hits array", path);
        cJSON_Delete(*root);
        return FDS_EPARSE;
    }
    return 0;
}

int fds__lgwork_collect(const cJSON *hits, char *const *names, int nf, fds__vlist *vals,
                        fds__vlist *urltok)
{
    const cJSON *hit;
    cJSON_ArrayForEach(hit, hits)
    {
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(hit, "_source");
        for (int f = 0; f < nf; f++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, names[f]);
            char num[64];
            const char *s = NULL;
            if (cJSON_IsString(v))
                s = v->valuestring;
            else if (cJSON_IsNumber(v)) {
                double d = v->valuedouble;
                if (d == (double)(long long)d)
                    snprintf(num, sizeof num, "%lld", (long long)d);
                else
                    snprintf(num, sizeof num, "%.17g", d);
                s = num;
            } else if (cJSON_IsBool(v))
                s = cJSON_IsTrue(v) ? "true" : "false";
            if (!s || !*s)
                continue;
            int rc = fds__vl_add(&vals[f], s, strlen(s));
            if (rc == 0 && urltok && strcmp(names[f], "url") == 0)
                rc = add_tokens(&urltok[f], s);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* `pool` match query messages POSTed to `path`: a field uniformly among
 * those with values, then (for a field with url tokens, every other pick)
 * a token or a whole value, all drawn with splitmix64 from `seed`.
 * 0 or FDS_ENOMEM. */
static int make_queries(fds_lgwork *w, const char *host_header, const char *path,
                        char *const *names, int nf, const fds__vlist *vals, const fds__vlist *urltok,
                        size_t pool, uint64_t seed, int size)
{
    uint64_t st = seed;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < pool && rc == 0; i++) {
        int f;
        do
            f = (int)(fds__lgwork_rand(&st) % (uint64_t)nf);
        while (vals[f].n == 0);
        const char *v;
        if (urltok[f].n > 0 && (fds__lgwork_rand(&st) & 1))
            v = urltok[f].v[fds__lgwork_rand(&st) % urltok[f].n];
        else
            v = vals[f].v[fds__lgwork_rand(&st) % vals[f].n];
        cJSON *q = cJSON_CreateObject();
        cJSON *query = cJSON_AddObjectToObject(q, "query");
        cJSON *match = cJSON_AddObjectToObject(query, "match");
        cJSON_AddStringToObject(match, names[f], v);
        cJSON_AddNumberToObject(q, "size", size);
        char *b = cJSON_PrintUnformatted(q);
        cJSON_Delete(q);
        if (!b)
            return FDS_ENOMEM;
        rc = fds__lgwork_add(w, &cap, host_header, "POST", path, b, (unsigned char)f);
        free(b);
    }
    return rc;
}

int fds_lgwork_match(fds_lgwork *w, const fds_httpc_target *t, const char *index, const char *fields,
                     int sample_docs, size_t pool, uint64_t seed, int size, char *msg,
                     size_t msglen)
{
    memset(w, 0, sizeof *w);
    char fbuf[1024];
    char *names[FDS_LGWORK_MAX_FIELDS];
    int nf = split_fields(fields, fbuf, sizeof fbuf, names);
    if (nf == 0) {
        snprintf(msg, msglen, "--fields is empty");
        return FDS_EINVAL;
    }
    char path[512];
    snprintf(path, sizeof path, "/%s/_search", index);
    cJSON *root, *hits;
    int rc = sample_docs_fetch(t, path, sample_docs, &root, &hits, msg,
                               msglen);
    if (rc)
        return rc;
    fds__vlist vals[FDS_LGWORK_MAX_FIELDS], urltok[FDS_LGWORK_MAX_FIELDS];
    memset(vals, 0, sizeof vals);
    memset(urltok, 0, sizeof urltok);
    rc = fds__lgwork_collect(hits, names, nf, vals, urltok);
    cJSON_Delete(root);
    int usable = 0;
    for (int f = 0; f < nf; f++) {
        usable += vals[f].n > 0;
        w->nvalues += vals[f].n;
    }
    if (rc == 0 && usable == 0) {
        snprintf(msg, msglen,
                 "sampling values: none of the fields '%s' has a value in the first %d documents "
                 "of index '%s'",
                 fields, sample_docs, index);
        rc = FDS_ENOTFOUND;
    }
    if (rc == 0)
        rc = make_queries(w, t->host_header, path, names, nf, vals, urltok, pool, seed, size);
    if (rc == 0 && nf <= FDS_LGWORK_MAX_CLASSES) {
        w->nclasses = nf;
        for (int f = 0; f < nf; f++)
            snprintf(w->class_names[f], sizeof w->class_names[f], "match %s", names[f]);
        fds__lgwork_shares(w);
    }
    for (int f = 0; f < nf; f++) {
        fds__vl_free(&vals[f]);
        fds__vl_free(&urltok[f]);
    }
    if (rc) {
        if (rc == FDS_ENOMEM)
            snprintf(msg, msglen, "out of memory");
        fds_lgwork_free(w);
        return rc;
    }
    snprintf(w->description, sizeof w->description,
             "%zu random match queries on %s (values from %zu sampled field values, seed %llu)",
             w->n, fields, w->nvalues, (unsigned long long)seed);
    return 0;
}
