/*
 * batch.c - owns the record batch: its columns, cells, row origins, row
 * failures and the arena that holds every payload (see batch.h).
 *
 * Layout: one loams_value per cell in a per-column array whose capacity is
 * the batch's row capacity (all columns grow together); payloads live in an
 * arena of chunks that grow geometrically, so a cell never costs a malloc.
 * Cells past the last row are garbage: a new row is zeroed (NULL) in every
 * column when it is appended, a new column for the existing rows only.
 * Reset keeps the cell arrays as spares for the next batch's columns.
 * Column names are found through a small open-addressing hash table.
 * With a memory account, the arena's chunks and the per-row arrays (cells,
 * origins, failed flags) are charged to it before they are allocated.
 */
#include "abi/batch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "loams/kit/utf8.h"

/* An arena chunk; the header is 32 bytes so that data stays 16-aligned. */
typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t cap;
    size_t used;
    size_t pad;
} arena_chunk;

#define ARENA_FIRST_CHUNK (64u * 1024u)
#define ARENA_MAX_CHUNK (4u * 1024u * 1024u)
/* Reset keeps the arena's chunks (up to this many bytes) for the next
 * batch: a link reads batches of about the same size over and over (1 MiB
 * chunks), and a fresh multi-megabyte chunk is a new mapping the kernel has
 * to fault in and zero page by page.  What a rare huge batch needed beyond
 * this goes back to malloc. */
#define ARENA_KEEP_BYTES (16u * 1024u * 1024u)

typedef struct batch_column {
    char *name;
    uint32_t hash;
    loams_value *cells; /* row_cap entries; rows past n_rows are garbage */
} batch_column;

typedef struct batch_failure {
    size_t row;
    int status;
    const char *message; /* in the arena */
} batch_failure;

struct loams_batch {
    size_t n_rows;
    size_t row_cap;
    int32_t *origin_partition; /* row_cap entries */
    int64_t *origin_offset;
    unsigned char *failed; /* row_cap entries, 1 when failed */

    batch_column *cols;
    size_t n_cols;
    size_t col_cap;
    int32_t *slots; /* hash table of column indexes, -1 = empty */
    size_t n_slots; /* power of two, >= 2 * n_cols */

    loams_value **spare; /* cell arrays of row_cap entries, for new columns */
    size_t n_spare;
    size_t spare_cap;

    batch_failure *failures; /* sorted by row */
    size_t n_failures;
    size_t failure_cap;

    arena_chunk *chunks; /* head = the chunk being filled */
    arena_chunk *kept;   /* chunks of earlier batches, free for reuse */
    size_t next_chunk;
    uint64_t arena_bytes; /* chunks and kept */
    uint64_t payload_bytes;

    int records; /* columns 0-5 are the input columns of appended records */

    char **wanted; /* NULL: every column is wanted */
    size_t n_wanted;

    loams_mem_account *account; /* a reference; NULL: none */
    uint64_t charged;           /* bytes charged to it */
};

/* Each row costs its origin (partition, offset) and failed flag, and one
 * cell per column. */
#define ROW_BYTES (sizeof(int32_t) + sizeof(int64_t) + 1)
#define CELL_BYTES sizeof(loams_value)

static int charge(loams_batch *b, uint64_t bytes)
{
    if (b->account == NULL) {
        return 0;
    }
    if (loams_mem_account_charge(b->account, bytes, "the host's record batches") != 0) {
        return -ENOMEM;
    }
    b->charged += bytes;
    return 0;
}

static void release(loams_batch *b, uint64_t bytes)
{
    if (b->account == NULL) {
        return;
    }
    bytes = bytes < b->charged ? bytes : b->charged;
    b->charged -= bytes;
    loams_mem_account_release(b->account, bytes);
}

static void chunk_free(loams_batch *b, arena_chunk *c)
{
    release(b, sizeof *c + c->cap);
    free(c);
}

static const char empty_text[1] = "";

/* ---- arena ---- */

/* The smallest kept chunk of at least cap bytes, unlinked from b->kept,
 * or NULL. */
static arena_chunk *take_kept(loams_batch *b, size_t cap)
{
    arena_chunk **best = NULL;
    for (arena_chunk **at = &b->kept; *at != NULL; at = &(*at)->next) {
        if ((*at)->cap >= cap && (best == NULL || (*at)->cap < (*best)->cap)) {
            best = at;
        }
    }
    if (best == NULL) {
        return NULL;
    }
    arena_chunk *c = *best;
    *best = c->next;
    return c;
}

static void *arena_alloc(loams_batch *b, size_t size, size_t align)
{
    arena_chunk *c = b->chunks;
    if (c != NULL) {
        size_t p = (c->used + align - 1) & ~(align - 1);
        if (p <= c->cap && size <= c->cap - p) {
            c->used = p + size;
            return (unsigned char *)(c + 1) + p;
        }
    }
    if (size > SIZE_MAX - sizeof(arena_chunk) - 16) {
        return NULL;
    }
    /* A kept chunk that fits first; else a new one of the next size, or of
     * the payload's own size when it is big. */
    arena_chunk *n = take_kept(b, size + align);
    int head;
    if (n != NULL) {
        /* it becomes the head when it has more room left than the head */
        head = c == NULL || n->cap - size > c->cap - c->used;
    } else {
        size_t cap = b->next_chunk;
        head = c == NULL || size + align <= cap / 4;
        if (size + align > cap || !head) {
            cap = size + align;
        }
        if (charge(b, sizeof(arena_chunk) + cap) != 0) {
            return NULL;
        }
        if ((n = malloc(sizeof(arena_chunk) + cap)) == NULL) {
            release(b, sizeof(arena_chunk) + cap);
            return NULL;
        }
        n->cap = cap;
        b->arena_bytes += cap;
        if (head && b->next_chunk < ARENA_MAX_CHUNK) {
            b->next_chunk *= 2;
        }
    }
    n->used = size;
    if (head) {
        n->next = c;
        b->chunks = n;
    } else {
        /* A big payload gets its own chunk behind the head, so the head's
         * free space is not wasted. */
        n->next = c->next;
        c->next = n;
    }
    return n + 1;
}

static void *arena_copy(loams_batch *b, const void *src, size_t len, size_t align)
{
    if (len == 0) {
        return (void *)empty_text;
    }
    void *dst = arena_alloc(b, len, align);
    if (dst != NULL) {
        memcpy(dst, src, len);
    }
    return dst;
}

/* ---- life cycle ---- */

int loams_batch_create(loams_batch **out)
{
    loams_batch *b = calloc(1, sizeof *b);
    if (b == NULL) {
        return -ENOMEM;
    }
    b->next_chunk = ARENA_FIRST_CHUNK;
    *out = b;
    return 0;
}

static void free_cells(loams_batch *b, loams_value *cells)
{
    if (cells != NULL) {
        release(b, b->row_cap * CELL_BYTES);
        free(cells);
    }
}

static void free_spares(loams_batch *b)
{
    for (size_t i = 0; i < b->n_spare; i++) {
        free_cells(b, b->spare[i]);
    }
    b->n_spare = 0;
}

/* Frees the columns; their cell arrays become spares when keep_cells. */
static void free_columns(loams_batch *b, int keep_cells)
{
    for (size_t i = 0; i < b->n_cols; i++) {
        free(b->cols[i].name);
        if (keep_cells && b->cols[i].cells != NULL && b->n_spare < b->spare_cap) {
            b->spare[b->n_spare++] = b->cols[i].cells;
        } else {
            free_cells(b, b->cols[i].cells);
        }
    }
    b->n_cols = 0;
    b->records = 0;
    free(b->slots);
    b->slots = NULL;
    b->n_slots = 0;
}

void loams_batch_free(loams_batch *b)
{
    if (b == NULL) {
        return;
    }
    free_columns(b, 0);
    free_spares(b);
    free(b->spare);
    free(b->cols);
    free(b->origin_partition);
    free(b->origin_offset);
    free(b->failed);
    free(b->failures);
    loams_batch_want_columns(b, NULL, 0);
    for (int list = 0; list < 2; list++) {
        for (arena_chunk *c = list ? b->kept : b->chunks, *next; c != NULL; c = next) {
            next = c->next;
            chunk_free(b, c);
        }
    }
    release(b, b->charged); /* the per-row arrays */
    loams_mem_account_unref(b->account);
    free(b);
}

void loams_batch_set_account(loams_batch *b, loams_mem_account *account)
{
    loams_mem_account *old = b->account;
    uint64_t charged = b->charged;
    if (old != NULL) {
        loams_mem_account_release(old, charged);
    }
    b->account = loams_mem_account_ref(account);
    b->charged = 0;
    if (account != NULL && charged > 0) {
        /* What the batch holds already moves with it, granted or not: the
         * memory is taken. */
        if (loams_mem_account_charge(account, charged, "the host's record batches") != 0) {
            charged = 0;
        }
        b->charged = charged;
    }
    loams_mem_account_unref(old);
}

void loams_batch_reset(loams_batch *b)
{
    if (b->spare_cap < b->n_cols + b->n_spare) {
        size_t cap = b->n_cols + b->n_spare;
        loams_value **spare = realloc(b->spare, cap * sizeof *spare);
        if (spare != NULL) {
            b->spare = spare;
            b->spare_cap = cap;
        }
    }
    free_columns(b, 1);
    if (b->n_rows > 0) {
        memset(b->failed, 0, b->n_rows);
    }
    b->n_rows = 0;
    b->n_failures = 0;
    b->payload_bytes = 0;
    /* The chunks go to kept, up to ARENA_KEEP_BYTES in all. */
    uint64_t kept = 0;
    for (arena_chunk *c = b->kept; c != NULL; c = c->next) {
        kept += c->cap;
    }
    for (arena_chunk *c = b->chunks, *next; c != NULL; c = next) {
        next = c->next;
        if (kept + c->cap <= ARENA_KEEP_BYTES) {
            c->used = 0;
            c->next = b->kept;
            b->kept = c;
            kept += c->cap;
        } else {
            chunk_free(b, c);
        }
    }
    b->chunks = NULL;
    b->arena_bytes = kept;
}

/* ---- wanted columns ---- */

int loams_batch_want_columns(loams_batch *b, const char *const *names, size_t n)
{
    for (size_t i = 0; i < b->n_wanted; i++) {
        free(b->wanted[i]);
    }
    free(b->wanted);
    b->wanted = NULL;
    b->n_wanted = 0;
    if (names == NULL) {
        return 0;
    }
    /* n = 0 is a filter too (no decoded column is read): keep a non-NULL
     * array of one slot. */
    char **w = calloc(n > 0 ? n : 1, sizeof *w);
    if (w == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if ((w[i] = strdup(names[i])) == NULL) {
            for (size_t j = 0; j < i; j++) {
                free(w[j]);
            }
            free(w);
            return -ENOMEM;
        }
    }
    b->wanted = w;
    b->n_wanted = n;
    return 0;
}

int loams_batch_column_wanted(const loams_batch *b, const char *name, size_t len)
{
    if (b == NULL || b->wanted == NULL) {
        return 1;
    }
    for (size_t i = 0; i < b->n_wanted; i++) {
        if (strlen(b->wanted[i]) == len && strncasecmp(b->wanted[i], name, len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* ---- rows and columns ---- */

static int grow_rows(loams_batch *b, size_t need)
{
    if (need <= b->row_cap) {
        return 0;
    }
    size_t cap = b->row_cap < 64 ? 64 : b->row_cap;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / sizeof(loams_value)) {
            return -ENOMEM;
        }
        cap *= 2;
    }
    /* The spares are freed (too small now); every column's cells grow. */
    uint64_t more = (uint64_t)(cap - b->row_cap) * (ROW_BYTES + b->n_cols * CELL_BYTES);
    if (charge(b, more) != 0) {
        return -ENOMEM;
    }
    int32_t *part = realloc(b->origin_partition, cap * sizeof *part);
    if (part == NULL) {
        release(b, more);
        return -ENOMEM;
    }
    b->origin_partition = part;
    int64_t *off = realloc(b->origin_offset, cap * sizeof *off);
    if (off == NULL) {
        release(b, more);
        return -ENOMEM;
    }
    b->origin_offset = off;
    unsigned char *failed = realloc(b->failed, cap);
    if (failed == NULL) {
        release(b, more);
        return -ENOMEM;
    }
    memset(failed + b->row_cap, 0, cap - b->row_cap);
    b->failed = failed;
    for (size_t i = 0; i < b->n_cols; i++) {
        loams_value *cells = realloc(b->cols[i].cells, cap * sizeof *cells);
        if (cells == NULL) {
            /* Columns before i are bigger already; that is harmless: only
             * row_cap entries are ever used. */
            release(b, more);
            return -ENOMEM;
        }
        b->cols[i].cells = cells;
    }
    free_spares(b); /* too small now */
    b->row_cap = cap;
    return 0;
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s != '\0'; s++) {
        h = (h ^ (unsigned char)*s) * 16777619u;
    }
    return h;
}

static int rebuild_slots(loams_batch *b, size_t n_slots)
{
    int32_t *slots = malloc(n_slots * sizeof *slots);
    if (slots == NULL) {
        return -ENOMEM;
    }
    memset(slots, 0xff, n_slots * sizeof *slots);
    for (size_t i = 0; i < b->n_cols; i++) {
        size_t s = b->cols[i].hash & (n_slots - 1);
        while (slots[s] >= 0) {
            s = (s + 1) & (n_slots - 1);
        }
        slots[s] = (int32_t)i;
    }
    free(b->slots);
    b->slots = slots;
    b->n_slots = n_slots;
    return 0;
}

static long find_column(const loams_batch *b, const char *name, uint32_t h)
{
    if (b->n_slots == 0) {
        return -1;
    }
    for (size_t s = h & (b->n_slots - 1);; s = (s + 1) & (b->n_slots - 1)) {
        int32_t i = b->slots[s];
        if (i < 0) {
            return -1;
        }
        if (b->cols[i].hash == h && strcmp(b->cols[i].name, name) == 0) {
            return i;
        }
    }
}

size_t loams_batch_rows(const loams_batch *b)
{
    return b->n_rows;
}

size_t loams_batch_columns(const loams_batch *b)
{
    return b->n_cols;
}

const char *loams_batch_column_name(const loams_batch *b, size_t col)
{
    return col < b->n_cols ? b->cols[col].name : NULL;
}

long loams_batch_column_find(const loams_batch *b, const char *name)
{
    if (name == NULL) {
        return -1;
    }
    return find_column(b, name, name_hash(name));
}

int loams_batch_add_column(loams_batch *b, const char *name, size_t *col)
{
    if (name == NULL || name[0] == '\0') {
        return -EINVAL;
    }
    uint32_t h = name_hash(name);
    long found = find_column(b, name, h);
    if (found >= 0) {
        if (col != NULL) {
            *col = (size_t)found;
        }
        return 0;
    }
    if (b->n_cols >= INT32_MAX) {
        return -ENOMEM;
    }
    if (b->n_cols == b->col_cap) {
        size_t cap = b->col_cap < 8 ? 8 : b->col_cap * 2;
        batch_column *cols = realloc(b->cols, cap * sizeof *cols);
        if (cols == NULL) {
            return -ENOMEM;
        }
        b->cols = cols;
        b->col_cap = cap;
    }
    if ((b->n_cols + 1) * 2 > b->n_slots) {
        /* Rebuild before adding so a failure leaves the batch unchanged. */
        int rc = rebuild_slots(b, b->n_slots < 16 ? 16 : b->n_slots * 2);
        if (rc != 0) {
            return rc;
        }
    }
    batch_column *c = &b->cols[b->n_cols];
    c->name = strdup(name);
    c->cells = NULL;
    if (b->row_cap > 0 && b->n_spare > 0) {
        c->cells = b->spare[--b->n_spare];
    } else if (b->row_cap > 0 && charge(b, b->row_cap * CELL_BYTES) == 0) {
        if ((c->cells = malloc(b->row_cap * sizeof *c->cells)) == NULL) {
            release(b, b->row_cap * CELL_BYTES);
        }
    }
    if (c->name == NULL || (b->row_cap > 0 && c->cells == NULL)) {
        free(c->name);
        free_cells(b, c->cells);
        return -ENOMEM;
    }
    if (b->n_rows > 0) {
        memset(c->cells, 0, b->n_rows * sizeof *c->cells);
    }
    c->hash = h;
    size_t s = h & (b->n_slots - 1);
    while (b->slots[s] >= 0) {
        s = (s + 1) & (b->n_slots - 1);
    }
    b->slots[s] = (int32_t)b->n_cols;
    if (col != NULL) {
        *col = b->n_cols;
    }
    b->n_cols++;
    return 0;
}

int loams_batch_get(const loams_batch *b, size_t row, size_t col, loams_value *out)
{
    if (row >= b->n_rows || col >= b->n_cols) {
        return -EINVAL;
    }
    *out = b->cols[col].cells[row];
    return 0;
}

const loams_value *loams_batch_column_cells(const loams_batch *b, size_t col)
{
    return col < b->n_cols ? b->cols[col].cells : NULL;
}

int loams_batch_row_origin(const loams_batch *b, size_t row, int32_t *partition, int64_t *offset)
{
    if (row >= b->n_rows) {
        return -EINVAL;
    }
    if (partition != NULL) {
        *partition = b->origin_partition[row];
    }
    if (offset != NULL) {
        *offset = b->origin_offset[row];
    }
    return 0;
}

int loams_batch_row_failed(const loams_batch *b, size_t row)
{
    return row < b->n_rows && b->failed[row];
}

/* ---- values ---- */

/* Checks a value and counts the arena bytes a deep copy needs. */
static int value_check(const loams_value *v, int depth, size_t *need)
{
    switch (v->type) {
    case LOAMS_T_NULL:
    case LOAMS_T_BOOL:
    case LOAMS_T_INT64:
    case LOAMS_T_FLOAT64:
    case LOAMS_T_TIMESTAMP: return 0;
    case LOAMS_T_STRING:
    case LOAMS_T_BYTES:
    case LOAMS_T_JSON:
        if (v->u.s.ptr == NULL && v->u.s.len > 0) {
            return -EINVAL;
        }
        *need += v->u.s.len + 8;
        return 0;
    case LOAMS_T_VECTOR:
        if ((v->u.vec.ptr == NULL && v->u.vec.n > 0) || v->u.vec.n > SIZE_MAX / 8) {
            return -EINVAL;
        }
        *need += v->u.vec.n * sizeof(float) + 8;
        return 0;
    case LOAMS_T_LIST:
        if ((v->u.list.items == NULL && v->u.list.n > 0) || depth >= LOAMS_BATCH_MAX_DEPTH ||
            v->u.list.n > SIZE_MAX / 64) {
            return -EINVAL;
        }
        *need += v->u.list.n * sizeof(loams_value) + 8;
        for (size_t i = 0; i < v->u.list.n; i++) {
            int rc = value_check(&v->u.list.items[i], depth + 1, need);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    default: return -EINVAL;
    }
}

/* Deep-copies a checked value into the arena. */
static int value_copy(loams_batch *b, const loams_value *v, loams_value *dst)
{
    loams_value out = {.type = v->type};
    switch (v->type) {
    case LOAMS_T_NULL: break;
    case LOAMS_T_BOOL: out.u.b = v->u.b != 0; break;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP: out.u.i = v->u.i; break;
    case LOAMS_T_FLOAT64: out.u.f = v->u.f; break;
    case LOAMS_T_STRING:
    case LOAMS_T_BYTES:
    case LOAMS_T_JSON:
        out.u.s.ptr = arena_copy(b, v->u.s.ptr, v->u.s.len, 1);
        if (out.u.s.ptr == NULL) {
            return -ENOMEM;
        }
        out.u.s.len = v->u.s.len;
        break;
    case LOAMS_T_VECTOR:
        out.u.vec.ptr = arena_copy(b, v->u.vec.ptr, v->u.vec.n * sizeof(float), sizeof(float));
        if (out.u.vec.ptr == NULL) {
            return -ENOMEM;
        }
        out.u.vec.n = v->u.vec.n;
        break;
    case LOAMS_T_LIST: {
        loams_value *items = (loams_value *)empty_text;
        if (v->u.list.n > 0) {
            items = arena_alloc(b, v->u.list.n * sizeof *items, _Alignof(loams_value));
            if (items == NULL) {
                return -ENOMEM;
            }
            for (size_t i = 0; i < v->u.list.n; i++) {
                int rc = value_copy(b, &v->u.list.items[i], &items[i]);
                if (rc != 0) {
                    return rc;
                }
            }
        }
        out.u.list.items = items;
        out.u.list.n = v->u.list.n;
        break;
    }
    default: return -EINVAL;
    }
    *dst = out;
    return 0;
}

/* Non-zero when ptr[0..len) lies inside row's record key or value. */
/* Non-zero when ptr[0..len) lies inside the bytes of record cell rec. */
static inline int in_cell(const loams_value *rec, uintptr_t p, size_t len)
{
    uintptr_t lo = (uintptr_t)rec->u.s.ptr;
    return rec->type == LOAMS_T_BYTES && p >= lo && len <= rec->u.s.len &&
           p - lo <= rec->u.s.len - len;
}

static inline int in_record(const loams_batch *b, size_t row, const char *ptr, size_t len)
{
    uintptr_t p = (uintptr_t)ptr;
    return in_cell(&b->cols[LOAMS_BATCH_COL_VALUE].cells[row], p, len) ||
           in_cell(&b->cols[LOAMS_BATCH_COL_KEY].cells[row], p, len);
}

static int batch_set_other(loams_batch *b, size_t row, size_t col, const loams_value *v);

/* A text cell that is not a view of the row's record: copied.  Out of
 * line, so that the fast paths of loams_batch_set stay a leaf. */
static __attribute__((noinline)) int batch_set_copy(loams_batch *b, loams_value *cell,
                                                    const loams_value *v)
{
    const char *p = arena_copy(b, v->u.s.ptr, v->u.s.len, 1);
    if (p == NULL) {
        return -ENOMEM;
    }
    *cell = (loams_value){.type = v->type, .u.s = {p, v->u.s.len}};
    b->payload_bytes += v->u.s.len;
    return 0;
}

int loams_batch_set(loams_batch *b, size_t row, size_t col, const loams_value *v)
{
    if (row >= b->n_rows || col >= b->n_cols || v == NULL) {
        return -EINVAL;
    }
    loams_value *cell = &b->cols[col].cells[row];
    /* Fast paths for the common types; value_check/value_copy do the rest. */
    switch (v->type) {
    case LOAMS_T_NULL: *cell = (loams_value){.type = LOAMS_T_NULL}; return 0;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP:
    case LOAMS_T_FLOAT64:
        *cell = (loams_value){.type = v->type, .u = v->u};
        b->payload_bytes += 8;
        return 0;
    case LOAMS_T_STRING:
    case LOAMS_T_BYTES:
    case LOAMS_T_JSON:
        if (v->u.s.ptr == NULL && v->u.s.len > 0) {
            return -EINVAL;
        }
        if (b->records && col >= LOAMS_BATCH_INPUT_COLUMNS && v->u.s.len > 0 &&
            in_record(b, row, v->u.s.ptr, v->u.s.len)) {
            /* a view of the row's own record bytes: kept as is */
            *cell = (loams_value){.type = v->type, .u.s = v->u.s};
            b->payload_bytes += v->u.s.len;
            return 0;
        }
        return batch_set_copy(b, cell, v);
    default: return batch_set_other(b, row, col, v);
    }
}

/* The other types (BOOL, VECTOR, LIST, unknown): checked, then copied. */
static __attribute__((noinline)) int batch_set_other(loams_batch *b, size_t row, size_t col,
                                                     const loams_value *v)
{
    size_t need = 0;
    int rc = value_check(v, 0, &need);
    if (rc != 0) {
        return rc;
    }
    loams_value copy;
    rc = value_copy(b, v, &copy);
    if (rc != 0) {
        return rc;
    }
    b->cols[col].cells[row] = copy;
    b->payload_bytes += v->type == LOAMS_T_NULL ? 0 : need > 0 ? need - 8 : 8;
    return 0;
}

/* ---- appending rows ---- */

int loams_batch_append_rows(loams_batch *b, size_t n)
{
    if (n > SIZE_MAX - b->n_rows) {
        return -ENOMEM;
    }
    int rc = grow_rows(b, b->n_rows + n);
    if (rc != 0) {
        return rc;
    }
    for (size_t r = b->n_rows; r < b->n_rows + n; r++) {
        b->origin_partition[r] = -1;
        b->origin_offset[r] = -1;
    }
    for (size_t c = 0; c < b->n_cols; c++) {
        memset(b->cols[c].cells + b->n_rows, 0, n * sizeof(loams_value));
    }
    b->n_rows += n;
    return 0;
}

int loams_batch_append_row(loams_batch *b, const loams_batch *from, size_t from_row, size_t *row)
{
    if (from != NULL && from_row >= from->n_rows) {
        return -EINVAL;
    }
    int rc = grow_rows(b, b->n_rows + 1);
    if (rc != 0) {
        return rc;
    }
    size_t r = b->n_rows++;
    for (size_t c = 0; c < b->n_cols; c++) {
        b->cols[c].cells[r] = (loams_value){.type = LOAMS_T_NULL};
    }
    b->origin_partition[r] = from != NULL ? from->origin_partition[from_row] : -1;
    b->origin_offset[r] = from != NULL ? from->origin_offset[from_row] : -1;
    if (row != NULL) {
        *row = r;
    }
    return 0;
}

long loams_batch_keys_as_text(loams_batch *b, size_t from, const char *stream)
{
    if (b->n_cols < LOAMS_BATCH_INPUT_COLUMNS ||
        strcmp(b->cols[LOAMS_BATCH_COL_KEY].name, "key") != 0) {
        return -EINVAL;
    }
    loams_value *key = b->cols[LOAMS_BATCH_COL_KEY].cells;
    long failed = 0;
    for (size_t r = from; r < b->n_rows; r++) {
        if (key[r].type != LOAMS_T_BYTES) {
            continue;
        }
        const unsigned char *k = (const unsigned char *)key[r].u.s.ptr;
        if (loams_kit_utf8_valid_prefix(k, key[r].u.s.len) == key[r].u.s.len) {
            key[r].type = LOAMS_T_STRING;
            continue;
        }
        int rc = loams_batch_row_fail(b, r, LOAMS_EINPUT,
                                      "the record's key is not valid UTF-8 text, and stream %s "
                                      "has key_type = 'string' (a stream WITH (key_type = "
                                      "'bytes') takes any key)",
                                      stream);
        if (rc != 0) {
            return rc;
        }
        failed++;
    }
    return failed;
}

int loams_batch_set_origin(loams_batch *b, size_t row, int32_t partition, int64_t offset)
{
    if (row >= b->n_rows) {
        return -EINVAL;
    }
    b->origin_partition[row] = partition;
    b->origin_offset[row] = offset;
    return 0;
}

static const char *const input_names[LOAMS_BATCH_INPUT_COLUMNS] = {
    "key", "value", "timestamp", "partition", "offset", "headers"};

int loams_batch_append_records(loams_batch *b, const loams_record *recs, size_t n)
{
    int rc = 0;
    if (b->n_cols == 0) {
        for (size_t i = 0; i < LOAMS_BATCH_INPUT_COLUMNS; i++) {
            rc = loams_batch_add_column(b, input_names[i], NULL);
            if (rc != 0) {
                free_columns(b, 0);
                return rc;
            }
        }
    } else {
        if (b->n_cols < LOAMS_BATCH_INPUT_COLUMNS) {
            return -EINVAL;
        }
        for (size_t i = 0; i < LOAMS_BATCH_INPUT_COLUMNS; i++) {
            if (strcmp(b->cols[i].name, input_names[i]) != 0) {
                return -EINVAL;
            }
        }
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const loams_record *r = &recs[i];
        if (r->partition < 0 || r->offset < 0 || (r->value == NULL && r->value_len > 0) ||
            (r->headers == NULL && r->headers_len > 0)) {
            return -EINVAL;
        }
        size_t add = r->key_len + r->value_len + (r->headers != NULL ? r->headers_len : 0);
        if (add < r->key_len || total > SIZE_MAX - add) {
            return -ENOMEM;
        }
        total += add;
    }
    if (n > SIZE_MAX - b->n_rows) {
        return -ENOMEM;
    }
    rc = grow_rows(b, b->n_rows + n);
    if (rc != 0) {
        return rc;
    }
    char *p = total > 0 ? arena_alloc(b, total, 1) : NULL;
    if (total > 0 && p == NULL) {
        return -ENOMEM;
    }
    loams_value *key = b->cols[LOAMS_BATCH_COL_KEY].cells;
    loams_value *value = b->cols[LOAMS_BATCH_COL_VALUE].cells;
    loams_value *ts = b->cols[LOAMS_BATCH_COL_TIMESTAMP].cells;
    loams_value *part = b->cols[LOAMS_BATCH_COL_PARTITION].cells;
    loams_value *off = b->cols[LOAMS_BATCH_COL_OFFSET].cells;
    loams_value *hdr = b->cols[LOAMS_BATCH_COL_HEADERS].cells;
    for (size_t c = LOAMS_BATCH_INPUT_COLUMNS; c < b->n_cols; c++) {
        memset(b->cols[c].cells + b->n_rows, 0, n * sizeof(loams_value));
    }
    for (size_t i = 0; i < n; i++) {
        const loams_record *r = &recs[i];
        size_t row = b->n_rows + i;
        if (r->key != NULL) {
            key[row] = (loams_value){.type = LOAMS_T_BYTES,
                                     .u.s = {r->key_len > 0 ? p : empty_text, r->key_len}};
            if (r->key_len > 0) {
                memcpy(p, r->key, r->key_len);
                p += r->key_len;
            }
        } else {
            key[row] = (loams_value){.type = LOAMS_T_NULL};
        }
        value[row] = (loams_value){.type = LOAMS_T_BYTES,
                                   .u.s = {r->value_len > 0 ? p : empty_text, r->value_len}};
        if (r->value_len > 0) {
            memcpy(p, r->value, r->value_len);
            p += r->value_len;
        }
        ts[row] = (loams_value){.type = LOAMS_T_TIMESTAMP, .u.i = r->timestamp_us};
        part[row] = (loams_value){.type = LOAMS_T_INT64, .u.i = r->partition};
        off[row] = (loams_value){.type = LOAMS_T_INT64, .u.i = r->offset};
        if (r->headers != NULL) {
            hdr[row] = (loams_value){.type = LOAMS_T_JSON,
                                     .u.s = {r->headers_len > 0 ? p : empty_text, r->headers_len}};
            if (r->headers_len > 0) {
                memcpy(p, r->headers, r->headers_len);
                p += r->headers_len;
            }
        } else {
            hdr[row] = (loams_value){.type = LOAMS_T_NULL};
        }
        b->origin_partition[row] = r->partition;
        b->origin_offset[row] = r->offset;
    }
    b->n_rows += n;
    b->records = 1;
    b->payload_bytes += total + (uint64_t)n * 24;
    return 0;
}

/* ---- failures ---- */

static size_t failure_lower_bound(const loams_batch *b, size_t row)
{
    size_t lo = 0, hi = b->n_failures;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->failures[mid].row < row) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

int loams_batch_row_failv(loams_batch *b, size_t row, int status, const char *fmt, va_list ap)
{
    if (row >= b->n_rows || fmt == NULL) {
        return -EINVAL;
    }
    if (b->failed[row]) {
        return 0;
    }
    if (b->n_failures == b->failure_cap) {
        size_t cap = b->failure_cap < 16 ? 16 : b->failure_cap * 2;
        batch_failure *f = realloc(b->failures, cap * sizeof *f);
        if (f == NULL) {
            return -ENOMEM; /* not marked: the caller fails the whole batch */
        }
        b->failures = f;
        b->failure_cap = cap;
    }
    int rc = 0;
    char prefix[64] = "";
    int plen = 0;
    if (b->origin_partition[row] >= 0) {
        plen = snprintf(prefix, sizeof prefix,
                        "partition %d offset %lld: ", (int)b->origin_partition[row],
                        (long long)b->origin_offset[row]);
    }
    va_list aq;
    va_copy(aq, ap);
    int mlen = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *msg = NULL;
    if (mlen >= 0) {
        msg = arena_alloc(b, (size_t)plen + (size_t)mlen + 1, 1);
    }
    if (msg != NULL) {
        memcpy(msg, prefix, (size_t)plen);
        vsnprintf(msg + plen, (size_t)mlen + 1, fmt, ap);
    } else {
        msg = (char *)"out of memory while recording this record's error";
        rc = -ENOMEM;
    }
    size_t at = failure_lower_bound(b, row);
    memmove(&b->failures[at + 1], &b->failures[at], (b->n_failures - at) * sizeof *b->failures);
    b->failures[at] = (batch_failure){row, status != 0 ? status : LOAMS_EINPUT, msg};
    b->n_failures++;
    b->failed[row] = 1;
    return rc;
}

int loams_batch_row_fail(loams_batch *b, size_t row, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = loams_batch_row_failv(b, row, status, fmt, ap);
    va_end(ap);
    return rc;
}

size_t loams_batch_failed_count(const loams_batch *b)
{
    return b->n_failures;
}

int loams_batch_failure_at(const loams_batch *b, size_t i, size_t *row, int *status,
                           const char **message)
{
    if (i >= b->n_failures) {
        return -EINVAL;
    }
    const batch_failure *f = &b->failures[i];
    if (row != NULL) {
        *row = f->row;
    }
    if (status != NULL) {
        *status = f->status;
    }
    if (message != NULL) {
        *message = f->message;
    }
    return 0;
}

int loams_batch_row_error(const loams_batch *b, size_t row, int *status, const char **message)
{
    size_t at = failure_lower_bound(b, row);
    if (at >= b->n_failures || b->failures[at].row != row) {
        return -ENOENT;
    }
    return loams_batch_failure_at(b, at, NULL, status, message);
}

/* ---- sizes ---- */

uint64_t loams_batch_payload_bytes(const loams_batch *b)
{
    return b->payload_bytes;
}

uint64_t loams_batch_memory_bytes(const loams_batch *b)
{
    return b->arena_bytes +
           (uint64_t)b->row_cap * ((b->n_cols + b->n_spare) * sizeof(loams_value) + 13) +
           b->col_cap * sizeof(batch_column) + b->n_slots * sizeof(int32_t) +
           b->failure_cap * sizeof(batch_failure);
}
