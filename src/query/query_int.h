/*
 * query_int.h: internal interface of src/query (struct layouts, helpers
 * shared by the analyzer, mapping, index writer/reader and search code).
 * Nothing outside src/query includes this file.
 */
#ifndef FDS_QUERY_INT_H
#define FDS_QUERY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fds_bytes.h"
#include "query.h"

/* ---- limits ------------------------------------------------------------ */

#define FDS_KEYWORD_IGNORE_ABOVE 256  /* dynamic .keyword ignore_above (chars) */
#define FDS_TRACK_TOTAL_DEFAULT 10000 /* ES default track_total_hits */
#define FDS_POSTINGS_BLOCK 128        /* doc ids per postings block */
#define FDS_TOKEN_MAX_CHARS 255       /* StandardAnalyzer maxTokenLength */
#define FDS_COPY_TO_MAX 16            /* targets of one field's copy_to (ours) */
/* Positions between the last token of a value and the first of the next
 * value of the same text field in a document, unless the mapping says:
 * Elasticsearch's default position_increment_gap (TextFieldMapper). */
#define FDS_POSITION_INCREMENT_GAP 100u
#define FDS_BM25_K1 1.2f
#define FDS_BM25_B 0.75f

/* The weight of a BM25 term or phrase of query boost `boost` and idf
 * `idf`: Elasticsearch scores with LegacyBM25Similarity
 * (SimilarityProviders.createBM25Similarity), which hands Lucene's
 * BM25Similarity the boost times (1 + k1) -- boost * (1 + k1) and then
 * * idf, each a float product as in Java -- so that its scores are those
 * of the classic BM25 with the (k1 + 1) numerator: a lone doc's match
 * scores its idf (0.2876821), 2.2 times Lucene 9's. */
static inline float fds__bm25_boost(float boost)
{
    return boost * (1.0f + FDS_BM25_K1);
}

static inline float fds__bm25_weight(float boost, float idf)
{
    return fds__bm25_boost(boost) * idf;
}

/* ---- field types (mapping and index) ------------------------------------ */

/* fds_ftype (the field types) is public: query.h. */

/* Index-level kind of a field in a segment (what the sidx stores). */
static inline bool fds__ftype_numeric(int t)
{
    return t == FDS_FT_LONG || t == FDS_FT_DOUBLE || t == FDS_FT_DATE ||
           t == FDS_FT_BOOLEAN;
}

typedef struct fds_mfield {
    char *path;          /* full dotted path, e.g. "url.keyword" */
    size_t path_len;
    int type;            /* fds_ftype */
    char type_name[16];  /* ES type name as given ("integer", "float") */
    int ignore_above;    /* keyword: chars; 0 = none */
    bool is_subfield;    /* multi-field ("fields") of parent */
    bool has_subs;       /* has multi-fields */
    bool index;          /* "index": false -> not searchable */
    uint8_t index_options; /* text: fds_index_options (query.h) */
    uint32_t pos_gap;    /* text: position_increment_gap */
    struct fds_mfield *parent; /* for sub-fields / object children */
    struct fds_date_format *dfmt; /* date: "format" (malloc'd), NULL = default */
    /* object "enabled": false: its contents stay in `_source` only, never
     * parsed, mapped or indexed (Elasticsearch's ObjectMapper.enabled) */
    bool disabled;
    /* "null_value": what a JSON null (or a null array element) indexes as,
     * as a JSON value of kind null_kind (FDS_JV_STRING, NUMBER, TRUE or
     * FALSE) with text null_text (malloc'd, null_len bytes); NULL = none */
    char *null_text;
    size_t null_len;
    int null_kind;
    /* "copy_to": full paths of the fields its values are also indexed
     * into (malloc'd array of malloc'd strings), ncopy of them */
    char **copy_to;
    unsigned ncopy;
} fds_mfield;

struct fds_mapping {
    pthread_rwlock_t lock;
    fds_mfield **fields; /* insertion order, stable pointers */
    size_t nfields, cap;
    uint32_t *hash;      /* open addressing, index+1, 0 = empty */
    size_t hash_cap;
    /* the root's "dynamic" (Elasticsearch's ObjectMapper.Dynamic): new
     * fields are mapped (TRUE), left unmapped in `_source` (FALSE), or
     * refuse their document (STRICT) */
    int dynamic;         /* FDS_DYNAMIC_* */
    bool no_date_detection; /* "date_detection": false */
    /* "dynamic_date_formats": the formats a new string field is tried
     * against, in order (malloc'd, nddf of them); NULL = Elasticsearch's
     * default, strict_date_optional_time then yyyy/MM/dd (fds__mapping_dynamic) */
    struct fds_date_format *ddf;
    unsigned nddf;
    bool ddf_set;        /* the list was given (an empty one included) */
    /* "_source": {"enabled": false}: documents are indexed, and their
     * stored record keeps only what feeds doc values (fds_doc_dv_record) */
    bool source_disabled;
    /* the root's "enabled": false: nothing of a document is indexed */
    bool root_disabled;
    bool sealed;         /* fds_mapping_seal: those two no longer change */
    /* objects with "enabled": false (0: no value needs the ancestor check
     * of fds__doc_scan) and fields with a null_value or copy_to (0 with
     * ndisabled 0: fds__doc_scan reports values as fds__json_scan does,
     * without a lookup) */
    unsigned ndisabled, nvalue_params;
    uint64_t gen;        /* fds_mapping_generation */
};
/* Most formats in a root "dynamic_date_formats" list. */
#define FDS_DYNAMIC_DATE_FORMATS_MAX 8

enum { FDS_DYNAMIC_TRUE = 0, FDS_DYNAMIC_FALSE, FDS_DYNAMIC_STRICT };

/* Lookup under the caller's lock (or none, for private mappings). */
fds_mfield *fds__mapping_find(const fds_mapping *m, const char *path,
                              size_t len);
/* Add a field (caller holds the write lock).  NULL on ENOMEM. */
fds_mfield *fds__mapping_add(fds_mapping *m, const char *path, size_t len,
                             int type, const char *type_name);
/* Look up with the read lock taken and released. */
fds_mfield *fds__mapping_find_locked(const fds_mapping *m, const char *path,
                                     size_t len);
/* A keyword multi-field of text field `path` (the dynamic mapping's
 * "keyword" of a string), with the read lock taken and released; NULL
 * when `path` is not a text field or has none.  The field lives as long
 * as the mapping. */
const fds_mfield *fds__mapping_keyword_sub(const fds_mapping *m,
                                           const char *path, size_t len);

/* ---- values against a mapped field ---------------------------------------- */

typedef struct fds__conv {
    int64_t l;  /* LONG, DATE (epoch ms), BOOLEAN (0/1) */
    double d;   /* DOUBLE (rounded to the field's precision) */
} fds__conv;

struct fds_jval;
/* 0 if value `v` fits field `f` (filling *out when not NULL), else
 * FDS_EINVAL / FDS_ERANGE (out of the type's range; for double and float a
 * number that is not finite at the field's precision). */
int fds__value_check(const fds_mfield *f, const struct fds_jval *v,
                     fds__conv *out);
/* Fill `err` with Elasticsearch's document_parsing_exception for `v` (with
 * the illegal_argument_exception cause "[double] supports only finite
 * values, but got [Infinity]" for a double or float out of range). */
int fds__value_error(const fds_mfield *f, const struct fds_jval *v,
                     const uint8_t *src, size_t len, fds_err *err);
/* The field for a value at an unmapped path, added by Elasticsearch's
 * dynamic rules (text + keyword sub-field, long, float, date, boolean,
 * object).  Caller holds the write lock.  NULL when the value adds nothing
 * (null, array) or on ENOMEM (*enomem set). */
fds_mfield *fds__mapping_dynamic(fds_mapping *m, const struct fds_jval *v,
                                 bool *enomem);

/* ---- JSON scanner over raw bytes ---------------------------------------- */

/* A scan callback's answer at the start of an object or array: walk its
 * contents (checking them) without reporting them. */
#define FDS__JSCAN_SKIP 1

enum { FDS_JV_STRING, FDS_JV_NUMBER, FDS_JV_TRUE, FDS_JV_FALSE, FDS_JV_NULL,
       FDS_JV_OBJECT, FDS_JV_ARRAY };

typedef struct fds_jval {
    int kind;
    const char *path;  /* dotted path (NUL-terminated) */
    size_t path_len;
    const char *str;   /* unescaped string (STRING) or raw number text */
    size_t str_len;
    size_t offset;     /* byte offset of the value in the document */
    /* set by fds__doc_scan: the value is a field's null_value standing for
     * a JSON null (its multi-fields take their own), or a value copied to
     * this path by copy_to */
    bool from_null, copied;
} fds_jval;

/* Called for every scalar and at the start of every object/array value.
 * Returns 0 to continue, FDS__JSCAN_SKIP at an object/array start to walk
 * it unreported, or a negative code to stop (returned by scan). */
typedef int (*fds_jval_fn)(void *arg, const fds_jval *v, fds_err *err);

/* Scan a JSON document: must be an object; checks UTF-8, duplicate keys,
 * depth.  Returns 0, FDS_EPARSE (err filled), FDS_ENOMEM, or cb's code. */
int fds__json_scan(const uint8_t *src, size_t len, fds_jval_fn cb, void *arg,
                   fds_err *err);
/* fds_json_check_body() (query.h) calling `cb` for every value as
 * fds__json_scan does, with empty paths (cb may be NULL). */
int fds__json_scan_body(const char *src, size_t len, fds_jval_fn cb,
                        void *arg, fds_err *err);
/* fds__json_scan as the mapping sees a document (Elasticsearch's
 * DocumentParser): values under an object with "enabled": false (or all,
 * with the root's) are not reported; a null at a field with a null_value
 * is reported as that value (from_null set); after each value (a null
 * included) of a field with copy_to, the same value is reported again at
 * each target path (copied set, and a null there takes the target's
 * null_value), targets' own copy_to not followed.  `locked`: the caller
 * holds m's lock (read or write); else each lookup takes the read lock.
 * Returns as fds__json_scan. */
int fds__doc_scan(const fds_mapping *m, bool locked, const uint8_t *src,
                  size_t len, fds_jval_fn cb, void *arg, fds_err *err);

/* Is `path` (len bytes) inside an object with "enabled": false (or is the
 * root disabled), so that nothing there is mapped?  Takes the read lock. */
bool fds__path_disabled(const fds_mapping *m, const char *path, size_t len);

/* The value field f takes for v: v itself unless v is a null or stands
 * for one (from_null, a parent's null_value); then f's null_value in *tmp
 * (from_null set), or, when f has none, v for a null and NULL (no value)
 * for a parent's null_value (a multi-field takes its own, as
 * Elasticsearch's multi-fields parse the null again). */
const fds_jval *fds__null_as(const fds_mfield *f, const fds_jval *v,
                             fds_jval *tmp);

/* "[line:col]" for an error message. */
void fds__json_linecol(const uint8_t *src, size_t len, size_t off, int *line,
                       int *col);

/* Strict UTF-8 check. */
bool fds__utf8_valid(const uint8_t *s, size_t n);

/* ---- values ------------------------------------------------------------- */

/* Parse an integer from its digits (no double round trip).  Accepts an
 * optional fraction that is truncated when `coerce` ("1.0" -> 1).  Returns 0,
 * FDS_EINVAL (not a number), FDS_ERANGE (out of int64). */
int fds__parse_long(const char *s, size_t n, bool coerce, int64_t *out);
/* A JSON-style decimal number (no hex, inf or nan words).  Returns 0,
 * FDS_EINVAL (not a number), or FDS_ERANGE when it overflows a double
 * (*out = +-HUGE_VAL, as strtod gives). */
int fds__parse_double(const char *s, size_t n, double *out);
/* strict_date_optional_time (yyyy-MM-dd['T'HH:mm[:ss[.S+]]][Z|+-HH[:]mm])
 * or, when `allow_epoch`, epoch milliseconds digits.  Returns 0 or
 * FDS_EINVAL. */
int fds__parse_date(const char *s, size_t n, bool allow_epoch, int64_t *ms);
/* Boolean values ES accepts: true/false/"true"/"false"/"". */
int fds__parse_bool(const char *s, size_t n, int64_t *out);
/* Round a float-family value to its stored precision. */
double fds__round_ftype(const fds_mfield *f, double v);

/* ---- analysis ------------------------------------------------------------ */

#include "mapping/analysis.h"

/* ---- BM25 / norms ------------------------------------------------------- */

uint8_t fds__norm_encode(uint32_t length);   /* Lucene SmallFloat.intToByte4 */
uint32_t fds__norm_decode(uint8_t b);        /* Lucene SmallFloat.byte4ToInt */

/* ---- misc ---------------------------------------------------------------- */

/* Make *p (an array of *cap elements of `elem` bytes) hold at least `need`,
 * doubling from 16; *p and *cap are unchanged on FDS_ENOMEM. */
static inline int fds__grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, nc * elem);
    if (!np)
        return FDS_ENOMEM;
    *p = np;
    *cap = nc;
    return 0;
}

/* Bits needed for v (0 for 0). */
static inline unsigned fds__bit_width(uint64_t v)
{
    return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}
/* OR the w low bits (w <= 57) of v into the LSB-first bit stream at bit
 * `bit` of p (which must be zeroed there and have 8 bytes to spare). */
static inline void fds__bits_put(uint8_t *p, uint64_t bit, unsigned w,
                                 uint64_t v)
{
    for (unsigned k = 0; k < w; k++, bit++)
        if ((v >> k) & 1)
            p[bit >> 3] |= (uint8_t)(1u << (bit & 7));
}
/* The w bits (w <= 57) at bit `bit` of an LSB-first bit stream; reads 8
 * bytes from byte bit / 8. */
static inline uint64_t fds__bits_get(const uint8_t *p, uint64_t bit,
                                     unsigned w)
{
    uint64_t v;
    __builtin_memcpy(&v, p + (bit >> 3), 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    v >>= bit & 7;
    return w ? v & (~0ull >> (64 - w)) : 0;
}

#endif
