/*
 * stream_json.c - owns the JSON documents of streams and the range read
 * the CLI and the HTTP API share (see stream_json.h).
 */
#include "stream/stream_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "loams/kit/utf8.h"

int loams_stream_list_json(loams_streamlog *log, const char *ns, loams_buf *out,
                           loams_stream_err *err)
{
    loams_stream_def *defs = NULL;
    size_t n = 0;
    loams_stream_err se = {{0}};
    int status = loams_stream_list(log, &defs, &n, err);
    if (status != 0) {
        return status;
    }
    status = loams_buf_append(out, "[", 1);
    int first = 1;
    for (size_t i = 0; i < n && status == 0; i++) {
        const loams_stream_def *d = &defs[i];
        if (ns != NULL && strcmp(d->name.ns, ns) != 0) {
            continue;
        }
        uint64_t records = 0, bytes = 0;
        loams_stream *s = NULL;
        if (loams_stream_open(log, &d->name, &s, &se) == 0) {
            for (uint32_t p = 0; p < d->partitions; p++) {
                loams_stream_partition_info pi;
                if (loams_stream_partition_state(s, (int32_t)p, &pi, &se) == 0) {
                    records += (uint64_t)(pi.high_offset - pi.low_offset);
                    bytes += pi.bytes;
                }
            }
            loams_stream_close(s);
        }
        status = loams_buf_appendf(
            out,
            "%s{\"stream\":\"%s.%s\",\"id\":%" PRIu64 ",\"partitions\":%" PRIu32
            ",\"retention_ms\":%" PRId64 ",\"retention_bytes\":%" PRIu64 ",\"created\":%" PRId64
            ",\"records\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
            first ? "" : ",", d->name.ns, d->name.name, d->id, d->partitions, d->retention_ms,
            d->retention_bytes, d->created_ms, records, bytes);
        first = 0;
    }
    if (status == 0) {
        status = loams_buf_append(out, "]", 1);
    }
    free(defs);
    return status;
}

int loams_stream_describe_json(loams_streamlog *log, const loams_objname *name, loams_buf *out,
                               loams_stream_err *err)
{
    loams_stream *s = NULL;
    int rc = loams_stream_open(log, name, &s, err);
    if (rc != 0) {
        return rc;
    }
    const loams_stream_def *d = loams_stream_definition(s);
    char hold_json[32];
    rc = loams_buf_appendf(
        out,
        "{\"stream\":\"%s.%s\",\"id\":%" PRIu64 ",\"partitions\":%" PRIu32
        ",\"retention_ms\":%" PRId64 ",\"retention_bytes\":%" PRIu64
        ",\"retention_max_hold_ms\":%s,\"created\":%" PRId64 ",\"partition_state\":[",
        d->name.ns, d->name.name, d->id, d->partitions, d->retention_ms, d->retention_bytes,
        loams_stream_max_hold_json(d, hold_json, sizeof hold_json), d->created_ms);
    for (uint32_t p = 0; p < d->partitions && rc == 0; p++) {
        loams_stream_partition_info pi;
        if ((rc = loams_stream_partition_state(s, (int32_t)p, &pi, err)) != 0) {
            break;
        }
        rc = loams_buf_appendf(out,
                               "%s{\"partition\":%" PRIu32 ",\"low_offset\":%" PRId64
                               ",\"high_offset\":%" PRId64 ",\"bytes\":%" PRIu64 "}",
                               p ? "," : "", p, pi.low_offset, pi.high_offset, pi.bytes);
    }
    if (rc == 0) {
        rc = loams_buf_append(out, "]}", 2);
    }
    loams_stream_close(s);
    return rc;
}

/* Non-zero when s[0..n) can be a cJSON string: well-formed UTF-8 (RFC
 * 3629) without a NUL (cJSON strings end at NUL). */
static int utf8_valid(const unsigned char *s, size_t n)
{
    return memchr(s, 0, n) == NULL && loams_kit_utf8_valid_prefix(s, n) == n;
}

/* Adds bytes as a JSON string member (cJSON escapes; bytes that are not
 * valid UTF-8 are added as "<name>_hex" instead).  0 or -ENOMEM. */
static int add_bytes(cJSON *o, const char *name, const void *p, size_t n)
{
    if (utf8_valid(p, n)) {
        char *s = malloc(n + 1);
        if (s == NULL) {
            return -ENOMEM;
        }
        memcpy(s, p, n);
        s[n] = '\0';
        cJSON *item = cJSON_AddStringToObject(o, name, s);
        free(s);
        return item != NULL ? 0 : -ENOMEM;
    }
    char *hex = malloc(n * 2 + 1);
    if (hex == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)p)[i]);
    }
    hex[2 * n] = '\0';
    char key[300];
    snprintf(key, sizeof key, "%s_hex", name);
    cJSON *item = cJSON_AddStringToObject(o, key, hex);
    free(hex);
    return item != NULL ? 0 : -ENOMEM;
}

int loams_stream_record_json(const loams_stream_record *r, int32_t partition, loams_buf *out)
{
    cJSON *o = cJSON_CreateObject();
    char num[3][32];
    snprintf(num[0], sizeof num[0], "%" PRId32, partition);
    snprintf(num[1], sizeof num[1], "%" PRId64, r->offset);
    snprintf(num[2], sizeof num[2], "%" PRId64, r->timestamp_us);
    int rc = o != NULL && cJSON_AddRawToObject(o, "partition", num[0]) != NULL &&
                     cJSON_AddRawToObject(o, "offset", num[1]) != NULL &&
                     cJSON_AddRawToObject(o, "timestamp", num[2]) != NULL
                 ? 0
                 : -ENOMEM;
    if (rc == 0) {
        rc = r->key != NULL ? add_bytes(o, "key", r->key, r->key_len)
                            : (cJSON_AddNullToObject(o, "key") != NULL ? 0 : -ENOMEM);
    }
    if (rc == 0) {
        rc = add_bytes(o, "value", r->value, r->value_len);
    }
    if (rc == 0 && r->headers_len > 0) {
        cJSON *h = cJSON_AddObjectToObject(o, "headers");
        size_t pos = 0;
        loams_stream_header hd;
        rc = h != NULL ? 0 : -ENOMEM;
        while (rc == 0 && loams_stream_headers_next(r->headers, r->headers_len, &pos, &hd) == 1) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(hd.name_len > 255 ? 255 : hd.name_len),
                     hd.name);
            rc = add_bytes(h, name, hd.value, hd.value_len);
        }
    }
    char *text = rc == 0 ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (text == NULL) {
        return -ENOMEM;
    }
    rc = loams_buf_append(out, text, strlen(text));
    cJSON_free(text);
    return rc;
}

int loams_stream_read_range(loams_stream *s, int32_t partition, int64_t from, int64_t limit,
                            int (*each)(const loams_stream_record *r, int32_t partition,
                                        void *userdata),
                            void *userdata, loams_stream_range_end *ends, size_t nends,
                            size_t *nvisited, loams_stream_err *err)
{
    const loams_stream_def *def = loams_stream_definition(s);
    loams_stream_slice sl;
    int rc = 0;
    size_t visited = 0;
    if (partition >= (int32_t)def->partitions) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg,
                     "partition %" PRId32 ": stream %s.%s has partitions 0 to %" PRIu32, partition,
                     def->name.ns, def->name.name, def->partitions - 1);
        }
        return -EINVAL;
    }
    loams_stream_slice_init(&sl);
    int64_t done = 0;
    for (uint32_t p = partition >= 0 ? (uint32_t)partition : 0;
         p < def->partitions && (limit < 0 || done < limit); p++) {
        loams_stream_partition_info pi;
        if ((rc = loams_stream_partition_state(s, (int32_t)p, &pi, err)) != 0) {
            break;
        }
        int64_t at = from;
        while (rc == 0 && at < pi.high_offset && (limit < 0 || done < limit)) {
            size_t want = 1000;
            if (limit >= 0 && (int64_t)want > limit - done) {
                want = (size_t)(limit - done);
            }
            if ((int64_t)want > pi.high_offset - at) {
                want = (size_t)(pi.high_offset - at);
            }
            if ((rc = loams_stream_read(s, (int32_t)p, at, want, 0, &sl, err)) != 0 ||
                sl.count == 0) {
                break;
            }
            for (size_t i = 0; i < sl.count && rc == 0; i++) {
                rc = each(&sl.records[i], (int32_t)p, userdata);
            }
            done += (int64_t)sl.count;
            at = sl.next_offset;
        }
        loams_stream_slice_release(&sl);
        if (ends != NULL && visited < nends) {
            ends[visited] = (loams_stream_range_end){(int32_t)p, at, pi.high_offset};
        }
        visited++;
        if (rc != 0 || partition >= 0) {
            break;
        }
    }
    loams_stream_slice_free(&sl);
    if (nvisited != NULL) {
        *nvisited = visited;
    }
    return rc;
}
