/*
 * lease.c - task leases and their fences on top of the metastore (lease.h).
 *
 * Every change is one metastore transaction that compares the versions it
 * read, so two nodes racing for a lease cannot both win, and a renewal
 * cannot overwrite a takeover: the loser sees LOAMS_ECONFLICT (acquire) or
 * re-reads and finds itself fenced (renew).
 */
#include "meta/lease.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/failpoint.h"
#include "base/log.h"
#include "meta/metastore_backend.h"

#define RENEW_ATTEMPTS 4

static int64_t real_now_ms(void *userdata)
{
    (void)userdata;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const loams_clock real_clock = {.now_ms = real_now_ms, .userdata = NULL};

const loams_clock *loams_clock_real(void)
{
    return &real_clock;
}

static int check_task(const char *what, const char *task, loams_meta_err *err)
{
    if (task == NULL || task[0] == '\0') {
        return loams__meta_fail(err, -EINVAL, "lease %s: empty task key", what);
    }
    size_t n = strlen(task);
    if (n >= LOAMS_LEASE_KEY_MAX) {
        return loams__meta_fail(err, -EINVAL,
                                "lease %s: task key of %zu bytes is too long (at most %d): "
                                "'%.40s...'",
                                what, n, LOAMS_LEASE_KEY_MAX - 1, task);
    }
    return 0;
}

static int check_owner(const char *owner, loams_meta_err *err)
{
    if (owner == NULL || owner[0] == '\0') {
        return loams__meta_fail(err, -EINVAL, "lease acquire: empty owner (node id)");
    }
    size_t n = strlen(owner);
    if (n >= LOAMS_LEASE_OWNER_MAX) {
        return loams__meta_fail(err, -EINVAL,
                                "lease acquire: owner of %zu bytes is too long (at most %d)", n,
                                LOAMS_LEASE_OWNER_MAX - 1);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)owner[i];
        if (c < 0x20 || c == 0x7f) {
            return loams__meta_fail(err, -EINVAL,
                                    "lease acquire: owner '%s' holds a control character at "
                                    "byte %zu; node ids are printable text",
                                    owner, i);
        }
    }
    return 0;
}

static size_t task_key(char *buf, size_t size, const char *task)
{
    return (size_t)snprintf(buf, size, "task/%s", task);
}

static size_t fence_key(char *buf, size_t size, const char *task)
{
    return (size_t)snprintf(buf, size, "fence/%s", task);
}

static int format_record(char *buf, size_t size, const loams_lease *l)
{
    int n = snprintf(buf, size, "epoch=%" PRIu64 " deadline=%" PRId64 " ttl=%" PRId64 " owner=%s",
                     l->epoch, l->deadline_ms, l->ttl_ms, l->owner);
    return n;
}

/* Parses a task/<key> record into *out (key set by the caller). */
static int parse_record(const char *task, const loams_meta_kv *kv, loams_lease *out,
                        loams_meta_err *err)
{
    uint64_t epoch = 0;
    int64_t deadline = 0, ttl = 0;
    int owner_at = -1;
    const char *text = kv->value;
    if (strlen(text) != kv->value_len ||
        sscanf(text, "epoch=%" SCNu64 " deadline=%" SCNd64 " ttl=%" SCNd64 " owner=%n", &epoch,
               &deadline, &ttl, &owner_at) != 3 ||
        owner_at < 0 || epoch == 0 || text[owner_at] == '\0' ||
        kv->value_len - (size_t)owner_at >= LOAMS_LEASE_OWNER_MAX) {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "lease: the record of task/%s cannot be parsed ('%.100s'): "
                                "delete the key to free the task",
                                task, text);
    }
    snprintf(out->key, sizeof out->key, "%s", task);
    snprintf(out->owner, sizeof out->owner, "%s", text + owner_at);
    out->epoch = epoch;
    out->deadline_ms = deadline;
    out->ttl_ms = ttl;
    return 0;
}

static int parse_fence(const char *task, const loams_meta_kv *kv, uint64_t *epoch,
                       loams_meta_err *err)
{
    const char *text = kv->value;
    int used = -1;
    if (strlen(text) != kv->value_len || sscanf(text, "%" SCNu64 "%n", epoch, &used) != 1 ||
        used != (int)kv->value_len || text[0] < '0' || text[0] > '9') {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "lease: the fence of task %s cannot be parsed ('%.40s'): it "
                                "must hold a decimal epoch",
                                task, text);
    }
    return 0;
}

/* Reads task/<key>: *found, *lease and *version (0 when missing). */
static int read_task(loams_meta *m, const char *task, int *found, loams_lease *lease,
                     uint64_t *version, loams_meta_err *err)
{
    char key[LOAMS_META_KEY_MAX + 1];
    size_t klen = task_key(key, sizeof key, task);
    loams_meta_kv kv;
    *found = 0;
    *version = 0;
    int rc = loams_meta_get(m, key, klen, &kv, err);
    if (rc == LOAMS_ENOTFOUND) {
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    rc = parse_record(task, &kv, lease, err);
    if (rc == 0) {
        *found = 1;
        *version = kv.version;
    }
    loams_meta_kv_free(&kv);
    return rc;
}

/* Reads fence/<key> into key (the caller's buffer): its epoch and version
 * (both 0 when missing). */
static int read_fence(loams_meta *m, const char *task, char *key, size_t size, uint64_t *epoch,
                      uint64_t *version, size_t *klen, loams_meta_err *err)
{
    *klen = fence_key(key, size, task);
    *epoch = *version = 0;
    loams_meta_kv fkv;
    int rc = loams_meta_get(m, key, *klen, &fkv, err);
    if (rc == LOAMS_ENOTFOUND) {
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    *version = fkv.version;
    rc = parse_fence(task, &fkv, epoch, err);
    loams_meta_kv_free(&fkv);
    return rc;
}

int loams_lease_read(loams_meta *m, const char *task, loams_lease *out, loams_meta_err *err)
{
    int rc = check_task("read", task, err);
    if (rc != 0) {
        return rc;
    }
    if (m == NULL || out == NULL) {
        return loams__meta_fail(err, -EINVAL, "lease read: NULL argument");
    }
    int found;
    uint64_t version;
    loams_lease l;
    memset(&l, 0, sizeof l);
    rc = read_task(m, task, &found, &l, &version, err);
    if (rc != 0) {
        return rc;
    }
    if (!found) {
        return loams__meta_fail(err, LOAMS_ENOTFOUND, "lease: task %s is not leased", task);
    }
    *out = l;
    return 0;
}

int loams_lease_acquire(loams_meta *m, const loams_clock *clock, const char *task,
                        const char *owner, int64_t ttl_ms, loams_lease *out, loams_lease *holder,
                        loams_meta_err *err)
{
    int rc = check_task("acquire", task, err);
    if (rc != 0) {
        return rc;
    }
    if ((rc = check_owner(owner, err)) != 0) {
        return rc;
    }
    if (m == NULL || clock == NULL || clock->now_ms == NULL || out == NULL) {
        return loams__meta_fail(err, -EINVAL, "lease acquire: NULL argument");
    }
    if (ttl_ms <= 0) {
        return loams__meta_fail(
            err, -EINVAL, "lease acquire: the TTL must be positive (got %" PRId64 " ms)", ttl_ms);
    }
    int found;
    uint64_t task_version;
    loams_lease cur;
    memset(&cur, 0, sizeof cur);
    rc = read_task(m, task, &found, &cur, &task_version, err);
    if (rc != 0) {
        return rc;
    }
    char fkey[LOAMS_META_KEY_MAX + 1];
    size_t fklen;
    uint64_t fence_epoch, fence_version;
    if ((rc = read_fence(m, task, fkey, sizeof fkey, &fence_epoch, &fence_version, &fklen, err)) !=
        0) {
        return rc;
    }
    int64_t now = clock->now_ms(clock->userdata);
    if (found && now < cur.deadline_ms) {
        if (holder != NULL) {
            *holder = cur;
        }
        return loams__meta_fail(err, LOAMS_EEXISTS,
                                "lease: task %s is held by %s at epoch %" PRIu64 " for %" PRId64
                                " ms more",
                                task, cur.owner, cur.epoch, cur.deadline_ms - now);
    }
    loams_lease l;
    memset(&l, 0, sizeof l);
    snprintf(l.key, sizeof l.key, "%s", task);
    snprintf(l.owner, sizeof l.owner, "%s", owner);
    l.epoch = (fence_epoch > cur.epoch ? fence_epoch : cur.epoch) + 1;
    l.ttl_ms = ttl_ms;
    l.deadline_ms = now + ttl_ms;

    char tkey[LOAMS_META_KEY_MAX + 1];
    size_t tklen = task_key(tkey, sizeof tkey, task);
    char record[64 + LOAMS_LEASE_OWNER_MAX];
    int rlen = format_record(record, sizeof record, &l);
    char fval[24];
    int flen = snprintf(fval, sizeof fval, "%" PRIu64, l.epoch);
    loams_meta_compare cmps[2] = {
        {.kind = LOAMS_CMP_VERSION, .key = tkey, .key_len = tklen, .version = task_version},
        {.kind = LOAMS_CMP_VERSION, .key = fkey, .key_len = fklen, .version = fence_version},
    };
    loams_meta_write writes[2] = {
        {.kind = LOAMS_OP_PUT,
         .key = tkey,
         .key_len = tklen,
         .value = record,
         .value_len = (size_t)rlen},
        {.kind = LOAMS_OP_PUT,
         .key = fkey,
         .key_len = fklen,
         .value = fval,
         .value_len = (size_t)flen},
    };
    rc = loams_meta_txn(m, cmps, 2, writes, 2, NULL, err);
    if (rc == LOAMS_ECONFLICT) {
        return loams__meta_fail(err, LOAMS_ECONFLICT,
                                "lease: a concurrent acquire of task %s won the race", task);
    }
    if (rc != 0) {
        return rc;
    }
    loams_log_task(LOAMS_LOG_DEBUG, "lease", task, l.epoch, "acquired by %s for %" PRId64 " ms",
                   owner, ttl_ms);
    *out = l;
    return 0;
}

int loams_lease_renew(loams_meta *m, const loams_clock *clock, loams_lease *lease,
                      loams_meta_err *err)
{
    if (m == NULL || clock == NULL || clock->now_ms == NULL || lease == NULL) {
        return loams__meta_fail(err, -EINVAL, "lease renew: NULL argument");
    }
    if (memchr(lease->key, '\0', sizeof lease->key) == NULL ||
        memchr(lease->owner, '\0', sizeof lease->owner) == NULL) {
        return loams__meta_fail(err, -EINVAL, "lease renew: key or owner not terminated");
    }
    int rc = check_task("renew", lease->key, err);
    if (rc != 0) {
        return rc;
    }
    if (lease->ttl_ms <= 0) {
        return loams__meta_fail(err, -EINVAL, "lease renew: the TTL must be positive");
    }
    if (loams_failpoint("lease.renew") != 0) {
        return loams__meta_fail(err, -EIO, "lease renew of task %s: failpoint lease.renew",
                                lease->key);
    }
    char tkey[LOAMS_META_KEY_MAX + 1];
    size_t tklen = task_key(tkey, sizeof tkey, lease->key);
    loams_fence_storage fs;
    for (int attempt = 0; attempt < RENEW_ATTEMPTS; attempt++) {
        int found;
        uint64_t version;
        loams_lease cur;
        memset(&cur, 0, sizeof cur);
        rc = read_task(m, lease->key, &found, &cur, &version, err);
        if (rc != 0) {
            return rc;
        }
        if (!found) {
            return loams__meta_fail(err, LOAMS_EFENCED,
                                    "lease: task %s (epoch %" PRIu64
                                    ") was released or deleted: stop the run",
                                    lease->key, lease->epoch);
        }
        if (cur.epoch != lease->epoch || strcmp(cur.owner, lease->owner) != 0) {
            return loams__meta_fail(err, LOAMS_EFENCED,
                                    "lease: task %s was taken by %s at epoch %" PRIu64
                                    " (ours: %s at epoch %" PRIu64 "): stop the run",
                                    lease->key, cur.owner, cur.epoch, lease->owner, lease->epoch);
        }
        int64_t now = clock->now_ms(clock->userdata);
        loams_lease next = cur;
        next.ttl_ms = lease->ttl_ms;
        next.deadline_ms = now + lease->ttl_ms;
        char record[64 + LOAMS_LEASE_OWNER_MAX];
        int rlen = format_record(record, sizeof record, &next);
        loams_meta_compare cmps[2];
        cmps[0] = (loams_meta_compare){
            .kind = LOAMS_CMP_VERSION, .key = tkey, .key_len = tklen, .version = version};
        loams_lease_fence_compare(lease, &fs, &cmps[1]);
        loams_meta_write w = {.kind = LOAMS_OP_PUT,
                              .key = tkey,
                              .key_len = tklen,
                              .value = record,
                              .value_len = (size_t)rlen};
        size_t failed = 0;
        rc = loams_meta_txn(m, cmps, 2, &w, 1, &failed, err);
        if (rc == LOAMS_ECONFLICT && failed == 1) {
            return loams__meta_fail(err, LOAMS_EFENCED,
                                    "lease: the fence of task %s moved past epoch %" PRIu64
                                    ": stop the run",
                                    lease->key, lease->epoch);
        }
        if (rc == LOAMS_ECONFLICT) {
            continue; /* the record changed between read and write: look again */
        }
        if (rc != 0) {
            return rc;
        }
        if (now >= cur.deadline_ms) {
            loams_log_task(LOAMS_LOG_DEBUG, "lease", lease->key, lease->epoch,
                           "lease had expired %" PRId64 " ms ago and nobody took it: "
                           "re-taken at the same epoch",
                           now - cur.deadline_ms);
        }
        lease->deadline_ms = next.deadline_ms;
        return 0;
    }
    return loams__meta_fail(err, LOAMS_ECONFLICT,
                            "lease: task %s kept changing during %d renewal attempts: retry",
                            lease->key, RENEW_ATTEMPTS);
}

int loams_lease_release(loams_meta *m, loams_lease *lease, loams_meta_err *err)
{
    if (m == NULL || lease == NULL) {
        return loams__meta_fail(err, -EINVAL, "lease release: NULL argument");
    }
    if (memchr(lease->key, '\0', sizeof lease->key) == NULL ||
        memchr(lease->owner, '\0', sizeof lease->owner) == NULL) {
        return loams__meta_fail(err, -EINVAL, "lease release: key or owner not terminated");
    }
    int rc = check_task("release", lease->key, err);
    if (rc != 0) {
        return rc;
    }
    char tkey[LOAMS_META_KEY_MAX + 1];
    size_t tklen = task_key(tkey, sizeof tkey, lease->key);
    for (int attempt = 0; attempt < RENEW_ATTEMPTS; attempt++) {
        int found;
        uint64_t version;
        loams_lease cur;
        memset(&cur, 0, sizeof cur);
        rc = read_task(m, lease->key, &found, &cur, &version, err);
        if (rc != 0) {
            return rc;
        }
        if (!found || cur.epoch != lease->epoch || strcmp(cur.owner, lease->owner) != 0) {
            return 0; /* not ours any more: nothing to release */
        }
        loams_meta_compare c = {
            .kind = LOAMS_CMP_VERSION, .key = tkey, .key_len = tklen, .version = version};
        loams_meta_write w = {.kind = LOAMS_OP_DELETE, .key = tkey, .key_len = tklen};
        rc = loams_meta_txn(m, &c, 1, &w, 1, NULL, err);
        if (rc == LOAMS_ECONFLICT) {
            continue;
        }
        if (rc == 0) {
            loams_log_task(LOAMS_LOG_DEBUG, "lease", lease->key, lease->epoch, "released by %s",
                           lease->owner);
        }
        return rc;
    }
    return loams__meta_fail(err, LOAMS_ECONFLICT,
                            "lease: task %s kept changing during %d release attempts: retry",
                            lease->key, RENEW_ATTEMPTS);
}

void loams_lease_fence_compare(const loams_lease *lease, loams_fence_storage *storage,
                               loams_meta_compare *cmp)
{
    size_t klen = fence_key(storage->key, sizeof storage->key, lease->key);
    int vlen = snprintf(storage->value, sizeof storage->value, "%" PRIu64, lease->epoch);
    memset(cmp, 0, sizeof *cmp);
    cmp->kind = LOAMS_CMP_VALUE;
    cmp->key = storage->key;
    cmp->key_len = klen;
    cmp->value = storage->value;
    cmp->value_len = (size_t)vlen;
}

int loams_lease_run_over(loams_meta *m, const char *task, uint64_t epoch, int *over,
                         loams_lease_over_storage *st, loams_meta_compare cmps[2],
                         loams_meta_err *err)
{
    int rc = check_task("check", task, err);
    if (rc != 0) {
        return rc;
    }
    if (m == NULL || over == NULL || st == NULL || cmps == NULL) {
        return loams__meta_fail(err, -EINVAL, "lease check: NULL argument");
    }
    *over = 0;
    int found;
    uint64_t task_version;
    loams_lease cur;
    memset(&cur, 0, sizeof cur);
    if ((rc = read_task(m, task, &found, &cur, &task_version, err)) != 0) {
        return rc;
    }
    size_t fklen;
    uint64_t fence_epoch, fence_version;
    if ((rc = read_fence(m, task, st->fence_key, sizeof st->fence_key, &fence_epoch, &fence_version,
                         &fklen, err)) != 0) {
        return rc;
    }
    /* Taken again (a higher epoch anywhere), or released (no record). */
    *over = fence_epoch > epoch || (found && cur.epoch > epoch) || !found;
    size_t tklen = task_key(st->task_key, sizeof st->task_key, task);
    cmps[0] = (loams_meta_compare){
        .kind = LOAMS_CMP_VERSION, .key = st->task_key, .key_len = tklen, .version = task_version};
    cmps[1] = (loams_meta_compare){.kind = LOAMS_CMP_VERSION,
                                   .key = st->fence_key,
                                   .key_len = fklen,
                                   .version = fence_version};
    return 0;
}
