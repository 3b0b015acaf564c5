/*
 * link_catalog.c - owns the stored form of link definitions (see
 * link_catalog.h).
 */
#include "catalog/link_catalog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "loams/kit/json_tree.h"

#include "abi/offsets.h"
#include "abi/registry.h"
#include "catalog/link_report.h"

void loams_link_def_init(loams_link_def *d)
{
    memset(d, 0, sizeof *d);
    d->batch_bytes = 64ULL << 20;
    d->batch_interval_ms = 2000;
    d->maintenance_interval_ms = LOAMS_LINK_MAINTENANCE_INTERVAL_MS;
    d->tasks = 1;
    d->on_error = LOAMS_ON_ERROR_FAIL;
    d->resume = LOAMS_LINK_RESUME_START;
    d->state = LOAMS_LINK_RUNNING;
    d->error_partition = -1;
    d->error_offset = -1;
}

void loams_link_options_clear(loams_link_options *o)
{
    for (size_t i = 0; i < o->count; i++) {
        free((char *)o->items[i].name);
        free((char *)o->items[i].value);
    }
    free(o->items);
    o->items = NULL;
    o->count = 0;
}

void loams_link_def_clear(loams_link_def *d)
{
    free(d->format);
    free(d->decoder);
    loams_link_options_clear(&d->decoder_options);
    free(d->transform_kind);
    free(d->transform_plugin);
    free(d->transform_text);
    loams_link_options_clear(&d->transform_options);
    free(d->target_kind);
    free(d->target_plugin);
    loams_link_options_clear(&d->target_options);
    free(d->error);
    free(d->start_offsets);
    loams_link_def_init(d);
}

const char *loams_link_transform_plugin(const loams_link_def *d)
{
    if (d->transform_plugin != NULL) {
        return d->transform_plugin;
    }
    return d->transform_kind != NULL && strcmp(d->transform_kind, "lua") == 0 ? "transform-lua"
                                                                              : "transform-sql";
}

int loams_link_start_offsets(const loams_link_def *d, loams_offsets *o)
{
    loams_offsets_clear(o);
    if (d->start_offsets == NULL) {
        return 0;
    }
    int rc = loams_offsets_parse_json(o, d->start_offsets, strlen(d->start_offsets));
    return rc == LOAMS_EINPUT ? LOAMS_ECORRUPT : rc;
}

int loams_link_transform_options(const loams_link_def *d, const loams_registry *reg,
                                 loams_link_options *out)
{
    for (size_t i = 0; i < d->transform_options.count; i++) {
        if (loams_link_options_add(out, d->transform_options.items[i].name,
                                   d->transform_options.items[i].value) != 0) {
            loams_link_options_clear(out);
            return -ENOMEM;
        }
    }
    const loams_plugin *p;
    if (reg == NULL ||
        loams_registry_find(reg, LOAMS_KIND_TRANSFORM, loams_link_transform_plugin(d), &p) != 0 ||
        p->descriptor == NULL || loams_option_spec_find(p->descriptor, "script_path") == NULL) {
        return 0;
    }
    size_t n = 0, ndirs = loams_registry_dir_count(reg);
    for (size_t i = 0; i < ndirs; i++) {
        n += strlen(loams_registry_dir_at(reg, i)) + 1;
    }
    if (n == 0) {
        return 0;
    }
    char *path = malloc(n);
    if (path == NULL) {
        loams_link_options_clear(out);
        return -ENOMEM;
    }
    path[0] = '\0';
    for (size_t i = 0; i < ndirs; i++) {
        if (i > 0) {
            strcat(path, ":");
        }
        strcat(path, loams_registry_dir_at(reg, i));
    }
    int rc = loams_link_options_add(out, "script_path", path);
    free(path);
    if (rc != 0) {
        loams_link_options_clear(out);
    }
    return rc;
}

int loams_link_options_add(loams_link_options *o, const char *name, const char *value)
{
    loams_option_kv *items = realloc(o->items, (o->count + 1) * sizeof *items);
    if (items == NULL) {
        return -ENOMEM;
    }
    o->items = items;
    char *n = strdup(name);
    char *v = strdup(value);
    if (n == NULL || v == NULL) {
        free(n);
        free(v);
        return -ENOMEM;
    }
    items[o->count].name = n;
    items[o->count].value = v;
    o->count++;
    return 0;
}

const char *loams_link_state_name(loams_link_state s)
{
    switch (s) {
    case LOAMS_LINK_RUNNING: return "running";
    case LOAMS_LINK_PAUSED: return "paused";
    case LOAMS_LINK_FAILED: return "failed";
    }
    return "unknown";
}

const char *loams_on_error_name(loams_on_error e)
{
    switch (e) {
    case LOAMS_ON_ERROR_FAIL: return "fail";
    case LOAMS_ON_ERROR_SKIP: return "skip";
    case LOAMS_ON_ERROR_DEAD_LETTER: return "dead_letter";
    }
    return "unknown";
}

const char *loams_link_resume_name(loams_link_resume r)
{
    return r == LOAMS_LINK_RESUME_OFFSETS ? "offsets" : "start";
}

void loams_link_key(const loams_objname *name, char *out, size_t size)
{
    snprintf(out, size, "link/%s/%s", name->ns, name->name);
}

/* The key of the definition in force: "linkdef/<ns>/<name>". */
static void linkdef_key(const loams_objname *name, char *out, size_t size)
{
    snprintf(out, size, "linkdef/%s/%s", name->ns, name->name);
}

void loams_link_fence_compare(const loams_link_def *d, loams_link_fence *f, loams_meta_compare *out)
{
    linkdef_key(&d->name, f->key, sizeof f->key);
    snprintf(f->value, sizeof f->value, "incarnation=%" PRIu64 " version=%" PRIu64, d->incarnation,
             d->definition_version);
    memset(out, 0, sizeof *out);
    out->kind = LOAMS_CMP_VALUE;
    out->key = f->key;
    out->key_len = strlen(f->key);
    out->value = f->value;
    out->value_len = strlen(f->value);
}

int loams_link_builds_on(const loams_link_def *d, const loams_pointer *p)
{
    return p->version != 0 &&
           (p->incarnation == d->incarnation || d->resume == LOAMS_LINK_RESUME_OFFSETS);
}

int loams_link_pointer_read(loams_meta *m, const loams_link_def *d, loams_pointer *p,
                            loams_meta_err *err)
{
    int rc = loams_pointer_read(m, &d->target, p, err);
    if (rc != 0 || p->version == 0 || loams_link_builds_on(d, p)) {
        return rc;
    }
    loams_offsets *applied = p->applied;
    free(p->ref);
    memset(p, 0, sizeof *p);
    p->applied = applied;
    loams_offsets_clear(applied);
    return 0;
}

static int add_name(cJSON *obj, const char *key, const loams_objname *n)
{
    char text[2 * LOAMS_IDENT_MAX + 2];
    snprintf(text, sizeof text, "%s.%s", n->ns, n->name);
    return cJSON_AddStringToObject(obj, key, text) != NULL;
}

static int add_options(cJSON *obj, const char *key, const loams_link_options *o)
{
    cJSON *map = cJSON_AddObjectToObject(obj, key);
    if (map == NULL) {
        return 0;
    }
    for (size_t i = 0; i < o->count; i++) {
        if (cJSON_AddStringToObject(map, o->items[i].name, o->items[i].value) == NULL) {
            return 0;
        }
    }
    return 1;
}

static int add_str(cJSON *obj, const char *key, const char *value)
{
    return (value != NULL ? cJSON_AddStringToObject(obj, key, value)
                          : cJSON_AddNullToObject(obj, key)) != NULL;
}

char *loams_link_def_to_json(const loams_link_def *d)
{
    cJSON *root = cJSON_CreateObject();
    char *text = NULL;
    if (root == NULL) {
        return NULL;
    }
    if (!add_name(root, "name", &d->name) || !add_name(root, "stream", &d->stream) ||
        !add_str(root, "format", d->format) || !add_str(root, "decoder", d->decoder) ||
        !add_options(root, "decoder_options", &d->decoder_options) ||
        !add_str(root, "transform_kind", d->transform_kind) ||
        !add_str(root, "transform_plugin", d->transform_plugin) ||
        !add_str(root, "transform", d->transform_text) ||
        !add_options(root, "transform_options", &d->transform_options) ||
        !add_str(root, "target_kind", d->target_kind) || !add_name(root, "target", &d->target) ||
        !add_str(root, "target_plugin", d->target_plugin) ||
        !add_options(root, "target_options", &d->target_options) ||
        loams_kit_json_tree_put_u64(root, "batch_bytes", d->batch_bytes) != 0 ||
        loams_kit_json_tree_put_int(root, "batch_interval_ms", d->batch_interval_ms) != 0 ||
        loams_kit_json_tree_put_int(root, "maintenance_interval_ms", d->maintenance_interval_ms) !=
            0 ||
        loams_kit_json_tree_put_u64(root, "tasks", d->tasks) != 0 ||
        loams_kit_json_tree_put_u64(root, "max_unapplied_records", d->max_unapplied_records) != 0 ||
        loams_kit_json_tree_put_u64(root, "max_unapplied_bytes", d->max_unapplied_bytes) != 0 ||
        loams_kit_json_tree_put_int(root, "max_lag_ms", d->max_lag_ms) != 0 ||
        !add_str(root, "on_error", loams_on_error_name(d->on_error)) ||
        !add_name(root, "dead_letter_stream", &d->dead_letter_stream) ||
        !add_str(root, "state", loams_link_state_name(d->state)) ||
        !add_str(root, "error", d->error) ||
        loams_kit_json_tree_put_int(root, "error_partition", d->error_partition) != 0 ||
        loams_kit_json_tree_put_int(root, "error_offset", d->error_offset) != 0 ||
        loams_kit_json_tree_put_int(root, "created_ms", d->created_ms) != 0 ||
        loams_kit_json_tree_put_u64(root, "incarnation", d->incarnation) != 0 ||
        loams_kit_json_tree_put_u64(root, "definition_version", d->definition_version) != 0 ||
        !add_str(root, "resume", loams_link_resume_name(d->resume))) {
        goto out;
    }
    if (d->start_offsets != NULL) {
        cJSON *start = NULL;
        if (loams_kit_json_tree_parse(d->start_offsets, strlen(d->start_offsets), &start, NULL) !=
                0 ||
            !cJSON_AddItemToObject(root, "start_offsets", start)) {
            cJSON_Delete(start);
            goto out;
        }
    }
    text = cJSON_PrintUnformatted(root);
out:
    cJSON_Delete(root);
    return text;
}

static int get_name(const cJSON *root, const char *key, loams_objname *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsString(v) && loams_objname_parse(v->valuestring, out, NULL, 0) == 0;
}

static int get_str(const cJSON *root, const char *key, char **out, int required)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (cJSON_IsNull(v) || v == NULL) {
        *out = NULL;
        return !required;
    }
    if (!cJSON_IsString(v)) {
        return 0;
    }
    *out = strdup(v->valuestring);
    return *out != NULL;
}

static int get_options(const cJSON *root, const char *key, loams_link_options *o)
{
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, key);
    if (map == NULL) {
        return 1;
    }
    if (!cJSON_IsObject(map)) {
        return 0;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, map)
    {
        if (!cJSON_IsString(it) || loams_link_options_add(o, it->string, it->valuestring) != 0) {
            return 0;
        }
    }
    return 1;
}

/* An integer member, exact (loams/kit/json_tree.h); def when missing. */
static int64_t get_num(const cJSON *root, const char *key, int64_t def)
{
    return loams_kit_json_tree_int_or(root, key, def);
}

int loams_link_def_from_json(const char *text, size_t len, loams_link_def *d)
{
    loams_link_def_clear(d);
    cJSON *root = NULL;
    int rc = loams_kit_json_tree_parse(text, len, &root, NULL);
    if (rc == -ENOMEM) {
        goto out;
    }
    rc = LOAMS_ECORRUPT;
    if (root == NULL || !cJSON_IsObject(root)) {
        goto out;
    }
    char *on_error = NULL;
    char *state = NULL;
    char *resume = NULL;
    if (!get_name(root, "name", &d->name) || !get_name(root, "stream", &d->stream) ||
        !get_str(root, "format", &d->format, 1) || !get_str(root, "decoder", &d->decoder, 1) ||
        !get_options(root, "decoder_options", &d->decoder_options) ||
        !get_str(root, "transform_kind", &d->transform_kind, 1) ||
        !get_str(root, "transform_plugin", &d->transform_plugin, 0) ||
        !get_str(root, "transform", &d->transform_text, 1) ||
        !get_options(root, "transform_options", &d->transform_options) ||
        !get_str(root, "target_kind", &d->target_kind, 1) ||
        !get_name(root, "target", &d->target) ||
        !get_str(root, "target_plugin", &d->target_plugin, 1) ||
        !get_options(root, "target_options", &d->target_options) ||
        !get_name(root, "dead_letter_stream", &d->dead_letter_stream) ||
        !get_str(root, "error", &d->error, 0) || !get_str(root, "on_error", &on_error, 1) ||
        !get_str(root, "state", &state, 1) || !get_str(root, "resume", &resume, 0)) {
        free(on_error);
        free(state);
        free(resume);
        goto out;
    }
    /* Stored before incarnations (no resume): its runs went on from the
     * target's newest commit. */
    d->resume = resume == NULL || strcmp(resume, "offsets") == 0 ? LOAMS_LINK_RESUME_OFFSETS
                                                                 : LOAMS_LINK_RESUME_START;
    free(resume);
    d->on_error = strcmp(on_error, "skip") == 0          ? LOAMS_ON_ERROR_SKIP
                  : strcmp(on_error, "dead_letter") == 0 ? LOAMS_ON_ERROR_DEAD_LETTER
                                                         : LOAMS_ON_ERROR_FAIL;
    d->state = strcmp(state, "paused") == 0   ? LOAMS_LINK_PAUSED
               : strcmp(state, "failed") == 0 ? LOAMS_LINK_FAILED
                                              : LOAMS_LINK_RUNNING;
    free(on_error);
    free(state);
    if (d->transform_plugin == NULL &&
        (d->transform_plugin = strdup(loams_link_transform_plugin(d))) == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    d->batch_bytes = (uint64_t)get_num(root, "batch_bytes", (int64_t)d->batch_bytes);
    d->batch_interval_ms = (int64_t)get_num(root, "batch_interval_ms", 2000);
    d->maintenance_interval_ms =
        (int64_t)get_num(root, "maintenance_interval_ms", LOAMS_LINK_MAINTENANCE_INTERVAL_MS);
    int64_t tasks = (int64_t)get_num(root, "tasks", 1);
    d->tasks = tasks >= 1 && tasks <= LOAMS_LINK_TASKS_MAX ? (uint32_t)tasks : 1;
    /* definitions stored before the budgets existed: a collection link
     * gets the defaults, other links none */
    int coll = d->target_kind != NULL && strcmp(d->target_kind, "collection") == 0;
    d->max_unapplied_records = (uint64_t)get_num(
        root, "max_unapplied_records", coll ? (int64_t)LOAMS_LINK_MAX_UNAPPLIED_RECORDS : 0);
    d->max_unapplied_bytes = (uint64_t)get_num(root, "max_unapplied_bytes",
                                               coll ? (int64_t)LOAMS_LINK_MAX_UNAPPLIED_BYTES : 0);
    d->max_lag_ms = (int64_t)get_num(root, "max_lag_ms", 0);
    d->error_partition = (int32_t)get_num(root, "error_partition", -1);
    d->error_offset = (int64_t)get_num(root, "error_offset", -1);
    d->created_ms = (int64_t)get_num(root, "created_ms", 0);
    d->incarnation = (uint64_t)get_num(root, "incarnation", 0);
    d->definition_version = (uint64_t)get_num(root, "definition_version", 0);
    const cJSON *start = cJSON_GetObjectItemCaseSensitive(root, "start_offsets");
    if (start != NULL) {
        if (!cJSON_IsObject(start)) {
            goto out;
        }
        if ((d->start_offsets = cJSON_PrintUnformatted(start)) == NULL) {
            rc = -ENOMEM;
            goto out;
        }
    }
    rc = 0;
out:
    cJSON_Delete(root);
    if (rc != 0) {
        loams_link_def_clear(d);
    }
    return rc;
}

static void corrupt(loams_meta_err *err, const char *key)
{
    if (err != NULL) {
        snprintf(err->msg, sizeof err->msg,
                 "link definition %.300s does not parse: the metastore is damaged", key);
    }
}

#define SEQ_KEY "seq/link"

/* The next incarnation the counter hands out and the counter's version (0:
 * no counter yet, the first incarnation is 1). */
static int seq_read(loams_meta *m, uint64_t *next, uint64_t *version, loams_meta_err *err)
{
    loams_meta_kv kv;
    *next = 1;
    *version = 0;
    int rc = loams_meta_get(m, SEQ_KEY, strlen(SEQ_KEY), &kv, err);
    if (rc == LOAMS_ENOTFOUND) {
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    char buf[32];
    size_t n = kv.value_len < sizeof buf - 1 ? kv.value_len : sizeof buf - 1;
    memcpy(buf, kv.value, n);
    buf[n] = '\0';
    char *end;
    *next = strtoull(buf, &end, 10);
    *version = kv.version;
    loams_meta_kv_free(&kv);
    if (*end != '\0' || *next == 0) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg,
                     "the metastore key " SEQ_KEY " is damaged (not a number)");
        }
        return LOAMS_ECORRUPT;
    }
    return 0;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One attempt of loams_link_store.  *seq_conflict is set when only the
 * counter moved (another link took the incarnation: try again). */
static int store_once(loams_meta *m, loams_link_def *d, loams_link_store_kind kind,
                      const loams_meta_write *extra, size_t nextra, int *seq_conflict,
                      loams_meta_err *err)
{
    char key[256], defkey[256], fence[64], seqbuf[32];
    loams_link_key(&d->name, key, sizeof key);
    linkdef_key(&d->name, defkey, sizeof defkey);
    int fresh = kind != LOAMS_LINK_STORE_NEXT_VERSION || d->incarnation == 0;
    uint64_t seq_next = 0, seq_version = 0;
    int rc;
    if (fresh && (rc = seq_read(m, &seq_next, &seq_version, err)) != 0) {
        return rc;
    }
    uint64_t old_incarnation = d->incarnation, old_definition = d->definition_version;
    loams_link_resume old_resume = d->resume;
    if (kind == LOAMS_LINK_STORE_NEXT_VERSION && d->incarnation == 0) {
        /* A link stored before incarnations: its runs went on from the
         * target's newest commit, and so does its first incarnation. */
        d->resume = LOAMS_LINK_RESUME_OFFSETS;
    }
    d->incarnation = fresh ? seq_next : d->incarnation;
    d->definition_version = fresh ? 1 : d->definition_version + 1;
    snprintf(fence, sizeof fence, "incarnation=%" PRIu64 " version=%" PRIu64, d->incarnation,
             d->definition_version);
    snprintf(seqbuf, sizeof seqbuf, "%" PRIu64, seq_next + 1);
    char *json = loams_link_def_to_json(d);
    loams_meta_write *w = calloc(3 + nextra, sizeof *w);
    if (json == NULL || w == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    loams_meta_compare cmp[2];
    memset(cmp, 0, sizeof cmp);
    cmp[0].key = key;
    cmp[0].key_len = strlen(key);
    if (kind == LOAMS_LINK_STORE_CREATE) {
        cmp[0].kind = LOAMS_CMP_ABSENT;
    } else {
        cmp[0].kind = LOAMS_CMP_VERSION;
        cmp[0].version = d->version;
    }
    size_t ncmp = 1, nw = 0;
    w[nw++] = (loams_meta_write){.kind = LOAMS_OP_PUT,
                                 .key = key,
                                 .key_len = strlen(key),
                                 .value = json,
                                 .value_len = strlen(json)};
    w[nw++] = (loams_meta_write){.kind = LOAMS_OP_PUT,
                                 .key = defkey,
                                 .key_len = strlen(defkey),
                                 .value = fence,
                                 .value_len = strlen(fence)};
    if (fresh) {
        cmp[ncmp++] = (loams_meta_compare){.kind = LOAMS_CMP_VERSION,
                                           .key = SEQ_KEY,
                                           .key_len = strlen(SEQ_KEY),
                                           .version = seq_version};
        w[nw++] = (loams_meta_write){.kind = LOAMS_OP_PUT,
                                     .key = SEQ_KEY,
                                     .key_len = strlen(SEQ_KEY),
                                     .value = seqbuf,
                                     .value_len = strlen(seqbuf)};
    }
    for (size_t i = 0; i < nextra; i++) {
        w[nw++] = extra[i];
    }
    size_t failed = 0;
    rc = loams_meta_txn(m, cmp, ncmp, w, nw, &failed, err);
    if (rc == 0) {
        d->version = w[0].new_version;
    } else if (rc == LOAMS_ECONFLICT && failed == 1) {
        *seq_conflict = 1;
    } else if (rc == LOAMS_ECONFLICT && kind == LOAMS_LINK_STORE_CREATE) {
        rc = LOAMS_EEXISTS;
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "link %s.%s already exists", d->name.ns,
                     d->name.name);
        }
    } else if (rc == LOAMS_ECONFLICT && err != NULL) {
        snprintf(err->msg, sizeof err->msg,
                 "link %s.%s changed (or was dropped) while the statement ran: run it again",
                 d->name.ns, d->name.name);
    }
out:
    if (rc != 0) {
        d->incarnation = old_incarnation;
        d->definition_version = old_definition;
        d->resume = old_resume;
    }
    free(w);
    free(json);
    return rc;
}

int loams_link_store(loams_meta *m, loams_link_def *d, loams_link_store_kind kind,
                     const loams_meta_write *extra, size_t nextra, loams_meta_err *err)
{
    if (kind != LOAMS_LINK_STORE_NEXT_VERSION) {
        d->created_ms = wall_ms(); /* a new incarnation is created now */
    } else if (d->created_ms == 0) {
        d->created_ms = wall_ms();
    }
    for (int attempt = 0; attempt < 64; attempt++) {
        int seq_conflict = 0;
        int rc = store_once(m, d, kind, extra, nextra, &seq_conflict, err);
        if (!seq_conflict) {
            return rc;
        }
    }
    if (err != NULL) {
        snprintf(err->msg, sizeof err->msg,
                 "link %s.%s: the incarnation counter kept moving (many links created at once): "
                 "run the statement again",
                 d->name.ns, d->name.name);
    }
    return LOAMS_ECONFLICT;
}

int loams_link_create(loams_meta *m, loams_link_def *d, loams_meta_err *err)
{
    return loams_link_store(m, d, LOAMS_LINK_STORE_CREATE, NULL, 0, err);
}

int loams_link_upgrade(loams_meta *m, loams_link_def *d, loams_meta_err *err)
{
    for (int attempt = 0; attempt < 16 && d->incarnation == 0; attempt++) {
        int rc = loams_link_store(m, d, LOAMS_LINK_STORE_NEXT_VERSION, NULL, 0, err);
        if (rc != LOAMS_ECONFLICT) {
            return rc;
        }
        /* Changed meanwhile (a state change, or another run upgraded it). */
        loams_objname name = d->name;
        if ((rc = loams_link_get(m, &name, d, err)) != 0) {
            return rc;
        }
    }
    return 0;
}

int loams_link_get(loams_meta *m, const loams_objname *name, loams_link_def *d, loams_meta_err *err)
{
    char key[256];
    loams_link_key(name, key, sizeof key);
    loams_meta_kv kv;
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc == LOAMS_ENOTFOUND) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "link %s.%s does not exist", name->ns, name->name);
        }
        return rc;
    }
    if (rc != 0) {
        return rc;
    }
    rc = loams_link_def_from_json(kv.value, kv.value_len, d);
    if (rc == 0) {
        d->version = kv.version;
    } else if (rc == LOAMS_ECORRUPT) {
        corrupt(err, key);
    } else if (err != NULL) {
        snprintf(err->msg, sizeof err->msg, "out of memory reading %.300s", key);
    }
    loams_meta_kv_free(&kv);
    return rc;
}

void loams_link_defs_free(loams_link_def *defs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        loams_link_def_clear(&defs[i]);
    }
    free(defs);
}

int loams_link_list(loams_meta *m, loams_link_def **defs, size_t *count, loams_meta_err *err)
{
    loams_link_def *out = NULL;
    size_t n = 0;
    char after[512] = "";
    int rc = 0;
    *defs = NULL;
    *count = 0;
    for (;;) {
        loams_meta_range_result r;
        rc = loams_meta_range_prefix(m, "link/", after[0] != '\0' ? after : NULL, 256, &r, err);
        if (rc != 0) {
            goto fail;
        }
        loams_link_def *grown = realloc(out, (n + r.count + 1) * sizeof *out);
        if (grown == NULL) {
            loams_meta_range_free(&r);
            rc = -ENOMEM;
            goto fail;
        }
        out = grown;
        for (size_t i = 0; i < r.count; i++) {
            loams_link_def_init(&out[n]);
            if (loams_link_def_from_json(r.kvs[i].value, r.kvs[i].value_len, &out[n]) != 0) {
                char key[512];
                snprintf(key, sizeof key, "%.*s", (int)r.kvs[i].key_len, r.kvs[i].key);
                corrupt(err, key);
                loams_meta_range_free(&r);
                rc = LOAMS_ECORRUPT;
                goto fail;
            }
            out[n].version = r.kvs[i].version;
            n++;
        }
        int more = r.more;
        if (r.count > 0) {
            const loams_meta_kv *last = &r.kvs[r.count - 1];
            snprintf(after, sizeof after, "%.*s", (int)last->key_len, last->key);
        }
        loams_meta_range_free(&r);
        if (!more) {
            break;
        }
    }
    *defs = out;
    *count = n;
    return 0;
fail:
    loams_link_defs_free(out, n);
    return rc;
}

int loams_link_drop(loams_meta *m, const loams_objname *name, loams_meta_err *err)
{
    char key[256];
    loams_link_key(name, key, sizeof key);
    loams_meta_compare cmp = {.kind = LOAMS_CMP_ABSENT, .key = key, .key_len = strlen(key)};
    size_t failed;
    /* "present" = not absent: check first so a missing link is reported. */
    int rc = loams_meta_txn(m, &cmp, 1, NULL, 0, &failed, err);
    if (rc == 0) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "link %s.%s does not exist", name->ns, name->name);
        }
        return LOAMS_ENOTFOUND;
    }
    if (rc != LOAMS_ECONFLICT) {
        return rc;
    }
    /* Its runs' report goes with it (catalog/link_report.h), and the key
     * its runs' commits compare: none of them can commit any more. */
    char report[256], defkey[256];
    loams_link_report_key(name, report, sizeof report);
    linkdef_key(name, defkey, sizeof defkey);
    loams_meta_write del[3] = {{.kind = LOAMS_OP_DELETE, .key = key, .key_len = strlen(key)},
                               {.kind = LOAMS_OP_DELETE, .key = report, .key_len = strlen(report)},
                               {.kind = LOAMS_OP_DELETE, .key = defkey, .key_len = strlen(defkey)}};
    return loams_meta_txn(m, NULL, 0, del, 3, NULL, err);
}

int loams_link_set_state(loams_meta *m, loams_link_def *d, loams_link_state state,
                         const char *error, int32_t partition, int64_t offset, loams_meta_err *err)
{
    char key[256];
    loams_link_key(&d->name, key, sizeof key);
    const uint64_t incarnation = d->incarnation, definition = d->definition_version;
    for (int attempt = 0; attempt < 16; attempt++) {
        char *copy = NULL;
        if (state == LOAMS_LINK_FAILED && error != NULL && (copy = strdup(error)) == NULL) {
            return -ENOMEM;
        }
        free(d->error);
        d->error = copy;
        d->state = state;
        d->error_partition = state == LOAMS_LINK_FAILED ? partition : -1;
        d->error_offset = state == LOAMS_LINK_FAILED ? offset : -1;
        char *json = loams_link_def_to_json(d);
        if (json == NULL) {
            return -ENOMEM;
        }
        loams_meta_compare cmp = {
            .kind = LOAMS_CMP_VERSION, .key = key, .key_len = strlen(key), .version = d->version};
        loams_meta_write w = {.kind = LOAMS_OP_PUT,
                              .key = key,
                              .key_len = strlen(key),
                              .value = json,
                              .value_len = strlen(json)};
        int rc = loams_meta_txn(m, &cmp, 1, &w, 1, NULL, err);
        free(json);
        if (rc == 0) {
            d->version = w.new_version;
            return 0;
        }
        if (rc != LOAMS_ECONFLICT) {
            return rc;
        }
        /* Someone changed the link meanwhile: read it again; the state
         * of another definition is not this caller's to set. */
        loams_objname name = d->name;
        rc = loams_link_get(m, &name, d, err);
        if (rc != 0) {
            return rc;
        }
        if (d->incarnation != incarnation || d->definition_version != definition) {
            if (err != NULL) {
                snprintf(err->msg, sizeof err->msg,
                         "link %s.%s was redefined meanwhile: its state was left as it is",
                         d->name.ns, d->name.name);
            }
            return LOAMS_ECONFLICT;
        }
    }
    if (err != NULL) {
        snprintf(err->msg, sizeof err->msg, "link %s.%s: state change kept conflicting", d->name.ns,
                 d->name.name);
    }
    return LOAMS_ECONFLICT;
}
