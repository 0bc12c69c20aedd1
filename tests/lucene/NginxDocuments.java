/*
 * NginxDocuments: the bundled nginx sample as Lucene documents, for the
 * stored-fields test (LuceneCodecTest) and benchmark (bench/lucene).
 *
 * The log is converted by the project's own converter (datasets/nginx2json:
 * one flat JSON object per line, the 17 fields of DESIGN.md §2), run as a
 * child process; each line becomes one document in one of three layouts:
 *   SOURCE  _id (line number, indexed + stored) and _source (the JSON
 *           line's bytes, a stored binary field): what Elasticsearch stores
 *   FIELDS  _id and the 17 fields as typed stored fields: strings, status
 *           as int, body_bytes_sent as long, request_time as float,
 *           upstream_response_time as double (all four numeric kinds)
 *   ALL     _id, _source and the 17 typed fields
 * expected() gives the values a reader must return, in order, so a test can
 * compare what comes back value by value and byte by byte.
 */
package org.fieldstore.lucene.sample;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.StoredFieldVisitor;

public final class NginxDocuments {
    public enum Layout { SOURCE, FIELDS, ALL }

    /** One stored value: its field name and a String, byte[] or boxed number. */
    public static final class Value {
        public final String name;
        public final Object value;

        public Value(String name, Object value) {
            this.name = name;
            this.value = value;
        }

        public boolean sameAs(Value o) {
            if (!name.equals(o.name))
                return false;
            if (value instanceof byte[])
                return o.value instanceof byte[] && Arrays.equals((byte[]) value, (byte[]) o.value);
            return value.getClass() == o.value.getClass() && value.equals(o.value);
        }

        @Override
        public String toString() {
            Object v = value instanceof byte[] ? new String((byte[]) value, StandardCharsets.UTF_8)
                    : value;
            return name + "=" + v + " (" + value.getClass().getSimpleName() + ")";
        }
    }

    private final List<String> lines;

    private NginxDocuments(List<String> lines) {
        this.lines = lines;
    }

    /**
     * Runs `nginx2json LOG` and keeps its output lines.  IOException when the
     * converter fails or reports unparsable lines (exit status != 0).
     */
    public static NginxDocuments convert(String nginx2json, String log) throws IOException {
        Process p = new ProcessBuilder(nginx2json, log)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(
                new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null;)
                lines.add(line);
        }
        try {
            int rc = p.waitFor();
            if (rc != 0)
                throw new IOException(nginx2json + " " + log + " exited with " + rc);
        } catch (InterruptedException e) {
            throw new IOException(e);
        }
        if (lines.isEmpty())
            throw new IOException(nginx2json + " wrote no documents for " + log);
        return new NginxDocuments(lines);
    }

    public int size() {
        return lines.size();
    }

    /** The _id of document i (its 1-based line number, as nginx2json's bulk mode). */
    public static String id(int i) {
        return Integer.toString(i + 1);
    }

    /** The values document i must read back as, in stored order. */
    public List<Value> expected(int i, Layout layout) {
        List<Value> out = new ArrayList<>();
        out.add(new Value("_id", id(i)));
        String line = lines.get(i);
        if (layout != Layout.FIELDS)
            out.add(new Value("_source", line.getBytes(StandardCharsets.UTF_8)));
        if (layout != Layout.SOURCE)
            for (String[] kv : FlatJson.parse(line))
                out.add(new Value(kv[0], typed(kv[0], kv[1])));
        return out;
    }

    private static Object typed(String name, String raw) {
        switch (name) {
        case "status":
            return Integer.valueOf(raw);
        case "body_bytes_sent":
            return Long.valueOf(raw);
        case "request_time":
            return Float.valueOf(raw);
        case "upstream_response_time":
            return Double.valueOf(raw);
        default:
            return raw;
        }
    }

    /** Document i for IndexWriter.addDocument. */
    public Document document(int i, Layout layout) {
        Document doc = new Document();
        for (Value v : expected(i, layout)) {
            Object o = v.value;
            if (v.name.equals("_id"))
                doc.add(new StringField("_id", (String) o, Field.Store.YES));
            else if (o instanceof byte[])
                doc.add(new StoredField(v.name, (byte[]) o));
            else if (o instanceof Integer)
                doc.add(new StoredField(v.name, (Integer) o));
            else if (o instanceof Long)
                doc.add(new StoredField(v.name, (Long) o));
            else if (o instanceof Float)
                doc.add(new StoredField(v.name, (Float) o));
            else if (o instanceof Double)
                doc.add(new StoredField(v.name, (Double) o));
            else
                doc.add(new StoredField(v.name, (String) o));
        }
        return doc;
    }

    /** Deletes a scratch folder and everything in it (missing is fine). */
    public static void deleteTree(File f) {
        File[] kids = f.listFiles();
        if (kids != null)
            for (File k : kids)
                deleteTree(k);
        f.delete();
    }

    /** A visitor that collects every stored value, in order. */
    public static final class Collector extends StoredFieldVisitor {
        public final List<Value> values = new ArrayList<>();

        @Override
        public Status needsField(FieldInfo fieldInfo) {
            return Status.YES;
        }

        @Override
        public void binaryField(FieldInfo f, byte[] value) {
            values.add(new Value(f.name, value));
        }

        @Override
        public void stringField(FieldInfo f, String value) {
            values.add(new Value(f.name, value));
        }

        @Override
        public void intField(FieldInfo f, int value) {
            values.add(new Value(f.name, value));
        }

        @Override
        public void longField(FieldInfo f, long value) {
            values.add(new Value(f.name, value));
        }

        @Override
        public void floatField(FieldInfo f, float value) {
            values.add(new Value(f.name, value));
        }

        @Override
        public void doubleField(FieldInfo f, double value) {
            values.add(new Value(f.name, value));
        }
    }

    /**
     * The flat JSON objects nginx2json writes: {"key":value,...} with string
     * values (the escapes of RFC 8259 §7) and number values (kept as their
     * digits).  Returns [key, value] pairs in order; IllegalArgumentException
     * on anything else.
     */
    static final class FlatJson {
        private final String s;
        private int pos;

        private FlatJson(String s) {
            this.s = s;
        }

        static List<String[]> parse(String s) {
            FlatJson p = new FlatJson(s);
            List<String[]> out = new ArrayList<>();
            p.expect('{');
            if (p.peek() == '}')
                return out;
            while (true) {
                String key = p.string();
                p.expect(':');
                String value = p.peek() == '"' ? p.string() : p.number();
                out.add(new String[] {key, value});
                char c = p.next();
                if (c == '}')
                    return out;
                if (c != ',')
                    throw p.error("',' or '}'");
            }
        }

        private IllegalArgumentException error(String want) {
            return new IllegalArgumentException("expected " + want + " at " + pos + " in " + s);
        }

        private char peek() {
            if (pos >= s.length())
                throw error("more input");
            return s.charAt(pos);
        }

        private char next() {
            char c = peek();
            pos++;
            return c;
        }

        private void expect(char c) {
            if (next() != c)
                throw error("'" + c + "'");
        }

        private String number() {
            int start = pos;
            while (pos < s.length() && "+-0123456789.eE".indexOf(s.charAt(pos)) >= 0)
                pos++;
            if (pos == start)
                throw error("a number");
            return s.substring(start, pos);
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            for (char c; (c = next()) != '"';) {
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                case '"': case '\\': case '/': b.append(e); break;
                case 'b': b.append('\b'); break;
                case 'f': b.append('\f'); break;
                case 'n': b.append('\n'); break;
                case 'r': b.append('\r'); break;
                case 't': b.append('\t'); break;
                case 'u':
                    if (pos + 4 > s.length())
                        throw error("4 hex digits");
                    b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                    pos += 4;
                    break;
                default:
                    throw error("an escape");
                }
            }
            return b.toString();
        }
    }
}
