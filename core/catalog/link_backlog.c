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
#include "stream/source.h"

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
    loams_source *s = NULL;
    char serr[512];
    int rc = loams_source_open(log, NULL, &d->stream, NULL, &s, serr, sizeof serr);
    if (rc != 0) {
        snprintf(err, errlen, "link %s.%s: its stream %s.%s: %s", d->name.ns, d->name.name,
                 d->stream.ns, d->stream.name, serr);
        return rc;
    }
    /* the age needs a record's timestamp: a read of the node's log is
     * cheap, a read of another system is a client's fetch (not done) */
    int external = loams_source_definition(s)->source[0] != '\0';
    want_age = want_age && !external;
    unsigned n = loams_source_definition(s)->partitions;
    out->parts = calloc(n ? n : 1, sizeof *out->parts);
    if (out->parts == NULL) {
        loams_source_close(s);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < n; i++) {
        loams_source_marks info;
        if ((rc = loams_source_get_marks(s, (int32_t)i, &info, serr, sizeof serr)) != 0) {
            snprintf(err, errlen, "link %s.%s: partition %u of %s.%s: %s", d->name.ns, d->name.name,
                     i, d->stream.ns, d->stream.name, serr);
            break;
        }
        int64_t applied = 0;
        loams_offsets_get(p->applied, (int32_t)i, &applied);
        out->parts[i] =
            (loams_link_backlog_part){(int32_t)i, applied, info.low, info.high, info.bytes};
        out->nparts = i + 1;
        if (info.high <= applied) {
            continue;
        }
        uint64_t behind = (uint64_t)(info.high - applied);
        out->records += behind;
        /* the stored records' average size for those not applied */
        int64_t stored = info.high - info.low;
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
        loams_source_chunk ch;
        if ((rc = loams_source_read(s, (int32_t)i, applied, INT64_MAX, 1, 0, &ch, serr,
                                    sizeof serr)) != 0) {
            snprintf(err, errlen,
                     "link %s.%s: reading its next record (partition %u, offset %" PRId64
                     ") of %s.%s: %s",
                     d->name.ns, d->name.name, i, applied, d->stream.ns, d->stream.name, serr);
            break;
        }
        if (ch.count > 0) {
            double age = (double)(now_us() - ch.records[0].timestamp_us) / 1e6;
            if (age > out->age_seconds) {
                out->age_seconds = age;
            }
        }
        loams_source_release(s);
    }
    loams_source_close(s);
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
