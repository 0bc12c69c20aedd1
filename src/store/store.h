/*
 * store.h: indices, segments, the SQLite catalogue and the translog
 * (public interface of src/store).
 *
 * An fds_store is one node's data directory:
 *
 *   DATA/catalog.sqlite        the catalogue (WAL): indices, settings,
 *                              mappings, dictionaries, segments, translog
 *   DATA/indices/<uuid>/       one folder per index
 *       seg_<n>.fdt            stored fields: blocks + block index (.fdx part)
 *       seg_<n>.tim            inverted index (src/query's fds_sidx file)
 *
 * Write path (DESIGN.md §4): a write is appended to the translog table and,
 * with index.translog.durability=request, committed before it is
 * acknowledged; it is then in the index's in-memory buffer (visible to a
 * realtime get).  A refresh turns the buffer into a segment (blocks through
 * src/codec, postings through src/query) and, in one SQLite transaction,
 * registers the segment, persists the live-docs of segments whose documents
 * it replaced, and drops the translog entries it covers.  A crash therefore
 * leaves either the old state plus the translog to replay, or the new state;
 * segment files the catalogue does not name are removed when the store opens.
 *
 * Read path: fds_index_view_acquire() pins a consistent set of segments
 * (reference-counted; files are removed only when no view uses them).
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef FDS_STORE_H
#define FDS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "fds_error.h"
#include "query.h"

/* Named limits. */
#define FDS_INDEX_NAME_MAX 255            /* bytes, as in Elasticsearch */
#define FDS_DOC_ID_MAX 512                /* bytes, as in Elasticsearch */
#define FDS_REFRESH_INTERVAL_DEFAULT_MS 1000
#define FDS_MERGE_SEGMENTS_MAX 10         /* merge when a shard has more */
/* index.number_of_shards: 1..FDS_SHARDS_MAX, Elasticsearch's
 * MAX_NUMBER_OF_SHARDS default (es.index.max_number_of_shards) */
#define FDS_SHARDS_MAX 1024
/* log2 of the routing shards Elasticsearch aims for by default */
#define FDS_ROUTING_SHARDS_LOG2 10
/* A write's routing value at most (bytes): kept with the document and
 * answered as `_routing`; the same bound as an id */
#define FDS_ROUTING_MAX FDS_DOC_ID_MAX
/* The node's write buffer limit (fds_store_set_index_buffer_size).  The
 * default is Elasticsearch's indices.memory.index_buffer_size, 10% (of the
 * heap there, of physical memory here), capped so that a node loading 2M
 * documents stays within DESIGN.md's 500 MB: a refresh of a full buffer
 * needs about as much again for the segment it builds, writers that were
 * past the check add a batch each meanwhile, and each _bulk request in
 * flight holds its body (measured with 64 MiB: 479 MiB peak loading 1M
 * synthlogs documents in 20,000-document requests; bench/mem/run.sh). */
#define FDS_INDEX_BUFFER_DEFAULT_PERCENT 10
/* 16 MiB: with 32 MiB the peak of a 2M-document load was 438-503 MiB over
 * two runs, past DESIGN.md's 500 MB, as refreshes and merges overlap the
 * bulk; 16 MiB peaked at 395-420 MiB (results/mem.md) */
#define FDS_INDEX_BUFFER_DEFAULT_MAX (16u << 20)
#define FDS_INDEX_BUFFER_MIN (64u << 10)

typedef enum fds_durability {
    FDS_DURABILITY_REQUEST = 0, /* fsync'd commit before the reply */
    FDS_DURABILITY_ASYNC = 1,   /* committed, fsync'd in the background */
} fds_durability;

/* Every setting fieldstore keeps for an index (DESIGN.md §5). */
typedef struct fds_index_settings {
    fds_codec_params codec;      /* index.codec, .compression.zstd.level,
                                    index.codec.block_size */
    bool zstd_dict;              /* index.compression.zstd.dict (final; only
                                    true, like index.compression.zstd.jni) */
    uint32_t dict_size;          /* index.codec.dict_size, bytes */
    uint32_t dict_sample_bytes;  /* index.codec.dict_sample_size, bytes */
    uint32_t number_of_shards;   /* final; 1..FDS_SHARDS_MAX */
    uint32_t number_of_routing_shards; /* final; a multiple of
                                    number_of_shards; 0 = not given (the
                                    index's creation sets the default,
                                    fds_routing_shards_default) */
    uint32_t number_of_replicas; /* dynamic; no second node holds them: health yellow */
    int64_t refresh_interval_ms; /* dynamic; -1 disables */
    fds_durability durability;   /* dynamic */
    uint32_t max_result_window;  /* dynamic */
    /* dynamic search limits, checked by src/query (fds_search_limits) */
    uint32_t max_docvalue_fields_search, max_script_fields, max_terms_count,
        max_regex_length, max_rescore_window;
    /* dynamic mapping limits (fds_mapping_limits): index.mapping.
     * total_fields.limit, .depth.limit and .field_name_length.limit
     * (INT64_MAX, Elasticsearch's Long.MAX_VALUE, when not set) */
    uint32_t mapping_total_fields, mapping_depth;
    int64_t mapping_field_name_length;
    bool hidden;                 /* dynamic: index.hidden, left out of
                                    wildcards unless expand_wildcards=hidden */
    unsigned blocks;             /* dynamic: index.blocks.*, FDS_BLOCK_* bits */
    /* dynamic: index.routing.rebalance.enable, FDS_REBALANCE_* (which of
     * the index's shard copies may move to another node).  One node has
     * no other node to move them to, so every value keeps them where they
     * are, as "none" asks; the value is kept and shown. */
    unsigned rebalance;
} fds_index_settings;

/* index.routing.rebalance.enable values (Elasticsearch's
 * EnableAllocationDecider.Rebalance), in its order; ALL is the default. */
enum { FDS_REBALANCE_ALL, FDS_REBALANCE_PRIMARIES, FDS_REBALANCE_REPLICAS,
       FDS_REBALANCE_NONE, FDS_REBALANCE_COUNT };

/* The index blocks (index.blocks.<name>, all dynamic booleans), each with
 * Elasticsearch's block id (IndexMetadata.INDEX_*_BLOCK). */
#define FDS_BLOCK_READ_ONLY (1u << 0)              /* read_only: 5 */
#define FDS_BLOCK_READ (1u << 1)                   /* read: 7 */
#define FDS_BLOCK_WRITE (1u << 2)                  /* write: 8 */
#define FDS_BLOCK_METADATA (1u << 3)               /* metadata: 9 */
#define FDS_BLOCK_READ_ONLY_ALLOW_DELETE (1u << 4) /* read_only_allow_delete: 12 */
#define FDS_BLOCK_COUNT 5

/* What an operation does, as Elasticsearch's ClusterBlockLevel; DELETE is
 * deleting the index, which only the blocks of METADATA_WRITE that do not
 * allow releasing resources refuse (read_only_allow_delete lets it). */
typedef enum fds_block_level {
    FDS_BLOCK_LEVEL_READ = 0,       /* search, get */
    FDS_BLOCK_LEVEL_WRITE,          /* index, update, delete documents */
    FDS_BLOCK_LEVEL_METADATA_READ,  /* get settings, mappings */
    FDS_BLOCK_LEVEL_METADATA_WRITE, /* put settings (but index.blocks.*), mappings */
    FDS_BLOCK_LEVEL_DELETE,         /* delete the index */
} fds_block_level;

/* The block name ("write", "read_only", ...: the part after index.blocks.)
 * of FDS_BLOCK_* bit `bit`, NULL for none. */
const char *fds_block_name(unsigned bit);

/* Defaults of DESIGN.md §5 (codec "default" = LZ4). */
void fds_index_settings_default(fds_index_settings *s);

/* How a setting may change (Elasticsearch's Setting.Property). */
typedef enum fds_setting_kind {
    FDS_SETTING_UNKNOWN = 0,
    FDS_SETTING_DYNAMIC,  /* any time */
    FDS_SETTING_STATIC,   /* at creation, or while the index is closed */
    FDS_SETTING_FINAL,    /* at creation only */
} fds_setting_kind;

/* Kind of a full setting name ("index.codec"); FDS_SETTING_UNKNOWN if
 * fieldstore has no such setting. */
fds_setting_kind fds_setting_kind_of(const char *key);

/*
 * Set one setting from its text value ("index.codec" = "ZSTD",
 * "index.codec.block_size" = "16kb", "index.refresh_interval" = "1s" / "-1").
 * Returns 0, or FDS_EINVAL (kind INVALID_ARGUMENT) with `err` worded as
 * Elasticsearch words it ("unknown setting [...]", "failed to parse value
 * [...] for setting [...]", ...).
 */
int fds_settings_set(fds_index_settings *s, const char *key, const char *value,
                     fds_err *err);

/*
 * Checks across settings, after a change to `s` (DESIGN.md §5): a
 * compression level is refused for a codec without levels (all but ZSTD and
 * zstd_no_dict) when the change names the level (`level_given`), or names
 * the codec (`codec_given`) while a level other than the default is kept.
 * Returns 0 or FDS_EINVAL (kind INVALID_ARGUMENT, "Compression level cannot
 * be set for the [best_compression] codec.").
 */
int fds_settings_check(const fds_index_settings *s, bool level_given,
                       bool codec_given, fds_err *err);

#define FDS_SETTINGS_MAX 32
#define FDS_SETTING_VALUE_MAX 32
typedef struct fds_setting_kv {
    const char *key;                    /* static string */
    char value[FDS_SETTING_VALUE_MAX];
} fds_setting_kv;

/* Every setting with its value as text (the shape GET _settings shows and
 * the catalogue stores), always in the same order, so that two lists line
 * up entry by entry; index.number_of_routing_shards comes last and only
 * when given (a list may be one longer than another).  Returns the count
 * written (at most `cap`). */
/* The index.mapping.*.limit settings of s as the mapping checks them. */
void fds_settings_mapping_limits(const fds_index_settings *s,
                                 fds_mapping_limits *lim);
size_t fds_settings_to_kv(const fds_index_settings *s, fds_setting_kv *kv,
                          size_t cap);

/*
 * Cross-setting checks of index.number_of_routing_shards against
 * index.number_of_shards (Elasticsearch's IndexMetadata validator): below
 * the shards -> "index.number_of_routing_shards [4] must be >=
 * index.number_of_shards [8]"; not a multiple -> "the number of source
 * shards [2] must be a factor of [3]".  Returns 0 or FDS_EINVAL (kind
 * INVALID_ARGUMENT).  0 routing shards (not given) passes.
 */
int fds_settings_check_shards(const fds_index_settings *s, fds_err *err);

/* ---- routing (routing.c) ----------------------------------------------- */

/* Elasticsearch's Murmur3HashFunction.hash of a routing string given as
 * `len` bytes of UTF-8: MurmurHash3 x86_32, seed 0, over its UTF-16 code
 * units as 2 bytes little-endian each ("hell" -> 0x5a0cb7c3). */
int32_t fds_routing_hash(const char *routing, size_t len);
/* The shard (0 .. shards-1) of a document routed by `routing` (its _id
 * when no routing is given): floorMod(hash, routing_shards) /
 * (routing_shards / shards), OperationRouting's formula.  A routing_shards
 * that is not a multiple of shards counts as the default. */
uint32_t fds_routing_shard(const char *routing, size_t len, uint32_t shards,
                           uint32_t routing_shards);
/* index.number_of_routing_shards for `shards` when not given, as
 * MetadataCreateIndexService.calculateNumRoutingShards: shards * 2^k with
 * k = 10 - ceil(log2(shards)), at least 1 (5 -> 640, 1 -> 1024). */
uint32_t fds_routing_shards_default(uint32_t shards);

typedef struct fds_store fds_store;
typedef struct fds_index fds_index;

/*
 * Open (creating if needed) the data directory `dir`: open the catalogue
 * (migrating a schema-1 one), open every index and replay its translog
 * into the buffer, then remove segment files and index folders no
 * catalogue row names.  An index that fails to load (a damaged segment
 * file, a catalogue row failing its checksum) is kept "failed"
 * (fds_index_failure) with its files untouched.  Returns 0; FDS_ESQL when
 * a catalogue table cannot be read to its end or its schema is newer than
 * this build's, FDS_ENOMEM, or a translog that did not replay in full (err
 * names index and table; start-up stops and nothing is removed); FDS_EIO
 * when the directory cannot be created.
 */
int fds_store_open(const char *dir, fds_store **out, fds_err *err);
/*
 * Cluster-wide values kept in the catalogue's meta table (the persistent
 * cluster settings, under "cluster.<setting name>").  get copies the value
 * of `key` into buf[0..cap) (NUL-terminated, cut to fit) and returns 0,
 * or FDS_ENOTFOUND when the key has no value, FDS_ESQL.  put stores
 * `value` (NULL removes the key), committed before it returns: 0 or
 * FDS_ESQL (err filled).
 */
int fds_store_meta_get(fds_store *s, const char *key, char *buf, size_t cap);
int fds_store_meta_put(fds_store *s, const char *key, const char *value,
                       fds_err *err);
/* Stop background work, refresh nothing, close.  NULL is a no-op. */
void fds_store_close(fds_store *s);

/*
 * The free-space floor: below `bytes` bytes free for unprivileged use
 * (statvfs f_bavail) the node is at the flood stage whatever the disk
 * watermarks say (disk.h): fds_index_write refuses every batch (FDS_EIO,
 * kind FDS_KIND_CLUSTER_BLOCK, Elasticsearch's "index [x] blocked by:
 * [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index
 * has read-only-allow-delete block];") and the background threads put the
 * read_only_allow_delete block.  0 (the default) sets no floor; a
 * translog commit that SQLite finds the disk full for (SQLITE_FULL) gives
 * the same error either way.  The disk is sampled again at the next write
 * batch, then as disk.c says (at most every second before a batch): writes
 * resume by themselves once space is freed.  Searches, gets and index
 * deletion are never refused.
 */
void fds_store_set_min_free_disk(fds_store *s, uint64_t bytes);

/*
 * The node's indexing buffer, Elasticsearch's node setting
 * indices.memory.index_buffer_size: documents written since their index's
 * last refresh are held on the heap (fds__buffer), counted as source plus
 * id plus FDS__BUF_DOC_OVERHEAD bytes each.  When a write batch leaves the
 * buffers of all indices together above `bytes`, the batch is answered and
 * the flusher thread refreshes the writing index (its buffer becomes a
 * segment, published at once: see fds__index_buffer_flush in refresh.c for
 * how this differs from Elasticsearch) while writers fill a new buffer; a
 * batch that finds that one full too waits until the flusher has taken it
 * (store_int.h, fds__buffer_wait), so the buffers hold at most about twice
 * `bytes`.  The background thread refreshes indices with buffered
 * documents while the total stays above it.  So with refresh_interval -1, a
 * bulk load still writes a segment (or two, refresh.c) per `bytes` of
 * buffer.  The default (fds_index_buffer_default): 10% of physical memory,
 * at most FDS_INDEX_BUFFER_DEFAULT_MAX, at least FDS_INDEX_BUFFER_MIN.
 *
 * fds_index_buffer_parse reads the --index-buffer-size syntax: a byte size
 * ("64mb", "1gb", "67108864"; units of fds__parse_bytes) or a percentage
 * of physical memory ("10%", in (0, 100]).  Returns 0 with *out in bytes,
 * or FDS_EINVAL (err says why) for another text, a percentage out of
 * range, or a size below FDS_INDEX_BUFFER_MIN or above physical memory.
 */
uint64_t fds_index_buffer_default(void);
int fds_index_buffer_parse(const char *value, uint64_t *out, fds_err *err);
void fds_store_set_index_buffer_size(fds_store *s, uint64_t bytes);

/* Start the background thread that refreshes indices whose
 * refresh_interval has passed and runs merges.  Returns 0 or FDS_ENOMEM. */
int fds_store_start_background(fds_store *s);

/*
 * Create index `name` with `settings` and optional mapping JSON (src/query
 * shape, may be NULL).  Returns 0, FDS_EEXIST (kind ALREADY_EXISTS),
 * FDS_EINVAL (kind INVALID_INDEX_NAME), FDS_ESQL.
 */
int fds_store_create_index(fds_store *s, const char *name,
                           const fds_index_settings *settings,
                           const char *mapping_json, fds_err *err);

/* Delete an index, its aliases (same transaction) and its files.
 * FDS_ENOTFOUND if there is none. */
int fds_store_delete_index(fds_store *s, const char *name, fds_err *err);

/* A reference to index `name` (release with fds_index_release), or
 * FDS_ENOTFOUND (kind INDEX_NOT_FOUND). */
int fds_store_get_index(fds_store *s, const char *name, fds_index **out,
                        fds_err *err);
void fds_index_release(fds_index *ix); /* NULL is a no-op */

/* Names of all indices, sorted; *names is malloc'd (free each, then it),
 * *n their count.  Returns 0 or FDS_ENOMEM. */
int fds_store_list_indices(fds_store *s, char ***names, size_t *n);

/* ---- aliases (Elasticsearch's index aliases) ---------------------------- */

/* One (alias, index) pair.  Strings are NUL-terminated; the optional ones
 * are NULL when not given.  In lists the store returns every string is
 * malloc'd (fds_aliases_free); in what callers pass in, they stay the
 * caller's. */
typedef struct fds_alias {
    char *alias;
    char *index;          /* the index's name */
    char *filter;         /* a query DSL object as JSON text, or NULL */
    char *index_routing;  /* or NULL */
    char *search_routing; /* or NULL */
    int is_write_index;   /* -1 not given, 0 false, 1 true */
    int is_hidden;        /* -1 not given, 0 false, 1 true */
} fds_alias;

typedef enum fds_alias_op {
    FDS_ALIAS_ADD = 0,      /* add or replace (alias, index) */
    FDS_ALIAS_REMOVE = 1,   /* remove (alias, index) */
    FDS_ALIAS_REMOVE_INDEX, /* delete the index `index` (and its aliases) */
} fds_alias_op;

typedef struct fds_alias_action {
    fds_alias_op op;
    fds_alias a;       /* ADD: all of it; REMOVE: alias, index; REMOVE_INDEX:
                          index */
    bool must_exist;   /* REMOVE: a missing pair is an error, not a no-op */
} fds_alias_action;

/*
 * Apply `n` alias actions in order as one catalogue transaction: all of
 * them or none (Elasticsearch's _aliases).  Names are concrete (the HTTP
 * layer expands wildcards).  After the actions, an alias may not have more
 * than one is_write_index true, nor disagree on is_hidden between its
 * indices.  Returns 0 or, with nothing changed: FDS_ENOTFOUND (kind
 * INDEX_NOT_FOUND for a missing index; kind NOT_FOUND, "aliases [a]
 * missing", for a missing pair with must_exist), FDS_EINVAL (kind
 * INVALID_ALIAS_NAME for a bad alias name or one an index has; kind
 * INVALID_ARGUMENT for the cross-index rules, in Elasticsearch's words),
 * FDS_ESQL, FDS_ENOMEM.  An index removed by REMOVE_INDEX loses its files
 * after the commit.
 */
int fds_store_aliases_update(fds_store *s, const fds_alias_action *acts,
                             size_t n, fds_err *err);

/* Every (alias, index) pair, sorted by alias then index name: *out is
 * malloc'd (fds_aliases_free).  Returns 0 or FDS_ENOMEM. */
int fds_store_aliases_list(fds_store *s, fds_alias **out, size_t *n);
void fds_aliases_free(fds_alias *a, size_t n);
/* Free the strings of one alias and zero it (flags 0). */
void fds_alias_clear(fds_alias *a);
/* Elasticsearch's alias name rules (those of index names, worded for an
 * alias): 0 or FDS_EINVAL (kind INVALID_ALIAS_NAME). */
int fds_alias_name_check(const char *name, fds_err *err);
/* True when some alias is named `name`. */
bool fds_store_alias_exists(fds_store *s, const char *name);

/*
 * Create index `name` as fds_store_create_index does, with `naliases`
 * aliases of it (their `index` member is ignored) in the same catalogue
 * transaction.  Errors of both functions.
 */
int fds_store_create_index_aliased(fds_store *s, const char *name,
                                   const fds_index_settings *settings,
                                   const char *mapping_json,
                                   const fds_alias *aliases, size_t naliases,
                                   fds_err *err);

/*
 * Resize (Elasticsearch's _clone, _shrink and _split; resize.c): create
 * index `target` with `settings` (the caller's: number_of_shards the
 * target's, number_of_routing_shards the source's in effect when the
 * source has more than one shard, so that every document's shard follows
 * from its source shard), the mapping of `src` and every live document
 * of `src` (refreshed first) with its _version, _seq_no and routing, each
 * in the target shard of its routing; `naliases` aliases of the target
 * (their `index` is ignored).  The caller checks the shard counts and the
 * source's write block.  A segment whose documents all go to one shard
 * is copied (hard-linked, or block for block with its dictionary's new id),
 * the documents of the others re-encoded.
 * Crash-safe: the target is named by its last catalogue transaction, a
 * crash before leaves nothing (see resize.c).  Blocks the caller until
 * done.  Returns 0, or the errors of fds_store_create_index (the target
 * exists or is being made: FDS_EEXIST), of fds_index_refresh on `src`
 * (FDS_ECLOSED for a closed one), FDS_EIO (a link or write failed),
 * FDS_ESQL, FDS_ENOMEM; on error nothing of the target remains.
 */
int fds_store_resize_index(fds_store *s, fds_index *src, const char *target,
                           const fds_index_settings *settings,
                           const fds_alias *aliases, size_t naliases,
                           fds_err *err);

/* ---- templates ------------------------------------------------------------ */

/* Kinds of template, each its own name space. */
typedef enum fds_template_kind {
    FDS_TEMPLATE_INDEX = 0,     /* composable: _index_template */
    FDS_TEMPLATE_COMPONENT = 1, /* _component_template */
    FDS_TEMPLATE_LEGACY = 2,    /* _template */
} fds_template_kind;

/* Store (create or replace) template `name` of `kind` as its JSON text
 * (the HTTP layer validates it).  Committed before it returns.  Returns 0,
 * FDS_ESQL, FDS_ENOMEM. */
int fds_store_template_put(fds_store *s, fds_template_kind kind,
                           const char *name, const char *json, fds_err *err);
/* Delete it.  0, FDS_ENOTFOUND (kind NOT_FOUND), FDS_ESQL. */
int fds_store_template_delete(fds_store *s, fds_template_kind kind,
                              const char *name, fds_err *err);
/* Every template of `kind`, sorted by name: names[i] and jsons[i] are
 * malloc'd, like the arrays (fds_templates_free).  0 or FDS_ENOMEM. */
int fds_store_templates_list(fds_store *s, fds_template_kind kind,
                             char ***names, char ***jsons, size_t *n);
void fds_templates_free(char **names, char **jsons, size_t n);

/* ---- an index ---------------------------------------------------------- */

const char *fds_index_name(const fds_index *ix);
const char *fds_index_uuid(const fds_index *ix);
void fds_index_get_settings(fds_index *ix, fds_index_settings *out);
int64_t fds_index_creation_ms(const fds_index *ix);
/* True when the index serves reads and writes: open and not failed. */
bool fds_index_is_open(fds_index *ix);
/* The index's state as Elasticsearch's IndexMetadata.State names it:
 * "close" once an operator closed it, else "open" (a failed index is
 * open, its health red: Elasticsearch's red index of a corrupted shard). */
const char *fds_index_state(fds_index *ix);
/* 0 when the index serves reads (fds_index_is_open); else fills err
 * (err->index the index name) and returns FDS_ECLOSED for a closed index
 * (index_closed_exception) or FDS_ECORRUPT for a failed one
 * (corrupt_index_exception naming the damaged file relative to the data
 * directory), as Elasticsearch answers a search on a closed index or on a
 * shard that failed with a CorruptIndexException. */
int fds_index_unavailable(fds_index *ix, fds_err *err);
/* Why the index failed: at start-up (a damaged segment file or
 * dictionary, or the corruption marker a run-time failure left), or since
 * (a damaged block met by a search, get or merge), or NULL when it is
 * healthy.  Other indices are served as usual; a failed index refuses
 * reads and writes with this reason.  Once set it stays for the life of
 * the index object (the pointer stays valid while a reference is held). */
const char *fds_index_failure(const fds_index *ix);
/* Fail ix at run time for the damage `cause` describes (kind
 * FDS_KIND_CORRUPT: a checksum that failed after the index was opened),
 * as Elasticsearch fails a shard on a CorruptIndexException: from then
 * on it answers corrupt_index_exception with that reason (paths relative
 * to the data directory), health red, and stays failed across restarts
 * (a marker file in its folder) until `fieldstore check-index --exorcise`
 * repairs it.  Only the first call changes the index; every call
 * rewrites cause's texts to name files relative to the data directory. */
void fds_index_fail_corrupt(fds_index *ix, fds_err *cause);

/* ---- check-index (Lucene's CheckIndex, check.c) -------------------------- */

/* One segment's verdict, and its repair. */
typedef enum fds_check_repair {
    FDS_CHECK_KEEP = 0,     /* whole, or damaged where dropping it would
                               not help (a dictionary the catalogue lacks,
                               a file that cannot be read: FDS_EIO) */
    FDS_CHECK_DROP,         /* the segment goes (its .tim, the .fdt tail or
                               its catalogue row is damaged) */
    FDS_CHECK_DELETE_DOCS   /* only stored-fields blocks are damaged: their
                               docs are marked deleted, the rest stays */
} fds_check_repair;

typedef struct fds_check_segment {
    uint64_t gen;        /* the segment is seg_<gen> */
    int64_t shard;
    int64_t max_doc;     /* docs it holds, deleted ones included (its row) */
    int64_t live_docs;   /* docs not deleted; -1 when its catalogue row is
                            damaged (unknown, at most max_doc) */
    bool damaged;        /* live documents are unreadable */
    fds_check_repair repair;
    uint32_t bad_blocks; /* stored-fields blocks failing their checks */
    uint32_t dead_blocks; /* of them, those holding only deleted docs: no
                             damage (a force-merge rewrites them away) */
    int64_t docs_lost;   /* live docs the repair loses (-1: unknown, at
                            most max_doc) */
    char reason[FDS_ERR_REASON_MAX]; /* why damaged (the first damage);
                                        files relative to the data
                                        directory */
} fds_check_segment;

/* What fds_index_check found (and did).  Owned by the caller:
 * fds_check_report_free. */
typedef struct fds_check_report {
    char index[256], uuid[33];
    fds_check_segment *segs; /* every segment the catalogue lists, by
                                shard then generation */
    size_t nsegs, ndamaged;
    uint64_t live_kept;      /* live docs the repairs keep */
    uint64_t docs_lost;      /* live docs the repairs lose */
    uint64_t docs_lost_unknown; /* docs of dropped segments whose live
                                   docs are unknown (at most this many
                                   more are lost) */
    char *marker;            /* the corruption marker's reason, or NULL */
    char *failure;           /* why the index failed at start-up when that
                                is not the marker's reason, or NULL */
    bool exorcised;          /* the damaged segments and marker are gone */
} fds_check_report;

/*
 * Verify every segment of index `name` (any state, failed included) as
 * Lucene's CheckIndex does: its catalogue row's checksum, the .fdt tail
 * and .tim checksums and layouts, the doc counts of row, .fdt and .tim,
 * and every stored-fields block decoded in full (checksum, dictionary,
 * doc count).  With `exorcise` (CheckIndex -exorcise) the damage goes in
 * one durable catalogue transaction: a segment whose only damage is in
 * stored-fields blocks keeps its other documents, those of the damaged
 * blocks marked deleted (they are never read again; a force-merge
 * rewrites them away), and a segment damaged elsewhere is dropped
 * (CheckIndex's whole-segment exorcism); then the dropped files and the
 * index's corruption marker go, so the index loads green at the next
 * start, short of rep->docs_lost documents.
 * The translog is left as it is (it holds no segment's documents; what it
 * holds is replayed at the next start).  Meant for a stopped node: `s`
 * must be a store no server serves (fieldstore check-index holds
 * node.lock).  Returns 0 (rep filled), FDS_ENOTFOUND, FDS_ESQL, FDS_EIO
 * (the marker could not be removed; the segments were dropped),
 * FDS_ENOMEM.  Source: Lucene's CheckIndex, Elasticsearch's
 * RemoveCorruptedShardDataCommand.
 */
int fds_index_check(fds_store *s, const char *name, bool exorcise,
                    fds_check_report *rep, fds_err *err);
void fds_check_report_free(fds_check_report *rep); /* NULL is a no-op */
/* Open / close, persisted in the catalogue (a closed index refuses reads and
 * writes with FDS_ECLOSED).  Returns 0, FDS_ESQL, FDS_ECORRUPT (a failed
 * index). */
int fds_index_set_open(fds_index *ix, bool open, fds_err *err);
/* Replace the settings; a change of a final setting is refused (FDS_EINVAL,
 * index_rules.h's fds_settings_check_final), and fds_index_update_settings
 * checks static and dynamic rules too.  Persisted in the catalogue before
 * it returns; codec settings apply to segments written from then on.
 * Returns 0, FDS_EINVAL, FDS_ESQL, FDS_ECORRUPT. */
int fds_index_put_settings(fds_index *ix, const fds_index_settings *s,
                           fds_err *err);
/*
 * Merge mapping JSON (`json`, `len` bytes: {"properties": ..., "dynamic":
 * ...}, as PUT /{index}/_mapping takes it) into the index's mapping.
 * fds_index_check_mapping only tries it on a copy (nothing changes), so a
 * caller can check several indices before changing any; put tries it the
 * same way, then merges and commits the mapping to the catalogue before
 * returning.  Returns 0, or the errors of fds_mapping_merge_json (a type
 * or parameter change: FDS_EINVAL, kind INVALID_ARGUMENT), FDS_ESQL,
 * FDS_ENOMEM, or the index's failure.
 */
int fds_index_check_mapping(fds_index *ix, const char *json, size_t len,
                            fds_err *err);
int fds_index_put_mapping(fds_index *ix, const char *json, size_t len,
                          fds_err *err);

/*
 * Is an operation of `level` (fds_block_level) refused by the index's
 * blocks?  0, or FDS_EUNSUPPORTED with err filled as Elasticsearch's
 * ClusterBlockException: "index [x] blocked by: [FORBIDDEN/8/index write
 * (api)];" (every block of that level, by id), kind INDEX_BLOCK (403), or
 * CLUSTER_BLOCK (429) when read_only_allow_delete is among them.
 * fds_index_write checks WRITE itself.
 */
int fds_index_check_block(fds_index *ix, int level, fds_err *err);
/* The index's mapping (shared; do not free; lives as long as the index). */
fds_mapping *fds_index_mapping(fds_index *ix);

typedef enum fds_op_type {
    FDS_OP_INDEX = 0,  /* create or replace */
    FDS_OP_CREATE = 1, /* fail with a version conflict if the id exists */
    FDS_OP_DELETE = 2,
} fds_op_type;

/* fds_write_op.version_type */
enum { FDS_VERSION_INTERNAL = 0, FDS_VERSION_EXTERNAL, FDS_VERSION_EXTERNAL_GTE };

typedef struct fds_write_op {
    fds_op_type type;
    const char *id;   /* NULL for INDEX: the store assigns one */
    size_t id_len;
    const uint8_t *src; /* JSON source, kept verbatim (INDEX/CREATE) */
    size_t src_len;
    /* optimistic concurrency (Elasticsearch's if_seq_no/if_primary_term):
     * with check_seq_no the op applies only if the live doc has seq_no
     * if_seq_no and the term is if_primary_term (always 1 here: one
     * primary, never failed over); otherwise the op fails with
     * FDS_ECONFLICT (kind CONFLICT) */
    bool check_seq_no;
    int64_t if_seq_no;
    int64_t if_primary_term;
    /* version_type (Elasticsearch's VersionType): FDS_VERSION_EXTERNAL
     * sets the version to external_version (>= 0), which must be higher
     * than the current one, FDS_VERSION_EXTERNAL_GTE higher or equal;
     * FDS_VERSION_INTERNAL (0) counts versions up from 1 */
    int version_type;
    int64_t external_version;
    /* Elasticsearch's routing: the shard is fds_routing_shard(routing)
     * when routing is not NULL, of the id otherwise; kept with the
     * document (at most FDS_ROUTING_MAX bytes, else the op fails with
     * kind VALIDATION) */
    const char *routing;
    size_t routing_len;
} fds_write_op;


typedef struct fds_write_result {
    int code;          /* 0 or an FDS_E* code (err holds the detail) */
    fds_err err;
    char id[FDS_DOC_ID_MAX + 1]; /* the id used (assigned ids too) */
    int64_t version;
    int64_t seq_no;
    bool created;      /* INDEX/CREATE: true when no live doc had the id */
    bool found;        /* DELETE: true when a live doc was deleted */
    uint32_t shard;    /* the shard the op went to */
} fds_write_result;

/* Bytes of an over-long id that its error message repeats; the rest is cut
 * (at a character boundary) and marked "...", so the message fits an
 * fds_err reason. */
#define FDS_DOC_ID_ECHO_MAX 256

/*
 * Elasticsearch's request validation of a write's id (DocWriteRequest
 * validateDocIdLength, DeleteRequest/UpdateRequest validate): `required`
 * (delete, update) and `id` NULL or empty -> "id is missing"; more than
 * FDS_DOC_ID_MAX bytes -> "id [<id>] is too long, must be no longer than 512
 * bytes but was: <len>".  Writes the bare message, without Elasticsearch's
 * "Validation Failed: N: ...;" frame, to msg[0..cap), cut at a character
 * boundary.  Returns 0 (msg = "") or FDS_EINVAL.
 */
int fds_write_id_validate(const char *id, size_t len, bool required, char *msg,
                          size_t cap);

/*
 * Apply `n` write operations in order, in one translog transaction; each
 * result tells its own outcome (a bad document fails alone).  Returns 0 when
 * the transaction committed (even if some items failed), or an error for the
 * whole batch (FDS_ECLOSED, FDS_ESQL) with nothing applied.  An id that
 * fails fds_write_id_validate fails its op with kind VALIDATION ("Validation
 * Failed: 1: ...;"); an empty id of an index/create op with kind
 * INVALID_ARGUMENT ("if _id is specified it must not be empty").
 * `refresh` = true refreshes the index before returning.
 */
int fds_index_write(fds_index *ix, const fds_write_op *ops, size_t n,
                    fds_write_result *results, bool refresh, fds_err *err);

/* A document got by id (realtime: the buffer first, then segments). */
typedef struct fds_doc {
    uint8_t *src;      /* malloc'd copy of the source, caller frees */
    size_t src_len;
    int64_t version;
    int64_t seq_no;
    bool has_routing;  /* written with a routing: `_routing` */
    char routing[FDS_ROUTING_MAX + 1]; /* NUL-terminated when has_routing */
    size_t routing_len;
} fds_doc;

/* Returns 0, FDS_ENOTFOUND, FDS_ECLOSED, FDS_ECORRUPT/FDS_EDICT (err names
 * index, segment and block), FDS_ENOMEM. */
int fds_index_get(fds_index *ix, const char *id, size_t id_len, fds_doc *out,
                  fds_err *err);
/* fds_index_get as of the last refresh (Elasticsearch's realtime=false):
 * the published segments only, never the buffer.  Same errors. */
int fds_index_get_searchable(fds_index *ix, const char *id, size_t id_len,
                             fds_doc *out, fds_err *err);

/* fds_index_get / fds_index_get_searchable in the shard of `routing`
 * (rlen bytes; NULL = the id's own shard, which is what the two above
 * look in): a document written with a routing is found only with it, as
 * in Elasticsearch.  Same errors. */
int fds_index_get_routed(fds_index *ix, const char *id, size_t id_len,
                         const char *routing, size_t rlen, bool realtime,
                         fds_doc *out, fds_err *err);
/* The shard count (index.number_of_shards, fixed at creation) and the
 * shard of a routing value (NULL routing: of the id) for this index. */
uint32_t fds_index_nshards(const fds_index *ix);
/* index.number_of_routing_shards in effect (given, or the default for the
 * shard count: fds_routing_shards_default). */
uint32_t fds_index_routing_shards(const fds_index *ix);
uint32_t fds_index_shard_of(const fds_index *ix, const char *routing,
                            size_t len);

/* Turn the buffer into a segment and commit it (no-op when empty): train the
 * dictionary on first use, write and fsync both files, then one catalogue
 * transaction (segment, live docs, mapping, translog trim).  Returns 0,
 * FDS_ENOTFOUND (kind INDEX_NOT_FOUND) when the index was deleted since
 * the caller found it, FDS_ECLOSED, FDS_EIO (err names the file),
 * FDS_ESQL, FDS_ENOMEM; on error the documents stay buffered and in the
 * translog. */
int fds_index_refresh(fds_index *ix, fds_err *err);
/* Refresh, then merge each shard down to at most `max_segments` (0 counts
 * as 1) segments, expunge deletes, and rewrite segments written with other codec
 * settings or an under-trained dictionary.  Same errors as refresh. */
int fds_index_forcemerge(fds_index *ix, unsigned max_segments, fds_err *err);

/* ---- searching: a pinned, consistent set of segments -------------------- */

typedef struct fds_index_view fds_index_view;

/* Pin the current segments and live docs (reference counts; no copy of any
 * file).  Returns 0, FDS_ECLOSED, FDS_ECORRUPT (failed index), FDS_ENOMEM. */
int fds_index_view_acquire(fds_index *ix, fds_index_view **out, fds_err *err);
void fds_index_view_release(fds_index_view *v); /* NULL is a no-op */
/* The view's segments in the shape src/query searches (array of nseg),
 * grouped by shard (ascending), oldest first within a shard: the
 * segments of one shard are a contiguous run. */
const fds_search_segment *fds_index_view_segments(const fds_index_view *v,
                                                  unsigned *nseg);
/* The shard of the view's segment `seg` (seg < nseg). */
uint32_t fds_index_view_segment_shard(const fds_index_view *v, uint32_t seg);
/* The routing segment `seg`'s doc `doc` was written with (*len bytes, not
 * NUL-terminated; valid while the view is held), or NULL for none: what a
 * copy or a by-query rewrite of the document passes as its routing. */
const char *fds_index_view_doc_routing(const fds_index_view *v, uint32_t seg,
                                       uint32_t doc, size_t *len);

/*
 * Fetch the sources of `n` hits (seg = index into the view's segments) into
 * src[i]/src_len[i]; the pointers stay valid until the view is released or
 * the next fetch on it.  Hits sharing a block decode it once, and only as
 * far as the last hit needs.  Returns 0, FDS_ECORRUPT / FDS_EDICT (err
 * names index, segment and block), FDS_ENOMEM.
 */
/* The `_version` and `_seq_no` of segment `seg`'s doc `doc` in the view
 * (seg < the view's nseg, doc < that segment's max doc). */
void fds_index_view_doc_meta(const fds_index_view *v, uint32_t seg,
                             uint32_t doc, int64_t *version, int64_t *seq_no);
int fds_index_view_fetch(fds_index_view *v, const fds_hit *hits, size_t n,
                         const uint8_t **src, size_t *src_len, fds_err *err);

/* ---- statistics ---------------------------------------------------------- */

typedef struct fds_index_stats {
    uint64_t docs_count;      /* live docs in segments */
    uint64_t docs_deleted;
    uint64_t buffered_docs;   /* in the buffer, not yet refreshed */
    uint64_t segments;
    uint64_t store_bytes;     /* all files of the index */
    uint64_t stored_fields_bytes;
    uint64_t postings_bytes;
    uint64_t other_bytes;     /* dictionaries, catalogue rows */
    uint64_t raw_source_bytes; /* uncompressed _source of segment docs */
    /* heap bytes of what searches of the published set share (global
     * ordinals, term hashes: fds_reader_cache_bytes), Elasticsearch's
     * fielddata memory_size_in_bytes; the index's, in fds_index_stats_get
     * only */
    uint64_t fielddata_bytes;
} fds_index_stats;

/* The counts and sizes of shard `shard` alone (docs, deletes, buffered,
 * segments, stored-fields and postings bytes; dictionaries are the
 * index's and counted by fds_index_stats_get only).  Always returns 0. */
int fds_index_shard_stats_get(fds_index *ix, uint32_t shard,
                              fds_index_stats *out);

/* Sizes in bytes and counts as of now (dictionaries only while a segment
 * uses them).  Always returns 0. */
int fds_index_stats_get(fds_index *ix, fds_index_stats *out);

/*
 * Search phase counters of one index, Elasticsearch's `search` stats: the
 * query phase (executing a parsed request: postings, scoring, top-k) and the
 * fetch phase (loading and decoding stored fields, building hits).  *_total
 * counts finished phases, *_current phases running now, *_time_ns their
 * summed wall-clock nanoseconds.  Updated by src/http without a lock (relaxed
 * atomics); zero when the index is created or loaded, never persisted.
 */
typedef struct fds_search_stats {
    _Atomic uint64_t query_total, query_time_ns, query_current;
    _Atomic uint64_t fetch_total, fetch_time_ns, fetch_current;
    /* scroll and point-in-time contexts holding a view of the index (kept
     * by src/http): open now, scrolls open now, scrolls closed and the
     * time they were open */
    _Atomic uint64_t open_contexts, scroll_current, scroll_total, scroll_time_ns;
} fds_search_stats;

/* The counters of `ix`; valid while the caller holds `ix`. */
fds_search_stats *fds_index_search_stats(fds_index *ix);

typedef struct fds_segment_info {
    char name[32];
    uint64_t generation;
    uint32_t docs_count;
    uint32_t docs_deleted;
    uint64_t size_bytes;
    fds_codec_id codec;
    uint32_t dict_id;
    uint32_t shard;
} fds_segment_info;

/* Segment list, by shard, oldest first within a shard; *out malloc'd (caller frees), *n entries.
 * Returns 0 or FDS_ENOMEM. */
int fds_index_segments(fds_index *ix, fds_segment_info **out, size_t *n);

#endif
