/*
 * embed_host.c - owns the embed binding of a plugin context and the host
 * API functions that go through it (embed_host.h).
 */
#include "embed/embed_host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/plugin_ctx.h"
#include "catalog/objname.h"

typedef struct binding {
    loams_embed_service *svc;
    char ns[LOAMS_IDENT_MAX + 1];
    loams_embed_scratch scratch;
} binding;

static void binding_free(void *p)
{
    binding *b = p;
    if (b != NULL) {
        loams_embed_scratch_free(&b->scratch);
        free(b);
    }
}

int loams_embed_bind(loams_ctx *ctx, loams_embed_service *svc, const char *ns)
{
    binding *b = calloc(1, sizeof *b);
    if (b == NULL) {
        return -ENOMEM;
    }
    b->svc = svc;
    snprintf(b->ns, sizeof b->ns, "%s", ns);
    loams_ctx_set_embed(ctx, b, binding_free);
    return 0;
}

static binding *bound(loams_ctx *ctx)
{
    binding *b = loams_ctx_embed(ctx);
    if (b == NULL) {
        loams_ctx_set_error(ctx, "embed() is not available here: only a link's transform, run "
                                 "by loams-host serve or checked by CREATE LINK, reaches the "
                                 "embedding providers");
    }
    return b;
}

int loams_embed_host_check(loams_ctx *ctx, const char *provider, char *msg, size_t size)
{
    binding *b = loams_ctx_embed(ctx);
    char err[1024];
    int rc;
    if (b == NULL) {
        snprintf(err, sizeof err,
                 "embed() is not available here: only a link's transform, run "
                 "by loams-host serve or checked by CREATE LINK, reaches the "
                 "embedding providers");
        rc = LOAMS_EUNSUPPORTED;
    } else if (provider == NULL) {
        snprintf(err, sizeof err, "no provider named");
        rc = LOAMS_EINPUT;
    } else {
        rc = loams_embed_service_check(b->svc, b->ns, provider, err, sizeof err);
    }
    if (rc != 0 && msg != NULL && size > 0) {
        snprintf(msg, size, "%s", err);
    }
    return rc;
}

int loams_embed_host_texts(loams_ctx *ctx, const char *provider, const loams_value *texts, size_t n,
                           loams_value *vectors, int *status, const char **errors)
{
    binding *b = bound(ctx);
    char err[1024];
    if (b == NULL) {
        return LOAMS_EUNSUPPORTED;
    }
    if (provider == NULL ||
        (n > 0 && (texts == NULL || vectors == NULL || status == NULL || errors == NULL))) {
        loams_ctx_set_error(ctx, "embed_texts: missing arguments");
        return LOAMS_EINPUT;
    }
    int rc = loams_embed_service_embed(b->svc, ctx, b->ns, provider, texts, n, &b->scratch, vectors,
                                       status, errors, err, sizeof err);
    if (rc != 0) {
        loams_ctx_set_error(ctx, "%s", err);
    }
    return rc;
}
