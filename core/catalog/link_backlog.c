/*
 * link_backlog.c - owns the computation of what a link has not applied
 * (see link_backlog.h).
 */
#include "catalog/link_backlog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi/offsets.h"

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void loams_link_backlog_clear(loams_link_backlog *b)
{
    free(b->parts);
    memset(b, 0, sizeof *b);
}

int loams_link_backlog_of(loams_streamlog *log, const loams_link_def *d, const loams_pointer *p,
                          int want_age, loams_link_backlog *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    loams_stream *s = NULL;
    loams_stream_err serr;
    int rc = loams_stream_open(log, &d->stream, &s, &serr);
    if (rc != 0) {
        snprintf(err, errlen, "link %s.%s: its stream %s.%s: %s", d->name.ns, d->name.name,
                 d->stream.ns, d->stream.name, serr.msg);
        return rc;
    }
    unsigned n = loams_stream_definition(s)->partitions;
    out->parts = calloc(n ? n : 1, sizeof *out->parts);
    if (out->parts == NULL) {
        loams_stream_close(s);
        return -ENOMEM;
    }
    loams_stream_slice slice;
    loams_stream_slice_init(&slice);
    for (unsigned i = 0; i < n; i++) {
        loams_stream_partition_info info;
        if ((rc = loams_stream_partition_state(s, (int32_t)i, &info, &serr)) != 0) {
            snprintf(err, errlen, "link %s.%s: partition %u of %s.%s: %s", d->name.ns, d->name.name,
                     i, d->stream.ns, d->stream.name, serr.msg);
            break;
        }
        int64_t applied = 0;
        loams_offsets_get(p->applied, (int32_t)i, &applied);
        out->parts[i] = (loams_link_backlog_part){(int32_t)i, applied, info.low_offset,
                                                  info.high_offset, info.bytes};
        out->nparts = i + 1;
        if (info.high_offset <= applied) {
            continue;
        }
        uint64_t behind = (uint64_t)(info.high_offset - applied);
        out->records += behind;
        /* the stored records' average size for those not applied */
        int64_t stored = info.high_offset - info.low_offset;
        if (stored > 0) {
            uint64_t unapplied_stored = behind < (uint64_t)stored ? behind : (uint64_t)stored;
            out->bytes +=
                (uint64_t)((double)info.bytes * (double)unapplied_stored / (double)stored);
        }
        if (!want_age) {
            continue;
        }
        /* a record that cannot be read fails the view (a lag of 0 seconds
         * would hide it) */
        if ((rc = loams_stream_read(s, (int32_t)i, applied, 1, 0, &slice, &serr)) != 0) {
            snprintf(err, errlen,
                     "link %s.%s: reading its next record (partition %u, offset %" PRId64
                     ") of %s.%s: %s",
                     d->name.ns, d->name.name, i, applied, d->stream.ns, d->stream.name, serr.msg);
            break;
        }
        if (slice.count > 0) {
            double age = (double)(now_us() - slice.records[0].timestamp_us) / 1e6;
            if (age > out->age_seconds) {
                out->age_seconds = age;
            }
        }
        loams_stream_slice_release(&slice);
    }
    loams_stream_slice_free(&slice);
    loams_stream_close(s);
    if (rc != 0) {
        loams_link_backlog_clear(out);
    }
    return rc;
}

int loams_link_backlog_read(loams_meta *meta, loams_streamlog *log, const loams_link_def *d,
                            int want_age, loams_link_backlog *out, uint64_t *applied_records,
                            char *err, size_t errlen)
{
    loams_pointer p;
    loams_meta_err merr;
    memset(out, 0, sizeof *out);
    int rc = loams_pointer_init(&p);
    if (rc != 0) {
        return rc;
    }
    if ((rc = loams_pointer_read(meta, &d->target, &p, &merr)) != 0) {
        snprintf(err, errlen, "link %s.%s: its target %s.%s: %s", d->name.ns, d->name.name,
                 d->target.ns, d->target.name, merr.msg);
    } else {
        if (applied_records != NULL) {
            *applied_records = p.applied_records;
        }
        rc = loams_link_backlog_of(log, d, &p, want_age, out, err, errlen);
    }
    loams_pointer_clear(&p);
    return rc;
}
