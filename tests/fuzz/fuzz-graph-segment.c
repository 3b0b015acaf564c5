/* fuzz-graph-segment.c - libFuzzer target for the graph segment reader
 * (plugins/target-graph/segment_reader.c) and the graph query parser: any
 * bytes given as a segment must open or fail with LOAMS_ECORRUPT (or
 * LOAMS_EUNSUPPORTED for another version), and every lookup and cursor over
 * a segment that opened must end with 0 or LOAMS_ECORRUPT - never crash,
 * leak or read out of bounds.  The same bytes are also parsed as a query
 * request, which must parse or fail with LOAMS_EINPUT. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "graph_query.h"
#include "segment_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct mem {
    const uint8_t *p;
    size_t n;
} mem;

static int mem_read(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    mem *m = ud;
    if (off > m->n || len > m->n - off) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT, "short");
    }
    if (len) {
        memcpy(dst, m->p + off, len);
    }
    return 0;
}

static int visit(void *ud, const loams__grec *r)
{
    size_t *n = ud;
    *n += r->k1len + r->k2len + r->k3len + r->props_len;
    return 0;
}

static void check(int rc)
{
    if (rc != 0 && rc != LOAMS_ECORRUPT) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loams_kit_err e;
    loams__gquery *q = NULL;
    int rc = loams__gquery_parse(NULL, (const char *)data, size, &q, &e);
    if (rc != 0 && rc != LOAMS_EINPUT) {
        abort();
    }
    loams__gquery_free(q);
    mem m = {data, size};
    loams__gseg_reader *r = NULL;
    rc = loams__gseg_reader_open(NULL, "fuzz", size, mem_read, &m, 4, &r, &e);
    if (rc != 0) {
        if (rc != LOAMS_ECORRUPT && rc != LOAMS_EUNSUPPORTED) {
            abort();
        }
        return 0;
    }
    size_t n = 0;
    static const char *keys[] = {"a", "hub", "n001", "ticket:1", ""};
    for (int t = 0; t < LOAMS__GT_COUNT; t++) {
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            check(loams__gseg_lookup(r, (loams__gtable)t, keys[k], strlen(keys[k]), visit, &n, &e));
        }
        loams__gseg_cursor *c = NULL;
        if (loams__gseg_cursor_open(r, (loams__gtable)t, NULL, 0, &c, &e) == 0) {
            for (;;) {
                loams__grec rec;
                int done;
                rc = loams__gseg_cursor_next(c, &rec, &done, &e);
                check(rc);
                if (rc != 0 || done) {
                    break;
                }
                n += rec.k1len;
            }
        }
        loams__gseg_cursor_free(c);
    }
    loams__gseg_reader_free(r);
    return n == (size_t)-1;
}
