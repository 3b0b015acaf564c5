/* fuzz-embed-response.c - libFuzzer target for the embed-openai plugin's
 * response reader (plugins/embed-openai/embed_response.c).  The first byte
 * picks the dialect, the texts sent (1..8) and the dimensions expected
 * (0..4); the rest is the body.  Any body must read or fail with one of the
 * documented statuses and a message; a body that reads holds exactly n
 * vectors of the expected (or common) length, all finite; the error
 * message reader never overruns its buffer and leaves no control
 * character. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <loams/status.h>

#include "embed_response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    loams__embed_api api = (loams__embed_api)(data[0] % 3);
    size_t n = 1 + (data[0] >> 2) % 8;
    size_t dims = (data[0] >> 5) % 5;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    const loams_kit_mem *mem = loams_kit_mem_libc();
    loams__embed_result r;
    char err[256];
    err[0] = '\0';
    int rc = loams__embed_parse(mem, api, body, len, n, dims, &r, err, sizeof err);
    if (rc == 0) {
        if (r.n != n || r.vectors == NULL || r.dims == 0 || (dims != 0 && r.dims != dims)) {
            fprintf(stderr, "read %zu vectors of %zu for %zu of %zu\n", r.n, r.dims, n, dims);
            abort();
        }
        for (size_t i = 0; i < r.n * r.dims; i++) {
            if (!isfinite(r.vectors[i])) {
                abort();
            }
        }
        loams__embed_result_free(mem, &r);
    } else if ((rc != LOAMS_EINPUT && rc != LOAMS_ESCHEMA && rc != -EIO && rc != -ENOMEM) ||
               err[0] == '\0' || r.vectors != NULL) {
        fprintf(stderr, "status %d, message '%s'\n", rc, err);
        abort();
    }
    char msg[40];
    memset(msg, 'x', sizeof msg);
    loams__embed_error_message(mem, body, len, msg, sizeof msg - 8);
    if (memchr(msg, '\0', sizeof msg - 8) == NULL || msg[sizeof msg - 1] != 'x') {
        abort();
    }
    for (const char *p = msg; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20) {
            abort();
        }
    }
    return 0;
}
