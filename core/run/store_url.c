/*
 * store_url.c - owns turning a store choice (--store URL and its S3
 * settings) into a store plugin and its options (store_url.h).
 */
#include "run/store_url.h"

#include <stdio.h>
#include <string.h>

#include "base/status.h"

static int set(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static void add(loams_store_target *t, const char *name, const char *value)
{
    t->opts[t->n].name = name;
    t->opts[t->n].value = value;
    t->n++;
}

int loams_store_target_resolve(const loams_store_choice *c, const char *data_dir, int read_only,
                               loams_store_target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *url = c != NULL ? c->url : NULL;
    int s3_settings = c != NULL && (set(c->endpoint) || set(c->region) || set(c->path_style));
    if (!set(url) || strncmp(url, "file://", 7) == 0) {
        if (s3_settings) {
            snprintf(err, errlen,
                     "--store-endpoint, --store-region and --store-path-style (store_endpoint, "
                     "store_region, store_path_style) apply to an s3:// store only; add "
                     "--store s3://BUCKET/PREFIX or remove them");
            return LOAMS_EINPUT;
        }
        snprintf(t->plugin, sizeof t->plugin, "store-fs");
        if (set(url)) {
            const char *dir = url + 7;
            if (dir[0] != '/' || strlen(dir) >= sizeof t->where) {
                snprintf(err, errlen,
                         "store '%.200s': a file store is file:///ABSOLUTE/DIR (three slashes)",
                         url);
                return LOAMS_EINPUT;
            }
            snprintf(t->where, sizeof t->where, "%s", dir);
        } else if (snprintf(t->where, sizeof t->where, "%s/objects", data_dir) >=
                   (int)sizeof t->where) {
            snprintf(err, errlen, "the data dir path is too long");
            return LOAMS_EINPUT;
        }
        add(t, "root", t->where);
    } else if (strncmp(url, "s3://", 5) == 0) {
        const char *b = url + 5;
        const char *slash = strchr(b, '/');
        size_t bl = slash != NULL ? (size_t)(slash - b) : strlen(b);
        const char *prefix = slash != NULL ? slash + 1 : "";
        if (bl == 0 || bl >= 64 || strlen(prefix) >= sizeof t->prefix) {
            snprintf(err, errlen,
                     "store '%.200s': write s3://BUCKET or s3://BUCKET/PREFIX (a bucket name of "
                     "1 to 63 characters, a prefix of at most 1024 bytes)",
                     url);
            return LOAMS_EINPUT;
        }
        snprintf(t->plugin, sizeof t->plugin, "store-s3");
        memcpy(t->where, b, bl);
        t->where[bl] = '\0';
        snprintf(t->prefix, sizeof t->prefix, "%s", prefix);
        add(t, "bucket", t->where);
        add(t, "prefix", t->prefix);
        if (set(c->endpoint)) {
            add(t, "endpoint", c->endpoint);
        }
        if (set(c->region)) {
            add(t, "region", c->region);
        }
        if (set(c->path_style)) {
            add(t, "path_style", c->path_style);
        }
    } else {
        snprintf(err, errlen,
                 "store '%.200s': not a store URL: write s3://BUCKET/PREFIX (store-s3) or "
                 "file:///DIR (store-fs); without --store, objects go to <data dir>/objects",
                 url);
        return LOAMS_EINPUT;
    }
    if (read_only) {
        add(t, "read_only", "true");
    }
    return 0;
}
