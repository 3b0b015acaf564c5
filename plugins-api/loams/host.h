/*
 * loams/host.h - what the host gives a plugin: values, batches and the host
 * API table.
 *
 * Ownership, in one rule: the host owns everything it hands a plugin (the
 * context, batches, values read from a batch, offsets, the store handle) and
 * the plugin owns its own state.  Plugins never free host memory; the host
 * never frees plugin memory except by calling the plugin's own close().
 *
 * Batches are opaque.  A plugin reads and builds them only through the
 * functions of the host API table, never by struct layout; the one struct
 * whose layout is part of the ABI is loams_value, a read-only *view* of one
 * cell that the host fills (get) or copies from (set).
 *
 * Threads: every host API function may be called from any thread.  A batch,
 * an offsets set or a context may be used by one thread at a time (the
 * thread the host called the plugin on); the host never calls into one
 * plugin state from two threads at once.
 */
#ifndef LOAMS_HOST_H
#define LOAMS_HOST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <loams/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The per-instance host context: identifies the plugin instance (for log
 * prefixes and errors) and carries its options.  Host-owned, valid from the
 * open/compile call that received it until the matching close() returns. */
typedef struct loams_ctx loams_ctx;

/* A host-owned record batch (columnar inside, arena-allocated). */
typedef struct loams_batch loams_batch;

/* A host-owned set of (partition -> next offset) pairs. */
typedef struct loams_offsets loams_offsets;

/* A host-owned list of object keys (orphans for GC, listing results). */
typedef struct loams_keylist loams_keylist;

/* A host-owned growable byte buffer (query answers, object reads). */
typedef struct loams_buf loams_buf;

/* A host-owned handle on an object store instance (an object-store plugin
 * opened by the host).  Valid while the plugin state that received it. */
typedef struct loams_store loams_store;

/* A host-owned streaming object writer (see store_writer_* below). */
typedef struct loams_store_writer loams_store_writer;

/* Value types.  Numbers are part of the ABI: append only. */
typedef enum loams_type {
    LOAMS_T_NULL = 0,
    LOAMS_T_BOOL = 1,
    LOAMS_T_INT64 = 2,
    LOAMS_T_FLOAT64 = 3,
    LOAMS_T_STRING = 4,    /* UTF-8 text, not NUL-terminated (len given) */
    LOAMS_T_BYTES = 5,     /* arbitrary bytes */
    LOAMS_T_TIMESTAMP = 6, /* microseconds since the Unix epoch, UTC */
    LOAMS_T_JSON = 7,      /* a JSON document as text, valid (RFC 8259): whoever
                            * sets one has checked it (the host and the shipped
                            * plugins do), and readers may rely on it */
    LOAMS_T_VECTOR = 8,    /* float32 vector */
    LOAMS_T_LIST = 9       /* list of values */
} loams_type;

/* A view of one value.  When the host fills it (batch_get), pointers stay
 * valid until the batch is freed by the host (at least until the plugin call
 * that received the batch returns).  When a plugin passes one to the host
 * (batch_set), the host copies what it points to before returning. */
typedef struct loams_value {
    uint32_t type; /* a loams_type */
    uint32_t reserved;
    union {
        int b;     /* BOOL: 0 or 1 */
        int64_t i; /* INT64, TIMESTAMP */
        double f;  /* FLOAT64 */
        struct {
            const char *ptr;
            size_t len;
        } s; /* STRING, BYTES, JSON */
        struct {
            const float *ptr;
            size_t n;
        } vec; /* VECTOR */
        struct {
            const struct loams_value *items;
            size_t n;
        } list; /* LIST */
    } u;
} loams_value;

/* Log levels for host->log(). */
typedef enum loams_log_level {
    LOAMS_LOG_ERROR = 0,
    LOAMS_LOG_WARN = 1,
    LOAMS_LOG_INFO = 2,
    LOAMS_LOG_DEBUG = 3
} loams_log_level;

/* Object metadata returned by store heads and listings. */
typedef struct loams_object_info {
    uint64_t size;
    int64_t mtime_us; /* last modification, microseconds since the epoch */
} loams_object_info;

/* A scalar UDF that a plugin registers for SQL transforms.
 * fn is called with nargs argument views; it writes its result to *out
 * (pointers in *out must stay valid until fn is called again on the same
 * thread or the plugin is unloaded: a thread-local scratch buffer is the
 * usual choice).  Returns 0 or a negative status with host->set_error(ctx).
 * fn may be called from any thread at once: it must be reentrant. */
typedef int (*loams_udf_fn)(loams_ctx *ctx, void *userdata, const loams_value *args, size_t nargs,
                            loams_value *out);

/* An aggregate function that a plugin (or the host) registers for SQL
 * transforms' GROUP BY (ABI 1.7; docs/PLUGINS.md "Aggregate functions").
 * Its state is mergeable: update() folds one row's arguments in, merge()
 * folds another state of the same function in, and merging the states of
 * any split of the rows, in any order, gives the state of the whole (what
 * a link needs: each batch's partial state is merged into the stored one
 * at commit).  serialize() writes a stable, versioned binary form (its
 * first byte is the form's version, fields little-endian) that
 * deserialize() reads back on any host and any later version of the
 * plugin; finalize() gives the value a query sees.
 *
 * States are owned by whoever created them (init or deserialize) and freed
 * with free(); the functions never keep a pointer to their arguments.
 * Every function may be called from any thread, on different states at
 * once; one state is used by one thread at a time.  Errors: 0 or a
 * negative status with the message set through host->set_error(ctx) (ctx
 * may be NULL when the caller has none: the message is then dropped). */
typedef struct loams_aggregate {
    uint32_t size; /* sizeof(loams_aggregate) as the registrant was built */
    uint32_t reserved;
    const char *name; /* an SQL identifier, unique case-insensitively */
    int min_args;     /* arguments update() takes: count(*) 0, sum 1, */
    int max_args;     /* approx_quantile 2 (0..8) */
    void *userdata;   /* passed to every function */
    /* A new empty state to *state.  -ENOMEM. */
    int (*init)(loams_ctx *ctx, void *userdata, void **state);
    /* Folds one row in: args[0..nargs) (min_args <= nargs <= max_args),
     * views valid during the call.  LOAMS_EINPUT for an argument of a type
     * the function does not take (the row fails, the state is unchanged). */
    int (*update)(loams_ctx *ctx, void *userdata, void *state, const loams_value *args,
                  size_t nargs);
    /* Folds `other` (a state of the same function; unchanged) into state.
     * LOAMS_EINPUT when the two cannot merge (e.g. different parameters). */
    int (*merge)(loams_ctx *ctx, void *userdata, void *state, const void *other);
    /* Appends the binary form of state to out (a host buffer).  -ENOMEM. */
    int (*serialize)(loams_ctx *ctx, void *userdata, const void *state, loams_buf *out);
    /* A new state from data[0..len) to *state.  LOAMS_ECORRUPT for a short
     * or malformed form, LOAMS_EUNSUPPORTED for a form version newer than
     * this code reads (the message names both versions), -ENOMEM. */
    int (*deserialize)(loams_ctx *ctx, void *userdata, const void *data, size_t len, void **state);
    /* The finished value to *out (NULL for no rows; pointers in *out stay
     * valid until the next call on state or its free).  LOAMS_EINPUT when
     * the value cannot be given (e.g. an integer sum that overflowed). */
    int (*finalize)(loams_ctx *ctx, void *userdata, void *state, loams_value *out);
    /* Frees a state from init or deserialize.  state may be NULL. */
    void (*free)(void *userdata, void *state);
} loams_aggregate;

/*
 * The host API table.  Append-only within an ABI major: new members are
 * added at the end under a comment naming the minor that added them, and
 * `size` tells a plugin which members exist (a member exists when its offset
 * is below size).  Every function pointer in a host's table is non-NULL.
 */
/* Non-zero when host table h has member m: a host built against older
 * headers has a smaller table (h->size), so a plugin checks this before it
 * calls a function added after the ABI minor it needs, and does without it
 * (or refuses to open) on an older host. */
#define LOAMS_HOST_HAS(h, m) ((h)->size >= offsetof(loams_host_api, m) + sizeof((h)->m))

typedef struct loams_host_api {
    uint32_t size;      /* sizeof(loams_host_api) as the host was built */
    uint32_t abi_major; /* LOAMS_ABI_MAJOR of the host */
    uint32_t abi_minor; /* LOAMS_ABI_MINOR of the host */
    uint32_t reserved;

    /* ---- added in 1.0: logging and errors ---- */

    /* One log line, prefixed by the host with time, level and [kind:name].
     * Never pass secrets.  Thread-safe. */
    void (*log)(loams_ctx *ctx, loams_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    /* Sets the message that goes with the status a plugin function is about
     * to return (replaces any previous one).  Thread-safe per ctx. */
    void (*set_error)(loams_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

    /* ---- added in 1.0: memory (counted per plugin) ---- */

    /* Like malloc/calloc/realloc/free; NULL on failure. Memory from these
     * belongs to the plugin, which frees it with host->free(). */
    void *(*malloc)(loams_ctx *ctx, size_t size);
    void *(*calloc)(loams_ctx *ctx, size_t n, size_t size);
    void *(*realloc)(loams_ctx *ctx, void *ptr, size_t size);
    void (*free)(loams_ctx *ctx, void *ptr);

    /* ---- added in 1.0: options ---- */

    /* The value of option `name` for this instance (from the link's WITH
     * list, the config file or the option's default), or NULL when unset.
     * Host-owned, valid until close.  Only names the plugin declared in its
     * descriptor's option table can be set. */
    const char *(*option)(loams_ctx *ctx, const char *name);

    /* ---- added in 1.0: reading batches ---- */

    size_t (*batch_rows)(const loams_batch *b);
    size_t (*batch_columns)(const loams_batch *b);
    /* Column name, host-owned, valid while the batch; NULL if col is out of range. */
    const char *(*batch_column_name)(const loams_batch *b, size_t col);
    /* Index of the column called `name`, or -1 when there is none. */
    long (*batch_column_find)(const loams_batch *b, const char *name);
    /* Fills *out with a view of the cell; -EINVAL when row/col are out of range. */
    int (*batch_get)(const loams_batch *b, size_t row, size_t col, loams_value *out);
    /* Source position of a row: the (partition, offset) of the stream record
     * it came from.  -EINVAL when row is out of range. */
    int (*batch_row_origin)(const loams_batch *b, size_t row, int32_t *partition, int64_t *offset);
    /* Non-zero when a previous stage marked the row failed; the stages that
     * follow skip failed rows. */
    int (*batch_row_failed)(const loams_batch *b, size_t row);

    /* ---- added in 1.0: building batches ---- */

    /* Index of column `name`, creating it (all NULL) when missing.
     * -ENOMEM, -EINVAL (empty name). */
    int (*batch_add_column)(loams_batch *b, const char *name, size_t *col);
    /* Copies *v into the cell.  -EINVAL (out of range, bad type), -ENOMEM. */
    int (*batch_set)(loams_batch *b, size_t row, size_t col, const loams_value *v);
    /* Appends one all-NULL row whose origin is row `from_row` of batch
     * `from` (pass from = NULL for no origin).  The new index goes to *row. */
    int (*batch_append_row)(loams_batch *b, const loams_batch *from, size_t from_row, size_t *row);
    /* Marks one row failed with a status and a message (the host adds the
     * record's partition and offset).  The row's record then goes through the
     * link's on_error; the rest of the batch carries on. */
    int (*batch_row_fail)(loams_batch *b, size_t row, int status, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

    /* ---- added in 1.0: offsets, key lists, buffers ---- */

    /* Next offset for a partition; -ENOENT when the set has none. */
    int (*offsets_get)(const loams_offsets *o, int32_t partition, int64_t *next);
    int (*offsets_set)(loams_offsets *o, int32_t partition, int64_t next);
    /* Iteration: the i-th (partition, next) pair in partition order. */
    size_t (*offsets_count)(const loams_offsets *o);
    int (*offsets_at)(const loams_offsets *o, size_t i, int32_t *partition, int64_t *next);

    int (*keylist_add)(loams_keylist *l, const char *key);
    size_t (*keylist_count)(const loams_keylist *l);
    const char *(*keylist_at)(const loams_keylist *l, size_t i);

    int (*buf_append)(loams_buf *buf, const void *data, size_t len);
    const void *(*buf_data)(const loams_buf *buf, size_t *len);

    /* ---- added in 1.0: object store (dispatches to the store plugin) ---- */

    /* See loams/store.h for the meaning of each call; errors are those of the
     * store plugin (-ENOENT for a missing key, -EINVAL for a bad key, -EIO). */
    int (*store_put)(loams_store *s, const char *key, const void *data, size_t len);
    int (*store_get)(loams_store *s, const char *key, uint64_t off, uint64_t len, loams_buf *out);
    int (*store_head)(loams_store *s, const char *key, loams_object_info *info);
    int (*store_list)(loams_store *s, const char *prefix, const char *start_after, size_t max,
                      loams_keylist *out);
    int (*store_delete)(loams_store *s, const char *key);
    int (*store_writer_open)(loams_store *s, const char *key, loams_store_writer **w);
    int (*store_writer_write)(loams_store_writer *w, const void *data, size_t len);
    /* Makes the object visible atomically and frees the writer. */
    int (*store_writer_commit)(loams_store_writer *w);
    /* Discards what was written and frees the writer.  Never fails. */
    void (*store_writer_abort)(loams_store_writer *w);

    /* ---- added in 1.0: UDFs ---- */

    /* Registers a scalar SQL function for every SQL transform of this host.
     * nargs = -1 for variadic.  -EEXIST when the name is taken, -EINVAL.
     * A plugin registers from its entry point (ctx NULL): that is the one
     * moment ABI 1.x runs every loaded plugin, so CREATE LINK and every
     * link task see the function; the host then keeps the plugin's file
     * mapped for the life of the process.  The entry runs again when a
     * process loads the plugins again: treat -EEXIST for its own names as
     * done (tests/plugins/udf-functions). */
    int (*udf_register)(loams_ctx *ctx, const char *name, int nargs, loams_udf_fn fn,
                        void *userdata);
    /* Enumerates registered UDFs (transform plugins bind them). */
    size_t (*udf_count)(loams_ctx *ctx);
    int (*udf_at)(loams_ctx *ctx, size_t i, const char **name, int *nargs, loams_udf_fn *fn,
                  void **userdata);

    /* ---- added in 1.0: cancellation ---- */

    /* Non-zero once the run that owns ctx is cancelled (lease lost,
     * shutdown).  Long loops in a plugin poll it and return LOAMS_ECANCELLED. */
    int (*cancelled)(loams_ctx *ctx);

    /* ---- added in 1.1: buffers a plugin owns ---- */

    /* Creates an empty buffer owned by the caller (for store_get reads
     * outside a query, e.g. a target loading its manifest on resume); free
     * it with buf_free.  -ENOMEM. */
    int (*buf_create)(loams_buf **out);
    /* Frees a buffer from buf_create.  buf may be NULL.  Never pass a buffer
     * the host handed you (a query's `out`). */
    void (*buf_free)(loams_buf *buf);
    /* Empties a buffer, keeping its memory (any buffer the plugin may
     * write to). */
    void (*buf_reset)(loams_buf *buf);

    /* ---- added in 1.2: absolute object URIs ---- */

    /* Writes the absolute URI of object `key` of store `s` into
     * out[0..size) (see loams/store.h `uri`).  LOAMS_EUNSUPPORTED when the
     * store plugin cannot name its objects (built before ABI 1.2);
     * -EINVAL, -ENAMETOOLONG. */
    int (*store_uri)(loams_store *s, const char *key, char *out, size_t size);

    /* ---- added in 1.2: decoding only what is read ---- */

    /* Non-zero when a decoder should fill the column called name[0..len)
     * of input batch b; zero when no later stage reads it (the transform
     * said which decoded columns it reads: loams_transform_vtable's
     * input_columns), so the decoder may leave it out.  A decoder still
     * checks the whole record: a record that does not decode fails whether
     * or not its columns are wanted.  Always non-zero for a batch the host
     * set no filter on.  Names compare ASCII case-insensitively. */
    int (*batch_column_wanted)(const loams_batch *b, const char *name, size_t len);

    /* ---- added in 1.3: a column at once ---- */

    /* The cells of column col of b, one per row (batch_rows(b) of them):
     * the views batch_get gives, in an array the host owns.  Valid until a
     * row is added to b or the plugin call returns (cells set, columns
     * added and rows failed meanwhile leave it valid, and a set shows in
     * it); NULL when col is out of range.  For a stage that reads whole
     * columns: one call instead of one per cell. */
    const loams_value *(*batch_column_cells)(const loams_batch *b, size_t col);

    /* ---- added in 1.4: embeddings (a transform's embed()) ---- */

    /* Whether `provider` names an embedding provider of the namespace of
     * the link that owns ctx: "name" or "ns.name", optionally followed by
     * ":model" to use that model instead of the provider's own.  0 when it
     * does.  Errors, with the message in msg[0..size) (always
     * NUL-terminated when size > 0): LOAMS_ENOTFOUND (no such provider:
     * the message gives the CREATE EMBEDDING PROVIDER statement to run),
     * LOAMS_EINPUT (a malformed reference), LOAMS_EUNSUPPORTED (ctx
     * belongs to no link, or the host runs no embeddings). */
    int (*embed_check)(loams_ctx *ctx, const char *provider, char *msg, size_t size);
    /* Embeds texts[0..n) (STRING or NULL values) through `provider` (as
     * embed_check).  The host caches vectors by content hash, sends the
     * texts it has no vector for in batches, retries transient failures
     * and keeps the provider's rate limits; it returns when every text has
     * a vector or a final failure.  For each i: vectors[i] is a VECTOR
     * view (host-owned, valid until the next embed_texts call on ctx or
     * ctx's end) or NULL for a NULL text, status[i] is 0, or the failure
     * of that text with errors[i] its message (host-owned, same life; no
     * secret in it).  Per-text failures: LOAMS_ERETRY (the provider stayed
     * unavailable through the retries), LOAMS_EINPUT (it refused the
     * text), LOAMS_ESCHEMA (a vector of the wrong length), -EACCES (the
     * key was refused or is missing), -EIO.  Returns 0 when every text has
     * its outcome, or, with the message set on ctx and no outcome:
     * LOAMS_ECANCELLED, -ENOMEM, LOAMS_ENOTFOUND, LOAMS_EINPUT,
     * LOAMS_EUNSUPPORTED (as embed_check). */
    int (*embed_texts)(loams_ctx *ctx, const char *provider, const loams_value *texts, size_t n,
                       loams_value *vectors, int *status, const char **errors);

    /* ---- added in 1.5: the schema registry ---- */

    /* The schema with global id `id` (the id of the Confluent wire format:
     * magic byte 0, then 4 bytes big-endian): its format ("AVRO",
     * "PROTOBUF" or "JSON") into format[0..format_size) (NUL-terminated)
     * and its text into `text` (a buffer from buf_create, emptied first).
     * Errors, with the message set on ctx: LOAMS_ENOTFOUND (no schema has
     * that id), LOAMS_EUNSUPPORTED (ctx belongs to no link: no registry
     * is reachable), -ENOMEM, -EIO. */
    int (*schema_by_id)(loams_ctx *ctx, uint32_t id, char *format, size_t format_size,
                        loams_buf *text);
    /* The newest version of schema subject `subject` ("ns.name", or
     * "name" in namespace default): its id to *id and version to
     * *version (either may be NULL), and, when text is not NULL, its
     * format and text as schema_by_id gives them (text NULL: a cheap
     * question, e.g. once per batch, whether a new version came).
     * Errors as schema_by_id; LOAMS_ENOTFOUND for a subject that does not
     * exist or has no version, LOAMS_EINPUT for a malformed name. */
    int (*schema_latest)(loams_ctx *ctx, const char *subject, uint32_t *id, uint32_t *version,
                         char *format, size_t format_size, loams_buf *text);

    /* ---- added in 1.7: aggregate functions ---- */

    /* Registers an aggregate for every SQL transform's GROUP BY and every
     * target that merges states.  The host copies *agg; the strings and
     * functions it points to must stay valid for the life of the process
     * (register from the entry point, ctx NULL, as udf_register).  The
     * host registers count, sum, min, max, avg, approx_count_distinct and
     * approx_quantile itself.  -EEXIST when the name is taken (by an
     * aggregate or a UDF), -EINVAL (bad name, args, a NULL function, size
     * smaller than 1.7's), -ENOMEM. */
    int (*aggregate_register)(loams_ctx *ctx, const loams_aggregate *agg);
    /* How many aggregates are registered now. */
    size_t (*aggregate_count)(loams_ctx *ctx);
    /* The i-th aggregate (registration order), host-owned, valid for the
     * life of the process; NULL when i >= aggregate_count(). */
    const loams_aggregate *(*aggregate_at)(loams_ctx *ctx, size_t i);
    /* The aggregate called name[0..len) (case-insensitive), or NULL. */
    const loams_aggregate *(*aggregate_find)(loams_ctx *ctx, const char *name, size_t len);
} loams_host_api;

#ifdef __cplusplus
}
#endif

#endif /* LOAMS_HOST_H */
