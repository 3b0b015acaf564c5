/*
 * loams/kit/value.h - what plugins say about the host's cell values
 * (loams_value, <loams/host.h>) in their messages.
 */
#ifndef LOAMS_KIT_VALUE_H
#define LOAMS_KIT_VALUE_H

#include <stdint.h>

/* The name of a LOAMS_T_* type as the DDL writes it ("INT64", "STRING",
 * ...), or "UNKNOWN".  Static, never NULL. */
const char *loams_kit_type_name(uint32_t type);

#endif
