/*
 * bench-search.c - full-text query latency of the collection's pruned
 * evaluator (MaxScore over block-max postings) next to its exhaustive
 * evaluator and SQLite FTS5, on real text, in one run.
 *
 *   bench-search [-n DOCS] [-s DOCS_PER_SPLIT] [-q QUERIES] [-d DIR] [-R]
 *
 * Corpus: the entries of the Debian changelogs under
 * /usr/share/doc/PACKAGE/changelog.Debian.gz (English written by people: one
 * document per entry, "title" = its header line, "body" = its text),
 * replicated with distinct _pk values until DOCS documents (default
 * 1,000,000).  Reading them is not timed.  Timed:
 *   index   the split writer over every document (tokenize, index,
 *           compress stored blocks, write the split files);
 *   query   top-10 queries of 1, 2 and 4 words drawn from the corpus
 *           (a random word of a random document, 3+ letters), disjunctive
 *           ("a b") and conjunctive ("+a +b"), each through the pruned and
 *           the exhaustive evaluator, after one untimed pass; p50 and p99
 *           of the thread's CPU time per query (the machine may be shared:
 *           wall time would measure the neighbours);
 *   FTS5    the same documents bulk-inserted (one transaction) and the same
 *           queries ("a" OR "b" / "a" AND "b", ORDER BY rank LIMIT 10),
 *           one pass, timed the same way.
 * -R skips FTS5.  One thread: everything runs on one core.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loams/kit/buf.h"
#include "collection_manifest.h"
#include "collection_search.h"
#include "search_text.h"
#include "split_reader.h"
#include "split_writer.h"

typedef struct entry {
    char *title, *body;
} entry;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this thread: the machine may be shared, so a query's cost is
 * measured as the core time it takes, not the wall time others stretch. */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

_Noreturn static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench-search: %s: %s\n", what, msg);
    exit(1);
}

static char *xstrdup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d == NULL) {
        die("malloc", "out of memory");
    }
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* The changelog entries of every package: header line, then indented text,
 * then the " -- maintainer  date" trailer. */
static entry *read_corpus(size_t *n_out)
{
    glob_t g;
    if (glob("/usr/share/doc/*/changelog.Debian.gz", 0, NULL, &g) != 0) {
        die("glob", "no /usr/share/doc/*/changelog.Debian.gz on this machine");
    }
    entry *es = NULL;
    size_t n = 0, cap = 0;
    loams_kit_buf body = LOAMS_KIT_BUF_INIT;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "gzip -dc '%s'", g.gl_pathv[i]);
        FILE *f = popen(cmd, "r");
        if (f == NULL) {
            continue;
        }
        char line[8192], *title = NULL;
        while (fgets(line, sizeof line, f) != NULL) {
            size_t len = strlen(line);
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) {
                line[--len] = '\0';
            }
            if (len > 0 && line[0] != ' ' && line[0] != '\t') {
                free(title);
                title = xstrdup(line, len);
                body.len = 0;
            } else if (strncmp(line, " -- ", 4) == 0) {
                if (title != NULL && body.len > 0) {
                    if (n == cap) {
                        cap = cap ? cap * 2 : 4096;
                        es = realloc(es, cap * sizeof *es);
                        if (es == NULL) {
                            die("realloc", "out of memory");
                        }
                    }
                    es[n].title = title;
                    es[n].body = xstrdup((const char *)body.data, body.len);
                    n++;
                    title = NULL;
                }
                body.len = 0;
            } else if (title != NULL) {
                const char *p = line;
                while (*p == ' ' || *p == '\t') {
                    p++;
                }
                if (*p != '\0' && (loams_kit_buf_append(&body, p, strlen(p)) != 0 ||
                                   loams_kit_buf_append(&body, "\n", 1) != 0)) {
                    die("buf", "out of memory");
                }
            }
        }
        free(title);
        pclose(f);
    }
    globfree(&g);
    loams_kit_buf_free(&body);
    *n_out = n;
    return es;
}

static int file_sink(void *ud, const void *p, size_t n, loams_kit_err *e)
{
    if (fwrite(p, 1, n, ud) != n) {
        return loams_kit_err_set(e, -EIO, "write failed: %s", strerror(errno));
    }
    return 0;
}

static int file_read(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    int fd = *(int *)ud;
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, (char *)dst + got, len - got, (off_t)(off + got));
        if (r <= 0) {
            return loams_kit_err_set(e, -EIO, "read failed");
        }
        got += (size_t)r;
    }
    return 0;
}

/* JSON string body of s (quotes, backslashes, control bytes escaped). */
static void json_str(loams_kit_buf *b, const char *s)
{
    loams_kit_buf_append(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') {
            loams_kit_buf_append(b, "\\", 1);
            loams_kit_buf_append(b, p, 1);
        } else if (c < 0x20) {
            char u[8];
            snprintf(u, sizeof u, "\\u%04x", c);
            loams_kit_buf_append(b, u, 6);
        } else {
            loams_kit_buf_append(b, p, 1);
        }
    }
    loams_kit_buf_append(b, "\"", 1);
}

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* A word of 3+ ASCII letters from a random entry. */
static void pick_word(const entry *es, size_t n, uint32_t *seed, char *out, size_t cap)
{
    for (;;) {
        const entry *en = &es[rnd(seed) % n];
        const char *s = en->body;
        size_t len = strlen(s);
        if (len == 0) {
            continue;
        }
        size_t at = rnd(seed) % len;
        while (at > 0 && ((s[at - 1] | 32) >= 'a' && (s[at - 1] | 32) <= 'z')) {
            at--;
        }
        size_t end = at;
        while (end < len && ((s[end] | 32) >= 'a' && (s[end] | 32) <= 'z')) {
            end++;
        }
        if (end - at >= 3 && end - at < cap) {
            for (size_t i = at; i < end; i++) {
                out[i - at] = (char)(s[i] | 32);
            }
            out[end - at] = '\0';
            return;
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)ceil(p * (double)n) - 1;
    return v[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
    size_t n = 1000000, per_split = 250000, nq = 200;
    const char *dir = NULL;
    int reference = 1, opt;
    while ((opt = getopt(argc, argv, "n:s:q:d:R")) != -1) {
        switch (opt) {
        case 'n': n = strtoul(optarg, NULL, 10); break;
        case 's': per_split = strtoul(optarg, NULL, 10); break;
        case 'q': nq = strtoul(optarg, NULL, 10); break;
        case 'd': dir = optarg; break;
        case 'R': reference = 0; break;
        default:
            fprintf(stderr, "usage: bench-search [-n DOCS] [-s DOCS_PER_SPLIT] [-q QUERIES] "
                            "[-d DIR] [-R]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char tmpl[] = "/tmp/bench-search-XXXXXX";
    if (dir == NULL && (dir = mkdtemp(tmpl)) == NULL) {
        die("mkdtemp", strerror(errno));
    }
    size_t n_entries;
    entry *es = read_corpus(&n_entries);
    if (n_entries == 0) {
        die("corpus", "no changelog entries");
    }
    uint64_t text_bytes = 0;
    for (size_t i = 0; i < n_entries; i++) {
        text_bytes += strlen(es[i].title) + strlen(es[i].body);
    }
    printf("bench-search: %zu changelog entries (%.1f MB of text, %.0f bytes each), replicated to "
           "%zu documents, %zu per split, files in %s\n",
           n_entries, text_bytes / 1e6, (double)text_bytes / (double)n_entries, n, per_split, dir);

    /* ---- index (timed) ---- */
    loams_kit_err err;
    loams__coll_manifest *m;
    if (loams__coll_manifest_new(NULL, "bench", "changelogs", &m, &err) != 0 ||
        loams__coll_manifest_map(m, "title", LOAMS__CT_TEXT, 0, &err) < 0 ||
        loams__coll_manifest_map(m, "body", LOAMS__CT_TEXT, 0, &err) < 0) {
        die("manifest", err.msg);
    }
    size_t ns = (n + per_split - 1) / per_split;
    uint64_t index_bytes = 0;
    loams_kit_buf json = LOAMS_KIT_BUF_INIT;
    double t_index = 0, c_index = 0;
    for (size_t s = 0; s < ns; s++) {
        char path[700];
        snprintf(path, sizeof path, "%s/split-%zu", dir, s);
        FILE *f = fopen(path, "wb");
        if (f == NULL) {
            die(path, strerror(errno));
        }
        double t0 = now(), c0 = cpu();
        loams__split_writer_opts o;
        loams__split_writer_opts_default(&o);
        loams__split_writer *w;
        uint32_t ft, fb, doc;
        if (loams__split_writer_new(&o, file_sink, f, &w, &err) != 0 ||
            loams__split_writer_field(w, "title", LOAMS__FIELD_TEXT, 0, &ft, &err) != 0 ||
            loams__split_writer_field(w, "body", LOAMS__FIELD_TEXT, 0, &fb, &err) != 0) {
            die("writer", err.msg);
        }
        size_t lo = s * per_split, hi = lo + per_split < n ? lo + per_split : n;
        for (size_t i = lo; i < hi; i++) {
            const entry *en = &es[i % n_entries];
            char pk[32];
            snprintf(pk, sizeof pk, "c-%zu", i);
            json.len = 0;
            loams_kit_buf_append(&json, "{\"title\":", 9);
            json_str(&json, en->title);
            loams_kit_buf_append(&json, ",\"body\":", 8);
            json_str(&json, en->body);
            loams_kit_buf_append(&json, "}", 1);
            if (loams__split_writer_begin_doc(w, pk, strlen(pk), &doc, &err) != 0 ||
                loams__split_writer_add_text(w, ft, en->title, strlen(en->title), &err) != 0 ||
                loams__split_writer_add_text(w, fb, en->body, strlen(en->body), &err) != 0 ||
                loams__split_writer_end_doc(w, (const char *)json.data, json.len, &err) != 0) {
                die("index", err.msg);
            }
        }
        uint64_t size;
        if (loams__split_writer_finish(w, &size, &err) != 0) {
            die("finish", err.msg);
        }
        loams__split_writer_free(w);
        fclose(f);
        t_index += now() - t0;
        c_index += cpu() - c0;
        index_bytes += size;
    }
    loams_kit_buf_free(&json);
    printf("%-40s %10.0f docs/s wall %10.0f docs/s cpu  %.1f MB of splits\n",
           "index (split writer)", (double)n / t_index, (double)n / c_index, index_bytes / 1e6);

    /* ---- open ---- */
    loams__split_reader **readers = calloc(ns, sizeof *readers);
    const loams__delset **dels = calloc(ns, sizeof *dels);
    int *fds = calloc(ns, sizeof *fds);
    for (size_t s = 0; s < ns; s++) {
        char path[700];
        snprintf(path, sizeof path, "%s/split-%zu", dir, s);
        struct stat st;
        if ((fds[s] = open(path, 0)) < 0 || fstat(fds[s], &st) != 0) {
            die(path, strerror(errno));
        }
        if (loams__split_reader_open(NULL, file_read, &fds[s], (uint64_t)st.st_size, path,
                                     &readers[s], &err) != 0) {
            die("open", err.msg);
        }
        loams__coll_fstats fst[2];
        for (size_t f = 0; f < 2; f++) {
            loams__split_field_info fi;
            loams__split_reader_field_info(readers[s], f, &fi);
            fst[f].name = (char *)fi.name;
            fst[f].docs = fi.docs;
            fst[f].tokens = fi.tokens;
        }
        char key[32];
        snprintf(key, sizeof key, "split-%zu", s);
        uint32_t docs = loams__split_reader_docs(readers[s]);
        loams__coll_split sp = {key, s + 1, docs, docs, (uint64_t)st.st_size, 0, NULL,
                                fst, 2,     NULL, 0};
        if (loams__coll_manifest_add_split(m, &sp, &err) != 0) {
            die("manifest", err.msg);
        }
    }
    loams__coll_view v = {m, readers, dels, NULL, NULL};

    /* ---- queries ---- */
    static const size_t words_per[] = {1, 2, 4};
    uint32_t seed = 0x5EA4C4u;
    size_t n_sets = 6;
    char ***qs = calloc(n_sets, sizeof *qs);   /* our syntax */
    char ***fts = calloc(n_sets, sizeof *fts); /* FTS5 syntax */
    for (size_t set = 0; set < n_sets; set++) {
        size_t nw = words_per[set / 2];
        int conj = (int)(set % 2);
        qs[set] = calloc(nq, sizeof **qs);
        fts[set] = calloc(nq, sizeof **fts);
        for (size_t q = 0; q < nq; q++) {
            char a[256] = "", b[512] = "";
            for (size_t w = 0; w < nw; w++) {
                char word[64];
                pick_word(es, n_entries, &seed, word, sizeof word);
                snprintf(a + strlen(a), sizeof a - strlen(a), "%s%s%s", w ? " " : "",
                         conj ? "+" : "", word);
                snprintf(b + strlen(b), sizeof b - strlen(b), "%s\"%s\"",
                         w ? (conj ? " AND " : " OR ") : "", word);
            }
            qs[set][q] = strdup(a);
            fts[set][q] = strdup(b);
        }
    }
    double *lat = calloc(nq, sizeof *lat);
    loams__search_hit hits[10];
    size_t nh;
    printf("\ntop-10 query cost, ms of one core's time (p50 / p99), %zu queries per row:\n", nq);
    printf("%-26s %18s %18s %18s\n", "", "pruned", "exhaustive", "SQLite FTS5");
    double fts_p50[6] = {0}, fts_p99[6] = {0};
    if (reference) {
        char dbpath[700];
        snprintf(dbpath, sizeof dbpath, "%s/fts5.db", dir);
        unlink(dbpath);
        sqlite3 *db;
        sqlite3_stmt *ins, *sel;
        if (sqlite3_open(dbpath, &db) != SQLITE_OK ||
            sqlite3_exec(db,
                         "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                         "CREATE VIRTUAL TABLE t USING fts5(pk UNINDEXED, title, body);",
                         NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?,?,?)", -1, &ins, NULL) != SQLITE_OK) {
            die("sqlite", sqlite3_errmsg(db));
        }
        double t0 = now(), c0 = cpu();
        sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
        for (size_t i = 0; i < n; i++) {
            const entry *en = &es[i % n_entries];
            char pk[32];
            snprintf(pk, sizeof pk, "c-%zu", i);
            sqlite3_bind_text(ins, 1, pk, -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(ins, 2, en->title, -1, SQLITE_STATIC);
            sqlite3_bind_text(ins, 3, en->body, -1, SQLITE_STATIC);
            if (sqlite3_step(ins) != SQLITE_DONE) {
                die("sqlite insert", sqlite3_errmsg(db));
            }
            sqlite3_reset(ins);
        }
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        double t_fts = now() - t0, c_fts = cpu() - c0;
        sqlite3_finalize(ins);
        struct stat st;
        stat(dbpath, &st);
        printf("(FTS5 bulk insert: %.0f docs/s wall, %.0f docs/s cpu, %.1f MB; the split writer "
               "indexes %.1fx faster per cpu second)\n",
               (double)n / t_fts, (double)n / c_fts, st.st_size / 1e6, c_fts / c_index);
        if (sqlite3_prepare_v2(db, "SELECT pk, rank FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10",
                               -1, &sel, NULL) != SQLITE_OK) {
            die("sqlite", sqlite3_errmsg(db));
        }
        for (size_t set = 0; set < n_sets; set++) {
            {
                for (size_t q = 0; q < nq; q++) {
                    double q0 = thread_cpu();
                    sqlite3_bind_text(sel, 1, fts[set][q], -1, SQLITE_STATIC);
                    while (sqlite3_step(sel) == SQLITE_ROW) {
                    }
                    sqlite3_reset(sel);
                    lat[q] = (thread_cpu() - q0) * 1e3;
                }
            }
            fts_p50[set] = pct(lat, nq, 0.50);
            fts_p99[set] = pct(lat, nq, 0.99);
        }
        sqlite3_finalize(sel);
        sqlite3_close(db);
    }
    uint64_t mismatches = 0;
    for (size_t set = 0; set < n_sets; set++) {
        double p50[2], p99[2];
        for (int eval = 0; eval < 2; eval++) {
            for (int pass = 0; pass < 2; pass++) {
                for (size_t q = 0; q < nq; q++) {
                    double q0 = thread_cpu();
                    if (loams__coll_search_text_eval(&v, qs[set][q], strlen(qs[set][q]), NULL, 0,
                                                     10, NULL, eval, hits, &nh, NULL, &err) != 0) {
                        die(qs[set][q], err.msg);
                    }
                    lat[q] = (thread_cpu() - q0) * 1e3;
                }
            }
            p50[eval] = pct(lat, nq, 0.50);
            p99[eval] = pct(lat, nq, 0.99);
        }
        /* the two evaluators agree (checked here too, untimed) */
        for (size_t q = 0; q < nq; q++) {
            loams__search_hit h2[10];
            size_t n2;
            loams__coll_search_text_eval(&v, qs[set][q], strlen(qs[set][q]), NULL, 0, 10, NULL,
                                         LOAMS__EVAL_PRUNED, hits, &nh, NULL, &err);
            loams__coll_search_text_eval(&v, qs[set][q], strlen(qs[set][q]), NULL, 0, 10, NULL,
                                         LOAMS__EVAL_EXHAUSTIVE, h2, &n2, NULL, &err);
            mismatches += nh != n2 || memcmp(hits, h2, nh * sizeof *hits) != 0;
        }
        char label[64];
        snprintf(label, sizeof label, "%zu word%s, %s", words_per[set / 2], set / 2 ? "s" : "",
                 set % 2 ? "conjunctive" : "disjunctive");
        printf("%-26s %8.3f / %7.3f %8.3f / %7.3f %8.3f / %7.3f\n", label, p50[0], p99[0], p50[1],
               p99[1], fts_p50[set], fts_p99[set]);
    }
    printf("pruned and exhaustive top-10 differ on %llu of %zu queries\n",
           (unsigned long long)mismatches, n_sets * nq);
    printf("example queries: \"%s\" | \"%s\" | \"%s\"\n", qs[2][0], qs[3][0], qs[4][0]);
    return 0;
}
