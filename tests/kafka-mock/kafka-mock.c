/*
 * kafka-mock.c - hosts librdkafka's mock Kafka cluster for the tests
 * (rd_kafka_mock_cluster_new): no Kafka install, no JVM.
 *
 *     kafka-mock [-b BROKERS] [-t TOPIC:PARTITIONS]...
 *
 * Prints "bootstrap HOST:PORT,..." on one line once the brokers listen
 * (on 127.0.0.1), then reads commands from stdin, one a line, and
 * answers each with one line:
 *     down    every broker stops answering   -> "ok down"
 *     up      they answer again              -> "ok up"
 *     cpu     this process's CPU seconds     -> "cpu USER SYSTEM"
 *     topic NAME PARTITIONS                  -> "ok topic"
 * It stays up until stdin ends, "quit", SIGTERM or SIGINT.  Owns the
 * cluster and the client handle that carries it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int create_topic(rd_kafka_mock_cluster_t *mc, const char *name, int partitions)
{
    rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(mc, name, partitions, 1);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "kafka-mock: topic %s: %s\n", name, rd_kafka_err2str(e));
        return -1;
    }
    return 0;
}

static void set_brokers(rd_kafka_mock_cluster_t *mc, int brokers, int up)
{
    for (int id = 1; id <= brokers; id++) {
        if (up) {
            rd_kafka_mock_broker_set_up(mc, id);
        } else {
            rd_kafka_mock_broker_set_down(mc, id);
        }
    }
}

int main(int argc, char **argv)
{
    int brokers = 1;
    int opt;
    const char *topics[64];
    int ntopics = 0;
    while ((opt = getopt(argc, argv, "b:t:")) != -1) {
        if (opt == 'b') {
            brokers = atoi(optarg);
        } else if (opt == 't' && ntopics < 64) {
            topics[ntopics++] = optarg;
        } else {
            fprintf(stderr, "usage: kafka-mock [-b BROKERS] [-t TOPIC:PARTITIONS]...\n");
            return 2;
        }
    }
    if (brokers < 1 || brokers > 16) {
        fprintf(stderr, "kafka-mock: -b takes 1 to 16 brokers\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    char err[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (rk == NULL) {
        fprintf(stderr, "kafka-mock: %s\n", err);
        return 1;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, brokers);
    if (mc == NULL) {
        fprintf(stderr, "kafka-mock: the mock cluster did not start\n");
        rd_kafka_destroy(rk);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < ntopics && rc == 0; i++) {
        char name[256];
        int parts = 1;
        const char *colon = strrchr(topics[i], ':');
        size_t len = colon != NULL ? (size_t)(colon - topics[i]) : strlen(topics[i]);
        snprintf(name, sizeof name, "%.*s", (int)len, topics[i]);
        if (colon != NULL) {
            parts = atoi(colon + 1);
        }
        rc = create_topic(mc, name, parts);
    }
    if (rc == 0) {
        printf("bootstrap %s\n", rd_kafka_mock_cluster_bootstraps(mc));
        fflush(stdout);
    }
    char line[512];
    while (rc == 0 && !stop && fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        char name[256];
        int parts;
        if (strcmp(line, "down") == 0) {
            set_brokers(mc, brokers, 0);
            printf("ok down\n");
        } else if (strcmp(line, "up") == 0) {
            set_brokers(mc, brokers, 1);
            printf("ok up\n");
        } else if (strcmp(line, "cpu") == 0) {
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            printf("cpu %.3f %.3f\n", (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
                   (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
        } else if (sscanf(line, "topic %255s %d", name, &parts) == 2) {
            printf(create_topic(mc, name, parts) == 0 ? "ok topic\n" : "error topic\n");
        } else if (strcmp(line, "quit") == 0) {
            break;
        } else if (line[0] != '\0') {
            printf("error unknown command: %s\n", line);
        }
        fflush(stdout);
    }
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return rc == 0 ? 0 : 1;
}
