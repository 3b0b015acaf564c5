/*
 * cmd_stream.c - `loams-host stream read|list|describe`: looks at streams.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/source.h"
#include "cli/cli.h"
#include "cli/datadir.h"
#include "cli/remote.h"
#include "loams/kit/json_tree.h"
#include "sql/ddl_exec.h"
#include "stream/stream_json.h"
#include "stream/streamlog.h"
#include "base/units.h"

static const char usage[] =
    "Usage: loams-host stream read NS.STREAM [--partition P] [--from OFFSET] [--limit N]\n"
    "                          [--json] [--data-dir DIR]\n"
    "       loams-host stream list [--json] [--data-dir DIR]\n"
    "       loams-host stream describe NS.STREAM [--json] [--data-dir DIR]\n"
    "  read prints the values one per line, or with --json one JSON object per\n"
    "  record (partition, offset, timestamp, key, value, headers); without\n"
    "  --partition it reads every partition in turn; it stops at the high-water\n"
    "  mark seen when it starts, or after N records.\n"
    "  Instead of --data-dir, --server URL [--token T] asks a running node.\n" LOAMS_REMOTE_USAGE;

typedef struct print_state {
    int json;
    loams_buf *line;
} print_state;

static int print_record(const loams_stream_record *r, int32_t partition, void *userdata)
{
    print_state *ps = userdata;
    if (!ps->json) {
        fwrite(r->value, 1, r->value_len, stdout);
        putchar('\n');
        return 0;
    }
    loams_buf_reset(ps->line);
    if (loams_stream_record_json(r, partition, ps->line) != 0) {
        return -ENOMEM;
    }
    size_t len;
    const char *text = loams_buf_data(ps->line, &len);
    fwrite(text, 1, len, stdout);
    putchar('\n');
    return 0;
}

static int cmd_read(loams_datadir *dd, const loams_objname *name, long partition, long long from,
                    long long limit, int json)
{
    loams_stream *s = NULL;
    loams_stream_err se = {{0}};
    print_state ps = {.json = json};
    if (loams_stream_open(dd->log, name, &s, &se) != 0) {
        fprintf(stderr, "loams-host stream read: %s\n", se.msg);
        return 1;
    }
    int rc = loams_buf_create(&ps.line);
    if (rc == 0) {
        rc = loams_stream_read_range(s, (int32_t)partition, from, limit, print_record, &ps, NULL, 0,
                                     NULL, &se);
    }
    if (rc == -EINVAL) {
        fprintf(stderr, "loams-host stream read: --%s\n", se.msg);
    } else if (rc == -ENOMEM) {
        fprintf(stderr, "loams-host stream read: out of memory\n");
    } else if (rc != 0) {
        fprintf(stderr, "loams-host stream read: %s\n", se.msg);
    }
    loams_buf_free(ps.line);
    loams_stream_close(s);
    if (rc != 0) {
        return 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

static int cmd_describe(loams_datadir *dd, const loams_objname *name, int json)
{
    loams_stream *s = NULL;
    loams_stream_err se = {{0}};
    if (json) {
        loams_buf *doc = NULL;
        int rc = loams_buf_create(&doc);
        if (rc == 0) {
            rc = loams_stream_describe_json(dd->log, name, doc, &se);
        }
        if (rc == 0) {
            size_t len;
            const char *text = loams_buf_data(doc, &len);
            fwrite(text, 1, len, stdout);
            putchar('\n');
        } else {
            fprintf(stderr, "loams-host stream describe: %s\n",
                    rc == -ENOMEM ? "out of memory" : se.msg);
        }
        loams_buf_free(doc);
        return rc == 0 ? 0 : 1;
    }
    (void)s;
    loams_source *src = NULL;
    if (loams_source_open(dd->log, NULL, name, NULL, &src, se.msg, sizeof se.msg) != 0) {
        fprintf(stderr, "loams-host stream describe: %s\n", se.msg);
        return 1;
    }
    const loams_stream_def *d = loams_source_definition(src);
    if (d->source[0] != '\0') {
        printf("stream %s.%s (id %" PRIu64 ")\n  source %s (its records and their retention "
               "are that system's)\n",
               d->name.ns, d->name.name, d->id, d->source);
    }
    char ret[32] = "none", rb[32] = "none", created[64] = "";
    if (d->retention_ms > 0) {
        loams_duration_format(d->retention_ms * 1000, ret, sizeof ret);
    }
    if (d->retention_bytes > 0) {
        loams_size_format(d->retention_bytes, rb, sizeof rb);
    }
    time_t ct = (time_t)(d->created_ms / 1000);
    struct tm tm;
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&ct, &tm));
    char hold[48] = "the node's (retention_max_hold)";
    if (d->retention_max_hold_ms < 0) {
        snprintf(hold, sizeof hold, "0 (no hold)");
    } else if (d->retention_max_hold_ms > 0) {
        loams_duration_format(d->retention_max_hold_ms * 1000, hold, sizeof hold);
    }
    printf("stream %s.%s (id %" PRIu64 ")\n  partitions %" PRIu32 "\n  retention %s\n"
           "  retention_bytes %s (per partition)\n  retention_max_hold %s\n"
           "  key_type %s\n  created %s\n\n"
           "  %9s %14s %14s %14s\n",
           d->name.ns, d->name.name, d->id, d->partitions, ret, rb, hold,
           loams_stream_key_type_name(d->key_type), created, "partition", "low offset",
           "high offset", "bytes");
    int rc = 0;
    for (uint32_t p = 0; p < d->partitions; p++) {
        loams_source_marks pi;
        if (loams_source_get_marks(src, (int32_t)p, &pi, se.msg, sizeof se.msg) != 0) {
            fprintf(stderr, "loams-host stream describe: %s\n", se.msg);
            rc = 1;
            break;
        }
        printf("  %9" PRIu32 " %14" PRId64 " %14" PRId64 " %14" PRIu64 "\n", p, pi.low, pi.high,
               pi.bytes);
    }
    loams_source_close(src);
    return rc;
}

/* ---- through a server (--server): the same output from the API ---- */

/* A number of the server's document (integers are raw items, json_tree.h). */
static double jnum(const cJSON *o, const char *name)
{
    double d = 0;
    return loams_kit_json_tree_double(cJSON_GetObjectItemCaseSensitive(o, name), &d) == 0 ? d : 0;
}

/* stream list's table from GET /v1/streams (loams_ddl_print_streams). */
static void print_list(const cJSON *arr)
{
    printf("%-40s %10s %10s %16s %14s %14s\n", "stream", "partitions", "retention",
           "retention_bytes", "records", "bytes");
    const cJSON *d;
    cJSON_ArrayForEach(d, arr)
    {
        char ret[32] = "-", rb[32] = "-";
        int64_t ms = (int64_t)jnum(d, "retention_ms");
        uint64_t b = (uint64_t)jnum(d, "retention_bytes");
        if (ms > 0) {
            loams_duration_format(ms * 1000, ret, sizeof ret);
        }
        if (b > 0) {
            loams_size_format(b, rb, sizeof rb);
        }
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "stream"));
        printf("%-40s %10" PRIu32 " %10s %16s %14" PRIu64 " %14" PRIu64 "\n",
               name != NULL ? name : "?", (uint32_t)jnum(d, "partitions"), ret, rb,
               (uint64_t)jnum(d, "records"), (uint64_t)jnum(d, "bytes"));
    }
}

/* stream describe's text from GET /v1/streams/{s} (cmd_describe). */
static void print_describe(const cJSON *d)
{
    char ret[32] = "none", rb[32] = "none", created[64] = "";
    int64_t ms = (int64_t)jnum(d, "retention_ms");
    uint64_t b = (uint64_t)jnum(d, "retention_bytes");
    if (ms > 0) {
        loams_duration_format(ms * 1000, ret, sizeof ret);
    }
    if (b > 0) {
        loams_size_format(b, rb, sizeof rb);
    }
    time_t ct = (time_t)(jnum(d, "created") / 1000);
    struct tm tm;
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&ct, &tm));
    char hold[48] = "the node's (retention_max_hold)";
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(d, "retention_max_hold_ms");
    double hms = 0;
    /* null: the node's; 0: no hold (stream_json.h) */
    if (loams_kit_json_tree_double(h, &hms) == 0 && hms <= 0) {
        snprintf(hold, sizeof hold, "0 (no hold)");
    } else if (loams_kit_json_tree_double(h, &hms) == 0) {
        loams_duration_format((int64_t)hms * 1000, hold, sizeof hold);
    }
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "stream"));
    const char *key_type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "key_type"));
    printf("stream %s (id %" PRIu64 ")\n  partitions %" PRIu32 "\n  retention %s\n"
           "  retention_bytes %s (per partition)\n  retention_max_hold %s\n"
           "  key_type %s\n  created %s\n\n"
           "  %9s %14s %14s %14s\n",
           name != NULL ? name : "?", (uint64_t)jnum(d, "id"), (uint32_t)jnum(d, "partitions"), ret,
           rb, hold, key_type != NULL ? key_type : "?", created, "partition", "low offset",
           "high offset", "bytes");
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(d, "partition_state"))
    {
        printf("  %9" PRIu32 " %14" PRId64 " %14" PRId64 " %14" PRIu64 "\n",
               (uint32_t)jnum(p, "partition"), (int64_t)jnum(p, "low_offset"),
               (int64_t)jnum(p, "high_offset"), (uint64_t)jnum(p, "bytes"));
    }
}

/* The end of the JSON object that starts at text[i] ('{'), or 0. */
static size_t object_end(const char *text, size_t len, size_t i)
{
    int depth = 0, in_string = 0;
    for (; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_string = 0;
            }
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            return i + 1;
        }
    }
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Prints the records of one page: under --json each as the server wrote
 * it (loams_stream_record_json, byte for byte), else its value.  Returns
 * their count, or -1 for a page of another shape. */
static long print_page(const char *text, size_t len, const cJSON *doc, int json)
{
    const cJSON *records = cJSON_GetObjectItemCaseSensitive(doc, "records");
    if (!cJSON_IsArray(records)) {
        return -1;
    }
    long n = 0;
    if (!json) {
        const cJSON *r;
        cJSON_ArrayForEach(r, records)
        {
            const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "value"));
            const char *hex =
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "value_hex"));
            if (v != NULL) {
                fputs(v, stdout);
            }
            for (size_t i = 0; v == NULL && hex != NULL && hex[i] && hex[i + 1]; i += 2) {
                putchar(hexval(hex[i]) * 16 + hexval(hex[i + 1]));
            }
            putchar('\n');
            n++;
        }
        return n;
    }
    const char *start = strstr(text, "\"records\":[");
    if (start == NULL) {
        return -1;
    }
    size_t i = (size_t)(start - text) + 11;
    while (i < len && text[i] == '{') {
        size_t end = object_end(text, len, i);
        if (end == 0) {
            return -1;
        }
        fwrite(text + i, 1, end - i, stdout);
        putchar('\n');
        n++;
        i = end < len && text[end] == ',' ? end + 1 : end;
    }
    return n == cJSON_GetArraySize(records) ? n : -1;
}

/* stream read through the server: each partition in turn (or the one
 * asked), page by page, up to the high-water mark its first page saw. */
static int read_remote(loams_remote *r, const char *stream, uint32_t partitions, long partition,
                       long long from, long long limit, int json, char *err, size_t errlen)
{
    loams_buf *out = NULL;
    int rc = loams_buf_create(&out);
    long long done = 0;
    for (uint32_t p = partition >= 0 ? (uint32_t)partition : 0;
         rc == 0 && p < partitions && (limit < 0 || done < limit); p++) {
        long long at = from, hwm = -1;
        while (rc == 0 && (limit < 0 || done < limit) && (hwm < 0 || at < hwm)) {
            long long want = 10000;
            if (limit >= 0 && want > limit - done) {
                want = limit - done;
            }
            if (hwm >= 0 && want > hwm - at) {
                want = hwm - at;
            }
            char path[512];
            snprintf(path, sizeof path,
                     "/v1/streams/%s/records?partition=%" PRIu32 "&from=%lld&limit=%lld", stream, p,
                     at, want);
            cJSON *doc = NULL;
            rc = loams_remote_get_json(r, path, out, &doc, err, errlen);
            const cJSON *end =
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "partitions"), 0);
            size_t len;
            const char *text = loams_buf_data(out, &len);
            long n = rc == 0 ? print_page(text, len, doc, json) : 0;
            if (rc == 0 && (n < 0 || end == NULL)) {
                snprintf(err, errlen, "the server's answer to %s is not a page of records", path);
                rc = -1;
            }
            if (rc == 0) {
                if (hwm < 0) {
                    hwm = (long long)jnum(end, "high_offset");
                }
                at = (long long)jnum(end, "next_offset");
                done += n;
                if (n == 0) {
                    hwm = at; /* nothing more below the mark: next partition */
                }
            }
            cJSON_Delete(doc);
        }
    }
    loams_buf_free(out);
    return rc;
}

static int cmd_remote(const char *server, const char *token, const char *sub,
                      const loams_objname *name, long partition, long long from, long long limit,
                      int json)
{
    char err[1024], path[256], stream[2 * LOAMS_IDENT_MAX + 2] = "";
    loams_remote *r = NULL;
    loams_buf *out = NULL;
    cJSON *doc = NULL;
    int status = 1, rc;
    if (name != NULL) {
        snprintf(stream, sizeof stream, "%s.%s", name->ns, name->name);
    }
    snprintf(path, sizeof path, "/v1/streams%s%s", name != NULL ? "/" : "", stream);
    rc = loams_buf_create(&out) != 0 ? -1 : loams_remote_open(server, token, &r, err, sizeof err);
    if (rc == 0) {
        rc = loams_remote_get_json(r, path, out, &doc, err, sizeof err);
    }
    if (rc != 0) {
        fprintf(stderr, "loams-host stream %s: %s\n", sub, out == NULL ? "out of memory" : err);
        goto done;
    }
    if (strcmp(sub, "read") == 0) {
        uint32_t partitions = (uint32_t)jnum(doc, "partitions");
        if (partition >= (long)partitions) {
            fprintf(stderr,
                    "loams-host stream read: --partition %ld: stream %s has partitions 0 to "
                    "%" PRIu32 "\n",
                    partition, stream, partitions - 1);
            goto done;
        }
        if (read_remote(r, stream, partitions, partition, from, limit, json, err, sizeof err) !=
            0) {
            fprintf(stderr, "loams-host stream read: %s\n", err);
            goto done;
        }
    } else if (json) {
        size_t len;
        const char *text = loams_buf_data(out, &len);
        fwrite(text, 1, len, stdout);
        putchar('\n');
    } else if (strcmp(sub, "list") == 0) {
        print_list(doc);
    } else {
        print_describe(doc);
    }
    status = fflush(stdout) == 0 ? 0 : 1;
done:
    cJSON_Delete(doc);
    loams_remote_close(r);
    loams_buf_free(out);
    return status;
}

int loams_cmd_stream(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data-dir", required_argument, NULL, 'd'},
        {"partition", required_argument, NULL, 'p'},
        {"from", required_argument, NULL, 'f'},
        {"limit", required_argument, NULL, 'n'},
        {"json", no_argument, NULL, 'j'},
        {"server", required_argument, NULL, 'S'},
        {"token", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *data_dir = NULL, *server = NULL;
    loams_remote_args ra = {0};
    long partition = -1;
    long long from = 0, limit = -1;
    int json = 0, c;
    char *end;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    optind = 2;
    while ((c = getopt_long(argc, argv, "d:p:f:n:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'd': data_dir = optarg; break;
        case 'p':
            errno = 0;
            partition = strtol(optarg, &end, 10);
            if (errno || *end != '\0' || partition < 0) {
                fprintf(stderr, "loams-host stream: --partition %s is not a partition number\n",
                        optarg);
                return 2;
            }
            break;
        case 'f':
            errno = 0;
            from = strtoll(optarg, &end, 10);
            if (errno || *end != '\0' || from < 0) {
                fprintf(stderr, "loams-host stream: --from %s is not an offset (0 or more)\n",
                        optarg);
                return 2;
            }
            break;
        case 'n':
            errno = 0;
            limit = strtoll(optarg, &end, 10);
            if (errno || *end != '\0' || limit < 0) {
                fprintf(stderr, "loams-host stream: --limit %s is not a number of records\n",
                        optarg);
                return 2;
            }
            break;
        case 'j': json = 1; break;
        case 'S': ra.server = optarg; break;
        case 'T': ra.token = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    int want_name = strcmp(sub, "read") == 0 || strcmp(sub, "describe") == 0;
    if (!want_name && strcmp(sub, "list") != 0) {
        fprintf(stderr, "loams-host stream: unknown subcommand '%s'\n%s", sub, usage);
        return 2;
    }
    if (optind + (want_name ? 1 : 0) != argc) {
        fprintf(stderr, "loams-host stream %s: %s\n%s", sub,
                want_name ? "name one stream (NS.STREAM)" : "takes no stream name", usage);
        return 2;
    }
    char msg[1024];
    loams_objname name;
    if (want_name && loams_objname_parse(argv[optind], &name, msg, sizeof msg) != 0) {
        fprintf(stderr, "loams-host stream %s: %s\n", sub, msg);
        return 2;
    }
    if (loams_remote_choose(&ra, "stream", data_dir != NULL, &server) != 0) {
        return 2;
    }
    if (server != NULL) {
        return cmd_remote(server, ra.token, sub, want_name ? &name : NULL, partition, from, limit,
                          json);
    }
    loams_datadir *dd = NULL;
    if (loams_datadir_open(loams_datadir_choose(data_dir), LOAMS_DATADIR_READ_ONLY, &dd, msg,
                           sizeof msg) != 0) {
        fprintf(stderr, "loams-host stream %s: %s\n", sub, msg);
        return 1;
    }
    int rc;
    if (strcmp(sub, "read") == 0) {
        rc = cmd_read(dd, &name, partition, from, limit, json);
    } else if (strcmp(sub, "describe") == 0) {
        rc = cmd_describe(dd, &name, json);
    } else {
        rc = loams_ddl_print_streams(dd->log, stdout, json, msg, sizeof msg) == 0 ? 0 : 1;
        if (rc != 0) {
            fprintf(stderr, "loams-host stream list: %s\n", msg);
        }
    }
    loams_datadir_close(dd);
    return rc;
}
