/*
 * loams/plugin.h - the Loams host plugin ABI, version 1.
 *
 * A plugin is a shared object (.so) that exports exactly one symbol,
 * LOAMS_PLUGIN_ENTRY (loams_plugin_entry_v1: the name carries the ABI major).
 * The host calls it once after loading the file, passing its host API table;
 * it returns a pointer to a const descriptor that lives as long as the .so.
 *
 *     #include <loams/plugin.h>
 *     static const loams_host_api *host;
 *     static const loams_decoder_vtable vt = { sizeof vt, my_open, my_decode, my_close };
 *     static const loams_plugin_descriptor desc = {
 *         LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_DECODER, "decoder-mine", "1.0.0",
 *         "Decodes my format", &vt, NULL };
 *     LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *
 *     LOAMS_PLUGIN_ENTRY(const loams_host_api *h) { host = h; return &desc; }
 *
 * Compatibility rule: a plugin built for ABI major M, minor N loads on a host
 * with the same major M and a minor >= N.  Within a major, every table (the
 * descriptor, the host API, each kind's vtable) only grows at its end and
 * starts with its own size, so each side can tell which members the other
 * has.  The host checks the descriptor (major, minor, size, kind, name)
 * before calling anything else in the plugin, and rejects the file with a
 * message that names it, both versions and the fix.
 *
 * Errors: every plugin function returns 0 or a negative status
 * (loams/status.h) and, when non-zero, sets a message with host->set_error().
 * A plugin never prints, exits or aborts the process.
 */
#ifndef LOAMS_PLUGIN_H
#define LOAMS_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>
#include <loams/status.h>

#include <loams/decoder.h>
#include <loams/embed.h>
#include <loams/source.h>
#include <loams/store.h>
#include <loams/target.h>
#include <loams/transform.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOAMS_ABI_MAJOR 1
/* 1.1: buf_create, buf_free, buf_reset;
 * 1.2: store_uri, batch_column_wanted, transform input_columns;
 * 1.3: batch_column_cells;
 * 1.4: embed_check, embed_texts, embed last_tokens;
 * 1.5: schema_by_id, schema_latest (the schema registry), the source kind
 *      (loams/source.h);
 * 1.6: target rebase (several tasks of one link commit to one target);
 * 1.7: aggregate_register, aggregate_count, aggregate_at, aggregate_find
 *      (mergeable aggregate states, loams_aggregate) */
#define LOAMS_ABI_MINOR 7

#define LOAMS_PLUGIN_ENTRY loams_plugin_entry_v1
#define LOAMS_PLUGIN_ENTRY_NAME "loams_plugin_entry_v1"

#if defined(__GNUC__)
#define LOAMS_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define LOAMS_PLUGIN_EXPORT
#endif

/* Plugin kinds.  Numbers are part of the ABI: append only. */
typedef enum loams_plugin_kind {
    LOAMS_KIND_DECODER = 1,   /* bytes of a stream record -> columns (loams/decoder.h) */
    LOAMS_KIND_TRANSFORM = 2, /* batch -> batch (loams/transform.h) */
    LOAMS_KIND_TARGET = 3,    /* batches -> files + commits (loams/target.h) */
    LOAMS_KIND_EMBED = 4,     /* texts -> vectors (loams/embed.h) */
    LOAMS_KIND_STORE = 5,     /* object store driver (loams/store.h) */
    LOAMS_KIND_SOURCE = 6     /* a stream's records (loams/source.h), ABI 1.5 */
} loams_plugin_kind;

/* Option types, used by the host to validate values at CREATE time. */
typedef enum loams_option_type {
    LOAMS_OPT_STRING = 1,
    LOAMS_OPT_INT = 2,      /* decimal integer */
    LOAMS_OPT_BOOL = 3,     /* true / false */
    LOAMS_OPT_SIZE = 4,     /* bytes with a unit: '64MiB', '512KiB', '1000' */
    LOAMS_OPT_DURATION = 5, /* '2s', '250ms', '7d' */
    LOAMS_OPT_ENUM = 6      /* one of the '|'-separated words in `choices` */
} loams_option_type;

/* Option flags. */
#define LOAMS_OPT_SECRET 0x1u /* never shown in logs, errors or --list-plugins */

/* One option a plugin accepts (Fluent Bit's config map). The table ends with
 * an entry whose name is NULL. */
typedef struct loams_option_spec {
    const char *name;
    uint32_t type;       /* a loams_option_type */
    uint32_t flags;      /* LOAMS_OPT_* flags */
    const char *def;     /* default value as text, or NULL for none */
    const char *choices; /* for LOAMS_OPT_ENUM: "a|b|c" */
    const char *description;
} loams_option_spec;

/* The first three members of the descriptor, in the right order. */
#define LOAMS_DESCRIPTOR_HEADER                                                                    \
    LOAMS_ABI_MAJOR, LOAMS_ABI_MINOR, (uint32_t)sizeof(loams_plugin_descriptor)

/*
 * The descriptor.  Const, owned by the plugin, valid while the .so is loaded.
 * The host reads abi_major, abi_minor and size first, and nothing else when
 * they do not fit.  `vtable` points to the kind's table (a
 * loams_decoder_vtable for LOAMS_KIND_DECODER, ...), whose first member is
 * its own size.
 */
typedef struct loams_plugin_descriptor {
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t size;                    /* sizeof(loams_plugin_descriptor) as the plugin was built */
    uint32_t kind;                    /* a loams_plugin_kind */
    const char *name;                 /* unique among loaded plugins, e.g. "decoder-json" */
    const char *version;              /* the plugin's own version, e.g. "1.2.0" */
    const char *description;          /* one line */
    const void *vtable;               /* the kind's function table */
    const loams_option_spec *options; /* NULL-terminated table, or NULL */
} loams_plugin_descriptor;

/* The entry point.  Called once, on the loading thread, right after the file
 * is loaded; `host` stays valid until the plugin is unloaded.  Returns the
 * descriptor (NULL makes the host reject the plugin).  Must not allocate
 * resources that need freeing: there is no unload callback in 1.0. */
typedef const loams_plugin_descriptor *(*loams_plugin_entry_fn)(const loams_host_api *host);

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *host);

#ifdef __cplusplus
}
#endif

#endif /* LOAMS_PLUGIN_H */
