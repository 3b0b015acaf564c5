/*
 * cmd_serve.c - `loams-host serve`: the daemon.  Reads the settings
 * (node_config.h: defaults < config file < LOAMS_* < options), opens the
 * data dir (metastore and stream log, datadir.h) and the plugin registry,
 * starts the worker (worker.h) with its task sources (retention, links,
 * GC, and those of the caller's hooks, cli.h) and the HTTP API
 * (core/http/server.h) on `listen`, and runs until SIGTERM or SIGINT; then
 * it stops accepting HTTP connections, stops claiming, cancels the running
 * tasks, waits at most stop_timeout for them and for the requests in
 * progress, releases every lease and exits 0 (docs/OPERATIONS.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/source.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/datadir.h"
#include "base/log.h"
#include "run/node_config.h"
#include "embed/embed_service.h"
#include "abi/registry.h"
#include "gc/gc_source.h"
#include "link/hot_build.h"
#include "catalog/link_holds.h"
#include "stream/retention_source.h"
#include "base/status.h"
#include "link/link_runtime.h"
#include "run/node.h"
#include "run/worker.h"
#include "http/http_api.h"
#include "http/server.h"

extern char **environ;

#define CMD "loams-host serve"
#define COMPONENT "serve"

/* Options that map to a setting: --lease-ttl 2s sets lease_ttl. */
static const struct {
    const char *option;
    const char *key;
} option_keys[] = {
    {"--data-dir", "data_dir"},
    {"--meta", "meta"},
    {"--node-id", "node_id"},
    {"--listen", "listen"},
    {"--lease-ttl", "lease_ttl"},
    {"--poll-interval", "poll_interval"},
    {"--stop-timeout", "stop_timeout"},
    {"--max-concurrent", "max_concurrent"},
    {"--max-per-namespace", "max_per_namespace"},
    {"--log-level", "log_level"},
    {"--store-put-rate", "store_put_rate"},
    {"--store-get-rate", "store_get_rate"},
};
#define NOPTION_KEYS (sizeof option_keys / sizeof option_keys[0])

typedef struct serve_args {
    const char *config;
    loams_cli_args shared; /* --plugin-dir, --no-default-plugin-dirs */
    struct {
        const char *option;
        const char *key;
        const char *value;
    } sets[32];
    size_t nsets;
    int print_config;
    int help;
} serve_args;

static void serve_usage(FILE *out)
{
    fprintf(out, "Usage: loams-host serve --data-dir DIR [--meta etcd://HOST:PORT/PREFIX]\n"
                 "                        [--plugin-dir DIR]...\n"
                 "                        [--no-default-plugin-dirs] [--config FILE]\n"
                 "                        [--node-id ID] [--listen HOST:PORT] [--lease-ttl T]\n"
                 "                        [--poll-interval T] [--stop-timeout T]\n"
                 "                        [--max-concurrent N] [--max-per-namespace N]\n"
                 "                        [--log-level LEVEL] [--print-config]\n"
                 "                        [--store s3://BUCKET/PREFIX] [--store-endpoint URL]\n"
                 "                        [--store-region R] [--store-path-style BOOL]\n"
                 "                        [--store-put-rate N] [--store-get-rate N]\n"
                 "Runs the worker and the HTTP API (on --listen, 127.0.0.1:7070 by default)\n"
                 "until SIGTERM or SIGINT.  Settings come from the defaults,\n"
                 "then the config file (--config or LOAMS_CONFIG), then LOAMS_* variables, then\n"
                 "these options; see docs/OPERATIONS.md.\n");
}

/* Takes "--opt VALUE" or "--opt=VALUE" at argv[*i]; returns the value or
 * NULL when argv[*i] is not `opt`. *missing is set when the value is. */
static const char *take_value(const char *opt, int argc, char **argv, int *i, int *missing)
{
    size_t n = strlen(opt);
    const char *a = argv[*i];
    if (strncmp(a, opt, n) != 0) {
        return NULL;
    }
    if (a[n] == '=') {
        return a + n + 1;
    }
    if (a[n] != '\0') {
        return NULL;
    }
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    (*i)++;
    return argv[*i];
}

static int parse_args(serve_args *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        int taken = loams_cli_take_shared(&a->shared, "serve", argc, argv, &i);
        if (taken < 0) {
            return taken;
        }
        if (taken > 0) {
            continue;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            a->help = 1;
            continue;
        }
        if (strcmp(argv[i], "--print-config") == 0) {
            a->print_config = 1;
            continue;
        }
        if ((v = take_value("--config", argc, argv, &i, &missing)) != NULL) {
            a->config = v;
            continue;
        }
        size_t k = 0;
        for (; k < NOPTION_KEYS && !missing; k++) {
            if ((v = take_value(option_keys[k].option, argc, argv, &i, &missing)) != NULL) {
                break;
            }
        }
        if (missing) {
            fprintf(stderr, "%s: option %s needs a value\nRun 'loams-host serve --help'.\n", CMD,
                    argv[i]);
            return -EINVAL;
        }
        if (k == NOPTION_KEYS) {
            fprintf(stderr, "%s: unknown option '%s'\nRun 'loams-host serve --help'.\n", CMD,
                    argv[i]);
            return -EINVAL;
        }
        if (a->nsets == sizeof a->sets / sizeof a->sets[0]) {
            fprintf(stderr, "%s: too many options\n", CMD);
            return -EINVAL;
        }
        a->sets[a->nsets].option = option_keys[k].option;
        a->sets[a->nsets].key = option_keys[k].key;
        a->sets[a->nsets].value = v;
        a->nsets++;
    }
    return 0;
}

/* Builds the settings: defaults, file, environment, options.  Prints its
 * errors. */
static int load_settings(const serve_args *a, loams_config *cfg)
{
    char err[1024];
    int rc = loams_config_init(cfg);
    if (rc != 0) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        return rc;
    }
    const char *path = a->config != NULL ? a->config : getenv("LOAMS_CONFIG");
    if (path != NULL && path[0] != '\0') {
        rc = loams_config_load_file(cfg, path, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, "%s: %s\n", CMD, err);
            return rc;
        }
    }
    rc = loams_config_load_env(cfg, environ, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", CMD, err);
        return rc;
    }
    for (size_t i = 0; i < a->nsets; i++) {
        char where[64];
        snprintf(where, sizeof where, "option %s", a->sets[i].option);
        rc = loams_config_set(cfg, a->sets[i].key, a->sets[i].value, where, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, "%s: %s\n", CMD, err);
            return rc;
        }
    }
    /* --store and its settings (taken by the shared options) */
    const char *const store_sets[][3] = {
        {"--store", "store", a->shared.store.url},
        {"--store-endpoint", "store_endpoint", a->shared.store.endpoint},
        {"--store-region", "store_region", a->shared.store.region},
        {"--store-path-style", "store_path_style", a->shared.store.path_style}};
    for (size_t i = 0; i < sizeof store_sets / sizeof store_sets[0]; i++) {
        char where[64];
        snprintf(where, sizeof where, "option %s", store_sets[i][0]);
        if (store_sets[i][2] != NULL &&
            (rc = loams_config_set(cfg, store_sets[i][1], store_sets[i][2], where, err,
                                   sizeof err)) != 0) {
            fprintf(stderr, "%s: %s\n", CMD, err);
            return rc;
        }
    }
    if (a->shared.n_plugin_dirs > 0) {
        rc = loams_config_set_plugin_dirs(cfg, a->shared.plugin_dirs, a->shared.n_plugin_dirs);
        if (rc != 0) {
            fprintf(stderr, "%s: out of memory\n", CMD);
            return rc;
        }
    }
    char why[512];
    if (loams_http_server_check(cfg, why, sizeof why) != 0) {
        fprintf(stderr, "%s: %s\n", CMD, why);
        return -EINVAL;
    }
    if (cfg->data_dir == NULL && !a->print_config) {
        fprintf(stderr,
                "%s: no data directory: give --data-dir DIR (or data_dir in the config "
                "file, or LOAMS_DATA_DIR)\n",
                CMD);
        return -EINVAL;
    }
    return 0;
}

/* Loads the plugins of the plugin path: the configured plugin dirs, then
 * (unless --no-default-plugin-dirs) LOAMS_PLUGIN_PATH and the installed
 * dir.  Rejected files are logged, not fatal. */
static int open_registry(const serve_args *a, const loams_config *cfg, loams_registry **out)
{
    loams_registry_config rc;
    loams_registry_config_defaults(&rc);
    rc.plugin_dirs = (const char *const *)cfg->plugin_dirs;
    rc.n_plugin_dirs = cfg->n_plugin_dirs;
    if (a->shared.no_default_plugin_dirs) {
        rc.path_env = NULL;
        rc.installed_dir = NULL;
    }
    int status = loams_registry_open(&rc, out);
    if (status != 0) {
        fprintf(stderr, "%s: cannot load plugins: %s\n", CMD, loams_strerror(status));
        return status;
    }
    loams_registry_log_rejections(*out);
    loams_source_set_registry(*out); /* system.links reaches other systems' streams */
    LOAMS_INFO(COMPONENT, "%zu plugin(s) loaded from %zu dir(s), %zu file(s) rejected",
               loams_registry_count(*out), loams_registry_dir_count(*out),
               loams_registry_rejected_count(*out));
    return 0;
}

/* Adds `src` to the worker, destroying it when that fails. */
static int add_source(loams_worker *w, loams_task_source *src)
{
    int rc = loams_worker_add_source(w, src);
    if (rc != 0) {
        src->destroy(src->userdata);
        fprintf(stderr, "%s: cannot add the %s task source: %s\n", CMD, src->name,
                loams_strerror(rc));
    }
    return rc;
}

static int build_worker(const loams_config *cfg, loams_datadir *dd, const loams_serve_hooks *hooks,
                        loams_worker **out)
{
    int rc = 0;
    char err[512] = "";
    loams_sched_ns_config *ns = calloc(cfg->n_namespaces ? cfg->n_namespaces : 1, sizeof *ns);
    if (ns == NULL) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        return -ENOMEM;
    }
    for (size_t i = 0; i < cfg->n_namespaces; i++) {
        ns[i] =
            (loams_sched_ns_config){cfg->namespaces[i].name, cfg->namespaces[i].weight,
                                    cfg->namespaces[i].byte_rate, cfg->namespaces[i].byte_burst};
    }
    loams_worker_options o = {
        .meta = dd->meta,
        .node_id = cfg->node_id,
        .clock = NULL,
        .lease_ttl_ms = cfg->lease_ttl_ms,
        .poll_interval_ms = cfg->poll_interval_ms,
        .task_slice_ms = cfg->task_slice_ms,
        .sched = {cfg->max_concurrent, cfg->max_per_namespace, cfg->default_weight, ns,
                  cfg->n_namespaces},
        .memory_budget = {cfg->memory_budget_link, cfg->memory_budget_maintenance,
                          cfg->memory_budget_gc},
    };
    loams_worker *w = NULL;
    rc = loams_worker_new(&o, &w, err, sizeof err);
    free(ns);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", CMD, err[0] ? err : loams_strerror(rc));
        return rc;
    }
    loams_retention_source_options ro = {.log = dd->log,
                                         .meta = dd->meta,
                                         .interval_ms = cfg->retention_interval_ms,
                                         .hold = {.holds = loams_link_holds_for_retention,
                                                  .owing = loams_link_owing_for_retention,
                                                  .userdata = dd->meta,
                                                  .max_hold_ms = cfg->retention_max_hold_ms}};
    loams_task_source src;
    rc = loams_retention_source(&ro, &src, err, sizeof err);
    if (rc == 0) {
        rc = add_source(w, &src);
    } else {
        fprintf(stderr, "%s: %s\n", CMD, err);
    }
    if (rc == 0 && hooks != NULL && hooks->add_sources != NULL) {
        rc = hooks->add_sources(hooks->userdata, w);
    }
    if (rc != 0) {
        loams_worker_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int loams_cmd_serve(int argc, char **argv)
{
    return loams_cmd_serve_hooked(argc, argv, NULL);
}

int loams_cmd_serve_hooked(int argc, char **argv, const loams_serve_hooks *hooks)
{
    int status = 1;
    serve_args a;
    memset(&a, 0, sizeof a);
    loams_config cfg;
    memset(&cfg, 0, sizeof cfg);
    loams_datadir *dd = NULL;
    loams_registry *reg = NULL;
    loams_store *store = NULL;
    loams_worker *w = NULL;
    loams_link_env links;
    loams_embed_service *embed = NULL;
    loams_http_router *router = NULL;
    loams_http_server *http = NULL;
    loams_http_env http_env;
    char err[1024];
    sigset_t stop_signals;
    int rc, sig = 0;

    /* Signals are taken synchronously by this thread (sigwait), blocked
     * before anything else: a SIGTERM that comes while the node starts
     * waits for the start to end and stops it cleanly (it killed the
     * process with status 143 before the mask was set), and every thread
     * started from here on inherits the mask, so none is interrupted. */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (parse_args(&a, argc, argv) != 0) {
        status = 2;
        goto out;
    }
    if (a.help) {
        serve_usage(stdout);
        status = 0;
        goto out;
    }
    if (load_settings(&a, &cfg) != 0) {
        status = 2;
        goto out;
    }
    loams_log_set_level(cfg.log_level);
    if (a.print_config) {
        loams_config_dump(&cfg, stdout);
        status = fflush(stdout) == 0 ? 0 : 1;
        goto out;
    }
    rc =
        loams_datadir_open_meta(cfg.data_dir, cfg.meta, LOAMS_DATADIR_CREATE, &dd, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s: cannot open the data dir %s: %s\n", CMD, cfg.data_dir, err);
        goto out;
    }
    if (open_registry(&a, &cfg, &reg) != 0 || build_worker(&cfg, dd, hooks, &w) != 0) {
        goto out;
    }
    /* Links: one link-apply task per running link; they need the object
     * store, without which the node runs its other tasks only. */
    loams_store_choice store_choice = {cfg.store, cfg.store_endpoint, cfg.store_region,
                                       cfg.store_path_style};
    rc = loams_node_open_store_choice(reg, cfg.data_dir, &store_choice, 0, &store, err, sizeof err);
    if (rc == 0) {
        loams_store_set_budget(store, cfg.store_put_rate, cfg.store_get_rate);
        /* embed(): the node's provider runtimes and the cache
         * (embed/embed_service.h) */
        char cache_dir[4096];
        snprintf(cache_dir, sizeof cache_dir, "%s/embed-cache", cfg.data_dir);
        loams_embed_service_config ecfg = {.meta = dd->meta,
                                           .registry = reg,
                                           .cache_dir = cfg.embed_cache_size > 0 ? cache_dir : NULL,
                                           .cache_max_bytes = cfg.embed_cache_size};
        if ((rc = loams_embed_service_open(&ecfg, &embed, err, sizeof err)) != 0) {
            fprintf(stderr, "%s: %s\n", CMD, err);
            goto out;
        }
        links = (loams_link_env){
            .meta = dd->meta, .log = dd->log, .registry = reg, .store = store, .embed = embed};
        loams_task_source link_source;
        loams_link_source(&links, &link_source);
        if ((rc = loams_worker_add_source(w, &link_source)) != 0) {
            fprintf(stderr, "%s: cannot add the link task source: %s\n", CMD, loams_strerror(rc));
            goto out;
        }
        /* GC deletes the files no commit references (gc.h). */
        loams_gc_source_options go = {.meta = dd->meta,
                                      .store = store,
                                      .interval_ms = cfg.gc_interval_ms,
                                      .grace_ms = cfg.gc_grace_ms};
        loams_task_source gc_source;
        if ((rc = loams_gc_source(&go, &gc_source, err, sizeof err)) != 0) {
            fprintf(stderr, "%s: %s\n", CMD, err);
            goto out;
        }
        if ((rc = add_source(w, &gc_source)) != 0) {
            goto out;
        }
        /* Hot builds: a collection's vector indexes (link/hot_build.h),
         * in work dirs under <data_dir>/work. */
        char work_root[4096];
        snprintf(work_root, sizeof work_root, "%s/work", cfg.data_dir);
        loams_hot_build_options ho = {
            .meta = dd->meta, .registry = reg, .store = store, .work_root = work_root};
        loams_task_source hot_source;
        if ((rc = loams_hot_build_source(&ho, &hot_source, err, sizeof err)) != 0) {
            fprintf(stderr, "%s: %s\n", CMD, err);
            goto out;
        }
        if ((rc = add_source(w, &hot_source)) != 0) {
            goto out;
        }
    } else if (cfg.store != NULL) {
        /* a store the operator named must work: no silent node without links */
        fprintf(stderr, "%s: cannot open the object store %s: %s\n", CMD, cfg.store, err);
        goto out;
    } else {
        LOAMS_WARN(COMPONENT, "links will not run on this node: %s", err);
    }

    /* The HTTP API: its threads start after the mask, so they inherit it. */
    http_env =
        (loams_http_env){.dd = dd, .registry = reg, .store = store, .cfg = &cfg, .worker = w};
    if ((rc = loams_http_router_new(&router)) != 0 || (rc = loams_http_api_routes(router)) != 0) {
        fprintf(stderr, "%s: cannot build the HTTP routes: %s\n", CMD, loams_strerror(rc));
        goto out;
    }
    if ((rc = loams_http_server_start(&http_env, router, &http, err, sizeof err)) != 0) {
        fprintf(stderr, "%s: %s\n", CMD, err);
        goto out;
    }
    LOAMS_INFO(COMPONENT, "HTTP API listening on %s (auth %s)", loams_http_server_address(http),
               cfg.auth ? "on: bearer tokens" : "off");
    rc = loams_worker_start(w);
    if (rc != 0) {
        fprintf(stderr, "%s: cannot start the worker: %s\n", CMD, loams_strerror(rc));
        goto out;
    }
    LOAMS_INFO(COMPONENT,
               "node %s serving data dir %s (data dir id %s%s, metastore %s, pid %ld); stop "
               "with SIGTERM",
               cfg.node_id, cfg.data_dir, dd->id, dd->created ? ", new" : "",
               loams_meta_where(dd->meta), (long)getpid());
    while (sigwait(&stop_signals, &sig) != 0) {
    }
    LOAMS_INFO(COMPONENT,
               "received %s: stopping (no more claims; cancelling tasks; waiting at most %" PRId64
               " ms)",
               sig == SIGTERM ? "SIGTERM" : "SIGINT", cfg.stop_timeout_ms);
    /* One deadline for both: new HTTP requests are refused at once, those
     * in progress may finish while the tasks stop. */
    loams_http_server_quiesce(http, loams_http_now_ms() + cfg.stop_timeout_ms);
    rc = loams_worker_stop(w, cfg.stop_timeout_ms);
    if (loams_http_server_stop(http) != 0) {
        LOAMS_WARN(COMPONENT, "exiting with HTTP requests still running");
        fflush(NULL);
        _exit(0);
    }
    if (rc == -ETIMEDOUT) {
        /* Abandoned runs still use the worker and the metastore: leave
         * them to the exit.  Their leases are released already. */
        LOAMS_WARN(COMPONENT, "exiting with abandoned runs (leases released)");
        fflush(NULL);
        _exit(0);
    }
    LOAMS_INFO(COMPONENT, "stopped: every lease released");
    status = 0;
out:
    if (http != NULL && loams_http_server_stop(http) != 0) {
        fflush(NULL);
        _exit(1);
    }
    loams_http_server_free(http);
    loams_http_router_free(router);
    loams_worker_free(w);
    loams_embed_service_close(embed);
    loams_store_close(store);
    loams_source_set_registry(NULL);
    loams_registry_close(reg);
    loams_datadir_close(dd);
    loams_config_free(&cfg);
    loams_cli_args_free(&a.shared);
    return status;
}
