/*
 * decoder_protobuf.c - the decoder-protobuf plugin (FORMAT protobuf): one
 * Protocol Buffers message per record, decoded at run time against a
 * schema from the registry (host->schema_by_id / schema_latest, ABI 1.5):
 * no code is generated per schema.
 *
 * Framing (option wire_format):
 *  - 'confluent' (the default): what the Confluent Protobuf serializers
 *    write: byte 0 (magic), the schema id in 4 bytes big-endian, the
 *    message indexes (a zigzag varint count, then that many zigzag varint
 *    indexes; the single byte 0 means [0], the file's first message), then
 *    the message.
 *  - 'bare': the message alone, of type `message` ('pkg.Type'; unset: the
 *    first message of the file) in the newest version of `subject`.
 *
 * Reading (option subject = 'ns.name'): every record is read with the
 * subject's newest version (asked for once per batch), the message the
 * writer named looked up there by its full name: Protobuf readers decode
 * by field number, so fields of a newer writer are skipped and fields the
 * writer lacks read as absent.  Without subject (Confluent framing only)
 * each record is read with its writer's schema.  Compiled readers are
 * cached per (schema id, message indexes).  pb_reader.h says why the wire
 * format is read by hand and which cell each type gives; the .proto text
 * is parsed by loams/kit/proto_schema.h (why: there).
 *
 * Columns: the message's fields, one column each, named as the fields; a
 * field named like an input column (key, value, timestamp, partition,
 * offset, headers) becomes "pb_<name>".  On a host of ABI 1.2 or later a
 * column no later stage reads is not stored.
 *
 * Errors are per record (host->batch_row_fail: the host prefixes
 * "partition P offset O: "), with the byte (from the record's first byte),
 * the field number and wire type, e.g. "schema id 3: at byte 17: field 4
 * (qty, int32) has wire type 2 (length-delimited), not 0 (varint)".  A
 * missing subject fails the whole batch (the link pauses).
 *
 * Threads: decode() on one state is never called from two threads at once
 * (loams/decoder.h); states share nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/plugin.h>

#include "loams/kit/decode_rows.h"
#include "loams/kit/mem.h"
#include "loams/kit/proto_schema.h"
#include "pb_reader.h"

static const loams_host_api *host;

#define MAX_ENTRIES 256
#define MAX_INDEXES 32

/* One (schema id, message indexes) and its reader, or why it has none. */
typedef struct entry {
    uint32_t id;
    uint8_t key[MAX_INDEXES * 5 + 1]; /* the index bytes as written */
    size_t keylen;
    loams_kit_pb_schema *schema; /* the writer's, when it is the one read with */
    pb_reader *rd;               /* NULL: err says why */
    char err[512];
    uint64_t gen;
    long *cols;
    uint8_t *wanted;
    size_t ncols;
} entry;

typedef struct pb_state {
    loams_ctx *ctx;
    loams_kit_host_mem hm;
    const char *subject; /* host-owned options, or NULL */
    const char *message;
    int bare;
    uint32_t reader_id;
    loams_kit_pb_schema *reader;
    entry *entries;
    size_t nentries;
    entry *last;
    loams_buf *text;
    pb_scratch scratch;
    loams_value *cells;
    size_t cells_cap;
    uint64_t gen;
} pb_state;

static const loams_kit_mem *mem(pb_state *s)
{
    return &s->hm.mem;
}

static void entry_clear(pb_state *s, entry *e)
{
    pb_reader_free(e->rd);
    loams_kit_pb_schema_free(e->schema);
    host->free(s->ctx, e->cols);
    host->free(s->ctx, e->wanted);
    memset(e, 0, sizeof *e);
}

static void entries_clear(pb_state *s)
{
    for (size_t i = 0; i < s->nentries; i++) {
        entry_clear(s, &s->entries[i]);
    }
    s->nentries = 0;
    s->last = NULL;
}

/* Fetches and parses schema `id` (format PROTOBUF). */
static int load_schema(pb_state *s, uint32_t id, loams_kit_pb_schema **out, char *err,
                       size_t errlen)
{
    char format[16];
    *out = NULL;
    int rc = host->schema_by_id(s->ctx, id, format, sizeof format, s->text);
    if (rc != 0) {
        snprintf(err, errlen, "%s",
                 rc == LOAMS_ENOTFOUND ? "no schema has this id" : "the registry cannot be read");
        return rc;
    }
    if (strcmp(format, "PROTOBUF") != 0) {
        snprintf(err, errlen, "it is a %s schema, not PROTOBUF", format);
        return LOAMS_EINPUT;
    }
    size_t len = 0;
    const char *text = host->buf_data(s->text, &len);
    loams_kit_err e;
    rc = loams_kit_pb_schema_parse(mem(s), text, len, out, &e);
    if (rc != 0) {
        snprintf(err, errlen, "the stored schema does not parse: %.400s", e.msg);
    }
    return rc;
}

/* Once per batch: the reader is the subject's newest version. */
static int refresh_reader(pb_state *s)
{
    if (s->subject == NULL) {
        return 0;
    }
    uint32_t id = 0;
    int rc = host->schema_latest(s->ctx, s->subject, &id, NULL, NULL, 0, NULL);
    if (rc != 0) {
        return rc;
    }
    if (id == s->reader_id && s->reader != NULL) {
        return 0;
    }
    char err[512];
    loams_kit_pb_schema *reader = NULL;
    if ((rc = load_schema(s, id, &reader, err, sizeof err)) != 0) {
        host->set_error(s->ctx, "decoder-protobuf: subject %s, schema id %u: %s", s->subject, id,
                        err);
        return rc == -ENOMEM ? rc : LOAMS_ESCHEMA;
    }
    if (s->bare && s->message != NULL && loams_kit_pb_message_find(reader, s->message) < 0) {
        host->set_error(s->ctx, "decoder-protobuf: subject %s, schema id %u has no message %s",
                        s->subject, id, s->message);
        loams_kit_pb_schema_free(reader);
        return LOAMS_ESCHEMA;
    }
    entries_clear(s);
    loams_kit_pb_schema_free(s->reader);
    s->reader = reader;
    if (s->reader_id != 0) {
        host->log(s->ctx, LOAMS_LOG_INFO,
                  "subject %s: reading with its newest version, schema id %u (was %u)", s->subject,
                  id, s->reader_id);
    }
    s->reader_id = id;
    return 0;
}

/* Builds entry e's reader: the writer's message (by indexes) read with the
 * reader schema (subject set) or the writer's.  Non-fatal failures go to
 * e->err; returns -ENOMEM only. */
static int entry_build(pb_state *s, entry *e, const int32_t *idx, size_t nidx)
{
    loams_kit_pb_schema *writer = NULL;
    const loams_kit_pb_schema *use;
    long mi;
    int rc;
    if (s->bare) {
        use = s->reader;
        mi = s->message != NULL ? loams_kit_pb_message_find(use, s->message)
                                : loams_kit_pb_message_at(use, NULL, 0);
    } else {
        rc = load_schema(s, e->id, &writer, e->err, sizeof e->err);
        if (rc != 0) {
            return rc == -ENOMEM ? rc : 0;
        }
        mi = loams_kit_pb_message_at(writer, idx, nidx);
        if (mi < 0) {
            snprintf(e->err, sizeof e->err, "the message indexes name no message of the schema");
            loams_kit_pb_schema_free(writer);
            return 0;
        }
        use = writer;
        if (s->reader != NULL) {
            const char *name = writer->messages[mi].full_name;
            long rmi = loams_kit_pb_message_find(s->reader, name);
            if (rmi < 0) {
                snprintf(e->err, sizeof e->err,
                         "message %.200s is not in the newest version of subject %.100s", name,
                         s->subject);
                loams_kit_pb_schema_free(writer);
                return 0;
            }
            loams_kit_pb_schema_free(writer);
            writer = NULL;
            use = s->reader;
            mi = rmi;
        }
    }
    if (mi < 0) {
        snprintf(e->err, sizeof e->err, "the schema has no message to read");
        loams_kit_pb_schema_free(writer);
        return 0;
    }
    if ((rc = pb_reader_compile(mem(s), use, mi, &e->rd)) != 0) {
        loams_kit_pb_schema_free(writer);
        return rc;
    }
    e->schema = writer;
    size_t n = pb_reader_columns(e->rd);
    e->ncols = n;
    e->cols = host->calloc(s->ctx, n + 1, sizeof *e->cols);
    e->wanted = host->calloc(s->ctx, n + 1, 1);
    if (e->cols == NULL || e->wanted == NULL) {
        return -ENOMEM;
    }
    return 0;
}

static int entry_for(pb_state *s, uint32_t id, const uint8_t *key, size_t keylen,
                     const int32_t *idx, size_t nidx, entry **out)
{
    entry *l = s->last;
    if (l != NULL && l->id == id && l->keylen == keylen && memcmp(l->key, key, keylen) == 0) {
        *out = l;
        return 0;
    }
    for (size_t i = 0; i < s->nentries; i++) {
        entry *e = &s->entries[i];
        if (e->id == id && e->keylen == keylen && memcmp(e->key, key, keylen) == 0) {
            *out = s->last = e;
            return 0;
        }
    }
    if (s->nentries == MAX_ENTRIES) {
        entries_clear(s);
    }
    if (s->entries == NULL) {
        s->entries = host->calloc(s->ctx, MAX_ENTRIES, sizeof *s->entries);
        if (s->entries == NULL) {
            return -ENOMEM;
        }
    }
    entry *e = &s->entries[s->nentries++];
    memset(e, 0, sizeof *e);
    e->id = id;
    memcpy(e->key, key, keylen);
    e->keylen = keylen;
    int rc = entry_build(s, e, idx, nidx);
    if (rc != 0) {
        entry_clear(s, e);
        s->nentries--;
        return rc;
    }
    *out = s->last = e;
    return 0;
}

static const char *const input_columns[] = {"key",       "value",  "timestamp",
                                            "partition", "offset", "headers"};

static const char *column_name(const char *name, char *renamed, size_t size)
{
    for (size_t i = 0; i < sizeof input_columns / sizeof input_columns[0]; i++) {
        if (strcmp(name, input_columns[i]) == 0) {
            snprintf(renamed, size, "pb_%s", name);
            return renamed;
        }
    }
    return name;
}

static int store_cells(pb_state *s, entry *e, loams_batch *batch, size_t row)
{
    if (e->gen != s->gen) {
        e->gen = s->gen;
        for (size_t k = 0; k < e->ncols; k++) {
            char renamed[80];
            const char *name = column_name(pb_reader_column(e->rd, k), renamed, sizeof renamed);
            e->cols[k] = -1;
            e->wanted[k] = !LOAMS_HOST_HAS(host, batch_column_wanted) ||
                           host->batch_column_wanted(batch, name, strlen(name));
        }
    }
    for (size_t k = 0; k < e->ncols; k++) {
        if (!e->wanted[k]) {
            continue;
        }
        if (e->cols[k] < 0) {
            char renamed[80];
            size_t col;
            const char *name = column_name(pb_reader_column(e->rd, k), renamed, sizeof renamed);
            int rc = host->batch_add_column(batch, name, &col);
            if (rc != 0) {
                return rc;
            }
            e->cols[k] = (long)col;
        }
        int rc = host->batch_set(batch, row, (size_t)e->cols[k], &s->cells[k]);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int zigzag_varint(const uint8_t **pp, const uint8_t *end, int64_t *out)
{
    uint64_t v = 0;
    const uint8_t *p = *pp;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= end) {
            return -1;
        }
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = (int64_t)((v >> 1) ^ (0 - (v & 1)));
            *pp = p;
            return 0;
        }
    }
    return -1;
}

/* Decodes one record; 0 also when the record failed (marked). */
static int decode_one(void *ud, loams_batch *batch, size_t row, const uint8_t *p, size_t n)
{
    pb_state *s = ud;
    uint32_t id;
    size_t base = 0;
    int32_t idx[MAX_INDEXES];
    size_t nidx = 0;
    const uint8_t *key = (const uint8_t *)"";
    size_t keylen = 0;
    if (s->bare) {
        id = s->reader_id;
    } else {
        if (n < 6 || p[0] != 0) {
            if (n > 0 && p[0] != 0) {
                return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                            "not in the Confluent wire format: byte 0 is 0x%02x, "
                                            "not the magic byte 0 (set wire_format = 'bare' for "
                                            "plain Protobuf messages)",
                                            p[0]);
            }
            return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                        "the value has %zu bytes: the Confluent wire format needs "
                                        "a magic byte, a 4-byte schema id and the message "
                                        "indexes before the message",
                                        n);
        }
        id = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
        const uint8_t *q = p + 5, *end = p + n;
        int64_t count;
        if (zigzag_varint(&q, end, &count) != 0 || count < 0 || count > MAX_INDEXES) {
            return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                        "schema id %u: at byte 5: the message index count is not "
                                        "a varint from 0 to %d",
                                        id, MAX_INDEXES);
        }
        for (int64_t i = 0; i < count; i++) {
            int64_t x;
            size_t at = (size_t)(q - p);
            if (zigzag_varint(&q, end, &x) != 0 || x < 0 || x > INT32_MAX) {
                return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                            "schema id %u: at byte %zu: message index %d is not a "
                                            "valid varint",
                                            id, at, (int)i);
            }
            idx[nidx++] = (int32_t)x;
        }
        key = p + 5;
        keylen = (size_t)(q - key);
        base = (size_t)(q - p);
    }
    entry *e;
    int rc = entry_for(s, id, key, keylen, idx, nidx, &e);
    if (rc != 0) {
        return rc;
    }
    if (e->rd == NULL) {
        return host->batch_row_fail(batch, row, LOAMS_ESCHEMA, "schema id %u: %s", id, e->err);
    }
    if (s->cells_cap < e->ncols) {
        loams_value *nc = host->realloc(s->ctx, s->cells, (e->ncols + 8) * sizeof *nc);
        if (nc == NULL) {
            return -ENOMEM;
        }
        s->cells = nc;
        s->cells_cap = e->ncols + 8;
    }
    char msg[512];
    rc = pb_reader_read(e->rd, p + base, n - base, base, s->cells, &s->scratch, msg, sizeof msg);
    if (rc == LOAMS_EINPUT) {
        return host->batch_row_fail(batch, row, LOAMS_EINPUT, "schema id %u: %s", id, msg);
    }
    if (rc != 0) {
        return rc;
    }
    return store_cells(s, e, batch, row);
}

/* ---- the vtable ---- */

static int pb_open(loams_ctx *ctx, void **state)
{
    if (!LOAMS_HOST_HAS(host, schema_latest)) {
        host->set_error(ctx,
                        "decoder-protobuf: this host has no schema registry (ABI %u.%u; 1.5 or "
                        "later is needed)",
                        host->abi_major, host->abi_minor);
        return LOAMS_EUNSUPPORTED;
    }
    const char *subject = host->option(ctx, "subject");
    if (subject == NULL || subject[0] == '\0') {
        subject = host->option(ctx, "schema"); /* FORMAT protobuf SCHEMA 'ns.s' MESSAGE ... */
    }
    const char *message = host->option(ctx, "message");
    const char *wire = host->option(ctx, "wire_format");
    int bare = wire != NULL && strcmp(wire, "bare") == 0;
    if (subject != NULL && subject[0] == '\0') {
        subject = NULL;
    }
    if (message != NULL && message[0] == '\0') {
        message = NULL;
    }
    if (bare && subject == NULL) {
        host->set_error(ctx, "decoder-protobuf: wire_format = 'bare' needs subject = 'ns.name' "
                             "(and message = 'pkg.Type'): bare messages do not say which schema "
                             "wrote them");
        return -EINVAL;
    }
    pb_state *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        host->set_error(ctx, "decoder-protobuf: out of memory");
        return -ENOMEM;
    }
    s->ctx = ctx;
    loams_kit_host_mem_init(&s->hm, host, ctx);
    s->scratch.mem = &s->hm.mem;
    s->subject = subject;
    s->message = message;
    s->bare = bare;
    if (host->buf_create(&s->text) != 0) {
        host->free(ctx, s);
        host->set_error(ctx, "decoder-protobuf: out of memory");
        return -ENOMEM;
    }
    *state = s;
    return 0;
}

static int pb_decode(void *state, loams_batch *batch)
{
    pb_state *s = state;
    int rc = refresh_reader(s);
    if (rc != 0) {
        return rc;
    }
    s->gen++;
    return loams_kit_decode_rows(host, s->ctx, batch, "decoder-protobuf", "Protobuf", decode_one,
                                 s);
}

static void pb_close(void *state)
{
    pb_state *s = state;
    if (s == NULL) {
        return;
    }
    entries_clear(s);
    host->free(s->ctx, s->entries);
    loams_kit_pb_schema_free(s->reader);
    pb_scratch_free(&s->scratch);
    host->free(s->ctx, s->cells);
    host->buf_free(s->text);
    host->free(s->ctx, s);
}

static const loams_decoder_vtable pb_vtable = {
    .size = sizeof(loams_decoder_vtable),
    .open = pb_open,
    .decode = pb_decode,
    .close = pb_close,
};

static const loams_option_spec pb_options[] = {
    {"subject", LOAMS_OPT_STRING, 0, NULL, NULL,
     "the schema registry subject ('ns.name', format PROTOBUF) whose newest version every record "
     "is read with (fields by number: a newer writer's fields are skipped); unset: each record "
     "is read with its writer's schema (Confluent framing only)"},
    {"schema", LOAMS_OPT_STRING, 0, NULL, NULL,
     "the same as subject (what FORMAT protobuf SCHEMA 'ns.name' MESSAGE 'pkg.Type' sets)"},
    {"message", LOAMS_OPT_STRING, 0, NULL, NULL,
     "for wire_format = 'bare': the message type of the records ('pkg.Type'); unset: the first "
     "message of the schema's file"},
    {"wire_format", LOAMS_OPT_ENUM, 0, "confluent", "confluent|bare",
     "'confluent': byte 0, a 4-byte big-endian schema id, the message indexes, then the message "
     "(the Kafka serializers' framing); 'bare': the message alone"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor pb_descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_DECODER,
    "decoder-protobuf",
    "1.0.0",
    "Protocol Buffers messages (Confluent wire format or bare) read with registry schemas",
    &pb_vtable,
    pb_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &pb_descriptor;
}
