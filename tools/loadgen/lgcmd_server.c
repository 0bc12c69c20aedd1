/*
 * lgcmd_server.c: what loadgen reads from the server around its measured
 * requests (the first node of a cluster) -- an index's codec,
 * settings and sizes (_settings, _stats/store, _cat/indices), the node's
 * load (_cat/nodes) and the query/fetch phase timers (_stats/search).
 * Every read is best effort: a server without an endpoint gives null or NAN
 * in the report, never a failed run.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fds_httpc.h"
#include "fds_sysstat.h"
#include "lgcmd.h"

static cJSON *get_json(const fds__lgcmd_opts *o, const char *path)
{
    int status = 0;
    char *body = NULL;
    if (fds_httpc_request(&o->targets[0], "GET", path, NULL,
                          LG_INFO_TIMEOUT_MS, &status, &body) != 0)
        return NULL;
    cJSON *doc = status >= 200 && status <= 299 ? cJSON_Parse(body) : NULL;
    free(body);
    return doc;
}

pid_t fds__lgcmd_resolve_pid(const fds__lgcmd_opts *o)
{
    if (o->server_pid <= 0)
        return 0;
    double cpu;
    if (fds_sysstat_proc_cpu((pid_t)o->server_pid, &cpu) != 0)
        fprintf(stderr, "loadgen: --server-pid %ld is not visible in /proc; server CPU not "
                        "measured\n", o->server_pid);
    return (pid_t)o->server_pid;
}

/* obj.k1.k2... (NULL-terminated keys), or NULL */
static const cJSON *dig(const cJSON *obj, ...)
{
    va_list ap;
    va_start(ap, obj);
    for (const char *k = va_arg(ap, const char *); k && obj; k = va_arg(ap, const char *))
        obj = cJSON_GetObjectItemCaseSensitive(obj, k);
    va_end(ap);
    return obj;
}

/* The codec (the index's setting, "default" without one) and the index
 * settings of `index` from GET /{index}/_settings. */
static void add_codec_settings(const fds__lgcmd_opts *o, cJSON *side, const char *index)
{
    char path[512];
    snprintf(path, sizeof path, "/%s/_settings", index);
    cJSON *st = get_json(o, path);
    cJSON *idx = cJSON_GetObjectItemCaseSensitive(st, index);
    if (!idx && st && st->child)
        idx = st->child;
    const cJSON *settings = dig(idx, "settings", "index", (const char *)NULL);
    if (settings) {
        const cJSON *codec = cJSON_GetObjectItemCaseSensitive(settings, "codec");
        cJSON_ReplaceItemInObjectCaseSensitive(
            side, "codec",
            cJSON_CreateString(cJSON_IsString(codec) ? codec->valuestring : "default"));
        cJSON_AddItemToObject(side, "settings", cJSON_Duplicate(settings, 1));
    }
    cJSON_Delete(st);
}

/* store_bytes (_all, else indices.{index}, primaries.store.size_in_bytes)
 * and stored_fields_bytes of `index` from GET /{index}/_stats/store. */
static void add_store_sizes(const fds__lgcmd_opts *o, cJSON *side, const char *index)
{
    char path[512];
    snprintf(path, sizeof path, "/%s/_stats/store", index);
    cJSON *ss = get_json(o, path);
    const cJSON *n = dig(ss, "_all", "primaries", "store", "size_in_bytes", (const char *)NULL);
    if (!cJSON_IsNumber(n))
        n = dig(ss, "indices", index, "primaries", "store", "size_in_bytes", (const char *)NULL);
    if (cJSON_IsNumber(n))
        cJSON_ReplaceItemInObjectCaseSensitive(side, "store_bytes",
                                               cJSON_CreateNumber(n->valuedouble));
    /* fieldstore also splits the size: stored fields are what the codec
     * decides, postings are the same for every codec */
    const cJSON *sf =
        dig(ss, "_all", "primaries", "store", "stored_fields_in_bytes", (const char *)NULL);
    if (cJSON_IsNumber(sf))
        cJSON_ReplaceItemInObjectCaseSensitive(side, "stored_fields_bytes",
                                               cJSON_CreateNumber(sf->valuedouble));
    cJSON_Delete(ss);
}

/* cat_store_size: the size as _cat/indices shows it to a person, or null. */
static void add_cat_size(const fds__lgcmd_opts *o, cJSON *side, const char *index)
{
    char path[512];
    snprintf(path, sizeof path, "/_cat/indices/%s?h=store.size&format=json", index);
    cJSON *ci = get_json(o, path);
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ci, 0), "store.size");
    if (cJSON_IsString(cs))
        cJSON_AddStringToObject(side, "cat_store_size", cs->valuestring);
    else
        cJSON_AddNullToObject(side, "cat_store_size");
    cJSON_Delete(ci);
}

void fds__lgcmd_add_index_info(const fds__lgcmd_opts *o, cJSON *side, const char *index)
{
    add_codec_settings(o, side, index);
    add_store_sizes(o, side, index);
    add_cat_size(o, side, index);
}

/* GET /_cat/nodes as JSON; a server that answers in _cat's text table
 * instead is kept as that text; no answer (or not 2xx) gives null. */
cJSON *fds__lgcmd_cat_nodes(const fds__lgcmd_opts *o)
{
    int status = 0;
    char *body = NULL;
    if (fds_httpc_request(&o->targets[0], "GET",
                          "/_cat/nodes?h=load_1m,load_5m,load_15m,ram.percent&format=json", NULL,
                          LG_INFO_TIMEOUT_MS, &status, &body) != 0)
        return cJSON_CreateNull();
    cJSON *d = NULL;
    if (status >= 200 && status <= 299) {
        d = cJSON_Parse(body);
        if (!d)
            d = cJSON_CreateString(body);
    }
    free(body);
    return d ? d : cJSON_CreateNull();
}

/* search.<phase>_time_in_micros, else _millis x 1000; NAN if absent */
static double phase_us(const cJSON *search, const char *phase)
{
    char k[64];
    snprintf(k, sizeof k, "%s_time_in_micros", phase);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(search, k);
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    snprintf(k, sizeof k, "%s_time_in_millis", phase);
    v = cJSON_GetObjectItemCaseSensitive(search, k);
    return cJSON_IsNumber(v) ? v->valuedouble * 1000 : NAN;
}

/* The server's total query and fetch phase time of `index` in microseconds
 * from GET /{index}/_stats/search (Elasticsearch's indices.{name}.total.search,
 * else _all.total.search).  NAN in both when the server has no such timers. */
void fds__lgcmd_search_timers(const fds__lgcmd_opts *o, const char *index, double *q_us,
                              double *f_us)
{
    char path[512];
    snprintf(path, sizeof path, "/%s/_stats/search", index);
    cJSON *d = get_json(o, path);
    const cJSON *s = dig(d, "indices", index, "total", "search", (const char *)NULL);
    if (!s)
        s = dig(d, "_all", "total", "search", (const char *)NULL);
    *q_us = phase_us(s, "query");
    *f_us = phase_us(s, "fetch");
    if (isnan(*q_us) || isnan(*f_us))
        *q_us = *f_us = NAN;
    cJSON_Delete(d);
}
