/*
 * FieldstoreStoredFieldsFormat: Lucene 4.10 stored fields kept in fieldstore
 * blocks (libfieldstore-codec through JNI), with a zstd dictionary trained
 * per segment.
 *
 * Each document's stored fields become one record (StoredRecord); records
 * are cut into blocks of 32 KiB of raw records or 256 documents (by
 * default; Options), and each block is one
 * fieldstore block: a header naming its codec and dictionary, the documents'
 * lengths, the compressed payload and a CRC-32C checked on every read.  A
 * one-document fetch decodes only as far as that document's zstd sub-block.
 *
 * Files of a segment (every file starts with CodecUtil.writeHeader and ends
 * with CodecUtil.writeFooter, Lucene's CRC-32 of the whole file):
 *
 *   <segment>.fsdict  the dictionary and how blocks are cut
 *       header "FieldstoreStoredFieldsDict", version 0
 *       vint codec       fdsc_codec: 2 ZSTD, 3 ZSTD_NO_DICT (a segment too
 *                        small to train on), 5 LUCENE_DEFLATE
 *       vint level       zstd level (ZSTD / ZSTD_NO_DICT), else 0
 *       vint blockSize   raw bytes a block is closed at
 *       vint maxDocs     documents a block is closed at
 *       vint dictLength  0 when the codec has no dictionary
 *       byte[dictLength] the trained dictionary (fdsc_dict_train), whose
 *                        fdsc dictionary id is DICT_ID in every segment
 *   <segment>.fsd     the blocks, one after the other
 *       header "FieldstoreStoredFieldsData", version 0
 *       block*           fieldstore blocks (include/fieldstore/codec.h)
 *   <segment>.fsx     the block index, read into memory when the segment opens
 *       header "FieldstoreStoredFieldsIndex", version 0
 *       vint numDocs, vint numBlocks, vint maxRawLength (largest block, raw)
 *       per block: vint docCount, vlong encodedLength (blocks are contiguous
 *                  from the end of the .fsd header)
 *
 * The dictionary is trained from the segment's first documents, up to
 * sampleBytes of records (4 MiB by default), before the first block is
 * written: until then records stay in memory.  A segment whose records do
 * not train (fewer than 8 documents, or too small) is written as
 * ZSTD_NO_DICT.  Merges: see FieldstoreStoredFieldsWriter.merge.
 *
 * Modes: ZSTD (the codec's default: trained dictionary, level 9, 32 KiB
 * blocks) and LUCENE_BEST_COMPRESSION (the library's lucene_best_compression
 * layout, Lucene 8.7 / Elasticsearch 7.10 BEST_COMPRESSION: 480 KiB chunks,
 * preset dictionary = the chunk's head, 10 sub-blocks), kept as a reference.
 * The mode is written to the .fsdict file, so one codec name reads both.
 */
package org.fieldstore.lucene;

import java.io.IOException;

import org.apache.lucene.codecs.CodecUtil;
import org.apache.lucene.codecs.StoredFieldsFormat;
import org.apache.lucene.codecs.StoredFieldsReader;
import org.apache.lucene.codecs.StoredFieldsWriter;
import org.apache.lucene.index.FieldInfos;
import org.apache.lucene.index.IndexFileNames;
import org.apache.lucene.index.SegmentInfo;
import org.apache.lucene.store.DataInput;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.util.IOUtils;

public final class FieldstoreStoredFieldsFormat extends StoredFieldsFormat {
    /** File extensions (IndexFileNames.segmentFileName). */
    public static final String DICT_EXTENSION = "fsdict";
    public static final String DATA_EXTENSION = "fsd";
    public static final String INDEX_EXTENSION = "fsx";

    static final String DICT_CODEC = "FieldstoreStoredFieldsDict";
    static final String DATA_CODEC = "FieldstoreStoredFieldsData";
    static final String INDEX_CODEC = "FieldstoreStoredFieldsIndex";
    static final int VERSION_START = 0;
    static final int VERSION_CURRENT = VERSION_START;

    /** The fdsc dictionary id of every segment's dictionary (one per segment). */
    static final int DICT_ID = 1;
    /** Records sampled to train a segment's dictionary, bytes. */
    public static final int SAMPLE_BYTES_DEFAULT = 4 << 20;

    /** How blocks are compressed. */
    public enum Mode {
        /** zstd with a dictionary trained per segment. */
        ZSTD(FieldstoreNative.CODEC_ZSTD),
        /** Lucene 8.7 BEST_COMPRESSION's layout, through the library. */
        LUCENE_BEST_COMPRESSION(FieldstoreNative.CODEC_LUCENE_DEFLATE);

        final int codec;

        Mode(int codec) {
            this.codec = codec;
        }
    }

    /**
     * How new segments are written.  0 in blockSize, maxDocs, subBlocks or
     * dictCapacity means the library's default (fdsc_block_size_default:
     * 16 KiB / 128 docs for ZSTD, 480 KiB / 4096 docs for the Lucene layout;
     * 6 zstd sub-blocks; fdsc_dict_size_default: 64 KiB).
     */
    public static final class Options {
        public final Mode mode;
        /** zstd level 1..19 (ZSTD); 0 for LUCENE_BEST_COMPRESSION. */
        public final int level;
        /** Raw record bytes a block is closed at (1 KiB..16 MiB), or 0. */
        public final int blockSize;
        /** Documents a block is closed at (1..65536), or 0. */
        public final int maxDocs;
        /** zstd blocks a block is cut into at doc boundaries (1..64), or 0. */
        public final int subBlocks;
        /** Record bytes a segment's dictionary is trained on (> 0). */
        public final int sampleBytes;
        /** Dictionary size, bytes (>= 256), or 0. */
        public final int dictCapacity;

        public Options(Mode mode, int level, int blockSize, int maxDocs, int subBlocks,
                       int sampleBytes, int dictCapacity) {
            boolean zstd = mode == Mode.ZSTD;
            check(zstd ? level >= 1 && level <= 19 : level == 0, "level", level);
            check(blockSize == 0 || (blockSize >= 1024 && blockSize <= (16 << 20)), "block",
                    blockSize);
            check(maxDocs >= 0 && maxDocs <= 65536, "docs", maxDocs);
            check(zstd ? subBlocks >= 0 && subBlocks <= 64 : subBlocks == 0, "sub", subBlocks);
            check(sampleBytes > 0, "sample", sampleBytes);
            check(dictCapacity == 0 || dictCapacity >= 256, "dict", dictCapacity);
            this.mode = mode;
            this.level = level;
            this.blockSize = blockSize;
            this.maxDocs = maxDocs;
            this.subBlocks = subBlocks;
            this.sampleBytes = sampleBytes;
            this.dictCapacity = dictCapacity;
        }

        private static void check(boolean ok, String key, int value) {
            if (!ok)
                throw new IllegalArgumentException("fieldstore stored fields: " + key + "="
                        + value + " is out of range");
        }

        /**
         * The defaults of `mode`: ZSTD level 9, blocks of 32 KiB / 256 docs,
         * 6 sub-blocks, a 64 KiB dictionary trained on 4 MiB (docs/lucene.md
         * has the measurements behind them); LUCENE_BEST_COMPRESSION as the
         * library cuts it.
         */
        public static Options defaults(Mode mode) {
            boolean zstd = mode == Mode.ZSTD;
            return new Options(mode, zstd ? LEVEL_DEFAULT : 0, zstd ? BLOCK_SIZE_DEFAULT : 0,
                    zstd ? MAX_DOCS_DEFAULT : 0, 0, SAMPLE_BYTES_DEFAULT, 0);
        }

        /**
         * Options from "key=value,..." with keys mode (zstd,
         * lucene_best_compression), level, block, docs, sub, sample, dict;
         * missing keys keep the mode's defaults.  IllegalArgumentException
         * names an unknown key or a value out of range.
         */
        public static Options parse(String spec) {
            Mode mode = Mode.ZSTD;
            java.util.Map<String, Integer> v = new java.util.HashMap<>();
            for (String kv : spec.split(",")) {
                if (kv.isBlank())
                    continue;
                String[] p = kv.split("=", 2);
                if (p.length != 2)
                    throw new IllegalArgumentException("fieldstore stored fields: '" + kv
                            + "' is not key=value");
                String key = p[0].trim(), val = p[1].trim();
                if (key.equals("mode"))
                    mode = val.equalsIgnoreCase("zstd") ? Mode.ZSTD
                            : val.equalsIgnoreCase("lucene_best_compression")
                                    ? Mode.LUCENE_BEST_COMPRESSION : null;
                else if (java.util.List.of("level", "block", "docs", "sub", "sample", "dict")
                        .contains(key))
                    v.put(key, Integer.valueOf(val));
                else
                    throw new IllegalArgumentException("fieldstore stored fields: unknown key '"
                            + key + "'");
                if (mode == null)
                    throw new IllegalArgumentException("fieldstore stored fields: unknown mode '"
                            + val + "'");
            }
            Options d = defaults(mode);
            return new Options(mode, v.getOrDefault("level", d.level),
                    v.getOrDefault("block", d.blockSize), v.getOrDefault("docs", d.maxDocs),
                    v.getOrDefault("sub", d.subBlocks), v.getOrDefault("sample", d.sampleBytes),
                    v.getOrDefault("dict", d.dictCapacity));
        }

        @Override
        public String toString() {
            return "mode=" + mode.name().toLowerCase(java.util.Locale.ROOT) + ",level=" + level
                    + ",block=" + blockSize + ",docs=" + maxDocs + ",sub=" + subBlocks
                    + ",sample=" + sampleBytes + ",dict=" + dictCapacity;
        }
    }

    /**
     * ZSTD mode's defaults.  Measured on the nginx sample (docs/lucene.md):
     * against the server's level 3 / 16 KiB, level 9 / 32 KiB stores 11-14%
     * fewer bytes for about the same indexing CPU (zstd levels up to ~12 cost
     * little on 32 KiB inputs), and a fetch stays > 10x Lucene's DEFLATE.
     */
    public static final int LEVEL_DEFAULT = 9;
    public static final int BLOCK_SIZE_DEFAULT = 32 * 1024;
    public static final int MAX_DOCS_DEFAULT = 256;

    private final Options options;

    /** ZSTD mode with its defaults (Options.defaults). */
    public FieldstoreStoredFieldsFormat() {
        this(Options.defaults(Mode.ZSTD));
    }

    /** Writes new segments with `options`; reads any segment of this format. */
    public FieldstoreStoredFieldsFormat(Options options) {
        this.options = options;
    }

    /** The segment's file of extension `ext` (no segment suffix). */
    static String fileName(SegmentInfo si, String ext) {
        return IndexFileNames.segmentFileName(si.name, "", ext);
    }

    /** Checks the CodecUtil header of one of our files (versions we read). */
    static void checkHeader(DataInput in, String codec) throws IOException {
        CodecUtil.checkHeader(in, codec, VERSION_START, VERSION_CURRENT);
    }

    /** Creates the segment's file of extension `ext`, its header written. */
    static IndexOutput create(Directory dir, SegmentInfo si, IOContext context, String ext,
                              String codec) throws IOException {
        IndexOutput out = dir.createOutput(fileName(si, ext), context);
        boolean success = false;
        try {
            CodecUtil.writeHeader(out, codec, VERSION_CURRENT);
            success = true;
        } finally {
            if (!success)
                IOUtils.closeWhileHandlingException(out);
        }
        return out;
    }

    public Options options() {
        return options;
    }

    @Override
    public StoredFieldsReader fieldsReader(Directory directory, SegmentInfo si, FieldInfos fn,
                                           IOContext context) throws IOException {
        FieldstoreNative.ensureLoaded();
        return new FieldstoreStoredFieldsReader(directory, si, fn, context);
    }

    @Override
    public StoredFieldsWriter fieldsWriter(Directory directory, SegmentInfo si, IOContext context)
            throws IOException {
        FieldstoreNative.ensureLoaded();
        return new FieldstoreStoredFieldsWriter(directory, si, context, options);
    }

    @Override
    public String toString() {
        return "FieldstoreStoredFieldsFormat(" + options + ")";
    }
}
