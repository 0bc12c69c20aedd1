/*
 * dict.c: the compression dictionaries an index holds, digested once
 * (ZSTD_CDict/ZSTD_DDict via fds_dict) and looked up by the id a block
 * records: adding one, the one a block names, the newest of a codec, and
 * whether a merge should train anew.  Training, the catalogue rows and
 * loading them are dict_train.c.
 */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

const fds_dict *fds__index_dict(fds_index *ix, uint32_t dict_id)
{
    const fds_dict *d = NULL;
    pthread_mutex_lock(&ix->dict_mu);
    for (size_t i = 0; i < ix->ndicts; i++)
        if (ix->dicts[i].id == dict_id)
            d = ix->dicts[i].dict;
    pthread_mutex_unlock(&ix->dict_mu);
    return d;
}

int fds__dict_add(fds_index *ix, uint32_t id, fds_codec_id codec,
                          int level, const uint8_t *bytes, size_t len,
                          size_t stored_len, uint64_t sample_bytes, fds_err *err)
{
    fds_dict *d = NULL;
    int rc = fds_dict_create(id, codec, level, bytes, len, &d);
    if (rc)
        return fds_err_setk(err, rc, FDS_KIND_INTERNAL,
                            "[%s] cannot load dictionary [%u]: %s", ix->name, id,
                            fds_strerror(rc));
    pthread_mutex_lock(&ix->dict_mu);
    fds__dictent *q = realloc(ix->dicts, (ix->ndicts + 1) * sizeof *q);
    if (!q) {
        pthread_mutex_unlock(&ix->dict_mu);
        fds_dict_free(d);
        return FDS_ENOMEM;
    }
    ix->dicts = q;
    ix->dicts[ix->ndicts++] =
        (fds__dictent){id, level, sample_bytes, codec, d, stored_len};
    pthread_mutex_unlock(&ix->dict_mu);
    return 0;
}

/* The newest dictionary of `codec`, or NULL; *level gets the zstd level
 * its CDict was digested for. */
const fds_dict *fds__dict_current_level(fds_index *ix,
                                                fds_codec_id codec, int *level)
{
    const fds_dict *d = NULL;
    pthread_mutex_lock(&ix->dict_mu);
    for (size_t i = 0; i < ix->ndicts; i++)
        if (ix->dicts[i].codec == codec) {
            d = ix->dicts[i].dict;
            if (level)
                *level = ix->dicts[i].level;
        }
    pthread_mutex_unlock(&ix->dict_mu);
    return d;
}

const fds_dict *fds__dict_current(fds_index *ix, fds_codec_id codec)
{
    return fds__dict_current_level(ix, codec, NULL);
}

/*
 * True when a merge of `merge_bytes` of documents should train a new
 * dictionary: the current one was trained on less than the sample the
 * settings ask for (the index's first refresh held few documents, as when
 * bulk loading with a 1 s refresh_interval) and the merge has at least twice
 * as much material.  Blocks written with the old dictionary are then
 * re-encoded, never copied.
 */
bool fds__dict_wants_retrain(fds_index *ix, const fds_index_settings *set,
                               uint64_t merge_bytes)
{
    if (!fds_codec_uses_dict(set->codec.codec))
        return false;
    bool want = false;
    pthread_mutex_lock(&ix->dict_mu);
    for (size_t i = ix->ndicts; i-- > 0;)
        if (ix->dicts[i].codec == set->codec.codec) {
            uint64_t have = ix->dicts[i].sample_bytes;
            want = have < set->dict_sample_bytes && merge_bytes >= 2 * have;
            break;
        }
    pthread_mutex_unlock(&ix->dict_mu);
    return want;
}

