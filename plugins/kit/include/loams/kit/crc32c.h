/*
 * loams/kit/crc32c.h - CRC-32C (Castagnoli, the checksum of iSCSI and
 * ext4) over byte ranges of the plugins' files (splits, deletion sets,
 * graph segments).
 *
 * Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at
 * run time) and a slicing-by-8 table otherwise; both give the same value.
 * Thread-safe (the tables are built under pthread_once).
 */
#ifndef LOAMS_KIT_CRC32C_H
#define LOAMS_KIT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: pass crc = 0 to start, then the previous return value to
 * extend over more bytes.  loams_kit_crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t loams_kit_crc32c(uint32_t crc, const void *data, size_t len);

/* The same value, always by the table (for tests that compare both paths). */
uint32_t loams_kit_crc32c_portable(uint32_t crc, const void *data, size_t len);

#endif
