/*
 * value.c - owns the names of the host's value types in plugin messages,
 * and the encoding of one value as bytes (loams/kit/value.h).
 */
#include "loams/kit/value.h"

#include <errno.h>
#include <string.h>

#include <loams/host.h>

const char *loams_kit_type_name(uint32_t type)
{
    switch (type) {
    case LOAMS_T_NULL: return "NULL";
    case LOAMS_T_BOOL: return "BOOL";
    case LOAMS_T_INT64: return "INT64";
    case LOAMS_T_FLOAT64: return "FLOAT64";
    case LOAMS_T_STRING: return "STRING";
    case LOAMS_T_BYTES: return "BYTES";
    case LOAMS_T_TIMESTAMP: return "TIMESTAMP";
    case LOAMS_T_JSON: return "JSON";
    case LOAMS_T_VECTOR: return "VECTOR";
    case LOAMS_T_LIST: return "LIST";
    default: return "UNKNOWN";
    }
}

static int has_bytes(uint32_t type)
{
    return type == LOAMS_T_STRING || type == LOAMS_T_JSON || type == LOAMS_T_BYTES;
}

static int has_u64(uint32_t type)
{
    return type == LOAMS_T_BOOL || type == LOAMS_T_INT64 || type == LOAMS_T_TIMESTAMP ||
           type == LOAMS_T_FLOAT64;
}

int loams_kit_value_encode(loams_kit_buf *b, const loams_value *v)
{
    int rc = loams_kit_buf_append_byte(b, (uint8_t)v->type);
    uint64_t bits = 0;
    switch (v->type) {
    case LOAMS_T_BOOL: bits = (uint64_t)v->u.b; break;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP: bits = (uint64_t)v->u.i; break;
    case LOAMS_T_FLOAT64: memcpy(&bits, &v->u.f, 8); break;
    default: break;
    }
    if (has_u64(v->type)) {
        rc |= loams_kit_buf_append_le64(b, bits);
    } else if (has_bytes(v->type)) {
        rc |= loams_kit_buf_append_le64(b, (uint64_t)v->u.s.len);
        rc |= loams_kit_buf_append(b, v->u.s.ptr, v->u.s.len);
    }
    return rc ? -ENOMEM : 0;
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t x = 0;
    for (int i = 0; i < 8; i++) {
        x |= (uint64_t)p[i] << (8 * i);
    }
    return x;
}

int loams_kit_value_decode(const uint8_t *p, size_t len, loams_value *v, size_t *used)
{
    memset(v, 0, sizeof *v);
    if (len < 1) {
        return -EINVAL;
    }
    v->type = p[0];
    if (!has_u64(v->type) && !has_bytes(v->type)) {
        v->type = LOAMS_T_NULL; /* other types carry nothing: NULL */
        *used = 1;
        return 0;
    }
    if (len < 9) {
        return -EINVAL;
    }
    uint64_t bits = get_le64(p + 1);
    switch (v->type) {
    case LOAMS_T_BOOL: v->u.b = bits != 0; break;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP: v->u.i = (int64_t)bits; break;
    case LOAMS_T_FLOAT64: memcpy(&v->u.f, &bits, 8); break;
    default:
        if (bits > len - 9) {
            return -EINVAL;
        }
        v->u.s.ptr = (const char *)p + 9;
        v->u.s.len = (size_t)bits;
        *used = 9 + (size_t)bits;
        return 0;
    }
    *used = 9;
    return 0;
}
