/*
 * source_kafka.c - the source-kafka plugin (loams/source.h): a Kafka
 * topic as a stream, read with librdkafka by assign and seek.  Owns one
 * consumer handle per state, each partition's read position and the
 * messages read but not yet handed over (a read stops at max_records or
 * max_bytes; what the client fetched past that waits for the next read),
 * and the messages of the last read, whose bytes the records point into.
 *
 * No consumer-group rebalancing: the host's leases decide who reads which
 * partitions, and the applied offsets in the target's commit decide where
 * (a read from another offset than the one the partition stands at stops
 * and restarts the partition there).  With commit_group the offsets a
 * target commit applied are committed to that group afterwards (async,
 * best effort) so Kafka's lag tooling sees progress; they are never read.
 * isolation.level=read_committed by default: aborted transactions' records
 * and transaction markers are skipped, so offsets have holes; a read that
 * reaches the end of a partition reports the end offset (partition EOF)
 * as where the next read goes on.  An unreachable cluster answers
 * LOAMS_ERETRY with librdkafka's reason.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>

#include <librdkafka/rdkafka.h>
#include <loams/plugin.h>

#include "kafka_config.h"

#define WHO "source-kafka"
#define META_TIMEOUT_MS 5000
#define FETCH_BATCH 1000

static const loams_host_api *host;

typedef struct kpart {
    int started;
    int64_t next;              /* where the host's next read of it starts */
    rd_kafka_message_t **pend; /* fetched, not handed over: pend[first..n) */
    size_t first, n, cap;
    int64_t eof; /* end offset of the last partition EOF seen, -1 */
} kpart;

typedef struct kstate {
    loams_ctx *ctx;
    rd_kafka_t *rk;
    rd_kafka_topic_t *rkt;
    char topic[256];
    char servers[512];
    int commit;
    kpart *parts;
    int32_t nparts;
    rd_kafka_message_t **out; /* the last read's messages */
    size_t nout, outcap;
    loams_source_record *recs;
    size_t rcap;
    loams_source_header *hdrs;
    size_t hcap;
    atomic_int down;       /* librdkafka said every broker is down */
    char down_reason[256]; /* its words, read after down is seen */
} kstate;

static const char *get_option(void *ud, const char *name)
{
    return host->option(ud, name);
}

/* librdkafka's log lines go to the host's log, at its levels. */
static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    const kstate *s = rd_kafka_opaque(rk);
    if (s == NULL) {
        return;
    }
    loams_ctx *ctx = s->ctx;
    loams_log_level l = level <= 3   ? LOAMS_LOG_ERROR
                        : level <= 4 ? LOAMS_LOG_WARN
                        : level <= 6 ? LOAMS_LOG_INFO
                                     : LOAMS_LOG_DEBUG;
    host->log(ctx, l, "librdkafka %s: %s", fac, buf);
}

/* Errors librdkafka reports (served by rd_kafka_poll on the reading
 * thread): every broker down is what a read answers LOAMS_ERETRY for. */
static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    kstate *s = opaque;
    (void)rk;
    if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) {
        snprintf(s->down_reason, sizeof s->down_reason, "%s", reason);
        atomic_store(&s->down, 1);
    }
}

static int unreachable(kstate *s, rd_kafka_resp_err_t e, const char *what)
{
    host->set_error(s->ctx,
                    "Kafka at %s (topic %s): %s: %s; the link waits and tries again with "
                    "backoff",
                    s->servers, s->topic, what, rd_kafka_err2str(e));
    return LOAMS_ERETRY;
}

static int is_transient(rd_kafka_resp_err_t e)
{
    return e == RD_KAFKA_RESP_ERR__TRANSPORT || e == RD_KAFKA_RESP_ERR__TIMED_OUT ||
           e == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || e == RD_KAFKA_RESP_ERR__RESOLVE ||
           e == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
           e == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION || e == RD_KAFKA_RESP_ERR__WAIT_COORD ||
           e == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT;
}

static void release_out(kstate *s)
{
    for (size_t i = 0; i < s->nout; i++) {
        rd_kafka_message_destroy(s->out[i]);
    }
    s->nout = 0;
}

static void drop_pending(kpart *kp)
{
    for (size_t i = kp->first; i < kp->n; i++) {
        rd_kafka_message_destroy(kp->pend[i]);
    }
    kp->first = kp->n = 0;
}

static void k_close(void *state)
{
    kstate *s = state;
    if (s == NULL) {
        return;
    }
    release_out(s);
    for (int32_t p = 0; p < s->nparts; p++) {
        drop_pending(&s->parts[p]);
        if (s->parts[p].started) {
            rd_kafka_consume_stop(s->rkt, p);
        }
        host->free(s->ctx, s->parts[p].pend);
    }
    if (s->rkt != NULL) {
        rd_kafka_topic_destroy(s->rkt);
    }
    if (s->rk != NULL) {
        rd_kafka_destroy(s->rk);
    }
    host->free(s->ctx, s->parts);
    host->free(s->ctx, s->out);
    host->free(s->ctx, s->recs);
    host->free(s->ctx, s->hdrs);
    host->free(s->ctx, s);
}

static int k_open(loams_ctx *ctx, const loams_source_spec *spec, void **state)
{
    kstate *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    s->ctx = ctx;
    kafka_conf kc;
    char err[512];
    int rc = kafka_conf_build(get_option, ctx, &kc, err, sizeof err);
    if (rc != 0) {
        kafka_conf_clear(&kc);
        host->set_error(ctx, "%s", err);
        host->free(ctx, s);
        return rc == -ENOMEM ? rc : LOAMS_EINPUT;
    }
    snprintf(s->topic, sizeof s->topic, "%s", kc.topic);
    snprintf(s->servers, sizeof s->servers, "%s", kafka_conf_get(&kc, "bootstrap.servers"));
    s->commit = kc.commit_group != NULL && kc.commit_group[0] != '\0';
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    for (size_t i = 0; conf != NULL && i < kc.n; i++) {
        if (rd_kafka_conf_set(conf, kc.items[i].key, kc.items[i].value, err, sizeof err) !=
            RD_KAFKA_CONF_OK) {
            /* librdkafka's message names the property, never the value */
            host->set_error(ctx, "stream %s.%s: %s", spec->ns, spec->name, err);
            rd_kafka_conf_destroy(conf);
            kafka_conf_clear(&kc);
            host->free(ctx, s);
            return LOAMS_EINPUT;
        }
    }
    char shown[1024];
    host->log(ctx, LOAMS_LOG_DEBUG, "client configuration: %s",
              kafka_conf_render(&kc, shown, sizeof shown));
    kafka_conf_clear(&kc);
    if (conf == NULL) {
        host->free(ctx, s);
        return -ENOMEM;
    }
    rd_kafka_conf_set_opaque(conf, s);
    rd_kafka_conf_set_log_cb(conf, log_cb);
    rd_kafka_conf_set_error_cb(conf, error_cb);
    s->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (s->rk == NULL) {
        rd_kafka_conf_destroy(conf);
        host->set_error(ctx, "stream %s.%s: creating the Kafka client: %s", spec->ns, spec->name,
                        err);
        host->free(ctx, s);
        return LOAMS_EINPUT;
    }
    s->rkt = rd_kafka_topic_new(s->rk, s->topic, NULL);
    if (s->rkt == NULL) {
        host->set_error(ctx, "topic %s: %s", s->topic, rd_kafka_err2str(rd_kafka_last_error()));
        k_close(s);
        return LOAMS_EINPUT;
    }
    *state = s;
    return 0;
}

static int k_partitions(void *state, uint32_t *count)
{
    kstate *s = state;
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(s->rk, 0, s->rkt, &md, META_TIMEOUT_MS);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return unreachable(s, e, "reading the topic's metadata");
    }
    int rc = 0;
    if (md->topic_cnt != 1 || md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR ||
        md->topics[0].partition_cnt < 1) {
        rd_kafka_resp_err_t te =
            md->topic_cnt == 1 ? md->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
        host->set_error(s->ctx, "Kafka at %s has no topic %s: %s", s->servers, s->topic,
                        rd_kafka_err2str(te));
        rc = is_transient(te) ? LOAMS_ERETRY : LOAMS_ENOTFOUND;
    } else {
        *count = (uint32_t)md->topics[0].partition_cnt;
    }
    rd_kafka_metadata_destroy(md);
    return rc;
}

/* The partition table, sized on first use from the topic's metadata. */
static int part_of(kstate *s, int32_t p, kpart **out)
{
    if (s->parts == NULL) {
        uint32_t n;
        int rc = k_partitions(s, &n);
        if (rc != 0) {
            return rc;
        }
        if ((s->parts = host->calloc(s->ctx, n, sizeof *s->parts)) == NULL) {
            return -ENOMEM;
        }
        s->nparts = (int32_t)n;
        for (uint32_t i = 0; i < n; i++) {
            s->parts[i].eof = -1;
        }
    }
    if (p < 0 || p >= s->nparts) {
        host->set_error(s->ctx, "topic %s has partitions 0 to %" PRId32 ", not %" PRId32, s->topic,
                        s->nparts - 1, p);
        return -EINVAL;
    }
    *out = &s->parts[p];
    return 0;
}

static int k_marks(void *state, int32_t partition, loams_source_marks *out)
{
    kstate *s = state;
    int64_t lo = 0, hi = 0;
    rd_kafka_resp_err_t e =
        rd_kafka_query_watermark_offsets(s->rk, s->topic, partition, &lo, &hi, META_TIMEOUT_MS);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return is_transient(e) ? unreachable(s, e, "reading the partition's offsets")
                               : (host->set_error(s->ctx, "topic %s partition %" PRId32 ": %s",
                                                  s->topic, partition, rd_kafka_err2str(e)),
                                  -EINVAL);
    }
    *out = (loams_source_marks){lo, hi, 0};
    return 0;
}

/* (Re)starts partition p at `from`, dropping what was fetched before. */
static int restart(kstate *s, int32_t p, kpart *kp, int64_t from)
{
    drop_pending(kp);
    if (kp->started) {
        rd_kafka_consume_stop(s->rkt, p);
        kp->started = 0;
    }
    if (rd_kafka_consume_start(s->rkt, p, from) != 0) {
        host->set_error(s->ctx,
                        "topic %s partition %" PRId32 ": starting at offset %" PRId64 ": %s",
                        s->topic, p, from, rd_kafka_err2str(rd_kafka_last_error()));
        return LOAMS_ERETRY;
    }
    kp->started = 1;
    kp->next = from;
    kp->eof = -1;
    return 0;
}

/* Fetches what the client has for p (waiting at most wait_ms) into its
 * pending messages. */
static int fetch(kstate *s, int32_t p, kpart *kp, int wait_ms)
{
    if (kp->first > 0 && kp->first == kp->n) {
        kp->first = kp->n = 0;
    }
    if (kp->cap - kp->n < FETCH_BATCH) {
        size_t cap = kp->n + FETCH_BATCH;
        rd_kafka_message_t **g = host->realloc(s->ctx, kp->pend, cap * sizeof *g);
        if (g == NULL) {
            return -ENOMEM;
        }
        kp->pend = g;
        kp->cap = cap;
    }
    ssize_t got = rd_kafka_consume_batch(s->rkt, p, wait_ms, kp->pend + kp->n, FETCH_BATCH);
    if (got < 0) {
        return unreachable(s, rd_kafka_last_error(), "fetching");
    }
    kp->n += (size_t)got;
    return 0;
}

static int grow_out(kstate *s, size_t need)
{
    if (need <= s->outcap) {
        return 0;
    }
    rd_kafka_message_t **o = host->realloc(s->ctx, s->out, need * sizeof *o);
    if (o != NULL) {
        s->out = o;
    }
    loams_source_record *r = host->realloc(s->ctx, s->recs, need * sizeof *r);
    if (r != NULL) {
        s->recs = r;
    }
    if (o == NULL || r == NULL) {
        return -ENOMEM;
    }
    s->outcap = need;
    return 0;
}

/* The headers of every handed-over message into s->hdrs, then pointers. */
static int headers_of(kstate *s, size_t count)
{
    size_t total = 0;
    size_t *first = host->malloc(s->ctx, (count ? count : 1) * sizeof *first);
    if (first == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        rd_kafka_headers_t *hs = NULL;
        first[i] = total;
        s->recs[i].nheaders = 0;
        if (rd_kafka_message_headers(s->out[i], &hs) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            continue;
        }
        const char *name;
        const void *val;
        size_t size;
        for (size_t k = 0;
             rd_kafka_header_get_all(hs, k, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
             k++) {
            if (total == s->hcap) {
                size_t cap = s->hcap ? 2 * s->hcap : 64;
                loams_source_header *g = host->realloc(s->ctx, s->hdrs, cap * sizeof *g);
                if (g == NULL) {
                    host->free(s->ctx, first);
                    return -ENOMEM;
                }
                s->hdrs = g;
                s->hcap = cap;
            }
            s->hdrs[total++] = (loams_source_header){name, strlen(name), val, val ? size : 0};
            s->recs[i].nheaders++;
        }
    }
    for (size_t i = 0; i < count; i++) {
        s->recs[i].headers = s->recs[i].nheaders > 0 ? s->hdrs + first[i] : NULL;
    }
    host->free(s->ctx, first);
    return 0;
}

static int k_read(void *state, int32_t partition, int64_t from, int64_t upto, size_t max_records,
                  size_t max_bytes, loams_source_chunk *out)
{
    kstate *s = state;
    release_out(s);
    kpart *kp;
    int rc = part_of(s, partition, &kp);
    if (rc != 0) {
        return rc;
    }
    if (!kp->started || from != kp->next) {
        if ((rc = restart(s, partition, kp, from)) != 0) {
            return rc;
        }
    }
    if (kp->first == kp->n && (rc = fetch(s, partition, kp, 0)) != 0) {
        return rc;
    }
    size_t count = 0, bytes = 0;
    int64_t eof = -1;
    while (kp->first < kp->n && count < max_records) {
        rd_kafka_message_t *m = kp->pend[kp->first];
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            eof = m->offset;
            kp->first++;
            rd_kafka_message_destroy(m);
            continue;
        }
        if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            rd_kafka_resp_err_t e = m->err;
            char what[256];
            snprintf(what, sizeof what, "partition %" PRId32 " at offset %" PRId64 ": %s",
                     partition, m->offset, rd_kafka_message_errstr(m));
            kp->first++;
            rd_kafka_message_destroy(m);
            if (count == 0) {
                /* start over from where the host stands at the next read */
                kp->started = kp->started ? (rd_kafka_consume_stop(s->rkt, partition), 0) : 0;
                drop_pending(kp);
                return unreachable(s, e, what);
            }
            break;
        }
        if (m->offset < from) {
            kp->first++; /* fetched before a restart took effect */
            rd_kafka_message_destroy(m);
            continue;
        }
        size_t mb = m->len + m->key_len;
        if (m->offset >= upto || (count > 0 && max_bytes > 0 && bytes + mb > max_bytes)) {
            break;
        }
        if ((rc = grow_out(s, count + 1)) != 0) {
            return rc;
        }
        rd_kafka_timestamp_type_t tst;
        int64_t ts = rd_kafka_message_timestamp(m, &tst);
        s->out[count] = m;
        s->recs[count] = (loams_source_record){.offset = m->offset,
                                               .timestamp_us = ts > 0 ? ts * 1000 : 0,
                                               .key = m->key,
                                               .key_len = m->key != NULL ? m->key_len : 0,
                                               .value = m->payload,
                                               .value_len = m->payload != NULL ? m->len : 0};
        s->nout = ++count;
        bytes += mb;
        kp->first++;
    }
    if (count > 0 && (rc = headers_of(s, count)) != 0) {
        return rc;
    }
    out->records = s->recs;
    out->count = count;
    out->bytes = bytes;
    if (count > 0) {
        out->next_offset = s->recs[count - 1].offset + 1;
    } else if (eof > from && eof <= upto) {
        out->next_offset = eof; /* past markers of transactions */
    } else {
        out->next_offset = from;
    }
    kp->next = out->next_offset;
    rd_kafka_poll(s->rk, 0); /* serves error_cb */
    if (count > 0 || eof >= 0) {
        atomic_store(&s->down, 0); /* the cluster answered */
    } else if (atomic_load(&s->down)) {
        host->set_error(s->ctx,
                        "Kafka at %s (topic %s) does not answer: %s; the link waits and tries "
                        "again with backoff",
                        s->servers, s->topic, s->down_reason);
        return LOAMS_ERETRY;
    }
    return 0;
}

static void k_release(void *state)
{
    release_out(state);
}

static int k_committed(void *state, const loams_offsets *applied)
{
    kstate *s = state;
    if (!s->commit) {
        return 0;
    }
    size_t n = host->offsets_count(applied);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)n);
    if (l == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t p;
        int64_t next;
        if (host->offsets_at(applied, i, &p, &next) == 0) {
            rd_kafka_topic_partition_list_add(l, s->topic, p)->offset = next;
        }
    }
    rd_kafka_resp_err_t e = rd_kafka_commit(s->rk, l, 1);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_poll(s->rk, 0); /* serve the answers of earlier commits */
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        host->set_error(s->ctx, "committing offsets to consumer group %s: %s", rd_kafka_name(s->rk),
                        rd_kafka_err2str(e));
        return LOAMS_ERETRY;
    }
    return 0;
}

static const loams_source_vtable vtable = {.size = sizeof vtable,
                                           .open = k_open,
                                           .partitions = k_partitions,
                                           .marks = k_marks,
                                           .read = k_read,
                                           .release = k_release,
                                           .committed = k_committed,
                                           .close = k_close};

static const loams_option_spec options[] = {
    {"bootstrap_servers", LOAMS_OPT_STRING, 0, NULL, NULL,
     "the brokers to connect to first, 'host:port,host:port' (required)"},
    {"topic", LOAMS_OPT_STRING, 0, NULL, NULL, "the topic the stream reads (required)"},
    {"commit_group", LOAMS_OPT_STRING, 0, NULL, NULL,
     "a consumer group to commit the applied offsets to after each target commit, for Kafka's "
     "lag tooling; never read back (the target's commit is what a link resumes from)"},
    {"isolation_level", LOAMS_OPT_ENUM, 0, "read_committed", "read_committed|read_uncommitted",
     "read_committed skips the records of aborted transactions"},
    {"client_id", LOAMS_OPT_STRING, 0, "loams-host", NULL, "the client.id the brokers see"},
    {"security_protocol", LOAMS_OPT_ENUM, 0, "plaintext", "plaintext|ssl|sasl_plaintext|sasl_ssl",
     "librdkafka's security.protocol"},
    {"sasl_mechanism", LOAMS_OPT_ENUM, 0, NULL, "PLAIN|SCRAM-SHA-256|SCRAM-SHA-512|GSSAPI",
     "librdkafka's sasl.mechanisms"},
    {"sasl_username", LOAMS_OPT_STRING, 0, NULL, NULL, "librdkafka's sasl.username"},
    {"sasl_password_env", LOAMS_OPT_STRING, 0, NULL, NULL,
     "the environment variable of the server that holds the SASL password"},
    {"sasl_password_file", LOAMS_OPT_STRING, 0, NULL, NULL,
     "a file that holds the SASL password (alone)"},
    {"ssl_ca_location", LOAMS_OPT_STRING, 0, NULL, NULL, "librdkafka's ssl.ca.location"},
    {"ssl_certificate_location", LOAMS_OPT_STRING, 0, NULL, NULL,
     "librdkafka's ssl.certificate.location"},
    {"ssl_key_location", LOAMS_OPT_STRING, 0, NULL, NULL, "librdkafka's ssl.key.location"},
    {NULL, 0, 0, NULL, NULL, NULL}};

static const loams_plugin_descriptor descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_SOURCE,
    "source-kafka",
    "1.0.0",
    "Reads a Kafka topic (librdkafka, assign and seek, read_committed)",
    &vtable,
    options};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &descriptor;
}
