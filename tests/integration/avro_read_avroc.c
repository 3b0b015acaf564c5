/*
 * avro_read_avroc.c - avro-c (libavro), a second independent reader, reads
 * every Avro container file avro_sample_writer wrote and checks every value
 * (the types files) and the manifest entry and manifest list against
 * expected.json.  avro-c drops unknown schema attributes, so the field ids
 * are checked by avro-read.py; here the point is that avro-c decodes every
 * block of every file (both codecs) to the values we meant.
 *
 *   avro_read_avroc DIR
 */
#include <avro.h>
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            if (++failures <= 30) {                                                                \
                fprintf(stderr, "FAIL: " __VA_ARGS__);                                             \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

typedef int (*row_fn)(avro_value_t *row, int i, void *ud);

/* Reads every object of DIR/name with avro-c; calls fn per object. */
static int read_all(const char *dir, const char *name, row_fn fn, void *ud)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    avro_file_reader_t reader;
    if (avro_file_reader(path, &reader)) {
        CHECK(0, "%s: avro-c cannot open it: %s", name, avro_strerror());
        return -1;
    }
    avro_schema_t schema = avro_file_reader_get_writer_schema(reader);
    avro_value_iface_t *iface = avro_generic_class_from_schema(schema);
    avro_value_t row;
    avro_generic_value_new(iface, &row);
    int n = 0, rc;
    while ((rc = avro_file_reader_read_value(reader, &row)) == 0) {
        fn(&row, n++, ud);
    }
    CHECK(rc == EOF, "%s: avro-c stopped after %d objects: %s", name, n, avro_strerror());
    avro_value_decref(&row);
    avro_value_iface_decref(iface);
    avro_schema_decref(schema);
    avro_file_reader_close(reader);
    return n;
}

static avro_value_t field(avro_value_t *rec, const char *name)
{
    avro_value_t v;
    memset(&v, 0, sizeof(v));
    if (avro_value_get_by_name(rec, name, &v, NULL)) {
        CHECK(0, "no field %s", name);
    }
    return v;
}

/* The branch value of an optional union; NULL branch -> returns 0. */
static int branch(avro_value_t *u, avro_value_t *out)
{
    int disc = -1;
    avro_value_get_discriminant(u, &disc);
    if (disc <= 0) {
        return 0;
    }
    avro_value_get_current_branch(u, out);
    return 1;
}

static int types_row(avro_value_t *row, int i, void *ud)
{
    const char *file = ud;
    avro_value_t v = field(row, "b");
    int b;
    int32_t i32;
    int64_t i64;
    float f;
    double d;
    const void *p;
    size_t n;
    const char *s;
    char want[64];
    avro_value_get_boolean(&v, &b);
    CHECK(b == (i % 2 == 0), "%s row %d: b", file, i);
    v = field(row, "i");
    avro_value_get_int(&v, &i32);
    CHECK(i32 == (int32_t)(uint32_t)((uint32_t)i * 2654435761u), "%s row %d: i", file, i);
    v = field(row, "l");
    avro_value_get_long(&v, &i64);
    CHECK(i64 == ((int64_t)i - 500) * 10000000019LL, "%s row %d: l", file, i);
    v = field(row, "f");
    avro_value_get_float(&v, &f);
    CHECK(f == (float)i * 0.5f - 3.0f, "%s row %d: f", file, i);
    v = field(row, "d");
    avro_value_get_double(&v, &d);
    CHECK(d == (double)i / 3.0, "%s row %d: d", file, i);
    v = field(row, "by");
    avro_value_get_bytes(&v, &p, &n);
    int ok = n == (size_t)(i % 6);
    for (size_t k = 0; ok && k < n; k++) {
        ok = ((const uint8_t *)p)[k] == (uint8_t)((i + (int)k) & 255);
    }
    CHECK(ok, "%s row %d: by", file, i);
    v = field(row, "s");
    avro_value_get_string(&v, &s, &n);
    snprintf(want, sizeof(want), "str-%d-\xc3\xa9", i);
    CHECK(strcmp(s, want) == 0, "%s row %d: s = %s", file, i, s);
    avro_value_t r = field(row, "r"), x = field(&r, "x");
    avro_value_get_int(&x, &i32);
    CHECK(i32 == -i, "%s row %d: r.x", file, i);
    v = field(row, "a");
    avro_value_get_size(&v, &n);
    CHECK(n == (size_t)(i % 4), "%s row %d: a has %zu items", file, i, n);
    for (size_t k = 0; k < n; k++) {
        avro_value_t item;
        avro_value_get_by_index(&v, k, &item, NULL);
        avro_value_get_long(&item, &i64);
        CHECK(i64 == (int64_t)i * (int64_t)k, "%s row %d: a[%zu]", file, i, k);
    }
    v = field(row, "m");
    avro_value_get_size(&v, &n);
    CHECK(n == (size_t)(i % 3), "%s row %d: m has %zu entries", file, i, n);
    for (int k = 0; k < i % 3; k++) {
        avro_value_t item;
        snprintf(want, sizeof(want), "k%d", k);
        CHECK(avro_value_get_by_name(&v, want, &item, NULL) == 0, "%s row %d: m[%s]", file, i,
              want);
        avro_value_get_int(&item, &i32);
        CHECK(i32 == i + k, "%s row %d: m[%s] = %d", file, i, want, i32);
    }
    v = field(row, "u");
    avro_value_t br;
    if (i % 4 == 0) {
        CHECK(!branch(&v, &br), "%s row %d: u is not null", file, i);
    } else {
        CHECK(branch(&v, &br), "%s row %d: u is null", file, i);
        avro_value_get_string(&br, &s, &n);
        snprintf(want, sizeof(want), "u%d", i);
        CHECK(strcmp(s, want) == 0, "%s row %d: u", file, i);
    }
    v = field(row, "fx");
    avro_value_get_fixed(&v, &p, &n);
    const uint8_t *fx = p;
    CHECK(n == 4 && (uint32_t)(fx[0] << 24 | fx[1] << 16 | fx[2] << 8 | fx[3]) == (uint32_t)i,
          "%s row %d: fx", file, i);
    return 0;
}

static int64_t get_long(avro_value_t *rec, const char *name)
{
    avro_value_t v = field(rec, name);
    int64_t x = -1;
    avro_value_get_long(&v, &x);
    return x;
}

static int64_t json_int(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

/* Checks an Iceberg int->long map (array of key/value records). */
static void check_long_map(avro_value_t *df, const char *name, const cJSON *cols, const char *key)
{
    avro_value_t u = field(df, name), arr;
    CHECK(branch(&u, &arr), "manifest: %s is null", name);
    size_t n = 0;
    avro_value_get_size(&arr, &n);
    CHECK(n == (size_t)cJSON_GetArraySize(cols), "manifest: %s has %zu entries", name, n);
    for (size_t k = 0; k < n; k++) {
        avro_value_t kv, kk, vv;
        int32_t id;
        int64_t val;
        avro_value_get_by_index(&arr, k, &kv, NULL);
        avro_value_get_by_name(&kv, "key", &kk, NULL);
        avro_value_get_by_name(&kv, "value", &vv, NULL);
        avro_value_get_int(&kk, &id);
        avro_value_get_long(&vv, &val);
        const cJSON *c = cJSON_GetArrayItem(cols, (int)k);
        CHECK(id == json_int(c, "id") && val == json_int(c, key), "manifest: %s[%d] = %" PRId64,
              name, id, val);
    }
}

static int manifest_row(avro_value_t *row, int i, void *ud)
{
    const cJSON *exp = ud;
    avro_value_t st = field(row, "status");
    int32_t status = -1;
    avro_value_get_int(&st, &status);
    CHECK(status == 1, "manifest: status %d", status);
    avro_value_t df = field(row, "data_file");
    avro_value_t path = field(&df, "file_path");
    const char *s;
    size_t n;
    avro_value_get_string(&path, &s, &n);
    CHECK(strcmp(s, cJSON_GetObjectItem(exp, "file_path")->valuestring) == 0,
          "manifest: file_path %s", s);
    CHECK(get_long(&df, "record_count") == json_int(exp, "record_count"), "manifest: record_count");
    CHECK(get_long(&df, "file_size_in_bytes") == json_int(exp, "file_size"), "manifest: size");
    const cJSON *cols = cJSON_GetObjectItem(exp, "columns");
    check_long_map(&df, "column_sizes", cols, "size");
    check_long_map(&df, "value_counts", cols, "values");
    check_long_map(&df, "null_value_counts", cols, "nulls");
    avro_value_t so = field(&df, "split_offsets"), arr;
    CHECK(branch(&so, &arr), "manifest: split_offsets is null");
    avro_value_get_size(&arr, &n);
    CHECK(n == (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(exp, "splits")),
          "manifest: %zu split offsets", n);
    (void)i;
    return 0;
}

static int list_row(avro_value_t *row, int i, void *ud)
{
    const cJSON *exp = ud;
    avro_value_t path = field(row, "manifest_path");
    const char *s;
    size_t n;
    avro_value_get_string(&path, &s, &n);
    CHECK(strcmp(s, cJSON_GetObjectItem(exp, "manifest_path")->valuestring) == 0,
          "manifest list: path %s", s);
    CHECK(get_long(row, "manifest_length") == json_int(exp, "manifest_length"),
          "manifest list: length");
    CHECK(get_long(row, "added_rows_count") == json_int(exp, "record_count"),
          "manifest list: added rows");
    (void)i;
    return 0;
}

/* --paths mode: prints the manifest_path of every manifest list object and
 * the data_file.file_path of every live manifest entry (status != 2). */
static int paths_row(avro_value_t *row, int i, void *ud)
{
    (void)i;
    (void)ud;
    avro_value_t v, df;
    const char *s;
    size_t n;
    if (avro_value_get_by_name(row, "manifest_path", &v, NULL) == 0) {
        avro_value_get_string(&v, &s, &n);
        printf("manifest %s\n", s);
        return 0;
    }
    int32_t status = 0;
    v = field(row, "status");
    avro_value_get_int(&v, &status);
    df = field(row, "data_file");
    v = field(&df, "file_path");
    avro_value_get_string(&v, &s, &n);
    if (status != 2) {
        printf("data %s\n", s);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--paths") == 0) {
        for (int i = 2; i < argc; i++) {
            CHECK(read_all("/", argv[i], paths_row, NULL) >= 0, "%s: not read", argv[i]);
        }
        return failures ? 1 : 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR | --paths FILE...\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    CHECK(read_all(dir, "types_null.avro", types_row, "types_null.avro") == 1000,
          "types_null.avro: not 1000 objects");
    CHECK(read_all(dir, "types_deflate.avro", types_row, "types_deflate.avro") == 1000,
          "types_deflate.avro: not 1000 objects");

    char path[4096];
    snprintf(path, sizeof(path), "%s/expected.json", dir);
    FILE *f = fopen(path, "rb");
    char buf[65536];
    size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f) {
        fclose(f);
    }
    buf[len] = '\0';
    cJSON *exp = cJSON_Parse(buf);
    CHECK(exp != NULL, "expected.json is missing or not JSON");
    if (exp) {
        CHECK(read_all(dir, "manifest.avro", manifest_row, exp) == 1, "manifest: not 1 entry");
        CHECK(read_all(dir, "manifest-list.avro", list_row, exp) == 1,
              "manifest list: not 1 entry");
        cJSON_Delete(exp);
    }
    printf("avro_read_avroc: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
