/*
 * lmdb_gate.c - the gate in front of LMDB's robust mutexes (lmdb_gate.h).
 */
#include "meta/lmdb_gate.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef F_OFD_SETLKW /* before Linux 3.15: process-owned locks */
#define F_OFD_SETLKW F_SETLKW
#define F_OFD_SETLK F_SETLK
#endif

struct loams__lmdb_gate {
    int fd;
    pthread_mutex_t mu[2];
};

static int gate_open(const char *path, int flags, loams__lmdb_gate **out)
{
    *out = NULL;
    loams__lmdb_gate *g = calloc(1, sizeof *g);
    if (g == NULL) {
        return -ENOMEM;
    }
    g->fd = open(path, O_RDWR | O_CLOEXEC | flags, 0660);
    if (g->fd < 0) {
        int en = errno;
        free(g);
        return -en;
    }
    pthread_mutex_init(&g->mu[0], NULL);
    pthread_mutex_init(&g->mu[1], NULL);
    *out = g;
    return 0;
}

int loams__lmdb_gate_open(const char *path, loams__lmdb_gate **out)
{
    return gate_open(path, O_CREAT, out);
}

int loams__lmdb_gate_open_existing(const char *path, loams__lmdb_gate **out)
{
    return gate_open(path, 0, out);
}

void loams__lmdb_gate_close(loams__lmdb_gate *g)
{
    if (g == NULL) {
        return;
    }
    close(g->fd);
    pthread_mutex_destroy(&g->mu[0]);
    pthread_mutex_destroy(&g->mu[1]);
    free(g);
}

int loams__lmdb_gate_lock(loams__lmdb_gate *g, int which)
{
    pthread_mutex_lock(&g->mu[which]);
    /* OFD locks: owned by the open file description, so no false EDEADLK
     * from the kernel's per-process deadlock detection. */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = which, .l_len = 1};
    int rc;
    do {
        rc = fcntl(g->fd, F_OFD_SETLKW, &fl);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int en = errno;
        pthread_mutex_unlock(&g->mu[which]);
        return en;
    }
    return 0;
}

void loams__lmdb_gate_unlock(loams__lmdb_gate *g, int which)
{
    struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = which, .l_len = 1};
    fcntl(g->fd, F_OFD_SETLK, &fl);
    pthread_mutex_unlock(&g->mu[which]);
}
