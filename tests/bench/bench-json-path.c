/*
 * bench-json-path.c - the on-demand JSON extractor of transform-sql against
 * cJSON (full tree) on the same support-ticket records, one core.
 *
 * Each record: read subject, body, priority and customer.name as unescaped
 * strings (what the seed's SELECT and a typical link read).  Both sides
 * hash what they extract; the hashes must match, so the figures compare
 * equal work.
 *
 *   bench-json-path [records] [passes]     (default 100000 x 10)
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loams/kit/json_path.h"
#include "ticket_gen.h"

static const char *const paths[] = {"$.subject", "$.body", "$.priority", "$.customer.name"};
#define NPATHS 4

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t hash_bytes(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
    }
    return h;
}

int main(int argc, char **argv)
{
    size_t nrec = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    int passes = argc > 2 ? atoi(argv[2]) : 10;
    char *data;
    size_t *off, *len, total = 0;
    loams_kit_json_path *p[NPATHS];
    loams_kit_json_doc *doc;
    char buf[2048];
    uint64_t h1 = UINT64_C(1469598103934665603), h2 = h1;
    double t0, t_ours, t_cjson;

    if (nrec == 0 || passes <= 0) {
        fprintf(stderr, "usage: bench-json-path [records > 0] [passes > 0]\n");
        return 2;
    }
    data = malloc(nrec * 1024);
    off = malloc(nrec * sizeof(*off));
    len = malloc(nrec * sizeof(*len));
    if (!data || !off || !len || loams_kit_json_doc_new(NULL, &doc) != 0) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < nrec; i++) {
        off[i] = total;
        len[i] = ticket_gen(i, data + total, 1024);
        total += len[i];
    }
    for (int i = 0; i < NPATHS; i++) {
        loams_kit_json_error err;
        if (loams_kit_json_path_compile(NULL, paths[i], strlen(paths[i]), &p[i], &err) != 0) {
            fprintf(stderr, "path %s: %s\n", paths[i], err.what);
            return 1;
        }
    }

    t0 = cpu_seconds();
    for (int pass = 0; pass < passes; pass++) {
        for (size_t r = 0; r < nrec; r++) {
            loams_kit_json_doc_reset(doc, data + off[r], len[r]);
            for (int i = 0; i < NPATHS; i++) {
                loams_kit_json_value v;
                loams_kit_json_error err;
                size_t n;
                if (loams_kit_json_doc_get(doc, p[i], &v, &err) != 0 ||
                    v.kind != LOAMS_KIT_JSON_STRING ||
                    loams_kit_json_value_string(doc, &v, buf, sizeof(buf), &n, &err) != 0) {
                    fprintf(stderr, "record %zu path %s failed\n", r, paths[i]);
                    return 1;
                }
                if (pass == 0) {
                    h1 = hash_bytes(h1, buf, n);
                }
            }
        }
    }
    t_ours = cpu_seconds() - t0;

    t0 = cpu_seconds();
    for (int pass = 0; pass < passes; pass++) {
        for (size_t r = 0; r < nrec; r++) {
            cJSON *root = cJSON_ParseWithLength(data + off[r], len[r]);
            const cJSON *items[NPATHS];
            if (!root) {
                fprintf(stderr, "cJSON: record %zu does not parse\n", r);
                return 1;
            }
            items[0] = cJSON_GetObjectItemCaseSensitive(root, "subject");
            items[1] = cJSON_GetObjectItemCaseSensitive(root, "body");
            items[2] = cJSON_GetObjectItemCaseSensitive(root, "priority");
            items[3] = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(root, "customer"), "name");
            for (int i = 0; i < NPATHS; i++) {
                if (!cJSON_IsString(items[i])) {
                    fprintf(stderr, "cJSON: record %zu lacks %s\n", r, paths[i]);
                    return 1;
                }
                size_t n = strlen(items[i]->valuestring);
                memcpy(buf, items[i]->valuestring, n);
                if (pass == 0) {
                    h2 = hash_bytes(h2, buf, n);
                }
            }
            cJSON_Delete(root);
        }
    }
    t_cjson = cpu_seconds() - t0;

    double n = (double)nrec * passes, mb = (double)total * passes / 1e6;
    printf("bench-json-path: %zu records, %.0f bytes average, %d passes, 4 string fields "
           "per record, CPU time of one core\n",
           nrec, (double)total / (double)nrec, passes);
    printf("  %-34s %12.0f records/s %9.1f MB/s\n", "json_path (on-demand, indexed once)",
           n / t_ours, mb / t_ours);
    printf("  %-34s %12.0f records/s %9.1f MB/s\n", "cJSON (full tree) [reference]", n / t_cjson,
           mb / t_cjson);
    printf("  speed-up: %.2fx; extracted bytes %s\n", t_cjson / t_ours,
           h1 == h2 ? "identical" : "DIFFER");
    for (int i = 0; i < NPATHS; i++) {
        loams_kit_json_path_free(NULL, p[i]);
    }
    loams_kit_json_doc_free(doc);
    free(data);
    free(off);
    free(len);
    return h1 == h2 ? 0 : 1;
}
