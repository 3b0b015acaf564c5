/*
 * store-poke.c - reads and damages what a data dir stores, for the tests
 * that check how commands meet data they cannot read (cli-damaged.sh).
 * Owns nothing beyond one command's run; no node may be running.
 *
 *   store-poke meta-get DIR KEY          prints KEY's value (exit 1: missing)
 *   store-poke meta-put DIR KEY VALUE    writes VALUE under KEY
 *   store-poke meta-keys DIR PREFIX      prints every key under PREFIX
 *   store-poke log-damage DIR NS.STREAM PARTITION OFFSET
 *       overwrites the stored record at OFFSET with bytes that do not
 *       decode (LMDB directly: the log's interface has no way to do it).
 *   store-poke log-append DIR NS.STREAM PARTITION TIMESTAMP_US VALUE
 *       appends one record with that timestamp (produce stamps the append
 *       time), through the log's interface.
 *
 * Exit status: 0 ok, 1 failure (the message on stderr), 2 usage.
 */
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "catalog/objname.h"
#include "cli/datadir.h"
#include "meta/metastore.h"
#include "stream/streamlog.h"

static int usage(void)
{
    fprintf(stderr, "usage: store-poke meta-get DIR KEY | meta-put DIR KEY VALUE | "
                    "meta-keys DIR PREFIX | log-damage DIR NS.STREAM PARTITION OFFSET | "
                    "log-append DIR NS.STREAM PARTITION TIMESTAMP_US VALUE\n");
    return 2;
}

static int meta_fail(const char *what, int rc, const loams_meta_err *err)
{
    fprintf(stderr, "store-poke: %s: %d %s\n", what, rc, err->msg);
    return 1;
}

/* The id of stream NS.NAME from its catalog entry. */
static int stream_id(loams_meta *m, const char *stream, uint64_t *id)
{
    char key[300];
    const char *dot = strchr(stream, '.');
    if (dot == NULL) {
        fprintf(stderr, "store-poke: give the stream as NS.NAME\n");
        return 1;
    }
    snprintf(key, sizeof key, "stream/%.*s/%s", (int)(dot - stream), stream, dot + 1);
    loams_meta_kv kv;
    loams_meta_err err;
    int rc = loams_meta_get(m, key, strlen(key), &kv, &err);
    if (rc != 0) {
        return meta_fail(key, rc, &err);
    }
    cJSON *o = cJSON_ParseWithLength(kv.value, kv.value_len);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "id");
    int ok = cJSON_IsNumber(v);
    if (ok) {
        *id = (uint64_t)v->valuedouble;
    }
    cJSON_Delete(o);
    loams_meta_kv_free(&kv);
    if (!ok) {
        fprintf(stderr, "store-poke: %s has no id\n", key);
        return 1;
    }
    return 0;
}

static int log_damage(const char *dir, uint64_t id, unsigned partition, uint64_t offset)
{
    char path[4096], name[64];
    snprintf(path, sizeof path, "%s/log", dir);
    snprintf(name, sizeof name, "r:%016" PRIx64 ":%u", id, partition);
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_dbi dbi;
    int rc = mdb_env_create(&env);
    if (rc == 0 && (rc = mdb_env_set_maxdbs(env, 8192)) == 0 &&
        (rc = mdb_env_set_mapsize(env, 32ull << 30)) == 0 &&
        (rc = mdb_env_open(env, path, MDB_NOTLS, 0644)) == 0 &&
        (rc = mdb_txn_begin(env, NULL, 0, &txn)) == 0 &&
        (rc = mdb_dbi_open(txn, name, 0, &dbi)) == 0) {
        unsigned char k[8];
        for (int i = 0; i < 8; i++) {
            k[i] = (unsigned char)(offset >> (56 - 8 * i));
        }
        MDB_val key = {8, k}, old,
                val = {7, "\xff\xff\xff\xff"
                          "bad"};
        rc = mdb_get(txn, dbi, &key, &old);
        if (rc == 0) {
            rc = mdb_put(txn, dbi, &key, &val, 0);
        }
        if (rc == 0) {
            rc = mdb_txn_commit(txn);
            txn = NULL;
        }
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    mdb_env_close(env);
    if (rc != 0) {
        fprintf(stderr, "store-poke: %s %s offset %" PRIu64 ": %s\n", path, name, offset,
                mdb_strerror(rc));
        return 1;
    }
    return 0;
}

static int log_append(const char *dir, const char *stream, const char *partition,
                      const char *timestamp, const char *value)
{
    char msg[1024];
    loams_objname name;
    loams_datadir *dd = NULL;
    loams_stream *s = NULL;
    loams_stream_err se = {{0}};
    loams_stream_record_in r = {.value = value,
                                .value_len = strlen(value),
                                .timestamp_us = strtoll(timestamp, NULL, 10),
                                .partition = (int32_t)strtol(partition, NULL, 10)};
    loams_stream_pos pos;
    int status = 1;
    if (loams_objname_parse(stream, &name, msg, sizeof msg) != 0 ||
        loams_datadir_open(dir, 0, &dd, msg, sizeof msg) != 0) {
        fprintf(stderr, "store-poke: %s\n", msg);
        return 1;
    }
    if (loams_stream_open(dd->log, &name, &s, &se) != 0 ||
        loams_stream_append(s, &r, 1, &pos, &se) != 0) {
        fprintf(stderr, "store-poke: %s: %s\n", stream, se.msg);
    } else {
        status = 0;
    }
    loams_stream_close(s);
    loams_datadir_close(dd);
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        return usage();
    }
    const char *cmd = argv[1], *dir = argv[2];
    if (strcmp(cmd, "log-append") == 0) {
        return argc == 7 ? log_append(dir, argv[3], argv[4], argv[5], argv[6]) : usage();
    }
    loams_meta *m = NULL;
    loams_meta_err err;
    int rc = loams_meta_open(dir, NULL, &m, &err);
    if (rc != 0) {
        return meta_fail("open", rc, &err);
    }
    int status = 0;
    if (strcmp(cmd, "meta-get") == 0 && argc == 4) {
        loams_meta_kv kv;
        rc = loams_meta_get(m, argv[3], strlen(argv[3]), &kv, &err);
        if (rc != 0) {
            status = meta_fail(argv[3], rc, &err);
        } else {
            fwrite(kv.value, 1, kv.value_len, stdout);
            fputc('\n', stdout);
            loams_meta_kv_free(&kv);
        }
    } else if (strcmp(cmd, "meta-put") == 0 && argc == 5) {
        rc = loams_meta_put(m, argv[3], strlen(argv[3]), argv[4], strlen(argv[4]), NULL, &err);
        if (rc != 0) {
            status = meta_fail(argv[3], rc, &err);
        }
    } else if (strcmp(cmd, "meta-keys") == 0 && argc == 4) {
        char after[LOAMS_META_KEY_MAX + 1] = "";
        for (;;) {
            loams_meta_range_result r;
            rc = loams_meta_range_prefix(m, argv[3], after[0] ? after : NULL, 1000, &r, &err);
            if (rc != 0) {
                status = meta_fail(argv[3], rc, &err);
                break;
            }
            for (size_t i = 0; i < r.count; i++) {
                printf("%s\n", r.kvs[i].key);
            }
            int more = r.more && r.count > 0;
            if (r.count > 0) {
                snprintf(after, sizeof after, "%s", r.kvs[r.count - 1].key);
            }
            loams_meta_range_free(&r);
            if (!more) {
                break;
            }
        }
    } else if (strcmp(cmd, "log-damage") == 0 && argc == 6) {
        uint64_t id = 0;
        status = stream_id(m, argv[3], &id);
        loams_meta_close(m);
        m = NULL;
        if (status == 0) {
            status = log_damage(dir, id, (unsigned)strtoul(argv[4], NULL, 10),
                                strtoull(argv[5], NULL, 10));
        }
    } else {
        status = usage();
    }
    loams_meta_close(m);
    return status;
}
