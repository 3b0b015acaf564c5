/*
 * remote.h - the CLI's client of the HTTP API (docs/HTTP.md): with
 * `--server URL` (or LOAMS_SERVER when no --data-dir is given) a command
 * that reads or writes a data dir asks a running `loams-host serve`
 * instead, with the bearer token of `--token` or LOAMS_TOKEN, and prints
 * what it would print locally.
 *
 * One libcurl easy handle per client, reused for every call, so a command
 * that makes several calls (pages of a dump, batches of produce) keeps one
 * keep-alive connection.  Timeouts: 10 s to connect, and a call that
 * receives nothing for 60 s fails (a long call that makes progress goes
 * on).  The token is sent in the Authorization header only: no message
 * prints it, and the server's URL is printed without any user:password.
 *
 * Ownership: the client owns its curl handle and a copy of the URL and of
 * the header; loams_remote_close frees them.  Errors of a call: the
 * server's answer turned into a status and a message (err names the
 * server, the HTTP status, the error code and the server's message):
 * 400 LOAMS_EINPUT, 401/403 -EACCES, 404 LOAMS_ENOTFOUND, 409
 * LOAMS_ECONFLICT, 413/429/503 LOAMS_ERETRY, others -EIO; a server that
 * cannot be reached -ECONNREFUSED (or -ETIMEDOUT), with what curl says;
 * -ENOMEM.  Threads: one client per thread.
 */
#ifndef LOAMS_CLI_REMOTE_H
#define LOAMS_CLI_REMOTE_H

#include <stddef.h>

#include "abi/buf.h"

/* The options a command takes for it (argv's strings, not copied). */
typedef struct loams_remote_args {
    const char *server; /* --server URL */
    const char *token;  /* --token T */
} loams_remote_args;

/* The help of the options, for usage texts. */
#define LOAMS_REMOTE_USAGE                                                                         \
    "  --server URL (or LOAMS_SERVER): ask a running `loams-host serve` at URL\n"                  \
    "  instead of opening a data dir, with --token T (or LOAMS_TOKEN).\n"

/* If argv[*i] is --server URL, --server=URL, --token T or --token=T,
 * records it, moves *i past its value and returns 1; 0 when it is not one
 * of them; -1 (printed as "loams-host CMD: ...") when its value is
 * missing or empty. */
int loams_remote_take_option(loams_remote_args *a, const char *cmd, int argc, char **argv, int *i);

/* The server to ask: --server, else LOAMS_SERVER unless the command was
 * given --data-dir (given_data_dir != 0); NULL: work on a data dir.  Also
 * takes the token from LOAMS_TOKEN when --token was not given.  Prints
 * "loams-host CMD: ..." and returns -1 when --server and --data-dir are
 * both given. */
int loams_remote_choose(loams_remote_args *a, const char *cmd, int given_data_dir,
                        const char **server);

typedef struct loams_remote loams_remote;

/* A client of server `url` ("http://host:port", a trailing '/' ignored)
 * with `token` (NULL: none).  Errors: LOAMS_EINPUT (not an http:// or
 * https:// URL), -ENOMEM; err says which. */
int loams_remote_open(const char *url, const char *token, loams_remote **out, char *err,
                      size_t errlen);
void loams_remote_close(loams_remote *r);

/* Calls `method` ("GET", "POST") on path (with its query, escaped:
 * "/v1/streams/a.b/records?limit=5") with body[0..len) of content_type
 * (NULL body: none).  The answer's body goes to out (replaced), an
 * error document too; returns 0 for a 2xx answer, else the errors above. */
int loams_remote_call(loams_remote *r, const char *method, const char *path,
                      const char *content_type, const char *body, size_t len, loams_buf *out,
                      char *err, size_t errlen);

/* Appends text percent-encoded as a path segment or a query value
 * (everything but unreserved characters).  Errors: -ENOMEM. */
int loams_remote_escape(loams_buf *b, const char *text);

/* Appends "?name=value" to path, or "&name=value" when it has a query
 * already; value escaped.  Errors: -ENOMEM. */
int loams_remote_add_param(loams_buf *path, const char *name, const char *value);

/* GET path and parse the answer (a JSON value; integers as raw items
 * with every digit, loams/kit/json_tree.h): *doc the caller's
 * (cJSON_Delete), out keeps its text.  Errors: those of loams_remote_call,
 * -EIO for an answer that is not JSON. */
struct cJSON;
int loams_remote_get_json(loams_remote *r, const char *path, loams_buf *out, struct cJSON **doc,
                          char *err, size_t errlen);

/* Reads the answer in out (a JSON object) with `answer` (json_text.h), so
 * that a command prints its values as the server wrote them, as it prints
 * a plugin's answer on a data dir.  Errors: -EIO (not a JSON object; err
 * says where), -ENOMEM. */
struct loams_json_text;
int loams_remote_read_answer(const loams_buf *out, struct loams_json_text *answer, char *err,
                             size_t errlen);

#endif
