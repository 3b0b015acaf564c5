/*
 * test_s3_xml.c - the store-s3 plugin's XML answer reader
 * (plugins/store-s3/s3_xml.c): listings with continuation, entities in
 * keys, errors, upload ids and multipart upload listings, and malformed
 * answers refused with a message.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run_suite.h"
#include "s3_xml.h"

static loams__s3_strings keys, ids;

static void teardown(void)
{
    loams__s3_strings_free(NULL, &keys);
    loams__s3_strings_free(NULL, &ids);
}

static int list(const char *body, int *truncated, char **next, loams_kit_err *e)
{
    return loams__s3_xml_list(NULL, body, strlen(body), &keys, truncated, next, e);
}

START_TEST(test_list_page_reads_keys_in_order_and_the_token)
{
    const char *body =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"
        "<IsTruncated>true</IsTruncated>"
        "<Contents><Key>p/a&amp;b</Key><Size>3</Size><ETag>&quot;x&quot;</ETag></Contents>"
        "<Contents><Key>p/c&#x2F;d&#233;</Key><Size>0</Size></Contents>"
        "<NextContinuationToken>tok/+=</NextContinuationToken>"
        "</ListBucketResult>";
    int truncated = 0;
    char *next = NULL;
    loams_kit_err e;
    ck_assert_int_eq(list(body, &truncated, &next, &e), 0);
    ck_assert_int_eq(keys.n, 2);
    ck_assert_str_eq(keys.items[0], "p/a&b");
    ck_assert_str_eq(keys.items[1], "p/c/d\xc3\xa9");
    ck_assert_int_eq(truncated, 1);
    ck_assert_str_eq(next, "tok/+=");
    free(next);
}
END_TEST

START_TEST(test_last_page_is_not_truncated_and_may_be_empty)
{
    int truncated = 1;
    char *next = (char *)"x";
    loams_kit_err e;
    ck_assert_int_eq(list("<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount>"
                          "</ListBucketResult>",
                          &truncated, &next, &e),
                     0);
    ck_assert_int_eq(truncated, 0);
    ck_assert_ptr_null(next);
    ck_assert_int_eq(keys.n, 0);
}
END_TEST

START_TEST(test_truncated_page_without_token_is_refused)
{
    int truncated;
    char *next;
    loams_kit_err e;
    ck_assert_int_eq(list("<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a"
                          "</Key></Contents></ListBucketResult>",
                          &truncated, &next, &e),
                     -EIO);
    ck_assert_ptr_nonnull(strstr(e.msg, "NextContinuationToken"));
    ck_assert_int_eq(keys.n, 0); /* nothing half read stays */
}
END_TEST

START_TEST(test_malformed_answers_are_refused_with_a_message)
{
    static const char *bad[] = {
        "",
        "not xml",
        "<ListBucketResult><Contents><Key>a</Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>a</Key></Contents>",
        "<ListBucketResult><Contents><Key>a&bogus;</Key></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>a&#0;</Key></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>a&#x110000;</Key></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key><![CDATA[a]]></Key></Contents></ListBucketResult>",
        "<ListBucketResult></ListBucketResult><Second/>",
        "<Error><Code>NoSuchBucket</Code></Error>",
        "<ListBucketResult attr=\"unterminated></ListBucketResult>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int truncated;
        char *next;
        loams_kit_err e;
        e.msg[0] = '\0';
        ck_assert_msg(list(bad[i], &truncated, &next, &e) == -EIO, "accepted: %s", bad[i]);
        ck_assert_msg(e.msg[0] != '\0', "no message for: %s", bad[i]);
        ck_assert_int_eq(keys.n, 0);
    }
}
END_TEST

START_TEST(test_nesting_deeper_than_the_limit_is_refused)
{
    char body[1024] = "";
    for (int i = 0; i < 40; i++) {
        strcat(body, "<a>");
    }
    for (int i = 0; i < 40; i++) {
        strcat(body, "</a>");
    }
    char *out;
    loams_kit_err e;
    ck_assert_int_eq(loams__s3_xml_first(NULL, body, strlen(body), "a", &out, &e), -EIO);
    ck_assert_ptr_nonnull(strstr(e.msg, "deeper"));
}
END_TEST

START_TEST(test_error_answer_gives_code_and_message_without_control_characters)
{
    const char *body = "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>"
                       "<Message>Please reduce\nyour request rate &lt;now&gt;</Message>"
                       "<RequestId>1</RequestId></Error>";
    char code[32], msg[64];
    ck_assert_int_eq(loams__s3_xml_error(body, strlen(body), code, sizeof code, msg, sizeof msg),
                     0);
    ck_assert_str_eq(code, "SlowDown");
    ck_assert_str_eq(msg, "Please reduce?your request rate <now>");
    ck_assert_int_eq(loams__s3_xml_error("<Other/>", 8, code, sizeof code, msg, sizeof msg), -EIO);
    ck_assert_str_eq(code, "");
    ck_assert_int_eq(loams__s3_xml_error("", 0, code, sizeof code, msg, sizeof msg), -EIO);
}
END_TEST

START_TEST(test_upload_id_is_read_at_any_depth)
{
    const char *body = "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
                       "<UploadId>VXBsb2FkIElE&amp;1</UploadId></InitiateMultipartUploadResult>";
    char *id = NULL;
    loams_kit_err e;
    ck_assert_int_eq(loams__s3_xml_first(NULL, body, strlen(body), "UploadId", &id, &e), 0);
    ck_assert_str_eq(id, "VXBsb2FkIElE&1");
    free(id);
    ck_assert_int_eq(loams__s3_xml_first(NULL, "<X><Y/></X>", 11, "UploadId", &id, &e), -EIO);
}
END_TEST

START_TEST(test_multipart_upload_listing_pairs_keys_and_ids)
{
    const char *body = "<ListMultipartUploadsResult><Bucket>b</Bucket>"
                       "<IsTruncated>false</IsTruncated>"
                       "<Upload><Key>p/a</Key><UploadId>1</UploadId><Initiated>x</Initiated>"
                       "</Upload><Upload><Key>p/b</Key><UploadId>2</UploadId></Upload>"
                       "</ListMultipartUploadsResult>";
    int truncated = 1;
    loams_kit_err e;
    ck_assert_int_eq(loams__s3_xml_uploads(NULL, body, strlen(body), &keys, &ids, &truncated, &e),
                     0);
    ck_assert_int_eq(keys.n, 2);
    ck_assert_int_eq(ids.n, 2);
    ck_assert_str_eq(keys.items[1], "p/b");
    ck_assert_str_eq(ids.items[1], "2");
    ck_assert_int_eq(truncated, 0);
    const char *empty = "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
                        "</ListMultipartUploadsResult>";
    ck_assert_int_eq(loams__s3_xml_uploads(NULL, empty, strlen(empty), &keys, &ids, &truncated, &e),
                     0);
    ck_assert_int_eq(keys.n, 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("s3_xml");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_list_page_reads_keys_in_order_and_the_token);
    tcase_add_test(tc, test_last_page_is_not_truncated_and_may_be_empty);
    tcase_add_test(tc, test_truncated_page_without_token_is_refused);
    tcase_add_test(tc, test_malformed_answers_are_refused_with_a_message);
    tcase_add_test(tc, test_nesting_deeper_than_the_limit_is_refused);
    tcase_add_test(tc, test_error_answer_gives_code_and_message_without_control_characters);
    tcase_add_test(tc, test_upload_id_is_read_at_any_depth);
    tcase_add_test(tc, test_multipart_upload_listing_pairs_keys_and_ids);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
