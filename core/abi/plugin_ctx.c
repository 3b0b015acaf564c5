/*
 * plugin_ctx.c - owns loams_ctx: plugin identity, validated options, the
 * last error, cancellation and memory accounting (plugin_ctx.h).
 */
#include "abi/plugin_ctx.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "base/mem_account.h"
#include "base/units.h"

#define ERR_MAX LOAMS_CTX_ERROR_MAX
#define SECRET_TEXT "****"

struct loams_ctx {
    const loams_plugin_descriptor *desc;
    char prefix[160];
    char *task;
    uint64_t epoch;
    size_t n_specs;
    char **values; /* n_specs entries, NULL when unset */

    pthread_mutex_t err_lock;
    char err[ERR_MAX];

    const int *cancel;
    int (*cancel_poll)(void *ud);
    void *cancel_ud;

    uint64_t mem_in_use; /* atomics */
    uint64_t mem_peak;
    uint64_t mem_limit;
    loams_mem_account *account; /* a reference; NULL: none */
    int charge_caller;          /* blocks go to the calling thread's account */

    void *embed; /* the embed binding (embed/embed_host.h), owned */
    void (*embed_free)(void *embed);
    struct loams_meta *meta; /* the schema registry's metastore, not owned */
};

static uint64_t process_in_use;
static uint64_t process_peak;

static _Thread_local const loams_ctx *tls_err_ctx;
static _Thread_local int tls_err_set;
static _Thread_local char tls_err[ERR_MAX];
static _Thread_local loams_ctx *tls_current;

const char *loams_kind_name(uint32_t kind)
{
    switch (kind) {
    case LOAMS_KIND_DECODER: return "decoder";
    case LOAMS_KIND_TRANSFORM: return "transform";
    case LOAMS_KIND_TARGET: return "target";
    case LOAMS_KIND_EMBED: return "embed";
    case LOAMS_KIND_STORE: return "store";
    case LOAMS_KIND_SOURCE: return "source";
    default: return "unknown";
    }
}

static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

static size_t spec_count(const loams_plugin_descriptor *desc)
{
    size_t n = 0;
    if (desc->options != NULL) {
        while (desc->options[n].name != NULL) {
            n++;
        }
    }
    return n;
}

const loams_option_spec *loams_option_spec_find(const loams_plugin_descriptor *desc,
                                                const char *name)
{
    if (desc->options == NULL || name == NULL) {
        return NULL;
    }
    for (const loams_option_spec *s = desc->options; s->name != NULL; s++) {
        if (strcasecmp(s->name, name) == 0) {
            return s;
        }
    }
    return NULL;
}

/* "a, b, c" of the spec's names, into out. */
static void list_names(const loams_plugin_descriptor *desc, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (const loams_option_spec *s = desc->options; s != NULL && s->name != NULL; s++) {
        int n = snprintf(out + len, size - len, "%s%s", len > 0 ? ", " : "", s->name);
        if (n < 0 || (size_t)n >= size - len) {
            break;
        }
        len += (size_t)n;
    }
}

/* Finds `value` among spec->choices ("a|b|c", case-insensitive); the
 * canonical word goes to canon[0..size).  0 when found. */
static int enum_match(const loams_option_spec *spec, const char *value, char *canon, size_t size)
{
    const char *p = spec->choices;
    size_t vlen = strlen(value);
    while (p != NULL && *p != '\0') {
        const char *bar = strchr(p, '|');
        size_t wlen = bar != NULL ? (size_t)(bar - p) : strlen(p);
        if (wlen == vlen && strncasecmp(p, value, wlen) == 0 && wlen < size) {
            memcpy(canon, p, wlen);
            canon[wlen] = '\0';
            return 0;
        }
        p = bar != NULL ? bar + 1 : NULL;
    }
    return -1;
}

/* Checks one value against its spec; the value to store goes to canon
 * (BOOL and ENUM are canonicalized, others are copied). */
static int check_value(const loams_plugin_descriptor *desc, const loams_option_spec *spec,
                       const char *value, const char *origin, char *canon, size_t canon_size,
                       char *err, size_t errlen)
{
    int secret = (spec->flags & LOAMS_OPT_SECRET) != 0;
    const char *shown = secret ? SECRET_TEXT : value;
    char why[512];
    snprintf(canon, canon_size, "%s", value);
    switch (spec->type) {
    case LOAMS_OPT_STRING: return 0;
    case LOAMS_OPT_INT: {
        char *end;
        errno = 0;
        (void)strtoll(value, &end, 10);
        if (value[0] == '\0' || *end != '\0' || errno == ERANGE) {
            return fail(err, errlen, LOAMS_EINPUT,
                        "%soption '%s' of %s: '%s' is not an integer (write a decimal number "
                        "between %lld and %lld)",
                        origin, spec->name, desc->name, shown, LLONG_MIN, LLONG_MAX);
        }
        return 0;
    }
    case LOAMS_OPT_BOOL:
        if (strcasecmp(value, "true") == 0 || strcasecmp(value, "false") == 0) {
            snprintf(canon, canon_size, "%s", strcasecmp(value, "true") == 0 ? "true" : "false");
            return 0;
        }
        return fail(err, errlen, LOAMS_EINPUT,
                    "%soption '%s' of %s: '%s' is not a boolean (write true or false)", origin,
                    spec->name, desc->name, shown);
    case LOAMS_OPT_SIZE: {
        uint64_t bytes;
        if (loams_size_parse(value, &bytes, why, sizeof why) == 0) {
            return 0;
        }
        if (secret) {
            snprintf(why, sizeof why, "invalid size (value hidden: the option is secret)");
        }
        return fail(err, errlen, LOAMS_EINPUT, "%soption '%s' of %s: %s", origin, spec->name,
                    desc->name, why);
    }
    case LOAMS_OPT_DURATION: {
        int64_t us;
        if (loams_duration_parse(value, &us, why, sizeof why) == 0) {
            return 0;
        }
        if (secret) {
            snprintf(why, sizeof why, "invalid duration (value hidden: the option is secret)");
        }
        return fail(err, errlen, LOAMS_EINPUT, "%soption '%s' of %s: %s", origin, spec->name,
                    desc->name, why);
    }
    case LOAMS_OPT_ENUM:
        if (spec->choices == NULL || spec->choices[0] == '\0') {
            return fail(err, errlen, LOAMS_EABI,
                        "plugin %s declares option '%s' as an enum without choices (a bug in "
                        "the plugin: report it to its author)",
                        desc->name, spec->name);
        }
        if (enum_match(spec, value, canon, canon_size) == 0) {
            return 0;
        }
        return fail(err, errlen, LOAMS_EINPUT,
                    "%soption '%s' of %s: '%s' is not one of the accepted values (%s)", origin,
                    spec->name, desc->name, shown, spec->choices);
    default:
        return fail(err, errlen, LOAMS_EABI,
                    "plugin %s declares option '%s' with unknown type %u (a bug in the plugin: "
                    "report it to its author)",
                    desc->name, spec->name, (unsigned)spec->type);
    }
}

/* Validates opts; when values != NULL, stores the final value of each spec
 * (given, default or NULL) into values[0..n_specs). */
static int resolve(const loams_plugin_descriptor *desc, const loams_option_kv *opts, size_t n,
                   char **values, size_t *bad, char *err, size_t errlen)
{
    size_t n_specs = spec_count(desc);
    char canon[1024];
    for (size_t i = 0; i < n; i++) {
        if (bad != NULL) {
            *bad = i; /* the option at fault, if this one fails */
        }
        if (opts[i].name == NULL || opts[i].value == NULL) {
            return fail(err, errlen, LOAMS_EINPUT, "option %zu of %s has no %s", i + 1, desc->name,
                        opts[i].name == NULL ? "name" : "value");
        }
        const loams_option_spec *spec = loams_option_spec_find(desc, opts[i].name);
        if (spec == NULL) {
            if (n_specs == 0) {
                return fail(err, errlen, LOAMS_EINPUT, "unknown option '%s': %s accepts no options",
                            opts[i].name, desc->name);
            }
            char names[1024];
            list_names(desc, names, sizeof names);
            return fail(err, errlen, LOAMS_EINPUT,
                        "unknown option '%s' for %s (accepted options: %s)", opts[i].name,
                        desc->name, names);
        }
        for (size_t j = 0; j < i; j++) {
            if (strcasecmp(opts[j].name, opts[i].name) == 0) {
                return fail(err, errlen, LOAMS_EINPUT,
                            "option '%s' of %s is given twice (keep one)", spec->name, desc->name);
            }
        }
        int rc = check_value(desc, spec, opts[i].value, "", canon, sizeof canon, err, errlen);
        if (rc != 0) {
            return rc;
        }
        if (values != NULL) {
            size_t at = (size_t)(spec - desc->options);
            values[at] = strdup(strlen(opts[i].value) < sizeof canon - 1 ? canon : opts[i].value);
            if (values[at] == NULL) {
                return -ENOMEM;
            }
        }
    }
    if (bad != NULL) {
        *bad = SIZE_MAX; /* what fails from here is the plugin's table */
    }
    for (size_t s = 0; s < n_specs; s++) {
        const loams_option_spec *spec = &desc->options[s];
        int given = 0;
        for (size_t i = 0; i < n && !given; i++) {
            given = strcasecmp(opts[i].name, spec->name) == 0;
        }
        if (given) {
            continue;
        }
        if (spec->def != NULL) {
            int rc = check_value(desc, spec, spec->def, "the default of ", canon, sizeof canon, err,
                                 errlen);
            if (rc == LOAMS_EINPUT) {
                rc = LOAMS_EABI; /* a bad default is the plugin's bug */
            }
            if (rc != 0) {
                return rc;
            }
            if (values != NULL) {
                values[s] = strdup(canon);
                if (values[s] == NULL) {
                    return -ENOMEM;
                }
            }
        } else if (spec->type < LOAMS_OPT_STRING || spec->type > LOAMS_OPT_ENUM ||
                   (spec->type == LOAMS_OPT_ENUM &&
                    (spec->choices == NULL || spec->choices[0] == '\0'))) {
            return check_value(desc, spec, "", "", canon, sizeof canon, err, errlen);
        }
    }
    return 0;
}

int loams_options_validate(const loams_plugin_descriptor *desc, const loams_option_kv *opts,
                           size_t n, char *err, size_t errlen)
{
    return resolve(desc, opts, n, NULL, NULL, err, errlen);
}

int loams_options_validate_at(const loams_plugin_descriptor *desc, const loams_option_kv *opts,
                              size_t n, size_t *bad, char *err, size_t errlen)
{
    *bad = SIZE_MAX;
    int rc = resolve(desc, opts, n, NULL, bad, err, errlen);
    if (rc == 0) {
        *bad = SIZE_MAX;
    }
    return rc;
}

int loams_ctx_create(const loams_plugin_descriptor *desc, const loams_option_kv *opts, size_t n,
                     loams_ctx **out, char *err, size_t errlen)
{
    int rc = 0;
    loams_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        return -ENOMEM;
    }
    ctx->desc = desc;
    ctx->n_specs = spec_count(desc);
    pthread_mutex_init(&ctx->err_lock, NULL);
    snprintf(ctx->prefix, sizeof ctx->prefix, "[%s:%s]", loams_kind_name(desc->kind),
             desc->name != NULL ? desc->name : "?");
    if (ctx->n_specs > 0) {
        ctx->values = calloc(ctx->n_specs, sizeof *ctx->values);
        if (ctx->values == NULL) {
            rc = -ENOMEM;
            goto out;
        }
    }
    rc = resolve(desc, opts, n, ctx->values, NULL, err, errlen);
out:
    if (rc != 0) {
        if (rc == -ENOMEM) {
            fail(err, errlen, rc, "out of memory creating the context of %s", desc->name);
        }
        loams_ctx_free(ctx);
        return rc;
    }
    *out = ctx;
    return 0;
}

void loams_ctx_free(loams_ctx *ctx)
{
    if (ctx == NULL) {
        return;
    }
    if (tls_err_ctx == ctx) {
        tls_err_ctx = NULL;
    }
    if (tls_current == ctx) {
        tls_current = NULL;
    }
    for (size_t i = 0; ctx->values != NULL && i < ctx->n_specs; i++) {
        free(ctx->values[i]);
    }
    free(ctx->values);
    free(ctx->task);
    if (ctx->embed != NULL && ctx->embed_free != NULL) {
        ctx->embed_free(ctx->embed);
    }
    loams_mem_account_unref(ctx->account);
    pthread_mutex_destroy(&ctx->err_lock);
    free(ctx);
}

void loams_ctx_set_embed(loams_ctx *ctx, void *binding, void (*free_fn)(void *binding))
{
    if (ctx->embed != NULL && ctx->embed_free != NULL) {
        ctx->embed_free(ctx->embed);
    }
    ctx->embed = binding;
    ctx->embed_free = free_fn;
}

void *loams_ctx_embed(const loams_ctx *ctx)
{
    return ctx != NULL ? ctx->embed : NULL;
}

void loams_ctx_set_meta(loams_ctx *ctx, struct loams_meta *m)
{
    ctx->meta = m;
}

struct loams_meta *loams_ctx_meta(const loams_ctx *ctx)
{
    return ctx != NULL ? ctx->meta : NULL;
}

const loams_plugin_descriptor *loams_ctx_descriptor(const loams_ctx *ctx)
{
    return ctx->desc;
}

const char *loams_ctx_prefix(const loams_ctx *ctx)
{
    return ctx != NULL ? ctx->prefix : "[plugin]";
}

int loams_ctx_set_task(loams_ctx *ctx, const char *task, uint64_t epoch)
{
    char *copy = NULL;
    if (task != NULL) {
        copy = strdup(task);
        if (copy == NULL) {
            return -ENOMEM;
        }
    }
    free(ctx->task);
    ctx->task = copy;
    ctx->epoch = epoch;
    return 0;
}

const char *loams_ctx_option(loams_ctx *ctx, const char *name)
{
    if (ctx == NULL) {
        return NULL;
    }
    const loams_option_spec *spec = loams_option_spec_find(ctx->desc, name);
    if (spec == NULL) {
        return NULL;
    }
    return ctx->values[spec - ctx->desc->options];
}

const char *loams_option_display(const loams_ctx *ctx, const char *name)
{
    const loams_option_spec *spec = loams_option_spec_find(ctx->desc, name);
    if (spec == NULL) {
        return NULL;
    }
    const char *v = ctx->values[spec - ctx->desc->options];
    if (v != NULL && (spec->flags & LOAMS_OPT_SECRET)) {
        return SECRET_TEXT;
    }
    return v;
}

void loams_ctx_logv(loams_ctx *ctx, loams_log_level level, const char *fmt, va_list ap)
{
    loams_logv(level, loams_ctx_prefix(ctx), ctx != NULL ? ctx->task : NULL,
               ctx != NULL ? ctx->epoch : 0, fmt, ap);
}

void loams_ctx_log(loams_ctx *ctx, loams_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loams_ctx_logv(ctx, level, fmt, ap);
    va_end(ap);
}

void loams_ctx_set_errorv(loams_ctx *ctx, const char *fmt, va_list ap)
{
    int n = vsnprintf(tls_err, sizeof tls_err, fmt != NULL ? fmt : "(no message)", ap);
    if (n >= (int)sizeof tls_err) {
        memcpy(tls_err + sizeof tls_err - 4, "...", 4);
    }
    tls_err_ctx = ctx;
    tls_err_set = 1;
    if (ctx != NULL) {
        pthread_mutex_lock(&ctx->err_lock);
        memcpy(ctx->err, tls_err, strlen(tls_err) + 1);
        pthread_mutex_unlock(&ctx->err_lock);
    }
}

void loams_ctx_set_error(loams_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loams_ctx_set_errorv(ctx, fmt, ap);
    va_end(ap);
}

void loams_ctx_error(loams_ctx *ctx, char *out, size_t size)
{
    if (size == 0) {
        return;
    }
    pthread_mutex_lock(&ctx->err_lock);
    snprintf(out, size, "%s", ctx->err);
    pthread_mutex_unlock(&ctx->err_lock);
}

void loams_ctx_clear_error(loams_ctx *ctx)
{
    pthread_mutex_lock(&ctx->err_lock);
    ctx->err[0] = '\0';
    pthread_mutex_unlock(&ctx->err_lock);
    if (tls_err_ctx == ctx) {
        tls_err_set = 0;
    }
}

const char *loams_ctx_thread_error(const loams_ctx *ctx)
{
    return tls_err_set && tls_err_ctx == ctx ? tls_err : NULL;
}

void loams_ctx_thread_error_clear(void)
{
    tls_err_set = 0;
    tls_err_ctx = NULL;
}

loams_ctx *loams_ctx_set_current(loams_ctx *ctx)
{
    loams_ctx *prev = tls_current;
    tls_current = ctx;
    return prev;
}

loams_ctx *loams_ctx_current(void)
{
    return tls_current;
}

void loams_ctx_set_cancel_flag(loams_ctx *ctx, const int *flag)
{
    ctx->cancel = flag;
}

void loams_ctx_set_cancel_poll(loams_ctx *ctx, int (*poll)(void *ud), void *ud)
{
    ctx->cancel_poll = poll;
    ctx->cancel_ud = ud;
}

int loams_ctx_cancelled(loams_ctx *ctx)
{
    if (ctx == NULL) {
        return 0;
    }
    if (ctx->cancel != NULL && __atomic_load_n(ctx->cancel, __ATOMIC_ACQUIRE)) {
        return 1;
    }
    return ctx->cancel_poll != NULL && ctx->cancel_poll(ctx->cancel_ud) != 0;
}

/* ---- memory ---- */

/* 16 bytes keep the block max_align_t-aligned on x86-64 and arm64: the
 * block's size and the account it is charged to (holding a reference). */
typedef union mem_header {
    struct {
        size_t size;
        loams_mem_account *account;
    } h;
    max_align_t align;
} mem_header;

static void peak_update(uint64_t *peak, uint64_t now)
{
    uint64_t p = __atomic_load_n(peak, __ATOMIC_RELAXED);
    while (now > p &&
           !__atomic_compare_exchange_n(peak, &p, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* Reserves `add` bytes on the context's counters and on `account` (may be
 * NULL); -1 when over the context's limit or the account's budget. */
static int account_add(loams_ctx *ctx, loams_mem_account *account, size_t add)
{
    if (ctx != NULL) {
        uint64_t now = __atomic_add_fetch(&ctx->mem_in_use, add, __ATOMIC_RELAXED);
        uint64_t limit = __atomic_load_n(&ctx->mem_limit, __ATOMIC_RELAXED);
        if ((limit != 0 && now > limit) ||
            (account != NULL && loams_mem_account_charge(account, add, ctx->desc->name) != 0)) {
            __atomic_sub_fetch(&ctx->mem_in_use, add, __ATOMIC_RELAXED);
            return -1;
        }
        peak_update(&ctx->mem_peak, now);
    }
    peak_update(&process_peak, __atomic_add_fetch(&process_in_use, add, __ATOMIC_RELAXED));
    return 0;
}

static void account_sub(loams_ctx *ctx, loams_mem_account *account, size_t sub)
{
    if (ctx != NULL) {
        __atomic_sub_fetch(&ctx->mem_in_use, sub, __ATOMIC_RELAXED);
    }
    if (account != NULL) {
        loams_mem_account_release(account, sub);
    }
    __atomic_sub_fetch(&process_in_use, sub, __ATOMIC_RELAXED);
}

/* The account a new block of ctx is charged to. */
static loams_mem_account *block_account(const loams_ctx *ctx)
{
    if (ctx == NULL) {
        return NULL;
    }
    return ctx->charge_caller ? loams_mem_account_current() : ctx->account;
}

void *loams_ctx_malloc(loams_ctx *ctx, size_t size)
{
    loams_mem_account *account = block_account(ctx);
    if (size > SIZE_MAX - sizeof(mem_header) || account_add(ctx, account, size) != 0) {
        return NULL;
    }
    mem_header *h = malloc(sizeof *h + size);
    if (h == NULL) {
        account_sub(ctx, account, size);
        return NULL;
    }
    h->h.size = size;
    h->h.account = loams_mem_account_ref(account);
    return h + 1;
}

void *loams_ctx_calloc(loams_ctx *ctx, size_t n, size_t size)
{
    if (size != 0 && n > (SIZE_MAX - sizeof(mem_header)) / size) {
        return NULL;
    }
    void *p = loams_ctx_malloc(ctx, n * size);
    if (p != NULL) {
        memset(p, 0, n * size);
    }
    return p;
}

void loams_ctx_free_mem(loams_ctx *ctx, void *ptr)
{
    if (ptr == NULL) {
        return;
    }
    mem_header *h = (mem_header *)ptr - 1;
    loams_mem_account *account = h->h.account;
    account_sub(ctx, account, h->h.size);
    free(h);
    loams_mem_account_unref(account);
}

void *loams_ctx_realloc(loams_ctx *ctx, void *ptr, size_t size)
{
    if (ptr == NULL) {
        return loams_ctx_malloc(ctx, size);
    }
    if (size > SIZE_MAX - sizeof(mem_header)) {
        return NULL;
    }
    /* The block stays charged to the account it was allocated under. */
    mem_header *h = (mem_header *)ptr - 1;
    size_t old = h->h.size;
    loams_mem_account *account = h->h.account;
    if (size > old && account_add(ctx, account, size - old) != 0) {
        return NULL;
    }
    mem_header *n = realloc(h, sizeof *n + size);
    if (n == NULL) {
        if (size > old) {
            account_sub(ctx, account, size - old);
        }
        return NULL;
    }
    if (size < old) {
        account_sub(ctx, account, old - size);
    }
    n->h.size = size;
    return n + 1;
}

void loams_ctx_memory(const loams_ctx *ctx, uint64_t *in_use, uint64_t *peak)
{
    const uint64_t *u = ctx != NULL ? &ctx->mem_in_use : &process_in_use;
    const uint64_t *p = ctx != NULL ? &ctx->mem_peak : &process_peak;
    if (in_use != NULL) {
        *in_use = __atomic_load_n(u, __ATOMIC_RELAXED);
    }
    if (peak != NULL) {
        *peak = __atomic_load_n(p, __ATOMIC_RELAXED);
    }
}

void loams_ctx_set_memory_limit(loams_ctx *ctx, uint64_t bytes)
{
    __atomic_store_n(&ctx->mem_limit, bytes, __ATOMIC_RELAXED);
}

void loams_ctx_set_account(loams_ctx *ctx, loams_mem_account *account)
{
    loams_mem_account *old = ctx->account;
    ctx->account = loams_mem_account_ref(account);
    loams_mem_account_unref(old);
}

void loams_ctx_charge_caller(loams_ctx *ctx)
{
    ctx->charge_caller = 1;
}
