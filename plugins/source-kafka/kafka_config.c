/*
 * kafka_config.c - owns the mapping of source-kafka's options to
 * librdkafka properties and the SASL password's loading (see
 * kafka_config.h).
 */
#include "kafka_config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SECRET_BYTES 4096

static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

static int put(kafka_conf *c, const char *key, const char *value, int secret)
{
    if (c->n == KAFKA_CONF_MAX) {
        return -ENOMEM;
    }
    char *v = strdup(value);
    if (v == NULL) {
        return -ENOMEM;
    }
    c->items[c->n++] = (kafka_conf_item){key, v, secret};
    return 0;
}

/* Reads the password file at `path` into a new string. */
static int read_secret_file(const char *path, char **out, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        return fail(err, errlen, -EACCES,
                    "cannot read the SASL password file %s (sasl_password_file): %s", path,
                    strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen, -EACCES,
                    "the SASL password file %s (sasl_password_file) is not a regular file", path);
    }
    char *buf = malloc(MAX_SECRET_BYTES + 1);
    if (buf == NULL) {
        close(fd);
        return -ENOMEM;
    }
    size_t len = 0;
    for (;;) {
        ssize_t got = read(fd, buf + len, MAX_SECRET_BYTES + 1 - len);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            break;
        }
        len += (size_t)got;
        if (len > MAX_SECRET_BYTES) {
            break;
        }
    }
    close(fd);
    if (len > MAX_SECRET_BYTES) {
        explicit_bzero(buf, MAX_SECRET_BYTES + 1);
        free(buf);
        return fail(err, errlen, -EACCES,
                    "the SASL password file %s (sasl_password_file) holds more than %d bytes: "
                    "it should hold the password alone",
                    path, MAX_SECRET_BYTES);
    }
    while (len > 0 && isspace((unsigned char)buf[len - 1])) {
        len--;
    }
    buf[len] = '\0';
    *out = buf;
    return 0;
}

static int load_password(kafka_option_fn get, void *ud, kafka_conf *c, char *err, size_t errlen)
{
    const char *env = get(ud, "sasl_password_env");
    const char *file = get(ud, "sasl_password_file");
    if (env != NULL && file != NULL) {
        return fail(err, errlen, -EINVAL,
                    "give the SASL password through sasl_password_env or sasl_password_file, "
                    "not both");
    }
    char *secret = NULL;
    if (file != NULL) {
        int rc = read_secret_file(file, &secret, err, errlen);
        if (rc != 0) {
            return rc;
        }
    } else if (env != NULL) {
        const char *v = getenv(env);
        if (v == NULL || v[0] == '\0') {
            return fail(err, errlen, -EACCES,
                        "the environment variable %s (sasl_password_env) is not set in the "
                        "environment of the loams-host process that reads the stream",
                        env);
        }
        if ((secret = strdup(v)) == NULL) {
            return -ENOMEM;
        }
    } else {
        return 0;
    }
    if (c->n == KAFKA_CONF_MAX) {
        explicit_bzero(secret, strlen(secret));
        free(secret);
        return -ENOMEM;
    }
    c->items[c->n++] = (kafka_conf_item){"sasl.password", secret, 1};
    return 0;
}

int kafka_conf_build(kafka_option_fn get, void *ud, kafka_conf *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    const char *servers = get(ud, "bootstrap_servers");
    c->topic = get(ud, "topic");
    if (servers == NULL || servers[0] == '\0' || c->topic == NULL || c->topic[0] == '\0') {
        return fail(err, errlen, -EINVAL,
                    "a Kafka stream needs bootstrap_servers = 'host:port,...' and topic = "
                    "'name'");
    }
    c->commit_group = get(ud, "commit_group");
    /* option -> property; NULL value: not set */
    static const struct {
        const char *option, *property;
    } map[] = {
        {"client_id", "client.id"},
        {"isolation_level", "isolation.level"},
        {"security_protocol", "security.protocol"},
        {"sasl_mechanism", "sasl.mechanisms"},
        {"sasl_username", "sasl.username"},
        {"ssl_ca_location", "ssl.ca.location"},
        {"ssl_certificate_location", "ssl.certificate.location"},
        {"ssl_key_location", "ssl.key.location"},
    };
    int rc = put(c, "bootstrap.servers", servers, 0);
    for (size_t i = 0; rc == 0 && i < sizeof map / sizeof map[0]; i++) {
        const char *v = get(ud, map[i].option);
        if (v != NULL && v[0] != '\0') {
            rc = put(c, map[i].property, v, 0);
        }
    }
    /* the reads are the host's: it assigns and seeks; offsets are never
     * stored or committed by the client, only by committed() */
    if (rc == 0) {
        rc = put(c, "enable.auto.commit", "false", 0);
    }
    if (rc == 0) {
        rc = put(c, "enable.auto.offset.store", "false", 0);
    }
    if (rc == 0) {
        rc = put(c, "enable.partition.eof", "true", 0);
    }
    if (rc == 0) {
        rc = put(c, "auto.offset.reset", "earliest", 0);
    }
    if (rc == 0) {
        rc = put(c, "fetch.wait.max.ms", "100", 0);
    }
    /* a broker back after an outage is seen within seconds */
    if (rc == 0) {
        rc = put(c, "reconnect.backoff.max.ms", "1000", 0);
    }
    if (rc == 0 && c->commit_group != NULL && c->commit_group[0] != '\0') {
        rc = put(c, "group.id", c->commit_group, 0);
    }
    if (rc == 0) {
        rc = load_password(get, ud, c, err, errlen);
        if (rc == -ENOMEM) {
            fail(err, errlen, rc, "out of memory");
        }
        return rc;
    }
    return fail(err, errlen, rc, "out of memory");
}

const char *kafka_conf_get(const kafka_conf *c, const char *key)
{
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->items[i].key, key) == 0) {
            return c->items[i].value;
        }
    }
    return NULL;
}

const char *kafka_conf_render(const kafka_conf *c, char *out, size_t size)
{
    size_t off = 0;
    if (size > 0) {
        out[0] = '\0';
    }
    for (size_t i = 0; i < c->n && off < size; i++) {
        int w = snprintf(out + off, size - off, "%s%s=%s", i > 0 ? " " : "", c->items[i].key,
                         c->items[i].secret ? "****" : c->items[i].value);
        if (w < 0) {
            break;
        }
        off += (size_t)w;
    }
    return out;
}

void kafka_conf_clear(kafka_conf *c)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->items[i].secret) {
            explicit_bzero(c->items[i].value, strlen(c->items[i].value));
        }
        free(c->items[i].value);
    }
    memset(c, 0, sizeof *c);
}
