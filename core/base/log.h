/*
 * log.h - the host's log: one line per event, on stderr by default.
 *
 *   2026-11-29T16:40:01.123Z INFO  worker task=link/default/l/0 epoch=3 started
 *
 * Fields: UTC time, level, component, then task key and epoch when the event
 * belongs to a task, then the message.  Lines are written whole (one write
 * under a lock), so lines of several threads never interleave.  Never log a
 * secret: callers pass option values through loams_option_display() first.
 */
#ifndef LOAMS_CORE_LOG_H
#define LOAMS_CORE_LOG_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <loams/host.h>

/* Lines above `level` are dropped.  Default LOAMS_LOG_INFO; the env var
 * LOAMS_LOG_LEVEL (error|warn|info|debug) is read by the CLI. */
void loams_log_set_level(loams_log_level level);
loams_log_level loams_log_get_level(void);
/* Parses "error|warn|info|debug"; -EINVAL for anything else. */
int loams_log_level_parse(const char *text, loams_log_level *level);

/* Where lines go (not owned; default stderr).  NULL restores stderr. */
void loams_log_set_stream(FILE *stream);

void loams_log(loams_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A task event: task key and lease epoch are part of the line. */
void loams_log_task(loams_log_level level, const char *component, const char *task, uint64_t epoch,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void loams_logv(loams_log_level level, const char *component, const char *task, uint64_t epoch,
                const char *fmt, va_list ap);

#define LOAMS_ERROR(comp, ...) loams_log(LOAMS_LOG_ERROR, comp, __VA_ARGS__)
#define LOAMS_WARN(comp, ...) loams_log(LOAMS_LOG_WARN, comp, __VA_ARGS__)
#define LOAMS_INFO(comp, ...) loams_log(LOAMS_LOG_INFO, comp, __VA_ARGS__)
#define LOAMS_DEBUG(comp, ...) loams_log(LOAMS_LOG_DEBUG, comp, __VA_ARGS__)

#endif
