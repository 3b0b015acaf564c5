/*
 * avro_sample_writer.c - writes the Avro container files that
 * tests/integration/avro-readers.sh has python3-avro and avro-c read back.
 *
 *   avro_sample_writer DIR
 *
 * types_null.avro, types_deflate.avro: 1000 objects of a record with every
 * Avro type (schema below), values a function of the row number i (the
 * same functions are in avro-read.py and avro_read_avroc.c).
 *
 * data.parquet, manifest.avro, manifest-list.avro: a Parquet data file
 * written by the Parquet writer, an Iceberg v2 manifest whose one entry
 * holds that file's statistics, and a manifest list pointing at the
 * manifest.  expected.json says what the readers must find in them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro_writer.h"
#include "iceberg_avro_schemas.h"
#include "parquet_writer.h"

static const char types_schema[] =
    "{\"type\":\"record\",\"name\":\"sample\",\"namespace\":\"loams.test\",\"fields\":["
    "{\"name\":\"n\",\"type\":\"null\",\"field-id\":1},"
    "{\"name\":\"b\",\"type\":\"boolean\",\"field-id\":2},"
    "{\"name\":\"i\",\"type\":\"int\",\"field-id\":3},"
    "{\"name\":\"l\",\"type\":\"long\",\"field-id\":4},"
    "{\"name\":\"f\",\"type\":\"float\",\"field-id\":5},"
    "{\"name\":\"d\",\"type\":\"double\",\"field-id\":6},"
    "{\"name\":\"by\",\"type\":\"bytes\",\"field-id\":7},"
    "{\"name\":\"s\",\"type\":\"string\",\"field-id\":8},"
    "{\"name\":\"r\",\"type\":{\"type\":\"record\",\"name\":\"inner\",\"fields\":["
    "{\"name\":\"x\",\"type\":\"int\",\"field-id\":10}]},\"field-id\":9},"
    "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"long\",\"element-id\":12},"
    "\"field-id\":11},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"int\",\"key-id\":14,\"value-id\":15},"
    "\"field-id\":13},"
    "{\"name\":\"u\",\"type\":[\"null\",\"string\"],\"default\":null,\"field-id\":16},"
    "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"four\",\"size\":4},\"field-id\":17}"
    "]}";

static int file_write(void *ud, const void *p, size_t n)
{
    return fwrite(p, 1, n, ud) == n ? 0 : -EIO;
}

static FILE *create(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot create %s\n", path);
    }
    return f;
}

static int encode_types_row(loams_kit_buf *b, int i)
{
    int rc = 0;
    char s[32];
    uint8_t by[8];
    rc |= loams__avro_put_boolean(b, i % 2 == 0);
    rc |= loams__avro_put_int(b, (int32_t)(uint32_t)((uint32_t)i * 2654435761u));
    rc |= loams__avro_put_long(b, ((int64_t)i - 500) * 10000000019LL);
    rc |= loams__avro_put_float(b, (float)i * 0.5f - 3.0f);
    rc |= loams__avro_put_double(b, (double)i / 3.0);
    for (int k = 0; k < i % 6; k++) {
        by[k] = (uint8_t)((i + k) & 255);
    }
    rc |= loams__avro_put_bytes(b, by, (size_t)(i % 6));
    int n = snprintf(s, sizeof(s), "str-%d-\xc3\xa9", i);
    rc |= loams__avro_put_string(b, s, (size_t)n);
    rc |= loams__avro_put_int(b, -i);
    if (i % 4) {
        rc |= loams__avro_put_block_count(b, i % 4);
        for (int k = 0; k < i % 4; k++) {
            rc |= loams__avro_put_long(b, (int64_t)i * k);
        }
    }
    rc |= loams__avro_put_block_end(b);
    if (i % 3) {
        rc |= loams__avro_put_block_count(b, i % 3);
        for (int k = 0; k < i % 3; k++) {
            n = snprintf(s, sizeof(s), "k%d", k);
            rc |= loams__avro_put_string(b, s, (size_t)n);
            rc |= loams__avro_put_int(b, i + k);
        }
    }
    rc |= loams__avro_put_block_end(b);
    if (i % 4 == 0) {
        rc |= loams__avro_put_union(b, 0);
    } else {
        n = snprintf(s, sizeof(s), "u%d", i);
        rc |= loams__avro_put_union(b, 1);
        rc |= loams__avro_put_string(b, s, (size_t)n);
    }
    uint8_t fx[4] = {(uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
    rc |= loams__avro_put_fixed(b, fx, 4);
    return rc ? -ENOMEM : 0;
}

static int write_types(const char *dir, const char *name, loams__avro_codec codec)
{
    FILE *f = create(dir, name);
    if (!f) {
        return 1;
    }
    loams__avro_options o;
    loams__avro_options_init(&o);
    o.schema_json = types_schema;
    o.codec = codec;
    o.block_bytes = 2048; /* several blocks */
    static const loams__avro_kv kv[] = {{"loams.sample", "types", 5}};
    o.metadata = kv;
    o.nmetadata = 1;
    loams__avro_writer *w;
    char err[256];
    int rc = loams__avro_writer_open(&o, (loams__sink){file_write, f}, &w, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "%s: %s\n", name, err);
        fclose(f);
        return 1;
    }
    for (int i = 0; i < 1000 && !rc; i++) {
        rc = encode_types_row(loams__avro_writer_datum(w), i);
        if (!rc) {
            rc = loams__avro_writer_end_datum(w);
        }
    }
    if (!rc) {
        rc = loams__avro_writer_close(w);
    }
    if (rc) {
        fprintf(stderr, "%s: %s\n", name, loams__avro_writer_error(w));
    }
    loams__avro_writer_free(w);
    return fclose(f) || rc ? 1 : 0;
}

/* ---- an Iceberg manifest for a real Parquet file ---- */

static const loams__pq_column_def data_cols[] = {
    {"id", LOAMS__PQ_INT64, 0, 1, 0},
    {"name", LOAMS__PQ_STRING, 1, 2, 0},
    {"score", LOAMS__PQ_DOUBLE, 1, 3, 0},
    {"ts", LOAMS__PQ_TIMESTAMP, 0, 4, 0},
};
static const char table_schema[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"name\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"score\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":4,\"name\":\"ts\",\"required\":true,\"type\":\"timestamptz\"}]}";

static void hex(FILE *f, const uint8_t *p, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%02x", p[i]);
    }
    fputc('"', f);
}

typedef int (*map_value_fn)(loams_kit_buf *b, const loams__pq_column_stats *s);

static int put_long_map(loams_kit_buf *b, const loams__pq_file_stats *st,
                        uint64_t (*get)(const loams__pq_column_stats *))
{
    int rc = loams__avro_put_union(b, 1);
    rc |= loams__avro_put_block_count(b, (int64_t)st->ncolumns);
    for (size_t i = 0; i < st->ncolumns; i++) {
        rc |= loams__avro_put_int(b, st->columns[i].field_id);
        rc |= loams__avro_put_long(b, (int64_t)get(&st->columns[i]));
    }
    rc |= loams__avro_put_block_end(b);
    return rc;
}

static uint64_t get_size(const loams__pq_column_stats *s)
{
    return s->column_size;
}
static uint64_t get_values(const loams__pq_column_stats *s)
{
    return s->value_count;
}
static uint64_t get_nulls(const loams__pq_column_stats *s)
{
    return s->null_count;
}

static int put_bound_map(loams_kit_buf *b, const loams__pq_file_stats *st, int upper)
{
    int64_t n = 0;
    for (size_t i = 0; i < st->ncolumns; i++) {
        n += (upper ? st->columns[i].upper : st->columns[i].lower) != NULL;
    }
    int rc = loams__avro_put_union(b, 1);
    if (n) {
        rc |= loams__avro_put_block_count(b, n);
        for (size_t i = 0; i < st->ncolumns; i++) {
            const loams__pq_column_stats *c = &st->columns[i];
            if (upper ? c->upper != NULL : c->lower != NULL) {
                rc |= loams__avro_put_int(b, c->field_id);
                rc |= upper ? loams__avro_put_bytes(b, c->upper, c->upper_len)
                            : loams__avro_put_bytes(b, c->lower, c->lower_len);
            }
        }
    }
    rc |= loams__avro_put_block_end(b);
    return rc;
}

static int write_iceberg(const char *dir)
{
    char path[4096];
    int rc;
    FILE *f = create(dir, "data.parquet");
    if (!f) {
        return 1;
    }
    loams__pq_options po;
    loams__pq_options_init(&po);
    po.row_group_bytes = 16 << 10; /* a few row groups: several split offsets */
    loams__pq_writer *pw;
    char err[256];
    rc = loams__pq_writer_open(data_cols, 4, &po, (loams__sink){file_write, f}, &pw, err,
                               sizeof(err));
    if (rc) {
        fprintf(stderr, "data.parquet: %s\n", err);
        fclose(f);
        return 1;
    }
    char name[64];
    for (int i = 0; i < 3000 && !rc; i++) {
        loams__pq_value row[4];
        memset(row, 0, sizeof(row));
        row[0].u.i64 = 1000 + i;
        int n = snprintf(name, sizeof(name), "name-%05d-a-long-tail-to-truncate", i);
        row[1].is_null = i % 10 == 0;
        row[1].u.bin.ptr = name;
        row[1].u.bin.len = (size_t)n;
        row[2].is_null = i % 7 == 0;
        row[2].u.f64 = i * 1.5 - 10;
        row[3].u.i64 = 1700000000000000LL + i;
        rc = loams__pq_writer_write_row(pw, row);
    }
    if (!rc) {
        rc = loams__pq_writer_close(pw);
    }
    if (fclose(f) || rc) {
        fprintf(stderr, "data.parquet: %s\n", loams__pq_writer_error(pw));
        loams__pq_writer_free(pw);
        return 1;
    }
    const loams__pq_file_stats *st = loams__pq_writer_stats(pw);
    snprintf(path, sizeof(path), "%s/data.parquet", dir);
    char *abs = realpath(path, NULL);
    if (!abs) {
        loams__pq_writer_free(pw);
        return 1;
    }

    /* The manifest: one ADDED entry for data.parquet. */
    char *entry_schema = NULL;
    rc = loams__iceberg_manifest_entry_schema(LOAMS__ICEBERG_UNPARTITIONED_FIELDS, NULL,
                                              &entry_schema);
    f = create(dir, "manifest.avro");
    if (rc || !f) {
        free(abs);
        free(entry_schema);
        loams__pq_writer_free(pw);
        return 1;
    }
    loams__avro_options ao;
    loams__avro_options_init(&ao);
    ao.schema_json = entry_schema;
    ao.codec = LOAMS__AVRO_CODEC_DEFLATE;
    const loams__avro_kv meta[] = {
        {"schema", table_schema, strlen(table_schema)},
        {"schema-id", "0", 1},
        {"partition-spec", "[]", 2},
        {"partition-spec-id", "0", 1},
        {"format-version", "2", 1},
        {"content", "data", 4},
    };
    ao.metadata = meta;
    ao.nmetadata = 6;
    loams__avro_writer *aw;
    rc = loams__avro_writer_open(&ao, (loams__sink){file_write, f}, &aw, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "manifest.avro: %s\n", err);
    } else {
        loams_kit_buf *b = loams__avro_writer_datum(aw);
        int e = 0;
        e |= loams__avro_put_int(b, 1);   /* status ADDED */
        e |= loams__avro_put_union(b, 1); /* snapshot_id */
        e |= loams__avro_put_long(b, 4242424242424242LL);
        e |= loams__avro_put_union(b, 0);                 /* sequence_number: inherited */
        e |= loams__avro_put_union(b, 0);                 /* file_sequence_number */
        e |= loams__avro_put_int(b, 0);                   /* content DATA */
        e |= loams__avro_put_string(b, abs, strlen(abs)); /* file_path */
        e |= loams__avro_put_string(b, "PARQUET", 7);     /* file_format */
        /* partition: an empty record encodes as nothing */
        e |= loams__avro_put_long(b, (int64_t)st->row_count);
        e |= loams__avro_put_long(b, (int64_t)st->file_size);
        e |= put_long_map(b, st, get_size);
        e |= put_long_map(b, st, get_values);
        e |= put_long_map(b, st, get_nulls);
        /* nan_value_counts: the double column only */
        e |= loams__avro_put_union(b, 1);
        e |= loams__avro_put_block_count(b, 1);
        e |= loams__avro_put_int(b, st->columns[2].field_id);
        e |= loams__avro_put_long(b, (int64_t)st->columns[2].nan_count);
        e |= loams__avro_put_block_end(b);
        e |= put_bound_map(b, st, 0);
        e |= put_bound_map(b, st, 1);
        e |= loams__avro_put_union(b, 0); /* key_metadata */
        e |= loams__avro_put_union(b, 1); /* split_offsets */
        e |= loams__avro_put_block_count(b, (int64_t)st->nsplits);
        for (size_t i = 0; i < st->nsplits; i++) {
            e |= loams__avro_put_long(b, st->split_offsets[i]);
        }
        e |= loams__avro_put_block_end(b);
        e |= loams__avro_put_union(b, 0); /* equality_ids */
        e |= loams__avro_put_union(b, 1); /* sort_order_id */
        e |= loams__avro_put_int(b, 0);
        e |= loams__avro_put_union(b, 0); /* referenced_data_file */
        rc = e ? -ENOMEM : loams__avro_writer_end_datum(aw);
        if (!rc) {
            rc = loams__avro_writer_close(aw);
        }
        if (rc) {
            fprintf(stderr, "manifest.avro: %s\n", loams__avro_writer_error(aw));
        }
    }
    uint64_t manifest_len = aw ? loams__avro_writer_bytes(aw) : 0;
    loams__avro_writer_free(aw);
    free(entry_schema);
    if (fclose(f) || rc) {
        free(abs);
        loams__pq_writer_free(pw);
        return 1;
    }

    /* The manifest list: one data manifest. */
    snprintf(path, sizeof(path), "%s/manifest.avro", dir);
    char *mabs = realpath(path, NULL);
    f = create(dir, "manifest-list.avro");
    if (!mabs || !f) {
        free(abs);
        free(mabs);
        loams__pq_writer_free(pw);
        return 1;
    }
    loams__avro_options_init(&ao);
    ao.schema_json = loams__iceberg_manifest_file_schema;
    const loams__avro_kv lmeta[] = {
        {"snapshot-id", "4242424242424242", 16},
        {"sequence-number", "1", 1},
        {"format-version", "2", 1},
    };
    ao.metadata = lmeta;
    ao.nmetadata = 3;
    rc = loams__avro_writer_open(&ao, (loams__sink){file_write, f}, &aw, err, sizeof(err));
    if (!rc) {
        loams_kit_buf *b = loams__avro_writer_datum(aw);
        int e = 0;
        e |= loams__avro_put_string(b, mabs, strlen(mabs));
        e |= loams__avro_put_long(b, (int64_t)manifest_len);
        e |= loams__avro_put_int(b, 0);  /* partition_spec_id */
        e |= loams__avro_put_int(b, 0);  /* content data */
        e |= loams__avro_put_long(b, 1); /* sequence_number */
        e |= loams__avro_put_long(b, 1); /* min_sequence_number */
        e |= loams__avro_put_long(b, 4242424242424242LL);
        e |= loams__avro_put_int(b, 1); /* added files */
        e |= loams__avro_put_int(b, 0);
        e |= loams__avro_put_int(b, 0);
        e |= loams__avro_put_long(b, (int64_t)st->row_count);
        e |= loams__avro_put_long(b, 0);
        e |= loams__avro_put_long(b, 0);
        e |= loams__avro_put_union(b, 1); /* partitions: empty list */
        e |= loams__avro_put_block_end(b);
        e |= loams__avro_put_union(b, 0); /* key_metadata */
        rc = e ? -ENOMEM : loams__avro_writer_end_datum(aw);
        if (!rc) {
            rc = loams__avro_writer_close(aw);
        }
        if (rc) {
            fprintf(stderr, "manifest-list.avro: %s\n", loams__avro_writer_error(aw));
        }
        loams__avro_writer_free(aw);
    } else {
        fprintf(stderr, "manifest-list.avro: %s\n", err);
    }
    if (fclose(f)) {
        rc = 1;
    }

    /* What the readers must find. */
    FILE *x = create(dir, "expected.json");
    if (!x) {
        rc = 1;
    } else {
        fprintf(x,
                "{\"file_path\":\"%s\",\"manifest_path\":\"%s\",\"manifest_length\":%" PRIu64
                ",\"record_count\":%" PRIu64 ",\"file_size\":%" PRIu64 ",\"columns\":[",
                abs, mabs, manifest_len, st->row_count, st->file_size);
        for (size_t i = 0; i < st->ncolumns; i++) {
            const loams__pq_column_stats *c = &st->columns[i];
            fprintf(x,
                    "%s{\"id\":%d,\"size\":%" PRIu64 ",\"values\":%" PRIu64 ",\"nulls\":%" PRIu64
                    ",\"nans\":%" PRIu64 ",\"lower\":",
                    i ? "," : "", c->field_id, c->column_size, c->value_count, c->null_count,
                    c->nan_count);
            if (c->lower) {
                hex(x, c->lower, c->lower_len);
            } else {
                fputs("null", x);
            }
            fputs(",\"upper\":", x);
            if (c->upper) {
                hex(x, c->upper, c->upper_len);
            } else {
                fputs("null", x);
            }
            fputc('}', x);
        }
        fputs("],\"splits\":[", x);
        for (size_t i = 0; i < st->nsplits; i++) {
            fprintf(x, "%s%" PRId64, i ? "," : "", st->split_offsets[i]);
        }
        fputs("]}\n", x);
        if (fclose(x)) {
            rc = 1;
        }
    }
    free(abs);
    free(mabs);
    loams__pq_writer_free(pw);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    int failed = 0;
    failed |= write_types(argv[1], "types_null.avro", LOAMS__AVRO_CODEC_NULL);
    failed |= write_types(argv[1], "types_deflate.avro", LOAMS__AVRO_CODEC_DEFLATE);
    failed |= write_iceberg(argv[1]);
    return failed;
}
