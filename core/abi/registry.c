/*
 * registry.c - owns the plugin path scan, the checks every plugin file goes
 * through before and after loading, the libltdl handles of loaded plugins,
 * and the wording of rejections (see registry.h).
 */
#include "config.h"

#include "abi/registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ltdl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/host_api.h"
#include "base/log.h"
#include "abi/udf.h"
#include "loams/kit/trusted_path.h"

#ifndef LOAMS_PLUGIN_DIR
#error "LOAMS_PLUGIN_DIR must be defined by the build (Makefile.am)"
#endif

/* libltdl keeps global state without locks: every lt_* call and the dlopen
 * probe run under this lock. */
static pthread_mutex_t ltdl_lock = PTHREAD_MUTEX_INITIALIZER;

/* Longest plugin name, and the most option entries we read before deciding
 * that an option table has no NULL terminator. */
#define NAME_MAX_LEN 64
#define OPTIONS_MAX 256
/* Highest ABI major we look for when the host's entry symbol is missing. */
#define PROBE_MAJOR_MAX 32
/* Bytes of a Lua script read to find its header comment. */
#define LUA_HEADER_MAX 8192

#define TEXT_LEN 1024

/* The size of each table as ABI 1.0 defines it: the offset just past its
 * last 1.0 member.  Later minors grow the tables; a plugin's table must be
 * at least this large. */
#define END_OF(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))
#define DESCRIPTOR_SIZE_1_0 END_OF(loams_plugin_descriptor, options)

/* One required vtable member. */
typedef struct vt_func {
    const char *name;
    size_t offset;
} vt_func;

/* What the host knows about each kind. */
typedef struct kind_info {
    loams_plugin_kind kind;
    const char *name;
    const char *vtable_type;
    size_t size_1_0;
    const char *required_text; /* "open, decode and close" */
    vt_func required[12];
} kind_info;

#define VF(type, m)                                                                                \
    {                                                                                              \
#m, offsetof(type, m)                                                                      \
    }

static const kind_info kinds[] = {
    {LOAMS_KIND_DECODER,
     "decoder",
     "loams_decoder_vtable",
     END_OF(loams_decoder_vtable, close),
     "open, decode and close",
     {VF(loams_decoder_vtable, open), VF(loams_decoder_vtable, decode),
      VF(loams_decoder_vtable, close)}},
    {LOAMS_KIND_TRANSFORM,
     "transform",
     "loams_transform_vtable",
     END_OF(loams_transform_vtable, close),
     "compile, columns, run and close",
     {VF(loams_transform_vtable, compile), VF(loams_transform_vtable, columns),
      VF(loams_transform_vtable, run), VF(loams_transform_vtable, close)}},
    {LOAMS_KIND_TARGET,
     "target",
     "loams_target_vtable",
     END_OF(loams_target_vtable, close),
     "open, resume, write, prepare, committed, abort and close (query and maintain may be NULL)",
     {VF(loams_target_vtable, open), VF(loams_target_vtable, resume),
      VF(loams_target_vtable, write), VF(loams_target_vtable, prepare),
      VF(loams_target_vtable, committed), VF(loams_target_vtable, abort),
      VF(loams_target_vtable, close)}},
    {LOAMS_KIND_EMBED,
     "embed",
     "loams_embed_vtable",
     END_OF(loams_embed_vtable, close),
     "open, max_inputs, embed and close",
     {VF(loams_embed_vtable, open), VF(loams_embed_vtable, max_inputs),
      VF(loams_embed_vtable, embed), VF(loams_embed_vtable, close)}},
    {LOAMS_KIND_STORE,
     "store",
     "loams_store_vtable",
     END_OF(loams_store_vtable, close),
     "open, put, get, head, list, del, writer_open, writer_write, writer_commit, "
     "writer_abort and close",
     {VF(loams_store_vtable, open), VF(loams_store_vtable, put), VF(loams_store_vtable, get),
      VF(loams_store_vtable, head), VF(loams_store_vtable, list), VF(loams_store_vtable, del),
      VF(loams_store_vtable, writer_open), VF(loams_store_vtable, writer_write),
      VF(loams_store_vtable, writer_commit), VF(loams_store_vtable, writer_abort),
      VF(loams_store_vtable, close)}},
    {LOAMS_KIND_SOURCE,
     "source",
     "loams_source_vtable",
     END_OF(loams_source_vtable, close),
     "open, partitions, marks, read and close (release and committed may be NULL)",
     {VF(loams_source_vtable, open), VF(loams_source_vtable, partitions),
      VF(loams_source_vtable, marks), VF(loams_source_vtable, read),
      VF(loams_source_vtable, close)}},
};

#define NKINDS (sizeof kinds / sizeof kinds[0])

static const kind_info *kind_lookup(uint32_t kind)
{
    for (size_t i = 0; i < NKINDS; i++) {
        if ((uint32_t)kinds[i].kind == kind) {
            return &kinds[i];
        }
    }
    return NULL;
}

/* A loaded plugin: the public record first, then what only we own. */
typedef struct plugin_rec {
    loams_plugin pub;
    lt_dlhandle handle; /* NULL for Lua scripts */
    char *path;
    char *name;        /* Lua scripts only (native names live in the .so) */
    char *version;     /* Lua scripts only */
    char *description; /* Lua scripts only */
} plugin_rec;

typedef struct rejection_rec {
    loams_plugin_rejection pub;
    char *path;
    char *message;
    char *detail;
} rejection_rec;

typedef struct dir_rec {
    char *path; /* absolute, resolved */
    dev_t dev;
    ino_t ino;
} dir_rec;

struct loams_registry {
    dir_rec *dirs;
    size_t ndirs;
    plugin_rec **plugins;
    size_t nplugins;
    rejection_rec **rejected;
    size_t nrejected;
    const loams_host_api *host;
    bool ltdl_ready;
};

const char *loams_plugin_kind_name(loams_plugin_kind kind)
{
    const kind_info *k = kind_lookup((uint32_t)kind);
    return k != NULL ? k->name : NULL;
}

const char *loams_plugin_runtime_name(loams_plugin_runtime runtime)
{
    return runtime == LOAMS_RUNTIME_LUA ? "lua" : "native";
}

const char *loams_option_type_name(loams_option_type type)
{
    switch (type) {
    case LOAMS_OPT_STRING: return "string";
    case LOAMS_OPT_INT: return "int";
    case LOAMS_OPT_BOOL: return "bool";
    case LOAMS_OPT_SIZE: return "size";
    case LOAMS_OPT_DURATION: return "duration";
    case LOAMS_OPT_ENUM: return "enum";
    }
    return NULL;
}

void loams_registry_config_defaults(loams_registry_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->path_env = getenv("LOAMS_PLUGIN_PATH");
    cfg->installed_dir = LOAMS_PLUGIN_DIR;
    cfg->host = NULL;
}

/* ---- small helpers ---- */

/* Arrays grow to 4, 8, 16, ... elements: *arrayp (holding n) needs room
 * exactly when n is 0 or a power of two >= 4.  Returns 0 or -ENOMEM. */
static int grow(void *arrayp, size_t n, size_t elem)
{
    void **array = arrayp;
    bool full = n == 0 || (n >= 4 && (n & (n - 1)) == 0);
    if (!full) {
        return 0;
    }
    size_t cap = n == 0 ? 4 : n * 2;
    void *p = realloc(*array, cap * elem);
    if (p == NULL) {
        return -ENOMEM;
    }
    *array = p;
    return 0;
}

static bool name_is_valid(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len > NAME_MAX_LEN) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '-' && c != '_' && c != '.'))) {
            return false;
        }
    }
    return true;
}

/* Copies at most 64 bytes of a name that failed the check, with anything
 * unprintable shown as '?', so that the message stays one line. */
static void printable_copy(char *dst, size_t dst_len, const char *src)
{
    size_t j = 0;
    for (size_t i = 0; src[i] != '\0' && j + 4 < dst_len; i++) {
        if (i == NAME_MAX_LEN) {
            memcpy(dst + j, "...", 3);
            j += 3;
            break;
        }
        unsigned char c = (unsigned char)src[i];
        dst[j++] = (c >= 0x20 && c < 0x7f && c != '"') ? (char)c : '?';
    }
    dst[j] = '\0';
}

static int fail(char *what, size_t what_len, char *detail, size_t detail_len, const char *w,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int fail(char *what, size_t what_len, char *detail, size_t detail_len, const char *w,
                const char *fmt, ...)
{
    snprintf(what, what_len, "%s", w);
    int n = snprintf(detail, detail_len, "DETAIL: ");
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < detail_len) {
        vsnprintf(detail + n, detail_len - (size_t)n, fmt, ap);
    }
    va_end(ap);
    return LOAMS_EABI;
}

/* ---- descriptor checks ---- */

static int check_options(const loams_option_spec *opts, char *what, size_t what_len, char *detail,
                         size_t detail_len)
{
    static const char fix[] = "Use a LOAMS_OPT_* type of <loams/plugin.h> and end the table "
                              "with an entry whose name is NULL.";
    const char *w = "invalid option table";
    if (opts == NULL) {
        return 0;
    }
    for (size_t i = 0; i <= OPTIONS_MAX; i++) {
        const loams_option_spec *o = &opts[i];
        if (o->name == NULL) {
            return 0;
        }
        if (i == OPTIONS_MAX) {
            return fail(what, what_len, detail, detail_len, w,
                        "The table has more than %d entries, or lacks the entry whose name "
                        "is NULL that ends it. %s",
                        OPTIONS_MAX, fix);
        }
        char shown[NAME_MAX_LEN + 8];
        printable_copy(shown, sizeof shown, o->name);
        if (!name_is_valid(o->name)) {
            return fail(what, what_len, detail, detail_len, w,
                        "Option %zu has the invalid name \"%s\": a name is 1 to %d letters, "
                        "digits, '.', '_' or '-', starting with a letter or digit. %s",
                        i + 1, shown, NAME_MAX_LEN, fix);
        }
        if (loams_option_type_name((loams_option_type)o->type) == NULL) {
            return fail(what, what_len, detail, detail_len, w,
                        "Option %zu (\"%s\") has unknown type %u. %s", i + 1, shown, o->type, fix);
        }
        if (o->type == LOAMS_OPT_ENUM && (o->choices == NULL || o->choices[0] == '\0')) {
            return fail(what, what_len, detail, detail_len, w,
                        "Option %zu (\"%s\") is an enum without choices. Set choices to the "
                        "'|'-separated words it accepts.",
                        i + 1, shown);
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(opts[j].name, o->name) == 0) {
                return fail(what, what_len, detail, detail_len, w,
                            "Options %zu and %zu are both named \"%s\". Give each option its "
                            "own name.",
                            j + 1, i + 1, shown);
            }
        }
    }
    return 0;
}

int loams__registry_check_descriptor(const loams_plugin_descriptor *d, char *what, size_t what_len,
                                     char *detail, size_t detail_len)
{
    const unsigned hmaj = LOAMS_ABI_MAJOR, hmin = LOAMS_ABI_MINOR;
    if (d == NULL) {
        return fail(what, what_len, detail, detail_len, "entry point returned no descriptor",
                    "%s() returned NULL. Return the address of the plugin's static const "
                    "loams_plugin_descriptor.",
                    LOAMS_PLUGIN_ENTRY_NAME);
    }
    /* The ABI header (major, minor, size) is the one part every major
     * shares: nothing else is read before it fits. */
    if (d->abi_major != hmaj) {
        return fail(what, what_len, detail, detail_len, "incompatible ABI major version",
                    "Host ABI is %u.%u, plugin ABI is %u.%u. Rebuild the plugin against "
                    "loams-plugin %u.x headers.",
                    hmaj, hmin, d->abi_major, d->abi_minor, hmaj);
    }
    if (d->abi_minor > hmin) {
        return fail(what, what_len, detail, detail_len,
                    "ABI minor version is newer than the host's",
                    "Host ABI is %u.%u, plugin ABI is %u.%u. Upgrade loams-host to one with "
                    "ABI %u.%u or later, or rebuild the plugin against loams-plugin %u.%u "
                    "headers.",
                    hmaj, hmin, d->abi_major, d->abi_minor, d->abi_major, d->abi_minor, hmaj, hmin);
    }
    if (d->size < DESCRIPTOR_SIZE_1_0) {
        return fail(what, what_len, detail, detail_len, "descriptor is too small",
                    "Host ABI is %u.%u, which needs a descriptor of at least %zu bytes; the "
                    "plugin's says it has %u. Start the descriptor with "
                    "LOAMS_DESCRIPTOR_HEADER and rebuild against loams-plugin %u.x headers.",
                    hmaj, hmin, (size_t)DESCRIPTOR_SIZE_1_0, d->size, hmaj);
    }
    const kind_info *k = kind_lookup(d->kind);
    if (k == NULL) {
        char w[48];
        snprintf(w, sizeof w, "unknown plugin kind %u", d->kind);
        return fail(what, what_len, detail, detail_len, w,
                    "Host ABI %u.%u knows kinds 1 to %zu (decoder, transform, target, embed, "
                    "store, source). Set kind to a LOAMS_KIND_* value of <loams/plugin.h>.",
                    hmaj, hmin, NKINDS);
    }
    if (d->name == NULL || d->name[0] == '\0') {
        return fail(what, what_len, detail, detail_len, "descriptor has no name",
                    "The descriptor's name is NULL or empty. Give the plugin a unique name "
                    "such as \"%s-mine\".",
                    k->name);
    }
    if (!name_is_valid(d->name)) {
        char shown[NAME_MAX_LEN + 8];
        printable_copy(shown, sizeof shown, d->name);
        char w[NAME_MAX_LEN + 40];
        snprintf(w, sizeof w, "invalid plugin name \"%s\"", shown);
        return fail(what, what_len, detail, detail_len, w,
                    "A name is 1 to %d letters, digits, '.', '_' or '-', starting with a "
                    "letter or digit. Rename the plugin in its descriptor.",
                    NAME_MAX_LEN);
    }
    if (d->vtable == NULL) {
        return fail(what, what_len, detail, detail_len, "descriptor has no vtable",
                    "A %s plugin's descriptor must point vtable to its %s.", k->name,
                    k->vtable_type);
    }
    /* Every vtable starts with its size: read that before any member. */
    uint32_t vt_size;
    memcpy(&vt_size, d->vtable, sizeof vt_size);
    if (vt_size < k->size_1_0) {
        char w[64];
        snprintf(w, sizeof w, "%s vtable is too small", k->name);
        return fail(what, what_len, detail, detail_len, w,
                    "Host ABI is %u.%u, which needs a %s of at least %zu bytes; the plugin's "
                    "says it has %u. Set its size member to sizeof(%s) and rebuild against "
                    "loams-plugin %u.x headers.",
                    hmaj, hmin, k->vtable_type, k->size_1_0, vt_size, k->vtable_type, hmaj);
    }
    for (size_t i = 0; i < sizeof k->required / sizeof k->required[0]; i++) {
        const vt_func *f = &k->required[i];
        if (f->name == NULL) {
            break;
        }
        void (*fn)(void);
        memcpy(&fn, (const char *)d->vtable + f->offset, sizeof fn);
        if (fn == NULL) {
            char w[96];
            snprintf(w, sizeof w, "%s vtable lacks required function %s", k->name, f->name);
            return fail(what, what_len, detail, detail_len, w,
                        "%s.%s is NULL. A %s plugin must implement %s.", k->vtable_type, f->name,
                        k->name, k->required_text);
        }
    }
    return check_options(d->options, what, what_len, detail, detail_len);
}

/* ---- the registry ---- */

static int add_rejection(loams_registry *r, const char *path, int status, const char *message,
                         const char *detail)
{
    rejection_rec *rec = calloc(1, sizeof *rec);
    if (rec == NULL || grow(&r->rejected, r->nrejected, sizeof *r->rejected) != 0) {
        free(rec);
        return -ENOMEM;
    }
    rec->path = strdup(path);
    rec->message = strdup(message);
    rec->detail = strdup(detail);
    if (rec->path == NULL || rec->message == NULL || rec->detail == NULL) {
        free(rec->path);
        free(rec->message);
        free(rec->detail);
        free(rec);
        return -ENOMEM;
    }
    rec->pub.path = rec->path;
    rec->pub.message = rec->message;
    rec->pub.detail = rec->detail;
    rec->pub.status = status;
    r->rejected[r->nrejected++] = rec;
    return 0;
}

/* Rejects file `path`: "plugin "PATH" rejected: WHAT" + the detail line. */
static int reject(loams_registry *r, const char *path, int status, const char *what,
                  const char *detail_fmt, ...) __attribute__((format(printf, 5, 6)));

static int reject(loams_registry *r, const char *path, int status, const char *what,
                  const char *detail_fmt, ...)
{
    char message[PATH_MAX + TEXT_LEN];
    char detail[sizeof(((loams__trust_verdict *)0)->detail) + TEXT_LEN];
    snprintf(message, sizeof message, "plugin \"%s\" rejected: %s", path, what);
    int n = snprintf(detail, sizeof detail, "DETAIL: ");
    va_list ap;
    va_start(ap, detail_fmt);
    vsnprintf(detail + n, sizeof detail - (size_t)n, detail_fmt, ap);
    va_end(ap);
    return add_rejection(r, path, status, message, detail);
}

static const loams_plugin *find_any(const loams_registry *r, const char *name)
{
    for (size_t i = 0; i < r->nplugins; i++) {
        if (strcmp(r->plugins[i]->pub.name, name) == 0) {
            return &r->plugins[i]->pub;
        }
    }
    return NULL;
}

/* Takes rec into the registry unless its name is taken (then rejects the
 * file and frees rec).  Returns 0 or -ENOMEM (rec freed). */
static void plugin_rec_free(plugin_rec *rec);

static int add_plugin(loams_registry *r, plugin_rec *rec)
{
    const loams_plugin *prev = find_any(r, rec->pub.name);
    if (prev != NULL) {
        char what[NAME_MAX_LEN + 40];
        snprintf(what, sizeof what, "duplicate plugin name \"%s\"", rec->pub.name);
        int rc = reject(r, rec->path, LOAMS_EEXISTS, what,
                        "\"%s\" is already loaded from \"%s\", which comes earlier in the "
                        "plugin path. Remove or rename one of the two.",
                        rec->pub.name, prev->path);
        plugin_rec_free(rec);
        return rc;
    }
    if (grow(&r->plugins, r->nplugins, sizeof *r->plugins) != 0) {
        plugin_rec_free(rec);
        return -ENOMEM;
    }
    r->plugins[r->nplugins++] = rec;
    return 0;
}

/* Caller holds ltdl_lock when rec->handle is set. */
static void plugin_rec_free(plugin_rec *rec)
{
    if (rec == NULL) {
        return;
    }
    if (rec->handle != NULL) {
        lt_dlclose(rec->handle);
    }
    free(rec->path);
    free(rec->name);
    free(rec->version);
    free(rec->description);
    free(rec);
}

/* "loader says" text: dlerror() starts with the path, which the message
 * already names. */
static const char *strip_path_prefix(const char *err, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(err, path, n) == 0 && err[n] == ':' && err[n + 1] == ' ') {
        return err + n + 2;
    }
    return err;
}

/* Loads and checks one native plugin: `path` is the entry in the plugin
 * directory (what messages and listings show), `real` the resolved path
 * that passed the path check (what is opened).  Caller holds ltdl_lock.
 * Returns 0 (loaded or rejected) or -ENOMEM. */
static int load_native(loams_registry *r, const char *path, const char *real)
{
    const unsigned hmaj = LOAMS_ABI_MAJOR, hmin = LOAMS_ABI_MINOR;
    static const char not_loadable_fix[] =
        "Build it as a shared object with the flags of pkg-config --cflags --libs "
        "loams-plugin, linking every library it uses, or remove it from the plugin directory.";
    int rc = 0;
    plugin_rec *rec = NULL;
    lt_dlhandle handle = NULL;
    lt_dladvise advise = NULL;

    /* libltdl binds lazily and reports every failure as "file not found".
     * Opening the file first with RTLD_NOW makes an unresolved symbol fail
     * here rather than in the middle of a task, and gives the real reason;
     * libltdl then gets the same, already relocated, object. */
    dlerror();
    void *probe = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (probe == NULL) {
        const char *err = dlerror();
        return reject(r, path, -ENOEXEC, "not a loadable shared object", "The loader says: %s. %s",
                      err != NULL ? strip_path_prefix(err, real) : "unknown error",
                      not_loadable_fix);
    }
    if (lt_dladvise_init(&advise) != 0 || lt_dladvise_local(&advise) != 0) {
        rc = -ENOMEM;
        goto out;
    }
    handle = lt_dlopenadvise(real, advise);
    if (handle == NULL) {
        const char *err = lt_dlerror();
        rc = reject(r, path, -ENOEXEC, "not a loadable shared object", "libltdl says: %s. %s",
                    err != NULL ? err : "unknown error", not_loadable_fix);
        goto out;
    }

    void *sym = lt_dlsym(handle, LOAMS_PLUGIN_ENTRY_NAME);
    if (sym == NULL) {
        /* An entry for another major means the plugin was built against
         * other headers: say so rather than "no entry". */
        for (unsigned major = 0; major <= PROBE_MAJOR_MAX; major++) {
            char other[64];
            snprintf(other, sizeof other, "loams_plugin_entry_v%u", major);
            if (major != hmaj && lt_dlsym(handle, other) != NULL) {
                rc = reject(r, path, LOAMS_EABI, "incompatible ABI major version",
                            "Host ABI is %u.%u, plugin exports %s (ABI %u.x). Rebuild the "
                            "plugin against loams-plugin %u.x headers.",
                            hmaj, hmin, other, major, hmaj);
                goto out;
            }
        }
        rc = reject(r, path, LOAMS_EABI, "no entry symbol " LOAMS_PLUGIN_ENTRY_NAME,
                    "Host ABI is %u.%u and the file exports no loams_plugin_entry_v<N> "
                    "symbol. Define the entry with LOAMS_PLUGIN_ENTRY from <loams/plugin.h> "
                    "and export it (LOAMS_PLUGIN_EXPORT).",
                    hmaj, hmin);
        goto out;
    }

    loams_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    size_t udfs_before = loams_udf_count(NULL);
    const loams_plugin_descriptor *d = entry(r->host);
    if (loams_udf_count(NULL) != udfs_before) {
        /* The entry registered UDFs (the one moment ABI 1.x gives a plugin
         * to do so): the process-wide UDF registry points into this file's
         * code for the life of the process (udf.h), so the file must never
         * be unmapped - not when it is rejected below, not when the
         * registry closes.  RTLD_NODELETE on the loaded object does that. */
        void *pin = dlopen(real, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
        if (pin != NULL) {
            dlclose(pin);
        } else {
            probe = NULL; /* never closed: its reference keeps the file mapped */
        }
    }
    char what[TEXT_LEN], detail[TEXT_LEN];
    if (loams__registry_check_descriptor(d, what, sizeof what, detail, sizeof detail) != 0) {
        /* detail already starts with "DETAIL: ". */
        rc = reject(r, path, LOAMS_EABI, what, "%s", detail + strlen("DETAIL: "));
        goto out;
    }

    rec = calloc(1, sizeof *rec);
    if (rec == NULL || (rec->path = strdup(path)) == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    rec->handle = handle;
    handle = NULL;
    rec->pub.name = d->name;
    rec->pub.kind = (loams_plugin_kind)d->kind;
    rec->pub.runtime = LOAMS_RUNTIME_NATIVE;
    rec->pub.version = d->version != NULL ? d->version : "";
    rec->pub.abi_major = d->abi_major;
    rec->pub.abi_minor = d->abi_minor;
    rec->pub.path = rec->path;
    rec->pub.description = d->description != NULL ? d->description : "";
    rec->pub.descriptor = d;
    rec->pub.vtable = d->vtable;
    rec->pub.options = d->options;
    rc = add_plugin(r, rec);
    rec = NULL;
out:
    if (rec != NULL) {
        plugin_rec_free(rec);
    }
    if (handle != NULL) {
        lt_dlclose(handle);
    }
    if (advise != NULL) {
        lt_dladvise_destroy(&advise);
    }
    if (probe != NULL) {
        dlclose(probe);
    }
    return rc;
}

/* Trims spaces at both ends in place; returns the start. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) {
        s[--n] = '\0';
    }
    return s;
}

/* Reads a Lua script's header comment: the "--" lines at its top (after an
 * optional "#!" line and blank lines).  "-- description: X" gives the
 * description, else the first non-empty comment line does; "-- version: X"
 * gives the version.  Outputs are malloc'd ("" when absent). */
static int lua_header(int fd, char **description, char **version)
{
    char buf[LUA_HEADER_MAX + 1];
    size_t len = 0;
    ssize_t n;
    *description = NULL;
    *version = NULL;
    while (len < LUA_HEADER_MAX && (n = read(fd, buf + len, LUA_HEADER_MAX - len)) != 0) {
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';
    char *first = NULL, *desc = NULL, *ver = NULL;
    bool in_block = false;
    char *next = buf;
    for (size_t lineno = 1; next != NULL; lineno++) {
        char *line = next;
        char *nl = strchr(line, '\n');
        next = nl != NULL ? nl + 1 : NULL;
        if (nl != NULL) {
            *nl = '\0';
        } else if (len == LUA_HEADER_MAX) {
            break; /* a cut line: not trusted */
        }
        if (lineno == 1 && strncmp(line, "#!", 2) == 0) {
            continue;
        }
        char *t = trim(line);
        if (*t == '\0' && !in_block) {
            continue; /* blank lines before the comment block */
        }
        if (strncmp(t, "--", 2) != 0 || strncmp(t, "--[[", 4) == 0) {
            break; /* end of the block (block comments are not read) */
        }
        in_block = true;
        while (*t == '-') {
            t++;
        }
        t = trim(t);
        if (strncmp(t, "description:", 12) == 0 && desc == NULL) {
            desc = trim(t + 12);
        } else if (strncmp(t, "version:", 8) == 0 && ver == NULL) {
            ver = trim(t + 8);
        } else if (first == NULL && *t != '\0') {
            first = t;
        }
    }
    const char *d = desc != NULL ? desc : (first != NULL ? first : "");
    *description = strdup(d);
    *version = strdup(ver != NULL ? ver : "");
    if (*description == NULL || *version == NULL) {
        free(*description);
        free(*version);
        *description = *version = NULL;
        return -ENOMEM;
    }
    return 0;
}

/* Indexes one Lua transform script: `path` is the entry, `real` the
 * resolved path that passed the path check (what is read).  Returns 0
 * (indexed or rejected) or -ENOMEM. */
static int index_lua(loams_registry *r, const char *path, const char *real, const char *file_name)
{
    size_t base_len = strlen(file_name) - strlen(".lua");
    char name[NAME_MAX + 1];
    memcpy(name, file_name, base_len);
    name[base_len] = '\0';
    if (!name_is_valid(name)) {
        char shown[NAME_MAX_LEN + 8], what[NAME_MAX_LEN + 40];
        printable_copy(shown, sizeof shown, name);
        snprintf(what, sizeof what, "invalid plugin name \"%s\"", shown);
        return reject(r, path, LOAMS_EABI, what,
                      "A Lua script's name is its file name without \".lua\": 1 to %d "
                      "letters, digits, '.', '_' or '-', starting with a letter or digit. "
                      "Rename the file.",
                      NAME_MAX_LEN);
    }
    int fd = open(real, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return reject(r, path, -err, "cannot be read",
                      "open: %s. Make the script readable by the user running loams-host, "
                      "or remove it from the plugin directory.",
                      strerror(err));
    }
    plugin_rec *rec = calloc(1, sizeof *rec);
    int rc = 0;
    if (rec == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    rc = lua_header(fd, &rec->description, &rec->version);
    if (rc == -ENOMEM) {
        goto out;
    }
    if (rc != 0) {
        rc = reject(r, path, rc, "cannot be read",
                    "read: %s. Make the script readable by the user running loams-host, or "
                    "remove it from the plugin directory.",
                    strerror(-rc));
        goto out;
    }
    rec->name = strdup(name);
    rec->path = strdup(path);
    if (rec->name == NULL || rec->path == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    rec->pub.name = rec->name;
    rec->pub.kind = LOAMS_KIND_TRANSFORM;
    rec->pub.runtime = LOAMS_RUNTIME_LUA;
    rec->pub.version = rec->version;
    rec->pub.path = rec->path;
    rec->pub.description = rec->description;
    rc = add_plugin(r, rec);
    rec = NULL;
out:
    plugin_rec_free(rec);
    close(fd);
    return rc;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks and loads one directory entry.  Returns 0 or -ENOMEM. */
static int load_file(loams_registry *r, const dir_rec *dir, const char *file)
{
    bool lua = has_suffix(file, ".lua");
    char path[PATH_MAX];
    int n =
        snprintf(path, sizeof path, "%s/%s", strcmp(dir->path, "/") == 0 ? "" : dir->path, file);
    if (n < 0 || (size_t)n >= sizeof path) {
        return 0; /* cannot name it: the kernel could not open it either */
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        int err = errno;
        return reject(r, path, -err, "cannot be read",
                      "stat: %s. Fix or remove the file in the plugin directory.", strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        return reject(r, path, -EINVAL, "not a regular file",
                      "A plugin directory holds plugin files only. Remove \"%s\" from it.", path);
    }
    /* Nothing of a file runs before this check: anyone who can change the
     * file, the link that leads to it or a directory on the way could make
     * the host run their code.  The resolved path is what gets opened. */
    char real[PATH_MAX];
    loams__trust_verdict v;
    int rc = loams__trust_plugin_file(path, geteuid(), real, sizeof real, &v);
    if (rc != 0) {
        return reject(r, path, rc, v.what, "%s", v.detail);
    }
    return lua ? index_lua(r, path, real, file) : load_native(r, path, real);
}

/* Scans one directory (already resolved and recorded).  Caller holds
 * ltdl_lock.  Returns 0 or -ENOMEM. */
static int scan_dir(loams_registry *r, const dir_rec *dir, const char *source)
{
    int rc = 0;
    char **names = NULL;
    size_t nnames = 0;
    struct stat st;
    DIR *d = opendir(dir->path);
    if (d == NULL || fstat(dirfd(d), &st) != 0) {
        int err = errno;
        char message[PATH_MAX + 64];
        char detail[TEXT_LEN];
        snprintf(message, sizeof message, "plugin directory \"%s\" skipped: cannot be read",
                 dir->path);
        snprintf(detail, sizeof detail,
                 "DETAIL: opendir: %s. It is in the plugin path through %s; make it readable "
                 "or remove it from there.",
                 strerror(err), source);
        rc = add_rejection(r, dir->path, -err, message, detail);
        goto out;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' ||
            (!has_suffix(e->d_name, ".so") && !has_suffix(e->d_name, ".lua"))) {
            continue;
        }
        if (grow(&names, nnames, sizeof *names) != 0 ||
            (names[nnames] = strdup(e->d_name)) == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        nnames++;
    }
    if (nnames > 1) {
        qsort(names, nnames, sizeof *names, by_name);
    }
    for (size_t i = 0; i < nnames && rc == 0; i++) {
        rc = load_file(r, dir, names[i]);
    }
out:
    for (size_t i = 0; i < nnames; i++) {
        free(names[i]);
    }
    free(names);
    if (d != NULL) {
        closedir(d);
    }
    return rc;
}

/* Adds directory `dir` to the path unless it is there already, and scans
 * it.  A missing directory is recorded as a rejection unless `optional`. */
static int add_dir(loams_registry *r, const char *dir, const char *source, bool optional)
{
    char real[PATH_MAX];
    struct stat st;
    if (realpath(dir, real) == NULL || stat(real, &st) != 0) {
        int err = errno;
        if (optional && err == ENOENT) {
            return 0;
        }
        char message[PATH_MAX + 64];
        char detail[TEXT_LEN];
        snprintf(message, sizeof message, "plugin directory \"%s\" skipped: cannot be read", dir);
        snprintf(detail, sizeof detail,
                 "DETAIL: %s. It is in the plugin path through %s; fix the path or create "
                 "the directory.",
                 strerror(err), source);
        return add_rejection(r, dir, -err, message, detail);
    }
    for (size_t i = 0; i < r->ndirs; i++) {
        if (r->dirs[i].dev == st.st_dev && r->dirs[i].ino == st.st_ino) {
            return 0;
        }
    }
    if (grow(&r->dirs, r->ndirs, sizeof *r->dirs) != 0) {
        return -ENOMEM;
    }
    dir_rec *rec = &r->dirs[r->ndirs];
    rec->path = strdup(real);
    if (rec->path == NULL) {
        return -ENOMEM;
    }
    rec->dev = st.st_dev;
    rec->ino = st.st_ino;
    r->ndirs++;
    return scan_dir(r, rec, source);
}

static int scan_path(loams_registry *r, const loams_registry_config *cfg)
{
    int rc = 0;
    for (size_t i = 0; i < cfg->n_plugin_dirs && rc == 0; i++) {
        rc = add_dir(r, cfg->plugin_dirs[i], "--plugin-dir", false);
    }
    if (rc == 0 && cfg->path_env != NULL) {
        char *copy = strdup(cfg->path_env);
        if (copy == NULL) {
            return -ENOMEM;
        }
        char *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d != NULL && rc == 0;
             d = strtok_r(NULL, ":", &save)) {
            rc = add_dir(r, d, "LOAMS_PLUGIN_PATH", false);
        }
        free(copy);
    }
    if (rc == 0 && cfg->installed_dir != NULL && cfg->installed_dir[0] != '\0') {
        rc = add_dir(r, cfg->installed_dir, "the installed plugin directory", true);
    }
    return rc;
}

int loams_registry_open(const loams_registry_config *cfg, loams_registry **out)
{
    int rc = 0;
    *out = NULL;
    loams_registry *r = calloc(1, sizeof *r);
    if (r == NULL) {
        return -ENOMEM;
    }
    r->host = cfg->host != NULL ? cfg->host : loams_host_api_get();
    pthread_mutex_lock(&ltdl_lock);
    if (lt_dlinit() != 0) {
        pthread_mutex_unlock(&ltdl_lock);
        LOAMS_ERROR("registry", "libltdl failed to initialise: %s", lt_dlerror());
        free(r);
        return LOAMS_EABI;
    }
    r->ltdl_ready = true;
    rc = scan_path(r, cfg);
    pthread_mutex_unlock(&ltdl_lock);
    if (rc != 0) {
        loams_registry_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

void loams_registry_close(loams_registry *r)
{
    if (r == NULL) {
        return;
    }
    pthread_mutex_lock(&ltdl_lock);
    /* Unload in reverse order of loading. */
    for (size_t i = r->nplugins; i > 0; i--) {
        plugin_rec_free(r->plugins[i - 1]);
    }
    if (r->ltdl_ready) {
        lt_dlexit();
    }
    pthread_mutex_unlock(&ltdl_lock);
    free(r->plugins);
    for (size_t i = 0; i < r->nrejected; i++) {
        rejection_rec *rec = r->rejected[i];
        free(rec->path);
        free(rec->message);
        free(rec->detail);
        free(rec);
    }
    free(r->rejected);
    for (size_t i = 0; i < r->ndirs; i++) {
        free(r->dirs[i].path);
    }
    free(r->dirs);
    free(r);
}

size_t loams_registry_dir_count(const loams_registry *r)
{
    return r->ndirs;
}

const char *loams_registry_dir_at(const loams_registry *r, size_t i)
{
    return i < r->ndirs ? r->dirs[i].path : NULL;
}

size_t loams_registry_count(const loams_registry *r)
{
    return r->nplugins;
}

const loams_plugin *loams_registry_at(const loams_registry *r, size_t i)
{
    return i < r->nplugins ? &r->plugins[i]->pub : NULL;
}

size_t loams_registry_rejected_count(const loams_registry *r)
{
    return r->nrejected;
}

const loams_plugin_rejection *loams_registry_rejected_at(const loams_registry *r, size_t i)
{
    return i < r->nrejected ? &r->rejected[i]->pub : NULL;
}

int loams_registry_find(const loams_registry *r, loams_plugin_kind kind, const char *name,
                        const loams_plugin **out)
{
    if (name == NULL) {
        return -EINVAL;
    }
    const loams_plugin *p = find_any(r, name);
    if (p == NULL || (kind != 0 && p->kind != kind)) {
        return LOAMS_ENOTFOUND;
    }
    *out = p;
    return 0;
}

void loams_registry_log_rejections(const loams_registry *r)
{
    for (size_t i = 0; i < r->nrejected; i++) {
        LOAMS_WARN("registry", "%s", r->rejected[i]->message);
        LOAMS_WARN("registry", "%s", r->rejected[i]->detail);
    }
}
