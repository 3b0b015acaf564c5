/*
 * loams/kit/base64.h - base64 (RFC 4648, the standard alphabet) decoding.
 * Owns nothing: the caller gives the output room.
 * Threads: no shared state.
 */
#ifndef LOAMS_KIT_BASE64_H
#define LOAMS_KIT_BASE64_H

#include <stddef.h>

/* Decodes text[0..len) into out (room: len / 4 * 3 + 3 bytes is always
 * enough; out may be text itself: decoding never writes ahead of reading).
 * Padding '=' is optional; whitespace is not allowed.  Returns 0 with
 * *out_len, or -1 with *bad_at the position of the first byte that is not
 * base64 (or len when the text ends in the middle of a byte). */
int loams_kit_base64_decode(const char *text, size_t len, unsigned char *out, size_t *out_len,
                            size_t *bad_at);

#endif
