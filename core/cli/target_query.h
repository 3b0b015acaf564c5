/*
 * target_query.h - answers a query on a target's newest commit through its
 * target plugin's query() (searches, collection scans, graph lookups).
 *
 * Errors: LOAMS_ENOTFOUND (no commit yet, plugin not loaded), LOAMS_EINPUT
 * (the target is of another kind, a bad request), and the plugin's errors;
 * the message goes to err[0..errlen).  Threads: any.
 */
#ifndef LOAMS_CORE_TARGET_QUERY_H
#define LOAMS_CORE_TARGET_QUERY_H

#include <cjson/cJSON.h>

#include "abi/buf.h"
#include "base/json_text.h"
#include "run/node.h"
#include "catalog/objname.h"

/* Runs `request` (JSON) on target `name`, which must be of `kind`
 * ("collection", "graph", "table"), through the target plugin of the link
 * that writes it (INTO <kind> ... USING <plugin>), or `plugin` (the kind's
 * built-in one) when that link is gone; the answer (JSON) is appended to
 * out. */
int loams_target_query(loams_node *node, const loams_objname *name, const char *kind,
                       const char *plugin, const char *request, loams_buf *out, char *err,
                       size_t errlen);

/* loams_target_query, then the answer parsed: *answer (the caller's,
 * cJSON_Delete) is a JSON object, and out keeps its text.  An answer that
 * is not a JSON object is LOAMS_ECORRUPT, with a message that names the
 * target, the plugin and the byte where the answer stops being JSON (a
 * command prints nothing of such an answer: it fails). */
int loams_target_query_json(loams_node *node, const loams_objname *name, const char *kind,
                            const char *plugin, const char *request, loams_buf *out, cJSON **answer,
                            char *err, size_t errlen);

/* loams_target_query on an emptied `out`, then the answer read with
 * `answer` (json_text.h): on 0, answer->root is a JSON object whose values
 * are printed as the plugin wrote them.  An answer that is not a JSON
 * object is LOAMS_ECORRUPT, with a message that names the target, the
 * plugin, the byte and what is wrong there; -ENOMEM. */
int loams_target_query_text(loams_node *node, const loams_objname *name, const char *kind,
                            const char *plugin, const char *request, loams_buf *out,
                            loams_json_text *answer, char *err, size_t errlen);

#endif
