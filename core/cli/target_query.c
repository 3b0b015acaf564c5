/*
 * target_query.c - owns opening a target plugin for one query (see
 * target_query.h).
 */
#include "cli/target_query.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "catalog/link_catalog.h"
#include "meta/commit.h"
#include "abi/plugin_ctx.h"
#include "loams/kit/json_tree.h"

int loams_target_query(loams_node *node, const loams_objname *name, const char *kind,
                       const char *plugin, const char *request, loams_buf *out, char *err,
                       size_t errlen)
{
    loams_pointer ptr;
    loams_meta_err merr;
    char plugin_name[128];
    loams_ctx *ctx = NULL;
    void *state = NULL;
    const loams_target_vtable *vt = NULL;
    int rc = loams_pointer_init(&ptr);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
        return rc;
    }
    if ((rc = loams_pointer_read(node->dd->meta, name, &ptr, &merr)) != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        goto out;
    }
    if (ptr.version == 0) {
        snprintf(err, errlen,
                 "%s.%s has no commit yet (is a link writing it? see 'loams-host links')", name->ns,
                 name->name);
        rc = LOAMS_ENOTFOUND;
        goto out;
    }
    if (strcmp(ptr.kind, kind) != 0) {
        snprintf(err, errlen, "%s.%s is a %s, not a %s", name->ns, name->name, ptr.kind, kind);
        rc = LOAMS_EINPUT;
        goto out;
    }
    /* The plugin of the link that writes the target (INTO <kind> ... USING
     * <plugin>), else the kind's built-in one. */
    loams_objname lname;
    loams_link_def def;
    loams_link_def_init(&def);
    if (loams_objname_parse(ptr.link, &lname, NULL, 0) == 0 &&
        loams_link_get(node->dd->meta, &lname, &def, &merr) == 0 && def.target_plugin != NULL &&
        strcmp(def.target.ns, name->ns) == 0 && strcmp(def.target.name, name->name) == 0 &&
        strlen(def.target_plugin) < sizeof plugin_name) {
        snprintf(plugin_name, sizeof plugin_name, "%s", def.target_plugin);
        plugin = plugin_name;
    }
    loams_link_def_clear(&def);
    const loams_plugin *p;
    if (loams_registry_find(node->registry, LOAMS_KIND_TARGET, plugin, &p) != 0 ||
        p->descriptor == NULL) {
        snprintf(err, errlen, "the plugin %s is not loaded (see 'loams-host --list-plugins')",
                 plugin);
        rc = LOAMS_ENOTFOUND;
        goto out;
    }
    vt = p->vtable;
    if (vt->query == NULL) {
        snprintf(err, errlen, "the plugin %s answers no queries", plugin);
        rc = LOAMS_EUNSUPPORTED;
        goto out;
    }
    if ((rc = loams_ctx_create(p->descriptor, NULL, 0, &ctx, err, errlen)) != 0) {
        goto out;
    }
    loams_target_spec spec = {.size = sizeof spec, .ns = name->ns, .name = name->name};
    loams_ctx *prev = loams_ctx_set_current(ctx);
    rc = vt->open(ctx, &spec, node->store, &state);
    if (rc == 0) {
        rc = vt->query(state, ptr.ref, request, out);
    } else {
        state = NULL;
    }
    loams_ctx_set_current(prev);
    if (rc != 0) {
        loams_ctx_error(ctx, err, errlen);
        if (err[0] == '\0') {
            snprintf(err, errlen, "%s query failed", plugin);
        }
    }
out:
    if (state != NULL) {
        vt->close(state);
    }
    loams_ctx_free(ctx);
    loams_pointer_clear(&ptr);
    return rc;
}

int loams_target_query_json(loams_node *node, const loams_objname *name, const char *kind,
                            const char *plugin, const char *request, loams_buf *out, cJSON **answer,
                            char *err, size_t errlen)
{
    *answer = NULL;
    size_t start = loams_buf_len(out);
    int rc = loams_target_query(node, name, kind, plugin, request, out, err, errlen);
    if (rc != 0) {
        return rc;
    }
    size_t len;
    const char *text = (const char *)loams_buf_data(out, &len) + start;
    len -= start;
    /* read with the kit's json_tree: integers kept as written (a 63-bit
     * snapshot id through cJSON's double lost its last digits) */
    cJSON *a = NULL;
    loams_kit_json_error jerr;
    memset(&jerr, 0, sizeof jerr);
    rc = loams_kit_json_tree_parse(text, len, &a, &jerr);
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory reading the answer of %s", plugin);
        return rc;
    }
    if (rc == 0 && cJSON_IsObject(a)) {
        *answer = a;
        return 0;
    }
    cJSON_Delete(a);
    snprintf(err, errlen,
             "%s.%s: %s answered with text that is not a JSON object (%s at byte %zu of %zu): "
             "stored data the plugin did not check is damaged",
             name->ns, name->name, plugin,
             rc == 0 ? "another value" : (jerr.what != NULL ? jerr.what : "not JSON"),
             rc == 0 ? (size_t)0 : jerr.pos, len);
    return LOAMS_ECORRUPT;
}

int loams_target_query_text(loams_node *node, const loams_objname *name, const char *kind,
                            const char *plugin, const char *request, loams_buf *out,
                            loams_json_text *answer, char *err, size_t errlen)
{
    loams_buf_reset(out);
    int rc = loams_target_query(node, name, kind, plugin, request, out, err, errlen);
    if (rc != 0) {
        return rc;
    }
    size_t len, at = 0;
    const char *text = loams_buf_data(out, &len);
    char why[160];
    rc = loams_json_text_read(answer, text, len, &at, why, sizeof why);
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory reading the answer of %s", plugin);
        return rc;
    }
    if (rc == 0 && answer->root.kind == LOAMS_KIT_JSON_OBJECT) {
        return 0;
    }
    if (rc == 0) {
        snprintf(why, sizeof why, "it is %s", loams_json_kind_phrase(answer->root.kind));
    }
    snprintf(err, errlen,
             "%s.%s: %s answered with text that is not a JSON object (at byte %zu of %zu: %s): "
             "stored data the plugin did not check is damaged",
             name->ns, name->name, plugin, at, len, why);
    return LOAMS_ECORRUPT;
}
