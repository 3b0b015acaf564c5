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

#include "loams/kit/utf8.h"
#include "cli/cli.h"
#include "cli/datadir.h"
#include "sql/ddl_exec.h"
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
    "  mark seen when it starts, or after N records.\n";

/* Non-zero when s[0..n) can be a cJSON string: well-formed UTF-8 (RFC
 * 3629) without a NUL (cJSON strings end at NUL). */
static int utf8_valid(const unsigned char *s, size_t n)
{
    return memchr(s, 0, n) == NULL && loams_kit_utf8_valid_prefix(s, n) == n;
}

/* Adds bytes as a JSON string member (cJSON escapes; bytes that are not
 * valid UTF-8 are added as "<name>_hex" instead). */
static void add_bytes(cJSON *o, const char *name, const void *p, size_t n)
{
    if (utf8_valid(p, n)) {
        char *s = malloc(n + 1);
        if (s != NULL) {
            memcpy(s, p, n);
            s[n] = '\0';
            cJSON_AddStringToObject(o, name, s);
            free(s);
        }
        return;
    }
    char *hex = malloc(n * 2 + 1);
    if (hex != NULL) {
        for (size_t i = 0; i < n; i++) {
            snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)p)[i]);
        }
        char key[64];
        snprintf(key, sizeof key, "%s_hex", name);
        cJSON_AddStringToObject(o, key, hex);
        free(hex);
    }
}

static int print_record(const loams_stream_record *r, int32_t partition, int json)
{
    if (!json) {
        fwrite(r->value, 1, r->value_len, stdout);
        putchar('\n');
        return 0;
    }
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) {
        return -ENOMEM;
    }
    cJSON_AddNumberToObject(o, "partition", partition);
    cJSON_AddNumberToObject(o, "offset", (double)r->offset);
    cJSON_AddNumberToObject(o, "timestamp", (double)r->timestamp_us);
    if (r->key != NULL) {
        add_bytes(o, "key", r->key, r->key_len);
    } else {
        cJSON_AddNullToObject(o, "key");
    }
    add_bytes(o, "value", r->value, r->value_len);
    if (r->headers_len > 0) {
        cJSON *h = cJSON_AddObjectToObject(o, "headers");
        size_t pos = 0;
        loams_stream_header hd;
        while (h != NULL && loams_stream_headers_next(r->headers, r->headers_len, &pos, &hd) == 1) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(hd.name_len > 255 ? 255 : hd.name_len),
                     hd.name);
            add_bytes(h, name, hd.value, hd.value_len);
        }
    }
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (text == NULL) {
        return -ENOMEM;
    }
    puts(text);
    free(text);
    return 0;
}

static int cmd_read(loams_datadir *dd, const loams_objname *name, long partition, long long from,
                    long long limit, int json)
{
    loams_stream *s = NULL;
    loams_stream_err se = {{0}};
    loams_stream_slice sl;
    loams_stream_slice_init(&sl);
    int rc = 1;
    if (loams_stream_open(dd->log, name, &s, &se) != 0) {
        fprintf(stderr, "loams-host stream read: %s\n", se.msg);
        return 1;
    }
    const loams_stream_def *def = loams_stream_definition(s);
    if (partition >= (long)def->partitions) {
        fprintf(stderr,
                "loams-host stream read: --partition %ld: stream %s.%s has partitions 0 "
                "to %" PRIu32 "\n",
                partition, name->ns, name->name, def->partitions - 1);
        goto out;
    }
    long long printed = 0;
    for (uint32_t p = partition >= 0 ? (uint32_t)partition : 0;
         p < def->partitions && (limit < 0 || printed < limit); p++) {
        loams_stream_partition_info pi;
        if (loams_stream_partition_state(s, (int32_t)p, &pi, &se) != 0) {
            fprintf(stderr, "loams-host stream read: %s\n", se.msg);
            goto out;
        }
        int64_t at = from;
        while (at < pi.high_offset && (limit < 0 || printed < limit)) {
            size_t want = 1000;
            if (limit >= 0 && (long long)want > limit - printed) {
                want = (size_t)(limit - printed);
            }
            if ((long long)want > pi.high_offset - at) {
                want = (size_t)(pi.high_offset - at);
            }
            if (loams_stream_read(s, (int32_t)p, at, want, 0, &sl, &se) != 0) {
                fprintf(stderr, "loams-host stream read: %s\n", se.msg);
                goto out;
            }
            if (sl.count == 0) {
                break;
            }
            for (size_t i = 0; i < sl.count; i++) {
                if (print_record(&sl.records[i], (int32_t)p, json) != 0) {
                    fprintf(stderr, "loams-host stream read: out of memory\n");
                    goto out;
                }
            }
            printed += (long long)sl.count;
            at = sl.next_offset;
        }
        loams_stream_slice_release(&sl);
        if (partition >= 0) {
            break;
        }
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    loams_stream_slice_free(&sl);
    loams_stream_close(s);
    return rc;
}

static int cmd_describe(loams_datadir *dd, const loams_objname *name, int json)
{
    loams_stream *s = NULL;
    loams_stream_err se = {{0}};
    if (loams_stream_open(dd->log, name, &s, &se) != 0) {
        fprintf(stderr, "loams-host stream describe: %s\n", se.msg);
        return 1;
    }
    const loams_stream_def *d = loams_stream_definition(s);
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
    char hold[48] = "the node's (retention_max_hold)", hold_json[32];
    if (d->retention_max_hold_ms < 0) {
        snprintf(hold, sizeof hold, "0 (no hold)");
    } else if (d->retention_max_hold_ms > 0) {
        loams_duration_format(d->retention_max_hold_ms * 1000, hold, sizeof hold);
    }
    if (json) {
        printf("{\"stream\":\"%s.%s\",\"id\":%" PRIu64 ",\"partitions\":%" PRIu32
               ",\"retention_ms\":%" PRId64 ",\"retention_bytes\":%" PRIu64
               ",\"retention_max_hold_ms\":%s,\"created\":%" PRId64 ",\"partition_state\":[",
               d->name.ns, d->name.name, d->id, d->partitions, d->retention_ms, d->retention_bytes,
               loams_stream_max_hold_json(d, hold_json, sizeof hold_json), d->created_ms);
    } else {
        printf("stream %s.%s (id %" PRIu64 ")\n  partitions %" PRIu32 "\n  retention %s\n"
               "  retention_bytes %s (per partition)\n  retention_max_hold %s\n"
               "  created %s\n\n"
               "  %9s %14s %14s %14s\n",
               d->name.ns, d->name.name, d->id, d->partitions, ret, rb, hold, created, "partition",
               "low offset", "high offset", "bytes");
    }
    int rc = 0;
    for (uint32_t p = 0; p < d->partitions; p++) {
        loams_stream_partition_info pi;
        if (loams_stream_partition_state(s, (int32_t)p, &pi, &se) != 0) {
            fprintf(stderr, "loams-host stream describe: %s\n", se.msg);
            rc = 1;
            break;
        }
        if (json) {
            printf("%s{\"partition\":%" PRIu32 ",\"low_offset\":%" PRId64
                   ",\"high_offset\":%" PRId64 ",\"bytes\":%" PRIu64 "}",
                   p ? "," : "", p, pi.low_offset, pi.high_offset, pi.bytes);
        } else {
            printf("  %9" PRIu32 " %14" PRId64 " %14" PRId64 " %14" PRIu64 "\n", p, pi.low_offset,
                   pi.high_offset, pi.bytes);
        }
    }
    if (json) {
        printf("]}\n");
    }
    loams_stream_close(s);
    return rc;
}

int loams_cmd_stream(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data-dir", required_argument, NULL, 'd'},
        {"partition", required_argument, NULL, 'p'},
        {"from", required_argument, NULL, 'f'},
        {"limit", required_argument, NULL, 'n'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *data_dir = NULL;
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
