/*
 * source.c - owns a stream's source as the core reads it (see source.h):
 * the embedded source (the node's log behind loams/source.h's table: a
 * stream handle, its read slice, and the record and header arrays a read
 * hands over) and the opening of a source plugin (its context, built from
 * the options the catalog stored, and its state).
 */
#include "stream/source.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "abi/plugin_ctx.h"
#include "stream/streamlog_backend.h"

/* ---- the embedded source: the node's log ---- */

typedef struct log_source {
    loams_stream *stream;
    loams_stream_slice slice;
    loams_source_record *recs;
    size_t rcap;
    size_t *hfirst; /* per record: the index of its first header in hdrs */
    loams_source_header *hdrs;
    size_t hcap;
    loams_stream_err err;
} log_source;

static int log_partitions(void *state, uint32_t *count)
{
    log_source *ls = state;
    *count = loams_stream_definition(ls->stream)->partitions;
    return 0;
}

static int log_marks(void *state, int32_t partition, loams_source_marks *out)
{
    log_source *ls = state;
    loams_stream_partition_info info;
    int rc = loams_stream_partition_state(ls->stream, partition, &info, &ls->err);
    if (rc == 0) {
        *out = (loams_source_marks){info.low_offset, info.high_offset, info.bytes};
    }
    return rc;
}

/* Decodes the headers of every record of the slice into ls->hdrs (views
 * into the slice's snapshot); *total gets their number. */
static int log_headers(log_source *ls, size_t count, size_t *total)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        const loams_stream_record *sr = &ls->slice.records[i];
        size_t pos = 0, first = n;
        loams_stream_header h;
        int st;
        while (sr->headers_len > 0 &&
               (st = loams_stream_headers_next(sr->headers, sr->headers_len, &pos, &h)) != 0) {
            if (st < 0) {
                snprintf(ls->err.msg, sizeof ls->err.msg,
                         "partition %" PRId32 " offset %" PRId64 ": damaged headers",
                         ls->slice.partition, sr->offset);
                return st;
            }
            if (n == ls->hcap) {
                size_t cap = ls->hcap ? 2 * ls->hcap : 64;
                loams_source_header *g = realloc(ls->hdrs, cap * sizeof *g);
                if (g == NULL) {
                    snprintf(ls->err.msg, sizeof ls->err.msg, "out of memory");
                    return -ENOMEM;
                }
                ls->hdrs = g;
                ls->hcap = cap;
            }
            ls->hdrs[n++] = (loams_source_header){h.name, h.name_len, h.value, h.value_len};
        }
        ls->hfirst[i] = first;
        ls->recs[i].nheaders = n - first;
    }
    *total = n;
    return 0;
}

static int log_read(void *state, int32_t partition, int64_t from, int64_t upto, size_t max_records,
                    size_t max_bytes, loams_source_chunk *out)
{
    log_source *ls = state;
    int rc = loams_stream_read(ls->stream, partition, from, max_records, max_bytes, &ls->slice,
                               &ls->err);
    if (rc != 0) {
        return rc;
    }
    size_t count = ls->slice.count;
    while (count > 0 && ls->slice.records[count - 1].offset >= upto) {
        count--;
    }
    if (count > ls->rcap) {
        loams_source_record *g = realloc(ls->recs, count * sizeof *g);
        if (g != NULL) {
            ls->recs = g;
        }
        size_t *f = realloc(ls->hfirst, count * sizeof *f);
        if (f != NULL) {
            ls->hfirst = f;
        }
        if (g == NULL || f == NULL) {
            snprintf(ls->err.msg, sizeof ls->err.msg, "out of memory");
            return -ENOMEM;
        }
        ls->rcap = count;
    }
    size_t bytes = 0, with_headers = 0;
    for (size_t i = 0; i < count; i++) {
        const loams_stream_record *sr = &ls->slice.records[i];
        ls->recs[i] = (loams_source_record){.offset = sr->offset,
                                            .timestamp_us = sr->timestamp_us,
                                            .key = sr->key,
                                            .key_len = sr->key_len,
                                            .value = sr->value,
                                            .value_len = sr->value_len};
        bytes += sr->key_len + sr->value_len + sr->headers_len;
        with_headers += sr->headers_len > 0;
    }
    if (with_headers > 0) {
        size_t total;
        if ((rc = log_headers(ls, count, &total)) != 0) {
            return rc;
        }
        for (size_t i = 0; i < count; i++) {
            ls->recs[i].headers = ls->recs[i].nheaders > 0 ? ls->hdrs + ls->hfirst[i] : NULL;
        }
    }
    out->records = ls->recs;
    out->count = count;
    out->bytes = count == ls->slice.count ? ls->slice.bytes : bytes;
    out->next_offset = count > 0 ? ls->recs[count - 1].offset + 1 : from;
    return 0;
}

static void log_release(void *state)
{
    log_source *ls = state;
    loams_stream_slice_release(&ls->slice);
}

static void log_close(void *state)
{
    log_source *ls = state;
    if (ls == NULL) {
        return;
    }
    loams_stream_slice_free(&ls->slice);
    loams_stream_close(ls->stream);
    free(ls->recs);
    free(ls->hfirst);
    free(ls->hdrs);
    free(ls);
}

/* The embedded source's table (its open is log_open below: it takes the
 * log, not a context). */
static const loams_source_vtable log_vtable = {.size = sizeof(loams_source_vtable),
                                               .open = NULL,
                                               .partitions = log_partitions,
                                               .marks = log_marks,
                                               .read = log_read,
                                               .release = log_release,
                                               .committed = NULL,
                                               .close = log_close};

static int log_open(loams_streamlog *log, const loams_objname *name, log_source **out,
                    loams_stream_err *err)
{
    log_source *ls = calloc(1, sizeof *ls);
    if (ls == NULL) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return -ENOMEM;
    }
    int rc = loams_stream_open(log, name, &ls->stream, err);
    if (rc != 0) {
        free(ls);
        return rc;
    }
    loams_stream_slice_init(&ls->slice);
    *out = ls;
    return 0;
}

/* ---- the handle ---- */

struct loams_source {
    loams_stream_def def;
    const loams_source_vtable *vt;
    void *state;
    loams_ctx *ctx;      /* a plugin's; NULL for the embedded source */
    log_source *log_src; /* the embedded source's state; NULL for a plugin */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* The message of the failed call on s. */
static void call_error(loams_source *s, char *err, size_t errlen)
{
    if (err == NULL || errlen == 0) {
        return;
    }
    if (s->ctx != NULL) {
        loams_ctx_error(s->ctx, err, errlen);
        if (err[0] == '\0') {
            snprintf(err, errlen, "%s failed without a message", s->def.source);
        }
    } else {
        snprintf(err, errlen, "%s", s->log_src->err.msg);
    }
}

/* The options the catalog stored ({"name": "value", ...}) as kv pairs
 * pointing into *tree (the caller's: cJSON_Delete). */
static int options_of(const loams_stream_def *def, cJSON **tree, loams_option_kv **kv, size_t *n,
                      char *err, size_t errlen)
{
    *tree = NULL;
    *kv = NULL;
    *n = 0;
    if (def->source_options[0] == '\0') {
        return 0;
    }
    cJSON *o = cJSON_Parse(def->source_options);
    if (o == NULL || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        set_err(err, errlen, "stream %s.%s: its stored source options are damaged", def->name.ns,
                def->name.name);
        return LOAMS_ECORRUPT;
    }
    size_t count = (size_t)cJSON_GetArraySize(o);
    loams_option_kv *a = calloc(count ? count : 1, sizeof *a);
    if (a == NULL) {
        cJSON_Delete(o);
        return -ENOMEM;
    }
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        if (!cJSON_IsString(it)) {
            free(a);
            cJSON_Delete(o);
            set_err(err, errlen, "stream %s.%s: its stored source option %s is not text",
                    def->name.ns, def->name.name, it->string);
            return LOAMS_ECORRUPT;
        }
        a[i++] = (loams_option_kv){it->string, it->valuestring};
    }
    *tree = o;
    *kv = a;
    *n = i;
    return 0;
}

static _Atomic(const loams_registry *) default_registry;

void loams_source_set_registry(const loams_registry *r)
{
    atomic_store(&default_registry, r);
}

static int plugin_open(loams_source *s, const loams_registry *registry,
                       const loams_source_reader *reader, char *err, size_t errlen)
{
    const loams_plugin *p = NULL;
    if (registry == NULL) {
        registry = atomic_load(&default_registry);
    }
    if (registry == NULL ||
        loams_registry_find(registry, LOAMS_KIND_SOURCE, s->def.source, &p) != 0 ||
        p->descriptor == NULL) {
        set_err(err, errlen,
                "stream %s.%s is read through the source plugin '%s', which is not loaded "
                "(loams-host --list-plugins shows what is)",
                s->def.name.ns, s->def.name.name, s->def.source);
        return LOAMS_ENOTFOUND;
    }
    cJSON *tree;
    loams_option_kv *kv;
    size_t n;
    int rc = options_of(&s->def, &tree, &kv, &n, err, errlen);
    if (rc != 0) {
        return rc;
    }
    rc = loams_ctx_create(p->descriptor, kv, n, &s->ctx, err, errlen);
    free(kv);
    cJSON_Delete(tree);
    if (rc != 0) {
        return rc;
    }
    if (reader != NULL && reader->ctx_setup != NULL) {
        reader->ctx_setup(s->ctx, reader->ud);
    }
    s->vt = p->vtable;
    loams_source_spec spec = {.size = sizeof spec,
                              .ns = s->def.name.ns,
                              .name = s->def.name.name,
                              .link = reader != NULL ? reader->link : NULL,
                              .task = reader != NULL ? reader->task : NULL,
                              .epoch = reader != NULL ? reader->epoch : 0,
                              .first_partition = reader != NULL ? reader->first_partition : -1,
                              .last_partition = reader != NULL ? reader->last_partition : -1};
    loams_ctx *prev = loams_ctx_set_current(s->ctx);
    rc = s->vt->open(s->ctx, &spec, &s->state);
    loams_ctx_set_current(prev);
    if (rc != 0) {
        s->state = NULL;
        call_error(s, err, errlen);
    }
    return rc;
}

int loams_source_open(loams_streamlog *log, const loams_registry *registry,
                      const loams_objname *name, const loams_source_reader *reader,
                      loams_source **out, char *err, size_t errlen)
{
    loams_source *s = calloc(1, sizeof *s);
    if (s == NULL) {
        set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    loams_stream_err serr;
    int rc = loams_stream_describe(log, name, &s->def, &serr);
    if (rc != 0) {
        set_err(err, errlen, "%s", serr.msg);
    } else if (s->def.source[0] == '\0') {
        rc = log_open(log, name, &s->log_src, &serr);
        if (rc != 0) {
            set_err(err, errlen, "%s", serr.msg);
        } else {
            s->vt = &log_vtable;
            s->state = s->log_src;
        }
    } else {
        rc = plugin_open(s, registry, reader, err, errlen);
    }
    if (rc != 0) {
        loams_source_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

const loams_stream_def *loams_source_definition(const loams_source *s)
{
    return &s->def;
}

loams_ctx *loams_source_ctx(const loams_source *s)
{
    return s->ctx;
}

int loams_source_partitions(loams_source *s, uint32_t *count, char *err, size_t errlen)
{
    loams_ctx *prev = s->ctx != NULL ? loams_ctx_set_current(s->ctx) : NULL;
    int rc = s->vt->partitions(s->state, count);
    if (s->ctx != NULL) {
        loams_ctx_set_current(prev);
    }
    if (rc != 0) {
        call_error(s, err, errlen);
    }
    return rc;
}

int loams_source_get_marks(loams_source *s, int32_t partition, loams_source_marks *out, char *err,
                           size_t errlen)
{
    memset(out, 0, sizeof *out);
    loams_ctx *prev = s->ctx != NULL ? loams_ctx_set_current(s->ctx) : NULL;
    int rc = s->vt->marks(s->state, partition, out);
    if (s->ctx != NULL) {
        loams_ctx_set_current(prev);
    }
    if (rc != 0) {
        call_error(s, err, errlen);
    }
    return rc;
}

int loams_source_read(loams_source *s, int32_t partition, int64_t from, int64_t upto,
                      size_t max_records, size_t max_bytes, loams_source_chunk *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->next_offset = from;
    loams_ctx *prev = s->ctx != NULL ? loams_ctx_set_current(s->ctx) : NULL;
    int rc = s->vt->read(s->state, partition, from, upto, max_records, max_bytes, out);
    if (s->ctx != NULL) {
        loams_ctx_set_current(prev);
    }
    if (rc != 0) {
        call_error(s, err, errlen);
        return rc;
    }
    if (out->next_offset < from || out->next_offset > upto ||
        (out->count > 0 && out->next_offset <= out->records[out->count - 1].offset)) {
        set_err(err, errlen,
                "source %s of %s.%s: a read of partition %" PRId32 " from offset %" PRId64
                " says the next read goes on at %" PRId64 ", which is not past its records",
                s->def.source, s->def.name.ns, s->def.name.name, partition, from, out->next_offset);
        return LOAMS_ECORRUPT;
    }
    return 0;
}

void loams_source_release(loams_source *s)
{
    if (s->vt->release != NULL) {
        s->vt->release(s->state);
    }
}

int loams_source_committed(loams_source *s, const loams_offsets *applied, char *err, size_t errlen)
{
    if (s->vt->size < offsetof(loams_source_vtable, committed) + sizeof s->vt->committed ||
        s->vt->committed == NULL) {
        return 0;
    }
    loams_ctx *prev = s->ctx != NULL ? loams_ctx_set_current(s->ctx) : NULL;
    int rc = s->vt->committed(s->state, applied);
    if (s->ctx != NULL) {
        loams_ctx_set_current(prev);
    }
    if (rc != 0) {
        call_error(s, err, errlen);
    }
    return rc;
}

void loams_source_close(loams_source *s)
{
    if (s == NULL) {
        return;
    }
    if (s->vt != NULL && s->state != NULL) {
        s->vt->close(s->state);
    } else if (s->log_src != NULL) {
        log_close(s->log_src);
    }
    loams_ctx_free(s->ctx);
    free(s);
}

int loams_source_headers_json(const loams_source_header *h, size_t n, loams_buf *out)
{
    if (n == 0) {
        return 0;
    }
    cJSON *obj = cJSON_CreateObject();
    int rc = obj == NULL ? -ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *name = loams__stream_header_text(h[i].name, h[i].name_len);
        char *value = name != NULL ? loams__stream_header_text(h[i].value, h[i].value_len) : NULL;
        if (value == NULL || cJSON_AddStringToObject(obj, name, value) == NULL) {
            rc = -ENOMEM;
        }
        free(name);
        free(value);
    }
    char *text = rc == 0 ? cJSON_PrintUnformatted(obj) : NULL;
    cJSON_Delete(obj);
    if (rc == 0 && text == NULL) {
        rc = -ENOMEM;
    }
    if (rc == 0) {
        rc = loams_buf_append(out, text, strlen(text));
    }
    cJSON_free(text);
    return rc;
}
