/*
 * udf.c - owns the process-wide UDF registry (udf.h).
 */
#include "abi/udf.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "abi/plugin_ctx.h"

#define UDF_NAME_MAX 63

typedef struct udf_entry {
    char *name;
    int nargs;
    loams_udf_fn fn;
    void *userdata;
} udf_entry;

static pthread_mutex_t udf_lock = PTHREAD_MUTEX_INITIALIZER;
static udf_entry *udfs;
static size_t n_udfs;
static size_t cap_udfs;

static int valid_name(const char *name)
{
    if (name == NULL || !(isalpha((unsigned char)name[0]) || name[0] == '_')) {
        return 0;
    }
    size_t len = 0;
    for (const char *p = name; *p != '\0'; p++, len++) {
        if (!(isalnum((unsigned char)*p) || *p == '_') || len >= UDF_NAME_MAX) {
            return 0;
        }
    }
    return 1;
}

static long find_locked(const char *name)
{
    for (size_t i = 0; i < n_udfs; i++) {
        if (strcasecmp(udfs[i].name, name) == 0) {
            return (long)i;
        }
    }
    return -1;
}

int loams_udf_register(loams_ctx *ctx, const char *name, int nargs, loams_udf_fn fn, void *userdata)
{
    if (!valid_name(name)) {
        loams_ctx_set_error(ctx,
                            "cannot register UDF '%s': a function name is a letter or '_' "
                            "followed by letters, digits or '_' (at most %d)",
                            name != NULL ? name : "(null)", UDF_NAME_MAX);
        return -EINVAL;
    }
    if (fn == NULL || nargs < -1 || nargs > 127) {
        loams_ctx_set_error(ctx, "cannot register UDF '%s': %s", name,
                            fn == NULL ? "no function given"
                                       : "nargs must be -1 (variadic) or 0..127");
        return -EINVAL;
    }
    int rc = 0;
    pthread_mutex_lock(&udf_lock);
    if (find_locked(name) >= 0) {
        loams_ctx_set_error(ctx,
                            "cannot register UDF '%s': a function with that name exists "
                            "already (pick another name)",
                            name);
        rc = -EEXIST;
        goto out;
    }
    if (n_udfs == cap_udfs) {
        size_t cap = cap_udfs < 16 ? 16 : cap_udfs * 2;
        udf_entry *u = realloc(udfs, cap * sizeof *u);
        if (u == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        udfs = u;
        cap_udfs = cap;
    }
    char *copy = strdup(name);
    if (copy == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    udfs[n_udfs++] = (udf_entry){copy, nargs, fn, userdata};
out:
    pthread_mutex_unlock(&udf_lock);
    if (rc == -ENOMEM) {
        loams_ctx_set_error(ctx, "cannot register UDF '%s': out of memory", name);
    }
    return rc;
}

size_t loams_udf_count(loams_ctx *ctx)
{
    pthread_mutex_lock(&udf_lock);
    size_t n = n_udfs;
    pthread_mutex_unlock(&udf_lock);
    return n;
}

int loams_udf_at(loams_ctx *ctx, size_t i, const char **name, int *nargs, loams_udf_fn *fn,
                 void **userdata)
{
    int rc = 0;
    pthread_mutex_lock(&udf_lock);
    if (i >= n_udfs) {
        rc = -EINVAL;
        goto out;
    }
    if (name != NULL) {
        *name = udfs[i].name;
    }
    if (nargs != NULL) {
        *nargs = udfs[i].nargs;
    }
    if (fn != NULL) {
        *fn = udfs[i].fn;
    }
    if (userdata != NULL) {
        *userdata = udfs[i].userdata;
    }
out:
    pthread_mutex_unlock(&udf_lock);
    return rc;
}

long loams_udf_find(const char *name)
{
    if (name == NULL) {
        return -1;
    }
    pthread_mutex_lock(&udf_lock);
    long i = find_locked(name);
    pthread_mutex_unlock(&udf_lock);
    return i;
}

void loams_udf_clear(void)
{
    pthread_mutex_lock(&udf_lock);
    for (size_t i = 0; i < n_udfs; i++) {
        free(udfs[i].name);
    }
    free(udfs);
    udfs = NULL;
    n_udfs = 0;
    cap_udfs = 0;
    pthread_mutex_unlock(&udf_lock);
}
