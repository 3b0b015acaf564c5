/*
 * cmd_token.c - `loams-host token create|list|revoke`: the bearer tokens
 * of the HTTP API (core/http/token.h; docs/HTTP.md, "Tokens").
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "base/units.h"
#include "cli/cli.h"
#include "cli/datadir.h"
#include "http/token.h"

static const char usage[] =
    "Usage: loams-host token create --namespace NS|'*' --role read|write|admin\n"
    "                              [--expires DURATION] [--data-dir DIR]\n"
    "       loams-host token list [--json] [--data-dir DIR]\n"
    "       loams-host token revoke ID [--data-dir DIR]\n"
    "  create prints a new bearer token on stdout, once (only its SHA-256 is\n"
    "  stored); list shows the tokens (id, namespace, role, created, expires);\n"
    "  revoke deletes one by its id (the 16 hex digits after 'loams_').\n";

static void format_time(int64_t ms, char *buf, size_t size)
{
    if (ms == 0) {
        snprintf(buf, size, "never");
        return;
    }
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int open_dir(const char *option, int flags, loams_datadir **dd)
{
    const char *dir = loams_datadir_choose(option);
    char err[1024];
    if (dir == NULL) {
        fprintf(stderr, "loams-host token: no data dir: pass --data-dir DIR or set "
                        "LOAMS_DATA_DIR\n");
        return 2;
    }
    if (loams_datadir_open(dir, flags, dd, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host token: %s\n", err);
        return 1;
    }
    return 0;
}

static int token_create(const char *data_dir, const char *ns, const char *role_text,
                        const char *expires)
{
    loams_token_role role;
    if (ns == NULL || role_text == NULL) {
        fprintf(stderr, "loams-host token create: give --namespace NS (or '*') and --role\n%s",
                usage);
        return 2;
    }
    if (loams_token_role_parse(role_text, &role) != 0) {
        fprintf(stderr, "loams-host token create: --role %s: write read, write or admin\n",
                role_text);
        return 2;
    }
    int64_t now = now_ms(), until = 0;
    if (expires != NULL) {
        int64_t us;
        char why[256];
        if (loams_duration_parse(expires, &us, why, sizeof why) != 0 || us < 1000000) {
            fprintf(stderr,
                    "loams-host token create: --expires %s is not a duration of a second or "
                    "more (write e.g. 30d, 12h)\n",
                    expires);
            return 2;
        }
        until = now + us / 1000;
    }
    loams_datadir *dd = NULL;
    int rc = open_dir(data_dir, LOAMS_DATADIR_CREATE, &dd);
    if (rc != 0) {
        return rc;
    }
    char text[LOAMS_TOKEN_TEXT_LEN + 1], err[512], when[40];
    loams_token_info info;
    rc = loams_token_create(dd->meta, ns, role, now, until, text, &info, err, sizeof err);
    loams_datadir_close(dd);
    if (rc != 0) {
        fprintf(stderr, "loams-host token create: %s\n", err);
        return rc == LOAMS_EINPUT ? 2 : 1;
    }
    format_time(info.expires_ms, when, sizeof when);
    printf("%s\n", text);
    OPENSSL_cleanse(text, sizeof text);
    fprintf(stderr,
            "loams-host token: made token %s: role %s in namespace %s, expires %s.\n"
            "It is shown this once (only its SHA-256 is kept); send it as "
            "'Authorization: Bearer TOKEN'.\n",
            info.id, loams_token_role_name(info.role), info.ns, when);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int token_list(const char *data_dir, int json)
{
    loams_datadir *dd = NULL;
    int rc = open_dir(data_dir, LOAMS_DATADIR_READ_ONLY, &dd);
    if (rc != 0) {
        return rc;
    }
    loams_token_info *list = NULL;
    size_t n = 0;
    loams_meta_err merr;
    rc = loams_token_list(dd->meta, &list, &n, &merr);
    loams_datadir_close(dd);
    if (rc != 0) {
        fprintf(stderr, "loams-host token list: %s\n", merr.msg);
        return 1;
    }
    int64_t now = now_ms();
    if (json) {
        fputc('[', stdout);
    } else {
        printf("%-16s  %-20s  %-5s  %-20s  %s\n", "id", "namespace", "role", "created", "expires");
    }
    for (size_t i = 0; i < n; i++) {
        const loams_token_info *t = &list[i];
        int expired = t->expires_ms != 0 && now >= t->expires_ms;
        if (json) {
            printf("%s{\"id\":\"%s\",\"namespace\":\"%s\",\"role\":\"%s\",\"created_ms\":%" PRId64
                   ",\"expires_ms\":%" PRId64 ",\"expired\":%s}",
                   i ? "," : "", t->id, t->ns, loams_token_role_name(t->role), t->created_ms,
                   t->expires_ms, expired ? "true" : "false");
        } else {
            char created[40], expires[40];
            format_time(t->created_ms, created, sizeof created);
            format_time(t->expires_ms, expires, sizeof expires);
            printf("%-16s  %-20s  %-5s  %-20s  %s%s\n", t->id, t->ns,
                   loams_token_role_name(t->role), created, expires, expired ? " (expired)" : "");
        }
    }
    if (json) {
        fputs("]\n", stdout);
    }
    free(list);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int token_revoke(const char *data_dir, const char *id)
{
    loams_datadir *dd = NULL;
    int rc = open_dir(data_dir, 0, &dd);
    if (rc != 0) {
        return rc;
    }
    loams_meta_err merr;
    rc = loams_token_revoke(dd->meta, id, &merr);
    loams_datadir_close(dd);
    if (rc != 0) {
        fprintf(stderr, "loams-host token revoke: %s\n", merr.msg);
        return rc == LOAMS_EINPUT ? 2 : 1;
    }
    printf("revoked token %s\n", id);
    return fflush(stdout) == 0 ? 0 : 1;
}

int loams_cmd_token(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data-dir", required_argument, NULL, 'd'},
        {"namespace", required_argument, NULL, 'n'},
        {"role", required_argument, NULL, 'r'},
        {"expires", required_argument, NULL, 'e'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *data_dir = NULL, *ns = NULL, *role = NULL, *expires = NULL;
    int json = 0, c;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    optind = 2;
    while ((c = getopt_long(argc, argv, "d:n:r:e:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'd': data_dir = optarg; break;
        case 'n': ns = optarg; break;
        case 'r': role = optarg; break;
        case 'e': expires = optarg; break;
        case 'j': json = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    int is_create = strcmp(sub, "create") == 0, is_list = strcmp(sub, "list") == 0;
    int is_revoke = strcmp(sub, "revoke") == 0;
    if (!is_create && !is_list && !is_revoke) {
        fprintf(stderr, "loams-host token: unknown subcommand '%s'\n%s", sub, usage);
        return 2;
    }
    if (optind + (is_revoke ? 1 : 0) != argc) {
        fprintf(stderr, "loams-host token %s: %s\n%s", sub,
                is_revoke ? "name one token id" : "takes no other argument", usage);
        return 2;
    }
    if (is_create) {
        return token_create(data_dir, ns, role, expires);
    }
    if (is_list) {
        return token_list(data_dir, json);
    }
    return token_revoke(data_dir, argv[optind]);
}
