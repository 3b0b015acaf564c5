/*
 * meta_under_test.h - which metastore backend a contract test runs on.
 *
 * By default a test opens the LMDB metastore in its temporary directory.
 * With LOAMS_TEST_META set to an etcd address (tests/integration/
 * metastore-etcd.sh sets it after starting a real etcd), each test gets a
 * fresh prefix under it instead ("<address's prefix>/<pid>-<n>"), so the
 * same test code proves the same contract on both backends.
 *
 * etcd's revision is cluster-wide: a fresh prefix's first write gets
 * whatever revision etcd is at.  meta_test_base() is that offset (0 on
 * LMDB): a test expecting version N expects meta_test_base() + N.
 */
#ifndef LOAMS_TESTS_META_UNDER_TEST_H
#define LOAMS_TESTS_META_UNDER_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meta/metastore.h"

static uint64_t meta_test_base_rev;

/* 1 when the tests run on etcd. */
static inline int meta_test_on_etcd(void)
{
    const char *e = getenv("LOAMS_TEST_META");
    return e != NULL && e[0] != '\0';
}

/* The address a test opens: `dir`, or a fresh etcd prefix. */
static inline void meta_test_where(const char *dir, char *out, size_t size)
{
    static unsigned n;
    const char *e = getenv("LOAMS_TEST_META");
    if (e == NULL || e[0] == '\0') {
        snprintf(out, size, "%s", dir);
        return;
    }
    const char *q = strchr(e, '?');
    size_t head = q != NULL ? (size_t)(q - e) : strlen(e);
    while (head > 0 && e[head - 1] == '/') {
        head--;
    }
    snprintf(out, size, "%.*s/%ld-%u%s", (int)head, e, (long)getpid(), n++, q != NULL ? q : "");
}

/* On etcd: learns the revision a fresh prefix starts at (a write and a
 * delete of a probe key, which leave the prefix empty) and keeps it as
 * meta_test_base(); on LMDB: 0.  Call once, right after the first open. */
static inline int meta_test_learn_base(loams_meta *m)
{
    meta_test_base_rev = 0;
    if (!meta_test_on_etcd()) {
        return 0;
    }
    uint64_t v = 0;
    loams_meta_err err;
    int rc = loams_meta_put(m, "~probe", 6, "", 0, &v, &err);
    if (rc == 0) {
        rc = loams_meta_delete(m, "~probe", 6, &err);
    }
    meta_test_base_rev = v + 1;
    return rc;
}

static inline uint64_t meta_test_base(void)
{
    return meta_test_base_rev;
}

#endif
