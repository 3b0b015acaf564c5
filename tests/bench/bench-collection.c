/*
 * bench-collection.c - indexing and search speed of the collection target's
 * split format, next to SQLite FTS5 measured in the same run.
 *
 *   bench-collection [-n DOCS] [-s DOCS_PER_SPLIT] [-d DIR] [-q QUERIES] [-R] [-z LEVEL|none]
 *                    [-c DOCS_PER_COMMIT]
 *
 * -z sets the document-block codec (zstd level, default 1, or none).
 * -c sets the documents per commit in the plugin run (default 100000).
 * -R skips the FTS5 reference (for profiling the collection side alone).
 *
 * Documents are the shared benchmark tickets (ticket_gen.h, ~400 bytes of
 * JSON each) turned into the fields a link's SELECT gives the collection:
 * _pk, subject, body, priority, tags (a list) and customer (the name).
 * Generating and parsing them is not timed.  Timed:
 *   index   each document's stored JSON is built, its five fields tokenized
 *           and indexed, its document block compressed, and every split
 *           written to a file in DIR (what prepare() does, minus the store);
 *   search  BM25 top-10 queries of one to three words over all splits
 *           (cold: first query after opening; warm: the rest);
 *   plugin  the same documents as host batches of 10,000 rows through the
 *           real target-collection plugin and store-fs (write() per batch,
 *           prepare() + committed() every -c documents): the target's whole
 *           share of a link apply, batch building not counted;
 *   FTS5    the same fields bulk-inserted into an FTS5 table (one
 *           transaction, prepared statement, journal off) and the same
 *           queries with ORDER BY rank LIMIT 10.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <loams/plugin.h>

#include "abi/batch.h"
#include "abi/buf.h"
#include "abi/keylist.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "plugin_loader.h"
#include "abi/store.h"

#include "loams/kit/buf.h"
#include "collection_manifest.h"
#include "collection_search.h"
#include "doc_encode.h"
#include "split_reader.h"
#include "split_format.h"
#include "split_writer.h"
#include "ticket_gen.h"

typedef struct doc {
    char pk[24];
    char *subject, *body, *priority, *customer;
    char *tags[2];
    size_t ntags;
} doc;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds of this process (user + system): the machine may be shared,
 * so throughput is reported per CPU second as well as per wall second. */
static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static long peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

static char *dup_str(const cJSON *j)
{
    return strdup(cJSON_IsString(j) ? j->valuestring : "");
}

static int file_sink(void *ud, const void *p, size_t n, loams_kit_err *e)
{
    if (fwrite(p, 1, n, ud) != n) {
        return loams_kit_err_set(e, -EIO, "write failed: %s", strerror(errno));
    }
    return 0;
}

typedef struct rfile {
    int fd;
} rfile;

static int file_read(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    rfile *f = ud;
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(f->fd, (char *)dst + got, len - got, (off_t)(off + got));
        if (n <= 0) {
            return loams_kit_err_set(e, -EIO, "read failed");
        }
        got += (size_t)n;
    }
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

_Noreturn static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench-collection: %s: %s\n", what, msg);
    exit(1);
}

int main(int argc, char **argv)
{
    size_t n = 1000000, per_split = 250000, nq = 200, per_commit = 100000;
    const char *dir = NULL;
    int opt, reference = 1;
    const char *zlevel = "1";
    while ((opt = getopt(argc, argv, "n:s:d:q:Rz:c:")) != -1) {
        switch (opt) {
        case 'n': n = strtoul(optarg, NULL, 10); break;
        case 's': per_split = strtoul(optarg, NULL, 10); break;
        case 'd': dir = optarg; break;
        case 'q': nq = strtoul(optarg, NULL, 10); break;
        case 'R': reference = 0; break;
        case 'z': zlevel = optarg; break;
        case 'c': per_commit = strtoul(optarg, NULL, 10); break;
        default:
            fprintf(stderr, "usage: bench-collection [-n DOCS] [-s DOCS_PER_SPLIT] [-d DIR] "
                            "[-q QUERIES] [-R] [-z LEVEL|none] [-c DOCS_PER_COMMIT]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char tmpl[] = "/tmp/bench-collection-XXXXXX";
    if (dir == NULL && (dir = mkdtemp(tmpl)) == NULL) {
        die("mkdtemp", strerror(errno));
    }
    /* ---- generate (not timed) ---- */
    doc *docs = calloc(n, sizeof *docs);
    char rec[2048];
    uint64_t json_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = ticket_gen(i, rec, sizeof rec);
        json_bytes += len;
        cJSON *j = cJSON_ParseWithLength(rec, len);
        if (j == NULL) {
            die("ticket_gen", "invalid JSON");
        }
        doc *d = &docs[i];
        snprintf(d->pk, sizeof d->pk, "t-%zu", i);
        d->subject = dup_str(cJSON_GetObjectItem(j, "subject"));
        d->body = dup_str(cJSON_GetObjectItem(j, "body"));
        d->priority = dup_str(cJSON_GetObjectItem(j, "priority"));
        d->customer = dup_str(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "customer"), "name"));
        const cJSON *t;
        cJSON_ArrayForEach(t, cJSON_GetObjectItem(j, "tags"))
        {
            if (d->ntags < 2) {
                d->tags[d->ntags++] = dup_str(t);
            }
        }
        cJSON_Delete(j);
    }
    printf("bench-collection: %zu ticket documents (%.1f MB of source JSON, %.0f bytes each), "
           "%zu per split, files in %s\n",
           n, json_bytes / 1e6, (double)json_bytes / (double)n, per_split, dir);

    /* ---- index (timed) ---- */
    loams_kit_err err;
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    if (strcmp(zlevel, "none") == 0) {
        o.codec = LOAMS__CODEC_NONE;
    } else {
        o.zstd_level = atoi(zlevel);
    }
    size_t n_splits = (n + per_split - 1) / per_split;
    char(*paths)[512] = calloc(n_splits, sizeof *paths);
    uint64_t *sizes = calloc(n_splits, sizeof *sizes);
    loams_kit_buf js = LOAMS_KIT_BUF_INIT;
    uint64_t split_bytes = 0;
    double c0 = cpu();
    double t0 = now();
    for (size_t s = 0; s < n_splits; s++) {
        snprintf(paths[s], sizeof paths[s], "%s/split-%zu.split", dir, s);
        FILE *f = fopen(paths[s], "wb");
        if (f == NULL) {
            die(paths[s], strerror(errno));
        }
        setvbuf(f, NULL, _IOFBF, 1 << 20);
        loams__split_writer *w;
        uint32_t fs, fb, fp, ft, fc, did;
        if (loams__split_writer_new(&o, file_sink, f, &w, &err) != 0 ||
            loams__split_writer_field(w, "subject", LOAMS__FIELD_TEXT, 0, &fs, &err) != 0 ||
            loams__split_writer_field(w, "body", LOAMS__FIELD_TEXT, 0, &fb, &err) != 0 ||
            loams__split_writer_field(w, "priority", LOAMS__FIELD_TEXT, 0, &fp, &err) != 0 ||
            loams__split_writer_field(w, "tags", LOAMS__FIELD_TEXT, 0, &ft, &err) != 0 ||
            loams__split_writer_field(w, "customer", LOAMS__FIELD_TEXT, 0, &fc, &err) != 0) {
            die("writer", err.msg);
        }
        size_t end = (s + 1) * per_split < n ? (s + 1) * per_split : n;
        for (size_t i = s * per_split; i < end; i++) {
            doc *d = &docs[i];
            js.len = 0;
            loams_kit_buf_append(&js, "{\"subject\":", 11);
            loams__json_string(&js, d->subject, strlen(d->subject));
            loams_kit_buf_append(&js, ",\"body\":", 8);
            loams__json_string(&js, d->body, strlen(d->body));
            loams_kit_buf_append(&js, ",\"priority\":", 12);
            loams__json_string(&js, d->priority, strlen(d->priority));
            loams_kit_buf_append(&js, ",\"tags\":[", 9);
            for (size_t t = 0; t < d->ntags; t++) {
                if (t > 0) {
                    loams_kit_buf_append(&js, ",", 1);
                }
                loams__json_string(&js, d->tags[t], strlen(d->tags[t]));
            }
            loams_kit_buf_append(&js, "],\"customer\":", 13);
            loams__json_string(&js, d->customer, strlen(d->customer));
            loams_kit_buf_append(&js, "}", 1);
            if (loams__split_writer_begin_doc(w, d->pk, strlen(d->pk), &did, &err) != 0 ||
                loams__split_writer_add_text(w, fs, d->subject, strlen(d->subject), &err) != 0 ||
                loams__split_writer_add_text(w, fb, d->body, strlen(d->body), &err) != 0 ||
                loams__split_writer_add_text(w, fp, d->priority, strlen(d->priority), &err) != 0 ||
                loams__split_writer_add_text(w, fc, d->customer, strlen(d->customer), &err) != 0) {
                die("index", err.msg);
            }
            for (size_t t = 0; t < d->ntags; t++) {
                if (loams__split_writer_add_text(w, ft, d->tags[t], strlen(d->tags[t]), &err) !=
                    0) {
                    die("index", err.msg);
                }
            }
            if (loams__split_writer_end_doc(w, (const char *)js.data, js.len, &err) != 0) {
                die("index", err.msg);
            }
        }
        if (loams__split_writer_finish(w, &sizes[s], &err) != 0) {
            die("finish", err.msg);
        }
        loams__split_writer_free(w);
        if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0) {
            die(paths[s], strerror(errno));
        }
        split_bytes += sizes[s];
    }
    double t_index = now() - t0;
    double c_index = cpu() - c0;
    long rss_index = peak_rss_mib();

    /* ---- search ---- */
    loams__coll_manifest *m;
    loams__coll_manifest_new(NULL, "bench", "tickets", &m, &err);
    const char *names[] = {"subject", "body", "priority", "tags", "customer"};
    for (size_t i = 0; i < 5; i++) {
        loams__coll_manifest_map(m, names[i], LOAMS__CT_TEXT, 0, &err);
    }
    loams__split_reader **readers = calloc(n_splits, sizeof *readers);
    const loams__delset **dels = calloc(n_splits, sizeof *dels);
    rfile *files = calloc(n_splits, sizeof *files);
    double t1 = now();
    for (size_t s = 0; s < n_splits; s++) {
        files[s].fd = open(paths[s], O_RDONLY);
        if (loams__split_reader_open(NULL, file_read, &files[s], sizes[s], paths[s], &readers[s],
                                     &err) != 0) {
            die("open", err.msg);
        }
        loams__coll_fstats fst[5];
        for (size_t f = 0; f < 5; f++) {
            loams__split_field_info fi;
            loams__split_reader_field_info(readers[s], f, &fi);
            fst[f].name = (char *)fi.name;
            fst[f].docs = fi.docs;
            fst[f].tokens = fi.tokens;
        }
        loams__coll_split sp = {paths[s],
                                s + 1,
                                loams__split_reader_docs(readers[s]),
                                loams__split_reader_docs(readers[s]),
                                sizes[s],
                                0,
                                NULL,
                                fst,
                                5,
                                NULL,
                                0};
        loams__coll_manifest_add_split(m, &sp, &err);
    }
    double t_open = now() - t1;
    loams__coll_view v = {m, readers, dels, NULL, NULL};
    static const char *const qwords[] = {"password",  "invoice",  "export",    "webhook", "timeout",
                                         "customers", "report",   "dashboard", "crashes", "billing",
                                         "urgent",    "lovelace", "cache",     "mobile",  "rate"};
    loams__search_hit hits[10];
    size_t nh;
    uint64_t total_hits = 0;
    double cold = 0, warm = 0;
    char **queries = calloc(nq, sizeof *queries);
    uint64_t r = 12345;
    for (size_t q = 0; q < nq; q++) {
        char buf[128] = "";
        size_t words = 1 + q % 3;
        for (size_t k = 0; k < words; k++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            strcat(buf, k ? " " : "");
            strcat(buf, qwords[(r >> 33) % (sizeof qwords / sizeof qwords[0])]);
        }
        queries[q] = strdup(buf);
        double qs = now();
        if (loams__coll_search_text(&v, buf, strlen(buf), NULL, 0, 10, NULL, hits, &nh, NULL,
                                    &err) != 0) {
            die("search", err.msg);
        }
        double dt = now() - qs;
        total_hits += nh;
        if (q == 0) {
            cold = dt;
        } else {
            warm += dt;
        }
    }
    warm /= (double)(nq > 1 ? nq - 1 : 1);

    /* ---- the plugin through the host API and store-fs ---- */
    double t_plugin = 0, c_plugin = 0, c_prepare = 0;
    uint64_t plugin_bytes = 0;
    {
        const loams_plugin_descriptor *fsd = test_plugin_load("store-fs");
        const loams_plugin_descriptor *cd = test_plugin_load("target-collection");
        if (fsd == NULL || cd == NULL) {
            die("plugins", "cannot load store-fs or target-collection (set top_builddir)");
        }
        const loams_target_vtable *vt = cd->vtable;
        char sroot[600], msg[1024];
        snprintf(sroot, sizeof sroot, "%s/store", dir);
        mkdir(sroot, 0700);
        loams_option_kv sopts[] = {{"root", sroot}, {"fsync", "true"}};
        loams_option_kv copts[] = {{"zstd_level", strcmp(zlevel, "none") ? zlevel : "1"},
                                   {"compression", strcmp(zlevel, "none") ? "zstd" : "none"}};
        loams_store *fs;
        loams_ctx *ctx;
        void *state;
        loams_target_spec spec = {sizeof spec, 0, "bench", "tickets", "bench.l", 1};
        if (loams_store_open(fsd, sopts, 2, &fs, msg, sizeof msg) != 0 ||
            loams_ctx_create(cd, copts, 2, &ctx, msg, sizeof msg) != 0) {
            die("plugin setup", msg);
        }
        if (vt->open(ctx, &spec, fs, &state) != 0) {
            loams_ctx_error(ctx, msg, sizeof msg);
            die("open", msg);
        }
        loams_offsets *off;
        loams_keylist *written;
        loams_offsets_create(&off);
        loams_keylist_create(&written);
        vt->resume(state, NULL, off);
        const size_t per_batch = 10000;
        size_t since_commit = 0;
        for (size_t first = 0; first < n; first += per_batch) {
            size_t end = first + per_batch < n ? first + per_batch : n;
            loams_batch *b;
            size_t cpk, cs, cb, cp, ct, cc;
            loams_batch_create(&b);
            loams_batch_add_column(b, "_pk", &cpk);
            loams_batch_add_column(b, "subject", &cs);
            loams_batch_add_column(b, "body", &cb);
            loams_batch_add_column(b, "priority", &cp);
            loams_batch_add_column(b, "tags", &ct);
            loams_batch_add_column(b, "customer", &cc);
            loams_batch_append_rows(b, end - first);
            for (size_t i = first; i < end; i++) {
                doc *d = &docs[i];
                size_t row = i - first;
                loams_batch_set_origin(b, row, 0, (int64_t)i);
                const char *cols[] = {d->pk, d->subject, d->body, d->priority, NULL, d->customer};
                size_t idx[] = {cpk, cs, cb, cp, ct, cc};
                for (size_t k = 0; k < 6; k++) {
                    loams_value cell = {.type = LOAMS_T_STRING};
                    loams_value items[2];
                    if (cols[k] == NULL) {
                        for (size_t t = 0; t < d->ntags; t++) {
                            items[t] = (loams_value){.type = LOAMS_T_STRING};
                            items[t].u.s.ptr = d->tags[t];
                            items[t].u.s.len = strlen(d->tags[t]);
                        }
                        cell.type = LOAMS_T_LIST;
                        cell.u.list.items = items;
                        cell.u.list.n = d->ntags;
                    } else {
                        cell.u.s.ptr = cols[k];
                        cell.u.s.len = strlen(cols[k]);
                    }
                    loams_batch_set(b, row, idx[k], &cell);
                }
            }
            double w0 = now(), wc = cpu();
            if (vt->write(state, b) != 0) {
                loams_ctx_error(ctx, msg, sizeof msg);
                die("write", msg);
            }
            since_commit += end - first;
            if (since_commit >= per_commit || end == n) {
                const char *ref;
                double pc = cpu();
                loams_offsets_set(off, 0, (int64_t)end);
                loams_keylist_clear(written);
                if (vt->prepare(state, off, &ref, written) != 0) {
                    loams_ctx_error(ctx, msg, sizeof msg);
                    die("prepare", msg);
                }
                vt->committed(state, ref);
                c_prepare += cpu() - pc;
                since_commit = 0;
                for (size_t k = 0; k < loams_keylist_count(written); k++) {
                    loams_object_info info;
                    if (loams_store_head(fs, loams_keylist_at(written, k), &info) == 0) {
                        plugin_bytes += info.size;
                    }
                }
            }
            t_plugin += now() - w0;
            c_plugin += cpu() - wc;
            loams_batch_free(b);
        }
        vt->close(state);
        loams_ctx_free(ctx);
        loams_store_close(fs);
        loams_offsets_free(off);
        loams_keylist_free(written);
    }

    /* ---- reference: SQLite FTS5 ---- */
    char dbpath[600];
    snprintf(dbpath, sizeof dbpath, "%s/fts5.db", dir);
    double t_fts = 0, c_fts = 0, fts_q = 0;
    uint64_t fts_hits = 0;
    struct stat st;
    memset(&st, 0, sizeof st);
    if (reference) {
        unlink(dbpath);
        sqlite3 *db;
        sqlite3_stmt *ins;
        if (sqlite3_open(dbpath, &db) != SQLITE_OK ||
            sqlite3_exec(db,
                         "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                         "CREATE VIRTUAL TABLE t USING fts5(pk UNINDEXED, subject, body, priority,"
                         " tags, customer);",
                         NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?,?,?,?,?,?)", -1, &ins, NULL) !=
                SQLITE_OK) {
            die("sqlite", sqlite3_errmsg(db));
        }
        double c2 = cpu();
        double t2 = now();
        sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
        char tagbuf[128];
        for (size_t i = 0; i < n; i++) {
            doc *d = &docs[i];
            snprintf(tagbuf, sizeof tagbuf, "%s %s", d->ntags > 0 ? d->tags[0] : "",
                     d->ntags > 1 ? d->tags[1] : "");
            sqlite3_bind_text(ins, 1, d->pk, -1, SQLITE_STATIC);
            sqlite3_bind_text(ins, 2, d->subject, -1, SQLITE_STATIC);
            sqlite3_bind_text(ins, 3, d->body, -1, SQLITE_STATIC);
            sqlite3_bind_text(ins, 4, d->priority, -1, SQLITE_STATIC);
            sqlite3_bind_text(ins, 5, tagbuf, -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(ins, 6, d->customer, -1, SQLITE_STATIC);
            if (sqlite3_step(ins) != SQLITE_DONE) {
                die("sqlite insert", sqlite3_errmsg(db));
            }
            sqlite3_reset(ins);
        }
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        t_fts = now() - t2;
        c_fts = cpu() - c2;
        sqlite3_finalize(ins);
        stat(dbpath, &st);
        sqlite3_stmt *qs;
        if (sqlite3_prepare_v2(db, "SELECT pk, rank FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10",
                               -1, &qs, NULL) != SQLITE_OK) {
            die("sqlite", sqlite3_errmsg(db));
        }
        for (size_t q = 0; q < nq; q++) {
            /* FTS5 joins bare words with AND; OR matches what BM25 above ranks */
            char expr[256] = "";
            char *save, *copy = strdup(queries[q]);
            int first = 1;
            for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                strcat(expr, first ? "" : " OR ");
                strcat(expr, w);
                first = 0;
            }
            free(copy);
            double q0 = now();
            sqlite3_bind_text(qs, 1, expr, -1, SQLITE_TRANSIENT);
            while (sqlite3_step(qs) == SQLITE_ROW) {
                fts_hits++;
            }
            sqlite3_reset(qs);
            fts_q += now() - q0;
        }
        fts_q /= (double)(nq ? nq : 1);
        sqlite3_finalize(qs);
        sqlite3_close(db);
    }

    printf("\n%-36s %10s %12s %10s %10s\n", "", "docs/s", "docs/cpu-s", "MB/cpu-s", "output MB");
    printf("%-36s %10.0f %12.0f %10.1f %10.1f\n", "collection index + split write", n / t_index,
           n / c_index, json_bytes / 1e6 / c_index, split_bytes / 1e6);
    printf("%-36s %10.0f %12.0f %10.1f %10.1f\n", "plugin write+prepare via store-fs", n / t_plugin,
           n / c_plugin, json_bytes / 1e6 / c_plugin, plugin_bytes / 1e6);
    if (reference) {
        printf("%-36s %10.0f %12.0f %10.1f %10.1f\n", "SQLite FTS5 bulk insert (reference)",
               n / t_fts, n / c_fts, json_bytes / 1e6 / c_fts, st.st_size / 1e6);
        printf("%-36s %10.2fx %11.2fx\n", "split writer vs FTS5", t_fts / t_index, c_fts / c_index);
        printf("%-36s %10.2fx %11.2fx\n", "plugin vs FTS5", t_fts / t_plugin, c_fts / c_plugin);
    }
    printf("\nindex: %.2f s (%.2f CPU s) for %zu splits, documents %s%s, peak RSS %ld MiB\n",
           t_index, c_index, n_splits,
           o.codec == LOAMS__CODEC_NONE ? "uncompressed" : "zstd level ",
           o.codec == LOAMS__CODEC_NONE ? "" : zlevel, rss_index);
    printf("plugin: write() %.2f CPU s, prepare() %.2f CPU s (%zu commits of %zu documents)\n",
           c_plugin - c_prepare, c_prepare, (n + per_commit - 1) / per_commit, per_commit);
    printf("search: open %zu splits %.2f ms; BM25 top-10 over 5 fields: first query %.2f ms, "
           "then %.2f ms average over %zu queries (%.1f hits each)\n",
           n_splits, t_open * 1e3, cold * 1e3, warm * 1e3, nq > 1 ? nq - 1 : 0,
           (double)total_hits / (double)(nq ? nq : 1));
    if (reference) {
        printf("FTS5 search (same words, OR, ORDER BY rank LIMIT 10): %.2f ms average "
               "(%.1f hits each)\n",
               fts_q * 1e3, (double)fts_hits / (double)(nq ? nq : 1));
    }

    for (size_t s = 0; s < n_splits; s++) {
        loams__split_reader_close(readers[s]);
        close(files[s].fd);
        unlink(paths[s]);
    }
    unlink(dbpath);
    char sdir[600];
    snprintf(sdir, sizeof sdir, "%s/store", dir);
    nftw(sdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (dir == tmpl) {
        rmdir(dir);
    }
    for (size_t q = 0; q < nq; q++) {
        free(queries[q]);
    }
    for (size_t i = 0; i < n; i++) {
        free(docs[i].subject);
        free(docs[i].body);
        free(docs[i].priority);
        free(docs[i].customer);
        for (size_t t = 0; t < docs[i].ntags; t++) {
            free(docs[i].tags[t]);
        }
    }
    free(queries);
    free(docs);
    free(paths);
    free(sizes);
    free(readers);
    free(dels);
    free(files);
    loams_kit_buf_free(&js);
    loams__coll_manifest_free(m);
    return 0;
}
