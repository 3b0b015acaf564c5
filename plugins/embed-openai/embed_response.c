/*
 * embed_response.c - owns the reading of a provider's embeddings response
 * and of its error messages (embed_response.h).
 *
 * The body is validated whole by the kit's JSON reader (no tree is built:
 * a response of 2,048 vectors of 1,536 numbers is 3 million values), then
 * walked with cursors; numbers are converted one at a time straight into
 * the result.
 */
#include "embed_response.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_path.h"

typedef struct reader {
    const loams_kit_mem *mem;
    loams_kit_json_doc *doc;
    loams__embed_result *out;
    size_t n;
    size_t dims;
    unsigned char *seen; /* openai: which indexes came */
    char *err;
    size_t errlen;
} reader;

static int fail(reader *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(reader *r, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
    return status;
}

/* Whether STRING value k (a member name) is `name`. */
static int key_is(const loams_kit_json_doc *doc, const loams_kit_json_value *k, const char *name)
{
    char buf[64];
    size_t len = 0;
    size_t want = strlen(name);
    if (k->kind != LOAMS_KIT_JSON_STRING || k->end - k->start > sizeof buf) {
        return 0;
    }
    if (loams_kit_json_value_string(doc, k, buf, sizeof buf, &len, NULL) != 0) {
        return 0;
    }
    return len == want && memcmp(buf, name, want) == 0;
}

/* Finds member `name` of OBJECT obj (at `depth`): 1 found, 0 not, < 0 error. */
static int member(reader *r, const loams_kit_json_value *obj, unsigned depth, const char *name,
                  loams_kit_json_value *val)
{
    loams_kit_json_iter it;
    loams_kit_json_value k, v;
    loams_kit_json_error je = {0, NULL};
    if (obj->kind != LOAMS_KIT_JSON_OBJECT ||
        loams_kit_json_iter_start(r->doc, obj, depth, &it) != 0) {
        return 0;
    }
    for (;;) {
        int more = loams_kit_json_iter_next(&it, &k, &v, &je);
        if (more < 0) {
            return fail(r, LOAMS_EINPUT, "malformed JSON at byte %zu: %s", je.pos,
                        je.what ? je.what : "?");
        }
        if (more == 0) {
            return 0;
        }
        if (key_is(r->doc, &k, name)) {
            *val = v;
            return 1;
        }
    }
}

static int set_dims(reader *r, size_t got, size_t which)
{
    if (r->dims == 0) {
        if (got == 0 || got > LOAMS__EMBED_MAX_DIMS) {
            return fail(r, LOAMS_EINPUT, "vector %zu has %zu numbers (1 to %d expected)", which,
                        got, LOAMS__EMBED_MAX_DIMS);
        }
        r->dims = got;
    }
    if (got != r->dims) {
        return fail(r, LOAMS_ESCHEMA, "vector %zu has %zu dimensions, expected %zu", which, got,
                    r->dims);
    }
    if (r->out->vectors == NULL) {
        if (r->n > SIZE_MAX / sizeof(float) / r->dims) {
            return -ENOMEM;
        }
        r->out->vectors = loams_kit_mem_alloc(r->mem, r->n * r->dims * sizeof(float));
        if (r->out->vectors == NULL) {
            return -ENOMEM;
        }
        r->out->dims = r->dims;
        r->out->n = r->n;
    }
    return 0;
}

static int number_to_float(reader *r, const loams_kit_json_value *v, float *out, size_t which)
{
    double d;
    loams_kit_json_error je = {0, NULL};
    if (v->kind != LOAMS_KIT_JSON_NUMBER) {
        return fail(r, LOAMS_EINPUT, "vector %zu holds a %s where a number belongs", which,
                    loams_kit_json_kind_name(v->kind));
    }
    int rc = loams_kit_json_value_double(r->doc, v, &d, &je);
    if (rc == -ENOMEM) {
        return rc;
    }
    if (rc != 0 || !isfinite(d) || fabs(d) > FLT_MAX) {
        return fail(r, LOAMS_EINPUT, "vector %zu holds a number that is not a finite float32",
                    which);
    }
    *out = (float)d;
    return 0;
}

/* Reads ARRAY v of numbers (at depth) into vector slot `slot`. */
static int read_number_array(reader *r, const loams_kit_json_value *v, unsigned depth, size_t slot)
{
    loams_kit_json_iter it;
    loams_kit_json_value k, e;
    loams_kit_json_error je = {0, NULL};
    if (v->kind != LOAMS_KIT_JSON_ARRAY) {
        return fail(r, LOAMS_EINPUT, "vector %zu is a %s, not an array of numbers", slot,
                    loams_kit_json_kind_name(v->kind));
    }
    /* count first: the length decides dims before anything is stored */
    size_t count = 0;
    loams_kit_json_iter_start(r->doc, v, depth, &it);
    for (;;) {
        int more = loams_kit_json_iter_next(&it, &k, &e, &je);
        if (more < 0) {
            return fail(r, LOAMS_EINPUT, "malformed JSON at byte %zu", je.pos);
        }
        if (more == 0) {
            break;
        }
        count++;
    }
    int rc = set_dims(r, count, slot);
    if (rc != 0) {
        return rc;
    }
    float *dst = r->out->vectors + slot * r->dims;
    size_t i = 0;
    loams_kit_json_iter_start(r->doc, v, depth, &it);
    while (loams_kit_json_iter_next(&it, &k, &e, &je) == 1 && i < count) {
        rc = number_to_float(r, &e, &dst[i], slot);
        if (rc != 0) {
            return rc;
        }
        i++;
    }
    return 0;
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

/* Reads STRING v, base64 of little-endian float32s, into slot. */
static int read_base64(reader *r, const loams_kit_json_value *v, size_t slot)
{
    const char *text;
    size_t len;
    loams_kit_json_value_raw(r->doc, v, &text, &len);
    /* the raw text has its quotes; base64 needs no escapes */
    if (v->escaped || len < 2) {
        return fail(r, LOAMS_EINPUT, "vector %zu: base64 text with escapes", slot);
    }
    text++;
    len -= 2;
    if (len % 4 != 0) {
        return fail(r, LOAMS_EINPUT,
                    "vector %zu: base64 text of %zu characters (not a multiple "
                    "of 4)",
                    slot, len);
    }
    size_t pad = 0;
    if (len > 0 && text[len - 1] == '=') {
        pad++;
        if (len > 1 && text[len - 2] == '=') {
            pad++;
        }
    }
    size_t bytes = len / 4 * 3 - pad;
    if (bytes % 4 != 0) {
        return fail(r, LOAMS_EINPUT, "vector %zu: %zu bytes of base64 are not float32s", slot,
                    bytes);
    }
    int rc = set_dims(r, bytes / 4, slot);
    if (rc != 0) {
        return rc;
    }
    unsigned char *dst = (unsigned char *)(r->out->vectors + slot * r->dims);
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        int q[4];
        for (int j = 0; j < 4; j++) {
            unsigned char c = (unsigned char)text[i + j];
            q[j] = (c == '=' && i + 4 == len && j >= 4 - (int)pad) ? 0 : b64_value(c);
            if (q[j] < 0) {
                return fail(r, LOAMS_EINPUT, "vector %zu: a character that is not base64", slot);
            }
        }
        uint32_t w =
            (uint32_t)q[0] << 18 | (uint32_t)q[1] << 12 | (uint32_t)q[2] << 6 | (uint32_t)q[3];
        unsigned char b[3] = {(unsigned char)(w >> 16), (unsigned char)(w >> 8), (unsigned char)w};
        for (int j = 0; j < 3 && o < bytes; j++) {
            dst[o++] = b[j];
        }
    }
    for (size_t i = 0; i < r->dims; i++) {
        uint32_t bits = (uint32_t)dst[4 * i] | (uint32_t)dst[4 * i + 1] << 8 |
                        (uint32_t)dst[4 * i + 2] << 16 | (uint32_t)dst[4 * i + 3] << 24;
        float f;
        memcpy(&f, &bits, sizeof f);
        if (!isfinite(f)) {
            return fail(r, LOAMS_EINPUT, "vector %zu holds a number that is not finite", slot);
        }
        r->out->vectors[slot * r->dims + i] = f;
    }
    return 0;
}

static int read_vector(reader *r, const loams_kit_json_value *v, unsigned depth, size_t slot)
{
    if (v->kind == LOAMS_KIT_JSON_STRING) {
        return read_base64(r, v, slot);
    }
    return read_number_array(r, v, depth, slot);
}

/* An ARRAY of arrays (tei's root, ollama's "embeddings"), in input order. */
static int read_plain_list(reader *r, const loams_kit_json_value *list, unsigned depth)
{
    loams_kit_json_iter it;
    loams_kit_json_value k, v;
    loams_kit_json_error je = {0, NULL};
    size_t i = 0;
    if (list->kind != LOAMS_KIT_JSON_ARRAY) {
        return fail(r, LOAMS_EINPUT, "expected an array of vectors, found a %s",
                    loams_kit_json_kind_name(list->kind));
    }
    loams_kit_json_iter_start(r->doc, list, depth, &it);
    for (;;) {
        int more = loams_kit_json_iter_next(&it, &k, &v, &je);
        if (more < 0) {
            return fail(r, LOAMS_EINPUT, "malformed JSON at byte %zu", je.pos);
        }
        if (more == 0) {
            break;
        }
        if (i >= r->n) {
            return fail(r, -EIO, "the response holds more vectors than the %zu texts sent", r->n);
        }
        int rc = read_vector(r, &v, depth + 1, i);
        if (rc != 0) {
            return rc;
        }
        i++;
    }
    if (i != r->n) {
        return fail(r, -EIO, "the response holds %zu vectors for %zu texts", i, r->n);
    }
    return 0;
}

static uint64_t token_count(reader *r, const loams_kit_json_value *v)
{
    int64_t t = 0;
    if (v->kind != LOAMS_KIT_JSON_NUMBER || loams_kit_json_value_int(r->doc, v, &t, NULL) != 0 ||
        t < 0) {
        return 0;
    }
    return (uint64_t)t;
}

static int read_openai(reader *r, const loams_kit_json_value *root)
{
    loams_kit_json_value data, usage, tok;
    int rc = member(r, root, 0, "data", &data);
    if (rc < 0) {
        return rc;
    }
    if (rc == 0 || data.kind != LOAMS_KIT_JSON_ARRAY) {
        return fail(r, LOAMS_EINPUT, "the response has no \"data\" array");
    }
    r->seen = loams_kit_mem_calloc(r->mem, r->n ? r->n : 1, 1);
    if (r->seen == NULL) {
        return -ENOMEM;
    }
    loams_kit_json_iter it;
    loams_kit_json_value k, item, idx, emb;
    loams_kit_json_error je = {0, NULL};
    size_t count = 0;
    loams_kit_json_iter_start(r->doc, &data, 1, &it);
    for (;;) {
        int more = loams_kit_json_iter_next(&it, &k, &item, &je);
        if (more < 0) {
            return fail(r, LOAMS_EINPUT, "malformed JSON at byte %zu", je.pos);
        }
        if (more == 0) {
            break;
        }
        int64_t i = -1;
        rc = member(r, &item, 2, "index", &idx);
        if (rc < 0) {
            return rc;
        }
        if (rc == 0 || idx.kind != LOAMS_KIT_JSON_NUMBER ||
            loams_kit_json_value_int(r->doc, &idx, &i, NULL) != 0) {
            return fail(r, LOAMS_EINPUT, "data[%zu] has no integer \"index\"", count);
        }
        if (i < 0 || (uint64_t)i >= r->n || r->seen[i]) {
            return fail(r, -EIO,
                        "data[%zu] has index %lld: out of range for %zu texts, or "
                        "given twice",
                        count, (long long)i, r->n);
        }
        rc = member(r, &item, 2, "embedding", &emb);
        if (rc < 0) {
            return rc;
        }
        if (rc == 0) {
            return fail(r, LOAMS_EINPUT, "data[%zu] has no \"embedding\"", count);
        }
        rc = read_vector(r, &emb, 3, (size_t)i);
        if (rc != 0) {
            return rc;
        }
        r->seen[i] = 1;
        count++;
    }
    if (count != r->n) {
        return fail(r, -EIO, "the response holds %zu vectors for %zu texts", count, r->n);
    }
    rc = member(r, root, 0, "usage", &usage);
    if (rc < 0) {
        return rc;
    }
    if (rc == 1) {
        rc = member(r, &usage, 1, "prompt_tokens", &tok);
        if (rc < 0) {
            return rc;
        }
        if (rc == 1) {
            r->out->tokens = token_count(r, &tok);
        }
    }
    return 0;
}

static int read_ollama(reader *r, const loams_kit_json_value *root)
{
    loams_kit_json_value list, tok;
    int rc = member(r, root, 0, "embeddings", &list);
    if (rc < 0) {
        return rc;
    }
    if (rc == 0) {
        return fail(r, LOAMS_EINPUT, "the response has no \"embeddings\" array");
    }
    rc = read_plain_list(r, &list, 1);
    if (rc != 0) {
        return rc;
    }
    rc = member(r, root, 0, "prompt_eval_count", &tok);
    if (rc == 1) {
        r->out->tokens = token_count(r, &tok);
    }
    return rc < 0 ? rc : 0;
}

int loams__embed_parse(const loams_kit_mem *mem, loams__embed_api api, const char *body, size_t len,
                       size_t n, size_t dims, loams__embed_result *out, char *err, size_t errlen)
{
    reader r = {.mem = mem, .out = out, .n = n, .dims = dims, .err = err, .errlen = errlen};
    loams_kit_json_value root;
    loams_kit_json_error je = {0, NULL};
    memset(out, 0, sizeof *out);
    if (errlen > 0) {
        err[0] = '\0';
    }
    if (n == 0) {
        return fail(&r, -EIO, "no texts were sent");
    }
    int rc = loams_kit_json_doc_new(mem, &r.doc);
    if (rc != 0) {
        return rc;
    }
    loams_kit_json_doc_reset(r.doc, body, len);
    rc = loams_kit_json_doc_root(r.doc, &root, &je);
    if (rc == -ENOMEM) {
        goto out;
    }
    if (rc != 0) {
        rc = fail(&r, LOAMS_EINPUT, "the response is not JSON (at byte %zu: %s)", je.pos,
                  je.what ? je.what : "malformed");
        goto out;
    }
    switch (api) {
    case LOAMS__EMBED_API_OPENAI:
        rc = root.kind == LOAMS_KIT_JSON_OBJECT
                 ? read_openai(&r, &root)
                 : fail(&r, LOAMS_EINPUT, "the response is a JSON %s, not an object",
                        loams_kit_json_kind_name(root.kind));
        break;
    case LOAMS__EMBED_API_TEI: rc = read_plain_list(&r, &root, 0); break;
    case LOAMS__EMBED_API_OLLAMA:
        rc = root.kind == LOAMS_KIT_JSON_OBJECT
                 ? read_ollama(&r, &root)
                 : fail(&r, LOAMS_EINPUT, "the response is a JSON %s, not an object",
                        loams_kit_json_kind_name(root.kind));
        break;
    default: rc = fail(&r, LOAMS_EINPUT, "unknown api"); break;
    }
    if (rc == 0 && out->vectors == NULL) {
        rc = fail(&r, -EIO, "the response holds no vectors");
    }
out:
    loams_kit_mem_free(mem, r.seen);
    loams_kit_json_doc_free(r.doc);
    if (rc != 0) {
        loams__embed_result_free(mem, out);
    }
    return rc;
}

void loams__embed_result_free(const loams_kit_mem *mem, loams__embed_result *r)
{
    loams_kit_mem_free(mem, r->vectors);
    memset(r, 0, sizeof *r);
}

void loams__embed_error_message(const loams_kit_mem *mem, const char *body, size_t len, char *out,
                                size_t size)
{
    loams_kit_json_doc *doc = NULL;
    loams_kit_json_value root, e, m;
    char dummy[1];
    reader r = {.mem = mem, .err = dummy, .errlen = sizeof dummy};
    if (size == 0) {
        return;
    }
    out[0] = '\0';
    if (body == NULL || loams_kit_json_doc_new(mem, &doc) != 0) {
        return;
    }
    r.doc = doc;
    loams_kit_json_doc_reset(doc, body, len);
    if (loams_kit_json_doc_root(doc, &root, NULL) != 0 || member(&r, &root, 0, "error", &e) != 1) {
        goto out;
    }
    if (e.kind == LOAMS_KIT_JSON_OBJECT && member(&r, &e, 1, "message", &m) == 1) {
        e = m;
    }
    if (e.kind == LOAMS_KIT_JSON_STRING && e.end - e.start < size) {
        size_t got = 0;
        if (loams_kit_json_value_string(doc, &e, out, size - 1, &got, NULL) != 0) {
            got = 0;
        }
        out[got] = '\0';
    } else if (e.kind == LOAMS_KIT_JSON_STRING) {
        const char *raw;
        size_t rl;
        loams_kit_json_value_raw(doc, &e, &raw, &rl);
        size_t take = rl - 2 < size - 1 ? rl - 2 : size - 1;
        memcpy(out, raw + 1, take);
        out[take] = '\0';
    }
    for (char *p = out; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            *p = ' ';
        }
    }
out:
    loams_kit_json_doc_free(doc);
}
