/*
 * FieldstoreCodec: Lucene 4.10's default codec (Lucene410Codec) with its
 * stored fields replaced by FieldstoreStoredFieldsFormat; everything else
 * (postings, doc values, norms, term vectors, segment and field infos, live
 * docs) is Lucene410Codec's.
 *
 * Registered through Lucene's SPI (META-INF/services/
 * org.apache.lucene.codecs.Codec) under the name "Fieldstore410", so an index
 * written with it opens with Codec.forName("Fieldstore410") from the
 * segments file.  The no-argument constructor is the one SPI uses: ZSTD mode.
 * The other constructor writes new segments in another mode; any instance
 * reads both modes, since each segment's .fsdict says how it was written.
 *
 * Use: new IndexWriterConfig(version, analyzer).setCodec(new FieldstoreCodec()).
 */
package org.fieldstore.lucene;

import org.apache.lucene.codecs.FilterCodec;
import org.apache.lucene.codecs.StoredFieldsFormat;
import org.apache.lucene.codecs.lucene410.Lucene410Codec;

public final class FieldstoreCodec extends FilterCodec {
    /** The SPI name, written to every segment's info. */
    public static final String NAME = "Fieldstore410";

    private final FieldstoreStoredFieldsFormat storedFields;

    public FieldstoreCodec() {
        this(new FieldstoreStoredFieldsFormat());
    }

    public FieldstoreCodec(FieldstoreStoredFieldsFormat storedFields) {
        super(NAME, new Lucene410Codec());
        this.storedFields = storedFields;
    }

    @Override
    public StoredFieldsFormat storedFieldsFormat() {
        return storedFields;
    }
}
