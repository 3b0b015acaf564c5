/*
 * transform_lua.c - the transform-lua plugin: TRANSFORM LUA 'name' and
 * TRANSFORM LUA $$ ... $$ (docs/TRANSFORM-LUA.md).
 *
 * compile(ctx, program): `program` is the DDL's transform text unchanged.
 * A text that is a script name - 1 to 64 characters from [A-Za-z0-9._-],
 * starting with a letter or digit, optionally ending in ".lua" (the rule the
 * registry uses for script files) - names a script file, NAME.lua, looked
 * up in this order:
 *
 *   1. the directories of the option script_path (colon-separated; for the
 *      host to pass its --plugin-dir directories, in order),
 *   2. the directories of the environment variable LOAMS_PLUGIN_PATH,
 *   3. the installed plugin directory (LOAMS_PLUGIN_DIR),
 *   4. the installed Lua directory (LOAMS_LUA_DIR) and its examples/.
 *
 * The first file found is used; like the registry, it must pass the check
 * of plugin paths (loams/kit/trusted_path.h: owned by root or the running
 * user, and so every directory above it, none writable by group or others).
 * Any other text is the code of an inline script.
 *
 * Per running task one state (one lua_State, lua_sandbox.c) runs every
 * record; run() calls the script once per input row that is not failed,
 * each call protected: a failing record is marked with batch_row_fail (its
 * message says what went wrong, the host adds partition and offset) and the
 * batch goes on.  After a memory failure the state is collected; if it
 * still holds more than three quarters of its cap (the script keeps data
 * in globals), it is rebuilt from the script - the one case where a
 * script's globals start over.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loams/kit/trusted_path.h"
#include "loams/kit/units.h"
#include "transform_lua.h"

const loams_host_api *loams__lua_host;

#ifndef LOAMS_PLUGIN_DIR
#define LOAMS_PLUGIN_DIR ""
#endif
#ifndef LOAMS_LUA_DIR
#define LOAMS_LUA_DIR ""
#endif

/* ---- small shared helpers ---- */

int loams__lua_grow(loams__lua_state *st, void **array, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) {
        return 0;
    }
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        ncap *= 2;
    }
    if (ncap > SIZE_MAX / size) {
        return -ENOMEM;
    }
    void *p = loams__lua_host->realloc(st->ctx, *array, ncap * size);
    if (p == NULL) {
        return -ENOMEM;
    }
    *array = p;
    *cap = ncap;
    return 0;
}

int loams__lua_cbuf_reserve(loams__lua_state *st, loams__lua_cbuf *buf, size_t more)
{
    if (more > buf->limit || buf->len > buf->limit - more) {
        return -E2BIG;
    }
    size_t cap = buf->cap;
    return loams__lua_grow(st, (void **)&buf->data, &cap, buf->len + more, 1) == 0
               ? (buf->cap = cap, 0)
               : -ENOMEM;
}

int loams__lua_cbuf_append(loams__lua_state *st, loams__lua_cbuf *buf, const void *p, size_t n)
{
    if (n == 0) {
        return 0;
    }
    if (buf->cap - buf->len < n) {
        int rc = loams__lua_cbuf_reserve(st, buf, n);
        if (rc != 0) {
            return rc;
        }
    }
    memcpy(buf->data + buf->len, p, n);
    buf->len += n;
    return 0;
}

void loams__lua_cbuf_free(loams__lua_state *st, loams__lua_cbuf *buf)
{
    loams__lua_host->free(st->ctx, buf->data);
    memset(buf, 0, sizeof *buf);
}

/* ---- options (the host validated their text against the table) ---- */

static const loams_option_spec lua_options[] = {
    {"script_path", LOAMS_OPT_STRING, 0, NULL, NULL,
     "colon-separated directories searched first for TRANSFORM LUA 'name' (NAME.lua)"},
    {"lua_instruction_limit", LOAMS_OPT_INT, 0, LOAMS__LUA_DEFAULT_INSTRUCTIONS, NULL,
     "Lua instructions one record may run (0 = no limit)"},
    {"lua_memory_limit", LOAMS_OPT_SIZE, 0, LOAMS__LUA_DEFAULT_MEMORY, NULL,
     "memory one Lua state may hold (at least 1MiB)"},
    {"lua_time_limit", LOAMS_OPT_DURATION, 0, LOAMS__LUA_DEFAULT_TIME, NULL,
     "CPU time one record may use ('0' = no limit)"},
    {"lua_debug", LOAMS_OPT_ENUM, 0, "none", "none|traceback",
     "'traceback' gives scripts debug.traceback (nothing else of the debug library)"},
    {NULL, 0, 0, NULL, NULL, NULL}};

static int read_options(loams__lua_state *st)
{
    const loams_host_api *h = loams__lua_host;
    const char *v = h->option(st->ctx, "lua_instruction_limit");
    char *end;
    long long n = strtoll(v != NULL ? v : LOAMS__LUA_DEFAULT_INSTRUCTIONS, &end, 10);
    if (*end != '\0' || n < 0) {
        h->set_error(st->ctx,
                     "transform-lua: option lua_instruction_limit = '%s' must be a "
                     "whole number of instructions, 0 for no limit",
                     v);
        return LOAMS_EINPUT;
    }
    st->instruction_limit = n;

    uint64_t bytes;
    v = h->option(st->ctx, "lua_memory_limit");
    if (loams_kit_size_parse(v != NULL ? v : LOAMS__LUA_DEFAULT_MEMORY, &bytes, NULL, 0) != 0 ||
        bytes < LOAMS__LUA_MIN_MEMORY || bytes > SIZE_MAX / 2) {
        h->set_error(st->ctx,
                     "transform-lua: option lua_memory_limit = '%s' must be a size of "
                     "at least 1MiB (e.g. '64MiB')",
                     v);
        return LOAMS_EINPUT;
    }
    st->memory_limit = (size_t)bytes;

    v = h->option(st->ctx, "lua_time_limit");
    if (loams_kit_duration_parse(v != NULL ? v : LOAMS__LUA_DEFAULT_TIME, &st->time_limit_us, NULL,
                                 0) != 0) {
        h->set_error(st->ctx,
                     "transform-lua: option lua_time_limit = '%s' must be a duration "
                     "such as '1s' or '250ms', or '0' for no limit",
                     v);
        return LOAMS_EINPUT;
    }
    v = h->option(st->ctx, "lua_debug");
    st->debug_traceback = v != NULL && strcmp(v, "traceback") == 0;
    return 0;
}

/* ---- finding a named script ---- */

static size_t script_name_len(const char *p)
{
    size_t n = strlen(p);
    if (n > 4 && strcmp(p + n - 4, ".lua") == 0) {
        n -= 4;
    }
    if (n == 0 || n > 64) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '-' && c != '_' && c != '.'))) {
            return 0;
        }
    }
    return n;
}

/* Appends the directories of a colon-separated list to dirs (a buffer of
 * NUL-separated entries). */
static int add_dirs(loams__lua_state *st, loams__lua_cbuf *dirs, const char *list)
{
    while (list != NULL && *list != '\0') {
        const char *colon = strchr(list, ':');
        size_t n = colon != NULL ? (size_t)(colon - list) : strlen(list);
        if (n > 0) {
            int rc = loams__lua_cbuf_append(st, dirs, list, n);
            if (rc == 0) {
                rc = loams__lua_cbuf_append(st, dirs, "", 1);
            }
            if (rc != 0) {
                return -ENOMEM;
            }
        }
        list = colon != NULL ? colon + 1 : NULL;
    }
    return 0;
}

/* Reads the script file at path into st->code, after the check the
 * registry makes of plugin files (loams/kit/trusted_path.h): the file is
 * read through its resolved path.  Errors (message set): LOAMS_EINPUT,
 * -ENOMEM. */
static int read_script(loams__lua_state *st, const char *path, const struct stat *sb)
{
    const loams_host_api *h = loams__lua_host;
    char real[PATH_MAX];
    loams__trust_verdict v;
    if (!S_ISREG(sb->st_mode)) {
        h->set_error(st->ctx, "Lua script %s is not a regular file", path);
        return LOAMS_EINPUT;
    }
    if (loams__trust_plugin_file(path, geteuid(), real, sizeof real, &v) != 0) {
        h->set_error(st->ctx, "Lua script %s is refused: %s. %s", path, v.what, v.detail);
        return LOAMS_EINPUT;
    }
    if (sb->st_size > (off_t)LOAMS__LUA_MAX_SCRIPT) {
        h->set_error(st->ctx, "Lua script %s is larger than %u bytes", path, LOAMS__LUA_MAX_SCRIPT);
        return LOAMS_EINPUT;
    }
    int fd = open(real, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        h->set_error(st->ctx, "cannot read Lua script %s: %s", path, strerror(errno));
        return LOAMS_EINPUT;
    }
    size_t cap = (size_t)sb->st_size + 1, len = 0;
    st->code = h->malloc(st->ctx, cap);
    if (st->code == NULL) {
        close(fd);
        h->set_error(st->ctx, "out of memory reading Lua script %s", path);
        return -ENOMEM;
    }
    for (;;) {
        ssize_t r = read(fd, st->code + len, cap - len);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            int e = errno;
            close(fd);
            h->set_error(st->ctx, "cannot read Lua script %s: %s", path, strerror(e));
            return LOAMS_EINPUT;
        }
        if (r == 0) {
            break;
        }
        len += (size_t)r;
        if (len == cap) {
            close(fd);
            h->set_error(st->ctx, "Lua script %s changed while it was read", path);
            return LOAMS_EINPUT;
        }
    }
    close(fd);
    st->code_len = len;
    return 0;
}

/* Finds NAME.lua (search order in the file comment) and reads it. */
static int find_script(loams__lua_state *st, const char *program, size_t name_len)
{
    const loams_host_api *h = loams__lua_host;
    loams__lua_cbuf dirs = {NULL, 0, 0, SIZE_MAX};
    char path[PATH_MAX];
    int rc = add_dirs(st, &dirs, h->option(st->ctx, "script_path"));
    if (rc == 0) {
        rc = add_dirs(st, &dirs, getenv("LOAMS_PLUGIN_PATH"));
    }
    if (rc == 0) {
        rc = add_dirs(st, &dirs, LOAMS_PLUGIN_DIR);
    }
    if (rc == 0) {
        rc = add_dirs(st, &dirs, LOAMS_LUA_DIR);
    }
    if (rc == 0 && LOAMS_LUA_DIR[0] != '\0') {
        rc = add_dirs(st, &dirs, LOAMS_LUA_DIR "/examples");
    }
    if (rc != 0) {
        h->set_error(st->ctx, "out of memory");
        goto out;
    }
    snprintf(st->chunkname, sizeof st->chunkname, "@%.*s.lua", (int)name_len, program);
    for (size_t off = 0; off < dirs.len; off += strlen(dirs.data + off) + 1) {
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dirs.data + off, st->chunkname + 1);
        if (stat(path, &sb) != 0) {
            continue;
        }
        size_t plen = strlen(path);
        st->origin = h->malloc(st->ctx, plen + 1);
        if (st->origin == NULL) {
            rc = -ENOMEM;
            h->set_error(st->ctx, "out of memory");
            goto out;
        }
        memcpy(st->origin, path, plen + 1);
        rc = read_script(st, path, &sb);
        goto out;
    }
    /* not found: say where it was looked for */
    {
        char where[1024];
        size_t w = 0;
        where[0] = '\0';
        for (size_t off = 0; off < dirs.len && w < sizeof where - 1;
             off += strlen(dirs.data + off) + 1) {
            int n = snprintf(where + w, sizeof where - w, "%s%s", w ? ", " : "", dirs.data + off);
            if (n < 0) {
                break;
            }
            w += (size_t)n < sizeof where - w ? (size_t)n : sizeof where - w - 1;
        }
        h->set_error(st->ctx,
                     "no Lua script named '%.*s': %s was not found in %s; put it in a "
                     "plugin directory (--plugin-dir, LOAMS_PLUGIN_PATH), or write the "
                     "code inline with TRANSFORM LUA $$ ... $$",
                     (int)name_len, program, st->chunkname + 1,
                     w ? where : "(no directory: set LOAMS_PLUGIN_PATH)");
        rc = LOAMS_EINPUT;
    }
out:
    loams__lua_cbuf_free(st, &dirs);
    return rc;
}

/* ---- the vtable ---- */

static void lua_close_state(void *state);

static int lua_compile(loams_ctx *ctx, const char *program, void **state)
{
    const loams_host_api *h = loams__lua_host;
    loams__lua_state *st = h->calloc(ctx, 1, sizeof *st);
    int rc;
    if (st == NULL) {
        h->set_error(ctx, "out of memory");
        return -ENOMEM;
    }
    st->ctx = ctx;
    st->ref_transform = st->ref_rec = st->ref_rec_mt = LUA_NOREF;
    st->ref_inkeys = st->ref_slots = LUA_NOREF;
    loams_kit_host_mem_init(&st->json_mem, h, ctx);
    st->jsonbuf.limit = st->unesc.limit = SIZE_MAX;
    st->text.limit = st->items.limit = st->floats.limit = SIZE_MAX;

    rc = read_options(st);
    if (rc != 0) {
        goto fail;
    }
    st->jsonbuf.limit = st->memory_limit;
    if (loams_kit_json_doc_new(&st->json_mem.mem, &st->doc) != 0 ||
        loams_kit_json_doc_new(&st->json_mem.mem, &st->ddoc) != 0) {
        h->set_error(ctx, "out of memory");
        rc = -ENOMEM;
        goto fail;
    }

    size_t name_len = strchr(program, '\n') == NULL ? script_name_len(program) : 0;
    if (name_len > 0) {
        st->is_inline = 0;
        rc = find_script(st, program, name_len);
        if (rc != 0) {
            goto fail;
        }
    } else {
        st->is_inline = 1;
        st->code_len = strlen(program);
        st->code = h->malloc(ctx, st->code_len + 1);
        st->origin = h->malloc(ctx, sizeof "inline");
        if (st->code == NULL || st->origin == NULL) {
            h->set_error(ctx, "out of memory");
            rc = -ENOMEM;
            goto fail;
        }
        memcpy(st->code, program, st->code_len + 1);
        memcpy(st->origin, "inline", sizeof "inline");
        snprintf(st->chunkname, sizeof st->chunkname, "=inline");
    }
    rc = loams__lua_state_open(st, 0);
    if (rc != 0) {
        goto fail;
    }
    *state = st;
    return 0;
fail:
    lua_close_state(st);
    return rc;
}

static int lua_columns(void *state, const char *const **names, size_t *count)
{
    loams__lua_state *st = state;
    if (loams__lua_grow(st, (void **)&st->names, &st->cap_names, st->nslots + 1,
                        sizeof(*st->names)) != 0) {
        loams__lua_host->set_error(st->ctx, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < st->nslots; i++) {
        st->names[i] = st->slots[i].name;
    }
    *names = st->names;
    *count = st->nslots;
    return 0;
}

/* After a memory failure: collect; rebuild when the state stays full. */
static int recover_memory(loams__lua_state *st)
{
    const loams_host_api *h = loams__lua_host;
    loams__lua_budget_start(st);
    lua_gc(st->L, LUA_GCCOLLECT);
    st->mem_refused = 0;
    if (st->mem_used <= st->memory_limit / 4 * 3) {
        return 0;
    }
    h->log(st->ctx, LOAMS_LOG_WARN,
           "the Lua state still holds %zu of its %zu bytes after a full collection (the script "
           "keeps data in globals?): rebuilding it from the script",
           st->mem_used, st->memory_limit);
    loams__lua_state_close(st);
    int rc = loams__lua_state_open(st, 1);
    if (rc != 0) {
        h->set_error(st->ctx,
                     "the Lua state had to be rebuilt after a memory failure, and the "
                     "rebuild failed: %s",
                     st->errbuf);
    }
    return rc;
}

/* The protected call over the rows of a run, from st->row to the end of
 * the batch: one protected call for every row that does not fail (a call
 * per row costs about as much as a small script).  Returns normally when
 * the batch is done, or with st->rows_rc set (and the context's error)
 * when a host call failed or the run was cancelled; raises when a record
 * fails, with st->row the failed row. */
static int run_rows(lua_State *L)
{
    loams__lua_state *st = loams__lua_from(L);
    const loams_host_api *h = loams__lua_host;
    for (; st->row < st->rows; st->row++) {
        size_t row = st->row;
        if (h->batch_row_failed(st->in, row)) {
            continue;
        }
        st->mem_refused = 0;
        loams__lua_budget_start(st);
        loams__lua_record_run(L, st);
        int rc = loams__lua_emit(st);
        if (rc == LOAMS_ESCHEMA) {
            rc = h->batch_row_fail(st->in, row, LOAMS_ESCHEMA, "Lua transform: %s", st->errbuf);
        }
        if (rc != 0) {
            if (st->fatal != 0) {
                h->set_error(st->ctx, "cannot write the output rows of input row %zu", row);
            } else {
                h->set_error(st->ctx, "cannot mark input row %zu failed", row);
            }
            st->rows_rc = rc;
            return 0;
        }
        if ((row & 1023) == 1023 && h->cancelled(st->ctx)) {
            h->set_error(st->ctx, "the transform was cancelled");
            st->rows_rc = LOAMS_ECANCELLED;
            return 0;
        }
    }
    return 0;
}

static int lua_run(void *state, loams_batch *in, loams_batch *out)
{
    loams__lua_state *st = state;
    const loams_host_api *h = loams__lua_host;
    int rc = 0, status;

    if (st->L == NULL) {
        h->set_error(st->ctx, "the Lua state is gone (an earlier rebuild failed); restart the "
                              "link");
        return LOAMS_EINPUT;
    }
    lua_State *L = st->L;
    st->in = in;
    st->out = out;
    st->fatal = 0;
    lua_settop(L, 0);
    loams__lua_budget_start(st);
    lua_pushcfunction(L, loams__lua_run_begin);
    status = lua_pcall(L, 0, 0, 0);
    if (status != LUA_OK || st->fatal != 0) {
        rc = st->fatal != 0 ? st->fatal : (status == LUA_ERRMEM ? -ENOMEM : LOAMS_EINPUT);
        h->set_error(st->ctx, "cannot start the batch: %s",
                     status != LUA_OK ? loams__lua_error_message(st, status)
                                      : "the output batch refused a column");
        goto out;
    }
    st->rows = h->batch_rows(in);
    st->row = 0;
    while (st->row < st->rows) {
        st->rows_rc = 0;
        lua_pushcfunction(L, run_rows);
        status = lua_pcall(L, 0, 0, 0);
        if (status == LUA_OK) {
            rc = st->rows_rc; /* the message is set */
            goto out;
        }
        /* input row st->row failed */
        size_t row = st->row;
        if (st->stop == LOAMS__LUA_STOP_CANCELLED) {
            lua_settop(L, 0);
            rc = LOAMS_ECANCELLED;
            h->set_error(st->ctx, "the transform was cancelled");
            goto out;
        }
        int code =
            st->stop != LOAMS__LUA_RUNNING || status == LUA_ERRMEM ? LOAMS_ELIMIT : LOAMS_EINPUT;
        int memory = status == LUA_ERRMEM || st->mem_refused;
        const char *msg = loams__lua_error_message(st, status);
        lua_settop(L, 0);
        rc = h->batch_row_fail(in, row, code, "Lua transform: %s", msg);
        if (rc != 0) {
            h->set_error(st->ctx, "cannot mark input row %zu failed", row);
            goto out;
        }
        if (memory) {
            rc = recover_memory(st);
            if (rc != 0) {
                goto out;
            }
            L = st->L;
            lua_pushcfunction(L, loams__lua_run_begin);
            status = lua_pcall(L, 0, 0, 0);
            if (status != LUA_OK || st->fatal != 0) {
                rc = st->fatal != 0 ? st->fatal : -ENOMEM;
                h->set_error(st->ctx, "cannot go on with the batch after a memory failure");
                goto out;
            }
        }
        if ((row & 1023) == 1023 && h->cancelled(st->ctx)) {
            rc = LOAMS_ECANCELLED;
            h->set_error(st->ctx, "the transform was cancelled");
            goto out;
        }
        st->row = row + 1;
    }
    rc = 0;
out:
    if (st->L != NULL) {
        lua_settop(st->L, 0);
    }
    st->in = NULL;
    st->out = NULL;
    return rc;
}

static void lua_close_state(void *state)
{
    loams__lua_state *st = state;
    const loams_host_api *h = loams__lua_host;
    if (st == NULL) {
        return;
    }
    loams__lua_state_close(st);
    for (size_t i = 0; i < st->nslots; i++) {
        h->free(st->ctx, st->slots[i].name);
    }
    h->free(st->ctx, st->pending_name);
    h->free(st->ctx, st->slots);
    h->free(st->ctx, st->names);
    h->free(st->ctx, st->out_cols);
    h->free(st->ctx, st->tseen);
    h->free(st->ctx, st->cells);
    h->free(st->ctx, st->row_starts);
    h->free(st->ctx, st->jkeys);
    loams__lua_cbuf_free(st, &st->text);
    loams__lua_cbuf_free(st, &st->items);
    loams__lua_cbuf_free(st, &st->floats);
    loams__lua_cbuf_free(st, &st->jsonbuf);
    loams__lua_cbuf_free(st, &st->unesc);
    loams_kit_json_doc_free(st->doc);
    loams_kit_json_doc_free(st->ddoc);
    h->free(st->ctx, st->code);
    h->free(st->ctx, st->origin);
    h->free(st->ctx, st);
}

/* ---- the plugin ---- */

static const loams_transform_vtable transform_vtable = {
    .size = sizeof(loams_transform_vtable),
    .compile = lua_compile,
    .columns = lua_columns,
    .run = lua_run,
    .close = lua_close_state,
};

static const loams_plugin_descriptor descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    .kind = LOAMS_KIND_TRANSFORM,
    .name = "transform-lua",
    .version = "0.1.0",
    .description = "Lua transforms: function transform(rec) per record, in a sandboxed Lua 5.4 "
                   "state bounded in instructions, memory and time",
    .vtable = &transform_vtable,
    .options = lua_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *host)
{
    if (host == NULL || host->abi_major != LOAMS_ABI_MAJOR || !LOAMS_HOST_HAS(host, cancelled)) {
        return NULL;
    }
    loams__lua_host = host;
    return &descriptor;
}
