/*
 * produce.c - owns POST /v1/streams/{ns.s}/records (see produce.h).
 */
#include "http/produce.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/metrics.h"
#include "catalog/backpressure.h"
#include "cli/datadir.h"
#include "loams/kit/json_path.h"
#include "stream/produce_batch.h"

typedef enum body_kind { BODY_LINES, BODY_NDJSON, BODY_ARRAY, BODY_RAW } body_kind;

static int body_kind_of(const char *type, body_kind *out)
{
    static const struct {
        const char *type;
        body_kind kind;
    } kinds[] = {
        {"", BODY_LINES},
        {"text/plain", BODY_LINES},
        /* curl -d / --data-binary's type unless told otherwise: as text */
        {"application/x-www-form-urlencoded", BODY_LINES},
        {"application/x-ndjson", BODY_NDJSON},
        {"application/ndjson", BODY_NDJSON},
        {"application/jsonl", BODY_NDJSON},
        {"application/json", BODY_ARRAY},
        {"application/octet-stream", BODY_RAW},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(type, kinds[i].type) == 0) {
            *out = kinds[i].kind;
            return 0;
        }
    }
    return -1;
}

/* Line and column (1-based, columns in bytes) of byte `at` of text. */
static void position(const char *text, size_t at, uint64_t *line, uint64_t *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < at; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *column = 1;
        } else {
            (*column)++;
        }
    }
}

/* Adds the elements of a JSON array body (or the body, when it is an
 * object).  Returns 0, or makes resp the error. */
static int add_array(loams_produce_batch *b, const loams_http_request *req,
                     loams_http_response *resp)
{
    loams_kit_json_doc *doc = NULL;
    loams_kit_json_value root, key, v;
    loams_kit_json_error err;
    loams_kit_json_iter it;
    char why[512], detail[160];
    uint64_t line, column;
    int rc = loams_kit_json_doc_new(NULL, &doc);
    if (rc != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return -1;
    }
    loams_kit_json_doc_reset(doc, req->body, req->body_len);
    rc = loams_kit_json_doc_root(doc, &root, &err);
    if (rc == 0 && root.kind == LOAMS_KIT_JSON_OBJECT) {
        rc = loams_produce_batch_add(b, req->body, req->body_len, why, sizeof why, NULL);
        if (rc == LOAMS_EINPUT) {
            loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, "{\"record\":0,\"line\":1}",
                            "the record: %s; nothing was appended", why);
        }
        goto out;
    }
    if (rc == LOAMS_EINPUT) {
        position(req->body, err.pos, &line, &column);
        snprintf(detail, sizeof detail,
                 "{\"line\":%" PRIu64 ",\"column\":%" PRIu64 ",\"byte\":%zu}", line, column,
                 err.pos);
        loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, detail,
                        "line %" PRIu64 ", column %" PRIu64
                        ": %s: the body is not valid JSON; nothing was appended",
                        line, column, err.what);
        goto out;
    }
    if (rc == 0 && root.kind != LOAMS_KIT_JSON_ARRAY) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, NULL,
                        "an application/json body is an array of records (or one object), not "
                        "a %s",
                        loams_kit_json_kind_name(root.kind));
        rc = -1;
        goto out;
    }
    if (rc == 0) {
        rc = loams_kit_json_iter_start(doc, &root, 0, &it);
    }
    for (size_t i = 0; rc == 0; i++) {
        int more = loams_kit_json_iter_next(&it, &key, &v, &err);
        if (more <= 0) {
            rc = more;
            break;
        }
        const char *text;
        size_t len, at = 0;
        loams_kit_json_value_raw(doc, &v, &text, &len);
        rc = loams_produce_batch_add(b, text, len, why, sizeof why, &at);
        if (rc == LOAMS_EINPUT) {
            position(req->body, (size_t)(text - req->body) + at, &line, &column);
            snprintf(detail, sizeof detail,
                     "{\"record\":%zu,\"line\":%" PRIu64 ",\"column\":%" PRIu64 "}", i, line,
                     column);
            loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, detail,
                            "record %zu (line %" PRIu64 "): %s; nothing was appended", i, line,
                            why);
        }
    }
out:
    if (rc == -ENOMEM) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
    }
    loams_kit_json_doc_free(doc);
    return rc == 0 ? 0 : -1;
}

static const loams_metric_family refused_total = {
    "loams_stream_writes_refused_total",
    "Writes to a stream refused for its links' budgets (429), by stream", LOAMS_METRIC_COUNTER,
    NULL, 0};

/* Sets the backlog headers to records and bytes. */
static void backlog_headers(loams_http_response *resp, uint64_t records, uint64_t bytes)
{
    char v[32];
    snprintf(v, sizeof v, "%" PRIu64, records);
    loams_http_add_header(resp, "Loams-Unapplied-Records", v);
    snprintf(v, sizeof v, "%" PRIu64, bytes);
    loams_http_add_header(resp, "Loams-Unapplied-Bytes", v);
}

/* The budgets of the stream's links (catalog/backpressure.h) for a write
 * of n records and `bytes` bytes, under the stream's lock.  0: go on (the
 * headers say the backlog with the write); else the response is the
 * refusal (429 with Retry-After, or 413) or the error. */
static int admit(const loams_http_request *req, loams_http_response *resp, size_t n, uint64_t bytes)
{
    const char *h = req->header(req, "Loams-Backpressure");
    int override = h != NULL && strcasecmp(h, "off") == 0;
    if (h != NULL && !override && strcasecmp(h, "on") != 0) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "Loams-Backpressure is 'off' (write up to 4x the links' budgets) or "
                        "'on', not '%.40s'",
                        h);
        return LOAMS_EINPUT;
    }
    loams_backpressure bp;
    char err[1024] = "";
    int rc = loams_backpressure_check(req->env->dd->meta, req->env->dd->log, req->object, n, bytes,
                                      override, &bp, err, sizeof err);
    if (rc != 0) {
        loams_http_fail(resp, loams_http_code_for_status(rc), NULL, "%s",
                        err[0] ? err : "out of memory");
        return rc;
    }
    if (bp.too_large || bp.refused) {
        backlog_headers(resp, bp.unapplied_records, bp.unapplied_bytes);
    }
    if (bp.too_large) {
        loams_http_fail(resp, LOAMS_HTTP_PAYLOAD_TOO_LARGE, NULL, "%s; nothing was appended",
                        bp.message);
        return LOAMS_ELIMIT;
    }
    if (bp.refused) {
        char labels[256], name[2 * LOAMS_IDENT_MAX + 2], retry[16];
        snprintf(name, sizeof name, "%s.%s", req->object->ns, req->object->name);
        if (loams_metrics_labels(labels, sizeof labels, "stream", name, NULL) == 0) {
            loams_metrics_count(&refused_total, labels, 1);
        }
        snprintf(retry, sizeof retry, "%d", bp.retry_after_s);
        loams_http_add_header(resp, "Retry-After", retry);
        loams_http_fail(resp, LOAMS_HTTP_TOO_MANY_REQUESTS, NULL, "%s; nothing was appended",
                        bp.message);
        return LOAMS_ELIMIT;
    }
    backlog_headers(resp, bp.unapplied_records + (bp.link[0] ? n : 0),
                    bp.unapplied_bytes + (bp.link[0] ? bytes : 0));
    return 0;
}

static void produce(const loams_http_request *req, loams_http_response *resp)
{
    body_kind kind;
    char key_field[256], value_field[256], key[256], encoding[16], key_encoding[16], why[512],
        detail[96];
    int64_t partition;
    if (body_kind_of(req->content_type, &kind) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNSUPPORTED_MEDIA_TYPE, NULL,
                        "records are sent as application/x-ndjson, application/json (an array), "
                        "text/plain or application/octet-stream, not %s",
                        req->content_type);
        return;
    }
    int has_key = loams_http_query(req, "key_field", key_field, sizeof key_field);
    int has_value = loams_http_query(req, "value_field", value_field, sizeof value_field);
    int has_fixed = loams_http_query(req, "key", key, sizeof key);
    int has_enc = loams_http_query(req, "encoding", encoding, sizeof encoding);
    int has_kenc = loams_http_query(req, "key_encoding", key_encoding, sizeof key_encoding);
    if (has_key < 0 || has_value < 0 || has_fixed < 0) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "key_field, value_field and key are at most 255 bytes, percent-encoded");
        return;
    }
    if (has_enc < 0 || has_kenc < 0 ||
        (has_enc && strcmp(encoding, "base64") != 0 && strcmp(encoding, "text") != 0) ||
        (has_kenc && strcmp(key_encoding, "base64") != 0 && strcmp(key_encoding, "text") != 0)) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "encoding and key_encoding are base64 or text");
        return;
    }
    if (kind == BODY_RAW && (has_key || has_value || has_enc || has_kenc)) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "an application/octet-stream body is one record's value as it is: it "
                        "takes no key_field, value_field, encoding or key_encoding (key is "
                        "allowed)");
        return;
    }
    if (loams_http_query_int(req, resp, "partition", 0, LOAMS_STREAM_MAX_PARTITIONS - 1, -1,
                             &partition) != 0) {
        return;
    }
    loams_stream_err se = {{0}};
    loams_stream *s = NULL;
    loams_produce_batch *b = NULL;
    uint32_t *counts = NULL;
    int64_t *first = NULL;
    int rc = loams_stream_open(req->env->dd->log, req->object, &s, &se);
    if (rc != 0) {
        loams_http_fail(resp, loams_http_code_for_status(rc), NULL, "%s", se.msg);
        return;
    }
    if ((rc = loams_stream_check_appendable(s, &se)) != 0) {
        loams_http_fail(resp, loams_http_code_for_status(rc), NULL, "%s", se.msg);
        goto out;
    }
    const loams_stream_def *def = loams_stream_definition(s);
    if (partition >= (int64_t)def->partitions) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "partition %" PRId64 ": stream %s.%s has partitions 0 to %" PRIu32,
                        partition, def->name.ns, def->name.name, def->partitions - 1);
        goto out;
    }
    loams_produce_options po = {.key_field = has_key ? key_field : NULL,
                                .value_field = has_value ? value_field : NULL,
                                .key = has_fixed ? key : NULL,
                                .value_base64 = has_enc && strcmp(encoding, "base64") == 0,
                                .key_base64 = has_kenc && strcmp(key_encoding, "base64") == 0,
                                .json = (kind == BODY_NDJSON || kind == BODY_ARRAY) && !has_enc &&
                                        !has_kenc,
                                .partition = (int32_t)partition};
    const char *conflict = loams_produce_options_check(&po);
    if (conflict != NULL) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "%s (here: the query parameters key, encoding, key_encoding, key_field "
                        "and value_field)",
                        conflict);
        goto out;
    }
    counts = calloc(def->partitions, sizeof *counts);
    first = calloc(def->partitions, sizeof *first);
    if (counts == NULL || first == NULL || loams_produce_batch_new(&po, &b) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        goto out;
    }
    if (kind == BODY_RAW) {
        rc = loams_produce_batch_add_raw(b, has_fixed ? key : NULL, req->body, req->body_len);
    } else if (kind == BODY_ARRAY) {
        if (add_array(b, req, resp) != 0) {
            goto out;
        }
        rc = 0;
    } else {
        uint64_t line = 0;
        size_t at = 0;
        rc =
            loams_produce_batch_add_lines(b, req->body, req->body_len, &line, &at, why, sizeof why);
        if (rc == LOAMS_EINPUT) {
            snprintf(detail, sizeof detail, "{\"line\":%" PRIu64 ",\"byte\":%zu}", line, at + 1);
            loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, detail,
                            "line %" PRIu64 ": %s; nothing was appended", line, why);
            goto out;
        }
    }
    if (rc != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        goto out;
    }
    size_t n = loams_produce_batch_count(b);
    loams_backpressure_enter(req->object);
    rc = admit(req, resp, n, loams_produce_batch_bytes(b));
    if (rc == 0 && n > 0 && (rc = loams_produce_batch_append(b, s, &se)) != 0) {
        loams_http_fail(resp, loams_http_code_for_status(rc), NULL, "%s; nothing was appended",
                        se.msg);
    }
    loams_backpressure_leave(req->object);
    if (rc != 0) {
        goto out;
    }
    const loams_stream_pos *pos = loams_produce_batch_positions(b);
    for (size_t i = 0; i < n; i++) {
        uint32_t p = (uint32_t)pos[i].partition;
        if (counts[p]++ == 0 || pos[i].offset < first[p]) {
            first[p] = pos[i].offset;
        }
    }
    loams_buf_reset(resp->body);
    rc = loams_buf_appendf(
        resp->body, "{\"stream\":\"%s.%s\",\"count\":%zu,\"bytes\":%" PRIu64 ",\"partitions\":[",
        def->name.ns, def->name.name, n, loams_produce_batch_bytes(b));
    int sep = 0;
    for (uint32_t p = 0; p < def->partitions && rc == 0; p++) {
        if (counts[p] > 0) {
            rc = loams_buf_appendf(resp->body,
                                   "%s{\"partition\":%" PRIu32 ",\"first_offset\":%" PRId64
                                   ",\"count\":%" PRIu32 "}",
                                   sep ? "," : "", p, first[p], counts[p]);
            sep = 1;
        }
    }
    if (rc == 0) {
        rc = loams_buf_append(resp->body, "]}", 2);
    }
    if (rc != 0) {
        /* appended: say so even without the document */
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL,
                        "%zu records were appended, but the answer could not be written (out "
                        "of memory)",
                        n);
        goto out;
    }
    resp->status = 200;
out:
    free(counts);
    free(first);
    loams_produce_batch_free(b);
    loams_stream_close(s);
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_POST, "/v1/streams/{stream}/records", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_WRITE, 0,
     produce, "streams.produce"},
};

int loams_http_produce_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
