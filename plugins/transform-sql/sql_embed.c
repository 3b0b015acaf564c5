/*
 * sql_embed.c - owns embed(provider, text) of the SQL transform: the
 * providers a program names, checked at compile, and the vectors of a
 * batch, asked of the host in one call per provider.
 *
 * A per-row HTTP call would cost a round trip per record, so a batch with
 * embed() calls runs the statement twice (loams__sql_embed_prepare, from
 * sql_run): the first pass, with nothing emitted and no row failed, only
 * collects the distinct texts each embed() call is asked for; then each
 * provider gets one host->embed_texts call with its texts (the host
 * batches, caches, rate-limits and retries them); the second pass is the
 * real one, where embed() returns the vector it finds for its text.  A
 * text the first pass did not see (an expression whose value depends on
 * another embed(), such as a CASE over one) is asked for alone then: the
 * output is the same, only that call is not batched.
 *
 * The first argument must be a string literal ('endpoint',
 * 'ns.endpoint', 'endpoint:model'); CREATE LINK checks each with
 * host->embed_check, so a link whose namespace lacks the provider is
 * refused with the statement to run.  embed(p, NULL) is NULL; a text of
 * another type than TEXT fails its row; a text the provider could not
 * embed fails its row with the host's message (then on_error).  The
 * vector comes out as a VECTOR cell (a BLOB of float32s with the subtype
 * LOAMS__SQL_SUBTYPE_VECTOR inside SQLite).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "transform_sql.h"

typedef struct entry {
    uint32_t ref;
    int status;
    int pending;
    char *text;
    size_t len;
    float *vec;
    size_t dims;
    char *msg;
} entry;

struct loams__sql_embed {
    char **refs;
    size_t nrefs;
    entry *entries;
    size_t n, cap;
    size_t *slots; /* open addressing over entries, SIZE_MAX = empty */
    size_t nslots;
};

static uint64_t hash_text(uint32_t ref, const char *p, size_t len)
{
    uint64_t h = 1469598103934665603ULL ^ ref;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    }
    return h;
}

int loams__sql_embed_available(void)
{
    return LOAMS_HOST_HAS(loams__sql_host, embed_texts);
}

static int add_ref(loams__sql_state *st, const char *name, size_t *idx)
{
    loams__sql_embed *e = st->embed;
    const loams_host_api *h = loams__sql_host;
    for (size_t i = 0; i < e->nrefs; i++) {
        if (strcmp(e->refs[i], name) == 0) {
            *idx = i;
            return 0;
        }
    }
    char **r = h->realloc(st->ctx, e->refs, (e->nrefs + 1) * sizeof *r);
    if (r == NULL) {
        return -ENOMEM;
    }
    e->refs = r;
    size_t n = strlen(name);
    r[e->nrefs] = h->malloc(st->ctx, n + 1);
    if (r[e->nrefs] == NULL) {
        return -ENOMEM;
    }
    memcpy(r[e->nrefs], name, n + 1);
    *idx = e->nrefs++;
    return 0;
}

int loams__sql_embed_compile(loams__sql_state *st)
{
    const loams_host_api *h = loams__sql_host;
    const char *text = st->program;
    size_t len = strlen(text), pos = 0;
    loams__sql_token tok, t;
    for (;;) {
        int k = loams__sql_token_next(text, len, pos, &tok);
        pos = tok.start + tok.len;
        if (k == LOAMS__TK_END) {
            return 0;
        }
        if (k != LOAMS__TK_IDENT || !loams__sql_token_is(text, &tok, "embed")) {
            continue;
        }
        size_t p = pos;
        do {
            k = loams__sql_token_next(text, len, p, &t);
            p = t.start + t.len;
        } while (k == LOAMS__TK_SPACE || k == LOAMS__TK_COMMENT);
        if (k != LOAMS__TK_LPAREN) {
            continue; /* a column called embed */
        }
        if (!loams__sql_embed_available()) {
            return loams__sql_error_at(st, tok.start,
                                       "embed() is not available: this loams-host has no "
                                       "embedding support (plugin ABI 1.4 or later)");
        }
        do {
            k = loams__sql_token_next(text, len, p, &t);
            p = t.start + t.len;
        } while (k == LOAMS__TK_SPACE || k == LOAMS__TK_COMMENT);
        char name[512];
        if (k != LOAMS__TK_STRING ||
            loams__sql_token_string(text, &t, name, sizeof name) >= sizeof name) {
            return loams__sql_error_at(st, t.start,
                                       "embed()'s first argument must be a string literal naming "
                                       "an embedding provider ('endpoint', 'ns.endpoint', or "
                                       "either with ':model')");
        }
        if (st->embed == NULL) {
            st->embed = h->calloc(st->ctx, 1, sizeof *st->embed);
            if (st->embed == NULL) {
                return -ENOMEM;
            }
        }
        size_t idx;
        if (add_ref(st, name, &idx) != 0) {
            return -ENOMEM;
        }
        char msg[1024];
        msg[0] = '\0';
        int rc = h->embed_check(st->ctx, name, msg, sizeof msg);
        if (rc != 0) {
            loams__sql_error_at(st, t.start, "embed('%s'): %s", name, msg);
            return rc == LOAMS_ENOTFOUND || rc == LOAMS_EINPUT || rc == LOAMS_EUNSUPPORTED
                       ? LOAMS_EINPUT
                       : rc;
        }
        pos = p;
    }
}

static void entries_clear(loams__sql_state *st)
{
    loams__sql_embed *e = st->embed;
    const loams_host_api *h = loams__sql_host;
    for (size_t i = 0; i < e->n; i++) {
        h->free(st->ctx, e->entries[i].text);
        h->free(st->ctx, e->entries[i].vec);
        h->free(st->ctx, e->entries[i].msg);
    }
    e->n = 0;
    for (size_t i = 0; i < e->nslots; i++) {
        e->slots[i] = SIZE_MAX;
    }
}

void loams__sql_embed_free(loams__sql_state *st)
{
    loams__sql_embed *e = st->embed;
    const loams_host_api *h = loams__sql_host;
    if (e == NULL) {
        return;
    }
    entries_clear(st);
    for (size_t i = 0; i < e->nrefs; i++) {
        h->free(st->ctx, e->refs[i]);
    }
    h->free(st->ctx, e->refs);
    h->free(st->ctx, e->entries);
    h->free(st->ctx, e->slots);
    h->free(st->ctx, e);
    st->embed = NULL;
}

void loams__sql_embed_end_run(loams__sql_state *st)
{
    if (st->embed != NULL) {
        entries_clear(st);
    }
}

static int grow_slots(loams__sql_state *st)
{
    loams__sql_embed *e = st->embed;
    const loams_host_api *h = loams__sql_host;
    size_t n = e->nslots ? e->nslots * 2 : 256;
    size_t *s = h->malloc(st->ctx, n * sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        s[i] = SIZE_MAX;
    }
    for (size_t i = 0; i < e->n; i++) {
        size_t k =
            (size_t)hash_text(e->entries[i].ref, e->entries[i].text, e->entries[i].len) & (n - 1);
        while (s[k] != SIZE_MAX) {
            k = (k + 1) & (n - 1);
        }
        s[k] = i;
    }
    h->free(st->ctx, e->slots);
    e->slots = s;
    e->nslots = n;
    return 0;
}

/* The entry of (ref, text), added (pending) when missing: *out, or NULL
 * with -ENOMEM. */
static int find_or_add(loams__sql_state *st, uint32_t ref, const char *text, size_t len,
                       entry **out)
{
    loams__sql_embed *e = st->embed;
    const loams_host_api *h = loams__sql_host;
    if (2 * (e->n + 1) > e->nslots && grow_slots(st) != 0) {
        return -ENOMEM;
    }
    size_t k = (size_t)hash_text(ref, text, len) & (e->nslots - 1);
    for (; e->slots[k] != SIZE_MAX; k = (k + 1) & (e->nslots - 1)) {
        entry *x = &e->entries[e->slots[k]];
        if (x->ref == ref && x->len == len && memcmp(x->text, text, len) == 0) {
            *out = x;
            return 0;
        }
    }
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 64;
        entry *g = h->realloc(st->ctx, e->entries, cap * sizeof *g);
        if (g == NULL) {
            return -ENOMEM;
        }
        e->entries = g;
        e->cap = cap;
    }
    entry *x = &e->entries[e->n];
    memset(x, 0, sizeof *x);
    x->text = h->malloc(st->ctx, len ? len : 1);
    if (x->text == NULL) {
        return -ENOMEM;
    }
    memcpy(x->text, text, len);
    x->len = len;
    x->ref = ref;
    x->pending = 1;
    e->slots[k] = e->n++;
    *out = x;
    return 0;
}

/* Asks the host for the pending texts of ref `r`.  0, or the status of a
 * whole-call failure (message on the context). */
static int resolve_ref(loams__sql_state *st, uint32_t r)
{
    loams__sql_embed *e = st->embed;
    const loams_host_api *h = loams__sql_host;
    size_t n = 0;
    for (size_t i = 0; i < e->n; i++) {
        n += e->entries[i].pending && e->entries[i].ref == r;
    }
    if (n == 0) {
        return 0;
    }
    loams_value *texts = h->calloc(st->ctx, n, sizeof *texts);
    loams_value *vecs = h->calloc(st->ctx, n, sizeof *vecs);
    int *status = h->calloc(st->ctx, n, sizeof *status);
    const char **errors = h->calloc(st->ctx, n, sizeof *errors);
    size_t *which = h->calloc(st->ctx, n, sizeof *which);
    int rc = 0;
    if (texts == NULL || vecs == NULL || status == NULL || errors == NULL || which == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    size_t j = 0;
    for (size_t i = 0; i < e->n; i++) {
        if (e->entries[i].pending && e->entries[i].ref == r) {
            texts[j].type = LOAMS_T_STRING;
            texts[j].u.s.ptr = e->entries[i].text;
            texts[j].u.s.len = e->entries[i].len;
            which[j++] = i;
        }
    }
    rc = h->embed_texts(st->ctx, e->refs[r], texts, n, vecs, status, errors);
    if (rc != 0) {
        goto out; /* the host set the message */
    }
    for (j = 0; j < n; j++) {
        entry *x = &e->entries[which[j]];
        x->pending = 0;
        x->status = status[j];
        if (status[j] != 0) {
            const char *m = errors[j] != NULL ? errors[j] : "embedding failed";
            size_t ml = strlen(m);
            x->msg = h->malloc(st->ctx, ml + 1);
            if (x->msg == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            memcpy(x->msg, m, ml + 1);
            continue;
        }
        if (vecs[j].type != LOAMS_T_VECTOR || vecs[j].u.vec.n == 0) {
            x->status = -EIO;
            continue;
        }
        x->dims = vecs[j].u.vec.n;
        x->vec = h->malloc(st->ctx, x->dims * sizeof(float));
        if (x->vec == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        memcpy(x->vec, vecs[j].u.vec.ptr, x->dims * sizeof(float));
    }
out:
    if (rc == -ENOMEM) {
        h->set_error(st->ctx, "out of memory embedding %zu texts", n);
    }
    h->free(st->ctx, texts);
    h->free(st->ctx, vecs);
    h->free(st->ctx, status);
    h->free(st->ctx, (void *)errors);
    h->free(st->ctx, which);
    return rc;
}

int loams__sql_embed_prepare(loams__sql_state *st, loams_batch *out)
{
    size_t emitted = 0;
    entries_clear(st);
    st->collecting = 1;
    int rc = loams__sql_scan(st, out, 0, st->nrows, &emitted);
    st->collecting = 0;
    st->fatal = 0;
    for (size_t i = 0; i < LOAMS__SQL_JSON_SLOTS; i++) {
        st->slots[i].generation = 0;
    }
    for (uint32_t r = 0; rc == 0 && r < st->embed->nrefs; r++) {
        rc = resolve_ref(st, r);
    }
    return rc;
}

static void fn_embed(sqlite3_context *c, int argc, sqlite3_value **argv)
{
    loams__sql_state *st = sqlite3_user_data(c);
    loams__sql_embed *e = st->embed;
    (void)argc;
    const char *ref = (const char *)sqlite3_value_text(argv[0]);
    uint32_t r = 0;
    while (e != NULL && ref != NULL && r < e->nrefs && strcmp(e->refs[r], ref) != 0) {
        r++;
    }
    if (e == NULL || ref == NULL || r == e->nrefs) {
        loams__sql_row_error(st, c, LOAMS_EINPUT,
                             "embed(): the provider must be the string literal written in the "
                             "program");
        return;
    }
    int type = sqlite3_value_type(argv[1]);
    if (type == SQLITE_NULL) {
        sqlite3_result_null(c);
        return;
    }
    if (type != SQLITE_TEXT) {
        loams__sql_row_error(st, c, LOAMS_EINPUT,
                             "embed('%s'): the text is %s, not TEXT (CAST it AS TEXT)", ref,
                             type == SQLITE_BLOB      ? "a BLOB"
                             : type == SQLITE_INTEGER ? "an INTEGER"
                                                      : "a REAL");
        return;
    }
    const char *text = (const char *)sqlite3_value_blob(argv[1]);
    size_t len = (size_t)sqlite3_value_bytes(argv[1]);
    if (text == NULL) {
        text = "";
    }
    entry *x;
    if (find_or_add(st, r, text, len, &x) != 0) {
        st->fatal = -ENOMEM;
        sqlite3_result_error_nomem(c);
        return;
    }
    if (st->collecting) {
        sqlite3_result_null(c);
        return;
    }
    if (x->pending) {
        int rc = resolve_ref(st, r); /* a text the first pass did not see */
        if (rc != 0) {
            st->fatal = rc;
            sqlite3_result_error(c, "embedding failed", -1);
            return;
        }
        /* resolve_ref may have moved the entries: find it again */
        if (find_or_add(st, r, text, len, &x) != 0) {
            st->fatal = -ENOMEM;
            sqlite3_result_error_nomem(c);
            return;
        }
    }
    if (x->status != 0) {
        loams__sql_row_error(st, c, x->status, "embed('%s'): %s", ref,
                             x->msg != NULL ? x->msg : "no vector");
        return;
    }
    sqlite3_result_blob(c, x->vec, (int)(x->dims * sizeof(float)), SQLITE_STATIC);
    sqlite3_result_subtype(c, LOAMS__SQL_SUBTYPE_VECTOR);
}

int loams__sql_embed_register(loams__sql_state *st)
{
    if (!loams__sql_embed_available()) {
        return 0;
    }
    int flags = SQLITE_UTF8;
#ifdef SQLITE_RESULT_SUBTYPE
    flags |= SQLITE_RESULT_SUBTYPE;
#endif
    int rc = sqlite3_create_function_v2(st->db, "embed", 2, flags, st, fn_embed, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        loams__sql_host->set_error(st->ctx, "cannot define embed(): %s", sqlite3_errmsg(st->db));
        return rc == SQLITE_NOMEM ? -ENOMEM : LOAMS_EINPUT;
    }
    return 0;
}
