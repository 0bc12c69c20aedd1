/*
 * dict_train.c: making an index's compression dictionaries.  A
 * dictionary-using codec trains one on the first refresh (zstd's
 * ZDICT_trainFromBuffer, or the sampled bytes themselves as a raw-content
 * dictionary), stores it in the catalogue and digests it once (dict.c);
 * every block records the id it used.  A merge with much more material
 * than the first sample may train a new one; a resize copies them all;
 * start-up loads them.
 *
 * Catalogue row: dictionaries(id, index_id, codec, raw_len, sample_bytes,
 * bytes, crc), where `bytes` is one zstd frame of the raw_len dictionary
 * bytes, sample_bytes is how much document text it was trained on and crc
 * the row checksum of catalog.c (index_id, codec, raw_len, sample_bytes,
 * bytes), checked at load.
 */
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "catalog.h"
#include "store_int.h"

/* Dictionaries are kept in the catalogue as one zstd frame each (level
 * DICT_STORE_LEVEL): a trained dictionary is mostly log text and shrinks
 * 2-3x, and the catalogue is part of the index's size on disk. */
#define DICT_STORE_LEVEL 19

/* The sample when every document stored is empty (an index without
 * `_source` whose documents have no doc values, fds_doc_dv_record): a
 * codec with a dictionary needs one, so it gets the bytes such records
 * are made of. */
#define FDS_DICT_EMPTY_SAMPLE "{\"\":[\"\",0,true,false]}"
static int dict_store(fds_index *ix, fds_codec_id codec, int level,
                      const uint8_t *dict, size_t dlen, uint64_t total,
                      uint32_t *idp, fds_err *err);

/*
 * Train a dictionary for `codec` from the sources of `docs` (the index's
 * first documents), store it in the catalogue and digest it.  When zstd's
 * trainer refuses (too few samples) the sampled bytes themselves serve as a
 * raw-content dictionary (zstd manual: "dictionary ... can be any content");
 * when they are no bytes at all, FDS_DICT_EMPTY_SAMPLE does.
 */
int fds__dict_train(fds_index *ix, const fds__bufdoc *docs, size_t n,
                            const fds_index_settings *set, const fds_dict **out,
                            fds_err *err)
{
    fds_codec_id codec = set->codec.codec;
    size_t budget = set->dict_sample_bytes, total = 0, ns = 0;
    for (size_t i = 0; i < n && total < budget; i++)
        if (docs[i].src) {
            total += docs[i].src_len;
            ns++;
        }
    uint8_t *samples = malloc(total + 1);
    size_t *lens = malloc((ns + 1) * sizeof *lens);
    size_t cap = codec == FDS_CODEC_DEFLATE ? FDS_DEFLATE_DICT_MAX : set->dict_size;
    uint8_t *dict = malloc(cap + 1);
    if (!samples || !lens || !dict) {
        free(samples);
        free(lens);
        free(dict);
        return FDS_ENOMEM;
    }
    size_t off = 0, k = 0;
    for (size_t i = 0; i < n && k < ns; i++)
        if (docs[i].src) {
            memcpy(samples + off, docs[i].src, docs[i].src_len);
            lens[k++] = docs[i].src_len;
            off += docs[i].src_len;
        }
    if (!total) {
        uint8_t *e = realloc(samples, sizeof FDS_DICT_EMPTY_SAMPLE);
        if (!e) {
            free(samples);
            free(lens);
            free(dict);
            return FDS_ENOMEM;
        }
        samples = e;
        total = sizeof FDS_DICT_EMPTY_SAMPLE - 1;
        memcpy(samples, FDS_DICT_EMPTY_SAMPLE, total);
        lens[0] = total;
        ns = 1;
    }
    size_t dlen = 0;
    int rc = fds_dict_train(codec, samples, lens, (unsigned)ns, cap, dict, &dlen);
    if (rc || dlen == 0) {
        dlen = total < cap ? total : cap;
        memcpy(dict, samples + total - dlen, dlen);
    }
    uint32_t id = 0;
    rc = dict_store(ix, codec, set->codec.level, dict, dlen, total, &id, err);
    if (!rc)
        *out = fds__index_dict(ix, id);
    free(samples);
    free(lens);
    free(dict);
    return rc;
}

/* Store dictionary bytes dict[0, dlen) of `codec` (trained on `total`
 * bytes) as a new catalogue row of ix and digest it at `level`: *id its
 * row id.  0, FDS_ENOMEM, FDS_ESQL or the fds_dict_create code. */
static int dict_store(fds_index *ix, fds_codec_id codec, int level,
                      const uint8_t *dict, size_t dlen, uint64_t total,
                      uint32_t *idp, fds_err *err)
{
    size_t zcap = ZSTD_compressBound(dlen);
    uint8_t *z = malloc(zcap);
    size_t zlen = z ? ZSTD_compress(z, zcap, dict, dlen, DICT_STORE_LEVEL) : 0;
    if (!z || ZSTD_isError(zlen)) {
        free(z);
        return FDS_ENOMEM;
    }
    pthread_mutex_lock(&ix->st->db_mu);
    if (atomic_load(&ix->deleted)) {
        /* deleted while a merge trained this: no row for an index id a
         * new index may get (set under db_mu, indices.c) */
        pthread_mutex_unlock(&ix->st->db_mu);
        free(z);
        return fds__index_not_found(err, ix->name);
    }
    int64_t id = 0;
    int rc = fds__cat_dict_insert(ix->st->db, ix->id, codec, (int64_t)dlen,
                                  (int64_t)total, z, zlen, &id, err);
    pthread_mutex_unlock(&ix->st->db_mu);
    free(z);
    if (!rc)
        rc = fds__dict_add(ix, (uint32_t)id, codec, level, dict, dlen, zlen, total,
                           err);
    *idp = (uint32_t)id;
    return rc;
}

int fds__dict_copy_all(fds_index *to, fds_index *from, uint32_t **from_ids,
                       uint32_t **to_ids, size_t *n, fds_err *err)
{
    *n = 0;
    pthread_mutex_lock(&from->dict_mu);
    size_t nd = from->ndicts;
    fds__dictent *ents = malloc((nd + 1) * sizeof *ents);
    if (ents && nd)
        memcpy(ents, from->dicts, nd * sizeof *ents);
    pthread_mutex_unlock(&from->dict_mu);
    /* (an entry's fds_dict lives as long as `from`, which the caller holds) */
    *from_ids = malloc((nd + 1) * sizeof **from_ids);
    *to_ids = malloc((nd + 1) * sizeof **to_ids);
    int rc = ents && *from_ids && *to_ids ? 0 : FDS_ENOMEM;
    for (size_t i = 0; !rc && i < nd; i++) {
        size_t len;
        const uint8_t *bytes = fds_dict_bytes(ents[i].dict, &len);
        int level = ents[i].codec == to->settings.codec.codec ? to->settings.codec.level
                                                              : ents[i].level;
        rc = dict_store(to, ents[i].codec, level, bytes, len, ents[i].sample_bytes,
                        &(*to_ids)[i], err);
        (*from_ids)[i] = ents[i].id;
        if (!rc)
            *n = i + 1;
    }
    free(ents);
    return rc;
}

/* Digest one dictionaries row of ix (fds__cat_dict_each; ctx: ix). */
static int dict_load_row(void *ctx, const fds__cat_dict_row *r, fds_err *err)
{
    fds_index *ix = ctx;
    uint32_t id = (uint32_t)r->id;
    if (!r->row_ok)
        return fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                            "[%s] dictionary [%u]: catalogue row dictionaries "
                            "fails its checksum (damaged catalogue)",
                            ix->name, id);
    size_t raw_len = (size_t)r->raw_len;
    uint8_t *raw = raw_len <= FDS_BLOCK_SIZE_MAX ? malloc(raw_len + 1) : NULL;
    size_t got = raw ? ZSTD_decompress(raw, raw_len, r->bytes, r->len) : 0;
    int rc;
    if (!raw || ZSTD_isError(got) || got != raw_len)
        rc = fds_err_setk(err, FDS_ECORRUPT, FDS_KIND_CORRUPT,
                          "[%s] dictionary [%u] in the catalogue is damaged",
                          ix->name, id);
    else
        rc = fds__dict_add(ix, id, (fds_codec_id)r->codec,
                           ix->settings.codec.level, raw, raw_len, r->len,
                           (uint64_t)r->sample_bytes, err);
    free(raw);
    return rc;
}

/* Load and digest every dictionary of ix from the catalogue (at
 * start-up; their level is the index's current codec level). */
int fds__dict_load(fds_store *s, fds_index *ix, fds_err *err)
{
    return fds__cat_dicts_read(s->db, ix->id, dict_load_row, ix, err);
}
