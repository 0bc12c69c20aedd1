/*
 * disk_usage.c: POST /{index}/_disk_usage?run_expensive_tasks=true,
 * Elasticsearch's "Analyze index disk usage" API (IndexDiskUsageAnalyzer):
 * the bytes of each field of each index by part.
 *
 * Per index: store_size(_in_bytes) (_stats' store.size_in_bytes),
 * all_fields (the sums) and fields, each with total, inverted_index (the
 * term dictionary, postings and positions; this implementation adds the
 * split as terms_in_bytes, postings_in_bytes and proximity_in_bytes, the
 * parts of Lucene's IndexDiskUsageStats.PerFieldDiskUsage), stored_fields,
 * doc_values, points, norms, term_vectors and knn_vectors, each as a human
 * size and *_in_bytes.  The figures are those of src/query/index/sidx_usage.c
 * summed over the index's segments; the documents' stored fields are one
 * compressed _source per document, all counted as `_source`'s (as
 * Elasticsearch reports them), and the _id table is `_id`'s inverted
 * index.  Points, term vectors and knn vectors do not exist here: 0.
 * Like Elasticsearch: without run_expensive_tasks=true it is a 400, and
 * `flush` (default true) first writes buffered documents as a segment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_int.h"
#include "handlers.h"
#include "index_expr.h"
#include "query.h"
#include "request.h"
#include "response.h"

/* One field's bytes: the parts of fds_sidx_usage and its stored fields. */
typedef struct fusage {
    char *name;
    fds_sidx_usage u;
    uint64_t stored;
} fusage;

typedef struct usage_set {
    fusage *f;
    size_t n, cap;
} usage_set;

/* The entry of `name` (len bytes) in set, added when new; NULL on OOM. */
static fusage *usage_of(usage_set *set, const char *name, size_t len)
{
    for (size_t i = 0; i < set->n; i++)
        if (strlen(set->f[i].name) == len && !memcmp(set->f[i].name, name, len))
            return &set->f[i];
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 32;
        fusage *g = realloc(set->f, cap * sizeof *g);
        if (!g)
            return NULL;
        set->f = g;
        set->cap = cap;
    }
    fusage *u = &set->f[set->n];
    memset(u, 0, sizeof *u);
    if (!(u->name = strndup(name, len)))
        return NULL;
    set->n++;
    return u;
}

static void usage_free(usage_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->f[i].name);
    free(set->f);
}

static void add_usage(fds_sidx_usage *to, const fds_sidx_usage *u)
{
    to->terms += u->terms;
    to->postings += u->postings;
    to->positions += u->positions;
    to->norms += u->norms;
    to->doc_values += u->doc_values;
}

/* Elasticsearch's ByteSizeValue as a human string ("12.3mb"). */
static void add_size(cJSON *o, const char *key, uint64_t b)
{
    char buf[32], k[64];
    static const char *const unit[] = {"b", "kb", "mb", "gb", "tb"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u)
        snprintf(buf, sizeof buf, "%.1f%s", v, unit[u]);
    else
        snprintf(buf, sizeof buf, "%llub", (unsigned long long)b);
    cJSON_AddStringToObject(o, key, buf);
    snprintf(k, sizeof k, "%s_in_bytes", key);
    cJSON_AddNumberToObject(o, k, (double)b);
}

/* One field's object (or all_fields') in Elasticsearch's shape. */
static cJSON *usage_json(const fusage *f)
{
    const fds_sidx_usage *u = &f->u;
    uint64_t inv = u->terms + u->postings + u->positions;
    cJSON *o = cJSON_CreateObject();
    add_size(o, "total", inv + f->stored + u->doc_values + u->norms);
    cJSON *ii = cJSON_AddObjectToObject(o, "inverted_index");
    add_size(ii, "total", inv);
    cJSON_AddNumberToObject(ii, "terms_in_bytes", (double)u->terms);
    cJSON_AddNumberToObject(ii, "postings_in_bytes", (double)u->postings);
    cJSON_AddNumberToObject(ii, "proximity_in_bytes", (double)u->positions);
    add_size(o, "stored_fields", f->stored);
    add_size(o, "doc_values", u->doc_values);
    add_size(o, "points", 0);
    add_size(o, "norms", u->norms);
    add_size(o, "term_vectors", 0);
    add_size(o, "knn_vectors", 0);
    return o;
}

/* The fields of ix's segments (a view of them) into set.  0 or an error. */
static int index_usage(fds_index *ix, usage_set *set, fds_err *e)
{
    fds_index_view *v = NULL;
    int rc = fds_index_view_acquire(ix, &v, e);
    if (rc)
        return rc;
    unsigned nseg = 0;
    const fds_search_segment *segs = fds_index_view_segments(v, &nseg);
    for (unsigned s = 0; !rc && s < nseg; s++) {
        const fds_sidx *x = segs[s].sidx;
        uint32_t nf = fds_sidx_nfields(x);
        fds_sidx_usage *u = calloc(nf + 1, sizeof *u), id;
        rc = u ? fds_sidx_disk_usage(x, u, &id) : FDS_ENOMEM;
        fusage *fu = rc ? NULL : usage_of(set, "_id", 3);
        if (!rc && !fu)
            rc = FDS_ENOMEM;
        if (!rc)
            add_usage(&fu->u, &id);
        for (uint32_t i = 0; !rc && i < nf; i++) {
            size_t len;
            const char *name = fds_sidx_field_name(x, i, &len);
            if (!(fu = usage_of(set, name, len)))
                rc = FDS_ENOMEM;
            else
                add_usage(&fu->u, &u[i]);
        }
        free(u);
    }
    fds_index_view_release(v);
    if (rc == FDS_ENOMEM)
        fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    return rc;
}

void fds__h_disk_usage(fds_req *r, fds_resp *o)
{
    const char *run = fds__req_param(r, "run_expensive_tasks");
    if (!run || strcmp(run, "true"))
        return fds__resp_errorf(
            o, 400, "illegal_argument_exception",
            "analyzing the disk usage of an index is expensive and "
            "resource-intensive, the parameter [run_expensive_tasks] must be "
            "set to [true] in order for the task to be performed.");
    const char *fl = fds__req_param(r, "flush");
    if (fl && strcmp(fl, "true") && strcmp(fl, "false"))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                "Failed to parse value [%s] as only [true] or "
                                "[false] are allowed.", fl);
    bool flush = !fl || !strcmp(fl, "true");
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true};
    fds_index **ixs = NULL;
    size_t n = 0;
    if (fds_index_expr_opts_read(fds__admin_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, r->seg[0], &opts, &ixs, &n, &e))
        return fds__resp_error(o, &e);
    cJSON *j = cJSON_CreateObject();
    cJSON *sh = cJSON_AddObjectToObject(j, "_shards");
    int shards = 0, rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        fds_index *ix = ixs[i];
        usage_set set = {0};
        fds_index_stats st;
        if (flush)
            rc = fds_index_refresh(ix, &e);
        if (!rc)
            rc = index_usage(ix, &set, &e);
        fds_index_stats_get(ix, &st);
        fusage *src = rc ? NULL : usage_of(&set, "_source", 7);
        if (!rc && !src) {
            rc = FDS_ENOMEM;
            fds_err_setk(&e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        }
        if (!rc) {
            src->stored = st.stored_fields_bytes;
            fusage all = {.name = NULL};
            cJSON *ij = cJSON_AddObjectToObject(j, fds_index_name(ix));
            add_size(ij, "store_size", st.store_bytes);
            cJSON *fj = cJSON_CreateObject();
            for (size_t k = 0; k < set.n; k++) {
                add_usage(&all.u, &set.f[k].u);
                all.stored += set.f[k].stored;
                cJSON_AddItemToObject(fj, set.f[k].name, usage_json(&set.f[k]));
            }
            cJSON_AddItemToObject(ij, "all_fields", usage_json(&all));
            cJSON_AddItemToObject(ij, "fields", fj);
            shards += (int)fds_index_nshards(ix);
        }
        usage_free(&set);
    }
    fds_index_expr_free(ixs, n);
    if (rc) {
        cJSON_Delete(j);
        return fds__resp_error(o, &e);
    }
    cJSON_AddNumberToObject(sh, "total", shards);
    cJSON_AddNumberToObject(sh, "successful", shards);
    cJSON_AddNumberToObject(sh, "failed", 0);
    fds__resp_json(o, 200, j);
}
