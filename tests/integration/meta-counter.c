/*
 * meta-counter.c - a metastore client for the multi-process tests
 * (metastore-multiprocess.sh): many processes increment one counter with
 * compare-and-set transactions, and the store is checked afterwards.
 *
 *   meta-counter incr DIR ID N [--sync]
 *       N times: read "counter", then one transaction that compares its
 *       version and writes counter+1 together with "done/ID" (this
 *       process's count); a failed compare re-reads and retries.
 *       Prints "ID done=N conflicts=C".
 *   meta-counter get DIR KEY
 *       Prints the value of KEY (0 when missing).
 *   meta-counter check DIR
 *       Reads every key (paged), and checks that counter == the sum of
 *       every done/ID and that the revision is at least the counter.  Prints
 *       "counter=V sum=S keys=K revision=R"; exit 1 when inconsistent.
 *
 *   meta-counter hold-write DIR
 *       Opens the store with LMDB directly, begins a write transaction,
 *       writes held = 999 into it (uncommitted), prints "holding" and waits to
 *       be killed: a writer that dies holding LMDB's write lock.
 *
 * Exit status: 0 ok, 1 failure (the message on stderr), 2 usage.
 */
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meta/metastore.h"

static int fail(const char *what, int rc, const loams_meta_err *err)
{
    fprintf(stderr, "meta-counter: %s: %d %s\n", what, rc, err->msg);
    return 1;
}

static int read_number(loams_meta *m, const char *key, long *value, uint64_t *version,
                       loams_meta_err *err)
{
    loams_meta_kv kv;
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc == LOAMS_ENOTFOUND) {
        *value = 0;
        *version = 0;
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    *value = strtol(kv.value, NULL, 10);
    *version = kv.version;
    loams_meta_kv_free(&kv);
    return 0;
}

static int cmd_incr(loams_meta *m, const char *id, long n)
{
    loams_meta_err err;
    char done_key[128];
    snprintf(done_key, sizeof done_key, "done/%s", id);
    long done = 0, conflicts = 0;
    uint64_t ignored;
    int rc = read_number(m, done_key, &done, &ignored, &err);
    if (rc != 0) {
        return fail("read done", rc, &err);
    }
    long target = done + n;
    while (done < target) {
        long value;
        uint64_t version;
        rc = read_number(m, "counter", &value, &version, &err);
        if (rc != 0) {
            return fail("read counter", rc, &err);
        }
        char cbuf[32], dbuf[32];
        int clen = snprintf(cbuf, sizeof cbuf, "%ld", value + 1);
        int dlen = snprintf(dbuf, sizeof dbuf, "%ld", done + 1);
        loams_meta_compare c = {
            .kind = LOAMS_CMP_VERSION, .key = "counter", .key_len = 7, .version = version};
        loams_meta_write w[2] = {
            {.kind = LOAMS_OP_PUT,
             .key = "counter",
             .key_len = 7,
             .value = cbuf,
             .value_len = (size_t)clen},
            {.kind = LOAMS_OP_PUT,
             .key = done_key,
             .key_len = strlen(done_key),
             .value = dbuf,
             .value_len = (size_t)dlen},
        };
        rc = loams_meta_txn(m, &c, 1, w, 2, NULL, &err);
        if (rc == LOAMS_ECONFLICT) {
            conflicts++;
            continue;
        }
        if (rc != 0) {
            return fail("txn", rc, &err);
        }
        done++;
    }
    printf("%s done=%ld conflicts=%ld\n", id, n, conflicts);
    return 0;
}

static int cmd_check(loams_meta *m)
{
    loams_meta_err err;
    long counter = -1, sum = 0, keys = 0;
    char after[LOAMS_META_KEY_MAX + 1] = "";
    for (;;) {
        loams_meta_range_result r;
        int rc = loams_meta_range_prefix(m, "", after[0] ? after : NULL, 100, &r, &err);
        if (rc != 0) {
            return fail("range", rc, &err);
        }
        for (size_t i = 0; i < r.count; i++) {
            const loams_meta_kv *kv = &r.kvs[i];
            keys++;
            if (strcmp(kv->key, "counter") == 0) {
                counter = strtol(kv->value, NULL, 10);
            } else if (strncmp(kv->key, "done/", 5) == 0) {
                sum += strtol(kv->value, NULL, 10);
            }
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
    uint64_t revision = 0;
    int rc = loams_meta_revision(m, &revision, &err);
    if (rc != 0) {
        return fail("revision", rc, &err);
    }
    printf("counter=%ld sum=%ld keys=%ld revision=%" PRIu64 "\n", counter, sum, keys, revision);
    if (counter != sum || revision < (uint64_t)counter) {
        fprintf(stderr, "meta-counter: inconsistent store: counter %ld, done sum %ld\n", counter,
                sum);
        return 1;
    }
    return 0;
}

static int cmd_hold_write(const char *dir)
{
    char file[4096];
    snprintf(file, sizeof file, "%s/meta.mdb", dir);
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    int rc;
    if ((rc = mdb_env_create(&env)) != 0 || (rc = mdb_env_set_maxdbs(env, 4)) != 0 ||
        (rc = mdb_env_open(env, file, MDB_NOSUBDIR | MDB_NOTLS, 0660)) != 0 ||
        (rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0 ||
        (rc = mdb_dbi_open(txn, "loams.kv", 0, &dbi)) != 0) {
        fprintf(stderr, "meta-counter: hold-write: %s\n", mdb_strerror(rc));
        return 1;
    }
    /* a record as metastore_lmdb.c stores it: 8-byte version, then value */
    char value[16] = "\1\0\0\0\0\0\0\0"
                     "999";
    MDB_val k = {.mv_size = 4, .mv_data = "held"}, v = {.mv_size = 11, .mv_data = value};
    if ((rc = mdb_put(txn, dbi, &k, &v, 0)) != 0) {
        fprintf(stderr, "meta-counter: hold-write: %s\n", mdb_strerror(rc));
        return 1;
    }
    printf("holding\n");
    fflush(stdout);
    for (;;) {
        pause();
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: meta-counter incr DIR ID N [--sync] | get DIR KEY | check DIR\n");
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "hold-write") == 0) {
        return cmd_hold_write(argv[2]);
    }
    loams_meta_options o = {.no_sync = 1};
    if (strcmp(cmd, "incr") == 0 && argc == 6 && strcmp(argv[5], "--sync") == 0) {
        o.no_sync = 0;
    }
    loams_meta *m = NULL;
    loams_meta_err err;
    int rc = loams_meta_open(argv[2], &o, &m, &err);
    if (rc != 0) {
        return fail("open", rc, &err);
    }
    int status = 2;
    if (strcmp(cmd, "incr") == 0 && argc >= 5) {
        status = cmd_incr(m, argv[3], strtol(argv[4], NULL, 10));
    } else if (strcmp(cmd, "get") == 0 && argc == 4) {
        long value;
        uint64_t version;
        rc = read_number(m, argv[3], &value, &version, &err);
        status = rc != 0 ? fail("get", rc, &err) : (printf("%ld\n", value), 0);
    } else if (strcmp(cmd, "check") == 0) {
        status = cmd_check(m);
    } else {
        fprintf(stderr, "meta-counter: unknown command or arguments\n");
    }
    loams_meta_close(m);
    return status;
}
