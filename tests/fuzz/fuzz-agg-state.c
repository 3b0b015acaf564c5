/* fuzz-agg-state.c - libFuzzer target for the binary forms of the built-in
 * aggregate states (core/abi/agg_exact.c, agg_hll.c, agg_ddsketch.c) and
 * the state cell (plugins/kit/agg_cell.c): the first byte picks the
 * aggregate, the rest is a stored state.  It must read back or be refused
 * with LOAMS_ECORRUPT / LOAMS_EUNSUPPORTED and a message naming the
 * aggregate; a state that reads back must finalize, merge with a copy of
 * itself, and write a form that reads back to the same bytes.  The same
 * bytes as a state cell must parse or be refused without reading past
 * them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "abi/aggregate.h"
#include "abi/buf.h"
#include "abi/plugin_ctx.h"
#include "loams/kit/agg_cell.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const loams_aggregate *const aggs[] = {&loams__agg_count,   &loams__agg_sum, &loams__agg_min,
                                              &loams__agg_max,     &loams__agg_avg, &loams__agg_hll,
                                              &loams__agg_ddsketch};

static loams_buf *write_form(const loams_aggregate *a, void *s)
{
    loams_buf *b = NULL;
    if (loams_buf_create(&b) != 0) {
        return NULL;
    }
    if (a->serialize(NULL, NULL, s, b) != 0) {
        fprintf(stderr, "%s: serialize failed\n", a->name);
        abort();
    }
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    const loams_aggregate *a = aggs[data[0] % (sizeof aggs / sizeof aggs[0])];
    void *s = NULL;
    loams_ctx_thread_error_clear();
    int rc = a->deserialize(NULL, NULL, data + 1, size - 1, &s);
    if (rc != 0) {
        const char *msg = loams_ctx_thread_error(NULL);
        if ((rc != LOAMS_ECORRUPT && rc != LOAMS_EUNSUPPORTED && rc != -12) || s != NULL ||
            (rc != -12 && (msg == NULL || strstr(msg, a->name) == NULL))) {
            fprintf(stderr, "%s: refused with %d, state %p, message '%s'\n", a->name, rc, s,
                    msg ? msg : "(none)");
            abort();
        }
    } else {
        loams_value out;
        (void)a->finalize(NULL, NULL, s, &out);
        loams_buf *b1 = write_form(a, s);
        void *copy = NULL;
        size_t l1;
        const void *p1 = b1 ? loams_buf_data(b1, &l1) : NULL;
        if (b1 != NULL && a->deserialize(NULL, NULL, p1, l1, &copy) != 0) {
            fprintf(stderr, "%s: a written form does not read back: %s\n", a->name,
                    loams_ctx_thread_error(NULL));
            abort();
        }
        if (copy != NULL) {
            loams_buf *b2 = write_form(a, copy);
            size_t l2;
            const void *p2 = b2 ? loams_buf_data(b2, &l2) : NULL;
            if (b2 != NULL && (l1 != l2 || memcmp(p1, p2, l1) != 0)) {
                fprintf(stderr, "%s: the form changed on a round trip\n", a->name);
                abort();
            }
            loams_buf_free(b2);
            (void)a->merge(NULL, NULL, s, copy);
            (void)a->finalize(NULL, NULL, s, &out);
            a->free(NULL, copy);
        }
        loams_buf_free(b1);
        a->free(NULL, s);
    }
    const char *name;
    size_t nl, sl;
    const void *st;
    rc = loams_kit_agg_cell_parse(data, size, &name, &nl, &st, &sl);
    if (rc == 1 && ((const uint8_t *)st + sl != data + size || name + nl > (const char *)st)) {
        abort();
    }
    return 0;
}
