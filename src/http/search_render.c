/*
 * search_render.c: the Elasticsearch search response writer -- hits,
 * totals, sort values, `_source` and `_explanation` -- and the `_count`
 * body.
 *
 * The writer never re-prints `_source`: the stored bytes are spliced into
 * the response as they are, unless `_source` filtering selects parts of it,
 * in which case the selected members are copied byte for byte too.
 * Explanations come from src/query as data (fds_explanation) and are printed
 * with cJSON.
 */
#include "aggs/aggs.h"
#include "fetch/highlight.h"
#include "time/datemath.h"
#include "search_render.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds_json_skip.h"
#include "fds_strbuf.h"
#include "fds_text.h"
#include "fds_numfmt.h"

/* Room for a date sort value printed in its sort's `format` (a pattern's
 * text is copied, so a longer one is cut here). */
#define SORT_DATE_TEXT_MAX 128

/* Shortest decimal that reads back as the same float (like Java), with a
 * decimal point as ES prints scores (numfmt.h). */
static void sb_float(fds_strbuf *b, float f)
{
    if (isnan(f)) {
        fds_strbuf_puts(b, "null");
        return;
    }
    char tmp[FDS_FLOAT_STR_MAX];
    size_t n = fds_float_format(f, tmp);
    fds_strbuf_put(b, tmp, n);
}

static void sb_shards(fds_strbuf *b, const fds_shards_info *s)
{
    static const fds_shards_info one = {.total = 1, .terminated_early = -1};
    if (!s)
        s = &one;
    fds_strbuf_printf(b, "\"_shards\":{\"total\":%u,\"successful\":%u,"
                      "\"skipped\":0,\"failed\":%u", s->total,
                      s->total - s->failed, s->failed);
    if (s->failures) {
        fds_strbuf_puts(b, ",\"failures\":");
        fds_strbuf_puts(b, s->failures);
    }
    fds_strbuf_puts(b, "}");
}

/* ---- _source filtering on raw bytes -------------------------------------- */

/* Does `pat` match `path` or a prefix object of it ("a" matches "a.b")? */
static bool pat_covers(const char *pat, const char *path, size_t n)
{
    if (fds_glob_match(pat, path, n))
        return true;
    for (size_t k = n; k > 0; k--)
        if (path[k - 1] == '.' && fds_glob_match(pat, path, k - 1))
            return true;
    return false;
}

/* Could `pat` match something below object `path`? */
static bool pat_below(const char *pat, const char *path, size_t n)
{
    if (strchr(pat, '*'))
        return true; /* conservative: descend */
    return strlen(pat) > n && !strncmp(pat, path, n) && pat[n] == '.';
}

static size_t skip_ws(const uint8_t *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
                     s[i] == '\r'))
        i++;
    return i;
}


static void filter_object(fds_strbuf *b, const fds_search_request *r,
                          const uint8_t *s, size_t n, size_t i, char *path,
                          size_t plen, int depth)
{
    fds_strbuf_put(b, "{", 1);
    bool first = true;
    i = skip_ws(s, n, i + 1);
    while (i < n && s[i] != '}') {
        size_t ks = i, ke = fds_json_skip((const char *)s, n, i);
        /* key text without quotes (escapes kept: good enough for matching) */
        size_t kl = ke - ks >= 2 ? ke - ks - 2 : 0;
        size_t np = plen;
        if (np + 1 + kl < FDS_FIELD_PATH_MAX) {
            if (np)
                path[np++] = '.';
            memcpy(path + np, s + ks + 1, kl);
            np += kl;
        }
        path[np] = 0;
        i = skip_ws(s, n, ke);
        if (i < n && s[i] == ':')
            i = skip_ws(s, n, i + 1);
        size_t vs = i, ve = fds_json_skip((const char *)s, n, i);
        bool excluded = false, included = r->nincludes == 0, below = false;
        for (size_t k = 0; k < r->nexcludes; k++)
            if (pat_covers(r->excludes[k], path, np))
                excluded = true;
        for (size_t k = 0; k < r->nincludes && !included; k++)
            if (pat_covers(r->includes[k], path, np))
                included = true;
        bool ex_below = false;
        for (size_t k = 0; k < r->nexcludes; k++)
            if (pat_below(r->excludes[k], path, np))
                ex_below = true;
        for (size_t k = 0; k < r->nincludes && !included; k++)
            if (pat_below(r->includes[k], path, np))
                below = true;
        if (!excluded) {
            bool obj = vs < n && s[vs] == '{';
            if (obj && depth < FDS_DOC_DEPTH_MAX &&
                ((included && ex_below) || (!included && below))) {
                fds_strbuf sub = {0};
                filter_object(&sub, r, s, n, vs, path, np, depth + 1);
                if (!sub.oom && (included || sub.len > 2)) {
                    if (!first)
                        fds_strbuf_put(b, ",", 1);
                    fds_strbuf_put(b, (const char *)s + ks, ke - ks);
                    fds_strbuf_put(b, ":", 1);
                    fds_strbuf_put(b, sub.p, sub.len);
                    first = false;
                }
                if (sub.oom)
                    b->oom = 1;
                free(sub.p);
            } else if (included) {
                if (!first)
                    fds_strbuf_put(b, ",", 1);
                fds_strbuf_put(b, (const char *)s + ks, ke - ks);
                fds_strbuf_put(b, ":", 1);
                fds_strbuf_put(b, (const char *)s + vs, ve - vs);
                first = false;
            }
        }
        i = skip_ws(s, n, ve);
        if (i < n && s[i] == ',')
            i = skip_ws(s, n, i + 1);
    }
    path[plen] = 0;
    fds_strbuf_put(b, "}", 1);
}

static void put_source(fds_strbuf *b, const fds_search_request *r, const uint8_t *s,
                       size_t n)
{
    if (r->nincludes == 0 && r->nexcludes == 0) {
        fds_strbuf_put(b, (const char *)s, n);
        return;
    }
    size_t i = skip_ws(s, n, 0);
    if (i >= n || s[i] != '{') {
        fds_strbuf_put(b, (const char *)s, n);
        return;
    }
    char path[FDS_FIELD_PATH_MAX + 1];
    path[0] = 0;
    filter_object(b, r, s, n, i, path, 0, 0);
}

/* ---- explanations ------------------------------------------------------- */

/* Does any value of the tree have no JSON form (NaN, infinity)? */
static bool ex_nonfinite(const fds_explanation *e)
{
    if (!isfinite(e->value))
        return true;
    for (size_t i = 0; i < e->ndetails; i++)
        if (ex_nonfinite(e->details[i]))
            return true;
    return false;
}

/*
 * One explanation as Elasticsearch's {"value","description","details"}.
 * The value goes through the shortest decimal that reads back as the float
 * (as Java prints it) and is then printed as cJSON prints that decimal.
 */
static cJSON *ex_json(const fds_explanation *e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char num[32];
    for (int p = 1; p <= 9; p++) {
        snprintf(num, sizeof num, "%.*g", p, (double)e->value);
        if (strtof(num, NULL) == e->value)
            break;
    }
    cJSON_AddNumberToObject(o, "value", strtod(num, NULL));
    cJSON_AddStringToObject(o, "description", e->description);
    cJSON *d = cJSON_AddArrayToObject(o, "details");
    for (size_t i = 0; d && i < e->ndetails; i++) {
        cJSON *k = ex_json(e->details[i]);
        if (!k) {
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToArray(d, k);
    }
    return o;
}

/* Explanation e as JSON (malloc'd), or NULL (none, or not printable). */
static char *explain_text(const fds_explanation *e)
{
    if (!e || ex_nonfinite(e))
        return NULL;
    cJSON *o = ex_json(e);
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

/* The explanation of hit i as JSON (malloc'd), or NULL. */
static char *explain_at(const fds_search_result *res, size_t i)
{
    return res->explain ? explain_text(res->explain[i]) : NULL;
}

/* A non-finite value has no JSON form; the explanations are left out then
 * (as Elasticsearch cannot print such a score either). */
static bool explain_printable(const fds_search_result *res)
{
    if (!res->explain)
        return false;
    for (size_t i = 0; i < res->nhits; i++)
        if (res->explain[i] && ex_nonfinite(res->explain[i]))
            return false;
    return true;
}

/* "sort":[...] of hit h sorted by req: a date key as epoch ms, or as its
 * sort's `format` prints it when it has one (the search's `format`;
 * top_metrics gives a date key its field's format, as Elasticsearch's
 * SortValue prints it). */
static void put_sort(fds_strbuf *b, const fds_search_request *req,
                     const fds_hit *h)
{
    fds_strbuf_puts(b, "\"sort\":[");
    for (uint32_t k = 0; k < h->nsort; k++) {
        if (k)
            fds_strbuf_put(b, ",", 1);
        const fds_sort_spec *s = &req->sort[k];
        if (s->kind == FDS_SORT_SCORE) {
            sb_float(b, (float)h->sort_num[k]);
        } else if (s->kind == FDS_SORT_FIELD &&
                   s->ftype == FDS_FT_KEYWORD) {
            if (h->sort_str[k])
                fds_strbuf_put_json_string(b, h->sort_str[k], h->sort_str_len[k]);
            else
                fds_strbuf_puts(b, "null");
        } else if (isnan(h->sort_num[k])) {
            /* ES prints the missing-value sentinel; null is clearer */
            fds_strbuf_puts(b, "null");
        } else if (s->kind == FDS_SORT_FIELD &&
                   s->ftype == FDS_FT_DOUBLE) {
            fds_strbuf_printf(b, "%.17g", h->sort_num[k]);
        } else if (s->format && s->ftype == FDS_FT_DATE) {
            char d[SORT_DATE_TEXT_MAX];
            size_t n = fds__date_print(h->sort_long[k], s->format, d, sizeof d);
            if (n >= sizeof d)
                n = sizeof d - 1;
            fds_strbuf_put_json_string(b, d, n);
        } else { /* exact digits, past 2^53 too */
            fds_strbuf_printf(b, "%lld", (long long)h->sort_long[k]);
        }
    }
    fds_strbuf_puts(b, "]");
}

/* One hit object {"_index", "_id", ..., "sort", "_explanation"} of the
 * request `req` (the hit's shape: stored_fields, version, _source
 * filtering, sort keys, highlight), its `fields` from `dvr`'s
 * docvalue_fields and its highlight of `hlr`'s query (each index resolves
 * them against its own mapping), `_source` bytes src[0..slen) (NULL:
 * none fetched), the explanation's JSON text `es` (NULL: none). */
static void put_hit(fds_strbuf *b, const fds_search_request *req,
                    const fds_search_request *dvr, const fds_search_request *hlr,
                    const fds_hit *h, bool want_source, const uint8_t *src,
                    size_t slen, const fds_search_segment *segs,
                    const char *index_name, const fds_hit_source *hs,
                    const char *es, const fds_matched *mq,
                    fds_dv_scratch **dvs)
{
    const char *ixn = hs->index_of ? hs->index_of(hs->arg, h->seg) : NULL;
    if (!ixn)
        ixn = index_name;
    fds_strbuf_puts(b, "{\"_index\":");
    fds_strbuf_put_json_string(b, ixn, strlen(ixn));
    if (req->stored_fields != FDS_STORED_FIELDS_NONE) {
        size_t idl = 0;
        const char *id = segs ? fds_sidx_doc_id(segs[h->seg].sidx, h->doc, &idl)
                              : NULL;
        fds_strbuf_puts(b, ",\"_id\":");
        fds_strbuf_put_json_string(b, id ? id : "", id ? idl : 0);
    }
    if (req->version || req->seq_no_primary_term) {
        int64_t ver = -1, seq = -1;
        if (hs->meta)
            hs->meta(hs->arg, h, &ver, &seq);
        if (req->version)
            fds_strbuf_printf(b, ",\"_version\":%lld", (long long)ver);
        if (req->seq_no_primary_term)
            fds_strbuf_printf(b, ",\"_seq_no\":%lld,\"_primary_term\":1",
                              (long long)seq);
    }
    fds_strbuf_puts(b, ",\"_score\":");
    sb_float(b, h->score);
    size_t rl = 0;
    const char *rt = hs->routing ? hs->routing(hs->arg, h, &rl) : NULL;
    if (rt) {
        fds_strbuf_puts(b, ",\"_routing\":");
        fds_strbuf_put_json_string(b, rt, rl);
    }
    /* an index without `_source` keeps the doc values only: no `_source`,
     * nothing to highlight */
    bool has_src = !dvr->mapping || fds_mapping_source_enabled(dvr->mapping);
    if (want_source && src && has_src) {
        fds_strbuf_puts(b, ",\"_source\":");
        put_source(b, req, src, slen);
    }
    if (src && fds_docvalues_put(dvr, src, slen, dvs, b))
        b->oom = true;
    if (src && has_src && req->hl &&
        fds_highlight_put(req->hl, hlr->query, src, slen, b))
        b->oom = true;
    if (h->nsort) {
        fds_strbuf_puts(b, ",");
        put_sort(b, req, h);
    }
    if (mq && mq->n) { /* Elasticsearch leaves it out when empty */
        /* a list of names, or with include_named_queries_score an object
         * of their scores */
        fds_strbuf_puts(b, req->named_scores ? ",\"matched_queries\":{"
                                             : ",\"matched_queries\":[");
        for (size_t k = 0; k < mq->n; k++) {
            if (k)
                fds_strbuf_putc(b, ',');
            fds_strbuf_put_json_string(b, mq->names[k], strlen(mq->names[k]));
            if (req->named_scores) {
                fds_strbuf_putc(b, ':');
                sb_float(b, mq->scores[k]);
            }
        }
        fds_strbuf_puts(b, req->named_scores ? "}" : "]");
    }
    if (es) {
        fds_strbuf_puts(b, ",\"_explanation\":");
        fds_strbuf_puts(b, es);
    }
    fds_strbuf_put(b, "}", 1);
}

char *fds_search_render(const fds_search_request *req,
                        const fds_search_result *res,
                        const fds_search_segment *segs, const char *index_name,
                        long took_ms, const fds_hit_source *hs,
                        size_t *out_len, fds_err *err)
{
    static const fds_hit_source none;
    if (!hs)
        hs = &none;
    fds_strbuf b = {0};
    if (req->count_only) {
        fds_strbuf_printf(&b, "{\"count\":%llu,", (unsigned long long)res->total);
        if (hs->shards && hs->shards->terminated_early >= 0)
            fds_strbuf_printf(&b, "\"terminated_early\":%s,",
                              hs->shards->terminated_early ? "true" : "false");
        sb_shards(&b, hs->shards);
        fds_strbuf_puts(&b, "}");
        goto done;
    }
    const uint8_t **src = NULL;
    size_t *slen = NULL;
    bool want_source = req->source && hs->fetch && res->nhits &&
                       (req->stored_fields == FDS_STORED_FIELDS_DEFAULT ||
                        req->source_asked);
    /* docvalue_fields are read from `_source` (docvalues.c) */
    bool fetch = want_source || ((req->ndv_asked || req->nfields_asked ||
                                  req->hl) &&
                                 hs->fetch && res->nhits);
    if (fetch) {
        src = calloc(res->nhits, sizeof *src);
        slen = calloc(res->nhits, sizeof *slen);
        if (!src || !slen) {
            free(src);
            free(slen);
            fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
            free(b.p);
            return NULL;
        }
        int rc = hs->fetch(hs->arg, res->hits, res->nhits, src, slen, err);
        if (rc) {
            free(src);
            free(slen);
            free(b.p);
            fds_err_setk(err, rc, FDS_KIND_INTERNAL, "fetching _source failed");
            return NULL;
        }
    }
    bool expl = explain_printable(res);
    fds_strbuf_printf(&b, "{\"took\":%ld,\"timed_out\":%s,", took_ms,
                      res->timed_out ? "true" : "false");
    if (hs->shards && hs->shards->terminated_early >= 0)
        fds_strbuf_printf(&b, "\"terminated_early\":%s,",
                          hs->shards->terminated_early ? "true" : "false");
    sb_shards(&b, hs->shards);
    fds_strbuf_puts(&b, ",\"hits\":{");
    if (req->track_total != FDS_TRACK_TOTAL_NONE && req->total_as_int)
        fds_strbuf_printf(&b, "\"total\":%llu,", (unsigned long long)res->total);
    else if (req->total_as_int) /* not counted: Elasticsearch prints -1 */
        fds_strbuf_puts(&b, "\"total\":-1,");
    else if (req->track_total != FDS_TRACK_TOTAL_NONE)
        fds_strbuf_printf(&b, "\"total\":{\"value\":%llu,\"relation\":\"%s\"},",
               (unsigned long long)res->total,
               res->total_is_lower_bound ? "gte" : "eq");
    fds_strbuf_puts(&b, "\"max_score\":");
    sb_float(&b, res->max_score);
    fds_strbuf_puts(&b, ",\"hits\":[");
    fds_dv_scratch *dvs = NULL; /* the hits' `fields`, one doc at a time */
    for (size_t i = 0; i < res->nhits; i++) {
        if (i)
            fds_strbuf_put(&b, ",", 1);
        char *es = expl ? explain_at(res, i) : NULL;
        const fds_search_request *hr =
            hs->req_of ? hs->req_of(hs->arg, res->hits[i].seg) : NULL;
        put_hit(&b, req, hr ? hr : req, hr ? hr : req, &res->hits[i],
                want_source, fetch ? src[i] : NULL, fetch ? slen[i] : 0,
                segs, index_name, hs, es, res->matched ? &res->matched[i] : NULL,
                &dvs);
        free(es);
    }
    fds_dv_scratch_free(dvs);
    fds_strbuf_puts(&b, "]}}");
    free(src);
    free(slen);
done:
    if (b.oom) {
        free(b.p);
        fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
        return NULL;
    }
    if (out_len)
        *out_len = b.len;
    return b.p;
}

/* Does a hit of `req` show `_source` (else it may still be fetched for
 * docvalue_fields, fields or highlight)? */
static bool shows_source(const fds_search_request *req)
{
    return req->source && (req->stored_fields == FDS_STORED_FIELDS_DEFAULT ||
                           req->source_asked);
}

/* The hits of top_hits/top_metrics result r, and the `_source` of each
 * when its request shows anything read from it: hits[], src[], slen[]
 * (caller frees the three).  0, FDS_ENOMEM or the fetch's error (err
 * filled). */
static int agg_hits_fetch(const fds_agg_result *r, const fds_hit_source *hs,
                          fds_hit **hitsp, const uint8_t ***srcp, size_t **slenp,
                          fds_err *err)
{
    size_t n = r->nhits;
    fds_hit *hits = *hitsp = malloc((n ? n : 1) * sizeof *hits);
    const uint8_t **src = *srcp = calloc(n ? n : 1, sizeof *src);
    size_t *slen = *slenp = calloc(n ? n : 1, sizeof *slen);
    int rc = hits && src && slen ? 0 : FDS_ENOMEM;
    bool fetch = false;
    for (size_t i = 0; !rc && i < n; i++) {
        const fds_search_request *q = r->hits[i].req;
        hits[i] = r->hits[i].h;
        fetch |= shows_source(q) || q->ndv_asked || q->nfields_asked || q->hl;
    }
    fetch &= hs->fetch != NULL;
    if (!rc && fetch && n && (rc = hs->fetch(hs->arg, hits, n, src, slen, err)))
        fds_err_setk(err, rc, FDS_KIND_INTERNAL, "fetching _source failed");
    if (rc == FDS_ENOMEM)
        fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    return rc;
}

int fds__agg_hits_put(fds_strbuf *b, const fds_agg_result *r,
                      const fds_search_segment *segs, const fds_hit_source *hs,
                      fds_err *err)
{
    static const fds_hit_source none;
    if (!hs)
        hs = &none;
    size_t n = r->nhits;
    fds_hit *hits;
    const uint8_t **src;
    size_t *slen;
    int rc = agg_hits_fetch(r, hs, &hits, &src, &slen, err);
    if (!rc) {
        fds_strbuf_printf(b, "{\"hits\":{\"total\":{\"value\":%llu,"
                             "\"relation\":\"eq\"},\"max_score\":",
                          (unsigned long long)r->count);
        sb_float(b, r->max_score);
        fds_strbuf_puts(b, ",\"hits\":[");
        fds_dv_scratch *dvs = NULL;
        for (size_t i = 0; i < n; i++) {
            const fds_search_request *q = r->hits[i].req;
            const fds_search_request *page =
                hs->req_of ? hs->req_of(hs->arg, hits[i].seg) : NULL;
            if (i)
                fds_strbuf_putc(b, ',');
            char *es = explain_text(r->hits[i].x);
            put_hit(b, q, q, page ? page : q, &hits[i], shows_source(q),
                    src[i], slen[i], segs, "", hs, es, NULL, &dvs);
            free(es);
        }
        fds_dv_scratch_free(dvs);
        fds_strbuf_puts(b, "]}}");
    }
    free(hits);
    free(src);
    free(slen);
    return rc;
}

int fds__agg_top_metrics_put(fds_strbuf *b, const fds_agg_result *r,
                             const fds_hit_source *hs, fds_err *err)
{
    static const fds_hit_source none;
    if (!hs)
        hs = &none;
    fds_hit *hits;
    const uint8_t **src;
    size_t *slen;
    int rc = agg_hits_fetch(r, hs, &hits, &src, &slen, err);
    fds_strbuf_puts(b, "{\"top\":[");
    for (size_t i = 0; !rc && i < r->nhits; i++) {
        const fds_search_request *q = r->hits[i].req;
        fds_strbuf_puts(b, i ? ",{" : "{");
        put_sort(b, q, &hits[i]);
        fds_strbuf_puts(b, ",\"metrics\":{");
        for (size_t j = 0; j < r->agg->nmetrics; j++) {
            const char *name = r->agg->metrics[j];
            size_t k = 0; /* its docvalue entry; none when unmapped here */
            while (k < q->ndv && strcmp(q->dv[k].name, name))
                k++;
            fds_dv_value *v = NULL;
            size_t nv = 0;
            if (k < q->ndv && src[i] &&
                fds_docvalues_of(q, k, src[i], slen[i], &v, &nv)) {
                rc = FDS_ENOMEM;
                fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
                break;
            }
            if (j)
                fds_strbuf_putc(b, ',');
            fds_strbuf_put_json_string(b, name, strlen(name));
            fds_strbuf_putc(b, ':');
            if (!nv) /* InternalTopMetrics: a doc without the value */
                fds_strbuf_puts(b, "null");
            else if (v[0].quoted)
                fds_strbuf_put_json_string(b, v[0].text, v[0].len);
            else
                fds_strbuf_put(b, v[0].text, v[0].len);
            fds_dv_values_free(v, nv);
        }
        fds_strbuf_puts(b, "}}");
    }
    fds_strbuf_puts(b, "]}");
    free(hits);
    free(src);
    free(slen);
    return rc;
}

void fds__source_put(fds_strbuf *b, char **includes, size_t nincludes,
                     char **excludes, size_t nexcludes, const uint8_t *s, size_t n)
{
    fds_search_request r = {.includes = includes, .nincludes = nincludes,
                            .excludes = excludes, .nexcludes = nexcludes};
    put_source(b, &r, s, n);
}
