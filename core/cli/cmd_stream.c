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

#include "cli/cli.h"
#include "cli/datadir.h"
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
    "  mark seen when it starts, or after N records.\n";

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
    char hold[48] = "the node's (retention_max_hold)";
    if (d->retention_max_hold_ms < 0) {
        snprintf(hold, sizeof hold, "0 (no hold)");
    } else if (d->retention_max_hold_ms > 0) {
        loams_duration_format(d->retention_max_hold_ms * 1000, hold, sizeof hold);
    }
    printf("stream %s.%s (id %" PRIu64 ")\n  partitions %" PRIu32 "\n  retention %s\n"
           "  retention_bytes %s (per partition)\n  retention_max_hold %s\n"
           "  created %s\n\n"
           "  %9s %14s %14s %14s\n",
           d->name.ns, d->name.name, d->id, d->partitions, ret, rb, hold, created, "partition",
           "low offset", "high offset", "bytes");
    int rc = 0;
    for (uint32_t p = 0; p < d->partitions; p++) {
        loams_stream_partition_info pi;
        if (loams_stream_partition_state(s, (int32_t)p, &pi, &se) != 0) {
            fprintf(stderr, "loams-host stream describe: %s\n", se.msg);
            rc = 1;
            break;
        }
        printf("  %9" PRIu32 " %14" PRId64 " %14" PRId64 " %14" PRIu64 "\n", p, pi.low_offset,
               pi.high_offset, pi.bytes);
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
