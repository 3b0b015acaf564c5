/*
 * units.h - the core's names for sizes and durations.  The syntax, its
 * errors and its messages belong to the plugin kit (loams/kit/units.h),
 * so that the host's check of a plugin option and the plugin's reading of
 * it are one parser; these forward to it.
 */
#ifndef LOAMS_CORE_UNITS_H
#define LOAMS_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/units.h"

/* loams_kit_size_parse: errors LOAMS_EINPUT (message in err). */
static inline int loams_size_parse(const char *text, uint64_t *bytes, char *err, size_t errlen)
{
    return loams_kit_size_parse(text, bytes, err, errlen);
}

/* loams_kit_duration_parse: errors LOAMS_EINPUT (message in err). */
static inline int loams_duration_parse(const char *text, int64_t *us, char *err, size_t errlen)
{
    return loams_kit_duration_parse(text, us, err, errlen);
}

/* loams_kit_size_format: returns like snprintf. */
static inline int loams_size_format(uint64_t bytes, char *out, size_t size)
{
    return loams_kit_size_format(bytes, out, size);
}

/* loams_kit_duration_format: returns like snprintf. */
static inline int loams_duration_format(int64_t us, char *out, size_t size)
{
    return loams_kit_duration_format(us, out, size);
}

#endif
