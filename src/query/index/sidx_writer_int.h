/*
 * sidx_writer_int.h: what the two halves of the segment writer share --
 * sidx_writer.c (a document's terms, postings, norms and doc values
 * accumulated in memory) and sidx_writer_file.c (those turned into the
 * ".sidx" file): the in-memory field and term records, the term hash and
 * the term order.
 */
#ifndef FDS_SIDX_WRITER_INT_H
#define FDS_SIDX_WRITER_INT_H

#include <stdint.h>
#include <string.h>

#include "query_int.h"


typedef struct wterm {
    uint32_t off, len;   /* in the field's term arena */
    uint32_t df, last_doc;
    uint64_t ttf;
    uint8_t *buf;        /* varint (gap, tf) pairs */
    uint32_t blen, bcap;
    uint8_t *pos;        /* positions of each posting (positions.h) */
    uint32_t plen, pcap;
} wterm;

typedef struct wfield {
    fds_mfield *mf;
    int kind;
    struct wfield *subs[4]; /* multi-fields indexed from the same value */
    unsigned nsubs;
    size_t sub_gen;
    /* terms */
    char *arena;
    size_t alen, acap;
    wterm *terms;
    uint32_t nterms, tcap;
    uint64_t *th;          /* open addressing: term_slot(); 0 = empty */
    uint32_t thcap;
    /* per doc */
    uint8_t *norms;
    uint64_t *present;
    int64_t *col;          /* LONG/DATE/BOOLEAN values or DOUBLE bits */
    uint32_t *mintid;      /* KEYWORD: term id of the doc's smallest term */
    size_t dcap;           /* docs allocated in the per-doc arrays */
    uint32_t doc_count;
    uint64_t sum_ttf;
    /* scratch for the current doc */
    uint32_t *cur;
    size_t ncur, ccap;
    bool touched, has_val;
    bool multi;            /* numeric, text: a doc had several values */
    bool positions;        /* text with index_options positions */
    fds__conv val;
    uint32_t ntok;
    /* text: position of each token of cur (the next one's in next_pos),
     * values of the field seen in the current doc */
    uint32_t *cpos;
    size_t cpcap;
    uint32_t next_pos, nvals;
    uint64_t *keys;        /* scratch of commit_field: term id << 32 | position */
    size_t kcap;
    /* text: the values longer than FDS_SIDX_VALUE_MIN_BYTES (value ids,
     * sidx_format.h): their bytes in varena, each once (wval, by a table
     * of TERM_SLOTs in vh), the docs holding each (cnt), the value of each
     * doc (vid, UINT32_MAX: none) and of the current one (cur_v) */
    char *varena;
    size_t valen, vacap;
    struct wval {
        size_t off;
        uint32_t len, cnt;
    } *vals;
    uint32_t nv, vcap;
    uint64_t *vh;
    uint32_t vhcap;
    uint32_t *vid;
    uint32_t cur_v;
} wfield;

struct fds_sidx_writer {
    fds_mapping *m;
    wfield **fields;
    size_t nfields, fcap;
    uint32_t *fh; /* path hash -> field index + 1 */
    size_t fhcap;
    wfield **touched;
    size_t ntouched, tcap;
    uint32_t ndocs;
    char *ids;
    size_t idlen, idcap;
    uint32_t *idoff;
    size_t idoffcap;
    /* current doc */
    const uint8_t *src;
    size_t srclen;
    uint32_t doc;
    int oom;
    /* the current doc's terms, interned once the doc is scanned
     * (pend_resolve in sidx_writer.c): each with its field, its slot in
     * the field's cur, its bytes in pbytes and its hash */
    struct wpend {
        wfield *f;
        uint32_t slot, off, len, hash;
    } *pend;
    size_t npend, pendcap;
    char *pbytes;
    size_t pblen, pbcap;
    /* a multi-field took a value that did not come through its parent (a
     * dotted key such as "url.keyword", a copy_to into it): its values are
     * no longer its parent's, so no text field is FDS_SIDX_F_SINGLE */
    bool sub_direct;
};

/*
 * The hash of the in-memory term tables (never stored): eight bytes at a
 * time, each word mixed in by a multiply and a rotation (the round of
 * xxHash64, Collet, with its primes), the tail bytes packed into one last
 * word, then xxHash64's avalanche.  Term interning is the hottest loop of
 * a refresh; FNV-1a's multiply per byte cost ~6% of a bulk load's CPU on
 * URL and user-agent keywords.
 */
#define TERM_HASH_P1 11400714785074694791ull
#define TERM_HASH_P2 14029467366897019727ull
#define TERM_HASH_P3 1609587929392839161ull

static inline uint64_t term_hash(const char *t, size_t len)
{
    uint64_t h = TERM_HASH_P3 ^ (len * TERM_HASH_P1);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, t + i, 8);
        h ^= w * TERM_HASH_P2;
        h = ((h << 31) | (h >> 33)) * TERM_HASH_P1;
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, t + i, len - i);
        h ^= w * TERM_HASH_P2;
        h = ((h << 31) | (h >> 33)) * TERM_HASH_P1;
    }
    h ^= h >> 33;
    h *= TERM_HASH_P2;
    h ^= h >> 29;
    h *= TERM_HASH_P3;
    return h ^ (h >> 32);
}

/* Order of terms a and b of f by their bytes (memcmp, then length). */
static inline int term_cmp_bytes(const wfield *f, uint32_t a, uint32_t b)
{
    const wterm *x = &f->terms[a], *y = &f->terms[b];
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(f->arena + x->off, f->arena + y->off, n);
    return c ? c : (x->len < y->len ? -1 : x->len > y->len);
}

/* Size the per-doc arrays of f (norms, presence bits, columns) for doc
 * ids up to `doc`, new entries zeroed.  0 or FDS_ENOMEM. */
int fds__sidx_writer_ensure_docs(wfield *f, uint32_t doc);

#endif
