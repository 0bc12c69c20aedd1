/*
 * LuceneStoredFieldsBench: stored-fields size and one-document fetch rate of
 * the fieldstore Lucene codec against Lucene 4.10's own stored fields, in
 * one JVM, on the bundled nginx sample.  bench/lucene/run.sh runs it and
 * writes results/lucene.md; `--help` prints the options.
 *
 * Formats (all over Lucene410Codec, only the stored fields differ):
 *   lz4-16k      Lucene41StoredFieldsFormat: CompressingStoredFieldsFormat,
 *                CompressionMode.FAST (LZ4), 16 KiB chunks (4.10's default)
 *   deflate-60k  CompressingStoredFieldsFormat, CompressionMode.
 *                HIGH_COMPRESSION (DEFLATE), 60 KiB chunks (Lucene50's
 *                BEST_COMPRESSION chunk, the Elasticsearch 2-7.9 mode)
 *   fs-zstd      FieldstoreCodec() as registered: ZSTD, zstd level 9,
 *                dictionary trained per segment, 32 KiB blocks, one-document
 *                partial decode (--variants adds rows with other Options)
 *   fs-lucene-bc FieldstoreCodec, LUCENE_BEST_COMPRESSION: the library's
 *                copy of Lucene 8.7 / Elasticsearch 7.10 BEST_COMPRESSION
 *                (DEFLATE, 480 KiB chunks, preset dictionary = chunk head)
 * Each index: every document added by one IndexWriter (16 MB RAM buffer, no
 * compound files), force-merged to one segment, closed.  Size: the bytes of
 * the segment's stored-fields files (.fdt+.fdx, or .fsd+.fsx+.fsdict, the
 * dictionary included).  Every document is then read back and compared
 * value by value.
 * Fetch: the same random doc ids (fixed seed) for every format,
 * IndexReader.document(id) one at a time on one thread; after --warmup
 * passes, --repeats rounds in which every format runs once, in an order that
 * rotates and reverses from round to round (drift and JIT order cancel).
 * Rate = ids / thread CPU time (ThreadMXBean), with wall time beside it; the
 * table gives median [min-max] over rounds and ratios of medians.  The sum
 * of the fetched values' lengths is printed per format (the same for all
 * formats: the work was done).
 */
package org.fieldstore.lucene.bench;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.Supplier;

import org.apache.lucene.analysis.core.KeywordAnalyzer;
import org.apache.lucene.codecs.Codec;
import org.apache.lucene.codecs.lucene410.Lucene410Codec;
import org.apache.lucene.document.Document;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.Version;
import org.fieldstore.lucene.FieldstoreCodec;
import org.fieldstore.lucene.FieldstoreStoredFieldsFormat;
import org.fieldstore.lucene.sample.NginxDocuments;
import org.fieldstore.lucene.sample.NginxDocuments.Layout;
import org.fieldstore.lucene.sample.NginxDocuments.Value;

public final class LuceneStoredFieldsBench {
    static final long SEED = 42;

    static final class Format {
        final String name, what;
        final Supplier<Codec> codec;
        final String[] extensions;
        long storedBytes, indexBytes, indexCpuNs, checksum;
        final List<double[]> runs = new ArrayList<>(); /* {cpu rate, wall rate} */
        DirectoryReader reader;

        Format(String name, String what, Supplier<Codec> codec, String... extensions) {
            this.name = name;
            this.what = what;
            this.codec = codec;
            this.extensions = extensions;
        }
    }

    /** Extra fieldstore rows (--variants), as Options.parse specs. */
    static final List<String> variants = new ArrayList<>();

    static List<Format> formats() {
        List<Format> f = new ArrayList<>();
        f.add(new Format("lz4-16k", "Lucene 4.10 LZ4 16 KiB (Lucene41StoredFieldsFormat)",
                Lucene410Codec::new, "fdt", "fdx"));
        f.add(new Format("deflate-60k",
                "Lucene 4.10 DEFLATE 60 KiB (CompressingStoredFieldsFormat HIGH_COMPRESSION)",
                Deflate60kCodec::new, "fdt", "fdx"));
        f.add(new Format("fs-zstd", "fieldstore ZSTD level 9, per-segment dictionary, 32 KiB (JNI)",
                () -> new FieldstoreCodec(), "fsd", "fsx", "fsdict"));
        f.add(new Format("fs-lucene-bc",
                "fieldstore lucene_best_compression, ES 7.10 layout, 480 KiB (JNI)",
                () -> new FieldstoreCodec(new FieldstoreStoredFieldsFormat(
                        FieldstoreStoredFieldsFormat.Options.defaults(
                                FieldstoreStoredFieldsFormat.Mode.LUCENE_BEST_COMPRESSION))),
                "fsd", "fsx", "fsdict"));
        for (String spec : variants) {
            FieldstoreStoredFieldsFormat.Options o = FieldstoreStoredFieldsFormat.Options.parse(spec);
            f.add(new Format("fs[" + spec + "]", "fieldstore " + o,
                    () -> new FieldstoreCodec(new FieldstoreStoredFieldsFormat(o)),
                    "fsd", "fsx", "fsdict"));
        }
        return f;
    }

    static final String USAGE = String.join("\n",
            "usage: LuceneStoredFieldsBench --nginx2json BIN --log FILE --work DIR --out FILE.md",
            "         [--layouts source,fields] [--fetches N] [--repeats R] [--warmup W]",
            "         [--variants SPEC;SPEC...]",
            "Stored-fields bytes and one-document fetch rate (docs per CPU second) of",
            "Lucene 4.10 LZ4 16 KiB, DEFLATE 60 KiB and the fieldstore codec (ZSTD with a",
            "per-segment dictionary; lucene_best_compression) in one JVM.",
            "  --layouts   document layouts: source (_id + _source, as Elasticsearch",
            "              stores), fields (_id + 17 typed fields); default source,fields",
            "  --fetches   random doc ids fetched per format per round (default 20000)",
            "  --repeats   alternating rounds (default 7)",
            "  --warmup    untimed passes per format first (default 2)",
            "  --variants  extra fieldstore rows, ';'-separated Options specs, e.g.",
            "              'level=9;block=32768,sub=6' (keys: mode level block docs sub",
            "              sample dict; FieldstoreStoredFieldsFormat.Options.parse)",
            "  --work      scratch folder for the indices (emptied first)",
            "  --out       the Markdown report (results/lucene.md)");

    public static void main(String[] args) throws Exception {
        String nginx2json = null, log = null, work = null, out = null;
        String layouts = "source,fields";
        int fetches = 20000, repeats = 7, warmup = 2;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println(USAGE);
                return;
            }
            if (i + 1 >= args.length)
                usage("option " + a + " needs a value");
            String v = args[++i];
            switch (a) {
            case "--nginx2json": nginx2json = v; break;
            case "--log": log = v; break;
            case "--work": work = v; break;
            case "--out": out = v; break;
            case "--layouts": layouts = v; break;
            case "--fetches": fetches = positive(a, v); break;
            case "--repeats": repeats = positive(a, v); break;
            case "--warmup": warmup = Integer.parseInt(v); break;
            case "--variants":
                for (String spec : v.split(";"))
                    if (!spec.isBlank())
                        variants.add(spec.trim());
                break;
            default: usage("unknown option " + a);
            }
        }
        if (nginx2json == null || log == null || work == null || out == null)
            usage("--nginx2json, --log, --work and --out are required");
        NginxDocuments docs = NginxDocuments.convert(nginx2json, log);
        StringBuilder md = new StringBuilder();
        header(md, docs, log, fetches, repeats, warmup);
        for (String l : layouts.split(",")) {
            Layout layout = Layout.valueOf(l.trim().toUpperCase(Locale.ROOT));
            List<Format> fs = formats();
            for (Format f : fs)
                build(f, docs, layout, new File(work, l + "-" + f.name));
            measure(fs, docs, fetches, repeats, warmup);
            report(md, layout, fs, docs.size(), fetches);
            for (Format f : fs)
                f.reader.close();
        }
        Files.write(new File(out).toPath(), md.toString().getBytes(StandardCharsets.UTF_8));
        System.out.print(md);
    }

    static int positive(String opt, String v) {
        int n = Integer.parseInt(v);
        if (n <= 0)
            usage(opt + " must be > 0");
        return n;
    }

    static void usage(String why) {
        System.err.println("LuceneStoredFieldsBench: " + why + "\n" + USAGE);
        System.exit(2);
    }

    static long cpuNs() {
        return THREADS.getCurrentThreadCpuTime();
    }

    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** Indexes, force-merges, measures the files and checks every document. */
    static void build(Format f, NginxDocuments docs, Layout layout, File path) throws IOException {
        NginxDocuments.deleteTree(path);
        IndexWriterConfig c = new IndexWriterConfig(Version.LUCENE_4_10_4, new KeywordAnalyzer());
        c.setCodec(f.codec.get());
        c.setUseCompoundFile(false);
        TieredMergePolicy mp = new TieredMergePolicy();
        mp.setNoCFSRatio(0.0);
        c.setMergePolicy(mp);
        c.setMergeScheduler(new SerialMergeScheduler()); // merges on this thread: its CPU time
        try (Directory dir = FSDirectory.open(path)) {
            long t0 = cpuNs();
            try (IndexWriter w = new IndexWriter(dir, c)) {
                for (int i = 0; i < docs.size(); i++)
                    w.addDocument(docs.document(i, layout));
                w.forceMerge(1);
            }
            f.indexCpuNs = cpuNs() - t0;
        }
        f.storedBytes = 0;
        f.indexBytes = 0;
        for (File file : path.listFiles()) {
            f.indexBytes += file.length();
            for (String ext : f.extensions)
                if (file.getName().endsWith("." + ext))
                    f.storedBytes += file.length();
        }
        f.reader = DirectoryReader.open(FSDirectory.open(path));
        if (f.reader.leaves().size() != 1 || f.reader.maxDoc() != docs.size())
            throw new IllegalStateException(f.name + ": " + f.reader.leaves().size()
                    + " segments, " + f.reader.maxDoc() + " docs");
        for (int d = 0; d < docs.size(); d++) {
            NginxDocuments.Collector got = new NginxDocuments.Collector();
            f.reader.document(d, got);
            List<Value> want = docs.expected(d, layout);
            boolean same = want.size() == got.values.size();
            for (int k = 0; same && k < want.size(); k++)
                same = want.get(k).sameAs(got.values.get(k));
            if (!same)
                throw new IllegalStateException(f.name + ": doc " + d + " reads back as "
                        + got.values + ", want " + want);
        }
    }

    /** One fetch pass over `ids`; returns {cpu ns, wall ns} and adds to the checksum. */
    static long[] fetchPass(Format f, int[] ids) throws IOException {
        long sum = 0;
        long w0 = System.nanoTime(), c0 = cpuNs();
        for (int id : ids) {
            Document d = f.reader.document(id);
            for (IndexableField field : d.getFields()) {
                BytesRef b = field.binaryValue();
                String s = field.stringValue();
                sum += b != null ? b.length : s != null ? s.length() : 1;
            }
        }
        long c = cpuNs() - c0, w = System.nanoTime() - w0;
        f.checksum = sum;
        return new long[] {c, w};
    }

    static void measure(List<Format> fs, NginxDocuments docs, int fetches, int repeats, int warmup)
            throws IOException {
        Random rnd = new Random(SEED);
        int[] ids = new int[fetches];
        for (int i = 0; i < fetches; i++)
            ids[i] = rnd.nextInt(docs.size());
        for (int w = 0; w < warmup; w++)
            for (Format f : fs)
                fetchPass(f, ids);
        int n = fs.size();
        for (int r = 0; r < repeats; r++) {
            for (int k = 0; k < n; k++) {
                int j = (r + k) % n;
                if (r % 2 == 1)
                    j = n - 1 - j;
                Format f = fs.get(j);
                long[] t = fetchPass(f, ids);
                f.runs.add(new double[] {fetches / (t[0] / 1e9), fetches / (t[1] / 1e9)});
            }
        }
    }

    static double[] stats(List<double[]> runs, int col) {
        double[] v = new double[runs.size()];
        for (int i = 0; i < v.length; i++)
            v[i] = runs.get(i)[col];
        Arrays.sort(v);
        double med = v.length % 2 == 1 ? v[v.length / 2]
                : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        return new double[] {med, v[0], v[v.length - 1]};
    }

    static void header(StringBuilder md, NginxDocuments docs, String log, int fetches,
                       int repeats, int warmup) {
        md.append("# Lucene stored fields: fieldstore codec vs Lucene 4.10\n\n");
        md.append("Written by `bench/lucene/run.sh` (`LuceneStoredFieldsBench`); see "
                + "docs/lucene.md. Do not edit by hand.\n\n");
        md.append(String.format(Locale.ROOT,
                "- data: %s, %d documents (nginx2json)\n- JVM: %s %s; Lucene %s (Debian "
                        + "liblucene4.10-java)\n- fetch: %d random doc ids (seed %d) per "
                        + "format per round, `IndexReader.document(id)` on one thread, %d "
                        + "warm-up passes, %d alternating rounds; docs/s = ids / thread CPU "
                        + "time, median [min-max] over rounds, wall-clock beside it\n"
                        + "- size: stored-fields files of the one segment after "
                        + "`forceMerge(1)` (.fdt+.fdx; .fsd+.fsx+.fsdict, dictionary "
                        + "included)\n\n",
                new File(log).getName(), docs.size(), System.getProperty("java.vm.name"),
                System.getProperty("java.version"), Version.LATEST,
                fetches, SEED, warmup, repeats));
    }

    static void report(StringBuilder md, Layout layout, List<Format> fs, int ndocs, int fetches) {
        Format deflate = fs.get(1), lz4 = fs.get(0);
        double deflateCpu = stats(deflate.runs, 0)[0];
        md.append("## Layout `").append(layout.name().toLowerCase(Locale.ROOT)).append("`\n\n");
        md.append(layout == Layout.SOURCE
                ? "Each document: `_id` and `_source` (the JSON line, a binary stored field), "
                        + "as Elasticsearch stores it.\n\n"
                : "Each document: `_id` and the 17 fields as typed stored fields.\n\n");
        md.append("| format | stored-field bytes | vs deflate-60k | vs lz4-16k | index bytes "
                + "| index+merge CPU s | fetch docs/s (CPU) | vs deflate-60k | fetch docs/s "
                + "(wall) | checksum |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (Format f : fs) {
            double[] c = stats(f.runs, 0), w = stats(f.runs, 1);
            md.append(String.format(Locale.ROOT,
                    "| %s: %s | %,d | %.3f | %.3f | %,d | %.2f | %,.0f [%,.0f-%,.0f] | %.2fx "
                            + "| %,.0f [%,.0f-%,.0f] | %d |\n",
                    f.name, f.what, f.storedBytes, (double) f.storedBytes / deflate.storedBytes,
                    (double) f.storedBytes / lz4.storedBytes, f.indexBytes, f.indexCpuNs / 1e9,
                    c[0], c[1], c[2], c[0] / deflateCpu, w[0], w[1], w[2], f.checksum));
        }
        Format zstd = fs.get(2);
        double less = 1.0 - (double) zstd.storedBytes / deflate.storedBytes;
        double faster = stats(zstd.runs, 0)[0] / deflateCpu;
        md.append(String.format(Locale.ROOT,
                "\nRead back: %d of %d documents equal, value by value, in every format.  "
                        + "Targets (fs-zstd vs deflate-60k): >= 15%% fewer stored-field "
                        + "bytes: %.1f%% fewer, %s; one-doc fetch >= 3x: %.2fx, %s.\n\n",
                ndocs, ndocs, 100 * less, less >= 0.15 ? "met" : "NOT met", faster,
                faster >= 3 ? "met" : "NOT met"));
    }

}
