/*
 * cmd_version.c - `loams-host --version`: the host's version, the plugin
 * ABI it implements, and the version of every library it links, as the
 * libraries report them at run time (Lua and libltdl report none at run
 * time: Lua's is the one compiled against; libltdl's is not available).
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <lmdb.h>
#include <lua.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <zstd.h>

#include <loams/plugin.h>

#include "cli/cli.h"

int loams_cmd_version(int argc, char **argv)
{
    if (argc > 1) {
        fprintf(stderr, "loams-host %s: unexpected argument '%s'\n", argv[0], argv[1]);
        return 2;
    }
    const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
    printf("loams-host %s\n", PACKAGE_VERSION);
    printf("plugin ABI %d.%d\n", LOAMS_ABI_MAJOR, LOAMS_ABI_MINOR);
    printf("libraries:\n");
    printf("  Lua %s (compiled against)\n", &LUA_RELEASE[strlen("Lua ")]);
    printf("  cJSON %s\n", cJSON_Version());
    int lmaj = 0, lmin = 0, lpatch = 0;
    mdb_version(&lmaj, &lmin, &lpatch);
    printf("  LMDB %d.%d.%d\n", lmaj, lmin, lpatch);
    printf("  SQLite %s\n", sqlite3_libversion());
    printf("  libcurl %s\n", curl != NULL ? curl->version : "(unknown)");
    printf("  OpenSSL %s\n", OpenSSL_version(OPENSSL_VERSION_STRING));
    printf("  zstd %s\n", ZSTD_versionString());
    printf("  libmicrohttpd %s\n", MHD_get_version());
    printf("  libltdl (linked; the library reports no version)\n");
    return fflush(stdout) == 0 ? 0 : 1;
}
