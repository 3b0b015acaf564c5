/*
 * pb_reader.c - owns the compiled field tables of a Protobuf message and
 * the reading of its wire format into cells and JSON text (pb_reader.h).
 */
#include "pb_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <loams/status.h>

#include "loams/kit/utf8.h"

#define MAX_DEPTH 100
#define DENSE_MAX 4096

typedef struct pb_occ {
    const uint8_t *p; /* LEN: the bytes */
    uint64_t v;       /* VARINT, I32, I64: the value; LEN: the length */
    int32_t next;
    uint8_t wt;
} pb_occ;

typedef struct msg_table {
    int32_t *dense; /* number -> field index + 1 (0: unknown), numbers < ndense */
    uint32_t ndense;
    uint32_t *nums; /* sorted numbers beyond, and their field indexes */
    int32_t *idx;
    size_t nsorted;
    uint8_t *wire;   /* per field: the wire type of its values (wire_of) */
    char *keys;      /* per field: ",\"name\":" (JSON output), back to back */
    size_t *key_off; /* field k's key is keys[key_off[k] .. key_off[k + 1]) */
} msg_table;

struct pb_reader {
    const loams_kit_mem *mem;
    const loams_kit_pb_schema *s;
    long root;
    msg_table *tables; /* per schema message */
};

/* The wire type a field's values are written with (2 also for packed). */
static inline int wire_of(int type)
{
    switch (type) {
    case LOAMS_KIT_PB_DOUBLE:
    case LOAMS_KIT_PB_FIXED64:
    case LOAMS_KIT_PB_SFIXED64: return 1;
    case LOAMS_KIT_PB_FLOAT:
    case LOAMS_KIT_PB_FIXED32:
    case LOAMS_KIT_PB_SFIXED32: return 5;
    case LOAMS_KIT_PB_STRING:
    case LOAMS_KIT_PB_BYTES:
    case LOAMS_KIT_PB_MESSAGE: return 2;
    default: return 0;
    }
}

/* ---- compiling ---- */

void pb_reader_free(pb_reader *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; r->tables != NULL && i < r->s->nmessages; i++) {
        loams_kit_mem_free(r->mem, r->tables[i].dense);
        loams_kit_mem_free(r->mem, r->tables[i].nums);
        loams_kit_mem_free(r->mem, r->tables[i].idx);
        loams_kit_mem_free(r->mem, r->tables[i].keys);
        loams_kit_mem_free(r->mem, r->tables[i].wire);
        loams_kit_mem_free(r->mem, r->tables[i].key_off);
    }
    loams_kit_mem_free(r->mem, r->tables);
    loams_kit_mem_free(r->mem, r);
}

int pb_reader_compile(const loams_kit_mem *mem, const loams_kit_pb_schema *s, long root,
                      pb_reader **out)
{
    *out = NULL;
    pb_reader *r = loams_kit_mem_calloc(mem, 1, sizeof *r);
    if (r == NULL) {
        return -ENOMEM;
    }
    r->mem = mem;
    r->s = s;
    r->root = root;
    r->tables = loams_kit_mem_calloc(mem, s->nmessages + 1, sizeof *r->tables);
    if (r->tables == NULL) {
        pb_reader_free(r);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->nmessages; i++) {
        const loams_kit_pb_message *m = &s->messages[i];
        msg_table *t = &r->tables[i];
        uint32_t max = 0;
        size_t beyond = 0;
        for (size_t k = 0; k < m->nfields; k++) {
            if (m->fields[k].number < DENSE_MAX) {
                max = m->fields[k].number > max ? m->fields[k].number : max;
            } else {
                beyond++;
            }
        }
        t->ndense = max + 1;
        t->dense = loams_kit_mem_calloc(mem, t->ndense, sizeof *t->dense);
        t->nums = loams_kit_mem_calloc(mem, beyond + 1, sizeof *t->nums);
        t->idx = loams_kit_mem_calloc(mem, beyond + 1, sizeof *t->idx);
        if (t->dense == NULL || t->nums == NULL || t->idx == NULL) {
            pb_reader_free(r);
            return -ENOMEM;
        }
        for (size_t k = 0; k < m->nfields; k++) {
            uint32_t num = m->fields[k].number;
            if (num < DENSE_MAX) {
                t->dense[num] = (int32_t)k + 1;
                continue;
            }
            size_t j = t->nsorted++; /* insertion sort: few fields beyond */
            while (j > 0 && t->nums[j - 1] > num) {
                t->nums[j] = t->nums[j - 1];
                t->idx[j] = t->idx[j - 1];
                j--;
            }
            t->nums[j] = num;
            t->idx[j] = (int32_t)k;
        }
        /* the members' keys, written once here instead of per record (a
         * name from a descriptor set may hold anything: escaped) */
        size_t total = 0;
        for (size_t k = 0; k < m->nfields; k++) {
            total += 6 * strlen(m->fields[k].name) + 4;
        }
        t->keys = loams_kit_mem_alloc(mem, total + 1);
        t->key_off = loams_kit_mem_calloc(mem, m->nfields + 1, sizeof *t->key_off);
        t->wire = loams_kit_mem_calloc(mem, m->nfields + 1, 1);
        if (t->keys == NULL || t->key_off == NULL || t->wire == NULL) {
            pb_reader_free(r);
            return -ENOMEM;
        }
        size_t o = 0;
        for (size_t k = 0; k < m->nfields; k++) {
            t->wire[k] = (uint8_t)wire_of(m->fields[k].type);
            t->keys[o++] = ',';
            t->keys[o++] = '"';
            for (const char *nm = m->fields[k].name; *nm != '\0'; nm++) {
                unsigned char ch = (unsigned char)*nm;
                if (ch == '"' || ch == '\\') {
                    t->keys[o++] = '\\';
                    t->keys[o++] = (char)ch;
                } else if (ch < 0x20) {
                    o += (size_t)sprintf(t->keys + o, "\\u%04x", ch);
                } else {
                    t->keys[o++] = (char)ch;
                }
            }
            t->keys[o++] = '"';
            t->keys[o++] = ':';
            t->key_off[k + 1] = o;
        }
    }
    *out = r;
    return 0;
}

size_t pb_reader_columns(const pb_reader *r)
{
    return r->s->messages[r->root].nfields;
}

const char *pb_reader_column(const pb_reader *r, size_t i)
{
    return r->s->messages[r->root].fields[i].name;
}

static inline int field_index(const msg_table *t, uint32_t num)
{
    if (num < t->ndense) {
        return t->dense[num] - 1;
    }
    size_t lo = 0, hi = t->nsorted;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->nums[mid] == num) {
            return t->idx[mid];
        }
        if (t->nums[mid] < num) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return -1;
}

void pb_scratch_free(pb_scratch *s)
{
    loams_kit_mem_free(s->mem, s->buf);
    loams_kit_mem_free(s->mem, s->occ);
    loams_kit_mem_free(s->mem, s->heads);
    loams_kit_mem_free(s->mem, s->at);
    const loams_kit_mem *mem = s->mem;
    memset(s, 0, sizeof *s);
    s->mem = mem;
}

/* ---- reading ---- */

typedef struct rd {
    const pb_reader *r;
    pb_scratch *s;
    const uint8_t *rec;
    size_t base;
    char *msg;
    size_t size;
} rd;

static int fail(rd *c, const uint8_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(rd *c, const uint8_t *at, const char *fmt, ...)
{
    int o = snprintf(c->msg, c->size, "at byte %zu: ", (size_t)(at - c->rec) + c->base);
    if (o > 0 && (size_t)o < c->size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->msg + o, c->size - (size_t)o, fmt, ap);
        va_end(ap);
    }
    return LOAMS_EINPUT;
}

static int grow_to(const loams_kit_mem *mem, void **p, size_t *cap, size_t need, size_t size)
{
    size_t n = *cap != 0 ? *cap : 64;
    while (n < need) {
        n *= 2;
    }
    void *q = loams_kit_mem_realloc(mem, *p, n * size);
    if (q == NULL) {
        return -ENOMEM;
    }
    *p = q;
    *cap = n;
    return 0;
}

/* Room for `need` items: checked inline, grown out of line. */
static inline int grow(const loams_kit_mem *mem, void **p, size_t *cap, size_t need, size_t size)
{
    return need <= *cap ? 0 : grow_to(mem, p, cap, need, size);
}

static inline int varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) {
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= end) {
            return -1;
        }
        uint8_t b = *p++;
        if (shift == 63 && b > 1) {
            return -1;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            *pp = p;
            return 0;
        }
    }
    return -1;
}

static const char *const wire_names[] = {"0 (varint)",      "1 (64-bit)",    "2 (length-delimited)",
                                         "3 (group start)", "4 (group end)", "5 (32-bit)",
                                         "6 (invalid)",     "7 (invalid)"};

/* Skips a group's fields up to its end (the start tag read). */
static int skip_group(rd *c, const uint8_t **pp, const uint8_t *end, uint32_t num, int depth)
{
    const uint8_t *p = *pp;
    if (depth > MAX_DEPTH) {
        return fail(c, p, "groups nest deeper than %d levels", MAX_DEPTH);
    }
    for (;;) {
        const uint8_t *at = p;
        uint64_t key, v;
        if (p >= end) {
            return fail(c, p, "group of field %" PRIu32 " is not closed", num);
        }
        if (varint(&p, end, &key) != 0) {
            return fail(c, at, "a field key is not a valid varint");
        }
        int wt = (int)(key & 7);
        uint32_t fn = (uint32_t)(key >> 3);
        switch (wt) {
        case 0:
            if (varint(&p, end, &v) != 0) {
                return fail(c, at, "field %" PRIu32 ": a varint is cut or too long", fn);
            }
            break;
        case 1:
        case 5:
            if ((size_t)(end - p) < (wt == 1 ? 8u : 4u)) {
                return fail(c, at, "field %" PRIu32 ": wire type %s is cut", fn, wire_names[wt]);
            }
            p += wt == 1 ? 8 : 4;
            break;
        case 2:
            if (varint(&p, end, &v) != 0 || v > (uint64_t)(end - p)) {
                return fail(c, at, "field %" PRIu32 ": a length runs past the end", fn);
            }
            p += v;
            break;
        case 3: {
            int rc = skip_group(c, &p, end, fn, depth + 1);
            if (rc != 0) {
                return rc;
            }
            break;
        }
        case 4:
            if (fn != num) {
                return fail(c, at, "group of field %" PRIu32 " closed as field %" PRIu32, num, fn);
            }
            *pp = p;
            return 0;
        default: return fail(c, at, "field %" PRIu32 ": invalid wire type %d", fn, wt);
        }
    }
}

/* Reads message `mi`'s bytes p[0..n) into the frame at heads[h..): the
 * occurrences of each known field, in order.  Called once per span of a
 * message given more than once (they merge). */
static int scan(rd *c, long mi, const uint8_t *p, size_t n, size_t h)
{
    const loams_kit_pb_message *m = &c->r->s->messages[mi];
    const msg_table *t = &c->r->tables[mi];
    const uint8_t *end = p + n;
    pb_scratch *s = c->s;
    while (p < end) {
        const uint8_t *at = p;
        uint64_t key, v = 0;
        if (varint(&p, end, &key) != 0) {
            return fail(c, at, "a field key is not a valid varint");
        }
        uint32_t num = (uint32_t)(key >> 3);
        int wt = (int)(key & 7);
        if (num == 0 || key >> 3 > 536870911u) {
            return fail(c, at, "field number %" PRIu64 " is not valid", key >> 3);
        }
        const uint8_t *val = p;
        switch (wt) {
        case 0:
            if (varint(&p, end, &v) != 0) {
                return fail(c, at, "field %" PRIu32 ": a varint is cut or too long", num);
            }
            break;
        case 1:
            if (end - p < 8) {
                return fail(c, at, "field %" PRIu32 ": wire type %s is cut", num, wire_names[wt]);
            }
            memcpy(&v, p, 8); /* little-endian hosts: the wire's order */
            p += 8;
            break;
        case 5: {
            if (end - p < 4) {
                return fail(c, at, "field %" PRIu32 ": wire type %s is cut", num, wire_names[wt]);
            }
            uint32_t w;
            memcpy(&w, p, 4);
            v = w;
            p += 4;
            break;
        }
        case 2:
            if (varint(&p, end, &v) != 0 || v > (uint64_t)(end - p)) {
                return fail(c, at,
                            "field %" PRIu32 ": a length of %" PRIu64
                            " bytes runs past the end of the message",
                            num, v);
            }
            val = p;
            p += v;
            break;
        case 3: {
            int rc = skip_group(c, &p, end, num, 0);
            if (rc != 0) {
                return rc;
            }
            continue; /* groups are skipped, known number or not */
        }
        default:
            return fail(c, at, "field %" PRIu32 ": wire type %s is not valid here", num,
                        wire_names[wt]);
        }
        int fi = field_index(t, num);
        if (fi < 0) {
            continue; /* unknown: skipped */
        }
        const loams_kit_pb_field *f = &m->fields[fi];
        int want = t->wire[fi];
        if (wt != want && !(wt == 2 && f->label == LOAMS_KIT_PB_REPEATED)) {
            return fail(c, at, "field %" PRIu32 " (%s, %s) has wire type %s, not %s", num, f->name,
                        loams_kit_pb_type_name(f->type), wire_names[wt], wire_names[want]);
        }
        if (grow(s->mem, (void **)&s->occ, &s->cap_occ, s->nocc + 1, sizeof *s->occ) != 0) {
            return -ENOMEM;
        }
        int32_t oi = (int32_t)s->nocc++;
        pb_occ *o = &s->occ[oi];
        o->p = val;
        o->v = v;
        o->wt = (uint8_t)wt;
        o->next = -1;
        int32_t *hd = s->heads + h + 2 * (size_t)fi;
        if (hd[0] < 0) {
            hd[0] = oi;
        } else {
            s->occ[hd[1]].next = oi;
        }
        hd[1] = oi;
    }
    return 0;
}

/* A frame for message mi: 2 entries per field, at the returned offset. */
static int frame_push(rd *c, long mi, size_t *h)
{
    pb_scratch *s = c->s;
    size_t nf = c->r->s->messages[mi].nfields;
    if (grow(s->mem, (void **)&s->heads, &s->cap_heads, s->nheads + 2 * nf + 1, sizeof *s->heads) !=
        0) {
        return -ENOMEM;
    }
    *h = s->nheads;
    for (size_t i = 0; i < 2 * nf; i++) {
        s->heads[*h + i] = -1;
    }
    s->nheads += 2 * nf;
    return 0;
}

/* Reads every occurrence of a message field (they merge) into a new frame. */
static int frame_of(rd *c, long mi, int32_t head, size_t *h)
{
    int rc = frame_push(c, mi, h);
    for (int32_t o = head; rc == 0 && o >= 0; o = c->s->occ[o].next) {
        const pb_occ *oc = &c->s->occ[o];
        rc = scan(c, mi, oc->p, (size_t)oc->v, *h);
    }
    return rc;
}

/* ---- scalars ---- */

typedef struct scalar {
    enum { S_INT, S_UINT, S_DOUBLE, S_BOOL } k;
    int64_t i;
    uint64_t u;
    double d;
} scalar;

static scalar to_scalar(int type, uint64_t v)
{
    scalar x = {S_INT, 0, 0, 0};
    switch (type) {
    case LOAMS_KIT_PB_INT32:
    case LOAMS_KIT_PB_ENUM: x.i = (int32_t)(uint32_t)v; break;
    case LOAMS_KIT_PB_SFIXED32: x.i = (int32_t)(uint32_t)v; break;
    case LOAMS_KIT_PB_INT64:
    case LOAMS_KIT_PB_SFIXED64: x.i = (int64_t)v; break;
    case LOAMS_KIT_PB_UINT32:
    case LOAMS_KIT_PB_FIXED32: x.i = (uint32_t)v; break;
    case LOAMS_KIT_PB_SINT32: {
        uint32_t u = (uint32_t)v;
        x.i = (int32_t)((u >> 1) ^ (0u - (u & 1)));
        break;
    }
    case LOAMS_KIT_PB_SINT64: x.i = (int64_t)((v >> 1) ^ (0 - (v & 1))); break;
    case LOAMS_KIT_PB_UINT64:
    case LOAMS_KIT_PB_FIXED64:
        x.k = S_UINT;
        x.u = v;
        break;
    case LOAMS_KIT_PB_BOOL:
        x.k = S_BOOL;
        x.i = v != 0;
        break;
    case LOAMS_KIT_PB_FLOAT: {
        float f;
        uint32_t w = (uint32_t)v;
        memcpy(&f, &w, 4);
        x.k = S_DOUBLE;
        x.d = f;
        break;
    }
    case LOAMS_KIT_PB_DOUBLE:
        x.k = S_DOUBLE;
        memcpy(&x.d, &v, 8);
        break;
    default: break;
    }
    return x;
}

/* Calls fn for each value of a numeric field's occurrences (packed or
 * not), last one only when !all. */
typedef int (*value_fn)(rd *c, const loams_kit_pb_field *f, uint64_t v, void *arg);

static int each_value(rd *c, const loams_kit_pb_field *f, int32_t head, value_fn fn, void *arg)
{
    for (int32_t o = head; o >= 0; o = c->s->occ[o].next) {
        const pb_occ oc = c->s->occ[o];
        if (oc.wt != 2) {
            int rc = fn(c, f, oc.v, arg);
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        const uint8_t *p = oc.p, *end = oc.p + oc.v;
        int want = wire_of(f->type);
        while (p < end) {
            uint64_t v = 0;
            if (want == 0) {
                const uint8_t *at = p;
                if (varint(&p, end, &v) != 0) {
                    return fail(c, at, "field %" PRIu32 " (%s): a packed varint is cut", f->number,
                                f->name);
                }
            } else {
                size_t w = want == 1 ? 8 : 4;
                if ((size_t)(end - p) < w) {
                    return fail(c, p, "field %" PRIu32 " (%s): packed values end mid-value",
                                f->number, f->name);
                }
                uint32_t v32;
                if (w == 8) {
                    memcpy(&v, p, 8);
                } else {
                    memcpy(&v32, p, 4);
                    v = v32;
                }
                p += w;
            }
            int rc = fn(c, f, v, arg);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

/* ---- JSON text ---- */

static inline int put(pb_scratch *s, const char *p, size_t n)
{
    if (grow(s->mem, (void **)&s->buf, &s->cap, s->len + n + 1, 1) != 0) {
        return -ENOMEM;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    return 0;
}

static int putf(pb_scratch *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int putf(pb_scratch *s, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return put(s, tmp, n > 0 ? (size_t)n : 0);
}

/* Decimal digits of v without printf (the common case of JSON numbers). */
static int put_u64(pb_scratch *s, uint64_t v, int neg)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    if (neg) {
        tmp[--i] = '-';
    }
    return put(s, tmp + i, sizeof tmp - i);
}

static int put_i64(pb_scratch *s, int64_t v)
{
    return put_u64(s, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, v < 0);
}

/* A JSON string of p[0..n) (UTF-8, checked by the caller); its first
 * `plain` bytes need no escape. */
static int put_json_string_from(pb_scratch *s, const uint8_t *p, size_t n, size_t plain)
{
    if (plain == n) { /* the common case: copied at once */
        if (grow(s->mem, (void **)&s->buf, &s->cap, s->len + n + 3, 1) != 0) {
            return -ENOMEM;
        }
        char *o = s->buf + s->len;
        o[0] = '"';
        memcpy(o + 1, p, n);
        o[n + 1] = '"';
        s->len += n + 2;
        return 0;
    }
    if (grow(s->mem, (void **)&s->buf, &s->cap, s->len + 6 * n + 3, 1) != 0) {
        return -ENOMEM;
    }
    char *o = s->buf + s->len;
    *o++ = '"';
    while (plain < n && p[plain] >= 0x20 && p[plain] != '"' && p[plain] != '\\') {
        plain++;
    }
    memcpy(o, p, plain);
    o += plain;
    for (size_t i = plain; i < n; i++) {
        uint8_t ch = p[i];
        if (ch == '"' || ch == '\\') {
            *o++ = '\\';
            *o++ = (char)ch;
        } else if (ch < 0x20) {
            o += sprintf(o, "\\u%04x", ch);
        } else {
            *o++ = (char)ch;
        }
    }
    *o++ = '"';
    s->len = (size_t)(o - s->buf);
    return 0;
}

static int put_json_string(pb_scratch *s, const uint8_t *p, size_t n)
{
    return put_json_string_from(s, p, n, loams_kit_utf8_json_plain(p, n));
}

static int put_base64(pb_scratch *s, const uint8_t *p, size_t n)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (grow(s->mem, (void **)&s->buf, &s->cap, s->len + (n + 2) / 3 * 4 + 3, 1) != 0) {
        return -ENOMEM;
    }
    char *o = s->buf + s->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        v |= i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0;
        v |= i + 2 < n ? p[i + 2] : 0;
        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        *o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? b64[v & 63] : '=';
    }
    *o++ = '"';
    s->len = (size_t)(o - s->buf);
    return 0;
}

static int put_scalar(pb_scratch *s, scalar x, int type)
{
    switch (x.k) {
    case S_INT: return put_i64(s, x.i);
    case S_UINT: return put_u64(s, x.u, 0);
    case S_BOOL: return put(s, x.i ? "true" : "false", x.i ? 4 : 5);
    case S_DOUBLE:
        if (!isfinite(x.d)) {
            return put(s, "null", 4);
        }
        return putf(s, type == LOAMS_KIT_PB_FLOAT ? "%.9g" : "%.17g", x.d);
    }
    return 0;
}

static const char *enum_name(const loams_kit_pb_schema *sc, const loams_kit_pb_field *f,
                             int32_t number)
{
    const loams_kit_pb_enum *en = &sc->enums[f->enm];
    for (size_t i = 0; i < en->nvalues; i++) {
        if (en->values[i].number == number) {
            return en->values[i].name;
        }
    }
    return NULL;
}

static int check_utf8(rd *c, const loams_kit_pb_field *f, const uint8_t *p, size_t n)
{
    if (!loams_kit_utf8_all_ascii(p, n) && loams_kit_utf8_valid_prefix(p, n) != n) {
        return fail(c, p + loams_kit_utf8_valid_prefix(p, n),
                    "field %" PRIu32 " (%s): the string is not valid UTF-8", f->number, f->name);
    }
    return 0;
}

static int json_message(rd *c, long mi, size_t h, int depth);

/* The JSON of one numeric value (each_value's callback). */
static int json_value_fn(rd *c, const loams_kit_pb_field *f, uint64_t v, void *arg)
{
    int *first = arg;
    pb_scratch *s = c->s;
    if (!*first && put(s, ",", 1) != 0) {
        return -ENOMEM;
    }
    *first = 0;
    if (f->type == LOAMS_KIT_PB_ENUM) {
        const char *name = enum_name(c->r->s, f, (int32_t)(uint32_t)v);
        if (name != NULL) {
            return put_json_string(s, (const uint8_t *)name, strlen(name));
        }
    }
    return put_scalar(s, to_scalar(f->type, v), f->type);
}

/* The JSON of a LEN occurrence of a string, bytes or message field. */
static int json_len(rd *c, const loams_kit_pb_field *f, const pb_occ *oc, int depth)
{
    if (f->type == LOAMS_KIT_PB_STRING) {
        /* one scan: a plain ASCII string needs no UTF-8 check */
        size_t n = (size_t)oc->v, plain = loams_kit_utf8_json_plain(oc->p, n);
        int rc = plain < n ? check_utf8(c, f, oc->p, n) : 0;
        return rc != 0 ? rc : put_json_string_from(c->s, oc->p, n, plain);
    }
    if (f->type == LOAMS_KIT_PB_BYTES) {
        return put_base64(c->s, oc->p, (size_t)oc->v);
    }
    size_t h;
    int rc = frame_push(c, f->msg, &h);
    if (rc == 0) {
        rc = scan(c, f->msg, oc->p, (size_t)oc->v, h);
    }
    if (rc == 0) {
        rc = json_message(c, f->msg, h, depth + 1);
    }
    return rc;
}

static int put_timestamp(pb_scratch *s, int64_t sec, int32_t nanos)
{
    if (sec < -62135596800LL || sec > 253402300799LL || nanos < 0 || nanos > 999999999) {
        return put(s, "null", 4);
    }
    time_t t = (time_t)sec;
    struct tm tm;
    gmtime_r(&t, &tm);
    char tmp[64];
    size_t n = strftime(tmp, sizeof tmp, "\"%Y-%m-%dT%H:%M:%S", &tm);
    if (nanos != 0) {
        if (nanos % 1000000 == 0) {
            n += (size_t)snprintf(tmp + n, sizeof tmp - n, ".%03d", nanos / 1000000);
        } else if (nanos % 1000 == 0) {
            n += (size_t)snprintf(tmp + n, sizeof tmp - n, ".%06d", nanos / 1000);
        } else {
            n += (size_t)snprintf(tmp + n, sizeof tmp - n, ".%09d", nanos);
        }
    }
    n += (size_t)snprintf(tmp + n, sizeof tmp - n, "Z\"");
    return put(s, tmp, n);
}

static int put_duration(pb_scratch *s, int64_t sec, int32_t nanos)
{
    int neg = sec < 0 || nanos < 0;
    uint64_t as = sec < 0 ? (uint64_t)0 - (uint64_t)sec : (uint64_t)sec;
    int32_t an = nanos < 0 ? -nanos : nanos;
    if (an == 0) {
        return putf(s, "\"%s%" PRIu64 "s\"", neg ? "-" : "", as);
    }
    char frac[16];
    snprintf(frac, sizeof frac, "%09d", an);
    size_t fl = 9;
    while (fl > 3 && frac[fl - 1] == '0' && (fl % 3 != 0 || frac[fl - 3] == '0')) {
        fl -= fl % 3 != 0 ? 1 : 3;
    }
    while (fl % 3 != 0) {
        fl++;
    }
    return putf(s, "\"%s%" PRIu64 ".%.*ss\"", neg ? "-" : "", as, (int)fl, frac);
}

/* The last value of a numeric field in the frame, or 0. */
static uint64_t last_value(rd *c, size_t h, int fi)
{
    int32_t t = c->s->heads[h + 2 * (size_t)fi + 1];
    if (t < 0) {
        return 0;
    }
    const pb_occ *oc = &c->s->occ[t];
    if (oc->wt != 2) {
        return oc->v;
    }
    /* a packed run given for a singular field: its last value */
    uint64_t v = 0;
    const uint8_t *p = oc->p, *end = oc->p + oc->v;
    while (p < end && varint(&p, end, &v) == 0) {
    }
    return v;
}

/* seconds (field 1) and nanos (field 2) of a Timestamp or Duration frame. */
static void seconds_nanos(rd *c, long mi, size_t h, int64_t *sec, int32_t *nanos)
{
    const msg_table *t = &c->r->tables[mi];
    int fs = field_index(t, 1), fn = field_index(t, 2);
    *sec = fs >= 0 ? (int64_t)last_value(c, h, fs) : 0;
    *nanos = fn >= 0 ? (int32_t)(uint32_t)last_value(c, h, fn) : 0;
}

static int json_field_value(rd *c, const loams_kit_pb_field *f, size_t h, int fi, int depth);

/* A message's JSON: its fields in declaration order (pb_reader.h). */
static int json_message(rd *c, long mi, size_t h, int depth)
{
    pb_scratch *s = c->s;
    const loams_kit_pb_message *m = &c->r->s->messages[mi];
    if (depth > MAX_DEPTH) {
        return fail(c, c->rec, "messages nest deeper than %d levels", MAX_DEPTH);
    }
    if (m->wkt == LOAMS_KIT_PB_WKT_TIMESTAMP || m->wkt == LOAMS_KIT_PB_WKT_DURATION) {
        int64_t sec;
        int32_t nanos;
        seconds_nanos(c, mi, h, &sec, &nanos);
        return m->wkt == LOAMS_KIT_PB_WKT_TIMESTAMP ? put_timestamp(s, sec, nanos)
                                                    : put_duration(s, sec, nanos);
    }
    if (m->wkt == LOAMS_KIT_PB_WKT_WRAPPER && m->nfields == 1) {
        return json_field_value(c, &m->fields[0], h, 0, depth);
    }
    if (put(s, "{", 1) != 0) {
        return -ENOMEM;
    }
    int first = 1;
    for (size_t k = 0; k < m->nfields; k++) {
        const loams_kit_pb_field *f = &m->fields[k];
        int32_t head = s->heads[h + 2 * k];
        if (head < 0 && f->presence) {
            continue;
        }
        const msg_table *t = &c->r->tables[mi];
        size_t from = t->key_off[k] + (size_t)first; /* the first one without its comma */
        if (put(s, t->keys + from, t->key_off[k + 1] - from) != 0) {
            return -ENOMEM;
        }
        first = 0;
        int rc = json_field_value(c, f, h, (int)k, depth);
        if (rc != 0) {
            return rc;
        }
    }
    return put(s, "}", 1);
}

/* The JSON of field fi of the frame at h (present or not). */
static int json_field_value(rd *c, const loams_kit_pb_field *f, size_t h, int fi, int depth)
{
    pb_scratch *s = c->s;
    int32_t head = s->heads[h + 2 * (size_t)fi];
    int32_t tail = s->heads[h + 2 * (size_t)fi + 1];
    int rc = 0;
    if (f->label == LOAMS_KIT_PB_REPEATED && f->type == LOAMS_KIT_PB_MESSAGE &&
        c->r->s->messages[f->msg].map_entry) {
        if (put(s, "{", 1) != 0) {
            return -ENOMEM;
        }
        const loams_kit_pb_message *em = &c->r->s->messages[f->msg];
        const msg_table *et = &c->r->tables[f->msg];
        int kf = field_index(et, 1), vf = field_index(et, 2);
        int first = 1;
        for (int32_t o = head; rc == 0 && o >= 0; o = s->occ[o].next) {
            size_t eh;
            pb_occ oc = s->occ[o];
            if ((rc = frame_push(c, f->msg, &eh)) != 0 ||
                (rc = scan(c, f->msg, oc.p, (size_t)oc.v, eh)) != 0) {
                break;
            }
            if (!first && (rc = put(s, ",", 1)) != 0) {
                break;
            }
            first = 0;
            /* the key as a JSON string */
            if (kf >= 0 && em->fields[kf].type == LOAMS_KIT_PB_STRING) {
                rc = json_field_value(c, &em->fields[kf], eh, kf, depth);
            } else if (kf >= 0) {
                if ((rc = put(s, "\"", 1)) == 0 &&
                    (rc = json_field_value(c, &em->fields[kf], eh, kf, depth)) == 0) {
                    rc = put(s, "\"", 1);
                }
            } else {
                rc = put(s, "\"\"", 2);
            }
            if (rc == 0 && (rc = put(s, ":", 1)) == 0) {
                rc = vf >= 0 ? json_field_value(c, &em->fields[vf], eh, vf, depth)
                             : put(s, "null", 4);
            }
        }
        return rc != 0 ? rc : put(s, "}", 1);
    }
    if (f->label == LOAMS_KIT_PB_REPEATED) {
        if (put(s, "[", 1) != 0) {
            return -ENOMEM;
        }
        int first = 1;
        if (wire_of(f->type) != 2) {
            rc = each_value(c, f, head, json_value_fn, &first);
        } else {
            for (int32_t o = head; rc == 0 && o >= 0; o = s->occ[o].next) {
                pb_occ oc = s->occ[o];
                if (!first && (rc = put(s, ",", 1)) != 0) {
                    break;
                }
                first = 0;
                rc = json_len(c, f, &oc, depth);
            }
        }
        return rc != 0 ? rc : put(s, "]", 1);
    }
    if (f->type == LOAMS_KIT_PB_MESSAGE) {
        if (head < 0) {
            return put(s, "null", 4);
        }
        size_t mh;
        if ((rc = frame_of(c, f->msg, head, &mh)) != 0) {
            return rc;
        }
        return json_message(c, f->msg, mh, depth + 1);
    }
    if (head < 0) {
        /* the default */
        switch (f->type) {
        case LOAMS_KIT_PB_STRING:
        case LOAMS_KIT_PB_BYTES: return put(s, "\"\"", 2);
        case LOAMS_KIT_PB_BOOL: return put(s, "false", 5);
        case LOAMS_KIT_PB_ENUM: {
            const loams_kit_pb_enum *en = &c->r->s->enums[f->enm];
            return put_json_string(s, (const uint8_t *)en->values[0].name,
                                   strlen(en->values[0].name));
        }
        default: return put(s, "0", 1);
        }
    }
    if (wire_of(f->type) == 2) {
        pb_occ oc = s->occ[tail];
        return json_len(c, f, &oc, depth);
    }
    int first = 1;
    return json_value_fn(c, f, last_value(c, h, fi), &first);
}

/* ---- top-level cells ---- */

/* The cell of a numeric/enum scalar value. */
static int scalar_cell(rd *c, const loams_kit_pb_field *f, uint64_t v, loams_value *cell,
                       size_t col)
{
    if (f->type == LOAMS_KIT_PB_ENUM) {
        int32_t num = (int32_t)(uint32_t)v;
        const char *name = enum_name(c->r->s, f, num);
        cell->type = LOAMS_T_STRING;
        if (name != NULL) {
            cell->u.s.ptr = name;
            cell->u.s.len = strlen(name);
            return 0;
        }
        size_t start = c->s->len;
        if (putf(c->s, "%" PRId32, num) != 0) {
            return -ENOMEM;
        }
        c->s->at[col] = start + 1;
        cell->u.s.len = c->s->len - start;
        return 0;
    }
    scalar x = to_scalar(f->type, v);
    switch (x.k) {
    case S_INT:
        cell->type = LOAMS_T_INT64;
        cell->u.i = x.i;
        break;
    case S_UINT:
        if (x.u > (uint64_t)INT64_MAX) {
            return fail(c, c->rec,
                        "field %" PRIu32 " (%s): %s value %" PRIu64
                        " does not fit a 64-bit signed column",
                        f->number, f->name, loams_kit_pb_type_name(f->type), x.u);
        }
        cell->type = LOAMS_T_INT64;
        cell->u.i = (int64_t)x.u;
        break;
    case S_BOOL:
        cell->type = LOAMS_T_BOOL;
        cell->u.b = (int)x.i;
        break;
    case S_DOUBLE:
        cell->type = LOAMS_T_FLOAT64;
        cell->u.f = x.d;
        break;
    }
    return 0;
}

/* The cell of field fi of the frame at h. */
static int field_cell(rd *c, const loams_kit_pb_field *f, size_t h, int fi, loams_value *cell,
                      size_t col)
{
    pb_scratch *s = c->s;
    int32_t head = s->heads[h + 2 * (size_t)fi];
    int32_t tail = s->heads[h + 2 * (size_t)fi + 1];
    memset(cell, 0, sizeof *cell);
    int wkt = f->type == LOAMS_KIT_PB_MESSAGE ? c->r->s->messages[f->msg].wkt : 0;
    int json = f->label == LOAMS_KIT_PB_REPEATED || (f->type == LOAMS_KIT_PB_MESSAGE && !wkt);
    if (json) {
        if (head < 0 && f->label != LOAMS_KIT_PB_REPEATED) {
            return 0; /* an absent message: NULL */
        }
        size_t start = s->len;
        int rc = json_field_value(c, f, h, fi, 0);
        if (rc != 0) {
            return rc;
        }
        cell->type = LOAMS_T_JSON;
        cell->u.s.len = s->len - start;
        s->at[col] = start + 1;
        return 0;
    }
    if (f->type == LOAMS_KIT_PB_MESSAGE) {
        if (head < 0) {
            return 0;
        }
        size_t mh;
        int rc = frame_of(c, f->msg, head, &mh);
        if (rc != 0) {
            return rc;
        }
        const loams_kit_pb_message *m = &c->r->s->messages[f->msg];
        if (wkt == LOAMS_KIT_PB_WKT_WRAPPER) {
            return m->nfields == 1 ? field_cell(c, &m->fields[0], mh, 0, cell, col) : 0;
        }
        int64_t sec;
        int32_t nanos;
        seconds_nanos(c, f->msg, mh, &sec, &nanos);
        if (sec > INT64_MAX / 1000000 - 1 || sec < INT64_MIN / 1000000 + 1) {
            return fail(c, c->rec, "field %" PRIu32 " (%s): %" PRId64 " seconds is out of range",
                        f->number, f->name, sec);
        }
        cell->type = wkt == LOAMS_KIT_PB_WKT_TIMESTAMP ? LOAMS_T_TIMESTAMP : LOAMS_T_INT64;
        cell->u.i = sec * 1000000 + nanos / 1000;
        return 0;
    }
    if (head < 0) {
        if (f->presence) {
            return 0;
        }
        switch (f->type) {
        case LOAMS_KIT_PB_STRING:
            cell->type = LOAMS_T_STRING;
            cell->u.s.ptr = "";
            return 0;
        case LOAMS_KIT_PB_BYTES:
            cell->type = LOAMS_T_BYTES;
            cell->u.s.ptr = "";
            return 0;
        case LOAMS_KIT_PB_ENUM:
            return scalar_cell(c, f, (uint32_t)c->r->s->enums[f->enm].values[0].number, cell, col);
        default: return scalar_cell(c, f, 0, cell, col);
        }
    }
    if (f->type == LOAMS_KIT_PB_STRING || f->type == LOAMS_KIT_PB_BYTES) {
        const pb_occ *oc = &s->occ[tail];
        if (f->type == LOAMS_KIT_PB_STRING) {
            int rc = check_utf8(c, f, oc->p, (size_t)oc->v);
            if (rc != 0) {
                return rc;
            }
        }
        cell->type = f->type == LOAMS_KIT_PB_STRING ? LOAMS_T_STRING : LOAMS_T_BYTES;
        cell->u.s.ptr = (const char *)oc->p;
        cell->u.s.len = (size_t)oc->v;
        return 0;
    }
    return scalar_cell(c, f, last_value(c, h, fi), cell, col);
}

int pb_reader_read(const pb_reader *r, const uint8_t *data, size_t n, size_t base,
                   loams_value *cells, pb_scratch *s, char *msg, size_t size)
{
    rd c = {r, s, data, base, msg, size};
    const loams_kit_pb_message *m = &r->s->messages[r->root];
    s->len = 0;
    s->nocc = 0;
    s->nheads = 0;
    if (grow(s->mem, (void **)&s->at, &s->cap_at, m->nfields + 1, sizeof *s->at) != 0) {
        return -ENOMEM;
    }
    memset(s->at, 0, (m->nfields + 1) * sizeof *s->at);
    size_t h;
    int rc = frame_push(&c, r->root, &h);
    if (rc == 0) {
        rc = scan(&c, r->root, data, n, h);
    }
    for (size_t k = 0; rc == 0 && k < m->nfields; k++) {
        rc = field_cell(&c, &m->fields[k], h, (int)k, &cells[k], k);
    }
    if (rc != 0) {
        return rc;
    }
    for (size_t k = 0; k < m->nfields; k++) {
        if (s->at[k] != 0) {
            cells[k].u.s.ptr = s->buf + s->at[k] - 1;
        }
    }
    return 0;
}
