/*
 * embed_host.h - the host API's embed_check and embed_texts (ABI 1.4):
 * what a plugin context reaches through its embed binding (a node's
 * embed service and the namespace of the link the context serves).
 *
 * Ownership: loams_embed_bind gives the context a binding it owns (the
 * service is borrowed and must outlive the context).  Threads: a context
 * is used by one thread at a time; the service is shared.
 */
#ifndef LOAMS_CORE_EMBED_HOST_H
#define LOAMS_CORE_EMBED_HOST_H

#include <loams/host.h>

#include "embed/embed_service.h"

/* Binds ctx to svc for links of namespace ns.  -ENOMEM. */
int loams_embed_bind(loams_ctx *ctx, loams_embed_service *svc, const char *ns);

/* host->embed_check and host->embed_texts (loams/host.h). */
int loams_embed_host_check(loams_ctx *ctx, const char *provider, char *msg, size_t size);
int loams_embed_host_texts(loams_ctx *ctx, const char *provider, const loams_value *texts, size_t n,
                           loams_value *vectors, int *status, const char **errors);

#endif
