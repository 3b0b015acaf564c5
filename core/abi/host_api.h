/*
 * host_api.h - the host API table (loams/host.h) this host gives every
 * plugin: ABI LOAMS_ABI_MAJOR.LOAMS_ABI_MINOR, every member non-NULL.
 *
 * The table is static and const: one for the whole process, valid for its
 * lifetime.  The registry passes it to each plugin's entry function.  Its
 * members are the core functions of batch.h, offsets.h, keylist.h, buf.h,
 * store.h, udf.h and plugin_ctx.h, so the core and the plugins see the
 * same behaviour.
 *
 * Threads: the table is immutable; see each module for its functions.
 */
#ifndef LOAMS_CORE_HOST_API_H
#define LOAMS_CORE_HOST_API_H

#include <loams/plugin.h>

/* The host API table.  Never NULL. */
const loams_host_api *loams_host_api_get(void);

#endif
