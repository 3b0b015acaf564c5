/*
 * gc.c - owns the GC records and the GC pass (gc.h).
 */
#include "gc/gc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "loams/kit/json_tree.h"

#include "base/log.h"
#include "base/status.h"

#define COMP "gc"
#define PAGE 256
#define PREFIX_MAX 24

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; c++) {
        h = (h ^ *c) * 1099511628211ULL;
    }
    return h;
}

void loams_gc_key(char *out, const char *kind, int64_t ms, const char *task, uint64_t epoch,
                  const char *object)
{
    uint64_t h = 1469598103934665603ULL;
    if (task != NULL) {
        char e[24];
        snprintf(e, sizeof e, "/%" PRIu64 "/", epoch);
        h = fnv1a(fnv1a(h, task), e);
    }
    h = fnv1a(h, object);
    snprintf(out, LOAMS_GC_KEY_MAX, "gc/%s/%013" PRId64 "/%016" PRIx64, kind, ms < 0 ? 0 : ms, h);
}

/* ---- write lists ---- */

void loams_gc_writes_init(loams_gc_writes *ws)
{
    memset(ws, 0, sizeof *ws);
}

void loams_gc_writes_clear(loams_gc_writes *ws)
{
    for (size_t i = 0; i < ws->nowned; i++) {
        free(ws->owned[i]);
    }
    free(ws->owned);
    free(ws->w);
    memset(ws, 0, sizeof *ws);
}

static char *own(loams_gc_writes *ws, const char *s)
{
    if (ws->nowned == ws->capowned) {
        size_t cap = ws->capowned ? ws->capowned * 2 : 16;
        char **p = realloc(ws->owned, cap * sizeof *p);
        if (p == NULL) {
            return NULL;
        }
        ws->owned = p;
        ws->capowned = cap;
    }
    char *copy = strdup(s);
    if (copy != NULL) {
        ws->owned[ws->nowned++] = copy;
    }
    return copy;
}

static int add(loams_gc_writes *ws, loams_meta_op_kind kind, const char *key, const char *value)
{
    if (ws->n == ws->cap) {
        size_t cap = ws->cap ? ws->cap * 2 : 8;
        loams_meta_write *p = realloc(ws->w, cap * sizeof *p);
        if (p == NULL) {
            return -ENOMEM;
        }
        ws->w = p;
        ws->cap = cap;
    }
    char *k = own(ws, key);
    char *v = value != NULL ? own(ws, value) : NULL;
    if (k == NULL || (value != NULL && v == NULL)) {
        return -ENOMEM;
    }
    ws->w[ws->n++] = (loams_meta_write){.kind = kind,
                                        .key = k,
                                        .key_len = strlen(k),
                                        .value = v,
                                        .value_len = v != NULL ? strlen(v) : 0};
    return 0;
}

int loams_gc_writes_put(loams_gc_writes *ws, const char *key, const char *value)
{
    return add(ws, LOAMS_OP_PUT, key, value != NULL ? value : "");
}

int loams_gc_writes_delete(loams_gc_writes *ws, const char *key)
{
    return add(ws, LOAMS_OP_DELETE, key, NULL);
}

int loams_gc_writes_record(loams_gc_writes *ws, const char *kind, int64_t ms, const char *object)
{
    char key[LOAMS_GC_KEY_MAX];
    loams_gc_key(key, kind, ms, NULL, 0, object);
    return loams_gc_writes_put(ws, key, object);
}

/* ---- the pass ---- */

typedef struct pass {
    const loams_gc_options *o;
    loams_gc_stats *st;
    loams_meta_err *err;
    int keep_rewritten; /* replaced records: keep an object written after the record's time */
} pass;

static int txn(pass *p, const loams_meta_compare *c, size_t nc, loams_meta_write *w, size_t nw,
               size_t *failed)
{
    if (p->o->txn != NULL) {
        return p->o->txn(p->o->txn_userdata, c, nc, w, nw, failed, p->err);
    }
    return loams_meta_txn(p->o->meta, c, nc, w, nw, failed, p->err);
}

static int cancelled(const pass *p)
{
    return p->o->cancelled != NULL && p->o->cancelled(p->o->cancel_userdata);
}

int64_t loams_gc_key_ms(const char *key)
{
    const char *s = strncmp(key, "gc/", 3) == 0 ? strchr(key + 3, '/') : NULL;
    if (s == NULL) {
        return -1;
    }
    int64_t ms = 0;
    int digits = 0;
    for (s++; *s >= '0' && *s <= '9' && digits < 13; s++, digits++) {
        ms = ms * 10 + (*s - '0');
    }
    return digits == 13 && *s == '/' ? ms : -1;
}

/* One page of records under a kind's prefix: 0, or a status that ends the
 * pass; *stop = 1 ends it early (the rest need not be read). */
typedef int (*page_fn)(pass *p, const loams_meta_range_result *r, int *stop);

/* Calls fn on every page of the records of `kind`, oldest first. */
static int each_page(pass *p, const char *kind, page_fn fn)
{
    char prefix[PREFIX_MAX];
    snprintf(prefix, sizeof prefix, "gc/%s/", kind);
    char after[LOAMS_META_KEY_MAX + 1] = "";
    int stop = 0;
    while (!stop) {
        loams_meta_range_result r;
        int rc =
            loams_meta_range_prefix(p->o->meta, prefix, after[0] ? after : NULL, PAGE, &r, p->err);
        if (rc != 0) {
            return rc;
        }
        rc = fn(p, &r, &stop);
        stop = stop || !r.more || r.count == 0;
        if (r.count > 0) {
            snprintf(after, sizeof after, "%s", r.kvs[r.count - 1].key);
        }
        loams_meta_range_free(&r);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Turns intent kv into an orphan when its run is over. */
static int intent_check(pass *p, const loams_meta_kv *kv)
{
    p->st->intents++;
    cJSON *doc = NULL;
    if (loams_kit_json_tree_parse(kv->value, kv->value_len, &doc, NULL) == -ENOMEM) {
        return -ENOMEM;
    }
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(doc, "task");
    const cJSON *epoch = cJSON_GetObjectItemCaseSensitive(doc, "epoch");
    const cJSON *object = cJSON_GetObjectItemCaseSensitive(doc, "key");
    int64_t ms = loams_gc_key_ms(kv->key);
    uint64_t ep = 0;
    if (!cJSON_IsString(task) || loams_kit_json_tree_u64(epoch, &ep) != 0 || ep < 1 ||
        !cJSON_IsString(object) || object->valuestring[0] == '\0' || ms < 0) {
        LOAMS_WARN(COMP,
                   "%s is not a write intent ('%.120s'); it is kept: delete it by hand "
                   "once its object is known to be unused",
                   kv->key, (const char *)kv->value);
        p->st->bad++;
        cJSON_Delete(doc);
        return 0;
    }
    int over = 0;
    loams_lease_over_storage ls;
    loams_meta_compare cmps[3];
    int rc = loams_lease_run_over(p->o->meta, task->valuestring, ep, &over, &ls, cmps, p->err);
    if (rc == LOAMS_ECORRUPT) {
        LOAMS_WARN(COMP, "%s is kept: %s", kv->key, p->err->msg);
        p->st->bad++;
        rc = 0;
    }
    if (rc != 0 || !over) {
        cJSON_Delete(doc);
        return rc;
    }
    cmps[2] = (loams_meta_compare){
        .kind = LOAMS_CMP_VERSION, .key = kv->key, .key_len = kv->key_len, .version = kv->version};
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    if ((rc = loams_gc_writes_delete(&ws, kv->key)) == 0 &&
        (rc = loams_gc_writes_record(&ws, LOAMS_GC_ORPHAN, ms, object->valuestring)) == 0) {
        size_t failed = 0;
        rc = txn(p, cmps, 3, ws.w, ws.n, &failed);
        if (rc == 0) {
            p->st->intents_over++;
            loams_log(LOAMS_LOG_DEBUG, COMP,
                      "%s: the run of %s at epoch %" PRIu64 " is over: %s is "
                      "an orphan",
                      kv->key, task->valuestring, ep, object->valuestring);
        } else if (rc == LOAMS_ECONFLICT) {
            rc = 0; /* committed or re-leased meanwhile: looked at again next pass */
        }
    }
    loams_gc_writes_clear(&ws);
    cJSON_Delete(doc);
    return rc;
}

static int intents_page(pass *p, const loams_meta_range_result *r, int *stop)
{
    int rc = 0;
    (void)stop;
    for (size_t i = 0; i < r->count && rc == 0; i++) {
        rc = cancelled(p) ? LOAMS_ECANCELLED : intent_check(p, &r->kvs[i]);
    }
    return rc;
}

/* Deletes the objects of the records of one page that are past grace and
 * then the records (one transaction).  Records sort by age: at the first
 * young one the pass stops (*stop = 1), counting the page's young ones. */
static int delete_page(pass *p, const loams_meta_range_result *r, int *stop)
{
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    int rc = 0;
    for (size_t i = 0; i < r->count && rc == 0; i++) {
        const loams_meta_kv *kv = &r->kvs[i];
        int64_t ms = loams_gc_key_ms(kv->key);
        const char *object = kv->value;
        if (ms < 0 || kv->value_len == 0 || strlen(object) != kv->value_len) {
            LOAMS_WARN(COMP, "%s does not name an object; it is kept", kv->key);
            p->st->bad++;
            continue;
        }
        if (ms > p->o->now_ms - p->o->grace_ms) {
            p->st->young += r->count - i;
            *stop = 1;
            break;
        }
        if (cancelled(p)) {
            rc = LOAMS_ECANCELLED;
            break;
        }
        loams_object_info info;
        if (p->keep_rewritten && loams_store_head(p->o->store, object, &info) == 0 &&
            info.mtime_us / 1000 > ms) {
            p->st->rewritten++; /* written again since: the new target's */
            rc = loams_gc_writes_delete(&ws, kv->key);
            continue;
        }
        int st = loams_store_delete(p->o->store, object);
        if (st == -ENOENT || st == LOAMS_ENOTFOUND || st == -EINVAL) {
            p->st->missing++; /* gone, or a key that cannot hold an object */
        } else if (st != 0) {
            LOAMS_WARN(COMP, "cannot delete %s (%s): %s; tried again next pass", object, kv->key,
                       loams_store_last_error());
            p->st->failed++;
            continue;
        } else {
            p->st->deleted++;
        }
        rc = loams_gc_writes_delete(&ws, kv->key);
    }
    if (rc == 0 && ws.n > 0) {
        rc = txn(p, NULL, 0, ws.w, ws.n, NULL);
    }
    loams_gc_writes_clear(&ws);
    return rc;
}

int loams_gc_run(const loams_gc_options *o, loams_gc_stats *stats, loams_meta_err *err)
{
    loams_meta_err local;
    loams_gc_stats ignored;
    if (o == NULL || o->meta == NULL || o->store == NULL || o->grace_ms < 0) {
        return -EINVAL;
    }
    pass p = {.o = o, .st = stats != NULL ? stats : &ignored, .err = err != NULL ? err : &local};
    memset(p.st, 0, sizeof *p.st);
    p.err->msg[0] = '\0';
    int rc = each_page(&p, LOAMS_GC_INTENT, intents_page);
    if (rc == 0) {
        rc = each_page(&p, LOAMS_GC_ORPHAN, delete_page);
    }
    if (rc == 0) {
        rc = each_page(&p, LOAMS_GC_OBSOLETE, delete_page);
    }
    if (rc == 0) {
        p.keep_rewritten = 1;
        rc = each_page(&p, LOAMS_GC_REPLACED, delete_page);
    }
    return rc;
}
