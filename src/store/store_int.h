/*
 * store_int.h: struct layouts and the fds__ functions shared by the files
 * of src/store (internal; other modules include store.h only).  Each
 * declaration group names the file that defines it.
 */
#ifndef FDS_STORE_INT_H
#define FDS_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>

#include "disk.h"
#include "fds_bytes.h"
#include "store.h"

/* A live-docs bitset, reference-counted: a refresh that deletes docs of an
 * existing segment publishes a new copy, views keep the one they pinned. */
typedef struct fds__live {
    atomic_int refs;
    uint32_t max_doc;
    uint32_t del_count;
    uint8_t bits[]; /* (max_doc+7)/8 bytes, bit set = live */
} fds__live;

/* The routing values of a segment's documents written with one (routing.c),
 * kept in its catalogue row: `blob` holds entries in ascending doc order,
 * each a u32 doc, a u32 length (little-endian) and the bytes; docs[i] and
 * offs[i] (of the bytes in blob) index the n entries.  All NULL / 0 when
 * no document has a routing. */
typedef struct fds__routes {
    uint8_t *blob;
    size_t len;
    uint32_t n;
    uint32_t *docs;
    uint32_t *offs;
} fds__routes;

/* One segment: a stored-fields file (.fdt) mapped read-only plus its
 * inverted index (.tim). */
typedef struct fds__seg {
    atomic_int refs;
    int64_t id;              /* catalogue row id */
    uint64_t gen;
    char name[32];           /* "seg_<gen>" */
    char *fdt_path;
    char *tim_path;
    const uint8_t *map;      /* the whole .fdt file */
    size_t map_len;
    uint32_t max_doc;
    uint32_t nblocks;
    const uint8_t *blk_index; /* nblocks entries of FDT_BLKIDX_ENTRY bytes */
    const uint8_t *versions;  /* packed column (segment.c) */
    const uint8_t *seqnos;    /* packed column (segment.c) */
    uint64_t raw_bytes;
    uint32_t codec;
    uint32_t dict_id;
    uint32_t level;          /* zstd level the blocks were written with */
    uint32_t block_size;
    uint32_t max_docs_per_block;
    uint32_t copied_blocks;  /* blocks a merge copied unchanged */
    uint32_t block_format;   /* stored-fields block format of its blocks
                                (codec.h FDS_BLOCK_FORMAT_*, read from its
                                first block; 0 when unreadable or none) */
    uint64_t tim_bytes;
    int64_t max_seq;         /* highest seq_no of its docs (catalogue row) */
    uint32_t shard;          /* the shard it belongs to (catalogue row) */
    fds__routes routes;      /* its documents' routing values (catalogue row) */
    fds_sidx *sidx;
    uint64_t *id_bloom;      /* fds__seg_may_hold; NULL: none (say yes) */
    uint64_t id_bloom_mask;  /* bits in id_bloom - 1 (a power of two) */
    atomic_bool dropped;     /* no longer live: remove files at last unref */
} fds__seg;

/* A buffered (not yet refreshed) write. */
typedef struct fds__bufdoc {
    char *id;
    size_t id_len;
    uint8_t *src;            /* NULL for a delete tombstone */
    size_t src_len;
    int64_t version;
    int64_t seq_no;
    uint32_t shard;          /* fds_routing_shard of the write */
    char *routing;           /* the write's routing (owned by the buffer;
                                borrowed in a merge's list), or NULL */
    size_t routing_len;
} fds__bufdoc;

/*
 * Where fds__build_segment and fds__seg_write find the source of a doc whose
 * docs[i].src is NULL: a merge decodes its inputs one block at a time
 * instead of holding every source of the merge on the heap.  load() sets
 * *src (valid until its next call) and *len and returns 0 or the decoding
 * error (err filled).  A NULL loader: every docs[i].src is set.
 */
typedef struct fds__doc_loader {
    int (*load)(void *ctx, size_t i, const uint8_t **src, size_t *len,
                fds_err *err);
    void *ctx;
} fds__doc_loader;

static inline int fds__doc_src(const fds__bufdoc *docs, size_t i,
                               const fds__doc_loader *ld, const uint8_t **src,
                               size_t *len, fds_err *err)
{
    if (docs[i].src || !ld) {
        *src = docs[i].src;
        *len = docs[i].src_len;
        return 0;
    }
    return ld->load(ld->ctx, i, src, len, err);
}

/* The in-memory buffer: docs in arrival order plus a hash on (shard, id):
 * one buffer holds every shard's writes, a refresh splits it by shard. */
typedef struct fds__buffer {
    fds__bufdoc *docs;
    size_t n, cap;
    uint32_t *slots;         /* open addressing: doc index + 1, 0 = empty */
    size_t nslots;
    uint64_t bytes;          /* source bytes */
    uint64_t mem;            /* heap estimate: sources, ids, FDS__BUF_DOC_OVERHEAD
                                per document (fds__buf_account) */
    int64_t max_seq;
} fds__buffer;

typedef struct fds__dictent {
    uint32_t id;
    int level;               /* zstd level the CDict was digested for */
    uint64_t sample_bytes;   /* bytes of documents it was trained on */
    fds_codec_id codec;
    fds_dict *dict;
    size_t len;
} fds__dictent;

struct fds_index {
    atomic_int refs;
    fds_store *st;
    int64_t id;
    char name[FDS_INDEX_NAME_MAX + 1];
    char uuid[33];
    char *dir;
    int64_t created_ms;
    fds_mapping *mapping;
    /* fds_mapping_generation of the mapping the last refresh saved (0:
     * none yet); under refresh_mu */
    uint64_t mapping_saved_gen;

    _Atomic(char *) failure;    /* why the index could not be loaded, or
                                   failed since (a damaged block read,
                                   fds__index_corrupted), or NULL: a failed
                                   index answers every request with this
                                   error (its shard is "red").  Set once,
                                   freed with the index */
    pthread_mutex_t wmu;        /* buffer, seq numbers; held by a write
                                   across its validation and its fsync'd
                                   translog commit */
    pthread_mutex_t meta_mu;    /* settings, open, failure as readers see
                                   them: changed under wmu and meta_mu (in
                                   that order), read under either, so that
                                   a search (settings, view) never waits
                                   behind a write holding wmu */
    fds_index_settings settings;
    uint32_t nshards;           /* index.number_of_shards (final) */
    uint32_t routing_shards;    /* index.number_of_routing_shards in
                                   effect (final) */
    bool open;
    atomic_bool deleted;
    int64_t next_seq;
    uint64_t next_gen;
    uint64_t id_counter;
    pthread_mutex_t buf_mu;     /* buf and frozen as realtime gets see them:
                                   changed under wmu and buf_mu (in that
                                   order), read under either, so that a get
                                   waits at most for a batch's copy into the
                                   buffer, never for its commit */
    fds__buffer buf;
    fds__buffer frozen;         /* being refreshed; still visible to gets */
    uint64_t buf_accounted;     /* buf.mem + frozen.mem as counted in
                                   st->buf_mem (fds__buf_account) */
    uint64_t frozen_accounted;  /* frozen.mem as counted in st->frozen_mem */

    pthread_mutex_t merge_mu;   /* one merge at a time (background or
                                   _forcemerge); taken before refresh_mu,
                                   which a merge holds only to pick its
                                   inputs and to publish (merge.c) */
    pthread_mutex_t refresh_mu; /* one refresh at a time, and the
                                   published set's changes */
    int64_t last_refresh_ms;

    pthread_rwlock_t segs_lock; /* the published segment list, grouped by
                                   shard (ascending), oldest first within
                                   a shard (fds__publish keeps it so) */
    fds__seg **segs;
    fds__live **lives;          /* parallel to segs; NULL = all live */
    unsigned nsegs;
    /* what searches of the published set share (global ordinals), one
     * reference; replaced by fds__publish, each view holds a reference
     * (NULL: out of memory, searches build their own) */
    fds_reader_cache *rcache;

    pthread_mutex_t dict_mu;
    fds__dictent *dicts;
    size_t ndicts;

    fds_search_stats search;    /* updated by src/http, lock-free */
};

/* A template as the catalogue holds it (metadata.c). */
typedef struct fds__tmpl {
    int kind;  /* fds_template_kind */
    char *name;
    char *json;
} fds__tmpl;

/* The reserve files (disk.c): for refreshes and blocks, for deletions. */
enum { FDS__RESERVE_WORK = 0, FDS__RESERVE_DELETE, FDS__RESERVES };

/* The disk watermark monitor's state (disk.c). */
typedef struct fds__disk {
    pthread_mutex_t mu;         /* all below but the atomics */
    fds_disk_settings set;      /* fds_store_set_disk_settings */
    int64_t sampled_ms;         /* the last statvfs */
    uint64_t gen;               /* samples taken */
    uint64_t acted_gen;         /* the sample the block pass last saw */
    uint64_t total;             /* bytes, at the last sample */
    uint64_t avail;             /* free for unprivileged use, the reserve
                                   counted as free */
    uint64_t real_avail;        /* the same without the reserve */
    uint64_t headroom;          /* avail above the flood stage then;
                                   UINT64_MAX: none applies */
    bool reserve_held[FDS__RESERVES];      /* the reserve file exists */
    uint64_t reserve_bytes[FDS__RESERVES]; /* its size */
    _Atomic uint64_t written;   /* translog bytes since the sample */
    atomic_bool flood;          /* at the flood stage (or below the floor) */
    atomic_bool above_high;     /* above the high watermark */
    atomic_bool resample;       /* sample at the next check */
    _Atomic uint64_t buf_cap;   /* write buffers' bytes at most, for the
                                   headroom left (fds__buf_over) */
} fds__disk;

struct fds_store {
    char *dir;
    sqlite3 *db;
    pthread_mutex_t db_mu;      /* one transaction at a time */
    uint64_t tl_batches;        /* under db_mu: write batches committed to
                                   the translog (the background thread
                                   vacuums only when this stood still) */
    pthread_mutex_t mu;         /* the index list */
    fds_index **indices;
    size_t nindices;
    pthread_t bg;               /* periodic refreshes, translog syncs */
    bool bg_started;
    pthread_t merger;           /* background merges (background.c) */
    bool merger_started;
    pthread_t disk_monitor;     /* the watermarks' blocks (background.c) */
    bool disk_monitor_started;
    atomic_bool stop;
    _Atomic uint64_t min_free;  /* bytes; fds_store_set_min_free_disk */
    fds__disk disk;             /* the watermarks (disk.c) */
    _Atomic uint64_t buf_mem;   /* write buffers of every index, bytes */
    _Atomic uint64_t buf_limit; /* fds_store_set_index_buffer_size */
    _Atomic uint64_t frozen_mem; /* the part of buf_mem in frozen buffers
                                    (being written as segments) */
    /* the flusher thread (refresh.c, fds__flusher_main): writes full
     * write buffers as segments while writers fill new ones */
    pthread_mutex_t flush_mu;
    pthread_cond_t flush_cv;    /* wakes the flusher: flush_wanted or stop */
    pthread_cond_t flushed_cv;  /* wakes writers waiting for buffer room */
    bool flush_wanted;          /* under flush_mu */
    uint64_t flushes_done;      /* under flush_mu: refreshes ended */
    pthread_t flusher;
    atomic_bool flusher_started;
    /* aliases and templates as the catalogue holds them (metadata.c),
     * under mu */
    fds_alias *aliases;         /* sorted by alias, then index */
    size_t naliases;
    fds__tmpl *tmpls;
    size_t ntmpls;
    /* targets of resizes running now (resize.c), under mu: their names
     * are taken although no index has them yet */
    struct fds__resizing {
        char name[FDS_INDEX_NAME_MAX + 1];
        char uuid[33];
    } *resizing;
    size_t nresizing;
};

struct fds_index_view {
    fds_index *ix;
    unsigned nsegs;
    fds__seg **segs;
    fds__live **lives;
    fds_search_segment *ss;
    fds_reader_cache *rcache;   /* the set's, referenced (may be NULL) */
    uint8_t *arena;             /* fetched sources */
    size_t arena_len, arena_cap;
};

/* ---- helpers shared by store files ---- */

/* metadata.c: load the aliases and templates at open (rows failing their
 * checksum are left out, said on stderr); free them at close; the alias
 * rows of index `ix` in the caller's transaction (fds__aliases_insert), and
 * dropping the in-memory aliases of a deleted index (under mu). */
int fds__metadata_load(fds_store *s, fds_err *err);
void fds__metadata_free(fds_store *s);
int fds__aliases_insert(fds_store *s, int64_t index_id, const char *index,
                        const fds_alias *a, size_t n, fds_err *err);
void fds__aliases_forget_index(fds_store *s, const char *index);
void fds__aliases_adopt(fds_store *s, const char *index, const fds_alias *a,
                        size_t n);
void fds__seg_unref(fds__seg *sg);

/* segment.c: live-docs bitsets.  fds__live_copy gives a new bitset of
 * `max_doc` docs (refs 1) copied from `old`, or all live when `old` is
 * NULL; NULL on allocation failure.  fds__live_unref accepts NULL. */
fds__live *fds__live_copy(const fds__live *old, uint32_t max_doc);
void fds__live_unref(fds__live *l);

/* buffer.c: the write buffer.  fds__buf_put takes ownership of `id` and
 * `src` (src NULL = a delete tombstone) and replaces an earlier write of
 * the same id; returns 0 or FDS_ENOMEM.  fds__buf_find returns the buffered
 * write of `id` or NULL.  fds__buf_free empties the buffer (max_seq -1). */
int fds__buf_put(fds__buffer *b, char *id, size_t id_len, uint8_t *src,
                 size_t src_len, int64_t version, int64_t seq, uint32_t shard,
                 char *routing, size_t routing_len);
fds__bufdoc *fds__buf_find(const fds__buffer *b, const char *id, size_t len,
                           uint32_t shard);
/* The buffer lacks acknowledged writes the translog holds (out of memory):
 * fail the index (caller holds wmu) so that no refresh trims them from the
 * translog; a restart replays them. */
void fds__buf_lost(fds_index *ix);
void fds__buf_free(fds__buffer *b);
/*
 * The node's indexing buffer (Elasticsearch's
 * indices.memory.index_buffer_size).  Heap bytes of a buffered document
 * beyond its source and id: the fds__bufdoc, two malloc headers, its hash
 * slot and the doubling slack of both arrays (measured: 1M synthlogs
 * documents of ~594 source bytes took ~745 MiB, ~190 bytes more each).
 * fds__buf_account (caller holds ix->wmu) brings st->buf_mem and
 * st->frozen_mem up to date after ix->buf or ix->frozen changed;
 * fds__buf_over: the buffers of all indices together, less the frozen
 * ones a refresh is writing, are past the limit.
 */
#define FDS__BUF_DOC_OVERHEAD 192u
void fds__buf_account(fds_index *ix);
bool fds__buf_over(fds_store *s);

/* buffer.c: the translog (the layout of a batch row's records at the top
 * of buffer.c).  fds__tlop_size: the bytes of op's record with the id,
 * version, seq_no and shard of its result `r`; fds__tlop_put writes it at
 * p and returns the end (a batch's records go into one row:
 * fds__cat_translog_append, catalog_log.c).  fds__tlop_next reads the
 * record at *p (advanced)
 * into *o, pointing into the row: 1, 0 at `end`, -1 for bytes that are no
 * record (an op other than index, create or delete, a length past `end`,
 * a source on a delete or none on a write). */
typedef struct fds__tlop {
    int op;                 /* fds_op_type */
    int64_t seq, version;
    uint32_t shard;
    const char *id;
    size_t id_len;
    const char *routing;    /* NULL: none */
    size_t routing_len;
    const uint8_t *src;     /* NULL: a delete */
    size_t src_len;
} fds__tlop;
size_t fds__tlop_size(const fds_write_op *op, const fds_write_result *r);
uint8_t *fds__tlop_put(uint8_t *p, const fds_write_op *op,
                       const fds_write_result *r);
int fds__tlop_next(const uint8_t **p, const uint8_t *end, fds__tlop *o);
/* routing.c: a segment's routing values.  fds__routes_from_docs fills r
 * from docs[0, n) (doc i = docs[i]; those with a routing); _parse from a
 * catalogue blob of a segment of max_doc docs (copied; FDS_ECORRUPT for a
 * malformed one); both return 0 or FDS_ENOMEM.  fds__routes_get: the
 * routing of `doc` or NULL.  fds__routes_free accepts an empty one. */
int fds__routes_from_docs(fds__routes *r, const fds__bufdoc *docs, size_t n);
int fds__routes_parse(fds__routes *r, const void *blob, size_t len,
                      uint32_t max_doc);
const char *fds__routes_get(const fds__routes *r, uint32_t doc, size_t *len);
void fds__routes_free(fds__routes *r);

/* Drop ix's translog rows with seq <= max_seq (in the refresh transaction).
 * Returns 0 or FDS_ESQL. */
int fds__translog_trim(fds_index *ix, int64_t max_seq, fds_err *err);
/* Replay ix's translog into ix->buf (start-up; caller holds no lock).
 * Returns 0, FDS_ENOMEM or FDS_ESQL. */
int fds__translog_replay(fds_store *s, fds_index *ix, fds_err *err);

/* dict.c: dictionaries (caller holds no lock; dict_mu is taken inside).
 * fds__dict_add digests `len` raw bytes as dictionary `id` (stored_len =
 * its size in the catalogue; sample_bytes = what it was trained on).
 * fds__dict_current{,_level} give the newest dictionary of `codec` or NULL
 * (*level = the zstd level its CDict was digested for).
 * fds__dict_wants_retrain: should a merge of `merge_bytes` train anew.
 * fds__dict_train trains from `docs`, stores the row (takes db_mu) and
 * sets *out; returns 0, FDS_ENOMEM, FDS_ESQL or the fds_dict_create code. */
int fds__dict_add(fds_index *ix, uint32_t id, fds_codec_id codec, int level,
                  const uint8_t *bytes, size_t len, size_t stored_len,
                  uint64_t sample_bytes, fds_err *err);
const fds_dict *fds__dict_current_level(fds_index *ix, fds_codec_id codec,
                                        int *level);
const fds_dict *fds__dict_current(fds_index *ix, fds_codec_id codec);
bool fds__dict_wants_retrain(fds_index *ix, const fds_index_settings *set,
                             uint64_t merge_bytes);
int fds__dict_train(fds_index *ix, const fds__bufdoc *docs, size_t n,
                    const fds_index_settings *set, const fds_dict **out,
                    fds_err *err);
/* A resize: a copy of every dictionary of `from` stored for `to` (new
 * catalogue rows, committed, each digested at to's codec level), in
 * from's order, so the newest stays the current one.  from_ids[i] ->
 * to_ids[i] for the *n copies (arrays malloc'd, caller frees).  Returns 0,
 * FDS_ESQL, FDS_ENOMEM or the fds_dict_create code. */
int fds__dict_copy_all(fds_index *to, fds_index *from, uint32_t **from_ids,
                       uint32_t **to_ids, size_t *n, fds_err *err);
/* Start-up: digest every dictionary row of ix.  Returns 0, FDS_ESQL,
 * FDS_ECORRUPT (a row that does not decompress to raw_len bytes) or the
 * fds_dict_create code. */
int fds__dict_load(fds_store *s, fds_index *ix, fds_err *err);

/* catalog_rows.c: rows of an index, in the caller's transaction (caller
 * holds db_mu).  Each returns 0, FDS_ESQL (err names the statement) or,
 * for settings_load, the FDS_EINVAL of a stored value that no longer
 * parses.  fds__lives_save writes the non-NULL entries of newlive[0, n)
 * for ix->segs[0, n), fds__segment_live_save one segment's (a segment
 * with nothing live loses its row); fds__segment_insert sets sg->id and
 * saves next_gen. */
int fds__settings_save(fds_store *s, int64_t index_id,
                       const fds_index_settings *set, fds_err *err);
int fds__settings_load(fds_store *s, int64_t index_id,
                       fds_index_settings *set, fds_err *err);
int fds__lives_save(fds_index *ix, fds__live **newlive, unsigned n,
                    fds_err *err);
int fds__segment_live_save(fds_index *ix, const fds__seg *sg,
                           const fds__live *live, fds_err *err);
int fds__segment_insert(fds_index *ix, fds__seg *sg, int64_t max_seq,
                        fds_err *err);
int fds__mapping_save(fds_index *ix, fds_err *err);
/* Start-up loads: the stored mapping merged into ix->mapping (0, FDS_ESQL,
 * the parse error of a damaged mapping); every segment row opened with its
 * live docs into ix->segs/ix->lives, oldest first (0, FDS_ESQL, FDS_ENOMEM,
 * FDS_ECORRUPT or FDS_EIO of a damaged or missing file). */
int fds__mapping_load(fds_store *s, fds_index *ix, fds_err *err);

/* settings.c: "16kb", "1mb", "16384" -> bytes (Elasticsearch
 * ByteSizeValue units b, kb, mb, gb, powers of 1024).  0 or -1. */
int fds__parse_bytes(const char *v, long long *out);

/*
 * disk.c: the watermarks' state (disk.h).  init/destroy at the store's
 * allocation and close; load applies the persistent settings of the
 * catalogue.  fds__disk_flood: is the node at the flood stage (samples
 * first when due); the write path asks it before each batch and reports
 * the translog bytes it wrote (fds__disk_wrote) or a full disk
 * (fds__disk_full: sample at the next check).  fds__disk_give_reserve
 * unlinks reserve file `slot` (FDS__RESERVE_*) when `full` (the caller saw ENOSPC or
 * SQLITE_FULL) or, sampling first, when the disk is at the flood stage or
 * has less free than the reserve: true when it was held and so given back
 * (the caller may retry what failed).  fds__disk_tick, for the background
 * thread: samples when due, keeps the reserve, and gives the state; true
 * when a sample came since the last call and watermarks apply.
 */
void fds__disk_init(fds_store *s);
void fds__disk_destroy(fds_store *s);
void fds__disk_load(fds_store *s);
bool fds__disk_flood(fds_store *s);
void fds__disk_wrote(fds_store *s, uint64_t bytes);
void fds__disk_full(fds_store *s);
bool fds__disk_give_reserve(fds_store *s, int slot, bool full);
bool fds__disk_tick(fds_store *s, bool *flood, bool *above_high);

/* corrupt.c: rewrite err's reason and cause so that they name files relative
 * to the data directory s->dir ("indices/<uuid>/seg_1.tim"): every
 * "<s->dir>/" in them is removed, so no answer carries the server's
 * absolute paths.  Bounded by the texts' sizes. */
void fds__err_relative(const fds_store *s, fds_err *err);
/* corrupt.c: fail ix at run time for the damage `cause` describes (a block
 * or postings block that failed its checksum after the index was opened),
 * as Elasticsearch fails a shard on a CorruptIndexException: the first
 * call sets ix->failure (its reason, paths relative to the data
 * directory), writes the marker file DATA/indices/<uuid>/corrupted
 * (FDS__CORRUPT_MARKER) holding it, so that the index stays failed after
 * a restart until `fieldstore check-index` repairs it, and logs a line on
 * stderr; later calls change nothing.  Takes no index lock (it may run
 * under any of them). */
void fds__index_corrupted(fds_index *ix, const fds_err *cause);
#define FDS__CORRUPT_MARKER "corrupted"
/* corrupt.c: the reason a marker file of ix holds, malloc'd ("" when the
 * file is empty), or NULL when ix has none. */
char *fds__corrupt_marker_read(const fds_index *ix);
/* corrupt.c: remove the marker of ix (none is no error): 0, or -1 with
 * errno set. */
int fds__corrupt_marker_remove(const fds_index *ix);
/* segment.c: verify every block of sg (layout, contiguity, doc bases,
 * checksum, a full decode with its dictionary) without failing the index:
 * 0, or FDS_ECORRUPT / FDS_EDICT (a dictionary missing from the
 * catalogue) / FDS_ENOMEM with err naming segment, block and file.  With
 * `bad`, a block that fails its checksum or decode where the block index
 * places it is handed to bad(arg, first doc, end doc, why) and the walk
 * goes on (0 when nothing else is wrong). */
typedef void (*fds__bad_block_fn)(void *arg, uint32_t first, uint32_t end,
                                  const fds_err *why);
int fds__seg_verify(fds_index *ix, const fds__seg *sg, fds__bad_block_fn bad,
                    void *arg, fds_err *err);
/* segment.c: the start-up load of the segments rows (see above). */
int fds__segments_load(fds_store *s, fds_index *ix, fds_err *err);

/* segment_build.c: shared by refreshes, merges and resizes (caller holds
 * refresh_mu).  fds__build_segment writes and opens a segment of `docs`
 * (see segment_build.c);
 * fds__publish swaps the published segment set in one step. */
typedef struct fds__tim_inputs {
    const fds_sidx *const *in;  /* the merge's inputs, in doc order */
    const uint8_t *const *live; /* their live-docs bitsets (NULL: all) */
    unsigned n;
} fds__tim_inputs;
int fds__build_segment(fds_index *ix, const fds__bufdoc *docs, size_t n,
                       const fds__doc_loader *ld,
                       const fds_index_settings *set, fds__seg *const *copy,
                       unsigned ncopy, bool retrain,
                       const fds__tim_inputs *tim_from, fds__seg **out,
                       fds_err *err);
/*
 * Give the heap memory a refresh or merge freed back to the kernel
 * (glibc malloc_trim(0): every arena, free pages inside the heap too, not
 * only its top).  The documents of a refresh or merge are many small
 * allocations freed together at the end; glibc returns only the top of a
 * heap by itself, so without this the resident set keeps their peak
 * (measured: +1.2 GB per force-merge of 1.8M documents, docs/store.md
 * "Memory").  Cost: one walk of every arena's free lists.
 */
void fds__heap_release(void);
/* refresh.c: the write path found the node's write buffers over their
 * limit: refresh ix (its buffer becomes a published segment) unless, once
 * refresh_mu is held, they no longer are.  Errors are logged: the writes
 * are committed to the translog already. */
void fds__index_buffer_flush(fds_index *ix);
/*
 * refresh.c: the flusher thread.  A write batch that leaves the write
 * buffers over their limit asks for a flush (fds__buffer_flush_async) and
 * answers at once: the flusher freezes the full buffer and writes it as a
 * segment while writers fill a new one, so ingest and segment building
 * run on two cores.  A batch that finds the buffers (frozen ones not
 * counted, fds__buf_over) over the limit waits (fds__buffer_wait) until
 * the flusher has frozen the full buffer, or two refreshes ended (one that
 * failed keeps its documents in the buffer: the writer goes on rather
 * than wait for ever, as before), or the node stops; without a flusher
 * (no background threads) both flush on the writer's thread, as before.
 * The buffers thus hold at most about twice the limit (a frozen one and a
 * full one) plus the batches in flight.  fds__flush_progress wakes the
 * waiters (a freeze or the end of a refresh); fds__flusher_main is the
 * thread (argument: the fds_store), stopped by s->stop and a broadcast
 * of flush_cv.
 */
void fds__buffer_flush_async(fds_index *ix);
void fds__buffer_wait(fds_index *ix);
void fds__flush_progress(fds_store *s);
void *fds__flusher_main(void *arg);
/* segment_build.c: swap the published set (see there). */
int fds__publish(fds_index *ix, fds__live **newlive, unsigned upto,
                 fds__seg **added, fds__live **added_lives, unsigned nadded,
                 fds__seg **removed, unsigned nremoved);

/*
 * merge.c: the merge policy.  When a shard has more than
 * FDS_MERGE_SEGMENTS_MAX segments (docs[0..n): their max_doc, oldest
 * first), the adjacent run to merge (doc order is kept for id lookups):
 * of the runs of 2 to FDS_MERGE_SEGMENTS_MAX / 2 + 1 segments, the most
 * balanced, the least skew -- its largest segment over its total, as
 * Lucene's TieredMergePolicy scores merges, sizes floored at 1,024 docs
 * (its floorSegmentMB) -- ties to the smaller total, then the earlier run;
 * its first index in *from and its length in *count.  False (nothing
 * written) when n is within bounds.  Balanced merges rewrite each doc
 * about log(N) times; merging the run of fewest docs, as before, merged
 * one big segment with the newest small ones again and again (each doc
 * rewritten 14 times over 100 refreshes of two parts, 94 times over 500;
 * now 2.6 and 3.5: tests/store/test_store.c test_merge_policy).
 */
bool fds__merge_pick(const uint64_t *docs, unsigned n, unsigned *from,
                     unsigned *count);
/* merge.c: the background merge policy for one index (errors are logged). */
void fds__index_maybe_merge(fds_index *ix);

/* .fdt file: see segment.c for the layout. */
#define FDT_BLKIDX_ENTRY 16

/* Write seg_<gen>.fdt: blocks encoded from `docs` (sources through `ld`,
 * see fds__doc_loader), or, when `copy` is non-NULL, the blocks of the
 * `ncopy` segments copied unchanged (then `docs` only supplies versions and
 * seq_nos, in the same order). */
int fds__seg_write(fds_index *ix, uint64_t gen, const fds__bufdoc *docs,
                   size_t n, const fds__doc_loader *ld,
                   const fds_codec_params *p, const fds_dict *dict,
                   fds__seg *const *copy, unsigned ncopy, fds_err *err);
int fds__seg_open(fds_index *ix, int64_t row_id, uint64_t gen,
                  fds__seg **out, fds_err *err);
/* Write seg_<gen>.fdt of `to` as a copy of `in`'s, every block (and the
 * footer) naming dictionary `dict_id` instead (fds_block_set_dict): what a
 * resize copies when `to` holds in's dictionary under that id.  No block
 * is decoded.  Returns 0, FDS_EIO (err names the file), FDS_ECORRUPT (a
 * block or the block index fails its checks), FDS_EINVAL, FDS_ENOMEM; the
 * file is removed on error. */
int fds__seg_copy_redict(fds_index *to, const fds__seg *in, uint64_t gen,
                         uint32_t dict_id, fds_err *err);
/*
 * Might sg hold a document with this id?  false: it certainly does not;
 * true: look it up (fds_sidx_find_id).  A Bloom filter of the segment's
 * ids built at fds__seg_open (in memory only, nothing on disk): every
 * write looks each id up in every segment of its shard, and so does a
 * refresh for the deletes it applies, a binary search over the ids per
 * segment that is mostly a miss.  FDS__ID_BLOOM_BITS_PER_DOC bits a doc
 * (rounded up to a power of two) and FDS__ID_BLOOM_PROBES probes give
 * about 0.5% false positives (Bloom 1970; (1 - e^(-kn/m))^k with
 * m/n = 12, k = 4).
 */
#define FDS__ID_BLOOM_BITS_PER_DOC 12u
#define FDS__ID_BLOOM_PROBES 4u
bool fds__seg_may_hold(const fds__seg *sg, const char *id, size_t len);
int fds__seg_locate(const fds__seg *sg, uint32_t doc, uint32_t *block,
                    uint64_t *offset, uint32_t *len, uint32_t *doc_base);
int64_t fds__seg_version(const fds__seg *sg, uint32_t doc);
int64_t fds__seg_seqno(const fds__seg *sg, uint32_t doc);
const fds_dict *fds__index_dict(fds_index *ix, uint32_t dict_id);
/*
 * Reading a segment's docs in order, one block decoded whole per block (a
 * merge's inputs): `cc` is the cursor's own codec context, so encoding on
 * the thread's context between reads does not clobber *src.  Zero the
 * struct, set cc (fds_codec_ctx_create; the caller frees it), then call
 * fds__seg_cursor_read for docs of ascending block.  *src is valid until
 * the next read.  Returns 0 or what fds__seg_read_doc returns.  Pages of
 * the file already read are dropped from the resident set as the cursor
 * moves on (FDS__DROP_CHUNK at a time; they stay in the page cache), so a
 * merge reading a whole segment keeps only the part it is at resident.
 */
#define FDS__DROP_CHUNK (8u << 20)
/* Drop the pages of map[from, to) (rounded to whole pages inside it) from
 * the resident set: madvise(MADV_DONTNEED) on a read-only shared file
 * mapping; later reads fault them in again from the page cache. */
void fds__drop_pages(const uint8_t *map, uint64_t from, uint64_t to);
typedef struct fds__seg_cursor {
    fds_codec_ctx *cc;
    const fds__seg *sg;      /* segment and block of v, NULL for none */
    uint32_t block, base;
    fds_block_view v;
    const fds__seg *last;    /* segment read last, and the offset below */
    uint64_t dropped;        /* which its pages left the resident set */
} fds__seg_cursor;
int fds__seg_cursor_read(fds_index *ix, fds__seg_cursor *c, const fds__seg *sg,
                         uint32_t doc, const uint8_t **src, size_t *len,
                         fds_err *err);
/* merge.c: where a merge's (or a resize's) documents come from: docs[i]
 * is doc where[i].doc of segs[where[i].seg], read in order through one
 * cursor of index `ix` (whose dictionaries decode them); fds__merge_load
 * is its fds__doc_loader function. */
typedef struct fds__merge_where {
    uint32_t seg, doc;
} fds__merge_where;
typedef struct fds__merge_src {
    fds_index *ix;
    fds__seg *const *segs;
    const fds__merge_where *where;
    fds__seg_cursor cur;
} fds__merge_src;
int fds__merge_load(void *ctx, size_t i, const uint8_t **src, size_t *len,
                    fds_err *err);
/* *o as doc `doc` of sg (id, version, seq_no and routing pointing into
 * sg's mapped files and rows; src and shard untouched). */
void fds__merge_doc(fds__bufdoc *o, const fds__seg *sg, uint32_t doc);

/* Decode doc `doc` of `sg` into the calling thread's codec scratch. */
int fds__seg_read_doc(fds_index *ix, const fds__seg *sg, uint32_t doc,
                      const uint8_t **src, size_t *len, fds_err *err);
char *fds__seg_path(const fds_index *ix, uint64_t gen, const char *ext);

static inline bool fds__live_get(const fds__live *l, uint32_t doc)
{
    return !l || (l->bits[doc >> 3] >> (doc & 7)) & 1;
}

#include "index.h"

#endif
