/*
 * FieldstoreNative: the JNI surface of libfieldstore-codec (the C library
 * whose API is include/fieldstore/codec.h) as the Lucene stored-fields
 * format uses it.  The glue is lucene/jni/fieldstore_jni.c; every method
 * maps to one fdsc_* call.
 *
 * Conventions (those of codec.h, carried over):
 *   - byte[] and int[] arguments are the caller's; the library reads or
 *     writes them during the call only (no pointer is kept).
 *   - Methods that return int give a size (>= 0) or a negative FDSC_E* code;
 *     methods that return a long handle give the handle (> 0) or a negative
 *     FDSC_E* code.  check() turns a code into an IOException:
 *     CorruptIndexException for FDSC_ECORRUPT and FDSC_EDICT (a damaged
 *     block or one that names another dictionary), IOException otherwise.
 *   - A dictionary handle is immutable and shared by threads; a context
 *     handle is used by one thread at a time: context() gives each thread its
 *     own, created on first use and freed when the thread is gone
 *     (java.lang.ref.Cleaner), as Lucene clones stored-fields readers per
 *     thread without closing the clones.
 *
 * The shared library is loaded on first use, not when the codec class is
 * loaded (Lucene's SPI instantiates every registered codec at start-up, and
 * an index that does not use this one must not need the library): from the
 * path in the system property "fieldstore.jni.library" when it is set, else
 * System.loadLibrary("fieldstore_jni") (java.library.path).
 */
package org.fieldstore.lucene;

import java.io.IOException;
import java.lang.ref.Cleaner;

import org.apache.lucene.index.CorruptIndexException;

final class FieldstoreNative {
    /* Codec ids, fixed forever (fdsc_codec in codec.h). */
    static final int CODEC_ZSTD = 2;
    static final int CODEC_ZSTD_NO_DICT = 3;
    static final int CODEC_LUCENE_DEFLATE = 5;

    /* Error codes (codec.h, fixed for ABI major 1). */
    static final int ENOMEM = -1;
    static final int ECORRUPT = -3;
    static final int EDICT = -4;
    static final int EINVAL = -5;
    static final int ERANGE = -8;

    /* Indices into blockInfo()'s long[] output. */
    static final int INFO_CODEC = 0, INFO_DICT_ID = 1, INFO_DOC_BASE = 2,
            INFO_NDOCS = 3, INFO_RAW_LEN = 4, INFO_ENCODED_LEN = 5, INFO_SIZE = 6;

    /** System property naming the JNI library's path. */
    static final String LIBRARY_PROPERTY = "fieldstore.jni.library";

    private FieldstoreNative() {}

    private static volatile boolean loaded;

    /** Loads the JNI library once; UnsatisfiedLinkError says where it looked. */
    static void ensureLoaded() {
        if (loaded)
            return;
        synchronized (FieldstoreNative.class) {
            if (loaded)
                return;
            String path = System.getProperty(LIBRARY_PROPERTY);
            if (path != null && !path.isEmpty())
                System.load(path);
            else
                System.loadLibrary("fieldstore_jni");
            if (version() / 10000 != 1)
                throw new UnsatisfiedLinkError("libfieldstore-codec " + version()
                        + " is not ABI major 1");
            loaded = true;
        }
    }

    /* ---- per-thread contexts ------------------------------------------- */

    private static final Cleaner CLEANER = Cleaner.create();

    /** One fdsc_ctx, freed by the cleaner when its owner is unreachable. */
    private static final class Context {
        final long handle;

        Context(long handle) {
            this.handle = handle;
            CLEANER.register(this, () -> ctxFree(handle));
        }
    }

    private static final ThreadLocal<Context> CONTEXT = new ThreadLocal<>();

    /** This thread's fdsc_ctx handle (created on first use). */
    static long context() throws IOException {
        Context c = CONTEXT.get();
        if (c == null) {
            ensureLoaded();
            long h = ctxCreate();
            check(h, "fdsc_ctx_create");
            c = new Context(h);
            CONTEXT.set(c);
        }
        return c.handle;
    }

    /**
     * Turns a negative FDSC_E* code into an exception naming `what` (the
     * resource and position); returns `v` unchanged when it is >= 0.
     */
    static long check(long v, String what) throws IOException {
        if (v >= 0)
            return v;
        String msg = what + ": " + strerror((int) v) + " (fdsc code " + v + ")";
        if (v == ECORRUPT || v == EDICT)
            throw new CorruptIndexException(msg);
        if (v == ENOMEM)
            throw new OutOfMemoryError(msg);
        throw new IOException(msg);
    }

    /* ---- fdsc_* calls ----------------------------------------------------- */

    /** fdsc_version(): MAJOR*10000 + MINOR*100 + PATCH. */
    static native int version();

    /** fdsc_strerror(). */
    static native String strerror(int code);

    /** fdsc_ctx_create(): a handle or a negative code. */
    static native long ctxCreate();

    static native void ctxFree(long ctx);

    /** fdsc_dict_size_default(): recommended dictionary capacity, bytes. */
    static native int dictSizeDefault(int codec);

    /**
     * fdsc_block_size_default(): out[0] = bytes, out[1] = max docs.
     * Returns 0 or a negative code.
     */
    static native int blockSizeDefault(int codec, int[] out);

    /**
     * fdsc_dict_train() on `nsamples` documents laid end to end in
     * `samples`, sample i being lens[i] bytes; writes the dictionary to
     * `dictOut` (its length is the capacity).  Returns the dictionary's size
     * or a negative code (FDSC_EINVAL: too few or too small samples).
     */
    static native int dictTrain(int codec, byte[] samples, int[] lens, int nsamples,
                                byte[] dictOut);

    /**
     * fdsc_dict_create() from bytes[0, len): a handle or a negative code.
     * The bytes are copied.
     */
    static native long dictCreate(int codec, int level, int dictId, byte[] bytes, int len);

    static native void dictFree(long dict);

    /**
     * fdsc_block_bound() for fdsc_params_init(codec) with `level` and
     * `subBlocks` (both 0 = the defaults); 0 for invalid params.
     */
    static native long blockBound(int codec, int level, int subBlocks, long rawLen, int ndocs);

    /**
     * fdsc_block_encode() with params as blockBound's: `ndocs` documents laid end to end from
     * docs[docsOff], document i being lens[lensOff + i] bytes; `dict` is 0
     * for codecs without one.  Writes the block to dst; returns its size or
     * a negative code (FDSC_EINVAL also for offsets outside the arrays).
     */
    static native int blockEncode(long ctx, int codec, int level, int subBlocks, long dict,
                                  long docBase,
                                  byte[] docs, int docsOff, int[] lens, int lensOff, int ndocs,
                                  byte[] dst);

    /**
     * fdsc_doc_decode(): document `doc` of the block blk[0, len) into dst;
     * returns its size, or a negative code (FDSC_ERANGE when dst is too
     * small: blockInfo()'s raw length always fits).
     */
    static native int docDecode(long ctx, long dict, byte[] blk, int len, int doc, byte[] dst);

    /**
     * fdsc_block_decode(): every document of blk[0, len) into dst, and the
     * ndocs+1 document offsets into `offsets`.  Returns the raw size or a
     * negative code.
     */
    static native int blockDecode(long ctx, long dict, byte[] blk, int len, byte[] dst,
                                  int[] offsets);

    /** fdsc_block_info_read() into out[INFO_*]; 0 or a negative code. */
    static native int blockInfo(byte[] blk, int len, long[] out);

    /** fdsc_block_verify(): 0 or a negative code. */
    static native int blockVerify(byte[] blk, int len);

    /** fdsc_block_rebase() in place: 0 or a negative code. */
    static native int blockRebase(byte[] blk, int len, long docBase);
}
