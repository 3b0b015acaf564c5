/*
 * system_links.c - owns the system.links view (see system_links.h).
 */
#include "catalog/system_links.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "meta/commit.h"
#include "catalog/link_backlog.h"
#include "catalog/link_catalog.h"
#include "catalog/link_holds.h"
#include "catalog/link_report.h"
#include "base/mem_account.h"
#include "base/units.h"
#include "abi/offsets.h"

/* Adds v as a number member with every digit: cJSON keeps a double and
 * prints 16 digits or more as 1.79614543008643e+15, or rounded past 2^53.
 * The row's text is then exact in `links --json`; itext() below reads it. */
static void add_int(cJSON *o, const char *name, int64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, v);
    cJSON_AddRawToObject(o, name, text);
}

static void add_uint(cJSON *o, const char *name, uint64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    cJSON_AddRawToObject(o, name, text);
}

/* One link's row. */
static int link_row(loams_meta *meta, loams_streamlog *log, const loams_link_def *d,
                    loams_offsets *start, cJSON *row, char *err, size_t errlen)
{
    char text[2 * LOAMS_IDENT_MAX + 2];
    snprintf(text, sizeof text, "%s.%s", d->name.ns, d->name.name);
    cJSON_AddStringToObject(row, "link", text);
    snprintf(text, sizeof text, "%s.%s", d->stream.ns, d->stream.name);
    cJSON_AddStringToObject(row, "stream", text);
    snprintf(text, sizeof text, "%s.%s", d->target.ns, d->target.name);
    cJSON_AddStringToObject(row, "target", text);
    cJSON_AddStringToObject(row, "target_kind", d->target_kind);
    cJSON_AddStringToObject(row, "target_plugin", d->target_plugin);
    cJSON_AddStringToObject(row, "state", loams_link_state_name(d->state));
    cJSON_AddStringToObject(row, "on_error", loams_on_error_name(d->on_error));
    /* The definition in force (catalog/link_catalog.h); null for one stored
     * before incarnations that has not run since. */
    if (d->incarnation > 0) {
        add_uint(row, "incarnation", d->incarnation);
        add_uint(row, "definition_version", d->definition_version);
    } else {
        cJSON_AddNullToObject(row, "incarnation");
        cJSON_AddNullToObject(row, "definition_version");
    }
    cJSON_AddStringToObject(row, "resume", loams_link_resume_name(d->resume));
    /* the producers' budgets (backpressure.h); null: none */
    static const char *const budget_keys[] = {"max_unapplied_records", "max_unapplied_bytes",
                                              "max_lag_ms"};
    uint64_t budgets[] = {d->max_unapplied_records, d->max_unapplied_bytes,
                          (uint64_t)d->max_lag_ms};
    for (size_t i = 0; i < 3; i++) {
        if (budgets[i] > 0) {
            add_uint(row, budget_keys[i], budgets[i]);
        } else {
            cJSON_AddNullToObject(row, budget_keys[i]);
        }
    }
    /* What its runs report: the peak memory, and the error of the last
     * failed run while the link runs (retried with backoff). */
    loams_link_report report;
    loams_meta_err rerr;
    int rrc = loams_link_report_read(meta, &d->name, &report, &rerr);
    if (rrc != 0 && rrc != LOAMS_ENOTFOUND) {
        snprintf(err, errlen, "%s", rerr.msg);
        return rrc;
    }
    if (rrc == 0) {
        add_uint(row, "memory_peak_bytes", report.memory_peak);
        add_uint(row, "memory_budget_bytes", report.memory_budget);
    } else {
        cJSON_AddNullToObject(row, "memory_peak_bytes");
        cJSON_AddNullToObject(row, "memory_budget_bytes");
    }
    const char *error = d->error;
    if (error == NULL && d->state == LOAMS_LINK_RUNNING) {
        error = report.error;
    }
    if (error != NULL) {
        cJSON_AddStringToObject(row, "error", error);
        /* A failure that no record caused (a schema change refused at
         * commit, a plugin that does not open, a failed run) has no
         * position: null. */
        if (d->error != NULL && d->error_partition >= 0 && d->error_offset >= 0) {
            add_int(row, "error_partition", d->error_partition);
            add_int(row, "error_offset", d->error_offset);
        } else {
            cJSON_AddNullToObject(row, "error_partition");
            cJSON_AddNullToObject(row, "error_offset");
        }
    } else {
        cJSON_AddNullToObject(row, "error");
    }
    loams_link_report_clear(&report);
    loams_pointer p;
    loams_meta_err merr;
    int rc = loams_pointer_init(&p);
    if (rc != 0) {
        return rc;
    }
    if ((rc = loams_link_pointer_read(meta, d, &p, &merr)) != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        goto out;
    }
    add_uint(row, "applied_records", p.applied_records);
    add_uint(row, "skipped_records", p.skipped_records);
    add_uint(row, "dead_lettered_records", p.dead_lettered_records);
    add_uint(row, "lost_records", p.lost_records);
    cJSON *gaps = cJSON_AddArrayToObject(row, "gaps");
    for (size_t i = 0; i < p.n_gaps; i++) {
        const loams_gap *g = &p.gaps[i];
        cJSON *o = cJSON_CreateObject();
        add_int(o, "partition", g->partition);
        add_int(o, "first_offset", g->first_offset);
        add_int(o, "last_offset", g->last_offset);
        add_int(o, "count", g->last_offset - g->first_offset + 1);
        add_int(o, "found_ms", g->found_ms);
        cJSON_AddItemToArray(gaps, o);
    }
    if ((rc = loams_link_start_offsets(d, start)) != 0) {
        snprintf(err, errlen, "link %s.%s: its start offsets are damaged", d->name.ns,
                 d->name.name);
        goto out;
    }
    if (p.committed_ms > 0) {
        add_int(row, "last_commit_ms", p.committed_ms);
    } else {
        cJSON_AddNullToObject(row, "last_commit_ms");
    }
    /* the newest commit's manifest key: where a reader of the target starts */
    if (p.ref != NULL) {
        cJSON_AddStringToObject(row, "commit", p.ref);
    } else {
        cJSON_AddNullToObject(row, "commit");
    }
    cJSON *parts = cJSON_AddArrayToObject(row, "partitions");
    loams_link_backlog b;
    char berr[1024];
    rc = loams_link_backlog_of(log, d, &p, 1, &b, berr, sizeof berr);
    loams_stream_def sd;
    if (rc != 0 && rc != LOAMS_ENOTFOUND &&
        loams_stream_describe(log, &d->stream, &sd, NULL) == 0 && sd.source[0] != '\0') {
        rc = LOAMS_ENOTFOUND; /* another system that does not answer: said, not fatal */
    }
    if (rc == LOAMS_ENOTFOUND) {
        /* The stream was dropped under the link (or is another system's,
         * which does not answer): nothing known to apply, which the row
         * says instead of a lag of 0. */
        cJSON_AddNullToObject(row, "lag_records");
        cJSON_AddNullToObject(row, "lag_seconds");
        cJSON_AddNullToObject(row, "unapplied_bytes");
        cJSON_AddNullToObject(row, "lost_pending_records");
        cJSON_AddStringToObject(row, "stream_error", berr);
        rc = 0;
        goto out;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s", berr);
        goto out;
    }
    uint64_t pending = 0;
    for (size_t i = 0; i < b.nparts; i++) {
        const loams_link_backlog_part *bp = &b.parts[i];
        cJSON *pp = cJSON_CreateObject();
        add_int(pp, "partition", bp->partition);
        add_int(pp, "applied", bp->applied);
        add_int(pp, "high_water_mark", bp->high_offset);
        /* deleted by retention below what the link is owed: lost once
         * the link reads past them (link_gaps.h) */
        int64_t owed = loams_link_owed_from(start, &p, bp->partition);
        uint64_t lost = bp->low_offset > owed ? (uint64_t)(bp->low_offset - owed) : 0;
        add_uint(pp, "lost_pending", lost);
        pending += lost;
        cJSON_AddItemToArray(parts, pp);
    }
    add_uint(row, "lag_records", b.records);
    cJSON_AddNumberToObject(row, "lag_seconds", b.age_seconds);
    add_uint(row, "unapplied_bytes", b.bytes);
    add_uint(row, "lost_pending_records", pending);
    loams_link_backlog_clear(&b);
out:
    loams_pointer_clear(&p);
    return rc;
}

int loams_system_links(loams_meta *meta, loams_streamlog *log, cJSON **out, char *err,
                       size_t errlen)
{
    loams_link_def *defs;
    size_t n;
    loams_meta_err merr;
    int rc = loams_link_list(meta, &defs, &n, &merr);
    if (rc != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        return rc;
    }
    cJSON *arr = cJSON_CreateArray();
    loams_offsets *start = NULL;
    if (arr == NULL || loams_offsets_create(&start) != 0) {
        rc = -ENOMEM;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        cJSON *row = cJSON_CreateObject();
        if (row == NULL) {
            rc = -ENOMEM;
            break;
        }
        cJSON_AddItemToArray(arr, row);
        rc = link_row(meta, log, &defs[i], start, row, err, errlen);
    }
    loams_offsets_free(start);
    loams_link_defs_free(defs, n);
    if (rc != 0) {
        cJSON_Delete(arr);
        return rc;
    }
    *out = arr;
    return 0;
}

/* A number member of a row, near enough for a test or a date (an integer
 * is raw text: add_int). */
static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsRaw(v)) {
        return strtod(v->valuestring, NULL);
    }
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* An integer member of a row as its text, every digit ("0" when missing). */
static const char *itext(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsRaw(v) ? v->valuestring : "0";
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

int loams_system_links_print(loams_meta *meta, loams_streamlog *log, FILE *out, int json, char *err,
                             size_t errlen)
{
    cJSON *arr;
    int rc = loams_system_links(meta, log, &arr, err, errlen);
    if (rc != 0) {
        return rc;
    }
    rc = loams_system_links_render(arr, out, json);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
    }
    cJSON_Delete(arr);
    return rc;
}

int loams_system_links_render(const cJSON *arr, FILE *out, int json)
{
    if (json) {
        char *text = cJSON_Print(arr);
        if (text == NULL) {
            return -ENOMEM;
        }
        fprintf(out, "%s\n", text);
        cJSON_free(text);
        return 0;
    }
    fprintf(out, "%-24s %-8s %-24s %10s %8s %8s %10s %8s  %s\n", "LINK", "STATE", "TARGET",
            "APPLIED", "SKIPPED", "DLQ", "LAG", "LAG_S", "LAST COMMIT");
    const cJSON *row;
    cJSON_ArrayForEach(row, arr)
    {
        char when[32] = "-";
        double ms = num(row, "last_commit_ms");
        if (ms > 0) {
            time_t t = (time_t)(ms / 1000);
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        }
        fprintf(out, "%-24s %-8s %-24s %10s %8s %8s %10s %8.1f  %s\n", str(row, "link"),
                str(row, "state"), str(row, "target"), itext(row, "applied_records"),
                itext(row, "skipped_records"), itext(row, "dead_lettered_records"),
                itext(row, "lag_records"), num(row, "lag_seconds"), when);
        const cJSON *parts = cJSON_GetObjectItemCaseSensitive(row, "partitions");
        const cJSON *pp;
        cJSON_ArrayForEach(pp, parts)
        {
            fprintf(out, "    partition %s: applied %s of %s", itext(pp, "partition"),
                    itext(pp, "applied"), itext(pp, "high_water_mark"));
            if (num(pp, "lost_pending") > 0) {
                fprintf(out, "; %s deleted by retention before the link applied them",
                        itext(pp, "lost_pending"));
            }
            fputc('\n', out);
        }
        if (num(row, "lost_records") > 0) {
            fprintf(out, "    LOST %s records: deleted by retention before the link applied them",
                    itext(row, "lost_records"));
            const cJSON *g;
            const char *sep = "; newest gaps:";
            cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(row, "gaps"))
            {
                fprintf(out, "%s partition %s offsets %s..%s (%s)", sep, itext(g, "partition"),
                        itext(g, "first_offset"), itext(g, "last_offset"), itext(g, "count"));
                sep = ",";
            }
            fputc('\n', out);
        }
        if (str(row, "stream_error")[0] != '\0') {
            fprintf(out, "    stream %s: %s\n", str(row, "stream"), str(row, "stream_error"));
        }
        const cJSON *peak = cJSON_GetObjectItemCaseSensitive(row, "memory_peak_bytes");
        if (cJSON_IsRaw(peak)) {
            char p[32], b[32] = "none";
            uint64_t budget = strtoull(itext(row, "memory_budget_bytes"), NULL, 10);
            loams_mem_format(strtoull(peak->valuestring, NULL, 10), p, sizeof p);
            if (budget > 0) {
                loams_size_format(budget, b, sizeof b);
            }
            fprintf(out, "    memory: peak %s of the run (budget %s)\n", p, b);
        }
        if (str(row, "error")[0] != '\0') {
            if (cJSON_IsRaw(cJSON_GetObjectItemCaseSensitive(row, "error_offset"))) {
                fprintf(out, "    error at partition %s offset %s: %s\n",
                        itext(row, "error_partition"), itext(row, "error_offset"),
                        str(row, "error"));
            } else {
                fprintf(out, "    error: %s\n", str(row, "error"));
            }
        }
    }
    return 0;
}

int loams_system_links_lag(loams_meta *meta, loams_streamlog *log, uint64_t *records, char *err,
                           size_t errlen)
{
    cJSON *arr;
    int rc = loams_system_links(meta, log, &arr, err, errlen);
    if (rc != 0) {
        return rc;
    }
    uint64_t total = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, arr)
    {
        if (strcmp(str(row, "state"), "running") == 0) {
            total += strtoull(itext(row, "lag_records"), NULL, 10);
        }
    }
    cJSON_Delete(arr);
    *records = total;
    return 0;
}
