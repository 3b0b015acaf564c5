/*
 * deletion_set.c - owns the per-split deletion bitmaps and their objects.
 */
#include "deletion_set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/crc32c.h"

#define MAGIC "LOAMSDEL"
#define HEADER 20u

static size_t bitmap_bytes(uint32_t docs)
{
    return ((size_t)docs + 7) / 8;
}

int loams__delset_new(const loams_kit_mem *mem, uint32_t docs, loams__delset **out,
                      loams_kit_err *e)
{
    loams__delset *d = loams_kit_mem_calloc(mem, 1, sizeof *d);
    unsigned char *bits = loams_kit_mem_calloc(mem, bitmap_bytes(docs) + 1, 1);
    if (d == NULL || bits == NULL) {
        loams_kit_mem_free(mem, d);
        loams_kit_mem_free(mem, bits);
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a deletion set");
    }
    d->mem = mem;
    d->docs = docs;
    d->bits = bits;
    *out = d;
    return 0;
}

int loams__delset_clone(const loams__delset *src, loams__delset **out, loams_kit_err *e)
{
    int rc = loams__delset_new(src->mem, src->docs, out, e);
    if (rc == 0) {
        memcpy((*out)->bits, src->bits, bitmap_bytes(src->docs));
        (*out)->deleted = src->deleted;
    }
    return rc;
}

void loams__delset_free(loams__delset *d)
{
    if (d != NULL) {
        loams_kit_mem_free(d->mem, d->bits);
        loams_kit_mem_free(d->mem, d);
    }
}

int loams__delset_add(loams__delset *d, uint32_t doc)
{
    if (doc >= d->docs) {
        return -EINVAL;
    }
    unsigned char m = (unsigned char)(1u << (doc % 8));
    if (d->bits[doc / 8] & m) {
        return 0;
    }
    d->bits[doc / 8] |= m;
    d->deleted++;
    return 1;
}

int loams__delset_encode(const loams__delset *d, loams_kit_buf *out)
{
    size_t start = out->len;
    size_t nb = bitmap_bytes(d->docs);
    int rc = loams_kit_buf_reserve(out, HEADER + nb + 4);
    if (rc != 0) {
        return rc;
    }
    loams_kit_buf_append(out, MAGIC, 8);
    loams_kit_buf_append_le32(out, 1);
    loams_kit_buf_append_le32(out, d->docs);
    loams_kit_buf_append_le32(out, d->deleted);
    loams_kit_buf_append(out, d->bits, nb);
    return loams_kit_buf_append_le32(out, loams_kit_crc32c(0, out->data + start, out->len - start));
}

int loams__delset_decode(const loams_kit_mem *mem, const void *data, size_t len,
                         uint32_t expect_docs, const char *name, loams__delset **out,
                         loams_kit_err *e)
{
    const unsigned char *p = data;
    *out = NULL;
    if (len < HEADER + 4 || memcmp(p, MAGIC, 8) != 0) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "deletion set %s is corrupt: not a deletion set object", name);
    }
    uint32_t crc = loams_kit_le32_get(p + len - 4);
    if (loams_kit_crc32c(0, p, len - 4) != crc) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "deletion set %s is corrupt: it fails its checksum", name);
    }
    uint32_t version = loams_kit_le32_get(p + 8);
    uint32_t docs = loams_kit_le32_get(p + 12);
    uint32_t deleted = loams_kit_le32_get(p + 16);
    if (version != 1 || docs != expect_docs || len != HEADER + bitmap_bytes(docs) + 4) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "deletion set %s is corrupt: version %u, %u docs (split has %u), "
                                 "%zu bytes",
                                 name, version, docs, expect_docs, len);
    }
    loams__delset *d;
    int rc = loams__delset_new(mem, docs, &d, e);
    if (rc != 0) {
        return rc;
    }
    memcpy(d->bits, p + HEADER, bitmap_bytes(docs));
    uint32_t count = 0;
    for (size_t i = 0; i < bitmap_bytes(docs); i++) {
        count += (uint32_t)__builtin_popcount(d->bits[i]);
    }
    if (count != deleted || (docs % 8 != 0 && (d->bits[docs / 8] >> (docs % 8)) != 0)) {
        loams__delset_free(d);
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "deletion set %s is corrupt: its count does not match its bitmap",
                                 name);
    }
    d->deleted = deleted;
    *out = d;
    return 0;
}
