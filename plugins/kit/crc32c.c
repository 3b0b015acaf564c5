/*
 * crc32c.c - owns the CRC-32C computation (software and SSE4.2 paths;
 * loams/kit/crc32c.h).
 */
#include "loams/kit/crc32c.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int have_sse42;

static void init_tables(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        }
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = table[0][n];
        for (int k = 1; k < 8; k++) {
            c = table[0][c & 0xff] ^ (c >> 8);
            table[k][n] = c;
        }
    }
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    have_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t len)
{
    while (len > 0 && ((uintptr_t)p & 7) != 0) {
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        len--;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
              table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
              table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len-- > 0) {
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    }
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p,
                                                         size_t len)
{
    uint64_t c = crc;
    while (len > 0 && ((uintptr_t)p & 7) != 0) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        len--;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        len -= 8;
    }
    while (len-- > 0) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    }
    return (uint32_t)c;
}
#endif

uint32_t loams_kit_crc32c(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&table_once, init_tables);
    crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
    if (have_sse42) {
        return ~crc_hw(crc, data, len);
    }
#endif
    return ~crc_sw(crc, data, len);
}

uint32_t loams_kit_crc32c_portable(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&table_once, init_tables);
    return ~crc_sw(~crc, data, len);
}
