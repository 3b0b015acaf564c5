/*
 * node_config.h - the settings of a loams-host node: defaults, a config file,
 * LOAMS_* environment variables and command-line options, in that order of
 * precedence (each later source overrides the earlier ones).
 *
 * The file is `key = value` lines with [sections] (docs/OPERATIONS.md):
 *
 *   # comment (whole lines starting with # or ;)
 *   data_dir = /var/lib/loams
 *   lease_ttl = 30s
 *   [namespace.analytics]
 *   weight = 3
 *   byte_rate = 10MiB
 *
 * Keys before any section or under [host] are node settings; a
 * [namespace.NAME] section sets one namespace's fair-share weight and
 * byte-rate cap.  Values may be wrapped in double quotes.  Durations and
 * sizes are written as units.h reads them ('500ms', '30s', '1h30m';
 * '10MiB', '1GB', '1000'); durations are whole milliseconds, and a byte rate
 * may end in "/s".
 *
 * Environment: LOAMS_<KEY> for each node key (LOAMS_DATA_DIR,
 * LOAMS_LEASE_TTL, ...), LOAMS_NAMESPACE_WEIGHTS="a=3,b=1",
 * LOAMS_NAMESPACE_BYTE_RATES="a=10MiB", LOAMS_NAMESPACE_BYTE_BURSTS=...;
 * LOAMS_CONFIG names the config file when --config is not given.
 *
 * Errors say where the bad value came from (FILE:LINE and the key, the
 * environment variable, or the option), what is wrong and what to write
 * instead.  Threads: a loams_config is used by one thread at a time.
 */
#ifndef LOAMS_CORE_NODE_CONFIG_H
#define LOAMS_CORE_NODE_CONFIG_H

/* retention_max_hold's default: 3 days (a weekend). */
#define LOAMS_CONFIG_DEFAULT_RETENTION_MAX_HOLD_MS (3LL * 86400000)

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <loams/host.h>
#include <loams/status.h>

/* One namespace's settings. */
typedef struct loams_ns_setting {
    char *name;
    uint32_t weight;     /* 0 = default_weight */
    uint64_t byte_rate;  /* bytes/s, 0 = no cap */
    uint64_t byte_burst; /* 0 = one second of byte_rate */
} loams_ns_setting;

/* Every string and array is owned by the config (loams_config_free). */
typedef struct loams_config {
    char *data_dir;     /* no default: serve requires it */
    char *meta;         /* the metastore's etcd address; NULL: LMDB in data_dir */
    char **plugin_dirs; /* searched before LOAMS_PLUGIN_PATH and the installed dir */
    size_t n_plugin_dirs;
    char *node_id;              /* default "<hostname>:<pid>" */
    char *listen;               /* default "127.0.0.1:7070" */
    int64_t lease_ttl_ms;       /* default 30 s */
    int64_t poll_interval_ms;   /* default 1 s */
    int64_t stop_timeout_ms;    /* default 10 s: how long a stop waits for tasks */
    int64_t task_slice_ms;      /* default 30 s: a run this old yields to a waiting task */
    uint32_t max_concurrent;    /* default 16 */
    uint32_t max_per_namespace; /* default 4 */
    uint32_t default_weight;    /* default 1 */
    loams_ns_setting *namespaces;
    size_t n_namespaces;
    loams_log_level log_level;     /* default info */
    int64_t retention_interval_ms; /* default 5 min: how often retention runs */
    /* default 3 d: how long retention holds records a link has not applied
     * past their retention, for streams that set no retention_max_hold;
     * 0 = no hold (docs/OPERATIONS.md, "Retention and links") */
    int64_t retention_max_hold_ms;
    int64_t gc_interval_ms; /* default 1 min: how often GC runs */
    int64_t gc_grace_ms;    /* default 1 h: how long unreferenced files are kept */
    /* What one task run of each class may hold in memory through the host
     * (its plugins and batches; 0 = no budget; docs/OPERATIONS.md). */
    uint64_t memory_budget_link;        /* default 1 GiB: link apply */
    uint64_t memory_budget_maintenance; /* default 2 GiB: merges, compaction, retention */
    uint64_t memory_budget_gc;          /* default 256 MiB: garbage collection */
    /* The embedding cache's bound (<data dir>/embed-cache, embed_cache.h);
     * default 1 GiB, 0 = no cache. */
    uint64_t embed_cache_size;
    /* The HTTP API (core/http/server.h; docs/OPERATIONS.md, "The HTTP
     * API"). */
    uint32_t http_threads;                /* default 4: threads serving requests */
    uint64_t http_max_body;               /* default 64 MiB: a larger body is 413 */
    uint64_t http_max_header_bytes;       /* default 16 KiB: request line and headers */
    uint32_t http_max_connections;        /* default 512 open connections */
    uint32_t http_max_connections_per_ip; /* default 0: no cap per client address */
    int64_t http_idle_timeout_ms;         /* default 30 s: a silent connection is closed */
    int auth;                             /* default 1: bearer tokens; 0: off (loopback only) */
    int metrics_public;                   /* default 0: /metrics needs a token */
    /* The object store (run/store_url.h; docs/OPERATIONS.md, "An S3 object
     * store"): NULL = <data dir>/objects. */
    char *store;            /* "s3://bucket/prefix" or "file:///dir" */
    char *store_endpoint;   /* NULL: the plugin's default ($AWS_ENDPOINT_URL, AWS) */
    char *store_region;     /* NULL: the plugin's default */
    char *store_path_style; /* "true"/"false"; NULL: the plugin's default */
    /* Request budgets of this node's store (requests/s, 0 = no cap). */
    uint32_t store_put_rate;
    uint32_t store_get_rate;
} loams_config;

#define LOAMS_CONFIG_DEFAULT_LISTEN "127.0.0.1:7070"
#define LOAMS_CONFIG_DEFAULT_MEMORY_BUDGET_LINK (UINT64_C(1) << 30)
#define LOAMS_CONFIG_DEFAULT_MEMORY_BUDGET_MAINTENANCE (UINT64_C(2) << 30)
#define LOAMS_CONFIG_DEFAULT_MEMORY_BUDGET_GC (UINT64_C(256) << 20)
#define LOAMS_CONFIG_DEFAULT_EMBED_CACHE_SIZE (UINT64_C(1) << 30)
#define LOAMS_CONFIG_DEFAULT_HTTP_MAX_BODY (UINT64_C(64) << 20)

/* Fills *c with the defaults.  Errors: -ENOMEM (c is then empty, and
 * loams_config_free is still safe). */
int loams_config_init(loams_config *c);
void loams_config_free(loams_config *c);

/* Sets one setting from text.  `key` is a node key ("lease_ttl") or
 * "namespace.NAME.KEY" (KEY: weight, byte_rate, byte_burst).  `where`
 * names the source for messages ("conf/loams.conf:12", "environment
 * variable LOAMS_LEASE_TTL", "option --lease-ttl").  Errors: -EINVAL
 * (unknown key, bad value or out of range: err says which and what to
 * write; the settings of the test task source - test_tasks, test_journal,
 * test_task_duration, test_write_interval - are refused with a message that
 * names the test binary tests/loams-host-test, which alone has them),
 * -ENOMEM. */
int loams_config_set(loams_config *c, const char *key, const char *value, const char *where,
                     char *err, size_t errlen);

/* Replaces the plugin dirs with copies of dirs[0..n) (--plugin-dir options
 * replace the file's list).  -ENOMEM (the old list is then kept). */
int loams_config_set_plugin_dirs(loams_config *c, const char *const *dirs, size_t n);

/* Reads a config file over *c.  Errors: -ENOENT, -EACCES or -EIO when the
 * file cannot be read (err names it), -EINVAL for a syntax error, an
 * unknown key or a bad value (err: "FILE:LINE: key 'K': ..."), -ENOMEM.
 * Settings read before the failing line stay applied. */
int loams_config_load_file(loams_config *c, const char *path, char *err, size_t errlen);

/* Applies the LOAMS_* variables of `envp` (a NULL-terminated array of
 * "NAME=value", like environ) over *c; other variables are ignored, but
 * LOAMS_TEST_TASKS and the other test settings are refused (see
 * loams_config_set).  Errors: as loams_config_set. */
int loams_config_load_env(loams_config *c, char *const *envp, char *err, size_t errlen);

/* The setting of namespace `name`, or NULL. */
const loams_ns_setting *loams_config_namespace(const loams_config *c, const char *name);

/* Prints the effective settings in the file format (so the output can be
 * used as a config file). */
void loams_config_dump(const loams_config *c, FILE *out);

#endif /* LOAMS_CORE_NODE_CONFIG_H */
