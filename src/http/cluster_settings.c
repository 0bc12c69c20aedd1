/*
 * cluster_settings.c: GET and PUT /_cluster/settings for the cluster
 * settings fieldstore has: action.destructive_requires_name
 * (Elasticsearch 8's default true: DELETE /{index} refuses wildcards and
 * _all), action.auto_create_index (which missing indices a write may
 * create: true, false, or a comma list of +/- index patterns, the first
 * match deciding, as AutoCreateIndex reads it), and the disk watermarks
 * (cluster.routing.allocation.disk.*, cluster.info.update.interval:
 * src/store/disk.h parses and checks them as one set and applies them).
 * Persistent values live in the catalogue's meta table (fds_store_meta_*),
 * so they outlive a restart; transient ones live in this process only (one
 * server per process) and win over persistent ones, as in Elasticsearch.
 * Any other setting is refused as Elasticsearch refuses an unknown one.
 */
#include <cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_settings.h"
#include "disk.h"
#include "fds_text.h"
#include "handlers.h"
#include "request.h"
#include "response.h"

/* The cluster settings: name, default, and kind: a boolean, an
 * auto-create pattern list (auto_create_parse), or one of the disk
 * settings (disk.h, after these: setting k is disk setting k - NACTION). */
enum { KIND_BOOL, KIND_AUTO_CREATE, KIND_DISK };
static const struct {
    const char *name;
    const char *dflt;
    int kind;
} ACTION_SETTINGS[] = {
    {"action.destructive_requires_name", "true", KIND_BOOL},
    {"action.auto_create_index", "true", KIND_AUTO_CREATE},
};
#define NACTION (sizeof ACTION_SETTINGS / sizeof *ACTION_SETTINGS)
#define NSETTINGS (NACTION + FDS_DISK_NSETTINGS)
#define META_PREFIX "cluster." /* meta table key: prefix + setting name */
#define BOOL_TEXT_MAX 256      /* a value and its NUL (a pattern list) */
/* action.auto_create_index patterns at most */
#define AUTO_CREATE_PATTERNS_MAX 32

static pthread_mutex_t transient_mu = PTHREAD_MUTEX_INITIALIZER;
static char transient[NSETTINGS][BOOL_TEXT_MAX]; /* "" = not set */

static const char *name_of(size_t k)
{
    return k < NACTION ? ACTION_SETTINGS[k].name : fds_disk_setting_name((int)(k - NACTION));
}

static const char *default_of(size_t k)
{
    return k < NACTION ? ACTION_SETTINGS[k].dflt
                       : fds_disk_setting_default((int)(k - NACTION));
}

static int kind_of(size_t k)
{
    return k < NACTION ? ACTION_SETTINGS[k].kind : KIND_DISK;
}

static int setting_of(const char *name)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (!strcmp(name_of(i), name))
            return (int)i;
    return -1;
}

/* The persistent value of setting k into buf (cap BOOL_TEXT_MAX); false
 * when it has none. */
static bool persistent_value(fds_store *st, size_t k, char *buf)
{
    char key[160];
    snprintf(key, sizeof key, META_PREFIX "%s", name_of(k));
    return fds_store_meta_get(st, key, buf, BOOL_TEXT_MAX) == 0;
}

/* The value of setting `name` in effect (transient, else persistent,
 * else the default) into v[BOOL_TEXT_MAX]. */
static void setting_value(fds_store *st, const char *name, char *v)
{
    size_t k = (size_t)setting_of(name);
    pthread_mutex_lock(&transient_mu);
    snprintf(v, BOOL_TEXT_MAX, "%s", transient[k]);
    pthread_mutex_unlock(&transient_mu);
    if (!v[0] && !persistent_value(st, k, v))
        snprintf(v, BOOL_TEXT_MAX, "%s", default_of(k));
}

bool fds__destructive_requires_name(fds_store *st)
{
    char v[BOOL_TEXT_MAX];
    setting_value(st, "action.destructive_requires_name", v);
    return !strcmp(v, "true");
}

/* action.auto_create_index as AutoCreateIndex.AutoCreate reads it: "true"
 * or "false" (*all set, 1 or 0), or patterns split at commas into
 * pats[0, *n) (in place in buf), each with a leading '+' (or none: include)
 * or '-' (exclude) into incl[].  False for an empty pattern or a bare sign. */
static bool auto_create_parse(char *buf, int *all, char **pats, bool *incl, size_t *n)
{
    *n = 0;
    *all = !strcmp(buf, "true") ? 1 : !strcmp(buf, "false") ? 0 : -1;
    if (*all >= 0)
        return true;
    for (char *p = buf, *next; p; p = next) {
        next = strchr(p, ',');
        if (next)
            *next++ = 0;
        while (*p == ' ')
            p++;
        size_t l = strlen(p);
        while (l && p[l - 1] == ' ')
            p[--l] = 0;
        bool sign = *p == '+' || *p == '-';
        if (!l || (sign && l == 1) || *n == AUTO_CREATE_PATTERNS_MAX)
            return false;
        incl[*n] = *p != '-';
        pats[(*n)++] = sign ? p + 1 : p;
    }
    return true;
}

int fds__auto_create_check(fds_store *st, const char *index, fds_err *err)
{
    char v[BOOL_TEXT_MAX], shown[BOOL_TEXT_MAX];
    setting_value(st, "action.auto_create_index", v);
    snprintf(shown, sizeof shown, "%s", v);
    char *pats[AUTO_CREATE_PATTERNS_MAX];
    bool incl[AUTO_CREATE_PATTERNS_MAX];
    size_t n;
    int all;
    int rc = 0;
    if (!auto_create_parse(v, &all, pats, incl, &n) || all == 1)
        return 0; /* (a stored value that does not parse was refused on PUT) */
    if (all == 0)
        rc = fds_err_setk(err, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                          "no such index [%s] and [action.auto_create_index] is "
                          "[false]", index);
    for (size_t i = 0; all && i < n; i++)
        if (fds_glob_match(pats[i], index, strlen(index))) {
            if (incl[i])
                return 0;
            rc = fds_err_setk(err, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                              "no such index [%s] and [action.auto_create_index] "
                              "contains [-%s] which forbids automatic creation of the "
                              "index", index, pats[i]);
            break;
        }
    if (!rc)
        rc = fds_err_setk(err, FDS_ENOTFOUND, FDS_KIND_INDEX_NOT_FOUND,
                          "no such index [%s] and [action.auto_create_index] ([%s]) "
                          "doesn't match", index, shown);
    if (err)
        snprintf(err->index, sizeof err->index, "%s", index);
    return rc;
}

/* Add `name` = `value` to `j`, flat or nested at its dots. */
static void put_setting(cJSON *j, const char *name, const char *value, bool flat)
{
    if (flat) {
        cJSON_AddStringToObject(j, name, value);
        return;
    }
    char path[160];
    snprintf(path, sizeof path, "%s", name);
    cJSON *at = j;
    char *seg = path;
    for (char *dot; (dot = strchr(seg, '.')); seg = dot + 1) {
        *dot = 0;
        cJSON *next = cJSON_GetObjectItemCaseSensitive(at, seg);
        if (next && !cJSON_IsObject(next)) {
            /* "low" holds a value and "low.max_headroom" another: the
             * rest of the name stays flat beside it */
            *dot = '.';
            break;
        }
        at = next ? next : cJSON_AddObjectToObject(at, seg);
    }
    cJSON_AddStringToObject(at, seg, value);
}

void fds__h_cluster_settings_get(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {"flat_settings", "include_defaults",
                                         "master_timeout", "timeout", "local", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    bool flat = fds__req_param_bool(r, "flat_settings", false);
    cJSON *j = cJSON_CreateObject();
    cJSON *per = cJSON_AddObjectToObject(j, "persistent");
    cJSON *tr = cJSON_AddObjectToObject(j, "transient");
    cJSON *def = fds__req_param_bool(r, "include_defaults", false)
                     ? cJSON_AddObjectToObject(j, "defaults") : NULL;
    bool watermark_set[3] = {false, false, false}; /* low, high, flood */
    for (size_t k = 0; k < NSETTINGS; k++) {
        char v[BOOL_TEXT_MAX];
        bool given = false;
        if (persistent_value(r->store, k, v)) {
            put_setting(per, name_of(k), v, flat);
            given = true;
        }
        pthread_mutex_lock(&transient_mu);
        snprintf(v, sizeof v, "%s", transient[k]);
        pthread_mutex_unlock(&transient_mu);
        if (v[0]) {
            put_setting(tr, name_of(k), v, flat);
            given = true;
        }
        int dk = (int)k - (int)NACTION;
        if (dk == FDS_DISK_LOW || dk == FDS_DISK_HIGH || dk == FDS_DISK_FLOOD)
            watermark_set[(dk - FDS_DISK_LOW) / 2] = given;
        /* a max_headroom's default is -1 once its watermark is given */
        bool headroom = dk == FDS_DISK_LOW_HEADROOM || dk == FDS_DISK_HIGH_HEADROOM ||
                        dk == FDS_DISK_FLOOD_HEADROOM;
        if (def)
            put_setting(def, name_of(k),
                        headroom && watermark_set[(dk - FDS_DISK_LOW_HEADROOM) / 2]
                            ? "-1" : default_of(k), flat);
    }
    fds__resp_json(o, 200, j);
}

/* One requested change: setting index and new value ("" = reset). */
typedef struct change {
    size_t k;
    bool persistent;
    char value[BOOL_TEXT_MAX];
} change;

#define CHANGES_MAX 32 /* per request: more is more than there are settings */

/* Flatten `obj` (the "persistent" or "transient" object, at `prefix`) into
 * ch[*n..]: 0 or an error answered. */
static int read_changes(fds_resp *o, const cJSON *obj, const char *prefix,
                        bool persistent, change *ch, size_t *n)
{
    const char *scope = persistent ? "persistent" : "transient";
    const cJSON *c;
    cJSON_ArrayForEach(c, obj) {
        char name[160];
        snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "", c->string);
        if (cJSON_IsObject(c)) {
            if (read_changes(o, c, name, persistent, ch, n))
                return -1;
            continue;
        }
        int k = setting_of(name);
        if (k < 0) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "%s setting [%s], not recognized", scope, name);
            return -1;
        }
        char num[64];
        if (cJSON_IsNumber(c) && kind_of((size_t)k) == KIND_DISK)
            snprintf(num, sizeof num, "%.17g", c->valuedouble);
        const char *v = cJSON_IsTrue(c) ? "true" : cJSON_IsFalse(c) ? "false"
                        : cJSON_IsString(c) ? c->valuestring
                        : cJSON_IsNumber(c) && kind_of((size_t)k) == KIND_DISK ? num
                                                                              : NULL;
        if (kind_of((size_t)k) == KIND_DISK && !cJSON_IsNull(c) &&
            (!v || strlen(v) >= BOOL_TEXT_MAX)) {
            char *txt = cJSON_PrintUnformatted(c);
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "failed to parse value [%s] for setting [%s]",
                            txt ? txt : "?", name);
            free(txt);
            return -1;
        }
        if (kind_of((size_t)k) == KIND_DISK) {
            /* checked as one set with the others (disk_check) */
        } else if (kind_of((size_t)k) == KIND_AUTO_CREATE && !cJSON_IsNull(c)) {
            char buf[BOOL_TEXT_MAX], *pats[AUTO_CREATE_PATTERNS_MAX];
            bool incl[AUTO_CREATE_PATTERNS_MAX];
            size_t np;
            int all;
            snprintf(buf, sizeof buf, "%s", v ? v : "");
            if (!v || strlen(v) >= sizeof buf ||
                !auto_create_parse(buf, &all, pats, incl, &np)) {
                fds__resp_errorf(o, 400, "illegal_argument_exception",
                                "Can't parse [%s] for setting [%s] must be either "
                                "[true, false, or a comma separated list of index "
                                "patterns]", v ? v : "", name);
                return -1;
            }
        } else if (!cJSON_IsNull(c) && (!v || (strcmp(v, "true") && strcmp(v, "false")))) {
            char *txt = cJSON_PrintUnformatted(c);
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                            "Failed to parse value [%s] as only [true] or "
                            "[false] are allowed.",
                            v ? v : txt ? txt : "?");
            free(txt);
            return -1;
        }
        if (*n >= CHANGES_MAX) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
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

/* The disk settings as they would stand after the changes ch[0, n)
 * (transient, else persistent, else the default), parsed and checked as
 * one set (disk.h) into *out: 0, or FDS_EINVAL with err filled. */
static int disk_check(fds_store *st, const change *ch, size_t n,
                      fds_disk_settings *out, fds_err *err)
{
    char per[FDS_DISK_NSETTINGS][BOOL_TEXT_MAX], tr[FDS_DISK_NSETTINGS][BOOL_TEXT_MAX];
    const char *v[FDS_DISK_NSETTINGS];
    for (int d = 0; d < FDS_DISK_NSETTINGS; d++) {
        size_t k = NACTION + (size_t)d;
        if (!persistent_value(st, k, per[d]))
            per[d][0] = 0;
        pthread_mutex_lock(&transient_mu);
        snprintf(tr[d], BOOL_TEXT_MAX, "%s", transient[k]);
        pthread_mutex_unlock(&transient_mu);
    }
    for (size_t i = 0; i < n; i++)
        if (kind_of(ch[i].k) == KIND_DISK)
            snprintf(ch[i].persistent ? per[ch[i].k - NACTION] : tr[ch[i].k - NACTION],
                     BOOL_TEXT_MAX, "%s", ch[i].value);
    for (int d = 0; d < FDS_DISK_NSETTINGS; d++)
        v[d] = tr[d][0] ? tr[d] : per[d][0] ? per[d] : NULL;
    return fds_disk_settings_parse(v, out, err);
}

/* PUT /_cluster/settings: {"persistent": {...}, "transient": {...}}, each
 * nested or flat; null resets a setting.  Every change is checked before
 * any applies; a persistent one is committed to the catalogue before the
 * answer, which lists the applied values as Elasticsearch's
 * ClusterUpdateSettingsResponse does. */
void fds__h_cluster_settings_put(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {"flat_settings", "master_timeout",
                                         "timeout", NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    fds_err e;
    fds_err_clear(&e);
    cJSON *body = NULL;
    if (fds__body_checked(r, &body, &e))
        return fds__resp_error(o, &e);
    change ch[CHANGES_MAX];
    size_t n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, body) {
        bool per = !strcmp(c->string, "persistent");
        if (!per && strcmp(c->string, "transient")) {
            cJSON_Delete(body);
            return fds__resp_errorf(o, 400, "x_content_parse_exception",
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
        return fds__resp_errorf(o, 400, "action_request_validation_exception",
                               "Validation Failed: 1: no settings to update;");
    fds_disk_settings disk;
    bool disk_changed = false;
    for (size_t i = 0; i < n; i++)
        disk_changed |= kind_of(ch[i].k) == KIND_DISK;
    if (disk_changed && disk_check(r->store, ch, n, &disk, &e))
        return fds__resp_error(o, &e);
    bool flat = fds__req_param_bool(r, "flat_settings", false);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "acknowledged", 1);
    cJSON *per = cJSON_AddObjectToObject(j, "persistent");
    cJSON *tr = cJSON_AddObjectToObject(j, "transient");
    for (size_t i = 0; i < n; i++) {
        const char *name = name_of(ch[i].k);
        if (ch[i].persistent) {
            char key[160];
            snprintf(key, sizeof key, META_PREFIX "%s", name);
            if (fds_store_meta_put(r->store, key, ch[i].value[0] ? ch[i].value : NULL,
                                   &e)) {
                cJSON_Delete(j);
                return fds__resp_error(o, &e);
            }
        } else {
            pthread_mutex_lock(&transient_mu);
            snprintf(transient[ch[i].k], BOOL_TEXT_MAX, "%s", ch[i].value);
            pthread_mutex_unlock(&transient_mu);
        }
        if (ch[i].value[0])
            put_setting(ch[i].persistent ? per : tr, name, ch[i].value, flat);
    }
    if (disk_changed)
        fds_store_set_disk_settings(r->store, &disk);
    fds__resp_json(o, 200, j);
}
