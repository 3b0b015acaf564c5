/*
 * udf-functions - a test plugin that registers two scalar SQL functions
 * through host->udf_register from its entry point, the one moment the ABI
 * gives every plugin (1.x has no load or init callback, and a plugin's own
 * open() runs only when a link uses its kind and name):
 *
 *   shout(text)          -> TEXT: ASCII upper case plus "!"; NULL -> NULL;
 *                           anything but text fails the record
 *   priority_rank(text)  -> INTEGER: low 1, normal 2, high 3, urgent 4;
 *                           another word fails the record
 *
 * It is a decoder only because every plugin has a kind; its decode() adds
 * nothing.  tests/integration/link-udf.sh runs a link whose SELECT calls
 * both, through `loams-host sql` (CREATE LINK compiles the SELECT) and
 * `serve`.
 */
#include <errno.h>
#include <string.h>

#include <loams/plugin.h>

static const loams_host_api *host;

#define SHOUT_MAX 1024

static int shout(loams_ctx *ctx, void *userdata, const loams_value *args, size_t nargs,
                 loams_value *out)
{
    /* valid until the next call on this thread (loams/host.h) */
    static _Thread_local char buf[SHOUT_MAX + 1];
    (void)userdata;
    if (nargs != 1) {
        host->set_error(ctx, "shout() takes 1 argument, not %zu", nargs);
        return LOAMS_EINPUT;
    }
    if (args[0].type == LOAMS_T_NULL) {
        *out = (loams_value){.type = LOAMS_T_NULL};
        return 0;
    }
    if (args[0].type != LOAMS_T_STRING) {
        host->set_error(ctx, "shout() takes text, not a value of type %u", args[0].type);
        return LOAMS_EINPUT;
    }
    size_t len = args[0].u.s.len;
    if (len > SHOUT_MAX - 1) {
        host->set_error(ctx, "shout() takes at most %d bytes, not %zu", SHOUT_MAX - 1, len);
        return LOAMS_EINPUT;
    }
    for (size_t i = 0; i < len; i++) {
        char c = args[0].u.s.ptr[i];
        buf[i] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
    }
    buf[len] = '!';
    *out = (loams_value){.type = LOAMS_T_STRING};
    out->u.s.ptr = buf;
    out->u.s.len = len + 1;
    return 0;
}

static int priority_rank(loams_ctx *ctx, void *userdata, const loams_value *args, size_t nargs,
                         loams_value *out)
{
    static const char *const words[] = {"low", "normal", "high", "urgent"};
    (void)userdata;
    if (nargs == 1 && args[0].type == LOAMS_T_STRING) {
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
            if (args[0].u.s.len == strlen(words[i]) &&
                memcmp(args[0].u.s.ptr, words[i], args[0].u.s.len) == 0) {
                *out = (loams_value){.type = LOAMS_T_INT64, .u.i = (int64_t)i + 1};
                return 0;
            }
        }
        host->set_error(ctx, "unknown priority '%.*s' (low, normal, high or urgent)",
                        (int)(args[0].u.s.len > 40 ? 40 : args[0].u.s.len), args[0].u.s.ptr);
        return LOAMS_EINPUT;
    }
    host->set_error(ctx, "priority_rank() takes one text argument");
    return LOAMS_EINPUT;
}

static int udf_open(loams_ctx *ctx, void **state)
{
    *state = ctx;
    return 0;
}

static int udf_decode(void *state, loams_batch *batch)
{
    (void)state;
    (void)batch;
    return 0;
}

static void udf_close(void *state)
{
    (void)state;
}

static const loams_decoder_vtable vt = {sizeof vt, udf_open, udf_decode, udf_close};
static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_DECODER,
                                             "udf-functions",
                                             "1.0.0",
                                             "Test plugin: registers shout() and "
                                             "priority_rank() for SQL transforms",
                                             &vt,
                                             NULL};

/* -EEXIST: the entry ran before in this process (a registry opened again):
 * the functions are there already. */
static int add(const char *name, int nargs, loams_udf_fn fn)
{
    int rc = host->udf_register(NULL, name, nargs, fn, NULL);
    return rc == -EEXIST ? 0 : rc;
}

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    if (add("shout", 1, shout) != 0 || add("priority_rank", 1, priority_rank) != 0) {
        return NULL; /* the host rejects the plugin: "entry point returned no descriptor" */
    }
    return &desc;
}
