/*
 * StoredRecord: how one Lucene document's stored fields become the bytes of
 * one fieldstore document (the unit a block holds), and back.
 *
 * A record is the document's stored fields in the order they were added,
 * each as
 *   vlong  (field number << 3) | type
 *   value  STRING: vint length + UTF-8 bytes;  BINARY: vint length + bytes;
 *          INT: zig-zag vint;  LONG: zig-zag vlong;
 *          FLOAT: Float.floatToIntBits as 4 bytes;  DOUBLE: 8 bytes
 * with no count in front: the record ends where the document does (the
 * block keeps each document's length).  The header word is Lucene 4.10
 * CompressingStoredFieldsWriter's (field number << TYPE_BITS | type); the
 * numbers are zig-zag varints (DataOutput.writeZInt) where Lucene 4.10
 * writes fixed 4 and 8 bytes.
 *
 * Field numbers are the segment's (FieldInfos), so a record can be copied
 * unchanged into another segment only when both number their fields alike
 * (MergeState.matchingSegmentReaders).
 */
package org.fieldstore.lucene;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.apache.lucene.index.CorruptIndexException;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.FieldInfos;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.index.StoredFieldVisitor;
import org.apache.lucene.store.ByteArrayDataInput;
import org.apache.lucene.store.DataOutput;
import org.apache.lucene.util.ArrayUtil;
import org.apache.lucene.util.BytesRef;

final class StoredRecord {
    static final int STRING = 0, BINARY = 1, INT = 2, LONG = 3, FLOAT = 4, DOUBLE = 5;
    static final int TYPE_BITS = 3, TYPE_MASK = 7;

    private StoredRecord() {}

    /** A growable byte array written as a Lucene DataOutput. */
    static final class Buffer extends DataOutput {
        byte[] bytes = new byte[1024];
        int length;

        void ensure(int extra) {
            if (length + extra > bytes.length)
                bytes = ArrayUtil.grow(bytes, length + extra);
        }

        @Override
        public void writeByte(byte b) {
            ensure(1);
            bytes[length++] = b;
        }

        @Override
        public void writeBytes(byte[] b, int off, int len) {
            ensure(len);
            System.arraycopy(b, off, bytes, length, len);
            length += len;
        }
    }

    /**
     * Appends one stored field to `out`.  The value's kind is taken as Lucene
     * 4.10 CompressingStoredFieldsWriter.writeField takes it: a number, else
     * binary bytes, else a string; anything else is IllegalArgumentException.
     */
    static void writeField(Buffer out, FieldInfo info, IndexableField field) throws IOException {
        Number number = field.numericValue();
        if (number != null) {
            if (number instanceof Byte || number instanceof Short || number instanceof Integer) {
                out.writeVLong(header(info, INT));
                out.writeZInt(number.intValue());
            } else if (number instanceof Long) {
                out.writeVLong(header(info, LONG));
                out.writeZLong(number.longValue());
            } else if (number instanceof Float) {
                out.writeVLong(header(info, FLOAT));
                out.writeInt(Float.floatToIntBits(number.floatValue()));
            } else if (number instanceof Double) {
                out.writeVLong(header(info, DOUBLE));
                out.writeLong(Double.doubleToLongBits(number.doubleValue()));
            } else {
                throw new IllegalArgumentException("cannot store numeric type "
                        + number.getClass() + " of field " + info.name);
            }
            return;
        }
        BytesRef bytes = field.binaryValue();
        if (bytes != null) {
            out.writeVLong(header(info, BINARY));
            out.writeVInt(bytes.length);
            out.writeBytes(bytes.bytes, bytes.offset, bytes.length);
            return;
        }
        String string = field.stringValue();
        if (string == null)
            throw new IllegalArgumentException("field " + info.name
                    + " is stored but has no string, binary or numeric value");
        byte[] utf8 = string.getBytes(StandardCharsets.UTF_8);
        out.writeVLong(header(info, STRING));
        out.writeVInt(utf8.length);
        out.writeBytes(utf8, 0, utf8.length);
    }

    private static long header(FieldInfo info, int type) {
        return ((long) info.number << TYPE_BITS) | type;
    }

    /**
     * Calls `visitor` for the fields of the record rec[off, off+len) in
     * order, as StoredFieldVisitor's contract says (needsField first; NO
     * skips the value, STOP ends the visit).  A malformed record (unknown
     * field number or type, a length past the end) is CorruptIndexException
     * naming `resource`.
     */
    static void visit(byte[] rec, int off, int len, FieldInfos infos, StoredFieldVisitor visitor,
                      String resource) throws IOException {
        try {
            walk(rec, off, len, infos, visitor, resource);
        } catch (IndexOutOfBoundsException e) {
            // a varint or fixed-size value running past the buffer
            throw new CorruptIndexException("stored record truncated (resource=" + resource + ")",
                    e);
        }
    }

    private static void walk(byte[] rec, int off, int len, FieldInfos infos,
                             StoredFieldVisitor visitor, String resource) throws IOException {
        ByteArrayDataInput in = new ByteArrayDataInput(rec, off, len);
        int end = off + len;
        while (in.getPosition() < end) {
            long word = in.readVLong();
            int type = (int) (word & TYPE_MASK);
            long number = word >>> TYPE_BITS;
            FieldInfo info = number <= Integer.MAX_VALUE ? infos.fieldInfo((int) number) : null;
            if (info == null || type > DOUBLE)
                throw new CorruptIndexException("stored field number " + number + " type " + type
                        + " unknown (resource=" + resource + ")");
            switch (visitor.needsField(info)) {
            case YES:
                readValue(in, end, type, info, visitor, rec, resource);
                break;
            case NO:
                skipValue(in, end, type, resource);
                break;
            case STOP:
                return;
            }
        }
        if (in.getPosition() != end)
            throw new CorruptIndexException("stored record overruns its document (resource="
                    + resource + ")");
    }

    private static int length(ByteArrayDataInput in, int end, String resource) throws IOException {
        int n = in.readVInt();
        if (n < 0 || n > end - in.getPosition())
            throw new CorruptIndexException("stored value length " + n
                    + " past the end of its document (resource=" + resource + ")");
        return n;
    }

    private static void readValue(ByteArrayDataInput in, int end, int type, FieldInfo info,
                                  StoredFieldVisitor v, byte[] rec, String resource)
            throws IOException {
        switch (type) {
        case STRING: {
            int n = length(in, end, resource);
            v.stringField(info, new String(rec, in.getPosition(), n, StandardCharsets.UTF_8));
            in.skipBytes(n);
            break;
        }
        case BINARY: {
            int n = length(in, end, resource);
            byte[] b = new byte[n];
            in.readBytes(b, 0, n);
            v.binaryField(info, b);
            break;
        }
        case INT:
            v.intField(info, in.readZInt());
            break;
        case LONG:
            v.longField(info, in.readZLong());
            break;
        case FLOAT:
            v.floatField(info, Float.intBitsToFloat(in.readInt()));
            break;
        default:
            v.doubleField(info, Double.longBitsToDouble(in.readLong()));
            break;
        }
    }

    private static void skipValue(ByteArrayDataInput in, int end, int type, String resource)
            throws IOException {
        switch (type) {
        case STRING:
        case BINARY:
            in.skipBytes(length(in, end, resource));
            break;
        case INT:
            in.readZInt();
            break;
        case LONG:
            in.readZLong();
            break;
        case FLOAT:
            in.skipBytes(4);
            break;
        default:
            in.skipBytes(8);
            break;
        }
    }
}
