/*
 * loams/kit/option.h - a plugin's options as numbers.  The host checked
 * each option's text against the plugin's option table before open()
 * (an INT is an integer, a SIZE and a DURATION follow loams/kit/units.h);
 * these read the text through host->option() and add the plugin's own
 * range.
 *
 * `who` starts every message ("target-graph"); the message goes to e and
 * names the option, its text and the range.  A missing option (no value
 * and no default in the table) is refused like a bad one.
 * Errors: -EINVAL.  Threads: as host->option().
 */
#ifndef LOAMS_KIT_OPTION_H
#define LOAMS_KIT_OPTION_H

#include <stdint.h>

#include <loams/host.h>

#include "loams/kit/err.h"

/* An INT option in [min, max]. */
int loams_kit_option_long(const loams_host_api *host, loams_ctx *ctx, const char *who,
                          const char *name, long min, long max, long *out, loams_kit_err *e);
/* A SIZE option in [min, max] bytes. */
int loams_kit_option_size(const loams_host_api *host, loams_ctx *ctx, const char *who,
                          const char *name, uint64_t min, uint64_t max, uint64_t *out,
                          loams_kit_err *e);
/* A DURATION option in [min_us, max_us] microseconds. */
int loams_kit_option_duration(const loams_host_api *host, loams_ctx *ctx, const char *who,
                              const char *name, int64_t min_us, int64_t max_us, int64_t *out_us,
                              loams_kit_err *e);

#endif
