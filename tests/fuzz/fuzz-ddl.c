/* fuzz-ddl.c - libFuzzer target for the DDL parser: any input must parse
 * or fail with LOAMS_EINPUT and a positioned message, never crash, leak or
 * read out of bounds; a parsed script's statements must be consistent (a
 * link's plugin names are 1 to 64 characters, a target kind other than the
 * built-in ones has its plugin named, the kind word fits the pointer; OR
 * REPLACE only on CREATE LINK without IF NOT EXISTS; ALTER LINK sets at
 * least one option). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql/ddl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int plugin_name_ok(const char *name)
{
    return name != NULL && name[0] != '\0' && strlen(name) <= LOAMS_DDL_PLUGIN_NAME_MAX;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loams_ddl_script *s = NULL;
    loams_ddl_error e;
    int rc = loams_ddl_parse((const char *)data, size, &s, &e);
    if (rc == LOAMS_EINPUT) {
        if (e.line == 0 || e.column == 0 || e.message[0] == '\0' || e.text[0] == '\0') {
            abort();
        }
        return 0;
    }
    if (rc != 0) {
        abort();
    }
    size_t len = 0;
    const char *src = loams_ddl_script_source(s, &len);
    for (size_t i = 0; i < loams_ddl_script_count(s); i++) {
        const loams_ddl_stmt *st = loams_ddl_script_at(s, i);
        if (st->text < src || st->text + st->text_len > src + len ||
            (st->name.name[0] == '\0' && st->kind != LOAMS_DDL_SHOW_SCHEMAS)) {
            abort();
        }
        if ((st->or_replace && (st->kind != LOAMS_DDL_CREATE_LINK || st->if_exists)) ||
            (st->kind == LOAMS_DDL_ALTER_LINK && st->with.count == 0)) {
            abort();
        }
        if (st->kind == LOAMS_DDL_CREATE_LINK) {
            const loams_ddl_link *lk = &st->link;
            if ((lk->format.kind != LOAMS_DDL_FORMAT_NONE && !plugin_name_ok(lk->format.name)) ||
                (lk->format.kind == LOAMS_DDL_FORMAT_NONE && lk->format.name != NULL) ||
                (lk->target_plugin != NULL && !plugin_name_ok(lk->target_plugin)) ||
                (lk->target_kind == LOAMS_DDL_TARGET_OTHER && lk->target_plugin == NULL) ||
                lk->target_kind_word[0] == '\0' ||
                strlen(lk->target_kind_word) > LOAMS_DDL_KIND_MAX ||
                (lk->transform.kind == LOAMS_DDL_TRANSFORM_SQL) != (lk->transform.plugin == NULL) ||
                (lk->transform.plugin != NULL && !plugin_name_ok(lk->transform.plugin))) {
                abort();
            }
            const loams_ddl_transform *t = &st->link.transform;
            if (strlen(t->text) > t->len || t->pos.offset + t->len > len) {
                abort();
            }
            uint32_t l, c;
            loams_ddl_map_position(t, 1, 1, &l, &c);
            if (l != t->pos.line || c != t->pos.column) {
                abort();
            }
        }
        char buf[256];
        loams_ddl_format_error(src, len, st->pos.line, st->pos.column, "x", buf, sizeof buf);
    }
    loams_ddl_script_free(s);
    return 0;
}
