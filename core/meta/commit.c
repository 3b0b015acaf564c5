/*
 * commit.c - owns the target pointer format and the commit transaction
 * (see commit.h).
 */
#include "meta/commit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "loams/kit/json_tree.h"

#include "base/failpoint.h"
#include "gc/gc.h"
#include "abi/keylist.h"
#include "abi/offsets.h"

int loams_pointer_init(loams_pointer *p)
{
    memset(p, 0, sizeof *p);
    return loams_offsets_create(&p->applied);
}

void loams_pointer_clear(loams_pointer *p)
{
    free(p->ref);
    loams_offsets_free(p->applied);
    memset(p, 0, sizeof *p);
}

int loams_pointer_set_ref(loams_pointer *p, const char *ref)
{
    char *copy = NULL;
    if (ref != NULL && (copy = strdup(ref)) == NULL) {
        return -ENOMEM;
    }
    free(p->ref);
    p->ref = copy;
    return 0;
}

void loams_pointer_key(const loams_objname *target, char *out, size_t size)
{
    snprintf(out, size, "target/%s/%s", target->ns, target->name);
}

static void set_err(loams_meta_err *err, const char *fmt, const char *a)
{
    if (err != NULL) {
        snprintf(err->msg, sizeof err->msg, fmt, a);
    }
}

/* A non-negative integer member, exact (loams/kit/json_tree.h); 0 when
 * missing or not one. */
static uint64_t json_u64(const cJSON *obj, const char *name)
{
    uint64_t v;
    return loams_kit_json_tree_u64(cJSON_GetObjectItemCaseSensitive(obj, name), &v) == 0 ? v : 0;
}

void loams_pointer_add_gaps(loams_pointer *p, const loams_gap *gaps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p->n_gaps == LOAMS_POINTER_GAPS) {
            memmove(&p->gaps[0], &p->gaps[1], (LOAMS_POINTER_GAPS - 1) * sizeof p->gaps[0]);
            p->n_gaps--;
        }
        p->gaps[p->n_gaps++] = gaps[i];
    }
}

/* The pointer's "gaps" (absent: none).  LOAMS_ECORRUPT naming the key. */
static int gaps_parse(const char *key, const cJSON *gaps, loams_pointer *p, loams_meta_err *err)
{
    p->n_gaps = 0;
    if (gaps == NULL) {
        return 0;
    }
    const cJSON *g;
    int ok = cJSON_IsArray(gaps);
    const cJSON *items = ok ? gaps : NULL;
    cJSON_ArrayForEach(g, items)
    {
        const cJSON *part = cJSON_GetObjectItemCaseSensitive(g, "partition");
        const cJSON *first = cJSON_GetObjectItemCaseSensitive(g, "first");
        const cJSON *last = cJSON_GetObjectItemCaseSensitive(g, "last");
        int64_t pv, fv, lv;
        if (loams_kit_json_tree_int(part, &pv) != 0 || loams_kit_json_tree_int(first, &fv) != 0 ||
            loams_kit_json_tree_int(last, &lv) != 0 || pv < 0 || pv > INT32_MAX || fv < 0 ||
            lv < fv) {
            ok = 0;
            break;
        }
        loams_gap gap = {(int32_t)pv, fv, lv, (int64_t)json_u64(g, "ms")};
        loams_pointer_add_gaps(p, &gap, 1);
    }
    if (!ok) {
        set_err(err, "target pointer %s has malformed gaps: the metastore is damaged", key);
        return LOAMS_ECORRUPT;
    }
    return 0;
}

static int pointer_parse(const char *key, const char *text, size_t len, loams_pointer *p,
                         loams_meta_err *err)
{
    cJSON *root = NULL;
    int rc = loams_kit_json_tree_parse(text, len, &root, NULL);
    if (rc == -ENOMEM) {
        goto out;
    }
    rc = LOAMS_ECORRUPT;
    if (root == NULL || !cJSON_IsObject(root)) {
        set_err(err, "target pointer %s is not a JSON object: the metastore is damaged", key);
        goto out;
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(root, "ref");
    const cJSON *link = cJSON_GetObjectItemCaseSensitive(root, "link");
    const cJSON *applied = cJSON_GetObjectItemCaseSensitive(root, "applied");
    if (!cJSON_IsString(kind) || !(cJSON_IsString(ref) || cJSON_IsNull(ref)) ||
        !cJSON_IsObject(applied)) {
        set_err(err, "target pointer %s lacks kind, ref or applied: the metastore is damaged", key);
        goto out;
    }
    snprintf(p->kind, sizeof p->kind, "%s", kind->valuestring);
    snprintf(p->link, sizeof p->link, "%s", cJSON_IsString(link) ? link->valuestring : "");
    if (loams_pointer_set_ref(p, cJSON_IsString(ref) ? ref->valuestring : NULL) != 0) {
        rc = -ENOMEM;
        goto out;
    }
    char *atext = cJSON_PrintUnformatted(applied);
    if (atext == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    rc = loams_offsets_parse_json(p->applied, atext, strlen(atext));
    cJSON_free(atext);
    if (rc != 0) {
        if (rc == LOAMS_EINPUT) {
            set_err(err, "target pointer %s has malformed applied offsets", key);
            rc = LOAMS_ECORRUPT;
        }
        goto out;
    }
    p->incarnation = json_u64(root, "incarnation");
    p->definition_version = json_u64(root, "definition_version");
    p->epoch = json_u64(root, "epoch");
    p->committed_ms = (int64_t)json_u64(root, "committed_ms");
    p->maintained_ms = (int64_t)json_u64(root, "maintained_ms");
    p->applied_records = json_u64(root, "applied_records");
    p->skipped_records = json_u64(root, "skipped_records");
    p->dead_lettered_records = json_u64(root, "dead_lettered_records");
    p->lost_records = json_u64(root, "lost_records");
    if ((rc = gaps_parse(key, cJSON_GetObjectItemCaseSensitive(root, "gaps"), p, err)) != 0) {
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

int loams_pointer_read(loams_meta *m, const loams_objname *target, loams_pointer *p,
                       loams_meta_err *err)
{
    char key[256];
    loams_pointer_key(target, key, sizeof key);
    loams_meta_kv kv;
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc == LOAMS_ENOTFOUND) {
        p->version = 0;
        p->lost_records = 0;
        p->n_gaps = 0;
        loams_offsets_clear(p->applied);
        return loams_pointer_set_ref(p, NULL);
    }
    if (rc != 0) {
        return rc;
    }
    rc = pointer_parse(key, kv.value, kv.value_len, p, err);
    if (rc == 0) {
        p->version = kv.version;
    }
    loams_meta_kv_free(&kv);
    return rc;
}

/* The pointer as JSON text (malloc'd, the caller frees). */
static char *pointer_format(const loams_pointer *p)
{
    size_t olen = loams_offsets_format_json(p->applied, NULL, 0);
    char *offsets = malloc(olen + 1);
    if (offsets == NULL) {
        return NULL;
    }
    loams_offsets_format_json(p->applied, offsets, olen + 1);
    cJSON *root = cJSON_CreateObject();
    cJSON *applied = NULL;
    loams_kit_json_tree_parse(offsets, olen, &applied, NULL);
    free(offsets);
    char *text = NULL;
    if (root == NULL || applied == NULL) {
        cJSON_Delete(applied);
        goto out;
    }
    cJSON_AddItemToObject(root, "applied", applied);
    if (cJSON_AddStringToObject(root, "kind", p->kind) == NULL ||
        (p->ref != NULL ? cJSON_AddStringToObject(root, "ref", p->ref)
                        : cJSON_AddNullToObject(root, "ref")) == NULL ||
        cJSON_AddStringToObject(root, "link", p->link) == NULL ||
        (p->incarnation > 0 &&
         (loams_kit_json_tree_put_u64(root, "incarnation", p->incarnation) != 0 ||
          loams_kit_json_tree_put_u64(root, "definition_version", p->definition_version) != 0)) ||
        loams_kit_json_tree_put_u64(root, "epoch", p->epoch) != 0 ||
        loams_kit_json_tree_put_int(root, "committed_ms", p->committed_ms) != 0 ||
        loams_kit_json_tree_put_int(root, "maintained_ms", p->maintained_ms) != 0 ||
        loams_kit_json_tree_put_u64(root, "applied_records", p->applied_records) != 0 ||
        loams_kit_json_tree_put_u64(root, "skipped_records", p->skipped_records) != 0 ||
        loams_kit_json_tree_put_u64(root, "dead_lettered_records", p->dead_lettered_records) != 0 ||
        (p->lost_records > 0 &&
         loams_kit_json_tree_put_u64(root, "lost_records", p->lost_records) != 0)) {
        goto out;
    }
    cJSON *gaps = p->n_gaps > 0 ? cJSON_AddArrayToObject(root, "gaps") : NULL;
    if (p->n_gaps > 0 && gaps == NULL) {
        goto out;
    }
    for (size_t i = 0; i < p->n_gaps; i++) {
        const loams_gap *g = &p->gaps[i];
        cJSON *o = cJSON_CreateObject();
        if (o == NULL) {
            goto out;
        }
        if (!cJSON_AddItemToArray(gaps, o)) {
            cJSON_Delete(o);
            goto out;
        }
        if (loams_kit_json_tree_put_int(o, "partition", g->partition) != 0 ||
            loams_kit_json_tree_put_int(o, "first", g->first_offset) != 0 ||
            loams_kit_json_tree_put_int(o, "last", g->last_offset) != 0 ||
            loams_kit_json_tree_put_int(o, "count", g->last_offset - g->first_offset + 1) != 0 ||
            loams_kit_json_tree_put_int(o, "ms", g->found_ms) != 0) {
            goto out;
        }
    }
    text = cJSON_PrintUnformatted(root);
out:
    cJSON_Delete(root);
    return text;
}

int loams_commit(loams_meta *m, const loams_lease *lease, const loams_objname *target,
                 uint64_t expected_version, const loams_meta_compare *definition,
                 loams_pointer *next, loams_meta_write *extra, size_t nextra, loams_meta_err *err)
{
    char key[256];
    loams_pointer_key(target, key, sizeof key);
    char *value = pointer_format(next);
    if (value == NULL) {
        return -ENOMEM;
    }
    loams_fence_storage fence;
    loams_meta_compare cmps[3];
    memset(cmps, 0, sizeof cmps);
    loams_lease_fence_compare(lease, &fence, &cmps[0]);
    cmps[1].kind = LOAMS_CMP_VERSION;
    cmps[1].key = key;
    cmps[1].key_len = strlen(key);
    cmps[1].version = expected_version;
    size_t ncmps = 2;
    if (definition != NULL) {
        cmps[ncmps++] = *definition;
    }

    size_t nw = 1 + nextra;
    loams_meta_write *writes = calloc(nw, sizeof *writes);
    if (writes == NULL) {
        free(value);
        return -ENOMEM;
    }
    writes[0].kind = LOAMS_OP_PUT;
    writes[0].key = key;
    writes[0].key_len = strlen(key);
    writes[0].value = value;
    writes[0].value_len = strlen(value);
    for (size_t i = 0; i < nextra; i++) {
        writes[1 + i] = extra[i];
    }
    size_t failed = 0;
    int rc = loams_meta_txn(m, cmps, ncmps, writes, nw, &failed, err);
    if (rc == 0 && loams_failpoint("commit.answer_lost") != 0) {
        /* Tests: the transaction applied but its answer was lost. */
        rc = LOAMS_META_EUNKNOWN;
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg,
                     "commit to %s.%s: the answer was lost (failpoint commit.answer_lost): the "
                     "outcome is unknown",
                     target->ns, target->name);
        }
    } else if (rc == 0) {
        next->version = writes[0].new_version;
        for (size_t i = 0; i < nextra; i++) {
            extra[i].new_version = writes[1 + i].new_version;
        }
    } else if (rc == LOAMS_ECONFLICT && failed == 0) {
        rc = LOAMS_EFENCED;
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg,
                     "commit to %s.%s rejected: lease %.300s epoch %" PRIu64
                     " is stale (another node took the task)",
                     target->ns, target->name, lease->key, lease->epoch);
        }
    } else if (rc == LOAMS_ECONFLICT && failed == 2 && err != NULL) {
        snprintf(err->msg, sizeof err->msg,
                 "commit to %s.%s rejected: the link's definition changed since the run read it "
                 "(%.*s is no longer in force)",
                 target->ns, target->name, (int)definition->value_len,
                 (const char *)definition->value);
    } else if (rc == LOAMS_ECONFLICT && err != NULL) {
        snprintf(err->msg, sizeof err->msg,
                 "commit to %s.%s rejected: its pointer moved (expected version %" PRIu64 ")",
                 target->ns, target->name, expected_version);
    }
    free(writes);
    free(value);
    return rc;
}

int loams_orphans_record(loams_meta *m, const loams_keylist *keys, int64_t now_ms,
                         loams_meta_err *err)
{
    size_t n = loams_keylist_count(keys);
    if (n == 0) {
        return 0;
    }
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = loams_gc_writes_record(&ws, LOAMS_GC_ORPHAN, now_ms, loams_keylist_at(keys, i));
    }
    if (rc == 0) {
        rc = loams_meta_txn(m, NULL, 0, ws.w, ws.n, NULL, err);
    }
    loams_gc_writes_clear(&ws);
    return rc;
}
