/*
 * status.c - owns the text of every status code.
 */
#include "base/status.h"

#include <string.h>

const char *loams_strerror(int status)
{
    switch (status) {
    case LOAMS_OK: return "success";
    case LOAMS_EINPUT: return "malformed input";
    case LOAMS_ECONFLICT: return "metastore compare failed (concurrent change)";
    case LOAMS_EFENCED: return "lease epoch is stale (fenced)";
    case LOAMS_ECANCELLED: return "cancelled";
    case LOAMS_EUNSUPPORTED: return "not supported";
    case LOAMS_ECORRUPT: return "stored data is corrupt";
    case LOAMS_ESCHEMA: return "incompatible schema change";
    case LOAMS_ERETRY: return "transient failure, retry later";
    case LOAMS_EFULL: return "store is full";
    case LOAMS_EABI: return "plugin ABI mismatch";
    case LOAMS_ENOTFOUND: return "not found";
    case LOAMS_EEXISTS: return "already exists";
    case LOAMS_ELIMIT: return "resource budget exceeded";
    default: break;
    }
    if (status < 0 && status > LOAMS_E_BASE) {
        return strerror(-status);
    }
    return "unknown status";
}
