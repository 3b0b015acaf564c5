/*
 * decoder_harness.h - drives a decoder plugin through the real host for
 * the decoder unit tests: an input batch built from (partition, offset,
 * value) triples, a context with options, open/decode/close.
 */
#ifndef LOAMS_TEST_DECODER_HARNESS_H
#define LOAMS_TEST_DECODER_HARNESS_H

#include <check.h>
#include <string.h>

#include "abi/batch.h"
#include "abi/plugin_ctx.h"

typedef struct decoder_run {
    const loams_plugin_descriptor *desc;
    loams_ctx *ctx;
    void *state;
    loams_batch *batch;
} decoder_run;

/* Opens a decoder with options kv[0..n); asserts success. */
static inline void decoder_open(decoder_run *run, const loams_plugin_descriptor *desc,
                                const loams_option_kv *kv, size_t n)
{
    char err[512] = "";
    run->desc = desc;
    ck_assert_msg(loams_ctx_create(desc, kv, n, &run->ctx, err, sizeof err) == 0, "%s", err);
    const loams_decoder_vtable *vt = desc->vtable;
    int rc = vt->open(run->ctx, &run->state);
    if (rc != 0) {
        loams_ctx_error(run->ctx, err, sizeof err);
    }
    ck_assert_msg(rc == 0, "open: %s", err);
    ck_assert_int_eq(loams_batch_create(&run->batch), 0);
}

/* Appends one record (partition p, offset o, value bytes). */
static inline void decoder_add(decoder_run *run, int32_t p, int64_t o, const char *value,
                               size_t len)
{
    loams_record r = {0};
    r.value = value;
    r.value_len = len;
    r.partition = p;
    r.offset = o;
    r.timestamp_us = 1000;
    ck_assert_int_eq(loams_batch_append_records(run->batch, &r, 1), 0);
}

static inline int decoder_decode(decoder_run *run)
{
    const loams_decoder_vtable *vt = run->desc->vtable;
    return vt->decode(run->state, run->batch);
}

/* Closes the decoder; asserts it gave back every byte it allocated. */
static inline void decoder_close(decoder_run *run)
{
    const loams_decoder_vtable *vt = run->desc->vtable;
    vt->close(run->state);
    uint64_t in_use;
    loams_ctx_memory(run->ctx, &in_use, NULL);
    ck_assert_uint_eq(in_use, 0);
    loams_ctx_free(run->ctx);
    loams_batch_free(run->batch);
}

/* The failure message of a row ("" when it did not fail). */
static inline const char *row_error(decoder_run *run, size_t row)
{
    const char *msg = "";
    loams_batch_row_error(run->batch, row, NULL, &msg);
    return msg;
}

/* The cell of column `name` in row; asserts the column exists. */
static inline loams_value cell(decoder_run *run, size_t row, const char *name)
{
    long col = loams_batch_column_find(run->batch, name);
    ck_assert_msg(col >= 0, "no column '%s'", name);
    loams_value v;
    ck_assert_int_eq(loams_batch_get(run->batch, row, (size_t)col, &v), 0);
    return v;
}

static inline int text_is(loams_value v, const char *text)
{
    return v.u.s.len == strlen(text) && memcmp(v.u.s.ptr, text, v.u.s.len) == 0;
}

#endif
