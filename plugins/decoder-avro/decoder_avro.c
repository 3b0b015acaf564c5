/*
 * decoder_avro.c - the decoder-avro plugin (FORMAT avro): one Avro binary
 * value per record, its writer schema taken from the schema registry
 * (host->schema_by_id / schema_latest, ABI 1.5).
 *
 * Framing (option wire_format):
 *  - 'confluent' (the default): the Confluent wire format the Kafka
 *    serializers write: byte 0 (magic), the writer schema's id in 4 bytes
 *    big-endian, then the Avro binary value.
 *  - 'bare': the Avro binary value alone, written with the newest version
 *    of `subject`.
 *
 * Reading (option subject = 'ns.name'): every record is resolved from its
 * writer schema to the subject's newest version, the reader schema (Avro
 * "Schema Resolution": promotions, defaults for fields the writer lacks,
 * writer fields the reader lacks skipped, unions, enums by symbol), so
 * records written with older compatible versions decode into the same
 * columns without a pause.  The newest version is asked for once per
 * batch: a version added with ALTER SCHEMA becomes the reader from the
 * next batch on (new fields then reach the target by its additive
 * evolution).  Without subject (Confluent framing only) each record is
 * read with its own writer schema.  Compiled readers are cached per
 * writer id (avro_program.h says why they are written by hand, and
 * which cell each Avro type gives).
 *
 * Columns: the reader record's fields, one column each, named as the
 * fields; a field named like an input column (key, value, timestamp,
 * partition, offset, headers) becomes "avro_<name>".  A reader whose top
 * level is not a record gives one column, "avro".  On a host of ABI 1.2 or
 * later, a column no later stage reads is not stored (the record is still
 * read whole and checked).
 *
 * Errors are per record (host->batch_row_fail: the host prefixes
 * "partition P offset O: "), with the byte (from the record's first byte)
 * and what:
 *    not in the Confluent wire format: byte 0 is 0x7b, not the magic byte 0 (set wire_format =
 * 'bare' for plain Avro values) schema id 42: no schema has id 42 schema id 7: field 'email': the
 * writer's int cannot be read as string at byte 17: field 'address.zip': a length of 300 bytes, but
 * 12 bytes of the value are left A missing subject fails the whole batch (the link pauses with it).
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

#include "avro_program.h"
#include "loams/kit/decode_rows.h"
#include "loams/kit/avro_schema.h"
#include "loams/kit/mem.h"

static const loams_host_api *host;

#define MAX_WRITERS 256

/* One writer schema id and its reader (or why it has none). */
typedef struct writer_entry {
    uint32_t id;
    loams_kit_avro_schema *schema;
    avro_program *prog; /* NULL: err says why its records fail */
    char err[512];
    uint64_t gen;    /* the batch cols was looked up for */
    long *cols;      /* per program column: the batch column, -1 unknown */
    uint8_t *wanted; /* per program column */
    size_t ncols;
} writer_entry;

typedef struct avro_state {
    loams_ctx *ctx;
    loams_kit_host_mem hm;
    const char *subject; /* host-owned option, or NULL */
    int bare;
    uint32_t reader_id; /* 0: none yet */
    loams_kit_avro_schema *reader;
    writer_entry *writers;
    size_t nwriters;
    writer_entry *last; /* the entry of the last record */
    loams_buf *text;
    avro_scratch scratch;
    loams_value *cells;
    size_t cells_cap;
    uint64_t gen;
} avro_state;

static const loams_kit_mem *mem(avro_state *s)
{
    return &s->hm.mem;
}

static void entry_clear(avro_state *s, writer_entry *w)
{
    avro_program_free(w->prog);
    loams_kit_avro_schema_free(w->schema);
    host->free(s->ctx, w->cols);
    host->free(s->ctx, w->wanted);
    memset(w, 0, sizeof *w);
}

static void writers_clear(avro_state *s)
{
    for (size_t i = 0; i < s->nwriters; i++) {
        entry_clear(s, &s->writers[i]);
    }
    s->nwriters = 0;
    s->last = NULL;
}

/* Fetches and parses schema `id` (format AVRO) into *out. */
static int load_schema(avro_state *s, uint32_t id, loams_kit_avro_schema **out, char *err,
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
    if (strcmp(format, "AVRO") != 0) {
        snprintf(err, errlen, "it is a %s schema, not AVRO", format);
        return LOAMS_EINPUT;
    }
    size_t len = 0;
    const char *text = host->buf_data(s->text, &len);
    loams_kit_err e;
    rc = loams_kit_avro_schema_parse(mem(s), text, len, out, &e);
    if (rc != 0) {
        snprintf(err, errlen, "the stored schema does not parse: %.400s", e.msg);
    }
    return rc;
}

/* Makes sure the reader is the subject's newest version: once per batch.
 * A new version drops the compiled readers.  Non-zero fails the batch. */
static int refresh_reader(avro_state *s)
{
    if (s->subject == NULL) {
        return 0;
    }
    uint32_t id = 0;
    int rc = host->schema_latest(s->ctx, s->subject, &id, NULL, NULL, 0, NULL);
    if (rc != 0) {
        return rc; /* the host set the message: no such subject */
    }
    if (id == s->reader_id && s->reader != NULL) {
        return 0;
    }
    char err[512];
    loams_kit_avro_schema *reader = NULL;
    if ((rc = load_schema(s, id, &reader, err, sizeof err)) != 0) {
        host->set_error(s->ctx, "decoder-avro: subject %s, schema id %u: %s", s->subject, id, err);
        return rc == -ENOMEM ? rc : LOAMS_ESCHEMA;
    }
    writers_clear(s);
    loams_kit_avro_schema_free(s->reader);
    s->reader = reader;
    if (s->reader_id != 0) {
        host->log(s->ctx, LOAMS_LOG_INFO,
                  "subject %s: reading with its newest version, schema id %u (was %u)", s->subject,
                  id, s->reader_id);
    }
    s->reader_id = id;
    return 0;
}

/* The entry of writer id `id`, compiled against the reader (or itself). */
static int writer_for(avro_state *s, uint32_t id, writer_entry **out)
{
    if (s->last != NULL && s->last->id == id) {
        *out = s->last;
        return 0;
    }
    for (size_t i = 0; i < s->nwriters; i++) {
        if (s->writers[i].id == id) {
            *out = s->last = &s->writers[i];
            return 0;
        }
    }
    if (s->nwriters == MAX_WRITERS) {
        writers_clear(s); /* rare: many ids in one stream; start again */
    }
    if (s->writers == NULL) {
        s->writers = host->calloc(s->ctx, MAX_WRITERS, sizeof *s->writers);
        if (s->writers == NULL) {
            return -ENOMEM;
        }
    }
    writer_entry *w = &s->writers[s->nwriters++];
    memset(w, 0, sizeof *w);
    w->id = id;
    int rc = load_schema(s, id, &w->schema, w->err, sizeof w->err);
    if (rc == -ENOMEM) {
        s->nwriters--;
        return rc;
    }
    if (rc == 0) {
        const loams_kit_avro_node *wr = loams_kit_avro_schema_root(w->schema);
        const loams_kit_avro_node *rd =
            s->reader != NULL ? loams_kit_avro_schema_root(s->reader) : wr;
        loams_kit_err e;
        rc = avro_program_compile(mem(s), wr, rd, &w->prog, &e);
        if (rc == -ENOMEM) {
            entry_clear(s, w);
            s->nwriters--;
            return rc;
        }
        if (rc != 0) {
            snprintf(w->err, sizeof w->err, "%.200s%s (reader: subject %s)", e.msg, "",
                     s->subject != NULL ? s->subject : "-");
        } else {
            size_t n = avro_program_columns(w->prog);
            w->ncols = n;
            w->cols = host->calloc(s->ctx, n + 1, sizeof *w->cols);
            w->wanted = host->calloc(s->ctx, n + 1, 1);
            if (w->cols == NULL || w->wanted == NULL) {
                entry_clear(s, w);
                s->nwriters--;
                return -ENOMEM;
            }
        }
    }
    *out = s->last = w;
    return 0;
}

static const char *const input_columns[] = {"key",       "value",  "timestamp",
                                            "partition", "offset", "headers"};

static const char *column_name(const char *name, char *renamed, size_t size)
{
    for (size_t i = 0; i < sizeof input_columns / sizeof input_columns[0]; i++) {
        if (strcmp(name, input_columns[i]) == 0) {
            snprintf(renamed, size, "avro_%s", name);
            return renamed;
        }
    }
    return name;
}

/* Looks the entry's columns up for this batch. */
static void columns_for_batch(avro_state *s, writer_entry *w, const loams_batch *batch)
{
    if (w->gen == s->gen) {
        return;
    }
    w->gen = s->gen;
    for (size_t k = 0; k < w->ncols; k++) {
        char renamed[80];
        const char *name = column_name(avro_program_column(w->prog, k), renamed, sizeof renamed);
        w->cols[k] = -1;
        w->wanted[k] = !LOAMS_HOST_HAS(host, batch_column_wanted) ||
                       host->batch_column_wanted(batch, name, strlen(name));
    }
}

static int store_cells(avro_state *s, writer_entry *w, loams_batch *batch, size_t row)
{
    for (size_t k = 0; k < w->ncols; k++) {
        if (!w->wanted[k]) {
            continue;
        }
        if (w->cols[k] < 0) {
            char renamed[80];
            size_t col;
            const char *name =
                column_name(avro_program_column(w->prog, k), renamed, sizeof renamed);
            int rc = host->batch_add_column(batch, name, &col);
            if (rc != 0) {
                return rc;
            }
            w->cols[k] = (long)col;
        }
        int rc = host->batch_set(batch, row, (size_t)w->cols[k], &s->cells[k]);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Decodes one record; 0 also when the record failed (marked). */
static int decode_one(void *ud, loams_batch *batch, size_t row, const uint8_t *p, size_t n)
{
    avro_state *s = ud;
    uint32_t id;
    size_t base = 0;
    if (s->bare) {
        id = s->reader_id;
    } else {
        if (n < 5 || p[0] != 0) {
            if (n == 0) {
                return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                            "empty value (expected the Confluent wire format: "
                                            "byte 0, a 4-byte schema id, the Avro value)");
            }
            if (p[0] != 0) {
                return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                            "not in the Confluent wire format: byte 0 is 0x%02x, "
                                            "not the magic byte 0 (set wire_format = 'bare' for "
                                            "plain Avro values)",
                                            p[0]);
            }
            return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                        "the value has %zu bytes: the Confluent wire format needs "
                                        "5 before the Avro value",
                                        n);
        }
        id = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
        base = 5;
    }
    writer_entry *w;
    int rc = writer_for(s, id, &w);
    if (rc != 0) {
        return rc;
    }
    if (w->prog == NULL) {
        return host->batch_row_fail(batch, row, LOAMS_ESCHEMA, "schema id %u: %s", id, w->err);
    }
    size_t ncols = w->ncols;
    if (s->cells_cap < ncols) {
        loams_value *nc = host->realloc(s->ctx, s->cells, (ncols + 8) * sizeof *nc);
        if (nc == NULL) {
            return -ENOMEM;
        }
        s->cells = nc;
        s->cells_cap = ncols + 8;
    }
    memset(s->cells, 0, ncols * sizeof *s->cells);
    char msg[512];
    rc = avro_program_read(w->prog, p + base, n - base, base, s->cells, &s->scratch, msg,
                           sizeof msg);
    if (rc == LOAMS_EINPUT) {
        return host->batch_row_fail(batch, row, LOAMS_EINPUT, "schema id %u: %s", id, msg);
    }
    if (rc != 0) {
        return rc;
    }
    columns_for_batch(s, w, batch);
    return store_cells(s, w, batch, row);
}

/* ---- the vtable ---- */

static int avro_open(loams_ctx *ctx, void **state)
{
    if (!LOAMS_HOST_HAS(host, schema_latest)) {
        host->set_error(ctx,
                        "decoder-avro: this host has no schema registry (ABI %u.%u; 1.5 or "
                        "later is needed)",
                        host->abi_major, host->abi_minor);
        return LOAMS_EUNSUPPORTED;
    }
    const char *subject = host->option(ctx, "subject");
    const char *wire = host->option(ctx, "wire_format");
    int bare = wire != NULL && strcmp(wire, "bare") == 0;
    if (subject != NULL && subject[0] == '\0') {
        subject = NULL;
    }
    if (bare && subject == NULL) {
        host->set_error(ctx, "decoder-avro: wire_format = 'bare' needs subject = 'ns.name': bare "
                             "values do not say which schema wrote them");
        return -EINVAL;
    }
    avro_state *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        host->set_error(ctx, "decoder-avro: out of memory");
        return -ENOMEM;
    }
    s->ctx = ctx;
    loams_kit_host_mem_init(&s->hm, host, ctx);
    s->scratch.mem = &s->hm.mem;
    s->subject = subject;
    s->bare = bare;
    if (host->buf_create(&s->text) != 0) {
        host->free(ctx, s);
        host->set_error(ctx, "decoder-avro: out of memory");
        return -ENOMEM;
    }
    *state = s;
    return 0;
}

static int avro_decode(void *state, loams_batch *batch)
{
    avro_state *s = state;
    int rc = refresh_reader(s);
    if (rc != 0) {
        return rc;
    }
    s->gen++;
    return loams_kit_decode_rows(host, s->ctx, batch, "decoder-avro", "Avro", decode_one, s);
}

static void avro_close(void *state)
{
    avro_state *s = state;
    if (s == NULL) {
        return;
    }
    writers_clear(s);
    host->free(s->ctx, s->writers);
    loams_kit_avro_schema_free(s->reader);
    avro_scratch_free(&s->scratch);
    host->free(s->ctx, s->cells);
    host->buf_free(s->text);
    host->free(s->ctx, s);
}

static const loams_decoder_vtable avro_vtable = {
    .size = sizeof(loams_decoder_vtable),
    .open = avro_open,
    .decode = avro_decode,
    .close = avro_close,
};

static const loams_option_spec avro_options[] = {
    {"subject", LOAMS_OPT_STRING, 0, NULL, NULL,
     "the schema registry subject ('ns.name') whose newest version is the reader schema (and "
     "the writer's for wire_format = 'bare'); unset: each record is read with its own writer "
     "schema"},
    {"wire_format", LOAMS_OPT_ENUM, 0, "confluent", "confluent|bare",
     "'confluent': byte 0, a 4-byte big-endian schema id, then the Avro value (the Kafka "
     "serializers' framing); 'bare': the Avro value alone, written with the subject's newest "
     "version"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor avro_descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_DECODER,
    "decoder-avro",
    "1.0.0",
    "Avro binary values (Confluent wire format or bare) resolved against the schema registry",
    &avro_vtable,
    avro_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &avro_descriptor;
}
