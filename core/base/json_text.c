/*
 * json_text.c - owns the JSON the host writes by hand (integers exact,
 * strings whole) and the reading of a JSON text through the kit's reader,
 * with the one check the kit leaves to its callers: lone surrogate escapes
 * (json_text.h).
 */
#include "base/json_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/utf8.h"

/* ---- writing ---- */

int loams_json_put_string(loams_kit_buf *b, const void *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = s;
    size_t start = b->len;
    /* at most 6 bytes of text per byte (\u00XX), and 2 quotes */
    if (n > (SIZE_MAX - 2) / 6 || loams_kit_buf_reserve(b, 6 * n + 2) != 0) {
        return -ENOMEM;
    }
    unsigned char *o = b->data + start;
    *o++ = '"';
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c >= 0x80) {
            size_t ok = loams_kit_utf8_valid_prefix(p + i, n - i);
            if (ok == 0) {
                memcpy(o, "\\ufffd", 6); /* not UTF-8: JSON text cannot hold it */
                o += 6;
                i++;
                continue;
            }
            /* the valid run, up to the next ASCII byte */
            size_t run = 0;
            while (run < ok && p[i + run] >= 0x80) {
                run++;
            }
            memcpy(o, p + i, run);
            o += run;
            i += run;
            continue;
        }
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = c;
        } else if (c < 0x20 || c == 0x7f) {
            memcpy(o, "\\u00", 4);
            o[4] = (unsigned char)hex[c >> 4];
            o[5] = (unsigned char)hex[c & 15];
            o += 6;
        } else {
            *o++ = c;
        }
        i++;
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    return 0;
}

int loams_json_put_int(loams_kit_buf *b, int64_t v)
{
    return loams_kit_buf_appendf(b, "%" PRId64, v) == 0 ? 0 : -ENOMEM;
}

/* ---- reading ---- */

void loams_json_text_init(loams_json_text *t)
{
    memset(t, 0, sizeof *t);
}

void loams_json_text_free(loams_json_text *t)
{
    loams_kit_json_doc_free(t->doc);
    memset(t, 0, sizeof *t);
}

static int hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The 4 hex digits at p[0..n): their value, or -1. */
static long hex4(const unsigned char *p, size_t n)
{
    long v = 0;
    for (size_t k = 0; k < 4; k++) {
        int h = k < n ? hex_digit(p[k]) : -1;
        if (h < 0) {
            return -1;
        }
        v = v * 16 + h;
    }
    return v;
}

/* In a text the kit found valid a backslash only stands in a string and
 * starts a well-formed escape, so one pass over the bytes sees every
 * escape. */
int loams_json_find_lone_surrogate(const char *text, size_t n, size_t *at, char *why,
                                   size_t why_len)
{
    const unsigned char *p = (const unsigned char *)text;
    const unsigned char *bs;
    size_t i = 0;
    while (i < n && (bs = memchr(p + i, '\\', n - i)) != NULL) {
        i = (size_t)(bs - p);
        if (i + 1 >= n || p[i + 1] != 'u') {
            i += 2;
            continue;
        }
        long u = hex4(p + i + 2, n - i - 2);
        if (u >= 0xd800 && u <= 0xdbff) {
            long lo =
                i + 7 < n && p[i + 6] == '\\' && p[i + 7] == 'u' ? hex4(p + i + 8, n - i - 8) : -1;
            if (lo >= 0xdc00 && lo <= 0xdfff) {
                i += 12;
                continue;
            }
            snprintf(why, why_len,
                     "lone surrogate \\u%04lx (a high surrogate \\ud800-\\udbff must be "
                     "followed by a low one, \\udc00-\\udfff)",
                     u);
            *at = i;
            return -1;
        }
        if (u >= 0xdc00 && u <= 0xdfff) {
            snprintf(why, why_len,
                     "lone surrogate \\u%04lx (a low surrogate \\udc00-\\udfff must follow a "
                     "high one, \\ud800-\\udbff)",
                     u);
            *at = i;
            return -1;
        }
        i += 6;
    }
    return 0;
}

int loams_json_text_read(loams_json_text *t, const char *text, size_t len, size_t *at, char *why,
                         size_t why_len)
{
    size_t where = 0;
    char local[8];
    if (why == NULL) {
        why = local;
        why_len = sizeof local;
    }
    memset(&t->root, 0, sizeof t->root);
    if (t->doc == NULL && loams_kit_json_doc_new(NULL, &t->doc) != 0) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    loams_kit_json_doc_reset(t->doc, text, len);
    loams_kit_json_error e = {0, NULL};
    int rc = loams_kit_json_doc_root(t->doc, &t->root, &e);
    if (rc == 0) {
        rc =
            loams_json_find_lone_surrogate(text, len, &where, why, why_len) == 0 ? 0 : LOAMS_EINPUT;
    } else if (rc == LOAMS_EINPUT) {
        where = e.pos;
        snprintf(why, why_len, "%s", e.what != NULL ? e.what : "not JSON");
    } else {
        snprintf(why, why_len, "out of memory");
    }
    if (rc != 0) {
        memset(&t->root, 0, sizeof t->root);
    }
    if (at != NULL) {
        *at = where;
    }
    return rc;
}

/* Whether the member name `key` (a STRING of t's text) unescapes to name. */
static int name_is(const loams_json_text *t, const loams_kit_json_value *key, const char *name)
{
    size_t n = strlen(name), span = key->end - key->start, len;
    const char *text = loams_kit_json_doc_text(t->doc, &len);
    if (!key->escaped) {
        return span == n && memcmp(text + key->start, name, n) == 0;
    }
    /* an escape is 2 to 12 bytes for 1 to 4 of text: never longer */
    if (span < n) {
        return 0;
    }
    char small[256], *buf = span <= sizeof small ? small : malloc(span);
    size_t got = 0;
    int same = buf != NULL &&
               loams_kit_json_value_string(t->doc, key, buf, span, &got, NULL) == 0 && got == n &&
               memcmp(buf, name, n) == 0;
    if (buf != small) {
        free(buf);
    }
    return same;
}

int loams_json_member(const loams_json_text *t, const loams_kit_json_value *obj, const char *name,
                      loams_kit_json_value *out)
{
    loams_kit_json_iter it;
    loams_kit_json_value key, value;
    if (obj->kind != LOAMS_KIT_JSON_OBJECT || loams_json_walk(t, obj, &it) != 0) {
        return 0;
    }
    while (loams_kit_json_iter_next(&it, &key, &value, NULL) == 1) {
        if (name_is(t, &key, name)) {
            *out = value;
            return 1;
        }
    }
    return 0;
}

int loams_json_walk(const loams_json_text *t, const loams_kit_json_value *v,
                    loams_kit_json_iter *it)
{
    /* depth 0: the text was validated whole, nesting included */
    return t->doc != NULL && loams_kit_json_iter_start(t->doc, v, 0, it) == 0 ? 0 : -1;
}

void loams_json_raw(const loams_json_text *t, const loams_kit_json_value *v, const char **p,
                    size_t *len)
{
    loams_kit_json_value_raw(t->doc, v, p, len);
}

void loams_json_fwrite(FILE *f, const loams_json_text *t, const loams_kit_json_value *v)
{
    const char *p;
    size_t len;
    loams_json_raw(t, v, &p, &len);
    fwrite(p, 1, len, f);
}

/* Writes p[0..n) escaping the bytes a terminal would not show. */
static void write_shown(FILE *f, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
}

void loams_json_print_text(FILE *f, const loams_json_text *t, const loams_kit_json_value *v)
{
    const char *p;
    size_t len;
    loams_json_raw(t, v, &p, &len);
    if (v->kind != LOAMS_KIT_JSON_STRING) {
        fwrite(p, 1, len, f);
        return;
    }
    size_t span = v->end - v->start, got = 0;
    if (!v->escaped) {
        write_shown(f, p + 1, span);
        return;
    }
    char *buf = malloc(span > 0 ? span : 1);
    if (buf == NULL || loams_kit_json_value_string(t->doc, v, buf, span, &got, NULL) != 0) {
        fwrite(p, 1, len, f); /* out of memory: the text as it stands */
    } else {
        write_shown(f, buf, got);
    }
    free(buf);
}

int loams_json_value_text(const loams_json_text *t, const loams_kit_json_value *v, char **out,
                          size_t *n)
{
    const char *p;
    size_t len, o = 0;
    loams_json_raw(t, v, &p, &len);
    char *s = malloc(len + 1);
    if (s == NULL) {
        return -ENOMEM;
    }
    if (v->kind == LOAMS_KIT_JSON_STRING) {
        if (loams_kit_json_value_string(t->doc, v, s, len, &o, NULL) != 0) {
            free(s); /* cannot happen: the text was read whole */
            return -ENOMEM;
        }
    } else {
        /* white space only stands between tokens, outside strings */
        int in_string = 0;
        for (size_t i = 0; i < len; i++) {
            char c = p[i];
            if (in_string) {
                s[o++] = c;
                if (c == '\\') {
                    s[o++] = p[++i];
                } else if (c == '"') {
                    in_string = 0;
                }
            } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                s[o++] = c;
                in_string = c == '"';
            }
        }
    }
    s[o] = '\0';
    *out = s;
    *n = o;
    return 0;
}

int loams_json_int(const loams_json_text *t, const loams_kit_json_value *v, int64_t *out)
{
    int64_t x;
    if (v->kind != LOAMS_KIT_JSON_NUMBER || loams_kit_json_value_int(t->doc, v, &x, NULL) != 0) {
        return -1;
    }
    *out = x;
    return 0;
}

const char *loams_json_kind_phrase(uint32_t kind)
{
    switch (kind) {
    case LOAMS_KIT_JSON_NULL: return "null";
    case LOAMS_KIT_JSON_FALSE:
    case LOAMS_KIT_JSON_TRUE: return "a boolean";
    case LOAMS_KIT_JSON_NUMBER: return "a number";
    case LOAMS_KIT_JSON_STRING: return "a string";
    case LOAMS_KIT_JSON_ARRAY: return "an array";
    case LOAMS_KIT_JSON_OBJECT: return "an object";
    default: return "nothing";
    }
}
