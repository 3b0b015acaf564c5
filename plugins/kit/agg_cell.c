/*
 * agg_cell.c - owns the aggregate state cell (loams/kit/agg_cell.h).
 */
#include "loams/kit/agg_cell.h"

#include <errno.h>
#include <string.h>

#include <loams/status.h>

int loams_kit_agg_cell_encode(loams_kit_buf *out, const char *name, const void *state, size_t len)
{
    size_t nl = name != NULL ? strlen(name) : 0;
    if (nl == 0 || nl > 63) {
        return -EINVAL;
    }
    if (loams_kit_buf_reserve(out, LOAMS_KIT_AGG_CELL_MAGIC_LEN + 2 + nl + len) != 0 ||
        loams_kit_buf_append(out, LOAMS_KIT_AGG_CELL_MAGIC, LOAMS_KIT_AGG_CELL_MAGIC_LEN) != 0 ||
        loams_kit_buf_append_byte(out, LOAMS_KIT_AGG_CELL_VERSION) != 0 ||
        loams_kit_buf_append_byte(out, (uint8_t)nl) != 0 ||
        loams_kit_buf_append(out, name, nl) != 0 ||
        (len > 0 && loams_kit_buf_append(out, state, len) != 0)) {
        return -ENOMEM;
    }
    return 0;
}

int loams_kit_agg_cell_parse(const void *data, size_t len, const char **name, size_t *name_len,
                             const void **state, size_t *state_len)
{
    const unsigned char *p = data;
    if (p == NULL || len < LOAMS_KIT_AGG_CELL_MAGIC_LEN ||
        memcmp(p, LOAMS_KIT_AGG_CELL_MAGIC, LOAMS_KIT_AGG_CELL_MAGIC_LEN) != 0) {
        return 0;
    }
    if (len < LOAMS_KIT_AGG_CELL_MAGIC_LEN + 2) {
        return LOAMS_ECORRUPT;
    }
    if (p[LOAMS_KIT_AGG_CELL_MAGIC_LEN] != LOAMS_KIT_AGG_CELL_VERSION) {
        return p[LOAMS_KIT_AGG_CELL_MAGIC_LEN] > LOAMS_KIT_AGG_CELL_VERSION ? LOAMS_EUNSUPPORTED
                                                                            : LOAMS_ECORRUPT;
    }
    size_t nl = p[LOAMS_KIT_AGG_CELL_MAGIC_LEN + 1];
    size_t at = LOAMS_KIT_AGG_CELL_MAGIC_LEN + 2;
    if (nl == 0 || nl > 63 || len - at < nl) {
        return LOAMS_ECORRUPT;
    }
    *name = (const char *)p + at;
    *name_len = nl;
    *state = p + at + nl;
    *state_len = len - at - nl;
    return 1;
}
