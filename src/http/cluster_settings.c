/*
 * cluster_settings.c: GET and PUT /_cluster/settings for the one cluster
 * setting fieldstore has, action.destructive_requires_name (Elasticsearch
 * 8's default true: DELETE /{index} refuses wildcards and _all).  Persistent
 * values live in the catalogue's meta table (fds_store_meta_*), so they
 * outlive a restart; transient ones live in this process only (one server
 * per process) and win over persistent ones, as in Elasticsearch.  Any
 * other setting is refused as Elasticsearch refuses an unknown one.
 */
#include <cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

/* The cluster settings: name, default (boolean text). */
static const struct {
    const char *name;
    const char *dflt;
} CLUSTER_SETTINGS[] = {
    {"action.destructive_requires_name", "true"},
};
#define NSETTINGS (sizeof CLUSTER_SETTINGS / sizeof *CLUSTER_SETTINGS)
#define META_PREFIX "cluster." /* meta table key: prefix + setting name */
#define BOOL_TEXT_MAX 8        /* "true", "false" and the NUL */

static pthread_mutex_t transient_mu = PTHREAD_MUTEX_INITIALIZER;
static char transient[NSETTINGS][BOOL_TEXT_MAX]; /* "" = not set */

static int setting_of(const char *name)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (!strcmp(CLUSTER_SETTINGS[i].name, name))
            return (int)i;
    return -1;
}

/* The persistent value of setting k into buf (cap BOOL_TEXT_MAX); false
 * when it has none. */
static bool persistent_value(fds_store *st, size_t k, char *buf)
{
    char key[128];
    snprintf(key, sizeof key, META_PREFIX "%s", CLUSTER_SETTINGS[k].name);
    return fds_store_meta_get(st, key, buf, BOOL_TEXT_MAX) == 0;
}

bool fds__destructive_requires_name(fds_store *st)
{
    size_t k = (size_t)setting_of("action.destructive_requires_name");
    char v[BOOL_TEXT_MAX];
    pthread_mutex_lock(&transient_mu);
    snprintf(v, sizeof v, "%s", transient[k]);
    pthread_mutex_unlock(&transient_mu);
    if (!v[0] && !persistent_value(st, k, v))
        snprintf(v, sizeof v, "%s", CLUSTER_SETTINGS[k].dflt);
    return !strcmp(v, "true");
}

/* Add `name` = `value` to `j`, flat or nested at its dots. */
static void put_setting(cJSON *j, const char *name, const char *value, bool flat)
{
    if (flat) {
        cJSON_AddStringToObject(j, name, value);
        return;
    }
    char path[128];
    snprintf(path, sizeof path, "%s", name);
    cJSON *at = j;
    char *seg = path;
    for (char *dot; (dot = strchr(seg, '.')); seg = dot + 1) {
        *dot = 0;
        cJSON *next = cJSON_GetObjectItemCaseSensitive(at, seg);
        at = next ? next : cJSON_AddObjectToObject(at, seg);
    }
    cJSON_AddStringToObject(at, seg, value);
}

void fds_h_cluster_settings_get(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {"flat_settings", "include_defaults",
                                         "master_timeout", "timeout", "local", NULL};
    if (!fds_req_check_params(r, o, params))
        return;
    bool flat = fds_req_param_bool(r, "flat_settings", false);
    cJSON *j = cJSON_CreateObject();
    cJSON *per = cJSON_AddObjectToObject(j, "persistent");
    cJSON *tr = cJSON_AddObjectToObject(j, "transient");
    cJSON *def = fds_req_param_bool(r, "include_defaults", false)
                     ? cJSON_AddObjectToObject(j, "defaults") : NULL;
    for (size_t k = 0; k < NSETTINGS; k++) {
        char v[BOOL_TEXT_MAX];
        if (persistent_value(r->store, k, v))
            put_setting(per, CLUSTER_SETTINGS[k].name, v, flat);
        pthread_mutex_lock(&transient_mu);
        snprintf(v, sizeof v, "%s", transient[k]);
        pthread_mutex_unlock(&transient_mu);
        if (v[0])
            put_setting(tr, CLUSTER_SETTINGS[k].name, v, flat);
        if (def)
            put_setting(def, CLUSTER_SETTINGS[k].name, CLUSTER_SETTINGS[k].dflt, flat);
    }
    fds_resp_json(o, 200, j);
}

/* One requested change: setting index and new value ("" = reset). */
typedef struct change {
    size_t k;
    bool persistent;
    char value[BOOL_TEXT_MAX];
} change;

#define CHANGES_MAX 16 /* per request: more is more than there are settings */

/* Flatten `obj` (the "persistent" or "transient" object, at `prefix`) into
 * ch[*n..]: 0 or an error answered. */
static int read_changes(fds_resp *o, const cJSON *obj, const char *prefix,
                        bool persistent, change *ch, size_t *n)
{
    const char *scope = persistent ? "persistent" : "transient";
    const cJSON *c;
    cJSON_ArrayForEach(c, obj) {
        char name[128];
        snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "", c->string);
        if (cJSON_IsObject(c)) {
            if (read_changes(o, c, name, persistent, ch, n))
                return -1;
            continue;
        }
        int k = setting_of(name);
        if (k < 0) {
            fds_resp_errorf(o, 400, "illegal_argument_exception",
                            "%s setting [%s], not recognized", scope, name);
            return -1;
        }
        const char *v = cJSON_IsTrue(c) ? "true" : cJSON_IsFalse(c) ? "false"
                        : cJSON_IsString(c) ? c->valuestring : NULL;
        if (!cJSON_IsNull(c) && (!v || (strcmp(v, "true") && strcmp(v, "false")))) {
            char *txt = cJSON_PrintUnformatted(c);
            fds_resp_errorf(o, 400, "illegal_argument_exception",
                            "Failed to parse value [%s] as only [true] or "
                            "[false] are allowed.",
                            v ? v : txt ? txt : "?");
            free(txt);
            return -1;
        }
        if (*n >= CHANGES_MAX) {
            fds_resp_errorf(o, 400, "illegal_argument_exception",
                            "too many settings in one request (at most %d)",
                            CHANGES_MAX);
            return -1;
        }
        change *x = &ch[(*n)++];
        x->k = (size_t)k;
        x->persistent = persistent;
        snprintf(x->value, sizeof x->value, "%s", cJSON_IsNull(c) ? "" : v);
    }
    return 0;
}

/* PUT /_cluster/settings: {"persistent": {...}, "transient": {...}}, each
 * nested or flat; null resets a setting.  Every change is checked before
 * any applies; a persistent one is committed to the catalogue before the
 * answer, which lists the applied values as Elasticsearch's
 * ClusterUpdateSettingsResponse does. */
void fds_h_cluster_settings_put(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {"flat_settings", "master_timeout",
                                         "timeout", NULL};
    if (!fds_req_check_params(r, o, params))
        return;
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_checked(r, &body, &e))
        return fds_resp_error(o, &e);
    change ch[CHANGES_MAX];
    size_t n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, body) {
        bool per = !strcmp(c->string, "persistent");
        if (!per && strcmp(c->string, "transient")) {
            cJSON_Delete(body);
            return fds_resp_errorf(o, 400, "x_content_parse_exception",
                                   "[cluster_update_settings_request] unknown "
                                   "field [%s]", c->string);
        }
        if (cJSON_IsObject(c) && read_changes(o, c, "", per, ch, &n)) {
            cJSON_Delete(body);
            return;
        }
    }
    cJSON_Delete(body);
    if (!n)
        return fds_resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: no settings to update;");
    bool flat = fds_req_param_bool(r, "flat_settings", false);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    cJSON *per = cJSON_AddObjectToObject(j, "persistent");
    cJSON *tr = cJSON_AddObjectToObject(j, "transient");
    for (size_t i = 0; i < n; i++) {
        const char *name = CLUSTER_SETTINGS[ch[i].k].name;
        if (ch[i].persistent) {
            char key[128];
            snprintf(key, sizeof key, META_PREFIX "%s", name);
            if (fds_store_meta_put(r->store, key, ch[i].value[0] ? ch[i].value : NULL,
                                   &e)) {
                cJSON_Delete(j);
                return fds_resp_error(o, &e);
            }
        } else {
            pthread_mutex_lock(&transient_mu);
            snprintf(transient[ch[i].k], BOOL_TEXT_MAX, "%s", ch[i].value);
            pthread_mutex_unlock(&transient_mu);
        }
        if (ch[i].value[0])
            put_setting(ch[i].persistent ? per : tr, name, ch[i].value, flat);
    }
    fds_resp_json(o, 200, j);
}
