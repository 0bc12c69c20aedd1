/*
 * Deflate60kCodec: Lucene 4.10's codec with DEFLATE stored fields in 60 KiB
 * chunks (CompressingStoredFieldsFormat, CompressionMode.HIGH_COMPRESSION,
 * chunkSize 61440: the chunk Lucene 5's BEST_COMPRESSION mode and
 * Elasticsearch 2.0-7.9's index.codec=best_compression use), the reference
 * the benchmark compares the fieldstore codec with.  Registered by SPI in
 * the benchmark's jar, so its indices reopen by name.
 */
package org.fieldstore.lucene.bench;

import org.apache.lucene.codecs.FilterCodec;
import org.apache.lucene.codecs.StoredFieldsFormat;
import org.apache.lucene.codecs.compressing.CompressingStoredFieldsFormat;
import org.apache.lucene.codecs.compressing.CompressionMode;
import org.apache.lucene.codecs.lucene410.Lucene410Codec;

public final class Deflate60kCodec extends FilterCodec {
    static final int CHUNK_SIZE = 60 * 1024;

    private final StoredFieldsFormat storedFields = new CompressingStoredFieldsFormat(
            "Deflate60kStoredFields", CompressionMode.HIGH_COMPRESSION, CHUNK_SIZE);

    public Deflate60kCodec() {
        super("Deflate60k410", new Lucene410Codec());
    }

    @Override
    public StoredFieldsFormat storedFieldsFormat() {
        return storedFields;
    }
}
