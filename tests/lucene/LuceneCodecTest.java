/*
 * LuceneCodecTest: the fieldstore stored-fields codec inside a real Lucene
 * 4.10 index (IndexWriter, DirectoryReader, CheckIndex), on the bundled
 * nginx sample.
 *
 * usage: LuceneCodecTest NGINX2JSON LOG WORKDIR
 *
 * For each mode (ZSTD, LUCENE_BEST_COMPRESSION):
 *   1. index every line (layout ALL: _id, _source and the typed fields) with
 *      the codec, flushing every 1,500 docs (several segments, compound
 *      files on), commit, and read every document back: each value equal,
 *      byte for byte, in order;
 *   2. force-merge to one segment and check again; the merge must have
 *      copied blocks (the segment whose dictionary it took) and re-encoded
 *      the others (InfoStream "FSSF");
 *   3. delete every 50th document, force-merge again (re-encode of a
 *      segment with deletions), check the live ones, and that 8 threads
 *      reading random documents at once get the same bytes;
 *   4. CheckIndex finds the index clean.
 * Then, on the ZSTD index: one bit flipped inside a block of the .fsd makes
 * the documents of that block fail with CorruptIndexException (the block
 * checksum), every other document still reads back equal, and
 * checkIntegrity() fails; a bit flipped in the .fsdict makes opening the
 * index fail with CorruptIndexException.
 * Exit status 0 when all holds; an exception (status 1) names what did not.
 */
package org.fieldstore.lucene.test;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.lucene.analysis.core.KeywordAnalyzer;
import org.apache.lucene.index.AtomicReaderContext;
import org.apache.lucene.index.CheckIndex;
import org.apache.lucene.index.CorruptIndexException;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.MultiFields;
import org.apache.lucene.index.SegmentReader;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.InfoStream;
import org.apache.lucene.util.Version;
import org.fieldstore.lucene.FieldstoreCodec;
import org.fieldstore.lucene.FieldstoreStoredFieldsFormat;
import org.fieldstore.lucene.FieldstoreStoredFieldsReader;
import org.fieldstore.lucene.FieldstoreStoredFieldsWriter;
import org.fieldstore.lucene.sample.NginxDocuments;
import org.fieldstore.lucene.sample.NginxDocuments.Layout;
import org.fieldstore.lucene.sample.NginxDocuments.Value;

public final class LuceneCodecTest {
    static final int FLUSH_DOCS = 1500;
    static final int DELETE_EVERY = 50;
    static final int READ_THREADS = 8;

    private static void check(boolean ok, String what) {
        if (!ok)
            throw new AssertionError(what);
    }

    /** Collects the merge report lines of the stored-fields writer. */
    static final class MergeLog extends InfoStream {
        final List<String> lines = new ArrayList<>();

        @Override
        public synchronized void message(String component, String message) {
            lines.add(message);
        }

        @Override
        public boolean isEnabled(String component) {
            return component.equals(FieldstoreStoredFieldsWriter.INFO_COMPONENT);
        }

        @Override
        public void close() {}

        synchronized int count(String what) {
            int n = 0;
            for (String l : lines)
                n += l.contains(what) ? 1 : 0;
            return n;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: LuceneCodecTest NGINX2JSON LOG WORKDIR");
            System.exit(2);
        }
        options();
        NginxDocuments docs = NginxDocuments.convert(args[0], args[1]);
        File work = new File(args[2]);
        for (FieldstoreStoredFieldsFormat.Mode mode : FieldstoreStoredFieldsFormat.Mode.values()) {
            File path = new File(work, "index-" + mode.name().toLowerCase());
            NginxDocuments.deleteTree(path);
            roundTrip(docs, path, mode);
            if (mode == FieldstoreStoredFieldsFormat.Mode.ZSTD)
                corruption(docs, path);
        }
        System.out.println("lucene codec test: OK");
    }

    /** Options.parse keeps defaults, takes every key, refuses what it cannot honour. */
    static void options() {
        FieldstoreStoredFieldsFormat.Options o = FieldstoreStoredFieldsFormat.Options.parse(
                "level=9,block=32768,docs=256,sub=4,sample=1048576,dict=32768");
        check(o.level == 9 && o.blockSize == 32768 && o.maxDocs == 256 && o.subBlocks == 4
                && o.sampleBytes == 1048576 && o.dictCapacity == 32768, "parse: " + o);
        check(FieldstoreStoredFieldsFormat.Options.parse("").toString().equals(
                FieldstoreStoredFieldsFormat.Options.defaults(
                        FieldstoreStoredFieldsFormat.Mode.ZSTD).toString()), "parse of nothing");
        for (String bad : new String[] {"level=20", "block=10", "sub=65", "dict=1", "sample=0",
                "mode=lucene_best_compression,sub=2", "mode=lz5", "colour=red", "level"}) {
            boolean refused = false;
            try {
                FieldstoreStoredFieldsFormat.Options.parse(bad);
            } catch (IllegalArgumentException e) {
                refused = true;
            }
            check(refused, "parse accepted '" + bad + "'");
        }
    }

    static IndexWriterConfig config(FieldstoreStoredFieldsFormat.Mode mode, InfoStream log) {
        IndexWriterConfig c = new IndexWriterConfig(Version.LUCENE_4_10_4, new KeywordAnalyzer());
        c.setCodec(new FieldstoreCodec(new FieldstoreStoredFieldsFormat(
                FieldstoreStoredFieldsFormat.Options.defaults(mode))));
        c.setMaxBufferedDocs(FLUSH_DOCS);
        c.setRAMBufferSizeMB(IndexWriterConfig.DISABLE_AUTO_FLUSH);
        TieredMergePolicy mp = new TieredMergePolicy();
        mp.setNoCFSRatio(0.0); // merged segments as plain files (the corruption test finds the .fsd)
        c.setMergePolicy(mp);
        c.setInfoStream(log);
        return c;
    }

    static void roundTrip(NginxDocuments docs, File path, FieldstoreStoredFieldsFormat.Mode mode)
            throws IOException, InterruptedException {
        MergeLog log = new MergeLog();
        try (Directory dir = FSDirectory.open(path);
             IndexWriter w = new IndexWriter(dir, config(mode, log))) {
            for (int i = 0; i < docs.size(); i++)
                w.addDocument(docs.document(i, Layout.ALL));
            w.commit();
            int segments = verify(dir, docs, null, mode + " after indexing");
            check(segments > 1, mode + ": expected several segments, got " + segments);

            w.forceMerge(1);
            w.commit();
            check(verify(dir, docs, null, mode + " after force-merge") == 1,
                    mode + ": force-merge left more than one segment");
            check(log.count("copied") >= 1, mode + ": the merge copied no blocks: " + log.lines);
            if (mode == FieldstoreStoredFieldsFormat.Mode.ZSTD)
                check(log.count("re-encoded the records") >= 1,
                        mode + ": the merge re-encoded nothing: " + log.lines);

            boolean[] deleted = new boolean[docs.size()];
            for (int i = 0; i < docs.size(); i += DELETE_EVERY) {
                w.deleteDocuments(new Term("_id", NginxDocuments.id(i)));
                deleted[i] = true;
            }
            w.forceMerge(1);
            w.commit();
            verify(dir, docs, deleted, mode + " after deletes and force-merge");
            readConcurrently(dir, docs, mode + " concurrent reads");
            System.out.println(mode + ": merge report: " + log.lines);
        }
        try (Directory dir = FSDirectory.open(path)) {
            CheckIndex.Status st = new CheckIndex(dir).checkIndex();
            check(st.clean, mode + ": CheckIndex found problems");
        }
    }

    /**
     * Reads every live document of the index back and compares it with the
     * expected values of the document its _id names.  Returns the number of
     * segments, after checking that each uses our reader.
     */
    static int verify(Directory dir, NginxDocuments docs, boolean[] deleted, String what)
            throws IOException {
        try (DirectoryReader r = DirectoryReader.open(dir)) {
            for (AtomicReaderContext leaf : r.leaves())
                check(((SegmentReader) leaf.reader()).getFieldsReader()
                        instanceof FieldstoreStoredFieldsReader,
                        what + ": a segment is not read by FieldstoreStoredFieldsReader");
            boolean[] seen = new boolean[docs.size()];
            Bits live = MultiFields.getLiveDocs(r);
            int n = 0;
            for (int d = 0; d < r.maxDoc(); d++) {
                if (live != null && !live.get(d))
                    continue;
                int i = compare(r, d, docs, what);
                check(!seen[i], what + ": _id " + NginxDocuments.id(i) + " twice");
                check(deleted == null || !deleted[i], what + ": deleted doc " + (i + 1) + " read");
                seen[i] = true;
                n++;
            }
            int want = 0;
            for (int i = 0; i < docs.size(); i++)
                want += deleted != null && deleted[i] ? 0 : 1;
            check(n == want, what + ": read " + n + " docs, want " + want);
            System.out.println(what + ": " + n + " docs read back equal, " + r.leaves().size()
                    + " segment(s)");
            return r.leaves().size();
        }
    }

    /** Reads doc d, checks it equals its _id's document; returns that index. */
    static int compare(DirectoryReader r, int d, NginxDocuments docs, String what)
            throws IOException {
        NginxDocuments.Collector c = new NginxDocuments.Collector();
        r.document(d, c);
        check(!c.values.isEmpty() && c.values.get(0).name.equals("_id"),
                what + ": doc " + d + " has no _id first");
        int i = Integer.parseInt((String) c.values.get(0).value) - 1;
        check(i >= 0 && i < docs.size(), what + ": doc " + d + " has _id out of range");
        List<Value> want = docs.expected(i, Layout.ALL);
        check(want.size() == c.values.size(), what + ": doc " + d + " has " + c.values.size()
                + " values, want " + want.size());
        for (int k = 0; k < want.size(); k++)
            check(want.get(k).sameAs(c.values.get(k)), what + ": doc " + d + " value " + k + ": "
                    + c.values.get(k) + ", want " + want.get(k));
        return i;
    }

    static void readConcurrently(Directory dir, NginxDocuments docs, String what)
            throws IOException, InterruptedException {
        try (DirectoryReader r = DirectoryReader.open(dir)) {
            Bits live = MultiFields.getLiveDocs(r);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread[] threads = new Thread[READ_THREADS];
            for (int t = 0; t < threads.length; t++) {
                final long seed = t;
                threads[t] = new Thread(() -> {
                    Random rnd = new Random(seed);
                    try {
                        for (int k = 0; k < 2000; k++) {
                            int d = rnd.nextInt(r.maxDoc());
                            if (live == null || live.get(d))
                                compare(r, d, docs, what);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                threads[t].start();
            }
            for (Thread t : threads)
                t.join();
            if (failure.get() != null)
                throw new AssertionError(what + ": " + failure.get(), failure.get());
            System.out.println(what + ": " + READ_THREADS + " threads read back equal");
        }
    }

    /** Flips bit 0 of the byte at `offset` of `file` in place. */
    static void flipBit(File file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file, "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 1);
        }
    }

    static File onlyFile(File dir, String ext) {
        File found = null;
        for (File f : dir.listFiles()) {
            if (f.getName().endsWith("." + ext)) {
                check(found == null, "several ." + ext + " files in " + dir);
                found = f;
            }
        }
        check(found != null, "no ." + ext + " file in " + dir);
        return found;
    }

    static void corruption(NginxDocuments docs, File path) throws IOException {
        File fsd = onlyFile(path, FieldstoreStoredFieldsFormat.DATA_EXTENSION);
        flipBit(fsd, fsd.length() / 2);
        int failed = 0, equal = 0;
        try (Directory dir = FSDirectory.open(path); DirectoryReader r = DirectoryReader.open(dir)) {
            for (int d = 0; d < r.maxDoc(); d++) {
                try {
                    compare(r, d, docs, "flipped bit");
                    equal++;
                } catch (CorruptIndexException e) {
                    if (failed++ == 0)
                        System.out.println("flipped bit: doc " + d + ": " + e.getMessage());
                }
            }
            check(failed >= 1, "a flipped bit in " + fsd + " went unnoticed");
            check(failed <= 128, "a flipped bit failed " + failed + " docs, more than one block");
            boolean caught = false;
            try {
                ((SegmentReader) r.leaves().get(0).reader()).checkIntegrity();
            } catch (CorruptIndexException e) {
                caught = true;
            }
            check(caught, "checkIntegrity() passed a flipped bit");
        }
        System.out.println("flipped bit: " + failed + " docs refused with CorruptIndexException, "
                + equal + " read back equal");
        flipBit(fsd, fsd.length() / 2);

        File dict = onlyFile(path, FieldstoreStoredFieldsFormat.DICT_EXTENSION);
        flipBit(dict, dict.length() / 2);
        boolean refused = false;
        try (Directory dir = FSDirectory.open(path); DirectoryReader r = DirectoryReader.open(dir)) {
            r.document(0);
        } catch (CorruptIndexException e) {
            refused = true;
            System.out.println("flipped dictionary bit: " + e.getMessage());
        }
        check(refused, "a flipped bit in " + dict + " went unnoticed");
        flipBit(dict, dict.length() / 2);
    }

}
