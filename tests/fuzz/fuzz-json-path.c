/*
 * fuzz-json-path.c - libFuzzer target for the kit's on-demand JSON
 * extractor (plugins/kit/json_path.c) and the exact-integer trees built on
 * it (plugins/kit/json_tree.c).
 *
 * Input: "<path>\n<document>" (a path of the input's own), or, without a
 * newline, a whole document read through a fixed set of paths.  Every
 * found value is converted every way; the checks are the extractor's
 * promises: spans inside the document, unescaped strings no longer than
 * their span, the same answer (or error) when asked again; and the same
 * lookup in the document trusted (a LOAMS_T_JSON cell's) finds the same
 * value when the document is valid, and stays inside it when it is not.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_path.h"
#include "loams/kit/json_tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fixed[] = {"$",        "$.a",       "$.a.b",      "$[0]",
                                    "$.a[1].c", "$.\"x y\"", "$[0][0][0]", "$.subject"};

static void read_all(loams_kit_json_doc *doc, const loams_kit_json_path *p, size_t doclen)
{
    loams_kit_json_value v, again;
    loams_kit_json_error err, err2;
    int rc = loams_kit_json_doc_get(doc, p, &v, &err);
    int rc2 = loams_kit_json_doc_get(doc, p, &again, &err2);
    if (rc != rc2) {
        abort();
    }
    if (rc) {
        if (rc != LOAMS_EINPUT || err.pos > doclen || err.pos != err2.pos || !err.what) {
            abort();
        }
        return;
    }
    if (memcmp(&v, &again, sizeof(v)) != 0) {
        abort();
    }
    if (v.kind == LOAMS_KIT_JSON_MISSING) {
        return;
    }
    if (v.start > v.end || v.end > doclen) {
        abort();
    }
    const char *raw;
    size_t rawlen;
    loams_kit_json_value_raw(doc, &v, &raw, &rawlen);
    if (rawlen > doclen) {
        abort();
    }
    if (v.kind == LOAMS_KIT_JSON_STRING) {
        size_t cap = v.end - v.start, len = 0;
        char *buf = malloc(cap ? cap : 1);
        if (!buf) {
            return;
        }
        rc = loams_kit_json_value_string(doc, &v, buf, cap, &len, &err);
        if ((rc != 0 && rc != LOAMS_EINPUT) || (rc == 0 && len > cap)) {
            abort();
        }
        free(buf);
    } else if (v.kind == LOAMS_KIT_JSON_NUMBER) {
        int64_t i;
        double d;
        rc = loams_kit_json_value_int(doc, &v, &i, &err);
        if (rc != 0 && rc != -ERANGE) {
            abort();
        }
        rc = loams_kit_json_value_double(doc, &v, &d, &err);
        if (rc != 0 && rc != -ERANGE) {
            abort();
        }
    }
}

/* The same lookup with the document trusted (loams_kit_json_doc_trust): on a
 * valid document it must find what the validating lookup found; on any,
 * stay inside it. */
static void read_trusted(loams_kit_json_doc *doc, const loams_kit_json_path *p, const char *json,
                         size_t doclen)
{
    loams_kit_json_value want, got;
    loams_kit_json_error err;
    loams_kit_json_doc_reset(doc, json, doclen);
    int valid = loams_kit_json_doc_get(doc, p, &want, &err);
    loams_kit_json_doc_reset(doc, json, doclen);
    loams_kit_json_doc_trust(doc);
    int rc = loams_kit_json_doc_get(doc, p, &got, &err);
    if (rc != 0 && rc != LOAMS_EINPUT) {
        abort();
    }
    if (rc == 0 && got.kind != LOAMS_KIT_JSON_MISSING &&
        (got.start > got.end || got.end > doclen)) {
        abort();
    }
    if (valid == 0 &&
        (rc != 0 || got.kind != want.kind ||
         (want.kind != LOAMS_KIT_JSON_MISSING &&
          (got.start != want.start || got.end != want.end || got.escaped != want.escaped)))) {
        abort();
    }
}

/* The exact-integer tree (loams/kit/json_tree.h) of a whole document: it
 * builds exactly when the validating reader accepts the document (but for
 * a lone surrogate escape, which a tree refuses), and its
 * printed text builds a tree that prints the same text (the integers as
 * written, raw). */
static void tree_round_trip(loams_kit_json_doc *doc, const char *json, size_t len)
{
    loams_kit_json_value root;
    loams_kit_json_error err;
    loams_kit_json_doc_reset(doc, json, len);
    int valid = loams_kit_json_doc_root(doc, &root, &err);
    cJSON *t = NULL;
    int rc = loams_kit_json_tree_parse(json, len, &t, &err);
    if (rc == -ENOMEM) {
        return;
    }
    /* the reader accepts a lone surrogate escape (its strings are decoded
     * on demand); a tree decodes every string and refuses it, as cJSON
     * does */
    int surrogate = rc == LOAMS_EINPUT && valid == 0 && err.what != NULL &&
                    strstr(err.what, "lone UTF-16 surrogate") != NULL;
    if (((rc == 0) != (valid == 0) && !surrogate) ||
        (rc != 0 && (rc != LOAMS_EINPUT || t != NULL))) {
        abort();
    }
    if (rc != 0) {
        return;
    }
    char *once = cJSON_PrintUnformatted(t);
    cJSON_Delete(t);
    if (once == NULL) {
        return;
    }
    cJSON *again = NULL;
    rc = loams_kit_json_tree_parse(once, strlen(once), &again, &err);
    if (rc == 0) {
        char *twice = cJSON_PrintUnformatted(again);
        if (twice != NULL && strcmp(once, twice) != 0) {
            abort();
        }
        cJSON_free(twice);
        cJSON_Delete(again);
    } else if (rc != -ENOMEM) {
        abort(); /* what cJSON prints of a valid tree is JSON */
    }
    cJSON_free(once);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static loams_kit_json_doc *doc;
    const uint8_t *nl = memchr(data, '\n', size);
    if (!doc && loams_kit_json_doc_new(NULL, &doc) != 0) {
        return 0;
    }
    if (nl) {
        size_t plen = (size_t)(nl - data);
        loams_kit_json_path *p = NULL;
        loams_kit_json_error err;
        int rc = loams_kit_json_path_compile(NULL, (const char *)data, plen, &p, &err);
        if (rc == 0) {
            size_t dlen = size - plen - 1;
            loams_kit_json_doc_reset(doc, (const char *)nl + 1, dlen);
            read_all(doc, p, dlen);
            read_trusted(doc, p, (const char *)nl + 1, dlen);
            loams_kit_json_path_free(NULL, p);
        } else if (rc != LOAMS_EINPUT || err.pos > plen) {
            abort();
        }
        return 0;
    }
    tree_round_trip(doc, (const char *)data, size);
    loams_kit_json_doc_reset(doc, (const char *)data, size);
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        loams_kit_json_path *p = NULL;
        loams_kit_json_error err;
        if (loams_kit_json_path_compile(NULL, fixed[i], strlen(fixed[i]), &p, &err) == 0) {
            read_all(doc, p, size);
            loams_kit_json_path_free(NULL, p);
        }
    }
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        loams_kit_json_path *p = NULL;
        loams_kit_json_error err;
        if (loams_kit_json_path_compile(NULL, fixed[i], strlen(fixed[i]), &p, &err) == 0) {
            read_trusted(doc, p, (const char *)data, size);
            loams_kit_json_path_free(NULL, p);
        }
    }
    return 0;
}
