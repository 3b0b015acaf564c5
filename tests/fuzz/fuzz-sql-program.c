/*
 * fuzz-sql-program.c - libFuzzer target for the SQL transform's program
 * scanner (plugins/transform-sql/program.c): the tokenizer always moves
 * forward and covers the text; a built statement is the program with the
 * FROM inserted at insert_at, and every statement offset maps back inside
 * the program.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "program.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    loams__program p;
    loams__program_error err;
    loams__sql_token tok;
    size_t len, pos = 0;
    unsigned line, col;
    int rc;

    if (!text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    len = strlen(text);
    for (;;) {
        int k = loams__sql_token_next(text, len, pos, &tok);
        if (tok.start != pos) {
            abort();
        }
        if (k == LOAMS__TK_END) {
            break;
        }
        if (tok.len == 0 || tok.start + tok.len > len) {
            abort();
        }
        if (k == LOAMS__TK_QIDENT || k == LOAMS__TK_IDENT) {
            char name[64];
            if (loams__sql_token_name(text, &tok, name, sizeof(name)) > tok.len) {
                abort();
            }
        }
        pos = tok.start + tok.len;
    }
    rc = loams__program_build(text, &p, &err);
    if (rc == LOAMS_EINPUT) {
        if (err.pos > len || !err.msg) {
            abort();
        }
        loams__program_line_column(text, err.pos, &line, &col);
    } else if (rc == 0) {
        if (p.sql_len != len + p.insert_len || p.insert_at > len ||
            memcmp(p.sql, text, p.insert_at) != 0 ||
            memcmp(p.sql + p.insert_at + p.insert_len, text + p.insert_at, len - p.insert_at) !=
                0) {
            abort();
        }
        for (size_t o = 0; o <= p.sql_len; o++) {
            if (loams__program_offset(&p, o, NULL) > len) {
                abort();
            }
        }
        for (size_t i = 0; i < 4; i++) {
            if (loams__program_item_offset(text, &p, i) > p.insert_at) {
                abort();
            }
        }
        loams__program_free(&p);
    } else if (rc != -ENOMEM) {
        abort();
    }
    free(text);
    return 0;
}
