/*
 * test_sql_program.c - the shape checks and the implicit FROM of the SQL
 * transform (plugins/transform-sql/program.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "program.h"

#define INSERT ", \"loams_batch\".\"_loams_row\" FROM temp.\"loams_batch\" "

static char *built(const char *program)
{
    loams__program p;
    loams__program_error err = {0, NULL};
    int rc = loams__program_build(program, &p, &err);
    ck_assert_msg(rc == 0, "'%s' refused at %zu: %s", program, err.pos, err.msg);
    ck_assert_uint_eq(p.sql_len, strlen(p.sql));
    ck_assert_uint_eq(p.program_len, strlen(program));
    return p.sql;
}

/* The position and message of a refusal. */
static size_t refused(const char *program, const char *word)
{
    loams__program p;
    loams__program_error err = {99999, NULL};
    int rc = loams__program_build(program, &p, &err);
    ck_assert_msg(rc == LOAMS_EINPUT, "'%s' was accepted", program);
    ck_assert_msg(strstr(err.msg, word), "'%s': message '%s' lacks '%s'", program, err.msg, word);
    return err.pos;
}

START_TEST(the_from_goes_after_the_select_list)
{
    char *sql = built("SELECT key, value");
    ck_assert_str_eq(sql, "SELECT key, value" INSERT);
    free(sql);
    sql = built("select key as k where k is not null");
    ck_assert_str_eq(sql, "select key as k" INSERT " where k is not null");
    free(sql);
    sql = built("SELECT ALL key;  -- done\n");
    ck_assert_str_eq(sql, "SELECT ALL key" INSERT ";  -- done\n");
    free(sql);
    /* never inside a trailing comment */
    sql = built("SELECT key -- the key\n");
    ck_assert_str_eq(sql, "SELECT key" INSERT " -- the key\n");
    free(sql);
    /* unbalanced the other way: left to SQLite (found by fuzz-sql-program) */
    free(built("SELECT (a)), (b"));
    sql = built("SELECT (SELECT 1 WHERE 1) AS one WHERE (1 > 0)");
    ck_assert_str_eq(sql, "SELECT (SELECT 1 WHERE 1) AS one" INSERT " WHERE (1 > 0)");
    free(sql);
}
END_TEST

START_TEST(keywords_in_strings_comments_and_names_do_not_count)
{
    char *sql = built("SELECT 'from where' AS \"from\", [order] /* FROM x */ -- LIMIT 1\n"
                      "WHERE value <> 'GROUP BY'");
    ck_assert_ptr_nonnull(strstr(sql, "[order]" INSERT " /* FROM x */ -- LIMIT 1\nWHERE value"));
    free(sql);
    sql = built("SELECT 'it''s' AS s, \"a\"\"b\" AS \"c d\"");
    ck_assert_str_eq(sql, "SELECT 'it''s' AS s, \"a\"\"b\" AS \"c d\"" INSERT);
    free(sql);
}
END_TEST

START_TEST(other_shapes_are_refused_at_their_token)
{
    ck_assert_uint_eq(refused("", "empty"), 0);
    ck_assert_uint_eq(refused("  -- nothing\n", "empty"), 13);
    ck_assert_uint_eq(refused("UPDATE t SET a = 1", "one SELECT"), 0);
    ck_assert_uint_eq(refused("WITH x AS (SELECT 1) SELECT * FROM x", "one SELECT"), 0);
    ck_assert_uint_eq(refused("SELECT DISTINCT key", "DISTINCT"), 7);
    ck_assert_uint_eq(refused("SELECT key FROM t", "implicit FROM"), 11);
    ck_assert_uint_eq(refused("SELECT (SELECT 1 FROM t) AS x", "implicit FROM"), 17);
    ck_assert_uint_eq(refused("SELECT key GROUP key", "followed by BY"), 11);
    ck_assert_uint_eq(refused("SELECT key GROUP BY key WHERE 1", "WHERE goes before GROUP BY"), 24);
    ck_assert_uint_eq(refused("SELECT key GROUP BY key GROUP BY key", "twice"), 24);
    ck_assert_uint_eq(refused("SELECT key GROUP BY", "at least one group key"), 19);
    ck_assert_uint_eq(refused("SELECT key ORDER BY key", "ORDER BY"), 11);
    ck_assert_uint_eq(refused("SELECT key LIMIT 1", "LIMIT"), 11);
    ck_assert_uint_eq(refused("SELECT key HAVING 1", "HAVING"), 11);
    ck_assert_uint_eq(refused("SELECT 1 UNION SELECT 2", "UNION"), 9);
    ck_assert_uint_eq(refused("SELECT key JOIN x", "JOIN"), 11);
    ck_assert_uint_eq(refused("SELECT key WHERE value = ?", "parameters"), 25);
    ck_assert_uint_eq(refused("SELECT :v", "parameters"), 7);
    ck_assert_uint_eq(refused("SELECT 1; SELECT 2", "one statement"), 10);
    ck_assert_uint_eq(refused("SELECT", "output column"), 6);
    ck_assert_uint_eq(refused("SELECT WHERE 1", "output column"), 7);
    ck_assert_uint_eq(refused("SELECT f(a, g((b)", "never closed"), 13);
}
END_TEST

/* GROUP BY: the select list ends before WHERE / GROUP, and the
 * positions of both are kept for the group plan (group_plan.c). */
START_TEST(a_group_by_is_located)
{
    loams__program p;
    loams__program_error err;
    const char *prog = "SELECT key AS k, count(*) AS n WHERE 1 GROUP BY key";
    ck_assert_int_eq(loams__program_build(prog, &p, &err), 0);
    ck_assert_int_eq(p.grouped, 1);
    ck_assert_uint_eq(p.insert_at, 30);
    ck_assert_uint_eq(p.where_at, 31);
    ck_assert_uint_eq(p.group_at, 39);
    ck_assert_uint_eq(p.group_by_end, 47);
    loams__program_free(&p);
    ck_assert_int_eq(loams__program_build("SELECT key", &p, &err), 0);
    ck_assert_int_eq(p.grouped, 0);
    loams__program_free(&p);
}
END_TEST

START_TEST(statement_offsets_map_back_to_the_program)
{
    loams__program p;
    loams__program_error err;
    int inside;
    const char *prog = "SELECT a WHERE b";
    ck_assert_int_eq(loams__program_build(prog, &p, &err), 0);
    ck_assert_uint_eq(p.insert_at, 8);
    ck_assert_uint_eq(loams__program_offset(&p, 7, &inside), 7);
    ck_assert_int_eq(inside, 0);
    ck_assert_uint_eq(loams__program_offset(&p, 10, &inside), 8);
    ck_assert_int_eq(inside, 1);
    /* "b" in the statement */
    size_t b_at = (size_t)(strrchr(p.sql, 'b') - p.sql);
    ck_assert_uint_eq(loams__program_offset(&p, b_at, &inside), 15);
    ck_assert_int_eq(inside, 0);
    loams__program_free(&p);
}
END_TEST

START_TEST(lines_and_columns_count_characters)
{
    unsigned line, col;
    const char *text = "SELECT x,\n  \xc3\xa9t\xc3\xa9 AS y,\n\tz";
    loams__program_line_column(text, 0, &line, &col);
    ck_assert(line == 1 && col == 1);
    loams__program_line_column(text, 7, &line, &col);
    ck_assert(line == 1 && col == 8);
    /* 'A' of AS on line 2: two spaces, "été" (3 characters, 5 bytes), space */
    loams__program_line_column(text, (size_t)(strstr(text, "AS") - text), &line, &col);
    ck_assert_uint_eq(line, 2);
    ck_assert_uint_eq(col, 7);
    loams__program_line_column(text, strlen(text) - 1, &line, &col);
    ck_assert(line == 3 && col == 2);
}
END_TEST

START_TEST(select_list_items_are_located)
{
    loams__program p;
    loams__program_error err;
    const char *prog = "SELECT ALL a, f(b, c) AS d,\n  e WHERE x";
    ck_assert_int_eq(loams__program_build(prog, &p, &err), 0);
    ck_assert_uint_eq(loams__program_item_offset(prog, &p, 0), 11);
    ck_assert_uint_eq(loams__program_item_offset(prog, &p, 1), 14);
    ck_assert_uint_eq(loams__program_item_offset(prog, &p, 2), 30);
    ck_assert_uint_eq(loams__program_item_offset(prog, &p, 3), p.insert_at);
    loams__program_free(&p);
}
END_TEST

START_TEST(the_tokenizer_follows_sqlite)
{
    static const struct {
        const char *text;
        int kind;
        size_t len;
    } cases[] = {
        {"abc_1$ x", LOAMS__TK_IDENT, 6},
        {"\"a\"\"b\" x", LOAMS__TK_QIDENT, 6},
        {"[a b] x", LOAMS__TK_QIDENT, 5},
        {"`a` x", LOAMS__TK_QIDENT, 3},
        {"'it''s' x", LOAMS__TK_STRING, 7},
        {"'open", LOAMS__TK_ILLEGAL, 5},
        {"12.5e-3 x", LOAMS__TK_NUMBER, 7},
        {"0x1F x", LOAMS__TK_NUMBER, 4},
        {".5 x", LOAMS__TK_NUMBER, 2},
        {"12abc", LOAMS__TK_ILLEGAL, 5},
        {"x'0aFF' y", LOAMS__TK_BLOB, 7},
        {"x'0a", LOAMS__TK_ILLEGAL, 4},
        {"?12 x", LOAMS__TK_VARIABLE, 3},
        {":name x", LOAMS__TK_VARIABLE, 5},
        {"-- c\nx", LOAMS__TK_COMMENT, 4},
        {"/* c */x", LOAMS__TK_COMMENT, 7},
        {"/* open", LOAMS__TK_COMMENT, 7},
        {"->> x", LOAMS__TK_OPERATOR, 3},
        {"|| x", LOAMS__TK_OPERATOR, 2},
        {"<> x", LOAMS__TK_OPERATOR, 2},
        {"!x", LOAMS__TK_ILLEGAL, 1},
        {"[open", LOAMS__TK_ILLEGAL, 5},
        {"\xc3\xa9t\xc3\xa9 x", LOAMS__TK_IDENT, 5},
        {"( x", LOAMS__TK_LPAREN, 1},
        {". x", LOAMS__TK_DOT, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loams__sql_token tok;
        const char *t = cases[i].text;
        int k = loams__sql_token_next(t, strlen(t), 0, &tok);
        ck_assert_msg(k == cases[i].kind, "'%s': kind %d, want %d", t, k, cases[i].kind);
        if (cases[i].len) {
            ck_assert_msg(tok.len == cases[i].len, "'%s': len %zu, want %zu", t, tok.len,
                          cases[i].len);
        }
    }
    char name[16];
    loams__sql_token tok;
    loams__sql_token_next("\"a\"\"b\"", 6, 0, &tok);
    ck_assert_uint_eq(loams__sql_token_name("\"a\"\"b\"", &tok, name, sizeof(name)), 3);
    ck_assert_str_eq(name, "a\"b");
    loams__sql_token_next("'x''y'", 6, 0, &tok);
    ck_assert_uint_eq(loams__sql_token_string("'x''y'", &tok, name, sizeof(name)), 3);
    ck_assert_str_eq(name, "x'y");
    loams__sql_token_next("select", 6, 0, &tok);
    ck_assert(loams__sql_token_is("select", &tok, "SELECT"));
}
END_TEST

static Suite *program_suite(void)
{
    Suite *s = suite_create("sql_program");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_from_goes_after_the_select_list);
    tcase_add_test(tc, keywords_in_strings_comments_and_names_do_not_count);
    tcase_add_test(tc, other_shapes_are_refused_at_their_token);
    tcase_add_test(tc, statement_offsets_map_back_to_the_program);
    tcase_add_test(tc, a_group_by_is_located);
    tcase_add_test(tc, lines_and_columns_count_characters);
    tcase_add_test(tc, select_list_items_are_located);
    tcase_add_test(tc, the_tokenizer_follows_sqlite);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(program_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
