/*
 * target-jsonl.c - a small third-party target plugin, built out of tree
 * with nothing but `pkg-config --cflags --libs loams-plugin`
 * (tests/integration/target-plugin.sh builds it against a staged install
 * and uses it with INTO jsonl ns.x USING target-jsonl).
 *
 * Each commit writes the rows staged since the last one as one object of
 * JSON lines, one line per row: the row's origin (partition and offset of
 * its stream record, under the names of the options partition_field and
 * offset_field) and its columns.  Each commit's manifest is a small text
 * object that lists every data object of the target so far and the
 * applied offsets, which is what the target ABI asks of a target:
 *
 *     loams-jsonl 1
 *     seq 3
 *     epoch 7
 *     parent <previous manifest key, or ->
 *     applied <partition> <next offset>       (one line per partition)
 *     object <data object key>                (one line per object)
 *
 * resume(ref) reads the manifest the core's pointer names and hands its
 * applied offsets back, so a run that crashed before its commit redoes
 * the records after them and nothing twice: the objects of the lost
 * attempt are in no manifest the pointer reaches (GC deletes them).
 * Every object key holds the lease epoch and 64 random bits, so that no
 * attempt ever writes a key an earlier attempt wrote (the host may delete
 * an abandoned attempt's keys later).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <loams/plugin.h>

#define KEY_MAX 512
#define FIELD_MAX 64

static const loams_host_api *host;

/* The data objects of one commit, and its number. */
typedef struct commit_state {
    char **objects;
    size_t n, cap;
    uint64_t seq;
    char *ref; /* its manifest key; NULL before the first commit */
} commit_state;

typedef struct jsonl {
    loams_ctx *ctx;
    loams_store *store;
    char ns[FIELD_MAX + 1], name[FIELD_MAX + 1];
    uint64_t epoch;
    char pfield[FIELD_MAX + 1], ofield[FIELD_MAX + 1];
    commit_state base;    /* the commit resume()/committed() made current */
    commit_state pending; /* the commit prepare() wrote, until committed/abort */
    loams_buf *stage;     /* JSON lines staged since the base */
    size_t staged_rows;
    loams_buf *io; /* reads of manifests, manifest text being written */
} jsonl;

/* ---- small helpers ---- */

static char *dup_str(jsonl *j, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = host->malloc(j->ctx, n);
    if (p != NULL) {
        memcpy(p, s, n);
    }
    return p;
}

static void commit_clear(jsonl *j, commit_state *c)
{
    for (size_t i = 0; i < c->n; i++) {
        host->free(j->ctx, c->objects[i]);
    }
    host->free(j->ctx, c->objects);
    host->free(j->ctx, c->ref);
    memset(c, 0, sizeof *c);
}

static int commit_add_object(jsonl *j, commit_state *c, const char *key)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        char **grown = host->realloc(j->ctx, c->objects, cap * sizeof *grown);
        if (grown == NULL) {
            return -ENOMEM;
        }
        c->objects = grown;
        c->cap = cap;
    }
    if ((c->objects[c->n] = dup_str(j, key)) == NULL) {
        return -ENOMEM;
    }
    c->n++;
    return 0;
}

static int nomem(jsonl *j)
{
    host->set_error(j->ctx, "out of memory");
    return -ENOMEM;
}

static int put(loams_buf *b, const char *s, size_t n)
{
    return host->buf_append(b, s, n);
}

static int puts_buf(loams_buf *b, const char *s)
{
    return put(b, s, strlen(s));
}

/* A key no attempt wrote before: "<ns>/<name>/<dir>/<seq>-<epoch>-<random><suffix>". */
static int new_key(jsonl *j, const char *dir, uint64_t seq, const char *suffix, char *out)
{
    uint64_t rnd;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        host->set_error(j->ctx, "getrandom failed: %s", strerror(errno));
        return -EIO;
    }
    int n = snprintf(out, KEY_MAX, "%s/%s/%s/%020" PRIu64 "-%016" PRIx64 "-%016" PRIx64 "%s", j->ns,
                     j->name, dir, seq, j->epoch, rnd, suffix);
    return n > 0 && n < KEY_MAX ? 0 : -ENAMETOOLONG;
}

/* ---- JSON of one cell ---- */

static int json_string(loams_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    int rc = put(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            continue;
        }
        rc = put(b, s + run, i - run);
        char esc[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
        if (rc == 0) {
            rc = c == '"' ? put(b, "\\\"", 2) : c == '\\' ? put(b, "\\\\", 2) : put(b, esc, 6);
        }
        run = i + 1;
    }
    if (rc == 0) {
        rc = put(b, s + run, n - run);
    }
    return rc == 0 ? put(b, "\"", 1) : rc;
}

static int json_number(loams_buf *b, double f, int digits)
{
    char num[40];
    if (!isfinite(f)) {
        return put(b, "null", 4);
    }
    snprintf(num, sizeof num, "%.*g", digits, f);
    return puts_buf(b, num);
}

static int json_value(loams_buf *b, const loams_value *v)
{
    char num[32];
    switch (v->type) {
    case LOAMS_T_BOOL: return puts_buf(b, v->u.b ? "true" : "false");
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP: snprintf(num, sizeof num, "%" PRId64, v->u.i); return puts_buf(b, num);
    case LOAMS_T_FLOAT64: return json_number(b, v->u.f, 17);
    case LOAMS_T_STRING: return json_string(b, v->u.s.ptr, v->u.s.len);
    case LOAMS_T_JSON: return put(b, v->u.s.ptr, v->u.s.len); /* valid JSON: host.h */
    case LOAMS_T_BYTES: {
        /* bytes as a hex string */
        static const char hex[] = "0123456789abcdef";
        int rc = put(b, "\"", 1);
        for (size_t i = 0; i < v->u.s.len && rc == 0; i++) {
            unsigned char c = (unsigned char)v->u.s.ptr[i];
            char h[2] = {hex[c >> 4], hex[c & 15]};
            rc = put(b, h, 2);
        }
        return rc == 0 ? put(b, "\"", 1) : rc;
    }
    case LOAMS_T_VECTOR: {
        int rc = put(b, "[", 1);
        for (size_t i = 0; i < v->u.vec.n && rc == 0; i++) {
            rc = i > 0 ? put(b, ",", 1) : 0;
            if (rc == 0) {
                rc = json_number(b, v->u.vec.ptr[i], 9);
            }
        }
        return rc == 0 ? put(b, "]", 1) : rc;
    }
    case LOAMS_T_LIST: {
        int rc = put(b, "[", 1);
        for (size_t i = 0; i < v->u.list.n && rc == 0; i++) {
            rc = i > 0 ? put(b, ",", 1) : 0;
            if (rc == 0) {
                rc = json_value(b, &v->u.list.items[i]);
            }
        }
        return rc == 0 ? put(b, "]", 1) : rc;
    }
    default: return put(b, "null", 4);
    }
}

/* ---- the vtable ---- */

static void jl_close(void *state);

static int jl_open(loams_ctx *ctx, const loams_target_spec *spec, loams_store *store, void **state)
{
    const char *pf = host->option(ctx, "partition_field");
    const char *of = host->option(ctx, "offset_field");
    if (strlen(spec->ns) > FIELD_MAX || strlen(spec->name) > FIELD_MAX || strlen(pf) > FIELD_MAX ||
        strlen(of) > FIELD_MAX || pf[0] == '\0' || of[0] == '\0' || strcmp(pf, of) == 0) {
        host->set_error(ctx,
                        "partition_field and offset_field must be two different names of "
                        "1 to %d bytes",
                        FIELD_MAX);
        return -EINVAL;
    }
    jsonl *j = host->calloc(ctx, 1, sizeof *j);
    if (j == NULL) {
        host->set_error(ctx, "out of memory");
        return -ENOMEM;
    }
    j->ctx = ctx;
    j->store = store;
    j->epoch = spec->epoch;
    snprintf(j->ns, sizeof j->ns, "%s", spec->ns);
    snprintf(j->name, sizeof j->name, "%s", spec->name);
    snprintf(j->pfield, sizeof j->pfield, "%s", pf);
    snprintf(j->ofield, sizeof j->ofield, "%s", of);
    if (host->buf_create(&j->stage) != 0 || host->buf_create(&j->io) != 0) {
        jl_close(j);
        host->set_error(ctx, "out of memory");
        return -ENOMEM;
    }
    *state = j;
    return 0;
}

static void forget_staged(jsonl *j)
{
    host->buf_reset(j->stage);
    j->staged_rows = 0;
    commit_clear(j, &j->pending);
}

/* Parses manifest text[0..len) into *c and applied.  LOAMS_ECORRUPT. */
static int parse_manifest(jsonl *j, const char *ref, const char *text, size_t len, commit_state *c,
                          loams_offsets *applied)
{
    const char *p = text, *end = text + len;
    int line_no = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
        char line[KEY_MAX + 16];
        line_no++;
        if (n >= sizeof line) {
            goto corrupt;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + (nl != NULL);
        long long part, next;
        char key[KEY_MAX];
        unsigned long long u;
        if (line_no == 1) {
            if (strcmp(line, "loams-jsonl 1") != 0) {
                goto corrupt;
            }
        } else if (sscanf(line, "seq %llu", &u) == 1) {
            c->seq = u;
        } else if (strncmp(line, "epoch ", 6) == 0 || strncmp(line, "parent ", 7) == 0) {
            continue;
        } else if (sscanf(line, "applied %lld %lld", &part, &next) == 2) {
            if (part < 0 || part > INT32_MAX || next < 0 ||
                host->offsets_set(applied, (int32_t)part, next) != 0) {
                goto corrupt;
            }
        } else if (sscanf(line, "object %511s", key) == 1) {
            if (commit_add_object(j, c, key) != 0) {
                return nomem(j);
            }
        } else if (line[0] != '\0') {
            goto corrupt;
        }
    }
    if (line_no == 0) {
        goto corrupt;
    }
    return 0;
corrupt:
    host->set_error(j->ctx, "manifest %s: line %d is not what target-jsonl writes", ref, line_no);
    return LOAMS_ECORRUPT;
}

static int jl_resume(void *state, const char *ref, loams_offsets *applied)
{
    jsonl *j = state;
    forget_staged(j);
    commit_clear(j, &j->base);
    if (ref == NULL) {
        return 0; /* no commit yet: nothing applied */
    }
    host->buf_reset(j->io);
    int rc = host->store_get(j->store, ref, 0, 0, j->io);
    if (rc != 0) {
        host->set_error(j->ctx, "cannot read manifest %s (status %d)", ref, rc);
        return rc;
    }
    size_t len;
    const char *text = host->buf_data(j->io, &len);
    rc = parse_manifest(j, ref, text, len, &j->base, applied);
    if (rc == 0 && (j->base.ref = dup_str(j, ref)) == NULL) {
        rc = nomem(j);
    }
    if (rc != 0) {
        commit_clear(j, &j->base);
    }
    return rc;
}

static int jl_write(void *state, loams_batch *batch)
{
    jsonl *j = state;
    size_t rows = host->batch_rows(batch), cols = host->batch_columns(batch);
    for (size_t r = 0; r < rows; r++) {
        if (host->batch_row_failed(batch, r)) {
            continue;
        }
        int32_t part;
        int64_t off;
        if (host->batch_row_origin(batch, r, &part, &off) != 0) {
            return -EINVAL;
        }
        const char *clash = NULL;
        for (size_t c = 0; c < cols && clash == NULL; c++) {
            const char *name = host->batch_column_name(batch, c);
            if (strcmp(name, j->pfield) == 0 || strcmp(name, j->ofield) == 0) {
                clash = name;
            }
        }
        if (clash != NULL) {
            host->batch_row_fail(batch, r, LOAMS_EINPUT,
                                 "column '%s' is the name of the row's origin field; rename it "
                                 "or set partition_field / offset_field",
                                 clash);
            continue;
        }
        char head[2 * FIELD_MAX + 64];
        snprintf(head, sizeof head, "{\"%s\":%" PRId32 ",\"%s\":%" PRId64, j->pfield, part,
                 j->ofield, off);
        int rc = puts_buf(j->stage, head);
        for (size_t c = 0; c < cols && rc == 0; c++) {
            loams_value v;
            if ((rc = host->batch_get(batch, r, c, &v)) != 0) {
                break;
            }
            if (v.type == LOAMS_T_NULL) {
                continue;
            }
            const char *name = host->batch_column_name(batch, c);
            if ((rc = put(j->stage, ",", 1)) == 0 &&
                (rc = json_string(j->stage, name, strlen(name))) == 0 &&
                (rc = put(j->stage, ":", 1)) == 0) {
                rc = json_value(j->stage, &v);
            }
        }
        if (rc == 0) {
            rc = put(j->stage, "}\n", 2);
        }
        if (rc != 0) {
            host->set_error(j->ctx, "staging a row failed (status %d)", rc);
            return rc;
        }
        j->staged_rows++;
    }
    return 0;
}

static int jl_prepare(void *state, const loams_offsets *applied, const char **ref,
                      loams_keylist *written)
{
    jsonl *j = state;
    commit_clear(j, &j->pending);
    commit_state *c = &j->pending;
    c->seq = j->base.seq + 1;
    char key[KEY_MAX];
    int rc = 0;
    for (size_t i = 0; i < j->base.n && rc == 0; i++) {
        rc = commit_add_object(j, c, j->base.objects[i]);
    }
    if (rc != 0) {
        return nomem(j);
    }
    if (j->staged_rows > 0) {
        size_t len;
        const void *data = host->buf_data(j->stage, &len);
        if ((rc = new_key(j, "data", c->seq, ".jsonl", key)) != 0 ||
            (rc = host->keylist_add(written, key)) != 0 ||
            (rc = host->store_put(j->store, key, data, len)) != 0) {
            host->set_error(j->ctx, "writing %s failed (status %d)", key, rc);
            return rc;
        }
        if (commit_add_object(j, c, key) != 0) {
            return nomem(j);
        }
    }
    char line[KEY_MAX + 32];
    host->buf_reset(j->io);
    snprintf(line, sizeof line, "loams-jsonl 1\nseq %" PRIu64 "\nepoch %" PRIu64 "\nparent %s\n",
             c->seq, j->epoch, j->base.ref != NULL ? j->base.ref : "-");
    rc = puts_buf(j->io, line);
    for (size_t i = 0; i < host->offsets_count(applied) && rc == 0; i++) {
        int32_t part;
        int64_t next;
        if ((rc = host->offsets_at(applied, i, &part, &next)) == 0) {
            snprintf(line, sizeof line, "applied %" PRId32 " %" PRId64 "\n", part, next);
            rc = puts_buf(j->io, line);
        }
    }
    for (size_t i = 0; i < c->n && rc == 0; i++) {
        snprintf(line, sizeof line, "object %s\n", c->objects[i]);
        rc = puts_buf(j->io, line);
    }
    if (rc != 0) {
        return nomem(j);
    }
    size_t len;
    const void *text = host->buf_data(j->io, &len);
    if ((rc = new_key(j, "manifest", c->seq, ".txt", key)) != 0 ||
        (rc = host->keylist_add(written, key)) != 0 ||
        (rc = host->store_put(j->store, key, text, len)) != 0) {
        host->set_error(j->ctx, "writing manifest %s failed (status %d)", key, rc);
        return rc;
    }
    if ((c->ref = dup_str(j, key)) == NULL) {
        return nomem(j);
    }
    *ref = c->ref;
    return 0;
}

static void jl_committed(void *state, const char *ref)
{
    jsonl *j = state;
    if (j->pending.ref == NULL || strcmp(ref, j->pending.ref) != 0) {
        host->log(j->ctx, LOAMS_LOG_WARN, "committed(%s) is not the prepared commit", ref);
        return;
    }
    commit_clear(j, &j->base);
    j->base = j->pending;
    memset(&j->pending, 0, sizeof j->pending);
    host->buf_reset(j->stage);
    j->staged_rows = 0;
}

static void jl_abort(void *state)
{
    forget_staged(state);
}

static void jl_close(void *state)
{
    jsonl *j = state;
    if (j == NULL) {
        return;
    }
    commit_clear(j, &j->base);
    commit_clear(j, &j->pending);
    host->buf_free(j->stage);
    host->buf_free(j->io);
    host->free(j->ctx, j);
}

static const loams_target_vtable jl_vtable = {
    .size = sizeof jl_vtable,
    .open = jl_open,
    .resume = jl_resume,
    .write = jl_write,
    .prepare = jl_prepare,
    .committed = jl_committed,
    .abort = jl_abort,
    .query = NULL,
    .maintain = NULL,
    .close = jl_close,
};

static const loams_option_spec jl_options[] = {
    {"partition_field", LOAMS_OPT_STRING, 0, "_partition", NULL,
     "name of the field that holds a row's source partition"},
    {"offset_field", LOAMS_OPT_STRING, 0, "_offset", NULL,
     "name of the field that holds a row's source offset"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor jl_descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_TARGET,
    "target-jsonl",
    "1.0.0",
    "Writes each commit's rows as one object of JSON lines (test plugin)",
    &jl_vtable,
    jl_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &jl_descriptor;
}
