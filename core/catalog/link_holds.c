/*
 * link_holds.c - owns what links are still owed of their streams (see
 * link_holds.h).
 */
#include "catalog/link_holds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "abi/offsets.h"

int64_t loams_link_owed_from(const loams_offsets *start, const loams_pointer *p, int32_t partition)
{
    int64_t applied = 0, first = 0;
    loams_offsets_get(p->applied, partition, &applied);
    if (start != NULL) {
        loams_offsets_get(start, partition, &first);
    }
    return applied > first ? applied : first;
}

/* Calls fn for each link reading `stream` with its start offsets and
 * pointer; stops at the first non-zero return. */
typedef int (*each_fn)(const loams_link_def *d, const loams_offsets *start, const loams_pointer *p,
                       void *ud);

static int each_link(loams_meta *meta, const loams_objname *stream, each_fn fn, void *ud, char *err,
                     size_t errlen)
{
    loams_link_def *defs = NULL;
    size_t n = 0;
    loams_meta_err merr;
    int rc = loams_link_list(meta, &defs, &n, &merr);
    if (rc != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        return rc;
    }
    loams_offsets *start = NULL;
    loams_pointer p;
    int have_p = 0;
    if ((rc = loams_offsets_create(&start)) != 0 || (rc = loams_pointer_init(&p)) != 0) {
        snprintf(err, errlen, "out of memory");
    } else {
        have_p = 1;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const loams_link_def *d = &defs[i];
        if (strcmp(d->stream.ns, stream->ns) != 0 || strcmp(d->stream.name, stream->name) != 0) {
            continue;
        }
        if ((rc = loams_link_start_offsets(d, start)) != 0) {
            snprintf(err, errlen, "link %s.%s: its start offsets are damaged", d->name.ns,
                     d->name.name);
        } else if ((rc = loams_link_pointer_read(meta, d, &p, &merr)) != 0) {
            snprintf(err, errlen, "link %s.%s: %s", d->name.ns, d->name.name, merr.msg);
        } else {
            rc = fn(d, start, &p, ud);
        }
    }
    if (have_p) {
        loams_pointer_clear(&p);
    }
    loams_offsets_free(start);
    loams_link_defs_free(defs, n);
    return rc;
}

typedef struct holds_ctx {
    uint32_t partitions;
    int64_t *from;
} holds_ctx;

static int add_holds(const loams_link_def *d, const loams_offsets *start, const loams_pointer *p,
                     void *ud)
{
    (void)d;
    holds_ctx *h = ud;
    for (uint32_t i = 0; i < h->partitions; i++) {
        int64_t owed = loams_link_owed_from(start, p, (int32_t)i);
        if (h->from[i] < 0 || owed < h->from[i]) {
            h->from[i] = owed;
        }
    }
    return 0;
}

int loams_link_holds(loams_meta *meta, const loams_objname *stream, uint32_t partitions,
                     int64_t *from, char *err, size_t errlen)
{
    for (uint32_t i = 0; i < partitions; i++) {
        from[i] = -1;
    }
    holds_ctx h = {partitions, from};
    return each_link(meta, stream, add_holds, &h, err, errlen);
}

typedef struct owing_ctx {
    uint32_t partition;
    int64_t below;
    char *who;
    size_t wholen;
} owing_ctx;

static int add_owing(const loams_link_def *d, const loams_offsets *start, const loams_pointer *p,
                     void *ud)
{
    owing_ctx *o = ud;
    size_t used = strlen(o->who);
    if (loams_link_owed_from(start, p, (int32_t)o->partition) < o->below && used + 1 < o->wholen) {
        snprintf(o->who + used, o->wholen - used, "%s%s.%s", used > 0 ? ", " : "link(s) ",
                 d->name.ns, d->name.name);
    }
    return 0;
}

int loams_link_owing(loams_meta *meta, const loams_objname *stream, uint32_t partition,
                     int64_t below, char *who, size_t wholen, char *err, size_t errlen)
{
    if (wholen == 0) {
        return -EINVAL;
    }
    who[0] = '\0';
    owing_ctx o = {partition, below, who, wholen};
    return each_link(meta, stream, add_owing, &o, err, errlen);
}

int loams_link_holds_for_retention(void *meta, const loams_stream_def *d, int64_t *from,
                                   loams_stream_err *err)
{
    return loams_link_holds(meta, &d->name, d->partitions, from, err->msg, sizeof err->msg);
}

void loams_link_owing_for_retention(void *meta, const loams_stream_def *d, uint32_t p,
                                    int64_t below, char *who, size_t wholen)
{
    char err[256];
    if (loams_link_owing(meta, &d->name, p, below, who, wholen, err, sizeof err) != 0 &&
        wholen > 0) {
        snprintf(who, wholen, "links (they could not be listed: %s)", err);
    }
}
