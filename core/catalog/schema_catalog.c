/*
 * schema_catalog.c - owns the schema registry's keys in the metastore:
 * subjects, schema ids, the text-to-id index and the id counter, and the
 * compatibility rules applied when a version is added (schema_catalog.h).
 */
#include "catalog/schema_catalog.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <loams/status.h>

#include "catalog/avro_canonical.h"
#include "catalog/link_catalog.h"
#include "loams/kit/avro_schema.h"
#include "loams/kit/proto_schema.h"
#include "loams/kit/json_tree.h"

#define SUBJECT_PREFIX "schema/subject/"
#define NEXT_ID_KEY "schema/next_id"
#define REGISTER_TRIES 8

static const char *const format_names[] = {NULL, "AVRO", "PROTOBUF", "JSON"};
static const char *const compat_names[] = {
    "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE",
    "FULL",     "FULL_TRANSITIVE",     "NONE"};

const char *loams_schema_format_name(loams_schema_format f)
{
    return f >= LOAMS_SCHEMA_AVRO && f <= LOAMS_SCHEMA_JSON ? format_names[f] : "?";
}

int loams_schema_format_parse(const char *word, loams_schema_format *out)
{
    for (int f = LOAMS_SCHEMA_AVRO; f <= LOAMS_SCHEMA_JSON; f++) {
        if (strcasecmp(word, format_names[f]) == 0) {
            *out = (loams_schema_format)f;
            return 0;
        }
    }
    return LOAMS_EINPUT;
}

const char *loams_schema_compat_name(loams_schema_compat c)
{
    return c <= LOAMS_COMPAT_NONE ? compat_names[c] : "?";
}

int loams_schema_compat_parse(const char *word, loams_schema_compat *out)
{
    for (int c = 0; c <= LOAMS_COMPAT_NONE; c++) {
        if (strcasecmp(word, compat_names[c]) == 0) {
            *out = (loams_schema_compat)c;
            return 0;
        }
    }
    return LOAMS_EINPUT;
}

void loams_schema_subject_clear(loams_schema_subject *s)
{
    if (s != NULL) {
        free(s->versions);
        memset(s, 0, sizeof *s);
    }
}

static void subject_key(const loams_objname *name, char *out, size_t size)
{
    snprintf(out, size, SUBJECT_PREFIX "%s/%s", name->ns, name->name);
}

static void id_key(uint32_t id, char *out, size_t size)
{
    snprintf(out, size, "schema/id/%010" PRIu32, id);
}

/* ---- stored JSON ---- */

static int subject_from_json(const char *text, size_t len, loams_schema_subject *s)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    const char *fmt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "format"));
    const char *cmp = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "compatibility"));
    const cJSON *versions = cJSON_GetObjectItemCaseSensitive(j, "versions");
    int rc = LOAMS_ECORRUPT;
    if (fmt == NULL || cmp == NULL || !cJSON_IsArray(versions) ||
        loams_schema_format_parse(fmt, &s->format) != 0 ||
        loams_schema_compat_parse(cmp, &s->compat) != 0) {
        goto out;
    }
    size_t n = (size_t)cJSON_GetArraySize(versions);
    s->versions = calloc(n + 1, sizeof *s->versions);
    if (s->versions == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, versions)
    {
        const cJSON *ver = cJSON_GetArrayItem(v, 0), *id = cJSON_GetArrayItem(v, 1);
        if (!cJSON_IsNumber(ver) || !cJSON_IsNumber(id) || ver->valuedouble < 1 ||
            id->valuedouble < 1 || ver->valuedouble > 4294967295.0 ||
            id->valuedouble > 4294967295.0) {
            goto out;
        }
        s->versions[s->nversions].version = (uint32_t)ver->valuedouble;
        s->versions[s->nversions].id = (uint32_t)id->valuedouble;
        s->nversions++;
    }
    rc = 0;
out:
    cJSON_Delete(j);
    return rc;
}

/* The subject's JSON (malloc'ed) with one more version when add != NULL. */
static char *subject_to_json(const loams_schema_subject *s, const loams_schema_version *add)
{
    size_t cap = 128 + 24 * (s->nversions + 1);
    char *out = malloc(cap);
    if (out == NULL) {
        return NULL;
    }
    size_t o =
        (size_t)snprintf(out, cap, "{\"format\":\"%s\",\"compatibility\":\"%s\",\"versions\":[",
                         loams_schema_format_name(s->format), loams_schema_compat_name(s->compat));
    for (size_t i = 0; i <= s->nversions; i++) {
        const loams_schema_version *v = i < s->nversions ? &s->versions[i] : add;
        if (v == NULL) {
            break;
        }
        o += (size_t)snprintf(out + o, cap - o, "%s[%" PRIu32 ",%" PRIu32 "]", i ? "," : "",
                              v->version, v->id);
    }
    snprintf(out + o, cap - o, "]}");
    return out;
}

int loams_schema_subject_get(loams_meta *m, const loams_objname *name, loams_schema_subject *out,
                             loams_meta_err *err)
{
    memset(out, 0, sizeof *out);
    char key[LOAMS_META_KEY_MAX + 1];
    subject_key(name, key, sizeof key);
    loams_meta_kv kv;
    memset(&kv, 0, sizeof kv);
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc == LOAMS_ENOTFOUND && err != NULL) {
        snprintf(err->msg, sizeof err->msg,
                 "schema subject %s.%s does not exist (create it with CREATE SCHEMA %s.%s FORMAT "
                 "AVRO AS $$ ... $$)",
                 name->ns, name->name, name->ns, name->name);
    }
    if (rc != 0) {
        return rc;
    }
    out->name = *name;
    rc = subject_from_json(kv.value, kv.value_len, out);
    loams_meta_kv_free(&kv);
    if (rc != 0) {
        loams_schema_subject_clear(out);
        if (rc == LOAMS_ECORRUPT && err != NULL) {
            snprintf(err->msg, sizeof err->msg, "the stored subject %s.%s is damaged", name->ns,
                     name->name);
        }
    }
    return rc;
}

void loams_schema_subjects_free(loams_schema_subject *s, size_t count)
{
    for (size_t i = 0; s != NULL && i < count; i++) {
        loams_schema_subject_clear(&s[i]);
    }
    free(s);
}

int loams_schema_subject_list(loams_meta *m, loams_schema_subject **out, size_t *count,
                              loams_meta_err *err)
{
    *out = NULL;
    *count = 0;
    loams_schema_subject *list = NULL;
    size_t n = 0, cap = 0;
    char after[LOAMS_META_KEY_MAX + 1] = "";
    int rc;
    for (;;) {
        loams_meta_range_result r;
        rc = loams_meta_range_prefix(m, SUBJECT_PREFIX, after[0] ? after : NULL, 256, &r, err);
        if (rc != 0) {
            goto fail;
        }
        for (size_t i = 0; i < r.count; i++) {
            if (n == cap) {
                size_t ncap = cap ? 2 * cap : 16;
                loams_schema_subject *nl = realloc(list, ncap * sizeof *nl);
                if (nl == NULL) {
                    loams_meta_range_free(&r);
                    rc = -ENOMEM;
                    goto fail;
                }
                list = nl;
                cap = ncap;
            }
            loams_schema_subject *s = &list[n];
            memset(s, 0, sizeof *s);
            const char *rest = r.kvs[i].key + strlen(SUBJECT_PREFIX);
            const char *slash = strchr(rest, '/');
            if (slash == NULL || (size_t)(slash - rest) > LOAMS_IDENT_MAX ||
                strlen(slash + 1) > LOAMS_IDENT_MAX) {
                continue;
            }
            snprintf(s->name.ns, sizeof s->name.ns, "%.*s", (int)(slash - rest), rest);
            snprintf(s->name.name, sizeof s->name.name, "%s", slash + 1);
            rc = subject_from_json(r.kvs[i].value, r.kvs[i].value_len, s);
            if (rc == -ENOMEM) {
                loams_schema_subject_clear(s);
                loams_meta_range_free(&r);
                goto fail;
            }
            if (rc != 0) {
                loams_schema_subject_clear(s);
                continue; /* a damaged one is left out, not fatal to the list */
            }
            n++;
        }
        int more = r.more;
        if (r.count > 0) {
            snprintf(after, sizeof after, "%s", r.kvs[r.count - 1].key);
        }
        loams_meta_range_free(&r);
        if (!more) {
            break;
        }
    }
    *out = list;
    *count = n;
    return 0;
fail:
    loams_schema_subjects_free(list, n);
    return rc;
}

int loams_schema_get_by_id(loams_meta *m, uint32_t id, loams_schema_format *format, char **text,
                           size_t *len, loams_meta_err *err)
{
    *text = NULL;
    char key[64];
    id_key(id, key, sizeof key);
    loams_meta_kv kv;
    memset(&kv, 0, sizeof kv);
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc == LOAMS_ENOTFOUND && err != NULL) {
        snprintf(err->msg, sizeof err->msg, "no schema has id %" PRIu32, id);
    }
    if (rc != 0) {
        return rc;
    }
    cJSON *j = cJSON_ParseWithLength(kv.value, kv.value_len);
    loams_meta_kv_free(&kv);
    const char *fmt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "format"));
    const char *schema = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "schema"));
    loams_schema_format f;
    if (fmt == NULL || schema == NULL || loams_schema_format_parse(fmt, &f) != 0) {
        cJSON_Delete(j);
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "the stored schema %" PRIu32 " is damaged", id);
        }
        return LOAMS_ECORRUPT;
    }
    *text = strdup(schema);
    cJSON_Delete(j);
    if (*text == NULL) {
        return -ENOMEM;
    }
    if (format != NULL) {
        *format = f;
    }
    if (len != NULL) {
        *len = strlen(*text);
    }
    return 0;
}

/* ---- normalising and checking ---- */

/* The text as stored (malloc'ed): JSON without blanks for AVRO and JSON,
 * PROTOBUF as given.  LOAMS_EINPUT (why), -ENOMEM. */
static int normalise(loams_schema_format format, const char *text, size_t len, char **out,
                     char *why, size_t whylen)
{
    *out = NULL;
    loams_kit_err e;
    if (format == LOAMS_SCHEMA_PROTOBUF) {
        while (len > 0 && (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')) {
            text++;
            len--;
        }
        if (len == 0) {
            snprintf(why, whylen, "the schema is empty");
            return LOAMS_EINPUT;
        }
        loams_kit_pb_schema *ps = NULL;
        int rc = loams_kit_pb_schema_parse(NULL, text, len, &ps, &e);
        loams_kit_pb_schema_free(ps);
        if (rc != 0) {
            snprintf(why, whylen, "not a valid Protobuf schema: %s", e.msg);
            return rc;
        }
        *out = strndup(text, len);
        return *out != NULL ? 0 : -ENOMEM;
    }
    if (format == LOAMS_SCHEMA_AVRO) {
        loams_kit_avro_schema *s = NULL;
        int rc = loams_kit_avro_schema_parse(NULL, text, len, &s, &e);
        loams_kit_avro_schema_free(s);
        if (rc != 0) {
            snprintf(why, whylen, "not a valid Avro schema: %s", e.msg);
            return rc;
        }
    }
    cJSON *j = NULL;
    loams_kit_json_error je = {0, NULL};
    int jrc = loams_kit_json_tree_parse(text, len, &j, &je);
    if (jrc != 0) {
        snprintf(why, whylen, "the schema is not JSON at byte %zu: %s", je.pos,
                 je.what != NULL ? je.what : "malformed");
        return jrc;
    }
    if (format == LOAMS_SCHEMA_AVRO && loams_avro_canonical_json(&j) != 0) {
        cJSON_Delete(j);
        return -ENOMEM;
    }
    *out = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return *out != NULL ? 0 : -ENOMEM;
}

/* "schema/hash/<64 hex>" of format and normalised text. */
static int hash_key(loams_schema_format format, const char *text, char *out, size_t size)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    unsigned char md[32];
    unsigned n = 0;
    const char *f = loams_schema_format_name(format);
    int ok = c != NULL && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1 &&
             EVP_DigestUpdate(c, f, strlen(f) + 1) == 1 &&
             EVP_DigestUpdate(c, text, strlen(text)) == 1 && EVP_DigestFinal_ex(c, md, &n) == 1 &&
             n == 32;
    EVP_MD_CTX_free(c);
    if (!ok) {
        return -ENOMEM;
    }
    size_t o = (size_t)snprintf(out, size, "schema/hash/");
    for (unsigned i = 0; i < 32 && o + 2 < size; i++) {
        o += (size_t)snprintf(out + o, size - o, "%02x", md[i]);
    }
    return 0;
}

/* Phrases an Avro mismatch found with `reader` reading `writer`'s data,
 * where the new schema is the reader (new_is_reader) or the writer. */
static void phrase(const loams_kit_avro_mismatch *mm, int new_is_reader, char *out, size_t size)
{
    char where[300];
    if (mm->path[0] != '\0') {
        snprintf(where, sizeof where, "field '%s'", mm->path);
    } else {
        snprintf(where, sizeof where, "the top-level type");
    }
    const char *oldt = new_is_reader ? mm->writer_type : mm->reader_type;
    const char *newt = new_is_reader ? mm->reader_type : mm->writer_type;
    switch (mm->issue) {
    case LOAMS_KIT_AVRO_MISSING_FIELD:
        snprintf(out, size,
                 new_is_reader ? "%s added without a default"
                               : "%s removed but it "
                                 "has no default",
                 where);
        break;
    case LOAMS_KIT_AVRO_TYPE:
    case LOAMS_KIT_AVRO_SCALE:
    case LOAMS_KIT_AVRO_NAME:
    case LOAMS_KIT_AVRO_SIZE:
        snprintf(out, size, "%s changed from %s to %s", where, oldt, newt);
        break;
    case LOAMS_KIT_AVRO_SYMBOL:
        snprintf(out, size,
                 new_is_reader ? "%s: enum symbol '%s' removed (and the enum has no default)"
                               : "%s: enum symbol '%s' added (and the older enum has no default)",
                 where, mm->what);
        break;
    case LOAMS_KIT_AVRO_BRANCH:
        snprintf(out, size,
                 new_is_reader ? "%s changed from %s to %s, which cannot hold a %s"
                               : "%s changed from %s to %s, which adds %s",
                 where, oldt, newt, mm->writer_type);
        break;
    case LOAMS_KIT_AVRO_OK: snprintf(out, size, "%s", where); break;
    }
}

typedef struct loaded {
    uint32_t version;
    loams_kit_avro_schema *s;
} loaded;

/* Checks `cand` against the subject's versions by its rule (version 0)
 * or against one version.  0, LOAMS_ESCHEMA (why), LOAMS_ENOTFOUND,
 * LOAMS_ECORRUPT, -ENOMEM. */
static int check_avro(loams_meta *m, const loams_schema_subject *s, uint32_t only,
                      const loams_kit_avro_schema *cand, char *why, size_t whylen,
                      loams_meta_err *err)
{
    if (s->nversions == 0 || s->compat == LOAMS_COMPAT_NONE) {
        return 0;
    }
    int transitive = s->compat == LOAMS_COMPAT_BACKWARD_TRANSITIVE ||
                     s->compat == LOAMS_COMPAT_FORWARD_TRANSITIVE ||
                     s->compat == LOAMS_COMPAT_FULL_TRANSITIVE;
    int backward =
        s->compat != LOAMS_COMPAT_FORWARD && s->compat != LOAMS_COMPAT_FORWARD_TRANSITIVE;
    int forward =
        s->compat != LOAMS_COMPAT_BACKWARD && s->compat != LOAMS_COMPAT_BACKWARD_TRANSITIVE;
    const char *rule = loams_schema_compat_name(s->compat);
    uint32_t newest = s->versions[s->nversions - 1].version;
    uint32_t cand_version = only != 0 ? 0 : newest + 1;
    int found = 0;
    /* newest first: the message names the closest version that breaks */
    for (size_t i = s->nversions; i-- > 0;) {
        const loams_schema_version *v = &s->versions[i];
        if (only != 0 ? v->version != only : (!transitive && i + 1 != s->nversions)) {
            continue;
        }
        found = 1;
        char *text = NULL;
        size_t len = 0;
        int rc = loams_schema_get_by_id(m, v->id, NULL, &text, &len, err);
        if (rc != 0) {
            return rc;
        }
        loams_kit_avro_schema *old = NULL;
        loams_kit_err e;
        rc = loams_kit_avro_schema_parse(NULL, text, len, &old, &e);
        free(text);
        if (rc != 0) {
            if (err != NULL) {
                snprintf(err->msg, sizeof err->msg,
                         "the stored schema %" PRIu32 " is damaged: %.400s", v->id, e.msg);
            }
            return rc == -ENOMEM ? rc : LOAMS_ECORRUPT;
        }
        loams_kit_avro_mismatch mm;
        const loams_kit_avro_node *o = loams_kit_avro_schema_root(old);
        const loams_kit_avro_node *c = loams_kit_avro_schema_root(cand);
        char lead[512], newname[32];
        if (cand_version != 0) {
            snprintf(newname, sizeof newname, "version %" PRIu32, cand_version);
        } else {
            snprintf(newname, sizeof newname, "the new schema");
        }
        int bad = 0;
        if (backward && !loams_kit_avro_resolvable(o, c, &mm)) {
            phrase(&mm, 1, lead, sizeof lead);
            snprintf(why, whylen,
                     "%s breaks %s: readers of %s cannot read data written with version %" PRIu32,
                     lead, rule, newname, v->version);
            bad = 1;
        } else if (forward && !loams_kit_avro_resolvable(c, o, &mm)) {
            phrase(&mm, 0, lead, sizeof lead);
            snprintf(why, whylen,
                     "%s breaks %s: readers of version %" PRIu32
                     " cannot read data written with %s",
                     lead, rule, v->version, newname);
            bad = 1;
        }
        loams_kit_avro_schema_free(old);
        if (bad) {
            return LOAMS_ESCHEMA;
        }
    }
    if (only != 0 && !found) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "subject %s.%s has no version %" PRIu32, s->name.ns,
                     s->name.name, only);
        }
        return LOAMS_ENOTFOUND;
    }
    return 0;
}

/* check_avro for PROTOBUF subjects: the Confluent rules
 * (loams_kit_pb_compatible), the new schema as the update of the old one
 * (BACKWARD) or the old as the update of the new (FORWARD). */
static int check_protobuf(loams_meta *m, const loams_schema_subject *s, uint32_t only,
                          const char *cand_text, size_t cand_len, char *why, size_t whylen,
                          loams_meta_err *err)
{
    if (s->nversions == 0 || s->compat == LOAMS_COMPAT_NONE) {
        return 0;
    }
    loams_kit_err e;
    loams_kit_pb_schema *cand = NULL;
    int rc = loams_kit_pb_schema_parse(NULL, cand_text, cand_len, &cand, &e);
    if (rc != 0) {
        snprintf(why, whylen, "not a valid Protobuf schema: %s", e.msg);
        return rc;
    }
    int transitive = s->compat == LOAMS_COMPAT_BACKWARD_TRANSITIVE ||
                     s->compat == LOAMS_COMPAT_FORWARD_TRANSITIVE ||
                     s->compat == LOAMS_COMPAT_FULL_TRANSITIVE;
    int backward =
        s->compat != LOAMS_COMPAT_FORWARD && s->compat != LOAMS_COMPAT_FORWARD_TRANSITIVE;
    int forward =
        s->compat != LOAMS_COMPAT_BACKWARD && s->compat != LOAMS_COMPAT_BACKWARD_TRANSITIVE;
    const char *rule = loams_schema_compat_name(s->compat);
    uint32_t newest = s->versions[s->nversions - 1].version;
    char newname[32];
    if (only != 0) {
        snprintf(newname, sizeof newname, "the new schema");
    } else {
        snprintf(newname, sizeof newname, "version %" PRIu32, newest + 1);
    }
    int found = 0;
    for (size_t i = s->nversions; rc == 0 && i-- > 0;) {
        const loams_schema_version *v = &s->versions[i];
        if (only != 0 ? v->version != only : (!transitive && i + 1 != s->nversions)) {
            continue;
        }
        found = 1;
        char *text = NULL;
        size_t len = 0;
        if ((rc = loams_schema_get_by_id(m, v->id, NULL, &text, &len, err)) != 0) {
            break;
        }
        loams_kit_pb_schema *old = NULL;
        rc = loams_kit_pb_schema_parse(NULL, text, len, &old, &e);
        free(text);
        if (rc != 0) {
            if (err != NULL) {
                snprintf(err->msg, sizeof err->msg,
                         "the stored schema %" PRIu32 " is damaged: %.400s", v->id, e.msg);
            }
            rc = rc == -ENOMEM ? rc : LOAMS_ECORRUPT;
            break;
        }
        loams_kit_pb_diff d;
        if (backward && !loams_kit_pb_compatible(old, cand, &d)) {
            snprintf(why, whylen,
                     "'%s': %s (%s) breaks %s: readers of %s cannot read data written with "
                     "version %" PRIu32,
                     d.path, d.what, d.rule, rule, newname, v->version);
            rc = LOAMS_ESCHEMA;
        } else if (forward && !loams_kit_pb_compatible(cand, old, &d)) {
            snprintf(why, whylen,
                     "'%s': %s (%s) breaks %s: readers of version %" PRIu32
                     " cannot read data written with %s",
                     d.path, d.what, d.rule, rule, v->version, newname);
            rc = LOAMS_ESCHEMA;
        }
        loams_kit_pb_schema_free(old);
    }
    loams_kit_pb_schema_free(cand);
    if (rc == 0 && only != 0 && !found) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "subject %s.%s has no version %" PRIu32, s->name.ns,
                     s->name.name, only);
        }
        return LOAMS_ENOTFOUND;
    }
    return rc;
}

/* Reads an optional key's value and version (0 and NULL when missing). */
static int read_opt(loams_meta *m, const char *key, loams_meta_kv *kv, loams_meta_err *err)
{
    memset(kv, 0, sizeof *kv);
    int rc = loams_meta_get(m, key, strlen(key), kv, err);
    if (rc == LOAMS_ENOTFOUND) {
        memset(kv, 0, sizeof *kv);
        return 0;
    }
    return rc;
}

/* One attempt; LOAMS_ECONFLICT when a key changed since it was read. */
static int register_once(loams_meta *m, const loams_objname *name, loams_schema_register_mode mode,
                         loams_schema_format format, loams_schema_compat compat, const char *norm,
                         const loams_kit_avro_schema *avro, loams_schema_registered *out, char *why,
                         size_t whylen, loams_meta_err *err)
{
    char skey[LOAMS_META_KEY_MAX + 1], hkey[128], ikey[64];
    subject_key(name, skey, sizeof skey);
    int rc = hash_key(format, norm, hkey, sizeof hkey);
    if (rc != 0) {
        return rc;
    }
    loams_meta_kv skv, hkv, nkv;
    memset(&hkv, 0, sizeof hkv);
    memset(&nkv, 0, sizeof nkv);
    loams_schema_subject s;
    memset(&s, 0, sizeof s);
    char *subject_json = NULL, *id_json = NULL;
    if ((rc = read_opt(m, skey, &skv, err)) != 0) {
        return rc;
    }
    if (skv.version != 0) {
        if (mode == LOAMS_SCHEMA_CREATE) {
            snprintf(why, whylen,
                     "schema subject %s.%s already exists (add a version with ALTER SCHEMA %s.%s "
                     "ADD VERSION, or use IF NOT EXISTS)",
                     name->ns, name->name, name->ns, name->name);
            rc = LOAMS_EEXISTS;
            goto out;
        }
        s.name = *name;
        if ((rc = subject_from_json(skv.value, skv.value_len, &s)) != 0) {
            goto out;
        }
        if (s.format != format) {
            snprintf(why, whylen, "schema subject %s.%s holds %s schemas, not %s", name->ns,
                     name->name, loams_schema_format_name(s.format),
                     loams_schema_format_name(format));
            rc = LOAMS_EINPUT;
            goto out;
        }
    } else if (mode == LOAMS_SCHEMA_ADD_VERSION) {
        snprintf(why, whylen,
                 "schema subject %s.%s does not exist (create it with CREATE SCHEMA %s.%s FORMAT "
                 "%s AS $$ ... $$)",
                 name->ns, name->name, name->ns, name->name, loams_schema_format_name(format));
        rc = LOAMS_ENOTFOUND;
        goto out;
    } else {
        s.name = *name;
        s.format = format;
        s.compat = compat;
    }
    if ((rc = read_opt(m, hkey, &hkv, err)) != 0 ||
        (rc = read_opt(m, NEXT_ID_KEY, &nkv, err)) != 0) {
        goto out;
    }
    uint32_t id = 0;
    if (hkv.version != 0) {
        id = (uint32_t)strtoul(hkv.value, NULL, 10);
        for (size_t i = 0; i < s.nversions; i++) {
            if (s.versions[i].id == id) {
                out->id = id;
                out->version = s.versions[i].version;
                out->existed = 1;
                rc = 0;
                goto out;
            }
        }
    }
    if (avro != NULL && (rc = check_avro(m, &s, 0, avro, why, whylen, err)) != 0) {
        goto out;
    }
    if (format == LOAMS_SCHEMA_PROTOBUF &&
        (rc = check_protobuf(m, &s, 0, norm, strlen(norm), why, whylen, err)) != 0) {
        goto out;
    }
    uint32_t next = nkv.version != 0 ? (uint32_t)strtoul(nkv.value, NULL, 10) : 1;
    if (next == 0) {
        next = 1;
    }
    loams_schema_version add = {
        .version = s.nversions > 0 ? s.versions[s.nversions - 1].version + 1 : 1,
        .id = id != 0 ? id : next,
    };
    char next_text[16], id_text[16];
    snprintf(next_text, sizeof next_text, "%" PRIu32, next + 1);
    snprintf(id_text, sizeof id_text, "%" PRIu32, add.id);
    id_key(add.id, ikey, sizeof ikey);
    subject_json = subject_to_json(&s, &add);
    cJSON *ij = cJSON_CreateObject();
    if (ij != NULL && cJSON_AddStringToObject(ij, "format", loams_schema_format_name(format)) &&
        cJSON_AddStringToObject(ij, "schema", norm)) {
        id_json = cJSON_PrintUnformatted(ij);
    }
    cJSON_Delete(ij);
    if (subject_json == NULL || id_json == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    loams_meta_compare cmps[3] = {
        {.kind = LOAMS_CMP_VERSION, .key = skey, .key_len = strlen(skey), .version = skv.version},
        {.kind = LOAMS_CMP_VERSION, .key = hkey, .key_len = strlen(hkey), .version = hkv.version},
        {.kind = LOAMS_CMP_VERSION,
         .key = NEXT_ID_KEY,
         .key_len = strlen(NEXT_ID_KEY),
         .version = nkv.version},
    };
    loams_meta_write ws[4] = {
        {.kind = LOAMS_OP_PUT,
         .key = skey,
         .key_len = strlen(skey),
         .value = subject_json,
         .value_len = strlen(subject_json)},
        {.kind = LOAMS_OP_PUT,
         .key = ikey,
         .key_len = strlen(ikey),
         .value = id_json,
         .value_len = strlen(id_json)},
        {.kind = LOAMS_OP_PUT,
         .key = hkey,
         .key_len = strlen(hkey),
         .value = id_text,
         .value_len = strlen(id_text)},
        {.kind = LOAMS_OP_PUT,
         .key = NEXT_ID_KEY,
         .key_len = strlen(NEXT_ID_KEY),
         .value = next_text,
         .value_len = strlen(next_text)},
    };
    /* a known schema keeps its id: only the subject changes */
    rc = loams_meta_txn(m, cmps, 3, ws, id != 0 ? 1 : 4, NULL, err);
    if (rc == 0) {
        out->id = add.id;
        out->version = add.version;
        out->existed = 0;
    }
out:
    free(subject_json);
    free(id_json);
    loams_schema_subject_clear(&s);
    loams_meta_kv_free(&skv);
    loams_meta_kv_free(&hkv);
    loams_meta_kv_free(&nkv);
    return rc;
}

int loams_schema_register(loams_meta *m, const loams_objname *name, loams_schema_register_mode mode,
                          loams_schema_format format, loams_schema_compat compat, const char *text,
                          size_t len, loams_schema_registered *out, char *why, size_t whylen,
                          loams_meta_err *err)
{
    memset(out, 0, sizeof *out);
    if (whylen > 0) {
        why[0] = '\0';
    }
    char *norm = NULL;
    int rc = normalise(format, text, len, &norm, why, whylen);
    if (rc != 0) {
        return rc;
    }
    loams_kit_avro_schema *avro = NULL;
    if (format == LOAMS_SCHEMA_AVRO) {
        loams_kit_err e;
        if ((rc = loams_kit_avro_schema_parse(NULL, norm, strlen(norm), &avro, &e)) != 0) {
            snprintf(why, whylen, "not a valid Avro schema: %s", e.msg);
            free(norm);
            return rc;
        }
    }
    for (int attempt = 0; attempt < REGISTER_TRIES; attempt++) {
        rc = register_once(m, name, mode, format, compat, norm, avro, out, why, whylen, err);
        if (rc != LOAMS_ECONFLICT) {
            break;
        }
    }
    if (rc == LOAMS_ECONFLICT) {
        snprintf(why, whylen, "schema subject %s.%s kept changing while registering; try again",
                 name->ns, name->name);
    }
    loams_kit_avro_schema_free(avro);
    free(norm);
    return rc;
}

int loams_schema_lookup(loams_meta *m, const loams_objname *name, loams_schema_format format,
                        const char *text, size_t len, loams_schema_version *out, char *why,
                        size_t whylen, loams_meta_err *err)
{
    memset(out, 0, sizeof *out);
    if (whylen > 0) {
        why[0] = '\0';
    }
    loams_schema_subject s;
    int rc = loams_schema_subject_get(m, name, &s, err);
    if (rc != 0) {
        return rc;
    }
    char *norm = NULL;
    char hkey[128];
    loams_meta_kv hkv;
    memset(&hkv, 0, sizeof hkv);
    if ((rc = normalise(format, text, len, &norm, why, whylen)) != 0 ||
        (rc = hash_key(format, norm, hkey, sizeof hkey)) != 0 ||
        (rc = read_opt(m, hkey, &hkv, err)) != 0) {
        goto out;
    }
    rc = LOAMS_ENOTFOUND;
    uint32_t id = hkv.version != 0 ? (uint32_t)strtoul(hkv.value, NULL, 10) : 0;
    for (size_t i = 0; id != 0 && i < s.nversions; i++) {
        if (s.versions[i].id == id) {
            *out = s.versions[i];
            rc = 0;
        }
    }
    if (rc == LOAMS_ENOTFOUND) {
        snprintf(why, whylen, "schema subject %s.%s has no version with this schema", name->ns,
                 name->name);
    }
out:
    loams_meta_kv_free(&hkv);
    free(norm);
    loams_schema_subject_clear(&s);
    return rc;
}

int loams_schema_check(loams_meta *m, const loams_objname *name, uint32_t version, const char *text,
                       size_t len, char *why, size_t whylen, loams_meta_err *err)
{
    loams_schema_subject s;
    int rc = loams_schema_subject_get(m, name, &s, err);
    if (rc != 0) {
        return rc;
    }
    if (s.format == LOAMS_SCHEMA_PROTOBUF) {
        rc = check_protobuf(m, &s, version, text, len, why, whylen, err);
        loams_schema_subject_clear(&s);
        return rc;
    }
    if (s.format != LOAMS_SCHEMA_AVRO) {
        loams_schema_subject_clear(&s);
        return 0;
    }
    loams_kit_avro_schema *avro = NULL;
    loams_kit_err e;
    if ((rc = loams_kit_avro_schema_parse(NULL, text, len, &avro, &e)) != 0) {
        snprintf(why, whylen, "not a valid Avro schema: %s", e.msg);
    } else {
        rc = check_avro(m, &s, version, avro, why, whylen, err);
    }
    loams_kit_avro_schema_free(avro);
    loams_schema_subject_clear(&s);
    return rc;
}

int loams_schema_set_compat(loams_meta *m, const loams_objname *name, loams_schema_compat compat,
                            loams_meta_err *err)
{
    char key[LOAMS_META_KEY_MAX + 1];
    subject_key(name, key, sizeof key);
    for (int attempt = 0; attempt < REGISTER_TRIES; attempt++) {
        loams_meta_kv kv;
        memset(&kv, 0, sizeof kv);
        int rc = loams_meta_get(m, key, strlen(key), &kv, err);
        if (rc == LOAMS_ENOTFOUND && err != NULL) {
            snprintf(err->msg, sizeof err->msg, "schema subject %s.%s does not exist", name->ns,
                     name->name);
        }
        if (rc != 0) {
            return rc;
        }
        loams_schema_subject s;
        memset(&s, 0, sizeof s);
        rc = subject_from_json(kv.value, kv.value_len, &s);
        uint64_t version = kv.version;
        loams_meta_kv_free(&kv);
        if (rc != 0) {
            loams_schema_subject_clear(&s);
            return rc;
        }
        s.compat = compat;
        char *json = subject_to_json(&s, NULL);
        loams_schema_subject_clear(&s);
        if (json == NULL) {
            return -ENOMEM;
        }
        loams_meta_compare cmp = {
            .kind = LOAMS_CMP_VERSION, .key = key, .key_len = strlen(key), .version = version};
        loams_meta_write w = {.kind = LOAMS_OP_PUT,
                              .key = key,
                              .key_len = strlen(key),
                              .value = json,
                              .value_len = strlen(json)};
        rc = loams_meta_txn(m, &cmp, 1, &w, 1, NULL, err);
        free(json);
        if (rc != LOAMS_ECONFLICT) {
            return rc;
        }
    }
    return LOAMS_ECONFLICT;
}

int loams_schema_drop(loams_meta *m, const loams_objname *name, loams_meta_err *err)
{
    char key[LOAMS_META_KEY_MAX + 1];
    subject_key(name, key, sizeof key);
    loams_meta_kv kv;
    memset(&kv, 0, sizeof kv);
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc == LOAMS_ENOTFOUND && err != NULL) {
        snprintf(err->msg, sizeof err->msg, "schema subject %s.%s does not exist", name->ns,
                 name->name);
    }
    if (rc != 0) {
        return rc;
    }
    loams_meta_compare cmp = {
        .kind = LOAMS_CMP_VERSION, .key = key, .key_len = strlen(key), .version = kv.version};
    loams_meta_kv_free(&kv);
    loams_meta_write w = {.kind = LOAMS_OP_DELETE, .key = key, .key_len = strlen(key)};
    rc = loams_meta_txn(m, &cmp, 1, &w, 1, NULL, err);
    if (rc == LOAMS_ECONFLICT && err != NULL) {
        snprintf(err->msg, sizeof err->msg,
                 "schema subject %s.%s changed while it was being dropped; try again", name->ns,
                 name->name);
    }
    return rc;
}

int loams_schema_subject_user(loams_meta *m, const loams_objname *name, char *link, size_t size,
                              loams_meta_err *err)
{
    loams_link_def *defs = NULL;
    size_t n = 0;
    int rc = loams_link_list(m, &defs, &n, err);
    if (rc != 0) {
        return rc;
    }
    rc = LOAMS_ENOTFOUND;
    for (size_t i = 0; i < n && rc != 0; i++) {
        const loams_link_options *o = &defs[i].decoder_options;
        for (size_t k = 0; k < o->count; k++) {
            loams_objname used;
            if (strcmp(o->items[k].name, "subject") == 0 &&
                loams_subject_parse(o->items[k].value, &used, NULL, 0) == 0 &&
                strcmp(used.ns, name->ns) == 0 && strcmp(used.name, name->name) == 0) {
                snprintf(link, size, "%s.%s", defs[i].name.ns, defs[i].name.name);
                rc = 0;
                break;
            }
        }
    }
    loams_link_defs_free(defs, n);
    return rc;
}
