/*
 * link_runtime.c - owns a link run: its plugin instances, the read -
 * decode - transform - write loop over chunks, on_error, and when to
 * commit (see link_runtime.h).  The commit cycle itself is
 * commit_cycle.c, the dead-letter stream dead_letter.c.
 */
#include "link/link_runtime.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi/batch.h"
#include "abi/buf.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/mem_account.h"
#include "catalog/link_catalog.h"
#include "embed/embed_host.h"
#include "link/commit_cycle.h"
#include "link/dead_letter.h"
#include "link/link_gaps.h"
#include "link/run_report.h"
#include "stream/record.h"
#include "stream/source.h"
#include "run/scheduler.h"

#define COMP "link"
/* One read-decode-transform-write round handles at most this much.  Each
 * stage goes over the whole chunk before the next one starts, so a chunk
 * that fits in a core's L2 cache (1 MiB here) is still there for the
 * stages after the read: 1 MiB chunks took the table bench from 1.58-1.76
 * to 1.48-1.55 CPU s per 1M tickets against 8 MiB ones (docs/BENCHMARKS.md). */
#define CHUNK_RECORDS 20000
#define CHUNK_BYTES (1u << 20)
#define IDLE_SLEEP_MS 50
#define DEF_RELOAD_MS 1000

/* A plugin instance of a run: its context and state. */
typedef struct instance {
    const loams_plugin *plugin;
    loams_ctx *ctx;
    void *state;
} instance;

/* Where one partition's records sit in the current input batch.  Offsets
 * need not be dense (a Kafka partition read_committed has holes): dense
 * says whether they are, next_offset is where the partition goes on. */
typedef struct part_span {
    int32_t partition;
    size_t first_row;
    int64_t first_offset;
    int64_t next_offset;
    size_t count;
    int dense;
} part_span;

typedef struct link_run {
    loams_link_env *env;
    loams_task *task;
    const char *key;
    uint64_t epoch;
    loams_link_def def;
    loams_source *source;    /* the stream's: the node's log or a source plugin */
    int external;            /* the source is a plugin: offsets may have holes */
    loams_dead_letters *dlq; /* on_error = dead_letter only */
    unsigned partitions;
    unsigned first, last; /* the task's partitions (its key's range) */
    int key_text;         /* the stream's key_type is string: keys are STRING cells */
    int cancel_flag;
    pthread_t thread; /* the one running the run */
    int stop_seen;    /* the definition changed (PAUSE, DROP) during a plugin call */

    instance decoder, transform, target;
    const loams_decoder_vtable *dvt;
    const loams_transform_vtable *tvt;
    const loams_target_vtable *gvt;

    loams_commit_cycle *cycle; /* the base commit, the staged files, commits */
    loams_offsets *next;       /* next offset to read per partition (committed + staged) */
    loams_batch *in;
    loams_batch *out;
    loams_buf *headers; /* header JSON of the chunk's records */
    part_span *spans;

    uint64_t staged_bytes;
    uint64_t staged_records;
    int advanced; /* a partition moved past offsets without records (markers) */
    int64_t first_staged_ms;
    uint64_t d_applied, d_skipped, d_dead;
    loams_link_gaps gaps; /* records retention deleted before they were applied */
    int64_t def_checked_ms;

    uint64_t chunk_bytes;   /* key + value bytes of the chunk read last */
    loams_link_stats cur;   /* stage times of the staged (uncommitted) work */
    loams_link_stats total; /* of every commit of this run */
} link_run;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void loams_link_task_key(const loams_objname *link, unsigned partitions, char *out, size_t size)
{
    snprintf(out, size, "link/%s/%s/0-%u", link->ns, link->name,
             partitions > 0 ? partitions - 1 : 0);
}

unsigned loams_link_ranges(unsigned partitions, unsigned tasks)
{
    unsigned n = tasks < partitions ? tasks : partitions;
    return n > 0 ? n : 1;
}

void loams_link_range(const loams_objname *link, unsigned partitions, unsigned tasks, unsigned i,
                      unsigned *first, unsigned *last, char *out, size_t size)
{
    unsigned n = loams_link_ranges(partitions, tasks);
    uint64_t p = partitions > 0 ? partitions : 1;
    *first = (unsigned)(p * i / n);
    *last = (unsigned)(p * (i + 1) / n - 1);
    snprintf(out, size, "link/%s/%s/%u-%u", link->ns, link->name, *first, *last);
}

/* "link/<ns>/<name>/<a>-<b>" -> the link's name and its partitions a..b. */
static int parse_task_key(const char *key, loams_objname *name, unsigned *first, unsigned *last)
{
    char ns[LOAMS_IDENT_MAX + 1], nm[LOAMS_IDENT_MAX + 1];
    unsigned a, b;
    int used = 0;
    if (sscanf(key, "link/%63[^/]/%63[^/]/%u-%u%n", ns, nm, &a, &b, &used) != 4 ||
        key[used] != '\0' || a > b) {
        return LOAMS_EINPUT;
    }
    *first = a;
    *last = b;
    return loams_objname_set(name, ns, nm, NULL, 0);
}

static void run_log(link_run *r, loams_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void run_log(link_run *r, loams_log_level lvl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loams_logv(lvl, COMP, r->key, r->epoch, fmt, ap);
    va_end(ap);
}

/* ---- plugin instances ---- */

static int definition_changed(link_run *r);

/* host->cancelled() of the run's plugins, past the flag: the task is
 * cancelled (shutdown, lease lost: read live, not the copy the loop
 * takes), or - asked on the run's own thread, in the middle of a long
 * plugin call such as a Lua pattern match - the link was paused or
 * dropped (definition_changed re-reads it at most once a second). */
static int run_cancel_poll(void *ud)
{
    link_run *r = ud;
    if (loams_task_cancelled(r->task) || r->stop_seen) {
        return 1;
    }
    if (!pthread_equal(pthread_self(), r->thread)) {
        return 0;
    }
    if (definition_changed(r)) {
        r->stop_seen = 1;
    }
    return r->stop_seen;
}

/* Ties a plugin context to the run: its task, cancellation and memory. */
static void ctx_wire(loams_ctx *ctx, void *ud)
{
    link_run *r = ud;
    loams_ctx_set_task(ctx, r->key, r->epoch);
    loams_ctx_set_cancel_flag(ctx, &r->cancel_flag);
    loams_ctx_set_account(ctx, loams_task_memory(r->task));
    loams_ctx_set_cancel_poll(ctx, run_cancel_poll, r);
}

static int instance_open(link_run *r, instance *in, loams_plugin_kind kind, const char *name,
                         const loams_link_options *opts)
{
    int rc = loams_registry_find(r->env->registry, kind, name, &in->plugin);
    if (rc != 0 || in->plugin->descriptor == NULL) {
        loams_task_set_error(r->task, "link %s.%s: plugin '%s' (%s) is not loaded", r->def.name.ns,
                             r->def.name.name, name, loams_plugin_kind_name(kind));
        return LOAMS_ENOTFOUND;
    }
    char err[512];
    rc = loams_ctx_create(in->plugin->descriptor, opts != NULL ? opts->items : NULL,
                          opts != NULL ? opts->count : 0, &in->ctx, err, sizeof err);
    if (rc != 0) {
        loams_task_set_error(r->task, "link %s.%s: %s", r->def.name.ns, r->def.name.name, err);
        return rc;
    }
    ctx_wire(in->ctx, r);
    return 0;
}

/* The message the plugin of `in` set for its last failure. */
static const char *instance_error(instance *in, char *buf, size_t size)
{
    loams_ctx_error(in->ctx, buf, size);
    if (buf[0] == '\0') {
        snprintf(buf, size, "%s failed without a message", in->plugin->name);
    }
    return buf;
}

static void instances_close(link_run *r)
{
    if (r->target.state != NULL) {
        r->gvt->close(r->target.state);
    }
    if (r->transform.state != NULL) {
        r->tvt->close(r->transform.state);
    }
    if (r->decoder.state != NULL) {
        r->dvt->close(r->decoder.state);
    }
    loams_ctx_free(r->target.ctx);
    loams_ctx_free(r->transform.ctx);
    loams_ctx_free(r->decoder.ctx);
    memset(&r->target, 0, sizeof r->target);
    memset(&r->transform, 0, sizeof r->transform);
    memset(&r->decoder, 0, sizeof r->decoder);
}

/* The plugin CREATE LINK resolved (link_catalog.h: the kind's for a
 * definition stored before links named it). */
static const char *transform_plugin_name(const loams_link_def *d)
{
    return loams_link_transform_plugin(d);
}

/* Lets the decoder leave out the decoded columns the transform never reads
 * (ABI 1.2: the transform's input_columns, host->batch_column_wanted). */
static int want_input_columns(link_run *r)
{
    if (r->tvt->size <
            offsetof(loams_transform_vtable, input_columns) + sizeof r->tvt->input_columns ||
        r->tvt->input_columns == NULL) {
        return 0;
    }
    const char *const *names = NULL;
    size_t n = 0;
    loams_ctx *prev = loams_ctx_set_current(r->transform.ctx);
    int st = r->tvt->input_columns(r->transform.state, &names, &n);
    loams_ctx_set_current(prev);
    if (st != 0) {
        return 0; /* it may read any column */
    }
    int rc = loams_batch_want_columns(r->in, n > 0 ? names : (const char *const[]){""}, n);
    if (rc != 0) {
        loams_task_set_error(r->task, "out of memory");
        return rc;
    }
    run_log(r, LOAMS_LOG_DEBUG,
            "the transform reads %zu decoded columns; the decoder skips the "
            "others",
            n);
    return 0;
}

static int instances_open(link_run *r)
{
    char err[LOAMS_TASK_ERROR_MAX];
    int rc =
        instance_open(r, &r->decoder, LOAMS_KIND_DECODER, r->def.decoder, &r->def.decoder_options);
    if (rc == 0) {
        r->dvt = r->decoder.plugin->vtable;
        loams_ctx_set_meta(r->decoder.ctx, r->env->meta); /* the schema registry */
        loams_ctx *prev = loams_ctx_set_current(r->decoder.ctx);
        rc = r->dvt->open(r->decoder.ctx, &r->decoder.state);
        loams_ctx_set_current(prev);
        if (rc != 0) {
            loams_task_set_error(r->task, "decoder: %s",
                                 instance_error(&r->decoder, err, sizeof err));
            r->decoder.state = NULL;
        }
    }
    if (rc == 0) {
        loams_link_options topts = {0};
        rc = loams_link_transform_options(&r->def, r->env->registry, &topts);
        if (rc == 0) {
            rc = instance_open(r, &r->transform, LOAMS_KIND_TRANSFORM,
                               transform_plugin_name(&r->def), &topts);
        }
        if (rc == 0 && r->env->embed != NULL &&
            loams_embed_bind(r->transform.ctx, r->env->embed, r->def.name.ns) != 0) {
            loams_task_set_error(r->task, "out of memory");
            rc = -ENOMEM;
        }
        loams_link_options_clear(&topts);
    }
    if (rc == 0) {
        r->tvt = r->transform.plugin->vtable;
        loams_ctx *prev = loams_ctx_set_current(r->transform.ctx);
        rc = r->tvt->compile(r->transform.ctx, r->def.transform_text, &r->transform.state);
        loams_ctx_set_current(prev);
        if (rc != 0) {
            loams_task_set_error(r->task, "transform: %s",
                                 instance_error(&r->transform, err, sizeof err));
            r->transform.state = NULL;
        }
    }
    if (rc == 0) {
        rc = want_input_columns(r);
    }
    if (rc == 0) {
        rc = instance_open(r, &r->target, LOAMS_KIND_TARGET, r->def.target_plugin,
                           &r->def.target_options);
    }
    if (rc == 0) {
        r->gvt = r->target.plugin->vtable;
        char link[2 * LOAMS_IDENT_MAX + 2];
        snprintf(link, sizeof link, "%s.%s", r->def.name.ns, r->def.name.name);
        loams_target_spec spec = {.size = sizeof spec,
                                  .ns = r->def.target.ns,
                                  .name = r->def.target.name,
                                  .link = link,
                                  .epoch = r->epoch};
        loams_ctx *prev = loams_ctx_set_current(r->target.ctx);
        rc = r->gvt->open(r->target.ctx, &spec, r->env->store, &r->target.state);
        loams_ctx_set_current(prev);
        if (rc != 0) {
            loams_task_set_error(r->task, "target: %s",
                                 instance_error(&r->target, err, sizeof err));
            r->target.state = NULL;
        }
    }
    return rc;
}

/* ---- the input chunk ---- */

static const part_span *span_of(const link_run *r, int32_t partition)
{
    for (unsigned i = 0; i < r->partitions; i++) {
        if (r->spans[i].partition == partition && r->spans[i].count > 0) {
            return &r->spans[i];
        }
    }
    return NULL;
}

/* The input row of the record at (partition, offset) of the chunk into
 * *row; 0 when the chunk has no such record.  Dense offsets give it by
 * subtraction, others by a search of the rows' origins. */
static int span_row(const link_run *r, int32_t partition, int64_t offset, size_t *row)
{
    const part_span *sp = span_of(r, partition);
    if (sp == NULL || offset < sp->first_offset) {
        return 0;
    }
    if (sp->dense) {
        if (offset >= sp->first_offset + (int64_t)sp->count) {
            return 0;
        }
        *row = sp->first_row + (size_t)(offset - sp->first_offset);
        return 1;
    }
    size_t lo = 0, hi = sp->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t pm;
        int64_t om;
        loams_batch_row_origin(r->in, sp->first_row + mid, &pm, &om);
        if (om == offset) {
            *row = sp->first_row + mid;
            return 1;
        }
        if (om < offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return 0;
}

/* Appends a record's headers as one JSON object to r->headers; *off and
 * *len say where it is (len 0: no headers). */
static int headers_to_json(link_run *r, const loams_source_record *rec, size_t *off, size_t *len)
{
    *off = loams_buf_len(r->headers);
    int rc = loams_source_headers_json(rec->headers, rec->nheaders, r->headers);
    *len = loams_buf_len(r->headers) - *off;
    return rc;
}

/* Records [from, first) of partition p are gone: counts and logs what the
 * link lost (link_gaps.h). */
static void gap_found(link_run *r, int32_t p, int64_t from, int64_t first)
{
    int64_t lost_from = from;
    uint64_t lost = loams_link_gaps_found(&r->gaps, p, from, first, &lost_from);
    if (lost > 0) {
        run_log(r, LOAMS_LOG_WARN,
                "partition %" PRId32 ": offsets %" PRId64 "..%" PRId64 " (%" PRIu64
                " records) were deleted by retention before the link applied them; they are "
                "counted as lost (lost_records in system.links) and the link goes on from "
                "offset %" PRId64,
                p, lost_from, first - 1, lost, first);
        if (r->first_staged_ms == 0) {
            r->first_staged_ms = now_ms(); /* committed like staged records */
        }
    } else {
        run_log(r, LOAMS_LOG_DEBUG,
                "partition %" PRId32 ": starts at offset %" PRId64
                " (offsets before were gone when the link was created)",
                p, first);
    }
}

/* Nothing read from `from` on partition p of the node's log: when
 * retention deleted everything there, the link moves to the partition's
 * first offset.  (A plugin moves next_offset past what is gone itself:
 * see gap_before_first.) */
static int gap_in_empty_partition(link_run *r, int32_t p, int64_t from)
{
    loams_source_marks marks;
    char err[LOAMS_TASK_ERROR_MAX];
    int rc = loams_source_get_marks(r->source, p, &marks, err, sizeof err);
    if (rc != 0) {
        loams_task_set_error(r->task, "reading %s.%s partition %" PRId32 ": %s", r->def.stream.ns,
                             r->def.stream.name, p, err);
        return rc;
    }
    if (marks.low <= from) {
        return 0;
    }
    gap_found(r, p, from, marks.low);
    return loams_offsets_set(r->next, p, marks.low);
}

/* The first record read from partition p, or where an empty read moved
 * next_offset, is past `from`.  The node's log has dense offsets:
 * retention deleted the ones between.  A plugin's offsets may have holes
 * (aborted transactions, markers): only what lies below the partition's
 * low mark is lost.  A plugin's marks are asked here only, never at an
 * empty read that stays at `from` (source.h: a read from below the low
 * mark moves past it): for a remote system they are a request (Kafka's
 * ListOffsets waits behind the client's pending fetch, ~100 ms), and
 * asking them for every empty partition of every chunk made a link over
 * 20 partitions read 15 times slower. */
static int gap_before_first(link_run *r, int32_t p, int64_t from, int64_t first)
{
    if (!r->external) {
        gap_found(r, p, from, first);
        return 0;
    }
    loams_source_marks marks;
    char err[LOAMS_TASK_ERROR_MAX];
    int rc = loams_source_get_marks(r->source, p, &marks, err, sizeof err);
    if (rc != 0) {
        loams_task_set_error(r->task, "reading %s.%s partition %" PRId32 ": %s", r->def.stream.ns,
                             r->def.stream.name, p, err);
        return rc;
    }
    if (marks.low > from) {
        gap_found(r, p, from, marks.low < first ? marks.low : first);
    }
    return 0;
}

/* Nothing waits for a commit: no record and no gap. */
static int nothing_staged(const link_run *r)
{
    return r->staged_records == 0 && r->gaps.lost == 0 && !r->advanced;
}

/* Reads up to a chunk of records from every partition into r->in.
 * Returns the number of records read or a negative status. */
static long read_chunk(link_run *r)
{
    loams_batch_reset(r->in);
    loams_buf_reset(r->headers);
    size_t total = 0, bytes = 0;
    size_t cap = r->def.batch_bytes < CHUNK_BYTES ? r->def.batch_bytes : CHUNK_BYTES;
    loams_record *recs = NULL;
    size_t *hoff = NULL;
    long rc = 0;
    char err[LOAMS_TASK_ERROR_MAX];
    for (unsigned p = r->first; p <= r->last; p++) {
        part_span *sp = &r->spans[p];
        sp->partition = (int32_t)p;
        sp->first_row = loams_batch_rows(r->in);
        sp->count = 0;
        if (total >= CHUNK_RECORDS || bytes >= cap) {
            continue;
        }
        int64_t from = 0;
        loams_offsets_get(r->next, (int32_t)p, &from);
        loams_source_chunk ch;
        int st = loams_source_read(r->source, (int32_t)p, from, INT64_MAX, CHUNK_RECORDS - total,
                                   cap - bytes, &ch, err, sizeof err);
        if (st != 0) {
            loams_task_set_error(r->task, "reading %s.%s partition %u: %s", r->def.stream.ns,
                                 r->def.stream.name, p, err);
            rc = st;
            goto out;
        }
        if (ch.count == 0) {
            if (ch.next_offset > from) {
                /* past offsets that hold no record (transaction markers),
                 * or that retention deleted */
                if ((rc = gap_before_first(r, (int32_t)p, from, ch.next_offset)) != 0) {
                    goto out;
                }
                r->advanced = 1;
                if (r->first_staged_ms == 0) {
                    r->first_staged_ms = now_ms();
                }
                if ((rc = loams_offsets_set(r->next, (int32_t)p, ch.next_offset)) != 0) {
                    goto out;
                }
                continue;
            }
            /* retention may have emptied the partition past `from` */
            if (!r->external && (rc = gap_in_empty_partition(r, (int32_t)p, from)) != 0) {
                goto out;
            }
            continue;
        }
        if (ch.records[0].offset > from &&
            (rc = gap_before_first(r, (int32_t)p, from, ch.records[0].offset)) != 0) {
            goto out;
        }
        loams_record *grown = realloc(recs, ch.count * sizeof *recs);
        size_t *hgrown = realloc(hoff, ch.count * sizeof *hoff);
        if (grown != NULL) {
            recs = grown;
        }
        if (hgrown != NULL) {
            hoff = hgrown;
        }
        if (grown == NULL || hgrown == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < ch.count; i++) {
            const loams_source_record *sr = &ch.records[i];
            size_t hlen = 0;
            hoff[i] = 0;
            if (sr->nheaders > 0 && (rc = headers_to_json(r, sr, &hoff[i], &hlen)) != 0) {
                goto out;
            }
            recs[i] = (loams_record){.key = sr->key,
                                     .key_len = sr->key_len,
                                     .value = sr->value,
                                     .value_len = sr->value_len,
                                     .timestamp_us = sr->timestamp_us,
                                     .partition = (int32_t)p,
                                     .offset = sr->offset,
                                     .headers = NULL,
                                     .headers_len = hlen};
        }
        size_t blen;
        const char *hbase = loams_buf_data(r->headers, &blen);
        for (size_t i = 0; i < ch.count; i++) {
            if (recs[i].headers_len > 0) {
                recs[i].headers = hbase + hoff[i];
            }
        }
        /* The batch copies the headers' JSON: reset only after it has (a
         * reset writes a NUL at the start of the buffer). */
        size_t first_row = loams_batch_rows(r->in);
        rc = loams_batch_append_records(r->in, recs, ch.count);
        loams_buf_reset(r->headers);
        if (rc != 0) {
            goto out;
        }
        if (r->key_text) {
            /* a key that is not text fails its record (on_error) */
            char sname[2 * LOAMS_IDENT_MAX + 2];
            snprintf(sname, sizeof sname, "%s.%s", r->def.stream.ns, r->def.stream.name);
            long kf = loams_batch_keys_as_text(r->in, first_row, sname);
            if (kf < 0) {
                rc = (int)kf;
                goto out;
            }
        }
        sp->first_offset = ch.records[0].offset;
        sp->next_offset = ch.next_offset;
        sp->count = ch.count;
        sp->dense = ch.records[ch.count - 1].offset - sp->first_offset + 1 == (int64_t)ch.count;
        total += ch.count;
        bytes += ch.bytes;
        loams_source_release(r->source);
    }
    rc = (long)total;
    r->chunk_bytes = bytes;
out:
    loams_source_release(r->source);
    free(recs);
    free(hoff);
    return rc;
}

/* ---- on_error ---- */

/* Handles the failed rows of the input chunk by the link's on_error.
 * Returns 1 when the link must stop failed (on_error = fail, or an
 * incompatible schema change), 0, or a negative status. */
static int handle_failures(link_run *r)
{
    size_t n = loams_batch_failed_count(r->in);
    if (n == 0) {
        return 0;
    }
    int rc = 0;
    if (r->dlq != NULL && (rc = loams_dead_letter_begin(r->dlq, n)) != 0) {
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        size_t row;
        int status;
        const char *msg;
        loams_batch_failure_at(r->in, i, &row, &status, &msg);
        /* An incompatible type change pauses the link whatever on_error
         * says (DESIGN §8): skipping it would drop every later record. */
        if (r->def.on_error == LOAMS_ON_ERROR_FAIL || status == LOAMS_ESCHEMA) {
            int32_t partition;
            int64_t offset;
            loams_batch_row_origin(r->in, row, &partition, &offset);
            run_log(r, LOAMS_LOG_ERROR, "record failed, pausing the link (%s): %s",
                    status == LOAMS_ESCHEMA ? "incompatible schema change" : "on_error = fail",
                    msg);
            loams_meta_err merr;
            rc = loams_link_set_state(r->env->meta, &r->def, LOAMS_LINK_FAILED, msg, partition,
                                      offset, &merr);
            if (rc == LOAMS_ECONFLICT || rc == LOAMS_ENOTFOUND) {
                /* Redefined or dropped meanwhile: the record is tried again
                 * by the next run, under the definition in force. */
                run_log(r, LOAMS_LOG_INFO, "not marking the link failed: %s", merr.msg);
                r->stop_seen = 1;
                return 1;
            }
            if (rc != 0) {
                loams_task_set_error(r->task, "marking the link failed: %s", merr.msg);
                return rc;
            }
            return 1;
        }
        if (r->def.on_error == LOAMS_ON_ERROR_SKIP) {
            run_log(r, LOAMS_LOG_DEBUG, "record skipped: %s", msg);
            r->d_skipped++;
            continue;
        }
        loams_dead_letter_add(r->dlq, r->in, row, msg);
        r->d_dead++;
    }
    if (r->dlq != NULL) {
        char err[LOAMS_TASK_ERROR_MAX];
        if ((rc = loams_dead_letter_append(r->dlq, err, sizeof err)) != 0) {
            loams_task_set_error(r->task, "appending to the dead-letter stream %s.%s: %s",
                                 r->def.dead_letter_stream.ns, r->def.dead_letter_stream.name, err);
            return rc;
        }
    }
    return loams_failpoint("link.after_dead_letter");
}

/* Output rows the target refused fail their source record. */
static void propagate_target_failures(link_run *r)
{
    size_t n = loams_batch_failed_count(r->out);
    for (size_t i = 0; i < n; i++) {
        size_t row;
        int status;
        const char *msg;
        int32_t partition;
        int64_t offset;
        loams_batch_failure_at(r->out, i, &row, &status, &msg);
        if (loams_batch_row_origin(r->out, row, &partition, &offset) != 0 || partition < 0) {
            continue;
        }
        size_t in_row;
        if (!span_row(r, partition, offset, &in_row)) {
            continue;
        }
        /* The output message already names partition and offset. */
        const char *text = strstr(msg, ": ");
        loams_batch_row_fail(r->in, in_row, status, "%s", text != NULL ? text + 2 : msg);
    }
}

/* ---- resume, commit, maintain: the commit cycle (commit_cycle.h) ---- */

/* What a run stages starts over from the cycle's base. */
static int resumed(link_run *r)
{
    r->staged_bytes = r->staged_records = 0;
    r->advanced = 0;
    memset(&r->cur, 0, sizeof r->cur);
    r->first_staged_ms = 0;
    r->d_applied = r->d_skipped = r->d_dead = 0;
    loams_link_gaps_reset(&r->gaps);
    if (r->dlq == NULL) {
        return 0;
    }
    char err[LOAMS_TASK_ERROR_MAX];
    int rc = loams_dead_letter_resume(r->dlq, r->next, err, sizeof err);
    if (rc != 0) {
        loams_task_set_error(r->task, "%s", err);
    }
    return rc;
}

static int resume(link_run *r)
{
    char err[LOAMS_TASK_ERROR_MAX];
    int rc = loams_commit_cycle_resume(r->cycle, r->next, err, sizeof err);
    if (rc != 0) {
        loams_task_set_error(r->task, "%s", err);
        return rc;
    }
    return resumed(r);
}

/* The staged work is given up: redone by the next run or resume. */
static void discard_staged(link_run *r)
{
    memset(&r->cur, 0, sizeof r->cur); /* that work is redone */
    loams_commit_cycle_abort(r->cycle);
}

/* A commit's extra writes: the dead letters' marks and the run's report
 * (run_report.h). */
static int commit_extra(void *userdata, loams_gc_writes *ws, char *err, size_t errsize)
{
    link_run *r = userdata;
    int rc = r->dlq != NULL ? loams_dead_letter_commit_writes(r->dlq, ws, err, errsize) : 0;
    return rc != 0 ? rc : loams_run_report_commit_writes(r->task, &r->def.name, ws, err, errsize);
}

static const double commit_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                        1,     2.5,  5,     10,   30,  60};
static const loams_metric_family commit_seconds = {
    "loams_link_commit_duration_seconds",
    "Wall time of a link's commits: the target's prepare and the fenced metastore commit",
    LOAMS_METRIC_HISTOGRAM, commit_buckets, sizeof commit_buckets / sizeof commit_buckets[0]};

/* Records the commit that r->cur describes in the process's metrics. */
static void observe_commit(const link_run *r)
{
    char name[2 * LOAMS_IDENT_MAX + 2], labels[512];
    snprintf(name, sizeof name, "%s.%s", r->def.name.ns, r->def.name.name);
    if (loams_metrics_labels(labels, sizeof labels, "link", name, NULL) == 0) {
        double wall = (double)(r->cur.prepare.wall_ns + r->cur.commit.wall_ns) / 1e9;
        loams_metrics_observe(&commit_seconds, labels, wall);
    }
}

/* Commits what is staged.  Returns 0, LOAMS_EFENCED (zombie), LOAMS_ECONFLICT
 * (the caller resumes and carries on), or an error. */
static int commit(link_run *r)
{
    char err[LOAMS_TASK_ERROR_MAX];
    loams_commit_counts counts = {.applied = r->d_applied,
                                  .skipped = r->d_skipped,
                                  .dead_lettered = r->d_dead,
                                  .lost = r->gaps.lost,
                                  .gaps = r->gaps.gaps,
                                  .n_gaps = r->gaps.n};
    int rc = loams_commit_cycle_commit(r->cycle, r->next, &counts, commit_extra, r, &r->cur, err,
                                       sizeof err);
    if (rc != 0) {
        loams_task_set_error(r->task, "%s", err);
        memset(&r->cur, 0, sizeof r->cur); /* that work is redone */
        return rc;
    }
    r->cur.records = r->staged_records;
    r->cur.commits = 1;
    if (loams_task_memory(r->task) != NULL) {
        loams_mem_account_usage(loams_task_memory(r->task), NULL, &r->cur.memory_peak);
    }
    char times[256], peak[32];
    loams_link_stats_format(&r->cur, times, sizeof times);
    loams_mem_format(r->cur.memory_peak, peak, sizeof peak);
    run_log(r, LOAMS_LOG_INFO,
            "committed %s: %" PRIu64 " records applied, %" PRIu64 " skipped, %" PRIu64
            " dead-lettered (%" PRIu64 " records, %" PRIu64 " bytes; %s; peak memory %s)",
            loams_commit_cycle_base(r->cycle)->ref, r->d_applied, r->d_skipped, r->d_dead,
            r->cur.records, r->cur.bytes, times, peak);
    observe_commit(r);
    if (r->env->on_commit != NULL) {
        r->env->on_commit(r->env->userdata, &r->def, &r->cur);
    }
    loams_link_stats_add(&r->total, &r->cur);
    memset(&r->cur, 0, sizeof r->cur);
    r->staged_bytes = r->staged_records = 0;
    r->advanced = 0;
    if (loams_source_committed(r->source, r->next, err, sizeof err) != 0) {
        run_log(r, LOAMS_LOG_WARN, "source: reporting the committed offsets: %s", err);
    }
    r->first_staged_ms = 0;
    r->d_applied = r->d_skipped = r->d_dead = 0;
    loams_link_gaps_reset(&r->gaps);
    return 0;
}

/* Maintenance between two commits (nothing staged), when due
 * (loams_commit_cycle_maintain).  Returns 0, or the status that ends the
 * run (a failed maintenance only logs: the data is unchanged). */
static int maintain(link_run *r)
{
    if (!nothing_staged(r)) {
        return 0;
    }
    char err[LOAMS_TASK_ERROR_MAX];
    /* Merges and compaction are held to the maintenance budget. */
    loams_task_memory_class(r->task, LOAMS_MEM_MAINTENANCE);
    int rc = loams_commit_cycle_maintain(r->cycle, r->def.maintenance_interval_ms, r->next, err,
                                         sizeof err);
    char over[512];
    if (loams_task_memory(r->task) != NULL &&
        loams_mem_account_refusal(loams_task_memory(r->task), over, sizeof over)) {
        run_log(r, LOAMS_LOG_WARN, "maintenance: %s", over);
    }
    loams_task_memory_class(r->task, LOAMS_MEM_LINK);
    if (rc < 0 || rc > 1) {
        loams_task_set_error(r->task, "%s", err);
        return rc;
    }
    if (rc == 1) {
        r->def_checked_ms = 0; /* a rejected maintenance commit may be a new definition's doing */
    }
    return rc == 1 ? resumed(r) : 0;
}

/* ---- one chunk ---- */

static int write_chunk(link_run *r, size_t nrecords);

/* Decode, transform, stage.  Returns 1 when the link stopped failed. */
static int apply_chunk(link_run *r, size_t nrecords)
{
    char err[LOAMS_TASK_ERROR_MAX];
    int rc;
    if ((rc = loams_failpoint("link.after_read")) != 0) {
        return rc;
    }
    loams_stage_clock clk;
    loams_stage_start(&clk);
    loams_ctx *prev = loams_ctx_set_current(r->decoder.ctx);
    rc = r->dvt->decode(r->decoder.state, r->in);
    loams_ctx_set_current(prev);
    loams_stage_end(&clk, &r->cur.decode);
    if (rc != 0) {
        loams_task_set_error(r->task, "decoder: %s", instance_error(&r->decoder, err, sizeof err));
        return rc;
    }
    if ((rc = loams_failpoint("link.after_decode")) != 0) {
        return rc;
    }
    loams_stage_start(&clk);
    loams_batch_reset(r->out);
    prev = loams_ctx_set_current(r->transform.ctx);
    rc = r->tvt->run(r->transform.state, r->in, r->out);
    loams_ctx_set_current(prev);
    loams_stage_end(&clk, &r->cur.transform);
    if (rc != 0) {
        loams_task_set_error(r->task, "transform: %s",
                             instance_error(&r->transform, err, sizeof err));
        return rc;
    }
    if ((rc = loams_failpoint("link.after_transform")) != 0) {
        return rc;
    }
    loams_stage_start(&clk);
    rc = write_chunk(r, nrecords);
    loams_stage_end(&clk, &r->cur.write);
    return rc;
}

/* Hands the transformed chunk to the target and applies on_error to the
 * failed records.  Returns 1 when the link stopped failed. */
static int write_chunk(link_run *r, size_t nrecords)
{
    char err[LOAMS_TASK_ERROR_MAX];
    int rc;
    if (loams_batch_failed_count(r->in) > 0) {
        /* on_error = fail (or a schema change) stops before the target
         * sees the chunk; otherwise the failures are handled after it. */
        int stop = 0;
        for (size_t i = 0; i < loams_batch_failed_count(r->in) && !stop; i++) {
            int status;
            loams_batch_failure_at(r->in, i, NULL, &status, NULL);
            stop = r->def.on_error == LOAMS_ON_ERROR_FAIL || status == LOAMS_ESCHEMA;
        }
        if (stop) {
            return handle_failures(r);
        }
    }
    rc = loams_commit_cycle_write(r->cycle, r->out);
    if (rc == LOAMS_ESCHEMA) {
        /* An incompatible schema change pauses the link (DESIGN §8). */
        instance_error(&r->target, err, sizeof err);
        run_log(r, LOAMS_LOG_ERROR, "incompatible schema change, pausing the link: %s", err);
        loams_meta_err merr;
        loams_link_set_state(r->env->meta, &r->def, LOAMS_LINK_FAILED, err, -1, -1, &merr);
        return 1;
    }
    if (rc != 0) {
        loams_task_set_error(r->task, "target write: %s",
                             instance_error(&r->target, err, sizeof err));
        return rc;
    }
    if ((rc = loams_failpoint("link.after_target_write")) != 0) {
        return rc;
    }
    propagate_target_failures(r);
    size_t failed = loams_batch_failed_count(r->in);
    if ((rc = handle_failures(r)) != 0) {
        return rc;
    }
    /* Everything read is done: applied or handled by on_error. */
    for (unsigned p = 0; p < r->partitions; p++) {
        const part_span *sp = &r->spans[p];
        if (sp->count > 0) {
            if ((rc = loams_offsets_set(r->next, sp->partition, sp->next_offset)) != 0) {
                return rc;
            }
        }
    }
    if (r->dlq != NULL) {
        loams_dead_letter_handled(r->dlq, r->next);
    }
    r->d_applied += nrecords - failed;
    r->staged_records += nrecords;
    r->staged_bytes += loams_batch_payload_bytes(r->in);
    loams_task_add_bytes(r->task, loams_batch_payload_bytes(r->in));
    r->cur.bytes += r->chunk_bytes;
    if (r->first_staged_ms == 0) {
        r->first_staged_ms = now_ms();
    }
    return 0;
}

/* Re-reads the definition now and then: a PAUSE, DROP, failure elsewhere
 * or a new definition (ALTER LINK, CREATE OR REPLACE LINK, DROP + CREATE:
 * another incarnation or definition version) ends the run; the next run
 * compiles what is in force.  Its commits could not land anyway: they
 * compare the definition (commit_cycle.h).  Returns 1 when the run must
 * end. */
static int definition_changed(link_run *r)
{
    int64_t now = now_ms();
    if (now - r->def_checked_ms < DEF_RELOAD_MS) {
        return 0;
    }
    r->def_checked_ms = now;
    loams_link_def d;
    loams_link_def_init(&d);
    loams_meta_err merr;
    int rc = loams_link_get(r->env->meta, &r->def.name, &d, &merr);
    int redefined = rc == 0 && (d.incarnation != r->def.incarnation ||
                                d.definition_version != r->def.definition_version);
    int stop = rc == LOAMS_ENOTFOUND || redefined || (rc == 0 && d.state != LOAMS_LINK_RUNNING);
    if (redefined) {
        run_log(r, LOAMS_LOG_INFO,
                "definition changed (incarnation %" PRIu64 " version %" PRIu64
                " is now incarnation %" PRIu64 " version %" PRIu64
                "): stopping; what is not committed is redone by the next run, under the new "
                "definition",
                r->def.incarnation, r->def.definition_version, d.incarnation, d.definition_version);
    } else if (stop) {
        run_log(r, LOAMS_LOG_INFO, "link is %s: stopping",
                rc == LOAMS_ENOTFOUND ? "dropped" : loams_link_state_name(d.state));
    } else if (rc == 0) {
        r->def.version = d.version; /* the same definition, another state write */
    }
    loams_link_def_clear(&d);
    return stop;
}

/* After a rejected commit: whether the definition changed (read now). */
static int definition_changed_now(link_run *r)
{
    r->def_checked_ms = 0;
    return definition_changed(r);
}

static int run_loop(link_run *r)
{
    int rc = resume(r);
    while (rc == 0) {
        r->cancel_flag = loams_task_cancelled(r->task);
        if (r->cancel_flag || r->stop_seen || definition_changed(r)) {
            break;
        }
        /* One task of a link maintains its target: the first range's. */
        if (r->first == 0 && nothing_staged(r) && (rc = maintain(r)) != 0) {
            break;
        }
        if (nothing_staged(r) && loams_task_should_yield(r->task)) {
            run_log(r, LOAMS_LOG_INFO,
                    "yielding the slot to a waiting task (everything read "
                    "is committed); the link runs again shortly");
            break;
        }
        loams_stage_clock clk;
        loams_stage_start(&clk);
        long n = read_chunk(r);
        loams_stage_end(&clk, &r->cur.read);
        if (n < 0) {
            rc = (int)n;
            break;
        }
        if (n > 0) {
            rc = apply_chunk(r, (size_t)n);
            if (rc == 1) {
                discard_staged(r);
                rc = 0;
                break;
            }
            if (rc != 0) {
                break;
            }
            /* Held to the namespace's byte rate, if it has one. */
            loams_stage_clock pace;
            loams_stage_start(&pace);
            int stop = loams_task_pace(r->task) != 0;
            loams_stage_end(&pace, &r->cur.idle);
            if (stop) {
                break;
            }
        }
        int64_t age = r->first_staged_ms ? now_ms() - r->first_staged_ms : 0;
        run_log(r, LOAMS_LOG_DEBUG,
                "read %ld, staged %" PRIu64 " records (%" PRIu64 " bytes, %" PRId64 " ms)", n,
                r->staged_records, r->staged_bytes, age);
        if (!nothing_staged(r) &&
            (r->staged_bytes >= r->def.batch_bytes || age >= r->def.batch_interval_ms)) {
            rc = commit(r);
            if (rc == LOAMS_ECONFLICT && definition_changed_now(r)) {
                rc = 0; /* the staged work is redone under the new definition */
                break;
            }
            if (rc == LOAMS_ECONFLICT) {
                rc = resume(r);
            }
            continue;
        }
        if (n == 0) {
            int64_t wait = IDLE_SLEEP_MS;
            if (!nothing_staged(r) && r->def.batch_interval_ms - age < wait) {
                wait = r->def.batch_interval_ms - age;
            }
            if (wait > 0) {
                loams_stage_clock idle;
                loams_stage_start(&idle);
                int stop = loams_task_sleep(r->task, wait) != 0;
                loams_stage_end(&idle, &r->cur.idle);
                if (stop) {
                    break;
                }
            }
        }
    }
    if (rc == LOAMS_ECANCELLED && r->stop_seen && !loams_task_cancelled(r->task)) {
        rc = 0; /* a plugin stopped for the PAUSE or DROP: the run ends as the loop would */
    }
    if (r->staged_records > 0) {
        discard_staged(r); /* not committed: redone by the next run */
    }
    if (r->total.commits > 0) {
        char times[256], peak[32] = "?";
        loams_link_stats_format(&r->total, times, sizeof times);
        uint64_t cpu = r->total.read.cpu_ns + r->total.decode.cpu_ns + r->total.transform.cpu_ns +
                       r->total.write.cpu_ns + r->total.prepare.cpu_ns + r->total.commit.cpu_ns;
        if (loams_task_memory(r->task) != NULL) {
            uint64_t bytes;
            loams_mem_account_usage(loams_task_memory(r->task), NULL, &bytes);
            loams_mem_format(bytes, peak, sizeof peak);
        }
        run_log(r, LOAMS_LOG_INFO,
                "run ends: %" PRIu64 " records (%" PRIu64 " bytes) in %" PRIu64
                " commits, %.0f records/s of CPU; %s; peak memory %s",
                r->total.records, r->total.bytes, r->total.commits,
                cpu > 0 ? (double)r->total.records * 1e9 / (double)cpu : 0.0, times, peak);
    }
    return rc;
}

static int run_setup(link_run *r)
{
    char link[2 * LOAMS_IDENT_MAX + 2];
    snprintf(link, sizeof link, "%s.%s", r->def.name.ns, r->def.name.name);
    char serr[LOAMS_TASK_ERROR_MAX];
    loams_source_reader reader = {.link = link,
                                  .task = r->key,
                                  .epoch = r->epoch,
                                  .first_partition = (int32_t)r->first,
                                  .last_partition = (int32_t)r->last,
                                  .ctx_setup = ctx_wire,
                                  .ud = r};
    int rc = loams_source_open(r->env->log, r->env->registry, &r->def.stream, &reader, &r->source,
                               serr, sizeof serr);
    if (rc != 0) {
        loams_task_set_error(r->task, "link %s.%s: source stream: %s", r->def.name.ns,
                             r->def.name.name, serr);
        return rc;
    }
    const loams_stream_def *sdef = loams_source_definition(r->source);
    r->external = sdef->source[0] != '\0';
    r->partitions = sdef->partitions;
    /* The task's range must be one of the link's ranges now: a range of
     * another tasks setting or partition count (ALTER LINK ... SET (tasks),
     * a stream given more partitions) ends; the worker runs the new ones. */
    unsigned n = loams_link_ranges(r->partitions, r->def.tasks), k;
    for (k = 0; k < n; k++) {
        unsigned first, last;
        char key[LOAMS_LEASE_KEY_MAX];
        loams_link_range(&r->def.name, r->partitions, r->def.tasks, k, &first, &last, key,
                         sizeof key);
        if (first == r->first && last == r->last) {
            break;
        }
    }
    if (k == n) {
        run_log(r, LOAMS_LOG_INFO,
                "partitions %u-%u are not one of the link's ranges any more (%u tasks over %u "
                "partitions): this task ends, the link's current ranges run instead",
                r->first, r->last, n, r->partitions);
        return 1;
    }
    r->key_text = sdef->key_type == LOAMS_STREAM_KEY_STRING;
    if (r->def.on_error == LOAMS_ON_ERROR_DEAD_LETTER) {
        char err[LOAMS_TASK_ERROR_MAX];
        loams_dead_letter_run run = {.task_key = r->key,
                                     .epoch = r->epoch,
                                     .first = (int32_t)r->first,
                                     .last = (int32_t)r->last,
                                     .partitions = r->partitions,
                                     .generation = loams_dead_letter_generation(
                                         r->def.incarnation, r->def.definition_version)};
        rc = loams_dead_letter_open(r->env->meta, r->env->log, &r->def.name,
                                    &r->def.dead_letter_stream, &run, &r->dlq, err, sizeof err);
        if (rc != 0) {
            loams_task_set_error(r->task, "link %s.%s: dead-letter stream: %s", r->def.name.ns,
                                 r->def.name.name, err);
            return rc;
        }
    }
    char gerr[512];
    if ((rc = loams_link_gaps_init(&r->gaps, &r->def, gerr, sizeof gerr)) != 0) {
        loams_task_set_error(r->task, "%s", gerr);
        return rc;
    }
    if ((r->spans = calloc(r->partitions, sizeof *r->spans)) == NULL ||
        (rc = loams_offsets_create(&r->next)) != 0 || (rc = loams_batch_create(&r->in)) != 0 ||
        (rc = loams_batch_create(&r->out)) != 0 || (rc = loams_buf_create(&r->headers)) != 0) {
        return rc != 0 ? rc : -ENOMEM;
    }
    loams_batch_set_account(r->in, loams_task_memory(r->task));
    loams_batch_set_account(r->out, loams_task_memory(r->task));
    if ((rc = instances_open(r)) != 0) {
        return rc;
    }
    loams_commit_cycle_spec spec = {.meta = r->env->meta,
                                    .task_key = r->key,
                                    .epoch = r->epoch,
                                    .target = &r->def.target,
                                    .target_kind = r->def.target_kind,
                                    .link = link,
                                    .plugin_name = r->target.plugin->name,
                                    .vt = r->gvt,
                                    .state = r->target.state,
                                    .ctx = r->target.ctx,
                                    .def = &r->def,
                                    .store = r->env->store};
    if ((rc = loams_commit_cycle_new(&spec, &r->cycle)) != 0) {
        loams_task_set_error(r->task, "link %s.%s: %s", r->def.name.ns, r->def.name.name,
                             rc == -ENOMEM ? "out of memory" : "bad task key");
    }
    return rc;
}

static void run_teardown(link_run *r)
{
    loams_commit_cycle_free(r->cycle);
    instances_close(r);
    loams_batch_free(r->in);
    loams_batch_free(r->out);
    loams_buf_free(r->headers);
    loams_offsets_free(r->next);
    loams_link_gaps_free(&r->gaps);
    free(r->spans);
    loams_dead_letter_free(r->dlq);
    loams_source_close(r->source);
}

int loams_link_run(loams_link_env *env, loams_task *t)
{
    link_run r;
    memset(&r, 0, sizeof r);
    r.env = env;
    r.task = t;
    r.key = loams_task_key(t);
    r.epoch = loams_task_epoch(t);
    loams_link_def_init(&r.def);
    loams_objname name;
    if (parse_task_key(r.key, &name, &r.first, &r.last) != 0) {
        loams_task_set_error(t, "'%s' is not a link task key", r.key);
        return LOAMS_EINPUT;
    }
    loams_meta_err merr;
    int rc = loams_link_get(env->meta, &name, &r.def, &merr);
    if (rc == LOAMS_ENOTFOUND) {
        return 0; /* dropped since it was proposed */
    }
    if (rc != 0) {
        loams_task_set_error(t, "%s", merr.msg);
        return rc;
    }
    if (r.def.state != LOAMS_LINK_RUNNING) {
        loams_link_def_clear(&r.def);
        return 0;
    }
    /* A definition stored before incarnations gets one: every commit
     * compares the definition in force. */
    if (r.def.incarnation == 0 && (rc = loams_link_upgrade(env->meta, &r.def, &merr)) != 0) {
        loams_link_def_clear(&r.def);
        if (rc == LOAMS_ENOTFOUND) {
            return 0;
        }
        loams_task_set_error(t, "%s", merr.msg);
        return rc;
    }
    r.def_checked_ms = now_ms();
    r.thread = pthread_self();
    rc = run_setup(&r);
    if (rc == 0) {
        rc = run_loop(&r);
    } else if (rc == 1) {
        rc = 0; /* a range the link no longer has */
    }
    run_teardown(&r);
    if (rc != 0 && rc != LOAMS_EFENCED && !loams_task_cancelled(t)) {
        /* A failure after a refused charge is the memory budget's (the
         * plugin only saw an allocation fail): the task fails with the
         * message that names it, and system.links shows it until a later
         * run commits. */
        char msg[512];
        if (loams_task_memory(t) != NULL &&
            loams_mem_account_refusal(loams_task_memory(t), msg, sizeof msg)) {
            loams_task_set_error(t, "%s", msg);
            rc = LOAMS_ELIMIT;
        }
        loams_run_report_failure(t, &r.def.name, loams_task_error(t));
    }
    loams_link_def_clear(&r.def);
    return rc;
}

/* ---- the task source ---- */

static int source_propose(void *userdata, loams_task_list *out)
{
    loams_link_env *env = userdata;
    loams_link_def *defs;
    size_t n;
    loams_meta_err merr;
    int rc = loams_link_list(env->meta, &defs, &n, &merr);
    if (rc != 0) {
        loams_log(LOAMS_LOG_ERROR, COMP, "listing links: %s", merr.msg);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        if (defs[i].state != LOAMS_LINK_RUNNING) {
            continue;
        }
        loams_stream_def sd;
        loams_stream_err serr;
        if (loams_stream_describe(env->log, &defs[i].stream, &sd, &serr) != 0) {
            continue; /* its stream is gone: the link cannot run */
        }
        unsigned ranges = loams_link_ranges(sd.partitions, defs[i].tasks);
        for (unsigned k = 0; k < ranges; k++) {
            char key[LOAMS_LEASE_KEY_MAX];
            unsigned first, last;
            loams_link_range(&defs[i].name, sd.partitions, defs[i].tasks, k, &first, &last, key,
                             sizeof key);
            loams_task_list_add(out, key, defs[i].name.ns, LOAMS_PRIO_LINK_APPLY, 0);
        }
    }
    loams_link_defs_free(defs, n);
    return 0;
}

static int source_run(void *userdata, loams_task *t)
{
    return loams_link_run(userdata, t);
}

void loams_link_source(loams_link_env *env, loams_task_source *out)
{
    memset(out, 0, sizeof *out);
    out->name = "links";
    out->userdata = env;
    out->propose = source_propose;
    out->run = source_run;
}
