/*
 * query_parse.h - the full-text query language (docs/SEARCH.md): what a
 * user of a Lucene-style engine types, parsed into a flat list of clauses.
 *
 *   printer jam         words: either may match (SHOULD), both score
 *   +printer -laser     + must match (MUST), - must not (MUST_NOT)
 *   "paper jam"         a phrase: its words next to each other in a field
 *   subject:printer     a word (or "phrase", or prefix) in one field only
 *   print*              a prefix: every word that starts with "print"
 *   a AND b, a OR b     AND makes both sides MUST; OR is the default
 *   NOT a               the same as -a
 *
 * Words go through the collection's analyzer (tokenize.h), so a clause's
 * terms are the tokens a document's text would give; a word that gives no
 * token (punctuation, shorter than min_bytes) drops out, and a word that
 * gives several (wi-fi) becomes one clause per token with the same
 * operator.  A query that does not parse is LOAMS_EINPUT with a message
 * that names the column (characters, from 1), echoes the query and puts a
 * caret under the place.
 *
 * Thread-safe (no state).
 */
#ifndef LOAMS_COLLECTION_QUERY_PARSE_H
#define LOAMS_COLLECTION_QUERY_PARSE_H

#include <stddef.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"
#include "tokenize.h"

/* The longest query accepted, in bytes, and the most clauses. */
#define LOAMS__QUERY_MAX_BYTES 4096
#define LOAMS__QUERY_MAX_CLAUSES 64
/* Terms one prefix clause expands to at most (the first in byte order). */
#define LOAMS__QUERY_MAX_EXPANSIONS 128

typedef enum loams__occur {
    LOAMS__OCCUR_SHOULD = 0,
    LOAMS__OCCUR_MUST = 1,
    LOAMS__OCCUR_NOT = 2
} loams__occur;

typedef enum loams__qkind {
    LOAMS__Q_TERM = 1,   /* terms[0] */
    LOAMS__Q_PHRASE = 2, /* terms[0..n) in order, n >= 2 */
    LOAMS__Q_PREFIX = 3  /* terms[0] is the analyzed prefix */
} loams__qkind;

typedef struct loams__qclause {
    int occur;    /* loams__occur */
    int kind;     /* loams__qkind */
    char *field;  /* NULL: the searched fields */
    char **terms; /* NUL-terminated analyzed tokens */
    size_t n_terms;
    size_t column; /* where the clause starts in the query (characters, from 1) */
} loams__qclause;

/* A parsed query; owns everything below (allocated from mem). */
typedef struct loams__query {
    const loams_kit_mem *mem;
    loams__qclause *c;
    size_t n;
} loams__query;

/* Parses q[0, len) with the analyzer options tok (NULL: defaults) into
 * *out (free with loams__query_free; mem NULL: libc, must outlive it).
 * A query of only spaces, or whose words all drop out, has n = 0.
 * Errors: LOAMS_EINPUT (message: "query column N: what", the query, a
 * caret), -ENOMEM. */
int loams__query_parse(const loams_kit_mem *mem, const char *q, size_t len,
                       const loams__tok_opts *tok, loams__query **out, loams_kit_err *e);

void loams__query_free(loams__query *qr);

#endif
