/*
 * err.c - owns the formatting of the kit's error messages (loams/kit/err.h).
 */
#include "loams/kit/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int loams_kit_err_set(loams_kit_err *e, int status, const char *fmt, ...)
{
    if (e == NULL) {
        return status;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return status;
}

int loams_kit_err_prefix(loams_kit_err *e, int status, const char *fmt, ...)
{
    if (e == NULL) {
        return status;
    }
    char prefix[256];
    char old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    /* truncation is intended: the message is cut to fit */
    size_t n = strlen(prefix);
    if (n > sizeof e->msg - 3) {
        n = sizeof e->msg - 3;
    }
    memcpy(e->msg, prefix, n);
    e->msg[n] = ':';
    e->msg[n + 1] = ' ';
    size_t room = sizeof e->msg - n - 3;
    size_t ol = strlen(old);
    if (ol > room) {
        ol = room;
    }
    memcpy(e->msg + n + 2, old, ol);
    e->msg[n + 2 + ol] = '\0';
    return status;
}
