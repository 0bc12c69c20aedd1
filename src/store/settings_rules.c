/*
 * settings_rules.c: which setting of an index may change when, as
 * Elasticsearch's MetadataUpdateSettingsService decides it -- dynamic
 * settings any time, static ones at creation or while the index is closed
 * (or through reopen), final ones at creation only, the informational ones
 * never -- and a settings update planned over every index before any is
 * committed.  Values and their syntax are settings.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_rules.h"

#define BLOCKS_PREFIX "index.blocks."

/* Read-only settings Elasticsearch shows but never takes. */
static bool informational(const char *key)
{
    return !strcmp(key, "index.uuid") || !strcmp(key, "index.creation_date") ||
           !strcmp(key, "index.provided_name") ||
           !strncmp(key, "index.version.", 14);
}

static int not_updateable(fds_err *err, const char *index_name, const char *key)
{
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "final %s setting [%s], not updateable", index_name, key);
}

/* The default value text of setting `key` (index.codec.compression_level
 * is index.compression.zstd.level's other name), or "" when it has none;
 * `dk` holds the text. */
static const char *default_text(const char *key, fds_setting_kv *dk)
{
    fds_index_settings def;
    fds_index_settings_default(&def);
    size_t dn = fds_settings_to_kv(&def, dk, FDS_SETTINGS_MAX);
    const char *v = "";
    for (size_t j = 0; j < dn; j++)
        if (!strcmp(dk[j].key, key) ||
            (!strcmp(key, "index.codec.compression_level") &&
             !strcmp(dk[j].key, "index.compression.zstd.level")))
            v = dk[j].value;
    return v;
}

int fds_settings_apply(fds_index_settings *set, const fds_setting_text *kv,
                       size_t n, bool creating, bool index_open,
                       const char *index_name, const char *uuid, fds_err *err)
{
    char statics[512] = "";
    bool level_given = false, codec_given = false;
    for (size_t i = 0; i < n; i++) {
        if (informational(kv[i].key))
            return not_updateable(err, index_name, kv[i].key);
        fds_setting_kind k = fds_setting_kind_of(kv[i].key);
        if (k == FDS_SETTING_UNKNOWN)
            return fds_settings_set(set, kv[i].key, kv[i].value, err);
        if (!creating && k == FDS_SETTING_FINAL)
            return not_updateable(err, index_name, kv[i].key);
        if (!creating && k == FDS_SETTING_STATIC && index_open) {
            size_t l = strlen(statics);
            snprintf(statics + l, sizeof statics - l, "%s%s", l ? ", " : "",
                     kv[i].key);
            continue;
        }
        const char *v = kv[i].value;
        if (!strcmp(kv[i].key, "index.codec"))
            codec_given = true;
        else if (*v && (!strcmp(kv[i].key, "index.compression.zstd.level") ||
                        !strcmp(kv[i].key, "index.codec.compression_level")))
            level_given = true;
        fds_setting_kv dk[FDS_SETTINGS_MAX]; /* v may point into it below */
        if (!*v) /* null: back to the default */
            v = default_text(kv[i].key, dk);
        int rc = fds_settings_set(set, kv[i].key, v, err);
        if (rc)
            return rc;
    }
    if (statics[0])
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Can't update non dynamic settings [[%s]] for open "
                            "indices [[%s/%s]]", statics, index_name, uuid);
    return fds_settings_check(set, level_given, codec_given, err);
}

/* Drop from kv[0..*n) the settings `ix` already has (a value other than
 * the default, as GET /_settings shows them): preserve_existing. */
static void keep_unset(fds_index *ix, fds_setting_text *kv, size_t *n)
{
    fds_index_settings set, def;
    fds_index_get_settings(ix, &set);
    fds_index_settings_default(&def);
    fds_setting_kv cur[FDS_SETTINGS_MAX], dk[FDS_SETTINGS_MAX];
    size_t nc = fds_settings_to_kv(&set, cur, FDS_SETTINGS_MAX);
    size_t dn = fds_settings_to_kv(&def, dk, FDS_SETTINGS_MAX);
    size_t w = 0;
    for (size_t i = 0; i < *n; i++) {
        bool have = false;
        for (size_t j = 0; j < nc; j++)
            if (!strcmp(cur[j].key, kv[i].key))
                have = j >= dn || strcmp(cur[j].value, dk[j].value) ||
                       !strcmp(kv[i].key, "index.number_of_shards") ||
                       !strcmp(kv[i].key, "index.number_of_replicas");
        if (!have)
            kv[w++] = kv[i];
    }
    *n = w;
}

int fds_index_settings_plan(fds_index *ix, const fds_settings_update *u,
                            fds_index_settings *out, bool *bounce,
                            fds_err *err)
{
    *bounce = false;
    /* a change of index.blocks.* alone passes the metadata blocks, as
     * Elasticsearch's update settings lets blocks be lifted */
    bool blocks_only = true;
    for (size_t i = 0; i < u->n; i++)
        blocks_only &= !strncmp(u->kv[i].key, BLOCKS_PREFIX, strlen(BLOCKS_PREFIX));
    int rc = 0;
    if (!blocks_only &&
        (rc = fds_index_check_block(ix, FDS_BLOCK_LEVEL_METADATA_WRITE, err)))
        return rc;
    fds_setting_text *mine = malloc((u->n ? u->n : 1) * sizeof *mine);
    if (!mine)
        return fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    size_t m = u->n;
    memcpy(mine, u->kv, u->n * sizeof *mine);
    if (u->preserve_existing)
        keep_unset(ix, mine, &m);
    bool open = fds_index_is_open(ix);
    const char *name = fds_index_name(ix), *uuid = fds_index_uuid(ix);
    fds_index_get_settings(ix, out);
    rc = fds_settings_apply(out, mine, m, false, open && !u->reopen, name, uuid,
                            err);
    if (!rc && open && u->reopen) {
        /* only when a static setting is among them */
        fds_index_settings probe;
        fds_index_get_settings(ix, &probe);
        fds_err pe;
        fds_err_clear(&pe);
        *bounce = fds_settings_apply(&probe, mine, m, false, true, name, uuid,
                                     &pe) != 0;
    }
    free(mine);
    return rc;
}

int fds_index_settings_commit(fds_index *ix, const fds_index_settings *set,
                              bool bounce, fds_err *err)
{
    int rc = 0;
    if (bounce)
        rc = fds_index_set_open(ix, false, err);
    if (!rc)
        rc = fds_index_put_settings(ix, set, err);
    if (bounce) {
        fds_err oe;
        fds_err_clear(&oe);
        int orc = fds_index_set_open(ix, true, &oe);
        if (!rc && orc) {
            rc = orc;
            if (err)
                *err = oe;
        }
    }
    return rc;
}

int fds_index_update_settings(fds_index *ix, const fds_settings_update *u,
                              fds_err *err)
{
    fds_index_settings set;
    bool bounce;
    int rc = fds_index_settings_plan(ix, u, &set, &bounce, err);
    return rc ? rc : fds_index_settings_commit(ix, &set, bounce, err);
}
