/*
 * loams/kit/value.h - what plugins say about the host's cell values
 * (loams_value, <loams/host.h>) in their messages, and one value as bytes
 * (a group key, a staged value).
 */
#ifndef LOAMS_KIT_VALUE_H
#define LOAMS_KIT_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

#include "loams/kit/buf.h"

/* The name of a LOAMS_T_* type as the DDL writes it ("INT64", "STRING",
 * ...), or "UNKNOWN".  Static, never NULL. */
const char *loams_kit_type_name(uint32_t type);

/* Appends v to b: its type byte, then a little-endian u64 for BOOL,
 * INT64, TIMESTAMP and FLOAT64 (its bits), or a u64 length and the bytes
 * for STRING, JSON and BYTES; nothing more for NULL and other types.
 * Values encode equal exactly when they are equal, and a run of encodings
 * reads back unambiguously.  -ENOMEM. */
int loams_kit_value_encode(loams_kit_buf *b, const loams_value *v);

/* Reads one encoding from p[0..len): *v (strings point into p; a type
 * encoded without a payload reads as NULL) and *used, the bytes it took.
 * -EINVAL when p holds no whole encoding. */
int loams_kit_value_decode(const uint8_t *p, size_t len, loams_value *v, size_t *used);

#endif
