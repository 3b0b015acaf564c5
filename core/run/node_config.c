/*
 * node_config.c - owns the node settings: their table (name, type, range), the
 * config file parser, the LOAMS_* environment mapping and value parsing
 * (see node_config.h).
 */
#include "run/node_config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/log.h"
#include "base/units.h"
#include "http/listen_addr.h"

typedef enum key_type {
    KT_STRING,   /* char * */
    KT_DIRLIST,  /* char **, ':'-separated */
    KT_DURATION, /* int64_t ms */
    KT_UINT,     /* uint32_t */
    KT_LOGLEVEL, /* loams_log_level */
    KT_NODE_ID,  /* char *, no blanks, 1..127 bytes */
    KT_LISTEN,   /* char *, HOST:PORT */
    KT_SIZE,     /* uint64_t bytes (units.h), from min (0: 0 = none) to max */
    KT_BOOL      /* int 0/1: on|off, true|false, yes|no, 1|0 */
} key_type;

typedef struct key_spec {
    const char *name;
    key_type type;
    size_t offset;
    int64_t min, max; /* KT_DURATION (ms), KT_UINT, KT_SIZE (bytes) */
} key_spec;

#define OFF(f) offsetof(loams_config, f)
static const key_spec keys[] = {
    {"data_dir", KT_STRING, OFF(data_dir), 0, 0},
    {"meta", KT_STRING, OFF(meta), 0, 0},
    {"plugin_dirs", KT_DIRLIST, OFF(plugin_dirs), 0, 0},
    {"node_id", KT_NODE_ID, OFF(node_id), 0, 0},
    {"listen", KT_LISTEN, OFF(listen), 0, 0},
    {"lease_ttl", KT_DURATION, OFF(lease_ttl_ms), 100, 3600000},
    {"poll_interval", KT_DURATION, OFF(poll_interval_ms), 10, 3600000},
    {"stop_timeout", KT_DURATION, OFF(stop_timeout_ms), 0, 600000},
    {"task_slice", KT_DURATION, OFF(task_slice_ms), 100, 86400000},
    {"max_concurrent", KT_UINT, OFF(max_concurrent), 1, 1024},
    {"max_per_namespace", KT_UINT, OFF(max_per_namespace), 1, 1024},
    {"default_weight", KT_UINT, OFF(default_weight), 1, 1000000},
    {"log_level", KT_LOGLEVEL, OFF(log_level), 0, 0},
    {"retention_interval", KT_DURATION, OFF(retention_interval_ms), 1000, 86400000},
    {"retention_max_hold", KT_DURATION, OFF(retention_max_hold_ms), 0, 365LL * 86400000},
    {"gc_interval", KT_DURATION, OFF(gc_interval_ms), 100, 86400000},
    {"gc_grace", KT_DURATION, OFF(gc_grace_ms), 0, 30LL * 86400000},
    {"memory_budget_link", KT_SIZE, OFF(memory_budget_link), 0, 1LL << 50},
    {"memory_budget_maintenance", KT_SIZE, OFF(memory_budget_maintenance), 0, 1LL << 50},
    {"memory_budget_gc", KT_SIZE, OFF(memory_budget_gc), 0, 1LL << 50},
    {"embed_cache_size", KT_SIZE, OFF(embed_cache_size), 0, 1LL << 44},
    {"http_threads", KT_UINT, OFF(http_threads), 1, 256},
    {"http_max_body", KT_SIZE, OFF(http_max_body), 1024, 1LL << 32},
    {"http_max_header_bytes", KT_SIZE, OFF(http_max_header_bytes), 1024, 1LL << 20},
    {"http_max_connections", KT_UINT, OFF(http_max_connections), 1, 65536},
    {"http_max_connections_per_ip", KT_UINT, OFF(http_max_connections_per_ip), 0, 65536},
    {"http_idle_timeout", KT_DURATION, OFF(http_idle_timeout_ms), 1000, 3600000},
    {"auth", KT_BOOL, OFF(auth), 0, 0},
    {"metrics_public", KT_BOOL, OFF(metrics_public), 0, 0},
    {"store", KT_STRING, OFF(store), 0, 0},
    {"store_endpoint", KT_STRING, OFF(store_endpoint), 0, 0},
    {"store_region", KT_STRING, OFF(store_region), 0, 0},
    {"store_path_style", KT_STRING, OFF(store_path_style), 0, 0},
    {"store_put_rate", KT_UINT, OFF(store_put_rate), 0, 1000000},
    {"store_get_rate", KT_UINT, OFF(store_get_rate), 0, 1000000},
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* The settings of the test task source, which only the test binary
 * tests/loams-host-test has (as LOAMS_TEST_* variables): refused here with
 * a message that says so, rather than as unknown keys or silently. */
static const char *const test_only_keys[] = {"test_tasks", "test_journal", "test_task_duration",
                                             "test_write_interval"};
#define NTEST_ONLY (sizeof test_only_keys / sizeof test_only_keys[0])

static int test_only_key(const char *key)
{
    for (size_t i = 0; i < NTEST_ONLY; i++) {
        if (strcmp(key, test_only_keys[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

static void errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int loams_config_init(loams_config *c)
{
    memset(c, 0, sizeof *c);
    c->lease_ttl_ms = 30000;
    c->poll_interval_ms = 1000;
    c->stop_timeout_ms = 10000;
    c->task_slice_ms = 30000;
    c->max_concurrent = 16;
    c->max_per_namespace = 4;
    c->default_weight = 1;
    c->log_level = LOAMS_LOG_INFO;
    c->retention_interval_ms = 300000;
    c->retention_max_hold_ms = LOAMS_CONFIG_DEFAULT_RETENTION_MAX_HOLD_MS;
    c->gc_interval_ms = 60000;
    c->gc_grace_ms = 3600000;
    c->memory_budget_link = LOAMS_CONFIG_DEFAULT_MEMORY_BUDGET_LINK;
    c->memory_budget_maintenance = LOAMS_CONFIG_DEFAULT_MEMORY_BUDGET_MAINTENANCE;
    c->memory_budget_gc = LOAMS_CONFIG_DEFAULT_MEMORY_BUDGET_GC;
    c->embed_cache_size = LOAMS_CONFIG_DEFAULT_EMBED_CACHE_SIZE;
    c->http_threads = 4;
    c->http_max_body = LOAMS_CONFIG_DEFAULT_HTTP_MAX_BODY;
    c->http_max_header_bytes = 16384;
    c->http_max_connections = 512;
    c->http_max_connections_per_ip = 0;
    c->http_idle_timeout_ms = 30000;
    c->auth = 1;
    c->metrics_public = 0;
    char host[256];
    if (gethostname(host, sizeof host) != 0 || host[0] == '\0') {
        snprintf(host, sizeof host, "localhost");
    }
    host[sizeof host - 1] = '\0';
    char id[300];
    snprintf(id, sizeof id, "%.100s:%ld", host, (long)getpid());
    c->node_id = strdup(id);
    c->listen = strdup(LOAMS_CONFIG_DEFAULT_LISTEN);
    if (c->node_id == NULL || c->listen == NULL) {
        loams_config_free(c);
        return -ENOMEM;
    }
    return 0;
}

static void free_dirs(char **dirs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(dirs[i]);
    }
    free(dirs);
}

void loams_config_free(loams_config *c)
{
    if (c == NULL) {
        return;
    }
    free(c->data_dir);
    free(c->meta);
    free_dirs(c->plugin_dirs, c->n_plugin_dirs);
    free(c->node_id);
    free(c->listen);
    free(c->store);
    free(c->store_endpoint);
    free(c->store_region);
    free(c->store_path_style);
    for (size_t i = 0; i < c->n_namespaces; i++) {
        free(c->namespaces[i].name);
    }
    free(c->namespaces);
    memset(c, 0, sizeof *c);
}

/* ---- value parsing ---- */

/* Parses a decimal integer prefix; *end gets the rest (blanks skipped). */
static int parse_u64_prefix(const char *text, uint64_t *v, const char **end)
{
    const char *p = text;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (!isdigit((unsigned char)*p)) {
        return -EINVAL;
    }
    uint64_t x = 0;
    while (isdigit((unsigned char)*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10) {
            return -EINVAL;
        }
        x = x * 10 + d;
        p++;
    }
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    *v = x;
    *end = p;
    return 0;
}

/* A duration in whole milliseconds (units.h syntax).  -EINVAL otherwise. */
static int parse_duration_ms(const char *text, int64_t *ms)
{
    int64_t us;
    if (loams_duration_parse(text, &us, NULL, 0) != 0 || us < 0 || us % 1000 != 0) {
        return -EINVAL;
    }
    *ms = us / 1000;
    return 0;
}

/* A size (units.h syntax), with an optional "/s" when per_second. */
static int parse_size(const char *text, int per_second, uint64_t *bytes)
{
    char buf[64];
    size_t n = strlen(text);
    if (n >= sizeof buf) {
        return -EINVAL;
    }
    memcpy(buf, text, n + 1);
    if (per_second && n >= 2 && strcmp(buf + n - 2, "/s") == 0) {
        buf[n - 2] = '\0';
    }
    if (loams_size_parse(buf, bytes, NULL, 0) != 0 || *bytes > (UINT64_C(1) << 62)) {
        return -EINVAL;
    }
    return 0;
}

static int valid_ns_name(const char *name, size_t len)
{
    if (len == 0 || len > 127) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (!isalnum(ch) && ch != '_' && ch != '-') {
            return 0;
        }
    }
    return 1;
}

static int set_string(char **slot, const char *value)
{
    char *copy = strdup(value);
    if (copy == NULL) {
        return -ENOMEM;
    }
    free(*slot);
    *slot = copy;
    return 0;
}

static int set_dirlist(loams_config *c, const char *value)
{
    char **dirs = NULL;
    size_t n = 0;
    const char *p = value;
    while (*p != '\0') {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        /* Each entry without the blanks around it ("/a : /b"); a blank
         * entry is none.  (The dump writes entries joined by ':', so a
         * trailing blank would not load back the same.) */
        size_t from = 0, to = len;
        while (from < to && (p[from] == ' ' || p[from] == '\t')) {
            from++;
        }
        while (to > from && (p[to - 1] == ' ' || p[to - 1] == '\t')) {
            to--;
        }
        if (to > from) {
            char **grown = realloc(dirs, (n + 1) * sizeof *dirs);
            if (grown == NULL) {
                free_dirs(dirs, n);
                return -ENOMEM;
            }
            dirs = grown;
            dirs[n] = strndup(p + from, to - from);
            if (dirs[n] == NULL) {
                free_dirs(dirs, n);
                return -ENOMEM;
            }
            n++;
        }
        p += len;
        if (*p == ':') {
            p++;
        }
    }
    free_dirs(c->plugin_dirs, c->n_plugin_dirs);
    c->plugin_dirs = dirs;
    c->n_plugin_dirs = n;
    return 0;
}

int loams_config_set_plugin_dirs(loams_config *c, const char *const *dirs, size_t n)
{
    char **copy = calloc(n ? n : 1, sizeof *copy);
    if (copy == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        copy[i] = strdup(dirs[i]);
        if (copy[i] == NULL) {
            free_dirs(copy, i);
            return -ENOMEM;
        }
    }
    free_dirs(c->plugin_dirs, c->n_plugin_dirs);
    c->plugin_dirs = copy;
    c->n_plugin_dirs = n;
    return 0;
}

static int ns_slot(loams_config *c, const char *name, size_t len, loams_ns_setting **out)
{
    for (size_t i = 0; i < c->n_namespaces; i++) {
        if (strlen(c->namespaces[i].name) == len && memcmp(c->namespaces[i].name, name, len) == 0) {
            *out = &c->namespaces[i];
            return 0;
        }
    }
    loams_ns_setting *grown = realloc(c->namespaces, (c->n_namespaces + 1) * sizeof *grown);
    if (grown == NULL) {
        return -ENOMEM;
    }
    c->namespaces = grown;
    loams_ns_setting *ns = &c->namespaces[c->n_namespaces];
    memset(ns, 0, sizeof *ns);
    ns->name = strndup(name, len);
    if (ns->name == NULL) {
        return -ENOMEM;
    }
    c->n_namespaces++;
    *out = ns;
    return 0;
}

static int set_namespace_key(loams_config *c, const char *key, const char *value, const char *where,
                             char *err, size_t errlen)
{
    const char *name = key + strlen("namespace.");
    const char *dot = strrchr(name, '.');
    if (dot == NULL || !valid_ns_name(name, (size_t)(dot - name))) {
        errf(err, errlen,
             "%s: key '%s': expected namespace.NAME.KEY with a NAME of letters, digits, "
             "'_' and '-'",
             where, key);
        return -EINVAL;
    }
    const char *sub = dot + 1;
    int is_rate = strcmp(sub, "byte_rate") == 0;
    uint64_t v;
    const char *rest;
    if (strcmp(sub, "weight") == 0) {
        if (parse_u64_prefix(value, &v, &rest) < 0 || *rest != '\0' || v < 1 || v > 1000000) {
            errf(err, errlen,
                 "%s: key '%s': '%s' is not a weight (write a whole number from 1 to 1000000)",
                 where, key, value);
            return -EINVAL;
        }
    } else if (is_rate || strcmp(sub, "byte_burst") == 0) {
        if (parse_size(value, is_rate, &v) < 0) {
            errf(err, errlen,
                 "%s: key '%s': '%s' is not a byte %s (write e.g. 1048576, 512KiB, 10MiB%s)", where,
                 key, value, is_rate ? "rate" : "size", is_rate ? " or 10MiB/s; 0 = no cap" : "");
            return -EINVAL;
        }
    } else {
        errf(err, errlen, "%s: unknown namespace key '%s' (known: weight, byte_rate, byte_burst)",
             where, sub);
        return -EINVAL;
    }
    loams_ns_setting *ns;
    int rc = ns_slot(c, name, (size_t)(dot - name), &ns);
    if (rc < 0) {
        return rc;
    }
    if (sub[0] == 'w') {
        ns->weight = (uint32_t)v;
    } else if (is_rate) {
        ns->byte_rate = v;
    } else {
        ns->byte_burst = v;
    }
    return 0;
}

static void known_keys(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NKEYS && at < len; i++) {
        int n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", keys[i].name);
        if (n < 0) {
            break;
        }
        at += (size_t)n;
    }
}

int loams_config_set(loams_config *c, const char *key, const char *value, const char *where,
                     char *err, size_t errlen)
{
    if (key == NULL || value == NULL) {
        return -EINVAL;
    }
    if (where == NULL) {
        where = "config";
    }
    if (strncmp(key, "namespace.", 10) == 0) {
        return set_namespace_key(c, key, value, where, err, errlen);
    }
    const key_spec *k = NULL;
    for (size_t i = 0; i < NKEYS; i++) {
        if (strcmp(keys[i].name, key) == 0) {
            k = &keys[i];
        }
    }
    if (k == NULL && test_only_key(key)) {
        errf(err, errlen,
             "%s: '%s' is a setting of the test task source, which only the test binary "
             "tests/loams-host-test has (loams-host runs no test tasks)",
             where, key);
        return -EINVAL;
    }
    if (k == NULL) {
        char list[2048];
        known_keys(list, sizeof list);
        errf(err, errlen, "%s: unknown key '%s' (known keys: %s)", where, key, list);
        return -EINVAL;
    }
    char *base = (char *)c;
    switch (k->type) {
    case KT_STRING:
        if (value[0] == '\0') {
            errf(err, errlen, "%s: key '%s': the value is empty", where, key);
            return -EINVAL;
        }
        return set_string((char **)(base + k->offset), value);
    case KT_DIRLIST: return set_dirlist(c, value);
    case KT_NODE_ID: {
        size_t n = strlen(value);
        int bad = n == 0 || n > 127;
        for (size_t i = 0; i < n && !bad; i++) {
            bad = isspace((unsigned char)value[i]) || !isprint((unsigned char)value[i]);
        }
        if (bad) {
            errf(err, errlen,
                 "%s: key '%s': '%s' is not a node id (1 to 127 printable characters, no "
                 "blanks)",
                 where, key, value);
            return -EINVAL;
        }
        return set_string((char **)(base + k->offset), value);
    }
    case KT_LISTEN: {
        loams_listen_addr addr;
        char why[160];
        if (loams_listen_addr_parse(value, &addr, why, sizeof why) != 0) {
            errf(err, errlen,
                 "%s: key '%s': '%s' is not an address: %s (write HOST:PORT, e.g. "
                 "127.0.0.1:7070)",
                 where, key, value, why);
            return -EINVAL;
        }
        return set_string((char **)(base + k->offset), value);
    }
    case KT_DURATION: {
        int64_t ms;
        if (parse_duration_ms(value, &ms) < 0) {
            errf(err, errlen,
                 "%s: key '%s': '%s' is not a duration in whole milliseconds (write a "
                 "number with a unit: 500ms, 30s, 1.5s, 5m, 2h, 1d)",
                 where, key, value);
            return -EINVAL;
        }
        if (ms < k->min || ms > k->max) {
            errf(err, errlen,
                 "%s: key '%s': %s is out of range (from %" PRId64 "ms to %" PRId64 "ms)", where,
                 key, value, k->min, k->max);
            return -EINVAL;
        }
        *(int64_t *)(base + k->offset) = ms;
        return 0;
    }
    case KT_UINT: {
        uint64_t v;
        const char *rest;
        if (parse_u64_prefix(value, &v, &rest) < 0 || *rest != '\0' || (int64_t)v < k->min ||
            v > (uint64_t)k->max) {
            errf(err, errlen,
                 "%s: key '%s': '%s' is not valid (write a whole number from %" PRId64
                 " to %" PRId64 ")",
                 where, key, value, k->min, k->max);
            return -EINVAL;
        }
        *(uint32_t *)(base + k->offset) = (uint32_t)v;
        return 0;
    }
    case KT_LOGLEVEL: {
        loams_log_level level;
        if (loams_log_level_parse(value, &level) < 0) {
            errf(err, errlen,
                 "%s: key '%s': '%s' is not a log level (write error, warn, info or debug)", where,
                 key, value);
            return -EINVAL;
        }
        *(loams_log_level *)(base + k->offset) = level;
        return 0;
    }
    case KT_SIZE: {
        uint64_t v;
        if (k->min == 0 && (parse_size(value, 0, &v) < 0 || v > (uint64_t)k->max)) {
            errf(err, errlen,
                 "%s: key '%s': '%s' is not a size (write e.g. 512MiB, 2GiB or 1073741824; 0 = "
                 "no budget)",
                 where, key, value);
            return -EINVAL;
        }
        if (k->min > 0 &&
            (parse_size(value, 0, &v) < 0 || v < (uint64_t)k->min || v > (uint64_t)k->max)) {
            char lo[32], hi[32];
            loams_size_format((uint64_t)k->min, lo, sizeof lo);
            loams_size_format((uint64_t)k->max, hi, sizeof hi);
            errf(err, errlen, "%s: key '%s': '%s' is not a size from %s to %s (write e.g. 64MiB)",
                 where, key, value, lo, hi);
            return -EINVAL;
        }
        *(uint64_t *)(base + k->offset) = v;
        return 0;
    }
    case KT_BOOL: {
        static const char *const yes[] = {"on", "true", "yes", "1"};
        static const char *const no[] = {"off", "false", "no", "0"};
        for (size_t i = 0; i < 4; i++) {
            if (strcasecmp(value, yes[i]) == 0 || strcasecmp(value, no[i]) == 0) {
                *(int *)(base + k->offset) = strcasecmp(value, yes[i]) == 0;
                return 0;
            }
        }
        errf(err, errlen, "%s: key '%s': '%s' is not on or off (write on, off, true or false)",
             where, key, value);
        return -EINVAL;
    }
    }
    return -EINVAL;
}

/* ---- the file ---- */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) {
        s[--n] = '\0';
    }
    return s;
}

static int valid_key_word(const char *k)
{
    if (*k == '\0') {
        return 0;
    }
    for (; *k; k++) {
        if (!(islower((unsigned char)*k) || isdigit((unsigned char)*k) || *k == '_')) {
            return 0;
        }
    }
    return 1;
}

int loams_config_load_file(loams_config *c, const char *path, char *err, size_t errlen)
{
    int rc = 0;
    char *line = NULL;
    size_t cap = 0;
    char section[160] = ""; /* "" = node keys; else "namespace.NAME" */
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        rc = -errno;
        errf(err, errlen,
             "cannot read config file %s: %s (check the path given to --config "
             "or LOAMS_CONFIG)",
             path, strerror(errno));
        return rc;
    }
    long lineno = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        char where[600];
        snprintf(where, sizeof where, "%s:%ld", path, lineno);
        if (strlen(line) < (size_t)got) {
            errf(err, errlen, "%s: the line holds a NUL byte (is this a text file?)", where);
            rc = -EINVAL;
            goto out;
        }
        char *s = trim(line);
        if (*s == '\0' || *s == '#' || *s == ';') {
            continue;
        }
        if (*s == '[') {
            size_t n = strlen(s);
            if (s[n - 1] != ']') {
                errf(err, errlen, "%s: section header '%s' has no closing ']'", where, s);
                rc = -EINVAL;
                goto out;
            }
            s[n - 1] = '\0';
            char *name = trim(s + 1);
            if (strcmp(name, "host") == 0) {
                section[0] = '\0';
            } else if (strncmp(name, "namespace.", 10) == 0 &&
                       valid_ns_name(name + 10, strlen(name + 10))) {
                snprintf(section, sizeof section, "%s", name);
            } else {
                errf(err, errlen,
                     "%s: unknown section [%s] (write [host] or [namespace.NAME], NAME of "
                     "letters, digits, '_' and '-')",
                     where, name);
                rc = -EINVAL;
                goto out;
            }
            continue;
        }
        char *eq = strchr(s, '=');
        if (eq == NULL) {
            errf(err, errlen, "%s: expected 'key = value', found '%s'", where, s);
            rc = -EINVAL;
            goto out;
        }
        *eq = '\0';
        char *key = trim(s);
        char *value = trim(eq + 1);
        size_t vn = strlen(value);
        if (vn >= 2 && value[0] == '"' && value[vn - 1] == '"') {
            value[vn - 1] = '\0';
            value++;
        }
        if (!valid_key_word(key)) {
            errf(err, errlen, "%s: '%s' is not a key (keys are lower-case words with '_')", where,
                 key);
            rc = -EINVAL;
            goto out;
        }
        char full[400];
        if (section[0] != '\0') {
            snprintf(full, sizeof full, "%s.%s", section, key);
        } else {
            snprintf(full, sizeof full, "%s", key);
        }
        rc = loams_config_set(c, full, value, where, err, errlen);
        if (rc < 0) {
            goto out;
        }
    }
    if (ferror(f)) {
        rc = -EIO;
        errf(err, errlen, "cannot read config file %s: read error", path);
    }
out:
    free(line);
    fclose(f);
    return rc;
}

/* ---- the environment ---- */

static int env_ns_list(loams_config *c, const char *var, const char *value, const char *sub,
                       char *err, size_t errlen)
{
    int rc = 0;
    char *copy = strdup(value);
    if (copy == NULL) {
        return -ENOMEM;
    }
    char where[128];
    snprintf(where, sizeof where, "environment variable %s", var);
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
        item = trim(item);
        if (*item == '\0') {
            continue;
        }
        char *eq = strchr(item, '=');
        if (eq == NULL) {
            errf(err, errlen, "%s: entry '%s' is not NAME=VALUE (e.g. %s=analytics=3,web=1)", where,
                 item, var);
            rc = -EINVAL;
            goto out;
        }
        *eq = '\0';
        char key[300];
        snprintf(key, sizeof key, "namespace.%s.%s", trim(item), sub);
        rc = loams_config_set(c, key, trim(eq + 1), where, err, errlen);
        if (rc < 0) {
            goto out;
        }
    }
out:
    free(copy);
    return rc;
}

/* The environment variable of `key`: "LOAMS_" and the key in capitals.
 * Returns its length. */
static size_t env_name(const char *key, char *var, size_t size)
{
    size_t n = (size_t)snprintf(var, size, "LOAMS_");
    for (const char *p = key; *p && n < size - 1; p++) {
        var[n++] = (char)toupper((unsigned char)*p);
    }
    var[n] = '\0';
    return n;
}

int loams_config_load_env(loams_config *c, char *const *envp, char *err, size_t errlen)
{
    static const struct {
        const char *var;
        const char *sub;
    } ns_vars[] = {{"LOAMS_NAMESPACE_WEIGHTS", "weight"},
                   {"LOAMS_NAMESPACE_BYTE_RATES", "byte_rate"},
                   {"LOAMS_NAMESPACE_BYTE_BURSTS", "byte_burst"}};
    if (envp == NULL) {
        return 0;
    }
    /* Keys in table order, so that the result does not depend on the
     * order of the environment. */
    for (size_t k = 0; k < NKEYS; k++) {
        char var[64];
        size_t n = env_name(keys[k].name, var, sizeof var);
        for (char *const *e = envp; *e != NULL; e++) {
            if (strncmp(*e, var, n) == 0 && (*e)[n] == '=') {
                char where[96];
                snprintf(where, sizeof where, "environment variable %s", var);
                int rc = loams_config_set(c, keys[k].name, *e + n + 1, where, err, errlen);
                if (rc < 0) {
                    return rc;
                }
            }
        }
    }
    for (size_t k = 0; k < NTEST_ONLY; k++) {
        char var[64];
        size_t n = env_name(test_only_keys[k], var, sizeof var);
        for (char *const *e = envp; *e != NULL; e++) {
            if (strncmp(*e, var, n) == 0 && (*e)[n] == '=') {
                char where[96];
                snprintf(where, sizeof where, "environment variable %s", var);
                return loams_config_set(c, test_only_keys[k], *e + n + 1, where, err, errlen);
            }
        }
    }
    for (size_t v = 0; v < sizeof ns_vars / sizeof ns_vars[0]; v++) {
        size_t n = strlen(ns_vars[v].var);
        for (char *const *e = envp; *e != NULL; e++) {
            if (strncmp(*e, ns_vars[v].var, n) == 0 && (*e)[n] == '=') {
                int rc = env_ns_list(c, ns_vars[v].var, *e + n + 1, ns_vars[v].sub, err, errlen);
                if (rc < 0) {
                    return rc;
                }
            }
        }
    }
    return 0;
}

const loams_ns_setting *loams_config_namespace(const loams_config *c, const char *name)
{
    for (size_t i = 0; i < c->n_namespaces; i++) {
        if (strcmp(c->namespaces[i].name, name) == 0) {
            return &c->namespaces[i];
        }
    }
    return NULL;
}

/* ---- printing ---- */

static void print_duration(FILE *out, const char *key, int64_t ms)
{
    char text[64];
    loams_duration_format(ms * 1000, text, sizeof text);
    fprintf(out, "%s = %s\n", key, text);
}

static void print_size(FILE *out, const char *key, uint64_t b, const char *suffix)
{
    char text[64];
    loams_size_format(b, text, sizeof text);
    fprintf(out, "%s = %s%s\n", key, text, suffix);
}

/* Writes `key = value` so that the file parser reads value back: quoted
 * when trimming or unquoting would change it (blanks at either end, a
 * trailing CR, or a value that is itself wrapped in double quotes). */
static void print_string(FILE *out, const char *key, const char *v)
{
    size_t n = strlen(v);
    int quote = n > 0 && (v[0] == ' ' || v[0] == '\t' || strchr(" \t\r", v[n - 1]) != NULL ||
                          (n >= 2 && v[0] == '"' && v[n - 1] == '"'));
    fprintf(out, quote ? "%s = \"%s\"\n" : "%s = %s\n", key, v);
}

void loams_config_dump(const loams_config *c, FILE *out)
{
    static const char *const levels[] = {"error", "warn", "info", "debug"};
    fprintf(out, "[host]\n");
    if (c->meta != NULL) {
        print_string(out, "meta", c->meta);
    }
    if (c->data_dir != NULL) {
        print_string(out, "data_dir", c->data_dir);
    }
    char *dirs = NULL;
    size_t dirs_len = 0;
    FILE *m = open_memstream(&dirs, &dirs_len);
    for (size_t i = 0; m != NULL && i < c->n_plugin_dirs; i++) {
        fprintf(m, "%s%s", i ? ":" : "", c->plugin_dirs[i]);
    }
    if (m != NULL && fclose(m) == 0 && dirs != NULL) {
        print_string(out, "plugin_dirs", dirs);
    }
    free(dirs);
    print_string(out, "node_id", c->node_id ? c->node_id : "");
    print_string(out, "listen", c->listen ? c->listen : "");
    print_duration(out, "lease_ttl", c->lease_ttl_ms);
    print_duration(out, "poll_interval", c->poll_interval_ms);
    print_duration(out, "stop_timeout", c->stop_timeout_ms);
    print_duration(out, "task_slice", c->task_slice_ms);
    fprintf(out, "max_concurrent = %u\nmax_per_namespace = %u\ndefault_weight = %u\n",
            c->max_concurrent, c->max_per_namespace, c->default_weight);
    fprintf(out, "log_level = %s\n", levels[c->log_level <= LOAMS_LOG_DEBUG ? c->log_level : 2]);
    print_duration(out, "retention_interval", c->retention_interval_ms);
    print_duration(out, "retention_max_hold", c->retention_max_hold_ms);
    print_duration(out, "gc_interval", c->gc_interval_ms);
    print_duration(out, "gc_grace", c->gc_grace_ms);
    print_size(out, "memory_budget_link", c->memory_budget_link, "");
    print_size(out, "memory_budget_maintenance", c->memory_budget_maintenance, "");
    print_size(out, "memory_budget_gc", c->memory_budget_gc, "");
    print_size(out, "embed_cache_size", c->embed_cache_size, "");
    fprintf(out, "http_threads = %u\n", c->http_threads);
    print_size(out, "http_max_body", c->http_max_body, "");
    print_size(out, "http_max_header_bytes", c->http_max_header_bytes, "");
    fprintf(out, "http_max_connections = %u\nhttp_max_connections_per_ip = %u\n",
            c->http_max_connections, c->http_max_connections_per_ip);
    print_duration(out, "http_idle_timeout", c->http_idle_timeout_ms);
    fprintf(out, "auth = %s\nmetrics_public = %s\n", c->auth ? "on" : "off",
            c->metrics_public ? "true" : "false");
    const char *const store_keys[][2] = {{"store", c->store},
                                         {"store_endpoint", c->store_endpoint},
                                         {"store_region", c->store_region},
                                         {"store_path_style", c->store_path_style}};
    for (size_t i = 0; i < sizeof store_keys / sizeof store_keys[0]; i++) {
        if (store_keys[i][1] != NULL) {
            print_string(out, store_keys[i][0], store_keys[i][1]);
        }
    }
    fprintf(out, "store_put_rate = %u\nstore_get_rate = %u\n", c->store_put_rate,
            c->store_get_rate);
    for (size_t i = 0; i < c->n_namespaces; i++) {
        const loams_ns_setting *ns = &c->namespaces[i];
        if (ns->weight == 0 && ns->byte_rate == 0 && ns->byte_burst == 0) {
            continue; /* all defaults (e.g. byte_rate = 0): an empty section loads as none */
        }
        fprintf(out, "\n[namespace.%s]\n", ns->name);
        if (ns->weight) {
            fprintf(out, "weight = %u\n", ns->weight);
        }
        if (ns->byte_rate) {
            print_size(out, "byte_rate", ns->byte_rate, "/s");
        }
        if (ns->byte_burst) {
            print_size(out, "byte_burst", ns->byte_burst, "");
        }
    }
}
