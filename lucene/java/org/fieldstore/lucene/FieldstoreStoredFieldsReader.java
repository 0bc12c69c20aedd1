/*
 * FieldstoreStoredFieldsReader: reads one segment's stored fields written by
 * FieldstoreStoredFieldsWriter (layout: FieldstoreStoredFieldsFormat).
 *
 * Opening reads the .fsdict (whole file checksummed) and digests the
 * dictionary once (fdsc_dict_create), and the .fsx block index into two
 * arrays (first doc id and file offset of each block; a binary search maps a
 * doc id to its block, like Lucene's .fdx).  A fetch reads the block's bytes
 * from the .fsd and asks the library for that one document
 * (fdsc_doc_decode: block checksum first, then a decode that stops after the
 * document's zstd sub-block), then walks the record with the visitor.
 *
 * Threads: Lucene clones a reader per thread (SegmentCoreReaders'
 * fieldsReaderLocal) and never closes the clones; a clone shares the
 * dictionary and index arrays, owns its IndexInput clone and buffers, and
 * uses the thread's fdsc context (FieldstoreNative.context()).  Closing the
 * original frees the dictionary.
 */
package org.fieldstore.lucene;

import java.io.IOException;

import org.apache.lucene.codecs.CodecUtil;
import org.apache.lucene.codecs.StoredFieldsReader;
import org.apache.lucene.index.CorruptIndexException;
import org.apache.lucene.index.FieldInfos;
import org.apache.lucene.index.SegmentInfo;
import org.apache.lucene.index.StoredFieldVisitor;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.ChecksumIndexInput;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.util.IOUtils;
import org.apache.lucene.util.RamUsageEstimator;

public final class FieldstoreStoredFieldsReader extends StoredFieldsReader {
    /** What the original and its clones share. */
    private static final class Core {
        int codec, level, blockSize, maxDocs;
        byte[] dictBytes = new byte[0];
        long dict;            /* fdsc_dict handle, 0 when the codec has none */
        int numDocs;
        int[] blockDocBase;   /* numBlocks + 1, last = numDocs */
        long[] blockOffset;   /* numBlocks + 1, last = end of the blocks */
        int maxRawLength, maxEncodedLength;
        volatile boolean closed;
    }

    private final FieldInfos fieldInfos;
    private final Core core;
    private final IndexInput data;
    private final String resource;
    private final boolean original;
    private byte[] blockBuf = new byte[0];
    private byte[] docBuf = new byte[0];

    FieldstoreStoredFieldsReader(Directory dir, SegmentInfo si, FieldInfos fn, IOContext context)
            throws IOException {
        this.fieldInfos = fn;
        this.original = true;
        this.core = new Core();
        boolean success = false;
        IndexInput in = null;
        try {
            readDict(dir, si, context);
            readIndex(dir, si, context);
            String dataName = FieldstoreStoredFieldsFormat.fileName(si,
                    FieldstoreStoredFieldsFormat.DATA_EXTENSION);
            in = dir.openInput(dataName, context);
            FieldstoreStoredFieldsFormat.checkHeader(in, FieldstoreStoredFieldsFormat.DATA_CODEC);
            if (in.getFilePointer() != core.blockOffset[0]
                    || core.blockOffset[core.blockOffset.length - 1]
                            != in.length() - CodecUtil.footerLength())
                throw new CorruptIndexException("block index does not cover " + dataName
                        + " (resource=" + in + ")");
            CodecUtil.retrieveChecksum(in);
            success = true;
        } finally {
            if (!success) {
                IOUtils.closeWhileHandlingException(in);
                freeDict();
            }
        }
        this.data = in;
        this.resource = in.toString();
    }

    private FieldstoreStoredFieldsReader(FieldstoreStoredFieldsReader o) {
        this.fieldInfos = o.fieldInfos;
        this.core = o.core;
        this.data = o.data.clone();
        this.resource = o.resource;
        this.original = false;
    }

    private void readDict(Directory dir, SegmentInfo si, IOContext context) throws IOException {
        String name = FieldstoreStoredFieldsFormat.fileName(si,
                FieldstoreStoredFieldsFormat.DICT_EXTENSION);
        try (ChecksumIndexInput in = dir.openChecksumInput(name, context)) {
            FieldstoreStoredFieldsFormat.checkHeader(in, FieldstoreStoredFieldsFormat.DICT_CODEC);
            core.codec = in.readVInt();
            core.level = in.readVInt();
            core.blockSize = in.readVInt();
            core.maxDocs = in.readVInt();
            int n = in.readVInt();
            if (n < 0 || n > in.length())
                throw new CorruptIndexException("dictionary length " + n + " (resource=" + in + ")");
            core.dictBytes = new byte[n];
            in.readBytes(core.dictBytes, 0, n);
            CodecUtil.checkFooter(in);
            if (n > 0) {
                long h = FieldstoreNative.dictCreate(core.codec, core.level,
                        FieldstoreStoredFieldsFormat.DICT_ID, core.dictBytes, n);
                FieldstoreNative.check(h, "dictionary of " + name);
                core.dict = h;
            }
        }
    }

    private void readIndex(Directory dir, SegmentInfo si, IOContext context) throws IOException {
        String name = FieldstoreStoredFieldsFormat.fileName(si,
                FieldstoreStoredFieldsFormat.INDEX_EXTENSION);
        try (ChecksumIndexInput in = dir.openChecksumInput(name, context)) {
            FieldstoreStoredFieldsFormat.checkHeader(in, FieldstoreStoredFieldsFormat.INDEX_CODEC);
            long start = in.getFilePointer();
            core.numDocs = in.readVInt();
            int numBlocks = in.readVInt();
            core.maxRawLength = in.readVInt();
            if (core.numDocs != si.getDocCount() || numBlocks < 0 || numBlocks > core.numDocs)
                throw new CorruptIndexException("block index of " + numBlocks + " blocks, "
                        + core.numDocs + " docs for a segment of " + si.getDocCount()
                        + " (resource=" + in + ")");
            core.blockDocBase = new int[numBlocks + 1];
            core.blockOffset = new long[numBlocks + 1];
            long offset = CodecUtil.headerLength(FieldstoreStoredFieldsFormat.DATA_CODEC);
            int doc = 0;
            for (int b = 0; b < numBlocks; b++) {
                core.blockDocBase[b] = doc;
                core.blockOffset[b] = offset;
                int docs = in.readVInt();
                long len = in.readVLong();
                if (docs <= 0 || docs > core.numDocs - doc || len <= 0 || len > Integer.MAX_VALUE)
                    throw new CorruptIndexException("block " + b + ": " + docs + " docs, " + len
                            + " bytes (resource=" + in + ")");
                core.maxEncodedLength = Math.max(core.maxEncodedLength, (int) len);
                doc += docs;
                offset += len;
            }
            if (doc != core.numDocs)
                throw new CorruptIndexException("blocks hold " + doc + " docs, not " + core.numDocs
                        + " (resource=" + in + ")");
            core.blockDocBase[numBlocks] = doc;
            core.blockOffset[numBlocks] = offset;
            CodecUtil.checkFooter(in);
        }
    }

    private void freeDict() {
        if (core.dict != 0) {
            FieldstoreNative.dictFree(core.dict);
            core.dict = 0;
        }
    }

    private void ensureOpen() {
        if (core.closed)
            throw new AlreadyClosedException("this FieldstoreStoredFieldsReader is closed");
    }

    /* ---- what merges use ------------------------------------------------ */

    int codec() {
        return core.codec;
    }

    byte[] dictBytes() {
        return core.dictBytes;
    }

    long dict() {
        return core.dict;
    }

    int numBlocks() {
        return core.blockDocBase.length - 1;
    }

    int blockDocBase(int b) {
        return core.blockDocBase[b];
    }

    int blockDocCount(int b) {
        return core.blockDocBase[b + 1] - core.blockDocBase[b];
    }

    int maxRawLength() {
        return core.maxRawLength;
    }

    /**
     * Reads block `b`'s encoded bytes into buf (grown as needed; returned)
     * and sets len[0] to their count.  The bytes are not checked here.
     */
    byte[] readBlock(int b, byte[] buf, int[] len) throws IOException {
        ensureOpen();
        int n = (int) (core.blockOffset[b + 1] - core.blockOffset[b]);
        if (buf.length < n)
            buf = new byte[Math.max(n, core.maxEncodedLength)];
        data.seek(core.blockOffset[b]);
        data.readBytes(buf, 0, n);
        len[0] = n;
        return buf;
    }

    String describe(int b) {
        return "block " + b + " (docs " + core.blockDocBase[b] + ".."
                + (core.blockDocBase[b + 1] - 1) + ", file offset " + core.blockOffset[b]
                + ") of " + resource;
    }

    /* ---- StoredFieldsReader --------------------------------------------- */

    private int blockOf(int docID) {
        int lo = 0, hi = core.blockDocBase.length - 2;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (core.blockDocBase[mid] <= docID)
                lo = mid;
            else
                hi = mid - 1;
        }
        return lo;
    }

    @Override
    public void visitDocument(int docID, StoredFieldVisitor visitor) throws IOException {
        ensureOpen();
        if (docID < 0 || docID >= core.numDocs)
            throw new IllegalArgumentException("doc id " + docID + " out of [0, " + core.numDocs
                    + ")");
        int b = blockOf(docID);
        int[] len = new int[1];
        blockBuf = readBlock(b, blockBuf, len);
        if (docBuf.length < core.maxRawLength)
            docBuf = new byte[core.maxRawLength];
        int n = FieldstoreNative.docDecode(FieldstoreNative.context(), core.dict, blockBuf, len[0],
                docID - core.blockDocBase[b], docBuf);
        if (n < 0)
            FieldstoreNative.check(n, "doc " + docID + " in " + describe(b));
        StoredRecord.visit(docBuf, 0, n, fieldInfos, visitor, resource);
    }

    @Override
    public StoredFieldsReader clone() {
        ensureOpen();
        return new FieldstoreStoredFieldsReader(this);
    }

    /** Lucene's whole-file CRC-32 footers of the .fsd (CheckIndex, merges). */
    @Override
    public void checkIntegrity() throws IOException {
        ensureOpen();
        CodecUtil.checksumEntireFile(data.clone());
    }

    @Override
    public long ramBytesUsed() {
        return RamUsageEstimator.sizeOf(core.blockDocBase) + RamUsageEstimator.sizeOf(core.blockOffset)
                + 2L * core.dictBytes.length /* our copy and the library's */
                + blockBuf.length + docBuf.length;
    }

    @Override
    public void close() throws IOException {
        if (original && !core.closed) {
            core.closed = true;
            try {
                data.close();
            } finally {
                freeDict();
            }
        }
    }
}
