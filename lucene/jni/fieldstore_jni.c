/*
 * fieldstore_jni.c: the JNI glue between org.fieldstore.lucene.FieldstoreNative
 * and libfieldstore-codec (include/fieldstore/codec.h).
 *
 * Why it exists: the Lucene stored-fields format (lucene/java) keeps its
 * blocks in fieldstore's format, so it calls the codec library; this file
 * is the only place that knows both JNI and fdsc_*.  Each function is one
 * fdsc_* call:
 *   - Java byte[] / int[] are pinned with GetPrimitiveArrayCritical for the
 *     call (no copy; no JNI call and no blocking between get and release)
 *     and released with JNI_ABORT where the library only read them.
 *   - Handles (fdsc_ctx *, fdsc_dict *) travel as jlong; a negative jlong
 *     is an FDSC_E* code instead (no pointer is in [-14, 0]).
 *   - Offsets and lengths from Java are checked against the array lengths
 *     here, so a wrong call is FDSC_EINVAL, never a read outside an array.
 * Errors are returned as codes; the Java side turns them into exceptions.
 */
#include <jni.h>
#include <stdint.h>
#include <stdlib.h>

#include <fieldstore/codec.h>

#define FDS_JNI(name) Java_org_fieldstore_lucene_FieldstoreNative_##name

/* Info slots of blockInfo's long[] (FieldstoreNative.INFO_*). */
enum { INFO_CODEC, INFO_DICT_ID, INFO_DOC_BASE, INFO_NDOCS, INFO_RAW_LEN,
       INFO_ENCODED_LEN, INFO_SIZE };

/* True when [off, off+len) lies inside an array of `alen` elements. */
static int fds__in_array(jint off, jlong len, jsize alen)
{
    return off >= 0 && len >= 0 && (jlong)off + len <= (jlong)alen;
}

static void *fds__pin(JNIEnv *env, jarray a)
{
    return a ? (*env)->GetPrimitiveArrayCritical(env, a, NULL) : NULL;
}

static void fds__unpin(JNIEnv *env, jarray a, void *p, jint mode)
{
    if (p)
        (*env)->ReleasePrimitiveArrayCritical(env, a, p, mode);
}

JNIEXPORT jint JNICALL FDS_JNI(version)(JNIEnv *env, jclass cls)
{
    return (jint)fdsc_version();
}

JNIEXPORT jstring JNICALL FDS_JNI(strerror)(JNIEnv *env, jclass cls, jint code)
{
    return (*env)->NewStringUTF(env, fdsc_strerror(code));
}

JNIEXPORT jlong JNICALL FDS_JNI(ctxCreate)(JNIEnv *env, jclass cls)
{
    fdsc_ctx *ctx = NULL;
    int rc = fdsc_ctx_create(&ctx);
    return rc ? (jlong)rc : (jlong)(intptr_t)ctx;
}

JNIEXPORT void JNICALL FDS_JNI(ctxFree)(JNIEnv *env, jclass cls, jlong ctx)
{
    fdsc_ctx_free((fdsc_ctx *)(intptr_t)ctx);
}

JNIEXPORT jint JNICALL FDS_JNI(dictSizeDefault)(JNIEnv *env, jclass cls, jint codec)
{
    return (jint)fdsc_dict_size_default(codec);
}

JNIEXPORT jint JNICALL FDS_JNI(blockSizeDefault)(JNIEnv *env, jclass cls, jint codec,
                                                 jintArray out)
{
    uint32_t bytes = 0, max_docs = 0;
    if (!out || (*env)->GetArrayLength(env, out) < 2)
        return FDSC_EINVAL;
    int rc = fdsc_block_size_default(codec, &bytes, &max_docs);
    if (rc)
        return rc;
    jint v[2] = {(jint)bytes, (jint)max_docs};
    (*env)->SetIntArrayRegion(env, out, 0, 2, v);
    return FDSC_OK;
}

JNIEXPORT jint JNICALL FDS_JNI(dictTrain)(JNIEnv *env, jclass cls, jint codec,
                                          jbyteArray samples, jintArray lens,
                                          jint nsamples, jbyteArray dict_out)
{
    if (!samples || !lens || !dict_out || nsamples < 0 ||
        nsamples > (*env)->GetArrayLength(env, lens))
        return FDSC_EINVAL;
    jsize slen = (*env)->GetArrayLength(env, samples);
    size_t cap = (size_t)(*env)->GetArrayLength(env, dict_out);
    size_t *sizes = malloc(((size_t)nsamples + 1) * sizeof *sizes);
    if (!sizes)
        return FDSC_ENOMEM;
    jint *l = (*env)->GetIntArrayElements(env, lens, NULL);
    if (!l) {
        free(sizes);
        return FDSC_ENOMEM;
    }
    jlong total = 0;
    for (jint i = 0; i < nsamples; i++) {
        sizes[i] = (size_t)(l[i] < 0 ? 0 : l[i]);
        total += l[i] < 0 ? (jlong)slen + 1 : l[i];
    }
    (*env)->ReleaseIntArrayElements(env, lens, l, JNI_ABORT);
    if (total > slen) {
        free(sizes);
        return FDSC_EINVAL;
    }
    size_t dict_len = 0;
    uint8_t *s = fds__pin(env, samples);
    uint8_t *d = fds__pin(env, dict_out);
    int rc = s && d ? fdsc_dict_train(codec, s, sizes, (uint32_t)nsamples, cap, d, &dict_len)
                    : FDSC_ENOMEM;
    fds__unpin(env, dict_out, d, 0);
    fds__unpin(env, samples, s, JNI_ABORT);
    free(sizes);
    return rc ? rc : (jint)dict_len;
}

JNIEXPORT jlong JNICALL FDS_JNI(dictCreate)(JNIEnv *env, jclass cls, jint codec, jint level,
                                            jint dict_id, jbyteArray bytes, jint len)
{
    if (!bytes || !fds__in_array(0, len, (*env)->GetArrayLength(env, bytes)))
        return FDSC_EINVAL;
    fdsc_dict *dict = NULL;
    uint8_t *b = fds__pin(env, bytes);
    int rc = b ? fdsc_dict_create(codec, level, (uint32_t)dict_id, b, (size_t)len, &dict)
               : FDSC_ENOMEM;
    fds__unpin(env, bytes, b, JNI_ABORT);
    return rc ? (jlong)rc : (jlong)(intptr_t)dict;
}

JNIEXPORT void JNICALL FDS_JNI(dictFree)(JNIEnv *env, jclass cls, jlong dict)
{
    fdsc_dict_free((fdsc_dict *)(intptr_t)dict);
}

/* fdsc_params for `codec` with `level` and `sub_blocks` (0 = defaults; the
 * library refuses values a codec does not take). */
static int fds__params(fdsc_params *p, jint codec, jint level, jint sub_blocks)
{
    int rc = fdsc_params_init(p, codec);
    if (rc == FDSC_OK) {
        if (level < 0 || sub_blocks < 0)
            return FDSC_EINVAL;
        p->level = level;
        p->sub_blocks = (uint32_t)sub_blocks;
    }
    return rc;
}

JNIEXPORT jlong JNICALL FDS_JNI(blockBound)(JNIEnv *env, jclass cls, jint codec, jint level,
                                            jint sub_blocks, jlong raw_len, jint ndocs)
{
    fdsc_params p;
    if (raw_len < 0 || ndocs < 0 || fds__params(&p, codec, level, sub_blocks))
        return 0;
    return (jlong)fdsc_block_bound(&p, (size_t)raw_len, (uint32_t)ndocs);
}

JNIEXPORT jint JNICALL FDS_JNI(blockEncode)(JNIEnv *env, jclass cls, jlong ctx, jint codec,
                                            jint level, jint sub_blocks, jlong dict,
                                            jlong doc_base,
                                            jbyteArray docs, jint docs_off, jintArray lens,
                                            jint lens_off, jint ndocs, jbyteArray dst)
{
    fdsc_params p;
    int rc = fds__params(&p, codec, level, sub_blocks);
    if (rc)
        return rc;
    if (!docs || !lens || !dst || doc_base < 0 ||
        !fds__in_array(lens_off, ndocs, (*env)->GetArrayLength(env, lens)))
        return FDSC_EINVAL;
    jsize docs_len = (*env)->GetArrayLength(env, docs);
    jsize dst_len = (*env)->GetArrayLength(env, dst);
    uint8_t *d = fds__pin(env, docs);
    uint32_t *l = fds__pin(env, lens);
    uint8_t *o = fds__pin(env, dst);
    size_t written = 0;
    rc = FDSC_ENOMEM;
    if (d && l && o) {
        jlong raw = 0;
        for (jint i = 0; i < ndocs; i++)
            raw += (jint)l[lens_off + i] < 0 ? (jlong)docs_len + 1 : (jlong)l[lens_off + i];
        rc = fds__in_array(docs_off, raw, docs_len)
                 ? fdsc_block_encode((fdsc_ctx *)(intptr_t)ctx, &p,
                                     (const fdsc_dict *)(intptr_t)dict, (uint64_t)doc_base,
                                     d + docs_off, l + lens_off, (uint32_t)ndocs, o,
                                     (size_t)dst_len, &written)
                 : FDSC_EINVAL;
    }
    fds__unpin(env, dst, o, 0);
    fds__unpin(env, lens, l, JNI_ABORT);
    fds__unpin(env, docs, d, JNI_ABORT);
    return rc ? rc : (jint)written;
}

JNIEXPORT jint JNICALL FDS_JNI(docDecode)(JNIEnv *env, jclass cls, jlong ctx, jlong dict,
                                          jbyteArray blk, jint len, jint doc, jbyteArray dst)
{
    if (!blk || !dst || doc < 0 || !fds__in_array(0, len, (*env)->GetArrayLength(env, blk)))
        return FDSC_EINVAL;
    jsize cap = (*env)->GetArrayLength(env, dst);
    uint8_t *b = fds__pin(env, blk);
    uint8_t *o = fds__pin(env, dst);
    size_t doc_len = 0;
    int rc = b && o ? fdsc_doc_decode((fdsc_ctx *)(intptr_t)ctx,
                                      (const fdsc_dict *)(intptr_t)dict, b, (size_t)len,
                                      (uint32_t)doc, o, (size_t)cap, &doc_len)
                    : FDSC_ENOMEM;
    fds__unpin(env, dst, o, 0);
    fds__unpin(env, blk, b, JNI_ABORT);
    return rc ? rc : (jint)doc_len;
}

JNIEXPORT jint JNICALL FDS_JNI(blockDecode)(JNIEnv *env, jclass cls, jlong ctx, jlong dict,
                                            jbyteArray blk, jint len, jbyteArray dst,
                                            jintArray offsets)
{
    if (!blk || !dst || !offsets || !fds__in_array(0, len, (*env)->GetArrayLength(env, blk)))
        return FDSC_EINVAL;
    jsize cap = (*env)->GetArrayLength(env, dst);
    jsize ocap = (*env)->GetArrayLength(env, offsets);
    uint8_t *b = fds__pin(env, blk);
    uint8_t *o = fds__pin(env, dst);
    uint32_t *off = fds__pin(env, offsets);
    size_t raw_len = 0;
    int rc = b && o && off ? fdsc_block_decode((fdsc_ctx *)(intptr_t)ctx,
                                               (const fdsc_dict *)(intptr_t)dict, b,
                                               (size_t)len, o, (size_t)cap, off,
                                               (uint32_t)ocap, &raw_len)
                           : FDSC_ENOMEM;
    fds__unpin(env, offsets, off, 0);
    fds__unpin(env, dst, o, 0);
    fds__unpin(env, blk, b, JNI_ABORT);
    return rc ? rc : (jint)raw_len;
}

JNIEXPORT jint JNICALL FDS_JNI(blockInfo)(JNIEnv *env, jclass cls, jbyteArray blk, jint len,
                                          jlongArray out)
{
    if (!blk || !out || (*env)->GetArrayLength(env, out) < INFO_SIZE ||
        !fds__in_array(0, len, (*env)->GetArrayLength(env, blk)))
        return FDSC_EINVAL;
    fdsc_block_info info;
    uint8_t *b = fds__pin(env, blk);
    int rc = b ? fdsc_block_info_read(b, (size_t)len, &info) : FDSC_ENOMEM;
    fds__unpin(env, blk, b, JNI_ABORT);
    if (rc)
        return rc;
    jlong v[INFO_SIZE] = {
        [INFO_CODEC] = info.codec,         [INFO_DICT_ID] = info.dict_id,
        [INFO_DOC_BASE] = (jlong)info.doc_base, [INFO_NDOCS] = info.ndocs,
        [INFO_RAW_LEN] = info.raw_len,     [INFO_ENCODED_LEN] = info.encoded_len,
    };
    (*env)->SetLongArrayRegion(env, out, 0, INFO_SIZE, v);
    return FDSC_OK;
}

JNIEXPORT jint JNICALL FDS_JNI(blockVerify)(JNIEnv *env, jclass cls, jbyteArray blk, jint len)
{
    if (!blk || !fds__in_array(0, len, (*env)->GetArrayLength(env, blk)))
        return FDSC_EINVAL;
    uint8_t *b = fds__pin(env, blk);
    int rc = b ? fdsc_block_verify(b, (size_t)len) : FDSC_ENOMEM;
    fds__unpin(env, blk, b, JNI_ABORT);
    return rc;
}

JNIEXPORT jint JNICALL FDS_JNI(blockRebase)(JNIEnv *env, jclass cls, jbyteArray blk, jint len,
                                            jlong doc_base)
{
    if (!blk || doc_base < 0 || !fds__in_array(0, len, (*env)->GetArrayLength(env, blk)))
        return FDSC_EINVAL;
    uint8_t *b = fds__pin(env, blk);
    int rc = b ? fdsc_block_rebase(b, (size_t)len, (uint64_t)doc_base) : FDSC_ENOMEM;
    fds__unpin(env, blk, b, 0);
    return rc;
}
