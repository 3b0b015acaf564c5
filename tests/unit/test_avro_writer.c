/*
 * test_avro_writer.c - the Avro binary encoding against the spec's examples,
 * the container file layout byte for byte, the deflate codec, and the
 * Iceberg manifest schemas (every field carries its spec field id).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "avro_writer.h"
#include "iceberg_avro_schemas.h"

static loams_kit_buf out;

static void setup(void)
{
    loams_kit_buf_init(&out, NULL);
}

static void teardown(void)
{
    loams_kit_buf_free(&out);
}

static void assert_out(const uint8_t *want, size_t n)
{
    ck_assert_uint_eq(out.len, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(out.data[i] == want[i], "byte %zu is 0x%02x, want 0x%02x", i, out.data[i],
                      want[i]);
    }
}

START_TEST(test_long_zigzag_matches_spec_table)
{
    static const int64_t v[] = {0, -1, 1, -2, 2, -64, 64};
    for (size_t i = 0; i < 7; i++) {
        ck_assert_int_eq(loams__avro_put_long(&out, v[i]), 0);
    }
    static const uint8_t want[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x7f, 0x80, 0x01};
    assert_out(want, sizeof(want));
}
END_TEST

START_TEST(test_record_string_array_union_match_spec_examples)
{
    /* record {a: long 27, b: string "foo"} -> 36 06 66 6f 6f */
    loams__avro_put_long(&out, 27);
    loams__avro_put_string(&out, "foo", 3);
    /* array<long> [3, 27] -> 04 06 36 00 */
    loams__avro_put_block_count(&out, 2);
    loams__avro_put_long(&out, 3);
    loams__avro_put_long(&out, 27);
    loams__avro_put_block_end(&out);
    /* union ["null","string"]: null -> 00, "a" -> 02 02 61 */
    loams__avro_put_union(&out, 0);
    loams__avro_put_union(&out, 1);
    loams__avro_put_string(&out, "a", 1);
    static const uint8_t want[] = {0x36, 0x06, 'f',  'o',  'o',  0x04, 0x06,
                                   0x36, 0x00, 0x00, 0x02, 0x02, 'a'};
    assert_out(want, sizeof(want));
}
END_TEST

START_TEST(test_fixed_width_and_float_types)
{
    loams__avro_put_boolean(&out, 1);
    loams__avro_put_boolean(&out, 0);
    loams__avro_put_int(&out, INT32_MIN);
    loams__avro_put_float(&out, 1.0f);
    loams__avro_put_double(&out, -2.0);
    loams__avro_put_fixed(&out, "\x01\x02\x03", 3);
    loams__avro_put_bytes(&out, "", 0);
    static const uint8_t want[] = {0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00,
                                   0x00, 0x80, 0x3f, 0,    0,    0,    0,    0,
                                   0,    0x00, 0xc0, 0x01, 0x02, 0x03, 0x00};
    assert_out(want, sizeof(want));
    ck_assert_int_eq(loams__avro_put_block_count(&out, 0), -EINVAL);
}
END_TEST

static int mem_write(void *ud, const void *p, size_t n)
{
    return loams_kit_buf_append(ud, p, n);
}

static const uint8_t sync16[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

START_TEST(test_container_file_bytes)
{
    loams__avro_options o;
    loams__avro_options_init(&o);
    o.schema_json = "\"long\"";
    o.sync = sync16;
    static const loams__avro_kv kv[] = {{"k", "v", 1}};
    o.metadata = kv;
    o.nmetadata = 1;
    loams__avro_writer *w;
    ck_assert_int_eq(loams__avro_writer_open(&o, (loams__sink){mem_write, &out}, &w, NULL, 0), 0);
    loams__avro_put_long(loams__avro_writer_datum(w), 1);
    ck_assert_int_eq(loams__avro_writer_end_datum(w), 0);
    loams__avro_put_long(loams__avro_writer_datum(w), -1);
    ck_assert_int_eq(loams__avro_writer_end_datum(w), 0);
    ck_assert_int_eq(loams__avro_writer_close(w), 0);
    ck_assert_uint_eq(loams__avro_writer_count(w), 2);
    ck_assert_uint_eq(loams__avro_writer_bytes(w), out.len);
    static const uint8_t want[] =
        {
            'O',  'b',  'j',  1,    0x06, /* 3 metadata entries */
            0x16, 'a',  'v',  'r',  'o',  '.',  's', 'c',  'h', 'e',  'm', 'a',  0x0c, '"',
            'l',  'o',  'n',  'g',  '"',  0x14, 'a', 'v',  'r', 'o',  '.', 'c',  'o',  'd',
            'e',  'c',  0x08, 'n',  'u',  'l',  'l', 0x02, 'k', 0x02, 'v', 0x00, /* end of map */
            0,    1,    2,    3,    4,    5,    6,   7,    8,   9,    10,  11,   12,   13,
            14,   15,               /* sync */
            0x04, 0x04, 0x02, 0x01, /* block: 2 objects, 2 bytes */
            0,    1,    2,    3,    4,    5,    6,   7,    8,   9,    10,  11,   12,   13,
            14,   15,
        };
    assert_out(want, sizeof(want));
    ck_assert_int_eq(loams__avro_writer_end_datum(w), -EINVAL);
    loams__avro_writer_free(w);
}
END_TEST

START_TEST(test_deflate_blocks_inflate_to_the_objects)
{
    loams__avro_options o;
    loams__avro_options_init(&o);
    o.schema_json = "\"string\"";
    o.codec = LOAMS__AVRO_CODEC_DEFLATE;
    o.sync = sync16;
    o.block_bytes = 100;
    loams__avro_writer *w;
    ck_assert_int_eq(loams__avro_writer_open(&o, (loams__sink){mem_write, &out}, &w, NULL, 0), 0);
    for (int i = 0; i < 50; i++) {
        loams__avro_put_string(loams__avro_writer_datum(w), "hello avro", 10);
        ck_assert_int_eq(loams__avro_writer_end_datum(w), 0);
    }
    ck_assert_int_eq(loams__avro_writer_close(w), 0);
    loams__avro_writer_free(w);
    /* Find the first block after the header's sync marker. */
    size_t pos = 0;
    for (size_t i = 0; i + 16 <= out.len; i++) {
        if (memcmp(out.data + i, sync16, 16) == 0) {
            pos = i + 16;
            break;
        }
    }
    ck_assert_uint_gt(pos, 0);
    int blocks = 0, objects = 0;
    while (pos < out.len) {
        /* count and size are single-byte varints here */
        int count = out.data[pos] >> 1, size = out.data[pos + 1] >> 1;
        ck_assert_uint_lt(out.data[pos + 1], 0x80);
        uint8_t plain[256];
        z_stream z;
        memset(&z, 0, sizeof(z));
        ck_assert_int_eq(inflateInit2(&z, -15), Z_OK);
        z.next_in = out.data + pos + 2;
        z.avail_in = (uInt)size;
        z.next_out = plain;
        z.avail_out = sizeof(plain);
        ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
        ck_assert_uint_eq(z.total_out, (uLong)count * 11);
        ck_assert(memcmp(plain, "\x14hello avro", 11) == 0);
        inflateEnd(&z);
        pos += 2 + (size_t)size;
        ck_assert(memcmp(out.data + pos, sync16, 16) == 0);
        pos += 16;
        blocks++;
        objects += count;
    }
    ck_assert_int_eq(objects, 50);
    ck_assert_int_gt(blocks, 1);
}
END_TEST

START_TEST(test_open_rejects_bad_schema_and_reserved_keys)
{
    loams__avro_options o;
    loams__avro_options_init(&o);
    loams__avro_writer *w;
    char err[256];
    loams__sink s = {mem_write, &out};
    ck_assert_int_eq(loams__avro_writer_open(&o, s, &w, err, sizeof(err)), -EINVAL);
    o.schema_json = "{\"type\": ";
    ck_assert_int_eq(loams__avro_writer_open(&o, s, &w, err, sizeof(err)), -EINVAL);
    ck_assert(strstr(err, "JSON") != NULL);
    o.schema_json = "\"int\"";
    static const loams__avro_kv kv[] = {{"avro.codec", "x", 1}};
    o.metadata = kv;
    o.nmetadata = 1;
    ck_assert_int_eq(loams__avro_writer_open(&o, s, &w, err, sizeof(err)), -EINVAL);
    ck_assert(strstr(err, "reserved") != NULL);
    ck_assert_uint_eq(out.len, 0);
}
END_TEST

/* Every record field has a field-id, every array an element-id (map
 * arrays aside), and the ids are unique; returns how many were seen. */
static int walk(const cJSON *t, int *seen, int nseen)
{
    if (cJSON_IsArray(t)) {
        const cJSON *b;
        cJSON_ArrayForEach(b, t)
        {
            nseen = walk(b, seen, nseen);
        }
        return nseen;
    }
    if (!cJSON_IsObject(t)) {
        return nseen;
    }
    const char *type = cJSON_GetObjectItem(t, "type")->valuestring;
    if (type && strcmp(type, "record") == 0) {
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItem(t, "fields"))
        {
            const cJSON *id = cJSON_GetObjectItem(f, "field-id");
            ck_assert_msg(cJSON_IsNumber(id), "field %s has no field-id",
                          cJSON_GetObjectItem(f, "name")->valuestring);
            for (int i = 0; i < nseen; i++) {
                ck_assert_int_ne(seen[i], id->valueint);
            }
            seen[nseen++] = id->valueint;
            nseen = walk(cJSON_GetObjectItem(f, "type"), seen, nseen);
        }
    } else if (type && strcmp(type, "array") == 0) {
        const cJSON *lt = cJSON_GetObjectItem(t, "logicalType");
        if (!lt) {
            const cJSON *id = cJSON_GetObjectItem(t, "element-id");
            ck_assert(cJSON_IsNumber(id));
            seen[nseen++] = id->valueint;
        }
        nseen = walk(cJSON_GetObjectItem(t, "items"), seen, nseen);
    }
    return nseen;
}

START_TEST(test_iceberg_schemas_carry_every_field_id)
{
    int seen[128];
    cJSON *list = cJSON_Parse(loams__iceberg_manifest_file_schema);
    ck_assert(list != NULL);
    ck_assert_int_eq(walk(list, seen, 0), 20);
    cJSON_Delete(list);

    char *entry;
    ck_assert_int_eq(loams__iceberg_manifest_entry_schema(
                         "[{\"name\":\"day\",\"type\":[\"null\",\"int\"],\"default\":null,"
                         "\"field-id\":1000}]",
                         NULL, &entry),
                     0);
    cJSON *e = cJSON_Parse(entry);
    ck_assert_msg(e != NULL, "manifest_entry schema is not JSON: %s", entry);
    /* 5 entry fields + 17 data_file fields + 1 partition field + 6 maps x 2
     * + 2 list elements */
    ck_assert_int_eq(walk(e, seen, 0), 5 + 17 + 1 + 12 + 2);
    int has_1000 = 0, has_143 = 0;
    for (int i = 0; i < 37; i++) {
        has_1000 |= seen[i] == 1000;
        has_143 |= seen[i] == 143;
    }
    ck_assert(has_1000 && has_143);
    cJSON_Delete(e);
    loams_kit_mem_free(NULL, entry);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("avro_writer");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60); /* valgrind on a loaded machine */
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_long_zigzag_matches_spec_table);
    tcase_add_test(tc, test_record_string_array_union_match_spec_examples);
    tcase_add_test(tc, test_fixed_width_and_float_types);
    tcase_add_test(tc, test_container_file_bytes);
    tcase_add_test(tc, test_deflate_blocks_inflate_to_the_objects);
    tcase_add_test(tc, test_open_rejects_bad_schema_and_reserved_keys);
    tcase_add_test(tc, test_iceberg_schemas_carry_every_field_id);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
