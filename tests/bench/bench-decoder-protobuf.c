/*
 * bench-decoder-protobuf.c - decoder-protobuf records/s and MB/s of one
 * core on the support tickets of tests/bench/ticket_gen.c written as
 * Protobuf (a .proto derived from the first ticket: strings, int64s, a
 * repeated string and a nested message; each record in the Confluent wire
 * format with the message index byte), next to decoder-json on the same
 * tickets as JSON, in the same run, through the host API table with the
 * schema in a real registry.  Reference on the same message bytes:
 * python3-protobuf's parse loop (Message.FromString with the descriptor
 * built at run time from the same .proto text by protoc, on a tenth of
 * the records), timed alone.  decoder-json and decoder-protobuf run three
 * times each, in turn, and the best run counts.
 */
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

/* The .proto message of a JSON object (nested objects first), appended to s. */
static void derive(const cJSON *obj, const char *name, char *s, size_t cap)
{
    size_t o = strlen(s);
    snprintf(s + o, cap - o, "message %s {\n", name);
    int k = 1;
    for (const cJSON *m = obj->child; m != NULL; m = m->next, k++) {
        char sub[64];
        o = strlen(s);
        if (cJSON_IsString(m)) {
            snprintf(s + o, cap - o, "  string %s = %d;\n", m->string, k);
        } else if (cJSON_IsNumber(m)) {
            snprintf(s + o, cap - o, "  int64 %s = %d;\n", m->string, k);
        } else if (cJSON_IsBool(m)) {
            snprintf(s + o, cap - o, "  bool %s = %d;\n", m->string, k);
        } else if (cJSON_IsArray(m)) {
            snprintf(s + o, cap - o, "  repeated string %s = %d;\n", m->string, k);
        } else if (cJSON_IsObject(m)) {
            snprintf(sub, sizeof sub, "%c%s", m->string[0] - 32, m->string + 1);
            derive(m, sub, s, cap);
            o = strlen(s);
            snprintf(s + o, cap - o, "  %s %s = %d;\n", sub, m->string, k);
        } else {
            exit(2);
        }
    }
    o = strlen(s);
    snprintf(s + o, cap - o, "}\n");
}

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t o = 0;
    while (v >= 0x80) {
        out[o++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[o++] = (uint8_t)v;
    return o;
}

static size_t put_str(uint8_t *out, int field, const char *s)
{
    size_t n = strlen(s), o = put_varint(out, (uint64_t)field << 3 | 2);
    o += put_varint(out + o, n);
    memcpy(out + o, s, n);
    return o + n;
}

/* Encodes an object's members as derive() typed them (proto3: defaults
 * are not written). */
static size_t encode(const cJSON *v, uint8_t *out)
{
    size_t o = 0;
    int k = 1;
    for (const cJSON *m = v->child; m != NULL; m = m->next, k++) {
        if (cJSON_IsString(m)) {
            if (m->valuestring[0] != '\0') {
                o += put_str(out + o, k, m->valuestring);
            }
        } else if (cJSON_IsNumber(m)) {
            if ((int64_t)m->valuedouble != 0) {
                o += put_varint(out + o, (uint64_t)k << 3);
                o += put_varint(out + o, (uint64_t)(int64_t)m->valuedouble);
            }
        } else if (cJSON_IsBool(m)) {
            if (cJSON_IsTrue(m)) {
                o += put_varint(out + o, (uint64_t)k << 3);
                out[o++] = 1;
            }
        } else if (cJSON_IsArray(m)) {
            for (const cJSON *it = m->child; it != NULL; it = it->next) {
                o += put_str(out + o, k, it->valuestring);
            }
        } else {
            uint8_t sub[1024];
            size_t n = encode(m, sub);
            o += put_varint(out + o, (uint64_t)k << 3 | 2);
            o += put_varint(out + o, n);
            memcpy(out + o, sub, n);
            o += n;
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
    uint8_t *pb = malloc((size_t)RECORDS * 1024);
    loams_record *jr = calloc(RECORDS, sizeof *jr), *pr = calloc(RECORDS, sizeof *pr);
    static char schema[8192] = "syntax = \"proto3\";\npackage bench;\n";
    if (json == NULL || pb == NULL || jr == NULL || pr == NULL) {
        return 1;
    }
    size_t jt = 0, pt = 0;
    for (size_t i = 0; i < RECORDS; i++) {
        size_t n = ticket_gen(i, json + jt, 1024);
        jr[i] = (loams_record){NULL, 0, json + jt, n, 1000, 0, (int64_t)i, NULL, 0};
        cJSON *doc = cJSON_ParseWithLength(json + jt, n);
        if (doc == NULL) {
            return 1;
        }
        if (i == 0) {
            derive(doc, "Ticket", schema, sizeof schema);
        }
        uint8_t *p = pb + pt;
        /* Confluent header, id 1, message indexes [0] */
        p[0] = 0, p[1] = 0, p[2] = 0, p[3] = 0, p[4] = 1, p[5] = 0;
        size_t m = 6 + encode(doc, p + 6);
        cJSON_Delete(doc);
        pr[i] = (loams_record){NULL, 0, (const char *)p, m, 1000, 0, (int64_t)i, NULL, 0};
        jt += n;
        pt += m;
    }
    char dir[] = "/tmp/loams-bench-pb-XXXXXX";
    loams_meta *meta;
    loams_meta_options mo = {.no_sync = 1};
    loams_objname subject;
    loams_schema_registered reg;
    char why[512];
    if (mkdtemp(dir) == NULL || loams_meta_open(dir, &mo, &meta, NULL) != 0 ||
        loams_objname_parse("bench.tickets", &subject, NULL, 0) != 0 ||
        loams_schema_register(meta, &subject, LOAMS_SCHEMA_CREATE, LOAMS_SCHEMA_PROTOBUF,
                              LOAMS_COMPAT_BACKWARD, schema, strlen(schema), &reg, why, sizeof why,
                              NULL) != 0 ||
        reg.id != 1) {
        fprintf(stderr, "registry: %s\n", why);
        return 1;
    }
    const loams_host_api *h = loams_host_api_get();
    const loams_plugin_descriptor *jd = bench_json_entry(h), *pd = LOAMS_PLUGIN_ENTRY(h);
    size_t jcols, jfail, pcols, pfail;
    loams_option_kv kv[] = {{"subject", "bench.tickets"}};
    if (getenv("LOAMS_BENCH_PROTOBUF_ONLY") != NULL) { /* for a profiler */
        for (int k = 0; k < 10; k++) {
            run(pd, kv, 1, meta, pr, &pcols, &pfail);
        }
        return 0;
    }
    if (getenv("LOAMS_BENCH_PROFILE") != NULL) { /* one run each, for callgrind */
        run(jd, NULL, 0, NULL, jr, &jcols, &jfail);
        run(pd, kv, 1, meta, pr, &pcols, &pfail);
        return 0;
    }
    double tj = 1e9, tp = 1e9;
    for (int k = 0; k < 3; k++) {
        double t = run(jd, NULL, 0, NULL, jr, &jcols, &jfail);
        tj = t < tj ? t : tj;
        t = run(pd, kv, 1, meta, pr, &pcols, &pfail);
        tp = t < tp ? t : tp;
    }

    /* python3-protobuf's parse loop on a tenth of the messages */
    char work[] = "/tmp/loams-bench-pb-py-XXXXXX";
    double py_rate = 0;
    size_t py_n = RECORDS / 10;
    if (mkdtemp(work) != NULL) {
        char path[256];
        snprintf(path, sizeof path, "%s/t.proto", work);
        FILE *f = fopen(path, "w");
        int ok = f != NULL && fputs(schema, f) >= 0;
        ok = f != NULL && fclose(f) == 0 && ok;
        snprintf(path, sizeof path, "%s/msgs", work);
        f = ok ? fopen(path, "wb") : NULL;
        for (size_t i = 0; f != NULL && i < py_n; i++) {
            uint32_t len = (uint32_t)(pr[i].value_len - 6);
            fwrite(&len, 4, 1, f);
            fwrite(pr[i].value + 6, 1, len, f);
        }
        char cmd[4096];
        snprintf(
            cmd, sizeof cmd,
            "cd '%s' && protoc --descriptor_set_out=t.desc t.proto && /usr/bin/python3 -c '\n"
            "import struct, time\n"
            "from google.protobuf import descriptor_pb2, descriptor_pool, message_factory\n"
            "fds = descriptor_pb2.FileDescriptorSet.FromString(open(\"t.desc\", \"rb\").read())\n"
            "pool = descriptor_pool.DescriptorPool()\n"
            "[pool.Add(x) for x in fds.file]\n"
            "T = message_factory.MessageFactory(pool).GetPrototype("
            "pool.FindMessageTypeByName(\"bench.Ticket\"))\n"
            "data = open(\"msgs\", \"rb\").read(); vals = []; i = 0\n"
            "while i < len(data):\n"
            "    n = struct.unpack(\"<I\", data[i:i+4])[0]; vals.append(data[i+4:i+4+n]); "
            "i += 4 + n\n"
            "t = time.perf_counter()\n"
            "for b in vals: T.FromString(b)\n"
            "print(len(vals) / (time.perf_counter() - t))'",
            work);
        if (f != NULL && fclose(f) == 0) {
            FILE *p = popen(cmd, "r");
            if (p != NULL) {
                if (fscanf(p, "%lf", &py_rate) != 1) {
                    py_rate = 0;
                }
                pclose(p);
            }
        }
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
        if (system(cmd) != 0) {
            return 1;
        }
    }

    printf("bench-decoder-protobuf: %zu ticket records, batches of %d, one core, best of 3\n",
           RECORDS, BATCH);
    printf("  %-50s %10.0f records/s %8.1f MB/s  (%zu columns, %zu failed)\n",
           "decoder-json on the JSON tickets", RECORDS / tj, (double)jt / 1e6 / tj, jcols, jfail);
    printf("  %-50s %10.0f records/s %8.1f MB/s  (%zu columns, %zu failed)\n",
           "decoder-protobuf, Confluent framing, registry", RECORDS / tp, (double)pt / 1e6 / tp,
           pcols, pfail);
    printf("  %-50s %10.0f records/s  (%zu records)\n",
           "reference: python3-protobuf FromString loop", py_rate, py_n);
    printf("  protobuf / json records/s: %.2f\n", tj / tp);
    loams_meta_close(meta);
    snprintf(why, sizeof why, "rm -rf %s", dir);
    if (system(why) != 0) {
        return 1;
    }
    free(jr);
    free(pr);
    free(json);
    free(pb);
    return (jfail || pfail || py_rate <= 0) ? 1 : 0;
}
