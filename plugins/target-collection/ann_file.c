/*
 * ann_file.c - owns vector index objects as local files: writing one in a
 * hot build's work directory, and mapping one read-only (ann_file.h).
 */
#include "ann_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <loams/status.h>

int loams__ann_map_file(const char *path, uint64_t want, loams__ann_map *out, loams_kit_err *e)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return loams_kit_err_set(e, -err, "cannot open vector index %s: %s", path, strerror(err));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return loams_kit_err_set(e, -err, "cannot stat vector index %s: %s", path, strerror(err));
    }
    if ((uint64_t)st.st_size != want || want == 0 || want > SIZE_MAX) {
        close(fd);
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "vector index %s has %lld bytes, the manifest says %llu: the "
                                 "object was damaged or replaced after it was written",
                                 path, (long long)st.st_size, (unsigned long long)want);
    }
    void *p = mmap(NULL, (size_t)want, PROT_READ, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (p == MAP_FAILED) {
        return loams_kit_err_set(e, -err, "cannot map vector index %s: %s", path, strerror(err));
    }
    out->data = p;
    out->len = (size_t)want;
    out->mapped = 1;
    return 0;
}

void loams__ann_unmap(loams__ann_map *m)
{
    if (m->data != NULL) {
        if (m->mapped) {
            munmap(m->data, m->len);
        } else {
            loams_kit_mem_free(m->mem, m->data);
        }
    }
    memset(m, 0, sizeof *m);
}

typedef struct file_sink {
    int fd;
    const char *path;
} file_sink;

static int write_all(void *ud, const void *data, size_t len, loams_kit_err *e)
{
    file_sink *f = ud;
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(f->fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            int err = errno;
            return loams_kit_err_set(e, -err, "writing vector index %s: %s", f->path,
                                     strerror(err));
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int loams__ann_build_file(const loams_kit_mem *mem, loams__split_reader *r,
                          const loams__delset *del, uint32_t fid, const loams__ann_params *p,
                          const char *path, loams__ann_cancel_fn cancel, void *cancel_ud,
                          uint64_t *bytes, uint32_t *nodes, loams_kit_err *e)
{
    const float *data;
    const unsigned char *present;
    uint32_t dim;
    int rc = loams__split_reader_vectors(r, fid, &data, &present, &dim, e);
    if (rc != 0) {
        return rc;
    }
    loams__ann_builder *b = NULL;
    rc = loams__ann_build(mem, p, data, dim, loams__split_reader_docs(r), present,
                          del != NULL ? del->bits : NULL, cancel, cancel_ud, &b, e);
    if (rc != 0) {
        return rc;
    }
    file_sink f = {open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), path};
    if (f.fd < 0) {
        int err = errno;
        loams__ann_builder_free(b);
        return loams_kit_err_set(e, -err, "cannot create vector index %s: %s", path, strerror(err));
    }
    rc = loams__ann_encode(b, write_all, &f, bytes, e);
    *nodes = loams__ann_builder_nodes(b);
    loams__ann_builder_free(b);
    if (close(f.fd) != 0 && rc == 0) {
        int err = errno;
        rc = loams_kit_err_set(e, -err, "writing vector index %s: %s", path, strerror(err));
    }
    if (rc != 0) {
        return rc;
    }
    /* checked as a reader will see it */
    loams__ann_map m;
    if ((rc = loams__ann_map_file(path, *bytes, &m, e)) != 0) {
        return rc;
    }
    loams__ann_index *x = NULL;
    rc = loams__ann_open(mem, m.data, m.len, path, &x, e);
    loams__ann_free(x);
    loams__ann_unmap(&m);
    return rc;
}
