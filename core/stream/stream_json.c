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

#include "base/json_text.h"
#include "stream/source.h"
#include "loams/kit/buf.h"
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
            ",\"records\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"key_type\":\"%s\"%s%s%s}",
            first ? "" : ",", d->name.ns, d->name.name, d->id, d->partitions, d->retention_ms,
            d->retention_bytes, d->created_ms, records, bytes,
            loams_stream_key_type_name(d->key_type), d->source[0] ? ",\"source\":\"" : "",
            d->source, d->source[0] ? "\"" : "");
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
    loams_stream_err local;
    if (err == NULL) {
        err = &local;
    }
    loams_source *s = NULL;
    int rc = loams_source_open(log, NULL, name, NULL, &s, err->msg, sizeof err->msg);
    if (rc != 0) {
        return rc;
    }
    const loams_stream_def *d = loams_source_definition(s);
    char hold_json[32];
    rc = loams_buf_appendf(
        out,
        "{\"stream\":\"%s.%s\",\"id\":%" PRIu64 ",\"partitions\":%" PRIu32
        ",\"retention_ms\":%" PRId64 ",\"retention_bytes\":%" PRIu64
        ",\"retention_max_hold_ms\":%s,\"created\":%" PRId64 ",\"key_type\":\"%s\"%s%s%s"
        ",\"partition_state\":[",
        d->name.ns, d->name.name, d->id, d->partitions, d->retention_ms, d->retention_bytes,
        loams_stream_max_hold_json(d, hold_json, sizeof hold_json), d->created_ms,
        loams_stream_key_type_name(d->key_type), d->source[0] ? ",\"source\":\"" : "", d->source,
        d->source[0] ? "\"" : "");
    for (uint32_t p = 0; p < d->partitions && rc == 0; p++) {
        loams_source_marks pi;
        if ((rc = loams_source_get_marks(s, (int32_t)p, &pi, err->msg, sizeof err->msg)) != 0) {
            break;
        }
        rc = loams_buf_appendf(out,
                               "%s{\"partition\":%" PRIu32 ",\"low_offset\":%" PRId64
                               ",\"high_offset\":%" PRId64 ",\"bytes\":%" PRIu64 "}",
                               p ? "," : "", p, pi.low, pi.high, pi.bytes);
    }
    if (rc == 0) {
        rc = loams_buf_append(out, "]}", 2);
    }
    loams_source_close(s);
    return rc;
}

/* Appends `"name":` and bytes p[0..n) as a JSON string, every byte of it
 * (a NUL as \u0000), or, when they are not UTF-8 text, `"name_hex":` and
 * their hex digits.  0 or -ENOMEM. */
static int put_bytes(loams_kit_buf *b, const char *name, size_t name_len, const void *p, size_t n)
{
    int text = loams_kit_utf8_valid_prefix(p, n) == n;
    int rc = loams_json_put_string(b, name, name_len);
    if (rc == 0 && !text) {
        b->len--; /* the name's closing quote: "name_hex" */
        rc = loams_kit_buf_append(b, "_hex\"", 5);
    }
    rc = rc == 0 ? loams_kit_buf_append_byte(b, ':') : rc;
    if (rc != 0 || text) {
        return rc == 0 ? loams_json_put_string(b, p, n) : rc;
    }
    rc = loams_kit_buf_append_byte(b, '"');
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = loams_kit_buf_appendf(b, "%02x", ((const unsigned char *)p)[i]);
    }
    return rc == 0 ? loams_kit_buf_append_byte(b, '"') : rc;
}

/* Written by hand, not through cJSON: its strings end at a NUL, and every
 * number is a double. */
int loams_stream_record_json(const loams_stream_record *r, int32_t partition, loams_buf *out)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    int rc = loams_kit_buf_appendf(
        &b, "{\"partition\":%" PRId32 ",\"offset\":%" PRId64 ",\"timestamp\":%" PRId64 ",",
        partition, r->offset, r->timestamp_us);
    if (rc == 0) {
        rc = r->key != NULL ? put_bytes(&b, "key", 3, r->key, r->key_len)
                            : loams_kit_buf_append(&b, "\"key\":null", 10);
    }
    rc = rc == 0 ? loams_kit_buf_append_byte(&b, ',') : rc;
    rc = rc == 0 ? put_bytes(&b, "value", 5, r->value, r->value_len) : rc;
    if (rc == 0 && r->headers_len > 0) {
        rc = loams_kit_buf_append(&b, ",\"headers\":{", 12);
        size_t pos = 0;
        loams_stream_header hd;
        for (int first = 1;
             rc == 0 && loams_stream_headers_next(r->headers, r->headers_len, &pos, &hd) == 1;
             first = 0) {
            rc = first ? 0 : loams_kit_buf_append_byte(&b, ',');
            rc = rc == 0 ? put_bytes(&b, hd.name, hd.name_len, hd.value, hd.value_len) : rc;
        }
        rc = rc == 0 ? loams_kit_buf_append_byte(&b, '}') : rc;
    }
    rc = rc == 0 ? loams_kit_buf_append_byte(&b, '}') : rc;
    rc = rc == 0 ? loams_buf_append(out, b.data, b.len) : rc;
    loams_kit_buf_free(&b);
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
