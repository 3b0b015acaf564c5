/*
 * s3_xml.c - owns reading the S3 API's XML answers (s3_xml.h): one walker
 * over the elements that reports each leaf element's path and raw text,
 * the entity decoder, and one reader per answer kind on top of them.
 */
#include "s3_xml.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define XML_DEPTH_MAX 32

typedef struct xml_name {
    const char *p;
    size_t n;
} xml_name;

/* Called at the end of each element without child elements: its path
 * (names[0..depth)) and its undecoded text.  Non-zero stops the walk. */
typedef int (*xml_leaf_fn)(void *ud, const xml_name *names, size_t depth, const char *text,
                           size_t tlen);

static int name_is(const xml_name *n, const char *s)
{
    /* compared without a namespace prefix ("s3:Key" is "Key") */
    const char *p = n->p;
    size_t len = n->n;
    const char *colon = memchr(p, ':', len);
    if (colon != NULL) {
        len -= (size_t)(colon + 1 - p);
        p = colon + 1;
    }
    return strlen(s) == len && memcmp(p, s, len) == 0;
}

static const char *find(const char *p, const char *end, const char *what)
{
    size_t wl = strlen(what);
    for (; p + wl <= end; p++) {
        if (memcmp(p, what, wl) == 0) {
            return p;
        }
    }
    return NULL;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int walk(const char *body, size_t len, xml_leaf_fn fn, void *ud, loams_kit_err *e)
{
    xml_name names[XML_DEPTH_MAX];
    int had_child[XML_DEPTH_MAX];
    size_t depth = 0, elements = 0;
    const char *p = body, *end = body + len, *content = NULL;
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
        p += 3; /* a byte order mark */
    }
    while (p < end) {
        if (*p != '<') {
            if (depth == 0 && !is_space(*p)) {
                return loams_kit_err_set(e, -EIO, "text outside the root element at byte %zu",
                                         (size_t)(p - body));
            }
            p++;
            continue;
        }
        const char *q;
        if (end - p >= 2 && p[1] == '?') {
            if ((q = find(p + 2, end, "?>")) == NULL) {
                return loams_kit_err_set(e, -EIO, "unterminated processing instruction");
            }
            p = q + 2;
            continue;
        }
        if (end - p >= 4 && memcmp(p, "<!--", 4) == 0) {
            if ((q = find(p + 4, end, "-->")) == NULL) {
                return loams_kit_err_set(e, -EIO, "unterminated comment");
            }
            p = q + 3;
            continue;
        }
        if (end - p >= 2 && p[1] == '!') {
            if (depth > 0 || end - p < 9 || memcmp(p, "<!DOCTYPE", 9) != 0) {
                return loams_kit_err_set(e, -EIO, "unsupported markup '<!' at byte %zu",
                                         (size_t)(p - body));
            }
            if ((q = memchr(p, '>', (size_t)(end - p))) == NULL ||
                memchr(p, '[', (size_t)(q - p))) {
                return loams_kit_err_set(e, -EIO, "unsupported DOCTYPE");
            }
            p = q + 1;
            continue;
        }
        int closing = end - p >= 2 && p[1] == '/';
        const char *n0 = p + (closing ? 2 : 1), *n1 = n0;
        while (n1 < end && !is_space(*n1) && *n1 != '>' && *n1 != '/' && *n1 != '<') {
            n1++;
        }
        if (n1 == n0) {
            return loams_kit_err_set(e, -EIO, "an element without a name at byte %zu",
                                     (size_t)(p - body));
        }
        /* the end of the tag, skipping quoted attribute values */
        char quote = 0;
        for (q = n1; q < end; q++) {
            if (quote != 0) {
                quote = *q == quote ? 0 : quote;
            } else if (*q == '"' || *q == '\'') {
                quote = *q;
            } else if (*q == '>' || *q == '<') {
                break;
            }
        }
        if (q >= end || *q != '>') {
            return loams_kit_err_set(e, -EIO, "unterminated tag at byte %zu", (size_t)(p - body));
        }
        xml_name nm = {n0, (size_t)(n1 - n0)};
        if (closing) {
            if (depth == 0 || names[depth - 1].n != nm.n ||
                memcmp(names[depth - 1].p, nm.p, nm.n) != 0) {
                return loams_kit_err_set(e, -EIO, "mismatched closing tag '</%.*s>' at byte %zu",
                                         (int)(nm.n > 64 ? 64 : nm.n), nm.p, (size_t)(p - body));
            }
            if (!had_child[depth - 1]) {
                int rc = fn(ud, names, depth, content, (size_t)(p - content));
                if (rc != 0) {
                    return rc;
                }
            }
            depth--;
        } else {
            if (depth == 0 && elements > 0) {
                return loams_kit_err_set(e, -EIO, "a second root element at byte %zu",
                                         (size_t)(p - body));
            }
            if (depth == XML_DEPTH_MAX) {
                return loams_kit_err_set(e, -EIO, "elements nested deeper than %d", XML_DEPTH_MAX);
            }
            if (depth > 0) {
                had_child[depth - 1] = 1;
            }
            names[depth] = nm;
            had_child[depth] = 0;
            depth++;
            elements++;
            if (q[-1] == '/' && q - 1 >= n1) {
                int rc = fn(ud, names, depth, q, 0);
                if (rc != 0) {
                    return rc;
                }
                depth--;
            }
            content = q + 1;
        }
        p = q + 1;
    }
    if (elements == 0) {
        return loams_kit_err_set(e, -EIO, "no XML element in the answer");
    }
    if (depth != 0) {
        return loams_kit_err_set(e, -EIO, "the XML answer ends inside element '%.*s'",
                                 (int)(names[depth - 1].n > 64 ? 64 : names[depth - 1].n),
                                 names[depth - 1].p);
    }
    return 0;
}

/* Appends the UTF-8 form of code point c to out[*o..size). */
static int put_utf8(char *out, size_t size, size_t *o, uint32_t c)
{
    unsigned char b[4];
    size_t n;
    if (c < 0x80) {
        b[0] = (unsigned char)c;
        n = 1;
    } else if (c < 0x800) {
        b[0] = (unsigned char)(0xc0 | (c >> 6));
        b[1] = (unsigned char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        b[0] = (unsigned char)(0xe0 | (c >> 12));
        b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        b[2] = (unsigned char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xf0 | (c >> 18));
        b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
        b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        b[3] = (unsigned char)(0x80 | (c & 0x3f));
        n = 4;
    }
    if (*o + n >= size) {
        return -1;
    }
    memcpy(out + *o, b, n);
    *o += n;
    return 0;
}

/* Decodes text[0..len) into out[0..size) (NUL-terminated; size > len is
 * always enough).  -EIO for a bad reference, -ENOSPC when it does not fit. */
static int decode(const char *text, size_t len, char *out, size_t size, loams_kit_err *e)
{
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (text[i] == '\0') {
            return loams_kit_err_set(e, -EIO, "a NUL byte in XML text");
        }
        if (text[i] != '&') {
            if (o + 1 >= size) {
                return -ENOSPC;
            }
            out[o++] = text[i++];
            continue;
        }
        const char *semi = memchr(text + i, ';', len - i < 12 ? len - i : 12);
        if (semi == NULL) {
            return loams_kit_err_set(e, -EIO, "an unterminated '&' reference in XML text");
        }
        const char *r = text + i + 1;
        size_t rl = (size_t)(semi - r);
        uint32_t c = 0;
        if (rl == 3 && memcmp(r, "amp", 3) == 0) {
            c = '&';
        } else if (rl == 2 && memcmp(r, "lt", 2) == 0) {
            c = '<';
        } else if (rl == 2 && memcmp(r, "gt", 2) == 0) {
            c = '>';
        } else if (rl == 4 && memcmp(r, "quot", 4) == 0) {
            c = '"';
        } else if (rl == 4 && memcmp(r, "apos", 4) == 0) {
            c = '\'';
        } else if (rl >= 2 && r[0] == '#') {
            int hex = r[1] == 'x';
            size_t k = hex ? 2 : 1;
            if (k >= rl) {
                return loams_kit_err_set(e, -EIO, "an empty character reference in XML text");
            }
            for (; k < rl; k++) {
                int d;
                char ch = r[k];
                if (ch >= '0' && ch <= '9') {
                    d = ch - '0';
                } else if (hex && ch >= 'a' && ch <= 'f') {
                    d = ch - 'a' + 10;
                } else if (hex && ch >= 'A' && ch <= 'F') {
                    d = ch - 'A' + 10;
                } else {
                    return loams_kit_err_set(e, -EIO, "a bad character reference in XML text");
                }
                c = c * (hex ? 16u : 10u) + (uint32_t)d;
                if (c > 0x10ffff) {
                    return loams_kit_err_set(e, -EIO, "a character reference past U+10FFFF");
                }
            }
            if (c == 0 || (c >= 0xd800 && c <= 0xdfff)) {
                return loams_kit_err_set(e, -EIO, "a character reference to U+%04X", (unsigned)c);
            }
        } else {
            return loams_kit_err_set(e, -EIO, "an unknown entity '&%.*s;' in XML text", (int)rl, r);
        }
        if (put_utf8(out, size, &o, c) != 0) {
            return -ENOSPC;
        }
        i = (size_t)(semi - text) + 1;
    }
    out[o] = '\0';
    return 0;
}

/* A decoded copy of text[0..len) through mem. */
static int decode_dup(const loams_kit_mem *mem, const char *text, size_t len, char **out,
                      loams_kit_err *e)
{
    char *s = loams_kit_mem_alloc(mem, len + 1);
    if (s == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory reading an XML answer");
    }
    int rc = decode(text, len, s, len + 1, e);
    if (rc != 0) {
        loams_kit_mem_free(mem, s);
        return rc;
    }
    *out = s;
    return 0;
}

static int strings_add(const loams_kit_mem *mem, loams__s3_strings *s, char *item, loams_kit_err *e)
{
    if (s->n == s->cap) {
        size_t cap = s->cap != 0 ? s->cap * 2 : 64;
        char **items = loams_kit_mem_realloc(mem, s->items, cap * sizeof *items);
        if (items == NULL) {
            loams_kit_mem_free(mem, item);
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading an XML answer");
        }
        s->items = items;
        s->cap = cap;
    }
    s->items[s->n++] = item;
    return 0;
}

void loams__s3_strings_free(const loams_kit_mem *mem, loams__s3_strings *s)
{
    for (size_t i = 0; i < s->n; i++) {
        loams_kit_mem_free(mem, s->items[i]);
    }
    loams_kit_mem_free(mem, s->items);
    s->items = NULL;
    s->n = s->cap = 0;
}

/* ---- errors ---- */

typedef struct error_walk {
    char *code, *msg;
    size_t csize, msize;
    int is_error;
} error_walk;

static void copy_clean(char *out, size_t size, const char *text, size_t len)
{
    loams_kit_err e;
    char tmp[1024];
    size_t n = len < sizeof tmp - 1 ? len : sizeof tmp - 1;
    if (decode(text, n, tmp, sizeof tmp, &e) != 0) {
        snprintf(tmp, sizeof tmp, "(undecodable)");
    }
    snprintf(out, size, "%s", tmp);
    for (char *c = out; *c != '\0'; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f) {
            *c = '?';
        }
    }
}

static int error_leaf(void *ud, const xml_name *names, size_t depth, const char *text, size_t tlen)
{
    error_walk *w = ud;
    if (!name_is(&names[0], "Error")) {
        return 0;
    }
    w->is_error = 1;
    if (depth == 2 && name_is(&names[1], "Code")) {
        copy_clean(w->code, w->csize, text, tlen);
    } else if (depth == 2 && name_is(&names[1], "Message")) {
        copy_clean(w->msg, w->msize, text, tlen);
    }
    return 0;
}

int loams__s3_xml_error(const char *body, size_t len, char *code, size_t csize, char *msg,
                        size_t msize)
{
    error_walk w = {code, msg, csize, msize, 0};
    loams_kit_err e;
    if (csize > 0) {
        code[0] = '\0';
    }
    if (msize > 0) {
        msg[0] = '\0';
    }
    if (csize == 0 || msize == 0 || walk(body, len, error_leaf, &w, &e) != 0 || !w.is_error) {
        if (csize > 0) {
            code[0] = '\0';
        }
        if (msize > 0) {
            msg[0] = '\0';
        }
        return -EIO;
    }
    return 0;
}

/* ---- listings ---- */

typedef struct list_walk {
    const loams_kit_mem *mem;
    loams__s3_strings *keys;
    int truncated;
    char *next;
    int root_ok;
    loams_kit_err *e;
} list_walk;

static int list_leaf(void *ud, const xml_name *names, size_t depth, const char *text, size_t tlen)
{
    list_walk *w = ud;
    if (!name_is(&names[0], "ListBucketResult")) {
        return loams_kit_err_set(w->e, -EIO, "the answer is not a ListBucketResult");
    }
    w->root_ok = 1;
    if (depth == 3 && name_is(&names[1], "Contents") && name_is(&names[2], "Key")) {
        char *key;
        int rc = decode_dup(w->mem, text, tlen, &key, w->e);
        return rc != 0 ? rc : strings_add(w->mem, w->keys, key, w->e);
    }
    if (depth == 2 && name_is(&names[1], "IsTruncated")) {
        w->truncated = tlen == 4 && memcmp(text, "true", 4) == 0;
    } else if (depth == 2 && name_is(&names[1], "NextContinuationToken") && w->next == NULL) {
        return decode_dup(w->mem, text, tlen, &w->next, w->e);
    }
    return 0;
}

int loams__s3_xml_list(const loams_kit_mem *mem, const char *body, size_t len,
                       loams__s3_strings *keys, int *truncated, char **next, loams_kit_err *e)
{
    list_walk w = {mem, keys, 0, NULL, 0, e};
    size_t before = keys->n;
    int rc = walk(body, len, list_leaf, &w, e);
    if (rc == 0 && !w.root_ok) {
        rc = loams_kit_err_set(e, -EIO, "the answer is not a ListBucketResult");
    }
    if (rc == 0 && w.truncated && (w.next == NULL || w.next[0] == '\0')) {
        rc = loams_kit_err_set(e, -EIO, "a truncated listing without NextContinuationToken");
    }
    if (rc != 0) {
        while (keys->n > before) {
            loams_kit_mem_free(mem, keys->items[--keys->n]);
        }
        loams_kit_mem_free(mem, w.next);
        return rc;
    }
    *truncated = w.truncated;
    *next = w.next;
    return 0;
}

/* ---- one element ---- */

typedef struct first_walk {
    const loams_kit_mem *mem;
    const char *name;
    char *out;
    loams_kit_err *e;
} first_walk;

static int first_leaf(void *ud, const xml_name *names, size_t depth, const char *text, size_t tlen)
{
    first_walk *w = ud;
    if (w->out == NULL && name_is(&names[depth - 1], w->name)) {
        return decode_dup(w->mem, text, tlen, &w->out, w->e);
    }
    return 0;
}

int loams__s3_xml_first(const loams_kit_mem *mem, const char *body, size_t len, const char *name,
                        char **out, loams_kit_err *e)
{
    first_walk w = {mem, name, NULL, e};
    int rc = walk(body, len, first_leaf, &w, e);
    if (rc == 0 && w.out == NULL) {
        rc = loams_kit_err_set(e, -EIO, "the answer has no <%s>", name);
    }
    if (rc != 0) {
        loams_kit_mem_free(mem, w.out);
        return rc;
    }
    *out = w.out;
    return 0;
}

/* ---- multipart uploads ---- */

typedef struct uploads_walk {
    const loams_kit_mem *mem;
    loams__s3_strings *keys, *ids;
    int truncated;
    loams_kit_err *e;
} uploads_walk;

static int uploads_leaf(void *ud, const xml_name *names, size_t depth, const char *text,
                        size_t tlen)
{
    uploads_walk *w = ud;
    if (!name_is(&names[0], "ListMultipartUploadsResult")) {
        return loams_kit_err_set(w->e, -EIO, "the answer is not a ListMultipartUploadsResult");
    }
    if (depth == 2 && name_is(&names[1], "IsTruncated")) {
        w->truncated = tlen == 4 && memcmp(text, "true", 4) == 0;
        return 0;
    }
    if (depth != 3 || !name_is(&names[1], "Upload")) {
        return 0;
    }
    loams__s3_strings *to = name_is(&names[2], "Key")        ? w->keys
                            : name_is(&names[2], "UploadId") ? w->ids
                                                             : NULL;
    if (to == NULL) {
        return 0;
    }
    char *s;
    int rc = decode_dup(w->mem, text, tlen, &s, w->e);
    return rc != 0 ? rc : strings_add(w->mem, to, s, w->e);
}

int loams__s3_xml_uploads(const loams_kit_mem *mem, const char *body, size_t len,
                          loams__s3_strings *keys, loams__s3_strings *ids, int *truncated,
                          loams_kit_err *e)
{
    uploads_walk w = {mem, keys, ids, 0, e};
    size_t kb = keys->n, ib = ids->n;
    int rc = walk(body, len, uploads_leaf, &w, e);
    if (rc == 0 && keys->n - kb != ids->n - ib) {
        rc = loams_kit_err_set(e, -EIO, "an Upload without both Key and UploadId");
    }
    if (rc != 0) {
        while (keys->n > kb) {
            loams_kit_mem_free(mem, keys->items[--keys->n]);
        }
        while (ids->n > ib) {
            loams_kit_mem_free(mem, ids->items[--ids->n]);
        }
        return rc;
    }
    *truncated = w.truncated;
    return 0;
}
