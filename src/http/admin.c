/*
 * admin.c: index administration endpoints (create, delete, get, settings,
 * mappings, open/close, refresh, flush, force-merge, stats, _cat, nodes).
 */
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <fnmatch.h>
#include <unistd.h>

#include "fds_time.h"
#include "fds_text.h"
#include "http_int.h"
#include "index_rules.h"
#include "index_expr.h"
#include "search_stats.h"

#define NODE_ID FDS__NODE_ID
#define NODE_NAME FDS__NODE_NAME
#define CLUSTER_NAME "fieldstore"
#define FDS_VERSION "0.1.0"

/* ---- settings: JSON <-> flat keys --------------------------------------- */

typedef fds_setting_text flat_kv;
#define FLAT_MAX FDS_SETTINGS_GIVEN_MAX

/* Flatten {"index":{"codec":"ZSTD"}} / {"index.codec":"ZSTD"} / {"codec":..}
 * into "index.codec"="ZSTD".  Returns 0 or FDS_EINVAL (err filled). */
static int flatten(const cJSON *obj, const char *prefix, flat_kv *kv,
                   size_t *n, fds_err *err)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        char key[160];
        if (prefix[0])
            snprintf(key, sizeof key, "%.80s.%.78s", prefix, c->string);
        else
            snprintf(key, sizeof key, "%s", c->string);
        if (cJSON_IsObject(c)) {
            int rc = flatten(c, key, kv, n, err);
            if (rc)
                return rc;
            continue;
        }
        if (*n == FLAT_MAX)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                               "too many settings");
        flat_kv *o = &kv[(*n)++];
        if (strncmp(key, "index.", 6))
            snprintf(o->key, sizeof o->key, "index.%s", key);
        else
            snprintf(o->key, sizeof o->key, "%s", key);
        if (cJSON_IsString(c))
            snprintf(o->value, sizeof o->value, "%s", c->valuestring);
        else if (cJSON_IsBool(c))
            snprintf(o->value, sizeof o->value, "%s", cJSON_IsTrue(c) ? "true" : "false");
        else if (cJSON_IsNumber(c)) {
            double d = c->valuedouble;
            if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(long long)d)
                snprintf(o->value, sizeof o->value, "%lld", (long long)d);
            else
                snprintf(o->value, sizeof o->value, "%g", d);
        } else if (cJSON_IsNull(c)) {
            o->value[0] = 0; /* reset to default */
        } else {
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                               "setting [%s] must be a string, number or boolean",
                               o->key);
        }
    }
    return 0;
}

/* Add "a.b.c" = value into nested objects under `root`; when a name along
 * the path already holds a value (index.codec vs index.codec.block_size),
 * the rest of the path stays one dotted key. */
static void nest(cJSON *root, const char *key, const char *value)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s", key);
    cJSON *at = root;
    char *p = tmp;
    for (;;) {
        char *dot = strchr(p, '.');
        if (!dot)
            break;
        *dot = 0;
        cJSON *next = cJSON_GetObjectItemCaseSensitive(at, p);
        if (!next) {
            /* a leaf with a longer dotted name may exist: check prefix use */
            next = cJSON_AddObjectToObject(at, p);
        } else if (!cJSON_IsObject(next)) {
            *dot = '.';
            break;
        }
        at = next;
        p = dot + 1;
    }
    cJSON *existing = cJSON_GetObjectItemCaseSensitive(at, p);
    if (existing && cJSON_IsObject(existing)) {
        /* "codec" is already an object: keep the value under a dotted key
         * one level up is not possible; store it as "codec" sibling text */
        char alt[170];
        snprintf(alt, sizeof alt, "%s", p);
        cJSON_AddStringToObject(at, alt, value);
        return;
    }
    cJSON_AddStringToObject(at, p, value);
}

static cJSON *settings_json(fds_index *ix, bool defaults_part, bool flat)
{
    fds_index_settings set, def;
    fds_index_get_settings(ix, &set);
    fds_index_settings_default(&def);
    fds_setting_kv kv[FDS_SETTINGS_MAX], dk[FDS_SETTINGS_MAX];
    size_t n = fds_settings_to_kv(&set, kv, FDS_SETTINGS_MAX);
    size_t dn = fds_settings_to_kv(&def, dk, FDS_SETTINGS_MAX);
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        bool is_default = i < dn && !strcmp(kv[i].value, dk[i].value) &&
                          strcmp(kv[i].key, "index.number_of_shards") &&
                          strcmp(kv[i].key, "index.number_of_replicas");
        if (is_default != defaults_part)
            continue;
        if (flat)
            cJSON_AddStringToObject(o, kv[i].key, kv[i].value);
        else
            nest(o, kv[i].key, kv[i].value);
    }
    if (defaults_part && !set.number_of_routing_shards) {
        /* not given: the one the index was created with */
        char rs[16];
        snprintf(rs, sizeof rs, "%u", fds_routing_shards_default(set.number_of_shards));
        if (flat)
            cJSON_AddStringToObject(o, "index.number_of_routing_shards", rs);
        else
            nest(o, "index.number_of_routing_shards", rs);
    }
    if (!defaults_part) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)fds_index_creation_ms(ix));
        const char *info[][2] = {{"index.uuid", fds_index_uuid(ix)},
                                 {"index.creation_date", buf},
                                 {"index.provided_name", fds_index_name(ix)}};
        for (size_t i = 0; i < 3; i++) {
            if (flat)
                cJSON_AddStringToObject(o, info[i][0], info[i][1]);
            else
                nest(o, info[i][0], info[i][1]);
        }
    }
    return o;
}

/* ---- handlers -------------------------------------------------------------- */

static const char *cat_param_cb(void *arg, const char *name)
{
    return fds__req_param(arg, name);
}


void fds__h_root(fds_req *r, fds_resp *o)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", NODE_NAME);
    cJSON_AddStringToObject(j, "cluster_name", CLUSTER_NAME);
    cJSON_AddStringToObject(j, "cluster_uuid", NODE_ID);
    cJSON *v = cJSON_AddObjectToObject(j, "version");
    /* Elasticsearch 8's keys (clients read number, build_flavor and the
     * tagline); no "distribution", which OpenSearch clients take for
     * OpenSearch */
    cJSON_AddStringToObject(v, "number", FDS__ES_VERSION);
    cJSON_AddStringToObject(v, "build_flavor", "default");
    cJSON_AddStringToObject(v, "build_type", "tar");
    cJSON_AddStringToObject(v, "build_hash", "fieldstore-" FDS_VERSION);
    cJSON_AddStringToObject(v, "build_date", FDS_BUILD_DATE);
    cJSON_AddBoolToObject(v, "build_snapshot", false);
    cJSON_AddStringToObject(v, "fieldstore_version", FDS_VERSION);
    cJSON_AddStringToObject(v, "lucene_version", "compatible subset");
    cJSON_AddStringToObject(v, "minimum_wire_compatibility_version", "7.17.0");
    cJSON_AddStringToObject(v, "minimum_index_compatibility_version", "7.0.0");
    cJSON_AddStringToObject(j, "tagline", "You Know, for Search");
    fds__resp_json(o, 200, j);
}

/* An index's health on this one node: red when it failed to load, yellow
 * when it asks for replicas (no second node can hold them), else green
 * (closed or open).  Its unassigned shard copies go to *unassigned. */
static const char *index_health(fds_index *ix, unsigned *unassigned)
{
    fds_index_settings set;
    fds_index_get_settings(ix, &set);
    *unassigned = fds_index_nshards(ix) *
                  (fds_index_failure(ix) ? 1 + set.number_of_replicas
                                         : set.number_of_replicas);
    if (fds_index_failure(ix))
        return "red";
    /* a closed index keeps its shard (Elasticsearch 8 replicates closed
     * indices): its health is its copies' */
    return set.number_of_replicas ? "yellow" : "green";
}

/* Longest wait of GET /_cluster/health for its wait_for_* conditions: a
 * waiting request holds one of the few HTTP worker threads, and on one node
 * the health changes only through other requests (create, delete, close,
 * settings), so a longer `timeout` is cut to this.  The poll interval is
 * how often the conditions are evaluated again meanwhile. */
#define HEALTH_WAIT_MAX_NS 1000000000LL
#define HEALTH_POLL_NS 20000000LL

enum { H_GREEN, H_YELLOW, H_RED };
static const char *const HEALTH_NAMES[] = {"green", "yellow", "red"};

/* What a health request waits for (ClusterHealthRequest). */
typedef struct health_want {
    int status;          /* H_*, -1: none */
    int nodes_op;        /* 0 none, or '=', '>', '<', 'G' (>=), 'L' (<=) */
    long nodes;
    long active;         /* wait_for_active_shards; -1 none, -2 all */
    int level;           /* 0 cluster, 1 indices, 2 shards */
} health_want;

static bool health_status_name(const char *v, int *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(v, HEALTH_NAMES[i])) {
            *out = i;
            return true;
        }
    return false;
}

/* wait_for_nodes: N, >=N, <=N, >N, <N, ge(N), le(N), gt(N), lt(N). */
static bool health_nodes(const char *v, health_want *w)
{
    static const struct { const char *p; int op; } ops[] = {
        {">=", 'G'}, {"<=", 'L'}, {">", '>'}, {"<", '<'},
        {"ge(", 'G'}, {"le(", 'L'}, {"gt(", '>'}, {"lt(", '<'}};
    int op = '=';
    bool paren = false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strncmp(v, ops[i].p, strlen(ops[i].p))) {
            op = ops[i].op;
            paren = ops[i].p[2] == '(';
            v += strlen(ops[i].p);
            break;
        }
    if (!(*v >= '0' && *v <= '9'))
        return false;
    char *end;
    long n = strtol(v, &end, 10);
    if (paren ? strcmp(end, ")") : *end != 0)
        return false;
    w->nodes_op = op;
    w->nodes = n;
    return true;
}

static bool health_nodes_ok(const health_want *w)
{
    const long have = 1;
    switch (w->nodes_op) {
    case '=': return have == w->nodes;
    case '>': return have > w->nodes;
    case '<': return have < w->nodes;
    case 'G': return have >= w->nodes;
    case 'L': return have <= w->nodes;
    default: return true;
    }
}

/* The health of the indices `expr` names, as JSON, and whether the wanted
 * conditions hold.  A concrete name that does not exist makes it red (it
 * may be created while the request waits), as Elasticsearch's
 * TransportClusterHealthAction. */
static cJSON *health_json(fds_req *r, const char *expr,
                          const fds_index_expr_opts *opts,
                          const health_want *w, bool *met, fds_err *e,
                          int *rc)
{
    fds_index **ixs = NULL;
    size_t n = 0;
    bool missing = false;
    *rc = fds_index_expr_resolve(r->store, expr, opts, &ixs, &n, e);
    if (*rc == FDS_ENOTFOUND) {
        missing = true;
        *rc = 0;
        fds_err_clear(e);
    } else if (*rc) {
        return NULL;
    }
    size_t failed = 0, yellow = 0, unassigned = 0, primaries = 0;
    cJSON *idx = w->level ? cJSON_CreateObject() : NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned u;
        const char *h = index_health(ixs[i], &u);
        bool red = h[0] == 'r';
        failed += red;
        yellow += h[0] == 'y';
        uint32_t nsh = fds_index_nshards(ixs[i]);
        unassigned += u;
        primaries += red ? 0 : nsh;
        if (!idx)
            continue;
        fds_index_settings set;
        fds_index_get_settings(ixs[i], &set);
        cJSON *x = cJSON_AddObjectToObject(idx, fds_index_name(ixs[i]));
        cJSON_AddStringToObject(x, "status", h);
        cJSON_AddNumberToObject(x, "number_of_shards", nsh);
        cJSON_AddNumberToObject(x, "number_of_replicas", set.number_of_replicas);
        cJSON_AddNumberToObject(x, "active_primary_shards", red ? 0 : nsh);
        cJSON_AddNumberToObject(x, "active_shards", red ? 0 : nsh);
        cJSON_AddNumberToObject(x, "relocating_shards", 0);
        cJSON_AddNumberToObject(x, "initializing_shards", 0);
        cJSON_AddNumberToObject(x, "unassigned_shards", u);
        cJSON *sh = w->level == 2 ? cJSON_AddObjectToObject(x, "shards") : NULL;
        for (uint32_t k = 0; sh && k < nsh; k++) {
            char num[16];
            snprintf(num, sizeof num, "%u", k);
            cJSON *s0 = cJSON_AddObjectToObject(sh, num);
            cJSON_AddStringToObject(s0, "status", h);
            cJSON_AddBoolToObject(s0, "primary_active", !red);
            cJSON_AddNumberToObject(s0, "active_shards", !red);
            cJSON_AddNumberToObject(s0, "relocating_shards", 0);
            cJSON_AddNumberToObject(s0, "initializing_shards", 0);
            cJSON_AddNumberToObject(s0, "unassigned_shards", u / nsh);
        }
    }
    fds_index_expr_free(ixs, n);
    int status = failed || missing ? H_RED : yellow ? H_YELLOW : H_GREEN;
    /* named indices are waited for until they exist (getWaitCount) */
    *met = !missing && (w->status < 0 || status <= w->status) && health_nodes_ok(w) &&
           (w->active == -1 || (w->active == -2 ? unassigned == 0 && !missing
                                                : (long)primaries >= w->active));
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "cluster_name", CLUSTER_NAME);
    cJSON_AddStringToObject(j, "status", HEALTH_NAMES[status]);
    cJSON_AddBoolToObject(j, "timed_out", 0);
    cJSON_AddNumberToObject(j, "number_of_nodes", 1);
    cJSON_AddNumberToObject(j, "number_of_data_nodes", 1);
    cJSON_AddNumberToObject(j, "active_primary_shards", (double)primaries);
    cJSON_AddNumberToObject(j, "active_shards", (double)primaries);
    cJSON_AddNumberToObject(j, "relocating_shards", 0);
    cJSON_AddNumberToObject(j, "initializing_shards", 0);
    cJSON_AddNumberToObject(j, "unassigned_shards", (double)unassigned);
    cJSON_AddNumberToObject(j, "delayed_unassigned_shards", 0);
    cJSON_AddNumberToObject(j, "number_of_pending_tasks", 0);
    cJSON_AddNumberToObject(j, "number_of_in_flight_fetch", 0);
    cJSON_AddNumberToObject(j, "task_max_waiting_in_queue_millis", 0);
    size_t copies = primaries + unassigned;
    cJSON_AddNumberToObject(j, "active_shards_percent_as_number",
                            copies ? 100.0 * (double)primaries / (double)copies
                                   : 100.0);
    if (idx)
        cJSON_AddItemToObject(j, "indices", idx);
    return j;
}

static const char *const HEALTH_PARAMS[] = {
    "level", "local", "wait_for_status", "wait_for_nodes", "wait_for_events",
    "wait_for_active_shards", "wait_for_no_relocating_shards",
    "wait_for_no_initializing_shards", "return_200_for_cluster_health_timeout",
    "expand_wildcards", "ignore_unavailable", "allow_no_indices", NULL};

/* GET /_cluster/health[/{index}]: level, wait_for_status, wait_for_nodes,
 * wait_for_active_shards (a number or all), timeout (cut to
 * HEALTH_WAIT_MAX_NS), index expressions (default: open, closed and hidden
 * indices, as ClusterHealthRequest's IndicesOptions.lenientExpandHidden).
 * wait_for_events, wait_for_no_relocating_shards and
 * wait_for_no_initializing_shards hold at once on one node (no pending
 * cluster tasks, no shard moves).  A wait that times out answers 200 with
 * timed_out true, as Elasticsearch 8 does. */
static void health_answer(fds_req *r, fds_resp *o)
{
    health_want w = {.status = -1, .active = -1};
    const char *v;
    if ((v = fds__req_param(r, "level"))) {
        static const char *const lv[] = {"cluster", "indices", "shards"};
        w.level = -1;
        for (int i = 0; i < 3; i++)
            if (!strcmp(v, lv[i]))
                w.level = i;
        if (w.level < 0)
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "No enum constant for [level]: [%s] (cluster, "
                                   "indices or shards)", v);
    }
    if ((v = fds__req_param(r, "wait_for_status")) && !health_status_name(v, &w.status))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "unknown cluster health status [%s]", v);
    if ((v = fds__req_param(r, "wait_for_nodes")) && *v && !health_nodes(v, &w))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "failed to parse [wait_for_nodes] with value [%s]", v);
    if ((v = fds__req_param(r, "wait_for_active_shards"))) {
        char *end;
        long a = strtol(v, &end, 10);
        if (!strcmp(v, "all"))
            w.active = -2;
        else if (end != v && !*end && a >= 0)
            w.active = a;
        else
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "failed to parse [wait_for_active_shards] with "
                                   "value [%s]: a number or all", v);
    }
    static const char *const events[] = {"immediate", "urgent", "high",
                                         "normal", "low", "languid"};
    if ((v = fds__req_param(r, "wait_for_events"))) {
        size_t i = 0;
        while (i < 6 && strcmp(v, events[i]))
            i++;
        if (i == 6)
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "No enum constant for [wait_for_events]: [%s]", v);
    }
    static const char *const flags[] = {"wait_for_no_relocating_shards",
                                        "wait_for_no_initializing_shards", "local"};
    for (size_t i = 0; i < 3; i++)
        if ((v = fds__req_param(r, flags[i])) && *v && strcmp(v, "true") &&
            strcmp(v, "false"))
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "Failed to parse value [%s] as only [true] or "
                                   "[false] are allowed.", v);
    if ((v = fds__req_param(r, "return_200_for_cluster_health_timeout")) &&
        strcmp(v, "true") && *v)
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "[return_200_for_cluster_health_timeout] can only be "
                               "true: a timed out health request answers 200, as "
                               "in Elasticsearch 8");
    int64_t wait_ns = 30000000000LL;
    if ((v = fds__req_param(r, "timeout")) && !fds_time_value_ns(v, false, &wait_ns))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "failed to parse setting [timeout] with value [%s] "
                               "as a time value: unit is missing or unrecognized", v);
    if (wait_ns > HEALTH_WAIT_MAX_NS)
        wait_ns = HEALTH_WAIT_MAX_NS;
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true,
                                .expand_closed = true, .expand_hidden = true};
    if (fds_index_expr_opts_read(cat_param_cb, r, &opts, &e))
        return fds__resp_error(o, &e);
    const char *expr = r->nseg > 2 ? r->seg[2] : NULL;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        bool met;
        int rc;
        cJSON *j = health_json(r, expr, &opts, &w, &met, &e, &rc);
        if (!j)
            return rc == FDS_ENOMEM ? fds__resp_errorf(o, 500, "out_of_memory_error",
                                                      "out of memory")
                                    : fds__resp_error(o, &e);
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        int64_t spent = (int64_t)(t.tv_sec - t0.tv_sec) * 1000000000LL +
                        (t.tv_nsec - t0.tv_nsec);
        if (met || spent >= wait_ns) {
            if (!met)
                cJSON_ReplaceItemInObject(j, "timed_out", cJSON_CreateTrue());
            return fds__resp_json(o, 200, j);
        }
        cJSON_Delete(j);
        int64_t nap = wait_ns - spent < HEALTH_POLL_NS ? wait_ns - spent : HEALTH_POLL_NS;
        struct timespec ts = {nap / 1000000000LL, nap % 1000000000LL};
        nanosleep(&ts, NULL);
    }
}

void fds__h_cluster_health(fds_req *r, fds_resp *o)
{
    if (fds__req_check_params(r, o, HEALTH_PARAMS))
        health_answer(r, o);
}

static void acknowledged(fds_resp *o, const char *index)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    if (index) {
        cJSON_AddBoolToObject(j, "shards_acknowledged", 1);
        cJSON_AddStringToObject(j, "index", index);
    }
    fds__resp_json(o, 200, j);
}

int fds__settings_from_json(const cJSON *settings, fds_index_settings *set,
                            const char *index_name, fds_err *err)
{
    if (!settings)
        return 0;
    if (!cJSON_IsObject(settings))
        return fds_err_setk(err, FDS_EPARSE, FDS_KIND_PARSE,
                            "[settings] must be an object");
    flat_kv *kv = calloc(FLAT_MAX, sizeof *kv);
    size_t n = 0;
    int rc = kv ? flatten(settings, "", kv, &n, err)
                : fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (!rc)
        rc = fds_settings_apply(set, kv, n, true, false, index_name, "", err);
    free(kv);
    return rc;
}

int fds__alias_names_resolve(fds_alias *a, size_t n, fds_err *e)
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

/* The parts of a create-index body: settings applied to `set`, the
 * mappings as JSON text (*mapping malloc'd or NULL), the aliases. */
static int create_body_parts(const cJSON *body, const char *name,
                             fds_index_settings *set, char **mapping,
                             fds_alias **aliases, size_t *naliases, fds_err *e)
{
    if (body && !cJSON_IsObject(body))
        return fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                            "request body must be a JSON object");
    int rc = 0;
    for (const cJSON *c = body ? body->child : NULL; c && !rc; c = c->next) {
        if (!strcmp(c->string, "settings")) {
            rc = fds__settings_from_json(c, set, name, e);
        } else if (!strcmp(c->string, "mappings")) {
            if (!cJSON_IsObject(c))
                rc = fds_err_setk(e, FDS_EPARSE, FDS_KIND_MAPPING_PARSE,
                                  "Failed to parse mapping: [mappings] must be "
                                  "an object");
            else if (!(*mapping = cJSON_PrintUnformatted(c)))
                rc = FDS_ENOMEM;
        } else if (!strcmp(c->string, "aliases")) {
            rc = fds__aliases_from_json(c, aliases, naliases, e);
            if (!rc)
                rc = fds__alias_names_resolve(*aliases, *naliases, e);
        } else {
            rc = fds_err_setk(e, FDS_EPARSE, FDS_KIND_PARSE,
                              "unknown key [%s] for create index", c->string);
        }
    }
    return rc;
}

/* Every alias filter checked against the mapping the new index will have. */
static int check_alias_filters(const char *mapping, const fds_alias *a,
                               size_t n, fds_err *e)
{
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any |= a[i].filter != NULL;
    if (!any)
        return 0;
    fds_mapping *m = fds_mapping_create();
    int rc = m ? 0 : FDS_ENOMEM;
    if (!rc && mapping)
        rc = fds_mapping_merge_json(m, mapping, strlen(mapping), e);
    for (size_t i = 0; i < n && !rc; i++)
        rc = fds__alias_filter_check(&a[i], m, e);
    fds_mapping_free(m);
    return rc;
}

int fds__index_create(fds_store *st, const char *name, const cJSON *body,
                      fds_err *e)
{
    cJSON *merged = NULL;
    int rc = fds__template_body(st, name, body, &merged, e);
    fds_index_settings set;
    fds_index_settings_default(&set);
    char *mapping = NULL;
    fds_alias *aliases = NULL;
    size_t naliases = 0;
    if (!rc)
        rc = create_body_parts(merged, name, &set, &mapping, &aliases,
                               &naliases, e);
    if (!rc)
        rc = check_alias_filters(mapping, aliases, naliases, e);
    if (!rc)
        rc = fds_store_create_index_aliased(st, name, &set, mapping, aliases,
                                            naliases, e);
    if (rc == FDS_ENOMEM && !e->code)
        fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    fds_aliases_free(aliases, naliases);
    free(mapping);
    cJSON_Delete(merged);
    return rc;
}

int fds__active_shards_wanted(fds_req *r, fds_resp *o, long *copies)
{
    const char *v = fds__req_param(r, "wait_for_active_shards");
    *copies = 1; /* index.write.wait_for_active_shards: the primary */
    if (!v || !strcmp(v, "index-setting"))
        return 0;
    if (!strcmp(v, "all")) {
        *copies = FDS__ACTIVE_ALL;
        return 0;
    }
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || errno || n > INT32_MAX || n < INT32_MIN) {
        fds__resp_errorf(o, 400, "number_format_exception", "For input string: \"%s\"", v);
        return -1;
    }
    if (n < 0) {
        fds__resp_errorf(o, 400, "illegal_argument_exception",
                        "shard count cannot be a negative value");
        return -1;
    }
    *copies = n;
    return 0;
}

bool fds__active_shards_acked(long copies, uint32_t replicas)
{
    /* one node: the primary is the only copy that ever starts, so more
     * is what Elasticsearch answers after its timeout */
    return copies == FDS__ACTIVE_ALL ? replicas == 0 : copies <= 1;
}

void fds__h_index_create(fds_req *r, fds_resp *o)
{
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    long copies;
    if (fds__active_shards_wanted(r, o, &copies))
        return;
    /* <logs-{now/d}>: the name of today (Elasticsearch resolves it) */
    char name[FDS_INDEX_NAME_MAX + 2];
    if (fds_index_name_resolve(r->seg[0], name, sizeof name, &e))
        return fds__resp_error(o, &e);
    if (fds__body_checked(r, &body, &e))
        return fds__resp_error(o, &e);
    int rc = fds__index_create(r->store, name, body, &e);
    cJSON_Delete(body);
    if (rc) {
        if (!e.index[0])
            snprintf(e.index, sizeof e.index, "%s", name);
        return fds__resp_error(o, &e);
    }
    fds_index *ix = NULL;
    fds_index_settings set = {.number_of_replicas = 0};
    if (!fds_store_get_index(r->store, name, &ix, NULL))
        fds_index_get_settings(ix, &set);
    fds_index_release(ix);
    fds__index_created(o, name, copies, set.number_of_replicas);
}

void fds__index_created(fds_resp *o, const char *name, long copies, uint32_t replicas)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    cJSON_AddBoolToObject(j, "shards_acknowledged",
                          fds__active_shards_acked(copies, replicas));
    cJSON_AddStringToObject(j, "index", name);
    fds__resp_json(o, 200, j);
}

/* The indices DELETE /{expr} names, as Elasticsearch resolves it for a
 * delete (expand_wildcards open,closed; no aliases: a concrete alias name
 * is refused, a wildcard matches index names only).  *names malloc'd. */
static int delete_targets(fds_req *r, char ***names, size_t *n, fds_err *e)
{
    fds_index_expr_opts o = {.allow_no_indices = true, .expand_open = true,
                             .expand_closed = true};
    int rc = fds_index_expr_opts_read(cat_param_cb, r, &o, e);
    if (!rc)
        rc = fds_index_expr_check(r->seg[0], e);
    char **all = NULL;
    size_t nall = 0;
    if (!rc && fds_store_list_indices(r->store, &all, &nall))
        rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    bool *take = rc ? NULL : calloc(nall + 1, sizeof *take);
    char *copy = rc ? NULL : strdup(r->seg[0]);
    if (!rc && (!take || !copy))
        rc = fds_err_setk(e, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    for (char *sv = NULL, *t = rc ? NULL : strtok_r(copy, ",", &sv); t && !rc;
         t = strtok_r(NULL, ",", &sv)) {
        bool wild = strchr(t, '*') || !strcmp(t, "_all"), hit = false;
        for (size_t i = 0; i < nall; i++)
            if (wild ? (!strcmp(t, "_all") || fds_glob_match(t, all[i], strlen(all[i])))
                       && (all[i][0] != '.' || t[0] == '.' || o.expand_hidden)
                     : !strcmp(t, all[i]))
                take[i] = hit = true;
        if (hit || (wild && o.allow_no_indices) || (!wild && o.ignore_unavailable))
            continue;
        if (wild) /* each wildcard must match with allow_no_indices=false */
            rc = fds_err_setk(e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                              "no such index [%s]", t);
        else if (fds_store_alias_exists(r->store, t))
            rc = fds_err_setk(e, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                              "The provided expression [%s] matches an alias, "
                              "specify the corresponding concrete indices "
                              "instead.", t);
        else
            rc = fds_err_setk(e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                              "no such index [%s]", t);
        snprintf(e->index, sizeof e->index, "%s", t);
    }
    size_t k = 0;
    for (size_t i = 0; !rc && i < nall; i++)
        if (take[i]) {
            char *keep = all[i];
            all[i] = NULL;
            all[k++] = keep;
        } else {
            free(all[i]);
            all[i] = NULL;
        }
    if (!rc && !k && !o.allow_no_indices) {
        rc = fds_err_setk(e, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                          "no such index [%s]", r->seg[0]);
        snprintf(e->index, sizeof e->index, "%s", r->seg[0]);
    }
    free(take);
    free(copy);
    if (rc) {
        for (size_t i = 0; i < nall; i++)
            free(all ? all[i] : NULL);
        free(all);
        return rc;
    }
    *names = all;
    *n = k;
    return 0;
}

void fds__h_index_delete(fds_req *r, fds_resp *o)
{
    fds_err e;
    fds_err_clear(&e);
    if (fds__destructive_requires_name(r->store)) {
        /* DestructiveOperations.hasWildcardUsage */
        if (strchr(r->seg[0], '*') || !strcmp(r->seg[0], "_all"))
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "Wildcard expressions or all indices are not "
                                   "allowed");
    }
    char **names = NULL;
    size_t n = 0;
    int rc = delete_targets(r, &names, &n, &e);
    for (size_t i = 0; !rc && i < n; i++) { /* all checked before any goes */
        fds_index *ix;
        if (fds_store_get_index(r->store, names[i], &ix, NULL) == 0) {
            rc = fds_index_check_block(ix, FDS_BLOCK_LEVEL_DELETE, &e);
            fds_index_release(ix);
        }
    }
    for (size_t i = 0; i < n; i++) {
        /* gone meanwhile: deleted all the same */
        if (!rc && fds_store_delete_index(r->store, names[i], &e) == FDS_ESQL)
            rc = FDS_ESQL;
        free(names[i]);
    }
    free(names);
    if (rc)
        return fds__resp_error(o, &e);
    acknowledged(o, NULL);
}

static cJSON *mapping_json(fds_index *ix)
{
    char *m = fds_mapping_to_json(fds_index_mapping(ix));
    cJSON *j = m ? cJSON_Parse(m) : NULL;
    free(m);
    return j ? j : cJSON_CreateObject();
}

/* The indices index expression `expr` names (NULL: every index), open and
 * closed, as Elasticsearch's get index and get mapping expand them (an
 * expression that matches nothing answers {}).  False with the error
 * answered. */
static bool path_indices(fds_req *r, fds_resp *o, const char *expr,
                         fds_index ***ixs, size_t *n)
{
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true,
                                .expand_closed = true};
    if (fds_index_expr_opts_read(cat_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, expr, &opts, ixs, n, &e)) {
        fds__resp_error(o, &e);
        return false;
    }
    return true;
}

/* GET /{index}: also what GET /_bulk and other API paths without a GET
 * endpoint reach, as in Elasticsearch, whose resolver then refuses the
 * '_' name (fds_index_expr_check). */
void fds__h_index_get(fds_req *r, fds_resp *o)
{
    fds_index **ixs;
    size_t n;
    if (!path_indices(r, o, r->seg[0], &ixs, &n))
        return;
    cJSON *j = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        cJSON *x = cJSON_AddObjectToObject(j, fds_index_name(ixs[i]));
        cJSON_AddItemToObject(x, "aliases",
                              fds__index_aliases_json(r->store,
                                                      fds_index_name(ixs[i])));
        cJSON_AddItemToObject(x, "mappings", mapping_json(ixs[i]));
        cJSON_AddItemToObject(x, "settings", settings_json(ixs[i], false, false));
    }
    fds_index_expr_free(ixs, n);
    fds__resp_json(o, 200, j);
}

static bool pattern_list_match(const char *expr, const char *name);

/* The settings of `ix` named by `names` (NULL = all), nested or flat. */
static cJSON *settings_part(fds_index *ix, bool defaults_part, bool flat,
                            const char *names)
{
    if (!names)
        return settings_json(ix, defaults_part, flat);
    cJSON *all = settings_json(ix, defaults_part, true);
    cJSON *keep = cJSON_CreateObject();
    for (cJSON *c = all->child; c; c = c->next) {
        if (!pattern_list_match(names, c->string))
            continue;
        if (flat)
            cJSON_AddStringToObject(keep, c->string, c->valuestring);
        else
            nest(keep, c->string, c->valuestring);
    }
    cJSON_Delete(all);
    return keep;
}

/* Add index `ix` to a GET _settings answer, unless nothing of it is left
 * after filtering by `names` (Elasticsearch leaves such indices out). */
static void settings_add(fds_req *r, cJSON *j, fds_index *ix, const char *names)
{
    bool flat = fds__req_param_bool(r, "flat_settings", false);
    cJSON *set = settings_part(ix, false, flat, names);
    cJSON *def = fds__req_param_bool(r, "include_defaults", false)
                     ? settings_part(ix, true, flat, names) : NULL;
    if (!set->child && (!def || !def->child)) {
        cJSON_Delete(set);
        cJSON_Delete(def);
        return;
    }
    cJSON *x = cJSON_AddObjectToObject(j, fds_index_name(ix));
    cJSON_AddItemToObject(x, "settings", set);
    if (def)
        cJSON_AddItemToObject(x, "defaults", def);
}

/* GET /{index}/_settings[/{name}] and GET /_settings[/{name}]: {index}
 * may be a name, a comma list, wildcards or _all; {name} a comma list of
 * setting names or patterns. */
void fds__h_settings_get(fds_req *r, fds_resp *o)
{
    /* "local": one node, so its state is the master's */
    static const char *const params[] = {"flat_settings", "include_defaults",
                                         "local", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    bool top = !strcmp(r->seg[0], "_settings");
    const char *expr = top ? "_all" : r->seg[0];
    unsigned at = top ? 1 : 2;
    const char *names = r->nseg > at ? r->seg[at] : NULL;
    cJSON *j = cJSON_CreateObject();
    if (!strpbrk(expr, ",*") && strcmp(expr, "_all")) {
        fds_index *ix = fds__req_index(r, o, 0);
        if (!ix) {
            cJSON_Delete(j);
            return;
        }
        settings_add(r, j, ix, names);
        fds_index_release(ix);
        return fds__resp_json(o, 200, j);
    }
    char **list = NULL;
    size_t n = 0;
    fds_store_list_indices(r->store, &list, &n);
    for (size_t i = 0; i < n; i++) {
        fds_index *ix;
        if (pattern_list_match(expr, list[i]) &&
            fds_store_get_index(r->store, list[i], &ix, NULL) == 0) {
            settings_add(r, j, ix, names);
            fds_index_release(ix);
        }
        free(list[i]);
    }
    free(list);
    fds__resp_json(o, 200, j);
}

/* PUT /{index}/_settings and PUT /_settings: {index} is an expression
 * (default: open and closed indices, missing names and no match are
 * errors, as UpdateSettingsRequest's IndicesOptions).  Every index is
 * checked before any is changed.  ?preserve_existing=true leaves alone the
 * settings an index already has; ?reopen=true applies static settings to
 * an open index by closing it, updating and opening it again, as
 * Elasticsearch 8.12's reopen does.  A null value resets a setting. */
void fds__h_settings_put(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {FDS_INDEX_EXPR_PARAMS, "preserve_existing",
                                         "reopen", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    bool preserve = fds__req_param_bool(r, "preserve_existing", false);
    bool reopen = fds__req_param_bool(r, "reopen", false);
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.expand_open = true, .expand_closed = true};
    fds_index **ixs = NULL;
    size_t nix = 0;
    const char *expr = strcmp(r->seg[0], "_settings") ? r->seg[0] : NULL;
    cJSON *body = NULL;
    int rc = fds_index_expr_opts_read(cat_param_cb, r, &opts, &e);
    if (!rc)
        rc = fds__body_json(r, &body, &e);
    if (!rc)
        rc = fds_json_check_body(r->body, r->body_len, &e);
    if (!rc && !cJSON_IsObject(body))
        rc = fds_err_setk(&e, FDS_EPARSE, FDS_KIND_VALIDATION,
                         "Validation Failed: 1: no settings to update;");
    if (!rc)
        rc = fds_index_expr_resolve(r->store, expr, &opts, &ixs, &nix, &e);
    flat_kv *kv = calloc(FLAT_MAX, sizeof *kv);
    fds_index_settings *sets = calloc(nix ? nix : 1, sizeof *sets);
    bool *bounce = calloc(nix ? nix : 1, sizeof *bounce);
    size_t n = 0;
    if (!rc && (!kv || !sets || !bounce))
        rc = FDS_ENOMEM;
    if (!rc) {
        cJSON *st = cJSON_GetObjectItemCaseSensitive(body, "settings");
        rc = flatten(st && cJSON_IsObject(st) ? st : body, "", kv, &n, &e);
    }
    fds_settings_update u = {.kv = kv, .n = n, .preserve_existing = preserve,
                             .reopen = reopen};
    /* every index first: nothing changes unless all of them can */
    for (size_t i = 0; !rc && i < nix; i++)
        rc = fds_index_settings_plan(ixs[i], &u, &sets[i], &bounce[i], &e);
    for (size_t i = 0; !rc && i < nix; i++)
        rc = fds_index_settings_commit(ixs[i], &sets[i], bounce[i], &e);
    free(kv);
    free(sets);
    free(bounce);
    cJSON_Delete(body);
    fds_index_expr_free(ixs, nix);
    if (rc)
        return fds__resp_error(o, &e);
    acknowledged(o, NULL);
}

/* GET /_mapping[s] (every index) and GET /{index}/_mapping[s]. */
void fds__h_mapping_get(fds_req *r, fds_resp *o)
{
    fds_index **ixs;
    size_t n;
    if (!path_indices(r, o, r->nseg >= 2 ? r->seg[0] : NULL, &ixs, &n))
        return;
    if (!fds__unblocked_or_answer(o, ixs, n, FDS_BLOCK_LEVEL_METADATA_READ))
        return;
    cJSON *j = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        cJSON *x = cJSON_AddObjectToObject(j, fds_index_name(ixs[i]));
        cJSON_AddItemToObject(x, "mappings", mapping_json(ixs[i]));
    }
    fds_index_expr_free(ixs, n);
    fds__resp_json(o, 200, j);
}

void fds__h_open_close(fds_req *r, fds_resp *o, bool open)
{
    fds_index *ix = fds__req_index(r, o, 0);
    if (!ix)
        return;
    fds_err e;
    fds_err_clear(&e);
    int rc = 0;
    if (!open && fds_index_is_open(ix))
        rc = fds_index_refresh(ix, &e); /* a closed index keeps nothing buffered */
    if (!rc)
        rc = fds_index_set_open(ix, open, &e);
    if (rc) {
        fds_index_release(ix);
        return fds__resp_error(o, &e);
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    cJSON_AddBoolToObject(j, "shards_acknowledged", 1);
    if (!open) {
        cJSON *ind = cJSON_AddObjectToObject(j, "indices");
        cJSON *x = cJSON_AddObjectToObject(ind, fds_index_name(ix));
        cJSON_AddBoolToObject(x, "closed", 1);
    }
    fds_index_release(ix);
    fds__resp_json(o, 200, j);
}

static void shards_ok(cJSON *j, int n)
{
    cJSON *s = cJSON_AddObjectToObject(j, "_shards");
    cJSON_AddNumberToObject(s, "total", n);
    cJSON_AddNumberToObject(s, "successful", n);
    cJSON_AddNumberToObject(s, "failed", 0);
}

/* Is `name` an item of index expression `expr` as it is (not through a
 * wildcard or an alias)? */
static bool expr_item_is(const char *expr, const char *name)
{
    size_t l = strlen(name);
    for (const char *p = expr; p && *p;) {
        size_t k = strcspn(p, ",");
        if (k == l && !memcmp(p, name, l))
            return true;
        p += k + (p[k] == ',');
    }
    return false;
}

/* Run `fn` on every open index the path's index expression names (every
 * index for "/_refresh"), as Elasticsearch's broadcast actions do:
 * wildcards expand to open indices, a missing name is a 404 unless
 * ignore_unavailable.  An index deleted after the expression was resolved
 * is a 404 when the expression names it, and otherwise left out, as
 * Elasticsearch's broadcast leaves out a shard whose index is gone
 * (TransportActions.isShardNotAvailableException). */
static void each_index(fds_req *r, fds_resp *o,
                       int (*fn)(fds_index *, void *, fds_err *), void *arg)
{
    fds_err e;
    fds_err_clear(&e);
    int count = 0, rc = 0;
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true};
    fds_index **ixs = NULL;
    size_t n = 0;
    /* /_refresh has no expression; /{index}/_refresh, _flush, ... do */
    const char *expr = r->nseg >= 2 ? r->seg[0] : NULL;
    if (fds_index_expr_opts_read(cat_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, expr, &opts, &ixs, &n, &e))
        return fds__resp_error(o, &e);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!fds_index_is_open(ixs[i]) && !expr)
            continue;
        rc = fn(ixs[i], arg, &e);
        if (rc == FDS_ENOTFOUND &&
            (opts.ignore_unavailable ||
             !expr_item_is(expr, fds_index_name(ixs[i])))) {
            fds_err_clear(&e);
            rc = 0;
            continue;
        }
        count += (int)fds_index_nshards(ixs[i]);
    }
    fds_index_expr_free(ixs, n);
    if (rc)
        return fds__resp_error(o, &e);
    cJSON *j = cJSON_CreateObject();
    shards_ok(j, count);
    fds__resp_json(o, 200, j);
}

static int do_refresh(fds_index *ix, void *arg, fds_err *e)
{
    return fds_index_refresh(ix, e);
}

static int do_merge(fds_index *ix, void *arg, fds_err *e)
{
    return fds_index_forcemerge(ix, *(unsigned *)arg, e);
}

void fds__h_refresh(fds_req *r, fds_resp *o)
{
    each_index(r, o, do_refresh, NULL);
}

void fds__h_flush(fds_req *r, fds_resp *o)
{
    /* a refresh already commits segments and trims the translog */
    each_index(r, o, do_refresh, NULL);
}

void fds__h_forcemerge(fds_req *r, fds_resp *o)
{
    const char *m = fds__req_param(r, "max_num_segments");
    unsigned max = 1;
    if (m) {
        char *end;
        long v = strtol(m, &end, 10);
        if (*end || v < 1)
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                   "failed to parse [max_num_segments] with value "
                                   "[%s]", m);
        max = (unsigned)v;
    }
    each_index(r, o, do_merge, &max);
}

static cJSON *store_stats_json(const fds_index_stats *st)
{
    cJSON *p = cJSON_CreateObject();
    cJSON *d = cJSON_AddObjectToObject(p, "docs");
    cJSON_AddNumberToObject(d, "count", (double)st->docs_count);
    cJSON_AddNumberToObject(d, "deleted", (double)st->docs_deleted);
    cJSON *s = cJSON_AddObjectToObject(p, "store");
    cJSON_AddNumberToObject(s, "size_in_bytes", (double)st->store_bytes);
    cJSON_AddNumberToObject(s, "total_data_set_size_in_bytes", (double)st->store_bytes);
    cJSON_AddNumberToObject(s, "reserved_in_bytes", 0);
    cJSON_AddNumberToObject(s, "stored_fields_in_bytes", (double)st->stored_fields_bytes);
    cJSON_AddNumberToObject(s, "postings_in_bytes", (double)st->postings_bytes);
    cJSON_AddNumberToObject(s, "other_in_bytes", (double)st->other_bytes);
    cJSON_AddNumberToObject(s, "source_uncompressed_in_bytes",
                            (double)st->raw_source_bytes);
    cJSON *sg = cJSON_AddObjectToObject(p, "segments");
    cJSON_AddNumberToObject(sg, "count", (double)st->segments);
    return p;
}

/* True when the comma-separated metric list `list` (NULL = every metric)
 * names `m` or `_all`. */
static bool metric_on(const char *list, const char *m)
{
    if (!list)
        return true;
    size_t ml = strlen(m);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if ((n == ml && !memcmp(p, m, n)) || (n == 4 && !memcmp(p, "_all", 4)))
            return true;
        p += n + (e ? 1 : 0);
    }
    return false;
}

/* The first name of `list` not in `known` (NULL-terminated), or NULL; its
 * length in *len. */
static const char *metric_unknown(const char *list, const char *const *known,
                                  size_t *len)
{
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        bool ok = n == 4 && !memcmp(p, "_all", 4);
        for (size_t i = 0; !ok && known[i]; i++)
            ok = strlen(known[i]) == n && !memcmp(p, known[i], n);
        if (!ok) {
            *len = n;
            return p;
        }
        p += n + (e ? 1 : 0);
    }
    return NULL;
}

/* Elasticsearch's 400 for a metric it does not know. */
static bool metrics_check(fds_req *r, fds_resp *o, const char *list,
                          const char *const *known)
{
    size_t n = 0;
    const char *bad = metric_unknown(list, known, &n);
    if (!bad)
        return true;
    char uri[FDS_REQ_PATH_MAX];
    fds__req_path(r, uri, sizeof uri);
    fds__resp_errorf(o, 400, "illegal_argument_exception",
                    "request [%s] contains unrecognized metric: [%.*s]", uri,
                    (int)n, bad);
    return false;
}

/* Index stats metrics Elasticsearch knows; those we keep no figures for
 * (indexing, get, merge, ...) give no section. */
static const char *const INDEX_METRICS[] = {
    "completion", "docs", "fielddata", "flush", "get", "indexing", "merge",
    "query_cache", "refresh", "request_cache", "search", "segments", "store",
    "translog", "warmer", "bulk", "dense_vector", "sparse_vector", "mappings",
    "shard_stats", NULL};

/* One `primaries`/`total` object: the sections `metrics` asks for. */
static cJSON *index_stats_json(const fds_index_stats *st, const fds__search_sum *ss,
                               const char *metrics)
{
    cJSON *p = store_stats_json(st);
    static const char *const own[] = {"docs", "store", "segments"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (!metric_on(metrics, own[i]))
            cJSON_DeleteItemFromObjectCaseSensitive(p, own[i]);
    if (metric_on(metrics, "search"))
        cJSON_AddItemToObject(p, "search", fds__search_sum_json(ss));
    return p;
}

/* `acc` += `st`, field by field. */
static void index_stats_add(fds_index_stats *acc, const fds_index_stats *st)
{
    acc->docs_count += st->docs_count;
    acc->docs_deleted += st->docs_deleted;
    acc->buffered_docs += st->buffered_docs;
    acc->segments += st->segments;
    acc->store_bytes += st->store_bytes;
    acc->stored_fields_bytes += st->stored_fields_bytes;
    acc->postings_bytes += st->postings_bytes;
    acc->other_bytes += st->other_bytes;
    acc->raw_source_bytes += st->raw_source_bytes;
}

/* GET /_stats[/{metric}] and /{index}/_stats[/{metric}]: the indices of
 * the expression (default every index; IndicesStatsRequest's options:
 * wildcards expand to open indices, none is no error), each with its
 * sections, and their sums under `_all`. */
void fds__h_stats(fds_req *r, fds_resp *o)
{
    bool every = !strcmp(r->seg[0], "_stats");
    const char *expr = every ? NULL : r->seg[0];
    const char *metrics = r->nseg == (every ? 2u : 3u) ? r->seg[r->nseg - 1] : NULL;
    if (!metrics_check(r, o, metrics, INDEX_METRICS))
        return;
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = FDS_INDEX_EXPR_SEARCH_DEFAULTS;
    fds_index **ixs = NULL;
    size_t n = 0;
    if (fds_index_expr_opts_read(cat_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, expr, &opts, &ixs, &n, &e))
        return fds__resp_error(o, &e);
    fds_index_stats sum = {0};
    fds__search_sum ssum = {0};
    unsigned shards = 0;
    for (size_t i = 0; i < n; i++)
        shards += fds_index_nshards(ixs[i]);
    cJSON *j = cJSON_CreateObject();
    shards_ok(j, (int)shards);
    cJSON *all = cJSON_AddObjectToObject(j, "_all");
    cJSON *ind = cJSON_AddObjectToObject(j, "indices");
    for (size_t i = 0; i < n; i++) {
        fds_index *ix = ixs[i];
        fds_index_stats st;
        fds_index_stats_get(ix, &st);
        fds__search_sum ss = {0};
        fds__search_sum_add(&ss, fds_index_search_stats(ix));
        fds__search_sum_add(&ssum, fds_index_search_stats(ix));
        index_stats_add(&sum, &st);
        cJSON *x = cJSON_AddObjectToObject(ind, fds_index_name(ix));
        cJSON_AddStringToObject(x, "uuid", fds_index_uuid(ix));
        cJSON_AddStringToObject(x, "health", "green");
        cJSON_AddStringToObject(x, "status",
                                fds_index_is_open(ix) ? "open" : "close");
        cJSON_AddItemToObject(x, "primaries", index_stats_json(&st, &ss, metrics));
        cJSON_AddItemToObject(x, "total", index_stats_json(&st, &ss, metrics));
        fds_index_release(ix);
    }
    free(ixs);
    cJSON_AddItemToObject(all, "primaries", index_stats_json(&sum, &ssum, metrics));
    cJSON_AddItemToObject(all, "total", index_stats_json(&sum, &ssum, metrics));
    fds__resp_json(o, 200, j);
}

/* Elasticsearch's human sizes ("1.2mb"), or plain bytes with ?bytes=b. */
static char *human_bytes(fds_req *r, uint64_t b)
{
    char buf[32];
    const char *unit = fds__req_param(r, "bytes");
    if (unit && !strcmp(unit, "b"))
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)b);
    else if (unit && !strcmp(unit, "kb"))
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)(b / 1024));
    else if (b >= 1024ull * 1024 * 1024)
        snprintf(buf, sizeof buf, "%.1fgb", b / 1073741824.0);
    else if (b >= 1024ull * 1024)
        snprintf(buf, sizeof buf, "%.1fmb", b / 1048576.0);
    else if (b >= 1024)
        snprintf(buf, sizeof buf, "%.1fkb", b / 1024.0);
    else
        snprintf(buf, sizeof buf, "%llub", (unsigned long long)b);
    return strdup(buf);
}

static char *fmt_u64(uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return strdup(buf);
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

/* creation.date.string: ISO 8601 UTC with milliseconds. */
static char *iso_ms(int64_t ms)
{
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    int64_t rem = ms - days * 86400000, y;
    unsigned mo, d;
    fds_civil_from_days(days, &y, &mo, &d);
    char buf[40];
    snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y,
             mo, d, (int)(rem / 3600000), (int)(rem / 60000 % 60),
             (int)(rem / 1000 % 60), (int)(rem % 1000));
    return strdup(buf);
}

/* The indices of a _cat path's expression (/_cat/x/{expr}; default all),
 * open and closed, as cat's IndicesOptions expand them.  False with the
 * error answered in `o`. */
static bool cat_indices_of(fds_req *r, fds_resp *o, fds_index ***ixs, size_t *n)
{
    fds_err e;
    fds_err_clear(&e);
    fds_index_expr_opts opts = {.allow_no_indices = true, .expand_open = true,
                                .expand_closed = true};
    if (fds_index_expr_opts_read(cat_param_cb, r, &opts, &e) ||
        fds_index_expr_resolve(r->store, r->nseg >= 3 ? r->seg[2] : NULL, &opts,
                               ixs, n, &e)) {
        fds__resp_error(o, &e);
        return false;
    }
    return true;
}

/* _cat/indices: Elasticsearch 8's default columns in its order and its
 * column aliases; creation dates, codec and segment count on ?h= only.
 * ?health= keeps the rows of one health; the index expression of the path
 * (default: all) expands to open and closed indices, as cat's does. */
void fds__h_cat_indices(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {
        "health|h", "status|s", "index|i|idx", "uuid|id",
        "pri|p|shards.primary|shardsPrimary", "rep|r|shards.replica|shardsReplica",
        "docs.count|dc|docsCount", "docs.deleted|dd|docsDeleted",
        "store.size|ss|storeSize", "pri.store.size", "dataset.size",
        "*creation.date|cd", "*creation.date.string|cds", "*codec",
        "*segments.count|sc|segmentsCount"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    const char *health = fds__req_param(r, "health");
    if (health && strcmp(health, "green") && strcmp(health, "yellow") &&
        strcmp(health, "red"))
        return fds__resp_errorf(o, 400, "illegal_argument_exception",
                               "Invalid value [%s] for [health]: must be "
                               "green, yellow or red", health);
    fds_index **ixs = NULL;
    size_t n = 0;
    if (!cat_indices_of(r, o, &ixs, &n))
        return;
    char ***rows = calloc(n + 1, sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; rows && i < n; i++) {
        fds_index *ix = ixs[i];
        fds_index_stats st;
        fds_index_stats_get(ix, &st);
        fds_index_settings set;
        fds_index_get_settings(ix, &set);
        bool open = fds_index_is_open(ix);
        unsigned unassigned;
        const char *h = index_health(ix, &unassigned);
        if (health && strcmp(health, h))
            continue;
        char **row = calloc(ncol, sizeof *row);
        if (!row)
            break;
        row[0] = strdup(h);
        row[1] = strdup(open ? "open" : "close");
        row[2] = strdup(fds_index_name(ix));
        row[3] = strdup(fds_index_uuid(ix));
        row[4] = fmt_u64(fds_index_nshards(ix));
        row[5] = fmt_u64(set.number_of_replicas);
        row[6] = open ? fmt_u64(st.docs_count) : NULL;
        row[7] = open ? fmt_u64(st.docs_deleted) : NULL;
        row[8] = open ? human_bytes(r, st.store_bytes) : NULL;
        row[9] = open ? human_bytes(r, st.store_bytes) : NULL;
        row[10] = open ? human_bytes(r, st.store_bytes) : NULL;
        row[11] = fmt_u64((uint64_t)fds_index_creation_ms(ix));
        row[12] = iso_ms(fds_index_creation_ms(ix));
        row[13] = strdup(fds_codec_name(set.codec.codec));
        row[14] = fmt_u64(st.segments);
        rows[nr++] = row;
    }
    fds_index_expr_free(ixs, n);
    fds__cat_render(r, o, cols, ncol, rows, nr);
    fds__cat_rows_free(rows, nr, ncol);
}

/* The epoch and timestamp columns of _cat/count and _cat/health
 * (seconds; HH:MM:SS in UTC, as Elasticsearch prints them). */
static void cat_time(char **epoch, char **stamp)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char buf[16];
    strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    *epoch = fmt_u64((uint64_t)now);
    *stamp = strdup(buf);
}

/* Does `name` (an index, a setting) match the comma-separated expression
 * `expr` (names, `*` wildcards, `_all`; Elasticsearch's Regex.simpleMatch
 * over a list)? */
static bool pattern_list_match(const char *expr, const char *name)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", expr);
    for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t;
         t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, "_all") || !fnmatch(t, name, 0))
            return true;
    return false;
}

/* _cat/count: the count of a `_count` over the same index expression and
 * q= (RestCountAction under the cat table), so the two always agree --
 * hidden and closed indices included. */
void fds__h_cat_count(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {"epoch", "timestamp", "count"};
    static const char *const passed[] = {"q", "df", "default_operator",
                                         "ignore_unavailable", "allow_no_indices",
                                         "expand_wildcards"};
    const char *kv[2 * (sizeof passed / sizeof *passed)];
    unsigned nkv = 0;
    for (size_t i = 0; i < sizeof passed / sizeof *passed; i++) {
        const char *v = fds__req_param(r, passed[i]);
        if (v) {
            kv[2 * nkv] = passed[i];
            kv[2 * nkv++ + 1] = v;
        }
    }
    char count_seg[] = "_count";
    fds_req sub = {.store = r->store, .method = "GET", .url = r->url,
                   .body = "", .start_us = r->start_us, .kv = kv, .nkv = nkv};
    if (r->nseg == 3) {
        sub.seg[0] = r->seg[2];
        sub.seg[1] = count_seg;
        sub.nseg = 2;
    } else {
        sub.seg[0] = count_seg;
        sub.nseg = 1;
    }
    fds_resp c = {0};
    fds__h_search(&sub, &c, true);
    for (unsigned i = 0; i < sub.nparams; i++)
        free(sub.params[i]);
    free(sub.params);
    if (c.status != 200) /* its error, as _count answers it */
        return fds__resp_raw(o, c.status, c.body, c.len, c.content_type);
    cJSON *j = cJSON_ParseWithLength(c.body ? c.body : "", c.len);
    free(c.body);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "count");
    char *row[3];
    cat_time(&row[0], &row[1]);
    row[2] = fmt_u64(cJSON_IsNumber(n) ? (uint64_t)n->valuedouble : 0);
    cJSON_Delete(j);
    char **rows[1] = {row};
    fds__cat_render(r, o, cols, 3, rows, 1);
    for (int k = 0; k < 3; k++)
        free(row[k]);
}

/* A number of the cluster health answer `j`, as cell text. */
static char *health_cell(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return fmt_u64(cJSON_IsNumber(v) && v->valuedouble > 0 ? (uint64_t)v->valuedouble
                                                           : 0);
}

/* _cat/health is the cluster health answer as a table (Elasticsearch's
 * RestHealthAction renders its ClusterHealthResponse the same way), so
 * the two always agree. */
void fds__h_cat_health(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {
        "epoch", "timestamp", "cluster", "status", "node.total", "node.data",
        "shards", "pri", "relo", "init", "unassign", "unassign.pri",
        "pending_tasks", "max_task_wait_time", "active_shards_percent"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    static const char *const params[] = {"format", "h", "v", "s", "ts", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    fds_resp h = {0};
    health_answer(r, &h);
    cJSON *j = h.body ? cJSON_ParseWithLength(h.body, h.len) : NULL;
    free(h.body);
    if (!j)
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    char **names = NULL;
    size_t nindex = 0;
    fds_store_list_indices(r->store, &names, &nindex);
    for (size_t i = 0; i < nindex; i++)
        free(names[i]);
    free(names);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *pri = cJSON_GetObjectItemCaseSensitive(j, "active_primary_shards");
    const cJSON *pct = cJSON_GetObjectItemCaseSensitive(j, "active_shards_percent_as_number");
    size_t active_pri = cJSON_IsNumber(pri) ? (size_t)pri->valuedouble : 0;
    char pct_text[16];
    snprintf(pct_text, sizeof pct_text, "%.1f%%", cJSON_IsNumber(pct) ? pct->valuedouble
                                                                      : 100.0);
    char *row[sizeof cols / sizeof cols[0]];
    cat_time(&row[0], &row[1]);
    row[2] = strdup(CLUSTER_NAME);
    row[3] = strdup(cJSON_IsString(st) ? st->valuestring : "red");
    row[4] = health_cell(j, "number_of_nodes");
    row[5] = health_cell(j, "number_of_data_nodes");
    row[6] = health_cell(j, "active_shards");
    row[7] = health_cell(j, "active_primary_shards");
    row[8] = health_cell(j, "relocating_shards");
    row[9] = health_cell(j, "initializing_shards");
    row[10] = health_cell(j, "unassigned_shards");
    row[11] = fmt_u64(nindex > active_pri ? nindex - active_pri : 0);
    row[12] = fmt_u64(0);
    row[13] = strdup("-");
    row[14] = strdup(pct_text);
    cJSON_Delete(j);
    /* RestHealthAction declares node.total .. active_shards_percent
     * "text-align:right": with ?v the one row's cells stand right under
     * their headers (the renderer aligns left, so they are padded here;
     * without ?v, or as JSON, a cell is as wide as its text) */
    const char *fmt = fds__req_param(r, "format");
    if (fds__req_param_bool(r, "v", false) && !(fmt && !strcmp(fmt, "json")))
        for (size_t c = 4; c < ncol; c++) {
            char *p = NULL;
            if (row[c] && asprintf(&p, "%*s", (int)strlen(cols[c]), row[c]) >= 0) {
                free(row[c]);
                row[c] = p;
            }
        }
    /* ts=false leaves the epoch and timestamp columns out */
    bool ts = fds__req_param_bool(r, "ts", true);
    char **rows[1] = {ts ? row : row + 2};
    fds__cat_render(r, o, ts ? cols : cols + 2, ts ? ncol : ncol - 2, rows, 1);
    for (size_t c = 0; c < ncol; c++)
        free(row[c]);
}

void fds__h_cat_segments(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {"index", "shard", "prirep", "ip",
                                       "segment", "generation", "docs.count",
                                       "docs.deleted", "size", "committed",
                                       "searchable", "codec", "dict_id"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    char **names = NULL;
    size_t n = 0;
    fds_store_list_indices(r->store, &names, &n);
    char ***rows = NULL;
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        fds_index *ix;
        bool want = r->nseg < 3 || !strcmp(r->seg[2], names[i]);
        if (want && fds_store_get_index(r->store, names[i], &ix, NULL) == 0) {
            fds_segment_info *si = NULL;
            size_t ns = 0;
            if (fds_index_is_open(ix) && fds_index_segments(ix, &si, &ns) == 0) {
                char ***q = realloc(rows, (nr + ns + 1) * sizeof *rows);
                if (q) {
                    rows = q;
                    for (size_t k = 0; k < ns; k++) {
                        char **row = calloc(ncol, sizeof *row);
                        row[0] = strdup(names[i]);
                        row[1] = fmt_u64(si[k].shard);
                        row[2] = strdup("p");
                        row[3] = strdup("127.0.0.1");
                        row[4] = strdup(si[k].name);
                        row[5] = fmt_u64(si[k].generation);
                        row[6] = fmt_u64(si[k].docs_count);
                        row[7] = fmt_u64(si[k].docs_deleted);
                        row[8] = human_bytes(r, si[k].size_bytes);
                        row[9] = strdup("true");
                        row[10] = strdup("true");
                        row[11] = strdup(fds_codec_name(si[k].codec));
                        row[12] = fmt_u64(si[k].dict_id);
                        rows[nr++] = row;
                    }
                }
                free(si);
            }
            fds_index_release(ix);
        }
        free(names[i]);
    }
    free(names);
    fds__cat_render(r, o, cols, ncol, rows, nr);
    fds__cat_rows_free(rows, nr, ncol);
}

/* _cat/shards: one row per primary shard (index.number_of_shards of each
 * index of the path's expression, default all, open and closed), and for
 * each replica an UNASSIGNED row, as Elasticsearch lists a one-node
 * cluster's shards; docs and store of an open index's shard are its own
 * (fds_index_shard_stats_get). */
void fds__h_cat_shards(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {
        "index|i|idx", "shard|s|sh", "prirep|p|pr|primaryOrReplica",
        "state|st", "docs|d|dc", "store|sto", "dataset|ds", "ip", "id",
        "node|n", "*segments.count|sc|segmentsCount",
        "*unassigned.reason|ur"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    fds_index **ixs = NULL;
    size_t n = 0;
    if (!cat_indices_of(r, o, &ixs, &n))
        return;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        fds_index_settings set;
        fds_index_get_settings(ixs[i], &set);
        total += (size_t)fds_index_nshards(ixs[i]) * (1 + set.number_of_replicas);
    }
    char ***rows = calloc(total + 1, sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; rows && i < n; i++) {
        fds_index *ix = ixs[i];
        fds_index_settings set;
        fds_index_get_settings(ix, &set);
        bool open = fds_index_is_open(ix), failed = fds_index_failure(ix) != NULL;
        for (uint32_t sh = 0; sh < fds_index_nshards(ix); sh++) {
            fds_index_stats st;
            fds_index_shard_stats_get(ix, sh, &st);
            for (uint32_t c = 0; c <= set.number_of_replicas; c++) {
                char **row = calloc(ncol, sizeof *row);
                if (!row)
                    break;
                bool assigned = c == 0 && !failed;
                row[0] = strdup(fds_index_name(ix));
                row[1] = fmt_u64(sh);
                row[2] = strdup(c ? "r" : "p");
                row[3] = strdup(assigned ? "STARTED" : "UNASSIGNED");
                row[4] = assigned && open ? fmt_u64(st.docs_count) : NULL;
                row[5] = assigned && open ? human_bytes(r, st.store_bytes) : NULL;
                row[6] = assigned && open ? human_bytes(r, st.store_bytes) : NULL;
                row[7] = assigned ? strdup("127.0.0.1") : NULL;
                row[8] = assigned ? strdup(FDS__NODE_ID) : NULL;
                row[9] = assigned ? strdup(NODE_NAME) : NULL;
                row[10] = assigned && open ? fmt_u64(st.segments) : NULL;
                row[11] = assigned ? NULL
                                   : strdup(failed ? "ALLOCATION_FAILED"
                                                   : "INDEX_CREATED");
                rows[nr++] = row;
            }
        }
    }
    fds_index_expr_free(ixs, n);
    fds__cat_render(r, o, cols, ncol, rows, nr);
    fds__cat_rows_free(rows, nr, ncol);
}

/* ---- node statistics from /proc -------------------------------------------- */

static void loadavg(double out[3])
{
    out[0] = out[1] = out[2] = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &out[0], &out[1], &out[2]) != 3)
            out[0] = out[1] = out[2] = 0;
        fclose(f);
    }
}

static void meminfo(uint64_t *total, uint64_t *avail)
{
    *total = *avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return;
    char line[256];
    unsigned long long v;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemTotal: %llu kB", &v) == 1)
            *total = v * 1024;
        else if (sscanf(line, "MemAvailable: %llu kB", &v) == 1)
            *avail = v * 1024;
    }
    fclose(f);
}

/* Process CPU time in ms and the server's CPU% since the previous call
 * (100% = one core), as Elasticsearch's process.cpu.percent. */
static void process_cpu(uint64_t *total_ms, int *percent)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t last_cpu_ms, last_wall_ms;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t cpu = (uint64_t)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 +
                   (uint64_t)ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
    uint64_t wall = (uint64_t)(fds__now_us() / 1000);
    pthread_mutex_lock(&mu);
    *percent = 0;
    if (last_wall_ms && wall > last_wall_ms)
        *percent = (int)(100.0 * (double)(cpu - last_cpu_ms) / (double)(wall - last_wall_ms) + 0.5);
    last_cpu_ms = cpu;
    last_wall_ms = wall;
    pthread_mutex_unlock(&mu);
    *total_ms = cpu;
}

/* Node stats metrics Elasticsearch knows; we fill os, process and indices. */
static const char *const NODE_METRICS[] = {
    "adaptive_selection", "allocations", "breaker", "discovery", "fs", "http",
    "indexing_pressure", "indices", "ingest", "jvm", "os", "process",
    "repositories", "script", "script_cache", "thread_pool", "transport", NULL};

/* nodes.{id}.indices: the sections `metrics` asks for, summed over every
 * index of the node (as Elasticsearch sums its shards). */
static cJSON *node_indices_json(fds_store *store, const char *metrics)
{
    fds_index_stats sum = {0};
    fds__search_sum ss = {0};
    char **names = NULL;
    size_t n = 0;
    fds_store_list_indices(store, &names, &n);
    for (size_t i = 0; i < n; i++) {
        fds_index *ix;
        if (fds_store_get_index(store, names[i], &ix, NULL) == 0) {
            fds_index_stats st;
            fds_index_stats_get(ix, &st);
            sum.docs_count += st.docs_count;
            sum.docs_deleted += st.docs_deleted;
            sum.segments += st.segments;
            sum.store_bytes += st.store_bytes;
            sum.stored_fields_bytes += st.stored_fields_bytes;
            sum.postings_bytes += st.postings_bytes;
            sum.other_bytes += st.other_bytes;
            sum.raw_source_bytes += st.raw_source_bytes;
            fds__search_sum_add(&ss, fds_index_search_stats(ix));
            fds_index_release(ix);
        }
        free(names[i]);
    }
    free(names);
    return index_stats_json(&sum, &ss, metrics);
}

void fds__h_nodes_stats(fds_req *r, fds_resp *o)
{
    /* /_nodes/stats[/{metric}[/{index_metric}]] or
     * /_nodes/{node_id}/stats[/{metric}[/{index_metric}]] */
    unsigned at = !strcmp(r->seg[1], "stats") ? 2 : 3;
    const char *metrics = r->nseg > at ? r->seg[at] : NULL;
    const char *imetrics = r->nseg > at + 1 ? r->seg[at + 1] : NULL;
    if (!metrics_check(r, o, metrics, NODE_METRICS) ||
        !metrics_check(r, o, imetrics, INDEX_METRICS))
        return;
    double la[3];
    loadavg(la);
    uint64_t total, avail, cpu_ms;
    meminfo(&total, &avail);
    int pct;
    process_cpu(&cpu_ms, &pct);
    cJSON *j = cJSON_CreateObject();
    cJSON *nn = cJSON_AddObjectToObject(j, "_nodes");
    cJSON_AddNumberToObject(nn, "total", 1);
    cJSON_AddNumberToObject(nn, "successful", 1);
    cJSON_AddNumberToObject(nn, "failed", 0);
    cJSON_AddStringToObject(j, "cluster_name", CLUSTER_NAME);
    cJSON *nodes = cJSON_AddObjectToObject(j, "nodes");
    cJSON *n = cJSON_AddObjectToObject(nodes, NODE_ID);
    cJSON_AddNumberToObject(n, "timestamp", (double)time(NULL) * 1000);
    cJSON_AddStringToObject(n, "name", NODE_NAME);
    cJSON_AddStringToObject(n, "host", "127.0.0.1");
    cJSON_AddStringToObject(n, "ip", "127.0.0.1");
    if (metric_on(metrics, "indices"))
        cJSON_AddItemToObject(n, "indices", node_indices_json(r->store, imetrics));
    if (metric_on(metrics, "os")) {
        cJSON *os = cJSON_AddObjectToObject(n, "os");
        cJSON *oc = cJSON_AddObjectToObject(os, "cpu");
        cJSON *l = cJSON_AddObjectToObject(oc, "load_average");
        cJSON_AddNumberToObject(l, "1m", la[0]);
        cJSON_AddNumberToObject(l, "5m", la[1]);
        cJSON_AddNumberToObject(l, "15m", la[2]);
        cJSON *mem = cJSON_AddObjectToObject(os, "mem");
        cJSON_AddNumberToObject(mem, "total_in_bytes", (double)total);
        cJSON_AddNumberToObject(mem, "free_in_bytes", (double)avail);
        cJSON_AddNumberToObject(mem, "used_in_bytes", (double)(total - avail));
        cJSON_AddNumberToObject(mem, "used_percent",
                                total ? (int)(100.0 * (double)(total - avail) / (double)total) : 0);
    }
    if (metric_on(metrics, "process")) {
        cJSON *p = cJSON_AddObjectToObject(n, "process");
        cJSON_AddNumberToObject(p, "timestamp", (double)time(NULL) * 1000);
        cJSON_AddNumberToObject(p, "id", (double)getpid());
        cJSON *pc = cJSON_AddObjectToObject(p, "cpu");
        cJSON_AddNumberToObject(pc, "percent", pct);
        cJSON_AddNumberToObject(pc, "total_in_millis", (double)cpu_ms);
    }
    fds__resp_json(o, 200, j);
}

void fds__h_cat_nodes(fds_req *r, fds_resp *o)
{
    static const char *const cols[] = {"ip", "heap.percent", "ram.percent", "cpu",
                                       "load_1m", "load_5m", "load_15m",
                                       "node.role", "master", "name", "pid"};
    const size_t ncol = sizeof cols / sizeof cols[0];
    double la[3];
    loadavg(la);
    uint64_t total, avail, cpu_ms;
    meminfo(&total, &avail);
    int pct;
    process_cpu(&cpu_ms, &pct);
    char *row[11];
    char buf[11][32];
    snprintf(buf[0], 32, "127.0.0.1");
    snprintf(buf[1], 32, "0");
    snprintf(buf[2], 32, "%d", total ? (int)(100.0 * (double)(total - avail) / (double)total) : 0);
    snprintf(buf[3], 32, "%d", pct);
    snprintf(buf[4], 32, "%.2f", la[0]);
    snprintf(buf[5], 32, "%.2f", la[1]);
    snprintf(buf[6], 32, "%.2f", la[2]);
    snprintf(buf[7], 32, "dim");
    snprintf(buf[8], 32, "*");
    snprintf(buf[9], 32, NODE_NAME);
    snprintf(buf[10], 32, "%d", (int)getpid());
    for (size_t i = 0; i < ncol; i++)
        row[i] = buf[i];
    char **rows[1] = {row};
    fds__cat_render(r, o, cols, ncol, rows, 1);
}

/* GET /_cat: the cat endpoints, one per line, as Elasticsearch lists them. */
void fds__h_cat_help(fds_req *r, fds_resp *o)
{
    (void)r;
    static const char text[] = "=^.^=\n/_cat/indices\n/_cat/indices/{index}\n"
                               "/_cat/segments\n/_cat/segments/{index}\n"
                               "/_cat/shards\n/_cat/shards/{index}\n"
                               "/_cat/count\n/_cat/count/{index}\n/_cat/health\n"
                               "/_cat/nodes\n";
    fds__resp_raw(o, 200, strdup(text), sizeof text - 1, "text/plain; charset=UTF-8");
}
