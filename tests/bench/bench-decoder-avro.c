/*
 * bench-decoder-avro.c - decoder-avro records/s and MB/s of one core on the
 * support tickets of tests/bench/ticket_gen.c written as Avro (the schema
 * derived from the first ticket: strings, longs, an array of strings and
 * a nested record; each record in the Confluent wire format), next to
 * decoder-json on the same tickets as JSON, in the same run, through the
 * host API table with the schema in a real registry.  References on the
 * same Avro bytes: avro-c's own reader loop (avro_value_read into one
 * reused generic value) and python3-avro's (DatumReader, on a tenth of
 * the records: it is slow), each timed alone.  decoder-json and
 * decoder-avro run three times each, in turn, and the best run counts.
 */
#include <avro.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "abi/batch.h"
#include "abi/host_api.h"
#include "abi/plugin_ctx.h"
#include "catalog/schema_catalog.h"
#include "ticket_gen.h"

#define BATCH 10000

/* 500,000 tickets, or LOAMS_BENCH_RECORDS of them (a multiple of BATCH:
 * fewer for a profiler such as callgrind). */
#define RECORDS bench_records()
static size_t bench_records(void)
{
    static size_t n;
    if (n == 0) {
        const char *e = getenv("LOAMS_BENCH_RECORDS");
        n = e != NULL && atol(e) >= BATCH ? (size_t)atol(e) / BATCH * BATCH : 500000;
    }
    return n;
}

const loams_plugin_descriptor *bench_json_entry(const loams_host_api *h);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The Avro type of a JSON value, appended to schema text s. */
static void derive(const cJSON *v, const char *name, char *s, size_t cap)
{
    size_t o = strlen(s);
    if (cJSON_IsString(v)) {
        snprintf(s + o, cap - o, "\"string\"");
    } else if (cJSON_IsNumber(v)) {
        snprintf(s + o, cap - o, "\"long\"");
    } else if (cJSON_IsBool(v)) {
        snprintf(s + o, cap - o, "\"boolean\"");
    } else if (cJSON_IsArray(v)) {
        snprintf(s + o, cap - o, "{\"type\":\"array\",\"items\":\"string\"}");
    } else if (cJSON_IsObject(v)) {
        snprintf(s + o, cap - o, "{\"type\":\"record\",\"name\":\"%s_t\",\"fields\":[", name);
        int k = 0;
        for (const cJSON *m = v->child; m != NULL; m = m->next, k++) {
            o = strlen(s);
            snprintf(s + o, cap - o, "%s{\"name\":\"%s\",\"type\":", k ? "," : "", m->string);
            derive(m, m->string, s, cap);
            o = strlen(s);
            snprintf(s + o, cap - o, "}");
        }
        o = strlen(s);
        snprintf(s + o, cap - o, "]}");
    } else {
        exit(2);
    }
}

static size_t put_long(uint8_t *out, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t o = 0;
    while (z >= 0x80) {
        out[o++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    out[o++] = (uint8_t)z;
    return o;
}

static size_t put_str(uint8_t *out, const char *s)
{
    size_t n = strlen(s), o = put_long(out, (int64_t)n);
    memcpy(out + o, s, n);
    return o + n;
}

/* Encodes a ticket's members in order, as derive() typed them. */
static size_t encode(const cJSON *v, uint8_t *out)
{
    size_t o = 0;
    for (const cJSON *m = v->child; m != NULL; m = m->next) {
        if (cJSON_IsString(m)) {
            o += put_str(out + o, m->valuestring);
        } else if (cJSON_IsNumber(m)) {
            o += put_long(out + o, (int64_t)m->valuedouble);
        } else if (cJSON_IsBool(m)) {
            out[o++] = cJSON_IsTrue(m) ? 1 : 0;
        } else if (cJSON_IsArray(m)) {
            int n = cJSON_GetArraySize(m);
            if (n > 0) {
                o += put_long(out + o, n);
                for (const cJSON *it = m->child; it != NULL; it = it->next) {
                    o += put_str(out + o, it->valuestring);
                }
            }
            out[o++] = 0;
        } else {
            o += encode(m, out + o);
        }
    }
    return o;
}

static double run(const loams_plugin_descriptor *desc, const loams_option_kv *kv, size_t nkv,
                  loams_meta *meta, const loams_record *recs, size_t *columns, size_t *failed)
{
    const loams_decoder_vtable *vt = desc->vtable;
    loams_ctx *ctx;
    void *state;
    loams_batch *b;
    if (loams_ctx_create(desc, kv, nkv, &ctx, NULL, 0) != 0) {
        exit(1);
    }
    loams_ctx_set_meta(ctx, meta);
    if (vt->open(ctx, &state) != 0 || loams_batch_create(&b) != 0) {
        exit(1);
    }
    double t = 0;
    *failed = 0;
    for (size_t done = 0; done < RECORDS; done += BATCH) {
        loams_batch_append_records(b, recs + done, BATCH);
        double t0 = now();
        if (vt->decode(state, b) != 0) {
            char err[512];
            loams_ctx_error(ctx, err, sizeof err);
            fprintf(stderr, "decode: %s\n", err);
            exit(1);
        }
        t += now() - t0;
        *failed += loams_batch_failed_count(b);
        *columns = loams_batch_columns(b);
        loams_batch_reset(b);
    }
    vt->close(state);
    loams_ctx_free(ctx);
    loams_batch_free(b);
    return t;
}

int main(void)
{
    char *json = malloc((size_t)RECORDS * 1024);
    uint8_t *avro = malloc((size_t)RECORDS * 1024);
    loams_record *jr = calloc(RECORDS, sizeof *jr), *ar = calloc(RECORDS, sizeof *ar);
    static char schema[8192];
    if (json == NULL || avro == NULL || jr == NULL || ar == NULL) {
        return 1;
    }
    size_t jt = 0, at = 0;
    for (size_t i = 0; i < RECORDS; i++) {
        size_t n = ticket_gen(i, json + jt, 1024);
        jr[i] = (loams_record){NULL, 0, json + jt, n, 1000, 0, (int64_t)i, NULL, 0};
        cJSON *doc = cJSON_ParseWithLength(json + jt, n);
        if (doc == NULL) {
            return 1;
        }
        if (i == 0) {
            derive(doc, "ticket", schema, sizeof schema);
        }
        uint8_t *p = avro + at;
        p[0] = 0, p[1] = 0, p[2] = 0, p[3] = 0, p[4] = 1; /* Confluent header, id 1 */
        size_t m = 5 + encode(doc, p + 5);
        cJSON_Delete(doc);
        ar[i] = (loams_record){NULL, 0, (const char *)p, m, 1000, 0, (int64_t)i, NULL, 0};
        jt += n;
        at += m;
    }
    /* a registry with the schema as id 1 */
    char dir[] = "/tmp/loams-bench-avro-XXXXXX";
    loams_meta *meta;
    loams_meta_options mo = {.no_sync = 1};
    loams_objname subject;
    loams_schema_registered reg;
    char why[512];
    if (mkdtemp(dir) == NULL || loams_meta_open(dir, &mo, &meta, NULL) != 0 ||
        loams_objname_parse("bench.tickets", &subject, NULL, 0) != 0 ||
        loams_schema_register(meta, &subject, LOAMS_SCHEMA_CREATE, LOAMS_SCHEMA_AVRO,
                              LOAMS_COMPAT_BACKWARD, schema, strlen(schema), &reg, why, sizeof why,
                              NULL) != 0 ||
        reg.id != 1) {
        fprintf(stderr, "registry: %s\n", why);
        return 1;
    }
    const loams_host_api *h = loams_host_api_get();
    const loams_plugin_descriptor *jd = bench_json_entry(h), *ad = LOAMS_PLUGIN_ENTRY(h);
    size_t jcols, jfail, acols, afail;
    loams_option_kv kv[] = {{"subject", "bench.tickets"}};
    if (getenv("LOAMS_BENCH_AVRO_ONLY") != NULL) { /* for a profiler */
        for (int k = 0; k < 10; k++) {
            run(ad, kv, 1, meta, ar, &acols, &afail);
        }
        return 0;
    }
    if (getenv("LOAMS_BENCH_PROFILE") != NULL) { /* one run each, for callgrind */
        run(jd, NULL, 0, NULL, jr, &jcols, &jfail);
        run(ad, kv, 1, meta, ar, &acols, &afail);
        return 0;
    }
    /* the machine is shared: the best of three runs each, taken in turn */
    double tj = 1e9, ta = 1e9;
    for (int k = 0; k < 3; k++) {
        double t = run(jd, NULL, 0, NULL, jr, &jcols, &jfail);
        tj = t < tj ? t : tj;
        t = run(ad, kv, 1, meta, ar, &acols, &afail);
        ta = t < ta ? t : ta;
    }

    /* avro-c's reader loop on the same Avro values */
    avro_schema_t as;
    if (avro_schema_from_json_length(schema, strlen(schema), &as) != 0) {
        return 1;
    }
    avro_value_iface_t *iface = avro_generic_class_from_schema(as);
    avro_value_t v;
    avro_generic_value_new(iface, &v);
    double t0 = now();
    for (size_t i = 0; i < RECORDS; i++) {
        avro_reader_t r = avro_reader_memory(ar[i].value + 5, (int64_t)ar[i].value_len - 5);
        if (avro_value_read(r, &v) != 0) {
            return 1;
        }
        avro_reader_free(r);
    }
    double tc = now() - t0;
    avro_value_decref(&v);
    avro_value_iface_decref(iface);
    avro_schema_decref(as);

    /* python3-avro's reader loop on a tenth of them */
    char tmpl[] = "/tmp/loams-bench-avro-py-XXXXXX";
    int fd = mkstemp(tmpl);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    size_t py_n = RECORDS / 10;
    for (size_t i = 0; f != NULL && i < py_n; i++) {
        uint32_t len = (uint32_t)(ar[i].value_len - 5);
        fwrite(&len, 4, 1, f);
        fwrite(ar[i].value + 5, 1, len, f);
    }
    double py_rate = 0;
    if (f != NULL && fclose(f) == 0) {
        char cmd[16384];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c '\n"
                 "import io, struct, sys, time, avro.io, avro.schema\n"
                 "s = avro.schema.parse(sys.argv[1]); r = avro.io.DatumReader(s)\n"
                 "data = open(sys.argv[2], \"rb\").read(); vals = []; i = 0\n"
                 "while i < len(data):\n"
                 "    n = struct.unpack(\"<I\", data[i:i+4])[0]; vals.append(data[i+4:i+4+n]); "
                 "i += 4 + n\n"
                 "t = time.perf_counter()\n"
                 "for b in vals: r.read(avro.io.BinaryDecoder(io.BytesIO(b)))\n"
                 "print(len(vals) / (time.perf_counter() - t))' '%s' '%s'",
                 schema, tmpl);
        FILE *p = popen(cmd, "r");
        if (p != NULL) {
            if (fscanf(p, "%lf", &py_rate) != 1) {
                py_rate = 0;
            }
            pclose(p);
        }
    }
    unlink(tmpl);

    printf("bench-decoder-avro: %zu ticket records, batches of %d, one core, best of 3\n", RECORDS,
           BATCH);
    printf("  %-46s %10.0f records/s %8.1f MB/s  (%zu columns, %zu failed)\n",
           "decoder-json on the JSON tickets", RECORDS / tj, (double)jt / 1e6 / tj, jcols, jfail);
    printf("  %-46s %10.0f records/s %8.1f MB/s  (%zu columns, %zu failed)\n",
           "decoder-avro, Confluent framing, registry", RECORDS / ta, (double)at / 1e6 / ta, acols,
           afail);
    printf("  %-46s %10.0f records/s %8.1f MB/s\n", "reference: avro-c avro_value_read loop",
           RECORDS / tc, (double)at / 1e6 / tc);
    printf("  %-46s %10.0f records/s  (%zu records)\n", "reference: python3-avro DatumReader loop",
           py_rate, py_n);
    printf("  avro / json records/s: %.2f\n", tj / ta);
    loams_meta_close(meta);
    snprintf(why, sizeof why, "rm -rf %s", dir);
    if (system(why) != 0) {
        return 1;
    }
    free(jr);
    free(ar);
    free(json);
    free(avro);
    return (jfail || afail || py_rate <= 0) ? 1 : 0;
}
