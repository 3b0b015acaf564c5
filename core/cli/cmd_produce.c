/*
 * cmd_produce.c - `loams-host produce ns.s`: appends the lines of stdin to
 * a stream in atomic batches, with a summary and progress.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/datadir.h"
#include "loams/kit/base64.h"
#include "stream/streamlog.h"

static const char usage[] =
    "Usage: loams-host produce NS.STREAM [--data-dir DIR] [--key-field FIELD]\n"
    "                          [--value-field FIELD] [--batch N] [--partition P]\n"
    "                          [--key K] [--encoding base64] [--key-encoding base64]\n"
    "                          [--progress]   < records\n"
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
    "  then the value (in --encoding).\n";

/* Decodes the base64 text[0..len) in place; its byte count to *out_len.
 * -1 with a message naming the stdin line. */
static int decode_in_place(char *text, size_t len, size_t *out_len, const char *what,
                           uint64_t lineno, uint64_t records)
{
    size_t bad;
    if (loams_kit_base64_decode(text, len, (unsigned char *)text, out_len, &bad) != 0) {
        fprintf(stderr,
                "loams-host produce: stdin line %" PRIu64 ": the %s is not base64 (at "
                "character %zu); the %" PRIu64 " records before it were appended\n",
                lineno, what, bad + 1, records);
        return -1;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct batch {
    loams_stream_record_in *recs;
    loams_stream_pos *pos;
    size_t n, cap;
    char *data; /* the lines (and keys) of the batch, back to back */
    size_t used, data_cap;
    size_t *val_off, *key_off; /* offsets into data (pointers are set at flush) */
} batch;

static int batch_room(batch *b, size_t cap, size_t extra)
{
    if (b->cap < cap) {
        loams_stream_record_in *r = realloc(b->recs, cap * sizeof *r);
        if (r != NULL) {
            b->recs = r;
        }
        loams_stream_pos *p = realloc(b->pos, cap * sizeof *p);
        if (p != NULL) {
            b->pos = p;
        }
        size_t *v = realloc(b->val_off, cap * sizeof *v);
        if (v != NULL) {
            b->val_off = v;
        }
        size_t *k = realloc(b->key_off, cap * sizeof *k);
        if (k != NULL) {
            b->key_off = k;
        }
        if (r == NULL || p == NULL || v == NULL || k == NULL) {
            return -ENOMEM;
        }
        b->cap = cap;
    }
    if (b->used + extra > b->data_cap) {
        size_t nc = b->data_cap ? b->data_cap : 1 << 20;
        while (nc < b->used + extra) {
            nc *= 2;
        }
        char *d = realloc(b->data, nc);
        if (d == NULL) {
            return -ENOMEM;
        }
        b->data = d;
        b->data_cap = nc;
    }
    return 0;
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *data_dir = NULL, *key_field = NULL, *value_field = NULL, *fixed_key = NULL;
    int value_b64 = 0, key_b64 = 0;
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
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if ((value_b64 || key_b64 || fixed_key != NULL) && (key_field != NULL || value_field != NULL)) {
        fprintf(stderr, "loams-host produce: --key, --encoding and --key-encoding take the "
                        "line as it is; they do not go with --key-field or --value-field\n");
        return 2;
    }
    if (key_b64 && fixed_key != NULL) {
        fprintf(stderr, "loams-host produce: give either --key or --key-encoding\n");
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
    loams_datadir *dd = NULL;
    if (loams_datadir_open(loams_datadir_choose(data_dir), 0, &dd, msg, sizeof msg) != 0) {
        fprintf(stderr, "loams-host produce: %s\n", msg);
        return 1;
    }
    int rc = 1;
    loams_stream *s = NULL;
    loams_stream_err se = {{0}};
    batch b = {0};
    char *line = NULL;
    size_t line_cap = 0;
    uint8_t *touched = NULL;
    uint64_t records = 0, bytes = 0, lineno = 0;
    if (loams_stream_open(dd->log, &name, &s, &se) != 0) {
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
    if (touched == NULL || batch_room(&b, (size_t)batch_size, 0) != 0) {
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
                char *key = NULL, *value = NULL;
                size_t key_len = 0;
                int has_key = 0;
                if (key_b64 || fixed_key != NULL) {
                    size_t klen = fixed_key != NULL ? strlen(fixed_key) : 0;
                    char *tab = key_b64 ? memchr(line, '\t', len) : NULL;
                    if (key_b64 && tab == NULL) {
                        fprintf(stderr,
                                "loams-host produce: stdin line %" PRIu64 " has no tab "
                                "(--key-encoding: the key, a tab, the value); the %" PRIu64
                                " records before it were appended\n",
                                lineno, records);
                        goto out;
                    }
                    if (tab != NULL) {
                        klen = (size_t)(tab - line);
                    }
                    key = malloc(klen + 1);
                    if (key == NULL) {
                        fprintf(stderr, "loams-host produce: out of memory\n");
                        goto out;
                    }
                    memcpy(key, fixed_key != NULL ? fixed_key : line, klen);
                    key_len = klen;
                    has_key = 1;
                    if (tab != NULL) {
                        if (decode_in_place(key, klen, &key_len, "key", lineno, records) != 0) {
                            free(key);
                            goto out;
                        }
                        len -= klen + 1;
                        memmove(line, tab + 1, len);
                    }
                }
                if (value_b64 && decode_in_place(line, len, &len, "value", lineno, records) != 0) {
                    free(key);
                    goto out;
                }
                if (key_field != NULL || value_field != NULL) {
                    cJSON *doc = cJSON_ParseWithLength(line, len);
                    if (!cJSON_IsObject(doc)) {
                        cJSON_Delete(doc);
                        fprintf(
                            stderr,
                            "loams-host produce: stdin line %" PRIu64 " is not a JSON "
                            "object (--key-field and --value-field need one per line); the %" PRIu64
                            " records before it were appended\n",
                            lineno, records);
                        goto out;
                    }
                    cJSON *f =
                        key_field != NULL ? cJSON_GetObjectItemCaseSensitive(doc, key_field) : NULL;
                    if (f != NULL && !cJSON_IsNull(f)) {
                        key =
                            cJSON_IsString(f) ? strdup(f->valuestring) : cJSON_PrintUnformatted(f);
                        has_key = 1;
                    }
                    cJSON *v = value_field != NULL
                                   ? cJSON_GetObjectItemCaseSensitive(doc, value_field)
                                   : NULL;
                    if (value_field != NULL && v == NULL) {
                        cJSON_Delete(doc);
                        free(key);
                        fprintf(stderr,
                                "loams-host produce: stdin line %" PRIu64 " has no field "
                                "'%s' (--value-field); the %" PRIu64 " records before it were "
                                "appended\n",
                                lineno, value_field, records);
                        goto out;
                    }
                    if (v != NULL) {
                        value =
                            cJSON_IsString(v) ? strdup(v->valuestring) : cJSON_PrintUnformatted(v);
                    }
                    cJSON_Delete(doc);
                    if ((has_key && key == NULL) || (v != NULL && value == NULL)) {
                        free(key);
                        free(value);
                        fprintf(stderr, "loams-host produce: out of memory\n");
                        goto out;
                    }
                    key_len = has_key ? strlen(key) : 0;
                    if (value != NULL) {
                        /* the value replaces the line; line's buffer holds it */
                        len = strlen(value);
                        if (len + 1 > line_cap) {
                            char *grown = realloc(line, len + 1);
                            if (grown == NULL) {
                                free(key);
                                free(value);
                                fprintf(stderr, "loams-host produce: out of memory\n");
                                goto out;
                            }
                            line = grown;
                            line_cap = len + 1;
                        }
                        memcpy(line, value, len + 1);
                        free(value);
                    }
                }
                if (batch_room(&b, (size_t)batch_size, len + key_len) != 0) {
                    free(key);
                    fprintf(stderr, "loams-host produce: out of memory\n");
                    goto out;
                }
                loams_stream_record_in *r = &b.recs[b.n];
                memset(r, 0, sizeof *r);
                r->partition = (int32_t)partition;
                r->value_len = len;
                b.val_off[b.n] = b.used;
                memcpy(b.data + b.used, line, len);
                b.used += len;
                b.key_off[b.n] = SIZE_MAX;
                if (has_key) {
                    b.key_off[b.n] = b.used;
                    r->key_len = key_len;
                    memcpy(b.data + b.used, key, key_len);
                    b.used += key_len;
                }
                free(key);
                b.n++;
            }
        }
        if (b.n > 0 && (b.n == (size_t)batch_size || eof)) {
            for (size_t i = 0; i < b.n; i++) {
                b.recs[i].value = b.data + b.val_off[i];
                b.recs[i].key = b.key_off[i] == SIZE_MAX ? NULL : b.data + b.key_off[i];
            }
            if (loams_stream_append(s, b.recs, b.n, b.pos, &se) != 0) {
                fprintf(stderr,
                        "loams-host produce: %s; the %" PRIu64 " records before this "
                        "batch were appended\n",
                        se.msg, records);
                goto out;
            }
            for (size_t i = 0; i < b.n; i++) {
                touched[b.pos[i].partition] = 1;
                bytes += b.recs[i].value_len + b.recs[i].key_len;
            }
            records += b.n;
            b.n = 0;
            b.used = 0;
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
    uint32_t ntouched = 0;
    for (uint32_t p = 0; p < def->partitions; p++) {
        ntouched += touched[p];
    }
    printf("produced %" PRIu64 " records (%" PRIu64 " bytes) to %s.%s in %.2f s: %.0f records/s, "
           "%.1f MB/s; partitions touched: %" PRIu32 " of %" PRIu32,
           records, bytes, name.ns, name.name, secs, secs > 0 ? (double)records / secs : 0.0,
           secs > 0 ? (double)bytes / 1e6 / secs : 0.0, ntouched, def->partitions);
    if (ntouched > 0 && ntouched <= 16) {
        const char *sep = " (";
        for (uint32_t p = 0; p < def->partitions; p++) {
            if (touched[p]) {
                printf("%s%" PRIu32, sep, p);
                sep = ", ";
            }
        }
        putchar(')');
    }
    putchar('\n');
    rc = 0;
out:
    free(line);
    free(touched);
    free(b.recs);
    free(b.pos);
    free(b.val_off);
    free(b.key_off);
    free(b.data);
    loams_stream_close(s);
    loams_datadir_close(dd);
    return rc;
}
