/*
 * fuzz-decoder-avro.c - libFuzzer target for decoder-avro's binary reader
 * (plugins/decoder-avro/avro_program.c) and the kit's Avro schemas
 * (plugins/kit/avro_schema.c).
 *
 * The first input byte picks a (writer, reader) pair of schemas (every
 * type, logical types, unions, a recursive list, a resolved evolution);
 * the rest is a record.  Properties: (1) reading never crashes, reads no
 * byte outside the record (ASan) and answers 0 or LOAMS_EINPUT with an
 * "at byte B: " message whose B is within the record; (2) every JSON cell
 * and STRING cell it yields is valid (cJSON parses the JSON, the strings
 * are UTF-8); (3) a record read whole with writer = reader is also read
 * whole by avro-c's own reader (avro_value_read), the reference: avro-c
 * is laxer (no UTF-8 check), never stricter.
 */
#include <avro.h>
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "../../plugins/decoder-avro/avro_program.h"
#include "loams/kit/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ALL                                                                                        \
    "{\"type\":\"record\",\"name\":\"R\",\"fields\":["                                             \
    "{\"name\":\"b\",\"type\":\"boolean\"},{\"name\":\"i\",\"type\":\"int\"},"                     \
    "{\"name\":\"l\",\"type\":\"long\"},{\"name\":\"f\",\"type\":\"float\"},"                      \
    "{\"name\":\"d\",\"type\":\"double\"},{\"name\":\"y\",\"type\":\"bytes\"},"                    \
    "{\"name\":\"s\",\"type\":\"string\"},"                                                        \
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}},"      \
    "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"X\",\"size\":3}},"                    \
    "{\"name\":\"m\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":30,"   \
    "\"scale\":4}},"                                                                               \
    "{\"name\":\"t\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"          \
    "{\"name\":\"dt\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}},"                      \
    "{\"name\":\"u\",\"type\":[\"null\",\"string\",\"double\"]},"                                  \
    "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":{\"type\":\"map\",\"values\":"         \
    "\"bytes\"}}},"                                                                                \
    "{\"name\":\"r\",\"type\":{\"type\":\"record\",\"name\":\"In\",\"fields\":[{\"name\":\"q\","   \
    "\"type\":[\"null\",\"E\"]}]}}]}"
#define LIST                                                                                       \
    "{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"v\",\"type\":\"int\"},"        \
    "{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}"
#define OLD                                                                                        \
    "{\"type\":\"record\",\"name\":\"T\",\"fields\":[{\"name\":\"n\",\"type\":\"int\"},"           \
    "{\"name\":\"gone\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"                      \
    "{\"name\":\"c\",\"type\":{\"type\":\"enum\",\"name\":\"C\",\"symbols\":[\"P\",\"Q\",\"Z\"]}}" \
    "]}"
#define NEW                                                                                        \
    "{\"type\":\"record\",\"name\":\"T\",\"fields\":[{\"name\":\"n\",\"type\":\"double\"},"        \
    "{\"name\":\"c\",\"type\":{\"type\":\"enum\",\"name\":\"C\",\"symbols\":[\"P\",\"Q\"],"        \
    "\"default\":\"P\"}},{\"name\":\"add\",\"type\":[\"null\",\"long\"],\"default\":null}]}"

static const char *const pairs[][2] = {
    {ALL, ALL},
    {LIST, LIST},
    {OLD, NEW},
    {"[\"null\",\"long\",{\"type\":\"array\",\"items\":\"float\"}]",
     "[\"null\",\"long\",{\"type\":\"array\",\"items\":\"float\"}]"},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

typedef struct compiled {
    loams_kit_avro_schema *w, *r;
    avro_program *prog;
    avro_schema_t ref; /* avro-c's writer schema, for pairs read as written */
} compiled;

static compiled progs[NPAIRS];

static void init(void)
{
    static int done;
    if (done) {
        return;
    }
    done = 1;
    for (size_t i = 0; i < NPAIRS; i++) {
        loams_kit_err e;
        if (loams_kit_avro_schema_parse(NULL, pairs[i][0], strlen(pairs[i][0]), &progs[i].w, &e) !=
                0 ||
            loams_kit_avro_schema_parse(NULL, pairs[i][1], strlen(pairs[i][1]), &progs[i].r, &e) !=
                0 ||
            avro_program_compile(NULL, loams_kit_avro_schema_root(progs[i].w),
                                 loams_kit_avro_schema_root(progs[i].r), &progs[i].prog, &e) != 0) {
            fprintf(stderr, "schema pair %zu: %s\n", i, e.msg);
            abort();
        }
        if (strcmp(pairs[i][0], pairs[i][1]) == 0 &&
            avro_schema_from_json_length(pairs[i][0], strlen(pairs[i][0]), &progs[i].ref) != 0) {
            fprintf(stderr, "avro-c: %s\n", avro_strerror());
            abort();
        }
    }
}

/* avro-c reads the whole record with the writer schema. */
static int avroc_reads(avro_schema_t schema, const uint8_t *p, size_t n)
{
    avro_value_iface_t *iface = avro_generic_class_from_schema(schema);
    avro_value_t v;
    if (iface == NULL || avro_generic_value_new(iface, &v) != 0) {
        abort();
    }
    avro_reader_t r = avro_reader_memory((const char *)p, (int64_t)n);
    char extra;
    /* avro_reader_is_eof only turns true after a failed read: read one more */
    int ok = avro_value_read(r, &v) == 0 && avro_read(r, &extra, 1) != 0;
    avro_reader_free(r);
    avro_value_decref(&v);
    avro_value_iface_decref(iface);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    if (size < 1 || size > 4096) {
        return 0;
    }
    compiled *c = &progs[data[0] % NPAIRS];
    const uint8_t *rec = data + 1;
    size_t n = size - 1;
    avro_scratch scratch = {.mem = NULL};
    loams_value cells[32];
    char msg[512];
    int rc = avro_program_read(c->prog, rec, n, 0, cells, &scratch, msg, sizeof msg);
    if (rc != 0 && rc != LOAMS_EINPUT) {
        fprintf(stderr, "status %d\n", rc);
        abort();
    }
    if (rc == LOAMS_EINPUT) {
        unsigned long at;
        if (sscanf(msg, "at byte %lu: ", &at) != 1 || at > n) {
            fprintf(stderr, "message without a byte within the record: %s\n", msg);
            abort();
        }
    } else {
        for (size_t k = 0; k < avro_program_columns(c->prog); k++) {
            const loams_value *v = &cells[k];
            if (v->type == LOAMS_T_JSON) {
                cJSON *j = cJSON_ParseWithLength(v->u.s.ptr, v->u.s.len);
                if (j == NULL) {
                    fprintf(stderr, "column %zu: invalid JSON %.*s\n", k, (int)v->u.s.len,
                            v->u.s.ptr);
                    abort();
                }
                cJSON_Delete(j);
            } else if (v->type == LOAMS_T_STRING &&
                       loams_kit_utf8_valid_prefix((const uint8_t *)v->u.s.ptr, v->u.s.len) !=
                           v->u.s.len) {
                fprintf(stderr, "column %zu: a STRING that is not UTF-8\n", k);
                abort();
            }
        }
        if (c->ref != NULL && !avroc_reads(c->ref, rec, n)) {
            fprintf(stderr, "read whole here, avro-c refuses it: %s\n", avro_strerror());
            abort();
        }
    }
    avro_scratch_free(&scratch);
    return 0;
}
