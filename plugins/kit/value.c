/*
 * value.c - owns the names of the host's value types in plugin messages
 * (loams/kit/value.h).
 */
#include "loams/kit/value.h"

#include <loams/host.h>

const char *loams_kit_type_name(uint32_t type)
{
    switch (type) {
    case LOAMS_T_NULL: return "NULL";
    case LOAMS_T_BOOL: return "BOOL";
    case LOAMS_T_INT64: return "INT64";
    case LOAMS_T_FLOAT64: return "FLOAT64";
    case LOAMS_T_STRING: return "STRING";
    case LOAMS_T_BYTES: return "BYTES";
    case LOAMS_T_TIMESTAMP: return "TIMESTAMP";
    case LOAMS_T_JSON: return "JSON";
    case LOAMS_T_VECTOR: return "VECTOR";
    case LOAMS_T_LIST: return "LIST";
    default: return "UNKNOWN";
    }
}
