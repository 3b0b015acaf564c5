/*
 * status.h - text for status codes (0, -errno, LOAMS_E*).
 */
#ifndef LOAMS_CORE_STATUS_H
#define LOAMS_CORE_STATUS_H

#include <loams/status.h>

/* A static, human-readable description of `status`.  Never NULL. */
const char *loams_strerror(int status);

#endif
