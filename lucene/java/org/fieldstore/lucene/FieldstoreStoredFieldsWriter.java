/*
 * FieldstoreStoredFieldsWriter: writes one segment's stored fields as
 * fieldstore blocks (layout: FieldstoreStoredFieldsFormat).
 *
 * Flow: every document's stored fields are appended to `pending` as one
 * record (StoredRecord).  Until the segment has a dictionary, records pile
 * up to sampleBytes; then the dictionary is trained on all of them
 * (fdsc_dict_train), digested once (fdsc_dict_create), and from then on a
 * block is encoded (fdsc_block_encode) and appended to the .fsd whenever
 * the pending records reach the block size or document count.  finish()
 * trains on what there is if it has not yet, writes the last block, the
 * .fsdict and the .fsx.
 *
 * Merges (merge()): the merged segment takes the dictionary of the incoming
 * segment of this format with the most live documents, instead of training
 * one.  Then, per incoming segment, in doc-id order:
 *   - COPY: same dictionary bytes and codec, fields numbered alike
 *     (MergeState.matchingSegmentReaders) and no deleted documents: its
 *     blocks are copied compressed, only their doc base rewritten
 *     (fdsc_block_rebase, which verifies the block's checksum before and
 *     recomputes it after); the documents pending before are first closed
 *     into a block of their own, which may be short.
 *   - RECORDS: fields numbered alike but another dictionary, or deletions:
 *     each block is decoded once (fdsc_block_decode) and the live documents'
 *     records are re-added unchanged, then re-encoded with the merged
 *     segment's dictionary.
 *   - FIELDS: another format, or fields numbered differently: each live
 *     document is read through its reader and its fields re-added, as
 *     Lucene's default StoredFieldsWriter.merge does.
 * What each segment went through is reported to the merge's InfoStream
 * under the component "FSSF" (blocks copied, documents re-encoded).
 */
package org.fieldstore.lucene;

import java.io.IOException;
import java.util.Arrays;

import org.apache.lucene.codecs.CodecUtil;
import org.apache.lucene.codecs.StoredFieldsReader;
import org.apache.lucene.codecs.StoredFieldsWriter;
import org.apache.lucene.index.AtomicReader;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.FieldInfos;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.index.MergeState;
import org.apache.lucene.index.SegmentInfo;
import org.apache.lucene.index.SegmentReader;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.util.ArrayUtil;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.IOUtils;

public final class FieldstoreStoredFieldsWriter extends StoredFieldsWriter {
    /** InfoStream component of the merge report. */
    public static final String INFO_COMPONENT = "FSSF";

    private final Directory dir;
    private final SegmentInfo si;
    private final IOContext context;
    private final int sampleBytes;
    private final int dictCapacity;
    private int codec;
    private final int level;
    private final int subBlocks;
    private final int blockSize;
    private final int maxDocs;

    private IndexOutput data;
    /* Records not yet in a block: docs laid end to end, their lengths. */
    private final StoredRecord.Buffer pending = new StoredRecord.Buffer();
    private int[] pendingLens = new int[128];
    private int pendingDocs;
    private int docStart;
    private int numDocs;            /* docs finished, in blocks or pending */
    private int blockedDocs;        /* docs in blocks already written */
    /* Dictionary: null until trained or adopted. */
    private byte[] dictBytes;
    private long dict;
    /* Block index. */
    private int[] blockDocs = new int[64];
    private long[] blockLens = new long[64];
    private int numBlocks;
    private int maxRawLength;
    private byte[] encoded = new byte[0];

    FieldstoreStoredFieldsWriter(Directory dir, SegmentInfo si, IOContext context,
                                 FieldstoreStoredFieldsFormat.Options o) throws IOException {
        this.dir = dir;
        this.si = si;
        this.context = context;
        this.codec = o.mode.codec;
        this.level = o.level;
        this.subBlocks = o.subBlocks;
        this.sampleBytes = o.sampleBytes;
        int[] sizes = new int[2];
        FieldstoreNative.check(FieldstoreNative.blockSizeDefault(codec, sizes), "block size");
        this.blockSize = o.blockSize > 0 ? o.blockSize : sizes[0];
        this.maxDocs = o.maxDocs > 0 ? o.maxDocs : sizes[1];
        this.dictCapacity = o.dictCapacity > 0 ? o.dictCapacity
                : FieldstoreNative.dictSizeDefault(codec);
        if (!usesDict())
            dictBytes = new byte[0];
        boolean success = false;
        try {
            data = FieldstoreStoredFieldsFormat.create(dir, si, context,
                    FieldstoreStoredFieldsFormat.DATA_EXTENSION,
                    FieldstoreStoredFieldsFormat.DATA_CODEC);
            success = true;
        } finally {
            if (!success)
                abort();
        }
    }

    private boolean usesDict() {
        return codec == FieldstoreNative.CODEC_ZSTD;
    }

    /* ---- documents ------------------------------------------------------ */

    @Override
    public void startDocument() {
        docStart = pending.length;
    }

    @Override
    public void writeField(FieldInfo info, IndexableField field) throws IOException {
        StoredRecord.writeField(pending, info, field);
    }

    @Override
    public void finishDocument() throws IOException {
        addPending(pending.length - docStart);
    }

    /** Counts the record that ends `pending` (len bytes) as a document. */
    private void addPending(int len) throws IOException {
        if (pendingDocs == pendingLens.length)
            pendingLens = ArrayUtil.grow(pendingLens);
        pendingLens[pendingDocs++] = len;
        numDocs++;
        if (dictBytes == null) {
            if (pending.length >= sampleBytes)
                train();
        } else if (pending.length >= blockSize || pendingDocs >= maxDocs) {
            flushBlocks(false);
        }
    }

    /* ---- dictionary ----------------------------------------------------- */

    /** Trains on every pending record; too few or too small: ZSTD_NO_DICT. */
    private void train() throws IOException {
        byte[] out = new byte[dictCapacity];
        int n = FieldstoreNative.dictTrain(codec, pending.bytes, pendingLens, pendingDocs, out);
        if (n == FieldstoreNative.EINVAL) {
            codec = FieldstoreNative.CODEC_ZSTD_NO_DICT;
            dictBytes = new byte[0];
        } else {
            FieldstoreNative.check(n, "dictionary training for segment " + si.name);
            useDictionary(Arrays.copyOf(out, n));
        }
        flushBlocks(false);
    }

    private void useDictionary(byte[] bytes) throws IOException {
        long h = FieldstoreNative.dictCreate(codec, level, FieldstoreStoredFieldsFormat.DICT_ID,
                bytes, bytes.length);
        FieldstoreNative.check(h, "dictionary of segment " + si.name);
        dict = h;
        dictBytes = bytes;
    }

    /* ---- blocks --------------------------------------------------------- */

    /**
     * Encodes the pending records into blocks of blockSize bytes / maxDocs
     * docs; the last, shorter run stays pending unless `all`.
     */
    private void flushBlocks(boolean all) throws IOException {
        int doc = 0, off = 0;
        while (doc < pendingDocs) {
            int end = doc, bytes = 0;
            while (end < pendingDocs && end - doc < maxDocs && bytes < blockSize)
                bytes += pendingLens[end++];
            if (!all && bytes < blockSize && end - doc < maxDocs)
                break;
            writeBlock(off, doc, end - doc, bytes);
            off += bytes;
            doc = end;
        }
        // Keep the remainder at the start of the buffers.
        System.arraycopy(pending.bytes, off, pending.bytes, 0, pending.length - off);
        pending.length -= off;
        System.arraycopy(pendingLens, doc, pendingLens, 0, pendingDocs - doc);
        pendingDocs -= doc;
    }

    private void writeBlock(int off, int firstDoc, int ndocs, int rawLen) throws IOException {
        long bound = FieldstoreNative.blockBound(codec, level, subBlocks, rawLen, ndocs);
        FieldstoreNative.check(bound == 0 ? FieldstoreNative.EINVAL : bound, "block bound");
        if (encoded.length < bound)
            encoded = new byte[(int) bound];
        int n = FieldstoreNative.blockEncode(FieldstoreNative.context(), codec, level, subBlocks, dict,
                blockedDocs, pending.bytes, off, pendingLens, firstDoc, ndocs, encoded);
        FieldstoreNative.check(n, "block encode in segment " + si.name);
        appendBlock(encoded, n, ndocs, rawLen);
    }

    private void appendBlock(byte[] blk, int len, int ndocs, int rawLen) throws IOException {
        data.writeBytes(blk, 0, len);
        if (numBlocks == blockDocs.length) {
            blockDocs = ArrayUtil.grow(blockDocs);
            blockLens = Arrays.copyOf(blockLens, blockDocs.length);
        }
        blockDocs[numBlocks] = ndocs;
        blockLens[numBlocks] = len;
        numBlocks++;
        blockedDocs += ndocs;
        maxRawLength = Math.max(maxRawLength, rawLen);
    }

    /* ---- finish --------------------------------------------------------- */

    @Override
    public void finish(FieldInfos fis, int numDocs) throws IOException {
        if (numDocs != this.numDocs)
            throw new RuntimeException("stored fields of " + this.numDocs + " docs, but the segment "
                    + si.name + " has " + numDocs + "; the index may be corrupt");
        if (dictBytes == null)
            train();
        flushBlocks(true);
        CodecUtil.writeFooter(data);
        writeDict();
        writeIndex();
    }

    private void writeDict() throws IOException {
        try (IndexOutput out = FieldstoreStoredFieldsFormat.create(dir, si, context,
                FieldstoreStoredFieldsFormat.DICT_EXTENSION, FieldstoreStoredFieldsFormat.DICT_CODEC)) {
            out.writeVInt(codec);
            out.writeVInt(level);
            out.writeVInt(blockSize);
            out.writeVInt(maxDocs);
            out.writeVInt(dictBytes.length);
            out.writeBytes(dictBytes, dictBytes.length);
            CodecUtil.writeFooter(out);
        }
    }

    private void writeIndex() throws IOException {
        try (IndexOutput out = FieldstoreStoredFieldsFormat.create(dir, si, context,
                FieldstoreStoredFieldsFormat.INDEX_EXTENSION, FieldstoreStoredFieldsFormat.INDEX_CODEC)) {
            out.writeVInt(numDocs);
            out.writeVInt(numBlocks);
            out.writeVInt(maxRawLength);
            for (int b = 0; b < numBlocks; b++) {
                out.writeVInt(blockDocs[b]);
                out.writeVLong(blockLens[b]);
            }
            CodecUtil.writeFooter(out);
        }
    }

    @Override
    public void abort() {
        try {
            close();
        } catch (Throwable ignored) {
            // abort() must not throw; the files are deleted below
        }
        for (String ext : new String[] {FieldstoreStoredFieldsFormat.DATA_EXTENSION,
                FieldstoreStoredFieldsFormat.INDEX_EXTENSION,
                FieldstoreStoredFieldsFormat.DICT_EXTENSION})
            IOUtils.deleteFilesIgnoringExceptions(dir,
                    FieldstoreStoredFieldsFormat.fileName(si, ext));
    }

    @Override
    public void close() throws IOException {
        try {
            IOUtils.close(data);
        } finally {
            data = null;
            if (dict != 0) {
                FieldstoreNative.dictFree(dict);
                dict = 0;
            }
        }
    }

    /* ---- merge ---------------------------------------------------------- */

    @Override
    public int merge(MergeState ms) throws IOException {
        int n = ms.readers.size();
        FieldstoreStoredFieldsReader[] matching = new FieldstoreStoredFieldsReader[n];
        int adopt = -1;
        for (int i = 0; i < n; i++) {
            SegmentReader sr = ms.matchingSegmentReaders == null ? null
                    : ms.matchingSegmentReaders[i];
            StoredFieldsReader r = sr == null ? null : sr.getFieldsReader();
            if (r instanceof FieldstoreStoredFieldsReader) {
                matching[i] = (FieldstoreStoredFieldsReader) r;
                if (usesDict() && matching[i].codec() == codec
                        && matching[i].dictBytes().length > 0
                        && (adopt < 0 || sr.numDocs() > ms.readers.get(adopt).numDocs()))
                    adopt = i;
            }
        }
        if (adopt >= 0 && dictBytes == null)
            useDictionary(matching[adopt].dictBytes().clone());

        int docCount = 0;
        for (int i = 0; i < n; i++) {
            AtomicReader reader = ms.readers.get(i);
            FieldstoreStoredFieldsReader m = matching[i];
            Bits live = reader.getLiveDocs();
            int before = numDocs;
            String how;
            if (m != null && live == null && dictBytes != null && m.codec() == codec
                    && Arrays.equals(m.dictBytes(), dictBytes)) {
                how = "copied " + copyBlocks(m, ms) + " blocks";
            } else if (m != null) {
                addRecords(m, live, ms);
                how = "re-encoded the records of " + (numDocs - before) + " docs";
            } else {
                addFields(reader, live, ms);
                how = "re-encoded the fields of " + (numDocs - before) + " docs";
            }
            docCount += numDocs - before;
            if (ms.infoStream.isEnabled(INFO_COMPONENT))
                ms.infoStream.message(INFO_COMPONENT, "merge into " + si.name + ": reader " + i
                        + " (" + reader + "): " + how);
        }
        finish(ms.fieldInfos, docCount);
        return docCount;
    }

    /** COPY: closes pending docs into a block, then copies m's blocks. */
    private int copyBlocks(FieldstoreStoredFieldsReader m, MergeState ms) throws IOException {
        flushBlocks(true);
        byte[] buf = new byte[0];
        int[] len = new int[1];
        for (int b = 0; b < m.numBlocks(); b++) {
            buf = m.readBlock(b, buf, len);
            int rc = FieldstoreNative.blockRebase(buf, len[0], blockedDocs);
            FieldstoreNative.check(rc, "copying " + m.describe(b));
            int docs = m.blockDocCount(b);
            numDocs += docs;
            appendBlock(buf, len[0], docs, m.maxRawLength());
            ms.checkAbort.work(300.0 * docs);
        }
        return m.numBlocks();
    }

    /** RECORDS: decodes each block once, re-adds the live docs' records. */
    private void addRecords(FieldstoreStoredFieldsReader m, Bits live, MergeState ms)
            throws IOException {
        byte[] buf = new byte[0];
        byte[] raw = new byte[m.maxRawLength()];
        int[] len = new int[1];
        int[] offsets = new int[0];
        for (int b = 0; b < m.numBlocks(); b++) {
            int docs = m.blockDocCount(b), base = m.blockDocBase(b);
            if (offsets.length < docs + 1)
                offsets = new int[docs + 1];
            buf = m.readBlock(b, buf, len);
            int rc = FieldstoreNative.blockDecode(FieldstoreNative.context(), m.dict(), buf, len[0],
                    raw, offsets);
            FieldstoreNative.check(rc, "merging " + m.describe(b));
            for (int d = 0; d < docs; d++) {
                if (live != null && !live.get(base + d))
                    continue;
                docStart = pending.length;
                pending.writeBytes(raw, offsets[d], offsets[d + 1] - offsets[d]);
                addPending(offsets[d + 1] - offsets[d]);
            }
            ms.checkAbort.work(300.0 * docs);
        }
    }

    /** FIELDS: Lucene's default merge, document by document. */
    private void addFields(AtomicReader reader, Bits live, MergeState ms) throws IOException {
        int maxDoc = reader.maxDoc();
        for (int d = 0; d < maxDoc; d++) {
            if (live != null && !live.get(d))
                continue;
            addDocument(reader.document(d), ms.fieldInfos);
            ms.checkAbort.work(300);
        }
    }
}
