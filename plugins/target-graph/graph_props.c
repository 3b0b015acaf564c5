/*
 * graph_props.c - owns the merge of a patch of node properties into the
 * stored ones (graph_props.h): two JSON documents walked with the kit's
 * cursor (loams/kit/json_path.h), the patch's names interned in a key map.
 */
#include <errno.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_path.h"
#include "graph_keymap.h"
#include "graph_props.h"

typedef struct member {
    const char *key; /* raw, quotes included */
    size_t key_len;
    const char *val; /* raw JSON */
    size_t val_len;
    int used;
} member;

struct loams__gprops {
    const loams_kit_mem *mem;
    loams_kit_json_doc *base, *patch;
    loams__gkeymap *names; /* patch member name -> index into m */
    member *m;
    size_t cap;
    loams_kit_buf name; /* one decoded name */
};

int loams__gprops_new(const loams_kit_mem *mem, loams__gprops **out)
{
    loams__gprops *p = loams_kit_mem_calloc(mem, 1, sizeof *p);
    if (p == NULL) {
        return -ENOMEM;
    }
    p->mem = mem;
    loams_kit_buf_init(&p->name, mem);
    if (loams_kit_json_doc_new(mem, &p->base) != 0 || loams_kit_json_doc_new(mem, &p->patch) != 0 ||
        loams__gkeymap_new(mem, &p->names) != 0) {
        loams__gprops_free(p);
        return -ENOMEM;
    }
    *out = p;
    return 0;
}

void loams__gprops_free(loams__gprops *p)
{
    if (p == NULL) {
        return;
    }
    loams_kit_json_doc_free(p->base);
    loams_kit_json_doc_free(p->patch);
    loams__gkeymap_free(p->names);
    loams_kit_mem_free(p->mem, p->m);
    loams_kit_buf_free(&p->name);
    loams_kit_mem_free(p->mem, p);
}

int loams__gprops_names_has(const char *names, size_t len, const char *name, size_t nlen)
{
    size_t i = 0;
    while (i < len) {
        const char *z = memchr(names + i, 0, len - i);
        size_t l = z ? (size_t)(z - (names + i)) : len - i;
        if (l == nlen && memcmp(names + i, name, nlen) == 0) {
            return 1;
        }
        i += l + 1;
    }
    return 0;
}

int loams__gprops_names_add(loams_kit_buf *names, const char *name, size_t len)
{
    if (loams__gprops_names_has((const char *)names->data, names->len, name, len)) {
        return 0;
    }
    if (loams_kit_buf_append(names, name, len) != 0 || loams_kit_buf_append(names, "", 1) != 0) {
        return -ENOMEM;
    }
    return 0;
}

/* The decoded name of key k into p->name. */
static int decode_name(loams__gprops *p, loams_kit_json_doc *d, const loams_kit_json_value *k)
{
    size_t cap = (size_t)(k->end - k->start) + 1, len;
    loams_kit_json_error je;
    p->name.len = 0;
    if (loams_kit_buf_reserve(&p->name, cap) != 0) {
        return -ENOMEM;
    }
    int rc = loams_kit_json_value_string(d, k, (char *)p->name.data, cap, &len, &je);
    if (rc != 0) {
        return rc == -ENOMEM ? rc : LOAMS_EINPUT;
    }
    p->name.len = len;
    return 0;
}

static int open_object(loams_kit_json_doc *d, const char *text, size_t len, loams_kit_json_iter *it)
{
    loams_kit_json_value root;
    loams_kit_json_error je;
    loams_kit_json_doc_reset(d, text, len);
    int rc = loams_kit_json_doc_root(d, &root, &je);
    if (rc != 0) {
        return rc == -ENOMEM ? rc : LOAMS_EINPUT;
    }
    if (root.kind != LOAMS_KIT_JSON_OBJECT) {
        return LOAMS_EINPUT;
    }
    return loams_kit_json_iter_start(d, &root, 0, it) == 0 ? 0 : LOAMS_EINPUT;
}

static int put(loams_kit_buf *out, size_t *shown, const char *k, size_t kl, const char *v,
               size_t vl)
{
    if (loams_kit_buf_append(out, *shown ? "," : "{", 1) != 0 ||
        loams_kit_buf_append(out, k, kl) != 0 || loams_kit_buf_append(out, ":", 1) != 0 ||
        loams_kit_buf_append(out, v, vl) != 0) {
        return -ENOMEM;
    }
    (*shown)++;
    return 0;
}

/* Reads the patch's members into p->m / p->names. */
static int load_patch(loams__gprops *p, const char *patch, size_t plen, size_t *n, loams_kit_err *e)
{
    loams_kit_json_iter it;
    loams_kit_json_value k, v;
    loams_kit_json_error je;
    loams__gkeymap_clear(p->names);
    *n = 0;
    if (plen == 0) {
        return 0;
    }
    int rc = open_object(p->patch, patch, plen, &it);
    while (rc == 0 && (rc = loams_kit_json_iter_next(&it, &k, &v, &je)) == 1) {
        uint32_t idx;
        int found;
        if ((rc = decode_name(p, p->patch, &k)) != 0 ||
            (rc = loams__gkeymap_put(p->names, p->name.data, p->name.len, &idx, &found)) != 0) {
            break;
        }
        if (idx >= p->cap) {
            size_t nc = p->cap ? p->cap * 2 : 16;
            member *m = loams_kit_mem_realloc(p->mem, p->m, nc * sizeof *m);
            if (m == NULL) {
                rc = -ENOMEM;
                break;
            }
            p->m = m;
            p->cap = nc;
        }
        member *m = &p->m[idx];
        loams_kit_json_value_raw(p->patch, &k, &m->key, &m->key_len);
        loams_kit_json_value_raw(p->patch, &v, &m->val, &m->val_len);
        m->used = 0;
        *n = (size_t)idx + 1;
    }
    if (rc == 0 || rc == -ENOMEM) {
        return rc == -ENOMEM ? loams_kit_err_set(e, rc, "out of memory merging node properties")
                             : 0;
    }
    return loams_kit_err_set(e, LOAMS_ECORRUPT,
                             "the new properties of a node are not a JSON object");
}

int loams__gprops_merge(loams__gprops *p, const char *base, size_t blen, const char *patch,
                        size_t plen, const char *unset, size_t ulen, loams_kit_buf *out,
                        loams_kit_err *e)
{
    size_t n, shown = 0;
    int rc = load_patch(p, patch, plen, &n, e);
    if (rc != 0) {
        return rc;
    }
    if (blen > 0) {
        loams_kit_json_iter it;
        loams_kit_json_value k, v;
        loams_kit_json_error je;
        rc = open_object(p->base, base, blen, &it);
        while (rc == 0 && (rc = loams_kit_json_iter_next(&it, &k, &v, &je)) == 1) {
            const char *kr, *vr;
            size_t kl, vl;
            if ((rc = decode_name(p, p->base, &k)) != 0) {
                break;
            }
            int64_t idx = loams__gkeymap_find(p->names, p->name.data, p->name.len);
            loams_kit_json_value_raw(p->base, &k, &kr, &kl);
            loams_kit_json_value_raw(p->base, &v, &vr, &vl);
            if (idx >= 0) {
                p->m[idx].used = 1;
                vr = p->m[idx].val;
                vl = p->m[idx].val_len;
            } else if (loams__gprops_names_has(unset, ulen, (const char *)p->name.data,
                                               p->name.len)) {
                continue;
            }
            rc = put(out, &shown, kr, kl, vr, vl);
        }
        if (rc == -ENOMEM) {
            return loams_kit_err_set(e, rc, "out of memory merging node properties");
        }
        if (rc != 0) {
            return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                     "the stored properties of a node are not a JSON object");
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!p->m[i].used &&
            put(out, &shown, p->m[i].key, p->m[i].key_len, p->m[i].val, p->m[i].val_len) != 0) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory merging node properties");
        }
    }
    if (shown > 0 && loams_kit_buf_append(out, "}", 1) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory merging node properties");
    }
    return 0;
}
