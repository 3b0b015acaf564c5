/*
 * base64.c - base64 decoding (loams/kit/base64.h).  Owns nothing.
 */
#include "loams/kit/base64.h"

static int sextet(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

int loams_kit_base64_decode(const char *text, size_t len, unsigned char *out, size_t *out_len,
                            size_t *bad_at)
{
    size_t end = len;
    /* at most two '=' at the end, and only where they pad a quantum */
    if (end > 0 && text[end - 1] == '=') {
        end--;
        if (end > 0 && text[end - 1] == '=') {
            end--;
        }
        if (len % 4 != 0) {
            *bad_at = end;
            return -1;
        }
    }
    unsigned acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < end; i++) {
        int v = sextet((unsigned char)text[i]);
        if (v < 0) {
            *bad_at = i;
            return -1;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (bits >= 6) { /* one sextet left over: not a whole byte */
        *bad_at = len;
        return -1;
    }
    *out_len = o;
    return 0;
}
