/* fuzz-avro.c - libFuzzer target for the Avro object container reader
 * (plugins/target-iceberg/avro_reader.c), which reads manifests and
 * manifest lists from the object store.  Properties:
 *   - any bytes read as a container end in 0 or LOAMS_ECORRUPT with a
 *     message (or -ENOMEM), never a crash, leak, UB or unbounded work;
 *   - a container that reads, re-encoded object by object
 *     (loams__avro_encode) and written again by avro_writer under its own
 *     schema, reads back into objects that encode to the same bytes;
 *   - a schema and objects generated from the input (every Avro type,
 *     nested), written by avro_writer (codec null or deflate, small blocks),
 *     read back into exactly the objects written: each one re-encodes to
 *     the bytes the writer was given for it. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "avro_reader.h"
#include "avro_writer.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sink_write(void *ud, const void *p, size_t n)
{
    return loams_kit_buf_append(ud, p, n);
}

/* ---- arbitrary bytes ---- */

static void rewrite(const loams__avro_file *f)
{
    loams_kit_buf file = {0}, first = {0}, second = {0};
    const char *schema = loams__avro_file_schema(f);
    loams__avro_options o;
    loams__avro_options_init(&o);
    o.schema_json = schema;
    loams__avro_writer *w = NULL;
    char err[512];
    if (loams__avro_writer_open(&o, (loams__sink){sink_write, &file}, &w, err, sizeof err) != 0) {
        return; /* a schema the reader takes but the writer refuses (e.g. NUL inside) */
    }
    size_t n = loams__avro_file_count(f);
    for (size_t i = 0; i < n; i++) {
        const loams__avro_value *v = loams__avro_file_object(f, i);
        if (loams__avro_encode(v, &first) != 0 ||
            loams__avro_encode(v, loams__avro_writer_datum(w)) != 0 ||
            loams__avro_writer_end_datum(w) != 0) {
            abort();
        }
    }
    if (loams__avro_writer_close(w) != 0) {
        abort();
    }
    loams__avro_file *g = NULL;
    if (loams__avro_file_read(NULL, file.data, file.len, &g, err, sizeof err) != 0 ||
        loams__avro_file_count(g) != n) {
        fprintf(stderr, "a rewritten container does not read back: %s\n", err);
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        if (loams__avro_encode(loams__avro_file_object(g, i), &second) != 0) {
            abort();
        }
    }
    if (first.len != second.len ||
        (first.len > 0 && memcmp(first.data, second.data, first.len) != 0)) {
        fprintf(stderr, "rewritten objects encode differently\n");
        abort();
    }
    loams__avro_file_free(g);
    loams__avro_writer_free(w);
    loams_kit_buf_free(&file);
    loams_kit_buf_free(&first);
    loams_kit_buf_free(&second);
}

static void read_any(const uint8_t *data, size_t size)
{
    loams__avro_file *f = NULL;
    char err[512] = "";
    int rc = loams__avro_file_read(NULL, data, size, &f, err, sizeof err);
    if (rc != 0) {
        if ((rc != LOAMS_ECORRUPT && rc != -ENOMEM) || err[0] == '\0' || f != NULL) {
            abort();
        }
        return;
    }
    rewrite(f);
    loams__avro_file_free(f);
}

/* ---- generated schemas and objects ---- */

enum {
    G_NULL,
    G_BOOL,
    G_INT,
    G_LONG,
    G_FLOAT,
    G_DOUBLE,
    G_BYTES,
    G_STRING,
    G_FIXED,
    G_ENUM,
    G_ARRAY,
    G_MAP,
    G_UNION,
    G_RECORD,
    G_KINDS
};

typedef struct gnode {
    int kind;
    size_t n; /* record fields, enum symbols, fixed size */
    struct gnode *sub[4];
} gnode;

typedef struct gen {
    fuzz_input *in;
    gnode nodes[256]; /* at most 48 + the pending siblings of 4 levels */
    size_t used;
    int names;
    char json[8192];
    size_t jlen;
} gen;

static void emit(gen *g, const char *s)
{
    size_t n = strlen(s);
    if (g->jlen + n < sizeof g->json) {
        memcpy(g->json + g->jlen, s, n + 1);
        g->jlen += n;
    }
}

/* in_union: the branch next to "null" in a union (no null, no union). */
static gnode *gen_schema(gen *g, int depth, int in_union)
{
    static const char *const prims[] = {"\"null\"",  "\"boolean\"", "\"int\"",   "\"long\"",
                                        "\"float\"", "\"double\"",  "\"bytes\"", "\"string\""};
    char buf[96];
    gnode *n = &g->nodes[g->used++];
    n->kind = (int)fuzz_below(g->in, G_KINDS);
    if (depth >= 3 || g->used > 48) {
        n->kind %= G_FIXED; /* a primitive */
    }
    if (in_union && (n->kind == G_NULL || n->kind == G_UNION)) {
        n->kind = G_LONG;
    }
    n->n = 0;
    if (n->kind < G_FIXED) {
        emit(g, prims[n->kind]);
        return n;
    }
    switch (n->kind) {
    case G_FIXED:
        n->n = fuzz_below(g->in, 9);
        snprintf(buf, sizeof buf, "{\"type\":\"fixed\",\"name\":\"x%d\",\"size\":%zu}", g->names++,
                 n->n);
        emit(g, buf);
        break;
    case G_ENUM:
        n->n = 1 + fuzz_below(g->in, 4);
        snprintf(buf, sizeof buf, "{\"type\":\"enum\",\"name\":\"e%d\",\"symbols\":[", g->names++);
        emit(g, buf);
        for (size_t i = 0; i < n->n; i++) {
            snprintf(buf, sizeof buf, "%s\"S%zu\"", i ? "," : "", i);
            emit(g, buf);
        }
        emit(g, "]}");
        break;
    case G_ARRAY:
    case G_MAP:
        emit(g, n->kind == G_ARRAY ? "{\"type\":\"array\",\"items\":"
                                   : "{\"type\":\"map\",\"values\":");
        n->sub[0] = gen_schema(g, depth + 1, 0);
        emit(g, "}");
        break;
    case G_UNION:
        emit(g, "[\"null\",");
        n->sub[0] = gen_schema(g, depth + 1, 1);
        emit(g, "]");
        break;
    default: /* G_RECORD */
        n->n = fuzz_below(g->in, 5);
        snprintf(buf, sizeof buf, "{\"type\":\"record\",\"name\":\"r%d\",\"fields\":[", g->names++);
        emit(g, buf);
        for (size_t i = 0; i < n->n; i++) {
            snprintf(buf, sizeof buf,
                     "%s{\"name\":\"f%zu\",\"field-id\":%zu,\"type\":", i ? "," : "", i, i);
            emit(g, buf);
            n->sub[i] = gen_schema(g, depth + 1, 0);
            emit(g, "}");
        }
        emit(g, "]}");
        break;
    }
    return n;
}

static int put_value(fuzz_input *in, const gnode *n, loams_kit_buf *b)
{
    size_t len;
    const uint8_t *p;
    int rc = 0;
    switch (n->kind) {
    case G_NULL: return 0;
    case G_BOOL: return loams__avro_put_boolean(b, fuzz_u8(in) & 1);
    case G_INT: return loams__avro_put_int(b, (int32_t)(uint32_t)fuzz_u64(in, 4));
    case G_LONG: return loams__avro_put_long(b, (int64_t)fuzz_u64(in, 8));
    case G_FLOAT: {
        /* The reader holds a float as a double: a signalling NaN comes back
         * quiet, so NaNs are generated quiet. */
        uint32_t u = (uint32_t)fuzz_u64(in, 4);
        float x;
        if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0) {
            u |= 0x00400000u;
        }
        memcpy(&x, &u, 4);
        return loams__avro_put_float(b, x);
    }
    case G_DOUBLE: {
        uint64_t u = fuzz_u64(in, 8);
        double x;
        memcpy(&x, &u, 8);
        return loams__avro_put_double(b, x);
    }
    case G_BYTES:
    case G_STRING: p = fuzz_bytes(in, 40, &len); return loams__avro_put_bytes(b, p, len);
    case G_FIXED: {
        uint8_t tmp[8] = {0};
        for (size_t i = 0; i < n->n; i++) {
            tmp[i] = fuzz_u8(in);
        }
        return loams__avro_put_fixed(b, tmp, n->n);
    }
    case G_ENUM: return loams__avro_put_long(b, (int64_t)fuzz_below(in, n->n));
    case G_ARRAY:
    case G_MAP: {
        size_t count = fuzz_below(in, 5);
        if (count > 0 && (rc = loams__avro_put_block_count(b, (int64_t)count)) != 0) {
            return rc;
        }
        for (size_t i = 0; i < count && rc == 0; i++) {
            if (n->kind == G_MAP) {
                p = fuzz_bytes(in, 8, &len);
                rc = loams__avro_put_string(b, (const char *)p, len);
            }
            if (rc == 0) {
                rc = put_value(in, n->sub[0], b);
            }
        }
        return rc != 0 ? rc : loams__avro_put_block_end(b);
    }
    case G_UNION: {
        int64_t branch = fuzz_u8(in) & 1;
        if ((rc = loams__avro_put_union(b, branch)) != 0 || branch == 0) {
            return rc;
        }
        return put_value(in, n->sub[0], b);
    }
    default:
        for (size_t i = 0; i < n->n && rc == 0; i++) {
            rc = put_value(in, n->sub[i], b);
        }
        return rc;
    }
}

static void round_trip(const uint8_t *data, size_t size)
{
    static gen g;
    fuzz_input in = {data, size};
    memset(&g, 0, sizeof g);
    g.in = &in;
    emit(&g, "");
    uint8_t opts = fuzz_u8(&in);
    const gnode *root = gen_schema(&g, 0, 0);
    loams__avro_options o;
    loams__avro_options_init(&o);
    uint8_t sync[16];
    for (int i = 0; i < 16; i++) {
        sync[i] = (uint8_t)(i * 17 + opts);
    }
    o.schema_json = g.json;
    o.codec = (opts & 1) ? LOAMS__AVRO_CODEC_DEFLATE : LOAMS__AVRO_CODEC_NULL;
    o.block_bytes = 1 + (opts >> 1) * 4;
    o.sync = sync;
    loams__avro_writer *w = NULL;
    loams_kit_buf file = {0}, datums = {0}, again = {0};
    size_t *ends = NULL, n = 0;
    char err[512];
    if (loams__avro_writer_open(&o, (loams__sink){sink_write, &file}, &w, err, sizeof err) != 0) {
        fprintf(stderr, "writer refuses the generated schema %s: %s\n", g.json, err);
        abort();
    }
    size_t max = 1 + fuzz_below(&in, 64);
    while (n < max && (n == 0 || in.n > 0)) {
        size_t start = datums.len;
        size_t *e2 = realloc(ends, (n + 1) * sizeof *e2);
        if (e2 == NULL || put_value(&in, root, &datums) != 0 ||
            (datums.len > start &&
             loams_kit_buf_append(loams__avro_writer_datum(w), datums.data + start,
                                  datums.len - start) != 0) ||
            loams__avro_writer_end_datum(w) != 0) {
            abort();
        }
        ends = e2;
        ends[n++] = datums.len;
    }
    if (loams__avro_writer_close(w) != 0) {
        abort();
    }
    loams__avro_file *f = NULL;
    if (loams__avro_file_read(NULL, file.data, file.len, &f, err, sizeof err) != 0) {
        fprintf(stderr, "a written file does not read: %s (schema %s)\n", err, g.json);
        abort();
    }
    if (loams__avro_file_count(f) != n) {
        fprintf(stderr, "%zu objects written, %zu read\n", n, loams__avro_file_count(f));
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        size_t start = i ? ends[i - 1] : 0;
        loams_kit_buf_clear(&again);
        if (loams__avro_encode(loams__avro_file_object(f, i), &again) != 0 ||
            again.len != ends[i] - start ||
            (again.len > 0 && memcmp(again.data, datums.data + start, again.len) != 0)) {
            fprintf(stderr, "object %zu reads back differently (schema %s)\n", i, g.json);
            abort();
        }
    }
    loams__avro_file_free(f);
    loams__avro_writer_free(w);
    loams_kit_buf_free(&file);
    loams_kit_buf_free(&datums);
    loams_kit_buf_free(&again);
    free(ends);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_any(data, size);
    round_trip(data, size);
    return 0;
}
