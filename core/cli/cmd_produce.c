/*
 * cmd_produce.c - `loams-host produce ns.s`: appends the lines of stdin to
 * a stream in atomic batches (stream/produce_batch.h, which the HTTP API's
 * produce shares), with a summary and progress.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/status.h"

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "catalog/backpressure.h"
#include "cli/datadir.h"
#include "cli/remote.h"
#include "loams/kit/json_tree.h"
#include "stream/produce_batch.h"
#include "stream/streamlog.h"

static const char usage[] =
    "Usage: loams-host produce NS.STREAM [--data-dir DIR] [--key-field FIELD]\n"
    "                          [--value-field FIELD] [--batch N] [--partition P]\n"
    "                          [--key K] [--encoding base64] [--key-encoding base64]\n"
    "                          [--backpressure on|off] [--progress]   < records\n"
    "  Each line of stdin is one record (empty lines are skipped).  Without\n"
    "  --key-field the line is the value and the record has no key\n"
    "  (round-robin over the partitions); with --key-field each line must be a\n"
    "  JSON object, the key is that field's value (strings as their text,\n"
    "  other values as JSON; missing or null: no key) and the value is the line.\n"
    "  With --value-field the value is that field instead (strings as their\n"
    "  text, other values as JSON), e.g. to produce records that are not JSON.\n"
    "  --key K gives every record the key K.  --encoding base64: each line is\n"
    "  the value in base64 (RFC 4648), for values with line breaks or binary\n"
    "  bytes; --key-encoding base64: each line is the key in base64, a tab,\n"
    "  then the value (in --encoding).  Before each batch it checks the\n"
    "  budgets of the stream's links (max_unapplied_records, max_unapplied_bytes,\n"
    "  max_lag) and waits while one is reached, as the HTTP API answers 429;\n"
    "  --backpressure off allows 4x the budgets (bulk loads).\n"
    "  Instead of --data-dir, --server URL [--token T] sends each batch to a node\n"
    "  (POST /v1/streams/NS.STREAM/records, one atomic append per batch; a 429\n"
    "  answer is waited out and the batch sent again).\n" LOAMS_REMOTE_USAGE;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits while the budgets of the stream's links refuse a batch of n
 * records and `bytes` bytes (catalog/backpressure.h), saying so with
 * --progress.  Returns 0 to append, -1 after printing why it cannot. */
static int wait_for_budget(loams_datadir *dd, const loams_objname *name, size_t n, uint64_t bytes,
                           int off, int progress, uint64_t done)
{
    for (;;) {
        loams_backpressure bp;
        char err[1024] = "";
        int rc =
            loams_backpressure_check(dd->meta, dd->log, name, n, bytes, off, &bp, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr,
                    "loams-host produce: %s; the %" PRIu64 " records before were appended\n",
                    err[0] ? err : loams_strerror(rc), done);
            return -1;
        }
        if (bp.too_large) {
            fprintf(stderr,
                    "loams-host produce: %s (a smaller --batch); the %" PRIu64
                    " records before were appended\n",
                    bp.message, done);
            return -1;
        }
        if (!bp.refused) {
            return 0;
        }
        if (progress) {
            fprintf(stderr, "waiting %d s (Retry-After): %s\n", bp.retry_after_s, bp.message);
        }
        sleep((unsigned)bp.retry_after_s);
    }
}

/* The summary line (the same for a data dir and a server). */
static void print_summary(const loams_objname *name, uint64_t records, uint64_t bytes, double secs,
                          const uint8_t *touched, uint32_t partitions)
{
    uint32_t ntouched = 0;
    for (uint32_t p = 0; p < partitions; p++) {
        ntouched += touched[p];
    }
    printf("produced %" PRIu64 " records (%" PRIu64 " bytes) to %s.%s in %.2f s: %.0f records/s, "
           "%.1f MB/s; partitions touched: %" PRIu32 " of %" PRIu32,
           records, bytes, name->ns, name->name, secs, secs > 0 ? (double)records / secs : 0.0,
           secs > 0 ? (double)bytes / 1e6 / secs : 0.0, ntouched, partitions);
    if (ntouched > 0 && ntouched <= 16) {
        const char *sep = " (";
        for (uint32_t p = 0; p < partitions; p++) {
            if (touched[p]) {
                printf("%s%" PRIu32, sep, p);
                sep = ", ";
            }
        }
        putchar(')');
    }
    putchar('\n');
}

/* At most this much body per request (http_max_body is 64 MiB by default). */
#define REMOTE_BATCH_BYTES (16u << 20)

/* produce through a server: the lines of stdin in batches of batch_size
 * lines (or REMOTE_BATCH_BYTES), each one POST and one atomic append. */
static int produce_remote(const char *server, const char *token, const loams_objname *name,
                          const loams_produce_options *po, long batch_size, int progress)
{
    char err[2048], stream[2 * LOAMS_IDENT_MAX + 2];
    snprintf(stream, sizeof stream, "%s.%s", name->ns, name->name);
    loams_remote *r = NULL;
    loams_buf *out = NULL, *body = NULL, *path = NULL;
    cJSON *doc = NULL;
    uint8_t *touched = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    uint64_t records = 0, bytes = 0, lineno = 0, first_line = 1;
    int rc = 1;
    if (loams_buf_create(&out) != 0 || loams_buf_create(&body) != 0 ||
        loams_buf_create(&path) != 0) {
        fprintf(stderr, "loams-host produce: out of memory\n");
        goto out;
    }
    if (loams_remote_open(server, token, &r, err, sizeof err) != 0 ||
        loams_buf_appendf(path, "/v1/streams/%s", stream) != 0 ||
        loams_remote_get_json(r, loams_buf_data(path, NULL), out, &doc, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host produce: %s\n", err);
        goto out;
    }
    uint32_t partitions = (uint32_t)loams_kit_json_tree_int_or(doc, "partitions", 0);
    cJSON_Delete(doc);
    doc = NULL;
    if (partitions == 0 || (po->partition >= 0 && (uint32_t)po->partition >= partitions)) {
        fprintf(stderr,
                "loams-host produce: --partition %" PRId32 ": stream %s has partitions 0 to "
                "%" PRIu32 "\n",
                po->partition, stream, partitions - 1);
        goto out;
    }
    char number[16];
    snprintf(number, sizeof number, "%" PRId32, po->partition);
    int ok = loams_buf_append(path, "/records", 8) == 0;
    ok = ok &&
         (po->key_field == NULL || loams_remote_add_param(path, "key_field", po->key_field) == 0);
    ok = ok && (po->value_field == NULL ||
                loams_remote_add_param(path, "value_field", po->value_field) == 0);
    ok = ok && (po->key == NULL || loams_remote_add_param(path, "key", po->key) == 0);
    ok = ok && (!po->value_base64 || loams_remote_add_param(path, "encoding", "base64") == 0);
    ok = ok && (!po->key_base64 || loams_remote_add_param(path, "key_encoding", "base64") == 0);
    ok = ok && (po->partition < 0 || loams_remote_add_param(path, "partition", number) == 0);
    if (!ok || (touched = calloc(partitions, 1)) == NULL) {
        fprintf(stderr, "loams-host produce: out of memory\n");
        goto out;
    }
    double t0 = now_s(), last = t0;
    size_t n = 0;
    for (int eof = 0; !eof;) {
        ssize_t got = getline(&line, &line_cap, stdin);
        if (got < 0) {
            if (ferror(stdin)) {
                fprintf(stderr, "loams-host produce: reading stdin: %s\n", strerror(errno));
                goto out;
            }
            eof = 1;
        } else {
            lineno++;
            size_t len = (size_t)got;
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) {
                len--;
            }
            if (len > 0) {
                if (loams_buf_append(body, line, len) != 0 ||
                    loams_buf_append(body, "\n", 1) != 0) {
                    fprintf(stderr, "loams-host produce: out of memory\n");
                    goto out;
                }
                n++;
            }
        }
        if (n > 0 &&
            (n == (size_t)batch_size || loams_buf_len(body) >= REMOTE_BATCH_BYTES || eof)) {
            size_t blen;
            const char *btext = loams_buf_data(body, &blen);
            int crc;
            /* 429 (the links' budgets) or 503: wait and send the batch again */
            while ((crc = loams_remote_call(r, "POST", loams_buf_data(path, NULL), "text/plain",
                                            btext, blen, out, err, sizeof err)) == LOAMS_ERETRY) {
                if (progress) {
                    fprintf(stderr, "waiting 1 s: %s\n", err);
                }
                sleep(1);
            }
            size_t alen;
            const char *answer = loams_buf_data(out, &alen);
            if (crc == 0 && loams_kit_json_tree_parse(answer, alen, &doc, NULL) != 0) {
                doc = NULL;
            }
            const cJSON *parts = cJSON_GetObjectItemCaseSensitive(doc, "partitions");
            if (crc == 0 && !cJSON_IsArray(parts)) {
                snprintf(err, sizeof err, "the server's answer is not the produce answer");
                crc = -1;
            }
            if (crc != 0) {
                fprintf(stderr,
                        "loams-host produce: stdin lines %" PRIu64 " to %" PRIu64 ": %s; the "
                        "%" PRIu64 " records before this batch were appended\n",
                        first_line, lineno, err, records);
                goto out;
            }
            const cJSON *pp;
            cJSON_ArrayForEach(pp, parts)
            {
                int64_t p = loams_kit_json_tree_int_or(pp, "partition", -1);
                if (p >= 0 && p < (int64_t)partitions) {
                    touched[p] = 1;
                }
            }
            records += (uint64_t)loams_kit_json_tree_int_or(doc, "count", 0);
            bytes += (uint64_t)loams_kit_json_tree_int_or(doc, "bytes", 0);
            cJSON_Delete(doc);
            doc = NULL;
            loams_buf_reset(body);
            n = 0;
            first_line = lineno + 1;
            double t = now_s();
            if (progress && t - last >= 1.0) {
                fprintf(stderr, "%s%" PRIu64 " records, %.1f MB, %.0f records/s%s",
                        isatty(STDERR_FILENO) ? "\r" : "", records, (double)bytes / 1e6,
                        (double)records / (t - t0), isatty(STDERR_FILENO) ? "" : "\n");
                last = t;
            }
        }
    }
    if (progress && last > t0 && isatty(STDERR_FILENO)) {
        fputc('\n', stderr);
    }
    print_summary(name, records, bytes, now_s() - t0, touched, partitions);
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    cJSON_Delete(doc);
    free(line);
    free(touched);
    loams_buf_free(out);
    loams_buf_free(body);
    loams_buf_free(path);
    loams_remote_close(r);
    return rc;
}

int loams_cmd_produce(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data-dir", required_argument, NULL, 'd'},
        {"key-field", required_argument, NULL, 'k'},
        {"value-field", required_argument, NULL, 'v'},
        {"batch", required_argument, NULL, 'b'},
        {"partition", required_argument, NULL, 'p'},
        {"progress", no_argument, NULL, 'P'},
        {"key", required_argument, NULL, 'K'},
        {"encoding", required_argument, NULL, 'E'},
        {"key-encoding", required_argument, NULL, 'J'},
        {"backpressure", required_argument, NULL, 'B'},
        {"server", required_argument, NULL, 'S'},
        {"token", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *data_dir = NULL, *key_field = NULL, *value_field = NULL, *fixed_key = NULL,
               *server = NULL;
    loams_remote_args ra = {0};
    int value_b64 = 0, key_b64 = 0, bp_off = 0;
    long batch_size = 10000, partition = -1;
    int progress = isatty(STDERR_FILENO), c;
    char *end;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:k:v:b:p:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': data_dir = optarg; break;
        case 'k': key_field = optarg; break;
        case 'v': value_field = optarg; break;
        case 'b':
            batch_size = strtol(optarg, &end, 10);
            if (*end != '\0' || batch_size < 1 || batch_size > 1000000) {
                fprintf(stderr,
                        "loams-host produce: --batch %s: give a number of records from "
                        "1 to 1000000\n",
                        optarg);
                return 2;
            }
            break;
        case 'p':
            partition = strtol(optarg, &end, 10);
            if (*end != '\0' || partition < 0 || partition >= LOAMS_STREAM_MAX_PARTITIONS) {
                fprintf(stderr, "loams-host produce: --partition %s is not a partition number\n",
                        optarg);
                return 2;
            }
            break;
        case 'P': progress = 1; break;
        case 'S': ra.server = optarg; break;
        case 'T': ra.token = optarg; break;
        case 'K': fixed_key = optarg; break;
        case 'E':
        case 'J':
            if (strcmp(optarg, "base64") != 0 && strcmp(optarg, "text") != 0) {
                fprintf(stderr, "loams-host produce: --%s %s: give base64 or text\n",
                        c == 'E' ? "encoding" : "key-encoding", optarg);
                return 2;
            }
            *(c == 'E' ? &value_b64 : &key_b64) = strcmp(optarg, "base64") == 0;
            break;
        case 'B':
            if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
                fprintf(stderr, "loams-host produce: --backpressure %s: give on or off\n", optarg);
                return 2;
            }
            bp_off = strcmp(optarg, "off") == 0;
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    loams_produce_options po = {.key_field = key_field,
                                .value_field = value_field,
                                .key = fixed_key,
                                .value_base64 = value_b64,
                                .key_base64 = key_b64,
                                .partition = (int32_t)partition};
    const char *conflict = loams_produce_options_check(&po);
    if (conflict != NULL) {
        fprintf(stderr, "loams-host produce: %s\n", conflict);
        return 2;
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "loams-host produce: name one stream (NS.STREAM)\n%s", usage);
        return 2;
    }
    char msg[1024];
    loams_objname name;
    if (loams_objname_parse(argv[optind], &name, msg, sizeof msg) != 0) {
        fprintf(stderr, "loams-host produce: %s\n", msg);
        return 2;
    }
    if (loams_remote_choose(&ra, "produce", data_dir != NULL, &server) != 0) {
        return 2;
    }
    if (server != NULL) {
        return produce_remote(server, ra.token, &name, &po, batch_size, progress);
    }
    loams_datadir *dd = NULL;
    if (loams_datadir_open(loams_datadir_choose(data_dir), 0, &dd, msg, sizeof msg) != 0) {
        fprintf(stderr, "loams-host produce: %s\n", msg);
        return 1;
    }
    int rc = 1;
    loams_stream *s = NULL;
    loams_stream_err se = {{0}};
    loams_produce_batch *b = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    uint8_t *touched = NULL;
    uint64_t records = 0, bytes = 0, lineno = 0;
    if (loams_stream_open(dd->log, &name, &s, &se) != 0 ||
        loams_stream_check_appendable(s, &se) != 0) {
        fprintf(stderr, "loams-host produce: %s\n", se.msg);
        goto out;
    }
    const loams_stream_def *def = loams_stream_definition(s);
    if (partition >= (long)def->partitions) {
        fprintf(stderr,
                "loams-host produce: --partition %ld: stream %s.%s has partitions 0 to "
                "%" PRIu32 "\n",
                partition, name.ns, name.name, def->partitions - 1);
        goto out;
    }
    touched = calloc(def->partitions, 1);
    if (touched == NULL || loams_produce_batch_new(&po, &b) != 0) {
        fprintf(stderr, "loams-host produce: out of memory\n");
        goto out;
    }
    double t0 = now_s(), last = t0;
    int eof = 0;
    while (!eof) {
        ssize_t got = getline(&line, &line_cap, stdin);
        if (got < 0) {
            if (ferror(stdin)) {
                fprintf(stderr, "loams-host produce: reading stdin: %s\n", strerror(errno));
                goto out;
            }
            eof = 1;
        } else {
            lineno++;
            size_t len = (size_t)got;
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) {
                len--;
            }
            if (len > 0) {
                int added = loams_produce_batch_add(b, line, len, msg, sizeof msg, NULL);
                if (added == LOAMS_EINPUT) {
                    fprintf(stderr,
                            "loams-host produce: stdin line %" PRIu64 ": %s; the %" PRIu64
                            " records before it were appended\n",
                            lineno, msg, records);
                    goto out;
                }
                if (added != 0) {
                    fprintf(stderr, "loams-host produce: out of memory\n");
                    goto out;
                }
            }
        }
        size_t n = loams_produce_batch_count(b);
        if (n > 0 && (n == (size_t)batch_size || eof)) {
            if (wait_for_budget(dd, &name, n, loams_produce_batch_bytes(b), bp_off, progress,
                                records) != 0) {
                goto out;
            }
            if (loams_produce_batch_append(b, s, &se) != 0) {
                fprintf(stderr,
                        "loams-host produce: %s; the %" PRIu64 " records before this "
                        "batch were appended\n",
                        se.msg, records);
                goto out;
            }
            const loams_stream_pos *pos = loams_produce_batch_positions(b);
            for (size_t i = 0; i < n; i++) {
                touched[pos[i].partition] = 1;
            }
            bytes += loams_produce_batch_bytes(b);
            records += n;
            loams_produce_batch_reset(b);
            double t = now_s();
            if (progress && t - last >= 1.0) {
                fprintf(stderr, "%s%" PRIu64 " records, %.1f MB, %.0f records/s%s",
                        isatty(STDERR_FILENO) ? "\r" : "", records, (double)bytes / 1e6,
                        (double)records / (t - t0), isatty(STDERR_FILENO) ? "" : "\n");
                last = t;
            }
        }
    }
    double secs = now_s() - t0;
    if (progress && last > t0 && isatty(STDERR_FILENO)) {
        fputc('\n', stderr);
    }
    print_summary(&name, records, bytes, secs, touched, def->partitions);
    rc = 0;
out:
    free(line);
    free(touched);
    loams_produce_batch_free(b);
    loams_stream_close(s);
    loams_datadir_close(dd);
    return rc;
}
