/*
 * plugin_resolve.h - which plugin a name given by a user means, and what to
 * tell the user when no plugin fits.
 *
 * The naming rule (docs/PLUGINS.md, "Use it in a link"): a name WORD given
 * for a plugin of kind K (FORMAT WORD: a decoder, INTO ... USING WORD: a
 * target, TRANSFORM WORD: a transform) means the loaded native plugin
 * "<K>-WORD" when there is one, else the one called WORD.  So FORMAT kv
 * finds decoder-kv, and FORMAT decoder-kv finds it too; the conventional
 * name wins over a plugin that happens to be called WORD.  Lua scripts
 * (registry entries without a descriptor) are not native plugins and never
 * match.
 *
 * When nothing fits, the message says what was looked for and why it was
 * not found: a plugin of that name of another kind, a file of that name
 * the registry rejected (with its reason), the plugins of kind K that are
 * loaded, the plugin path searched, and how to fix it.
 *
 * Threads: any (the registry is immutable once open).
 */
#ifndef LOAMS_CORE_PLUGIN_RESOLVE_H
#define LOAMS_CORE_PLUGIN_RESOLVE_H

#include <stddef.h>

#include "abi/registry.h"

/*
 * Finds the plugin of kind `kind` that `word` means (the rule above).
 * On success *out is the registry's record (a native plugin: descriptor
 * and vtable set).
 * Errors: LOAMS_ENOTFOUND - what[0..what_len) gets one line without a
 * final period ("no decoder plugin 'decoder-kv' or 'kv' is loaded",
 * "'decoder-kv' is a decoder plugin, not a target") and
 * detail[0..detail_len) a "DETAIL: ..." line, a newline and a
 * "HINT: ..." line; -EINVAL for a NULL or empty word.  Both buffers are
 * always NUL-terminated (cut when too small).
 */
int loams_plugin_resolve(const loams_registry *r, loams_plugin_kind kind, const char *word,
                         const loams_plugin **out, char *what, size_t what_len, char *detail,
                         size_t detail_len);

#endif
