/*
 * test_split_terms.c - the split writer's term dictionary
 * (plugins/target-collection/split_writer.c): a term is one entry whatever
 * its length and however the tokenizer handed it over (in place from the
 * text, 16 bytes of which may be read at once, or lowercased into the
 * tokenizer's buffer), and the split answers for it like the rules say.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collection_test_util.h"
#include "split_reader.h"
#include "split_writer.h"

/* Words of 1 to 40 bytes, around the 8- and 16-byte edges. */
static void word_of(size_t len, char *out)
{
    for (size_t i = 0; i < len; i++) {
        out[i] = (char)('a' + (i * 5 + len) % 26);
    }
    out[len] = '\0';
}

START_TEST(a_term_is_one_entry_whatever_its_length_and_path)
{
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    loams_kit_buf out = LOAMS_KIT_BUF_INIT;
    loams__split_writer *w;
    loams_kit_err e;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &out, &w, &e), 0);
    uint32_t fid, doc;
    ck_assert_int_eq(loams__split_writer_field(w, "body", LOAMS__FIELD_TEXT, 0, &fid, &e), 0);
    enum { MAXLEN = 40 };
    for (size_t len = 1; len <= MAXLEN; len++) {
        char word[MAXLEN + 1], upper[MAXLEN + 1], text[512];
        word_of(len, word);
        for (size_t i = 0; i <= len; i++) {
            upper[i] = i == 0 ? (char)(word[0] - 'a' + 'A') : word[i];
        }
        /* the word in place with more text after it, uppercased (through
         * the tokenizer's buffer), and last in the text (nothing after) */
        int n = snprintf(text, sizeof text, "%s, then %s and %s", word, upper, word);
        char pk[16];
        snprintf(pk, sizeof pk, "d%zu", len);
        ck_assert_int_eq(loams__split_writer_begin_doc(w, pk, strlen(pk), &doc, &e), 0);
        ck_assert_int_eq(loams__split_writer_add_text(w, fid, text, (size_t)n, &e), 0);
        /* and a second text of the same document holding only the word */
        ck_assert_int_eq(loams__split_writer_add_text(w, fid, word, len, &e), 0);
        ck_assert_int_eq(loams__split_writer_end_doc(w, "{}", 2, &e), 0);
    }
    uint64_t bytes;
    ck_assert_int_eq(loams__split_writer_finish(w, &bytes, &e), 0);
    loams__split_field_info fi;
    loams__split_writer_field_info(w, fid, &fi);
    /* the 40 words, "then" and "and" (and the words "then"/"and" may equal
     * none of them: they are not of the word_of form) */
    ck_assert_uint_eq(fi.terms, MAXLEN + 2);
    loams__split_writer_free(w);

    loams__split_reader *r;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &out, out.len, "t", &r, &e), 0);
    loams__postings p = {0};
    for (size_t len = 1; len <= MAXLEN; len++) {
        char word[MAXLEN + 1];
        word_of(len, word);
        ck_assert_int_eq(loams__split_reader_postings(r, fid, word, len, &p, &e), 0);
        ck_assert_msg(p.n == 1, "word of %zu bytes: in %zu documents", len, p.n);
        ck_assert_uint_eq(p.docs[0], len - 1);
        ck_assert_msg(p.tfs[0] == 4, "word of %zu bytes: tf %u", len, p.tfs[0]);
    }
    ck_assert_int_eq(loams__split_reader_postings(r, fid, "then", 4, &p, &e), 0);
    ck_assert_uint_eq(p.n, MAXLEN);
    loams__postings_free(&p);
    loams__split_reader_close(r);
    loams_kit_buf_free(&out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("split_terms");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_term_is_one_entry_whatever_its_length_and_path);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
