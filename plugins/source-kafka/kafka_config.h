/*
 * kafka_config.h - source-kafka's options as librdkafka configuration:
 * which property each option sets, the defaults the plugin insists on
 * (assign-and-seek reads: no auto commit, no offset store, partition EOF
 * events; isolation.level=read_committed), the SASL password read from
 * the environment variable or file an option names, and a rendering of
 * the configuration for messages in which the password is "****".
 *
 * Pure: no librdkafka call, no host call (options come through a getter),
 * so the unit test drives it alone.
 *
 * Ownership: a kafka_conf owns its values (libc memory); kafka_conf_clear
 * zeroes the password before freeing it.
 * Errors: -EINVAL (a required option missing, both or neither of a pair:
 * the message names them), -EACCES (the password's variable is unset or
 * its file unreadable: the message names the variable or file, never the
 * value), -ENOMEM.  Messages go to err[0..errlen).
 */
#ifndef LOAMS_SOURCE_KAFKA_CONFIG_H
#define LOAMS_SOURCE_KAFKA_CONFIG_H

#include <stddef.h>

#define KAFKA_CONF_MAX 24

/* The value of a plugin option, or NULL when unset (defaults applied). */
typedef const char *(*kafka_option_fn)(void *ud, const char *name);

typedef struct kafka_conf_item {
    const char *key; /* a librdkafka property (static) */
    char *value;
    int secret; /* 1: never shown */
} kafka_conf_item;

typedef struct kafka_conf {
    kafka_conf_item items[KAFKA_CONF_MAX];
    size_t n;
    const char *topic;        /* the option's text (owned by the getter) */
    const char *commit_group; /* NULL: no commits back */
} kafka_conf;

/* Builds the configuration from the options.  *c is the caller's
 * (kafka_conf_clear), also on failure. */
int kafka_conf_build(kafka_option_fn get, void *ud, kafka_conf *c, char *err, size_t errlen);

/* The value set for property `key`, or NULL. */
const char *kafka_conf_get(const kafka_conf *c, const char *key);

/* "key=value key=value ..." with secret values as "****", into
 * out[0..size) (cut when it does not fit).  Returns out. */
const char *kafka_conf_render(const kafka_conf *c, char *out, size_t size);

/* Frees the values (the password zeroed first).  c may be reused. */
void kafka_conf_clear(kafka_conf *c);

#endif
