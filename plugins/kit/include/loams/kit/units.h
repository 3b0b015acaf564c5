/*
 * loams/kit/units.h - sizes ('64MiB', '512KiB', '1GB', '1000') and
 * durations ('2s', '250ms', '7d', '1h30m') as users write them in DDL
 * options, the node config and plugin options: the host checks an option's
 * text with it and the plugin reads the option with it (loams/kit/option.h),
 * so both read one syntax.
 *
 * Sizes: a non-negative decimal number (a fraction is allowed when the
 * result is a whole number of bytes: '1.5KiB' = 1536) and an optional unit,
 * case-insensitive: B; KB MB GB TB PB (powers of 1000); KiB MiB GiB TiB PiB
 * (powers of 1024).  No unit means bytes.  Spaces around the number and
 * between number and unit are allowed.
 *
 * Durations: one or more number+unit parts, largest unit first is not
 * required but each unit appears once ('1h30m', '2m30s', '1.5s'); units
 * (case-sensitive, because 'm' is minutes and 'ms' milliseconds): us, ms,
 * s, m, h, d, w.  A bare number is refused (its unit would be a guess),
 * except '0'.  The result is in microseconds and must be a whole number.
 *
 * Errors: LOAMS_EINPUT with a message in err[0..errlen) (err may be NULL)
 * that quotes the text, says what is wrong and lists the accepted units,
 * e.g. "invalid size '12XB': unknown unit 'XB' (accepted units: B, KB, MB,
 * GB, TB, PB, KiB, MiB, GiB, TiB, PiB; no unit means bytes)".
 *
 * Threads: every function is reentrant.
 */
#ifndef LOAMS_KIT_UNITS_H
#define LOAMS_KIT_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Parses a size into *bytes.  Errors: LOAMS_EINPUT (message in err). */
int loams_kit_size_parse(const char *text, uint64_t *bytes, char *err, size_t errlen);

/* Parses a duration into *us (microseconds, at most INT64_MAX).
 * Errors: LOAMS_EINPUT (message in err). */
int loams_kit_duration_parse(const char *text, int64_t *us, char *err, size_t errlen);

/* Writes a size the way a user would ('64MiB', '1500B': the largest binary
 * unit that divides it exactly).  Returns like snprintf. */
int loams_kit_size_format(uint64_t bytes, char *out, size_t size);

/* Writes a duration as parts ('1h30m', '250ms', '0s').  Returns like
 * snprintf.  Negative durations are written with a leading '-'. */
int loams_kit_duration_format(int64_t us, char *out, size_t size);

#endif
