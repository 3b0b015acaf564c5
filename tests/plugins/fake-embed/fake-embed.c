/*
 * fake-embed.c - a test embed plugin ("embed-fake") without a network:
 * the vector of a text is (byte length, first byte, 1, 1, ...) of
 * `dimensions` numbers.  A text holding "REFUSE" makes the whole call
 * fail with LOAMS_EINPUT; "FLAKY" makes the first call that holds it fail
 * with LOAMS_ERETRY and a Retry-After of 10 ms.  Each call appends one
 * line "n <count>" to the file named by the option `log` (tests count the
 * requests and their sizes from it).  max_inputs is the option
 * `max_inputs`.  Used by tests/unit/test_embed_service.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/plugin.h>

static const loams_host_api *host;
static int flaky_done;

typedef struct fake {
    loams_ctx *ctx;
    size_t dims;
    size_t max_inputs;
    const char *log;
} fake;

static int fake_open(loams_ctx *ctx, void **state)
{
    fake *f = host->calloc(ctx, 1, sizeof *f);
    if (f == NULL) {
        return -ENOMEM;
    }
    const char *d = host->option(ctx, "dimensions");
    const char *m = host->option(ctx, "max_inputs");
    f->ctx = ctx;
    f->dims = d != NULL ? strtoul(d, NULL, 10) : 4;
    f->max_inputs = m != NULL ? strtoul(m, NULL, 10) : 2048;
    f->log = host->option(ctx, "log");
    *state = f;
    return 0;
}

static size_t fake_max_inputs(void *state)
{
    return ((fake *)state)->max_inputs;
}

static int fake_embed(void *state, const char *model, const char *const *texts, const size_t *lens,
                      size_t n, loams_batch *out, uint32_t *retry_after_ms)
{
    fake *f = state;
    (void)model;
    if (f->log != NULL) {
        FILE *fp = fopen(f->log, "a");
        if (fp != NULL) {
            fprintf(fp, "n %zu\n", n);
            fclose(fp);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (memmem(texts[i], lens[i], "REFUSE", 6) != NULL) {
            host->set_error(f->ctx, "text %zu is refused", i);
            return LOAMS_EINPUT;
        }
        if (memmem(texts[i], lens[i], "FLAKY", 5) != NULL && !flaky_done) {
            flaky_done = 1;
            *retry_after_ms = 10;
            host->set_error(f->ctx, "HTTP 503: try again");
            return LOAMS_ERETRY;
        }
    }
    float v[64];
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < f->dims && k < 64; k++) {
            v[k] = k == 0   ? (float)lens[i]
                   : k == 1 ? (lens[i] ? (float)(unsigned char)texts[i][0] : 0)
                            : 1;
        }
        loams_value val = {.type = LOAMS_T_VECTOR};
        val.u.vec.ptr = v;
        val.u.vec.n = f->dims;
        int rc = host->batch_set(out, i, 0, &val);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static void fake_close(void *state)
{
    fake *f = state;
    if (f != NULL) {
        host->free(f->ctx, f);
    }
}

static const loams_embed_vtable vt = {sizeof vt,  fake_open,  fake_max_inputs,
                                      fake_embed, fake_close, NULL};

static const loams_option_spec options[] = {
    {"dimensions", LOAMS_OPT_INT, 0, NULL, NULL, "vector length"},
    {"max_inputs", LOAMS_OPT_INT, 0, "2048", NULL, "texts per call"},
    {"log", LOAMS_OPT_STRING, 0, NULL, NULL, "a file that gets one line per call"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_EMBED,
                                             "embed-fake",
                                             "1.0.0",
                                             "test embeddings",
                                             &vt,
                                             options};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &desc;
}
