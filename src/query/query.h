/*
 * query.h: mappings, per-segment inverted index, and search execution
 * (public interface of src/query).
 *
 * The store calls the writer when it turns buffered documents into a segment
 * (refresh) and opens a reader for every live segment; src/http parses a
 * search body into an fds_search_request (fds_search_parse(),
 * search_request.h), asks the store for a consistent list of segments, runs
 * fds_search_execute() and renders the hits (src/http/search_render.h),
 * fetching `_source` from the store's blocks.
 *
 * Doc ids are segment-local, dense, 0 .. max_doc-1, in the order the writer
 * received them (the same order as the stored-fields blocks).
 */
#ifndef FDS_QUERY_H
#define FDS_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fds_error.h"

/* ---- limits of a document ------------------------------------------------ */

#define FDS_DOC_DEPTH_MAX 20          /* ES index.mapping.depth.limit */
#define FDS_FIELD_PATH_MAX 1024       /* bytes of a dotted field path */

/* ---- request bodies ------------------------------------------------------ */

/* JSON nesting of a request body (cJSON's own limit is 1000 levels). */
#define FDS_BODY_DEPTH_MAX 512

/*
 * Check a request body (search, settings, mappings, one bulk action line:
 * `len` bytes of JSON, any top-level value, blank = empty) as strictly as
 * Elasticsearch's JSON parser reads it: no duplicate key in any object,
 * valid UTF-8, no control character in strings, nesting at most
 * FDS_BODY_DEPTH_MAX.  Run it on the bytes a caller also hands to cJSON,
 * which keeps both copies of a duplicate key.  Returns 0, FDS_EPARSE with
 * kind FDS_KIND_CONTENT_PARSE ("[line:col] Duplicate field 'k'", the
 * position just after the repeated name, as Jackson reports it), or
 * FDS_ENOMEM.
 */
int fds_json_check_body(const char *src, size_t len, fds_err *err);
/* fds_json_check_body, and in *nul whether a string value of the body
 * holds a NUL (\u0000): cJSON, which builds the handlers' trees, cuts a
 * string at its NUL, so a handler that takes names from strings (ids,
 * indices, routings) refuses such a body instead of using a shorter name.
 * Same returns as fds_json_check_body; *nul is false on an error. */
int fds_json_check_body_nul(const char *src, size_t len, bool *nul,
                            fds_err *err);

/*
 * The scalars of JSON document src[0..len) at the dotted `path` -- through
 * arrays and objects, a key holding dots too, as Elasticsearch's
 * XContentMapValues.extractRawValues reads them -- appended to the cJSON
 * array `out`: strings, numbers as strings of their digits (none lost to
 * a double), booleans; nulls and objects add nothing.  Returns 0,
 * FDS_EPARSE (not a JSON object: out keeps what came before), FDS_ENOMEM.
 */
struct cJSON;
int fds_json_values_at(const uint8_t *src, size_t len, const char *path,
                       struct cJSON *out);

/* ---- mappings (Elasticsearch field types) ----------------------------- */

typedef enum fds_ftype {
    FDS_FT_NONE = 0,
    FDS_FT_OBJECT,
    FDS_FT_TEXT,
    FDS_FT_KEYWORD,
    FDS_FT_LONG,    /* long, integer, short, byte, unsigned_long(approx) */
    FDS_FT_DOUBLE,  /* double, float, half_float, scaled_float */
    FDS_FT_DATE,    /* epoch milliseconds in a long column */
    FDS_FT_BOOLEAN, /* 0/1 in a long column */
} fds_ftype;

typedef struct fds_mapping fds_mapping;

/* What a search needs to know of one mapped field. */
/* A text field's "index_options": what its postings keep (Lucene's
 * IndexOptions).  Positions, Elasticsearch's default for text, are what
 * phrase queries need; docs keeps every term frequency at 1. */
typedef enum fds_index_options {
    FDS_IO_POSITIONS = 0,
    FDS_IO_DOCS,
    FDS_IO_FREQS,
} fds_index_options;

typedef struct fds_field_info {
    const char *path; /* dotted path, NUL-terminated; owned by the mapping,
                         valid as long as it (fields are never removed) */
    size_t path_len;
    int type;         /* fds_ftype */
    bool index;       /* false: mapped with "index": false (not searchable) */
    bool float32;     /* float / half_float: values kept at float precision */
    int index_options; /* text: fds_index_options */
    /* date: the mapping's `format` (datemath.h), NULL for the default
     * strict_date_optional_time||epoch_millis; owned by the mapping */
    const struct fds_date_format *date_format;
} fds_field_info;

/* Empty mapping (all fields dynamic).  NULL on ENOMEM. */
fds_mapping *fds_mapping_create(void);
void fds_mapping_free(fds_mapping *m); /* NULL is a no-op */

/*
 * Merge explicit mappings given as JSON ({"properties": {...}}, as in the
 * "mappings" of PUT /{index} or as stored by fds_mapping_to_json).
 * Returns 0, or FDS_EPARSE / FDS_EINVAL with `err` filled
 * (kind FDS_KIND_MAPPING_PARSE, or FDS_KIND_INVALID_ARGUMENT for a type
 * change).  Duplicate keys are refused earlier, on the request body that
 * carries the mappings (fds_json_check_body).
 */
int fds_mapping_merge_json(fds_mapping *m, const char *json, size_t len,
                           fds_err *err);

/* The mapping as JSON ({"properties": {...}}), malloc'd, caller frees.
 * NULL on ENOMEM.  Thread-safe against concurrent dynamic updates. */
char *fds_mapping_to_json(const fds_mapping *m);

/*
 * Check that a document is a JSON object fieldstore can index: valid UTF-8,
 * no duplicate keys, values that fit the mapping.  Called before a write is
 * acknowledged so bad documents are refused per item, never dropped later.
 * Returns 0 or FDS_EPARSE / FDS_EINVAL with `err` filled
 * (kind FDS_KIND_MAPPING_PARSE or FDS_KIND_DOCUMENT_PARSE).
 */
int fds_doc_validate(const fds_mapping *m, const uint8_t *src, size_t len,
                     fds_err *err);

/*
 * Validate a document as fds_doc_validate() does and, like Elasticsearch at
 * index time, add the fields it introduces to `m` by the dynamic rules, so
 * that later documents are checked against the types this one fixed (two
 * documents giving one new field different types cannot both be accepted).
 * A document this call refuses adds no field (Elasticsearch applies no
 * mapping update for a document that fails to parse); fields added by a
 * document that a later step rejects (a version conflict) stay mapped.
 * Returns 0, FDS_EPARSE / FDS_EINVAL (err filled, kinds as for
 * fds_doc_validate), FDS_ENOMEM.
 */
int fds_doc_map(fds_mapping *m, const uint8_t *src, size_t len, fds_err *err);

/*
 * Elasticsearch's mapping limit settings (MapperService's
 * INDEX_MAPPING_*_LIMIT_SETTING): index.mapping.total_fields.limit (fields
 * counted as MappingLookup.checkFieldLimit counts them: objects, fields and
 * multi-fields), index.mapping.depth.limit (the depth of an object field:
 * "a" is 1, "a.b" 2) and index.mapping.field_name_length.limit (bytes of a
 * field's last name; 0 = unlimited, Elasticsearch's Long.MAX_VALUE).
 */
typedef struct fds_mapping_limits {
    uint64_t total_fields;
    uint64_t depth;
    uint64_t field_name_length;
} fds_mapping_limits;
#define FDS_MAPPING_TOTAL_FIELDS_DEFAULT 1000
#define FDS_MAPPING_DEPTH_DEFAULT 20

/* fds_doc_map with the index's limits (NULL: the defaults): a document
 * whose new fields would pass one is refused (FDS_EINVAL,
 * FDS_KIND_INVALID_ARGUMENT, Elasticsearch's text) as soon as the scan
 * reaches the first field beyond it, adding none. */
int fds_doc_map_limited(fds_mapping *m, const uint8_t *src, size_t len,
                        const fds_mapping_limits *lim, fds_err *err);

/* Does the mapping keep within `lim` (explicit mappings: PUT _mapping,
 * index creation)?  0, or FDS_EINVAL with err filled as above. */
int fds_mapping_check_limits(const fds_mapping *m,
                             const fds_mapping_limits *lim, fds_err *err);

/* A counter that changes whenever a field is added to or dropped from
 * the mapping (a refresh saves the mapping only when it moved). */
uint64_t fds_mapping_generation(const fds_mapping *m);

/*
 * The field mapped at `path` (`len` bytes, exact dotted path) into *out.
 * Returns 0, or FDS_ENOTFOUND when the path is not mapped.  Thread-safe
 * against concurrent dynamic updates (takes the mapping's read lock).
 */
int fds_mapping_field(const fds_mapping *m, const char *path, size_t len,
                      fds_field_info *out);

/*
 * Copies of the paths of every field of type `type` (fds_ftype), in mapping
 * order: *out is a malloc'd array of *n malloc'd NUL-terminated strings
 * (caller frees each and the array; *out may be NULL when *n is 0).
 * Returns 0 or FDS_ENOMEM (nothing to free).  Thread-safe like
 * fds_mapping_field().
 */
int fds_mapping_fields_of_type(const fds_mapping *m, int type, char ***out,
                               size_t *n);

/* From now on a merge may not change the root's `_source.enabled` or
 * `enabled` (FDS_EINVAL, "Cannot update parameter [enabled]"), as
 * Elasticsearch's mapping updates may not: the mapping of an existing
 * index (PUT /{index}/_mapping), not one being composed for a new index. */
void fds_mapping_seal(fds_mapping *m);

/* false when the mapping has "_source": {"enabled": false}: documents are
 * indexed, and stored as fds_doc_dv_record() makes them; no answer shows
 * a `_source`.  Fixed once the mapping has fields. */
bool fds_mapping_source_enabled(const fds_mapping *m);

/*
 * What an index whose `_source` is disabled keeps of a document in its
 * stored fields: the values its doc values hold, which docvalue_fields
 * reads back (Elasticsearch keeps them in doc-value columns; our segment
 * columns keep one value per document, so the stored record keeps them
 * all).  The record is a JSON object of the full paths of the mapped
 * keyword, ip, numeric, date and boolean fields (multi-fields and copy_to
 * targets included) to arrays of their values in document order, nulls
 * replaced by null_value, keywords past ignore_above left out; text
 * fields, unmapped paths and disabled objects keep nothing.  A document
 * with no such value gives an empty record (*out_len 0).  *out is
 * malloc'd (caller frees; NULL when *out_len is 0).  `src` is a document
 * the mapping accepted (fds_doc_map).  Returns 0 or FDS_ENOMEM.
 */
int fds_doc_dv_record(const fds_mapping *m, const uint8_t *src, size_t len,
                      uint8_t **out, size_t *out_len);

/* ---- per-segment inverted index: writer -------------------------------- */

typedef struct fds_sidx_writer fds_sidx_writer;

/* A writer that indexes documents with (and dynamically extends) `m`.
 * `m` must outlive the writer.  NULL on ENOMEM. */
fds_sidx_writer *fds_sidx_writer_create(fds_mapping *m);
void fds_sidx_writer_free(fds_sidx_writer *w); /* NULL is a no-op */

/*
 * Index document `doc` (must be the previous doc + 1, starting at 0) with
 * id `id` (`id_len` bytes) and JSON source `src`.  Returns 0, FDS_EPARSE /
 * FDS_EINVAL (err filled), FDS_ENOMEM.
 */
int fds_sidx_writer_add(fds_sidx_writer *w, uint32_t doc, const char *id,
                        size_t id_len, const uint8_t *src, size_t len,
                        fds_err *err);

/* Write the segment's index file at `path` and fsync it.
 * Returns 0, FDS_EIO, FDS_ENOMEM. */
int fds_sidx_writer_write(fds_sidx_writer *w, const char *path, fds_err *err);

typedef struct fds_sidx fds_sidx; /* immutable once open; shared by threads */

/*
 * The index file of a merged segment, from its inputs' index files
 * (sidx_merge.c): the merged segment's docs are the live docs of in[0],
 * then of in[1], ..., each in doc order; live[i] is in[i]'s live-docs
 * bitset (bit d set = doc d live, max_doc bits; NULL or live[i] NULL = all
 * live).  The file equals what fds_sidx_writer writes for those documents
 * (terms, ordinals, postings, norms, columns, _id table); the heap holds one
 * term's postings and one field's dictionary and columns at a time.  Writes
 * `path` and fsyncs it (removed on error).  Returns 0, FDS_EIO,
 * FDS_ENOMEM, FDS_ECORRUPT (an input's postings do not decode, or a field
 * has different kinds in two inputs) or FDS_ETOOBIG (2^32 - 1 docs or
 * more); err says which.
 */
int fds_sidx_merge(const fds_sidx *const *in, const uint8_t *const *live,
                   unsigned n, const char *path, fds_err *err);

/* ---- per-segment inverted index: reader -------------------------------- */



/* Open a segment index file.  Returns 0, FDS_EIO, FDS_ECORRUPT (err filled
 * with the path). */
int fds_sidx_open(const char *path, fds_sidx **out, fds_err *err);
void fds_sidx_close(fds_sidx *s); /* NULL is a no-op */

uint32_t fds_sidx_max_doc(const fds_sidx *s);
/* Bytes of the index file on disk. */
uint64_t fds_sidx_file_bytes(const fds_sidx *s);
/* The doc with this _id, or FDS_ENOTFOUND. */
int fds_sidx_find_id(const fds_sidx *s, const char *id, size_t id_len,
                     uint32_t *doc);
/* The _id of `doc` (not NUL-terminated; *len set), NULL if out of range. */
const char *fds_sidx_doc_id(const fds_sidx *s, uint32_t doc, size_t *len);

/* Bytes of one field of a segment index file by part (the _disk_usage
 * API, Elasticsearch's IndexDiskUsageAnalyzer; src/query/index/sidx_usage.c
 * says what each counts). */
typedef struct fds_sidx_usage {
    uint64_t terms;      /* term dictionary entries and term bytes */
    uint64_t postings;   /* skip entries, impacts, postings blocks */
    uint64_t positions;  /* positions tables, block offsets, positions */
    uint64_t norms;
    uint64_t doc_values; /* presence bitset, column, value table */
} fds_sidx_usage;

/* Fill u[i] for each of the file's fields (fds_sidx_nfields(s) of them,
 * in fds_sidx_field_name order) and *id for its _id table (in `terms`).
 * Walks every posting: the cost of a scan of the file.  0 or FDS_ENOMEM. */
int fds_sidx_disk_usage(const fds_sidx *s, fds_sidx_usage *u,
                        fds_sidx_usage *id);
uint32_t fds_sidx_nfields(const fds_sidx *s);
/* Field i's dotted path (not NUL-terminated; *len set), NULL past the
 * last.  Valid while s is open. */
const char *fds_sidx_field_name(const fds_sidx *s, uint32_t i, size_t *len);

/* ---- search ------------------------------------------------------------- */

typedef struct fds_search_request fds_search_request; /* search_request.h */
void fds_search_request_free(fds_search_request *r); /* NULL is a no-op */

/* One segment as a search sees it.  `live` is a bitset of max_doc bits
 * (bit set = live), or NULL when no doc of the segment is deleted;
 * `deleted` is the number of its clear bits among the max_doc (0 without
 * `live`), as Lucene's LeafReader.numDeletedDocs: whoever sets `live`
 * sets it (the index view from the store's count).  A search takes a
 * term's doc count less `deleted` as live matches it is sure of. */
typedef struct fds_reader_cache fds_reader_cache;
typedef struct fds_search_segment {
    const fds_sidx *sidx;
    const uint8_t *live;
    uint32_t deleted;
    /* the cache of the published segment set this segment was read from
     * (NULL: none, each search builds what it needs); every segment of
     * one fds_search_execute names the same one, pinned by the caller
     * for the whole search */
    fds_reader_cache *cache;
} fds_search_segment;

/*
 * What the searches of one published segment set (a reader generation:
 * the set a refresh, merge or delete publishes) build once and share
 * read-only: the global ordinals of keyword fields over the segments
 * (Lucene's OrdinalMap, kept per field and reader as Elasticsearch's
 * GlobalOrdinalsIndexFieldData / IndexOrdinalsFieldData.loadGlobal does
 * until the next refresh) and the cardinality hashes of a segment's
 * terms.  Entries are made on first use by a search (Elasticsearch's
 * default, eager_global_ordinals false) and freed with the cache.
 * Memory: at most FDS_READER_CACHE_MAX_BYTES per cache and
 * FDS_READER_CACHE_TOTAL_MAX_BYTES for the process; a value that would
 * pass either is built for its search only.  Thread-safe: searches on
 * several threads look up and fill one cache (a value being built is
 * waited for, not built twice).
 *
 * The store makes one per published set and each view takes a reference
 * (fds_reader_cache_ref); the last unref frees it and its values.
 */
#define FDS_READER_CACHE_MAX_BYTES ((size_t)256 << 20)
/* Bytes all caches of the process hold at most (old sets' caches stay
 * while a view, a scroll or a point in time holds them). */
#define FDS_READER_CACHE_TOTAL_MAX_BYTES ((size_t)512 << 20)
/* A new, empty cache with one reference; NULL out of memory. */
fds_reader_cache *fds_reader_cache_new(void);
void fds_reader_cache_ref(fds_reader_cache *c);   /* NULL is a no-op */
void fds_reader_cache_unref(fds_reader_cache *c); /* NULL is a no-op */
/* Bytes the cache's values hold now (Elasticsearch's fielddata
 * memory_size_in_bytes, where global ordinals are counted); 0 for NULL. */
size_t fds_reader_cache_bytes(const fds_reader_cache *c);
/* Bytes held by every live cache of the process. */
size_t fds_reader_cache_total_bytes(void);

#define FDS_SORT_VALUES_MAX 4

typedef struct fds_hit {
    uint32_t seg;   /* index into the segments array given to execute */
    uint32_t doc;   /* segment-local doc id */
    float score;    /* BM25 score; NaN when not scored (sorted, filter) */
    /* sort values, when the request sorts (rendered by the search code) */
    uint32_t nsort;
    double sort_num[FDS_SORT_VALUES_MAX];  /* NaN: the field is missing */
    /* the exact value of a long/date/boolean/_doc key (sort_num is it
     * rounded to a double, which cannot tell 2^53 from 2^53 + 1) */
    int64_t sort_long[FDS_SORT_VALUES_MAX];
    const char *sort_str[FDS_SORT_VALUES_MAX]; /* keyword sort: points into the sidx */
    uint32_t sort_str_len[FDS_SORT_VALUES_MAX];
} fds_hit;

/*
 * Why a hit scored what it did, as data (Lucene's Explanation: a value, a
 * description, the details it was computed from).  src/http prints it in
 * Elasticsearch's `_explanation` shape.  Owned by the result.
 */
typedef struct fds_explanation {
    float value;
    char *description;               /* NUL-terminated */
    struct fds_explanation **details;
    size_t ndetails;
} fds_explanation;

typedef struct fds_search_result {
    uint64_t total;        /* hits counted */
    bool total_is_lower_bound; /* relation "gte" */
    float max_score;       /* NaN when not scored */
    fds_hit *hits;         /* the page [from, from+size), malloc'd */
    size_t nhits;
    uint64_t postings_scored; /* postings whose score was computed (bench) */
    uint64_t postings_total;  /* postings of the query's terms (bench) */
    fds_explanation **explain; /* explain[i] explains hits[i] (nhits
                                  entries), NULL unless "explain" was asked */
    struct fds_matched *matched; /* matched[i]: the named queries hits[i]
                                    matches (nhits entries), NULL unless
                                    the query names some */
    bool timed_out;        /* the request's timeout stopped it: partial */
    bool terminated_early; /* terminate_after stopped it (Lucene's
                              EarlyTerminatingCollector) */
    /* the request's aggregations over every matching doc, this shard's
     * partial form (aggs.h: fds_aggs_reduce finishes it); NULL without */
    struct fds_agg_result *aggs;
} fds_search_result;

/*
 * Run a parsed request over `nseg` segments.  Fills `out` (free with
 * fds_search_result_free).  Returns 0, FDS_EINVAL (err filled), FDS_ENOMEM.
 */
int fds_search_execute(const fds_search_request *req,
                       const fds_search_segment *segs, unsigned nseg,
                       fds_search_result *out, fds_err *err);
void fds_search_result_free(fds_search_result *r);
/* A disjunction's MaxScore pass over one segment runs on two threads when
 * its terms hold at least `postings` postings in the docs left after
 * counting and no other search runs in the process (exec/run.c,
 * SLICE_MIN_POSTINGS by default, over at least 2 x 8192 docs).  For tests
 * and benchmarks: 0 slices every disjunction with two docs left, whatever
 * their size; UINT64_MAX never. */
void fds_search_set_slice_min(uint64_t postings);
/* The order of hits of request `req` (of fds_search_execute's results):
 * <0 if a comes before b -- better score, or sort keys in order --,
 * >0 if after; ties go by (seg, doc), as Lucene's TopDocs.merge breaks
 * them by shard and doc.  For merging results of several searches. */
int fds_hit_cmp(const struct fds_search_request *req, const fds_hit *a,
                const fds_hit *b);
/* Free an explanation tree (NULL is a no-op). */
void fds_explanation_free(fds_explanation *e);

/* The `_name`s of the query's nodes one hit matches (its matched_queries),
 * in the query's order (a node before its clauses); names malloc'd. */
typedef struct fds_matched {
    char **names;
    float *scores; /* scores[k]: of names[k]'s query on the hit */
    size_t n;
} fds_matched;
/* Free n of them and the array (NULL is a no-op). */
void fds_matched_free(fds_matched *m, size_t n);

#endif
