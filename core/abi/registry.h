/*
 * registry.h - the plugin registry: finds, checks and loads every plugin of
 * the plugin path, and answers lookups by name and kind for the rest of the
 * core.
 *
 * The plugin path is, in this order (the first of two plugins with the same
 * name wins; the later one is rejected as a duplicate):
 *   1. the --plugin-dir directories, in the order given;
 *   2. the directories of LOAMS_PLUGIN_PATH (colon-separated, empty entries
 *      ignored);
 *   3. the installed plugin directory (LOAMS_PLUGIN_DIR, set at build time:
 *      $(pkglibdir)/plugins).
 * A directory that appears twice (the same directory by device and inode) is
 * scanned once, at its first place.  Each directory's entries are taken in
 * byte order of their names (deterministic), files whose name starts with '.'
 * are skipped; "*.so" files are native plugins and "*.lua" files are Lua
 * transform scripts (listed only: running them belongs to the Lua runtime).
 * Other files are ignored.
 *
 * Every file is checked before any of its code runs: it must be a regular
 * file that neither it nor its directory is writable by group or others.
 * A native plugin is then loaded with libltdl (local symbols, every symbol
 * resolved at load time), its entry symbol LOAMS_PLUGIN_ENTRY_NAME is called
 * once with the host API table, and the descriptor it returns is checked:
 * ABI major, minor, size, kind, name, the kind's vtable (present, large
 * enough for ABI 1.0, required functions non-NULL) and the option table.
 * A file that fails any check is *rejected*: the registry records two lines,
 * modelled on PostgreSQL's "incompatible library" errors,
 *
 *   plugin "/p/bad-major.so" rejected: incompatible ABI major version
 *   DETAIL: Host ABI is 1.0, plugin ABI is 2.0. Rebuild the plugin against
 *           loams-plugin 1.x headers.            (one line in reality)
 *
 * closes the file and carries on with the next one.  A --plugin-dir or
 * LOAMS_PLUGIN_PATH directory that cannot be read is recorded the same way
 * (the installed directory may be missing: it is then skipped silently).
 *
 * Ownership: the registry owns every lt_dlhandle it opened, every string
 * and record it returns, and the libltdl initialisation it made; everything
 * is released by loams_registry_close().  One exception: a file whose entry
 * point registered UDFs (host->udf_register) stays mapped for the life of
 * the process (RTLD_NODELETE), rejected or not, because the process-wide
 * UDF registry (udf.h) keeps pointers into it.  Descriptors, vtables and option
 * tables point into the loaded plugins and stay valid until then too.
 *
 * Threads: loams_registry_open() and loams_registry_close() serialise their
 * libltdl calls on one process-wide lock (libltdl itself is not thread-safe),
 * so two registries may be opened or closed from different threads.  An open
 * registry is immutable: every lookup may be called from any number of
 * threads at once.  Close it only when no thread uses it or anything it
 * returned.
 */
#ifndef LOAMS_CORE_REGISTRY_H
#define LOAMS_CORE_REGISTRY_H

#include <stddef.h>

#include <loams/plugin.h>

/* How a registry entry runs. */
typedef enum loams_plugin_runtime {
    LOAMS_RUNTIME_NATIVE = 0, /* a .so loaded through the plugin ABI */
    LOAMS_RUNTIME_LUA = 1     /* a Lua transform script (kind transform) */
} loams_plugin_runtime;

/* One loaded plugin or indexed Lua script.  Read-only; every pointer is
 * registry-owned (or points into the loaded .so) and valid until
 * loams_registry_close(). */
typedef struct loams_plugin {
    const char *name; /* unique in the registry, e.g. "decoder-json" */
    loams_plugin_kind kind;
    loams_plugin_runtime runtime;
    const char *version; /* the plugin's own version, "" when it gives none */
    unsigned abi_major;  /* ABI the plugin was built for (0.0 for Lua scripts) */
    unsigned abi_minor;
    const char *path;        /* absolute path of the file */
    const char *description; /* one line, "" when none */
    /* Native plugins only (NULL for Lua scripts): */
    const loams_plugin_descriptor *descriptor;
    const void *vtable;               /* the kind's vtable (descriptor->vtable) */
    const loams_option_spec *options; /* NULL-terminated, or NULL */
} loams_plugin;

/* One rejected file (or unreadable plugin directory). */
typedef struct loams_plugin_rejection {
    const char *path;    /* the file or directory */
    const char *message; /* "plugin \"PATH\" rejected: WHAT" */
    const char *detail;  /* "DETAIL: VERSIONS / FACTS. WHAT TO DO." */
    int status;          /* LOAMS_EABI (ABI or descriptor), LOAMS_EEXISTS
                            (duplicate name), -EACCES (permissions), -ENOEXEC
                            (not loadable), -ENOENT/-errno (unreadable) */
} loams_plugin_rejection;

/* Where to look.  Zero it, then fill what applies. */
typedef struct loams_registry_config {
    const char *const *plugin_dirs; /* --plugin-dir values, in order */
    size_t n_plugin_dirs;
    const char *path_env;      /* LOAMS_PLUGIN_PATH's value, or NULL */
    const char *installed_dir; /* the installed plugin dir, or NULL for none */
    /* Table passed to every entry point; NULL means loams_host_api_get().
     * Must outlive the registry. */
    const loams_host_api *host;
} loams_registry_config;

typedef struct loams_registry loams_registry;

/* Fills *cfg with the default sources: no --plugin-dir, LOAMS_PLUGIN_PATH
 * from the environment (read now; the pointer is the environment's), the
 * installed dir LOAMS_PLUGIN_DIR, and the host's own API table. */
void loams_registry_config_defaults(loams_registry_config *cfg);

/*
 * Scans the plugin path of `cfg` and loads every plugin in it.  Rejected
 * files do not make it fail: they are recorded (loams_registry_rejected_*).
 * *out is the caller's, freed with loams_registry_close().
 * Errors: -ENOMEM; LOAMS_EABI when libltdl cannot be initialised.  On error
 * *out is NULL and nothing stays loaded.
 */
int loams_registry_open(const loams_registry_config *cfg, loams_registry **out);

/* Unloads every plugin and frees everything.  NULL is allowed. */
void loams_registry_close(loams_registry *r);

/* The directories scanned, in order (absolute, each once).  The strings are
 * registry-owned.  dir_at returns NULL past the end. */
size_t loams_registry_dir_count(const loams_registry *r);
const char *loams_registry_dir_at(const loams_registry *r, size_t i);

/* Loaded plugins and scripts, in load order (directory order, then file
 * name).  plugin_at returns NULL past the end. */
size_t loams_registry_count(const loams_registry *r);
const loams_plugin *loams_registry_at(const loams_registry *r, size_t i);

/* Rejected files, in the order they were met.  NULL past the end. */
size_t loams_registry_rejected_count(const loams_registry *r);
const loams_plugin_rejection *loams_registry_rejected_at(const loams_registry *r, size_t i);

/*
 * Looks a plugin up by name.  kind = 0 matches any kind.  On success *out
 * points to the registry's record (valid until close).
 * Errors: LOAMS_ENOTFOUND when no plugin has that name, or the one that has
 * it is of another kind; -EINVAL when name is NULL.
 */
int loams_registry_find(const loams_registry *r, loams_plugin_kind kind, const char *name,
                        const loams_plugin **out);

/* Logs each rejection as one WARN line (message + detail) on component
 * "registry".  For the daemon; --list-plugins prints them itself. */
void loams_registry_log_rejections(const loams_registry *r);

/* "decoder", "transform", "target", "embed", "store", or NULL for an
 * unknown kind.  Static strings. */
const char *loams_plugin_kind_name(loams_plugin_kind kind);

/* "native" or "lua".  Static strings. */
const char *loams_plugin_runtime_name(loams_plugin_runtime runtime);

/* Name of an option type ("string", "int", ...), or NULL when unknown. */
const char *loams_option_type_name(loams_option_type type);

/*
 * Internal, exposed for the unit tests: checks a descriptor exactly as the
 * loader does (major, minor, size, kind, name, vtable, options), without any
 * file.  Returns 0 when it is valid, else LOAMS_EABI and writes what is
 * wrong (the part after "rejected: ") to what[what_len] and the detail line
 * (starting "DETAIL: ") to detail[detail_len].
 */
int loams__registry_check_descriptor(const loams_plugin_descriptor *d, char *what, size_t what_len,
                                     char *detail, size_t detail_len);

#endif
