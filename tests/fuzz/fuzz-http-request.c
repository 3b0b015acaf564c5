/* fuzz-http-request.c - libFuzzer target for the parsing of an HTTP
 * request that core/http/ does itself (libmicrohttpd hands over the text):
 * the route match and its percent-decoded parameters (router.c), query
 * parameters, percent-decoding, media types (request.c), the Bearer and
 * Basic headers and the token syntax (token.c), the schema registry's
 * version segment (schema_registry.c), the listen address (listen_addr.c), and
 * the JSON strings of the error document (http_error.c), and the records
 * a produce body makes (core/stream/produce_batch.c).  The input is cut
 * at '\n' into: method, request target, Authorization, Content-Type,
 * listen address, and the rest is a body.  Besides "no crash, leak or out-of-bounds read", each
 * checks what can be checked: parameters lie in the scratch and are no
 * longer than the path; a match asked again gives the same answer; a
 * query value found with little room is found the same with more;
 * decoding what was re-encoded gives the bytes back; a bearer token lies
 * inside its header; a parsed listen address formats into one that parses
 * to the same; a JSON string of any bytes is valid JSON, and decodes to
 * the bytes themselves when they are well-formed UTF-8; a body's lines
 * make at most one record each, a refused one names a line that exists,
 * and what is kept is no more than the body holds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "http/http_api.h"
#include "http/listen_addr.h"
#include "http/router.h"
#include "http/schema_registry.h"
#include "http/token.h"
#include "stream/produce_batch.h"
#include "loams/kit/json_path.h"
#include "loams/kit/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "check failed: %s (line %d)\n", #cond, __LINE__);                      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void noop(const loams_http_request *req, loams_http_response *resp)
{
    (void)req;
    (void)resp;
}

/* Patterns with parameters in every position, besides the API's own. */
static const loams_http_route extra[] = {
    {LOAMS_HTTP_GET, "/t/{a}", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, 0, noop, "t1"},
    {LOAMS_HTTP_POST, "/t/{a}/x/{b}/{c}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 1, noop, "t2"},
    {LOAMS_HTTP_GET | LOAMS_HTTP_PUT, "/{a}/{b}/{c}/{d}", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1,
     noop, "t3"},
};

static loams_http_router *router(void)
{
    static loams_http_router *r;
    if (r == NULL) {
        if (loams_http_router_new(&r) != 0 || loams_http_api_routes(r) != 0 ||
            loams_http_router_add(r, extra, sizeof extra / sizeof extra[0]) != 0) {
            abort();
        }
    }
    return r;
}

static void check_match(const char *method, const char *target, size_t len)
{
    const char *q = memchr(target, '?', len);
    size_t path_len = q != NULL ? (size_t)(q - target) : len;
    size_t room = LOAMS_HTTP_MATCH_SCRATCH(path_len);
    char *s1 = malloc(room), *s2 = malloc(room);
    CHECK(s1 != NULL && s2 != NULL);
    loams_http_match m1, m2;
    unsigned bit = loams_http_method_bit(method);
    int r1 = loams_http_router_match(router(), bit, target, path_len, &m1, s1, room);
    int r2 = loams_http_router_match(router(), bit, target, path_len, &m2, s2, room);
    CHECK(r1 == r2);
    if (r1 == LOAMS_HTTP_MATCH_OK) {
        CHECK(m1.route == m2.route && m1.nparams == m2.nparams);
        CHECK(m1.route->methods & (bit == LOAMS_HTTP_HEAD ? LOAMS_HTTP_GET : bit));
        for (size_t i = 0; i < m1.nparams; i++) {
            size_t n = strlen(m1.params[i]);
            CHECK(m1.params[i] >= s1 && m1.params[i] + n < s1 + room);
            CHECK(n > 0 && n <= path_len);
            CHECK(strcmp(m1.params[i], m2.params[i]) == 0);
        }
    } else if (r1 == LOAMS_HTTP_MATCH_NO_METHOD) {
        CHECK(m1.allowed != 0);
    }
    if (q != NULL) {
        static const char *const names[] = {"partition", "from", "limit", "q", "k", "sql", ""};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            char small[8], big[4096];
            int a =
                loams_http_query_param(q + 1, len - path_len - 1, names[i], small, sizeof small);
            int b = loams_http_query_param(q + 1, len - path_len - 1, names[i], big, sizeof big);
            CHECK(a == 0 || a == 1 || a == LOAMS_EINPUT);
            if (a == 1) {
                CHECK(b == 1 && strcmp(small, big) == 0);
            }
            if (a == 0) {
                CHECK(b == 0);
            }
        }
    }
    free(s1);
    free(s2);
}

static void check_decode(const char *text, size_t len)
{
    char *out = malloc(len + 1), *enc = malloc(3 * len + 1), *back = malloc(3 * len + 1);
    CHECK(out != NULL && enc != NULL && back != NULL);
    size_t n, m;
    if (loams_http_pct_decode(text, len, 1, out, &n) == 0) {
        CHECK(n <= len && out[n] == '\0' && memchr(out, 0, n) == NULL);
        size_t e = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)out[i];
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '.' || c == '_' || c == '~') {
                enc[e++] = (char)c;
            } else {
                e += (size_t)snprintf(enc + e, 4, "%%%02X", c);
            }
        }
        CHECK(loams_http_pct_decode(enc, e, 0, back, &m) == 0);
        CHECK(m == n && memcmp(back, out, n) == 0);
    }
    free(out);
    free(enc);
    free(back);
}

static void check_bearer(const char *header)
{
    const char *t;
    size_t n;
    if (loams_token_from_bearer(header, &t, &n) == 0) {
        CHECK(t >= header && t + n <= header + strlen(header) && n > 0);
        char id[LOAMS_TOKEN_ID_LEN + 1];
        if (loams_token_parse(t, n, id) == 0) {
            CHECK(n == LOAMS_TOKEN_TEXT_LEN && strlen(id) == LOAMS_TOKEN_ID_LEN);
            CHECK(memcmp(t + 6, id, LOAMS_TOKEN_ID_LEN) == 0);
        }
    }
}

/* The Basic header's password: found the same with just enough room,
 * refused with one byte less, and no longer than the header could hold. */
static void check_basic(const char *header)
{
    char out[256], again[256];
    if (loams_token_from_basic(header, out, sizeof out) == 0) {
        size_t n = strlen(out);
        CHECK(n < sizeof out && n <= strlen(header));
        CHECK(loams_token_from_basic(header, again, n + 1) == 0 && strcmp(again, out) == 0);
        CHECK(loams_token_from_basic(header, again, n) == LOAMS_EINPUT);
    }
}

/* A registry version segment is latest (0) or 1..2^31-1, and prints back
 * as itself. */
static void check_version(const char *text)
{
    uint32_t v;
    if (loams_csr_version_parse(text, &v) == 0 && v != 0) {
        char back[16];
        snprintf(back, sizeof back, "%u", (unsigned)v);
        CHECK(v <= 2147483647u);
        const char *t = text;
        while (*t == '0' && t[1] != '\0') {
            t++;
        }
        CHECK(strcmp(back, t) == 0);
    }
}

static void check_media_type(const char *value)
{
    char t[16];
    loams_http_media_type(value, t, sizeof t);
    CHECK(strlen(t) < sizeof t && strchr(t, ';') == NULL && strchr(t, ' ') == NULL);
    for (const char *p = t; *p; p++) {
        CHECK(!(*p >= 'A' && *p <= 'Z'));
    }
}

static void check_listen(const char *text)
{
    loams_listen_addr a, b;
    char why[160], formatted[80];
    if (loams_listen_addr_parse(text, &a, why, sizeof why) == 0) {
        loams_listen_addr_format((const struct sockaddr *)&a.sa, formatted, sizeof formatted);
        CHECK(loams_listen_addr_parse(formatted, &b, why, sizeof why) == 0);
        CHECK(a.port == b.port && a.loopback == b.loopback && a.ipv6 == b.ipv6);
    } else {
        CHECK(why[0] != '\0');
    }
}

static void check_json_string(const uint8_t *data, size_t size)
{
    loams_buf *b;
    loams_kit_json_doc *doc;
    CHECK(loams_buf_create(&b) == 0 && loams_kit_json_doc_new(NULL, &doc) == 0);
    CHECK(loams_http_json_string(b, (const char *)data, size) == 0);
    size_t len;
    const char *json = loams_buf_data(b, &len);
    loams_kit_json_doc_reset(doc, json, len);
    loams_kit_json_value v;
    loams_kit_json_error err;
    CHECK(loams_kit_json_doc_root(doc, &v, &err) == 0 && v.kind == LOAMS_KIT_JSON_STRING);
    char *text = malloc(len + 1);
    size_t n;
    CHECK(text != NULL);
    CHECK(loams_kit_json_value_string(doc, &v, text, len + 1, &n, &err) == 0);
    if (loams_kit_utf8_valid_prefix(data, size) == size) {
        CHECK(n == size && memcmp(text, data, size) == 0);
    }
    free(text);
    loams_kit_json_doc_free(doc);
    loams_buf_free(b);
}

static void check_produce(const char *body, size_t len)
{
    static const loams_produce_options opts[] = {
        {.partition = -1},
        {.json = 1, .partition = -1},
        {.key_field = "id", .partition = -1},
        {.key_field = "id", .value_field = "v", .partition = -1},
        {.key_base64 = 1, .value_base64 = 1, .partition = -1},
        {.key = "k", .value_base64 = 1, .partition = 0},
    };
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) {
        lines += body[i] == '\n';
    }
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        loams_produce_batch *b;
        CHECK(loams_produce_batch_new(&opts[k], &b) == 0);
        uint64_t line = 0;
        size_t at = 0;
        char why[256] = "";
        int rc = loams_produce_batch_add_lines(b, body, len, &line, &at, why, sizeof why);
        CHECK(rc == 0 || rc == LOAMS_EINPUT);
        CHECK(loams_produce_batch_count(b) <= lines);
        /* a key is at most its line, a value at most its line */
        CHECK(loams_produce_batch_bytes(b) <= 2 * len + 2 * loams_produce_batch_count(b));
        if (rc == LOAMS_EINPUT) {
            CHECK(line >= 1 && line <= lines && why[0] != '\0');
        }
        loams_produce_batch_free(b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data, size);
    copy[size] = '\0';
    /* method \n target \n authorization \n content-type \n listen \n body */
    char *part[6] = {"", "", "", "", "", ""};
    size_t part_len[6] = {0, 0, 0, 0, 0, 0};
    char *p = copy;
    for (int i = 0; i < 6 && p <= copy + size; i++) {
        char *nl = i < 5 ? memchr(p, '\n', (size_t)(copy + size - p)) : NULL;
        part[i] = p;
        part_len[i] = nl != NULL ? (size_t)(nl - p) : (size_t)(copy + size - p);
        if (nl == NULL) {
            break;
        }
        *nl = '\0';
        p = nl + 1;
    }
    check_match(part[0], part[1], part_len[1]);
    check_decode(part[1], part_len[1]);
    if (memchr(part[2], '\0', part_len[2]) == NULL) {
        check_bearer(part[2]);
        check_basic(part[2]);
    }
    check_version(part[0]);
    check_media_type(part[3]);
    check_listen(part[4]);
    check_produce(part[5], part_len[5]);
    check_json_string(data, size);
    free(copy);
    return 0;
}
