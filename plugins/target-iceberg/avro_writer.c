/*
 * avro_writer.c - Avro binary encoding and object container files.
 */
#include "avro_writer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <cjson/cJSON.h>
#include <zlib.h>

/* ---- binary encoding ---- */

int loams__avro_put_boolean(loams_kit_buf *b, int v)
{
    return loams_kit_buf_append_byte(b, v ? 1 : 0);
}

int loams__avro_put_int(loams_kit_buf *b, int32_t v)
{
    return loams_kit_buf_append_varint(b, loams_kit_zigzag64(v));
}

int loams__avro_put_long(loams_kit_buf *b, int64_t v)
{
    return loams_kit_buf_append_varint(b, loams_kit_zigzag64(v));
}

int loams__avro_put_float(loams_kit_buf *b, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return loams_kit_buf_append_le32(b, bits);
}

int loams__avro_put_double(loams_kit_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return loams_kit_buf_append_le64(b, bits);
}

int loams__avro_put_bytes(loams_kit_buf *b, const void *p, size_t n)
{
    int rc = loams__avro_put_long(b, (int64_t)n);
    return rc ? rc : loams_kit_buf_append(b, p, n);
}

int loams__avro_put_string(loams_kit_buf *b, const char *s, size_t n)
{
    return loams__avro_put_bytes(b, s, n);
}

int loams__avro_put_fixed(loams_kit_buf *b, const void *p, size_t n)
{
    return loams_kit_buf_append(b, p, n);
}

int loams__avro_put_union(loams_kit_buf *b, int64_t branch)
{
    return loams__avro_put_long(b, branch);
}

int loams__avro_put_block_count(loams_kit_buf *b, int64_t count)
{
    return count > 0 ? loams__avro_put_long(b, count) : -EINVAL;
}

int loams__avro_put_block_end(loams_kit_buf *b)
{
    return loams_kit_buf_append_byte(b, 0);
}

/* ---- container file writer ---- */

struct loams__avro_writer {
    const loams_kit_mem *mem;
    loams__sink sink;
    loams__avro_codec codec;
    size_t block_bytes;
    uint8_t sync[16];
    loams_kit_buf block;      /* encoded objects of the pending block */
    loams_kit_buf compressed; /* deflate output / block framing */
    uint64_t block_count;
    uint64_t count;
    uint64_t offset;
    z_stream z;
    int z_ready;
    int status;
    int closed;
    char err[256];
};

__attribute__((format(printf, 3, 4))) static int set_error(char *err, size_t errlen,
                                                           const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

void loams__avro_options_init(loams__avro_options *o)
{
    memset(o, 0, sizeof(*o));
    o->codec = LOAMS__AVRO_CODEC_NULL;
    o->deflate_level = 6;
    o->block_bytes = 64 << 10;
}

static int sink_write(loams__avro_writer *w, const void *p, size_t n)
{
    if (w->status) {
        return w->status;
    }
    int rc = n ? w->sink.write(w->sink.ud, p, n) : 0;
    if (rc) {
        w->status = rc;
        snprintf(w->err, sizeof(w->err),
                 "avro writer: the sink refused %zu bytes at offset %llu (status %d)", n,
                 (unsigned long long)w->offset, rc);
        return rc;
    }
    w->offset += n;
    return 0;
}

static int fail_nomem(loams__avro_writer *w)
{
    if (!w->status) {
        w->status = -ENOMEM;
        snprintf(w->err, sizeof(w->err), "avro writer: out of memory");
    }
    return w->status;
}

static int write_block(loams__avro_writer *w)
{
    if (w->block_count == 0) {
        return 0;
    }
    const uint8_t *data = w->block.data;
    size_t len = w->block.len;
    loams_kit_buf_clear(&w->compressed);
    if (w->codec == LOAMS__AVRO_CODEC_DEFLATE) {
        uLong bound = deflateBound(&w->z, (uLong)len);
        /* Room for the block's count and size varints ahead of the data. */
        if (loams_kit_buf_reserve(&w->compressed, (size_t)bound + 20)) {
            return fail_nomem(w);
        }
        if (deflateReset(&w->z) != Z_OK) {
            w->status = -EIO;
            snprintf(w->err, sizeof(w->err), "avro writer: deflateReset failed");
            return w->status;
        }
        uint8_t *dst = w->compressed.data + 20;
        w->z.next_in = (Bytef *)data;
        w->z.avail_in = (uInt)len;
        w->z.next_out = dst;
        w->z.avail_out = (uInt)bound;
        int zr = deflate(&w->z, Z_FINISH);
        if (zr != Z_STREAM_END) {
            w->status = -EIO;
            snprintf(w->err, sizeof(w->err), "avro writer: deflate failed (%d)", zr);
            return w->status;
        }
        data = dst;
        len = (size_t)(bound - w->z.avail_out);
    }
    uint8_t head[20];
    loams_kit_buf hb = {head, 0, sizeof(head), NULL};
    /* hb never grows: 2 varints take at most 20 bytes. */
    loams__avro_put_long(&hb, (int64_t)w->block_count);
    loams__avro_put_long(&hb, (int64_t)len);
    int rc = sink_write(w, head, hb.len);
    if (!rc) {
        rc = sink_write(w, data, len);
    }
    if (!rc) {
        rc = sink_write(w, w->sync, sizeof(w->sync));
    }
    loams_kit_buf_clear(&w->block);
    w->block_count = 0;
    return rc;
}

loams_kit_buf *loams__avro_writer_datum(loams__avro_writer *w)
{
    return &w->block;
}

int loams__avro_writer_end_datum(loams__avro_writer *w)
{
    if (w->status) {
        return w->status;
    }
    if (w->closed) {
        snprintf(w->err, sizeof(w->err), "avro writer: the file is already closed");
        return -EINVAL;
    }
    w->block_count++;
    w->count++;
    if (w->block.len >= w->block_bytes) {
        return write_block(w);
    }
    return 0;
}

int loams__avro_writer_close(loams__avro_writer *w)
{
    if (w->status) {
        return w->status;
    }
    if (w->closed) {
        snprintf(w->err, sizeof(w->err), "avro writer: the file is already closed");
        return -EINVAL;
    }
    int rc = write_block(w);
    if (!rc) {
        w->closed = 1;
    }
    return rc;
}

uint64_t loams__avro_writer_count(const loams__avro_writer *w)
{
    return w->count;
}

uint64_t loams__avro_writer_bytes(const loams__avro_writer *w)
{
    return w->offset;
}

const char *loams__avro_writer_error(const loams__avro_writer *w)
{
    return w->err;
}

void loams__avro_writer_free(loams__avro_writer *w)
{
    if (!w) {
        return;
    }
    if (w->z_ready) {
        deflateEnd(&w->z);
    }
    loams_kit_buf_free(&w->block);
    loams_kit_buf_free(&w->compressed);
    loams_kit_mem_free(w->mem, w);
}

static int put_meta(loams_kit_buf *h, const char *key, const void *value, size_t len)
{
    int rc = loams__avro_put_string(h, key, strlen(key));
    return rc ? rc : loams__avro_put_bytes(h, value, len);
}

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    return loams_kit_mem_calloc(opaque, items, size);
}

static void z_free(voidpf opaque, voidpf address)
{
    loams_kit_mem_free(opaque, address);
}

int loams__avro_writer_open(const loams__avro_options *opt, loams__sink sink,
                            loams__avro_writer **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!opt || !opt->schema_json || !sink.write) {
        return set_error(err, errlen, "avro writer: a schema and a sink are required");
    }
    cJSON *parsed = cJSON_Parse(opt->schema_json);
    if (!parsed) {
        return set_error(err, errlen, "avro writer: the schema is not valid JSON (near \"%.20s\")",
                         cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "");
    }
    cJSON_Delete(parsed);
    if (opt->codec != LOAMS__AVRO_CODEC_NULL && opt->codec != LOAMS__AVRO_CODEC_DEFLATE) {
        return set_error(err, errlen, "avro writer: unknown codec %d (use null or deflate)",
                         (int)opt->codec);
    }
    if (opt->codec == LOAMS__AVRO_CODEC_DEFLATE &&
        (opt->deflate_level < 1 || opt->deflate_level > 9)) {
        return set_error(err, errlen, "avro writer: deflate level %d is outside 1..9",
                         opt->deflate_level);
    }
    for (size_t i = 0; i < opt->nmetadata; i++) {
        const loams__avro_kv *kv = &opt->metadata[i];
        if (!kv->key || (!kv->value && kv->len) || strncmp(kv->key, "avro.", 5) == 0) {
            return set_error(err, errlen,
                             "avro writer: metadata key %zu (%s) is missing or reserved "
                             "(keys starting with \"avro.\" belong to Avro)",
                             i, kv->key ? kv->key : "NULL");
        }
    }
    const loams_kit_mem *mem = opt->mem ? opt->mem : loams_kit_mem_libc();
    loams__avro_writer *w = loams_kit_mem_calloc(mem, 1, sizeof(*w));
    if (!w) {
        return -ENOMEM;
    }
    w->mem = mem;
    w->sink = sink;
    w->codec = opt->codec;
    w->block_bytes = opt->block_bytes ? opt->block_bytes : 64 << 10;
    loams_kit_buf_init(&w->block, mem);
    loams_kit_buf_init(&w->compressed, mem);
    int rc = 0;
    if (opt->sync) {
        memcpy(w->sync, opt->sync, sizeof(w->sync));
    } else if (getrandom(w->sync, sizeof(w->sync), 0) != (ssize_t)sizeof(w->sync)) {
        rc = -EIO;
        set_error(err, errlen, "avro writer: no random bytes for the sync marker");
        goto fail;
    }
    if (w->codec == LOAMS__AVRO_CODEC_DEFLATE) {
        w->z.zalloc = z_alloc;
        w->z.zfree = z_free;
        w->z.opaque = (voidpf)mem;
        /* Negative window bits: raw deflate (RFC 1951), no zlib header. */
        if (deflateInit2(&w->z, opt->deflate_level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) !=
            Z_OK) {
            rc = -ENOMEM;
            goto fail;
        }
        w->z_ready = 1;
    }

    loams_kit_buf h;
    loams_kit_buf_init(&h, mem);
    const char *codec = w->codec == LOAMS__AVRO_CODEC_DEFLATE ? "deflate" : "null";
    rc = loams_kit_buf_append(&h, "Obj\x01", 4);
    if (!rc) {
        rc = loams__avro_put_block_count(&h, (int64_t)(2 + opt->nmetadata));
    }
    if (!rc) {
        rc = put_meta(&h, "avro.schema", opt->schema_json, strlen(opt->schema_json));
    }
    if (!rc) {
        rc = put_meta(&h, "avro.codec", codec, strlen(codec));
    }
    for (size_t i = 0; i < opt->nmetadata && !rc; i++) {
        rc = put_meta(&h, opt->metadata[i].key, opt->metadata[i].value, opt->metadata[i].len);
    }
    if (!rc) {
        rc = loams__avro_put_block_end(&h);
    }
    if (!rc) {
        rc = loams_kit_buf_append(&h, w->sync, sizeof(w->sync));
    }
    if (!rc) {
        rc = sink_write(w, h.data, h.len);
        if (rc) {
            set_error(err, errlen, "%s", w->err);
        }
    }
    loams_kit_buf_free(&h);
    if (rc) {
        goto fail;
    }
    *out = w;
    return 0;
fail:
    if (rc == -ENOMEM) {
        set_error(err, errlen, "avro writer: out of memory while opening");
    }
    loams__avro_writer_free(w);
    return rc;
}
