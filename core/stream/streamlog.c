/*
 * streamlog.c - owns the stream catalog (stream definitions in the
 * metastore), partition choice, argument checks, and the dispatch to the
 * record backend (streamlog_backend.h).
 */
#include "stream/streamlog.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loams/kit/json_tree.h"

#include "base/log.h"
#include "base/status.h"
#include "stream/streamlog_backend.h"

#define CATALOG_PREFIX "stream/"
#define SEQ_KEY "seq/stream"
#define DEFAULT_READ_RECORDS 10000

struct loams_streamlog {
    loams_meta *meta;
    const loams__logbe_ops *ops;
    loams__logbe *be;
};

struct loams_stream {
    loams_streamlog *log;
    loams_stream_def def;
    atomic_uint_fast64_t round_robin;
};

static int fail(loams_stream_err *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(loams_stream_err *err, int status, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

static int meta_fail(loams_stream_err *err, int status, const loams_meta_err *me, const char *what)
{
    return fail(err, status, "%s: %s", what, me->msg[0] ? me->msg : "metastore error");
}

int loams_streamlog_open(const char *data_dir, loams_meta *meta,
                         const loams_streamlog_options *opts, loams_streamlog **out,
                         loams_stream_err *err)
{
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    if (data_dir == NULL || meta == NULL || out == NULL) {
        return fail(err, -EINVAL, "loams_streamlog_open: data_dir, meta and out are required");
    }
    loams_streamlog *log = calloc(1, sizeof *log);
    if (log == NULL) {
        return fail(err, -ENOMEM, "out of memory");
    }
    log->meta = meta;
    log->ops = &loams__logbe_lmdb;
    int status = log->ops->open(data_dir, opts, &log->be, err);
    if (status != 0) {
        free(log);
        return status;
    }
    *out = log;
    return 0;
}

void loams_streamlog_close(loams_streamlog *log)
{
    if (log == NULL) {
        return;
    }
    log->ops->close(log->be);
    free(log);
}

const char *loams_stream_max_hold_json(const loams_stream_def *def, char *buf, size_t size)
{
    if (def->retention_max_hold_ms == 0) {
        snprintf(buf, size, "null");
    } else {
        snprintf(buf, size, "%" PRId64,
                 def->retention_max_hold_ms > 0 ? def->retention_max_hold_ms : 0);
    }
    return buf;
}

const char *loams_stream_key_type_name(int key_type)
{
    return key_type == LOAMS_STREAM_KEY_STRING ? "string" : "bytes";
}

/* ---- catalog entries ---- */

static void catalog_key(char *buf, size_t size, const loams_objname *name)
{
    snprintf(buf, size, CATALOG_PREFIX "%s/%s", name->ns, name->name);
}

/* A stream of another system: its source plugin and options (entries of
 * the log's own streams have neither). */
static int source_to_json(cJSON *o, const loams_stream_def *d)
{
    if (d->source[0] == '\0') {
        return 0;
    }
    cJSON *opts =
        d->source_options[0] != '\0' ? cJSON_Parse(d->source_options) : cJSON_CreateObject();
    if (opts == NULL || cJSON_AddStringToObject(o, "source", d->source) == NULL) {
        cJSON_Delete(opts);
        return -1;
    }
    cJSON_AddItemToObject(o, "source_options", opts);
    return 0;
}

static int source_from_json(const cJSON *o, loams_stream_def *d)
{
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "source");
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(o, "source_options");
    d->source[0] = d->source_options[0] = '\0';
    if (src == NULL) {
        return 0;
    }
    if (!cJSON_IsString(src) || src->valuestring[0] == '\0' ||
        strlen(src->valuestring) >= sizeof d->source || (opts != NULL && !cJSON_IsObject(opts))) {
        return -1;
    }
    char *text = opts != NULL ? cJSON_PrintUnformatted(opts) : NULL;
    if (opts != NULL && (text == NULL || strlen(text) >= sizeof d->source_options)) {
        cJSON_free(text);
        return -1;
    }
    snprintf(d->source, sizeof d->source, "%s", src->valuestring);
    snprintf(d->source_options, sizeof d->source_options, "%s", text != NULL ? text : "");
    cJSON_free(text);
    return 0;
}

static char *def_to_json(const loams_stream_def *d)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) {
        return NULL;
    }
    char *text = NULL;
    if (loams_kit_json_tree_put_u64(o, "id", d->id) == 0 &&
        loams_kit_json_tree_put_u64(o, "partitions", d->partitions) == 0 &&
        loams_kit_json_tree_put_int(o, "retention_ms", d->retention_ms) == 0 &&
        loams_kit_json_tree_put_u64(o, "retention_bytes", d->retention_bytes) == 0 &&
        loams_kit_json_tree_put_int(o, "created", d->created_ms) == 0 &&
        cJSON_AddStringToObject(o, "key_type", loams_stream_key_type_name(d->key_type)) != NULL &&
        (d->retention_max_hold_ms == 0 ||
         loams_kit_json_tree_put_int(o, "retention_max_hold_ms", d->retention_max_hold_ms) == 0) &&
        source_to_json(o, d) == 0) {
        text = cJSON_PrintUnformatted(o);
    }
    cJSON_Delete(o);
    return text;
}

/* Reads a non-negative integer member (exact: loams/kit/json_tree.h). */
static int json_u64(const cJSON *o, const char *name, uint64_t *out)
{
    return loams_kit_json_tree_u64(cJSON_GetObjectItemCaseSensitive(o, name), out) == 0 ? 0 : -1;
}

static int def_from_json(const char *key, const void *value, size_t len, loams_stream_def *d,
                         loams_stream_err *err)
{
    cJSON *o = NULL;
    if (loams_kit_json_tree_parse(value, len, &o, NULL) == -ENOMEM) {
        return fail(err, -ENOMEM, "out of memory");
    }
    uint64_t id = 0, parts = 0, rms = 0, rbytes = 0, created = 0;
    int ok = o != NULL && json_u64(o, "id", &id) == 0 && json_u64(o, "partitions", &parts) == 0 &&
             json_u64(o, "retention_ms", &rms) == 0 &&
             json_u64(o, "retention_bytes", &rbytes) == 0 &&
             json_u64(o, "created", &created) == 0 && parts >= 1 &&
             parts <= LOAMS_STREAM_MAX_PARTITIONS && id > 0;
    /* optional (entries written before it existed have none: the node's) */
    const cJSON *hold =
        o != NULL ? cJSON_GetObjectItemCaseSensitive(o, "retention_max_hold_ms") : NULL;
    int64_t hold_ms = 0;
    if (ok && hold != NULL) {
        ok = loams_kit_json_tree_int(hold, &hold_ms) == 0 && hold_ms >= -1;
        hold_ms = ok ? hold_ms : 0;
    }
    /* optional too (entries written before it existed: bytes, as their
     * links always read them) */
    const cJSON *kt = o != NULL ? cJSON_GetObjectItemCaseSensitive(o, "key_type") : NULL;
    int key_type = LOAMS_STREAM_KEY_BYTES;
    if (ok && kt != NULL) {
        ok = cJSON_IsString(kt) &&
             (strcmp(kt->valuestring, "string") == 0 || strcmp(kt->valuestring, "bytes") == 0);
        key_type = ok && strcmp(kt->valuestring, "string") == 0 ? LOAMS_STREAM_KEY_STRING
                                                                : LOAMS_STREAM_KEY_BYTES;
    }
    if (ok) {
        ok = source_from_json(o, d) == 0;
    }
    cJSON_Delete(o);
    if (!ok) {
        return fail(err, LOAMS_ECORRUPT,
                    "the catalog entry %s is damaged (expected a JSON object with id, "
                    "partitions, retention_ms, retention_bytes, created)",
                    key);
    }
    d->retention_max_hold_ms = hold_ms;
    d->key_type = key_type;
    d->id = id;
    d->partitions = (uint32_t)parts;
    d->retention_ms = (int64_t)rms;
    d->retention_bytes = rbytes;
    d->created_ms = (int64_t)created;
    return 0;
}

/* Reads the entry of `name`; *version gets its metastore version. */
static int catalog_get(loams_streamlog *log, const loams_objname *name, loams_stream_def *out,
                       uint64_t *version, loams_stream_err *err)
{
    char key[256];
    loams_meta_kv kv;
    loams_meta_err me = {{0}};
    catalog_key(key, sizeof key, name);
    int status = loams_meta_get(log->meta, key, strlen(key), &kv, &me);
    if (status == LOAMS_ENOTFOUND) {
        return fail(err, LOAMS_ENOTFOUND,
                    "stream %s.%s does not exist: create it with CREATE STREAM %s.%s WITH "
                    "(partitions = N)",
                    name->ns, name->name, name->ns, name->name);
    }
    if (status != 0) {
        return meta_fail(err, status, &me, "reading the stream catalog");
    }
    status = def_from_json(key, kv.value, kv.value_len, out, err);
    if (status == 0) {
        out->name = *name;
        if (version != NULL) {
            *version = kv.version;
        }
    }
    loams_meta_kv_free(&kv);
    return status;
}

/* The next stream id the metastore's counter gives (1 when it gave none)
 * and the counter's version (0 when missing). */
static int seq_read(loams_streamlog *log, uint64_t *next, uint64_t *version, loams_stream_err *err)
{
    loams_meta_err me = {{0}};
    loams_meta_kv seq;
    *next = 1;
    *version = 0;
    int status = loams_meta_get(log->meta, SEQ_KEY, strlen(SEQ_KEY), &seq, &me);
    if (status == LOAMS_ENOTFOUND) {
        return 0;
    }
    if (status != 0) {
        return meta_fail(err, status, &me, "reading the stream id counter");
    }
    char buf[32];
    size_t n = seq.value_len < sizeof buf - 1 ? seq.value_len : sizeof buf - 1;
    memcpy(buf, seq.value, n);
    buf[n] = '\0';
    char *end;
    *next = strtoull(buf, &end, 10);
    *version = seq.version;
    loams_meta_kv_free(&seq);
    if (*end != '\0' || *next == 0) {
        return fail(err, LOAMS_ECORRUPT, "the metastore key " SEQ_KEY " is damaged (not a number)");
    }
    return 0;
}

/* Whether the log already knows stream `id` (live or dropped). */
static int log_knows(loams_streamlog *log, uint64_t id, int *known, loams_stream_err *err)
{
    uint64_t *ids = NULL;
    uint8_t *live = NULL;
    size_t n = 0;
    *known = 0;
    int status = log->ops->stream_ids(log->be, &ids, &live, &n, err);
    for (size_t i = 0; status == 0 && i < n; i++) {
        if (ids[i] == id) {
            *known = 1;
        }
    }
    free(ids);
    free(live);
    return status;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int loams_stream_create(loams_streamlog *log, const loams_stream_def *def, int if_not_exists,
                        loams_stream_def *out, loams_stream_err *err)
{
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    if (log == NULL || def == NULL) {
        return fail(err, -EINVAL, "loams_stream_create: log and def are required");
    }
    char msg[256];
    loams_objname name;
    if (loams_objname_set(&name, def->name.ns, def->name.name, msg, sizeof msg) != 0) {
        return fail(err, LOAMS_EINPUT, "%s", msg);
    }
    if (strcmp(name.ns, "system") == 0) {
        return fail(err, LOAMS_EINPUT,
                    "namespace 'system' is reserved for system tables: put stream %s in "
                    "another namespace",
                    name.name);
    }
    if (def->partitions < 1 || def->partitions > LOAMS_STREAM_MAX_PARTITIONS) {
        return fail(err, LOAMS_EINPUT,
                    "stream %s.%s: partitions = %" PRIu32 " is out of range (1 to %d)", name.ns,
                    name.name, def->partitions, LOAMS_STREAM_MAX_PARTITIONS);
    }
    if (def->retention_ms < 0) {
        return fail(err, LOAMS_EINPUT, "stream %s.%s: the retention must not be negative", name.ns,
                    name.name);
    }
    if (def->retention_max_hold_ms < -1) {
        return fail(err, LOAMS_EINPUT,
                    "stream %s.%s: retention_max_hold must be a duration or '0' (no hold)", name.ns,
                    name.name);
    }
    char key[256];
    catalog_key(key, sizeof key, &name);
    loams_stream_def d = *def;
    d.name = name;
    d.created_ms = now_ms();
    int status = 0;
    char *json = NULL;
    /* Allocate an id and write the entry in one transaction: compare the
     * counter's version and the entry's absence; retry when another
     * process moved the counter meanwhile. */
    for (int attempt = 0; attempt < 1000; attempt++) {
        loams_meta_err me = {{0}};
        uint64_t seq_version = 0, next = 1;
        status = seq_read(log, &next, &seq_version, err);
        if (status != 0) {
            free(json);
            return status;
        }
        /* Ids are never reused: an id the counter is about to give that the
         * log already holds means the metastore is not the log's (no
         * process can have registered it: no catalog entry names it yet). */
        int known = 0;
        status = log_knows(log, next, &known, err);
        if (status != 0) {
            free(json);
            return status;
        }
        if (known) {
            free(json);
            return fail(err, LOAMS_ECORRUPT,
                        "stream %s.%s: the metastore would give it id %" PRIu64
                        ", which the stream log already holds: the metastore and the log are "
                        "not of one data dir (was meta.mdb replaced?); nothing was created",
                        name.ns, name.name, next);
        }
        d.id = next;
        free(json);
        json = def_to_json(&d);
        char nextbuf[32];
        snprintf(nextbuf, sizeof nextbuf, "%" PRIu64, next + 1);
        if (json == NULL) {
            return fail(err, -ENOMEM, "out of memory");
        }
        loams_meta_compare cmp[2] = {
            {.kind = LOAMS_CMP_VERSION,
             .key = SEQ_KEY,
             .key_len = strlen(SEQ_KEY),
             .version = seq_version},
            {.kind = LOAMS_CMP_ABSENT, .key = key, .key_len = strlen(key)},
        };
        loams_meta_write w[2] = {
            {.kind = LOAMS_OP_PUT,
             .key = SEQ_KEY,
             .key_len = strlen(SEQ_KEY),
             .value = nextbuf,
             .value_len = strlen(nextbuf)},
            {.kind = LOAMS_OP_PUT,
             .key = key,
             .key_len = strlen(key),
             .value = json,
             .value_len = strlen(json)},
        };
        size_t failed = 0;
        status = loams_meta_txn(log->meta, cmp, 2, w, 2, &failed, &me);
        if (status == LOAMS_ECONFLICT && failed == 1) {
            free(json);
            if (if_not_exists) {
                loams_stream_def existing;
                status = catalog_get(log, &name, &existing, NULL, err);
                if (status == LOAMS_ENOTFOUND) {
                    continue; /* dropped meanwhile: try again */
                }
                if (status == 0 && out != NULL) {
                    *out = existing;
                }
                return status;
            }
            return fail(err, LOAMS_EEXISTS,
                        "stream %s.%s already exists: drop it first (DROP STREAM %s.%s) or "
                        "use CREATE STREAM IF NOT EXISTS",
                        name.ns, name.name, name.ns, name.name);
        }
        if (status == LOAMS_ECONFLICT) {
            continue;
        }
        break;
    }
    free(json);
    if (status == LOAMS_ECONFLICT) {
        return fail(err, LOAMS_ERETRY, "stream %s.%s: the metastore is too busy, try again",
                    name.ns, name.name);
    }
    if (status != 0) {
        return fail(err, status, "creating stream %s.%s: %s", name.ns, name.name,
                    loams_strerror(status));
    }
    /* A stream of another system holds no records here. */
    status = d.source[0] == '\0' ? log->ops->ensure(log->be, d.id, d.partitions, err) : 0;
    if (status != 0) {
        return status;
    }
    if (out != NULL) {
        *out = d;
    }
    return 0;
}

int loams_stream_drop(loams_streamlog *log, const loams_objname *name, int if_exists,
                      loams_stream_err *err)
{
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    if (log == NULL || name == NULL) {
        return fail(err, -EINVAL, "loams_stream_drop: log and name are required");
    }
    for (int attempt = 0; attempt < 1000; attempt++) {
        loams_stream_def d;
        uint64_t version = 0;
        int status = catalog_get(log, name, &d, &version, err);
        if (status == LOAMS_ENOTFOUND && if_exists) {
            return 0;
        }
        if (status != 0) {
            return status;
        }
        char key[256];
        catalog_key(key, sizeof key, name);
        loams_meta_compare cmp = {
            .kind = LOAMS_CMP_VERSION, .key = key, .key_len = strlen(key), .version = version};
        loams_meta_write w = {.kind = LOAMS_OP_DELETE, .key = key, .key_len = strlen(key)};
        loams_meta_err me = {{0}};
        status = loams_meta_txn(log->meta, &cmp, 1, &w, 1, NULL, &me);
        if (status == LOAMS_ECONFLICT) {
            continue; /* dropped or re-created meanwhile: look again */
        }
        if (status != 0) {
            return meta_fail(err, status, &me, "dropping a stream");
        }
        /* The catalog no longer names it; now delete its records.  A crash
         * here leaves records that loams_streamlog_purge_orphans removes. */
        return d.source[0] == '\0' ? log->ops->drop(log->be, d.id, err) : 0;
    }
    return fail(err, LOAMS_ERETRY, "stream %s.%s: the metastore is too busy, try again", name->ns,
                name->name);
}

int loams_stream_describe(loams_streamlog *log, const loams_objname *name, loams_stream_def *out,
                          loams_stream_err *err)
{
    if (log == NULL || name == NULL || out == NULL) {
        return fail(err, -EINVAL, "loams_stream_describe: log, name and out are required");
    }
    return catalog_get(log, name, out, NULL, err);
}

int loams_stream_list(loams_streamlog *log, loams_stream_def **defs, size_t *count,
                      loams_stream_err *err)
{
    if (log == NULL || defs == NULL || count == NULL) {
        return fail(err, -EINVAL, "loams_stream_list: log, defs and count are required");
    }
    loams_stream_def *arr = NULL;
    size_t n = 0, cap = 0;
    char after[512] = "";
    int status = 0;
    for (;;) {
        loams_meta_range_result rr;
        loams_meta_err me = {{0}};
        status = loams_meta_range_prefix(log->meta, CATALOG_PREFIX, after[0] ? after : NULL, 256,
                                         &rr, &me);
        if (status != 0) {
            status = meta_fail(err, status, &me, "listing the stream catalog");
            goto out;
        }
        for (size_t i = 0; i < rr.count && status == 0; i++) {
            const loams_meta_kv *kv = &rr.kvs[i];
            char key[512];
            size_t kl = kv->key_len < sizeof key - 1 ? kv->key_len : sizeof key - 1;
            memcpy(key, kv->key, kl);
            key[kl] = '\0';
            snprintf(after, sizeof after, "%s", key);
            /* stream/<ns>/<name> */
            const char *ns = key + strlen(CATALOG_PREFIX);
            const char *slash = strchr(ns, '/');
            if (slash == NULL) {
                continue;
            }
            char nsbuf[LOAMS_IDENT_MAX + 2];
            size_t nsl = (size_t)(slash - ns);
            if (nsl > LOAMS_IDENT_MAX) {
                continue;
            }
            memcpy(nsbuf, ns, nsl);
            nsbuf[nsl] = '\0';
            loams_stream_def d;
            if (loams_objname_set(&d.name, nsbuf, slash + 1, NULL, 0) != 0) {
                continue; /* not a stream definition key */
            }
            status = def_from_json(key, kv->value, kv->value_len, &d, err);
            if (status != 0) {
                break;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                loams_stream_def *na = realloc(arr, cap * sizeof *na);
                if (na == NULL) {
                    status = fail(err, -ENOMEM, "out of memory");
                    break;
                }
                arr = na;
            }
            arr[n++] = d;
        }
        int more = rr.more;
        loams_meta_range_free(&rr);
        if (status != 0 || !more) {
            break;
        }
    }
out:
    if (status != 0) {
        free(arr);
        return status;
    }
    *defs = arr;
    *count = n;
    return 0;
}

/* ---- handles ---- */

int loams_stream_open(loams_streamlog *log, const loams_objname *name, loams_stream **out,
                      loams_stream_err *err)
{
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    if (log == NULL || name == NULL || out == NULL) {
        return fail(err, -EINVAL, "loams_stream_open: log, name and out are required");
    }
    loams_stream *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return fail(err, -ENOMEM, "out of memory");
    }
    s->log = log;
    int status = catalog_get(log, name, &s->def, NULL, err);
    if (status == 0 && s->def.source[0] == '\0') {
        /* Registers the stream with the backend when a crash came between
         * the catalog write and the registration at create time. */
        status = log->ops->ensure(log->be, s->def.id, s->def.partitions, err);
        if (status == LOAMS_ENOTFOUND) {
            status = fail(err, LOAMS_ENOTFOUND, "stream %s.%s was dropped", name->ns, name->name);
        }
    }
    if (status != 0) {
        free(s);
        return status;
    }
    atomic_init(&s->round_robin, 0);
    *out = s;
    return 0;
}

void loams_stream_close(loams_stream *s)
{
    free(s);
}

const loams_stream_def *loams_stream_definition(const loams_stream *s)
{
    return &s->def;
}

uint32_t loams_stream_partition_for_key(const void *key, size_t len, uint32_t partitions)
{
    const unsigned char *p = key;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return partitions ? (uint32_t)(h % partitions) : 0;
}

static int dropped(loams_stream *s, int status, loams_stream_err *err)
{
    if (status == LOAMS_ENOTFOUND) {
        return fail(err, LOAMS_ENOTFOUND, "stream %s.%s was dropped", s->def.name.ns,
                    s->def.name.name);
    }
    return status;
}

static int external(loams_stream *s, loams_stream_err *err);

/* loams_stream_append and loams_stream_append_fenced (fence may be NULL). */
static int append(loams_stream *s, const loams_stream_fence *fence,
                  const loams_stream_record_in *recs, size_t n, loams_stream_pos *pos,
                  loams_stream_err *err)
{
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    if (s == NULL || (n > 0 && recs == NULL)) {
        return fail(err, -EINVAL, "loams_stream_append: s and recs are required");
    }
    if (s->def.source[0] != '\0') {
        return external(s, err);
    }
    if (fence != NULL) {
        int nf = 0;
        for (const loams_stream_fence *f = fence; f != NULL; f = f->also) {
            size_t wlen = f->writer != NULL ? strlen(f->writer) : 0;
            if (wlen == 0 || wlen > LOAMS_STREAM_WRITER_MAX || f->epoch == 0) {
                return fail(err, -EINVAL,
                            "a fenced append needs a writer of 1 to %d bytes and an epoch above 0",
                            LOAMS_STREAM_WRITER_MAX);
            }
            if (++nf > LOAMS_STREAM_FENCES_MAX) {
                return fail(err, -EINVAL, "a fenced append takes at most %d fences",
                            LOAMS_STREAM_FENCES_MAX);
            }
        }
        if (n == 0) {
            return dropped(s,
                           s->log->ops->append(s->log->be, s->def.id, s->def.partitions, NULL, NULL,
                                               0, fence, NULL, err),
                           err);
        }
    }
    if (n == 0) {
        return 0;
    }
    if (n > UINT32_MAX) {
        return fail(err, -EINVAL, "a batch of more than %" PRIu32 " records", UINT32_MAX);
    }
    uint32_t parts = s->def.partitions;
    uint32_t one = 0;
    uint32_t *part = n == 1 ? &one : calloc(n, sizeof *part);
    if (part == NULL) {
        return fail(err, -ENOMEM, "out of memory");
    }
    int status = 0;
    for (size_t i = 0; i < n; i++) {
        const loams_stream_record_in *r = &recs[i];
        size_t hbytes = 0;
        for (size_t h = 0; h < r->nheaders; h++) {
            hbytes += r->headers[h].name_len + r->headers[h].value_len;
        }
        if ((r->value == NULL && r->value_len > 0) || (r->nheaders > 0 && r->headers == NULL)) {
            status = fail(err, -EINVAL, "record %zu: value or headers pointer is NULL", i);
            goto out;
        }
        if (r->key_len > LOAMS_STREAM_MAX_RECORD_BYTES ||
            r->value_len > LOAMS_STREAM_MAX_RECORD_BYTES ||
            hbytes > LOAMS_STREAM_MAX_RECORD_BYTES ||
            r->key_len + r->value_len + hbytes > LOAMS_STREAM_MAX_RECORD_BYTES) {
            status = fail(err, -EINVAL,
                          "record %zu of the batch is larger than the limit of %u bytes "
                          "(key + value + headers)",
                          i, LOAMS_STREAM_MAX_RECORD_BYTES);
            goto out;
        }
        if (r->partition >= 0) {
            if ((uint32_t)r->partition >= parts) {
                status = fail(err, -EINVAL,
                              "record %zu names partition %" PRId32 " but stream %s.%s has "
                              "partitions 0 to %" PRIu32,
                              i, r->partition, s->def.name.ns, s->def.name.name, parts - 1);
                goto out;
            }
            part[i] = (uint32_t)r->partition;
        } else if (r->key != NULL) {
            part[i] = loams_stream_partition_for_key(r->key, r->key_len, parts);
        } else {
            part[i] = (uint32_t)(atomic_fetch_add(&s->round_robin, 1) % parts);
        }
    }
    status = dropped(
        s, s->log->ops->append(s->log->be, s->def.id, parts, recs, part, n, fence, pos, err), err);
out:
    if (part != &one) {
        free(part);
    }
    return status;
}

int loams_stream_append(loams_stream *s, const loams_stream_record_in *recs, size_t n,
                        loams_stream_pos *pos, loams_stream_err *err)
{
    return append(s, NULL, recs, n, pos, err);
}

int loams_stream_append_fenced(loams_stream *s, const loams_stream_fence *f,
                               const loams_stream_record_in *recs, size_t n, loams_stream_pos *pos,
                               loams_stream_err *err)
{
    if (f == NULL) {
        return fail(err, -EINVAL, "loams_stream_append_fenced: the fence is required");
    }
    return append(s, f, recs, n, pos, err);
}

int loams_stream_fence_claim(loams_stream *s, const loams_stream_fence *f, loams_stream_err *err)
{
    return loams_stream_append_fenced(s, f, NULL, 0, NULL, err);
}

void loams_stream_slice_init(loams_stream_slice *r)
{
    memset(r, 0, sizeof *r);
}

/* The log holds no record of a stream of another system. */
static int external(loams_stream *s, loams_stream_err *err)
{
    return fail(err, LOAMS_EUNSUPPORTED,
                "stream %s.%s is read from another system through %s (CREATE STREAM ... "
                "USING): its records live there, not in this node's log; produce to it with "
                "that system's own client (for Kafka: a Kafka producer)",
                s->def.name.ns, s->def.name.name, s->def.source);
}

int loams_stream_check_appendable(loams_stream *s, loams_stream_err *err)
{
    loams_stream_err local;
    return s->def.source[0] != '\0' ? external(s, err != NULL ? err : &local) : 0;
}

static int check_partition(loams_stream *s, int32_t partition, loams_stream_err *err)
{
    if (s->def.source[0] != '\0') {
        return external(s, err);
    }
    if (partition < 0 || (uint32_t)partition >= s->def.partitions) {
        return fail(err, -EINVAL, "stream %s.%s has partitions 0 to %" PRIu32 ", not %" PRId32,
                    s->def.name.ns, s->def.name.name, s->def.partitions - 1, partition);
    }
    return 0;
}

int loams_stream_read(loams_stream *s, int32_t partition, int64_t from, size_t max_records,
                      size_t max_bytes, loams_stream_slice *r, loams_stream_err *err)
{
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    if (s == NULL || r == NULL) {
        return fail(err, -EINVAL, "loams_stream_read: s and r are required");
    }
    r->count = 0;
    int status = check_partition(s, partition, err);
    if (status != 0) {
        return status;
    }
    if (from < 0) {
        return fail(err, -EINVAL, "a read starts at offset 0 or later, not %" PRId64, from);
    }
    if (max_records == 0) {
        max_records = DEFAULT_READ_RECORDS;
    }
    return dropped(
        s,
        s->log->ops->read(s->log->be, s->def.id, partition, from, max_records, max_bytes, r, err),
        err);
}

void loams_stream_slice_release(loams_stream_slice *r)
{
    if (r != NULL && r->snapshot != NULL) {
        const loams__logbe_ops *ops = r->backend;
        ops->read_done(r);
    }
}

void loams_stream_slice_free(loams_stream_slice *r)
{
    if (r == NULL) {
        return;
    }
    if (r->snapshot != NULL) {
        const loams__logbe_ops *ops = r->backend;
        ops->read_free(r);
    }
    free(r->records);
    r->records = NULL;
    r->cap = 0;
    r->count = 0;
}

int loams_stream_partition_state(loams_stream *s, int32_t partition,
                                 loams_stream_partition_info *out, loams_stream_err *err)
{
    if (s == NULL || out == NULL) {
        return fail(err, -EINVAL, "loams_stream_partition_state: s and out are required");
    }
    int status = check_partition(s, partition, err);
    if (status != 0) {
        return status;
    }
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    return dropped(s, s->log->ops->partition_state(s->log->be, s->def.id, partition, out, err),
                   err);
}

int loams_stream_trim(loams_stream *s, int32_t partition, const loams_stream_trim_spec *spec,
                      uint64_t *trimmed, loams_stream_err *err)
{
    if (trimmed != NULL) {
        *trimmed = 0;
    }
    if (s == NULL || spec == NULL) {
        return fail(err, -EINVAL, "loams_stream_trim: s and spec are required");
    }
    int status = check_partition(s, partition, err);
    if (status != 0) {
        return status;
    }
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    return dropped(s, s->log->ops->trim(s->log->be, s->def.id, partition, spec, trimmed, err), err);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int loams_streamlog_purge_orphans(loams_streamlog *log, size_t *purged, loams_stream_err *err)
{
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    if (purged != NULL) {
        *purged = 0;
    }
    if (log == NULL) {
        return fail(err, -EINVAL, "loams_streamlog_purge_orphans: log is required");
    }
    /* Backend ids first, catalog second: a stream being created writes its
     * catalog entry before it registers with the backend, so any id seen
     * live here that is missing from the later catalog read was dropped. */
    uint64_t *ids = NULL, *known = NULL;
    size_t nids = 0, ndefs = 0, count = 0;
    loams_stream_def *defs = NULL;
    int status = log->ops->live_ids(log->be, &ids, &nids, err);
    if (status != 0) {
        return status;
    }
    if (nids == 0) {
        goto out;
    }
    status = loams_stream_list(log, &defs, &ndefs, err);
    if (status != 0) {
        goto out;
    }
    known = malloc((ndefs ? ndefs : 1) * sizeof *known);
    if (known == NULL) {
        status = fail(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < ndefs; i++) {
        known[i] = defs[i].id;
    }
    qsort(known, ndefs, sizeof *known, cmp_u64);
    /* Read after the backend ids: an id below it was allocated then. */
    uint64_t next = 1, seq_version;
    status = seq_read(log, &next, &seq_version, err);
    if (status != 0) {
        goto out;
    }
    for (size_t i = 0; i < nids; i++) {
        if (bsearch(&ids[i], known, ndefs, sizeof *known, cmp_u64) != NULL) {
            continue;
        }
        if (ids[i] >= next) {
            LOAMS_WARN("streamlog",
                       "stream id %" PRIu64 " is in the log but the metastore never gave it "
                       "(it gave ids below %" PRIu64 "): not purged; the metastore is not "
                       "this log's",
                       ids[i], next);
            continue;
        }
        status = log->ops->drop(log->be, ids[i], err);
        if (status != 0) {
            goto out;
        }
        count++;
    }
out:
    free(ids);
    free(known);
    free(defs);
    if (purged != NULL) {
        *purged = count;
    }
    return status;
}

/* ---- the data dir's identity ---- */

int loams_streamlog_datadir_id(loams_streamlog *log, char *out, size_t size, loams_stream_err *err)
{
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    if (log == NULL || out == NULL || size == 0) {
        return fail(err, -EINVAL, "loams_streamlog_datadir_id: log and out are required");
    }
    return log->ops->identity(log->be, out, size, err);
}

int loams_streamlog_set_datadir_id(loams_streamlog *log, const char *id, loams_stream_err *err)
{
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    if (log == NULL || id == NULL || id[0] == '\0') {
        return fail(err, -EINVAL, "loams_streamlog_set_datadir_id: log and id are required");
    }
    return log->ops->set_identity(log->be, id, err);
}

int loams_streamlog_check_catalog(loams_streamlog *log, loams_streamlog_census *c,
                                  loams_stream_err *err)
{
    loams_stream_err local;
    loams_streamlog_census lc;
    if (err == NULL) {
        err = &local;
    }
    if (c == NULL) {
        c = &lc;
    }
    memset(c, 0, sizeof *c);
    if (log == NULL) {
        return fail(err, -EINVAL, "loams_streamlog_check_catalog: log is required");
    }
    uint64_t *ids = NULL;
    uint8_t *live = NULL;
    loams_stream_def *defs = NULL;
    size_t nids = 0, ndefs = 0;
    uint64_t next = 1, version;
    int status = log->ops->stream_ids(log->be, &ids, &live, &nids, err);
    if (status == 0) {
        status = seq_read(log, &next, &version, err);
    }
    if (status == 0) {
        status = loams_stream_list(log, &defs, &ndefs, err);
    }
    if (status != 0) {
        goto out;
    }
    c->log_streams = nids;
    c->allocated = next - 1;
    c->catalog_streams = ndefs;
    for (size_t i = 0; i < nids; i++) {
        if (ids[i] > c->log_max_id) {
            c->log_max_id = ids[i];
        }
    }
    if (c->log_max_id > c->allocated) {
        status =
            fail(err, LOAMS_ECORRUPT,
                 "the stream log holds stream id %" PRIu64 " but the metastore gave "
                 "%s%" PRIu64 ": the metastore is not the one the log was written with "
                 "(it was emptied, deleted or replaced)",
                 c->log_max_id, c->allocated > 0 ? "ids up to " : "no stream id, ", c->allocated);
        goto out;
    }
    for (size_t d = 0; d < ndefs; d++) {
        int found = 0, is_live = 0;
        if (defs[d].source[0] != '\0') {
            continue; /* a stream of another system: nothing in the log */
        }
        for (size_t i = 0; i < nids; i++) {
            if (ids[i] == defs[d].id) {
                found = 1;
                is_live = live[i];
            }
        }
        if (!is_live) {
            status =
                fail(err, LOAMS_ECORRUPT,
                     "stream %s.%s (id %" PRIu64 ") is in the metastore's catalog but %s "
                     "in the stream log: the log is not the one the metastore was "
                     "written with (it was emptied, deleted or replaced)",
                     defs[d].name.ns, defs[d].name.name, defs[d].id, found ? "dropped" : "not");
            goto out;
        }
    }
out:
    free(ids);
    free(live);
    free(defs);
    return status;
}
