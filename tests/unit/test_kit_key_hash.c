/*
 * test_kit_key_hash.c - the key hash stored in the plugins' file formats
 * (plugins/kit/key_hash.c): its values are part of the split and segment
 * formats, so they are pinned here (taken from the hash as the first
 * splits were written); any change to them makes old files unreadable.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "loams/kit/key_hash.h"
#include "run_suite.h"

START_TEST(stored_hash_values_never_change)
{
    static const struct {
        const char *key;
        uint64_t hash;
    } pinned[] = {
        {"", 0x35db17023225e7f9ull},
        {"a", 0xbd53486f8ad9c4a5ull},
        {"_pk", 0x5cac4665bdf95f7cull},
        {"12345678", 0xa296164bbb8049d8ull},  /* one whole block */
        {"123456789", 0x87fb3279e8312ee9ull}, /* a block and a tail */
        {"customer-000042", 0xecbba29e141bcde2ull},
        {"LOAMS", 0xc5857e8b5aed28b1ull},
    };
    for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++) {
        ck_assert_msg(loams_kit_key_hash(pinned[i].key, strlen(pinned[i].key)) == pinned[i].hash,
                      "hash of \"%s\" changed", pinned[i].key);
    }
}
END_TEST

START_TEST(every_tail_length_and_byte_counts)
{
    /* keys that differ in one byte at any position of any tail length hash apart */
    unsigned char key[24];
    for (size_t len = 1; len <= sizeof key; len++) {
        memset(key, 'k', sizeof key);
        uint64_t h = loams_kit_key_hash(key, len);
        for (size_t pos = 0; pos < len; pos++) {
            key[pos] = 'j';
            ck_assert_uint_ne(loams_kit_key_hash(key, len), h);
            key[pos] = 'k';
        }
        ck_assert_uint_ne(loams_kit_key_hash(key, len - 1), h);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kit_key_hash");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, stored_hash_values_never_change);
    tcase_add_test(tc, every_tail_length_and_byte_counts);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
