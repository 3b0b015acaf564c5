/*
 * schema_host.c - owns the host API calls that read the schema registry
 * for a plugin (schema_host.h).
 */
#include "catalog/schema_host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "abi/buf.h"
#include "abi/plugin_ctx.h"
#include "catalog/schema_catalog.h"

static loams_meta *registry(loams_ctx *ctx)
{
    loams_meta *m = loams_ctx_meta(ctx);
    if (m == NULL) {
        loams_ctx_set_error(ctx, "the schema registry is not reachable here: only a link's "
                                 "decoder, run by loams-host serve, reads it");
    }
    return m;
}

/* Copies the format name and the text of schema `id`. */
static int fill(loams_ctx *ctx, loams_meta *m, uint32_t id, char *format, size_t format_size,
                loams_buf *text)
{
    loams_meta_err err = {{0}};
    loams_schema_format f;
    char *t = NULL;
    size_t len = 0;
    int rc = loams_schema_get_by_id(m, id, &f, &t, &len, &err);
    if (rc != 0) {
        loams_ctx_set_error(ctx, "%s", err.msg[0] ? err.msg : "out of memory");
        return rc;
    }
    if (format != NULL && format_size > 0) {
        snprintf(format, format_size, "%s", loams_schema_format_name(f));
    }
    loams_buf_reset(text);
    rc = loams_buf_append(text, t, len);
    free(t);
    if (rc != 0) {
        loams_ctx_set_error(ctx, "out of memory");
    }
    return rc;
}

int loams_schema_host_by_id(loams_ctx *ctx, uint32_t id, char *format, size_t format_size,
                            loams_buf *text)
{
    loams_meta *m = registry(ctx);
    if (m == NULL) {
        return LOAMS_EUNSUPPORTED;
    }
    if (text == NULL) {
        loams_ctx_set_error(ctx, "schema_by_id: text is NULL");
        return -EINVAL;
    }
    return fill(ctx, m, id, format, format_size, text);
}

int loams_schema_host_latest(loams_ctx *ctx, const char *subject, uint32_t *id, uint32_t *version,
                             char *format, size_t format_size, loams_buf *text)
{
    loams_meta *m = registry(ctx);
    if (m == NULL) {
        return LOAMS_EUNSUPPORTED;
    }
    loams_objname name;
    char msg[256];
    if (subject == NULL || loams_subject_parse(subject, &name, msg, sizeof msg) != 0) {
        loams_ctx_set_error(ctx, "schema subject: %s", subject == NULL ? "NULL" : msg);
        return LOAMS_EINPUT;
    }
    loams_meta_err err = {{0}};
    loams_schema_subject s;
    int rc = loams_schema_subject_get(m, &name, &s, &err);
    if (rc != 0) {
        loams_ctx_set_error(ctx, "%s", err.msg[0] ? err.msg : "out of memory");
        return rc;
    }
    if (s.nversions == 0) {
        loams_ctx_set_error(ctx, "schema subject %s.%s has no version", name.ns, name.name);
        loams_schema_subject_clear(&s);
        return LOAMS_ENOTFOUND;
    }
    loams_schema_version last = s.versions[s.nversions - 1];
    loams_schema_subject_clear(&s);
    if (id != NULL) {
        *id = last.id;
    }
    if (version != NULL) {
        *version = last.version;
    }
    return text != NULL ? fill(ctx, m, last.id, format, format_size, text) : 0;
}
