/*
 * produce_batch.c - owns turning a producer's text into stream records
 * and their atomic append (see produce_batch.h).
 */
#include "stream/produce_batch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_text.h"
#include "loams/kit/base64.h"
#include "loams/kit/json_path.h"

struct loams_produce_batch {
    loams_produce_options o;
    char *key_field, *value_field, *key;
    loams_kit_json_path *key_path, *value_path;
    loams_kit_json_doc *doc;
    loams_stream_record_in *recs;
    loams_stream_pos *pos;
    size_t *key_off, *val_off; /* into data; SIZE_MAX: no key */
    size_t n, cap;
    char *data; /* keys and values, back to back */
    size_t used, data_cap;
    uint64_t bytes;
};

/* Compiles the path $["name"] (any name, JSON-escaped in brackets). */
static int field_path(const char *name, loams_kit_json_path **out)
{
    size_t n = strlen(name);
    char *text = malloc(6 * n + 6);
    if (text == NULL) {
        return -ENOMEM;
    }
    size_t t = 0;
    text[t++] = '$';
    text[t++] = '[';
    text[t++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '"' || c == '\\') {
            text[t++] = '\\';
            text[t++] = (char)c;
        } else if (c < 0x20) {
            t += (size_t)snprintf(text + t, 7, "\\u%04x", c);
        } else {
            text[t++] = (char)c;
        }
    }
    text[t++] = '"';
    text[t++] = ']';
    loams_kit_json_error err;
    int rc = loams_kit_json_path_compile(NULL, text, t, out, &err);
    free(text);
    return rc;
}

const char *loams_produce_options_check(const loams_produce_options *o)
{
    int fields = o->key_field != NULL || o->value_field != NULL;
    if (fields && (o->value_base64 || o->key_base64 || o->key != NULL)) {
        return "--key, --encoding and --key-encoding take the line as it is; they do not go "
               "with --key-field or --value-field";
    }
    if (o->key_base64 && o->key != NULL) {
        return "give either --key or --key-encoding";
    }
    return NULL;
}

int loams_produce_batch_new(const loams_produce_options *o, loams_produce_batch **out)
{
    if (loams_produce_options_check(o) != NULL) {
        return -EINVAL;
    }
    loams_produce_batch *b = calloc(1, sizeof *b);
    if (b == NULL) {
        return -ENOMEM;
    }
    b->o = *o;
    int rc = loams_kit_json_doc_new(NULL, &b->doc);
    if (rc == 0 && o->key_field != NULL) {
        b->key_field = strdup(o->key_field);
        rc = b->key_field == NULL ? -ENOMEM : field_path(o->key_field, &b->key_path);
    }
    if (rc == 0 && o->value_field != NULL) {
        b->value_field = strdup(o->value_field);
        rc = b->value_field == NULL ? -ENOMEM : field_path(o->value_field, &b->value_path);
    }
    if (rc == 0 && o->key != NULL) {
        b->key = strdup(o->key);
        rc = b->key == NULL ? -ENOMEM : 0;
    }
    if (rc != 0) {
        loams_produce_batch_free(b);
        return rc;
    }
    b->o.key_field = b->key_field;
    b->o.value_field = b->value_field;
    b->o.key = b->key;
    *out = b;
    return 0;
}

void loams_produce_batch_free(loams_produce_batch *b)
{
    if (b == NULL) {
        return;
    }
    loams_kit_json_path_free(NULL, b->key_path);
    loams_kit_json_path_free(NULL, b->value_path);
    loams_kit_json_doc_free(b->doc);
    free(b->key_field);
    free(b->value_field);
    free(b->key);
    free(b->recs);
    free(b->pos);
    free(b->key_off);
    free(b->val_off);
    free(b->data);
    free(b);
}

/* Room for one more record and `extra` bytes of data. */
static int room(loams_produce_batch *b, size_t extra)
{
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 1024;
        loams_stream_record_in *r = realloc(b->recs, nc * sizeof *r);
        if (r != NULL) {
            b->recs = r;
        }
        loams_stream_pos *p = realloc(b->pos, nc * sizeof *p);
        if (p != NULL) {
            b->pos = p;
        }
        size_t *k = realloc(b->key_off, nc * sizeof *k);
        if (k != NULL) {
            b->key_off = k;
        }
        size_t *v = realloc(b->val_off, nc * sizeof *v);
        if (v != NULL) {
            b->val_off = v;
        }
        if (r == NULL || p == NULL || k == NULL || v == NULL) {
            return -ENOMEM;
        }
        b->cap = nc;
    }
    if (extra > SIZE_MAX - b->used) {
        return -ENOMEM;
    }
    if (b->used + extra > b->data_cap) {
        size_t nc = b->data_cap ? b->data_cap : 1 << 16;
        while (nc < b->used + extra) {
            nc *= 2;
        }
        char *d = realloc(b->data, nc);
        if (d == NULL) {
            return -ENOMEM;
        }
        b->data = d;
        b->data_cap = nc;
    }
    return 0;
}

/* Copies a found value into data at b->used: a string decoded, anything
 * else as its JSON text.  *len gets its length. */
static int copy_value(loams_produce_batch *b, const loams_kit_json_value *v, size_t *len)
{
    const char *raw;
    size_t raw_len;
    loams_kit_json_value_raw(b->doc, v, &raw, &raw_len);
    int rc = room(b, raw_len);
    if (rc != 0) {
        return rc;
    }
    if (v->kind != LOAMS_KIT_JSON_STRING) {
        memcpy(b->data + b->used, raw, raw_len);
        *len = raw_len;
        return 0;
    }
    loams_kit_json_error err;
    return loams_kit_json_value_string(b->doc, v, b->data + b->used, raw_len, len, &err) == 0
               ? 0
               : LOAMS_EINPUT;
}

static const char *kind_article(uint32_t kind)
{
    switch (kind) {
    case LOAMS_KIT_JSON_ARRAY: return "an array";
    case LOAMS_KIT_JSON_STRING: return "a string";
    case LOAMS_KIT_JSON_NUMBER: return "a number";
    case LOAMS_KIT_JSON_NULL: return "null";
    default: return "a boolean";
    }
}

/* Copies base64 text[0..len) decoded into data at b->used; *n gets its
 * length.  LOAMS_EINPUT with why when it is not base64. */
static int decode_base64(loams_produce_batch *b, const char *text, size_t len, const char *what,
                         size_t *n, char *why, size_t whylen, size_t *at)
{
    int rc = room(b, len / 4 * 3 + 3);
    if (rc != 0) {
        return rc;
    }
    size_t bad;
    if (loams_kit_base64_decode(text, len, (unsigned char *)b->data + b->used, n, &bad) != 0) {
        snprintf(why, whylen, "the %s is not base64 (at character %zu)", what, bad + 1);
        if (at != NULL) {
            *at = bad;
        }
        return LOAMS_EINPUT;
    }
    return 0;
}

/* A record from text taken as it is: a fixed key or a base64 key before a
 * tab, a value as it is or in base64. */
static int add_encoded(loams_produce_batch *b, const char *text, size_t len, char *why,
                       size_t whylen, size_t *at)
{
    size_t keep_used = b->used, key_len = 0, key_at = SIZE_MAX, val_len = len;
    int rc;
    if (b->o.key_base64) {
        const char *tab = memchr(text, '\t', len);
        if (tab == NULL) {
            snprintf(why, whylen, "it has no tab (the key in base64, a tab, the value)");
            return LOAMS_EINPUT;
        }
        if ((rc = decode_base64(b, text, (size_t)(tab - text), "key", &key_len, why, whylen, at)) !=
            0) {
            return rc;
        }
        key_at = b->used;
        b->used += key_len;
        len -= (size_t)(tab - text) + 1;
        text = tab + 1;
        val_len = len;
    } else if (b->o.key != NULL) {
        key_len = strlen(b->o.key);
        if ((rc = room(b, key_len)) != 0) {
            return rc;
        }
        memcpy(b->data + b->used, b->o.key, key_len);
        key_at = b->used;
        b->used += key_len;
    }
    if (b->o.value_base64) {
        rc = decode_base64(b, text, len, "value", &val_len, why, whylen, at);
    } else if ((rc = room(b, len)) == 0) {
        memcpy(b->data + b->used, text, len);
    }
    if (rc == 0) {
        rc = room(b, 0);
    }
    if (rc != 0) {
        b->used = keep_used;
        return rc;
    }
    loams_stream_record_in *r = &b->recs[b->n];
    memset(r, 0, sizeof *r);
    r->partition = b->o.partition;
    r->key_len = key_len;
    r->value_len = val_len;
    b->key_off[b->n] = key_at;
    b->val_off[b->n] = b->used;
    b->used += val_len;
    b->n++;
    b->bytes += key_len + val_len;
    return 0;
}

int loams_produce_batch_add(loams_produce_batch *b, const char *text, size_t len, char *why,
                            size_t whylen, size_t *at)
{
    if (b->o.key != NULL || b->o.key_base64 || b->o.value_base64) {
        if (at != NULL) {
            *at = 0;
        }
        return add_encoded(b, text, len, why, whylen, at);
    }
    int fields = b->key_path != NULL || b->value_path != NULL;
    size_t keep_used = b->used;
    size_t key_len = 0, val_len = len;
    size_t key_at = SIZE_MAX, val_at;
    int rc;
    if (at != NULL) {
        *at = 0;
    }
    if (fields || b->o.json) {
        loams_kit_json_value root;
        loams_kit_json_error err;
        loams_kit_json_doc_reset(b->doc, text, len);
        rc = loams_kit_json_doc_root(b->doc, &root, &err);
        if (rc == -ENOMEM) {
            return rc;
        }
        if (rc != 0) {
            snprintf(why, whylen, "byte %zu: %s: not valid JSON", err.pos + 1, err.what);
            if (at != NULL) {
                *at = err.pos;
            }
            return LOAMS_EINPUT;
        }
        /* The kit leaves lone surrogate escapes to its callers: "\ud800"
         * stands for no character, and most readers refuse it. */
        size_t bad_at;
        char bad[160];
        if (loams_json_find_lone_surrogate(text, len, &bad_at, bad, sizeof bad) != 0) {
            snprintf(why, whylen, "byte %zu: %s: not valid JSON", bad_at + 1, bad);
            if (at != NULL) {
                *at = bad_at;
            }
            return LOAMS_EINPUT;
        }
        if (fields && root.kind != LOAMS_KIT_JSON_OBJECT) {
            snprintf(why, whylen, "it is %s, not a JSON object (a key or value field needs one)",
                     kind_article(root.kind));
            return LOAMS_EINPUT;
        }
    }
    if (b->key_path != NULL) {
        loams_kit_json_value k;
        loams_kit_json_error err;
        if ((rc = loams_kit_json_doc_get(b->doc, b->key_path, &k, &err)) != 0) {
            return rc == -ENOMEM ? rc : LOAMS_EINPUT;
        }
        if (k.kind != LOAMS_KIT_JSON_MISSING && k.kind != LOAMS_KIT_JSON_NULL) {
            if ((rc = copy_value(b, &k, &key_len)) != 0) {
                snprintf(why, whylen, "the key field '%s' cannot be decoded", b->key_field);
                b->used = keep_used;
                return rc;
            }
            key_at = b->used;
            b->used += key_len;
        }
    }
    if (b->value_path != NULL) {
        loams_kit_json_value v;
        loams_kit_json_error err;
        if ((rc = loams_kit_json_doc_get(b->doc, b->value_path, &v, &err)) != 0) {
            b->used = keep_used;
            return rc == -ENOMEM ? rc : LOAMS_EINPUT;
        }
        if (v.kind == LOAMS_KIT_JSON_MISSING) {
            snprintf(why, whylen, "it has no field '%s' (the value field)", b->value_field);
            b->used = keep_used;
            return LOAMS_EINPUT;
        }
        if ((rc = copy_value(b, &v, &val_len)) != 0) {
            snprintf(why, whylen, "the value field '%s' cannot be decoded", b->value_field);
            b->used = keep_used;
            return rc;
        }
    } else {
        if ((rc = room(b, len)) != 0) {
            b->used = keep_used;
            return rc;
        }
        memcpy(b->data + b->used, text, len);
    }
    val_at = b->used;
    b->used += val_len;
    if ((rc = room(b, 0)) != 0) {
        b->used = keep_used;
        return rc;
    }
    loams_stream_record_in *r = &b->recs[b->n];
    memset(r, 0, sizeof *r);
    r->partition = b->o.partition;
    r->key_len = key_len;
    r->value_len = val_len;
    b->key_off[b->n] = key_at;
    b->val_off[b->n] = val_at;
    b->n++;
    b->bytes += key_len + val_len;
    return 0;
}

int loams_produce_batch_add_raw(loams_produce_batch *b, const char *key, const void *data,
                                size_t len)
{
    size_t key_len = key != NULL ? strlen(key) : 0;
    int rc = room(b, key_len + len);
    if (rc != 0) {
        return rc;
    }
    loams_stream_record_in *r = &b->recs[b->n];
    memset(r, 0, sizeof *r);
    r->partition = b->o.partition;
    r->key_len = key_len;
    r->value_len = len;
    b->key_off[b->n] = key != NULL ? b->used : SIZE_MAX;
    if (key_len > 0) {
        memcpy(b->data + b->used, key, key_len);
        b->used += key_len;
    }
    if (len > 0) {
        memcpy(b->data + b->used, data, len);
    }
    b->val_off[b->n] = b->used;
    b->used += len;
    b->n++;
    b->bytes += key_len + len;
    return 0;
}

int loams_produce_batch_add_lines(loams_produce_batch *b, const char *text, size_t len,
                                  uint64_t *line, size_t *at, char *why, size_t whylen)
{
    uint64_t lineno = 0;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl != NULL ? (size_t)(nl - text) : len;
        size_t n = end - i;
        lineno++;
        if (n > 0 && text[i + n - 1] == '\r') {
            n--;
        }
        if (n > 0) {
            int rc = loams_produce_batch_add(b, text + i, n, why, whylen, at);
            if (rc != 0) {
                *line = lineno;
                return rc;
            }
        }
        i = end + 1;
    }
    return 0;
}

size_t loams_produce_batch_count(const loams_produce_batch *b)
{
    return b->n;
}

uint64_t loams_produce_batch_bytes(const loams_produce_batch *b)
{
    return b->bytes;
}

int loams_produce_batch_append(loams_produce_batch *b, loams_stream *s, loams_stream_err *err)
{
    for (size_t i = 0; i < b->n; i++) {
        b->recs[i].value = b->data + b->val_off[i];
        b->recs[i].key = b->key_off[i] == SIZE_MAX ? NULL : b->data + b->key_off[i];
    }
    return loams_stream_append(s, b->recs, b->n, b->pos, err);
}

const loams_stream_pos *loams_produce_batch_positions(const loams_produce_batch *b)
{
    return b->pos;
}

void loams_produce_batch_reset(loams_produce_batch *b)
{
    b->n = 0;
    b->used = 0;
    b->bytes = 0;
}
