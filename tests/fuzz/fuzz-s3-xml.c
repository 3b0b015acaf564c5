/* fuzz-s3-xml.c - libFuzzer target for the store-s3 plugin's XML answer
 * reader (plugins/store-s3/s3_xml.c).  Any body must read or fail with
 * -EIO and a message; a listing that reads holds NUL-terminated keys and a
 * token when it is truncated; the error reader never overruns its buffers
 * and leaves no control character. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    loams__s3_strings keys = {0}, ids = {0};
    loams_kit_err e;
    int truncated = 0;
    char *next = NULL;
    e.msg[0] = '\0';
    int rc = loams__s3_xml_list(NULL, body, size, &keys, &truncated, &next, &e);
    if (rc == 0) {
        if (truncated && (next == NULL || next[0] == '\0')) {
            abort();
        }
        for (size_t i = 0; i < keys.n; i++) {
            if (keys.items[i] == NULL || strlen(keys.items[i]) > size) {
                abort();
            }
        }
    } else if (rc != -EIO || e.msg[0] == '\0' || keys.n != 0) {
        fprintf(stderr, "list: %d '%s' %zu keys\n", rc, e.msg, keys.n);
        abort();
    }
    free(next);
    loams__s3_strings_free(NULL, &keys);
    char code[16], msg[32];
    if (loams__s3_xml_error(body, size, code, sizeof code, msg, sizeof msg) == 0) {
        for (const char *p = msg; *p != '\0'; p++) {
            if ((unsigned char)*p < 0x20) {
                abort();
            }
        }
    }
    char *id = NULL;
    if (loams__s3_xml_first(NULL, body, size, "UploadId", &id, &e) == 0 && id == NULL) {
        abort();
    }
    free(id);
    rc = loams__s3_xml_uploads(NULL, body, size, &keys, &ids, &truncated, &e);
    if (rc == 0 && keys.n != ids.n) {
        abort();
    }
    loams__s3_strings_free(NULL, &keys);
    loams__s3_strings_free(NULL, &ids);
    return 0;
}
