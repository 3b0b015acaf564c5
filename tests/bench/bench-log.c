/*
 * bench-log.c - stream log throughput: append and read records/s and MB/s
 * for 100-byte and 1 KiB values in batches of 1, 100 and 10,000 (a
 * 4-partition stream, records without keys, so round-robin), with the peak
 * RSS of each case (each runs in its own process).  The reference, measured
 * in the same run, is sequential file I/O of the same bytes (write(2) and
 * read(2) in 1 MiB chunks): the floor no log can beat.  Rates are given per
 * CPU second of the case's process (the per-core figure, which other load
 * on a shared machine does not distort) and per wall-clock second.
 *
 *   bench-log [--dir DIR] [--sync] [--quick | --smoke]
 *
 * --sync commits durably (fsync per batch) instead of the default no-sync
 * mode that measures the log's CPU cost; --quick runs a tenth of the
 * records; --smoke a few thousand (for `make check`: every case runs and
 * reads back what it appended, no timing goal).  Not a test: it prints
 * figures, and the load average at its start and end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "meta/metastore.h"
#include "stream/streamlog.h"

typedef struct result {
    double append_s, read_s;     /* wall clock */
    double append_cpu, read_cpu; /* CPU time of the process (user + system) */
    double read2_cpu;            /* a second read of the same records */
    long records;
    long long bytes;
    int ok;
    char msg[1024];
} result;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_log_case(const char *dir, size_t vsize, size_t batch, long records, int sync,
                         result *res)
{
    loams_meta *meta = NULL;
    loams_streamlog *log = NULL;
    loams_stream *s = NULL;
    loams_meta_options mo = {.no_sync = !sync};
    loams_streamlog_options lo = {.no_sync = !sync};
    loams_stream_err e = {{0}};
    if (loams_meta_open(dir, &mo, &meta, NULL) != 0 ||
        loams_streamlog_open(dir, meta, &lo, &log, &e) != 0) {
        snprintf(res->msg, sizeof res->msg, "open: %s", e.msg);
        return;
    }
    loams_stream_def d = {.partitions = 4};
    snprintf(d.name.ns, sizeof d.name.ns, "bench");
    snprintf(d.name.name, sizeof d.name.name, "s");
    if (loams_stream_create(log, &d, 0, NULL, &e) != 0 ||
        loams_stream_open(log, &d.name, &s, &e) != 0) {
        snprintf(res->msg, sizeof res->msg, "create: %s", e.msg);
        return;
    }
    char *value = malloc(vsize);
    loams_stream_record_in *recs = calloc(batch, sizeof *recs);
    loams_stream_pos *pos = calloc(batch, sizeof *pos);
    if (value == NULL || recs == NULL || pos == NULL) {
        snprintf(res->msg, sizeof res->msg, "out of memory");
        return;
    }
    for (size_t i = 0; i < vsize; i++) {
        value[i] = (char)('a' + i % 26);
    }
    for (size_t i = 0; i < batch; i++) {
        recs[i].value = value;
        recs[i].value_len = vsize;
        recs[i].partition = -1;
    }
    double t0 = now_s(), c0 = cpu_s();
    for (long done = 0; done < records; done += (long)batch) {
        if (loams_stream_append(s, recs, batch, pos, &e) != 0) {
            snprintf(res->msg, sizeof res->msg, "append: %s", e.msg);
            return;
        }
    }
    res->append_s = now_s() - t0;
    res->append_cpu = cpu_s() - c0;
    loams_stream_slice sl;
    loams_stream_slice_init(&sl);
    unsigned long sum = 0;
    long seen = 0;
    for (int pass = 0; pass < 2; pass++) {
        seen = 0;
        t0 = now_s();
        c0 = cpu_s();
        for (int p = 0; p < 4; p++) {
            int64_t at = 0;
            for (;;) {
                if (loams_stream_read(s, p, at, 10000, 0, &sl, &e) != 0) {
                    snprintf(res->msg, sizeof res->msg, "read: %s", e.msg);
                    return;
                }
                if (sl.count == 0) {
                    break;
                }
                for (size_t i = 0; i < sl.count; i++) {
                    const unsigned char *v = sl.records[i].value;
                    sum += v[0] + v[sl.records[i].value_len - 1];
                }
                seen += (long)sl.count;
                at = sl.next_offset;
            }
        }
        loams_stream_slice_release(&sl);
        if (pass == 0) {
            res->read_s = now_s() - t0;
            res->read_cpu = cpu_s() - c0;
        } else {
            res->read2_cpu = cpu_s() - c0;
        }
    }
    loams_stream_slice_free(&sl);
    if (seen != records || sum == 0) {
        snprintf(res->msg, sizeof res->msg, "read %ld records of %ld", seen, records);
        return;
    }
    res->records = records;
    res->bytes = (long long)records * (long long)vsize;
    res->ok = 1;
    free(value);
    free(recs);
    free(pos);
    loams_stream_close(s);
    loams_streamlog_close(log);
    loams_meta_close(meta);
}

static void run_file_case(const char *dir, long long bytes, int sync, result *res)
{
    char path[600];
    snprintf(path, sizeof path, "%s/reference.bin", dir);
    size_t chunk = 1 << 20;
    char *buf = malloc(chunk);
    if (buf == NULL) {
        return;
    }
    memset(buf, 'x', chunk);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (fd < 0) {
        snprintf(res->msg, sizeof res->msg, "open %s: %s", path, strerror(errno));
        free(buf);
        return;
    }
    double t0 = now_s(), c0 = cpu_s();
    for (long long done = 0; done < bytes; done += (long long)chunk) {
        if (write(fd, buf, chunk) != (ssize_t)chunk) {
            snprintf(res->msg, sizeof res->msg, "write: %s", strerror(errno));
            goto out;
        }
    }
    if (sync) {
        fdatasync(fd);
    }
    res->append_s = now_s() - t0;
    res->append_cpu = cpu_s() - c0;
    lseek(fd, 0, SEEK_SET);
    t0 = now_s();
    c0 = cpu_s();
    while (read(fd, buf, chunk) > 0) {
    }
    res->read_s = now_s() - t0;
    res->read_cpu = cpu_s() - c0;
    res->bytes = bytes;
    res->ok = 1;
out:
    close(fd);
    unlink(path);
    free(buf);
}

/* Runs one case in a child; returns its peak RSS in KiB. */
static long in_child(const char *base, int idx, size_t vsize, size_t batch, long records, int sync,
                     int file_ref, result *res)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/case%d", base, idx);
    mkdir(dir, 0755);
    int fds[2];
    if (pipe(fds) != 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        result r;
        memset(&r, 0, sizeof r);
        if (file_ref) {
            run_file_case(dir, (long long)records * (long long)vsize, sync, &r);
        } else {
            run_log_case(dir, vsize, batch, records, sync, &r);
        }
        if (write(fds[1], &r, sizeof r) != (ssize_t)sizeof r) {
            _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    memset(res, 0, sizeof *res);
    if (read(fds[0], res, sizeof *res) != (ssize_t)sizeof *res) {
        snprintf(res->msg, sizeof res->msg, "the case process died");
    }
    close(fds[0]);
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench-log: could not remove %s\n", dir);
    }
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    const char *base = NULL;
    int sync = 0, quick = 0, smoke = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            base = argv[++i];
        } else if (strcmp(argv[i], "--sync") == 0) {
            sync = 1;
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--smoke") == 0) {
            smoke = 1;
        } else {
            fprintf(stderr, "usage: bench-log [--dir DIR] [--sync] [--quick | --smoke]\n");
            return 2;
        }
    }
    char tmpl[] = "/tmp/bench-log.XXXXXX";
    if (base == NULL) {
        base = mkdtemp(tmpl);
        if (base == NULL) {
            perror("mkdtemp");
            return 1;
        }
    }
    static const size_t sizes[] = {100, 1024};
    static const size_t batches[] = {1, 100, 10000};
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) != 3) {
        load[0] = load[1] = load[2] = -1;
    }
    printf("stream log benchmark (%s commits, 4 partitions, round-robin, 1 process)\n",
           sync ? "durable (fsync)" : "no-sync");
    printf("load average at start: %.2f %.2f %.2f\n\n", load[0], load[1], load[2]);
    printf("Rates per CPU second of the process (user + system: the per-core figure,\n"
           "independent of other load on the machine); wall-clock rates after '|'.\n\n");
    printf("'read' is the first read (the process maps the pages: page faults), 'reread'\n"
           "the second read of the same records.\n\n");
    printf("%-14s %8s %12s %7s %12s %7s %12s %7s | %11s %11s %9s\n", "case", "records",
           "append rec/s", "MB/s", "read rec/s", "MB/s", "reread rec/s", "MB/s", "wall append",
           "wall read", "peak RSS");
    int idx = 0, failed = 0;
    for (size_t si = 0; si < 2; si++) {
        for (size_t bi = 0; bi < 3; bi++) {
            size_t vsize = sizes[si], batch = batches[bi];
            long records = batch == 1     ? (sync ? 2000 : 50000)
                           : batch == 100 ? (vsize == 100 ? 1000000 : 300000)
                                          : (vsize == 100 ? 2000000 : 300000);
            if (sync && batch == 100) {
                records /= 10;
            }
            if (quick) {
                records /= 10;
            }
            if (smoke) {
                records = batch == 10000 ? 20000 : batch == 100 ? 2000 : 200;
            }
            records = (records / (long)batch) * (long)batch;
            result r;
            long rss = in_child(base, idx++, vsize, batch, records, sync, 0, &r);
            char name[64];
            snprintf(name, sizeof name, "%zu B x %zu", vsize, batch);
            if (!r.ok) {
                printf("%-22s failed: %s\n", name, r.msg);
                failed = 1;
                continue;
            }
            printf("%-14s %8ld %12.0f %7.1f %12.0f %7.1f %12.0f %7.1f | %11.0f %11.0f %5.1f MiB\n",
                   name, r.records, r.records / r.append_cpu, r.bytes / 1e6 / r.append_cpu,
                   r.records / r.read_cpu, r.bytes / 1e6 / r.read_cpu, r.records / r.read2_cpu,
                   r.bytes / 1e6 / r.read2_cpu, r.records / r.append_s, r.records / r.read_s,
                   rss / 1024.0);
            fflush(stdout);
        }
    }
    /* The reference: the same bytes as the largest 100-byte case. */
    long long ref_bytes = (smoke ? 20000LL : quick ? 200000LL : 2000000LL) * 100;
    result r;
    long rss = in_child(base, idx++, 100, 1, ref_bytes / 100, sync, 1, &r);
    if (r.ok) {
        printf("%-14s %8s %12s %7.0f %12s %7.0f %12s %7s | %11s %11s %5.1f MiB\n", "ref: file I/O",
               "-", "-", r.bytes / 1e6 / r.append_cpu, "-", r.bytes / 1e6 / r.read_cpu, "-", "-",
               "-", "-", rss / 1024.0);
    } else {
        printf("reference failed: %s\n", r.msg);
    }
    if (getloadavg(load, 3) != 3) {
        load[0] = load[1] = load[2] = -1;
    }
    printf("\nload average at end: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
    if (base == tmpl) {
        rmdir(base);
    }
    return failed;
}
