/*
 * collection_merge.c - owns merging splits: streaming live documents from
 * readers into a split writer.
 */
#include "collection_merge.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

typedef struct out_field {
    const loams__coll_field *f;
    uint32_t wid; /* field id in the writer */
    long rid;     /* field id in the current reader, -1 when absent */
    const float *vec;
    const unsigned char *present;
} out_field;

int loams__coll_merge(const loams__coll_view *v, const size_t *which, size_t n,
                      loams__split_writer *w, loams__cancel_fn cancelled, void *cancel_ud,
                      loams_kit_err *e)
{
    const loams__coll_manifest *m = v->m;
    int rc = 0;
    out_field *of = loams_kit_mem_calloc(m->mem, m->n_fields ? m->n_fields : 1, sizeof *of);
    size_t n_of = 0;
    cJSON *doc = NULL;
    if (of == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory merging splits");
    }
    /* the writer's fields: every indexed and vector field of the mapping */
    for (size_t i = 0; i < m->n_fields; i++) {
        const loams__coll_field *f = &m->fields[i];
        int kind = loams__coll_type_indexed(f->type) ? LOAMS__FIELD_TEXT
                   : f->type == LOAMS__CT_VECTOR     ? LOAMS__FIELD_VECTOR
                                                     : 0;
        if (kind == 0) {
            continue;
        }
        rc = loams__split_writer_field(w, f->name, kind, kind == LOAMS__FIELD_VECTOR ? f->dim : 0,
                                       &of[n_of].wid, e);
        if (rc != 0) {
            goto out;
        }
        of[n_of++].f = f;
    }
    for (size_t wi = 0; wi < n; wi++) {
        size_t s = which[wi];
        loams__split_reader *r = v->readers[s];
        const loams__delset *del = v->dels[s];
        for (size_t i = 0; i < n_of; i++) {
            of[i].rid = loams__split_reader_field_find(r, of[i].f->name);
            of[i].vec = NULL;
            if (of[i].rid >= 0 && of[i].f->type == LOAMS__CT_VECTOR) {
                uint32_t dim;
                rc = loams__split_reader_vectors(r, (uint32_t)of[i].rid, &of[i].vec, &of[i].present,
                                                 &dim, e);
                if (rc != 0) {
                    goto out;
                }
                if (dim != of[i].f->dim) {
                    rc = loams_kit_err_set(e, LOAMS_ECORRUPT,
                                           "split %s has '%s' with dimension %u, the mapping %u",
                                           m->splits[s].key, of[i].f->name, dim, of[i].f->dim);
                    goto out;
                }
            }
        }
        uint32_t docs = loams__split_reader_docs(r);
        for (uint32_t d = 0; d < docs; d++) {
            if (loams__delset_has(del, d)) {
                continue;
            }
            if ((d & 1023) == 0 && cancelled != NULL && cancelled(cancel_ud)) {
                rc = loams_kit_err_set(e, LOAMS_ECANCELLED, "merge cancelled");
                goto out;
            }
            const char *pk, *json;
            size_t pk_len, json_len;
            uint32_t nd;
            if ((rc = loams__split_reader_pk(r, d, &pk, &pk_len, e)) != 0 ||
                (rc = loams__split_writer_begin_doc(w, pk, pk_len, &nd, e)) != 0 ||
                (rc = loams__split_reader_doc(r, d, &json, &json_len, e)) != 0) {
                goto out;
            }
            doc = cJSON_ParseWithLength(json, json_len);
            if (!cJSON_IsObject(doc)) {
                rc = loams_kit_err_set(e, LOAMS_ECORRUPT,
                                       "split %s: stored document %u is not a JSON object",
                                       m->splits[s].key, d);
                goto out;
            }
            for (size_t i = 0; i < n_of; i++) {
                const loams__coll_field *f = of[i].f;
                if (f->type == LOAMS__CT_VECTOR) {
                    if (of[i].vec != NULL && ((of[i].present[d / 8] >> (d % 8)) & 1)) {
                        rc = loams__split_writer_add_vector(
                            w, of[i].wid, of[i].vec + (size_t)d * f->dim, f->dim, e);
                    }
                } else {
                    const cJSON *val = cJSON_GetObjectItemCaseSensitive(doc, f->name);
                    if (cJSON_IsString(val)) {
                        rc = loams__split_writer_add_text(w, of[i].wid, val->valuestring,
                                                          strlen(val->valuestring), e);
                    } else if (cJSON_IsArray(val)) {
                        const cJSON *item;
                        cJSON_ArrayForEach(item, val)
                        {
                            if (rc == 0 && cJSON_IsString(item)) {
                                rc = loams__split_writer_add_text(w, of[i].wid, item->valuestring,
                                                                  strlen(item->valuestring), e);
                            }
                        }
                    }
                }
                if (rc != 0) {
                    goto out;
                }
            }
            cJSON_Delete(doc);
            doc = NULL;
            /* the reader's block buffer still holds json */
            if ((rc = loams__split_writer_end_doc(w, json, json_len, e)) != 0) {
                goto out;
            }
        }
    }
out:
    cJSON_Delete(doc);
    loams_kit_mem_free(m->mem, of);
    return rc;
}
