/*
 * ticket_records.c - support tickets as stream records (ticket_records.h).
 */
#include <stdio.h>
#include <string.h>

#include "ticket_gen.h"
#include "ticket_records.h"

uint64_t ticket_records(uint64_t first, size_t n, char *data, loams_record *recs)
{
    uint64_t bytes = 0;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = ticket_gen(first + i, data + used, 1024);
        memset(&recs[i], 0, sizeof recs[i]);
        recs[i].value = data + used;
        recs[i].value_len = len;
        recs[i].timestamp_us = TICKET_RECORDS_TS0 + (int64_t)(first + i);
        recs[i].partition = 0;
        recs[i].offset = (int64_t)(first + i);
        used += len;
        bytes += len;
        int kl = snprintf(data + used, 32, "ticket-%llu", (unsigned long long)(first + i));
        recs[i].key = data + used;
        recs[i].key_len = (size_t)kl;
        used += (size_t)kl;
    }
    return bytes;
}
