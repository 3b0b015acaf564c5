/*
 * split_writer.h - builds one immutable split (docs/COLLECTION-SPLIT.md):
 * documents go in one at a time; the inverted index, doc lengths, _pk table
 * and vector columns are built in memory; stored documents are compressed
 * in blocks and streamed to the sink as they fill, so the bulk of a split
 * (the documents) is not held in memory; finish() writes everything else.
 *
 *     loams__split_writer_new(&opts, sink, ud, &w, &err);
 *     loams__split_writer_field(w, "subject", LOAMS__FIELD_TEXT, 0, &subj, &err);
 *     loams__split_writer_begin_doc(w, pk, pk_len, &doc, &err);
 *     loams__split_writer_add_text(w, subj, text, len, &err);
 *     loams__split_writer_end_doc(w, json, json_len, &err);
 *     ...
 *     loams__split_writer_finish(w, &bytes, &err);
 *     loams__split_writer_free(w);
 *
 * Doc ids are dense from 0 in the order documents were begun.  The writer
 * does not deduplicate _pk values: the caller keeps at most one live copy of
 * a _pk per collection (see collection_manifest.h for deletion bitmaps).
 * The writer never calls the sink after a failure; the caller then discards
 * what the sink received.  Not thread-safe: one thread per writer.
 */
#ifndef LOAMS_COLLECTION_SPLIT_WRITER_H
#define LOAMS_COLLECTION_SPLIT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"
#include "tokenize.h"

typedef enum loams__field_kind {
    LOAMS__FIELD_TEXT = 1,  /* tokenized into the inverted index */
    LOAMS__FIELD_VECTOR = 2 /* float32 column for kNN */
} loams__field_kind;

/* Receives the split's bytes in order.  Returns 0, or a negative status
 * with a message in e. */
typedef int (*loams__split_sink_fn)(void *ud, const void *data, size_t len, loams_kit_err *e);

typedef struct loams__split_writer_opts {
    int codec;          /* LOAMS__CODEC_NONE or LOAMS__CODEC_ZSTD */
    int zstd_level;     /* for LOAMS__CODEC_ZSTD; 1 is fast, negative faster */
    size_t block_bytes; /* stored-document block target (raw bytes), e.g. 65536 */
    loams__tok_opts tok;
    int64_t created_us; /* recorded in META */
    /* Every allocation of the writer (its index, blocks, zstd context);
     * NULL: libc.  Must outlive the writer. */
    const loams_kit_mem *mem;
} loams__split_writer_opts;

/* Fills o with the defaults: zstd level 1, 64 KiB blocks, default token
 * limits, created_us 0, the libc allocator. */
void loams__split_writer_opts_default(loams__split_writer_opts *o);

typedef struct loams__split_writer loams__split_writer;

/* Statistics of one field as built so far. `name` is owned by the writer. */
typedef struct loams__split_field_info {
    const char *name;
    int kind;        /* loams__field_kind */
    uint32_t dim;    /* vectors: dimension; text: 0 */
    uint64_t docs;   /* text: docs with >= 1 token; vectors: docs with a vector */
    uint64_t tokens; /* text: total tokens */
    uint64_t terms;  /* text: distinct terms */
} loams__split_field_info;

/* Creates a writer that streams to sink(ud) (the sink must stay valid until
 * finish or free).  Writes the header at once.
 * Errors: -EINVAL (bad options), -ENOMEM, the sink's. */
int loams__split_writer_new(const loams__split_writer_opts *o, loams__split_sink_fn sink, void *ud,
                            loams__split_writer **out, loams_kit_err *e);

/* The index of field `name` of `kind` (dim: vector dimension, >= 1, else
 * 0), creating it when new.  LOAMS_ESCHEMA when the name exists with another
 * kind or dimension; -EINVAL (empty name); -ENOMEM. */
int loams__split_writer_field(loams__split_writer *w, const char *name, int kind, uint32_t dim,
                              uint32_t *fid, loams_kit_err *e);

/* Starts the next document.  pk is copied.  Errors: -EINVAL (empty pk, a
 * document already open, 2^32-1 documents), -ENOMEM. */
int loams__split_writer_begin_doc(loams__split_writer *w, const char *pk, size_t pk_len,
                                  uint32_t *doc, loams_kit_err *e);

/* Tokenizes text into text field fid of the open document (may be called
 * several times per field: a list of strings).  -EINVAL (no open document,
 * fid not a text field), -ENOMEM. */
int loams__split_writer_add_text(loams__split_writer *w, uint32_t fid, const char *text, size_t len,
                                 loams_kit_err *e);

/* Sets vector field fid of the open document (copied).  -EINVAL (no open
 * document, not a vector field, n != dim, set twice), -ENOMEM. */
int loams__split_writer_add_vector(loams__split_writer *w, uint32_t fid, const float *v, size_t n,
                                   loams_kit_err *e);

/* Ends the open document with its stored form (a JSON object, copied).
 * May write a full block to the sink.  -EINVAL, -ENOMEM, the sink's. */
int loams__split_writer_end_doc(loams__split_writer *w, const char *json, size_t len,
                                loams_kit_err *e);

uint32_t loams__split_writer_docs(const loams__split_writer *w);
size_t loams__split_writer_fields(const loams__split_writer *w);
/* Info of field i (< loams__split_writer_fields()). */
void loams__split_writer_field_info(const loams__split_writer *w, size_t i,
                                    loams__split_field_info *info);
/* Tokens of finished doc `doc` in text field fid (0 when out of range). */
uint32_t loams__split_writer_doc_tokens(const loams__split_writer *w, uint32_t fid, uint32_t doc);
/* The _pk of finished document doc (< docs()), not NUL-terminated; valid
 * until the writer is freed. */
void loams__split_writer_pk(const loams__split_writer *w, uint32_t doc, const char **pk,
                            size_t *len);
/* After finish: the PK_INDEX entries, (loams_kit_key_hash of the _pk, doc id)
 * sorted by hash and, within a hash, by doc id; n = docs().  Valid until the
 * writer is freed.  -EINVAL before finish. */
int loams__split_writer_pk_index(const loams__split_writer *w, const uint64_t **hash,
                                 const uint32_t **doc, size_t *n);
/* Approximate bytes of memory the writer holds now. */
size_t loams__split_writer_memory(const loams__split_writer *w);

/* Writes the rest of the split (index sections, directory, footer) to the
 * sink; the split's total size goes to *bytes.  After finish only
 * loams__split_writer_free and the getters may be called.
 * Errors: -EINVAL (a document is open), -ENOMEM, the sink's. */
int loams__split_writer_finish(loams__split_writer *w, uint64_t *bytes, loams_kit_err *e);

/* Frees the writer.  w may be NULL. */
void loams__split_writer_free(loams__split_writer *w);

#endif
