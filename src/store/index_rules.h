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

#endif
