/*
 * index_rules.h: the rules an index's metadata obeys whoever asks for a
 * change (Elasticsearch's MetadataUpdateSettingsService and
 * MetadataCreateIndexService): which setting may change when (dynamic,
 * static, final), and the refusals of read-only ones.  src/http only parses
 * a request into these shapes and answers; a test, a benchmark or a tool
 * calling the store meets the same rules.
 */
#ifndef FDS_INDEX_RULES_H
#define FDS_INDEX_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/* ---- the final settings guard (settings.c) ------------------------------ */

/*
 * Does `next` keep every final setting of `cur`?  0, or FDS_EINVAL (kind
 * INVALID_ARGUMENT, "final <name> setting [<key>], not updateable") for
 * the first one it changes.  fds_index_put_settings calls it, so no caller
 * changes a final setting of an existing index.
 */
int fds_settings_check_final(const fds_index_settings *cur,
                             const fds_index_settings *next, const char *name,
                             fds_err *err);

/* ---- settings changes (settings_rules.c) -------------------------------- */

/* One setting as text, its full name and its value ("index.codec" =
 * "ZSTD"); an empty value puts the setting back to its default (a JSON
 * null).  Names longer than the buffer are cut. */
#define FDS_SETTING_KEY_MAX 160
#define FDS_SETTING_TEXT_MAX 256
/* The most settings one request may name ("too many settings" past it). */
#define FDS_SETTINGS_GIVEN_MAX 64
typedef struct fds_setting_text {
    char key[FDS_SETTING_KEY_MAX];
    char value[FDS_SETTING_TEXT_MAX];
} fds_setting_text;

/*
 * Apply kv[0, n) onto `set`, in order, with Elasticsearch's rules: the
 * informational settings (index.uuid, index.creation_date,
 * index.provided_name, index.version.*) and, unless `creating`, the final
 * ones are refused ("final <index_name> setting [<key>], not updateable");
 * unless `creating`, static settings of an open index (`index_open`) are
 * refused together ("Can't update non dynamic settings [[k1, k2]] for open
 * indices [[<index_name>/<uuid>]]"); an unknown setting or a bad value as
 * fds_settings_set words it; then fds_settings_check across the settings.
 * `set` may be partly changed on an error.  Returns 0 or FDS_EINVAL (kind
 * INVALID_ARGUMENT).
 */
int fds_settings_apply(fds_index_settings *set, const fds_setting_text *kv,
                       size_t n, bool creating, bool index_open,
                       const char *index_name, const char *uuid, fds_err *err);

/* A settings update of one or more indices (PUT /{index}/_settings). */
typedef struct fds_settings_update {
    const fds_setting_text *kv; /* the settings given, in order */
    size_t n;
    bool preserve_existing;     /* leave alone settings the index has */
    bool reopen;                /* static settings of an open index: close
                                   it, update, open it again (8.12) */
} fds_settings_update;

/*
 * Check update `u` against index `ix` and work out its new settings into
 * *out without changing the index: the metadata-write block unless every
 * setting is an index.blocks.* one (blocks can be lifted), the settings the
 * index already has dropped with preserve_existing, then
 * fds_settings_apply.  *bounce says whether a commit must close and reopen
 * the index (a static setting with reopen).  Checking every index before
 * committing any keeps a many-index update all-or-nothing.  Returns 0, the
 * errors of fds_index_check_block and fds_settings_apply, FDS_ENOMEM.
 */
int fds_index_settings_plan(fds_index *ix, const fds_settings_update *u,
                            fds_index_settings *out, bool *bounce,
                            fds_err *err);

/*
 * Commit settings `set` a plan worked out for `ix`: close the index first
 * and open it again after when `bounce`.  The first error wins; the index
 * is reopened even when the update failed.  Returns 0 or the errors of
 * fds_index_set_open and fds_index_put_settings.
 */
int fds_index_settings_commit(fds_index *ix, const fds_index_settings *set,
                              bool bounce, fds_err *err);

/* Plan and commit update `u` of one index.  Returns 0 or the errors of
 * both. */
int fds_index_update_settings(fds_index *ix, const fds_settings_update *u,
                              fds_err *err);

/* ---- resize (resize_rules.c) --------------------------------------------- */

/* What a resize makes of its source (the order of src/http's resize
 * types). */
typedef enum fds_resize_kind {
    FDS_RESIZE_KIND_CLONE = 0,
    FDS_RESIZE_KIND_SHRINK,
    FDS_RESIZE_KIND_SPLIT,
} fds_resize_kind;

/*
 * A resize of a source of `n` shards and `routing` routing shards into `m`
 * shards, checked as Elasticsearch checks it (IndexMetadata's
 * selectCloneShard, selectShrinkShards, selectSplitShard,
 * getRoutingFactor, assertSplitMetadata), then `routing_given`
 * (index.number_of_routing_shards in the request) refused but for a split
 * of one shard.  Returns 0, FDS_EINVAL (kind INVALID_ARGUMENT, 400 in
 * Elasticsearch) or FDS_EINVAL kind ILLEGAL_STATE (its
 * IllegalStateException, 500: routing shards not a multiple of the
 * target's).
 */
int fds_resize_check_shards(fds_resize_kind kind, uint32_t n, uint32_t m,
                            uint32_t routing, bool routing_given, fds_err *e);

/*
 * The target's settings `set` (the source's with the request's over
 * them) given the target's `m` shards: with more than one source shard,
 * the source's `routing` shards (so that each document's target shard
 * follows from its source shard; 0 when they are m's default), then
 * fds_settings_check_shards.  Returns 0 or its FDS_EINVAL.
 */
int fds_resize_target_settings(fds_index_settings *set, uint32_t n, uint32_t m,
                               uint32_t routing, fds_err *e);

/*
 * The checks of a resize of `src` into the new index `target` after its
 * settings and aliases, in Elasticsearch's order: the target does not
 * exist as an index (FDS_EEXIST, kind ALREADY_EXISTS, e->index the target)
 * nor as an alias (FDS_EINVAL, kind INVALID_INDEX_NAME; both checked again
 * under the store's lock when it is made), the source blocks writes
 * (FDS_EINVAL, kind ILLEGAL_STATE: "index x must be read-only to resize
 * index. use \"index.blocks.write=true\""), a shrink's source has more
 * than one shard (FDS_EINVAL, kind INVALID_ARGUMENT).  Returns 0 or one of
 * those.
 */
int fds_resize_check_target(fds_store *st, fds_index *src, const char *target,
                            fds_resize_kind kind, fds_err *e);

/* ---- the JSON forms of creation parts (index_json.c) -------------------- */

/* Templates are kept as the JSON they were put with, so the store reads
 * their parts itself; the REST layer parses a request's with the same
 * readers.  cJSON's tree type, named without its header. */
struct cJSON;

/* Settings given as JSON (nested or dotted, "index." optional) as setting
 * texts kv[0, *n) (kv has FDS_SETTINGS_GIVEN_MAX slots); a null value is an
 * empty text.  NULL: none.  0, FDS_EPARSE (kind PARSE, "[settings] must be
 * an object"), FDS_EINVAL (kind INVALID_ARGUMENT, "too many settings",
 * "setting [k] must be a string, number or boolean"). */
int fds_settings_json_flatten(const struct cJSON *settings, fds_setting_text *kv,
                              size_t *n, fds_err *err);
/* The same, applied onto `set` as for a new index (fds_settings_apply with
 * `creating`).  0, their errors, FDS_ENOMEM. */
int fds_settings_from_json(const struct cJSON *settings, fds_index_settings *set,
                           const char *index_name, fds_err *err);
/* Empty alias definition `a` (free its strings; flags -1). */
void fds_alias_def_clear(fds_alias *a);
/* One member of an alias body (filter, routing, index_routing,
 * search_routing, is_write_index, is_hidden) into `a`: 0 when taken, 1
 * when the key is none of these, FDS_EPARSE (kind PARSE), FDS_ENOMEM. */
int fds_alias_member_from_json(const struct cJSON *m, fds_alias *a, fds_err *err);
/* The `aliases` object of create index and templates ({name: {filter,
 * routing, index_routing, search_routing, is_write_index, is_hidden}})
 * into *out (malloc'd, *n entries, `index` NULL; fds_aliases_free).
 * NULL obj: none.  0, FDS_EPARSE (kind PARSE), FDS_ENOMEM. */
int fds_aliases_from_json(const struct cJSON *obj, fds_alias **out, size_t *n,
                          fds_err *err);
/* `a`'s filter parsed against mapping `m`: 0, or FDS_EINVAL (kind
 * INVALID_ARGUMENT, "failed to parse filter for alias [a]: why"). */
int fds_alias_filter_check(const fds_alias *a, const fds_mapping *m,
                           fds_err *err);

/* ---- index templates (templates.c) -------------------------------------- */

/* The stored templates of one kind, parsed: names[i], jsons[i] and docs[i]
 * (a cJSON tree, NULL when it does not parse). */
typedef struct fds_template_set {
    char **names, **jsons;
    struct cJSON **docs;
    size_t n;
} fds_template_set;
/* Load every template of `kind` into *t (fds_template_set_free).  0 or
 * FDS_ENOMEM. */
int fds_template_set_load(fds_store *st, fds_template_kind kind,
                          fds_template_set *t);
void fds_template_set_free(fds_template_set *t);
/* The parsed template `name` of t, or NULL. */
struct cJSON *fds_template_set_find(const fds_template_set *t, const char *name);
/* Number member `key` of `j`, else `dflt`. */
double fds_template_num(const struct cJSON *j, const char *key, double dflt);
/* Settings `src` (nested or dotted, "index." optional) into the flat
 * object `dst` ({"index.codec": "ZSTD"}), later keys replacing earlier
 * ones; `prefix` "" at the top. */
void fds_template_settings_flat(struct cJSON *dst, const struct cJSON *src,
                                const char *prefix);
/* index_patterns `p` (a string or an array) as "[a, b]" in out[0, cap),
 * and as a new array (a string becomes [string]; caller deletes). */
void fds_template_patterns_text(const struct cJSON *p, char *out, size_t cap);
struct cJSON *fds_template_patterns_array(const struct cJSON *p);
/* A new {settings: {}, mappings: {}, aliases: {}} to merge parts into
 * (caller deletes), and mappings `m` merged over its mappings. */
struct cJSON *fds_template_parts_new(void);
void fds_template_mapping_layer(struct cJSON *acc, const struct cJSON *m);
/* What the templates give a new index `name`, merged into `acc` (from
 * fds_template_parts_new): settings flat, mappings, aliases; *matched
 * tells whether any template matched, which[0, cap) names the composable
 * one (or "").  0 or FDS_ENOMEM. */
int fds_templates_layers(fds_store *st, const char *name, struct cJSON *acc,
                         bool *matched, char *which, size_t cap);
/* May component template `name` be deleted?  0, or FDS_EINVAL (kind
 * INVALID_ARGUMENT, "component templates [name] cannot be removed as they
 * are still in use by index templates [t]") when a composable template
 * names it in composed_of. */
int fds_template_component_check_unused(fds_store *st, const char *name,
                                        fds_err *err);
/* Check template `name` of `kind` as Elasticsearch does when it is put
 * (its name; keys, patterns, priority, composed_of and same-priority
 * overlaps of a composable one; its settings, mappings, aliases and their
 * filters; with `create`, that none of the name exists), then store
 * `body` as its JSON text.  0, or the first refusal in Elasticsearch's
 * words: FDS_EPARSE (kind CONTENT_PARSE), FDS_EINVAL (kinds VALIDATION,
 * INVALID_ARGUMENT), FDS_EUNSUPPORTED (data streams), the settings,
 * mapping and alias errors, fds_store_template_put's, FDS_ENOMEM. */
int fds_store_template_add(fds_store *st, fds_template_kind kind,
                           const char *name, const struct cJSON *body,
                           bool create, fds_err *err);

/* ---- a single index by name or alias (alias_target.c) ------------------- */

/* The one index a single-document operation through alias `name` goes
 * to: for a read, the alias's only index; for a write, its write index
 * (the only index unless that says is_write_index false, or the one of
 * several that says true).  Returns 0 with a reference in *ix;
 * FDS_ENOTFOUND with err untouched when no alias has the name; FDS_EINVAL
 * (kind INVALID_ARGUMENT) in Elasticsearch's words for no write index or
 * several indices; FDS_EUNSUPPORTED for a write to an alias with
 * index_routing (routing is not kept). */
int fds_store_alias_target(fds_store *st, const char *name, bool write,
                           fds_index **ix, fds_err *err);
/* Index `name`, or else fds_store_alias_target's answer for it; with neither,
 * FDS_ENOTFOUND with the index_not_found error in err (may be NULL). */
int fds_store_index_or_alias(fds_store *st, const char *name, bool write,
                             fds_index **ix, fds_err *err);

/* ---- creating an index (index_create.c) --------------------------------- */

/* A create-index request, parsed: what the caller gives of its own. */
typedef struct fds_index_create_req {
    const fds_setting_text *settings; /* in the order given */
    size_t nsettings;
    bool settings_given;   /* a settings section was given (even empty) */
    const char *mappings;  /* the `mappings` object as JSON text, or NULL */
    const fds_alias *aliases; /* `index` ignored; names may be date math */
    size_t naliases;
} fds_index_create_req;

/*
 * Create index `name` from `req` (NULL: nothing given, as a first write
 * to a missing index) as Elasticsearch's MetadataCreateIndexService does:
 * the matching templates' settings, mappings and aliases
 * (fds_templates_layers), the request's over them, the settings rules
 * (fds_settings_apply), alias names resolved, alias filters checked
 * against the merged mapping, then index and aliases in one catalogue
 * transaction (fds_store_create_index_aliased).  Returns 0 or the first
 * error of those steps (FDS_EINVAL, FDS_EPARSE, FDS_EEXIST, ...), or
 * FDS_ENOMEM (kind INTERNAL).
 */
int fds_store_create_index_from(fds_store *st, const char *name,
                                const fds_index_create_req *req, fds_err *err);

#endif
