/*
 * dead_letter.c - owns a link run's dead-letter stream handle and its
 * fence, the DLQ marks of its last commit, the dead letters already
 * appended whose source records may come again, and the dead letters of
 * the current chunk (the protocol is in dead_letter.h).
 */
#include "link/dead_letter.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/offsets.h"
#include "base/log.h"
#include "meta/lease.h"

#define COMP "link"

struct loams_dead_letters {
    loams_meta *meta;
    loams_stream *dlq;
    loams_objname link_name;
    char link[2 * LOAMS_IDENT_MAX + 2]; /* "ns.name": the loams.link header */
    char task_key[LOAMS_LEASE_KEY_MAX];
    uint64_t epoch;
    char def_writer[2 * LOAMS_IDENT_MAX + 16]; /* "linkdef/<ns>.<name>" */
    uint64_t generation;                       /* 0: no definition fence */
    /* The run's source partitions [first, last]; `whole` when they are all
     * of the link's (tasks = 1): its marks are the link's own key then. */
    int32_t first, last;
    int whole;

    loams_offsets *marks; /* DLQ partition -> where the next resume scans from */
    /* The dead letters found by the resume whose source records this run
     * has not handled yet, sorted by source position. */
    struct done_letter {
        uint64_t src; /* source partition << 44 | source offset */
        int32_t dlq_partition;
        int64_t dlq_offset;
    } * done;
    size_t n_done, cap_done;

    /* The dead letters of the current chunk. */
    loams_stream_record_in *recs;
    loams_stream_header *headers; /* 4 per record */
    char (*pos)[2][24];           /* partition and offset as text, per record */
    size_t n, cap;
};

static void dl_log(const loams_dead_letters *d, loams_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void dl_log(const loams_dead_letters *d, loams_log_level lvl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loams_logv(lvl, COMP, d->task_key, d->epoch, fmt, ap);
    va_end(ap);
}

uint64_t loams_dead_letter_generation(uint64_t incarnation, uint64_t definition_version)
{
    const uint64_t vmax = (1u << 24) - 1;
    return incarnation << 24 | (definition_version < vmax ? definition_version : vmax);
}

int loams_dead_letter_open(loams_meta *meta, loams_streamlog *log, const loams_objname *link,
                           const loams_objname *dlq, const loams_dead_letter_run *run,
                           loams_dead_letters **out, char *err, size_t errsize)
{
    *out = NULL;
    loams_dead_letters *d = calloc(1, sizeof *d);
    if (d == NULL || loams_offsets_create(&d->marks) != 0) {
        free(d);
        snprintf(err, errsize, "out of memory");
        return -ENOMEM;
    }
    d->meta = meta;
    d->link_name = *link;
    snprintf(d->link, sizeof d->link, "%s.%s", link->ns, link->name);
    snprintf(d->task_key, sizeof d->task_key, "%s", run->task_key);
    d->epoch = run->epoch;
    d->first = run->first;
    d->last = run->last;
    d->whole = run->first <= 0 && (uint32_t)run->last + 1 >= run->partitions;
    snprintf(d->def_writer, sizeof d->def_writer, "linkdef/%s.%s", link->ns, link->name);
    d->generation = run->generation;
    loams_stream_err serr;
    int rc = loams_stream_open(log, dlq, &d->dlq, &serr);
    if (rc != 0) {
        snprintf(err, errsize, "%s", serr.msg);
        loams_dead_letter_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void loams_dead_letter_free(loams_dead_letters *d)
{
    if (d == NULL) {
        return;
    }
    loams_stream_close(d->dlq);
    loams_offsets_free(d->marks);
    free(d->done);
    free(d->recs);
    free(d->headers);
    free(d->pos);
    free(d);
}

/* ---- the dead letters already appended ---- */

static uint64_t src_key(int32_t partition, int64_t offset)
{
    return ((uint64_t)partition << 44) | (uint64_t)offset;
}

static int done_add(loams_dead_letters *d, int32_t partition, int64_t offset, int32_t dlq_partition,
                    int64_t dlq_offset)
{
    if (d->n_done == d->cap_done) {
        size_t cap = d->cap_done ? d->cap_done * 2 : 64;
        struct done_letter *grown = realloc(d->done, cap * sizeof *grown);
        if (grown == NULL) {
            return -ENOMEM;
        }
        d->done = grown;
        d->cap_done = cap;
    }
    d->done[d->n_done++] =
        (struct done_letter){src_key(partition, offset), dlq_partition, dlq_offset};
    return 0;
}

static int cmp_done(const void *a, const void *b)
{
    uint64_t x = ((const struct done_letter *)a)->src, y = ((const struct done_letter *)b)->src;
    return x < y ? -1 : x > y;
}

static int done_has(const loams_dead_letters *d, int32_t partition, int64_t offset)
{
    struct done_letter k = {src_key(partition, offset), 0, 0};
    return d->n_done > 0 && bsearch(&k, d->done, d->n_done, sizeof k, cmp_done) != NULL;
}

void loams_dead_letter_handled(loams_dead_letters *d, const loams_offsets *next)
{
    size_t kept = 0;
    for (size_t i = 0; i < d->n_done; i++) {
        int64_t upto = 0;
        loams_offsets_get(next, (int32_t)(d->done[i].src >> 44), &upto);
        if ((int64_t)(d->done[i].src & ((1ull << 44) - 1)) >= upto) {
            d->done[kept++] = d->done[i];
        }
    }
    d->n_done = kept;
}

static void linkstate_key(const loams_objname *link, char *out, size_t size)
{
    snprintf(out, size, "linkstate/%s/%s", link->ns, link->name);
}

/* The marks of the run's range: the link's key for the whole range, else
 * "linkstate/<ns>/<name>/<first>-<last>". */
static void marks_key(const loams_dead_letters *d, char *out, size_t size)
{
    if (d->whole) {
        linkstate_key(&d->link_name, out, size);
    } else {
        snprintf(out, size, "linkstate/%s/%s/%" PRId32 "-%" PRId32, d->link_name.ns,
                 d->link_name.name, d->first, d->last);
    }
}

/* Reads the header `name` of an encoded header block as text into out. */
static int header_get(const void *h, size_t len, const char *name, char *out, size_t size)
{
    size_t pos = 0;
    loams_stream_header hd;
    size_t nlen = strlen(name);
    while (loams_stream_headers_next(h, len, &pos, &hd) == 1) {
        if (hd.name_len == nlen && memcmp(hd.name, name, nlen) == 0) {
            snprintf(out, size, "%.*s", (int)hd.value_len, (const char *)hd.value);
            return 1;
        }
    }
    return 0;
}

/* The run's fences: its task's, and its definition's when it has one. */
static void fences(const loams_dead_letters *d, loams_stream_fence *task, loams_stream_fence *def)
{
    *def = (loams_stream_fence){d->def_writer, d->generation, NULL};
    *task = (loams_stream_fence){d->task_key, d->epoch, d->generation > 0 ? def : NULL};
}

/* Step 1: from now on, appends of older runs of the link are rejected:
 * older holders of the task's lease, and runs of older definitions. */
static int claim(loams_dead_letters *d, char *err, size_t errsize)
{
    loams_stream_fence f, def;
    fences(d, &f, &def);
    loams_stream_err serr;
    int rc = loams_stream_fence_claim(d->dlq, &f, &serr);
    if (rc == LOAMS_EFENCED) {
        snprintf(err, errsize, "the dead-letter stream was claimed by a newer run of the link: %s",
                 serr.msg);
    } else if (rc != 0) {
        snprintf(err, errsize, "claiming the dead-letter stream: %s", serr.msg);
    }
    return rc;
}

/* Reads the marks of the last commit of the run's range into d->marks.  A
 * range that has none (its first run since the link was defined this way)
 * starts from the link's marks, which no range's dead letter that may come
 * again precedes (loams_dead_letter_fold_marks); none at all: empty. */
static int read_marks(loams_dead_letters *d, char *err, size_t errsize)
{
    loams_offsets_clear(d->marks);
    char key[300];
    marks_key(d, key, sizeof key);
    loams_meta_kv kv;
    loams_meta_err merr;
    int rc = loams_meta_get(d->meta, key, strlen(key), &kv, &merr);
    if (rc == LOAMS_ENOTFOUND && !d->whole) {
        linkstate_key(&d->link_name, key, sizeof key);
        rc = loams_meta_get(d->meta, key, strlen(key), &kv, &merr);
    }
    if (rc == LOAMS_ENOTFOUND) {
        return 0; /* the link never committed with a dead-letter stream */
    }
    if (rc != 0) {
        snprintf(err, errsize, "reading %s: %s", key, merr.msg);
        return rc;
    }
    rc = loams_offsets_parse_json(d->marks, kv.value, kv.value_len);
    loams_meta_kv_free(&kv);
    if (rc != 0) {
        snprintf(err, errsize, "%s holds malformed DLQ marks", key);
        return LOAMS_ECORRUPT;
    }
    return 0;
}

/* Step 2 in DLQ partition q: this link's dead letters from the mark on
 * whose records are not applied. */
static int scan_partition(loams_dead_letters *d, int32_t q, const loams_offsets *applied,
                          loams_stream_slice *s, char *err, size_t errsize)
{
    int64_t from = 0;
    loams_offsets_get(d->marks, q, &from);
    for (;;) {
        loams_stream_err serr;
        int rc = loams_stream_read(d->dlq, q, from, 10000, 0, s, &serr);
        if (rc != 0) {
            snprintf(err, errsize, "reading the dead-letter stream: %s", serr.msg);
            return rc;
        }
        if (s->count == 0) {
            return 0;
        }
        for (size_t i = 0; i < s->count; i++) {
            const loams_stream_record *rec = &s->records[i];
            char who[160], part[24], off[24];
            if (!header_get(rec->headers, rec->headers_len, "loams.link", who, sizeof who) ||
                strcmp(who, d->link) != 0 ||
                !header_get(rec->headers, rec->headers_len, "loams.partition", part, sizeof part) ||
                !header_get(rec->headers, rec->headers_len, "loams.offset", off, sizeof off)) {
                continue;
            }
            int32_t p = (int32_t)atoi(part);
            int64_t o = strtoll(off, NULL, 10), upto = 0;
            loams_offsets_get(applied, p, &upto);
            if (p < 0 || o < upto) {
                continue; /* applied: its record never comes again */
            }
            if (p < d->first || p > d->last) {
                continue; /* a sibling range's: its own run finds it */
            }
            if (done_add(d, p, o, q, rec->offset) != 0) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
            }
        }
        from = s->next_offset;
    }
}

int loams_dead_letter_resume(loams_dead_letters *d, const loams_offsets *applied, char *err,
                             size_t errsize)
{
    d->n_done = 0;
    int rc = claim(d, err, errsize);
    if (rc == 0) {
        rc = read_marks(d, err, errsize);
    }
    const loams_stream_def *dd = loams_stream_definition(d->dlq);
    loams_stream_slice s;
    loams_stream_slice_init(&s);
    for (uint32_t q = 0; q < dd->partitions && rc == 0; q++) {
        rc = scan_partition(d, (int32_t)q, applied, &s, err, errsize);
    }
    loams_stream_slice_free(&s);
    if (rc == 0 && d->n_done > 0) {
        qsort(d->done, d->n_done, sizeof *d->done, cmp_done);
        dl_log(d, LOAMS_LOG_INFO,
               "%zu dead letters of an uncommitted run are already in the DLQ: their records "
               "are not appended again",
               d->n_done);
    }
    return rc;
}

/* ---- the dead letters of a chunk ---- */

int loams_dead_letter_begin(loams_dead_letters *d, size_t n)
{
    d->n = 0;
    if (n <= d->cap) {
        return 0;
    }
    loams_stream_record_in *recs = calloc(n, sizeof *recs);
    loams_stream_header *headers = calloc(4 * n, sizeof *headers);
    char(*pos)[2][24] = calloc(n, sizeof *pos);
    if (recs == NULL || headers == NULL || pos == NULL) {
        free(recs);
        free(headers);
        free(pos);
        return -ENOMEM;
    }
    free(d->recs);
    free(d->headers);
    free(d->pos);
    d->recs = recs;
    d->headers = headers;
    d->pos = pos;
    d->cap = n;
    return 0;
}

void loams_dead_letter_add(loams_dead_letters *d, const loams_batch *in, size_t row,
                           const char *message)
{
    int32_t partition;
    int64_t offset;
    loams_batch_row_origin(in, row, &partition, &offset);
    if (done_has(d, partition, offset) || d->n == d->cap) {
        return;
    }
    loams_value key, value, ts;
    loams_batch_get(in, row, LOAMS_BATCH_COL_KEY, &key);
    loams_batch_get(in, row, LOAMS_BATCH_COL_VALUE, &value);
    loams_batch_get(in, row, LOAMS_BATCH_COL_TIMESTAMP, &ts);
    size_t i = d->n++;
    snprintf(d->pos[i][0], sizeof d->pos[i][0], "%" PRId32, partition);
    snprintf(d->pos[i][1], sizeof d->pos[i][1], "%" PRId64, offset);
    loams_stream_header *h = &d->headers[4 * i];
    h[0] = (loams_stream_header){"loams.link", 10, d->link, strlen(d->link)};
    h[1] = (loams_stream_header){"loams.partition", 15, d->pos[i][0], strlen(d->pos[i][0])};
    h[2] = (loams_stream_header){"loams.offset", 12, d->pos[i][1], strlen(d->pos[i][1])};
    h[3] = (loams_stream_header){"loams.error", 11, message, strlen(message)};
    d->recs[i] = (loams_stream_record_in){
        .key = key.type == LOAMS_T_NULL ? NULL : key.u.s.ptr,
        .key_len = key.type == LOAMS_T_NULL ? 0 : key.u.s.len,
        .value = value.u.s.ptr,
        .value_len = value.u.s.len,
        .timestamp_us = ts.u.i,
        .headers = h,
        .nheaders = 4,
        .partition = -1,
    };
}

int loams_dead_letter_append(loams_dead_letters *d, char *err, size_t errsize)
{
    if (d->n == 0) {
        return 0;
    }
    loams_stream_fence f, def;
    fences(d, &f, &def);
    loams_stream_err serr;
    int rc = loams_stream_append_fenced(d->dlq, &f, d->recs, d->n, NULL, &serr);
    if (rc == LOAMS_EFENCED) {
        dl_log(d, LOAMS_LOG_WARN,
               "dead-letter append of %zu record(s) rejected: a newer run of the link holds "
               "its lease, or runs a newer definition of it (%s); nothing was appended",
               d->n, serr.msg);
    }
    d->n = 0;
    if (rc != 0) {
        snprintf(err, errsize, "%s", serr.msg);
    }
    return rc;
}

/* ---- commit ---- */

int loams_dead_letter_commit_writes(void *userdata, loams_gc_writes *ws, char *err, size_t errsize)
{
    loams_dead_letters *d = userdata;
    const loams_stream_def *dd = loams_stream_definition(d->dlq);
    for (uint32_t q = 0; q < dd->partitions; q++) {
        loams_stream_partition_info info;
        loams_stream_err serr;
        int rc = loams_stream_partition_state(d->dlq, (int32_t)q, &info, &serr);
        if (rc != 0) {
            snprintf(err, errsize, "reading the dead-letter stream: %s", serr.msg);
            return rc;
        }
        /* Never past a dead letter whose record may come again. */
        int64_t mark = info.high_offset;
        for (size_t i = 0; i < d->n_done; i++) {
            if (d->done[i].dlq_partition == (int32_t)q && d->done[i].dlq_offset < mark) {
                mark = d->done[i].dlq_offset;
            }
        }
        if (loams_offsets_set(d->marks, (int32_t)q, mark) != 0) {
            snprintf(err, errsize, "out of memory");
            return -ENOMEM;
        }
    }
    size_t n = loams_offsets_format_json(d->marks, NULL, 0);
    char *marks = malloc(n + 1);
    if (marks == NULL) {
        snprintf(err, errsize, "out of memory");
        return -ENOMEM;
    }
    loams_offsets_format_json(d->marks, marks, n + 1);
    char key[300];
    marks_key(d, key, sizeof key);
    int rc = loams_gc_writes_put(ws, key, marks);
    free(marks);
    if (rc != 0) {
        snprintf(err, errsize, "out of memory");
    }
    return rc;
}

/* Reads the marks of every range of `link` (the keys under
 * "linkstate/<ns>/<name>/"): each one's key goes to a delete in ws and,
 * when fold is given, its marks lower fold's (a partition a range has no
 * mark for lowers fold's to 0).  Errors: metastore's, LOAMS_ECORRUPT,
 * -ENOMEM; message in err. */
static int drop_range_marks(loams_meta *meta, const loams_objname *link, loams_offsets *fold,
                            loams_gc_writes *ws, char *err, size_t errsize)
{
    char prefix[300], after[600] = "";
    snprintf(prefix, sizeof prefix, "linkstate/%s/%s/", link->ns, link->name);
    loams_offsets *range = NULL;
    int rc = loams_offsets_create(&range);
    if (rc != 0) {
        snprintf(err, errsize, "out of memory");
        return rc;
    }
    for (int more = 1; more && rc == 0;) {
        loams_meta_range_result r = {0};
        loams_meta_err merr;
        if ((rc = loams_meta_range_prefix(meta, prefix, after[0] ? after : NULL, 0, &r, &merr)) !=
            0) {
            snprintf(err, errsize, "reading the dead-letter marks %s*: %s", prefix, merr.msg);
            break;
        }
        for (size_t i = 0; i < r.count && rc == 0; i++) {
            const loams_meta_kv *kv = &r.kvs[i];
            snprintf(after, sizeof after, "%.*s", (int)kv->key_len, kv->key);
            if ((rc = loams_gc_writes_delete(ws, after)) != 0) {
                snprintf(err, errsize, "out of memory");
                break;
            }
            if (fold == NULL) {
                continue;
            }
            if (loams_offsets_parse_json(range, kv->value, kv->value_len) != 0) {
                snprintf(err, errsize, "%s holds malformed DLQ marks", after);
                rc = LOAMS_ECORRUPT;
                break;
            }
            for (size_t j = 0; j < loams_offsets_count(fold) && rc == 0; j++) {
                int32_t q;
                int64_t mark, theirs = 0;
                loams_offsets_at(fold, j, &q, &mark);
                loams_offsets_get(range, q, &theirs);
                if (theirs < mark && (rc = loams_offsets_set(fold, q, theirs)) != 0) {
                    snprintf(err, errsize, "out of memory");
                }
            }
        }
        more = r.more && r.count > 0;
        loams_meta_range_free(&r);
    }
    loams_offsets_free(range);
    return rc;
}

int loams_dead_letter_fold_marks(loams_meta *meta, const loams_objname *link, loams_gc_writes *ws,
                                 char *err, size_t errsize)
{
    char key[300];
    linkstate_key(link, key, sizeof key);
    loams_offsets *fold = NULL;
    char *text = NULL;
    loams_meta_kv kv;
    loams_meta_err merr;
    int rc = loams_meta_get(meta, key, strlen(key), &kv, &merr);
    if (rc == LOAMS_ENOTFOUND) {
        /* No link marks: a range without marks scans its DLQ from the start. */
        return drop_range_marks(meta, link, NULL, ws, err, errsize);
    }
    if (rc != 0) {
        snprintf(err, errsize, "reading %s: %s", key, merr.msg);
        return rc;
    }
    if ((rc = loams_offsets_create(&fold)) != 0) {
        snprintf(err, errsize, "out of memory");
    } else if (loams_offsets_parse_json(fold, kv.value, kv.value_len) != 0) {
        snprintf(err, errsize, "%s holds malformed DLQ marks", key);
        rc = LOAMS_ECORRUPT;
    }
    loams_meta_kv_free(&kv);
    if (rc == 0) {
        rc = drop_range_marks(meta, link, fold, ws, err, errsize);
    }
    if (rc == 0) {
        size_t n = loams_offsets_format_json(fold, NULL, 0);
        if ((text = malloc(n + 1)) == NULL) {
            snprintf(err, errsize, "out of memory");
            rc = -ENOMEM;
        } else {
            loams_offsets_format_json(fold, text, n + 1);
            if ((rc = loams_gc_writes_put(ws, key, text)) != 0) {
                snprintf(err, errsize, "out of memory");
            }
        }
    }
    free(text);
    loams_offsets_free(fold);
    return rc;
}

int loams_dead_letter_marks_at_end(loams_meta *meta, loams_streamlog *log,
                                   const loams_objname *link, const loams_objname *dlq,
                                   loams_gc_writes *ws, char *err, size_t errsize)
{
    char key[300];
    linkstate_key(link, key, sizeof key);
    int rc = drop_range_marks(meta, link, NULL, ws, err, errsize);
    if (rc != 0) {
        return rc;
    }
    loams_stream *s = NULL;
    loams_stream_err serr;
    rc = loams_stream_open(log, dlq, &s, &serr);
    if (rc == LOAMS_ENOTFOUND) {
        rc = loams_gc_writes_delete(ws, key);
        if (rc != 0) {
            snprintf(err, errsize, "out of memory");
        }
        return rc;
    }
    if (rc != 0) {
        snprintf(err, errsize, "dead-letter stream %s.%s: %s", dlq->ns, dlq->name, serr.msg);
        return rc;
    }
    loams_offsets *marks = NULL;
    char *text = NULL;
    if ((rc = loams_offsets_create(&marks)) != 0) {
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    for (uint32_t q = 0; q < loams_stream_definition(s)->partitions; q++) {
        loams_stream_partition_info info;
        if ((rc = loams_stream_partition_state(s, (int32_t)q, &info, &serr)) != 0) {
            snprintf(err, errsize, "dead-letter stream %s.%s: %s", dlq->ns, dlq->name, serr.msg);
            goto out;
        }
        if ((rc = loams_offsets_set(marks, (int32_t)q, info.high_offset)) != 0) {
            snprintf(err, errsize, "out of memory");
            goto out;
        }
    }
    size_t n = loams_offsets_format_json(marks, NULL, 0);
    if ((text = malloc(n + 1)) == NULL) {
        rc = -ENOMEM;
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    loams_offsets_format_json(marks, text, n + 1);
    if ((rc = loams_gc_writes_put(ws, key, text)) != 0) {
        snprintf(err, errsize, "out of memory");
    }
out:
    free(text);
    loams_offsets_free(marks);
    loams_stream_close(s);
    return rc;
}
