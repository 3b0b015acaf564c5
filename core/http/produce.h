/*
 * produce.h - POST /v1/streams/{ns.s}/records (write; docs/HTTP.md,
 * "Producing"): appends the records of the body to a stream, all of them
 * in one atomic append or none (stream/produce_batch.h, which `loams-host
 * produce` shares).
 *
 * The body, by its Content-Type:
 *   application/x-ndjson (or application/ndjson, application/jsonl):
 *       one JSON record per line, empty lines skipped;
 *   application/json: a JSON array of records (or one object);
 *   text/plain (or no type, or curl's default
 *       application/x-www-form-urlencoded): one record per line, any text (JSON when
 *       key_field or value_field is given);
 *   application/octet-stream: the body is the value of one record.
 * Query: key_field, value_field, key, encoding, key_encoding (as
 * produce's --key-field, --value-field, --key, --encoding and
 * --key-encoding), partition.  A record that cannot be made answers 400
 * naming its line (and its place in the array) and nothing is appended.
 * The answer:
 *   {"stream":"ns.s","count":N,"partitions":[{"partition":0,
 *    "first_offset":17,"count":5},...]}
 */
#ifndef LOAMS_HTTP_PRODUCE_H
#define LOAMS_HTTP_PRODUCE_H

#include "http/router.h"

/* Adds the route.  Errors: those of loams_http_router_add. */
int loams_http_produce_routes(loams_http_router *r);

#endif
