/*
 * schema_config.h - the compatibility rule a namespace gives the schema
 * subjects created in it without one (the Confluent registry's global
 * "config", per namespace: PUT /config of the REST subset, docs/HTTP.md,
 * "Schema Registry").  BACKWARD when never set.
 *
 * Key: "schema/config/<ns>" (the rule's name, e.g. "FULL").
 *
 * Errors (every function): metastore errors (message in err), -ENOMEM.
 * Threads: any; nothing is kept between calls.
 */
#ifndef LOAMS_CORE_SCHEMA_CONFIG_H
#define LOAMS_CORE_SCHEMA_CONFIG_H

#include "catalog/schema_catalog.h"

/* The rule of namespace ns (folded, a valid identifier) into *out:
 * BACKWARD when none was set.  A stored value that is no rule is
 * LOAMS_ECORRUPT. */
int loams_schema_ns_compat_get(loams_meta *m, const char *ns, loams_schema_compat *out,
                               loams_meta_err *err);

/* Sets the rule of namespace ns; subjects that exist keep theirs. */
int loams_schema_ns_compat_set(loams_meta *m, const char *ns, loams_schema_compat compat,
                               loams_meta_err *err);

#endif
