/*
 * token.h - the bearer tokens of the HTTP API: made by `loams-host token
 * create`, checked on every request (docs/HTTP.md, "Tokens").
 *
 * A token reads
 *
 *   loams_<id>_<secret>
 *
 * where <id> is 16 hex digits (8 random bytes) that name the token in
 * `token list` and `token revoke`, and <secret> is 43 base64url characters
 * (32 random bytes).  Both come from OpenSSL's CSPRNG (RAND_bytes).  The
 * token is shown once, when it is made; the metastore keeps only its
 * SHA-256 (of the whole text), under
 *
 *   token/<id>   {"id": "...", "namespace": "ns" | "*", "role": "read",
 *                 "sha256": "<64 hex digits>", "created_ms": ...,
 *                 "expires_ms": ... (0: never)}
 *
 * A presented token is checked by reading token/<id> and comparing the
 * SHA-256 of the text with the one stored in constant time
 * (CRYPTO_memcmp); an unknown id is compared against a fixed hash all the
 * same, so the time does not say whether an id exists.  Nothing here logs
 * or copies a token's text into a message.
 *
 * Roles: read < write < admin; a role covers the ones below it.  A token
 * of namespace "*" covers every namespace.
 *
 * Errors: LOAMS_EINPUT (a malformed token or argument, with a message),
 * LOAMS_ENOTFOUND, the metastore's, -ENOMEM, -EIO (no random bytes).
 * Threads: any (the metastore's rules).
 */
#ifndef LOAMS_HTTP_TOKEN_H
#define LOAMS_HTTP_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "catalog/objname.h"
#include "meta/metastore.h"

#define LOAMS_TOKEN_ID_LEN 16
#define LOAMS_TOKEN_SECRET_LEN 43
/* "loams_" + id + "_" + secret */
#define LOAMS_TOKEN_TEXT_LEN (6 + LOAMS_TOKEN_ID_LEN + 1 + LOAMS_TOKEN_SECRET_LEN)
#define LOAMS_TOKEN_KEY_PREFIX "token/"

typedef enum loams_token_role {
    LOAMS_TOKEN_NONE = 0, /* no role (a route anyone may call) */
    LOAMS_TOKEN_READ = 1,
    LOAMS_TOKEN_WRITE = 2,
    LOAMS_TOKEN_ADMIN = 3
} loams_token_role;

/* "read", "write", "admin" ("none" for NONE). */
const char *loams_token_role_name(loams_token_role role);
/* Parses a role name.  LOAMS_EINPUT for anything else. */
int loams_token_role_parse(const char *text, loams_token_role *out);

/* A stored token (what token/<id> says). */
typedef struct loams_token_info {
    char id[LOAMS_TOKEN_ID_LEN + 1];
    char ns[LOAMS_IDENT_MAX + 1]; /* a namespace, or "*" */
    loams_token_role role;
    uint8_t sha256[32];
    int64_t created_ms;
    int64_t expires_ms; /* 0: never */
} loams_token_info;

/* Finds the id in text[0..len) when it has a token's syntax: 0 with the id
 * in id[LOAMS_TOKEN_ID_LEN + 1], or LOAMS_EINPUT. */
int loams_token_parse(const char *text, size_t len, char *id);

/* The token of an Authorization header value ("Bearer <token>", the
 * scheme in any case, blanks around the token allowed): 0 with *token and
 * *len pointing into `header`, or LOAMS_EINPUT (another scheme, no
 * token). */
int loams_token_from_bearer(const char *header, const char **token, size_t *len);

/* The password of an HTTP Basic Authorization header value ("Basic
 * <base64 of user:password>", the scheme in any case), which the schema
 * registry's clients send with the token as the password (the user name
 * is ignored): 0 with the password NUL-terminated in out[0..size), or
 * LOAMS_EINPUT (another scheme, not base64, no ':', a NUL, or longer than
 * size - 1).  The caller wipes out when done. */
int loams_token_from_basic(const char *header, char *out, size_t size);

/* SHA-256 of text[0..len) into out.  -EIO when OpenSSL fails. */
int loams_token_hash(const char *text, size_t len, uint8_t out[32]);

/* Makes a token: random id and secret, stored under token/<id> with
 * `ns` ("*" or a namespace, folded to lower case), `role`, created at
 * now_ms and expiring at expires_ms (0: never).  The text goes to
 * text[LOAMS_TOKEN_TEXT_LEN + 1] (the caller shows it once and forgets
 * it), the record to *info (may be NULL).  Errors: LOAMS_EINPUT (bad
 * namespace or role; err says which), -EIO (no random bytes), the
 * metastore's. */
int loams_token_create(loams_meta *meta, const char *ns, loams_token_role role, int64_t now_ms,
                       int64_t expires_ms, char *text, loams_token_info *info, char *err,
                       size_t errlen);

/* The outcome of a check. */
typedef enum loams_token_check {
    LOAMS_TOKEN_OK = 0,
    LOAMS_TOKEN_MALFORMED = 1, /* not a token's syntax */
    LOAMS_TOKEN_UNKNOWN = 2,   /* no such id, revoked, or the secret differs */
    LOAMS_TOKEN_EXPIRED = 3
} loams_token_check;

/* Checks text[0..len) at time now_ms: 0 with *check saying the outcome
 * (and *info the token's record when LOAMS_TOKEN_OK or _EXPIRED), or an
 * error of the metastore (then *check is not set). */
int loams_token_verify(loams_meta *meta, const char *text, size_t len, int64_t now_ms,
                       loams_token_check *check, loams_token_info *info, loams_meta_err *err);

/* Every stored token, in id order, into *out (the caller frees it with
 * free(); NULL when *n is 0). */
int loams_token_list(loams_meta *meta, loams_token_info **out, size_t *n, loams_meta_err *err);

/* Deletes token `id`.  Errors: LOAMS_ENOTFOUND (no such token). */
int loams_token_revoke(loams_meta *meta, const char *id, loams_meta_err *err);

/* Reads a record's JSON (the value of token/<id>), its integers exact.
 * Errors: LOAMS_ECORRUPT when it is not one, -ENOMEM. */
int loams_token_decode(const char *json, size_t len, loams_token_info *out);

#endif
