/*
 * ticket_records.h - stream records made of support tickets (ticket_gen.h)
 * for the transform benchmarks, so that every benchmark feeds its stage the
 * same records: ticket i has key "ticket-<i>", timestamp
 * TICKET_RECORDS_TS0 + i microseconds, partition 0 and offset i.
 */
#ifndef LOAMS_BENCH_TICKET_RECORDS_H
#define LOAMS_BENCH_TICKET_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "stream/record.h"

#define TICKET_RECORDS_TS0 INT64_C(1790000000000000)
/* Bytes of `data` one record may take (JSON value and key). */
#define TICKET_RECORD_BYTES 1056

/* Fills recs[0..n) with tickets first .. first+n-1, their bytes written to
 * data (at least n * TICKET_RECORD_BYTES bytes, which the records point
 * into).  Returns the bytes of JSON (values only). */
uint64_t ticket_records(uint64_t first, size_t n, char *data, loams_record *recs);

#endif
