/*
 * streams.c - owns the read endpoints of streams (see streams.h).
 */
#include "http/streams.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/datadir.h"
#include "stream/stream_json.h"

/* The largest page of records one request reads. */
#define MAX_RECORDS 10000

/* Answers a failed call of the stream log. */
static void fail_stream(loams_http_response *resp, int rc, const loams_stream_err *se)
{
    if (rc == -ENOMEM) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return;
    }
    loams_http_fail(resp, loams_http_code_for_status(rc), NULL, "%s", se->msg);
}

static void list(const loams_http_request *req, loams_http_response *resp)
{
    loams_stream_err se = {{0}};
    const char *ns =
        strcmp(req->grant->ns, "*") == 0 || req->grant->auth_off ? NULL : req->grant->ns;
    loams_buf_reset(resp->body);
    int rc = loams_stream_list_json(req->env->dd->log, ns, resp->body, &se);
    if (rc != 0) {
        fail_stream(resp, rc, &se);
        return;
    }
    resp->status = 200;
}

static void describe(const loams_http_request *req, loams_http_response *resp)
{
    loams_stream_err se = {{0}};
    loams_buf_reset(resp->body);
    int rc = loams_stream_describe_json(req->env->dd->log, req->object, resp->body, &se);
    if (rc != 0) {
        fail_stream(resp, rc, &se);
        return;
    }
    resp->status = 200;
}

typedef struct read_state {
    loams_buf *out;
    size_t n;
} read_state;

static int add_record(const loams_stream_record *r, int32_t partition, void *userdata)
{
    read_state *st = userdata;
    if (st->n++ > 0 && loams_buf_append(st->out, ",", 1) != 0) {
        return -ENOMEM;
    }
    return loams_stream_record_json(r, partition, st->out);
}

static void read_records(const loams_http_request *req, loams_http_response *resp)
{
    int64_t partition, from, limit;
    if (loams_http_query_int(req, resp, "partition", 0, LOAMS_STREAM_MAX_PARTITIONS - 1, -1,
                             &partition) != 0 ||
        loams_http_query_int(req, resp, "from", 0, INT64_MAX, 0, &from) != 0 ||
        loams_http_query_int(req, resp, "limit", 0, MAX_RECORDS, 100, &limit) != 0) {
        return;
    }
    loams_stream_err se = {{0}};
    loams_stream *s = NULL;
    int rc = loams_stream_open(req->env->dd->log, req->object, &s, &se);
    if (rc != 0) {
        fail_stream(resp, rc, &se);
        return;
    }
    const loams_stream_def *def = loams_stream_definition(s);
    loams_stream_range_end *ends = calloc(def->partitions, sizeof *ends);
    size_t nvisited = 0;
    read_state st = {.out = resp->body};
    loams_buf_reset(resp->body);
    rc = ends != NULL ? loams_buf_appendf(resp->body, "{\"stream\":\"%s.%s\",\"records\":[",
                                          def->name.ns, def->name.name)
                      : -ENOMEM;
    if (rc == 0) {
        rc = loams_stream_read_range(s, (int32_t)partition, from, limit, add_record, &st, ends,
                                     def->partitions, &nvisited, &se);
    }
    if (rc == -EINVAL) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL, "%s", se.msg);
    } else if (rc != 0) {
        fail_stream(resp, rc, &se);
    } else {
        rc = loams_buf_append(resp->body, "],\"partitions\":[", 16);
        for (size_t i = 0; i < nvisited && rc == 0; i++) {
            rc = loams_buf_appendf(resp->body,
                                   "%s{\"partition\":%" PRId32 ",\"next_offset\":%" PRId64
                                   ",\"high_offset\":%" PRId64 "}",
                                   i ? "," : "", ends[i].partition, ends[i].next_offset,
                                   ends[i].high_offset);
        }
        if (rc == 0) {
            rc = loams_buf_append(resp->body, "]}", 2);
        }
        if (rc != 0) {
            loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        } else {
            resp->status = 200;
        }
    }
    free(ends);
    loams_stream_close(s);
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/v1/streams", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, -1, list, "streams.list"},
    {LOAMS_HTTP_GET, "/v1/streams/{stream}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, describe,
     "streams.describe"},
    {LOAMS_HTTP_GET, "/v1/streams/{stream}/records", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0,
     read_records, "streams.read"},
};

int loams_http_streams_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
