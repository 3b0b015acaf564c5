/*
 * thrift_compact.c - Thrift compact protocol encoder and pull decoder.
 */
#include "thrift_compact.h"

#include <errno.h>
#include <string.h>

#include <loams/status.h>

/* ---- encoder ---- */

void loams__thrift_writer_init(loams__thrift_writer *w, loams_kit_buf *out)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
}

int loams__thrift_writer_status(const loams__thrift_writer *w)
{
    return w->status;
}

static void put_byte(loams__thrift_writer *w, uint8_t b)
{
    if (!w->status) {
        w->status = loams_kit_buf_append_byte(w->out, b);
    }
}

static void put_uvarint(loams__thrift_writer *w, uint64_t v)
{
    if (!w->status) {
        w->status = loams_kit_buf_append_varint(w->out, v);
    }
}

static void put_bytes(loams__thrift_writer *w, const void *p, size_t n)
{
    if (!w->status) {
        w->status = loams_kit_buf_append(w->out, p, n);
    }
}

/* Writes the header of field `id` of `type` in the innermost struct. */
static void field_header(loams__thrift_writer *w, int16_t id, uint8_t type)
{
    if (w->status) {
        return;
    }
    if (w->depth == 0) {
        w->status = -EINVAL; /* a field outside any struct */
        return;
    }
    int16_t last = w->last_id[w->depth - 1];
    if (id <= last) {
        w->status = -EINVAL; /* ids must grow: the delta form depends on it */
        return;
    }
    int delta = id - last;
    if (delta <= 15) {
        put_byte(w, (uint8_t)(delta << 4 | type));
    } else {
        put_byte(w, type);
        put_uvarint(w, loams_kit_zigzag64(id));
    }
    w->last_id[w->depth - 1] = id;
}

void loams__thrift_struct_begin(loams__thrift_writer *w)
{
    if (w->status) {
        return;
    }
    if (w->depth >= LOAMS__THRIFT_MAX_DEPTH) {
        w->status = -EINVAL;
        return;
    }
    w->last_id[w->depth++] = 0;
}

void loams__thrift_struct_end(loams__thrift_writer *w)
{
    if (w->status) {
        return;
    }
    if (w->depth == 0) {
        w->status = -EINVAL;
        return;
    }
    put_byte(w, LOAMS__THRIFT_STOP);
    w->depth--;
}

void loams__thrift_field_bool(loams__thrift_writer *w, int16_t id, int value)
{
    field_header(w, id, value ? LOAMS__THRIFT_BOOL_TRUE : LOAMS__THRIFT_BOOL_FALSE);
}

void loams__thrift_field_i8(loams__thrift_writer *w, int16_t id, int8_t value)
{
    field_header(w, id, LOAMS__THRIFT_I8);
    put_byte(w, (uint8_t)value);
}

void loams__thrift_field_i16(loams__thrift_writer *w, int16_t id, int16_t value)
{
    field_header(w, id, LOAMS__THRIFT_I16);
    put_uvarint(w, loams_kit_zigzag64(value));
}

void loams__thrift_field_i32(loams__thrift_writer *w, int16_t id, int32_t value)
{
    field_header(w, id, LOAMS__THRIFT_I32);
    put_uvarint(w, loams_kit_zigzag64(value));
}

void loams__thrift_field_i64(loams__thrift_writer *w, int16_t id, int64_t value)
{
    field_header(w, id, LOAMS__THRIFT_I64);
    put_uvarint(w, loams_kit_zigzag64(value));
}

void loams__thrift_field_double(loams__thrift_writer *w, int16_t id, double value)
{
    /* Compact protocol doubles are little-endian IEEE 754. */
    uint64_t bits;
    uint8_t le[8];
    memcpy(&bits, &value, sizeof(bits));
    loams_kit_le64_put(le, bits);
    field_header(w, id, LOAMS__THRIFT_DOUBLE);
    put_bytes(w, le, sizeof(le));
}

void loams__thrift_field_binary(loams__thrift_writer *w, int16_t id, const void *p, size_t n)
{
    field_header(w, id, LOAMS__THRIFT_BINARY);
    loams__thrift_elem_binary(w, p, n);
}

void loams__thrift_field_string(loams__thrift_writer *w, int16_t id, const char *s)
{
    loams__thrift_field_binary(w, id, s, strlen(s));
}

void loams__thrift_field_struct_begin(loams__thrift_writer *w, int16_t id)
{
    field_header(w, id, LOAMS__THRIFT_STRUCT);
    loams__thrift_struct_begin(w);
}

void loams__thrift_field_list_begin(loams__thrift_writer *w, int16_t id, uint8_t elem_type,
                                    uint32_t size)
{
    field_header(w, id, LOAMS__THRIFT_LIST);
    if (size < 15) {
        put_byte(w, (uint8_t)(size << 4 | elem_type));
    } else {
        put_byte(w, (uint8_t)(0xf0 | elem_type));
        put_uvarint(w, size);
    }
}

void loams__thrift_elem_bool(loams__thrift_writer *w, int value)
{
    put_byte(w, value ? 1 : 0);
}

void loams__thrift_elem_i32(loams__thrift_writer *w, int32_t value)
{
    put_uvarint(w, loams_kit_zigzag64(value));
}

void loams__thrift_elem_i64(loams__thrift_writer *w, int64_t value)
{
    put_uvarint(w, loams_kit_zigzag64(value));
}

void loams__thrift_elem_binary(loams__thrift_writer *w, const void *p, size_t n)
{
    put_uvarint(w, n);
    put_bytes(w, p, n);
}

void loams__thrift_elem_string(loams__thrift_writer *w, const char *s)
{
    loams__thrift_elem_binary(w, s, strlen(s));
}

/* ---- decoder ---- */

void loams__thrift_reader_init(loams__thrift_reader *r, const void *p, size_t n)
{
    memset(r, 0, sizeof(*r));
    r->start = p;
    r->p = p;
    r->end = r->start + n;
}

size_t loams__thrift_reader_offset(const loams__thrift_reader *r)
{
    return (size_t)(r->p - r->start);
}

static int fail(loams__thrift_reader *r)
{
    r->status = LOAMS_ECORRUPT;
    return r->status;
}

static int get_byte(loams__thrift_reader *r, uint8_t *b)
{
    if (r->status) {
        return r->status;
    }
    if (r->p >= r->end) {
        return fail(r);
    }
    *b = *r->p++;
    return 0;
}

static int get_uvarint(loams__thrift_reader *r, uint64_t *v)
{
    uint64_t out = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t b;
        if (get_byte(r, &b)) {
            return r->status;
        }
        if (shift == 63 && b > 1) {
            return fail(r); /* more than 64 bits */
        }
        out |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = out;
            return 0;
        }
    }
    return fail(r);
}

static int get_zigzag(loams__thrift_reader *r, int64_t *v, int64_t min, int64_t max)
{
    uint64_t u;
    if (get_uvarint(r, &u)) {
        return r->status;
    }
    int64_t s = loams_kit_unzigzag64(u);
    if (s < min || s > max) {
        return fail(r);
    }
    *v = s;
    return 0;
}

int loams__thrift_read_struct_begin(loams__thrift_reader *r)
{
    if (r->status) {
        return r->status;
    }
    if (r->depth >= LOAMS__THRIFT_MAX_DEPTH) {
        return fail(r);
    }
    r->last_id[r->depth++] = 0;
    return 0;
}

int loams__thrift_read_field(loams__thrift_reader *r, uint8_t *type, int16_t *id)
{
    uint8_t b;
    if (r->depth == 0) {
        return fail(r);
    }
    if (get_byte(r, &b)) {
        return r->status;
    }
    uint8_t t = b & 0x0f;
    if (t == LOAMS__THRIFT_STOP) {
        if (b != 0) {
            return fail(r);
        }
        r->depth--;
        *type = LOAMS__THRIFT_STOP;
        *id = 0;
        return 0;
    }
    if (t > LOAMS__THRIFT_STRUCT) {
        return fail(r);
    }
    int delta = b >> 4;
    int64_t fid = 0;
    if (delta) {
        fid = r->last_id[r->depth - 1] + delta;
        if (fid > INT16_MAX) {
            return fail(r);
        }
    } else if (get_zigzag(r, &fid, INT16_MIN, INT16_MAX)) {
        return r->status;
    }
    r->last_id[r->depth - 1] = (int16_t)fid;
    *type = t;
    *id = (int16_t)fid;
    return 0;
}

int loams__thrift_read_i8(loams__thrift_reader *r, int8_t *v)
{
    uint8_t b;
    if (get_byte(r, &b)) {
        return r->status;
    }
    *v = (int8_t)b;
    return 0;
}

int loams__thrift_read_i16(loams__thrift_reader *r, int16_t *v)
{
    int64_t s = 0;
    if (get_zigzag(r, &s, INT16_MIN, INT16_MAX)) {
        return r->status;
    }
    *v = (int16_t)s;
    return 0;
}

int loams__thrift_read_i32(loams__thrift_reader *r, int32_t *v)
{
    int64_t s = 0;
    if (get_zigzag(r, &s, INT32_MIN, INT32_MAX)) {
        return r->status;
    }
    *v = (int32_t)s;
    return 0;
}

int loams__thrift_read_i64(loams__thrift_reader *r, int64_t *v)
{
    return get_zigzag(r, v, INT64_MIN, INT64_MAX);
}

int loams__thrift_read_double(loams__thrift_reader *r, double *v)
{
    if (r->status) {
        return r->status;
    }
    if (r->end - r->p < 8) {
        return fail(r);
    }
    uint64_t bits = loams_kit_le64_get(r->p);
    r->p += 8;
    memcpy(v, &bits, sizeof(*v));
    return 0;
}

int loams__thrift_read_binary(loams__thrift_reader *r, const uint8_t **p, size_t *n)
{
    uint64_t len;
    if (get_uvarint(r, &len)) {
        return r->status;
    }
    if (len > (uint64_t)(r->end - r->p)) {
        return fail(r);
    }
    *p = r->p;
    *n = (size_t)len;
    r->p += len;
    return 0;
}

int loams__thrift_read_list_begin(loams__thrift_reader *r, uint8_t *elem_type, uint32_t *size)
{
    uint8_t b;
    if (get_byte(r, &b)) {
        return r->status;
    }
    uint32_t n = b >> 4;
    if (n == 15) {
        uint64_t big;
        if (get_uvarint(r, &big)) {
            return r->status;
        }
        if (big > INT32_MAX) {
            return fail(r);
        }
        n = (uint32_t)big;
    }
    uint8_t t = b & 0x0f;
    if (t == LOAMS__THRIFT_STOP || t > LOAMS__THRIFT_STRUCT) {
        return fail(r);
    }
    /* Every element takes at least one byte: a count past the end is corrupt. */
    if (n > (uint64_t)(r->end - r->p)) {
        return fail(r);
    }
    *elem_type = t;
    *size = n;
    return 0;
}

int loams__thrift_read_elem_bool(loams__thrift_reader *r, int *v)
{
    uint8_t b;
    if (get_byte(r, &b)) {
        return r->status;
    }
    if (b > 2) {
        return fail(r);
    }
    /* Writers send 1 for true; some old ones sent 2 for false. */
    *v = b == 1;
    return 0;
}

static int skip_depth(loams__thrift_reader *r, uint8_t type, int depth)
{
    if (r->status) {
        return r->status;
    }
    if (depth > LOAMS__THRIFT_MAX_DEPTH) {
        return fail(r);
    }
    int64_t ignored;
    uint8_t b;
    const uint8_t *p;
    size_t n;
    switch (type) {
    case LOAMS__THRIFT_BOOL_TRUE:
    case LOAMS__THRIFT_BOOL_FALSE:
        /* As a field, the value was in the header: nothing to skip.  As a
         * list element the caller skips the byte (see the LIST case). */
        return 0;
    case LOAMS__THRIFT_I8: return get_byte(r, &b);
    case LOAMS__THRIFT_I16:
    case LOAMS__THRIFT_I32:
    case LOAMS__THRIFT_I64: return get_zigzag(r, &ignored, INT64_MIN, INT64_MAX);
    case LOAMS__THRIFT_DOUBLE:
        if (r->end - r->p < 8) {
            return fail(r);
        }
        r->p += 8;
        return 0;
    case LOAMS__THRIFT_BINARY: return loams__thrift_read_binary(r, &p, &n);
    case LOAMS__THRIFT_LIST:
    case LOAMS__THRIFT_SET: {
        uint8_t et;
        uint32_t count;
        if (loams__thrift_read_list_begin(r, &et, &count)) {
            return r->status;
        }
        for (uint32_t i = 0; i < count; i++) {
            if (et == LOAMS__THRIFT_BOOL_TRUE || et == LOAMS__THRIFT_BOOL_FALSE) {
                if (get_byte(r, &b)) {
                    return r->status;
                }
            } else if (skip_depth(r, et, depth + 1)) {
                return r->status;
            }
        }
        return 0;
    }
    case LOAMS__THRIFT_MAP: {
        uint64_t count;
        if (get_uvarint(r, &count)) {
            return r->status;
        }
        if (count == 0) {
            return 0;
        }
        if (count > (uint64_t)(r->end - r->p) || get_byte(r, &b)) {
            return fail(r);
        }
        uint8_t kt = b >> 4, vt = b & 0x0f;
        for (uint64_t i = 0; i < count; i++) {
            for (int k = 0; k < 2; k++) {
                uint8_t t = k ? vt : kt;
                if (t == LOAMS__THRIFT_BOOL_TRUE || t == LOAMS__THRIFT_BOOL_FALSE) {
                    if (get_byte(r, &b)) {
                        return r->status;
                    }
                } else if (skip_depth(r, t, depth + 1)) {
                    return r->status;
                }
            }
        }
        return 0;
    }
    case LOAMS__THRIFT_STRUCT: {
        if (loams__thrift_read_struct_begin(r)) {
            return r->status;
        }
        for (;;) {
            uint8_t ft;
            int16_t id;
            if (loams__thrift_read_field(r, &ft, &id)) {
                return r->status;
            }
            if (ft == LOAMS__THRIFT_STOP) {
                return 0;
            }
            if (skip_depth(r, ft, depth + 1)) {
                return r->status;
            }
        }
    }
    default: return fail(r);
    }
}

int loams__thrift_skip(loams__thrift_reader *r, uint8_t type)
{
    return skip_depth(r, type, 0);
}
