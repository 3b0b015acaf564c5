/*
 * token.c - owns the bearer tokens: their syntax, their records in the
 * metastore (token/<id>) and the check of a presented one (see token.h).
 */
#include "http/token.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "loams/kit/base64.h"
#include "loams/kit/json_tree.h"

static const char *const role_names[] = {"none", "read", "write", "admin"};

const char *loams_token_role_name(loams_token_role role)
{
    return (unsigned)role <= LOAMS_TOKEN_ADMIN ? role_names[role] : "none";
}

int loams_token_role_parse(const char *text, loams_token_role *out)
{
    for (int r = LOAMS_TOKEN_READ; r <= LOAMS_TOKEN_ADMIN; r++) {
        if (text != NULL && strcmp(text, role_names[r]) == 0) {
            *out = (loams_token_role)r;
            return 0;
        }
    }
    return LOAMS_EINPUT;
}

static int is_hex_lower(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int is_b64url(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_';
}

int loams_token_parse(const char *text, size_t len, char *id)
{
    if (text == NULL || len != LOAMS_TOKEN_TEXT_LEN || memcmp(text, "loams_", 6) != 0 ||
        text[6 + LOAMS_TOKEN_ID_LEN] != '_') {
        return LOAMS_EINPUT;
    }
    for (size_t i = 0; i < LOAMS_TOKEN_ID_LEN; i++) {
        if (!is_hex_lower(text[6 + i])) {
            return LOAMS_EINPUT;
        }
    }
    for (size_t i = 6 + LOAMS_TOKEN_ID_LEN + 1; i < len; i++) {
        if (!is_b64url(text[i])) {
            return LOAMS_EINPUT;
        }
    }
    memcpy(id, text + 6, LOAMS_TOKEN_ID_LEN);
    id[LOAMS_TOKEN_ID_LEN] = '\0';
    return 0;
}

int loams_token_from_bearer(const char *header, const char **token, size_t *len)
{
    if (header == NULL) {
        return LOAMS_EINPUT;
    }
    const char *p = header;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (strncasecmp(p, "bearer", 6) != 0 || (p[6] != ' ' && p[6] != '\t')) {
        return LOAMS_EINPUT;
    }
    p += 6;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    size_t n = strlen(p);
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) {
        n--;
    }
    if (n == 0) {
        return LOAMS_EINPUT;
    }
    *token = p;
    *len = n;
    return 0;
}

int loams_token_from_basic(const char *header, char *out, size_t size)
{
    if (header == NULL || size == 0) {
        return LOAMS_EINPUT;
    }
    out[0] = '\0';
    const char *p = header;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (strncasecmp(p, "basic", 5) != 0 || (p[5] != ' ' && p[5] != '\t')) {
        return LOAMS_EINPUT;
    }
    p += 5;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    size_t n = strlen(p);
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) {
        n--;
    }
    /* user:password fits in 3/4 of its base64; more than 4 * size is
     * surely too long */
    unsigned char plain[1024];
    size_t plain_len = 0, bad_at;
    if (n == 0 || n > 4 * sizeof plain / 3 - 4 ||
        loams_kit_base64_decode(p, n, plain, &plain_len, &bad_at) != 0) {
        return LOAMS_EINPUT;
    }
    const unsigned char *colon = memchr(plain, ':', plain_len);
    size_t off = colon != NULL ? (size_t)(colon - plain) + 1 : 0;
    int rc = LOAMS_EINPUT;
    if (colon != NULL && plain_len - off < size &&
        memchr(plain + off, '\0', plain_len - off) == NULL) {
        memcpy(out, plain + off, plain_len - off);
        out[plain_len - off] = '\0';
        rc = 0;
    }
    OPENSSL_cleanse(plain, sizeof plain);
    return rc;
}

int loams_token_hash(const char *text, size_t len, uint8_t out[32])
{
    unsigned int n = 0;
    if (EVP_Digest(text, len, out, &n, EVP_sha256(), NULL) != 1 || n != 32) {
        return -EIO;
    }
    return 0;
}

static void hex_encode(const uint8_t *p, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[p[i] >> 4];
        out[2 * i + 1] = hex[p[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hex_decode(const char *text, uint8_t *out, size_t n)
{
    if (strlen(text) != 2 * n) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = text[2 * i + (size_t)k];
            if (!is_hex_lower(c)) {
                return -1;
            }
            v = v * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
        }
        out[i] = (uint8_t)v;
    }
    return 0;
}

/* base64url without padding: 32 bytes give 43 characters. */
static void b64url_encode(const uint8_t *p, size_t n, char *out)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        size_t left = n - i;
        if (left > 1) {
            v |= (uint32_t)p[i + 1] << 8;
        }
        if (left > 2) {
            v |= p[i + 2];
        }
        out[o++] = al[(v >> 18) & 63];
        out[o++] = al[(v >> 12) & 63];
        if (left > 1) {
            out[o++] = al[(v >> 6) & 63];
        }
        if (left > 2) {
            out[o++] = al[v & 63];
        }
    }
    out[o] = '\0';
}

static char *encode_record(const loams_token_info *t)
{
    char hash[65];
    hex_encode(t->sha256, 32, hash);
    cJSON *o = cJSON_CreateObject();
    if (o == NULL || cJSON_AddStringToObject(o, "id", t->id) == NULL ||
        cJSON_AddStringToObject(o, "namespace", t->ns) == NULL ||
        cJSON_AddStringToObject(o, "role", loams_token_role_name(t->role)) == NULL ||
        cJSON_AddStringToObject(o, "sha256", hash) == NULL ||
        loams_kit_json_tree_put_int(o, "created_ms", t->created_ms) != 0 ||
        loams_kit_json_tree_put_int(o, "expires_ms", t->expires_ms) != 0) {
        cJSON_Delete(o);
        return NULL;
    }
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

int loams_token_decode(const char *json, size_t len, loams_token_info *out)
{
    memset(out, 0, sizeof *out);
    cJSON *o = NULL;
    int prc = loams_kit_json_tree_parse(json, len, &o, NULL);
    if (prc != 0) {
        return prc == -ENOMEM ? prc : LOAMS_ECORRUPT;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(o, "namespace");
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(o, "role");
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(o, "sha256");
    const cJSON *created = cJSON_GetObjectItemCaseSensitive(o, "created_ms");
    const cJSON *expires = cJSON_GetObjectItemCaseSensitive(o, "expires_ms");
    int rc = LOAMS_ECORRUPT;
    if (cJSON_IsString(id) && strlen(id->valuestring) == LOAMS_TOKEN_ID_LEN && cJSON_IsString(ns) &&
        strlen(ns->valuestring) <= LOAMS_IDENT_MAX && cJSON_IsString(role) &&
        loams_token_role_parse(role->valuestring, &out->role) == 0 && cJSON_IsString(hash) &&
        hex_decode(hash->valuestring, out->sha256, 32) == 0 &&
        loams_kit_json_tree_int(created, &out->created_ms) == 0 &&
        loams_kit_json_tree_int(expires, &out->expires_ms) == 0) {
        snprintf(out->id, sizeof out->id, "%s", id->valuestring);
        snprintf(out->ns, sizeof out->ns, "%s", ns->valuestring);
        rc = 0;
    }
    cJSON_Delete(o);
    return rc;
}

int loams_token_create(loams_meta *meta, const char *ns, loams_token_role role, int64_t now_ms,
                       int64_t expires_ms, char *text, loams_token_info *info, char *err,
                       size_t errlen)
{
    loams_token_info t;
    memset(&t, 0, sizeof t);
    if (ns == NULL || strcmp(ns, "*") != 0) {
        loams_objname check;
        char msg[256];
        if (ns == NULL || loams_objname_set(&check, ns, "x", msg, sizeof msg) != 0) {
            snprintf(err, errlen,
                     "the namespace '%s' is not an identifier (letters, digits and "
                     "'_', not starting with a digit) nor '*' (every namespace)",
                     ns != NULL ? ns : "");
            return LOAMS_EINPUT;
        }
        snprintf(t.ns, sizeof t.ns, "%s", check.ns);
    } else {
        snprintf(t.ns, sizeof t.ns, "*");
    }
    if (role < LOAMS_TOKEN_READ || role > LOAMS_TOKEN_ADMIN) {
        snprintf(err, errlen, "the role must be read, write or admin");
        return LOAMS_EINPUT;
    }
    if (expires_ms != 0 && expires_ms <= now_ms) {
        snprintf(err, errlen, "the token would expire before it is made");
        return LOAMS_EINPUT;
    }
    uint8_t id_bytes[LOAMS_TOKEN_ID_LEN / 2], secret[32];
    if (RAND_bytes(id_bytes, sizeof id_bytes) != 1 || RAND_bytes(secret, sizeof secret) != 1) {
        snprintf(err, errlen, "the system's random number generator failed (OpenSSL RAND_bytes)");
        return -EIO;
    }
    hex_encode(id_bytes, sizeof id_bytes, t.id);
    char secret_text[LOAMS_TOKEN_SECRET_LEN + 1];
    b64url_encode(secret, sizeof secret, secret_text);
    OPENSSL_cleanse(secret, sizeof secret);
    snprintf(text, LOAMS_TOKEN_TEXT_LEN + 1, "loams_%s_%s", t.id, secret_text);
    OPENSSL_cleanse(secret_text, sizeof secret_text);
    int rc = loams_token_hash(text, LOAMS_TOKEN_TEXT_LEN, t.sha256);
    if (rc != 0) {
        snprintf(err, errlen, "SHA-256 failed (OpenSSL)");
        OPENSSL_cleanse(text, LOAMS_TOKEN_TEXT_LEN + 1);
        return rc;
    }
    t.role = role;
    t.created_ms = now_ms;
    t.expires_ms = expires_ms;
    char *record = encode_record(&t);
    if (record == NULL) {
        snprintf(err, errlen, "out of memory");
        OPENSSL_cleanse(text, LOAMS_TOKEN_TEXT_LEN + 1);
        return -ENOMEM;
    }
    char key[64];
    snprintf(key, sizeof key, LOAMS_TOKEN_KEY_PREFIX "%s", t.id);
    /* a new id: never overwrite another token's record */
    loams_meta_compare absent = {.kind = LOAMS_CMP_ABSENT, .key = key, .key_len = strlen(key)};
    loams_meta_write put = {.kind = LOAMS_OP_PUT,
                            .key = key,
                            .key_len = strlen(key),
                            .value = record,
                            .value_len = strlen(record)};
    loams_meta_err merr;
    rc = loams_meta_txn(meta, &absent, 1, &put, 1, NULL, &merr);
    free(record);
    if (rc != 0) {
        snprintf(err, errlen, "%s",
                 rc == LOAMS_ECONFLICT ? "a token with this id exists (try again)" : merr.msg);
        OPENSSL_cleanse(text, LOAMS_TOKEN_TEXT_LEN + 1);
        return rc;
    }
    if (info != NULL) {
        *info = t;
    }
    return 0;
}

int loams_token_verify(loams_meta *meta, const char *text, size_t len, int64_t now_ms,
                       loams_token_check *check, loams_token_info *info, loams_meta_err *err)
{
    /* compared when the id is unknown, so that both ways take one hash and
     * one comparison */
    static const uint8_t nothing[32] = {0};
    char id[LOAMS_TOKEN_ID_LEN + 1];
    loams_token_info t;
    memset(&t, 0, sizeof t);
    if (loams_token_parse(text, len, id) != 0) {
        *check = LOAMS_TOKEN_MALFORMED;
        return 0;
    }
    char key[64];
    snprintf(key, sizeof key, LOAMS_TOKEN_KEY_PREFIX "%s", id);
    loams_meta_kv kv = {0};
    int rc = loams_meta_get(meta, key, strlen(key), &kv, err);
    int known = 0;
    if (rc == 0) {
        known = loams_token_decode(kv.value, kv.value_len, &t) == 0 && strcmp(t.id, id) == 0;
        loams_meta_kv_free(&kv);
    } else if (rc != LOAMS_ENOTFOUND) {
        return rc;
    }
    uint8_t hash[32];
    if ((rc = loams_token_hash(text, len, hash)) != 0) {
        return rc;
    }
    int same = CRYPTO_memcmp(hash, known ? t.sha256 : nothing, 32) == 0;
    if (!known || !same) {
        *check = LOAMS_TOKEN_UNKNOWN;
        return 0;
    }
    *check = t.expires_ms != 0 && now_ms >= t.expires_ms ? LOAMS_TOKEN_EXPIRED : LOAMS_TOKEN_OK;
    if (info != NULL) {
        *info = t;
    }
    return 0;
}

int loams_token_list(loams_meta *meta, loams_token_info **out, size_t *n, loams_meta_err *err)
{
    *out = NULL;
    *n = 0;
    loams_token_info *list = NULL;
    size_t count = 0, cap = 0;
    char after[64] = "";
    for (;;) {
        loams_meta_range_result r;
        int rc = loams_meta_range_prefix(meta, LOAMS_TOKEN_KEY_PREFIX, after[0] ? after : NULL, 0,
                                         &r, err);
        if (rc != 0) {
            free(list);
            return rc;
        }
        for (size_t i = 0; i < r.count; i++) {
            if (count == cap) {
                size_t nc = cap ? cap * 2 : 16;
                loams_token_info *grown = realloc(list, nc * sizeof *grown);
                if (grown == NULL) {
                    loams_meta_range_free(&r);
                    free(list);
                    return -ENOMEM;
                }
                list = grown;
                cap = nc;
            }
            if (loams_token_decode(r.kvs[i].value, r.kvs[i].value_len, &list[count]) == 0) {
                count++;
            }
        }
        int more = r.more && r.count > 0;
        if (more) {
            snprintf(after, sizeof after, "%s", r.kvs[r.count - 1].key);
        }
        loams_meta_range_free(&r);
        if (!more) {
            break;
        }
    }
    *out = list;
    *n = count;
    return 0;
}

int loams_token_revoke(loams_meta *meta, const char *id, loams_meta_err *err)
{
    char key[64];
    if (id == NULL || strlen(id) != LOAMS_TOKEN_ID_LEN) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg,
                     "'%.40s' is not a token id (16 hex digits, as 'loams-host token list' "
                     "shows)",
                     id != NULL ? id : "");
        }
        return LOAMS_EINPUT;
    }
    snprintf(key, sizeof key, LOAMS_TOKEN_KEY_PREFIX "%s", id);
    /* says so when the id is wrong, rather than deleting nothing */
    loams_meta_kv kv = {0};
    int rc = loams_meta_get(meta, key, strlen(key), &kv, err);
    loams_meta_kv_free(&kv);
    if (rc == LOAMS_ENOTFOUND && err != NULL) {
        snprintf(err->msg, sizeof err->msg, "no token has the id %s (see 'loams-host token list')",
                 id);
    }
    return rc != 0 ? rc : loams_meta_delete(meta, key, strlen(key), err);
}
