/*
 * loams/kit/manifest_chain.h - the manifest chain of a target plugin: the
 * commit lifecycle of loams/target.h (resume -> prepare -> committed or
 * abort) over immutable manifest objects, and the manifests a state keeps
 * in memory (the base of the next commit, the prepared one, the last one a
 * query or maintenance read or wrote).
 *
 * The chain does not know what a manifest holds: the plugin hands it a
 * table of operations (create, parse, encode, free, and the applied
 * offsets) and builds each new manifest itself; the chain reads and writes
 * the objects, names them, keeps the applied offsets, and swaps the base
 * only when the core's transaction has committed the prepared manifest.
 *
 * Object keys: "<ns>/<name>/<dir>/<seq, 20 digits>-<16 hex random><suffix>"
 * (loams_kit_object_key); manifests go to dir "manifest", suffix ".json".
 * The random part keeps two writers (a zombie and its successor) from
 * ever writing the same key.
 *
 * Ownership: the chain is caller-owned storage (a member of the plugin's
 * state); it owns every manifest and ref string it holds and frees them in
 * loams_kit_chain_fini().  Manifests handed to it (prepare, publish) become
 * its own, on failure too.  Pointers it returns (manifests, refs, object
 * bytes) stay valid until the call named with each function.
 * Errors: 0 or a negative status with the message in the caller's
 * loams_kit_err (never host->set_error: the plugin does that at its
 * boundary).  Threads: one thread at a time per chain, like a target state.
 */
#ifndef LOAMS_KIT_MANIFEST_CHAIN_H
#define LOAMS_KIT_MANIFEST_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include <loams/plugin.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "loams/kit/mem.h"

/* What the chain needs of the plugin's manifest type.  `ud` is the chain's
 * (loams_kit_chain_init); `m` is a manifest made by create or parse. */
typedef struct loams_kit_chain_ops {
    /* An empty manifest: seq 0, no commit yet.  -ENOMEM. */
    int (*create)(void *ud, void **out, loams_kit_err *e);
    /* Parses the bytes of manifest object `ref` (named in messages) and
     * checks that it belongs to this target.  LOAMS_ECORRUPT,
     * LOAMS_EUNSUPPORTED, -ENOMEM. */
    int (*parse)(void *ud, const void *data, size_t len, const char *ref, void **out,
                 loams_kit_err *e);
    /* Appends the object's bytes.  -ENOMEM. */
    int (*encode)(void *ud, const void *m, loams_kit_buf *out, loams_kit_err *e);
    /* Frees m (never NULL). */
    void (*free)(void *ud, void *m);
    /* The applied offsets of m: returns how many there are and, when
     * i is below that, the i-th (partition and next offset). */
    size_t (*applied)(const void *m, size_t i, int32_t *partition, int64_t *next);
    /* Sets the next offset of a partition in m.  -ENOMEM. */
    int (*set_applied)(void *ud, void *m, int32_t partition, int64_t next, loams_kit_err *e);
} loams_kit_chain_ops;

typedef struct loams_kit_chain {
    /* set by loams_kit_chain_init; read them, never write them */
    const loams_host_api *host;
    loams_ctx *ctx;
    loams_store *store;
    const loams_kit_chain_ops *ops;
    void *ud;
    const loams_kit_mem *mem; /* the ref strings' memory; NULL: libc */
    char *ns, *name;
    char *what;      /* "<kind> <ns>.<name>", the start of every message */
    loams_buf *rbuf; /* object reads */

    void *base; /* the newest commit known: the base of the next one */
    char *base_ref;
    void *pending; /* prepared, waiting for committed() or abort() */
    char *pending_ref;
    void *other; /* the last other manifest read (loams_kit_chain_at) or published */
    char *other_ref;
} loams_kit_chain;

/* Sets up c for target ns.name of kind `kind` ("collection", "graph": the
 * first word of messages), with an empty base.  ops and ud must outlive
 * the chain; mem (NULL: libc) too.  Needs host ABI 1.1 (buf_create).
 * Errors: LOAMS_EUNSUPPORTED (an older host), -ENOMEM.  On error the chain
 * holds nothing (fini is still safe). */
int loams_kit_chain_init(loams_kit_chain *c, const loams_host_api *host, loams_ctx *ctx,
                         loams_store *store, const loams_kit_chain_ops *ops, void *ud,
                         const loams_kit_mem *mem, const char *kind, const char *ns,
                         const char *name, loams_kit_err *e);
/* Frees everything the chain holds.  A zeroed chain is fine. */
void loams_kit_chain_fini(loams_kit_chain *c);

/* Reads [off, off + len) of object `key` (len 0: to its end); *data is
 * valid until the next read.  Errors: the store's (-ENOENT says the object
 * is missing, and the message asks whether it was removed by hand). */
int loams_kit_chain_read(loams_kit_chain *c, const char *key, uint64_t off, uint64_t len,
                         const void **data, size_t *got, loams_kit_err *e);
/* Writes object `key`, journaling the key in `written` first (so that the
 * host deletes it if the commit fails; written may be NULL).  Errors: the
 * store's, -ENOMEM. */
int loams_kit_chain_write(loams_kit_chain *c, const char *key, const void *data, size_t len,
                          loams_keylist *written, loams_kit_err *e);

/* target.h resume(): forgets any prepared manifest, loads `ref` (NULL: an
 * empty target) as the base and puts its applied offsets into `applied`.
 * On error the base is unchanged.  Errors: -ENOENT, LOAMS_ECORRUPT, -EIO,
 * -ENOMEM. */
int loams_kit_chain_resume(loams_kit_chain *c, const char *ref, loams_offsets *applied,
                           loams_kit_err *e);

/* target.h prepare(): takes m (the next commit, built by the plugin from
 * the base, with seq = base seq + 1 and its own files already written),
 * records `applied` in it, writes it as a new manifest object and keeps it
 * as the pending commit, replacing any earlier one.  *ref is its key,
 * valid until the next resume, prepare, committed or abort.
 * Errors: -ENOMEM, the store's, LOAMS_EIO-like statuses of encode. */
int loams_kit_chain_prepare(loams_kit_chain *c, void *m, uint64_t seq, const loams_offsets *applied,
                            loams_keylist *written, const char **ref, loams_kit_err *e);

/* target.h committed(): when ref names the pending commit, it becomes the
 * base and 1 is returned; else the host's log gets a warning (the next
 * commit starts from a fresh resume) and 0 is returned. */
int loams_kit_chain_committed(loams_kit_chain *c, const char *ref);

/* target.h abort(): forgets the pending commit. */
void loams_kit_chain_abort(loams_kit_chain *c);

/* The manifest of commit `ref` for a query or maintenance: an empty one
 * for NULL, the base or the pending one when ref names them, else the
 * object read (kept until another ref is asked for).  *m is valid until
 * the next call on the chain other than read/write.
 * Errors: as loams_kit_chain_resume. */
int loams_kit_chain_at(loams_kit_chain *c, const char *ref, const void **m, loams_kit_err *e);

/* target.h maintain(): takes m (built from a commit, with `seq`), writes it
 * as a new manifest object and keeps it as the chain's other manifest, so
 * that a query of it needs no read.  *ref as loams_kit_chain_at's *m.
 * Errors: as loams_kit_chain_prepare. */
int loams_kit_chain_publish(loams_kit_chain *c, void *m, uint64_t seq, loams_keylist *written,
                            const char **ref, loams_kit_err *e);

/* Writes "<ns>/<name>/<dir>/<seq:020>-<random:016x><suffix>" into buf.
 * Errors: -ENAMETOOLONG (it does not fit in size bytes), -EIO (no random
 * bytes could be had). */
int loams_kit_object_key(char *buf, size_t size, const char *ns, const char *name, const char *dir,
                         uint64_t seq, const char *suffix);

#endif
