/*
 * graph_json.c - owns the JSON text encoding of the graph target (see
 * graph_json.h).
 */
#include "graph_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <loams/status.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
    unsigned c = s[0];
    if (c < 0x80) {
        return 1;
    }
    size_t n;
    unsigned min;
    if ((c & 0xE0) == 0xC0) {
        n = 2;
        min = 0x80;
        c &= 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3;
        min = 0x800;
        c &= 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4;
        min = 0x10000;
        c &= 0x07;
    } else {
        return 0;
    }
    if (n > left) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        return 0;
    }
    return n;
}

int loams__gjson_valid_text(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        if (p[i] == 0) {
            return 0;
        }
        size_t n = utf8_len(p + i, len - i);
        if (n == 0) {
            return 0;
        }
        i += n;
    }
    return 1;
}

int loams__gjson_string(loams_kit_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    if (loams_kit_buf_reserve(b, len + 2) != 0) {
        return -ENOMEM;
    }
    b->data[b->len++] = '"';
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t run = i;
        while (run < len && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\') {
            run++;
        }
        if (run > i) {
            if (loams_kit_buf_append(b, p + i, run - i) != 0) {
                return -ENOMEM;
            }
            i = run;
            continue;
        }
        unsigned char c = p[i];
        char esc[8];
        size_t n;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            n = 2;
        } else if (c < 0x20) {
            esc[0] = '\\';
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            n = 6;
        } else {
            size_t u = utf8_len(p + i, len - i);
            if (u == 0) {
                if (loams_kit_buf_append(b, "\xEF\xBF\xBD", 3) != 0) {
                    return -ENOMEM;
                }
                i++;
                continue;
            }
            if (loams_kit_buf_append(b, p + i, u) != 0) {
                return -ENOMEM;
            }
            i += u;
            continue;
        }
        if (loams_kit_buf_append(b, esc, n) != 0) {
            return -ENOMEM;
        }
        i++;
    }
    return loams_kit_buf_append(b, "\"", 1) != 0 ? -ENOMEM : 0;
}

int loams__gjson_cstr(loams_kit_buf *b, const char *s)
{
    return loams__gjson_string(b, s, strlen(s));
}

int loams__gjson_raw(loams_kit_buf *b, const char *s)
{
    return loams_kit_buf_append(b, s, strlen(s)) != 0 ? -ENOMEM : 0;
}

static int base64(loams_kit_buf *b, const unsigned char *p, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (loams_kit_buf_reserve(b, (len + 2) / 3 * 4 + 2) != 0) {
        return -ENOMEM;
    }
    unsigned char *o = b->data + b->len;
    *o++ = '"';
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = (unsigned char)tab[v >> 18];
        *o++ = (unsigned char)tab[(v >> 12) & 63];
        *o++ = (unsigned char)tab[(v >> 6) & 63];
        *o++ = (unsigned char)tab[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = (unsigned char)tab[v >> 18];
        *o++ = (unsigned char)tab[(v >> 12) & 63];
        *o++ = i + 1 < len ? (unsigned char)tab[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    return 0;
}

static int number(loams_kit_buf *b, double d)
{
    char tmp[40];
    if (!isfinite(d)) {
        return loams__gjson_raw(b, "null");
    }
    snprintf(tmp, sizeof tmp, "%.17g", d);
    return loams__gjson_raw(b, tmp);
}

int loams__gjson_value(loams_kit_buf *b, const loams_value *v, loams_kit_err *e)
{
    char tmp[40];
    switch ((loams_type)v->type) {
    case LOAMS_T_NULL: return loams__gjson_raw(b, "null");
    case LOAMS_T_BOOL: return loams__gjson_raw(b, v->u.b ? "true" : "false");
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP:
        snprintf(tmp, sizeof tmp, "%" PRId64, v->u.i);
        return loams__gjson_raw(b, tmp);
    case LOAMS_T_FLOAT64: return number(b, v->u.f);
    case LOAMS_T_STRING: return loams__gjson_string(b, v->u.s.ptr, v->u.s.len);
    case LOAMS_T_BYTES: return base64(b, (const unsigned char *)v->u.s.ptr, v->u.s.len);
    case LOAMS_T_JSON: {
        cJSON *j = cJSON_ParseWithLength(v->u.s.ptr, v->u.s.len);
        if (j == NULL) {
            return loams_kit_err_set(e, LOAMS_EINPUT, "a JSON value does not parse");
        }
        cJSON_Delete(j);
        return loams_kit_buf_append(b, v->u.s.ptr, v->u.s.len) != 0 ? -ENOMEM : 0;
    }
    case LOAMS_T_VECTOR: {
        if (loams__gjson_raw(b, "[") != 0) {
            return -ENOMEM;
        }
        for (size_t i = 0; i < v->u.vec.n; i++) {
            if ((i > 0 && loams__gjson_raw(b, ",") != 0) || number(b, v->u.vec.ptr[i]) != 0) {
                return -ENOMEM;
            }
        }
        return loams__gjson_raw(b, "]");
    }
    case LOAMS_T_LIST: {
        if (loams__gjson_raw(b, "[") != 0) {
            return -ENOMEM;
        }
        for (size_t i = 0; i < v->u.list.n; i++) {
            if (i > 0 && loams__gjson_raw(b, ",") != 0) {
                return -ENOMEM;
            }
            int rc = loams__gjson_value(b, &v->u.list.items[i], e);
            if (rc != 0) {
                return rc;
            }
        }
        return loams__gjson_raw(b, "]");
    }
    }
    return loams_kit_err_set(e, LOAMS_EINPUT, "a value has an unknown type (%u)", v->type);
}
